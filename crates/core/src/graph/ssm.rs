//! Mamba2's mixer as steps: three row blocks of one input projection (the gate z, the
//! convolved part U, the step Δ), the causal convolution with its window carried between tokens,
//! x, B and C taken from the convolved part, the scan through a state of fixed size, its read-out,
//! the gated and grouped RMS norm, and the output projection back to the stream.

use super::build::{n, Builder, Draft, Linear};
use super::*;
use crate::naming::Role;
use crate::spec::Ssm;

impl Builder<'_> {
    pub(super) fn mamba2(&mut self, x_in: &str, s: &Ssm) -> Vec<Node> {
        let d = self.spec.hidden;
        let (heads, p, state, groups) = (s.heads, s.head_dim, s.state, s.groups);
        let (inner, conv, total) = (s.inner(), s.conv_dim(), s.in_proj());
        let gn = groups * state;
        let (comp, cat) = (Component::Mixer, Category::Mixer);
        let mut nodes = Vec::new();
        // U last: the convolution reads the step before it.
        for (w, out, rows, start, what) in [
            ("W_z", "Z", inner, 0, "gate z"),
            ("W_Δ", "Δ₀", heads, inner + conv, "step size, one per head"),
            ("W_u", "U", conv, inner, "convolved part (x, B, C)"),
        ] {
            nodes.push(self.linear(Linear {
                role: Role::SsmIn,
                title: match out {
                    "Z" => "Gate projection".into(),
                    "U" => "Convolution input projection".into(),
                    _ => "Step-size projection".into(),
                },
                w,
                out,
                input: x_in,
                rows,
                cols: d,
                stored_rows: total,
                block: Some(format!("{start}:{}", start + rows)),
                bias: s.bias,
                component: comp,
                category: cat,
                cached: false,
                operation: format!(
                    "Project {d} features to the {what}: {rows} rows of the one input projection"
                ),
            }));
        }
        let k = s.conv_kernel;
        let u = self.tensors.len() - 1;
        let window = self.push("S_conv", [n(conv), n(k - 1)], TensorKind::State);
        let pw = self.param(Role::SsmConv, false, vec![conv, 1, k], comp, true);
        let mut inputs = vec![self.weight(pw, "W_conv", [n(conv), n(k)], None), window];
        let mut eq = format!("U′ₜ = Σⱼ W_conv[:, j] ⊙ Uₜ₋₍{}₋ⱼ₎", k - 1);
        if s.conv_bias {
            let pb = self.param(Role::SsmConv, true, vec![conv], comp, true);
            inputs.push(self.weight(pb, "b_conv", [n(conv), n(1)], None));
            eq += " + b_conv";
        }
        let uc = self.act("U′", self.seq(conv));
        nodes.push(self.step(Draft {
            title: "Causal convolution".into(),
            op: Op::Conv { kernel: k },
            category: cat,
            inputs,
            output: uc,
            operation: format!(
                "Mix each of {conv} channels over its last {k} positions, on its own (depthwise)"
            ),
            equation: eq + "; the positions before this call come from S_conv",
        }));
        nodes.push(self.step(Draft {
            title: "Convolution window".into(),
            op: Op::Route,
            category: cat,
            inputs: vec![u],
            output: window,
            operation: format!("Keep each channel's last {} inputs for the tokens that follow: the convolution's state", k - 1),
            equation: format!("S_conv = U[t−{}…t] (zeros before the first token)", k - 1),
        }));
        let ua = self.act("U″", self.seq(conv));
        nodes.push(self.step(Draft {
            title: "Convolution activation".into(),
            op: Op::Activation,
            category: cat,
            inputs: vec![uc],
            output: ua,
            operation: "SiLU on every convolved channel".into(),
            equation: "U″ = U′ ⊙ σ(U′)".into(),
        }));
        // x follows U″ directly; B and C read it again.
        let mut part = |name: &str, rows: u64, start: u64, what: &str| {
            let t = self.act(name, self.seq(rows));
            self.step(Draft {
                title: format!("{name} from the convolution"),
                op: Op::Route,
                category: cat,
                inputs: if start == 0 { vec![] } else { vec![ua] },
                output: t,
                operation: what.to_string(),
                equation: format!("{name} = U″[{start}:{}]", start + rows),
            })
        };
        nodes.push(part(
            "x",
            inner,
            0,
            &format!("The input of the scan: {heads} heads × {p}"),
        ));
        nodes.push(part(
            "B",
            gn,
            inner,
            &format!(
                "What each position writes into the state: {state} per group, {groups} groups"
            ),
        ));
        nodes.push(part(
            "C",
            gn,
            inner + gn,
            &format!("What each position reads from the state: {state} per group, {groups} groups"),
        ));
        let (x, b, c) = (ua + 1, ua + 2, ua + 3);
        debug_assert_eq!(self.tensors[c].name, "C");
        let pdt = self.param(Role::SsmDtBias, false, vec![heads], comp, true);
        let wdt = self.weight(pdt, "b_Δ", [n(heads), n(1)], None);
        let d0 = self
            .tensors
            .iter()
            .rposition(|t| t.name == "Δ₀")
            .expect("Δ₀");
        let dt = self.act("Δ", self.seq(heads));
        nodes.push(self.step(Draft {
            title: "Step size".into(),
            op: Op::Activation,
            category: cat,
            inputs: vec![d0, wdt],
            output: dt,
            operation: "How far each head's state moves at this position: large Δ forgets the past and takes in the present".into(),
            equation: "Δ = softplus(Δ₀ + b_Δ)".into(),
        }));
        let pa = self.param(Role::SsmALog, false, vec![heads], comp, true);
        let alog = self.weight(pa, "A_log", [n(heads), n(1)], None);
        let a = self.act("A", [n(heads), n(1)]);
        nodes.push(self.step(Draft {
            title: "Decay rates".into(),
            op: Op::Activation,
            category: cat,
            inputs: vec![alog],
            output: a,
            operation:
                "Each head's decay rate, negative so the state fades; stored as its log".into(),
            equation: "A = −exp(A_log)".into(),
        }));
        let h = self.push("S", [n(heads * p), n(state)], TensorKind::State);
        nodes.push(self.step(Draft {
            title: "State update".into(),
            op: Op::Scan {
                flops: 4 * heads * p * state,
            },
            category: cat,
            inputs: vec![x, dt, b],
            output: h,
            operation: format!("Each head's {p} × {state} state decays and takes in this position: one step per token, the same size at any context (heads {heads}, B shared by the {} heads of a group)", heads / groups),
            equation: "Sₕ ← exp(Δₕ Aₕ) Sₕ + Δₕ · xₕ ⊗ B_g(h), token after token".into(),
        }));
        let pd = self.param(Role::SsmD, false, vec![heads], comp, true);
        let dw = self.weight(pd, "D", [n(heads), n(1)], None);
        let y = self.act("Y₀", self.seq(inner));
        nodes.push(self.step(Draft {
            title: "State read-out".into(),
            op: Op::Scan {
                flops: 2 * heads * p * state,
            },
            category: cat,
            inputs: vec![c, x, dw],
            output: y,
            operation: "Read the state with C, plus a skip of the input weighted per head".into(),
            equation: "Y₀ₕ = Sₕ · C_g(h) + Dₕ · xₕ".into(),
        }));
        let z = self.tensors.iter().rposition(|t| t.name == "Z").expect("Z");
        let pn = self.param(Role::SsmNorm, false, vec![inner], comp, true);
        let gamma = self.weight(pn, "γ_y", [n(inner), n(1)], None);
        let yn = self.act("Y₁", self.seq(inner));
        nodes.push(self.step(Draft {
            title: "Gated RMSNorm".into(),
            op: Op::Norm,
            category: cat,
            inputs: vec![z, gamma],
            output: yn,
            operation: format!(
                "Gate by SiLU(z), then RMS-normalize each group of {} features on its own",
                inner / groups
            ),
            equation: format!(
                "Y₁ = γ_y ⊙ RMS-norm per group(Y₀ ⊙ SiLU(Z)), {groups} groups, ε = {}",
                s.eps
            ),
        }));
        nodes.push(self.linear(Linear {
            role: Role::SsmOut,
            title: "Mixer output projection".into(),
            w: "W_out",
            out: "Y",
            input: "Y₁",
            rows: d,
            cols: inner,
            stored_rows: d,
            block: None,
            bias: s.bias,
            component: comp,
            category: cat,
            cached: false,
            operation: format!("Project {inner} features back to {d}"),
        }));
        nodes
    }
}
