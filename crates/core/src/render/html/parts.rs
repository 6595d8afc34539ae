//! The boxes of the block diagram, derived from the Graph: each part is a run of steps (the
//! embedding, a norm, the attention sublayer, an FFN variant, a residual add …) with its
//! parameters and costs summed from those steps.

use crate::graph::{Category, Graph, Node, Op, Scope, ScopeKind, TensorKind, Visit};
use crate::layers::LayerSet;
use crate::spec::Mixer;
use crate::stats;
use std::collections::BTreeSet;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Embedding,
    Norm,
    Attention,
    /// A recurrent mixer (Mamba2).
    Mixer,
    Residual,
    Mlp,
    Moe,
    /// Gemma 4's per-layer input, gated into each layer's output.
    PerLayer,
    /// Zamba2's shared transformer block, before the mixer in the layers that run one.
    Shared,
    Head,
    /// A step that makes the residual streams one hidden state before the final norm
    /// (hyper-connections' head mix, AltUp's mean, block attention residuals' head mix).
    HeadInput,
    Aux,
    /// The attention of the layers that cross-attend to an image (Mllama), skipped on text alone.
    CrossAttention,
    /// Such a layer's add through a learned tanh gate.
    CrossGate,
    /// HRM's loop over its two stacks of layers.
    Hierarchy,
    /// Dory's looped section.
    Loop,
    /// One of BLT's byte-level stacks, whole: its embedding, layers, pooling, cross-attention
    /// and (the patcher's and decoder's) head.
    Stack(crate::spec::Stack),
}

#[derive(Debug, Clone)]
pub struct Part {
    /// Stable id, used in the URL (`attention`, `ffn-moe`).
    pub id: String,
    pub kind: Kind,
    pub title: String,
    pub category: Category,
    /// Inside the repeated block.
    pub in_block: bool,
    /// Layers it exists in, when not all of the block's.
    pub layers: Option<LayerSet>,
    /// Step numbers it is made of.
    pub steps: Vec<usize>,
    /// Width of the activation it outputs.
    pub out_dim: u64,
    /// Parameters stored for it over all its layers, and of those the ones an earlier part
    /// already counts (a tied LM head reads the embedding).
    pub params: u128,
    pub shared_params: u128,
    /// In a layer that a prompt without an image skips (Mllama's cross-attention layers).
    pub on_image: bool,
    param_ids: BTreeSet<usize>,
    pub cost: stats::Cost,
}

