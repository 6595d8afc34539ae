//! `qlinear`'s kernels on every path against f64 products of the values their blocks hold,
//! each format quantized by ggml's reference (candle) or by the quantizers here.

use super::*;
use candle_core::quantized::{GgmlDType, QTensor};
use proptest::prelude::*;

fn dtype(b: Block) -> GgmlDType {
    match b {
        Block::Q4_0 => GgmlDType::Q4_0,
        Block::Q4_1 => GgmlDType::Q4_1,
        Block::Q5_0 => GgmlDType::Q5_0,
        Block::Q5_1 => GgmlDType::Q5_1,
        Block::Q8_0 => GgmlDType::Q8_0,
        Block::Q3K => GgmlDType::Q3K,
        Block::Q4K => GgmlDType::Q4K,
        Block::Q5K => GgmlDType::Q5K,
        Block::Q6K => GgmlDType::Q6K,
        Block::Mxfp4
        | Block::Int4G128
        | Block::Int4G64
        | Block::Nvfp4
        | Block::Iq4Nl
        | Block::Iq4Xs
        | Block::Nf4
        | Block::Fp4
        | Block::Tq2_0
        | Block::Int8F32
        | Block::Int8F32x2
        | Block::Int8F32Min => unreachable!("candle has no {b:?}"),
    }
}

/// `w` [out, n] in NVFP4's blocks (`Block::Nvfp4`): each 16's scale the e4m3 nearest its
/// largest magnitude over 6, each value the nearest code; and the values those hold.
fn nvfp4(w: &[f32]) -> (Vec<u8>, Vec<f32>) {
    let (mut bytes, mut values) = (vec![], vec![]);
    for b in w.chunks_exact(32) {
        let mut codes = [0u8; 32];
        let mut scales = [0u8; 2];
        for (h, sixteen) in b.chunks_exact(16).enumerate() {
            let amax = sixteen.iter().fold(0f32, |a, v| a.max(v.abs()));
            scales[h] = float8::F8E4M3::from_f32(amax / 6.0).to_bits();
            let unit = crate::floatlinear::e4m3(scales[h]);
            for (k, v) in sixteen.iter().enumerate() {
                codes[16 * h + k] = (0..16u8)
                    .min_by(|&a, &c| {
                        (E2M1[a as usize] * unit - v)
                            .abs()
                            .total_cmp(&(E2M1[c as usize] * unit - v).abs())
                    })
                    .unwrap();
                values.push(E2M1[codes[16 * h + k] as usize] * unit);
            }
        }
        bytes.extend(scales);
        bytes.extend((0..16).map(|i| codes[i] | codes[i + 16] << 4));
    }
    (bytes, values)
}

/// `w` [out, n] in 4-bit groups of `size` (`Block::Int4G128`, `Int4G64`), each group's d and m its range
/// over 15 and its minimum, in f16, each value the nearest code; and the values those
/// hold, d·q + m.
fn int4_groups(w: &[f32], size: usize) -> (Vec<u8>, Vec<f32>) {
    let (mut bytes, mut values) = (vec![], vec![]);
    for g in w.chunks_exact(size) {
        let (lo, hi) = g
            .iter()
            .fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
        let d = f16::from_f32((hi - lo) / 15.0);
        let m = f16::from_f32(lo);
        let (df, mf) = (d.to_f32(), m.to_f32());
        let q: Vec<u8> = g
            .iter()
            .map(|v| ((v - mf) / df).round().clamp(0.0, 15.0) as u8)
            .collect();
        bytes.extend(d.to_le_bytes());
        bytes.extend(m.to_le_bytes());
        for run in q.chunks_exact(32) {
            bytes.extend((0..16).map(|j| run[j] | run[j + 16] << 4));
        }
        values.extend(q.iter().map(|&q| df * q as f32 + mf));
    }
    (bytes, values)
}

/// `w` [out, n] in a table format of 32 (`Block::Iq4Nl`, `Nf4`, `Fp4`): each block's d its
/// largest magnitude over the largest level, in f16, each value the nearest level; and the
/// values those hold.
fn table32(block: Block, w: &[f32]) -> (Vec<u8>, Vec<f32>) {
    let levels = block.levels().unwrap();
    let top = levels.iter().map(|l| l.unsigned_abs()).max().unwrap() as f32;
    let (mut bytes, mut values) = (vec![], vec![]);
    for b in w.chunks_exact(32) {
        let amax = b.iter().fold(0f32, |a, v| a.max(v.abs()));
        let d = f16::from_f32(amax / top);
        let codes = nearest_levels(b, levels, d.to_f32());
        bytes.extend(d.to_le_bytes());
        bytes.extend((0..16).map(|i| codes[i] | codes[i + 16] << 4));
        values.extend(
            codes
                .iter()
                .map(|&c| d.to_f32() * levels[c as usize] as f32),
        );
    }
    (bytes, values)
}

