//! What a GGUF architecture's metadata means in its config class's terms, beyond the keys every
//! architecture shares (`gguf::config`): keys the class names otherwise, sizes it fixes rather
//! than reads, and what llama.cpp assumes of the architecture without writing it down.

use crate::gguf_header::Header;
use crate::Stored;
use anatomy_core::Error;
use candle_core::quantized::gguf_file::Value;
use serde_json::{json, Map};

/// Keys only some architectures write, or whose config classes name otherwise: (architecture,
/// config key, its GGUF key under the architecture's prefix). LayerNorm's epsilon under each
/// config's own name; Command R's logit scale; Granite's four multipliers; StarCoder's n_inner,
/// GPT-NeoX's rotary_emb_base, Falcon's ffn_hidden_size, ERNIE's expert settings.
pub(crate) const OWN_KEYS: &[(&str, &str, &str)] = &[
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
        "exaone",
        "layer_norm_epsilon",
        "attention.layer_norm_rms_epsilon",
    ),
    (
        "falcon",
        "layer_norm_epsilon",
        "attention.layer_norm_epsilon",
    ),
    ("falcon", "ffn_hidden_size", "feed_forward_length"),
    ("gpt2", "layer_norm_epsilon", "attention.layer_norm_epsilon"),
    ("gpt2", "n_inner", "feed_forward_length"),
    ("gptneox", "layer_norm_eps", "attention.layer_norm_epsilon"),
    ("gptneox", "rotary_emb_base", "rope.freq_base"),
    ("granite", "embedding_multiplier", "embedding_scale"),
    ("granite", "residual_multiplier", "residual_scale"),
    ("granite", "attention_multiplier", "attention.scale"),
    ("granite", "logits_scaling", "logit_scale"),
    (
        "hunyuan-moe",
        "intermediate_size",
        "expert_feed_forward_length",
    ),
    ("jais2", "layer_norm_eps", "attention.layer_norm_epsilon"),
    ("lfm2", "conv_L_cache", "shortconv.l_cache"),
    ("lfm2", "norm_eps", "attention.layer_norm_rms_epsilon"),
    (
        "minimax-m2",
        "intermediate_size",
        "expert_feed_forward_length",
    ),
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
    (
        "mamba2",
        "layer_norm_epsilon",
        "attention.layer_norm_rms_epsilon",
    ),
    ("mamba2", "state_size", "ssm.state_size"),
    ("mamba2", "conv_kernel", "ssm.conv_kernel"),
    ("mamba2", "n_groups", "ssm.group_count"),
    ("mamba2", "num_heads", "ssm.time_step_rank"),
    (
        "mamba",
        "layer_norm_epsilon",
        "attention.layer_norm_rms_epsilon",
    ),
    ("mamba", "state_size", "ssm.state_size"),
    ("mamba", "conv_kernel", "ssm.conv_kernel"),
    ("mamba", "time_step_rank", "ssm.time_step_rank"),
];

/// The config.json being written from a GGUF's metadata, and which GGUF key each field came
/// from.
pub(crate) struct Draft<'a> {
    pub arch: &'a str,
    pub model_type: &'a str,
    pub header: &'a Header,
    pub tensors: &'a [Stored],
    /// The file's RoPE frequency factors (`rope_freqs.weight`), where it holds them.
    pub rope_freqs: Option<&'a [f32]>,
    pub shown: &'a str,
    pub cfg: Map<String, serde_json::Value>,
    pub keys: Vec<(String, String)>,
}

