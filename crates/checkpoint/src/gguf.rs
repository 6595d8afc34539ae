//! GGUF checkpoints: the header read and checked by `gguf_header`; the Spec comes from the
//! metadata alone, through the same loaders (and so the same checks) as a config.json, by
//! writing the metadata as the config.json it stands for. An error about a value names the GGUF
//! key it came from.

use crate::gguf_header::{self, Header};
use crate::{Checkpoint, Format, Stored};
use anatomy_core::Error;
use candle_core::quantized::gguf_file::Value;
use serde_json::{json, Map};
use std::path::Path;

/// GGUF architectures anatomy reads, and the `model_type` each one is: those with a fixture that
/// llama.cpp itself runs as transformers does (scripts/make_gguf_fixtures.py), each the one its
/// registry row names (`Family::gguf`).
pub const ARCHITECTURES: &[(&str, &str)] = &[
    ("llama", "llama"),
    ("qwen2", "qwen2"),
    ("qwen3", "qwen3"),
    ("qwen2moe", "qwen2_moe"),
    ("qwen3moe", "qwen3_moe"),
    ("gemma2", "gemma2"),
    ("gemma3", "gemma3_text"),
    ("phi3", "phi3"),
    ("olmo2", "olmo2"),
    ("smollm3", "smollm3"),
    ("granite", "granite"),
    ("starcoder2", "starcoder2"),
    ("command-r", "cohere"),
    ("gemma", "gemma"),
    ("stablelm", "stablelm"),
    ("olmo", "olmo"),
    ("arcee", "arcee"),
    ("ernie4_5", "ernie4_5"),
    ("nemotron", "nemotron"),
    ("olmoe", "olmoe"),
    ("seed_oss", "seed_oss"),
    ("phi2", "phi"),
    ("starcoder", "gpt_bigcode"),
    ("gptneox", "gpt_neox"),
    ("bloom", "bloom"),
    ("falcon", "falcon"),
    ("mpt", "mpt"),
    ("cohere2", "cohere2"),
    ("glm4", "glm4"),
    ("exaone4", "exaone4"),
    ("ernie4_5-moe", "ernie4_5_moe"),
];

/// Does llama.cpp's converter store architecture `arch`'s Q and K rows permuted for its RoPE
/// layout (pairs interleaved)? A llama's (a Mixtral's too, which it writes as a llama with
/// experts), SmolLM3's, Granite's and Arcee's, each converted as a `LlamaModel`
/// (convert_hf_to_gguf.py, `LlamaModel.permute`), and OLMo's, which calls that permute.
pub fn permutes_qk(arch: &str) -> bool {
    matches!(arch, "llama" | "smollm3" | "granite" | "arcee" | "olmo")
}

/// Does llama.cpp's converter store architecture `arch`'s fused Q/K/V rows (and bias) as all
/// queries, then keys, then values, where transformers keeps each K/V group's queries, key and
/// value together? GPT-NeoX's and BLOOM's (a group per head) and Falcon's (one for
/// multi-query): convert_hf_to_gguf.py moves them, as llama.cpp's graph splits the fused output
/// into three blocks.
pub fn reorders_qkv(arch: &str) -> bool {
    matches!(arch, "gptneox" | "bloom" | "falcon")
}

/// Does llama.cpp's converter store architecture `arch`'s norm weights w as 1 + w, the factor
/// its norm multiplies by? Gemma's RMSNorms and Nemotron's LayerNorm1P scale by 1 + w
/// (convert_hf_to_gguf.py adds 1 to every `norm.weight` of theirs).
pub fn norms_plus_one(arch: &str) -> bool {
    matches!(arch, "gemma" | "gemma2" | "gemma3" | "nemotron")
}

/// Layer tensors llama.cpp names otherwise for some architectures than for the rest:
/// (architecture, its name, the name anatomy's naming gives the role). Seed-OSS's norm before
/// the MLP is `post_attention_norm` there, a llama's `ffn_norm`.
const RENAMED: &[(&str, &str, &str)] = &[("seed_oss", "post_attention_norm", "ffn_norm")];

