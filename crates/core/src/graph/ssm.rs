//! Mamba2's mixer as steps: three row blocks of one input projection (the gate z, the
//! convolved part U, the step Δ), the causal convolution with its window carried between tokens,
//! x, B and C taken from the convolved part, the scan through a state of fixed size, its read-out,
//! the gated and grouped RMS norm, and the output projection back to the stream.

use super::build::{n, Builder, Draft, Linear};
use super::*;
use crate::naming::Role;
use crate::spec::{Ssm, SsmGate};

impl Builder<'_> {
    pub(super) fn mamba2(&mut self, x_in: &str, s: &Ssm) -> Vec<Node> {
        let d = self.spec.hidden;
        let (heads, p, state, groups) = (s.heads, s.head_dim, s.state, s.groups);
        let (inner, conv, total) = (s.inner(), s.conv_dim(), s.in_proj());
        let gn = groups * state;
        let (comp, cat) = (Component::Mixer, Category::Mixer);
        let mut nodes = Vec::new();
        // U last: the convolution reads the step before it.
        for part in [
            ("Gate projection", "W_z", "Z", inner, 0, "gate z"),
            (
                "Step-size projection",
                "W_Δ",
                "Δ₀",
                heads,
                inner + conv,
                "step size, one per head",
            ),
            (
                "Convolution input projection",
                "W_u",
                "U",
                conv,
                inner,
                "convolved part (x, B, C)",
            ),
        ] {
            nodes.push(self.row_block(Role::SsmIn, part, x_in, d, total, s.bias));
        }
        // Falcon-H1's μP multipliers on the projection's parts (z, x, B, C, Δ).
        if s.part_mults != [1.0; 5] {
            let m = s.part_mults.map(crate::fmt::float);
            // In the order the row blocks are drawn: z, Δ, then x | B | C.
            let factors = [
                m[0].clone(),
                m[4].clone(),
                format!("[{} over x; {} over B; {} over C]", m[1], m[2], m[3]),
            ];
            for (node, factor) in nodes.iter_mut().zip(factors) {
                if let Node::Step(st) = node {
                    st.equation += &format!(", then × {factor}");
                }
            }
        }
        nodes.extend(self.conv_steps(conv, s.conv_kernel, s.conv_bias, "U″", true));
        let ua = self.tensors.len() - 1;
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
        let d0 = self.latest("Δ₀");
        let dt = self.act("Δ", self.seq(heads));
        nodes.push(self.step(Draft {
            title: "Step size".into(),
            op: Op::Activation,
            category: cat,
            inputs: vec![d0, wdt],
            output: dt,
            operation: "How far each head's state moves at this position: large Δ forgets the past and takes in the present".into(),
            equation: "Δ = softplus(Δ₀ + b_Δ)".into(),
        }).at(Point::SsmDt));
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
        }).at(Point::SsmState));
        let pd = self.param(Role::SsmD, false, vec![heads], comp, true);
        let dw = self.weight(pd, "D", [n(heads), n(1)], None);
        let y = self.act("Y₀", self.seq(inner));
        nodes.push(
            self.step(Draft {
                title: "State read-out".into(),
                op: Op::Scan {
                    flops: 2 * heads * p * state,
                },
                category: cat,
                inputs: vec![c, x, dw],
                output: y,
                operation: "Read the state with C, plus a skip of the input weighted per head"
                    .into(),
                equation: "Y₀ₕ = Sₕ · C_g(h) + Dₕ · xₕ".into(),
            })
            .at(Point::SsmScan),
        );
        let z = self.latest("Z");
        let yn = self.act("Y₁", self.seq(inner));
        let per = inner / groups;
        let (title, operation, equation) = match s.gate {
            SsmGate::NormAfter => (
                "Gated RMSNorm",
                format!(
                    "Gate by SiLU(z), then RMS-normalize each group of {per} features on its own"
                ),
                format!(
                    "Y₁ = γ_y ⊙ RMS-norm per group(Y₀ ⊙ SiLU(Z)), {groups} groups, ε = {}",
                    s.eps
                ),
            ),
            SsmGate::NormBefore => (
                "RMSNorm, then gate",
                format!(
                    "RMS-normalize each group of {per} features on its own, then gate by SiLU(z)"
                ),
                format!(
                    "Y₁ = γ_y ⊙ RMS-norm per group(Y₀) ⊙ SiLU(Z), {groups} groups, ε = {}",
                    s.eps
                ),
            ),
            SsmGate::Plain => (
                "Output gate",
                "Gate by SiLU(z); no norm".into(),
                "Y₁ = Y₀ ⊙ SiLU(Z)".into(),
            ),
        };
        let mut inputs = vec![z];
        if s.gate.normed() {
            let pn = self.param(Role::SsmNorm, false, vec![inner], comp, true);
            inputs.push(self.weight(pn, "γ_y", [n(inner), n(1)], None));
        }
        nodes.push(
            self.step(Draft {
                title: title.into(),
                op: if s.gate.normed() {
                    Op::Norm
                } else {
                    Op::Activation
                },
                category: cat,
                inputs,
                output: yn,
                operation,
                equation,
            })
            .at(Point::SsmNorm),
        );
        nodes.push(self.mixer_out("Y₁", inner, s.bias));
        nodes
    }
}

