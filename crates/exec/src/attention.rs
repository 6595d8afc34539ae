//! Scaled dot-product attention over the KV cache: score the keys each query may see (causal,
//! and within its window or chunk), softcap, softmax with the head's sink, mix the values. K/V
//! heads are shared by index rather than copied per query head, and the scores and weights are
//! kept only when a caller asks (the op view shows them).
//!
//! Two schedules compute the same thing. A prompt multiplies blocks of queries by all the keys
//! they can see with `linear`'s packed kernel (keys packed as a weight, values as a transposed
//! one), masking afterwards; a decode step, one query per head, goes row by row and skips masked
//! keys, which saves packing the cache on every token.

use crate::linear::Packed;
use crate::math::softmax;
use crate::pool::{for_ranges, Shared};
use anatomy_core::spec::AttnSpan;
use pulp::{Simd, WithSimd};

/// Query rows per K/V head from which the blocked schedule pays off.
const BLOCKED_MIN: usize = 16;
/// Query positions per block: bounds the scores held at once to BLOCK × keys.
const BLOCK: usize = 128;

/// One layer's heads: q [heads, t, d], k [kv_heads, stride, d], v [kv_heads, stride, dv], all
/// row-major, of which each K/V head's first `start + t` positions (the keys) are read; query i
/// sits at absolute position `start + i`, key j at position j.
pub struct Heads<'a> {
    pub q: &'a [f32],
    pub k: &'a [f32],
    pub v: &'a [f32],
    pub heads: usize,
    pub kv_heads: usize,
    pub d: usize,
    pub dv: usize,
    pub start: usize,
    /// Positions from one K/V head's block to the next (at least `start + t`).
    pub stride: usize,
}

/// How a layer scores: the scale on q·k, the softcap, which keys a query sees, and the
/// per-head sink logits that join the softmax without a value.
pub struct Rule<'a> {
    pub scale: f32,
    pub softcap: Option<f32>,
    pub span: AttnSpan,
    pub sinks: Option<&'a [f32]>,
    /// A sink logit per head and query of the pass, [heads, t], in place of `sinks` (Inkling 2's
    /// projected sinks).
    pub token_sinks: Option<&'a [f32]>,
    /// ALiBi slopes, one per query head: key j's score for the query at i gains slope · (j − i).
    pub alibi: Option<&'a [f32]>,
    /// A learned bias per head for each pair of positions (`Position::Buckets`).
    pub pair_bias: Option<PairBias<'a>>,
    /// A bias per head, query and backward distance (Inkling's relative logits).
    pub rel_bias: Option<RelBias<'a>>,
    /// The keys each new query may see at all (DeepSeek sparse attention's top-k, MiniMax-M3's
    /// blocks); the others score −∞.
    pub selected: Option<Selected<'a>>,
    /// Doge's dynamic mask.
    pub key_scores: Option<KeyScores<'a>>,
    /// Blocks of queries that see each other both ways (an image's tokens: Gemma 3;
    /// PaliGemma's prompt).
    pub reach: Option<Reach<'a>>,
}

/// Keys queries see both ways besides those their span lets them see causally.
#[derive(Clone, Copy)]
pub struct Reach<'a> {
    /// For each query of the pass, the first and last key of its block (its own position
    /// alone where it is in none); the last non-decreasing along the pass.
    pub blocks: &'a [(usize, usize)],
    /// The span still bounds the block from below, as Gemma 3's sliding layers mask (the
    /// window and either causal or the block); else the block is seen whole in every span, as
    /// the masks of a wrapper's token types are made (PaliGemma's: causal within the span, or
    /// the block).
    pub within_span: bool,
}

