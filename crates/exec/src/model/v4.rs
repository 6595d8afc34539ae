//! DeepSeek-V4's attention on the CPU, a child of `model`: the latent query, the one
//! key-and-value head over a sliding window, the compressors' entries (and the compressed
//! sparse layers' indexer), the heads with their sinks, and the grouped output projection; and
//! its routing by token id. The state a layer carries from step to step: its rotated keys, and
//! per compressor the projections of the tokens of the window being filled and of the window
//! before it (whose first halves the next entry reads), and the entries made so far.

use super::{Fault, Model, Res};
use anatomy_core::graph::Point;
use anatomy_core::naming::Role;
use anatomy_core::spec::{Moe, RopeFreqs, V4Kind};
use anatomy_core::Error;
use candle_core::{Device, Tensor};

/// One compressor's state: every token's entry part and gate so far since the start of the
/// window before the open one ([n, width] each, row-major), the position of their first token,
/// and the entries made ([entries, dim]).
#[derive(Clone, Default)]
struct Compressed {
    parts: Vec<f32>,
    gates: Vec<f32>,
    first: usize,
    entries: Vec<f32>,
}

/// A layer's state: its rotated keys-and-values [rows, head_dim] from position `kv_first` on
/// (the window's), its compressor's and its indexer's.
#[derive(Clone, Default)]
pub struct V4State {
    kv: Vec<f32>,
    kv_first: usize,
    comp: Compressed,
    index: Compressed,
}

impl V4State {
    pub fn bytes(&self) -> usize {
        let c = |c: &Compressed| (c.parts.len() + c.gates.len() + c.entries.len()) * 4;
        (self.kv.len()) * 4 + c(&self.comp) + c(&self.index)
    }
}

/// Row-wise RMS norm of rows of `d`, times `w` where given.
fn rms_rows(v: &mut [f32], d: usize, w: Option<&[f32]>, eps: f64) {
    for row in v.chunks_exact_mut(d) {
        let ms: f32 = row.iter().map(|x| x * x).sum::<f32>() / d as f32;
        let inv = 1.0 / (ms + eps as f32).sqrt();
        for (i, x) in row.iter_mut().enumerate() {
            *x *= inv;
            if let Some(w) = w {
                *x *= w[i];
            }
        }
    }
}

