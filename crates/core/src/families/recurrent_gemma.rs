//! RecurrentGemma (`recurrent_gemma`, Griffin): residual blocks whose temporal mixer is, by
//! `block_types` cycled over the layers, Griffin's recurrent block (a convolution and the
//! RG-LRU) or local attention (MQA-style heads, half of each rotated, a window of
//! `attention_window_size`); each block then a gated GELU MLP of half `intermediate_size`, with
//! biases. Gemma's (1 + w) RMS norms, its embeddings scaled by √hidden as rounded to bfloat16,
//! tied head, logits soft-capped. Defaults follow `RecurrentGemmaConfig`.

use super::{heads, layer_count, plain_attention, rope, HeadDim, RopeDefaults};
use crate::config::Config;
use crate::error::Result;
use crate::spec::*;

pub fn load(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, model_type, family);
    s.vocab = cfg.size("vocab_size", Some(256_000))?;
    s.hidden = cfg.size("hidden_size", Some(2560))?;
    s.layers = layer_count(cfg, &["num_hidden_layers"], Some(26))?;
    // No position limit of its own (the recurrence carries any length, the attention is local):
    // drawn at the length `stats` uses for the recurrent models.
    s.context = 4096;
    s.norm = Norm {
        kind: NormKind::Rms,
        eps: cfg.float("rms_norm_eps", 1e-6)?,
        unit_offset: true,
        place: NormPlace::Pre,
    };
    s.tied = cfg.flag("tie_word_embeddings", true)?;
    // The class multiplies by √hidden held in bfloat16.
    s.embedding.multiplier = half::bf16::from_f64((s.hidden as f64).sqrt()).to_f64();
    let (h, kv, given_hd) = heads(cfg, s.hidden, Some(10), None, HeadDim::Floor)?;
    // The class sets head_dim to hidden_size / heads whatever a saved config restates.
    let hd = s.hidden / h;
    if given_hd != hd {
        return Err(cfg.err(
            "head_dim",
            format!("is {given_hd}; the class sets it to hidden_size / num_attention_heads ({hd}) whatever it says"),
        ));
    }
    s.attn = Attention {
        qkv_bias: cfg.flag("attention_bias", false)?,
        o_bias: true,
        ..plain_attention(h, kv, hd)
    };
    let r = rope(
        cfg,
        &RopeDefaults {
            partial: 0.5,
            ..RopeDefaults::new(10_000.0, s.context)
        },
    )?;
    if r.full.scaling != RopeScaling::None {
        return Err(cfg.err(
            "rope_parameters",
            "sets a RoPE scaling; RecurrentGemma's rotary embedding supports the default type only",
        ));
    }
    s.position = Position::Rope(r);
    let act = super::act(cfg, "hidden_activation", "gelu_pytorch_tanh")?;
    if act == Act::Xielu {
        return Err(cfg.err(
            "hidden_activation",
            "is xielu; RecurrentGemma applies its activation without parameters of its own",
        ));
    }
    s.mlp = Mlp {
        // The class builds its MLP at half the configured width.
        intermediate: cfg.size("intermediate_size", Some(3 * 2560))? / 2,
        act,
        gated: true,
        bias: true,
        fused_gate_up: false,
        sub_norm: false,
        clamp: None,
        scalar: false,
    };
    s.final_softcap = match cfg.opt_float("logits_soft_cap")? {
        Some(c) if c > 0.0 && c.is_finite() => Some(c),
        Some(c) => {
            return Err(cfg.err(
                "logits_soft_cap",
                format!("is {c}; it must be a positive number"),
            ))
        }
        None if cfg.present("logits_soft_cap") => None,
        None => Some(30.0),
    };
    let width = cfg.opt_size("lru_width")?.unwrap_or(s.hidden);
    if width == 0 || width % h != 0 {
        return Err(cfg.err(
            "lru_width",
            format!("is {width}; the RG-LRU's gates split it into {h} blocks (num_attention_heads), so it must be a positive multiple of {h}"),
        ));
    }
    s.recurrent = Some(Recurrent::RgLru(RgLru {
        width,
        heads: h,
        conv_kernel: cfg.size("conv1d_width", Some(4))?,
        act,
    }));
    let window = cfg.size("attention_window_size", Some(2048))?;
    let expect = "\"recurrent\" or \"attention\"";
    let types = cfg
        .list_any(
            "block_types",
            |v| match v.as_str()? {
                "recurrent" => Some(true),
                "attention" => Some(false),
                _ => None,
            },
            expect,
        )?
        .unwrap_or_else(|| vec![true, true, false]);
    if types.is_empty() {
        return Err(cfg.err(
            "block_types",
            format!("is empty; the class cycles it over the layers, so it needs at least one entry, each {expect}"),
        ));
    }
    // transformers 5.24 counts positions from an attention layer's cache, and fails without one.
    if (0..s.layers as usize).all(|b| types[b % types.len()]) {
        let key = if cfg.present("block_types") {
            "block_types"
        } else {
            "num_hidden_layers"
        };
        return Err(cfg.err(
            key,
            format!("gives no attention layer among the {}; transformers runs this model only with at least one", s.layers),
        ));
    }
    s.plan = (0..s.layers as usize)
        .map(|b| LayerPlan {
            mixer: if types[b % types.len()] {
                Mixer::RgLru
            } else {
                Mixer::Attention(AttnSpan::Sliding(window))
            },
            rope: !types[b % types.len()],
            ffn: Ffn::Dense,
        })
        .collect();
    s.layout = Layout::RecurrentGemma;
    Ok(s)
}
