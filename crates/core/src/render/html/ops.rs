//! The op-level view (seed 004): every op of the embedding, one block (framed "stacked ×N", its
//! variants labelled) and the head, as glyph nodes with their output tensors; parallel groups,
//! heads and experts as lanes, folded beyond three; each op opens its NumPy function; values from
//! a real run of the executor beside them.

use super::escape;
use crate::graph::{Dim, Graph, Node, Scope, ScopeKind, Step};
use crate::render::{numpy, report};
use crate::values::{Table, Values};
use serde_json::{json, Value};

const LANES_SHOWN: u64 = 3;

/// Named dims of a tensor as the op view writes them: `[seq_len, hidden_size=3072]`.
fn dims(g: &Graph, d: &[Dim; 2]) -> String {
    format!(
        "[{}]",
        d.iter()
            .rev()
            .map(|d| report::dim_name(&g.spec, d))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The name of the NumPy function that implements a step.
fn function_for(g: &Graph, s: &Step) -> &'static str {
    use crate::graph::Op::*;
    // The NumPy file runs a recurrent mixer in one function.
    if s.category == crate::graph::Category::Mixer {
        return "mamba2";
    }
    let index = g.spec.attn_variants().iter().find_map(|(a, _)| {
        if a.pool_index.is_some() {
            Some("pool_mask")
        } else if a.qsa.is_some() {
            Some("qsa_mask")
        } else if a.block_index.is_some() {
            Some("block_mask")
        } else {
            None
        }
    });
    let name = match s.op {
        Lookup | Scale => "embed",
        Norm => "norm",
        Rope => "apply_rope",
        Scores { .. } | Softmax | WeightedSum { .. } | Concat if g.spec.attn.mla.is_some() => {
            "mla_attention"
        }
        Index { .. } | Select { .. } => index.unwrap_or("index_keys"),
        Scores { .. } | Softmax | WeightedSum { .. } | Concat => "attention",
        TopK => "route",
        Combine => "moe",
        Add => "residual",
        Activation => {
            if g.spec
                .moe
                .as_ref()
                .is_some_and(|m| m.swiglu_limit.is_some())
            {
                "glu"
            } else {
                "act"
            }
        }
        MatMul if s.title == "Language-model head" => "lm_head",
        MatMul => "linear",
        Route => "forward",
        Conv { .. } | Scan { .. } => "mamba2",
    };
    name
}

struct Ctx<'a> {
    g: &'a Graph,
    values: Option<&'a Values>,
    /// This model's NumPy file: each op shows its function from it, with the constants that
    /// function reads.
    module: String,
    /// Its CONFIG, of which each op shows the entries its function reads.
    config: serde_json::Map<String, Value>,
    ops: serde_json::Map<String, Value>,
}

/// Where a step is drawn: the lanes it sits in, for its label and its values.
#[derive(Clone, Default)]
struct Lane {
    label: String,
    /// The repeated frames around it, outermost first, with the lane's index in each.
    path: Vec<(ScopeKind, u64)>,
}

impl Lane {
    fn indices(&self) -> Vec<u64> {
        self.path.iter().map(|(_, i)| *i).collect()
    }
}

