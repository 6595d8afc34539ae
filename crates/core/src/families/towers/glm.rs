//! GLM-4.1V's, GLM-4.5V's and GLM-4.6V's vision tower (the same blocks under each one's class
//! names), and GLM-OCR's.

use super::*;

/// GLM-4.1V's vision tower: learned positions over the image's patches, a 3-D patch convolution
/// with a bias and an RMSNorm after it, blocks of RMSNorms, the attention (its fused QKV biased
/// where `attention_bias`) and a bias-free gated MLP as wide as the output, a last RMSNorm, a
/// biased convolution joining each spatial_merge_size² patches into the output width, and the
/// merger: a projection, a LayerNorm and a gated MLP `intermediate_size` wide, none biased.
pub fn glm4v_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    glm_vision(top, &["glm4v", "glm4v_vision"])
}

/// GLM-4.5V's vision tower: GLM-4.1V's.
pub fn glm4v_moe_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    glm_vision(top, &["glm4v_moe", "glm4v_moe_vision"])
}

/// GLM-4.6V's vision tower: GLM-4.1V's, under either kind's name.
pub fn glm46v_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    glm_vision(top, &["glm4v_vision", "glm4v_moe_vision"])
}

fn glm_vision(top: &Config, kinds: &[&str]) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = depth_vision(top, kinds)? else {
        return Ok(None);
    };
    let d = size(&v, "hidden_size", 1536)? as u128;
    let (Some(conv), Some(image), Some(patch)) = (
        patches(&v, 14, d)?,
        square(&v, "image_size", 336)?,
        square(&v, "patch_size", 14)?,
    ) else {
        return Ok(None);
    };
    let out = size(&v, "out_hidden_size", 4096)? as u128;
    let i = size(&v, "intermediate_size", 13696)? as u128;
    let qkv_bias = flag(&v, "attention_bias", false)?;
    let depth = size(&v, "depth", 24)? as u128;
    let merge = size(&v, "spatial_merge_size", 2)? as u128;
    let l = "blocks.{i}";
    let mut n = Named::default();
    n.step("patch embedding")
        .t(
            "embeddings.position_embedding.weight",
            &[((image / patch) as u128).pow(2), d],
        )
        .t("patch_embed.proj.weight", &conv)
        .t("patch_embed.proj.bias", &[d])
        .rms("post_conv_layernorm", d);
    n.layers("vision block", depth)
        .rms(&format!("{l}.norm1"), d)
        .linear(&format!("{l}.attn.qkv"), 3 * d, d, qkv_bias)
        .linear(&format!("{l}.attn.proj"), d, d, false)
        .rms(&format!("{l}.norm2"), d)
        .linear(&format!("{l}.mlp.gate_proj"), out, d, false)
        .linear(&format!("{l}.mlp.up_proj"), out, d, false)
        .linear(&format!("{l}.mlp.down_proj"), d, out, false);
    n.step("downsampling")
        .rms("post_layernorm", d)
        .linear_shaped("downsample", &[out, d, merge, merge], true);
    n.step("merger")
        .linear("merger.proj", out, out, false)
        .layer_norm("merger.post_projection_norm", out)
        .linear("merger.gate_proj", i, out, false)
        .linear("merger.up_proj", i, out, false)
        .linear("merger.down_proj", out, i, false);
    n.done(top, "vision_config")
}

/// GLM-OCR's vision tower: GLM-4.1V's without its learned positions or the norm after the patch
/// convolution; each block's attention normed per head on queries and keys and biased (with its
/// MLP, `intermediate_size` wide) where `attention_bias`; the merger's MLP as wide as the output
/// times the input channels.
pub fn glm_ocr_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    // Its class's attribute_map.
    const RENAMES: &[(&str, &str)] = &[
        ("num_hidden_layers", "depth"),
        ("num_attention_heads", "num_heads"),
    ];
    let Some(v) = vision(top, &["glm_ocr_vision"])?.map(|v| v.map(|v| v.renamed(RENAMES))) else {
        return Ok(None);
    };
    let d = size(&v, "hidden_size", 1024)? as u128;
    let (Some(conv), Some(_), Some(_)) = (
        patches(&v, 14, d)?,
        square(&v, "image_size", 336)?,
        square(&v, "patch_size", 14)?,
    ) else {
        return Ok(None);
    };
    let heads = size(&v, "num_heads", 16)? as u128;
    if heads == 0 || !d.is_multiple_of(heads) {
        return Ok(None);
    }
    let out = size(&v, "out_hidden_size", 1536)? as u128;
    let i = size(&v, "intermediate_size", 4096)? as u128;
    let channels = size(&v, "in_channels", 3)? as u128;
    let bias = flag(&v, "attention_bias", true)?;
    let depth = size(&v, "depth", 24)? as u128;
    let merge = size(&v, "spatial_merge_size", 2)? as u128;
    let l = "blocks.{i}";
    let mut n = Named::default();
    n.step("patch embedding")
        .t("patch_embed.proj.weight", &conv)
        .t("patch_embed.proj.bias", &[d]);
    n.layers("vision block", depth)
        .rms(&format!("{l}.norm1"), d)
        .linear(&format!("{l}.attn.qkv"), 3 * d, d, bias)
        .rms(&format!("{l}.attn.q_norm"), d / heads)
        .rms(&format!("{l}.attn.k_norm"), d / heads)
        .linear(&format!("{l}.attn.proj"), d, d, bias)
        .rms(&format!("{l}.norm2"), d)
        .linear(&format!("{l}.mlp.gate_proj"), i, d, bias)
        .linear(&format!("{l}.mlp.up_proj"), i, d, bias)
        .linear(&format!("{l}.mlp.down_proj"), d, i, bias);
    n.step("downsampling")
        .rms("post_layernorm", d)
        .linear_shaped("downsample", &[out, d, merge, merge], true);
    let wide = out * channels;
    n.step("merger")
        .linear("merger.proj", out, out, false)
        .layer_norm("merger.post_projection_norm", out)
        .linear("merger.gate_proj", wide, out, false)
        .linear("merger.up_proj", wide, out, false)
        .linear("merger.down_proj", out, wide, false);
    n.done(top, "vision_config")
}
