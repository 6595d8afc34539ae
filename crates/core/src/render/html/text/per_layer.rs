//! The page's words for per-layer inputs.

use super::*;

pub(super) fn per_layer_text(spec: &Spec, p: crate::spec::PerLayerInput) -> Text {
    let (l, w, d) = (spec.layers, p.width, spec.hidden);
    Text {
        summary: format!("Each layer adds {w} values of its own per token, gated by the stream."),
        explanation: format!(
            "Per-layer embeddings: besides the usual embedding, every token has {l} × {w} values, one share per layer, from a second table ({} rows) plus the embeddings projected to the same size. At the end of layer b, the stream is projected to {w} values, passed through {}, multiplied by layer b's share, projected back to {d}, normed and added: each layer gets a token-specific signal that does not have to be carried through the stream.",
            p.vocab,
            spec.mlp.act.label()
        ),
        subtleties: vec![
            format!("The second table holds {} parameters, more than the layers' own weights in small models: it is read one row per token, so it can live in slower memory while the layers run.", short(p.vocab as u128 * (l * w) as u128)),
            format!("The two sources are combined before the first layer: (RMSNorm(W · x / √{d}) + table row · √{w}) / √2, normed per layer's {w} values."),
        ],
    }
}
