//! Falcon-H1 (`falcon_h1`): every layer runs attention and Mamba2 side by side on one normed
//! input and sums their outputs, then an MLP, each piece scaled by its μP multiplier. Defaults
//! follow `FalconH1Config`.

use super::mamba2::{ssm, SsmKeys};
use super::{heads, plain_attention, pre_rms, rope, HeadDim, RopeDefaults};
use crate::config::Config;
use crate::error::Result;
use crate::spec::*;

pub fn load(cfg: &Config, _model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, "falcon_h1", family);
    s.vocab = cfg.size("vocab_size", Some(128_000))?;
    s.hidden = cfg.size("hidden_size", Some(4096))?;
    s.layers = super::layer_count(cfg, &["num_hidden_layers"], Some(32))?;
    s.context = cfg.size("max_position_embeddings", Some(8192))?;
    s.norm = pre_rms(cfg, 1e-5)?;
    s.tied = cfg.flag("tie_word_embeddings", false)?;
    let (h, kv, hd) = heads(cfg, s.hidden, Some(32), Some(8), HeadDim::Floor)?;
    let bias = cfg.flag("attention_bias", false)?;
    s.attn = Attention {
        qkv_bias: bias,
        o_bias: bias,
        // K × key_multiplier: the same as the scores × it.
        scale_mult: multiplier(cfg, "key_multiplier")?,
        ..plain_attention(h, kv, hd)
    };
    s.position = Position::Rope(rope(cfg, &RopeDefaults::new(10_000.0, s.context))?);
    s.mlp = Mlp {
        bias: cfg.flag("mlp_bias", false)?,
        ..Mlp::gated(
            cfg.size("intermediate_size", Some(14336))?,
            super::act(cfg, "hidden_act", "silu")?,
        )
    };
    let mut m = ssm(cfg, s.hidden, s.norm.eps, &SsmKeys::FALCON_H1)?;
    // The mixer's output projection has its own flag; anatomy draws both projections alike.
    let out_bias = cfg.flag("projectors_bias", false)?;
    if out_bias != m.bias {
        return Err(cfg.err(
            "projectors_bias",
            format!("is {out_bias} while mamba_proj_bias is {}; anatomy draws Mamba2's input and output projections with biases or without, together", m.bias),
        ));
    }
    m.gate = if !cfg.flag("mamba_rms_norm", false)? {
        cfg.get("mamba_norm_before_gate");
        SsmGate::Plain
    } else if cfg.flag("mamba_norm_before_gate", true)? {
        SsmGate::NormBefore
    } else {
        SsmGate::NormAfter
    };
    m.part_mults = multipliers::<5>(cfg, "ssm_multipliers")?;
    s.recurrent = Some(Recurrent::Mamba2(m));
    let [mlp_gate, mlp_down] = multipliers::<2>(cfg, "mlp_multipliers")?;
    s.mup = Some(Mup {
        attn_in: multiplier(cfg, "attention_in_multiplier")?,
        attn_out: multiplier(cfg, "attention_out_multiplier")?,
        ssm_in: multiplier(cfg, "ssm_in_multiplier")?,
        ssm_out: multiplier(cfg, "ssm_out_multiplier")?,
        mlp_gate,
        mlp_down,
    });
    s.embedding.multiplier = multiplier(cfg, "embedding_multiplier")?;
    s.logits_mult = multiplier(cfg, "lm_head_multiplier")?;
    s.plan = (0..s.layers)
        .map(|_| LayerPlan {
            mixer: Mixer::Parallel(AttnSpan::Full),
            rope: true,
            ffn: Ffn::Dense,
        })
        .collect();
    s.layout = Layout::FalconH1;
    Ok(s)
}

/// A multiplier: a finite number, 1 by default.
fn multiplier(cfg: &Config, key: &str) -> Result<f64> {
    let v = cfg.float(key, 1.0)?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(cfg.err(key, format!("is {v}; it must be a finite number")))
    }
}

/// A list of `N` multipliers, all 1 by default (null too, as the class fills them in).
fn multipliers<const N: usize>(cfg: &Config, key: &str) -> Result<[f64; N]> {
    let expect = "a finite number";
    let items = cfg.list_any(key, |v| v.as_f64().filter(|x| x.is_finite()), expect)?;
    match items {
        None => Ok([1.0; N]),
        Some(v) => v.try_into().map_err(|v: Vec<f64>| {
            cfg.err(
                key,
                format!("has {} entries; it must have {N}, each {expect}", v.len()),
            )
        }),
    }
}
