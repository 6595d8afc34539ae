//! ggml's types that candle does not read, dequantized to f32: IQ4_NL, IQ4_XS, TQ1_0,
//! TQ2_0 and MXFP4, each as ggml's `dequantize_row_*` (and gguf-py's `dequantize_blocks`)
//! defines it. The other i-quants (IQ1_S, IQ1_M, IQ2_*, IQ3_*) index lattice grids of their
//! own and are refused by name.

use half::f16;

/// IQ4_NL's sixteen levels (ggml-common.h `kvalues_iq4nl`), shared by IQ4_XS.
const IQ4NL: [i8; 16] = [
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
pub const TYPES: [(u32, &str); 5] = [
    (20, "IQ4_NL"),
    (23, "IQ4_XS"),
    (34, "TQ1_0"),
    (35, "TQ2_0"),
    (39, "MXFP4"),
];

fn f16_at(b: &[u8], i: usize) -> f32 {
    f16::from_le_bytes([b[i], b[i + 1]]).to_f32()
}

/// Dequantizes one block into its values.
type Block = fn(&[u8], &mut [f32]);

/// The values of `data`, whole blocks of ggml type `type_id`, or `None` for a type this module
/// does not dequantize or data that is not whole blocks.
pub fn dequantize(type_id: u32, data: &[u8]) -> Option<Vec<f32>> {
    let block: Block = match type_id {
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
    let mut out = vec![0f32; data.len() / bytes * values];
    for (b, o) in data.chunks_exact(bytes).zip(out.chunks_exact_mut(values)) {
        block(b, o);
    }
    Some(out)
}

/// Two nibbles a byte: a sub-block's first half from the low ones, its second from the high.
fn nibbles(qs: &[u8], out: &mut [f32], value: impl Fn(u8) -> f32) {
    let half = qs.len();
    for (j, &q) in qs.iter().enumerate() {
        out[j] = value(q & 15);
        out[j + half] = value(q >> 4);
    }
}

/// f16 d, then 16 bytes of levels.
fn iq4_nl(b: &[u8], out: &mut [f32]) {
    let d = f16_at(b, 0);
    nibbles(&b[2..18], out, |q| d * IQ4NL[q as usize] as f32);
}

/// f16 d, u16 high scale bits, 4 bytes of low scale bits, 128 bytes of levels: 8 sub-blocks
/// of 32, each with a 6-bit scale less 32.
fn iq4_xs(b: &[u8], out: &mut [f32]) {
    let d = f16_at(b, 0);
    let high = u16::from_le_bytes([b[2], b[3]]);
    for ib in 0..8 {
        let low = (b[4 + ib / 2] >> (4 * (ib % 2))) & 15;
        let ls = low | ((((high >> (2 * ib)) & 3) as u8) << 4);
        let dl = d * (ls as i32 - 32) as f32;
        nibbles(
            &b[8 + 16 * ib..8 + 16 * (ib + 1)],
            &mut out[32 * ib..32 * (ib + 1)],
            |q| dl * IQ4NL[q as usize] as f32,
        );
    }
}

/// Ternary, five digits a byte in base 3 (48 bytes), four in each of 4 more, then f16 d. A byte
/// times 3^k (mod 256) holds digit k in its top bits: (q · 3) >> 8 reads it, 0, 1 or 2.
fn tq1_0(b: &[u8], out: &mut [f32]) {
    let d = f16_at(b, 52);
    let digit =
        |q: u8, k: usize| ((q.wrapping_mul(3u8.pow(k as u32)) as u16 * 3) >> 8) as f32 - 1.0;
    let mut i = 0;
    for (bytes, powers) in [(&b[0..32], 5), (&b[32..48], 5), (&b[48..52], 4)] {
        for k in 0..powers {
            for &q in bytes {
                out[i] = d * digit(q, k);
                i += 1;
            }
        }
    }
}

/// Ternary, four 2-bit digits a byte (64 bytes), then f16 d.
fn tq2_0(b: &[u8], out: &mut [f32]) {
    let d = f16_at(b, 64);
    let mut i = 0;
    for chunk in b[..64].chunks_exact(32) {
        for shift in [0, 2, 4, 6] {
            for &q in chunk {
                out[i] = d * (((q >> shift) & 3) as f32 - 1.0);
                i += 1;
            }
        }
    }
}

/// An e8m0 scale, then 16 bytes of E2M1 codes, doubled to integers, times half the scale.
fn mxfp4(b: &[u8], out: &mut [f32]) {
    let d = e8m0_half(b[0]);
    nibbles(&b[1..17], out, |q| d * MXFP4_DOUBLED[q as usize] as f32);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each type's random blocks give, value for value, what gguf-py's reference dequantizer
    /// gives them (scripts/make_dequant_fixture.py): the same multiplications in f32, exactly.
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
        assert!(
            dequantize(16, &[0; 66]).is_none(),
            "IQ2_XXS is not dequantized here"
        );
    }
}
