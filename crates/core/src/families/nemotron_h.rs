//! Nemotron-H (`nemotron_h`, NVIDIA Nemotron-H and Nemotron 3): every layer is one sublayer
//! after an RMS norm, added to the stream: Mamba2 (M), attention without positions (*), a
//! plain ReLU² MLP (-), or a mixture of ReLU² experts chosen by sigmoid scores with a correction
//! bias, beside a shared expert (E). `layers_block_type` (or the older `hybrid_override_pattern`)
//! gives each layer's. Defaults follow `NemotronHConfig`.

use super::mamba2::{ssm, SsmKeys};
use super::{experts, plain_attention, plain_moe, top_k};
use crate::config::Config;
use crate::error::Result;
use crate::spec::*;

pub fn load(cfg: &Config, _model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, "nemotron_h", family);
    s.vocab = cfg.size("vocab_size", Some(131_072))?;
    s.hidden = cfg.size("hidden_size", Some(4096))?;
    let kinds = layer_kinds(cfg)?;
    s.layers = kinds.len() as u64;
    s.context = cfg.size("max_position_embeddings", Some(4096))?;
    let eps = cfg.float("layer_norm_epsilon", 1e-5)?;
    s.norm = Norm {
        kind: NormKind::Rms,
        eps,
        unit_offset: false,
        place: NormPlace::Pre,
    };
    // Nemotron-H's attention rotates nothing: order comes from its Mamba2 layers.
    s.position = Position::None;
    let heads = cfg.size("num_attention_heads", Some(32))?;
    let kv = cfg.size("num_key_value_heads", Some(8))?;
    if !heads.is_multiple_of(kv) {
        return Err(cfg.err(
            "num_key_value_heads",
            format!("is {kv}; it must divide num_attention_heads ({heads})"),
        ));
    }
    s.attn = plain_attention(heads, kv, cfg.size("head_dim", Some(128))?);
    // Its projections have no biases whatever these say; a window is never applied.
    for (key, off) in [("attention_bias", false)] {
        if cfg.flag(key, off)? {
            return Err(cfg.err(key, "is true, but Nemotron-H's attention projections have no biases whatever it says; a checkpoint with them is another model"));
        }
    }
    if cfg.opt_size("sliding_window")?.is_some() {
        return Err(cfg.err(
            "sliding_window",
            "is set, but Nemotron-H's attention sees every earlier token whatever it says; give null",
        ));
    }
    s.mlp = Mlp {
        intermediate: cfg.size("intermediate_size", Some(21_504))?,
        act: super::act(cfg, "mlp_hidden_act", "relu2")?,
        gated: false,
        bias: cfg.flag("mlp_bias", false)?,
        fused_gate_up: false,
        sub_norm: false,
        clamp: None,
        scalar: false,
    };
    if kinds.contains(&Kind::Moe) {
        let e = experts(cfg, "n_routed_experts", Some(8))?;
        let k = top_k(cfg, e, Some(2))?;
        if cfg.opt_size("moe_latent_size")?.is_some() {
            return Err(cfg.err(
                "moe_latent_size",
                "is set: anatomy does not draw the experts' latent projections yet; give null",
            ));
        }
        let groups = cfg.size("n_group", Some(1))?;
        let topk_group = cfg.size("topk_group", Some(1))?;
        if !e.is_multiple_of(groups) || topk_group > groups {
            return Err(cfg.err(
                "n_group",
                format!("is {groups} with topk_group {topk_group}; it must divide n_routed_experts ({e}) and be at least topk_group"),
            ));
        }
        s.moe = Some(Moe {
            shared_experts: 1,
            shared_intermediate: cfg.size("moe_shared_expert_intermediate_size", Some(7688))?,
            scoring: Scoring::Sigmoid,
            norm_topk_prob: cfg.flag("norm_topk_prob", true)?,
            correction_bias: true,
            n_group: groups,
            topk_group,
            routed_scaling: cfg.float("routed_scaling_factor", 1.0)?,
            ..plain_moe(e, k, cfg.size("moe_intermediate_size", Some(7688))?)
        });
    } else {
        // Read all the same: a config without MoE layers still names its experts' settings.
        for key in [
            "n_routed_experts",
            "num_experts_per_tok",
            "moe_intermediate_size",
            "moe_shared_expert_intermediate_size",
            "moe_latent_size",
            "n_group",
            "topk_group",
            "norm_topk_prob",
            "routed_scaling_factor",
        ] {
            cfg.get(key);
        }
    }
    let has_mamba = kinds.contains(&Kind::Mamba);
    let m = ssm(cfg, s.hidden, eps, &SsmKeys::NEMOTRON_H)?;
    s.recurrent = has_mamba.then_some(Recurrent::Mamba2(m));
    s.plan = kinds
        .iter()
        .map(|k| {
            let (mixer, ffn) = match k {
                Kind::Mamba => (Mixer::Mamba2, Ffn::None),
                Kind::Attention => (Mixer::Attention(AttnSpan::Full), Ffn::None),
                Kind::Mlp => (Mixer::None, Ffn::Dense),
                Kind::Moe => (Mixer::None, Ffn::Moe),
            };
            LayerPlan {
                mixer,
                rope: false,
                ffn,
            }
        })
        .collect();
    if cfg.count("num_nextn_predict_layers", 0)? == 0 {
        cfg.get("mtp_layers_block_type");
        cfg.get("mtp_hybrid_override_pattern");
    } else {
        return Err(cfg.err(
            "num_nextn_predict_layers",
            "is more than 0: anatomy does not draw Nemotron-H's multi-token-prediction layers yet; give 0",
        ));
    }
    // NemotronHMoE builds one shared expert whatever this says.
    if cfg.size("n_shared_experts", Some(1))? != 1 {
        return Err(cfg.err(
            "n_shared_experts",
            "must be 1: Nemotron-H builds one shared expert whatever it says",
        ));
    }
    // Published configs restate the norms' ε under a name the class does not have.
    if let Some(e) = cfg.opt_float("norm_eps")? {
        if e != eps {
            return Err(cfg.err(
                "norm_eps",
                format!("is {e}, but Nemotron-H's norms use layer_norm_epsilon ({eps}) and never read this key"),
            ));
        }
    }
    s.tied = cfg.flag("tie_word_embeddings", false)?;
    s.layout = Layout::NemotronH;
    Ok(s)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Mamba,
    Attention,
    Mlp,
    Moe,
}