impl Builder<'_> {
    /// Mamba's selective scan (S6): x and the gate from one projection, the convolution, the
    /// step, B and C from a projection of x, a state per channel.
    pub(super) fn mamba(&mut self, x_in: &str, s: &crate::spec::S6) -> Vec<Node> {
        let d = self.spec.hidden;
        let (i, st, r) = (s.inner, s.state, s.dt_rank);
        let (comp, cat) = (Component::Mixer, Category::Mixer);
        let mut nodes = Vec::new();
        // The gate first: the convolution reads the step before it.
        for part in [
            ("Gate projection", "W_z", "Z", i, i, "gate z"),
            ("Input projection", "W_u", "U", i, 0, "scan's input x"),
        ] {
            if s.interleaved {
                // Zamba: x and z alternate row by row.
                let (title, w, out, _, start, what) = part;
                nodes.push(self.linear(Linear {
                    role: Role::SsmIn,
                    title: title.into(),
                    w,
                    out,
                    input: x_in,
                    rows: i,
                    cols: d,
                    stored_rows: 2 * i,
                    block: Some(format!("{}::2", if start == 0 { 0 } else { 1 })),
                    bias: s.bias,
                    component: comp,
                    category: cat,
                    cached: false,
                    operation: format!(
                        "Project {d} features to the {what}: every other row of the one {}-row projection, x and z alternating",
                        2 * i
                    ),
                }));
            } else {
                nodes.push(self.row_block(Role::SsmIn, part, x_in, d, 2 * i, s.bias));
            }
        }
        nodes.extend(self.conv_steps(i, s.conv_kernel, s.conv_bias, "x", true));
        let x = self.tensors.len() - 1;
        // Zamba's heads each project x to their own step, B and C; one set otherwise.
        let (b, c) = if s.heads > 1 {
            nodes.push(self.mamba_heads(s, x));
            (self.latest("B"), self.latest("C"))
        } else {
            for (part, norm_role) in [
                (
                    ("δ projection", "W_δ", "δ", r, 0, "step's low-rank input"),
                    Role::SsmDtNorm,
                ),
                (
                    (
                        "B projection",
                        "W_B",
                        "B",
                        st,
                        r,
                        "what each position writes into the state",
                    ),
                    Role::SsmBNorm,
                ),
                (
                    (
                        "C projection",
                        "W_C",
                        "C",
                        st,
                        r + st,
                        "what each position reads from the state",
                    ),
                    Role::SsmCNorm,
                ),
            ] {
                let (rows, out) = (part.3, part.2);
                let mut node = self.row_block(Role::SsmX, part, "x", i, r + 2 * st, false);
                // Each reads x, not the projection before it.
                if let Node::Step(step) = &mut node {
                    if out != "δ" {
                        step.inputs.insert(0, x);
                    }
                }
                nodes.push(node);
                if let Some(norm) = s.bcdt_norm {
                    let mut inputs = vec![];
                    let mut scale = String::new();
                    if norm.weighted {
                        let p = self.param(norm_role, false, vec![rows], comp, true);
                        let gamma = format!("γ_{out}");
                        inputs.push(self.weight(p, &gamma, [n(rows), n(1)], None));
                        scale = format!("{gamma} ⊙ ");
                    }
                    let normed = self.act(&format!("{out}′"), self.seq(rows));
                    nodes.push(self.step(Draft {
                        title: format!("{out} RMS norm"),
                        op: Op::Norm,
                        category: cat,
                        inputs,
                        output: normed,
                        operation: format!(
                            "Normalize {out} to unit root-mean-square{}",
                            if norm.weighted {
                                ""
                            } else {
                                ", without a weight"
                            }
                        ),
                        equation: format!(
                            "{out}′ = {scale}{out} / √(mean({out}²) + ε), ε = {}",
                            norm.eps
                        ),
                    }));
                }
            }
            let c = self.tensors.len() - 1;
            let b = self.latest(if s.bcdt_norm.is_some() { "B′" } else { "B" });
            let delta_in = if s.bcdt_norm.is_some() { "δ′" } else { "δ" };
            nodes.push(self.linear(Linear {
                role: Role::SsmDt,
                title: "Step projection".into(),
                w: "W_Δ",
                out: "Δ₀",
                input: delta_in,
                rows: i,
                cols: r,
                stored_rows: i,
                block: None,
                bias: true,
                component: comp,
                category: cat,
                cached: false,
                operation: format!("Project the {r}-wide step input to one step per channel ({i})"),
            }));
            (b, c)
        };
        let dt = self.act("Δ", self.seq(i));
        nodes.push(
            self.step(Draft {
                title: "Step size".into(),
                op: Op::Activation,
                category: cat,
                inputs: vec![],
                output: dt,
                operation: "How far each channel's state moves at this position".into(),
                equation: "Δ = softplus(Δ₀)".into(),
            })
            .at(Point::SsmDt),
        );
        // Stored per head where the heads have their own (Zamba): the same values.
        let per_head = |shape: &[u64]| -> Vec<u64> {
            if s.heads > 1 {
                [&[s.heads, i / s.heads][..], &shape[1..]].concat()
            } else {
                shape.to_vec()
            }
        };
        let pa = self.param(Role::SsmALog, false, per_head(&[i, st]), comp, true);
        let alog = self.weight(pa, "A_log", [n(i), n(st)], None);
        let a = self.act("A", [n(i), n(st)]);
        nodes.push(self.step(Draft {
            title: "Decay rates".into(),
            op: Op::Activation,
            category: cat,
            inputs: vec![alog],
            output: a,
            operation: "Each channel's decay rate per state entry, negative so the state fades; stored as its log".into(),
            equation: "A = −exp(A_log)".into(),
        }));
        let h = self.push("S", [n(i), n(st)], TensorKind::State);
        nodes.push(self.step(Draft {
            title: "State update".into(),
            op: Op::Scan { flops: 4 * i * st },
            category: cat,
            inputs: vec![x, dt, b],
            output: h,
            operation: format!("Each of {i} channels' {st}-wide state decays and takes in this position: one step per token, the same size at any context"),
            equation: "S ← exp(Δ ⊗ A) ⊙ S + (Δ ⊙ x) ⊗ B, token after token".into(),
        }).at(Point::SsmState));
        let pd = self.param(Role::SsmD, false, per_head(&[i]), comp, true);
        let dw = self.weight(pd, "D", [n(i), n(1)], None);
        let y = self.act("Y₀", self.seq(i));
        nodes.push(self.step(Draft {
            title: "State read-out".into(),
            op: Op::Scan { flops: 2 * i * st },
            category: cat,
            inputs: vec![c, x, dw],
            output: y,
            operation: "Read each channel's state with C, plus a skip of the input weighted per channel".into(),
            equation: "Y₀ = S · C + D ⊙ x".into(),
        }).at(Point::SsmScan));
        let z = self.latest("Z");
        let yg = self.act("Y₁", self.seq(i));
        nodes.push(self.step(Draft {
            title: "Output gate".into(),
            op: Op::Activation,
            category: cat,
            inputs: vec![z],
            output: yg,
            operation: "Gate every channel by SiLU(z)".into(),
            equation: "Y₁ = Y₀ ⊙ SiLU(Z)".into(),
        }));
        nodes.push(self.mixer_out("Y₁", i, s.bias));
        nodes
    }
}

