//! Dory's looped section (`Looped`), drawn before the decoder block whose layers it runs: the
//! normed output of the input layers, and the entry of each pass through the looped layers. The
//! block below holds each layer once; the looped layers' steps cost a token once per pass
//! (`Spec::runs`).

use super::build::{Builder, Draft};
use super::*;
use crate::spec::Looped;

impl Builder<'_> {
    pub(super) fn looped(&mut self, l: Looped) -> Scope {
        let d = self.spec.hidden;
        let (first, last) = (l.input, l.input + l.recurrent - 1);
        let norm = self.norm_name();
        let eps = self.spec.norm.eps;
        let (source, after) = match first {
            0 => ("the embeddings".to_string(), "the embeddings".to_string()),
            1 => ("layer 0's output".to_string(), "layer 0".to_string()),
            n => (
                format!("the output of the input layers (0–{})", n - 1),
                format!("layer {}", n - 1),
            ),
        };
        let x0 = self.act("X₀", self.seq(d));
        let mut children = vec![self.step(Draft {
            title: "Loop input".into(),
            op: Op::Norm,
            category: Category::Norm,
            inputs: vec![],
            output: x0,
            operation: format!("Norm {source} with the final {norm}: every pass starts from it"),
            equation: format!("X₀ = X / √(ΣX² + ε), ε = {eps}, X the stream after {after}"),
        })];
        let rest = match (last + 1, self.spec.layers) {
            (a, n) if a >= n => String::new(),
            (a, n) if a + 1 == n => format!("; layer {a} then runs once"),
            (a, n) => format!("; layers {a}–{} then run once", n - 1),
        };
        let xl = self.act("Xₗ", self.seq(d));
        children.push(self.step(Draft {
            title: "Loop entry".into(),
            op: Op::Add,
            category: Category::Norm,
            inputs: vec![x0],
            output: xl,
            operation: format!(
                "Before each of the {} passes through layers {first}–{last}, norm the stream and add X₀{rest}",
                l.loops
            ),
            equation: format!("Xₗ = X / √(ΣX² + ε) + X₀, then layers {first}–{last}; {} times", l.loops),
        }));
        Scope {
            kind: ScopeKind::Loop,
            title: format!("Looped layers {first}–{last}: {} passes", l.loops),
            end: "Loop end".into(),
            repeat: 1,
            active: None,
            layers: None,
            children,
        }
    }
}