/// Every part in drawing order.
pub fn parts(g: &Graph, context: u64) -> Vec<Part> {
    let visits = g.steps();
    let mut out: Vec<Part> = Vec::new();
    for node in &g.root.children {
        let Node::Scope(scope) = node else { continue };
        match scope.kind {
            ScopeKind::Embedding => out.push(part(
                g,
                &visits,
                "embedding",
                Kind::Embedding,
                if g.spec.draft.is_some() {
                    "Target state"
                } else if g.spec.bytes().is_some() {
                    "Patch input"
                } else {
                    "Token embedding"
                },
                false,
                None,
                steps_in(scope),
                context,
            )),
            ScopeKind::Block => block_parts(g, &visits, scope, context, &mut out),
            ScopeKind::Final => {
                let steps: Vec<&crate::graph::Step> = scope
                    .children
                    .iter()
                    .filter_map(|n| match n {
                        Node::Step(s) => Some(s),
                        Node::Scope(_) => None,
                    })
                    .collect();
                // What follows the final norm is the head's: ModernBERT's transform, OPT-350M's
                // projection out, a draft's clusters, the padding dropped; one part. What comes
                // before it (streams made one) is a part a step.
                let head_from = steps
                    .iter()
                    .position(|s| s.op == Op::Norm)
                    .map_or(0, |i| i + 1);
                for s in &steps[..head_from] {
                    let (id, kind) = if s.op == Op::Norm {
                        ("final-norm", Kind::Norm)
                    } else {
                        ("head-input", Kind::HeadInput)
                    };
                    out.push(part(
                        g,
                        &visits,
                        id,
                        kind,
                        &s.title,
                        false,
                        None,
                        vec![s.number],
                        context,
                    ));
                }
                if head_from < steps.len() {
                    out.push(part(
                        g,
                        &visits,
                        "lm-head",
                        Kind::Head,
                        "Language-model head",
                        false,
                        None,
                        steps[head_from..].iter().map(|s| s.number).collect(),
                        context,
                    ));
                }
            }
            ScopeKind::Loop => out.push(part(
                g,
                &visits,
                "loop",
                Kind::Loop,
                "Looped layers",
                false,
                None,
                steps_in(scope),
                context,
            )),
            ScopeKind::Hierarchy => out.push(part(
                g,
                &visits,
                "hierarchy",
                Kind::Hierarchy,
                "Hierarchical loop",
                false,
                None,
                steps_in(scope),
                context,
            )),
            ScopeKind::CrossAttention => cross_parts(g, &visits, scope, context, &mut out),
            ScopeKind::Stack(s) => out.push(part(
                g,
                &visits,
                stack_id(s),
                Kind::Stack(s),
                &scope.title,
                false,
                None,
                steps_in(scope),
                context,
            )),
            ScopeKind::Aux => out.push(part(
                g,
                &visits,
                "mtp",
                Kind::Aux,
                &scope.title,
                false,
                None,
                steps_in(scope),
                context,
            )),
            _ => {}
        }
    }
    // The multi-token-prediction module holds one more decoder block besides its own tensors.
    let block = stats::per_layer_params(g).last().copied().unwrap_or(0) * g.spec.mtp_layers as u128;
    let mut counted = BTreeSet::new();
    for p in &mut out {
        let size = |i: &usize| g.params[*i].numel() * g.params[*i].instances();
        p.shared_params = p.param_ids.intersection(&counted).map(size).sum();
        p.params = p.param_ids.iter().map(size).sum::<u128>() - p.shared_params;
        if p.kind == Kind::Aux {
            p.params += block;
        }
        counted.extend(p.param_ids.iter().copied());
    }
    // The page finds a part by its id: a second part of one kind where the drawing has two (a
    // head's projection beside the head, a layer variant's attention) is numbered from 2.
    let mut taken: BTreeSet<String> = out.iter().map(|p| p.id.clone()).collect();
    let mut first: BTreeSet<String> = BTreeSet::new();
    for p in &mut out {
        if !first.insert(p.id.clone()) {
            let id = (2..)
                .map(|n| format!("{}-{n}", p.id))
                .find(|id| !taken.contains(id))
                .expect("some number is free");
            taken.insert(id.clone());
            p.id = id;
        }
    }
    out
}

/// A cross-attention layer (Mllama's) as the layers beside it are drawn: its norm, the
/// cross-attention, the gated add, the FFN's norm, the MLP and its gated add. A route step (the
/// stream coming in, the image's states) belongs to the part that reads it.
fn cross_parts(g: &Graph, visits: &[Visit], scope: &Scope, context: u64, out: &mut Vec<Part>) {
    let mut pending: Vec<usize> = Vec::new();
    let mut body: Vec<usize> = Vec::new();
    let (mut norms, mut adds) = (0, 0);
    let layers = scope.layers.clone();
    let push = |out: &mut Vec<Part>, id: String, kind: Kind, title: &str, steps: Vec<usize>| {
        let mut p = part(
            g,
            visits,
            &id,
            kind,
            title,
            true,
            layers.clone(),
            steps,
            context,
        );
        p.on_image = true;
        out.push(p);
    };
    for node in &scope.children {
        let st = match node {
            Node::Step(st) => st,
            Node::Scope(s) => {
                body.extend(steps_in(s));
                continue;
            }
        };
        match st.op {
            Op::Route => pending.push(st.number),
            Op::Norm if st.category == Category::Norm && body.is_empty() => {
                norms += 1;
                pending.push(st.number);
                let steps = std::mem::take(&mut pending);
                push(
                    out,
                    format!("cross-norm-{norms}"),
                    Kind::Norm,
                    &st.title,
                    steps,
                );
            }
            Op::Add => {
                // The body before the first add is the cross-attention, after it the MLP.
                let (id, kind, title) = if adds == 0 {
                    (
                        "cross-attention",
                        Kind::CrossAttention,
                        "Cross-attention to the image",
                    )
                } else {
                    ("cross-ffn-mlp", Kind::Mlp, "Feed-forward (MLP)")
                };
                body.splice(0..0, std::mem::take(&mut pending));
                push(out, id.into(), kind, title, std::mem::take(&mut body));
                adds += 1;
                push(
                    out,
                    format!("cross-residual-{adds}"),
                    Kind::CrossGate,
                    &st.title,
                    vec![st.number],
                );
            }
            _ => body.push(st.number),
        }
    }
    debug_assert!(
        body.is_empty() && pending.is_empty(),
        "a cross-attention layer ends with its MLP's gated add"
    );
}

