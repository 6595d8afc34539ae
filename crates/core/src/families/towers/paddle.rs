//! PaddleOCR-VL's vision tower and projector, under the names its published checkpoint stores
//! (`visual.vision_model.`, `mlp_AR.`).

use super::*;

/// PaddleOCR-VL's vision tower: SigLIP's vision model without its head (a biased patch
/// convolution, learned positions over `image_size`'s patches, which each image's grid
/// resamples, the encoder and a last LayerNorm).
pub fn paddleocr_vl_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(s) = paddle(top)? else {
        return Ok(None);
    };
    s.siglip_named(false)
        .under("vision_model.")
        .done(top, "vision_config")
}

/// PaddleOCR-VL's projector: a LayerNorm of the tower's features, then spatial_merge_size²
/// neighbours joined and mapped by two biased maps (GELU between) into the language model's
/// width.
pub fn paddleocr_vl_projector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(s) = paddle(top)? else {
        return Ok(None);
    };
    let m = size(&s.v, "spatial_merge_size", 2)? as u128;
    let joined = s.hidden * m * m;
    let text = flat_text_hidden(top, 1024)? as u128;
    let mut n = Named::default();
    n.step("projector")
        .layer_norm("pre_norm", s.hidden)
        .linear("linear_1", joined, joined, true)
        .linear("linear_2", text, joined, true);
    n.done(top, "vision_config")
}

/// PaddleOCR-VL's vision sizes (`PaddleOCRVisionConfig`).
fn paddle<'a>(top: &Config<'a>) -> Result<Option<Vit<'a>>> {
    vit(top, &["paddleocr_vl_vision"], (384, 14, 1152, 4304, 27))
}
