//! Python fragments joined by addition. A fragment is a real `.py` file (it compiles and a
//! linter reads it) whose lines are grouped into named sections by marker comments at column 0,
//! which Python ignores wherever they stand:
//!
//! - `#: name` opens a section kept where the piece `name` is on; `#: !name` one kept where it
//!   is off. Sections nest; `#.` closes the innermost.
//! - `#= name` stands for text made in Rust (a model's rotary frequencies), filled in there.
//!
//! The generated file holds the lines of every section whose pieces are on, in the fragment's
//! order, and the filled text: nothing is searched for or replaced. Every piece a fragment names
//! must be decided and every filler used, or `join` says which is not (in release builds too).

use std::collections::BTreeMap;

/// Which pieces are on, and the text of each filler, for one model.
#[derive(Default)]
pub(crate) struct Pieces {
    on: BTreeMap<&'static str, bool>,
    fill: BTreeMap<&'static str, String>,
}

impl Pieces {
    /// Piece `name` on where `on`. Deciding a piece twice is a mistake in the table that
    /// decides them.
    pub(crate) fn set(&mut self, name: &'static str, on: bool) -> &mut Self {
        let before = self.on.insert(name, on);
        assert!(before.is_none(), "piece `{name}` decided twice");
        self
    }

    /// Filler `name`'s text.
    pub(crate) fn fill(&mut self, name: &'static str, text: String) -> &mut Self {
        let before = self.fill.insert(name, text);
        assert!(before.is_none(), "filler `{name}` made twice");
        self
    }

    /// The names decided, for the test that fragments and table agree.
    #[cfg(test)]
    pub(crate) fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.on.keys().copied()
    }
}

/// A marker line's meaning.
enum Marker<'a> {
    Open { name: &'a str, want: bool },
    Close,
    Fill(&'a str),
}

fn marker(line: &str) -> Option<Marker<'_>> {
    if let Some(rest) = line.strip_prefix("#: ") {
        let (name, want) = match rest.strip_prefix('!') {
            Some(n) => (n, false),
            None => (rest, true),
        };
        Some(Marker::Open {
            name: name.trim(),
            want,
        })
    } else if line.trim_end() == "#." {
        Some(Marker::Close)
    } else {
        line.strip_prefix("#= ").map(|n| Marker::Fill(n.trim()))
    }
}

/// The names of the pieces and fillers `src` reads, in order of first use.
#[cfg(test)]
pub(crate) fn names_in(src: &str) -> (Vec<&str>, Vec<&str>) {
    let (mut pieces, mut fills) = (Vec::new(), Vec::new());
    for line in src.lines() {
        match marker(line) {
            Some(Marker::Open { name, .. }) if !pieces.contains(&name) => pieces.push(name),
            Some(Marker::Fill(name)) if !fills.contains(&name) => fills.push(name),
            _ => {}
        }
    }
    (pieces, fills)
}

/// `src`'s lines for a model: `emit(Some(i), line)` for each code line kept (`i` counted from 0),
/// `emit(None, text)` for each filler's text where it stands kept. Returns the fillers placed.
fn walk<'s>(
    file: &str,
    src: &'s str,
    p: &'s Pieces,
    mut emit: impl FnMut(Option<usize>, &'s str),
) -> Vec<&'s str> {
    let mut placed = Vec::new();
    // Whether each open section keeps its lines.
    let mut open: Vec<bool> = Vec::new();
    for (i, line) in src.split_inclusive('\n').enumerate() {
        let keep = open.iter().all(|k| *k);
        match marker(line) {
            Some(Marker::Open { name, want }) => {
                let on = *p
                    .on
                    .get(name)
                    .unwrap_or_else(|| panic!("{file}:{}: piece `{name}` is not decided", i + 1));
                open.push(on == want);
            }
            Some(Marker::Close) => {
                open.pop()
                    .unwrap_or_else(|| panic!("{file}:{}: `#.` closes no section", i + 1));
            }
            Some(Marker::Fill(name)) => {
                let text = p
                    .fill
                    .get(name)
                    .unwrap_or_else(|| panic!("{file}:{}: filler `{name}` is not made", i + 1));
                placed.push(name);
                if keep {
                    emit(None, text);
                }
            }
            None if keep => emit(Some(i), line),
            None => {}
        }
    }
    assert!(
        open.is_empty(),
        "{file}: {} section(s) left open",
        open.len()
    );
    placed
}

/// `fragments` joined for a model: each one's kept lines, in order, two blank lines between
/// fragments that keep any (as between top-level definitions). `file` names a fragment in what a
/// mistake says.
pub(crate) fn join(fragments: &[(&str, &str)], p: &Pieces) -> String {
    let mut parts = Vec::new();
    let mut used = std::collections::BTreeSet::new();
    for (file, src) in fragments {
        let mut out = String::new();
        used.extend(walk(file, src, p, |_, text| out += text));
        let kept = out.trim_end_matches('\n');
        if !kept.is_empty() {
            parts.push(kept.to_string());
        }
    }
    let unused: Vec<_> = p.fill.keys().filter(|k| !used.contains(**k)).collect();
    assert!(unused.is_empty(), "fillers no fragment places: {unused:?}");
    parts.join("\n\n\n") + "\n"
}

/// Which of `src`'s lines a model keeps (marker lines never), for the test that every line of
/// Python is some model's.
#[cfg(test)]
pub(crate) fn kept_lines(file: &str, src: &str, p: &Pieces) -> Vec<bool> {
    let mut kept = vec![false; src.split_inclusive('\n').count()];
    walk(file, src, p, |i, _| {
        if let Some(i) = i {
            kept[i] = true;
        }
    });
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(on: &[(&'static str, bool)]) -> Pieces {
        let mut p = Pieces::default();
        for &(n, v) in on {
            p.set(n, v);
        }
        p
    }

    #[test]
    fn keeps_the_sections_whose_pieces_are_on() {
        let src = "def f(x):\n    y = x\n#: a\n    y = y + 1\n#: !b\n    y = y * 2\n#.\n#.\n#: !a\n    y = -y\n#.\n#= tail\n    return y\n";
        let mut p = pieces(&[("a", true), ("b", false)]);
        p.fill("tail", "    y = y - 3\n".into());
        assert_eq!(
            join(&[("f.py", src)], &p),
            "def f(x):\n    y = x\n    y = y + 1\n    y = y * 2\n    y = y - 3\n    return y\n"
        );
        let mut p = pieces(&[("a", false), ("b", true)]);
        p.fill("tail", String::new());
        assert_eq!(
            join(&[("f.py", src)], &p),
            "def f(x):\n    y = x\n    y = -y\n    return y\n"
        );
    }

    #[test]
    fn fragments_are_two_blank_lines_apart_and_an_empty_one_leaves_none() {
        let p = pieces(&[("a", false)]);
        let got = join(
            &[
                ("x.py", "x = 1\n"),
                ("a.py", "#: a\na = 2\n#.\n"),
                ("y.py", "y = 3\n\n"),
            ],
            &p,
        );
        assert_eq!(got, "x = 1\n\n\ny = 3\n");
    }

    #[test]
    #[should_panic(expected = "piece `c` is not decided")]
    fn an_undecided_piece_is_a_mistake() {
        join(&[("f.py", "#: c\nx = 1\n#.\n")], &pieces(&[]));
    }

    #[test]
    #[should_panic(expected = "fillers no fragment places")]
    fn an_unused_filler_is_a_mistake() {
        let mut p = pieces(&[]);
        p.fill("x", "1".into());
        join(&[("f.py", "y = 2\n")], &p);
    }
}
