//! DeepSeek V2 and V3 (`deepseek_v2`, `deepseek_v3`, and configs such as Kimi K2's that declare
//! `DeepseekV3ForCausalLM`) and the classes built from their parts: GLM-4.5 (`glm4_moe`) and
//! Sarvam-MoE (`sarvam_moe`) and Param2 (`param2moe`), GLM-4.5's model, MiniCPM5-MoE
//! (`minicpm5_moe`), dots.llm1 (`dots1`), Solar Open (`solar_open`)
//! and Youtu (`youtu`). Each class is one row of `CLASSES`: its defaults and which parts it has.
//!
//! DeepSeek: multi-head latent attention (with or without a Q latent), the first
//! `first_k_dense_replace` layers dense and the rest mixtures of routed experts plus shared experts.
//! V3 and the classes after it score experts with a sigmoid, pick them with a correction bias and
//! within the best groups; V2 uses a softmax.

use super::{
    heads, layer_count, plain_attention, plain_moe, pre_rms, rope, top_k, HeadDim, RopeDefaults,
};
use crate::config::Config;
use crate::error::Result;
use crate::layers::LayerSet;
use crate::spec::*;

mod mistral4;
mod sparse;
use sparse::{indexer, sparse_layers};

/// How a class's attention is built.
#[derive(Clone, Copy)]
enum Attn {
    /// Multi-head latent attention; K/V heads default to `kv` (None: the query heads).
    /// `sparse`: DeepSeek sparse attention's indexer picks the keys (V3.2, GLM-5); the Q latent
    /// is then required.
    Latent {
        kv: Option<u64>,
        dims: LatentDims,
        sparse: Option<Sparse>,
    },
    /// Grouped-query attention with separate q, k, v (K/V heads default: None = the query heads).
    Grouped {
        kv: Option<u64>,
        head_dim: HeadDim,
        qk_norm: QkNormRule,
    },
}

/// How a class's RoPE pairs dims.
#[derive(Clone, Copy)]
enum Rotate {
    /// rotate_half: dim i with dim i + d/2.
    Half,
    /// Interleaved pairs (2i, 2i + 1) unless `rope_interleave` is false.
    PairsByFlag,
    /// Interleaved pairs whatever the config says (V3.2's attention never reads the flag).
    Pairs,
}

/// A class's DeepSeek sparse attention.
#[derive(Clone, Copy)]
struct Sparse {
    /// `index_n_heads`'s default.
    heads: u64,
    /// The indexer's RoPE pairs dims interleaved (GLM-5) rather than half against half.
    interleaved: bool,
    /// Which layers run an indexer of their own.
    own: Own,
    /// HY v4's indexer: RoPE on the last dims of each head, the key norm at the model's ε.
    hy: bool,
}

/// How a class says which layers run an indexer of their own; the others reuse the choice of
/// the last one that did.
#[derive(Clone, Copy, PartialEq)]
enum Own {
    /// Every layer (V3.2).
    All,
    /// `indexer_types` ("full" or "shared" per layer), else GLM-5's pattern keys.
    Glm,
    /// `indexer_types`, else layer 0 and every fourth layer from layer 1 (HY v4).
    EveryFourth,
}

/// A class's defaults for the latent's sizes.
#[derive(Clone, Copy)]
pub(super) struct LatentDims {
    /// None: by default queries come straight from the input.
    pub q_lora: Option<u64>,
    pub kv_lora: u64,
    pub nope: u64,
    pub rope: u64,
    /// None: hidden_size / heads.
    pub v: Option<u64>,
}

pub(super) const V3_LATENT: LatentDims = LatentDims {
    q_lora: Some(1536),
    kv_lora: 512,
    nope: 128,
    rope: 64,
    v: Some(128),
};

/// A class's Kimi Delta Attention layers.
#[derive(Clone, Copy, PartialEq)]
enum Linear {
    /// Latent (or grouped) attention in every layer.
    None,
    /// Kimi Linear: KDA in the layers `layer_types` or `linear_attn_config` names, latent
    /// attention without positions (no RoPE, its keys unread) in the others.
    Kimi,
    /// Ling's hybrid (`bailing_hybrid`): KDA with full-rank gates in every layer but the last of
    /// each `layer_group_size`, whose latent attention gates each head's output.
    Bailing,
}

#[derive(Clone, Copy)]
enum QkNormRule {
    Never,
    Always,
    /// By `use_qk_norm`, with this default.
    Flag(bool),
}

/// One config class's defaults; `None` where the class has no default and the config must
/// give the value, or (for `inter`, `first_dense`, `mtp`) where the class has no such key.
struct Class {
    model_type: &'static str,
    vocab: u64,
    hidden: u64,
    inter: Option<u64>,
    layers: u64,
    heads: u64,
    context: u64,
    eps: f64,
    theta: f64,
    partial: f64,
    tied: bool,
    attn: Attn,
    rotate: Rotate,
    /// Routed experts: None for a dense model (Youtu).
    moe: Option<Experts>,
    /// `max_window_layers` (with this default) starts the sliding layers (dots.llm1).
    window_from: Option<u64>,
    /// Reads `num_nextn_predict_layers`.
    mtp: bool,
    /// RoPE types the class renames (Sarvam's `deepseek_yarn` is YaRN).
    rope_renames: &'static [(&'static str, &'static str)],
    /// The scaling the class uses where the config gives no RoPE dict (Mistral 4's YaRN).
    rope_default: Option<fn(&super::RopeDefaults) -> RopeScaling>,
    /// A Llama config class around the latent attention (MiniCPM3): reads the μP
    /// scales `scale_emb`, `scale_depth` and `dim_model_base`.
    minicpm: bool,
    /// The dense and shared MLPs read `mlp_bias` (DeepSeek-V2, MiniCPM3).
    mlp_bias: bool,
    /// The output projection takes `attention_bias` as q, k and v do (MiniCPM5-MoE's Llama
    /// attention; GLM-4.5's has none).
    o_bias: bool,
    /// The class default of `attention_bias` (GLM-4.5V's: true).
    attention_bias: bool,
    /// Kimi Delta Attention in some layers, and which.
    linear: Linear,
    /// What a class adds to the parts above.
    extra: Extra,
    layout: Layout,
}

