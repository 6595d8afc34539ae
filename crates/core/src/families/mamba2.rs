//! Mamba2 (`mamba2`): every layer an RMS norm and Mamba2's state-space mixer, added to the
//! stream, with no attention, no FFN and no positions. Defaults follow `Mamba2Config`.

use super::layer_count;
use crate::config::Config;
use crate::error::Result;
use crate::spec::*;

pub fn load(cfg: &Config, _model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let shell = Shell {
        vocab: 32_768,
        hidden: 4096,
        layers: 64,
        tied: false,
    };
    let mut s = recurrent_only(cfg, "mamba2", family, name, shell, Mixer::Mamba2)?;
    s.recurrent = Some(Recurrent::Mamba2(ssm(
        cfg,
        s.hidden,
        s.norm.eps,
        &SsmKeys::MAMBA2,
    )?));
    Ok(s)
}

/// The mixers' activation (of the convolution, and the gate): SiLU is what they are built
/// around, and what anatomy draws.
pub(crate) fn silu(cfg: &Config, key: &str) -> Result<()> {
    let act = cfg.string(key, "silu")?;
    if act != "silu" && act != "swish" {
        return Err(cfg.err(
            key,
            format!("is {act:?}; anatomy draws a state-space mixer's convolution and gate with SiLU (\"silu\")"),
        ));
    }
    Ok(())
}

/// The class defaults of a model of recurrent layers alone.
pub(crate) struct Shell {
    pub vocab: u64,
    pub hidden: u64,
    pub layers: u64,
    pub tied: bool,
}

/// A model whose every layer is an RMS norm and `mixer`, added to the stream, with no
/// attention, no FFN and no positions (Mamba, Mamba2), less the mixer's settings.
pub(crate) fn recurrent_only(
    cfg: &Config,
    model_type: &str,
    family: &str,
    name: &str,
    d: Shell,
    mixer: Mixer,
) -> Result<Spec> {
    let mut s = super::skeleton(name, model_type, family);
    s.vocab = cfg.size("vocab_size", Some(d.vocab))?;
    s.hidden = cfg.size("hidden_size", Some(d.hidden))?;
    s.layers = layer_count(cfg, &["num_hidden_layers"], Some(d.layers))?;
    // No position limit of its own: the state carries any length. Drawn at the length the
    // tests and `stats` use for attention models' defaults.
    s.context = 4096;
    s.norm = Norm {
        kind: NormKind::Rms,
        eps: cfg.float("layer_norm_epsilon", 1e-5)?,
        unit_offset: false,
        place: NormPlace::Pre,
    };
    s.position = Position::None;
    s.plan = (0..s.layers)
        .map(|_| LayerPlan {
            mixer,
            rope: false,
            ffn: Ffn::None,
        })
        .collect();
    s.tied = cfg.flag("tie_word_embeddings", d.tied)?;
    s.layout = Layout::Mamba2;
    Ok(s)
}

