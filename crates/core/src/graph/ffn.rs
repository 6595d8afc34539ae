//! The FFN sublayer: a dense MLP (gated or plain) or a mixture of experts with its router,
//! routed experts, shared experts and weighted combination.

use super::build::{Builder, Draft, Linear};
use super::*;
use crate::layers::LayerSet;
use crate::naming::Role;
use crate::spec::{ExpertStorage, Scoring};

/// Which FFN a set of projections belongs to.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Kind {
    Dense,
    Routed,
    Shared,
}

impl Kind {
    /// Roles of gate, up, gate+up fused, and down.
    fn roles(self) -> [Role; 4] {
        match self {
            Kind::Dense => [Role::Gate, Role::Up, Role::GateUp, Role::Down],
            Kind::Routed => [
                Role::ExpertGate,
                Role::ExpertUp,
                Role::ExpertGateUp,
                Role::ExpertDown,
            ],
            Kind::Shared => [
                Role::SharedGate,
                Role::SharedUp,
                Role::SharedGateUp,
                Role::SharedDown,
            ],
        }
    }
}

impl Builder<'_> {
    /// Gate, up, activation and down projections of one FFN of width `f`, reading `input`.
    pub(super) fn ffn_steps(
        &mut self,
        kind: Kind,
        f: u64,
        input: &str,
        sub: &str,
        out: &str,
    ) -> Vec<Node> {
        let spec = self.spec;
        let d = spec.hidden;
        let [gate_role, up_role, fused_role, down_role] = kind.roles();
        let moe = spec.moe.clone();
        let (bias, fused, interleaved) = match kind {
            Kind::Dense => (spec.mlp.bias, spec.mlp.fused_gate_up, false),
            Kind::Routed => {
                let m = moe.as_ref().expect("experts have a MoE spec");
                let (fused, interleaved) = match m.storage {
                    ExpertStorage::Stacked { interleaved, .. } => (true, interleaved),
                    ExpertStorage::PerExpert | ExpertStorage::Flat => (false, false),
                };
                (m.expert_bias, fused, interleaved)
            }
            Kind::Shared => {
                let m = moe.as_ref().expect("a shared expert has a MoE spec");
                (m.shared_bias, m.shared_fused, false)
            }
        };
        let component = Component::Ffn;
        let (wg, wu, wd) = (format!("Wg{sub}"), format!("Wu{sub}"), format!("Wd{sub}"));
        let (g, u, p) = (format!("G{sub}"), format!("U{sub}"), format!("P{sub}"));
        let mut nodes = Vec::new();
        let up = |role: Role,
                  w: &'_ str,
                  o: &'_ str,
                  title: &str,
                  block: Option<String>,
                  stored: u64| UpSpec {
            role,
            title: title.into(),
            block,
            stored,
            gate: o.starts_with('G'),
            w: w.to_string(),
            out: o.to_string(),
        };
        let ups = if !spec.mlp.gated {
            vec![up(up_role, &wu, &u, "Up projection", None, f)]
        } else if fused {
            let (gb, ub) = if interleaved {
                ("0::2".to_string(), "1::2".to_string())
            } else {
                (format!("0:{f}"), format!("{f}:{}", 2 * f))
            };
            vec![
                up(fused_role, &wg, &g, "Gate projection", Some(gb), 2 * f),
                up(fused_role, &wu, &u, "Up projection", Some(ub), 2 * f),
            ]
        } else {
            vec![
                up(gate_role, &wg, &g, "Gate projection", None, f),
                up(up_role, &wu, &u, "Up projection", None, f),
            ]
        };
        for s in ups {
            nodes.push(
                self.linear(Linear {
                    role: s.role,
                    title: s.title,
                    w: &s.w,
                    out: &s.out,
                    input,
                    rows: f,
                    cols: d,
                    stored_rows: s.stored,
                    block: s.block,
                    bias,
                    component,
                    category: Category::Ffn,
                    cached: false,
                    operation: format!(
                        "Project {d} features to {f} ({})",
                        if s.gate { "gate" } else { "up" }
                    ),
                })
                .at(if s.gate { Point::Gate } else { Point::Up }),
            );
        }
        let act = spec.mlp.act.label();
        let limit = moe
            .as_ref()
            .and_then(|m| m.swiglu_limit)
            .filter(|_| kind == Kind::Routed);
        // xIELU's own parameters: αₚ and αₙ learned (one each), β and ε stored as scalars.
        let mut act_inputs = vec![];
        if spec.mlp.act == crate::spec::Act::Xielu && kind == Kind::Dense {
            for (role, shape, name) in [
                (Role::ActAlphaP, vec![1], "αₚ"),
                (Role::ActAlphaN, vec![1], "αₙ"),
                (Role::ActBeta, vec![], "β"),
                (Role::ActEps, vec![], "ε"),
            ] {
                let p = self.param(role, false, shape, component, true);
                act_inputs.push(self.weight(p, name, [n(1), n(1)], None));
            }
        }
        let plain = moe.as_ref().is_some_and(|m| m.swiglu_plain);
        let clips = kind != Kind::Dense && moe.as_ref().is_some_and(|m| m.act_clips.is_some());
        let caps = moe
            .as_ref()
            .and_then(|m| m.glu_softcaps)
            .filter(|_| kind == Kind::Routed);
        let equation = match (spec.mlp.gated, limit) {
            // Inkling 2: the gate's linear factor and the up projection softcapped.
            (true, None) if caps.is_some() => {
                let (cg, cu) = caps.expect("matched above");
                let (cg, cu) = (crate::fmt::float(cg), crate::fmt::float(cu));
                format!("{p} = {cg}·tanh({g}/{cg}) ⊙ σ({g}) ⊙ {cu}·tanh({u}/{cu})")
            }
            (true, Some(l)) if plain => {
                format!("{p} = {act}(min({g}, {l})) ⊙ clamp({u}, −{l}, {l})")
            }
            (true, Some(l)) => format!(
                "{p} = (clamp({u}, −{l}, {l}) + 1) ⊙ G′ · σ(1.702 · G′), G′ = min({g}, {l})"
            ),
            // Ling: clipped after the activation, by a limit of the layer's own.
            (true, None) if clips => format!(
                "{p} = min({act}({g}), L) ⊙ clamp({u}, −L, L), L the layer's clip (none where 0)"
            ),
            (true, None) => format!("{p} = {act}({g}) ⊙ {u}"),
            (false, _) if !act_inputs.is_empty() => format!(
                "{p} = αₚ′·{u}² + β·{u} where {u} > 0, else αₙ′·(expm1(min({u}, ε)) − {u}) + β·{u}; αₚ′ = softplus(αₚ), αₙ′ = β + softplus(αₙ)"
            ),
            (false, _) => format!("{p} = {act}({u})"),
        };
        let pa = self.act(&p, self.seq(f));
        nodes.push(self.step(Draft {
            title: if spec.mlp.gated {
                "Gated activation".into()
            } else {
                format!("{act} activation")
            },
            op: Op::Activation,
            category: Category::Ffn,
            inputs: act_inputs,
            output: pa,
            operation: if spec.mlp.gated {
                format!("Gate the up projection with {act} of the gate projection")
            } else {
                format!("Apply {act} to every feature")
            },
            equation,
        }));
        let mut down_in = p.clone();
        if spec.mlp.sub_norm && kind == Kind::Dense {
            down_in = format!("{p}′");
            nodes.push(
                self.norm_step(
                    "FFN sub-norm",
                    Role::FfnSubNorm,
                    "γₚ",
                    &p,
                    &down_in,
                    f,
                    true,
                    None,
                )
                .at(Point::FfnSubNorm),
            );
        }
        // Ergo: each expert's output, and the shared expert's, RMS-normed by a weight of its own.
        let out_norm = moe.as_ref().and_then(|m| match kind {
            Kind::Routed if m.expert_out_norm => Some((Role::ExpertOutNorm, "γₑ", "Expert")),
            Kind::Shared if m.shared_out_norm => Some((Role::SharedOutNorm, "γₛ", "Shared expert")),
            Kind::Dense | Kind::Routed | Kind::Shared => None,
        });
        let down_out = match out_norm {
            Some(_) => format!("{out}⁰"),
            None => out.to_string(),
        };
        nodes.push(
            self.linear(Linear {
                role: down_role,
                title: "Down projection".into(),
                w: &wd,
                out: &down_out,
                input: &down_in,
                rows: d,
                cols: f,
                stored_rows: d,
                block: None,
                bias,
                component,
                category: Category::Ffn,
                cached: false,
                operation: format!("Project {f} features back to {d}"),
            })
            .at(Point::Down),
        );
        if let Some((role, gamma, whose)) = out_norm {
            let title = format!("{whose} output {}", self.norm_name());
            nodes.push(
                self.norm_step(&title, role, gamma, &down_out, out, d, true, None)
                    .at(Point::OutNorm),
            );
        }
        nodes
    }

    /// The dense MLP at width `f` (Gemma 4's double-wide MLPs have their own).
    pub(super) fn mlp_of(&mut self, input: &str, f: u64) -> Scope {
        let mut children = self.ffn_steps(Kind::Dense, f, input, "", "M");
        // Gemma 3n's activation sparsity: the gate keeps only its values above a Gaussian
        // quantile, in the layers that have it.
        let gate = children
            .iter()
            .position(|c| matches!(c, Node::Step(s) if s.title == "Gate projection"));
        if let Some(at) = gate {
            let mut sparse = Vec::new();
            for (set, p) in self.spec.sparsity.clone() {
                let here = LayerSet::from_fn(self.spec.layers, |b| {
                    set.contains(b) && self.layers.contains(b)
                });
                if here.is_empty() {
                    continue;
                }
                let Node::Step(g) = &children[at] else {
                    unreachable!("found as a step")
                };
                let name = self.tensors[g.output].name.clone();
                let out = self.act(&name, self.seq(f));
                let z = crate::spec::normal_quantile(p);
                let mut step = self.step(Draft {
                    title: "Activation sparsity".into(),
                    op: Op::Activation,
                    category: Category::Ffn,
                    inputs: vec![],
                    output: out,
                    operation: format!(
                        "Keep only the gate values above the level a Gaussian with their mean and spread would leave {}% of them under, shifted down to start at 0",
                        crate::fmt::float(p * 100.0)
                    ),
                    equation: format!(
                        "{name} = ReLU({name} − mean({name}) − {} · std({name})), {} = Φ⁻¹({})",
                        crate::fmt::float(z as f32 as f64),
                        crate::fmt::float(z as f32 as f64),
                        crate::fmt::float(p)
                    ),
                }).at(Point::SparseGate);
                if here.len() != self.layers.len() {
                    if let Node::Step(s) = &mut step {
                        s.layers = Some(here);
                    }
                }
                sparse.push(step);
            }
            for (i, s) in sparse.into_iter().enumerate() {
                children.insert(at + 1 + i, s);
            }
        }
        // Falcon-H1's μP multipliers: the gate before its activation, the output.
        if let Some(m) = self.spec.mup {
            for (title, factor) in [
                ("Gate projection", m.mlp_gate),
                ("Down projection", m.mlp_down),
            ] {
                let step = children.iter_mut().find_map(|c| match c {
                    Node::Step(s) if s.title == title => Some(s),
                    _ => None,
                });
                if let (Some(s), true) = (step, factor != 1.0) {
                    s.equation += &format!(", then × {}", crate::fmt::float(factor));
                }
            }
        }
        // nGPT's learned scales on the gate and the up projection (Dory's `suv_gate`, `suv_up`).
        if let Some(g) = self.spec.ngpt {
            let uv = crate::fmt::approx(g.uv_factor(self.spec.hidden));
            for (title, role, name) in [
                ("Gate projection", Role::NgptGateUvScale, "s_u"),
                ("Up projection", Role::NgptUpUvScale, "s_v"),
            ] {
                let p = self.param(role, false, vec![f], Component::Ffn, true);
                let w = self.weight(p, name, [n(f), n(1)], None);
                if let Some(s) = children.iter_mut().find_map(|c| match c {
                    Node::Step(s) if s.title == title => Some(s),
                    _ => None,
                }) {
                    s.inputs.push(w);
                    s.equation += &format!(", then ⊙ {name} · {uv}");
                }
            }
        }
        // Inkling: the output times a learned scalar.
        if self.spec.mlp.scalar {
            let p = self.param(Role::MlpScalar, false, vec![1], Component::Ffn, true);
            let s = self.weight(p, "gₘ", [n(1), n(1)], None);
            let m = self.act("M", self.seq(self.spec.hidden));
            children.push(self.step(Draft {
                title: "MLP scale".into(),
                op: Op::Scale,
                category: Category::Ffn,
                inputs: vec![s],
                output: m,
                operation: "Multiply the MLP's output by a learned scalar".into(),
                equation: "M = gₘ · M".into(),
            }));
        }
        children.extend(self.ffn_close("M"));
        self.scope(ScopeKind::Mlp, "MLP", "MLP end", 1, children)
    }

    /// Router, top-k selection, routed experts, shared experts and the weighted sum.
    pub(super) fn moe(&mut self, input: &str) -> Scope {
        let mut scope = self.moe_of(input, input);
        scope.children.extend(self.ffn_close("M"));
        scope
    }

    /// Gemma 4's FFN: the MLP and the experts side by side, each normed after, summed, then the
    /// FFN's post-norm. The MLP reads `input`, the FFN's norm of the stream `stream`; the experts
    /// a norm of their own of it, and the router the stream itself.
    pub(super) fn mlp_and_moe(&mut self, input: &str, stream: &str) -> Vec<Node> {
        let d = self.spec.hidden;
        let mut mlp = self.ffn_steps(Kind::Dense, self.spec.mlp.intermediate, input, "", "M");
        let norm = self.norm_name();
        mlp.push(
            self.norm_step(
                &format!("MLP output {norm}"),
                Role::MlpPostNorm,
                "γₘ₁",
                "M",
                "M₁",
                d,
                true,
                None,
            )
            .at(Point::MlpPostNorm),
        );
        let mut nodes = vec![Node::Scope(self.scope(
            ScopeKind::Mlp,
            "MLP",
            "MLP end",
            1,
            mlp,
        ))];
        let experts_in = format!("{stream}ₑ");
        let mut moe = vec![self
            .norm_step(
                &format!("Experts' {norm}"),
                Role::ExpertsNorm,
                "γₑ",
                stream,
                &experts_in,
                d,
                true,
                None,
            )
            .at(Point::ExpertsNorm)];
        moe.extend(self.moe_of(stream, &experts_in).children);
        self.rename_last(&mut moe, "M₂");
        moe.push(
            self.norm_step(
                &format!("Experts' output {norm}"),
                Role::ExpertsPostNorm,
                "γₘ₂",
                "M₂",
                "M₂′",
                d,
                true,
                None,
            )
            .at(Point::ExpertsPostNorm),
        );
        nodes.push(Node::Scope(self.scope(
            ScopeKind::Moe,
            "MoE",
            "MoE end",
            1,
            moe,
        )));
        let (m1, m2) = (self.latest("M₁"), self.latest("M₂′"));
        let m = self.act("M", self.seq(d));
        nodes.push(
            self.step(Draft {
                title: "MLP and experts sum".into(),
                op: Op::Add,
                category: Category::Ffn,
                inputs: vec![m1, m2],
                output: m,
                operation: "Add the MLP's and the experts' outputs, each normed".into(),
                equation: "M = M₁ + M₂′".into(),
            })
            .at(Point::FfnSum),
        );
        nodes.extend(self.ffn_close("M"));
        nodes
    }

    /// The last step's output renamed (`M` to `M₂`), in its equation too.
    fn rename_last(&mut self, nodes: &mut [Node], to: &str) {
        if let Some(Node::Step(s)) = nodes.last_mut() {
            let t = &mut self.tensors[s.output];
            s.equation = s
                .equation
                .replacen(&format!("{} =", t.name), &format!("{to} ="), 1);
            t.name = to.to_string();
        }
    }

    /// ZAYA's router MLP on `input`: down to `width`, the carried router state added (every
    /// layer but the first), RMS-normed, two GELU layers; its output `Hᵣ` feeds the logits.
    fn router_mlp(&mut self, input: &str, width: u64) -> Vec<Node> {
        let d = self.spec.hidden;
        // The router's projections all carry biases.
        let lin = |role, title, names, (rows, cols), operation| Linear {
            bias: true,
            ..Linear::whole(role, title, names, rows, cols, Category::Ffn, operation)
        };
        let mut nodes = vec![self.linear(lin(
            Role::RouterDown,
            "Router down-projection",
            ["Wᵣd", "Rᵣ", input],
            (width, d),
            format!("Project the FFN input to the router's {width} features"),
        ))];
        // The state the previous layer's router carried on: absent in the first layer.
        let rest = LayerSet::from_fn(self.spec.layers, |b| b > 0);
        if !rest.is_empty() {
            let all = std::mem::replace(&mut self.layers, rest.clone());
            let p = self.param(Role::RouterState, false, vec![width], Component::Ffn, true);
            let s = self.weight(p, "σᵣ", [n(width), n(1)], None);
            let r = self.act("Rᵣ", self.seq(width));
            let mut step = self.step(Draft {
                title: "Router state".into(),
                op: Op::Add,
                category: Category::Ffn,
                inputs: vec![s],
                output: r,
                operation: "Add the previous layer's router state, scaled by a learned vector; carry the sum on to the next layer".into(),
                equation: format!("Rᵣ = Rᵣ + Rᵣ of layer b − 1 ⊙ σᵣ (layers {rest}; layer 0's Rᵣ as projected); the next layer reads this Rᵣ"),
            });
            self.layers = all;
            if let Node::Step(st) = &mut step {
                st.layers = Some(rest);
            }
            nodes.push(step);
        }
        let norm = crate::spec::Norm {
            kind: crate::spec::NormKind::Rms,
            ..self.spec.norm.clone()
        };
        let mut n_step = self.norm_step_as(
            &norm,
            "Router RMSNorm",
            Role::RouterNorm,
            "γᵣ",
            "Rᵣ",
            "Rᵣ′",
            width,
            true,
            None,
        );
        if let Node::Step(st) = &mut n_step {
            st.category = Category::Ffn;
        }
        nodes.push(n_step);
        for (role, title, w, input, out) in [
            (Role::RouterFc1, "Router layer 1", "Wᵣ₁", "Rᵣ′", "Hᵣ₁"),
            (Role::RouterFc2, "Router layer 2", "Wᵣ₂", "Hᵣ₁′", "Hᵣ₂"),
        ] {
            nodes.push(self.linear(lin(
                role,
                title,
                [w, out, input],
                (width, width),
                format!("Mix the router's {width} features"),
            )));
            let act_out = if out == "Hᵣ₁" {
                "Hᵣ₁′"
            } else {
                "Hᵣ"
            };
            let a = self.act(act_out, self.seq(width));
            nodes.push(self.step(Draft {
                title: format!("{title} GELU"),
                op: Op::Activation,
                category: Category::Ffn,
                inputs: vec![],
                output: a,
                operation: "GELU (exact, through erf)".into(),
                equation: format!("{act_out} = GELU({out})"),
            }));
        }
        nodes
    }

    /// Router, top-k selection, routed experts, shared experts and the weighted sum; the router
    /// reads `router_in`, the experts `input`.
    fn moe_of(&mut self, router_in: &str, input: &str) -> Scope {
        let spec = self.spec;
        let moe = spec.moe.clone().expect("a MoE layer has a MoE spec");
        let (d, e, k) = (spec.hidden, moe.experts, moe.top_k);
        // The router scores the zero-computation experts after the routed ones, and ZAYA's a
        // class that computes nothing.
        let skip = u64::from(moe.router_mlp.is_some());
        // Inkling's router scores the shared experts too, in its last rows.
        let sink = moe.scoring == Scoring::SigmoidSink;
        let s = if sink { moe.shared_experts } else { 0 };
        let (z, scored) = (moe.zero_experts, moe.experts + moe.zero_experts + skip + s);
        let mut children = Vec::new();
        // Gemma 4's router reads its input normed without a weight, scaled by a vector of its own.
        let router_in = if moe.router_norm {
            let p = self.param(Role::RouterScale, false, vec![d], Component::Ffn, true);
            let s = self.weight(p, "sᵣ", [n(d), n(1)], None);
            let x = self.act("Xᵣ", self.seq(d));
            children.push(self.step(Draft {
                title: "Router input".into(),
                op: Op::Norm,
                category: Category::Ffn,
                inputs: vec![s],
                output: x,
                operation: format!("Normalize the stream for the router (no weight), then scale it by a learned vector and 1/√{d}"),
                equation: format!("Xᵣ = {router_in} / √(mean({router_in}²) + ε) ⊙ sᵣ / √{d}, ε = {}", spec.norm.eps),
            }).at(Point::RouterIn));
            "Xᵣ"
        } else {
            router_in
        };
        let router_in = match moe.router_mlp {
            Some(width) => {
                children.extend(self.router_mlp(router_in, width));
                "Hᵣ"
            }
            None => router_in,
        };
        children.push(
            self.linear(Linear {
                role: Role::Router,
                title: "Router logits".into(),
                w: "Wᵣ",
                out: "Lᵣ",
                input: router_in,
                rows: scored,
                cols: moe.router_mlp.unwrap_or(d),
                stored_rows: scored,
                block: None,
                bias: moe.router_bias,
                component: Component::Ffn,
                category: Category::Ffn,
                cached: false,
                operation: if z > 0 {
                    format!(
                    "Score each token against all {e} experts and the {z} zero-computation ones"
                )
                } else if sink {
                    format!("Score each token against all {e} experts and the {s} shared ones")
                } else {
                    format!("Score each token against all {e} experts")
                },
            })
            .at(Point::Router),
        );
        let gates = self.act("Gᵣ", self.seq(scored));
        let mut inputs = vec![];
        let per_expert = if moe.expert_scale {
            let p = self.param(
                Role::RouterExpertScale,
                false,
                vec![e],
                Component::Ffn,
                true,
            );
            inputs.push(self.weight(p, "sₑ", [n(e), n(1)], None));
            ", then × sₑ[e] (each expert's learned scale)"
        } else {
            ""
        };
        // DeepSeek-V4: the layers that route by token id hold a table and no correction bias.
        let hashed = moe.hash_layers.clone().map(|h| {
            let routed =
                LayerSet::from_fn(spec.layers, |b| self.layers.contains(b) && !h.contains(b));
            (
                LayerSet::from_fn(spec.layers, |b| self.layers.contains(b) && h.contains(b)),
                routed,
            )
        });
        if moe.correction_bias {
            let shape = spec.layout.correction_shape(scored - s);
            let saved = hashed
                .as_ref()
                .map(|(_, routed)| self.param_layers.replace(routed.clone()));
            let p = self.param(Role::CorrectionBias, false, shape, Component::Ffn, true);
            if let Some(saved) = saved {
                self.param_layers = saved;
            }
            inputs.push(self.weight(p, "bᵣ", [n(scored), n(1)], None));
        }
        if let Some((hash, _)) = hashed.filter(|(h, _)| !h.is_empty()) {
            let saved = self.param_layers.replace(hash);
            let p = self.param(
                Role::HashTable,
                false,
                vec![spec.vocab, k],
                Component::Ffn,
                true,
            );
            self.param_layers = saved;
            inputs.push(self.weight(p, "T", [n(spec.vocab), n(k)], Some("[token id]".into())));
        }
        if sink {
            let p = self.param(Role::RouterScalar, false, vec![1], Component::Ffn, true);
            inputs.push(self.weight(p, "gᵣ", [n(1), n(1)], None));
        }
        let renorm = if moe.norm_topk_prob {
            ", renormalized to sum to 1"
        } else {
            ""
        };
        let scaled = if moe.routed_scaling != 1.0 {
            format!(", × {}", moe.routed_scaling)
        } else {
            String::new()
        };
        let groups = if moe.n_group > 1 {
            format!(
                "; only experts in the best {} of {} groups of {} compete (groups ranked by their two best scores)",
                moe.topk_group,
                moe.n_group,
                e / moe.n_group
            )
        } else {
            String::new()
        };
        // A softcapped router scores c · tanh(Lᵣ / c) in place of its logits.
        let capped = moe
            .router_softcap
            .map(|c| format!("{c} · tanh(Lᵣ / {c})", c = crate::fmt::float(c)));
        let equation = match moe.scoring {
            Scoring::Softmax if moe.correction_bias => format!(
                "chosen = top-{k}(softmax(Lᵣ) + bᵣ){groups}; Gᵣ = softmax(Lᵣ) on the chosen{renorm}{scaled}; zeros elsewhere"
            ),
            Scoring::Softmax => {
                format!("Gᵣ = top-{k}(softmax(Lᵣ)){renorm}{scaled}; zeros elsewhere{groups}")
            }
            Scoring::TopkSoftmax => {
                format!("Gᵣ = softmax over the top-{k} of Lᵣ{scaled}; zeros elsewhere{groups}")
            }
            Scoring::SparseMixer { eps } => format!(
                "e₁ = argmax Lᵣ, e₂ = argmax of the rest; Gᵣ[eₖ] = softmax(Lᵣ)[eₖ] over the logits within (m − Lᵣ) / max(|Lᵣ|, m) ≤ {} of m = Lᵣ[eₖ] (e₁ excluded for e₂); zeros elsewhere",
                2.0 * eps
            ),
            Scoring::SigmoidBiasedLogits => format!(
                "chosen = top-{k}(Lᵣ + bᵣ){groups}; Gᵣ = σ(Lᵣ) on the chosen{renorm}{scaled}; zeros elsewhere"
            ),
            Scoring::TopkSigmoid => {
                format!("Gᵣ = σ(Lᵣ) on the top-{k} of Lᵣ, zeros elsewhere; each chosen expert reads Gᵣ[e] · {input}")
            }
            Scoring::SigmoidSink => format!(
                "chosen = top-{k}(σ(Lᵣ[:{e}]) + bᵣ); Gᵣ = σ(Lᵣ) over the chosen and the {s} shared experts (rows {e}…), normalized to sum to 1{scaled}, × gᵣ; zeros elsewhere"
            ),
            Scoring::Sigmoid => {
                let choose = if moe.correction_bias {
                    "σ(Lᵣ) + bᵣ"
                } else {
                    "σ(Lᵣ)"
                };
                // DeepSeek-V4 with σ scores: its first layers choose by token id.
                let hashed = moe.hash_layers.as_ref().map_or(String::new(), |h| {
                    format!(", or in layers {h} the {k} experts tid2eid[token id] lists")
                });
                format!("chosen = top-{k}({choose}){groups}{hashed}; Gᵣ = σ(Lᵣ) on the chosen{renorm}{scaled}; zeros elsewhere")
            }
            // DeepSeek-V4: its first layers choose by token id from a stored table.
            Scoring::SqrtSoftplus => match moe.hash_layers.as_ref() {
                Some(h) if h.len() == spec.layers => format!("chosen = the {k} experts tid2eid[token id] lists; Gᵣ = √softplus(Lᵣ) on the chosen{renorm}{scaled}; zeros elsewhere"),
                Some(h) => format!("chosen = top-{k}(√softplus(Lᵣ) + bᵣ), or in layers {h} the {k} experts tid2eid[token id] lists; Gᵣ = √softplus(Lᵣ) on the chosen{renorm}{scaled}; zeros elsewhere"),
                None => format!("chosen = top-{k}(√softplus(Lᵣ) + bᵣ){groups}; Gᵣ = √softplus(Lᵣ) on the chosen{renorm}{scaled}; zeros elsewhere"),
            },
        };
        let equation = match capped {
            Some(c) => format!("{}; Lᵣ softcapped first: Lᵣ ← {c}", equation),
            None => equation,
        } + per_expert;
        // ZAYA: the best class after a stored balancing bias; the last class computes nothing.
        let equation = if moe.router_mlp.is_some() {
            let p = self.param(
                Role::RouterBalance,
                false,
                vec![scored],
                Component::Ffn,
                true,
            );
            inputs.push(self.weight(p, "bᵦ", [n(scored), n(1)], None));
            format!("c = argmax(softmax(Lᵣ) + bᵦ); Gᵣ[c] = softmax(Lᵣ)[c] if c < {e}, nothing if c = {e} (the class that computes nothing); zeros elsewhere")
        } else {
            equation
        };
        children.push(self.step(Draft {
            title: format!("Top-{k} expert selection"),
            op: Op::TopK,
            category: Category::Ffn,
            inputs,
            output: gates,
            operation: format!(
                "Keep each token's {k} best experts; the other {} get weight 0",
                scored - k
            ),
            equation,
        }));
        self.experts = Some((e, moe.active()));
        let expert_steps = self.ffn_steps(Kind::Routed, moe.expert_intermediate, input, "ₑ", "Mₑ");
        self.experts = None;
        let mut experts = self.scope(
            ScopeKind::Experts,
            "Expert e",
            "Expert end",
            e,
            expert_steps,
        );
        experts.active = Some(moe.active());
        children.push(Node::Scope(experts));
        let mut sum = "M = Σₑ Gᵣ[e] · Mₑ over the chosen experts".to_string();
        if z > 0 {
            sum +=
                &format!(" + (Σ Gᵣ[z] over the chosen zero-computation experts z ≥ {e}) · {input}");
        }
        let mut combine_inputs = vec![gates];
        if moe.shared_experts > 0 {
            let shared = self.ffn_steps(Kind::Shared, moe.shared_intermediate, input, "ₛ", "Mₛ");
            combine_inputs.push(self.tensors.len() - 1);
            let title = if sink {
                "Shared expert s".into()
            } else if moe.shared_experts > 1 {
                format!("Shared experts ({}, fused)", moe.shared_experts)
            } else {
                "Shared expert".into()
            };
            let mut shared = shared;
            if moe.shared_gate {
                shared.push(self.linear(Linear {
                    role: Role::SharedExpertGate,
                    title: "Shared expert gate".into(),
                    w: "wₛ",
                    out: "gₛ",
                    input,
                    rows: 1,
                    cols: d,
                    stored_rows: 1,
                    block: None,
                    bias: false,
                    component: Component::Ffn,
                    category: Category::Ffn,
                    cached: false,
                    operation: "One score per token: how much of the shared expert's output to let through".into(),
                }));
                combine_inputs.push(self.tensors.len() - 1);
            }
            children.push(Node::Scope(self.scope(
                ScopeKind::Mlp,
                &title,
                "Shared end",
                if sink { moe.shared_experts } else { 1 },
                shared,
            )));
            sum += &if moe.shared_gate {
                " + σ(gₛ) · Mₛ".to_string()
            } else if sink {
                format!(
                    " + Σₛ Gᵣ[{e} + s] · Mₛ over the {} shared experts",
                    moe.shared_experts
                )
            } else {
                " + Mₛ".to_string()
            };
            if moe.shared_average {
                sum = format!("({sum}) / 2");
            }
        }
        let mut operation =
            "Sum the chosen experts' outputs, each scaled by its router weight".to_string();
        if moe.out_bias {
            let p = self.param(Role::MoeBlock, true, vec![d], Component::Ffn, true);
            combine_inputs.push(self.weight(p, "bₘ", [n(d), n(1)], None));
            sum += " + bₘ";
            operation += ", and add the block's bias";
        }
        let m = self.act("M", self.seq(d));
        children.push(self.step(Draft {
            title: "Expert combination".into(),
            op: Op::Combine,
            category: Category::Ffn,
            inputs: combine_inputs,
            output: m,
            operation,
            equation: sum,
        }));
        if moe.post_norm {
            let title = format!("MoE output {}", self.norm_name());
            children.push(self.norm_step(
                &title,
                Role::MoePostNorm,
                "γₘ",
                "M",
                "M′",
                d,
                true,
                None,
            ));
        }
        self.scope(ScopeKind::Moe, "MoE", "MoE end", 1, children)
    }
}

use super::build::n;

/// One up-projection (gate or up) of an FFN, before it becomes a step.
struct UpSpec {
    role: Role,
    title: String,
    block: Option<String>,
    stored: u64,
    gate: bool,
    w: String,
    out: String,
}