/// A class's parts beyond DeepSeek's.
#[derive(Clone, Copy, PartialEq)]
enum Extra {
    None,
    /// HY v4: hyper-connections, a learned sink and an output gate in every attention, clamped
    /// experts stored stacked, and K/V heads forced to the query heads.
    HyV4,
    /// HY v4 VL's language model: HY v4's, its latents normed at the model's ε, and M-RoPE's
    /// sections checked.
    HyV4Vl,
    /// A.X-K2: the query and an output gate from one projection of both query latents, gated
    /// norms, routing without groups.
    Axk2,
    /// dots.3 Note: layers of three kinds with latent attention of their own sizes, scaled
    /// latents, a normed rotary key and a gate per head (`dots3`).
    Dots3,
    /// MiniCPM5-MoE: an output gate per head feature, stored in the query projection.
    GatedQuery,
    /// Mistral 4: queries scaled up with position by the RoPE dict's `llama_4_scaling_beta`
    /// (Ministral 3's), the rotated fraction read of the whole query head.
    Mistral4,
}

#[derive(Clone, Copy)]
struct Experts {
    count: Option<u64>,
    top_k: Option<u64>,
    shared: Option<u64>,
    width: u64,
    /// V2: softmax scores and `topk_method`; the others: sigmoid with a correction bias.
    v2: bool,
    groups: (u64, u64),
    norm_topk: bool,
    routed_scaling: f64,
    /// Which layers keep the dense MLP.
    dense: Dense,
    /// The MoE block's output is normed before the residual add (A.X-K1).
    post_norm: bool,
}

/// How a class says which layers are dense.
#[derive(Clone, Copy)]
enum Dense {
    /// None: every layer has experts (the class has no such key).
    None,
    /// The first `first_k_dense_replace` layers, with this default.
    FirstK(u64),
    /// `mlp_layer_types` ("dense" or "sparse" per layer); without it the first
    /// `first_k_dense_replace` layers (this default), or with None the first layer alone, the
    /// key unread (GLM-4.7-Flash).
    Types(Option<u64>),
    /// `mlp_layer_types`; without it, layer i has experts when i ≥ `first_k_dense_replace`
    /// (this default) and i is a multiple of `moe_layer_freq` (default 1) (A.X-K1).
    TypesFreq(u64),
}

const V3_EXPERTS: Experts = Experts {
    count: Some(256),
    top_k: Some(8),
    shared: Some(1),
    width: 2048,
    v2: false,
    groups: (8, 4),
    norm_topk: true,
    routed_scaling: 2.5,
    dense: Dense::FirstK(3),
    post_norm: false,
};

const GLM_EXPERTS: Experts = Experts {
    count: Some(128),
    width: 1408,
    groups: (1, 1),
    routed_scaling: 1.0,
    dense: Dense::FirstK(1),
    ..V3_EXPERTS
};

const V3: Class = Class {
    model_type: "deepseek_v3",
    vocab: 129_280,
    hidden: 7168,
    inter: Some(18432),
    layers: 61,
    heads: 128,
    context: 4096,
    eps: 1e-6,
    theta: 10_000.0,
    partial: 1.0,
    tied: false,
    attn: Attn::Latent {
        kv: Some(128),
        dims: V3_LATENT,
        sparse: None,
    },
    rotate: Rotate::PairsByFlag,
    moe: Some(V3_EXPERTS),
    window_from: None,
    mtp: true,
    rope_renames: &[],
    rope_default: None,
    minicpm: false,
    mlp_bias: false,
    o_bias: false,
    attention_bias: false,
    linear: Linear::None,
    extra: Extra::None,
    layout: Layout::DeepSeek,
};

const GLM: Class = Class {
    model_type: "glm4_moe",
    vocab: 151_552,
    hidden: 4096,
    inter: Some(10944),
    layers: 46,
    heads: 96,
    context: 131_072,
    eps: 1e-5,
    // Glm4MoeConfig rotates half of each head by default.
    partial: 0.5,
    attn: Attn::Grouped {
        kv: Some(8),
        head_dim: HeadDim::Floor,
        qk_norm: QkNormRule::Flag(false),
    },
    rotate: Rotate::Half,
    moe: Some(GLM_EXPERTS),
    ..V3
};

