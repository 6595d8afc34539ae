//! Which layers of a Llama-like model do what, from its config: the attention span of each
//! (`spans`), the layers with RoPE (`rope_layers`), with experts (`moe_layers`, and the experts
//! themselves, `experts`), Mllama's cross-attention layers and Llama 4's query scale.

use super::*;
use crate::config::{Config, MAX_EXPERTS};
use crate::error::Result;

/// Mllama's cross-attention layers: `key` lists them (the class's `default` where absent or
/// null); an index past the last layer names none, as in the class.
pub(super) fn cross_attention_layers(
    cfg: &Config,
    key: &str,
    default: &[u64],
    spec: &mut Spec,
) -> Result<()> {
    let listed = cfg
        .list_any(
            key,
            |v| v.as_u64(),
            "a layer index (a non-negative integer)",
        )?
        .unwrap_or_else(|| default.to_vec());
    for b in listed.into_iter().filter(|&b| b < spec.layers) {
        spec.plan[b as usize] = LayerPlan {
            mixer: Mixer::CrossAttention,
            rope: false,
            ffn: Ffn::Dense,
        };
    }
    Ok(())
}

pub(super) fn spans(cfg: &Config, w: Windows, layers: u64, rope: &[bool]) -> Result<Vec<AttnSpan>> {
    let all = |s: AttnSpan| vec![s; layers as usize];
    Ok(match w {
        Windows::None => all(AttnSpan::Full),
        Windows::Every(default) => {
            let window = super::super::window(cfg, default)?;
            all(window.map_or(AttnSpan::Full, AttnSpan::Sliding))
        }
        Windows::LayerTypes { window, unlisted } => {
            let window = super::super::window(cfg, window)?;
            let unlisted = match unlisted {
                Unlisted::FullEveryKey(key, default) => {
                    Unlisted::FullEvery(cfg.size(key, Some(default))?)
                }
                u => u,
            };
            let (prefix, prefix_every, every) = if unlisted == Unlisted::DensePrefix {
                (
                    cfg.count("first_k_dense_replace", 0)?,
                    cfg.size("prefix_dense_sliding_window_pattern", Some(1))?,
                    cfg.size("sliding_window_pattern", Some(4))?,
                )
            } else {
                (0, 1, 1)
            };
            match layer_types(cfg, layers, window, false)? {
                Some(spans) => spans,
                None => (0..layers)
                    .map(|i| {
                        let slides = match unlisted {
                            Unlisted::Full => false,
                            Unlisted::Sliding => true,
                            Unlisted::FullEvery(n) => (i + 1) % n != 0,
                            Unlisted::FullFirstOfEvery(n) => i % n != 0,
                            Unlisted::FullFirstAndEvery(n) => i != 0 && (i + 1) % n != 0,
                            Unlisted::FullFirstTwoEveryFourthLast => {
                                !(i < 2 || i % 4 == 1 || i + 1 == layers)
                            }
                            Unlisted::FullEveryAndLast(n) => (i + 1) % n != 0 && i + 1 != layers,
                            Unlisted::DensePrefix if i < prefix => (i + 1) % prefix_every != 0,
                            Unlisted::DensePrefix => (i - prefix + 1) % every != 0,
                            Unlisted::FullEveryKey(..) => {
                                unreachable!("resolved to FullEvery above")
                            }
                        };
                        match window {
                            Some(w) if slides => AttnSpan::Sliding(w),
                            _ => AttnSpan::Full,
                        }
                    })
                    .collect(),
            }
        }
        Windows::ConvTypes { window, pattern } => {
            let window = super::super::window(cfg, window)?;
            let (rec, expect) = (pattern.recurrent(), conv_types(pattern.recurrent()));
            let slides: Vec<bool> = match cfg.list(
                "layer_types",
                layers,
                |v| Some(conv_type(v, rec)?.1),
                &expect,
            )? {
                Some(l) => l,
                None => (0..layers)
                    .map(|i| pattern.type_of(i) == "sliding_attention")
                    .collect(),
            };
            slides
                .into_iter()
                .map(|s| match (s, window) {
                    (true, Some(w)) => Ok(AttnSpan::Sliding(w)),
                    (true, None) => Err(cfg.err(
                        "sliding_window",
                        "is missing, but layer_types has sliding_attention layers; give the window size",
                    )),
                    (false, _) => Ok(AttnSpan::Full),
                })
                .collect::<Result<Vec<_>>>()?
        }
        Windows::NoRopeLayers => {
            let use_sliding = cfg.flag("use_sliding_window", false)?;
            let window = cfg.opt_size("sliding_window")?.filter(|_| use_sliding);
            match layer_types(cfg, layers, window, true)? {
                Some(spans) => spans,
                None => rope
                    .iter()
                    .map(|rope| match window {
                        Some(w) if !rope => AttnSpan::Sliding(w),
                        _ => AttnSpan::Full,
                    })
                    .collect(),
            }
        }
        Windows::QwenMoe => {
            // Without use_sliding_window the class stores a window of 0, unread.
            let use_sliding = cfg.flag("use_sliding_window", false)?;
            let window = if !use_sliding {
                cfg.get("sliding_window");
                None
            } else {
                super::super::window(cfg, Some(4096))?
            };
            let below = cfg.count("max_window_layers", 28)?;
            match layer_types(cfg, layers, window, false)? {
                Some(spans) => spans,
                None => (0..layers)
                    .map(|i| match window {
                        Some(w) if i % 2 == 0 && i < below => AttnSpan::Sliding(w),
                        _ => AttnSpan::Full,
                    })
                    .collect(),
            }
        }
        Windows::Qwen => {
            // Without use_sliding_window the classes drop the window: "sliding" layers attend fully.
            let use_sliding = cfg.flag("use_sliding_window", false)?;
            let window = super::super::window(cfg, Some(4096))?.filter(|_| use_sliding);
            super::super::sliding_from(cfg, layers, window, 28)?
        }
    })
}

