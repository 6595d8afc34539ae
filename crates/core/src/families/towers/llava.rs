//! The LLaVA-style wrappers' parts: a ViT (CLIP, SigLIP, SigLIP2, Pixtral, InternViT) beside the
//! language model, and a projector into it (LLaVA and its variants, Mistral 3, LightOnOCR,
//! Idefics3, InternVL, Command A Vision, Aya Vision, LFM2-VL, LLaVA-OneVision-1.5).

use super::gemma::siglip_tower;
use super::*;
use crate::spec::{
    Act, AnyRes, AyaVision, DeepseekVlVision, Idefics3Vision, ImageEncoder, ImageInput,
    InternVlVision, Llava, LlavaNext, LlavaOnevision, PixtralVision, Placeholders, VisionTower,
};

/// LLaVA's vision tower, CLIP's vision model: as GIT's encoder (which is CLIP's), of the
/// wrapper's default (CLIP ViT-L/14 at 336 pixels) where it has no vision config, else of
/// `CLIPVisionConfig`'s defaults (ViT-B/32) for the keys it lacks.
pub fn llava_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    clip_tower(top, llava_clip(top)?)
}

/// CLIP's vision model, named.
fn clip_tower(top: &Config, found: Option<Vit>) -> Result<Option<Vec<TowerBlock>>> {
    match found {
        Some(t) => t.clip_named().done(top, "vision_config"),
        None => Ok(None),
    }
}

/// LLaVA's projector: two linear maps (with biases where `multimodal_projector_bias`) from the
/// vision width, times the layers `vision_feature_layer` lists where it lists several, to the
/// text width and within it.
pub fn llava_projector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    match llava_clip(top)? {
        Some(t) => llava_mlp(top, t.hidden),
        None => Ok(None),
    }
}

fn llava_mlp(top: &Config, vision: u128) -> Result<Option<Vec<TowerBlock>>> {
    let joined = vision * feature_layers(top)?;
    let text = text_hidden(top, 4096)? as u128;
    let bias = top.flag("multimodal_projector_bias", true)?;
    let mut n = Named::default();
    n.step("projector")
        .linear("linear_1", text, joined, bias)
        .linear("linear_2", text, text, bias);
    n.done(top, "text_config")
}

/// LLaVA-OneVision's vision tower: SigLIP's encoder, with its attention-pooling head where
/// `vision_use_head` (the wrapper's default, SigLIP so400m at 384 pixels, has none; a vision
/// config's keys left out take SiglipVisionConfig's defaults, which have one).
pub fn onevision_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    with_head(top, onevision_siglip(top)?)
}

/// LLaVA-OneVision's projector: LLaVA's, from SigLIP's width.
pub fn onevision_projector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    match onevision_siglip(top)? {
        Some((s, _)) => llava_mlp(top, s.hidden),
        None => Ok(None),
    }
}

/// LLaVA-OneVision's image newline: as LLaVA-NeXT's.
pub fn onevision_newline(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    match onevision_siglip(top)? {
        Some(_) => newline(top),
        None => Ok(None),
    }
}

/// The learned vector that ends each row of an image's patches, one text width: the part's
/// name is the tensor's.
pub(super) fn newline(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let mut n = Named::default();
    n.step("row end").t("", &[text_hidden(top, 4096)? as u128]);
    n.done(top, "text_config")
}

/// LLaVA-OneVision's SigLIP sizes, and whether it has its pooling head.
fn onevision_siglip<'a>(top: &Config<'a>) -> Result<Option<(Vit<'a>, bool)>> {
    siglip_in(top, (384, 14, 1152, 4304, 26), false)
}

/// A SigLIP tower's parameters, its pooling head's where it has one.
fn with_head(top: &Config, found: Option<(Vit, bool)>) -> Result<Option<Vec<TowerBlock>>> {
    match found {
        Some((s, head)) => s.siglip_named(head).done(top, "vision_config"),
        None => Ok(None),
    }
}

/// A wrapper's SigLIP tower and whether it has its pooling head: of the wrapper's `absent`
/// sizes and head where it has no vision config, else of SiglipVisionConfig's defaults (a
/// head) for the keys it lacks.
fn siglip_in<'a>(
    top: &Config<'a>,
    absent: VitDefaults,
    absent_head: bool,
) -> Result<Option<(Vit<'a>, bool)>> {
    let kinds = ["siglip_vision_model"];
    let Some(s) = vit_either(top, &kinds, (224, 16, 768, 3072, 12), absent)? else {
        return Ok(None);
    };
    let head = flag(&s.v, "vision_use_head", s.v.is_some() || absent_head)?;
    Ok(Some((s, head)))
}

/// Command A Vision's vision tower (`cohere2_vision`): SigLIP's encoder with its pooling head
/// where `vision_use_head` (by the wrapper's default, 27 layers at 512 pixels, with one).
pub fn cohere2_vision_tower(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    with_head(top, cohere2_siglip(top)?)
}

/// Command A Vision's projector: the pixel shuffle's downsample_factor² patches joined, a
/// biased map to alignment_intermediate_size, SwiGLU (which halves it), and a biased map to the
/// text width.
pub fn cohere2_vision_projector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    match cohere2_siglip(top)? {
        Some((s, _)) => shuffle_swiglu(top, s.hidden, Some(36864), false),
        None => Ok(None),
    }
}

/// The pixel shuffle's downsample_factor² patches of `width` joined (normed where `norm`), a
/// biased map to alignment_intermediate_size (`inner`, or the text width where `None`), SwiGLU
/// (which halves it), and a biased map to the text width.
fn shuffle_swiglu(
    top: &Config,
    width: u128,
    inner: Option<u64>,
    norm: bool,
) -> Result<Option<Vec<TowerBlock>>> {
    let joined = width * (top.size("downsample_factor", Some(2))? as u128).pow(2);
    let text = text_hidden(top, 8192)?;
    let inner = top.size("alignment_intermediate_size", Some(inner.unwrap_or(text)))? as u128;
    let text = text as u128;
    let mut n = Named::default();
    let step = n.step("projector");
    let step = match norm {
        true => step.layer_norm("layernorm", joined),
        false => step,
    };
    step.linear("linear_1", inner, joined, true)
        .linear("linear_2", text, inner / 2, true);
    n.done(top, "text_config")
}

/// Aya Vision's vision tower: SigLIP's encoder, so400m at 384 pixels without its pooling head
/// where the wrapper has no vision config (LLaVA-OneVision's).
pub fn aya_vision_tower(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    with_head(top, aya_siglip(top)?)
}

/// Aya Vision's projector: Command A Vision's pixel-shuffle SwiGLU with a LayerNorm before it,
/// its inner width `alignment_intermediate_size` or, where the config has none, the text width.
pub fn aya_vision_projector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    match aya_siglip(top)? {
        Some((s, _)) => shuffle_swiglu(top, s.hidden, None, true),
        None => Ok(None),
    }
}