impl Rule<'_> {
    /// The last key query `i` of the pass (at `qpos`, of `total` keys) sees.
    #[inline(always)]
    fn last(&self, i: usize, qpos: usize, total: usize) -> usize {
        let own = last_visible(self.span, qpos, total);
        match self.reach {
            Some(r) => own.max(r.blocks[i].1).min(total - 1),
            None => own,
        }
    }

    /// The first key query `i` of the pass (at `qpos`) sees: its span's, or its block's first
    /// where the span does not bound the block.
    #[inline(always)]
    fn first(&self, i: usize, qpos: usize) -> usize {
        let own = first_visible(self.span, qpos);
        match self.reach {
            Some(r) if !r.within_span => own.min(r.blocks[i].0),
            Some(_) | None => own,
        }
    }

    /// The sink logit of query `i` (of `t`) of head `head`, where the layer has sinks.
    #[inline(always)]
    fn sink(&self, head: usize, i: usize, t: usize) -> Option<f32> {
        match self.token_sinks {
            Some(s) => Some(s[head * t + i]),
            None => self.sinks.map(|s| s[head]),
        }
    }
}

/// Which keys each query may see: [groups, t, total] row-major, one choice per group of query
/// heads (query head i in group i / (heads / groups)); one group for all heads.
#[derive(Clone, Copy)]
pub struct Selected<'a> {
    pub keys: &'a [bool],
    pub groups: usize,
}

impl<'a> Selected<'a> {
    /// The keys query `i` of head `head` (of `heads`) may see, over all `total` keys.
    fn row(&self, head: usize, heads: usize, i: usize, t: usize, total: usize) -> &'a [bool] {
        let group = head / (heads / self.groups.max(1)).max(1);
        &self.keys[(group * t + i) * total..][..total]
    }
}

/// The bias of key j for query i of the pass and head h, `table[rows[i · total + j] · heads + h]`:
/// the rows are chosen once per pass, for every layer.
#[derive(Clone, Copy)]
pub struct PairBias<'a> {
    /// [rows, heads], row-major.
    pub table: &'a [f32],
    /// [t, total]: the table's row for each query of the pass and key.
    pub rows: &'a [u32],
}

impl PairBias<'_> {
    #[inline(always)]
    fn at(&self, heads: usize, head: usize, i: usize, total: usize, j: usize) -> f32 {
        self.table[self.rows[i * total + j] as usize * heads + head]
    }
}

/// Key j's bias for query i of the pass (position `qpos`) and head h: `table[(h · t + i) ·
/// extent + qpos − j]` when 0 ≤ qpos − j < extent, nothing beyond.
#[derive(Clone, Copy)]
pub struct RelBias<'a> {
    /// [heads, t, extent], row-major.
    pub table: &'a [f32],
    pub extent: usize,
}

impl RelBias<'_> {
    #[inline(always)]
    fn at(&self, head: usize, i: usize, t: usize, qpos: usize, j: usize) -> f32 {
        match qpos.checked_sub(j) {
            Some(d) if d < self.extent => self.table[(head * t + i) * self.extent + d],
            _ => 0.0,
        }
    }
}

/// A score per key and K/V head, added to the attention scores of the head's queries; a query
/// that sees more than `keep` keys attends only to the `keep` with the highest of these.
pub struct KeyScores<'a> {
    /// [kv_heads, total], row-major.
    pub scores: &'a [f32],
    pub total: usize,
    pub keep: usize,
}

pub struct Attended {
    /// [t, heads · dv]: the heads side by side, ready for the output projection.
    pub out: Vec<f32>,
    /// [heads, t, total] scores (−∞ where masked) and softmax weights, when asked for.
    pub scores: Option<Vec<f32>>,
    pub probs: Option<Vec<f32>>,
}

/// The first key query position `qpos` sees (the last: `last_visible`).
pub fn first_visible(span: AttnSpan, qpos: usize) -> usize {
    match span {
        AttnSpan::Full | AttnSpan::Whole => 0,
        AttnSpan::Sliding(w) => (qpos + 1).saturating_sub(w as usize),
        AttnSpan::Chunked(c) => qpos / c as usize * c as usize,
    }
}

/// The last key query position `qpos` sees, of `total`: itself, or every key for a span that
/// looks both ways.
pub fn last_visible(span: AttnSpan, qpos: usize, total: usize) -> usize {
    match span {
        AttnSpan::Whole => total - 1,
        AttnSpan::Full | AttnSpan::Sliding(_) | AttnSpan::Chunked(_) => qpos,
    }
}

