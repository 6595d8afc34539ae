//! ZAYA's compressed convolutional attention: Q, K and V made in a shared compressed space,
//! convolved, and read out head by head.

use super::attention::lin;
use super::build::{n, Builder, Draft, Linear};
use super::*;
use crate::naming::Role;

impl Builder<'_> {
    /// ZAYA's compressed convolutional attention, before its heads: Q and K projected and mixed
    /// along time by two causal convolutions, each plus its residual path; the values of the
    /// token and of the one before it; Q and K scaled to length √d, K times a learned scale
    /// per K/V head.
    pub(super) fn cca(&mut self, x_in: &str, cca: crate::spec::Cca) -> Vec<Node> {
        let a = self.attn.clone();
        let (d, h, kv, hd) = (self.spec.hidden, a.heads, a.kv_heads, a.head_dim);
        let (qw, kw, c) = (h * hd, kv * hd, (h + kv) * hd);
        let g = h / kv;
        let bias = a.qkv_bias;
        let whole =
            |role, title: &str, w: &'static str, out: &'static str, rows, operation: String| {
                Linear {
                    bias,
                    ..lin(
                        role, title, w, out, x_in, rows, d, rows, None, false, operation,
                    )
                }
            };
        let mut nodes = vec![
            self.linear(whole(
                Role::Q,
                "Q projection",
                "Wq",
                "Qₚ",
                qw,
                format!("Project to all {h} heads' {hd}-dim queries"),
            ))
            .at(Point::QProj),
            self.linear(whole(
                Role::K,
                "K projection",
                "Wk",
                "Kₚ",
                kw,
                format!("Project to all {kv} K/V heads' {hd}-dim keys"),
            ))
            .at(Point::KProj),
        ];
        // The convolutions' carried inputs: the last `reach` positions of Q and K as projected.
        let reach = cca.reach();
        let window = self.push("S_qk", [n(c), n(reach.max(1))], TensorKind::State);
        nodes.push(self.step(Draft {
            title: "Q/K convolution window".into(),
            op: Op::Route,
            category: Category::Attention,
            inputs: vec![],
            output: window,
            operation: format!("Keep the last {reach} positions of Q and K, side by side, for the tokens that follow: the convolutions' state"),
            equation: format!("S_qk = [Qₚ ‖ Kₚ][t−{reach}…t] (zeros before the first token)"),
        }));
        let conv = |b: &mut Self,
                    role,
                    title: &str,
                    w: &str,
                    out: &str,
                    taps: u64,
                    fan: u64,
                    operation: String,
                    equation: String| {
            let pw = b.param(role, false, vec![c, fan, taps], Component::Attention, true);
            let pb = b.param(role, true, vec![c], Component::Attention, true);
            let inputs = vec![
                b.weight(pw, w, [n(c), n(fan * taps)], None),
                b.weight(
                    pb,
                    &format!("b{}", w.trim_start_matches('W')),
                    [n(c), n(1)],
                    None,
                ),
            ];
            let o = b.act(out, b.seq(c));
            b.step(Draft {
                title: title.into(),
                op: Op::Conv { kernel: fan * taps },
                category: Category::Attention,
                inputs,
                output: o,
                operation,
                equation,
            })
        };
        nodes.push(conv(
            self,
            Role::CcaConvDepthwise,
            "Q/K depthwise convolution",
            "W_dw",
            "C₁",
            cca.depthwise,
            1,
            format!(
                "Mix each of the {c} Q and K channels over its last {} positions, on its own",
                cca.depthwise
            ),
            format!(
                "C₁[ch, t] = b_dw[ch] + Σⱼ W_dw[ch, j] · [Qₚ ‖ Kₚ][ch, t − {} + j], j < {}",
                cca.reach(),
                cca.depthwise
            ),
        ));
        nodes.push(conv(
            self,
            Role::CcaConvGrouped,
            "Q/K grouped convolution",
            "W_gr",
            "C₂",
            cca.grouped,
            hd,
            format!("Mix the {hd} channels of each of the {} Q and K heads together over the last {} positions", h + kv, cca.grouped),
            format!("C₂[ch, t] = b_gr[ch] + Σ over the {hd} channels c′ of ch's head, j < {} of W_gr[ch, c′, j] · C₁[c′, t − {} + j]", cca.grouped, cca.grouped - 1),
        ));
        let qc = self.act("Qᶜ", self.seq(qw));
        nodes.push(self.step(Draft {
            title: "Q residual".into(),
            op: Op::Add,
            category: Category::Attention,
            inputs: vec![],
            output: qc,
            operation: format!("Add to the convolved queries each head's mean of its query and its K/V head's key (each K/V head serves {g} query heads)"),
            equation: format!("Qᶜ = C₂[:{qw}] + (Qₚ + Kₚ of head ⌊h / {g}⌋) / 2"),
        }));
        let kc = self.act("Kᶜ", self.seq(kw));
        nodes.push(self.step(Draft {
            title: "K residual".into(),
            op: Op::Add,
            category: Category::Attention,
            inputs: vec![],
            output: kc,
            operation: format!("Add to the convolved keys the mean of the {g} query heads' residuals each K/V head serves"),
            equation: format!("Kᶜ = C₂[{qw}:] + mean over the head's {g} query heads of (Qₚ + Kₚ) / 2"),
        }));
        let half = kw / 2;
        nodes.push(self.linear(whole(
            Role::CcaVCurrent,
            "V projection (this token)",
            "Wv",
            "Vₙ",
            half,
            format!("Project the first {half} value features from this token"),
        )));
        nodes.push(self.linear(whole(
            Role::CcaVDelayed,
            "V projection (the token before)",
            "Wv′",
            "Vₚ",
            half,
            format!("Project the other {half} value features, which the next token reads"),
        )));
        let held = self.push("S_v", [n(half), n(1)], TensorKind::State);
        nodes.push(self.step(Draft {
            title: "Delayed values".into(),
            op: Op::Route,
            category: Category::Attention,
            inputs: vec![],
            output: held,
            operation: "Keep the last token's delayed projection for the token that follows".into(),
            equation: "S_v = Vₚ[t]; the first token reads Wv′ · 0 (the bias, or zeros)".into(),
        }));
        let vc = self.act("Vᶜ", self.seq(kw));
        nodes.push(self.step(Draft {
            title: "V concatenation".into(),
            op: Op::Concat,
            category: Category::Attention,
            inputs: vec![],
            output: vc,
            operation: format!("Values: this token's {half} features, then the previous token's {half}; K/V head i reads features {hd}·i to {hd}·(i+1)"),
            equation: "Vᶜ[t] = [Vₙ[t] ‖ Vₚ[t − 1]]".into(),
        }));
        let pt = self.param(
            Role::CcaKeyTemp,
            false,
            vec![kv],
            Component::Attention,
            true,
        );
        let temp = self.weight(pt, "τ", [n(kv), n(1)], None);
        let qn = self.act("Qᶜ", self.seq(qw));
        nodes.push(
            self.step(Draft {
                title: "Q L2 norm".into(),
                op: Op::Norm,
                category: Category::Attention,
                inputs: vec![],
                output: qn,
                operation: format!("Scale each query head to length √{hd}"),
                equation: format!("Qᶜ = Qᶜ · √{hd} / max(‖Qᶜ‖, ε) per head"),
            })
            .at(Point::QL2),
        );
        let kn = self.act("Kᶜ", self.seq(kw));
        nodes.push(
            self.step(Draft {
                title: "K L2 norm".into(),
                op: Op::Norm,
                category: Category::Attention,
                inputs: vec![temp],
                output: kn,
                operation: format!(
                    "Scale each key head to length √{hd}, then by its K/V head's learned factor"
                ),
                equation: format!("Kᶜ = Kᶜ · √{hd} / max(‖Kᶜ‖, ε) · τᵢ per K/V head i"),
            })
            .at(Point::KL2),
        );
        nodes
    }
}
