//! The GGUF block formats `QLinear` multiplies: their sizes, and each block decoded into 32
//! signed bytes with its scales (the one place that knows a format's bit layout).

use super::QK;
use half::f16;

/// A GGUF block format this module multiplies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Block {
    Q4_0,
    Q4_1,
    Q5_0,
    Q5_1,
    Q8_0,
    Q3K,
    Q4K,
    Q5K,
    Q6K,
    Mxfp4,
    /// 4-bit integers in groups of 128 with an f16 scale d and minimum m each (w = d·q + m),
    /// then the groups' four 32-value runs in Q4_1's nibble order: 68 bytes a group, 4.25 bits
    /// a weight. Not a GGUF type: GPTQ's, AWQ's and compressed-tensors' asymmetric int4 in
    /// their common group of 128, held as stored (Q4_1 would repeat each group's scale and
    /// minimum four times: 80 bytes, 18 % more to read in a decode step).
    Int4G128,
    /// INT4_G128's twin in groups of 64 (36 bytes a group, 4.5 bits a weight): MLX's default
    /// groups, asymmetric GPTQ's and AWQ's groups of 64 (Q4_1 would repeat each group's scale
    /// and minimum twice: 40 bytes).
    Int4G64,
    /// NVFP4 (compressed-tensors' `nvfp4-pack-quantized`): e2m1 codes with an fp8 e4m3 scale for
    /// each 16, in blocks of 32: the two scales' bytes, then the codes in MXFP4's order (18
    /// bytes, 4.5 bits a weight). Its values doubled are MXFP4's integers and its scales halved
    /// d; the matrix's global scale is `QLinear::scaled`'s.
    Nvfp4,
    /// IQ4_NL: 32 values, an f16 d, then nibbles (Q4_0's order) indexing sixteen non-linear
    /// levels from −127 to 113 (ggml's `kvalues_iq4nl`).
    Iq4Nl,
    /// IQ4_XS: IQ4_NL's levels in super-blocks of 256, an f16 d, then a 6-bit scale less 32 for
    /// each 32 (two high bits of each in a u16, four low in 4 bytes), then 128 bytes of nibbles
    /// (136 bytes, 4.25 bits a weight).
    Iq4Xs,
    /// bitsandbytes' NF4 code book in IQ4_NL's layout: its sixteen levels times 127, rounded
    /// (`NF4_LEVELS`), d its block's absmax over 127. Not a GGUF type: the levels are within
    /// 0.5 of the book's (0.4 % of the absmax), the price of integer sums.
    Nf4,
    /// bitsandbytes' FP4 code book the same way, times 120 (`FP4_LEVELS`: every level but
    /// ±0.0625/12 an integer so), d the absmax over 120.
    Fp4,
    /// TQ2_0: ternary values in super-blocks of 256, four 2-bit digits a byte (value 32j + i of
    /// each 128 in bits 2j of byte i), then an f16 d (66 bytes, 2.06 bits a weight).
    Tq2_0,
    /// 32 int8 values after an f32 scale for them all (36 bytes, 9 bits a weight). Not a GGUF
    /// type: the i-quants and ternary types whose grids no kernel here indexes (IQ1_S,
    /// IQ2_XXS, IQ3_XXS, IQ3_S, TQ1_0), their values being small integers times a scale
    /// (`dequant::integers`), held exactly so: 9 bits where bf16 took 16, and none rounded.
    Int8F32,
    /// `Int8F32` with an f32 scale for each 16 (40 bytes): IQ1_M, IQ2_XS and IQ2_S.
    Int8F32x2,
    /// 32 int8 values after an f32 scale d and minimum m (w = d·q + m; 40 bytes, 10 bits a
    /// weight). Not a GGUF type: affine codes of widths other than 4 (MLX's 2, 3, 5, 6 and 8
    /// bits, GPTQ's 2, 3 and asymmetric 8), 8-bit ones less 128 (m taking the 128 back).
    Int8F32Min,
}

/// bitsandbytes' NF4 code book (`get_4bit_type("nf4")`), for the tests of its rounded levels.
#[cfg(test)]
pub(crate) const NF4_BOOK: [f32; 16] = [
    -1.0, -0.6961928, -0.5250731, -0.3949175, -0.2844414, -0.1847734, -0.09105, 0.0, 0.0795803,
    0.1609302, 0.2461123, 0.3379152, 0.4407098, 0.562617, 0.7229568, 1.0,
];