fn stack_id(s: crate::spec::Stack) -> &'static str {
    match s {
        crate::spec::Stack::Patcher => "patcher",
        crate::spec::Stack::Encoder => "local-encoder",
        crate::spec::Stack::Decoder => "local-decoder",
    }
}

fn block_parts(g: &Graph, visits: &[Visit], block: &Scope, context: u64, out: &mut Vec<Part>) {
    let mut attention: Vec<usize> = Vec::new();
    let mut mixer: Vec<usize> = Vec::new();
    let mut counts = (0, 0); // residuals, norms: for part ids
                             // Post-norms that close the FFN variants, drawn once after all of them.
    let mut tails: Vec<&crate::graph::Step> = Vec::new();
    // A sublayer's part, where it has steps.
    let sublayer = |id: &str,
                    kind: Kind,
                    title: &str,
                    layers: Option<LayerSet>,
                    steps: Vec<usize>,
                    out: &mut Vec<Part>| {
        if !steps.is_empty() {
            out.push(part(
                g, visits, id, kind, title, true, layers, steps, context,
            ));
        }
    };
    let attention_title = if g.spec.attn.mla.is_some() {
        "Multi-head latent attention"
    } else {
        attention_title(g)
    };
    let flush = |attention: &mut Vec<usize>, out: &mut Vec<Part>| {
        let steps = std::mem::take(attention);
        // The layers that attend, where not all do (a hybrid's, Mllama's self-attention).
        let attending = g.spec.attending_layers();
        let layers = (attending.len() != g.spec.layers).then_some(attending);
        sublayer(
            "attention",
            Kind::Attention,
            attention_title,
            layers,
            steps,
            out,
        );
    };
    // A model of one recurrent mixer draws its steps unframed: the part is named for it.
    let recurrent = g
        .spec
        .plan
        .iter()
        .map(|l| l.mixer)
        .find(|m| m.span_of().is_none() && *m != Mixer::None && m.runs_on_text())
        .map_or("Mixer", Mixer::title);
    let mixer_part = |steps: Vec<usize>, layers: Option<LayerSet>, out: &mut Vec<Part>| {
        sublayer("mixer", Kind::Mixer, recurrent, layers, steps, out);
    };
    // A frame's title less its layers (`Sliding-window attention (layers 1–4 …)`).
    let named = |s: &Scope| {
        s.title
            .split(" (layers")
            .next()
            .unwrap_or(&s.title)
            .to_string()
    };
    for node in &block.children {
        match node {
            // The mixer's routing steps carry its convolution window: they belong to it.
            Node::Step(s) if s.category == Category::Mixer => mixer.push(s.number),
            Node::Step(s) if s.op == Op::Route => {}
            Node::Step(s)
                if s.op == Op::Add || (s.op == Op::Norm && s.category == Category::Norm) =>
            {
                flush(&mut attention, out);
                mixer_part(std::mem::take(&mut mixer), None, out);
                single_parts(
                    g,
                    visits,
                    std::mem::take(&mut tails),
                    &mut counts,
                    context,
                    out,
                );
                single_parts(g, visits, vec![s], &mut counts, context, out);
            }
            Node::Step(s) => attention.push(s.number),
            // A mixer's per-head projections (Zamba's Mamba heads) belong to the mixer.
            Node::Scope(s)
                if s.kind == ScopeKind::Head
                    && matches!(s.children.first(), Some(Node::Step(st)) if st.category == Category::Mixer) =>
            {
                mixer.extend(steps_in(s))
            }
            Node::Scope(s) if matches!(s.kind, ScopeKind::Group | ScopeKind::Head) => {
                attention.extend(steps_in(s))
            }
            // A hybrid's recurrent mixer, or one attention variant's layers, named by its frame.
            Node::Scope(s) if matches!(s.kind, ScopeKind::Mixer | ScopeKind::Attention) => {
                flush(&mut attention, out);
                // Each attention variant's part an id of its own: `attention`, `attention-2` …
                let (id, kind) = if s.kind == ScopeKind::Mixer {
                    ("mixer".to_string(), Kind::Mixer)
                } else {
                    let n = out.iter().filter(|p| p.kind == Kind::Attention).count();
                    let id = match n {
                        0 => "attention".to_string(),
                        n => format!("attention-{}", n + 1),
                    };
                    (id, Kind::Attention)
                };
                sublayer(&id, kind, &named(s), s.layers.clone(), steps_in(s), out);
            }
            Node::Scope(s) => {
                flush(&mut attention, out);
                // An FFN scope may end with its post-norm: a part of its own, drawn once for all
                // variants.
                let (mut ffn, mut tail) = (Vec::new(), Vec::new());
                for n in &s.children {
                    match n {
                        Node::Step(st) if st.op == Op::Norm && st.category == Category::Norm => {
                            tail.push(st)
                        }
                        Node::Step(st) => ffn.push(st.number),
                        Node::Scope(inner) => ffn.extend(steps_in(inner)),
                    }
                }
                let (id, kind, title) = match s.kind {
                    ScopeKind::Moe => ("ffn-moe", Kind::Moe, "Mixture of experts"),
                    ScopeKind::PerLayer if g.spec.ngram_ple.is_some() => {
                        ("per-layer", Kind::PerLayer, "N-gram embeddings")
                    }
                    ScopeKind::PerLayer => ("per-layer", Kind::PerLayer, "Per-layer input"),
                    ScopeKind::Shared => ("shared-block", Kind::Shared, "Shared transformer block"),
                    _ => ("ffn-mlp", Kind::Mlp, "Feed-forward (MLP)"),
                };
                out.push(part(
                    g,
                    visits,
                    id,
                    kind,
                    title,
                    true,
                    s.layers.clone(),
                    ffn,
                    context,
                ));
                tails.extend(tail);
            }
        }
    }
    flush(&mut attention, out);
    mixer_part(mixer, None, out);
    single_parts(g, visits, tails, &mut counts, context, out);
    // Parts that merged steps of several variants need their sums redone.
    for p in out.iter_mut() {
        if p.steps.len() > 1 && matches!(p.kind, Kind::Residual | Kind::Norm) {
            *p = part(
                g,
                visits,
                &p.id.clone(),
                p.kind,
                &p.title.clone(),
                true,
                None,
                p.steps.clone(),
                context,
            );
        }
    }
}

