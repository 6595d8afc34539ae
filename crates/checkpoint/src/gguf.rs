//! GGUF checkpoints: metadata and tensor infos read with candle's GGUF reader (which bounds every
//! length by the file's size); the Spec comes from the metadata alone, through the same loaders
//! as a config.json, by writing the metadata as the config.json it stands for.

use crate::{Checkpoint, Format, Stored};
use anatomy_core::Error;
use candle_core::quantized::gguf_file::{Content, Value};
use serde_json::{json, Map};
use std::path::Path;

/// GGUF architectures anatomy reads, and the `model_type` each one is.
pub const ARCHITECTURES: &[(&str, &str)] = &[
    ("llama", "llama"),
    ("qwen2", "qwen2"),
    ("qwen3", "qwen3"),
    ("gemma2", "gemma2"),
];

pub fn open(path: &Path) -> Result<Checkpoint, Error> {
    let shown = path.display().to_string();
    let file =
        std::fs::File::open(path).map_err(|e| Error::file(&shown, format!("cannot open: {e}")))?;
    read(&mut std::io::BufReader::new(file), &shown)
}

/// Read a GGUF header (metadata and tensor infos) from `reader`; tensor data is not read.
pub fn read<R: std::io::Read + std::io::Seek>(
    reader: &mut R,
    shown: &str,
) -> Result<Checkpoint, Error> {
    let shown = shown.to_string();
    let content = Content::read(reader).map_err(|e| {
        let msg = e.to_string();
        let hint = if msg.contains("dtype") { " (anatomy reads F32, F16, BF16, Q4_0–Q8_1 and the K-quants; IQ types are not supported)" } else { "" };
        Error::file(&shown, format!("not a readable GGUF file: {msg}{hint}"))
    })?;
    let mut tensors: Vec<Stored> = content
        .tensor_infos
        .iter()
        .map(|(name, info)| Stored {
            name: name.clone(),
            shape: info.shape.dims().iter().map(|&d| d as u64).collect(),
            dtype: format!("{:?}", info.ggml_dtype),
        })
        .collect();
    tensors.sort_by(|a, b| a.name.cmp(&b.name));
    let config = config(&content, &tensors, &shown)?;
    Ok(Checkpoint {
        format: Format::Gguf,
        path: shown.clone(),
        tensors,
        config,
        config_file: shown,
    })
}

fn number(v: &Value) -> Option<f64> {
    Some(match v {
        Value::U8(x) => *x as f64,
        Value::I8(x) => *x as f64,
        Value::U16(x) => *x as f64,
        Value::I16(x) => *x as f64,
        Value::U32(x) => *x as f64,
        Value::I32(x) => *x as f64,
        Value::U64(x) => *x as f64,
        Value::I64(x) => *x as f64,
        Value::F32(x) => *x as f64,
        Value::F64(x) => *x,
        _ => return None,
    })
}

/// The config.json the metadata stands for.
fn config(c: &Content, tensors: &[Stored], shown: &str) -> Result<serde_json::Value, Error> {
    let arch = c
        .metadata
        .get("general.architecture")
        .and_then(|v| v.to_string().ok())
        .ok_or_else(|| {
            Error::new(
                shown,
                "general.architecture",
                "is missing; a GGUF model names its architecture there",
            )
        })?
        .clone();
    let model_type = ARCHITECTURES
        .iter()
        .find(|(a, _)| *a == arch)
        .map(|(_, m)| *m)
        .ok_or_else(|| {
            let list: Vec<&str> = ARCHITECTURES.iter().map(|(a, _)| *a).collect();
            Error::new(
                shown,
                "general.architecture",
                format!(
                    "`{arch}` is not supported; supported GGUF architectures: {}",
                    list.join(", ")
                ),
            )
        })?;
    let key = |k: &str| c.metadata.get(&format!("{arch}.{k}"));
    let mut cfg = Map::new();
    cfg.insert("model_type".into(), json!(model_type));
    // Integer sizes stay integers so the loaders' checks read them as such.
    let mut put = |name: &str, k: &str, integer: bool| -> Result<(), Error> {
        if let Some(v) = key(k) {
            let n = number(v)
                .ok_or_else(|| Error::new(shown, format!("{arch}.{k}"), "must be a number"))?;
            cfg.insert(
                name.into(),
                if integer && n.fract() == 0.0 && n >= 0.0 {
                    json!(n as u64)
                } else {
                    json!(n)
                },
            );
        }
        Ok(())
    };
    put("hidden_size", "embedding_length", true)?;
    put("intermediate_size", "feed_forward_length", true)?;
    put("num_hidden_layers", "block_count", true)?;
    put("num_attention_heads", "attention.head_count", true)?;
    put("num_key_value_heads", "attention.head_count_kv", true)?;
    put("head_dim", "attention.key_length", true)?;
    put("max_position_embeddings", "context_length", true)?;
    put("rms_norm_eps", "attention.layer_norm_rms_epsilon", false)?;
    put("rope_theta", "rope.freq_base", false)?;
    put("sliding_window", "attention.sliding_window", true)?;
    put("attn_logit_softcapping", "attn_logit_softcapping", false)?;
    put("final_logit_softcapping", "final_logit_softcapping", false)?;
    put("vocab_size", "vocab_size", true)?;
    if !cfg.contains_key("vocab_size") {
        if let Some(Ok(tokens)) = c.metadata.get("tokenizer.ggml.tokens").map(|v| v.to_vec()) {
            cfg.insert("vocab_size".into(), json!(tokens.len()));
        }
    }
    if arch == "gemma2" {
        // llama.cpp scales Gemma 2 scores by 1/√head_dim, the value the 2B and 9B models use.
        if let Some(hd) = cfg.get("head_dim").cloned() {
            cfg.insert("query_pre_attn_scalar".into(), hd);
        }
    }
    if let (Some(kind), Some(factor)) = (
        key("rope.scaling.type").and_then(|v| v.to_string().ok()),
        key("rope.scaling.factor").and_then(number),
    ) {
        if kind != "none" {
            let mut scaling = json!({ "rope_type": kind, "factor": factor });
            if let Some(orig) = key("rope.scaling.original_context_length").and_then(number) {
                scaling["original_max_position_embeddings"] = json!(orig as u64);
            }
            cfg.insert("rope_scaling".into(), scaling);
        }
    }
    // A GGUF without an output matrix ties the LM head to the embedding.
    cfg.insert(
        "tie_word_embeddings".into(),
        json!(!tensors.iter().any(|t| t.name == "output.weight")),
    );
    if let Some(name) = c
        .metadata
        .get("general.name")
        .and_then(|v| v.to_string().ok())
    {
        cfg.insert("_name_or_path".into(), json!(name));
    }
    Ok(serde_json::Value::Object(cfg))
}