/// Routed experts and the layers that use them.
pub(super) fn experts(
    cfg: &Config,
    rule: Experts,
    layers: u64,
    d: &Defaults,
) -> Result<(Option<Moe>, Vec<bool>)> {
    let none = Ok((None, vec![false; layers as usize]));
    let Experts::Routed(r) = rule else {
        return none;
    };
    let dense_width = cfg.size("intermediate_size", Some(d.intermediate))?;
    let f = match r.width {
        Some((key, default)) => cfg.size(key, Some(default))?,
        None => dense_width,
    };
    let norm_topk = match r.renormalize {
        Renormalize::Always => true,
        Renormalize::Never => false,
        Renormalize::Key(default) => cfg.flag("norm_topk_prob", default)?,
    };
    let (key, default) = r.count;
    let e = cfg.bounded(key, cfg.count(key, default)?, MAX_EXPERTS)?;
    // Read before deciding, so that a config with no experts has them understood all the same.
    let sparse = moe_layers(cfg, r.layers, layers)?;
    if e == 0 {
        cfg.get("num_experts_per_tok");
        return if r.zero_is_dense {
            none
        } else {
            Err(cfg.err(
                key,
                "is 0; a mixture of experts needs at least one expert to route each token to",
            ))
        };
    }
    let k = top_k(cfg, e, Some(r.top_k))?;
    let scoring = match r.scoring {
        Scoring::SparseMixer { eps } => {
            if k != 2 {
                return Err(cfg.err(
                    "num_experts_per_tok",
                    format!("is {k}; SparseMixer routes every token to exactly 2 experts, whatever this says"),
                ));
            }
            let eps = cfg.float("router_jitter_noise", eps)?;
            if !(eps.is_finite() && eps >= 0.0) {
                return Err(cfg.err(
                    "router_jitter_noise",
                    format!("is {eps}; it must be a number ≥ 0"),
                ));
            }
            Scoring::SparseMixer { eps }
        }
        s => s,
    };
    let (shared_experts, shared_intermediate, shared) = match r.shared {
        Some(s) if s.optional && cfg.count(s.width.0, s.width.1)? == 0 => (0, 0, None),
        Some(s) => {
            let width = cfg.size(s.width.0, Some(s.width.1))?;
            match s.count {
                Some((key, default)) => match cfg.count(key, default)? {
                    0 if s.zero_count_is_dense => (1, dense_width, Some(s)),
                    0 => (0, 0, None),
                    n => (n, width.saturating_mul(n), Some(s)),
                },
                None => (1, width, Some(s)),
            }
        }
        None => (0, 0, None),
    };
    let (n_group, topk_group) = if let Some((n, top)) = r.groups {
        let groups = (
            cfg.size("n_group", Some(n))?,
            cfg.size("topk_group", Some(top))?,
        );
        super::super::expert_groups(cfg, e, k, groups, r.scoring == Scoring::Sigmoid)?
    } else {
        (1, 1)
    };
    let scoring = match r.scoring_key {
        Some((key, default, table)) => {
            let name = cfg.string(key, default)?;
            match table.iter().find(|(n, _)| *n == name) {
                Some((_, s)) => *s,
                None => {
                    let names: Vec<String> = table.iter().map(|(n, _)| format!("`{n}`")).collect();
                    return Err(cfg.err(
                        key,
                        format!("is `{name}`; it must be one of {}", names.join(", ")),
                    ));
                }
            }
        }
        None => scoring,
    };
    // Read even without shared experts, where it changes nothing.
    let shared_average = match r.shared.and_then(|s| s.combine_key) {
        Some((key, default)) => match cfg.string(key, default)?.as_str() {
            "sum" => false,
            "average" => shared.is_some(),
            other => {
                return Err(cfg.err(key, format!("is `{other}`; it must be `sum` or `average`")))
            }
        },
        None => false,
    };
    let routed_scaling = match r.scaling {
        Some((key, default)) => {
            let v = cfg.float(key, default)?;
            if !v.is_finite() || v == 0.0 {
                return Err(cfg.err(key, format!("is {v}; it must be a finite, non-zero number")));
            }
            v
        }
        None => 1.0,
    };
    let plan = sparse;
    Ok((
        Some(Moe {
            n_group,
            topk_group,
            routed_scaling,
            norm_topk_prob: norm_topk,
            shared_experts,
            shared_intermediate,
            shared_gate: shared.is_some_and(|s| s.gate),
            shared_fused: shared.is_some_and(|s| s.fused),
            scoring,
            shared_average,
            storage: if r.stacked_out_in || r.stacked_in_out {
                ExpertStorage::Stacked {
                    out_in: r.stacked_out_in,
                    interleaved: false,
                }
            } else {
                ExpertStorage::PerExpert
            },
            renorm_eps: r.renorm_eps,
            correction_bias: bias(cfg, r.correction_bias)?,
            ..plain_moe(e, k, f)
        }),
        plan,
    ))
}

