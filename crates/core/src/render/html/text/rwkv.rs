//! The page's words for RWKV's time and channel mixing.

use super::*;

/// RWKV's time mixing in words, with this model's sizes.
pub(super) fn rwkv_text(spec: &Spec, r: crate::spec::Rwkv) -> Text {
    let (d, a) = (spec.hidden, r.attn);
    let mut sub = vec![
        format!("The state does not grow with the context: per layer {} values (the WKV sums num, den and their running maximum exponent over {a} channels, and the previous token's input of {d} for each of the two mixings), where attention would cache two vectors per token.", grouped((3 * a + 2 * d) as u128)),
        "The token shift is RWKV's only other look back: each projection reads a per-channel blend of this token and the one before it.".into(),
        "The sums are kept with their largest exponent factored out (num and den scaled by exp(−p)), so exp(k) never overflows; the ratio is unchanged.".into(),
    ];
    if r.rescale_every > 0 && r.halvings(spec.layers - 1) > 0 {
        sub.push(format!("In inference transformers halves the stream after every {}th layer and divides the output projections of layer b by 2^⌊b/{}⌋ to match: the same logits, up to the norms' ε, with sums that stay in range in half precision.", r.rescale_every, r.rescale_every));
    }
    Text {
        summary: format!("RWKV time mixing: {a} channels each carry a decayed sum of exp(key)-weighted values; no softmax, no KV cache."),
        explanation: format!("From the normed input and the previous token's, mixed per channel, three projections of the {d} features give K, V and R ({a} each). Each channel's WKV is a weighted average of its values so far, weight exp(k) decayed by exp(−exp(w)) per token, the current token's weight boosted by exp(u). σ(R) gates it and a projection returns {d} features."),
        subtleties: sub,
    }
}

/// RWKV's channel mixing in words, with this model's sizes.
pub(super) fn channel_mix_text(spec: &Spec) -> Text {
    let (d, f) = (spec.hidden, spec.mlp.intermediate);
    Text {
        summary: format!("Channel mixing: {d} → {f} (squared ReLU) → {d}, gated by σ of a receptance."),
        explanation: "σ(W_r x_r) ⊙ W_v ReLU(W_k x_k)², where x_k and x_r blend this token's normed input with the previous token's, channel by channel.".into(),
        subtleties: vec![
            "Unlike a transformer's MLP it looks one token back: the blend with the previous token is its state.".into(),
            format!("The receptance projection is square ({d} × {d}) and has no activation but σ."),
        ],
    }
}
