//! The Gemma wrappers' parts: Gemma 3's SigLIP tower and projector, PaliGemma's, Gemma 3n's
//! MobileNetV5 and audio encoder, Gemma 4's towers and embedders.

use super::*;
use crate::spec::{
    Act, Gemma3Vision, ImageEncoder, ImageInput, PaliGemmaVision, Placeholders, VisionTower,
};

/// Gemma 3's vision tower: SigLIP's patch embedding (a convolution) and learned positions, its
/// encoder layers (LayerNorms, attention with biases, a biased two-layer MLP), its last
/// LayerNorm and, where `vision_use_head`, its attention-pooling head.
pub fn gemma3_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(s) = siglip(top)? else {
        return Ok(None);
    };
    let head = flag(&s.v, "vision_use_head", true)?;
    s.siglip_named(head).done(top, "vision_config")
}

/// Gemma 3's projector: the vision width mapped to the text width, and an RMSNorm before it.
pub fn gemma3_projector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(s) = siglip(top)? else {
        return Ok(None);
    };
    let text = text_hidden(top, 2304)? as u128;
    let mut n = Named::default();
    // Stored as [in, out], a parameter multiplied from the right, not a linear layer.
    n.step("projector")
        .rms("mm_soft_emb_norm", s.hidden)
        .t("mm_input_projection_weight", &[s.hidden, text]);
    n.done(top, "text_config")
}

/// What Gemma 3's image runs through: SigLIP's vision model, its patches average-pooled to
/// `mm_tokens_per_image` features, the projector's RMSNorm and map; its placeholder is
/// `image_token_index`.
pub fn gemma3_image(top: &Config) -> Result<Option<ImageInput>> {
    let Some(s) = siglip(top)? else {
        return Ok(None);
    };
    let v = &s.v;
    let Some(tower) = siglip_tower(top, &s, SIGLIP.0, 12)? else {
        return Ok(None);
    };
    let tokens = top.size("mm_tokens_per_image", Some(256))?;
    let side = tokens.isqrt();
    let grid = s.grid as u64;
    // Pooling must give the placeholders' count; where it cannot (SigLIP's own defaults: 14×14
    // patches for 256 features), transformers builds the model but runs no image through it.
    if side == 0 || side * side != tokens || side > grid || !grid.is_multiple_of(side) {
        return Ok(None);
    }
    Ok(Some(ImageInput {
        token: Some(token_id(
            top,
            "image_token_index",
            "image_token_id",
            262_144,
        )?),
        placeholders: Placeholders::Framed {
            open: token_id(top, "boi_token_index", "boi_token_id", 255_999)?,
            close: token_id(top, "eoi_token_index", "eoi_token_id", 256_000)?,
        },
        encoder: ImageEncoder::Gemma3(Gemma3Vision {
            tower,
            projector: "multi_modal_projector.".into(),
            tokens,
            head: flag(v, "vision_use_head", true)?,
        }),
    }))
}

/// PaliGemma's SigLIP where it has no vision config (its class's sub-config: so400m, 27 layers
/// of 1,152 in 16 heads, at 224 pixels in patches of 14, headless); SigLIP's own defaults for
/// the keys a vision config leaves out.
const PALIGEMMA_SIGLIP: VitDefaults = (224, 14, 1152, 4096, 27);

fn paligemma_siglip<'a>(top: &Config<'a>) -> Result<Option<Vit<'a>>> {
    vit_either(top, &["siglip_vision_model"], SIGLIP, PALIGEMMA_SIGLIP)
}

/// PaliGemma's vision tower: SigLIP's, with its attention-pooling head where the vision config
/// asks for one (its class's default tower has none).
pub fn paligemma_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(s) = paligemma_siglip(top)? else {
        return Ok(None);
    };
    let head = flag(&s.v, "vision_use_head", s.v.is_some())?;
    s.siglip_named(head).done(top, "vision_config")
}

/// PaliGemma's projector: one biased map from the vision width to `projection_dim`.
pub fn paligemma_projector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(s) = paligemma_siglip(top)? else {
        return Ok(None);
    };
    let out = top.size("projection_dim", Some(2048))? as u128;
    let mut n = Named::default();
    n.step("projector").linear("linear", out, s.hidden, true);
    n.done(top, "projection_dim")
}