impl Ctx<'_> {
    /// Step `s`'s NumPy code: its function as this model's file has it, after the constants it
    /// reads.
    fn code(&self, s: &Step) -> String {
        let Some(function) = numpy::function_in(&self.module, function_for(self.g, s)) else {
            return String::new();
        };
        match numpy::config_read_by(&self.config, function) {
            Some(config) => {
                format!("# this model's constants that it reads:\n{config}\n\n{function}")
            }
            None => function.to_string(),
        }
    }

    fn step(&mut self, s: &Step, lane: &Lane) -> String {
        let t = self.g.tensor(s.output);
        // In a lane, only that lane's own values: a head shows its head's numbers, or none.
        let stats = self.values.and_then(|v| match lane.path.is_empty() {
            true => v.steps.get(&s.number),
            false => v.lanes.get(&(s.number, lane.indices())),
        });
        let stats_html = stats.map_or(String::new(), |v| {
            format!(
                "<span class=\"stats\">mean {:.3} · std {:.3} · max {:.3}</span>",
                v.mean, v.std, v.max
            )
        });
        let weights: Vec<String> = s
            .inputs
            .iter()
            .map(|&i| self.g.tensor(i))
            .filter(|t| t.is_weight())
            .map(|t| {
                format!(
                    "<span class=\"tensor weight\">{} {}</span>",
                    escape(&t.name),
                    escape(&dims(self.g, &t.dims))
                )
            })
            .collect();
        let key = s.number.to_string();
        if !self.ops.contains_key(&key) {
            self.ops.insert(
                key.clone(),
                json!({
                    "title": s.title,
                    "glyph": report::glyph(s.op),
                    "equation": s.equation,
                    "code": self.code(s),
                    "stats": stats.map(|v| format!("output shape {:?}: mean {:.4}, std {:.4}, max {:.4}", v.shape, v.mean, v.std, v.max)),
                }),
            );
        }
        format!(
            "<div class=\"op\" data-op=\"{key}\" tabindex=\"0\" role=\"button\" aria-label=\"{aria}\"><span class=\"glyph\">{glyph}</span><span class=\"op-title\">{title}</span>{weights}<span class=\"tensor act\">{name} {dims}</span>{stats_html}</div>",
            aria = escape(&format!("{} {}{}", s.number, s.title, lane.label)),
            glyph = escape(report::glyph(s.op)),
            title = escape(&s.title),
            weights = weights.join(""),
            name = escape(&t.name),
            dims = escape(&dims(self.g, &t.dims)),
        )
    }

    fn nodes(&mut self, children: &[Node], lane: &Lane) -> String {
        children
            .iter()
            .map(|n| match n {
                Node::Step(s) => self.step(s, lane),
                Node::Scope(sc) => self.scope(sc, lane),
            })
            .collect()
    }

    fn scope(&mut self, sc: &Scope, lane: &Lane) -> String {
        let gate = sc
            .layers
            .as_ref()
            .filter(|_| !matches!(sc.kind, ScopeKind::Block))
            .map(|l| format!(" · layers {l}"))
            .unwrap_or_default();
        if sc.repeat <= 1 || sc.kind == ScopeKind::Block || sc.kind == ScopeKind::Aux {
            let title = if sc.kind == ScopeKind::Block {
                format!("decoder block — stacked ×{}", sc.repeat)
            } else {
                sc.title.clone()
            };
            return format!(
                "<div class=\"frame\"><div class=\"frame-title\">{}{}</div>{}</div>",
                escape(&title),
                escape(&gate),
                self.nodes(&sc.children, lane)
            );
        }
        let noun = sc
            .title
            .split_whitespace()
            .next()
            .unwrap_or("lane")
            .to_lowercase();
        let index = sc
            .title
            .split_whitespace()
            .last()
            .unwrap_or("i")
            .to_string();
        let shown = sc.repeat.min(LANES_SHOWN);
        let lanes: String = (0..shown)
            .map(|i| {
                let name = format!(
                    "{} {index}={i}",
                    sc.title.split_whitespace().next().unwrap_or("")
                );
                format!(
                    "<div class=\"lane\"><div class=\"lane-title\">{}</div>{}</div>",
                    escape(&name),
                    self.nodes(
                        &sc.children,
                        &Lane {
                            label: format!("{} {name}", lane.label),
                            path: [lane.path.as_slice(), &[(sc.kind, i)]].concat(),
                        }
                    )
                )
            })
            .collect();
        let fold = if sc.repeat > shown {
            let rest = sc.repeat - shown;
            let chips: String = (shown..sc.repeat.min(shown + 512))
                .map(|i| format!("<span class=\"chip\">{index}={i}</span>"))
                .collect();
            format!(
                "<details class=\"fold\"><summary>… {rest} more {noun}{}</summary><p>The same ops on their own weights:</p><div class=\"chips\">{chips}</div></details>",
                if rest == 1 { "" } else { "s" }
            )
        } else {
            String::new()
        };
        let active = sc
            .active
            .map(|k| format!(", {k} active per token"))
            .unwrap_or_default();
        format!(
            "<div class=\"frame lanes-frame\"><div class=\"frame-title\">{} ×{}{}{}</div><div class=\"lanes\">{lanes}</div>{fold}</div>",
            escape(&sc.title),
            sc.repeat,
            escape(&active),
            escape(&gate)
        )
    }
}