impl Draft<'_> {
    /// The architecture's key `k` (`{arch}.{k}`).
    pub fn key(&self, k: &str) -> Option<&Value> {
        self.header.get(&format!("{}.{k}", self.arch))
    }

    /// An error about the architecture's key `k`.
    pub fn err(&self, k: &str, message: impl Into<String>) -> Error {
        Error::new(self.shown, format!("{}.{k}", self.arch), message)
    }

    /// Config field `name` as a whole number (an own key's value is written as read, 8.0 for 8).
    pub fn size(&self, name: &str) -> Option<u64> {
        let v = self.cfg.get(name)?;
        v.as_u64().or_else(|| {
            let f = v.as_f64()?;
            (f >= 0.0 && f.fract() == 0.0 && f < u64::MAX as f64).then_some(f as u64)
        })
    }

    /// Field `name` from the architecture's key `k`, a number; integer sizes stay integers so
    /// the loaders read them as such, and a non-finite float is refused, since JSON has no NaN.
    pub fn put(&mut self, name: &str, k: &str, integer: bool) -> Result<(), Error> {
        let Some(v) = self.key(k) else { return Ok(()) };
        if PER_LAYER.contains(&(self.arch, k)) && matches!(v, Value::Array(_)) {
            // A value per layer, which `adapt` reads.
            return Ok(());
        }
        let n = number(v).ok_or_else(|| self.err(k, "must be a number"))?;
        if !n.is_finite() {
            return Err(self.err(k, format!("is {n}; it must be a finite number")));
        }
        let value = match integer && n.fract() == 0.0 && n >= 0.0 {
            true => json!(n as u64),
            false => json!(n),
        };
        self.set(name, value, &format!("{}.{k}", self.arch));
        Ok(())
    }

    /// Field `name`, from GGUF key `source` (or from what llama.cpp assumes of the architecture).
    pub fn set(&mut self, name: &str, value: serde_json::Value, source: &str) {
        self.keys.retain(|(k, _)| k != name);
        self.cfg.insert(name.into(), value);
        self.keys.push((name.into(), source.into()));
    }

    /// Field `name` removed, with its source.
    fn take(&mut self, name: &str) -> Option<(serde_json::Value, String)> {
        let value = self.cfg.remove(name)?;
        let at = self.keys.iter().position(|(k, _)| k == name)?;
        Some((value, self.keys.remove(at).1))
    }

    /// Field `from` under the name `to`.
    fn rename(&mut self, from: &str, to: &str) {
        if let Some((value, source)) = self.take(from) {
            self.set(to, value, &source);
        }
    }
}

/// A metadata value as a number.
pub(crate) fn number(v: &Value) -> Option<f64> {
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
        Value::Bool(_) | Value::String(_) | Value::Array(_) => return None,
    })
}

/// Keys an architecture may give per layer, as an array: LFM2's K/V head counts, 0 for its
/// convolution layers; Gemma 4's K/V head counts and MLP widths.
const PER_LAYER: &[(&str, &str)] = &[
    ("lfm2", "attention.head_count_kv"),
    ("gemma4", "attention.head_count_kv"),
    ("gemma4", "feed_forward_length"),
];

/// The architecture's own key names (`OWN_KEYS`), each replacing the common name of the same
/// GGUF key (StarCoder's n_inner for intermediate_size).
pub(crate) fn own_keys(d: &mut Draft) -> Result<(), Error> {
    let own: Vec<_> = OWN_KEYS.iter().filter(|(a, ..)| *a == d.arch).collect();
    for (_, name, k) in own {
        let full = format!("{}.{k}", d.arch);
        let common: Vec<String> = d
            .keys
            .iter()
            .filter(|(n, f)| *f == full && n != name)
            .map(|(n, _)| n.clone())
            .collect();
        for n in common {
            d.take(&n);
        }
        d.put(name, k, false)?;
    }
    Ok(())
}

/// What an architecture's metadata means beyond the common keys (each `gguf::Architecture`'s).
pub(crate) type Adapt = fn(&mut Draft) -> Result<(), Error>;

/// Everything else the architecture's metadata means, once the common keys are read: the sizes
/// its class fixes, llama.cpp's head size where the class has its own, then the architecture's
/// own `adapt`.
pub(crate) fn adapt(d: &mut Draft, a: &crate::gguf::Architecture) -> Result<(), Error> {
    implied_sizes(d)?;
    if a.own_head_dim && !d.cfg.contains_key("head_dim") {
        // llama.cpp's head size is the file's key_length, else hidden / heads.
        let heads = d.size("num_attention_heads").filter(|n| *n > 0);
        if let Some((h, n)) = d.size("hidden_size").zip(heads) {
            let source = format!("{}.embedding_length", d.arch);
            d.set("head_dim", json!(h / n), &source);
        }
    }
    (a.adapt)(d)
}

/// Nothing beyond the common keys.
pub(crate) fn nothing(_: &mut Draft) -> Result<(), Error> {
    Ok(())
}

