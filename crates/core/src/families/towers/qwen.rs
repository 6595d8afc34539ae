//! The Qwen vision-language wrappers' vision towers (Qwen2-VL to Qwen3.5): a 3-D patch
//! convolution over (time, height, width), pre-norm blocks with a fused biased QKV, and a
//! merger that joins each spatial_merge_size² patches and projects them into the text width.

use super::*;

/// The merger's two biased projections of `width` × spatial_merge_size² joined features into
/// `out`, without its norm.
fn merger(v: &Option<Config>, width: u128, out: u128) -> Result<u128> {
    let joined = width * (size(v, "spatial_merge_size", 2)? as u128).pow(2);
    Ok(joined * joined + joined + joined * out + out)
}

/// Qwen2-VL's vision tower: the patch convolution without a bias, blocks of LayerNorms, the
/// attention and a biased two-layer MLP `mlp_ratio` times as wide, and the merger after a
/// LayerNorm, into `hidden_size` (the class's default, not the text width, where the config
/// leaves it out).
pub fn qwen2_vl_vision(top: &Config) -> Result<Option<u64>> {
    let Some(v) = depth_vision(top, &["qwen2_vl", "qwen2_vl_vision"])? else {
        return Ok(None);
    };
    let d = size(&v, "embed_dim", 1280)? as u128;
    let Some(embed) = patches(&v, 14, d)? else {
        return Ok(None);
    };
    let i = d * size(&v, "mlp_ratio", 4)? as u128;
    let block = 4 * d + 3 * d * d + 3 * d + d * d + d + 2 * d * i + i + d;
    let out = size(&v, "hidden_size", 3584)? as u128;
    let depth = size(&v, "depth", 32)? as u128;
    fit(top, embed + depth * block + 2 * d + merger(&v, d, out)?)
}

/// Qwen2.5-VL's vision tower: Qwen2-VL's with RMSNorms (no biases), a biased gated MLP, and
/// an RMSNorm before the merger, into `out_hidden_size`.
pub fn qwen2_5_vl_vision(top: &Config) -> Result<Option<u64>> {
    let Some(v) = depth_vision(top, &["qwen2_5_vl", "qwen2_5_vl_vision"])? else {
        return Ok(None);
    };
    let d = size(&v, "hidden_size", 3584)? as u128;
    let Some(embed) = patches(&v, 14, d)? else {
        return Ok(None);
    };
    let i = size(&v, "intermediate_size", 3420)? as u128;
    let block = 2 * d + 3 * d * d + 3 * d + d * d + d + 3 * d * i + 2 * i + d;
    let out = size(&v, "out_hidden_size", 3584)? as u128;
    let depth = size(&v, "depth", 32)? as u128;
    fit(top, embed + depth * block + d + merger(&v, d, out)?)
}

/// Qwen3-VL's vision tower: the patch convolution with a bias, learned positions, blocks of
/// LayerNorms, the attention and a biased two-layer MLP, the merger after a LayerNorm, and a
/// deep-stack merger per `deepstack_visual_indexes` entry, each normed after joining.
pub fn qwen3_vl_vision(top: &Config) -> Result<Option<u64>> {
    deepstack_vision(top, &["qwen3_vl", "qwen3_vl_vision"])
}

/// Qwen3-VL-MoE's vision tower: Qwen3-VL's.
pub fn qwen3_vl_moe_vision(top: &Config) -> Result<Option<u64>> {
    deepstack_vision(top, &["qwen3_vl_moe", "qwen3_vl_moe_vision"])
}

fn deepstack_vision(top: &Config, kinds: &[&str]) -> Result<Option<u64>> {
    let Some(v) = depth_vision(top, kinds)? else {
        return Ok(None);
    };
    let Some(tower) = qwen3_like(&v)? else {
        return Ok(None);
    };
    let stacked = match &v {
        Some(c) => c
            .list_any("deepstack_visual_indexes", |x| x.as_u64(), "a layer index")?
            .map_or(3, |l| l.len()),
        None => 3,
    } as u128;
    let d = size(&v, "hidden_size", 1152)? as u128;
    let joined = d * (size(&v, "spatial_merge_size", 2)? as u128).pow(2);
    let out = size(&v, "out_hidden_size", 3584)? as u128;
    let deepstack = stacked * (2 * joined + merger(&v, d, out)?);
    fit(top, tower + deepstack)
}

/// Qwen3.5's vision tower: Qwen3-VL's without the deep-stack mergers, which Qwen3.5 deletes
/// whatever `deepstack_visual_indexes` a config lists.
pub fn qwen3_5_vision(top: &Config) -> Result<Option<u64>> {
    let kinds = ["qwen3_5", "qwen3_5_moe", "qwen4_exp", "qwen4_exp_vision"];
    let Some(v) = depth_vision(top, &kinds)? else {
        return Ok(None);
    };
    match qwen3_like(&v)? {
        Some(tower) => fit(top, tower),
        None => Ok(None),
    }
}

/// Qwen3-VL's and Qwen3.5's tower up to its merger, or `None` for a rectangular patch.
fn qwen3_like(v: &Option<Config>) -> Result<Option<u128>> {
    let d = size(v, "hidden_size", 1152)? as u128;
    let Some(conv) = patches(v, 16, d)? else {
        return Ok(None);
    };
    let i = size(v, "intermediate_size", 4304)? as u128;
    let depth = size(v, "depth", 27)? as u128;
    let positions = size(v, "num_position_embeddings", 2304)? as u128;
    let out = size(v, "out_hidden_size", 3584)? as u128;
    let embed = conv + d + positions * d;
    let block = 4 * d + 3 * d * d + 3 * d + d * d + d + 2 * d * i + i + d;
    Ok(Some(embed + depth * block + 2 * d + merger(v, d, out)?))
}
