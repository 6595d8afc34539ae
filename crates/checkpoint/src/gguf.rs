//! GGUF checkpoints: the header read and checked by `gguf_header`; the Spec comes from the
//! metadata alone, through the same loaders (and so the same checks) as a config.json, by
//! writing the metadata as the config.json it stands for. An error about a value names the GGUF
//! key it came from.

use crate::gguf_arch::{self, number, Draft};
use crate::gguf_header::{self, Header};
use crate::{Checkpoint, Format, Stored};
use anatomy_core::Error;
use candle_core::quantized::gguf_file::Value;
use serde_json::{json, Map};
use std::path::Path;

/// A GGUF architecture anatomy reads: llama.cpp's name for it, the `model_type` it is, what
/// llama.cpp's converter changed in its tensors, and what its metadata means beyond the keys every
/// architecture shares.
pub struct Architecture {
    pub name: &'static str,
    pub model_type: &'static str,
    /// Q and K rows permuted for llama.cpp's RoPE layout (pairs interleaved): a `LlamaModel`'s
    /// (convert_hf_to_gguf.py, `LlamaModel.permute`; a Mixtral is written as a llama), and
    /// OLMo's, which calls that permute.
    pub qk_permuted: bool,
    /// A fused Q/K/V (and its bias) stored as all queries, then keys, then values, where
    /// transformers keeps each K/V group's queries, key and value together: GPT-NeoX's and
    /// BLOOM's (a group per head), Falcon's (one for multi-query), which llama.cpp's graph splits
    /// into three blocks.
    pub qkv_regrouped: bool,
    /// Norm weights w stored as 1 + w, the factor the norm multiplies by: Gemma's RMSNorms,
    /// Nemotron's LayerNorm1P.
    pub norms_plus_one: bool,
    /// A config class with a head size of its own (Qwen3's, Ernie 4.5's and Seed-OSS's 128,
    /// Gemma's 256), which a file without key_length overrides with llama.cpp's hidden / heads;
    /// the other classes derive it so.
    pub(crate) own_head_dim: bool,
    pub(crate) adapt: gguf_arch::Adapt,
}

const fn arch(
    name: &'static str,
    model_type: &'static str,
    adapt: gguf_arch::Adapt,
) -> Architecture {
    Architecture {
        name,
        model_type,
        qk_permuted: false,
        qkv_regrouped: false,
        norms_plus_one: false,
        own_head_dim: false,
        adapt,
    }
}

impl Architecture {
    const fn qk_permuted(self) -> Self {
        Architecture {
            qk_permuted: true,
            ..self
        }
    }

    const fn qkv_regrouped(self) -> Self {
        Architecture {
            qkv_regrouped: true,
            ..self
        }
    }

    const fn norms_plus_one(self) -> Self {
        Architecture {
            norms_plus_one: true,
            ..self
        }
    }

    const fn own_head_dim(self) -> Self {
        Architecture {
            own_head_dim: true,
            ..self
        }
    }
}

/// The architecture llama.cpp calls `name`, if anatomy reads it.
pub fn find(name: &str) -> Option<&'static Architecture> {
    ARCHITECTURES.iter().find(|a| a.name == name)
}