/// How Aya Vision runs an image: SigLIP's sizes and settings over each tile its processor cuts
/// (GOT-OCR 2's crops; the tile the tower's `image_size`), the hidden state read, the pixel
/// shuffle's side, the projector's LayerNorm ε and width, the placeholder (`image_token_index`).
/// A config that reads several layers' states, or the states without their first
/// (`vision_feature_select_strategy` "default", whose patches then make no square), whose
/// shuffle does not divide the patch grid, or whose projector's first map is odd (SwiGLU halves
/// it), is counted but runs no image.
pub fn aya_vision_image(top: &Config) -> Result<Option<ImageInput>> {
    let Some((s, head)) = aya_siglip(top)? else {
        return Ok(None);
    };
    // (Without a vision config aya_siglip refuses the model: SigLIP's own defaults apply.)
    let Some(tower) = siglip_tower(top, &s, 224, 12)? else {
        return Ok(None);
    };
    let layer = match top.get("vision_feature_layer") {
        None => Some(-1),
        Some(x) => x.as_i64(),
    };
    let shuffle = top.size("downsample_factor", Some(2))?;
    let full = top.string("vision_feature_select_strategy", "full")? == "full";
    let Some(layer) =
        layer.filter(|l| full && (-(tower.depth as i64) - 1..=tower.depth as i64).contains(l))
    else {
        return Ok(None);
    };
    if shuffle == 0 || !tower.grid().is_multiple_of(shuffle) {
        return Ok(None);
    }
    let inner = top.size("alignment_intermediate_size", Some(text_hidden(top, 8192)?))?;
    // SwiGLU halves the first map's output: transformers cannot run an odd one.
    if inner % 2 != 0 {
        return Ok(None);
    }
    Ok(Some(ImageInput {
        token: Some(token_id(
            top,
            "image_token_index",
            "image_token_id",
            255_036,
        )?),
        placeholders: Placeholders::NamedTiles,
        encoder: ImageEncoder::Aya(AyaVision {
            tower,
            head,
            layer,
            last_norm: false,
            shuffle,
            projector: "multi_modal_projector.".into(),
            projector_norm: Some(top.float("adapter_layer_norm_eps", 1e-6)?),
            inner,
        }),
    }))
}

/// How Command A Vision runs an image: Aya Vision's way (its own processor's tiles), the tower's
/// output read (after its last LayerNorm), the projector without a LayerNorm, its first map
/// `alignment_intermediate_size` wide; the placeholder `image_token_id`. A config whose shuffle
/// does not divide the patch grid, or whose projector's first map is odd, is counted but runs
/// no image.
pub fn cohere2_vision_image(top: &Config) -> Result<Option<ImageInput>> {
    let Some((s, head)) = cohere2_siglip(top)? else {
        return Ok(None);
    };
    let image = if s.v.is_some() { 224 } else { 512 };
    let Some(tower) = siglip_tower(top, &s, image, 12)? else {
        return Ok(None);
    };
    let shuffle = top.size("downsample_factor", Some(2))?;
    let inner = top.size("alignment_intermediate_size", Some(36864))?;
    if shuffle == 0 || !tower.grid().is_multiple_of(shuffle) || inner % 2 != 0 {
        return Ok(None);
    }
    Ok(Some(ImageInput {
        token: Some(top.size("image_token_id", Some(255_036))?),
        placeholders: Placeholders::TileBreaks,
        encoder: ImageEncoder::Aya(AyaVision {
            tower: VisionTower {
                prefix: "model.vision_tower.".into(),
                ..tower
            },
            head,
            layer: -1,
            last_norm: true,
            shuffle,
            projector: "model.multi_modal_projector.".into(),
            projector_norm: None,
            inner,
        }),
    }))
}

/// Aya Vision's SigLIP, whose heads must divide its width: the wrapper's own default tower (1152
/// wide in 14 heads) cannot be built, so a config without a vision config is refused.
fn aya_siglip<'a>(top: &Config<'a>) -> Result<Option<(Vit<'a>, bool)>> {
    let Some((s, head)) = onevision_siglip(top)? else {
        return Ok(None);
    };
    let heads = size(
        &s.v,
        "num_attention_heads",
        if s.v.is_some() { 12 } else { 14 },
    )? as u128;
    if s.hidden.is_multiple_of(heads) {
        return Ok(Some((s, head)));
    }
    Err(match &s.v {
        Some(v) => v.err(
            "num_attention_heads",
            format!(
                "is {heads}, which does not divide the tower's width ({}); SigLIP's attention needs it to",
                s.hidden
            ),
        ),
        None => top.err(
            "vision_config",
            "is missing, and Aya Vision's default tower (1152 wide in 14 heads) cannot be built: its heads do not divide its width; give the vision config the checkpoint has",
        ),
    })
}

fn cohere2_siglip<'a>(top: &Config<'a>) -> Result<Option<(Vit<'a>, bool)>> {
    siglip_in(top, (512, 16, 1152, 3072, 27), true)
}

/// Mistral 3's vision tower, Pixtral's encoder: its patch convolution (without a bias) and
/// RMSNorm, then layers of two RMSNorms, four bias-free attention projections (positions by 2-D
/// RoPE: no table) and a gated MLP. Of the wrapper's default (patch 14, 1540 pixels) where it
/// has no vision config, else of `PixtralVisionConfig`'s defaults for the keys it lacks.
pub fn mistral3_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(t) = pixtral(top)? else {
        return Ok(None);
    };
    let (d, i, l) = (t.hidden, t.intermediate, "transformer.layers.{i}");
    let mut n = Named::default();
    n.step("patch embedding")
        .t("patch_conv.weight", &t.conv_shape())
        .rms("ln_pre", d);
    n.layers("encoder layer", t.layers)
        .rms(&format!("{l}.attention_norm"), d)
        .linear(&format!("{l}.attention.q_proj"), d, d, false)
        .linear(&format!("{l}.attention.k_proj"), d, d, false)
        .linear(&format!("{l}.attention.v_proj"), d, d, false)
        .linear(&format!("{l}.attention.o_proj"), d, d, false)
        .rms(&format!("{l}.ffn_norm"), d)
        .linear(&format!("{l}.feed_forward.gate_proj"), i, d, false)
        .linear(&format!("{l}.feed_forward.up_proj"), i, d, false)
        .linear(&format!("{l}.feed_forward.down_proj"), d, i, false);
    n.done(top, "vision_config")
}

/// Mistral 3's projector: an RMSNorm over the vision width, the patch merger's bias-free map
/// of spatial_merge_size² patches joined back to one, and two linear maps (with biases where
/// `multimodal_projector_bias`) from the vision width times the feature layers listed to the
/// text width and within it.
pub fn mistral3_projector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let layers = feature_layers(top)?;
    let bias = top.flag("multimodal_projector_bias", false)?;
    pixtral_projector(top, layers, bias)
}

/// LightOnOCR's projector: Mistral 3's, from one vision layer and without biases.
pub fn lighton_ocr_projector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    pixtral_projector(top, 1, false)
}

/// Mistral 3's projector from `layers` vision layers, its two maps biased where `bias`.
fn pixtral_projector(top: &Config, layers: u128, bias: bool) -> Result<Option<Vec<TowerBlock>>> {
    let Some(t) = pixtral(top)? else {
        return Ok(None);
    };
    let d = t.hidden;
    let merge = (top.size("spatial_merge_size", Some(2))? as u128).pow(2);
    let text = text_hidden(top, 4096)? as u128;
    let mut n = Named::default();
    n.step("patch merger")
        .rms("norm", d)
        .linear("patch_merger.merging_layer", d, merge * d, false);
    n.step("projector")
        .linear("linear_1", text, d * layers, bias)
        .linear("linear_2", text, text, bias);
    n.done(top, "text_config")
}

