//! What differs between two models: their architecture facts (mechanisms, sizes, settings) read
//! from the Spec each Graph was built from, their steps aligned one to one, and their figures
//! side by side. `anatomy diff` prints it; `--json` gives it as data.

use crate::error::Result;
use crate::graph::{Graph, Op};
use crate::spec::Spec;
use crate::stats::{self, Stats};
use serde::Serialize;

mod facts;
pub use facts::facts;

/// What sort of fact it is: a different mechanism makes a different architecture; sizes and
/// settings (numbers a config tunes) do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Mechanism,
    Size,
    Setting,
}

/// One fact of a model: a key, a label for prose, and its value as text ("none", "yes"/"no" for
/// a feature that is there or not).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fact {
    pub key: &'static str,
    pub label: &'static str,
    pub kind: Kind,
    pub value: String,
}
/// One fact that differs (or exists in one model only: `None` on the other side).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub key: &'static str,
    pub label: &'static str,
    pub kind: Kind,
    pub a: Option<String>,
    pub b: Option<String>,
    /// The sizes that come with a mechanism present on one side only ("8 experts, 2 active").
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub with: Vec<String>,
}

impl Change {
    /// In words, as a change from A to B.
    pub fn phrase(&self) -> String {
        let with = if self.with.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.with.join(", "))
        };
        self.bare_phrase() + &with
    }

    fn bare_phrase(&self) -> String {
        // "no", "none" and a missing fact all say the thing is absent.
        let present = |v: &Option<String>| v.clone().filter(|v| v != "no" && v != "none");
        let raw = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
        let label = self.label;
        match (present(&self.a), present(&self.b)) {
            (None, Some(b)) if b == "yes" => format!("{label} added"),
            (None, Some(b)) => format!("{label} ({b}) added"),
            (Some(_), None) => format!("{label} removed"),
            (Some(a), Some(b)) if self.kind == Kind::Size && label.ends_with('s') => {
                format!("{b} {label} instead of {a}")
            }
            (Some(a), Some(b)) => format!("{label} {b} instead of {a}"),
            // Absent on both sides, spelled differently.
            (None, None) => format!("{label} {} instead of {}", raw(&self.b), raw(&self.a)),
        }
    }
}

/// How a pair of aligned steps compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Same,
    /// Same step, another operation or equation (RMSNorm for LayerNorm, GELU for SiLU).
    Mechanism,
    /// Same step and operation, other dims.
    Dims,
    OnlyA,
    OnlyB,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepSide {
    pub number: usize,
    pub title: String,
    pub equation: String,
    /// Output dims, outermost first (`[seq_len, 4096]`).
    pub output: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepPair {
    pub status: StepStatus,
    pub a: Option<StepSide>,
    pub b: Option<StepSide>,
}

/// One figure of both models.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure {
    pub name: String,
    pub a: u64,
    pub b: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diff {
    pub a: String,
    pub b: String,
    pub family_a: String,
    pub family_b: String,
    /// No mechanism differs: the two differ in sizes and settings only, if at all.
    pub same_architecture: bool,
    pub summary: String,
    pub changes: Vec<Change>,
    pub steps: Vec<StepPair>,
    /// FLOPs are compared at this context (the shorter model's maximum, at most 4096).
    pub context: u64,
    pub figures: Vec<Figure>,
}

/// A step's identity for alignment: its title without the norm's kind or a layer count, so
/// "Attention RMSNorm" pairs with "Attention LayerNorm".
pub(crate) fn key(title: &str) -> String {
    let t = title.split(" (").next().unwrap_or(title);
    t.replace("RMSNorm", "norm").replace("LayerNorm", "norm")
}

/// An equation with its numbers masked: what is computed, not at what size.
fn shape_of(eq: &str) -> String {
    let mut out = String::new();
    let mut digits = false;
    for c in eq.chars() {
        if c.is_ascii_digit() || (digits && c == '.') {
            if !digits {
                out.push('#');
            }
            digits = true;
        } else {
            digits = false;
            out.push(c);
        }
    }
    out
}

fn op_kind(op: Op) -> std::mem::Discriminant<Op> {
    std::mem::discriminant(&op)
}

/// A step as the gallery's compare page pairs it (`compare_panel.js`): its key, its
/// operation's kind (the variant's name, as `op_kind` tells them apart), its equation, its
/// output's dims, its number and its title.
pub(crate) fn step_json(g: &Graph, v: &crate::graph::Visit) -> serde_json::Value {
    let s = side(g, v);
    let op = format!("{:?}", v.step.op);
    let op = op
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or_default();
    serde_json::json!([key(&s.title), op, s.equation, s.output, s.number, s.title])
}

fn side(g: &Graph, v: &crate::graph::Visit) -> StepSide {
    let t = g.tensor(v.step.output);
    StepSide {
        number: v.step.number,
        title: v.step.title.clone(),
        equation: v.step.equation.clone(),
        output: t
            .dims
            .iter()
            .rev()
            .map(|d| crate::render::report::dim_name(&g.spec, d))
            .collect(),
    }
}

/// A step of each side paired, or one side's step with no counterpart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Aligned {
    Both(usize, usize),
    OnlyA(usize),
    OnlyB(usize),
}

