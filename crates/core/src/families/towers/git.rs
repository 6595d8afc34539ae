//! GIT's parts beside its decoder: CLIP's vision tower, the visual projection, the learned
//! vector per video frame, and how an image runs through them into the decoder.

use super::*;
use crate::spec::{GitVision, ImageEncoder, ImageInput, Placeholders};

/// GIT's image encoder, CLIP's vision tower: its patch convolution (without a bias), class
/// embedding and learned positions (one more than the patches), LayerNorms before and after,
/// and its encoder layers (LayerNorms, attention with biases, a biased two-layer MLP).
pub fn git_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    match vit(top, &["git_vision_model"], GIT_VISION)? {
        Some(t) => t
            .clip_named()
            .under("vision_model.")
            .done(top, "vision_config"),
        None => Ok(None),
    }
}

/// `GitVisionConfig`'s defaults (CLIP ViT-B/16).
const GIT_VISION: VitDefaults = (224, 16, 768, 3072, 12);

/// GIT's visual projection: the vision width mapped to the text width with a bias, then a
/// LayerNorm.
pub fn git_projection(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = vision(top, &["git_vision_model"])? else {
        return Ok(None);
    };
    let vd = size(&v, "hidden_size", 768)? as u128;
    let d = top.size("hidden_size", Some(768))? as u128;
    let mut n = Named::default();
    n.step("projection")
        .linear("visual_projection.0", d, vd, true)
        .layer_norm("visual_projection.1", d);
    n.done(top, "hidden_size")
}

/// GIT's learned vector per video frame (`num_image_with_embedding`), one vision width each;
/// none without the key.
pub fn git_frames(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = vision(top, &["git_vision_model"])? else {
        return Ok(None);
    };
    let frames = top.opt_size("num_image_with_embedding")?.unwrap_or(0) as u128;
    let mut n = Named::default();
    n.layers("frame embedding", frames)
        .t("{i}", &[1, 1, size(&v, "hidden_size", 768)? as u128]);
    n.done(top, "num_image_with_embedding")
}

/// How GIT runs an image: CLIP's vision model (its sizes, heads, ε and activation from the
/// vision config, `GitVisionConfig`'s defaults where it has none) to its last LayerNorm, and the
/// visual projection (and the frames' vectors it stores); the features come before the prompt,
/// which holds no placeholder. A rectangular image size is counted, not run.
pub fn git_image(top: &Config) -> Result<Option<ImageInput>> {
    let Some(t) = vit(top, &["git_vision_model"], GIT_VISION)? else {
        return Ok(None);
    };
    let Some(image) = square(&t.v, "image_size", GIT_VISION.0)? else {
        return Ok(None);
    };
    // `GitVisionConfig`'s: 12 heads, ε 1e-5, quick GELU.
    let (heads, eps, act) = match &t.v {
        Some(c) => (
            c.size("num_attention_heads", Some(12))?,
            c.float("layer_norm_eps", 1e-5)?,
            activation(c, "hidden_act", "quick_gelu")?,
        ),
        None => (12, 1e-5, Some(Act::QuickGelu)),
    };
    let Some(act) = act else {
        return Ok(None);
    };
    Ok(Some(ImageInput {
        token: None,
        placeholders: Placeholders::Before,
        encoder: ImageEncoder::Git(GitVision {
            tower: t.runs(
                top,
                "git.image_encoder.vision_model.",
                image,
                heads,
                eps,
                act,
            )?,
            projector: "git.visual_projection.visual_projection.".into(),
            frames: top.opt_size("num_image_with_embedding")?.unwrap_or(0),
        }),
    }))
}
