//! ggml's types that candle does not read, dequantized to f32, each as ggml's
//! `dequantize_row_*` computes it: IQ4_NL, IQ4_XS, TQ1_0, TQ2_0, MXFP4, and the i-quants that
//! index lattice grids (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S).

mod grids;

use grids::{Grid, IQ1_DELTA, KSIGNS};
use half::f16;
use std::sync::OnceLock;

/// IQ4_NL's sixteen levels (ggml-common.h `kvalues_iq4nl`), shared by IQ4_XS.
pub const IQ4NL: [i8; 16] = [
    -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
];

/// The e2m1 values of MXFP4's sixteen codes, doubled: integers.
pub const MXFP4_DOUBLED: [i8; 16] = [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12];

/// Half the e8m0 scale `e`, 2^(e − 128), exactly (2⁻¹²⁸ and 2⁻¹²⁷ are subnormal).
pub fn e8m0_half(e: u8) -> f32 {
    f32::from_bits(if e < 2 {
        0x0020_0000 << e
    } else {
        (e as u32 - 1) << 23
    })
}

/// ggml's type numbers this module dequantizes.
pub const TYPES: [(u32, &str); 12] = [
    (16, "IQ2_XXS"),
    (17, "IQ2_XS"),
    (18, "IQ3_XXS"),
    (19, "IQ1_S"),
    (20, "IQ4_NL"),
    (21, "IQ3_S"),
    (22, "IQ2_S"),
    (23, "IQ4_XS"),
    (29, "IQ1_M"),
    (34, "TQ1_0"),
    (35, "TQ2_0"),
    (39, "MXFP4"),
];

fn f16_at(b: &[u8], i: usize) -> f32 {
    f16::from_le_bytes([b[i], b[i + 1]]).to_f32()
}

/// One block into its values as integers `q` and a scale `d` for each 16 of them.
type Block = fn(&[u8], &mut [i8], &mut [f32]);

/// Values of whole blocks as integers, each 16 sharing a scale: value i is
/// `scales[i / 16] · codes[i]`, the very product ggml's dequantize_row_* takes (each type's
/// values are small integers times a scale, IQ1's offsets of ±1/8 included once doubled
/// thrice), so that a kernel holding the integers holds the file's values.
pub struct Integers {
    pub codes: Vec<i8>,
    pub scales: Vec<f32>,
}

impl Integers {
    pub fn values(&self) -> Vec<f32> {
        let runs = self.codes.chunks_exact(16).zip(&self.scales);
        runs.flat_map(|(q, &d)| q.iter().map(move |&q| d * q as f32))
            .collect()
    }
}

/// `data`, whole blocks of ggml type `type_id`, as integers and scales, or `None` for a type
/// this module does not read or data that is not whole blocks.
pub fn integers(type_id: u32, data: &[u8]) -> Option<Integers> {
    let block: Block = match type_id {
        16 => iq2_xxs,
        17 => iq2_xs,
        18 => iq3_xxs,
        19 => iq1_s,
        21 => iq3_s,
        22 => iq2_s,
        29 => iq1_m,
        20 => iq4_nl,
        23 => iq4_xs,
        34 => tq1_0,
        35 => tq2_0,
        39 => mxfp4,
        _ => return None,
    };
    let (values, bytes) = crate::gguf_header::block_layout(type_id)?;
    let (values, bytes) = (values as usize, bytes as usize);
    if !data.len().is_multiple_of(bytes) {
        return None;
    }
    let blocks = data.len() / bytes;
    let mut out = Integers {
        codes: vec![0; blocks * values],
        scales: vec![0.0; blocks * values / 16],
    };
    let each = out.codes.chunks_exact_mut(values);
    for ((b, q), d) in data
        .chunks_exact(bytes)
        .zip(each)
        .zip(out.scales.chunks_exact_mut(values / 16))
    {
        block(b, q, d);
    }
    Some(out)
}

/// The values of `data`, whole blocks of ggml type `type_id`, or `None` for a type this module
/// does not dequantize or data that is not whole blocks.
pub fn dequantize(type_id: u32, data: &[u8]) -> Option<Vec<f32>> {
    integers(type_id, data).map(|i| i.values())
}

/// Whether a scale of type `type_id` covers only 16 values (IQ2_XS, IQ2_S, IQ1_M) rather than
/// 32 or more.
pub fn scales_by_16(type_id: u32) -> bool {
    matches!(type_id, 17 | 22 | 29)
}

