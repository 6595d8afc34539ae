//! The Qwen vision-language wrappers' vision towers (Qwen2-VL to Qwen3.5): a 3-D patch
//! convolution over (time, height, width), pre-norm blocks with a fused biased QKV, and a
//! merger that joins each spatial_merge_size² patches and projects them into the text width.

use super::*;
use crate::spec::{
    ImageEncoder, ImageInput, Mrope, Placeholders, Qwen25Vision, Qwen2Vision, Qwen3Vision,
};

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
    qwen_blocks_qkv(n, d, QkvMaps::Fused(3 * d), i, depth, mlp, rms)
}

/// How a Qwen vision block stores its attention's input maps.
#[derive(Clone, Copy)]
enum QkvMaps {
    /// One fused biased map this wide (EXAONE 4.5's fewer K/V heads make it narrower than 3 × d).
    Fused(u128),
    /// Three biased maps, `q`, `k` and `v` (Qwen2.5-Omni's).
    Separate,
}

/// `qwen_blocks` whose attention's input maps are `qkv`.
fn qwen_blocks_qkv(
    n: &mut Named,
    d: u128,
    qkv: QkvMaps,
    i: u128,
    depth: u128,
    mlp: Mlp,
    rms: bool,
) {
    let l = "blocks.{i}";
    let step = n
        .layers("vision block", depth)
        .norm(&format!("{l}.norm1"), d, rms);
    let step = match qkv {
        QkvMaps::Fused(width) => step.linear(&format!("{l}.attn.qkv"), width, d, true),
        QkvMaps::Separate => step
            .linear(&format!("{l}.attn.q"), d, d, true)
            .linear(&format!("{l}.attn.k"), d, d, true)
            .linear(&format!("{l}.attn.v"), d, d, true),
    };
    let step =
        step.linear(&format!("{l}.attn.proj"), d, d, true)
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

/// Qwen2-VL reads an image at the resolution its processor resizes it to; its figures (tokens
/// and FLOPs per image) are stated for a square image of this many features a side (448 pixels
/// at the class's patch and merge).
const STATED_SIDE: u64 = 16;

/// What Qwen2-VL's image runs through: its vision tower's sizes, activation and rotary base,
/// the merge, the language model's M-RoPE split (`mrope_section`, in `rope_scaling` or
/// `rope_parameters`, of the text config or the top level), and the placeholder id
/// (`image_token_id`). `None` where transformers could not run an image: a rectangular patch,
/// or a head whose 2-D rotary halves do not fill it.
pub fn qwen2_vl_image(top: &Config) -> Result<Option<ImageInput>> {
    let Some(v) = qwen_config(top, &["qwen2_vl", "qwen2_vl_vision"])? else {
        return Ok(None);
    };
    let hidden = size(&v, "embed_dim", 1280)?;
    let class = QwenClass {
        prefix: "visual.",
        patch: 14,
        hidden,
        intermediate: hidden * size(&v, "mlp_ratio", 4)?,
        depth: 32,
        act: "quick_gelu",
        out: size(&v, "hidden_size", 3584)?,
        sections: [16, 24, 24],
        interleaved: false,
    };
    let Some(q) = qwen_vision(top, &v, class)? else {
        return Ok(None);
    };
    Ok(Some(qwen_input(top, ImageEncoder::Qwen2Vl(q), 151_655)?))
}

/// What Qwen3-VL's image runs through: Qwen2-VL's reading of its tower (its own defaults and
/// names), the side of its learned position grid (`num_position_embeddings`, which must be a
/// square), the blocks its deep-stack mergers read (`deepstack_visual_indexes`), and its
/// interleaved M-RoPE.
pub fn qwen3_vl_image(top: &Config) -> Result<Option<ImageInput>> {
    qwen3_image(top, &["qwen3_vl", "qwen3_vl_vision"], Some([8, 16, 24]))
}

/// What Qwen3-VL-MoE's image runs through: Qwen3-VL's.
pub fn qwen3_vl_moe_image(top: &Config) -> Result<Option<ImageInput>> {
    qwen3_image(
        top,
        &["qwen3_vl_moe", "qwen3_vl_moe_vision"],
        Some([8, 16, 24]),
    )
}

/// What Qwen3.5's and Qwen3.5-MoE's image runs through: Qwen3-VL's tower without deep-stack
/// mergers (their class builds none, whatever `deepstack_visual_indexes` says), the language
/// model's M-RoPE split (11, 11, 10 by default, of its partial rotary pairs), and their
/// placeholder (248,056 by default).
pub fn qwen3_5_image(top: &Config) -> Result<Option<ImageInput>> {
    let kinds = [
        "qwen3_5",
        "qwen3_5_vision",
        "qwen3_5_moe",
        "qwen3_5_moe_vision",
    ];
    qwen3_image(top, &kinds, None)
}

/// A Qwen3-VL-style image reader of a vision config of `kinds`: with deep-stack mergers at the
/// class's default blocks (`Some`, Qwen3-VL's) or none (Qwen3.5's).
fn qwen3_image(top: &Config, kinds: &[&str], deep: Option<[u64; 3]>) -> Result<Option<ImageInput>> {
    let Some(v) = qwen_config(top, kinds)? else {
        return Ok(None);
    };
    let class = QwenClass {
        prefix: "model.visual.",
        patch: 16,
        hidden: size(&v, "hidden_size", 1152)?,
        intermediate: size(&v, "intermediate_size", 4304)?,
        depth: 27,
        act: "gelu_pytorch_tanh",
        out: size(&v, "out_hidden_size", 3584)?,
        sections: match deep {
            Some(_) => [24, 20, 20],
            None => [11, 11, 10],
        },
        interleaved: true,
    };
    let Some(base) = qwen_vision(top, &v, class)? else {
        return Ok(None);
    };
    let positions = size(&v, "num_position_embeddings", 2304)?;
    let side = positions.isqrt();
    let deepstack = match (deep, &v) {
        (None, _) => vec![],
        (Some(blocks), Some(c)) => c
            .list_any("deepstack_visual_indexes", |x| x.as_u64(), "a layer index")?
            .unwrap_or(blocks.to_vec()),
        (Some(blocks), None) => blocks.to_vec(),
    };
    // A block index past the last reads nothing (transformers builds its merger, unused).
    if side * side != positions {
        return Ok(None);
    }
    let token = match deep {
        Some(_) => 151_655,
        None => 248_056,
    };
    Ok(Some(qwen_input(
        top,
        ImageEncoder::Qwen3Vl(Qwen3Vision {
            base,
            positions: side,
            deepstack,
        }),
        token,
    )?))
}

/// What Qwen2.5-VL's image runs through: Qwen2-VL's reading of its tower (its own defaults:
/// `hidden_size` wide, `intermediate_size`, SiLU), into `out_hidden_size`; its windows
/// (`window_size` pixels a side, over the patch and the merge: none where that is under one
/// feature, as transformers cannot run it) and the blocks that attend among every patch
/// (`fullatt_block_indexes`).
pub fn qwen2_5_vl_image(top: &Config) -> Result<Option<ImageInput>> {
    let Some(v) = qwen_config(top, &["qwen2_5_vl", "qwen2_5_vl_vision"])? else {
        return Ok(None);
    };
    let class = QwenClass {
        prefix: "visual.",
        patch: 14,
        hidden: size(&v, "hidden_size", 3584)?,
        intermediate: size(&v, "intermediate_size", 3420)?,
        depth: 32,
        act: "silu",
        out: size(&v, "out_hidden_size", 3584)?,
        sections: [16, 24, 24],
        interleaved: false,
    };
    let Some(base) = qwen_vision(top, &v, class)? else {
        return Ok(None);
    };
    let window = size(&v, "window_size", 112)? / base.merge.max(1) / base.tower.patch;
    if window == 0 {
        return Ok(None);
    }
    let full = match &v {
        Some(c) => c
            .list_any("fullatt_block_indexes", |x| x.as_u64(), "a block index")?
            .unwrap_or(vec![7, 15, 23, 31]),
        None => vec![7, 15, 23, 31],
    };
    Ok(Some(qwen_input(
        top,
        ImageEncoder::Qwen25Vl(Qwen25Vision { base, window, full }),
        151_655,
    )?))
}

/// A Qwen image reader's vision config of one of `kinds` (`Ok(None)` for another kind,
/// `Some(None)` for none): its attribute map, `num_hidden_layers` setting `depth` and
/// `num_attention_heads` setting `num_heads`.
fn qwen_config<'a>(top: &Config<'a>, kinds: &[&str]) -> Result<Option<Option<Config<'a>>>> {
    Ok(depth_vision(top, kinds)?
        .map(|v| v.map(|v| v.renamed(&[("num_attention_heads", "num_heads")]))))
}

