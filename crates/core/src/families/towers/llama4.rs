//! Llama 4's vision encoder and projector: a ViT over each tile of an image, a pixel-shuffle
//! adapter, and one map into the text width.

use super::*;
use crate::spec::{ImageEncoder, ImageInput, Llama4Vision, Placeholders};

/// Llama 4's vision encoder: its unfolded-patch projection, class embedding and learned
/// positions (one more than the patches), LayerNorms before and after, encoder layers
/// (LayerNorms, attention with biases, a biased two-layer MLP), and the pixel-shuffle adapter's
/// two bias-free projections.
pub fn llama4_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(t) = vit(top, &["llama4_vision_model"], (448, 14, 768, 5632, 34))? else {
        return Ok(None);
    };
    let (proj_in, proj_out) = (
        size(&t.v, "projector_input_dim", 4096)? as u128,
        size(&t.v, "projector_output_dim", 4096)? as u128,
    );
    let (d, i, l) = (t.hidden, t.intermediate, "model.layers.{i}");
    let mut n = Named::default();
    n.step("patch embedding")
        .t(
            "patch_embedding.linear.weight",
            &[d, t.channels * t.patch * t.patch],
        )
        .t("class_embedding", &[d])
        .t("positional_embedding_vlm", &[t.patches + 1, d])
        .layer_norm("layernorm_pre", d);
    llama_vision_layers(&mut n, "encoder layer", l, t.layers, (d, i), true);
    n.step("pixel-shuffle adapter")
        .layer_norm("layernorm_post", d)
        .linear("vision_adapter.mlp.fc1", proj_in, i, false)
        .linear("vision_adapter.mlp.fc2", proj_out, proj_out, false);
    n.done(top, "vision_config")
}

/// Llama 4's projector: the vision output width mapped to the text width, without a bias.
pub fn llama4_projector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    output_projector(top, "llama4_vision_model", ("linear_1", false), 5120)
}

/// How Llama 4 runs an image: its tower's sizes (the tile its processor cuts is the tower's
/// image), the shuffle's side, the adapter's width, the rotary base, the placeholder id
/// (`image_token_index`, or `image_token_id`) and the ids that open and close an image's
/// layout (`boi_token_index`, `eoi_token_index`). A config whose parts do not fit one another
/// (the class's defaults among them: a shuffled width of 3,072 into an adapter that takes
/// 5,632, and 4,096 into a projector that takes 7,680) builds but cannot run an image: read
/// without one.
pub fn llama4_image(top: &Config) -> Result<Option<ImageInput>> {
    let Some(t) = vit(top, &["llama4_vision_model"], (448, 14, 768, 5632, 34))? else {
        return Ok(None);
    };
    let v = &t.v;
    let Some(image) = square(v, "image_size", 448)? else {
        return Ok(None);
    };
    let heads = size(v, "num_attention_heads", 16)?;
    let ratio = match v {
        Some(c) => c.float("pixel_shuffle_ratio", 0.5)?,
        None => 0.5,
    };
    // The shuffle's side: 1 / ratio, a whole number dividing the patch grid.
    let shuffle = (1.0 / ratio).round();
    let fits_grid = ratio > 0.0
        && (1.0 / ratio - shuffle).abs() < 1e-9
        && shuffle >= 1.0
        && t.grid.is_multiple_of(shuffle as u128);
    let [input, output, vision_out] = [
        ("projector_input_dim", 4096),
        ("projector_output_dim", 4096),
        ("vision_output_dim", 7680),
    ]
    .map(|(key, default)| size(v, key, default).map(u128::from));
    let (input, output, vision_out) = (input?, output?, vision_out?);
    if !fits_grid
        || t.intermediate != t.hidden * (shuffle as u128).pow(2)
        || input != output
        || output != vision_out
        || !rotary_heads(t.hidden, heads)
    {
        return Ok(None);
    }
    Ok(Some(ImageInput {
        token: Some(token_id(
            top,
            "image_token_index",
            "image_token_id",
            200_092,
        )?),
        placeholders: Placeholders::Tiles {
            open: token_id(top, "boi_token_index", "boi_token_id", 200_080)?,
            close: token_id(top, "eoi_token_index", "eoi_token_id", 200_081)?,
        },
        encoder: ImageEncoder::Llama4(Llama4Vision {
            tower: t.runs(
                top,
                "vision_model.",
                image,
                heads,
                1e-5,
                crate::spec::Act::Gelu,
            )?,
            shuffle: shuffle as u64,
            adapter: input as u64,
            theta: vision_theta(v)?,
            projector: "multi_modal_projector.".into(),
        }),
    }))
}
