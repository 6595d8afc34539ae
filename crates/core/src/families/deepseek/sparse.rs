//! DeepSeek sparse attention's indexers, and which layers are sparse.

use super::*;

/// DeepSeek sparse attention's indexer. It reads the Q latent and rotates the first
/// `qk_rope_head_dim` dims of its heads.
pub(super) fn indexer(
    cfg: &Config,
    m: &Mla,
    sparse: Sparse,
    layers: u64,
    eps: f64,
) -> Result<Indexer> {
    if m.q_lora_rank.is_none() {
        return Err(cfg.err(
            "q_lora_rank",
            "is null; DeepSeek sparse attention's indexer reads the query latent, so it needs a rank",
        ));
    }
    let head_dim = cfg.size("index_head_dim", Some(128))?;
    if head_dim < m.qk_rope_head_dim {
        return Err(cfg.err(
            "index_head_dim",
            format!(
                "is {head_dim}, less than qk_rope_head_dim ({}); the indexer rotates that many of its dims",
                m.qk_rope_head_dim
            ),
        ));
    }
    let own = match sparse.own {
        Own::All => LayerSet::all(layers),
        rule => own_indexers(cfg, layers, rule)?,
    };
    Ok(Indexer {
        heads: cfg.size("index_n_heads", Some(sparse.heads))?,
        head_dim,
        top_k: cfg.size("index_topk", Some(2048))?,
        interleaved: sparse.interleaved,
        rope_last: sparse.hy,
        key_eps: if sparse.hy { eps } else { 1e-6 },
        own,
    })
}

/// The layers with an indexer of their own: `indexer_types` ("full" or "shared" per layer); else
/// HY v4's every fourth layer, or GLM-5's `index_topk_pattern` (a string of F and S, or such a
/// list), else every `index_topk_freq`-th layer counted from `index_skip_topk_offset` − 1, and
/// the layers before it.
fn own_indexers(cfg: &Config, layers: u64, rule: Own) -> Result<LayerSet> {
    let kind = |v: &serde_json::Value| match v.as_str()? {
        "full" => Some(true),
        "shared" => Some(false),
        _ => None,
    };
    let (key, full) = if let Some(t) =
        cfg.list("indexer_types", layers, kind, "\"full\" or \"shared\"")?
    {
        ("indexer_types", t)
    } else if rule == Own::EveryFourth {
        let full = (0..layers).map(|i| i == 0 || (i - 1) % 4 == 0).collect();
        ("indexer_types", full)
    } else if let Some(serde_json::Value::String(p)) = cfg.get("index_topk_pattern") {
        let t: Option<Vec<bool>> = p
            .chars()
            .map(|c| match c {
                'F' => Some(true),
                'S' => Some(false),
                _ => None,
            })
            .collect();
        match t {
            Some(t) if t.len() as u64 == layers => ("index_topk_pattern", t),
            _ => {
                return Err(cfg.err(
                    "index_topk_pattern",
                    format!("must be one letter per layer ({layers}), each F (full) or S (shared)"),
                ))
            }
        }
    } else if let Some(t) =
        cfg.list("index_topk_pattern", layers, kind, "\"full\" or \"shared\"")?
    {
        ("index_topk_pattern", t)
    } else {
        let freq = cfg.count("index_topk_freq", 1)?.max(1);
        let offset = cfg.count("index_skip_topk_offset", 2)?;
        let full = (0..layers)
            .map(|i| (i + 1).saturating_sub(offset) % freq == 0)
            .collect();
        ("index_topk_freq", full)
    };
    if !full.first().copied().unwrap_or(true) {
        return Err(cfg.err(
            key,
            "makes layer 0 shared; a shared layer reuses the choice of an earlier layer's indexer, so layer 0 must run its own",
        ));
    }
    Ok(LayerSet::from_fn(layers, |b| full[b as usize]))
}

/// Which layers have experts.
pub(super) fn sparse_layers(cfg: &Config, dense: Dense, layers: u64) -> Result<Vec<bool>> {
    Ok(match dense {
        Dense::None => vec![true; layers as usize],
        Dense::FirstK(default) => {
            let k = cfg.count("first_k_dense_replace", default)?;
            (0..layers).map(|i| i >= k).collect()
        }
        Dense::Types(first_k) => {
            // `first_k_dense_replace` only fills in `mlp_layer_types` when that is absent.
            let k = match first_k {
                Some(default) => cfg.count("first_k_dense_replace", default)?,
                None => 1,
            };
            crate::families::mlp_layer_types(cfg, layers, k)?
        }
        Dense::TypesFreq(default) => {
            let k = cfg.count("first_k_dense_replace", default)?;
            let freq = cfg.size("moe_layer_freq", Some(1))?;
            let given = crate::families::mlp_layer_types(cfg, layers, 0)?;
            if cfg.has("mlp_layer_types") {
                given
            } else {
                (0..layers).map(|i| i >= k && i % freq == 0).collect()
            }
        }
    })
}