/// What PaliGemma's image runs through: SigLIP's vision model to its last LayerNorm and the
/// projector's map, one feature per patch, each replacing an `image_token_index`. A map that
/// does not give the text width builds but cannot run an image.
pub fn paligemma_image(top: &Config) -> Result<Option<ImageInput>> {
    let Some(s) = paligemma_siglip(top)? else {
        return Ok(None);
    };
    let v = &s.v;
    let Some(tower) = siglip_tower(top, &s, PALIGEMMA_SIGLIP.0, 16)? else {
        return Ok(None);
    };
    // The text width: its config's, else its class's (Gemma's 3,072, Gemma 2's 2,304).
    let text = match top.detached("text_config")? {
        Some(t) => {
            let gemma2 = t.opt_string("model_type")?.as_deref() == Some("gemma2");
            t.size("hidden_size", Some(if gemma2 { 2304 } else { 3072 }))?
        }
        None => 2048,
    };
    if top.size("projection_dim", Some(2048))? != text {
        return Ok(None);
    }
    Ok(Some(ImageInput {
        token: Some(token_id(
            top,
            "image_token_index",
            "image_token_id",
            256_000,
        )?),
        placeholders: Placeholders::Prefix,
        encoder: ImageEncoder::PaliGemma(PaliGemmaVision {
            tower,
            projector: "multi_modal_projector.".into(),
            head: flag(v, "vision_use_head", v.is_some())?,
        }),
    }))
}

/// SigLIP's tower `s` as the image encoders run it, under `vision_tower.`: its image (`image`
/// by default), heads (`heads` where the wrapper has no vision config), ε and activation;
/// `None` where it cannot run an image (a rectangular image, an activation the towers do not
/// run).
pub(super) fn siglip_tower(
    top: &Config,
    s: &Vit,
    image: u64,
    heads: u64,
) -> Result<Option<VisionTower>> {
    let v = &s.v;
    let Some(image) = square(v, "image_size", image)? else {
        return Ok(None);
    };
    let (heads, eps, act) = match v {
        Some(c) => (
            c.size("num_attention_heads", Some(12))?,
            c.float("layer_norm_eps", 1e-6)?,
            activation(c, "hidden_act", "gelu_pytorch_tanh")?,
        ),
        None => (heads, 1e-6, Some(Act::GeluTanh)),
    };
    let Some(act) = act else {
        return Ok(None);
    };
    s.runs(top, "vision_tower.", image, heads, eps, act)
        .map(Some)
}

/// Gemma 4's sub-config `key`: `None` where the wrapper has none (its class then builds no such
/// tower), `Some(None)` where it is of another kind than `kind`.
fn gemma4_part<'a>(top: &Config<'a>, key: &str, kind: &str) -> Result<Option<Option<Config<'a>>>> {
    let Some(v) = top.detached(key)? else {
        return Ok(None);
    };
    match v.opt_string("model_type")?.as_deref() {
        None => Ok(Some(Some(v))),
        Some(k) if k == kind => Ok(Some(Some(v))),
        Some(_) => Ok(Some(None)),
    }
}

