//! What a multimodal wrapper holds beside its language model (its vision and audio towers,
//! projectors, Fuyu's patch embedding), from the wrapper's config and the defaults of the classes
//! transformers builds them with: each tensor named and shaped as the checkpoint stores it, step
//! by step (`named.rs`), so that a wrapper's total is what transformers builds.
//!
//! Each builder reads its sub-config detached from the key accounting: a tower's keys are not
//! the language model's, and the wrapper's row lists the sub-config as inert. A tower of a kind
//! it does not know (another `model_type`) is left unnamed and uncounted (`None`) and the views
//! say so.

use crate::config::Config;
use crate::error::Result;
use crate::spec::{Act, TowerBlock, VisionTower};

mod blip;
mod gemma;
mod git;
mod glm;
mod granite;
mod hunyuan;
mod inkling;
mod kimi;
mod lfm3;
mod llama4;
mod llava;
mod minicpm;
mod minimax;
mod named;
mod ovis;
mod paddle;
mod qwen;

pub use blip::*;
pub use gemma::*;
pub use git::*;
pub use glm::*;
pub use granite::*;
pub use hunyuan::*;
pub use inkling::*;
pub use kimi::*;
pub use lfm3::*;
pub use llama4::*;
pub use llava::*;
pub use minicpm::*;
pub use minimax::*;
pub use ovis::*;
pub use paddle::*;
pub use qwen::*;

use named::{Named, Step};

/// Names one part's tensors, step by step, from the wrapper's config: `None` where anatomy does
/// not know it.
pub type Builder = fn(&Config) -> Result<Option<Vec<TowerBlock>>>;

/// A ViT-style vision tower's sizes (SigLIP, CLIP, Llama 4's and Mllama's encoders), read from
/// the wrapper's vision config with its class's defaults.
struct Vit<'a> {
    /// The vision config itself, for a builder's keys of its own (`None`: the class defaults).
    v: Option<Config<'a>>,
    hidden: u128,
    intermediate: u128,
    layers: u128,
    channels: u128,
    patch: u128,
    /// Patches along each side of an image: image / patch.
    grid: u128,
    /// Patches per image: grid².
    patches: u128,
    /// The patch embedding is a linear map of each patch's pixels (SigLIP2's NaFlex), not a
    /// convolution: the same parameters, stored flat.
    flat_patch: bool,
}

/// A class's defaults for `Vit`'s sizes: image, patch, hidden, intermediate, layers.
type VitDefaults = (u64, u64, u64, u64, u64);

impl Vit<'_> {
    /// The patch embedding's shape: a convolution's `[hidden, channels, patch, patch]`, or a
    /// linear map's `[hidden, channels · patch²]`.
    fn conv_shape(&self) -> Vec<u128> {
        let (d, c, p) = (self.hidden, self.channels, self.patch);
        match self.flat_patch {
            true => vec![d, c * p * p],
            false => vec![d, c, p, p],
        }
    }

    /// CLIP's and SigLIP's encoder layers: two LayerNorms, the attention's four biased
    /// projections and a biased two-layer MLP.
    fn encoder(&self, n: &mut Named) {
        let (d, i, l) = (self.hidden, self.intermediate, "encoder.layers.{i}");
        n.layers("encoder layer", self.layers)
            .layer_norm(&format!("{l}.layer_norm1"), d)
            .linear(&format!("{l}.self_attn.q_proj"), d, d, true)
            .linear(&format!("{l}.self_attn.k_proj"), d, d, true)
            .linear(&format!("{l}.self_attn.v_proj"), d, d, true)
            .linear(&format!("{l}.self_attn.out_proj"), d, d, true)
            .layer_norm(&format!("{l}.layer_norm2"), d)
            .linear(&format!("{l}.mlp.fc1"), i, d, true)
            .linear(&format!("{l}.mlp.fc2"), d, i, true);
    }

    /// SigLIP's vision model named: its biased patch convolution and learned positions, its
    /// encoder, its last LayerNorm, and its attention-pooling head where `head`.
    fn siglip_named(&self, head: bool) -> Named {
        let (d, i) = (self.hidden, self.intermediate);
        let mut n = Named::default();
        n.step("patch embedding")
            .t("embeddings.patch_embedding.weight", &self.conv_shape())
            .t("embeddings.patch_embedding.bias", &[d])
            .t("embeddings.position_embedding.weight", &[self.patches, d]);
        self.encoder(&mut n);
        n.step("last norm").layer_norm("post_layernorm", d);
        if head {
            n.step("attention-pooling head")
                .t("head.probe", &[1, 1, d])
                .t("head.attention.in_proj_weight", &[3 * d, d])
                .t("head.attention.in_proj_bias", &[3 * d])
                .linear("head.attention.out_proj", d, d, true)
                .layer_norm("head.layernorm", d)
                .linear("head.mlp.fc1", i, d, true)
                .linear("head.mlp.fc2", d, i, true);
        }
        n
    }

    /// CLIP's vision model named: its patch convolution (without a bias), class embedding and
    /// learned positions (one more than the patches), LayerNorms before and after the encoder.
    fn clip_named(&self) -> Named {
        let d = self.hidden;
        let mut n = Named::default();
        n.step("patch embedding")
            .t("embeddings.class_embedding", &[d])
            .t("embeddings.patch_embedding.weight", &self.conv_shape())
            .t(
                "embeddings.position_embedding.weight",
                &[self.patches + 1, d],
            );
        n.step("first norm").layer_norm("pre_layrnorm", d);
        self.encoder(&mut n);
        n.step("last norm").layer_norm("post_layernorm", d);
        n
    }
}

/// The wrapper's ViT tower of one of `kinds`, or `None` for another kind or a rectangular image
/// or patch.
fn vit<'a>(top: &Config<'a>, kinds: &[&str], defaults: VitDefaults) -> Result<Option<Vit<'a>>> {
    vit_either(top, kinds, defaults, defaults)
}

/// `vit`, where the wrapper's class builds its tower of other sizes when it has no vision config
/// (`absent`: LLaVA's CLIP ViT-L/14-336) than the vision config's class's defaults (`given`) for
/// the keys a vision config leaves out.
fn vit_either<'a>(
    top: &Config<'a>,
    kinds: &[&str],
    given: VitDefaults,
    absent: VitDefaults,
) -> Result<Option<Vit<'a>>> {
    vit_at(top, "vision_config", kinds, given, absent)
}

