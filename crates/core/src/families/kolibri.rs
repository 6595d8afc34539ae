//! Kolibri (`kolibri1`) and Kolibri 1.1 (`kolibri1_1`), Aleph Alpha's. Kolibri: EXAONE 4's
//! attention (per-head QK norms, a full NoPE layer after every four sliding ones) in GLM-4's
//! sandwich-normed layers, every layer routing by sigmoid (chosen on the logits plus a correction
//! bias) beside one shared expert. Kolibri 1.1 indexes its full layers (`PoolIndex`: a weightless
//! indexer over NVFP4-rounded keys, whose pools later layers keep), lets some of them attend over
//! an earlier layer's keys and values (`kv_source_layers`), and makes its first layers dense.
//! Defaults follow `Kolibri1Config` and `Kolibri1_1Config`.

use super::llama::{self, Bias, Experts, LlamaLike, NoRope, Renormalize, Routed, SharedMlp};
use super::llama::{Unlisted, Windows};
use super::registry::d;
use crate::config::Config;
use crate::error::Result;
use crate::layers::LayerSet;
use crate::spec::{Ffn, Layout, Mlp, NormPlace, PoolIndex, QkNorm, Scoring, Spec};
use serde_json::Value;

/// The config classes' `attribute_map`.
pub(super) const RENAMES: &[(&str, &str)] = &[("num_experts", "num_local_experts")];

pub(super) const KOLIBRI: LlamaLike = LlamaLike {
    qkv_bias: Bias::Never,
    o_bias: Bias::Never,
    mlp_bias: Bias::Never,
    qk_norm: QkNorm::PerHead,
    place: NormPlace::Sandwich,
    layout: Layout::Kolibri,
    windows: Windows::LayerTypes {
        window: Some(513),
        unlisted: Unlisted::FullEvery(5),
    },
    no_rope: NoRope::FullLayers,
    experts: Experts::Routed(Routed {
        count: ("num_local_experts", 384),
        top_k: 6,
        width: Some(("moe_intermediate_size", 512)),
        renormalize: Renormalize::Key(false),
        scoring: Scoring::SigmoidBiasedLogits,
        correction_bias: Bias::Always,
        shared: Some(SharedMlp::of("shared_expert_intermediate_size", 512)),
        ..Routed::MIXTRAL
    }),
    // Every layer routes: the class has no dense MLP width.
    ..LlamaLike::llama(d(
        128_000,
        2560,
        512,
        50,
        48,
        Some(4),
        Some(128),
        262_144,
        1e-6,
        10_000.0,
        false,
    ))
};

/// Which indexed-attention layer each one reads the keys and values of, by its rank among
/// them, where a config lists none (Kolibri 1.1's layout of ten).
const DEFAULT_SOURCES: [usize; 10] = [0, 0, 0, 3, 4, 5, 5, 5, 5, 0];