static CLASSES: &[Class] = &[
    V3,
    Class {
        model_type: "deepseek_v2",
        vocab: 102_400,
        hidden: 4096,
        inter: Some(11008),
        layers: 32,
        heads: 32,
        context: 2048,
        attn: Attn::Latent {
            kv: None,
            dims: V3_LATENT,
            sparse: None,
        },
        moe: Some(Experts {
            count: Some(64),
            top_k: None,
            shared: Some(2),
            width: 1407,
            v2: true,
            groups: (1, 1),
            norm_topk: false,
            routed_scaling: 1.0,
            dense: Dense::FirstK(0),
            post_norm: false,
        }),
        mtp: false,
        mlp_bias: true,
        ..V3
    },
    GLM,
    // GLM-4.5V's language model: GLM-4.5's layers with biased q, k and v by default, no QK
    // norms and no multi-token prediction; its M-RoPE sections rotate text as plain RoPE.
    Class {
        model_type: "glm4v_moe_text",
        vocab: 151_424,
        context: 65536,
        attn: Attn::Grouped {
            kv: Some(8),
            head_dim: HeadDim::Floor,
            qk_norm: QkNormRule::Never,
        },
        mtp: false,
        attention_bias: true,
        ..GLM
    },
    // Sarvam-MoE: GLM-4.5's model with QK-norm on and the whole head rotated.
    Class {
        model_type: "sarvam_moe",
        vocab: 262_144,
        inter: Some(8192),
        layers: 19,
        heads: 64,
        eps: 1e-6,
        theta: 8_000_000.0,
        partial: 1.0,
        attn: Attn::Grouped {
            kv: Some(4),
            head_dim: HeadDim::Given(64),
            qk_norm: QkNormRule::Flag(true),
        },
        moe: Some(Experts {
            width: 1024,
            top_k: Some(6),
            routed_scaling: 2.5,
            ..GLM_EXPERTS
        }),
        layout: Layout::Sarvam,
        ..GLM
    },
    // Param2 (BharatGen): GLM-4.5's model under its own defaults, with Sarvam's key names and
    // checkpoint layout; QK-norm on, the whole head rotated, the embeddings tied.
    Class {
        model_type: "param2moe",
        vocab: 128_000,
        hidden: 2048,
        inter: Some(9216),
        layers: 21,
        heads: 32,
        context: 32_768,
        eps: 1e-6,
        theta: 500_000.0,
        partial: 1.0,
        tied: true,
        attn: Attn::Grouped {
            kv: Some(8),
            head_dim: HeadDim::Given(64),
            qk_norm: QkNormRule::Flag(true),
        },
        moe: Some(Experts {
            count: Some(64),
            width: 2048,
            top_k: Some(6),
            shared: Some(2),
            routed_scaling: 2.5,
            ..GLM_EXPERTS
        }),
        layout: Layout::Sarvam,
        ..GLM
    },
    // dots.llm1: V3's routing under Qwen3's attention. Dots1Config has no default expert count,
    // top-k or shared count: the config gives them.
    Class {
        model_type: "dots1",
        vocab: 152_064,
        hidden: 4608,
        inter: Some(10944),
        layers: 62,
        heads: 32,
        context: 2048,
        attn: Attn::Grouped {
            kv: None,
            head_dim: HeadDim::Floor,
            qk_norm: QkNormRule::Always,
        },
        rotate: Rotate::Half,
        moe: Some(Experts {
            count: None,
            top_k: None,
            shared: None,
            width: 1408,
            groups: (1, 1),
            norm_topk: false,
            routed_scaling: 1.0,
            dense: Dense::FirstK(0),
            ..V3_EXPERTS
        }),
        window_from: Some(62),
        mtp: false,
        ..V3
    },
    // Solar Open: Glm4MoeConfig without its dense layers, QK-norm or MTP, under Llama attention.
    Class {
        model_type: "solar_open",
        vocab: 196_608,
        inter: None,
        layers: 48,
        heads: 64,
        theta: 1_000_000.0,
        partial: 1.0,
        attn: Attn::Grouped {
            kv: Some(8),
            head_dim: HeadDim::Given(128),
            qk_norm: QkNormRule::Never,
        },
        moe: Some(Experts {
            width: 1280,
            dense: Dense::None,
            ..GLM_EXPERTS
        }),
        mtp: false,
        ..GLM
    },
    // Youtu: DeepSeek-V3's latent attention in a Llama model with a dense MLP in every layer;
    // the class deletes every expert and MTP key.
    Class {
        model_type: "youtu",
        vocab: 128_256,
        hidden: 2048,
        inter: Some(6144),
        layers: 32,
        heads: 16,
        context: 131_072,
        tied: true,
        attn: Attn::Latent {
            kv: None,
            dims: V3_LATENT,
            sparse: None,
        },
        moe: None,
        mtp: false,
        ..V3
    },
    // DeepSeek-V3.2: V3 with DeepSeek sparse attention (an indexer picks each query's keys);
    // the dense layers by `mlp_layer_types`, else `first_k_dense_replace`.
    Class {
        model_type: "deepseek_v32",
        context: 163_840,
        attn: Attn::Latent {
            kv: Some(128),
            dims: V3_LATENT,
            sparse: Some(Sparse {
                heads: 64,
                interleaved: false,
                own: Own::All,
                hy: false,
            }),
        },
        rotate: Rotate::Pairs,
        moe: Some(Experts {
            dense: Dense::Types(Some(3)),
            ..V3_EXPERTS
        }),
        ..V3
    },
    // GLM-5: V3.2's sparse attention with interleaved RoPE in the indexer too, and layers that
    // may reuse the previous layer's choice of keys.
    Class {
        model_type: "glm_moe_dsa",
        vocab: 154_880,
        hidden: 6144,
        inter: Some(12288),
        layers: 78,
        heads: 64,
        context: 202_752,
        eps: 1e-5,
        attn: Attn::Latent {
            kv: Some(64),
            dims: LatentDims {
                q_lora: Some(2048),
                nope: 192,
                v: Some(256),
                ..V3_LATENT
            },
            sparse: Some(Sparse {
                heads: 32,
                interleaved: true,
                own: Own::Glm,
                hy: false,
            }),
        },
        rotate: Rotate::Pairs,
        moe: Some(Experts {
            groups: (1, 1),
            dense: Dense::Types(Some(3)),
            ..V3_EXPERTS
        }),
        ..V3
    },
    // HY v4 (Tencent Hunyuan): V3.2's latent attention, rotating half against half, with a
    // learned sink and a σ output gate per head feature, every fourth layer's indexer reused by
    // the three after it; hyper-connections around every sublayer; the first layer dense and the
    // rest V3's experts, clamped.
    HY_V4,
    // HY v4 VL's language model: HY v4's at its class's defaults, its latents normed at the
    // model's ε, M-RoPE's sections read (a text token rotates as under plain RoPE), the head's
    // hyper-connection named as its wrapper saves it.
    Class {
        model_type: "hy_v4_vl_text",
        hidden: 6144,
        inter: Some(18432),
        layers: 78,
        heads: 64,
        attn: Attn::Latent {
            kv: Some(64),
            dims: LatentDims {
                q_lora: Some(2048),
                nope: 192,
                v: Some(256),
                ..V3_LATENT
            },
            sparse: Some(Sparse {
                heads: 32,
                interleaved: true,
                own: Own::EveryFourth,
                hy: true,
            }),
        },
        moe: Some(Experts {
            width: 2048,
            groups: (1, 1),
            routed_scaling: 2.827,
            dense: Dense::Types(None),
            ..V3_EXPERTS
        }),
        extra: Extra::HyV4Vl,
        layout: Layout::HyV4Vl,
        ..HY_V4
    },
    // A.X-K2 (SK Telecom): V3.2's sparse latent attention without a Q up-projection of its own:
    // one projection of the normed and the raw query latent gives each head's query and an
    // output gate; gated norms before the attention and before the experts; routing without
    // groups.
    Class {
        model_type: "axk2",
        vocab: 163_840,
        hidden: 2048,
        inter: Some(5120),
        layers: 48,
        heads: 32,
        context: 131_072,
        attn: Attn::Latent {
            kv: Some(32),
            dims: LatentDims {
                q_lora: Some(384),
                kv_lora: 128,
                nope: 64,
                rope: 32,
                v: Some(64),
            },
            sparse: Some(Sparse {
                heads: 16,
                interleaved: false,
                own: Own::All,
                hy: false,
            }),
        },
        rotate: Rotate::Pairs,
        moe: Some(Experts {
            count: Some(128),
            width: 512,
            groups: (1, 1),
            dense: Dense::TypesFreq(1),
            ..V3_EXPERTS
        }),
        mtp: false,
        extra: Extra::Axk2,
        layout: Layout::Axk2,
        ..V3
    },
    // dots.3 Note: V3.2's experts and sparse latent attention with GLM-5's interleaved indexer,
    // and what `dots3` adds: sliding layers, scaled latents, a normed rotary key, gated heads.
    Class {
        model_type: "dots3_note_text",
        vocab: 152_064,
        hidden: 5120,
        inter: Some(13824),
        layers: 46,
        heads: 128,
        context: 524_288,
        eps: 1e-5,
        theta: 80_000_000.0,
        attn: Attn::Latent {
            kv: Some(128),
            dims: LatentDims {
                q_lora: Some(1024),
                ..V3_LATENT
            },
            sparse: Some(Sparse {
                heads: 64,
                interleaved: true,
                own: Own::All,
                hy: false,
            }),
        },
        rotate: Rotate::Pairs,
        moe: Some(Experts {
            width: 1536,
            groups: (1, 1),
            routed_scaling: 1.0,
            dense: Dense::TypesFreq(1),
            ..V3_EXPERTS
        }),
        mtp: false,
        extra: Extra::Dots3,
        layout: Layout::Dots3,
        ..V3
    },
    // Sarvam-105B: DeepSeek-V3's model under its own defaults (no Q latent, one dense layer,
    // routing over all 128 experts at once) and older key names.
    Class {
        model_type: "sarvam_mla",
        vocab: 262_144,
        hidden: 4096,
        inter: Some(16384),
        layers: 32,
        heads: 64,
        attn: Attn::Latent {
            kv: None,
            dims: LatentDims {
                q_lora: None,
                ..V3_LATENT
            },
            sparse: None,
        },
        moe: Some(Experts {
            count: Some(128),
            groups: (1, 1),
            dense: Dense::FirstK(1),
            ..V3_EXPERTS
        }),
        rope_renames: &[("deepseek_yarn", "yarn")],
        ..V3
    },
    // MiniCPM3: DeepSeek-V2's latent attention (rotating half against half) in a Llama model
    // with μP scales.
    Class {
        model_type: "minicpm3",
        vocab: 73_448,
        hidden: 2560,
        inter: Some(6400),
        layers: 62,
        heads: 40,
        context: 32_768,
        eps: 1e-5,
        tied: true,
        attn: Attn::Latent {
            kv: Some(40),
            dims: LatentDims {
                q_lora: Some(768),
                kv_lora: 256,
                nope: 64,
                rope: 32,
                v: None,
            },
            sparse: None,
        },
        rotate: Rotate::Half,
        moe: None,
        mtp: false,
        minicpm: true,
        mlp_bias: true,
        ..V3
    },
    // A.X-K1: DeepSeek-V3 with a norm on each MoE block's output; its dense layers by
    // `mlp_layer_types`, else `first_k_dense_replace` and `moe_layer_freq`.
    Class {
        model_type: "axk1",
        vocab: 163_840,
        layers: 61,
        heads: 64,
        context: 32768,
        attn: Attn::Latent {
            kv: Some(64),
            dims: V3_LATENT,
            sparse: None,
        },
        moe: Some(Experts {
            count: Some(192),
            dense: Dense::TypesFreq(1),
            post_norm: true,
            ..V3_EXPERTS
        }),
        mtp: false,
        ..V3
    },
    // GLM-4.7-Flash: DeepSeek-V3's latent attention with GLM-4.5's experts, the dense layers
    // named by `mlp_layer_types`.
    Class {
        model_type: "glm4_moe_lite",
        vocab: 154_880,
        hidden: 2048,
        inter: Some(10240),
        layers: 47,
        heads: 20,
        context: 202_752,
        eps: 1e-5,
        attn: Attn::Latent {
            kv: Some(20),
            dims: LatentDims {
                q_lora: Some(768),
                nope: 192,
                v: Some(256),
                ..V3_LATENT
            },
            sparse: None,
        },
        moe: Some(Experts {
            count: Some(64),
            top_k: Some(4),
            width: 1536,
            routed_scaling: 1.8,
            dense: Dense::Types(None),
            ..GLM_EXPERTS
        }),
        ..V3
    },
    // MiniCPM5-MoE: Llama's attention with a sigmoid output gate per head feature (its rows in
    // the query projection), V3's router and experts, the dense layers by `mlp_layer_types`.
    // Its RoPE rotates the whole head.
    Class {
        model_type: "minicpm5_moe",
        vocab: 130_560,
        hidden: 2048,
        inter: Some(8192),
        layers: 28,
        heads: 32,
        context: 524_288,
        eps: 1e-6,
        theta: 5_000_000.0,
        partial: 1.0,
        attn: Attn::Grouped {
            kv: Some(2),
            head_dim: HeadDim::GivenUnlessNull(128),
            qk_norm: QkNormRule::Never,
        },
        rotate: Rotate::Half,
        moe: Some(Experts {
            count: Some(160),
            top_k: Some(16),
            width: 512,
            routed_scaling: 3.66,
            dense: Dense::Types(Some(1)),
            ..GLM_EXPERTS
        }),
        mtp: false,
        o_bias: true,
        extra: Extra::GatedQuery,
        ..GLM
    },
    // Kimi Linear: Kimi Delta Attention in most layers, DeepSeek-V3's latent attention without
    // positions and a Q latent in the rest, V3's experts.
    Class {
        model_type: "kimi_linear",
        vocab: 163_840,
        hidden: 2304,
        inter: Some(9216),
        layers: 27,
        heads: 32,
        context: 1_048_576,
        eps: 1e-5,
        attn: Attn::Latent {
            kv: None,
            dims: LatentDims {
                q_lora: None,
                ..V3_LATENT
            },
            sparse: None,
        },
        moe: Some(Experts {
            width: 1024,
            groups: (1, 1),
            routed_scaling: 2.446,
            dense: Dense::Types(Some(1)),
            ..V3_EXPERTS
        }),
        mtp: false,
        linear: Linear::Kimi,
        layout: Layout::KimiLinear,
        ..V3
    },
    // Ling's hybrid: KDA (full-rank gates, the decay bounded) in five layers of six, V3's latent
    // attention with interleaved RoPE and a gate per head in the sixth, V3's experts.
    Class {
        model_type: "bailing_hybrid",
        vocab: 157_184,
        hidden: 2560,
        inter: Some(6144),
        layers: 42,
        heads: 32,
        context: 262_144,
        theta: 6_000_000.0,
        attn: Attn::Latent {
            kv: Some(32),
            dims: LatentDims {
                q_lora: None,
                ..V3_LATENT
            },
            sparse: None,
        },
        rotate: Rotate::Pairs,
        moe: Some(Experts {
            count: Some(512),
            width: 768,
            dense: Dense::Types(Some(2)),
            ..V3_EXPERTS
        }),
        mtp: false,
        linear: Linear::Bailing,
        layout: Layout::Bailing,
        ..V3
    },
    // Mistral 4 (Mistral Small 4): DeepSeek-V3's latent attention with its queries scaled up with
    // position as Ministral 3's are, softmax routing without a correction bias, no dense layers
    // by default; YaRN ×128 from 8,192 tokens where the config gives no RoPE dict.
    Class {
        model_type: "mistral4",
        vocab: 131_072,
        hidden: 4096,
        inter: Some(12288),
        layers: 36,
        heads: 32,
        context: 1_048_576,
        attn: Attn::Latent {
            kv: Some(32),
            dims: LatentDims {
                q_lora: Some(1024),
                kv_lora: 256,
                nope: 64,
                rope: 64,
                v: Some(128),
            },
            sparse: None,
        },
        moe: Some(Experts {
            count: Some(128),
            top_k: Some(4),
            width: 2048,
            v2: true,
            groups: (1, 1),
            routed_scaling: 1.0,
            dense: Dense::FirstK(0),
            ..V3_EXPERTS
        }),
        mtp: false,
        rope_default: Some(|_| RopeScaling::Yarn {
            factor: 128.0,
            original: 8192,
            beta_fast: 32.0,
            beta_slow: 1.0,
            attention_factor: 1.0,
            truncate: true,
        }),
        extra: Extra::Mistral4,
        // Its experts stacked, as transformers saves them (it converts none on load).
        layout: Layout::MiniMaxM3,
        ..V3
    },
];