/// `vit_either` of the sub-config `key` (DeepSeek-VL-Hybrid's `high_res_vision_config`).
fn vit_at<'a>(
    top: &Config<'a>,
    key: &str,
    kinds: &[&str],
    given: VitDefaults,
    absent: VitDefaults,
) -> Result<Option<Vit<'a>>> {
    let Some(v) = sub_config(top, key, kinds)? else {
        return Ok(None);
    };
    let (image, patch, hidden, intermediate, layers) = match v {
        Some(_) => given,
        None => absent,
    };
    let (Some(image), Some(patch)) = (
        square(&v, "image_size", image)?,
        square(&v, "patch_size", patch)?,
    ) else {
        return Ok(None);
    };
    Ok(Some(Vit {
        hidden: size(&v, "hidden_size", hidden)? as u128,
        intermediate: size(&v, "intermediate_size", intermediate)? as u128,
        layers: size(&v, "num_hidden_layers", layers)? as u128,
        channels: size(&v, "num_channels", 3)? as u128,
        patch: patch as u128,
        grid: (image / patch) as u128,
        patches: ((image / patch) as u128).pow(2),
        flat_patch: false,
        v,
    }))
}

/// SigLIP's sizes (`SiglipVisionConfig`).
fn siglip<'a>(top: &Config<'a>) -> Result<Option<Vit<'a>>> {
    vit(top, &["siglip_vision_model"], SIGLIP)
}

/// The activation `key` of `c` names, or `None` for one the towers do not run (the model then
/// runs no image: its towers are counted as transformers builds them).
fn activation(c: &Config, key: &str, default: &str) -> Result<Option<Act>> {
    Ok(Act::parse(&c.string(key, default)?))
}

impl Vit<'_> {
    /// The tower as the image encoders run it, under `prefix`: `image` pixels a side, with
    /// `heads` heads (which must divide its width), `eps` and `act`.
    fn runs(
        &self,
        top: &Config,
        prefix: &str,
        image: u64,
        heads: u64,
        eps: f64,
        act: Act,
    ) -> Result<VisionTower> {
        if heads == 0 || !self.hidden.is_multiple_of(heads as u128) {
            return Err(top.err(
                "vision_config.num_attention_heads",
                format!(
                    "is {heads}, which does not divide the tower's width ({})",
                    self.hidden
                ),
            ));
        }
        Ok(VisionTower {
            prefix: prefix.into(),
            image,
            patch: self.patch as u64,
            channels: self.channels as u64,
            hidden: self.hidden as u64,
            intermediate: self.intermediate as u64,
            heads,
            depth: self.layers as u64,
            eps,
            act,
        })
    }
}

/// `SiglipVisionConfig`'s defaults.
const SIGLIP: VitDefaults = (224, 16, 768, 3072, 12);

/// Fuyu's patch embedding: one biased linear map from a patch's pixels to the text width.
pub fn fuyu_patches(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let pixels = top.size("patch_size", Some(30))?.pow(2) as u128
        * top.size("num_channels", Some(3))? as u128;
    let mut n = Named::default();
    n.step("patch embedding")
        .linear("", text_hidden(top, 4096)? as u128, pixels, true);
    n.done(top, "patch_size")
}

/// The vision config of one of `kinds`, for the towers whose class counts its blocks as `depth`
/// (Qwen's, GLM-4.1V's): its attribute map, `num_hidden_layers` setting `depth`.
fn depth_vision<'a>(top: &Config<'a>, kinds: &[&str]) -> Result<Option<Option<Config<'a>>>> {
    Ok(vision(top, kinds)?.map(|v| v.map(|v| v.renamed(&[("num_hidden_layers", "depth")]))))
}

/// A 3-D patch convolution's shape, `[width, channels, time, height, width]` of a patch, or
/// `None` for a rectangular patch.
fn patches(v: &Option<Config>, patch: u64, width: u128) -> Result<Option<Vec<u128>>> {
    let (Some(patch), Some(frames)) = (
        square(v, "patch_size", patch)?,
        square(v, "temporal_patch_size", 2)?,
    ) else {
        return Ok(None);
    };
    let channels = size(v, "in_channels", 3)? as u128;
    let (p, t) = (patch as u128, frames as u128);
    Ok(Some(vec![width, channels, t, p, p]))
}

/// The wrapper's vision sub-config, where it is of one of `kinds` (or says no kind): `Ok(None)`
/// for another kind, `Ok(Some(None))` where the config has none (the class defaults hold).
fn vision<'a>(top: &Config<'a>, kinds: &[&str]) -> Result<Option<Option<Config<'a>>>> {
    sub_config(top, "vision_config", kinds)
}

/// A size of the vision config, or the class default where it has none.
fn size(v: &Option<Config>, key: &str, default: u64) -> Result<u64> {
    match v {
        Some(v) => v.size(key, Some(default)),
        None => Ok(default),
    }
}

/// A flag of a sub-config, or the class default where it has none.
fn flag(v: &Option<Config>, key: &str, default: bool) -> Result<bool> {
    match v {
        Some(v) => v.flag(key, default),
        None => Ok(default),
    }
}

/// A square size (`image_size`, `patch_size`): an integer, or two equal ones; `None` for a
/// rectangle, which the builders leave unknown.
fn square(v: &Option<Config>, key: &str, default: u64) -> Result<Option<u64>> {
    let Some(value) = v.as_ref().and_then(|v| v.get(key)) else {
        return Ok(Some(default));
    };
    let v = v.as_ref().expect("a value read from it");
    match value.as_array().map(|a| a.as_slice()) {
        Some([a, b]) if a == b => v.positive(key, a).map(Some),
        Some(_) => Ok(None),
        None => v.size(key, Some(default)).map(Some),
    }
}

/// Two positive sizes under `key` (the class's `default` where the config has no such key).
fn pair(v: Option<&Config>, key: &str, default: [u64; 2]) -> Result<[u128; 2]> {
    match v.and_then(|c| c.get(key).map(|x| (c, x))) {
        None => Ok(default.map(u128::from)),
        Some((c, x)) => {
            two(c, key, x)?.ok_or_else(|| c.err(key, format!("must be two sizes, as {default:?}")))
        }
    }
}