/// The image input of a Qwen encoder: its placeholder `image_token_id` (the class's `token` by
/// default).
fn qwen_input(top: &Config, encoder: ImageEncoder, token: u64) -> Result<ImageInput> {
    Ok(ImageInput {
        token: Some(top.opt_size("image_token_id")?.unwrap_or(token)),
        placeholders: Placeholders::Run,
        encoder,
    })
}

/// What a Qwen VL class gives its tower: where it sits, its widths as read, and its defaults
/// for the rest (its patch, depth, activation, M-RoPE split and order).
struct QwenClass {
    prefix: &'static str,
    patch: u64,
    hidden: u64,
    intermediate: u64,
    depth: u64,
    act: &'static str,
    out: u64,
    sections: [u64; 3],
    interleaved: bool,
}

/// A Qwen vision tower as the image encoders run it, of the vision config `v` and its `class`;
/// the M-RoPE split read from the language model's config. `None` for a rectangular patch or a
/// head its 2-D rotary halves do not fill.
fn qwen_vision(top: &Config, v: &Option<Config>, class: QwenClass) -> Result<Option<Qwen2Vision>> {
    let QwenClass {
        prefix,
        patch,
        hidden,
        intermediate,
        depth,
        act,
        out,
        sections,
        interleaved,
    } = class;
    let (Some(patch), Some(frames)) = (
        square(v, "patch_size", patch)?,
        square(v, "temporal_patch_size", 2)?,
    ) else {
        return Ok(None);
    };
    let heads = size(v, "num_heads", 16)?;
    if !rotary_heads(u128::from(hidden), heads) {
        return Ok(None);
    }
    let merge = size(v, "spatial_merge_size", 2)?;
    // An activation anatomy does not run, or an M-RoPE split it cannot read: counted, not run.
    let (act, theta) = match v {
        Some(c) => (
            activation(c, "hidden_act", act)?,
            match c.detached("rope_parameters")? {
                Some(r) => r.float("rope_theta", 10_000.0)?,
                None => 10_000.0,
            },
        ),
        None => (Act::parse(act), 10_000.0),
    };
    let (Some(act), Some(sections)) = (act, mrope_sections(top, sections)?) else {
        return Ok(None);
    };
    Ok(Some(Qwen2Vision {
        tower: VisionTower {
            prefix: prefix.into(),
            image: STATED_SIDE * patch * merge,
            patch,
            channels: size(v, "in_channels", 3)?,
            hidden,
            intermediate,
            heads,
            depth: size(v, "depth", depth)?,
            eps: 1e-6,
            act,
        },
        frames,
        merge,
        theta,
        out,
        mrope: Mrope {
            sections,
            interleaved,
        },
    }))
}