// HY v4 (Tencent Hunyuan): V3.2's latent attention, rotating half against half, with a
// learned sink and a σ output gate per head feature, every fourth layer's indexer reused by
// the three after it; hyper-connections around every sublayer; the first layer dense and the
// rest V3's experts, clamped.
const HY_V4: Class = Class {
    model_type: "hy_v4",
    vocab: 120_832,
    hidden: 2816,
    inter: Some(6912),
    layers: 34,
    heads: 32,
    context: 262_144,
    eps: 1e-5,
    attn: Attn::Latent {
        kv: Some(32),
        dims: LatentDims {
            nope: 192,
            v: Some(256),
            ..V3_LATENT
        },
        // transformers 5.25 rotates interleaved pairs in the attention and the indexer
        // (5.24 rotated half against half).
        sparse: Some(Sparse {
            heads: 16,
            interleaved: true,
            own: Own::EveryFourth,
            hy: true,
        }),
    },
    rotate: Rotate::Pairs,
    moe: Some(Experts {
        width: 768,
        groups: (1, 1),
        routed_scaling: 2.827,
        dense: Dense::Types(None),
        ..V3_EXPERTS
    }),
    mtp: false,
    extra: Extra::HyV4,
    layout: Layout::HyV4,
    ..V3
};

pub fn load(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    // Configs that declare `DeepseekV3ForCausalLM` under another model_type read as V3.
    let c = CLASSES
        .iter()
        .find(|c| c.model_type == model_type)
        .unwrap_or(&V3);
    let mut s = super::skeleton(name, model_type, family);
    s.vocab = cfg.size("vocab_size", Some(c.vocab))?;
    s.hidden = cfg.size("hidden_size", Some(c.hidden))?;
    s.layers = layer_count(cfg, &["num_hidden_layers"], Some(c.layers))?;
    s.context = cfg.size("max_position_embeddings", Some(c.context))?;
    s.mlp = Mlp {
        // A class without `intermediate_size` has experts in every layer.
        intermediate: match c.inter {
            Some(inter) => cfg.size("intermediate_size", Some(inter))?,
            None => 0,
        },
        act: super::act(cfg, "hidden_act", "silu")?,
        gated: true,
        bias: c.mlp_bias && cfg.flag("mlp_bias", false)?,
        fused_gate_up: false,
        sub_norm: false,
        clamp: None,
        scalar: false,
    };
    s.norm = pre_rms(cfg, c.eps)?;
    let kinds = match c.extra {
        Extra::Dots3 => Some(super::dots3::layer_kinds(cfg, s.layers)?),
        // Every layer of the other classes is of one kind.
        Extra::None
        | Extra::HyV4
        | Extra::HyV4Vl
        | Extra::Axk2
        | Extra::GatedQuery
        | Extra::Mistral4 => None,
    };
    // Kimi Linear's attention carries no positions: no RoPE key is read.
    let mut r = if c.linear == Linear::Kimi {
        None
    } else if let Some(kinds) = &kinds {
        Some(super::dots3::kind_rope(cfg, kinds, s.context)?)
    } else {
        Some(rope(
            cfg,
            &RopeDefaults {
                partial: c.partial,
                renames: c.rope_renames,
                scaling: c.rope_default,
                ..RopeDefaults::new(c.theta, s.context)
            },
        )?)
    };
    s.tied = cfg.flag("tie_word_embeddings", c.tied)?;
    // Kimi Linear's and Ling's causal LMs tie nothing, whatever the flag says
    // (`_tied_weights_keys = {}`).
    if c.linear != Linear::None {
        s.tied = false;
    }
    s.attn = match c.attn {
        Attn::Grouped {
            kv,
            head_dim,
            qk_norm,
        } => {
            let (h, kv, hd) = heads(cfg, s.hidden, Some(c.heads), kv, head_dim)?;
            let qk_norm = match qk_norm {
                QkNormRule::Never => false,
                QkNormRule::Always => true,
                QkNormRule::Flag(default) => cfg.flag("use_qk_norm", default)?,
            };
            let bias = cfg.flag("attention_bias", c.attention_bias)?;
            Attention {
                qkv_bias: bias,
                o_bias: bias && c.o_bias,
                qk_norm: if qk_norm {
                    QkNorm::PerHead
                } else {
                    QkNorm::None
                },
                // Sarvam's checkpoints keep one [q|k|v] tensor per layer (transformers splits it).
                qkv: if c.layout == Layout::Sarvam {
                    Qkv::Stacked
                } else {
                    Qkv::Separate
                },
                ..plain_attention(h, kv, hd)
            }
        }
        Attn::Latent { kv, dims, sparse } => {
            let v2 = c.model_type == "deepseek_v2";
            // HYV4Config sets num_key_value_heads to the query heads whatever it says.
            let kv = if matches!(c.extra, Extra::HyV4 | Extra::HyV4Vl) {
                KvHeads::Forced
            } else {
                KvHeads::Read(kv)
            };
            let mut a = latent(cfg, v2, c.heads, &s, r.as_ref(), kv, dims)?;
            if let Some(sparse) = sparse {
                let eps = s.norm.eps;
                let m = a.mla.as_mut().expect("latent attention");
                m.indexer = Some(indexer(cfg, m, sparse, s.layers, eps)?);
            }
            a
        }
    };
    s.position = match r.as_mut() {
        Some(r) => {
            // DeepSeek rotates interleaved pairs (V2 as complex numbers, V3 with rope_interleave).
            r.interleaved = match c.rotate {
                Rotate::Half => false,
                Rotate::PairsByFlag => cfg.flag("rope_interleave", true)?,
                Rotate::Pairs => true,
            };
            Position::Rope(r.clone())
        }
        None => Position::None,
    };

    let spans = match c.window_from {
        Some(from) => {
            let window = super::window(cfg, Some(4096))?;
            super::sliding_from(cfg, s.layers, window, from)?
        }
        None => vec![AttnSpan::Full; s.layers as usize],
    };
    let (moe, sparse) = match &c.moe {
        Some(x) => (
            Some(Moe {
                post_norm: x.post_norm,
                shared_bias: x.v2 && s.mlp.bias,
                ..experts(cfg, x)?
            }),
            sparse_layers(cfg, x.dense, s.layers)?,
        ),
        None => (None, vec![false; s.layers as usize]),
    };
    s.moe = moe;
    s.plan = (0..s.layers as usize)
        .map(|i| LayerPlan::attention(spans[i], c.linear != Linear::Kimi, sparse[i]))
        .collect();
    let kda = match c.linear {
        Linear::None => None,
        Linear::Kimi => {
            s.recurrent = Some(Recurrent::DeltaNet(super::delta::kimi_delta(
                cfg, s.norm.eps,
            )?));
            Some(super::delta::kimi_layers(cfg, s.layers)?)
        }
        Linear::Bailing => {
            s.recurrent = Some(Recurrent::DeltaNet(super::delta::bailing_delta(
                cfg,
                s.norm.eps,
                s.attn.heads,
            )?));
            // The attention gates each head's output by σ(x · W_g).
            s.attn.out_gate = Some(OutGate {
                softplus: false,
                per_head: true,
                bias: false,
                stored: GateStore::Own,
            });
            if let Some(m) = s.moe.as_mut() {
                m.act_clips = ling_clips(cfg, s.layers)?;
            }
            Some(super::delta::bailing_layers(cfg, s.layers)?)
        }
    };
    for (l, kda) in s.plan.iter_mut().zip(kda.unwrap_or_default()) {
        if kda {
            l.mixer = Mixer::DeltaNet;
            l.rope = false;
        }
    }
    match c.extra {
        Extra::None => {}
        Extra::HyV4 => hy_v4(cfg, &mut s)?,
        Extra::HyV4Vl => {
            hy_v4(cfg, &mut s)?;
            hy_v4_vl(cfg, &mut s)?
        }
        Extra::Axk2 => axk2(cfg, &mut s)?,
        // Each head's query rows, then its gate rows, in one projection.
        Extra::GatedQuery => {
            s.attn.out_gate = Some(OutGate {
                softplus: false,
                per_head: false,
                bias: false,
                stored: GateStore::InQuery,
            })
        }
        Extra::Dots3 => {
            if let Some(kinds) = &kinds {
                super::dots3::finish(cfg, &mut s, kinds)?
            }
        }
        Extra::Mistral4 => mistral4::finish(cfg, &mut s)?,
    }
    s.mtp_layers = if c.mtp {
        cfg.count("num_nextn_predict_layers", 0)?
    } else {
        0
    };
    if c.minicpm {
        scales(cfg, &mut s)?;
    }
    s.layout = c.layout;
    Ok(s)
}