/// llama.cpp writes Mixtral as a llama with experts.
pub(crate) fn llama(d: &mut Draft) -> Result<(), Error> {
    if d.size("num_local_experts") > Some(0) {
        d.cfg.insert("model_type".into(), json!("mixtral"));
    }
    Ok(())
}

/// Qwen2-MoE's config names its expert count `num_experts` (no alias for Mixtral's).
pub(crate) fn qwen2moe(d: &mut Draft) -> Result<(), Error> {
    d.rename("num_local_experts", "num_experts");
    Ok(())
}

/// The file does not say; llama.cpp renormalizes the chosen experts' weights, as the published
/// Qwen3-MoE configs ask.
pub(crate) fn qwen3moe(d: &mut Draft) -> Result<(), Error> {
    d.set("norm_topk_prob", json!(true), "general.architecture");
    Ok(())
}

/// llama.cpp scales Gemma 2's scores by 1/√head_dim, the 2B and 9B models' value.
pub(crate) fn gemma2(d: &mut Draft) -> Result<(), Error> {
    if let Some(hd) = d.cfg.get("head_dim").cloned() {
        d.cfg.insert("query_pre_attn_scalar".into(), hd);
    }
    Ok(())
}

/// GPTBigCode says multi_query: one K/V head, or as many as the query heads.
pub(crate) fn starcoder(d: &mut Draft) -> Result<(), Error> {
    if let Some((kv, source)) = d.take("num_key_value_heads") {
        d.set("multi_query", json!(kv.as_u64() == Some(1)), &source);
    }
    Ok(())
}

/// Sizes some config classes fix rather than read: GPT-2, GPT-NeoX, BLOOM and MPT have as many
/// K/V heads as query heads, BLOOM and MPT an MLP four times as wide, BLOOM no position limit
/// (ALiBi), HunYuan-MoE a shared MLP as wide as each expert. The file's value is dropped where
/// it is what the class implies, refused otherwise.
fn implied_sizes(d: &mut Draft) -> Result<(), Error> {
    let mut implied = Vec::new();
    if matches!(d.arch, "gpt2" | "gptneox" | "bloom" | "mpt") {
        let heads = d.size("num_attention_heads");
        implied.push(("num_key_value_heads", heads, "attention.head_count_kv"));
    }
    if matches!(d.arch, "bloom" | "mpt") {
        let wide = d.size("hidden_size").map(|h| 4 * h);
        implied.push(("intermediate_size", wide, "feed_forward_length"));
    }
    if d.arch == "bloom" {
        implied.push(("max_position_embeddings", None, "context_length"));
    }
    if matches!(d.arch, "mamba" | "mamba2") {
        // No attention and no MLP: llama.cpp's converter writes 0 for both, and a context
        // length the model does not have.
        implied.push(("num_attention_heads", Some(0), "attention.head_count"));
        implied.push(("intermediate_size", Some(0), "feed_forward_length"));
        implied.push(("max_position_embeddings", None, "context_length"));
    }
    if d.arch == "hunyuan-moe" {
        // Its shared MLP is as wide as each expert.
        let width = d.size("intermediate_size");
        implied.push((
            "shared_expert_intermediate_size",
            width,
            "expert_shared_feed_forward_length",
        ));
    }
    for (name, want, k) in implied {
        let Some((v, _)) = d.take(name) else { continue };
        if let Some(want) = want.filter(|w| v.as_u64() != Some(*w)) {
            let model_type = d.model_type;
            return Err(d.err(
                k,
                format!("is {v}; a `{model_type}` model's config fixes it at {want}"),
            ));
        }
    }
    Ok(())
}

/// The file says neither; llama.cpp fixes both (llama-model.cpp): five local layers per global
/// one, and scores scaled by 1/√head_dim, or 1/√(hidden / heads) in the 27B model, which it
/// knows by its 62 layers.
pub(crate) fn gemma3(d: &mut Draft) -> Result<(), Error> {
    d.set("sliding_window_pattern", json!(6), "general.architecture");
    let hidden_per_head = d
        .size("hidden_size")
        .zip(d.size("num_attention_heads"))
        .map(|(h, n)| h / n.max(1));
    // llama.cpp's head size is the file's key_length, else hidden / heads.
    let scalar = match d.size("num_hidden_layers") == Some(62) {
        true => hidden_per_head,
        false => d.size("head_dim").or(hidden_per_head),
    };
    if let Some(s) = scalar {
        d.set("query_pre_attn_scalar", json!(s), "general.architecture");
    }
    Ok(())
}

