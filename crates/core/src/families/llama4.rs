//! Llama 4 text (`llama4_text`, and `llama4`'s `text_config`): GQA with weightless QK
//! normalization after RoPE; every fourth layer without RoPE and with full attention, the others
//! chunked; mixture-of-experts layers (every `interleave_moe_layer_step`-th, or `moe_layers`) with
//! stacked experts, a sigmoid router scaling each expert's input, and one shared expert; dense
//! layers of width `intermediate_size_mlp`; the queries of the layers without RoPE scaled up past
//! `floor_scale` positions. Defaults follow `Llama4TextConfig`.

use super::{
    experts, heads, layer_count, plain_attention, plain_moe, pre_rms, rope, top_k, HeadDim,
    RopeDefaults,
};
use crate::config::Config;
use crate::error::Result;
use crate::spec::*;

pub fn load(cfg: &Config, _model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, "llama4_text", family);
    s.vocab = cfg.size("vocab_size", Some(202_048))?;
    s.hidden = cfg.size("hidden_size", Some(5120))?;
    s.layers = layer_count(cfg, &["num_hidden_layers"], Some(48))?;
    s.context = cfg.size("max_position_embeddings", Some(4096 * 32))?;
    let (h, kv, hd) = heads(cfg, s.hidden, Some(40), Some(8), HeadDim::Given(128))?;
    let bias = cfg.flag("attention_bias", false)?;
    s.attn = Attention {
        qkv_bias: bias,
        o_bias: bias,
        qk_norm: if cfg.flag("use_qk_norm", true)? {
            QkNorm::L2
        } else {
            QkNorm::None
        },
        ..plain_attention(h, kv, hd)
    };
    s.mlp = Mlp::gated(
        cfg.size("intermediate_size_mlp", Some(16384))?,
        super::act(cfg, "hidden_act", "silu")?,
    );
    let e = experts(cfg, "num_local_experts", Some(16))?;
    let k = top_k(cfg, e, Some(1))?;
    let f = cfg.size("intermediate_size", Some(8192))?;
    s.moe = Some(Moe {
        shared_experts: 1,
        shared_intermediate: f,
        scoring: Scoring::TopkSigmoid,
        storage: ExpertStorage::Stacked {
            out_in: false,
            interleaved: false,
        },
        ..plain_moe(e, k, f)
    });
    let n = s.layers;
    // Read either way: the lists, when given, decide (as in transformers, which saves both).
    let every = cfg.size("no_rope_layer_interval", Some(4))?;
    let step = cfg.size("interleave_moe_layer_step", Some(1))?;
    // An empty list is the class's default: the interval decides.
    let rope_layers: Vec<bool> = match cfg
        .list_any(
            "no_rope_layers",
            |v| v.as_u64().filter(|x| *x <= 1),
            "1 (RoPE) or 0 (no RoPE)",
        )?
        .filter(|l| !l.is_empty())
    {
        Some(list) => {
            if list.len() as u64 != n {
                return Err(cfg.err(
                    "no_rope_layers",
                    format!(
                        "has {} entries; it must have one per layer ({n})",
                        list.len()
                    ),
                ));
            }
            list.into_iter().map(|x| x == 1).collect()
        }
        None => (0..n).map(|i| (i + 1) % every != 0).collect(),
    };
    let moe_layers: Vec<bool> = match cfg.list_any("moe_layers", |v| v.as_u64(), "a layer index")? {
        Some(list) => (0..n).map(|i| list.contains(&i)).collect(),
        None => (0..n).map(|i| (i + 1) % step == 0).collect(),
    };
    let chunk = if cfg.present("attention_chunk_size") {
        cfg.opt_size("attention_chunk_size")?
    } else {
        Some(8192)
    };
    s.plan = (0..n as usize)
        .map(|i| {
            let span = match chunk {
                Some(c) if rope_layers[i] => AttnSpan::Chunked(c),
                _ => AttnSpan::Full,
            };
            LayerPlan::attention(span, rope_layers[i], moe_layers[i])
        })
        .collect();
    // Saved configs carry the layer types the class derives: chunked where RoPE is.
    let chunked = cfg.list(
        "layer_types",
        n,
        |v| match v.as_str()? {
            "chunked_attention" => Some(true),
            "full_attention" => Some(false),
            _ => None,
        },
        "\"chunked_attention\" or \"full_attention\"",
    )?;
    if let Some(types) = chunked {
        if let Some(i) = (0..n as usize)
            .find(|&i| types[i] != matches!(s.plan[i].span(), Some(AttnSpan::Chunked(_))))
        {
            return Err(cfg.err(
                &format!("layer_types[{i}]"),
                "disagrees with the layers' RoPE and attention_chunk_size; Llama 4 chunks the attention of exactly its RoPE layers",
            ));
        }
    }
    // Attention temperature tuning: queries of the layers without RoPE grow past `floor_scale`
    // positions.
    if cfg.flag("attn_temperature_tuning", true)? {
        s.attn.query_scale = Some(QueryScale {
            form: ScaleForm::Stepped,
            beta: cfg.float("attn_scale", 0.1)?,
            length: cfg.size("floor_scale", Some(8192))?,
            shift: 1,
            nope_only: true,
        });
    }
    s.norm = pre_rms(cfg, 1e-5)?;
    let mut r = rope(cfg, &RopeDefaults::new(500_000.0, s.context))?;
    r.interleaved = true; // Llama 4 rotates (x₂ᵢ, x₂ᵢ₊₁) pairs as complex numbers
    s.position = Position::Rope(r);
    s.tied = cfg.flag("tie_word_embeddings", false)?;
    s.layout = Layout::Llama4;
    Ok(s)
}