/// `x` as two positive sizes: `None` where it is not an array of two.
fn two(c: &Config, key: &str, x: &serde_json::Value) -> Result<Option<[u128; 2]>> {
    let Some([a, b]) = x.as_array().map(|a| a.as_slice()) else {
        return Ok(None);
    };
    Ok(Some([
        c.positive(key, a)? as u128,
        c.positive(key, b)? as u128,
    ]))
}

/// A placeholder id under `key` or its attribute_map name `alias`, else the class's `default`.
fn token_id(top: &Config, key: &str, alias: &str, default: u64) -> Result<u64> {
    Ok(match top.opt_size(key)? {
        Some(id) => id,
        None => top.opt_size(alias)?.unwrap_or(default),
    })
}

/// The base of a vision config's 2-D rotary frequencies: `rope_parameters.rope_theta`, else
/// `rope_theta` (which the config class moves there), else 10,000 (Llama 4's and Pixtral's).
fn vision_theta(v: &Option<Config>) -> Result<f64> {
    match v {
        Some(c) => match c.detached("rope_parameters")? {
            Some(r) => r.float("rope_theta", 10_000.0),
            None => c.float("rope_theta", 10_000.0),
        },
        None => Ok(10_000.0),
    }
}

/// Whether `heads` split a tower `hidden` wide into heads a 2-D rotary table fills: whole heads
/// whose dims are a multiple of 4 (a quarter by each axis, twice).
fn rotary_heads(hidden: u128, heads: u64) -> bool {
    heads > 0
        && hidden.is_multiple_of(u128::from(heads))
        && (hidden / u128::from(heads)).is_multiple_of(4)
}

/// The text model's width, for a projector into it.
fn text_hidden(top: &Config, default: u64) -> Result<u64> {
    top.detached("text_config")?
        .map(|t| t.size("hidden_size", Some(default)))
        .transpose()
        .map(|h| h.unwrap_or(default))
}

/// The language model's width where a wrapper's config may hold its keys at the top level
/// (`text_at_top`): its `text_config`'s, else the top level's.
fn flat_text_hidden(top: &Config, default: u64) -> Result<u64> {
    match top.detached("text_config")? {
        Some(t) => t.size("hidden_size", Some(default)),
        None => top.size("hidden_size", Some(default)),
    }
}

/// Llama 4's and Mllama's encoder layers, `count` of them at `l`: LayerNorms, the attention's four
/// projections (biased where `bias`) and a biased two-layer MLP, `(width, intermediate)`.
fn llama_vision_layers<'n>(
    n: &'n mut Named,
    title: &str,
    l: &str,
    count: u128,
    (d, i): (u128, u128),
    bias: bool,
) -> Step<'n> {
    n.layers(title, count)
        .layer_norm(&format!("{l}.input_layernorm"), d)
        .linear(&format!("{l}.self_attn.q_proj"), d, d, bias)
        .linear(&format!("{l}.self_attn.k_proj"), d, d, bias)
        .linear(&format!("{l}.self_attn.v_proj"), d, d, bias)
        .linear(&format!("{l}.self_attn.o_proj"), d, d, bias)
        .layer_norm(&format!("{l}.post_attention_layernorm"), d)
        .linear(&format!("{l}.mlp.fc1"), i, d, true)
        .linear(&format!("{l}.mlp.fc2"), d, i, true)
}

/// A projector of one linear map (`name`, biased where `bias`) from a tower of `kind`'s
/// `vision_output_dim` to the text width (`text`, the class's default where the config has no
/// text config): Llama 4's and Mllama's.
fn output_projector(
    top: &Config,
    kind: &str,
    (name, bias): (&str, bool),
    text: u64,
) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = vision(top, &[kind])? else {
        return Ok(None);
    };
    let out = size(&v, "vision_output_dim", 7680)? as u128;
    let mut n = Named::default();
    n.step("projector")
        .linear(name, text_hidden(top, text)? as u128, out, bias);
    n.done(top, "text_config")
}

/// Phi-4-multimodal's image embedder (`embed_tokens_extend.image_embed.`): a SigLIP tower (its
/// biased patch convolution and learned positions, encoder layers, a LayerNorm after, and an
/// attention-pooling head that transformers builds though the embedder reads an earlier
/// layer), the two learned separators of global and cropped features, and a biased two-layer
/// projection to the text width.
pub fn phi4_images(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(t) = vit(top, &["phi4_multimodal_vision"], (448, 14, 1152, 4304, 27))? else {
        return Ok(None);
    };
    let d = t.hidden;
    let text = top.size("hidden_size", Some(3072))? as u128;
    let mut n = t.siglip_named(true).under("img_processor.");
    n.step("separators")
        .t("global_img_feature_extensor", &[1, 1, d])
        .t("sub_img_feature_extensor", &[1, 1, 1, d]);
    n.step("projection")
        .linear("img_projection_up", text, d, true)
        .linear("img_projection_down", text, text, true);
    n.done(top, "vision_config")
}