/// Whether attention and MLP run side by side (a bool); the rotated fraction as rotary_pct.
pub(crate) fn gptneox(d: &mut Draft) -> Result<(), Error> {
    match d.key("use_parallel_residual") {
        Some(Value::Bool(b)) => {
            let b = *b;
            d.set(
                "use_parallel_residual",
                json!(b),
                "gptneox.use_parallel_residual",
            );
        }
        Some(_) => return Err(d.err("use_parallel_residual", "must be a bool")),
        None => {}
    }
    d.rename("partial_rotary_factor", "rotary_pct");
    Ok(())
}

/// Attention and MLP side by side, as llama.cpp runs every Falcon; a second norm per layer marks
/// the new decoder architecture (40B, 180B) and its K/V groups, else one K/V head is
/// multi-query.
pub(crate) fn falcon(d: &mut Draft) -> Result<(), Error> {
    d.set("parallel_attn", json!(true), "general.architecture");
    let new = d
        .tensors
        .iter()
        .any(|t| t.name == "blk.0.attn_norm_2.weight");
    d.set("new_decoder_architecture", json!(new), "falcon.block_count");
    let kv = d.take("num_key_value_heads");
    match (new, kv) {
        (true, Some((kv, source))) => d.set("num_kv_heads", kv, &source),
        // Without the key both have as many K/V heads as query heads.
        (true, None) => {}
        (false, kv) => {
            let one = kv.as_ref().and_then(|(v, _)| v.as_u64()) == Some(1);
            let source = kv.map_or("falcon.attention.head_count".into(), |(_, s)| s);
            d.set("multi_query", json!(one), &source);
        }
    }
    Ok(())
}

/// ERNIE's shared experts, as a count of expert widths.
pub(crate) fn ernie_moe(d: &mut Draft) -> Result<(), Error> {
    let Some((shared, source)) = d.take("shared_expert_intermediate_size") else {
        return Ok(());
    };
    let width = d.size("moe_intermediate_size").filter(|w| *w > 0);
    let count = shared
        .as_u64()
        .zip(width)
        .and_then(|(s, w)| s.is_multiple_of(w).then_some(s / w));
    let Some(count) = count else {
        return Err(d.err(
            "expert_shared_feed_forward_length",
            format!("is {shared}; ERNIE's shared experts are a whole number of expert widths (expert_feed_forward_length)"),
        ));
    };
    d.set("moe_num_shared_experts", json!(count), &source);
    Ok(())
}

/// transformers' MPT biases scores by ALiBi with a maximum of 8 whatever its config says;
/// clip_qkv lives in attn_config.
pub(crate) fn mpt(d: &mut Draft) -> Result<(), Error> {
    const MAX: &str = "attention.max_alibi_bias";
    match d.key(MAX).map(number) {
        Some(Some(8.0)) => {}
        Some(b) => {
            let b = b.map_or("not a number".into(), |b| b.to_string());
            let why = "transformers' MPT biases scores by ALiBi with a maximum of 8";
            return Err(d.err(MAX, format!("is {b}; {why}")));
        }
        None => return Err(d.err(MAX, "is missing; an MPT biases scores by ALiBi")),
    }
    if let Some(v) = d.key("attention.clamp_kqv") {
        let clip = number(v).ok_or_else(|| d.err("attention.clamp_kqv", "must be a number"))?;
        let config = json!({ "clip_qkv": clip });
        d.set("attn_config", config, "mpt.attention.clamp_kqv");
    }
    Ok(())
}