/// Where a family's config keeps the Mamba2 mixer's settings, and its class defaults.
#[derive(Debug, Clone, Copy)]
pub struct SsmKeys {
    pub heads: (&'static str, u64),
    /// `None`: derived, expand × hidden / heads ("auto" in Bamba's config).
    pub head_dim: (&'static str, Option<u64>),
    /// The inner width is expand × hidden, and heads × head_dim must equal it; `None`: the
    /// inner width is heads × head_dim, whatever `expand` says (Nemotron-H).
    pub expand: Option<(&'static str, u64)>,
    /// The key of the smallest Δ, which the class clamps to in a prompt's scan (Nemotron-H's
    /// `time_step_min`); otherwise `time_step_limit` must leave Δ unclamped.
    pub dt_floor: Option<(&'static str, f64)>,
    /// The activation's key (`hidden_act`; Nemotron-H's `mamba_hidden_act`); `None` where the
    /// class fixes SiLU (Zamba2).
    pub act: Option<&'static str>,
    pub groups: (&'static str, u64),
    pub state: (&'static str, u64),
    pub conv: (&'static str, u64),
    pub conv_bias: (&'static str, bool),
    pub bias: (&'static str, bool),
    /// A key that restates expand × hidden (Mamba2 conversions' `intermediate_size`); `None`
    /// where the key is the MLP's.
    pub restated_inner: Option<&'static str>,
    /// A key that gives the inner width itself, with its default; null leaves it to `expand`
    /// (Falcon-H1's `mamba_d_ssm`).
    pub d_ssm: Option<(&'static str, u64)>,
}

impl SsmKeys {
    pub const MAMBA2: SsmKeys = SsmKeys {
        heads: ("num_heads", 128),
        head_dim: ("head_dim", Some(64)),
        expand: Some(("expand", 2)),
        dt_floor: None,
        act: Some("hidden_act"),
        groups: ("n_groups", 8),
        state: ("state_size", 128),
        conv: ("conv_kernel", 4),
        conv_bias: ("use_conv_bias", true),
        bias: ("use_bias", false),
        restated_inner: Some("intermediate_size"),
        d_ssm: None,
    };

    /// Zamba2's: `n_mamba_heads`, the head width derived (`mamba_headdim` restates it), SiLU
    /// fixed, the projections' biases `add_bias_linear`.
    pub const ZAMBA2: SsmKeys = SsmKeys {
        heads: ("n_mamba_heads", 8),
        head_dim: ("mamba_headdim", None),
        expand: Some(("mamba_expand", 2)),
        dt_floor: Some(("time_step_min", 0.001)),
        act: None,
        groups: ("mamba_ngroups", 1),
        state: ("mamba_d_state", 64),
        conv: ("mamba_d_conv", 4),
        conv_bias: ("use_conv_bias", true),
        bias: ("add_bias_linear", false),
        restated_inner: None,
        d_ssm: None,
    };

    /// Bamba's `mamba_*` keys (IBM's hybrids).
    pub const NEMOTRON_H: SsmKeys = SsmKeys {
        heads: ("mamba_num_heads", 128),
        head_dim: ("mamba_head_dim", Some(64)),
        expand: None,
        groups: ("n_groups", 8),
        state: ("ssm_state_size", 128),
        conv: ("conv_kernel", 4),
        conv_bias: ("use_conv_bias", true),
        bias: ("use_bias", false),
        restated_inner: None,
        // transformers 5.25 clamps by `time_step_limit` as Mamba2 does (5.24 floored Δ at
        // `time_step_min`).
        dt_floor: None,
        act: Some("mamba_hidden_act"),
        d_ssm: None,
    };

    pub const BAMBA: SsmKeys = SsmKeys {
        heads: ("mamba_n_heads", 128),
        head_dim: ("mamba_d_head", None),
        expand: Some(("mamba_expand", 2)),
        dt_floor: None,
        act: Some("hidden_act"),
        groups: ("mamba_n_groups", 1),
        state: ("mamba_d_state", 256),
        conv: ("mamba_d_conv", 4),
        conv_bias: ("mamba_conv_bias", true),
        bias: ("mamba_proj_bias", false),
        restated_inner: None,
        d_ssm: None,
    };
    /// Falcon-H1's: Bamba's, with the inner width given by `mamba_d_ssm` (null: expand ×
    /// hidden) and smaller defaults.
    pub const FALCON_H1: SsmKeys = SsmKeys {
        d_ssm: Some(("mamba_d_ssm", 1024)),
        groups: ("mamba_n_groups", 1),
        ..SsmKeys::BAMBA
    };
}

/// The mixer's settings, as `Mamba2Mixer` (and the hybrids' copies of it) read them.
pub(crate) fn ssm(cfg: &Config, hidden: u64, eps: f64, k: &SsmKeys) -> Result<Ssm> {
    let heads = cfg.size(k.heads.0, Some(k.heads.1))?;
    let expand = k
        .expand
        .map(|(key, d)| cfg.size(key, Some(d)).map(|e| (key, e)))
        .transpose()?;
    // The inner width where `d_ssm` or `expand` sets it, and a head's width derived from it.
    let d_ssm = match k.d_ssm {
        Some((key, _)) if cfg.present(key) => cfg.opt_size(key)?.map(|i| (key, i)),
        Some((key, default)) => Some((key, default)),
        None => None,
    };
    let inner = match d_ssm {
        Some((_, i)) => Some(Some(i)),
        None => expand.map(|(_, e)| hidden.checked_mul(e)),
    };
    let derived = inner.flatten().map(|i| i / heads).unwrap_or(0);
    let head_dim = match (cfg.get(k.head_dim.0), k.head_dim.1) {
        // "auto", or absent where the class derives it.
        (Some(v), _) if v.as_str() == Some("auto") => derived,
        (None, None) => derived,
        (_, default) => cfg.size(k.head_dim.0, default)?,
    };
    if let Some((key, i)) = d_ssm {
        if Some(i) != heads.checked_mul(head_dim) {
            return Err(cfg.err(
                k.heads.0,
                format!("is {heads}, with {} {head_dim}; heads × head dim must equal {key} ({i}), the width the mixer's projections share", k.head_dim.0),
            ));
        }
    } else if let (Some((key, e)), Some(inner)) = (expand, inner) {
        if inner != heads.checked_mul(head_dim) {
            return Err(cfg.err(
                k.heads.0,
                format!("is {heads}, with {} {head_dim}; heads × head dim must equal hidden_size × {key} ({hidden} × {e}), the width the mixer's projections share", k.head_dim.0),
            ));
        }
        if let Some(restated) = k.restated_inner {
            if let Some(i) = cfg.opt_size(restated)? {
                // Not a field of the class, but saved by conversions: it restates the inner width.
                if Some(i) != inner {
                    return Err(cfg.err(
                        restated,
                        format!("is {i}; Mamba2 takes its inner width from {key} × hidden_size ({hidden} × {e}) and ignores this key, so a different value describes another model"),
                    ));
                }
            }
        }
    }
    let groups = cfg.size(k.groups.0, Some(k.groups.1))?;
    if !heads.is_multiple_of(groups) {
        return Err(cfg.err(
            k.groups.0,
            format!("is {groups}; it must divide {} ({heads}): each group's B and C serve the heads of one group", k.heads.0),
        ));
    }
    if let Some(key) = k.act {
        silu(cfg, key)?;
    }
    // transformers clamps Δ to this range in a prompt's chunked scan but not in a decoded token's
    // update: only the default, where the two agree, describes one model. A class that clamps
    // to its own floor instead (Nemotron-H) never reads it.
    if k.dt_floor.is_some() {
        cfg.get("time_step_limit");
    } else if let Some(v) = cfg.get("time_step_limit") {
        let pair = v.as_array().filter(|a| a.len() == 2);
        let bounds = match pair {
            Some(a) => Some((
                cfg.extended_float_value("time_step_limit", &a[0])?,
                cfg.extended_float_value("time_step_limit", &a[1])?,
            )),
            None => None,
        };
        if bounds != Some((0.0, f64::INFINITY)) {
            return Err(cfg.err(
                "time_step_limit",
                "must be [0.0, Infinity]; transformers clamps Δ to another range only in a prompt's chunked scan, not when it decodes token by token, so such a model's output depends on how its tokens arrive",
            ));
        }
    }
    Ok(Ssm {
        heads,
        head_dim,
        state: cfg.size(k.state.0, Some(k.state.1))?,
        groups,
        conv_kernel: cfg.size(k.conv.0, Some(k.conv.1))?,
        conv_bias: cfg.flag(k.conv_bias.0, k.conv_bias.1)?,
        bias: cfg.flag(k.bias.0, k.bias.1)?,
        eps,
        dt_floor: match k.dt_floor {
            Some((key, default)) => {
                let f = cfg.float(key, default)?;
                if f < 0.0 {
                    return Err(cfg.err(key, format!("is {f}; it must be 0 or more")));
                }
                f
            }
            None => 0.0,
        },
        gate: SsmGate::NormAfter,
        part_mults: [1.0; 5],
    })
}
