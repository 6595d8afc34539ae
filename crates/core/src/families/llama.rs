//! The Llama lineage: `llama`, `mistral`, `qwen2`, `qwen3`, and their mixtures of experts
//! `mixtral` and `qwen3_moe`.
//!
//! Pre-norm decoder, RMSNorm, RoPE, gated SiLU MLP; they differ by defaults, biases, QK-norm,
//! sliding windows and routed experts. Defaults follow each family's `transformers` config class.

use super::{
    heads, layer_count, layer_types, plain_attention, plain_moe, pre_rms, rope, top_k, RopeDefaults,
};
use crate::config::{Config, MAX_EXPERTS};
use crate::error::Result;
use crate::spec::*;

struct Defaults {
    vocab: u64,
    hidden: u64,
    intermediate: u64,
    layers: u64,
    heads: u64,
    kv_heads: Option<u64>,
    head_dim: Option<u64>,
    context: u64,
}

fn defaults(model_type: &str) -> Defaults {
    match model_type {
        // MixtralConfig's dense defaults are MistralConfig's.
        "mistral" | "mixtral" => Defaults {
            vocab: 32000,
            hidden: 4096,
            intermediate: 14336,
            layers: 32,
            heads: 32,
            kv_heads: Some(8),
            head_dim: None,
            context: 4096 * 32,
        },
        "qwen2" => Defaults {
            vocab: 151936,
            hidden: 4096,
            intermediate: 22016,
            layers: 32,
            heads: 32,
            kv_heads: Some(32),
            head_dim: None,
            context: 32768,
        },
        "qwen3_moe" => Defaults {
            vocab: 151936,
            hidden: 2048,
            intermediate: 6144,
            layers: 24,
            heads: 32,
            kv_heads: Some(4),
            head_dim: None,
            context: 32768,
        },
        "smollm3" => Defaults {
            vocab: 128256,
            hidden: 2048,
            intermediate: 11008,
            layers: 36,
            heads: 16,
            kv_heads: Some(4),
            head_dim: None,
            context: 32768,
        },
        "phi3" => Defaults {
            vocab: 32064,
            hidden: 3072,
            intermediate: 8192,
            layers: 32,
            heads: 32,
            kv_heads: None,
            head_dim: None,
            context: 4096,
        },
        "olmo2" => Defaults {
            vocab: 50304,
            hidden: 4096,
            intermediate: 11008,
            layers: 32,
            heads: 32,
            kv_heads: None,
            head_dim: None,
            context: 2048,
        },
        "qwen3" => Defaults {
            vocab: 151936,
            hidden: 4096,
            intermediate: 22016,
            layers: 32,
            heads: 32,
            kv_heads: Some(32),
            head_dim: Some(128),
            context: 32768,
        },
        _ => Defaults {
            vocab: 32000,
            hidden: 4096,
            intermediate: 11008,
            layers: 32,
            heads: 32,
            kv_heads: None,
            head_dim: None,
            context: 2048,
        },
    }
}

