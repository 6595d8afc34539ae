//! BLIP-2's and InstructBLIP's parts: the EVA-style vision tower, the Q-Former whose learned
//! queries read the image through cross-attention, and the projection into the text width.

use super::*;

/// Which of the three wrappers: its sub-configs' kinds, and whether its Q-Former reads the
/// prompt's text too (InstructBLIP's: word and position embeddings, and a text MLP per layer).
#[derive(Clone, Copy)]
pub(super) struct Blip {
    vision: &'static str,
    qformer: &'static str,
    instruct: bool,
}

const BLIP_2: Blip = Blip {
    vision: "blip_2_vision_model",
    qformer: "blip_2_qformer",
    instruct: false,
};
const INSTRUCTBLIP: Blip = Blip {
    vision: "instructblip_vision_model",
    qformer: "instructblip_qformer",
    instruct: true,
};
const INSTRUCTBLIP_VIDEO: Blip = Blip {
    vision: "instructblipvideo_vision_model",
    qformer: "instructblipvideo_qformer",
    instruct: true,
};

/// BLIP-2's vision tower.
pub fn blip_2_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    blip_vision(top, BLIP_2)
}
/// BLIP-2's Q-Former.
pub fn blip_2_qformer(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    qformer(top, BLIP_2)
}
/// InstructBLIP's vision tower.
pub fn instructblip_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    blip_vision(top, INSTRUCTBLIP)
}
/// InstructBLIP's Q-Former.
pub fn instructblip_qformer(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    qformer(top, INSTRUCTBLIP)
}
/// InstructBLIP-Video's vision tower.
pub fn instructblipvideo_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    blip_vision(top, INSTRUCTBLIP_VIDEO)
}
/// InstructBLIP-Video's Q-Former.
pub fn instructblipvideo_qformer(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    qformer(top, INSTRUCTBLIP_VIDEO)
}

/// The vision tower: a class embedding, learned positions (one more than the patches) and a
/// biased patch convolution; layers of a fused QKV (its bias, where `qkv_bias`, q's and v's with
/// k's held at zero), a biased output projection, LayerNorms and a biased MLP; a last LayerNorm.
fn blip_vision(top: &Config, b: Blip) -> Result<Option<Vec<TowerBlock>>> {
    let Some(t) = vit(top, &[b.vision], (224, 14, 1408, 6144, 39))? else {
        return Ok(None);
    };
    let (d, i, l) = (t.hidden, t.intermediate, "encoder.layers.{i}");
    let qkv_bias = flag(&t.v, "qkv_bias", true)?;
    let mut n = Named::default();
    n.step("patch embedding")
        .t("embeddings.class_embedding", &[1, 1, d])
        .t("embeddings.position_embedding", &[1, t.patches + 1, d])
        .linear_shaped("embeddings.patch_embedding", &t.conv_shape(), true);
    n.layers("encoder layer", t.layers)
        .linear(&format!("{l}.self_attn.qkv"), 3 * d, d, qkv_bias)
        .linear(&format!("{l}.self_attn.projection"), d, d, true)
        .layer_norm(&format!("{l}.layer_norm1"), d)
        .linear(&format!("{l}.mlp.fc1"), i, d, true)
        .linear(&format!("{l}.mlp.fc2"), d, i, true)
        .layer_norm(&format!("{l}.layer_norm2"), d);
    n.step("last norm").layer_norm("post_layernorm", d);
    n.done(top, "vision_config")
}

