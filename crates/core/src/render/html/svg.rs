//! The block diagram as SVG, laid out top to bottom: boxes in one column, solid edges labelled
//! with shapes, dashed residual paths on the right, a frame around the repeated block with its ×N
//! badge, and a dotted edge to auxiliary modules and to a wrapper's towers (a box each beside the
//! embedding, with their parameter count). Parts of different layer variants share a slot.

use super::escape;
use super::parts::{Kind, Part};
use crate::fmt::short;
use crate::graph::Category;

const W: u32 = 560;
const BOX_X: u32 = 120;
const BOX_W: u32 = 260;
const BOX_H: u32 = 46;
const GAP: u32 = 30;
const RESID_X: u32 = BOX_X + BOX_W + 48;
/// A tower's box, beside the block frame.
const TOWER_W: u32 = 150;

pub fn category_class(c: Category) -> &'static str {
    match c {
        Category::Attention => "attention",
        Category::Mixer => "mixer",
        Category::Ffn => "ffn",
        Category::Norm => "norm",
        Category::Embed => "embed",
        Category::Aux => "aux",
    }
}

/// The height one slot of the column takes.
pub const SLOT_H: u32 = BOX_H + GAP;
/// A box's bold title and its small line: font size and a generous average glyph width, in px.
const TITLE_CHAR: (f64, f64) = (15.0, 9.0);
const SUB_CHAR: (f64, f64) = (11.0, 6.4);

/// A smaller font for a line of a box that could run past it at its size's average glyph
/// width: scaled so that the line fits the box's inner width rather than spilling.
fn fit(text: &str, font: (f64, f64)) -> String {
    fit_in(text, font, BOX_W)
}

/// `fit` in a box `width` wide.
fn fit_in(text: &str, (size, per_char): (f64, f64), width: u32) -> String {
    let (inner, wide) = ((width - 16) as f64, text.chars().count() as f64 * per_char);
    if wide > inner {
        format!(" style=\"font-size:{:.1}px\"", size * inner / wide)
    } else {
        String::new()
    }
}

/// The column's slots in drawing order. A run of gated parts (layer variants) is laid out row by
/// row for each variant at once: a part takes the first row below its variants' earlier parts,
/// so each variant reads top to bottom and no two parts one variant shows share a row.
/// Auxiliary parts, drawn beside the column, are in none.
pub fn slots<'a>(
    parts: &'a [Part],
    variant_of: &dyn Fn(&Part) -> Vec<usize>,
) -> Vec<Vec<&'a Part>> {
    let mut out: Vec<Vec<&Part>> = Vec::new();
    let mut i = 0;
    while i < parts.len() {
        if parts[i].kind == Kind::Aux {
            i += 1;
            continue;
        }
        if parts[i].layers.is_none() {
            out.push(vec![&parts[i]]);
            i += 1;
            continue;
        }
        let start = out.len();
        let mut next: std::collections::BTreeMap<usize, usize> = Default::default();
        while i < parts.len() && parts[i].layers.is_some() && parts[i].kind != Kind::Aux {
            let vs = variant_of(&parts[i]);
            // A part no variant shows still gets a row of its own.
            let row = if vs.is_empty() {
                out.len() - start
            } else {
                vs.iter()
                    .map(|v| next.get(v).copied().unwrap_or(0))
                    .max()
                    .unwrap_or(0)
            };
            next.extend(vs.iter().map(|&v| (v, row + 1)));
            if start + row == out.len() {
                out.push(Vec::new());
            }
            out[start + row].push(&parts[i]);
            i += 1;
        }
    }
    out
}

/// One more class for a part, or none.
pub type PartClass<'a> = &'a dyn Fn(&Part) -> Option<&'static str>;

