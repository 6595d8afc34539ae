//! DeepSeek-V4 (`deepseek_v4`): one key-and-value head per layer over a sliding window, with
//! entries compressed from windows of tokens in most layers (compressed sparse attention, whose
//! indexer picks the entries each query reads, and heavily compressed attention, which reads
//! them all), a grouped low-rank output projection, hyper-connections mixed by Sinkhorn
//! iterations, and experts chosen by token id in the first layers. Defaults follow
//! `DeepseekV4Config`.

use super::{experts, layer_count, plain_attention, plain_moe, top_k, RopeDefaults};
use crate::config::Config;
use crate::error::Result;
use crate::layers::LayerSet;
use crate::spec::*;

const CSA: &str = "compressed_sparse_attention";
const HCA: &str = "heavily_compressed_attention";
const SLIDING: &str = "sliding_attention";

pub fn load(cfg: &Config, _model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, "deepseek_v4", family);
    s.vocab = cfg.size("vocab_size", Some(129_280))?;
    s.hidden = cfg.size("hidden_size", Some(4096))?;
    s.layers = layer_count(cfg, &["num_hidden_layers"], Some(43))?;
    s.context = cfg.size("max_position_embeddings", Some(1_048_576))?;
    let n = s.layers;
    let heads = cfg.size("num_attention_heads", Some(64))?;
    let hd = cfg.size("head_dim", Some(512))?;
    // One key-and-value head whatever `num_key_value_heads` says.
    cfg.get("num_key_value_heads");
    let eps = cfg.float("rms_norm_eps", 1e-6)?;
    s.norm = super::pre_rms(cfg, eps)?;

    // The rotated fraction: `partial_rotary_factor`, else the legacy `qk_rope_head_dim`; where
    // `rope_parameters` holds a dict per kind, the fraction those give, which the rotaries read.
    let top = match cfg.opt_float("partial_rotary_factor")? {
        Some(p) => {
            cfg.get("qk_rope_head_dim");
            p
        }
        None => match cfg.opt_size("qk_rope_head_dim")? {
            Some(r) => r as f64 / hd as f64,
            None => 64.0 / 512.0,
        },
    };
    let (main, compress, nested) = ropes(cfg, &s)?;
    let (partial, key) = match nested {
        Some(p) => (p, "rope_parameters.main.partial_rotary_factor"),
        None => (top, "partial_rotary_factor"),
    };
    let rope_dim = (hd as f64 * partial) as u64;
    if !(partial > 0.0 && partial <= 1.0) || rope_dim < 2 || !rope_dim.is_multiple_of(2) {
        return Err(cfg.err(
            key,
            format!("is {partial}; head_dim ({hd}) times it must be an even number of rotated dims, at least 2"),
        ));
    }
    s.position = Position::Rope(Rope {
        full: main,
        sliding: None,
        partial,
        sliding_partial: None,
        interleaved: true,
        reversed: false,
        start: 0,
    });

    let types = kinds(cfg, n)?;
    let rates = cfg.sub("compress_rates")?;
    let rate = |key: &str, default: u64| -> Result<u64> {
        let legacy = if key == CSA {
            "compress_rate_csa"
        } else {
            "compress_rate_hca"
        };
        match (cfg.opt_size(legacy)?, &rates) {
            (Some(m), _) => cfg.bounded(legacy, m, 1 << 16),
            (None, Some(r)) => r.bounded(key, r.size(key, Some(default))?, 1 << 16),
            (None, None) => Ok(default),
        }
    };
    let csa = LayerSet::from_fn(n, |b| types[b as usize] == CSA);
    let hca = LayerSet::from_fn(n, |b| types[b as usize] == HCA);
    let q_lora_rank = cfg.size("q_lora_rank", Some(1024))?;
    let o_groups = cfg.size("o_groups", Some(8))?;
    if !(heads * hd).is_multiple_of(o_groups) {
        return Err(cfg.err(
            "o_groups",
            format!("is {o_groups}; it must divide the heads' {} features: each group projects an equal share", heads * hd),
        ));
    }
    // The class takes an integer, not null.
    if cfg.present("sliding_window") && !cfg.has("sliding_window") {
        return Err(cfg.err(
            "sliding_window",
            "is null; DeepSeek-V4 attends over a sliding window in every layer: give its length",
        ));
    }
    let window = cfg.size("sliding_window", Some(128))?;
    let index = V4Index {
        heads: cfg.size("index_n_heads", Some(64))?,
        head_dim: cfg.size("index_head_dim", Some(128))?,
        top_k: cfg.size("index_topk", Some(512))?,
    };
    if index.head_dim < rope_dim {
        return Err(cfg.err(
            "index_head_dim",
            format!(
                "is {}; the indexer rotates its last {rope_dim} dims, so it must be at least that",
                index.head_dim
            ),
        ));
    }
    s.attn = Attention {
        sinks: true,
        v4: Some(V4Attn {
            q_lora_rank,
            rope_dim,
            o_groups,
            o_lora_rank: cfg.size("o_lora_rank", Some(1024))?,
            compress_freqs: compress,
            csa: (csa, rate(CSA, 4)?),
            hca: (hca, rate(HCA, 128)?),
            index,
        }),
        ..plain_attention(heads, 1, hd)
    };
    cfg.get("attention_bias");

    // Experts: the shared expert and the routed ones of `moe_intermediate_size`, all clamped.
    let e = experts(cfg, "n_routed_experts", Some(256))?;
    let k = top_k(cfg, e, Some(6))?;
    let f = cfg.size("moe_intermediate_size", Some(2048))?;
    let limit = cfg.float("swiglu_limit", 10.0)?;
    let scoring = match cfg.string("scoring_func", "sqrtsoftplus")?.as_str() {
        "sqrtsoftplus" => Scoring::SqrtSoftplus,
        "sigmoid" => Scoring::Sigmoid,
        other => {
            return Err(cfg.err(
                "scoring_func",
                format!(
                "is \"{other}\"; DeepSeek-V4's router scores by \"sqrtsoftplus\" or \"sigmoid\""
            ),
            ))
        }
    };
    // The router always renormalizes the chosen weights; one shared expert whatever
    // `n_shared_experts` says.
    cfg.get("norm_topk_prob");
    cfg.get("n_shared_experts");
    let hash = hash_layers(cfg, n)?;
    // `mlp_bias` gives the shared expert biases; the routed experts have none.
    s.mlp = Mlp::gated(f, super::act(cfg, "hidden_act", "silu")?);
    let shared_bias = cfg.flag("mlp_bias", false)?;
    s.moe = Some(Moe {
        shared_experts: 1,
        shared_intermediate: f,
        shared_bias,
        scoring,
        norm_topk_prob: true,
        renorm_eps: 1e-20,
        correction_bias: hash.len() < n,
        routed_scaling: cfg.float("routed_scaling_factor", 1.5)?,
        swiglu_limit: Some(limit),
        swiglu_plain: true,
        hash_layers: (!hash.is_empty()).then_some(hash),
        shared_clamp: true,
        ..plain_moe(e, k, f)
    });
    s.plan = super::uniform_plan(vec![AttnSpan::Sliding(window); n as usize], true);

    let streams = cfg.size("hc_mult", Some(4))?;
    let streams = cfg.bounded("hc_mult", streams, 64)?;
    s.stream = crate::spec::Stream::Hyper(Hyper {
        streams,
        magnitude: 2.0,
        eps: cfg.float("hc_eps", 1e-6)?,
        // Bounded: each iteration runs per token and sublayer.
        sinkhorn: Some(cfg.bounded(
            "hc_sinkhorn_iters",
            cfg.size("hc_sinkhorn_iters", Some(20))?,
            10_000,
        )?),
    });
    s.tied = cfg.flag("tie_word_embeddings", false)?;
    // The multi-token prediction layers are not built.
    cfg.get("num_nextn_predict_layers");
    s.layout = Layout::DeepseekV4;
    Ok(s)
}

