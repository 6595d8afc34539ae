//! Gemma 2 and Gemma 3 (`gemma2`, `gemma3_text`, and `gemma3`'s `text_config`), and VaultGemma
//! (Gemma 2 with a norm before each sublayer only).
//!
//! Norms before and after each sublayer, stored w applied as (1 + w); embeddings scaled by √hidden;
//! GELU-tanh gating; scores scaled by query_pre_attn_scalar; local (sliding) and global layers,
//! Gemma 3 with its own RoPE base for local layers and per-head QK-norm; Gemma 2 with attention
//! and final logit softcaps. Defaults follow `Gemma2Config` and `Gemma3TextConfig`.

use super::{heads, layer_count, layer_types, plain_attention, rope, HeadDim, RopeDefaults};
use crate::config::Config;
use crate::error::Result;
use crate::spec::*;

pub fn load(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let gemma3 = model_type == "gemma3_text";
    let mut s = super::skeleton(name, model_type, family);
    s.hidden = cfg.size("hidden_size", Some(2304))?;
    s.vocab = cfg.size("vocab_size", Some(if gemma3 { 262_208 } else { 256_000 }))?;
    s.layers = layer_count(cfg, &["num_hidden_layers"], Some(26))?;
    s.context = cfg.size(
        "max_position_embeddings",
        Some(if gemma3 { 131_072 } else { 8192 }),
    )?;
    let (h, kv, hd) = heads(cfg, s.hidden, Some(8), Some(4), HeadDim::Given(256))?;
    let bias = cfg.flag("attention_bias", false)?;
    s.attn = Attention {
        qkv_bias: bias,
        o_bias: bias,
        qk_norm: if gemma3 {
            QkNorm::PerHead
        } else {
            QkNorm::None
        },
        scale_dim: cfg.size("query_pre_attn_scalar", Some(256))? as f64,
        ..plain_attention(h, kv, hd)
    };
    // Gemma 2 caps scores at 50 and logits at 30 unless told otherwise (an explicit null turns a
    // cap off); Gemma 3 caps neither.
    let cap = |key: &str, gemma2_default: f64| -> Result<Option<f64>> {
        if cfg.present(key) {
            cfg.opt_float(key)
        } else {
            Ok((!gemma3).then_some(gemma2_default))
        }
    };
    s.attn.softcap = cap("attn_logit_softcapping", 50.0)?;
    s.final_softcap = cap("final_logit_softcapping", 30.0)?;
    // Gemma reads `hidden_activation`; `hidden_act` is a legacy alias some configs carry too.
    let act = super::act(cfg, "hidden_activation", "gelu_pytorch_tanh")?;
    s.mlp = Mlp::gated(cfg.size("intermediate_size", Some(9216))?, act);
    s.embedding.scale_by_sqrt_hidden = true;
    s.norm = Norm {
        kind: NormKind::Rms,
        eps: cfg.float("rms_norm_eps", 1e-6)?,
        unit_offset: true,
        place: if model_type == "vaultgemma" {
            NormPlace::Pre
        } else {
            NormPlace::Sandwich
        },
    };
    if cfg.flag("use_bidirectional_attention", false)? {
        return Err(cfg.err(
            "use_bidirectional_attention",
            "is true; every position then attends to every other (an embedding model), and anatomy draws causal decoders",
        ));
    }
    // Gemma 3 keeps the pattern as `_sliding_window_pattern` once saved; read either way, as
    // `layer_types` (when given) decides.
    let pattern = if !gemma3 {
        2
    } else if cfg.has("sliding_window_pattern") || !cfg.has("_sliding_window_pattern") {
        cfg.size("sliding_window_pattern", Some(6))?
    } else {
        cfg.size("_sliding_window_pattern", Some(6))?
    };
    let window = super::window(cfg, Some(4096))?;
    // Both classes need a window for their local layers; an explicit null leaves them none.
    if window.is_none() {
        return Err(cfg.err(
            "sliding_window",
            "is null; Gemma's local layers need a window size (a positive integer)",
        ));
    }
    let spans = match layer_types(cfg, s.layers, window, false)? {
        Some(spans) => spans,
        None => {
            // Gemma 2 alternates local and global; Gemma 3 has `sliding_window_pattern` − 1 local per global.
            (0..s.layers)
                .map(|i| match window {
                    Some(w) if (i + 1) % pattern != 0 => AttnSpan::Sliding(w),
                    _ => AttnSpan::Full,
                })
                .collect()
        }
    };
    s.plan = super::uniform_plan(spans, false);
    let mut r = rope(
        cfg,
        &RopeDefaults::new(if gemma3 { 1_000_000.0 } else { 10_000.0 }, s.context),
    )?;
    if gemma3 && r.sliding.is_none() {
        // Gemma3TextConfig puts `rope_scaling` on the full-attention layers only; local layers
        // rotate with their own base, unscaled.
        r.sliding = Some(RopeFreqs {
            theta: cfg.float("rope_local_base_freq", 10_000.0)?,
            scaling: RopeScaling::None,
        });
    }
    s.position = Position::Rope(r);
    s.tied = cfg.flag("tie_word_embeddings", true)?;
    s.layout = Layout::Sandwich;
    Ok(s)
}
