//! `x · Wᵀ` for a weight `W` [out, n] held in a GGUF's 32-value block formats (Q4_0, Q4_1, Q5_0,
//! Q5_1, Q8_0) or in Q3_K to Q6_K (super-blocks of 256: Q4_K's and Q5_K's eight blocks of 32
//! each with a 6-bit scale and minimum, Q3_K's and Q6_K's sixteen of 16 each with a 6- or 8-bit
//! scale), read as stored:
//! about 4.5 to 8.5 bits per weight instead of 32. A block's integer sums run over 16 values
//! (four i32 lanes) for each scale, so the kernels take a scale per 16. MXFP4 (gpt-oss's
//! experts: 4-bit floats, e2m1, in blocks of 32 with a power-of-two e8m0 scale) is one more
//! 32-value format, held as ggml's block_mxfp4: its values doubled are the integers
//! 0, ±1, ±2, ±3, ±4, ±6, ±8, ±12, and its scale halved is d. The other formats of `Block` decode
//! the same way: IQ4_NL's and IQ4_XS's levels, TQ2_0's digits, NVFP4, bitsandbytes' code books,
//! 4-bit groups of 64 and 128, and int8 blocks after f32 scales that hold the lattice i-quants'
//! integers and affine codes of other widths exactly.
//!
//! As in llama.cpp, each row of a decode step's `x` (and of a product of fewer than `PROMPT`
//! rows) is quantized once per product to 8 bits per value in blocks of 32 (a scale d and, for the formats with a minimum, s = d·Σq). A weight block is
//! w = d_w·q_w + m_w with small integers q_w, so its dot product with an `x` block is
//! d_w·d_x·Σ q_w·q_x + m_w·s_x: an integer sum of 32 products, one multiply–add in f32.
//!
//! Every format shares the code past the decoding of a block into 32 signed bytes (a few vector
//! instructions), in three ways by the rows of `x`:
//! - one row (a decode step): each block decoded in registers and dotted with `x` at once;
//! - a few rows: a weight row unpacked once, then dotted with each;
//! - a prompt, on AVX-512: a unit of 16 weight rows repacked once so that a vector holds the
//!   same four bytes of each row, then tiles of up to 8 rows of `x` against it (the classic
//!   int8 GEMM layout): one dpbusd adds 64 products, four to each row's sum, where dequantizing
//!   to f32 would cost a multiply–add for 16 and the dequantization itself. Here `x` is held in
//!   two bytes a value, not one (`x86::Split`): a prompt's projections stay as close to f32 as
//!   the f32 kernel they replace, at two dpbusd a step;
//! - a prompt elsewhere: the prompt's rows packed once as `linear` packs a weight, a unit's
//!   weight rows dequantized once to f32, and `linear`'s kernel run with the two swapped (tiles
//!   of weight rows by a panel of 32 prompt rows in registers) into yᵀ, then transposed.
//!   A prompt's activations are never quantized to 8 bits, on any path, so that a stored
//!   model's prompt gives one answer on every CPU (to the order of the sums).
//!
//! The integer sums are exact on every path; only the order of the f32 sums differs. Paths are
//! chosen at run time: AVX-512 (VNNI's dpbusd, two blocks an instruction), AVX2 (maddubs), or
//! portable scalar code, hand-written in `std::arch`, not through `pulp` like `linear`: pulp has
//! no 8-bit dot products. candle's quantized kernels keep Q2_K and Q8_K (they have AVX2 code
//! for those), but multiply Q4_1, Q5_0 and Q5_1 in scalar code and a prompt's rows one by
//! one, which is why this module exists.

use crate::linear::{panel_product, Packed, PANEL};
use crate::pool::{for_ranges, Shared};
use candle_core::{Device, Tensor};
use half::f16;

/// Values per block, in every format here and in the quantized rows of `x`.
const QK: usize = 32;
/// Output rows per unit of work: their stored blocks stay in cache across the rows of `x`.
pub(crate) const UNIT: usize = 16;
/// Rows of `x` per tile: their quantized values stay in L2 while a unit's rows pass over them.
const TILE: usize = 64;
/// From this many rows of `x` on, a product is a prompt's, its `x` unquantized: AVX-512
/// multiplies in tiles (`x86::tiles`: a unit's weight rows repacked once, in registers, for all
/// the rows of `x`), other paths dequantize each weight row once to f32; 16-bit weights are
/// widened once to f32 (`floatlinear`).
pub(crate) const PROMPT: usize = 4;

mod block;
#[cfg(test)]
pub(crate) use block::NF4_BOOK;
pub(crate) use block::{e8m0_half, IQ4NL, MXFP4_DOUBLED};
pub use block::{int8_blocks, mxfp4_blocks, Block, FP4_LEVELS, NF4_LEVELS};
use block::{iq4xs_scale, k4_scale_min, q3k_scale};

/// What every product asserts: `x` is [m, n] and `y` [m, out], and this CPU runs `path`.
pub(crate) fn check_product(path: Path, x: &[f32], y: &[f32], m: usize, n: usize, out: usize) {
    assert_eq!(
        (x.len(), y.len()),
        (m * n, m * out),
        "product: x or y is not [m, _]"
    );
    assert!(
        Path::available().contains(&path),
        "{path:?} is not available on this CPU"
    );
}

/// A weight's stored bytes: its own, or a range of a memory-mapped file.
pub enum Bytes {
    Owned(Vec<u8>),
    Mapped(std::sync::Arc<memmap2::Mmap>, std::ops::Range<usize>),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Owned(v) => v,
            Bytes::Mapped(map, range) => &map[range.clone()],
        }
    }
}

impl From<Vec<u8>> for Bytes {
    fn from(v: Vec<u8>) -> Bytes {
        Bytes::Owned(v)
    }
}

/// The instruction set a product runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    Scalar,
    Avx2,
    Avx512,
}

impl Path {
    /// Every path this CPU can run, the portable one first, found once.
    pub fn available() -> &'static [Path] {
        static PATHS: std::sync::OnceLock<Vec<Path>> = std::sync::OnceLock::new();
        PATHS.get_or_init(Path::detect)
    }

    fn detect() -> Vec<Path> {
        let mut paths = vec![Path::Scalar];
        #[cfg(target_arch = "x86_64")]
        {
            if is_x86_feature_detected!("avx2")
                && is_x86_feature_detected!("fma")
                && is_x86_feature_detected!("f16c")
            {
                paths.push(Path::Avx2);
            }
            if paths.contains(&Path::Avx2)
                && is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512bw")
                && is_x86_feature_detected!("avx512vnni")
            {
                paths.push(Path::Avx512);
            }
        }
        paths
    }

    /// The fastest path this CPU runs.
    pub fn best() -> Path {
        *Path::available().last().expect("scalar is always there")
    }
}

/// A projection weight [out, n] in its stored blocks.
pub struct QLinear {
    block: Block,
    data: Bytes,
    out: usize,
    n: usize,
    /// Row o of `W` is stored row `order[o]`, where the file keeps rows in another order
    /// (llama.cpp's permuted Q and K): read in place, and every product comes out in order.
    order: Option<Vec<u32>>,
    /// What multiplies every value, beside the blocks' own scales (NVFP4's global scale).
    scale: f32,
    /// Stored column k multiplies input `inputs[k]`, where the file keeps a row's values in
    /// another order (GPTQ's act-order, its groups gathered): `x`'s columns are gathered to
    /// match before each product.
    inputs: Option<Vec<u32>>,
}

