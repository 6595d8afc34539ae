//! `anatomy html A --compare B`: one self-contained page with both block diagrams side by
//! side, the parts that differ outlined, and a panel that opens a part of both models at once,
//! step by step with each side's equation.

use super::{drawing, escape, json_for_script, parts::Part, Variant};
use crate::diff::{Diff, StepStatus};
use crate::fmt::{grouped, short};
use crate::graph::Graph;
use serde_json::{json, Value};
use std::collections::BTreeMap;

fn status_name(s: StepStatus) -> &'static str {
    match s {
        StepStatus::Same => "same",
        StepStatus::Mechanism => "mechanism",
        StepStatus::Dims => "dims",
        StepStatus::OnlyA => "only_a",
        StepStatus::OnlyB => "only_b",
    }
}

/// Each side's parts as data, and how each differs from the other side's (a class or none).
fn side(
    g: &Graph,
    ps: &[Part],
    status: &BTreeMap<usize, StepStatus>,
    other: &[Part],
) -> (Value, Vec<(String, Option<&'static str>)>) {
    let mut data = serde_json::Map::new();
    let mut marks = Vec::new();
    let visits: BTreeMap<usize, crate::graph::Visit> =
        g.steps().into_iter().map(|v| (v.step.number, v)).collect();
    for p in ps {
        let steps: Vec<Value> = p
            .steps
            .iter()
            .filter_map(|n| {
                visits.get(n).map(|v| {
                    json!({
                        "number": n,
                        "title": v.step.title,
                        "equation": v.step.equation,
                        "status": status_name(status.get(n).copied().unwrap_or(StepStatus::Same)),
                    })
                })
            })
            .collect();
        // Another mechanism, or no counterpart: outlined; other sizes only: marked lightly.
        let any = |want: &dyn Fn(StepStatus) -> bool| {
            p.steps
                .iter()
                .any(|n| status.get(n).is_some_and(|s| want(*s)))
        };
        let class = if !other.iter().any(|o| o.id == p.id)
            || any(&|s| !matches!(s, StepStatus::Same | StepStatus::Dims))
        {
            Some("differs")
        } else if any(&|s| s == StepStatus::Dims) {
            Some("resized")
        } else {
            None
        };
        marks.push((p.id.clone(), class));
        let mut part = part_head(g, p);
        part.insert("steps".into(), Value::Array(steps));
        data.insert(p.id.clone(), Value::Object(part));
    }
    (Value::Object(data), marks)
}

/// What the panel says of a part above its steps: its title, its layers, its parameters.
pub(super) fn part_head(g: &Graph, p: &Part) -> serde_json::Map<String, Value> {
    let n_layers = p.layers.as_ref().map_or(g.spec.layers, |l| l.len()) as u128;
    let params = if p.params == 0 {
        String::new()
    } else if p.in_block && n_layers > 1 && p.params.is_multiple_of(n_layers) {
        format!(
            "{} parameters per layer × {n_layers} layers = {}",
            grouped(p.params / n_layers),
            short(p.params)
        )
    } else {
        format!("{} parameters", grouped(p.params))
    };
    let mut out = serde_json::Map::new();
    out.insert("title".into(), json!(p.title));
    out.insert(
        "layers".into(),
        json!(p.layers.as_ref().map(|l| l.to_string())),
    );
    out.insert("params".into(), json!(params));
    out
}

/// The layer-variant switch of one side (an empty row where it has one variant, so both
/// diagrams start level).
fn variant_buttons(side: &str, vs: &[Variant]) -> String {
    if vs.len() < 2 {
        return "<div class=\"variants\"></div>".into();
    }
    let buttons: String = vs
        .iter()
        .enumerate()
        .map(|(i, v)| {
            format!(
                "<button type=\"button\" class=\"variant\" data-side=\"{side}\" data-variant=\"{i}\" aria-pressed=\"{}\">{}</button>",
                i == vs.len() - 1,
                escape(&v.label)
            )
        })
        .collect();
    format!("<div class=\"variants\">{buttons}</div>")
}

/// What a slot of the column is, for lining two columns up: its kind, and for norms and
/// residual adds their title with the norm's kind left out.
fn slot_key(slot: &[&Part]) -> String {
    use super::parts::Kind;
    let p = slot[0];
    match p.kind {
        Kind::Norm | Kind::Residual => p
            .title
            .replace("RMSNorm", "norm")
            .replace("LayerNorm", "norm"),
        Kind::Mlp | Kind::Moe => "ffn".into(),
        k => format!("{k:?}"),
    }
}

/// Extra space before each slot of each column so that matching slots sit level: where one
/// model has slots the other lacks, the other waits.
fn padding(a: &super::Drawing, b: &super::Drawing) -> (BTreeMap<usize, u32>, BTreeMap<usize, u32>) {
    let keys = |d: &super::Drawing| -> Vec<String> {
        let variant_of = |p: &Part| super::variants_of(&d.variants, p);
        super::svg::slots(&d.parts, &variant_of)
            .iter()
            .map(|s| slot_key(s))
            .collect()
    };
    let (ka, kb) = (keys(a), keys(b));
    let (mut pa, mut pb) = (BTreeMap::new(), BTreeMap::new());
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, &ka, &kb) {
        let (_, ra, rb) = op.as_tag_tuple();
        let (na, nb) = (ra.len() as u32, rb.len() as u32);
        if na > nb {
            *pb.entry(rb.end).or_insert(0) += (na - nb) * super::svg::SLOT_H;
        } else if nb > na {
            *pa.entry(ra.end).or_insert(0) += (nb - na) * super::svg::SLOT_H;
        }
    }
    (pa, pb)
}

