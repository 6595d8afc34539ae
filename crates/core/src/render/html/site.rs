//! The static gallery: an index of many models (a sortable table of their figures, each with a
//! mini diagram) linking one page per model.

use super::{escape, preamble};
use crate::fmt::{context, grouped, short};
use crate::graph::Graph;
use crate::stats;

pub struct Row<'a> {
    pub graph: &'a Graph,
    /// File name of the model's page, relative to the index.
    pub href: String,
    pub source: String,
}

/// A layer's cells in a layer strip: the class of its mixer's cell (full, sliding or chunked
/// attention, latent for MLA, a recurrent mixer), of its FFN's (dense or MoE), and whether it
/// gets a no-RoPE dot.
pub(crate) fn cells(
    spec: &crate::spec::Spec,
    l: &crate::spec::LayerPlan,
) -> (&'static str, &'static str, bool) {
    use crate::spec::{AttnSpan, Ffn, Mixer};
    // The mixer's own classification: recurrent (a parallel layer's Mamba2 too), else its span.
    let attn = match (
        l.mixer.recurrent(),
        l.mixer.span_of(),
        spec.attn.mla.is_some(),
    ) {
        (true, _, _) => "t-ssm",
        (false, Some(_), true) => "t-mla",
        (false, Some(AttnSpan::Full | AttnSpan::Whole), false) => "t-full",
        (false, Some(AttnSpan::Sliding(_)), false) => "t-sliding",
        (false, Some(AttnSpan::Chunked(_)), false) => "t-chunked",
        (false, None, _) if matches!(l.mixer, Mixer::CrossAttention) => "t-cross",
        (false, None, _) => "t-none",
    };
    let ffn = match l.ffn {
        // A shortcut layer runs the experts beside its MLP.
        Ffn::Moe | Ffn::Shortcut | Ffn::DenseAndMoe => "t-moe",
        Ffn::Dense | Ffn::ChannelMix => "t-dense",
        Ffn::None => "t-none",
    };
    // Only an attention layer could rotate: a recurrent one gets no dot.
    let nope =
        l.span().is_some() && !l.rope && matches!(spec.position, crate::spec::Position::Rope(_));
    (attn, ffn, nope)
}

/// The model's real layer pattern, one column per layer: the top cell its attention (full,
/// sliding, chunked; latent for MLA), the bottom cell its FFN (dense or MoE), a dot where the
/// layer has no RoPE.
pub fn thumbnail(g: &Graph) -> String {
    let spec = &g.spec;
    let n = spec.plan.len().max(1);
    let w = 3;
    let mut out = String::new();
    for (i, l) in spec.plan.iter().enumerate() {
        let x = i * w;
        let (attn, ffn, nope) = cells(spec, l);
        out.push_str(&format!(
            "<rect class=\"{attn}\" x=\"{x}\" y=\"0\" width=\"{}\" height=\"9\"/><rect class=\"{ffn}\" x=\"{x}\" y=\"10\" width=\"{}\" height=\"9\"/>",
            w - 1,
            w - 1
        ));
        if nope {
            out.push_str(&format!(
                "<circle class=\"t-nope\" cx=\"{}\" cy=\"22\" r=\"1\"/>",
                x as f64 + (w - 1) as f64 / 2.0
            ));
        }
    }
    let summary = {
        let plan = spec.plan_summary();
        if plan.is_empty() {
            format!("{} identical layers", spec.layers)
        } else {
            plan.join("; ")
        }
    };
    format!(
        "<svg class=\"strip\" viewBox=\"0 0 {} 24\" width=\"{}\" height=\"24\" role=\"img\" aria-label=\"{}\"><title>{}</title>{out}</svg>",
        n * w,
        (n * w).clamp(48, 192),
        escape(&summary),
        escape(&summary)
    )
}

/// A size bucket for the index's filter.
fn size_bucket(params: u64) -> &'static str {
    match params {
        p if p < 1_000_000_000 => "under 1B",
        p if p < 10_000_000_000 => "1B–10B",
        p if p < 100_000_000_000 => "10B–100B",
        _ => "100B and more",
    }
}