/// Which of Cohere 2's layers slide (and rotate; the others attend globally without RoPE): the
/// file's pattern, a flag per layer or a period, else llama.cpp's three sliding layers per
/// global one.
pub(crate) fn cohere2(d: &mut Draft) -> Result<(), Error> {
    if !d.cfg.contains_key("sliding_window") {
        return Ok(());
    }
    const PATTERN: &str = "attention.sliding_window_pattern";
    let layers = d.size("num_hidden_layers").unwrap_or(0);
    let sliding: Vec<bool> = match d.key(PATTERN) {
        Some(Value::Array(flags)) => flags
            .iter()
            .map(|f| match f {
                Value::Bool(b) => Ok(*b),
                _ => Err(d.err(PATTERN, "must hold a bool per layer")),
            })
            .collect::<Result<_, _>>()?,
        Some(v) => {
            let n = number(v)
                .filter(|n| *n >= 1.0 && n.fract() == 0.0)
                .ok_or_else(|| d.err(PATTERN, "must be a whole number from 1"))?;
            (0..layers).map(|i| (i as f64 % n) < n - 1.0).collect()
        }
        None => (0..layers).map(|i| i % 4 < 3).collect(),
    };
    d.set(
        "layer_types",
        layer_types(sliding),
        "cohere2.attention.sliding_window_pattern",
    );
    Ok(())
}

/// llama.cpp slides only EXAONE 4's 64-layer model (32B: three local layers with RoPE per
/// global one without, window 4096 unless the file says); every layer of the others is global
/// with RoPE (1.2B), which transformers does with no window (its default, 4096, would leave the
/// global layers unrotated).
pub(crate) fn exaone4(d: &mut Draft) -> Result<(), Error> {
    let layers = d.size("num_hidden_layers").unwrap_or(0);
    let sliding = (0..layers).map(|i| layers == 64 && i % 4 < 3).collect();
    if layers != 64 {
        d.set(
            "sliding_window",
            serde_json::Value::Null,
            "exaone4.block_count",
        );
    }
    d.set("layer_types", layer_types(sliding), "exaone4.block_count");
    Ok(())
}

/// MiniMax-M2's rotated dims under its own key (rotary_dim, a count), and its experts chosen by
/// a sigmoid, as its class fixes (llama.cpp reads the gating from the file).
pub(crate) fn minimax_m2(d: &mut Draft) -> Result<(), Error> {
    const ROT: &str = "rope.dimension_count";
    if let Some(rot) = d.key(ROT).and_then(number) {
        d.take("partial_rotary_factor");
        d.set(
            "rotary_dim",
            json!(rot as u64),
            &format!("minimax-m2.{ROT}"),
        );
    }
    const GATING: &str = "expert_gating_func";
    match d.key(GATING).map(number) {
        None | Some(Some(2.0)) => Ok(()),
        Some(v) => Err(d.err(
            GATING,
            format!(
                "is {}; MiniMax-M2 chooses its experts by a sigmoid (2)",
                v.map_or("not a number".into(), |v| v.to_string())
            ),
        )),
    }
}

/// HunYuan's NTK-aware RoPE: with `rope.scaling.alpha`, llama.cpp and transformers both rotate
/// by base · alpha^(d/(d−2)) for a head of d dims, which is the base the config is given.
pub(crate) fn hunyuan_alpha(d: &mut Draft) -> Result<(), Error> {
    const ALPHA: &str = "rope.scaling.alpha";
    let Some(alpha) = d.key(ALPHA) else {
        return Ok(());
    };
    let alpha = number(alpha)
        .filter(|a| a.is_finite() && *a >= 0.0)
        .ok_or_else(|| d.err(ALPHA, "must be a number from 0"))?;
    let heads = d.size("num_attention_heads").filter(|n| *n > 0);
    let head = d
        .size("head_dim")
        .or_else(|| Some(d.size("hidden_size")? / heads?))
        .filter(|h| *h > 2);
    let base = d.cfg.get("rope_theta").and_then(|v| v.as_f64());
    if let (true, Some(head), Some(base)) = (alpha > 0.0, head, base) {
        let h = head as f64;
        let theta = base * alpha.powf(h / (h - 2.0));
        let source = format!("{}.{ALPHA}", d.arch);
        d.set("rope_theta", json!(theta), &source);
    }
    Ok(())
}