/// Each layer's attention kind: `layer_types`, else the legacy `compress_ratios` (0, 4, 128 per
/// layer), else two heavily compressed layers and then the two kinds in turn.
fn kinds(cfg: &Config, n: u64) -> Result<Vec<&'static str>> {
    let of = |v: &serde_json::Value| match v.as_str()? {
        SLIDING => Some(SLIDING),
        CSA => Some(CSA),
        HCA => Some(HCA),
        _ => None,
    };
    let expect = "\"sliding_attention\", \"compressed_sparse_attention\" or \"heavily_compressed_attention\"";
    let listed = match cfg.list_any("layer_types", of, expect)? {
        Some(t) => {
            // The legacy per-layer rates then change nothing.
            cfg.get("compress_ratios");
            Some((t, "layer_types"))
        }
        None => cfg
            .list_any(
                "compress_ratios",
                |v| match v.as_u64()? {
                    0 => Some(SLIDING),
                    4 => Some(CSA),
                    128 => Some(HCA),
                    _ => None,
                },
                "0, 4 or 128",
            )?
            .map(|t| (t, "compress_ratios")),
    };
    // The class keeps the first `num_hidden_layers` entries.
    match listed {
        Some((t, key)) if (t.len() as u64) < n => Err(cfg.err(
            key,
            format!("has {} entries; it needs one per layer ({n})", t.len()),
        )),
        Some((t, _)) => Ok(t[..n as usize].to_vec()),
        // Odd layers from the fourth on are sparse.
        None => Ok((0..n)
            .map(|i| if i >= 3 && i % 2 == 1 { CSA } else { HCA })
            .collect()),
    }
}