/// How a drawing differs from the page's own one, when it is placed elsewhere: beside another
/// model's (`html --compare`, the gallery's compare page) or alone (`export --format svg`).
#[derive(Default)]
pub struct Placement<'a> {
    /// Prefix of every element id, so two drawings fit one document (`a-` gives `a-part-…`).
    pub id_prefix: &'a str,
    /// Extra space before a slot of the column, to keep two columns level.
    pub pad: Option<&'a dyn Fn(usize) -> u32>,
    /// One more class for a part's group (`differs`).
    pub class: Option<PartClass<'a>>,
    /// The layer variant shown without the page's script (`show-vN` on the root).
    pub show: Option<usize>,
    /// A stylesheet inside the drawing, for a standalone document.
    pub style: Option<&'a str>,
    /// The drawing's title (the model's name), for a standalone document.
    pub title: Option<&'a str>,
}

/// `variant_of(part)`: the variants (by index) a gated part belongs to; `towers`: a wrapper's
/// parts beside its language model, drawn as one box; `span_notes`: each variant's attention
/// span where they differ, said on the attention box every variant shares.
pub fn diagram(
    parts: &[Part],
    layers: u64,
    towers: &[crate::spec::Tower],
    variant_of: &dyn Fn(&Part) -> Vec<usize>,
    summary: &dyn Fn(&Part) -> String,
    span_notes: &[String],
    place: &Placement,
) -> String {
    let pre = place.id_prefix;
    let pad = |n: usize| place.pad.map_or(0, |f| f(n));
    let mut body = String::new();
    let mut y = 20;
    let arrow = |body: &mut String, y0: u32, y1: u32, label: &str| {
        let x = BOX_X + BOX_W / 2;
        body.push_str(&format!(
            "<line class=\"edge\" x1=\"{x}\" y1=\"{y0}\" x2=\"{x}\" y2=\"{}\" marker-end=\"url(#{pre}arrow)\"/><text class=\"shape\" x=\"{}\" y=\"{}\">{}</text>",
            y1 - 2,
            x + 8,
            (y0 + y1) / 2 + 4,
            escape(label)
        ));
    };
    body.push_str(&format!(
        "<text class=\"io\" x=\"{}\" y=\"{}\" text-anchor=\"end\">input ids [B, T]</text>",
        BOX_X + BOX_W / 2 - 8,
        y + 12
    ));
    y += 20;
    let mut block_top = None;
    let mut block_bottom = 0;
    // Where the residual stream last left the column, in each variant.
    let n_variants = parts.iter().flat_map(variant_of).max().map_or(1, |v| v + 1);
    let mut stream_y = vec![0; n_variants];
    let mut last_dim: Option<u64> = None;
    let mut over_patches = false;
    let mut aux_anchor = 0;
    let mut embed_anchor = 0;
    for (n, slot) in slots(parts, variant_of).into_iter().enumerate() {
        let p = slot[0];
        // Padding lengthens the arrow into the slot; a frame opening or closing starts its own.
        let extra = pad(n);
        y += extra;
        let framed = (p.in_block && block_top.is_none())
            || (!p.in_block && block_top.is_some() && block_bottom == 0);
        if p.in_block && block_top.is_none() {
            y += 14;
            block_top = Some(y);
            // The frame's title and ×N badge open the block itself; in reading order they come
            // after the embedding.
            body.push_str(&format!(
                "<g class=\"part frame\" id=\"{pre}part-block\" data-part=\"block\" tabindex=\"0\" role=\"button\" aria-label=\"decoder layer ×{layers}, repeated {layers} times\"><rect class=\"hit\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"30\"/><text class=\"block-title\" x=\"{}\" y=\"{}\">decoder layer</text><g class=\"badge\"><rect x=\"{}\" y=\"{}\" width=\"62\" height=\"22\" rx=\"11\"/><text x=\"{}\" y=\"{}\" text-anchor=\"middle\">×{layers}</text></g></g>",
                BOX_X - 30,
                y,
                BOX_W + 130,
                BOX_X - 18,
                y + 22,
                BOX_X + BOX_W + 38,
                y + 6,
                BOX_X + BOX_W + 69,
                y + 21,
            ));
            y += 34;
            stream_y.fill(y - 8);
        }
        if !p.in_block && block_top.is_some() && block_bottom == 0 {
            y += 10;
            block_bottom = y;
            y += 24;
        }
        // BLT's latent transformer runs over patches, P of them, from the encoder's output on.
        let seq = if over_patches { "P" } else { "T" };
        let label = last_dim.map_or(String::new(), |d| format!("[B, {seq}, {d}]"));
        let from = y - GAP + 4 - if framed { 0 } else { extra };
        arrow(&mut body, from, y, &label);
        if p.kind == Kind::Norm && p.id == "final-norm" {
            aux_anchor = y + BOX_H / 2;
        }
        if p.kind == Kind::Embedding && embed_anchor == 0 {
            embed_anchor = y + BOX_H / 2;
        }
        for part in &slot {
            let variants = variant_of(part);
            let vclass = if part.layers.is_some() {
                variants
                    .iter()
                    .map(|v| format!(" v{v}"))
                    .collect::<String>()
            } else {
                String::new()
            };
            let gated = if part.layers.is_some() { " gated" } else { "" };
            let extra = place
                .class
                .and_then(|f| f(part))
                .map_or(String::new(), |c| format!(" {c}"));
            // Inside the frame a box is one layer: its figure per layer, the total beside.
            let n_layers = part.layers.as_ref().map_or(layers, |l| l.len()) as u128;
            let sub = match (part.params, part.shared_params) {
                (0, 0) => String::new(),
                (0, s) => format!("shares {}", short(s)),
                (n, _) if part.in_block && n_layers > 1 && n.is_multiple_of(n_layers) => {
                    format!("{} params · {} in all", short(n / n_layers), short(n))
                }
                (n, _) => format!("{} params", short(n)),
            };
            // How many layers, not which: a list can run past the box (the strip above the
            // diagram and the variant buttons say which).
            let layers_note = part
                .layers
                .as_ref()
                .map(|l| match l.len() {
                    1 => format!(" · layer {l}"),
                    n => format!(" · {n} layers"),
                })
                .unwrap_or_default();
            // One attention box for layers that differ in span or positions: each variant's,
            // shown with it.
            let mut notes: Vec<(usize, &String)> = Vec::new();
            if part.category == Category::Attention {
                notes = variants
                    .iter()
                    .filter_map(|&v| span_notes.get(v).map(|n| (v, n)))
                    .collect();
                if notes.windows(2).all(|w| w[0].1 == w[1].1) {
                    notes.clear();
                }
                notes.retain(|(_, n)| !n.is_empty());
            }
            let longest = notes
                .iter()
                .map(|(_, n)| n.chars().count() + 3)
                .max()
                .unwrap_or(0);
            let span_note: String = notes
                .iter()
                .map(|(i, n)| format!("<tspan class=\"gated v{i}\"> · {}</tspan>", escape(n)))
                .collect();
            body.push_str(&format!(
                "<g class=\"part cat-{cat}{gated}{vclass}{extra}\" id=\"{pre}part-{id}\" data-part=\"{id}\" tabindex=\"0\" role=\"button\"><desc>{desc}</desc><rect x=\"{BOX_X}\" y=\"{y}\" width=\"{BOX_W}\" height=\"{BOX_H}\" rx=\"7\"/><text class=\"title\" x=\"{tx}\" y=\"{ty}\" text-anchor=\"middle\"{title_fit}>{title}</text><text class=\"sub\" x=\"{tx}\" y=\"{sy}\" text-anchor=\"middle\"{sub_fit}>{sub}{layers_note}{span_note}</text></g>",
                cat = category_class(part.category),
                id = escape(&part.id),
                // Its name is what it shows (the variant's own span note among it), the
                // summary its description.
                desc = escape(&summary(part)),
                tx = BOX_X + BOX_W / 2,
                ty = y + 20,
                sy = y + 36,
                title_fit = fit(&part.title, TITLE_CHAR),
                sub_fit = fit(&format!("{sub}{layers_note}{}", "x".repeat(longest)), SUB_CHAR),
                title = escape(&part.title),
                sub = escape(&sub),
                layers_note = escape(&layers_note),
            ));
        }
        // The stream skips the sublayer and rejoins here: for each variant from where it last
        // left the column, drawn with the variant's parts.
        for part in slot
            .iter()
            .filter(|q| matches!(q.kind, Kind::Residual | Kind::CrossGate))
        {
            let vs: Vec<usize> = match part.layers {
                None => (0..stream_y.len()).collect(),
                Some(_) => variant_of(part),
            };
            let ym = y + BOX_H / 2;
            let mut from: Vec<u32> = vs.iter().map(|&v| stream_y[v]).collect();
            from.dedup();
            for start in from {
                let class = match part.layers {
                    None => String::new(),
                    Some(_) => {
                        let with: String = vs
                            .iter()
                            .filter(|&&v| stream_y[v] == start)
                            .map(|v| format!(" v{v}"))
                            .collect();
                        format!(" gated{with}")
                    }
                };
                body.push_str(&format!(
                    "<path class=\"residual{class}\" d=\"M{} {start} H{RESID_X} V{ym} H{}\" marker-end=\"url(#{pre}arrow-res)\"/>",
                    BOX_X + BOX_W / 2 + 90,
                    BOX_X + BOX_W + 2
                ));
            }
            for v in vs {
                stream_y[v] = y + BOX_H + 6;
            }
        }
        last_dim = Some(p.out_dim);
        over_patches = match p.kind {
            Kind::Stack(s) => s == crate::spec::Stack::Encoder,
            _ => over_patches && (p.kind == Kind::Embedding || p.in_block),
        };
        y += BOX_H + GAP;
    }
    let out_label = format!("logits [B, T, {}]", last_dim.unwrap_or(0));
    arrow(&mut body, y - GAP + 4, y, "");
    body.push_str(&format!(
        "<text class=\"io\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
        BOX_X + BOX_W / 2,
        y + 14,
        escape(&out_label)
    ));
    y += 30;
    let mut frame = String::new();
    if let Some(top) = block_top {
        let bottom = if block_bottom == 0 { y } else { block_bottom };
        frame = format!(
            "<rect class=\"block\" x=\"{}\" y=\"{top}\" width=\"{}\" height=\"{}\" rx=\"10\"/>",
            BOX_X - 30,
            BOX_W + 60 + 70,
            bottom - top,
        );
    }
    if let Some(aux) = parts.iter().find(|p| p.kind == Kind::Aux) {
        let ay = aux_anchor.max(60) - BOX_H / 2;
        let ax = RESID_X + 24;
        body.push_str(&format!(
            "<path class=\"auxedge\" d=\"M{} {} H{ax}\"/><g class=\"part cat-aux{extra}\" id=\"{pre}part-{id}\" data-part=\"{id}\" tabindex=\"0\" role=\"button\"><desc>{desc}</desc><rect x=\"{ax}\" y=\"{ay}\" width=\"120\" height=\"{BOX_H}\" rx=\"7\"/><text class=\"title\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">MTP module</text><text class=\"sub\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{} params</text></g>",
            BOX_X + BOX_W,
            ay + BOX_H / 2,
            ax + 60,
            ay + 20,
            ax + 60,
            ay + 36,
            escape(&short(aux.params)),
            id = escape(&aux.id),
            desc = escape(&summary(aux)),
            extra = place
                .class
                .and_then(|f| f(aux))
                .map_or(String::new(), |c| format!(" {c}")),
        ));
    }
    if !towers.is_empty() {
        // A column beside the block frame, from the token embedding's height down, each tower a
        // box that opens its steps; a bus along their left edges joins them to the embedding,
        // where their output enters the token stream.
        let (ax, aw) = (BOX_X + BOX_W + 120, TOWER_W);
        let top = embed_anchor.max(60) - BOX_H / 2;
        let bus = ax - 14;
        let last_mid = top + BOX_H / 2 + (towers.len() as u32 - 1) * (BOX_H + 12);
        body.push_str(&format!(
            "<path class=\"auxedge join\" d=\"M{bus} {last_mid} V{} H{}\" marker-end=\"url(#{pre}arrow)\"/>",
            top + BOX_H / 2,
            BOX_X + BOX_W + 2,
        ));
        for (k, t) in towers.iter().enumerate() {
            let ay = top + k as u32 * (BOX_H + 12);
            let sub = match t.params() {
                Some(n) => format!("{} params", short(n as u128)),
                None => "not counted".to_string(),
            };
            body.push_str(&format!(
                "<path class=\"auxedge\" d=\"M{bus} {mid} H{ax}\"/><g class=\"part cat-tower\" id=\"{pre}part-tower-{k}\" data-part=\"tower-{k}\" tabindex=\"0\" role=\"button\"><desc>{desc}</desc><rect x=\"{ax}\" y=\"{ay}\" width=\"{aw}\" height=\"{BOX_H}\" rx=\"7\"/><text class=\"title\" x=\"{cx}\" y=\"{}\" text-anchor=\"middle\"{title_fit}>{title}</text><text class=\"sub\" x=\"{cx}\" y=\"{}\" text-anchor=\"middle\">{sub}</text></g>",
                ay + 20,
                ay + 36,
                mid = ay + BOX_H / 2,
                cx = ax + aw / 2,
                desc = escape(&t.to_string()),
                title_fit = fit_in(&t.what, TITLE_CHAR, aw),
                title = escape(&t.what),
                sub = escape(&sub),
            ));
        }
    }
    let width = if !towers.is_empty() {
        BOX_X + BOX_W + 120 + TOWER_W + 10
    } else if parts.iter().any(|p| p.kind == Kind::Aux) {
        W + 100
    } else {
        W
    };
    let show = place
        .show
        .map_or(String::new(), |v| format!(" class=\"show-v{v}\""));
    let style = place
        .style
        .map_or(String::new(), |css| format!("<style>{css}</style>"));
    let style = match place.title {
        Some(t) => format!("<title>{}</title>{style}", super::escape(t)),
        None => style,
    };
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width} {y}\" width=\"{width}\" height=\"{y}\" role=\"group\" aria-label=\"architecture diagram\"{show}>{style}<defs><marker id=\"{pre}arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0 0 L10 5 L0 10 z\" class=\"arrowhead\"/></marker><marker id=\"{pre}arrow-res\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" orient=\"auto\"><path d=\"M0 0 L10 5 L0 10 z\" class=\"arrowhead-res\"/></marker></defs>{frame}{body}</svg>"
    )
}

