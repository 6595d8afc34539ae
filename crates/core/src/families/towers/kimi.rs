//! Kimi K2.5's vision tower (MoonViT) and projector, named as its published checkpoint stores
//! them (Moonshot's code's names, which transformers renames on load: `wqkv` split into q, k and
//! v, `norm0` to `norm1` …).

use super::*;

/// Kimi K2.5's vision tower: a biased patch convolution, a learned grid of positions
/// (`pos_emb_height × pos_emb_width`, resampled to each image; the time axis is a fixed
/// sinusoid, not stored), layers of two LayerNorms, a biased fused QKV and output projection
/// (positions by 2-D RoPE: no table) and a biased two-layer MLP, and a last LayerNorm.
pub fn kimi_k25_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = kimi_vision(top)? else {
        return Ok(None);
    };
    let d = size(&v, "hidden_size", 1152)? as u128;
    let i = size(&v, "intermediate_size", 4304)? as u128;
    let Some(patch) = square(&v, "patch_size", 14)? else {
        return Ok(None);
    };
    let p = patch as u128;
    let (rows, cols) = (
        size(&v, "pos_emb_height", 64)? as u128,
        size(&v, "pos_emb_width", 64)? as u128,
    );
    let l = "encoder.blocks.{i}";
    let mut n = Named::default();
    n.step("patch embedding")
        .linear_shaped("patch_embed.proj", &[d, 3, p, p], true)
        .t("patch_embed.pos_emb.weight", &[rows, cols, d]);
    n.layers("encoder layer", size(&v, "num_hidden_layers", 27)? as u128)
        .layer_norm(&format!("{l}.norm0"), d)
        .linear(&format!("{l}.wqkv"), 3 * d, d, true)
        .linear(&format!("{l}.wo"), d, d, true)
        .layer_norm(&format!("{l}.norm1"), d)
        .linear(&format!("{l}.mlp.fc0"), i, d, true)
        .linear(&format!("{l}.mlp.fc1"), d, i, true);
    n.step("last norm").layer_norm("encoder.final_layernorm", d);
    n.done(top, "vision_config")
}

/// Kimi K2.5's projector: a LayerNorm `projection_hidden_size` wide over each patch, then the
/// `merge_kernel_size` patches joined through a biased map of their width, GELU, and a biased
/// map to the text width.
pub fn kimi_k25_projector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = kimi_vision(top)? else {
        return Ok(None);
    };
    let d = size(&v, "hidden_size", 1152)? as u128;
    let [a, b] = pair(v.as_ref(), "merge_kernel_size", [2, 2])?;
    let joined = d * a * b;
    let norm = top.size("projection_hidden_size", Some(1152))? as u128;
    let text = text_hidden(top, 7168)? as u128;
    let mut n = Named::default();
    n.step("projector")
        .layer_norm("pre_norm", norm)
        .linear("proj.0", joined, joined, true)
        .linear("proj.2", text, joined, true);
    n.done(top, "text_config")
}

fn kimi_vision<'a>(top: &Config<'a>) -> Result<Option<Option<Config<'a>>>> {
    vision(top, &["kimi_k25_vision"])
}