/// Pixtral's sizes in Mistral 3 and LightOnOCR, whose wrappers' default towers are the same.
fn pixtral<'a>(top: &Config<'a>) -> Result<Option<Vit<'a>>> {
    let (given, absent) = ((1024, 16, 1024, 4096, 24), (1540, 14, 1024, 4096, 24));
    vit_either(top, &["pixtral"], given, absent)
}

/// How many of the vision tower's layers a projector reads (`vision_feature_layer`: one, or a
/// list).
fn feature_layers(top: &Config) -> Result<u128> {
    Ok(joined_layers(top, "vision_feature_layer", 1)?.max(1))
}

/// How many vision layers `key` lists (one index, or a list of them), `absent` where the config
/// has no such key.
fn joined_layers(top: &Config, key: &str, absent: u128) -> Result<u128> {
    match top.get(key) {
        None => Ok(absent),
        Some(serde_json::Value::Number(_)) => Ok(1),
        Some(serde_json::Value::Array(list)) => Ok(list.len() as u128),
        Some(other) => Err(top.err(
            key,
            format!("is {other}; give a layer index or a list of them"),
        )),
    }
}

/// Video-LLaVA's image tower, and its video tower of the same config: CLIP's vision model, as
/// LLaVA's (ViT-L/14 at 224 pixels where the wrapper has no vision config).
pub fn video_llava_tower(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    clip_tower(top, video_llava_clip(top)?)
}

/// Video-LLaVA's projector: LLaVA's, from its towers' width.
pub fn video_llava_projector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    match video_llava_clip(top)? {
        Some(t) => llava_mlp(top, t.hidden),
        None => Ok(None),
    }
}

fn video_llava_clip<'a>(top: &Config<'a>) -> Result<Option<Vit<'a>>> {
    let (given, absent) = ((224, 32, 768, 3072, 12), (224, 14, 1024, 4096, 24));
    vit_either(top, &["clip_vision_model"], given, absent)
}

/// LLaVA-NeXT-Video's pooler of a frame's patches: a biased convolution of stride × stride
/// patches into `spatial_pool_out_channels` (the vision width by default) where
/// `spatial_pool_mode` is `conv`; average and max pooling hold no weights.
pub fn llava_next_video_pooler(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(t) = llava_clip(top)? else {
        return Ok(None);
    };
    let mode = top.string("spatial_pool_mode", "average")?;
    let stride = top.size("spatial_pool_stride", Some(2))? as u128;
    match mode.as_str() {
        "average" | "max" => not_built(),
        "conv" => {
            let out = top.size("spatial_pool_out_channels", Some(t.hidden as u64))? as u128;
            let mut n = Named::default();
            n.step("frame pooler")
                .t("pool.weight", &[out, t.hidden, stride, stride])
                .t("pool.bias", &[out]);
            n.done(top, "spatial_pool_out_channels")
        }
        other => Err(top.err(
            "spatial_pool_mode",
            format!("is {other:?}; it must be \"average\", \"max\" or \"conv\""),
        )),
    }
}

/// VipLlava's projector: a LayerNorm over the features of the vision layers it joins
/// (`vision_feature_layers` or `vision_feature_layer`, five by default), then LLaVA's two
/// biased maps into the text width.
pub fn vipllava_projector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(t) = llava_clip(top)? else {
        return Ok(None);
    };
    let key = if top.present("vision_feature_layers") {
        "vision_feature_layers"
    } else {
        "vision_feature_layer"
    };
    let joined = t.hidden * joined_layers(top, key, 5)?;
    let text = text_hidden(top, 4096)? as u128;
    let mut n = Named::default();
    n.step("projector")
        .layer_norm("projector_layernorm", joined)
        .linear("linear_1", text, joined, true)
        .linear("linear_2", text, text, true);
    n.done(top, "text_config")
}

/// LLaVA-NeXT's learned vector that ends each row of an image's patches, one text width.
pub fn llava_next_newline(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    match llava_clip(top)? {
        Some(_) => newline(top),
        None => Ok(None),
    }
}

/// Idefics3's and SmolVLM's vision tower: SigLIP's encoder without its pooling head.
pub fn idefics3_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    headless(top, idefics3(top)?)
}

/// A SigLIP tower without its pooling head, where the wrapper's vision config is of its kind.
fn headless(top: &Config, found: Option<Vit>) -> Result<Option<Vec<TowerBlock>>> {
    match found {
        Some(s) => s.siglip_named(false).done(top, "vision_config"),
        None => Ok(None),
    }
}

/// Idefics3's and SmolVLM's connector: the pixel shuffle's scale_factor² patches joined, mapped
/// to the text width by one bias-free projection.
pub fn idefics3_connector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(s) = idefics3(top)? else {
        return Ok(None);
    };
    let joined = s.hidden * (top.size("scale_factor", Some(2))? as u128).pow(2);
    let mut n = Named::default();
    n.step("projector").linear(
        "modality_projection.proj",
        text_hidden(top, 4096)? as u128,
        joined,
        false,
    );
    n.done(top, "text_config")
}

/// How Idefics3 and SmolVLM run an image: SigLIP's tower under `model.vision_model.` over each
/// frame their processor makes (its heads 16 by their vision configs' default), to its last
/// LayerNorm; each `scale_factor`² patches shuffled into one feature and mapped by the
/// connector; the frames laid out in the prompt by their place (`image_token_id`, by default
/// 128,257). A rectangular image, an activation the towers do not run, or a shuffle that does
/// not divide the patch grid is counted but runs no image.
pub fn idefics3_image(top: &Config) -> Result<Option<ImageInput>> {
    let Some(s) = idefics3(top)? else {
        return Ok(None);
    };
    let Some(image) = square(&s.v, "image_size", 224)? else {
        return Ok(None);
    };
    let (heads, eps, act) = match &s.v {
        Some(c) => (
            c.size("num_attention_heads", Some(16))?,
            c.float("layer_norm_eps", 1e-6)?,
            activation(c, "hidden_act", "gelu_pytorch_tanh")?,
        ),
        None => (16, 1e-6, Some(Act::GeluTanh)),
    };
    let Some(act) = act else {
        return Ok(None);
    };
    let tower = s.runs(top, "model.vision_model.", image, heads, eps, act)?;
    let shuffle = top.size("scale_factor", Some(2))?;
    if shuffle == 0 || !tower.grid().is_multiple_of(shuffle) {
        return Ok(None);
    }
    Ok(Some(ImageInput {
        token: Some(top.size("image_token_id", Some(128_257))?),
        placeholders: Placeholders::TileGrid,
        encoder: ImageEncoder::Idefics3(Idefics3Vision {
            tower,
            shuffle,
            projector: "model.connector.".into(),
        }),
    }))
}

/// The vision sizes of Idefics3 and SmolVLM (their vision configs' defaults alike).
fn idefics3<'a>(top: &Config<'a>) -> Result<Option<Vit<'a>>> {
    vit(
        top,
        &["idefics3_vision", "smolvlm_vision"],
        (224, 32, 1152, 3072, 12),
    )
}