impl QLinear {
    /// `data` holds `out` rows of n / `block.values()` blocks each, as a GGUF stores them.
    pub fn new(
        block: Block,
        data: impl Into<Bytes>,
        out: usize,
        n: usize,
    ) -> candle_core::Result<QLinear> {
        let data = data.into();
        let size = out
            .checked_mul(n / block.values())
            .and_then(|b| b.checked_mul(block.bytes()));
        if !n.is_multiple_of(block.values()) || Some(data.len()) != size {
            candle_core::bail!(
                "{} weight [{out}, {n}]: {} bytes, not {out} rows of {n}/{} blocks of {}",
                block.name(),
                data.len(),
                block.values(),
                block.bytes()
            )
        }
        Ok(QLinear {
            block,
            data,
            out,
            n,
            order: None,
            scale: 1.0,
            inputs: None,
        })
    }

    /// This weight with its columns stored in another order: stored column k is column
    /// `inputs[k]` of `W`.
    pub fn gathered(mut self, inputs: Vec<u32>) -> candle_core::Result<QLinear> {
        if !is_order(&inputs, self.n) {
            candle_core::bail!("column order is not an order of {} columns", self.n)
        }
        self.inputs = Some(inputs);
        Ok(self)
    }

    /// This weight with every value times `scale`.
    pub fn scaled(mut self, scale: f32) -> QLinear {
        self.scale = scale;
        self
    }

    /// This weight with its rows stored in another order: row o of `W` is stored row `order[o]`.
    pub fn reordered(mut self, order: Vec<u32>) -> candle_core::Result<QLinear> {
        if !is_order(&order, self.out) {
            candle_core::bail!("row order {order:?} is not an order of {} rows", self.out)
        }
        self.order = Some(order);
        Ok(self)
    }

    pub fn block(&self) -> Block {
        self.block
    }

    fn row(&self, o: usize) -> &[u8] {
        let len = self.n / self.block.values() * self.block.bytes();
        let o = self.order.as_ref().map_or(o, |order| order[o] as usize);
        &self.data[o * len..][..len]
    }

    /// Rows `ids` of `W`, dequantized, as a tensor [ids, n]: an embedding lookup.
    pub fn rows(&self, ids: &[u32]) -> candle_core::Result<Tensor> {
        let mut v = Vec::with_capacity(ids.len() * self.n);
        let mut q = [0i8; QK];
        for &id in ids {
            let o = id as usize;
            if o >= self.out {
                candle_core::bail!("token id {o} is past the vocabulary ({})", self.out)
            }
            for j in 0..self.n / QK {
                let (d, m) = self.block.decode(self.row(o), j, &mut q);
                let value = |(i, &q): (usize, &i8)| (d[i / 16] * q as f32 + m) * self.scale;
                v.extend(q.iter().enumerate().map(value));
            }
            if let Some(inputs) = &self.inputs {
                let row = v.split_off(v.len() - self.n);
                let mut put = vec![0f32; self.n];
                for (&c, x) in inputs.iter().zip(row) {
                    put[c as usize] = x;
                }
                v.extend(put);
            }
        }
        Tensor::from_vec(v, (ids.len(), self.n), &Device::Cpu)
    }

    /// Every value dequantized, as a tensor [out, n].
    pub fn dequantize(&self) -> candle_core::Result<Tensor> {
        self.rows(&(0..self.out as u32).collect::<Vec<_>>())
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
        match &self.inputs {
            Some(inputs) => {
                let gathered: Vec<f32> = (x.chunks_exact(self.n))
                    .flat_map(|row| inputs.iter().map(|&c| row[c as usize]))
                    .collect();
                self.product_unscaled(path, &gathered, m, y);
            }
            None => self.product_unscaled(path, x, m, y),
        }
        if self.scale != 1.0 {
            y.iter_mut().for_each(|v| *v *= self.scale);
        }
    }

    fn product_unscaled(&self, path: Path, x: &[f32], m: usize, y: &mut [f32]) {
        let (n, out, nb) = (self.n, self.out, self.n / QK);
        check_product(path, x, y, m, n, out);
        let y = Shared::new(y);
        #[cfg(target_arch = "x86_64")]
        if path == Path::Avx512 && m >= PROMPT {
            let xs = x86::Split::new(x, m, n);
            for_ranges(out.div_ceil(UNIT), m * n * out / 4, |units| {
                let mut w = x86::Repacked::new(nb);
                for u in units {
                    let rows = u * UNIT..out.min((u + 1) * UNIT);
                    // A partial unit repeats its last row; its sums are not stored.
                    let stored: [&[u8]; UNIT] =
                        std::array::from_fn(|r| self.row((rows.start + r).min(rows.end - 1)));
                    // SAFETY: the path's features were seen by `available`; y is [m, out] and
                    // columns `rows` are this unit's alone.
                    unsafe {
                        x86::repack(self.block, &stored, &mut w);
                        x86::tiles(self.block, &w, &xs, m, &y, out, rows);
                    }
                }
            });
            return;
        }
        if m >= PROMPT {
            // A prompt's activations unquantized on every path, as the AVX-512 tiles take
            // them, so that a stored model's prompt gives the same logits on every CPU (to the
            // order of the sums), not 8-bit activations' rounding where AVX-512 is missing:
            // the prompt's rows packed once as `linear` packs a weight, each unit of weight
            // rows dequantized once to f32 (in vector code) and run against them by its
            // kernel as the rows of its `x`, into yᵀ [out, m].
            let tokens = Packed::new(x, m, n);
            let mut yt = vec![0f32; out * m];
            let shared = Shared::new(&mut yt);
            for_ranges(out.div_ceil(UNIT), m * n * out / 4, |units| {
                let mut unpacked = Unpacked::new(nb);
                let mut w = vec![0f32; UNIT * n];
                for u in units {
                    let rows = u * UNIT..out.min((u + 1) * UNIT);
                    let w = &mut w[..rows.len() * n];
                    for (row, o) in w.chunks_exact_mut(n).zip(rows.clone()) {
                        unpacked.fill(path, self.block, self.row(o));
                        unpacked.widen(row);
                    }
                    for t in 0..m.div_ceil(PANEL) {
                        panel_product(w, n, tokens.panel(t), (rows.start, t * PANEL), m, &shared);
                    }
                }
            });
            // SAFETY: y is [m, out], and the threads that wrote yᵀ are done.
            let y = unsafe { y.part(0, m * out) };
            for (t, y) in y.chunks_exact_mut(out).enumerate() {
                for (o, v) in y.iter_mut().enumerate() {
                    *v = yt[o * m + t];
                }
            }
            return;
        }
        let xq = Q8Rows::new(x, m, n);
        for_ranges(out.div_ceil(UNIT), m * n * out / 4, |units| {
            #[cfg(target_arch = "x86_64")]
            if m == 1 && path != Path::Scalar {
                for o in units.start * UNIT..out.min(units.end * UNIT) {
                    // SAFETY: the path's features were seen by `available`.
                    let v =
                        unsafe { x86::row_dot(path, self.block, self.row(o), &xq.q, &xq.d, &xq.s) };
                    // SAFETY: y is [1, out] and o belongs to these units alone.
                    unsafe { y.part(o, 1)[0] = v }
                }
                return;
            }
            let mut w = Unpacked::new(nb);
            for u in units {
                let rows = u * UNIT..out.min((u + 1) * UNIT);
                for tile in (0..m).step_by(TILE) {
                    for o in rows.clone() {
                        w.fill(path, self.block, self.row(o));
                        for i in tile..m.min(tile + TILE) {
                            let v = w.dot(path, self.block.has_min(), &xq, i);
                            // SAFETY: y is [m, out] and (i, o) belongs to this unit alone.
                            unsafe { y.part(i * out + o, 1)[0] = v }
                        }
                    }
                }
            }
        });
    }
}