/// bitsandbytes' NF4 levels (`get_4bit_type("nf4")`) times 127, rounded.
pub const NF4_LEVELS: [i8; 16] = [
    -127, -88, -67, -50, -36, -23, -12, 0, 10, 20, 31, 43, 56, 71, 92, 127,
];

/// bitsandbytes' FP4 levels (`get_4bit_type("fp4")`: 0, 0.0625, 8, 12, 4, 6, 2, 3 and their
/// negatives, over 12) times 120, rounded: 0.0625 · 10 to 1, the rest exact.
pub const FP4_LEVELS: [i8; 16] = [
    0, 1, 80, 120, 40, 60, 20, 30, 0, -1, -80, -120, -40, -60, -20, -30,
];

impl Block {
    pub const ALL: [Block; 21] = [
        Block::Q4_0,
        Block::Q4_1,
        Block::Q5_0,
        Block::Q5_1,
        Block::Q8_0,
        Block::Q3K,
        Block::Q4K,
        Block::Q5K,
        Block::Q6K,
        Block::Mxfp4,
        Block::Int4G128,
        Block::Int4G64,
        Block::Nvfp4,
        Block::Iq4Nl,
        Block::Iq4Xs,
        Block::Nf4,
        Block::Fp4,
        Block::Tq2_0,
        Block::Int8F32,
        Block::Int8F32x2,
        Block::Int8F32Min,
    ];

    /// Bytes of one stored block.
    pub fn bytes(self) -> usize {
        match self {
            Block::Q4_0 => 18,
            Block::Q4_1 => 20,
            Block::Q5_0 => 22,
            Block::Q5_1 => 24,
            Block::Q8_0 => 34,
            Block::Q3K => 110,
            Block::Q4K => 144,
            Block::Q5K => 176,
            Block::Q6K => 210,
            Block::Mxfp4 => 17,
            Block::Int4G128 => 68,
            Block::Int4G64 => 36,
            Block::Nvfp4 | Block::Iq4Nl | Block::Nf4 | Block::Fp4 => 18,
            Block::Iq4Xs => 136,
            Block::Tq2_0 => 66,
            Block::Int8F32 => 36,
            Block::Int8F32x2 | Block::Int8F32Min => 40,
        }
    }

