//! `x · Wᵀ` for a weight `W` [out, n] held as stored in floats narrower than f32: bf16 or f16 (a
//! safetensors checkpoint's usual types), or fp8 e4m3 with a scale per block of rows and columns
//! (DeepSeek-V3's `weight_scale_inv`). Half or a quarter of the bytes of f32, so a decode step,
//! which reads every weight once, streams that much less, and an 8B model in bf16 fits where its
//! f32 copy would not.
//!
//! Each value is widened to f32 in registers (bf16: a shift; f16: F16C; e4m3: its bits moved
//! into an f16's, then F16C) and multiplied by `x` as it is, so the product is the f32 product of
//! the stored values up to the order of the sums. Paths as `qlinear`'s: a decode step dots each
//! row with `x`; a prompt on AVX-512 widens a unit of rows once and multiplies them in f32
//! register tiles.

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
}

impl Rows for HalfLinear {
    fn dims(&self) -> (usize, usize) {
        (self.out, self.n)
    }

    fn widen(&self, o: usize, to: &mut [f32]) {
        for (t, &b) in to.iter_mut().zip(self.row(o)) {
            *t = self.half.widen(b);
        }
    }

    #[cfg(target_arch = "x86_64")]
    unsafe fn widen_simd(&self, o: usize, to: &mut [f32]) {
        x86::widen(self.half, self.row(o), to)
    }

    #[cfg(target_arch = "x86_64")]
    unsafe fn dot_simd(&self, path: Path, o: usize, x: &[f32]) -> f32 {
        x86::dot(path, self.half, self.row(o), x)
    }
}

/// A weight [out, n] whose rows widen to f32.
pub trait Rows: Sync {
    fn dims(&self) -> (usize, usize);

    /// Row `o` in f32, into `to`, one value at a time.
    fn widen(&self, o: usize, to: &mut [f32]);

    /// `widen` with AVX-512, `to` a multiple of 16 values long.
    ///
    /// # Safety
    /// The CPU has AVX-512 (`Path::available`).
    #[cfg(target_arch = "x86_64")]
    unsafe fn widen_simd(&self, o: usize, to: &mut [f32]);

    /// Row `o` times `x` on `path`, AVX2 or AVX-512.
    ///
    /// # Safety
    /// The CPU has `path`'s features (`Path::available`).
    #[cfg(target_arch = "x86_64")]
    unsafe fn dot_simd(&self, path: Path, o: usize, x: &[f32]) -> f32;

    /// Every value in f32, as a tensor [out, n].
    fn dequantize(&self) -> candle_core::Result<Tensor> {
        let (out, n) = self.dims();
        let mut v = vec![0f32; out * n];
        for (o, row) in v.chunks_exact_mut(n.max(1)).enumerate().take(out) {
            self.widen(o, row);
        }
        Tensor::from_vec(v, (out, n), &Device::Cpu)
    }

    /// Rows `ids` in f32, as a tensor [ids, n]: an embedding lookup.
    fn rows(&self, ids: &[u32]) -> candle_core::Result<Tensor> {
        let (out, n) = self.dims();
        let mut v = vec![0f32; ids.len() * n];
        for (&id, row) in ids.iter().zip(v.chunks_exact_mut(n.max(1))) {
            if id as usize >= out {
                candle_core::bail!("token id {id} is past the vocabulary ({out})")
            }
            self.widen(id as usize, row);
        }
        Tensor::from_vec(v, (ids.len(), n), &Device::Cpu)
    }

    /// `x · Wᵀ` for a CPU tensor `x` [m, n]: [m, out].
    fn times(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let (out, n) = self.dims();
        let (m, xn) = x.dims2()?;
        if xn != n {
            candle_core::bail!("x has {xn} columns, the weight {n}")
        }
        let mut y = vec![0f32; m * out];
        crate::linear::with_values(x, |x| product(self, Path::best(), x, m, &mut y))?;
        Tensor::from_vec(y, (m, out), &Device::Cpu)
    }
}

