//! Falcon (`falcon`): LayerNorm decoders whose attention and MLP run side by side, in three
//! generations the config tells apart. Falcon-7B: multi-query attention, its Q, K and V stacked in
//! one tensor, one norm for both sublayers. Falcon-40B and 180B (`new_decoder_architecture`):
//! grouped K/V heads, the fused tensor grouped by K/V head, and a norm each (`ln_attn`, `ln_mlp`).
//! Without `multi_query`: every head its own K and V. With `parallel_attn` off, the sublayers
//! run in sequence. ALiBi (`alibi`) is refused for now. Defaults follow `FalconConfig`.

use super::{layer_count, plain_attention, rope, RopeDefaults};
use crate::config::Config;
use crate::error::Result;
use crate::spec::*;

pub fn load(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, model_type, family);
    // `n_embed` is the old name of the width, and wins when both are given.
    s.hidden = cfg.size_any(&["n_embed", "hidden_size"], Some(4544))?;
    if cfg.has("n_embed") {
        cfg.get("hidden_size");
    }
    s.vocab = cfg.size("vocab_size", Some(65024))?;
    s.layers = layer_count(cfg, &["num_hidden_layers"], Some(32))?;
    s.context = cfg.size("max_position_embeddings", Some(2048))?;
    let heads = cfg.size("num_attention_heads", Some(71))?;
    if !s.hidden.is_multiple_of(heads) {
        return Err(cfg.err(
            "hidden_size",
            format!(
                "is {}, not a multiple of num_attention_heads ({heads}); Falcon requires it",
                s.hidden
            ),
        ));
    }
    let hd = s.hidden / heads;
    let new_arch = cfg.flag("new_decoder_architecture", false)?;
    let multi_query = cfg.flag("multi_query", true)?;
    let kv_config = cfg.size("num_kv_heads", Some(heads))?;
    let (kv, qkv) = if new_arch {
        (kv_config, Qkv::Grouped)
    } else if multi_query {
        (1, Qkv::Stacked)
    } else {
        // Every head its own K and V, split as such; transformers' attention then reshapes
        // them into `num_kv_heads` heads, which only fits when that is the query heads.
        if kv_config != heads {
            return Err(cfg.err(
                "num_kv_heads",
                format!(
                    "is {kv_config}; without multi_query or new_decoder_architecture every head has its own K and V, so it must equal num_attention_heads ({heads})"
                ),
            ));
        }
        (heads, Qkv::Grouped)
    };
    if heads % kv != 0 {
        return Err(cfg.err(
            "num_kv_heads",
            format!("is {kv}, which does not divide num_attention_heads ({heads})"),
        ));
    }
    let bias = cfg.flag("bias", false)?;
    s.attn = Attention {
        qkv_bias: bias,
        o_bias: bias,
        qkv,
        ..plain_attention(heads, kv, hd)
    };
    s.mlp = Mlp {
        intermediate: cfg.size("ffn_hidden_size", Some(4 * s.hidden))?,
        act: super::act(cfg, "activation", "gelu")?,
        gated: false,
        bias,
        fused_gate_up: false,
        sub_norm: false,
        clamp: None,
        scalar: false,
    };
    s.norm = Norm {
        kind: NormKind::Layer { bias: true },
        eps: cfg.float("layer_norm_epsilon", 1e-5)?,
        unit_offset: false,
        place: NormPlace::Pre,
    };
    let parallel = cfg.flag("parallel_attn", true)?;
    let norms = match cfg.opt_size("num_ln_in_parallel_attn")? {
        Some(n) => n,
        None if new_arch => 2,
        None => 1,
    };
    (s.block, s.layout) = if new_arch && norms == 2 {
        (
            Block::Parallel { shared_norm: false },
            Layout::FalconTwoNorms,
        )
    } else if new_arch || parallel {
        (Block::Parallel { shared_norm: true }, Layout::Falcon)
    } else {
        (Block::Sequential, Layout::Falcon)
    };
    if cfg.flag("alibi", false)? {
        return Err(cfg.err(
            "alibi",
            "is true: ALiBi positions are not drawn or run by anatomy yet (Falcon with rotary positions is)",
        ));
    }
    s.position = Position::Rope(rope(cfg, &RopeDefaults::new(10_000.0, s.context))?);
    s.plan = vec![LayerPlan::attention(AttnSpan::Full, true, false); s.layers as usize];
    s.tied = cfg.flag("tie_word_embeddings", true)?;
    Ok(s)
}
