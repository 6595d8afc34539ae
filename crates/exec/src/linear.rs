//! `x · Wᵀ` for a weight `W` stored [out, in]: the product behind every projection.
//!
//! A decode step multiplies one row of `x`, a prompt a few dozen; `W` is far larger than `x`.
//! gemm, which candle's matmul calls, runs a one-row product on one thread and repacks `W` on
//! every call. So `W` is packed once, when the model loads, into panels of 32 output rows laid out
//! column by column: the kernel streams each panel once from memory, keeps a tile of `x` rows ×
//! 32 outputs in registers, and needs no horizontal sums. The panels are shared among the threads
//! of `pool`. SIMD goes through `pulp`, which picks AVX-512, AVX2 + FMA, NEON or scalar code at
//! run time. `benches/linear.rs` measures it against candle's matmul.

use crate::pool::{for_ranges, Shared};
use candle_core::{Device, Tensor};
use pulp::{Simd, WithSimd};

/// Output rows per panel.
pub(crate) const PANEL: usize = 32;
/// Rows of `x` per unit of work: a multiple of every tile height below.
const ROWS: usize = 96;
/// Panels start on this many floats (a cache line), so no vector load straddles two lines.
const ALIGN: usize = 16;

/// A weight [out, n] in panels: panel p holds rows 32p..32p+32 column-major, element (k, j) at
/// 32k + j, zero-padded past `out`.
pub struct Packed {
    data: Vec<f32>,
    start: usize,
    out: usize,
    n: usize,
}

impl Packed {
    /// Zeros in the packed layout of a weight [out, n].
    fn zeroed(out: usize, n: usize) -> Packed {
        let data = vec![0f32; out.div_ceil(PANEL) * PANEL * n + ALIGN];
        let start = data.as_ptr().align_offset(ALIGN * 4).min(ALIGN);
        Packed {
            data,
            start,
            out,
            n,
        }
    }

    /// Packs `w`, row-major [out, n].
    pub fn new(w: &[f32], out: usize, n: usize) -> Packed {
        assert_eq!(w.len(), out * n, "Packed::new: W is not [out, n]");
        let mut packed = Packed::zeroed(out, n);
        let count = if n == 0 { 0 } else { out.div_ceil(PANEL) };
        let panels = &Shared::new(packed.panels_mut());
        for_ranges(count, out * n, |chunk| {
            for p in chunk {
                // SAFETY: panel p is inside the panels and written by this thread alone.
                let panel = unsafe { panels.part(p * PANEL * n, PANEL * n) };
                // Written in order, read from the panel's rows side by side.
                let rows: Vec<&[f32]> = w[p * PANEL * n..].chunks_exact(n).take(PANEL).collect();
                for (k, column) in panel.chunks_exact_mut(PANEL).enumerate() {
                    for (v, row) in column.iter_mut().zip(&rows) {
                        *v = row[k];
                    }
                }
            }
        });
        packed
    }

    /// Packs W from its transpose `wt`, row-major [n, out]: each panel column is a run of `wt`.
    pub fn new_transposed(wt: &[f32], out: usize, n: usize) -> Packed {
        assert_eq!(
            wt.len(),
            out * n,
            "Packed::new_transposed: Wᵀ is not [n, out]"
        );
        let mut packed = Packed::zeroed(out, n);
        if n > 0 {
            for (p, panel) in packed.panels_mut().chunks_exact_mut(PANEL * n).enumerate() {
                let cols = PANEL.min(out - p * PANEL);
                for (column, row) in panel.chunks_exact_mut(PANEL).zip(wt.chunks_exact(out)) {
                    column[..cols].copy_from_slice(&row[p * PANEL..][..cols]);
                }
            }
        }
        packed
    }

    /// Packs a 2-D f32 CPU tensor [out, n].
    pub fn from_tensor(w: &Tensor) -> candle_core::Result<Packed> {
        let (out, n) = w.dims2()?;
        with_values(w, |w| Packed::new(w, out, n))
    }

    fn panels(&self) -> &[f32] {
        &self.data[self.start..self.start + self.out.div_ceil(PANEL) * PANEL * self.n]
    }

    /// Panel `p`: rows 32p..32p + 32, column-major ([n, 32]).
    pub(crate) fn panel(&self, p: usize) -> &[f32] {
        &self.panels()[p * PANEL * self.n..][..PANEL * self.n]
    }

    fn panels_mut(&mut self) -> &mut [f32] {
        let len = self.out.div_ceil(PANEL) * PANEL * self.n;
        &mut self.data[self.start..self.start + len]
    }