pub fn page(a: &Graph, b: &Graph, d: &Diff, provenance: (&str, &str)) -> crate::Result<String> {
    let (da, db) = (drawing(a)?, drawing(b)?);
    let (ps_a, ps_b, vs_a, vs_b) = (&da.parts, &db.parts, &da.variants, &db.variants);
    let (pad_a, pad_b) = padding(&da, &db);
    let status_a: BTreeMap<usize, StepStatus> = d
        .steps
        .iter()
        .filter_map(|p| p.a.as_ref().map(|s| (s.number, p.status)))
        .collect();
    let status_b: BTreeMap<usize, StepStatus> = d
        .steps
        .iter()
        .filter_map(|p| p.b.as_ref().map(|s| (s.number, p.status)))
        .collect();
    let (data_a, marks_a) = side(a, ps_a, &status_a, ps_b);
    let (data_b, marks_b) = side(b, ps_b, &status_b, ps_a);
    // Each side shows its last layer variant (the MoE one, where there are two).
    let draw = |d: &super::Drawing,
                prefix: &str,
                pad: &BTreeMap<usize, u32>,
                marks: &[(String, Option<&'static str>)]| {
        let pad = |n: usize| pad.get(&n).copied().unwrap_or(0);
        let class = |p: &Part| {
            marks
                .iter()
                .find(|(id, _)| *id == p.id)
                .and_then(|(_, c)| *c)
        };
        d.svg(&super::svg::Placement {
            id_prefix: prefix,
            pad: Some(&pad),
            class: Some(&class),
            show: Some(d.variants.len().saturating_sub(1)),
            style: None,
            title: None,
        })
    };
    let svg_a = draw(&da, "a-", &pad_a, &marks_a);
    let svg_b = draw(&db, "b-", &pad_b, &marks_b);
    let changes: String = d
        .changes
        .iter()
        .map(|c| {
            format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&format!("{:?}", c.kind).to_lowercase()),
                escape(c.label),
                escape(c.a.as_deref().unwrap_or("-")),
                escape(c.b.as_deref().unwrap_or("-"))
            )
        })
        .collect();
    let figures: String = d
        .figures
        .iter()
        .map(|f| {
            let ratio = if f.a == 0 {
                "".into()
            } else {
                format!("{:.2}×", f.b as f64 / f.a as f64)
            };
            format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{ratio}</td></tr>",
                escape(f.name.trim()),
                short(f.a as u128),
                short(f.b as u128)
            )
        })
        .collect();
    let data =
        json!({ "a": { "name": d.a, "parts": data_a }, "b": { "name": d.b, "parts": data_b } });
    Ok(format!(
        r#"{head}<style>{page_css}
{css}{panel_css}</style></head>
<body>
<header><h1>{na} <span class="arrow">→</span> {nb}</h1>
<p class="summary">{summary}</p>
<p class="provenance">A: {pa}<br>B: {pb}</p></header>
<details class="changes" open><summary>{n_changes}</summary>
<table><thead><tr><th>kind</th><th>what</th><th>{na}</th><th>{nb}</th></tr></thead><tbody>{changes}</tbody></table></details>
<div class="columns">
<section id="side-a" aria-label="{na}"><h2>{na}</h2>{va}<div class="diagram">{svg_a}</div></section>
<section id="side-b" aria-label="{nb}"><h2>{nb}</h2>{vb}<div class="diagram">{svg_b}</div></section>
</div>
<aside id="detail" hidden aria-live="polite"></aside>
<details class="figures"><summary>Figures side by side (FLOPs at {context} tokens)</summary>
<table><thead><tr><th>figure</th><th>{na}</th><th>{nb}</th><th>B/A</th></tr></thead><tbody>{figures}</tbody></table></details>
<script id="data" type="application/json">{data}</script>
<script>{panel}
{js}</script>
</body></html>
"#,
        head = super::preamble(&escape(&format!("{} vs {} · anatomy", d.a, d.b)), ""),
        page_css = include_str!("page.css"),
        css = COMPARE_CSS,
        panel_css = PANEL_CSS,
        na = escape(&d.a),
        nb = escape(&d.b),
        summary = escape(&d.summary),
        pa = escape(provenance.0),
        pb = escape(provenance.1),
        n_changes = if d.changes.is_empty() {
            "No differences".to_string()
        } else {
            format!("{} differences", d.changes.len())
        },
        va = variant_buttons("a", vs_a),
        vb = variant_buttons("b", vs_b),
        context = grouped(d.context as u128),
        data = json_for_script(&data),
        panel = PANEL_JS,
        js = COMPARE_JS,
    ))
}

