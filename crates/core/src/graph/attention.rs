//! The attention sublayer: grouped-query attention (MHA, GQA, MQA as its cases) and multi-head
//! latent attention, drawn head by head with the checkpoint rows each head reads.

use super::build::{n, Builder, Draft, Linear};
use super::*;
use crate::fmt::float as fmt_f;
use crate::naming::Role;
use crate::spec::{AttnKind, AttnSpan, Position, QkNorm, Qkv, QueryScale, ScaleForm};

/// A bias-free attention matmul (MLA's, DeepSeek-V4's).
#[allow(clippy::too_many_arguments)]
pub(super) fn lin<'a>(
    role: Role,
    title: &str,
    w: &'a str,
    out: &'a str,
    input: &'a str,
    rows: u64,
    cols: u64,
    stored_rows: u64,
    block: Option<String>,
    cached: bool,
    operation: String,
) -> Linear<'a> {
    Linear {
        role,
        title: title.into(),
        w,
        out,
        input,
        rows,
        cols,
        stored_rows,
        block,
        bias: false,
        component: Component::Attention,
        category: Category::Attention,
        cached,
        operation,
    }
}

/// The rows `[off + size·idx, off + size·(idx+1))` in Python slice syntax.
pub(super) fn rows(off: u64, size: u64, idx: &str) -> String {
    let idx_p = if idx.contains(['+', '*']) {
        format!("({idx})")
    } else {
        idx.to_string()
    };
    let at = |end: &str| {
        if off == 0 {
            end.to_string()
        } else {
            format!("{off}+{end}")
        }
    };
    at(&format!("{size}*{idx_p}")) + ":" + &at(&format!("{size}*({idx}+1)"))
}

/// A Q, K or V step whose output is clamped to [−c, c] (OLMo's `clip_qkv`).
fn clipped(mut node: Node, clip: Option<f64>) -> Node {
    if let (Node::Step(s), Some(c)) = (&mut node, clip) {
        let c = fmt_f(c);
        s.operation += &format!(", then clamp every entry to [−{c}, {c}]");
        s.equation += &format!(", clamped to [−{c}, {c}]");
    }
    node
}