/// `w` [out, n] in IQ4_XS's super-blocks of 256: d the largest block magnitude over
/// 127 · 31, each block's scale the nearest that covers it, each value the nearest level.
fn iq4_xs(w: &[f32]) -> (Vec<u8>, Vec<f32>) {
    let (mut bytes, mut values) = (vec![], vec![]);
    for sb in w.chunks_exact(256) {
        let amax = sb.iter().fold(0f32, |a, v| a.max(v.abs()));
        let d = f16::from_f32(amax / (127.0 * 31.0));
        let (mut high, mut low, mut qs) = (0u16, [0u8; 4], vec![]);
        for (k, b) in sb.chunks_exact(32).enumerate() {
            let bmax = b.iter().fold(0f32, |a, v| a.max(v.abs()));
            let ls = if d.to_f32() > 0.0 {
                ((bmax / 127.0 / d.to_f32()).round() as i32 + 32).clamp(0, 63)
            } else {
                32
            };
            low[k / 2] |= ((ls & 15) as u8) << (4 * (k % 2));
            high |= ((ls >> 4) as u16) << (2 * k);
            let dl = d.to_f32() * (ls - 32) as f32;
            let codes = nearest_levels(b, &IQ4NL, dl);
            qs.extend((0..16).map(|i| codes[i] | codes[i + 16] << 4));
            values.extend(codes.iter().map(|&c| dl * IQ4NL[c as usize] as f32));
        }
        bytes.extend(d.to_le_bytes());
        bytes.extend(high.to_le_bytes());
        bytes.extend(low);
        bytes.extend(qs);
    }
    (bytes, values)
}

/// `w` [out, n] as ggml's i-quants hold it (`Block::Int8F32`, or `Int8F32x2` with `by_16`):
/// each 32's (or 16's) scale its largest magnitude over 62 (IQ3_XXS's largest grid value),
/// each value the nearest integer times it; and the values those hold.
fn int8(w: &[f32], by_16: bool) -> (Block, Vec<u8>, Vec<f32>) {
    let span = if by_16 { 16 } else { 32 };
    let mut held = anatomy_checkpoint::dequant::Integers {
        codes: vec![],
        scales: vec![],
    };
    for run in w.chunks_exact(span) {
        let d = run.iter().fold(0f32, |a, v| a.max(v.abs())) / 62.0;
        held.codes.extend(run.iter().map(|v| (v / d).round() as i8));
        held.scales.extend(std::iter::repeat_n(d, span / 16));
    }
    let (block, bytes) = int8_blocks(&held, by_16);
    (block, bytes, held.values())
}

/// `w` [out, n] in INT8_F32_MIN blocks: each 32's d its range over 255 and m its minimum plus
/// 128·d, each value the nearest code from −128 to 127; and the values those hold, d·q + m.
fn int8_min(w: &[f32]) -> (Vec<u8>, Vec<f32>) {
    let (mut bytes, mut values) = (vec![], vec![]);
    for run in w.chunks_exact(32) {
        let (lo, hi) = (run.iter()).fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
        let d = ((hi - lo) / 255.0).max(f32::MIN_POSITIVE);
        let m = lo + 128.0 * d;
        let q: Vec<i8> = (run.iter())
            .map(|v| ((v - m) / d).round().clamp(-128.0, 127.0) as i8)
            .collect();
        bytes.extend(d.to_le_bytes().into_iter().chain(m.to_le_bytes()));
        bytes.extend(q.iter().map(|&q| q as u8));
        values.extend(q.iter().map(|&q| d * q as f32 + m));
    }
    (bytes, values)
}

