//! HRM-Text (`hrm_text`): Llama's layers with full multi-head attention, an elementwise sigmoid
//! output gate and weightless RMS norms, in two stacks that run in a nested loop
//! (`Hierarchy`); the embeddings scaled by `embedding_scale`. Defaults follow `HrmTextConfig`.

use super::llama::{self, LlamaLike};
use crate::config::Config;
use crate::error::Result;
use crate::spec::{GateStore, Hierarchy, Layout, NormKind, OutGate, Qkv, Spec};

const HRM: LlamaLike = LlamaLike {
    mha_only: true,
    norm: NormKind::PlainRms,
    // Its checkpoints store the gate, Q, K and V in one tensor, and the MLP's gate and up in
    // one; transformers splits only their weights, so biases have no stored form.
    qkv: Qkv::Stacked,
    fused_gate_up: true,
    refuse_when_true: &["attention_bias", "mlp_bias"],
    out_gate: Some(OutGate {
        softplus: false,
        per_head: false,
        bias: false,
        stored: GateStore::BeforeQkv,
    }),
    layout: Layout::Hrm,
    ..LlamaLike::llama(super::registry::d(
        151_808,
        1536,
        4096,
        16,
        12,
        None,
        Some(128),
        2048,
        1e-6,
        10_000.0,
        false,
    ))
};

pub fn load(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = llama::load(cfg, &HRM, model_type, family, name)?;
    let high = cfg.size("H_cycles", Some(2))?;
    let low = cfg.size("L_cycles", Some(3))?;
    let visits = high
        .checked_mul(low + 1)
        .filter(|&v| v <= crate::config::MAX_LAYERS)
        .ok_or_else(|| {
            cfg.err(
                "H_cycles",
                format!("is {high}, with L_cycles {low}: H_cycles × (L_cycles + 1) stack visits must be at most {}", crate::config::MAX_LAYERS),
            )
        })?;
    // The class keeps the count per stack in `num_layers_per_stack` and overwrites
    // `num_hidden_layers` with it × the stack visits, its cache's slots; a config without the
    // former gives the count per stack in the latter.
    let per_stack = match cfg.opt_size("num_layers_per_stack")? {
        Some(n) if cfg.has("num_hidden_layers") && n.checked_mul(visits) != Some(s.layers) => {
            return Err(cfg.err(
                "num_hidden_layers",
                format!(
                    "is {}, but num_layers_per_stack {n} × H_cycles {high} × (L_cycles {low} + 1) is {}: transformers sizes its cache by num_hidden_layers, one slot per layer and visit; give the product",
                    s.layers,
                    n as u128 * visits as u128
                ),
            ))
        }
        Some(n) => n,
        None => s.layers,
    };
    if per_stack * 2 > crate::config::MAX_LAYERS {
        return Err(cfg.err(
            "num_layers_per_stack",
            format!(
                "is {per_stack}; give 1 to {} layers per stack",
                crate::config::MAX_LAYERS / 2
            ),
        ));
    }
    s.layers = 2 * per_stack;
    s.plan = vec![s.plan[0].clone(); s.layers as usize];
    s.embedding.multiplier = match cfg.opt_float("embedding_scale")? {
        Some(x) => x,
        // The class's default: 1 / initializer_range.
        None => 1.0 / cfg.float("initializer_range", 0.02)?,
    };
    if !(s.embedding.multiplier.is_finite()) {
        return Err(cfg.err(
            "embedding_scale",
            "is not finite (or initializer_range is 0 without it); give a finite scale",
        ));
    }
    s.stream = crate::spec::Stream::Hierarchy(Hierarchy {
        per_stack,
        high_cycles: high,
        low_cycles: low,
    });
    Ok(s)
}
