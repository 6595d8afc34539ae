//! The Llama lineage: a decoder of RMSNorm, RoPE attention and a gated MLP (or routed experts),
//! read for every family whose registry row gives a `LlamaLike`: Llama, Mistral, Qwen 2/3 and
//! their MoEs, Mixtral, SmolLM3, Phi-3, OLMo 2, Gemma 1, GLM-4, Seed-OSS … The row says what
//! differs: the config class's defaults, where the biases come from, the norms' placement, the
//! sliding windows, the experts. No family is named in this code.

use super::{
    heads, layer_count, layer_types, plain_attention, plain_moe, positive, rope, top_k, HeadDim,
    RopeDefaults,
};
use crate::config::Config;
use crate::error::Result;
use crate::layers::LayerSet;
use crate::spec::*;

mod hybrid;
pub(crate) mod layers;
mod scales;
use hybrid::{conv_type, conv_types};
pub use hybrid::{Hybrid, HybridLayers, HybridMixer, TypePattern};
use layers::{cross_attention_layers, experts, llama4_scaling, null_type_rope, rope_layers, spans};
use scales::ntk_alpha;
pub use scales::{Multipliers, Mup};

/// A config class's defaults for the fields every family reads.
#[derive(Debug, Clone, Copy)]
pub struct Defaults {
    pub vocab: u64,
    pub hidden: u64,
    pub intermediate: u64,
    pub layers: u64,
    pub heads: u64,
    /// `None`: as many as query heads.
    pub kv_heads: Option<u64>,
    pub head_dim: HeadDim,
    pub context: u64,
    pub eps: f64,
    pub theta: f64,
    pub tied: bool,
    pub act: &'static str,
}

/// Where a bias comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bias {
    Never,
    Always,
    /// The config's flag of this name, with the class default.
    Key(&'static str, bool),
}

/// Which layers slide their attention window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Windows {
    None,
    /// `sliding_window` (default as given) on every layer; null for none (Mistral, Mixtral, Phi-3).
    Every(Option<u64>),
    /// Qwen2/3: with `use_sliding_window`, `sliding_window` (default 4096) from layer
    /// `max_window_layers` on, unless `layer_types` names the layers.
    Qwen,
    /// `layer_types` names the sliding layers, `sliding_window` (default as given) their window;
    /// without `layer_types`, `unlisted` says which slide.
    LayerTypes {
        window: Option<u64>,
        unlisted: Unlisted,
    },
    /// SmolLM3: with `use_sliding_window`, the layers without RoPE slide.
    NoRopeLayers,
    /// Qwen2-MoE: with `use_sliding_window`, `sliding_window` (default 4096) on the even-indexed
    /// layers below `max_window_layers`, unless `layer_types` names the layers.
    QwenMoe,
    /// `layer_types` of short convolutions and attention ("conv", "full_attention",
    /// "sliding_attention"), else the class's pattern; `sliding_window` (default as given) on the
    /// sliding ones (LFM3).
    ConvTypes {
        window: Option<u64>,
        pattern: TypePattern,
    },
}

/// Which layers slide when the config has no `layer_types`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Unlisted {
    Full,
    /// Every layer, when there is a window (Ministral).
    Sliding,
    /// Every n-th layer (i + 1 a multiple of n) is full, the others slide (OLMo 3: 4).
    FullEvery(u64),
    /// The same, n from this key with this default (EXAONE 4's `sliding_window_pattern`).
    FullEveryKey(&'static str, u64),
    /// Layer i is full when i is a multiple of n, so the first is full (CWM: 4).
    FullFirstOfEvery(u64),
    /// The first layer and every n-th (i + 1 a multiple of n) are full (MiMo-V2-Flash: 6).
    FullFirstAndEvery(u64),
    /// The first two layers, every fourth from layer 1 and the last are full (Flint).
    FullFirstTwoEveryFourthLast,
    /// Every n-th layer (i + 1 a multiple of n) and the last are full (Beam: 6).
    FullEveryAndLast(u64),
    /// The first `first_k_dense_replace` (default 0) layers full every
    /// `prefix_dense_sliding_window_pattern`-th (default 1), the rest counted afresh and full
    /// every `sliding_window_pattern`-th (default 4) (Cohere 2 MoE).
    DensePrefix,
}

/// Which layers skip RoPE.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NoRope {
    None,
    /// `no_rope_layers` (1 = RoPE) or every `no_rope_layer_interval`-th layer (SmolLM3).
    Interval,
    /// With a sliding window, only the sliding layers rotate; the full ones use no positions
    /// (EXAONE 4).
    FullLayers,
    /// As `FullLayers`, but with `prefix_dense_sliding_window_pattern` 1 (the default) the dense
    /// layers rotate too (Cohere 2 MoE's `force_rope`).
    FullLayersDenseRotate,
    /// `layer_rope_theta`: each layer's RoPE base, 0 for none (GraniteSWA). anatomy draws one
    /// base, so every non-zero entry must be the model's.
    LayerTheta,
    /// `position_embedding_type`: "rope" rotates every layer; null (the default) or "nope" none
    /// (GraniteMoeHybrid).
    PositionType,
    /// No layer rotates: order comes from the recurrent layers (Jamba).
    All,
    /// `rope_parameters` holds one entry per layer type, each a dict, or null for a type without
    /// positions; a type in use must have its entry (Cohere Compass). Their M-RoPE sections
    /// change nothing for text, whose three position axes agree.
    NullTypes,
    /// As `NullTypes`, but without `rope_parameters` the class's own: the sliding layers
    /// rotate, the full ones use no positions (Beam).
    NullTypesOrFullLayers,
}

/// Scoring names a config may give, each with its `Scoring`.
pub type ScoringNames = &'static [(&'static str, Scoring)];

