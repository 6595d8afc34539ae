//! MiniMax-M3's vision tower and its two projectors, named as its published checkpoint stores
//! them.

use super::*;

/// MiniMax-M3's vision tower: a 3-D patch convolution without a bias, a LayerNorm before the
/// encoder, and CLIP's encoder layers (positions by 3-D RoPE: no table, and no last norm).
pub fn minimax_m3_vl_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(t) = vit(top, KINDS, (2016, 14, 1280, 5120, 32))? else {
        return Ok(None);
    };
    let Some(frames) = square(&t.v, "temporal_patch_size", 2)? else {
        return Ok(None);
    };
    let (d, p) = (t.hidden, t.patch);
    let mut n = Named::default();
    n.step("patch embedding").t(
        "embeddings.patch_embedding.weight",
        &[d, t.channels, frames as u128, p, p],
    );
    n.step("first norm").layer_norm("pre_layrnorm", d);
    t.encoder(&mut n);
    n.done(top, "vision_config")
}

/// MiniMax-M3's projector: each patch through a biased GELU MLP `projector_hidden_size` wide
/// into the text width.
pub fn minimax_m3_vl_projector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = minimax_vision(top)? else {
        return Ok(None);
    };
    let d = size(&v, "hidden_size", 1280)? as u128;
    minimax_mlp(top, "projector", d)
}

/// MiniMax-M3's patch merger: spatial_merge_size² projected patches joined, through a second
/// biased GELU MLP into one text-wide token.
pub fn minimax_m3_vl_merger(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = minimax_vision(top)? else {
        return Ok(None);
    };
    let merge = size(&v, "spatial_merge_size", 2)? as u128;
    let text = text_hidden(top, 6144)? as u128;
    minimax_mlp(top, "patch merger", text * merge * merge)
}

/// A biased two-layer MLP from `width` through `projector_hidden_size` to the text width.
fn minimax_mlp(top: &Config, title: &str, width: u128) -> Result<Option<Vec<TowerBlock>>> {
    let inner = top.size("projector_hidden_size", Some(6144))? as u128;
    let text = text_hidden(top, 6144)? as u128;
    let mut n = Named::default();
    n.step(title)
        .linear("linear_1", inner, width, true)
        .linear("linear_2", text, inner, true);
    n.done(top, "text_config")
}

fn minimax_vision<'a>(top: &Config<'a>) -> Result<Option<Option<Config<'a>>>> {
    vision(top, KINDS)
}

const KINDS: &[&str] = &["minimax_m3_vl_vision"];