/// InternVL's vision tower, InternViT: a class token (and a mask token where
/// `use_mask_token`), a biased patch convolution, learned positions (one more than the patches)
/// where `use_absolute_position_embeddings`; layers of two norms (LayerNorms, or RMSNorms where
/// `norm_type` says so), Q, K and V (biased where `attention_bias`) with RMSNorms over them
/// where `use_qk_norm`, a biased output projection, two layer-scale vectors and a biased MLP;
/// a last LayerNorm unless `use_mean_pooling`.
pub fn internvl_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    match vit(top, &["internvl_vision"], (448, 14, 1024, 4096, 24))? {
        Some(t) => intern_vit(top, t, &INTERNVL),
        None => Ok(None),
    }
}

/// InternViT's tensor names: transformers' (InternVL's) or its original code's (Qianfan-OCR's
/// published checkpoints), and its class's default for `attention_bias`.
struct InternVit {
    cls: &'static str,
    patch: &'static str,
    positions: &'static str,
    layer: &'static str,
    norm1: &'static str,
    norm2: &'static str,
    /// The fused QKV's name, or `None` for q, k and v apart (`attention.{q,k,v}_proj`).
    qkv: Option<&'static str>,
    proj: &'static str,
    scales: [&'static str; 2],
    bias: bool,
}

const INTERNVL: InternVit = InternVit {
    cls: "embeddings.cls_token",
    patch: "embeddings.patch_embeddings.projection",
    positions: "embeddings.position_embeddings",
    layer: "encoder.layer.{i}",
    norm1: "layernorm_before",
    norm2: "layernorm_after",
    qkv: None,
    proj: "attention.projection_layer",
    scales: ["lambda_1", "lambda_2"],
    bias: false,
};

const QIANFAN_OCR: InternVit = InternVit {
    cls: "embeddings.class_embedding",
    patch: "embeddings.patch_embedding",
    positions: "embeddings.position_embedding",
    layer: "encoder.layers.{i}",
    norm1: "norm1",
    norm2: "norm2",
    qkv: Some("attn.qkv"),
    proj: "attn.proj",
    scales: ["ls1", "ls2"],
    bias: true,
};

/// InternViT named by `names`.
fn intern_vit(top: &Config, t: Vit, names: &InternVit) -> Result<Option<Vec<TowerBlock>>> {
    let (d, i, l) = (t.hidden, t.intermediate, names.layer);
    let v = &t.v;
    let on = |key, default| flag(v, key, default);
    let rms = match v {
        Some(v) => v.string("norm_type", "layer_norm")? == "rms_norm",
        None => false,
    };
    let mut n = Named::default();
    let step = n.step("patch embedding").t(names.cls, &[1, 1, d]);
    let step = match on("use_mask_token", false)? {
        true => step.t("embeddings.mask_token", &[1, 1, d]),
        false => step,
    };
    let step = step.linear_shaped(names.patch, &t.conv_shape(), true);
    if on("use_absolute_position_embeddings", true)? {
        step.t(names.positions, &[1, t.patches + 1, d]);
    }
    let bias = on("attention_bias", names.bias)?;
    let step = n
        .layers("encoder layer", t.layers)
        .norm(&format!("{l}.{}", names.norm1), d, rms);
    let step = match names.qkv {
        Some(qkv) => step.linear(&format!("{l}.{qkv}"), 3 * d, d, bias),
        None => step
            .linear(&format!("{l}.attention.q_proj"), d, d, bias)
            .linear(&format!("{l}.attention.k_proj"), d, d, bias)
            .linear(&format!("{l}.attention.v_proj"), d, d, bias),
    };
    let step = match on("use_qk_norm", false)? {
        true => step
            .rms(&format!("{l}.attention.q_norm"), d)
            .rms(&format!("{l}.attention.k_norm"), d),
        false => step,
    };
    step.linear(&format!("{l}.{}", names.proj), d, d, true)
        .t(&format!("{l}.{}", names.scales[0]), &[d])
        .norm(&format!("{l}.{}", names.norm2), d, rms)
        .linear(&format!("{l}.mlp.fc1"), i, d, true)
        .linear(&format!("{l}.mlp.fc2"), d, i, true)
        .t(&format!("{l}.{}", names.scales[1]), &[d]);
    if !on("use_mean_pooling", true)? {
        n.step("last norm").layer_norm("layernorm", d);
    }
    n.done(top, "vision_config")
}

/// InternVL's projector: a LayerNorm over the pixel shuffle's (1 / downsample_ratio)² patches
/// joined, then two biased linear maps into the text width and within it.
pub fn internvl_projector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(t) = vit(top, &["internvl_vision"], (448, 14, 1024, 4096, 24))? else {
        return Ok(None);
    };
    let joined = t.hidden * shuffled(top)?;
    let text = text_hidden(top, 4096)? as u128;
    let mut n = Named::default();
    n.step("projector")
        .layer_norm("layer_norm", joined)
        .linear("linear_1", text, joined, true)
        .linear("linear_2", text, text, true);
    n.done(top, "text_config")
}

/// How InternVL runs an image: InternViT's sizes and settings over each tile its processor cuts
/// (the tile the tower's `image_size`), the pixel shuffle's side, the projector's activation and
/// the placeholder (`image_token_id`). It reads the last layer's state without the class token
/// (`vision_feature_layer` -1, `vision_feature_select_strategy` "default", as published); a
/// config that reads another, or whose shuffle does not divide the patch grid, is counted but
/// runs no image.
pub fn internvl_image(top: &Config) -> Result<Option<ImageInput>> {
    let Some(t) = vit(top, &["internvl_vision"], (448, 14, 1024, 4096, 24))? else {
        return Ok(None);
    };
    let v = &t.v;
    let Some(image) = square(v, "image_size", 448)? else {
        return Ok(None);
    };
    let ratio = top.float("downsample_ratio", 0.5)?;
    let shuffle = (1.0 / ratio).round();
    let whole = shuffle >= 1.0 && (1.0 / ratio - shuffle).abs() < 1e-9;
    let layer = match top.get("vision_feature_layer") {
        None => Some(-1),
        Some(x) => x.as_i64(),
    };
    let last = matches!(layer, Some(-1))
        && top.string("vision_feature_select_strategy", "default")? == "default";
    if !whole || !t.grid.is_multiple_of(shuffle as u128) || !last {
        return Ok(None);
    }
    let (heads, eps, act, rms) = match v {
        Some(c) => (
            c.size("num_attention_heads", Some(16))?,
            c.float("layer_norm_eps", 1e-6)?,
            activation(c, "hidden_act", "gelu")?,
            c.string("norm_type", "layer_norm")? == "rms_norm",
        ),
        None => (16, 1e-6, Some(Act::Gelu), false),
    };
    let (Some(act), Some(projector_act)) = (act, activation(top, "projector_hidden_act", "gelu")?)
    else {
        return Ok(None);
    };
    Ok(Some(ImageInput {
        token: Some(token_id(
            top,
            "image_token_id",
            "image_token_index",
            151_667,
        )?),
        placeholders: Placeholders::Bracketed,
        encoder: ImageEncoder::InternVl(InternVlVision {
            tower: t.runs(top, "vision_tower.", image, heads, eps, act)?,
            rms,
            qkv_bias: flag(v, "attention_bias", false)?,
            qk_norm: flag(v, "use_qk_norm", false)?,
            positions: flag(v, "use_absolute_position_embeddings", true)?,
            last_norm: !flag(v, "use_mean_pooling", true)?,
            shuffle: shuffle as u64,
            projector: "multi_modal_projector.".into(),
            projector_act,
        }),
    }))
}