/// Ministral 3's and Mistral 4's query scale (`family`'s), from its RoPE dict (the class
/// defaults without one); the dict's `max_position_embeddings` copy is not read by its RoPE.
pub(crate) fn llama4_scaling(
    cfg: &Config,
    beta: f64,
    length: u64,
    family: &str,
) -> Result<QueryScale> {
    let dict = match cfg.sub("rope_parameters")? {
        Some(p) => Some(p),
        None => cfg.sub("rope_scaling")?,
    };
    let (beta, length) = match dict {
        None => (beta, length),
        Some(p) => {
            p.get("max_position_embeddings");
            let Some(beta) = p.opt_float("llama_4_scaling_beta")? else {
                return Err(p.err(
                    "llama_4_scaling_beta",
                    format!("is missing; {family}'s attention scales its queries by it, so the RoPE dict must give it"),
                ));
            };
            (beta, p.size("original_max_position_embeddings", None)?)
        }
    };
    Ok(QueryScale {
        form: ScaleForm::Stepped,
        beta,
        length,
        shift: 0,
        nope_only: false,
    })
}

/// Which of `layers` layers have experts.
fn moe_layers(cfg: &Config, rule: MoeLayers, layers: u64) -> Result<Vec<bool>> {
    Ok(match rule {
        MoeLayers::All => vec![true; layers as usize],
        MoeLayers::Qwen(default) => {
            let step = cfg.size("decoder_sparse_step", Some(1))?;
            let dense = cfg
                .list_any("mlp_only_layers", |v| v.as_u64(), "a layer index")?
                .unwrap_or_else(|| default.to_vec());
            (0..layers)
                .map(|i| !dense.contains(&i) && (i + 1) % step == 0)
                .collect()
        }
        MoeLayers::Ernie => {
            let step = cfg.size("moe_layer_interval", Some(1))?;
            let start = cfg.count("moe_layer_start_index", 1)?;
            let end = match cfg.get("moe_layer_end_index") {
                Some(v) if v.as_i64() == Some(-1) => layers.saturating_sub(1),
                Some(_) => cfg.count("moe_layer_end_index", 0)?,
                None => layers.saturating_sub(1),
            };
            (0..layers)
                .map(|i| (i + 1) % step == 0 && i >= start && i <= end)
                .collect()
        }
        MoeLayers::Period(p) => p.layers(cfg, layers)?,
        MoeLayers::FirstDense(key, default) => {
            let k = cfg.count(key, default)?;
            (0..layers).map(|i| i >= k).collect()
        }
        MoeLayers::Types(key, default) => {
            let k = match key {
                Some(key) => cfg.count(key, default)?,
                None => default,
            };
            super::super::mlp_layer_types(cfg, layers, k)?
        }
    })
}