/// The Q-Former (BERT layers over the queries): each layer's self-attention (biased query, key,
/// value and output maps, a LayerNorm after), a cross-attention to the vision tower's output
/// every `cross_attention_frequency` layers, and the queries' MLP; InstructBLIP's (and BLIP-2's
/// where `use_qformer_text_input`) a text MLP besides, InstructBLIP's word and position
/// embeddings before them; BLIP-2's a LayerNorm on the queries.
fn qformer(top: &Config, b: Blip) -> Result<Option<Vec<TowerBlock>>> {
    let Some(t) = vit(top, &[b.vision], (224, 14, 1408, 6144, 39))? else {
        return Ok(None);
    };
    let Some(q) = sub_config(top, "qformer_config", &[b.qformer])? else {
        return Ok(None);
    };
    let h = size(&q, "hidden_size", 768)? as u128;
    let inter = size(&q, "intermediate_size", 3072)? as u128;
    let layers = size(&q, "num_hidden_layers", 12)?;
    let every = size(&q, "cross_attention_frequency", 2)?;
    if let Some(q) = &q {
        // Read layer by layer below: bounded as a language model's layers are.
        q.bounded("num_hidden_layers", layers, crate::config::MAX_LAYERS)?;
    }
    // The wrapper's class sets the cross-attention's input width to the tower's.
    let enc = t.hidden;
    let text = b.instruct || flag(&q, "use_qformer_text_input", false)?;
    let mut n = Named::default();
    if b.instruct {
        n.step("embeddings")
            .t(
                "embeddings.word_embeddings.weight",
                &[size(&q, "vocab_size", 30522)? as u128, h],
            )
            .t(
                "embeddings.position_embeddings.weight",
                &[size(&q, "max_position_embeddings", 512)? as u128, h],
            )
            .layer_norm("embeddings.layernorm", h);
    } else {
        n.step("query norm").layer_norm("layernorm", h);
    }
    let l = "encoder.layer.{i}";
    let step = n.layers("Q-Former layer", layers as u128);
    qformer_self(step, l, h, inter, text);
    // Layer i cross-attends where i % cross_attention_frequency is 0 (`size` keeps it above 0).
    let crossing = crate::layers::LayerSet::from_fn(layers, |i| i % every == 0);
    qformer_cross(n.some_layers("cross-attention", crossing), l, h, enc);
    n.done(top, "qformer_config")
}

/// A Q-Former layer at `l`, `h` wide: its self-attention (biased query, key, value and output
/// maps, a LayerNorm after) and the queries' MLP, and where `text` the text MLP too.
pub(super) fn qformer_self<'n>(
    step: Step<'n>,
    l: &str,
    h: u128,
    inter: u128,
    text: bool,
) -> Step<'n> {
    let step = step
        .linear(&format!("{l}.attention.attention.query"), h, h, true)
        .linear(&format!("{l}.attention.attention.key"), h, h, true)
        .linear(&format!("{l}.attention.attention.value"), h, h, true)
        .linear(&format!("{l}.attention.output.dense"), h, h, true)
        .layer_norm(&format!("{l}.attention.output.LayerNorm"), h)
        .linear(&format!("{l}.intermediate_query.dense"), inter, h, true)
        .linear(&format!("{l}.output_query.dense"), h, inter, true)
        .layer_norm(&format!("{l}.output_query.LayerNorm"), h);
    match text {
        true => step
            .linear(&format!("{l}.intermediate.dense"), inter, h, true)
            .linear(&format!("{l}.output.dense"), h, inter, true)
            .layer_norm(&format!("{l}.output.LayerNorm"), h),
        false => step,
    }
}

/// A Q-Former layer's cross-attention at `l` to features `enc` wide.
pub(super) fn qformer_cross<'n>(step: Step<'n>, l: &str, h: u128, enc: u128) -> Step<'n> {
    step.linear(&format!("{l}.crossattention.attention.query"), h, h, true)
        .linear(&format!("{l}.crossattention.attention.key"), h, enc, true)
        .linear(&format!("{l}.crossattention.attention.value"), h, enc, true)
        .linear(&format!("{l}.crossattention.output.dense"), h, h, true)
        .layer_norm(&format!("{l}.crossattention.output.LayerNorm"), h)
}

/// The learned queries the Q-Former starts from (`num_query_tokens` of its width); the part's
/// name is the tensor's.
pub fn blip_query_tokens(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let q = top.detached("qformer_config")?;
    let h = size(&q, "hidden_size", 768)? as u128;
    let tokens = top.size("num_query_tokens", Some(32))? as u128;
    let mut n = Named::default();
    n.step("queries").t("", &[1, tokens, h]);
    n.done(top, "num_query_tokens")
}

/// The projection of the Q-Former's output into the text width (biased).
pub fn blip_language_projection(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let q = top.detached("qformer_config")?;
    let h = size(&q, "hidden_size", 768)? as u128;
    let mut n = Named::default();
    n.step("projector")
        .linear("", text_hidden(top, 768)? as u128, h, true);
    n.done(top, "text_config")
}