    /// The format's name as GGUF tools write it (`INT4_G128`, not a GGUF type, as anatomy's).
    pub fn name(self) -> &'static str {
        match self {
            Block::Q4_0 => "Q4_0",
            Block::Q4_1 => "Q4_1",
            Block::Q5_0 => "Q5_0",
            Block::Q5_1 => "Q5_1",
            Block::Q8_0 => "Q8_0",
            Block::Q3K => "Q3_K",
            Block::Q4K => "Q4_K",
            Block::Q5K => "Q5_K",
            Block::Q6K => "Q6_K",
            Block::Mxfp4 => "MXFP4",
            Block::Int4G128 => "INT4_G128",
            Block::Int4G64 => "INT4_G64",
            Block::Nvfp4 => "NVFP4",
            Block::Iq4Nl => "IQ4_NL",
            Block::Iq4Xs => "IQ4_XS",
            Block::Nf4 => "NF4",
            Block::Fp4 => "FP4",
            Block::Tq2_0 => "TQ2_0",
            Block::Int8F32 => "INT8_F32",
            Block::Int8F32x2 => "INT8_F32x2",
            Block::Int8F32Min => "INT8_F32_MIN",
        }
    }

    /// Values of one stored block.
    pub fn values(self) -> usize {
        match self {
            Block::Q3K | Block::Q4K | Block::Q5K | Block::Q6K | Block::Iq4Xs | Block::Tq2_0 => 256,
            Block::Int4G128 => 128,
            Block::Int4G64 => 64,
            Block::Q4_0
            | Block::Q4_1
            | Block::Q5_0
            | Block::Q5_1
            | Block::Q8_0
            | Block::Mxfp4
            | Block::Nvfp4
            | Block::Iq4Nl
            | Block::Nf4
            | Block::Fp4
            | Block::Int8F32
            | Block::Int8F32x2
            | Block::Int8F32Min => QK,
        }
    }

    /// Blocks store a minimum m besides the scale d (their integers are unsigned but
    /// INT8_F32_MIN's).
    pub(crate) fn has_min(self) -> bool {
        matches!(
            self,
            Block::Q4_1
                | Block::Q5_1
                | Block::Q4K
                | Block::Q5K
                | Block::Int4G128
                | Block::Int4G64
                | Block::Int8F32Min
        )
    }

    /// The format of candle's dtype, if it is one of these.
    pub fn of(t: candle_core::quantized::GgmlDType) -> Option<Block> {
        use candle_core::quantized::GgmlDType as G;
        Some(match t {
            G::Q4_0 => Block::Q4_0,
            G::Q4_1 => Block::Q4_1,
            G::Q5_0 => Block::Q5_0,
            G::Q5_1 => Block::Q5_1,
            G::Q8_0 => Block::Q8_0,
            G::Q3K => Block::Q3K,
            G::Q4K => Block::Q4K,
            G::Q5K => Block::Q5K,
            G::Q6K => Block::Q6K,
            _ => return None,
        })
    }

    /// The format of ggml's type number `id` among those candle does not read.
    pub fn of_ggml(id: u32) -> Option<Block> {
        Some(match id {
            20 => Block::Iq4Nl,
            23 => Block::Iq4Xs,
            35 => Block::Tq2_0,
            39 => Block::Mxfp4,
            _ => return None,
        })
    }

    /// The sixteen levels a table format's nibbles index.
    pub(crate) fn levels(self) -> Option<&'static [i8; 16]> {
        match self {
            Block::Iq4Nl | Block::Iq4Xs => Some(&IQ4NL),
            Block::Nf4 => Some(&NF4_LEVELS),
            Block::Fp4 => Some(&FP4_LEVELS),
            Block::Mxfp4 | Block::Nvfp4 => Some(&MXFP4_DOUBLED),
            Block::Q4_0
            | Block::Q4_1
            | Block::Q5_0
            | Block::Q5_1
            | Block::Q8_0
            | Block::Q3K
            | Block::Q4K
            | Block::Q5K
            | Block::Q6K
            | Block::Int4G128
            | Block::Int4G64
            | Block::Tq2_0
            | Block::Int8F32
            | Block::Int8F32x2
            | Block::Int8F32Min => None,
        }
    }

    /// Values 32j..32j + 32 of the stored `row` as integers q, w = d·q + m with d for each 16
    /// values, and ([d, d], m), in ggml's dequantize_row_* order: in the 32-value formats the
    /// low nibbles are values 0..16 and the high ones 16..32, Q5's fifth bits bit i of qh; a
    /// Q4_K super-block's 32-value blocks take the low then the high nibbles of 32 bytes,
    /// d·scale and −dmin·min from their 6-bit pairs (get_scale_min_k4); a Q6_K one's, in each
    /// half of 128, four bits of ql (low nibbles of bytes 0..32, 32..64, then high ones) and
    /// two of qh (bits 0, 2, 4, 6), less 32, d·scale for each 16.
    pub(super) fn decode(self, row: &[u8], j: usize, q: &mut [i8]) -> ([f32; 2], f32) {
        let h = |b: &[u8], i: usize| f16::from_le_bytes([b[i], b[i + 1]]).to_f32();
        // The stored block that holds values 32j.., and block k of the eight of 32 it holds.
        let per = self.values() / QK;
        let (b, k) = (&row[j / per * self.bytes()..][..self.bytes()], j % per);
        match self {
            Block::Q3K => {
                let (half, g) = (k / 4, k % 4);
                let (hm, qs) = (&b[..32], &b[32 + 32 * half..][..32]);
                for ((q, &l), &h) in q.iter_mut().zip(qs).zip(hm) {
                    let high = (h >> (4 * half + g)) & 1;
                    *q = ((l >> (2 * g)) & 3) as i8 - if high == 1 { 0 } else { 4 };
                }
                let (d, i) = (h(b, 108), 8 * half + 2 * g);
                let sc = &b[96..108];
                ([d * q3k_scale(sc, i), d * q3k_scale(sc, i + 1)], 0.0)
            }
            Block::Q6K => {
                let (half, g) = (k / 4, k % 4);
                let ql = &b[64 * half + 32 * (g & 1)..][..32];
                let qh = &b[128 + 32 * half..][..32];
                for ((q, &l), &hb) in q.iter_mut().zip(ql).zip(qh) {
                    let low = if g >= 2 { l >> 4 } else { l & 15 };
                    *q = (low | (((hb >> (2 * g)) & 3) << 4)) as i8 - 32;
                }
                let sc = |i: usize| b[192 + 8 * half + 2 * g + i] as i8 as f32;
                let d = h(b, 208);
                ([d * sc(0), d * sc(1)], 0.0)
            }
            Block::Q4K | Block::Q5K => {
                let (s, m) = k4_scale_min(&b[4..16], k);
                // Q5_K's fifth bits: bit k of each of qh's 32 bytes, before the nibbles.
                let (qs, qh) = if self == Block::Q5K {
                    (&b[48 + 32 * (k / 2)..][..32], Some(&b[16..48]))
                } else {
                    (&b[16 + 32 * (k / 2)..][..32], None)
                };
                let shift = 4 * (k % 2);
                for (l, (q, &v)) in q.iter_mut().zip(qs).enumerate() {
                    let five = qh.map_or(0, |h| ((h[l] >> k) & 1) << 4);
                    *q = (((v >> shift) & 15) | five) as i8;
                }
                let d = h(b, 0) * s as f32;
                ([d, d], -h(b, 2) * m as f32)
            }
            Block::Mxfp4 => {
                level_codes(&b[1..17], &MXFP4_DOUBLED, q);
                ([e8m0_half(b[0]); 2], 0.0)
            }
            Block::Nvfp4 => {
                level_codes(&b[2..18], &MXFP4_DOUBLED, q);
                ([e4m3(b[0]) * 0.5, e4m3(b[1]) * 0.5], 0.0)
            }
            Block::Iq4Nl | Block::Nf4 | Block::Fp4 => {
                level_codes(&b[2..18], self.levels().expect("a table format"), q);
                ([h(b, 0); 2], 0.0)
            }
            Block::Iq4Xs => {
                level_codes(&b[8 + 16 * k..][..16], &IQ4NL, q);
                let d = h(b, 0) * iq4xs_scale(b, k) as f32;
                ([d, d], 0.0)
            }
            Block::Q8_0 => {
                for (q, &v) in q.iter_mut().zip(&b[2..34]) {
                    *q = v as i8;
                }
                ([h(b, 0); 2], 0.0)
            }
            Block::Int8F32 | Block::Int8F32x2 => {
                let scales = if self == Block::Int8F32 { 1 } else { 2 };
                for (q, &v) in q.iter_mut().zip(&b[4 * scales..]) {
                    *q = v as i8;
                }
                ([f32_at(b, 0), f32_at(b, 4 * (scales - 1))], 0.0)
            }
            Block::Tq2_0 => {
                let shift = 2 * (k % 4);
                for (q, &v) in q.iter_mut().zip(&b[32 * (k / 4)..][..32]) {
                    *q = ((v >> shift) & 3) as i8 - 1;
                }
                ([h(b, 64); 2], 0.0)
            }
            Block::Int8F32Min => {
                for (q, &v) in q.iter_mut().zip(&b[8..40]) {
                    *q = v as i8;
                }
                ([f32_at(b, 0); 2], f32_at(b, 4))
            }
            Block::Q4_0 => {
                nibble_block(&b[2..18], 0, 8, q);
                ([h(b, 0); 2], 0.0)
            }
            Block::Q4_1 => {
                nibble_block(&b[4..20], 0, 0, q);
                ([h(b, 0); 2], h(b, 2))
            }
            Block::Int4G128 | Block::Int4G64 => {
                nibble_block(&b[4 + 16 * k..][..16], 0, 0, q);
                ([h(b, 0); 2], h(b, 2))
            }
            Block::Q5_0 => {
                nibble_block(&b[6..22], le32(&b[2..6]), 16, q);
                ([h(b, 0); 2], 0.0)
            }
            Block::Q5_1 => {
                nibble_block(&b[8..24], le32(&b[4..8]), 0, q);
                ([h(b, 0); 2], h(b, 2))
            }
        }
    }
}

