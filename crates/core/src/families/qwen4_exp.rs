//! Qwen4-Exp's language model (`qwen4_exp_text`, and `qwen4_exp`'s `text_config`): Qwen3.5-MoE's
//! Gated DeltaNet and gated attention layers, with the residual stream as gated streams (no norm
//! before a sublayer, none before the head), a QSA indexer in every attention layer, and hashed
//! n-gram per-layer embeddings in the layers `ple_layer_ids` lists. Defaults follow
//! `Qwen4ExpTextConfig`.

use super::llama;
use super::registry::QWEN4_EXP;
use crate::config::Config;
use crate::error::Result;
use crate::layers::LayerSet;
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

/// The n-gram per-layer embeddings, where `ple_layer_ids` lists layers (one-indexed, Gated
/// DeltaNet layers only), checked as the class checks them.
fn ngram_ple(cfg: &Config, s: &Spec) -> Result<Option<NgramPle>> {
    let ids = cfg
        .list_any("ple_layer_ids", |v| v.as_u64(), "a one-indexed layer id")?
        .unwrap_or_default();
    if ids.is_empty() {
        for key in PLE {
            cfg.get(key);
        }
        return Ok(None);
    }
    for &id in &ids {
        if id < 1 || id > s.layers {
            return Err(cfg.err(
                "ple_layer_ids",
                format!(
                    "lists {id}; its ids are one-indexed layers, 1 to {}",
                    s.layers
                ),
            ));
        }
        if !s.plan[id as usize - 1].mixer.recurrent() {
            return Err(cfg.err(
                "ple_layer_ids",
                format!("lists {id}, an attention layer; the class puts n-gram embeddings in linear_attention layers only"),
            ));
        }
    }
    let ngram = cfg.bounded("ngram_size", cfg.size("ngram_size", Some(3))?, 16)?;
    if ngram < 2 {
        return Err(cfg.err(
            "ngram_size",
            "is 1; the n-gram embeddings hash 2- to ngram_size-grams, so it must be at least 2",
        ));
    }
    let heads_per_ngram = cfg.bounded(
        "heads_per_ngram",
        cfg.size("heads_per_ngram", Some(8))?,
        256,
    )?;
    let heads = (ngram - 1) * heads_per_ngram;
    let width = cfg.opt_size("ple_embed_dim")?.unwrap_or(s.hidden);
    if width % heads != 0 {
        return Err(cfg.err(
            "ple_embed_dim",
            format!("is {width}, not a multiple of the {heads} n-gram heads ((ngram_size − 1) × heads_per_ngram), each of which embeds an equal share"),
        ));
    }
    // The class requires an end-of-sequence id: n-grams stop at it.
    let eos = match cfg.get("eos_token_id") {
        Some(serde_json::Value::Array(a)) => a.first().and_then(|v| v.as_u64()),
        Some(v) => v.as_u64(),
        None => None,
    }
    .ok_or_else(|| {
        cfg.err(
            "eos_token_id",
            "is missing; with ple_layer_ids the class needs an end-of-sequence id (an integer, or a list whose first is one), where n-grams stop",
        )
    })?;
    let layers = LayerSet::from_fn(s.layers, |b| ids.contains(&(b + 1)));
    // Each head's table size is found by a search: bounded, as a file could ask for millions.
    let count = layers.len() * heads;
    if count > 1 << 14 {
        return Err(cfg.err(
            "ple_layer_ids",
            format!("gives {} layers of {heads} n-gram heads, {count} tables in all; anatomy reads up to 16,384", layers.len()),
        ));
    }
    let vocab_base = cfg.size("ngram_vocab_size_base", Some(20_000_000))?;
    Ok(Some(NgramPle {
        sizes: crate::ngram::primes(vocab_base, count),
        layers,
        width,
        ngram,
        heads_per_ngram,
        vocab_base,
        divisor: cfg.size("make_ngram_vocab_size_divisible_by", Some(128))?,
        seed: cfg.count("seed", 1234)?,
        parts: cfg.size("split_ngram_parts", Some(512))?,
        kernel: cfg.size("ple_conv_kernel_size", Some(4))?,
        eos,
    }))
}

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
    s.stream = crate::spec::Stream::Gated(GatedStreams {
        streams,
        rank: cfg.size("hc_lowrank", Some(320))?,
    });

    // The DeltaNet's output gate: `output_gate_type`, else `hidden_act`.
    let gate = match cfg.opt_string("output_gate_type")? {
        Some(g) => ("output_gate_type", g),
        None => ("hidden_act", cfg.string("hidden_act", "silu")?),
    };
    let sigmoid = match gate.1.as_str() {
        "silu" => false,
        "sigmoid" => true,
        other => {
            return Err(cfg.err(
                gate.0,
                format!("is \"{other}\"; Qwen4-Exp's linear attention gates its output by \"silu\" or \"sigmoid\""),
            ))
        }
    };
    if let Some(d) = s.delta_mut() {
        d.sigmoid_gate = sigmoid;
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

    s.ngram_ple = ngram_ple(cfg, &s)?;
    Ok(s)
}