/// Tensors llama.cpp's converter squeezes, which transformers holds with a leading 1:
/// (architecture, name ending). ERNIE 4.5 MoE's correction bias is [1, experts] there.
const SQUEEZED: &[(&str, &str)] = &[("ernie4_5-moe", "exp_probs_b.bias")];

/// The shape GGUF tensor `name` of architecture `arch` has in transformers (`SQUEEZED`).
fn shape_as_stored(arch: &str, name: &str, shape: &[u64]) -> Vec<u64> {
    let squeezed = SQUEEZED
        .iter()
        .any(|(a, end)| *a == arch && name.ends_with(end));
    match squeezed {
        true => [1].into_iter().chain(shape.iter().copied()).collect(),
        false => shape.to_vec(),
    }
}

/// The name anatomy reads GGUF tensor `name` of architecture `arch` under (`RENAMED`).
pub fn tensor_name(arch: &str, name: &str) -> String {
    let layer = name.strip_prefix("blk.").and_then(|r| r.split_once('.'));
    if let Some((b, rest)) = layer {
        for (_, from, to) in RENAMED.iter().filter(|(a, ..)| *a == arch) {
            if let Some(suffix) = rest.strip_prefix(from).filter(|s| s.starts_with('.')) {
                return format!("blk.{b}.{to}{suffix}");
            }
        }
    }
    name.to_string()
}

/// Keys only some architectures write, or whose config classes name otherwise: (architecture,
/// config key, its GGUF key under the architecture's prefix). LayerNorm's epsilon under each
/// config's own name; Command R's logit scale; Granite's four multipliers; StarCoder's n_inner,
/// GPT-NeoX's rotary_emb_base and Falcon's ffn_hidden_size.
const OWN_KEYS: &[(&str, &str, &str)] = &[
    (
        "bloom",
        "layer_norm_epsilon",
        "attention.layer_norm_epsilon",
    ),
    ("cohere2", "layer_norm_eps", "attention.layer_norm_epsilon"),
    ("cohere2", "logit_scale", "logit_scale"),
    (
        "command-r",
        "layer_norm_eps",
        "attention.layer_norm_epsilon",
    ),
    ("command-r", "logit_scale", "logit_scale"),
    ("ernie4_5-moe", "moe_num_experts", "expert_count"),
    ("ernie4_5-moe", "moe_k", "expert_used_count"),
    (
        "ernie4_5-moe",
        "moe_layer_start_index",
        "leading_dense_block_count",
    ),
    (
        "ernie4_5-moe",
        "moe_layer_interval",
        "interleave_moe_layer_step",
    ),
    (
        "falcon",
        "layer_norm_epsilon",
        "attention.layer_norm_epsilon",
    ),
    ("falcon", "ffn_hidden_size", "feed_forward_length"),
    ("gptneox", "layer_norm_eps", "attention.layer_norm_epsilon"),
    ("gptneox", "rotary_emb_base", "rope.freq_base"),
    ("granite", "embedding_multiplier", "embedding_scale"),
    ("granite", "residual_multiplier", "residual_scale"),
    ("granite", "attention_multiplier", "attention.scale"),
    ("granite", "logits_scaling", "logit_scale"),
    ("mpt", "layer_norm_epsilon", "attention.layer_norm_epsilon"),
    ("nemotron", "norm_eps", "attention.layer_norm_epsilon"),
    ("phi2", "layer_norm_eps", "attention.layer_norm_epsilon"),
    ("stablelm", "layer_norm_eps", "attention.layer_norm_epsilon"),
    (
        "starcoder",
        "layer_norm_epsilon",
        "attention.layer_norm_epsilon",
    ),
    ("starcoder", "n_inner", "feed_forward_length"),
    ("starcoder2", "norm_epsilon", "attention.layer_norm_epsilon"),
];

pub fn open(path: &Path) -> Result<Checkpoint, Error> {
    let shown = path.display().to_string();
    let file = crate::open_regular(path)?;
    let len = file
        .metadata()
        .map_err(|e| Error::file(&shown, format!("cannot read: {e}")))?
        .len();
    read(&mut std::io::BufReader::new(file), len, &shown)
}

