//! RWKV-4 as steps. Time mixing: the token shift (the previous token's normed input, carried
//! between tokens), the three mixes, K, V and R, the WKV sums decayed per channel and read with
//! the current token's bonus, σ(R) gating them, the output projection. Channel mixing: the token
//! shift, two mixes, ReLU(K)² through the value projection, gated by σ(R).

use super::build::{n, Builder, Draft, Linear};
use super::*;
use crate::naming::Role;
use crate::spec::Rwkv;

impl Builder<'_> {
    /// The previous token's `x_in`, carried between tokens as `state`.
    fn token_shift(&mut self, x_in: &str, state: &str, prev: &str, cat: Category) -> Vec<Node> {
        let d = self.spec.hidden;
        let x = self.latest(x_in);
        let p = self.act(prev, self.seq(d));
        let shift = self.step(Draft {
            title: "Token shift".into(),
            op: Op::Route,
            category: cat,
            inputs: vec![x],
            output: p,
            operation: format!("Each token's input beside the previous token's (zeros before the first token; from {state} across calls)"),
            equation: format!("{prev}ₜ = {x_in}ₜ₋₁"),
        });
        let s = self.push(state, [n(d), n(1)], TensorKind::State);
        let keep =
            self.step(Draft {
                title: "Shift state".into(),
                op: Op::Route,
                category: cat,
                inputs: vec![x],
                output: s,
                operation:
                    "Keep the last token's input for the token that follows: this mixing's state"
                        .into(),
                equation: format!("{state} = {x_in} of the last token"),
            });
        vec![shift, keep]
    }

    /// μ ⊙ x + (1 − μ) ⊙ x₋₁ for each `(role, μ, output)`.
    fn token_mixes(
        &mut self,
        x_in: &str,
        prev: &str,
        mixes: &[(Role, &str, &str)],
        comp: Component,
        cat: Category,
    ) -> Vec<Node> {
        let d = self.spec.hidden;
        let mut nodes = Vec::new();
        for &(role, mu, out) in mixes {
            let p = self.param(role, false, vec![1, 1, d], comp, true);
            let m = self.weight(p, mu, [n(d), n(1)], None);
            let pv = self.latest(prev);
            let t = self.act(out, self.seq(d));
            nodes.push(self.step(Draft {
                title: format!("Token mix for {}", &out[1..]),
                op: Op::Activation,
                category: cat,
                inputs: vec![m, pv],
                output: t,
                operation: "Interpolate, channel by channel, between this token's input and the previous token's".into(),
                equation: format!("{out} = {mu} ⊙ {x_in} + (1 − {mu}) ⊙ {prev}"),
            }));
        }
        nodes
    }

    pub(super) fn rwkv_time_mix(&mut self, x_in: &str, s: &Rwkv) -> Vec<Node> {
        let (d, a) = (self.spec.hidden, s.attn);
        let (cat, comp) = (Category::Mixer, Component::Mixer);
        let mut nodes = self.token_shift(x_in, "S_x", "X₋₁", cat);
        nodes.extend(self.token_mixes(
            x_in,
            "X₋₁",
            &[
                (Role::TmMixK, "μ_k", "Xk"),
                (Role::TmMixV, "μ_v", "Xv"),
                (Role::TmMixR, "μ_r", "Xr"),
            ],
            comp,
            cat,
        ));
        for (role, title, w, out, input, what) in [
            (Role::TmKey, "Key projection", "W_k", "K", "Xk", "keys"),
            (
                Role::TmValue,
                "Value projection",
                "W_v",
                "V",
                "Xv",
                "values",
            ),
            (
                Role::TmReceptance,
                "Receptance projection",
                "W_r",
                "R",
                "Xr",
                "receptance, the output's gate",
            ),
        ] {
            nodes.push(self.linear(Linear::whole(
                role,
                title,
                [w, out, input],
                a,
                d,
                cat,
                format!("Project {d} features to the {what} ({a})"),
            )));
        }
        let pw = self.param(Role::TmDecay, false, vec![a], comp, true);
        let w = self.weight(pw, "w", [n(a), n(1)], None);
        let pu = self.param(Role::TmFirst, false, vec![a], comp, true);
        let u = self.weight(pu, "u", [n(a), n(1)], None);
        let (k, v) = (self.latest("K"), self.latest("V"));
        let state = self.push("S_wkv", [n(a), n(3)], TensorKind::State);
        nodes.push(self.step(Draft {
            title: "WKV update".into(),
            op: Op::Scan { flops: 10 * a },
            category: cat,
            inputs: vec![k, v, w, u],
            output: state,
            operation: format!("Each of {a} channels carries Σ exp(k)·v and Σ exp(k) over the tokens so far, both decayed by exp(−exp(w)) per token (and the largest exponent, so that nothing overflows): the same size at any context"),
            equation: "num ← e^{−e^w} num + e^{k} v;  den ← e^{−e^w} den + e^{k}, token after token (in scaled form)".into(),
        }));
        let o = self.act("WKV", self.seq(a));
        nodes.push(self.step(Draft {
            title: "WKV read-out".into(),
            op: Op::Scan { flops: 6 * a },
            category: cat,
            inputs: vec![u],
            output: o,
            operation: "A weighted average of the values so far, the current token weighted by its own bonus u".into(),
            equation: "WKV = (num + e^{u+k} v) / (den + e^{u+k}), with num and den before this token".into(),
        }));
        let r = self.latest("R");
        let og = self.act("O", self.seq(a));
        nodes.push(self.step(Draft {
            title: "Receptance gate".into(),
            op: Op::Activation,
            category: cat,
            inputs: vec![r],
            output: og,
            operation: "Gate each channel by σ of its receptance".into(),
            equation: "O = σ(R) ⊙ WKV".into(),
        }));
        nodes.push(
            self.linear(Linear::whole(
                Role::TmOutput,
                "Mixer output projection",
                ["W_o", "Y", "O"],
                d,
                a,
                cat,
                format!("Project {a} features back to {d}"),
            ))
            .at(Point::AttnOut),
        );
        nodes
    }

    /// RWKV's channel mixing, the FFN of its layers.
    pub(super) fn rwkv_channel_mix(&mut self, x_in: &str) -> Scope {
        let (d, f) = (self.spec.hidden, self.spec.mlp.intermediate);
        let (cat, comp) = (Category::Ffn, Component::Ffn);
        let mut nodes = self.token_shift(x_in, "S_c", "C₋₁", cat);
        nodes.extend(self.token_mixes(
            x_in,
            "C₋₁",
            &[(Role::CmMixK, "μ′_k", "Ck"), (Role::CmMixR, "μ′_r", "Cr")],
            comp,
            cat,
        ));
        for (role, title, w, out, input, rows, cols) in [
            (Role::Up, "Key projection", "W′_k", "H₀", "Ck", f, d),
            (
                Role::CmReceptance,
                "Receptance projection",
                "W′_r",
                "R′",
                "Cr",
                d,
                d,
            ),
        ] {
            nodes.push(self.linear(Linear::whole(
                role,
                title,
                [w, out, input],
                rows,
                cols,
                cat,
                format!("Project {cols} features to {rows}"),
            )));
        }
        let h0 = self.latest("H₀");
        let h = self.act("H", self.seq(f));
        nodes.push(self.step(Draft {
            title: "Squared ReLU".into(),
            op: Op::Activation,
            category: cat,
            inputs: vec![h0],
            output: h,
            operation: "ReLU, squared".into(),
            equation: "H = ReLU(H₀)²".into(),
        }));
        nodes.push(self.linear(Linear::whole(
            Role::Down,
            "Value projection",
            ["W′_v", "V′", "H"],
            d,
            f,
            cat,
            format!("Project {f} features back to {d}"),
        )));
        let r = self.latest("R′");
        let m = self.act("M", self.seq(d));
        nodes.push(self.step(Draft {
            title: "Receptance gate".into(),
            op: Op::Activation,
            category: cat,
            inputs: vec![r],
            output: m,
            operation: "Gate each feature by σ of its receptance".into(),
            equation: "M = σ(R′) ⊙ V′".into(),
        }));
        self.scope(
            ScopeKind::Mlp,
            "Channel mixing",
            "Channel mixing end",
            1,
            nodes,
        )
    }
}