/// GGUF architectures anatomy reads: those with a fixture that llama.cpp itself runs as
/// transformers does (scripts/make_gguf_fixtures.py), each the one its registry row names
/// (`Family::gguf`).
pub const ARCHITECTURES: &[Architecture] = {
    use gguf_arch::*;
    &[
        arch("llama", "llama", llama).qk_permuted(),
        arch("qwen2", "qwen2", nothing),
        arch("qwen3", "qwen3", nothing).own_head_dim(),
        arch("qwen2moe", "qwen2_moe", qwen2moe),
        arch("qwen3moe", "qwen3_moe", qwen3moe),
        arch("gemma2", "gemma2", gemma2)
            .norms_plus_one()
            .own_head_dim(),
        arch("gemma3", "gemma3_text", gemma3)
            .norms_plus_one()
            .own_head_dim(),
        arch("gemma4", "gemma4_text", gemma4),
        arch("phi3", "phi3", nothing),
        arch("olmo2", "olmo2", nothing),
        arch("smollm3", "smollm3", nothing).qk_permuted(),
        arch("granite", "granite", nothing).qk_permuted(),
        arch("starcoder2", "starcoder2", nothing),
        arch("command-r", "cohere", nothing),
        arch("gemma", "gemma", nothing)
            .norms_plus_one()
            .own_head_dim(),
        arch("stablelm", "stablelm", nothing),
        arch("olmo", "olmo", nothing).qk_permuted(),
        arch("arcee", "arcee", nothing).qk_permuted(),
        arch("ernie4_5", "ernie4_5", nothing).own_head_dim(),
        arch("nemotron", "nemotron", nothing).norms_plus_one(),
        arch("olmoe", "olmoe", nothing),
        arch("seed_oss", "seed_oss", nothing).own_head_dim(),
        arch("phi2", "phi", nothing),
        arch("starcoder", "gpt_bigcode", starcoder),
        arch("gptneox", "gpt_neox", gptneox).qkv_regrouped(),
        arch("bloom", "bloom", nothing).qkv_regrouped(),
        arch("falcon", "falcon", falcon).qkv_regrouped(),
        arch("mpt", "mpt", mpt),
        arch("cohere2", "cohere2", cohere2),
        arch("glm4", "glm4", nothing),
        arch("exaone4", "exaone4", exaone4),
        arch("ernie4_5-moe", "ernie4_5_moe", ernie_moe),
        arch("mistral3", "ministral3", nothing).qk_permuted(),
        arch("exaone", "exaone", nothing),
        arch("minimax-m2", "minimax_m2", minimax_m2),
        arch("hunyuan-dense", "hunyuan_v1_dense", hunyuan_alpha),
        arch("gpt2", "gpt2", nothing),
        arch("jais2", "jais2", nothing),
        arch("hunyuan-moe", "hunyuan_v1_moe", hunyuan_alpha),
        arch("lfm2", "lfm2", lfm2),
        arch("mamba2", "mamba2", mamba),
        arch("mamba", "mamba", mamba),
    ]
};

/// Layer tensors llama.cpp names otherwise for some architectures than for the rest:
/// (architecture, its name, the name anatomy's naming gives the role). Seed-OSS's norm before
/// the MLP is `post_attention_norm` there, a llama's `ffn_norm`.
const RENAMED: &[(&str, &str, &str)] = &[("seed_oss", "post_attention_norm", "ffn_norm")];

/// How transformers' shape differs from the one llama.cpp's converter writes.
enum Reshape {
    /// A dimension of 1 squeezed out, back at this place.
    One(usize),
    /// One dimension there: Mamba-2's A and D ([heads, 1] in the file), its grouped norm's weight
    /// ([groups, inner / groups]).
    Flat,
}

/// Tensors llama.cpp's converter reshapes: (architecture, name ending, how). ERNIE 4.5 MoE's
/// correction bias is [1, experts] in transformers, LFM2's and Mamba-2's convolution kernels
/// [channels, 1, L].
const RESHAPED: &[(&str, &str, Reshape)] = &[
    ("ernie4_5-moe", "exp_probs_b.bias", Reshape::One(0)),
    ("lfm2", "shortconv.conv.weight", Reshape::One(1)),
    ("mamba", "ssm_conv1d.weight", Reshape::One(1)),
    ("mamba2", "ssm_conv1d.weight", Reshape::One(1)),
    ("mamba2", "ssm_a", Reshape::Flat),
    ("mamba2", "ssm_d", Reshape::Flat),
    ("mamba2", "ssm_norm.weight", Reshape::Flat),
];

/// Does GGUF tensor `name` of architecture `arch` hold A = −exp(A_log) where transformers holds
/// A_log? Mamba's and Mamba-2's, as llama.cpp's converter writes them.
pub fn holds_a_not_its_log(arch: &str, name: &str) -> bool {
    matches!(arch, "mamba" | "mamba2") && name.ends_with("ssm_a")
}

