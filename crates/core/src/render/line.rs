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

#[derive(Debug, Clone, Default)]
pub struct Line {
    spans: Vec<(String, Style)>,
    /// Visible columns, kept up to date so layout never re-measures a line.
    width: usize,
}

impl Line {
    pub fn new() -> Self {
        Line::default()
    }

    pub fn plain(s: &str) -> Self {
        let mut l = Line::new();
        l.push(s, Style::default());
        l
    }

    /// Add text; runs of one style share a span, which keeps lines cheap to build and render.
    pub fn push(&mut self, s: &str, style: Style) -> &mut Self {
        if s.is_empty() {
            return self;
        }
        self.width += s.width();
        match self.spans.last_mut() {
            Some((last, st)) if *st == style => last.push_str(s),
            _ => self.spans.push((s.to_string(), style)),
        }
        self
    }

    pub fn append(&mut self, other: &Line) -> &mut Self {
        for (s, st) in &other.spans {
            match self.spans.last_mut() {
                Some((last, style)) if style == st => last.push_str(s),
                _ => self.spans.push((s.clone(), *st)),
            }
        }
        self.width += other.width;
        self
    }

    pub fn width(&self) -> usize {
        self.width
    }

    /// Pad with spaces to `w` columns.
    pub fn pad(&mut self, w: usize) -> &mut Self {
        let have = self.width();
        if have < w {
            self.push(&" ".repeat(w - have), Style::default());
        }
        self
    }

    /// Cut to at most `w` columns, marking the cut with `…`.
    pub fn truncate(&mut self, w: usize) -> &mut Self {
        if self.width() <= w {
            return self;
        }
        let mut out = Vec::new();
        let mut used = 0;
        for (s, st) in &self.spans {
            let mut piece = String::new();
            for ch in s.chars() {
                let cw = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
                if used + cw + 1 > w {
                    break;
                }
                piece.push(ch);
                used += cw;
            }
            let full = piece.len() == s.len();
            out.push((piece, *st));
            if !full {
                break;
            }
        }
        out.push(("…".to_string(), Style::default()));
        self.spans = out;
        self.width = used + 1;
        self
    }

    pub fn text(&self) -> String {
        self.spans.iter().map(|(s, _)| s.as_str()).collect()
    }

    pub fn render(&self, color: bool) -> String {
        if !color {
            return self.text().trim_end().to_string();
        }
        let mut out = String::new();
        for (s, st) in &self.spans {
            match st.ansi() {
                Some(code) => {
                    out.push_str(&code);
                    out.push_str(s);
                    out.push_str("\x1b[0m");
                }
                None => out.push_str(s),
            }
        }
        out.trim_end().to_string()
    }
}

pub fn width(s: &str) -> usize {
    s.width()
}