/// How many patches InternVL's pixel shuffle joins: Python's int(1 / downsample_ratio), squared.
fn shuffled(top: &Config) -> Result<u128> {
    let ratio = top.float("downsample_ratio", 0.5)?;
    if !(ratio > 0.0 && ratio <= 1.0) {
        return Err(top.err(
            "downsample_ratio",
            format!("is {ratio}; give a ratio in (0, 1], as InternVL's pixel shuffle takes"),
        ));
    }
    Ok(((1.0 / ratio) as u128).pow(2))
}

/// LFM2-VL's vision tower, SigLIP2's NaFlex encoder: a biased linear map of each patch's pixels
/// (a convolution's parameters), `num_patches` learned positions (resized to each image), SigLIP's
/// layers and last LayerNorm, and its pooling head where `vision_use_head`.
pub fn lfm2_vl_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    with_head(top, siglip2(top)?)
}

/// LFM2-VL's projector: a LayerNorm (where `projector_use_layernorm`) over the pixel unshuffle's
/// downsample_factor² patches joined, a map to projector_hidden_size and one into the text
/// width, biased where `projector_bias`.
pub fn lfm2_vl_projector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some((s, _)) = siglip2(top)? else {
        return Ok(None);
    };
    let joined = s.hidden * (top.size("downsample_factor", Some(2))? as u128).pow(2);
    let inner = top.size("projector_hidden_size", Some(2560))? as u128;
    let text = text_hidden(top, 2560)? as u128;
    let bias = top.flag("projector_bias", true)?;
    let mut n = Named::default();
    let step = n.step("projector");
    let step = match top.flag("projector_use_layernorm", true)? {
        true => step.layer_norm("layer_norm", joined),
        false => step,
    };
    step.linear("linear_1", inner, joined, bias)
        .linear("linear_2", text, inner, bias);
    n.done(top, "text_config")
}

/// SigLIP2's sizes (`Siglip2VisionConfig`), its patches the `num_patches` positions it learns,
/// and whether it has its pooling head.
fn siglip2<'a>(top: &Config<'a>) -> Result<Option<(Vit<'a>, bool)>> {
    let Some(v) = vision(top, &["siglip2_vision_model"])? else {
        return Ok(None);
    };
    let Some(patch) = square(&v, "patch_size", 16)? else {
        return Ok(None);
    };
    let patches = size(&v, "num_patches", 256)? as u128;
    let s = Vit {
        hidden: size(&v, "hidden_size", 768)? as u128,
        intermediate: size(&v, "intermediate_size", 3072)? as u128,
        layers: size(&v, "num_hidden_layers", 12)? as u128,
        channels: size(&v, "num_channels", 3)? as u128,
        patch: patch as u128,
        grid: patches.isqrt(),
        patches,
        flat_patch: true,
        v,
    };
    let head = flag(&s.v, "vision_use_head", true)?;
    Ok(Some((s, head)))
}

/// How LLaVA runs an image: its CLIP tower's sizes, ε and activation, the hidden states it
/// reads (`vision_feature_layer`, with or without the class token's), its projector's
/// activation and biases, and the placeholder id (`image_token_index`, or `image_token_id`).
pub fn llava_image(top: &Config) -> Result<Option<ImageInput>> {
    llava_input(top, Kind::Llava)
}

/// How VipLlava runs an image: LLaVA's way, reading `vision_feature_layers` (by default
/// [-2, -5, -8, -11, 6]) without the class token, its projector's maps biased and a LayerNorm
/// (`projector_layernorm_eps`) before them.
pub fn vipllava_image(top: &Config) -> Result<Option<ImageInput>> {
    llava_input(top, Kind::Vip)
}

/// How Video-LLaVA runs an image: LLaVA's way through its image tower (`image_tower.`, CLIP
/// ViT-L/14 at 224 pixels where the wrapper has no vision config), its video tower stored
/// beside it and not read.
pub fn video_llava_image(top: &Config) -> Result<Option<ImageInput>> {
    llava_input(top, Kind::Video)
}

/// How LLaVA-NeXT (and LLaVA-NeXT-Video) runs an image: LLaVA's way over each tile of the
/// canvas an image is fitted to (`image_grid_pinpoints`) and over the whole image, the tiles'
/// features unpadded with a learned vector (`image_newline`) ending each row. The class
/// token's state kept ("full") does not lay out into the grid transformers reshapes it to:
/// counted, not run; so are canvases that are not whole tiles.
pub fn llava_next_image(top: &Config) -> Result<Option<ImageInput>> {
    let Some(mut input) = llava_input(top, Kind::Llava)? else {
        return Ok(None);
    };
    let ImageEncoder::Llava(base) = input.encoder else {
        return Ok(None);
    };
    let default = [[336, 672], [672, 336], [672, 672], [1008, 336], [336, 1008]];
    let Some(anyres) = anyres(top, &base.tower, &default, None)? else {
        return Ok(None);
    };
    if !base.drop_class {
        return Ok(None);
    }
    input.encoder = ImageEncoder::LlavaNext(LlavaNext { base, anyres });
    Ok(Some(input))
}

/// How LLaVA-OneVision runs an image: SigLIP's tower (so400m at 384 pixels where the wrapper
/// has no vision config) over LLaVA-NeXT's tiles (its canvases of 1 to 6 tiles a side by
/// default), the hidden states read (`vision_feature_layer`, the last by default) through
/// LLaVA's projector, the canvas's features shrunk to `vision_aspect_ratio`'s
/// `anyres_max_N` tiles' worth; the placeholder `image_token_index`. The class token's
/// dropped ("default"), which SigLIP has none of, does not run in transformers: counted, not
/// run.
pub fn llava_onevision_image(top: &Config) -> Result<Option<ImageInput>> {
    let Some((s, head)) = onevision_siglip(top)? else {
        return Ok(None);
    };
    let Some(tower) = siglip_tower(top, &s, 384, 16)? else {
        return Ok(None);
    };
    let Some(layers) = read_layers(top, "vision_feature_layer", vec![-1], tower.depth)? else {
        return Ok(None);
    };
    if top.string("vision_feature_select_strategy", "full")? != "full" {
        return Ok(None);
    }
    let aspect = top.string("vision_aspect_ratio", "anyres_max_9")?;
    let most = (aspect.strip_prefix("anyres_max_"))
        .and_then(|n| n.parse::<u64>().ok())
        .filter(|&n| n > 0)
        .ok_or_else(|| {
            top.err(
                "vision_aspect_ratio",
                format!("is {aspect:?}; anatomy reads \"anyres_max_N\", N a whole number of tiles from 1"),
            )
        })?;
    let default: Vec<[u64; 2]> = (1..=6)
        .flat_map(|h| (1..=6).map(move |w| [384 * h, 384 * w]))
        .collect();
    let Some(anyres) = anyres(top, &tower, &default, Some(most))? else {
        return Ok(None);
    };
    let Some(projector_act) = activation(top, "projector_hidden_act", "gelu")? else {
        return Ok(None);
    };
    Ok(Some(ImageInput {
        token: Some(token_id(
            top,
            "image_token_index",
            "image_token_id",
            151_646,
        )?),
        placeholders: Placeholders::Run,
        encoder: ImageEncoder::LlavaOnevision(LlavaOnevision {
            tower,
            head,
            projector: "multi_modal_projector.".into(),
            layers,
            projector_act,
            projector_bias: top.flag("multimodal_projector_bias", true)?,
            anyres,
        }),
    }))
}

