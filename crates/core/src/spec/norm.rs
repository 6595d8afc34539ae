//! Norms: their kind, place and epsilon.

/// A.X-K2's gated RMSNorm: the norm's output y times σ(W_up · SiLU(W_down · y)), a gate of
/// rank `rank` computed from y itself.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GatedNorm {
    pub rank: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NormKind {
    Rms,
    /// LayerNorm: with a bias (GPT-2), or a learned scale only (Cohere).
    Layer {
        bias: bool,
    },
    /// LayerNorm without any learned parameters (OLMo).
    Plain,
    /// RMSNorm without a learned scale (NanoChat).
    PlainRms,
    /// RMSNorm with a learned shift after its scale (xLSTM's blocks with `use_bias`).
    RmsBias,
    /// Projection onto the unit sphere, x / √(Σx² + ε), without learned parameters (nGPT).
    Unit,
}

impl NormKind {
    /// A LayerNorm with a learned shift β beside its scale.
    pub fn has_bias(self) -> bool {
        matches!(self, NormKind::Layer { bias: true } | NormKind::RmsBias)
    }

    /// A learned scale γ (every norm but the plain ones).
    pub fn has_weight(self) -> bool {
        !matches!(self, NormKind::Plain | NormKind::PlainRms | NormKind::Unit)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NormPlace {
    /// Norm before each sublayer (Llama).
    Pre,
    /// Norm after each sublayer, before the residual add (OLMo 2).
    Post,
    /// Norm before and after each sublayer (Gemma 2 and 3).
    Sandwich,
    /// Norm of the stream after each residual add, x = LN(x + f(x)), and no final norm: the
    /// original Transformer's placement (GPT-1).
    PostResidual,
    /// Norm before each sublayer, the normed input taking the stream's place in the residual
    /// add: x ← α · n(x) + β · f(n(x)), α and β from `Spec::stream_mix` (MiniMax).
    Normed,
    /// nGPT on the unit sphere (Dory): the stream is normed before each sublayer and moves
    /// from there towards the sublayer's normed output, x ← n(x); x ← x + r ⊙ (n′(f(x)) − x),
    /// a learned rate r per channel (`Ngpt`).
    Sphere,
}

impl NormPlace {
    /// A norm on the branch before each sublayer.
    pub fn before(self) -> bool {
        matches!(
            self,
            NormPlace::Pre | NormPlace::Sandwich | NormPlace::Normed | NormPlace::Sphere
        )
    }

    /// A norm on the branch after each sublayer, before its residual add.
    pub fn after(self) -> bool {
        matches!(
            self,
            NormPlace::Post | NormPlace::Sandwich | NormPlace::Sphere
        )
    }

    /// The normed input takes the stream's place in the residual add (MiniMax, nGPT).
    pub fn replaces_stream(self) -> bool {
        matches!(self, NormPlace::Normed | NormPlace::Sphere)
    }

    /// The stream itself is normed after each residual add (and there is no final norm).
    pub fn on_stream(self) -> bool {
        self == NormPlace::PostResidual
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Norm {
    pub kind: NormKind,
    pub eps: f64,
    /// Weights are stored as w and applied as (1 + w) (Gemma).
    pub unit_offset: bool,
    pub place: NormPlace,
}
