//! The model's end: the final norm, head transforms, the LM head (with soft caps and draft
//! clusters), and multi-token prediction.

use super::build::{n, Builder, Draft, Linear};
use super::*;
use crate::naming::Role;
use crate::spec::Stream;

impl<'s> Builder<'s> {
    /// A dense layer, its activation and a norm between the final norm and the head.
    pub(super) fn head_transform(
        &mut self,
        t: crate::spec::HeadTransform,
        input: &str,
    ) -> Vec<Node> {
        let d = self.spec.hidden;
        let dense = self.linear(Linear {
            role: Role::HeadDense,
            title: "Head dense".into(),
            w: "W_h",
            out: "Zₕ",
            input,
            rows: d,
            cols: d,
            stored_rows: d,
            block: None,
            bias: t.bias,
            component: Component::LmHead,
            category: Category::Embed,
            cached: false,
            operation: "Transform the final hidden state once more before scoring the vocabulary"
                .into(),
        });
        let act = t.act.label();
        let za = self.act("Zₐ", self.seq(d));
        let activation = self.step(Draft {
            title: format!("Head {act}"),
            op: Op::Activation,
            category: Category::Embed,
            inputs: vec![],
            output: za,
            operation: format!("Apply {act} to every feature"),
            equation: format!("Zₐ = {act}(Zₕ)"),
        });
        let title = format!("Head {}", self.norm_name());
        let norm = self.norm_step(&title, Role::HeadNorm, "γₕ", "Zₐ", "Z′", d, false, None);
        vec![dense, activation, norm]
    }

