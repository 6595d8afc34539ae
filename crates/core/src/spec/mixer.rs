//! Each layer's plan and its token mixer: attention or a recurrent mixer (Mamba, Mamba-2, short
//! convolution, delta rules, lightning attention, RG-LRU, mLSTM, RWKV).

use super::*;

#[derive(Debug, Clone, PartialEq)]
pub struct LayerPlan {
    /// What mixes information across positions in this layer.
    pub mixer: Mixer,
    pub rope: bool,
    pub ffn: Ffn,
}

impl LayerPlan {
    /// An attention layer with a dense or MoE FFN.
    pub fn attention(span: AttnSpan, rope: bool, moe: bool) -> LayerPlan {
        LayerPlan {
            mixer: Mixer::Attention(span),
            rope,
            ffn: if moe { Ffn::Moe } else { Ffn::Dense },
        }
    }

    /// The attention span, in an attention layer.
    pub fn span(&self) -> Option<AttnSpan> {
        self.mixer.span_of()
    }

    /// The layer runs the mixture of experts (its FFN, or beside the MLP).
    pub fn moe(&self) -> bool {
        matches!(self.ffn, Ffn::Moe | Ffn::Shortcut | Ffn::DenseAndMoe)
    }

    /// The layer runs the dense MLP (its FFN, or beside the experts).
    pub fn dense(&self) -> bool {
        matches!(self.ffn, Ffn::Dense | Ffn::Shortcut | Ffn::DenseAndMoe)
    }
}

/// A layer's sequence mixer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mixer {
    /// Softmax attention over a KV cache that grows with the context (up to its span).
    Attention(AttnSpan),
    /// Mamba2's state-space mixer (`Spec::ssm`): a fixed-size state per sequence, updated
    /// token by token.
    Mamba2,
    /// Mamba's selective scan (S6, `Spec::s6`): a state per channel, its step and what it reads
    /// and writes chosen from each token.
    Mamba,
    /// A short gated convolution (`Spec::short_conv`, LFM2): B ⊙ x convolved over the last few
    /// positions, gated by C.
    ShortConv,
    /// Gated DeltaNet (`Spec::delta`, Qwen3-Next, Qwen3.5): a key × value memory per head,
    /// decayed by a gate and corrected toward each new value by the delta rule.
    DeltaNet,
    /// Lightning attention (`Spec::lightning`, MiniMax): linear attention whose key × value
    /// memory per head decays at a fixed rate, without a softmax.
    Lightning,
    /// Griffin's recurrent block (`Spec::rg_lru`, RecurrentGemma): a convolution and the
    /// RG-LRU, a gated linear recurrence with one state per channel, beside a GELU gate branch.
    RgLru,
    /// RWKV-4's time mixing (`Spec::rwkv`): each token's input mixed with the one before it,
    /// then the WKV sums, a decayed average of the values weighted by exp(key), gated by σ(r).
    Rwkv,
    /// xLSTM's mLSTM (`Spec::mlstm`): a key × value matrix memory per head with exponential
    /// input and sigmoid forget gates, kept in range by a running maximum.
    MLstm,
    /// Attention (of this span) and Mamba2 (`Spec::ssm`) side by side on the same normed input,
    /// their outputs summed (Falcon-H1; its multipliers in `Spec::mup`).
    Parallel(AttnSpan),
    /// None: the layer is its FFN alone (Nemotron-H's MLP and MoE layers).
    None,
    /// Cross-attention to an image (Mllama): queries from the text, keys and values from the
    /// vision encoder's states, RMS-normed per head (the model's heads and head size); the
    /// attention's output and then the layer's MLP each added through a tanh gate. A prompt
    /// without an image skips the whole layer, MLP included.
    CrossAttention,
}

impl Mixer {
    /// The mixers that carry a state of fixed size from token to token.
    pub const RECURRENT: [Mixer; 8] = [
        Mixer::Mamba2,
        Mixer::Mamba,
        Mixer::ShortConv,
        Mixer::DeltaNet,
        Mixer::Lightning,
        Mixer::RgLru,
        Mixer::Rwkv,
        Mixer::MLstm,
    ];

