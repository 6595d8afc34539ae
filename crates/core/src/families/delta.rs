//! Gated DeltaNet's settings (Qwen3-Next, Qwen3.5, OLMo hybrid): the `linear_*` keys of their
//! configs, with the classes' defaults; Kimi Delta Attention's (Kimi Linear).

use crate::config::Config;
use crate::error::Result;
use crate::spec::{DeltaNet, DeltaStore};

/// A class's defaults for its Gated DeltaNet's heads.
#[derive(Debug, Clone, Copy)]
pub enum DeltaHeads {
    /// These key and value heads, of 128 features each (Qwen3-Next and Qwen3.5: 16 and 32; Lara
    /// Mini: 8 and 16).
    Given(u64, u64),
    /// As many key and value heads as the attention has, keys 3/4 of the width over them, values
    /// twice the keys (OLMo hybrid).
    Attention,
}

/// A Gated DeltaNet; `heads` and `hidden` are the attention's, from which `DeltaHeads::Attention`
/// derives its defaults.
pub(crate) fn delta_net(
    cfg: &Config,
    eps: f64,
    (store, defaults): (DeltaStore, DeltaHeads),
    heads: u64,
    hidden: u64,
) -> Result<DeltaNet> {
    // The convolution's activation is the MLP's `hidden_act`.
    super::mamba2::silu(cfg, "hidden_act")?;
    let (key_heads, value_heads) = match defaults {
        DeltaHeads::Given(k, v) => (k, v),
        DeltaHeads::Attention => (heads, heads),
    };
    let key_heads = cfg.size("linear_num_key_heads", Some(key_heads))?;
    let key_dim = match defaults {
        DeltaHeads::Given(..) => 128,
        DeltaHeads::Attention => (0.75 * hidden as f64 / key_heads as f64) as u64,
    };
    let key_dim = cfg.size("linear_key_head_dim", Some(key_dim))?;
    let value_dim = match defaults {
        DeltaHeads::Given(..) => 128,
        DeltaHeads::Attention => 2 * key_dim,
    };
    let olmo = store == DeltaStore::Olmo;
    let d = DeltaNet {
        key_heads,
        value_heads: cfg.size("linear_num_value_heads", Some(value_heads))?,
        key_dim,
        value_dim: cfg.size("linear_value_head_dim", Some(value_dim))?,
        conv_kernel: cfg.size("linear_conv_kernel_dim", Some(4))?,
        // OLMo's output norm is FLA's, at its own ε; its β may reach 2.
        eps: if olmo { 1e-5 } else { eps },
        beta_scale: if olmo && cfg.flag("linear_allow_neg_eigval", true)? {
            2.0
        } else {
            1.0
        },
        sigmoid_gate: false,
        gate_floor: None,
        store,
    };
    // OLMo's module feeds q and k to the delta rule per value head without repeating them.
    if olmo && d.value_heads != d.key_heads {
        return Err(cfg.err(
            "linear_num_value_heads",
            format!(
                "is {}; OLMo hybrid's DeltaNet reads one key head per value head, so it must equal linear_num_key_heads ({})",
                d.value_heads, d.key_heads
            ),
        ));
    }
    if !d.value_heads.is_multiple_of(d.key_heads) {
        return Err(cfg.err(
            "linear_num_value_heads",
            format!(
                "is {}; it must be a multiple of linear_num_key_heads ({}): each key head serves a whole number of value heads",
                d.value_heads, d.key_heads
            ),
        ));
    }
    Ok(d)
}

/// Kimi Delta Attention's settings (Kimi Linear): `linear_attn_config`'s `head_dim`, `num_heads`
/// and `short_conv_kernel_size`, which win over the top-level `linear_head_dim`,
/// `linear_num_heads` and `linear_conv_kernel_dim` as they do in the class.
pub(crate) fn kimi_delta(cfg: &Config, eps: f64) -> Result<DeltaNet> {
    super::mamba2::silu(cfg, "hidden_act")?;
    let mut dim = cfg.size("linear_head_dim", Some(128))?;
    let mut heads = cfg.size("linear_num_heads", Some(32))?;
    let mut kernel = cfg.size("linear_conv_kernel_dim", Some(4))?;
    if let Some(sub) = cfg.sub("linear_attn_config")? {
        dim = sub.size("head_dim", Some(dim))?;
        heads = sub.size("num_heads", Some(heads))?;
        kernel = sub.size("short_conv_kernel_size", Some(kernel))?;
    }
    Ok(DeltaNet {
        key_heads: heads,
        value_heads: heads,
        key_dim: dim,
        value_dim: dim,
        conv_kernel: kernel,
        eps,
        beta_scale: 1.0,
        sigmoid_gate: false,
        gate_floor: None,
        store: DeltaStore::Kimi,
    })
}