/// What HY v4 adds to V3.2's parts: a sink and an output gate in every attention, clamped
/// experts stored stacked [E, out, in], and hyper-connections.
fn hy_v4(cfg: &Config, s: &mut Spec) -> Result<()> {
    s.attn.sinks = true;
    s.attn.out_gate = Some(OutGate {
        softplus: false,
        per_head: false,
        bias: false,
        stored: GateStore::Own,
    });
    if let Some(m) = s.moe.as_mut() {
        m.storage = ExpertStorage::Stacked {
            out_in: true,
            interleaved: false,
        };
        // Clamped whatever its sign: the class's docstring says a limit ≤ 0 disables the clamp,
        // but its experts clamp by it unconditionally.
        m.swiglu_limit = Some(cfg.float("swiglu_limit", 10.0)?);
        m.swiglu_plain = true;
    }
    let streams = cfg.size("hc_mult", Some(4))?;
    if streams > 64 {
        return Err(cfg.err(
            "hc_mult",
            format!("is {streams}; anatomy reads up to 64 hyper-connection streams"),
        ));
    }
    s.stream = crate::spec::Stream::Hyper(Hyper {
        streams,
        magnitude: cfg.float("hc_magnitude", 2.0)?,
        eps: cfg.float("hc_eps", 1e-6)?,
        sinkhorn: None,
    });
    Ok(())
}

