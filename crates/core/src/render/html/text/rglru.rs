//! The page's words for RecurrentGemma's RG-LRU.

use super::*;

/// Griffin's recurrent block in words, with this model's sizes.
pub(super) fn rg_lru_text(spec: &Spec, s: crate::spec::RgLru) -> Text {
    let (d, w, h, bw, k) = (spec.hidden, s.width, s.heads, s.block(), s.conv_kernel);
    let act = s.act.words();
    Text {
        summary: format!("Griffin's recurrent block: a convolution over {k} positions and the RG-LRU, one state per channel ({w}), gated by a {act} branch; no KV cache."),
        explanation: format!("Two projections of the {d} features: a gate branch y through {act}, and x, convolved causally over the last {k} positions. The RG-LRU computes an input gate i and a recurrence gate r from x (σ of block-diagonal projections, {h} blocks of {bw}), a decay a = exp(−8 · r · softplus(Λ)) per channel, and updates h ← a ⊙ h + √(1 − a²) ⊙ i ⊙ x. h ⊙ y is projected back to {d}."),
        subtleties: vec![
            format!("The state does not grow with the context: {} values per layer ({w} channels, plus the convolution's last {} inputs of {w}), where attention would cache two vectors per token.", grouped((w + w * (k - 1)) as u128), k - 1),
            "√(1 − a²) keeps the state's scale steady whatever the decay: a channel that remembers long takes in little per token. At position 0 the state resets and the input enters whole.".into(),
            "The gates are block-diagonal: each block of channels is gated from its own channels only, as attention heads are separate.".into(),
            "The recurrence is linear in h (the gates read x, not h), so a prompt could be scanned in parallel; transformers runs it token by token, as decoding does.".into(),
        ],
    }
}