/// `order` holds each of 0..len once.
fn is_order(order: &[u32], len: usize) -> bool {
    let mut seen = vec![false; len];
    order.len() == len
        && order.iter().all(|&r| match seen.get_mut(r as usize) {
            Some(s) if !*s => {
                *s = true;
                true
            }
            // Past the end, or one twice.
            Some(_) | None => false,
        })
}

/// A block of 32 values' largest magnitude, and what multiplies each value to quantize it to
/// ±127: 127 / max, not 1 / d, as ggml computes it (the two can differ in the last bit).
fn scale_of(x: &[f32]) -> (f32, f32) {
    let amax = x.iter().fold(0f32, |a, v| a.max(v.abs()));
    (amax, if amax != 0.0 { 127.0 / amax } else { 0.0 })
}

/// 1.5·2²³: a float of magnitude below 2²² plus this has no bits below 1.
const ROUND: f32 = 12_582_912.0;

/// Rows of `x` quantized to 8 bits in blocks of 32, as llama.cpp's Q8_0 and Q8_1 (scales
/// rounded to f16 as those store them).
struct Q8Rows {
    q: Vec<i8>,
    d: Vec<f32>,
    /// d·Σq per block, for the formats with a minimum.
    s: Vec<f32>,
    nb: usize,
}

impl Q8Rows {
    fn new(x: &[f32], m: usize, n: usize) -> Q8Rows {
        let nb = n / QK;
        let mut r = Q8Rows {
            q: vec![0; m * n],
            d: Vec::with_capacity(m * nb),
            s: Vec::with_capacity(m * nb),
            nb,
        };
        for (x, q) in x.chunks_exact(QK).zip(r.q.chunks_exact_mut(QK)) {
            let (amax, inv) = scale_of(x);
            let d = amax / 127.0;
            let mut sum = 0i32;
            for (q, &v) in q.iter_mut().zip(x) {
                // To nearest, ties to even, as ggml's x86 quantize_row_q8_0 and q8_1 round:
                // adding 1.5·2²³ leaves no fraction bits (ggml's nearest_int), in plain
                // arithmetic the compiler vectorizes, where round() is a call per value.
                *q = ((v * inv + ROUND) - ROUND) as i8;
                sum += *q as i32;
            }
            r.d.push(f16::from_f32(d).to_f32());
            r.s.push(f16::from_f32(d * sum as f32).to_f32());
        }
        r
    }
}

/// One weight row as signed bytes with its per-block scales and minima.
struct Unpacked {
    q: Vec<i8>,
    /// A scale per 16 values.
    d: Vec<f32>,
    /// A minimum per 32.
    m: Vec<f32>,
}

impl Unpacked {
    fn new(nb: usize) -> Unpacked {
        Unpacked {
            q: vec![0; nb * QK],
            d: vec![0.0; 2 * nb],
            m: vec![0.0; nb],
        }
    }

    fn fill(&mut self, path: Path, block: Block, row: &[u8]) {
        match path {
            Path::Scalar => {
                for (j, q) in self.q.chunks_exact_mut(QK).enumerate() {
                    let (d, m) = block.decode(row, j, q);
                    (self.d[2 * j], self.d[2 * j + 1], self.m[j]) = (d[0], d[1], m);
                }
            }
            // SAFETY: `available` saw AVX2 and FMA before these paths could be chosen.
            #[cfg(target_arch = "x86_64")]
            Path::Avx2 | Path::Avx512 => unsafe { x86::unpack(block, row, self) },
            #[cfg(not(target_arch = "x86_64"))]
            Path::Avx2 | Path::Avx512 => unreachable!("only the scalar path exists here"),
        }
    }

    /// The row as f32 values into `out`: each d·q + m.
    fn widen(&self, out: &mut [f32]) {
        for (c, (out, q)) in out
            .chunks_exact_mut(16)
            .zip(self.q.chunks_exact(16))
            .enumerate()
        {
            let (d, min) = (self.d[c], self.m[c / 2]);
            for (v, &q) in out.iter_mut().zip(q) {
                *v = d * f32::from(q) + min;
            }
        }
    }

    /// Σ m_w·s_x over the blocks, for the formats with a minimum.
    fn mins(&self, min: bool, x: &Q8Rows, i: usize) -> f32 {
        if !min {
            return 0.0;
        }
        let xs = &x.s[i * x.nb..][..x.nb];
        self.m.iter().zip(xs).map(|(m, s)| m * s).sum::<f32>()
    }

    /// This row times row `i` of `x`.
    fn dot(&self, path: Path, min: bool, x: &Q8Rows, i: usize) -> f32 {
        let nb = x.nb;
        let (xq, xd) = (&x.q[i * nb * QK..][..nb * QK], &x.d[i * nb..][..nb]);
        let sum = match path {
            Path::Scalar => {
                // Each 16 values with their scale.
                let halves = self
                    .q
                    .chunks_exact(16)
                    .zip(xq.chunks_exact(16))
                    .zip(&self.d);
                let mut sum = 0f32;
                for (k, ((w, v), d)) in halves.enumerate() {
                    let dot: i32 = w.iter().zip(v).map(|(&a, &b)| a as i32 * b as i32).sum();
                    sum += dot as f32 * (d * xd[k / 2]);
                }
                sum
            }
            // SAFETY: the features each path needs were seen by `available`.
            #[cfg(target_arch = "x86_64")]
            Path::Avx2 => unsafe { x86::dot_avx2(&self.q, &self.d, xq, xd) },
            #[cfg(target_arch = "x86_64")]
            Path::Avx512 => unsafe { x86::dot_avx512(&self.q, &self.d, xq, xd) },
            #[cfg(not(target_arch = "x86_64"))]
            Path::Avx2 | Path::Avx512 => unreachable!("only the scalar path exists here"),
        };
        sum + self.mins(min, x, i)
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod x86 {
    use super::{Block, Unpacked, QK};
    use crate::floatlinear::e4m3;
    use std::arch::x86_64::*;

    /// How far ahead of the block being multiplied a decode step fetches, in bytes.
    const AHEAD: usize = 2048;

    /// The f16 at `p`, through F16C (part of every AVX2 CPU's x86-64-v3 set).
    #[inline(always)]
    unsafe fn half(p: *const u8) -> f32 {
        let bits = u16::from_le_bytes([*p, *p.add(1)]);
        _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(bits as i32)))
    }