    pub fn recurrent(self) -> bool {
        self.recurrent_kind().is_some()
    }

    /// The recurrent mixer this layer runs, if any (Mamba2 in a parallel layer).
    pub fn recurrent_kind(self) -> Option<Mixer> {
        match self {
            Mixer::Mamba2
            | Mixer::Mamba
            | Mixer::ShortConv
            | Mixer::DeltaNet
            | Mixer::Lightning
            | Mixer::RgLru
            | Mixer::Rwkv
            | Mixer::MLstm => Some(self),
            Mixer::Parallel(_) => Some(Mixer::Mamba2),
            Mixer::Attention(_) | Mixer::None | Mixer::CrossAttention => None,
        }
    }

    pub fn span_of(self) -> Option<AttnSpan> {
        match self {
            Mixer::Attention(s) | Mixer::Parallel(s) => Some(s),
            Mixer::Mamba2
            | Mixer::Mamba
            | Mixer::ShortConv
            | Mixer::DeltaNet
            | Mixer::Lightning
            | Mixer::RgLru
            | Mixer::Rwkv
            | Mixer::MLstm
            | Mixer::None
            | Mixer::CrossAttention => None,
        }
    }

    /// The layer runs on a text-only prompt (a cross-attention layer does not).
    pub fn runs_on_text(self) -> bool {
        self != Mixer::CrossAttention
    }

    /// The mixer's name as a part or frame of a drawing.
    pub fn title(self) -> &'static str {
        match self {
            Mixer::Attention(_) => "Attention",
            Mixer::Mamba2 => "Mamba2 mixer",
            Mixer::Mamba => "Mamba mixer",
            Mixer::ShortConv => "Short convolution",
            Mixer::DeltaNet => "Gated DeltaNet",
            Mixer::Lightning => "Lightning attention",
            Mixer::RgLru => "Recurrent block (RG-LRU)",
            Mixer::Rwkv => "Time mixing (RWKV)",
            Mixer::MLstm => "mLSTM",
            Mixer::Parallel(_) => "Attention and Mamba2",
            Mixer::None => "No mixer",
            Mixer::CrossAttention => "Cross-attention (image)",
        }
    }

    pub fn describe(self) -> String {
        match self {
            Mixer::Attention(s) => format!("{} attention", s.describe()),
            Mixer::Mamba2 => "Mamba2".into(),
            Mixer::Mamba => "Mamba".into(),
            Mixer::ShortConv => "short convolution".into(),
            Mixer::DeltaNet => "Gated DeltaNet".into(),
            Mixer::Lightning => "lightning attention".into(),
            Mixer::RgLru => "RG-LRU".into(),
            Mixer::Rwkv => "RWKV time mixing".into(),
            Mixer::MLstm => "mLSTM".into(),
            Mixer::Parallel(s) => format!("{} attention beside Mamba2", s.describe()),
            Mixer::None => "no mixer".into(),
            Mixer::CrossAttention => "cross-attention to the image".into(),
        }
    }
}

/// Mamba2's mixer (SSD). One projection gives the gate z, the convolved part (x, B, C) and Δ
/// per head; a causal depthwise convolution and SiLU run over x, B and C; each head then carries
/// a state of head_dim × state, h ← exp(Δ·A) h + Δ · x ⊗ B, and reads y = h · C + D · x; the
/// output is RMS-normed per group after gating by SiLU(z), then projected back.
#[derive(Debug, Clone, PartialEq)]
pub struct Ssm {
    pub heads: u64,
    pub head_dim: u64,
    /// The state's width per head (N).
    pub state: u64,
    /// B and C are shared by the heads of each of `groups` groups; the gated norm normalizes
    /// each group's features apart.
    pub groups: u64,
    pub conv_kernel: u64,
    pub conv_bias: bool,
    /// The input and output projections have biases.
    pub bias: bool,
    pub eps: f64,
    /// Δ is kept at least this (Nemotron-H's `time_step_min`; 0 for none).
    pub dt_floor: f64,
    /// How the scan's output meets the gate z.
    pub gate: SsmGate,
    /// The input projection's parts z, x, B, C and Δ are multiplied by these (Falcon-H1's μP
    /// `ssm_multipliers`); all 1 otherwise.
    pub part_mults: [f64; 5],
}