/// LFM2's layers: attention where the file gives K/V heads, a short convolution where it gives
/// 0; its MLP width as the file states it, already adjusted (the class would adjust
/// intermediate_size again).
pub(crate) fn lfm2(d: &mut Draft) -> Result<(), Error> {
    const KV: &str = "attention.head_count_kv";
    if let Some(counts) = per_layer(d, KV)? {
        let types: Vec<&str> = counts
            .iter()
            .map(|&c| if c == 0 { "conv" } else { "full_attention" })
            .collect();
        let source = format!("lfm2.{KV}");
        d.set("layer_types", json!(types), &source);
        if let Some(kv) = counts.iter().copied().filter(|&c| c > 0).max() {
            d.set("num_key_value_heads", json!(kv), &source);
        }
    }
    if d.cfg.contains_key("intermediate_size") {
        d.set(
            "block_auto_adjust_ff_dim",
            json!(false),
            "lfm2.feed_forward_length",
        );
    }
    Ok(())
}

/// A per-layer array of whole numbers, one per layer.
fn per_layer(d: &Draft, k: &str) -> Result<Option<Vec<u64>>, Error> {
    let Some(Value::Array(items)) = d.key(k) else {
        return Ok(None);
    };
    let counts: Vec<u64> = items
        .iter()
        .map(|v| {
            number(v)
                .filter(|n| *n >= 0.0 && n.fract() == 0.0)
                .map(|n| n as u64)
        })
        .collect::<Option<_>>()
        .ok_or_else(|| d.err(k, "must hold a whole number per layer"))?;
    if d.size("num_hidden_layers")
        .is_some_and(|l| l != counts.len() as u64)
    {
        return Err(d.err(
            k,
            format!("holds {} values, not one per layer", counts.len()),
        ));
    }
    Ok(Some(counts))
}

/// Gemma 4 in its config class's terms: the global layers' head size (key_length) and the local
/// ones' (key_length_swa), which layers are local, how many reuse keys and values, the
/// per-layer embeddings' width and rows, the global layers' K/V heads and double-wide MLPs from
/// the per-layer arrays, keys as values where the global layers hold no V, and each layer
/// type's RoPE (the global one proportional, its turning share from the frequency factors).
pub(crate) fn gemma4(d: &mut Draft) -> Result<(), Error> {
    const SWA: &str = "attention.sliding_window_pattern";
    if d.cfg.contains_key("num_local_experts") {
        return Err(d.err(
            "expert_count",
            "is set; Gemma 4's experts beside the MLP are not read from GGUF files yet (its safetensors are)",
        ));
    }
    d.rename("head_dim", "global_head_dim");
    d.put("head_dim", "attention.key_length_swa", true)?;
    d.put("num_kv_shared_layers", "attention.shared_kv_layers", true)?;
    d.put(
        "hidden_size_per_layer_input",
        "embedding_length_per_layer_input",
        true,
    )?;
    let Some(Value::Array(pattern)) = d.key(SWA) else {
        return Err(d.err(SWA, "is missing; Gemma 4 says there which layers are local"));
    };
    let local: Vec<bool> = pattern
        .iter()
        .map(|v| match v {
            Value::Bool(b) => Some(*b),
            other => number(other).map(|n| n != 0.0),
        })
        .collect::<Option<_>>()
        .ok_or_else(|| d.err(SWA, "must hold a boolean per layer"))?;
    let source = format!("gemma4.{SWA}");
    let types: Vec<&str> = local
        .iter()
        .map(|&l| {
            if l {
                "sliding_attention"
            } else {
                "full_attention"
            }
        })
        .collect();
    d.set("layer_types", json!(types), &source);
    let rows = d
        .tensors
        .iter()
        .find(|t| t.name == "per_layer_token_embd.weight")
        .and_then(|t| t.shape.first().copied());
    if let Some(rows) = rows {
        d.set(
            "vocab_size_per_layer_input",
            json!(rows),
            "per_layer_token_embd.weight",
        );
    }
    // The global layers with no V projection: keys as values.
    let global: Vec<usize> = (0..local.len()).filter(|&b| !local[b]).collect();
    let shared = d.size("num_kv_shared_layers").unwrap_or(0) as usize;
    let first_shared = local.len().saturating_sub(shared);
    let own_kv: Vec<usize> = global
        .iter()
        .copied()
        .filter(|&b| b < first_shared)
        .collect();
    if let Some(&b) = own_kv.first() {
        let has_v = d
            .tensors
            .iter()
            .any(|t| t.name == format!("blk.{b}.attn_v.weight"));
        d.set(
            "attention_k_eq_v",
            json!(!has_v),
            "the global layers' attn_v tensors",
        );
    }
    const KV: &str = "attention.head_count_kv";
    if let Some(counts) = per_layer(d, KV)? {
        let src = format!("gemma4.{KV}");
        if let Some(&b) = local.iter().position(|&l| l).as_ref() {
            d.set("num_key_value_heads", json!(counts[b]), &src);
        }
        if let Some(&b) = global.first() {
            d.set("num_global_key_value_heads", json!(counts[b]), &src);
        }
    }
    const FF: &str = "feed_forward_length";
    if let Some(widths) = per_layer(d, FF)? {
        let src = format!("gemma4.{FF}");
        let f = widths.first().copied().unwrap_or(0);
        let doubled =
            (0..widths.len()).all(|b| widths[b] == if b < first_shared { f } else { 2 * f });
        if !doubled {
            return Err(d.err(FF, "must give the same width to every layer, twice it to the layers that reuse keys and values"));
        }
        d.set("intermediate_size", json!(f), &src);
        d.set("use_double_wide_mlp", json!(shared > 0), &src);
    }
    // Each layer type's RoPE.
    let full_theta = d.take("rope_theta").map(|(v, _)| v);
    let swa_theta = d
        .key("rope.freq_base_swa")
        .and_then(number)
        .map(|n| json!(n));
    let global_hd = d.size("global_head_dim").unwrap_or(0);
    let turning = match d.rope_freqs {
        Some(f) if f.len() as u64 * 2 == global_hd => f.iter().filter(|x| **x == 1.0).count(),
        Some(_) => {
            return Err(d.err(
                "rope_freqs",
                "must hold one factor per pair of the global layers' heads",
            ))
        }
        None => global_hd as usize / 2,
    };
    let mut sliding = json!({"rope_type": "default"});
    if let Some(t) = swa_theta {
        sliding["rope_theta"] = t;
    }
    let mut full = json!({"rope_type": "proportional"});
    if global_hd > 0 {
        full["partial_rotary_factor"] = json!(2.0 * turning as f64 / global_hd as f64);
    }
    if let Some(t) = full_theta {
        full["rope_theta"] = t;
    }
    d.set(
        "rope_parameters",
        json!({"sliding_attention": sliding, "full_attention": full}),
        "gemma4.rope.freq_base, rope.freq_base_swa and rope_freqs.weight",
    );
    Ok(())
}

