//! Styled text lines whose visible width is known, so layout never counts escape codes.

use crate::graph::Category;

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

    /// Empty the line, keeping its buffers for the next.
    pub fn clear(&mut self) {
        self.text.clear();
        self.runs.clear();
        self.width = 0;
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
        self.width += width(s);
        self.style_from_here(style);
        self.text.push_str(s);
        self
    }

    /// Add `args` formatted, without building a string for them.
    pub fn push_fmt(&mut self, args: std::fmt::Arguments, style: Style) -> &mut Self {
        use std::fmt::Write;
        let (start, runs) = (self.text.len(), self.runs.len());
        self.style_from_here(style);
        self.text
            .write_fmt(args)
            .expect("a String takes any formatted text");
        if self.text.len() == start {
            // Nothing written: no run for it.
            self.runs.truncate(runs);
        }
        self.width += width(&self.text[start..]);
        self
    }

    /// Add `n` copies of `ch` (box edges, padding) without building a string for them.
    pub fn push_repeat(&mut self, ch: char, n: usize, style: Style) -> &mut Self {
        if n == 0 {
            return self;
        }
        self.width += n * char_width(ch);
        self.style_from_here(style);
        match repeated(ch).filter(|_| n > 1) {
            // The padding and edges most lines are made of, a slice at a time.
            Some(run) => {
                let w = ch.len_utf8();
                let mut left = n;
                while left > 0 {
                    let k = left.min(run.len() / w);
                    self.text.push_str(&run[..k * w]);
                    left -= k;
                }
            }
            None => {
                let mut buf = [0u8; 4];
                let piece = ch.encode_utf8(&mut buf);
                for _ in 0..n {
                    self.text.push_str(piece);
                }
            }
        }
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
            let cw = char_width(ch);
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
        // Trailing spaces (the padding of most lines) a byte at a time; then any other
        // whitespace the slower way.
        let spaces = out.as_bytes()[start..]
            .iter()
            .rev()
            .take_while(|&&b| b == b' ')
            .count();
        out.truncate(out.len() - spaces);
        let kept = start + out[start..].trim_end().len();
        out.truncate(kept);
    }
}

/// A run of `ch` to push slices of: for padding and the light, heavy and double edges.
fn repeated(ch: char) -> Option<&'static str> {
    const fn run<const N: usize>(piece: &str) -> [u8; N] {
        let (piece, mut out, mut i) = (piece.as_bytes(), [0u8; N], 0);
        while i < N {
            out[i] = piece[i % piece.len()];
            i += 1;
        }
        out
    }
    const fn text(bytes: &[u8]) -> &str {
        match std::str::from_utf8(bytes) {
            Ok(s) => s,
            Err(_) => panic!("a run of whole chars"),
        }
    }
    const SPACES: &str = text(&run::<64>(" "));
    const LIGHT: &str = text(&run::<96>("─"));
    const HEAVY: &str = text(&run::<96>("━"));
    const DOUBLE: &str = text(&run::<96>("═"));
    match ch {
        ' ' => Some(SPACES),
        '─' => Some(LIGHT),
        '━' => Some(HEAVY),
        '═' => Some(DOUBLE),
        _ => None,
    }
}

/// Visible columns of `s`, char by char as `Line::truncate` cuts (a control character takes
/// none); its length where it is printable ASCII, as most of a drawing is.
pub fn width(s: &str) -> usize {
    if s.bytes().all(|b| (b' '..=b'~').contains(&b)) {
        s.len()
    } else {
        s.chars().map(char_width).sum()
    }
}

fn char_width(ch: char) -> usize {
    // Printable ASCII and box drawing, most of a diagram, without a table lookup.
    if (' '..='~').contains(&ch) || ('\u{2500}'..='\u{257F}').contains(&ch) {
        1
    } else {
        unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A piece of text (printable ASCII, a tab, box drawing, wide characters) and the index of
    /// one of `styles()`.
    fn piece() -> impl Strategy<Value = (String, usize)> {
        ("[ -~═━┃◇…中\t]{0,70}", 0usize..3)
    }

    fn styles() -> [Style; 3] {
        [
            Style::default(),
            Style::cat(Category::Attention),
            Style {
                bold: true,
                ..Style::cat(Category::Ffn)
            },
        ]
    }

    /// The text without its colour codes.
    fn strip(s: &str) -> String {
        let mut out = String::new();
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                chars.by_ref().find(|&c| c == 'm');
            } else {
                out.push(c);
            }
        }
        out
    }

    #[test]
    fn box_drawing_and_printable_ascii_take_one_column() {
        for ch in (' '..='~').chain('\u{2500}'..='\u{257F}') {
            assert_eq!(
                unicode_width::UnicodeWidthChar::width(ch),
                Some(1),
                "{ch:?}"
            );
        }
    }

    proptest! {
        /// `n` copies of a char pushed at once are the string of them pushed.
        #[test]
        fn push_repeat_is_push_of_the_repeat(ch in "[ a─━═◇中😀]", n in 0usize..300) {
            let ch = ch.chars().next().unwrap();
            let (mut at_once, mut whole) = (Line::plain("x"), Line::plain("x"));
            at_once.push_repeat(ch, n, Style::default());
            whole.push(&ch.to_string().repeat(n), Style::default());
            prop_assert_eq!(at_once.text(), whole.text());
            prop_assert_eq!(at_once.width(), whole.width());
        }

        /// Text without control characters measures as unicode-width measures it.
        #[test]
        fn width_is_unicode_width(s in "[ -~═━┃◇…中é]{0,24}") {
            prop_assert_eq!(width(&s), unicode_width::UnicodeWidthStr::width(s.as_str()));
        }

        /// However a line is built, padded and cut, its kept width is its text's, it never
        /// exceeds the cut, and colouring it changes nothing but the codes around its runs.
        #[test]
        fn width_runs_and_colour_agree(
            pieces in proptest::collection::vec(piece(), 0..12),
            pad in 0usize..40,
            cut in 1usize..40,
        ) {
            let style = styles();
            let mut l = Line::new();
            let mut other = Line::new();
            for (i, (s, st)) in pieces.iter().enumerate() {
                if i % 3 == 2 {
                    other.push(s, style[*st]);
                    l.append(&other);
                } else {
                    l.push(s, style[*st]);
                }
            }
            l.pad(pad);
            prop_assert_eq!(l.width(), width(l.text()));
            prop_assert!(l.width() >= pad);
            let full = l.text().to_string();
            l.truncate(cut);
            prop_assert_eq!(l.width(), width(l.text()));
            prop_assert!(l.width() <= cut);
            if full != l.text() {
                let kept = l.text().strip_suffix('…').unwrap();
                prop_assert!(full.starts_with(kept));
            }
            let (mut plain, mut color) = (String::new(), String::new());
            l.render_into(false, &mut plain);
            l.render_into(true, &mut color);
            prop_assert_eq!(&plain, l.text().trim_end());
            let stripped = strip(&color);
            prop_assert_eq!(stripped.trim_end(), plain.as_str());
            // An empty coloured run would be a code followed at once by the reset.
            let parts: Vec<&str> = color.split('\x1b').collect();
            for pair in parts.windows(2) {
                let code_only = pair[0].len() > 1
                    && pair[0].starts_with('[')
                    && pair[0].ends_with('m')
                    && pair[0][1..pair[0].len() - 1].chars().all(|c| c.is_ascii_digit() || c == ';');
                prop_assert!(!(code_only && pair[1].starts_with("[0m")), "empty coloured run in {:?}", color);
            }
        }
    }
}