/// Norm and residual steps as parts of one step each; a step titled as one of the variants'
/// post-norms already drawn joins that part.
fn single_parts(
    g: &Graph,
    visits: &[Visit],
    steps: Vec<&crate::graph::Step>,
    counts: &mut (usize, usize),
    context: u64,
    out: &mut Vec<Part>,
) {
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for st in steps {
        if !seen.insert(st.title.clone()) {
            if let Some(p) = out.iter_mut().rev().find(|p| p.title == st.title) {
                p.steps.push(st.number);
            }
            continue;
        }
        let (id, kind) = if st.op == Op::Add {
            counts.0 += 1;
            (format!("residual-{}", counts.0), Kind::Residual)
        } else {
            counts.1 += 1;
            (format!("norm-{}", counts.1), Kind::Norm)
        };
        out.push(part(
            g,
            visits,
            &id,
            kind,
            &st.title,
            true,
            // A norm or add that runs in some layers only (Mllama's self-attention layers, not
            // its cross-attention ones) belongs to their variants.
            st.layers.clone(),
            vec![st.number],
            context,
        ));
    }
}

fn attention_title(g: &Graph) -> &'static str {
    match g.spec.attn.kind {
        crate::spec::AttnKind::Mha => "Multi-head attention",
        crate::spec::AttnKind::Mqa => "Multi-query attention",
        // MLA's groups are GQA's; its latent projections have parts of their own.
        crate::spec::AttnKind::Gqa | crate::spec::AttnKind::Mla => "Grouped-query attention",
    }
}

