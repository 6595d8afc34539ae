//! xLSTM (`xlstm`, NX-AI's xLSTM 7B): every layer an RMS-normed mLSTM, then an RMS-normed
//! SwiGLU MLP, each added to the stream; no positions; the logits soft-capped. Defaults follow
//! `xLSTMConfig`.

use crate::config::Config;
use crate::error::Result;
use crate::spec::*;

pub fn load(cfg: &Config, _model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, "xlstm", family);
    s.vocab = cfg.size("vocab_size", Some(50_304))?;
    s.hidden = alias(cfg, "hidden_size", "embedding_dim", 4096)?;
    s.layers = alias(cfg, "num_hidden_layers", "num_blocks", 32)?;
    if s.layers > crate::config::MAX_LAYERS {
        return Err(cfg.err(
            "num_hidden_layers",
            format!("is {}; give 1 to {}", s.layers, crate::config::MAX_LAYERS),
        ));
    }
    // No position limit of its own: the state carries any length.
    s.context = 4096;
    let eps = cfg.float("norm_eps", 1e-6)?;
    s.norm = Norm {
        kind: NormKind::Rms,
        eps,
        unit_offset: false,
        place: NormPlace::Pre,
    };
    s.position = Position::None;
    // transformers' xLSTM names no tied weights: its head is its own whatever the flag says.
    cfg.flag("tie_word_embeddings", false)?;
    s.tied = false;
    // Biases on every projection and on the blocks' norms; the output norm has none.
    let bias = cfg.flag("use_bias", false)?;
    if bias {
        s.norm.kind = NormKind::RmsBias;
        s.final_norm_kind = Some(NormKind::Rms);
    }
    let fused = match cfg.string("weight_mode", "single")?.as_str() {
        "single" => false,
        "fused" => true,
        other => {
            return Err(cfg.err(
                "weight_mode",
                format!("is {other:?}; xLSTM stores its projections apart (\"single\") or fused (\"fused\")"),
            ))
        }
    };
    let heads = cfg.size("num_heads", Some(8))?;
    // The layer truncates hidden × factor (the config's own rounded properties size its cache).
    let width = |key: &str, default: f64| -> Result<u64> {
        let f = cfg.float(key, default)?;
        let w = (s.hidden as f64 * f).floor();
        if !(f > 0.0 && w >= 1.0 && w < u64::MAX as f64) {
            return Err(cfg.err(
                key,
                format!("is {f}; hidden_size × it must be a positive width"),
            ));
        }
        Ok(w as u64)
    };
    let (qk, v) = (width("qk_dim_factor", 0.5)?, width("v_dim_factor", 1.0)?);
    for (key, w) in [("qk_dim_factor", qk), ("v_dim_factor", v)] {
        if !w.is_multiple_of(heads) {
            return Err(cfg.err(
                "num_heads",
                format!(
                    "is {heads}, which does not divide the {w} features hidden_size × {key} gives"
                ),
            ));
        }
        // The cache's state is sized by the config's width rounded up to a multiple of 64: a
        // head size that differs from the layer's fails transformers' first forward pass.
        let cached = w.div_ceil(64) * 64;
        if cached / heads != w / heads {
            return Err(cfg.err(
                key,
                format!(
                    "gives {w} features ({} per head), but transformers sizes the recurrent state's cache by {cached} ({} per head), the width rounded up to a multiple of 64, and the two do not fit; give a factor that makes hidden_size × it a multiple of 64",
                    w / heads,
                    cached / heads
                ),
            ));
        }
    }
    let cap = |key: &str, default: f64| -> Result<f64> {
        let c = cfg.float(key, default)?;
        if c > 0.0 && c.is_finite() {
            Ok(c)
        } else {
            Err(cfg.err(key, format!("is {c}; give a positive soft cap")))
        }
    };
    s.recurrent = Some(Recurrent::MLstm(MLstm {
        heads,
        qk_dim: qk,
        v_dim: v,
        gate_cap: cap("gate_soft_cap", 15.0)?,
        eps: cfg.float("eps", 1e-6)?,
        norm_eps: eps,
        bias,
        fused,
    }));
    s.final_softcap = Some(cap("output_logit_soft_cap", 30.0)?);
    // The MLP's width: hidden × ffn_proj_factor, rounded up to a multiple.
    let factor = cfg.float("ffn_proj_factor", 2.667)?;
    let multiple = cfg.size("ffn_round_up_to_multiple_of", Some(64))? as f64;
    let f = ((s.hidden as f64 * factor + multiple - 1.0) / multiple).floor() * multiple;
    if !(f >= 1.0 && f < u64::MAX as f64) {
        return Err(cfg.err(
            "ffn_proj_factor",
            format!("is {factor}; hidden_size × it must be a positive width"),
        ));
    }
    s.mlp = Mlp {
        intermediate: f as u64,
        act: Act::Silu,
        gated: true,
        bias,
        fused_gate_up: fused,
        sub_norm: false,
        clamp: None,
        scalar: false,
    };
    s.plan = (0..s.layers)
        .map(|_| LayerPlan {
            mixer: Mixer::MLstm,
            rope: false,
            ffn: Ffn::Dense,
        })
        .collect();
    s.layout = Layout::Xlstm;
    Ok(s)
}

/// A size under either of two keys (the class copies one to the other); both given must agree.
fn alias(cfg: &Config, key: &str, other: &str, default: u64) -> Result<u64> {
    match (cfg.opt_size(key)?, cfg.opt_size(other)?) {
        (Some(a), Some(b)) if a != b => Err(cfg.err(
            other,
            format!("is {b} while {key} is {a}; the class uses {key} and reads this one only without it"),
        )),
        (Some(a), _) | (None, Some(a)) => Ok(a),
        (None, None) => Ok(default),
    }
}