/// The tiles of an image at its own size through `tower`: `image_grid_pinpoints` (`default`
/// where absent), `image_newline`, the features' bound `most`. Canvases that are not whole
/// tiles are counted, not run.
fn anyres(
    top: &Config,
    tower: &VisionTower,
    default: &[[u64; 2]],
    most: Option<u64>,
) -> Result<Option<AnyRes>> {
    let pinpoints = match top.get("image_grid_pinpoints") {
        None | Some(serde_json::Value::Null) => default.to_vec(),
        Some(v) => pinpoints(top, v)?,
    };
    if pinpoints
        .iter()
        .any(|p| p.iter().any(|n| n % tower.image != 0))
    {
        return Ok(None);
    }
    Ok(Some(AnyRes {
        pinpoints,
        newline: "image_newline".into(),
        most,
    }))
}

/// `key`'s hidden states (`default` where absent): one index or a list, each among the
/// embeddings' (0) and `depth` layers' outputs, from the end where negative; `None` where one
/// is past them (it builds, but cannot run).
fn read_layers(top: &Config, key: &str, default: Vec<i64>, depth: u64) -> Result<Option<Vec<i64>>> {
    let layers = match top.get(key) {
        None => default,
        Some(serde_json::Value::Array(list)) => list
            .iter()
            .map(|x| x.as_i64())
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| top.err(key, "lists something that is not a layer index"))?,
        Some(x) => vec![x
            .as_i64()
            .ok_or_else(|| top.err(key, "is not a layer index or a list of them"))?],
    };
    let states = depth as i64 + 1;
    Ok(
        (!layers.is_empty() && layers.iter().all(|l| (-states..states).contains(l)))
            .then_some(layers),
    )
}

/// `image_grid_pinpoints`: a list of [height, width] in pixels, each side 1 to 100,000 (as the
/// processor's pixels are bounded).
fn pinpoints(top: &Config, v: &serde_json::Value) -> Result<Vec<[u64; 2]>> {
    crate::spec::read_pinpoints(v)
        .ok_or_else(|| top.err("image_grid_pinpoints", crate::spec::PINPOINTS))
}

/// The LLaVA wrappers that run an image through one CLIP tower.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Llava,
    Vip,
    Video,
}

fn llava_input(top: &Config, kind: Kind) -> Result<Option<ImageInput>> {
    let vip = kind == Kind::Vip;
    let found = match kind {
        Kind::Llava | Kind::Vip => llava_clip(top)?,
        Kind::Video => video_llava_clip(top)?,
    };
    let Some(t) = found else {
        return Ok(None);
    };
    let v = &t.v;
    // The wrapper's tower where it has no vision config (ViT-L/14 at 336 pixels, Video-LLaVA's
    // at 224), else CLIPVisionConfig's image.
    let image = match (v.is_none(), kind) {
        (true, Kind::Llava | Kind::Vip) => 336,
        (true, Kind::Video) | (false, _) => 224,
    };
    let Some(image) = square(v, "image_size", image)? else {
        return Ok(None);
    };
    let key = match vip && top.present("vision_feature_layers") {
        true => "vision_feature_layers",
        false => "vision_feature_layer",
    };
    let default = match vip {
        true => vec![-2, -5, -8, -11, 6],
        false => vec![-2],
    };
    // An index past the hidden states builds (the projector's width counts the states read)
    // but cannot run: counted, not run.
    let Some(layers) = read_layers(top, key, default, t.layers as u64)? else {
        return Ok(None);
    };
    // VipLlava always drops the class token's state.
    let drop_class = vip
        || match top
            .string("vision_feature_select_strategy", "default")?
            .as_str()
        {
            "default" => true,
            "full" => false,
            other => {
                return Err(top.err(
                    "vision_feature_select_strategy",
                    format!(
                    "is {other:?}; it must be \"default\" (without the class token) or \"full\""
                ),
                ))
            }
        };
    let (heads, eps, tower_act) = match v {
        Some(c) => (
            c.size("num_attention_heads", Some(12))?,
            c.float("layer_norm_eps", 1e-5)?,
            activation(c, "hidden_act", "quick_gelu")?,
        ),
        None => (16, 1e-5, Some(Act::QuickGelu)),
    };
    let (Some(tower_act), Some(projector_act)) =
        (tower_act, activation(top, "projector_hidden_act", "gelu")?)
    else {
        return Ok(None);
    };
    Ok(Some(ImageInput {
        token: Some(token_id(top, "image_token_index", "image_token_id", 32000)?),
        placeholders: Placeholders::Run,
        encoder: ImageEncoder::Llava(Llava {
            tower: t.runs(
                top,
                match kind {
                    Kind::Llava | Kind::Vip => "vision_tower.",
                    Kind::Video => "image_tower.",
                },
                image,
                heads,
                eps,
                tower_act,
            )?,
            projector: "multi_modal_projector.".into(),
            layers,
            drop_class,
            projector_act,
            projector_bias: vip || top.flag("multimodal_projector_bias", true)?,
            projector_norm: match vip {
                true => Some(top.float("projector_layernorm_eps", 1e-5)?),
                false => None,
            },
            video_tower: kind == Kind::Video,
        }),
    }))
}

/// How Mistral 3 runs an image: Pixtral's tower (its sizes, heads, activation and rotary base;
/// its figures stated at its `image_size`), the hidden state read (`vision_feature_layer`: one;
/// a list of several cannot run, as the projector's norm takes one state's width), the patch
/// merger's `spatial_merge_size`, the projector's activation and biases, and the placeholder
/// (`image_token_index`).
pub fn mistral3_image(top: &Config) -> Result<Option<ImageInput>> {
    pixtral_input(top, Pixtral::Mistral3)
}

/// How LightOnOCR runs an image: Mistral 3's way, reading the last layer's state, its projector
/// bias-free with GELU (whatever the config says), under `model.`'s `vision_encoder` and
/// `vision_projection`, its placeholders one run (`image_token_id`, by default 151,655).
pub fn lighton_ocr_image(top: &Config) -> Result<Option<ImageInput>> {
    pixtral_input(top, Pixtral::LightOnOcr)
}

/// Which wrapper of Pixtral's tower reads the image.
#[derive(Clone, Copy, PartialEq)]
enum Pixtral {
    Mistral3,
    LightOnOcr,
}

