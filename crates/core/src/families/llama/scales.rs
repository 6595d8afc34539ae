//! What a Llama-like family scales beyond the plain model: μP's multipliers (Granite's,
//! HyperCLOVA X's) and HunYuan's NTK-alpha RoPE base.

use crate::config::Config;
use crate::error::Result;
use crate::spec::Attention;

/// Which μP multipliers a family reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mup {
    /// Granite's: `embedding_multiplier`, `residual_multiplier`, `attention_multiplier` (the
    /// score scale in place of 1/√head_dim) and `logits_scaling` (a divisor), each its class's
    /// default where absent.
    Granite(Multipliers),
    /// HyperCLOVA X's: Granite's keys, but `logits_scaling` multiplies and a missing or null
    /// `attention_multiplier` is 1/√head_dim.
    HyperClovax,
}

/// A μP class's defaults for its four multipliers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Multipliers {
    pub embedding: f64,
    pub residual: f64,
    pub attention: f64,
    pub logits: f64,
}

impl Multipliers {
    /// Granite's own: every multiplier 1.
    pub const ONE: Multipliers = Multipliers {
        embedding: 1.0,
        residual: 1.0,
        attention: 1.0,
        logits: 1.0,
    };
}

/// μP's multipliers as a family reads them: the embedding's, the residual adds' and the logits'
/// (the attention's score scale set on `attn`).
pub(super) fn mup(
    cfg: &Config,
    mup: Mup,
    head_dim: u64,
    attn: &mut Attention,
) -> Result<(f64, f64, f64)> {
    let check = |key: &str, v: f64| -> Result<f64> {
        if v.is_finite() && v != 0.0 {
            Ok(v)
        } else {
            Err(cfg.err(key, format!("is {v}; it must be a finite, non-zero number")))
        }
    };
    let m = match mup {
        Mup::Granite(m) => m,
        Mup::HyperClovax => Multipliers::ONE,
    };
    let finite = |key: &str, default: f64| check(key, cfg.float(key, default)?);
    let embed_mult = finite("embedding_multiplier", m.embedding)?;
    let residual_mult = finite("residual_multiplier", m.residual)?;
    attn.scale_dim = 1.0;
    attn.scale_mult = match mup {
        Mup::Granite(_) => finite("attention_multiplier", m.attention)?,
        Mup::HyperClovax => match cfg.opt_float("attention_multiplier")? {
            Some(v) => check("attention_multiplier", v)?,
            None => 1.0 / (head_dim as f64).sqrt(),
        },
    };
    let scaling = finite("logits_scaling", m.logits)?;
    let logits_mult = match mup {
        Mup::Granite(_) => 1.0 / scaling,
        Mup::HyperClovax => scaling,
    };
    Ok((embed_mult, residual_mult, logits_mult))
}

/// HunYuan's NTK-alpha: the `alpha` of a `dynamic` (or HunyuanOCR's `xdrope`) RoPE dict, where
/// it is set and not zero (the class tests it for truth). The dict's YaRN-style keys beside it
/// (`beta_fast`, `mscale` …) are what its config class leaves unvalidated and its rotary
/// embedding never reads.
pub(super) fn ntk_alpha(cfg: &Config, head_dim: u64) -> Result<Option<f64>> {
    let (key, p) = match cfg.sub("rope_parameters")? {
        Some(p) => ("rope_parameters", p),
        None => match cfg.sub("rope_scaling")? {
            Some(p) => ("rope_scaling", p),
            None => return Ok(None),
        },
    };
    let kind = match p.opt_string("rope_type")? {
        Some(k) => k,
        None => p.string("type", "default")?,
    };
    if !matches!(kind.as_str(), "dynamic" | "xdrope") {
        return Ok(None);
    }
    let Some(alpha) = p.opt_float("alpha")?.filter(|a| *a != 0.0) else {
        return Ok(None);
    };
    if !(alpha > 0.0 && alpha.is_finite()) {
        return Err(p.err(
            "alpha",
            format!("is {alpha}; NTK-alpha RoPE needs a positive number"),
        ));
    }
    if head_dim <= 2 {
        return Err(cfg.err(
            "head_dim",
            format!("is {head_dim}; {key}.alpha stretches the base by alpha ** (head_dim / (head_dim - 2)), which needs a head_dim above 2"),
        ));
    }
    for unread in [
        "factor",
        "beta_fast",
        "beta_slow",
        "mscale",
        "mscale_all_dim",
    ] {
        p.get(unread);
    }
    Ok(Some(alpha))
}