    /// 32 nibbles from 16 bytes: the low ones first, then the high ones.
    #[inline(always)]
    unsafe fn nibbles(p: *const u8) -> __m256i {
        let b = _mm_loadu_si128(p.cast());
        let both = _mm256_set_m128i(_mm_srli_epi16(b, 4), b);
        _mm256_and_si256(both, _mm256_set1_epi8(15))
    }

    /// 32 codes at `p` (the low nibbles first) as the `levels` they index.
    #[inline(always)]
    unsafe fn levels(p: *const u8, levels: &[i8; 16]) -> __m256i {
        let lut = _mm256_broadcastsi128_si256(_mm_loadu_si128(levels.as_ptr().cast()));
        _mm256_shuffle_epi8(lut, nibbles(p))
    }

    /// 32 bits at `p` as 32 bytes, 0xFF where the bit is set (ggml's bytes_from_bits_32).
    #[inline(always)]
    unsafe fn bits(p: *const u8) -> __m256i {
        let word = i32::from_le_bytes([*p, *p.add(1), *p.add(2), *p.add(3)]);
        let spread = _mm256_shuffle_epi8(
            _mm256_set1_epi32(word),
            _mm256_set_epi64x(
                0x0303030303030303,
                0x0202020202020202,
                0x0101010101010101,
                0,
            ),
        );
        let mask = _mm256_set1_epi64x(0x7fbfdfeff7fbfdfe);
        _mm256_cmpeq_epi8(_mm256_or_si256(spread, mask), _mm256_set1_epi64x(-1))
    }

    // Formats as const parameters, so that each gets a loop of its own.
    const Q4_0: u8 = 0;
    const Q4_1: u8 = 1;
    const Q5_0: u8 = 2;
    const Q5_1: u8 = 3;
    const Q8_0: u8 = 4;
    const Q4K: u8 = 5;
    const Q6K: u8 = 6;
    const MX: u8 = 7;
    const Q5K: u8 = 8;
    const Q3K: u8 = 9;
    const G128: u8 = 10;
    const G64: u8 = 16;
    const NV: u8 = 11;
    const NL: u8 = 12;
    const XS: u8 = 13;
    const NF: u8 = 14;
    const FP: u8 = 15;
    const I8: u8 = 17;
    const I8X2: u8 = 18;
    const I8M: u8 = 19;
    const TQ2: u8 = 20;

    /// Calls `$f::<format>($args)` for `$block`.
    macro_rules! by_block {
        ($block:expr, $f:ident($($arg:expr),*)) => {
            match $block {
                Block::Q4_0 => $f::<Q4_0>($($arg),*),
                Block::Q4_1 => $f::<Q4_1>($($arg),*),
                Block::Q5_0 => $f::<Q5_0>($($arg),*),
                Block::Q5_1 => $f::<Q5_1>($($arg),*),
                Block::Q8_0 => $f::<Q8_0>($($arg),*),
                Block::Q3K => $f::<Q3K>($($arg),*),
                Block::Q4K => $f::<Q4K>($($arg),*),
                Block::Q5K => $f::<Q5K>($($arg),*),
                Block::Q6K => $f::<Q6K>($($arg),*),
                Block::Mxfp4 => $f::<MX>($($arg),*),
                Block::Int4G128 => $f::<G128>($($arg),*),
                Block::Int4G64 => $f::<G64>($($arg),*),
                Block::Nvfp4 => $f::<NV>($($arg),*),
                Block::Iq4Nl => $f::<NL>($($arg),*),
                Block::Iq4Xs => $f::<XS>($($arg),*),
                Block::Nf4 => $f::<NF>($($arg),*),
                Block::Fp4 => $f::<FP>($($arg),*),
                Block::Int8F32 => $f::<I8>($($arg),*),
                Block::Int8F32x2 => $f::<I8X2>($($arg),*),
                Block::Int8F32Min => $f::<I8M>($($arg),*),
                Block::Tq2_0 => $f::<TQ2>($($arg),*),
            }
        };
    }

    /// Bytes and values of a stored block, and whether it stores a minimum (its integers are
    /// then unsigned).
    const fn layout(b: u8) -> (usize, usize, bool) {
        match b {
            Q4_0 => (18, 32, false),
            Q4_1 => (20, 32, true),
            Q5_0 => (22, 32, false),
            Q5_1 => (24, 32, true),
            Q3K => (110, 256, false),
            Q4K => (144, 256, true),
            Q5K => (176, 256, true),
            Q6K => (210, 256, false),
            MX => (17, 32, false),
            Q8_0 => (34, 32, false),
            G128 => (68, 128, true),
            G64 => (36, 64, true),
            NV | NL | NF | FP => (18, 32, false),
            XS => (136, 256, false),
            I8 => (36, 32, false),
            I8X2 => (40, 32, false),
            I8M => (40, 32, true),
            TQ2 => (66, 256, false),
            _ => panic!("no such format"),
        }
    }

    /// Whether format B's integers are unsigned, as maddubs and dpbusd take their first operand:
    /// those of the formats with a minimum but INT8_F32_MIN's, whose 8-bit codes are signed.
    const fn unsigned(b: u8) -> bool {
        layout(b).2 && b != I8M
    }

    /// Bytes of a row's first `blocks` blocks of 32 (the blocks that hold them).
    const fn bytes_of<const B: u8>(blocks: usize) -> usize {
        let (bytes, values, _) = layout(B);
        (blocks * QK).div_ceil(values) * bytes
    }

    /// The scales of a 32-value block for its two halves, times `xd`, as 8 lanes (four i32
    /// sums for each half).
    #[inline(always)]
    unsafe fn halves(d: [f32; 2], xd: f32) -> __m256 {
        _mm256_set_m128(_mm_set1_ps(d[1] * xd), _mm_set1_ps(d[0] * xd))
    }