/// Read a GGUF header (metadata and tensor infos) of `len` bytes from `reader`; tensor data is
/// located and checked, not read.
pub fn read<R: std::io::Read + std::io::Seek>(
    reader: &mut R,
    len: u64,
    shown: &str,
) -> Result<Checkpoint, Error> {
    let (header, mut problems) =
        gguf_header::read(reader, len).map_err(|m| Error::file(shown, m))?;
    for p in &mut problems {
        p.file = shown.to_string();
    }
    let arch = match header.get("general.architecture") {
        Some(Value::String(a)) => a.clone(),
        _ => String::new(),
    };
    let mut tensors: Vec<Stored> = header
        .tensors
        .iter()
        .map(|t| Stored {
            name: tensor_name(&arch, &t.name),
            shape: shape_as_stored(&arch, &t.name, &t.shape),
            dtype: gguf_header::type_name(t.type_id),
        })
        .collect();
    tensors.sort_by(|a, b| a.name.cmp(&b.name));
    let (config, keys) = config(&header, &tensors, shown)?;
    Ok(Checkpoint {
        format: Format::Gguf,
        path: shown.to_string(),
        tensors,
        config,
        config_file: shown.to_string(),
        field_names: keys,
        problems,
        gguf: Some(header),
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
        // The shortest decimal that is this f32: the value the converter was given (1e-5, not
        // 9.99999974738e-6), which is the same f32.
        Value::F32(x) => x.to_string().parse().ok()?,
        Value::F64(x) => *x,
        _ => return None,
    })
}

