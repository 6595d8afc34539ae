//! LongCat-Flash (`longcat_flash`). Each checkpoint layer holds two sublayers, each latent
//! attention (DeepSeek-V3's, its query and KV latent scaled) then a dense MLP, and one mixture
//! of experts: it reads the first sublayer's MLP input and its output joins the stream after
//! the second (the shortcut). The Spec counts sublayers as layers, as transformers' cache does
//! (`num_hidden_layers` = 2 · `num_layers`): layer 2i carries the experts (`Ffn::Shortcut`).
//! Routing: a softmax over the routed and the zero-computation experts, the top k chosen with a
//! correction bias, their weights × `routed_scaling_factor`.

use super::deepseek::{latent, KvHeads, LatentDims, V3_LATENT};
use super::{plain_moe, pre_rms, rope, RopeDefaults};
use crate::config::Config;
use crate::error::Result;
use crate::spec::*;

pub fn load(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, model_type, family);
    s.vocab = cfg.size("vocab_size", Some(131_072))?;
    s.hidden = cfg.size("hidden_size", Some(6144))?;
    // `num_hidden_layers` is a property of the class (2 · num_layers): set, it wins, and
    // num_layers becomes half of it, rounded down.
    let (key, pairs) = match cfg.opt_size("num_hidden_layers")? {
        Some(n) => {
            cfg.get("num_layers");
            ("num_hidden_layers", n / 2)
        }
        None => ("num_layers", cfg.size("num_layers", Some(28))?),
    };
    if pairs == 0 {
        return Err(cfg.err(
            key,
            "is 1; LongCat-Flash's layers come in pairs, so it must be at least 2",
        ));
    }
    s.layers = cfg.bounded(key, 2 * pairs, crate::config::MAX_LAYERS)?;
    s.context = cfg.size("max_position_embeddings", Some(131_072))?;
    s.mlp = Mlp::gated(
        cfg.size("ffn_hidden_size", Some(12288))?,
        super::act(cfg, "hidden_act", "silu")?,
    );
    s.norm = pre_rms(cfg, 1e-5)?;
    s.tied = cfg.flag("tie_word_embeddings", false)?;
    let mut r = rope(
        cfg,
        &RopeDefaults {
            partial_key: None,
            ..RopeDefaults::new(10_000_000.0, s.context)
        },
    )?;
    // The query latent is always built.
    let dims = LatentDims {
        v: Some(128),
        ..V3_LATENT
    };
    if cfg.present("q_lora_rank") && cfg.opt_size("q_lora_rank")?.is_none() {
        return Err(cfg.err(
            "q_lora_rank",
            "is null; LongCat-Flash always projects its queries through a latent, so it needs a rank",
        ));
    }
    s.attn = latent(cfg, false, 64, &s, Some(&r), KvHeads::Read(None), dims)?;
    let m = s.attn.mla.as_mut().expect("latent attention");
    let (nope, rd) = (m.qk_nope_head_dim, m.qk_rope_head_dim);
    // The attention splits each query head at qk_nope_head_dim into nope + rope dims.
    if let Some(qk) = cfg.opt_size("qk_head_dim")? {
        if qk != nope + rd {
            return Err(cfg.err(
                "qk_head_dim",
                format!("is {qk}; each query head splits into qk_nope_head_dim ({nope}) and qk_rope_head_dim ({rd}) dims, so it must be {}", nope + rd),
            ));
        }
    }
    // The rotary tables are `head_dim` wide (hidden / heads when null or 0): only tables as
    // wide as the rotated part fit it.
    let table = match cfg.get("head_dim") {
        None if !cfg.present("head_dim") => 64,
        None => s.hidden / s.attn.heads,
        Some(_) => match cfg.count("head_dim", 0)? {
            0 => s.hidden / s.attn.heads,
            d => d,
        },
    };
    if table != rd {
        return Err(cfg.err(
            "head_dim",
            format!("is {table}; LongCat-Flash's rotary tables are head_dim wide and rotate the qk_rope_head_dim ({rd}) dims, so it must be {rd}"),
        ));
    }
    let q_lora = m.q_lora_rank.expect("checked above");
    let d = s.hidden as f64;
    m.lora_scales = Some((
        (d / q_lora as f64).sqrt(),
        (d / m.kv_lora_rank as f64).sqrt(),
    ));
    r.interleaved = true;
    s.position = Position::Rope(r);

    let e = super::experts(cfg, "n_routed_experts", Some(512))?;
    let zero = cfg.count("zero_expert_num", 256)?;
    let scored = cfg.bounded("zero_expert_num", e + zero, crate::config::MAX_EXPERTS)?;
    let k = super::top_k_of(cfg, "moe_topk", scored, Some(12))?;
    // transformers builds the classifier's bias for `router_bias` but its router multiplies by
    // the weight alone: a tensor no forward pass reads, which anatomy does not invent a use for.
    if cfg.flag("router_bias", false)? {
        return Err(cfg.err(
            "router_bias",
            "is true; transformers builds the router's bias then never adds it (LongcatFlashTopkRouter scores with the weight alone), so the checkpoint and the computation disagree; set it to false",
        ));
    }
    s.moe = Some(Moe {
        zero_experts: zero,
        correction_bias: true,
        routed_scaling: cfg.float("routed_scaling_factor", 6.0)?,
        ..plain_moe(e, k, cfg.size("expert_ffn_hidden_size", Some(2048))?)
    });
    s.plan = (0..s.layers)
        .map(|b| LayerPlan {
            mixer: Mixer::Attention(AttnSpan::Full),
            rope: true,
            ffn: if b % 2 == 0 {
                Ffn::Shortcut
            } else {
                Ffn::Dense
            },
        })
        .collect();
    s.layout = Layout::LongCat;
    Ok(s)
}
