//! Gated DeltaNet as steps: Q, K, V, the output gate z, and β and α per value head from the
//! input projections; the causal convolution over Q, K and V with its window carried between
//! tokens; the L2 norms; the gates; the delta-rule update of each head's key × value memory and
//! its read-out; the per-head RMS norm gated by z; the output projection.

use super::build::{n, Builder, Draft, Linear};
use super::*;
use crate::naming::Role;
use crate::spec::{DeltaNet, DeltaStore};

impl Builder<'_> {
    pub(super) fn delta_net(&mut self, x_in: &str, s: &DeltaNet) -> Vec<Node> {
        let d = self.spec.hidden;
        let (kh, vh, dk, dv, r) = (
            s.key_heads,
            s.value_heads,
            s.key_dim,
            s.value_dim,
            s.ratio(),
        );
        let (keys, values, conv) = (s.keys(), s.values(), s.conv_dim());
        let cat = Category::Mixer;
        let mut nodes = Vec::new();
        // Where each projection's rows sit: (role, stored rows, block).
        let grouped = |at: u64, len: u64| {
            // Per key head: its q, its k, then its value heads' v, then their z.
            let stride = 2 * dk + 2 * r * dv;
            let block = format!(
                "{stride}*g+{at}:{stride}*g+{}, for each key head g",
                at + len
            );
            (Role::SsmIn, 2 * keys + 2 * values, Some(block))
        };
        let ba = |at: u64| {
            // Per key head: its value heads' β, then their α.
            let block = format!(
                "{}*g+{at}:{}*g+{}, for each key head g",
                2 * r,
                2 * r,
                at + r
            );
            (Role::SsmBa, 2 * vh, Some(block))
        };
        let qkv = |at: u64, len: u64| (Role::SsmIn, conv, Some(format!("{at}:{}", at + len)));
        let [z, beta, alpha, q, k, v] = match s.store {
            DeltaStore::Grouped => [
                grouped(2 * dk + r * dv, r * dv),
                ba(0),
                ba(r),
                grouped(0, dk),
                grouped(dk, dk),
                grouped(2 * dk, r * dv),
            ],
            DeltaStore::Separate => [
                (Role::SsmZ, values, None),
                (Role::SsmBeta, vh, None),
                (Role::SsmAlpha, vh, None),
                qkv(0, keys),
                qkv(keys, keys),
                qkv(2 * keys, values),
            ],
        };
        // (title, weight, output, rows, what, placement) of each projection, in the order drawn:
        // z, β₀ and α₀ first, Q, K and V last, as the convolution reads them.
        let parts = [
            (
                "Output-gate projection",
                "W_z",
                "Z",
                values,
                "output gate z",
                z,
            ),
            (
                "β projection",
                "W_β",
                "β₀",
                vh,
                "write strength, one per value head",
                beta,
            ),
            (
                "α projection",
                "W_α",
                "α₀",
                vh,
                "decay step, one per value head",
                alpha,
            ),
            ("Query projection", "W_q", "Q", keys, "queries", q),
            ("Key projection", "W_k", "K", keys, "keys", k),
            ("Value projection", "W_v", "V", values, "values", v),
        ];
        for (title, w, out, rows, what, (role, stored, block)) in parts {
            nodes.push(self.linear(Linear {
                role,
                title: title.into(),
                w,
                out,
                input: x_in,
                rows,
                cols: d,
                stored_rows: stored,
                block,
                bias: false,
                component: Component::Mixer,
                category: cat,
                cached: false,
                operation: format!("Project {d} features to the {what} ({rows})"),
            }));
        }
        let (q0, k0) = (self.latest("Q"), self.latest("K"));
        let u = self.act("U", self.seq(conv));
        nodes.push(self.step(Draft {
            title: "Convolution input".into(),
            op: Op::Concat,
            category: cat,
            inputs: vec![q0, k0],
            output: u,
            operation: format!("Q, K and V side by side: {conv} channels for one convolution"),
            equation: "U = [Q | K | V]".into(),
        }));
        nodes.extend(self.conv_steps(conv, s.conv_kernel, false, "U″", true));
        let ua = self.tensors.len() - 1;
        for (name, rows, at, what) in [
            ("q", keys, 0, format!("{kh} query heads × {dk}")),
            ("k", keys, keys, format!("{kh} key heads × {dk}")),
            ("v", values, 2 * keys, format!("{vh} value heads × {dv}")),
        ] {
            let t = self.act(name, self.seq(rows));
            nodes.push(self.step(Draft {
                title: format!("{} from the convolution", name.to_uppercase()),
                op: Op::Route,
                category: cat,
                inputs: if at == 0 { vec![] } else { vec![ua] },
                output: t,
                operation: what,
                equation: format!("{name} = U″[{at}:{}]", at + rows),
            }));
        }
        let (q, k) = (self.latest("q"), self.latest("k"));
        let qn = self.act("q̂", self.seq(keys));
        nodes.push(self.step(Draft {
            title: "Query L2 norm".into(),
            op: Op::Norm,
            category: cat,
            inputs: vec![q],
            output: qn,
            operation: format!("Scale each query head to unit length, then by 1/√{dk}"),
            equation: format!("q̂ₕ = qₕ / √(‖qₕ‖² + 10⁻⁶) / √{dk}"),
        }));
        let kn = self.act("k̂", self.seq(keys));
        nodes.push(self.step(Draft {
            title: "Key L2 norm".into(),
            op: Op::Norm,
            category: cat,
            inputs: vec![k],
            output: kn,
            operation:
                "Scale each key head to unit length: a key overwrites at most what it reads".into(),
            equation: "k̂ₕ = kₕ / √(‖kₕ‖² + 10⁻⁶)".into(),
        }));
        let b0 = self.latest("β₀");
        let beta = self.act("β", self.seq(vh));
        nodes.push(self.step(Draft {
            title: "Write strength".into(),
            op: Op::Activation,
            category: cat,
            inputs: vec![b0],
            output: beta,
            operation:
                "How far each value head's memory moves toward the new value, in (0, 1)".into(),
            equation: "β = σ(β₀)".into(),
        }));
        let comp = Component::Mixer;
        let pdt = self.param(Role::SsmDtBias, false, vec![vh], comp, true);
        let wdt = self.weight(pdt, "b_dt", [n(vh), n(1)], None);
        let pa = self.param(Role::SsmALog, false, vec![vh], comp, true);
        let alog = self.weight(pa, "A_log", [n(vh), n(1)], None);
        let a0 = self.latest("α₀");
        let g = self.act("g", self.seq(vh));
        nodes.push(self.step(Draft {
            title: "Decay".into(),
            op: Op::Activation,
            category: cat,
            inputs: vec![a0, wdt, alog],
            output: g,
            operation: "Each value head's log decay at this position, negative: exp(g) is how much of its memory it keeps".into(),
            equation: "g = −exp(A_log) · softplus(α₀ + b_dt)".into(),
        }));
        let v = self.latest("v");
        let state = self.push("S", [n(vh * dk), n(dv)], TensorKind::State);
        nodes.push(self.step(Draft {
            title: "Delta-rule update".into(),
            op: Op::Scan {
                flops: 5 * vh * dk * dv,
            },
            category: cat,
            inputs: vec![kn, v, beta, g],
            output: state,
            operation: format!("Each of {vh} value heads keeps a {dk} × {dv} memory from key to value: it decays, then moves what it recalls for k toward v by β. One step per token, the same size at any context (value head h reads key head h / {r})"),
            equation: "Sₕ ← exp(gₕ) Sₕ;  Sₕ ← Sₕ + k̂ₕ ⊗ βₕ (vₕ − Sₕᵀ k̂ₕ), token after token".into(),
        }));
        let o = self.act("O", self.seq(values));
        nodes.push(self.step(Draft {
            title: "Memory read-out".into(),
            op: Op::Scan {
                flops: 2 * vh * dk * dv,
            },
            category: cat,
            inputs: vec![qn],
            output: o,
            operation: "Read each head's memory with its query".into(),
            equation: "Oₕ = Sₕᵀ q̂ₕ".into(),
        }));
        let z = self.latest("Z");
        let pn = self.param(Role::SsmNorm, false, vec![dv], comp, true);
        let gamma = self.weight(pn, "γ_o", [n(dv), n(1)], None);
        let on = self.act("O′", self.seq(values));
        nodes.push(self.step(Draft {
            title: "Gated RMSNorm".into(),
            op: Op::Norm,
            category: cat,
            inputs: vec![gamma, z],
            output: on,
            operation: format!("RMS-normalize each head's {dv} features (one weight shared by the heads), then gate by SiLU(z)"),
            equation: format!("O′ₕ = γ_o ⊙ RMS-norm(Oₕ) ⊙ SiLU(Zₕ), ε = {}", s.eps),
        }));
        nodes.push(self.mixer_out("O′", values, false));
        nodes
    }
}