#[cfg(test)]
mod tests {
    use super::slots;
    use crate::render::html::{drawing, variants_of};

    /// Every catalog model's column and those of configs no catalog entry has: no two parts of
    /// one slot belong to a variant together (so none is drawn on another), and each variant's
    /// parts come down the column in the order the model runs them.
    #[test]
    fn a_variant_shows_one_part_a_slot_in_running_order() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/unseen");
        let held_out = std::fs::read_dir(root)
            .unwrap()
            .map(|f| f.unwrap().path().display().to_string());
        let names = crate::catalog::ENTRIES.iter().map(|e| e.name.to_string());
        for name in names.chain(held_out) {
            let spec = crate::source::load(&name, false).unwrap().spec;
            let d = drawing(&crate::graph::build(&spec).unwrap()).unwrap();
            let variant_of = |p: &super::Part| variants_of(&d.variants, p);
            let column = slots(&d.parts, &variant_of);
            for v in 0..d.variants.len().max(1) {
                let mut shown = Vec::new();
                for slot in &column {
                    let here: Vec<&str> = slot
                        .iter()
                        .filter(|p| variant_of(p).contains(&v))
                        .map(|p| p.id.as_str())
                        .collect();
                    assert!(here.len() <= 1, "{name} variant {v}: {here:?} share a slot");
                    shown.extend(here);
                }
                let order: Vec<&str> = d
                    .parts
                    .iter()
                    .filter(|p| p.kind != super::Kind::Aux && variant_of(p).contains(&v))
                    .map(|p| p.id.as_str())
                    .collect();
                assert_eq!(shown, order, "{name} variant {v}");
            }
        }
    }
}