/// The language model's `mrope_section`, where its config gives one, else the class's
/// `default`; `None` where it is not a list of sizes.
fn mrope_sections(top: &Config, default: [u64; 3]) -> Result<Option<Vec<u64>>> {
    let text = top.detached("text_config")?;
    for c in text.iter().chain([top]) {
        for key in ["rope_parameters", "rope_scaling"] {
            if let Some(list) = c.detached(key)?.and_then(|r| r.get("mrope_section")) {
                let sizes = list
                    .as_array()
                    .map(|l| l.iter().map(|n| n.as_u64()).collect());
                return Ok(sizes.flatten());
            }
        }
    }
    Ok(Some(default.to_vec()))
}

/// Qwen2.5-VL's vision tower: Qwen2-VL's with RMSNorms (no biases), a biased gated MLP, and
/// an RMSNorm before the merger, into `out_hidden_size`.
pub fn qwen2_5_vl_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = depth_vision(top, &["qwen2_5_vl", "qwen2_5_vl_vision"])? else {
        return Ok(None);
    };
    qwen2_5_tower(top, &v, |d| QkvMaps::Fused(3 * d))
}

/// Qwen2.5-VL's tower of the vision config `v`, its attention's input maps as `qkv` gives them
/// for its width (fused over as many K/V heads as heads, EXAONE 4.5's fewer, Qwen2.5-Omni's
/// three maps).
fn qwen2_5_tower(
    top: &Config,
    v: &Option<Config>,
    qkv: impl Fn(u128) -> QkvMaps,
) -> Result<Option<Vec<TowerBlock>>> {
    let d = size(v, "hidden_size", 3584)? as u128;
    let Some(conv) = patches(v, 14, d)? else {
        return Ok(None);
    };
    let i = size(v, "intermediate_size", 3420)? as u128;
    let out = size(v, "out_hidden_size", 3584)? as u128;
    let depth = size(v, "depth", 32)? as u128;
    let mut n = Named::default();
    n.step("patch embedding")
        .t("patch_embed.proj.weight", &conv);
    qwen_blocks_qkv(&mut n, d, qkv(d), i, depth, Mlp::Gated, true);
    qwen2_merger(&mut n, v, d, out, true)?;
    n.done(top, "vision_config")
}

