//! Gated DeltaNet as steps: Q, K, V, the output gate z, and β and α per value head from the
//! input projections; the causal convolution over Q, K and V with its window carried between
//! tokens; the L2 norms; the gates; the delta-rule update of each head's key × value memory and
//! its read-out; the per-head RMS norm gated by z; the output projection. Kimi Delta Attention
//! the same way, its decay per key channel and its output gate σ of a low-rank projection.

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
        // Lara Mini's one projection: [q | k | v | z | β | α].
        let fused_rows = conv + values + 2 * vh;
        let fused =
            |at: u64, len: u64| (Role::SsmIn, fused_rows, Some(format!("{at}:{}", at + len)));
        let alone = |role: Role, rows: u64| (role, rows, None);
        // (title, weight, output, input, rows, cols, what, placement) of each projection, in
        // the order drawn: the gates first, Q, K and V last, as the convolution reads them.
        type Part<'a> = (
            &'static str,
            &'static str,
            &'static str,
            &'a str,
            u64,
            u64,
            &'static str,
            (Role, u64, Option<String>),
        );
        let from_x =
            |title, w, out, rows, what, at| -> Part { (title, w, out, x_in, rows, d, what, at) };
        let z = |at| {
            from_x(
                "Output-gate projection",
                "W_z",
                "Z",
                values,
                "output gate z",
                at,
            )
        };
        let beta = |at| {
            from_x(
                "β projection",
                "W_β",
                "β₀",
                vh,
                "write strength, one per value head",
                at,
            )
        };
        let alpha = |at| {
            from_x(
                "α projection",
                "W_α",
                "α₀",
                vh,
                "decay step, one per value head",
                at,
            )
        };
        let mut parts: Vec<Part> = match s.store {
            DeltaStore::Grouped => vec![
                z(grouped(2 * dk + r * dv, r * dv)),
                beta(ba(0)),
                alpha(ba(r)),
            ],
            DeltaStore::Fused => vec![
                z(fused(conv, values)),
                beta(fused(conv + values, vh)),
                alpha(fused(conv + values + vh, vh)),
            ],
            DeltaStore::Separate | DeltaStore::Olmo => vec![
                z(alone(Role::SsmZ, values)),
                beta(alone(Role::SsmBeta, vh)),
                alpha(alone(Role::SsmAlpha, vh)),
            ],
            // Kimi's gates through a rank-d_k latent; Ling's straight from the input.
            DeltaStore::Kimi => vec![
                from_x(
                    "Output-gate down-projection",
                    "W_ga",
                    "G₀",
                    dk,
                    "output gate's low-rank latent",
                    alone(Role::SsmGA, dk),
                ),
                (
                    "Output-gate up-projection",
                    "W_gb",
                    "G",
                    "G₀",
                    values,
                    dk,
                    "output gate, one per value feature",
                    alone(Role::SsmGB, values),
                ),
                beta(alone(Role::SsmBeta, vh)),
                from_x(
                    "Forget-gate down-projection",
                    "W_fa",
                    "F₀",
                    dk,
                    "forget gate's low-rank latent",
                    alone(Role::SsmFA, dk),
                ),
                (
                    "Forget-gate up-projection",
                    "W_fb",
                    "F",
                    "F₀",
                    keys,
                    dk,
                    "decay step, one per key channel",
                    alone(Role::SsmFB, keys),
                ),
            ],
            DeltaStore::Bailing => vec![
                from_x(
                    "Output-gate projection",
                    "W_g",
                    "G",
                    values,
                    "output gate, one per value feature",
                    alone(Role::SsmGB, values),
                ),
                beta(alone(Role::SsmBeta, vh)),
                from_x(
                    "Forget-gate projection",
                    "W_f",
                    "F",
                    keys,
                    "decay step, one per key channel",
                    alone(Role::SsmFB, keys),
                ),
            ],
        };
        let [q, k, v] = match s.store {
            DeltaStore::Grouped => [grouped(0, dk), grouped(dk, dk), grouped(2 * dk, r * dv)],
            DeltaStore::Separate => [qkv(0, keys), qkv(keys, keys), qkv(2 * keys, values)],
            DeltaStore::Fused => [fused(0, keys), fused(keys, keys), fused(2 * keys, values)],
            DeltaStore::Olmo | DeltaStore::Kimi | DeltaStore::Bailing => [
                alone(Role::SsmQ, keys),
                alone(Role::SsmK, keys),
                alone(Role::SsmV, values),
            ],
        };
        parts.extend([
            from_x("Query projection", "W_q", "Q", keys, "queries", q),
            from_x("Key projection", "W_k", "K", keys, "keys", k),
            from_x("Value projection", "W_v", "V", values, "values", v),
        ]);
        for (title, w, out, input, rows, cols, what, (role, stored, block)) in parts {
            nodes.push(self.linear(Linear {
                role,
                title: title.into(),
                w,
                out,
                input,
                rows,
                cols,
                stored_rows: stored,
                block,
                bias: false,
                component: Component::Mixer,
                category: cat,
                cached: false,
                operation: format!("Project {cols} features to the {what} ({rows})"),
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
        nodes.extend(if !s.split_qkv() {
            self.conv_steps(conv, s.conv_kernel, false, "U″", true)
        } else {
            // A convolution stored for each of Q, K and V: one over their channels side by side.
            self.conv_steps_split(
                &[
                    (Role::SsmConvQ, "W_cq", keys),
                    (Role::SsmConvK, "W_ck", keys),
                    (Role::SsmConvV, "W_cv", values),
                ],
                s.conv_kernel,
                false,
                "U″",
                true,
            )
        });
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
            operation: if s.beta_scale == 1.0 {
                "How far each value head's memory moves toward the new value, in (0, 1)".into()
            } else {
                format!("How far each value head's memory moves toward the new value, in (0, {}): past it, the old value is overshot", s.beta_scale)
            },
            equation: if s.beta_scale == 1.0 {
                "β = σ(β₀)".into()
            } else {
                format!("β = {} · σ(β₀)", s.beta_scale)
            },
        }));
        let comp = Component::Mixer;
        let (per, gates) = if s.channel_decay() {
            (keys, "key channel")
        } else {
            (vh, "value head")
        };
        let pdt = self.param(Role::SsmDtBias, false, vec![per], comp, true);
        let wdt = self.weight(pdt, "b_dt", [n(per), n(1)], None);
        let a_shape = if s.store == DeltaStore::Kimi {
            vec![1, 1, vh, 1]
        } else {
            vec![vh]
        };
        let pa = self.param(Role::SsmALog, false, a_shape, comp, true);
        let alog = self.weight(pa, "A_log", [n(vh), n(1)], None);
        let step = if s.channel_decay() { "F" } else { "α₀" };
        let a0 = self.latest(step);
        let g = self.act("g", self.seq(per));
        nodes.push(self.step(Draft {
            title: "Decay".into(),
            op: Op::Activation,
            category: cat,
            inputs: vec![a0, wdt, alog],
            output: g,
            operation: format!("Each {gates}'s log decay at this position, negative: exp(g) is how much of its memory it keeps"),
            equation: if let Some(floor) = s.gate_floor {
                format!("gₕ = {} · σ(exp(A_logₕ) · (Fₕ + b_dt,ₕ)), in ({}, 0): one rate per head, one step per key channel, the decay bounded", crate::fmt::float(floor), crate::fmt::float(floor))
            } else if s.channel_decay() {
                "gₕ = −exp(A_logₕ) · softplus(Fₕ + b_dt,ₕ), one rate per head, one step per key channel".into()
            } else {
                format!("g = −exp(A_log) · softplus({step} + b_dt)")
            },
        }).at(Point::DeltaDecay));
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
            equation: if s.channel_decay() {
                "Sₕ ← diag(exp(gₕ)) Sₕ (each key channel's row decayed apart);  Sₕ ← Sₕ + k̂ₕ ⊗ βₕ (vₕ − Sₕᵀ k̂ₕ), token after token".into()
            } else {
                "Sₕ ← exp(gₕ) Sₕ;  Sₕ ← Sₕ + k̂ₕ ⊗ βₕ (vₕ − Sₕᵀ k̂ₕ), token after token".into()
            },
        }).at(Point::SsmState));
        let o = self.act("O", self.seq(values));
        nodes.push(
            self.step(Draft {
                title: "Memory read-out".into(),
                op: Op::Scan {
                    flops: 2 * vh * dk * dv,
                },
                category: cat,
                inputs: vec![qn],
                output: o,
                operation: "Read each head's memory with its query".into(),
                equation: "Oₕ = Sₕᵀ q̂ₕ".into(),
            })
            .at(Point::SsmScan),
        );
        let (gate, how, eq) = if s.channel_decay() {
            ("G", "σ(G)", "σ(Gₕ)")
        } else if s.sigmoid_gate {
            ("Z", "σ(z)", "σ(Zₕ)")
        } else {
            ("Z", "SiLU(z)", "SiLU(Zₕ)")
        };
        let z = self.latest(gate);
        let pn = self.param(Role::SsmNorm, false, vec![dv], comp, true);
        let gamma = self.weight(pn, "γ_o", [n(dv), n(1)], None);
        let on = self.act("O′", self.seq(values));
        nodes.push(self.step(Draft {
            title: "Gated RMSNorm".into(),
            op: Op::Norm,
            category: cat,
            inputs: vec![gamma, z],
            output: on,
            operation: format!("RMS-normalize each head's {dv} features (one weight shared by the heads), then gate by {how}"),
            equation: format!("O′ₕ = γ_o ⊙ RMS-norm(Oₕ) ⊙ {eq}, ε = {}", s.eps),
        }).at(Point::SsmNorm));
        nodes.push(self.mixer_out("O′", values, false));
        nodes
    }
}
