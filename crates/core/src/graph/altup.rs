//! Gemma 3n's layers: alternating updates (AltUp) over several versions of the stream, a
//! low-rank branch beside the attention (LAuReL), and the streams' way in and out of the model.

use super::build::{n, Builder, Draft, Linear};
use super::*;
use crate::naming::Role;
use crate::spec::AltUp;

impl Builder<'_> {
    fn altup(&self) -> AltUp {
        self.spec
            .altup()
            .expect("AltUp steps are built for a Spec that has it")
    }

    /// After the embedding: the streams after the first, each a projection of the embedding
    /// rescaled to its RMS.
    pub(super) fn altup_streams(&mut self) -> Vec<Node> {
        let a = self.altup();
        let d = self.spec.hidden;
        let proj = self.linear(Linear::whole(
            Role::AltUpProj,
            "AltUp stream projection",
            ["Wᵢ", "Xᵢ", "X"],
            d,
            d,
            Category::Embed,
            "Project the embedding into stream i".into(),
        ));
        let mut nodes = vec![Node::Scope(self.scope(
            ScopeKind::Group,
            "AltUp stream i",
            "Stream end",
            a.streams - 1,
            vec![proj],
        ))];
        let x = self.latest("X");
        let out = self.act("X", self.seq(a.streams * d));
        nodes.push(self.step(Draft {
            title: "AltUp streams".into(),
            op: Op::Concat,
            category: Category::Embed,
            inputs: vec![x],
            output: out,
            operation: format!(
                "Stack the embedding and its {} projections, each rescaled to the embedding's RMS: the stream is {} versions of the hidden state from here on",
                a.streams - 1,
                a.streams
            ),
            equation: format!(
                "X = [X; X₁ · r₁; …], rᵢ = rms(X) / √max(mean(Xᵢ²), 10⁻⁵)  ({} × {d} = {} features)",
                a.streams,
                a.streams * d
            ),
        }).at(Point::AltupStreams));
        nodes
    }

    /// The router over one version of the hidden state: its norm, projection and tanh, 1/hidden
    /// on the way in. `what` names the step's use (prediction or correction).
    fn altup_router(&mut self, what: &str, input: &str, out: &str) -> Vec<Node> {
        let (a, d) = (self.altup(), self.spec.hidden);
        let normed = format!("{input}ʳ");
        let norm = self.norm_step(
            &format!("AltUp {what} router {}", self.norm_name()),
            Role::AltUpRouterNorm,
            "γᵣ",
            input,
            &normed,
            d,
            true,
            None,
        );
        let mut router = self.linear(Linear::whole(
            Role::AltUpRouter,
            format!("AltUp {what} router"),
            ["Wᵣ", out, &normed],
            a.streams,
            d,
            Category::Norm,
            format!(
                "Score the {} streams' roles for this token, in (−1, 1)",
                a.streams
            ),
        ));
        if let Node::Step(s) = &mut router {
            s.equation = format!("{out} = tanh(Wᵣ · {normed} / {d})");
        }
        vec![norm, router]
    }

    /// A coefficient projection from the router's scores: `rows` coefficients per token.
    #[allow(clippy::too_many_arguments)]
    fn altup_coefs(
        &mut self,
        role: Role,
        title: &str,
        w: &str,
        input: &str,
        out: &str,
        rows: u64,
        equation: String,
    ) -> Node {
        let a = self.altup();
        let mut step = self.linear(Linear::whole(
            role,
            title,
            [w, out, input],
            rows,
            a.streams,
            Category::Norm,
            format!(
                "Turn the router's {} scores into {rows} coefficients",
                a.streams
            ),
        ));
        if let Node::Step(s) = &mut step {
            s.equation = equation;
        }
        step
    }

    /// One Gemma 3n layer: predict every stream, compute on the active one (attention beside
    /// LAuReL, then the MLP, sandwich-normed), correct every stream by the innovation, and add
    /// the per-layer input to the streams after the first.
    pub(super) fn altup_block(&mut self) -> Scope {
        let spec = self.spec;
        let (a, d) = (self.altup(), spec.hidden);
        let wide = a.streams * d;
        let norm = self.norm_name();
        let mut children = Vec::new();
        let (xb, input) = self.block_input(
            wide,
            format!("Route the {} streams into the block", a.streams),
        );
        children.push(input);
        let active = format!("Xᵦ,{}", a.active);
        children.extend(self.altup_router("prediction", &active, "mₚ"));
        let k = a.streams;
        children.push(self.altup_coefs(
            Role::AltUpPredict,
            "AltUp prediction coefficients",
            "Wₚ",
            "mₚ",
            "Cₚ",
            k * k,
            format!("Cₚ = Wₚ · mₚ, read as a {k} × {k} matrix"),
        ));
        let c = self.latest("Cₚ");
        let p = self.act("P", self.seq(wide));
        children.push(
            self.step(Draft {
                title: "AltUp prediction".into(),
                op: Op::Combine,
                category: Category::Norm,
                inputs: vec![xb, c],
                output: p,
                operation: format!("Predict every stream from all {k}: each plus a mix of them"),
                equation: format!("Pⱼ = Xᵦ,ⱼ + Σᵢ Cₚ[j, i] · Xᵦ,ᵢ, i, j < {k}"),
            })
            .at(Point::AltupPredict),
        );
        let pa = format!("P{}", a.active);
        children.push(
            self.norm_step(
                &format!("Attention {norm}"),
                Role::AttnNorm,
                "γ",
                &pa,
                "Xᵦ′",
                d,
                true,
                None,
            )
            .at(Point::AttnNorm),
        );
        // LAuReL: a low-rank branch of the normed input, normed and added back to it.
        let r = spec.laurel.expect("Gemma 3n has LAuReL");
        let lin = |role, title, names, rows, cols, operation| {
            Linear::whole(
                role,
                title,
                names,
                rows,
                cols,
                Category::Attention,
                operation,
            )
        };
        let mut laurel = vec![
            self.linear(lin(
                Role::LaurelLeft,
                "LAuReL down-projection",
                ["Wₗₗ", "Lᵣ", "Xᵦ′"],
                r,
                d,
                format!("Project the normed input to rank {r}"),
            )),
            self.linear(lin(
                Role::LaurelRight,
                "LAuReL up-projection",
                ["Wₗᵣ", "Lᵤ", "Lᵣ"],
                d,
                r,
                format!("Project it back to {d}"),
            )),
            self.norm_step(
                &format!("LAuReL {norm}"),
                Role::LaurelNorm,
                "γₗ",
                "Lᵤ",
                "Lᵤ′",
                d,
                true,
                None,
            ),
        ];
        let l = self.act("L", self.seq(d));
        laurel.push(
            self.step(Draft {
                title: "LAuReL residual".into(),
                op: Op::Add,
                category: Category::Attention,
                inputs: vec![],
                output: l,
                operation: "Add the branch to its own input".into(),
                equation: "L = Xᵦ′ + Lᵤ′".into(),
            })
            .at(Point::Laurel),
        );
        children.push(Node::Scope(self.scope(
            ScopeKind::Group,
            "LAuReL",
            "LAuReL end",
            1,
            laurel,
        )));
        children.extend(self.attention_part("Xᵦ′", false));
        children.push(
            self.norm_step(
                &format!("Post-attention {norm}"),
                Role::PostAttnNorm,
                "γₐ",
                "Y",
                "Y′",
                d,
                true,
                None,
            )
            .at(Point::PostAttnNorm),
        );
        let (pa_t, l_t) = (self.latest("P"), self.latest("L"));
        let rr = self.act("R", self.seq(d));
        children.push(self.step(Draft {
            title: "Attention residual".into(),
            op: Op::Add,
            category: Category::Norm,
            inputs: vec![pa_t, l_t],
            output: rr,
            operation: "Add the attention output to the active prediction, then average with the LAuReL branch".into(),
            equation: format!("R = ({pa} + Y′ + L) / √2"),
        }).at(Point::ResidAttn));
        children.push(
            self.norm_step(
                &format!("MLP {norm}"),
                Role::FfnNorm,
                "γ′",
                "R",
                "R′",
                d,
                true,
                None,
            )
            .at(Point::FfnNorm),
        );
        // The MLPs by width (Gemma 3n may give each layer its own).
        let mut groups: Vec<(LayerSet, u64)> = spec.mlp_widths.clone();
        let narrow = LayerSet::from_fn(spec.layers, |b| {
            !spec.mlp_widths.iter().any(|(s, _)| s.contains(b))
        });
        groups.insert(0, (narrow, spec.mlp.intermediate));
        let mixed = groups.iter().filter(|(s, _)| !s.is_empty()).count() > 1;
        for (set, f) in groups {
            if set.is_empty() {
                continue;
            }
            self.layers = set.clone();
            let mut scope = self.mlp_of("R′", f);
            if mixed {
                scope.title = format!("{} (layers {set})", scope.title);
                scope.layers = Some(set);
            }
            children.push(Node::Scope(scope));
        }
        self.layers = self.all_layers();
        let r_t = self.latest("R");
        let o = self.act("O", self.seq(d));
        children.push(
            self.step(Draft {
                title: "MLP residual".into(),
                op: Op::Add,
                category: Category::Norm,
                inputs: vec![r_t],
                output: o,
                operation: "Add the FFN output: the layer's new value of the active stream".into(),
                equation: "O = R + M′".into(),
            })
            .at(Point::ResidFfn),
        );
        children.extend(self.altup_router("correction", "O", "m꜀"));
        children.push(self.altup_coefs(
            Role::AltUpCorrect,
            "AltUp correction coefficients",
            "W꜀",
            "m꜀",
            "c",
            k,
            "c = W꜀ · m꜀ + 1".into(),
        ));
        let (p_t, c_t) = (self.latest("P"), self.latest("c"));
        let x = self.act("Xᵦ₊₁", self.seq(wide));
        children.push(
            self.step(Draft {
                title: "AltUp correction".into(),
                op: Op::Combine,
                category: Category::Norm,
                inputs: vec![p_t, c_t],
                output: x,
                operation: "Correct every prediction by how far the layer moved the active one"
                    .into(),
                equation: format!("Xᵦ₊₁ᵢ = Pᵢ + cᵢ · (O − {pa}), i < {k}"),
            })
            .at(Point::AltupCorrect),
        );
        // transformers builds the scale whether or not the model applies it.
        let p = self.param(Role::AltUpScale, false, vec![d], Component::Norm, true);
        let source = if a.correct_scale {
            let s = self.weight(p, "sₐ", [n(d), n(1)], None);
            let out = self.act("Sₐ", self.seq(d));
            children.push(
                self.step(Draft {
                    title: "AltUp output scale".into(),
                    op: Op::Scale,
                    category: Category::Norm,
                    inputs: vec![s],
                    output: out,
                    operation: "Scale the corrected active stream by a learned vector".into(),
                    equation: format!("Sₐ = sₐ ⊙ Xᵦ₊₁,{}", a.active),
                })
                .at(Point::AltupScale),
            );
            "Sₐ".to_string()
        } else {
            format!("Xᵦ₊₁,{}", a.active)
        };
        children.extend(self.layer_tail(&source));
        self.block_scope(children)
    }

    /// Before the final norm: the streams after the first projected back, each rescaled to the
    /// first's RMS, and all of them averaged.
    pub(super) fn altup_unembed(&mut self) -> Vec<Node> {
        let (a, d) = (self.altup(), self.spec.hidden);
        let proj = self.linear(Linear::whole(
            Role::AltUpUnembed,
            "AltUp stream unprojection",
            ["Uᵢ", "Xₗ,ᵢ′", "Xₗ,ᵢ"],
            d,
            d,
            Category::Embed,
            "Project stream i back".into(),
        ));
        let nodes = vec![framed_group(self, a.streams - 1, proj), {
            let out = self.act("Xₘ", self.seq(d));
            self.step(Draft {
                title: "AltUp stream mean".into(),
                op: Op::Combine,
                category: Category::Embed,
                inputs: vec![],
                output: out,
                operation: format!(
                    "Rescale each projected stream to the first stream's RMS and average all {}",
                    a.streams
                ),
                equation: format!(
                    "Xₘ = (Xₗ,₀ + Σᵢ Xₗ,ᵢ′ · rᵢ) / {}, rᵢ = rms(Xₗ,₀) / √max(mean(Xₗ,ᵢ′²), 10⁻⁵)",
                    a.streams
                ),
            })
            .at(Point::AltupMean)
        }];
        nodes
    }
}

/// The unprojection step in a frame repeated once per stream after the first.
fn framed_group(b: &Builder<'_>, repeat: u64, step: Node) -> Node {
    Node::Scope(b.scope(
        ScopeKind::Group,
        "AltUp stream i",
        "Stream end",
        repeat,
        vec![step],
    ))
}
