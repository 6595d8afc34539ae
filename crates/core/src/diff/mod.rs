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
fn key(title: &str) -> String {
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

fn steps(a: &Graph, b: &Graph) -> Vec<StepPair> {
    let (va, vb) = (a.steps(), b.steps());
    let ka: Vec<String> = va.iter().map(|v| key(&v.step.title)).collect();
    let kb: Vec<String> = vb.iter().map(|v| key(&v.step.title)).collect();
    let mut out = Vec::new();
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, &ka, &kb) {
        match op {
            similar::DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => {
                for i in 0..len {
                    let (x, y) = (&va[old_index + i], &vb[new_index + i]);
                    let (sx, sy) = (side(a, x), side(b, y));
                    let status = if op_kind(x.step.op) != op_kind(y.step.op)
                        || shape_of(&sx.equation) != shape_of(&sy.equation)
                    {
                        StepStatus::Mechanism
                    } else if sx.output != sy.output || sx.equation != sy.equation {
                        StepStatus::Dims
                    } else {
                        StepStatus::Same
                    };
                    out.push(StepPair {
                        status,
                        a: Some(sx),
                        b: Some(sy),
                    });
                }
            }
            similar::DiffOp::Delete {
                old_index, old_len, ..
            } => {
                for v in &va[old_index..old_index + old_len] {
                    out.push(StepPair {
                        status: StepStatus::OnlyA,
                        a: Some(side(a, v)),
                        b: None,
                    });
                }
            }
            similar::DiffOp::Insert {
                new_index, new_len, ..
            } => {
                for v in &vb[new_index..new_index + new_len] {
                    out.push(StepPair {
                        status: StepStatus::OnlyB,
                        a: None,
                        b: Some(side(b, v)),
                    });
                }
            }
            similar::DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                for v in &va[old_index..old_index + old_len] {
                    out.push(StepPair {
                        status: StepStatus::OnlyA,
                        a: Some(side(a, v)),
                        b: None,
                    });
                }
                for v in &vb[new_index..new_index + new_len] {
                    out.push(StepPair {
                        status: StepStatus::OnlyB,
                        a: None,
                        b: Some(side(b, v)),
                    });
                }
            }
        }
    }
    out
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
