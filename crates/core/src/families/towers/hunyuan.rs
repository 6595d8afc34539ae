//! HunyuanOCR's vision tower (`hunyuan_vl`), under the names its published checkpoint stores
//! (`vit.`, Megatron's MLP names, the merger as `perceive.`), which transformers renames on load.

use super::*;

/// HunyuanOCR's vision tower: a biased patch convolution and learned positions over the largest
/// image's patches (one more, for a class token its forward never uses), SigLIP's encoder
/// layers (LayerNorms, the attention's four biased maps, a biased two-layer MLP), and the
/// merger: an RMSNorm, a convolution joining spatial_merge_size² patches into twice the width,
/// a 1×1 convolution to four times it, a learned row-end feature there, a biased map into the
/// language model's width, the image's learned begin, end and separator features, and a last
/// RMSNorm.
pub fn hunyuan_vl_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    // Its class's attribute_map.
    const RENAMES: &[(&str, &str)] = &[("attention_heads", "num_attention_heads")];
    let Some(v) = vision(top, &["hunyuan_vl_vision"])?.map(|v| v.map(|v| v.renamed(RENAMES)))
    else {
        return Ok(None);
    };
    let d = size(&v, "hidden_size", 1152)? as u128;
    let i = size(&v, "intermediate_size", 4304)? as u128;
    let heads = size(&v, "num_attention_heads", 16)?;
    if heads == 0 {
        return Ok(None);
    }
    // A head_dim the vision config gives, else the width over the heads (the attention's
    // getattr).
    let head = match &v {
        Some(c) if c.present("head_dim") => c.size("head_dim", None)?,
        _ => (d / u128::from(heads)) as u64,
    } as u128;
    let inner = u128::from(heads) * head;
    let (Some(patch), Some(max)) = (
        square(&v, "patch_size", 16)?,
        square(&v, "max_image_size", 2048)?,
    ) else {
        return Ok(None);
    };
    let channels = size(&v, "num_channels", 3)? as u128;
    let merge = size(&v, "spatial_merge_size", 2)? as u128;
    let layers = size(&v, "num_hidden_layers", 27)? as u128;
    // The wrapper keeps the tower's output as wide as its language model.
    let text = match top.detached("text_config")? {
        Some(t) => t.size("hidden_size", Some(4096))?,
        None => top.size("hidden_size", Some(4096))?,
    } as u128;
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
