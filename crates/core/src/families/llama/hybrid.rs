//! The hybrids' rows: which of a Llama-like model's layers run a recurrent mixer instead of
//! attention, and with what settings.

use super::*;

/// A hybrid's recurrent layers.
#[derive(Debug, Clone, Copy)]
pub struct Hybrid {
    pub mixer: HybridMixer,
    pub layers: HybridLayers,
    /// The recurrent layers' norms sit here whatever the attention layers' placement (OLMo
    /// hybrid's pre-norm DeltaNet layers among post-norm attention layers).
    pub recurrent_place: Option<NormPlace>,
}

/// The recurrent mixer of a hybrid's other layers, with the keys of its settings.
#[derive(Debug, Clone, Copy)]
pub enum HybridMixer {
    Mamba2(super::super::mamba2::SsmKeys),
    Mamba(super::super::mamba::S6Keys),
    /// LFM2's short convolution: the keys of its width and of its biases, with their defaults.
    ShortConv {
        kernel: (&'static str, u64),
        bias: (&'static str, bool),
    },
    /// Gated DeltaNet (Qwen3-Next, Qwen3.5, OLMo hybrid, Lara Mini), its projections stored as
    /// given, with the class's defaults for its heads.
    DeltaNet(DeltaStore, super::super::delta::DeltaHeads),
    /// MiniMax's lightning attention: the key of its decay tables' chunk length, with its
    /// default. Its heads are the attention's.
    Lightning {
        block: (&'static str, u64),
    },
}

/// Which layers of a hybrid attend; the others run Mamba2.
#[derive(Debug, Clone, Copy)]
pub enum HybridLayers {
    /// A list of the attending layers' indices, none by default (Bamba's `attn_layer_indices`).
    AttnIndices(&'static str),
    /// A type per layer, "linear_attention" (or its old name "mamba") for Mamba2 and
    /// "full_attention" ("attention"), every layer Mamba2 by default (GraniteMoeHybrid's
    /// `layer_types`).
    Types(&'static str),
    /// Layer i attends where i % period = offset (Jamba's `attn_layer_period`,
    /// `attn_layer_offset`).
    Period(Period),
    /// A type per layer (`layer_types`: "conv", or the pattern's recurrent type, "full_attention"
    /// or "sliding_attention"), else a list of the attending layers (`full_attn_idxs`), else
    /// every layer attends (LFM2); else the class's own pattern (LFM3, Lara Mini); with neither,
    /// the types must be given (LFM2-MoE).
    ConvTypes {
        types: &'static str,
        indices: Option<&'static str>,
        pattern: Option<TypePattern>,
    },
    /// `layer_types` ("linear_attention" or "full_attention"); without it every n-th layer
    /// (i + 1 a multiple of n) attends, n from `full_attention_interval` (default 4) (Qwen3-Next).
    Interval,
    /// As `Interval`, the attention layers named "indexed_attention" (Qwen4-Exp, whose class
    /// renames "full_attention" so).
    Indexed,
    /// `layer_types`; without it layers 3, 7, 11 … attend, or the last alone in a model of
    /// fewer than four (OLMo hybrid). Each kind must appear.
    FourthOrLast,
    /// `layer_types`; without it the even layers (0, 2, 4 …) attend (MiniMax).
    Even,
}

/// A class's layer types when the config lists none.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TypePattern {
    /// LFM3's: layer i is full attention where i % 4 = 2, sliding where i % 4 = 0 (but the
    /// first), a short convolution elsewhere.
    Lfm3,
    /// Lara Mini's, of period 5: Gated DeltaNet, sliding, Gated DeltaNet, full, sliding.
    LaraMini,
}

impl TypePattern {
    /// The type its configs give the recurrent layers.
    pub(super) fn recurrent(self) -> &'static str {
        match self {
            TypePattern::Lfm3 => "conv",
            TypePattern::LaraMini => "linear_attention",
        }
    }

    pub(super) fn type_of(self, i: u64) -> &'static str {
        match self {
            TypePattern::Lfm3 if i % 4 == 2 => "full_attention",
            TypePattern::Lfm3 if i.is_multiple_of(4) && i > 0 => "sliding_attention",
            TypePattern::Lfm3 => "conv",
            TypePattern::LaraMini => match i % 5 {
                3 => "full_attention",
                1 | 4 => "sliding_attention",
                _ => "linear_attention",
            },
        }
    }
}

/// A layer type of a model of recurrent layers (of type `recurrent`) and attention: (is it
/// recurrent, does it slide).
pub(super) fn conv_type(v: &serde_json::Value, recurrent: &str) -> Option<(bool, bool)> {
    match v.as_str()? {
        t if t == recurrent => Some((true, false)),
        "full_attention" => Some((false, false)),
        "sliding_attention" => Some((false, true)),
        _ => None,
    }
}

/// The layer types such a model's configs may give.
pub(super) fn conv_types(recurrent: &str) -> String {
    format!("\"{recurrent}\", \"full_attention\" or \"sliding_attention\"")
}