/// `NoRope::NullTypes`: whether each layer rotates, by its type's `rope_parameters` entry; or,
/// without the dict and with `sliding_only`, the sliding layers alone.
pub(super) fn null_type_rope(
    cfg: &Config,
    spans: &[AttnSpan],
    sliding_only: bool,
) -> Result<Vec<bool>> {
    let key = "rope_parameters";
    let params = cfg.sub(key)?;
    if params.is_none() && sliding_only {
        return Ok(spans
            .iter()
            .map(|s| matches!(s, AttnSpan::Sliding(_)))
            .collect());
    }
    let mut rotates = Vec::with_capacity(spans.len());
    for span in spans {
        let t = match span {
            AttnSpan::Sliding(_) => "sliding_attention",
            AttnSpan::Chunked(_) => "chunked_attention",
            AttnSpan::Full => "full_attention",
            AttnSpan::Whole => unreachable!("no family read here attends both ways"),
        };
        let entry = match &params {
            Some(p) if p.present(t) => p.sub(t)?,
            _ => {
                return Err(cfg.err(
                    key,
                    format!("has no {t:?} entry; the class reads one per layer type in use: a dict, or null for no positions"),
                ))
            }
        };
        if let Some(e) = &entry {
            for inert in ["mrope_section", "mrope_interleaved"] {
                e.get(inert);
            }
        }
        rotates.push(entry.is_some());
    }
    Ok(rotates)
}

/// Layers that apply RoPE.
pub(super) fn rope_layers(cfg: &Config, rule: NoRope, layers: u64) -> Result<Vec<bool>> {
    if rule == NoRope::All {
        return Ok(vec![false; layers as usize]);
    }
    if rule == NoRope::PositionType {
        let key = "position_embedding_type";
        let rope = match cfg.opt_string(key)?.as_deref() {
            Some("rope") => true,
            None | Some("nope") => false,
            Some(other) => {
                return Err(cfg.err(
                    key,
                    format!(
                        "is {other:?}; it must be \"rope\", or \"nope\" or null for no positions"
                    ),
                ))
            }
        };
        return Ok(vec![rope; layers as usize]);
    }
    if rule != NoRope::Interval {
        return Ok(vec![true; layers as usize]);
    }
    let listed = cfg.list(
        "no_rope_layers",
        layers,
        |v| match v.as_u64()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        },
        "1 (RoPE) or 0 (no RoPE)",
    )?;
    let every = cfg.size("no_rope_layer_interval", Some(4))?;
    Ok(listed.unwrap_or_else(|| (0..layers).map(|i| (i + 1) % every != 0).collect()))
}
