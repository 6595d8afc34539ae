//! MiniMax-M3's language model (`minimax_m3_vl_text`): GQA with a Gemma-style RMSNorm per head
//! on Q and K, the lightning indexer in its sparse layers (each query group attends only to the
//! blocks of keys its index head chose); a dense MLP or a mixture of experts per layer, both
//! with gpt-oss's clamped SwiGLU, the experts sigmoid-routed with a correction bias beside one
//! shared expert. Every norm is Gemma's, (1 + w). Defaults follow `MiniMaxM3VLTextConfig`.

use super::RopeDefaults;
use super::{experts, heads, layer_count, plain_attention, plain_moe, rope, top_k, HeadDim};
use crate::config::Config;
use crate::error::Result;
use crate::layers::LayerSet;
use crate::spec::*;

pub fn load(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, model_type, family);
    s.vocab = cfg.size("vocab_size", Some(200_064))?;
    s.hidden = cfg.size("hidden_size", Some(6144))?;
    s.layers = layer_count(cfg, &["num_hidden_layers"], Some(60))?;
    s.context = cfg.size("max_position_embeddings", Some(524_288))?;
    let (h, kv, hd) = heads(cfg, s.hidden, Some(64), Some(4), HeadDim::Given(128))?;
    s.attn = Attention {
        qk_norm: QkNorm::PerHead,
        ..plain_attention(h, kv, hd)
    };
    s.norm = Norm {
        kind: NormKind::Rms,
        eps: cfg.float("rms_norm_eps", 1e-6)?,
        unit_offset: true,
        place: NormPlace::Pre,
    };
    // The class rotates by `partial_rotary_factor` alone: it never turns its `rotary_dim` into
    // one (MiniMax-M2's class does), so a config's `rotary_dim` leaves every dim rotated.
    cfg.get("rotary_dim");
    s.position = Position::Rope(rope(cfg, &RopeDefaults::new(5_000_000.0, s.context))?);
    s.tied = cfg.flag("tie_word_embeddings", false)?;

    // The clamped SwiGLU's gate reads σ(1.702 · g): anatomy draws that constant. The class
    // computes the gate inline, whatever `hidden_act` says.
    let alpha = cfg.float("swiglu_alpha", 1.702)?;
    if alpha != 1.702 {
        return Err(cfg.err(
            "swiglu_alpha",
            format!("is {alpha}; anatomy draws the clamped SwiGLU with σ(1.702 · gate), as MiniMax-M3 has it"),
        ));
    }
    cfg.get("hidden_act");
    let limit = cfg.float("swiglu_limit", 7.0)?;
    s.mlp = Mlp {
        intermediate: cfg.size("dense_intermediate_size", Some(12288))?,
        act: Act::Silu,
        gated: true,
        bias: false,
        fused_gate_up: true,
        sub_norm: false,
        clamp: Some(limit),
        scalar: false,
    };
    let e = experts(cfg, "num_local_experts", Some(128))?;
    let k = top_k(cfg, e, Some(4))?;
    s.moe = Some(Moe {
        scoring: Scoring::Sigmoid,
        correction_bias: true,
        norm_topk_prob: true,
        renorm_eps: 0.0,
        routed_scaling: cfg.float("routed_scaling_factor", 2.0)?,
        shared_experts: 1,
        shared_intermediate: cfg.size("shared_intermediate_size", Some(3072))?,
        shared_fused: true,
        swiglu_limit: Some(limit),
        storage: ExpertStorage::Stacked {
            out_in: true,
            interleaved: false,
        },
        ..plain_moe(e, k, cfg.size("intermediate_size", Some(3072))?)
    });

    // Released configs name the sparse layers and their indexer in `sparse_attention_config`
    // and the MoE layers in `moe_layer_freq`; its sizes win over the flat keys.
    let sparse_cfg = cfg.sub("sparse_attention_config")?;
    let sized = |flat: &str, legacy: &str, default: u64| -> Result<u64> {
        let given = cfg.size(flat, Some(default))?;
        match &sparse_cfg {
            Some(c) if c.present(legacy) => c.size(legacy, None),
            _ => Ok(given),
        }
    };
    let index = BlockIndex {
        heads: sized("index_n_heads", "sparse_num_index_heads", 4)?,
        head_dim: sized("index_head_dim", "sparse_index_dim", 128)?,
        block: sized("index_block_size", "sparse_block_size", 128)?,
        top_k: sized("index_topk_blocks", "sparse_topk_blocks", 16)?,
        local: match &sparse_cfg {
            Some(c) if c.present("sparse_local_block") => {
                cfg.count("index_local_blocks", 1)?;
                c.count("sparse_local_block", 1)?
            }
            _ => cfg.count("index_local_blocks", 1)?,
        },
    };
    let flag = |v: &serde_json::Value| match v {
        serde_json::Value::Bool(b) => Some(*b),
        serde_json::Value::Number(n) => n.as_u64().map(|n| n != 0),
        _ => None,
    };
    let sparse: Vec<bool> = match cfg.list(
        "layer_types",
        s.layers,
        |v| match v.as_str()? {
            "minimax_m3_sparse" => Some(true),
            "full_attention" => Some(false),
            _ => None,
        },
        "\"full_attention\" or \"minimax_m3_sparse\"",
    )? {
        Some(t) => {
            if let Some(c) = &sparse_cfg {
                c.get("sparse_attention_freq");
            }
            t
        }
        None => match &sparse_cfg {
            Some(c) => c
                .list(
                    "sparse_attention_freq",
                    s.layers,
                    flag,
                    "1 or 0 (true or false)",
                )?
                .unwrap_or_else(|| vec![false; s.layers as usize]),
            None => vec![false; s.layers as usize],
        },
    };
    let moe_layers: Vec<bool> = match cfg.list(
        "mlp_layer_types",
        s.layers,
        |v| match v.as_str()? {
            "sparse" => Some(true),
            "dense" => Some(false),
            _ => None,
        },
        "\"dense\" or \"sparse\"",
    )? {
        Some(t) => {
            cfg.get("moe_layer_freq");
            t
        }
        None => cfg
            .list("moe_layer_freq", s.layers, flag, "1 or 0 (true or false)")?
            .unwrap_or_else(|| vec![true; s.layers as usize]),
    };
    let sparse_set = LayerSet::from_fn(s.layers, |b| sparse[b as usize]);
    if !sparse_set.is_empty() {
        check_index(cfg, &s, index)?;
        let own = Attention {
            block_index: Some(index),
            ..s.attn.clone()
        };
        if sparse_set.len() == s.layers {
            s.attn = own;
        } else {
            s.layer_attn = vec![(sparse_set, own)];
        }
    }
    s.plan = moe_layers
        .iter()
        .map(|&moe| LayerPlan::attention(AttnSpan::Full, true, moe))
        .collect();
    s.layout = Layout::MiniMaxM3;
    Ok(s)
}