/// `y[i, o] = Σₖ x[i, k] · W[o, k]` on `path`, `x` [m, n] and `y` [m, out] row-major.
fn product<R: Rows + ?Sized>(w: &R, path: Path, x: &[f32], m: usize, y: &mut [f32]) {
    let (out, n) = w.dims();
    crate::qlinear::check_product(path, x, y, m, n, out);
    let y = Shared::new(y);
    for_ranges(out.div_ceil(UNIT), m * n * out / 4, |units| {
        #[cfg(target_arch = "x86_64")]
        if path == Path::Avx512 && m >= PROMPT && n.is_multiple_of(16) && n > 0 {
            let mut wf = vec![0f32; UNIT * n];
            for u in units {
                let rows = u * UNIT..out.min((u + 1) * UNIT);
                for (o, wf) in rows.clone().zip(wf.chunks_exact_mut(n)) {
                    // SAFETY: the path's features were seen by `available`.
                    unsafe { w.widen_simd(o, wf) }
                }
                let wf = &wf[..rows.len() * n];
                // SAFETY: as above; y is [m, out] and columns `rows` are this unit's alone.
                unsafe { x86::product_f32(wf, x, n, &y, out, rows.start) }
            }
            return;
        }
        let mut wide = vec![0f32; if path == Path::Scalar { n } else { 0 }];
        for o in units.start * UNIT..out.min(units.end * UNIT) {
            if path == Path::Scalar {
                w.widen(o, &mut wide);
            }
            for (i, x) in x.chunks_exact(n.max(1)).take(m).enumerate() {
                let v = match path {
                    Path::Scalar => wide.iter().zip(x).map(|(w, x)| w * x).sum(),
                    // SAFETY: the path's features were seen by `available`.
                    #[cfg(target_arch = "x86_64")]
                    Path::Avx2 | Path::Avx512 => unsafe { w.dot_simd(path, o, x) },
                    #[cfg(not(target_arch = "x86_64"))]
                    Path::Avx2 | Path::Avx512 => unreachable!("only the scalar path exists here"),
                };
                // SAFETY: y is [m, out] and (i, o) belongs to these units alone.
                unsafe { y.part(i * out + o, 1)[0] = v }
            }
        }
    });
}

/// e4m3 (fp8 with 4 exponent bits, no infinities; 0x7F and 0xFF are NaN) in f32, as the
/// float8 crate (candle's) reads it.
pub fn e4m3(b: u8) -> f32 {
    float8::F8E4M3::from_bits(b).to_f32()
}

/// The e4m3 byte whose value is `v`, where one is (a value read from e4m3 and widened).
pub fn to_e4m3(v: f32) -> Option<u8> {
    let b = float8::F8E4M3::from_f32(v).to_bits();
    (e4m3(b).to_bits() == v.to_bits()).then_some(b)
}

/// A projection weight [out, n] in fp8 e4m3, value (o, k) times the scale of its block of
/// `block.0` rows by `block.1` columns.
pub struct Fp8Linear {
    data: Vec<u8>,
    scales: Vec<f32>,
    block: (usize, usize),
    out: usize,
    n: usize,
}

impl Fp8Linear {
    /// `scales` [⌈out / block.0⌉, ⌈n / block.1⌉]; the column blocks a multiple of 16 values, so
    /// that a vector never straddles two.
    pub fn new(
        data: Vec<u8>,
        scales: Vec<f32>,
        block: (usize, usize),
        out: usize,
        n: usize,
    ) -> candle_core::Result<Fp8Linear> {
        if block.0 == 0 || block.1 == 0 || !block.1.is_multiple_of(16) {
            candle_core::bail!(
                "fp8 blocks of {block:?}: anatomy reads blocks whose columns are a multiple of 16"
            )
        }
        if Some(data.len()) != out.checked_mul(n) {
            candle_core::bail!("fp8 weight [{out}, {n}] has {} values", data.len())
        }
        let want = out.div_ceil(block.0) * n.div_ceil(block.1);
        if scales.len() != want {
            candle_core::bail!(
                "fp8 weight [{out}, {n}] in blocks of {block:?} has {} scales, not {want}",
                scales.len()
            )
        }
        Ok(Fp8Linear {
            data,
            scales,
            block,
            out,
            n,
        })
    }

    fn row(&self, o: usize) -> (&[u8], &[f32]) {
        let per = self.n.div_ceil(self.block.1);
        (
            &self.data[o * self.n..][..self.n],
            &self.scales[o / self.block.0 * per..][..per],
        )
    }
}

impl Rows for Fp8Linear {
    fn dims(&self) -> (usize, usize) {
        (self.out, self.n)
    }

    fn widen(&self, o: usize, to: &mut [f32]) {
        let (w, s) = self.row(o);
        for (k, (t, &b)) in to.iter_mut().zip(w).enumerate() {
            *t = e4m3(b) * s[k / self.block.1];
        }
    }