pub fn load(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let d = defaults(model_type);
    let hidden = cfg.size("hidden_size", Some(d.hidden))?;
    let vocab = cfg.size("vocab_size", Some(d.vocab))?;
    let layers = layer_count(cfg, &["num_hidden_layers"], Some(d.layers))?;
    let (heads, kv_heads, head_dim) = heads(cfg, hidden, Some(d.heads), d.kv_heads, d.head_dim)?;
    let intermediate = cfg.size("intermediate_size", Some(d.intermediate))?;
    let context = cfg.size("max_position_embeddings", Some(d.context))?;

    let qwen2 = model_type == "qwen2";
    let qwen3 = matches!(model_type, "qwen3" | "qwen3_moe");
    // Qwen2 always has a bias on q, k and v (no config field); Mistral, Mixtral and Phi-3 never do;
    // the others follow attention_bias.
    let attention_bias = !matches!(model_type, "mistral" | "mixtral" | "phi3" | "qwen2")
        && cfg.flag("attention_bias", false)?;
    let qkv_bias = qwen2 || attention_bias;
    let o_bias = !qwen2 && attention_bias;
    let mlp_bias = matches!(model_type, "llama" | "smollm3") && cfg.flag("mlp_bias", false)?;

    // Sliding windows: Mistral applies its window to every layer; Qwen2/3 only with use_sliding_window,
    // from layer max_window_layers on, unless layer_types says otherwise.
    let spans: Vec<AttnSpan> = match model_type {
        "mistral" => {
            let window = if cfg.present("sliding_window") {
                cfg.opt_size("sliding_window")?
            } else {
                Some(4096)
            };
            let span = window.map_or(AttnSpan::Full, AttnSpan::Sliding);
            vec![span; layers as usize]
        }
        "mixtral" | "phi3" => {
            let span = cfg
                .opt_size("sliding_window")?
                .map_or(AttnSpan::Full, AttnSpan::Sliding);
            vec![span; layers as usize]
        }
        "smollm3" => {
            // Sliding windows, when on, only in the layers without RoPE.
            let use_sliding = cfg.flag("use_sliding_window", false)?;
            let window = cfg.opt_size("sliding_window")?.filter(|_| use_sliding);
            let nope = rope_layers(cfg, model_type, layers)?;
            match layer_types(cfg, layers, window, true)? {
                Some(spans) => spans,
                None => nope
                    .iter()
                    .map(|rope| match window {
                        Some(w) if !rope => AttnSpan::Sliding(w),
                        _ => AttnSpan::Full,
                    })
                    .collect(),
            }
        }
        "qwen2" | "qwen3" | "qwen3_moe" => {
            // The window applies only with use_sliding_window, from layer max_window_layers on,
            // unless layer_types says which layers; without it, "sliding" layers attend fully.
            let use_sliding = cfg.flag("use_sliding_window", false)?;
            let window = if cfg.present("sliding_window") {
                cfg.opt_size("sliding_window")?
            } else {
                Some(4096)
            }
            .filter(|_| use_sliding);
            let from = cfg.count("max_window_layers", 28)?;
            match layer_types(cfg, layers, window, true)? {
                Some(spans) => spans,
                None => (0..layers)
                    .map(|i| match window {
                        Some(w) if i >= from => AttnSpan::Sliding(w),
                        _ => AttnSpan::Full,
                    })
                    .collect(),
            }
        }
        _ => vec![AttnSpan::Full; layers as usize],
    };

    let (moe, moe_layers) = experts(cfg, model_type, layers)?;
    let rope_layers = rope_layers(cfg, model_type, layers)?;
    let eps_default = if matches!(model_type, "phi3" | "olmo2" | "mixtral") {
        1e-5
    } else {
        1e-6
    };
    let mut spec = Spec {
        name: name.to_string(),
        model_type: model_type.to_string(),
        family: family.to_string(),
        vocab,
        hidden,
        layers,
        context,
        embedding: Embedding {
            scale_by_sqrt_hidden: false,
            learned_positions: None,
        },
        attn: Attention {
            qkv_bias,
            o_bias,
            qk_norm: if qwen3 { QkNorm::PerHead } else { QkNorm::None },
            ..plain_attention(heads, kv_heads, head_dim)
        },
        mlp: Mlp {
            intermediate,
            act: super::act(cfg, "hidden_act", "silu")?,
            gated: true,
            bias: mlp_bias,
            fused_gate_up: false,
        },
        moe,
        plan: spans
            .into_iter()
            .zip(moe_layers)
            .zip(rope_layers)
            .map(|((attn, moe), rope)| LayerPlan { attn, rope, moe })
            .collect(),
        norm: pre_rms(cfg, eps_default)?,
        position: Position::Rope(rope(cfg, &rope_defaults(model_type, context))?),
        tied: cfg.flag("tie_word_embeddings", model_type == "smollm3")?,
        final_softcap: None,
        layout: if model_type == "mixtral" {
            Layout::Mixtral
        } else {
            Layout::Llama
        },
        hf_prefix: String::new(),
        not_drawn: vec![],
        mtp_layers: 0,
        ignored: vec![],
    };
    match model_type {
        // Phi-3 stores q, k and v as one tensor, and gate and up as another.
        "phi3" => {
            spec.attn.fused_qkv = true;
            spec.mlp.fused_gate_up = true;
            spec.layout = Layout::Phi3;
        }
        // OLMo 2 normalizes each sublayer's output, and Q and K over all heads together.
        "olmo2" => {
            spec.norm.place = NormPlace::Post;
            spec.attn.qk_norm = QkNorm::Full;
            spec.layout = Layout::Sandwich;
        }
        _ => {}
    }
    Ok(spec)
}