/// Ling's Kimi Delta Attention (`bailing_hybrid`): as many heads as the attention, of
/// `head_dim`, a convolution of `short_conv_kernel_size`, unless the file gives the `linear_*`
/// keys the class saves (which it then sets over its own); the decay bounded below by
/// `kda_lower_bound` where `kda_safe_gate` says so.
pub(crate) fn bailing_delta(cfg: &Config, eps: f64, heads: u64) -> Result<DeltaNet> {
    super::mamba2::silu(cfg, "hidden_act")?;
    let dim = cfg.size("head_dim", Some(128))?;
    let dim = cfg.size("linear_head_dim", Some(dim))?;
    let heads = cfg.size("linear_num_heads", Some(heads))?;
    let kernel = cfg.size("short_conv_kernel_size", Some(4))?;
    let kernel = cfg.size("linear_conv_kernel_dim", Some(kernel))?;
    let gate_floor = if cfg.flag("kda_safe_gate", true)? {
        let floor = cfg.float("kda_lower_bound", -5.0)?;
        if !(floor.is_finite() && floor < 0.0) {
            return Err(cfg.err(
                "kda_lower_bound",
                format!("is {floor}; it must be a negative number, the least log decay"),
            ));
        }
        Some(floor)
    } else {
        cfg.get("kda_lower_bound");
        None
    };
    Ok(DeltaNet {
        key_heads: heads,
        value_heads: heads,
        key_dim: dim,
        value_dim: dim,
        conv_kernel: kernel,
        eps,
        beta_scale: 1.0,
        sigmoid_gate: false,
        gate_floor,
        store: DeltaStore::Bailing,
    })
}

/// Which of Ling's hybrid layers run Kimi Delta Attention: `layer_types`, else all but the
/// last of every `layer_group_size` (6).
pub(crate) fn bailing_layers(cfg: &Config, layers: u64) -> Result<Vec<bool>> {
    let group = cfg.size("layer_group_size", Some(6))?;
    let (types, key) = match linear_types(cfg, layers, "Kimi Delta Attention")? {
        Some(t) => (t, "layer_types"),
        None => (
            (0..layers).map(|i| (i + 1) % group != 0).collect(),
            "layer_group_size",
        ),
    };
    // transformers 5.24 counts positions from an attention layer's cache, and fails without one.
    if types.iter().all(|&kda| kda) {
        return Err(cfg.err(
            key,
            format!("gives no full_attention layer among the {layers}; transformers runs this model only with at least one"),
        ));
    }
    Ok(types)
}

/// Which of Kimi Linear's layers run Kimi Delta Attention (true) rather than latent attention:
/// `layer_types`; else `linear_attn_config`'s `kda_layers` and `full_attn_layers`, numbered from
/// 1 (a layer in both is a KDA layer, as the class assigns them last); else every layer but
/// layers 4, 8, 12 … counted from 0. At least one must attend: transformers 5.24 counts
/// positions from an attention layer's cache, and fails without one.
pub(crate) fn kimi_layers(cfg: &Config, layers: u64) -> Result<Vec<bool>> {
    // The types, the config that gave them and the key there.
    let attending = |types: Vec<bool>, from: &Config, key: &str| {
        if types.iter().all(|&kda| kda) {
            return Err(from.err(
                key,
                format!("gives no full_attention layer among the {layers}; transformers runs this model only with at least one"),
            ));
        }
        Ok(types)
    };
    if let Some(types) = linear_types(cfg, layers, "Kimi Delta Attention")? {
        return attending(types, cfg, "layer_types");
    }
    let default = || {
        let types = (0..layers).map(|i| i == 0 || i % 4 != 0).collect();
        attending(types, cfg, "num_hidden_layers")
    };
    let Some(sub) = cfg.sub("linear_attn_config")? else {
        return default();
    };
    let number = |v: &serde_json::Value| v.as_u64().filter(|&n| (1..=layers).contains(&n));
    let within = format!("a layer number from 1 to {layers}");
    let full = sub.list_any("full_attn_layers", number, &within)?;
    let kda = sub.list_any("kda_layers", number, &within)?;
    let (full, kda) = match (full, kda) {
        (Some(f), Some(k)) => (f, k),
        (None, None) => return default(),
        (Some(_), None) | (None, Some(_)) => {
            let (key, other) = if sub.has("kda_layers") {
                ("kda_layers", "full_attn_layers")
            } else {
                ("full_attn_layers", "kda_layers")
            };
            return Err(sub.err(
                key,
                format!("is given without {other}; Kimi Linear names its layers by both lists or neither"),
            ));
        }
    };
    let mut types = vec![None; layers as usize];
    for n in full {
        types[n as usize - 1] = Some(false);
    }
    for n in kda {
        types[n as usize - 1] = Some(true);
    }
    match types.iter().position(Option::is_none) {
        Some(missing) => Err(sub.err(
            "kda_layers",
            format!(
                "and full_attn_layers leave layer {} (numbered from 1) in neither list; each layer must be in one",
                missing + 1
            ),
        )),
        None => attending(types.into_iter().flatten().collect(), &sub, "full_attn_layers"),
    }
}

/// A delta-rule hybrid's `layer_types`: true for "linear_attention" (the `mixer`), false for
/// "full_attention"; any other type is refused.
pub(crate) fn linear_types(cfg: &Config, layers: u64, mixer: &str) -> Result<Option<Vec<bool>>> {
    cfg.list(
        "layer_types",
        layers,
        |v| match v.as_str()? {
            "linear_attention" => Some(true),
            "full_attention" => Some(false),
            _ => None,
        },
        &format!("\"linear_attention\" ({mixer}) or \"full_attention\""),
    )
}

/// Qwen4-Exp's `layer_types`: "linear_attention" (Gated DeltaNet) or "indexed_attention"
/// ("full_attention", which its class renames so).
pub(crate) fn indexed_types(cfg: &Config, layers: u64) -> Result<Option<Vec<bool>>> {
    cfg.list(
        "layer_types",
        layers,
        |v| match v.as_str()? {
            "linear_attention" => Some(true),
            "indexed_attention" | "full_attention" => Some(false),
            _ => None,
        },
        "\"linear_attention\" (Gated DeltaNet) or \"indexed_attention\"",
    )
}