/// Gemma 4's vision tower: a patch projection and a table of positions per axis, encoder layers
/// (per-head RMS norms on Q and K, four RMS norms, a gated MLP, every projection bias-free and
/// clipped where `use_clipped_linears`), and the standardizing scale and bias where
/// `standardize`. Zero where the wrapper has no vision config, and the part is not listed.
pub fn gemma4_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let v = match gemma4_part(top, "vision_config", "gemma4_vision")? {
        None => return not_built(),
        Some(None) => return Ok(None),
        Some(Some(v)) => v,
    };
    let d = v.size("hidden_size", Some(768))? as u128;
    let i = v.size("intermediate_size", Some(3072))? as u128;
    let layers = v.size("num_hidden_layers", Some(16))? as u128;
    let heads = v.size("num_attention_heads", Some(12))? as u128;
    let kv = v.size("num_key_value_heads", Some(12))? as u128;
    let hd = v.size("head_dim", Some(64))? as u128;
    let patch = v.size("patch_size", Some(16))? as u128;
    let positions = v.size("position_embedding_size", Some(10 * 1024))? as u128;
    let clip = v.flag("use_clipped_linears", false)?;
    let l = "encoder.layers.{i}";
    let at = |name: &str| format!("{l}.{name}");
    let mut n = Named::default();
    n.step("patch embedding")
        .t("patch_embedder.input_proj.weight", &[d, 3 * patch * patch])
        .t(
            "patch_embedder.position_embedding_table",
            &[2, positions, d],
        );
    n.layers("encoder layer", layers)
        .rms(&at("input_layernorm"), d)
        .clipped(&at("self_attn.q_proj"), heads * hd, d, clip)
        .clipped(&at("self_attn.k_proj"), kv * hd, d, clip)
        .clipped(&at("self_attn.v_proj"), kv * hd, d, clip)
        .rms(&at("self_attn.q_norm"), hd)
        .rms(&at("self_attn.k_norm"), hd)
        .clipped(&at("self_attn.o_proj"), d, heads * hd, clip)
        .rms(&at("post_attention_layernorm"), d)
        .rms(&at("pre_feedforward_layernorm"), d)
        .clipped(&at("mlp.gate_proj"), i, d, clip)
        .clipped(&at("mlp.up_proj"), i, d, clip)
        .clipped(&at("mlp.down_proj"), d, i, clip)
        .rms(&at("post_feedforward_layernorm"), d);
    if v.flag("standardize", false)? {
        n.step("standardizing")
            .t("std_bias", &[d])
            .t("std_scale", &[d]);
    }
    n.done(top, "vision_config")
}

/// Gemma 4's audio tower, a conformer: two strided convolutions with their norms and a
/// projection in; per layer two half-step feed-forwards, attention with relative-position keys
/// and a per-dim scale, a light convolution block (gated projection, depthwise kernel, norms),
/// and three norms; its output projection. Every clipped linear stores four bounds.
pub fn gemma4_audio(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let v = match gemma4_part(top, "audio_config", "gemma4_audio")? {
        None => return not_built(),
        Some(None) => return Ok(None),
        Some(Some(v)) => v,
    };
    let d = v.size("hidden_size", Some(1024))? as u128;
    let layers = v.size("num_hidden_layers", Some(12))? as u128;
    let heads = v.size("num_attention_heads", Some(8))? as u128;
    let kernel = v.size("conv_kernel_size", Some(5))? as u128;
    let out = v.size("output_proj_dims", Some(1536))? as u128;
    let [c0, c1] = pair(Some(&v), "subsampling_conv_channels", [128, 32])?;
    let clip = v.flag("use_clipped_linears", true)?;
    let hd = d / heads;
    let s = "subsample_conv_projection";
    let mut n = Named::default();
    n.step("subsampling")
        .t(&format!("{s}.layer0.conv.weight"), &[c0, 1, 3, 3])
        .rms(&format!("{s}.layer0.norm"), c0)
        .t(&format!("{s}.layer1.conv.weight"), &[c1, c0, 3, 3])
        .rms(&format!("{s}.layer1.norm"), c1)
        .t(
            &format!("{s}.input_proj_linear.weight"),
            &[d, (c0 / 4) * c1],
        );
    let at = |name: &str| format!("layers.{{i}}.{name}");
    let mut step = n.layers("conformer layer", layers);
    for ff in ["feed_forward1", "feed_forward2"] {
        step = step
            .rms(&at(&format!("{ff}.pre_layer_norm")), d)
            .clipped(&at(&format!("{ff}.ffw_layer_1")), 4 * d, d, clip)
            .clipped(&at(&format!("{ff}.ffw_layer_2")), d, 4 * d, clip)
            .rms(&at(&format!("{ff}.post_layer_norm")), d);
    }
    step.rms(&at("norm_pre_attn"), d)
        .clipped(&at("self_attn.q_proj"), heads * hd, d, clip)
        .clipped(&at("self_attn.k_proj"), heads * hd, d, clip)
        .clipped(&at("self_attn.v_proj"), heads * hd, d, clip)
        .t(&at("self_attn.relative_k_proj.weight"), &[heads * hd, d])
        .t(&at("self_attn.per_dim_scale"), &[hd])
        .clipped(&at("self_attn.post"), d, d, clip)
        .rms(&at("norm_post_attn"), d)
        .rms(&at("lconv1d.pre_layer_norm"), d)
        .clipped(&at("lconv1d.linear_start"), 2 * d, d, clip)
        .t(&at("lconv1d.depthwise_conv1d.weight"), &[d, 1, kernel])
        .rms(&at("lconv1d.conv_norm"), d)
        .clipped(&at("lconv1d.linear_end"), d, d, clip)
        .rms(&at("norm_out"), d);
    n.step("output projection")
        .linear("output_proj", out, d, true);
    n.done(top, "audio_config")
}