/// Routed experts and the layers that use them: Mixtral's every layer; Qwen3-MoE's every
/// `decoder_sparse_step`-th layer not listed in `mlp_only_layers`.
fn experts(cfg: &Config, model_type: &str, layers: u64) -> Result<(Option<Moe>, Vec<bool>)> {
    let none = Ok((None, vec![false; layers as usize]));
    let (experts_key, e_default, k_default, f, norm_topk) = match model_type {
        "mixtral" => (
            "num_local_experts",
            8,
            2,
            cfg.size("intermediate_size", Some(14336))?,
            true,
        ),
        "qwen3_moe" => (
            "num_experts",
            128,
            8,
            cfg.size("moe_intermediate_size", Some(768))?,
            cfg.flag("norm_topk_prob", false)?,
        ),
        _ => return none,
    };
    let e = cfg.bounded(experts_key, cfg.count(experts_key, e_default)?, MAX_EXPERTS)?;
    // Read before deciding, so that a config with no experts has them understood all the same.
    let qwen = model_type == "qwen3_moe";
    let step = if qwen {
        cfg.size("decoder_sparse_step", Some(1))?
    } else {
        1
    };
    let dense = if qwen {
        cfg.list_any("mlp_only_layers", |v| v.as_u64(), "a layer index")?
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    if e == 0 {
        cfg.get("num_experts_per_tok");
        // Qwen3-MoE with no experts is a dense model in transformers; Mixtral cannot route.
        return match model_type {
            "qwen3_moe" => none,
            _ => Err(cfg.err(
                experts_key,
                "is 0; a mixture of experts needs at least one expert to route each token to",
            )),
        };
    }
    let k = top_k(cfg, e, Some(k_default))?;
    let plan = if qwen {
        (0..layers)
            .map(|i| !dense.contains(&i) && (i + 1) % step == 0)
            .collect()
    } else {
        vec![true; layers as usize]
    };
    Ok((
        Some(Moe {
            norm_topk_prob: norm_topk,
            ..plain_moe(e, k, f)
        }),
        plan,
    ))
}

/// Layers that apply RoPE. SmolLM3 skips it in every `no_rope_layer_interval`-th layer, or where
/// `no_rope_layers` (1 = RoPE, 0 = none) says so.
fn rope_layers(cfg: &Config, model_type: &str, layers: u64) -> Result<Vec<bool>> {
    if model_type != "smollm3" {
        return Ok(vec![true; layers as usize]);
    }
    let listed = cfg.list(
        "no_rope_layers",
        layers,
        |v| match v.as_u64()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        },
        "1 (RoPE) or 0 (no RoPE)",
    )?;
    let every = cfg.size("no_rope_layer_interval", Some(4))?;
    Ok(listed.unwrap_or_else(|| (0..layers).map(|i| (i + 1) % every != 0).collect()))
}

/// RoPE as each config class defaults it: MixtralConfig and SmolLM3Config have their own bases;
/// Phi3Config has its own pretraining length (4096) and reads `su` and `yarn` as `longrope`.
fn rope_defaults(model_type: &str, context: u64) -> RopeDefaults {
    let theta = match model_type {
        "mixtral" => 1_000_000.0,
        "smollm3" => 2_000_000.0,
        _ => 10_000.0,
    };
    let mut d = RopeDefaults::new(theta, context);
    if model_type == "phi3" {
        d.original = Some(4096);
        d.renames = &[("su", "longrope"), ("yarn", "longrope")];
    }
    d
}