/// Each layer's kind: `layers_block_type` (also read as `layer_types`), else the older
/// `hybrid_override_pattern` (M, *, -, E), else the class's four. The layer count is the list's;
/// a `num_hidden_layers` that disagrees is refused (transformers warns and ignores it).
fn layer_kinds(cfg: &Config) -> Result<Vec<Kind>> {
    let listed = cfg.list_any(
        "layers_block_type",
        |v| match v.as_str()? {
            "linear_attention" | "mamba" => Some(Kind::Mamba),
            "full_attention" | "attention" => Some(Kind::Attention),
            "mlp" => Some(Kind::Mlp),
            "moe" => Some(Kind::Moe),
            _ => None,
        },
        "\"linear_attention\", \"full_attention\", \"mlp\" or \"moe\"",
    )?;
    let pattern = cfg.opt_string("hybrid_override_pattern")?;
    let kinds = match (listed, pattern) {
        (Some(k), _) => k,
        (None, Some(p)) => p
            .chars()
            .map(|c| match c {
                'M' => Ok(Kind::Mamba),
                '*' => Ok(Kind::Attention),
                '-' => Ok(Kind::Mlp),
                'E' => Ok(Kind::Moe),
                other => Err(cfg.err(
                    "hybrid_override_pattern",
                    format!("holds {other:?}; each layer is M (Mamba2), * (attention), - (MLP) or E (experts)"),
                )),
            })
            .collect::<Result<Vec<_>>>()?,
        (None, None) => vec![Kind::Mamba, Kind::Moe, Kind::Attention, Kind::Mlp],
    };
    super::layers_listed(
        cfg,
        kinds,
        "layers_block_type",
        "the layer pattern",
        "Nemotron-H",
    )
}