/// A Gemma 4 embedder: the width `width` (with the class's `default`) of the sub-config `key`
/// of kind `kind`, mapped to the text width (its norm has no weight). Zero where the wrapper
/// has no such sub-config; `None` for one of another kind.
fn gemma4_embedder(
    top: &Config,
    (key, kind): (&str, &str),
    (width, default): (&str, u64),
) -> Result<Option<Vec<TowerBlock>>> {
    match gemma4_part(top, key, kind)? {
        None => not_built(),
        Some(None) => Ok(None),
        Some(Some(v)) => {
            let w = v.size(width, Some(default))? as u128;
            let mut n = Named::default();
            n.step("projection").t(
                "embedding_projection.weight",
                &[text_hidden(top, 2304)? as u128, w],
            );
            n.done(top, key)
        }
    }
}

/// Gemma 4's vision embedder: the vision tower's width mapped to the text width.
pub fn gemma4_embed_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    gemma4_embedder(
        top,
        ("vision_config", "gemma4_vision"),
        ("hidden_size", 768),
    )
}

/// Gemma 4's audio embedder: the audio tower's output width mapped to the text width.
pub fn gemma4_embed_audio(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    gemma4_embedder(
        top,
        ("audio_config", "gemma4_audio"),
        ("output_proj_dims", 1536),
    )
}

/// Gemma 3n's vision tower, timm's MobileNetV5 encoder built from timm's own block definitions
/// (`architecture`; the config's sizes do not reach it): counted for `mobilenetv5_300m_enc`, the
/// one timm registers as an encoder and the class's default, and not for another architecture or
/// `model_args` that change it (`None`, and the views say so).
pub fn gemma3n_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = sub_config(top, "vision_config", &["gemma3n_vision"])? else {
        return Ok(None);
    };
    if let Some(v) = &v {
        let arch = v.string("architecture", "mobilenetv5_300m_enc")?;
        if arch != "mobilenetv5_300m_enc" || v.get("model_args").is_some_and(|a| !a.is_null()) {
            return Ok(None);
        }
    }
    mobilenet_v5(MOBILENETV5_300M, 64, 2048).done(top, "vision_config")
}

/// timm's channel rounding (`make_divisible` by 8): to the nearest multiple, at least 8, and up
/// a step where that falls more than 10% short.
fn divisible(v: u128) -> u128 {
    let n = ((v + 4) / 8 * 8).max(8);
    if 10 * n < 9 * v {
        n + 8
    } else {
        n
    }
}