/// Is GGUF tensor `name` of architecture `arch` the transpose of transformers' tensor? GPT-2's
/// Conv1D weights are [in, out] there, which llama.cpp's converter writes [out, in].
pub fn transposed(arch: &str, name: &str) -> bool {
    const CONV1D: [&str; 4] = [
        "attn_qkv.weight",
        "attn_output.weight",
        "ffn_up.weight",
        "ffn_down.weight",
    ];
    arch == "gpt2" && name.starts_with("blk.") && CONV1D.iter().any(|end| name.ends_with(end))
}

/// The shape GGUF tensor `name` of architecture `arch` has in transformers (`RESHAPED`,
/// `transposed`), given its shape in the file.
pub fn shape_as_stored(arch: &str, name: &str, shape: &[u64]) -> Vec<u64> {
    let reshaped = RESHAPED
        .iter()
        .find(|(a, end, _)| *a == arch && name.ends_with(end));
    if let Some((.., how)) = reshaped {
        let mut s = shape.to_vec();
        match how {
            Reshape::One(at) => s.insert((*at).min(s.len()), 1),
            Reshape::Flat => s = vec![shape.iter().product()],
        }
        s
    } else if transposed(arch, name) {
        shape.iter().rev().copied().collect()
    } else {
        shape.to_vec()
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

/// The keys every architecture writes under its prefix: (config key, GGUF key, whether an
/// integer size).
const COMMON_KEYS: &[(&str, &str, bool)] = &[
    ("hidden_size", "embedding_length", true),
    ("intermediate_size", "feed_forward_length", true),
    ("num_hidden_layers", "block_count", true),
    ("num_attention_heads", "attention.head_count", true),
    ("num_key_value_heads", "attention.head_count_kv", true),
    ("head_dim", "attention.key_length", true),
    ("max_position_embeddings", "context_length", true),
    ("rms_norm_eps", "attention.layer_norm_rms_epsilon", false),
    ("rope_theta", "rope.freq_base", false),
    ("sliding_window", "attention.sliding_window", true),
    ("attn_logit_softcapping", "attn_logit_softcapping", false),
    ("final_logit_softcapping", "final_logit_softcapping", false),
    ("vocab_size", "vocab_size", true),
    ("num_local_experts", "expert_count", true),
    ("num_experts_per_tok", "expert_used_count", true),
    ("moe_intermediate_size", "expert_feed_forward_length", true),
    (
        "shared_expert_intermediate_size",
        "expert_shared_feed_forward_length",
        true,
    ),
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
    let arch = architecture(&header, shown)?;
    let mut tensors: Vec<Stored> = header
        .tensors
        .iter()
        .map(|t| Stored {
            name: tensor_name(arch.name, &t.name),
            shape: shape_as_stored(arch.name, &t.name, &t.shape),
            dtype: gguf_header::type_name(t.type_id),
        })
        .collect();
    tensors.sort_by(|a, b| a.name.cmp(&b.name));
    let freqs = rope_freqs(reader, &header, shown)?;
    let (config, keys) = config(&header, arch, &tensors, freqs.as_deref(), shown)?;
    Ok(Checkpoint {
        format: Format::Gguf,
        path: shown.to_string(),
        tensors,
        config,
        config_file: shown.to_string(),
        field_names: keys,
        problems,
        gguf: Some(header),
        read_as_config: freqs
            .map(|_| vec!["rope_freqs.weight".to_string()])
            .unwrap_or_default(),
    })
}

/// The RoPE frequency factors llama.cpp's converter stores as the tensor `rope_freqs.weight`
/// (Gemma 4's proportional RoPE: 1 for the pairs that turn, 1e30 for those that do not), read
/// where the file holds them as F32, at most one per pair of a 2¹⁶-dim head.
fn rope_freqs<R: std::io::Read + std::io::Seek>(
    reader: &mut R,
    h: &Header,
    shown: &str,
) -> Result<Option<Vec<f32>>, Error> {
    let Some(t) = h.tensors.iter().find(|t| t.name == "rope_freqs.weight") else {
        return Ok(None);
    };
    let n = match t.shape.as_slice() {
        [n] if t.type_id == 0 && *n <= 1 << 15 => *n,
        _ => {
            return Err(Error::new(
                shown,
                "rope_freqs.weight",
                "must be one F32 factor per rotated pair (at most 32768)",
            ))
        }
    };
    let start = h
        .data_start
        .checked_add(t.offset)
        .filter(|s| s.checked_add(4 * n).is_some_and(|end| end <= h.file_len));
    let Some(start) = start else {
        return Err(Error::new(
            shown,
            "rope_freqs.weight",
            "lies outside the file",
        ));
    };
    let mut bytes = vec![0u8; 4 * n as usize];
    reader
        .seek(std::io::SeekFrom::Start(start))
        .and_then(|_| reader.read_exact(&mut bytes))
        .map_err(|e| Error::file(shown, format!("cannot read rope_freqs.weight: {e}")))?;
    Ok(Some(
        bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    ))
}

/// The architecture `general.architecture` names, if anatomy reads it.
fn architecture(h: &Header, shown: &str) -> Result<&'static Architecture, Error> {
    let Some(Value::String(name)) = h.get("general.architecture") else {
        return Err(Error::new(
            shown,
            "general.architecture",
            "is missing or not a string; a GGUF model names its architecture there",
        ));
    };
    ARCHITECTURES
        .iter()
        .find(|a| a.name == name)
        .ok_or_else(|| {
            let list: Vec<&str> = ARCHITECTURES.iter().map(|a| a.name).collect();
            Error::new(
                shown,
                "general.architecture",
                format!(
                    "`{}` is not supported; supported GGUF architectures: {}",
                    anatomy_core::fmt::printable(name),
                    list.join(", ")
                ),
            )
        })
}

/// The config.json the metadata stands for, and which GGUF key each of its fields came from.
fn config(
    h: &Header,
    a: &Architecture,
    tensors: &[Stored],
    rope_freqs: Option<&[f32]>,
    shown: &str,
) -> Result<(serde_json::Value, Vec<(String, String)>), Error> {
    let (arch, model_type) = (a.name, a.model_type);
    let mut d = Draft {
        arch,
        model_type,
        header: h,
        tensors,
        rope_freqs,
        shown,
        cfg: Map::new(),
        keys: Vec::new(),
    };
    d.cfg.insert("model_type".into(), json!(model_type));
    for (name, k, integer) in COMMON_KEYS {
        d.put(name, k, *integer)?;
    }
    gguf_arch::own_keys(&mut d)?;
    if !d.cfg.contains_key("vocab_size") {
        if let Some(Value::Array(tokens)) = h.get("tokenizer.ggml.tokens") {
            d.cfg.insert("vocab_size".into(), json!(tokens.len()));
        }
    }
    // The rotated dims: a fraction of the head, which the loaders check (even, within the head).
    if let Some(v) = d.key("rope.dimension_count") {
        const K: &str = "rope.dimension_count";
        let rot = number(v).ok_or_else(|| d.err(K, "must be a number"))?;
        let heads = d.size("num_attention_heads").map(|n| n as f64);
        let head_dim = d
            .size("head_dim")
            .map(|n| n as f64)
            .or_else(|| Some(d.size("hidden_size")? as f64 / heads?));
        if let Some(hd) = head_dim.filter(|hd| *hd > 0.0) {
            if !(rot >= 2.0 && rot <= hd && rot.fract() == 0.0 && (rot as u64).is_multiple_of(2)) {
                return Err(d.err(
                    K,
                    format!("is {rot}; the rotated dims must be an even number from 2 to the head size ({hd})"),
                ));
            }
            if rot != hd {
                let source = format!("{arch}.{K}");
                d.set("partial_rotary_factor", json!(rot / hd), &source);
            }
        }
    }
    gguf_arch::adapt(&mut d, a)?;
    if let Some(kind) = d.key("rope.scaling.type") {
        let Value::String(kind) = kind else {
            return Err(d.err("rope.scaling.type", "must be a string"));
        };
        if kind != "none" {
            let mut scaling = Map::new();
            scaling.insert("rope_type".into(), json!(kind));
            d.keys.push((
                "rope_scaling.rope_type".into(),
                format!("{arch}.rope.scaling.type"),
            ));
            if let Some(f) = d.key("rope.scaling.factor").and_then(number) {
                scaling.insert("factor".into(), json!(f));
                d.keys.push((
                    "rope_scaling.factor".into(),
                    format!("{arch}.rope.scaling.factor"),
                ));
            }
            if let Some(orig) = d
                .key("rope.scaling.original_context_length")
                .and_then(number)
            {
                scaling.insert(
                    "original_max_position_embeddings".into(),
                    json!(orig as u64),
                );
            }
            // YaRN's ramp, its mscale_all_dim (llama.cpp's log multiplier, with mscale taken
            // as 1), and Ministral 3's query scaling with position, under the RoPE dict's names.
            let extra = [
                ("beta_fast", "rope.scaling.yarn_beta_fast"),
                ("beta_slow", "rope.scaling.yarn_beta_slow"),
                ("mscale_all_dim", "rope.scaling.yarn_log_multiplier"),
                ("llama_4_scaling_beta", "attention.temperature_scale"),
            ];
            for (name, k) in extra {
                if let Some(v) = d.key(k) {
                    let v = number(v).ok_or_else(|| d.err(k, "must be a number"))?;
                    scaling.insert(name.into(), json!(v));
                    d.keys
                        .push((format!("rope_scaling.{name}"), format!("{arch}.{k}")));
                    if name == "mscale_all_dim" {
                        scaling.insert("mscale".into(), json!(1.0));
                    }
                }
            }
            d.cfg
                .insert("rope_scaling".into(), serde_json::Value::Object(scaling));
        }
    }
    // A GGUF without an output matrix ties the LM head to the embedding.
    d.cfg.insert(
        "tie_word_embeddings".into(),
        json!(!tensors.iter().any(|t| t.name == "output.weight")),
    );
    if let Some(Value::String(name)) = h.get("general.name") {
        d.cfg.insert("_name_or_path".into(), json!(name));
    }
    Ok((serde_json::Value::Object(d.cfg), d.keys))
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

    /// Gemma 4's metadata must say which layers are local; experts are not read yet.
    #[test]
    fn gemma4_needs_its_layer_pattern_and_refuses_experts() {
        let e = config_of(&[
            ("general.architecture", V::Str("gemma4")),
            ("gemma4.embedding_length", V::U32(64)),
        ])
        .unwrap_err();
        assert_eq!(e.field, "gemma4.attention.sliding_window_pattern", "{e}");
        let e = config_of(&[
            ("general.architecture", V::Str("gemma4")),
            ("gemma4.expert_count", V::U32(8)),
        ])
        .unwrap_err();
        assert_eq!(e.field, "gemma4.expert_count", "{e}");
        assert!(e.message.contains("not read from GGUF"), "{e}");
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

    /// HunYuan's NTK alpha scales the RoPE base as llama.cpp and transformers do: base ·
    /// alpha^(d/(d−2)).
    #[test]
    fn hunyuan_alpha_scales_the_rope_base() {
        let c = config_of(&[
            ("general.architecture", V::Str("hunyuan-dense")),
            ("hunyuan-dense.embedding_length", V::U32(4096)),
            ("hunyuan-dense.attention.head_count", V::U32(32)),
            ("hunyuan-dense.rope.freq_base", V::F32(10000.0)),
            ("hunyuan-dense.rope.scaling.alpha", V::F32(1000.0)),
        ])
        .unwrap();
        let want = 10000.0 * 1000f64.powf(128.0 / 126.0);
        let got = c["rope_theta"].as_f64().unwrap();
        assert!((got - want).abs() < 1e-6 * want, "{got} vs {want}");
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
            .filter_map(|a| {
                let row = anatomy_core::families::FAMILIES
                    .iter()
                    .find(|f| f.model_type == a.model_type)
                    .expect("a registry row");
                (row.gguf != Some(a.name))
                    .then(|| format!("{}: {:?}, not {}", a.model_type, row.gguf, a.name))
            })
            .collect();
        assert!(wrong.is_empty(), "{wrong:?}");
    }
}
