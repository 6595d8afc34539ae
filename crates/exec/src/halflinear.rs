//! `x · Wᵀ` for a weight `W` [out, n] held as stored in 16-bit floats (bf16 or f16, a safetensors
//! checkpoint's usual types): half the bytes of f32, so a decode step, which reads every weight
//! once, streams half as much, and an 8B model in bf16 fits where its f32 copy would not.
//!
//! Each value is widened to f32 in registers (bf16: a shift; f16: F16C) and multiplied by `x`
//! as it is, so the product is the f32 product of the stored values up to the order of the sums.
//! Paths as `qlinear`'s: a decode step dots each row with `x`; a prompt on AVX-512 widens a unit
//! of rows once and multiplies them in `qlinear`'s f32 register tiles.

use crate::pool::{for_ranges, Shared};
use crate::qlinear::{Path, PROMPT, UNIT};
use candle_core::{Device, Tensor};
use half::{bf16, f16};

/// The 16-bit float a weight is stored in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Half {
    Bf16,
    F16,
}

impl Half {
    fn widen(self, bits: u16) -> f32 {
        match self {
            Half::Bf16 => bf16::from_bits(bits).to_f32(),
            Half::F16 => f16::from_bits(bits).to_f32(),
        }
    }
}

/// A projection weight [out, n] in 16-bit floats.
pub struct HalfLinear {
    half: Half,
    data: Vec<u16>,
    out: usize,
    n: usize,
}

impl HalfLinear {
    pub fn new(
        half: Half,
        data: Vec<u16>,
        out: usize,
        n: usize,
    ) -> candle_core::Result<HalfLinear> {
        if Some(data.len()) != out.checked_mul(n) {
            candle_core::bail!("{half:?} weight [{out}, {n}] has {} values", data.len())
        }
        Ok(HalfLinear { half, data, out, n })
    }

    pub fn half(&self) -> Half {
        self.half
    }

    fn row(&self, o: usize) -> &[u16] {
        &self.data[o * self.n..][..self.n]
    }

    /// Rows `ids` of `W` in f32, as a tensor [ids, n]: an embedding lookup.
    pub fn rows(&self, ids: &[u32]) -> candle_core::Result<Tensor> {
        let mut v = Vec::with_capacity(ids.len() * self.n);
        for &id in ids {
            let o = id as usize;
            if o >= self.out {
                candle_core::bail!("token id {o} is past the vocabulary ({})", self.out)
            }
            v.extend(self.row(o).iter().map(|&b| self.half.widen(b)));
        }
        Tensor::from_vec(v, (ids.len(), self.n), &Device::Cpu)
    }

    /// Every value in f32, as a tensor [out, n].
    pub fn dequantize(&self) -> candle_core::Result<Tensor> {
        let v: Vec<f32> = self.data.iter().map(|&b| self.half.widen(b)).collect();
        Tensor::from_vec(v, (self.out, self.n), &Device::Cpu)
    }

    /// `x · Wᵀ` for a CPU tensor `x` [m, n]: [m, out].
    pub fn times(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let (m, n) = x.dims2()?;
        if n != self.n {
            candle_core::bail!("x has {n} columns, the weight {}", self.n)
        }
        let mut y = vec![0f32; m * self.out];
        crate::linear::with_values(x, |x| self.product(Path::best(), x, m, &mut y))?;
        Tensor::from_vec(y, (m, self.out), &Device::Cpu)
    }