impl Builder<'_> {
    pub(super) fn rope_text(&self) -> String {
        self.rope_text_paired(None)
    }

    /// `rope_text`, for a rotation that pairs dims its own way (`Some(interleaved)`) rather than
    /// as the model's attention does.
    pub(super) fn rope_text_paired(&self, interleaved: Option<bool>) -> String {
        match &self.spec.position {
            Position::Rope(r) => {
                let mut s = r.describe();
                if r.partial < 1.0 {
                    s += &format!(", first {}% of dims rotated", fmt_f(r.partial * 100.0));
                }
                if let Some(p) = r.sliding_partial {
                    s += &format!(" ({}% in sliding layers)", fmt_f(p * 100.0));
                }
                if interleaved.unwrap_or(r.interleaved) {
                    s += ", interleaved pairs";
                }
                if r.reversed {
                    s += ", rotated backwards (sin negated)";
                }
                if r.start != 0 {
                    s += &format!(", positions counted from {}", r.start);
                }
                s
            }
            Position::Learned => "learned positions".into(),
            Position::Sinusoidal(_) => "sinusoidal positions".into(),
            Position::Alibi(_) => "ALiBi".into(),
            Position::None => "no positions".into(),
            Position::Buckets(_) => "a learned bias per bucket of distance".into(),
        }
    }

    /// The spans of the layers being built, in words.
    fn window_text(&self) -> String {
        let mut kinds: Vec<AttnSpan> = self
            .layers
            .iter()
            .filter_map(|b| self.spec.plan[b as usize].span())
            .collect();
        kinds.sort();
        kinds.dedup();
        let describe = |k: &AttnSpan| match k {
            AttnSpan::Full => "full causal".to_string(),
            AttnSpan::Whole => "every key both ways".to_string(),
            AttnSpan::Sliding(w) => format!("only the last {w} keys"),
            AttnSpan::Chunked(c) => format!("only keys in the same {c}-token chunk"),
        };
        match kinds.as_slice() {
            [AttnSpan::Full] | [] => String::new(),
            [one] => format!("; {}", describe(one)),
            _ => {
                let parts: Vec<String> = kinds
                    .iter()
                    .map(|k| {
                        format!(
                            "{} in layers {}",
                            describe(k),
                            LayerSet::from_fn(self.spec.layers, |b| {
                                self.layers.contains(b)
                                    && self.spec.plan[b as usize].span() == Some(*k)
                            })
                        )
                    })
                    .collect();
                format!("; {}", parts.join(", "))
            }
        }
    }

    pub(super) fn rope_step(
        &mut self,
        (which, point): (&str, Point),
        input: &str,
        out: &str,
        dim: u64,
        cached: bool,
    ) -> Node {
        let rope = self.rope_text();
        let o = if cached {
            self.cached(out, self.seq(dim))
        } else {
            self.act(out, self.seq(dim))
        };
        let node = self
            .step(Draft {
                title: format!("{which} rotary position encoding"),
                op: Op::Rope,
                category: Category::Attention,
                inputs: vec![],
                output: o,
                operation: format!(
                    "Rotate pairs of {which}'s dims by angles that grow with position"
                ),
                equation: format!("{out} = RoPE({input}, pos), {rope}"),
            })
            .at(point);
        let layers = self.spec.layers_where(|l| l.rope);
        self.gate(node, &layers)
    }

    /// Where head `idx` of Q, K or V sits in the checkpoint: the stored tensor's role and rows,
    /// and the rows read, in Python slice syntax (`None`: all of them). `idx` is the head's
    /// index as the frames name it: `i` (a head, or a group's K/V), `j` (MQA's query heads),
    /// `{g}*i+j` (a group's query head); `None` for MQA's single K/V head.
    fn qkv_rows(&self, role: Role, idx: Option<&str>) -> (Role, u64, Option<String>) {
        let a = &self.attn;
        let (hd, g) = (a.head_dim, a.heads / a.kv_heads);
        let (q, kv) = (a.heads * hd, a.kv_heads * hd);
        // An output gate stored first in the fused tensor (HRM) comes before every query.
        let gate = if a.out_gate.is_some_and(|g| g.before_qkv()) {
            q
        } else {
            0
        };
        let fused = gate + q + 2 * kv;
        if a.moa.is_some() {
            // A chosen expert's query rows for K/V group i; K then V in one projection.
            let head = |off| match idx {
                Some(i) => rows(off, hd, i),
                None => format!("{off}:{}", off + hd),
            };
            return match role {
                Role::Q if a.kind == AttnKind::Mqa => (Role::AttnExpertQ, kv, None),
                Role::Q => (Role::AttnExpertQ, kv, Some(rows(0, hd, "i"))),
                Role::K => (Role::Kv, 2 * kv, Some(head(0))),
                Role::V => (Role::Kv, 2 * kv, Some(head(kv))),
                other => unreachable!("{other:?} is not one of Q, K, V"),
            };
        }
        match a.qkv {
            Qkv::Separate if role == Role::Q && a.out_gate.is_some_and(|g| g.in_query()) => {
                // Each head's query rows, then its gate's.
                let block = match idx {
                    Some(i) => format!("{}*{i}:{}*{i}+{hd}", 2 * hd, 2 * hd),
                    None => format!("0:{hd}"),
                };
                (role, 2 * q, Some(block))
            }
            Qkv::Separate => {
                // V's heads may be narrower than Q's and K's (MiMo-V2-Flash); the fused layouts
                // below only ever hold heads of one width.
                let hd = if role == Role::V { a.v_head_dim } else { hd };
                let stored = match role {
                    Role::Q => q,
                    Role::K => kv,
                    Role::V => a.kv_heads * hd,
                    other => unreachable!("{other:?} is not one of Q, K, V"),
                };
                let block = match idx {
                    Some(i) => Some(rows(0, hd, i)),
                    None if stored == hd => None,
                    None => Some(format!("0:{hd}")),
                };
                (role, stored, block)
            }
            Qkv::Stacked => {
                let off = gate
                    + match role {
                        Role::Q => 0,
                        Role::K => q,
                        Role::V => q + kv,
                        other => unreachable!("{other:?} is not one of Q, K, V"),
                    };
                let block = match idx {
                    Some(i) => rows(off, hd, i),
                    None => format!("{off}:{}", off + hd),
                };
                (Role::Qkv, fused, Some(block))
            }
            Qkv::Parts(parts) => {
                // Part p holds the queries, then the values, then the keys of heads
                // p·per … (p+1)·per − 1, `per` heads a part.
                let per = a.heads / parts;
                let share = per * hd;
                let off = match role {
                    Role::Q => 0,
                    Role::V => share,
                    Role::K => 2 * share,
                    other => unreachable!("{other:?} is not one of Q, K, V"),
                };
                let i = idx.unwrap_or("0");
                let base = format!("{}*({i}//{per})+{off}+{hd}*({i}%{per})", 3 * share);
                (Role::Qkv, fused, Some(format!("{base}:{base}+{hd}")))
            }
            Qkv::Grouped => {
                // Group i holds its g query heads, then its key, then its value: (g + 2) heads.
                let stride = (g + 2) * hd;
                let (group, at) = match (role, a.kind) {
                    (Role::Q, AttnKind::Mqa) => (None, Some("j".to_string())),
                    (Role::Q, AttnKind::Mha) => (Some("i"), None),
                    (Role::Q, AttnKind::Gqa | AttnKind::Mla) => (Some("i"), Some("j".to_string())),
                    (Role::K, _) => (idx, Some(g.to_string())),
                    _ => (idx, Some((g + 1).to_string())),
                };
                let mut terms = Vec::new();
                if let Some(group) = group {
                    terms.push(format!("{stride}*{group}"));
                }
                match at.as_deref() {
                    None => {}
                    Some(n) if n.parse::<u64>().is_ok() => {
                        terms.push((n.parse::<u64>().unwrap_or(0) * hd).to_string())
                    }
                    Some(j) => terms.push(format!("{hd}*{j}")),
                }
                let block = match terms.join("+") {
                    base if base.is_empty() => format!("0:{hd}"),
                    base => format!("{base}:{base}+{hd}"),
                };
                (Role::Qkv, fused, Some(block))
            }
        }
    }

    /// Projection of one head (`idx` names it; `None` for the single K/V head of MQA).
    fn head_projection(
        &mut self,
        (role, point): (Role, Point),
        letter: &str,
        idx: Option<&str>,
        input: &str,
        cached: bool,
    ) -> Node {
        let a = &self.attn;
        let hd = if role == Role::V {
            a.v_head_dim
        } else {
            a.head_dim
        };
        let v_scale = a.v_scale;
        let (stored_role, stored_rows, block) = self.qkv_rows(role, idx);
        let routed = stored_role == Role::AttnExpertQ;
        let w = if routed {
            "Wqⱼ".to_string()
        } else {
            format!("W{}", letter.to_lowercase())
        };
        // The clamp follows the projection, or the whole-projection norm where Q and K have one.
        let clip = a
            .clip_qkv
            .filter(|_| role == Role::V || self.attn.qk_norm != QkNorm::Full);
        // A mixture of attention heads' query rows belong to the expert chosen for slot j.
        let kept = std::mem::replace(
            &mut self.experts,
            a.moa.filter(|_| routed).map(|m| (m.experts, m.top_k)),
        );
        let mut node = self.linear(Linear {
            role: stored_role,
            title: if routed {
                "Q projection (slot j's expert)".into()
            } else {
                format!("{letter} projection")
            },
            w: &w,
            out: letter,
            input,
            rows: hd,
            cols: self.attn_in,
            stored_rows,
            block,
            bias: self.attn.qkv_bias,
            component: Component::Attention,
            category: Category::Attention,
            cached,
            operation: format!("Project the normalized input to this head's {hd}-dim {letter}"),
        });
        self.experts = kept;
        if let (Node::Step(s), true) = (&mut node, role == Role::V && v_scale != 1.0) {
            let c = fmt_f(v_scale);
            s.operation += &format!(", then scale it by {c}");
            s.equation += &format!(", times {c}");
        }
        // A routed expert's query rows are one slot's, not the layer's Q.
        let node = if routed { node } else { node.at(point) };
        clipped(node, clip)
    }

    fn qk_norm(
        &mut self,
        which: &str,
        role: Role,
        idx: Option<&str>,
        input: &str,
        out: &str,
    ) -> Node {
        let a = self.attn.clone();
        let hd = a.head_dim;
        let heads = if which == "Q" { a.heads } else { a.kv_heads };
        let gamma = if which == "Q" { "γq" } else { "γk" };
        if a.qk_norm == QkNorm::HeadWeights {
            // This head's row of the stored [heads, head_dim] weight, or its own norm's.
            let (shape, slice) = if crate::naming::qk_norm_per_head(self.spec.layout) {
                (vec![hd], None)
            } else {
                (
                    vec![heads, hd],
                    Some(format!("[{}, :]", idx.unwrap_or("0"))),
                )
            };
            let p = self.param(role, false, shape, Component::Norm, true);
            let w = self.weight(p, gamma, [n(hd), n(1)], slice);
            let o = self.act(out, self.seq(hd));
            return self.step(Draft {
                title: format!("{which} LayerNorm"),
                op: Op::Norm,
                category: Category::Attention,
                inputs: vec![w],
                output: o,
                operation: format!("Normalize each head's {which} over its {hd} dims (LayerNorm), scaled by a weight of this head's own"),
                equation: format!(
                    "{out} = {gamma}[h] ⊙ ({input} − mean) / √(var({input}) + ε), ε = {}",
                    fmt_f(self.spec.norm.eps)
                ),
            });
        }
        let title = format!("{which} {}", self.norm_name());
        let full = a.qk_norm == QkNorm::Full;
        let block = if full {
            Some((
                heads * hd,
                idx.map_or(format!("0:{hd}"), |i| rows(0, hd, i)),
            ))
        } else {
            None
        };
        let mut node = self.norm_step(&title, role, gamma, input, out, hd, true, block);
        if let Node::Step(s) = &mut node {
            s.category = Category::Attention;
            s.operation = if full {
                format!("Normalize {which} over all {} dims of every head together, then scale this head's {hd}", heads * hd)
            } else {
                format!("Normalize each head's {which} over its {hd} dims (one weight shared by all heads)")
            };
            if full {
                s.equation = s.equation.replace(
                    &format!("mean({input}²)"),
                    &format!("mean over all heads of {which}²"),
                );
            }
        }
        clipped(node, a.clip_qkv.filter(|_| full))
    }

    /// Queries scaled up with position (Llama 4's attention temperature, Ministral 3), in the
    /// layers the scale applies to.
    pub(super) fn query_scale(&mut self, input: &str, out: &str, qs: QueryScale) -> Node {
        let hd = self.attn.head_dim;
        let o = self.act(out, self.seq(hd));
        let shifted = match qs.shift {
            0 => "p".to_string(),
            s => format!("p + {s}"),
        };
        let mut node = self.step(Draft {
            title: "Query temperature".into(),
            op: Op::Scale,
            category: Category::Attention,
            inputs: vec![],
            output: o,
            operation: match qs.form {
                ScaleForm::Stepped => format!(
                    "Scale each query up with its position: by 1 until position {}, then a little more every {} positions",
                    qs.length - qs.shift.min(qs.length),
                    qs.length
                ),
                ScaleForm::Floored => format!(
                    "Scale each query up with its position: by 1 until position {}, then by the logarithm of how far past it, {} at position {}",
                    qs.length - qs.shift.min(qs.length),
                    fmt_f(qs.at(32 * qs.length - qs.shift.min(qs.length))),
                    32 * qs.length - qs.shift.min(qs.length),
                ),
                ScaleForm::Power => format!(
                    "Scale each query up with its position, slowly: by {} at position {} and {} at position {}, so that attention stays sharp over long contexts",
                    fmt_f(qs.at(qs.length - qs.shift.min(qs.length))),
                    qs.length - qs.shift.min(qs.length),
                    fmt_f(qs.at(32 * qs.length - qs.shift.min(qs.length))),
                    32 * qs.length - qs.shift.min(qs.length),
                ),
            },
            equation: match qs.form {
                ScaleForm::Stepped => format!(
                    "{out} = {input} · (1 + {} · ln(1 + ⌊({shifted}) / {}⌋)), p the query's position",
                    fmt_f(qs.beta),
                    qs.length
                ),
                ScaleForm::Floored => format!(
                    "{out} = {input} · (1 + {} · ln(max(({shifted}) / {}, 1))), p the query's position",
                    fmt_f(qs.beta),
                    qs.length
                ),
                ScaleForm::Power => format!(
                    "{out} = {input} · (1 + ({shifted}) / {})^{}, p the query's position",
                    qs.length,
                    fmt_f(qs.beta)
                ),
            },
        }).at(Point::QScaled);
        let layers = self.spec.layers_where(|l| qs.applies(l));
        if let Node::Step(s) = &mut node {
            if layers.len() != self.spec.layers {
                s.title += &format!(" ({} of {} layers)", layers.len(), self.spec.layers);
                s.equation += &format!(
                    "; identity in layers {}",
                    self.spec.layers_where(|l| !qs.applies(l))
                );
                s.layers = Some(layers);
            }
        }
        node
    }

    /// Weightless RMS normalization of a head after RoPE, in the layers that have RoPE (Llama 4).
    /// nGPT's projection of each head onto the unit sphere, before RoPE (Dory).
    fn unit_norm(&mut self, which: &str, input: &str, out: &str, cached: bool) -> Node {
        let hd = self.attn.head_dim;
        let o = if cached {
            self.cached(out, self.seq(hd))
        } else {
            self.act(out, self.seq(hd))
        };
        self.step(Draft {
            title: format!("{which} L2 norm"),
            op: Op::Norm,
            category: Category::Attention,
            inputs: vec![],
            output: o,
            operation: format!(
                "Scale each head's {which} to length 1 (no learned weight): the scores become cosines, scaled below"
            ),
            equation: format!(
                "{out} = {input} / √(Σ{input}² + ε), ε = {}",
                self.spec.norm.eps
            ),
        })
    }

    /// nGPT's learned scale on the queries (Dory's `sqk`), squared, after RoPE: with unit
    /// queries and keys it sets how sharp each query's attention is.
    fn query_gain(&mut self, input: &str, out: &str, idx: &str, g: crate::spec::Ngpt) -> Node {
        let a = self.attn.clone();
        let hd = a.head_dim;
        let p = self.param(
            Role::NgptQueryScale,
            false,
            vec![a.heads * hd],
            Component::Attention,
            true,
        );
        let sq = self.weight(
            p,
            "s_qk",
            [n(hd), n(1)],
            Some(format!("[{}]", rows(0, hd, idx))),
        );
        let o = self.act(out, self.seq(hd));
        self.step(Draft {
            title: "Query scale".into(),
            op: Op::Scale,
            category: Category::Attention,
            inputs: vec![sq],
            output: o,
            operation: "Scale each query feature by a learned factor, squared: with queries and keys of length 1 this sets how sharp the attention is".into(),
            equation: format!(
                "{out} = {input} ⊙ (s_qk · {})²",
                crate::fmt::approx(g.query_factor(hd))
            ),
        })
    }

    fn l2_norm(&mut self, which: &str, input: &str, out: &str, cached: bool) -> Node {
        let hd = self.attn.head_dim;
        let o = if cached {
            self.cached(out, self.seq(hd))
        } else {
            self.act(out, self.seq(hd))
        };
        let node = self.step(Draft {
            title: format!("{which} L2 norm"),
            op: Op::Norm,
            category: Category::Attention,
            inputs: vec![],
            output: o,
            operation: format!(
                "Normalize each head's rotated {which} to unit RMS (no learned weight)"
            ),
            equation: format!(
                "{out} = {input} / √(mean({input}²) + ε), ε = {}",
                self.spec.norm.eps
            ),
        });
        let layers = self.spec.layers_where(|l| l.rope);
        self.gate(node, &layers)
    }

    pub(super) fn scores_equation(&self, k: &str, q: &str) -> String {
        let a = &self.attn;
        let mut eq = format!("S = {k} · {q} / √{}", fmt_f(a.scale_dim));
        if a.scale_dim == 1.0 && a.scale_mult == 1.0 {
            eq = format!("S = {k} · {q}, unscaled");
        } else if a.scale_dim == 1.0 {
            // A fixed multiplier in place of 1/√d (Granite).
            eq = format!("S = {k} · {q} · {}", a.scale_mult);
        } else if a.scale_mult != 1.0 {
            eq += &format!(" · {:.6}", a.scale_mult);
        }
        if let Position::Alibi(slopes) = &self.spec.position {
            let shown: Vec<String> = slopes.iter().take(3).map(|m| format!("{m:.6}")).collect();
            eq += &format!(
                " + mₕ·(j − i), ALiBi: key j's score for the query at i falls by the head's slope mₕ per position of distance (mₕ = {}{})",
                shown.join(", "),
                if slopes.len() > 3 { ", …" } else { "" }
            );
        }
        if let Position::Buckets(_) = self.spec.position {
            eq += " + Bₚ[h], the position bias of each key's distance from the query";
        }
        if a.rel_logits.is_some() {
            eq += " + B, the head's relative logits";
        }
        if let Some(c) = a.softcap {
            eq += &format!(", then S = {c}·tanh(S/{c})");
        }
        if a.qsa.is_some() || a.pool_index.is_some() {
            eq += ", kept only where the indexer's mask Mᵢₓ is 0";
        }
        if let Some(bi) = a.block_index {
            eq += &format!(
                ", kept only in the {} blocks this head's group chose (Mᵢₓ of index head ⌊h / {}⌋)",
                bi.top_k,
                (a.heads / bi.heads.max(1)).max(1)
            );
        }
        eq
    }

    /// Causal softmax (with the head's sink logit where the Spec has sinks) and the weighted sum of values.
    /// `key_scores`: the dynamic mask's Δ, where the attention has one.
    pub(super) fn softmax_and_values(
        &mut self,
        head: Option<&str>,
        v: usize,
        head_name: &str,
        key_scores: Option<usize>,
    ) -> Vec<Node> {
        let a = self.attn.clone();
        let mut nodes = Vec::new();
        let att = self.act("A", [Dim::Seq, Dim::Seq]);
        let mut window = self.window_text();
        if let (Some(dm), Some(_)) = (a.dynamic_mask, key_scores) {
            window += &format!(
                "; M adds Δᵢ, this K/V head's score of each key, and where a query sees more than {k} keys only the {k} with the highest Δᵢ stay",
                k = dm.keep
            );
        }
        let mut inputs: Vec<usize> = key_scores.into_iter().collect();
        let mut eq = match self.spec.prefix_lm {
            true => format!("A = softmax(S + M) over keys, M = −∞ above the diagonal{window}, except among the prompt's tokens: a prefix that sees itself both ways, in every layer"),
            false => format!("A = softmax(S + M) over keys, M = −∞ above the diagonal{window}"),
        };
        if a.token_sinks {
            inputs.push(self.latest("σₛ"));
            eq = format!("A = softmax([S + M, σₛ]) with this token's sink logit σₛ as an extra key, then dropped{window}");
        }
        if a.sinks {
            let p = self.param(
                Role::Sinks,
                false,
                vec![a.heads],
                Component::Attention,
                true,
            );
            inputs.push(self.weight(p, "σₛ", [n(1), n(1)], head.map(|h| format!("[{h}]"))));
            eq = format!("A = softmax([S + M, σₛ]) with the sink logit σₛ as an extra key, then dropped{window}");
        }
        // A draft model's query reads its target's keys: all of them, or a sliding layer's last
        // window + 1 (`Spec::read_span`).
        let (title, operation) = match self.spec.draft {
            Some(_) => {
                eq = "A = softmax(S + M) over the target's keys, M = −∞ outside what this layer reads: every key in a full layer, the last window + 1 in a sliding one".into();
                (
                    "Softmax over the target's keys",
                    "Normalize the step's scores over the target's keys to weights",
                )
            }
            None if self.spec.prefix_lm => (
                "Causal softmax",
                "Mask future positions (past the prompt, whose tokens see each other both ways), then normalize each query's scores to weights",
            ),
            None => (
                "Causal softmax",
                "Mask future positions, then normalize each query's scores to weights",
            ),
        };
        nodes.push(self.step(Draft {
            title: title.into(),
            op: Op::Softmax,
            category: Category::Attention,
            inputs,
            output: att,
            operation: operation.into(),
            equation: eq,
        }));
        // Differential attention: each head mixes two K/V heads' values side by side.
        let (vd, equation) = if a.differential {
            let half = a.kv_heads / 2;
            (
                2 * a.v_head_dim,
                format!("{head_name} = [V_a | V_b] · A, the values of K/V heads a = i mod {half} and b = {half} + a side by side"),
            )
        } else {
            (a.v_head_dim, format!("{head_name} = V · A"))
        };
        let h = self.act(head_name, self.seq(vd));
        nodes.push(self.step(Draft {
            title: "Weighted value aggregation".into(),
            op: Op::WeightedSum { dim: vd },
            category: Category::Attention,
            inputs: vec![v],
            output: h,
            operation: "Mix the value vectors by the attention weights".into(),
            equation,
        }));
        nodes
    }

    /// Differential attention's combination: the first half of the heads minus λ times the
    /// second half, each pair of head_dim halves RMS-normed and scaled by 1 − λ_init.
    fn differential(&mut self, width: u64) -> Vec<Node> {
        let a = self.attn.clone();
        let (hd, pairs) = (a.head_dim, a.heads / 2);
        let mut inputs = vec![];
        for (role, name) in [
            (Role::LambdaQ1, "λq₁"),
            (Role::LambdaK1, "λk₁"),
            (Role::LambdaQ2, "λq₂"),
            (Role::LambdaK2, "λk₂"),
        ] {
            let p = self.param(role, false, vec![hd], Component::Attention, true);
            inputs.push(self.weight(p, name, [n(hd), n(1)], None));
        }
        let label = format!("{}×{pairs}={width}", 2 * a.v_head_dim);
        let d = self.act("D", [Dim::Labeled(label.clone(), width), Dim::Seq]);
        let diff = self.step(Draft {
            title: "Differential combination".into(),
            op: Op::Add,
            category: Category::Attention,
            inputs,
            output: d,
            operation: format!("Subtract λ times heads {pairs}…{} from heads 0…{}: noise both attention maps share cancels", a.heads - 1, pairs - 1),
            equation: format!("D = H[0…{}] − λ · H[{pairs}…{}], λ = exp(λq₁·λk₁) − exp(λq₂·λk₂) + λ_init, λ_init = 0.8 − 0.6·exp(−0.3·layer)", pairs - 1, a.heads - 1),
        });
        let dn = self.act("D̂", [Dim::Labeled(label, width), Dim::Seq]);
        let norm = self.step(Draft {
            title: "Pair RMS norm".into(),
            op: Op::Norm,
            category: Category::Attention,
            inputs: vec![],
            output: dn,
            operation: format!("Normalize each of the {pairs} {}-dim pairs (no learned weight), then scale by 1 − λ_init", 2 * a.v_head_dim),
            equation: format!("D̂ = (1 − λ_init) · D / √(mean(D²) + ε) over each pair, ε = {}", self.spec.norm.eps),
        });
        vec![diff, norm]
    }

    /// The dynamic mask's key scores, Δ = exp(A ⊙ softplus(W_dt · V + b)): one per key and
    /// K/V head, from the values of all heads.
    fn key_scores(&mut self) -> Node {
        let a = self.attn.clone();
        let (kv, width) = (a.kv_heads, a.kv_heads * a.v_head_dim);
        let p = self.param(
            Role::DynDt,
            false,
            vec![kv, width],
            Component::Attention,
            true,
        );
        let mut inputs = vec![self.weight(p, "W_dt", [n(kv), n(width)], None)];
        let mut eq = "Δ = exp(A ⊙ softplus(W_dt · V".to_string();
        if a.qkv_bias {
            let pb = self.param(Role::DynDt, true, vec![kv], Component::Attention, true);
            inputs.push(self.weight(pb, "b_dt", [n(kv), n(1)], None));
            eq += " + b_dt";
        }
        let pa = self.param(Role::DynA, false, vec![kv], Component::Attention, true);
        inputs.push(self.weight(pa, "A", [n(kv), n(1)], None));
        eq += &format!(")), V the values of all {kv} K/V heads ({width} per key)");
        let out = self.act("Δ", self.seq(kv));
        self.step(Draft {
            title: "Dynamic mask key scores".into(),
            op: Op::MatMul,
            category: Category::Attention,
            inputs,
            output: out,
            operation: format!("Score every key for each of the {kv} K/V heads from its values: which keys the heads will favour"),
            equation: eq,
        })
    }

    /// Concatenate the heads and project back to the hidden size.
    pub(super) fn attention_output(&mut self, label: String, x_in: &str) -> Vec<Node> {
        let spec = self.spec;
        let a = self.attn.clone();
        if let Some(m) = a.moa {
            return self.moa_output(m);
        }
        let width = a.heads * a.v_head_dim;
        let (label, concat_width) = if a.differential {
            let w = 2 * width;
            (format!("{}×{}={w}", 2 * a.v_head_dim, a.heads), w)
        } else {
            (label, width)
        };
        let concat = self.act("H", [Dim::Labeled(label.clone(), concat_width), Dim::Seq]);
        let cat = self.step(Draft {
            title: "Head concatenation".into(),
            op: Op::Concat,
            category: Category::Attention,
            inputs: vec![],
            output: concat,
            operation: format!(
                "Stack the {} head outputs into one {width}-dim vector per position",
                a.heads
            ),
            equation: format!("H = concat(H₀ … H_{})", a.heads - 1),
        });
        let mut nodes = vec![cat];
        let mut heads = "H";
        if a.differential {
            nodes.extend(self.differential(width));
            heads = "D̂";
        }
        if let Some(gate) = a.out_gate {
            let (rows, per) = if gate.per_head {
                (a.heads, "head")
            } else {
                (width, "head feature")
            };
            // Stored apart, or as each head's second half of the query projection (A.X-K2's: of
            // the latent query projection, reading both query latents).
            let q_gate = a.mla.as_ref().filter(|m| m.q_gate);
            let (role, stored_rows, block, input, cols) = match q_gate {
                Some(m) => {
                    let (qk, vd) = (a.head_dim, a.v_head_dim);
                    let ql = m.q_lora_rank.unwrap_or(0);
                    let rows = format!("{}*i+{qk}:{}*(i+1), for each head i", qk + vd, qk + vd);
                    (
                        Role::QB,
                        a.heads * (qk + vd),
                        Some(rows),
                        "[Cq′; Cq]",
                        2 * ql,
                    )
                }
                None if gate.in_query() => {
                    let hd = a.head_dim;
                    let rows = format!("{}*i+{hd}:{}*(i+1), for each head i", 2 * hd, 2 * hd);
                    (Role::Q, 2 * a.heads * hd, Some(rows), x_in, spec.hidden)
                }
                None if gate.before_qkv() => {
                    let stored = 2 * width + 2 * a.kv_heads * a.head_dim;
                    (
                        Role::Qkv,
                        stored,
                        Some(format!("0:{width}")),
                        x_in,
                        spec.hidden,
                    )
                }
                None => (Role::AttnGate, rows, None, x_in, spec.hidden),
            };
            nodes.push(self.linear(Linear {
                role,
                title: "Output gate projection".into(),
                w: "W_g",
                out: "Gₐ",
                input,
                rows,
                cols,
                stored_rows,
                block,
                bias: false,
                component: Component::Attention,
                category: Category::Attention,
                cached: false,
                operation: format!("Project the layer's input to one gate per {per} ({rows})"),
            }));
            let g = self.tensors.len() - 1;
            let mut inputs = vec![g];
            if self.spec.ngpt.is_some() {
                let p = self.param(
                    Role::NgptGateScale,
                    false,
                    vec![width],
                    Component::Attention,
                    true,
                );
                inputs.push(self.weight(p, "s_g", [n(width), n(1)], None));
            }
            if gate.bias {
                let p = self.param(
                    Role::AttnGateBias,
                    false,
                    vec![a.heads],
                    Component::Attention,
                    true,
                );
                inputs.push(self.weight(p, "b_g", [n(a.heads), n(1)], None));
            }
            let gated = self.act("Hg", [Dim::Labeled(label, width), Dim::Seq]);
            nodes.push(self.step(Draft {
                title: "Output gate".into(),
                op: Op::Activation,
                category: Category::Attention,
                inputs,
                output: gated,
                operation: format!(
                    "Scale every {per} by a {} gate of the input: the layer can silence a head per token",
                    if gate.softplus { "softplus" } else { "sigmoid" }
                ),
                equation: if gate.per_head {
                    format!("Hg = H ⊙ {}(Gₐ), each head's gate shared by its {} features", gate.symbol(), a.v_head_dim)
                } else if gate.bias {
                    format!("Hg = H ⊙ {}(Gₐ + b_g), b_g one bias per head shared by its {} features", gate.symbol(), a.v_head_dim)
                } else if let Some(g) = spec.ngpt {
                    format!("Hg = H ⊙ {}(Gₐ ⊙ (s_g · {})²)", gate.symbol(), crate::fmt::approx(g.gate_factor(spec.hidden)))
                } else {
                    format!("Hg = H ⊙ {}(Gₐ)", gate.symbol())
                },
            }));
            heads = "Hg";
        }
        let input = if a.sub_norm {
            nodes.push(
                self.norm_step(
                    "Attention sub-norm",
                    Role::AttnSubNorm,
                    "γₕ",
                    heads,
                    "H′",
                    width,
                    true,
                    None,
                )
                .at(Point::AttnSubNorm),
            );
            "H′"
        } else {
            heads
        };
        let out = self
            .linear(Linear {
                role: Role::O,
                title: "Attention output projection".into(),
                w: "Wₒ",
                out: "Y",
                input,
                rows: spec.hidden,
                cols: width,
                stored_rows: spec.hidden,
                block: None,
                bias: a.o_bias,
                component: Component::Attention,
                category: Category::Attention,
                cached: false,
                operation: "Project the concatenated heads back to the hidden size".into(),
            })
            .at(Point::AttnOut);
        nodes.push(out);
        if a.o_bias_last {
            nodes.push(self.last_layer_bias());
        }
        nodes
    }

    /// The output projection's bias of the last layer alone (GPT-NeoX-Japanese).
    fn last_layer_bias(&mut self) -> Node {
        let (d, last) = (self.spec.hidden, self.spec.layers.saturating_sub(1));
        let only = crate::layers::LayerSet::from_fn(self.spec.layers, |b| b == last);
        let kept = std::mem::replace(&mut self.layers, only.clone());
        let p = self.param(Role::DenseBias, false, vec![d], Component::Attention, true);
        self.layers = kept;
        let bias = self.weight(p, "bₒ", [n(d), n(1)], None);
        let y = self.act("Y′", self.seq(d));
        let mut node = self.step(Draft {
            title: format!("Output bias (layer {last} only)"),
            op: Op::Add,
            category: Category::Attention,
            inputs: vec![bias],
            output: y,
            operation: "Add the bias that only the last layer's output projection has".into(),
            equation: "Y′ = Y + bₒ in the last layer; Y elsewhere".into(),
        });
        if let Node::Step(s) = &mut node {
            s.layers = Some(only);
        }
        node
    }

    /// Grouped-query attention: MHA and MQA are its cases with one query head per K/V head, or
    /// one K/V head for all.
    pub(super) fn attention(&mut self, x_in: &str) -> Vec<Node> {
        let a = self.attn.clone();
        let hd = a.head_dim;
        let g = a.heads / a.kv_heads;
        let rope = self.has_rope();
        let (kv_idx, q_idx, head_name, q_head) = match a.kind {
            AttnKind::Mha => (
                Some("i".to_string()),
                "i".to_string(),
                "Hᵢ",
                "i".to_string(),
            ),
            AttnKind::Mqa => (None, "j".to_string(), "Hⱼ", "j".to_string()),
            AttnKind::Gqa | AttnKind::Mla => (
                Some("i".to_string()),
                format!("{g}*i+j"),
                "Hᵢⱼ",
                format!("{g}*i+j"),
            ),
        };
        // Weighted QK-norm comes before RoPE, except HunYuan's; Llama 4's weightless one after.
        let qk_norm = matches!(
            a.qk_norm,
            QkNorm::PerHead | QkNorm::Full | QkNorm::HeadWeights
        ) || (a.qk_norm == QkNorm::PerHeadPostRope && !rope);
        let post_norm = a.qk_norm == QkNorm::PerHeadPostRope && rope;
        let l2 = a.qk_norm == QkNorm::L2 && rope;
        let mut router = match a.moa {
            Some(m) => self.moa_router(m, x_in),
            None => Vec::new(),
        };
        let key_scores = a.dynamic_mask.map(|_| {
            router.push(self.key_scores());
            self.tensors.len() - 1
        });
        if let Some(bi) = a.block_index {
            router.extend(self.block_index(x_in, bi));
        }
        if let Some(q) = a.qsa {
            router.extend(self.qsa(x_in, q));
        }
        if let Some(p) = &a.pool_index {
            router.extend(self.pool_index(p));
        }

        if let Some(cca) = a.cca {
            // ZAYA: Q, K and V made whole, then each head reads its own.
            router.extend(self.cca(x_in, cca));
            let mut kv_nodes = Vec::new();
            for (title, name, dim, what) in [
                ("K head", "K", hd, "keys"),
                ("V head", "V", a.v_head_dim, "values"),
            ] {
                // What the KV cache holds: the values, and the keys once rotated.
                let t = if name == "V" || !rope {
                    self.cached(name, self.seq(dim))
                } else {
                    self.act(name, self.seq(dim))
                };
                kv_nodes.push(self.step(Draft {
                    title: title.into(),
                    op: Op::Route,
                    category: Category::Attention,
                    inputs: vec![],
                    output: t,
                    operation: format!("Take this K/V head's {what} from those made above"),
                    equation: format!("{name} = {name}ᶜ[:, {dim}·i : {dim}·(i+1)]"),
                }));
                if name == "K" && rope {
                    kv_nodes.push(self.rope_step(("K", Point::K), "K", "Kᵣ", hd, true));
                }
            }
            let v = self.tensors.len() - 1;
            let k = if rope { "Kᵣ" } else { "K" };
            return self.attend_with(
                a,
                kv_nodes,
                k,
                v,
                x_in,
                (q_idx, head_name, q_head),
                router,
                key_scores,
            );
        }
        let mut kv_nodes = Vec::new();
        if a.shares_kv {
            // Gemma 4's shared layers: the keys and values of an earlier layer, as it cached them.
            let (k, v) = (
                if rope { "Kᵣ" } else { "K" },
                if a.v_norm { "Vₙ" } else { "V" },
            );
            for (title, name, what) in [("Shared keys", k, "keys"), ("Shared values", v, "values")]
            {
                let t = self.act(
                    name,
                    self.seq(if what == "keys" { hd } else { a.v_head_dim }),
                );
                kv_nodes.push(self.step(Draft {
                    title: title.into(),
                    op: Op::Route,
                    category: Category::Attention,
                    inputs: vec![],
                    output: t,
                    operation: match self.spec.draft {
                        Some(_) => format!("Read the {what} of this K/V head from the target: its last layer of this kind cached them for the prompt; this model projects and caches none"),
                        None => format!("Read the {what} of this K/V head from the last layer of this kind that projects its own: this layer projects and caches none"),
                    },
                    equation: match self.spec.draft {
                        Some(_) => format!("{name} = {name} of the target's last layer with this span"),
                        None => format!("{name} = {name} of layer s, the last layer before the shared ones with this span"),
                    },
                }));
            }
            let v = self.tensors.len() - 1;
            return self.attend_with(
                a,
                kv_nodes,
                k,
                v,
                x_in,
                (q_idx, head_name, q_head),
                router,
                key_scores,
            );
        }
        // The K that is cached: after RoPE where there is RoPE, else as projected (and normed).
        let unit = a.qk_norm == QkNorm::Unit;
        // K and V read inputs of their own where the layer gives them (Inkling 2's full layers).
        let [k_in, v_in] = self
            .kv_in
            .clone()
            .unwrap_or_else(|| [x_in.to_string(), x_in.to_string()]);
        kv_nodes.push(self.head_projection(
            (Role::K, Point::KProj),
            "K",
            kv_idx.as_deref(),
            &k_in,
            !rope && !qk_norm && !unit && a.kv_conv.is_none() && a.l2_clip.is_none(),
        ));
        let mut k = "K";
        if let Some(kc) = a.kv_conv {
            let cached = !rope && !qk_norm && !unit && a.l2_clip.is_none();
            kv_nodes.extend(self.head_conv("K", kv_idx.as_deref(), kc, cached, &k_in));
        }
        if let Some(c) = a.l2_clip {
            kv_nodes.push(self.l2_clip("K", None, None, c, !rope).at(Point::KNorm));
            k = "Kₙ";
        }
        // Keys that are the values too (Gemma 4): V is K as projected, before K's norm and RoPE.
        let raw_k = self.tensors.len() - 1;
        if unit {
            kv_nodes.push(self.unit_norm("K", "K", "Kₙ", !rope).at(Point::KNorm));
            k = "Kₙ";
        }
        if qk_norm {
            kv_nodes.push(
                self.qk_norm("K", Role::KNorm, kv_idx.as_deref(), "K", "Kₙ")
                    .at(Point::KNorm),
            );
            if !rope {
                if let TensorKind::Activation { cached } =
                    &mut self.tensors.last_mut().expect("K norm output").kind
                {
                    *cached = true;
                }
            }
            k = "Kₙ";
        }
        if rope {
            kv_nodes.push(self.rope_step(("K", Point::K), k, "Kᵣ", hd, !l2 && !post_norm));
            k = "Kᵣ";
        }
        if post_norm {
            kv_nodes.push(
                self.qk_norm("K", Role::KNorm, kv_idx.as_deref(), k, "Kᵣₙ")
                    .at(Point::KNorm),
            );
            if let TensorKind::Activation { cached } =
                &mut self.tensors.last_mut().expect("K norm output").kind
            {
                *cached = true;
            }
            k = "Kᵣₙ";
        }
        if l2 {
            kv_nodes.push(self.l2_norm("K", k, "Kᵣₙ", true).at(Point::KL2));
            k = "Kᵣₙ";
        }
        if a.v_from_k {
            let t = self.act("V", self.seq(a.v_head_dim));
            kv_nodes.push(self.step(Draft {
                title: "Values from the keys".into(),
                op: Op::Route,
                category: Category::Attention,
                inputs: vec![raw_k],
                output: t,
                operation: "Take this head's values from its key projection, as projected: there is no V projection".into(),
                equation: "V = K (before K's norm and RoPE)".into(),
            }));
        } else {
            let conv = a.kv_conv.is_some();
            kv_nodes.push(self.head_projection(
                (Role::V, Point::V),
                "V",
                kv_idx.as_deref(),
                &v_in,
                !a.v_norm && !conv,
            ));
            if let Some(kc) = a.kv_conv {
                kv_nodes.extend(self.head_conv("V", kv_idx.as_deref(), kc, !a.v_norm, &v_in));
            }
        }
        if a.v_norm {
            let vn = self.cached("Vₙ", self.seq(a.v_head_dim));
            let eps = self.spec.norm.eps;
            kv_nodes.push(self.step(Draft {
                title: "V RMSNorm (no weight)".into(),
                op: Op::Norm,
                category: Category::Attention,
                inputs: vec![],
                output: vn,
                operation: format!("Normalize each position's {}-dim value to unit root-mean-square, without a learned scale", a.v_head_dim),
                equation: format!("Vₙ = V / √(mean(V²) + ε), ε = {eps}"),
            }).at(Point::VNorm));
        }
        // The values as cached (the convolution's window, kept after them, is not).
        let v = self.latest(if a.v_norm { "Vₙ" } else { "V" });
        self.attend_with(
            a,
            kv_nodes,
            k,
            v,
            x_in,
            (q_idx, head_name, q_head),
            router,
            key_scores,
        )
    }

    /// The queries, scores, softmax and output of an attention whose keys `k` and values `v` the
    /// K/V steps `kv_nodes` made.
    #[allow(clippy::too_many_arguments)]
    fn attend_with(
        &mut self,
        a: crate::spec::Attention,
        mut kv_nodes: Vec<Node>,
        k: &str,
        v: usize,
        x_in: &str,
        (q_idx, head_name, q_head): (String, &str, String),
        router: Vec<Node>,
        key_scores: Option<usize>,
    ) -> Vec<Node> {
        let hd = a.head_dim;
        // Kolibri 1.1's indexed layers attend over their keys and values rounded to NVFP4.
        let (k, v) = if a.pool_index.is_some() {
            let v_name = self.tensors[v].name.clone();
            kv_nodes.push(self.nvfp4("keys", k, "K̃", hd));
            kv_nodes.push(self.nvfp4("values", &v_name, "Ṽ", a.v_head_dim));
            ("K̃", self.tensors.len() - 1)
        } else {
            (k, v)
        };
        let g = a.heads / a.kv_heads;
        let rope = self.has_rope();
        let qk_norm = matches!(
            a.qk_norm,
            QkNorm::PerHead | QkNorm::Full | QkNorm::HeadWeights
        ) || (a.qk_norm == QkNorm::PerHeadPostRope && !rope);
        let post_norm = a.qk_norm == QkNorm::PerHeadPostRope && rope;
        let l2 = a.qk_norm == QkNorm::L2 && rope;
        let mut q_nodes = Vec::new();
        if a.cca.is_some() {
            let t = self.act("Q", self.seq(hd));
            q_nodes.push(self.step(Draft {
                title: "Q head".into(),
                op: Op::Route,
                category: Category::Attention,
                inputs: vec![],
                output: t,
                operation: "Take this query head's queries from those made above".into(),
                equation: format!("Q = Qᶜ[:, {hd}·h : {hd}·(h+1)]"),
            }));
        } else {
            q_nodes.push(self.head_projection(
                (Role::Q, Point::QProj),
                "Q",
                Some(&q_idx),
                x_in,
                false,
            ));
        }
        let mut q = "Q";
        if a.qk_norm == QkNorm::Unit {
            q_nodes.push(self.unit_norm("Q", "Q", "Qₙ", false).at(Point::QNorm));
            q = "Qₙ";
        }
        if let Some(c) = a.l2_clip {
            q_nodes.push(
                self.l2_clip("Q", Some(Role::QClipScale), Some(&q_idx), c, false)
                    .at(Point::QNorm),
            );
            q = "Qₙ";
        }
        if qk_norm {
            q_nodes.push(
                self.qk_norm("Q", Role::QNorm, Some(&q_idx), "Q", "Qₙ")
                    .at(Point::QNorm),
            );
            q = "Qₙ";
        }
        if rope {
            q_nodes.push(self.rope_step(("Q", Point::Q), q, "Qᵣ", hd, false));
            q = "Qᵣ";
        }
        if post_norm {
            q_nodes.push(
                self.qk_norm("Q", Role::QNorm, Some(&q_idx), q, "Qᵣₙ")
                    .at(Point::QNorm),
            );
            q = "Qᵣₙ";
        }
        if l2 {
            q_nodes.push(self.l2_norm("Q", q, "Qᵣₙ", false).at(Point::QL2));
            q = "Qᵣₙ";
        }
        if let Some(qs) = a.query_scale {
            q_nodes.push(self.query_scale(q, "Qₜ", qs));
            q = "Qₜ";
        }
        if let Some(g) = self.spec.ngpt {
            q_nodes.push(self.query_gain(q, "Qₛ", &q_idx, g));
            q = "Qₛ";
        }
        if a.token_sinks {
            q_nodes.push(self.linear(Linear {
                role: Role::TokenSinks,
                title: "Sink logit".into(),
                w: "wₛ",
                out: "σₛ",
                input: x_in,
                rows: 1,
                cols: self.attn_in,
                stored_rows: a.heads,
                block: Some(rows(0, 1, &q_idx)),
                bias: false,
                component: Component::Attention,
                category: Category::Attention,
                cached: false,
                operation: "Project the input to this head's sink logit for this token: the weight of attending to nothing".into(),
            }));
        }
        let mut bias = Vec::new();
        if let Some(rl) = a.rel_logits {
            q_nodes.extend(self.rel_logits(rl, &q_idx, x_in, a.query_scale.is_some()));
            bias.push(self.tensors.len() - 1);
        }
        let kt = format!("{k}ᵀ");
        let krt = self.act(&kt, [Dim::Seq, n(hd)]);
        let s = self.act("S", [Dim::Seq, Dim::Seq]);
        q_nodes.push(self.step(Draft {
            title: "Attention scores".into(),
            op: Op::Scores { dim: hd },
            category: Category::Attention,
            inputs: std::iter::once(krt).chain(bias).collect(),
            output: s,
            operation: "Score every query position against every key position".into(),
            equation: self.scores_equation(&kt, q),
        }));
        q_nodes.extend(self.softmax_and_values(Some(&q_head), v, head_name, key_scores));

        let mut nodes = router;
        match a.kind {
            AttnKind::Mha => {
                kv_nodes.extend(q_nodes);
                nodes.push(Node::Scope(self.scope(
                    ScopeKind::Head,
                    "Attention Head i",
                    "Head end",
                    a.heads,
                    kv_nodes,
                )));
            }
            AttnKind::Mqa => {
                nodes.extend(kv_nodes);
                nodes.push(Node::Scope(self.scope(
                    ScopeKind::Head,
                    "Query Head j",
                    "Head end",
                    a.heads,
                    q_nodes,
                )));
            }
            AttnKind::Gqa | AttnKind::Mla => {
                let heads = self.scope(ScopeKind::Head, "Query Head j", "Head end", g, q_nodes);
                kv_nodes.push(Node::Scope(heads));
                nodes.push(Node::Scope(self.scope(
                    ScopeKind::Group,
                    "GQA Group i",
                    "GQA end",
                    a.kv_heads,
                    kv_nodes,
                )));
            }
        }
        let width = a.heads * a.v_head_dim;
        let label = match a.kind {
            AttnKind::Gqa => format!("{}×{g}×{}={width}", a.v_head_dim, a.kv_heads),
            AttnKind::Mha | AttnKind::Mqa | AttnKind::Mla => {
                format!("{}×{}={width}", a.v_head_dim, a.heads)
            }
        };
        nodes.extend(self.attention_output(label, x_in));
        nodes
    }
}

impl Builder<'_> {}

#[cfg(test)]
mod tests {
    use super::rows;

    #[test]
    fn row_blocks() {
        assert_eq!(rows(0, 128, "i"), "128*i:128*(i+1)");
        assert_eq!(rows(0, 128, "3*i+j"), "128*(3*i+j):128*(3*i+j+1)");
        assert_eq!(rows(3072, 96, "i"), "3072+96*i:3072+96*(i+1)");
    }
}
