//! GPT-2 (`gpt2`): LayerNorm with bias, learned absolute positions, a plain GELU MLP, multi-head
//! attention with q, k and v fused in one Conv1D (weights stored [in, out]), tied LM head.
//! Defaults follow `GPT2Config`. GPT-BigCode (StarCoder 1, SantaCoder) is GPT-2 with `nn.Linear`
//! weights and, by `multi_query`, one K/V head.

use super::{heads, layer_count, HeadDim};
use crate::config::Config;
use crate::error::Result;
use crate::spec::*;

pub fn load(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    read(cfg, model_type, family, name, false)
}

pub fn load_bigcode(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    read(cfg, model_type, family, name, true)
}

fn read(cfg: &Config, model_type: &str, family: &str, name: &str, bigcode: bool) -> Result<Spec> {
    let mut s = super::skeleton(name, model_type, family);
    s.hidden = cfg.size_any(&["n_embd", "hidden_size"], Some(768))?;
    s.vocab = cfg.size("vocab_size", Some(50257))?;
    s.layers = layer_count(cfg, &["n_layer", "num_hidden_layers"], Some(12))?;
    s.context = cfg.size_any(&["n_positions", "max_position_embeddings"], Some(1024))?;
    let n_head = cfg.size_any(&["n_head", "num_attention_heads"], Some(12))?;
    if !s.hidden.is_multiple_of(n_head) {
        return Err(cfg.err(
            "n_embd",
            format!(
                "is {}, not divisible by n_head ({n_head}); it must be a multiple of it",
                s.hidden
            ),
        ));
    }
    let (_, _, head_dim) = heads(
        cfg,
        s.hidden,
        Some(n_head),
        Some(n_head),
        HeadDim::Given(s.hidden / n_head),
    )?;
    // GPT-BigCode: one K/V head (q, then k, then v in c_attn), or one per head (each head's q,
    // k and v side by side).
    let kv = if bigcode && cfg.flag("multi_query", true)? {
        1
    } else {
        n_head
    };
    s.attn.kind = if kv == 1 && n_head > 1 {
        AttnKind::Mqa
    } else {
        AttnKind::Mha
    };
    s.attn.heads = n_head;
    s.attn.kv_heads = kv;
    s.attn.head_dim = head_dim;
    s.attn.v_head_dim = head_dim;
    s.attn.scale_dim = if cfg.flag("scale_attn_weights", true)? {
        head_dim as f64
    } else {
        1.0
    };
    s.attn.qkv_bias = true;
    s.attn.o_bias = true;
    s.attn.qkv = if bigcode && kv == n_head {
        Qkv::Grouped
    } else {
        Qkv::Stacked
    };
    s.mlp = Mlp {
        intermediate: match cfg.opt_size("n_inner")? {
            Some(n) => n,
            None => 4 * s.hidden,
        },
        act: super::act(
            cfg,
            "activation_function",
            if bigcode {
                "gelu_pytorch_tanh"
            } else {
                "gelu_new"
            },
        )?,
        gated: false,
        bias: true,
        fused_gate_up: false,
    };
    s.embedding.learned_positions = Some(s.context);
    s.norm = Norm {
        kind: NormKind::Layer { bias: true },
        eps: cfg.float("layer_norm_epsilon", 1e-5)?,
        unit_offset: false,
        place: NormPlace::Pre,
    };
    s.position = Position::Learned;
    s.plan = vec![
        LayerPlan {
            attn: AttnSpan::Full,
            rope: false,
            moe: false
        };
        s.layers as usize
    ];
    s.tied = cfg.flag("tie_word_embeddings", true)?;
    s.layout = if bigcode {
        Layout::GptBigCode
    } else {
        Layout::Gpt2
    };
    Ok(s)
}
