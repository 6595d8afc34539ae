//! ModernBERT-decoder (`modernbert-decoder`): ModernBERT's encoder layers run causally. A
//! normed embedding, layers whose first skips its attention norm, GeGLU MLPs, every third layer
//! global (RoPE base 160k) and the others sliding over half of `local_attention` (base 10k),
//! LayerNorms without shifts by default, and a prediction head (dense, activation, norm) before
//! the tied decoder.

use super::{layer_count, layer_types, RopeDefaults};
use crate::config::Config;
use crate::error::Result;
use crate::spec::*;

pub fn load(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, model_type, family);
    s.hidden = cfg.size("hidden_size", Some(768))?;
    s.vocab = cfg.size("vocab_size", Some(50368))?;
    s.layers = layer_count(cfg, &["num_hidden_layers"], Some(22))?;
    s.context = cfg.size("max_position_embeddings", Some(8192))?;
    let heads = super::dividing_heads(
        cfg,
        cfg.size("num_attention_heads", Some(12))?,
        "num_attention_heads",
        s.hidden,
        "hidden_size",
    )?;
    let attn_bias = cfg.flag("attention_bias", false)?;
    s.attn = Attention {
        qkv_bias: attn_bias,
        o_bias: attn_bias,
        ..super::plain_attention(heads, heads, s.hidden / heads)
    };
    let act = super::act(cfg, "hidden_activation", "gelu")?;
    s.mlp = Mlp {
        intermediate: cfg.size("intermediate_size", Some(1152))?,
        act,
        gated: true,
        bias: cfg.flag("mlp_bias", false)?,
        fused_gate_up: true,
        sub_norm: false,
        clamp: None,
        scalar: false,
    };
    s.norm = Norm {
        kind: NormKind::Layer {
            bias: cfg.flag("norm_bias", false)?,
        },
        eps: cfg.float("norm_eps", 1e-5)?,
        unit_offset: false,
        place: NormPlace::Pre,
    };
    s.embedding.norm = true;
    s.skip_first_attn_norm = true;
    s.head_transform = Some(HeadTransform {
        act: super::act(cfg, "classifier_activation", "gelu")?,
        bias: cfg.flag("classifier_bias", false)?,
    });
    s.head_bias = cfg.flag("decoder_bias", true)?;
    s.tied = cfg.flag("tie_word_embeddings", true)?;
    // The window is half of `local_attention` (null or 0: none); a saved `sliding_window`, set
    // after the class derives it, wins (−1 for none).
    let half = cfg
        .opt_size("local_attention")?
        .map(|w| w / 2)
        .filter(|w| *w > 0);
    let window = match cfg.get("sliding_window").map(|v| v.as_i64()) {
        None => half,
        Some(Some(w)) if w <= 0 => None,
        Some(Some(_)) => cfg.opt_size("sliding_window")?,
        Some(None) => {
            return Err(cfg.err(
                "sliding_window",
                "must be an integer: the window of the local layers, or -1 for none",
            ))
        }
    };
    let every = cfg.size("global_attn_every_n_layers", Some(3))?;
    let spans = match layer_types(cfg, s.layers, window, false)? {
        Some(spans) => spans,
        None => (0..s.layers)
            .map(|i| match (window, i % every == 0) {
                (Some(w), false) => AttnSpan::Sliding(w),
                (None, _) | (Some(_), true) => AttnSpan::Full,
            })
            .collect(),
    };
    s.position = Position::Rope(rope_of(cfg, s.context)?);
    super::rope_types_present(cfg, &spans)?;
    s.plan = super::uniform_plan(spans, false);
    s.layout = Layout::ModernBertDecoder;
    Ok(s)
}

/// RoPE per layer type: `rope_parameters` with a dict for each, or the bases of
/// `global_rope_theta` (160k) and `local_rope_theta` (10k); `rope_scaling` is refused.
fn rope_of(cfg: &Config, context: u64) -> Result<Rope> {
    if cfg.has("rope_scaling") {
        return Err(cfg.err(
            "rope_scaling",
            "is set; anatomy reads this model type's RoPE from rope_parameters, one dict per layer type",
        ));
    }
    let global = cfg.float("global_rope_theta", 160_000.0)?;
    let local = cfg.float("local_rope_theta", 10_000.0)?;
    let by = super::ByType {
        full: (global, 1.0),
        sliding: (local, 1.0),
        full_proportional: false,
    };
    super::rope_by_type(cfg, &RopeDefaults::new(global, context), by)
}