fn table_html(t: &Table) -> String {
    let head: String = t
        .cols
        .iter()
        .map(|c| format!("<th>{}</th>", escape(c)))
        .collect();
    let rows: String = t
        .rows
        .iter()
        .zip(&t.cells)
        .map(|(r, cells)| {
            let tds: String = cells
                .iter()
                .map(|v| {
                    if *v == 0.0 {
                        "<td class=\"zero\">0</td>".to_string()
                    } else {
                        format!("<td>{v:.3}</td>")
                    }
                })
                .collect();
            format!("<tr><th>{}</th>{tds}</tr>", escape(r))
        })
        .collect();
    format!("<figure class=\"values-table\"><figcaption>{}</figcaption><table><tr><th></th>{head}</tr>{rows}</table></figure>", escape(&t.title))
}

/// The op view's markup and the per-op data its script reads.
pub fn op_view(g: &Graph, values: Option<&Values>) -> (String, Value) {
    let mut ctx = Ctx {
        g,
        values,
        module: numpy::module(g, "model.py"),
        config: numpy::config(&g.spec),
        ops: serde_json::Map::new(),
    };
    let body = ctx.nodes(&g.root.children, &Lane::default());
    let values_html = match values {
        None => "<p class=\"note\">No run: values appear when the page is made with an executable model.</p>".to_string(),
        Some(v) => {
            let tokens: String = v
                .ids
                .iter()
                .enumerate()
                .map(|(i, id)| format!("<span class=\"token\"><b>{id}</b>{}</span>", v.pieces.get(i).map(|p| format!(" {}", escape(&format!("{p:?}")))).unwrap_or_default()))
                .collect();
            let tables: String = v.tables.iter().map(table_html).collect();
            format!("<p class=\"note\">{}</p><p class=\"tokens\">input ids: {tokens}</p>{tables}", escape(&v.note))
        }
    };
    let html = format!(
        "<section id=\"ops\" hidden aria-label=\"op-level view\"><h2>Op-level view</h2><p class=\"glyphs\">L lookup · N norm · P RoPE · H attention head · R router · C concat · S activation · X expert combine · + add · × scale · @ matmul</p><div class=\"values\">{values_html}</div>{body}</section>"
    );
    (html, Value::Object(ctx.ops))
}

#[cfg(test)]
mod tests {
    use crate::{catalog, families};

    fn ops(name: &str) -> serde_json::Map<String, serde_json::Value> {
        let e = catalog::get(name).unwrap();
        let spec = families::load_json(name, e.json, name, false).unwrap();
        let g = crate::graph::build(&spec).unwrap();
        let (_, data) = super::op_view(&g, None);
        data.as_object().unwrap().clone()
    }

    /// An op's code is its function as the model's own NumPy file has it (no other model's
    /// branches), after the constants that function reads and no others.
    #[test]
    fn an_op_shows_its_own_code() {
        let ops = ops("llama-3.2-1b");
        let code = |title: &str| -> String {
            ops.values()
                .find(|o| o["title"] == title)
                .unwrap_or_else(|| panic!("no op {title}"))["code"]
                .as_str()
                .unwrap()
                .to_string()
        };
        let scores = code("Attention scores");
        assert!(scores.contains("def attention("), "{scores}");
        assert!(scores.contains("\"heads\": 32"), "{scores}");
        for absent in [
            "mla_attention",
            "block_mask",
            "C[\"moa\"]",
            "\"moe\":",
            "\"vocab\":",
        ] {
            assert!(
                !scores.contains(absent),
                "Llama's attention code has {absent}"
            );
        }
        let norm = code("Attention RMSNorm");
        assert!(norm.contains("def norm("), "{norm}");
        assert!(!norm.contains("\"heads\":"), "{norm}");
    }
}