/// Two nibbles a byte: a sub-block's first half from the low ones, its second from the high.
fn nibbles(qs: &[u8], q: &mut [i8], level: impl Fn(u8) -> i8) {
    let half = qs.len();
    for (j, &c) in qs.iter().enumerate() {
        q[j] = level(c & 15);
        q[j + half] = level(c >> 4);
    }
}

/// f16 d, then 16 bytes of levels.
fn iq4_nl(b: &[u8], q: &mut [i8], d: &mut [f32]) {
    d.fill(f16_at(b, 0));
    nibbles(&b[2..18], q, |c| IQ4NL[c as usize]);
}

/// f16 d, u16 high scale bits, 4 bytes of low scale bits, 128 bytes of levels: 8 sub-blocks
/// of 32, each with a 6-bit scale less 32.
fn iq4_xs(b: &[u8], q: &mut [i8], d: &mut [f32]) {
    let unit = f16_at(b, 0);
    let high = u16::from_le_bytes([b[2], b[3]]);
    for ib in 0..8 {
        let low = (b[4 + ib / 2] >> (4 * (ib % 2))) & 15;
        let ls = low | ((((high >> (2 * ib)) & 3) as u8) << 4);
        d[2 * ib..][..2].fill(unit * (ls as i32 - 32) as f32);
        nibbles(&b[8 + 16 * ib..][..16], &mut q[32 * ib..][..32], |c| {
            IQ4NL[c as usize]
        });
    }
}

/// Ternary, five digits a byte in base 3 (48 bytes), four in each of 4 more, then f16 d. A byte
/// times 3^k (mod 256) holds digit k in its top bits: (q · 3) >> 8 reads it, 0, 1 or 2.
fn tq1_0(b: &[u8], q: &mut [i8], d: &mut [f32]) {
    d.fill(f16_at(b, 52));
    let digit = |c: u8, k: usize| ((c.wrapping_mul(3u8.pow(k as u32)) as u16 * 3) >> 8) as i8 - 1;
    let mut i = 0;
    for (bytes, powers) in [(&b[0..32], 5), (&b[32..48], 5), (&b[48..52], 4)] {
        for k in 0..powers {
            for &c in bytes {
                q[i] = digit(c, k);
                i += 1;
            }
        }
    }
}

/// Ternary, four 2-bit digits a byte (64 bytes), then f16 d.
fn tq2_0(b: &[u8], q: &mut [i8], d: &mut [f32]) {
    d.fill(f16_at(b, 64));
    let mut i = 0;
    for chunk in b[..64].chunks_exact(32) {
        for shift in [0, 2, 4, 6] {
            for &c in chunk {
                q[i] = ((c >> shift) & 3) as i8 - 1;
                i += 1;
            }
        }
    }
}

/// An e8m0 scale, then 16 bytes of E2M1 codes, doubled to integers, times half the scale.
fn mxfp4(b: &[u8], q: &mut [i8], d: &mut [f32]) {
    d.fill(e8m0_half(b[0]));
    nibbles(&b[1..17], q, |c| MXFP4_DOUBLED[c as usize]);
}

