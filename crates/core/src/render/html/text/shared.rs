//! The page's words for Zamba's shared blocks.

use super::*;

/// Zamba2's shared transformer blocks.
pub(super) fn shared_text(spec: &Spec, s: &crate::spec::SharedBlocks) -> Text {
    let (a, d, f) = (&spec.attn, spec.hidden, spec.mlp.intermediate);
    let blocks = if s.blocks == 1 {
        "one block".to_string()
    } else {
        format!("{} blocks taken in turn", s.blocks)
    };
    let adapted = if s.adapter_rank == 0 {
        "nothing"
    } else if s.attn_adapters {
        "the fused gate/up projection and Q, K and V"
    } else {
        "the fused gate/up projection"
    };
    Text {
        summary: format!(
            "Attention and an MLP whose weights {} layers share ({blocks}), reading the stream beside the token embeddings.",
            s.layers.len()
        ),
        explanation: format!(
            "In layers {}, before the Mamba2 mixer, a transformer block reads [stream, embeddings] ({} features), normed: {} attention heads of {} (K and V in {} heads), then a norm and a gated {} MLP {f} wide, with no residual inside. Its output, projected by this layer's own {d} × {d} matrix, is added to what the mixer reads, not to the stream. The block's weights are stored once, under the first layer that runs it, and reused by every later visit.",
            s.layers,
            2 * d,
            a.heads,
            a.head_dim,
            a.kv_heads,
            spec.mlp.act.label(),
        ),
        subtleties: vec![
            if s.adapter_rank > 0 {
                format!("Each visit has its own rank-{} adapter on {adapted}: W·x + B·(A·x). Sharing keeps the parameters down; the adapters let each depth use the block a little differently.", s.adapter_rank)
            } else {
                "Every visit runs exactly the same weights: the block adds depth without adding parameters, and only the layer's own output projection differs.".into()
            },
            format!("Scores are scaled by 1/√({} / 2), the width of a head before the input was doubled by the embeddings beside it.", a.head_dim),
            "Every visit keeps its own keys and values: the KV cache grows in each layer that runs a block, although the weights are shared.".into(),
        ],
    }
}
