//! LFM3-VL's vision tower (gated depthwise convolutions over the patch grid and attention
//! layers, LFM2's block) and its projector.

use super::*;
use crate::layers::LayerSet;

/// LFM3-VL's vision tower: a linear map of each patch (two frames of it) and an RMSNorm; layers
/// of an RMSNorm and either the gated depthwise convolution over the patch grid (its input
/// projection to three parts, the kernel, the output projection) or attention (K/V heads of
/// their own, per-head RMSNorms on queries and keys), then an RMSNorm and a gated MLP. Which
/// layers attend: `layer_types`, else the class's pattern (the first two convolve, then every
/// other).
pub fn lfm3_vl_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = vision(top, &["lfm3_vl_vision"])? else {
        return Ok(None);
    };
    let d = size(&v, "hidden_size", 1024)? as u128;
    let i = size(&v, "intermediate_size", 2560)? as u128;
    let layers = size(&v, "num_hidden_layers", 14)?;
    let heads = size(&v, "num_attention_heads", 16)? as u128;
    let kv = size(&v, "num_key_value_heads", 8)? as u128;
    let kernel = size(&v, "conv_kernel_size", 3)? as u128;
    let (Some(patch), Some(frames)) = (
        square(&v, "patch_size", 16)?,
        square(&v, "temporal_patch_size", 2)?,
    ) else {
        return Ok(None);
    };
    if heads == 0 || !d.is_multiple_of(heads) {
        return Ok(None);
    }
    let hd = d / heads;
    let attends = attention_layers(&v, layers)?;
    let convolves = LayerSet::from_fn(layers, |l| !attends.contains(l));
    let pixels = size(&v, "in_channels", 3)? as u128 * frames as u128 * (patch as u128).pow(2);
    let l = "layers.{i}";
    let at = |name: &str| format!("{l}.{name}");
    let mut n = Named::default();
    n.step("patch embedding")
        .t("patchifier.weight", &[d, pixels])
        .rms("embedding_norm", d);
    n.some_layers("convolution layer", convolves)
        .rms(&at("operator_norm"), d)
        .linear(&at("conv.in_proj"), 3 * d, d, false)
        .t(&at("conv.spatial_conv.weight"), &[d, 1, kernel, kernel])
        .linear(&at("conv.out_proj"), d, d, false);
    n.some_layers("attention layer", attends)
        .rms(&at("operator_norm"), d)
        .linear(&at("self_attn.q_proj"), heads * hd, d, false)
        .linear(&at("self_attn.k_proj"), kv * hd, d, false)
        .linear(&at("self_attn.v_proj"), kv * hd, d, false)
        .rms(&at("self_attn.q_layernorm"), hd)
        .rms(&at("self_attn.k_layernorm"), hd)
        .linear(&at("self_attn.out_proj"), d, heads * hd, false);
    n.layers("MLP", layers as u128)
        .rms(&at("ffn_norm"), d)
        .linear(&at("feed_forward.w1"), i, d, false)
        .linear(&at("feed_forward.w3"), i, d, false)
        .linear(&at("feed_forward.w2"), d, i, false);
    n.done(top, "vision_config")
}

/// The layers of LFM3-VL's tower that attend (`layer_types`'s "full_attention"), of `layers`.
fn attention_layers(v: &Option<Config>, layers: u64) -> Result<LayerSet> {
    let listed = match v {
        Some(c) => c.list(
            "layer_types",
            layers,
            |t| match t.as_str() {
                Some("full_attention") => Some(true),
                Some("conv") => Some(false),
                _ => None,
            },
            "\"conv\" or \"full_attention\"",
        )?,
        None => None,
    };
    Ok(match listed {
        Some(kinds) => LayerSet::from_fn(layers, |l| kinds[l as usize]),
        None => LayerSet::from_fn(layers, |l| l >= 2 && l % 2 == 0),
    })
}

/// LFM3-VL's projector: a LayerNorm over each vision token, each spatial_merge_size² of them
/// joined, a map to projector_hidden_size and one into the text width, biased where
/// `projector_bias`.
pub fn lfm3_vl_projector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = vision(top, &["lfm3_vl_vision"])? else {
        return Ok(None);
    };
    let d = size(&v, "hidden_size", 1024)? as u128;
    let joined = d * (size(&v, "spatial_merge_size", 2)? as u128).pow(2);
    let inner = top.size("projector_hidden_size", Some(4096))? as u128;
    let text = text_hidden(top, 2048)? as u128;
    let bias = top.flag("projector_bias", true)?;
    let mut n = Named::default();
    n.step("projector")
        .layer_norm("layer_norm", d)
        .linear("linear_1", inner, joined, bias)
        .linear("linear_2", text, inner, bias);
    n.done(top, "text_config")
}