/// How Mamba2's scan output y meets its gate z.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SsmGate {
    /// RMS-normed per group after gating: norm(y ⊙ SiLU(z)) (Mamba2).
    NormAfter,
    /// RMS-normed per group, then gated: norm(y) ⊙ SiLU(z) (Falcon-H1's `mamba_norm_before_gate`).
    NormBefore,
    /// Gated, no norm: y ⊙ SiLU(z) (Falcon-H1 without `mamba_rms_norm`).
    Plain,
}

impl SsmGate {
    pub fn normed(self) -> bool {
        self != SsmGate::Plain
    }
}

/// Mamba's selective scan (S6). One projection gives x and the gate z (`inner` each); a causal
/// depthwise convolution and SiLU run over x; a second projection of x gives a low-rank step
/// (`dt_rank`), B and C (`state` each), and Δ = softplus(W_Δ · step + b) per channel; each
/// channel carries a state of `state`, h ← exp(Δ·A) h + Δ · x · B with A per channel and state,
/// and reads y = h · C + D · x; y ⊙ SiLU(z) is projected back.
#[derive(Debug, Clone, PartialEq)]
pub struct S6 {
    pub inner: u64,
    pub state: u64,
    pub dt_rank: u64,
    pub conv_kernel: u64,
    pub conv_bias: bool,
    /// The input and output projections have biases.
    pub bias: bool,
    /// RMS norms on the step, B and C once projected (Falcon-Mamba's without weights, Jamba's
    /// with).
    pub bcdt_norm: Option<BcdtNorm>,
    /// Heads of inner / heads channels, each with its own projections to the step, B and C
    /// and its own step projection (Zamba's multi-head Mamba); 1 for Mamba's one set.
    pub heads: u64,
    /// The input projection's rows alternate x and z channel by channel (Zamba), rather than
    /// giving all of x, then all of z.
    pub interleaved: bool,
}

/// LFM2's short gated convolution: one projection gives B, C and x (hidden each); B ⊙ x is
/// convolved, channel by channel, over the last `kernel` positions, then gated by C and
/// projected back.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShortConv {
    pub kernel: u64,
    /// The projections and the convolution have biases.
    pub bias: bool,
}

/// Gated DeltaNet (Qwen3-Next, Qwen3.5). Q and K (`key_heads` × `key_dim`) and V
/// (`value_heads` × `value_dim`) pass a causal depthwise convolution and SiLU; Q and K are
/// L2-normed per head, Q scaled by 1/√key_dim. Each value head h, reading key head
/// h / (value_heads / key_heads), carries a key_dim × value_dim memory S:
/// S ← exp(g) S, then S ← S + k ⊗ β (v − Sᵀk), and reads o = Sᵀq, with
/// β = σ(W_β x) and g = −exp(A_log) · softplus(W_α x + b_dt) per head. o is RMS-normed per head,
/// scaled by its weight and gated by SiLU(z), then projected back.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeltaNet {
    pub key_heads: u64,
    pub value_heads: u64,
    pub key_dim: u64,
    pub value_dim: u64,
    pub conv_kernel: u64,
    pub eps: f64,
    /// β = this · σ(W_β x): 2 lets the update overshoot, a negative eigenvalue of the
    /// transition (OLMo hybrid's `linear_allow_neg_eigval`); 1 otherwise.
    pub beta_scale: f64,
    /// A bounded decay, g = floor · σ(exp(A_log) · (F + b)), in (floor, 0), rather than
    /// −exp(A_log) · softplus(F + b) (Ling's `kda_safe_gate` with `kda_lower_bound`).
    pub gate_floor: Option<f64>,
    /// The output is gated by σ(z), not SiLU(z) (Qwen4-Exp's `output_gate_type` "sigmoid").
    pub sigmoid_gate: bool,
    pub store: DeltaStore,
}

