//! A captured run as the op view shows it: each activation placed on the graph step that computes
//! it, router weights per token, and one head's attention weights.

use crate::model::Captured;
use anatomy_core::graph::{Category, Graph, Node, Op, Scope, ScopeKind, Step};
use anatomy_core::render::html::ops::{StepValues, Table, Values};
use std::collections::BTreeMap;

/// The steps of the block (first variant wins), and of the model outside it, in order.
fn steps_of(scope: &Scope, out: &mut Vec<(bool, Step)>, in_block: bool) {
    for n in &scope.children {
        match n {
            Node::Step(s) => out.push((in_block, s.clone())),
            Node::Scope(s) => steps_of(s, out, in_block || s.kind == ScopeKind::Block),
        }
    }
}

/// Which graph step computes each capture point.
fn step_for(steps: &[(bool, Step)], point: &str, moe: bool) -> Option<usize> {
    let find = |f: &dyn Fn(&Step) -> bool, in_block: bool| {
        steps
            .iter()
            .find(|(b, s)| *b == in_block && f(s))
            .map(|(_, s)| s.number)
    };
    let norms: Vec<usize> = steps
        .iter()
        .filter(|(b, s)| *b && s.op == Op::Norm && s.category == Category::Norm)
        .map(|(_, s)| s.number)
        .collect();
    match point {
        "embed" => steps
            .iter()
            .filter(|(b, s)| !b && matches!(s.op, Op::Lookup | Op::Scale | Op::Add))
            .map(|(_, s)| s.number)
            .take_while(|n| *n < norms.first().copied().unwrap_or(usize::MAX))
            .last(),
        "attn_norm" => norms.first().copied(),
        "q_proj" => find(&|s| s.title == "Q projection", true),
        "k_proj" => find(&|s| s.title == "K projection", true),
        "q" => find(&|s| s.title.starts_with("Q rotary"), true),
        "k" => find(
            &|s| s.title.starts_with("K rotary") || s.title.starts_with("Kₚₑ"),
            true,
        ),
        "gate" => find(&|s| s.title == "Gate projection", true),
        "up" => find(&|s| s.title == "Up projection", true),
        "act" => find(&|s| s.op == Op::Activation, true),
        "v" => find(
            &|s| s.title == "V projection" || s.title == "V up-projection",
            true,
        ),
        "scores" => find(&|s| matches!(s.op, Op::Scores { .. }), true),
        "probs" => find(&|s| s.op == Op::Softmax, true),
        "heads" => find(&|s| s.op == Op::Concat, true),
        // Each head's output: the same values, before the heads are stacked.
        "heads_each" => find(&|s| matches!(s.op, Op::WeightedSum { .. }), true),
        "block_in" => find(&|s| s.op == Op::Route, true),
        "attn_out" => find(&|s| s.title == "Attention output projection", true),
        "resid_attn" => find(&|s| s.title == "Attention residual", true),
        "ffn_norm" => find(
            &|s| s.op == Op::Norm && s.category == Category::Norm && s.title.starts_with("MLP"),
            true,
        ),
        "router" => find(&|s| s.title == "Router logits", true),
        "routing" => find(&|s| s.op == Op::TopK, true),
        "down" if moe => find(&|s| s.op == Op::Combine, true),
        "down" => find(&|s| s.title == "Down projection", true),
        "resid_ffn" => find(&|s| s.title == "MLP residual", true),
        "final_norm" => {
            find(&|s| s.op == Op::Norm, false).filter(|n| *n > norms.last().copied().unwrap_or(0))
        }
        "logits" => find(&|s| s.title == "Language-model head", false),
        _ => None,
    }
}

/// The op view's values from a captured run of the model whose graph is `g`.
pub fn values(
    g: &Graph,
    captured: &[Captured],
    ids: &[u32],
    pieces: Vec<String>,
    note: String,
) -> Values {
    let mut steps_list = Vec::new();
    steps_of(&g.root, &mut steps_list, false);
    let mut steps = BTreeMap::new();
    // Layer 0 for the block's steps; the first MoE layer for the expert steps.
    let first_moe = g.spec.plan.iter().position(|l| l.moe);
    for c in captured {
        let wanted = match c.point {
            "router" | "routing" => first_moe,
            "down" if first_moe == Some(0) => Some(0),
            _ => Some(0),
        };
        if c.layer.is_some() && c.layer != wanted {
            continue;
        }
        let moe = c.layer.is_some_and(|b| g.spec.plan[b].moe);
        // A head's output is also each head's: the same values before the heads are stacked.
        let points: &[&str] = if c.point == "heads" {
            &["heads", "heads_each"]
        } else {
            std::slice::from_ref(&c.point)
        };
        for p in points {
            if let Some(n) = step_for(&steps_list, p, moe) {
                steps.entry(n).or_insert(StepValues {
                    shape: c.shape.clone(),
                    mean: c.mean,
                    std: c.std,
                    max: c.max,
                });
            }
        }
    }
    let label = |i: usize| {
        pieces
            .get(i)
            .map_or(format!("{}", ids[i]), |p| format!("{} {p:?}", ids[i]))
    };
    let mut tables = Vec::new();
    if let Some(r) = captured
        .iter()
        .find(|c| c.point == "routing" && c.values.is_some())
    {
        let (t, e) = (r.shape[0], r.shape[1]);
        let v = r.values.as_ref().expect("checked");
        tables.push(Table {
            title: format!("Router weights in layer {} — each token's chosen experts; 0 marks an expert not chosen", r.layer.unwrap_or(0)),
            rows: (0..t).map(label).collect(),
            cols: (0..e).map(|i| format!("e{i}")).collect(),
            cells: v.chunks(e).map(|c| c.to_vec()).collect(),
        });
    }
    if let Some(p) = captured
        .iter()
        .find(|c| c.point == "probs" && c.layer == Some(0) && c.values.is_some())
    {
        let t = p.shape[1];
        let total = p.shape[2];
        let v = p.values.as_ref().expect("checked");
        tables.push(Table {
            title: "Attention weights of head 0 in layer 0 — rows are queries, columns keys".into(),
            rows: (0..t).map(label).collect(),
            cols: (0..total).map(|i| format!("k{i}")).collect(),
            cells: v[..t * total].chunks(total).map(|c| c.to_vec()).collect(),
        });
    }
    Values {
        note,
        ids: ids.to_vec(),
        pieces,
        steps,
        tables,
    }
}
