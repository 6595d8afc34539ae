//! Positions: RoPE and its scalings, learned and sinusoidal positions, ALiBi, bucketed relative
//! positions.

use super::*;

// One per Spec, read in place: the variants' size difference costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Position {
    Rope(Rope),
    /// Learned absolute positions added to the embedding (GPT-2).
    Learned,
    /// Fixed sinusoids added to the embedding: row r of the table is [sin(r·ωᵢ) …, cos(r·ωᵢ) …],
    /// the frequencies as the table says; position p reads row p + `Embedding::position_offset`.
    Sinusoidal(Sinusoids),
    /// ALiBi: each head's score of key j for the query at i gets slopes[h] · (j − i) (Bloom,
    /// MPT); one slope per query head.
    Alibi(Vec<f64>),
    /// None: order comes from the recurrence alone (Mamba2).
    None,
    /// T5's bucketed relative positions as a learned bias per head on the attention scores,
    /// one table for every layer (CPM-Ant): see `Buckets`.
    Buckets(Buckets),
}

/// A learned bias per head for each pair of positions, from a table of `buckets` rows (plus
/// one row per pair of segments where the model has segments, `Spec::prompt`). Half the
/// buckets are for keys before the query, half for keys after it; in each half the first
/// `buckets / 4` distances have a bucket each and the rest share buckets spaced by the log of
/// the distance up to `max_distance`, beyond which all share the last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Buckets {
    pub buckets: u64,
    pub max_distance: u64,
}

impl Buckets {
    /// The bucket of a key `rel` = j − i positions from its query, in float32 as transformers'
    /// `_position_bucket` computes it.
    pub fn bucket(&self, rel: i64) -> u64 {
        let half = self.buckets / 2;
        let exact = half / 2;
        let base = if rel > 0 { half } else { 0 };
        let a = rel.unsigned_abs();
        if a < exact {
            return base + a;
        }
        let span = (self.max_distance as f64 / exact as f64).ln() as f32;
        let far = ((a as f32 / exact as f32).ln() / span * (half - exact) as f32) as i64;
        base + (exact as i64 + far).clamp(0, half as i64 - 1) as u64
    }
}

/// CPM-Ant's frame around the text: `length` learned prompt tokens prepended to every input
/// (embedding rows `out_vocab() + 2·length` on, the third of the table's prompts, the only one
/// its causal LM reads), and a segment id per position, `PROMPT_SEGMENT` for the prompt and
/// `TEXT_SEGMENT` for the text, whose row of a `segments`-row table is added to each embedding.
/// A pair of positions in different segments reads the bias row `buckets + segment of the query
/// · segments + segment of the key` rather than a distance's. The prompt's positions are cached
/// like the text's; their outputs are dropped before the final norm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prompt {
    pub length: u64,
    pub segments: u64,
}

pub const PROMPT_SEGMENT: u64 = 0;

pub const TEXT_SEGMENT: u64 = 2;

impl Prompt {
    /// The embedding row of prompt position `p`.
    pub fn row(&self, text_vocab: u64, p: u64) -> u64 {
        text_vocab + 2 * self.length + p
    }

    /// The segment of absolute position `p` (the prompt's first).
    pub fn segment(&self, p: u64) -> u64 {
        if p < self.length {
            PROMPT_SEGMENT
        } else {
            TEXT_SEGMENT
        }
    }
}

/// How a sinusoid table spaces its frequencies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sinusoids {
    /// fairseq's (XGLM): ωᵢ = 10000^(−i / (d/2 − 1)) for i < d/2, a zero column when d is odd.
    Fairseq,
    /// CTRL's: ωᵢ = 10000^(−2i / d), ⌈d/2⌉ sines then ⌊d/2⌋ cosines.
    Ctrl,
}

impl Sinusoids {
    /// The frequencies of the sines and of the cosines of width `d`.
    pub fn freqs(self, d: u64) -> (Vec<f64>, Vec<f64>) {
        match self {
            Sinusoids::Fairseq => {
                let half = d / 2;
                let step = (10000f64).ln() / (half.max(2) - 1) as f64;
                let f: Vec<f64> = (0..half).map(|i| (-(i as f64) * step).exp()).collect();
                (f.clone(), f)
            }
            Sinusoids::Ctrl => {
                let f = |n: u64| -> Vec<f64> {
                    (0..n)
                        .map(|i| 10000f64.powf(-2.0 * i as f64 / d as f64))
                        .collect()
                };
                (f(d.div_ceil(2)), f(d / 2))
            }
        }
    }
}

