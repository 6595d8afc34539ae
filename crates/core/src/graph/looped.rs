//! Dory's looped section (`Looped`), drawn before the decoder block whose layers it runs: the
//! normed output of the input layers, and the entry of each pass through the looped layers. The
//! block below holds each layer once; the looped layers' steps cost a token once per pass
//! (`Spec::runs`).

use super::build::{Builder, Draft};
use super::*;
use crate::layers::LayerSet;
use crate::spec::Looped;

impl Builder<'_> {
    pub(super) fn looped(&mut self, l: Looped) -> Scope {
        let d = self.spec.hidden;
        let (input, looped) = (LayerSet::range(0, l.input), l.layers().describe());
        let output = LayerSet::range(l.input + l.recurrent, self.spec.layers);
        let norm = self.norm_name();
        let eps = self.spec.norm.eps;
        let (source, after) = match l.input {
            0 => ("the embeddings".to_string(), "the embeddings".to_string()),
            n => (
                format!("the output of the input section ({})", input.describe()),
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
        let rest = if output.is_empty() {
            String::new()
        } else {
            format!("; then {} once", output.describe())
        };
        let xl = self.act("Xₗ", self.seq(d));
        children.push(self.step(Draft {
            title: "Loop entry".into(),
            op: Op::Add,
            category: Category::Norm,
            inputs: vec![x0],
            output: xl,
            operation: format!(
                "Before each of the {} passes through {looped}, norm the stream and add X₀{rest}",
                l.loops
            ),
            equation: format!("Xₗ = X / √(ΣX² + ε) + X₀, then {looped}; {} times", l.loops),
        }));
        Scope {
            kind: ScopeKind::Loop,
            title: format!("Looped {looped}: {} passes", l.loops),
            end: "Loop end".into(),
            repeat: 1,
            active: None,
            layers: None,
            children,
        }
    }
}
