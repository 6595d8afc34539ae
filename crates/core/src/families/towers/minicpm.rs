//! MiniCPM-V 4.6's, 4.7's and MiniCPM-OCR's vision tower and merger (one class's parts under
//! three model types).

use super::*;

/// The vision config kinds of the three.
const KINDS: &[&str] = &[
    "minicpmv4_6_vision",
    "minicpmv4_7_vision",
    "minicpm_ocr_vision",
];

/// The vision tower: SigLIP's encoder without its pooling head (positions by the nearest of its
/// learned grid), and the window merger run inside it: an attention over each
/// `window_kernel_size` window's patches (a LayerNorm before, biased q, k, v and output
/// projections), then the window's patches joined, normed and mapped back to the width through
/// a biased MLP `window_kernel_size` times as wide as the tower's.
pub fn minicpmv_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(s) = vit(top, KINDS, (224, 16, 768, 3072, 12))? else {
        return Ok(None);
    };
    let (d, i) = (s.hidden, s.intermediate);
    let [a, b] = pair(s.v.as_ref(), "window_kernel_size", [2, 2])?;
    let mut n = s.siglip_named(false);
    n.step("window merger")
        .layer_norm("vit_merger.layer_norm1", d)
        .linear("vit_merger.self_attn.q_proj", d, d, true)
        .linear("vit_merger.self_attn.k_proj", d, d, true)
        .linear("vit_merger.self_attn.v_proj", d, d, true)
        .linear("vit_merger.self_attn.out_proj", d, d, true)
        .layer_norm("vit_merger.pre_norm", d * a * b)
        .linear("vit_merger.linear_1", i * a * b, d * a * b, true)
        .linear("vit_merger.linear_2", d, i * a * b, true);
    n.done(top, "vision_config")
}

/// The merger: `merger_times` downsampling MLPs, each joining 2×2 patches (four times the
/// tower's width, normed) through two biased maps, back to the tower's width but the last,
/// which maps into the text width.
pub fn minicpmv_merger(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(s) = vit(top, KINDS, (224, 16, 768, 3072, 12))? else {
        return Ok(None);
    };
    let times = top.size("merger_times", Some(1))? as u128;
    let (d, text) = (s.hidden, text_hidden(top, 4096)? as u128);
    let joined = 4 * d;
    let mut n = Named::default();
    let l = "mlp.{i}";
    n.layers("downsampling MLP", times - 1)
        .layer_norm(&format!("{l}.pre_norm"), joined)
        .linear(&format!("{l}.linear_1"), joined, joined, true)
        .linear(&format!("{l}.linear_2"), d, joined, true);
    let last = format!("mlp.{}", times - 1);
    n.step("projector")
        .layer_norm(&format!("{last}.pre_norm"), joined)
        .linear(&format!("{last}.linear_1"), joined, joined, true)
        .linear(&format!("{last}.linear_2"), text, joined, true);
    n.done(top, "merger_times")
}