    /// `y[i, o] = Σₖ x[i, k] · W[o, k]` on `path`, `x` [m, n] and `y` [m, out] row-major.
    pub fn product(&self, path: Path, x: &[f32], m: usize, y: &mut [f32]) {
        let (n, out) = (self.n, self.out);
        assert_eq!(
            (x.len(), y.len()),
            (m * n, m * out),
            "product: x or y is not [m, _]"
        );
        assert!(
            Path::available().contains(&path),
            "{path:?} is not available on this CPU"
        );
        let y = Shared::new(y);
        for_ranges(out.div_ceil(UNIT), m * n * out / 4, |units| {
            #[cfg(target_arch = "x86_64")]
            if path == Path::Avx512 && m >= PROMPT && n.is_multiple_of(16) && n > 0 {
                let mut wf = vec![0f32; UNIT * n];
                for u in units {
                    let rows = u * UNIT..out.min((u + 1) * UNIT);
                    for (o, wf) in rows.clone().zip(wf.chunks_exact_mut(n)) {
                        // SAFETY: the path's features were seen by `available`.
                        unsafe { x86::widen(self.half, self.row(o), wf) }
                    }
                    let wf = &wf[..rows.len() * n];
                    // SAFETY: as above; y is [m, out] and columns `rows` are this unit's alone.
                    unsafe { crate::qlinear::x86::product_f32(wf, x, n, &y, out, rows.start) }
                }
                return;
            }
            for o in units.start * UNIT..out.min(units.end * UNIT) {
                let w = self.row(o);
                for (i, x) in x.chunks_exact(n).enumerate() {
                    let v = match path {
                        Path::Scalar => w.iter().zip(x).map(|(&w, x)| self.half.widen(w) * x).sum(),
                        // SAFETY: the path's features were seen by `available`.
                        #[cfg(target_arch = "x86_64")]
                        _ => unsafe { x86::dot(path, self.half, w, x) },
                        #[cfg(not(target_arch = "x86_64"))]
                        _ => unreachable!("only the scalar path exists here"),
                    };
                    // SAFETY: y is [m, out] and (i, o) belongs to these units alone.
                    unsafe { y.part(i * out + o, 1)[0] = v }
                }
            }
        });
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Half, Path};
    use std::arch::x86_64::*;

    /// How far ahead of the values being multiplied a decode step fetches, in bytes.
    const AHEAD: usize = 2048;