    /// `Block::decode` of values 32j..32j + 32 of `row`.
    #[inline(always)]
    unsafe fn decode<const B: u8>(row: *const u8, j: usize) -> (__m256i, [f32; 2], f32) {
        // The stored block that holds values 32j.., and block k of the eight of 32 it holds.
        let (size, values, _) = layout(B);
        let per = values / QK;
        let (p, k) = (row.add(j / per * size), j % per);
        match B {
            Q3K => {
                let (half_, g) = (k / 4, k % 4);
                let v = _mm256_loadu_si256(p.add(32 + 32 * half_).cast());
                let low = _mm256_srl_epi16(v, _mm_cvtsi32_si128(2 * g as i32));
                let low = _mm256_and_si256(low, _mm256_set1_epi8(3));
                let hm = _mm256_loadu_si256(p.cast());
                let bit = _mm256_srl_epi16(hm, _mm_cvtsi32_si128((4 * half_ + g) as i32));
                let bit = _mm256_slli_epi16(_mm256_and_si256(bit, _mm256_set1_epi8(1)), 2);
                // A clear high bit takes 4 off: q − 4 + 4·bit.
                let q = _mm256_sub_epi8(_mm256_or_si256(low, bit), _mm256_set1_epi8(4));
                let packed = std::slice::from_raw_parts(p.add(96), 12);
                let (d, i) = (half(p.add(108)), 8 * half_ + 2 * g);
                let s = [super::q3k_scale(packed, i), super::q3k_scale(packed, i + 1)];
                (q, [d * s[0], d * s[1]], 0.0)
            }
            Q6K => {
                let (half_, g) = (k / 4, k % 4);
                let v = _mm256_loadu_si256(p.add(64 * half_ + 32 * (g & 1)).cast());
                let low = if g >= 2 { _mm256_srli_epi16(v, 4) } else { v };
                let low = _mm256_and_si256(low, _mm256_set1_epi8(15));
                let hb = _mm256_loadu_si256(p.add(128 + 32 * half_).cast());
                let high = _mm256_srl_epi16(hb, _mm_cvtsi32_si128(2 * g as i32));
                let high = _mm256_slli_epi16(_mm256_and_si256(high, _mm256_set1_epi8(3)), 4);
                let q = _mm256_sub_epi8(_mm256_or_si256(low, high), _mm256_set1_epi8(32));
                let sc = p.add(192 + 8 * half_ + 2 * g).cast::<i8>();
                let d = half(p.add(208));
                (q, [d * *sc as f32, d * *sc.add(1) as f32], 0.0)
            }
            Q4K | Q5K => {
                let (s, m) = super::k4_scale_min(std::slice::from_raw_parts(p.add(4), 12), k);
                let qs = if B == Q5K { 48 } else { 16 };
                let v = _mm256_loadu_si256(p.add(qs + 32 * (k / 2)).cast());
                let v = if k % 2 == 0 {
                    v
                } else {
                    _mm256_srli_epi16(v, 4)
                };
                let mut q = _mm256_and_si256(v, _mm256_set1_epi8(15));
                if B == Q5K {
                    // Bit k of each of qh's 32 bytes, as 16.
                    let hb = _mm256_loadu_si256(p.add(16).cast());
                    let bit = _mm256_srl_epi16(hb, _mm_cvtsi32_si128(k as i32));
                    let five = _mm256_slli_epi16(_mm256_and_si256(bit, _mm256_set1_epi8(1)), 4);
                    q = _mm256_or_si256(q, five);
                }
                let d = half(p) * s as f32;
                (q, [d, d], -half(p.add(2)) * m as f32)
            }
            MX => (
                levels(p.add(1), &super::MXFP4_DOUBLED),
                [super::e8m0_half(*p); 2],
                0.0,
            ),
            NV => (
                levels(p.add(2), &super::MXFP4_DOUBLED),
                [e4m3(*p) * 0.5, e4m3(*p.add(1)) * 0.5],
                0.0,
            ),
            NL => (levels(p.add(2), &super::IQ4NL), [half(p); 2], 0.0),
            NF => (levels(p.add(2), &super::NF4_LEVELS), [half(p); 2], 0.0),
            FP => (levels(p.add(2), &super::FP4_LEVELS), [half(p); 2], 0.0),
            XS => {
                let b = std::slice::from_raw_parts(p, 8);
                let d = half(p) * super::iq4xs_scale(b, k) as f32;
                (levels(p.add(8 + 16 * k), &super::IQ4NL), [d, d], 0.0)
            }
            Q4_0 => {
                let q = _mm256_sub_epi8(nibbles(p.add(2)), _mm256_set1_epi8(8));
                (q, [half(p); 2], 0.0)
            }
            Q4_1 => (nibbles(p.add(4)), [half(p); 2], half(p.add(2))),
            G128 | G64 => (nibbles(p.add(4 + 16 * k)), [half(p); 2], half(p.add(2))),
            // A clear fifth bit leaves 0xF0 | q = q − 16; a set one, q.
            Q5_0 => {
                let high = _mm256_andnot_si256(bits(p.add(2)), _mm256_set1_epi8(0xF0u8 as i8));
                (_mm256_or_si256(nibbles(p.add(6)), high), [half(p); 2], 0.0)
            }
            Q5_1 => {
                let high = _mm256_and_si256(bits(p.add(4)), _mm256_set1_epi8(16));
                let q = _mm256_or_si256(nibbles(p.add(8)), high);
                (q, [half(p); 2], half(p.add(2)))
            }
            Q8_0 => (_mm256_loadu_si256(p.add(2).cast()), [half(p); 2], 0.0),
            I8 => {
                let d = p.cast::<f32>().read_unaligned();
                (_mm256_loadu_si256(p.add(4).cast()), [d, d], 0.0)
            }
            I8X2 => {
                let d = [
                    p.cast::<f32>().read_unaligned(),
                    p.add(4).cast::<f32>().read_unaligned(),
                ];
                (_mm256_loadu_si256(p.add(8).cast()), d, 0.0)
            }
            I8M => {
                let d = p.cast::<f32>().read_unaligned();
                let m = p.add(4).cast::<f32>().read_unaligned();
                (_mm256_loadu_si256(p.add(8).cast()), [d, d], m)
            }
            TQ2 => {
                let v = _mm256_loadu_si256(p.add(32 * (k / 4)).cast());
                let digits = _mm256_srl_epi16(v, _mm_cvtsi32_si128(2 * (k % 4) as i32));
                let q = _mm256_and_si256(digits, _mm256_set1_epi8(3));
                let d = half(p.add(64));
                (_mm256_sub_epi8(q, _mm256_set1_epi8(1)), [d, d], 0.0)
            }
            _ => unreachable!("no format {B}"),
        }
    }

    /// `Block::decode` of every 32 values of `row`, into `to`.
    pub(super) unsafe fn unpack(block: Block, row: &[u8], to: &mut Unpacked) {
        by_block!(block, unpack_as(row, to))
    }

    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn unpack_as<const B: u8>(row: &[u8], to: &mut Unpacked) {
        let nb = to.m.len();
        assert!(row.len() >= bytes_of::<B>(nb) && to.q.len() >= nb * QK && to.d.len() >= 2 * nb);
        for b in 0..nb {
            let (q, d, m) = decode::<B>(row.as_ptr(), b);
            _mm256_storeu_si256(to.q.as_mut_ptr().add(b * QK).cast(), q);
            (to.d[2 * b], to.d[2 * b + 1], to.m[b]) = (d[0], d[1], m);
        }
    }

    /// One stored row times one quantized row of `x` (a decode step), each block decoded in
    /// registers: `dot_avx512` (or `dot_avx2`) of the unpacked row and its minima, without
    /// writing them out.
    pub(super) unsafe fn row_dot(
        path: super::Path,
        block: Block,
        row: &[u8],
        x: &[i8],
        xd: &[f32],
        xs: &[f32],
    ) -> f32 {
        if path == super::Path::Avx512 {
            by_block!(block, row_dot512(row, x, xd, xs))
        } else {
            by_block!(block, row_dot256(row, x, xd, xs, 0))
        }
    }