/// How a Gated DeltaNet's input projections are stored, and Kimi's variant of the mixer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeltaStore {
    /// Two tensors in key-head groups (Qwen3-Next): `in_proj_qkvz` holds, per key head, its q,
    /// its k, then the v and z of its value heads; `in_proj_ba` its value heads' β, then α.
    Grouped,
    /// Four tensors (Qwen3.5): `in_proj_qkv` (every q, every k, every v), `in_proj_z`,
    /// `in_proj_b`, `in_proj_a`.
    Separate,
    /// Kimi Delta Attention (Kimi Linear), a Gated DeltaNet whose gates differ, with its own
    /// tensors: `q_proj`, `k_proj`, `v_proj` and a convolution for each; the decay per key
    /// channel, g = −exp(A_log) · softplus(W_fb W_fa x + b_dt), from a rank-`key_dim` projection
    /// (`f_a_proj`, `f_b_proj`, `dt_bias` per channel, `A_log` per head); β from `b_proj`; the
    /// output RMS-normed per head and gated by σ(W_gb W_ga x) (`g_a_proj`, `g_b_proj`). Key and
    /// value heads are the same heads.
    Kimi,
    /// One input projection, `in_proj`, of rows [q | k | v | z | β | α], and the norm as
    /// `out_norm` (Lara Mini's checkpoints).
    Fused,
    /// Kimi Delta Attention as Ling's hybrid stores it: Kimi's, but the forget gate's step and
    /// the output gate each from one full-rank projection (`f_proj`, `g_proj`).
    Bailing,
    /// Gated DeltaNet as OLMo hybrid saves it: `q_proj`, `k_proj`, `v_proj` and a convolution
    /// for each (`q_conv1d` …), `a_proj` (α), `b_proj` (β) and `g_proj` (the output gate z).
    Olmo,
}

impl DeltaNet {
    /// The mixer's name: Kimi's variant has its own.
    pub fn name(&self) -> &'static str {
        match self.store {
            DeltaStore::Grouped | DeltaStore::Separate | DeltaStore::Fused | DeltaStore::Olmo => {
                "Gated DeltaNet"
            }
            DeltaStore::Kimi | DeltaStore::Bailing => "Kimi Delta Attention",
        }
    }

    /// Each key channel decays on its own (Kimi), rather than each head as one.
    pub fn channel_decay(&self) -> bool {
        matches!(self.store, DeltaStore::Kimi | DeltaStore::Bailing)
    }

    /// Q, K and V are projected apart, each with a convolution of its own.
    pub fn split_qkv(&self) -> bool {
        matches!(
            self.store,
            DeltaStore::Kimi | DeltaStore::Bailing | DeltaStore::Olmo
        )
    }

    /// Every key head's features: the width of Q and of K.
    pub fn keys(&self) -> u64 {
        self.key_heads * self.key_dim
    }

    /// Every value head's features: the width of V, z and the output.
    pub fn values(&self) -> u64 {
        self.value_heads * self.value_dim
    }

    /// The convolved channels: Q, K and V.
    pub fn conv_dim(&self) -> u64 {
        2 * self.keys() + self.values()
    }

    /// Value heads per key head.
    pub fn ratio(&self) -> u64 {
        self.value_heads / self.key_heads
    }
}

/// MiniMax's lightning attention. One projection gives q, k and v per head (each head's q, k
/// and v side by side), SiLU on all three; each head carries a head_dim × head_dim memory,
/// S ← exp(−s) S + k ⊗ v, and reads o = Sᵀq, with no softmax and no scale; s is a fixed rate
/// per head and layer (`slope`). The heads' outputs are RMS-normed together, gated by
/// σ(x · W_g), and projected back. The checkpoint stores the rates and the decay tables of the
/// chunked form (`block` positions a chunk) beside the weights.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lightning {
    pub heads: u64,
    pub head_dim: u64,
    /// The chunk length of the stored decay tables (`block_size`).
    pub block: u64,
    pub eps: f64,
    pub act: Act,
}

