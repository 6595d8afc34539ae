//! RWKV-4 (`rwkv`): every layer LayerNorm'd time mixing (the WKV recurrence over a token-shifted
//! input) and channel mixing (a squared-ReLU MLP over a token-shifted input, gated by σ(r)),
//! each added to the stream; the embeddings LayerNorm'd once (layer 0's `pre_ln`). No attention
//! and no positions. Defaults follow `RwkvConfig`.

use super::layer_count;
use crate::config::Config;
use crate::error::Result;
use crate::spec::*;

pub fn load(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, model_type, family);
    s.vocab = cfg.size("vocab_size", Some(50_277))?;
    s.hidden = cfg.size("hidden_size", Some(4096))?;
    s.layers = layer_count(cfg, &["num_hidden_layers"], Some(32))?;
    // The length it was trained at (the CUDA kernel's limit); the CPU recurrence has none.
    s.context = cfg.size("context_length", Some(1024))?;
    let eps = cfg.float("layer_norm_epsilon", 1e-5)?;
    // Its final norm is built at LayerNorm's default ε, whatever the config's.
    if eps != 1e-5 {
        return Err(cfg.err(
            "layer_norm_epsilon",
            format!("is {eps}; the final ln_out keeps LayerNorm's 1e-5 whatever it says, and anatomy draws one ε for every norm of the model, so it must be 1e-5"),
        ));
    }
    s.norm = Norm {
        kind: NormKind::Layer { bias: true },
        eps,
        unit_offset: false,
        place: NormPlace::Pre,
    };
    s.embedding.norm = true;
    s.position = Position::None;
    s.tied = cfg.flag("tie_word_embeddings", false)?;
    let size_or = |key: &str, default: u64| -> Result<u64> {
        // null: the class fills in its default.
        Ok(cfg.opt_size(key)?.unwrap_or(default))
    };
    s.recurrent = Some(Recurrent::Rwkv(Rwkv {
        attn: size_or("attention_hidden_size", s.hidden)?,
        rescale_every: cfg.count("rescale_every", 6)?,
    }));
    // The channel mixing's key projection and its squared ReLU (its σ(r) gate is its own).
    s.mlp = Mlp {
        intermediate: size_or("intermediate_size", 4 * s.hidden)?,
        act: Act::Relu2,
        gated: false,
        bias: false,
        fused_gate_up: false,
        sub_norm: false,
        clamp: None,
        scalar: false,
    };
    s.plan = (0..s.layers)
        .map(|_| LayerPlan {
            mixer: Mixer::Rwkv,
            rope: false,
            ffn: Ffn::ChannelMix,
        })
        .collect();
    s.layout = Layout::Rwkv;
    Ok(s)
}
