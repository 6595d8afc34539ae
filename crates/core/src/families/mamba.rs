//! Mamba (`mamba`) and Falcon-Mamba (`falcon_mamba`): every layer an RMS norm and Mamba's
//! selective scan, added to the stream, with no attention, no FFN and no positions;
//! Falcon-Mamba RMS-normalizes the step, B and C without weights. Defaults follow `MambaConfig`
//! and `FalconMambaConfig`.

use super::mamba2::{recurrent_only, Shell};
use crate::config::Config;
use crate::error::Result;
use crate::spec::*;

pub fn load(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let shell = Shell {
        vocab: 50_280,
        hidden: 768,
        layers: 32,
        tied: true,
    };
    let mut s = recurrent_only(cfg, model_type, family, name, shell, Mixer::Mamba)?;
    let keys = if model_type == "falcon_mamba" {
        S6Keys::FALCON_MAMBA
    } else {
        S6Keys::MAMBA
    };
    s.recurrent = Some(Recurrent::Mamba(s6(cfg, s.hidden, &keys)?));
    Ok(s)
}

/// Where a family's config keeps Mamba's settings, and its class defaults.
#[derive(Debug, Clone, Copy)]
pub struct S6Keys {
    pub expand: (&'static str, u64),
    pub state: (&'static str, u64),
    pub dt_rank: &'static str,
    pub conv: (&'static str, u64),
    pub conv_bias: (&'static str, bool),
    pub bias: (&'static str, bool),
    /// A key restating expand × hidden (`intermediate_size`, saved by Mamba's class); `None`
    /// where that key is the MLP's.
    pub restated_inner: Option<&'static str>,
    /// RMS norms on the step's input, B and C: the key of their ε and its default, and whether
    /// they have weights.
    pub bcdt_norm: Option<(&'static str, f64, bool)>,
    /// The mixer's activation's key.
    pub act: &'static str,
}

impl S6Keys {
    pub const MAMBA: S6Keys = S6Keys {
        expand: ("expand", 2),
        state: ("state_size", 16),
        dt_rank: "time_step_rank",
        conv: ("conv_kernel", 4),
        conv_bias: ("use_conv_bias", true),
        bias: ("use_bias", false),
        restated_inner: Some("intermediate_size"),
        bcdt_norm: None,
        act: "hidden_act",
    };

    pub const FALCON_MAMBA: S6Keys = S6Keys {
        bcdt_norm: Some(("mixer_rms_eps", 1e-6, false)),
        ..S6Keys::MAMBA
    };

    /// Jamba's `mamba_*` keys; its norms on the step, B and C use `rms_norm_eps`.
    pub const JAMBA: S6Keys = S6Keys {
        expand: ("mamba_expand", 2),
        state: ("mamba_d_state", 16),
        dt_rank: "mamba_dt_rank",
        conv: ("mamba_d_conv", 4),
        conv_bias: ("mamba_conv_bias", true),
        bias: ("mamba_proj_bias", false),
        restated_inner: None,
        bcdt_norm: Some(("rms_norm_eps", 1e-6, true)),
        act: "hidden_act",
    };

    /// Zamba's: Jamba's keys without the norms, the mixer's activation `hidden_mamba_act`.
    pub const ZAMBA: S6Keys = S6Keys {
        bcdt_norm: None,
        act: "hidden_mamba_act",
        ..S6Keys::JAMBA
    };
}

/// Mamba's settings, as `MambaMixer` (and the hybrids' copies of it) read them.
pub(crate) fn s6(cfg: &Config, hidden: u64, k: &S6Keys) -> Result<S6> {
    let expand = cfg.size(k.expand.0, Some(k.expand.1))?;
    let inner = hidden.checked_mul(expand).ok_or_else(|| {
        cfg.err(
            k.expand.0,
            format!("is {expand}; times hidden_size it overflows"),
        )
    })?;
    if let Some(key) = k.restated_inner {
        if let Some(i) = cfg.opt_size(key)? {
            // Saved configs hold the width the class derives.
            if i != inner {
                return Err(cfg.err(
                    key,
                    format!(
                        "is {i}; the class sets it to {} × hidden_size ({inner}) whatever it says",
                        k.expand.0
                    ),
                ));
            }
        }
    }
    let dt_rank = match cfg.get(k.dt_rank) {
        Some(v) if v.as_str() == Some("auto") => hidden.div_ceil(16),
        None => hidden.div_ceil(16),
        Some(_) => cfg.size(k.dt_rank, None)?,
    };
    super::mamba2::silu(cfg, k.act)?;
    Ok(S6 {
        inner,
        state: cfg.size(k.state.0, Some(k.state.1))?,
        dt_rank,
        conv_kernel: cfg.size(k.conv.0, Some(k.conv.1))?,
        conv_bias: cfg.flag(k.conv_bias.0, k.conv_bias.1)?,
        bias: cfg.flag(k.bias.0, k.bias.1)?,
        bcdt_norm: match k.bcdt_norm {
            Some((key, default, weighted)) => Some(BcdtNorm {
                eps: cfg.float(key, default)?,
                weighted,
            }),
            None => None,
        },
        heads: 1,
        interleaved: false,
    })
}