impl Builder<'_> {
    /// Zamba's heads: each projects its share of x (`x`, the convolution's output) to its own
    /// low-rank step input, B and C, and the step input to a step per channel.
    fn mamba_heads(&mut self, s: &crate::spec::S6, x: usize) -> Node {
        let (i, st, r, h) = (s.inner, s.state, s.dt_rank, s.heads);
        let hd = i / h;
        let (comp, cat) = (Component::Mixer, Category::Mixer);
        // Stored [heads, r + 2·state, head channels].
        let px = self.param(Role::SsmX, false, vec![h, r + 2 * st, hd], comp, true);
        let mut children = Vec::new();
        for (title, w, out, rows, start, what) in [
            ("δ projection", "W_δ", "δ", r, 0, "step's low-rank input"),
            (
                "B projection",
                "W_B",
                "B",
                st,
                r,
                "what each position writes into the state",
            ),
            (
                "C projection",
                "W_C",
                "C",
                st,
                r + st,
                "what each position reads from the state",
            ),
        ] {
            let wt = self.weight(
                px,
                w,
                [n(rows), n(hd)],
                Some(format!("[h, {start}:{}, :]", start + rows)),
            );
            let o = self.act(out, self.seq(rows));
            children.push(self.step(Draft {
                title: format!("{title} (head h)"),
                op: Op::MatMul,
                category: cat,
                inputs: vec![wt, x],
                output: o,
                operation: format!("Project head h's {hd} channels of x to the {what} ({rows})"),
                equation: format!("{out} = {w}[h] · x[h·{hd} : (h+1)·{hd}]"),
            }));
        }
        let pdt = self.param(Role::SsmDt, false, vec![h, hd, r], comp, true);
        let pb = self.param(Role::SsmDt, true, vec![h, hd], comp, true);
        let wt = self.weight(pdt, "W_Δ", [n(hd), n(r)], Some("[h]".into()));
        let bias = self.weight(pb, "b_Δ", [n(hd), n(1)], Some("[h]".into()));
        let delta = self.latest("δ");
        let o = self.act("Δ₀", self.seq(hd));
        children.push(self.step(Draft {
            title: "Step projection (head h)".into(),
            op: Op::MatMul,
            category: cat,
            inputs: vec![wt, delta, bias],
            output: o,
            operation: format!(
                "Project the {r}-wide step input to one step per channel of the head ({hd})"
            ),
            equation: "Δ₀ = W_Δ[h] · δ + b_Δ[h]".into(),
        }));
        Node::Scope(self.scope(ScopeKind::Head, "Mamba head h", "Head end", h, children))
    }

    /// The causal depthwise convolution over the step before's output (`channels` wide), the
    /// window it carries to the next token, and SiLU, giving `out`; without `silu`, the
    /// convolution gives `out` itself (LFM2).
    pub(super) fn conv_steps(
        &mut self,
        channels: u64,
        k: u64,
        bias: bool,
        out: &str,
        silu: bool,
    ) -> Vec<Node> {
        self.conv_steps_split(&[(Role::SsmConv, "W_conv", channels)], k, bias, out, silu)
    }

    /// `conv_steps` over channels whose weights are stored apart, `(role, name, channels)` in
    /// the order of U's channels (Kimi's `q_conv1d`, `k_conv1d`, `v_conv1d`).
    pub(super) fn conv_steps_split(
        &mut self,
        parts: &[(Role, &str, u64)],
        k: u64,
        bias: bool,
        out: &str,
        silu: bool,
    ) -> Vec<Node> {
        let (comp, cat) = (Component::Mixer, Category::Mixer);
        let channels: u64 = parts.iter().map(|p| p.2).sum();
        let mut nodes = Vec::new();
        let u = self.tensors.len() - 1;
        let window = self.push("S_conv", [n(channels), n(k - 1)], TensorKind::State);
        let mut inputs = Vec::new();
        for &(role, name, ch) in parts {
            let pw = self.param(role, false, vec![ch, 1, k], comp, true);
            inputs.push(self.weight(pw, name, [n(ch), n(k)], None));
        }
        inputs.push(window);
        let w = if parts.len() == 1 {
            parts[0].1.to_string()
        } else {
            let names: Vec<&str> = parts.iter().map(|p| p.1).collect();
            format!("[{}]", names.join("; "))
        };
        let mut eq = format!(
            "{}ₜ = Σⱼ {w}[:, j] ⊙ Uₜ₋₍{}₋ⱼ₎",
            if silu { "U′" } else { out },
            k - 1
        );
        if bias {
            let pb = self.param(Role::SsmConv, true, vec![channels], comp, true);
            inputs.push(self.weight(pb, "b_conv", [n(channels), n(1)], None));
            eq += " + b_conv";
        }
        let uc = self.act(if silu { "U′" } else { out }, self.seq(channels));
        nodes.push(self.step(Draft {
            title: "Causal convolution".into(),
            op: Op::Conv { kernel: k },
            category: cat,
            inputs,
            output: uc,
            operation: format!("Mix each of {channels} channels over its last {k} positions, on its own (depthwise)"),
            equation: eq + "; the positions before this call come from S_conv",
        }).at(Point::ConvOut));
        nodes.push(self.step(Draft {
            title: "Convolution window".into(),
            op: Op::Route,
            category: cat,
            inputs: vec![u],
            output: window,
            operation: format!("Keep each channel's last {} inputs for the tokens that follow: the convolution's state", k - 1),
            equation: format!("S_conv = U[t−{}…t] (zeros before the first token)", k - 1),
        }));
        if !silu {
            return nodes;
        }
        let ua = self.act(out, self.seq(channels));
        nodes.push(
            self.step(Draft {
                title: "Convolution activation".into(),
                op: Op::Activation,
                category: cat,
                inputs: vec![uc],
                output: ua,
                operation: "SiLU on every convolved channel".into(),
                equation: format!("{out} = U′ ⊙ σ(U′)"),
            })
            .at(Point::SsmConv),
        );
        nodes
    }
}