pub fn attend(h: &Heads, rule: &Rule, keep: bool) -> Attended {
    let t = h.q.len() / (h.heads * h.d).max(1);
    if t * (h.heads / h.kv_heads.max(1)) >= BLOCKED_MIN {
        blocked(h, rule, keep)
    } else {
        by_row(h, rule, keep)
    }
}

/// Buffers for `Attended`, and their shapes.
fn buffers(h: &Heads, keep: bool) -> (usize, usize, Attended) {
    let t = h.q.len() / (h.heads * h.d).max(1);
    let total = h.start + t;
    assert!(
        h.stride >= total
            && h.k.len() >= h.kv_heads * h.stride * h.d
            && h.v.len() >= h.kv_heads * h.stride * h.dv,
        "k and v hold {total} positions a head"
    );
    let done = Attended {
        out: vec![0f32; t * h.heads * h.dv],
        scores: keep.then(|| vec![f32::NEG_INFINITY; h.heads * t * total]),
        probs: keep.then(|| vec![0f32; h.heads * t * total]),
    };
    (t, total, done)
}

/// q·k of the visible keys `row` (positions lo..) of head `head` (of `heads`) for query `i` of
/// the pass (position `qpos`, of `total` keys) into scores: scaled, biased by distance (ALiBi,
/// a pair bias), softcapped, and −∞ where `sel` (the query's row of `Rule::selected`, over all
/// keys) leaves a key out.
#[inline(always)]
fn score(
    rule: &Rule,
    row: &mut [f32],
    (head, kv, heads): (usize, usize, usize),
    sel: Option<&[bool]>,
    (lo, i, qpos, total): (usize, usize, usize, usize),
) {
    let slope = rule.alibi.map(|s| s[head]);
    for (j, x) in (lo..).zip(row.iter_mut()) {
        if sel.is_some_and(|s| !s[j]) {
            *x = f32::NEG_INFINITY;
            continue;
        }
        *x *= rule.scale;
        if let Some(m) = slope {
            *x += m * (j as f32 - qpos as f32);
        }
        if let Some(b) = &rule.pair_bias {
            *x += b.at(heads, head, i, total, j);
        }
        if let Some(r) = &rule.rel_bias {
            *x += r.at(head, i, total - (qpos - i), qpos, j);
        }
        if let Some(c) = rule.softcap {
            *x = c * (*x / c).tanh();
        }
    }
    if let Some(ks) = &rule.key_scores {
        let kb = &ks.scores[kv * ks.total + lo..][..row.len()];
        for (x, b) in row.iter_mut().zip(kb) {
            *x += b;
        }
        // Beyond `keep` keys, only the `keep` with the highest key scores stay.
        if row.len() > ks.keep {
            let mut sorted = kb.to_vec();
            sorted.sort_by(|a, b| b.total_cmp(a));
            let floor = sorted[ks.keep.max(1) - 1];
            for (x, b) in row.iter_mut().zip(kb) {
                if *b < floor {
                    *x = f32::NEG_INFINITY;
                }
            }
        }
    }
}

