//! Lightning attention (MiniMax) as steps: q, k and v of every head from one projection, SiLU
//! on all three; each head's key × value memory decayed at its fixed rate and added to, token
//! by token, and read with the query; the heads RMS-normed together, gated by σ of a second
//! projection of the input, and projected back.

use super::build::{n, Builder, Draft, Linear};
use super::*;
use crate::naming::Role;
use crate::spec::Lightning;

impl Builder<'_> {
    pub(super) fn lightning(&mut self, x_in: &str, s: &Lightning) -> Vec<Node> {
        let d = self.spec.hidden;
        let (h, hd, inner, blk) = (s.heads, s.head_dim, s.inner(), s.block);
        let cat = Category::Mixer;
        let comp = Component::Mixer;
        let mut nodes = Vec::new();
        for (role, title, w, out, rows, what) in [
            (
                Role::SsmIn,
                "QKV projection",
                "W_qkv",
                "QKV₀",
                3 * inner,
                "queries, keys and values, each head's three side by side",
            ),
            (
                Role::SsmZ,
                "Output-gate projection",
                "W_g",
                "G",
                inner,
                "output gate",
            ),
        ] {
            nodes.push(self.linear(Linear::whole(
                role,
                title,
                [w, out, x_in],
                rows,
                d,
                cat,
                format!("Project {d} features to the {what} ({rows})"),
            )));
        }
        let p0 = self.latest("QKV₀");
        let act = s.act.label();
        let qkv = self.act("QKV", self.seq(3 * inner));
        nodes.push(self.step(Draft {
            title: format!("{act} on q, k and v"),
            op: Op::Activation,
            category: cat,
            inputs: vec![p0],
            output: qkv,
            operation: format!("{act} on every projected feature: q and k stay free of a softmax, so the activation is their only nonlinearity"),
            equation: format!("QKV = {act}(QKV₀)"),
        }).at(Point::LightQkv));
        for (name, at, what) in [
            ("q", 0, "queries"),
            ("k", hd, "keys"),
            ("v", 2 * hd, "values"),
        ] {
            let t = self.act(name, self.seq(inner));
            nodes.push(self.step(Draft {
                title: format!("{} per head", name.to_uppercase()),
                op: Op::Route,
                category: cat,
                inputs: vec![qkv],
                output: t,
                operation: format!("The {what}: {h} heads × {hd}"),
                equation: format!("{name}ₕ = QKV[{}h+{at} : {}h+{}]", 3 * hd, 3 * hd, at + hd),
            }));
        }
        // The rates, and the chunked form's decay tables the class stores beside them.
        let ps = self.param(Role::LightSlope, false, vec![h, 1, 1], comp, true);
        let slope = self.weight(ps, "s", [n(h), n(1)], None);
        let mut tables = vec![slope];
        for (role, name, shape) in [
            (Role::LightQDecay, "D_q", vec![h, blk, 1]),
            (Role::LightKDecay, "D_k", vec![h, blk, 1]),
            (Role::LightDiagDecay, "D_diag", vec![1, h, blk, blk]),
        ] {
            let rows = shape.iter().product::<u64>() / blk;
            let p = self.param(role, false, shape, comp, true);
            tables.push(self.weight(p, name, [n(rows), n(blk)], None));
        }
        let (k, v) = (self.latest("k"), self.latest("v"));
        let state = self.push("S", [n(inner), n(hd)], TensorKind::State);
        nodes.push(self.step(Draft {
            title: "Memory update".into(),
            op: Op::Scan {
                flops: 3 * h * hd * hd,
            },
            category: cat,
            inputs: [vec![k, v], tables].concat(),
            output: state,
            operation: format!("Each of {h} heads keeps a {hd} × {hd} memory from key to value: it fades by a fixed rate per head, then takes k ⊗ v. One step per token, the same size at any context. sₕ = 2^(−8(h+1)/{h}) · (1 − b/(L−1)), stored; D_q, D_k and D_diag are the powers of exp(−sₕ) over a chunk of {blk} positions that the chunked form reads"),
            equation: "Sₕ ← exp(−sₕ) Sₕ + kₕ ⊗ vₕ, token after token".into(),
        }).at(Point::SsmState));
        let q = self.latest("q");
        let o = self.act("O", self.seq(inner));
        nodes.push(
            self.step(Draft {
                title: "Memory read-out".into(),
                op: Op::Scan {
                    flops: 2 * h * hd * hd,
                },
                category: cat,
                inputs: vec![q],
                output: o,
                operation: "Read each head's memory with its query: no softmax, no scale".into(),
                equation: "Oₕ = Sₕᵀ qₕ".into(),
            })
            .at(Point::SsmScan),
        );
        let pn = self.param(Role::SsmNorm, false, vec![inner], comp, true);
        let gamma = self.weight(pn, "γ_o", [n(inner), n(1)], None);
        let on = self.act("O′", self.seq(inner));
        nodes.push(
            self.step(Draft {
                title: "Output RMSNorm".into(),
                op: Op::Norm,
                category: cat,
                inputs: vec![gamma],
                output: on,
                operation: format!("RMS-normalize all {inner} features of the heads together"),
                equation: format!("O′ = γ_o ⊙ RMS-norm(O), ε = {}", crate::fmt::float(s.eps)),
            })
            .at(Point::SsmNorm),
        );
        let g = self.latest("G");
        let og = self.act("O″", self.seq(inner));
        nodes.push(
            self.step(Draft {
                title: "Output gate".into(),
                op: Op::Activation,
                category: cat,
                inputs: vec![g],
                output: og,
                operation: "Gate every feature by σ of the input's own projection".into(),
                equation: "O″ = σ(G) ⊙ O′".into(),
            })
            .at(Point::LightGate),
        );
        nodes.push(self.mixer_out("O″", inner, false));
        nodes
    }
}
