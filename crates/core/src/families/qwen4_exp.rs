//! Qwen4-Exp's language model (`qwen4_exp_text`, and `qwen4_exp`'s `text_config`): Qwen3.5-MoE's
//! Gated DeltaNet and gated attention layers, with the residual stream as gated streams (no norm
//! before a sublayer, none before the head) and a QSA indexer in every attention layer. Its
//! hashed n-gram per-layer embeddings (`ple_layer_ids`) are not read yet: a config that uses
//! them is refused by that key. Defaults follow `Qwen4ExpTextConfig`.

use super::llama;
use super::registry::QWEN4_EXP;
use crate::config::Config;
use crate::error::Result;
use crate::spec::*;

/// The QSA keys: the class builds an indexer in every attention layer from all of them.
const QSA: [&str; 5] = [
    "indexer_n_heads",
    "indexer_kv_heads",
    "indexer_head_dim",
    "indexer_budget",
    "indexer_compress_ratio",
];

/// The n-gram per-layer embeddings' keys, which change nothing while `ple_layer_ids` is empty.
const PLE: [&str; 8] = [
    "ple_embed_dim",
    "ple_conv_kernel_size",
    "ngram_size",
    "heads_per_ngram",
    "ngram_vocab_size_base",
    "make_ngram_vocab_size_divisible_by",
    "seed",
    "split_ngram_parts",
];

pub fn load(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = llama::load(cfg, &QWEN4_EXP, model_type, family, name)?;
    let streams = cfg.size("hc_count", Some(4))?;
    if streams < 2 {
        return Err(cfg.err(
            "hc_count",
            "is 1; Qwen4-Exp's class requires more than one residual stream",
        ));
    }
    let streams = cfg.bounded("hc_count", streams, 64)?;
    s.gated_streams = Some(GatedStreams {
        streams,
        rank: cfg.size("hc_lowrank", Some(320))?,
    });

    // The DeltaNet's output gate: `output_gate_type`, else `hidden_act`.
    let gate = match cfg.opt_string("output_gate_type")? {
        Some(g) => ("output_gate_type", g),
        None => ("hidden_act", cfg.string("hidden_act", "silu")?),
    };
    if gate.1 != "silu" {
        return Err(cfg.err(
            gate.0,
            format!("is \"{}\"; anatomy draws Qwen4-Exp's linear attention with its SiLU output gate (\"silu\")", gate.1),
        ));
    }

    let mut qsa = [0; 5];
    for (v, key) in qsa.iter_mut().zip(QSA) {
        *v = cfg.opt_size(key)?.ok_or_else(|| {
            cfg.err(
                key,
                "is missing; every Qwen4-Exp attention layer builds a QSA indexer, which needs indexer_n_heads, indexer_kv_heads (1), indexer_head_dim, indexer_budget and indexer_compress_ratio",
            )
        })?;
    }
    let [heads, kv_heads, head_dim, budget, ratio] = qsa;
    if kv_heads != 1 {
        return Err(cfg.err(
            "indexer_kv_heads",
            format!("is {kv_heads}; Qwen4-Exp's QSA indexer has one key head (1)"),
        ));
    }
    if budget % ratio != 0 {
        return Err(cfg.err(
            "indexer_budget",
            format!("is {budget}, not a multiple of indexer_compress_ratio ({ratio}): the indexer keeps whole blocks"),
        ));
    }
    if let Position::Rope(r) = &s.position {
        let rotary = r.rotary_dim(s.attn.head_dim);
        if rotary > head_dim {
            return Err(cfg.err(
                "indexer_head_dim",
                format!("is {head_dim}, fewer than the {rotary} dims the attention's RoPE rotates, which the indexer's queries and keys rotate too"),
            ));
        }
    }
    s.attn.qsa = Some(Qsa {
        heads: cfg.bounded("indexer_n_heads", heads, 1 << 12)?,
        head_dim: cfg.bounded("indexer_head_dim", head_dim, 1 << 16)?,
        budget,
        ratio,
    });

    let ple = cfg.list_any("ple_layer_ids", |v| v.as_u64(), "a one-indexed layer id")?;
    if ple.is_some_and(|l| !l.is_empty()) {
        return Err(cfg.err(
            "ple_layer_ids",
            "lists layers with hashed n-gram per-layer embeddings, which anatomy does not read yet; it reads Qwen4-Exp with none ([] or absent)",
        ));
    }
    for key in PLE {
        cfg.get(key);
    }
    Ok(s)
}
