//! Spec → Graph. One block skeleton for the whole decoder lineage; what a family adds (biases,
//! QK-norm, windows, experts, latent attention) comes from its Spec, never from its name.
//!
//! This file holds the builder and the model's outer parts; `attention.rs` and `ffn.rs` hold the
//! two sublayers.

use super::hyper::Mix;
use super::*;
use crate::error::{Error, Result};
use crate::naming::{names, Role};
use crate::spec::{AttnSpan, Block, Ffn, Mixer, NormKind, NormPlace, Position, Spec};

pub fn build(spec: &Spec) -> Result<Graph> {
    let mut b = Builder {
        spec,
        params: Vec::new(),
        tensors: Vec::new(),
        steps: 0,
        layers: LayerSet::all(spec.layers),
        attn: spec.attn.clone(),
        experts: None,
        attn_in: spec.hidden,
        param_layers: None,
        apart: false,
        kv_in: None,
        stack: None,
    };
    if let Some(bl) = spec.bytes.as_deref() {
        let children = b.byte_latent(bl);
        return finish(spec, b, children);
    }
    let embedding = b.embedding();
    let hierarchy = spec.hierarchy.map(|h| b.hierarchy(h));
    let looped = spec.looped.map(|l| b.looped(l));
    let block = if spec.altup.is_some() {
        b.altup_block()
    } else if spec.attn_res.is_some() {
        b.attn_res_block()
    } else {
        b.block()
    };
    let cross = spec.layers_where(|l| !l.mixer.runs_on_text());
    let cross = (!cross.is_empty()).then(|| b.cross_attention(cross));
    let last = b.final_scope();
    let mut children = vec![Node::Scope(embedding)];
    children.extend(hierarchy.map(Node::Scope));
    children.extend(looped.map(Node::Scope));
    children.push(Node::Scope(block));
    children.extend(cross.map(Node::Scope));
    children.push(Node::Scope(last));
    if spec.mtp_layers > 0 {
        children.push(Node::Scope(b.mtp()));
    }
    finish(spec, b, children)
}

fn finish(spec: &Spec, b: Builder, children: Vec<Node>) -> Result<Graph> {
    let graph = Graph {
        spec: spec.clone(),
        params: b.params,
        tensors: b.tensors,
        root: Scope {
            kind: ScopeKind::Model,
            title: spec.name.clone(),
            end: String::new(),
            repeat: 1,
            active: None,
            layers: None,
            children,
        },
        step_count: b.steps,
    };
    check_counts(&graph)?;
    Ok(graph)
}

/// Parameter totals must fit in u64: every view prints them as such.
fn check_counts(g: &Graph) -> Result<()> {
    let mut total: u128 = 0;
    for p in &g.params {
        let n = p
            .shape
            .iter()
            .try_fold(1u128, |acc, &d| acc.checked_mul(d as u128));
        total = n
            .and_then(|n| n.checked_mul(p.instances()))
            .and_then(|n| total.checked_add(n))
            .unwrap_or(u128::MAX);
    }
    if total > u64::MAX as u128 {
        return Err(Error::new(
            g.spec.name.clone(),
            "",
            "the parameter count overflows 64 bits (tensor sizes too large); check hidden_size, vocab_size, \
             intermediate_size and num_hidden_layers",
        ));
    }
    Ok(())
}

pub(super) struct Builder<'s> {
    pub(super) spec: &'s Spec,
    pub(super) params: Vec<Param>,
    pub(super) tensors: Vec<Tensor>,
    steps: usize,
    /// Layers the tensors being built belong to (a variant's layers inside a gated scope).
    pub(super) layers: LayerSet,
    /// The attention being built: the Spec's, or one variant's (`Spec::attn_variants`).
    pub(super) attn: crate::spec::Attention,
    /// Set while building routed experts: their count, for expert templates, and how many run
    /// for one token.
    pub(super) experts: Option<(u64, u64)>,
    /// The attention's input width: the hidden size, or twice it in Zamba2's shared block.
    pub(super) attn_in: u64,
    /// The layers holding the tensors being registered, where not those that run them (a
    /// shared block's, held by the first layer that runs it).
    pub(super) param_layers: Option<LayerSet>,
    /// Register per-layer tensors apart from those of the same name in other layers, rather than
    /// widening those (Mllama's cross-attention layers: their norms and MLP are their own part).
    pub(super) apart: bool,
    /// The inputs of K and V where they are not the attention's own (Inkling 2's full layers).
    pub(super) kv_in: Option<[String; 2]>,
    /// The BLT stack being built (`graph::blt`), its parameters counted by its layers.
    pub(super) stack: Option<crate::spec::Stack>,
}

pub(super) struct Draft {
    pub title: String,
    pub op: Op,
    pub category: Category,
    pub inputs: Vec<usize>,
    pub output: usize,
    pub operation: String,
    pub equation: String,
}

/// The point a step computes where its op alone says it: the one routing into the block, attention's
/// scores, weights and head outputs, an activation, a sparse indexer's scores and selection, and
/// an FFN's top-k and combination. A builder names any other point with `Node::at`.
fn op_point(op: Op, category: Category) -> Option<Point> {
    match op {
        Op::Route => Some(Point::BlockIn),
        Op::Scores { .. } => Some(Point::Scores),
        Op::Softmax => Some(Point::Probs),
        Op::Concat | Op::WeightedSum { .. } => Some(Point::Heads),
        Op::Activation => Some(Point::Act),
        Op::Index { .. } => Some(Point::IndexScores),
        Op::Select { .. } => Some(Point::IndexMask),
        Op::TopK if category == Category::Ffn => Some(Point::Routing),
        Op::Combine if category == Category::Ffn => Some(Point::Combine),
        Op::TopK
        | Op::Combine
        | Op::Lookup
        | Op::Norm
        | Op::MatMul
        | Op::Rope
        | Op::Add
        | Op::Scale
        | Op::Conv { .. }
        | Op::Scan { .. } => None,
    }
}

pub(super) fn n(x: u64) -> Dim {
    Dim::N(x)
}

/// The component a parameter drawn in `category` counts towards, where the two agree (everything
/// but the LM head, drawn with the embedding).
fn component_of(category: Category) -> Component {
    match category {
        Category::Attention => Component::Attention,
        Category::Mixer => Component::Mixer,
        Category::Ffn => Component::Ffn,
        Category::Norm => Component::Norm,
        Category::Embed => Component::Embedding,
        Category::Aux => Component::Aux,
    }
}

impl<'a> Linear<'a> {
    /// A bias-free matmul against a whole stored `[rows, cols]` weight, its parameter counted
    /// with `category`'s component. `names`: the weight's, the output's and the input's.
    pub(super) fn whole(
        role: Role,
        title: impl Into<String>,
        [w, out, input]: [&'a str; 3],
        rows: u64,
        cols: u64,
        category: Category,
        operation: String,
    ) -> Self {
        Linear {
            role,
            title: title.into(),
            w,
            out,
            input,
            rows,
            cols,
            stored_rows: rows,
            block: None,
            bias: false,
            component: component_of(category),
            category,
            cached: false,
            operation,
        }
    }
}

/// One matmul against a stored weight, or against a block of its rows.
pub(super) struct Linear<'a> {
    pub role: Role,
    pub title: String,
    /// Weight and output display names.
    pub w: &'a str,
    pub out: &'a str,
    pub input: &'a str,
    /// Rows (outputs) this step computes, and the features it reads.
    pub rows: u64,
    pub cols: u64,
    /// Output rows of the whole stored tensor, and the block read here (Python slice syntax) when
    /// that is not all of them.
    pub stored_rows: u64,
    pub block: Option<String>,
    pub bias: bool,
    pub component: Component,
    pub category: Category,
    pub cached: bool,
    pub operation: String,
}

impl<'s> Builder<'s> {
    pub(super) fn all_layers(&self) -> LayerSet {
        LayerSet::all(self.spec.layers)
    }

    /// Register a checkpoint tensor (once per name) and return its index.
    pub(super) fn param(
        &mut self,
        role: Role,
        bias: bool,
        shape: Vec<u64>,
        component: Component,
        per_layer: bool,
    ) -> usize {
        // Inkling's shared experts: one tensor per projection, [S, I, H] even for one expert.
        let stacked_shared = matches!(role, Role::SharedGate | Role::SharedUp | Role::SharedDown)
            && (self.spec.moe.as_ref())
                .is_some_and(|m| m.scoring == crate::spec::Scoring::SigmoidSink);
        let shape = if stacked_shared {
            let s = self.spec.moe.as_ref().map_or(1, |m| m.shared_experts);
            std::iter::once(s).chain(shape).collect()
        } else {
            shape
        };
        let (hf, gguf) = names(self.spec.layout, role, bias);
        let hf = self.spec.hf_wrap.apply(&hf);
        // A name's stored shape can differ between layer variants (K in MiMo-V2-Flash's full and
        // sliding layers): those are tensors of their own.
        if let Some(i) = self.params.iter().position(|p| {
            p.hf == hf && p.shape == shape && !(self.apart && per_layer && p.layers.is_some())
        }) {
            // The same tensor read by another layer variant (a post-FFN norm after both the dense
            // and the MoE FFN) exists in the layers of both.
            if let (true, Some(layers)) = (per_layer, &self.params[i].layers) {
                self.params[i].layers = Some(layers.union(self.holders()));
            }
            return i;
        }
        let layers = per_layer.then(|| self.holders().clone());
        let (experts, active, routed) = match self.experts {
            Some((e, k))
                if matches!(
                    role,
                    Role::ExpertGate
                        | Role::ExpertUp
                        | Role::ExpertGateUp
                        | Role::ExpertDown
                        | Role::AttnExpertQ
                        | Role::AttnExpertO
                ) =>
            {
                (e, k, true)
            }
            // QK norms stored one per head (StableLM's `q_layernorm.norms.{e}`): one each.
            _ if matches!(role, Role::QNorm | Role::KNorm)
                && crate::naming::qk_norm_per_head(self.spec.layout) =>
            {
                let a = &self.attn;
                let n = if role == Role::QNorm {
                    a.heads
                } else {
                    a.kv_heads
                };
                (n, n, false)
            }
            _ if stacked_shared => (1, 1, false),
            // Gemma 3n's projections into and out of the streams after the first: one each.
            _ if matches!(role, Role::AltUpProj | Role::AltUpUnembed) => {
                let extra = self.spec.altup.map_or(1, |a| a.streams - 1);
                (extra, extra, false)
            }
            _ => (1, 1, false),
        };
        let flat = routed
            && self
                .spec
                .moe
                .as_ref()
                .is_some_and(|m| m.storage == crate::spec::ExpertStorage::Flat);
        // A head stored with more rows than the logits kept: the rest pad it.
        // Only the head's weight, where the logits past `logits_kept` are dropped, pads rows.
        let padding_rows = match (role == Role::LmHead && !bias, self.spec.logits_kept) {
            (true, Some(kept)) => shape.first().map_or(0, |rows| rows.saturating_sub(kept)),
            (true, None) | (false, _) => 0,
        };
        self.params.push(Param {
            hf,
            gguf,
            shape,
            component,
            layers,
            experts,
            active,
            routed,
            flat,
            stack: self.stack,
            padding_rows,
        });
        self.params.len() - 1
    }