pub fn load_1_1(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let n = cfg.size("num_hidden_layers", Some(50))?;
    let indexed: Vec<bool> = match cfg.list(
        "layer_types",
        n,
        |v| match v.as_str()? {
            "indexed_attention" => Some(true),
            "sliding_attention" => Some(false),
            _ => None,
        },
        "\"indexed_attention\" or \"sliding_attention\"",
    )? {
        Some(t) => t,
        None => (0..n).map(|i| (i + 1) % 5 == 0).collect(),
    };
    // Kolibri's loader reads the indexed layers as its full ones (no positions, the whole
    // context); the indexer is added below.
    let mut map = cfg.map.clone();
    let types = indexed
        .iter()
        .map(|&i| {
            Value::from(if i {
                "full_attention"
            } else {
                "sliding_attention"
            })
        })
        .collect();
    map.insert("layer_types".into(), Value::Array(types));
    let value = Value::Object(map);
    let own = Config::new(cfg.file, &value)?.renamed(RENAMES);
    let mut s = llama::load(&own, &KOLIBRI, model_type, family, name)?;
    cfg.read_through(&own, &[]);

    let layers: Vec<usize> = (0..n as usize).filter(|&b| indexed[b]).collect();
    let index_list = |key: &str| -> Result<Option<Vec<usize>>> {
        cfg.list_any(
            key,
            |v| v.as_u64().map(|i| i as usize),
            "a layer index (a non-negative integer)",
        )
    };
    // The dense layers, at a width of their own.
    let dense = match index_list("mlp_only_layers")? {
        Some(l) => l,
        None => (0..2).filter(|&b| b < n as usize).collect(),
    };
    if let Some(&b) = dense.iter().find(|&&b| b >= n as usize) {
        return Err(cfg.err(
            "mlp_only_layers",
            format!("lists layer {b}; the model has {n} layers (0 to {})", n - 1),
        ));
    }
    let width = cfg.size("mlp_only_intermediate_size", Some(3584))?;
    if !dense.is_empty() {
        s.mlp = Mlp::gated(width, s.mlp.act);
        for &b in &dense {
            s.plan[b].ffn = Ffn::Dense;
        }
    }

    let size = |key: &str, default: u64| cfg.size(key, Some(default));
    let pools = match index_list("index_layers")? {
        Some(l) => l,
        None => [0, 2, 3, 5]
            .iter()
            .filter_map(|&i| layers.get(i).copied())
            .collect(),
    };
    if !pools.windows(2).all(|w| w[0] < w[1]) || pools.iter().any(|b| !layers.contains(b)) {
        return Err(cfg.err(
            "index_layers",
            format!("is {pools:?}; it must list indexed-attention layers ({layers:?}), in increasing order"),
        ));
    }
    if let Some(&first) = layers.first() {
        if !pools.contains(&first) {
            return Err(cfg.err(
                "index_layers",
                format!("is {pools:?}; the first indexed-attention layer ({first}) must pick a pool: later ones read the last pool before them"),
            ));
        }
    }
    let index = PoolIndex {
        heads: size("index_num_heads", 12)?,
        top_k: size("index_topk", 2048)?,
        pool: size("index_pool_size", 16384)?,
        compression: size("index_compression", 16)?,
        local: cfg.count("index_num_local_tokens", 128)?,
        sinks: cfg.count("index_num_sink_tokens", 8)?,
        pools: LayerSet::from_fn(n, |b| pools.contains(&(b as usize))),
    };
    if !index.pool.is_multiple_of(index.compression) {
        return Err(cfg.err(
            "index_pool_size",
            format!(
                "is {}; it must be a multiple of index_compression ({}): a pool is whole blocks",
                index.pool, index.compression
            ),
        ));
    }
    let a = &s.attn;
    if !a.head_dim.is_multiple_of(16) {
        return Err(cfg.err(
            "head_dim",
            format!("is {}; the indexed layers round keys and values to NVFP4 in blocks of 16 features, so it must be a multiple of 16", a.head_dim),
        ));
    }
    if index.heads > a.heads / a.kv_heads.max(1) {
        return Err(cfg.err(
            "index_num_heads",
            format!("is {}; the indexer scores with the query heads of K/V head 0, of which there are {}", index.heads, a.heads / a.kv_heads.max(1)),
        ));
    }

    // Which layer's keys and values each layer attends over.
    let sources = match index_list("kv_source_layers")? {
        Some(l) => {
            if l.len() != n as usize {
                return Err(cfg.err(
                    "kv_source_layers",
                    format!("has {} entries; it needs one per layer ({n})", l.len()),
                ));
            }
            l
        }
        None => {
            if layers.len() > DEFAULT_SOURCES.len() {
                return Err(cfg.err(
                    "layer_types",
                    format!("has {} indexed-attention layers; the class's default kv_source_layers covers {}: set kv_source_layers", layers.len(), DEFAULT_SOURCES.len()),
                ));
            }
            let mut l: Vec<usize> = (0..n as usize).collect();
            for (&b, &src) in layers.iter().zip(&DEFAULT_SOURCES) {
                l[b] = layers[src];
            }
            l
        }
    };
    for (b, &src) in sources.iter().enumerate() {
        let fault = if !indexed[b] && src != b {
            Some("a sliding-attention layer projects its own keys and values")
        } else if src > b || sources[src] != src {
            Some("a layer reads the keys and values of itself or of an earlier layer that projects its own")
        } else if indexed[src] != indexed[b] {
            Some("a layer reads those of a layer of its own attention type")
        } else {
            None
        };
        if let Some(why) = fault {
            return Err(cfg.err(
                "kv_source_layers",
                format!("gives layer {b} layer {src}'s keys and values; {why}"),
            ));
        }
    }

    let set = |f: &dyn Fn(usize) -> bool| LayerSet::from_fn(n, |b| f(b as usize));
    let own_layers = set(&|b| indexed[b] && sources[b] == b);
    let reading = set(&|b| indexed[b] && sources[b] != b);
    let with_index = crate::spec::Attention {
        pool_index: Some(index),
        ..s.attn.clone()
    };
    for (layers, shares) in [(own_layers, false), (reading, true)] {
        if !layers.is_empty() {
            let a = crate::spec::Attention {
                shares_kv: shares,
                ..with_index.clone()
            };
            s.layer_attn.push((layers, a));
        }
    }
    if sources.iter().enumerate().any(|(b, &src)| src != b) {
        s.kv_from = sources.iter().map(|&b| b as u64).collect();
    }
    Ok(s)
}