/// `w` [out, n] in TQ2_0's super-blocks: d the largest magnitude, each value the nearest of
/// −d, 0 and d; and the values those hold.
fn tq2_0(w: &[f32]) -> (Vec<u8>, Vec<f32>) {
    let (mut bytes, mut values) = (vec![], vec![]);
    for sb in w.chunks_exact(256) {
        let d = f16::from_f32(sb.iter().fold(0f32, |a, v| a.max(v.abs())));
        let digit = |v: f32| ((v / d.to_f32()).round().clamp(-1.0, 1.0) + 1.0) as u8;
        let mut qs = [0u8; 64];
        for (i, &v) in sb.iter().enumerate() {
            qs[32 * (i / 128) + i % 32] |= digit(v) << (2 * (i % 128 / 32));
        }
        bytes.extend(qs);
        bytes.extend(d.to_le_bytes());
        values.extend(sb.iter().map(|&v| d.to_f32() * (digit(v) as f32 - 1.0)));
    }
    (bytes, values)
}

/// The code of the level nearest each value of `b`, the levels times `d`.
fn nearest_levels(b: &[f32], levels: &[i8; 16], d: f32) -> Vec<u8> {
    let err = |c: u8, v: f32| (levels[c as usize] as f32 * d - v).abs();
    b.iter()
        .map(|&v| {
            (0..16u8)
                .min_by(|&a, &c| err(a, v).total_cmp(&err(c, v)))
                .unwrap()
        })
        .collect()
}

/// MXFP4's codes' values, as the format defines them (not doubled).
const E2M1: [f32; 16] = [
    0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0,
];

/// `w` [out, n] in MXFP4 as gpt-oss stores it ([out, n/32, 16] bytes, [out, n/32] scales),
/// each block's scale the power of two that brings its largest value within 6, each value
/// the nearest code; and the values those hold, code · 2^(e − 127) as transformers
/// dequantizes them.
fn mxfp4(w: &[f32]) -> (Vec<u8>, Vec<u8>, Vec<f32>) {
    let (mut blocks, mut scales, mut values) = (vec![], vec![], vec![]);
    for b in w.chunks_exact(32) {
        let amax = b.iter().fold(0f32, |a, v| a.max(v.abs()));
        let e = ((amax / 6.0).log2().ceil() as i32 + 127).clamp(0, 254);
        let unit = 2f32.powi(e - 127);
        let codes: Vec<u8> = b
            .iter()
            .map(|v| {
                (0..16u8)
                    .min_by(|&a, &c| {
                        (E2M1[a as usize] * unit - v)
                            .abs()
                            .total_cmp(&(E2M1[c as usize] * unit - v).abs())
                    })
                    .unwrap()
            })
            .collect();
        blocks.extend(codes.chunks_exact(2).map(|p| p[0] | (p[1] << 4)));
        scales.push(e as u8);
        values.extend(codes.iter().map(|&c| E2M1[c as usize] * unit));
    }
    (blocks, scales, values)
}

/// `w` [out, n] quantized by candle (ggml's reference quantizers), or for anatomy's own and
/// the formats candle lacks by the quantizers above, as stored, and its dequantized values.
fn stored(b: Block, w: Vec<f32>, out: usize, n: usize) -> (QLinear, Vec<f32>) {
    if matches!(b, Block::Int4G128 | Block::Int4G64 | Block::Nvfp4) {
        let (bytes, values) = if b == Block::Nvfp4 {
            nvfp4(&w)
        } else {
            int4_groups(&w, b.values())
        };
        return (QLinear::new(b, bytes, out, n).unwrap(), values);
    }
    if matches!(b, Block::Iq4Nl | Block::Nf4 | Block::Fp4 | Block::Iq4Xs) {
        let (bytes, values) = match b {
            Block::Iq4Xs => iq4_xs(&w),
            _ => table32(b, &w),
        };
        return (QLinear::new(b, bytes, out, n).unwrap(), values);
    }
    if b == Block::Tq2_0 {
        let (bytes, values) = tq2_0(&w);
        return (QLinear::new(b, bytes, out, n).unwrap(), values);
    }
    if b == Block::Int8F32Min {
        let (bytes, values) = int8_min(&w);
        return (QLinear::new(b, bytes, out, n).unwrap(), values);
    }
    if matches!(b, Block::Int8F32 | Block::Int8F32x2) {
        let (held, bytes, values) = int8(&w, b == Block::Int8F32x2);
        assert_eq!(held, b);
        return (QLinear::new(b, bytes, out, n).unwrap(), values);
    }
    if b == Block::Mxfp4 {
        let (blocks, scales, values) = mxfp4(&w);
        return (
            QLinear::new(b, mxfp4_blocks(&blocks, &scales), out, n).unwrap(),
            values,
        );
    }
    let t = Tensor::from_vec(w, (out, n), &Device::Cpu).unwrap();
    let q = QTensor::quantize(&t, dtype(b)).unwrap();
    let wd = q
        .dequantize(&Device::Cpu)
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1()
        .unwrap();
    (
        QLinear::new(b, q.data().unwrap().into_owned(), out, n).unwrap(),
        wd,
    )
}