    /// Σ w·x of 32 bytes each, as i32 lanes: unsigned w straight into maddubs, signed w's
    /// magnitude with x given its sign (maddubs takes unsigned × signed bytes; the pairwise
    /// i16 sums stay below 2·128·127 < 2¹⁵).
    #[inline(always)]
    unsafe fn products256<const UNSIGNED: bool>(w: __m256i, x: __m256i) -> __m256i {
        let pairs = if UNSIGNED {
            _mm256_maddubs_epi16(w, x)
        } else {
            _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w))
        };
        _mm256_madd_epi16(pairs, _mm256_set1_epi16(1))
    }

    #[target_feature(enable = "avx2,fma,f16c")]
    /// Blocks `start..` of the row.
    unsafe fn row_dot256<const B: u8>(
        row: &[u8],
        x: &[i8],
        xd: &[f32],
        xs: &[f32],
        start: usize,
    ) -> f32 {
        let nb = xd.len();
        assert!(row.len() >= bytes_of::<B>(nb) && x.len() >= nb * QK && xs.len() >= nb);
        // Block b into the sums `acc` and `mins` (a macro, not a closure, so that it is always
        // inlined).
        macro_rules! one {
            ($b:expr, $acc:ident, $mins:ident) => {{
                let b = $b;
                let ahead = row.as_ptr().wrapping_add(bytes_of::<B>(b) + AHEAD);
                _mm_prefetch::<_MM_HINT_T0>(ahead.cast());
                let (w, d, m) = decode::<B>(row.as_ptr(), b);
                let xv = _mm256_loadu_si256(x.as_ptr().add(b * QK).cast());
                let sums = if unsigned(B) {
                    products256::<true>(w, xv)
                } else {
                    products256::<false>(w, xv)
                };
                $mins += m * xs[b];
                let scale = if split(B) {
                    halves(d, xd[b])
                } else {
                    _mm256_set1_ps(d[0] * xd[b])
                };
                $acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums), scale, $acc);
            }};
        }
        // Two sums of each kind, so that one multiply–add need not wait on the one before.
        let (mut a, mut c) = (_mm256_setzero_ps(), _mm256_setzero_ps());
        let (mut ma, mut mc) = (0f32, 0f32);
        let mut b = start;
        while b + 2 <= nb {
            one!(b, a, ma);
            one!(b + 1, c, mc);
            b += 2;
        }
        if b < nb {
            one!(b, a, ma);
        }
        hsum256(_mm256_add_ps(a, c)) + (ma + mc)
    }

    #[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vnni")]
    unsafe fn row_dot512<const B: u8>(row: &[u8], x: &[i8], xd: &[f32], xs: &[f32]) -> f32 {
        let nb = xd.len();
        assert!(row.len() >= bytes_of::<B>(nb) && x.len() >= nb * QK && xs.len() >= nb);
        let zero = _mm512_setzero_si512();
        // Blocks b and b + 1 into the sums `acc` and `mins` (a macro, not a closure, so that it
        // is always inlined).
        macro_rules! pair {
            ($b:expr, $acc:ident, $mins:ident) => {{
                let b = $b;
                // A decode step streams every weight from memory once: ask for them ahead of the
                // hardware prefetcher (any address: a prefetch never faults).
                let ahead = row.as_ptr().wrapping_add(bytes_of::<B>(b) + AHEAD);
                _mm_prefetch::<_MM_HINT_T0>(ahead.cast());
                _mm_prefetch::<_MM_HINT_T0>(ahead.wrapping_add(64).cast());
                let (w0, d0, m0) = decode::<B>(row.as_ptr(), b);
                let (w1, d1, m1) = decode::<B>(row.as_ptr(), b + 1);
                let wv = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(w0), w1);
                let xv = _mm512_loadu_si512(x.as_ptr().add(b * QK).cast());
                let sums = if unsigned(B) {
                    _mm512_dpbusd_epi32(zero, wv, xv)
                } else {
                    let signed = _mm512_mask_sub_epi8(xv, _mm512_movepi8_mask(wv), zero, xv);
                    _mm512_dpbusd_epi32(zero, _mm512_abs_epi8(wv), signed)
                };
                $mins += m0 * xs[b] + m1 * xs[b + 1];
                let scale = if split(B) {
                    quarters([
                        d0[0] * xd[b],
                        d0[1] * xd[b],
                        d1[0] * xd[b + 1],
                        d1[1] * xd[b + 1],
                    ])
                } else {
                    _mm512_mask_blend_ps(
                        0xFF00,
                        _mm512_set1_ps(d0[0] * xd[b]),
                        _mm512_set1_ps(d1[0] * xd[b + 1]),
                    )
                };
                $acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sums), scale, $acc);
            }};
        }
        // Two sums of each kind, so that one multiply–add need not wait on the one before.
        let (mut a, mut c) = (_mm512_setzero_ps(), _mm512_setzero_ps());
        let (mut ma, mut mc) = (0f32, 0f32);
        let mut b = 0;
        while b + 4 <= nb {
            pair!(b, a, ma);
            pair!(b + 2, c, mc);
            b += 4;
        }
        if b + 2 <= nb {
            pair!(b, a, ma);
            b += 2;
        }
        let mut sum = _mm512_reduce_add_ps(_mm512_add_ps(a, c)) + (ma + mc);
        if b < nb {
            sum += row_dot256::<B>(row, x, xd, xs, b);
        }
        sum
    }

    /// Four scales, each for 16 values (four i32 lanes) of two blocks.
    #[inline(always)]
    unsafe fn quarters(s: [f32; 4]) -> __m512 {
        let idx = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
        _mm512_permutexvar_ps(idx, _mm512_castps128_ps512(_mm_loadu_ps(s.as_ptr())))
    }

    /// A unit's 16 weight rows laid out for `tiles`: for each block of 32 values, eight vectors,
    /// vector t holding bytes 4t..4t + 4 of every row (lane r, row r), so that one dpbusd adds
    /// four products to each of the 16 rows' sums; then for each scale group (the block, or its
    /// halves where a scale covers 16 values) the rows' scales and −128·Σq, and for each block
    /// the rows' minima.
    pub(crate) struct Repacked {
        q: Vec<__m512i>,
        d: Vec<__m512>,
        neg: Vec<__m512i>,
        m: Vec<__m512>,
    }

    impl Repacked {
        pub(crate) fn new(nb: usize) -> Repacked {
            // SAFETY: all-zero bits are a valid value of each vector type.
            let (i, f): (__m512i, __m512) = unsafe { (std::mem::zeroed(), std::mem::zeroed()) };
            Repacked {
                q: vec![i; 8 * nb],
                d: vec![f; 2 * nb],
                neg: vec![i; 2 * nb],
                m: vec![f; nb],
            }
        }
    }

    /// Whether format B has a scale for each 16 values rather than each 32.
    const fn split(b: u8) -> bool {
        matches!(b, Q3K | Q6K | NV | I8X2)
    }

    /// `Repacked` of the stored `rows`, each block decoded in registers.
    pub(super) unsafe fn repack(block: Block, rows: &[&[u8]; 16], to: &mut Repacked) {
        by_block!(block, repack_as(rows, to))
    }

    #[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vnni")]
    unsafe fn repack_as<const B: u8>(rows: &[&[u8]; 16], to: &mut Repacked) {
        let nb = to.m.len();
        assert!(rows.iter().all(|r| r.len() >= bytes_of::<B>(nb)));
        let k128 = _mm512_set1_epi8(-128);
        for b in 0..nb {
            let (mut q, mut d, mut m) = ([_mm256_setzero_si256(); 16], [[0f32; 16]; 2], [0f32; 16]);
            for (r, row) in rows.iter().enumerate() {
                // Sixteen streams at once are more than the hardware prefetcher follows.
                let ahead = row.as_ptr().wrapping_add(bytes_of::<B>(b) + 256);
                _mm_prefetch::<_MM_HINT_T0>(ahead.cast());
                let (v, s, min) = decode::<B>(row.as_ptr(), b);
                (q[r], d[0][r], d[1][r], m[r]) = (v, s[0], s[1], min);
            }
            // Rows r and r + 8 side by side, then an 8 × 8 transpose of dwords in each half.
            let z: [__m512i; 8] = std::array::from_fn(|r| {
                _mm512_inserti64x4::<1>(_mm512_castsi256_si512(q[r]), q[r + 8])
            });
            let t = transpose8(z);
            let mut sums = [_mm512_setzero_si512(); 2];
            for (i, v) in t.into_iter().enumerate() {
                to.q[8 * b + i] = v;
                sums[i / 4] = _mm512_dpbusd_epi32(sums[i / 4], k128, v);
            }
            let zero = _mm512_setzero_si512();
            if split(B) {
                for h in 0..2 {
                    to.neg[2 * b + h] = _mm512_sub_epi32(zero, sums[h]);
                    to.d[2 * b + h] = _mm512_loadu_ps(d[h].as_ptr());
                }
            } else {
                to.neg[b] = _mm512_sub_epi32(zero, _mm512_add_epi32(sums[0], sums[1]));
                to.d[b] = _mm512_loadu_ps(d[0].as_ptr());
            }
            to.m[b] = _mm512_loadu_ps(m.as_ptr());
        }
    }

    /// Dword j of each half of `z[i]` to dword i of that half of result j (AVX's 8 × 8 float
    /// transpose, on two matrices at once).
    #[inline(always)]
    unsafe fn transpose8(z: [__m512i; 8]) -> [__m512i; 8] {
        let a: [__m512i; 8] = std::array::from_fn(|i| {
            let (x, y) = (z[i / 2 * 2], z[i / 2 * 2 + 1]);
            if i % 2 == 0 {
                _mm512_unpacklo_epi32(x, y)
            } else {
                _mm512_unpackhi_epi32(x, y)
            }
        });
        // b[4h + 2p + s]: from a[4h + p] and a[4h + p + 2], the low (s = 0) or high quadwords.
        let b: [__m512i; 8] = std::array::from_fn(|i| {
            let (h, p, s) = (i / 4, i / 2 % 2, i % 2);
            let (x, y) = (a[4 * h + p], a[4 * h + p + 2]);
            if s == 0 {
                _mm512_unpacklo_epi64(x, y)
            } else {
                _mm512_unpackhi_epi64(x, y)
            }
        });
        // Result j: 128-bit lane j / 4 of each 256-bit half, from b[j % 4] then b[j % 4 + 4].
        let low = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
        let high = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
        std::array::from_fn(|j| {
            let (x, y) = (b[j % 4], b[j % 4 + 4]);
            _mm512_permutex2var_epi64(x, if j < 4 { low } else { high }, y)
        })
    }

    /// Rows of `x` for `tiles`, in two bytes a value: per block of 32, with d = max|x| / 127,
    /// x = d·(q + r/256) to within d/256, q and r in −127..=127, each held plus 128 (dpbusd
    /// multiplies unsigned bytes by signed ones). Sixteen bits of x, not llama.cpp's eight: a
    /// prompt's projections stay within 2⁻¹⁵ of max|x| of the f32 product, as the f32
    /// kernels did, and the integer sums cost two dpbusd a step.
    pub(crate) struct Split {
        high: Vec<u8>,
        low: Vec<u8>,
        /// d / 256 per block.
        d: Vec<f32>,
        /// Σx per block, for the formats with a minimum.
        sum: Vec<f32>,
        nb: usize,
    }

    impl Split {
        /// Made only for `tiles`, on the AVX-512 path.
        pub(crate) fn new(x: &[f32], m: usize, n: usize) -> Split {
            let nb = n / QK;
            let mut s = Split {
                high: vec![0; m * n],
                low: vec![0; m * n],
                d: Vec::with_capacity(m * nb),
                sum: Vec::with_capacity(m * nb),
                nb,
            };
            assert!(x.len() == m * n && n.is_multiple_of(QK));
            // SAFETY: `tiles` runs only where `available` saw AVX-512 F and BW.
            unsafe { s.fill(x) };
            s
        }

        /// Each block of 32: its largest magnitude, q and r rounded to nearest, ties to even
        /// (the rounding mode, as ggml's nearest_int), and Σx.
        #[target_feature(enable = "avx512f,avx512bw")]
        unsafe fn fill(&mut self, x: &[f32]) {
            const NEAREST: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
            let blocks = x.chunks_exact(QK).zip(self.high.chunks_exact_mut(QK));
            for ((x, high), low) in blocks.zip(self.low.chunks_exact_mut(QK)) {
                let v = [
                    _mm512_loadu_ps(x.as_ptr()),
                    _mm512_loadu_ps(x.as_ptr().add(16)),
                ];
                let top = _mm512_max_ps(_mm512_abs_ps(v[1]), _mm512_abs_ps(v[0]));
                let amax = _mm512_reduce_max_ps(top);
                let inv = _mm512_set1_ps(if amax != 0.0 { 127.0 / amax } else { 0.0 });
                for (k, v) in v.into_iter().enumerate() {
                    let t = _mm512_mul_ps(v, inv);
                    let q = _mm512_roundscale_ps::<NEAREST>(t);
                    let r = _mm512_mul_ps(_mm512_sub_ps(t, q), _mm512_set1_ps(256.0));
                    let r = _mm512_roundscale_ps::<NEAREST>(r);
                    let r = _mm512_min_ps(
                        _mm512_max_ps(r, _mm512_set1_ps(-127.0)),
                        _mm512_set1_ps(127.0),
                    );
                    let bytes = |f: __m512| {
                        let b = _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(f));
                        _mm_xor_si128(b, _mm_set1_epi8(0x80u8 as i8))
                    };
                    _mm_storeu_si128(high.as_mut_ptr().add(16 * k).cast(), bytes(q));
                    _mm_storeu_si128(low.as_mut_ptr().add(16 * k).cast(), bytes(r));
                }
                self.d.push(amax / 127.0 / 256.0);
                self.sum
                    .push(_mm512_reduce_add_ps(_mm512_add_ps(v[0], v[1])));
            }
        }
    }

    /// `y[i, o] = Σₖ x[i, k] · W[o, k]` for every row i of `x` and the unit's `rows` of W,
    /// repacked in `w`. Each of a row's two integer sums starts from −128·Σq, taking off what
    /// the bytes' 128 added; 256·high + low is then the sum against d/256 · x. A tile of up to 8
    /// rows of `x` keeps 16 lanes for each.
    pub(super) unsafe fn tiles(
        block: Block,
        w: &Repacked,
        x: &Split,
        m: usize,
        y: &crate::pool::Shared,
        outs: usize,
        rows: std::ops::Range<usize>,
    ) {
        by_block!(block, tiles_as(w, x, m, y, outs, rows))
    }

    #[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vnni")]
    unsafe fn tiles_as<const B: u8>(
        w: &Repacked,
        x: &Split,
        m: usize,
        y: &crate::pool::Shared,
        outs: usize,
        rows: std::ops::Range<usize>,
    ) {
        let nb = w.m.len();
        assert!(x.nb == nb && x.high.len() == m * nb * QK && x.low.len() == m * nb * QK);
        assert!(x.d.len() == m * nb && x.sum.len() == m * nb);
        assert!(!rows.is_empty() && rows.len() <= 16 && rows.end <= outs);
        let mut i = 0;
        while i + 8 <= m {
            tile::<B, 8>(w, x, i, y, outs, &rows);
            i += 8;
        }
        match m - i {
            0 => {}
            1 => tile::<B, 1>(w, x, i, y, outs, &rows),
            2 => tile::<B, 2>(w, x, i, y, outs, &rows),
            3 => tile::<B, 3>(w, x, i, y, outs, &rows),
            4 => tile::<B, 4>(w, x, i, y, outs, &rows),
            5 => tile::<B, 5>(w, x, i, y, outs, &rows),
            6 => tile::<B, 6>(w, x, i, y, outs, &rows),
            7 => tile::<B, 7>(w, x, i, y, outs, &rows),
            _ => unreachable!("the loop above leaves fewer than 8 rows"),
        }
    }

    /// Rows i0..i0 + XR of `x` against the unit: per four bytes of a block, one load of the unit
    /// and two broadcasts of each row of x feed 2·XR dpbusd; per scale group, XR conversions
    /// and multiply–adds.
    #[inline(always)]
    unsafe fn tile<const B: u8, const XR: usize>(
        w: &Repacked,
        x: &Split,
        i0: usize,
        y: &crate::pool::Shared,
        outs: usize,
        rows: &std::ops::Range<usize>,
    ) {
        let (nb, groups) = (w.m.len(), if split(B) { 2 } else { 1 });
        let at = |v: &[u8], i: usize| v.as_ptr().add((i0 + i) * nb * QK);
        let (high, low): ([*const u8; XR], [*const u8; XR]) = (
            std::array::from_fn(|i| at(&x.high, i)),
            std::array::from_fn(|i| at(&x.low, i)),
        );
        let four =
            |p: *const u8, k: usize| _mm512_set1_epi32(p.add(k).cast::<i32>().read_unaligned());
        let mut acc = [_mm512_setzero_ps(); XR];
        for b in 0..nb {
            for g in 0..groups {
                let gi = b * groups + g;
                let (mut h, mut l) = ([w.neg[gi]; XR], [w.neg[gi]; XR]);
                for t in 8 / groups * g..8 / groups * (g + 1) {
                    let (wv, k) = (w.q[8 * b + t], b * QK + 4 * t);
                    for i in 0..XR {
                        h[i] = _mm512_dpbusd_epi32(h[i], four(high[i], k), wv);
                        l[i] = _mm512_dpbusd_epi32(l[i], four(low[i], k), wv);
                    }
                }
                for (i, acc) in acc.iter_mut().enumerate() {
                    let sum = _mm512_add_epi32(_mm512_slli_epi32::<8>(h[i]), l[i]);
                    let scale = _mm512_mul_ps(w.d[gi], _mm512_set1_ps(x.d[(i0 + i) * nb + b]));
                    *acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), scale, *acc);
                }
            }
            if layout(B).2 {
                for (i, acc) in acc.iter_mut().enumerate() {
                    let sum = _mm512_set1_ps(x.sum[(i0 + i) * nb + b]);
                    *acc = _mm512_fmadd_ps(w.m[b], sum, *acc);
                }
            }
        }
        let mask = ((1u32 << rows.len()) - 1) as __mmask16;
        for (i, acc) in acc.into_iter().enumerate() {
            // SAFETY (the caller's): y is [m, outs] and these columns are this unit's alone.
            let to = y.part((i0 + i) * outs + rows.start, rows.len());
            _mm512_mask_storeu_ps(to.as_mut_ptr(), mask, acc);
        }
    }

    /// The sum of the 8 lanes.
    #[inline(always)]
    pub(crate) unsafe fn hsum256(v: __m256) -> f32 {
        let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)))
    }

    /// Σ_b d_w[b]·d_x[b]·Σ w·x over the blocks. maddubs multiplies unsigned by signed bytes, so
    /// |w| meets x with w's sign; its pairwise i16 sums stay below 2·128·127 < 2¹⁵.
    #[target_feature(enable = "avx2,fma")]
    /// `wd` holds a scale per 16 values.
    pub(super) unsafe fn dot_avx2(w: &[i8], wd: &[f32], x: &[i8], xd: &[f32]) -> f32 {
        let nb = xd.len();
        assert!(w.len() >= nb * QK && x.len() >= nb * QK && wd.len() >= 2 * nb);
        let ones = _mm256_set1_epi16(1);
        let mut acc = _mm256_setzero_ps();
        for b in 0..nb {
            let wv = _mm256_loadu_si256(w.as_ptr().add(b * QK).cast());
            let xv = _mm256_loadu_si256(x.as_ptr().add(b * QK).cast());
            let pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(wv, wv), _mm256_sign_epi8(xv, wv));
            let sums = _mm256_cvtepi32_ps(_mm256_madd_epi16(pairs, ones));
            acc = _mm256_fmadd_ps(sums, halves([wd[2 * b], wd[2 * b + 1]], xd[b]), acc);
        }
        hsum256(acc)
    }

    /// `dot_avx2` two blocks an instruction: VNNI's dpbusd sums four byte products into each
    /// i32 lane without saturating.
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512vnni")]
    pub(super) unsafe fn dot_avx512(w: &[i8], wd: &[f32], x: &[i8], xd: &[f32]) -> f32 {
        let nb = xd.len();
        assert!(w.len() >= nb * QK && x.len() >= nb * QK && wd.len() >= 2 * nb);
        let zero = _mm512_setzero_si512();
        // Two blocks from `b` on, into `acc`.
        let pair = |b: usize, acc: __m512| {
            let wv = _mm512_loadu_si512(w.as_ptr().add(b * QK).cast());
            let xv = _mm512_loadu_si512(x.as_ptr().add(b * QK).cast());
            // x where w ≥ 0, −x where w < 0 (x is never −128: it is quantized to ±127).
            let signed = _mm512_mask_sub_epi8(xv, _mm512_movepi8_mask(wv), zero, xv);
            let sums = _mm512_dpbusd_epi32(zero, _mm512_abs_epi8(wv), signed);
            let (d, e) = (xd[b], xd[b + 1]);
            let scale = quarters([
                wd[2 * b] * d,
                wd[2 * b + 1] * d,
                wd[2 * b + 2] * e,
                wd[2 * b + 3] * e,
            ]);
            _mm512_fmadd_ps(_mm512_cvtepi32_ps(sums), scale, acc)
        };
        // Two sums, so that one multiply–add need not wait on the one before.
        let (mut a, mut c) = (_mm512_setzero_ps(), _mm512_setzero_ps());
        let mut b = 0;
        while b + 4 <= nb {
            a = pair(b, a);
            c = pair(b + 2, c);
            b += 4;
        }
        if b + 2 <= nb {
            a = pair(b, a);
        }
        let mut sum = _mm512_reduce_add_ps(_mm512_add_ps(a, c));
        if nb % 2 == 1 {
            let b = nb - 1;
            sum += dot_avx2(&w[b * QK..], &wd[2 * b..], &x[b * QK..], &xd[b..]);
        }
        sum
    }
}

#[cfg(test)]
mod tests;
