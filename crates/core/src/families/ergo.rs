//! Ergo (`ergo`, Amazon): Gemma 2's sandwich-normed layers, each sublayer joining the stream
//! through a learned gate rather than an add (`Residual::Gated`); a fused QKV with Q and K
//! RMS-normed per head; every n-th layer attends to the whole context without positions
//! (its logits scaled by `global_attention_scale` where a config sets one), the others slide
//! and rotate interleaved pairs. The first layers have a plain ReLU² MLP, the rest a mixture of
//! ReLU² experts chosen by sigmoid scores and a correction bias, each expert's output RMS-normed
//! by a weight of its own, beside a shared expert normed likewise. Defaults follow
//! `ErgoConfig`.

use super::llama::Defaults;
use super::llama::{
    self, Bias, Experts, LlamaLike, MoeLayers, NoRope, Renormalize, Routed, SharedMlp,
};
use super::llama::{Unlisted, Windows};
use super::registry::d;
use crate::config::Config;
use crate::error::Result;
use crate::layers::LayerSet;
use crate::spec::{AttnSpan, Layout, NormPlace, QkNorm, Qkv, Residual, Scoring, Spec};
use serde_json::{Map, Value};

const ERGO: LlamaLike = LlamaLike {
    qkv_bias: Bias::Never,
    o_bias: Bias::Never,
    mlp_bias: Bias::Never,
    qkv: Qkv::Stacked,
    qk_norm: QkNorm::PerHead,
    place: NormPlace::Sandwich,
    interleaved_rope: true,
    windows: Windows::LayerTypes {
        window: Some(512),
        unlisted: Unlisted::FullEveryKey("global_attention_every_n_layers", 4),
    },
    no_rope: NoRope::FullLayers,
    gated: false,
    experts: Experts::Routed(Routed {
        count: ("num_experts", 256),
        top_k: 8,
        width: Some(("moe_intermediate_size", 4096)),
        renormalize: Renormalize::Always,
        layers: MoeLayers::Types(Some("num_dense_blocks"), 1),
        shared: Some(SharedMlp::of("shared_intermediate_size", 8192)),
        scoring: Scoring::Sigmoid,
        stacked_in_out: true,
        correction_bias: Bias::Always,
        renorm_eps: 1e-20,
        scaling: Some(("moe_routed_scaling_factor", std::f64::consts::SQRT_2 * 2.0)),
        ..Routed::MIXTRAL
    }),
    layout: Layout::Ergo,
    ..LlamaLike::llama(Defaults {
        act: "relu2",
        ..d(
            262_144,
            8192,
            32_768,
            64,
            64,
            Some(8),
            None,
            524_288,
            1e-12,
            1_000_000.0,
            false,
        )
    })
};

/// The config class's `attribute_map`: released configs name the window so.
pub(super) const RENAMES: &[(&str, &str)] = &[("local_attention_window", "sliding_window")];

/// Keys that transformers' shared code reads for every model but that change nothing in
/// Ergo's: its activation is ReLU² and its head untied whatever they say (its class names no
/// tied weights). Llama's loader would read them, so they are kept from it and counted as read.
const INERT_HERE: [&str; 2] = ["hidden_act", "tie_word_embeddings"];

pub fn load(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut map: Map<String, Value> = cfg.map.clone();
    for key in INERT_HERE {
        map.remove(key);
        cfg.get(key);
    }
    // Not the dense layers' width here: transformers reads no such key for Ergo.
    map.remove("intermediate_size");
    // The dense layers' width has a key of its own.
    if let Some(w) = cfg.get("first_dense_intermediate_size") {
        map.insert("intermediate_size".into(), w.clone());
        map.remove("first_dense_intermediate_size");
    }
    // Saved configs nest the RoPE settings under the sliding layers' type; the full layers'
    // entry is null (they use no positions). A flat dict describes the sliding layers.
    if let Some(Value::Object(p)) = cfg.get("rope_parameters") {
        if p.contains_key("sliding_attention") || p.contains_key("full_attention") {
            if !matches!(p.get("full_attention"), None | Some(Value::Null)) {
                return Err(cfg.err(
                    "rope_parameters",
                    "gives the full_attention layers RoPE settings; anatomy draws Ergo's full layers without positions, as its checkpoints have them: set \"full_attention\" to null",
                ));
            }
            match p.get("sliding_attention") {
                Some(s @ Value::Object(_)) => {
                    map.insert("rope_parameters".into(), s.clone());
                }
                _ => {
                    return Err(cfg.err(
                        "rope_parameters",
                        "has no dict for \"sliding_attention\": give its rope_type and rope_theta (the sliding layers rotate)",
                    ))
                }
            }
        }
    }
    let value = Value::Object(map);
    let own = Config::new(cfg.file, &value)?.renamed(RENAMES);
    let mut s = llama::load(&own, &ERGO, model_type, family, name)?;
    cfg.read_through(
        &own,
        &[("first_dense_intermediate_size", "intermediate_size")],
    );

    // The class sizes heads by hidden_size / heads; its rotary table alone reads head_dim.
    let derived = s.hidden / s.attn.heads.max(1);
    if let Some(hd) = cfg.opt_size("head_dim")? {
        if hd != derived {
            return Err(cfg.err(
                "head_dim",
                format!("is {hd}; Ergo's attention heads are hidden_size / num_attention_heads = {derived} wide whatever it says, and its rotary table would be {hd} wide: give {derived} or leave it out"),
            ));
        }
    }
    // The full layers' logits are scaled by it (q and k each by its square root).
    if let Some(scale) = cfg.opt_float("global_attention_scale")? {
        if !(scale.is_finite() && scale > 0.0) {
            return Err(cfg.err(
                "global_attention_scale",
                format!("is {scale}; it multiplies the full layers' attention logits: give a positive number, or null for none"),
            ));
        }
        let full = LayerSet::from_fn(s.layers, |b| {
            s.plan[b as usize].span() == Some(AttnSpan::Full)
        });
        if !full.is_empty() {
            let mut own = s.attn.clone();
            own.scale_mult *= scale;
            s.layer_attn.push((full, own));
        }
    }
    s.residual = Residual::Gated;
    if let Some(m) = s.moe.as_mut() {
        m.expert_out_norm = true;
        m.shared_out_norm = true;
    }
    Ok(s)
}