/// A MobileNetV5 encoder as timm names it under `timm_model.`: a biased 3 × 3 stem convolution
/// to `stem` channels with its norm, the blocks of `stages` (`blocks.{stage}.{block}`), and the
/// multi-scale fusion adapter over the last two stages' outputs (an inverted residual of
/// expansion 2 to `features` channels, and a norm). Every norm is an RMS norm with a weight (timm
/// calls them `bn`); no other convolution has a bias.
fn mobilenet_v5(stages: &[&[&str]], stem: u128, features: u128) -> Named {
    let t = "timm_model";
    let mut n = Named::default();
    n.step("stem")
        .linear_shaped(&format!("{t}.conv_stem.conv"), &[stem, 3, 3, 3], true)
        .rms(&format!("{t}.conv_stem.bn"), stem);
    let mut inc = stem;
    let mut ends = Vec::new();
    for (si, stage) in stages.iter().enumerate() {
        let mut step = n.step(&format!("stage {}", si + 1));
        for (bi, block) in stage.iter().enumerate() {
            let kind = block.split('_').next().unwrap_or_default();
            // A block's option `key` (`k3`: 3), 0 where the block does not give it.
            let opt = |key: char| -> u128 {
                block
                    .split('_')
                    .skip(1)
                    .find_map(|p| p.strip_prefix(key).and_then(|v| v.parse().ok()))
                    .unwrap_or(0)
            };
            let at = |name: &str| format!("{t}.blocks.{si}.{bi}.{name}");
            let c = opt('c');
            step = match kind {
                // Edge residual: a full k × k convolution expanding, a 1 × 1 projecting.
                "er" => {
                    let (k, mid) = (opt('k'), divisible(inc * opt('e')));
                    step.t(&at("conv_exp.weight"), &[mid, inc, k, k])
                        .rms(&at("bn1"), mid)
                        .t(&at("conv_pwl.weight"), &[c, mid, 1, 1])
                        .rms(&at("bn2"), c)
                }
                // Universal inverted residual: an optional depthwise convolution before the
                // expansion and one after it, the 1 × 1 expansion and projection, a layer scale.
                "uir" => {
                    let (a, k, mid) = (opt('a'), opt('k'), divisible(inc * opt('e')));
                    let step = match a {
                        0 => step,
                        a => step.conv_norm(&at("dw_start"), &[inc, 1, a, a]),
                    };
                    let step = step.conv_norm(&at("pw_exp"), &[mid, inc, 1, 1]);
                    let step = match k {
                        0 => step,
                        k => step.conv_norm(&at("dw_mid"), &[mid, 1, k, k]),
                    };
                    step.conv_norm(&at("pw_proj"), &[c, mid, 1, 1])
                        .t(&at("layer_scale.gamma"), &[c])
                }
                // Mobile multi-query attention: a norm, the heads' queries, one key and one value
                // head (each downsampled by a strided depthwise convolution and a norm where `v`
                // strides), the output projection and a layer scale.
                "mqa" => {
                    let (h, d, k) = (opt('h'), opt('d'), opt('k'));
                    let mut step = step
                        .rms(&at("norm"), inc)
                        .t(&at("attn.query.proj.weight"), &[h * d, inc, 1, 1]);
                    for kv in ["key", "value"] {
                        if opt('v') > 1 {
                            step = step
                                .t(&at(&format!("attn.{kv}.down_conv.weight")), &[inc, 1, k, k])
                                .rms(&at(&format!("attn.{kv}.norm")), inc);
                        }
                        step = step.t(&at(&format!("attn.{kv}.proj.weight")), &[d, inc, 1, 1]);
                    }
                    step.t(&at("attn.output.proj.weight"), &[c, h * d, 1, 1])
                        .t(&at("layer_scale.gamma"), &[c])
                }
                other => unreachable!("MOBILENETV5_300M holds no {other:?} block"),
            };
            inc = c;
        }
        ends.push(inc);
    }
    let fused: u128 = ends.iter().rev().take(2).sum();
    let mid = divisible(2 * fused);
    let f = format!("{t}.msfa");
    n.step("multi-scale fusion")
        .conv_norm(&format!("{f}.ffn.pw_exp"), &[mid, fused, 1, 1])
        .conv_norm(&format!("{f}.ffn.pw_proj"), &[features, mid, 1, 1])
        .rms(&format!("{f}.norm"), features);
    n
}