    /// Rows `ids` of `W` as a tensor [ids, n]: an embedding lookup in a packed (tied) table.
    pub fn rows(&self, ids: &[u32]) -> candle_core::Result<Tensor> {
        let (panels, n) = (self.panels(), self.n);
        let mut v = Vec::with_capacity(ids.len() * n);
        for &id in ids {
            let o = id as usize;
            if o >= self.out {
                candle_core::bail!("token id {o} is past the vocabulary ({})", self.out)
            }
            let panel = &panels[(o / PANEL) * PANEL * n..][..PANEL * n];
            v.extend((0..n).map(|k| panel[k * PANEL + o % PANEL]));
        }
        Tensor::from_vec(v, (ids.len(), n), &Device::Cpu)
    }

    /// `x · Wᵀ` for a CPU tensor `x` [m, n]: [m, out].
    pub fn times(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let (m, n) = x.dims2()?;
        if n != self.n {
            candle_core::bail!("x has {n} columns, the weight {}", self.n)
        }
        let mut y = vec![0f32; m * self.out];
        with_values(x, |x| self.product(x, m, n, self.out, &mut y))?;
        Tensor::from_vec(y, (m, self.out), &Device::Cpu)
    }

    /// `y[i, o] = Σₖ x[i, k] · W[o, k]` over W's first `outs` rows and first `n` columns: `x`
    /// is [m, n] and `y` [m, outs], both row-major.
    pub fn product(&self, x: &[f32], m: usize, n: usize, outs: usize, y: &mut [f32]) {
        assert!(n <= self.n && outs <= self.out, "product: past the weight");
        assert_eq!(
            (x.len(), y.len()),
            (m * n, m * outs),
            "product: x or y is not [m, _]"
        );
        if n == 0 {
            return y.fill(0.0);
        }
        let (panels, stride) = (self.panels(), PANEL * self.n);
        // Units of one panel by up to ROWS rows, panel by panel, so the units a thread takes
        // in a row share their panel in cache.
        let blocks = m.div_ceil(ROWS);
        let y = Shared::new(y);
        for_ranges(outs.div_ceil(PANEL) * blocks, m * outs * n, |units| {
            for u in units {
                let (p, rows) = (
                    u / blocks,
                    (u % blocks) * ROWS..(m.min((u % blocks + 1) * ROWS)),
                );
                pulp::Arch::new().dispatch(Product {
                    x: &x[rows.start * n..rows.end * n],
                    panel: &panels[p * stride..][..PANEL * n],
                    n,
                    row0: rows.start,
                    col0: p * PANEL,
                    outs,
                    y: &y,
                })
            }
        });
    }
}

/// `y[row0 + i, col0 + j] = Σₖ x[i, k] · panel[k, j]` for one panel laid out as `Packed`'s
/// (element (k, j) at 32k + j) and the rows of `x` ([_, n]), the columns past `outs` left
/// alone: `qlinear`'s prompt path runs its dequantized weight rows as `x` against a prompt's
/// packed rows. `y` is [_, outs], its rows `row0..` this caller's alone.
pub(crate) fn panel_product(
    x: &[f32],
    n: usize,
    panel: &[f32],
    (row0, col0): (usize, usize),
    outs: usize,
    y: &Shared,
) {
    assert_eq!(
        panel.len(),
        PANEL * n,
        "panel_product: the panel is not [n, 32]"
    );
    pulp::Arch::new().dispatch(Product {
        x,
        panel,
        n,
        row0,
        col0,
        outs,
        y,
    })
}

/// Calls `f` with the values of an f32 CPU tensor, row-major, read in place when it is
/// contiguous.
pub(crate) fn with_values<T>(t: &Tensor, f: impl FnOnce(&[f32]) -> T) -> candle_core::Result<T> {
    let t = t.contiguous()?;
    let (storage, layout) = t.storage_and_layout();
    let candle_core::Storage::Cpu(cpu) = &*storage else {
        candle_core::bail!("the executor runs on the CPU")
    };
    let Some((start, end)) = layout.contiguous_offsets() else {
        candle_core::bail!("not contiguous")
    };
    Ok(f(&cpu.as_slice::<f32>()?[start..end]))
}

/// Rows of `x` times one panel: rows `row0..` and columns `col0..col0 + 32` of y.
struct Product<'a> {
    x: &'a [f32],
    panel: &'a [f32],
    n: usize,
    row0: usize,
    col0: usize,
    outs: usize,
    y: &'a Shared,
}