/// Mamba's and Mamba-2's mixer from the `ssm.*` keys: the expansion (and Mamba-2's head width)
/// from the inner size, the biases from the tensors the file holds.
pub(crate) fn mamba(d: &mut Draft) -> Result<(), Error> {
    const INNER: &str = "ssm.inner_size";
    let source = format!("{}.{INNER}", d.arch);
    let inner = d.key(INNER).and_then(number).map(|n| n as u64);
    if let (Some(inner), Some(hidden)) = (inner, d.size("hidden_size").filter(|h| *h > 0)) {
        if d.arch == "mamba2" {
            let heads = d.size("num_heads").unwrap_or(0);
            if heads == 0 || !inner.is_multiple_of(heads) {
                return Err(d.err(
                    INNER,
                    format!(
                        "is {inner}; it must be a multiple of ssm.time_step_rank ({heads}), the heads"
                    ),
                ));
            }
            d.set("head_dim", json!(inner / heads), &source);
        }
        let expand = inner as f64 / hidden as f64;
        let expand = match expand.fract() == 0.0 {
            true => json!(expand as u64),
            false => json!(expand),
        };
        d.set("expand", expand, &source);
    }
    let has = |end: &str| d.tensors.iter().any(|t| t.name == format!("blk.0.{end}"));
    let (conv_bias, bias) = (has("ssm_conv1d.bias"), has("ssm_in.bias"));
    let source = format!("{}.block_count", d.arch);
    d.set("use_conv_bias", json!(conv_bias), &source);
    d.set("use_bias", json!(bias), &source);
    Ok(())
}

/// transformers' `layer_types` from a flag per layer (sliding or not).
fn layer_types(sliding: Vec<bool>) -> serde_json::Value {
    let types: Vec<&str> = sliding
        .into_iter()
        .map(|s| match s {
            true => "sliding_attention",
            false => "full_attention",
        })
        .collect();
    json!(types)
}