fn steps_in(scope: &Scope) -> Vec<usize> {
    let mut out = Vec::new();
    for n in &scope.children {
        match n {
            Node::Step(s) => out.push(s.number),
            Node::Scope(s) => out.extend(steps_in(s)),
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn part(
    g: &Graph,
    visits: &[Visit],
    id: &str,
    kind: Kind,
    title: &str,
    in_block: bool,
    layers: Option<LayerSet>,
    steps: Vec<usize>,
    context: u64,
) -> Part {
    let mut params_seen = BTreeSet::new();
    let mut cost = stats::Cost::default();
    let mut out_dim = g.spec.hidden;
    for v in visits.iter().filter(|v| steps.contains(&v.step.number)) {
        for &i in &v.step.inputs {
            if let TensorKind::Weight { param, .. } = g.tensor(i).kind {
                params_seen.insert(param);
            }
        }
        cost.add(&stats::step_cost(g, v, context));
        out_dim = g.tensor(v.step.output).dims[0].size().unwrap_or(out_dim);
    }
    let category = match kind {
        Kind::Attention | Kind::Shared | Kind::CrossAttention => Category::Attention,
        Kind::Mixer => Category::Mixer,
        Kind::Mlp | Kind::Moe | Kind::PerLayer => Category::Ffn,
        Kind::Norm | Kind::Residual | Kind::CrossGate | Kind::Hierarchy | Kind::Loop => {
            Category::Norm
        }
        Kind::Embedding | Kind::Head | Kind::HeadInput | Kind::Stack(_) => Category::Embed,
        Kind::Aux => Category::Aux,
    };
    Part {
        id: id.into(),
        kind,
        title: title.into(),
        category,
        in_block,
        layers,
        steps,
        out_dim,
        params: 0,
        shared_params: 0,
        on_image: false,
        param_ids: params_seen,
        cost,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog_parts() -> impl Iterator<Item = (&'static str, Graph, Vec<Part>)> {
        crate::catalog::ENTRIES.iter().map(|e| {
            let g = crate::graph::build(&crate::source::load(e.name, false).unwrap().spec).unwrap();
            let parts = parts(&g, g.spec.context);
            (e.name, g, parts)
        })
    }

    #[test]
    fn every_part_has_an_id_of_its_own() {
        for (name, _, parts) in catalog_parts() {
            let mut ids = BTreeSet::new();
            for p in &parts {
                assert!(ids.insert(p.id.as_str()), "{name}: two parts are {}", p.id);
            }
        }
    }

    /// The titles of a part's steps.
    fn titles(g: &Graph, p: &Part) -> Vec<String> {
        p.steps
            .iter()
            .map(|&n| g.step(n).unwrap().step.title.clone())
            .collect()
    }

    #[test]
    fn what_follows_the_final_norm_is_the_heads_one_part() {
        let all: Vec<_> = catalog_parts().collect();
        let model = |name: &str| all.iter().find(|(n, ..)| *n == name).unwrap();
        for (name, g, parts) in &all {
            // BLT's head is its local decoder's, drawn with that stack.
            if g.spec.bytes().is_some() {
                continue;
            }
            let head: Vec<&Part> = parts.iter().filter(|p| p.kind == Kind::Head).collect();
            assert_eq!(head.len(), 1, "{name}: one head part");
            assert_eq!(head[0].id, "lm-head", "{name}");
            assert!(
                titles(g, head[0]).contains(&"Language-model head".to_string()),
                "{name}"
            );
        }
        let want: [(&str, &str, &[&str]); 5] = [
            ("qwen3-0.6b", "lm-head", &["Language-model head"]),
            (
                "opt-350m",
                "lm-head",
                &["Projection out", "Language-model head"],
            ),
            (
                "inkling-2-mini",
                "lm-head",
                &["Language-model head", "Padding rows dropped"],
            ),
            ("hy4-preview", "head-input-3", &["Head stream sum"]),
            ("gemma-3n-e4b", "head-input", &["AltUp stream mean"]),
        ];
        for (name, id, steps) in want {
            let (_, g, parts) = model(name);
            let p = parts.iter().find(|p| p.id == id).unwrap();
            assert_eq!(titles(g, p), steps, "{name} {id}");
        }
        // OPT-350M's head holds its projection out, 512 × 1024, beside the tied matrix.
        let (_, g, parts) = model("opt-350m");
        let head = parts.iter().find(|p| p.id == "lm-head").unwrap();
        let out = g
            .params
            .iter()
            .find(|p| p.hf == "model.decoder.project_out.weight")
            .unwrap();
        assert_eq!(head.params, out.numel() * out.instances());
    }
}
