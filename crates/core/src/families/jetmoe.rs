//! JetMoE (`jetmoe`): a mixture of attention heads (each token's router picks `top_k` pairs of
//! query and output projections over one set of K/V heads) and a mixture of MLP experts, both
//! routed by a softmax over the top-k logits, both with an output bias. Defaults follow
//! `JetMoeConfig`.

use super::{experts, layer_count, plain_attention, plain_moe, rope, top_k, RopeDefaults};
use crate::config::Config;
use crate::error::Result;
use crate::spec::*;

pub fn load(cfg: &Config, _model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, "jetmoe", family);
    s.vocab = cfg.size("vocab_size", Some(32_000))?;
    s.hidden = cfg.size("hidden_size", Some(2048))?;
    s.layers = layer_count(cfg, &["num_hidden_layers"], Some(12))?;
    s.context = cfg.size("max_position_embeddings", Some(4096))?;
    let kv = cfg.size("num_key_value_heads", Some(16))?;
    let hd = cfg.size("kv_channels", Some(128))?;
    let e = experts(cfg, "num_local_experts", Some(8))?;
    let k = top_k(cfg, e, Some(2))?;
    // The class sets the query heads itself: each chosen expert brings one head per K/V head.
    let heads = kv.checked_mul(k).ok_or_else(|| {
        cfg.err(
            "num_key_value_heads",
            format!("is {kv}; times num_experts_per_tok ({k}) it overflows"),
        )
    })?;
    s.attn = Attention {
        moa: Some(Moa {
            experts: e,
            top_k: k,
        }),
        ..plain_attention(heads, kv, hd)
    };
    let f = cfg.size("intermediate_size", Some(5632))?;
    s.mlp = Mlp::gated(f, super::act(cfg, "activation_function", "silu")?);
    s.moe = Some(Moe {
        scoring: Scoring::TopkSoftmax,
        storage: ExpertStorage::Stacked {
            out_in: true,
            interleaved: false,
        },
        out_bias: true,
        ..plain_moe(e, k, f)
    });
    s.plan = super::uniform_plan(vec![AttnSpan::Full; s.layers as usize], true);
    // The decoder layers' norms are built with the class's ε of 1e-6 whatever the config says;
    // only the final norm reads rms_norm_eps.
    let eps = cfg.float("rms_norm_eps", 1e-6)?;
    if eps != 1e-6 {
        return Err(cfg.err(
            "rms_norm_eps",
            format!("is {eps}; JetMoE's decoder layers normalize with ε = 1e-6 whatever it says and only the final norm reads it, while anatomy draws one ε for every norm"),
        ));
    }
    s.norm = Norm {
        kind: NormKind::Rms,
        eps,
        unit_offset: false,
        place: NormPlace::Pre,
    };
    s.position = Position::Rope(rope(cfg, &RopeDefaults::new(10_000.0, s.context))?);
    s.tied = cfg.flag("tie_word_embeddings", true)?;
    s.layout = Layout::JetMoe;
    Ok(s)
}
