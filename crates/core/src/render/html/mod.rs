//! The web explorer (seed 001): one self-contained HTML page per model, with the block diagram
//! laid out here in Rust, and a little plain JavaScript for hover, click, keyboard and URL state.
//!
//! Nothing is fetched: styles, script and data are inlined. Every string that came from an input
//! is escaped, in the markup (`escape`) and in the embedded JSON (`json_for_script`).

pub mod ops;
mod parts;
pub mod site;
mod svg;
mod text;
pub mod torch;

pub use parts::{parts, Kind, Part};

use crate::fmt::{context as ctx, flops, grouped, short};
use crate::graph::{Graph, TensorKind};
use crate::layers::LayerSet;
use crate::stats::{self, Stats};
use serde_json::{json, Value};

/// Marks files anatomy wrote, so it never overwrites anything else without `--force`.
pub const GENERATOR: &str = "<meta name=\"generator\" content=\"anatomy\">";

/// The start of every page anatomy writes, up to its styles: offline by policy (no source
/// but the page itself; `csp_extra` widens it), with the generator mark `output` recognizes.
/// `title` is HTML, escaped by the caller.
fn preamble(title: &str, csp_extra: &str) -> String {
    format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
{GENERATOR}
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'{csp_extra}">
<title>{title}</title>
"#
    )
}

const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");

/// Escape text for HTML and SVG content and attributes.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// JSON safe inside a `<script>` element: no `<`, `>` or `&` can close it or start a comment.
pub fn json_for_script(v: &Value) -> String {
    v.to_string()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// A group of layers that share one structure (attention span, RoPE, FFN kind).
pub struct Variant {
    pub label: String,
    pub layers: LayerSet,
    /// A layer of the group, to test which gated parts it has.
    pub representative: u64,
}

pub fn variants(g: &Graph) -> Vec<Variant> {
    let spec = &g.spec;
    let mut seen: Vec<(crate::spec::LayerPlan, LayerSet)> = Vec::new();
    for (b, plan) in spec.plan.iter().enumerate() {
        match seen.iter_mut().find(|(p, _)| p == plan) {
            Some((_, set)) => *set = set.union(&LayerSet::range(b as u64, b as u64 + 1)),
            None => seen.push((plan.clone(), LayerSet::range(b as u64, b as u64 + 1))),
        }
    }
    seen.into_iter()
        .map(|(plan, layers)| {
            let ffn = if plan.moe { "MoE FFN" } else { "dense FFN" };
            let mut label = format!("layers {layers}: {}, {ffn}", plan.attn.describe());
            if !plan.rope {
                label += ", no RoPE";
            }
            Variant {
                representative: layers.first().unwrap_or(0),
                label,
                layers,
            }
        })
        .collect()
}

pub struct PageInput<'a> {
    pub graph: &'a Graph,
    /// Where the model came from, as shown in the header.
    pub provenance: &'a str,
    /// Context length for KV cache and FLOPs.
    pub context: Option<u64>,
    /// Values from a run, for the op view.
    pub values: Option<&'a ops::Values>,
}