/// timm's `mobilenetv5_300m_enc` (`_gen_mobilenet_v5`), its stages' blocks as timm writes them:
/// `er` an edge residual, `uir` a universal inverted residual, `mqa` mobile multi-query attention;
/// `a` and `k` the depthwise kernels before and after the expansion (0: none), `e` the expansion,
/// `c` the output channels, `h` heads of `d` dims, `v` the stride of the keys and values.
const MOBILENETV5_300M: &[&[&str]] = &[
    &[
        "er_r1_k3_s2_e4_c128",
        "er_r1_k3_s1_e4_c128",
        "er_r1_k3_s1_e4_c128",
    ],
    &[
        "uir_r1_a3_k5_s2_e6_c256",
        "uir_r1_a5_k0_s1_e4_c256",
        "uir_r1_a3_k0_s1_e4_c256",
        "uir_r1_a5_k0_s1_e4_c256",
        "uir_r1_a3_k0_s1_e4_c256",
    ],
    &[
        "uir_r1_a5_k5_s2_e6_c640",
        "uir_r1_a5_k0_s1_e4_c640",
        "uir_r1_a5_k0_s1_e4_c640",
        "uir_r1_a5_k0_s1_e4_c640",
        "uir_r1_a5_k0_s1_e4_c640",
        "uir_r1_a5_k0_s1_e4_c640",
        "uir_r1_a5_k0_s1_e4_c640",
        "uir_r1_a5_k0_s1_e4_c640",
        "uir_r1_a0_k0_s1_e1_c640",
        "mqa_r1_k3_h12_v2_s1_d64_c640",
        "uir_r1_a0_k0_s1_e2_c640",
        "mqa_r1_k3_h12_v2_s1_d64_c640",
        "uir_r1_a0_k0_s1_e2_c640",
        "mqa_r1_k3_h12_v2_s1_d64_c640",
        "uir_r1_a0_k0_s1_e2_c640",
        "mqa_r1_k3_h12_v2_s1_d64_c640",
        "uir_r1_a0_k0_s1_e2_c640",
        "mqa_r1_k3_h12_v2_s1_d64_c640",
        "uir_r1_a0_k0_s1_e2_c640",
        "mqa_r1_k3_h12_v2_s1_d64_c640",
        "uir_r1_a0_k0_s1_e2_c640",
        "mqa_r1_k3_h12_v2_s1_d64_c640",
        "uir_r1_a0_k0_s1_e2_c640",
        "mqa_r1_k3_h12_v2_s1_d64_c640",
        "uir_r1_a0_k0_s1_e2_c640",
        "mqa_r1_k3_h12_v2_s1_d64_c640",
        "uir_r1_a0_k0_s1_e2_c640",
        "mqa_r1_k3_h12_v2_s1_d64_c640",
        "uir_r1_a0_k0_s1_e2_c640",
        "mqa_r1_k3_h12_v2_s1_d64_c640",
        "uir_r1_a0_k0_s1_e2_c640",
        "mqa_r1_k3_h12_v2_s1_d64_c640",
        "uir_r1_a0_k0_s1_e2_c640",
        "mqa_r1_k3_h12_v2_s1_d64_c640",
        "uir_r1_a0_k0_s1_e2_c640",
        "mqa_r1_k3_h12_v2_s1_d64_c640",
        "uir_r1_a0_k0_s1_e2_c640",
    ],
    &[
        "uir_r1_a5_k5_s2_e6_c1280",
        "mqa_r1_k3_h16_s1_d96_c1280",
        "uir_r1_a0_k0_s1_e2_c1280",
        "mqa_r1_k3_h16_s1_d96_c1280",
        "uir_r1_a0_k0_s1_e2_c1280",
        "mqa_r1_k3_h16_s1_d96_c1280",
        "uir_r1_a0_k0_s1_e2_c1280",
        "mqa_r1_k3_h16_s1_d96_c1280",
        "uir_r1_a0_k0_s1_e2_c1280",
        "mqa_r1_k3_h16_s1_d96_c1280",
        "uir_r1_a0_k0_s1_e2_c1280",
        "mqa_r1_k3_h16_s1_d96_c1280",
        "uir_r1_a0_k0_s1_e2_c1280",
        "mqa_r1_k3_h16_s1_d96_c1280",
        "uir_r1_a0_k0_s1_e2_c1280",
        "mqa_r1_k3_h16_s1_d96_c1280",
        "uir_r1_a0_k0_s1_e2_c1280",
        "mqa_r1_k3_h16_s1_d96_c1280",
        "uir_r1_a0_k0_s1_e2_c1280",
        "mqa_r1_k3_h16_s1_d96_c1280",
        "uir_r1_a0_k0_s1_e2_c1280",
        "mqa_r1_k3_h16_s1_d96_c1280",
        "uir_r1_a0_k0_s1_e2_c1280",
        "mqa_r1_k3_h16_s1_d96_c1280",
        "uir_r1_a0_k0_s1_e2_c1280",
        "mqa_r1_k3_h16_s1_d96_c1280",
        "uir_r1_a0_k0_s1_e2_c1280",
        "mqa_r1_k3_h16_s1_d96_c1280",
        "uir_r1_a0_k0_s1_e2_c1280",
        "mqa_r1_k3_h16_s1_d96_c1280",
        "uir_r1_a0_k0_s1_e2_c1280",
        "mqa_r1_k3_h16_s1_d96_c1280",
        "uir_r1_a0_k0_s1_e2_c1280",
        "mqa_r1_k3_h16_s1_d96_c1280",
        "uir_r1_a0_k0_s1_e2_c1280",
        "mqa_r1_k3_h16_s1_d96_c1280",
        "uir_r1_a0_k0_s1_e2_c1280",
        "mqa_r1_k3_h16_s1_d96_c1280",
        "uir_r1_a0_k0_s1_e2_c1280",
    ],
];