impl WithSimd for Product<'_> {
    type Output = ();

    /// Tiles of XR rows of `x` by the panel, in XR × V accumulators of V vectors: 8 × 2 for
    /// AVX-512's 32 registers, 3 × 4 for AVX2's 16, 3 × 8 for NEON's 32.
    #[inline(always)]
    fn with_simd<S: Simd>(self, s: S) {
        match S::F32_LANES {
            16 => self.run::<S, 8, 2>(s),
            8 => self.run::<S, 3, 4>(s),
            4 => self.run::<S, 3, 8>(s),
            _ => {
                let n = self.n;
                for (i, x) in self.x.chunks_exact(n).enumerate() {
                    for j in 0..PANEL {
                        let v = (0..n).map(|k| self.panel[k * PANEL + j] * x[k]);
                        self.store(i, j, v.sum());
                    }
                }
            }
        }
    }
}

impl Product<'_> {
    #[inline(always)]
    fn run<S: Simd, const XR: usize, const V: usize>(&self, s: S) {
        assert_eq!(V * S::F32_LANES, PANEL);
        let panel = S::as_simd_f32s(self.panel).0;
        let m = self.x.len() / self.n;
        let mut i = 0;
        while i + XR <= m {
            self.tile::<S, XR, V>(s, panel, i);
            i += XR;
        }
        match m - i {
            0 => {}
            1 => self.tile::<S, 1, V>(s, panel, i),
            2 => self.tile::<S, 2, V>(s, panel, i),
            3 => self.tile::<S, 3, V>(s, panel, i),
            4 => self.tile::<S, 4, V>(s, panel, i),
            5 => self.tile::<S, 5, V>(s, panel, i),
            6 => self.tile::<S, 6, V>(s, panel, i),
            _ => (i..m).for_each(|i| self.tile::<S, 1, V>(s, panel, i)),
        }
    }

    /// Rows i..i+XR of `x` against the panel: per column k, V vector loads of the panel and XR
    /// broadcasts of x feed XR × V multiply–adds.
    #[inline(always)]
    fn tile<S: Simd, const XR: usize, const V: usize>(&self, s: S, panel: &[S::f32s], i: usize) {
        let n = self.n;
        let x: [&[f32]; XR] = std::array::from_fn(|r| &self.x[(i + r) * n..][..n]);
        let mut acc = [[s.splat_f32s(0.0); V]; XR];
        for (w, k) in panel.chunks_exact(V).zip(0..n) {
            // A column of a panel is two cache lines.
            let ahead = w.as_ptr().cast::<f32>().wrapping_add(AHEAD);
            prefetch(ahead);
            prefetch(ahead.wrapping_add(16));
            for r in 0..XR {
                let b = s.splat_f32s(x[r][k]);
                for v in 0..V {
                    acc[r][v] = s.mul_add_f32s(w[v], b, acc[r][v]);
                }
            }
        }
        for (r, acc) in acc.iter().enumerate() {
            let mut lanes = [0f32; PANEL];
            S::as_mut_simd_f32s(&mut lanes).0.copy_from_slice(acc);
            for (j, v) in lanes.iter().enumerate() {
                self.store(i + r, j, *v);
            }
        }
    }

    /// y[row0 + i, col0 + j], unless that column is padding or past `outs`.
    #[inline(always)]
    fn store(&self, i: usize, j: usize, v: f32) {
        let o = self.col0 + j;
        if o < self.outs {
            // SAFETY: row0 + i < m and o < outs, so the index is inside y ([m, outs]); the
            // unit (panel, rows) is this thread's alone.
            unsafe { self.y.part((self.row0 + i) * self.outs + o, 1)[0] = v }
        }
    }
}

/// How far ahead of the column being multiplied the panels are fetched, in floats: one
/// decode step streams every weight from memory once, faster than the hardware prefetcher
/// alone would fetch them.
const AHEAD: usize = 512;