    /// The layers whose checkpoint entries hold the tensors being registered.
    fn holders(&self) -> &LayerSet {
        self.param_layers.as_ref().unwrap_or(&self.layers)
    }

    pub(super) fn weight(
        &mut self,
        param: usize,
        name: &str,
        dims: [Dim; 2],
        slice: Option<String>,
    ) -> usize {
        self.push(
            name,
            dims,
            TensorKind::Weight {
                param,
                slice,
                note: None,
            },
        )
    }

    /// The last tensor named `name`: an earlier step's output that a later step reads again.
    pub(super) fn latest(&self, name: &str) -> usize {
        self.tensors
            .iter()
            .rposition(|t| t.name == name)
            .unwrap_or_else(|| unreachable!("{name} is drawn before it is read"))
    }

    pub(super) fn act(&mut self, name: &str, dims: [Dim; 2]) -> usize {
        self.push(name, dims, TensorKind::Activation { cached: false })
    }

    pub(super) fn cached(&mut self, name: &str, dims: [Dim; 2]) -> usize {
        self.push(name, dims, TensorKind::Activation { cached: true })
    }

    pub(super) fn push(&mut self, name: &str, dims: [Dim; 2], kind: TensorKind) -> usize {
        self.tensors.push(Tensor {
            name: name.to_string(),
            dims,
            kind,
        });
        self.tensors.len() - 1
    }

    pub(super) fn step(&mut self, d: Draft) -> Node {
        self.steps += 1;
        Node::Step(Step {
            number: self.steps,
            title: d.title,
            op: d.op,
            category: d.category,
            inputs: d.inputs,
            output: d.output,
            operation: d.operation,
            equation: d.equation,
            layers: None,
            point: op_point(d.op, d.category),
        })
    }

    pub(super) fn scope(
        &self,
        kind: ScopeKind,
        title: &str,
        end: &str,
        repeat: u64,
        children: Vec<Node>,
    ) -> Scope {
        Scope {
            kind,
            title: title.into(),
            end: end.into(),
            repeat,
            active: None,
            layers: None,
            children,
        }
    }

    pub(super) fn seq(&self, rows: u64) -> [Dim; 2] {
        [n(rows), Dim::Seq]
    }

    /// Linear weights of this layout (and GPT-OSS's stacked experts, DBRX's experts' down
    /// projection) are stored [in, out].
    fn stores_in_out(&self, role: Role) -> bool {
        use crate::spec::ExpertStorage;
        let in_out = match self.spec.moe.as_ref().map(|m| m.storage) {
            Some(ExpertStorage::Stacked { out_in: false, .. }) => {
                matches!(role, Role::ExpertGateUp | Role::ExpertDown)
            }
            Some(ExpertStorage::Flat) => role == Role::ExpertDown,
            Some(ExpertStorage::Stacked { out_in: true, .. } | ExpertStorage::PerExpert) | None => {
                false
            }
        };
        self.spec.layout.stores_in_out() || in_out
    }

    /// A matmul step: `out = W · input (+ b)`.
    pub(super) fn linear(&mut self, l: Linear) -> Node {
        let in_out = self.stores_in_out(l.role);
        let shape = if in_out {
            vec![l.cols, l.stored_rows]
        } else {
            vec![l.stored_rows, l.cols]
        };
        // The head's and the embedding's own projections sit outside the blocks: one instance,
        // not one per layer; so do Gemma 3n's projections into and out of its streams. Qwen4-
        // Exp's n-gram embeddings are a layer's own.
        let per_layer = (!matches!(l.component, Component::LmHead | Component::Embedding)
            || matches!(l.role, Role::NgramKey | Role::NgramValue))
            && !matches!(l.role, Role::AltUpProj | Role::AltUpUnembed);
        let p = self.param(l.role, false, shape, l.component, per_layer);
        let slice = l.block.as_ref().map(|r| {
            if in_out {
                format!("[:, {r}]")
            } else {
                format!("[{r}, :]")
            }
        });
        let wt = self.weight(p, l.w, [n(l.rows), n(l.cols)], slice);
        let mut inputs = vec![wt];
        let mut eq = format!("{} = {} · {}", l.out, l.w, l.input);
        if l.bias {
            let pb = self.param(l.role, true, vec![l.stored_rows], l.component, per_layer);
            let name = format!("b{}", l.w.strip_prefix('W').unwrap_or(l.w));
            inputs.push(self.weight(
                pb,
                &name,
                [n(l.rows), n(1)],
                l.block.as_ref().map(|r| format!("[{r}]")),
            ));
            eq += &format!(" + {name}");
        }
        let o = if l.cached {
            self.cached(l.out, self.seq(l.rows))
        } else {
            self.act(l.out, self.seq(l.rows))
        };
        self.step(Draft {
            title: l.title,
            op: Op::MatMul,
            category: l.category,
            inputs,
            output: o,
            operation: l.operation,
            equation: eq,
        })
    }