/// Phi-4-multimodal's audio embedder (`embed_tokens_extend.audio_embed.`): a Conformer encoder
/// (the features' stored mean and inverse deviation; NeMo's subsampling, a convolution and
/// then a depthwise and a pointwise one per further halving of time, into a linear map; a
/// relative-position bias table; and its blocks: a feed-forward half-step either side of
/// attention and a GLU convolution module), and two biased two-layer projections to the text
/// width (for speech alone, and for speech beside an image).
pub fn phi4_audio(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(a) = sub_config(top, "audio_config", &["phi4_multimodal_audio"])? else {
        return Ok(None);
    };
    let n = |key, default| size(&a, key, default).map(u128::from);
    let (h, i, heads) = (
        n("hidden_size", 1024)?,
        n("intermediate_size", 1536)?,
        n("num_attention_heads", 16)?,
    );
    let (ext, dsep) = (
        n("ext_pw_out_channel", 1024)?,
        n("depthwise_separable_out_channel", 1024)?,
    );
    let (mult, kernel) = (n("depthwise_multiplier", 1)?, n("kernel_size", 3)?);
    let (input, channels) = (n("input_size", 80)?, n("nemo_conv_channels", 1024)?);
    // Halvings of time: int(log2(time_reduction)); the features' width after them.
    let halvings = u128::from(n("time_reduction", 8)?.ilog2());
    let mut width = input;
    for _ in 0..halvings {
        width = width.div_ceil(2);
    }
    let distance = n("bias_max_distance", 1000)?;
    let symmetric = flag(&a, "bias_symmetric", false)?;
    let text = top.size("hidden_size", Some(3072))? as u128;
    let down = n("downsample_rate", 1)?;
    let n_blocks = n("num_blocks", 24)?;

    let wh = heads * (h / heads);
    let buckets = if symmetric { distance } else { 2 * distance };
    let e = "encoder";
    let mut n = Named::default();
    // NeMo's subsampling: a convolution, then a depthwise and a pointwise one per further
    // halving (a Sequential with an activation after each pair: indexes 3k - 1 and 3k).
    let mut step = n
        .step("features in")
        .t(&format!("{e}.encoder_embedding.global_mean"), &[input])
        .t(&format!("{e}.encoder_embedding.global_invstd"), &[input])
        .linear_shaped(&format!("{e}.embed.conv.0"), &[channels, 1, 3, 3], true);
    for k in 1..halvings {
        step = step
            .linear_shaped(
                &format!("{e}.embed.conv.{}", 3 * k - 1),
                &[channels, 1, 3, 3],
                true,
            )
            .linear_shaped(
                &format!("{e}.embed.conv.{}", 3 * k),
                &[channels, channels, 1, 1],
                true,
            );
    }
    step.linear(&format!("{e}.embed.out"), h, channels * width, true)
        .t(
            &format!("{e}.relative_attention_bias_layer.bias_values.weight"),
            &[buckets, heads],
        );
    let at = |name: &str| format!("{e}.encoders.{{i}}.{name}");
    let mut step = n.layers("conformer block", n_blocks);
    for ff in ["feed_forward_in", "feed_forward_out"] {
        step = step
            .layer_norm(&at(&format!("{ff}.layer_norm")), h)
            .linear(&at(&format!("{ff}.gate_up_proj")), 2 * i, h, true)
            .linear(&at(&format!("{ff}.down_proj")), h, i, true);
    }
    step.layer_norm(&at("layer_norm_att"), h)
        .linear(&at("self_attn.q_proj"), wh, h, true)
        .linear(&at("self_attn.k_proj"), wh, h, true)
        .linear(&at("self_attn.v_proj"), wh, h, true)
        .linear(&at("self_attn.o_proj"), h, wh, true)
        .layer_norm(&at("conv.layer_norm"), h)
        .linear_shaped(&at("conv.glu.ext_pw_conv_1d"), &[2 * ext, h, 1], true)
        .t(&at("conv.glu.b1"), &[1, ext, 1])
        .t(&at("conv.glu.b2"), &[1, ext, 1])
        .linear_shaped(
            &at("conv.dw_sep_conv_1d.dw_conv"),
            &[h * mult, 1, kernel],
            true,
        )
        .linear_shaped(
            &at("conv.dw_sep_conv_1d.pw_conv"),
            &[dsep, h * mult, 1],
            true,
        )
        .linear_shaped(&at("conv.ext_pw_conv_1d"), &[ext, h, 1], true)
        .layer_norm(&at("layer_norm"), h);
    n.step("projections")
        .linear("up_proj_for_speech", text, h * down, true)
        .linear("down_proj_for_speech", text, text, true)
        .linear("up_proj_for_vision_speech", text, h * down, true)
        .linear("down_proj_for_vision_speech", text, text, true);
    n.done(top, "audio_config")
}

/// A sub-config `key` of one of `kinds` (or saying no kind): `Ok(None)` for another kind,
/// `Ok(Some(None))` where the config has none (the class defaults hold).
fn sub_config<'a>(
    top: &Config<'a>,
    key: &str,
    kinds: &[&str],
) -> Result<Option<Option<Config<'a>>>> {
    let v = top.detached(key)?;
    if let Some(v) = &v {
        if let Some(kind) = v.opt_string("model_type")? {
            if !kinds.contains(&kind.as_str()) {
                return Ok(None);
            }
        }
    }
    Ok(Some(v))
}

/// A part the wrapper's config does not build (Gemma 4 without audio, a pooler without
/// weights): no tensors, so not listed.
fn not_built() -> Result<Option<Vec<TowerBlock>>> {
    Ok(Some(Vec::new()))
}

/// Mllama's vision encoder: its patch convolution (without a bias) and class embedding; learned
/// positions, gated, with a table per aspect ratio over every tile's patches; a gated embedding
/// per tile before the encoder and after it; LayerNorms before and after; the local encoder's
/// layers, and the global encoder's with two gates each (attention without biases, LayerNorms,
/// a biased two-layer MLP).
pub fn mllama_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(t) = vit(top, &["mllama_vision_model"], MLLAMA_VISION)? else {
        return Ok(None);
    };
    let (d, i) = (t.hidden, t.intermediate);
    let global = size(&t.v, "num_global_layers", 8)? as u128;
    let tiles = size(&t.v, "max_num_tiles", 4)?;
    // One embedding row per supported aspect ratio, and one for none.
    let ratios = aspect_ratios(&t.v, tiles)? as u128 + 1;
    let (tiles, patches) = (tiles as u128, t.patches + 1);
    let mut n = Named::default();
    n.step("patch embedding")
        .t("patch_embedding.weight", &t.conv_shape())
        .t("class_embedding", &[d])
        .t("gated_positional_embedding.embedding", &[patches, d])
        .t("gated_positional_embedding.gate", &[1])
        .t(
            "gated_positional_embedding.tile_embedding.weight",
            &[ratios, tiles * patches * d],
        )
        .t(
            "pre_tile_positional_embedding.embedding.weight",
            &[ratios, tiles * d],
        )
        .t("pre_tile_positional_embedding.gate", &[1])
        .layer_norm("layernorm_pre", d);
    let local = "transformer.layers.{i}";
    llama_vision_layers(
        &mut n,
        "local encoder layer",
        local,
        t.layers,
        (d, i),
        false,
    );
    n.step("tile positions after")
        .layer_norm("layernorm_post", d)
        .t(
            "post_tile_positional_embedding.embedding.weight",
            &[ratios, tiles * d],
        )
        .t("post_tile_positional_embedding.gate", &[1]);
    let l = "global_transformer.layers.{i}";
    llama_vision_layers(&mut n, "global encoder layer", l, global, (d, i), false)
        .t(&format!("{l}.gate_attn"), &[1])
        .t(&format!("{l}.gate_ffn"), &[1]);
    n.done(top, "vision_config")
}