/// Asks for the cache line at `p` (any address: a prefetch never faults).
#[inline(always)]
fn prefetch(p: *const f32) {
    // SAFETY: prefetching has no effect a program can observe; SSE is part of x86_64.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast())
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn values(seed: u64, len: usize) -> Vec<f32> {
        crate::uniform(seed, len, 0.5)
    }

    proptest! {
        /// Every shape, including partial panels and partial tiles, on one thread and (past
        /// PARALLEL_MIN) split across the pool, against a double-precision sum; and the packed
        /// table's rows are W's rows.
        #[test]
        fn matches_a_double_precision_sum(
            m in 1usize..200, out in 1usize..100, n in 1usize..300, seed in 0u64..1000
        ) {
            let (x, w) = (values(seed, m * n), values(seed + 1, out * n));
            let packed = Packed::new(&w, out, n);
            // x[:, :k] · W[:outs, :k]ᵀ: the whole weight, and its first rows and columns.
            for (k, outs) in [(n, out), (n / 2 + 1, out / 2 + 1)] {
                let xk: Vec<f32> = x.chunks_exact(n).flat_map(|r| r[..k].iter().copied()).collect();
                let mut y = vec![f32::NAN; m * outs];
                packed.product(&xk, m, k, outs, &mut y);
                for i in 0..m {
                    for o in 0..outs {
                        let want: f64 = (0..k).map(|c| x[i * n + c] as f64 * w[o * n + c] as f64).sum();
                        let got = y[i * outs + o] as f64;
                        prop_assert!((got - want).abs() <= 1e-5 * (1.0 + want.abs()), "[{i},{o}] of {k}×{outs}: {got} vs {want}");
                    }
                }
            }
            // Packed from Wᵀ, the same panels.
            let wt: Vec<f32> = (0..n * out).map(|e| w[(e % out) * n + e / out]).collect();
            let from_wt = Packed::new_transposed(&wt, out, n);
            prop_assert_eq!(from_wt.panels(), packed.panels());
            let ids: Vec<u32> = (0..out as u32).rev().collect();
            let rows: Vec<f32> = packed.rows(&ids).unwrap().flatten_all().unwrap().to_vec1().unwrap();
            for (r, &id) in ids.iter().enumerate() {
                prop_assert_eq!(&rows[r * n..(r + 1) * n], &w[id as usize * n..(id as usize + 1) * n]);
            }
        }
    }

    #[test]
    fn agrees_with_candles_matmul() {
        for (m, out, n) in [(1, 1536, 576), (21, 576, 1536), (7, 49, 33), (70, 40, 64)] {
            let x = Tensor::from_vec(values(1, m * n), (m, n), &Device::Cpu).unwrap();
            let w = Tensor::from_vec(values(2, out * n), (out, n), &Device::Cpu).unwrap();
            let got = Packed::from_tensor(&w).unwrap().times(&x).unwrap();
            let want = x.matmul(&w.t().unwrap()).unwrap();
            let diff: f32 = (got - want)
                .unwrap()
                .abs()
                .unwrap()
                .max_all()
                .unwrap()
                .to_scalar()
                .unwrap();
            assert!(diff < 1e-4, "{m}×{out}×{n}: {diff}");
        }
    }

    /// The paths this CPU does not dispatch to (AVX2 on an AVX-512 machine, the scalar
    /// fallback), called directly.
    #[test]
    fn every_simd_path_agrees() {
        for (m, out, n) in [(1, 70, 33), (11, 64, 50), (3, 5, 7)] {
            let (x, w) = (values(4, m * n), values(5, out * n));
            let packed = Packed::new(&w, out, n);
            let run = |f: &dyn Fn(Product)| {
                let mut y = vec![f32::NAN; m * out];
                let shared = Shared::new(&mut y);
                for (p, panel) in packed.panels().chunks_exact(PANEL * n).enumerate() {
                    f(Product {
                        x: &x,
                        panel,
                        n,
                        row0: 0,
                        col0: p * PANEL,
                        outs: out,
                        y: &shared,
                    });
                }
                y
            };
            let mut paths = vec![("scalar", run(&|p| p.with_simd(pulp::Scalar::new())))];
            #[cfg(target_arch = "x86_64")]
            if let Some(v3) = pulp::x86::V3::try_new() {
                paths.push(("avx2", run(&|p| v3.vectorize(|| p.with_simd(v3)))));
            }
            for (name, y) in paths {
                for i in 0..m {
                    for o in 0..out {
                        let want: f64 = (0..n)
                            .map(|k| x[i * n + k] as f64 * w[o * n + k] as f64)
                            .sum();
                        let got = y[i * out + o] as f64;
                        assert!((got - want).abs() <= 1e-5 * (1.0 + want.abs()), "{name}");
                    }
                }
            }
        }
    }

    #[test]
    fn empty_dimensions_give_empty_or_zero_products() {
        let x = Tensor::zeros((3, 0), candle_core::DType::F32, &Device::Cpu).unwrap();
        let y = Packed::new(&[], 5, 0).times(&x).unwrap();
        assert_eq!(y.dims(), &[3, 5]);
        assert_eq!(y.sum_all().unwrap().to_scalar::<f32>().unwrap(), 0.0);
        let x = Tensor::ones((2, 4), candle_core::DType::F32, &Device::Cpu).unwrap();
        assert_eq!(Packed::new(&[], 0, 4).times(&x).unwrap().dims(), &[2, 0]);
    }

    #[test]
    fn rejects_ids_past_the_table() {
        let packed = Packed::new(&values(3, 40 * 8), 40, 8);
        assert!(packed.rows(&[40]).is_err());
    }
}
