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
    s.ssm = Some(ssm(cfg, s.hidden, eps)?);
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

/// The mixer's settings, as `Mamba2Mixer` reads them (the same keys in every family that
/// builds one).
pub(crate) fn ssm(cfg: &Config, hidden: u64, eps: f64) -> Result<Ssm> {
    let heads = cfg.size("num_heads", Some(128))?;
    let head_dim = cfg.size("head_dim", Some(64))?;
    let expand = cfg.size("expand", Some(2))?;
    let inner = hidden.checked_mul(expand);
    if inner != heads.checked_mul(head_dim) {
        return Err(cfg.err(
            "num_heads",
            format!("is {heads}, with head_dim {head_dim}; num_heads × head_dim must equal hidden_size × expand ({hidden} × {expand}), the width the mixer's projections share"),
        ));
    }
    if let Some(i) = cfg.opt_size("intermediate_size")? {
        // Not a Mamba2Config field, but saved by conversions: it restates expand × hidden_size.
        if Some(i) != inner {
            return Err(cfg.err(
                "intermediate_size",
                format!("is {i}; Mamba2 takes its inner width from expand × hidden_size ({hidden} × {expand}) and ignores this key, so a different value describes another model"),
            ));
        }
    }
    let groups = cfg.size("n_groups", Some(8))?;
    if !heads.is_multiple_of(groups) {
        return Err(cfg.err(
            "n_groups",
            format!("is {groups}; it must divide num_heads ({heads}): each group's B and C serve num_heads / n_groups heads"),
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
        state: cfg.size("state_size", Some(128))?,
        groups,
        conv_kernel: cfg.size("conv_kernel", Some(4))?,
        conv_bias: cfg.flag("use_conv_bias", true)?,
        bias: cfg.flag("use_bias", false)?,
        eps,
    })
}