/// Qwen3-VL's vision tower: the patch convolution with a bias, learned positions, blocks of
/// LayerNorms, the attention and a biased two-layer MLP, the merger after a LayerNorm, and a
/// deep-stack merger per `deepstack_visual_indexes` entry, each normed after joining.
pub fn qwen3_vl_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    deepstack_vision(top, &["qwen3_vl", "qwen3_vl_vision"])
}

/// Cohere Compass's vision tower: Qwen3-VL's, under its own kind.
pub fn cohere_compass_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    deepstack_vision(top, &["cohere_compass_vision"])
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
    let stacked = deepstack_count(&v)?;
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
    // The wrapper's type as published; the vision config's own as transformers 5 saves it.
    let kinds = [
        "qwen3_5",
        "qwen3_5_vision",
        "qwen3_5_moe",
        "qwen3_5_moe_vision",
        "qwen4_exp",
        "qwen4_exp_vision",
    ];
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
    let Some(mut n) = qwen3_trunk(v)? else {
        return Ok(None);
    };
    let d = size(v, "hidden_size", 1152)? as u128;
    let out = size(v, "out_hidden_size", 3584)? as u128;
    let joined = d * (size(v, "spatial_merge_size", 2)? as u128).pow(2);
    n.step("merger")
        .layer_norm("merger.norm", d)
        .linear("merger.linear_fc1", joined, joined, true)
        .linear("merger.linear_fc2", out, joined, true);
    Ok(Some(n))
}

/// The Qwen3 towers' patch embedding (a biased 3-D convolution, learned positions) and blocks,
/// or `None` for a rectangular patch.
fn qwen3_trunk(v: &Option<Config>) -> Result<Option<Named>> {
    let d = size(v, "hidden_size", 1152)? as u128;
    let Some(conv) = patches(v, 16, d)? else {
        return Ok(None);
    };
    let i = size(v, "intermediate_size", 4304)? as u128;
    let depth = size(v, "depth", 27)? as u128;
    let positions = size(v, "num_position_embeddings", 2304)? as u128;
    let mut n = Named::default();
    n.step("patch embedding")
        .t("patch_embed.proj.weight", &conv)
        .t("patch_embed.proj.bias", &[d])
        .t("pos_embed.weight", &[positions, d]);
    qwen_blocks(&mut n, d, i, depth, Mlp::LinearFc, false);
    Ok(Some(n))
}