/// What HY v4 VL's language model changes of HY v4's: its latents' RMS norms at the model's ε,
/// and the M-RoPE sections its config class checks (three, over the rotated half of a head; its
/// default [12, 10, 10]), which rotate a text token as plain RoPE does.
fn hy_v4_vl(cfg: &Config, s: &mut Spec) -> Result<()> {
    let eps = s.norm.eps;
    let Some(mla) = s.attn.mla.as_mut() else {
        return Ok(());
    };
    mla.latent_eps = eps;
    let half = mla.qk_rope_head_dim / 2;
    let (key, rope) = match cfg.sub("rope_parameters")? {
        Some(r) => ("rope_parameters", Some(r)),
        None => ("rope_scaling", cfg.sub("rope_scaling")?),
    };
    let sections = match &rope {
        Some(r) => r.list_any("mrope_section", |v| v.as_u64(), "a count of rotated pairs")?,
        None => None,
    }
    .unwrap_or(vec![12, 10, 10]);
    if sections.len() != 3 || sections.iter().sum::<u64>() != half {
        return Err(cfg.err(
            &format!("{key}.mrope_section"),
            format!("is {sections:?}; it must be three counts (time, height, width) summing to qk_rope_head_dim / 2 ({half})"),
        ));
    }
    Ok(())
}

