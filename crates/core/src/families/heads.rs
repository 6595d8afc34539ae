//! Attention heads, K/V heads and the head size, as config classes read them.

use crate::config::Config;
use crate::error::Result;

/// A config class's head size when `head_dim` is absent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HeadDim {
    /// This size.
    Given(u64),
    /// This size where the key is absent; hidden // heads where it is null (MiniCPM5-MoE's
    /// `head_dim: int | None = 128`).
    GivenUnlessNull(u64),
    /// hidden / heads, which must divide exactly.
    Divide,
    /// hidden / heads as `Divide`, whatever `head_dim` says; the class rotates by `head_dim`, so
    /// one that differs is refused (Qwen2-VL's attention fails with it).
    Divided,
    /// hidden // heads, rounded down as the class computes it without checking (Mixtral, GLM-4.5).
    Floor,
    /// No default: the class leaves it unset and its attention fails without one (Ministral).
    Required,
}

/// Attention heads, K/V heads and head_dim, with the checks transformers' shapes imply.
pub(crate) fn heads(
    cfg: &Config,
    hidden: u64,
    heads_default: Option<u64>,
    kv_default: Option<u64>,
    head_dim_default: HeadDim,
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
    let head_dim = head_dim(cfg, hidden, heads, head_dim_default)?;
    Ok((heads, kv, head_dim))
}

/// `head_dim`, or the class's default for it given `heads` query heads.
pub(crate) fn head_dim(cfg: &Config, hidden: u64, heads: u64, default: HeadDim) -> Result<u64> {
    let given = cfg.opt_size("head_dim")?;
    Ok(match (given, default) {
        (Some(d), HeadDim::Divided) => {
            let divided = divide(
                cfg,
                hidden,
                heads,
                "make hidden_size a multiple of the head count",
            )?;
            if d != divided {
                return Err(cfg.err(
                    "head_dim",
                    format!(
                        "is {d}; this model type's heads are hidden_size / num_attention_heads ({divided}) wide and its RoPE is head_dim wide, so the two must agree"
                    ),
                ));
            }
            d
        }
        (Some(d), _) => d,
        (None, HeadDim::Given(d)) => d,
        (None, HeadDim::GivenUnlessNull(_)) if cfg.present("head_dim") => (hidden / heads).max(1),
        (None, HeadDim::GivenUnlessNull(d)) => d,
        (None, HeadDim::Floor) => (hidden / heads).max(1),
        (None, HeadDim::Required) => {
            return Err(cfg.err(
                "head_dim",
                "is missing; this model type has no default head size, so the config must give one",
            ))
        }
        (None, HeadDim::Divide) => divide(
            cfg,
            hidden,
            heads,
            "head_dim is absent; give head_dim or make hidden_size a multiple of the head count",
        )?,
        (None, HeadDim::Divided) => divide(
            cfg,
            hidden,
            heads,
            "make hidden_size a multiple of the head count",
        )?,
    })
}

/// hidden / heads, which must divide exactly; `remedy` says what makes it.
fn divide(cfg: &Config, hidden: u64, heads: u64, remedy: &str) -> Result<u64> {
    if !hidden.is_multiple_of(heads) {
        return Err(cfg.err(
            "hidden_size",
            format!("is {hidden}, not divisible by num_attention_heads ({heads}); {remedy}"),
        ));
    }
    Ok(hidden / heads)
}