/// The prompt's schedule: blocks of query positions of one head times the keys the block's last
/// query sees, through the packed kernel; the (head, block) pairs spread across the pool.
fn blocked(h: &Heads, rule: &Rule, keep: bool) -> Attended {
    let (t, total, mut done) = buffers(h, keep);
    let (d, dv) = (h.d, h.dv);
    let group = (h.heads / h.kv_heads.max(1)).max(1);
    let blocks = t.div_ceil(BLOCK);
    let out = Shared::new(&mut done.out);
    let scores = done.scores.as_deref_mut().map(Shared::new);
    let probs = done.probs.as_deref_mut().map(Shared::new);
    let work = h.heads * t * total * (d + dv);
    for_ranges(h.heads * blocks, work, |tasks| {
        for task in tasks {
            let (head, i0) = (task / blocks, task % blocks * BLOCK);
            let kv = head / group;
            let i1 = t.min(i0 + BLOCK);
            let seen = rule.last(i1 - 1, h.start + i1 - 1, total) + 1;
            let rows = i1 - i0;
            let keys = Packed::new(&h.k[kv * h.stride * d..][..seen * d], seen, d);
            let values = Packed::new_transposed(&h.v[kv * h.stride * dv..][..seen * dv], dv, seen);
            let mut p = vec![0f32; rows * seen];
            keys.product(
                &h.q[(head * t + i0) * d..(head * t + i1) * d],
                rows,
                d,
                seen,
                &mut p,
            );
            for (r, row) in p.chunks_exact_mut(seen).enumerate() {
                let qpos = h.start + i0 + r;
                let (lo, hi) = (rule.first(i0 + r, qpos), rule.last(i0 + r, qpos, total));
                row[..lo].fill(0.0);
                row[hi + 1..].fill(0.0);
                let visible = &mut row[lo..=hi];
                let sel = rule
                    .selected
                    .map(|s| s.row(head, h.heads, i0 + r, t, total));
                score(
                    rule,
                    visible,
                    (head, kv, h.heads),
                    sel,
                    (lo, i0 + r, qpos, total),
                );
                let at = (head * t + i0 + r) * total + lo;
                // SAFETY (here and below): rows i0..i1 of head `head`, in the kept scores and
                // weights and in the output, are this task's alone.
                if let Some(s) = &scores {
                    unsafe { s.part(at, visible.len()) }.copy_from_slice(visible);
                }
                softmax(visible, rule.sink(head, i0 + r, t));
                if let Some(s) = &probs {
                    unsafe { s.part(at, visible.len()) }.copy_from_slice(visible);
                }
            }
            let mut o = vec![0f32; rows * dv];
            values.product(&p, rows, seen, dv, &mut o);
            for (r, o) in o.chunks_exact(dv).enumerate() {
                unsafe { out.part(((i0 + r) * h.heads + head) * dv, dv) }.copy_from_slice(o);
            }
        }
    });
    done
}

/// The decode schedule: one query row at a time over the keys it sees, rows across the pool.
fn by_row(h: &Heads, rule: &Rule, keep: bool) -> Attended {
    let (t, total, mut done) = buffers(h, keep);
    {
        let out = Shared::new(&mut done.out);
        let scores = done.scores.as_deref_mut().map(Shared::new);
        let probs = done.probs.as_deref_mut().map(Shared::new);
        let work = h.heads * t * total * (h.d + h.dv);
        for_ranges(h.heads * t, work, |rows| {
            pulp::Arch::new().dispatch(Rows {
                h,
                rule,
                t,
                total,
                rows,
                out: &out,
                scores: scores.as_ref(),
                probs: probs.as_ref(),
            })
        });
    }
    done
}

/// Query rows `rows` of [heads · t], for one thread.
struct Rows<'a> {
    h: &'a Heads<'a>,
    rule: &'a Rule<'a>,
    t: usize,
    total: usize,
    rows: std::ops::Range<usize>,
    out: &'a Shared,
    scores: Option<&'a Shared>,
    probs: Option<&'a Shared>,
}

impl WithSimd for Rows<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, s: S) {
        let (h, rule, t, total) = (self.h, self.rule, self.t, self.total);
        let (d, dv) = (h.d, h.dv);
        let group = (h.heads / h.kv_heads.max(1)).max(1);
        let mut p = vec![0f32; total];
        for row in self.rows {
            let (head, i) = (row / t, row % t);
            let qpos = h.start + i;
            let (lo, hi) = (rule.first(i, qpos), rule.last(i, qpos, total));
            let kv = head / group;
            let q = &h.q[row * d..][..d];
            let keys = &h.k[kv * h.stride * d..][..total * d];
            let values = &h.v[kv * h.stride * dv..][..total * dv];
            let seen = &mut p[lo..=hi];
            for (j, x) in (lo..=hi).zip(seen.iter_mut()) {
                *x = dot(s, q, &keys[j * d..][..d]);
            }
            let sel = rule.selected.map(|s| s.row(head, h.heads, i, t, total));
            score(rule, seen, (head, kv, h.heads), sel, (lo, i, qpos, total));
            if let Some(scores) = self.scores {
                // SAFETY: row `row` of [heads · t, total] is this thread's alone.
                unsafe { scores.part(row * total + lo, seen.len()) }.copy_from_slice(seen);
            }
            softmax(seen, rule.sink(head, i, t));
            // SAFETY: the columns of head `head` in output row i are this thread's alone.
            let o = unsafe { self.out.part((i * h.heads + head) * dv, dv) };
            mix(s, seen, &values[lo * dv..(hi + 1) * dv], o);
            if let Some(probs) = self.probs {
                // SAFETY: as for the scores.
                unsafe { probs.part(row * total + lo, seen.len()) }.copy_from_slice(seen);
            }
        }
    }
}

