//! The page's words for lightning attention.

use super::*;

/// Lightning attention in words, with this model's sizes.
pub(super) fn lightning_text(spec: &Spec, s: crate::spec::Lightning) -> Text {
    let (d, h, hd, inner) = (spec.hidden, s.heads, s.head_dim, s.inner());
    let layers = spec.layers_where(|l| l.mixer == Mixer::Lightning);
    let act = s.act.words();
    let f = |x: f64| format!("{x:.4}");
    let (first, last) = (
        layers.first().unwrap_or(0),
        layers.iter().last().unwrap_or(0),
    );
    Text {
        summary: format!("Lightning attention: {h} heads each carry a {hd} × {hd} memory from key to value that fades at a fixed rate; no softmax, no KV cache."),
        explanation: format!("One projection of the {d} features gives each head's q, k and v side by side ({} rows), all through {act}. Each head's memory S fades by exp(−s) and takes k ⊗ v every token; the head reads o = Sᵀq. The {inner} output features are RMS-normed together, gated by σ of a second projection of the input, and projected back to {d}.", 3 * inner),
        subtleties: vec![
            format!("The memory does not grow with the context: {} values per layer ({h} heads × {hd} × {hd}), where softmax attention would cache two vectors per token.", grouped((h * hd * hd) as u128)),
            format!("The rates are not learned: s = 2^(−8(h+1)/{h}) · (1 − b/(L−1)) for head h of layer b, so early heads forget fastest and deep layers barely forget (head 0: {} in layer {first}, {} in layer {last}). The checkpoint stores them as slope_rate.", f(s.slope(first, spec.layers, 0)), f(s.slope(last, spec.layers, 0))),
            format!("transformers computes a prompt in chunks of {}: within a chunk a masked product (q kᵀ ⊙ decay) v, between chunks the memory carried; the checkpoint stores those decay tables too (query_decay, key_decay, diagonal_decay). Decoding runs the recurrence; both give the same sum.", s.block),
            "Without a softmax the scores are not normalized: the RMS norm after the read-out keeps the output's scale in check.".into(),
        ],
    }
}