/// The longest common subsequence of two key lists, walked from the start: equal keys pair,
/// else the side whose next key the rest can spare is left out. Between two pairs, A's
/// left-out steps come before B's. The gallery's compare page walks it alike in JavaScript
/// (`render/html/compare_panel.js`), so both pair steps alike; `similar`'s Myers diff, which
/// this replaced, breaks ties in a way a page could not repeat without its code.
pub(crate) fn align(a: &[String], b: &[String]) -> Vec<Aligned> {
    let (n, m) = (a.len(), b.len());
    // rest[i][j]: how many keys a[i..] and b[j..] have in common, in order.
    let mut rest = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            rest[i][j] = if a[i] == b[j] {
                rest[i + 1][j + 1] + 1
            } else {
                rest[i + 1][j].max(rest[i][j + 1])
            };
        }
    }
    let mut out = Vec::new();
    let (mut only_a, mut only_b) = (Vec::new(), Vec::new());
    let flush = |out: &mut Vec<_>, only_a: &mut Vec<usize>, only_b: &mut Vec<usize>| {
        out.extend(only_a.drain(..).map(Aligned::OnlyA));
        out.extend(only_b.drain(..).map(Aligned::OnlyB));
    };
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            flush(&mut out, &mut only_a, &mut only_b);
            out.push(Aligned::Both(i, j));
            (i, j) = (i + 1, j + 1);
        } else if j == m || (i < n && rest[i + 1][j] >= rest[i][j + 1]) {
            only_a.push(i);
            i += 1;
        } else {
            only_b.push(j);
            j += 1;
        }
    }
    flush(&mut out, &mut only_a, &mut only_b);
    out
}

/// How two paired steps differ: another operation or another equation's form is another
/// mechanism; other numbers in it, or another output shape, other sizes.
fn pair_status(
    x: &crate::graph::Step,
    y: &crate::graph::Step,
    sx: &StepSide,
    sy: &StepSide,
) -> StepStatus {
    if op_kind(x.op) != op_kind(y.op) || shape_of(&sx.equation) != shape_of(&sy.equation) {
        StepStatus::Mechanism
    } else if sx.output != sy.output || sx.equation != sy.equation {
        StepStatus::Dims
    } else {
        StepStatus::Same
    }
}

fn steps(a: &Graph, b: &Graph) -> Vec<StepPair> {
    let (va, vb) = (a.steps(), b.steps());
    let ka: Vec<String> = va.iter().map(|v| key(&v.step.title)).collect();
    let kb: Vec<String> = vb.iter().map(|v| key(&v.step.title)).collect();
    align(&ka, &kb)
        .into_iter()
        .map(|pair| match pair {
            Aligned::Both(i, j) => {
                let (sx, sy) = (side(a, &va[i]), side(b, &vb[j]));
                StepPair {
                    status: pair_status(va[i].step, vb[j].step, &sx, &sy),
                    a: Some(sx),
                    b: Some(sy),
                }
            }
            Aligned::OnlyA(i) => StepPair {
                status: StepStatus::OnlyA,
                a: Some(side(a, &va[i])),
                b: None,
            },
            Aligned::OnlyB(j) => StepPair {
                status: StepStatus::OnlyB,
                a: None,
                b: Some(side(b, &vb[j])),
            },
        })
        .collect()
}

