//! Zamba (`zamba`) and Zamba2 (`zamba2`), Zyphra's: every layer an RMS norm and a state-space
//! mixer (Zamba's multi-head Mamba, Zamba2's Mamba2), added to the stream; in the layers
//! `layers_block_type` marks "hybrid", a shared transformer block runs first on the stream
//! beside the token embeddings, and its output, projected by the layer's own `linear`, joins the
//! mixer's input (`SharedBlocks`). Defaults follow `ZambaConfig` and `Zamba2Config`.

use super::mamba::{s6, S6Keys};
use super::mamba2::{ssm, SsmKeys};
use super::{plain_attention, pre_rms, rope, RopeDefaults};
use crate::config::{Config, MAX_LAYERS};
use crate::error::Result;
use crate::layers::LayerSet;
use crate::spec::*;

/// `Zamba2Config`'s layers when the config lists none: hybrid layers 6, 12 … 42, 47, 51 of 54.
fn default_hybrid(b: u64) -> bool {
    matches!(b, 6 | 12 | 18 | 24 | 30 | 36 | 42 | 47 | 51)
}

pub fn load_zamba(cfg: &Config, _model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, "zamba", family);
    s.vocab = cfg.size("vocab_size", Some(32_000))?;
    s.hidden = cfg.size("hidden_size", Some(3712))?;
    // By default layers 2 and every `attn_layer_period`-th from `attn_layer_offset` + 3 run the
    // shared block.
    let n = cfg.size("num_hidden_layers", Some(76))?;
    // Bounded before the default list is built from it.
    if n > MAX_LAYERS {
        return Err(cfg.err(
            "num_hidden_layers",
            format!("is {n}; give 1 to {MAX_LAYERS}"),
        ));
    }
    let (period, offset) = (
        cfg.size("attn_layer_period", Some(6))?,
        cfg.count("attn_layer_offset", 4)?,
    );
    let hybrid = layer_kinds(cfg, family, || {
        // The class lists 3 layers before the pattern, however few it is given.
        (0..n.max(3))
            .map(|b| b == 2 || (b >= 3 && (b - 3) % period == offset))
            .collect()
    })?;
    s.layers = hybrid.len() as u64;
    s.context = cfg.size("max_position_embeddings", Some(4096))?;
    s.norm = pre_rms(cfg, 1e-5)?;
    s.tied = cfg.flag("tie_word_embeddings", true)?;
    let wide = s
        .hidden
        .checked_mul(2)
        .ok_or_else(|| cfg.err("hidden_size", "is too large"))?;
    // The block reads [stream, embeddings]: its norm is that wide whatever this says.
    if let Some(w) = cfg.opt_size("attention_hidden_size")? {
        if w != wide {
            return Err(cfg.err(
                "attention_hidden_size",
                format!("is {w}, but the shared block reads the stream beside the embeddings, 2 × hidden_size ({wide}) features; transformers cannot run another width"),
            ));
        }
    }
    let heads = cfg.size("num_attention_heads", Some(16))?;
    let kv = cfg.size("num_key_value_heads", Some(16))?;
    if !heads.is_multiple_of(kv) {
        return Err(cfg.err(
            "num_key_value_heads",
            format!("is {kv}; it must divide num_attention_heads ({heads})"),
        ));
    }
    let head_dim = match cfg.opt_size("attention_head_dim")? {
        Some(h) => h,
        None if wide >= heads => wide / heads,
        None => {
            return Err(cfg.err(
                "num_attention_heads",
                format!("is {heads}; each head is 2 × hidden_size / heads wide, so it must be at most {wide}"),
            ))
        }
    };
    s.attn = Attention {
        // Scores scaled by 1/√(head_dim / 2).
        scale_dim: head_dim as f64 / 2.0,
        ..plain_attention(heads, kv, head_dim)
    };
    s.position = Position::None;
    s.mlp = Mlp::gated(
        cfg.size("intermediate_size", Some(14_848))?,
        super::act(cfg, "hidden_act", "gelu")?,
    );
    let mut m = s6(cfg, s.hidden, &S6Keys::ZAMBA)?;
    m.heads = cfg.size("n_mamba_heads", Some(2))?;
    m.interleaved = true;
    if !m.inner.is_multiple_of(m.heads) {
        return Err(cfg.err(
            "n_mamba_heads",
            format!(
                "is {}; it must divide the mixer's {} channels (mamba_expand × hidden_size)",
                m.heads, m.inner
            ),
        ));
    }
    s.recurrent = Some(Recurrent::Mamba(m));
    let layers = LayerSet::from_fn(s.layers, |b| hybrid[b as usize]);
    // Kept where no layer runs the block: the names of its layers' mixers depend on it.
    s.shared = Some(SharedBlocks::new(layers, 1, 0, false));
    s.plan = (0..s.layers)
        .map(|_| LayerPlan {
            mixer: Mixer::Mamba,
            rope: false,
            ffn: Ffn::None,
        })
        .collect();
    s.layout = Layout::Zamba;
    Ok(s)
}

