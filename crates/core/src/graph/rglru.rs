//! Griffin's recurrent block (RecurrentGemma) as steps: the gate branch y; x projected and
//! convolved causally, its window carried between tokens; the RG-LRU's input and recurrence
//! gates from block-diagonal projections, the decay, the normalized input and the recurrence of
//! one state per channel; y gating the output; the output projection.

use super::build::{n, Builder, Draft, Linear};
use super::*;
use crate::naming::Role;
use crate::spec::RgLru;

impl Builder<'_> {
    pub(super) fn rg_lru(&mut self, x_in: &str, s: &RgLru) -> Vec<Node> {
        let d = self.spec.hidden;
        let (w, h, bw) = (s.width, s.heads, s.block());
        let (cat, comp) = (Category::Mixer, Component::Mixer);
        let mut nodes = Vec::new();
        for (role, title, wname, out, what) in [
            (
                Role::SsmZ,
                "Gate-branch projection",
                "W_y",
                "Y₀",
                "gate branch",
            ),
            (
                Role::SsmIn,
                "x projection",
                "W_x",
                "U",
                "recurrence's input",
            ),
        ] {
            nodes.push(self.linear(Linear {
                role,
                title: title.into(),
                w: wname,
                out,
                input: x_in,
                rows: w,
                cols: d,
                stored_rows: w,
                block: None,
                bias: true,
                component: comp,
                category: cat,
                cached: false,
                operation: format!("Project {d} features to the {what} ({w}), with a bias"),
            }));
            if role == Role::SsmZ {
                let y0 = self.latest("Y₀");
                let y = self.act("Yg", self.seq(w));
                let act = s.act.label();
                nodes.push(self.step(Draft {
                    title: "Gate-branch activation".into(),
                    op: Op::Activation,
                    category: cat,
                    inputs: vec![y0],
                    output: y,
                    operation: format!("{act} on the gate branch"),
                    equation: format!("Yg = {act}(Y₀)"),
                }));
            }
        }
        nodes.extend(self.conv_steps(w, s.conv_kernel, true, "Xc", false));
        let xc = self.latest("Xc");
        for (role, title, wname, bname, out, what) in [
            (
                Role::LruInGate,
                "Input gate",
                "W_i",
                "b_i",
                "I",
                "how much of each channel's input enters the state",
            ),
            (
                Role::LruRecGate,
                "Recurrence gate",
                "W_r",
                "b_r",
                "Rg",
                "how strongly each channel's decay applies at this token",
            ),
        ] {
            let pw = self.param(role, false, vec![h, bw, bw], comp, true);
            let wt = self.weight(pw, wname, [n(w), n(bw)], None);
            let pb = self.param(role, true, vec![h, bw], comp, true);
            let bt = self.weight(pb, bname, [n(w), n(1)], None);
            let t = self.act(out, self.seq(w));
            nodes.push(self.step(Draft {
                title: title.into(),
                op: Op::MatMul,
                category: cat,
                inputs: vec![xc, wt, bt],
                output: t,
                operation: format!("σ of a block-diagonal projection: {h} blocks of {bw} channels, each mixed only within its block; {what}"),
                equation: format!("{out}ₖ = σ(Xcₖ {wname},ₖ + {bname},ₖ) for each block k of {bw} channels (stored [in, out])"),
            }));
        }
        let pl = self.param(Role::LruParam, false, vec![w], comp, true);
        let lam = self.weight(pl, "Λ", [n(w), n(1)], None);
        let rg = self.latest("Rg");
        let a = self.act("a", self.seq(w));
        nodes.push(self.step(Draft {
            title: "Decay".into(),
            op: Op::Activation,
            category: cat,
            inputs: vec![rg, lam],
            output: a,
            operation: "Each channel's decay at this token, in (0, 1): its learned rate Λ, raised to the power 8 · r".into(),
            equation: "a = exp(−8 · Rg ⊙ softplus(Λ))".into(),
        }));
        let i = self.latest("I");
        let xn = self.act("Xn", self.seq(w));
        nodes.push(self.step(Draft {
            title: "Normalized input".into(),
            op: Op::Activation,
            category: cat,
            inputs: vec![xc, i, a],
            output: xn,
            operation: "Gate the input, and scale it by √(1 − a²) so the state keeps unit variance however slowly it decays (by 1 at position 0, where the state resets)".into(),
            equation: "Xn = Xc ⊙ I ⊙ √(1 − a²); Xn = Xc ⊙ I at position 0".into(),
        }));
        let state = self.push("hₛ", [n(w), n(1)], TensorKind::State);
        nodes.push(self.step(Draft {
            title: "State update".into(),
            op: Op::Scan { flops: 2 * w },
            category: cat,
            inputs: vec![a, xn],
            output: state,
            operation: format!("One state per channel ({w}), decayed and added to token after token: the same size at any context"),
            equation: "hₜ = aₜ ⊙ hₜ₋₁ + Xnₜ (h₋₁ = 0)".into(),
        }).at(Point::SsmState));
        let o = self.act("O", self.seq(w));
        nodes.push(
            self.step(Draft {
                title: "State read-out".into(),
                op: Op::Route,
                category: cat,
                inputs: vec![state],
                output: o,
                operation: "The state itself is the output at each token".into(),
                equation: "Oₜ = hₜ".into(),
            })
            .at(Point::SsmScan),
        );
        let yg = self.latest("Yg");
        let og = self.act("O′", self.seq(w));
        nodes.push(self.step(Draft {
            title: "Output gate".into(),
            op: Op::Activation,
            category: cat,
            inputs: vec![yg],
            output: og,
            operation: "Gate the recurrence's output by the gate branch".into(),
            equation: "O′ = O ⊙ Yg".into(),
        }));
        nodes.push(self.mixer_out("O′", w, true));
        nodes
    }
}