impl Lightning {
    /// heads × head_dim: the width of q, k, v and the output.
    pub fn inner(&self) -> u64 {
        self.heads * self.head_dim
    }

    /// Head h's decay rate in layer `layer` of `layers`, as the class builds its `slope_rate`:
    /// 2^(−8(h+1)/heads), scaled toward 0 with depth (the last layer barely decays).
    pub fn slope(&self, layer: u64, layers: u64, h: u64) -> f64 {
        let depth = 1.0 - layer as f64 / (layers as f64 - 1.0 + 1e-5) + 1e-5;
        2f64.powf(-8.0 * (h + 1) as f64 / self.heads as f64) * depth
    }
}

/// Griffin's recurrent block (RecurrentGemma). The normed input takes two branches: y =
/// act(x · W_y + b) and x · W_x + b, convolved causally over the last `conv_kernel` positions
/// (with a bias). The RG-LRU then gates the convolved x per channel: from blocks of
/// `width / heads` channels, an input gate i and a recurrence gate r (σ of a block-diagonal
/// projection each); a = exp(−8 · r · softplus(Λ)); h ← a ⊙ h + √(1 − a²) ⊙ i ⊙ x (h = i ⊙ x at
/// position 0, where the state resets). h ⊙ y is projected back; every projection has a bias.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RgLru {
    pub width: u64,
    /// The gates' diagonal blocks.
    pub heads: u64,
    pub conv_kernel: u64,
    pub act: Act,
}

impl RgLru {
    /// The channels of one gate block.
    pub fn block(&self) -> u64 {
        self.width / self.heads
    }
}

/// RWKV-4 (`rwkv`). Time mixing: the normed input x and the previous token's x₋₁ are mixed
/// per channel, k = W_k(μ_k x + (1 − μ_k) x₋₁) and so for v and r; each channel's WKV sums
/// carry Σ exp(k) v and Σ exp(k), decayed by exp(−exp(w)) per token, the current token weighted
/// xLSTM's mLSTM: per head a key × value matrix memory C, a normalizer n and a stabilizer m.
/// From the normed input: q, k (`qk_dim` in all), v and the output gate o (`v_dim`), and per head
/// an input and a forget gate, soft-capped at `gate_cap`. Each token, with f′ = logσ(f):
/// m ← max(f′ + m, i); C ← e^{f′ + m₋ − m} C + e^{i − m} k vᵀ; n the same with k; the head reads
/// h = (q/√d)ᵀ C / (max(|(q/√d)·n|, e^{−m}) + ε), is layer-normed per head, gated by σ(o) and
/// projected back.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MLstm {
    pub heads: u64,
    pub qk_dim: u64,
    pub v_dim: u64,
    pub gate_cap: f64,
    /// The ε beside the normalizer.
    pub eps: f64,
    /// The per-head LayerNorm's ε.
    pub norm_eps: f64,
    /// Every projection, and the per-head LayerNorm, has a bias (`use_bias`).
    pub bias: bool,
    /// `weight_mode` "fused": q, k, v and o stored as one projection (`qkv_opreact`, in that
    /// order), the two gates as another (`ifgate_preact`, input then forget), and the MLP's gate
    /// and up as one (`Mlp::fused_gate_up`).
    pub fused: bool,
}

/// by exp(u + k): wkv = (num + e^{u+k} v) / (den + e^{u+k}); the output is W_o (σ(r) ⊙ wkv).
/// Channel mixing: σ(W_r r) ⊙ W_v ReLU(W_k k)², k and r mixed with the previous token the same
/// way (`Spec::mlp` gives its width and activation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rwkv {
    /// The time mixing's K, V and R width (`attention_hidden_size`); the channel mixing's key
    /// width is `Spec::mlp`'s.
    pub attn: u64,
    /// In inference transformers halves the stream after every `rescale_every`-th layer and
    /// divides layer b's two output projections by 2^⌊b / rescale_every⌋ (their sums stay
    /// in range in half precision); 0: never. Only the norms' ε sees the difference.
    pub rescale_every: u64,
}