/// `MllamaVisionConfig`'s defaults.
const MLLAMA_VISION: VitDefaults = (448, 14, 1280, 5120, 32);

/// How many aspect ratios Mllama's tiles come in: `supported_aspect_ratios`, a list of
/// [width, height] pairs, or the class's 8, which it allows only with its 4 tiles.
fn aspect_ratios(v: &Option<Config>, tiles: u64) -> Result<u64> {
    let key = "supported_aspect_ratios";
    let given = match v {
        Some(v) => v.list_any(
            key,
            |p| p.as_array().map(|_| ()),
            "a [width, height] pair of tile counts",
        )?,
        None => None,
    };
    match (given, v) {
        (Some(list), _) => Ok(list.len() as u64),
        (None, Some(v)) if tiles != 4 => Err(v.err(
            key,
            format!("is absent, so the class's eight ratios of up to 4 tiles hold, but max_num_tiles is {tiles}; give the ratios or 4 tiles"),
        )),
        (None, _) => Ok(8),
    }
}

/// Mllama's projector: the vision output (its chosen layers' states side by side) mapped to the
/// text width, with a bias.
pub fn mllama_projector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    output_projector(top, "mllama_vision_model", ("", true), 4096)
}

/// GOT-OCR 2's vision config kinds: its own, and PP-Chart2Table's (the same class's defaults).
const GOT_OCR2_VISION: &[&str] = &["got_ocr2_vision", "pp_chart2table_vision"];

/// GOT-OCR 2's vision tower, SAM's image encoder: its biased patch convolution and learned
/// positions; encoder layers (LayerNorms, a stacked QKV projection, the output projection, a
/// biased two-layer MLP) with a table of relative positions per axis, over a window or, in the
/// global layers, the whole grid; and the neck's two bias-free convolutions, each followed by a
/// LayerNorm.
pub fn got_ocr2_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    match sam(top, "vision_config", GOT_OCR2_VISION)? {
        Some(n) => n.done(top, "vision_config"),
        None => Ok(None),
    }
}

/// SAM's vision encoder, under the sub-config `key` of one of `kinds` (SamVisionConfig's
/// defaults, which GOT-OCR 2's are too).
fn sam(top: &Config, key: &str, kinds: &[&str]) -> Result<Option<Named>> {
    let defaults = (1024, 16, 768, 0, 12);
    let Some(t) = vit_at(top, key, kinds, defaults, defaults)? else {
        return Ok(None);
    };
    let v = &t.v;
    let d = t.hidden;
    let heads = size(v, "num_attention_heads", 12)? as u128;
    let mlp = size(v, "mlp_dim", 3072)? as u128;
    let out = size(v, "output_channels", 256)? as u128;
    // A window of 0 is none: that layer attends over the whole grid.
    let window = match v {
        Some(v) => v.count("window_size", 14)?,
        None => 14,
    } as u128;
    let mut global = match v {
        Some(v) => v.list_any("global_attn_indexes", |x| x.as_u64(), "a layer index")?,
        None => None,
    }
    .unwrap_or_else(|| vec![2, 5, 8, 11]);
    global.sort_unstable();
    global.dedup();
    let qkv_bias = flag(v, "qkv_bias", true)?;
    let rel = flag(v, "use_rel_pos", true)?;
    let (c, p, hd) = (t.channels, t.patch, d / heads);
    // Layers over the whole grid: the global ones, or all of them without a window (0).
    let whole = |i: u64| window == 0 || global.binary_search(&i).is_ok();
    let layers = |f: &dyn Fn(u64) -> bool| crate::layers::LayerSet::from_fn(t.layers as u64, f);
    let (whole_set, windowed_set) = (layers(&whole), layers(&|i| !whole(i)));
    let l = "layers.{i}";
    let mut n = Named::default();
    let step =
        n.step("patch embedding")
            .linear_shaped("patch_embed.projection", &[d, c, p, p], true);
    if flag(v, "use_abs_pos", true)? {
        step.t("pos_embed", &[1, t.grid, t.grid, d]);
    }
    n.layers("encoder layer", t.layers)
        .layer_norm(&format!("{l}.layer_norm1"), d)
        .linear(&format!("{l}.attn.qkv"), 3 * d, d, qkv_bias)
        .linear(&format!("{l}.attn.proj"), d, d, true)
        .layer_norm(&format!("{l}.layer_norm2"), d)
        .linear(&format!("{l}.mlp.lin1"), mlp, d, true)
        .linear(&format!("{l}.mlp.lin2"), d, mlp, true);
    // A table of relative positions per axis, over the window's patches each way, or the whole
    // grid's in the global layers.
    if rel {
        for (title, layers, span) in [
            ("windowed positions", windowed_set, window),
            ("global positions", whole_set, t.grid),
        ] {
            // (No window: no windowed layers, whose block is dropped.)
            let rows = (2 * span).saturating_sub(1);
            n.some_layers(title, layers)
                .t(&format!("{l}.attn.rel_pos_h"), &[rows, hd])
                .t(&format!("{l}.attn.rel_pos_w"), &[rows, hd]);
        }
    }
    sam_neck(n.step("neck"), "neck.", d, out);
    Ok(Some(n))
}

/// SAM's neck: a bias-free 1×1 convolution from `d` to `out` channels and a 3×3 one, each
/// followed by a LayerNorm.
fn sam_neck<'n>(step: Step<'n>, at: &str, d: u128, out: u128) -> Step<'n> {
    step.t(&format!("{at}conv1.weight"), &[out, d, 1, 1])
        .layer_norm(&format!("{at}layer_norm1"), out)
        .t(&format!("{at}conv2.weight"), &[out, out, 3, 3])
        .layer_norm(&format!("{at}layer_norm2"), out)
}

/// DeepSeek-VL-Hybrid's high-resolution tower: SAM's encoder and neck under `vision_encoder.`.
pub fn deepseek_vl_hybrid_high_res(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    match sam(top, "high_res_vision_config", HIGH_RES)? {
        Some(n) => n
            .under("vision_encoder.")
            .done(top, "high_res_vision_config"),
        None => Ok(None),
    }
}

/// DeepSeek-VL-Hybrid's second neck after SAM's tower (its class keeps one apart).
pub fn deepseek_vl_hybrid_neck(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = sub_config(top, "high_res_vision_config", HIGH_RES)? else {
        return Ok(None);
    };
    let d = size(&v, "hidden_size", 768)? as u128;
    let out = size(&v, "output_channels", 256)? as u128;
    let mut n = Named::default();
    sam_neck(n.step("neck"), "", d, out);
    n.done(top, "high_res_vision_config")
}

