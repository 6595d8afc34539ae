//! The page's words for BLT's parts (`ByteLatent`): its byte-level stacks and the latent
//! transformer's input, with the model's numbers.

use super::Text;
use crate::fmt::{float, grouped, short};
use crate::render::html::parts::Part;
use crate::spec::{ByteLatent, Patching, Spec, Stack};

fn window(s: &Spec) -> String {
    ByteLatent::window(s).map_or("full causal attention".into(), |w| {
        format!("each position seeing the last {w}")
    })
}

fn layers(n: u64) -> String {
    format!("{n} layer{}", if n == 1 { "" } else { "s" })
}

pub(super) fn patch_input(spec: &Spec, bl: &ByteLatent) -> Text {
    let (k, e) = (bl.cross_k, bl.encoder.hidden);
    let wide = k * e;
    let projected = if wide == spec.hidden {
        format!(
            "already the latent width, {}, so no projection",
            spec.hidden
        )
    } else {
        format!("projected to the latent width, {}", spec.hidden)
    };
    Text {
        summary: format!("The latent transformer's input: one position per patch, its {k} encoder queries side by side."),
        explanation: format!(
            "The local encoder leaves {k} vectors of {e} per patch; laid side by side they are {wide} features, {projected}. The latent transformer's {} layers then run over patches, not bytes, with positions 0, 1, 2 … counted in patches: this is where most of the model's parameters and, per patch, most of its compute sit.",
            spec.layers
        ),
        subtleties: vec![
            "Its attention is causal over patches, and a patch's vector pools bytes up to its last one; the decoder reads, at each byte, the output of the patch before its own, so no byte sees itself or later ones through it.".into(),
        ],
    }
}

pub(super) fn stack(spec: &Spec, bl: &ByteLatent, which: Stack, part: &Part, share: f64) -> Text {
    let k = bl.cross_k;
    let size = format!(
        "{} parameters ({share:.1}% of the model)",
        short(part.params)
    );
    match which {
        Stack::Patcher => {
            let p = bl
                .patcher
                .as_ref()
                .expect("a patcher part comes from a patcher");
            let rule = match bl.patching {
                Patching::Entropy(t) => format!("A patch starts at bytes 0 and 1 and after every later byte whose entropy exceeds {} nats: a hard-to-predict byte opens a new patch, so predictable runs of bytes share one step of the latent transformer.", float(t)),
                Patching::Bytes { .. } => "This config gives no patch_size, so the entropies go unused and every byte is a patch of its own.".into(),
            };
            let cut = bl.max_patch.map_or(String::new(), |m| format!(" Patches longer than {m} bytes are cut into pieces of {m}, and empty ones dropped."));
            Text {
                summary: "The entropy model: a small byte-level language model whose uncertainty about the next byte cuts the bytes into patches.".into(),
                explanation: format!(
                    "It reads the bytes with its own embedding, {} of width {} ({}), its own norm and head over {} byte tokens, and turns each position's predicted distribution into an entropy, H = −Σ p ln p. {rule}{cut} Its {size} are counted in the total; transformers freezes them.",
                    layers(p.layers), p.hidden, window(p), grouped(p.vocab as u128)
                ),
                subtleties: vec![
                    "Patches depend on every byte so far, so BLT decodes by running the whole sequence again: transformers' own generation does (its cache fails in 5.24 unless use_cache=False), and so does anatomy's executor. The KV cache and FLOPs here count one pass.".into(),
                    match (ByteLatent::rope(p).full.theta, ByteLatent::rope(spec).full.theta) {
                        (own, latent) if own == latent => format!("Its RoPE base is {}, the latent transformer's too.", float(own)),
                        (own, latent) => format!("Its RoPE base is {}, not the latent transformer's {}.", float(own), float(latent)),
                    },
                ],
            }
        }
        Stack::Encoder => {
            let e = &bl.encoder;
            let h = &bl.hash;
            let count = h.functions * h.sizes.len() as u64;
            let sizes: Vec<String> = h.sizes.iter().map(u64::to_string).collect();
            let cross = if bl.encoder_cross_all {
                "after every layer a cross-attention of its own recomputes the patches from that layer's byte states (only the last one's result goes on)".to_string()
            } else {
                "after its last layer".to_string()
            };
            Text {
                summary: format!("Bytes to patches: byte and hashed n-gram embeddings, {} over bytes, then {k} queries per patch that read the patch's bytes.", layers(e.layers)),
                explanation: format!(
                    "Each byte's embedding (a table of {} rows) gets {count} more rows added: for each n in {} the n bytes ending at the byte are hashed into one of {} rows of a table block of its own ({} rows in all, {}). {} of width {} follow ({}). Then, {cross}, each patch's bytes are max-pooled into one vector, widened to {k} queries, and those queries attend to the states of the patch's own bytes (RMS-normed queries and keys, no other patch visible); the result, plus twice the queries, is the patch's embedding.",
                    e.vocab, sizes.join(", "), grouped(h.vocab as u128), grouped(h.rows() as u128), short(h.rows() as u128 * e.hidden as u128), layers(e.layers), e.hidden, window(e),
                ),
                subtleties: vec![
                    format!("The hash table dominates the parameter count ({size} for the whole encoder) but costs one row lookup per n-gram: its parameters are active yet do almost no arithmetic."),
                    "The hash is Σ byteᵢ · primeⁱ in wrapping 64-bit arithmetic, taken modulo the block size in Python's sense (never negative), with zeros before the first byte.".into(),
                    "A patch with no bytes (the last one can be empty) pools to zeros, and its queries, seeing no byte, attend to all bytes evenly: transformers adds the float minimum to every masked score rather than −∞.".into(),
                ],
            }
        }
        Stack::Decoder => {
            let d = &bl.decoder;
            let cross = if bl.decoder_cross_all {
                format!("before each of its {} layers' self-attention", d.layers)
            } else {
                "before its first layer".to_string()
            };
            Text {
                summary: format!("Patches back to bytes: each byte reads the latent output of the patch before its own, then {} over bytes and the head.", layers(d.layers)),
                explanation: format!(
                    "The decoder starts from the encoder's final byte states. The latent transformer's output is projected to {k} keys of {} per patch; {cross}, each byte cross-attends to the {k} keys of the patch that ends before it (the first bytes, to the first patch), and the result, plus twice its input, joins the stream. {} of width {} ({}) follow, then its RMSNorm and the head over {} byte tokens: {size}.",
                    d.hidden, layers(d.layers), d.hidden, window(d), grouped(spec.vocab as u128)
                ),
                subtleties: vec![
                    "The encoder and decoder share one sliding-window mask (local_attention_window_len); the decoder's own config has no window.".into(),
                ],
            }
        }
    }
}
