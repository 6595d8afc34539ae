//! The FFN: the MLP, mixtures of experts (their routing, storage and clips), and the activations.

use super::*;

#[derive(Debug, Clone, PartialEq)]
pub struct Mlp {
    pub intermediate: u64,
    pub act: Act,
    /// gate ⊙ act(…) · up (SwiGLU, GeGLU) rather than a plain two-matrix MLP.
    pub gated: bool,
    pub bias: bool,
    /// Gate and up are the two halves of one stored tensor (Phi-3 `gate_up_proj`).
    pub fused_gate_up: bool,
    /// A norm (the model's kind) over the activation before the down projection (BitNet's
    /// `ffn_sub_norm`).
    pub sub_norm: bool,
    /// The gated activation is gpt-oss's clamped SwiGLU at this limit, (clamp(up) + 1) · g ·
    /// σ(1.702 g), g = min(gate, limit), in the dense MLP and the shared experts (MiniMax-M3).
    pub clamp: Option<f64>,
    /// The output is multiplied by a learned scalar (Inkling's `global_scale`).
    pub scalar: bool,
}

impl Mlp {
    /// The common gated MLP: down(act(gate(x)) ⊙ up(x)), no biases, gate and up stored apart.
    pub fn gated(intermediate: u64, act: Act) -> Mlp {
        Mlp {
            intermediate,
            act,
            gated: true,
            bias: false,
            fused_gate_up: false,
            sub_norm: false,
            clamp: None,
            scalar: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Moe {
    pub experts: u64,
    pub top_k: u64,
    pub expert_intermediate: u64,
    pub shared_experts: u64,
    pub shared_intermediate: u64,
    /// The shared expert's output is scaled by σ(x · w), a learned per-token gate (Qwen2-MoE).
    pub shared_gate: bool,
    /// The shared expert's gate and up are the two halves of one stored tensor (GraniteMoE-
    /// Shared's `shared_mlp.input_linear`).
    pub shared_fused: bool,
    /// The shared expert's projections carry biases (ERNIE 4.5's `use_bias`).
    pub shared_bias: bool,
    /// The routed and shared outputs are averaged, (R + S) / 2, rather than summed (Cohere 2
    /// MoE's `shared_expert_combination_strategy: average`).
    pub shared_average: bool,
    /// The MoE block's output (routed plus shared) is normed before the residual add, in the
    /// MoE layers only (A.X-K1's `post_mlp_layernorm`).
    pub post_norm: bool,
    pub scoring: Scoring,
    pub norm_topk_prob: bool,
    /// Added to the chosen weights' sum when they are renormalized from scores that do not sum
    /// to 1 (sigmoid): DeepSeek's 1e-20, LFM2-MoE's 1e-6.
    pub renorm_eps: f64,
    pub router_bias: bool,
    /// Per-expert score correction bias used for selection only (DeepSeek V3 noaux_tc).
    pub correction_bias: bool,
    pub expert_bias: bool,
    pub n_group: u64,
    pub topk_group: u64,
    pub routed_scaling: f64,
    /// Clamp on the experts' gate and up inputs (gpt-oss, HY v4).
    pub swiglu_limit: Option<f64>,
    /// With `swiglu_limit`: the clamped inputs go through act(gate) ⊙ up (HY v4) rather than
    /// gpt-oss's (up + 1) · g · σ(1.702 g).
    pub swiglu_plain: bool,
    /// How the routed experts' tensors are stored.
    pub storage: ExpertStorage,
    /// A bias is added to the block's output, after the experts are combined (JetMoE's
    /// `mlp.bias`).
    pub out_bias: bool,
    /// The router's logits are softcapped, c · tanh(l / c), before they are scored (Laguna's
    /// `moe_router_logit_softcapping`).
    pub router_softcap: Option<f64>,
    /// The router reads its input RMS-normed without a weight, times a learned vector and
    /// 1/√hidden (Gemma 4's `router.scale`).
    pub router_norm: bool,
    /// Each chosen expert's weight is multiplied by a learned scale of that expert (Gemma 4's
    /// `router.per_expert_scale`), after the weights are renormalized.
    pub expert_scale: bool,
    /// ZAYA's router, an MLP of its own: the FFN input projected to this width (plus, in every
    /// layer but the first, the previous layer's router state scaled by a learned vector: the
    /// state carried on), RMS-normed, two GELU layers, then logits over the experts and one
    /// more that computes nothing. The softmax's best class after a stored balancing bias is
    /// chosen (top-1); the extra class gives 0.
    pub router_mlp: Option<u64>,
    /// The experts' gated activation with softcaps (Inkling 2): cap_g(g) · σ(g) · cap_u(u), c ·
    /// tanh(x / c) each, (gate cap, up cap).
    pub glu_softcaps: Option<(f64, f64)>,
    /// Zero-computation experts (LongCat-Flash): the router scores `experts` + this many, and a
    /// chosen one of these returns its input, weighted. They hold no weights (transformers 5.24
    /// still built a gate and up projection for each).
    pub zero_experts: u64,
    /// Layers that choose their experts by token id, from a stored table [vocab, top_k]
    /// (DeepSeek-V4's `tid2eid`), weighting them by the router's scores as usual.
    pub hash_layers: Option<LayerSet>,
    /// The shared experts' gate and up are clamped as the routed experts' are (`swiglu_limit`,
    /// DeepSeek-V4).
    pub shared_clamp: bool,
    /// Each routed expert's output is RMS-normed with a weight of that expert's, before it is
    /// weighted (Ergo's `post_expert_norm`, one [E, hidden] tensor).
    pub expert_out_norm: bool,
    /// The shared expert's output is RMS-normed with a weight of its own before it is added
    /// (Ergo's `shared_experts.norm`).
    pub shared_out_norm: bool,
    /// Per-layer clips after the activation (Ling's `swiglu_limits`): act(gate) ≤ L and
    /// |up| ≤ L before their product, L of the layer, 0 for none.
    pub act_clips: Option<ActClips>,
}

/// Per-layer limits on the gated activation, act(gate) ≤ L and −L ≤ up ≤ L, for the routed and
/// the shared experts apart; one per layer, 0 where a layer clips nothing.
#[derive(Debug, Clone, PartialEq)]
pub struct ActClips {
    pub routed: Vec<f64>,
    pub shared: Vec<f64>,
}

impl ActClips {
    /// Layer `layer`'s limit for the routed experts (`shared`: the shared ones), if it clips.
    pub fn limit(&self, layer: usize, shared: bool) -> Option<f64> {
        let list = if shared { &self.shared } else { &self.routed };
        list.get(layer).copied().filter(|&l| l != 0.0)
    }
}

impl Moe {
    /// The routed experts that run for one token, at most: the top-k, or every routed expert
    /// where the router may choose more than there are (it also scores zero-computation ones).
    pub fn active(&self) -> u64 {
        self.top_k.min(self.experts)
    }
}

/// How a layer's routed experts are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpertStorage {
    /// Tensors of their own for each expert (`experts.{e}.gate_proj` …).
    PerExpert,
    /// One tensor per projection holding every expert, experts first, gate and up fused: each
    /// expert [in, out] (gpt-oss and Llama 4 `experts.gate_up_proj`, [E, hidden, 2·inter]), or
    /// with `out_in` [out, in] (GraniteMoE's `input_linear`, [E, 2·inter, hidden]). With
    /// `interleaved`, gate and up alternate column by column (gpt-oss) rather than being the
    /// fused tensor's two halves.
    Stacked { out_in: bool, interleaved: bool },
    /// One 2-D tensor per projection, expert e in rows e·f … (e+1)·f; gate and up apart and
    /// stored [out, in], down [in, out] (DBRX's `w1`, `v1`, `w2`).
    Flat,
}

impl ExpertStorage {
    /// Every expert in one tensor per projection (stacked or flat), not one tensor each.
    pub fn grouped(self) -> bool {
        self != ExpertStorage::PerExpert
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scoring {
    Softmax,
    Sigmoid,
    /// Softmax over the top-k logits only (gpt-oss).
    TopkSoftmax,
    /// Sigmoid of the top-k logits, scaling each chosen expert's input (Llama 4).
    TopkSigmoid,
    /// Experts chosen by their logits plus the correction bias, weighted by the sigmoid of their
    /// logits (Kolibri: the bias joins before the sigmoid, not after as in DeepSeek-V3).
    SigmoidBiasedLogits,
    /// Inkling: experts chosen by σ(L) plus the correction bias over the routed ones; the chosen
    /// and the shared experts (which the router's last rows score) each weighted by its σ(L)
    /// normalized over them all, times `routed_scaling` and a learned scalar. The shared experts
    /// are each an MLP of their own, weighted so.
    SigmoidSink,
    /// √softplus of the logits, chosen after the correction bias (DeepSeek-V4).
    SqrtSoftplus,
    /// PhiMoE's SparseMixer at inference: two experts, the best logit and then the best of the
    /// rest, each weighted by a softmax over the logits within a relative `eps` · 2 of it (the
    /// others masked out, and for the second the first too).
    SparseMixer {
        eps: f64,
    },
}

impl Scoring {
    /// SparseMixer's relative `eps`; 0 for every other scoring, which has none.
    pub fn jitter_eps(self) -> f64 {
        match self {
            Scoring::SparseMixer { eps } => eps,
            Scoring::Softmax
            | Scoring::Sigmoid
            | Scoring::TopkSoftmax
            | Scoring::TopkSigmoid
            | Scoring::SigmoidBiasedLogits
            | Scoring::SigmoidSink
            | Scoring::SqrtSoftplus => 0.0,
        }
    }
}

/// A layer's feed-forward sublayer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ffn {
    /// The dense MLP (`Spec::mlp`).
    Dense,
    /// The mixture of experts (`Spec::moe`).
    Moe,
    /// RWKV's channel mixing (`Spec::rwkv`): the input mixed with the one before it, then
    /// σ(r) ⊙ W_v ReLU(W_k x)².
    ChannelMix,
    /// The dense MLP and the mixture of experts side by side (Gemma 4): the MLP reads the FFN's
    /// norm of the stream and is normed after; the experts read a norm of their own and are normed
    /// after; the router reads the stream itself; the two outputs are summed before the FFN's
    /// post-norm.
    DenseAndMoe,
    /// The dense MLP, and beside it on the same input the mixture of experts, whose output joins
    /// the stream at the end of the next layer (LongCat-Flash's shortcut-connected MoE, whose
    /// checkpoint layer i holds layers 2i and 2i + 1).
    Shortcut,
    /// None: the layer is its mixer alone (Mamba2).
    None,
}

/// An MLP activation, as transformers' `ACT2FN` computes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    /// x·σ(x) (`silu`, `swish`).
    Silu,
    /// x·Φ(x) with the exact normal CDF (`gelu`).
    Gelu,
    /// GELU's tanh approximation (`gelu_new`, `gelu_pytorch_tanh`, `gelu_fast`, `gelu_accurate`).
    GeluTanh,
    /// x·σ(1.702·x) (`quick_gelu`).
    QuickGelu,
    Relu,
    /// relu(x)² (`relu2`).
    Relu2,
    /// xIELU (Apertus): αₚx² + βx for x > 0, else αₙ(expm1(min(x, ε)) − x) + βx, with αₚ and
    /// αₙ learned per layer (stored through softplus) and β, ε stored beside them.
    Xielu,
}

impl Act {
    /// The activation a config names, or `None` for one anatomy does not compute.
    pub fn parse(name: &str) -> Option<Act> {
        Some(match name {
            "silu" | "swish" => Act::Silu,
            "gelu" | "gelu_python" => Act::Gelu,
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" | "gelu_accurate"
            | "gelu_python_tanh" => Act::GeluTanh,
            "quick_gelu" => Act::QuickGelu,
            "relu" => Act::Relu,
            "relu2" => Act::Relu2,
            "xielu" => Act::Xielu,
            _ => return None,
        })
    }

    /// The names `parse` accepts, for error messages.
    pub const NAMES: &'static str =
        "silu, swish, gelu, gelu_python, gelu_new, gelu_pytorch_tanh, gelu_fast, \
        gelu_accurate, gelu_python_tanh, quick_gelu, relu, relu2, xielu";

    /// Short display name (`SiLU`, `GELU-tanh`).
    pub fn label(self) -> &'static str {
        match self {
            Act::Silu => "SiLU",
            Act::Gelu => "GELU",
            Act::GeluTanh => "GELU-tanh",
            Act::QuickGelu => "QuickGELU",
            Act::Relu => "ReLU",
            Act::Relu2 => "ReLU²",
            Act::Xielu => "xIELU",
        }
    }

    /// The name in words, for prose.
    pub fn words(self) -> &'static str {
        match self {
            Act::Silu => "SiLU",
            Act::Gelu => "GELU (exact, with the error function)",
            Act::GeluTanh => "tanh-approximated GELU",
            Act::QuickGelu => "quick GELU, x·σ(1.702x)",
            Act::Relu => "ReLU",
            Act::Relu2 => "squared ReLU",
            Act::Xielu => {
                "xIELU, a learned piecewise activation (quadratic above zero, exponential below)"
            }
        }
    }
}
