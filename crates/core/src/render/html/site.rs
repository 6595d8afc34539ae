//! The static gallery: an index of many models (a sortable table of their figures, each with a
//! mini diagram) linking one page per model.

use super::{escape, parts, preamble, svg::category_class};
use crate::fmt::{context, grouped, short};
use crate::graph::Graph;
use crate::stats;

pub struct Row<'a> {
    pub graph: &'a Graph,
    /// File name of the model's page, relative to the index.
    pub href: String,
    pub source: String,
}

/// A column of small bars, one per part, in its category's color; the block framed.
pub fn thumbnail(g: &Graph) -> String {
    let ps = parts(g, g.spec.context);
    let mut y = 2;
    let mut out = String::new();
    let (mut top, mut bottom) = (None, 0);
    let mut last_gated = false;
    for p in ps.iter().filter(|p| p.kind != super::Kind::Aux) {
        if p.layers.is_some() && last_gated {
            continue; // variants share a slot
        }
        last_gated = p.layers.is_some();
        if p.in_block && top.is_none() {
            top = Some(y);
            y += 3;
        }
        if !p.in_block && top.is_some() && bottom == 0 {
            bottom = y + 1;
            y += 4;
        }
        out.push_str(&format!(
            "<rect class=\"t-{}\" x=\"10\" y=\"{y}\" width=\"44\" height=\"5\" rx=\"1\"/>",
            category_class(p.category)
        ));
        y += 7;
    }
    let frame = top.map_or(String::new(), |t| {
        format!(
            "<rect class=\"t-frame\" x=\"6\" y=\"{}\" width=\"52\" height=\"{}\" rx=\"2\"/>",
            t - 1,
            bottom.max(t + 1) - t + 1
        )
    });
    format!("<svg viewBox=\"0 0 64 {}\" width=\"48\" height=\"{}\" aria-hidden=\"true\">{frame}{out}</svg>", y + 2, (y + 2) * 3 / 4)
}

pub fn index(rows: &[Row]) -> crate::Result<String> {
    let mut body = String::new();
    for r in rows {
        let g = r.graph;
        let s = stats::stats(g, None)?;
        let a = &g.spec.attn;
        let attn = if a.mla.is_some() {
            "MLA".to_string()
        } else {
            format!("{:?}", a.kind).to_uppercase()
        };
        body.push_str(&format!(
            "<tr><td>{thumb}</td><td data-sort=\"{name}\"><a href=\"{href}\">{name}</a></td><td>{family}</td><td data-sort=\"{total}\">{total_s}</td><td data-sort=\"{active}\">{active_s}</td><td data-sort=\"{layers}\">{layers}</td><td data-sort=\"{hidden}\">{hidden_s}</td><td>{attn}</td><td data-sort=\"{ctx}\">{ctx_s}</td><td data-sort=\"{vocab}\">{vocab_s}</td><td class=\"src\">{source}</td></tr>\n",
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
.t-attention {{ fill: #2f6fd6; }} .t-ffn {{ fill: #2c8a4b; }} .t-norm {{ fill: #8b3fa3; }} .t-embed {{ fill: #b7860b; }} .t-aux {{ fill: #7b8591; }}
.t-frame {{ fill: none; stroke: var(--muted); stroke-width: .8; }}
</style>
</head>
<body>
<h1>Model gallery</h1>
<p>{n} models, drawn from their config.json files. Click a column to sort; click a name for its interactive page.</p>
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
}})();
</script>
</body>
</html>
"#,
        head = preamble("anatomy · model gallery", ""),
        n = rows.len()
    ))
}