impl Builder<'_> {
    /// LFM2's short gated convolution: B, C and x from one projection, B ⊙ x convolved over the
    /// last few positions, gated by C, projected back.
    pub(super) fn short_conv(&mut self, x_in: &str, c: &crate::spec::ShortConv) -> Vec<Node> {
        let d = self.spec.hidden;
        let cat = Category::Mixer;
        let mut nodes = Vec::new();
        for part in [
            ("B projection", "W_B", "B", d, 0, "input gate B"),
            ("C projection", "W_C", "C", d, d, "output gate C"),
            (
                "x projection",
                "W_x",
                "x",
                d,
                2 * d,
                "convolution's input x",
            ),
        ] {
            nodes.push(self.row_block(Role::SsmIn, part, x_in, d, 3 * d, c.bias));
        }
        let b = self.latest("B");
        let u = self.act("U", self.seq(d));
        nodes.push(self.step(Draft {
            title: "Input gate".into(),
            op: Op::Activation,
            category: cat,
            inputs: vec![b],
            output: u,
            operation: "Gate x by B, feature by feature, before the convolution".into(),
            equation: "U = B ⊙ x".into(),
        }));
        nodes.extend(self.conv_steps(d, c.kernel, c.bias, "U′", false));
        let cg = self.latest("C");
        let y = self.act("Y₀", self.seq(d));
        nodes.push(self.step(Draft {
            title: "Output gate".into(),
            op: Op::Activation,
            category: cat,
            inputs: vec![cg],
            output: y,
            operation: "Gate the convolution's output by C".into(),
            equation: "Y₀ = C ⊙ U′".into(),
        }));
        nodes.push(self.mixer_out("Y₀", d, c.bias));
        nodes
    }
}

