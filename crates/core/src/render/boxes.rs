//! Tensor boxes: heavy lines for weights, double lines for activations, dims on the edges.
//!
//! A box's size grows with the logarithm of its dims and is capped, so a 128256-wide vocabulary
//! takes a few more columns than a 3072-wide hidden state, not forty times as many.

use super::line::{width, Line, Style};
use crate::graph::{Dim, Tensor, TensorKind};

#[derive(Debug, Clone, Copy)]
pub struct Scale {
    pub max_inner_width: usize,
    pub max_inner_height: usize,
}

impl Scale {
    pub const FULL: Scale = Scale {
        max_inner_width: 15,
        max_inner_height: 5,
    };
    pub const COMPACT: Scale = Scale {
        max_inner_width: 9,
        max_inner_height: 3,
    };
    pub const TINY: Scale = Scale {
        max_inner_width: 7,
        max_inner_height: 1,
    };
}

fn log2(n: u64) -> f64 {
    (n.max(1) as f64).log2()
}

fn inner_width(d: &Dim, s: Scale) -> usize {
    let w = match d.size() {
        None => 13,
        Some(n) => 3 + (log2(n) * 0.65).round() as usize,
    };
    w.clamp(3, s.max_inner_width)
}

fn inner_height(d: &Dim, s: Scale) -> usize {
    let h = match d.size() {
        None => 5,
        Some(n) => 1 + (log2(n) / 3.5).round() as usize,
    };
    h.clamp(1, s.max_inner_height)
}

/// Columns of a tensor's box with its left label: (label column, inner width).
fn widths(t: &Tensor, scale: Scale) -> (usize, usize) {
    let [rows, cols] = &t.dims;
    let top = width(&cols.label());
    let mut w = inner_width(cols, scale)
        .max(top + 2)
        .max(width(&t.name) + 2);
    if w.is_multiple_of(2) && top % 2 == 1 {
        w += 1;
    }
    (width(&rows.label()) + 1, w)
}

/// Total columns `draw` will use for `t`.
pub fn box_width(t: &Tensor, scale: Scale) -> usize {
    let (lw, w) = widths(t, scale);
    lw + w + 2
}

/// Lines of one tensor's box, each of the same width: left dim label column, then the box.
pub fn draw(t: &Tensor, style: Style, scale: Scale) -> Vec<Line> {
    let weight = t.is_weight();
    // Heavy for a weight, double for an activation, rounded for a recurrent state.
    let (tl, tr, bl, br, h, v) = match t.kind {
        TensorKind::Weight { .. } => ('┏', '┓', '┗', '┛', '━', '┃'),
        TensorKind::Activation { .. } => ('╔', '╗', '╚', '╝', '═', '║'),
        TensorKind::State => ('╭', '╮', '╰', '╯', '─', '│'),
    };
    let [rows, cols] = &t.dims;
    let top_label = cols.label();
    let left_label = rows.label();
    let (lw, w) = widths(t, scale);
    let ih = inner_height(rows, scale);

    // The top edge carries the columns' label, centred; the bottom one ◇ on a weight.
    let mut lines = Vec::with_capacity(ih + 2);
    // Box-drawing characters take 3 bytes each.
    let bytes = lw + 3 * (w + 2) + t.name.len();
    let mut top = Line::with_capacity(bytes);
    let lab = width(&top_label);
    let left = (w - lab) / 2;
    top.push_repeat(' ', lw, Style::default())
        .push_repeat(tl, 1, style)
        .push_repeat(h, left, style)
        .push(&top_label, style)
        .push_repeat(h, w - lab - left, style)
        .push_repeat(tr, 1, style);
    lines.push(top);
    let name_row = (ih - 1) / 2;
    let bold = Style {
        bold: true,
        ..style
    };
    for r in 0..ih {
        let mut l = Line::with_capacity(bytes);
        l.push(if r == 0 { &left_label } else { "" }, Style::default());
        l.pad(lw);
        l.push_repeat(v, 1, style);
        if r == name_row {
            let nw = width(&t.name);
            let left = (w - nw) / 2;
            l.push_repeat(' ', left, bold)
                .push(&t.name, bold)
                .push_repeat(' ', w - nw - left, bold);
        } else {
            l.push_repeat(' ', w, bold);
        }
        l.push_repeat(v, 1, style);
        lines.push(l);
    }
    // ◇ marks the contracted side of a weight: its columns, summed against the input.
    let mut bot = Line::with_capacity(bytes);
    bot.push_repeat(' ', lw, Style::default())
        .push_repeat(bl, 1, style);
    if weight {
        let at = if w > 3 { w - 2 } else { w / 2 };
        bot.push_repeat(h, at, style)
            .push_repeat('◇', 1, style)
            .push_repeat(h, w - at - 1, style);
    } else {
        bot.push_repeat(h, w, style);
    }
    bot.push_repeat(br, 1, style);
    lines.push(bot);
    lines
}

/// Boxes side by side, top-aligned, two columns apart.
pub fn row(boxes: Vec<Vec<Line>>) -> Vec<Line> {
    let height = boxes.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = boxes
        .iter()
        .map(|b| b.iter().map(Line::width).max().unwrap_or(0))
        .collect();
    (0..height)
        .map(|r| {
            let bytes = boxes
                .iter()
                .map(|b| b.get(r).map_or(0, |x| x.text().len()) + 2)
                .sum::<usize>()
                + widths.iter().sum::<usize>();
            let mut l = Line::with_capacity(bytes);
            for (i, b) in boxes.iter().enumerate() {
                if i > 0 {
                    l.push("  ", Style::default());
                }
                match b.get(r) {
                    Some(x) => {
                        l.append(x);
                        l.pad(l.width() + widths[i] - x.width());
                    }
                    None => {
                        l.pad(l.width() + widths[i]);
                    }
                }
            }
            l
        })
        .collect()
}
