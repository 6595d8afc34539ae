//! The Graph taken elsewhere (`anatomy export`): the whole Graph as JSON (its schema is
//! `schema/graph.schema.json`), the block structure as a Mermaid flowchart, and a Markdown
//! section for a model card. The SVG export is the page's drawing (`html::standalone_svg`).

use crate::error::Result;
use crate::graph::{Category, Component, Graph, Node, Op, Scope, ScopeKind, TensorKind};
use crate::layers::LayerSet;
use crate::render::html::parts::{parts, Kind, Part};
use crate::source::Origin;
use crate::stats;
use serde_json::{json, Value};

/// Bumped whenever the JSON's shape changes in a way a reader could notice.
pub const SCHEMA_VERSION: u64 = 1;

fn layers(l: &Option<LayerSet>) -> Value {
    match l {
        Some(l) => json!(l.iter().collect::<Vec<u64>>()),
        None => Value::Null,
    }
}

fn op_name(op: Op) -> &'static str {
    match op {
        Op::Lookup => "lookup",
        Op::Route => "route",
        Op::Norm => "norm",
        Op::MatMul => "matmul",
        Op::Rope => "rope",
        Op::Scores { .. } => "scores",
        Op::Softmax => "softmax",
        Op::WeightedSum { .. } => "weighted_sum",
        Op::Concat => "concat",
        Op::Add => "add",
        Op::Activation => "activation",
        Op::TopK => "top_k",
        Op::Combine => "combine",
        Op::Scale => "scale",
        Op::Index { .. } => "index_scores",
        Op::Select { .. } => "select_keys",
        Op::Conv { .. } => "causal_conv",
        Op::Scan { .. } => "scan",
    }
}

fn category(c: Category) -> &'static str {
    match c {
        Category::Attention => "attention",
        Category::Mixer => "mixer",
        Category::Ffn => "ffn",
        Category::Norm => "norm",
        Category::Embed => "embedding",
        Category::Aux => "auxiliary",
    }
}

fn scope_kind(k: ScopeKind) -> &'static str {
    match k {
        ScopeKind::Model => "model",
        ScopeKind::Aux => "aux",
        ScopeKind::CrossAttention => "cross_attention",
        ScopeKind::Embedding => "embedding",
        ScopeKind::Block => "block",
        ScopeKind::Attention => "attention",
        ScopeKind::Group => "group",
        ScopeKind::Head => "head",
        ScopeKind::Mlp => "mlp",
        ScopeKind::Moe => "moe",
        ScopeKind::Experts => "experts",
        ScopeKind::Indexer => "indexer",
        ScopeKind::Compressor => "compressor",
        ScopeKind::Mixer => "mixer",
        ScopeKind::PerLayer => "per_layer",
        ScopeKind::Shared => "shared_block",
        ScopeKind::Hierarchy => "hierarchy",
        ScopeKind::Loop => "loop",
        ScopeKind::Stack(s) => match s {
            crate::spec::Stack::Patcher => "patcher",
            crate::spec::Stack::Encoder => "local_encoder",
            crate::spec::Stack::Decoder => "local_decoder",
        },
        ScopeKind::PatchCross => "patch_cross",
        ScopeKind::Final => "final",
    }
}

fn scope(s: &Scope) -> Value {
    let children: Vec<Value> = s
        .children
        .iter()
        .map(|n| match n {
            Node::Scope(c) => json!({ "type": "scope", "scope": scope(c) }),
            Node::Step(st) => json!({
                "type": "step",
                "step": {
                    "number": st.number,
                    "title": st.title,
                    "op": op_name(st.op),
                    "category": category(st.category),
                    "inputs": st.inputs,
                    "output": st.output,
                    "operation": st.operation,
                    "equation": st.equation,
                    "layers": layers(&st.layers),
                }
            }),
        })
        .collect();
    json!({
        "kind": scope_kind(s.kind),
        "title": s.title,
        "repeat": s.repeat,
        "active": s.active,
        "layers": layers(&s.layers),
        "children": children,
    })
}

