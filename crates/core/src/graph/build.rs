//! Spec → Graph. One block skeleton for the whole decoder lineage; what a family adds (biases,
//! QK-norm, windows) comes from its Spec, never from its name.

use super::*;
use crate::error::{Error, Result};
use crate::naming::{names, Role};
use crate::spec::{AttnKind, AttnSpan, NormKind, Position, QkNorm, Spec};

pub fn build(spec: &Spec) -> Result<Graph> {
    let mut b = Builder { spec, params: Vec::new(), tensors: Vec::new(), steps: 0, layers: LayerSet::all(spec.layers), experts: None };
    let embedding = b.embedding();
    let block = b.block();
    let last = b.final_scope();
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
            children: vec![Node::Scope(embedding), Node::Scope(block), Node::Scope(last)],
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
        let n = p.shape.iter().try_fold(1u128, |acc, &d| acc.checked_mul(d as u128));
        total = n.and_then(|n| n.checked_mul(p.instances())).and_then(|n| total.checked_add(n)).unwrap_or(u128::MAX);
    }
    if total > u64::MAX as u128 {
        return Err(Error::new(
            g.spec.name.clone(),
            "",
            "the parameter count overflows 64 bits (tensor sizes too large); check hidden_size, vocab_size, intermediate_size and num_hidden_layers".to_string(),
        ));
    }
    Ok(())
}

struct Builder<'s> {
    spec: &'s Spec,
    params: Vec<Param>,
    tensors: Vec<Tensor>,
    steps: usize,
    /// Layers the tensors being built belong to (a variant's layers inside a gated scope).
    layers: LayerSet,
    /// Set while building routed experts: their count, for `{e}` templates.
    experts: Option<u64>,
}

struct Draft {
    title: String,
    op: Op,
    category: Category,
    inputs: Vec<usize>,
    output: usize,
    operation: String,
    equation: String,
}

fn n(x: u64) -> Dim {
    Dim::N(x)
}

impl<'s> Builder<'s> {
    fn all_layers(&self) -> LayerSet {
        LayerSet::all(self.spec.layers)
    }

    /// Register a checkpoint tensor (once per name) and return its index.
    fn param(&mut self, role: Role, bias: bool, shape: Vec<u64>, component: Component, per_layer: bool) -> usize {
        let (hf, gguf) = names(self.spec.layout, role, bias);
        if let Some(i) = self.params.iter().position(|p| p.hf == hf) {
            return i;
        }
        let layers = per_layer.then(|| self.layers.clone());
        let (experts, routed) = match self.experts {
            Some(e) if hf.contains("{e}") => (e, true),
            _ => (1, false),
        };
        self.params.push(Param { hf, gguf, shape, component, layers, experts, routed });
        self.params.len() - 1
    }

    fn weight(&mut self, param: usize, name: &str, dims: [Dim; 2], slice: Option<String>) -> usize {
        self.push(name, dims, TensorKind::Weight { param, slice, note: None })
    }

    fn act(&mut self, name: &str, dims: [Dim; 2]) -> usize {
        self.push(name, dims, TensorKind::Activation { cached: false })
    }

    fn cached(&mut self, name: &str, dims: [Dim; 2]) -> usize {
        self.push(name, dims, TensorKind::Activation { cached: true })
    }

    fn push(&mut self, name: &str, dims: [Dim; 2], kind: TensorKind) -> usize {
        self.tensors.push(Tensor { name: name.to_string(), dims, kind });
        self.tensors.len() - 1
    }