fn pixtral_input(top: &Config, kind: Pixtral) -> Result<Option<ImageInput>> {
    let Some(t) = pixtral(top)? else {
        return Ok(None);
    };
    let v = &t.v;
    let absent = v.is_none();
    let Some(image) = square(v, "image_size", if absent { 1540 } else { 1024 })? else {
        return Ok(None);
    };
    // One hidden state: a list of several cannot run.
    let layer = match (kind, top.get("vision_feature_layer")) {
        (Pixtral::LightOnOcr, _) | (Pixtral::Mistral3, None) => Some(-1),
        (Pixtral::Mistral3, Some(serde_json::Value::Array(list))) => match list.as_slice() {
            [one] => one.as_i64(),
            [] | [_, _, ..] => None,
        },
        (Pixtral::Mistral3, Some(x)) => x.as_i64(),
    };
    let Some(layer) = layer else {
        return Ok(None);
    };
    let heads = size(v, "num_attention_heads", 16)?;
    let head_dim = match v {
        Some(c) => c.opt_size("head_dim")?,
        None => None,
    };
    let states = t.layers as i64 + 1;
    let merge = top.size("spatial_merge_size", Some(2))?;
    let (Some(act), Some(projector_act)) = (
        match v {
            Some(c) => activation(c, "hidden_act", "gelu")?,
            None => Some(Act::Gelu),
        },
        match kind {
            Pixtral::Mistral3 => activation(top, "projector_hidden_act", "gelu")?,
            Pixtral::LightOnOcr => Some(Act::Gelu),
        },
    ) else {
        return Ok(None);
    };
    // What transformers cannot run: a state past the last, a head dim not the width's share
    // (the rotary tables take the config's), or one whose axial halves do not fill it.
    if !(-states..states).contains(&layer)
        || !rotary_heads(t.hidden, heads)
        || head_dim.is_some_and(|h| u128::from(h) * u128::from(heads) != t.hidden)
        || merge == 0
    {
        return Ok(None);
    }
    let (token, placeholders, tower, projector, projector_bias) = match kind {
        Pixtral::Mistral3 => (
            token_id(top, "image_token_index", "image_token_id", 10)?,
            Placeholders::Rows,
            "vision_tower.",
            "multi_modal_projector.",
            top.flag("multimodal_projector_bias", false)?,
        ),
        Pixtral::LightOnOcr => (
            top.opt_size("image_token_id")?.unwrap_or(151_655),
            Placeholders::Run,
            "model.vision_encoder.",
            "model.vision_projection.",
            false,
        ),
    };
    Ok(Some(ImageInput {
        token: Some(token),
        placeholders,
        encoder: ImageEncoder::Pixtral(PixtralVision {
            tower: t.runs(top, tower, image, heads, 1e-5, act)?,
            merge,
            theta: vision_theta(v)?,
            layer,
            projector: projector.into(),
            projector_act,
            projector_bias,
        }),
    }))
}

/// LLaVA's CLIP tower sizes.
fn llava_clip<'a>(top: &Config<'a>) -> Result<Option<Vit<'a>>> {
    let (given, absent) = ((224, 32, 768, 3072, 12), (336, 14, 1024, 4096, 24));
    vit_either(top, &["clip_vision_model"], given, absent)
}

/// LLaVA-OneVision-1.5's vision tower, RiceViT: a bias-free patch convolution, a class token with
/// its rotary position, a LayerNorm before the blocks (LayerNorms, a biased fused QKV and output
/// projection, a biased two-layer MLP), and Qwen2-VL's merger after a LayerNorm, into
/// `out_hidden_size`, which must be the text width (the config class refuses otherwise).
pub fn rice_vit(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let kinds = [
        "llava_onevision1_5_vision",
        "rice_vit",
        "llava_onevision1_5",
    ];
    let Some(v) = depth_vision(top, &kinds)? else {
        return Ok(None);
    };
    let Some(patch) = square(&v, "patch_size", 14)? else {
        return Ok(None);
    };
    let d = size(&v, "hidden_size", 1024)? as u128;
    let i = size(&v, "intermediate_size", 4096)? as u128;
    let heads = size(&v, "num_heads", 16)? as u128;
    let channels = size(&v, "in_channels", 3)? as u128;
    let out = size(&v, "out_hidden_size", 4096)?;
    let text = text_hidden(top, 4096)?;
    if out != text {
        let says = format!(
            "is {out}; it must be the text width ({text}), as LlavaOnevision15Config requires"
        );
        return Err(match &v {
            Some(v) => v.err("out_hidden_size", says),
            None => top.err(
                "vision_config",
                format!("is missing: its default out_hidden_size {says}"),
            ),
        });
    }
    let patch = patch as u128;
    let mut n = Named::default();
    n.step("patch embedding")
        .t("patch_embed.proj.weight", &[d, channels, patch, patch])
        .t("class_embedding", &[d])
        .t("class_pos_emb", &[1, d / heads.max(1) / 2])
        .layer_norm("pre_layernorm", d);
    qwen_blocks(&mut n, d, i, size(&v, "depth", 24)? as u128, Mlp::Fc, false);
    qwen2_merger(&mut n, &v, d, out as u128, false)?;
    n.done(top, "vision_config")
}

/// Idefics2's vision tower: SigLIP's encoder without its pooling head.
pub fn idefics2_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    headless(top, idefics2(top)?)
}

/// Idefics2's connector: a bias-free gated MLP from the tower's width through the text model's
/// intermediate width into its width, then the perceiver resampler: learned latents (as wide
/// as the text model; its class sets the perceiver's width so) attending to the image's
/// features in layers of RMSNorms, a bias-free attention (`resampler_n_heads` of
/// `resampler_head_dim`, `num_key_value_heads` K/V heads) and a gated MLP four times as wide,
/// and a last RMSNorm.
pub fn idefics2_connector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(s) = idefics2(top)? else {
        return Ok(None);
    };
    let text = top.detached("text_config")?;
    let d = size(&text, "hidden_size", 4096)? as u128;
    let inner = size(&text, "intermediate_size", 14336)? as u128;
    // Its config class drops the sub-configs' model_type (remote code's configs name others).
    let Some(p) = sub_config(top, "perceiver_config", &["idefics2_perceiver", "idefics2"])? else {
        return Ok(None);
    };
    let latents = size(&p, "resampler_n_latents", 64)? as u128;
    let heads = size(&p, "resampler_n_heads", 16)? as u128;
    let head_dim = size(&p, "resampler_head_dim", 96)? as u128;
    let kv = size(&p, "num_key_value_heads", 4)? as u128;
    let mut n = Named::default();
    n.step("projector")
        .linear("modality_projection.gate_proj", inner, s.hidden, false)
        .linear("modality_projection.up_proj", inner, s.hidden, false)
        .linear("modality_projection.down_proj", d, inner, false);
    n.step("latents")
        .t("perceiver_resampler.latents", &[latents, d]);
    let l = "perceiver_resampler.layers.{i}";
    n.layers("resampler layer", size(&p, "resampler_depth", 3)? as u128)
        .rms(&format!("{l}.input_latents_norm"), d)
        .rms(&format!("{l}.input_context_norm"), d)
        .linear(&format!("{l}.self_attn.q_proj"), heads * head_dim, d, false)
        .linear(&format!("{l}.self_attn.k_proj"), kv * head_dim, d, false)
        .linear(&format!("{l}.self_attn.v_proj"), kv * head_dim, d, false)
        .linear(&format!("{l}.self_attn.o_proj"), d, heads * head_dim, false)
        .rms(&format!("{l}.post_attention_layernorm"), d)
        .linear(&format!("{l}.mlp.gate_proj"), 4 * d, d, false)
        .linear(&format!("{l}.mlp.up_proj"), 4 * d, d, false)
        .linear(&format!("{l}.mlp.down_proj"), d, 4 * d, false);
    n.step("last norm").rms("perceiver_resampler.norm", d);
    n.done(top, "perceiver_config")
}