/// The whole Graph as one JSON document.
pub fn json(g: &Graph, origin: &Origin) -> Result<Value> {
    let spec = &g.spec;
    let s = stats::stats(g, None)?;
    let params: Vec<Value> = g
        .params
        .iter()
        .map(|p| {
            json!({
                "hf": p.hf,
                "gguf": p.gguf,
                "shape": p.shape,
                "component": match p.component {
                    Component::Aux => "auxiliary",
                    c => c.label(),
                },
                "layers": layers(&p.layers),
                "experts": p.experts,
                "routed": p.routed,
            })
        })
        .collect();
    let tensors: Vec<Value> = g
        .tensors
        .iter()
        .map(|t| {
            let dims: Vec<Value> = t
                .dims
                .iter()
                .rev()
                .map(|d| json!({ "size": d.size(), "label": d.to_string() }))
                .collect();
            match &t.kind {
                TensorKind::Activation { cached } => json!({
                    "name": t.name, "dims": dims, "kind": "activation", "cached": cached,
                }),
                TensorKind::State => json!({ "name": t.name, "dims": dims, "kind": "state" }),
                TensorKind::Weight { param, slice, note } => json!({
                    "name": t.name, "dims": dims, "kind": "weight", "param": param,
                    "slice": slice, "note": note,
                }),
            }
        })
        .collect();
    let mut figures = serde_json::to_value(&s).expect("stats serialize");
    if let Some(o) = figures.as_object_mut() {
        o.remove("model");
        o.remove("ignored");
        o.remove("not_read_by_transformers");
    }
    Ok(json!({
        "schema_version": SCHEMA_VERSION,
        "model": {
            "name": spec.name,
            "family": spec.family,
            "model_type": spec.model_type,
            "layers": spec.layers,
            "hidden": spec.hidden,
            "vocab": spec.vocab,
            "context": spec.context,
            "plan": spec.plan_summary(),
        },
        "source": origin.json(),
        "ignored": crate::spec::Ignored::pairs(&spec.ignored),
        "not_read_by_transformers": crate::spec::Ignored::pairs(&spec.not_read),
        "figures": figures,
        "params": params,
        "tensors": tensors,
        "root": scope(&g.root),
        "towers": spec.towers.iter().map(|t| json!({
            "what": t.what,
            "prefix": t.prefix,
            "params": t.params(),
            "blocks": t.steps().iter().map(|b| json!({
                "title": b.title,
                "repeat": b.layers.len(),
                "layers": b.layers.to_string(),
                "tensors": b.tensors.iter().map(|(name, shape)| json!({"name": name, "shape": shape})).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    }))
}

/// A Mermaid node id from a part id (letters, digits, underscores).
fn node_id(id: &str) -> String {
    id.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// Text inside a Mermaid label: quotes and markup as entity codes, so a hostile model name
/// stays text.
fn label(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '"' => out.push_str("#quot;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '#' => out.push_str("#35;"),
            '&' => out.push_str("#amp;"),
            '\n' | '\r' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Text inside YAML front matter's single quotes (Mermaid's title): nothing there is an escape
/// (a `\x` inside double quotes is invalid YAML), a quote is written twice, and the rest is a
/// label's text.
fn yaml_quoted(s: &str) -> String {
    let mut out = String::new();
    for c in label(s).chars() {
        match c {
            '\'' => out.push_str("''"),
            c => out.push(c),
        }
    }
    out
}

fn part_label(p: &Part) -> String {
    let mut l = p.title.clone();
    if let Some(layers) = &p.layers {
        l += &format!(" (layers {layers})");
    }
    l
}

/// The block structure as a Mermaid flowchart: the embedding, the decoder layer (×N) with its
/// parts in order (layer variants side by side), the final norm and the head.
pub fn mermaid(g: &Graph) -> Result<String> {
    let s = stats::stats(g, None)?;
    let ps = parts(g, s.kv_cache.context);
    let mut out = format!(
        "---\ntitle: '{}'\n---\nflowchart TD\n",
        yaml_quoted(&format!(
            "{} · {} · {} params",
            g.spec.name,
            g.spec.family,
            crate::fmt::short(s.total_params as u128)
        ))
    );
    out += "  input([\"input ids\"])\n";
    let mut prev: Vec<String> = vec!["input".into()];
    let mut in_block = false;
    // What leaves the last block: auxiliary modules (multi-token prediction) hang off it.
    let mut block_out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ps.len() {
        let p = &ps[i];
        if p.kind == Kind::Aux {
            let id = node_id(&p.id);
            out += &format!("  {id}[\"{}\"]\n", label(&part_label(p)));
            for from in &block_out {
                out += &format!("  {from} -.-> {id}\n");
            }
            i += 1;
            continue;
        }
        if p.in_block && !in_block {
            out += &format!(
                "  subgraph block[\"{}\"]\n    direction TB\n",
                label(&format!("decoder layer ×{}", g.spec.layers))
            );
            in_block = true;
        } else if !p.in_block && in_block {
            out += "  end\n";
            in_block = false;
            block_out = prev.clone();
        }
        // Consecutive parts of different layer variants sit side by side.
        let mut slot = vec![p];
        while p.layers.is_some()
            && i + slot.len() < ps.len()
            && ps[i + slot.len()].layers.is_some()
            && ps[i + slot.len()].layers != p.layers
            && ps[i + slot.len()].kind != Kind::Residual
        {
            slot.push(&ps[i + slot.len()]);
        }
        let indent = if in_block { "    " } else { "  " };
        let mut ids = Vec::new();
        for q in &slot {
            let id = node_id(&q.id);
            let shape = match q.kind {
                Kind::Residual => format!("(({}))", "+"),
                _ => format!("[\"{}\"]", label(&part_label(q))),
            };
            out += &format!("{indent}{id}{shape}\n");
            for from in &prev {
                out += &format!("{indent}{from} --> {id}\n");
            }
            ids.push(id);
        }
        prev = ids;
        i += slot.len();
    }
    if in_block {
        out += "  end\n";
    }
    out += "  output([\"logits\"])\n";
    for from in &prev {
        out += &format!("  {from} --> output\n");
    }
    Ok(out)
}

/// A Markdown section for a model card: the figures, the layer pattern, and what each part is.
pub fn markdown(g: &Graph, origin: &Origin) -> Result<String> {
    use crate::fmt::{grouped, short};
    let spec = &g.spec;
    let s = stats::stats(g, None)?;
    // Text from the config stays text: no table breaks, no HTML.
    let cell = |t: &str| {
        t.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('|', "\\|")
            .replace('\n', " ")
    };
    let mut out = format!(
        "## Architecture of {}\n\n{} ({}): {} layers, hidden size {}, vocabulary {}, context {} tokens.\n\n",
        crate::fmt::md_text(&spec.name),
        cell(&spec.family),
        crate::fmt::md_text(&spec.model_type),
        spec.layers,
        grouped(spec.hidden as u128),
        grouped(spec.vocab as u128),
        grouped(spec.context as u128)
    );
    out += "| figure | value |\n|---|---:|\n";
    let mut row = |k: &str, v: String| out.push_str(&format!("| {k} | {v} |\n"));
    row(
        "parameters",
        format!(
            "{} ({})",
            grouped(s.total_params as u128),
            short(s.total_params as u128)
        ),
    );
    if s.active_params != s.total_params {
        row(
            if s.sparse() {
                "active parameters per token"
            } else {
                "active parameters per token (the language model; not the towers)"
            },
            format!(
                "{} ({})",
                grouped(s.active_params as u128),
                short(s.active_params as u128)
            ),
        );
    }
    for (k, v) in &s.params_by_component {
        row(&format!("parameters: {k}"), grouped(*v as u128));
    }
    row(
        "KV cache per token (bf16)",
        format!("{} bytes", grouped(s.kv_cache.bytes_per_token_bf16 as u128)),
    );
    row(
        &format!(
            "KV cache at {} tokens (bf16)",
            grouped(s.kv_cache.context as u128)
        ),
        crate::fmt::bytes(s.kv_cache.bytes_at_context_bf16 as u128),
    );
    row(
        "weights in bf16",
        crate::fmt::bytes(s.weight_bytes.bf16 as u128),
    );
    row(
        &format!(
            "FLOPs per {} at {} tokens",
            if spec.draft.is_some() {
                "draft step"
            } else {
                "decoded token"
            },
            grouped(s.flops.context as u128)
        ),
        crate::fmt::flops(s.flops.decode_per_token as f64),
    );
    out += "\n";
    let plan = spec.plan_summary();
    if plan.is_empty() {
        out += "Every layer is the same.\n\n";
    } else {
        out += "Layers differ:\n\n";
        for l in plan {
            out += &format!("- {}\n", cell(&l));
        }
        out += "\n";
    }
    let facts = crate::diff::facts(spec);
    let get = |k: &str| facts.iter().find(|f| f.key == k).map(|f| f.value.clone());
    out += "| part | kind |\n|---|---|\n";
    let mut attention = format!(
        "{} attention, {} query heads, {} K/V heads, head dim {}",
        get("attention.kind").unwrap_or_default(),
        spec.attn.heads,
        spec.attn.kv_heads,
        spec.attn.head_dim
    );
    if let Some(q) = get("attention.qk_norm").filter(|q| q != "none") {
        attention += &format!(", QK-norm {q}");
    }
    for (set, o) in &spec.layer_attn {
        attention += &format!(
            "; layers {set}: {} query heads, {} K/V heads{}",
            o.heads,
            o.kv_heads,
            if o.sinks { ", sinks" } else { "" }
        );
    }
    out += &format!("| attention | {} |\n", cell(&attention));
    out += &format!(
        "| positions | {} |\n",
        cell(&get("position").unwrap_or_default())
    );
    let ffn = match &spec.moe {
        Some(m) => format!(
            "mixture of {} experts ({} active, width {}{}), {} activation",
            m.experts,
            m.top_k,
            m.expert_intermediate,
            if m.shared_experts > 0 {
                format!(", {} shared", m.shared_experts)
            } else {
                String::new()
            },
            spec.mlp.act.label()
        ),
        None => format!(
            "{}MLP of width {}, {} activation",
            if spec.mlp.gated { "gated " } else { "" },
            spec.mlp.intermediate,
            spec.mlp.act.label()
        ),
    };
    out += &format!("| feed-forward | {} |\n", cell(&ffn));
    out += &format!(
        "| norms | {}, {} |\n",
        cell(&get("norm.kind").unwrap_or_default()),
        cell(&get("norm.place").unwrap_or_default())
    );
    out += &format!(
        "| embeddings | {} |\n",
        if spec.tied {
            "tied to the LM head"
        } else {
            "untied"
        }
    );
    out += &format!(
        "\n<sub>Generated by anatomy from {}.</sub>\n",
        crate::fmt::md_text(&origin.describe())
    );
    Ok(out)
}
