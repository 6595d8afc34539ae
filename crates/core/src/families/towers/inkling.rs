//! Inkling 2's (and Inkling 2 Loop's) vision tower and projector.

use super::*;

/// Inkling 2's vision backbone: a linear map of each patch, a class token, learned positions
/// over a `posemb_grid_size`² grid (resampled to each image) and the class token's own, a
/// LayerNorm; layers of LayerNorms, biased attention and a biased two-layer MLP, each sublayer's
/// output scaled by a learned vector.
pub fn inkling2_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = inkling2_part(top)? else {
        return Ok(None);
    };
    let d = size(&v, "hidden_size", 1024)? as u128;
    let i = intermediate(&v, d)?;
    let layers = size(&v, "num_hidden_layers", 23)? as u128;
    let Some(patch) = square(&v, "patch_size", 20)? else {
        return Ok(None);
    };
    let pixels = size(&v, "num_channels", 3)? as u128 * (patch as u128).pow(2);
    let grid = size(&v, "posemb_grid_size", 32)? as u128;
    let l = "layers.{i}";
    let at = |name: &str| format!("{l}.{name}");
    let mut n = Named::default();
    n.step("patch embedding")
        .t("embeddings.patch_embedding.weight", &[d, pixels])
        .t("embeddings.class_embedding", &[d])
        .t("embeddings.position_embedding", &[grid * grid, d])
        .t("embeddings.cls_position_embedding", &[d])
        .layer_norm("ln_pre", d);
    n.layers("encoder layer", layers)
        .layer_norm(&at("ln_1"), d)
        .linear(&at("self_attn.q_proj"), d, d, true)
        .linear(&at("self_attn.k_proj"), d, d, true)
        .linear(&at("self_attn.v_proj"), d, d, true)
        .linear(&at("self_attn.out_proj"), d, d, true)
        .t(&at("ls_1.gamma"), &[d])
        .layer_norm(&at("ln_2"), d)
        .linear(&at("mlp.c_fc"), i, d, true)
        .linear(&at("mlp.c_proj"), d, i, true)
        .t(&at("ls_2.gamma"), &[d]);
    n.done(top, "vision_config")
}

/// Inkling 2's projector: each spatial_merge_size² patches joined, a map to
/// `projection_hidden_dim` and one into the text width (`text_hidden_size`, which its class
/// requires to be the language model's), biased where `projector_bias`.
pub fn inkling2_projector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    projector(top, 4608, 4608)
}

/// Inkling 2 Loop's projector: Inkling 2's, into its language model's narrower default width
/// (2,304) where the wrapper has no vision config.
pub fn inkling2_loop_projector(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    projector(top, 2304, 2304)
}

/// The projector, into `absent` where the wrapper has no vision config, and a language model
/// `text` wide by default.
fn projector(top: &Config, absent: u64, text: u64) -> Result<Option<Vec<TowerBlock>>> {
    let Some(v) = inkling2_part(top)? else {
        return Ok(None);
    };
    let d = size(&v, "hidden_size", 1024)? as u128;
    let joined = d * (size(&v, "spatial_merge_size", 2)? as u128).pow(2);
    let inner = size(&v, "projection_hidden_dim", 4096)? as u128;
    let out = match &v {
        Some(c) => c.size("text_hidden_size", Some(4608))?,
        None => absent,
    };
    let text = text_hidden(top, text)?;
    if out != text {
        return Err(top.err(
            "vision_config.text_hidden_size",
            format!("is {out}; the class requires the language model's width ({text})"),
        ));
    }
    let bias = flag(&v, "projector_bias", false)?;
    let mut n = Named::default();
    n.step("projector")
        .linear("proj_in", inner, joined, bias)
        .linear("proj_out", out as u128, inner, bias);
    n.done(top, "vision_config")
}

/// The vision config, read through its class's attribute_map.
fn inkling2_part<'a>(top: &Config<'a>) -> Result<Option<Option<Config<'a>>>> {
    const RENAMES: &[(&str, &str)] = &[
        ("native_patch_size", "patch_size"),
        ("adapter_merge_size", "spatial_merge_size"),
    ];
    Ok(vision(top, &["inkling2_vision"])?.map(|v| v.map(|v| v.renamed(RENAMES))))
}

/// The MLP's width: `intermediate_size`, else hidden × `mlp_ratio` as the class sets it.
fn intermediate(v: &Option<Config>, d: u128) -> Result<u128> {
    if let Some(c) = v {
        if let Some(i) = c.opt_size("intermediate_size")? {
            return Ok(i as u128);
        }
        let ratio = c.float("mlp_ratio", 4.0)?;
        if !(ratio.is_finite() && ratio > 0.0) {
            return Err(c.err(
                "mlp_ratio",
                format!("is {ratio}; it must be a positive number"),
            ));
        }
        return Ok((d as f64 * ratio) as u128);
    }
    Ok(4 * d)
}
