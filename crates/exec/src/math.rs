//! Elementwise functions of the forward pass, written so the compiler vectorizes them: e^x as a
//! polynomial (a call to libm's expf, one value at a time, cannot be vectorized), the softmax of a
//! row, and the SiLU gate times up. Each loop runs under `pulp`'s dispatch, so it is compiled for
//! the CPU's widest vectors.

use crate::pool::{for_ranges, Shared};
use pulp::{Simd, WithSimd};

/// e^x, within 2 ulp of the exact value: Cephes' expf (x = n·ln 2 + r, a degree-7 polynomial in
/// r, 2ⁿ built in the exponent bits). Inputs below −87.3 give 2⁻¹²⁶ × e^r instead of a subnormal
/// and above 88 the largest finite result, where expf gives 0 or ∞: both vanish in a softmax
/// or a SiLU.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    // Adding 1.5 · 2²³ rounds to an integer held in the low bits of the mantissa: no floor
    // (a libm call before SSE4.1) and no float-to-int conversion.
    const ROUND: f32 = 12_582_912.0;
    let x = x.clamp(-87.3, 88.0);
    let t = x * std::f32::consts::LOG2_E + ROUND;
    let n = t - ROUND;
    // ln 2 in two parts, so n · ln 2 loses nothing.
    let r = x - n * 0.693_359_4 + n * 2.121_944_4e-4;
    let p = (((((1.987_569_1e-4 * r + 1.398_199_9e-3) * r + 8.333_452e-3) * r + 4.166_579_6e-2)
        * r
        + 1.666_666_5e-1)
        * r
        + 0.5)
        * r
        * r
        + r
        + 1.0;
    let two_n = (t.to_bits() as i32 - ROUND.to_bits() as i32 + 127) << 23;
    p * f32::from_bits(two_n as u32)
}

/// Σ x in eight independent lanes (one running sum could not be reordered into vectors).
#[inline(always)]
fn sum(x: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let chunks = x.chunks_exact(8);
    let tail: f32 = chunks.remainder().iter().sum();
    for c in chunks {
        for l in 0..8 {
            acc[l] += c[l];
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// max x in eight lanes.
#[inline(always)]
fn max(x: &[f32]) -> f32 {
    let mut acc = [f32::NEG_INFINITY; 8];
    let chunks = x.chunks_exact(8);
    let tail = chunks
        .remainder()
        .iter()
        .copied()
        .fold(f32::NEG_INFINITY, f32::max);
    for c in chunks {
        for l in 0..8 {
            acc[l] = acc[l].max(c[l]);
        }
    }
    acc.iter().copied().fold(tail, f32::max)
}

/// Scores into weights, in place: softmax, with the sink's logit (when there is one) in the
/// denominator only.
pub fn softmax(row: &mut [f32], sink: Option<f32>) {
    pulp::Arch::new().dispatch(Softmax { row, sink })
}

struct Softmax<'a> {
    row: &'a mut [f32],
    sink: Option<f32>,
}

impl WithSimd for Softmax<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) {
        let (row, sink) = (self.row, self.sink);
        let mut m = max(row);
        if let Some(s) = sink {
            m = m.max(s);
        }
        for x in row.iter_mut() {
            *x = exp(*x - m);
        }
        let total = sum(row) + sink.map_or(0.0, |s| exp(s - m));
        for x in row.iter_mut() {
            *x /= total;
        }
    }
}

/// `silu(g) · u`, with silu(g) = g / (1 + e^−g) as torch computes it; blocks of values across
/// the pool.
pub fn silu_mul(g: &[f32], u: &[f32]) -> Vec<f32> {
    const BLOCK: usize = 1 << 14;
    assert_eq!(g.len(), u.len(), "silu_mul: gate and up differ");
    let mut out = vec![0f32; g.len()];
    let shared = Shared::new(&mut out);
    for_ranges(g.len().div_ceil(BLOCK), g.len() * 16, |blocks| {
        let (start, end) = (blocks.start * BLOCK, g.len().min(blocks.end * BLOCK));
        // SAFETY: the blocks of each call are its own.
        let out = unsafe { shared.part(start, end - start) };
        pulp::Arch::new().dispatch(SiluMul {
            g: &g[start..end],
            u: &u[start..end],
            out,
        });
    });
    out
}

struct SiluMul<'a> {
    g: &'a [f32],
    u: &'a [f32],
    out: &'a mut [f32],
}

impl WithSimd for SiluMul<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) {
        for ((o, g), u) in self.out.iter_mut().zip(self.g).zip(self.u) {
            *o = g / (1.0 + exp(-g)) * u;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ulps(a: f32, b: f32) -> u32 {
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs() as u32
    }

    #[test]
    fn exp_is_within_two_ulp_of_the_exact_value() {
        let mut worst = 0;
        for i in 0..=2_000_000 {
            let x = (-87.0 + 175.0 * i as f64 / 2_000_000.0) as f32;
            worst = worst.max(ulps(exp(x), (x as f64).exp() as f32));
        }
        assert!(worst <= 2, "{worst} ulp");
        assert_eq!(exp(0.0), 1.0);
        assert!(exp(-1e4) < 1e-37 && exp(1e4).is_finite() && exp(1e4) > 1e38);
    }

    #[test]
    fn softmax_and_silu_match_their_definitions() {
        let row: Vec<f32> = (0..37).map(|i| (i as f32 * 0.37).sin() * 9.0).collect();
        for sink in [None, Some(2.5)] {
            let mut got = row.clone();
            softmax(&mut got, sink);
            let m = row
                .iter()
                .copied()
                .chain(sink)
                .fold(f64::NEG_INFINITY, |a, b| a.max(b as f64));
            let total: f64 = row.iter().chain(&sink).map(|x| (*x as f64 - m).exp()).sum();
            for (g, x) in got.iter().zip(&row) {
                let want = (*x as f64 - m).exp() / total;
                assert!((*g as f64 - want).abs() < 1e-7, "{g} vs {want}");
            }
        }
        // Short, and long enough to be split across the pool in blocks with a partial last.
        for len in [37, 70_001] {
            let g: Vec<f32> = (0..len).map(|i| (i as f32 * 0.37).sin() * 9.0).collect();
            let u: Vec<f32> = g.iter().map(|x| x * 0.5 - 1.0).collect();
            let got = silu_mul(&g, &u);
            assert_eq!(got.len(), len);
            for ((got, g), u) in got.iter().zip(&g).zip(&u) {
                let want = *g as f64 / (1.0 + (-*g as f64).exp()) * *u as f64;
                let tol = 1e-6 * (1.0 + want.abs());
                assert!((*got as f64 - want).abs() < tol, "{got} vs {want}");
            }
        }
    }
}