/// ALiBi's head slopes as Bloom computes them (`build_alibi_tensor`): a geometric series from
/// 2^(−8/n) for the largest power of two n ≤ heads, the rest interleaved from the series of 2n.
/// MPT's ALiBi slopes (transformers' `build_mpt_alibi_tensor`, bias max 8): 2^(−8i/n) for
/// i = 1..n over n, the next power of two of the heads; with fewer heads than that, the odd
/// ones first, then the even, cut to the heads.
/// Row `row` of the sinusoid table of width `d` (`Position::Sinusoidal`).
pub fn sinusoid_row(row: u64, d: u64, table: Sinusoids) -> Vec<f64> {
    let (sines, cosines) = table.freqs(d);
    let r = row as f64;
    let mut out: Vec<f64> = sines.iter().map(|w| (r * w).sin()).collect();
    out.extend(cosines.iter().map(|w| (r * w).cos()));
    out.resize(d as usize, 0.0);
    out
}

pub fn alibi_slopes_mpt(heads: u64) -> Vec<f64> {
    let n = heads.max(1).next_power_of_two();
    let all: Vec<f64> = (1..=n)
        .map(|i| 1.0 / 2f64.powf(i as f64 * 8.0 / n as f64))
        .collect();
    if n == heads {
        return all;
    }
    all.iter()
        .skip(1)
        .step_by(2)
        .chain(all.iter().step_by(2))
        .take(heads as usize)
        .copied()
        .collect()
}

pub fn alibi_slopes_bloom(heads: u64) -> Vec<f64> {
    let closest = 1u64 << (63 - heads.max(1).leading_zeros());
    let base = |n: u64| 2f64.powf(-(2f64.powf(-((n as f64).log2() - 3.0))));
    let mut s: Vec<f64> = (1..=closest)
        .map(|p| base(closest).powi(p as i32))
        .collect();
    if closest != heads {
        let extra = base(2 * closest);
        let remaining = closest.min(heads - closest);
        s.extend((0..remaining).map(|i| extra.powi((1 + 2 * i) as i32)));
    }
    s
}

#[derive(Debug, Clone, PartialEq)]
pub struct Rope {
    /// The frequencies of full-attention layers (of every layer unless `sliding` is set).
    pub full: RopeFreqs,
    /// The frequencies of sliding-window layers when they differ (Gemma 3: its own base, no
    /// scaling): transformers' `rope_parameters` per layer type.
    pub sliding: Option<RopeFreqs>,
    /// Fraction of head_dim that is rotated (1.0 for all of it).
    pub partial: f64,
    /// The sliding-window layers' fraction where it differs (Laguna: all of each head, while
    /// its full layers rotate half).
    pub sliding_partial: Option<f64>,
    /// Rotates interleaved pairs (x₀,x₁), (x₂,x₃) … (Llama 4, as complex numbers) rather than
    /// the two halves of each head (rotate_half, the transformers default).
    pub interleaved: bool,
    /// Rotates by −angle, sin negated (NanoChat's rotate_half is (x₂, −x₁)).
    pub reversed: bool,
    /// The first token's position (PaliGemma's wrapper counts from 1); 0 otherwise.
    pub start: u64,
}

impl Rope {
    /// The frequencies a layer of this span uses.
    pub fn freqs(&self, span: AttnSpan) -> &RopeFreqs {
        match span {
            AttnSpan::Sliding(_) => self.sliding.as_ref().unwrap_or(&self.full),
            AttnSpan::Full | AttnSpan::Whole | AttnSpan::Chunked(_) => &self.full,
        }
    }

    /// Rotated dims of a head of `head_dim`: transformers' `int(head_dim × partial)`, made even.
    pub fn rotary_dim(&self, head_dim: u64) -> u64 {
        ((head_dim as f64 * self.partial) as u64) / 2 * 2
    }

    /// The fraction a layer of this span rotates.
    pub fn partial_for(&self, span: AttnSpan) -> f64 {
        match span {
            AttnSpan::Sliding(_) => self.sliding_partial.unwrap_or(self.partial),
            AttnSpan::Full | AttnSpan::Whole | AttnSpan::Chunked(_) => self.partial,
        }
    }

    /// Rotated dims of a head of `head_dim` in a layer of this span.
    pub fn rotary_dim_for(&self, span: AttnSpan, head_dim: u64) -> u64 {
        ((head_dim as f64 * self.partial_for(span)) as u64) / 2 * 2
    }
}

/// One set of rotary frequencies: a base and how it is scaled.
#[derive(Debug, Clone, PartialEq)]
pub struct RopeFreqs {
    pub theta: f64,
    pub scaling: RopeScaling,
}

