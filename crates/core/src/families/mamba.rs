//! Mamba (`mamba`) and Falcon-Mamba (`falcon_mamba`): every layer an RMS norm and Mamba's
//! selective scan, added to the stream, with no attention, no FFN and no positions;
//! Falcon-Mamba RMS-normalizes the step, B and C without weights. Defaults follow `MambaConfig`
//! and `FalconMambaConfig`.

use super::layer_count;
use crate::config::Config;
use crate::error::Result;
use crate::spec::*;

pub fn load(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, model_type, family);
    s.vocab = cfg.size("vocab_size", Some(50_280))?;
    s.hidden = cfg.size("hidden_size", Some(768))?;
    s.layers = layer_count(cfg, &["num_hidden_layers"], Some(32))?;
    // No position limit of its own: the state carries any length. Drawn at the length the
    // tests and `stats` use for attention models' defaults.
    s.context = 4096;
    let eps = cfg.float("layer_norm_epsilon", 1e-5)?;
    let expand = cfg.size("expand", Some(2))?;
    let inner = s.hidden.checked_mul(expand).ok_or_else(|| {
        cfg.err(
            "expand",
            format!("is {expand}; times hidden_size it overflows"),
        )
    })?;
    if let Some(i) = cfg.opt_size("intermediate_size")? {
        // Saved configs hold the width the class derives.
        if i != inner {
            return Err(cfg.err(
                "intermediate_size",
                format!(
                    "is {i}; the class sets it to expand × hidden_size ({inner}) whatever it says"
                ),
            ));
        }
    }
    let dt_rank = match cfg.get("time_step_rank") {
        Some(v) if v.as_str() == Some("auto") => s.hidden.div_ceil(16),
        None => s.hidden.div_ceil(16),
        Some(_) => cfg.size("time_step_rank", None)?,
    };
    let act = cfg.string("hidden_act", "silu")?;
    if act != "silu" && act != "swish" {
        return Err(cfg.err(
            "hidden_act",
            format!("is {act:?}; anatomy draws Mamba's convolution and gate with SiLU (\"silu\")"),
        ));
    }
    s.s6 = Some(S6 {
        inner,
        state: cfg.size("state_size", Some(16))?,
        dt_rank,
        conv_kernel: cfg.size("conv_kernel", Some(4))?,
        conv_bias: cfg.flag("use_conv_bias", true)?,
        bias: cfg.flag("use_bias", false)?,
        bcdt_norm: if model_type == "falcon_mamba" {
            Some(cfg.float("mixer_rms_eps", 1e-6)?)
        } else {
            None
        },
    });
    s.norm = Norm {
        kind: NormKind::Rms,
        eps,
        unit_offset: false,
        place: NormPlace::Pre,
    };
    s.position = Position::None;
    s.plan = (0..s.layers)
        .map(|_| LayerPlan {
            mixer: Mixer::Mamba,
            rope: false,
            ffn: Ffn::None,
        })
        .collect();
    s.tied = cfg.flag("tie_word_embeddings", true)?;
    s.layout = Layout::Mamba2;
    Ok(s)
}
