//! DeepSeek V2 and V3 (`deepseek_v2`, `deepseek_v3`, and configs such as Kimi K2's that declare
//! `DeepseekV3ForCausalLM`), and GLM-4.5 (`glm4_moe`) and dots.llm1 (`dots1`), which share V3's
//! routing (dots.llm1 with Qwen3's attention: QK-norm per head, sliding layers by
//! `max_window_layers`), and Solar Open (`solar_open`): GLM-4.5's experts in every layer under
//! plain Llama attention.
//!
//! DeepSeek: multi-head latent attention (with or without a Q latent), the first
//! `first_k_dense_replace` layers dense and the rest mixtures of routed experts plus shared experts.
//! V3 and GLM score experts with a sigmoid, pick them with a correction bias and within the best
//! groups; V2 uses a softmax. Defaults follow `DeepseekV2Config`, `DeepseekV3Config`, `Glm4MoeConfig`.

use super::{
    heads, layer_count, plain_attention, plain_moe, pre_rms, rope, top_k, HeadDim, RopeDefaults,
};
use crate::config::Config;
use crate::error::Result;
use crate::spec::*;

pub fn load(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let v2 = model_type == "deepseek_v2";
    // Sarvam-MoE is GLM-4.5's model with its own defaults (QK-norm on, the whole head rotated).
    let sarvam = model_type == "sarvam_moe";
    let glm = model_type == "glm4_moe" || sarvam;
    let dots = model_type == "dots1";
    // Solar Open: Glm4MoeConfig without its dense layers, QK-norm or MTP, Llama's attention.
    let solar = model_type == "solar_open";
    // Youtu: DeepSeek-V3's latent attention in a Llama model with a dense MLP in every layer.
    let youtu = model_type == "youtu";
    let mut s = super::skeleton(name, model_type, family);
    let (vocab, hidden, inter, layers, heads_d, moe_inter, experts, shared, context) =
        match model_type {
            "deepseek_v2" => (102_400, 4096, 11008, 32, 32, 1407, 64, 2, 2048),
            "glm4_moe" => (151_552, 4096, 10944, 46, 96, 1408, 128, 1, 131_072),
            // Dots1Config has no default expert count, top-k or shared count: the config gives them.
            "dots1" => (152_064, 4608, 10944, 62, 32, 1408, 0, 0, 2048),
            "solar_open" => (196_608, 4096, 0, 48, 64, 1280, 128, 1, 131_072),
            "sarvam_moe" => (262_144, 4096, 8192, 19, 64, 1024, 128, 1, 131_072),
            "youtu" => (128_256, 2048, 6144, 32, 16, 0, 0, 0, 131_072),
            _ => (129_280, 7168, 18432, 61, 128, 2048, 256, 1, 4096),
        };
    s.vocab = cfg.size("vocab_size", Some(vocab))?;
    s.hidden = cfg.size("hidden_size", Some(hidden))?;
    s.layers = layer_count(cfg, &["num_hidden_layers"], Some(layers))?;
    s.context = cfg.size("max_position_embeddings", Some(context))?;
    s.mlp = Mlp {
        // Solar Open's class has no `intermediate_size`: every layer is a mixture of experts.
        intermediate: if solar {
            0
        } else {
            cfg.size("intermediate_size", Some(inter))?
        },
        act: super::act(cfg, "hidden_act", "silu")?,
        gated: true,
        bias: false,
        fused_gate_up: false,
    };
    s.norm = pre_rms(
        cfg,
        if (glm && !sarvam) || solar {
            1e-5
        } else {
            1e-6
        },
    )?;
    // Glm4MoeConfig rotates half of each head by default.
    let mut r = rope(
        cfg,
        &RopeDefaults {
            partial: if glm && !sarvam { 0.5 } else { 1.0 },
            ..RopeDefaults::new(
                if solar {
                    1_000_000.0
                } else if sarvam {
                    8_000_000.0
                } else {
                    10_000.0
                },
                s.context,
            )
        },
    )?;
    s.tied = cfg.flag("tie_word_embeddings", youtu)?;

    if glm || dots || solar {
        let kv_default = match () {
            _ if sarvam => Some(4),
            _ if glm || solar => Some(8),
            _ => None,
        };
        let head_dim = match () {
            _ if solar => HeadDim::Given(128),
            _ if sarvam => HeadDim::Given(64),
            _ => HeadDim::Floor,
        };
        let (h, kv, hd) = heads(cfg, s.hidden, Some(heads_d), kv_default, head_dim)?;
        let bias = cfg.flag("attention_bias", false)?;
        s.attn = Attention {
            qkv_bias: bias,
            qk_norm: if dots || (glm && cfg.flag("use_qk_norm", sarvam)?) {
                QkNorm::PerHead
            } else {
                QkNorm::None
            },
            ..plain_attention(h, kv, hd)
        };
    } else {
        let h = cfg.size("num_attention_heads", Some(heads_d))?;
        if v2 && !s.hidden.is_multiple_of(h) {
            return Err(cfg.err(
                "hidden_size",
                format!("is {}, not a multiple of num_attention_heads ({h}); DeepseekV2Config requires it", s.hidden),
            ));
        }
        // transformers repeats MLA's per-head keys num_heads / num_key_value_heads times, which
        // only fits when they are equal.
        // DeepseekV3Config defaults to 128 K/V heads, V2's and Youtu's to the head count.
        let kv_default = if v2 || youtu { h } else { 128 };
        {
            let kv = cfg.size("num_key_value_heads", Some(kv_default))?;
            if kv != h {
                return Err(cfg.err(
                    "num_key_value_heads",
                    format!("is {kv}; with multi-head latent attention it must equal num_attention_heads ({h})"),
                ));
            }
        }
        let bias = cfg.flag("attention_bias", false)?;
        let nope = cfg.size("qk_nope_head_dim", Some(128))?;
        let rope_d = cfg.size("qk_rope_head_dim", Some(64))?;
        let vd = cfg.size("v_head_dim", Some(128))?;
        let q_lora = if cfg.present("q_lora_rank") {
            cfg.opt_size("q_lora_rank")?
        } else {
            Some(1536)
        };
        if rope_d % 2 == 1 {
            return Err(cfg.err(
                "qk_rope_head_dim",
                format!(
                    "is {rope_d}, which is odd; RoPE rotates pairs of dims, so it must be even"
                ),
            ));
        }
        let qk = nope + rope_d;
        // With any RoPE scaling, `mscale_all_dim` enters the score scale squared
        // (transformers' `yarn_apply_mscale`).
        let mut mscale = 1.0;
        if let Some(p) = match cfg.sub("rope_parameters")? {
            Some(p) => Some(p),
            None => cfg.sub("rope_scaling")?,
        } {
            let all = p.opt_float("mscale_all_dim")?.unwrap_or(0.0);
            if r.full.scaling != RopeScaling::None && all != 0.0 {
                let f = p.float("factor", 1.0)?;
                if f > 1.0 {
                    mscale = (0.1 * all * f.ln() + 1.0).powi(2);
                }
            }
        }
        s.attn = Attention {
            kind: AttnKind::Mla,
            heads: h,
            kv_heads: h,
            head_dim: qk,
            v_head_dim: vd,
            qkv_bias: false,
            o_bias: bias,
            qk_norm: QkNorm::None,
            softcap: None,
            sinks: false,
            scale_dim: qk as f64,
            scale_mult: mscale,
            mla: Some(Mla {
                q_lora_rank: q_lora,
                bias,
                kv_lora_rank: cfg.size("kv_lora_rank", Some(512))?,
                qk_nope_head_dim: nope,
                qk_rope_head_dim: rope_d,
            }),
            qkv: Qkv::Separate,
            clip_qkv: None,
        };
    }
    // DeepSeek rotates interleaved pairs (V2 as complex numbers, V3 with rope_interleave).
    r.interleaved = !glm && !dots && !solar && cfg.flag("rope_interleave", true)?;
    s.position = Position::Rope(r);
    if youtu {
        // The class deletes every expert and MTP key: each layer is dense.
        s.plan = vec![
            LayerPlan {
                attn: AttnSpan::Full,
                rope: true,
                moe: false,
            };
            s.layers as usize
        ];
        s.layout = Layout::DeepSeek;
        return Ok(s);
    }

    let e = super::experts(cfg, "n_routed_experts", (!dots).then_some(experts))?;
    let k = top_k(
        cfg,
        e,
        match () {
            _ if v2 || dots => None,
            _ if sarvam => Some(6),
            _ => Some(8),
        },
    )?;
    if dots && !cfg.present("n_shared_experts") {
        return Err(cfg.err(
            "n_shared_experts",
            "is missing; Dots1Config has no default for it, so the config must give it",
        ));
    }
    let n_shared = cfg.count("n_shared_experts", shared)?;
    let moe_f = cfg.size("moe_intermediate_size", Some(moe_inter))?;
    // V2 groups experts only with `group_limited_greedy`; V3 and GLM always.
    let default_groups = if glm || v2 || dots || solar {
        (1, 1)
    } else {
        (8, 4)
    };
    let groups = (
        cfg.size("n_group", Some(default_groups.0))?,
        cfg.size("topk_group", Some(default_groups.1))?,
    );
    let (n_group, topk_group) = if !v2 {
        groups
    } else {
        match cfg.string("topk_method", "greedy")?.as_str() {
            "greedy" => (1, 1),
            "group_limited_greedy" => groups,
            other => {
                return Err(cfg.err(
                    "topk_method",
                    format!(
                        "is `{other}`; DeepSeek-V2 routes with `greedy` or `group_limited_greedy`"
                    ),
                ))
            }
        }
    };
    if e % n_group != 0 {
        return Err(cfg.err(
            "n_group",
            format!("is {n_group}, which does not divide n_routed_experts ({e})"),
        ));
    }
    // V3 and GLM rank groups by their two best experts' scores: a group needs two.
    if !v2 && e / n_group < 2 {
        return Err(cfg.err(
            "n_group",
            format!("is {n_group}, leaving {} routed expert(s) per group; groups are ranked by their two best experts, so each needs at least 2", e / n_group),
        ));
    }
    if n_group > 1 && k > topk_group * (e / n_group) {
        return Err(cfg.err(
            "num_experts_per_tok",
            format!(
                "is {k}, more than the {} experts of the best {topk_group} groups of {}; transformers would fill the rest with arbitrary experts of the other groups",
                topk_group * (e / n_group),
                e / n_group
            ),
        ));
    }
    if topk_group > n_group {
        return Err(cfg.err(
            "topk_group",
            format!("is {topk_group}, more than n_group ({n_group})"),
        ));
    }
    s.moe = Some(Moe {
        shared_experts: n_shared,
        shared_intermediate: moe_f * n_shared,
        scoring: if v2 {
            Scoring::Softmax
        } else {
            Scoring::Sigmoid
        },
        norm_topk_prob: cfg.flag("norm_topk_prob", !v2 && !dots)?,
        correction_bias: !v2,
        n_group,
        topk_group,
        routed_scaling: cfg.float(
            "routed_scaling_factor",
            if (v2 || glm || dots || solar) && !sarvam {
                1.0
            } else {
                2.5
            },
        )?,
        ..plain_moe(e, k, moe_f)
    });
    let first_dense = if solar {
        0
    } else {
        cfg.count(
            "first_k_dense_replace",
            if v2 || dots {
                0
            } else if glm {
                1
            } else {
                3
            },
        )?
    };
    // dots.llm1's layers slide from `max_window_layers` on (Dots1Config's `layer_types`); a
    // sliding layer without a window attends fully.
    let spans = if dots {
        let window = if cfg.present("sliding_window") {
            cfg.opt_size("sliding_window")?
        } else {
            Some(4096)
        };
        let from = cfg.count("max_window_layers", 62)?;
        match super::layer_types(cfg, s.layers, window, true)? {
            Some(spans) => spans,
            None => (0..s.layers)
                .map(|i| match window {
                    Some(w) if i >= from => AttnSpan::Sliding(w),
                    _ => AttnSpan::Full,
                })
                .collect(),
        }
    } else {
        vec![AttnSpan::Full; s.layers as usize]
    };
    s.plan = (0..s.layers)
        .map(|i| LayerPlan {
            attn: spans[i as usize],
            rope: true,
            moe: i >= first_dense,
        })
        .collect();
    s.mtp_layers = if v2 || dots || solar {
        0
    } else {
        cfg.count("num_nextn_predict_layers", 0)?
    };
    s.layout = if sarvam {
        // Sarvam's checkpoints keep one [q|k|v] tensor per layer (transformers splits it).
        s.attn.qkv = Qkv::Stacked;
        Layout::Sarvam
    } else {
        Layout::DeepSeek
    };
    Ok(s)
}
