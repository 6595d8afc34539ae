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
const PANEL: usize = 32;
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
    /// Packs `w`, row-major [out, n].
    pub fn new(w: &[f32], out: usize, n: usize) -> Packed {
        assert_eq!(w.len(), out * n, "Packed::new: W is not [out, n]");
        let panels = out.div_ceil(PANEL);
        let mut data = vec![0f32; panels * PANEL * n + ALIGN];
        let start = data.as_ptr().align_offset(ALIGN * 4).min(ALIGN);
        let packed = &Shared::new(&mut data[start..]);
        let panels = if n == 0 { 0 } else { panels };
        for_ranges(panels, out * n, |chunk| {
            for p in chunk {
                // SAFETY: panel p is inside `data` and written by this thread alone.
                let panel = unsafe { packed.part(p * PANEL * n, PANEL * n) };
                // Written in order, read from the panel's rows side by side.
                let rows: Vec<&[f32]> = w[p * PANEL * n..].chunks_exact(n).take(PANEL).collect();
                for (k, column) in panel.chunks_exact_mut(PANEL).enumerate() {
                    for (v, row) in column.iter_mut().zip(&rows) {
                        *v = row[k];
                    }
                }
            }
        });
        Packed {
            data,
            start,
            out,
            n,
        }
    }

    /// Packs a 2-D f32 CPU tensor [out, n], reading its values in place.
    pub fn from_tensor(w: &Tensor) -> candle_core::Result<Packed> {
        let (out, n) = w.dims2()?;
        let w = w.contiguous()?;
        let (storage, layout) = w.storage_and_layout();
        let candle_core::Storage::Cpu(cpu) = &*storage else {
            candle_core::bail!("the executor runs on the CPU")
        };
        let Some((start, end)) = layout.contiguous_offsets() else {
            candle_core::bail!("not contiguous")
        };
        Ok(Packed::new(&cpu.as_slice::<f32>()?[start..end], out, n))
    }

    fn panels(&self) -> &[f32] {
        &self.data[self.start..self.start + self.out.div_ceil(PANEL) * PANEL * self.n]
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
        let x = x.contiguous()?.flatten_all()?.to_vec1::<f32>()?;
        let mut y = vec![0f32; m * self.out];
        self.x_wt(&x, m, &mut y);
        Tensor::from_vec(y, (m, self.out), &Device::Cpu)
    }

    /// `y[i, o] = Σₖ x[i, k] · W[o, k]`; `x` is [m, n] and `y` [m, out], both row-major.
    fn x_wt(&self, x: &[f32], m: usize, y: &mut [f32]) {
        let (n, out) = (self.n, self.out);
        assert_eq!(
            (x.len(), y.len()),
            (m * n, m * out),
            "x_wt: x or y is not [m, _]"
        );
        if n == 0 {
            return y.fill(0.0);
        }
        let panels = self.panels();
        let y = Shared::new(y);
        for_ranges(out.div_ceil(PANEL), m * out * n, |p| {
            pulp::Arch::new().dispatch(Product {
                x,
                panels: &panels[p.start * PANEL * n..p.end * PANEL * n],
                n,
                m,
                first: p.start,
                out,
                y: &y,
            })
        });
    }
}

/// Panels `first..` against every row of `x`.
struct Product<'a> {
    x: &'a [f32],
    panels: &'a [f32],
    n: usize,
    m: usize,
    first: usize,
    out: usize,
    y: &'a Shared,
}

impl WithSimd for Product<'_> {
    type Output = ();

    /// Tiles of XR rows of `x` by one panel, in XR × V accumulators of V vectors: 8 × 2 for
    /// AVX-512's 32 registers, 3 × 4 for AVX2's 16, 3 × 8 for NEON's 32.
    #[inline(always)]
    fn with_simd<S: Simd>(self, s: S) {
        match S::F32_LANES {
            16 => self.run::<S, 8, 2>(s),
            8 => self.run::<S, 3, 4>(s),
            4 => self.run::<S, 3, 8>(s),
            _ => {
                for (p, panel) in self.panels.chunks_exact(PANEL * self.n).enumerate() {
                    for i in 0..self.m {
                        for j in 0..PANEL {
                            let v =
                                (0..self.n).map(|k| panel[k * PANEL + j] * self.x[i * self.n + k]);
                            self.store(i, p, j, v.sum());
                        }
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
        for (p, panel) in self.panels.chunks_exact(PANEL * self.n).enumerate() {
            let panel = S::as_simd_f32s(panel).0;
            let mut i = 0;
            while i + XR <= self.m {
                self.tile::<S, XR, V>(s, panel, p, i);
                i += XR;
            }
            match self.m - i {
                0 => {}
                1 => self.tile::<S, 1, V>(s, panel, p, i),
                2 => self.tile::<S, 2, V>(s, panel, p, i),
                3 => self.tile::<S, 3, V>(s, panel, p, i),
                4 => self.tile::<S, 4, V>(s, panel, p, i),
                5 => self.tile::<S, 5, V>(s, panel, p, i),
                6 => self.tile::<S, 6, V>(s, panel, p, i),
                _ => (i..self.m).for_each(|i| self.tile::<S, 1, V>(s, panel, p, i)),
            }
        }
    }

    /// Rows i..i+XR of `x` against panel p: per column k, V vector loads of the panel and XR
    /// broadcasts of x feed XR × V multiply–adds.
    #[inline(always)]
    fn tile<S: Simd, const XR: usize, const V: usize>(
        &self,
        s: S,
        panel: &[S::f32s],
        p: usize,
        i: usize,
    ) {
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
                self.store(i + r, p, j, *v);
            }
        }
    }

    /// y[row i, output 32·(first + p) + j], unless that output is padding.
    #[inline(always)]
    fn store(&self, i: usize, p: usize, j: usize, v: f32) {
        let o = (self.first + p) * PANEL + j;
        if o < self.out {
            // SAFETY: i < m and o < out, so the index is inside y ([m, out]); output o belongs
            // to this thread's panels alone.
            unsafe { self.y.part(i * self.out + o, 1)[0] = v }
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
        let mut s = seed;
        (0..len)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((s >> 40) as f32 / (1u64 << 24) as f32) - 0.5
            })
            .collect()
    }

    proptest! {
        /// Every shape, including partial panels and partial tiles, on one thread and (past
        /// PARALLEL_MIN) split across the pool, against a double-precision sum; and the packed
        /// table's rows are W's rows.
        #[test]
        fn matches_a_double_precision_sum(
            m in 1usize..20, out in 1usize..100, n in 1usize..300, seed in 0u64..1000
        ) {
            let (x, w) = (values(seed, m * n), values(seed + 1, out * n));
            let packed = Packed::new(&w, out, n);
            let mut y = vec![f32::NAN; m * out];
            packed.x_wt(&x, m, &mut y);
            for i in 0..m {
                for o in 0..out {
                    let want: f64 = (0..n).map(|k| x[i * n + k] as f64 * w[o * n + k] as f64).sum();
                    let got = y[i * out + o] as f64;
                    prop_assert!((got - want).abs() <= 1e-5 * (1.0 + want.abs()), "[{i},{o}] {got} vs {want}");
                }
            }
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
                f(Product {
                    x: &x,
                    panels: packed.panels(),
                    n,
                    m,
                    first: 0,
                    out,
                    y: &shared,
                });
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