    /// 16 stored values at `p` in f32.
    #[inline(always)]
    unsafe fn widen16<const BF: bool>(p: *const u16) -> __m512 {
        let h = _mm256_loadu_si256(p.cast());
        if BF {
            _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16))
        } else {
            _mm512_cvtph_ps(h)
        }
    }

    /// 8 stored values at `p` in f32.
    #[inline(always)]
    unsafe fn widen8<const BF: bool>(p: *const u16) -> __m256 {
        let h = _mm_loadu_si128(p.cast());
        if BF {
            _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16))
        } else {
            _mm256_cvtph_ps(h)
        }
    }

    /// The row `w` in f32, into `to`.
    #[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw")]
    pub unsafe fn widen(half: Half, w: &[u16], to: &mut [f32]) {
        assert!(to.len() == w.len() && w.len().is_multiple_of(16));
        for k in (0..w.len()).step_by(16) {
            let v = match half {
                Half::Bf16 => widen16::<true>(w.as_ptr().add(k)),
                Half::F16 => widen16::<false>(w.as_ptr().add(k)),
            };
            _mm512_storeu_ps(to.as_mut_ptr().add(k), v);
        }
    }

    /// Σₖ w[k]·x[k] on `path` (AVX2 or AVX-512).
    pub unsafe fn dot(path: Path, half: Half, w: &[u16], x: &[f32]) -> f32 {
        match (path, half) {
            (Path::Avx512, Half::Bf16) => dot512::<true>(w, x),
            (Path::Avx512, Half::F16) => dot512::<false>(w, x),
            (_, Half::Bf16) => dot256::<true>(w, x),
            (_, Half::F16) => dot256::<false>(w, x),
        }
    }

    #[inline(always)]
    unsafe fn hsum256(v: __m256) -> f32 {
        let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)))
    }

    /// The values past the last whole vector, one by one.
    fn tail(bf: bool, w: &[u16], x: &[f32]) -> f32 {
        let half = if bf { Half::Bf16 } else { Half::F16 };
        w.iter().zip(x).map(|(&w, x)| half.widen(w) * x).sum()
    }

    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn dot256<const BF: bool>(w: &[u16], x: &[f32]) -> f32 {
        let n = x.len();
        assert!(w.len() == n);
        let (mut a, mut c) = (_mm256_setzero_ps(), _mm256_setzero_ps());
        let mut k = 0;
        while k + 16 <= n {
            _mm_prefetch::<_MM_HINT_T0>(w.as_ptr().wrapping_add(k + AHEAD / 2).cast());
            a = _mm256_fmadd_ps(
                widen8::<BF>(w.as_ptr().add(k)),
                _mm256_loadu_ps(x.as_ptr().add(k)),
                a,
            );
            c = _mm256_fmadd_ps(
                widen8::<BF>(w.as_ptr().add(k + 8)),
                _mm256_loadu_ps(x.as_ptr().add(k + 8)),
                c,
            );
            k += 16;
        }
        hsum256(_mm256_add_ps(a, c)) + tail(BF, &w[k..], &x[k..])
    }

    #[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw")]
    unsafe fn dot512<const BF: bool>(w: &[u16], x: &[f32]) -> f32 {
        let n = x.len();
        assert!(w.len() == n);
        let (mut a, mut c) = (_mm512_setzero_ps(), _mm512_setzero_ps());
        let mut k = 0;
        while k + 32 <= n {
            // A decode step streams every weight from memory once: ask for them ahead.
            _mm_prefetch::<_MM_HINT_T0>(w.as_ptr().wrapping_add(k + AHEAD / 2).cast());
            a = _mm512_fmadd_ps(
                widen16::<BF>(w.as_ptr().add(k)),
                _mm512_loadu_ps(x.as_ptr().add(k)),
                a,
            );
            c = _mm512_fmadd_ps(
                widen16::<BF>(w.as_ptr().add(k + 16)),
                _mm512_loadu_ps(x.as_ptr().add(k + 16)),
                c,
            );
            k += 32;
        }
        _mm512_reduce_add_ps(_mm512_add_ps(a, c)) + tail(BF, &w[k..], &x[k..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        /// Both types on every path this CPU has, against a double-precision product with the
        /// stored values: within f32 rounding (the values are exact in f32, only the sums'
        /// order differs), for any width, a multiple of 16 or not.
        #[test]
        fn products_match_a_double_precision_sum_on_every_path(
            m in 1usize..7, out in 1usize..20, n in 1usize..120, seed in 0u64..10_000,
        ) {
            let x = crate::uniform(seed, m * n, 2.0);
            let w = crate::uniform(seed + 1, out * n, 1.0);
            for half in [Half::Bf16, Half::F16] {
                let bits: Vec<u16> = w.iter().map(|&v| match half {
                    Half::Bf16 => bf16::from_f32(v).to_bits(),
                    Half::F16 => f16::from_f32(v).to_bits(),
                }).collect();
                let wide: Vec<f32> = bits.iter().map(|&b| half.widen(b)).collect();
                let h = HalfLinear::new(half, bits, out, n).unwrap();
                for &path in Path::available() {
                    let mut y = vec![0f32; m * out];
                    h.product(path, &x, m, &mut y);
                    for i in 0..m {
                        for o in 0..out {
                            let (xr, wr) = (&x[i * n..][..n], &wide[o * n..][..n]);
                            let want: f64 = xr.iter().zip(wr).map(|(&a, &b)| a as f64 * b as f64).sum();
                            let mass: f64 = xr.iter().zip(wr).map(|(&a, &b)| (a as f64 * b as f64).abs()).sum();
                            let got = y[i * out + o] as f64;
                            prop_assert!((got - want).abs() <= 1e-6 * mass + 1e-30,
                                "{half:?} on {path:?}, [{i},{o}] of {m}×{out}×{n}: {got} vs {want}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn rows_and_dequantize_give_the_stored_values() {
        let bits: Vec<u16> = [1.5f32, -2.0, 0.25, 3.0]
            .iter()
            .map(|&v| bf16::from_f32(v).to_bits())
            .collect();
        let h = HalfLinear::new(Half::Bf16, bits, 2, 2).unwrap();
        let r: Vec<Vec<f32>> = h.rows(&[1, 0]).unwrap().to_vec2().unwrap();
        assert_eq!(r, [[0.25, 3.0], [1.5, -2.0]]);
        let d: Vec<Vec<f32>> = h.dequantize().unwrap().to_vec2().unwrap();
        assert_eq!(d, [[1.5, -2.0], [0.25, 3.0]]);
        assert!(h.rows(&[2]).is_err());
        assert!(HalfLinear::new(Half::F16, vec![0; 3], 2, 2).is_err());
    }
}