impl Rwkv {
    /// How many times the stream has been halved before layer `b`.
    pub fn halvings(&self, b: u64) -> u64 {
        b.checked_div(self.rescale_every).unwrap_or(0)
    }

    /// The stream is halved after layer `b`.
    pub fn halves_after(&self, b: u64) -> bool {
        self.rescale_every > 0 && (b + 1).is_multiple_of(self.rescale_every)
    }
}

/// The factors of MiniMax's residual adds: x ← α · n(x) + β · f(n(x)), per sublayer kind.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StreamMix {
    /// (α, β) after softmax attention, after lightning attention, after the MLP.
    pub attn: (f64, f64),
    pub linear: (f64, f64),
    pub mlp: (f64, f64),
}

impl StreamMix {
    /// (α, β) after the mixer of a layer.
    pub fn mixer(&self, m: Mixer) -> (f64, f64) {
        if m == Mixer::Lightning {
            self.linear
        } else {
            self.attn
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BcdtNorm {
    pub eps: f64,
    /// Each of the three norms has a learned weight (Jamba).
    pub weighted: bool,
}

impl Ssm {
    /// heads × head_dim: the width of x, z and y.
    pub fn inner(&self) -> u64 {
        self.heads * self.head_dim
    }

    /// The convolved channels: x, B and C.
    pub fn conv_dim(&self) -> u64 {
        self.inner() + 2 * self.groups * self.state
    }

    /// The input projection's outputs: z, x, B, C and Δ.
    pub fn in_proj(&self) -> u64 {
        self.inner() + self.conv_dim() + self.heads
    }
}

/// The recurrent mixer a model's recurrent layers run, with its sizes; one kind per model.
#[derive(Debug, Clone, PartialEq)]
pub enum Recurrent {
    /// Mamba2's state-space mixer (`Mixer::Mamba2`, and beside attention in `Mixer::Parallel`).
    Mamba2(Ssm),
    /// Mamba's selective scan (`Mixer::Mamba`).
    Mamba(S6),
    /// LFM2's short convolution (`Mixer::ShortConv`).
    ShortConv(ShortConv),
    /// The gated delta rule (`Mixer::DeltaNet`).
    DeltaNet(DeltaNet),
    /// Lightning attention (`Mixer::Lightning`).
    Lightning(Lightning),
    /// Griffin's recurrent block (`Mixer::RgLru`).
    RgLru(RgLru),
    /// RWKV's time mixing (`Mixer::Rwkv`) and channel mixing (`Ffn::ChannelMix`).
    Rwkv(Rwkv),
    /// xLSTM's matrix memory (`Mixer::MLstm`).
    MLstm(MLstm),
}

/// `spec.ssm()` and the like: the payload of one kind of recurrent mixer, where the model's is
/// that kind; `_mut` to resize it (the scaled-down copies).
macro_rules! recurrent_accessors {
    ($($get:ident, $get_mut:ident, $variant:ident, $ty:ty;)*) => {
        impl super::Spec {
            $(
                pub fn $get(&self) -> Option<&$ty> {
                    if let Some(Recurrent::$variant(x)) = &self.recurrent {
                        Some(x)
                    } else {
                        None
                    }
                }
                pub fn $get_mut(&mut self) -> Option<&mut $ty> {
                    if let Some(Recurrent::$variant(x)) = &mut self.recurrent {
                        Some(x)
                    } else {
                        None
                    }
                }
            )*
        }
    };
}

recurrent_accessors! {
    ssm, ssm_mut, Mamba2, Ssm;
    s6, s6_mut, Mamba, S6;
    short_conv, short_conv_mut, ShortConv, ShortConv;
    delta, delta_mut, DeltaNet, DeltaNet;
    lightning, lightning_mut, Lightning, Lightning;
    rg_lru, rg_lru_mut, RgLru, RgLru;
    rwkv, rwkv_mut, Rwkv, Rwkv;
    mlstm, mlstm_mut, MLstm, MLstm;
}
