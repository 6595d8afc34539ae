//! The Qwen vision-language wrappers' vision towers (Qwen2-VL to Qwen3.5): a 3-D patch
//! convolution over (time, height, width), pre-norm blocks with a fused biased QKV, and a
//! merger that joins each spatial_merge_size² patches and projects them into the text width.

use super::*;

/// The MLP of a Qwen vision block.
#[derive(Clone, Copy)]
pub(super) enum Mlp {
    /// Two biased maps, `fc1` and `fc2` (Qwen2-VL, RiceViT).
    Fc,
    /// Two biased maps, `linear_fc1` and `linear_fc2` (Qwen3-VL, Qwen3.5).
    LinearFc,
    /// A biased gated MLP (Qwen2.5-VL).
    Gated,
}

/// Qwen's vision blocks: two norms (RMSNorms where `rms`, else LayerNorms), the attention's
/// fused biased QKV and biased output projection, and the MLP.
pub(super) fn qwen_blocks(n: &mut Named, d: u128, i: u128, depth: u128, mlp: Mlp, rms: bool) {
    let l = "blocks.{i}";
    let step = n
        .layers("vision block", depth)
        .norm(&format!("{l}.norm1"), d, rms)
        .linear(&format!("{l}.attn.qkv"), 3 * d, d, true)
        .linear(&format!("{l}.attn.proj"), d, d, true)
        .norm(&format!("{l}.norm2"), d, rms);
    match mlp {
        Mlp::Fc => step.linear(&format!("{l}.mlp.fc1"), i, d, true).linear(
            &format!("{l}.mlp.fc2"),
            d,
            i,
            true,
        ),
        Mlp::LinearFc => step
            .linear(&format!("{l}.mlp.linear_fc1"), i, d, true)
            .linear(&format!("{l}.mlp.linear_fc2"), d, i, true),
        Mlp::Gated => step
            .linear(&format!("{l}.mlp.gate_proj"), i, d, true)
            .linear(&format!("{l}.mlp.up_proj"), i, d, true)
            .linear(&format!("{l}.mlp.down_proj"), d, i, true),
    };
}

/// Qwen2-VL's merger: a norm over `width` (an RMSNorm where `rms`), then two biased projections
/// of spatial_merge_size² joined features into `out`.
pub(super) fn qwen2_merger(
    n: &mut Named,
    v: &Option<Config>,
    width: u128,
    out: u128,
    rms: bool,
) -> Result<()> {
    let joined = width * (size(v, "spatial_merge_size", 2)? as u128).pow(2);
    n.step("merger")
        .norm("merger.ln_q", width, rms)
        .linear("merger.mlp.0", joined, joined, true)
        .linear("merger.mlp.2", out, joined, true);
    Ok(())
}

/// Qwen2-VL's vision tower: the patch convolution without a bias, blocks of LayerNorms, the
/// attention and a biased two-layer MLP `mlp_ratio` times as wide, and the merger after a
/// LayerNorm, into `hidden_size` (the class's default, not the text width, where the config
/// leaves it out).
pub fn qwen2_vl_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = depth_vision(top, &["qwen2_vl", "qwen2_vl_vision"])? else {
        return Ok(None);
    };
    let d = size(&v, "embed_dim", 1280)? as u128;
    let Some(conv) = patches(&v, 14, d)? else {
        return Ok(None);
    };
    let i = d * size(&v, "mlp_ratio", 4)? as u128;
    let out = size(&v, "hidden_size", 3584)? as u128;
    let depth = size(&v, "depth", 32)? as u128;
    let mut n = Named::default();
    n.step("patch embedding")
        .t("patch_embed.proj.weight", &conv);
    qwen_blocks(&mut n, d, i, depth, Mlp::Fc, false);
    qwen2_merger(&mut n, &v, d, out, false)?;
    n.done(top, "vision_config")
}

