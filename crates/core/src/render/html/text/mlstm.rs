//! The page's words for xLSTM's mLSTM.

use super::*;

/// xLSTM's mLSTM in words, with this model's sizes.
pub(super) fn mlstm_text(spec: &Spec, s: crate::spec::MLstm) -> Text {
    let (d, h) = (spec.hidden, s.heads);
    let (dk, dv) = (s.qk_dim / h, s.v_dim / h);
    let mut subtleties = vec![
        format!("The state does not grow with the context: per layer {} values ({h} memories of {dk} × {dv}, their normalizers and one stabilizer each).", grouped((h * (dk * dv + dk + 1)) as u128)),
        "The input gate is exponential, so the memory could overflow: each head keeps m, the running maximum of its log gates, and both gates are applied as exp(· − m). The read-out's denominator is at least exp(−m), the same floor of 1 before the rescaling.".into(),
        format!("Both gates' logits are soft-capped at {} (c · tanh(x / c)) before use; so are the output logits.", crate::fmt::float(s.gate_cap)),
    ];
    if s.fused {
        subtleties.push(format!("Stored fused (weight_mode \"fused\"): q, k, v and o are the rows of one {} × {d} projection in that order, the {h} input and {h} forget gates one of {} rows, and the MLP's gate and up one of twice its width: the same computation as separate projections.", 2 * s.qk_dim + 2 * s.v_dim, 2 * h));
    }
    Text {
        summary: format!("mLSTM: {h} heads each carry a {dk} × {dv} matrix memory, written through gates; no softmax, no KV cache."),
        explanation: format!("From the normed input: queries and keys ({dk} per head), values and an output gate ({dv} per head), and per head an input and a forget gate. Each token, a head's memory C fades by σ(f) and adds k vᵀ weighted by exp(i); a normalizer n sums the keys the same way. The query reads C, divided by |q · n|; each head is layer-normed, gated by σ(o) and the {} features are projected back to {d}.", s.v_dim),
        subtleties,
    }
}
