//! The formats a weight or a cached value can be held in, by their bits: a block format's scales
//! are counted with its values.

use serde::Serialize;

/// A weight format chosen for the whole model (rather than read from a checkpoint).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum WeightFormat {
    F32,
    Bf16,
    F16,
    Fp8,
    Q8_0,
    Q6K,
    Q5K,
    Q5_0,
    Q4K,
    Q5_1,
    Q4_1,
    Q4_0,
    Q3K,
    Q2K,
    Iq4Nl,
    Iq4Xs,
    Iq3S,
    Iq3Xxs,
    Iq2S,
    Iq2Xs,
    Iq2Xxs,
    Iq1M,
    Iq1S,
    Tq2_0,
    Tq1_0,
    /// GPTQ's and AWQ's int4 in groups of 128: an fp16 scale and a 4-bit zero per group.
    Int4G128,
    Nvfp4,
    Mxfp4,
}

/// (format, name, bits per block, values per block, GGUF type).
const WEIGHTS: &[(WeightFormat, &str, u64, u64, bool)] = &[
    (WeightFormat::F32, "f32", 32, 1, true),
    (WeightFormat::Bf16, "bf16", 16, 1, true),
    (WeightFormat::F16, "f16", 16, 1, true),
    (WeightFormat::Fp8, "fp8", 8, 1, false),
    // ggml's block layouts (ggml-common.h): bytes per block × 8 over its values.
    (WeightFormat::Q8_0, "q8_0", 34 * 8, 32, true),
    (WeightFormat::Q6K, "q6_k", 210 * 8, 256, true),
    (WeightFormat::Q5K, "q5_k", 176 * 8, 256, true),
    (WeightFormat::Q5_0, "q5_0", 22 * 8, 32, true),
    (WeightFormat::Q4K, "q4_k", 144 * 8, 256, true),
    (WeightFormat::Q5_1, "q5_1", 24 * 8, 32, true),
    (WeightFormat::Q4_1, "q4_1", 20 * 8, 32, true),
    (WeightFormat::Q4_0, "q4_0", 18 * 8, 32, true),
    (WeightFormat::Q3K, "q3_k", 110 * 8, 256, true),
    (WeightFormat::Q2K, "q2_k", 84 * 8, 256, true),
    (WeightFormat::Iq4Nl, "iq4_nl", 18 * 8, 32, true),
    (WeightFormat::Iq4Xs, "iq4_xs", 136 * 8, 256, true),
    (WeightFormat::Iq3S, "iq3_s", 110 * 8, 256, true),
    (WeightFormat::Iq3Xxs, "iq3_xxs", 98 * 8, 256, true),
    (WeightFormat::Iq2S, "iq2_s", 82 * 8, 256, true),
    (WeightFormat::Iq2Xs, "iq2_xs", 74 * 8, 256, true),
    (WeightFormat::Iq2Xxs, "iq2_xxs", 66 * 8, 256, true),
    (WeightFormat::Iq1M, "iq1_m", 56 * 8, 256, true),
    (WeightFormat::Iq1S, "iq1_s", 50 * 8, 256, true),
    (WeightFormat::Tq2_0, "tq2_0", 66 * 8, 256, true),
    (WeightFormat::Tq1_0, "tq1_0", 54 * 8, 256, true),
    // 128 values of 4 bits, an fp16 scale and a 4-bit zero (GPTQ's qzeros, AWQ's zeros).
    (
        WeightFormat::Int4G128,
        "int4-g128",
        128 * 4 + 16 + 4,
        128,
        false,
    ),
    // 16 values of 4 bits with an fp8 scale (the per-tensor fp32 scale is not counted).
    (WeightFormat::Nvfp4, "nvfp4", 16 * 4 + 8, 16, false),
    // 32 values of 4 bits with an 8-bit power-of-two scale.
    (WeightFormat::Mxfp4, "mxfp4", 32 * 4 + 8, 32, true),
];

impl WeightFormat {
    fn row(self) -> &'static (WeightFormat, &'static str, u64, u64, bool) {
        WEIGHTS
            .iter()
            .find(|r| r.0 == self)
            .expect("every format has a row")
    }

    pub fn name(self) -> &'static str {
        self.row().1
    }

    pub fn parse(s: &str) -> Option<WeightFormat> {
        WEIGHTS
            .iter()
            .find(|r| r.1.eq_ignore_ascii_case(s))
            .map(|r| r.0)
    }

    pub fn names() -> String {
        WEIGHTS.iter().map(|r| r.1).collect::<Vec<_>>().join(", ")
    }

    /// Values per block: a row's length must be a multiple.
    pub fn block(self) -> u64 {
        self.row().3
    }

    /// A format of llama.cpp's (a GGUF type).
    pub fn is_gguf(self) -> bool {
        self.row().4
    }

    pub fn bits_per_value(self) -> f64 {
        let r = self.row();
        r.2 as f64 / r.3 as f64
    }

    /// Bytes of `n` values, whole blocks (n a multiple of the block where rows are).
    pub fn bytes(self, n: u128) -> u128 {
        let r = self.row();
        (n * r.2 as u128).div_ceil(r.3 as u128 * 8)
    }
}

/// How the KV cache holds a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum KvType {
    F32,
    F16,
    Bf16,
    Fp8,
    Q8_0,
    Q4_0,
}

const KV: &[(KvType, &str, u64, u64)] = &[
    (KvType::F32, "f32", 32, 1),
    (KvType::F16, "f16", 16, 1),
    (KvType::Bf16, "bf16", 16, 1),
    (KvType::Fp8, "fp8", 8, 1),
    (KvType::Q8_0, "q8_0", 34 * 8, 32),
    (KvType::Q4_0, "q4_0", 18 * 8, 32),
];

impl KvType {
    fn row(self) -> &'static (KvType, &'static str, u64, u64) {
        KV.iter()
            .find(|r| r.0 == self)
            .expect("every type has a row")
    }

    pub fn name(self) -> &'static str {
        self.row().1
    }

    pub fn parse(s: &str) -> Option<KvType> {
        KV.iter().find(|r| r.1.eq_ignore_ascii_case(s)).map(|r| r.0)
    }

    pub fn names() -> String {
        KV.iter().map(|r| r.1).collect::<Vec<_>>().join(", ")
    }

    /// Values per block: a cached row's length must be a multiple.
    pub fn block(self) -> u64 {
        self.row().3
    }

    /// Bytes of `n` values.
    pub fn bytes(self, n: u128) -> u128 {
        let r = self.row();
        (n * r.2 as u128).div_ceil(r.3 as u128 * 8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_formats_count_their_scales() {
        // 4.5 bits a weight: 32 values of 4 bits and an fp16 scale.
        assert_eq!(WeightFormat::Q4_0.bits_per_value(), 4.5);
        assert_eq!(WeightFormat::Q4K.bytes(256), 144);
        assert_eq!(WeightFormat::Int4G128.bits_per_value(), 4.15625);
        assert_eq!(KvType::Q8_0.bytes(64), 68);
        for r in WEIGHTS {
            assert_eq!(WeightFormat::parse(r.1), Some(r.0));
        }
        for r in KV {
            assert_eq!(KvType::parse(r.1), Some(r.0));
        }
    }
}