    pub(super) fn norm_name(&self) -> &'static str {
        match self.spec.norm.kind {
            NormKind::Rms | NormKind::PlainRms | NormKind::RmsBias => "RMSNorm",
            NormKind::Layer { .. } | NormKind::Plain => "LayerNorm",
            NormKind::Unit => "L2 norm",
        }
    }

    /// A norm step over `dim` features reading `role`'s weight, or the `block` of it given.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn norm_step(
        &mut self,
        title: &str,
        role: Role,
        gamma: &str,
        input: &str,
        output: &str,
        dim: u64,
        per_layer: bool,
        block: Option<(u64, String)>,
    ) -> Node {
        let norm = self.spec.norm.clone();
        self.norm_step_as(
            &norm, title, role, gamma, input, output, dim, per_layer, block,
        )
    }

    /// `norm_step` with a norm other than the model's (the DeepSeek indexer's key LayerNorm).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn norm_step_as(
        &mut self,
        norm: &crate::spec::Norm,
        title: &str,
        role: Role,
        gamma: &str,
        input: &str,
        output: &str,
        dim: u64,
        per_layer: bool,
        block: Option<(u64, String)>,
    ) -> Node {
        let (stored, slice) = match block {
            Some((stored, rows)) => (stored, Some(format!("[{rows}]"))),
            None => (dim, None),
        };
        let mut inputs = vec![];
        if norm.kind.has_weight() {
            let p = self.param(role, false, vec![stored], Component::Norm, per_layer);
            inputs.push(self.weight(p, gamma, [n(dim), n(1)], slice.clone()));
        }
        if norm.kind.has_bias() {
            let pb = self.param(role, true, vec![stored], Component::Norm, per_layer);
            let beta = format!("β{}", gamma.strip_prefix('γ').unwrap_or(""));
            inputs.push(self.weight(pb, &beta, [n(dim), n(1)], slice));
        }
        let out = self.act(output, self.seq(dim));
        let w = if norm.unit_offset {
            format!("(1 + {gamma})")
        } else {
            gamma.to_string()
        };
        let eps = norm.eps;
        let (equation, name) = match norm.kind {
            NormKind::Rms => (
                format!("{output} = {w} ⊙ {input} / √(mean({input}²) + ε), ε = {eps}"),
                "RMSNorm",
            ),
            NormKind::Layer { bias } => (
                format!(
                    "{output} = {w} ⊙ ({input} − mean) / √(var({input}) + ε){}, ε = {eps}",
                    if bias { " + β" } else { "" }
                ),
                "LayerNorm",
            ),
            NormKind::Plain => (
                format!("{output} = ({input} − mean) / √(var({input}) + ε), ε = {eps}, no learned scale or shift"),
                "LayerNorm",
            ),
            NormKind::PlainRms => (
                format!("{output} = {input} / √(mean({input}²) + ε), ε = {eps}, no learned scale"),
                "RMSNorm",
            ),
            NormKind::RmsBias => (
                format!("{output} = {w} ⊙ {input} / √(mean({input}²) + ε) + β, ε = {eps}"),
                "RMSNorm",
            ),
            NormKind::Unit => (
                format!("{output} = {input} / √(Σ{input}² + ε), ε = {eps}: length 1, no learned scale"),
                "onto the unit sphere",
            ),
        };
        self.step(Draft {
            title: title.into(),
            op: Op::Norm,
            category: Category::Norm,
            inputs,
            output: out,
            operation: format!("Normalize each position's {dim} features ({name})"),
            equation,
        })
    }

    pub(super) fn embedding(&mut self) -> Scope {
        let spec = self.spec;
        if let Some(draft) = spec.draft {
            let steps = self.draft_input(draft);
            return self.scope(ScopeKind::Embedding, "Embedding", "Embedding end", 1, steps);
        }
        let d = spec.hidden;
        let width = spec.embed_width();
        let p = self.param(
            Role::Embed,
            false,
            vec![spec.vocab, width],
            Component::Embedding,
            false,
        );
        let t = self.act("T", [n(spec.vocab), Dim::Seq]);
        let e = self.push(
            "E",
            [n(width), n(spec.vocab)],
            TensorKind::Weight {
                param: p,
                slice: None,
                note: Some("drawn transposed: one column per token".into()),
            },
        );
        let looked_up = if spec.embedding.projected.is_some() {
            "Xₑ"
        } else {
            "X"
        };
        let x = self.act(looked_up, self.seq(width));
        let mut steps = vec![self
            .step(Draft {
                title: "Token embedding".into(),
                op: Op::Lookup,
                category: Category::Embed,
                inputs: vec![t, e],
                output: x,
                operation: "Look up each token's embedding row".into(),
                equation: format!(
                    "{looked_up} = E · T  (column t of {looked_up} is row T[t] of the embedding)"
                ),
            })
            .at(Point::EmbedTokens)];
        if spec.embedding.projected.is_some() {
            steps.push(
                self.linear(Linear {
                    role: Role::EmbedProjIn,
                    title: "Projection in".into(),
                    w: "W_in",
                    out: "X",
                    input: looked_up,
                    rows: d,
                    cols: width,
                    stored_rows: d,
                    block: None,
                    bias: false,
                    component: Component::Embedding,
                    category: Category::Embed,
                    cached: false,
                    operation: format!(
                        "Map each token's {width}-wide embedding to the hidden size, {d}"
                    ),
                })
                .at(Point::ProjectIn),
            );
        }
        // The scaling, shifts, positions and norm after the lookup: the last of them gives the
        // embedding the blocks read.
        let lookup = steps.len();
        if spec.embedding.scale_by_sqrt_hidden {
            let xs = self.act("X", self.seq(d));
            steps.push(
                self.step(Draft {
                    title: "Embedding scale".into(),
                    op: Op::Scale,
                    category: Category::Embed,
                    inputs: vec![],
                    output: xs,
                    operation: "Scale the embeddings up by the square root of the hidden size"
                        .into(),
                    equation: format!("X = X · √{d} (= {:.4})", (d as f64).sqrt()),
                })
                .at(Point::EmbedScale),
            );
        }
        if spec.embedding.affine {
            // ZAYA: a learned shift, then a learned scale, per feature.
            let mut inputs = vec![];
            for (role, name) in [(Role::EmbedShift, "βₑ"), (Role::EmbedScale, "γₑ")] {
                let p = self.param(role, false, vec![d], Component::Embedding, false);
                inputs.push(self.weight(p, name, [n(d), n(1)], None));
            }
            let xs = self.act("X", self.seq(d));
            steps.push(self.step(Draft {
                title: "Embedding shift and scale".into(),
                op: Op::Scale,
                category: Category::Embed,
                inputs,
                output: xs,
                operation: "Shift each feature of the embeddings by a learned amount, then scale it by a learned factor".into(),
                equation: "X = (X + βₑ) ⊙ γₑ".into(),
            }));
        }
        let m = spec.embedding.multiplier;
        if m != 1.0 {
            let xs = self.act("X", self.seq(d));
            steps.push(self.step(Draft {
                title: "Embedding multiplier".into(),
                op: Op::Scale,
                category: Category::Embed,
                inputs: vec![],
                output: xs,
                operation: format!("Scale the embeddings by a fixed {m}"),
                equation: format!("X = X · {m}"),
            }));
        }
        if let Some(positions) = spec.embedding.learned_positions {
            let pp = self.param(
                Role::PosEmbed,
                false,
                vec![positions, d],
                Component::Embedding,
                false,
            );
            let w = self.push(
                "Wₚ",
                [n(d), n(positions)],
                TensorKind::Weight {
                    param: pp,
                    slice: None,
                    note: Some("drawn transposed: one column per position".into()),
                },
            );
            let xp = self.act("X", self.seq(d));
            steps.push(self.step(Draft {
                title: "Position embedding".into(),
                op: Op::Add,
                category: Category::Embed,
                inputs: vec![w],
                output: xp,
                operation: format!(
                    "Add the learned embedding of each position (at most {})",
                    positions - spec.embedding.position_offset
                ),
                equation: match spec.embedding.position_offset {
                    0 => "X = X + Wₚ[:, pos]".into(),
                    o => format!("X = X + Wₚ[:, pos + {o}]  (the first {o} rows are never read)"),
                },
            }));
        }
        if let Position::Sinusoidal(table) = spec.position {
            let xp = self.act("X", self.seq(d));
            steps.push(self.step(Draft {
                title: "Position embedding".into(),
                op: Op::Add,
                category: Category::Embed,
                inputs: vec![],
                output: xp,
                operation: "Add each position's fixed sinusoids (computed, not learned)".into(),
                equation: format!(
                    "X = X + P[:, pos + {o}], P[r] = [sin(r·ωᵢ), cos(r·ωᵢ)], {}",
                    match table {
                        crate::spec::Sinusoids::Fairseq =>
                            format!("ωᵢ = 10000^(−i/{}), i < {}", (d / 2).max(2) - 1, d / 2),
                        crate::spec::Sinusoids::Ctrl => format!(
                            "ωᵢ = 10000^(−2i/{d}), {} sines and {} cosines",
                            d.div_ceil(2),
                            d / 2
                        ),
                    },
                    o = spec.embedding.position_offset
                ),
            }));
        }
        if spec.embedding.norm {
            let title = format!("Embedding {}", self.norm_name());
            steps.push(self.norm_step(&title, Role::EmbedNorm, "γₑ", "X", "X", d, false, None));
        }
        if steps.len() > lookup {
            let last = steps.pop().expect("a step after the lookup");
            steps.push(last.at(Point::Embed));
        }
        if let Some(p) = spec.prompt {
            steps.push(self.segments(p));
        }
        if let Position::Buckets(b) = spec.position {
            steps.push(self.position_bias(b));
        }
        if let Some(p) = spec.per_layer_input {
            steps.extend(self.per_layer_inputs(p, t));
        }
        if spec.streams() > 1 {
            steps.push(self.hyper_widen());
        }
        if spec.altup.is_some() {
            steps.extend(self.altup_streams());
        }
        self.scope(ScopeKind::Embedding, "Embedding", "Embedding end", 1, steps)
    }

    /// CPM-Ant's learned prompt before the text, and each position's segment embedding added.
    fn segments(&mut self, p: crate::spec::Prompt) -> Node {
        let d = self.spec.hidden;
        let table = self.param(
            Role::SegmentEmbed,
            false,
            vec![p.segments, d],
            Component::Embedding,
            false,
        );
        let w = self.push(
            "Wₛ",
            [n(d), n(p.segments)],
            TensorKind::Weight {
                param: table,
                slice: None,
                note: Some("drawn transposed: one column per segment".into()),
            },
        );
        let x = self.act("X", self.seq(d));
        let first = p.row(self.spec.out_vocab(), 0);
        self.step(Draft {
            title: "Prompt and segment embedding".into(),
            op: Op::Add,
            category: Category::Embed,
            inputs: vec![w],
            output: x,
            operation: format!(
                "The first pass puts {} learned prompt tokens (embedding rows {}–{}) before the text; every position then gets its segment's embedding added, segment {} for the prompt and {} for the text",
                p.length,
                first,
                first + p.length.max(1) - 1,
                crate::spec::PROMPT_SEGMENT,
                crate::spec::TEXT_SEGMENT
            ),
            equation: "X = E[:, [prompt; T]] + Wₛ[:, seg]".into(),
        }).at(Point::Segment)
    }

    /// The bucketed relative-position bias (`Position::Buckets`): computed once a pass from one
    /// table, added to the scores of every layer.
    fn position_bias(&mut self, b: crate::spec::Buckets) -> Node {
        let spec = self.spec;
        let (rows, heads) = (spec.bias_rows(b), spec.attn.heads);
        let table = self.param(
            Role::PositionBias,
            false,
            vec![rows, heads],
            Component::Attention,
            false,
        );
        let w = self.push(
            "Wᵦ",
            [n(heads), n(rows)],
            TensorKind::Weight {
                param: table,
                slice: None,
                note: Some("drawn transposed: one column per bucket".into()),
            },
        );
        let out = self.act("Bₚ", [Dim::Seq, Dim::Seq]);
        let across = match spec.prompt {
            Some(p) => format!(
                "; a pair in different segments reads row {} + segment(i)·{} + segment(j)",
                b.buckets, p.segments
            ),
            None => String::new(),
        };
        self.step(Draft {
            title: "Position bias".into(),
            op: Op::Lookup,
            category: Category::Embed,
            inputs: vec![w],
            output: out,
            operation: format!(
                "Look up, for each head and each pair of positions, the learned bias of the key's distance from the query: {} buckets each way, one per distance below {}, then spaced by log distance up to {}; every layer adds it to its scores",
                b.buckets / 2,
                b.buckets / 4,
                b.max_distance
            ),
            equation: format!("Bₚ[h, i, j] = Wᵦ[h, bucket(j − i)]{across}"),
        }).at(Point::PositionBias)
    }

    /// Per-layer embeddings (Gemma 4): every layer's `width` values per token, from a table of
    /// their own and from the embeddings.
    fn per_layer_inputs(&mut self, p: crate::spec::PerLayerInput, ids: usize) -> Vec<Node> {
        let spec = self.spec;
        let (d, w) = (spec.hidden, p.width);
        let lw = spec.layers * w;
        let table = self.param(
            Role::PleEmbed,
            false,
            vec![p.vocab, lw],
            Component::Embedding,
            false,
        );
        let e = self.push(
            "Eₚ",
            [n(lw), n(p.vocab)],
            TensorKind::Weight {
                param: table,
                slice: None,
                note: Some("drawn transposed: one column per token".into()),
            },
        );
        let looked = self.act("Pₜ", self.seq(lw));
        let mut steps = vec![self.step(Draft {
            title: "Per-layer embedding".into(),
            op: Op::Lookup,
            category: Category::Embed,
            inputs: vec![ids, e],
            output: looked,
            operation: format!(
                "Look up each token's {w} values for each of the {} layers, scaled by √{w}",
                spec.layers
            ),
            equation: format!("Pₜ = Eₚ · T · √{w}"),
        })];
        let proj = self.param(
            Role::PleProj,
            false,
            vec![lw, d],
            Component::Embedding,
            false,
        );
        let wp = self.weight(proj, "Wₚ", [n(lw), n(d)], None);
        let projected = self.act("Pₓ", self.seq(lw));
        steps.push(self.step(Draft {
            title: "Per-layer projection".into(),
            op: Op::MatMul,
            category: Category::Embed,
            inputs: vec![wp],
            output: projected,
            operation: format!(
                "Project the embeddings to every layer's {w} values, scaled by 1/√{d}"
            ),
            equation: format!("Pₓ = Wₚ · X / √{d}"),
        }));
        let norm = self.param(Role::PleProjNorm, false, vec![w], Component::Norm, false);
        let g = self.weight(norm, "γₚ", [n(w), n(1)], None);
        let normed = self.act("Pₓ′", self.seq(lw));
        steps.push(self.step(Draft {
            title: format!("Per-layer projection {}", self.norm_name()),
            op: Op::Norm,
            category: Category::Embed,
            inputs: vec![g],
            output: normed,
            operation: format!("Normalize each layer's {w} values of each position (RMSNorm, one weight for all layers)"),
            equation: format!("Pₓ′ = γₚ ⊙ Pₓ / √(mean(Pₓ²) + ε) per layer's {w}, ε = {}", spec.norm.eps),
        }));
        let both = self.act("Pₗ", self.seq(lw));
        steps.push(self.step(Draft {
            title: "Per-layer inputs".into(),
            op: Op::Add,
            category: Category::Embed,
            inputs: vec![looked],
            output: both,
            operation: "Add the looked-up and the projected values, scaled by 1/√2: layer b reads its share".into(),
            equation: "Pₗ = (Pₓ′ + Pₜ) / √2".into(),
        }).at(Point::PerLayerInputs));
        steps
    }

    /// The end of a layer after its FFN (Gemma 4): its per-layer input gated in, then its stored
    /// scalar.
    /// `source`: what the per-layer gate reads (the layer's output, or Gemma 3n's scaled active
    /// stream).
    pub(super) fn layer_tail(&mut self, source: &str) -> Vec<Node> {
        let spec = self.spec;
        let d = spec.hidden;
        let mut steps = Vec::new();
        if let Some(p) = spec.per_layer_input {
            let w = p.width;
            let mut inner = Vec::new();
            let lin = |role, title, names, rows, cols, operation| {
                Linear::whole(role, title, names, rows, cols, Category::Ffn, operation)
            };
            inner.push(
                self.linear(lin(
                    Role::PleGate,
                    "Per-layer gate",
                    ["Wₚg", "Gₚ", source],
                    w,
                    d,
                    format!("Project the layer's output to {w} gate values"),
                ))
                .at(Point::PleGate),
            );
            let share = self.latest("Pₗ");
            let a = self.act("Aₚ", self.seq(w));
            let act = spec.mlp.act.label();
            inner.push(
                self.step(Draft {
                    title: "Per-layer input gating".into(),
                    op: Op::Activation,
                    category: Category::Ffn,
                    inputs: vec![share],
                    output: a,
                    operation: format!(
                        "Gate this layer's {w} per-layer values by {act} of the gate"
                    ),
                    equation: format!("Aₚ = {act}(Gₚ) ⊙ Pₗ[b·{w} : (b+1)·{w}]"),
                })
                .at(Point::PleAct),
            );
            inner.push(
                self.linear(lin(
                    Role::PleUp,
                    "Per-layer up-projection",
                    ["Wₚu", "Yₚ", "Aₚ"],
                    d,
                    w,
                    format!("Project the {w} gated values back to {d}"),
                ))
                .at(Point::PleUp),
            );
            let title = format!("Per-layer {}", self.norm_name());
            inner.push(
                self.norm_step(&title, Role::PleNorm, "γₚᵤ", "Yₚ", "Yₚ′", d, true, None)
                    .at(Point::PleNorm),
            );
            if let Some(Node::Step(s)) = inner.last_mut() {
                s.category = Category::Ffn;
            }
            steps.push(Node::Scope(self.scope(
                ScopeKind::PerLayer,
                "Per-layer input",
                "Per-layer end",
                1,
                inner,
            )));
            let (width, operation, equation) = match spec.altup {
                // Gemma 3n: into every stream after the first.
                Some(a) => (
                    a.streams * d,
                    "Add the per-layer signal to every stream after the first".to_string(),
                    format!("Xᵦ₊₁ᵢ = Xᵦ₊₁ᵢ + Yₚ′, 1 ≤ i < {}", a.streams),
                ),
                None => (
                    d,
                    "Add the per-layer signal to the layer's output".to_string(),
                    "Xᵦ₊₁ = Xᵦ₊₁ + Yₚ′".to_string(),
                ),
            };
            let x = self.act("Xᵦ₊₁", self.seq(width));
            steps.push(
                self.step(Draft {
                    title: "Per-layer residual".into(),
                    op: Op::Add,
                    category: Category::Norm,
                    inputs: vec![],
                    output: x,
                    operation,
                    equation,
                })
                .at(Point::PleResid),
            );
        }
        if spec.layer_scalar {
            let p = self.param(Role::LayerScalar, false, vec![1], Component::Norm, true);
            let s = self.weight(p, "sᵦ", [n(1), n(1)], None);
            let x = self.act("Xᵦ₊₁", self.seq(d));
            steps.push(
                self.step(Draft {
                    title: "Layer scale".into(),
                    op: Op::Scale,
                    category: Category::Norm,
                    inputs: vec![s],
                    output: x,
                    operation: "Multiply the layer's output by its stored scalar".into(),
                    equation: "Xᵦ₊₁ = sᵦ · Xᵦ₊₁".into(),
                })
                .at(Point::LayerScalar),
            );
        }
        steps
    }

    /// The step every block opens with: the residual stream, `width` wide, routed in.
    pub(super) fn block_input(&mut self, width: u64, operation: String) -> (usize, Node) {
        let xb = self.act("Xᵦ", self.seq(width));
        let step = self.step(Draft {
            title: "Block input".into(),
            op: Op::Route,
            category: Category::Norm,
            inputs: vec![],
            output: xb,
            operation,
            equation: "Xᵦ = X when b=0; otherwise output of block b−1".into(),
        });
        (xb, step)
    }

    pub(super) fn block(&mut self) -> Scope {
        let spec = self.spec;
        let d = spec.hidden;
        let place = spec.norm.place;
        let mut children = Vec::new();

        let (xb, input) =
            self.block_input(self.stream_width(), "Route hidden state into block".into());
        children.push(input);
        // Layers may lack one of the two sublayers (Nemotron-H: each layer is a mixer or an FFN
        // alone); each half then runs only in the layers that have it.
        // Cross-attention layers (Mllama) are drawn apart, after the block: text alone skips them.
        let mixer_layers = spec.layers_where(|l| l.mixer != Mixer::None && l.mixer.runs_on_text());
        let ffn_layers = spec.layers_where(|l| l.ffn != Ffn::None && l.mixer.runs_on_text());
        let cross = spec.layers_where(|l| !l.mixer.runs_on_text());
        let mixer_start = children.len();
        self.layers = mixer_layers.clone();
        // Where some layers mix by a recurrence, the first sublayer is named for what it does in
        // all of them: it mixes positions.
        let ssm_layers = spec.layers_where(|l| l.mixer.recurrent());
        let sub = if ssm_layers.is_empty() {
            "Attention"
        } else {
            "Mixer"
        };
        // Qwen4-Exp's n-gram embeddings join the streams before the mixer reads them.
        if let Some(p) = &spec.ngram_ple {
            children.extend(self.ngram_ple(p));
        }
        // Zamba2's shared block feeds the mixer's input, not the stream.
        let mixer_in = match spec.shared.as_ref().filter(|s| !s.layers.is_empty()) {
            Some(s) => {
                children.extend(self.shared_block(s));
                "Xₘ"
            }
            // Hyper-connections weigh the streams into the attention's input.
            None if spec.hyper.is_some() => {
                children.extend(self.hyper_in(Mix::Attention, "Xᵦ", "Xₕ"));
                "Xₕ"
            }
            // Gated streams are normed in their mix: no norm follows.
            None if spec.gated_streams.is_some() => {
                children.extend(self.gated_in(Some(Mix::Attention), "Xᵦ", "Xₕ"));
                "Xₕ"
            }
            None => "Xᵦ",
        };
        let attn_in = if spec.gated_streams.is_some() {
            mixer_in
        } else if !place.before() {
            "Xᵦ"
        } else if spec.skip_first_attn_norm {
            children.push(self.attn_norm_after_first());
            "Xᵦ′"
        } else {
            let title = format!("{sub} {}", self.norm_name());
            children.push(
                self.norm_step(&title, Role::AttnNorm, "γ", mixer_in, "Xᵦ′", d, true, None)
                    .at(Point::AttnNorm),
            );
            if spec.gated_norm.is_some() {
                children.extend(self.norm_gate(Role::AttnNormDown, Role::AttnNormUp, "Xᵦ′"));
            }
            "Xᵦ′"
        };
        // Recurrent layers normed before their mixer where the attention layers are not (OLMo
        // hybrid).
        let mut rec_in = attn_in;
        if let Some(p) = spec
            .recurrent_place
            .filter(|p| p.before() && !place.before())
        {
            debug_assert_eq!(
                p,
                NormPlace::Pre,
                "only pre-norm recurrent layers are drawn"
            );
            self.layers = ssm_layers.clone();
            let title = format!("{sub} {}", self.norm_name());
            let mut step = self
                .norm_step(&title, Role::AttnNorm, "γ", "Xᵦ", "Xᵦ′", d, true, None)
                .at(Point::AttnNorm);
            only_in(std::slice::from_mut(&mut step), &ssm_layers, spec.layers);
            children.push(step);
            self.layers = mixer_layers.clone();
            rec_in = "Xᵦ′";
        }
        // Attention and Mamba2 side by side (Falcon-H1): each reads the normed input scaled by
        // its multiplier, and their outputs, scaled, are summed.
        let mut attn_in = attn_in;
        if let Some(m) = spec.mup {
            for (factor, name, what, input) in [
                (m.ssm_in, "Xₛ", "Mamba2", &mut rec_in),
                (m.attn_in, "Xₐ", "Attention", &mut attn_in),
            ] {
                if factor != 1.0 {
                    let x = self.act(name, self.seq(d));
                    children.push(self.step(Draft {
                        title: format!("{what} input scale"),
                        op: Op::Scale,
                        category: Category::Mixer,
                        inputs: vec![],
                        output: x,
                        operation: format!(
                            "Scale the normed input the {} reads (μP)",
                            what.to_lowercase()
                        ),
                        equation: format!("{name} = {} · {}", crate::fmt::float(factor), *input),
                    }));
                    *input = name;
                }
            }
        }
        let variants = spec.attn_variants();
        // Each recurrent mixer over its layers; in a frame of its own beside the attention's,
        // where some layers attend.
        for mixer in Mixer::RECURRENT {
            let set = spec.layers_where(|l| l.mixer.recurrent_kind() == Some(mixer));
            if set.is_empty() {
                continue;
            }
            self.layers = set.clone();
            // A loader that gives layers a recurrent mixer gives the Spec its settings.
            let settings = "a recurrent layer's mixer has its settings in the Spec";
            let nodes = match mixer {
                Mixer::Mamba2 => self.mamba2(rec_in, spec.ssm.as_ref().expect(settings)),
                Mixer::Mamba => self.mamba(rec_in, spec.s6.as_ref().expect(settings)),
                Mixer::ShortConv => {
                    self.short_conv(rec_in, spec.short_conv.as_ref().expect(settings))
                }
                Mixer::DeltaNet => self.delta_net(rec_in, spec.delta.as_ref().expect(settings)),
                Mixer::Lightning => {
                    self.lightning(rec_in, spec.lightning.as_ref().expect(settings))
                }
                Mixer::RgLru => self.rg_lru(rec_in, spec.rg_lru.as_ref().expect(settings)),
                Mixer::Rwkv => self.rwkv_time_mix(rec_in, spec.rwkv.as_ref().expect(settings)),
                Mixer::MLstm => self.mlstm(rec_in, spec.mlstm.as_ref().expect(settings)),
                Mixer::Attention(_) | Mixer::Parallel(_) | Mixer::None | Mixer::CrossAttention => {
                    unreachable!("only recurrent kinds listed")
                }
            };
            let mut nodes = nodes;
            if spec.mup.is_some() {
                self.rename_output(&mut nodes, "Yₛ");
            }
            self.layers = self.all_layers();
            if variants.is_empty() && set == ssm_layers {
                children.extend(nodes);
            } else {
                children.push(framed(
                    ScopeKind::Mixer,
                    spec.mixer_title(mixer),
                    "Mixer end",
                    set,
                    nodes,
                ));
            }
        }
        children.extend(self.attention_part(attn_in, !ssm_layers.is_empty()));
        if let Some(m) = spec.mup {
            let (ya, ys) = (self.latest("Yₐ"), self.latest("Yₛ"));
            let y = self.act("Y", self.seq(d));
            children.push(self.step(Draft {
                title: "Mixer sum".into(),
                op: Op::Add,
                category: Category::Mixer,
                inputs: vec![ya, ys],
                output: y,
                operation: "Add the attention's and Mamba2's outputs, each scaled by its μP multiplier: the two mixers run side by side".into(),
                equation: format!(
                    "Y = {} · Yₐ + {} · Yₛ",
                    crate::fmt::float(m.attn_out),
                    crate::fmt::float(m.ssm_out)
                ),
            }));
        }
        // Inkling: the sublayer's output through a residual convolution over time.
        if let Some(c) = spec.out_conv {
            children.extend(self.out_conv(Role::AttnOutConv, "Attention", "Y", c));
        }
        // Post-norms in the layers placed so (not a hybrid's pre-normed recurrent layers).
        let post_layers = LayerSet::from_fn(spec.layers, |b| spec.place_at(b as usize).after());
        let y = if !place.after() {
            "Y"
        } else {
            let title = format!("Post-attention {}", self.norm_name());
            self.layers = post_layers.clone();
            let mut step = self
                .norm_step(&title, Role::PostAttnNorm, "γₐ", "Y", "Y′", d, true, None)
                .at(Point::PostAttnNorm);
            if post_layers.len() != mixer_layers.len() {
                only_in(std::slice::from_mut(&mut step), &post_layers, spec.layers);
                if let Node::Step(s) = &mut step {
                    s.equation += "; Y′ = Y in the other layers";
                }
            }
            children.push(step);
            self.layers = mixer_layers.clone();
            "Y′"
        };
        // The stream, or (MiniMax) the normed input in its place.
        let (stream_in, stream_name) = if place.replaces_stream() {
            (self.latest(attn_in), attn_in)
        } else {
            (xb, "Xᵦ")
        };
        let (mut inputs, xb_scaled) = (
            vec![stream_in],
            self.residual_scale(Role::ResidScaleAttn, "ρₐ"),
        );
        inputs.extend(xb_scaled.0);
        inputs.extend(self.ngpt_rate(Role::NgptRateAttn, "λₐ"));
        self.layers = self.all_layers();
        let no_ffn = spec.layers_where(|l| l.ffn == Ffn::None);
        let r = self.act(
            if no_ffn.len() == spec.layers {
                "Xᵦ₊₁"
            } else {
                "R"
            },
            self.seq(self.stream_width()),
        );
        if spec.hyper.is_some() || spec.gated_streams.is_some() {
            inputs.push(self.latest("gₐ"));
        }
        let mixed = sub.to_lowercase();
        children.push(self.step(Draft {
            title: format!("{sub} residual"),
            op: Op::Add,
            category: Category::Norm,
            inputs,
            output: r,
            operation: match spec.block {
                _ if no_ffn.len() == spec.layers => {
                    format!("Add the {mixed} output to the block input; this is the block's output")
                }
                Block::Sequential => format!("Add the {mixed} output to the block input"),
                Block::Parallel { .. } => format!("Add the {mixed} output to the block input; the FFN, run beside it on the same input, adds its own below"),
            },
            equation: match spec.stream_mix {
                Some(mix) => mixer_mix(spec, &mix, &self.tensors[r].name, stream_name, y),
                None if place == NormPlace::Sphere => {
                    ngpt_mix(spec, &self.tensors[r].name, stream_name, y, "λₐ")
                }
                None if spec.hyper.is_some() => {
                    self.hyper_add(Mix::Attention, &self.tensors[r].name, "Xᵦ", y)
                }
                None if spec.gated_streams.is_some() => {
                    self.gated_streams_add(Mix::Attention, &self.tensors[r].name, "Xᵦ", y)
                }
                None => {
                    let (stream, delta, k) = depth_factors(spec, false);
                    format!(
                        "{} = {stream}{}Xᵦ + {delta}{}{y}{k}",
                        self.tensors[r].name,
                        xb_scaled.1,
                        residual_factor(spec)
                    )
                }
            },
        }).at(Point::ResidAttn));
        if let Some(node) = children.last_mut() {
            self.affine_residual(node, false, y);
        }
        if mixer_layers.len() != spec.layers {
            only_in(&mut children[mixer_start..], &mixer_layers, spec.layers);
            if let Some(Node::Step(s)) = children.last_mut() {
                let bare = LayerSet::from_fn(spec.layers, |b| {
                    !mixer_layers.contains(b) && !cross.contains(b)
                });
                if !bare.is_empty() {
                    s.equation += &format!("; R = Xᵦ in layers {bare}, which have no mixer");
                }
                if !cross.is_empty() {
                    s.equation += &format!("; layers {cross} cross-attend to the image (below) and pass the stream through on text alone");
                }
            }
        }
        if no_ffn.len() == spec.layers {
            return self.block_scope(children);
        }
        // Post-residual: the stream is normed after the add, and the FFN reads and adds to that.
        let (r, stream) = if place.on_stream() {
            let title = format!("Attention {}", self.norm_name());
            children.push(
                self.norm_step(&title, Role::AttnNorm, "γ", "R", "R′", d, true, None)
                    .at(Point::AttnNorm),
            );
            (self.tensors.len() - 1, "R′")
        } else {
            (r, "R")
        };
        let ffn_start = children.len();
        self.layers = ffn_layers.clone();
        // A parallel block's FFN reads the block input too: through the attention's own norm, or
        // a second norm of its own.
        let ffn_in = match (spec.block, place) {
            (Block::Parallel { shared_norm: true }, _) => attn_in,
            (Block::Parallel { shared_norm: false }, _) => {
                let title = format!("MLP {}", self.norm_name());
                children.push(
                    self.norm_step(&title, Role::FfnNorm, "γ′", "Xᵦ", "Xᵦ″", d, true, None)
                        .at(Point::FfnNorm),
                );
                "Xᵦ″"
            }
            (Block::Sequential, NormPlace::Post) if post_layers.len() != spec.layers => {
                // The pre-normed recurrent layers norm the FFN's input too.
                let pre = LayerSet::from_fn(spec.layers, |b| !post_layers.contains(b));
                self.layers = pre.clone();
                let title = format!("MLP {}", self.norm_name());
                let mut step = self
                    .norm_step(&title, Role::FfnNorm, "γ′", "R", "R′", d, true, None)
                    .at(Point::FfnNorm);
                only_in(std::slice::from_mut(&mut step), &pre, spec.layers);
                if let Node::Step(s) = &mut step {
                    s.equation += "; R′ = R in the other layers";
                }
                children.push(step);
                self.layers = ffn_layers.clone();
                "R′"
            }
            (Block::Sequential, NormPlace::Post) => "R",
            (Block::Sequential, NormPlace::PostResidual) => stream,
            // Gated streams are normed in their mix: no norm follows.
            (Block::Sequential, _) if spec.gated_streams.is_some() => {
                children.extend(self.gated_in(Some(Mix::Mlp), "R", "Rₕ"));
                "Rₕ"
            }
            (
                Block::Sequential,
                NormPlace::Pre | NormPlace::Sandwich | NormPlace::Normed | NormPlace::Sphere,
            ) => {
                let input = if spec.hyper.is_some() {
                    children.extend(self.hyper_in(Mix::Mlp, "R", "Rₕ"));
                    "Rₕ"
                } else {
                    "R"
                };
                let title = format!("MLP {}", self.norm_name());
                match spec.gated_norm {
                    // A.X-K2: the MoE layers' norm is gated, under a name of its own.
                    Some(_) => {
                        let gated =
                            LayerSet::from_fn(spec.layers, |b| spec.gated_ffn_norm(b as usize));
                        let plain = LayerSet::from_fn(spec.layers, |b| !gated.contains(b));
                        for (set, role) in [(plain, Role::FfnNorm), (gated, Role::GatedFfnNorm)] {
                            if set.is_empty() {
                                continue;
                            }
                            self.layers = set.clone();
                            let mut steps = vec![self
                                .norm_step(&title, role, "γ′", input, "R′", d, true, None)
                                .at(Point::FfnNorm)];
                            if role == Role::GatedFfnNorm {
                                steps.extend(self.norm_gate(
                                    Role::FfnNormDown,
                                    Role::FfnNormUp,
                                    "R′",
                                ));
                            }
                            if set.len() != spec.layers {
                                only_in(&mut steps, &set, spec.layers);
                            }
                            children.extend(steps);
                        }
                        self.layers = ffn_layers.clone();
                    }
                    None => children.push(
                        self.norm_step(&title, Role::FfnNorm, "γ′", input, "R′", d, true, None)
                            .at(Point::FfnNorm),
                    ),
                }
                "R′"
            }
        };
        // LongCat-Flash's shortcut: the experts read the FFN's input beside the MLP; their
        // output S waits for the next layer's end.
        let shortcut = spec.layers_where(|l| l.ffn == Ffn::Shortcut);
        if !shortcut.is_empty() {
            self.layers = shortcut.clone();
            let mut scope = self.moe(ffn_in);
            self.rename_output(&mut scope.children, "S");
            scope.title = format!("MoE on the shortcut (layers {shortcut})");
            scope.layers = Some(shortcut.clone());
            children.push(Node::Scope(scope));
        }
        // Gemma 4's MLP and experts side by side.
        let both = spec.layers_where(|l| l.ffn == Ffn::DenseAndMoe);
        if !both.is_empty() {
            self.layers = both.clone();
            let stream = match (spec.block, place) {
                (Block::Sequential, NormPlace::Pre | NormPlace::Sandwich) => "R",
                _ => unreachable!("Gemma 4's FFN follows a pre-normed attention"),
            };
            children.extend(self.mlp_and_moe(ffn_in, stream));
        }
        let dense = spec.layers_where(|l| {
            matches!(l.ffn, Ffn::Dense | Ffn::Shortcut) && l.mixer.runs_on_text()
        });
        let sparse = spec.layers_where(|l| l.ffn == Ffn::Moe);
        let mixed = dense.len() != spec.layers && sparse.len() != spec.layers;
        // The dense layers by MLP width (Gemma 4's double-wide MLPs), then the MoE layers.
        let mut groups: Vec<(LayerSet, Option<u64>)> = Vec::new();
        for (set, w) in &spec.mlp_widths {
            let own = LayerSet::from_fn(spec.layers, |b| set.contains(b) && dense.contains(b));
            groups.push((own, Some(*w)));
        }
        let narrow = LayerSet::from_fn(spec.layers, |b| {
            dense.contains(b) && !spec.mlp_widths.iter().any(|(s, _)| s.contains(b))
        });
        groups.insert(0, (narrow, Some(spec.mlp.intermediate)));
        groups.push((sparse.clone(), None));
        let mixed = mixed || groups.iter().filter(|(s, _)| !s.is_empty()).count() > 1;
        for (set, width) in groups {
            if set.is_empty() {
                continue;
            }
            self.layers = set.clone();
            let mut scope = match width {
                Some(f) => self.mlp_of(ffn_in, f),
                None => self.moe(ffn_in),
            };
            if mixed {
                scope.title = format!("{} (layers {set})", scope.title);
                scope.layers = Some(set);
            }
            children.push(Node::Scope(scope));
        }
        let channel = spec.layers_where(|l| l.ffn == Ffn::ChannelMix);
        if !channel.is_empty() {
            self.layers = channel;
            children.push(Node::Scope(self.rwkv_channel_mix(ffn_in)));
        }
        self.layers = ffn_layers.clone();
        // MiniMax's FFN adds to its own normed input.
        let (r, stream) = if place.replaces_stream() {
            (self.latest(ffn_in), ffn_in)
        } else {
            (r, stream)
        };
        if let Some(c) = spec.out_conv {
            children.extend(self.out_conv(Role::FfnOutConv, "MLP", "M", c));
        }
        children.push(self.ffn_residual(r, stream));
        if place.on_stream() {
            let title = format!("MLP {}", self.norm_name());
            children.push(
                self.norm_step(&title, Role::FfnNorm, "γ′", "Hᵦ", "Xᵦ₊₁", d, true, None)
                    .at(Point::FfnNorm),
            );
        }
        children.extend(self.layer_tail("Xᵦ₊₁"));
        // RWKV in inference: the stream halved after every few layers.
        if let Some(r) = spec.rwkv.filter(|r| r.rescale_every > 0) {
            let halving = LayerSet::from_fn(spec.layers, |b| r.halves_after(b));
            if !halving.is_empty() {
                let x = self.latest("Xᵦ₊₁");
                let out = self.act("Xᵦ₊₁", self.seq(d));
                let mut step = self.step(Draft {
                    title: "Stream halving".into(),
                    op: Op::Scale,
                    category: Category::Norm,
                    inputs: vec![x],
                    output: out,
                    operation: format!("Halve the stream after every {}th layer, as transformers does in inference (with each layer's output projections divided to match) so that the sums stay in range in half precision", r.rescale_every),
                    equation: "Xᵦ₊₁ ← Xᵦ₊₁ / 2".into(),
                });
                only_in(std::slice::from_mut(&mut step), &halving, spec.layers);
                children.push(step);
            }
        }
        self.layers = self.all_layers();
        if ffn_layers.len() != spec.layers {
            only_in(&mut children[ffn_start..], &ffn_layers, spec.layers);
            if let Some(Node::Step(s)) = children.last_mut() {
                let bare = LayerSet::from_fn(spec.layers, |b| {
                    !ffn_layers.contains(b) && !cross.contains(b)
                });
                if !bare.is_empty() {
                    s.equation += &format!("; Xᵦ₊₁ = R in layers {bare}, which have no FFN");
                }
            }
        }

        self.block_scope(children)
    }

    /// The decoder block holding `children`, repeated over every layer.
    pub(super) fn block_scope(&self, children: Vec<Node>) -> Scope {
        let family = &self.spec.family;
        let mut block = self.scope(
            ScopeKind::Block,
            &format!("{family} Block b"),
            &format!("{family} end"),
            self.spec.layers,
            children,
        );
        block.layers = Some(self.all_layers());
        block
    }

    /// The attention of every attention layer: inline where one attention serves them all (and
    /// no recurrent layer sits beside it), else each variant's in a frame of its layers, as the
    /// dense and MoE FFNs, named by its span where one span sets each apart, else by its heads.
    pub(super) fn attention_part(&mut self, attn_in: &str, recurrent: bool) -> Vec<Node> {
        let spec = self.spec;
        let variants = spec.attn_variants();
        if variants.is_empty() {
            return Vec::new();
        }
        if variants.len() == 1 && !recurrent {
            // One attention for every attending layer, whichever of the Spec's it is.
            self.attn = variants[0].0.clone();
            let nodes = self.attention_any(attn_in);
            self.attn = spec.attn.clone();
            return nodes;
        }
        let mut nodes_out = Vec::new();
        let span_of = |set: &LayerSet| -> Option<std::mem::Discriminant<AttnSpan>> {
            let mut kinds = set.iter().map(|b| {
                spec.plan[b as usize]
                    .span()
                    .map(|s| std::mem::discriminant(&s))
            });
            let first = kinds.next()??;
            kinds.all(|k| k == Some(first)).then_some(first)
        };
        let kinds: Vec<_> = variants.iter().map(|(_, set)| span_of(set)).collect();
        let by_span = kinds.iter().all(|k| k.is_some())
            && (1..kinds.len()).all(|i| !kinds[..i].contains(&kinds[i]));
        for (a, set) in variants {
            self.attn = a.clone();
            self.layers = set.clone();
            let mut nodes = self.attention_any(attn_in);
            if spec.mup.is_some() {
                self.rename_output(&mut nodes, "Yₐ");
            }
            let what = match spec.plan[set.first().unwrap_or(0) as usize].span() {
                _ if !by_span => format!("Attention, {} query heads", a.heads),
                Some(AttnSpan::Sliding(_)) => "Sliding-window attention".into(),
                Some(AttnSpan::Chunked(_)) => "Chunked attention".into(),
                Some(AttnSpan::Full) | None => "Full attention".into(),
                Some(AttnSpan::Whole) => "Bidirectional attention".into(),
            };
            nodes_out.push(framed(
                ScopeKind::Attention,
                &what,
                "Attention end",
                set,
                nodes,
            ));
        }
        self.attn = spec.attn.clone();
        self.layers = self.all_layers();
        nodes_out
    }

    /// The FFN's closing step inside its frame: the post-FFN norm where the Spec has one.
    /// Returns the steps and the name of the FFN's output.
    pub(super) fn ffn_close(&mut self, out: &str) -> Vec<Node> {
        if !self.spec.norm.place.after() {
            return Vec::new();
        }
        let title = format!("Post-MLP {}", self.norm_name());
        let normed = format!("{out}′");
        // Not in a hybrid's pre-normed recurrent layers.
        let spec = self.spec;
        let kept = self.layers.clone();
        let post = LayerSet::from_fn(spec.layers, |b| {
            kept.contains(b) && spec.place_at(b as usize).after()
        });
        self.layers = post.clone();
        let mut step = self
            .norm_step(
                &title,
                Role::PostFfnNorm,
                "γₘ",
                out,
                &normed,
                spec.hidden,
                true,
                None,
            )
            .at(Point::PostFfnNorm);
        self.layers = kept.clone();
        if post.len() != kept.len() {
            only_in(std::slice::from_mut(&mut step), &post, spec.layers);
            if let Node::Step(s) = &mut step {
                s.equation += &format!("; {normed} = {out} in the other layers");
            }
        }
        vec![step]
    }

    /// A residual causal depthwise convolution over a sublayer's output `name`, in place
    /// (Inkling's `attn_sconv`, `mlp_sconv`).
    pub(super) fn out_conv(
        &mut self,
        role: Role,
        which: &str,
        name: &str,
        c: crate::spec::ResConv,
    ) -> Vec<Node> {
        let (d, taps) = (self.spec.hidden, c.taps);
        let scaled = if c.scaled {
            format!(", all divided by √{}", taps + 1)
        } else {
            String::new()
        };
        let component = if role == Role::FfnOutConv {
            Component::Ffn
        } else {
            Component::Attention
        };
        let p = self.param(role, false, vec![d, 1, taps], component, true);
        let w = self.weight(p, "Wc", [n(d), n(taps)], None);
        let state = if role == Role::FfnOutConv {
            "S_m"
        } else {
            "S_y"
        };
        let window = self.push(state, [n(d), n(taps - 1)], TensorKind::State);
        let input = self.latest(name);
        let out = self.act(name, self.seq(d));
        let conv = self.step(Draft {
            title: format!("{which} output convolution"),
            op: Op::Conv { kernel: taps },
            category: Category::Norm,
            inputs: vec![w, window],
            output: out,
            operation: format!(
                "Mix each of the {d} output channels over its last {taps} positions, on its own, and add the result to the output"
            ),
            equation: format!(
                "{name}ₜ = {name}ₜ + Σⱼ Wc[:, j] ⊙ {name}ₜ₋₍{}₋ⱼ₎, j < {taps}{scaled}; the positions before this call come from {state}",
                taps - 1
            ),
        });
        let kept = self.push(state, [n(d), n(taps - 1)], TensorKind::State);
        let keep = self.step(Draft {
            title: format!("{which} output convolution window"),
            op: Op::Route,
            category: Category::Norm,
            inputs: vec![input],
            output: kept,
            operation: format!("Keep each channel's last {} inputs for the tokens that follow: the convolution's state", taps - 1),
            equation: format!("{state} = {name}[t−{}…t] (zeros before the first token)", taps - 1),
        });
        vec![conv, keep]
    }

    /// The block's closing step, outside the FFN's frame as the attention residual is outside
    /// the attention's: the FFN output added to the residual stream.
    fn ffn_residual(&mut self, residual: usize, stream: &str) -> Node {
        let m = if self.spec.norm.place.after() {
            "M′"
        } else if self.spec.moe.as_ref().is_some_and(|m| m.post_norm) {
            "M (M′ in the MoE layers)"
        } else {
            "M"
        };
        // Post-residual, the sum is normed next into the block's output.
        let out = if self.spec.norm.place.on_stream() {
            "Hᵦ"
        } else {
            "Xᵦ₊₁"
        };
        let (scale, times) = self.residual_scale(Role::ResidScaleFfn, "ρₘ");
        // LongCat-Flash: the layer after a shortcut layer adds its experts' output S too.
        let spec = self.spec;
        let joins = LayerSet::from_fn(spec.layers, |b| {
            b > 0 && spec.plan[b as usize - 1].ffn == Ffn::Shortcut
        });
        let (shortcut, plus_s) = if joins.is_empty() {
            (None, String::new())
        } else {
            (
                Some(self.latest("S")),
                format!(" (+ S of layer b − 1 in layers {joins})"),
            )
        };
        let xn = self.act(out, self.seq(self.stream_width()));
        let post =
            (spec.hyper.is_some() || spec.gated_streams.is_some()).then(|| self.latest("gₘ"));
        let rate = self.ngpt_rate(Role::NgptRateFfn, "λₘ");
        let mut node = self.step(Draft {
            title: "MLP residual".into(),
            op: Op::Add,
            category: Category::Norm,
            inputs: std::iter::once(residual)
                .chain(scale)
                .chain(shortcut)
                .chain(post)
                .chain(rate)
                .collect(),
            output: xn,
            operation: if shortcut.is_some() {
                "Add the FFN output to the attention residual, and in the second layer of each pair the experts' output from the first; this is the block's output".into()
            } else {
                "Add the FFN output to the attention residual; this is the block's output".into()
            },
            equation: match self.spec.stream_mix {
                Some(mix) => format!(
                    "{out} = {} · {stream} + {} · {m}",
                    crate::fmt::float(mix.mlp.0),
                    crate::fmt::float(mix.mlp.1)
                ),
                None if spec.hyper.is_some() => self.hyper_add(Mix::Mlp, out, stream, m),
                None if spec.gated_streams.is_some() => self.gated_streams_add(Mix::Mlp, out, stream, m),
                None if spec.norm.place == NormPlace::Sphere => {
                    ngpt_mix(spec, out, stream, m, "λₘ")
                }
                None => {
                    let (d_stream, d_delta, k) = depth_factors(spec, true);
                    format!(
                        "{out} = {d_stream}{times}{stream} + {d_delta}{}{m}{plus_s}{k}",
                        residual_factor(self.spec)
                    )
                }
            },
        }).at(Point::ResidFfn);
        self.affine_residual(&mut node, true, m);
        node
    }

    /// A.X-K2's gate on a norm's output `y`: y ⊙ σ(W_up · SiLU(W_down · y)).
    fn norm_gate(&mut self, down: Role, up: Role, y: &str) -> Vec<Node> {
        let d = self.spec.hidden;
        let r = self.spec.gated_norm.as_ref().map_or(0, |g| g.rank);
        let lin = |role, title, names, rows, cols, operation| {
            Linear::whole(role, title, names, rows, cols, Category::Norm, operation)
        };
        let mut nodes = vec![self.linear(lin(
            down,
            "Norm gate down-projection",
            ["W_gd", "Gₙ", y],
            r,
            d,
            format!("Project the normed values to a rank-{r} gate, through SiLU"),
        ))];
        if let Some(Node::Step(s)) = nodes.last_mut() {
            s.equation = format!("Gₙ = SiLU(W_gd · {y})");
        }
        nodes.push(self.linear(lin(
            up,
            "Norm gate up-projection",
            ["W_gu", "Gₙ′", "Gₙ"],
            d,
            r,
            format!("Project the gate back to {d} values"),
        )));
        let g = self.latest("Gₙ′");
        let out = self.act(y, self.seq(d));
        nodes.push(self.step(Draft {
            title: "Norm gate".into(),
            op: Op::Activation,
            category: Category::Norm,
            inputs: vec![g],
            output: out,
            operation: "Gate each normed value by a sigmoid of its own projection".into(),
            equation: format!("{y} = {y} ⊙ σ(Gₙ′)"),
        }));
        nodes
    }

    /// ZAYA's residual add in `node` (after the attention, or after the FFN): both terms
    /// shifted and scaled by learned vectors, the sublayer's output `y` and the stream.
    fn affine_residual(&mut self, node: &mut Node, ffn: bool, y: &str) {
        if !self.spec.residual_affine {
            return;
        }
        let d = self.spec.hidden;
        let (sub, roles) = if ffn {
            (
                "ₘ",
                [
                    Role::ResidFfnOutShift,
                    Role::ResidFfnOutScale,
                    Role::ResidFfnShift,
                    Role::ResidFfnScale,
                ],
            )
        } else {
            (
                "ₐ",
                [
                    Role::ResidAttnOutShift,
                    Role::ResidAttnOutScale,
                    Role::ResidAttnShift,
                    Role::ResidAttnScale,
                ],
            )
        };
        let names = [
            format!("βₒ{sub}"),
            format!("γₒ{sub}"),
            format!("βᵣ{sub}"),
            format!("γᵣ{sub}"),
        ];
        let mut weights = vec![];
        for (role, name) in roles.into_iter().zip(&names) {
            let p = self.param(role, false, vec![d], Component::Norm, true);
            weights.push(self.weight(p, name, [n(d), n(1)], None));
        }
        if let Node::Step(s) = node {
            let out = self.tensors[s.output].name.clone();
            let stream = if ffn { "R" } else { "Xᵦ" };
            s.inputs.extend(weights);
            s.equation = format!(
                "{out} = ({y} + {}) ⊙ {} + ({stream} + {}) ⊙ {}",
                names[0], names[1], names[2], names[3]
            );
            s.operation += ", each term shifted and scaled by learned vectors first";
        }
    }

    /// nGPT's learned rate of one residual move on the unit sphere, a vector per layer (Dory's
    /// `lambda_1`, `lambda_2`).
    fn ngpt_rate(&mut self, role: Role, name: &str) -> Option<usize> {
        if self.spec.norm.place != NormPlace::Sphere {
            return None;
        }
        let d = self.spec.hidden;
        let p = self.param(role, false, vec![d], Component::Norm, true);
        Some(self.weight(p, name, [n(d), n(1)], None))
    }

    /// The learned vector scaling the residual stream where a sublayer joins it, where the
    /// model has one (Doge): its weight, and its factor in an equation (`ρₐ ⊙ `).
    fn residual_scale(&mut self, role: Role, name: &str) -> (Option<usize>, String) {
        if !self.spec.residual_scales {
            return (None, String::new());
        }
        let d = self.spec.hidden;
        let p = self.param(role, false, vec![d], Component::Norm, true);
        (
            Some(self.weight(p, name, [n(d), n(1)], None)),
            format!("{name} ⊙ "),
        )
    }

    /// Restrict an attention step to `layers` when they are not all of the attention layers
    /// (NoPE layers skip RoPE).
    pub(super) fn gate(&self, mut node: Node, layers: &LayerSet) -> Node {
        let attending = self.spec.attending_layers();
        if let Node::Step(s) = &mut node {
            if layers.len() != attending.len() {
                let skipped = LayerSet::from_fn(self.spec.layers, |b| {
                    attending.contains(b) && !layers.contains(b)
                });
                s.title += &format!(" ({} of {} layers)", layers.len(), attending.len());
                s.equation += &format!("; identity in layers {skipped} (no positional encoding)");
                s.layers = Some(layers.clone());
            }
        }
        node
    }

    /// The attention in `self.attn`: latent (MLA) or grouped-query.
    pub(super) fn attention_any(&mut self, x_in: &str) -> Vec<Node> {
        if self.attn.v4.is_some() {
            self.v4_attention(x_in)
        } else if self.attn.mla.is_some() {
            self.mla(x_in)
        } else {
            self.attention(x_in)
        }
    }

    /// Renames the output of the last step in `nodes` (a mixer's output projection, "Y") where
    /// two mixers' outputs are summed next.
    fn rename_output(&mut self, nodes: &mut [Node], to: &str) {
        if let Some(Node::Step(s)) = nodes.last_mut() {
            let t = &mut self.tensors[s.output];
            if let Some(rest) = s.equation.strip_prefix(&format!("{} ", t.name)) {
                s.equation = format!("{to} {rest}");
            }
            t.name = to.to_string();
        }
    }

    pub(super) fn has_rope(&self) -> bool {
        matches!(self.spec.position, Position::Rope(_)) && self.spec.plan.iter().any(|l| l.rope)
    }

    /// The pre-attention norm of every layer but the first, which reads the embeddings as they
    /// are (ModernBERT).
    fn attn_norm_after_first(&mut self) -> Node {
        let rest = LayerSet::from_fn(self.spec.layers, |b| b > 0);
        let kept = std::mem::replace(&mut self.layers, rest.clone());
        let title = format!("Attention {} (not in layer 0)", self.norm_name());
        let d = self.spec.hidden;
        let mut node = self
            .norm_step(&title, Role::AttnNorm, "γ", "Xᵦ", "Xᵦ′", d, true, None)
            .at(Point::AttnNorm);
        self.layers = kept;
        if let Node::Step(s) = &mut node {
            s.equation += "; Xᵦ′ = Xᵦ in layer 0";
            s.layers = Some(rest);
        }
        node
    }

    /// A dense layer, its activation and a norm between the final norm and the head.
    fn head_transform(&mut self, t: crate::spec::HeadTransform, input: &str) -> Vec<Node> {
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
        // Hyper-connections weigh the streams into one first; AltUp averages them.
        let last = if spec.hyper.is_some() {
            steps.extend(self.hyper_head("Xₗ", "Xₕ"));
            "Xₕ"
        } else if spec.gated_streams.is_some() {
            steps.extend(self.gated_in(None, "Xₗ", "Xₕ"));
            "Xₕ"
        } else if spec.altup.is_some() {
            steps.extend(self.altup_unembed());
            "Xₘ"
        } else if spec.attn_res.is_some() {
            steps.push(self.attn_res_head("Xₗ", "Xₕ"));
            "Xₕ"
        } else {
            "Xₗ"
        };
        // Gated streams end on their head mix, itself normed: no final norm.
        let z = if spec.norm.place.on_stream() {
            "Xₗ"
        } else if spec.gated_streams.is_some() {
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
    fn mtp(&mut self) -> Scope {
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

/// "m · " before a sublayer's output where the residual add scales it (Granite), else nothing.
/// A frame of one layer variant's steps, titled with its layers.
pub(super) fn framed(
    kind: ScopeKind,
    what: &str,
    end: &str,
    layers: LayerSet,
    children: Vec<Node>,
) -> Node {
    Node::Scope(Scope {
        kind,
        title: format!("{what} (layers {layers})"),
        end: end.into(),
        repeat: 1,
        active: None,
        layers: Some(layers),
        children,
    })
}

/// Restrict nodes to `layers` of `all` (one half of a block whose layers do not all have it),
/// where they are not restricted further already; a step's title says in how many it runs.
pub(super) fn only_in(nodes: &mut [Node], layers: &LayerSet, all: u64) {
    for node in nodes {
        match node {
            Node::Step(s) if s.layers.is_none() => {
                s.title += &format!(" ({} of {all} layers)", layers.len());
                s.layers = Some(layers.clone());
            }
            Node::Scope(s) if s.layers.is_none() => s.layers = Some(layers.clone()),
            Node::Step(_) | Node::Scope(_) => {}
        }
    }
}

/// A MiniMax mixer residual: R = α · Xᵦ′ + β · Y, with each mixer kind's factors where both
/// kinds are present and they differ.
fn mixer_mix(spec: &Spec, mix: &crate::spec::StreamMix, r: &str, stream: &str, y: &str) -> String {
    let f = crate::fmt::float;
    let linear = spec.plan.iter().any(|l| l.mixer == Mixer::Lightning);
    let attending = spec.plan.iter().any(|l| l.mixer != Mixer::Lightning);
    let (a, b) = if attending { mix.attn } else { mix.linear };
    if !(linear && attending) || mix.attn == mix.linear {
        return format!("{r} = {} · {stream} + {} · {y}", f(a), f(b));
    }
    format!(
        "{r} = α · {stream} + β · {y}; (α, β) = ({}, {}) in the attention layers, ({}, {}) in the lightning layers",
        f(mix.attn.0),
        f(mix.attn.1),
        f(mix.linear.0),
        f(mix.linear.1)
    )
}

/// nGPT's residual move (Dory): from the normed stream towards the normed output at a learned
/// rate per channel.
fn ngpt_mix(spec: &Spec, r: &str, stream: &str, y: &str, lambda: &str) -> String {
    let f = spec
        .ngpt
        .expect("a block on the unit sphere has its nGPT rates")
        .rate_factor();
    format!(
        "{r} = {stream} + |{lambda} · {}| ⊙ ({y} − {stream})",
        crate::fmt::approx(f)
    )
}

/// A depth-scaled add's factors on the stream and on the sublayer's output, and what k is
/// (Beam); empty otherwise.
fn depth_factors(spec: &Spec, ffn: bool) -> (&'static str, &'static str, &'static str) {
    match (spec.depth_scaled, ffn) {
        (false, _) => ("", "", ""),
        (true, false) => (
            "√((k − 1)/k) · ",
            "1/√k · ",
            ", k = 2b + 2 (this add's number in the model)",
        ),
        (true, true) => (
            "√((k − 1)/k) · ",
            "1/√k · ",
            ", k = 2b + 3 (this add's number in the model)",
        ),
    }
}

fn residual_factor(spec: &Spec) -> String {
    if let Some(r) = spec
        .rwkv
        .filter(|r| r.rescale_every > 0 && r.halvings(spec.layers - 1) > 0)
    {
        return format!("2^−⌊b/{}⌋ · ", r.rescale_every);
    }
    if spec.residual_mult == 1.0 {
        String::new()
    } else {
        format!("{} · ", spec.residual_mult)
    }
}
