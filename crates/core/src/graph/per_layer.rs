//! Per-layer inputs (Gemma 3n, Gemma 4): every layer's own embedding, computed once, gated into
//! each layer after its FFN.

use super::build::{n, Builder, Draft, Linear};
use super::*;
use crate::naming::Role;

impl<'s> Builder<'s> {
    /// Per-layer embeddings (Gemma 4): every layer's `width` values per token, from a table of
    /// their own and from the embeddings.
    pub(super) fn per_layer_inputs(
        &mut self,
        p: crate::spec::PerLayerInput,
        ids: usize,
    ) -> Vec<Node> {
        let spec = self.spec;
        let (d, w) = (spec.hidden, p.width);
        let lw = spec.layers * w;
        let table = self.param(
            Role::PleEmbed,
            false,
            vec![p.vocab, lw],
            Component::Embedding,
            false,
        );
        let e = self.push(
            "Eₚ",
            [n(lw), n(p.vocab)],
            TensorKind::Weight {
                param: table,
                slice: None,
                note: Some("drawn transposed: one column per token".into()),
            },
        );
        let looked = self.act("Pₜ", self.seq(lw));
        let mut steps = vec![self.step(Draft {
            title: "Per-layer embedding".into(),
            op: Op::Lookup,
            category: Category::Embed,
            inputs: vec![ids, e],
            output: looked,
            operation: format!(
                "Look up each token's {w} values for each of the {} layers, scaled by √{w}",
                spec.layers
            ),
            equation: format!("Pₜ = Eₚ · T · √{w}"),
        })];
        let proj = self.param(
            Role::PleProj,
            false,
            vec![lw, d],
            Component::Embedding,
            false,
        );
        let wp = self.weight(proj, "Wₚ", [n(lw), n(d)], None);
        let projected = self.act("Pₓ", self.seq(lw));
        steps.push(self.step(Draft {
            title: "Per-layer projection".into(),
            op: Op::MatMul,
            category: Category::Embed,
            inputs: vec![wp],
            output: projected,
            operation: format!(
                "Project the embeddings to every layer's {w} values, scaled by 1/√{d}"
            ),
            equation: format!("Pₓ = Wₚ · X / √{d}"),
        }));
        let norm = self.param(Role::PleProjNorm, false, vec![w], Component::Norm, false);
        let g = self.weight(norm, "γₚ", [n(w), n(1)], None);
        let normed = self.act("Pₓ′", self.seq(lw));
        steps.push(self.step(Draft {
            title: format!("Per-layer projection {}", self.norm_name()),
            op: Op::Norm,
            category: Category::Embed,
            inputs: vec![g],
            output: normed,
            operation: format!("Normalize each layer's {w} values of each position (RMSNorm, one weight for all layers)"),
            equation: format!("Pₓ′ = γₚ ⊙ Pₓ / √(mean(Pₓ²) + ε) per layer's {w}, ε = {}", spec.norm.eps),
        }));
        let both = self.act("Pₗ", self.seq(lw));
        steps.push(self.step(Draft {
            title: "Per-layer inputs".into(),
            op: Op::Add,
            category: Category::Embed,
            inputs: vec![looked],
            output: both,
            operation: "Add the looked-up and the projected values, scaled by 1/√2: layer b reads its share".into(),
            equation: "Pₗ = (Pₓ′ + Pₜ) / √2".into(),
        }).at(Point::PerLayerInputs));
        steps
    }

    /// The end of a layer after its FFN (Gemma 4): its per-layer input gated in, then its stored
    /// scalar.
    /// `source`: what the per-layer gate reads (the layer's output, or Gemma 3n's scaled active
    /// stream).
    pub(super) fn layer_tail(&mut self, source: &str) -> Vec<Node> {
        let spec = self.spec;
        let d = spec.hidden;
        let mut steps = Vec::new();
        if let Some(p) = spec.per_layer_input {
            let w = p.width;
            let mut inner = Vec::new();
            let lin = |role, title, names, rows, cols, operation| {
                Linear::whole(role, title, names, rows, cols, Category::Ffn, operation)
            };
            inner.push(
                self.linear(lin(
                    Role::PleGate,
                    "Per-layer gate",
                    ["Wₚg", "Gₚ", source],
                    w,
                    d,
                    format!("Project the layer's output to {w} gate values"),
                ))
                .at(Point::PleGate),
            );
            let share = self.latest("Pₗ");
            let a = self.act("Aₚ", self.seq(w));
            let act = spec.mlp.act.label();
            inner.push(
                self.step(Draft {
                    title: "Per-layer input gating".into(),
                    op: Op::Activation,
                    category: Category::Ffn,
                    inputs: vec![share],
                    output: a,
                    operation: format!(
                        "Gate this layer's {w} per-layer values by {act} of the gate"
                    ),
                    equation: format!("Aₚ = {act}(Gₚ) ⊙ Pₗ[b·{w} : (b+1)·{w}]"),
                })
                .at(Point::PleAct),
            );
            inner.push(
                self.linear(lin(
                    Role::PleUp,
                    "Per-layer up-projection",
                    ["Wₚu", "Yₚ", "Aₚ"],
                    d,
                    w,
                    format!("Project the {w} gated values back to {d}"),
                ))
                .at(Point::PleUp),
            );
            let title = format!("Per-layer {}", self.norm_name());
            inner.push(
                self.norm_step(&title, Role::PleNorm, "γₚᵤ", "Yₚ", "Yₚ′", d, true, None)
                    .at(Point::PleNorm),
            );
            if let Some(Node::Step(s)) = inner.last_mut() {
                s.category = Category::Ffn;
            }
            steps.push(Node::Scope(self.scope(
                ScopeKind::PerLayer,
                "Per-layer input",
                "Per-layer end",
                1,
                inner,
            )));
            let (width, operation, equation) = match spec.altup() {
                // Gemma 3n: into every stream after the first.
                Some(a) => (
                    a.streams * d,
                    "Add the per-layer signal to every stream after the first".to_string(),
                    format!("Xᵦ₊₁ᵢ = Xᵦ₊₁ᵢ + Yₚ′, 1 ≤ i < {}", a.streams),
                ),
                None => (
                    d,
                    "Add the per-layer signal to the layer's output".to_string(),
                    "Xᵦ₊₁ = Xᵦ₊₁ + Yₚ′".to_string(),
                ),
            };
            let x = self.act("Xᵦ₊₁", self.seq(width));
            steps.push(
                self.step(Draft {
                    title: "Per-layer residual".into(),
                    op: Op::Add,
                    category: Category::Norm,
                    inputs: vec![],
                    output: x,
                    operation,
                    equation,
                })
                .at(Point::PleResid),
            );
        }
        if spec.layer_scalar {
            let p = self.param(Role::LayerScalar, false, vec![1], Component::Norm, true);
            let s = self.weight(p, "sᵦ", [n(1), n(1)], None);
            let x = self.act("Xᵦ₊₁", self.seq(d));
            steps.push(
                self.step(Draft {
                    title: "Layer scale".into(),
                    op: Op::Scale,
                    category: Category::Norm,
                    inputs: vec![s],
                    output: x,
                    operation: "Multiply the layer's output by its stored scalar".into(),
                    equation: "Xᵦ₊₁ = sᵦ · Xᵦ₊₁".into(),
                })
                .at(Point::LayerScalar),
            );
        }
        steps
    }
}
