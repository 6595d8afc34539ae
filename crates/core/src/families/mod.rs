//! Loaders: one raw `config.json` → one validated [`Spec`], per `model_type`.
//!
//! Each family reads its fields with the defaults of its `transformers` config class. The helpers
//! here are the parts families share: RoPE parameters in both the classic and the transformers 5
//! format, per-layer attention plans, and the checks every Spec must pass.

mod deepseek;
mod gemma;
mod gpt2;
mod gpt_oss;
mod llama;
mod llama4;

use crate::config::{Config, MAX_LAYERS};
use crate::error::{Error, Result};
use crate::spec::{AttnKind, AttnSpan, NotDrawn, Rope, RopeScaling, Spec};
use serde_json::Value;

/// The `model_type`s anatomy reads, with their family's display name.
pub const SUPPORTED: &[(&str, &str)] = &[
    ("llama", "Llama"),
    ("mistral", "Mistral"),
    ("qwen2", "Qwen2"),
    ("qwen3", "Qwen3"),
    ("mixtral", "Mixtral"),
    ("qwen3_moe", "Qwen3-MoE"),
    ("smollm3", "SmolLM3"),
    ("phi3", "Phi-3"),
    ("olmo2", "OLMo 2"),
    ("gpt2", "GPT-2"),
    ("gemma2", "Gemma 2"),
    ("gemma3", "Gemma 3"),
    ("gemma3_text", "Gemma 3"),
    ("deepseek_v2", "DeepSeek-V2"),
    ("deepseek_v3", "DeepSeek-V3"),
    ("glm4_moe", "GLM-4.5"),
    ("gpt_oss", "gpt-oss"),
    ("llama4", "Llama 4"),
    ("llama4_text", "Llama 4"),
];

/// Parse `text` (the contents of `file`) as a config.json and load its Spec.
pub fn load_json(file: &str, text: &str, name: &str) -> Result<Spec> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        Error::file(
            file,
            format!(
                "invalid JSON at line {}, column {}: {}",
                e.line(),
                e.column(),
                json_reason(&e)
            ),
        )
    })?;
    load(file, &value, name)
}