/// DeepSeek-VL-Hybrid's high-resolution projection: two bias-free stride-2 3×3 convolutions
/// doubling SAM's output channels twice.
pub fn deepseek_vl_hybrid_proj(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = sub_config(top, "high_res_vision_config", HIGH_RES)? else {
        return Ok(None);
    };
    let out = size(&v, "output_channels", 256)? as u128;
    let mut n = Named::default();
    n.step("projection")
        .t("conv1.weight", &[2 * out, out, 3, 3])
        .t("conv2.weight", &[4 * out, 2 * out, 3, 3]);
    n.done(top, "high_res_vision_config")
}

/// DeepSeek-VL-Hybrid's learned weight of the high-resolution features, one number; the part's
/// name is the tensor's.
pub fn deepseek_vl_hybrid_alpha(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    if sub_config(top, "high_res_vision_config", HIGH_RES)?.is_none() {
        return Ok(None);
    }
    let mut n = Named::default();
    n.step("weight").t("", &[1]);
    n.done(top, "high_res_vision_config")
}

/// DeepSeek-VL-Hybrid's aligner: the SigLIP features and the high-resolution ones (four times
/// SAM's output channels) each mapped to half the text width (biased), joined, GELU, and a
/// biased map of the text width.
pub fn deepseek_vl_hybrid_aligner(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let (Some(s), Some(v)) = (
        vit_either(top, &["siglip_vision_model"], SIGLIP, SIGLIP)?,
        sub_config(top, "high_res_vision_config", HIGH_RES)?,
    ) else {
        return Ok(None);
    };
    let out = size(&v, "output_channels", 256)? as u128;
    let text = text_hidden(top, 4096)? as u128;
    let mut n = Named::default();
    n.step("aligner")
        .linear("vision_proj", text / 2, s.hidden, true)
        .linear("high_res_vision_proj", text / 2, 4 * out, true)
        .linear("proj", text, text, true);
    n.done(top, "text_config")
}

const HIGH_RES: &[&str] = &["sam_vision_model"];

/// GOT-OCR 2's projector: two bias-free 3×3 convolutions, from the tower's output channels to
/// twice as many and then to the text width, and a biased linear map at the text width.
pub fn got_ocr2_projector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = vision(top, GOT_OCR2_VISION)? else {
        return Ok(None);
    };
    let out = size(&v, "output_channels", 256)? as u128;
    // Qwen2's default width: a wrapper's config always holds its `text_config`.
    let text = text_hidden(top, 4096)? as u128;
    let mut n = Named::default();
    n.step("projector")
        .t("conv_upsampler1.weight", &[2 * out, out, 3, 3])
        .t("conv_upsampler2.weight", &[text, 2 * out, 3, 3])
        .linear("multimodal_projector", text, text, true);
    n.done(top, "text_config")
}

