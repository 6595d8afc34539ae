//! The terminal tensor walkthrough (seed 000): frames for scopes with ×N, tensors as boxes, steps
//! numbered `[NN/MM]` with titles beside them, and an Operation / Equation / Source callout.

use super::boxes::{self, Scale};
use super::line::{width, Line, Style};
use crate::error::{Error, Result};
use crate::fmt;
use crate::graph::{Graph, Node, Scope, ScopeKind, Step, TensorKind, Visit};
use crate::stats;

#[derive(Debug, Clone)]
pub struct Options {
    /// Columns available; every line fits.
    pub width: usize,
    pub color: bool,
    /// Expand this step into its callout.
    pub step: Option<usize>,
}

/// Where step titles go.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// In a column right of the diagram.
    Side,
    /// On their own line above each step's boxes.
    Above,
}

pub fn render(g: &Graph, opts: &Options) -> Result<String> {
    if let Some(n) = opts.step {
        if n == 0 || n > g.step_count {
            return Err(Error::new(
                g.spec.name.clone(),
                "--step",
                format!(
                    "is {n}; this model has {} steps, so give a number from 1 to {}",
                    g.step_count, g.step_count
                ),
            ));
        }
    }
    let width = opts.width.max(20);

    let label_w = g
        .steps()
        .iter()
        .map(|v| width_of_label(g, v.step))
        .max()
        .unwrap_or(0);
    let scales = [Scale::FULL, Scale::COMPACT, Scale::TINY];
    let widths = diagram_widths(g, scales);
    let side = (0..3).find(|&i| widths[i] + 1 + label_w <= width);
    let (i, mode) = match side {
        Some(i) => (i, Mode::Side),
        None => (
            (0..2).find(|&i| widths[i] <= width).unwrap_or(2),
            Mode::Above,
        ),
    };
    // Only the last resort, the tiniest boxes above their titles, may not fit: it is cut.
    let (scale, d) = (scales[i], widths[i].min(width));

    let mut layout = Layout {
        g,
        scale,
        mode,
        d,
        callout_step: opts.step,
        callout_w: width.saturating_sub(d + 1),
        width,
        color: opts.color,
        // Guesses at the sizes, so the text rarely grows: a few lines per step, each the diagram
        // and its labels (not the width asked for, which may be any number).
        text: String::with_capacity(g.step_count * (scale.max_inner_height + 3) * (d + label_w)),
        row: Line::with_capacity(3 * (d + label_w)),
    };
    for mut l in header(g)? {
        layout.write(&mut l);
    }
    for node in &g.root.children {
        layout.node(node, 0);
    }
    for mut l in towers(g, width) {
        layout.write(&mut l);
    }
    let side_callout = mode == Mode::Side && layout.callout_w >= 32;
    if let (Some(n), false) = (opts.step, side_callout) {
        layout.write(&mut Line::new());
        for mut l in callout(g, n, width) {
            layout.write(&mut l);
        }
    }
    Ok(layout.text)
}