/// Every format on `paths` (the scalar one first), against a double-precision product with
/// the weights as stored (candle's dequantization, ggml's reference): x is quantized to 8
/// bits per block, each value within max|x| / 254 of itself and its scale within f16
/// rounding (2⁻¹¹ of it, or 2⁻²⁵ where the scale is an f16 subnormal, below 2⁻¹⁴: x's
/// blocks smaller than 127 · 2⁻¹⁴ ≈ 0.0078), so each output is within (max|x| · (1/254 +
/// 2⁻¹¹) + 127 · 2⁻²⁵) · Σ|w| (plus f32 rounding) of the exact one; AVX-512 prompts hold x
/// in two bytes, each value within
/// max|x| / (127·256), so within max|x| · Σ|w| / 32512. The paths with 8-bit x have the same
/// integer sums, so they agree with the scalar path to the rounding of f32 sums taken in
/// another order.
fn check_products(
    paths: &[Path],
    m: usize,
    out: usize,
    blocks: usize,
    seed: u64,
    spread: f32,
) -> Result<(), TestCaseError> {
    for block in Block::ALL {
        let n = block.values() * blocks;
        let x = crate::uniform(seed, m * n, spread);
        let (q, wd) = stored(block, crate::uniform(seed + 1, out * n, 1.0), out, n);
        let xmax = x.iter().fold(0f64, |a, v| a.max(v.abs() as f64));
        let mut first: Option<Vec<f32>> = None;
        for &path in paths {
            // A prompt's activations unquantized (AVX-512's tiles, every other path's f32).
            let tiled = m >= PROMPT;
            let mut y = vec![0f32; m * out];
            q.product(path, &x, m, &mut y);
            for i in 0..m {
                for o in 0..out {
                    let row = &wd[o * n..(o + 1) * n];
                    let want: f64 = (0..n).map(|c| x[i * n + c] as f64 * row[c] as f64).sum();
                    let mass: f64 = row.iter().map(|v| v.abs() as f64).sum();
                    let rounding = 2e-5 * mass * xmax;
                    let (per, subnormal) = match tiled {
                        true => (1.0 / 32512.0, 0.0),
                        false => (1.0 / 254.0 + 1.0 / 2048.0, 127.0 * 2f64.powi(-25)),
                    };
                    let tol = (xmax * per + subnormal) * mass * 1.01 + rounding;
                    let got = y[i * out + o] as f64;
                    prop_assert!((got - want).abs() <= tol,
                        "{block:?} on {path:?}, [{i},{o}] of {m}×{out}×{n}: {got} vs {want} (tolerance {tol})");
                }
            }
            if path == Path::Avx512 && tiled {
                continue;
            }
            if let Some(first) = &first {
                // f32 sums in another order: within a few ulps of the terms' magnitude.
                let terms = xmax * wd.iter().fold(0f64, |a, v| a.max(v.abs() as f64)) * n as f64;
                for (a, b) in first.iter().zip(&y) {
                    prop_assert!(
                        ((a - b).abs() as f64) <= 1e-6 * terms,
                        "{block:?} on {path:?}: {b} vs scalar {a}"
                    );
                }
            } else {
                first = Some(y);
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn products_on_the_scalar_path(
        m in 1usize..7, out in 1usize..20, blocks in 1usize..6, seed in 0u64..10_000,
        spread in prop_oneof![Just(1.0f32), Just(1e-3), Just(40.0)],
    ) {
        check_products(&[Path::Scalar], m, out, blocks, seed, spread)?;
    }

    #[test]
    #[cfg_attr(not(cpu_avx2), ignore = "this CPU has no AVX2, FMA and F16C: the kernels' AVX2 path is not checked here")]
    fn products_on_the_avx2_path(
        m in 1usize..7, out in 1usize..20, blocks in 1usize..6, seed in 0u64..10_000,
        spread in prop_oneof![Just(1.0f32), Just(1e-3), Just(40.0)],
    ) {
        check_products(&[Path::Scalar, Path::Avx2], m, out, blocks, seed, spread)?;
    }

    #[test]
    #[cfg_attr(not(cpu_avx512), ignore = "this CPU has no AVX-512 F, BW and VNNI: the kernels' AVX-512 path is not checked here")]
    fn products_on_the_avx512_path(
        // Past 8 rows the prompt tiles repeat, with every remainder after them.
        m in 1usize..20, out in 1usize..20, blocks in 1usize..6, seed in 0u64..10_000,
        spread in prop_oneof![Just(1.0f32), Just(1e-3), Just(40.0)],
    ) {
        check_products(&[Path::Scalar, Path::Avx512], m, out, blocks, seed, spread)?;
    }

    /// The unpacked integers and scales give back exactly ggml's dequantized values, on
    /// every path, for any bytes (a hostile file's included).
    #[test]
    fn unpacking_any_bytes_gives_ggml_values(seed in 0u64..10_000, blocks in 1usize..5) {
        for block in Block::ALL {
            let len = blocks * block.bytes();
            let mut s = seed;
            let mut bytes: Vec<u8> = (0..len).map(|_| { s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); (s >> 56) as u8 }).collect();
            // Finite f16 scales (their high bytes below 0x3c): a NaN would compare unequal to
            // itself. Q3_K's and Q6_K's d end their blocks; the others' d (and m) lead them.
            let high: &[usize] = match block {
                Block::Q3K => &[109],
                Block::Q6K => &[209],
                Block::Tq2_0 => &[65],
                Block::Mxfp4 | Block::Nvfp4 => &[],
                // f32 scales: their high bytes below 0x3c, exponents below 0x78.
                Block::Int8F32 => &[3],
                Block::Int8F32x2 | Block::Int8F32Min => &[3, 7],
                _ => &[1, 3],
            };
            for b in bytes.chunks_exact_mut(block.bytes()) {
                for &i in high {
                    b[i] &= 0x3b;
                }
                // e8m0's 0xFF is NaN in the MX specification (transformers' ldexp makes it
                // infinite): not a scale to compare.
                if block == Block::Mxfp4 {
                    b[0] = b[0].min(254);
                }
                // Nor is e4m3's 0x7F or 0xFF.
                if block == Block::Nvfp4 {
                    b[0] &= 0xFE;
                    b[1] &= 0xFE;
                }
            }
            let n = blocks * block.values();
            let q = QLinear::new(block, bytes.clone(), 1, n).unwrap();
            let want: Vec<f32> = q.rows(&[0]).unwrap().flatten_all().unwrap().to_vec1().unwrap();
            let ggml: Vec<f32> = if block == Block::Nvfp4 {
                // code · e4m3 scale of its 16, the low nibbles first.
                bytes.chunks_exact(18).flat_map(|b| {
                    (0..32).map(move |i| {
                        let code = (b[2 + i % 16] >> (4 * (i / 16))) & 15;
                        E2M1[code as usize] * crate::floatlinear::e4m3(b[i / 16])
                    })
                }).collect()
            } else if matches!(block, Block::Int4G128 | Block::Int4G64) {
                // d·q + m, the runs of 32 in Q4_1's order: the low nibbles, then the high.
                let h = |b: &[u8], i: usize| f16::from_le_bytes([b[i], b[i + 1]]).to_f32();
                let values = block.values();
                bytes.chunks_exact(block.bytes()).flat_map(|b| {
                    (0..values).map(move |i| {
                        let byte = b[4 + 16 * (i / 32) + i % 16];
                        h(b, 0) * ((byte >> (4 * (i % 32 / 16))) & 15) as f32 + h(b, 2)
                    })
                }).collect()
            } else if let Some(id) = [(Block::Iq4Nl, 20), (Block::Iq4Xs, 23), (Block::Tq2_0, 35)].iter().find(|b| b.0 == block).map(|b| b.1) {
                anatomy_checkpoint::dequant::dequantize(id, &bytes).unwrap()
            } else if matches!(block, Block::Nf4 | Block::Fp4) {
                // d · level in IQ4_NL's order: the low nibbles, then the high ones.
                let levels = if block == Block::Nf4 { NF4_LEVELS } else { FP4_LEVELS };
                bytes.chunks_exact(18).flat_map(|b| {
                    let d = f16::from_le_bytes([b[0], b[1]]).to_f32();
                    (0..32).map(move |i| d * levels[((b[2 + i % 16] >> (4 * (i / 16))) & 15) as usize] as f32)
                }).collect()
            } else if block == Block::Int8F32Min {
                // d · the byte as an integer + m.
                bytes.chunks_exact(40).flat_map(|b| {
                    let f = move |i: usize| f32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
                    (0..32).map(move |i| f(0) * b[8 + i] as i8 as f32 + f(4))
                }).collect()
            } else if matches!(block, Block::Int8F32 | Block::Int8F32x2) {
                // The f32 scale of each 32 (or 16) values times each byte as an integer.
                let scales = if block == Block::Int8F32 { 1 } else { 2 };
                bytes.chunks_exact(block.bytes()).flat_map(|b| {
                    (0..32).map(move |i| {
                        let s = 4 * (i * scales / 32);
                        f32::from_le_bytes([b[s], b[s + 1], b[s + 2], b[s + 3]]) * b[4 * scales + i] as i8 as f32
                    })
                }).collect()
            } else if block == Block::Mxfp4 {
                // code · 2^(e − 127) in ggml's order: the low nibbles, then the high ones.
                bytes.chunks_exact(17).flat_map(|b| {
                    let unit = 2f64.powi(b[0] as i32 - 127) as f32;
                    (0..32).map(move |i| E2M1[((b[1 + i % 16] >> (4 * (i / 16))) & 15) as usize] * unit)
                }).collect()
            } else {
                let storage = candle_core::quantized::QStorage::from_data(std::borrow::Cow::Owned(bytes), &Device::Cpu, dtype(block)).unwrap();
                QTensor::new(storage, (1, n)).unwrap().dequantize(&Device::Cpu).unwrap().flatten_all().unwrap().to_vec1().unwrap()
            };
            prop_assert_eq!(&want, &ggml, "{:?}", block);
            for &path in Path::available() {
                let mut u = Unpacked::new(n / QK);
                u.fill(path, block, q.row(0));
                let got: Vec<f32> = (0..n).map(|k| u.d[k / 16] * u.q[k] as f32 + u.m[k / QK]).collect();
                prop_assert_eq!(&got, &ggml, "{:?} on {:?}", block, path);
            }
        }
    }
}

/// The NF4 and FP4 levels are bitsandbytes' code books (`get_4bit_type`) times 127 and
/// 120, rounded.
#[test]
fn the_code_book_levels_are_bitsandbytes_rounded() {
    let fp4 = [0.0, 0.0625, 8.0, 12.0, 4.0, 6.0, 2.0, 3.0].map(|v: f32| v / 12.0);
    for (c, &v) in block::NF4_BOOK.iter().enumerate() {
        assert_eq!(NF4_LEVELS[c], (v * 127.0).round() as i8);
    }
    for (c, &v) in fp4.iter().enumerate() {
        assert_eq!(FP4_LEVELS[c], (v * 120.0).round() as i8);
        assert_eq!(FP4_LEVELS[c + 8], -FP4_LEVELS[c]);
    }
}

#[test]
fn a_weight_of_the_wrong_size_is_refused() {
    assert!(QLinear::new(Block::Q4_0, vec![0; 17], 1, 32).is_err());
    assert!(QLinear::new(Block::Q4_0, vec![0; 18], 1, 33).is_err());
    assert!(QLinear::new(Block::Q8_0, vec![0; 68], 2, 32).is_ok());
}

/// ggml's i-quants and ternary types that no kernel here indexes, held as int8 blocks, give
/// back the values ggml's dequantization gives any of their blocks
/// (`dequant`'s fixture checks those against ggml itself), a 16's scale where one covers 16.
#[test]
fn i_quants_held_as_int8_keep_their_values() {
    use anatomy_checkpoint::dequant::{dequantize, integers, scales_by_16, TYPES};
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut byte = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 56) as u8
    };
    for (id, name) in TYPES.into_iter().filter(|t| Block::of_ggml(t.0).is_none()) {
        let (_, size) = anatomy_checkpoint::gguf_header::block_layout(id).unwrap();
        let data: Vec<u8> = (0..3 * size).map(|_| byte()).collect();
        let (block, bytes) = int8_blocks(&integers(id, &data).unwrap(), scales_by_16(id));
        assert_eq!(block == Block::Int8F32x2, scales_by_16(id), "{name}");
        let want = dequantize(id, &data).unwrap();
        let q = QLinear::new(block, bytes, 1, want.len()).unwrap();
        let got: Vec<f32> = q
            .rows(&[0])
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1()
            .unwrap();
        // Equal, or the same bits (a NaN scale's); −0 where rows adds a zero minimum, +0.
        for (i, (a, b)) in got.iter().zip(&want).enumerate() {
            assert!(a == b || a.to_bits() == b.to_bits(), "{name} {i}: {a} {b}");
        }
        assert_eq!(got.len(), want.len());
    }
}
