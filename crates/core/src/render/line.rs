//! Styled text lines whose visible width is known, so layout never counts escape codes.

use crate::graph::Category;
use unicode_width::UnicodeWidthStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Style {
    pub category: Option<Category>,
    pub bold: bool,
    pub dim: bool,
}

impl Style {
    pub fn cat(c: Category) -> Self {
        Style {
            category: Some(c),
            ..Default::default()
        }
    }

    fn ansi(self) -> Option<String> {
        let mut codes: Vec<&str> = Vec::new();
        if self.bold {
            codes.push("1");
        }
        if self.dim {
            codes.push("2");
        }
        if let Some(c) = self.category {
            codes.push(match c {
                Category::Attention => "34",
                Category::Mixer => "31",
                Category::Ffn => "32",
                Category::Norm => "35",
                Category::Embed => "33",
                Category::Aux => "90",
            });
        }
        (!codes.is_empty()).then(|| format!("\x1b[{}m", codes.join(";")))
    }
}

/// One line: its text in one buffer, and the style of each run of it (a run ends where the next
/// begins), so building a line costs a few appends rather than a string per piece.
#[derive(Debug, Clone, Default)]
pub struct Line {
    text: String,
    /// (byte offset where the run starts, its style), in order; the first starts at 0.
    runs: Vec<(usize, Style)>,
    /// Visible columns, kept up to date so layout never re-measures a line.
    width: usize,
}

impl Line {
    pub fn new() -> Self {
        Line::default()
    }

    /// A line with room for `bytes` of text: box and frame lines, whose size is known, then
    /// grow without reallocating piece by piece.
    pub fn with_capacity(bytes: usize) -> Self {
        Line {
            text: String::with_capacity(bytes),
            runs: Vec::with_capacity(8),
            width: 0,
        }
    }

    pub fn plain(s: &str) -> Self {
        let mut l = Line::new();
        l.push(s, Style::default());
        l
    }

    /// Start a run of `style` at the end of the text, unless the last run already has it.
    fn style_from_here(&mut self, style: Style) {
        if self.runs.last().map(|&(_, st)| st) != Some(style) {
            self.runs.push((self.text.len(), style));
        }
    }

    /// Add text; runs of one style share a run.
    pub fn push(&mut self, s: &str, style: Style) -> &mut Self {
        if s.is_empty() {
            return self;
        }
        self.width += s.width();
        self.style_from_here(style);
        self.text.push_str(s);
        self
    }

    /// Add `n` copies of `ch` (box edges, padding) without building a string for them.
    pub fn push_repeat(&mut self, ch: char, n: usize, style: Style) -> &mut Self {
        if n == 0 {
            return self;
        }
        self.width += n * unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
        self.style_from_here(style);
        self.text.extend(std::iter::repeat_n(ch, n));
        self
    }

    pub fn append(&mut self, other: &Line) -> &mut Self {
        self.text.reserve(other.text.len());
        for (i, &(start, st)) in other.runs.iter().enumerate() {
            let end = other.runs.get(i + 1).map_or(other.text.len(), |r| r.0);
            self.style_from_here(st);
            self.text.push_str(&other.text[start..end]);
        }
        self.width += other.width;
        self
    }

    pub fn width(&self) -> usize {
        self.width
    }

    /// Pad with spaces to `w` columns.
    pub fn pad(&mut self, w: usize) -> &mut Self {
        self.push_repeat(' ', w.saturating_sub(self.width), Style::default())
    }

    /// Cut to at most `w` columns, marking the cut with `…`.
    pub fn truncate(&mut self, w: usize) -> &mut Self {
        if self.width() <= w {
            return self;
        }
        let mut used = 0;
        let mut cut = self.text.len();
        for (i, ch) in self.text.char_indices() {
            let cw = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
            if used + cw + 1 > w {
                cut = i;
                break;
            }
            used += cw;
        }
        self.text.truncate(cut);
        self.runs.retain(|&(start, _)| start < cut);
        self.width = used;
        self.push("…", Style::default());
        self
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// The line without trailing spaces, with ANSI colour codes where `color`, written at the end
    /// of `out`.
    pub fn render_into(&self, color: bool, out: &mut String) {
        let start = out.len();
        if !color {
            out.push_str(&self.text);
        } else {
            for (i, &(from, st)) in self.runs.iter().enumerate() {
                let end = self.runs.get(i + 1).map_or(self.text.len(), |r| r.0);
                let s = &self.text[from..end];
                match st.ansi() {
                    Some(code) => {
                        out.push_str(&code);
                        out.push_str(s);
                        out.push_str("\x1b[0m");
                    }
                    None => out.push_str(s),
                }
            }
        }
        let kept = start + out[start..].trim_end().len();
        out.truncate(kept);
    }
}

pub fn width(s: &str) -> usize {
    s.width()
}