const COMPARE_CSS: &str = r#"
body { padding-bottom: 50vh; }
.columns { display: grid; grid-template-columns: 1fr 1fr; grid-template-rows: auto auto auto; grid-auto-flow: column; column-gap: 1.2rem; align-items: start; }
.columns section { display: contents; }
.columns h2 { font-size: 1.1rem; margin: .6rem 0 .3rem; }
.columns .diagram svg { max-width: 100%; height: auto; }
.summary { max-width: 70rem; }
.changes table, .figures table { border-collapse: collapse; margin: .4rem 0; font-size: .9rem; }
.changes td, .changes th, .figures td, .figures th { padding: .15rem .6rem; text-align: left; border-bottom: 1px solid var(--panel); }
.variants button[aria-pressed="true"] { font-weight: 700; }
"#;

/// The parts that differ, outlined, and the panel that opens a part of both models: shared with
/// the gallery's compare page.
pub(super) const PANEL_CSS: &str = r#"
svg .part.differs rect { stroke: var(--focus); stroke-width: 2.4; stroke-dasharray: 6 3; }
svg .part.resized rect { stroke-dasharray: 2 3; }
#detail table { border-collapse: collapse; margin: .4rem 0; font-size: .9rem; }
#detail td, #detail th { padding: .15rem .6rem; text-align: left; border-bottom: 1px solid var(--panel); }
#detail { position: fixed; left: 1rem; right: 1rem; bottom: 1rem; top: auto; max-width: none; max-height: 45vh; overflow: auto; z-index: 5; box-shadow: 0 4px 18px rgba(0,0,0,.18); }
#detail h3 { margin-top: 0; }
#detail .close { float: right; font: inherit; font-size: .85rem; cursor: pointer; }
#detail .pair { display: grid; grid-template-columns: 1fr 1fr; gap: 1.2rem; }
#detail tr.differs td { background: color-mix(in srgb, var(--focus) 18%, transparent); }
#detail .none { color: var(--muted); font-style: italic; }
/* A phone: the panel a sheet on the screen's bottom edge, the two models' steps one above the
   other, and a table's long values wrapped within the screen's width. */
@media (max-width: 640px) {
  #detail { left: 0; right: 0; bottom: 0; max-height: 70vh; border-radius: .8rem .8rem 0 0; }
  #detail .pair { grid-template-columns: 1fr; }
  table.facts, .changes table, .figures table { width: 100%; table-layout: fixed; }
  table.facts td, table.facts th, .changes td, .changes th, .figures td, .figures th { overflow-wrap: anywhere; }
}
"#;

pub(super) const PANEL_JS: &str = include_str!("compare_panel.js");

const COMPARE_JS: &str = r##"(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("data").textContent);
  var select = anatomyCompare.panel(document.getElementById("detail"), function () { return data; });
  function fromHash() { select(anatomyCompare.partInHash(data), false); }
  document.querySelectorAll(".part").forEach(function (g) {
    var id = g.getAttribute("data-part");
    if (!id || id === "block") return;
    g.addEventListener("click", function () { select(id, true); });
    g.addEventListener("keydown", function (e) {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); select(id, true); }
    });
  });
  document.querySelectorAll(".variant").forEach(function (b) {
    b.addEventListener("click", function () {
      var svg = document.querySelector("#side-" + b.dataset.side + " svg");
      for (var i = 0; i < 8; i++) svg.classList.remove("show-v" + i);
      svg.classList.add("show-v" + b.dataset.variant);
      document.querySelectorAll('.variant[data-side="' + b.dataset.side + '"]').forEach(function (o) {
        o.setAttribute("aria-pressed", String(o === b));
      });
    });
  });
  document.addEventListener("keydown", function (e) { if (e.key === "Escape") select(null, true); });
  window.addEventListener("popstate", fromHash);
  fromHash();
})();
"##;