/// Gemma 3n's audio tower (`Gemma3nAudioEncoder`), a conformer: two convolutions over time and
/// frequency without biases, each with a cumulative group norm, and a projection of what they
/// leave (channels × frequencies) to the width; per layer two feed-forwards four times as wide,
/// attention with relative-position keys and a per-dim scale, a light convolution block, and the
/// norms around each. `None` for another kind of audio config.
pub fn gemma3n_audio(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = sub_config(top, "audio_config", &["gemma3n_audio"])? else {
        return Ok(None);
    };
    let size = |key: &str, default: u64| -> Result<u128> {
        Ok(match &v {
            Some(v) => v.size(key, Some(default))?,
            None => default,
        } as u128)
    };
    let d = size("hidden_size", 1536)?;
    let layers = size("conf_num_hidden_layers", 12)?;
    let heads = size("conf_num_attention_heads", 8)?;
    let kernel = size("conf_conv_kernel_size", 5)?;
    let feat = size("input_feat_size", 128)?;
    let [c0, c1] = pair(v.as_ref(), "sscp_conv_channel_size", [128, 32])?;
    let [k0, k1] = pairs(v.as_ref(), "sscp_conv_kernel_size", [[3, 3], [3, 3]])?;
    let [s0, s1] = pairs(v.as_ref(), "sscp_conv_stride_size", [[2, 2], [2, 2]])?;
    // The frequencies each convolution leaves, one padded on either side.
    let mut f = feat;
    for ([_, kw], [_, sw]) in [(k0, s0), (k1, s1)] {
        f = (f + 2).checked_sub(kw).map(|r| r / sw + 1).ok_or_else(|| {
            let (key, message) = (
                "sscp_conv_kernel_size",
                "is wider than the frequencies it convolves",
            );
            match &v {
                Some(v) => v.err(key, message),
                None => top.err("audio_config", message),
            }
        })?;
    }
    // Each head `d / heads` wide.
    let a = heads * (d / heads);
    let s = "subsample_conv_projection";
    let mut n = Named::default();
    n.step("subsampling")
        .t(&format!("{s}.conv_0.conv.weight"), &[c0, 1, k0[0], k0[1]])
        .rms(&format!("{s}.conv_0.norm"), c0)
        .t(&format!("{s}.conv_1.conv.weight"), &[c1, c0, k1[0], k1[1]])
        .rms(&format!("{s}.conv_1.norm"), c1)
        .t(&format!("{s}.input_proj_linear.weight"), &[d, c1 * f]);
    let at = |name: &str| format!("conformer.{{i}}.{name}");
    let mut step = n.layers("conformer layer", layers);
    for ff in ["ffw_layer_start", "ffw_layer_end"] {
        step = step
            .rms(&at(&format!("{ff}.pre_layer_norm")), d)
            .linear(&at(&format!("{ff}.ffw_layer_1")), 4 * d, d, false)
            .linear(&at(&format!("{ff}.ffw_layer_2")), d, 4 * d, false)
            .rms(&at(&format!("{ff}.post_layer_norm")), d);
    }
    step.rms(&at("attention.pre_attn_norm"), d)
        .linear(&at("attention.attn.q_proj"), a, d, false)
        .linear(&at("attention.attn.k_proj"), a, d, false)
        .linear(&at("attention.attn.v_proj"), a, d, false)
        .t(&at("attention.attn.per_dim_scale"), &[d / heads])
        .linear(
            &at("attention.attn.relative_position_embedding.pos_proj"),
            a,
            d,
            false,
        )
        .linear(&at("attention.post"), d, d, false)
        .rms(&at("attention.post_norm"), d)
        .rms(&at("lconv1d.pre_layer_norm"), d)
        .linear(&at("lconv1d.linear_start"), 2 * d, d, false)
        .t(&at("lconv1d.depthwise_conv1d.weight"), &[d, 1, kernel])
        .rms(&at("lconv1d.conv_norm"), d)
        .linear(&at("lconv1d.linear_end"), d, d, false)
        .rms(&at("norm"), d);
    n.done(top, "audio_config")
}

