//! Gemma 3n's language model (`gemma3n_text`). Gemma 3's local and global layers and sandwich
//! norms (plain weights), per-head RMS norms on Q and K and a weightless one on V, scores
//! unscaled, the last `num_kv_shared_layers` reusing keys and values, and per-layer embeddings,
//! with three mechanisms of its own: alternating updates over several versions of the stream
//! (AltUp), a low-rank branch beside each attention (LAuReL), and a Gaussian top-k on the MLP
//! gate of the first layers (activation sparsity). Defaults follow `Gemma3nTextConfig`.

use super::{heads, layer_count, layer_types, rope};
use super::{HeadDim, RopeDefaults};
use crate::config::Config;
use crate::error::Result;
use crate::layers::LayerSet;
use crate::spec::*;

pub fn load(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, model_type, family);
    s.hidden = cfg.size("hidden_size", Some(2048))?;
    s.vocab = cfg.size("vocab_size", Some(262_400))?;
    s.layers = layer_count(cfg, &["num_hidden_layers"], Some(35))?;
    s.context = cfg.size("max_position_embeddings", Some(32_768))?;
    let (h, kv, hd) = heads(cfg, s.hidden, Some(8), Some(2), HeadDim::Given(256))?;
    if !s.hidden.is_multiple_of(h) {
        return Err(cfg.err(
            "hidden_size",
            format!(
                "is {}, not a multiple of num_attention_heads ({h}); Gemma3nTextConfig requires it",
                s.hidden
            ),
        ));
    }
    s.attn = super::gemma4::normed_attention(cfg, h, kv, hd)?;
    // Always on: the class types it a float, and refuses null.
    if cfg.present("final_logit_softcapping") && !cfg.has("final_logit_softcapping") {
        return Err(cfg.err(
            "final_logit_softcapping",
            "is null; Gemma3nTextConfig requires a number (Gemma 3n always caps its logits)",
        ));
    }
    s.final_softcap = Some(cfg.float("final_logit_softcapping", 30.0)?);
    let widths = intermediate_sizes(cfg, s.layers)?;
    s.mlp = Mlp::gated(
        widths[0],
        super::act(cfg, "hidden_activation", "gelu_pytorch_tanh")?,
    );
    let mut others: Vec<u64> = widths.iter().copied().filter(|&w| w != widths[0]).collect();
    others.sort_unstable();
    others.dedup();
    s.mlp_widths = others
        .into_iter()
        .map(|w| (LayerSet::from_fn(s.layers, |b| widths[b as usize] == w), w))
        .collect();
    s.embedding.scale_by_sqrt_hidden = true;
    s.norm = super::gemma4::sandwich_rms(cfg)?;
    let window = super::window(cfg, Some(512))?.ok_or_else(|| {
        cfg.err(
            "sliding_window",
            "is null; Gemma 3n's local layers need a window size (a positive integer)",
        )
    })?;
    let spans = match layer_types(cfg, s.layers, Some(window), false)? {
        Some(spans) => spans,
        // Four local layers to each global one.
        None => (0..s.layers)
            .map(|i| {
                if (i + 1) % 5 == 0 {
                    AttnSpan::Full
                } else {
                    AttnSpan::Sliding(window)
                }
            })
            .collect(),
    };
    s.plan = super::uniform_plan(spans.clone(), false);
    // A layer type without its dict gets the class's (`convert_rope_params_to_dict` fills it).
    s.position = Position::Rope(rope_of(cfg, s.context)?);
    s.tied = cfg.flag("tie_word_embeddings", true)?;

    // The layers that reuse keys and values: the same attention, projecting queries alone. (Each
    // reads the last layer of its own span kind that projects its own, `Spec::kv_source`.)
    let shared = super::gemma4::shared_layers(cfg, &spans, 15)?;
    if !shared.is_empty() {
        let a = Attention {
            shares_kv: true,
            ..s.attn.clone()
        };
        s.layer_attn = vec![(shared, a)];
    }

    s.per_layer_input = Some(PerLayerInput {
        clamp_ids: true,
        width: cfg.size("hidden_size_per_layer_input", Some(256))?,
        vocab: cfg.size("vocab_size_per_layer_input", Some(262_144))?,
    });
    let streams = cfg.size("altup_num_inputs", Some(4))?;
    if streams > 64 {
        return Err(cfg.err(
            "altup_num_inputs",
            format!("is {streams}; anatomy reads up to 64 AltUp streams"),
        ));
    }
    let active = cfg.count("altup_active_idx", 0)?;
    if active >= streams {
        return Err(cfg.err(
            "altup_active_idx",
            format!(
                "is {active}; it must name one of the {streams} AltUp streams (0 to {})",
                streams - 1
            ),
        ));
    }
    s.stream = crate::spec::Stream::AltUp(AltUp {
        streams,
        active,
        correct_scale: cfg.flag("altup_correct_scale", true)?,
    });
    s.laurel = Some(cfg.size("laurel_rank", Some(64))?);
    s.sparsity = sparsity(cfg, s.layers)?;
    s.layout = Layout::Gemma3n;
    Ok(s)
}

