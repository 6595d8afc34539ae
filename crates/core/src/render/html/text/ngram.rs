//! The page's words for n-gram embeddings.

use super::*;

/// Gemma 4's per-layer embeddings, as the part in each layer that gates them in.
pub(super) fn ngram_text(spec: &Spec) -> Text {
    let p = spec
        .ngram_ple
        .as_ref()
        .expect("an n-gram part comes from n-gram embeddings");
    let (d, n) = (spec.hidden, spec.streams());
    let rows: u128 = (0..p.layers.len()).map(|i| p.rows(i) as u128).sum();
    let (size, count) = p.shards(p.rows(0));
    Text {
        summary: format!("In layers {}, each token's n-grams read {} rows of a hashed table, gated into every stream.", p.layers, p.heads()),
        explanation: format!(
            "Hashed n-gram embeddings: for each n from 2 to {ng}, the token and the n − 1 before it (never reaching back past an end of sequence, id {eos}) are each multiplied by an odd constant and XORed; {per} heads per n take that modulo a prime of their own (from {base} on) and read a {hd}-value row of the layer's table. The {heads} rows, {w} values, give one {d}-value value and, per stream, a key; each of the {n} streams, normed, is matched with its key (a scaled dot product, signed square root, σ) to gate the value, and the gated values plus a causal convolution of them ({k} taps {ng} positions apart, normed, then SiLU) join the streams before the mixer reads them.",
            ng = p.ngram,
            eos = p.eos,
            per = p.heads_per_ngram,
            base = p.vocab_base,
            hd = p.head_dim(),
            heads = p.heads(),
            w = p.width,
            k = p.kernel,
        ),
        subtleties: vec![
            format!("The tables are most of the model: {} rows of {} in all ({} parameters), each layer's its own size (its heads' primes summed, padded to a multiple of {}). A token reads {} rows of each, so the tables can live in slower memory; checkpoints store each in shards of {size} rows ({count} in layer {}'s).", grouped(rows), p.head_dim(), short(rows * p.head_dim() as u128), p.divisor, p.heads(), p.layers.first().unwrap_or(0)),
            format!("Between decoding steps each such layer carries its last {} ids and its convolution's last {} inputs per channel ({} channels).", p.ngram - 1, p.reach(), n * d),
            "The multipliers, the heads' sizes and their offsets are stored in the checkpoint too, as int64 buffers, and counted with the parameters as transformers counts its state dict.".into(),
        ],
    }
}