/// The layers that route by token id: `mlp_layer_types`' "hash_moe", else the first
/// `num_hash_layers` (3).
fn hash_layers(cfg: &Config, n: u64) -> Result<LayerSet> {
    let of = |v: &serde_json::Value| match v.as_str()? {
        "hash_moe" => Some(true),
        "moe" => Some(false),
        _ => None,
    };
    match cfg.list_any("mlp_layer_types", of, "\"hash_moe\" or \"moe\"")? {
        Some(t) if (t.len() as u64) < n => Err(cfg.err(
            "mlp_layer_types",
            format!("has {} entries; it needs one per layer ({n})", t.len()),
        )),
        Some(t) => {
            cfg.get("num_hash_layers");
            Ok(LayerSet::from_fn(n, |b| t[b as usize]))
        }
        None => {
            let h = cfg.count("num_hash_layers", 3)?;
            Ok(LayerSet::range(0, h.min(n)))
        }
    }
}

/// The sliding layers' RoPE ("main": `rope_theta`, unscaled) and the compressed layers'
/// ("compress": `compress_rope_theta`, with the scaling a flat `rope_parameters` gives; YaRN's
/// cos and sin left unscaled unless the dict says otherwise).
fn ropes(cfg: &Config, s: &Spec) -> Result<(RopeFreqs, RopeFreqs, Option<f64>)> {
    let theta = cfg.float("rope_theta", 10_000.0)?;
    let compress_theta = cfg.float("compress_rope_theta", 160_000.0)?;
    for (key, t) in [
        ("rope_theta", theta),
        ("compress_rope_theta", compress_theta),
    ] {
        if t <= 0.0 {
            return Err(cfg.err(key, format!("is {t}; it must be a positive number")));
        }
    }
    let d = RopeDefaults::new(theta, s.context);
    let plain = |theta| RopeFreqs {
        theta,
        scaling: RopeScaling::None,
    };
    let Some(p) = cfg.sub("rope_parameters")? else {
        return Ok((plain(theta), plain(compress_theta), None));
    };
    let (main, compress, nested) = match (p.sub("main")?, p.sub("compress")?) {
        (Some(m), Some(c)) => {
            // Each kind's rotary reads its own fraction: anatomy draws one for both.
            let (pm, pc) = (
                m.float("partial_rotary_factor", 1.0)?,
                c.float("partial_rotary_factor", 1.0)?,
            );
            if pm != pc {
                return Err(c.err(
                    "partial_rotary_factor",
                    format!("is {pc}; anatomy reads DeepSeek-V4 with one rotated fraction for every layer, and main's is {pm}"),
                ));
            }
            (
                super::freqs(&m, theta, &d, None)?,
                yarn_unscaled(&c, super::freqs(&c, compress_theta, &d, None)?)?,
                Some(pm),
            )
        }
        _ => {
            // The class sets the compressed layers' base and fraction over the dict's own.
            p.get("partial_rotary_factor");
            let c = RopeFreqs {
                theta: compress_theta,
                ..super::freqs(&p, compress_theta, &d, None)?
            };
            (plain(theta), yarn_unscaled(&p, c)?, None)
        }
    };
    for (f, key) in [(&main, "main"), (&compress, "compress")] {
        if !matches!(f.scaling, RopeScaling::None | RopeScaling::Yarn { .. }) {
            return Err(p.err(
                key,
                format!(
                    "scales RoPE by \"{}\"; anatomy reads DeepSeek-V4's RoPE unscaled or YaRN",
                    f.scaling.kind()
                ),
            ));
        }
    }
    if main.scaling != RopeScaling::None {
        return Err(p.err(
            "main",
            "is scaled; DeepSeek-V4's sliding layers rotate by their base alone in anatomy: give rope_type \"default\"",
        ));
    }
    Ok((main, compress, nested))
}

/// The class sets YaRN's `attention_factor` to 1 where the dict gives none.
fn yarn_unscaled(p: &Config, mut f: RopeFreqs) -> Result<RopeFreqs> {
    if let RopeScaling::Yarn {
        attention_factor, ..
    } = &mut f.scaling
    {
        if p.opt_float("attention_factor")?.is_none() {
            *attention_factor = 1.0;
        }
    }
    Ok(f)
}