    fn step(&mut self, d: Draft) -> Node {
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
        })
    }

    fn scope(&self, kind: ScopeKind, title: &str, end: &str, repeat: u64, children: Vec<Node>) -> Scope {
        Scope { kind, title: title.into(), end: end.into(), repeat, active: None, layers: None, children }
    }

    fn seq(&self, rows: u64) -> [Dim; 2] {
        [n(rows), Dim::Seq]
    }

    fn norm_name(&self) -> &'static str {
        match self.spec.norm.kind {
            NormKind::Rms => "RMSNorm",
            NormKind::Layer => "LayerNorm",
        }
    }

    /// A norm step over `dim` features, reading `role`'s weight.
    fn norm_step(&mut self, title: &str, role: Role, gamma: &str, input: &str, output: &str, dim: u64, per_layer: bool) -> Node {
        let spec = self.spec;
        let p = self.param(role, false, vec![dim], Component::Norm, per_layer);
        let g = self.weight(p, gamma, [n(dim), n(1)], None);
        let mut inputs = vec![g];
        if spec.norm.kind == NormKind::Layer {
            let pb = self.param(role, true, vec![dim], Component::Norm, per_layer);
            inputs.push(self.weight(pb, &format!("β{}", &gamma["γ".len()..]), [n(dim), n(1)], None));
        }
        let out = self.act(output, self.seq(dim));
        let w = if spec.norm.unit_offset { format!("(1 + {gamma})") } else { gamma.to_string() };
        let eps = spec.norm.eps;
        let equation = match spec.norm.kind {
            NormKind::Rms => format!("{output} = {w} ⊙ {input} / √(mean({input}²) + ε), ε = {eps}"),
            NormKind::Layer => format!("{output} = {w} ⊙ ({input} − mean) / √(var({input}) + ε) + β, ε = {eps}"),
        };
        self.step(Draft {
            title: title.into(),
            op: Op::Norm,
            category: Category::Norm,
            inputs,
            output: out,
            operation: format!("Normalize each position's {dim} features ({})", self.norm_name()),
            equation,
        })
    }

    fn embedding(&mut self) -> Scope {
        let spec = self.spec;
        let p = self.param(Role::Embed, false, vec![spec.vocab, spec.hidden], Component::Embedding, false);
        let t = self.act("T", [n(spec.vocab), Dim::Seq]);
        let e = self.push(
            "E",
            [n(spec.hidden), n(spec.vocab)],
            TensorKind::Weight { param: p, slice: None, note: Some("drawn transposed: one column per token".into()) },
        );
        let x = self.act("X", self.seq(spec.hidden));
        let step = self.step(Draft {
            title: "Token embedding".into(),
            op: Op::Lookup,
            category: Category::Embed,
            inputs: vec![t, e],
            output: x,
            operation: "Look up each token's embedding row".into(),
            equation: "X = E · T  (column t of X is row T[t] of the embedding)".into(),
        });
        self.scope(ScopeKind::Embedding, "Embedding", "Embedding end", 1, vec![step])
    }

    fn block(&mut self) -> Scope {
        let spec = self.spec;
        let d = spec.hidden;
        let mut children = Vec::new();

        let xb = self.act("Xᵦ", self.seq(d));
        children.push(self.step(Draft {
            title: "Block input".into(),
            op: Op::Route,
            category: Category::Norm,
            inputs: vec![],
            output: xb,
            operation: "Route hidden state into block".into(),
            equation: "Xᵦ = X when b=0; otherwise output of block b−1".into(),
        }));
        let title = format!("Attention {}", self.norm_name());
        children.push(self.norm_step(&title, Role::AttnNorm, "γ", "Xᵦ", "Xᵦ′", d, true));
        children.extend(self.attention());
        let r = self.act("R", self.seq(d));
        children.push(self.step(Draft {
            title: "Attention residual".into(),
            op: Op::Add,
            category: Category::Norm,
            inputs: vec![xb],
            output: r,
            operation: "Add the attention output to the block input".into(),
            equation: "R = Xᵦ + Y".into(),
        }));
        let title = format!("MLP {}", self.norm_name());
        children.push(self.norm_step(&title, Role::FfnNorm, "γ′", "R", "R′", d, true));
        let dense = spec.layers_where(|l| !l.moe);
        let sparse = spec.layers_where(|l| l.moe);
        let mixed = !dense.is_empty() && !sparse.is_empty();
        for (set, moe) in [(dense, false), (sparse, true)] {
            if set.is_empty() {
                continue;
            }
            self.layers = set.clone();
            let mut scope = if moe { self.moe(r) } else { self.mlp(r) };
            if mixed {
                scope.title = format!("{} (layers {set})", scope.title);
                scope.layers = Some(set);
            }
            children.push(Node::Scope(scope));
        }
        self.layers = self.all_layers();

        let mut block = self.scope(
            ScopeKind::Block,
            &format!("{} Block b", spec.family),
            &format!("{} end", spec.family),
            spec.layers,
            children,
        );
        block.layers = Some(self.all_layers());
        block
    }

    /// Restrict a step to `layers` when they are not all of the block's (NoPE layers skip RoPE).
    fn gate(&self, mut node: Node, layers: &LayerSet) -> Node {
        if let Node::Step(s) = &mut node {
            if layers.len() != self.spec.layers {
                let skipped = self.spec.layers_where(|l| !l.rope);
                s.title += &format!(" ({} of {} layers)", layers.len(), self.spec.layers);
                s.equation += &format!("; identity in layers {skipped} (no positional encoding)");
                s.layers = Some(layers.clone());
            }
        }
        node
    }

    fn rope_text(&self) -> String {
        match &self.spec.position {
            Position::Rope(r) => {
                let mut s = format!("θ = {}", r.theta);
                if r.scaling.kind != "default" {
                    s += &format!(", {} scaling", r.scaling.kind);
                    if let Some(f) = r.scaling.factor {
                        s += &format!(" ×{f}");
                    }
                }
                s
            }
            Position::Learned => "learned positions".into(),
        }
    }

    fn window_text(&self) -> String {
        let spans: Vec<AttnSpan> = self.spec.plan.iter().map(|l| l.attn).collect();
        let mut kinds: Vec<AttnSpan> = spans.clone();
        kinds.sort();
        kinds.dedup();
        match kinds.as_slice() {
            [AttnSpan::Full] | [] => String::new(),
            [one] => format!("; {} window", one.describe()),
            _ => {
                let parts: Vec<String> = kinds
                    .iter()
                    .map(|k| format!("{} in layers {}", k.describe(), self.spec.layers_where(|l| l.attn == *k)))
                    .collect();
                format!("; {}", parts.join(", "))
            }
        }
    }

    /// Projection of one head: `W · Xᵦ′ (+ b)` over the checkpoint rows `rows` (Python slice
    /// syntax, `128*i:128*(i+1)`). `letter` is Q, K or V; V is the one kept in the cache.
    fn projection(&mut self, role: Role, letter: &str, rows: &str) -> Node {
        let spec = self.spec;
        let a = &spec.attn;
        let hd = a.head_dim;
        let total_rows = match role {
            Role::Q => a.heads * hd,
            _ => a.kv_heads * hd,
        };
        let (w, out, title) = (format!("W{}", letter.to_lowercase()), letter, format!("{letter} projection"));
        let p = self.param(role, false, vec![total_rows, spec.hidden], Component::Attention, true);
        let wt = self.weight(p, &w, [n(hd), n(spec.hidden)], Some(format!("[{rows}, :]")));
        let mut inputs = vec![wt];
        let mut eq = format!("{out} = {w} · Xᵦ′");
        if a.qkv_bias {
            let pb = self.param(role, true, vec![total_rows], Component::Attention, true);
            let bname = format!("b{}", letter.to_lowercase());
            inputs.push(self.weight(pb, &bname, [n(hd), n(1)], Some(format!("[{rows}]"))));
            eq += &format!(" + {bname}");
        }
        let (cached, rows) = (role == Role::V, hd);
        let o = if cached { self.cached(out, self.seq(rows)) } else { self.act(out, self.seq(rows)) };
        self.step(Draft {
            title,
            op: Op::MatMul,
            category: Category::Attention,
            inputs,
            output: o,
            operation: format!("Project the normalized input to this head's {rows}-dim {letter}"),
            equation: eq,
        })
    }

    fn qk_norm(&mut self, which: &str, role: Role, input: &str, out: &str) -> Node {
        let hd = self.spec.attn.head_dim;
        let gamma = if which == "Q" { "γq" } else { "γk" };
        let title = format!("{which} {}", self.norm_name());
        let mut node = self.norm_step(&title, role, gamma, input, out, hd, true);
        if let Node::Step(s) = &mut node {
            s.category = Category::Attention;
            s.operation = format!("Normalize each head's {which} over its {hd} dims (one weight shared by all heads)");
        }
        node
    }

    fn attention(&mut self) -> Vec<Node> {
        let spec = self.spec;
        let a = spec.attn.clone();
        let hd = a.head_dim;
        let g = spec.group_size();
        let rope = self.rope_text();
        // Index names and slices of one K/V head (i) and one query head (j).
        let (kv_rows, q_rows, head_name) = match a.kind {
            AttnKind::Mha => (format!("{hd}*i:{hd}*(i+1)"), format!("{hd}*i:{hd}*(i+1)"), "Hᵢ"),
            AttnKind::Mqa => (":".to_string(), format!("{hd}*j:{hd}*(j+1)"), "Hⱼ"),
            _ => (format!("{hd}*i:{hd}*(i+1)"), format!("{hd}*({g}*i+j):{hd}*({g}*i+j+1)"), "Hᵢⱼ"),
        };
        let qk_norm = a.qk_norm == QkNorm::PerHead;

        let mut kv_nodes = Vec::new();
        kv_nodes.push(self.projection(Role::K, "K", &kv_rows));
        let k_in = if qk_norm {
            kv_nodes.push(self.qk_norm("K", Role::KNorm, "K", "Kₙ"));
            "Kₙ"
        } else {
            "K"
        };
        let kr = self.cached("Kᵣ", self.seq(hd));
        let rope_layers = spec.layers_where(|l| l.rope);
        let k_rope = self.step(Draft {
            title: "K rotary position encoding".into(),
            op: Op::Rope,
            category: Category::Attention,
            inputs: vec![],
            output: kr,
            operation: "Rotate pairs of K's dims by angles that grow with position".into(),
            equation: format!("Kᵣ = RoPE({k_in}, pos), {rope}"),
        });
        kv_nodes.push(self.gate(k_rope, &rope_layers));
        kv_nodes.push(self.projection(Role::V, "V", &kv_rows));
        let v = self.tensors.len() - 1;

        let mut q_nodes = Vec::new();
        q_nodes.push(self.projection(Role::Q, "Q", &q_rows));
        let q_in = if qk_norm {
            q_nodes.push(self.qk_norm("Q", Role::QNorm, "Q", "Qₙ"));
            "Qₙ"
        } else {
            "Q"
        };
        let qr = self.act("Qᵣ", self.seq(hd));
        let q_rope = self.step(Draft {
            title: "Q rotary position encoding".into(),
            op: Op::Rope,
            category: Category::Attention,
            inputs: vec![],
            output: qr,
            operation: "Rotate pairs of Q's dims by angles that grow with position".into(),
            equation: format!("Qᵣ = RoPE({q_in}, pos), {rope}"),
        });
        q_nodes.push(self.gate(q_rope, &rope_layers));
        let krt = self.act("Kᵣᵀ", [Dim::Seq, n(hd)]);
        let s = self.act("S", [Dim::Seq, Dim::Seq]);
        q_nodes.push(self.step(Draft {
            title: "Attention scores".into(),
            op: Op::Scores { dim: hd },
            category: Category::Attention,
            inputs: vec![krt],
            output: s,
            operation: "Score every query position against every key position".into(),
            equation: format!("S = Kᵣᵀ · Qᵣ / √{}", fmt_f(a.scale_dim)),
        }));
        let att = self.act("A", [Dim::Seq, Dim::Seq]);
        let window = self.window_text();
        q_nodes.push(self.step(Draft {
            title: "Causal softmax".into(),
            op: Op::Softmax,
            category: Category::Attention,
            inputs: vec![],
            output: att,
            operation: "Mask future positions, then normalize each query's scores to weights".into(),
            equation: format!("A = softmax(S + M) over keys, M = −∞ above the diagonal{window}"),
        }));
        let h = self.act(head_name, self.seq(hd));
        q_nodes.push(self.step(Draft {
            title: "Weighted value aggregation".into(),
            op: Op::WeightedSum { dim: a.v_head_dim },
            category: Category::Attention,
            inputs: vec![v],
            output: h,
            operation: "Mix the value vectors by the attention weights".into(),
            equation: format!("{head_name} = V · A"),
        }));

        let mut nodes = Vec::new();
        match a.kind {
            AttnKind::Mha => {
                kv_nodes.extend(q_nodes);
                nodes.push(Node::Scope(self.scope(ScopeKind::Head, "Attention Head i", "Head end", a.heads, kv_nodes)));
            }
            AttnKind::Mqa => {
                nodes.extend(kv_nodes);
                nodes.push(Node::Scope(self.scope(ScopeKind::Head, "Query Head j", "Head end", a.heads, q_nodes)));
            }
            _ => {
                let heads = self.scope(ScopeKind::Head, "Query Head j", "Head end", g, q_nodes);
                kv_nodes.push(Node::Scope(heads));
                let title = "GQA Group i".to_string();
                nodes.push(Node::Scope(self.scope(ScopeKind::Group, &title, "GQA end", a.kv_heads, kv_nodes)));
            }
        }

        let width = a.heads * a.v_head_dim;
        let label = match a.kind {
            AttnKind::Gqa => format!("{}×{g}×{}={width}", a.v_head_dim, a.kv_heads),
            _ => format!("{}×{}={width}", a.v_head_dim, a.heads),
        };
        let concat = self.act("H", [Dim::Labeled(label, width), Dim::Seq]);
        nodes.push(self.step(Draft {
            title: "Head concatenation".into(),
            op: Op::Concat,
            category: Category::Attention,
            inputs: vec![],
            output: concat,
            operation: format!("Stack the {} head outputs into one {width}-dim vector per position", a.heads),
            equation: format!("H = concat(H₀ … H_{})", a.heads - 1),
        }));
        let p = self.param(Role::O, false, vec![spec.hidden, width], Component::Attention, true);
        let wo = self.weight(p, "Wₒ", [n(spec.hidden), n(width)], None);
        let mut inputs = vec![wo];
        let mut eq = "Y = Wₒ · H".to_string();
        if a.o_bias {
            let pb = self.param(Role::O, true, vec![spec.hidden], Component::Attention, true);
            inputs.push(self.weight(pb, "bₒ", [n(spec.hidden), n(1)], None));
            eq += " + bₒ";
        }
        let y = self.act("Y", self.seq(spec.hidden));
        nodes.push(self.step(Draft {
            title: "Attention output projection".into(),
            op: Op::MatMul,
            category: Category::Attention,
            inputs,
            output: y,
            operation: "Project the concatenated heads back to the hidden size".into(),
            equation: eq,
        }));
        nodes
    }

    /// Gate, up, gated activation and down projections of one FFN of width `f`, reading `input`.
    fn ffn_steps(&mut self, roles: [Role; 3], f: u64, input: &str, sub: &str, out: &str) -> Vec<Node> {
        let spec = self.spec;
        let d = spec.hidden;
        let bias = spec.mlp.bias;
        let act = spec.mlp.act.clone();
        let proj = |b: &mut Self, role: Role, w: &str, out: &str, rows: u64, cols: u64, title: &str, input: &str| {
            let p = b.param(role, false, vec![rows, cols], Component::Ffn, true);
            let wt = b.weight(p, w, [n(rows), n(cols)], None);
            let mut inputs = vec![wt];
            let mut eq = format!("{out} = {w} · {input}");
            if bias {
                let pb = b.param(role, true, vec![rows], Component::Ffn, true);
                let bn = format!("b{}", &w["W".len()..]);
                inputs.push(b.weight(pb, &bn, [n(rows), n(1)], None));
                eq += &format!(" + {bn}");
            }
            let o = b.act(out, b.seq(rows));
            b.step(Draft {
                title: title.into(),
                op: Op::MatMul,
                category: Category::Ffn,
                inputs,
                output: o,
                operation: format!("Project {cols} features to {rows}"),
                equation: eq,
            })
        };
        let (g, u, p) = (format!("G{sub}"), format!("U{sub}"), format!("P{sub}"));
        let mut nodes = vec![
            proj(self, roles[0], &format!("Wg{sub}"), &g, f, d, "Gate projection", input),
            proj(self, roles[1], &format!("Wu{sub}"), &u, f, d, "Up projection", input),
        ];
        let pa = self.act(&p, self.seq(f));
        nodes.push(self.step(Draft {
            title: "Gated activation".into(),
            op: Op::Activation,
            category: Category::Ffn,
            inputs: vec![],
            output: pa,
            operation: format!("Gate the up projection with {act} of the gate projection"),
            equation: format!("{p} = {}({g}) ⊙ {u}", act_name(&act)),
        }));
        nodes.push(proj(self, roles[2], &format!("Wd{sub}"), out, d, f, "Down projection", &p));
        nodes
    }

    fn residual(&mut self, residual: usize, from: &str) -> Node {
        let xn = self.act("Xᵦ₊₁", self.seq(self.spec.hidden));
        self.step(Draft {
            title: "MLP residual".into(),
            op: Op::Add,
            category: Category::Norm,
            inputs: vec![residual],
            output: xn,
            operation: "Add the FFN output to the attention residual; this is the block's output".into(),
            equation: format!("Xᵦ₊₁ = R + {from}"),
        })
    }

    fn mlp(&mut self, residual: usize) -> Scope {
        let mut children = self.ffn_steps([Role::Gate, Role::Up, Role::Down], self.spec.mlp.intermediate, "R′", "", "M");
        children.push(self.residual(residual, "M"));
        self.scope(ScopeKind::Mlp, "MLP", "MLP end", 1, children)
    }

    /// Router, top-k selection, routed experts and their weighted sum.
    fn moe(&mut self, residual: usize) -> Scope {
        let spec = self.spec;
        let moe = spec.moe.clone().expect("a MoE layer has a MoE spec");
        let (d, e, k) = (spec.hidden, moe.experts, moe.top_k);
        let mut children = Vec::new();
        let p = self.param(Role::Router, false, vec![e, d], Component::Ffn, true);
        let wr = self.weight(p, "Wᵣ", [n(e), n(d)], None);
        let logits = self.act("Lᵣ", self.seq(e));
        children.push(self.step(Draft {
            title: "Router logits".into(),
            op: Op::MatMul,
            category: Category::Ffn,
            inputs: vec![wr],
            output: logits,
            operation: format!("Score each token against all {e} experts"),
            equation: "Lᵣ = Wᵣ · R′".into(),
        }));
        let gates = self.act("Gᵣ", self.seq(e));
        let select = match moe.scoring {
            crate::spec::Scoring::Sigmoid => "sigmoid(Lᵣ)".to_string(),
            _ => "softmax(Lᵣ)".to_string(),
        };
        let renorm = if moe.norm_topk_prob { ", renormalized to sum to 1" } else { "" };
        children.push(self.step(Draft {
            title: format!("Top-{k} expert selection"),
            op: Op::TopK,
            category: Category::Ffn,
            inputs: vec![],
            output: gates,
            operation: format!("Keep each token's {k} best experts; the other {} get weight 0", e - k),
            equation: format!("Gᵣ = top-{k}({select}){renorm}; zeros elsewhere"),
        }));
        self.experts = Some(e);
        let expert_steps = self.ffn_steps(
            [Role::ExpertGate, Role::ExpertUp, Role::ExpertDown],
            moe.expert_intermediate,
            "R′",
            "ₑ",
            "Mₑ",
        );
        self.experts = None;
        let mut experts = self.scope(ScopeKind::Experts, "Expert e", "Expert end", e, expert_steps);
        experts.active = Some(k);
        children.push(Node::Scope(experts));
        let m = self.act("M", self.seq(d));
        children.push(self.step(Draft {
            title: "Expert combination".into(),
            op: Op::Combine,
            category: Category::Ffn,
            inputs: vec![gates],
            output: m,
            operation: "Sum the chosen experts' outputs, each scaled by its router weight".to_string(),
            equation: "M = Σₑ Gᵣ[e] · Mₑ over the chosen experts".into(),
        }));
        children.push(self.residual(residual, "M"));
        self.scope(ScopeKind::Moe, "MoE", "MoE end", 1, children)
    }

    fn final_scope(&mut self) -> Scope {
        let spec = self.spec;
        let title = format!("Final {}", self.norm_name());
        let norm = self.norm_step(&title, Role::FinalNorm, "γf", "Xₗ", "Z", spec.hidden, false);
        let (head, name, source_note) = if spec.tied {
            let p = self.param(Role::Embed, false, vec![spec.vocab, spec.hidden], Component::Embedding, false);
            (p, "Eᵀ", Some("tied: the embedding matrix".to_string()))
        } else {
            (self.param(Role::LmHead, false, vec![spec.vocab, spec.hidden], Component::LmHead, false), "Wₗₘ", None)
        };
        let w = self.push(name, [n(spec.vocab), n(spec.hidden)], TensorKind::Weight { param: head, slice: None, note: source_note });
        let logits = self.act("Logits", self.seq(spec.vocab));
        let mut eq = format!("Logits = {name} · Z");
        if let Some(c) = spec.final_softcap {
            eq += &format!(", then {c}·tanh(Logits/{c})");
        }
        let head_step = self.step(Draft {
            title: "Language-model head".into(),
            op: Op::MatMul,
            category: Category::Embed,
            inputs: vec![w],
            output: logits,
            operation: format!("Score all {} vocabulary entries at every position", spec.vocab),
            equation: eq,
        });
        self.scope(ScopeKind::Final, "Final", "Final end", 1, vec![norm, head_step])
    }
}

pub(crate) fn act_name(act: &str) -> &'static str {
    match act {
        "silu" | "swish" => "SiLU",
        "gelu_pytorch_tanh" | "gelu_new" | "gelu_fast" => "GELU-tanh",
        "gelu" => "GELU",
        "relu" => "ReLU",
        _ => "act",
    }
}

pub(crate) fn fmt_f(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}