/// Σ aᵢbᵢ.
#[inline(always)]
fn dot<S: Simd>(s: S, a: &[f32], b: &[f32]) -> f32 {
    let ((av, at), (bv, bt)) = (S::as_simd_f32s(a), S::as_simd_f32s(b));
    // Two chains, so one multiply–add need not wait for the other.
    let (mut e, mut o) = (s.splat_f32s(0.0), s.splat_f32s(0.0));
    let mut pairs = av.chunks_exact(2).zip(bv.chunks_exact(2));
    for (x, y) in &mut pairs {
        e = s.mul_add_f32s(x[0], y[0], e);
        o = s.mul_add_f32s(x[1], y[1], o);
    }
    if av.len() % 2 == 1 {
        e = s.mul_add_f32s(av[av.len() - 1], bv[bv.len() - 1], e);
    }
    let tail: f32 = at.iter().zip(bt).map(|(x, y)| x * y).sum();
    s.reduce_sum_f32s(s.add_f32s(e, o)) + tail
}

/// o = Σⱼ pⱼ · (row j of `values`), rows of o's length: o is summed in registers, a few vectors
/// at a time, so no sum waits on the store of the one before.
#[inline(always)]
fn mix<S: Simd>(s: S, p: &[f32], values: &[f32], o: &mut [f32]) {
    let dv = o.len();
    let lanes = S::F32_LANES;
    let whole = dv / lanes;
    let mut c = 0;
    while c < whole {
        match whole - c {
            8.. => mix_vectors::<S, 8>(s, p, values, dv, c, o),
            4..=7 => mix_vectors::<S, 4>(s, p, values, dv, c, o),
            2..=3 => mix_vectors::<S, 2>(s, p, values, dv, c, o),
            _ => mix_vectors::<S, 1>(s, p, values, dv, c, o),
        }
        c += match whole - c {
            8.. => 8,
            4..=7 => 4,
            2..=3 => 2,
            _ => 1,
        };
    }
    for col in whole * lanes..dv {
        o[col] = p
            .iter()
            .enumerate()
            .map(|(j, p)| p * values[j * dv + col])
            .sum();
    }
}