fn changes(a: &Spec, b: &Spec) -> Vec<Change> {
    let (fa, fb) = (facts(a), facts(b));
    let mut out = Vec::new();
    for x in &fa {
        let y = fb.iter().find(|y| y.key == x.key);
        if y.is_none() && (x.value == "no" || x.value == "none") {
            continue; // absent in A, and in B without a value at all
        }
        if y.is_none_or(|y| y.value != x.value) {
            out.push(Change {
                key: x.key,
                label: x.label,
                kind: x.kind,
                a: Some(x.value.clone()),
                b: y.map(|y| y.value.clone()),
                with: Vec::new(),
            });
        }
    }
    for y in fb.iter().filter(|y| !fa.iter().any(|x| x.key == y.key)) {
        if y.value == "no" || y.value == "none" {
            continue; // absent in B, and in A without a value at all: nothing changed
        }
        out.push(Change {
            key: y.key,
            label: y.label,
            kind: y.kind,
            a: None,
            b: Some(y.value.clone()),
            with: Vec::new(),
        });
    }
    // A fact that exists on one side only because a mechanism is absent on the other (expert
    // counts without MoE, MLA ranks without MLA) is said by that mechanism's change.
    let parents = [
        ("moe.groups", "moe.grouped"),
        ("moe.", "moe"),
        ("mlp.intermediate", "moe"),
        ("mlp.intermediate", "moe.dense_layers"),
        ("attention.v_head_dim", "attention.kind"),
        ("mla.", "attention.kind"),
        ("rope.factor", "rope.scaling"),
        ("rope.", "position"),
        ("attention.window", "attention.spans"),
        ("attention.local_layers", "attention.spans"),
        // The sizes of a mixer one model lacks: said with the mixers' change.
        ("attention.heads", "mixer"),
        ("attention.kv_heads", "mixer"),
        ("attention.head_dim", "mixer"),
        ("ssm.", "mixer"),
        ("mlstm.", "mixer"),
    ];
    let parent_of = |c: &Change| {
        if c.a.is_some() && c.b.is_some() {
            return None;
        }
        parents
            .iter()
            .find(|(p, parent)| c.key.starts_with(p) && out_has(&fa, &fb, parent))
            .map(|(_, parent)| *parent)
    };
    let (children, mut kept): (Vec<Change>, Vec<Change>) =
        out.into_iter().partition(|c| parent_of(c).is_some());
    let mut said: Vec<(&str, String)> = Vec::new();
    let absent = |v: Option<&String>| v.is_none_or(|v| v == "no" || v == "none");
    for c in children {
        let parent = parent_of(&c).expect("partitioned on it");
        // A size that comes with the parent's mechanism, on the side that has it.
        let p = kept.iter().find(|k| k.key == parent);
        let side_ok = p.is_none_or(|p| {
            (c.a.is_some() && !absent(p.a.as_ref())) || (c.b.is_some() && !absent(p.b.as_ref()))
        });
        let v = c.a.as_deref().or(c.b.as_deref()).unwrap_or_default();
        if c.kind == Kind::Size && side_ok && !matches!(v, "0" | "no" | "none") {
            said.push((parent, format!("{} {v}", c.label)));
        }
    }
    for (parent, what) in said {
        if let Some(p) = kept.iter_mut().find(|c| c.key == parent) {
            p.with.push(what);
        }
    }
    kept
}

/// Whether the fact `key` differs between the two lists.
fn out_has(fa: &[Fact], fb: &[Fact], key: &str) -> bool {
    let v = |f: &[Fact]| f.iter().find(|x| x.key == key).map(|x| x.value.clone());
    v(fa) != v(fb)
}

fn figures(sa: &Stats, sb: &Stats) -> Vec<Figure> {
    let mut out = vec![
        Figure {
            name: "total parameters".into(),
            a: sa.total_params,
            b: sb.total_params,
        },
        Figure {
            name: "active parameters".into(),
            a: sa.active_params,
            b: sb.active_params,
        },
    ];
    let keys: std::collections::BTreeSet<&String> = sa
        .params_by_component
        .keys()
        .chain(sb.params_by_component.keys())
        .collect();
    for k in keys {
        let (a, b) = (
            sa.params_by_component.get(k).copied().unwrap_or(0),
            sb.params_by_component.get(k).copied().unwrap_or(0),
        );
        // A recurrent mixer's row only where one of the two has one.
        if k == "mixer" && a == 0 && b == 0 {
            continue;
        }
        out.push(Figure {
            name: format!("  {k}"),
            a,
            b,
        });
    }
    // Each tower of either model, by what it is.
    let towers: std::collections::BTreeSet<&str> = (sa.towers.iter().chain(&sb.towers))
        .map(|t| t.what.as_str())
        .collect();
    for what in towers {
        let of = |s: &Stats| {
            (s.towers.iter())
                .find(|t| t.what == what)
                .and_then(|t| t.params)
                .unwrap_or(0)
        };
        out.push(Figure {
            name: format!("    {what}"),
            a: of(sa),
            b: of(sb),
        });
    }
    out.extend([Figure {
        name: "KV cache per token (bf16 bytes)".into(),
        a: sa.kv_cache.bytes_per_token_bf16,
        b: sb.kv_cache.bytes_per_token_bf16,
    }]);
    if sa.state.values_per_sequence > 0 || sb.state.values_per_sequence > 0 {
        out.push(Figure {
            name: "recurrent state per sequence (bf16 bytes)".into(),
            a: sa.state.bytes_bf16,
            b: sb.state.bytes_bf16,
        });
    }
    out.extend([
        Figure {
            name: "weights in bf16 (bytes)".into(),
            a: sa.weight_bytes.bf16,
            b: sb.weight_bytes.bf16,
        },
        Figure {
            name: "decode FLOPs per token".into(),
            a: sa.flops.decode_per_token,
            b: sb.flops.decode_per_token,
        },
    ]);
    out
}

