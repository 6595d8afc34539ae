//! Ovis2's vision tower (its visual tokenizer) and the table its visual tokens embed through.

use super::*;

/// Ovis2's visual tokenizer: SigLIP's patch embedding and learned positions with an RMSNorm
/// after them, AIMv2's layers (RMSNorms, the attention's four maps and a gated MLP, biased where
/// `qkv_bias` and `mlp_bias`), a last RMSNorm, and the head: hidden_stride² neighbours joined,
/// mapped to a distribution over the visual vocabulary (less its indicator tokens) and
/// LayerNormed.
pub fn ovis2_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = vision(top, &["ovis2_vision"])? else {
        return Ok(None);
    };
    let d = size(&v, "hidden_size", 1024)? as u128;
    let i = size(&v, "intermediate_size", 2816)? as u128;
    let (Some(image), Some(patch)) = (
        square(&v, "image_size", 224)?,
        square(&v, "patch_size", 14)?,
    ) else {
        return Ok(None);
    };
    let (qkv, mlp) = (flag(&v, "qkv_bias", false)?, flag(&v, "mlp_bias", false)?);
    let stride = size(&v, "hidden_stride", 1)? as u128;
    let words = size(&v, "vocab_size", VISUAL_VOCABULARY)?;
    let indicators = size(&v, "num_visual_indicator_tokens", 5)?;
    let Some(heads) = words.checked_sub(indicators).filter(|h| *h > 0) else {
        return Err(top.err(
            "vision_config.vocab_size",
            format!("is {words}; the visual vocabulary must hold more than its {indicators} indicator tokens"),
        ));
    };
    let channels = size(&v, "num_channels", 3)? as u128;
    let p = patch as u128;
    let l = "transformer.encoder.layers.{i}";
    let mut n = Named::default();
    n.step("patch embedding")
        .linear_shaped(
            "transformer.embeddings.patch_embedding",
            &[d, channels, p, p],
            true,
        )
        .t(
            "transformer.embeddings.position_embedding.weight",
            &[((image / patch) as u128).pow(2), d],
        )
        .rms("transformer.embeddings.rms_norm", d);
    n.layers("encoder layer", size(&v, "num_hidden_layers", 24)? as u128)
        .rms(&format!("{l}.rms_norm1"), d)
        .linear(&format!("{l}.attention.q_proj"), d, d, qkv)
        .linear(&format!("{l}.attention.k_proj"), d, d, qkv)
        .linear(&format!("{l}.attention.v_proj"), d, d, qkv)
        .linear(&format!("{l}.attention.out_proj"), d, d, qkv)
        .rms(&format!("{l}.rms_norm2"), d)
        .linear(&format!("{l}.ffn.gate_proj"), i, d, mlp)
        .linear(&format!("{l}.ffn.up_proj"), i, d, mlp)
        .linear(&format!("{l}.ffn.down_proj"), d, i, mlp);
    let heads = u128::from(heads);
    n.step("visual head")
        .rms("transformer.rms_norm", d)
        .linear("head_linear", heads, d * stride * stride, false)
        .layer_norm("head_norm", heads);
    n.done(top, "vision_config")
}

/// Ovis2's visual embedding table: a row for each visual token, as wide as the wrapper's own
/// `hidden_size` (its class's, whatever the language model's width).
pub fn ovis2_visual_table(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = vision(top, &["ovis2_vision"])? else {
        return Ok(None);
    };
    let words = size(&v, "vocab_size", VISUAL_VOCABULARY)? as u128;
    let width = top.size("hidden_size", Some(1536))? as u128;
    let mut n = Named::default();
    n.step("visual embedding table")
        .t("weight", &[words, width]);
    n.done(top, "hidden_size")
}

/// Ovis2VisionConfig's visual vocabulary.
const VISUAL_VOCABULARY: u64 = 16384;