/// Rotates the last `r` dims of each row of `d` (interleaved pairs) by the angle of its
/// position, `pos(row)`; backwards with `sign` −1.
fn rope_rows(
    v: &mut [f32],
    d: usize,
    r: usize,
    f: &RopeFreqs,
    pos: impl Fn(usize) -> usize,
    sign: f32,
) {
    let rows = v.len() / d;
    let reach = (0..rows).map(&pos).max().map_or(1, |p| p + 1);
    let (inv, factor) = crate::rope::inv_freq(f, r, reach);
    for (i, row) in v.chunks_exact_mut(d).enumerate() {
        let p = pos(i) as f32;
        let tail = &mut row[d - r..];
        for (j, x) in inv.iter().enumerate() {
            let a = p * *x as f32;
            let (c, s) = (a.cos() * factor as f32, sign * a.sin() * factor as f32);
            let (x0, x1) = (tail[2 * j], tail[2 * j + 1]);
            tail[2 * j] = x0 * c - x1 * s;
            tail[2 * j + 1] = x1 * c + x0 * s;
        }
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

impl Compressed {
    /// Takes the step's entry parts and gates (rows of `width`) and makes the entries of every
    /// window of `m` they close: a softmax over the window's slots (and, with `overlap`, the
    /// window before it, each token's first half of features for the next window's entry),
    /// feature by feature, of the gates plus the slot's bias, weighing the parts; each entry
    /// RMS-normed by `norm` and rotated at its window's first position. Returns how many
    /// entries there now are.
    #[allow(clippy::too_many_arguments)]
    fn take(
        &mut self,
        parts: &[f32],
        gates: &[f32],
        (m, width, overlap): (usize, usize, bool),
        bias: &[f32],
        norm: &[f32],
        eps: f64,
        (r, freqs): (usize, &RopeFreqs),
    ) -> usize {
        self.parts.extend_from_slice(parts);
        self.gates.extend_from_slice(gates);
        let d = if overlap { width / 2 } else { width };
        let made = self.entries.len() / d;
        let held = self.parts.len() / width;
        // Windows closed: those whose last token is held.
        let closed = (self.first + held) / m;
        for w in made..closed {
            // (held row, feature offset, bias row) of each slot: the window before (its tokens'
            // first halves), where there is one, then the window's own (second halves).
            let start = w * m - self.first;
            let own = if overlap { d } else { 0 };
            let mut slots: Vec<(usize, usize, usize)> = Vec::with_capacity(2 * m);
            if overlap && w > 0 {
                slots.extend((0..m).map(|j| (start - m + j, 0, j)));
            }
            slots.extend((0..m).map(|j| (start + j, own, j)));
            let mut entry = vec![0f32; d];
            for (c, e) in entry.iter_mut().enumerate() {
                let logits: Vec<f32> = slots
                    .iter()
                    .map(|&(row, off, j)| {
                        self.gates[row * width + off + c] + bias[j * width + off + c]
                    })
                    .collect();
                let mx = logits.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
                let ex: Vec<f32> = logits.iter().map(|l| (l - mx).exp()).collect();
                let sum: f32 = ex.iter().sum();
                *e = slots
                    .iter()
                    .zip(&ex)
                    .map(|(&(row, off, _), x)| self.parts[row * width + off + c] * (x / sum))
                    .sum();
            }
            rms_rows(&mut entry, d, Some(norm), eps);
            rope_rows(&mut entry, d, r, freqs, |_| w * m, 1.0);
            self.entries.extend(entry);
        }
        // Keep the open window and the one before it: the next entry reads no further back.
        let keep_from = (closed.saturating_sub(1) * m).max(self.first);
        let drop = keep_from - self.first;
        if drop > 0 {
            self.parts.drain(..drop * width);
            self.gates.drain(..drop * width);
            self.first = keep_from;
        }
        closed
    }
}

impl Model {
    fn floats(&self, role: Role, b: usize) -> Res<Vec<f32>> {
        Ok(self.w(role, Some(b))?.flatten_all()?.to_vec1()?)
    }

    /// `x` [t, in] times the stored weight of `role` in layer `b`, as rows of a Vec.
    fn rows_of(&self, x: &Tensor, role: Role, b: usize) -> Res<Vec<f32>> {
        Ok(self.proj(x, role, b, false)?.flatten_all()?.to_vec1()?)
    }

    /// DeepSeek-V4's attention of layer `b` on the normed input `x` [t, hidden].
    pub(super) fn v4_attention(
        &self,
        x: &Tensor,
        b: usize,
        cache: &mut super::Cache,
    ) -> Res<Tensor> {
        let spec = &self.spec;
        let a = &spec.attn;
        let v = a.v4.as_ref().expect("DeepSeek-V4 attention");
        let (t, h, hd, r) = (
            x.dim(0)?,
            a.heads as usize,
            a.head_dim as usize,
            v.rope_dim as usize,
        );
        let eps = spec.norm.eps;
        let p0 = cache.pos;
        let kind = v.kind(b as u64);
        let freqs = match kind {
            V4Kind::Sliding => spec.v4_main_freqs(),
            V4Kind::Csa(_) | V4Kind::Hca(_) => &v.compress_freqs,
        };
        // The query latent, and each head's query: RMS-normed without a weight, rotated.
        let cq = self.norm(&self.proj(x, Role::QA, b, false)?, Role::QANorm, Some(b))?;
        self.keep(Some(b), Point::QLatent, &cq);
        let mut q: Vec<f32> = self.rows_of(&cq, Role::QB, b)?;
        rms_rows(&mut q, hd, None, eps);
        rope_rows(&mut q, hd, r, freqs, |i| p0 + i / h, 1.0);
        // The key-and-value head, normed and rotated, joins the layer's state.
        let mut kv: Vec<f32> = self.rows_of(x, Role::V4Kv, b)?;
        rms_rows(&mut kv, hd, Some(&self.floats(Role::V4KvNorm, b)?), eps);
        rope_rows(&mut kv, hd, r, freqs, |i| p0 + i, 1.0);
        let mut state = cache.v4[b].take().unwrap_or_default();
        state.kv.extend_from_slice(&kv);
        self.keep(
            Some(b),
            Point::Kv,
            &Tensor::from_vec(kv, (t, hd), &Device::Cpu)?,
        );
        // The compressor's entries, and which each query reads.
        let visible: Vec<Vec<usize>> = match kind {
            V4Kind::Sliding => vec![vec![]; t],
            V4Kind::Csa(m) | V4Kind::Hca(m) => {
                let m = m as usize;
                let overlap = matches!(kind, V4Kind::Csa(_));
                let width = if overlap { 2 * hd } else { hd };
                let (parts, gates) = (
                    self.rows_of(x, Role::CompKv, b)?,
                    self.rows_of(x, Role::CompGate, b)?,
                );
                let n = state.comp.take(
                    &parts,
                    &gates,
                    (m, width, overlap),
                    &self.floats(Role::CompBias, b)?,
                    &self.floats(Role::CompNorm, b)?,
                    eps,
                    (r, &v.compress_freqs),
                );
                // Query i sees the entries of windows closed by its position.
                let closed = |i: usize| ((p0 + i + 1) / m).min(n);
                if overlap {
                    self.v4_index(x, &cq, (b, p0), m, &mut state, closed)?
                } else {
                    (0..t).map(|i| (0..closed(i)).collect()).collect()
                }
            }
        };
        // The heads: the window's keys, then the visible entries; the sink; values = keys.
        let w = spec.v4_window() as usize;
        let sinks = self.floats(Role::Sinks, b)?;
        let scale = 1.0 / (hd as f32).sqrt();
        let mut out = vec![0f32; t * h * hd];
        for i in 0..t {
            let p = p0 + i;
            let keys: Vec<&[f32]> = (p.saturating_sub(w - 1)..=p)
                .map(|j| &state.kv[(j - state.kv_first) * hd..][..hd])
                .chain(
                    visible[i]
                        .iter()
                        .map(|&e| &state.comp.entries[e * hd..][..hd]),
                )
                .collect();
            for head in 0..h {
                let qh = &q[(i * h + head) * hd..][..hd];
                let s: Vec<f32> = keys.iter().map(|k| dot(qh, k) * scale).collect();
                let mx = s.iter().cloned().fold(sinks[head], f32::max);
                let ex: Vec<f32> = s.iter().map(|x| (x - mx).exp()).collect();
                let sum = ex.iter().sum::<f32>() + (sinks[head] - mx).exp();
                let o = &mut out[(i * h + head) * hd..][..hd];
                for (k, e) in keys.iter().zip(&ex) {
                    for (oc, kc) in o.iter_mut().zip(k.iter()) {
                        *oc += kc * (e / sum);
                    }
                }
            }
        }
        // The window ahead needs the last w − 1 keys alone.
        let keep_from = (p0 + t).saturating_sub(w - 1).max(state.kv_first);
        state.kv.drain(..(keep_from - state.kv_first) * hd);
        state.kv_first = keep_from;
        // The output's last dims rotate back by the query's position.
        rope_rows(&mut out, hd, r, freqs, |i| p0 + i / h, -1.0);
        cache.v4[b] = Some(state);
        let o = Tensor::from_vec(out, (t, h * hd), &Device::Cpu)?;
        self.keep(Some(b), Point::AttnHeads, &o);
        // Grouped output projection: group g's features times its block of W_oa.
        let (g, rank) = (v.o_groups as usize, v.o_lora_rank as usize);
        let per = h * hd / g;
        let woa = self.w(Role::V4OA, Some(b))?;
        let mut parts = Vec::with_capacity(g);
        for k in 0..g {
            let xs = o.narrow(1, k * per, per)?;
            let wk = woa.narrow(0, k * rank, rank)?;
            parts.push(xs.matmul(&wk.t()?)?);
        }
        let oa = Tensor::cat(&parts, 1)?;
        self.keep(Some(b), Point::OA, &oa);
        self.proj(&oa, Role::V4OB, b, false)
    }

    /// The compressed sparse layer's indexer: its compressor's keys, each query's scores of
    /// the entries of closed windows, and the best `top_k` of them.
    fn v4_index(
        &self,
        x: &Tensor,
        cq: &Tensor,
        (b, p0): (usize, usize),
        m: usize,
        state: &mut V4State,
        closed: impl Fn(usize) -> usize,
    ) -> Res<Vec<Vec<usize>>> {
        let spec = &self.spec;
        let v = spec.attn.v4.as_ref().expect("DeepSeek-V4 attention");
        let ix = v.index;
        let (t, ih, id, r) = (
            x.dim(0)?,
            ix.heads as usize,
            ix.head_dim as usize,
            v.rope_dim as usize,
        );
        let (parts, gates) = (
            self.rows_of(x, Role::IndexCompKv, b)?,
            self.rows_of(x, Role::IndexCompGate, b)?,
        );
        state.index.take(
            &parts,
            &gates,
            (m, 2 * id, true),
            &self.floats(Role::IndexCompBias, b)?,
            &self.floats(Role::IndexCompNorm, b)?,
            spec.norm.eps,
            (r, &v.compress_freqs),
        );
        let mut q = self.rows_of(cq, Role::IndexQ, b)?;
        rope_rows(&mut q, id, r, &v.compress_freqs, |i| p0 + i / ih, 1.0);
        let wts = self.rows_of(x, Role::IndexWeights, b)?;
        let (qs, ws) = (1.0 / (id as f32).sqrt(), 1.0 / (ih as f32).sqrt());
        let mut chosen = Vec::with_capacity(t);
        for i in 0..t {
            let scores: Vec<f32> = (0..closed(i))
                .map(|e| {
                    let k = &state.index.entries[e * id..][..id];
                    (0..ih)
                        .map(|hh| {
                            let s = dot(&q[(i * ih + hh) * id..][..id], k).max(0.0) * qs;
                            s * (wts[i * ih + hh] * ws)
                        })
                        .sum()
                })
                .collect();
            let keep = (ix.top_k as usize).min(scores.len());
            chosen.push(super::top_indices(&scores, keep));
        }
        Ok(chosen)
    }

    /// Routing by token id (DeepSeek-V4's first layers): the experts the stored table lists
    /// for each token, weighted by the router's scores (√softplus or σ) renormalized.
    pub(super) fn hashed(
        &self,
        logits: &[Vec<f32>],
        m: &Moe,
        b: usize,
        ids: &[u32],
    ) -> Res<Vec<Vec<(usize, f32)>>> {
        // Only the step's tokens' rows are read: the table holds one per vocabulary entry.
        let table = self.w(Role::HashTable, Some(b))?;
        let mut out = Vec::with_capacity(ids.len());
        for (row, &id) in logits.iter().zip(ids) {
            let probs: Vec<f32> = row
                .iter()
                .map(|&v| super::router_score(m.scoring, v))
                .collect();
            let picks: Vec<f32> = table.get(id as usize)?.to_vec1()?;
            let k = picks.len();
            let mut chosen = Vec::with_capacity(k);
            for e in picks {
                if !(e >= 0.0 && (e as usize) < probs.len()) {
                    return Err(Fault::from(Error::new(
                        &self.spec.name,
                        "tid2eid",
                        format!(
                            "lists expert {e} for token {id}; the layer has {} experts",
                            probs.len()
                        ),
                    )));
                }
                chosen.push((e as usize, probs[e as usize]));
            }
            let sum: f32 = chosen.iter().map(|c| c.1).sum::<f32>() + m.renorm_eps as f32;
            out.push(
                chosen
                    .into_iter()
                    .map(|(e, p)| (e, p / sum * m.routed_scaling as f32))
                    .collect(),
            );
        }
        Ok(out)
    }
}