/// `intermediate_size`: one width for every layer, or a list of one per layer.
fn intermediate_sizes(cfg: &Config, layers: u64) -> Result<Vec<u64>> {
    if let Some(serde_json::Value::Array(_)) = cfg.get("intermediate_size") {
        let width = |v: &serde_json::Value| {
            v.as_u64()
                .filter(|&w| w > 0 && w <= crate::config::MAX_SIZE)
        };
        return Ok(cfg
            .list("intermediate_size", layers, width, "a positive width")?
            .expect("an array, read above"));
    }
    Ok(vec![
        cfg.size("intermediate_size", Some(16_384))?;
        layers as usize
    ])
}

/// `activation_sparsity_pattern`: the fraction of each layer's MLP gate dropped (0: none);
/// without it, 0.95 in the first 10 layers of a model with more than 10.
fn sparsity(cfg: &Config, layers: u64) -> Result<Vec<(LayerSet, f64)>> {
    let key = "activation_sparsity_pattern";
    let fraction = |v: &serde_json::Value| v.as_f64().filter(|p| (0.0..1.0).contains(p));
    let per_layer = match cfg.list(key, layers, fraction, "a fraction in [0, 1)")? {
        Some(p) => p,
        None if cfg.has(key) => {
            return Err(cfg.err(
                key,
                format!("must be a list of one fraction in [0, 1) per layer ({layers})"),
            ))
        }
        None => {
            let sparse = if layers > 10 { 10 } else { 0 };
            (0..layers)
                .map(|b| if b < sparse { 0.95 } else { 0.0 })
                .collect()
        }
    };
    let mut values: Vec<f64> = per_layer.iter().copied().filter(|&p| p > 0.0).collect();
    values.sort_by(f64::total_cmp);
    values.dedup();
    Ok(values
        .into_iter()
        .map(|p| (LayerSet::from_fn(layers, |b| per_layer[b as usize] == p), p))
        .collect())
}

/// RoPE by layer type: `rope_parameters` with a dict for each (the local one falling back on
/// `rope_local_base_freq`, the global one on `rope_theta`), or those two bases.
fn rope_of(cfg: &Config, context: u64) -> Result<Rope> {
    let mut r = rope(cfg, &RopeDefaults::new(1_000_000.0, context))?;
    let local = cfg.float("rope_local_base_freq", 10_000.0)?;
    let given = cfg
        .sub("rope_parameters")?
        .and_then(|p| p.sub("sliding_attention").ok().flatten())
        .is_some_and(|s| s.has("rope_theta"));
    match r.sliding.as_mut() {
        Some(f) if !given => f.theta = local,
        Some(_) => {}
        None => {
            r.sliding = Some(RopeFreqs {
                theta: local,
                scaling: RopeScaling::None,
            })
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use crate::spec::Position;

    /// `Gemma3nTextConfig` fills a layer type `rope_parameters` leaves out with its defaults: the
    /// full layers' base from `rope_theta` (10⁶), the sliding layers' from
    /// `rope_local_base_freq` (10⁴), as transformers 5.24 prints them for these two configs.
    #[test]
    fn a_missing_layer_type_gets_the_class_rope() {
        let bases = |rope: &str| {
            let json = format!(r#"{{"model_type": "gemma3n_text", "rope_parameters": {rope}}}"#);
            let spec = crate::families::load_json("config.json", &json, "t", false).unwrap();
            let Position::Rope(r) = spec.position else {
                panic!("Gemma 3n rotates")
            };
            (r.full.theta, r.sliding.map(|s| s.theta))
        };
        assert_eq!(
            bases(r#"{"full_attention": {"rope_type": "default", "rope_theta": 500000.0}}"#),
            (500_000.0, Some(10_000.0))
        );
        assert_eq!(
            bases(r#"{"sliding_attention": {"rope_type": "default", "rope_theta": 20000.0}}"#),
            (1_000_000.0, Some(20_000.0))
        );
    }
}
