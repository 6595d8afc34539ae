//! The NumPy file's image encoders: for each, the pieces of `py/image.py` (and of the other
//! fragments) it runs and the settings it reads from `CONFIG["image"]`, in one arm the compiler
//! names for a new encoder.

use super::act_name;
use crate::render::fragment::Pieces;
use crate::spec::{AnyRes, ImageEncoder, Llava, Spec, VisionTower};
use serde_json::{json, Value};

/// Every piece an encoder may run: each is decided for every model, on for its encoder's.
const PIECES: [&str; 20] = [
    "image_llava",
    "image_llava_square",
    "image_anyres",
    "image_llava_next",
    "image_llava_onevision",
    "image_clip",
    "image_git",
    "image_siglip",
    "image_gemma3",
    "image_paligemma",
    "image_qwen",
    "image_qwen2_vl",
    "image_qwen2_5_vl",
    "image_qwen3_vl",
    "image_llama4",
    "image_pixtral",
    "image_internvl",
    "image_aya",
    "image_deepseek_vl",
    "image_idefics3",
];

/// An encoder's pieces, its tower and its own settings.
fn plan<'a>(spec: &Spec, e: &'a ImageEncoder) -> (&'static [&'static str], &'a VisionTower, Value) {
    match e {
        ImageEncoder::Llava(l) => (
            &["image_llava_square", "image_llava", "image_clip"],
            &l.tower,
            llava(l),
        ),
        ImageEncoder::LlavaNext(l) => (
            &[
                "image_llava_next",
                "image_anyres",
                "image_llava",
                "image_clip",
            ],
            &l.base.tower,
            with_anyres(llava(&l.base), &l.anyres),
        ),
        ImageEncoder::LlavaOnevision(o) => (
            &["image_llava_onevision", "image_anyres", "image_siglip"],
            &o.tower,
            with_anyres(
                json!({
                    "projector": o.projector, "layers": o.layers,
                    "projector_act": act_name(o.projector_act), "projector_bias": o.projector_bias,
                }),
                &o.anyres,
            ),
        ),
        ImageEncoder::Git(g) => (
            &["image_git", "image_clip"],
            &g.tower,
            json!({ "projector": g.projector }),
        ),
        ImageEncoder::Gemma3(g) => (
            &["image_gemma3", "image_siglip"],
            &g.tower,
            json!({ "projector": g.projector, "tokens": g.tokens, "pool": g.pool() }),
        ),
        ImageEncoder::PaliGemma(p) => (
            &["image_paligemma", "image_siglip"],
            &p.tower,
            json!({ "projector": p.projector }),
        ),
        // The Qwen VL models' take 3-D positions.
        ImageEncoder::Qwen2Vl(q) => (
            &["image_qwen", "image_qwen2_vl"],
            &q.tower,
            json!({ "frames": q.frames, "merge": q.merge, "theta": q.theta }),
        ),
        ImageEncoder::Qwen25Vl(q) => (
            &["image_qwen", "image_qwen2_5_vl"],
            &q.base.tower,
            json!({
                "frames": q.base.frames, "merge": q.base.merge, "theta": q.base.theta,
                "window": q.window, "full": q.full,
            }),
        ),
        ImageEncoder::Qwen3Vl(q) => (
            &["image_qwen", "image_qwen3_vl"],
            &q.base.tower,
            json!({
                "frames": q.base.frames, "merge": q.base.merge, "theta": q.base.theta,
                "positions": q.positions, "deepstack": q.deepstack,
            }),
        ),
        ImageEncoder::Pixtral(p) => (
            &["image_pixtral"],
            &p.tower,
            json!({
                "merge": p.merge, "theta": p.theta, "layer": p.layer, "projector": p.projector,
                "projector_eps": spec.norm.eps, "projector_act": act_name(p.projector_act),
                "projector_bias": p.projector_bias,
            }),
        ),
        ImageEncoder::Llama4(l) => (
            &["image_llama4"],
            &l.tower,
            json!({ "shuffle": l.shuffle, "theta": l.theta, "projector": l.projector }),
        ),
        ImageEncoder::InternVl(i) => (
            &["image_internvl"],
            &i.tower,
            json!({
                "rms": i.rms, "qkv_bias": i.qkv_bias, "qk_norm": i.qk_norm,
                "positions": i.positions, "last_norm": i.last_norm, "shuffle": i.shuffle,
                "projector": i.projector, "projector_act": act_name(i.projector_act),
            }),
        ),
        ImageEncoder::DeepseekVl(d) => (
            &["image_deepseek_vl", "image_siglip"],
            &d.tower,
            json!({ "projector": d.projector }),
        ),
        ImageEncoder::Idefics3(i) => (
            &["image_idefics3", "image_siglip"],
            &i.tower,
            json!({ "shuffle": i.shuffle, "projector": i.projector }),
        ),
        ImageEncoder::Aya(a) => (
            &["image_aya", "image_siglip"],
            &a.tower,
            json!({
                "layers_run": a.layers_run(), "last_norm": a.last_norm, "shuffle": a.shuffle,
                "projector": a.projector, "projector_norm": a.projector_norm,
            }),
        ),
    }
}

/// LLaVA's settings (LLaVA-NeXT's tiles' too).
fn llava(l: &Llava) -> Value {
    json!({
        "projector": l.projector, "layers": l.layers, "drop_class": l.drop_class,
        "projector_act": act_name(l.projector_act), "projector_bias": l.projector_bias,
        "projector_norm": l.projector_norm,
    })
}

/// `settings` with the tiles' own: their canvases, the newline's name, the features' bound.
fn with_anyres(mut settings: Value, a: &AnyRes) -> Value {
    settings["pinpoints"] = json!(a.pinpoints);
    settings["newline"] = json!(a.newline);
    settings["most"] = json!(a.most);
    settings
}

/// The image pieces of `spec`'s file: the encoder's own; whether the placeholders' rows take
/// the features (GIT's come before the prompt instead), and whether they see each other both
/// ways (Gemma 3's, GIT's).
pub(super) fn pieces(spec: &Spec, p: &mut Pieces) {
    let on = spec
        .image
        .as_ref()
        .map_or(&[][..], |i| plan(spec, &i.encoder).0);
    for name in PIECES {
        p.set(name, on.contains(&name));
    }
    let image = spec.image.as_ref();
    p.set("image", image.is_some());
    p.set("image_placed", image.is_some_and(|i| i.token.is_some()));
    p.set(
        "image_both_ways",
        image.is_some_and(|i| i.encoder.both_ways()),
    );
}

/// `CONFIG["image"]`: the encoder's settings, its tower's and the placeholder id (null where
/// the model runs no image).
pub(super) fn config(spec: &Spec) -> Value {
    let Some(i) = &spec.image else {
        return Value::Null;
    };
    let (_, t, mut image) = plan(spec, &i.encoder);
    for (key, value) in [
        ("token", json!(i.token)),
        ("tower", json!(t.prefix)),
        ("channels", json!(t.channels)),
        ("image", json!(t.image)),
        ("patch", json!(t.patch)),
        ("heads", json!(t.heads)),
        ("depth", json!(t.depth)),
        ("eps", json!(t.eps)),
        ("act", json!(act_name(t.act))),
    ] {
        image[key] = value;
    }
    image
}