    pub(super) fn final_scope(&mut self) -> Scope {
        let spec = self.spec;
        // Post-residual models end on their last layer's norm: no final norm.
        let mut steps = Vec::new();
        // Out of the stream's form: hyper-connections and gated streams weigh the streams into
        // one, AltUp averages its predictions, attention residuals mix the block summaries.
        let last = match &spec.stream {
            Stream::Hyper(_) => {
                steps.extend(self.hyper_head("Xₗ", "Xₕ"));
                "Xₕ"
            }
            Stream::Gated(_) => {
                steps.extend(self.gated_in(None, "Xₗ", "Xₕ"));
                "Xₕ"
            }
            Stream::AltUp(_) => {
                steps.extend(self.altup_unembed());
                "Xₘ"
            }
            Stream::AttnRes(_) => {
                steps.push(self.attn_res_head("Xₗ", "Xₕ"));
                "Xₕ"
            }
            Stream::Plain | Stream::Hierarchy(_) | Stream::Bytes(_) | Stream::Looped(_) => "Xₗ",
        };
        // Gated streams end on their head mix, itself normed: no final norm.
        let z = if spec.norm.place.on_stream() {
            "Xₗ"
        } else if spec.gated_streams().is_some() {
            last
        } else {
            let title = format!("Final {}", self.norm_name());
            steps.push(
                self.norm_step_as(
                    &spec.final_norm(),
                    &title,
                    Role::FinalNorm,
                    "γf",
                    last,
                    "Z",
                    spec.hidden,
                    false,
                    None,
                )
                .at(Point::FinalNorm),
            );
            "Z"
        };
        let z = match spec.head_transform {
            Some(t) => {
                steps.extend(self.head_transform(t, z));
                "Z′"
            }
            None => z,
        };
        // A draft model hands its state back to its target's width, and may score only the
        // tokens of its best clusters.
        let clustered = spec.draft.and_then(|d| d.centroids);
        if let Some(d) = spec.draft {
            steps.push(self.draft_output(d, z));
        }
        if let Some(c) = clustered {
            steps.extend(self.clusters(c, z));
        }
        // A token table of its own width: the head reads the final state projected to it.
        let z = match spec.embedding.projected {
            Some(width) => {
                steps.push(self.linear(Linear {
                    role: Role::EmbedProjOut,
                    title: "Projection out".into(),
                    w: "W_out",
                    out: "Zₚ",
                    input: z,
                    rows: width,
                    cols: spec.hidden,
                    stored_rows: width,
                    block: None,
                    bias: false,
                    component: Component::Embedding,
                    category: Category::Embed,
                    cached: false,
                    operation: format!(
                        "Map the final hidden state to the token table's width, {width}, for the head"
                    ),
                }).at(Point::ProjectOut));
                "Zₚ"
            }
            None => z,
        };
        // A tied head reads the embedding matrix; the parameter is counted once.
        let (role, component, name, source_note) = if spec.tied {
            (
                Role::Embed,
                Component::Embedding,
                "Eᵀ",
                Some("tied: the embedding matrix".to_string()),
            )
        } else {
            (Role::LmHead, Component::LmHead, "Wₗₘ", None)
        };
        let v = spec.out_vocab();
        let head = self.param(role, false, vec![v, spec.embed_width()], component, false);
        // A clustered head reads the rows of the kept clusters' tokens alone.
        let (rows, slice) = match clustered {
            Some(c) => (c.kept(v), Some("[Tₖ, :]".to_string())),
            None => (v, None),
        };
        let w = self.push(
            name,
            [n(rows), n(spec.embed_width())],
            TensorKind::Weight {
                param: head,
                slice,
                note: source_note,
            },
        );
        let mut inputs = vec![w];
        let mut eq = format!("Logits = {name} · {z}");
        if spec.head_bias {
            let pb = self.param(Role::LmHead, true, vec![v], Component::LmHead, false);
            inputs.push(self.weight(pb, "bₗₘ", [n(v), n(1)], None));
            eq += " + bₗₘ";
        }
        if let Some(g) = spec.ngpt {
            let ps = self.param(
                Role::NgptLogitScale,
                false,
                vec![v],
                Component::LmHead,
                false,
            );
            inputs.push(self.weight(ps, "s_z", [n(v), n(1)], None));
            eq += &format!(
                ", then Logits = Logits ⊙ s_z · {}, a learned scale per vocabulary entry",
                crate::fmt::approx(g.logit_factor())
            );
        }
        let logits = self.act("Logits", self.seq(v));
        if spec.logits_mult != 1.0 {
            eq += &format!(", then Logits = Logits · {}", spec.logits_mult);
        }
        if let Some(c) = spec.final_softcap {
            eq += &format!(", then Logits = {c}·tanh(Logits/{c})");
        }
        let head_step = self.step(Draft {
            title: "Language-model head".into(),
            op: Op::MatMul,
            category: Category::Embed,
            inputs,
            output: logits,
            operation: match clustered {
                Some(c) => format!(
                    "Score the {} tokens of the kept clusters; each of the other {} gets the smallest of those scores minus one",
                    c.kept(v),
                    v - c.kept(v)
                ),
                None => format!("Score all {} vocabulary entries at every position", v),
            },
            equation: match clustered {
                Some(_) => format!("Logits[Tₖ] = {name}[Tₖ] · {z}, Logits[other] = min(Logits[Tₖ]) − 1"),
                None => eq,
            },
        }).at(Point::Logits);
        steps.push(head_step);
        if let Some(kept) = spec.logits_kept {
            let out = self.act("Logits", self.seq(kept));
            steps.push(self.step(Draft {
                title: "Padding rows dropped".into(),
                op: Op::Route,
                category: Category::Embed,
                inputs: vec![],
                output: out,
                operation: format!(
                    "Keep the logits of the first {kept} entries: the head's other {} rows pad it past the real vocabulary",
                    v - kept
                ),
                equation: format!("Logits = Logits[:, :{kept}]"),
            }));
        }
        self.scope(ScopeKind::Final, "Final", "Final end", 1, steps)
    }
}