    #[cfg(target_arch = "x86_64")]
    unsafe fn widen_simd(&self, o: usize, to: &mut [f32]) {
        let (w, s) = self.row(o);
        x86::widen_fp8(w, s, self.block.1, to)
    }

    #[cfg(target_arch = "x86_64")]
    unsafe fn dot_simd(&self, path: Path, o: usize, x: &[f32]) -> f32 {
        let (w, s) = self.row(o);
        x86::dot_fp8(path, w, s, self.block.1, x)
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Half, Path};
    use crate::qlinear::x86::hsum256;
    use std::arch::x86_64::*;

    /// `y[i, col0 + j] = Σₖ x[i, k] · w[j, k]` for every row i of `x` [m, n] and every row j of
    /// `w` [rows, n] (n a multiple of 16): tiles of 4 × 4, sixteen sums of 16 lanes, each row of
    /// `x` and `w` loaded once per tile and step. A partial tile repeats its last row and keeps
    /// only the sums it owns.
    #[target_feature(enable = "avx2,fma,avx512f")]
    pub(super) unsafe fn product_f32(
        w: &[f32],
        x: &[f32],
        n: usize,
        y: &crate::pool::Shared,
        outs: usize,
        col0: usize,
    ) {
        let (rows, m) = (w.len() / n, x.len() / n);
        assert!(n.is_multiple_of(16) && w.len() == rows * n && x.len() == m * n);
        for j0 in (0..rows).step_by(4) {
            let wr: [*const f32; 4] =
                std::array::from_fn(|j| w.as_ptr().add((j0 + j).min(rows - 1) * n));
            for i0 in (0..m).step_by(4) {
                let xr: [*const f32; 4] =
                    std::array::from_fn(|i| x.as_ptr().add((i0 + i).min(m - 1) * n));
                let mut acc = [[_mm512_setzero_ps(); 4]; 4];
                for k in (0..n).step_by(16) {
                    let wv: [__m512; 4] = std::array::from_fn(|j| _mm512_loadu_ps(wr[j].add(k)));
                    for i in 0..4 {
                        let xv = _mm512_loadu_ps(xr[i].add(k));
                        for j in 0..4 {
                            acc[i][j] = _mm512_fmadd_ps(xv, wv[j], acc[i][j]);
                        }
                    }
                }
                for (i, acc) in acc.iter().enumerate().take(m - i0) {
                    for (j, acc) in acc.iter().enumerate().take(rows - j0) {
                        // SAFETY (the caller's): y is [m, outs] and these columns are its alone.
                        y.part((i0 + i) * outs + col0 + j0 + j, 1)[0] = _mm512_reduce_add_ps(*acc);
                    }
                }
            }
        }
    }

    /// How far ahead of the values being multiplied a decode step fetches, in bytes.
    const AHEAD: usize = 2048;

    /// A stored row read as f32: 8 or 16 values from value k (each vector within one scale
    /// block), or one.
    trait Lanes {
        fn len(&self) -> usize;
        /// Where value k's bytes are, to fetch ahead.
        fn at(&self, k: usize) -> *const u8;
        unsafe fn v8(&self, k: usize) -> __m256;
        unsafe fn v16(&self, k: usize) -> __m512;
        fn one(&self, k: usize) -> f32;
    }