/// Qwen2.5-VL's vision tower: Qwen2-VL's with RMSNorms (no biases), a biased gated MLP, and
/// an RMSNorm before the merger, into `out_hidden_size`.
pub fn qwen2_5_vl_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = depth_vision(top, &["qwen2_5_vl", "qwen2_5_vl_vision"])? else {
        return Ok(None);
    };
    let d = size(&v, "hidden_size", 3584)? as u128;
    let Some(conv) = patches(&v, 14, d)? else {
        return Ok(None);
    };
    let i = size(&v, "intermediate_size", 3420)? as u128;
    let out = size(&v, "out_hidden_size", 3584)? as u128;
    let depth = size(&v, "depth", 32)? as u128;
    let mut n = Named::default();
    n.step("patch embedding")
        .t("patch_embed.proj.weight", &conv);
    qwen_blocks(&mut n, d, i, depth, Mlp::Gated, true);
    qwen2_merger(&mut n, &v, d, out, true)?;
    n.done(top, "vision_config")
}

/// Qwen3-VL's vision tower: the patch convolution with a bias, learned positions, blocks of
/// LayerNorms, the attention and a biased two-layer MLP, the merger after a LayerNorm, and a
/// deep-stack merger per `deepstack_visual_indexes` entry, each normed after joining.
pub fn qwen3_vl_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    deepstack_vision(top, &["qwen3_vl", "qwen3_vl_vision"])
}

/// Qwen3-VL-MoE's vision tower: Qwen3-VL's.
pub fn qwen3_vl_moe_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    deepstack_vision(top, &["qwen3_vl_moe", "qwen3_vl_moe_vision"])
}

fn deepstack_vision(top: &Config, kinds: &[&str]) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = depth_vision(top, kinds)? else {
        return Ok(None);
    };
    let Some(mut n) = qwen3_like(&v)? else {
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
    let l = "deepstack_merger_list.{i}";
    n.layers("deep-stack merger", stacked)
        .layer_norm(&format!("{l}.norm"), joined)
        .linear(&format!("{l}.linear_fc1"), joined, joined, true)
        .linear(&format!("{l}.linear_fc2"), out, joined, true);
    n.done(top, "vision_config")
}

/// Qwen3.5's vision tower: Qwen3-VL's without the deep-stack mergers, which Qwen3.5 deletes
/// whatever `deepstack_visual_indexes` a config lists.
pub fn qwen3_5_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let kinds = ["qwen3_5", "qwen3_5_moe", "qwen4_exp", "qwen4_exp_vision"];
    let Some(v) = depth_vision(top, &kinds)? else {
        return Ok(None);
    };
    match qwen3_like(&v)? {
        Some(n) => n.done(top, "vision_config"),
        None => Ok(None),
    }
}

/// Qwen3-VL's and Qwen3.5's tower up to its merger, or `None` for a rectangular patch.
fn qwen3_like(v: &Option<Config>) -> Result<Option<Named>> {
    let d = size(v, "hidden_size", 1152)? as u128;
    let Some(conv) = patches(v, 16, d)? else {
        return Ok(None);
    };
    let i = size(v, "intermediate_size", 4304)? as u128;
    let depth = size(v, "depth", 27)? as u128;
    let positions = size(v, "num_position_embeddings", 2304)? as u128;
    let out = size(v, "out_hidden_size", 3584)? as u128;
    let joined = d * (size(v, "spatial_merge_size", 2)? as u128).pow(2);
    let mut n = Named::default();
    n.step("patch embedding")
        .t("patch_embed.proj.weight", &conv)
        .t("patch_embed.proj.bias", &[d])
        .t("pos_embed.weight", &[positions, d]);
    qwen_blocks(&mut n, d, i, depth, Mlp::LinearFc, false);
    n.step("merger")
        .layer_norm("merger.norm", d)
        .linear("merger.linear_fc1", joined, joined, true)
        .linear("merger.linear_fc2", out, joined, true);
    Ok(Some(n))
}