/// The config.json the metadata stands for, and which GGUF key each of its fields came from.
fn config(
    h: &Header,
    tensors: &[Stored],
    shown: &str,
) -> Result<(serde_json::Value, Vec<(String, String)>), Error> {
    let string = |k: &str| match h.get(k) {
        Some(Value::String(s)) => Some(s.clone()),
        _ => None,
    };
    let arch = string("general.architecture").ok_or_else(|| {
        Error::new(
            shown,
            "general.architecture",
            "is missing or not a string; a GGUF model names its architecture there",
        )
    })?;
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
                    "`{}` is not supported; supported GGUF architectures: {}",
                    anatomy_core::fmt::printable(&arch),
                    list.join(", ")
                ),
            )
        })?;
    let key = |k: &str| h.get(&format!("{arch}.{k}"));
    let mut cfg = Map::new();
    let mut keys = Vec::new();
    cfg.insert("model_type".into(), json!(model_type));
    // Integer sizes stay integers so the loaders' checks read them as such; a non-finite float
    // is refused here, since JSON has no NaN.
    let mut put = |name: &str, k: &str, integer: bool| -> Result<(), Error> {
        let full = format!("{arch}.{k}");
        if let Some(v) = key(k) {
            let n = number(v).ok_or_else(|| Error::new(shown, &full, "must be a number"))?;
            if !n.is_finite() {
                return Err(Error::new(
                    shown,
                    &full,
                    format!("is {n}; it must be a finite number"),
                ));
            }
            cfg.insert(
                name.into(),
                if integer && n.fract() == 0.0 && n >= 0.0 {
                    json!(n as u64)
                } else {
                    json!(n)
                },
            );
            keys.push((name.to_string(), full));
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
    put("num_local_experts", "expert_count", true)?;
    put("num_experts_per_tok", "expert_used_count", true)?;
    put("moe_intermediate_size", "expert_feed_forward_length", true)?;
    put(
        "shared_expert_intermediate_size",
        "expert_shared_feed_forward_length",
        true,
    )?;
    let own: Vec<_> = OWN_KEYS.iter().filter(|(a, ..)| *a == arch).collect();
    for (_, name, k) in &own {
        put(name, k, false)?;
    }
    // The architecture's own name for a key replaces the common one (StarCoder's n_inner).
    for (_, name, k) in own {
        let full = format!("{arch}.{k}");
        let common: Vec<String> = keys
            .iter()
            .filter(|(n, f)| *f == full && n != name)
            .map(|(n, _)| n.clone())
            .collect();
        for n in common {
            cfg.remove(&n);
            keys.retain(|(k, _)| *k != n);
        }
    }
    // Sizes some config classes fix rather than read: GPT-NeoX, BLOOM and MPT have as many K/V
    // heads as query heads, BLOOM and MPT an MLP four times as wide, BLOOM no position limit
    // (ALiBi). The file's value is dropped where it is what the class implies, and refused
    // otherwise.
    let size = |k: &str| cfg.get(k).and_then(|v| v.as_u64());
    let mut implied = Vec::new();
    if matches!(arch.as_str(), "gptneox" | "bloom" | "mpt") {
        implied.push((
            "num_key_value_heads",
            size("num_attention_heads"),
            "attention.head_count_kv",
        ));
    }
    if matches!(arch.as_str(), "bloom" | "mpt") {
        let wide = size("hidden_size").map(|h| 4 * h);
        implied.push(("intermediate_size", wide, "feed_forward_length"));
    }
    if arch == "bloom" {
        implied.push(("max_position_embeddings", None, "context_length"));
    }
    for (name, want, k) in implied {
        let Some(v) = cfg.remove(name) else { continue };
        keys.retain(|(n, _)| n != name);
        if want.is_some() && v.as_u64() != want {
            return Err(Error::new(
                shown,
                format!("{arch}.{k}"),
                format!(
                    "is {v}; a `{model_type}` model's config fixes it at {}",
                    want.unwrap_or(0)
                ),
            ));
        }
    }
    if arch == "gptneox" {
        // Whether attention and MLP run side by side.
        match key("use_parallel_residual") {
            Some(Value::Bool(b)) => {
                cfg.insert("use_parallel_residual".into(), json!(b));
                keys.push((
                    "use_parallel_residual".into(),
                    "gptneox.use_parallel_residual".into(),
                ));
            }
            Some(_) => {
                return Err(Error::new(
                    shown,
                    "gptneox.use_parallel_residual",
                    "must be a bool",
                ))
            }
            None => {}
        }
    }
    if arch == "falcon" {
        // Attention and MLP side by side, as llama.cpp runs every Falcon; a second norm per
        // layer marks the new decoder architecture (40B, 180B) and its K/V groups, else one K/V
        // head is multi-query.
        cfg.insert("parallel_attn".into(), json!(true));
        let kv = cfg.remove("num_key_value_heads");
        let kv_key = keys.iter().position(|(k, _)| k == "num_key_value_heads");
        let new = tensors.iter().any(|t| t.name == "blk.0.attn_norm_2.weight");
        cfg.insert("new_decoder_architecture".into(), json!(new));
        let (name, value) = match new {
            true => ("num_kv_heads", kv.unwrap_or(json!(1))),
            false => ("multi_query", json!(kv.and_then(|v| v.as_u64()) == Some(1))),
        };
        cfg.insert(name.into(), value);
        if let Some(i) = kv_key {
            keys[i].0 = name.into();
        }
    }
    if arch == "ernie4_5-moe" {
        // Shared experts as a count of expert widths.
        if let Some(shared) = cfg.remove("shared_expert_intermediate_size") {
            let full = "ernie4_5-moe.expert_shared_feed_forward_length";
            keys.retain(|(k, _)| k != "shared_expert_intermediate_size");
            let width = cfg.get("moe_intermediate_size").and_then(|v| v.as_u64());
            let count = shared
                .as_u64()
                .zip(width.filter(|w| *w > 0))
                .and_then(|(s, w)| s.is_multiple_of(w).then_some(s / w));
            let Some(count) = count else {
                return Err(Error::new(
                    shown,
                    full,
                    format!("is {shared}; ERNIE's shared experts are a whole number of expert widths (expert_feed_forward_length)"),
                ));
            };
            cfg.insert("moe_num_shared_experts".into(), json!(count));
            keys.push(("moe_num_shared_experts".into(), full.into()));
        }
    }
    if arch == "mpt" {
        // transformers' MPT biases scores by ALiBi with a maximum of 8 whatever its config says;
        // clip_qkv lives in attn_config.
        let full = "mpt.attention.max_alibi_bias";
        match key("attention.max_alibi_bias").map(number) {
            Some(Some(8.0)) => {}
            Some(b) => {
                return Err(Error::new(
                    shown,
                    full,
                    format!(
                        "is {}; transformers' MPT biases scores by ALiBi with a maximum of 8",
                        b.map_or("not a number".into(), |b| b.to_string())
                    ),
                ))
            }
            None => {
                return Err(Error::new(
                    shown,
                    full,
                    "is missing; an MPT biases scores by ALiBi",
                ))
            }
        }
        if let Some(v) = key("attention.clamp_kqv") {
            let clip = number(v)
                .ok_or_else(|| Error::new(shown, "mpt.attention.clamp_kqv", "must be a number"))?;
            cfg.insert("attn_config".into(), json!({ "clip_qkv": clip }));
            keys.push((
                "attn_config.clip_qkv".into(),
                "mpt.attention.clamp_kqv".into(),
            ));
        }
    }
    if arch == "starcoder" {
        // GPTBigCode says multi_query, one K/V head, or none: as many as the query heads.
        if let Some(kv) = cfg.remove("num_key_value_heads") {
            cfg.insert("multi_query".into(), json!(kv.as_u64() == Some(1)));
            for k in keys.iter_mut().filter(|(k, _)| k == "num_key_value_heads") {
                k.0 = "multi_query".into();
            }
        }
    }
    // llama.cpp's head size is the file's key_length, else hidden / heads, whatever default of
    // its own the family's config class has (the 128 of Qwen3, Ernie 4.5 and Seed-OSS, Gemma's
    // 256); the other classes derive it so.
    let own_head = matches!(
        arch.as_str(),
        "qwen3" | "gemma" | "gemma2" | "gemma3" | "ernie4_5" | "seed_oss"
    );
    if own_head && !cfg.contains_key("head_dim") {
        let size = |k: &str| cfg.get(k).and_then(|v| v.as_u64());
        if let Some((h, n)) =
            size("hidden_size").zip(size("num_attention_heads").filter(|n| *n > 0))
        {
            cfg.insert("head_dim".into(), json!(h / n));
            keys.push(("head_dim".into(), format!("{arch}.embedding_length")));
        }
    }
    // llama.cpp writes Mixtral as a llama with experts.
    if arch == "llama" && cfg.get("num_local_experts").and_then(|v| v.as_u64()) > Some(0) {
        cfg.insert("model_type".into(), json!("mixtral"));
    }
    if !cfg.contains_key("vocab_size") {
        if let Some(Value::Array(tokens)) = h.get("tokenizer.ggml.tokens") {
            cfg.insert("vocab_size".into(), json!(tokens.len()));
        }
    }
    // The rotated dims: a fraction of the head, which the loaders check (even, within the head).
    if let Some(v) = key("rope.dimension_count") {
        let full = format!("{arch}.rope.dimension_count");
        let rot = number(v).ok_or_else(|| Error::new(shown, &full, "must be a number"))?;
        let heads = cfg.get("num_attention_heads").and_then(|v| v.as_f64());
        let head_dim = cfg
            .get("head_dim")
            .and_then(|v| v.as_f64())
            .or_else(|| Some(cfg.get("hidden_size")?.as_f64()? / heads?));
        if let Some(hd) = head_dim.filter(|hd| *hd > 0.0) {
            if !(rot >= 2.0 && rot <= hd && rot.fract() == 0.0 && (rot as u64).is_multiple_of(2)) {
                return Err(Error::new(
                    shown,
                    &full,
                    format!("is {rot}; the rotated dims must be an even number from 2 to the head size ({hd})"),
                ));
            }
            if rot != hd {
                cfg.insert("partial_rotary_factor".into(), json!(rot / hd));
                keys.push(("partial_rotary_factor".into(), full));
            }
        }
    }
    if arch == "gptneox" {
        // GPT-NeoX's config names the rotated fraction rotary_pct.
        if let Some(f) = cfg.remove("partial_rotary_factor") {
            cfg.insert("rotary_pct".into(), f);
            for k in keys
                .iter_mut()
                .filter(|(k, _)| k == "partial_rotary_factor")
            {
                k.0 = "rotary_pct".into();
            }
        }
    }
    if arch == "qwen2moe" {
        // Qwen2-MoE's config names its expert count `num_experts` (no alias for Mixtral's key).
        if let Some(n) = cfg.remove("num_local_experts") {
            cfg.insert("num_experts".into(), n);
            for k in keys.iter_mut().filter(|(k, _)| k == "num_local_experts") {
                k.0 = "num_experts".into();
            }
        }
    }
    if arch == "qwen3moe" {
        // The file does not say; llama.cpp renormalizes the chosen experts' weights, as the
        // published Qwen3-MoE configs ask.
        cfg.insert("norm_topk_prob".into(), json!(true));
        keys.push(("norm_topk_prob".into(), "general.architecture".into()));
    }
    if arch == "gemma2" {
        // llama.cpp scales Gemma 2 scores by 1/√head_dim, the value the 2B and 9B models use.
        if let Some(hd) = cfg.get("head_dim").cloned() {
            cfg.insert("query_pre_attn_scalar".into(), hd);
        }
    }
    if arch == "cohere2" && cfg.contains_key("sliding_window") {
        // Which layers slide (and rotate; the others attend globally without RoPE): the file's
        // pattern, a flag per layer or a period, else llama.cpp's three sliding layers per
        // global one.
        let layers = cfg
            .get("num_hidden_layers")
            .and_then(|v| v.as_u64())
            .unwrap_or(0);
        let full = "cohere2.attention.sliding_window_pattern";
        let sliding: Vec<bool> = match key("attention.sliding_window_pattern") {
            Some(Value::Array(flags)) => flags
                .iter()
                .map(|f| match f {
                    Value::Bool(b) => Ok(*b),
                    _ => Err(Error::new(shown, full, "must hold a bool per layer")),
                })
                .collect::<Result<_, _>>()?,
            Some(v) => {
                let n = number(v)
                    .filter(|n| *n >= 1.0 && n.fract() == 0.0)
                    .ok_or_else(|| Error::new(shown, full, "must be a whole number from 1"))?;
                (0..layers).map(|i| (i as f64 % n) < n - 1.0).collect()
            }
            None => (0..layers).map(|i| i % 4 < 3).collect(),
        };
        let types: Vec<&str> = sliding
            .iter()
            .map(|s| {
                if *s {
                    "sliding_attention"
                } else {
                    "full_attention"
                }
            })
            .collect();
        cfg.insert("layer_types".into(), json!(types));
        keys.push(("layer_types".into(), full.into()));
    }
    if arch == "exaone4" {
        // llama.cpp slides only the 64-layer model (EXAONE 4.0 32B: three local layers with
        // RoPE per global one without, window 4096 unless the file says), every other layer
        // global with RoPE (1.2B).
        let layers = cfg
            .get("num_hidden_layers")
            .and_then(|v| v.as_u64())
            .unwrap_or(0);
        let types: Vec<&str> = (0..layers)
            .map(|i| match layers == 64 && i % 4 < 3 {
                true => "sliding_attention",
                false => "full_attention",
            })
            .collect();
        if layers != 64 {
            // No window: transformers then rotates every layer (its default window, 4096,
            // would leave the global layers without RoPE).
            cfg.insert("sliding_window".into(), serde_json::Value::Null);
            keys.retain(|(k, _)| k != "sliding_window");
            keys.push(("sliding_window".into(), "exaone4.block_count".into()));
        }
        cfg.insert("layer_types".into(), json!(types));
        keys.push(("layer_types".into(), "exaone4.block_count".into()));
    }
    if arch == "gemma3" {
        // The file says neither; llama.cpp fixes both (llama-model.cpp): five local layers per
        // global one, and scores scaled by 1/√head_dim, or 1/√(hidden / heads) in the 27B
        // model, which it knows by its 62 layers.
        cfg.insert("sliding_window_pattern".into(), json!(6));
        keys.push((
            "sliding_window_pattern".into(),
            "general.architecture".into(),
        ));
        let size = |k: &str| cfg.get(k).and_then(|v| v.as_u64());
        let hidden_per_head = size("hidden_size")
            .zip(size("num_attention_heads"))
            .map(|(h, n)| h / n.max(1));
        // llama.cpp's head size is the file's key_length, else hidden / heads.
        let scalar = if size("num_hidden_layers") == Some(62) {
            hidden_per_head
        } else {
            size("head_dim").or(hidden_per_head)
        };
        if let Some(s) = scalar {
            cfg.insert("query_pre_attn_scalar".into(), json!(s));
            keys.push((
                "query_pre_attn_scalar".into(),
                "general.architecture".into(),
            ));
        }
    }
    if let Some(kind) = key("rope.scaling.type") {
        let full = format!("{arch}.rope.scaling.type");
        let Value::String(kind) = kind else {
            return Err(Error::new(shown, &full, "must be a string"));
        };
        if kind != "none" {
            let mut scaling = Map::new();
            scaling.insert("rope_type".into(), json!(kind));
            keys.push(("rope_scaling.rope_type".into(), full));
            if let Some(f) = key("rope.scaling.factor").and_then(number) {
                scaling.insert("factor".into(), json!(f));
                keys.push((
                    "rope_scaling.factor".into(),
                    format!("{arch}.rope.scaling.factor"),
                ));
            }
            if let Some(orig) = key("rope.scaling.original_context_length").and_then(number) {
                scaling.insert(
                    "original_max_position_embeddings".into(),
                    json!(orig as u64),
                );
            }
            cfg.insert("rope_scaling".into(), serde_json::Value::Object(scaling));
        }
    }
    // A GGUF without an output matrix ties the LM head to the embedding.
    cfg.insert(
        "tie_word_embeddings".into(),
        json!(!tensors.iter().any(|t| t.name == "output.weight")),
    );
    if let Some(name) = string("general.name") {
        cfg.insert("_name_or_path".into(), json!(name));
    }
    Ok((serde_json::Value::Object(cfg), keys))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A metadata value of a GGUF header written by `header`.
    enum V {
        U32(u32),
        F32(f32),
        Bool(bool),
        Str(&'static str),
    }

    /// A GGUF v3 file of metadata alone (no tensors).
    fn header(kvs: &[(&str, V)]) -> Vec<u8> {
        let mut b = b"GGUF".to_vec();
        b.extend(3u32.to_le_bytes());
        b.extend(0u64.to_le_bytes());
        b.extend((kvs.len() as u64).to_le_bytes());
        let string = |b: &mut Vec<u8>, s: &str| {
            b.extend((s.len() as u64).to_le_bytes());
            b.extend(s.as_bytes());
        };
        for (k, v) in kvs {
            string(&mut b, k);
            // The value's type id (gguf_header), then the value.
            match v {
                V::U32(x) => {
                    b.extend(4u32.to_le_bytes());
                    b.extend(x.to_le_bytes());
                }
                V::F32(x) => {
                    b.extend(6u32.to_le_bytes());
                    b.extend(x.to_le_bytes());
                }
                V::Bool(x) => {
                    b.extend(7u32.to_le_bytes());
                    b.push(*x as u8);
                }
                V::Str(s) => {
                    b.extend(8u32.to_le_bytes());
                    string(&mut b, s);
                }
            }
        }
        b
    }

    fn config_of(kvs: &[(&str, V)]) -> Result<serde_json::Value, Error> {
        let bytes = header(kvs);
        let len = bytes.len() as u64;
        read(&mut std::io::Cursor::new(bytes), len, "m.gguf").map(|c| c.config)
    }

    /// A GPT-NeoX's metadata under its config's own names; sizes its config class fixes are
    /// refused where the file says otherwise, naming the key.
    #[test]
    fn gpt_neox_and_bloom_metadata_take_their_config_classes_names_and_fixed_sizes() {
        let neox = |kv: u32, parallel: V| {
            config_of(&[
                ("general.architecture", V::Str("gptneox")),
                ("gptneox.embedding_length", V::U32(64)),
                ("gptneox.attention.head_count", V::U32(4)),
                ("gptneox.attention.head_count_kv", V::U32(kv)),
                ("gptneox.rope.dimension_count", V::U32(4)),
                ("gptneox.rope.freq_base", V::F32(10000.0)),
                ("gptneox.use_parallel_residual", parallel),
            ])
        };
        let c = neox(4, V::Bool(false)).unwrap();
        assert_eq!(c["use_parallel_residual"], json!(false));
        assert_eq!(c["rotary_pct"], json!(0.25));
        assert_eq!(c["rotary_emb_base"], json!(10000.0));
        for absent in [
            "num_key_value_heads",
            "rope_theta",
            "partial_rotary_factor",
            "head_dim",
        ] {
            assert!(c.get(absent).is_none(), "{absent} in {c}");
        }
        let e = neox(2, V::Bool(true)).unwrap_err();
        assert_eq!(e.field, "gptneox.attention.head_count_kv", "{e}");
        let e = neox(4, V::U32(1)).unwrap_err();
        assert_eq!(e.field, "gptneox.use_parallel_residual", "{e}");
        let bloom = |ffn: u32| {
            config_of(&[
                ("general.architecture", V::Str("bloom")),
                ("bloom.embedding_length", V::U32(64)),
                ("bloom.feed_forward_length", V::U32(ffn)),
                ("bloom.context_length", V::U32(2048)),
            ])
        };
        let c = bloom(256).unwrap();
        assert!(c.get("intermediate_size").is_none() && c.get("max_position_embeddings").is_none());
        assert_eq!(bloom(100).unwrap_err().field, "bloom.feed_forward_length");
        // transformers' MPT fixes ALiBi's maximum at 8.
        let mpt = |max: f32| {
            config_of(&[
                ("general.architecture", V::Str("mpt")),
                ("mpt.attention.max_alibi_bias", V::F32(max)),
                ("mpt.attention.clamp_kqv", V::F32(6.0)),
            ])
        };
        assert_eq!(mpt(8.0).unwrap()["attn_config"], json!({ "clip_qkv": 6.0 }));
        assert_eq!(mpt(4.0).unwrap_err().field, "mpt.attention.max_alibi_bias");
    }

    /// EXAONE 4's layers as llama.cpp runs them: the 64-layer model's three sliding per global
    /// one, every layer of the others global, with RoPE (no window).
    #[test]
    fn exaone4_slides_only_the_64_layer_model_as_llama_cpp_does() {
        let config = |layers: u32| {
            config_of(&[
                ("general.architecture", V::Str("exaone4")),
                ("exaone4.block_count", V::U32(layers)),
            ])
            .unwrap()
        };
        let (s, f) = ("sliding_attention", "full_attention");
        let big = config(64);
        assert_eq!(
            big["layer_types"].as_array().unwrap()[..4],
            [json!(s), json!(s), json!(s), json!(f)]
        );
        assert!(big.get("sliding_window").is_none(), "the class's 4096");
        let small = config(30);
        assert!(small["layer_types"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t == f));
        assert_eq!(small["sliding_window"], serde_json::Value::Null);
    }

    /// Cohere 2's sliding layers: llama.cpp's three per global one, or the file's period.
    #[test]
    fn cohere2_layers_slide_by_the_files_pattern_or_llama_cpps() {
        let types = |pattern: Option<u32>| {
            let mut kvs = vec![
                ("general.architecture", V::Str("cohere2")),
                ("cohere2.block_count", V::U32(4)),
                ("cohere2.attention.sliding_window", V::U32(8)),
            ];
            if let Some(p) = pattern {
                kvs.push(("cohere2.attention.sliding_window_pattern", V::U32(p)));
            }
            config_of(&kvs).map(|c| c["layer_types"].clone())
        };
        let (s, f) = ("sliding_attention", "full_attention");
        assert_eq!(types(None).unwrap(), json!([s, s, s, f]));
        assert_eq!(types(Some(2)).unwrap(), json!([s, f, s, f]));
        assert_eq!(
            types(Some(0)).unwrap_err().field,
            "cohere2.attention.sliding_window_pattern"
        );
    }

    /// The GGUF architectures read are the ones the registry rows of their model types name.
    #[test]
    fn each_architecture_read_is_the_one_its_registry_row_names() {
        let wrong: Vec<String> = ARCHITECTURES
            .iter()
            .filter_map(|(arch, model_type)| {
                let row = anatomy_core::families::FAMILIES
                    .iter()
                    .find(|f| f.model_type == *model_type)
                    .expect("a registry row");
                (row.gguf != Some(*arch))
                    .then(|| format!("{model_type}: {:?}, not {arch}", row.gguf))
            })
            .collect();
        assert!(wrong.is_empty(), "{wrong:?}");
    }
}
