//! HunyuanOCR's vision tower (`hunyuan_vl`) and HY v4 VL's (`hy_v4_vl`), under the names their
//! published checkpoints store (`vit.`, Megatron's MLP names, the merger as `perceive.`), which
//! transformers renames on load.

use super::*;

/// HunyuanOCR's vision tower: its ViT (`vit`), and the merger: an RMSNorm, a convolution
/// joining spatial_merge_size² patches into twice the width, a 1×1 convolution to four times it,
/// a learned row-end feature there, a biased map into the language model's width, the image's
/// learned begin, end and separator features, and a last RMSNorm.
pub fn hunyuan_vl_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some((mut n, v)) = hunyuan_vit(top, "hunyuan_vl_vision", (1152, 4304, 27))? else {
        return Ok(None);
    };
    let d = size(&v, "hidden_size", 1152)? as u128;
    let merge = size(&v, "spatial_merge_size", 2)? as u128;
    // The wrapper keeps the tower's output as wide as its language model.
    let text = flat_text_hidden(top, 4096)? as u128;
    n.step("merger")
        .rms("perceive.before_rms", d)
        .linear_shaped("perceive.proj.0", &[2 * d, d, merge, merge], true)
        .linear_shaped("perceive.proj.2", &[4 * d, 2 * d, 1, 1], true)
        .t("perceive.image_newline", &[4 * d])
        .linear("perceive.mlp", text, 4 * d, true)
        .t("perceive.image_begin", &[text])
        .t("perceive.image_end", &[text])
        .t("perceive.image_sep", &[text])
        .rms("perceive.after_rms", text);
    n.done(top, "vision_config")
}

/// HY v4 VL's vision tower: HunyuanOCR's ViT at its own defaults, and a merger of an RMSNorm, a
/// convolution joining spatial_merge_size² patches into as many times the width, a 1×1
/// convolution straight to `out_hidden_size` and a learned row-end feature there.
pub fn hy_v4_vl_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some((mut n, v)) = hunyuan_vit(top, "hy_v4_vl_vision", (1536, 6144, 40))? else {
        return Ok(None);
    };
    let d = size(&v, "hidden_size", 1536)? as u128;
    let m = size(&v, "spatial_merge_size", 2)? as u128;
    let out = size(&v, "out_hidden_size", 6144)? as u128;
    n.step("merger")
        .rms("perceive.norm", d)
        .linear_shaped("perceive.proj.0", &[d * m * m, d, m, m], true)
        .linear_shaped("perceive.proj.2", &[out, d * m * m, 1, 1], true)
        .t("perceive.image_newline", &[out]);
    n.done(top, "vision_config")
}

/// The ViT both towers share, named, and the vision config of `kind` (with its class's
/// attribute_map): a biased patch convolution, learned positions over the largest image's patches
/// (one more, for a class token the forward never uses), SigLIP's encoder layers (LayerNorms, the
/// attention's four biased maps, a biased two-layer MLP); `None` for another kind, a rectangular
/// patch or image, or no heads. `defaults`: the class's width, MLP width and depth.
fn hunyuan_vit<'a>(
    top: &Config<'a>,
    kind: &str,
    (width, mlp, depth): (u64, u64, u64),
) -> Result<Option<(Named, Option<Config<'a>>)>> {
    const RENAMES: &[(&str, &str)] = &[("attention_heads", "num_attention_heads")];
    let Some(v) = vision(top, &[kind])?.map(|v| v.map(|v| v.renamed(RENAMES))) else {
        return Ok(None);
    };
    let d = size(&v, "hidden_size", width)? as u128;
    let i = size(&v, "intermediate_size", mlp)? as u128;
    let heads = size(&v, "num_attention_heads", 16)?;
    let (Some(patch), Some(max)) = (
        square(&v, "patch_size", 16)?,
        square(&v, "max_image_size", 2048)?,
    ) else {
        return Ok(None);
    };
    if heads == 0 {
        return Ok(None);
    }
    // A head_dim the vision config gives, else the width over the heads (the attention's
    // getattr).
    let head = match v.as_ref().filter(|c| c.present("head_dim")) {
        Some(c) => c.size("head_dim", None)? as u128,
        None => d / u128::from(heads),
    };
    let inner = u128::from(heads) * head;
    let channels = size(&v, "num_channels", 3)? as u128;
    let layers = size(&v, "num_hidden_layers", depth)? as u128;
    let (p, edge) = (patch as u128, (max / patch) as u128);
    let l = "layers.{i}";
    let mut n = Named::default();
    n.step("patch embedding")
        .linear_shaped("embeddings.patch_embedding", &[d, channels, p, p], true)
        .t(
            "embeddings.position_embedding.weight",
            &[edge * edge + 1, d],
        );
    n.layers("encoder layer", layers)
        .layer_norm(&format!("{l}.input_layernorm"), d)
        .linear(&format!("{l}.self_attn.q_proj"), inner, d, true)
        .linear(&format!("{l}.self_attn.k_proj"), inner, d, true)
        .linear(&format!("{l}.self_attn.v_proj"), inner, d, true)
        .linear(&format!("{l}.self_attn.o_proj"), d, inner, true)
        .layer_norm(&format!("{l}.post_attention_layernorm"), d)
        .linear(&format!("{l}.mlp.dense_h_to_4h"), i, d, true)
        .linear(&format!("{l}.mlp.dense_4h_to_h"), d, i, true);
    Ok(Some((n, v)))
}