/// Gemma 3n's embedders: a table of the tower's own tokens at its width, two RMS norms, and a
/// projection to the text width (its last norm has no weight).
fn gemma3n_embedder(
    top: &Config,
    (key, kind): (&str, &str),
    default_width: u64,
) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = sub_config(top, key, &[kind])? else {
        return Ok(None);
    };
    let (w, tokens) = match &v {
        Some(v) => (
            v.size("hidden_size", Some(default_width))?,
            v.size("vocab_size", Some(128))?,
        ),
        None => (default_width, 128),
    };
    let (w, tokens) = (w as u128, tokens as u128);
    let mut n = Named::default();
    n.step("embedder")
        .t("embedding.weight", &[tokens, w])
        .rms("hard_embedding_norm", w)
        .rms("soft_embedding_norm", w)
        .t(
            "embedding_projection.weight",
            &[text_hidden(top, 2048)? as u128, w],
        );
    n.done(top, key)
}

/// Gemma 3n's vision embedder.
pub fn gemma3n_embed_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    gemma3n_embedder(top, ("vision_config", "gemma3n_vision"), 2048)
}

/// Gemma 3n's audio embedder.
pub fn gemma3n_embed_audio(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    gemma3n_embedder(top, ("audio_config", "gemma3n_audio"), 1536)
}

/// Two pairs of positive sizes under `key`, as `[[3, 3], [3, 3]]`.
fn pairs(v: Option<&Config>, key: &str, default: [[u64; 2]; 2]) -> Result<[[u128; 2]; 2]> {
    let Some((c, x)) = v.and_then(|c| c.get(key).map(|x| (c, x))) else {
        return Ok(default.map(|p| p.map(u128::from)));
    };
    let bad = || c.err(key, format!("must be two pairs of sizes, as {default:?}"));
    match x.as_array().map(|a| a.as_slice()) {
        Some([a, b]) => Ok([
            two(c, key, a)?.ok_or_else(bad)?,
            two(c, key, b)?.ok_or_else(bad)?,
        ]),
        _ => Err(bad()),
    }
}

/// Gemma 4 unified's patch embedder, in place of a vision tower (`vision_embedder.` in its
/// checkpoints): each merged patch's pixels (`(patch_size × pooling_kernel_size)²` of them,
/// three channels) through a LayerNorm, a biased projection and a LayerNorm; a table of
/// positions per axis, and a LayerNorm after adding them. Zero where the wrapper has no vision
/// config.
pub fn gemma4_unified_patches(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let v = match gemma4_part(top, "vision_config", "gemma4_unified_vision")? {
        None => return not_built(),
        Some(None) => return Ok(None),
        Some(Some(v)) => v,
    };
    let merged =
        (v.size("patch_size", Some(16))? * v.size("pooling_kernel_size", Some(3))?) as u128;
    let pixels = 3 * merged * merged;
    let d = v.size("mm_embed_dim", Some(3840))? as u128;
    let positions = v.size("mm_posemb_size", Some(1120))? as u128;
    let mut n = Named::default();
    n.step("patch embedding")
        .layer_norm("patch_ln1", pixels)
        .linear("patch_dense", d, pixels, true)
        .layer_norm("patch_ln2", d)
        .t("pos_embedding", &[positions, 2, d])
        .layer_norm("pos_norm", d);
    n.done(top, "vision_config")
}

/// Gemma 4 unified's vision embedder: the patch embedder's output (`output_proj_dims` wide)
/// projected to the text width.
pub fn gemma4_unified_embed_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    gemma4_embedder(
        top,
        ("vision_config", "gemma4_unified_vision"),
        ("output_proj_dims", 3840),
    )
}

/// Gemma 4 unified's audio embedder, in place of a tower: the audio features (`audio_embed_dim`
/// wide) projected to the text width.
pub fn gemma4_unified_embed_audio(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    gemma4_embedder(
        top,
        ("audio_config", "gemma4_unified_audio"),
        ("audio_embed_dim", 640),
    )
}
