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

/// Inner width of a tensor's box whose top label is `top` columns wide and name `name`.
fn inner(t: &Tensor, top: usize, name: usize, scale: Scale) -> usize {
    let mut w = inner_width(&t.dims[1], scale).max(top + 2).max(name + 2);
    if w.is_multiple_of(2) && top % 2 == 1 {
        w += 1;
    }
    w
}

/// Columns of `d.to_string()`, without building it: the layout measures every box at each scale
/// it tries.
fn label_width(d: &Dim) -> usize {
    let digits = |n: u64| n.checked_ilog10().map_or(1, |d| d as usize + 1);
    match d {
        Dim::Seq => 3,
        Dim::Windows(m) => 4 + digits(*m),
        Dim::N(n) => digits(*n),
        Dim::Labeled(s, _) => width(s),
    }
}

/// Total columns a tensor's box takes with its left label, at each of `scales`.
pub fn box_widths<const N: usize>(t: &Tensor, scales: [Scale; N]) -> [usize; N] {
    let [rows, cols] = &t.dims;
    let (left, top, name) = (label_width(rows), label_width(cols), width(&t.name));
    scales.map(|scale| left + 1 + inner(t, top, name, scale) + 2)
}

/// One tensor's box, measured once; its lines are written one at a time into the line being
/// built, so a step's boxes go straight into a diagram row. Every line is `width()` columns.
pub struct Drawn<'t> {
    name: &'t str,
    name_w: usize,
    rows: &'t Dim,
    cols: &'t Dim,
    top_w: usize,
    style: Style,
    /// Corners top-left, top-right, bottom-left, bottom-right, then the horizontal and vertical
    /// edges.
    edges: [char; 6],
    weight: bool,
    /// The left label's column, and the box's inner width and height.
    lw: usize,
    w: usize,
    ih: usize,
}

impl<'t> Drawn<'t> {
    pub fn new(t: &'t Tensor, style: Style, scale: Scale) -> Self {
        // Heavy for a weight, double for an activation, rounded for a recurrent state.
        let edges = match t.kind {
            TensorKind::Weight { .. } => ['┏', '┓', '┗', '┛', '━', '┃'],
            TensorKind::Activation { .. } => ['╔', '╗', '╚', '╝', '═', '║'],
            TensorKind::State => ['╭', '╮', '╰', '╯', '─', '│'],
        };
        let [rows, cols] = &t.dims;
        let (top_w, name_w) = (label_width(cols), width(&t.name));
        Drawn {
            name: &t.name,
            name_w,
            rows,
            cols,
            w: inner(t, top_w, name_w, scale),
            lw: label_width(rows) + 1,
            ih: inner_height(rows, scale),
            top_w,
            style,
            edges,
            weight: t.is_weight(),
        }
    }

    pub fn height(&self) -> usize {
        self.ih + 2
    }

    pub fn width(&self) -> usize {
        self.lw + self.w + 2
    }

    /// Append line `r` of the box: the top edge carries the columns' label, centred, the
    /// middle line the name, the bottom edge ◇ on a weight.
    pub fn line_into(&self, r: usize, l: &mut Line) {
        let [tl, tr, bl, br, h, v] = self.edges;
        let (style, w) = (self.style, self.w);
        if r == 0 {
            let left = (w - self.top_w) / 2;
            l.push_repeat(' ', self.lw, Style::default())
                .push_repeat(tl, 1, style)
                .push_repeat(h, left, style)
                .push_fmt(format_args!("{}", self.cols), style)
                .push_repeat(h, w - self.top_w - left, style)
                .push_repeat(tr, 1, style);
        } else if r <= self.ih {
            let bold = Style {
                bold: true,
                ..style
            };
            let start = l.width();
            if r == 1 {
                l.push_fmt(format_args!("{}", self.rows), Style::default());
            }
            l.pad(start + self.lw);
            l.push_repeat(v, 1, style);
            if r - 1 == (self.ih - 1) / 2 {
                let nw = self.name_w;
                let left = (w - nw) / 2;
                l.push_repeat(' ', left, bold)
                    .push(self.name, bold)
                    .push_repeat(' ', w - nw - left, bold);
            } else {
                l.push_repeat(' ', w, bold);
            }
            l.push_repeat(v, 1, style);
        } else {
            // ◇ marks the contracted side of a weight: its columns, summed against the input.
            l.push_repeat(' ', self.lw, Style::default())
                .push_repeat(bl, 1, style);
            if self.weight {
                let at = if w > 3 { w - 2 } else { w / 2 };
                l.push_repeat(h, at, style)
                    .push_repeat('◇', 1, style)
                    .push_repeat(h, w - at - 1, style);
            } else {
                l.push_repeat(h, w, style);
            }
            l.push_repeat(br, 1, style);
        }
    }
}

/// Line `r` of boxes side by side, top-aligned, two columns apart, appended to `l`; a box
/// shorter than `r` leaves its columns blank.
pub fn row_into(boxes: &[Drawn], r: usize, l: &mut Line) {
    for (i, b) in boxes.iter().enumerate() {
        if i > 0 {
            l.push("  ", Style::default());
        }
        if r < b.height() {
            b.line_into(r, l);
        } else {
            l.pad(l.width() + b.width());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_width_is_the_labels() {
        let dims = [
            Dim::Seq,
            Dim::Windows(4),
            Dim::Windows(128),
            Dim::N(0),
            Dim::N(9),
            Dim::N(10),
            Dim::N(4096),
            Dim::N(u64::MAX),
            Dim::Labeled("128×3×8=3072".into(), 3072),
        ];
        for d in dims {
            assert_eq!(label_width(&d), width(&d.to_string()), "{d:?}");
        }
    }
}