/// Emu3's VQ-VAE image tokenizer (`Emu3VQVAEConfig`), every tensor its checkpoint holds under
/// `vqmodel.`, the temporal blocks' BatchNorm running statistics among them: an encoder
/// (a convolution in, ResNet blocks and attention at each resolution with a downsampling
/// convolution between, a middle block, a GroupNorm and a convolution out to the latent, then
/// temporal downsampling convolutions and ResNet blocks); the codebook and the convolutions
/// either side of it; and a decoder that mirrors the encoder with one more ResNet block per
/// resolution and norms conditioned on the quantized latent (`SpatialNorm`).
pub fn emu3_vqvae(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let v = top.detached("vq_config")?;
    if let Some(v) = &v {
        if v.opt_string("model_type")?
            .is_some_and(|k| k != "emu3_vqgan")
        {
            return Ok(None);
        }
    }
    let n = |key, default| size(&v, key, default).map(u128::from);
    let (base, blocks, embed) = (
        n("base_channels", 256)?,
        n("num_res_blocks", 2)?,
        n("embed_dim", 4)?,
    );
    let (latent, hidden) = (n("latent_channels", 4)?, n("hidden_size", 1024)?);
    let levels =
        |key, default: &[u64], item: &dyn Fn(u64) -> bool, expect: &str| -> Result<Vec<u64>> {
            let given = match &v {
                Some(v) => v.list_any(key, |x| x.as_u64().filter(|&n| item(n)), expect)?,
                None => None,
            };
            Ok(given.unwrap_or_else(|| default.to_vec()))
        };
    // Each resolution's channels (base × factor) a size like any other, so no sum overflows.
    let most = crate::config::MAX_SIZE / base as u64;
    let mult: Vec<u128> = levels(
        "channel_multiplier",
        &[1, 2, 2, 4],
        &|m| m > 0 && m <= most,
        &format!(
            "a positive factor of at most {most}, so that base_channels × it stays within 2^28"
        ),
    )?
    .into_iter()
    .map(u128::from)
    .collect();
    let attn_at = levels("attn_resolutions", &[3], &|_| true, "a resolution's index")?;
    let (Some(&first), Some(&last)) = (mult.first(), mult.last()) else {
        let v = v.as_ref().expect("an empty list was read from it");
        return Err(v.err(
            "channel_multiplier",
            "is empty; it needs one factor per resolution",
        ));
    };
    let double = flag(&v, "double_latent", false)?;
    // Halvings of the frame count: int(log2(factor)) in the class.
    let factor = n("temporal_downsample_factor", 4)?;
    let halvings = u128::from(factor.ilog2());

    let (hidden, embed, codebook) = (hidden, embed, n("codebook_size", 32768)?);
    let (in_channels, out_channels) = (n("in_channels", 3)?, n("out_channels", 3)?);
    let out = if double { 2 * latent } else { latent };
    let mut vq = Named::default();
    let set = |from: u128, to: u128| crate::layers::LayerSet::range(from as u64, to as u64);

    // The encoder: a convolution in, ResNet blocks (and attention where `attn_resolutions`
    // says) at each resolution with a downsampling convolution between, a middle block, a
    // GroupNorm and a convolution out to the latent, then temporal downsampling and ResNet
    // blocks. Each resolution's first block changes the channels (and holds a 1 × 1 shortcut
    // where it does); the others, `{i}` over them, keep them.
    let e = "encoder";
    vq.step("encoder in")
        .linear_shaped(&format!("{e}.conv_in"), &[base, in_channels, 3, 3], true);
    let mut c = base;
    for (level, &m) in mult.iter().enumerate() {
        let (bm, at) = (base * m, format!("{e}.down_block.down.{level}"));
        resnet(
            vq.step(&format!("encoder level {level}")),
            &format!("{at}.block.0"),
            (c, bm),
            None,
        );
        resnet(
            vq.some_layers(&format!("encoder level {level} blocks"), set(1, blocks)),
            &format!("{at}.block.{{i}}"),
            (bm, bm),
            None,
        );
        c = bm;
        if attn_at.contains(&(level as u64)) {
            let step = vq.layers(&format!("encoder level {level} attention"), blocks);
            attention(
                step.layer_norm(&format!("{at}.attn_norms.{{i}}"), c),
                &format!("{at}.attn.{{i}}"),
                hidden,
            );
        }
        if level + 1 != mult.len() {
            vq.step(&format!("encoder level {level} downsampling"))
                .linear_shaped(&format!("{at}.downsample.conv"), &[c, c, 3, 3], true);
        }
    }
    middle(&mut vq, "encoder", e, base * last, hidden, None);
    vq.step("encoder out")
        .layer_norm(&format!("{e}.norm_out"), base * last)
        .linear_shaped(&format!("{e}.conv_out"), &[out, base * last, 3, 3], true);
    vq.layers("encoder temporal downsampling", halvings)
        .linear_shaped(
            &format!("{e}.time_conv.{{i}}.conv.conv"),
            &[out, out, 4, 3, 3],
            true,
        );
    temporal(
        vq.layers("encoder temporal blocks", blocks),
        &format!("{e}.time_res_stack.{{i}}"),
        out,
    );

    // The codebook and the convolutions either side of it.
    vq.step("codebook")
        .linear_shaped("quant_conv.conv", &[embed, latent, 3, 1, 1], true)
        .t("quantize.embedding.weight", &[codebook, embed])
        .linear_shaped("post_quant_conv.conv", &[latent, embed, 3, 1, 1], true);

    // The decoder mirrors the encoder with one more ResNet block per resolution, its norms
    // conditioned on the quantized latent (`SpatialNorm`).
    let d = "decoder";
    let q = Some(embed);
    temporal(
        vq.layers("decoder temporal blocks", blocks),
        &format!("{d}.time_res_stack.{{i}}"),
        latent,
    );
    vq.layers("decoder temporal upsampling", halvings)
        .linear_shaped(
            &format!("{d}.time_conv.{{i}}.conv.conv"),
            &[latent, latent, 3, 3, 3],
            true,
        );
    vq.step("decoder in").linear_shaped(
        &format!("{d}.conv_in"),
        &[base * last, latent, 3, 3],
        true,
    );
    middle(&mut vq, "decoder", d, base * last, hidden, q);
    let mut c = base * last;
    for (level, &m) in mult.iter().enumerate().rev() {
        let (bm, at) = (base * m, format!("{d}.up_block.up.{level}"));
        resnet(
            vq.step(&format!("decoder level {level}")),
            &format!("{at}.block.0"),
            (c, bm),
            q,
        );
        resnet(
            vq.some_layers(&format!("decoder level {level} blocks"), set(1, blocks + 1)),
            &format!("{at}.block.{{i}}"),
            (bm, bm),
            q,
        );
        c = bm;
        if attn_at.contains(&(level as u64)) {
            let step = vq.layers(&format!("decoder level {level} attention"), blocks + 1);
            attention(
                norm(step, &format!("{at}.attn_norms.{{i}}"), c, q),
                &format!("{at}.attn.{{i}}"),
                hidden,
            );
        }
        if level != 0 {
            vq.step(&format!("decoder level {level} upsampling"))
                .linear_shaped(&format!("{at}.upsample.conv"), &[c, c, 3, 3], true);
        }
    }
    let step = vq.step("decoder out");
    norm(step, &format!("{d}.norm_out"), base * first, q).linear_shaped(
        &format!("{d}.conv_out"),
        &[out_channels, base * first, 3, 3],
        true,
    );
    vq.done(top, "vq_config")
}

/// A VQ-VAE norm: a GroupNorm, conditioned on the quantized latent (`embed` wide) where given:
/// its scale and shift then 1 × 1 convolutions of it (`SpatialNorm`).
fn norm<'n>(step: Step<'n>, name: &str, c: u128, embed: Option<u128>) -> Step<'n> {
    match embed {
        None => step.layer_norm(name, c),
        Some(e) => step
            .layer_norm(&format!("{name}.norm_layer"), c)
            .linear_shaped(&format!("{name}.conv_y"), &[c, e, 1, 1], true)
            .linear_shaped(&format!("{name}.conv_b"), &[c, e, 1, 1], true),
    }
}

/// A VQ-VAE ResNet block from `i` to `o` channels: norm, 3 × 3 convolution, twice; a 1 × 1
/// shortcut where the channels change.
fn resnet<'n>(step: Step<'n>, at: &str, (i, o): (u128, u128), embed: Option<u128>) -> Step<'n> {
    let step = norm(step, &format!("{at}.norm1"), i, embed).linear_shaped(
        &format!("{at}.conv1"),
        &[o, i, 3, 3],
        true,
    );
    let step = norm(step, &format!("{at}.norm2"), o, embed).linear_shaped(
        &format!("{at}.conv2"),
        &[o, o, 3, 3],
        true,
    );
    match i != o {
        true => step.linear_shaped(&format!("{at}.nin_shortcut"), &[o, i, 1, 1], true),
        false => step,
    }
}

/// A VQ-VAE attention block's four biased projections, `hidden` wide.
fn attention<'n>(step: Step<'n>, at: &str, hidden: u128) -> Step<'n> {
    ["q_proj", "k_proj", "v_proj", "out_proj"]
        .iter()
        .fold(step, |s, p| {
            s.linear(&format!("{at}.{p}"), hidden, hidden, true)
        })
}

