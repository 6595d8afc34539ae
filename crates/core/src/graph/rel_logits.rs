//! Relative logits (Inkling 2): learned relative states scored against each query and added to its
//! scores, and the L2 clips of Q, K and those states.

use super::attention::rows;
use super::build::{n, Builder, Draft, Linear};
use super::*;
use crate::fmt::float as fmt_f;
use crate::naming::Role;

impl Builder<'_> {
    /// Inkling's relative logits for query head `q_idx`: its relative state R from the input,
    /// then one bias per key from the bank's column of the key's distance.
    pub(super) fn rel_logits(
        &mut self,
        rl: crate::spec::RelLogits,
        q_idx: &str,
        x_in: &str,
        scaled: bool,
    ) -> Vec<Node> {
        let (h, d) = (self.attn.heads, rl.d_rel);
        let proj = self.linear(Linear {
            role: Role::RelProj,
            title: "R projection".into(),
            w: "Wr",
            out: "R",
            input: x_in,
            rows: d,
            cols: self.attn_in,
            stored_rows: h * d,
            block: Some(rows(0, d, q_idx)),
            bias: false,
            component: Component::Attention,
            category: Category::Attention,
            cached: false,
            operation: format!(
                "Project the normalized input to this head's {d} relative features: how it weighs each distance profile"
            ),
        });
        let mut nodes = vec![proj];
        if let Some(c) = rl.clip {
            nodes.push(self.l2_clip("R", Some(Role::RelClipScale), Some(q_idx), c, false));
        }
        let p = self.param(
            Role::RelBank,
            false,
            vec![d, rl.extent],
            Component::Attention,
            true,
        );
        let bank = self.weight(p, "P", [n(d), n(rl.extent)], None);
        let b = self.act("B", [Dim::Seq, Dim::Seq]);
        let tau = if scaled {
            ", then times the query's scale τ"
        } else {
            ""
        };
        let step = self.step(Draft {
            title: "Relative logits".into(),
            op: Op::MatMul,
            category: Category::Attention,
            inputs: vec![bank],
            output: b,
            operation: format!(
                "Mix the {} learned distance profiles by each query's relative features: a bias for every key up to {} positions back",
                d, rl.extent
            ),
            equation: format!(
                "B[i, j] = R[i] · P[:, i − j] for 0 ≤ i − j < {}, 0 beyond{tau}",
                rl.extent
            ),
        });
        nodes.push(step);
        nodes
    }

    /// A head's `letter` (Q, K, or Inkling 2's relative states R), times its row of a learned
    /// scale where `scale` names one, scaled down to L2 norm `c` where longer (R in place).
    pub(super) fn l2_clip(
        &mut self,
        letter: &str,
        scale: Option<Role>,
        idx: Option<&str>,
        c: f64,
        cached: bool,
    ) -> Node {
        let a = &self.attn;
        let (rows_n, width) = match letter {
            "R" => (a.heads, a.rel_logits.map_or(0, |r| r.d_rel)),
            "Q" => (a.heads, a.head_dim),
            "K" => (a.kv_heads, a.head_dim),
            other => unreachable!("{other} has no L2 clip"),
        };
        let out_name = if letter == "R" {
            "R".to_string()
        } else {
            format!("{letter}ₙ")
        };
        let mut inputs = Vec::new();
        let u = if let Some(role) = scale {
            let p = self.param(role, false, vec![rows_n, width], Component::Attention, true);
            let row = idx.map(|i| format!("[{i}]"));
            inputs.push(self.weight(p, "s", [n(width), n(1)], row));
            format!("{letter} ⊙ s")
        } else {
            letter.to_string()
        };
        let out = if cached {
            self.cached(&out_name, self.seq(width))
        } else {
            self.act(&out_name, self.seq(width))
        };
        let c = fmt_f(c);
        self.step(Draft {
            title: format!("{letter} L2 clip"),
            op: Op::Norm,
            category: Category::Attention,
            inputs,
            output: out,
            operation: format!(
                "{}cale each position's {width}-dim {letter} down to length {c} where it is longer",
                if scale.is_some() {
                    "Multiply by a learned scale, then s"
                } else {
                    "S"
                }
            ),
            equation: format!("{out_name} = u · min(1, {c} / (‖u‖ + 10⁻⁶)), u = {u}"),
        })
    }
}
