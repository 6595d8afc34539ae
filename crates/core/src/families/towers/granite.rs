//! Granite Docling's vision tower, its connector and its density router.

use super::*;

/// Granite Docling's vision tower: SigLIP's vision model without its head, and the connector
/// inside it: a LayerNorm, a coarse path (the pixel shuffle's scale_factor² patches joined and
/// mapped to `out_hidden_size`, beside a deep-stack merger per `deepstack_visual_indexes` entry:
/// a LayerNorm and two biased maps), a fine path at half the scale where `use_fine_route`, a
/// LayerNorm, a bias-free map and a last LayerNorm.
pub fn granite_docling_vision(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(s) = docling(top)? else {
        return Ok(None);
    };
    let d = s.hidden;
    let out = size(&s.v, "out_hidden_size", 1024)? as u128;
    let scale = size(&s.v, "scale_factor", 4)? as u128;
    let stacked = match s
        .v
        .as_ref()
        .map(|v| v.list_any("deepstack_visual_indexes", |x| x.as_u64(), "a layer index"))
    {
        Some(list) => list?.map_or(3, |l| l.len()),
        None => 3,
    } as u128;
    let mut routes = vec![("coarse", scale)];
    if flag(&s.v, "use_fine_route", true)? {
        routes.push(("fine", scale / 2));
    }
    let mut n = s.siglip_named(false);
    n.step("connector input").layer_norm("connector.ln_in", d);
    for (route, scale) in routes {
        let joined = d * scale * scale;
        let at = format!("connector.{route}");
        n.step(&format!("{route} path"))
            .linear(&format!("{at}.projection"), out, joined, false);
        n.layers(&format!("{route} deep-stack merger"), stacked)
            .layer_norm(&format!("{at}.deepstack_mergers.{{i}}.layer_norm"), joined)
            .linear(
                &format!("{at}.deepstack_mergers.{{i}}.linear_1"),
                out,
                joined,
                true,
            )
            .linear(
                &format!("{at}.deepstack_mergers.{{i}}.linear_2"),
                out,
                out,
                true,
            );
    }
    n.step("connector output")
        .layer_norm("connector.ln_mid", out)
        .linear("connector.mlp_fc2", out, out, false)
        .layer_norm("connector.ln_out", out);
    n.done(top, "vision_config")
}

/// Granite Docling's density router, where `density_router_hidden_size` builds one: attention
/// pooling of the tower's features (a biased map to one score), a LayerNorm, and two biased maps
/// to one logit.
pub fn granite_docling_router(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(s) = docling(top)? else {
        return Ok(None);
    };
    let Some(h) = top.opt_size("density_router_hidden_size")? else {
        return not_built();
    };
    let (d, h) = (s.hidden, h as u128);
    let mut n = Named::default();
    n.step("density router")
        .linear("att", 1, d, true)
        .layer_norm("norm", d)
        .linear("fc1", h, d, true)
        .linear("fc2", 1, h, true);
    n.done(top, "density_router_hidden_size")
}

/// Granite Docling's vision sizes (`GraniteDoclingVisionConfig`: Idefics3's, 768 wide over
/// 512-pixel images of 16-pixel patches).
fn docling<'a>(top: &Config<'a>) -> Result<Option<Vit<'a>>> {
    vit(top, &["granite_docling_vision"], (512, 16, 768, 3072, 12))
}