/// Idefics2's vision sizes (`Idefics2VisionConfig`).
fn idefics2<'a>(top: &Config<'a>) -> Result<Option<Vit<'a>>> {
    vit(
        top,
        &["idefics2_vision", "idefics2"],
        (224, 32, 768, 3072, 12),
    )
}

/// VideoLLaMA 3's vision tower: SigLIP's biased patch convolution and encoder with no position
/// table (positions by 2-D RoPE) and its last LayerNorm.
pub fn video_llama_3_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(s) = video_llama_3(top)? else {
        return Ok(None);
    };
    let d = s.hidden;
    let mut n = Named::default();
    n.step("patch embedding")
        .linear_shaped("embeddings.patch_embedding", &s.conv_shape(), true);
    s.encoder(&mut n);
    n.step("last norm").layer_norm("post_layernorm", d);
    n.done(top, "vision_config")
}

/// VideoLLaMA 3's projector: a biased map from the tower's width to the text width, GELU, and
/// a biased map of the text width.
pub fn video_llama_3_projector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(s) = video_llama_3(top)? else {
        return Ok(None);
    };
    let text = text_hidden(top, 4096)? as u128;
    let mut n = Named::default();
    n.step("projector")
        .linear("readout.0", text, s.hidden, true)
        .linear("readout.2", text, text, true);
    n.done(top, "text_config")
}

/// VideoLLaMA 3's vision sizes (`VideoLlama3VisionConfig`; it has no image size: the
/// processor sets each image's).
fn video_llama_3<'a>(top: &Config<'a>) -> Result<Option<Vit<'a>>> {
    vit(top, &["video_llama_3_vision"], (16, 16, 768, 3072, 12))
}

/// DeepSeek-VL's vision tower: SigLIP's encoder, with its attention-pooling head where
/// `vision_use_head` (SiglipVisionConfig's defaults, which have one).
pub fn deepseek_vl_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    with_head(top, deepseek_vl_siglip(top)?)
}

/// DeepSeek-VL's aligner: a biased map from the tower's width to the text width, GELU, and a
/// biased map of the text width.
pub fn deepseek_vl_aligner(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some((s, _)) = deepseek_vl_siglip(top)? else {
        return Ok(None);
    };
    let text = text_hidden(top, 4096)? as u128;
    let mut n = Named::default();
    n.step("aligner")
        .linear("linear1", text, s.hidden, true)
        .linear("linear2", text, text, true);
    n.done(top, "text_config")
}

/// How DeepSeek-VL runs an image: SigLIP's tower under `model.vision_model.` (its head stored
/// where `vision_use_head`), every patch's state through the aligner; one run of placeholders
/// (`image_token_id`, by default 100,015).
pub fn deepseek_vl_image(top: &Config) -> Result<Option<ImageInput>> {
    let Some((s, head)) = deepseek_vl_siglip(top)? else {
        return Ok(None);
    };
    let Some(mut tower) = siglip_tower(top, &s, 224, 12)? else {
        return Ok(None);
    };
    tower.prefix = "model.vision_model.".into();
    Ok(Some(ImageInput {
        token: Some(top.size("image_token_id", Some(100_015))?),
        placeholders: Placeholders::Run,
        encoder: ImageEncoder::DeepseekVl(DeepseekVlVision {
            tower,
            head,
            projector: "model.aligner.".into(),
        }),
    }))
}

fn deepseek_vl_siglip<'a>(top: &Config<'a>) -> Result<Option<(Vit<'a>, bool)>> {
    siglip_in(top, (224, 16, 768, 3072, 12), true)
}

/// Aria's vision tower: Idefics3's SigLIP encoder without its pooling head.
pub fn aria_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    headless(top, aria(top)?)
}

/// Aria's projector: learned queries (as many as the largest count
/// `projector_patch_to_query_dict` gives an image) attending to the image's patches through a
/// cross-attention (bias-free q, k and v maps, then a biased multi-head attention of the
/// tower's heads, a biased output map and LayerNorms on queries and patches), a LayerNorm, and
/// a bias-free two-layer MLP into the text width.
pub fn aria_projector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(s) = aria(top)? else {
        return Ok(None);
    };
    let key = "projector_patch_to_query_dict";
    let queries = match top.get(key) {
        None => 256,
        Some(serde_json::Value::Object(m)) if !m.is_empty() => {
            let mut most = 0;
            for v in m.values() {
                most = most.max(top.positive(key, v)?);
            }
            most
        }
        Some(_) => {
            return Err(top.err(
                key,
                "must map patch counts to query counts, as {\"1225\": 128, \"4900\": 256}",
            ))
        }
    } as u128;
    let (d, text) = (s.hidden, text_hidden(top, 4096)? as u128);
    let mut n = Named::default();
    n.step("queries").t("query", &[queries, d]);
    n.step("cross-attention")
        .linear("cross_attn.q_proj", d, d, false)
        .linear("cross_attn.k_proj", d, d, false)
        .linear("cross_attn.v_proj", d, d, false)
        .t("cross_attn.multihead_attn.in_proj_weight", &[3 * d, d])
        .t("cross_attn.multihead_attn.in_proj_bias", &[3 * d])
        .linear("cross_attn.multihead_attn.out_proj", d, d, true)
        .linear("cross_attn.linear", d, d, true)
        .layer_norm("cross_attn.layer_norm", d)
        .layer_norm("cross_attn.layer_norm_kv", d);
    n.step("projector")
        .layer_norm("layer_norm", d)
        .linear("feed_forward.linear_in", text, d, false)
        .linear("feed_forward.linear_out", text, text, false);
    n.done(top, "text_config")
}

/// Aria's vision sizes (`Idefics3VisionConfig`, its sub-config's class).
fn aria<'a>(top: &Config<'a>) -> Result<Option<Vit<'a>>> {
    vit(top, &["idefics3_vision"], (224, 32, 1152, 3072, 12))
}

/// Qianfan-OCR's vision tower: InternVL's InternViT (`internvl_vision`) under its original
/// code's names, its QKV fused and biased by default, as its published checkpoints store it.
pub fn qianfan_ocr_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    match qianfan(top)? {
        Some(t) => intern_vit(top, t, &QIANFAN_OCR),
        None => Ok(None),
    }
}

/// Qianfan-OCR's projector: InternVL's (a LayerNorm over the pixel shuffle's joined patches,
/// two biased maps into and within the text width) under its original names, `mlp1.{0,1,3}`.
pub fn qianfan_ocr_projector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(t) = qianfan(top)? else {
        return Ok(None);
    };
    let joined = t.hidden * shuffled(top)?;
    let text = text_hidden(top, 4096)? as u128;
    let mut n = Named::default();
    n.step("projector")
        .layer_norm("0", joined)
        .linear("1", text, joined, true)
        .linear("3", text, text, true);
    n.done(top, "text_config")
}

/// Qianfan-OCR's vision sizes (`QianfanOCRVisionConfig`'s defaults, InternViT-300M's).
fn qianfan<'a>(top: &Config<'a>) -> Result<Option<Vit<'a>>> {
    vit(top, &["qianfan_ocr_vision"], (448, 14, 1024, 4096, 24))
}