/// Vectors c..c+W of o.
#[inline(always)]
fn mix_vectors<S: Simd, const W: usize>(
    s: S,
    p: &[f32],
    values: &[f32],
    dv: usize,
    c: usize,
    o: &mut [f32],
) {
    let lanes = S::F32_LANES;
    let mut acc = [s.splat_f32s(0.0); W];
    for (pj, row) in p.iter().zip(values.chunks_exact(dv)) {
        let pj = s.splat_f32s(*pj);
        let row = S::as_simd_f32s(&row[c * lanes..][..W * lanes]).0;
        for w in 0..W {
            acc[w] = s.mul_add_f32s(pj, row[w], acc[w]);
        }
    }
    S::as_mut_simd_f32s(&mut o[c * lanes..][..W * lanes])
        .0
        .copy_from_slice(&acc);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The textbook form: every score, −∞ where masked, softmax over the row with the sink.
    fn reference(h: &Heads, rule: &Rule, t: usize, total: usize) -> (Vec<f64>, Vec<f64>) {
        let (mut out, mut probs) = (vec![0f64; t * h.heads * h.dv], vec![]);
        for head in 0..h.heads {
            let kv = head / (h.heads / h.kv_heads);
            for i in 0..t {
                let qpos = h.start + i;
                let s: Vec<f64> = (0..total)
                    .map(|j| {
                        // What the span lets the query see causally, and its block both ways
                        // (within the span's bound from below, where that holds).
                        let hi = rule.reach.map_or(qpos, |r| r.blocks[i].1.max(qpos));
                        let bounded = |top: usize| match rule.span {
                            AttnSpan::Whole => true,
                            AttnSpan::Full => j <= top,
                            AttnSpan::Sliding(w) => j <= top && qpos < j + w as usize,
                            AttnSpan::Chunked(c) => j <= top && j / c as usize >= qpos / c as usize,
                        };
                        let visible = match rule.reach {
                            Some(r) if r.within_span => bounded(hi),
                            Some(r) => {
                                bounded(qpos) || (r.blocks[i].0..=r.blocks[i].1).contains(&j)
                            }
                            None => bounded(qpos),
                        };
                        if !visible {
                            return f64::NEG_INFINITY;
                        }
                        let x: f64 = (0..h.d)
                            .map(|c| {
                                h.q[(head * t + i) * h.d + c] as f64
                                    * h.k[(kv * h.stride + j) * h.d + c] as f64
                            })
                            .sum::<f64>()
                            * rule.scale as f64
                            + rule
                                .alibi
                                .map_or(0.0, |m| m[head] as f64 * (j as f64 - qpos as f64))
                            + rule
                                .pair_bias
                                .map_or(0.0, |b| b.at(h.heads, head, i, total, j) as f64)
                            + rule.rel_bias.map_or(0.0, |r| {
                                // The bias of the key's distance back, none ahead or beyond.
                                let back = qpos as i64 - j as i64;
                                if (0..r.extent as i64).contains(&back) {
                                    r.table[(head * t + i) * r.extent + back as usize] as f64
                                } else {
                                    0.0
                                }
                            });
                        let x = rule.softcap.map_or(x, |c| c as f64 * (x / c as f64).tanh());
                        // The key's score, and only the `keep` best-scored visible keys.
                        match &rule.key_scores {
                            None => x,
                            Some(ks) => {
                                let row = &ks.scores[kv * ks.total..][..ks.total];
                                let lo = (0..=qpos)
                                    .find(|&j| match rule.span {
                                        AttnSpan::Full | AttnSpan::Whole => true,
                                        AttnSpan::Sliding(w) => qpos - j < w as usize,
                                        AttnSpan::Chunked(c) => j / c as usize == qpos / c as usize,
                                    })
                                    .unwrap_or(0);
                                let hi = last_visible(rule.span, qpos, total);
                                let better = (lo..=hi).filter(|&o| row[o] > row[j]).count();
                                if better >= ks.keep {
                                    f64::NEG_INFINITY
                                } else {
                                    x + row[j] as f64
                                }
                            }
                        }
                    })
                    .collect();
                let sink = rule.sink(head, i, t).map(f64::from);
                let max = s
                    .iter()
                    .copied()
                    .chain(sink)
                    .fold(f64::NEG_INFINITY, f64::max);
                let sum: f64 = s.iter().chain(&sink).map(|x| (x - max).exp()).sum();
                for (j, s) in s.iter().enumerate() {
                    let p = (s - max).exp() / sum;
                    probs.push(p);
                    for c in 0..h.dv {
                        out[(i * h.heads + head) * h.dv + c] +=
                            p * h.v[(kv * h.stride + j) * h.dv + c] as f64;
                    }
                }
            }
        }
        (out, probs)
    }

    fn values(seed: u64, len: usize) -> Vec<f32> {
        crate::uniform(seed, len, 1.0)
    }

    #[test]
    fn matches_the_textbook_form_for_every_rule() {
        let (heads, kv_heads) = (6, 2);
        let sinks = values(9, heads);
        // Prefill (start 0) and a continuation over a cache (start 5), sizes past the pool's
        // threshold and below it; head sizes below one vector and of many vectors and a rest;
        // K/V heads that fill their blocks, and ones with room to spare (NaN, which any read
        // of it would carry into the output).
        for (start, t, d, dv, spare) in [
            (0, 9, 12, 10, 0),
            (5, 4, 12, 10, 3),
            (0, 40, 12, 10, 0),
            (3, 7, 67, 115, 2),
            (7, 150, 20, 17, 5),
        ] {
            let total = start + t;
            let stride = total + spare;
            let roomy = |seed, width| -> Vec<f32> {
                let v = values(seed, kv_heads * total * width);
                v.chunks(total * width)
                    .flat_map(|head| head.iter().copied().chain([f32::NAN].repeat(spare * width)))
                    .collect()
            };
            let (q, k, v) = (values(1, heads * t * d), roomy(2, d), roomy(3, dv));
            let h = Heads {
                q: &q,
                k: &k,
                v: &v,
                heads,
                kv_heads,
                d,
                dv,
                start,
                stride,
            };
            // A pair bias of 7 rows, each query and key reading one.
            let table = values(7, 7 * heads);
            let rows: Vec<u32> = (0..t * total).map(|r| (r * 5 % 7) as u32).collect();
            let pair = PairBias {
                table: &table,
                rows: &rows,
            };
            // Relative logits reaching 3 positions back.
            let rel_table = values(8, heads * t * 3);
            let rel = RelBias {
                table: &rel_table,
                extent: 3,
            };
            for span in [
                AttnSpan::Full,
                AttnSpan::Sliding(3),
                AttnSpan::Chunked(4),
                AttnSpan::Whole,
            ] {
                // Positive, as ALiBi's are (Bloom's lie in (0, 0.5]).
                let slopes: Vec<f32> = values(5, heads).iter().map(|m| m.abs() * 0.5).collect();
                let scores = values(6, kv_heads * total);
                for (softcap, sinks, alibi, keep, pair_bias, rel_bias) in [
                    (None, None, None, None, None, None),
                    (Some(2.0), None, None, None, None, None),
                    (None, Some(&sinks[..]), None, None, None, None),
                    (None, None, Some(&slopes[..]), None, None, None),
                    // Doge's dynamic mask: keys biased by their scores, and at most 2 kept.
                    (None, None, None, Some(2), None, None),
                    (None, None, None, None, Some(pair), None),
                    (None, None, None, None, None, Some(rel)),
                ] {
                    // An image's run of tokens (queries 1 to 3 of the pass) seeing itself whole.
                    let reach: Vec<(usize, usize)> = (0..t)
                        .map(|i| match (1..4).contains(&i) {
                            true => (start + 1, start + 3.min(t - 1)),
                            false => (start + i, start + i),
                        })
                        .collect();
                    let both = [true, false].map(|within_span| {
                        Some(Reach {
                            blocks: &reach[..],
                            within_span,
                        })
                    });
                    for reach in [None, both[0], both[1]] {
                        if keep.is_some() && reach.is_some() {
                            continue;
                        }
                        let rule = Rule {
                            scale: 0.3,
                            softcap,
                            span,
                            sinks,
                            token_sinks: None,
                            alibi,
                            pair_bias,
                            rel_bias,
                            selected: None,
                            key_scores: keep.map(|keep| KeyScores {
                                scores: &scores,
                                total,
                                keep,
                            }),
                            reach,
                        };
                        let (out, probs) = reference(&h, &rule, t, total);
                        // Both schedules, whichever `attend` would pick.
                        for (which, got) in [blocked(&h, &rule, true), by_row(&h, &rule, true)]
                            .into_iter()
                            .enumerate()
                        {
                            assert_eq!(got.out.len(), out.len());
                            for (at, (g, w)) in got.out.iter().zip(&out).enumerate() {
                                assert!(
                                    (*g as f64 - w).abs() < 1e-5,
                                    "{span:?} {softcap:?} reach {:?} start {start} t {t} schedule {which} at {at} sinks {} alibi {} pair {} rel {}: {g} vs {w}",
                                    reach.map(|r| (r.blocks.to_vec(), r.within_span)), sinks.is_some(), alibi.is_some(), pair_bias.is_some(), rel_bias.is_some()
                                );
                            }
                            for (g, w) in got.probs.unwrap().iter().zip(&probs) {
                                assert!((*g as f64 - w).abs() < 1e-6, "{span:?}: {g} vs {w}");
                            }
                            let scores = got.scores.unwrap();
                            assert_eq!(
                                scores.iter().filter(|s| s.is_finite()).count(),
                                probs.iter().filter(|p| **p > 0.0).count()
                            );
                        }
                    }
                }
            }
        }
    }
}