impl Builder<'_> {
    /// DeepSeek's multi-token-prediction module: from the model's last hidden state and the next
    /// token's embedding, one more decoder block predicts the token after. Stored in the
    /// checkpoint as layers L…L+n−1, outside the model transformers builds: counted apart.
    pub(super) fn mtp(&mut self) -> Scope {
        let spec = self.spec;
        let (d, v, n_mtp) = (spec.hidden, spec.vocab, spec.mtp_layers);
        self.layers = LayerSet::range(spec.layers, spec.layers + n_mtp);
        let aux = |b: &mut Self, role: Role, shape: Vec<u64>| {
            b.param(role, false, shape, Component::Aux, true)
        };
        let mut steps = Vec::new();
        let pe = aux(self, Role::MtpEmbed, vec![v, d]);
        let e = self.push(
            "E′",
            [n(d), n(v)],
            TensorKind::Weight {
                param: pe,
                slice: None,
                note: Some("a stored copy of the embedding".into()),
            },
        );
        let xe = self.act("Xₑ", self.seq(d));
        steps.push(self.step(Draft {
            title: "MTP next-token embedding".into(),
            op: Op::Lookup,
            category: Category::Aux,
            inputs: vec![e],
            output: xe,
            operation: "Embed the token one position ahead".into(),
            equation: "Xₑ[:, t] = E′[T[t+1]]".into(),
        }));
        for (role, gamma, input, out, title) in [
            (Role::MtpENorm, "γₑ", "Xₑ", "Xₑ′", "MTP embedding RMSNorm"),
            (Role::MtpHNorm, "γₕ", "Xₗ", "Hₗ′", "MTP hidden RMSNorm"),
        ] {
            let p = aux(self, role, vec![d]);
            let g = self.weight(p, gamma, [n(d), n(1)], None);
            let o = self.act(out, self.seq(d));
            steps.push(self.step(Draft {
                title: title.into(),
                op: Op::Norm,
                category: Category::Aux,
                inputs: vec![g],
                output: o,
                operation: format!("Normalize {input} before joining the two streams"),
                equation: format!(
                    "{out} = {gamma} ⊙ {input} / √(mean({input}²) + ε), ε = {}",
                    spec.norm.eps
                ),
            }));
        }
        let pp = aux(self, Role::MtpProj, vec![d, 2 * d]);
        let w = self.weight(pp, "Wₑₕ", [n(d), n(2 * d)], None);
        let xm = self.act("Xₘ", self.seq(d));
        steps.push(self.step(Draft {
            title: "MTP projection".into(),
            op: Op::MatMul,
            category: Category::Aux,
            inputs: vec![w],
            output: xm,
            operation: format!(
                "Concatenate the two normalized streams and project {} features to {d}",
                2 * d
            ),
            equation: "Xₘ = Wₑₕ · [Xₑ′; Hₗ′]".into(),
        }));
        let xb = self.act("Xₘ′", self.seq(d));
        let last = spec.layers - 1;
        steps.push(self.step(Draft {
            title: "MTP decoder block".into(),
            op: Op::Route,
            category: Category::Aux,
            inputs: vec![],
            output: xb,
            operation: format!("One more decoder block with the structure of layer {last} (its own weights, counted here)"),
            equation: format!("Xₘ′ = Block(Xₘ), weights model.layers.{{b}}.* as in layer {last}"),
        }));
        let pn = aux(self, Role::MtpNorm, vec![d]);
        let g = self.weight(pn, "γₘ", [n(d), n(1)], None);
        let z = self.act("Zₘ", self.seq(d));
        steps.push(self.step(Draft {
            title: "MTP final RMSNorm".into(),
            op: Op::Norm,
            category: Category::Aux,
            inputs: vec![g],
            output: z,
            operation: "Normalize before the MTP head".into(),
            equation: format!("Zₘ = γₘ ⊙ Xₘ′ / √(mean(Xₘ′²) + ε), ε = {}", spec.norm.eps),
        }));
        let ph = aux(self, Role::MtpHead, vec![v, d]);
        let wh = self.push(
            "W′ₗₘ",
            [n(v), n(d)],
            TensorKind::Weight {
                param: ph,
                slice: None,
                note: Some("a stored copy of the LM head".into()),
            },
        );
        let logits = self.act("Logits′", self.seq(v));
        steps.push(self.step(Draft {
            title: "MTP head".into(),
            op: Op::MatMul,
            category: Category::Aux,
            inputs: vec![wh],
            output: logits,
            operation: "Predict the token two positions ahead".into(),
            equation: "Logits′ = W′ₗₘ · Zₘ".into(),
        }));
        self.layers = self.all_layers();
        let mut scope = self.scope(
            ScopeKind::Aux,
            "Multi-token prediction (auxiliary)",
            "MTP end",
            n_mtp,
            steps,
        );
        scope.layers = Some(LayerSet::range(spec.layers, spec.layers + n_mtp));
        scope
    }
}