/// Qwen3-Omni's vision tower (its thinker's): Qwen3-VL's patch embedding, positions and blocks,
/// the merger under Qwen2-VL's names (a LayerNorm over each patch, then two biased maps of the
/// joined patches), and a deep-stack merger per `deepstack_visual_indexes` entry, normed after
/// joining.
pub fn qwen3_omni_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = depth_vision(top, &["qwen3_omni_moe_vision_encoder"])? else {
        return Ok(None);
    };
    let Some(mut n) = qwen3_trunk(&v)? else {
        return Ok(None);
    };
    let d = size(&v, "hidden_size", 1152)? as u128;
    let out = size(&v, "out_hidden_size", 3584)? as u128;
    let joined = d * (size(&v, "spatial_merge_size", 2)? as u128).pow(2);
    qwen2_merger(&mut n, &v, d, out, false)?;
    let l = "merger_list.{i}";
    n.layers("deep-stack merger", deepstack_count(&v)?)
        .layer_norm(&format!("{l}.ln_q"), joined)
        .linear(&format!("{l}.mlp.0"), joined, joined, true)
        .linear(&format!("{l}.mlp.2"), out, joined, true);
    n.done(top, "vision_config")
}

/// How many deep-stack mergers a Qwen3 tower has: one per `deepstack_visual_indexes` entry.
fn deepstack_count(v: &Option<Config>) -> Result<u128> {
    Ok(match v {
        Some(c) => c
            .list_any("deepstack_visual_indexes", |x| x.as_u64(), "a layer index")?
            .map_or(3, |l| l.len()),
        None => 3,
    } as u128)
}

/// Qwen3-Omni's audio encoder (its thinker's): three stride-2 3×3 convolutions over the mel
/// spectrogram, a bias-free map of their flattened output into the width, Whisper's layers
/// (LayerNorms, biased attention and MLP; positions a fixed sinusoid, not stored), a last
/// LayerNorm and two biased maps into `output_dim`.
pub fn qwen3_omni_audio(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(OmniAudio { a, d, f, mel, out }) = omni_audio(top, "qwen3_omni_moe_audio_encoder")?
    else {
        return Ok(None);
    };
    let c = size(&a, "downsample_hidden_size", 480)? as u128;
    // Each stride-2 convolution (padding 1) halves the mel bins, rounding up.
    let bins = mel.div_ceil(2).div_ceil(2).div_ceil(2);
    let mut n = Named::default();
    n.step("convolutions")
        .linear_shaped("conv2d1", &[c, 1, 3, 3], true)
        .linear_shaped("conv2d2", &[c, c, 3, 3], true)
        .linear_shaped("conv2d3", &[c, c, 3, 3], true)
        .linear("conv_out", d, c * bins, false);
    whisper_layers(&mut n, &a, d, f, true)?;
    n.step("projector")
        .layer_norm("ln_post", d)
        .linear("proj1", d, d, true)
        .linear("proj2", out, d, true);
    n.done(top, "audio_config")
}

/// Qwen2.5-Omni's vision tower: Qwen2.5-VL's (RMSNorms, a biased gated MLP, the merger after
/// an RMSNorm) with its attention's queries, keys and values in three biased maps.
pub fn qwen2_5_omni_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = depth_vision(top, &["qwen2_5_omni_vision_encoder"])? else {
        return Ok(None);
    };
    qwen2_5_tower(top, &v, |_| QkvMaps::Separate)
}

/// Qwen2.5-Omni's audio encoder: Whisper's (two biased 1-D convolutions over the mel bins,
/// LayerNormed layers whose keys have no bias), a last LayerNorm, one biased map into
/// `output_dim`, and the learned features that open and close an audio span there.
pub fn qwen2_5_omni_audio(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(OmniAudio { a, d, f, mel, out }) = omni_audio(top, "qwen2_5_omni_audio_encoder")?
    else {
        return Ok(None);
    };
    let mut n = Named::default();
    n.step("convolutions")
        .linear_shaped("conv1", &[d, mel, 3], true)
        .linear_shaped("conv2", &[d, d, 3], true);
    whisper_layers(&mut n, &a, d, f, false)?;
    n.step("projector")
        .layer_norm("ln_post", d)
        .linear("proj", out, d, true)
        .t("audio_bos_eos_token.weight", &[2, out]);
    n.done(top, "audio_config")
}

