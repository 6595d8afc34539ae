//! Spec → Graph. One block skeleton for the whole decoder lineage; what a family adds (biases,
//! QK-norm, windows, experts, latent attention) comes from its Spec, never from its name.
//!
//! This file holds the builder (parameters, tensors, steps, scopes); each of the model's parts has
//! a file of its own: `embedding.rs`, `layer.rs` with `attention.rs` and `ffn.rs` and the mixers'
//! files, `head.rs`.

use super::*;
use crate::error::{Error, Result};
use crate::naming::{lookup, names, Role};
use crate::spec::{NormKind, Spec, Stream};

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
        unnamed: Vec::new(),
    };
    let embedding = match &spec.stream {
        // BLT: the byte-level stacks around the latent transformer are the whole model.
        Stream::Bytes(bl) => {
            let children = b.byte_latent(bl);
            return finish(spec, b, children);
        }
        Stream::Plain
        | Stream::Hyper(_)
        | Stream::Gated(_)
        | Stream::AltUp(_)
        | Stream::Hierarchy(_)
        | Stream::Looped(_)
        | Stream::AttnRes(_) => b.embedding(),
    };
    // The layers, as the stream's form runs them: inside a frame that nests or loops them, or as
    // a block of the form's own.
    let (frame, block) = match &spec.stream {
        Stream::Hierarchy(h) => (Some(b.hierarchy(*h)), b.block()),
        Stream::Looped(l) => (Some(b.looped(*l)), b.block()),
        Stream::AltUp(_) => (None, b.altup_block()),
        Stream::AttnRes(_) => (None, b.attn_res_block()),
        Stream::Plain | Stream::Hyper(_) | Stream::Gated(_) | Stream::Bytes(_) => (None, b.block()),
    };
    let cross = spec.layers_where(|l| !l.mixer.runs_on_text());
    let cross = (!cross.is_empty()).then(|| b.cross_attention(cross));
    let last = b.final_scope();
    let mut children = vec![Node::Scope(embedding)];
    children.extend(frame.map(Node::Scope));
    children.push(Node::Scope(block));
    children.extend(cross.map(Node::Scope));
    children.push(Node::Scope(last));
    if spec.mtp_layers > 0 {
        children.push(Node::Scope(b.mtp()));
    }
    finish(spec, b, children)
}

fn finish(spec: &Spec, b: Builder, children: Vec<Node>) -> Result<Graph> {
    if let Some(role) = b.unnamed.first() {
        return Err(Error::new(
            spec.name.clone(),
            "",
            format!(
                "anatomy's {:?} checkpoint layout names no {role:?} tensor, which this model has: \
                 a bug in anatomy (please report it with this config)",
                spec.layout
            ),
        ));
    }
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
    /// Roles the layout's tables name no tensor for: `finish` refuses the graph.
    unnamed: Vec<Role>,
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
        let (hf, gguf) = lookup(self.spec.layout, role, bias).unwrap_or_else(|| {
            self.unnamed.push(role);
            names(self.spec.layout, role, bias)
        });
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
                        | Role::ExpertOutNorm
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
                let extra = self.spec.altup().map_or(1, |a| a.streams - 1);
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
            router: role == Role::Router,
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
                matches!(role, Role::ExpertGateUp | Role::ExpertUp | Role::ExpertDown)
            }
            Some(ExpertStorage::Flat) => role == Role::ExpertDown,
            Some(ExpertStorage::Stacked { out_in: true, .. } | ExpertStorage::PerExpert) | None => {
                false
            }
        };
        crate::naming::stored_in_out(self.spec.layout, role) || in_out
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