/// Ling's per-layer SwiGLU clips (transformers 5.25), for the routed and the shared experts: none
/// where both lists are absent or all zeros (what `save_pretrained` writes without them).
fn ling_clips(cfg: &Config, layers: u64) -> Result<Option<ActClips>> {
    let read = |key: &str| -> Result<Vec<f64>> {
        let list = cfg.list(key, layers, |v| v.as_f64(), "a number (0: no clip)")?;
        let list = list.unwrap_or_else(|| vec![0.0; layers as usize]);
        match list.iter().find(|l| !l.is_finite() || **l < 0.0) {
            Some(l) => Err(cfg.err(
                key,
                format!("holds {l}; each limit must be a finite number ≥ 0 (0: no clip)"),
            )),
            None => Ok(list),
        }
    };
    let clips = ActClips {
        routed: read("expert_swiglu_limit_list")?,
        shared: read("share_expert_swiglu_limit_list")?,
    };
    let any = |l: &[f64]| l.iter().any(|&x| x != 0.0);
    Ok((any(&clips.routed) || any(&clips.shared)).then_some(clips))
}

/// What A.X-K2 adds to V3.2's parts: the query and its output gate from one projection, gated
/// norms (the attention's in every layer, the FFN's in the MoE layers).
fn axk2(cfg: &Config, s: &mut Spec) -> Result<()> {
    // Grouped routing fills the other groups' scores with 0 rather than −∞.
    if s.moe.as_ref().is_some_and(|m| m.n_group > 1) {
        return Err(cfg.err(
            "n_group",
            "is more than 1; A.X-K2 fills the scores of the groups it skips with 0 (not −∞), which anatomy does not route by yet: give null or 1",
        ));
    }
    let m = s.attn.mla.as_mut().expect("latent attention");
    m.q_gate = true;
    s.attn.out_gate = Some(OutGate {
        softplus: false,
        per_head: false,
        bias: false,
        stored: GateStore::InQuery,
    });
    s.gated_norm = Some(GatedNorm {
        rank: cfg.size("gated_norm_rank", Some(16))?,
    });
    Ok(())
}

/// MiniCPM's μP scales: embeddings × `scale_emb`, each sublayer's output × `scale_depth` /
/// √layers, the final hidden state ÷ (hidden / `dim_model_base`) before the head.
fn scales(cfg: &Config, s: &mut Spec) -> Result<()> {
    let finite = |key: &str, default: f64| -> Result<f64> {
        let v = match cfg.opt_float(key)? {
            Some(v) => v,
            None => default,
        };
        if v.is_finite() && v != 0.0 {
            Ok(v)
        } else {
            Err(cfg.err(key, format!("is {v}; it must be a finite, non-zero number")))
        }
    };
    s.embedding.multiplier = finite("scale_emb", 12.0)?;
    // A null scale_depth makes the residual scale 1; a null dim_model_base, the logit scale.
    let depth = (s.layers as f64).sqrt();
    let depth_default = if cfg.present("scale_depth") {
        depth
    } else {
        1.4
    };
    s.residual_mult = finite("scale_depth", depth_default)? / depth;
    let hidden = s.hidden as f64;
    let base_default = if cfg.present("dim_model_base") {
        hidden
    } else {
        256.0
    };
    s.logits_mult = finite("dim_model_base", base_default)? / hidden;
    Ok(())
}

/// Where latent attention's K/V heads come from.
pub(super) enum KvHeads {
    /// `num_key_value_heads`, with this default (None: the query heads).
    Read(Option<u64>),
    /// The query heads, the key unread (HY v4's class overwrites it).
    Forced,
}