/// A grid's values, unpacked once: entry e is `values[e * width..][..width]`.
fn unpack(g: &Grid, cell: &'static OnceLock<Vec<i8>>) -> &'static [i8] {
    cell.get_or_init(|| {
        let digit = |c: u8| if c > 0x40 { c + 9 } else { c } & 15;
        let per_byte = 8 / g.bits;
        let step = 8 / per_byte;
        let mask = (1u8 << g.bits) - 1;
        g.hex
            .chunks_exact(2)
            .flat_map(|h| {
                let byte = (digit(h[0]) << 4) | digit(h[1]);
                (0..per_byte).map(move |i| g.levels[((byte >> (i * step)) & mask) as usize])
            })
            .collect()
    })
}

macro_rules! grid {
    ($name:ident) => {{
        static CELL: OnceLock<Vec<i8>> = OnceLock::new();
        (unpack(&grids::$name, &CELL), grids::$name.width)
    }};
}

/// A grid entry, each value j negated where bit j of `signs` is set.
fn signed(q: &mut [i8], entry: &[i8], signs: u8) {
    for (j, (q, &g)) in q.iter_mut().zip(entry).enumerate() {
        *q = if signs >> j & 1 == 0 { g } else { -g };
    }
}

/// f16 d, then 8 groups of 32 values, each two u32s: four grid indices, and four 7-bit sign
/// patterns with a 4-bit scale on top.
fn iq2_xxs(b: &[u8], q: &mut [i8], d: &mut [f32]) {
    let (grid, w) = grid!(IQ2_XXS);
    let unit = f16_at(b, 0);
    for g in 0..8 {
        let at = 2 + 8 * g;
        let aux = u32::from_le_bytes([b[at + 4], b[at + 5], b[at + 6], b[at + 7]]);
        d[2 * g..][..2].fill(unit * (0.5 + (aux >> 28) as f32) * 0.25);
        for k in 0..4 {
            let e = b[at + k] as usize;
            let signs = KSIGNS[(aux >> (7 * k) & 127) as usize];
            signed(&mut q[32 * g + 8 * k..][..8], &grid[e * w..][..w], signs);
        }
    }
}

/// f16 d, 32 u16s (a 9-bit grid index and a 7-bit sign pattern each), 16 4-bit scales.
fn iq2_xs(b: &[u8], q: &mut [i8], d: &mut [f32]) {
    let (grid, w) = grid!(IQ2_XS);
    let unit = f16_at(b, 0);
    for i in 0..32 {
        let c = u16::from_le_bytes([b[2 + 2 * i], b[3 + 2 * i]]);
        let s = (b[66 + i / 4] >> (4 * (i / 2 % 2))) & 15;
        d[i / 2] = unit * (0.5 + s as f32) * 0.25;
        let e = (c & 511) as usize;
        let signs = KSIGNS[(c >> 9) as usize];
        signed(&mut q[8 * i..][..8], &grid[e * w..][..w], signs);
    }
}

/// f16 d, 32 low bytes of the grid indices, 32 bytes of sign bits, 8 bytes of the indices'
/// high 2 bits, 16 4-bit scales.
fn iq2_s(b: &[u8], q: &mut [i8], d: &mut [f32]) {
    let (grid, w) = grid!(IQ2_S);
    let unit = f16_at(b, 0);
    for i in 0..32 {
        let high = (b[66 + i / 4] >> (2 * (i % 4))) & 3;
        let e = b[2 + i] as usize | (high as usize) << 8;
        let s = (b[74 + i / 4] >> (4 * (i / 2 % 2))) & 15;
        d[i / 2] = unit * (0.5 + s as f32) * 0.25;
        signed(&mut q[8 * i..][..8], &grid[e * w..][..w], b[34 + i]);
    }
}

/// f16 d, 64 grid indices (4 values each), then 8 u32s: four 7-bit sign patterns and a 4-bit
/// scale.
fn iq3_xxs(b: &[u8], q: &mut [i8], d: &mut [f32]) {
    let (grid, w) = grid!(IQ3_XXS);
    let unit = f16_at(b, 0);
    for g in 0..8 {
        let at = 66 + 4 * g;
        let aux = u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
        d[2 * g..][..2].fill(unit * (0.5 + (aux >> 28) as f32) * 0.5);
        for k in 0..4 {
            let signs = KSIGNS[(aux >> (7 * k) & 127) as usize];
            let (e0, e1) = (b[2 + 8 * g + 2 * k] as usize, b[3 + 8 * g + 2 * k] as usize);
            let o = &mut q[32 * g + 8 * k..][..8];
            signed(&mut o[..4], &grid[e0 * w..][..w], signs);
            signed(&mut o[4..], &grid[e1 * w..][..w], signs >> 4);
        }
    }
}

/// f16 d, 64 low bytes of the grid indices (4 values each), 8 bytes of their high bits, 32
/// bytes of sign bits, 8 4-bit scales (d · (1 + 2s)).
fn iq3_s(b: &[u8], q: &mut [i8], d: &mut [f32]) {
    let (grid, w) = grid!(IQ3_S);
    let unit = f16_at(b, 0);
    for i in 0..32 {
        let s = (b[106 + i / 8] >> (4 * (i / 4 % 2))) & 15;
        d[i / 2] = unit * (1 + 2 * s) as f32;
        let index = |j: usize| b[2 + j] as usize | ((b[66 + j / 8] >> (j % 8) & 1) as usize) << 8;
        let (e0, e1, signs) = (index(2 * i), index(2 * i + 1), b[74 + i]);
        let o = &mut q[8 * i..][..8];
        signed(&mut o[..4], &grid[e0 * w..][..w], signs);
        signed(&mut o[4..], &grid[e1 * w..][..w], signs >> 4);
    }
}

/// A grid entry's values plus the offset ±1/8, times 8: integers (the scale takes the 8 back,
/// exactly: a power of two).
fn offset(q: &mut [i8], entry: &[i8], negative: bool) {
    let delta = if negative { -1 } else { 1 };
    for (q, &v) in q.iter_mut().zip(entry) {
        *q = 8 * v + delta;
    }
}

/// f16 d, 32 low bytes of 11-bit grid indices, 8 u16s: the indices' high 3 bits, a 3-bit scale
/// (d · (2s + 1)) and the sign of the offset from the grid.
fn iq1_s(b: &[u8], q: &mut [i8], d: &mut [f32]) {
    let (grid, w) = grid!(IQ1_S);
    let unit = f16_at(b, 0);
    for g in 0..8 {
        let h = u16::from_le_bytes([b[34 + 2 * g], b[35 + 2 * g]]);
        d[2 * g..][..2].fill(unit * (2 * ((h >> 12) & 7) + 1) as f32 * IQ1_DELTA);
        for k in 0..4 {
            let e = b[2 + 4 * g + k] as usize | (((h >> (3 * k)) & 7) as usize) << 8;
            offset(
                &mut q[32 * g + 8 * k..][..8],
                &grid[e * w..][..w],
                h & 0x8000 != 0,
            );
        }
    }
}

/// 32 low bytes of 11-bit grid indices, 16 bytes of their high bits with the offset's sign, 4
/// u16s of 3-bit scales whose top nibbles together are the f16 d.
fn iq1_m(b: &[u8], q: &mut [i8], d: &mut [f32]) {
    let (grid, w) = grid!(IQ1_S);
    let sc: [u16; 4] = std::array::from_fn(|i| u16::from_le_bytes([b[48 + 2 * i], b[49 + 2 * i]]));
    let bits = (sc[0] >> 12) | ((sc[1] >> 8) & 0xF0) | ((sc[2] >> 4) & 0xF00) | (sc[3] & 0xF000);
    let unit = f16::from_bits(bits).to_f32();
    for i in 0..32 {
        let s = (sc[i / 8] >> (3 * (i / 2 % 4))) & 7;
        d[i / 2] = unit * (2 * s + 1) as f32 * IQ1_DELTA;
        let nibble = (b[32 + i / 2] >> (4 * (i % 2))) & 15;
        let e = b[i] as usize | ((nibble & 7) as usize) << 8;
        offset(&mut q[8 * i..][..8], &grid[e * w..][..w], nibble & 8 != 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each type's random blocks give, value for value, what llama.cpp's ggml gives them
    /// (scripts/make_dequant_fixture.py calls its `to_float`): the same multiplications in
    /// f32, exactly.
    #[test]
    fn blocks_equal_the_reference() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/dequant.json"
        ))
        .unwrap();
        let fixture: serde_json::Value = serde_json::from_str(&text).unwrap();
        for (id, name) in TYPES {
            let case = &fixture[id.to_string()];
            assert_eq!(case["name"], name);
            let hex = case["hex"].as_str().unwrap();
            let bytes: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            let want: Vec<f32> = (case["values"].as_array().unwrap().iter())
                .map(|v| v.as_f64().unwrap() as f32)
                .collect();
            let got = dequantize(id, &bytes).unwrap();
            assert_eq!(got.len(), want.len(), "{name}");
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(
                    g.to_bits(),
                    w.to_bits(),
                    "{name} value {i}: {g} against {w}"
                );
            }
            // Not whole blocks: refused, not read past.
            assert!(
                dequantize(id, &bytes[..bytes.len() - 1]).is_none(),
                "{name}"
            );
        }
        // candle's types are candle's to read; a number ggml does not define is no type.
        assert!(dequantize(2, &[0; 18]).is_none(), "Q4_0");
        assert!(dequantize(31, &[0; 18]).is_none(), "type 31");
    }

    /// Every type's scales change only every 32 values but for the three `scales_by_16`
    /// names, and those three do change within 32 (random blocks: a kernel holding them
    /// with one scale a 32 would be wrong, and one holding two where one would do, slower).
    #[test]
    fn scales_span_what_scales_by_16_says() {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut byte = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 56) as u8
        };
        for (id, name) in TYPES {
            let (_, bytes) = crate::gguf_header::block_layout(id).unwrap();
            let data: Vec<u8> = (0..4 * bytes).map(|_| byte()).collect();
            let i = integers(id, &data).unwrap();
            let split = i
                .scales
                .chunks_exact(2)
                .any(|p| p[0].to_bits() != p[1].to_bits());
            assert_eq!(split, scales_by_16(id), "{name}");
        }
    }
}