fn json_reason(e: &serde_json::Error) -> String {
    // serde_json appends " at line L column C"; the position is already in our message.
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

pub fn load(file: &str, value: &Value, name: &str) -> Result<Spec> {
    let top = Config::new(file, value)?;
    let model_type = top.opt_string("model_type")?.ok_or_else(|| {
        top.err(
            "model_type",
            format!("is missing; supported model types: {}", supported_list()),
        )
    })?;
    // Configs of DeepSeek V3's architecture under another name (Kimi K2) load as DeepSeek V3.
    let declares_v3 = top
        .get("architectures")
        .and_then(|a| a.get(0))
        .and_then(|a| a.as_str())
        == Some("DeepseekV3ForCausalLM");
    let model_type = if declares_v3 && !SUPPORTED.iter().any(|(t, _)| *t == model_type) {
        "deepseek_v3".to_string()
    } else {
        model_type
    };
    let family = SUPPORTED
        .iter()
        .find(|(t, _)| *t == model_type)
        .map(|(_, f)| *f)
        .ok_or_else(|| {
            top.err(
                "model_type",
                format!(
                    "`{model_type}` is not supported; supported model types: {}",
                    supported_list()
                ),
            )
        })?;
    // A multimodal wrapper holds its language model in `text_config`, stored under `language_model.`.
    let (cfg, text_type) = match top.sub("text_config")? {
        Some(text) => {
            let t = text
                .opt_string("model_type")?
                .unwrap_or_else(|| format!("{model_type}_text"));
            (text, t)
        }
        None => (
            Config {
                file: top.file,
                prefix: String::new(),
                map: top.map,
            },
            model_type.clone(),
        ),
    };
    let mut spec = match text_type.as_str() {
        "gpt2" => gpt2::load(&cfg, family, name)?,
        "gemma2" | "gemma3_text" => gemma::load(&cfg, &text_type, family, name)?,
        "deepseek_v2" | "deepseek_v3" | "glm4_moe" => {
            deepseek::load(&cfg, &text_type, family, name)?
        }
        "gpt_oss" => gpt_oss::load(&cfg, family, name)?,
        "llama4_text" => llama4::load(&cfg, family, name)?,
        _ => llama::load(&cfg, &text_type, family, name)?,
    };
    spec.model_type = model_type.clone();
    if cfg.prefix.is_empty() {
        spec.model_type = text_type;
    } else {
        spec.hf_prefix = "language_model.".into();
        spec.not_drawn = wrapper_parts(&model_type);
    }
    check(&cfg, &spec)?;
    Ok(spec)
}

/// The parts of a multimodal checkpoint besides its language model.
fn wrapper_parts(model_type: &str) -> Vec<NotDrawn> {
    let part = |what: &str, prefix: &str| NotDrawn {
        what: what.into(),
        prefix: prefix.into(),
    };
    match model_type {
        "llama4" => vec![
            part("vision encoder", "vision_model."),
            part("multimodal projector", "multi_modal_projector."),
        ],
        _ => vec![
            part("vision tower", "vision_tower."),
            part("multimodal projector", "multi_modal_projector."),
        ],
    }
}

/// A Spec with every size zero and every option off, for a loader to fill in.
pub(crate) fn skeleton(name: &str, model_type: &str, family: &str) -> Spec {
    use crate::spec::*;
    Spec {
        name: name.to_string(),
        model_type: model_type.to_string(),
        family: family.to_string(),
        vocab: 0,
        hidden: 0,
        layers: 0,
        context: 0,
        embedding: Embedding {
            scale_by_sqrt_hidden: false,
            learned_positions: None,
        },
        attn: Attention {
            kind: AttnKind::Mha,
            heads: 0,
            kv_heads: 0,
            head_dim: 0,
            v_head_dim: 0,
            qkv_bias: false,
            o_bias: false,
            qk_norm: QkNorm::None,
            softcap: None,
            sinks: false,
            scale_dim: 1.0,
            scale_mult: 1.0,
            mla: None,
            fused_qkv: false,
        },
        mlp: Mlp {
            intermediate: 0,
            act: "silu".into(),
            gated: true,
            bias: false,
            fused_gate_up: false,
        },
        moe: None,
        plan: Vec::new(),
        norm: Norm {
            kind: NormKind::Rms,
            eps: 1e-6,
            unit_offset: false,
            place: NormPlace::Pre,
        },
        position: Position::Learned,
        tied: false,
        final_softcap: None,
        layout: Layout::Llama,
        hf_prefix: String::new(),
        not_drawn: Vec::new(),
        mtp_layers: 0,
    }
}

pub fn supported_list() -> String {
    SUPPORTED
        .iter()
        .map(|(t, _)| *t)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Number of layers, bounded.
pub(crate) fn layer_count(cfg: &Config, keys: &[&str], default: Option<u64>) -> Result<u64> {
    let n = cfg.size_any(keys, default)?;
    let key = keys.iter().find(|k| cfg.has(k)).unwrap_or(&keys[0]);
    cfg.bounded(key, n, MAX_LAYERS)
}

/// Attention heads, K/V heads and head_dim, with the checks transformers' shapes imply.
pub(crate) fn heads(
    cfg: &Config,
    hidden: u64,
    heads_default: Option<u64>,
    kv_default: Option<u64>,
    head_dim_default: Option<u64>,
) -> Result<(u64, u64, u64)> {
    let heads = cfg.size("num_attention_heads", heads_default)?;
    let kv = match cfg.opt_size("num_key_value_heads")? {
        Some(kv) => kv,
        None => kv_default.unwrap_or(heads),
    };
    if heads % kv != 0 {
        return Err(cfg.err(
            "num_key_value_heads",
            format!("is {kv}, which does not divide num_attention_heads ({heads}); it must be a divisor of it"),
        ));
    }
    let head_dim = match cfg.opt_size("head_dim")? {
        Some(d) => d,
        None => match head_dim_default {
            Some(d) => d,
            None => {
                if !hidden.is_multiple_of(heads) {
                    return Err(cfg.err(
                        "hidden_size",
                        format!(
                            "is {hidden}, not divisible by num_attention_heads ({heads}), and head_dim is absent; \
                             give head_dim or make hidden_size a multiple of the head count"
                        ),
                    ));
                }
                hidden / heads
            }
        },
    };
    Ok((heads, kv, head_dim))
}

/// Softmax attention over `heads` query heads sharing `kv` K/V heads of `head_dim`, scaled by
/// 1/√head_dim, with every option off; a loader switches on what its family has.
pub(crate) fn plain_attention(heads: u64, kv: u64, head_dim: u64) -> crate::spec::Attention {
    crate::spec::Attention {
        kind: attn_kind(heads, kv),
        heads,
        kv_heads: kv,
        head_dim,
        v_head_dim: head_dim,
        qkv_bias: false,
        o_bias: false,
        qk_norm: crate::spec::QkNorm::None,
        softcap: None,
        sinks: false,
        scale_dim: head_dim as f64,
        scale_mult: 1.0,
        mla: None,
        fused_qkv: false,
    }
}

/// `num_experts_per_tok`, which must not exceed the `experts` there are.
/// A Mixtral-style router: `experts` experts of `intermediate`, the top `top_k` by softmax, no
/// shared expert, no biases, no groups, one tensor per expert. Families state what differs.
pub(crate) fn plain_moe(experts: u64, top_k: u64, intermediate: u64) -> crate::spec::Moe {
    crate::spec::Moe {
        experts,
        top_k,
        expert_intermediate: intermediate,
        shared_experts: 0,
        shared_intermediate: 0,
        scoring: crate::spec::Scoring::Softmax,
        norm_topk_prob: false,
        router_bias: false,
        correction_bias: false,
        expert_bias: false,
        n_group: 1,
        topk_group: 1,
        routed_scaling: 1.0,
        swiglu_limit: None,
        stacked_experts: false,
        gate_up_interleaved: false,
    }
}

/// RMSNorm before each sublayer, with `rms_norm_eps` (the config class's `eps` when absent).
pub(crate) fn pre_rms(cfg: &Config, eps: f64) -> Result<crate::spec::Norm> {
    Ok(crate::spec::Norm {
        kind: crate::spec::NormKind::Rms,
        eps: cfg.float("rms_norm_eps", eps)?,
        unit_offset: false,
        place: crate::spec::NormPlace::Pre,
    })
}

/// The number of routed experts under `key`, positive and at most MAX_EXPERTS.
pub(crate) fn experts(cfg: &Config, key: &str, default: Option<u64>) -> Result<u64> {
    cfg.bounded(key, cfg.size(key, default)?, crate::config::MAX_EXPERTS)
}

pub(crate) fn top_k(cfg: &Config, experts: u64, default: Option<u64>) -> Result<u64> {
    let k = cfg.size("num_experts_per_tok", default)?;
    if k > experts {
        return Err(cfg.err(
            "num_experts_per_tok",
            format!("is {k}, more than the {experts} experts; it must be at most {experts}"),
        ));
    }
    Ok(k)
}

fn attn_kind(heads: u64, kv: u64) -> AttnKind {
    if kv == heads {
        AttnKind::Mha
    } else if kv == 1 {
        AttnKind::Mqa
    } else {
        AttnKind::Gqa
    }
}

/// RoPE base and scaling, from `rope_parameters` (transformers 5) or `rope_theta` + `rope_scaling`.
pub(crate) fn rope(cfg: &Config, theta_default: f64) -> Result<Rope> {
    let (params_cfg, theta) = if let Some(p) = cfg.sub("rope_parameters")? {
        // Per-layer-type parameters (`{"full_attention": {...}, "sliding_attention": {...}}`): the
        // full-attention entry is the model's main RoPE.
        let main = match p.sub("full_attention")? {
            Some(full) => full,
            None => p,
        };
        let theta = main.float("rope_theta", cfg.float("rope_theta", theta_default)?)?;
        (Some(main), theta)
    } else {
        (
            cfg.sub("rope_scaling")?,
            cfg.float("rope_theta", theta_default)?,
        )
    };
    if theta <= 0.0 {
        return Err(cfg.err(
            "rope_theta",
            format!("is {theta}; it must be a positive number"),
        ));
    }
    let scaling = match &params_cfg {
        None => RopeScaling::none(),
        Some(s) => {
            let kind = match s.opt_string("rope_type")? {
                Some(k) => k,
                None => s.string("type", "default")?,
            };
            const KINDS: &[&str] = &[
                "default",
                "linear",
                "dynamic",
                "llama3",
                "yarn",
                "longrope",
                "proportional",
            ];
            if !KINDS.contains(&kind.as_str()) {
                return Err(s.err(
                    "rope_type",
                    format!(
                        "`{kind}` is not a RoPE type anatomy knows; valid: {}",
                        KINDS.join(", ")
                    ),
                ));
            }
            let mut params = Vec::new();
            for (k, v) in s.map {
                if matches!(
                    k.as_str(),
                    "rope_type"
                        | "type"
                        | "rope_theta"
                        | "factor"
                        | "original_max_position_embeddings"
                        | "partial_rotary_factor"
                ) {
                    continue;
                }
                if let Some(f) = v.as_f64() {
                    params.push((k.clone(), f));
                }
            }
            RopeScaling {
                kind,
                factor: s.opt_float("factor")?,
                original_context: s.opt_size("original_max_position_embeddings")?,
                params,
            }
        }
    };
    let partial = match params_cfg
        .as_ref()
        .map(|p| p.opt_float("partial_rotary_factor"))
        .transpose()?
        .flatten()
    {
        Some(p) => p,
        None => cfg.float("partial_rotary_factor", 1.0)?,
    };
    if !(partial > 0.0 && partial <= 1.0) {
        return Err(cfg.err(
            "partial_rotary_factor",
            format!("is {partial}; it must be in (0, 1]"),
        ));
    }
    Ok(Rope {
        theta,
        scaling,
        local_theta: None,
        partial,
        interleaved: false,
    })
}

/// Per-layer attention spans from `layer_types` (`"sliding_attention"`, `"full_attention"`, …).
pub(crate) fn layer_types(
    cfg: &Config,
    layers: u64,
    window: Option<u64>,
) -> Result<Option<Vec<AttnSpan>>> {
    let parsed = cfg.list(
        "layer_types",
        layers,
        |v| match v.as_str()? {
            "full_attention" => Some(None),
            "sliding_attention" => Some(Some(())),
            _ => None,
        },
        "\"full_attention\" or \"sliding_attention\"",
    )?;
    let Some(kinds) = parsed else { return Ok(None) };
    let mut out = Vec::with_capacity(kinds.len());
    for k in kinds {
        out.push(match (k, window) {
            (None, _) => AttnSpan::Full,
            (Some(()), Some(w)) => AttnSpan::Sliding(w),
            (Some(()), None) => return Err(cfg.err(
                "sliding_window",
                "is missing, but layer_types has sliding_attention layers; give the window size",
            )),
        });
    }
    Ok(Some(out))
}

/// Checks every Spec must pass whatever its family: an even rotary dimension, and sizes whose
/// products the Graph computes in u64 (heads × head_dim, vocab × hidden) staying in range. The
/// Graph then checks the exact total (`graph::build`).
fn check(cfg: &Config, spec: &Spec) -> Result<()> {
    let a = &spec.attn;
    // RoPE rotates pairs of dims; transformers refuses an odd rotary dimension too.
    if let crate::spec::Position::Rope(r) = &spec.position {
        let rotary = (a.head_dim as f64 * r.partial) as u64;
        if rotary % 2 == 1 && spec.plan.iter().any(|l| l.rope) && a.mla.is_none() {
            let field = if cfg.has("head_dim") {
                "head_dim"
            } else {
                "hidden_size"
            };
            return Err(cfg.err(
                field,
                format!(
                    "gives head_dim {} and a rotary dimension of {rotary}, which is odd; RoPE rotates pairs of dims, \
                     so it must be even",
                    a.head_dim
                ),
            ));
        }
    }
    let per_layer = [spec.hidden, a.heads, a.head_dim.max(a.v_head_dim), 4]
        .iter()
        .try_fold(1u128, |acc, &x| acc.checked_mul(x as u128));
    let mlp = [spec.hidden, spec.mlp.intermediate, 3]
        .iter()
        .try_fold(1u128, |acc, &x| acc.checked_mul(x as u128));
    let embed = (spec.vocab as u128).checked_mul(spec.hidden as u128 * 2);
    let total = per_layer
        .zip(mlp)
        .and_then(|(p, m)| p.checked_add(m))
        .and_then(|x| x.checked_mul(spec.layers as u128))
        .zip(embed)
        .and_then(|(x, e)| x.checked_add(e));
    match total {
        Some(t) if t <= u64::MAX as u128 => Ok(()),
        _ => Err(cfg.err(
            "hidden_size",
            format!(
                "sizes too large: hidden_size {} with vocab_size {}, intermediate_size {}, {} layers of {} heads × {} \
                 gives a parameter count that overflows 64 bits; check these fields",
                spec.hidden, spec.vocab, spec.mlp.intermediate, spec.layers, a.heads, a.head_dim
            ),
        )),
    }
}