/// The indexer's sizes against what transformers' class can run as anatomy draws it.
fn check_index(cfg: &Config, s: &Spec, i: BlockIndex) -> Result<()> {
    if i.heads == 0 || !s.attn.heads.is_multiple_of(i.heads) {
        return Err(cfg.err(
            "index_n_heads",
            format!(
                "is {}; each index head chooses for a group of query heads, so it must divide num_attention_heads ({})",
                i.heads, s.attn.heads
            ),
        ));
    }
    let Position::Rope(r) = &s.position else {
        unreachable!("MiniMax-M3 has RoPE")
    };
    let turned = r.rotary_dim(s.attn.head_dim);
    if i.head_dim < turned {
        return Err(cfg.err(
            "index_head_dim",
            format!("is {}, fewer than the {turned} dims the attention's RoPE turns; the class would cut its tables short, which anatomy does not model", i.head_dim),
        ));
    }
    if i.top_k == 0 || i.local > i.top_k {
        return Err(cfg.err(
            "index_local_blocks",
            format!(
                "is {} with index_topk_blocks {}; each query keeps its local blocks among its top-k, so there must be room for them (and for at least one block)",
                i.local, i.top_k
            ),
        ));
    }
    Ok(())
}

/// MiniMax-M3's language model inside its wrapper, as the published checkpoint stores it: the
/// experts one by one, the dense MLP's and the shared expert's gate and up apart, under the
/// published names (transformers fuses and stacks them on load).
pub fn published(
    _: &Config,
    cfg: &Config,
    model_type: &str,
    family: &str,
    name: &str,
) -> Result<Spec> {
    let mut s = load(cfg, model_type, family, name)?;
    s.mlp.fused_gate_up = false;
    if let Some(m) = s.moe.as_mut() {
        m.shared_fused = false;
        m.storage = ExpertStorage::PerExpert;
    }
    s.layout = Layout::MiniMaxM3Published;
    Ok(s)
}