    /// A bf16 (`BF`) or f16 row.
    struct Halves<'a, const BF: bool>(&'a [u16]);

    impl<const BF: bool> Lanes for Halves<'_, BF> {
        fn len(&self) -> usize {
            self.0.len()
        }
        fn at(&self, k: usize) -> *const u8 {
            self.0.as_ptr().wrapping_add(k).cast()
        }
        #[inline(always)]
        unsafe fn v8(&self, k: usize) -> __m256 {
            let h = _mm_loadu_si128(self.0.as_ptr().add(k).cast());
            if BF {
                _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16))
            } else {
                _mm256_cvtph_ps(h)
            }
        }
        #[inline(always)]
        unsafe fn v16(&self, k: usize) -> __m512 {
            let h = _mm256_loadu_si256(self.0.as_ptr().add(k).cast());
            if BF {
                _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16))
            } else {
                _mm512_cvtph_ps(h)
            }
        }
        fn one(&self, k: usize) -> f32 {
            (if BF { Half::Bf16 } else { Half::F16 }).widen(self.0[k])
        }
    }

    /// An fp8 e4m3 row with the scales `s` of its column blocks of `cols` (a multiple of 16).
    struct Fp8s<'a> {
        w: &'a [u8],
        s: &'a [f32],
        cols: usize,
    }

    impl Lanes for Fp8s<'_> {
        fn len(&self) -> usize {
            self.w.len()
        }
        fn at(&self, k: usize) -> *const u8 {
            self.w.as_ptr().wrapping_add(k)
        }
        /// Each e4m3's bits (sign, then exponent and mantissa) moved into an f16's, whose
        /// exponent bias is 8 more, so the f16 is the value / 2⁸ (subnormals included); the NaNs
        /// (0x7F, 0xFF) made f16 NaNs.
        #[inline(always)]
        unsafe fn v8(&self, k: usize) -> __m256 {
            let b = _mm_cvtepu8_epi16(_mm_loadl_epi64(self.w.as_ptr().add(k).cast()));
            let mag = _mm_and_si128(b, _mm_set1_epi16(0x7F));
            let h = _mm_or_si128(
                _mm_slli_epi16(_mm_and_si128(b, _mm_set1_epi16(0x80)), 8),
                _mm_slli_epi16(mag, 7),
            );
            let nan = _mm_cmpeq_epi16(mag, _mm_set1_epi16(0x7F));
            let h = _mm_or_si128(h, _mm_and_si128(nan, _mm_set1_epi16(0x7E00)));
            _mm256_mul_ps(
                _mm256_cvtph_ps(h),
                _mm256_set1_ps(256.0 * self.s[k / self.cols]),
            )
        }
        /// `v8` for 16 values.
        #[inline(always)]
        unsafe fn v16(&self, k: usize) -> __m512 {
            let b = _mm256_cvtepu8_epi16(_mm_loadu_si128(self.w.as_ptr().add(k).cast()));
            let mag = _mm256_and_si256(b, _mm256_set1_epi16(0x7F));
            let h = _mm256_or_si256(
                _mm256_slli_epi16(_mm256_and_si256(b, _mm256_set1_epi16(0x80)), 8),
                _mm256_slli_epi16(mag, 7),
            );
            let nan = _mm256_cmpeq_epi16(mag, _mm256_set1_epi16(0x7F));
            let h = _mm256_or_si256(h, _mm256_and_si256(nan, _mm256_set1_epi16(0x7E00)));
            _mm512_mul_ps(
                _mm512_cvtph_ps(h),
                _mm512_set1_ps(256.0 * self.s[k / self.cols]),
            )
        }
        fn one(&self, k: usize) -> f32 {
            super::e4m3(self.w[k]) * self.s[k / self.cols]
        }
    }

    /// The row `w` in f32, into `to`.
    pub unsafe fn widen(half: Half, w: &[u16], to: &mut [f32]) {
        match half {
            Half::Bf16 => widen_all(Halves::<true>(w), to),
            Half::F16 => widen_all(Halves::<false>(w), to),
        }
    }

    /// The fp8 row `w` with the scales `s` of its column blocks of `cols`, in f32, into `to`.
    pub unsafe fn widen_fp8(w: &[u8], s: &[f32], cols: usize, to: &mut [f32]) {
        assert!(s.len() * cols >= w.len() && cols.is_multiple_of(16));
        widen_all(Fp8s { w, s, cols }, to)
    }

    #[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw")]
    unsafe fn widen_all<L: Lanes>(w: L, to: &mut [f32]) {
        assert!(to.len() == w.len() && w.len().is_multiple_of(16));
        for k in (0..w.len()).step_by(16) {
            _mm512_storeu_ps(to.as_mut_ptr().add(k), w.v16(k));
        }
    }

    /// Σₖ w[k]·x[k] on `path` (AVX2 or AVX-512).
    pub unsafe fn dot(path: Path, half: Half, w: &[u16], x: &[f32]) -> f32 {
        match (path, half) {
            (Path::Avx512, Half::Bf16) => dot512(Halves::<true>(w), x),
            (Path::Avx512, Half::F16) => dot512(Halves::<false>(w), x),
            (_, Half::Bf16) => dot256(Halves::<true>(w), x),
            (_, Half::F16) => dot256(Halves::<false>(w), x),
        }
    }

    /// Σₖ w[k]·s[k / cols]·x[k] on `path` (AVX2 or AVX-512); `cols` a multiple of 16.
    pub unsafe fn dot_fp8(path: Path, w: &[u8], s: &[f32], cols: usize, x: &[f32]) -> f32 {
        assert!(s.len() * cols >= w.len() && cols.is_multiple_of(16));
        let row = Fp8s { w, s, cols };
        if path == Path::Avx512 {
            dot512(row, x)
        } else {
            dot256(row, x)
        }
    }

    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn dot256<L: Lanes>(w: L, x: &[f32]) -> f32 {
        let n = x.len();
        assert!(w.len() == n);
        let (mut a, mut c) = (_mm256_setzero_ps(), _mm256_setzero_ps());
        let mut k = 0;
        while k + 16 <= n {
            _mm_prefetch::<_MM_HINT_T0>(w.at(k).wrapping_add(AHEAD).cast());
            a = _mm256_fmadd_ps(w.v8(k), _mm256_loadu_ps(x.as_ptr().add(k)), a);
            c = _mm256_fmadd_ps(w.v8(k + 8), _mm256_loadu_ps(x.as_ptr().add(k + 8)), c);
            k += 16;
        }
        hsum256(_mm256_add_ps(a, c)) + (k..n).map(|k| w.one(k) * x[k]).sum::<f32>()
    }

    #[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw")]
    unsafe fn dot512<L: Lanes>(w: L, x: &[f32]) -> f32 {
        let n = x.len();
        assert!(w.len() == n);
        let (mut a, mut c) = (_mm512_setzero_ps(), _mm512_setzero_ps());
        let mut k = 0;
        while k + 32 <= n {
            // A decode step streams every weight from memory once: ask for them ahead.
            _mm_prefetch::<_MM_HINT_T0>(w.at(k).wrapping_add(AHEAD).cast());
            a = _mm512_fmadd_ps(w.v16(k), _mm512_loadu_ps(x.as_ptr().add(k)), a);
            c = _mm512_fmadd_ps(w.v16(k + 16), _mm512_loadu_ps(x.as_ptr().add(k + 16)), c);
            k += 32;
        }
        _mm512_reduce_add_ps(_mm512_add_ps(a, c)) + (k..n).map(|k| w.one(k) * x[k]).sum::<f32>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Both 16-bit types on `paths`, against a double-precision product with the stored values:
    /// within f32 rounding (the values are exact in f32, only the sums' order differs), for any
    /// width, a multiple of 16 or not.
    fn check_halves(
        paths: &[Path],
        m: usize,
        out: usize,
        n: usize,
        seed: u64,
    ) -> Result<(), TestCaseError> {
        let x = crate::uniform(seed, m * n, 2.0);
        let w = crate::uniform(seed + 1, out * n, 1.0);
        for half in [Half::Bf16, Half::F16] {
            let bits: Vec<u16> = w
                .iter()
                .map(|&v| match half {
                    Half::Bf16 => bf16::from_f32(v).to_bits(),
                    Half::F16 => f16::from_f32(v).to_bits(),
                })
                .collect();
            let wide: Vec<f32> = bits.iter().map(|&b| half.widen(b)).collect();
            let h = HalfLinear::new(half, bits, out, n).unwrap();
            for &path in paths {
                let mut y = vec![0f32; m * out];
                product(&h, path, &x, m, &mut y);
                for i in 0..m {
                    for o in 0..out {
                        let (xr, wr) = (&x[i * n..][..n], &wide[o * n..][..n]);
                        let want: f64 = xr.iter().zip(wr).map(|(&a, &b)| a as f64 * b as f64).sum();
                        let mass: f64 = xr
                            .iter()
                            .zip(wr)
                            .map(|(&a, &b)| (a as f64 * b as f64).abs())
                            .sum();
                        let got = y[i * out + o] as f64;
                        prop_assert!(
                            (got - want).abs() <= 1e-6 * mass + 1e-30,
                            "{half:?} on {path:?}, [{i},{o}] of {m}×{out}×{n}: {got} vs {want}"
                        );
                    }
                }
            }
        }
        Ok(())
    }

    /// fp8 with block scales on `paths`, against a double-precision product with each value
    /// times its block's scale: within f32 rounding, for blocks of 16 or 32 columns and 1 to 5
    /// rows, any width, any byte but the two NaNs.
    fn check_fp8(
        paths: &[Path],
        (m, out, n, seed): (usize, usize, usize, u64),
        (rows, cols): (usize, usize),
    ) -> Result<(), TestCaseError> {
        let x = crate::uniform(seed, m * n, 2.0);
        let bytes: Vec<u8> = crate::uniform(seed + 1, out * n, 1.0)
            .iter()
            .map(|v| ((v + 1.0) * 127.9) as u8)
            .map(|b| if b & 0x7F == 0x7F { b - 1 } else { b })
            .collect();
        let per = n.div_ceil(cols);
        let scales: Vec<f32> = crate::uniform(seed + 2, out.div_ceil(rows) * per, 1.0)
            .iter()
            .map(|v| v.abs() + 0.01)
            .collect();
        let f = Fp8Linear::new(bytes.clone(), scales.clone(), (rows, cols), out, n).unwrap();
        for &path in paths {
            let mut y = vec![0f32; m * out];
            product(&f, path, &x, m, &mut y);
            for i in 0..m {
                for o in 0..out {
                    let w = |k: usize| {
                        e4m3(bytes[o * n + k]) as f64 * scales[o / rows * per + k / cols] as f64
                    };
                    let want: f64 = (0..n).map(|k| x[i * n + k] as f64 * w(k)).sum();
                    let mass: f64 = (0..n).map(|k| (x[i * n + k] as f64 * w(k)).abs()).sum();
                    let got = y[i * out + o] as f64;
                    prop_assert!((got - want).abs() <= 1e-6 * mass + 1e-30,
                        "{path:?}, [{i},{o}] of {m}×{out}×{n} in blocks of {rows}×{cols}: {got} vs {want}");
                }
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        #[test]
        fn products_on_the_scalar_path(
            m in 1usize..7, out in 1usize..20, n in 1usize..120, seed in 0u64..10_000,
            rows in 1usize..6, cols in prop_oneof![Just(16usize), Just(32)],
        ) {
            check_halves(&[Path::Scalar], m, out, n, seed)?;
            check_fp8(&[Path::Scalar], (m, out, n, seed), (rows, cols))?;
        }

        #[test]
        #[cfg_attr(not(cpu_avx2), ignore = "this CPU has no AVX2, FMA and F16C: the kernels' AVX2 path is not checked here")]
        fn products_on_the_avx2_path(
            m in 1usize..7, out in 1usize..20, n in 1usize..120, seed in 0u64..10_000,
            rows in 1usize..6, cols in prop_oneof![Just(16usize), Just(32)],
        ) {
            check_halves(&[Path::Avx2], m, out, n, seed)?;
            check_fp8(&[Path::Avx2], (m, out, n, seed), (rows, cols))?;
        }

        #[test]
        #[cfg_attr(not(cpu_avx512), ignore = "this CPU has no AVX-512 F, BW and VNNI: the kernels' AVX-512 path is not checked here")]
        fn products_on_the_avx512_path(
            m in 1usize..7, out in 1usize..20, n in 1usize..120, seed in 0u64..10_000,
            rows in 1usize..6, cols in prop_oneof![Just(16usize), Just(32)],
        ) {
            check_halves(&[Path::Avx512], m, out, n, seed)?;
            check_fp8(&[Path::Avx512], (m, out, n, seed), (rows, cols))?;
        }
    }

    /// The AVX-512 widening reads every e4m3 byte as candle (the float8 crate) does, NaNs and
    /// signed zeros included.
    #[test]
    fn e4m3_is_candles_reading_of_every_byte() {
        let bytes: Vec<u8> = (0..=255).collect();
        let want: Vec<f32> = candle_core::Tensor::from_raw_buffer(
            &bytes,
            candle_core::DType::F8E4M3,
            &[256],
            &Device::Cpu,
        )
        .unwrap()
        .to_dtype(candle_core::DType::F32)
        .unwrap()
        .to_vec1()
        .unwrap();
        let fp8 = Fp8Linear::new(bytes.clone(), vec![1.0], (1, 256), 1, 256).unwrap();
        let mut paths = vec![vec![0f32; 256]];
        fp8.widen(0, &mut paths[0]);
        #[cfg(target_arch = "x86_64")]
        if Path::available().contains(&Path::Avx512) {
            let mut v = vec![0f32; 256];
            // SAFETY: the CPU has AVX-512, just checked.
            unsafe { fp8.widen_simd(0, &mut v) };
            paths.push(v);
        }
        for got in paths {
            for (b, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(
                    g == w || (g.is_nan() && w.is_nan()),
                    "byte {b:#04x}: {g} vs {w}"
                );
                if !w.is_nan() {
                    assert_eq!(g.is_sign_negative(), w.is_sign_negative(), "byte {b:#04x}");
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