fn header(g: &Graph) -> Result<Vec<Line>> {
    let spec = &g.spec;
    let s = stats::stats(g, None)?;
    let mut first = Line::new();
    first.push(
        &spec.name,
        Style {
            bold: true,
            ..Default::default()
        },
    );
    first.push(
        &format!(
            " · {} ({}) · {} params · {} layers · hidden {} · context {} · vocab {}",
            spec.family,
            spec.model_type,
            fmt::short(s.total_params as u128),
            spec.layers,
            spec.hidden,
            fmt::context(spec.context),
            fmt::grouped(spec.vocab as u128)
        ),
        Style::default(),
    );
    let mut lines = vec![first];
    for i in &spec.ignored {
        lines.push(Line::plain(&fmt::printable(&i.to_string())));
    }
    if !spec.not_read.is_empty() {
        lines.push(Line::plain(&fmt::printable(&format!(
            "not read by transformers (so it cannot change the model): {}",
            crate::render::report::not_read(spec)
        ))));
    }
    if !spec.towers.is_empty() {
        lines.push(Line::plain(&format!(
            "towers: {} (their steps after the language model's)",
            spec.towers
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    for l in spec.plan_summary() {
        lines.push(Line::plain(&format!("layers differ · {l}")));
    }
    let state = if g.tensors.iter().any(|t| t.kind == TensorKind::State) {
        "╭─╮ state (carried token to token)  "
    } else {
        ""
    };
    lines.push(Line::plain(&format!(
        "┏━┓ weight  ╔═╗ activation  {state}◇ contracted side  top edge: columns, left edge: rows"
    )));
    lines.push(Line::new());
    Ok(lines)
}

fn label_text(g: &Graph, s: &Step) -> String {
    let digits = label_digits(g);
    format!(
        "[{:0w$}/{:0w$}] {}",
        s.number,
        g.step_count,
        s.title,
        w = digits
    )
}

/// Columns of `label_text`, without building it: `[` n `/` count `] ` title.
fn width_of_label(g: &Graph, s: &Step) -> usize {
    2 * label_digits(g) + 4 + width(&s.title)
}

/// Digits of each number in a step's label, at least two.
fn label_digits(g: &Graph) -> usize {
    g.step_count
        .checked_ilog10()
        .map_or(1, |d| d as usize + 1)
        .max(2)
}

fn scope_title(s: &Scope) -> String {
    if let Some(k) = s.active {
        format!("{} ×{} ({k} active per token)", s.title, s.repeat)
    } else if s.repeat > 1 || s.kind == ScopeKind::Block {
        format!("{} ×{}", s.title, s.repeat)
    } else {
        s.title.clone()
    }
}

/// Columns the diagram needs at each of `scales`: the widest step or frame title at its depth.
fn diagram_widths(g: &Graph, scales: [Scale; 3]) -> [usize; 3] {
    fn walk(g: &Graph, scope: &Scope, depth: usize, scales: &[Scale; 3], best: &mut [usize; 3]) {
        for node in &scope.children {
            match node {
                Node::Scope(s) => {
                    let frame =
                        (4 * depth + width(&scope_title(s)) + 6).max(4 * depth + width(&s.end) + 6);
                    for b in best.iter_mut() {
                        *b = (*b).max(frame);
                    }
                    walk(g, s, depth + 1, scales, best);
                }
                Node::Step(step) => {
                    // The boxes side by side, two columns apart.
                    let mut w = [0; 3];
                    for &i in step.inputs.iter().chain([&step.output]) {
                        for (w, b) in w.iter_mut().zip(boxes::box_widths(g.tensor(i), *scales)) {
                            *w += b + 2;
                        }
                    }
                    for (b, w) in best.iter_mut().zip(w) {
                        *b = (*b).max(4 * depth + w - 2);
                    }
                }
            }
        }
    }
    let mut best = [0; 3];
    walk(g, &g.root, 0, &scales, &mut best);
    best
}

/// Dim style of the scope frames.
const FRAME: Style = Style {
    category: None,
    bold: false,
    dim: true,
};

/// The walkthrough written line by line: each diagram row is built once, in `row`, and written
/// to `text` at once, rather than passing through a line per box, per row of boxes and per frame.
struct Layout<'g> {
    g: &'g Graph,
    scale: Scale,
    mode: Mode,
    d: usize,
    callout_step: Option<usize>,
    callout_w: usize,
    width: usize,
    color: bool,
    text: String,
    row: Line,
}

impl Layout<'_> {
    /// Write a finished line: cut to the width, trailing spaces dropped, coloured if asked.
    fn write(&mut self, l: &mut Line) {
        l.truncate(self.width);
        l.render_into(self.color, &mut self.text);
        self.text.push('\n');
    }

    /// Begin a diagram row inside `depth` frames: `│ ` each.
    fn open(&mut self, depth: usize) {
        self.row.clear();
        for _ in 0..depth {
            self.row.push("│ ", FRAME);
        }
    }

    /// End the row `open` began: its content padded to fit, ` │` for each frame, then `label`
    /// in the column right of the diagram; and write it.
    fn close(&mut self, depth: usize, label: Option<&Line>) {
        let mut row = std::mem::take(&mut self.row);
        row.pad(self.d - 2 * depth);
        for _ in 0..depth {
            row.push(" │", FRAME);
        }
        if let Some(label) = label {
            row.pad(self.d).push(" ", Style::default()).append(label);
        }
        self.write(&mut row);
        self.row = row;
    }

    fn node(&mut self, node: &Node, depth: usize) {
        match node {
            Node::Scope(s) => self.scope(s, depth),
            Node::Step(s) => self.step(s, depth),
        }
    }

    fn scope(&mut self, s: &Scope, depth: usize) {
        let inner = self.d - 4 * depth;
        let title = scope_title(s);
        self.open(depth);
        let fill = inner.saturating_sub(width(&title) + 5);
        self.row
            .push("┌─ ", FRAME)
            .push(
                &title,
                Style {
                    bold: true,
                    ..Default::default()
                },
            )
            .push(" ", FRAME)
            .push_repeat('─', fill, FRAME)
            .push("┐", FRAME);
        self.close(depth, None);
        for child in &s.children {
            self.node(child, depth + 1);
        }
        self.open(depth);
        let fill = inner.saturating_sub(width(&s.end) + 4);
        self.row
            .push("└", FRAME)
            .push_repeat('─', fill, FRAME)
            .push(" ", FRAME)
            .push(&s.end, FRAME)
            .push(" ┘", FRAME);
        self.close(depth, None);
    }

    fn step(&mut self, step: &Step, depth: usize) {
        let g = self.g;
        // `label_text`, its number bold in the step's colour.
        let mut label = Line::new();
        let w = label_digits(g);
        label
            .push_fmt(
                format_args!("[{:0w$}/{:0w$}]", step.number, g.step_count),
                Style {
                    bold: true,
                    ..Style::cat(step.category)
                },
            )
            .push(" ", Style::default())
            .push(&step.title, Style::default());
        let style = Style::cat(step.category);
        let drawn: Vec<boxes::Drawn> = step
            .inputs
            .iter()
            .chain([&step.output])
            .map(|&i| boxes::Drawn::new(g.tensor(i), style, self.scale))
            .collect();
        let height = drawn.iter().map(boxes::Drawn::height).max().unwrap_or(0);
        if self.mode == Mode::Above {
            label.truncate(self.d.saturating_sub(4 * depth));
            self.open(depth);
            self.row.append(&label);
            self.close(depth, None);
        }
        let label_row = height.saturating_sub(1) / 2;
        let callout_lines = if self.mode == Mode::Side
            && self.callout_step == Some(step.number)
            && self.callout_w >= 32
        {
            callout(g, step.number, self.callout_w)
        } else {
            Vec::new()
        };
        for i in 0..height.max(callout_lines.len()) {
            self.open(depth);
            if i < height {
                boxes::row_into(&drawn, i, &mut self.row);
            }
            let label = if !callout_lines.is_empty() {
                callout_lines.get(i)
            } else {
                (self.mode == Mode::Side && i == label_row).then_some(&label)
            };
            self.close(depth, label);
        }
    }
}

/// The Operation / Equation / Source callout of step `n`, at most `w` columns wide.
pub fn callout(g: &Graph, n: usize, w: usize) -> Vec<Line> {
    let Some(v) = g.step(n) else {
        return Vec::new();
    };
    let step = v.step;
    let w = w.clamp(24, 100);
    let inner = w - 4;
    let key_w = 11;
    let mut body: Vec<(String, String)> = vec![
        ("Operation:".into(), step.operation.clone()),
        ("Equation:".into(), step.equation.clone()),
    ];
    let sources = sources(g, step);
    if sources.is_empty() {
        body.push(("Source:".into(), "none (runtime activation routing)".into()));
    } else {
        for (i, s) in sources.into_iter().enumerate() {
            body.push((
                if i == 0 {
                    "Source:".into()
                } else {
                    String::new()
                },
                s,
            ));
        }
    }
    if let Some(layers) = scope_layers(&v) {
        body.push(("Layers:".into(), layers));
    }
    let frame = Style::cat(step.category);
    let title = format!(" {} ", label_text(g, step).to_uppercase());
    let mut out = Vec::new();
    let mut top = Line::new();
    top.push(&format!("┌─{title}"), frame)
        .push(&"─".repeat(w.saturating_sub(3 + width(&title))), frame)
        .push("┐", frame);
    top.truncate(w);
    out.push(top);
    for (key, value) in body {
        for (i, piece) in wrap(&value, inner - key_w).into_iter().enumerate() {
            let mut l = Line::new();
            l.push("│ ", frame).push(
                &format!("{:<key_w$}", if i == 0 { key.as_str() } else { "" }),
                Style {
                    bold: true,
                    ..Default::default()
                },
            );
            l.push(&piece, Style::default());
            l.pad(w - 2).push(" │", frame);
            out.push(l);
        }
    }
    let mut bottom = Line::new();
    bottom.push(&format!("└{}┘", "─".repeat(w - 2)), frame);
    out.push(bottom);
    out
}

fn scope_layers(v: &Visit) -> Option<String> {
    let layers = v.layers()?;
    Some(match v.scopes.iter().find(|s| s.kind == ScopeKind::Block) {
        Some(block) => format!("{layers} (of {})", block.repeat),
        None => format!("{layers} (checkpoint layer index)"),
    })
}

/// Checkpoint tensors a step reads, in Hugging Face and GGUF naming.
fn sources(g: &Graph, step: &Step) -> Vec<String> {
    let mut out = Vec::new();
    for &i in &step.inputs {
        if let TensorKind::Weight { param, slice, note } = &g.tensor(i).kind {
            let p = &g.params[*param];
            let slice = slice.as_deref().unwrap_or("");
            let mut s = format!("{}{slice}", p.hf);
            if let Some(note) = note {
                s += &format!(" ({note})");
            }
            out.push(s);
            out.push(format!("GGUF {}{slice}", p.gguf));
        }
    }
    out
}

/// A wrapper's towers after the language model: each one's steps and the tensors each stores
/// (`{i}` the layer of a repeated step), wrapped to `width`.
fn towers(g: &Graph, width: usize) -> Vec<Line> {
    let mut lines = Vec::new();
    let bold = Style {
        bold: true,
        ..Default::default()
    };
    for t in &g.spec.towers {
        lines.push(Line::new());
        let mut title = Line::new();
        title.push(&format!("{} ({}*)", t.what, t.prefix), bold);
        let held = match t.params() {
            Some(n) => format!(" · {} params", fmt::grouped(n as u128)),
            None => " · a kind anatomy does not know: not counted".to_string(),
        };
        title.push(
            &format!("{held} · run on an image or audio, not on text"),
            Style::default(),
        );
        lines.push(title);
        for b in t.steps() {
            lines.push(Line::plain(&format!("  {}", b.label())));
            for (name, shape) in &b.tensors {
                let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
                let text = format!("{}{name} [{}]", t.prefix, dims.join(", "));
                for l in wrap(&text, width.saturating_sub(4)) {
                    lines.push(Line::plain(&format!("    {l}")));
                }
            }
        }
    }
    lines
}

/// Word-wrap `text` to `w` columns; words longer than `w` are split.
fn wrap(text: &str, w: usize) -> Vec<String> {
    let w = w.max(8);
    let mut lines = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ') {
        let mut word = word.to_string();
        while width(&word) > w {
            if !cur.is_empty() {
                lines.push(std::mem::take(&mut cur));
            }
            let cut: String = word.chars().take(w).collect();
            word = word.chars().skip(w).collect();
            lines.push(cut);
        }
        if cur.is_empty() {
            cur = word;
        } else if width(&cur) + 1 + width(&word) <= w {
            cur.push(' ');
            cur.push_str(&word);
        } else {
            lines.push(std::mem::replace(&mut cur, word));
        }
    }
    if !cur.is_empty() || lines.is_empty() {
        lines.push(cur);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Any width is taken: what is allocated follows the drawing, not the width asked for.
    #[test]
    fn a_huge_width_draws_as_a_wide_one() {
        let g = crate::graph::build(&crate::source::load("gpt-2", false).unwrap().spec).unwrap();
        let at = |width| {
            render(
                &g,
                &Options {
                    width,
                    color: false,
                    step: Some(3),
                },
            )
            .unwrap()
        };
        assert_eq!(at(usize::MAX), at(10_000));
    }

    /// The layout measures labels without building them; the measure is the label's.
    #[test]
    fn label_width_is_the_labels() {
        for name in ["gpt-2", "blt-1b", "deepseek-v3"] {
            let g = crate::graph::build(&crate::source::load(name, false).unwrap().spec).unwrap();
            for v in g.steps() {
                assert_eq!(width_of_label(&g, v.step), width(&label_text(&g, v.step)));
            }
        }
    }
}