impl Builder<'_> {
    /// One row block of a mixer's stored projection (`stored_rows` × `cols`), as a matmul of its
    /// own: `(title, weight, output, rows, first row, what it gives)`.
    pub(super) fn row_block(
        &mut self,
        role: Role,
        (title, w, out, rows, start, what): (&str, &str, &str, u64, u64, &str),
        input: &str,
        cols: u64,
        stored_rows: u64,
        bias: bool,
    ) -> Node {
        self.linear(Linear {
            role,
            title: title.into(),
            w,
            out,
            input,
            rows,
            cols,
            stored_rows,
            block: Some(format!("{start}:{}", start + rows)),
            bias,
            component: Component::Mixer,
            category: Category::Mixer,
            cached: false,
            operation: format!(
                "Project {cols} features to the {what}: {rows} rows of the one {stored_rows}-row projection"
            ),
        })
    }

    /// A mixer's output projection from `cols` features back to the stream, giving Y.
    pub(super) fn mixer_out(&mut self, input: &str, cols: u64, bias: bool) -> Node {
        let d = self.spec.hidden;
        self.linear(Linear {
            role: Role::SsmOut,
            title: "Mixer output projection".into(),
            w: "W_out",
            out: "Y",
            input,
            rows: d,
            cols,
            stored_rows: d,
            block: None,
            bias,
            component: Component::Mixer,
            category: Category::Mixer,
            cached: false,
            operation: format!("Project {cols} features back to {d}"),
        })
        .at(Point::AttnOut)
    }
}