fn summary(a: &Spec, b: &Spec, changes: &[Change]) -> String {
    let (na, nb) = (&a.name, &b.name);
    if changes.is_empty() {
        return format!("{nb} is {na}: the same architecture with the same sizes and settings.");
    }
    let mechanisms: Vec<String> = changes
        .iter()
        .filter(|c| c.kind == Kind::Mechanism)
        .map(Change::phrase)
        .collect();
    let rest: Vec<String> = changes
        .iter()
        .filter(|c| c.kind != Kind::Mechanism)
        .map(Change::phrase)
        .collect();
    if mechanisms.is_empty() {
        let family = if a.family == b.family {
            format!(" ({})", a.family)
        } else {
            String::new()
        };
        return format!(
            "Same architecture{family}; {nb} is {na} with {}.",
            rest.join(", ")
        );
    }
    let who = |s: &Spec| {
        if a.family == b.family {
            s.name.clone()
        } else {
            format!("{} ({})", s.name, s.family)
        }
    };
    let mut text = format!("{} is {} with {}", who(b), who(a), mechanisms.join(", "));
    if !rest.is_empty() {
        text += &format!("; and {}", rest.join(", "));
    }
    text + "."
}

/// The difference from A to B.
pub fn diff(a: &Graph, b: &Graph) -> Result<Diff> {
    let context = a.spec.context.min(b.spec.context).min(4096);
    let (sa, sb) = (
        stats::stats(a, Some(context))?,
        stats::stats(b, Some(context))?,
    );
    let changes = changes(&a.spec, &b.spec);
    Ok(Diff {
        a: a.spec.name.clone(),
        b: b.spec.name.clone(),
        family_a: a.spec.family.clone(),
        family_b: b.spec.family.clone(),
        same_architecture: !changes.iter().any(|c| c.kind == Kind::Mechanism),
        summary: summary(&a.spec, &b.spec, &changes),
        changes,
        steps: steps(a, b),
        context,
        figures: figures(&sa, &sb),
    })
}

#[cfg(test)]
mod tests {
    use super::{align, Aligned};
    use proptest::prelude::*;

    proptest! {
        /// `align` keeps every key of each side once, in order; pairs only equal keys; and pairs
        /// as many as a longest common subsequence has (Myers' minimal diff, from `similar`,
        /// counts the same).
        #[test]
        fn align_pairs_a_longest_common_subsequence(
            a in proptest::collection::vec(0u8..4, 0..24),
            b in proptest::collection::vec(0u8..4, 0..24),
        ) {
            let (a, b): (Vec<String>, Vec<String>) = (
                a.iter().map(|k| k.to_string()).collect(),
                b.iter().map(|k| k.to_string()).collect(),
            );
            let out = align(&a, &b);
            let (mut seen_a, mut seen_b, mut pairs) = (Vec::new(), Vec::new(), 0);
            for step in &out {
                match *step {
                    Aligned::Both(i, j) => {
                        prop_assert_eq!(&a[i], &b[j]);
                        seen_a.push(i);
                        seen_b.push(j);
                        pairs += 1;
                    }
                    Aligned::OnlyA(i) => seen_a.push(i),
                    Aligned::OnlyB(j) => seen_b.push(j),
                }
            }
            prop_assert_eq!(seen_a, (0..a.len()).collect::<Vec<_>>());
            prop_assert_eq!(seen_b, (0..b.len()).collect::<Vec<_>>());
            let myers: usize = similar::capture_diff_slices(similar::Algorithm::Myers, &a, &b)
                .iter()
                .map(|op| match op {
                    similar::DiffOp::Equal { len, .. } => *len,
                    similar::DiffOp::Delete { .. }
                    | similar::DiffOp::Insert { .. }
                    | similar::DiffOp::Replace { .. } => 0,
                })
                .sum();
            prop_assert_eq!(pairs, myers);
        }
    }
}