/// Routed experts, as a config class reads them.
// Rows are consts, which a boxed variant could not be.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Experts {
    None,
    Routed(Routed),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Routed {
    /// The key of the expert count and its default (`num_local_experts`: 8).
    pub count: (&'static str, u64),
    /// The default of `num_experts_per_tok`.
    pub top_k: u64,
    /// The key of an expert's width and its default; `None`: `intermediate_size`.
    pub width: Option<(&'static str, u64)>,
    /// Whether the chosen experts' weights are renormalized to sum to 1: always, or by
    /// `norm_topk_prob` with this default.
    pub renormalize: Renormalize,
    /// Which layers have experts.
    pub layers: MoeLayers,
    /// With no experts the model is dense (Qwen3-MoE); otherwise such a config is refused.
    pub zero_is_dense: bool,
    /// With no experts the FFN is the shared MLP alone, at its width (GraniteMoeHybrid); the
    /// layout names the dense MLP as the shared one.
    pub zero_is_shared: bool,
    /// One shared expert beside the routed ones.
    pub shared: Option<SharedMlp>,
    /// Softmax over all experts then top-k, or softmax over the top-k logits (GraniteMoE).
    pub scoring: Scoring,
    /// Every expert of a layer in one [E, out, in] tensor per projection (GraniteMoE).
    pub stacked_out_in: bool,
    /// Every expert of a layer in one [E, in, out] tensor per projection, gate and up the two
    /// halves of one (Aria's `fc1`, `fc2`).
    pub stacked_in_out: bool,
    /// A per-expert bias steers the choice of experts, not their weights (MiniMax-M2; by
    /// LFM2-MoE's `use_expert_bias`).
    pub correction_bias: Bias,
    /// Added to the sum of sigmoid-scored weights when they are renormalized.
    pub renorm_eps: f64,
    /// Experts are chosen within the best `topk_group` of `n_group` groups (DeepSeek-V3's
    /// routing), with those keys' defaults.
    pub groups: Option<(u64, u64)>,
    /// The chosen experts' weights are multiplied by this key's value, with its default
    /// (`routed_scaling_factor`).
    pub scaling: Option<(&'static str, f64)>,
    /// A key naming the scoring, its default and each name's `Scoring`; otherwise `scoring`.
    pub scoring_key: Option<(&'static str, &'static str, ScoringNames)>,
}

/// How a family says which layers have experts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MoeLayers {
    All,
    /// Every `decoder_sparse_step`-th layer but those in `mlp_only_layers` (Qwen MoEs; absent
    /// or null, this list: Flint's first two layers).
    Qwen(&'static [u64]),
    /// Every `moe_layer_interval`-th layer from `moe_layer_start_index` to
    /// `moe_layer_end_index` (−1: the last) (ERNIE 4.5).
    Ernie,
    /// The first layers dense, as many as this key says (with its default) (AFMoE's
    /// `num_dense_layers`).
    FirstDense(&'static str, u64),
    /// `mlp_layer_types` ("dense" or "sparse"); without it the first k layers are dense, k from
    /// the key given (`first_k_dense_replace`) with this default, or the default alone.
    Types(Option<&'static str>, u64),
    /// Layer i has experts where i % period = offset (Jamba's `expert_layer_period`,
    /// `expert_layer_offset`).
    Period(Period),
}

/// LFM2's derived MLP width: the keys of the flag, the multiplier and the multiple, with their
/// defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FfAdjust {
    pub flag: (&'static str, bool),
    pub multiplier: (&'static str, f64),
    pub multiple_of: (&'static str, u64),
}

impl FfAdjust {
    /// int(2 · w / 3), then int(multiplier · it) rounded up to a multiple, as the class computes
    /// it (the multiplier may be null: then no more than the two thirds).
    fn width(self, cfg: &Config, w: u64) -> Result<u64> {
        let multiple = cfg.size(self.multiple_of.0, Some(self.multiple_of.1))?;
        if !cfg.flag(self.flag.0, self.flag.1)? {
            cfg.get(self.multiplier.0);
            return Ok(w);
        }
        let w = 2 * w / 3;
        let m = match cfg.get(self.multiplier.0) {
            None => return Ok(w),
            Some(_) => cfg.float(self.multiplier.0, self.multiplier.1)?,
        };
        if !(m > 0.0 && m.is_finite()) {
            return Err(cfg.err(
                self.multiplier.0,
                format!("is {m}; it must be a positive number"),
            ));
        }
        let w = (m * w as f64) as u64;
        w.div_ceil(multiple).checked_mul(multiple).ok_or_else(|| {
            cfg.err(
                self.multiplier.0,
                format!("is {m}; the MLP width it gives does not fit in 64 bits"),
            )
        })
    }
}

/// Whether the chosen experts' weights are renormalized to sum to 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Renormalize {
    Always,
    /// Never, whatever a config says (Jamba).
    Never,
    /// As `norm_topk_prob` says, with this default.
    Key(bool),
}

/// Every layer i with i % period = offset: the keys of both and their defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Period {
    pub period: (&'static str, u64),
    pub offset: (&'static str, u64),
}

impl Period {
    fn layers(self, cfg: &Config, layers: u64) -> Result<Vec<bool>> {
        let p = cfg.size(self.period.0, Some(self.period.1))?;
        let o = cfg.count(self.offset.0, self.offset.1)?;
        if o >= p {
            return Err(cfg.err(
                self.offset.0,
                format!(
                    "is {o}; it must be less than {} ({p}), or no layer would be one",
                    self.period.0
                ),
            ));
        }
        Ok((0..layers).map(|i| i % p == o).collect())
    }
}

/// A shared expert (MLP) beside the routed ones.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SharedMlp {
    /// The key of its width and that width's default.
    pub width: (&'static str, u64),
    /// A learned sigmoid gate scales its output (Qwen2-MoE).
    pub gate: bool,
    /// Gate and up are one stored tensor (GraniteMoE-Shared's `input_linear`).
    pub fused: bool,
    /// A width of 0 means no shared expert (GraniteMoE-Shared) rather than an error.
    pub optional: bool,
    /// The key of a count of experts that share the MLP, its width that many times the width
    /// key's (ERNIE 4.5's `moe_num_shared_experts`, default 2; 0 for none).
    pub count: Option<(&'static str, u64)>,
    /// Its projections have biases when the dense MLP's do (ERNIE 4.5's `use_bias`).
    pub bias_as_mlp: bool,
    /// A count of 0 still builds one shared MLP, of the dense MLP's width (HY-V3's
    /// `intermediate_size or config.intermediate_size` reads a width of 0 as unset).
    pub zero_count_is_dense: bool,
    /// A key choosing `"sum"` or `"average"` of the routed and shared outputs, with its default
    /// (Cohere 2 MoE's `shared_expert_combination_strategy`); otherwise they are summed.
    pub combine_key: Option<(&'static str, &'static str)>,
}

impl SharedMlp {
    /// A plain shared expert of this width.
    pub const fn of(key: &'static str, default: u64) -> SharedMlp {
        SharedMlp {
            width: (key, default),
            gate: false,
            fused: false,
            optional: false,
            count: None,
            bias_as_mlp: false,
            zero_count_is_dense: false,
            combine_key: None,
        }
    }
}

impl Routed {
    /// Mixtral: `num_local_experts` (8) of width `intermediate_size`, top-2 by softmax,
    /// renormalized, in every layer.
    pub const MIXTRAL: Routed = Routed {
        count: ("num_local_experts", 8),
        top_k: 2,
        width: None,
        renormalize: Renormalize::Always,
        layers: MoeLayers::All,
        zero_is_dense: false,
        zero_is_shared: false,
        shared: None,
        scoring: Scoring::Softmax,
        stacked_out_in: false,
        stacked_in_out: false,
        correction_bias: Bias::Never,
        renorm_eps: 1e-20,
        groups: None,
        scaling: None,
        scoring_key: None,
    };
}

/// RoPE types a class reads its own way, beside the ones every class shares.
#[derive(Debug, Clone, Copy)]
pub enum RopeTypes {
    /// Only the types every class reads.
    Shared,
    /// Phi-3's: its own `original_max_position_embeddings` (4096), and `su` and `yarn` read as
    /// `longrope`.
    Phi3,
    /// Qwen2-VL's language models': `mrope` read as `default`. The multimodal RoPE's sections
    /// rotate a text token as plain RoPE does (its temporal, height and width positions are
    /// equal), so text needs no more.
    Mrope,
    /// HunYuan's: `dynamic` with an `alpha` is NTK-alpha, a base stretched to θ·α^(d/(d−2))
    /// for every length (`ntk_alpha`).
    HunYuan,
    /// HunyuanOCR's: HunYuan's, with `xdrope` read as `dynamic` (its M-RoPE sections rotate a
    /// text token as plain RoPE does).
    HunYuanVl,
}

/// Everything about a Llama-like family that is data.
#[derive(Debug, Clone, Copy)]
pub struct LlamaLike {
    pub defaults: Defaults,
    pub qkv_bias: Bias,
    pub o_bias: Bias,
    pub mlp_bias: Bias,
    pub qk_norm: QkNorm,
    /// A flag that switches the QK norm on, with its class default (Phi's `qk_layernorm`);
    /// otherwise it is always on.
    pub qk_norm_key: Option<(&'static str, bool)>,
    pub place: NormPlace,
    /// Norm weights applied as (1 + w), embeddings scaled by √hidden (Gemma).
    pub gemma_norms: bool,
    /// Norm weights applied as (1 + w), embeddings as they are (Nemotron's LayerNorm1P).
    pub one_plus: bool,
    /// GPT-J's rotary: base 10000 and no scaling, whatever the config says (the class reads no
    /// RoPE keys), over the first `rotary_dim` dims of each head (default as given; null for
    /// all of them).
    pub gptj_rope: Option<Option<u64>>,
    /// `intermediate_size` defaults to 4 × hidden (GPT-J's `n_inner`).
    pub inner_x4: bool,
    /// The MLP's width is hidden × this key, with its default (GPT-NeoX-Japanese's
    /// `intermediate_multiple_size`); the class has no `intermediate_size`.
    pub inner_multiple_key: Option<(&'static str, u64)>,
    /// The last layer's output projection alone has a bias (GPT-NeoX-Japanese).
    pub o_bias_last: bool,
    /// Without a RoPE dict the class uses this scaling at its default base, and ignores a
    /// top-level `rope_theta` (Apertus: llama3 ×8 at 12M).
    pub rope_scaling_default: Option<fn() -> RopeScaling>,
    /// `rope_parameters` holds one dict per layer type; without it the full-attention layers
    /// rotate at the first base and the sliding ones at the second, and a top-level `rope_theta`
    /// is ignored (Mellum: 500k and 10k).
    pub rope_by_type: Option<super::ByType>,
    /// A flat `rope_scaling` scales the full-attention layers only; sliding layers rotate at the
    /// same base, unscaled (OLMo 3's per-layer-type RoPE).
    pub scaling_full_only: bool,
    /// A `rotary_dim` count sets the rotated fraction as rotary_dim / head_dim when the config
    /// gives no `partial_rotary_factor` (MiniMax-M2's released configs).
    pub rotary_dim_key: bool,
    /// ALiBi instead of RoPE, with these slopes (the class reads no RoPE keys).
    pub alibi: Option<fn(u64) -> Vec<f64>>,
    /// A flag that adds a norm after each sublayer (sandwich norms) when true, with its default
    /// (HyperCLOVA X's `use_post_norm`); otherwise `place` holds.
    pub post_norm_key: Option<(&'static str, bool)>,
    /// A sub-dict holding the attention's `clip_qkv` and `softmax_scale` (MPT's `attn_config`).
    pub attn_config: Option<&'static str>,
    /// Queries scaled up with position by the RoPE dict's `llama_4_scaling_beta` every
    /// `original_max_position_embeddings` positions (Ministral 3), with these defaults for a
    /// config without the dict.
    pub llama4_scaling: Option<(f64, u64)>,
    /// A norm right after the embedding lookup (Bloom's `word_embeddings_layernorm`).
    pub embed_norm: bool,
    /// A flag that scales the embeddings by √hidden, with its default (AFMoE's `mup_enabled`).
    pub embed_sqrt_key: Option<(&'static str, bool)>,
    /// An output gate on the attention, σ(x · W_g) on the heads (AFMoE).
    pub out_gate: Option<OutGate>,
    /// The key that turns `out_gate` on, with its default (LFM3's `use_attention_gate`).
    pub out_gate_key: Option<(&'static str, bool)>,
    /// Differential attention (DiffLlama); needs an even number of K/V heads.
    pub differential: bool,
    /// LongRoPE as PhiMoE reads it: short factors always, `short_mscale`/`long_mscale` on cos
    /// and sin.
    pub longrope_mscale: bool,
    /// The key of the LM head's row count when it is pruned below the vocabulary (Apertus
    /// 1.5's `output_vocab_size`; null: unpruned). A tied head is the whole embedding matrix.
    pub head_rows_key: Option<&'static str>,
    /// RoPE rotates backwards, sin negated (NanoChat's rotate_half is (x₂, −x₁)).
    pub reversed_rope: bool,
    /// A tanh softcap on the logits: its key and class default (null in a config: none).
    pub final_softcap: Option<(&'static str, f64)>,
    /// BitNet's sub-norms: over the concatenated heads before the output projection and over
    /// the activation before the down projection.
    pub sub_norms: bool,
    /// The class has no `num_key_value_heads`: every query head has its own K and V (Persimmon).
    pub mha_only: bool,
    /// The class leaves `num_key_value_heads` unset and its attention fails without it
    /// (Nemotron): a config must give it.
    pub kv_heads_required: bool,
    pub qkv: Qkv,
    pub fused_gate_up: bool,
    pub interleaved_rope: bool,
    /// The class default of `partial_rotary_factor`.
    pub partial: f64,
    pub windows: Windows,
    pub no_rope: NoRope,
    pub experts: Experts,
    pub layout: Layout,
    /// How the class reads RoPE types of its own.
    pub rope_types: RopeTypes,
    /// Activation names the class rewrites (Gemma reads `gelu` as `gelu_pytorch_tanh`).
    pub act_renames: &'static [(&'static str, &'static str)],
    /// Flags that, when true, turn the model into something anatomy does not draw (Gemma's
    /// `use_bidirectional_attention`): read, and refused when set.
    pub refuse_when_true: &'static [&'static str],
    /// The norm's kind (RMSNorm, LayerNorm with or without a shift, or one without parameters),
    /// and the key of its epsilon.
    pub norm: NormKind,
    /// None: the class fixes ε at the default (OLMo's weightless LayerNorm).
    pub eps_key: Option<&'static str>,
    /// When this key is set (not null) the norms are RMSNorms with it as ε, whatever `norm`
    /// says (Cohere 2 MoE's `rms_norm_eps`).
    pub rms_key: Option<&'static str>,
    /// The key of the dense layers' MLP width, `intermediate_size` when absent or null (Cohere 2
    /// MoE's `prefix_dense_intermediate_size`; its experts are `intermediate_size` wide).
    pub dense_width_key: Option<&'static str>,
    /// The MLP's width is derived from `intermediate_size` as LFM2's class does: two thirds of
    /// it, times a multiplier, rounded up to a multiple, when a flag says so.
    pub ff_adjust: Option<FfAdjust>,
    /// gate ⊙ act(…) · up, or a plain up, act, down.
    pub gated: bool,
    pub block: Block,
    /// A flag that chooses `block` over the sequential one, with its default (GPT-NeoX's
    /// `use_parallel_residual`).
    pub parallel_key: Option<(&'static str, bool)>,
    /// The LM head has a bias.
    pub head_bias: Bias,
    /// Keys of the RoPE base and of the rotated fraction.
    pub theta_key: &'static str,
    pub partial_key: Option<&'static str>,
    /// The class refuses attention and MLP biases that differ (InternLM3).
    pub same_bias: bool,
    /// `clip_qkv` (default none) clamps Q, K and V (OLMo, OLMoE).
    pub clip_qkv: bool,
    /// The logits are multiplied by this key's value, with its default (Cohere's `logit_scale`).
    pub logit_scale: Option<(&'static str, f64)>,
    /// μP multipliers on the embeddings, residual adds, attention scores and logits.
    pub multipliers: Option<Mup>,
    /// A learned per-head sink logit joins each softmax (GraniteSWA, as gpt-oss).
    pub sinks: bool,
    /// The sliding-window layers' attention differs (MiMo-V2-Flash).
    pub sliding_own: Option<SlidingOwn>,
    /// The key of V's head width and its default, where V's heads are narrower than Q's and
    /// K's (MiMo-V2-Flash's `v_head_dim`: 128); otherwise V's heads are `head_dim` wide.
    pub v_head_dim_key: Option<(&'static str, u64)>,
    /// The key of a factor on the values and its default, null for none (MiMo-V2-Flash's
    /// `attention_value_scale`).
    pub v_scale_key: Option<(&'static str, f64)>,
    /// A key giving the window less the query's own position; where present it wins over
    /// `sliding_window`, which is it + 1 (MiMo-V2-Flash's `sliding_window_size`).
    pub window_less_one_key: Option<&'static str>,
    /// Dynamic mask attention, the key of its kept-keys count and that count's default (Doge's
    /// `keep_window_size`: 2048).
    pub dynamic_mask_key: Option<(&'static str, u64)>,
    /// Learned vectors scale the residual stream where each sublayer joins it (Doge).
    pub residual_scales: bool,
    /// The key listing the layers that cross-attend to an image, and the class's list where it
    /// is absent (Mllama's `cross_attention_layers`).
    pub cross_layers: Option<(&'static str, &'static [u64])>,
    /// The embedding table has this many rows past `vocab_size`, which the head does not score
    /// (Mllama: 8).
    pub extra_embed_rows: u64,
    /// Each residual add is scaled to keep the stream's scale with depth (Beam).
    pub depth_scaled: bool,
    /// The class's own query scale, fixed in its code rather than read from the config (Beam's
    /// in its layers without RoPE).
    pub query_scale: Option<QueryScale>,
    /// A key listing each layer's query heads (Laguna's `num_attention_heads_per_layer`).
    pub heads_per_layer_key: Option<&'static str>,
    /// A softplus output gate, per head or per head feature as this key says (Laguna's
    /// `gating`: true or "per-head", else "per-element").
    pub softplus_gate_key: Option<&'static str>,
    /// A key softcapping the router's logits, 0 for none (Laguna's
    /// `moe_router_logit_softcapping`).
    pub router_softcap_key: Option<&'static str>,
    /// Some layers mix by Mamba2 instead of attention (Bamba): where its settings are, and
    /// which layers attend.
    pub hybrid: Option<Hybrid>,
}

/// How the sliding-window layers' attention differs from the full layers'.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlidingOwn {
    /// Their K/V heads are the config's this many times.
    pub kv_mult: u64,
    /// A learned per-head sink logit joins their softmax (and only theirs).
    pub sinks: bool,
}

impl LlamaLike {
    /// Llama's own: no biases by default (`attention_bias`, `mlp_bias`), pre-norm, full attention.
    pub const fn llama(defaults: Defaults) -> LlamaLike {
        LlamaLike {
            defaults,
            qkv_bias: Bias::Key("attention_bias", false),
            o_bias: Bias::Key("attention_bias", false),
            mlp_bias: Bias::Key("mlp_bias", false),
            qk_norm: QkNorm::None,
            qk_norm_key: None,
            place: NormPlace::Pre,
            gemma_norms: false,
            one_plus: false,
            kv_heads_required: false,
            mha_only: false,
            sub_norms: false,
            gptj_rope: None,
            inner_x4: false,
            inner_multiple_key: None,
            o_bias_last: false,
            alibi: None,
            attn_config: None,
            post_norm_key: None,
            llama4_scaling: None,
            embed_norm: false,
            embed_sqrt_key: None,
            out_gate: None,
            out_gate_key: None,
            differential: false,
            longrope_mscale: false,
            head_rows_key: None,
            reversed_rope: false,
            final_softcap: None,
            rotary_dim_key: false,
            scaling_full_only: false,
            rope_scaling_default: None,
            rope_by_type: None,
            qkv: Qkv::Separate,
            fused_gate_up: false,
            interleaved_rope: false,
            partial: 1.0,
            windows: Windows::None,
            no_rope: NoRope::None,
            experts: Experts::None,
            layout: Layout::Llama,
            rope_types: RopeTypes::Shared,
            act_renames: &[],
            refuse_when_true: &[],
            norm: NormKind::Rms,
            eps_key: Some("rms_norm_eps"),
            rms_key: None,
            dense_width_key: None,
            ff_adjust: None,
            gated: true,
            block: Block::Sequential,
            parallel_key: None,
            head_bias: Bias::Never,
            theta_key: "rope_theta",
            partial_key: Some("partial_rotary_factor"),
            same_bias: false,
            clip_qkv: false,
            multipliers: None,
            sinks: false,
            logit_scale: None,
            sliding_own: None,
            v_head_dim_key: None,
            v_scale_key: None,
            window_less_one_key: None,
            dynamic_mask_key: None,
            residual_scales: false,
            cross_layers: None,
            extra_embed_rows: 0,
            depth_scaled: false,
            query_scale: None,
            hybrid: None,
            heads_per_layer_key: None,
            softplus_gate_key: None,
            router_softcap_key: None,
        }
    }
}

fn bias(cfg: &Config, b: Bias) -> Result<bool> {
    match b {
        Bias::Never => Ok(false),
        Bias::Always => Ok(true),
        Bias::Key(k, default) => cfg.flag(k, default),
    }
}

pub fn load(
    cfg: &Config,
    f: &LlamaLike,
    model_type: &str,
    family: &str,
    name: &str,
) -> Result<Spec> {
    let d = &f.defaults;
    for key in f.refuse_when_true {
        if cfg.flag(key, false)? {
            return Err(cfg.err(
                key,
                "is true: a variant anatomy does not draw yet; it reads this family with the key false (remove it, or give false)",
            ));
        }
    }
    let hidden = cfg.size("hidden_size", Some(d.hidden))?;
    let vocab = cfg.size("vocab_size", Some(d.vocab))?;
    let layers = layer_count(cfg, &["num_hidden_layers"], Some(d.layers))?;
    if f.kv_heads_required && !cfg.has("num_key_value_heads") {
        return Err(cfg.err(
            "num_key_value_heads",
            "is missing; this model type has no default K/V head count, so the config must give one",
        ));
    }
    let (heads, kv_heads, head_dim) = if f.mha_only {
        let heads = cfg.size("num_attention_heads", Some(d.heads))?;
        (
            heads,
            heads,
            super::head_dim(cfg, hidden, heads, d.head_dim)?,
        )
    } else {
        heads(cfg, hidden, Some(d.heads), d.kv_heads, d.head_dim)?
    };
    let intermediate = if f.inner_x4 {
        match cfg.opt_size("intermediate_size")? {
            Some(i) => i,
            None => hidden
                .checked_mul(4)
                .ok_or_else(|| cfg.err("hidden_size", format!("is {hidden}; 4 × it overflows")))?,
        }
    } else if let Some((key, default)) = f.inner_multiple_key {
        let m = cfg.size(key, Some(default))?;
        hidden
            .checked_mul(m)
            .ok_or_else(|| cfg.err(key, format!("is {m}; hidden_size × it overflows")))?
    } else {
        cfg.size("intermediate_size", Some(d.intermediate))?
    };
    let intermediate = match f.ff_adjust {
        Some(a) => a.width(cfg, intermediate)?,
        None => intermediate,
    };
    let intermediate = match f
        .dense_width_key
        .map(|k| cfg.opt_size(k))
        .transpose()?
        .flatten()
    {
        Some(w) => w,
        None => intermediate,
    };
    if f.differential && kv_heads % 2 != 0 {
        return Err(cfg.err(
            "num_key_value_heads",
            format!("is {kv_heads}; differential attention splits the values between two halves of the K/V heads, so their count must be even"),
        ));
    }
    // A sub-norm with a weight (BitNet's) is sized by hidden_size; a weightless one by the heads.
    if f.sub_norms && f.norm.has_weight() && heads * head_dim != hidden {
        return Err(cfg.err(
            "head_dim",
            format!("is {head_dim}; with {heads} heads the attention's sub-norm spans {} features, but this model type sizes it by hidden_size ({hidden}), so heads × head_dim must equal hidden_size", heads * head_dim),
        ));
    }
    let context = cfg.size("max_position_embeddings", Some(d.context))?;
    let (qkv_bias, o_bias, mlp_bias) = (
        bias(cfg, f.qkv_bias)?,
        bias(cfg, f.o_bias)?,
        bias(cfg, f.mlp_bias)?,
    );
    if f.same_bias && qkv_bias != mlp_bias {
        let key = match f.mlp_bias {
            Bias::Key(k, _) => k,
            Bias::Never | Bias::Always => "mlp_bias",
        };
        return Err(cfg.err(
            key,
            format!("is {mlp_bias} while the attention bias is {qkv_bias}; this model type needs both the same"),
        ));
    }
    let qk_norm = match f.qk_norm_key {
        Some((k, default)) if !cfg.flag(k, default)? => QkNorm::None,
        _ => f.qk_norm,
    };
    let layer_thetas = if f.no_rope == NoRope::LayerTheta {
        cfg.list(
            "layer_rope_theta",
            layers,
            |v| v.as_f64().filter(|t| t.is_finite() && *t >= 0.0),
            "a RoPE base, or 0 for a layer without RoPE",
        )?
    } else {
        None
    };
    let mut no_rope = match &layer_thetas {
        Some(t) => t.iter().map(|t| *t != 0.0).collect(),
        None => rope_layers(cfg, f.no_rope, layers)?,
    };
    let mut spans = spans(cfg, f.windows, layers, &no_rope)?;
    if let Some(w) = f
        .window_less_one_key
        .map(|k| cfg.opt_size(k))
        .transpose()?
        .flatten()
    {
        for s in spans.iter_mut() {
            if let AttnSpan::Sliding(_) = s {
                *s = AttnSpan::Sliding(w.saturating_add(1));
            }
        }
    }
    if matches!(
        f.no_rope,
        NoRope::FullLayers | NoRope::FullLayersDenseRotate
    ) {
        let window_set = !cfg.present("sliding_window") || cfg.has("sliding_window");
        if window_set {
            no_rope = spans.iter().map(|s| *s != AttnSpan::Full).collect();
        } else if !cfg.has("layer_types") {
            // The class then divides by a window pattern of 0.
            return Err(cfg.err(
                "sliding_window",
                "is null and layer_types is absent; give a window, or layer_types naming every layer's attention",
            ));
        }
    }
    if matches!(f.no_rope, NoRope::NullTypes | NoRope::NullTypesOrFullLayers) {
        no_rope = null_type_rope(cfg, &spans, f.no_rope == NoRope::NullTypesOrFullLayers)?;
    }
    let (mut moe, moe_layers) = experts(cfg, f.experts, layers, d)?;
    if let (Some(m), Experts::Routed(r)) = (&mut moe, f.experts) {
        m.shared_bias = mlp_bias && r.shared.is_some_and(|s| s.bias_as_mlp);
    }
    // Without experts, the shared MLP is the whole FFN (GraniteMoeHybrid).
    let mut intermediate = intermediate;
    if let (Experts::Routed(r), None) = (f.experts, &moe) {
        if r.zero_is_shared {
            let (key, default) = r
                .shared
                .map_or(("intermediate_size", intermediate), |s| s.width);
            intermediate = cfg.size(key, Some(default))?;
        }
    }
    if f.no_rope == NoRope::FullLayersDenseRotate
        && cfg.size("prefix_dense_sliding_window_pattern", Some(1))? == 1
    {
        for (rope, sparse) in no_rope.iter_mut().zip(&moe_layers) {
            *rope |= !sparse;
        }
    }
    let alpha = match f.rope_types {
        RopeTypes::HunYuan | RopeTypes::HunYuanVl => ntk_alpha(cfg, head_dim)?,
        RopeTypes::Shared | RopeTypes::Phi3 | RopeTypes::Mrope => None,
    };
    let mut rope_defaults = RopeDefaults {
        theta_key: f.theta_key,
        partial: f.partial,
        partial_key: f.partial_key,
        ..RopeDefaults::new(d.theta, context)
    };
    rope_defaults.longrope_mscale = f.longrope_mscale;
    match f.rope_types {
        RopeTypes::Shared => {}
        RopeTypes::Phi3 => {
            rope_defaults.original = Some(4096);
            rope_defaults.renames = &[("su", "longrope"), ("yarn", "longrope")];
        }
        RopeTypes::Mrope => rope_defaults.renames = &[("mrope", "default")],
        RopeTypes::HunYuan | RopeTypes::HunYuanVl => {
            rope_defaults.renames = match (alpha, f.rope_types) {
                (Some(_), _) => &[("dynamic", "default"), ("xdrope", "default")],
                (None, RopeTypes::HunYuanVl) => &[("xdrope", "dynamic")],
                (None, _) => &[],
            }
        }
    }
    let mut r = match f.gptj_rope {
        None if f.alibi.is_some() => Rope {
            full: RopeFreqs {
                theta: 1.0,
                scaling: RopeScaling::None,
            },
            sliding: None,
            partial: 1.0,
            sliding_partial: None,
            interleaved: false,
            reversed: false,
            start: 0,
        },
        None if f.rope_by_type.is_some() => super::rope_by_type(
            cfg,
            &rope_defaults,
            f.rope_by_type.unwrap_or(super::ByType {
                full: (d.theta, 1.0),
                sliding: (d.theta, 1.0),
                full_proportional: false,
            }),
        )?,
        None => match f.rope_scaling_default {
            Some(scaling) if !cfg.has("rope_parameters") && !cfg.has("rope_scaling") => {
                cfg.get(f.theta_key); // read, and ignored as the class ignores it
                let mut r = rope(cfg, &rope_defaults)?;
                r.full = RopeFreqs {
                    theta: d.theta,
                    scaling: scaling(),
                };
                r
            }
            _ => rope(cfg, &rope_defaults)?,
        },
        Some(default) => {
            let dims = if cfg.present("rotary_dim") {
                cfg.opt_size("rotary_dim")?
            } else {
                default
            };
            let partial = match dims {
                None => 1.0,
                Some(n) if n <= head_dim && n % 2 == 0 => {
                    // As a fraction that rounds back down to exactly n dims.
                    let f = n as f64 / head_dim as f64;
                    if ((head_dim as f64 * f) as u64) < n {
                        (n as f64 + 0.5) / head_dim as f64
                    } else {
                        f
                    }
                }
                Some(n) => {
                    return Err(cfg.err(
                        "rotary_dim",
                        format!(
                        "is {n}; it must be an even number of dims within the head ({head_dim})"
                    ),
                    ))
                }
            };
            Rope {
                full: RopeFreqs {
                    theta: 10_000.0,
                    scaling: RopeScaling::None,
                },
                sliding: None,
                partial,
                sliding_partial: None,
                interleaved: true,
                reversed: false,
                start: 0,
            }
        }
    };
    r.interleaved |= f.interleaved_rope;
    r.reversed = f.reversed_rope;
    if let Some(alpha) = alpha {
        // As transformers computes it: θ · α ** (d / (d − 2)) in Python's floats.
        let d = head_dim as f64;
        r.full.theta *= alpha.powf(d / (d - 2.0));
    }
    if f.scaling_full_only && r.sliding.is_none() {
        r.sliding = Some(RopeFreqs {
            theta: r.full.theta,
            scaling: RopeScaling::None,
        });
    }
    if f.rotary_dim_key {
        // Read either way: a given partial_rotary_factor wins over it, as in transformers.
        let dims = cfg.opt_size("rotary_dim")?;
        if let Some(n) = dims.filter(|_| !cfg.has("partial_rotary_factor")) {
            if n > head_dim || n % 2 != 0 {
                return Err(cfg.err(
                    "rotary_dim",
                    format!(
                        "is {n}; it must be an even number of dims within the head ({head_dim})"
                    ),
                ));
            }
            r.partial = n as f64 / head_dim as f64;
        }
    }
    let block = match f.parallel_key {
        Some((key, default)) if cfg.flag(key, default)? => f.block,
        Some(_) => Block::Sequential,
        None => f.block,
    };
    let rms_eps = f.rms_key.map(|k| cfg.opt_float(k)).transpose()?.flatten();
    let norm = Norm {
        kind: if rms_eps.is_some() {
            NormKind::Rms
        } else {
            f.norm
        },
        eps: match (rms_eps, f.eps_key) {
            (Some(eps), _) => eps,
            (None, Some(key)) => cfg.float(key, d.eps)?,
            (None, None) => d.eps,
        },
        unit_offset: f.gemma_norms || f.one_plus,
        place: match f.post_norm_key {
            Some((key, default)) if cfg.flag(key, default)? => NormPlace::Sandwich,
            _ => f.place,
        },
    };
    // A hybrid's recurrent layers: those not listed as attending.
    let (hybrid, mamba_layers) = match &f.hybrid {
        Some(h) => {
            let mamba: Vec<bool> = match h.layers {
                HybridLayers::AttnIndices(key) => {
                    let attending = cfg.list_any(key, |v| v.as_u64(), "a layer index")?;
                    let attending = attending.unwrap_or_default();
                    if let Some(&i) = attending.iter().find(|&&i| i >= layers) {
                        return Err(cfg.err(
                            key,
                            format!(
                                "lists layer {i}; the model has {layers} layers (0 to {})",
                                layers - 1
                            ),
                        ));
                    }
                    (0..layers).map(|b| !attending.contains(&b)).collect()
                }
                HybridLayers::Types(key) => cfg
                    .list(
                        key,
                        layers,
                        |v| match v.as_str()? {
                            "linear_attention" | "mamba" => Some(true),
                            "full_attention" | "attention" => Some(false),
                            _ => None,
                        },
                        "\"linear_attention\" (Mamba2) or \"full_attention\"",
                    )?
                    .unwrap_or_else(|| vec![true; layers as usize]),
                HybridLayers::Period(p) => p.layers(cfg, layers)?.iter().map(|a| !a).collect(),
                HybridLayers::FourthOrLast => {
                    let listed = super::delta::linear_types(cfg, layers, "Gated DeltaNet")?;
                    let given = listed.is_some();
                    let types = listed.unwrap_or_else(|| {
                        let mut t: Vec<bool> = (0..layers).map(|i| i % 4 != 3).collect();
                        if let Some(last) = t.last_mut() {
                            *last = *last && layers >= 4;
                        }
                        t
                    });
                    // The class refuses a model of one kind.
                    let key = if given {
                        "layer_types"
                    } else {
                        "num_hidden_layers"
                    };
                    if types.iter().all(|&recurrent| !recurrent) {
                        return Err(cfg.err(
                            key,
                            "gives no linear_attention layer; OLMo hybrid needs at least one",
                        ));
                    }
                    if types.iter().all(|&recurrent| recurrent) {
                        return Err(cfg.err(
                            key,
                            "gives no full_attention layer; OLMo hybrid needs at least one",
                        ));
                    }
                    types
                }
                HybridLayers::Even => {
                    super::delta::linear_types(cfg, layers, "lightning attention")?
                        .unwrap_or_else(|| (0..layers).map(|i| i % 2 == 1).collect())
                }
                HybridLayers::Interval | HybridLayers::Indexed => {
                    // Read either way: transformers reads the interval only to fill in the types.
                    let n = cfg.size("full_attention_interval", Some(4))?;
                    let listed = if matches!(h.layers, HybridLayers::Indexed) {
                        super::delta::indexed_types(cfg, layers)?
                    } else {
                        super::delta::linear_types(cfg, layers, "Gated DeltaNet")?
                    };
                    let key = if listed.is_some() {
                        "layer_types"
                    } else {
                        "full_attention_interval"
                    };
                    let types =
                        listed.unwrap_or_else(|| (0..layers).map(|i| (i + 1) % n != 0).collect());
                    // transformers 5.24 counts positions from an attention layer's cache, and
                    // fails without one.
                    if types.iter().all(|&recurrent| recurrent) {
                        let kind = if matches!(h.layers, HybridLayers::Indexed) {
                            "indexed_attention"
                        } else {
                            "full_attention"
                        };
                        return Err(cfg.err(
                            key,
                            format!("gives no {kind} layer among the {layers}; transformers runs this model only with at least one"),
                        ));
                    }
                    types
                }
                HybridLayers::ConvTypes {
                    types,
                    indices,
                    pattern,
                } => {
                    // LFM2 names no pattern: its recurrent layers are "conv".
                    let rec = pattern.map_or("conv", TypePattern::recurrent);
                    let expect = conv_types(rec);
                    let listed =
                        cfg.list(types, layers, |v| Some(conv_type(v, rec)?.0), &expect)?;
                    let recurrent: Vec<bool> = match (listed, indices, pattern) {
                        (Some(l), indices, _) => {
                            if let Some(key) = indices {
                                cfg.get(key);
                            }
                            l
                        }
                        (None, Some(key), _) => {
                            match cfg.list_any(key, |v| v.as_u64(), "a layer index")? {
                                Some(attending) => {
                                    (0..layers).map(|b| !attending.contains(&b)).collect()
                                }
                                None => vec![false; layers as usize],
                            }
                        }
                        (None, None, Some(p)) => (0..layers).map(|i| p.type_of(i) == rec).collect(),
                        (None, None, None) => {
                            return Err(cfg.err(
                                types,
                                format!("is missing; the class reads each of the {layers} layers' type from it ({expect})"),
                            ))
                        }
                    };
                    // A DeltaNet hybrid's cache counts positions from an attention layer's, in
                    // transformers 5.24: it fails without one.
                    if matches!(h.mixer, HybridMixer::DeltaNet(..)) && recurrent.iter().all(|&r| r)
                    {
                        return Err(cfg.err(
                            types,
                            format!("gives no attention layer among the {layers}; transformers runs this model only with at least one"),
                        ));
                    }
                    recurrent
                }
            };
            (Some(h.mixer), mamba)
        }
        None => (None, vec![false; layers as usize]),
    };
    let recurrent = match hybrid {
        Some(HybridMixer::Mamba2(k)) => Some(Recurrent::Mamba2(super::mamba2::ssm(
            cfg, hidden, norm.eps, &k,
        )?)),
        Some(HybridMixer::Mamba(k)) => Some(Recurrent::Mamba(super::mamba::s6(cfg, hidden, &k)?)),
        Some(HybridMixer::ShortConv { kernel, bias }) => Some(Recurrent::ShortConv(ShortConv {
            kernel: cfg.size(kernel.0, Some(kernel.1))?,
            bias: cfg.flag(bias.0, bias.1)?,
        })),
        Some(HybridMixer::DeltaNet(store, defaults)) => Some(Recurrent::DeltaNet(
            super::delta::delta_net(cfg, norm.eps, (store, defaults), heads, hidden)?,
        )),
        Some(HybridMixer::Lightning { block }) => {
            let act = super::act_renamed(cfg, "hidden_act", d.act, f.act_renames)?;
            if act == Act::Xielu {
                return Err(cfg.err(
                    "hidden_act",
                    "is xielu; lightning attention applies its activation without parameters of its own, so it must be one of silu, gelu, relu and their variants",
                ));
            }
            Some(Recurrent::Lightning(Lightning {
                heads,
                head_dim,
                block: cfg.size(block.0, Some(block.1))?,
                // Its norm is built at the class's default ε, whatever the config's.
                eps: 1e-6,
                act,
            }))
        }
        None => None,
    };
    let gated = match f.out_gate_key {
        Some((key, default)) => cfg.flag(key, default)?,
        None => true,
    };
    let mut attn = Attention {
        qkv_bias,
        o_bias,
        qk_norm,
        qkv: f.qkv,
        clip_qkv: if f.clip_qkv {
            positive(cfg, "clip_qkv")?
        } else {
            None
        },
        sinks: f.sinks,
        sub_norm: f.sub_norms,
        out_gate: f.out_gate.filter(|_| gated),
        differential: f.differential,
        o_bias_last: f.o_bias_last,
        query_scale: f.query_scale,
        ..plain_attention(heads, kv_heads, head_dim)
    };
    if let Some((beta, length)) = f.llama4_scaling {
        attn.query_scale = Some(llama4_scaling(cfg, beta, length, family)?);
    }
    if let Some((key, default)) = f.dynamic_mask_key {
        attn.dynamic_mask = Some(DynamicMask {
            keep: cfg.size(key, Some(default))?,
        });
    }
    if let Some((key, default)) = f.v_head_dim_key {
        attn.v_head_dim = cfg.size(key, Some(default))?;
    }
    if let Some((key, default)) = f.v_scale_key {
        attn.v_scale = match cfg.opt_float(key) {
            // Null: none, as the class reads it.
            Ok(None) if cfg.present(key) => 1.0,
            Ok(None) => default,
            Ok(Some(v)) if v.is_finite() && v != 0.0 => v,
            Ok(Some(v)) => {
                return Err(cfg.err(key, format!("is {v}; it must be a finite, non-zero number")))
            }
            Err(e) => return Err(e),
        };
    }
    if let Some(key) = f.softplus_gate_key {
        let per_head = match cfg.get(key) {
            None => true,
            Some(serde_json::Value::Bool(b)) => *b,
            Some(serde_json::Value::String(s)) if s == "per-head" => true,
            Some(serde_json::Value::String(s)) if s == "per-element" => false,
            Some(v) => {
                return Err(cfg.err(
                    key,
                    format!("is {v}; it must be true or \"per-head\" (a gate per head), or false or \"per-element\" (a gate per head feature)"),
                ))
            }
        };
        attn.out_gate = Some(OutGate {
            softplus: true,
            per_head,
            bias: false,
            stored: GateStore::Own,
        });
    }
    if let (Some(key), Some(m)) = (f.router_softcap_key, moe.as_mut()) {
        let c = cfg.float(key, 0.0)?;
        if !(c.is_finite() && c >= 0.0) {
            return Err(cfg.err(
                key,
                format!("is {c}; it must be a non-negative number (0 for none)"),
            ));
        }
        m.router_softcap = (c > 0.0).then_some(c);
    }
    // The sliding layers' own attention, where the model has sliding layers.
    let sliding_own = f
        .sliding_own
        .filter(|_| spans.iter().any(|s| matches!(s, AttnSpan::Sliding(_))));
    let mut layer_attn = match sliding_own {
        Some(own) => {
            let kv = kv_heads
                .checked_mul(own.kv_mult)
                .filter(|kv| *kv <= heads && heads % kv == 0);
            let Some(kv) = kv else {
                return Err(cfg.err(
                    "num_key_value_heads",
                    format!("is {kv_heads}; the sliding-window layers have {} times as many K/V heads, which must divide the {heads} query heads", own.kv_mult),
                ));
            };
            let mut s = attn.clone();
            s.kind = super::attn_kind(heads, kv);
            s.kv_heads = kv;
            s.sinks = own.sinks || attn.sinks;
            let sliding = LayerSet::from_fn(layers, |b| {
                matches!(spans[b as usize], AttnSpan::Sliding(_))
            });
            vec![(sliding, s)]
        }
        None => vec![],
    };
    if let Some(key) = f.heads_per_layer_key {
        // Layers whose query-head count differs from the first layer's get their own attention.
        let list = cfg.list(
            key,
            layers,
            |v| v.as_u64().filter(|h| *h > 0),
            "a positive head count",
        )?;
        if let Some(list) = list {
            for (i, h) in list.iter().enumerate() {
                if h % kv_heads != 0 {
                    return Err(cfg.err(
                        &format!("{key}[{i}]"),
                        format!("is {h}; a layer's query heads must be a multiple of num_key_value_heads ({kv_heads})"),
                    ));
                }
            }
            attn.heads = list[0];
            attn.kind = super::attn_kind(list[0], kv_heads);
            let mut counts: Vec<u64> = list.iter().copied().filter(|h| *h != list[0]).collect();
            counts.sort();
            counts.dedup();
            for h in counts {
                let mut own = attn.clone();
                own.heads = h;
                own.kind = super::attn_kind(h, kv_heads);
                layer_attn.push((LayerSet::from_fn(layers, |b| list[b as usize] == h), own));
            }
        }
    }
    if let Some(c) = f.attn_config.map(|key| cfg.sub(key)).transpose()?.flatten() {
        attn.clip_qkv = positive(&c, "clip_qkv")?;
        // A given scale replaces 1/√head_dim.
        if let Some(scale) = positive(&c, "softmax_scale")? {
            attn.scale_dim = 1.0;
            attn.scale_mult = scale;
        }
    }
    if let Some(thetas) = &layer_thetas {
        if let Some((i, t)) = thetas
            .iter()
            .enumerate()
            .find(|(_, t)| **t != 0.0 && **t != r.full.theta)
        {
            return Err(cfg.err(
                &format!("layer_rope_theta[{i}]"),
                format!(
                    "is {t}, not the model's RoPE base ({}); anatomy draws one base for every layer that rotates (0 leaves a layer without RoPE)",
                    r.full.theta
                ),
            ));
        }
    }
    let (embed_mult, residual_mult, mut logits_mult) = match f.multipliers {
        Some(mup) => scales::mup(cfg, mup, head_dim, &mut attn)?,
        None => (1.0, 1.0, 1.0),
    };
    if let Some((key, default)) = f.logit_scale {
        logits_mult = cfg.float(key, default)?;
        if !logits_mult.is_finite() || logits_mult == 0.0 {
            return Err(cfg.err(
                key,
                format!("is {logits_mult}; it must be a finite, non-zero number"),
            ));
        }
    }
    let tied = cfg.flag("tie_word_embeddings", d.tied)?;
    let head_rows = match f.head_rows_key.map(|k| (k, cfg.opt_size(k))) {
        Some((key, r)) => match r? {
            Some(r) if r == 0 || r > vocab => {
                return Err(cfg.err(
                    key,
                    format!("is {r}; the head keeps between 1 and vocab_size ({vocab}) rows"),
                ))
            }
            // A tied head is the embedding matrix itself, every row of it.
            Some(r) if r < vocab && !tied => Some(r),
            _ => None,
        },
        None => None,
    };
    let place_normed = norm.place == NormPlace::Normed;
    if f.rope_by_type.is_some() {
        // The attention layers' spans: a hybrid's recurrent layers read no RoPE.
        let attending: Vec<AttnSpan> = spans
            .iter()
            .zip(&mamba_layers)
            .filter(|(_, &m)| !m)
            .map(|(s, _)| *s)
            .collect();
        super::rope_types_present(cfg, &attending)?;
    }
    let mut spec = Spec {
        name: name.to_string(),
        model_type: model_type.to_string(),
        family: family.to_string(),
        vocab,
        hidden,
        layers,
        context,
        embedding: Embedding {
            scale_by_sqrt_hidden: match f.embed_sqrt_key {
                Some((key, default)) => cfg.flag(key, default)?,
                None => f.gemma_norms,
            },
            learned_positions: None,
            position_offset: 0,
            multiplier: embed_mult,
            norm: f.embed_norm,
            affine: false,
            projected: None,
        },
        attn,
        layer_attn,
        mlp: Mlp {
            intermediate,
            act: super::act_renamed(cfg, "hidden_act", d.act, f.act_renames)?,
            gated: f.gated,
            bias: mlp_bias,
            fused_gate_up: f.fused_gate_up,
            sub_norm: f.sub_norms,
            clamp: None,
            scalar: false,
        },
        moe,
        recurrent,
        plan: spans
            .into_iter()
            .zip(moe_layers)
            .zip(no_rope)
            .zip(&mamba_layers)
            .map(|(((attn, moe), rope), &mamba)| {
                let mut l = LayerPlan::attention(attn, rope && f.alibi.is_none() && !mamba, moe);
                if mamba {
                    l.mixer = match hybrid {
                        Some(HybridMixer::Mamba(_)) => Mixer::Mamba,
                        Some(HybridMixer::ShortConv { .. }) => Mixer::ShortConv,
                        Some(HybridMixer::DeltaNet(..)) => Mixer::DeltaNet,
                        Some(HybridMixer::Lightning { .. }) => Mixer::Lightning,
                        Some(HybridMixer::Mamba2(_)) | None => Mixer::Mamba2,
                    };
                }
                l
            })
            .collect(),
        norm,
        recurrent_place: f.hybrid.and_then(|h| h.recurrent_place),
        mup: None,
        stream_mix: if place_normed {
            let factor = |key: &str| -> Result<f64> {
                let v = cfg.float(key, 1.0)?;
                if v.is_finite() {
                    Ok(v)
                } else {
                    Err(cfg.err(key, format!("is {v}; it must be a finite number")))
                }
            };
            Some(StreamMix {
                attn: (
                    factor("full_attn_alpha_factor")?,
                    factor("full_attn_beta_factor")?,
                ),
                linear: (
                    factor("linear_attn_alpha_factor")?,
                    factor("linear_attn_beta_factor")?,
                ),
                mlp: (factor("mlp_alpha_factor")?, factor("mlp_beta_factor")?),
            })
        } else {
            None
        },
        position: match f.alibi {
            Some(slopes) => Position::Alibi(slopes(heads)),
            None => Position::Rope(r),
        },
        tied,
        final_softcap: match f.final_softcap {
            Some((key, _)) if cfg.present(key) => cfg.opt_float(key)?,
            Some((_, default)) => Some(default),
            None => None,
        },
        logits_mult,
        residual_mult,
        residual: if f.residual_scales {
            Residual::Scaled
        } else {
            Residual::Add
        },
        depth_scaled: f.depth_scaled,
        head_bias: bias(cfg, f.head_bias)?,
        head_rows,
        prompt: None,
        out_conv: None,
        logits_kept: None,
        skip_first_attn_norm: false,
        head_transform: None,
        per_layer_input: None,
        shared: None,
        ngram_ple: None,
        ngpt: None,
        final_norm_kind: None,
        laurel: None,
        sparsity: Vec::new(),
        gated_norm: None,
        layer_scalar: false,
        stream: Stream::Plain,
        mlp_widths: Vec::new(),
        block,
        layout: f.layout,
        hf_wrap: HfWrap::None,
        towers: vec![],
        image: None,
        prefix_lm: false,
        quant: None,
        mtp_layers: 0,
        draft: None,
        kv_from: vec![],
        ignored: vec![],
        not_read: vec![],
    };
    if let Some((key, default)) = f.cross_layers {
        cross_attention_layers(cfg, key, default, &mut spec)?;
    }
    if f.extra_embed_rows > 0 {
        // Rows past the vocabulary for tokens the head never predicts (Mllama's image token).
        // The tables differ in shape, so the head is its own whatever `tie_word_embeddings`
        // says (Mllama's published class ties nothing).
        spec.vocab += f.extra_embed_rows;
        spec.head_rows = Some(vocab);
        spec.tied = false;
    }
    Ok(spec)
}