/// How a RoPE's inverse frequencies are rescaled for longer contexts, with every parameter
/// resolved to the value transformers computes with (`modeling_rope_utils`). Every view, the
/// executor and the reference code match this exhaustively; the loader refuses any other kind.
#[derive(Debug, Clone, PartialEq)]
pub enum RopeScaling {
    None,
    /// Every frequency divided by `factor` (positions interpolated).
    Linear {
        factor: f64,
    },
    /// Dynamic NTK: the base grows with the sequence once it passes `original` positions
    /// (transformers' `max_position_embeddings`); below that the frequencies are unscaled.
    Dynamic {
        factor: f64,
        original: u64,
    },
    /// Llama 3.1: long wavelengths slowed by `factor`, short ones kept, a smooth ramp between.
    Llama3 {
        factor: f64,
        low_freq_factor: f64,
        high_freq_factor: f64,
        original: u64,
    },
    /// YaRN: interpolation by `factor` ramped in between the dims that turn `beta_fast` and
    /// `beta_slow` times over `original` positions; cos and sin scaled by `attention_factor`.
    Yarn {
        factor: f64,
        original: u64,
        beta_fast: f64,
        beta_slow: f64,
        attention_factor: f64,
        /// Round the ramp's ends to whole dims (transformers' default; gpt-oss turns it off).
        truncate: bool,
    },
    /// LongRoPE (Phi-3 long-context): one rescale factor per frequency, `short` up to
    /// `original` positions and `long` beyond; cos and sin scaled by `attention_factor`.
    LongRope {
        short: Vec<f64>,
        long: Vec<f64>,
        original: u64,
        attention_factor: f64,
        /// PhiMoE's reading: the `short` factors at every length, cos and sin scaled by the first
        /// (`short_mscale`) up to `original` positions and by the second (`long_mscale`) beyond.
        mscale: Option<(f64, f64)>,
    },
    /// Proportional RoPE (LFM3, Gemma 4): the whole head's pairs (i, i + d/2), of which the first
    /// ⌊fraction · d / 2⌋ turn at base^(−2i/d), the head's own spacing, and the rest not at all;
    /// every frequency divided by `factor`. The layer's rotated fraction is then 1.
    Proportional {
        factor: f64,
        fraction: f64,
    },
}

impl RopeScaling {
    /// The name transformers gives this kind (`rope_type`).
    pub fn kind(&self) -> &'static str {
        match self {
            RopeScaling::None => "default",
            RopeScaling::Linear { .. } => "linear",
            RopeScaling::Dynamic { .. } => "dynamic",
            RopeScaling::Llama3 { .. } => "llama3",
            RopeScaling::Yarn { .. } => "yarn",
            RopeScaling::LongRope { .. } => "longrope",
            RopeScaling::Proportional { .. } => "proportional",
        }
    }

    /// The factor by which the context is stretched, where the kind has one.
    pub fn factor(&self) -> Option<f64> {
        match self {
            RopeScaling::None | RopeScaling::LongRope { .. } => None,
            RopeScaling::Linear { factor }
            | RopeScaling::Dynamic { factor, .. }
            | RopeScaling::Llama3 { factor, .. }
            | RopeScaling::Yarn { factor, .. }
            | RopeScaling::Proportional { factor, .. } => Some(*factor),
        }
    }
}

impl RopeScaling {
    /// In words (`llama3 scaling ×8 from 8192 positions`); empty for none.
    pub fn describe(&self) -> String {
        use crate::fmt::float;
        match self {
            RopeScaling::None => String::new(),
            RopeScaling::Linear { factor } => format!("linear scaling ×{}", float(*factor)),
            RopeScaling::Dynamic { factor, original } => {
                format!(
                    "dynamic NTK scaling ×{} beyond {original} positions",
                    float(*factor)
                )
            }
            RopeScaling::Llama3 {
                factor, original, ..
            } => {
                format!(
                    "llama3 scaling ×{} from {original} positions",
                    float(*factor)
                )
            }
            RopeScaling::Yarn {
                factor,
                original,
                truncate,
                ..
            } => format!(
                "YaRN scaling ×{} from {original} positions{}",
                float(*factor),
                if *truncate {
                    ""
                } else {
                    " (ramp not truncated)"
                }
            ),
            RopeScaling::LongRope {
                original,
                mscale: Some((short, long)),
                ..
            } => format!(
                "LongRoPE short per-dim factors, cos and sin ×{short} up to {original} positions, ×{long} beyond"
            ),
            RopeScaling::LongRope { original, .. } => {
                format!("LongRoPE per-dim factors (short up to {original} positions, long beyond)")
            }
            RopeScaling::Proportional { factor, fraction } => format!(
                "proportional: {} of each head's pairs turn, the rest stay still{}",
                float(*fraction),
                if *factor == 1.0 {
                    String::new()
                } else {
                    format!(", ×{}", float(*factor))
                }
            ),
        }
    }
}

impl RopeFreqs {
    /// `θ=500000, llama3 scaling ×8 from 8192 positions`.
    pub fn describe(&self) -> String {
        let scaling = self.scaling.describe();
        let theta = crate::fmt::float(self.theta);
        if scaling.is_empty() {
            format!("θ={theta}")
        } else {
            format!("θ={theta}, {scaling}")
        }
    }
}

impl Rope {
    /// The frequencies in words, with the sliding layers' own where they differ.
    pub fn describe(&self) -> String {
        match &self.sliding {
            None => self.full.describe(),
            Some(s) => format!(
                "{} in full-attention layers; {} in sliding layers",
                self.full.describe(),
                s.describe()
            ),
        }
    }
}
