//! ZAYA (`zaya`): compressed convolutional attention (`Cca`) in full and sliding-window layers,
//! each with RoPE of its own on half of every head; in every layer a mixture of experts chosen
//! one per token by a router MLP that carries its state from layer to layer, with a class that
//! computes nothing; learned shifts and scales on the embeddings and on both terms of every
//! residual add. Defaults follow `ZayaConfig`.

use super::RopeDefaults;
use super::{experts, freqs, heads, layer_count, plain_attention, plain_moe, pre_rms, HeadDim};
use crate::config::Config;
use crate::error::Result;
use crate::spec::*;

pub fn load(cfg: &Config, _model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, "zaya", family);
    s.vocab = cfg.size("vocab_size", Some(262_272))?;
    s.hidden = cfg.size("hidden_size", Some(2048))?;
    s.layers = layer_count(cfg, &["num_hidden_layers"], Some(40))?;
    s.context = cfg.size("max_position_embeddings", Some(131_072))?;
    let (h, kv, hd) = heads(cfg, s.hidden, Some(8), Some(2), HeadDim::Given(128))?;
    if (kv * hd) % 2 == 1 {
        return Err(cfg.err(
            "head_dim",
            format!("is {hd} with {kv} K/V heads; half the values come from the token and half from the one before it, so their width, {}, must be even", kv * hd),
        ));
    }
    let bias = cfg.flag("attention_bias", false)?;
    let cca = Cca {
        depthwise: cfg.size("cca_time0", Some(2))?,
        grouped: cfg.size("cca_time1", Some(2))?,
    };
    if cca.depthwise > 64 || cca.grouped > 64 {
        return Err(cfg.err(
            "cca_time0",
            format!(
                "is {} (cca_time1 {}); anatomy reads convolutions of up to 64 taps",
                cca.depthwise, cca.grouped
            ),
        ));
    }
    s.attn = Attention {
        qkv_bias: bias,
        o_bias: bias,
        cca: Some(cca),
        ..plain_attention(h, kv, hd)
    };
    s.norm = pre_rms(cfg, 1e-5)?;
    s.embedding.affine = true;
    s.residual = Residual::Affine;
    s.tied = cfg.flag("tie_word_embeddings", true)?;
    s.head_bias = cfg.flag("lm_head_bias", false)?;

    // Every layer a mixture of experts, one chosen per token.
    let e = experts(cfg, "num_experts", Some(16))?;
    let k = cfg.size("num_experts_per_tok", Some(1))?;
    if k != 1 {
        return Err(cfg.err(
            "num_experts_per_tok",
            format!("is {k}; ZAYA's router chooses one expert per token, and its class refuses any other count"),
        ));
    }
    s.mlp = Mlp::gated(0, super::act(cfg, "hidden_act", "silu")?);
    s.moe = Some(Moe {
        router_mlp: Some(cfg.size("router_hidden_size", Some(256))?),
        storage: ExpertStorage::Stacked {
            out_in: true,
            interleaved: false,
        },
        ..plain_moe(e, 1, cfg.size("moe_intermediate_size", Some(2048))?)
    });

    // Layer types: full ("hybrid") or sliding ("hybrid_sliding"), each with RoPE of its own.
    let window = cfg.opt_size("sliding_window")?;
    let kinds = cfg
        .list(
            "layer_types",
            s.layers,
            |v| match v.as_str()? {
                "hybrid" => Some(false),
                "hybrid_sliding" => Some(true),
                _ => None,
            },
            "\"hybrid\" or \"hybrid_sliding\"",
        )?
        .unwrap_or_else(|| vec![false; s.layers as usize]);
    let spans = kinds
        .iter()
        .map(|&sliding| match (sliding, window) {
            (false, _) => Ok(AttnSpan::Full),
            (true, Some(w)) => Ok(AttnSpan::Sliding(w)),
            (true, None) => Err(cfg.err(
                "sliding_window",
                "is missing; layer_types has \"hybrid_sliding\" layers, which attend within it",
            )),
        })
        .collect::<Result<Vec<_>>>()?;
    s.plan = spans
        .iter()
        .map(|&span| LayerPlan::attention(span, true, true))
        .collect();
    s.position = Position::Rope(rope(cfg, s.context, kinds.contains(&true))?);
    s.layout = Layout::Zaya;
    Ok(s)
}

/// RoPE per layer type: `rope_parameters` holds a dict for "hybrid" and one for
/// "hybrid_sliding" (the class's defaults: base 5,000,000 and 10,000, half of each head).
/// Released configs also hold a `rope_type` beside them, which the class deletes.
fn rope(cfg: &Config, context: u64, sliding: bool) -> Result<Rope> {
    let d = RopeDefaults::new(5_000_000.0, context);
    let plain = |theta| RopeFreqs {
        theta,
        scaling: RopeScaling::None,
    };
    let Some(p) = cfg.sub("rope_parameters")? else {
        return Ok(Rope {
            full: plain(5_000_000.0),
            sliding: Some(plain(10_000.0)),
            partial: 0.5,
            sliding_partial: None,
            interleaved: false,
            reversed: false,
            start: 0,
        });
    };
    p.get("rope_type");
    let of = |key: &str| -> Result<(RopeFreqs, f64)> {
        let sub = p.sub(key)?.ok_or_else(|| {
            p.err(
                key,
                "is missing; ZAYA's rotary embedding reads a dict per layer type",
            )
        })?;
        let partial = sub.float("partial_rotary_factor", 1.0)?;
        if !(partial > 0.0 && partial <= 1.0) {
            return Err(sub.err(
                "partial_rotary_factor",
                format!("is {partial}; it must be in (0, 1]"),
            ));
        }
        Ok((freqs(&sub, d.theta, &d, None)?, partial))
    };
    let (full, partial) = of("hybrid")?;
    let (sliding_freqs, sliding_partial) = if sliding || p.present("hybrid_sliding") {
        let (f, sp) = of("hybrid_sliding")?;
        (Some(f), (sp != partial).then_some(sp))
    } else {
        (None, None)
    };
    Ok(Rope {
        full,
        sliding: sliding_freqs,
        partial,
        sliding_partial,
        interleaved: false,
        reversed: false,
        start: 0,
    })
}