/// Multi-head latent attention of `heads` heads by default; its K/V heads must equal the query
/// heads. DeepSeek-V2 (`v2`) also requires the heads to divide the width.
pub(super) fn latent(
    cfg: &Config,
    v2: bool,
    heads: u64,
    s: &Spec,
    r: Option<&Rope>,
    kv: KvHeads,
    d: LatentDims,
) -> Result<Attention> {
    let h = cfg.size("num_attention_heads", Some(heads))?;
    if v2 && !s.hidden.is_multiple_of(h) {
        return Err(cfg.err(
            "hidden_size",
            format!(
                "is {}, not a multiple of num_attention_heads ({h}); DeepseekV2Config requires it",
                s.hidden
            ),
        ));
    }
    // transformers repeats MLA's per-head keys num_heads / num_key_value_heads times, which
    // only fits when they are equal.
    let kv = match kv {
        KvHeads::Read(default) => cfg.size("num_key_value_heads", Some(default.unwrap_or(h)))?,
        KvHeads::Forced => h,
    };
    if kv != h {
        return Err(cfg.err(
            "num_key_value_heads",
            format!(
                "is {kv}; with multi-head latent attention it must equal num_attention_heads ({h})"
            ),
        ));
    }
    let bias = cfg.flag("attention_bias", false)?;
    let nope = cfg.size("qk_nope_head_dim", Some(d.nope))?;
    let rope_d = cfg.size("qk_rope_head_dim", Some(d.rope))?;
    let vd = cfg.size("v_head_dim", Some(d.v.unwrap_or(s.hidden / h)))?;
    let q_lora = if cfg.present("q_lora_rank") {
        cfg.opt_size("q_lora_rank")?
    } else {
        d.q_lora
    };
    if rope_d % 2 == 1 {
        return Err(cfg.err(
            "qk_rope_head_dim",
            format!("is {rope_d}, which is odd; RoPE rotates pairs of dims, so it must be even"),
        ));
    }
    let qk = nope + rope_d;
    // With any RoPE scaling, `mscale_all_dim` enters the score scale squared
    // (transformers' `yarn_apply_mscale`).
    let mut mscale = 1.0;
    let params = match r {
        None => None,
        Some(_) => match cfg.sub("rope_parameters")? {
            Some(p) => Some(p),
            None => cfg.sub("rope_scaling")?,
        },
    };
    if let (Some(r), Some(p)) = (r, params) {
        let all = p.opt_float("mscale_all_dim")?.unwrap_or(0.0);
        if r.full.scaling != RopeScaling::None && all != 0.0 {
            let f = p.float("factor", 1.0)?;
            if f > 1.0 {
                mscale = (0.1 * all * f.ln() + 1.0).powi(2);
            }
        }
    }
    Ok(Attention {
        kind: AttnKind::Mla,
        heads: h,
        kv_heads: h,
        head_dim: qk,
        v_head_dim: vd,
        v_scale: 1.0,
        moa: None,
        dynamic_mask: None,
        qkv_bias: false,
        o_bias: bias,
        qk_norm: QkNorm::None,
        softcap: None,
        sinks: false,
        scale_dim: qk as f64,
        scale_mult: mscale,
        mla: Some(Mla {
            q_lora_rank: q_lora,
            bias,
            kv_lora_rank: cfg.size("kv_lora_rank", Some(d.kv_lora))?,
            qk_nope_head_dim: nope,
            qk_rope_head_dim: rope_d,
            indexer: None,
            lora_scales: None,
            q_gate: false,
            latent_eps: Mla::LATENT_EPS,
            rope_key_norm: false,
        }),
        qkv: Qkv::Separate,
        clip_qkv: None,
        query_scale: None,
        sub_norm: false,
        out_gate: None,
        differential: false,
        o_bias_last: false,
        v_norm: false,
        v_from_k: false,
        shares_kv: false,
        block_index: None,
        pool_index: None,
        qsa: None,
        cca: None,
        rel_logits: None,
        kv_conv: None,
        l2_clip: None,
        token_sinks: false,
        kv_inputs: false,
        v4: None,
    })
}

/// The routed and shared experts.
fn experts(cfg: &Config, x: &Experts) -> Result<Moe> {
    let e = super::experts(cfg, "n_routed_experts", x.count)?;
    let k = top_k(cfg, e, x.top_k)?;
    let n_shared =
        match x.shared {
            Some(default) => cfg.count("n_shared_experts", default)?,
            None if cfg.present("n_shared_experts") => cfg.count("n_shared_experts", 0)?,
            None => return Err(cfg.err(
                "n_shared_experts",
                "is missing; this config class has no default for it, so the config must give it",
            )),
        };
    let moe_f = cfg.size("moe_intermediate_size", Some(x.width))?;
    let groups = (
        cfg.size("n_group", Some(x.groups.0))?,
        cfg.size("topk_group", Some(x.groups.1))?,
    );
    // V2 groups experts only with `group_limited_greedy`; the others always.
    let (n_group, topk_group) = if !x.v2 {
        groups
    } else {
        match cfg.string("topk_method", "greedy")?.as_str() {
            "greedy" => (1, 1),
            "group_limited_greedy" => groups,
            other => {
                return Err(cfg.err(
                    "topk_method",
                    format!(
                        "is `{other}`; DeepSeek-V2 routes with `greedy` or `group_limited_greedy`"
                    ),
                ))
            }
        }
    };
    let (n_group, topk_group) = super::expert_groups(cfg, e, k, (n_group, topk_group), !x.v2)?;
    let moe = Moe {
        shared_experts: n_shared,
        shared_intermediate: moe_f * n_shared,
        scoring: if x.v2 {
            Scoring::Softmax
        } else {
            Scoring::Sigmoid
        },
        norm_topk_prob: cfg.flag("norm_topk_prob", x.norm_topk)?,
        correction_bias: !x.v2,
        n_group,
        topk_group,
        routed_scaling: cfg.float("routed_scaling_factor", x.routed_scaling)?,
        ..plain_moe(e, k, moe_f)
    };
    Ok(moe)
}