/// A VQ-VAE middle block: ResNet, attention (after its norm), ResNet, at `c` channels.
fn middle(vq: &mut Named, side: &str, at: &str, c: u128, hidden: u128, embed: Option<u128>) {
    let m = format!("{at}.middle_block");
    let step = resnet(
        vq.step(&format!("{side} middle")),
        &format!("{m}.block_1"),
        (c, c),
        embed,
    );
    let step = attention(
        norm(step, &format!("{m}.attn_norm"), c, embed),
        &format!("{m}.attn_1"),
        hidden,
    );
    resnet(step, &format!("{m}.block_2"), (c, c), embed);
}

/// A temporal ResNet block at `c` channels: BatchNorm (its scale, shift, running mean and
/// variance and batch counter) and a 3 × 3 × 3 convolution, twice.
fn temporal<'n>(step: Step<'n>, at: &str, c: u128) -> Step<'n> {
    ["1", "2"].iter().fold(step, |s, k| {
        s.layer_norm(&format!("{at}.norm{k}"), c)
            .t(&format!("{at}.norm{k}.running_mean"), &[c])
            .t(&format!("{at}.norm{k}.running_var"), &[c])
            .t(&format!("{at}.norm{k}.num_batches_tracked"), &[])
            .linear_shaped(&format!("{at}.conv{k}.conv"), &[c, c, 3, 3, 3], true)
    })
}

#[cfg(test)]
mod tests {
    use crate::families::load_json;

    fn parts(json: &str) -> crate::Result<Vec<Option<u64>>> {
        let spec = load_json("config.json", json, "t", false)?;
        Ok(spec.towers.iter().map(|p| p.params()).collect())
    }

    /// A tower of a kind anatomy does not know, or of a rectangular image, is named and left
    /// uncounted; the model itself still loads.
    #[test]
    fn unknown_or_rectangular_towers_are_uncounted() {
        let other = r#"{"model_type": "gemma3", "text_config": {}, "vision_config": {"model_type": "clip_vision_model"}}"#;
        assert_eq!(parts(other).unwrap(), [None, None]);
        let wide = r#"{"model_type": "llama4", "text_config": {}, "vision_config": {"image_size": [448, 224]}}"#;
        assert_eq!(parts(wide).unwrap(), [None, Some(39_321_600)]);
    }

    /// Gemma 3n's vision tower is counted from timm's definition of its one MobileNetV5 encoder;
    /// another architecture, or `model_args` that change it, is listed uncounted.
    #[test]
    fn gemma3n_counts_only_the_mobilenet_it_knows() {
        let vision = |v: &str| {
            let json = format!(
                r#"{{"model_type": "gemma3n", "text_config": {{}}, "vision_config": {v}}}"#
            );
            let spec = crate::families::load_json("config.json", &json, "t", false).unwrap();
            spec.towers
                .iter()
                .find(|p| p.what == "vision tower")
                .map(|p| p.params())
                .unwrap()
        };
        assert!(vision("{}").is_some());
        assert_eq!(
            vision("{}"),
            vision(r#"{"architecture": "mobilenetv5_300m_enc", "model_args": null}"#)
        );
        assert_eq!(vision(r#"{"architecture": "mobilenetv5_base"}"#), None);
        assert_eq!(vision(r#"{"model_args": {"num_features": 1024}}"#), None);
    }

    /// A Gemma 4 tower the wrapper's config leaves out is not built, so not listed; one of
    /// another kind is listed uncounted. So with Gemma 4 unified's embedders.
    #[test]
    fn gemma4_lists_the_towers_its_config_has() {
        let spec =
            |json: &str| crate::families::load_json("config.json", json, "t", false).unwrap();
        let vision = spec(r#"{"model_type": "gemma4", "text_config": {}, "vision_config": {}}"#);
        let listed: Vec<_> = vision
            .towers
            .iter()
            .map(|p| (p.what.as_str(), p.params().is_some()))
            .collect();
        assert_eq!(listed, [("vision tower", true), ("vision embedder", true)]);
        let other = spec(
            r#"{"model_type": "gemma4", "text_config": {}, "audio_config": {"model_type": "whisper"}}"#,
        );
        assert_eq!(other.towers.len(), 2);
        assert!(other.towers.iter().all(|p| p.params().is_none()));
        let unified = spec(r#"{"model_type": "gemma4_unified", "text_config": {}}"#);
        assert!(unified.towers.is_empty());
        let audio = spec(
            r#"{"model_type": "gemma4_unified", "text_config": {}, "audio_config": {}, "vision_config": {"model_type": "siglip"}}"#,
        );
        let listed: Vec<_> = audio
            .towers
            .iter()
            .map(|p| (p.what.as_str(), p.params().is_some()))
            .collect();
        assert_eq!(
            listed,
            [
                ("patch embedder", false),
                ("vision embedder", false),
                ("audio embedder", true)
            ]
        );
    }

    /// Sizes too large to count are an error naming the tower's config, not a wrapped number.
    #[test]
    fn a_tower_too_large_to_count_is_an_error() {
        let huge = r#"{"model_type": "gemma3", "text_config": {}, "vision_config": {"hidden_size": 268435456, "intermediate_size": 268435456, "num_hidden_layers": 268435456}}"#;
        let e = parts(huge).unwrap_err().to_string();
        assert!(e.contains("vision_config") && e.contains("64 bits"), "{e}");
        let bad =
            r#"{"model_type": "gemma3", "text_config": {}, "vision_config": {"patch_size": 0}}"#;
        let e = parts(bad).unwrap_err().to_string();
        assert!(e.contains("vision_config.patch_size"), "{e}");
    }

    /// Mllama's aspect ratios are a list of pairs; without one, the class's eight hold only with
    /// its 4 tiles, as its config refuses otherwise.
    #[test]
    fn mllama_aspect_ratios_are_a_list_or_the_class_default() {
        let with = |vision: &str| {
            format!(r#"{{"model_type": "mllama", "text_config": {{}}, "vision_config": {vision}}}"#)
        };
        let two = parts(&with(r#"{"supported_aspect_ratios": [[1, 1], [1, 2]]}"#)).unwrap();
        let eight = parts(&with("{}")).unwrap();
        assert!(two[0] < eight[0], "{two:?} {eight:?}");
        let e = parts(&with(r#"{"supported_aspect_ratios": "wide"}"#)).unwrap_err();
        assert!(e.to_string().contains("supported_aspect_ratios"), "{e}");
        let e = parts(&with(r#"{"max_num_tiles": 2}"#)).unwrap_err();
        assert!(e.to_string().contains("max_num_tiles is 2"), "{e}");
    }
}