/// The Qwen Omni audio encoders' layers (Whisper's): LayerNorms, the attention's biased maps
/// (the keys' biased where `key_bias`) and a biased two-layer MLP `f` wide.
fn whisper_layers(
    n: &mut Named,
    a: &Option<Config>,
    d: u128,
    f: u128,
    key_bias: bool,
) -> Result<()> {
    let l = "layers.{i}";
    n.layers("encoder layer", size(a, "encoder_layers", 32)? as u128)
        .layer_norm(&format!("{l}.self_attn_layer_norm"), d)
        .linear(&format!("{l}.self_attn.q_proj"), d, d, true)
        .linear(&format!("{l}.self_attn.k_proj"), d, d, key_bias)
        .linear(&format!("{l}.self_attn.v_proj"), d, d, true)
        .linear(&format!("{l}.self_attn.out_proj"), d, d, true)
        .layer_norm(&format!("{l}.final_layer_norm"), d)
        .linear(&format!("{l}.fc1"), f, d, true)
        .linear(&format!("{l}.fc2"), d, f, true);
    Ok(())
}

/// A Qwen Omni audio encoder's config (its class's attribute_map read) and the sizes both
/// encoders share: the width, the MLP's, the mel bins and the output width.
struct OmniAudio<'a> {
    a: Option<Config<'a>>,
    d: u128,
    f: u128,
    mel: u128,
    out: u128,
}

/// The wrapper's audio config of `kind` and its sizes, or `None` for another kind.
fn omni_audio<'a>(top: &Config<'a>, kind: &str) -> Result<Option<OmniAudio<'a>>> {
    const RENAMES: &[(&str, &str)] = &[
        ("num_hidden_layers", "encoder_layers"),
        ("hidden_size", "d_model"),
        ("num_attention_heads", "encoder_attention_heads"),
        ("intermediate_size", "encoder_ffn_dim"),
    ];
    let Some(a) = sub_config(top, "audio_config", &[kind])? else {
        return Ok(None);
    };
    let a = a.map(|a| a.renamed(RENAMES));
    Ok(Some(OmniAudio {
        d: size(&a, "d_model", 1280)? as u128,
        f: size(&a, "encoder_ffn_dim", 5120)? as u128,
        mel: size(&a, "num_mel_bins", 128)? as u128,
        out: size(&a, "output_dim", 3584)? as u128,
        a,
    }))
}

/// HyperCLOVA X Vision v2's projector: one biased map from Qwen2.5-VL's tower output
/// (`out_hidden_size`) to the text width.
pub fn hyperclovax_vision_projector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = depth_vision(top, &["qwen2_5_vl", "qwen2_5_vl_vision"])? else {
        return Ok(None);
    };
    let out = size(&v, "out_hidden_size", 3584)? as u128;
    let mut n = Named::default();
    n.step("projector")
        .linear("", text_hidden(top, 4096)? as u128, out, true);
    n.done(top, "text_config")
}

/// EXAONE 4.5's vision tower: Qwen2.5-VL's (RMSNorms, a biased gated MLP, the merger after an
/// RMSNorm) whose attention has `num_key_value_heads` K/V heads.
pub fn exaone4_5_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = vision(top, &["exaone4_5_vision"])? else {
        return Ok(None);
    };
    let v = v.map(|v| {
        v.renamed(&[
            ("num_attention_heads", "num_heads"),
            ("num_hidden_layers", "depth"),
        ])
    });
    let heads = size(&v, "num_heads", 16)? as u128;
    let kv = size(&v, "num_key_value_heads", 8)? as u128;
    qwen2_5_tower(top, &v, |d| QkvMaps::Fused(d + 2 * kv * (d / heads)))
}