pub fn page(input: &PageInput) -> String {
    let g = input.graph;
    let spec = &g.spec;
    let s = stats::stats(g, input.context);
    let total = s.total_params as u128;
    let ps = parts(g, s.kv_cache.context);
    let vs = variants(g);
    let variant_of = |p: &Part| -> Vec<usize> {
        match &p.layers {
            None => (0..vs.len()).collect(),
            Some(l) => vs
                .iter()
                .enumerate()
                .filter(|(_, v)| l.contains(v.representative))
                .map(|(i, _)| i)
                .collect(),
        }
    };
    let texts: Vec<text::Text> = ps.iter().map(|p| text::text(g, p, total)).collect();
    let summary_of = |p: &Part| {
        ps.iter()
            .position(|q| q.id == p.id)
            .map(|i| texts[i].summary.clone())
            .unwrap_or_default()
    };
    let diagram = svg::diagram(&ps, spec.layers, &variant_of, &summary_of);

    let mut data_parts = serde_json::Map::new();
    for (p, t) in ps.iter().zip(&texts) {
        data_parts.insert(p.id.clone(), part_json(g, &s, p, t, &variant_of(p)));
    }
    data_parts.insert("block".into(), block_json(g));
    let (op_html, op_data) = ops::op_view(g, input.values);
    let data = json!({
        "model": spec.name,
        "parts": data_parts,
        "ops": op_data,
        "variants": vs.iter().map(|v| json!({"label": v.label, "layers": v.layers.to_string()})).collect::<Vec<_>>(),
    });

    let mut chips = vec![format!("params {}", short(total))];
    if s.active_params != s.total_params {
        chips.push(format!("active {}", short(s.active_params as u128)));
    }
    chips.push(format!("layers {}", spec.layers));
    chips.push(format!("ctx {}", ctx(spec.context)));
    chips.push(format!("vocab {}", grouped(spec.vocab as u128)));
    if s.aux_params > 0 {
        chips.push(format!("+ MTP {}", short(s.aux_params as u128)));
    }
    let chips: String = chips
        .iter()
        .map(|c| format!("<span class=\"chip\">{}</span>", escape(c)))
        .collect();
    let highlights = text::highlights(spec, s.total_params, s.active_params).join(" · ");
    let not_drawn = if spec.not_drawn.is_empty() {
        String::new()
    } else {
        format!(
            "<p class=\"note\">Not drawn or counted: {}.</p>",
            escape(
                &spec
                    .not_drawn
                    .iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        )
    };
    // Keys ignored under --lenient: the page says what it was not built from.
    let ignored = if spec.ignored.is_empty() {
        String::new()
    } else {
        let items: String = spec
            .ignored
            .iter()
            .map(|i| format!("<li>{}</li>", escape(&i.to_string())))
            .collect();
        format!("<div class=\"warning\" role=\"note\"><p>This page was made with --lenient: anatomy did not understand these config keys and drew the model without them, so its numbers may be wrong.</p><ul>{items}</ul></div>")
    };
    let tabs = if vs.len() > 1 {
        let buttons: String = vs
            .iter()
            .enumerate()
            .map(|(i, v)| format!("<button type=\"button\" class=\"variant\" data-variant=\"{i}\" aria-pressed=\"{}\">{}</button>", i == 0, escape(&v.label)))
            .collect();
        format!(
            "<div class=\"variants\" role=\"group\" aria-label=\"layer variants\">{buttons}</div>"
        )
    } else {
        String::new()
    };
    format!(
        r#"{head}<style>{CSS}</style>
</head>
<body>
<header>
<h1>{title}</h1>
<p class="character">{character}</p>
<p class="chips">{chips}</p>
<p class="provenance">source: {provenance}</p>
<p class="highlights">highlights: {highlights}</p>
{not_drawn}
{ignored}
</header>
<ul class="legend" aria-label="legend">
<li><span class="swatch cat-attention"></span>attention</li><li><span class="swatch cat-ffn"></span>FFN / MoE</li><li><span class="swatch cat-norm"></span>norm / residual</li><li><span class="swatch cat-embed"></span>embedding / head</li><li><span class="swatch cat-aux"></span>auxiliary</li>
<li><span class="line solid"></span>data flow</li><li><span class="line dashed"></span>residual</li><li><span class="line dotted"></span>auxiliary</li>
</ul>
<details class="reading"><summary>Reading this diagram</summary><p>Data flows top to bottom. Solid edges carry activations (shapes on the labels), dashed grey edges are residual paths, dotted edges attach auxiliary modules. The layer stack draws one representative layer with its ×{layers} badge; where layers differ, the buttons above the diagram switch between them. Hover a box for a summary, click it (or press Enter) for details, numbers and a PyTorch reference; the URL keeps the selection.</p></details>
<div class="views" role="group" aria-label="view"><button type="button" id="to-blocks" aria-pressed="true">block view</button><button type="button" id="to-ops" aria-pressed="false">op-level view</button></div>
{tabs}
<main>
<div class="diagram" id="diagram">{diagram}</div>
{op_html}
<aside id="detail" hidden aria-live="polite"></aside>
</main>
<div id="tooltip" role="tooltip" hidden></div>
<script type="application/json" id="data">{data}</script>
<script>{JS}</script>
</body>
</html>
"#,
        head = preamble(
            &format!("{} · anatomy", escape(&spec.name)),
            "; img-src data:"
        ),
        title = escape(&spec.name),
        character = escape(&text::character(spec)),
        provenance = escape(input.provenance),
        highlights = escape(&highlights),
        layers = spec.layers,
        data = json_for_script(&data),
    )
}

fn part_json(g: &Graph, s: &Stats, p: &Part, t: &text::Text, variants: &[usize]) -> Value {
    let total = s.total_params as u128;
    let mut numbers = Vec::new();
    if p.params > 0 {
        numbers.push(format!(
            "{} parameters ({:.2}% of {})",
            grouped(p.params),
            p.params as f64 * 100.0 / total.max(1) as f64,
            short(total)
        ));
    }
    if p.shared_params > 0 {
        numbers.push(format!(
            "reuses {} parameters counted above (tied)",
            grouped(p.shared_params)
        ));
    }
    if p.cost.kv_per_token > 0 {
        numbers.push(format!(
            "KV cache: {} bytes per token in bf16; {} GiB at {} tokens",
            grouped(p.cost.kv_per_token * 2),
            format_args!(
                "{:.2}",
                (p.cost.kv_at_context * 2) as f64 / (1u64 << 30) as f64
            ),
            grouped(s.kv_cache.context as u128)
        ));
    }
    if p.cost.matmul > 0 {
        numbers.push(format!(
            "matmuls: {} per token",
            flops(p.cost.matmul as f64)
        ));
    }
    if p.cost.decode_attn > 0 {
        numbers.push(format!(
            "attention: {} per decoded token at {} tokens of context",
            flops(p.cost.decode_attn as f64),
            grouped(s.kv_cache.context as u128)
        ));
    }
    let steps: Vec<Value> = g
        .steps()
        .iter()
        .filter(|v| p.steps.contains(&v.step.number))
        .map(|v| {
            let sources: Vec<String> = v
                .step
                .inputs
                .iter()
                .filter_map(|&i| match &g.tensor(i).kind {
                    TensorKind::Weight { param, slice, .. } => Some(format!(
                        "{}{}",
                        g.params[*param].hf,
                        slice.as_deref().unwrap_or("")
                    )),
                    _ => None,
                })
                .collect();
            json!({
                "n": v.step.number,
                "title": v.step.title,
                "operation": v.step.operation,
                "equation": v.step.equation,
                "sources": sources,
            })
        })
        .collect();
    json!({
        "title": p.title,
        "category": svg::category_class(p.category),
        "summary": t.summary,
        "explanation": t.explanation,
        "subtleties": t.subtleties,
        "numbers": numbers,
        "layers": p.layers.as_ref().map(|l| l.to_string()),
        "variants": variants,
        "code": torch::snippet(&g.spec, p),
        "steps": steps,
    })
}

/// The repeated block itself, opened from its frame.
fn block_json(g: &Graph) -> Value {
    let spec = &g.spec;
    let plan = spec.plan_summary();
    json!({
        "title": "Decoder layer",
        "category": "norm",
        "summary": format!("The repeating unit, {} times: attention then FFN, each added to the residual stream.", spec.layers),
        "explanation": "Each layer computes two deltas and adds them to the residual stream: attention lets positions exchange information, the FFN transforms each position on its own.",
        "subtleties": if plan.is_empty() { vec!["Every layer has the same structure.".to_string()] } else { plan },
        "numbers": [],
        "layers": Value::Null,
        "variants": [],
        "code": format!("{}\n", torch::module(spec)),
        "steps": [],
    })
}