pub fn load_zamba2(cfg: &Config, _model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, "zamba2", family);
    s.vocab = cfg.size("vocab_size", Some(32_000))?;
    s.hidden = cfg.size("hidden_size", Some(2560))?;
    let hybrid = layer_kinds(cfg, family, || (0..54).map(default_hybrid).collect())?;
    s.layers = hybrid.len() as u64;
    let long = cfg.flag("use_long_context", false)?;
    s.context = if long {
        // The class then fixes the context, whatever the key says.
        cfg.get("max_position_embeddings");
        16_384
    } else {
        cfg.size("max_position_embeddings", Some(4096))?
    };
    s.norm = pre_rms(cfg, 1e-5)?;
    s.tied = cfg.flag("tie_word_embeddings", true)?;
    // The shared block reads [stream, embeddings]: its heads split twice the hidden size.
    let wide = s
        .hidden
        .checked_mul(2)
        .ok_or_else(|| cfg.err("hidden_size", "is too large"))?;
    let heads = cfg.size("num_attention_heads", Some(32))?;
    let kv = cfg.opt_size("num_key_value_heads")?.unwrap_or(heads);
    if !heads.is_multiple_of(kv) {
        return Err(cfg.err(
            "num_key_value_heads",
            format!("is {kv}; it must divide num_attention_heads ({heads})"),
        ));
    }
    let head_dim = wide / heads;
    if head_dim == 0 {
        return Err(cfg.err(
            "num_attention_heads",
            format!("is {heads}; each head is 2 × hidden_size / heads wide, so it must be at most {wide}"),
        ));
    }
    s.attn = Attention {
        // Scores scaled by 1/√(head_dim / 2): the head's width before the doubled input.
        scale_dim: head_dim as f64 / 2.0,
        ..plain_attention(heads, kv, head_dim)
    };
    let mem_rope = cfg.flag("use_mem_rope", false)?;
    s.position = if mem_rope {
        Position::Rope(rope(cfg, &RopeDefaults::new(10_000.0, s.context))?)
    } else {
        cfg.get("rope_parameters");
        cfg.get("rope_theta");
        Position::None
    };
    let bias = cfg.flag("add_bias_linear", false)?;
    s.mlp = Mlp {
        intermediate: match cfg.opt_size("intermediate_size")? {
            Some(i) => i,
            None => s.hidden.saturating_mul(4),
        },
        act: super::act(cfg, "hidden_act", "gelu")?,
        gated: true,
        bias,
        fused_gate_up: true,
        sub_norm: false,
        clamp: None,
        scalar: false,
    };
    let mut m = ssm(cfg, s.hidden, 1e-5, &SsmKeys::ZAMBA2)?;
    // The convolution always has a bias: the class never reads `use_conv_bias`.
    m.conv_bias = true;
    let attn_adapters = cfg.flag("use_shared_attention_adapter", false)?;
    let rank = cfg.size("adapter_rank", Some(128))?;
    if attn_adapters && (kv != heads || head_dim * heads != wide) {
        return Err(cfg.err(
            "use_shared_attention_adapter",
            format!("is true, but the adapters add 2 × hidden_size ({wide}) features to Q, K and V, which are {} and {} wide here; give as many K/V heads as heads, dividing 2 × hidden_size", heads * head_dim, kv * head_dim),
        ));
    }
    let blocks = cfg.size("num_mem_blocks", Some(1))?;
    let layers = LayerSet::from_fn(s.layers, |b| hybrid[b as usize]);
    // What the class derives and a saved config restates.
    let derived = [
        ("attention_hidden_size", wide),
        ("attention_head_dim", head_dim),
        ("kv_channels", s.hidden / heads),
        ("num_query_groups", heads),
    ];
    for (key, want) in derived {
        if let Some(v) = cfg.opt_size(key)? {
            if v != want {
                return Err(cfg.err(
                    key,
                    format!("is {v}, but Zamba2 derives {want} from hidden_size and num_attention_heads and never reads this key; a different value describes another model"),
                ));
            }
        }
    }
    if let Some(ids) = cfg.list_any("hybrid_layer_ids", |v| v.as_u64(), "a layer index")? {
        if ids != layers.iter().collect::<Vec<_>>() {
            return Err(cfg.err(
                "hybrid_layer_ids",
                format!("is {ids:?}, but layers_block_type puts the shared block in layers {:?}; the class derives this list from it", layers.iter().collect::<Vec<_>>()),
            ));
        }
    }
    // Kept where no layer runs a block: the names of its layers' mixers depend on it.
    s.shared = Some(SharedBlocks::new(
        layers.clone(),
        blocks,
        rank,
        attn_adapters,
    ));
    s.recurrent = Some(Recurrent::Mamba2(m));
    s.plan = (0..s.layers)
        .map(|b| LayerPlan {
            mixer: Mixer::Mamba2,
            rope: mem_rope && layers.contains(b),
            ffn: Ffn::None,
        })
        .collect();
    s.layout = Layout::Zamba2;
    Ok(s)
}

/// Whether each layer runs a shared block: `layers_block_type` ("hybrid", else
/// "linear_attention" or its older name "mamba"), or the class's default list. The count is the
/// list's; a `num_hidden_layers` that disagrees is refused.
fn layer_kinds(
    cfg: &Config,
    family: &str,
    default: impl FnOnce() -> Vec<bool>,
) -> Result<Vec<bool>> {
    let listed = cfg.list_any(
        "layers_block_type",
        |v| match v.as_str()? {
            "hybrid" => Some(true),
            "linear_attention" | "mamba" => Some(false),
            _ => None,
        },
        "\"linear_attention\" or \"hybrid\"",
    )?;
    let kinds = listed.unwrap_or_else(default);
    super::layers_listed(cfg, kinds, "layers_block_type", "layers_block_type", family)
}
