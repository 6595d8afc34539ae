//! Granite Docling's vision tower, its connector and its density router.

use super::blip::{qformer_cross, qformer_self};
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

/// CLIPVisionConfig's defaults, which Granite 4 Vision's class builds its tower of.
const CLIP: VitDefaults = (224, 32, 768, 3072, 12);

/// Granite 4 Vision's vision tower: CLIP's vision model (its class's default) or SigLIP's
/// (with its pooling head where `vision_use_head`).
pub fn granite4_vision_tower(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    match granite4_vit(top)? {
        Some((t, false)) => t.clip_named().done(top, "vision_config"),
        Some((s, true)) => {
            let head = flag(&s.v, "vision_use_head", true)?;
            s.siglip_named(head).done(top, "vision_config")
        }
        None => Ok(None),
    }
}

/// Granite 4 Vision's deep-stack projectors: a window Q-Former per `deepstack_layer_map` entry.
pub fn granite4_vision_layerwise(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    let Some(map) = top.list_any(
        "deepstack_layer_map",
        |x| x.as_array().map(|_| ()),
        "a [vision layer, text layer] pair",
    )?
    else {
        return Err(top.err("deepstack_layer_map", "is missing; Granite 4 Vision builds a projector per [vision layer, text layer] pair it lists"));
    };
    window_qformers(top, "deep-stack projector", map.len() as u128)
}

/// Granite 4 Vision's spatial projectors: four window Q-Formers, one per offset of its
/// spatially sampled features.
pub fn granite4_vision_spatial(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    window_qformers(top, "spatial projector", 4)
}

/// `count` window Q-Formers, each its learned queries (query_side² of the window, by
/// `downsample_rate` "query_side/window_side") and window positions, a BLIP-2 Q-Former as wide as
/// the tower (cross-attending to it; one layer, cross-attending in every layer, where the config
/// gives no `qformer_config`, else Blip2QFormerConfig's defaults for what it leaves out), a
/// LayerNorm and a biased map into the text width.
fn window_qformers(top: &Config, title: &str, count: u128) -> Result<Option<Vec<TowerBlock>>> {
    let Some((t, _)) = granite4_vit(top)? else {
        return Ok(None);
    };
    let d = t.hidden;
    let rate = top.opt_string("downsample_rate")?.unwrap_or_default();
    let sides: Option<(u128, u128)> = rate
        .split_once('/')
        .and_then(|(q, w)| Some((q.trim().parse().ok()?, w.trim().parse().ok()?)));
    let Some((query, window)) = sides else {
        return Err(top.err(
            "downsample_rate",
            format!("is {rate:?}; it must be a fraction \"query_side/window_side\" of whole numbers, as \"1/4\""),
        ));
    };
    let Some(q) = sub_config(top, "qformer_config", &["blip_2_qformer"])? else {
        return Ok(None);
    };
    // Without a qformer_config, the wrapper's class builds one of a layer, cross-attending in
    // every layer; a given one takes Blip2QFormerConfig's defaults (twelve, every other).
    let (depth, frequency) = match q {
        Some(_) => (12, 2),
        None => (1, 1),
    };
    let inter = size(&q, "intermediate_size", 3072)? as u128;
    let layers = size(&q, "num_hidden_layers", depth)?;
    if let Some(q) = &q {
        // Named layer by layer below: bounded as a language model's layers are.
        q.bounded("num_hidden_layers", layers, crate::config::MAX_LAYERS)?;
    }
    let every = size(&q, "cross_attention_frequency", frequency)?;
    let text = flat_text_hidden(top, 4096)? as u128;
    let mut n = Named::default();
    let mut step = n
        .layers(title, count)
        .t("{i}.query", &[1, query * query, d])
        .t("{i}.image_positions", &[1, window * window, d])
        .layer_norm("{i}.qformer.layernorm", d);
    for j in 0..layers {
        let l = format!("{{i}}.qformer.encoder.layer.{j}");
        step = qformer_self(step, &l, d, inter, false);
        if j % every == 0 {
            step = qformer_cross(step, &l, d, d);
        }
    }
    step.layer_norm("{i}.norm", d)
        .linear("{i}.out_linear", text, d, true);
    n.done(top, "deepstack_layer_map")
}

/// Granite 4 Vision's tower: CLIP's (its class's default), or SigLIP's (`true`).
fn granite4_vit<'a>(top: &Config<'a>) -> Result<Option<(Vit<'a>, bool)>> {
    if let Some(t) = vit(top, &["clip_vision_model"], CLIP)? {
        return Ok(Some((t, false)));
    }
    Ok(siglip(top)?.map(|s| (s, true)))
}

/// Granite 4 Vision's learned row-end feature (LLaVA-NeXT's), as wide as the language model.
pub fn granite4_vision_newline(top: &Config) -> Result<Option<Vec<TowerBlock>>> {
    match granite4_vit(top)? {
        Some(_) => newline(top),
        None => Ok(None),
    }
}
