//! Keys a config class never reads that restate what the model is: the names of the code a
//! model was first published with (MiMo-V2-Flash's `swa_num_key_value_heads`,
//! `hybrid_layer_pattern`). transformers builds the model from its own keys and ignores these,
//! so where one disagrees the checkpoint is not the model transformers builds: anatomy refuses
//! such a config rather than draw either.

use crate::config::Config;
use crate::error::Result;
use crate::spec::{AttnSpan, Position, Spec};
use serde_json::Value;

/// What a restating key says, checked against the Spec.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Echo {
    /// The query heads (of the full layers).
    Heads,
    /// The query heads of the sliding-window layers.
    SlidingHeads,
    /// Their K/V heads.
    SlidingKvHeads,
    /// Their Q/K head width.
    SlidingHeadDim,
    /// Their V head width.
    SlidingVHeadDim,
    /// The RoPE base of the full layers.
    FullTheta,
    /// The RoPE base of the sliding-window layers.
    SlidingTheta,
    /// The rotated fraction of each head.
    Partial,
    /// The norms' ε.
    NormEps,
    /// The context (`max_position_embeddings` as read).
    Context,
    /// The hidden size.
    Hidden,
    /// One entry per layer, 1 for a sliding-window layer and 0 for a full one.
    SlidingLayers,
    /// One entry per layer, 1 for a mixture-of-experts layer and 0 for a dense one.
    MoeLayers,
    /// Whether the sliding-window layers have sinks.
    SlidingSinks,
    /// Whether the full layers have sinks.
    FullSinks,
    /// One of these JSON values (`"sigmoid"`, `null`), written as in the file.
    OneOf(&'static [&'static str]),
}

/// Checks every echo key the config holds against `spec`.
pub fn check(cfg: &Config, echoes: &[(&str, Echo)], spec: &Spec) -> Result<()> {
    for &(key, echo) in echoes {
        let Some(value) = cfg.get(key) else {
            continue;
        };
        let expected = expected(echo, spec);
        let agrees = match (&expected, value) {
            (Expected::Number(x), v) => v.as_f64().is_some_and(|v| v == *x),
            (Expected::Flags(want), Value::Array(items)) => {
                items.len() == want.len()
                    && items
                        .iter()
                        .zip(want)
                        .all(|(v, w)| v.as_u64() == Some(*w as u64))
            }
            (Expected::Flags(_), _) => false,
            (Expected::Bool(b), v) => v.as_bool() == Some(*b),
            (Expected::Json(list), v) => {
                let v = v.to_string();
                list.contains(&v.as_str())
            }
        };
        if !agrees {
            let shown = value.to_string();
            let shown = if shown.len() > 80 {
                format!(
                    "{}…",
                    &shown[..shown.char_indices().nth(77).map_or(shown.len(), |(i, _)| i)]
                )
            } else {
                shown
            };
            return Err(cfg.err(
                key,
                format!(
                    "is {shown}, but transformers ignores this key and builds {}; the checkpoint would not be that model. \
                     Make the config's own keys say what this one says, or remove it",
                    expected.describe()
                ),
            ));
        }
    }
    Ok(())
}

enum Expected {
    Number(f64),
    Flags(Vec<bool>),
    Bool(bool),
    Json(&'static [&'static str]),
}

impl Expected {
    fn describe(&self) -> String {
        match self {
            Expected::Number(x) => crate::fmt::float(*x),
            Expected::Flags(f) => {
                let list: Vec<&str> = f.iter().map(|b| if *b { "1" } else { "0" }).collect();
                format!("[{}]", list.join(", "))
            }
            Expected::Bool(b) => b.to_string(),
            Expected::Json(list) => list.join(" or "),
        }
    }
}

fn expected(echo: Echo, spec: &Spec) -> Expected {
    let sliding = spec.attn_for(AttnSpan::Sliding(1));
    let full = &spec.attn;
    let rope = match &spec.position {
        Position::Rope(r) => Some(r),
        Position::Learned
        | Position::Sinusoidal(_)
        | Position::Alibi(_)
        | Position::None
        | Position::Buckets(_) => None,
    };
    match echo {
        Echo::Heads => Expected::Number(full.heads as f64),
        Echo::SlidingHeads => Expected::Number(sliding.heads as f64),
        Echo::SlidingKvHeads => Expected::Number(sliding.kv_heads as f64),
        Echo::SlidingHeadDim => Expected::Number(sliding.head_dim as f64),
        Echo::SlidingVHeadDim => Expected::Number(sliding.v_head_dim as f64),
        Echo::FullTheta => Expected::Number(rope.map_or(0.0, |r| r.full.theta)),
        Echo::SlidingTheta => {
            Expected::Number(rope.map_or(0.0, |r| r.freqs(AttnSpan::Sliding(1)).theta))
        }
        Echo::Partial => Expected::Number(rope.map_or(0.0, |r| r.partial)),
        Echo::NormEps => Expected::Number(spec.norm.eps),
        Echo::Context => Expected::Number(spec.context as f64),
        Echo::Hidden => Expected::Number(spec.hidden as f64),
        Echo::SlidingLayers => Expected::Flags(
            spec.plan
                .iter()
                .map(|l| matches!(l.span(), Some(AttnSpan::Sliding(_))))
                .collect(),
        ),
        Echo::MoeLayers => Expected::Flags(spec.plan.iter().map(|l| l.moe()).collect()),
        Echo::SlidingSinks => Expected::Bool(sliding.sinks),
        Echo::FullSinks => Expected::Bool(full.sinks),
        Echo::OneOf(list) => Expected::Json(list),
    }
}