pub fn index(rows: &[Row]) -> crate::Result<String> {
    let mut body = String::new();
    // Filter choices, each value once in first-seen order.
    let mut choices: [Vec<String>; 5] = Default::default();
    for r in rows {
        let g = r.graph;
        let s = stats::stats(g, None)?;
        let a = &g.spec.attn;
        let plan = &g.spec.plan;
        // Recurrent models have no attention to name; the mixers filter tells them and the
        // hybrids apart.
        let (attends, recurs) = (
            plan.iter().any(|l| l.span().is_some()),
            plan.iter().any(|l| l.mixer.recurrent()),
        );
        let attn = if !attends {
            "none".to_string()
        } else if a.mla.is_some() {
            "MLA".to_string()
        } else {
            format!("{:?}", a.kind).to_uppercase()
        };
        let mixers = match (attends, recurs) {
            (true, true) => "hybrid",
            (false, true) => "recurrent",
            (true, false) => "attention",
            // Neither attends nor recurs: only cross-attention or empty layers.
            (false, false) => "other",
        };
        let ffn = if g.spec.moe.is_some() { "MoE" } else { "dense" };
        let size = size_bucket(s.total_params);
        for (c, v) in choices
            .iter_mut()
            .zip([&g.spec.family, &attn, mixers, ffn, size])
        {
            if !c.iter().any(|x| x == v) {
                c.push(v.to_string());
            }
        }
        body.push_str(&format!(
            "<tr data-family=\"{family}\" data-attention=\"{attn}\" data-mixers=\"{mixers}\" data-ffn=\"{ffn}\" data-size=\"{size}\"><td>{thumb}</td><td data-sort=\"{name}\"><a href=\"{href}\">{name}</a></td><td>{family}</td><td data-sort=\"{total}\" data-label=\"params\">{total_s}</td><td data-sort=\"{active}\" data-label=\"active\">{active_s}</td><td data-sort=\"{layers}\" data-label=\"layers\">{layers}</td><td data-sort=\"{hidden}\" data-label=\"hidden\">{hidden_s}</td><td data-label=\"attention\">{attn}</td><td data-sort=\"{ctx}\" data-label=\"context\">{ctx_s}</td><td data-sort=\"{vocab}\" data-label=\"vocab\">{vocab_s}</td><td class=\"src\">{source}</td></tr>\n",
            thumb = thumbnail(g),
            name = escape(&g.spec.name),
            href = escape(&r.href),
            family = escape(&g.spec.family),
            total = s.total_params,
            total_s = short(s.total_params as u128),
            active = s.active_params,
            active_s = short(s.active_params as u128),
            layers = g.spec.layers,
            hidden = g.spec.hidden,
            hidden_s = grouped(g.spec.hidden as u128),
            attn = escape(&attn),
            ctx = g.spec.context,
            ctx_s = context(g.spec.context),
            vocab = g.spec.vocab,
            vocab_s = grouped(g.spec.vocab as u128),
            source = escape(&r.source),
        ));
    }
    Ok(format!(
        r#"{head}<style>
:root {{ --bg: #fff; --fg: #1d2127; --muted: #5c6470; --line: #c9ced5; }}
@media (prefers-color-scheme: dark) {{ :root {{ --bg: #15181c; --fg: #e6e9ed; --muted: #a3abb6; --line: #3a4048; }} }}
body {{ margin: 0; padding: 1.2rem 1.6rem; background: var(--bg); color: var(--fg); font: 15px/1.4 system-ui, sans-serif; }}
table {{ border-collapse: collapse; }} th, td {{ padding: .3rem .7rem; border-bottom: 1px solid var(--line); text-align: right; }}
th {{ cursor: pointer; user-select: none; }} th[aria-sort="ascending"]::after {{ content: " ▲"; }} th[aria-sort="descending"]::after {{ content: " ▼"; }}
td:nth-child(2), td:nth-child(3), td:nth-child(8), td.src, th:nth-child(2), th:nth-child(3) {{ text-align: left; }}
td.src {{ color: var(--muted); font-size: .85rem; }} a {{ color: inherit; font-weight: 600; }}
.t-full {{ fill: #2f6fd6; }} .t-sliding {{ fill: #9dbdf0; }} .t-chunked {{ fill: #3aa8a0; }} .t-mla {{ fill: #7a4fc4; }} .t-ssm {{ fill: #c2413b; }}
.t-dense {{ fill: #2c8a4b; }} .t-moe {{ fill: #e08a1e; }} .t-none {{ fill: none; }} .t-nope {{ fill: var(--fg); }} .t-cross {{ fill: #b8860b; }}
.legend span {{ display: inline-block; width: .8em; height: .8em; margin: 0 .25em 0 .8em; vertical-align: -.05em; }}
.filters label, .compare label {{ margin-right: 1rem; }} .filters select, .compare select {{ font: inherit; }}
tr[hidden] {{ display: none; }}
/* A phone: each model a card, the column heads a row of sort buttons. */
@media (max-width: 640px) {{
  body {{ padding: .8rem; }}
  table, thead, tbody, td {{ display: block; }}
  thead tr {{ display: flex; flex-wrap: wrap; gap: .2rem .8rem; }}
  th {{ border: 0; padding: .2rem 0; font-size: .85rem; }} th[data-type="none"] {{ display: none; }}
  tbody tr {{ display: flex; flex-wrap: wrap; align-items: baseline; gap: .15rem .8rem; padding: .6rem 0; border-bottom: 1px solid var(--line); }}
  tbody td {{ border: 0; padding: 0; text-align: left; }}
  tbody td:first-child, tbody td.src {{ flex-basis: 100%; }}
  td[data-label]::before {{ content: attr(data-label) " "; color: var(--muted); font-size: .8rem; }}
  svg.strip {{ max-width: 100%; height: auto; }}
  .filters label, .compare label {{ display: inline-block; margin: 0 .8rem .3rem 0; }}
}}
</style>
</head>
<body>
<h1>Model gallery</h1>
<p>{n} models, drawn from their config.json files. Click a column to sort; click a name for its interactive page.</p>
<p class="legend">Layer pattern, one column per layer: attention<span style="background:#2f6fd6"></span>full<span style="background:#9dbdf0"></span>sliding window<span style="background:#3aa8a0"></span>chunked<span style="background:#7a4fc4"></span>latent (MLA)<span style="background:#c2413b"></span>recurrent mixer<span style="background:#b8860b"></span>cross-attention; FFN<span style="background:#2c8a4b"></span>dense<span style="background:#e08a1e"></span>mixture of experts; a dot: no RoPE.</p>
<p class="filters">{filters} <span id="shown" aria-live="polite">{n} shown</span></p>
<p class="compare"><label>compare <select id="cmp-a">{options}</select></label> <label>with <select id="cmp-b">{options}</select></label> <a id="cmp-go" href="compare.html">compare</a></p>
<table id="models">
<thead><tr><th data-type="none">diagram</th><th data-type="text">model</th><th data-type="text">family</th><th data-type="num">params</th><th data-type="num">active</th><th data-type="num">layers</th><th data-type="num">hidden</th><th data-type="text">attention</th><th data-type="num">context</th><th data-type="num">vocab</th><th data-type="text">source</th></tr></thead>
<tbody>
{body}</tbody>
</table>
<script>
(function () {{
  var table = document.getElementById("models");
  var heads = table.querySelectorAll("th");
  Array.prototype.forEach.call(heads, function (th, col) {{
    if (th.dataset.type === "none") return;
    th.tabIndex = 0;
    function sort() {{
      var asc = th.getAttribute("aria-sort") !== "ascending";
      Array.prototype.forEach.call(heads, function (h) {{ h.removeAttribute("aria-sort"); }});
      th.setAttribute("aria-sort", asc ? "ascending" : "descending");
      var rows = Array.prototype.slice.call(table.tBodies[0].rows);
      rows.sort(function (a, b) {{
        var x = a.cells[col].dataset.sort || a.cells[col].textContent;
        var y = b.cells[col].dataset.sort || b.cells[col].textContent;
        var c = th.dataset.type === "num" ? (+x) - (+y) : x.localeCompare(y);
        return asc ? c : -c;
      }});
      rows.forEach(function (r) {{ table.tBodies[0].appendChild(r); }});
    }}
    th.addEventListener("click", sort);
    th.addEventListener("keydown", function (e) {{ if (e.key === "Enter") sort(); }});
  }});
  var selects = document.querySelectorAll(".filters select");
  function filter() {{
    var shown = 0;
    Array.prototype.forEach.call(table.tBodies[0].rows, function (r) {{
      var ok = Array.prototype.every.call(selects, function (s) {{ return !s.value || r.dataset[s.name] === s.value; }});
      r.hidden = !ok;
      if (ok) shown++;
    }});
    document.getElementById("shown").textContent = shown + " shown";
  }}
  // The filters live in the URL's hash, so that a filtered list can be shared and reloaded.
  function save() {{
    var parts = [];
    Array.prototype.forEach.call(selects, function (s) {{
      if (s.value) parts.push(s.name + "=" + encodeURIComponent(s.value));
    }});
    history.replaceState(null, "", parts.length ? '#' + parts.join('&') : location.pathname + location.search);
  }}
  function load() {{
    var given = {{}};
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {{
      var i = kv.indexOf("=");
      if (i > 0) given[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1));
    }});
    Array.prototype.forEach.call(selects, function (s) {{
      var v = given[s.name] || "";
      // Only a value the select offers: anything else leaves it at "all".
      s.value = Array.prototype.some.call(s.options, function (o) {{ return o.value === v; }}) ? v : "";
    }});
    filter();
  }}
  Array.prototype.forEach.call(selects, function (s) {{ s.addEventListener("change", function () {{ filter(); save(); }}); }});
  window.addEventListener("hashchange", load);
  load();
  var ca = document.getElementById("cmp-a"), cb = document.getElementById("cmp-b"), go = document.getElementById("cmp-go");
  if (cb.options.length > 1) cb.selectedIndex = 1;
  function link() {{ go.href = "compare.html#a=" + encodeURIComponent(ca.value) + "&b=" + encodeURIComponent(cb.value); }}
  ca.addEventListener("change", link);
  cb.addEventListener("change", link);
  link();
}})();
</script>
</body>
</html>
"#,
        head = preamble("anatomy · model gallery", ""),
        n = rows.len(),
        options = rows
            .iter()
            .map(|r| format!("<option>{}</option>", escape(&r.graph.spec.name)))
            .collect::<String>(),
        filters = ["family", "attention", "mixers", "ffn", "size"]
            .iter()
            .zip(&choices)
            .map(|(name, values)| {
                let options: String = values
                    .iter()
                    .map(|v| format!("<option value=\"{0}\">{0}</option>", escape(v)))
                    .collect();
                let label = if *name == "ffn" { "FFN" } else { name };
                format!("<label>{label} <select name=\"{name}\"><option value=\"\">all</option>{options}</select></label>")
            })
            .collect::<String>()
    ))
}

/// The gallery's compare page: any two of its models side by side, chosen on the page or by
/// the URL (`compare.html#a=NAME&b=NAME`): both block diagrams and every architecture fact that
/// differs. (`anatomy html A --compare B` adds the step-by-step comparison.)
pub fn compare(rows: &[Row]) -> crate::Result<String> {
    let mut models = Vec::new();
    let mut templates = String::new();
    for (i, r) in rows.iter().enumerate() {
        let g = r.graph;
        let d = super::drawing(g)?;
        let prefix = format!("m{i}-");
        templates.push_str(&format!(
            "<template id=\"model-{i}\">{}</template>\n",
            d.svg(&super::svg::Placement {
                id_prefix: &prefix,
                show: Some(d.variants.len().saturating_sub(1)),
                ..Default::default()
            })
        ));
        let facts: Vec<serde_json::Value> = crate::diff::facts(&g.spec)
            .into_iter()
            .map(|f| serde_json::json!({ "key": f.key, "label": f.label, "kind": f.kind, "value": f.value }))
            .collect();
        // Its steps and parts, for the page to pair with another model's as `diff` does.
        let steps: Vec<serde_json::Value> = g
            .steps()
            .iter()
            .map(|v| crate::diff::step_json(g, v))
            .collect();
        let parts: serde_json::Map<String, serde_json::Value> = d
            .parts
            .iter()
            .map(|p| {
                let mut head = super::compare::part_head(g, p);
                head.insert("steps".into(), serde_json::json!(p.steps));
                (p.id.clone(), serde_json::Value::Object(head))
            })
            .collect();
        models.push(serde_json::json!({
            "name": g.spec.name, "family": g.spec.family, "href": r.href, "facts": facts,
            "variants": d.variants.iter().map(|v| v.label.clone()).collect::<Vec<_>>(),
            "steps": steps, "parts": parts,
        }));
    }
    let data = super::json_for_script(&serde_json::Value::Array(models));
    Ok(format!(
        r##"{head}<style>{css}{panel_css}
body {{ padding-bottom: 50vh; }}
.pickers label {{ margin-right: 1rem; }} .pickers select {{ font: inherit; }}
.columns {{ display: grid; grid-template-columns: 1fr 1fr; gap: 1.2rem; align-items: start; }}
.columns svg {{ max-width: 100%; height: auto; }}
table.facts {{ border-collapse: collapse; margin: .6rem 0 1rem; }}
table.facts td, table.facts th {{ padding: .2rem .7rem; border-bottom: 1px solid var(--panel); text-align: left; }}
</style></head>
<body>
<h1>Compare two models</h1>
<p class="pickers"><label>A <select id="pick-a"></select></label><label>B <select id="pick-b"></select></label> <a href="index.html">back to the gallery</a></p>
<p id="verdict"></p>
<p class="hint">Every architecture fact that differs is listed here. In the diagrams, a part outlined differs in mechanism or has no counterpart, one dotted differs in size; click a part for both models' steps side by side, each with its equation.</p>
<table class="facts"><thead><tr><th>kind</th><th>what</th><th id="head-a">A</th><th id="head-b">B</th></tr></thead><tbody id="facts"></tbody></table>
<div class="columns"><section id="side-a"><h2 id="title-a"></h2><div class="variants" role="group" aria-label="layer variants of A"></div><div class="diagram"></div></section><section id="side-b"><h2 id="title-b"></h2><div class="variants" role="group" aria-label="layer variants of B"></div><div class="diagram"></div></section></div>
<aside id="detail" hidden aria-live="polite"></aside>
{templates}<script id="data" type="application/json">{data}</script>
<script>{panel}</script>
<script>
(function () {{
  "use strict";
  var models = JSON.parse(document.getElementById("data").textContent);
  var pick = {{ a: document.getElementById("pick-a"), b: document.getElementById("pick-b") }};
  ["a", "b"].forEach(function (s) {{
    models.forEach(function (m, i) {{
      var o = document.createElement("option");
      o.value = String(i);
      o.textContent = m.name;
      pick[s].appendChild(o);
    }});
    pick[s].addEventListener("change", function () {{ go(+pick.a.value, +pick.b.value); }});
  }});
  function index(name, fallback) {{
    for (var i = 0; i < models.length; i++) if (models[i].name === name) return i;
    return fallback;
  }}
  function cell(tr, text) {{ var td = document.createElement("td"); td.textContent = text; tr.appendChild(td); }}
  function show(side, i) {{
    var m = models[i];
    var h = document.getElementById("title-" + side);
    h.textContent = "";
    var a = document.createElement("a");
    a.href = m.href;
    a.textContent = m.name + " (" + m.family + ")";
    h.appendChild(a);
    document.getElementById("head-" + side).textContent = m.name;
    var box = document.querySelector("#side-" + side + " .diagram");
    box.textContent = "";
    box.appendChild(document.getElementById("model-" + i).content.cloneNode(true));
    pick[side].value = String(i);
    // Its layer variants, as `html --compare` offers them: the last one shown first.
    var row = document.querySelector("#side-" + side + " .variants");
    row.textContent = "";
    if (m.variants.length < 2) return;
    var svg = box.querySelector("svg");
    m.variants.forEach(function (label, v) {{
      var b = document.createElement("button");
      b.type = "button";
      b.className = "variant";
      b.textContent = label;
      b.setAttribute("aria-pressed", String(v === m.variants.length - 1));
      b.addEventListener("click", function () {{
        for (var k = 0; k < 8; k++) svg.classList.remove("show-v" + k);
        svg.classList.add("show-v" + v);
        Array.prototype.forEach.call(row.children, function (o) {{ o.setAttribute("aria-pressed", String(o === b)); }});
      }});
      row.appendChild(b);
    }});
  }}
  // The two models shown, as the panel reads them: each part's steps with how they differ.
  var shown = null;
  var select = anatomyCompare.panel(document.getElementById("detail"), function () {{ return shown; }});
  function side(name, m, status, other) {{
    var byNumber = {{}};
    m.steps.forEach(function (s) {{ byNumber[s[4]] = s; }});
    var parts = {{}};
    Object.keys(m.parts).forEach(function (id) {{
      var p = m.parts[id];
      var steps = p.steps.map(function (n) {{
        var s = byNumber[n];
        return {{ number: n, title: s[5], equation: s[2], status: status[n] || "same" }};
      }});
      parts[id] = {{ title: p.title, layers: p.layers, params: p.params, steps: steps }};
      // Another mechanism, or no counterpart: outlined; other sizes only: marked lightly (as
      // compare.rs's `side` marks them for `html --compare`; a browser test holds both alike).
      var g = document.querySelector("#side-" + name + ' .part[data-part="' + CSS.escape(id) + '"]');
      if (!g) return;
      var kinds = steps.map(function (s) {{ return s.status; }});
      if (!other.parts[id] || kinds.some(function (k) {{ return k !== "same" && k !== "dims"; }})) g.classList.add("differs");
      else if (kinds.indexOf("dims") >= 0) g.classList.add("resized");
      g.addEventListener("click", function () {{ select(id, true); }});
      g.addEventListener("keydown", function (e) {{
        if (e.key === "Enter" || e.key === " ") {{ e.preventDefault(); select(id, true); }}
      }});
    }});
    return {{ name: m.name, parts: parts }};
  }}
  function go(a, b) {{
    show("a", a);
    show("b", b);
    var pairs = anatomyCompare.pair(models[a].steps, models[b].steps);
    shown = {{ a: side("a", models[a], pairs.a, models[b]), b: side("b", models[b], pairs.b, models[a]) }};
    var fa = models[a].facts, fb = models[b].facts, body = document.getElementById("facts");
    body.textContent = "";
    var keys = [], byKey = {{}};
    fa.concat(fb).forEach(function (f) {{ if (!byKey[f.key]) {{ byKey[f.key] = f; keys.push(f.key); }} }});
    var value = function (list, k) {{ for (var i = 0; i < list.length; i++) if (list[i].key === k) return list[i].value; return "-"; }};
    var mechanisms = 0, rows = 0;
    keys.forEach(function (k) {{
      var x = value(fa, k), y = value(fb, k);
      if (x === y) return;
      rows++;
      if (byKey[k].kind === "mechanism") mechanisms++;
      var tr = document.createElement("tr");
      cell(tr, byKey[k].kind); cell(tr, byKey[k].label); cell(tr, x); cell(tr, y);
      body.appendChild(tr);
    }});
    document.getElementById("verdict").textContent = rows === 0
      ? "The same architecture with the same sizes and settings."
      : (mechanisms === 0 ? "The same architecture; " + rows + " sizes or settings differ."
        : mechanisms + " mechanisms and " + (rows - mechanisms) + " sizes or settings differ.");
    select(anatomyCompare.partInHash(shown), false);
  }}
  function fromHash() {{
    var get = function (k) {{ var m = new RegExp("(?:^#|&)" + k + "=([^&]*)").exec(location.hash); return m ? decodeURIComponent(m[1]) : null; }};
    go(index(get("a"), 0), index(get("b"), Math.min(1, models.length - 1)));
  }}
  window.addEventListener("hashchange", fromHash);
  window.addEventListener("popstate", fromHash);
  document.addEventListener("keydown", function (e) {{ if (e.key === "Escape" && shown) select(null, true); }});
  fromHash();
}})();
</script>
</body>
</html>
"##,
        head = preamble("anatomy · compare two models", ""),
        css = include_str!("page.css"),
        panel_css = super::compare::PANEL_CSS,
        panel = super::compare::PANEL_JS,
    ))
}