/// Values as `Int8F32` blocks, or `Int8F32x2` where a scale covers only 16 (`by_16`): the
/// integers as they are, so that the blocks hold `values()` to the bit.
pub fn int8_blocks(
    values: &anatomy_checkpoint::dequant::Integers,
    by_16: bool,
) -> (Block, Vec<u8>) {
    let block = if by_16 {
        Block::Int8F32x2
    } else {
        Block::Int8F32
    };
    let mut out = Vec::with_capacity(values.codes.len() / QK * block.bytes());
    for (q, d) in values
        .codes
        .chunks_exact(QK)
        .zip(values.scales.chunks_exact(2))
    {
        let scales = if by_16 { d } else { &d[..1] };
        out.extend(scales.iter().flat_map(|s| s.to_le_bytes()));
        out.extend(q.iter().map(|&q| q as u8));
    }
    (block, out)
}

fn f32_at(b: &[u8], i: usize) -> f32 {
    f32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

/// 32 codes' `levels`, the low nibbles first.
fn level_codes(codes: &[u8], levels: &[i8; 16], q: &mut [i8]) {
    for i in 0..16 {
        q[i] = levels[(codes[i] & 15) as usize];
        q[i + 16] = levels[(codes[i] >> 4) as usize];
    }
}

/// The scale of 32-value block k of an IQ4_XS super-block `b`: four low bits from byte 4 + k/2,
/// two high bits from the u16 at byte 2, less 32 (ggml's dequantize_row_iq4_xs).
pub(super) fn iq4xs_scale(b: &[u8], k: usize) -> i32 {
    let low = (b[4 + k / 2] >> (4 * (k % 2))) & 15;
    let high = ((u16::from_le_bytes([b[2], b[3]]) >> (2 * k)) & 3) as u8;
    (low | (high << 4)) as i32 - 32
}

pub(super) fn le32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// The 32 values of a Q4/Q5 block into `q`: low nibbles first, each with bit i of `qh` as its
/// fifth bit (Q5), less `offset`.
pub(super) fn nibble_block(qs: &[u8], qh: u32, offset: i16, q: &mut [i8]) {
    for i in 0..16 {
        let five = |bit: usize| (((qh >> bit) & 1) << 4) as i16;
        q[i] = ((qs[i] & 15) as i16 + five(i) - offset) as i8;
        q[i + 16] = ((qs[i] >> 4) as i16 + five(i + 16) - offset) as i8;
    }
}

/// Scale and minimum of block k of a Q4_K or Q5_K super-block, 6 bits each, from its 12 packed
/// bytes (ggml's get_scale_min_k4).
pub(super) fn k4_scale_min(sc: &[u8], k: usize) -> (u8, u8) {
    if k < 4 {
        (sc[k] & 63, sc[k + 4] & 63)
    } else {
        (
            (sc[k + 4] & 15) | ((sc[k - 4] >> 6) << 4),
            (sc[k + 4] >> 4) | ((sc[k] >> 6) << 4),
        )
    }
}

/// Scale `i` of a Q3_K super-block's 16, from its 12 packed bytes: four low bits from byte i
/// (i < 8) or the high half of byte i − 8, two high bits from byte 8 + i mod 4, less 32
/// (ggml's dequantize_row_q3_K unpacks them into the same values).
pub(super) fn q3k_scale(b: &[u8], i: usize) -> f32 {
    let low = if i < 8 { b[i] & 15 } else { b[i - 8] >> 4 };
    let high = (b[8 + i % 4] >> (2 * (i / 4))) & 3;
    ((low | (high << 4)) as i8 - 32) as f32
}

use crate::floatlinear::e4m3;
pub(crate) use anatomy_checkpoint::dequant::{e8m0_half, IQ4NL, MXFP4_DOUBLED};

/// An MXFP4 weight as gpt-oss's checkpoints store it, [rows, groups, 16] bytes (two values a
/// byte, the low nibble first) and [rows, groups] e8m0 scales, in ggml's block_mxfp4 layout
/// (the scale, then the low nibbles holding values 0..16 and the high ones 16..32).
pub fn mxfp4_blocks(blocks: &[u8], scales: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(scales.len() * 17);
    for (b, &e) in blocks.chunks_exact(16).zip(scales) {
        let code = |i: usize| (b[i / 2] >> (4 * (i % 2))) & 15;
        out.push(e);
        out.extend((0..16).map(|i| code(i) | (code(i + 16) << 4)));
    }
    out
}
