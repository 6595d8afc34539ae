//! Parameter counts of what a multimodal wrapper holds beside its language model (its vision
//! tower and projector, Fuyu's patch embedding), from the wrapper's config and the defaults of
//! the classes transformers builds them with. anatomy draws none of them; it counts them, so a
//! wrapper's total is what transformers builds.
//!
//! Each counter reads its sub-config detached from the key accounting: a tower's keys are not
//! the language model's, and the wrapper's row lists the sub-config as inert. A tower of a kind
//! it does not know (another `model_type`) is left uncounted (`None`) and the views say so.

use crate::config::Config;
use crate::error::Result;

/// Counts one part from the wrapper's config: `None` where anatomy cannot count it.
pub type Counter = fn(&Config) -> Result<Option<u64>>;

/// The sizes of a SigLIP vision tower (`SiglipVisionConfig`), or `None` for another kind.
struct Siglip {
    hidden: u64,
    intermediate: u64,
    layers: u64,
    channels: u64,
    patches: u64,
    patch: u64,
    head: bool,
}

fn siglip_config(top: &Config) -> Result<Option<Siglip>> {
    let v = top.detached("vision_config")?;
    if let Some(v) = &v {
        if !matches!(
            v.opt_string("model_type")?.as_deref(),
            None | Some("siglip_vision_model")
        ) {
            return Ok(None);
        }
    }
    // The class's default where the wrapper's config leaves a size out (or has no tower config).
    let size = |key: &str, default: u64| match &v {
        Some(v) => v.size(key, Some(default)),
        None => Ok(default),
    };
    let (image, patch) = (size("image_size", 224)?, size("patch_size", 16)?);
    Ok(Some(Siglip {
        hidden: size("hidden_size", 768)?,
        intermediate: size("intermediate_size", 3072)?,
        layers: size("num_hidden_layers", 12)?,
        channels: size("num_channels", 3)?,
        patches: (image / patch) * (image / patch),
        patch,
        head: match &v {
            Some(v) => v.flag("vision_use_head", true)?,
            None => true,
        },
    }))
}

/// Gemma 3's vision tower: SigLIP's patch embedding (a convolution) and learned positions, its
/// encoder layers (LayerNorms, attention with biases, a biased two-layer MLP), its last
/// LayerNorm and, where `vision_use_head`, its attention-pooling head.
pub fn gemma3_vision(top: &Config) -> Result<Option<u64>> {
    let Some(s) = siglip_config(top)? else {
        return Ok(None);
    };
    let (d, i) = (s.hidden as u128, s.intermediate as u128);
    let mlp = 2 * d * i + i + d;
    let embeddings = s.channels as u128 * d * (s.patch as u128).pow(2) + d + s.patches as u128 * d;
    let layer = 4 * (d * d + d) + 4 * d + mlp;
    // A probe, a multi-head attention with its fused in-projection, a LayerNorm and an MLP.
    let head = if s.head {
        d + 4 * (d * d + d) + 2 * d + mlp
    } else {
        0
    };
    fit(top, embeddings + s.layers as u128 * layer + 2 * d + head)
}

/// Gemma 3's projector: the vision width mapped to the text width, and an RMSNorm before it.
pub fn gemma3_projector(top: &Config) -> Result<Option<u64>> {
    let Some(s) = siglip_config(top)? else {
        return Ok(None);
    };
    let text = top
        .detached("text_config")?
        .map(|t| t.size("hidden_size", Some(2304)))
        .transpose()?
        .unwrap_or(2304);
    fit(top, s.hidden as u128 * text as u128 + s.hidden as u128)
}

/// Fuyu's patch embedding: one biased linear map from a patch's pixels to the text width.
pub fn fuyu_patches(top: &Config) -> Result<Option<u64>> {
    let pixels = top.size("patch_size", Some(30))?.pow(2) as u128
        * top.size("num_channels", Some(3))? as u128;
    let text = top
        .detached("text_config")?
        .map(|t| t.size("hidden_size", Some(4096)))
        .transpose()?
        .unwrap_or(4096) as u128;
    fit(top, pixels * text + text)
}

fn fit(top: &Config, n: u128) -> Result<Option<u64>> {
    u64::try_from(n).map(Some).map_err(|_| {
        top.err(
            "vision_config",
            "gives a tower too large to count in 64 bits",
        )
    })
}
