//! NanoChat (`nanochat`): Llama's layout with every norm an RMSNorm without a weight (one also
//! right after the embedding), a weightless RMS norm on each rotated Q and K head, a plain ReLU²
//! MLP, RoPE that rotates backwards (its rotate_half is (x₂, −x₁)), and Gemma 2's final logit
//! softcap. Defaults follow `NanoChatConfig`.

use super::llama::{self, Bias, Defaults, LlamaLike};
use crate::config::Config;
use crate::error::Result;
use crate::spec::*;

const NANOCHAT: LlamaLike = LlamaLike {
    mlp_bias: Bias::Never,
    norm: NormKind::PlainRms,
    qk_norm: QkNorm::L2,
    gated: false,
    layout: Layout::NanoChat,
    ..LlamaLike::llama(Defaults {
        vocab: 50304,
        hidden: 768,
        intermediate: 8192,
        layers: 12,
        heads: 6,
        kv_heads: None,
        head_dim: super::HeadDim::Divide,
        context: 2048,
        eps: 1e-6,
        theta: 10_000.0,
        tied: false,
        act: "relu2",
    })
};

pub fn load(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = llama::load(cfg, &NANOCHAT, model_type, family, name)?;
    s.embedding.norm = true;
    if let Position::Rope(r) = &mut s.position {
        r.reversed = true;
    }
    s.final_softcap = if cfg.present("final_logit_softcapping") {
        cfg.opt_float("final_logit_softcapping")?
    } else {
        Some(15.0)
    };
    Ok(s)
}
