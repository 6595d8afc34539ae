//! Gated DeltaNet's settings (Qwen3-Next, Qwen3.5): the `linear_*` keys of their configs, with
//! the classes' defaults.

use crate::config::Config;
use crate::error::Result;
use crate::spec::{DeltaNet, DeltaStore};

pub(crate) fn delta_net(cfg: &Config, eps: f64, store: DeltaStore) -> Result<DeltaNet> {
    // The convolution's activation is the MLP's `hidden_act`.
    super::mamba2::silu(cfg, "hidden_act")?;
    let d = DeltaNet {
        key_heads: cfg.size("linear_num_key_heads", Some(16))?,
        value_heads: cfg.size("linear_num_value_heads", Some(32))?,
        key_dim: cfg.size("linear_key_head_dim", Some(128))?,
        value_dim: cfg.size("linear_value_head_dim", Some(128))?,
        conv_kernel: cfg.size("linear_conv_kernel_dim", Some(4))?,
        eps,
        store,
    };
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
