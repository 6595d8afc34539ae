//! xLSTM's mLSTM: a key × value matrix memory per head, written through an exponential input
//! gate and faded by a sigmoid forget gate, with a running maximum that keeps the exponentials
//! in range; read by the query, normalized, layer-normed per head, gated and projected back.

use super::build::{n, Builder, Draft, Linear};
use super::*;
use crate::naming::Role;
use crate::spec::MLstm;

impl Builder<'_> {
    pub(super) fn mlstm(&mut self, x_in: &str, s: &MLstm) -> Vec<Node> {
        let d = self.spec.hidden;
        let (h, qk, v) = (s.heads, s.qk_dim, s.v_dim);
        let (dk, dv) = (qk / h, v / h);
        let (comp, cat) = (Component::Mixer, Category::Mixer);
        let mut nodes = Vec::new();
        let lin = |role, title: &str, w, out, rows, bias, operation: String| Linear {
            role,
            title: title.into(),
            w,
            out,
            input: x_in,
            rows,
            cols: d,
            stored_rows: rows,
            block: None,
            bias,
            component: comp,
            category: cat,
            cached: false,
            operation,
        };
        // Fused (`weight_mode` "fused"): q | k | v | o rows of one stored projection, the input
        // and forget gates of another; each step reads its block.
        let qkvo = 2 * qk + 2 * v;
        let (in_role, gate_role) = if s.fused {
            (Some(Role::SsmIn), Some(Role::SsmBa))
        } else {
            (None, None)
        };
        let mut at = 0;
        for (role, title, w, out, rows, what) in [
            (
                Role::SsmQ,
                "Query projection",
                "W_q",
                "Q",
                qk,
                format!("{h} queries of {dk}"),
            ),
            (
                Role::SsmK,
                "Key projection",
                "W_k",
                "K",
                qk,
                format!("{h} keys of {dk}"),
            ),
            (
                Role::SsmV,
                "Value projection",
                "W_v",
                "V",
                v,
                format!("{h} values of {dv}"),
            ),
            (
                Role::SsmZ,
                "Output gate projection",
                "W_o",
                "O",
                v,
                format!("a gate per value feature ({v})"),
            ),
        ] {
            let mut l = lin(
                in_role.unwrap_or(role),
                title,
                w,
                out,
                rows,
                s.bias,
                format!("Project the normed input to {what}"),
            );
            if s.fused {
                l.stored_rows = qkvo;
                l.block = Some(format!("{at}:{}", at + rows));
            }
            at += rows;
            nodes.push(self.linear(l));
        }
        let cap = crate::fmt::float(s.gate_cap);
        for (g, (role, title, w, pre, out, what)) in [
            (
                Role::SsmBeta,
                "Input gate",
                "W_i",
                "I₀",
                "I",
                "how strongly each head writes this token",
            ),
            (
                Role::SsmAlpha,
                "Forget gate",
                "W_f",
                "F₀",
                "F",
                "how much of each head's memory this token keeps",
            ),
        ]
        .into_iter()
        .enumerate()
        {
            let mut l = lin(
                gate_role.unwrap_or(role),
                &format!("{title} projection"),
                w,
                pre,
                h,
                true,
                format!("One logit per head: {what}"),
            );
            if s.fused {
                l.stored_rows = 2 * h;
                l.block = Some(format!("{}:{}", g as u64 * h, (g as u64 + 1) * h));
            }
            nodes.push(self.linear(l));
            let o = self.act(out, self.seq(h));
            nodes.push(self.step(Draft {
                title: format!("{title} soft cap"),
                op: Op::Activation,
                category: cat,
                inputs: vec![],
                output: o,
                operation: format!("Squash the logits smoothly into (−{cap}, {cap})"),
                equation: format!("{out} = {cap} · tanh({pre} / {cap})"),
            }));
        }
        let (q, k, vv) = (self.latest("Q"), self.latest("K"), self.latest("V"));
        let (i, f) = (self.latest("I"), self.latest("F"));
        let m = self.push("m", [n(h), n(1)], TensorKind::State);
        nodes.push(self.step(Draft {
            title: "Stabilizer".into(),
            op: Op::Scan { flops: 4 * h },
            category: cat,
            inputs: vec![i, f],
            output: m,
            operation: "Each head's running maximum of its log gates: the exponentials below are taken relative to it, so none overflows".into(),
            equation: "m ← max(logσ(F) + m, I)".into(),
        }));
        let c = self.push("C", [n(qk), n(dv)], TensorKind::State);
        nodes.push(self.step(Draft {
            title: "Memory update".into(),
            op: Op::Scan { flops: 4 * h * dk * dv },
            category: cat,
            inputs: vec![k, vv, m],
            output: c,
            operation: format!("Each head's {dk} × {dv} memory fades by its forget gate and adds this token's key ⊗ value, weighted by its exponential input gate: one step per token, the same size at any context"),
            equation: "C ← e^{logσ(F) + m₋ − m} C + e^{I − m} K Vᵀ, per head".into(),
        }).at(Point::SsmState));
        let nrm = self.push("n", [n(qk), n(1)], TensorKind::State);
        nodes.push(self.step(Draft {
            title: "Normalizer update".into(),
            op: Op::Scan { flops: 4 * qk },
            category: cat,
            inputs: vec![k, m],
            output: nrm,
            operation: "The sum of the keys written, weighted the same way: what the read-out divides by".into(),
            equation: "n ← e^{logσ(F) + m₋ − m} n + e^{I − m} K, per head".into(),
        }));
        let hh = self.act("H", self.seq(v));
        nodes.push(self.step(Draft {
            title: "Memory read-out".into(),
            op: Op::Scan { flops: 2 * h * dk * dv + 2 * qk },
            category: cat,
            inputs: vec![q, c, nrm, m],
            output: hh,
            operation: format!("Each head reads its memory with its query scaled by 1/√{dk}, divided by how much of what it reads was written (at least e^−m)"),
            equation: format!(
                "H = (Q/√{dk})ᵀ C / (max(|(Q/√{dk}) · n|, e^−m) + {})",
                crate::fmt::float(s.eps)
            ),
        }).at(Point::SsmScan));
        let p = self.param(Role::SsmNorm, false, vec![v], Component::Norm, true);
        let mut inputs = vec![self.weight(p, "γₕ", [n(v), n(1)], None)];
        if s.bias {
            let pb = self.param(Role::SsmNorm, true, vec![v], Component::Norm, true);
            inputs.push(self.weight(pb, "βₕ", [n(v), n(1)], None));
        }
        let normed = self.act("H′", self.seq(v));
        nodes.push(self.step(Draft {
            title: "Per-head LayerNorm".into(),
            op: Op::Norm,
            category: cat,
            inputs,
            output: normed,
            operation: format!(
                "Normalize each head's {dv} features apart (LayerNorm), then scale{}",
                if s.bias { " and shift" } else { "" }
            ),
            equation: format!(
                "H′ = γₕ ⊙ (H − mean) / √(var(H) + ε){}, per head of {dv}, ε = {}",
                if s.bias { " + βₕ" } else { "" },
                crate::fmt::float(s.norm_eps)
            ),
        }));
        let o = self.latest("O");
        let gated = self.act("Y₀", self.seq(v));
        nodes.push(self.step(Draft {
            title: "Output gate".into(),
            op: Op::Activation,
            category: cat,
            inputs: vec![o],
            output: gated,
            operation: "Gate every feature by σ(o)".into(),
            equation: "Y₀ = σ(O) ⊙ H′".into(),
        }));
        nodes.push(self.mixer_out("Y₀", v, s.bias));
        nodes
    }
}
