//! Mamba2 (`mamba2`): every layer an RMS norm and Mamba2's state-space mixer, added to the
//! stream, with no attention, no FFN and no positions. Defaults follow `Mamba2Config`.

use super::layer_count;
use crate::config::Config;
use crate::error::Result;
use crate::spec::*;

pub fn load(cfg: &Config, _model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, "mamba2", family);
    s.vocab = cfg.size("vocab_size", Some(32_768))?;
    s.hidden = cfg.size("hidden_size", Some(4096))?;
    s.layers = layer_count(cfg, &["num_hidden_layers"], Some(64))?;
    // No position limit of its own: the state carries any length. Drawn at the length the
    // tests and `stats` use for attention models' defaults.
    s.context = 4096;
    let eps = cfg.float("layer_norm_epsilon", 1e-5)?;
    s.ssm = Some(ssm(cfg, s.hidden, eps, &SsmKeys::MAMBA2)?);
    s.norm = Norm {
        kind: NormKind::Rms,
        eps,
        unit_offset: false,
        place: NormPlace::Pre,
    };
    s.position = Position::None;
    s.plan = (0..s.layers)
        .map(|_| LayerPlan {
            mixer: Mixer::Mamba2,
            rope: false,
            ffn: Ffn::None,
        })
        .collect();
    s.tied = cfg.flag("tie_word_embeddings", false)?;
    s.layout = Layout::Mamba2;
    Ok(s)
}

/// Where a family's config keeps the Mamba2 mixer's settings, and its class defaults.
#[derive(Debug, Clone, Copy)]
pub struct SsmKeys {
    pub heads: (&'static str, u64),
    /// `None`: derived, expand × hidden / heads ("auto" in Bamba's config).
    pub head_dim: (&'static str, Option<u64>),
    pub expand: (&'static str, u64),
    pub groups: (&'static str, u64),
    pub state: (&'static str, u64),
    pub conv: (&'static str, u64),
    pub conv_bias: (&'static str, bool),
    pub bias: (&'static str, bool),
    /// A key that restates expand × hidden (Mamba2 conversions' `intermediate_size`); `None`
    /// where the key is the MLP's.
    pub restated_inner: Option<&'static str>,
}

impl SsmKeys {
    pub const MAMBA2: SsmKeys = SsmKeys {
        heads: ("num_heads", 128),
        head_dim: ("head_dim", Some(64)),
        expand: ("expand", 2),
        groups: ("n_groups", 8),
        state: ("state_size", 128),
        conv: ("conv_kernel", 4),
        conv_bias: ("use_conv_bias", true),
        bias: ("use_bias", false),
        restated_inner: Some("intermediate_size"),
    };

    /// Bamba's `mamba_*` keys (IBM's hybrids).
    pub const BAMBA: SsmKeys = SsmKeys {
        heads: ("mamba_n_heads", 128),
        head_dim: ("mamba_d_head", None),
        expand: ("mamba_expand", 2),
        groups: ("mamba_n_groups", 1),
        state: ("mamba_d_state", 256),
        conv: ("mamba_d_conv", 4),
        conv_bias: ("mamba_conv_bias", true),
        bias: ("mamba_proj_bias", false),
        restated_inner: None,
    };
}

/// The mixer's settings, as `Mamba2Mixer` (and the hybrids' copies of it) read them.
pub(crate) fn ssm(cfg: &Config, hidden: u64, eps: f64, k: &SsmKeys) -> Result<Ssm> {
    let heads = cfg.size(k.heads.0, Some(k.heads.1))?;
    let expand = cfg.size(k.expand.0, Some(k.expand.1))?;
    let inner = hidden.checked_mul(expand);
    let derived = inner.map(|i| i / heads).filter(|_| heads > 0);
    let head_dim = match (cfg.get(k.head_dim.0), k.head_dim.1) {
        // "auto", or absent where the class derives it.
        (Some(v), _) if v.as_str() == Some("auto") => derived.unwrap_or(0),
        (None, None) => derived.unwrap_or(0),
        (_, default) => cfg.size(k.head_dim.0, default)?,
    };
    if inner != heads.checked_mul(head_dim) {
        return Err(cfg.err(
            k.heads.0,
            format!("is {heads}, with {} {head_dim}; heads × head dim must equal hidden_size × {} ({hidden} × {expand}), the width the mixer's projections share", k.head_dim.0, k.expand.0),
        ));
    }
    if let Some(key) = k.restated_inner {
        if let Some(i) = cfg.opt_size(key)? {
            // Not a field of the class, but saved by conversions: it restates the inner width.
            if Some(i) != inner {
                return Err(cfg.err(
                    key,
                    format!("is {i}; Mamba2 takes its inner width from {} × hidden_size ({hidden} × {expand}) and ignores this key, so a different value describes another model", k.expand.0),
                ));
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
    let act = cfg.string("hidden_act", "silu")?;
    if act != "silu" && act != "swish" {
        return Err(cfg.err(
            "hidden_act",
            format!("is {act:?}; anatomy draws Mamba2's convolution with SiLU (\"silu\"), the activation its scan was built around"),
        ));
    }
    // transformers clamps Δ to this range in a prompt's chunked scan but not in a decoded token's
    // update: only the default, where the two agree, describes one model.
    if let Some(v) = cfg.get("time_step_limit") {
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
    })
}
