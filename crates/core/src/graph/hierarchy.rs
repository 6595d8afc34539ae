//! HRM-Text's hierarchical loop (`Hierarchy`), drawn before the decoder block whose layers it
//! runs: the stored initial low-level state, and the two stacks' visits with the sums that feed
//! them. The block below holds each layer once; its steps cost a token once per visit of the
//! layer's stack (`Spec::runs`).

use super::build::{n, Builder, Draft};
use super::*;
use crate::naming::Role;
use crate::spec::Hierarchy;

impl Builder<'_> {
    pub(super) fn hierarchy(&mut self, h: Hierarchy) -> Scope {
        let d = self.spec.hidden;
        let (per, high, low) = (h.per_stack, h.high_cycles, h.low_cycles);
        let p = self.param(Role::LowInit, false, vec![d], Component::Embedding, false);
        let init = self.weight(p, "z₀", [n(d), n(1)], None);
        let zl = self.act("z_L", self.seq(d));
        let mut children = vec![self.step(Draft {
            title: "Initial low-level state".into(),
            op: Op::Route,
            category: Category::Embed,
            inputs: vec![init],
            output: zl,
            operation: "The low-level state starts as one stored vector at every position; the high-level state starts as the embeddings".into(),
            equation: "z_L = z₀ (each position), z_H = X".into(),
        })];
        let low_in = self.act("u_L", self.seq(d));
        children.push(self.step(Draft {
            title: "Low-level stack".into(),
            op: Op::Add,
            category: Category::Norm,
            inputs: vec![zl],
            output: low_in,
            operation: format!(
                "Layers 0–{} (the block below, model.L_module) read the sum of both states, and their stack's weightless norm writes the new low-level state: {low} times per cycle",
                per - 1
            ),
            equation: "u_L = z_L + z_H;  z_L ← norm(L(u_L))".into(),
        }));
        let high_in = self.act("u_H", self.seq(d));
        children.push(self.step(Draft {
            title: "High-level stack".into(),
            op: Op::Add,
            category: Category::Norm,
            inputs: vec![low_in],
            output: high_in,
            operation: format!(
                "Then layers {per}–{} (model.H_module) update the high-level state the same way, once per cycle; {high} cycles, and the last z_H is the output (its norm the final norm below)",
                2 * per - 1
            ),
            equation: "u_H = z_H + z_L;  z_H ← norm(H(u_H))".into(),
        }));
        Scope {
            kind: ScopeKind::Hierarchy,
            title: format!(
                "Hierarchical loop: {high} cycles of {low} low-level visits and 1 high-level"
            ),
            end: "Hierarchical loop end".into(),
            repeat: 1,
            active: None,
            layers: None,
            children,
        }
    }
}
