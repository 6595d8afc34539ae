//! The registry: one row per `model_type`, holding what is data about a family — its display
//! name, the loader that reads its config (shared by families of one structure), its llama.cpp
//! GGUF architecture, and the keys of its config class known to leave the forward pass unchanged.
//! Mechanisms (norms, attention, FFNs, routing) are code, in the Spec's enums; a family that
//! reuses them is one row here and its fixtures.

use super::delta::DeltaHeads;
use super::echo::Echo;
use super::llama::{
    Bias, Defaults, Experts, FfAdjust, Hybrid, HybridLayers, HybridMixer, LlamaLike, MoeLayers,
    Multipliers, Mup, NoRope, Period, Renormalize, RopeTypes, Routed, SharedMlp, SlidingOwn,
    TypePattern, Unlisted, Windows,
};
use super::mamba::S6Keys;
use super::mamba2::SsmKeys;
use super::{
    blt, cpmant, dbrx, deepseek, deepseek_v4, dory, ergo, falcon, falcon_h1, gemma, gemma3n,
    gemma4, gpt2, gpt_oss, hrm, inkling, jetmoe, kolibri, llama4, longcat, mamba, mamba2,
    minimax_m3, modernbert, nemotron_h, qwen4_exp, recurrent_gemma, rwkv, towers, wrappers, xlstm,
    zamba, zaya,
};
use super::{ByType, HeadDim};
use crate::config::Config;
use crate::error::Result;
use crate::spec::{alibi_slopes_bloom, alibi_slopes_mpt};
use crate::spec::{
    Block, DeltaStore, GateStore, HfWrap, Layout, NormKind, NormPlace, OutGate, QkNorm, Qkv,
    QueryScale, ScaleForm, Scoring, Spec,
};

/// Inkling 2's and Inkling 2 Loop's `attribute_map`.
const INKLING2_RENAMES: &[(&str, &str)] = &[
    ("sconv_kernel_size", "conv_kernel_size"),
    ("model_max_length", "max_position_embeddings"),
    ("sliding_window", "sliding_window_size"),
    ("num_local_experts", "n_routed_experts"),
    ("intermediate_size", "moe_intermediate_size"),
    ("routed_scaling_factor", "route_scale"),
];

/// Reads a config of one structure into a Spec: `(config, model_type, family name, model name)`.
pub type Loader = fn(&Config, &str, &str, &str) -> Result<Spec>;

/// A wrapper's part besides its language model: what it is, the Hugging Face name prefix of its
/// tensors, and how to name them from the config (`None` from the builder for a tower of a kind
/// it does not know).
#[derive(Clone, Copy)]
pub struct Part {
    pub what: &'static str,
    pub prefix: &'static str,
    pub build: towers::Builder,
}

const fn tower(what: &'static str, prefix: &'static str, build: towers::Builder) -> Part {
    Part {
        what,
        prefix,
        build,
    }
}

/// How a family's config is read.
// Rows are statics read in place: the variants' size difference costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum Reader {
    /// The shared Llama-like reader, with what this family changes.
    Llama(LlamaLike),
    /// A reader of its own structure.
    Own(Loader),
}

pub struct Family {
    /// The `model_type` this row reads.
    pub model_type: &'static str,
    /// Other `model_type`s read the same way.
    pub aliases: &'static [&'static str],
    /// Display name ("Llama", "Qwen3-MoE").
    pub name: &'static str,
    pub read: Reader,
    /// llama.cpp's `general.architecture` for this family. anatomy reads the GGUF files of those
    /// `anatomy_checkpoint::gguf::ARCHITECTURES` lists, each checked against llama.cpp by a
    /// fixture; a test there holds each to its row here.
    pub gguf: Option<&'static str>,
    /// Keys of the config class that do not change the forward pass (dropout, init ranges, token
    /// ids …), besides those of every config (`COMMON`).
    pub inert: &'static [&'static [&'static str]],
    /// A multimodal wrapper: the `model_type` of the language model in its `text_config`.
    pub text: Option<&'static str>,
    /// Other `model_type`s the wrapper's class reads in its `text_config` as `text` (Kimi
    /// K2.5's `kimi_k2`, which its config class renames to `deepseek_v3`).
    pub text_aliases: &'static [&'static str],
    /// The wrapper's class builds its language model from its own keys where it has no
    /// `text_config` (dots.3 Note's published configs).
    pub text_at_top: bool,
    /// A wrapper's parts besides its language model.
    pub parts: &'static [Part],
    /// The config class's `attribute_map`: (key in the file, attribute it sets).
    pub renames: &'static [(&'static str, &'static str)],
    /// Which config's `tie_word_embeddings` ties a wrapper's head to its embedding.
    pub tie: Tie,
    /// Keys the class never reads that restate the model in its first code's names: each must
    /// agree with what transformers builds (`echo`).
    pub echoes: &'static [(&'static str, Echo)],
    /// Where a wrapper keeps its language model's tensors: all of them under `language_model.`
    /// (Gemma 3), under another module's name (Emu3's `text_model.`), or its `model.` under
    /// `model.language_model.` with the head beside it (Qwen3.5).
    pub wrap: HfWrap,
    /// Reads a wrapper's language model with the wrapper's own keys, in place of the text row's
    /// loader: `(wrapper's config, text_config, text model_type, family name, model name)`
    /// (Gemma 4's assistants, whose every layer reads its target's keys and values).
    pub text_read: Option<TextReader>,
    /// transformers builds a model of this type alone. False for a language model it builds
    /// only inside its wrapper, with no class of its own that has a head (`qwen2_vl_text`):
    /// such a config alone is refused.
    pub standalone: bool,
    /// How an image enters its token stream, for a wrapper anatomy runs on one.
    pub image: Option<ImageReader>,
    /// A wrapper whose head is its own (not `Tie::Text`) scales its logits as its language
    /// model's head does (Aya Vision's `logit_scale`, the Granite wrappers' `logits_scaling`);
    /// where false, its head scales nothing and the language model's multiplier is dropped
    /// (Command A Vision's head, LLaVA's around Granite).
    pub head_scale: bool,
}

/// Which config's `tie_word_embeddings` ties a wrapper's head to its embedding.
#[derive(Clone, Copy)]
pub enum Tie {
    /// The language model's: it is a causal LM with its own head (Llama 4), or no wrapper.
    Text,
    /// The wrapper's own flag, with its class default: the head is the wrapper's (Gemma 3).
    Wrapper(bool),
    /// The wrapper's flag, or the text config's where the wrapper's is false (LLaVA's and
    /// LLaVA-OneVision's configs take the text config's flag up when their own is false).
    Either(bool),
    /// `Either`, but a flat config's flag is its language model's alone, the wrapper's then its
    /// class default (HunyuanOCR's class moves every text key of a flat config, the flag among
    /// them, into its text config).
    EitherNested(bool),
}

/// Reads a wrapper's language model together with the wrapper's keys (`Family::text_read`).
pub type TextReader = fn(&Config, &Config, &str, &str, &str) -> Result<Spec>;

/// Reads a wrapper's way of running an image from its config: `None` for a tower it cannot run.
pub type ImageReader = fn(&Config) -> Result<Option<crate::spec::ImageInput>>;

impl Reader {
    /// `cfg` read as a config of `model_type`.
    pub fn read(
        &self,
        cfg: &Config,
        model_type: &str,
        family: &str,
        name: &str,
    ) -> Result<crate::spec::Spec> {
        match self {
            Reader::Llama(f) => super::llama::load(cfg, f, model_type, family, name),
            Reader::Own(load) => load(cfg, model_type, family, name),
        }
    }
}

impl Family {
    pub fn is_inert(&self, key: &str) -> bool {
        // A sub-config saved by transformers (MPT's `attn_config`) carries every config's keys.
        let last = key.rsplit('.').next().unwrap_or(key);
        COMMON.contains(&key)
            || COMMON.contains(&last)
            || TRAINING_ONLY.iter().any(|s| last.ends_with(s))
            || self.inert.iter().any(|list| list.contains(&key))
    }
}

/// Keys every config has (transformers' `PretrainedConfig`): identity, token ids, generation
/// defaults, serialization. None reaches the forward pass of a causal language model.
/// Endings of keys that only training reads (dropout rates, initializer ranges, auxiliary
/// losses, router-logit outputs): inert for every family, under whatever name a config uses.
const TRAINING_ONLY: &[&str] = &[
    "dropout",
    "_pdrop",
    "dropout_prob",
    "dropout_rate",
    "initializer_range",
    "_loss_coef",
    "_loss_weight",
    "output_router_logits",
];

pub const COMMON: &[&str] = &[
    "architectures",
    "model_type",
    "transformers_version",
    "torch_dtype",
    "dtype",
    "_name_or_path",
    "name_or_path",
    "auto_map",
    "use_cache",
    "bos_token_id",
    "eos_token_id",
    "pad_token_id",
    "sep_token_id",
    "decoder_start_token_id",
    "id2label",
    "label2id",
    "num_labels",
    "problem_type",
    "return_dict",
    "output_hidden_states",
    "output_attentions",
    "torchscript",
    "is_encoder_decoder",
    "is_decoder",
    "add_cross_attention",
    "tie_encoder_decoder",
    "chunk_size_feed_forward",
    "pruned_heads",
    "finetuning_task",
    "tokenizer_class",
    "prefix",
    "task_specific_params",
    "max_length",
    "min_length",
    "do_sample",
    "early_stopping",
    "num_beams",
    "num_beam_groups",
    "diversity_penalty",
    "temperature",
    "top_k",
    "top_p",
    "typical_p",
    "repetition_penalty",
    "length_penalty",
    "no_repeat_ngram_size",
    "encoder_no_repeat_ngram_size",
    "bad_words_ids",
    "num_return_sequences",
    "output_scores",
    "return_dict_in_generate",
    "forced_bos_token_id",
    "forced_eos_token_id",
    "remove_invalid_values",
    "exponential_decay_length_penalty",
    "suppress_tokens",
    "begin_suppress_tokens",
    "use_bfloat16",
    "cache_implementation",
    // How the weights are stored, not what they compute: read by quant.rs for the stored tensors.
    "quantization_config",
    "quantization",
    "_attn_implementation_autoset",
    "attn_implementation",
];

const DEEPSEEK_UNREAD: &[&str] = &[
    // Derived by the classes (nope + rope), whatever a saved config says.
    "qk_head_dim",
    "output_router_logits",
    "aux_loss_alpha",
    "seq_aux",
    "pretraining_tp",
    "ep_size",
    "moe_layer_freq",
    "scoring_func",
    "head_dim",
];

/// GPT-J's and CodeGen's configs use GPT-2's key names.
const GPTJ_KEYS: &[(&str, &str)] = &[
    ("n_embd", "hidden_size"),
    ("n_head", "num_attention_heads"),
    ("n_layer", "num_hidden_layers"),
    ("n_positions", "max_position_embeddings"),
    ("n_inner", "intermediate_size"),
    ("activation_function", "hidden_act"),
];

/// GPT-J: attention and MLP side by side on one LayerNorm, the first `rotary_dim` dims of each
/// head rotated in interleaved pairs at a fixed base, biases on the MLP and the LM head.
const GPTJ: LlamaLike = LlamaLike {
    qkv_bias: Bias::Never,
    o_bias: Bias::Never,
    mlp_bias: Bias::Always,
    norm: NormKind::Layer { bias: true },
    eps_key: Some("layer_norm_epsilon"),
    gated: false,
    block: Block::Parallel { shared_norm: true },
    head_bias: Bias::Always,
    gptj_rope: Some(Some(64)),
    inner_x4: true,
    mha_only: true,
    layout: Layout::Gptj,
    ..LlamaLike::llama(Defaults {
        act: "gelu_new",
        ..d(
            50400, 4096, 16384, 28, 16, None, None, 2048, 1e-5, 10_000.0, false,
        )
    })
};

/// GraniteMoE's experts: every expert of a layer in one [E, out, in] tensor per projection,
/// softmax over each token's top-k logits.
const GRANITE_EXPERTS: Routed = Routed {
    scoring: Scoring::TopkSoftmax,
    stacked_out_in: true,
    ..Routed::MIXTRAL
};

/// GraniteMoE: Granite's multipliers with its experts in every layer.
/// Apertus and Apertus 1.5: Llama with per-head QK-norm, a plain MLP whose xIELU learns its own
/// parameters, llama3-scaled RoPE by default.
const APERTUS: LlamaLike = LlamaLike {
    qk_norm: QkNorm::PerHead,
    mlp_bias: Bias::Never,
    gated: false,
    layout: Layout::Apertus,
    rope_scaling_default: Some(apertus_rope),
    ..LlamaLike::llama(Defaults {
        act: "xielu",
        ..d(
            131_072,
            4096,
            14336,
            32,
            32,
            None,
            None,
            65536,
            1e-5,
            12_000_000.0,
            false,
        )
    })
};

/// Keys in Apertus configs that its classes never read (the QK-norm is always on, the MLP never
/// has biases).
const APERTUS_INERT: &[&[&str]] = &[
    TRAINING,
    &["hidden_dropout", "qk_norm", "post_norm", "mlp_bias"],
];

const GRANITE_MOE: LlamaLike = LlamaLike {
    multipliers: Some(Mup::Granite(Multipliers::ONE)),
    mlp_bias: Bias::Never,
    layout: Layout::GraniteMoe,
    experts: Experts::Routed(GRANITE_EXPERTS),
    ..LlamaLike::llama(d(
        32000, 4096, 11008, 32, 32, None, None, 2048, 1e-6, 10_000.0, false,
    ))
};

/// GraniteMoE-Shared's shared MLP: none when its width is 0 (the class default).
const GRANITE_SHARED: SharedMlp = SharedMlp {
    fused: true,
    optional: true,
    ..SharedMlp::of("shared_intermediate_size", 0)
};

/// Mamba's keys that leave its forward pass as it is.
const MAMBA_INERT: &[&[&str]] = &[
    TRAINING,
    &[
        "residual_in_fp32",
        "use_mambapy",
        "use_associative_scan",
        "time_step_scale",
        "time_step_min",
        "time_step_max",
        "time_step_init_scheme",
        "time_step_floor",
        "rescale_prenorm_residual",
    ],
];

/// Initialization and training-time settings that most config classes carry.
const TRAINING: &[&str] = &["initializer_range", "attention_dropout"];

/// Sarvam-MoE's key names for GLM-4.5's config (its original checkpoints'), which Param2 shares.
const SARVAM_NAMES: &[(&str, &str)] = &[
    ("num_local_experts", "n_routed_experts"),
    ("num_mtp_layers", "num_nextn_predict_layers"),
    ("num_experts", "n_routed_experts"),
    ("num_shared_experts", "n_shared_experts"),
    ("use_qkv_bias", "attention_bias"),
];

pub static FAMILIES: &[Family] = &[
    // `is_llama_config` and `rope_interleaved` come from nanotron exports (SmolLM2); LlamaConfig
    // keeps them as attributes and LlamaModel never reads them.
    llama(
        "llama",
        "Llama",
        LlamaLike::llama(d(
            32000, 4096, 11008, 32, 32, None, None, 2048, 1e-6, 10_000.0, false,
        )),
        Some("llama"),
        &[
            TRAINING,
            &["pretraining_tp", "is_llama_config", "rope_interleaved"],
        ],
    ),
    // Ministral 3 (Mistral 3 text): Mistral with queries scaled up with position
    // (`llama_4_scaling_beta`) and YaRN by default.
    llama(
        "ministral3",
        "Ministral 3",
        LlamaLike {
            qkv_bias: Bias::Never,
            o_bias: Bias::Never,
            mlp_bias: Bias::Never,
            windows: Windows::Every(None),
            rope_scaling_default: Some(ministral3_rope),
            llama4_scaling: Some((0.1, 16384)),
            ..LlamaLike::llama(d(
                131_072,
                4096,
                14336,
                34,
                32,
                Some(8),
                Some(128),
                262_144,
                1e-5,
                1_000_000.0,
                false,
            ))
        },
        Some("mistral3"),
        &[TRAINING],
    ),
    llama(
        "mistral",
        "Mistral",
        LlamaLike {
            qkv_bias: Bias::Never,
            o_bias: Bias::Never,
            mlp_bias: Bias::Never,
            windows: Windows::Every(Some(4096)),
            ..LlamaLike::llama(d(
                32000,
                4096,
                14336,
                32,
                32,
                Some(8),
                None,
                131_072,
                1e-6,
                10_000.0,
                false,
            ))
        },
        None,
        &[TRAINING],
    ),
    // Qwen2 always has a bias on q, k and v (no config field); `use_mrope` belongs to Qwen2-VL's
    // class and Qwen2Model never reads it.
    llama(
        "qwen2",
        "Qwen2",
        LlamaLike {
            qkv_bias: Bias::Always,
            o_bias: Bias::Never,
            mlp_bias: Bias::Never,
            windows: Windows::Qwen,
            ..LlamaLike::llama(d(
                151_936,
                4096,
                22016,
                32,
                32,
                Some(32),
                None,
                32768,
                1e-6,
                10_000.0,
                false,
            ))
        },
        Some("qwen2"),
        &[TRAINING, &["use_mrope"]],
    ),
    llama(
        "qwen3",
        "Qwen3",
        LlamaLike {
            mlp_bias: Bias::Never,
            qk_norm: QkNorm::PerHead,
            windows: Windows::Qwen,
            ..LlamaLike::llama(d(
                151_936,
                4096,
                22016,
                32,
                32,
                Some(32),
                Some(128),
                32768,
                1e-6,
                10_000.0,
                false,
            ))
        },
        Some("qwen3"),
        &[TRAINING],
    ),
    // Qwen2-VL's and Qwen2.5-VL's language models: Qwen2's layers at their classes' defaults,
    // RoPE type `mrope` read as `default`.
    inner(llama(
        "qwen2_vl_text",
        "Qwen2-VL",
        qwen2_vl_like(),
        None,
        &[TRAINING, MROPE_SECTIONS],
    )),
    inner(llama(
        "qwen2_5_vl_text",
        "Qwen2.5-VL",
        qwen2_vl_like(),
        None,
        &[TRAINING, MROPE_SECTIONS],
    )),
    // Qwen2.5-Omni's thinker's language model: Qwen2-VL's layers at its class's defaults.
    inner(llama(
        "qwen2_5_omni_text",
        "Qwen2.5-Omni",
        LlamaLike {
            defaults: Defaults {
                head_dim: HeadDim::Divided,
                ..d(
                    152_064,
                    3584,
                    18944,
                    28,
                    28,
                    Some(4),
                    None,
                    32768,
                    1e-6,
                    1_000_000.0,
                    true,
                )
            },
            ..qwen2_vl_like()
        },
        None,
        &[TRAINING, MROPE_SECTIONS],
    )),
    // Qwen3-VL's language model: Qwen3's layers without sliding windows, at its class's
    // defaults. Its deep-stack inputs add visual features to the first layers' outputs, only
    // where there is an image.
    inner(llama(
        "qwen3_vl_text",
        "Qwen3-VL",
        LlamaLike {
            mlp_bias: Bias::Never,
            qk_norm: QkNorm::PerHead,
            ..LlamaLike::llama(d(
                151_936,
                4096,
                22016,
                32,
                32,
                Some(32),
                Some(128),
                128_000,
                1e-6,
                500_000.0,
                false,
            ))
        },
        None,
        &[TRAINING, MROPE_SECTIONS],
    )),
    Family {
        renames: &[("num_experts", "num_local_experts")],
        ..llama(
            "mixtral",
            "Mixtral",
            LlamaLike {
                qkv_bias: Bias::Never,
                o_bias: Bias::Never,
                mlp_bias: Bias::Never,
                windows: Windows::Every(None),
                experts: Experts::Routed(Routed::MIXTRAL),
                layout: Layout::Mixtral,
                ..LlamaLike::llama(Defaults {
                    head_dim: HeadDim::Floor,
                    ..d(
                        32000,
                        4096,
                        14336,
                        32,
                        32,
                        Some(8),
                        None,
                        131_072,
                        1e-5,
                        1_000_000.0,
                        false,
                    )
                })
            },
            None,
            &[
                TRAINING,
                &[
                    "router_aux_loss_coef",
                    "output_router_logits",
                    "router_jitter_noise",
                ],
            ],
        )
    },
    Family {
        renames: &[("num_local_experts", "num_experts")],
        ..llama(
            "qwen3_moe",
            "Qwen3-MoE",
            LlamaLike {
                mlp_bias: Bias::Never,
                qk_norm: QkNorm::PerHead,
                windows: Windows::Qwen,
                experts: Experts::Routed(Routed {
                    count: ("num_experts", 128),
                    top_k: 8,
                    width: Some(("moe_intermediate_size", 768)),
                    renormalize: Renormalize::Key(false),
                    layers: MoeLayers::Qwen(&[]),
                    zero_is_dense: true,
                    shared: None,
                    ..Routed::MIXTRAL
                }),
                ..LlamaLike::llama(d(
                    151_936,
                    2048,
                    6144,
                    24,
                    32,
                    Some(4),
                    None,
                    32768,
                    1e-6,
                    10_000.0,
                    false,
                ))
            },
            Some("qwen3moe"),
            &[TRAINING, &["router_aux_loss_coef", "output_router_logits"]],
        )
    },
    llama(
        "smollm3",
        "SmolLM3",
        LlamaLike {
            windows: Windows::NoRopeLayers,
            no_rope: NoRope::Interval,
            ..LlamaLike::llama(d(
                128_256,
                2048,
                11008,
                36,
                16,
                Some(4),
                None,
                32768,
                1e-6,
                2_000_000.0,
                true,
            ))
        },
        Some("smollm3"),
        &[TRAINING, &["pretraining_tp"]],
    ),
    // Phi-3 stores q, k and v as one tensor, and gate and up as another; its projections never
    // have a bias, whatever `attention_bias` says.
    llama(
        "phi3",
        "Phi-3",
        LlamaLike {
            qkv_bias: Bias::Never,
            o_bias: Bias::Never,
            mlp_bias: Bias::Never,
            qkv: Qkv::Stacked,
            fused_gate_up: true,
            windows: Windows::Every(None),
            layout: Layout::Phi3,
            rope_types: RopeTypes::Phi3,
            ..LlamaLike::llama(d(
                32064, 3072, 8192, 32, 32, None, None, 4096, 1e-5, 10_000.0, false,
            ))
        },
        Some("phi3"),
        &[TRAINING, &["resid_pdrop", "embd_pdrop", "attention_bias"]],
    ),
    // Phi-4-multimodal: Phi-3's language model, its image and audio encoders beside the token
    // embedding (`model.embed_tokens_extend`).
    Family {
        parts: &[
            tower(
                "image encoder",
                "model.embed_tokens_extend.image_embed.",
                towers::phi4_images,
            ),
            tower(
                "audio encoder",
                "model.embed_tokens_extend.audio_embed.",
                towers::phi4_audio,
            ),
        ],
        ..llama(
            "phi4_multimodal",
            "Phi-4-multimodal",
            LlamaLike {
                qkv_bias: Bias::Never,
                o_bias: Bias::Never,
                mlp_bias: Bias::Never,
                qkv: Qkv::Stacked,
                fused_gate_up: true,
                windows: Windows::Every(None),
                layout: Layout::Phi3,
                rope_types: RopeTypes::Phi3,
                ..LlamaLike::llama(d(
                    200_064,
                    3072,
                    8192,
                    32,
                    32,
                    Some(8),
                    None,
                    131_072,
                    1e-5,
                    10_000.0,
                    false,
                ))
            },
            None,
            &[
                TRAINING,
                &[
                    "resid_pdrop",
                    "embd_pdrop",
                    "attention_bias",
                    // The encoders' configs: their parts are named, not drawn.
                    "vision_config",
                    "audio_config",
                ],
            ],
        )
    },
    // OLMo (1): Llama with LayerNorms that have no parameters (ε fixed at 10⁻⁵) and `clip_qkv`.
    llama(
        "olmo",
        "OLMo",
        LlamaLike {
            mlp_bias: Bias::Never,
            norm: NormKind::Plain,
            eps_key: None,
            clip_qkv: true,
            ..LlamaLike::llama(d(
                50304, 4096, 11008, 32, 32, None, None, 2048, 1e-5, 10_000.0, false,
            ))
        },
        Some("olmo"),
        &[TRAINING],
    ),
    // OLMo 2 normalizes each sublayer's output, and Q and K over all heads together.
    llama(
        "olmo2",
        "OLMo 2",
        LlamaLike {
            mlp_bias: Bias::Never,
            qk_norm: QkNorm::Full,
            place: NormPlace::Post,
            layout: Layout::Sandwich,
            ..LlamaLike::llama(d(
                50304, 4096, 11008, 32, 32, None, None, 2048, 1e-5, 10_000.0, false,
            ))
        },
        Some("olmo2"),
        &[TRAINING],
    ),
    // FlexOlmo: OLMo 2's layer (norms after each sublayer, QK-norm over the whole projection)
    // with OLMoE's experts: 7, 5 active, weights not renormalized by default.
    Family {
        renames: &[("num_local_experts", "num_experts")],
        ..llama(
            "flex_olmo",
            "FlexOlmo",
            LlamaLike {
                mlp_bias: Bias::Never,
                qk_norm: QkNorm::Full,
                place: NormPlace::Post,
                layout: Layout::Sandwich,
                experts: Experts::Routed(Routed {
                    count: ("num_experts", 7),
                    top_k: 5,
                    width: None,
                    renormalize: Renormalize::Key(false),
                    layers: MoeLayers::All,
                    zero_is_dense: false,
                    shared: None,
                    ..Routed::MIXTRAL
                }),
                ..LlamaLike::llama(d(
                    100_352, 4096, 11008, 32, 32, None, None, 4096, 1e-6, 500_000.0, false,
                ))
            },
            None,
            &[TRAINING, &["router_aux_loss_coef", "output_router_logits"]],
        )
    },
    // OLMo 3: OLMo 2 with three sliding layers to each full one (by `layer_types`), RoPE
    // scaling on the full layers only.
    llama(
        "olmo3",
        "OLMo 3",
        LlamaLike {
            mlp_bias: Bias::Never,
            qk_norm: QkNorm::Full,
            place: NormPlace::Post,
            layout: Layout::Sandwich,
            windows: Windows::LayerTypes {
                window: Some(4096),
                unlisted: Unlisted::FullEvery(4),
            },
            scaling_full_only: true,
            ..LlamaLike::llama(d(
                50304, 4096, 11008, 32, 32, None, None, 2048, 1e-5, 500_000.0, false,
            ))
        },
        None,
        &[TRAINING],
    ),
    // OLMo hybrid: Gated DeltaNet layers (pre-norm, q, k and v projected apart, β up to 2)
    // among OLMo 3's post-norm full-attention layers with QK norms; layers by `layer_types`, else
    // every fourth attends. Its class drops `head_dim`, `mlp_bias` and `pretraining_tp`; the
    // `linear_a_log_*` and `linear_dt_*` keys only initialize.
    llama(
        "olmo_hybrid",
        "OLMo hybrid",
        LlamaLike {
            mlp_bias: Bias::Never,
            qk_norm: QkNorm::Full,
            place: NormPlace::Post,
            hybrid: Some(Hybrid {
                mixer: HybridMixer::DeltaNet(DeltaStore::Olmo, DeltaHeads::Attention),
                layers: HybridLayers::FourthOrLast,
                recurrent_place: Some(NormPlace::Pre),
            }),
            layout: Layout::OlmoHybrid,
            ..LlamaLike::llama(d(
                100_352, 3840, 11008, 32, 30, None, None, 65536, 1e-6, 10_000.0, false,
            ))
        },
        None,
        &[
            TRAINING,
            &[
                "head_dim",
                "mlp_bias",
                "pretraining_tp",
                "linear_a_log_min",
                "linear_a_log_max",
                "linear_dt_min",
                "linear_dt_max",
                "linear_dt_init_floor",
            ],
        ],
    ),
    // CWM (Code World Model): Llama whose every 4th layer, from the first, attends fully and the
    // others slide (8192); without a RoPE dict the class uses llama3 ×16 from 8192 positions at
    // base 10⁶. Its attention has no biases whatever `attention_bias` says (the class drops it).
    llama(
        "cwm",
        "CWM",
        LlamaLike {
            qkv_bias: Bias::Never,
            o_bias: Bias::Never,
            windows: Windows::LayerTypes {
                window: Some(8192),
                unlisted: Unlisted::FullFirstOfEvery(4),
            },
            rope_scaling_default: Some(cwm_rope),
            ..LlamaLike::llama(d(
                128_256,
                6144,
                21504,
                64,
                48,
                Some(8),
                Some(128),
                131_072,
                1e-5,
                1_000_000.0,
                false,
            ))
        },
        None,
        &[TRAINING, &["pretraining_tp", "attention_bias"]],
    ),
    // EXAONE 4: OLMo 2's norms after each sublayer with per-head QK-norm; three sliding layers
    // per full one (`sliding_window_pattern`), and with a window only the sliding layers rotate.
    llama(
        "exaone4",
        "EXAONE 4",
        LlamaLike {
            qkv_bias: Bias::Never,
            o_bias: Bias::Never,
            mlp_bias: Bias::Never,
            qk_norm: QkNorm::PerHead,
            place: NormPlace::Post,
            layout: Layout::Sandwich,
            windows: Windows::LayerTypes {
                window: Some(4096),
                unlisted: Unlisted::FullEveryKey("sliding_window_pattern", 4),
            },
            no_rope: NoRope::FullLayers,
            ..LlamaLike::llama(d(
                102_400,
                4096,
                16384,
                32,
                32,
                Some(32),
                None,
                2048,
                1e-5,
                10_000.0,
                false,
            ))
        },
        Some("exaone4"),
        &[TRAINING],
    ),
    // Apertus: Llama with per-head QK-norm, a plain MLP whose xIELU activation learns its own
    // parameters, and llama3-scaled RoPE by default. Its released configs carry `qk_norm` and
    // `post_norm` and `mlp_bias`, which the class never reads (its QK-norm is always on, its MLP
    // never has biases).
    llama("apertus", "Apertus", APERTUS, None, APERTUS_INERT),
    // Apertus 1.5 (text): Apertus over a vocabulary extended with image and audio codes, its
    // LM head optionally pruned to the text ids (`output_vocab_size`).
    llama(
        "apertus1p5_text",
        "Apertus 1.5",
        LlamaLike {
            head_rows_key: Some("output_vocab_size"),
            defaults: Defaults {
                vocab: 266_752,
                ..APERTUS.defaults
            },
            ..APERTUS
        },
        None,
        APERTUS_INERT,
    ),
    // ERNIE 4.5 (dense): Llama with interleaved RoPE and one `use_bias` flag for every projection.
    llama(
        "ernie4_5",
        "ERNIE 4.5",
        LlamaLike {
            interleaved_rope: true,
            ..ERNIE4_5
        },
        Some("ernie4_5"),
        &[TRAINING],
    ),
    // PaddleOCR-VL's language model: ERNIE 4.5's layers, rotated half against half (Qwen2-VL's
    // multimodal RoPE, whose sections rotate a text token as plain RoPE does).
    inner(llama(
        "paddleocr_vl_text",
        "PaddleOCR-VL",
        LlamaLike {
            rope_types: RopeTypes::Mrope,
            ..ERNIE4_5
        },
        None,
        &[TRAINING, MROPE_SECTIONS],
    )),
    // ERNIE 4.5 MoE: ERNIE 4.5's attention; experts from `moe_layer_start_index` on, every
    // `moe_layer_interval`-th layer, chosen by softmax plus a correction bias and renormalized,
    // beside shared experts. (Their weights are divided by max(sum, moe_norm_min = 10⁻¹²): a
    // floor that top-k softmax probabilities do not reach.)
    Family {
        renames: &[
            ("moe_num_experts", "num_experts"),
            ("moe_k", "num_experts_per_tok"),
            ("num_mtp_layers", "num_nextn_predict_layers"),
        ],
        ..llama(
            "ernie4_5_moe",
            "ERNIE 4.5 MoE",
            LlamaLike {
                qkv_bias: Bias::Key("use_bias", false),
                o_bias: Bias::Key("use_bias", false),
                mlp_bias: Bias::Key("use_bias", false),
                head_bias: Bias::Key("use_bias", false),
                interleaved_rope: true,
                layout: Layout::Ernie45Moe,
                experts: Experts::Routed(Routed {
                    count: ("num_experts", 64),
                    top_k: 6,
                    width: Some(("moe_intermediate_size", 1536)),
                    layers: MoeLayers::Ernie,
                    correction_bias: Bias::Always,
                    shared: Some(SharedMlp {
                        count: Some(("moe_num_shared_experts", 2)),
                        bias_as_mlp: true,
                        ..SharedMlp::of("moe_intermediate_size", 1536)
                    }),
                    ..Routed::MIXTRAL
                }),
                ..LlamaLike::llama(d(
                    103_424,
                    2560,
                    12288,
                    28,
                    20,
                    Some(4),
                    None,
                    131_072,
                    1e-5,
                    500_000.0,
                    true,
                ))
            },
            Some("ernie4_5-moe"),
            &[
                TRAINING,
                &[
                    "output_router_logits",
                    "router_aux_loss_coef",
                    "moe_norm_min",
                    // The multi-token-prediction layer, for speculative decoding only: the
                    // causal LM neither builds nor loads it.
                    "num_nextn_predict_layers",
                ],
            ],
        )
    },
    // HunYuan dense: Llama with per-head RMSNorm on q and k after RoPE, and RoPE's base
    // stretched by NTK-alpha where its published configs set one. `eod_token_id` is a token id;
    // `pretraining_tp` only splits matmuls in training.
    llama(
        "hunyuan_v1_dense",
        "HunYuan",
        LlamaLike {
            mlp_bias: Bias::Never,
            qk_norm: QkNorm::PerHeadPostRope,
            layout: Layout::HunYuan,
            rope_types: RopeTypes::HunYuan,
            ..LlamaLike::llama(Defaults {
                head_dim: HeadDim::Required,
                ..d(
                    290_943, 4096, 11008, 32, 32, None, None, 2048, 1e-5, 10_000.0, false,
                )
            })
        },
        Some("hunyuan-dense"),
        &[TRAINING, &["eod_token_id", "pretraining_tp"]],
    ),
    // HunYuan-MoE (Hunyuan-A13B): HunYuan's attention, experts of the dense width in every layer
    // (softmax top-k, renormalized) beside a shared MLP of that width.
    Family {
        renames: &[
            ("moe_topk", "num_experts_per_tok"),
            ("num_local_experts", "num_experts"),
        ],
        ..llama(
            "hunyuan_v1_moe",
            "HunYuan-MoE",
            LlamaLike {
                mlp_bias: Bias::Never,
                qk_norm: QkNorm::PerHeadPostRope,
                layout: Layout::HunYuan,
                rope_types: RopeTypes::HunYuan,
                experts: Experts::Routed(Routed {
                    count: ("num_experts", 1),
                    top_k: 1,
                    renormalize: Renormalize::Key(true),
                    shared: Some(SharedMlp::of("intermediate_size", 11008)),
                    ..Routed::MIXTRAL
                }),
                // transformers cannot build the class without a head_dim.
                ..LlamaLike::llama(Defaults {
                    head_dim: HeadDim::Required,
                    ..d(
                        290_943, 4096, 11008, 32, 32, None, None, 2048, 1e-5, 10_000.0, false,
                    )
                })
            },
            Some("hunyuan-moe"),
            &[
                TRAINING,
                &["eod_token_id", "pretraining_tp", "output_router_logits"],
            ],
        )
    },
    // HunyuanOCR's language model: HunYuan's layers, the three keys its class's attribute_map
    // aliases (`attention_head_dim`, `org_vocab_size`, `pad_id`), RoPE `xdrope` read as
    // `dynamic` and its M-RoPE sections (`xdrope_section` their older name), which rotate a
    // text token as plain RoPE does.
    Family {
        renames: &[
            ("attention_head_dim", "head_dim"),
            ("org_vocab_size", "vocab_size"),
            ("pad_id", "pad_token_id"),
        ],
        ..inner(llama(
            "hunyuan_vl_text",
            "HunyuanOCR",
            LlamaLike {
                mlp_bias: Bias::Never,
                qk_norm: QkNorm::PerHeadPostRope,
                layout: Layout::HunYuan,
                rope_types: RopeTypes::HunYuanVl,
                ..LlamaLike::llama(Defaults {
                    head_dim: HeadDim::Required,
                    ..d(
                        290_943, 4096, 11008, 32, 32, None, None, 2048, 1e-5, 10_000.0, true,
                    )
                })
            },
            None,
            &[
                TRAINING,
                MROPE_SECTIONS,
                &[
                    "eod_token_id",
                    "pretraining_tp",
                    "sep_token_id",
                    // pad_token_id's alias: a token id.
                    "pad_id",
                    "rope_parameters.xdrope_section",
                    "rope_scaling.xdrope_section",
                ],
            ],
        ))
    },
    // Gemma 1: Gemma's (1 + w) norms and scaled embeddings, before each sublayer only; the class
    // reads `gelu` as its tanh approximation.
    llama(
        "gemma",
        "Gemma",
        LlamaLike {
            mlp_bias: Bias::Never,
            gemma_norms: true,
            act_renames: &[("gelu", "gelu_pytorch_tanh")],
            refuse_when_true: &["use_bidirectional_attention"],
            ..LlamaLike::llama(Defaults {
                act: "gelu_pytorch_tanh",
                ..d(
                    256_000,
                    3072,
                    24576,
                    28,
                    16,
                    Some(16),
                    Some(256),
                    8192,
                    1e-6,
                    10_000.0,
                    true,
                )
            })
        },
        Some("gemma"),
        &[TRAINING],
    ),
    // Seed-OSS: biases on q, k and v by `attention_bias`, on the output by `attention_out_bias`.
    llama(
        "seed_oss",
        "Seed-OSS",
        LlamaLike {
            qkv_bias: Bias::Key("attention_bias", true),
            o_bias: Bias::Key("attention_out_bias", false),
            ..LlamaLike::llama(d(
                155_136,
                4096,
                27648,
                64,
                80,
                Some(8),
                Some(128),
                524_288,
                1e-6,
                10_000.0,
                false,
            ))
        },
        Some("seed_oss"),
        &[TRAINING, &["pretraining_tp", "residual_dropout"]],
    ),
    // GLM-4 (0414): norms around each sublayer under its own names, gate and up in one tensor,
    // half of each head rotated in interleaved pairs.
    llama(
        "glm4",
        "GLM-4",
        LlamaLike {
            qkv_bias: Bias::Key("attention_bias", true),
            o_bias: Bias::Never,
            mlp_bias: Bias::Never,
            place: NormPlace::Sandwich,
            fused_gate_up: true,
            interleaved_rope: true,
            partial: 0.5,
            layout: Layout::Glm4,
            ..LlamaLike::llama(d(
                151_552,
                4096,
                13696,
                40,
                32,
                Some(2),
                Some(128),
                131_072,
                1.5625e-7,
                10_000.0,
                false,
            ))
        },
        Some("glm4"),
        &[TRAINING],
    ),
    // Qwen3-VL-MoE's language model: Qwen3-MoE's layers without windows, the router always
    // renormalized, the experts stacked as published ([E, hidden, 2·inter] and [E, inter,
    // hidden], which transformers transposes on load). Its class sets `sliding_window` to None
    // whatever a config says.
    Family {
        renames: &[("num_local_experts", "num_experts")],
        ..inner(llama(
            "qwen3_vl_moe_text",
            "Qwen3-VL-MoE",
            LlamaLike {
                mlp_bias: Bias::Never,
                qk_norm: QkNorm::PerHead,
                layout: Layout::MiniMaxM3,
                experts: Experts::Routed(Routed {
                    count: ("num_experts", 60),
                    top_k: 4,
                    width: Some(("moe_intermediate_size", 1408)),
                    renormalize: Renormalize::Always,
                    layers: MoeLayers::Qwen(&[]),
                    zero_is_dense: true,
                    shared: None,
                    stacked_in_out: true,
                    ..Routed::MIXTRAL
                }),
                ..LlamaLike::llama(Defaults {
                    head_dim: HeadDim::Floor,
                    ..d(
                        151_936,
                        2048,
                        5632,
                        24,
                        16,
                        Some(16),
                        None,
                        128_000,
                        1e-6,
                        500_000.0,
                        true,
                    )
                })
            },
            None,
            &[
                TRAINING,
                MROPE_SECTIONS,
                &[
                    "router_aux_loss_coef",
                    "output_router_logits",
                    "sliding_window",
                ],
            ],
        ))
    },
    // Qwen3-Omni's language model (its thinker's): Qwen3-MoE's layers without windows, heads
    // hidden // heads wide unless `head_dim` says, the experts one by one. Its M-RoPE sections
    // (and their `interleaved` flag) turn text positions as plain RoPE does.
    Family {
        renames: &[("num_local_experts", "num_experts")],
        ..inner(llama(
            "qwen3_omni_moe_text",
            "Qwen3-Omni-MoE",
            LlamaLike {
                mlp_bias: Bias::Never,
                qk_norm: QkNorm::PerHead,
                experts: Experts::Routed(Routed {
                    count: ("num_experts", 128),
                    top_k: 8,
                    width: Some(("moe_intermediate_size", 768)),
                    renormalize: Renormalize::Key(true),
                    layers: MoeLayers::Qwen(&[]),
                    zero_is_dense: true,
                    shared: None,
                    ..Routed::MIXTRAL
                }),
                ..LlamaLike::llama(Defaults {
                    head_dim: HeadDim::Floor,
                    ..d(
                        3584,
                        2048,
                        18944,
                        28,
                        28,
                        Some(4),
                        None,
                        32768,
                        1e-6,
                        1_000_000.0,
                        false,
                    )
                })
            },
            None,
            &[
                TRAINING,
                MROPE_SECTIONS,
                &[
                    "rope_parameters.interleaved",
                    "rope_scaling.interleaved",
                    "router_aux_loss_coef",
                    "output_router_logits",
                    "sliding_window",
                ],
            ],
        ))
    },
    // GLM-4.1V's language model: GLM-4's layers with biases on q, k and v always, all of each
    // head rotated by default, its heads hidden / heads wide.
    inner(llama(
        "glm4v_text",
        "GLM-4.1V",
        GLM4V_TEXT,
        None,
        &[TRAINING, MROPE_SECTIONS],
    )),
    // GLM-OCR's language model: GLM-4.1V's without the biases on q, k and v.
    inner(llama(
        "glm_ocr_text",
        "GLM-OCR",
        LlamaLike {
            qkv_bias: Bias::Never,
            defaults: Defaults {
                head_dim: HeadDim::Divided,
                ..d(
                    59_392,
                    1024,
                    4096,
                    16,
                    16,
                    Some(8),
                    None,
                    131_072,
                    1e-5,
                    10_000.0,
                    false,
                )
            },
            ..GLM4V_TEXT
        },
        None,
        &[TRAINING, MROPE_SECTIONS],
    )),
    // GLM (GLM-4 of 2024): GLM-4's attention and fused MLP, with Llama's norm placement.
    llama(
        "glm",
        "GLM",
        LlamaLike {
            qkv_bias: Bias::Key("attention_bias", true),
            o_bias: Bias::Never,
            mlp_bias: Bias::Never,
            fused_gate_up: true,
            interleaved_rope: true,
            partial: 0.5,
            layout: Layout::Phi3,
            ..LlamaLike::llama(d(
                151_552,
                4096,
                13696,
                40,
                32,
                Some(2),
                Some(128),
                131_072,
                1.5625e-7,
                10_000.0,
                false,
            ))
        },
        None,
        &[TRAINING],
    ),
    llama(
        "helium",
        "Helium",
        // Helium rotates interleaved pairs.
        LlamaLike {
            interleaved_rope: true,
            ..LlamaLike::llama(d(
                48000,
                2560,
                7040,
                24,
                20,
                Some(20),
                Some(128),
                4096,
                1e-8,
                100_000.0,
                false,
            ))
        },
        None,
        &[TRAINING],
    ),
    // StarCoder2: LayerNorm with biases, a plain GELU MLP; `norm_type`, `mlp_type` and
    // `rms_norm_eps` are in published configs but the class has one norm and one MLP.
    llama(
        "starcoder2",
        "StarCoder2",
        LlamaLike {
            qkv_bias: Bias::Key("use_bias", true),
            o_bias: Bias::Key("use_bias", true),
            mlp_bias: Bias::Key("use_bias", true),
            norm: NormKind::Layer { bias: true },
            eps_key: Some("norm_epsilon"),
            gated: false,
            windows: Windows::Every(None),
            layout: Layout::Starcoder2,
            ..LlamaLike::llama(Defaults {
                act: "gelu_pytorch_tanh",
                ..d(
                    49152,
                    3072,
                    12288,
                    30,
                    24,
                    Some(2),
                    None,
                    4096,
                    1e-5,
                    10_000.0,
                    true,
                )
            })
        },
        Some("starcoder2"),
        &[
            TRAINING,
            &[
                "residual_dropout",
                "embedding_dropout",
                "norm_type",
                "mlp_type",
                "rms_norm_eps",
            ],
        ],
    ),
    // Phi-2: attention and MLP side by side on one LayerNorm, a partial rotary, biases
    // everywhere, the LM head's included.
    llama(
        "phi",
        "Phi",
        LlamaLike {
            qkv_bias: Bias::Always,
            o_bias: Bias::Always,
            mlp_bias: Bias::Always,
            qk_norm: QkNorm::PerHead,
            qk_norm_key: Some(("qk_layernorm", false)),
            norm: NormKind::Layer { bias: true },
            eps_key: Some("layer_norm_eps"),
            gated: false,
            block: Block::Parallel { shared_norm: true },
            head_bias: Bias::Always,
            partial: 0.5,
            layout: Layout::Phi,
            ..LlamaLike::llama(Defaults {
                act: "gelu_new",
                ..d(
                    51200,
                    2048,
                    8192,
                    24,
                    32,
                    Some(32),
                    None,
                    2048,
                    1e-5,
                    10_000.0,
                    false,
                )
            })
        },
        Some("phi2"),
        &[TRAINING, &["resid_pdrop", "embd_pdrop"]],
    ),
    // GPT-NeoX (Pythia): q, k and v per head in one tensor, a quarter of each head rotated,
    // attention and MLP side by side on two LayerNorms (or in sequence, by
    // `use_parallel_residual`); its own names for the RoPE keys.
    llama(
        "gpt_neox",
        "GPT-NeoX",
        LlamaLike {
            qkv_bias: Bias::Key("attention_bias", true),
            o_bias: Bias::Key("attention_bias", true),
            mlp_bias: Bias::Always,
            qkv: Qkv::Grouped,
            norm: NormKind::Layer { bias: true },
            eps_key: Some("layer_norm_eps"),
            gated: false,
            block: Block::Parallel { shared_norm: false },
            parallel_key: Some(("use_parallel_residual", true)),
            partial: 0.25,
            theta_key: "rotary_emb_base",
            partial_key: Some("rotary_pct"),
            layout: Layout::GptNeox,
            ..LlamaLike::llama(Defaults {
                act: "gelu",
                ..d(
                    50432, 6144, 24576, 44, 64, None, None, 2048, 1e-5, 10_000.0, false,
                )
            })
        },
        Some("gptneox"),
        &[
            TRAINING,
            &[
                "hidden_dropout",
                "classifier_dropout",
                "attention_probs_dropout_prob",
                "hidden_dropout_prob",
            ],
        ],
    ),
    // GPT-NeoX-Japanese: GPT-NeoX's per-head q, k, v in sequential layers without biases but
    // one: the last layer's output projection has its own `dense_bias`.
    llama(
        "gpt_neox_japanese",
        "GPT-NeoX-Japanese",
        LlamaLike {
            qkv_bias: Bias::Never,
            o_bias: Bias::Never,
            mlp_bias: Bias::Never,
            o_bias_last: true,
            qkv: Qkv::Grouped,
            mha_only: true,
            norm: NormKind::Layer { bias: true },
            eps_key: Some("layer_norm_eps"),
            gated: false,
            inner_multiple_key: Some(("intermediate_multiple_size", 4)),
            layout: Layout::GptNeoxJapanese,
            ..LlamaLike::llama(Defaults {
                act: "gelu",
                ..d(
                    32000, 2560, 0, 32, 32, None, None, 2048, 1e-5, 10_000.0, true,
                )
            })
        },
        None,
        &[TRAINING, &["hidden_dropout", "is_decoder"]],
    ),
    // Three classes built as LlamaForCausalLM: InternLM3 (`qkv_bias` and `bias` name the
    // attention and MLP biases, which must agree), EXAONE 3 (its own names for the layer count,
    // eps and activation) and IQuest-Coder.
    Family {
        renames: &[("qkv_bias", "attention_bias"), ("bias", "mlp_bias")],
        ..llama(
            "internlm3",
            "InternLM3",
            LlamaLike {
                same_bias: true,
                ..LlamaLike::llama(d(
                    128_512,
                    4096,
                    10240,
                    48,
                    32,
                    Some(2),
                    Some(128),
                    32768,
                    1e-5,
                    10_000.0,
                    false,
                ))
            },
            None,
            &[TRAINING],
        )
    },
    Family {
        renames: &[
            ("num_layers", "num_hidden_layers"),
            ("layer_norm_epsilon", "rms_norm_eps"),
            ("activation_function", "hidden_act"),
        ],
        ..llama(
            "exaone",
            "EXAONE",
            LlamaLike {
                layout: Layout::Exaone,
                ..LlamaLike::llama(d(
                    102_400,
                    4096,
                    14336,
                    32,
                    32,
                    Some(8),
                    None,
                    4096,
                    1e-5,
                    500_000.0,
                    false,
                ))
            },
            Some("exaone"),
            &[TRAINING, &["embed_dropout"]],
        )
    },
    llama(
        "iquestcoder",
        "IQuest-Coder",
        LlamaLike::llama(d(
            76800,
            5120,
            27648,
            80,
            40,
            Some(8),
            Some(128),
            131_072,
            1e-5,
            10_000.0,
            false,
        )),
        None,
        &[TRAINING],
    ),
    // Arcee (AFM) and Jais 2: Llama with a plain up-projection MLP (ReLU² by default); Jais 2
    // with LayerNorms and biases everywhere.
    llama(
        "arcee",
        "Arcee",
        LlamaLike {
            gated: false,
            ..LlamaLike::llama(Defaults {
                act: "relu2",
                ..d(
                    32000, 2560, 18432, 32, 32, None, None, 4096, 1e-5, 10_000.0, false,
                )
            })
        },
        Some("arcee"),
        &[TRAINING],
    ),
    llama(
        "jais2",
        "Jais 2",
        LlamaLike {
            qkv_bias: Bias::Key("attention_bias", true),
            o_bias: Bias::Key("attention_bias", true),
            mlp_bias: Bias::Key("mlp_bias", true),
            norm: NormKind::Layer { bias: true },
            eps_key: Some("layer_norm_eps"),
            gated: false,
            ..LlamaLike::llama(Defaults {
                act: "relu2",
                ..d(
                    150_272, 3328, 26624, 32, 26, None, None, 8192, 1e-5, 10_000.0, false,
                )
            })
        },
        Some("jais2"),
        &[TRAINING],
    ),
    // Ministral: Mistral whose `layer_types` may mix full and sliding layers (all sliding by
    // default, when there is a window).
    llama(
        "ministral",
        "Ministral",
        LlamaLike {
            qkv_bias: Bias::Never,
            o_bias: Bias::Never,
            mlp_bias: Bias::Never,
            windows: Windows::LayerTypes {
                window: Some(4096),
                unlisted: Unlisted::Sliding,
            },
            ..LlamaLike::llama(Defaults {
                head_dim: HeadDim::Required,
                ..d(
                    32000,
                    4096,
                    14336,
                    32,
                    32,
                    Some(8),
                    None,
                    131_072,
                    1e-6,
                    10_000.0,
                    false,
                )
            })
        },
        None,
        &[TRAINING],
    ),
    // Granite 3 dense: Llama with μP multipliers on the embeddings, the residual adds, the
    // attention scores and the logits.
    llama(
        "granite",
        "Granite",
        LlamaLike {
            multipliers: Some(Mup::Granite(Multipliers::ONE)),
            ..LlamaLike::llama(d(
                32000, 4096, 11008, 32, 32, None, None, 2048, 1e-6, 10_000.0, false,
            ))
        },
        Some("granite"),
        &[TRAINING],
    ),
    // Granite Docling's language model: Granite's, at its class's defaults (its μP multipliers
    // among them).
    inner(llama(
        "granite_docling_text",
        "Granite Docling",
        LlamaLike {
            multipliers: Some(Mup::Granite(Multipliers {
                embedding: 12.0,
                residual: 0.263,
                attention: 0.015625,
                logits: 4.0,
            })),
            ..LlamaLike::llama(d(
                133_800,
                1024,
                2048,
                28,
                16,
                Some(4),
                None,
                32768,
                1e-5,
                10_000.0,
                true,
            ))
        },
        None,
        &[TRAINING],
    )),
    // Granite 4 Vision's language model: Granite's.
    inner(llama(
        "granite4_vision_text",
        "Granite 4 Vision",
        LlamaLike {
            multipliers: Some(Mup::Granite(Multipliers::ONE)),
            ..LlamaLike::llama(d(
                32000, 4096, 11008, 32, 32, None, None, 2048, 1e-6, 10_000.0, false,
            ))
        },
        None,
        &[TRAINING],
    )),
    // HyperCLOVA X: Granite with a norm after each sublayer too (`use_post_norm`), its logits
    // multiplied by `logits_scaling`, scores by 1/√head_dim unless `attention_multiplier` says.
    llama(
        "hyperclovax",
        "HyperCLOVA X",
        LlamaLike {
            multipliers: Some(Mup::HyperClovax),
            post_norm_key: Some(("use_post_norm", true)),
            layout: Layout::HyperClovax,
            ..LlamaLike::llama(d(
                32000, 4096, 11008, 32, 32, None, None, 2048, 1e-6, 10_000.0, false,
            ))
        },
        None,
        &[TRAINING],
    ),
    // GraniteSWA: Granite whose every 4th layer from the first attends fully and the others slide
    // (128), with a learned sink logit per head; `layer_rope_theta` can leave layers without RoPE.
    llama(
        "granite_swa",
        "GraniteSWA",
        LlamaLike {
            multipliers: Some(Mup::Granite(Multipliers::ONE)),
            sinks: true,
            windows: Windows::LayerTypes {
                window: Some(128),
                unlisted: Unlisted::FullFirstOfEvery(4),
            },
            no_rope: NoRope::LayerTheta,
            ..LlamaLike::llama(d(
                100_352,
                2560,
                8192,
                24,
                20,
                Some(4),
                None,
                8192,
                1e-5,
                10_000.0,
                true,
            ))
        },
        None,
        &[TRAINING],
    ),
    // GraniteMoE (Granite 3.0 MoE): Granite's multipliers, routed experts stacked [E, out, in],
    // softmax over each token's top-k logits.
    llama(
        "granitemoe",
        "GraniteMoE",
        GRANITE_MOE,
        Some("granitemoe"),
        &[TRAINING, &["router_aux_loss_coef", "output_router_logits"]],
    ),
    // GraniteMoE-Shared: GraniteMoE with a shared MLP (gate and up in one tensor) beside the
    // experts, when `shared_intermediate_size` is not 0.
    llama(
        "granitemoeshared",
        "GraniteMoE-Shared",
        LlamaLike {
            experts: Experts::Routed(Routed {
                shared: Some(GRANITE_SHARED),
                ..GRANITE_EXPERTS
            }),
            ..GRANITE_MOE
        },
        None,
        &[TRAINING, &["router_aux_loss_coef", "output_router_logits"]],
    ),
    // GraniteMoeSWA: GraniteMoE with GraniteSWA's attention (sinks, every 4th layer from the
    // first full, `layer_rope_theta`), and GraniteMoE-Shared's optional shared MLP.
    llama(
        "granitemoe_swa",
        "GraniteMoeSWA",
        LlamaLike {
            multipliers: Some(Mup::Granite(Multipliers::ONE)),
            sinks: true,
            mlp_bias: Bias::Never,
            layout: Layout::GraniteMoeSwa,
            windows: Windows::LayerTypes {
                window: Some(128),
                unlisted: Unlisted::FullFirstOfEvery(4),
            },
            no_rope: NoRope::LayerTheta,
            experts: Experts::Routed(Routed {
                shared: Some(GRANITE_SHARED),
                ..GRANITE_EXPERTS
            }),
            ..LlamaLike::llama(d(
                32000, 4096, 11008, 32, 32, None, None, 2048, 1e-6, 10_000.0, false,
            ))
        },
        None,
        &[TRAINING, &["router_aux_loss_coef", "output_router_logits"]],
    ),
    // Qwen2-MoE (Qwen1.5-MoE, Qwen2-57B-A14B): 60 routed experts, top-4 not renormalized, and
    // one shared expert whose output a sigmoid gate scales.
    llama(
        "qwen2_moe",
        "Qwen2-MoE",
        LlamaLike {
            qkv_bias: Bias::Key("qkv_bias", true),
            o_bias: Bias::Never,
            mlp_bias: Bias::Never,
            windows: Windows::QwenMoe,
            layout: Layout::Qwen2Moe,
            experts: Experts::Routed(Routed {
                count: ("num_experts", 60),
                top_k: 4,
                width: Some(("moe_intermediate_size", 1408)),
                renormalize: Renormalize::Key(false),
                layers: MoeLayers::Qwen(&[]),
                zero_is_dense: true,
                shared: Some(SharedMlp {
                    gate: true,
                    ..SharedMlp::of("shared_expert_intermediate_size", 5632)
                }),
                ..Routed::MIXTRAL
            }),
            ..LlamaLike::llama(d(
                151_936,
                2048,
                5632,
                24,
                16,
                Some(16),
                None,
                32768,
                1e-6,
                10_000.0,
                false,
            ))
        },
        Some("qwen2moe"),
        &[TRAINING, &["router_aux_loss_coef", "output_router_logits"]],
    ),
    // Nemotron (Nemotron-4, Minitron): LayerNorm1P (weights applied as 1 + w), a plain ReLU²
    // MLP, half of each head rotated.
    llama(
        "nemotron",
        "Nemotron",
        LlamaLike {
            norm: NormKind::Layer { bias: true },
            eps_key: Some("norm_eps"),
            one_plus: true,
            kv_heads_required: true,
            gated: false,
            partial: 0.5,
            ..LlamaLike::llama(Defaults {
                act: "relu2",
                head_dim: HeadDim::Floor,
                ..d(
                    256_000, 6144, 24576, 32, 48, None, None, 4096, 1e-5, 10_000.0, false,
                )
            })
        },
        Some("nemotron"),
        &[TRAINING],
    ),
    // Cohere (Command R): attention and MLP side by side on one LayerNorm without a shift,
    // interleaved RoPE, logits scaled by `logit_scale`, the head tied to the embedding; with
    // `use_qk_norm` (Command R+), a LayerNorm per head on Q and K, each head its own weight.
    llama(
        "cohere",
        "Cohere",
        LlamaLike {
            mlp_bias: Bias::Never,
            norm: NormKind::Layer { bias: false },
            eps_key: Some("layer_norm_eps"),
            block: Block::Parallel { shared_norm: true },
            interleaved_rope: true,
            logit_scale: Some(("logit_scale", 0.0625)),
            // Command R+: a LayerNorm per head on Q and K, each head its own weight.
            qk_norm: QkNorm::HeadWeights,
            qk_norm_key: Some(("use_qk_norm", false)),
            ..LlamaLike::llama(d(
                256_000, 8192, 22528, 40, 64, None, None, 8192, 1e-5, 500_000.0, true,
            ))
        },
        Some("command-r"),
        &[TRAINING],
    ),
    // Cohere 2 (Command R7B, Command A): Cohere's parallel block with three sliding layers to
    // each full one (`sliding_window_pattern`), and only the sliding layers rotate.
    llama(
        "cohere2",
        "Cohere 2",
        LlamaLike {
            mlp_bias: Bias::Never,
            norm: NormKind::Layer { bias: false },
            eps_key: Some("layer_norm_eps"),
            block: Block::Parallel { shared_norm: true },
            interleaved_rope: true,
            logit_scale: Some(("logit_scale", 0.0625)),
            windows: Windows::LayerTypes {
                window: Some(4096),
                unlisted: Unlisted::FullEveryKey("sliding_window_pattern", 4),
            },
            no_rope: NoRope::FullLayers,
            ..LlamaLike::llama(d(
                256_000, 8192, 22528, 40, 64, None, None, 8192, 1e-5, 10_000.0, true,
            ))
        },
        Some("cohere2"),
        &[TRAINING],
    ),
    // Cohere Compass (North): Cohere 2's parallel block, all layers full unless `layer_types`
    // says otherwise, RoPE per layer type (half against half) or none where a type's entry is
    // null, logits scaled only where `logit_scale` is set. `pooling` serves classification;
    // `sliding_window_pattern` is not read once the class has set every layer's type.
    llama(
        "cohere_compass_text",
        "Cohere Compass",
        LlamaLike {
            mlp_bias: Bias::Never,
            norm: NormKind::Layer { bias: false },
            eps_key: Some("layer_norm_eps"),
            block: Block::Parallel { shared_norm: true },
            logit_scale: Some(("logit_scale", 1.0)),
            windows: Windows::LayerTypes {
                window: Some(4096),
                unlisted: Unlisted::Full,
            },
            no_rope: NoRope::NullTypes,
            ..LlamaLike::llama(d(
                256_000, 8192, 22528, 40, 64, None, None, 8192, 1e-5, 10_000.0, true,
            ))
        },
        None,
        &[
            TRAINING,
            &["pooling", "sliding_window_pattern"],
            // M-RoPE's sections per layer type, which rotate a text token as plain RoPE does
            // (its class's ignore_keys_at_rope_validation).
            &[
                "rope_parameters.full_attention.mrope_section",
                "rope_parameters.sliding_attention.mrope_section",
                "rope_parameters.full_attention.mrope_interleaved",
                "rope_parameters.sliding_attention.mrope_interleaved",
            ],
        ],
    ),
    // Cohere 2 MoE: Cohere 2's parallel block and NoPE full layers, with RMSNorms when
    // `rms_norm_eps` is set; experts picked by their top-k logits and weighted by a softmax over
    // those (or sigmoids), shared experts summed or averaged in, the first
    // `first_k_dense_replace` layers dense (and rotating, with the default prefix pattern).
    llama(
        "cohere2_moe",
        "Cohere 2 MoE",
        LlamaLike {
            mlp_bias: Bias::Never,
            norm: NormKind::Layer { bias: false },
            eps_key: Some("layer_norm_eps"),
            rms_key: Some("rms_norm_eps"),
            dense_width_key: Some("prefix_dense_intermediate_size"),
            block: Block::Parallel { shared_norm: true },
            interleaved_rope: true,
            logit_scale: Some(("logit_scale", 0.0625)),
            windows: Windows::LayerTypes {
                window: Some(4096),
                unlisted: Unlisted::DensePrefix,
            },
            no_rope: NoRope::FullLayersDenseRotate,
            experts: Experts::Routed(Routed {
                count: ("num_experts", 8),
                top_k: 2,
                width: Some(("intermediate_size", 22528)),
                renormalize: Renormalize::Key(true),
                layers: MoeLayers::Types(Some("first_k_dense_replace"), 0),
                scoring_key: Some((
                    "expert_selection_fn",
                    "softmax",
                    &[
                        ("softmax", Scoring::TopkSoftmax),
                        ("sigmoid", Scoring::Sigmoid),
                    ],
                )),
                shared: Some(SharedMlp {
                    count: Some(("num_shared_experts", 0)),
                    combine_key: Some(("shared_expert_combination_strategy", "average")),
                    ..SharedMlp::of("intermediate_size", 22528)
                }),
                ..Routed::MIXTRAL
            }),
            ..LlamaLike::llama(d(
                256_000,
                8192,
                22528,
                40,
                64,
                None,
                Some(128),
                8192,
                1e-5,
                10_000.0,
                true,
            ))
        },
        None,
        &[TRAINING, &["output_router_logits"]],
    ),
    // StableLM (2): LayerNorms with shifts, a quarter of each head rotated, a bias on q, k and v
    // by `use_qkv_bias`, attention and MLP side by side on one norm by `use_parallel_residual`.
    // Its QK LayerNorm (`qk_layernorm`) has one weight per head, not drawn yet: refused.
    llama(
        "stablelm",
        "StableLM",
        LlamaLike {
            qkv_bias: Bias::Key("use_qkv_bias", false),
            o_bias: Bias::Never,
            mlp_bias: Bias::Never,
            norm: NormKind::Layer { bias: true },
            eps_key: Some("layer_norm_eps"),
            block: Block::Parallel { shared_norm: true },
            parallel_key: Some(("use_parallel_residual", false)),
            partial: 0.25,
            // StableLM 2 12B: a LayerNorm of its own for each head's Q and K.
            qk_norm: QkNorm::HeadWeights,
            qk_norm_key: Some(("qk_layernorm", false)),
            layout: Layout::StableLm,
            ..LlamaLike::llama(d(
                50304,
                2560,
                6912,
                32,
                32,
                Some(32),
                None,
                4096,
                1e-5,
                10_000.0,
                false,
            ))
        },
        Some("stablelm"),
        &[TRAINING, &["hidden_dropout"]],
    ),
    // Persimmon (and Fuyu's language model): q, k and v per head in one tensor, biases
    // everywhere, LayerNorm on each head's q and k, half of each head rotated, a ReLU² MLP.
    llama(
        "persimmon",
        "Persimmon",
        LlamaLike {
            qkv_bias: Bias::Always,
            o_bias: Bias::Always,
            mlp_bias: Bias::Always,
            qkv: Qkv::Grouped,
            qk_norm: QkNorm::PerHead,
            qk_norm_key: Some(("qk_layernorm", true)),
            mha_only: true,
            norm: NormKind::Layer { bias: true },
            eps_key: Some("layer_norm_eps"),
            gated: false,
            partial: 0.5,
            layout: Layout::Persimmon,
            ..LlamaLike::llama(Defaults {
                act: "relu2",
                ..d(
                    262_144, 4096, 16384, 36, 64, None, None, 16384, 1e-5, 10_000.0, false,
                )
            })
        },
        Some("persimmon"),
        &[TRAINING, &["hidden_dropout"]],
    ),
    // GPT-J: attention and MLP side by side on one LayerNorm, the first `rotary_dim` dims of
    // each head rotated in interleaved pairs at a fixed base, biases on the MLP and the LM head.
    // Its config uses GPT-2's key names.
    Family {
        renames: GPTJ_KEYS,
        ..llama(
            "gptj",
            "GPT-J",
            GPTJ,
            Some("gptj"),
            &[TRAINING, &["resid_pdrop", "embd_pdrop", "attn_pdrop"]],
        )
    },
    // CodeGen: GPT-J's layer with q, v and k in one tensor of four model-parallel parts.
    Family {
        renames: GPTJ_KEYS,
        ..llama(
            "codegen",
            "CodeGen",
            LlamaLike {
                qkv: Qkv::Parts(4),
                layout: Layout::CodeGen,
                ..GPTJ
            },
            None,
            // `n_ctx` is a second copy of the context length that the model never reads.
            &[
                TRAINING,
                &["resid_pdrop", "embd_pdrop", "attn_pdrop", "n_ctx"],
            ],
        )
    },
    // GPT-Neo: GPT-2 with local attention in every other layer and unscaled scores.
    Family {
        renames: &[
            ("num_attention_heads", "num_heads"),
            ("num_hidden_layers", "num_layers"),
        ],
        ..own(
            "gpt_neo",
            "GPT-Neo",
            gpt2::load_neo,
            None,
            &[
                TRAINING,
                &[
                    "resid_dropout",
                    "embed_dropout",
                    "classifier_dropout",
                    "attention_layers",
                ],
            ],
        )
    },
    Family {
        renames: &[
            ("num_attention_heads", "attention_heads"),
            ("hidden_size", "d_model"),
            ("num_hidden_layers", "num_layers"),
        ],
        ..own(
            "xglm",
            "XGLM",
            gpt2::load_xglm,
            None,
            &[
                TRAINING,
                &["dropout", "activation_dropout", "layerdrop", "init_std"],
            ],
        )
    },
    // CPM-Ant. `tie_word_embeddings` ties nothing: the causal LM's `_tied_weights_keys` is
    // empty and its head has rows for the text's ids alone. `init_std` sizes only the
    // position-bias table's initialization.
    own(
        "cpmant",
        "CPM-Ant",
        cpmant::load,
        None,
        &[TRAINING, &["dropout_p", "init_std", "tie_word_embeddings"]],
    ),
    // Inkling's language model. transformers reads neither `shared_expert_sink` (its router
    // always scores the shared experts) nor `rms_norm_eps_moe_gate` (its router has no norm);
    // the multi-token-prediction keys shape `model.mtp.*`, which the causal LM does not build
    // (it skips those tensors on loading); `tie_word_embeddings` ties nothing.
    Family {
        renames: &[
            ("sconv_kernel_size", "conv_kernel_size"),
            ("model_max_length", "max_position_embeddings"),
            ("sliding_window", "sliding_window_size"),
            ("num_local_experts", "n_routed_experts"),
            ("embedding_multiplier", "logits_mup_width_multiplier"),
        ],
        ..own(
            "inkling_text",
            "Inkling",
            inkling::load,
            None,
            &[
                TRAINING,
                &[
                    "shared_expert_sink",
                    "rms_norm_eps_moe_gate",
                    "num_mtp_layers",
                    "chain_hidden_post_norm",
                    "mtp_hidden_states_first",
                    "mtp_local_layer_ids",
                    "tie_word_embeddings",
                ],
            ],
        )
    },
    // Inkling 2's language model. `hidden_act` reaches nothing: every FFN is experts with a
    // softcapped SwiGLU of their own; `tie_word_embeddings` ties nothing.
    Family {
        renames: INKLING2_RENAMES,
        ..own(
            "inkling2_text",
            "Inkling 2",
            inkling::load2,
            None,
            &[TRAINING, &["hidden_act", "tie_word_embeddings"]],
        )
    },
    // Inkling 2 Loop's language model: Inkling 2's keys, and its loop's.
    Family {
        renames: INKLING2_RENAMES,
        ..own(
            "inkling2_loop_text",
            "Inkling 2 Loop",
            inkling::load2_loop,
            None,
            &[TRAINING, &["hidden_act", "tie_word_embeddings"]],
        )
    },
    // GPT-1. The `summary_*` keys configure the double-heads model's classifier, not the LM.
    Family {
        renames: &[
            ("hidden_size", "n_embd"),
            ("max_position_embeddings", "n_positions"),
            ("num_attention_heads", "n_head"),
            ("num_hidden_layers", "n_layer"),
        ],
        ..own(
            "openai-gpt",
            "GPT-1",
            gpt2::load_openai_gpt,
            None,
            &[
                TRAINING,
                &[
                    "resid_pdrop",
                    "embd_pdrop",
                    "attn_pdrop",
                    "summary_type",
                    "summary_use_proj",
                    "summary_activation",
                    "summary_proj_to_labels",
                    "summary_first_dropout",
                ],
            ],
        )
    },
    // GIT: a BERT-style post-norm decoder over the image encoder's states and the text; on text
    // alone, a causal decoder. It runs an image: its features before the text.
    Family {
        parts: &[
            tower("image encoder", "git.image_encoder.", towers::git_vision),
            tower(
                "visual projection",
                "git.visual_projection.",
                towers::git_projection,
            ),
            tower(
                "frame embeddings",
                "git.img_temporal_embedding.",
                towers::git_frames,
            ),
        ],
        image: Some(towers::git_image),
        ..own(
            "git",
            "GIT",
            gpt2::load_git,
            None,
            &[TRAINING, &["vision_config", "num_image_with_embedding"]],
        )
    },
    // BioGPT: `layer_norm_eps` never reaches its LayerNorms.
    own(
        "biogpt",
        "BioGPT",
        gpt2::load_biogpt,
        None,
        &[
            TRAINING,
            &[
                "hidden_dropout_prob",
                "attention_probs_dropout_prob",
                "activation_dropout",
                "layerdrop",
                "layer_norm_eps",
            ],
        ],
    ),
    own(
        "opt",
        "OPT",
        gpt2::load_opt,
        None,
        &[TRAINING, &["dropout", "layerdrop", "init_std", "prefix"]],
    ),
    // GPT-BigCode (StarCoder 1, SantaCoder): GPT-2 with Linear weights and one K/V head by
    // `multi_query`. The softmax-precision flags change nothing in float32.
    own(
        "gpt_bigcode",
        "GPT-BigCode",
        gpt2::load_bigcode,
        Some("starcoder"),
        &[
            TRAINING,
            &[
                "resid_pdrop",
                "embd_pdrop",
                "attn_pdrop",
                "attention_softmax_in_fp32",
                "scale_attention_softmax_in_fp32",
                "n_ctx",
            ],
        ],
    ),
    // MPT: ALiBi (MPT's slopes), LayerNorms without shifts, one [q|k|v] tensor, a 4× GELU MLP,
    // no biases. transformers' MPT reads only `softmax_scale` and `clip_qkv` of `attn_config`;
    // its MLP is 4× whatever `expansion_ratio` says, and the bias max is 8 whatever
    // `alibi_bias_max` says, so those and the other keys of MosaicML's own code are inert.
    Family {
        renames: &[
            ("d_model", "hidden_size"),
            ("n_heads", "num_attention_heads"),
            ("n_layers", "num_hidden_layers"),
            ("max_seq_len", "max_position_embeddings"),
        ],
        ..llama(
            "mpt",
            "MPT",
            LlamaLike {
                mlp_bias: Bias::Never,
                qkv: Qkv::Stacked,
                norm: NormKind::Layer { bias: false },
                eps_key: Some("layer_norm_epsilon"),
                gated: false,
                inner_x4: true,
                alibi: Some(alibi_slopes_mpt),
                attn_config: Some("attn_config"),
                mha_only: true,
                layout: Layout::Mpt,
                ..LlamaLike::llama(Defaults {
                    act: "gelu",
                    ..d(
                        50_368, 2048, 8192, 24, 16, None, None, 2048, 1e-5, 10_000.0, true,
                    )
                })
            },
            Some("mpt"),
            &[
                TRAINING,
                &[
                    "expansion_ratio",
                    "resid_pdrop",
                    "emb_pdrop",
                    "learned_pos_emb",
                    "init_device",
                    "logit_scale",
                    "no_bias",
                    "embedding_fraction",
                    "norm_type",
                    "verbose",
                    "init_config",
                    "tokenizer_name",
                    "attn_config.attn_type",
                    "attn_config.attn_pdrop",
                    "attn_config.attn_impl",
                    "attn_config.prefix_lm",
                    "attn_config.qk_ln",
                    "attn_config.attn_uses_sequence_id",
                    "attn_config.alibi",
                    "attn_config.alibi_bias_max",
                ],
            ],
        )
    },
    // Bloom: ALiBi instead of positions, a LayerNorm right after the embedding, q, k and v per
    // head in one tensor, a 4× GELU MLP, biases everywhere. Its Megatron settings
    // (`pretraining_tp`, `slow_but_exact`, the fusion flags, `offset_alibi`) leave the math as
    // it is; `apply_residual_connection_post_layernorm` would not: refused.
    Family {
        renames: &[
            ("n_layer", "num_hidden_layers"),
            ("n_head", "num_attention_heads"),
            ("n_embed", "hidden_size"),
        ],
        ..llama(
            "bloom",
            "Bloom",
            LlamaLike {
                qkv_bias: Bias::Always,
                o_bias: Bias::Always,
                mlp_bias: Bias::Always,
                qkv: Qkv::Grouped,
                norm: NormKind::Layer { bias: true },
                eps_key: Some("layer_norm_epsilon"),
                gated: false,
                inner_x4: true,
                alibi: Some(alibi_slopes_bloom),
                embed_norm: true,
                mha_only: true,
                refuse_when_true: &["apply_residual_connection_post_layernorm"],
                layout: Layout::Bloom,
                // ALiBi sets no length limit; figures use the 2048 tokens Bloom trained on.
                ..LlamaLike::llama(Defaults {
                    act: "gelu_pytorch_tanh",
                    ..d(
                        250_880, 64, 256, 2, 8, None, None, 2048, 1e-5, 10_000.0, true,
                    )
                })
            },
            Some("bloom"),
            &[
                TRAINING,
                &[
                    "hidden_dropout",
                    "pretraining_tp",
                    "slow_but_exact",
                    "attention_softmax_in_fp32",
                    "bias_dropout_fusion",
                    "masked_softmax_fusion",
                    "offset_alibi",
                    "skip_bias_add",
                    "skip_bias_add_qkv",
                    "unk_token_id",
                    "n_inner",
                ],
            ],
        )
    },
    // MiniMax-M2: Q and K RMS-normalized over the whole projection, part of each head rotated
    // (`rotary_dim`), 256 experts in Mixtral's layout chosen by sigmoid scores plus a correction
    // bias. Its released configs carry keys of MiniMax's own code that the transformers class
    // never reads (the routing and MTP settings, `attn_type_list`).
    Family {
        renames: &[("num_experts", "num_local_experts")],
        ..llama(
            "minimax_m2",
            "MiniMax-M2",
            LlamaLike {
                qkv_bias: Bias::Never,
                o_bias: Bias::Never,
                mlp_bias: Bias::Never,
                qk_norm: QkNorm::Full,
                rotary_dim_key: true,
                layout: Layout::MiniMaxM2,
                experts: Experts::Routed(Routed {
                    count: ("num_local_experts", 256),
                    top_k: 8,
                    scoring: Scoring::Sigmoid,
                    correction_bias: Bias::Always,
                    ..Routed::MIXTRAL
                }),
                ..LlamaLike::llama(d(
                    200_064,
                    3072,
                    1536,
                    62,
                    48,
                    Some(8),
                    Some(128),
                    196_608,
                    1e-6,
                    5_000_000.0,
                    false,
                ))
            },
            Some("minimax-m2"),
            &[
                TRAINING,
                &[
                    "router_aux_loss_coef",
                    "output_router_logits",
                    "router_jitter_noise",
                    "attn_type_list",
                    "mtp_transformer_layers",
                    "num_mtp_modules",
                    "use_mtp",
                    "qk_norm_type",
                    "scoring_func",
                    "use_routing_bias",
                    "use_qk_norm",
                    "shared_intermediate_size",
                ],
            ],
        )
    },
    // HY-V3 (Hy3): Apertus's per-head QK-norm in a Llama whose layers after the first
    // (`mlp_layer_types`) route by sigmoid with a correction bias on the MoE block, renormalize
    // and scale by `router_scaling_factor`, beside `num_shared_experts` shared experts.
    Family {
        renames: &[("num_local_experts", "num_experts")],
        ..llama(
            "hy_v3",
            "HY-V3",
            LlamaLike {
                qk_norm: QkNorm::PerHead,
                layout: Layout::HyV3,
                experts: Experts::Routed(Routed {
                    count: ("num_experts", 192),
                    top_k: 8,
                    width: Some(("moe_intermediate_size", 1536)),
                    layers: MoeLayers::Types(None, 1),
                    scoring: Scoring::Sigmoid,
                    correction_bias: Bias::Always,
                    scaling: Some(("router_scaling_factor", 2.826)),
                    shared: Some(SharedMlp {
                        count: Some(("num_shared_experts", 1)),
                        bias_as_mlp: true,
                        zero_count_is_dense: true,
                        ..SharedMlp::of("moe_intermediate_size", 1536)
                    }),
                    ..Routed::MIXTRAL
                }),
                ..LlamaLike::llama(d(
                    120_832,
                    4096,
                    13312,
                    80,
                    64,
                    Some(8),
                    Some(128),
                    131_072,
                    1e-5,
                    11_158_840.0,
                    false,
                ))
            },
            None,
            &[
                TRAINING,
                &["output_router_logits", "enable_moe_fp32_combine"],
            ],
        )
    },
    // EXAONE MoE (K-EXAONE): EXAONE 4's attention (per-head QK-norm, three sliding layers per
    // full one, only the sliding layers rotating) in OLMoE's pre-norm layers, the first
    // `first_k_dense_replace` dense and the others routed as DeepSeek-V3 routes.
    llama(
        "exaone_moe",
        "EXAONE MoE",
        LlamaLike {
            qkv_bias: Bias::Never,
            o_bias: Bias::Never,
            mlp_bias: Bias::Never,
            qk_norm: QkNorm::PerHead,
            layout: Layout::ExaoneMoe,
            windows: Windows::LayerTypes {
                window: Some(4096),
                unlisted: Unlisted::FullEveryKey("sliding_window_pattern", 4),
            },
            no_rope: NoRope::FullLayers,
            experts: Experts::Routed(Routed {
                count: ("num_experts", 64),
                top_k: 8,
                width: Some(("moe_intermediate_size", 1024)),
                renormalize: Renormalize::Key(true),
                layers: MoeLayers::Types(Some("first_k_dense_replace"), 1),
                scoring: Scoring::Sigmoid,
                correction_bias: Bias::Always,
                groups: Some((1, 1)),
                scaling: Some(("routed_scaling_factor", 2.5)),
                shared: Some(SharedMlp {
                    count: Some(("num_shared_experts", 1)),
                    ..SharedMlp::of("moe_intermediate_size", 1024)
                }),
                ..Routed::MIXTRAL
            }),
            ..LlamaLike::llama(d(
                102_400,
                4096,
                16384,
                32,
                32,
                Some(32),
                None,
                2048,
                1e-5,
                10_000.0,
                false,
            ))
        },
        None,
        &[TRAINING, &["output_router_logits"]],
    ),
    // Flint: Qwen3-MoE's attention with gpt-oss's sinks, where only the sliding layers rotate
    // (the full ones: the first two, every fourth from layer 1, the last); experts chosen by
    // sigmoid score beside one ungated shared expert, the first two layers dense.
    llama(
        "flint",
        "Flint",
        LlamaLike {
            qkv_bias: Bias::Key("attention_bias", false),
            o_bias: Bias::Key("attention_bias", false),
            mlp_bias: Bias::Never,
            qk_norm: QkNorm::PerHead,
            sinks: true,
            windows: Windows::LayerTypes {
                window: Some(513),
                unlisted: Unlisted::FullFirstTwoEveryFourthLast,
            },
            no_rope: NoRope::FullLayers,
            layout: Layout::Flint,
            experts: Experts::Routed(Routed {
                count: ("num_experts", 256),
                top_k: 6,
                width: Some(("moe_intermediate_size", 512)),
                renormalize: Renormalize::Key(true),
                layers: MoeLayers::Qwen(&[0, 1]),
                zero_is_dense: true,
                scoring: Scoring::Sigmoid,
                shared: Some(SharedMlp::of("shared_expert_intermediate_size", 1024)),
                ..Routed::MIXTRAL
            }),
            ..LlamaLike::llama(d(
                150_144,
                2048,
                6144,
                49,
                32,
                Some(4),
                Some(128),
                262_144,
                1e-6,
                10_000.0,
                false,
            ))
        },
        None,
        &[TRAINING, &["router_aux_loss_coef", "output_router_logits"]],
    ),
    // MiniMax (MiniMax-Text-01): lightning attention in the odd layers (by `layer_types`), GQA
    // softmax attention in the others, Mixtral's experts in every layer; the residual adds read
    // the normed input, x ← α · n(x) + β · f(n(x)), α and β per sublayer kind.
    Family {
        renames: &[("num_experts", "num_local_experts")],
        ..llama(
            "minimax",
            "MiniMax",
            LlamaLike {
                qkv_bias: Bias::Never,
                o_bias: Bias::Never,
                mlp_bias: Bias::Never,
                place: NormPlace::Normed,
                windows: Windows::Every(None),
                experts: Experts::Routed(Routed::MIXTRAL),
                hybrid: Some(Hybrid {
                    mixer: HybridMixer::Lightning {
                        block: ("block_size", 256),
                    },
                    layers: HybridLayers::Even,
                    recurrent_place: None,
                }),
                layout: Layout::MiniMax,
                ..LlamaLike::llama(Defaults {
                    head_dim: HeadDim::Floor,
                    ..d(
                        32000,
                        4096,
                        14336,
                        32,
                        32,
                        Some(8),
                        None,
                        131_072,
                        1e-5,
                        1_000_000.0,
                        false,
                    )
                })
            },
            None,
            &[
                TRAINING,
                &[
                    "router_aux_loss_coef",
                    "output_router_logits",
                    "router_jitter_noise",
                ],
            ],
        )
    },
    // Lara Mini: Qwen3.5's Gated DeltaNet (its projections in one `in_proj`) among Qwen3
    // attention layers, sliding ones rotating and full ones without positions, by
    // `layer_types` or a pattern of period 5; experts in every layer, stacked, beside an
    // ungated shared expert. Its class drops `intermediate_size`, `mlp_only_layers` and
    // `decoder_sparse_step`.
    llama(
        "lara_mini",
        "Lara Mini",
        LlamaLike {
            qk_norm: QkNorm::PerHead,
            mlp_bias: Bias::Never,
            hybrid: Some(Hybrid {
                mixer: HybridMixer::DeltaNet(DeltaStore::Fused, DeltaHeads::Given(8, 16)),
                layers: HybridLayers::ConvTypes {
                    types: "layer_types",
                    indices: None,
                    pattern: Some(TypePattern::LaraMini),
                },
                recurrent_place: None,
            }),
            windows: Windows::ConvTypes {
                window: Some(512),
                pattern: TypePattern::LaraMini,
            },
            no_rope: NoRope::FullLayers,
            experts: Experts::Routed(Routed {
                count: ("num_experts", 128),
                top_k: 4,
                width: Some(("moe_intermediate_size", 512)),
                renormalize: Renormalize::Key(true),
                layers: MoeLayers::All,
                shared: Some(SharedMlp::of("shared_expert_intermediate_size", 512)),
                stacked_out_in: true,
                ..Routed::MIXTRAL
            }),
            layout: Layout::LaraMini,
            ..LlamaLike::llama(d(
                151_936,
                1024,
                0,
                34,
                16,
                Some(4),
                Some(128),
                131_072,
                1e-6,
                10_000.0,
                true,
            ))
        },
        None,
        &[
            TRAINING,
            &[
                "router_aux_loss_coef",
                "output_router_logits",
                "intermediate_size",
                "mlp_only_layers",
                "decoder_sparse_step",
            ],
        ],
    ),
    // Mellum (JetBrains Mellum 2): Qwen3-MoE's attention and experts, the layers' attention and
    // MLP kinds by `layer_types` and `mlp_layer_types`, RoPE bases per layer type.
    Family {
        renames: &[
            ("num_experts", "num_local_experts"),
            ("num_mtp_layers", "num_nextn_predict_layers"),
        ],
        ..llama(
            "mellum",
            "Mellum",
            LlamaLike {
                mlp_bias: Bias::Never,
                qk_norm: QkNorm::PerHead,
                windows: Windows::LayerTypes {
                    window: Some(1024),
                    unlisted: Unlisted::Full,
                },
                rope_by_type: Some(ByType {
                    full: (500_000.0, 1.0),
                    sliding: (10_000.0, 1.0),
                    full_proportional: false,
                }),
                experts: Experts::Routed(Routed {
                    count: ("num_local_experts", 64),
                    top_k: 8,
                    width: Some(("moe_intermediate_size", 896)),
                    renormalize: Renormalize::Key(true),
                    layers: MoeLayers::Types(None, 0),
                    ..Routed::MIXTRAL
                }),
                ..LlamaLike::llama(d(
                    98_304,
                    2304,
                    7168,
                    28,
                    32,
                    Some(4),
                    Some(128),
                    131_072,
                    1e-6,
                    500_000.0,
                    false,
                ))
            },
            None,
            &[
                TRAINING,
                &[
                    "router_aux_loss_coef",
                    "output_router_logits",
                    // The multi-token-prediction layer is not part of the model transformers builds.
                    "num_nextn_predict_layers",
                    "mtp_layer_types",
                    "mtp_mlp_layer_types",
                ],
            ],
        )
    },
    // Doge (SmallDoge): dynamic mask attention (keys scored from their values bias and limit
    // the attention), per-head QK-norm, learned vectors scaling the residual stream. The cross-
    // domain MoE (`is_moe`) is refused: its router mixes the scores of a prompt's tokens.
    llama(
        "doge",
        "Doge",
        LlamaLike {
            qkv_bias: Bias::Key("attention_bias", false),
            o_bias: Bias::Key("attention_bias", false),
            qk_norm: QkNorm::PerHead,
            windows: Windows::Every(None),
            dynamic_mask_key: Some(("keep_window_size", 2048)),
            residual_scales: true,
            refuse_when_true: &["is_moe"],
            ..LlamaLike::llama(d(
                32_768, 1024, 2048, 32, 8, None, None, 2048, 1e-6, 10_000.0, false,
            ))
        },
        None,
        &[
            TRAINING,
            &[
                "hidden_dropout",
                // The dense model's: read only by the cross-domain MoE.
                "num_experts",
                "num_experts_per_tok",
                "norm_topk_prob",
                "output_router_logits",
                "router_aux_loss_coef",
            ],
        ],
    ),
    // Laguna (poolside): per-layer query-head counts, a softplus output gate per head (or per
    // head feature), per-head QK-norm, RoPE per layer type (the full layers rotating half of
    // each head by default); the first layer dense, the rest routed by sigmoid with a correction
    // bias and softcapped logits, beside a shared expert.
    llama(
        "laguna",
        "Laguna",
        LlamaLike {
            mlp_bias: Bias::Never,
            qk_norm: QkNorm::PerHead,
            layout: Layout::Laguna,
            windows: Windows::LayerTypes {
                window: Some(512),
                unlisted: Unlisted::Full,
            },
            heads_per_layer_key: Some("num_attention_heads_per_layer"),
            softplus_gate_key: Some("gating"),
            router_softcap_key: Some("moe_router_logit_softcapping"),
            rope_by_type: Some(ByType {
                full: (500_000.0, 0.5),
                sliding: (10_000.0, 1.0),
                full_proportional: false,
            }),
            refuse_when_true: &["moe_apply_router_weight_on_input"],
            experts: Experts::Routed(Routed {
                count: ("num_experts", 256),
                top_k: 8,
                width: Some(("moe_intermediate_size", 512)),
                layers: MoeLayers::Types(None, 1),
                scoring: Scoring::Sigmoid,
                correction_bias: Bias::Always,
                scaling: Some(("moe_routed_scaling_factor", 1.0)),
                shared: Some(SharedMlp::of("shared_expert_intermediate_size", 512)),
                ..Routed::MIXTRAL
            }),
            ..LlamaLike::llama(d(
                100_352,
                2048,
                8192,
                40,
                48,
                Some(8),
                Some(128),
                131_072,
                1e-6,
                500_000.0,
                false,
            ))
        },
        None,
        &[TRAINING, &["output_router_logits", "router_aux_loss_coef"]],
    ),
    // DBRX (Databricks): fused, clamped QKV; LayerNorms without a bias; every layer a mixture
    // of experts stored row after row in one tensor per projection.
    Family {
        renames: &[
            ("num_attention_heads", "n_heads"),
            ("hidden_size", "d_model"),
            ("num_hidden_layers", "n_layers"),
            ("max_position_embeddings", "max_seq_len"),
        ],
        ..own(
            "dbrx",
            "DBRX",
            dbrx::load,
            None,
            &[
                TRAINING,
                &[
                    "resid_pdrop",
                    "emb_pdrop",
                    "output_router_logits",
                    "attn_config.attn_pdrop",
                    "ffn_config.moe_jitter_eps",
                    "ffn_config.moe_loss_weight",
                ],
            ],
        )
    },
    // Bamba (IBM): Llama layers whose mixer is Mamba2 except in the layers `attn_layer_indices`
    // lists (none by default); half of each head rotated whatever the top-level
    // `partial_rotary_factor` says (the class sets it).
    llama(
        "bamba",
        "Bamba",
        LlamaLike {
            partial: 0.5,
            partial_key: None,
            hybrid: Some(Hybrid {
                mixer: HybridMixer::Mamba2(SsmKeys::BAMBA),
                layers: HybridLayers::AttnIndices("attn_layer_indices"),
                recurrent_place: None,
            }),
            layout: Layout::Bamba,
            ..LlamaLike::llama(d(
                128_000,
                4096,
                14_336,
                32,
                32,
                Some(8),
                None,
                262_144,
                1e-5,
                10_000.0,
                false,
            ))
        },
        None,
        &[
            TRAINING,
            &[
                "num_logits_to_keep",
                "z_loss_coefficient",
                "mamba_chunk_size",
                "partial_rotary_factor",
            ],
        ],
    ),
    // GraniteMoeHybrid (IBM Granite 4.0-H): Bamba's Mamba2 layers with GraniteMoE-Shared's
    // experts and μP multipliers; `layer_types` says which layers attend (none by default),
    // `position_embedding_type` whether they rotate (none by default), and a model without
    // experts runs its shared MLP alone.
    Family {
        renames: &[("layers_block_type", "layer_types")],
        ..llama(
            "granitemoehybrid",
            "GraniteMoeHybrid",
            LlamaLike {
                hybrid: Some(Hybrid {
                    mixer: HybridMixer::Mamba2(SsmKeys::BAMBA),
                    layers: HybridLayers::Types("layer_types"),
                    recurrent_place: None,
                }),
                no_rope: NoRope::PositionType,
                fused_gate_up: true,
                layout: Layout::GraniteMoeHybrid,
                experts: Experts::Routed(Routed {
                    zero_is_dense: true,
                    zero_is_shared: true,
                    shared: Some(SharedMlp {
                        fused: true,
                        ..SharedMlp::of("shared_intermediate_size", 1024)
                    }),
                    ..GRANITE_EXPERTS
                }),
                ..GRANITE_MOE
            },
            None,
            &[
                TRAINING,
                &[
                    "router_aux_loss_coef",
                    "output_router_logits",
                    "mamba_chunk_size",
                ],
            ],
        )
    },
    // Nemotron-H (NVIDIA): each layer one sublayer after its norm: Mamba2, attention without
    // positions, a ReLU² MLP or ReLU² experts. The mixer's older key names are the class's
    // aliases; `expand` and `mamba_proj_bias` are fields it never reads (its inner width is
    // mamba_num_heads × mamba_head_dim, its projections' bias `use_bias`); published configs'
    // `rope_theta` and `partial_rotary_factor` describe no rotation it applies.
    Family {
        renames: &[
            ("layer_types", "layers_block_type"),
            ("num_local_experts", "n_routed_experts"),
            ("mamba_n_groups", "n_groups"),
            ("mamba_d_conv", "conv_kernel"),
            ("mamba_expand", "expand"),
            ("mamba_dt_min", "time_step_min"),
            ("mamba_dt_max", "time_step_max"),
            ("mamba_dt_limit", "time_step_limit"),
            ("mamba_dt_init_floor", "time_step_floor"),
            ("mamba_conv_bias", "use_conv_bias"),
            ("mamba_chunk_size", "chunk_size"),
        ],
        ..own(
            "nemotron_h",
            "Nemotron-H",
            nemotron_h::load,
            None,
            &[
                TRAINING,
                &[
                    "hidden_dropout",
                    "use_mamba_kernels",
                    "mamba_ssm_cache_dtype",
                    "num_logits_to_keep",
                    "chunk_size",
                    // Δ's initialization only, since transformers 5.25.
                    "time_step_min",
                    "time_step_max",
                    "time_step_floor",
                    "rescale_prenorm_residual",
                    "residual_in_fp32",
                    "moe_shared_expert_overlap",
                    "output_router_logits",
                    "expand",
                    "mamba_proj_bias",
                    "rope_theta",
                    "partial_rotary_factor",
                ],
            ],
        )
    },
    // Jamba (AI21): Mamba layers whose step, B and C are RMS-normed with weights; an attention
    // layer without positions every `attn_layer_period` from `attn_layer_offset`, experts every
    // `expert_layer_period` from `expert_layer_offset` (softmax top-k, not renormalized).
    // Published configs carry keys of AI21's first code: `n_ctx` (its context, the class reads
    // max_position_embeddings), `mamba_inner_layernorms` (the class always builds the norms),
    // `calc_logits_for_entire_prompt` (which logits to return).
    Family {
        renames: &[("num_local_experts", "num_experts")],
        echoes: &[
            ("n_ctx", Echo::Context),
            ("mamba_inner_layernorms", Echo::OneOf(&["true"])),
            ("sliding_window", Echo::OneOf(&["null"])),
        ],
        ..llama(
            "jamba",
            "Jamba",
            LlamaLike {
                hybrid: Some(Hybrid {
                    mixer: HybridMixer::Mamba(S6Keys::JAMBA),
                    layers: HybridLayers::Period(Period {
                        period: ("attn_layer_period", 8),
                        offset: ("attn_layer_offset", 4),
                    }),
                    recurrent_place: None,
                }),
                no_rope: NoRope::All,
                qkv_bias: Bias::Never,
                o_bias: Bias::Never,
                mlp_bias: Bias::Never,
                layout: Layout::Bamba,
                experts: Experts::Routed(Routed {
                    count: ("num_experts", 16),
                    renormalize: Renormalize::Never,
                    layers: MoeLayers::Period(Period {
                        period: ("expert_layer_period", 2),
                        offset: ("expert_layer_offset", 1),
                    }),
                    ..Routed::MIXTRAL
                }),
                ..LlamaLike::llama(d(
                    65_536,
                    4096,
                    14_336,
                    32,
                    32,
                    Some(8),
                    None,
                    262_144,
                    1e-6,
                    10_000.0,
                    false,
                ))
            },
            None,
            &[
                TRAINING,
                &[
                    "router_aux_loss_coef",
                    "output_router_logits",
                    "use_mamba_kernels",
                    "use_mambapy",
                    "use_associative_scan",
                    "calc_logits_for_entire_prompt",
                ],
            ],
        )
    },
    // LFM2 (Liquid AI): layers of a short gated convolution and layers of attention with per-head
    // QK norms, each with a SwiGLU MLP whose width the class derives from `intermediate_size`
    // (`block_ff_dim`). Published configs carry the first code's names for sizes the class has
    // under others (`block_dim`, `conv_dim`, `num_heads`, `block_norm_eps` …): each is checked.
    Family {
        renames: &[
            ("block_ff_dim", "intermediate_size"),
            ("tie_embedding", "tie_word_embeddings"),
        ],
        echoes: &[
            ("block_dim", Echo::Hidden),
            ("conv_dim", Echo::Hidden),
            ("conv_dim_out", Echo::Hidden),
            ("num_heads", Echo::Heads),
            ("block_norm_eps", Echo::NormEps),
            ("block_use_swiglu", Echo::OneOf(&["true"])),
            ("use_pos_enc", Echo::OneOf(&["true"])),
        ],
        ..llama(
            "lfm2",
            "LFM2",
            LlamaLike {
                ff_adjust: Some(FfAdjust {
                    flag: ("block_auto_adjust_ff_dim", true),
                    multiplier: ("block_ffn_dim_multiplier", 1.0),
                    multiple_of: ("block_multiple_of", 256),
                }),
                ..lfm2_like(Some("full_attn_idxs"), 2560, 12_288)
            },
            Some("lfm2"),
            &[
                TRAINING,
                &[
                    "block_mlp_init_scale",
                    "block_out_init_scale",
                    "block_use_xavier_init",
                    "conv_use_xavier_init",
                ],
            ],
        )
    },
    // LFM3: short convolutions (over 7 positions) among sliding-window and full attention
    // layers by `layer_types` or the class's pattern; Qwen3's attention with a sigmoid gate per
    // head (`use_attention_gate`), norms after each sublayer (`use_sandwich_norm`); per layer
    // type RoPE, the full layers' proportional (half of each head's pairs turn).
    Family {
        renames: &[("rms_norm_eps", "norm_eps")],
        ..llama(
            "lfm3",
            "LFM3",
            LlamaLike {
                hybrid: Some(Hybrid {
                    mixer: HybridMixer::ShortConv {
                        kernel: ("conv_L_cache", 7),
                        bias: ("conv_bias", false),
                    },
                    layers: HybridLayers::ConvTypes {
                        types: "layer_types",
                        indices: None,
                        pattern: Some(TypePattern::Lfm3),
                    },
                    recurrent_place: None,
                }),
                windows: Windows::ConvTypes {
                    window: Some(256),
                    pattern: TypePattern::Lfm3,
                },
                rope_by_type: Some(ByType {
                    full: (1_000_000.0, 0.5),
                    sliding: (10_000.0, 1.0),
                    full_proportional: true,
                }),
                out_gate: Some(OutGate {
                    softplus: false,
                    per_head: true,
                    bias: false,
                    stored: GateStore::Own,
                }),
                out_gate_key: Some(("use_attention_gate", true)),
                post_norm_key: Some(("use_sandwich_norm", true)),
                qk_norm: QkNorm::PerHead,
                qkv_bias: Bias::Key("attention_bias", false),
                o_bias: Bias::Key("attention_bias", false),
                mlp_bias: Bias::Never,
                eps_key: Some("norm_eps"),
                layout: Layout::Lfm3,
                ..LlamaLike::llama(d(
                    128_000,
                    2048,
                    7680,
                    24,
                    16,
                    Some(4),
                    Some(128),
                    128_000,
                    1e-5,
                    1_000_000.0,
                    true,
                ))
            },
            None,
            &[TRAINING],
        )
    },
    // Qwen3-Next: Gated DeltaNet layers, every `full_attention_interval`-th layer (4) attending
    // instead, with per-head QK norms, a quarter of each head rotated and an output gate stored
    // in the query projection; every norm (1 + w) but the DeltaNet's own; experts with a gated
    // shared expert. `use_sliding_window` is a Qwen3 key its class never reads.
    Family {
        echoes: &[("use_sliding_window", Echo::OneOf(&["false"]))],
        ..llama(
            "qwen3_next",
            "Qwen3-Next",
            LlamaLike {
                experts: Experts::Routed(Routed {
                    count: ("num_experts", 512),
                    top_k: 10,
                    width: Some(("moe_intermediate_size", 512)),
                    renormalize: Renormalize::Key(true),
                    layers: MoeLayers::Qwen(&[]),
                    zero_is_dense: true,
                    shared: Some(SharedMlp {
                        gate: true,
                        ..SharedMlp::of("shared_expert_intermediate_size", 512)
                    }),
                    ..Routed::MIXTRAL
                }),
                ..qwen3_next_like(
                    DeltaStore::Grouped,
                    Layout::Qwen3Next,
                    d(
                        151_936,
                        2048,
                        5632,
                        48,
                        16,
                        Some(2),
                        Some(256),
                        32768,
                        1e-6,
                        10_000.0,
                        false,
                    ),
                )
            },
            None,
            &[TRAINING, &["router_aux_loss_coef", "output_router_logits"]],
        )
    },
    // Qwen3.5's language model: Qwen3-Next's layers with the DeltaNet's projections stored apart
    // and a dense MLP in every layer. `attn_output_gate` restates the gate the class always has;
    // the multi-token-prediction keys describe weights transformers does not load.
    Family {
        echoes: &[("attn_output_gate", Echo::OneOf(&["true"]))],
        ..llama(
            "qwen3_5_text",
            "Qwen3.5",
            qwen3_next_like(
                DeltaStore::Separate,
                Layout::Qwen35,
                d(
                    248_320,
                    4096,
                    12_288,
                    32,
                    16,
                    Some(4),
                    Some(256),
                    32768,
                    1e-6,
                    10_000.0,
                    false,
                ),
            ),
            None,
            &[TRAINING, QWEN3_5_INERT, MROPE_SECTIONS],
        )
    },
    // Qwen3.5-MoE's language model: experts with a gated shared expert in every layer, always
    // renormalized; `mlp_only_layers` and `decoder_sparse_step` are Qwen3-Next keys its class
    // never reads.
    Family {
        echoes: &[("attn_output_gate", Echo::OneOf(&["true"]))],
        ..llama(
            "qwen3_5_moe_text",
            "Qwen3.5-MoE",
            qwen3_5_moe_like(256, 8, Renormalize::Always),
            None,
            &[
                TRAINING,
                QWEN3_5_INERT,
                MROPE_SECTIONS,
                &[
                    "router_aux_loss_coef",
                    "output_router_logits",
                    "mlp_only_layers",
                    "decoder_sparse_step",
                    "norm_topk_prob",
                ],
            ],
        )
    },
    // Qwen3.5 and Qwen3.5-MoE as published: the language model under `model.language_model`,
    // a vision tower beside it, the head on the wrapper, tied by the wrapper's own flag.
    Family {
        text: Some("qwen3_5_text"),
        tie: Tie::Wrapper(false),
        wrap: HfWrap::Nested,
        parts: &[tower(
            "vision tower",
            "model.visual.",
            towers::qwen3_5_vision,
        )],
        image: Some(towers::qwen3_5_image),
        ..wrapper("qwen3_5", "Qwen3.5", QWEN_VL_WRAPPER)
    },
    // Gemma 4's unified models' language model: Gemma 4's without per-layer embeddings or experts.
    own(
        "gemma4_unified_text",
        "Gemma 4 (unified)",
        gemma4::load,
        None,
        &[TRAINING],
    ),
    Family {
        text: Some("gemma4_unified_text"),
        tie: Tie::Wrapper(true),
        wrap: HfWrap::Nested,
        parts: GEMMA4_UNIFIED_PARTS,
        ..wrapper("gemma4_unified", "Gemma 4 (unified)", GEMMA4_WRAPPER)
    },
    // Gemma 4's multimodal wrapper: its language model under `model.language_model.`, its vision
    // and audio towers and their embedders beside it, the head tied by the wrapper's flag.
    Family {
        text: Some("gemma4_text"),
        tie: Tie::Wrapper(true),
        wrap: HfWrap::Nested,
        parts: GEMMA4_PARTS,
        ..wrapper("gemma4", "Gemma 4", GEMMA4_WRAPPER)
    },
    // Gemma 4's assistants: draft models for speculative decoding, a Gemma 4 language model
    // (`model.`, the head tied by the assistant's flag) that reads its target's state.
    Family {
        text: Some("gemma4_text"),
        tie: Tie::Wrapper(true),
        wrap: HfWrap::None,
        text_read: Some(gemma4::load_assistant),
        ..wrapper("gemma4_assistant", "Gemma 4 assistant", &[])
    },
    Family {
        text: Some("gemma4_unified_text"),
        tie: Tie::Wrapper(true),
        wrap: HfWrap::None,
        text_read: Some(gemma4::load_assistant),
        ..wrapper(
            "gemma4_unified_assistant",
            "Gemma 4 (unified) assistant",
            &[],
        )
    },
    // Qwen4-Exp's language model: Qwen3.5-MoE's layers under gated residual streams, a QSA
    // indexer in every attention layer (`qwen4_exp::load`).
    own(
        "qwen4_exp_text",
        "Qwen4-Exp",
        qwen4_exp::load,
        None,
        &[
            TRAINING,
            QWEN3_5_INERT,
            MROPE_SECTIONS,
            &["router_aux_loss_coef", "output_router_logits"],
        ],
    ),
    Family {
        text: Some("qwen4_exp_text"),
        tie: Tie::Wrapper(false),
        wrap: HfWrap::Nested,
        parts: &[tower(
            "vision tower",
            "model.visual.",
            towers::qwen3_5_vision,
        )],
        ..wrapper("qwen4_exp", "Qwen4-Exp", QWEN_VL_WRAPPER)
    },
    Family {
        text: Some("qwen3_5_moe_text"),
        tie: Tie::Wrapper(false),
        wrap: HfWrap::Nested,
        parts: &[tower(
            "vision tower",
            "model.visual.",
            towers::qwen3_5_vision,
        )],
        image: Some(towers::qwen3_5_image),
        ..wrapper("qwen3_5_moe", "Qwen3.5-MoE", QWEN_VL_WRAPPER)
    },
    // Qwen2-VL and Qwen2.5-VL as published: the language model's keys at the top level (or in
    // `text_config`), its tensors under `model.` and the head beside them, the vision tower
    // under `visual.`; tied by the wrapper's flag or the language model's.
    Family {
        image: Some(towers::qwen2_vl_image),
        ..flat_wrapper(
            ("qwen2_vl", "Qwen2-VL", "qwen2_vl_text"),
            Tie::Either(false),
            &[tower("vision tower", "visual.", towers::qwen2_vl_vision)],
            QWEN_VL_WRAPPER,
        )
    },
    Family {
        image: Some(towers::qwen2_5_vl_image),
        ..flat_wrapper(
            ("qwen2_5_vl", "Qwen2.5-VL", "qwen2_5_vl_text"),
            Tie::Either(false),
            &[tower("vision tower", "visual.", towers::qwen2_5_vl_vision)],
            QWEN_VL_WRAPPER,
        )
    },
    // HunyuanOCR as published: its language model's keys at the top level (or in
    // `text_config`), its tensors under `model.` and the head beside them (tied by default, and
    // always where the keys are at the top level), the vision tower under `vit.`.
    flat_wrapper(
        ("hunyuan_vl", "HunyuanOCR", "hunyuan_vl_text"),
        Tie::EitherNested(true),
        &[tower("vision tower", "vit.", towers::hunyuan_vl_vision)],
        HUNYUAN_VL_WRAPPER,
    ),
    // PaddleOCR-VL as published: its language model's keys at the top level (or in
    // `text_config`), its tensors under `model.` and the head beside them, the vision tower
    // under `visual.` and the projector under `mlp_AR.`.
    flat_wrapper(
        ("paddleocr_vl", "PaddleOCR-VL", "paddleocr_vl_text"),
        Tie::Either(true),
        &[
            tower("vision tower", "visual.", towers::paddleocr_vl_vision),
            tower("projector", "mlp_AR.", towers::paddleocr_vl_projector),
        ],
        QWEN_VL_WRAPPER,
    ),
    // HY v4 VL as published: its language model under `model.` (HY v4's names) and the head
    // beside it, tied by the wrapper's flag alone; the vision tower under `vit.`.
    Family {
        text: Some("hy_v4_vl_text"),
        tie: Tie::Wrapper(false),
        wrap: HfWrap::None,
        parts: &[tower("vision tower", "vit.", towers::hy_v4_vl_vision)],
        ..wrapper("hy_v4_vl", "HY v4 VL", HY_V4_VL_WRAPPER)
    },
    // GLM-4.1V as published: its language model under `model.language_model.`, the head beside
    // it, tied by the wrapper's flag or the language model's; the vision tower under
    // `model.visual.`.
    Family {
        text: Some("glm4v_text"),
        tie: Tie::Either(false),
        wrap: HfWrap::Nested,
        parts: &[tower("vision tower", "model.visual.", towers::glm4v_vision)],
        ..wrapper("glm4v", "GLM-4.1V", GLM4V_WRAPPER)
    },
    // GLM-OCR: GLM-4.1V's wrapper around its own language model and a tower of GLM-4.1V's
    // blocks with normed queries and keys (no learned positions).
    Family {
        text: Some("glm_ocr_text"),
        tie: Tie::Either(false),
        wrap: HfWrap::Nested,
        parts: &[tower(
            "vision tower",
            "model.visual.",
            towers::glm_ocr_vision,
        )],
        ..wrapper("glm_ocr", "GLM-OCR", GLM4V_WRAPPER)
    },
    // GLM-4.5V: GLM-4.1V's wrapper around GLM-4.5's experts (`deepseek::load`).
    Family {
        text: Some("glm4v_moe_text"),
        tie: Tie::Either(false),
        wrap: HfWrap::Nested,
        parts: &[tower(
            "vision tower",
            "model.visual.",
            towers::glm4v_moe_vision,
        )],
        ..wrapper("glm4v_moe", "GLM-4.5V", GLM4V_WRAPPER)
    },
    // GLM-4.6V: GLM-4.1V's wrapper around its language model and tower (`glm46v`), tied by its
    // own flag. GLM's `glmga` is built by the same class.
    Family {
        text: Some("glm4v_text"),
        tie: Tie::Wrapper(false),
        wrap: HfWrap::Nested,
        text_read: Some(wrappers::glm46v_text),
        parts: &[tower(
            "vision tower",
            "model.visual.",
            towers::glm46v_vision,
        )],
        aliases: &["glmga"],
        ..wrapper("glm46v", "GLM-4.6V", GLM4V_WRAPPER)
    },
    // Qwen3-VL-MoE: Qwen3-VL's wrapper and tower around its experts.
    Family {
        text: Some("qwen3_vl_moe_text"),
        tie: Tie::Wrapper(false),
        wrap: HfWrap::Nested,
        parts: &[tower(
            "vision tower",
            "model.visual.",
            towers::qwen3_vl_moe_vision,
        )],
        image: Some(towers::qwen3_vl_moe_image),
        ..wrapper("qwen3_vl_moe", "Qwen3-VL-MoE", QWEN_VL_WRAPPER)
    },
    // Qwen2.5-Omni's thinker: its language model under `model.` with the head beside it, tied
    // by the wrapper's flag alone, the vision tower under `visual.` and the audio encoder under
    // `audio_tower.`.
    Family {
        text: Some("qwen2_5_omni_text"),
        tie: Tie::Wrapper(false),
        wrap: HfWrap::None,
        parts: &[
            tower("vision tower", "visual.", towers::qwen2_5_omni_vision),
            tower("audio tower", "audio_tower.", towers::qwen2_5_omni_audio),
        ],
        ..wrapper(
            "qwen2_5_omni_thinker",
            "Qwen2.5-Omni",
            &[
                OMNI_THINKER,
                &[
                    // Its class's attribute_map aliases of the ids.
                    "image_token_index",
                    "video_token_index",
                    "audio_token_index",
                    "audio_end_token_id",
                    "seconds_per_chunk",
                ],
            ],
        )
    },
    // Qwen3-Omni's thinker (the part that reads text, images and audio and writes text): its
    // language model under `model.` with the head beside it, tied by the wrapper's flag, the
    // vision tower under `visual.` and the audio encoder under `audio_tower.`.
    Family {
        text: Some("qwen3_omni_moe_text"),
        tie: Tie::Wrapper(false),
        wrap: HfWrap::None,
        parts: &[
            tower("vision tower", "visual.", towers::qwen3_omni_vision),
            tower("audio tower", "audio_tower.", towers::qwen3_omni_audio),
        ],
        ..wrapper("qwen3_omni_moe_thinker", "Qwen3-Omni", &[OMNI_THINKER])
    },
    // HyperCLOVA X Vision v2: a HyperCLOVA X language model under `model.language_model.`, its
    // head there too (tied by the wrapper's flag), Qwen2.5-VL's vision tower and one projection.
    Family {
        text: Some("hyperclovax"),
        tie: Tie::Wrapper(true),
        wrap: HfWrap::Module {
            module: "language_model",
            head: true,
        },
        parts: &[
            tower(
                "vision tower",
                "model.vision_model.",
                towers::qwen2_5_vl_vision,
            ),
            tower(
                "multimodal projector",
                "model.vision_projector.",
                towers::hyperclovax_vision_projector,
            ),
        ],
        head_scale: true,
        ..wrapper(
            "hyperclovax_vision_v2",
            "HyperCLOVA X Vision v2",
            &[&[
                "initializer_range",
                "vision_config",
                "image_token_id",
                "video_token_id",
            ]],
        )
    },
    // EXAONE 4.5: an EXAONE 4 language model under `model.language_model.` (the head beside it,
    // tied by the wrapper's flag) behind Qwen2.5-VL's tower with fewer K/V heads. Its first
    // configs name the language model `exaone4_5_text`, which the class reads as `exaone4`.
    Family {
        text: Some("exaone4"),
        text_aliases: &["exaone4_5_text"],
        tie: Tie::Wrapper(false),
        wrap: HfWrap::Nested,
        parts: &[tower(
            "vision tower",
            "model.visual.",
            towers::exaone4_5_vision,
        )],
        ..wrapper(
            "exaone4_5",
            "EXAONE 4.5",
            &[&[
                "vision_config",
                "initializer_range",
                "image_token_id",
                "video_token_id",
            ]],
        )
    },
    // Cohere Compass (North Vision) as published: Qwen3-VL's wrapper and tower around Cohere
    // Compass's language model, tied by the wrapper's flag alone.
    Family {
        text: Some("cohere_compass_text"),
        tie: Tie::Wrapper(false),
        wrap: HfWrap::Nested,
        parts: &[tower(
            "vision tower",
            "model.visual.",
            towers::cohere_compass_vision,
        )],
        head_scale: true,
        ..wrapper("cohere_compass", "Cohere Compass", QWEN_VL_WRAPPER)
    },
    // Qwen3-VL as published: Qwen3.5's layout, tied by the wrapper's flag alone.
    Family {
        text: Some("qwen3_vl_text"),
        tie: Tie::Wrapper(false),
        wrap: HfWrap::Nested,
        parts: &[tower(
            "vision tower",
            "model.visual.",
            towers::qwen3_vl_vision,
        )],
        image: Some(towers::qwen3_vl_image),
        ..wrapper("qwen3_vl", "Qwen3-VL", QWEN_VL_WRAPPER)
    },
    // LFM2-MoE: LFM2's short convolutions and attention layers, the layer types required, the
    // MLP at its width as given; after `num_dense_layers` dense layers, sigmoid-scored experts,
    // chosen with a per-expert bias (`use_expert_bias`), renormalized and scaled.
    Family {
        renames: &[("tie_embedding", "tie_word_embeddings")],
        ..llama(
            "lfm2_moe",
            "LFM2-MoE",
            LlamaLike {
                experts: Experts::Routed(Routed {
                    count: ("num_experts", 32),
                    top_k: 4,
                    width: Some(("moe_intermediate_size", 1792)),
                    renormalize: Renormalize::Key(true),
                    layers: MoeLayers::FirstDense("num_dense_layers", 2),
                    scoring: Scoring::Sigmoid,
                    correction_bias: Bias::Key("use_expert_bias", true),
                    renorm_eps: 1e-6,
                    scaling: Some(("routed_scaling_factor", 1.0)),
                    ..Routed::MIXTRAL
                }),
                ..lfm2_like(None, 2048, 7168)
            },
            None,
            &[TRAINING, &["output_router_logits"]],
        )
    },
    // Mamba and Falcon-Mamba: every layer Mamba's selective scan. `residual_in_fp32` changes
    // only rounding; the kernel choices (`use_mambapy`, `use_associative_scan`) only the order of
    // a sum; the time-step keys only the initialization.
    own("mamba", "Mamba", mamba::load, Some("mamba"), MAMBA_INERT),
    own(
        "falcon_mamba",
        "Falcon-Mamba",
        mamba::load,
        None,
        MAMBA_INERT,
    ),
    // Mamba2: every layer a state-space mixer, no attention, no FFN. `residual_in_fp32` and
    // `chunk_size` change only rounding and the order of a sum; the time-step keys only the
    // initialization. `norm_before_gate` (saved by conversions, Mamba-Codestral) is no field of
    // Mamba2Config: its mixer gates before the norm whatever it says.
    own(
        "mamba2",
        "Mamba2",
        mamba2::load,
        Some("mamba2"),
        &[
            TRAINING,
            &[
                "residual_in_fp32",
                "chunk_size",
                "time_step_rank",
                "time_step_min",
                "time_step_max",
                "time_step_floor",
                "time_step_init_scheme",
                "time_step_scale",
                "rescale_prenorm_residual",
                "norm_before_gate",
            ],
        ],
    ),
    // JetMoE: a mixture of attention heads and a mixture of MLP experts.
    Family {
        renames: &[("head_dim", "kv_channels")],
        // Saved configs hold the query heads the class derives (K/V heads × top-k).
        echoes: &[("num_attention_heads", Echo::Heads)],
        ..own(
            "jetmoe",
            "JetMoE",
            jetmoe::load,
            None,
            &[TRAINING, &["output_router_logits", "aux_loss_coef"]],
        )
    },
    // MiMo-V2-Flash (Xiaomi): five sliding-window layers (129 keys) to a full one, the sliding
    // ones with twice the K/V heads and a sink per head; value heads narrower than Q's and K's
    // and scaled; a third of each head rotated, by a base per layer type; the first layer dense,
    // the rest routed as DeepSeek-V3 routes, without shared experts.
    Family {
        renames: &[("num_local_experts", "n_routed_experts")],
        // The published config.json restates the model in the names of Xiaomi's own code.
        echoes: &[
            ("swa_num_attention_heads", Echo::SlidingHeads),
            ("swa_num_key_value_heads", Echo::SlidingKvHeads),
            ("swa_head_dim", Echo::SlidingHeadDim),
            ("swa_v_head_dim", Echo::SlidingVHeadDim),
            ("rope_theta", Echo::FullTheta),
            ("swa_rope_theta", Echo::SlidingTheta),
            ("partial_rotary_factor", Echo::Partial),
            ("layernorm_epsilon", Echo::NormEps),
            ("hybrid_layer_pattern", Echo::SlidingLayers),
            ("moe_layer_freq", Echo::MoeLayers),
            ("add_swa_attention_sink_bias", Echo::SlidingSinks),
            ("add_full_attention_sink_bias", Echo::FullSinks),
            ("n_shared_experts", Echo::OneOf(&["null", "0"])),
            ("scoring_func", Echo::OneOf(&["\"sigmoid\""])),
            ("topk_method", Echo::OneOf(&["\"noaux_tc\""])),
        ],
        ..llama(
            "mimo_v2_flash",
            "MiMo-V2-Flash",
            LlamaLike {
                o_bias: Bias::Never,
                mlp_bias: Bias::Never,
                layout: Layout::MiMo,
                windows: Windows::LayerTypes {
                    window: Some(129),
                    unlisted: Unlisted::FullFirstAndEvery(6),
                },
                window_less_one_key: Some("sliding_window_size"),
                sliding_own: Some(SlidingOwn {
                    kv_mult: 2,
                    sinks: true,
                }),
                v_head_dim_key: Some(("v_head_dim", 128)),
                v_scale_key: Some(("attention_value_scale", 0.707)),
                rope_by_type: Some(ByType {
                    full: (5_000_000.0, 0.334),
                    sliding: (10_000.0, 0.334),
                    full_proportional: false,
                }),
                partial: 0.334,
                experts: Experts::Routed(Routed {
                    count: ("n_routed_experts", 256),
                    top_k: 8,
                    width: Some(("moe_intermediate_size", 2048)),
                    renormalize: Renormalize::Key(true),
                    layers: MoeLayers::Types(None, 1),
                    scoring: Scoring::Sigmoid,
                    correction_bias: Bias::Always,
                    groups: Some((1, 1)),
                    scaling: Some(("routed_scaling_factor", 1.0)),
                    ..Routed::MIXTRAL
                }),
                ..LlamaLike::llama(d(
                    152_576,
                    4096,
                    16384,
                    48,
                    64,
                    Some(4),
                    Some(192),
                    131_072,
                    1e-5,
                    10_000.0,
                    false,
                ))
            },
            None,
            // `attention_chunk_size`: in the published config, read by neither the config
            // class nor the model.
            &[TRAINING, &["output_router_logits", "attention_chunk_size"]],
        )
    },
    // Kolibri (Aleph Alpha): EXAONE 4's attention (per-head QK-norm, a full NoPE layer after every
    // four sliding ones) in GLM-4's sandwich-normed layers; every layer routes by sigmoid, the
    // choice made on the logits plus a correction bias, beside one shared expert.
    Family {
        renames: kolibri::RENAMES,
        ..llama(
            "kolibri1",
            "Kolibri",
            kolibri::KOLIBRI,
            None,
            &[TRAINING, &["output_router_logits"]],
        )
    },
    // Kolibri 1.1: Kolibri's layers, its full layers indexed (a weightless indexer over NVFP4-
    // rounded keys, pools kept for later layers) and some reading an earlier layer's keys and
    // values; the first layers dense.
    Family {
        renames: kolibri::RENAMES,
        ..own(
            "kolibri1_1",
            "Kolibri 1.1",
            kolibri::load_1_1,
            None,
            &[TRAINING, &["output_router_logits"]],
        )
    },
    // BitNet (b1.58): Llama with a ReLU² gated MLP and a norm inside each sublayer, over the
    // heads before the output projection and over the activation before the down projection.
    // transformers builds it in full precision; the released checkpoints pack ternary weights.
    llama(
        "bitnet",
        "BitNet",
        LlamaLike {
            mlp_bias: Bias::Never,
            sub_norms: true,
            ..LlamaLike::llama(Defaults {
                act: "relu2",
                ..d(
                    128_256,
                    2560,
                    6912,
                    30,
                    20,
                    Some(5),
                    None,
                    2048,
                    1e-5,
                    500_000.0,
                    false,
                )
            })
        },
        None,
        &[TRAINING],
    ),
    // AFMoE (Arcee Trinity): per-head QK-norm and an output gate on the attention, only the
    // sliding layers rotating (every fourth is full), sandwich norms; after `num_dense_layers`
    // dense layers, sigmoid routing with a correction bias, renormalized and scaled by
    // `route_scale`, beside shared experts; √hidden-scaled embeddings by `mup_enabled`.
    llama(
        "afmoe",
        "AFMoE",
        LlamaLike {
            mlp_bias: Bias::Never,
            qk_norm: QkNorm::PerHead,
            out_gate: Some(OutGate {
                softplus: false,
                per_head: false,
                bias: false,
                stored: GateStore::Own,
            }),
            place: NormPlace::Sandwich,
            layout: Layout::Afmoe,
            embed_sqrt_key: Some(("mup_enabled", false)),
            windows: Windows::LayerTypes {
                window: Some(1024),
                unlisted: Unlisted::FullEveryKey("global_attn_every_n_layers", 4),
            },
            no_rope: NoRope::FullLayers,
            experts: Experts::Routed(Routed {
                count: ("num_experts", 64),
                top_k: 6,
                width: Some(("moe_intermediate_size", 1408)),
                layers: MoeLayers::FirstDense("num_dense_layers", 1),
                scoring: Scoring::Sigmoid,
                correction_bias: Bias::Always,
                scaling: Some(("route_scale", 1.0)),
                shared: Some(SharedMlp {
                    count: Some(("num_shared_experts", 2)),
                    ..SharedMlp::of("moe_intermediate_size", 1408)
                }),
                ..Routed::MIXTRAL
            }),
            ..LlamaLike::llama(d(
                200_192,
                2048,
                6144,
                32,
                16,
                Some(16),
                Some(128),
                16384,
                1e-5,
                10_000.0,
                false,
            ))
        },
        None,
        &[TRAINING, &["output_router_logits"]],
    ),
    // Mllama's language model: Llama 3.1's layers, with layers that cross-attend to the image
    // among them (`cross_attention_layers`), and 8 embedding rows past the vocabulary for the
    // image token and its kin, which the head does not score.
    llama(
        "mllama_text_model",
        "Mllama",
        LlamaLike {
            mlp_bias: Bias::Never,
            qkv_bias: Bias::Never,
            o_bias: Bias::Never,
            cross_layers: Some(("cross_attention_layers", &[3, 8, 13, 18, 23, 28, 33, 38])),
            extra_embed_rows: 8,
            ..LlamaLike::llama(d(
                128_256,
                4096,
                14_336,
                40,
                32,
                Some(8),
                None,
                131_072,
                1e-5,
                500_000.0,
                false,
            ))
        },
        None,
        &[TRAINING],
    ),
    // HRM-Text: two stacks of gated Llama layers run in a nested loop. `L_bp_cycles` routes
    // gradients in training; `prefix_lm` makes the tokens marked by `token_type_ids` attend both
    // ways, and a prompt of ids alone is causal.
    own(
        "hrm_text",
        "HRM-Text",
        hrm::load,
        None,
        &[TRAINING, &["L_bp_cycles", "prefix_lm"]],
    ),
    // BLT: byte-level stacks around a latent transformer over patches. `patching_batch_size`
    // batches the patcher's work; the top-level RoPE dict and `max_position_embeddings` of the
    // sub-configs bound positions only (each stack reads its own RoPE dict).
    own(
        "blt",
        "BLT",
        blt::load,
        None,
        &[
            TRAINING,
            &["patching_batch_size", "rope_parameters", "rope_theta"],
        ],
    ),
    // Dory: a looped nGPT on AFMoE's attention. `ngpt_alpha_init` and `initializer_range` set
    // the factors its learned scales are applied with.
    own("dory", "Dory", dory::load, None, &[TRAINING]),
    // Emu3's language model: Llama's layers over a vocabulary that holds the image tokens too.
    llama(
        "emu3_text_model",
        "Emu3",
        LlamaLike::llama(d(
            184_622,
            4096,
            14_336,
            32,
            32,
            Some(8),
            None,
            9216,
            1e-5,
            1_000_000.0,
            false,
        )),
        None,
        &[TRAINING],
    ),
    // Beam: sandwich norms around each sublayer and residual adds scaled with depth; per-head
    // QK-norm and a sigmoid output gate with a bias per head; sliding layers rotate, the full
    // ones (every sixth and the last) use no positions and scale their queries up with
    // position; after three dense layers, sigmoid-scored experts chosen within groups, the sum
    // scaled by `routed_scaling_factor`; logits softcapped.
    llama(
        "beam",
        "Beam",
        LlamaLike {
            mlp_bias: Bias::Never,
            qk_norm: QkNorm::PerHead,
            out_gate: Some(OutGate {
                softplus: false,
                per_head: false,
                bias: true,
                stored: GateStore::Own,
            }),
            place: NormPlace::Sandwich,
            layout: Layout::Sandwich,
            depth_scaled: true,
            windows: Windows::LayerTypes {
                window: Some(512),
                unlisted: Unlisted::FullEveryAndLast(6),
            },
            no_rope: NoRope::NullTypesOrFullLayers,
            query_scale: Some(QueryScale {
                form: ScaleForm::Power,
                beta: 0.1,
                length: 2048,
                shift: 1,
                nope_only: true,
            }),
            final_softcap: Some(("final_logit_softcapping", 30.0)),
            experts: Experts::Routed(Routed {
                count: ("num_experts", 256),
                top_k: 8,
                width: Some(("moe_intermediate_size", 2560)),
                renormalize: Renormalize::Key(true),
                layers: MoeLayers::Types(None, 3),
                scoring: Scoring::Sigmoid,
                correction_bias: Bias::Always,
                groups: Some((8, 4)),
                scaling: Some(("routed_scaling_factor", 2.5)),
                ..Routed::MIXTRAL
            }),
            ..LlamaLike::llama(d(
                151_936,
                5120,
                20480,
                52,
                48,
                Some(8),
                Some(128),
                8192,
                1e-6,
                10_000.0,
                false,
            ))
        },
        None,
        &[TRAINING, &["output_router_logits"]],
    ),
    // DiffLlama: Llama with differential attention, two attention maps' difference weighted by a
    // learned λ per layer.
    llama(
        "diffllama",
        "DiffLlama",
        LlamaLike {
            mlp_bias: Bias::Never,
            differential: true,
            ..LlamaLike::llama(d(
                32000, 2048, 8192, 16, 32, None, None, 2048, 1e-5, 10_000.0, false,
            ))
        },
        None,
        &[TRAINING, &["lambda_std_dev"]],
    ),
    // PhiMoE (Phi-3.5-MoE): LayerNorms with shifts, 16 experts routed by SparseMixer (the best
    // expert, then the best of the rest, each softmax-weighted among its near ties), LongRoPE
    // with short factors always and a cos/sin scale that switches past the original length.
    llama(
        "phimoe",
        "PhiMoE",
        LlamaLike {
            mlp_bias: Bias::Never,
            norm: NormKind::Layer { bias: true },
            head_bias: Bias::Key("lm_head_bias", false),
            longrope_mscale: true,
            layout: Layout::Mixtral,
            windows: Windows::Every(None),
            experts: Experts::Routed(Routed {
                count: ("num_local_experts", 16),
                scoring: Scoring::SparseMixer { eps: 0.01 },
                ..Routed::MIXTRAL
            }),
            ..LlamaLike::llama(d(
                32064,
                4096,
                6400,
                32,
                32,
                Some(8),
                None,
                131_072,
                1e-5,
                1_000_000.0,
                false,
            ))
        },
        None,
        &[
            TRAINING,
            &[
                "router_aux_loss_coef",
                "output_router_logits",
                "input_jitter_noise",
            ],
        ],
    ),
    // Aria (text): Llama whose every layer routes to 8 experts by a softmax over the top-2
    // logits, beside shared experts of the dense width; each layer's experts stacked in two
    // [E, in, out] tensors. Heads are hidden / heads wide unless `head_dim` says.
    Family {
        renames: &[("moe_topk", "num_experts_per_tok")],
        ..llama(
            "aria_text",
            "Aria",
            LlamaLike {
                layout: Layout::Aria,
                experts: Experts::Routed(Routed {
                    count: ("moe_num_experts", 8),
                    scoring: Scoring::TopkSoftmax,
                    stacked_in_out: true,
                    shared: Some(SharedMlp {
                        count: Some(("moe_num_shared_experts", 2)),
                        bias_as_mlp: true,
                        ..SharedMlp::of("intermediate_size", 4096)
                    }),
                    ..Routed::MIXTRAL
                }),
                ..LlamaLike::llama(d(
                    32000, 4096, 4096, 32, 32, None, None, 2048, 1e-6, 10_000.0, false,
                ))
            },
            None,
            &[TRAINING, &["pretraining_tp"]],
        )
    },
    // OLMoE: Q and K RMS-normalized over the whole projection, 64 experts of
    // `intermediate_size` in every layer, top-8 by softmax, not renormalized by default.
    Family {
        renames: &[("num_local_experts", "num_experts")],
        ..llama(
            "olmoe",
            "OLMoE",
            LlamaLike {
                mlp_bias: Bias::Never,
                qk_norm: QkNorm::Full,
                clip_qkv: true,
                experts: Experts::Routed(Routed {
                    count: ("num_experts", 64),
                    top_k: 8,
                    width: None,
                    renormalize: Renormalize::Key(false),
                    layers: MoeLayers::All,
                    zero_is_dense: false,
                    shared: None,
                    ..Routed::MIXTRAL
                }),
                ..LlamaLike::llama(d(
                    50304, 2048, 2048, 16, 16, None, None, 4096, 1e-5, 10_000.0, false,
                ))
            },
            Some("olmoe"),
            &[TRAINING, &["router_aux_loss_coef", "output_router_logits"]],
        )
    },
    // `apply_residual_connection_post_layernorm` is in Falcon-7B's config (a Bloom key); the
    // Falcon classes never read it. `num_key_value_heads`, which transformers 5.25 saves, the
    // class derives from `num_kv_heads` and `multi_query` whatever the file says.
    own(
        "falcon",
        "Falcon",
        falcon::load,
        Some("falcon"),
        &[
            TRAINING,
            &[
                "hidden_dropout",
                "apply_residual_connection_post_layernorm",
                "num_key_value_heads",
            ],
        ],
    ),
    // ModernBERT-decoder: ModernBERT's layers run causally.
    own(
        "modernbert-decoder",
        "ModernBERT-decoder",
        modernbert::load,
        None,
        &[&[
            "initializer_range",
            "initializer_cutoff_factor",
            "attention_dropout",
            "embedding_dropout",
            "mlp_dropout",
            "classifier_dropout",
            "cls_token_id",
            "sep_token_id",
        ]],
    ),
    // CTRL (Salesforce, 2019): a GPT-2-style pre-norm decoder with fixed sinusoids.
    Family {
        renames: &[
            ("hidden_size", "n_embd"),
            ("max_position_embeddings", "n_positions"),
            ("num_attention_heads", "n_head"),
            ("num_hidden_layers", "n_layer"),
        ],
        ..own(
            "ctrl",
            "CTRL",
            gpt2::load_ctrl,
            None,
            &[&["initializer_range", "resid_pdrop", "embd_pdrop"]],
        )
    },
    Family {
        // GPT-SW3's configs name GPT2Config's own class.
        aliases: &["gpt-sw3"],
        ..own(
            "gpt2",
            "GPT-2",
            gpt2::load,
            Some("gpt2"),
            &[&[
                "initializer_range",
                "resid_pdrop",
                "embd_pdrop",
                "attn_pdrop",
                "summary_type",
                "summary_use_proj",
                "summary_activation",
                "summary_proj_to_labels",
                "summary_first_dropout",
                "reorder_and_upcast_attn",
                "scale_attn_by_inverse_layer_idx",
                "n_ctx",
            ]],
        )
    },
    // Gemma reads `hidden_activation`; `hidden_act` is a legacy key its modeling never reads.
    own(
        "gemma2",
        "Gemma 2",
        gemma::load,
        Some("gemma2"),
        &[TRAINING, &["hidden_act"]],
    ),
    own(
        "vaultgemma",
        "VaultGemma",
        gemma::load,
        None,
        &[TRAINING, &["hidden_act"]],
    ),
    own(
        "gemma3_text",
        "Gemma 3",
        gemma::load,
        Some("gemma3"),
        &[TRAINING, &["hidden_act"]],
    ),
    // Gemma 4's first code's names for the global layers' heads are read; `per_layer_config` is
    // what transformers saves in their place.
    own(
        "gemma4_text",
        "Gemma 4",
        gemma4::load,
        Some("gemma4"),
        &[TRAINING],
    ),
    // Gemma 3n: `altup_coef_clip` clamps the AltUp coefficients in training only.
    own(
        "gemma3n_text",
        "Gemma 3n",
        gemma3n::load,
        None,
        &[TRAINING, &["altup_coef_clip"]],
    ),
    // Gemma 3n as published: its language model under `model.language_model.`, timm's
    // MobileNetV5 vision tower, the conformer audio tower and their embedders beside it, the head
    // tied by the wrapper's flag.
    Family {
        text: Some("gemma3n_text"),
        tie: Tie::Wrapper(true),
        wrap: HfWrap::Nested,
        parts: &[
            tower(
                "vision tower",
                "model.vision_tower.",
                towers::gemma3n_vision,
            ),
            tower(
                "vision embedder",
                "model.embed_vision.",
                towers::gemma3n_embed_vision,
            ),
            tower("audio tower", "model.audio_tower.", towers::gemma3n_audio),
            tower(
                "audio embedder",
                "model.embed_audio.",
                towers::gemma3n_embed_audio,
            ),
        ],
        ..wrapper(
            "gemma3n",
            "Gemma 3n",
            &[&[
                "initializer_range",
                "vision_config",
                "audio_config",
                "audio_soft_tokens_per_image",
                "vision_soft_tokens_per_image",
                "boi_token_id",
                "eoi_token_id",
                "image_token_id",
                "boa_token_id",
                "eoa_token_id",
                "audio_token_id",
            ]],
        )
    },
    Family {
        text: Some("gemma3_text"),
        tie: Tie::Wrapper(true),
        parts: &[
            tower("vision tower", "vision_tower.", towers::gemma3_vision),
            tower(
                "multimodal projector",
                "multi_modal_projector.",
                towers::gemma3_projector,
            ),
        ],
        image: Some(towers::gemma3_image),
        ..own(
            "gemma3",
            "Gemma 3",
            gemma::load,
            None,
            &[&[
                "initializer_range",
                "vision_config",
                "mm_tokens_per_image",
                "boi_token_index",
                "eoi_token_index",
                "image_token_index",
                // The same ids under their attribute_map names.
                "boi_token_id",
                "eoi_token_id",
                "image_token_id",
            ]],
        )
    },
    // PaliGemma (1 and 2): a Gemma (or Gemma 2) language model under `language_model.`, SigLIP's
    // vision tower and one biased map into the text width; the head on the wrapper, tied by its
    // flag. Its wrapper runs the prompt as a prefix that sees itself both ways, from position 1.
    Family {
        text: Some("gemma"),
        tie: Tie::Wrapper(true),
        text_read: Some(wrappers::paligemma_text),
        parts: &[
            tower("vision tower", "vision_tower.", towers::paligemma_vision),
            tower(
                "multimodal projector",
                "multi_modal_projector.",
                towers::paligemma_projector,
            ),
        ],
        image: Some(towers::paligemma_image),
        ..wrapper(
            "paligemma",
            "PaliGemma",
            &[&[
                "initializer_range",
                "vision_config",
                "image_token_index",
                "image_token_id",
                "projection_dim",
                // The wrapper's own copies, which its model never reads.
                "hidden_size",
                "vocab_size",
            ]],
        )
    },
    // LLaVA: a language model (Llama's by default) under `language_model.`, beside CLIP's
    // vision tower and a two-layer projector; the head on the wrapper, untied by its default.
    Family {
        text: Some("llama"),
        tie: Tie::Either(false),
        parts: &[LLAVA_TOWER, LLAVA_PROJECTOR],
        image: Some(towers::llava_image),
        ..wrapper("llava", "LLaVA", &[LLAVA_INERT])
    },
    // Granite 4 Vision: LLaVA-NeXT's layout under `model.` around its Granite language model
    // (the head beside it), CLIP's or SigLIP's tower, the row-end feature, and window Q-Former
    // projectors in place of LLaVA's: one per deep-stack pair and four for spatial offsets.
    Family {
        text: Some("granite4_vision_text"),
        tie: Tie::Wrapper(false),
        wrap: HfWrap::Nested,
        parts: &[
            tower(
                "vision tower",
                "model.vision_tower.",
                towers::granite4_vision_tower,
            ),
            tower(
                "image newline",
                "model.image_newline",
                towers::granite4_vision_newline,
            ),
            tower(
                "deep-stack projectors",
                "model.layerwise_projectors.",
                towers::granite4_vision_layerwise,
            ),
            tower(
                "spatial projectors",
                "model.spatial_projectors.",
                towers::granite4_vision_spatial,
            ),
        ],
        head_scale: true,
        ..wrapper(
            "granite4_vision",
            "Granite 4 Vision",
            &[
                LLAVA_INERT,
                &[
                    "image_grid_pinpoints",
                    "qformer_config",
                    "downsample_rate",
                    "deepstack_layer_map",
                    "spatial_vision_layer",
                    "spatial_target_layers",
                    "projector_dropout",
                ],
            ],
        )
    },
    // Ovis2: a language model (Qwen2's by default) under `model.language_model.` and the head
    // beside it, its visual tokenizer under `model.vision_tower.` and the table its visual tokens
    // embed through.
    Family {
        text: Some("qwen2"),
        tie: Tie::Wrapper(true),
        wrap: HfWrap::Nested,
        parts: &[
            tower("vision tower", "model.vision_tower.", towers::ovis2_vision),
            tower(
                "visual embedding table",
                "model.visual_embeddings_table.",
                towers::ovis2_visual_table,
            ),
        ],
        ..wrapper(
            "ovis2",
            "Ovis2",
            &[&[
                "initializer_range",
                "vision_config",
                "image_token_id",
                "visual_indicator_token_ids",
                "vocab_size",
                "hidden_size",
            ]],
        )
    },
    // LLaVA-NeXT: LLaVA's parts and a learned vector ending each row of an image's patches.
    Family {
        text: Some("llama"),
        tie: Tie::Wrapper(false),
        parts: &[LLAVA_TOWER, LLAVA_PROJECTOR, LLAVA_NEXT_NEWLINE],
        image: Some(towers::llava_next_image),
        ..wrapper(
            "llava_next",
            "LLaVA-NeXT",
            &[LLAVA_INERT, &["image_grid_pinpoints"]],
        )
    },
    // LLaVA-NeXT-Video: LLaVA-NeXT's parts and a pooler of video frames' patches, which has
    // weights only where it pools by convolution.
    Family {
        text: Some("llama"),
        tie: Tie::Either(false),
        parts: &[
            LLAVA_TOWER,
            LLAVA_PROJECTOR,
            LLAVA_NEXT_NEWLINE,
            // Under `model.` as transformers saves it: its conversion to the published layout
            // leaves the pooler out (published checkpoints pool by average, without weights).
            tower(
                "video pooler",
                "model.vision_resampler.",
                towers::llava_next_video_pooler,
            ),
        ],
        image: Some(towers::llava_next_image),
        ..wrapper(
            "llava_next_video",
            "LLaVA-NeXT-Video",
            &[
                LLAVA_INERT,
                &[
                    "image_grid_pinpoints",
                    "video_token_index",
                    "video_token_id",
                    "video_seq_length",
                ],
            ],
        )
    },
    // Video-LLaVA: two CLIP towers of one config, for images and for video frames (ViT-L/14 at
    // 224 pixels where the wrapper has no vision config), and LLaVA's projector.
    Family {
        text: Some("llama"),
        tie: Tie::Wrapper(false),
        parts: &[
            tower("image tower", "image_tower.", towers::video_llava_tower),
            tower("video tower", "video_tower.", towers::video_llava_tower),
            tower(
                "multimodal projector",
                "multi_modal_projector.",
                towers::video_llava_projector,
            ),
        ],
        image: Some(towers::video_llava_image),
        ..wrapper(
            "video_llava",
            "Video-LLaVA",
            &[
                LLAVA_INERT,
                &["video_token_index", "video_token_id", "video_seq_length"],
            ],
        )
    },
    // VipLlava: LLaVA's CLIP tower, and a projector that norms the features of several of its
    // layers joined (five by default) before LLaVA's two biased maps.
    Family {
        text: Some("llama"),
        tie: Tie::Wrapper(false),
        parts: &[
            LLAVA_TOWER,
            tower(
                "multimodal projector",
                "multi_modal_projector.",
                towers::vipllava_projector,
            ),
        ],
        image: Some(towers::vipllava_image),
        ..wrapper(
            "vipllava",
            "VipLlava",
            &[
                LLAVA_INERT,
                &["vision_feature_layers", "projector_layernorm_eps"],
            ],
        )
    },
    // LLaVA-OneVision: LLaVA-NeXT's shape around a Qwen2 language model and SigLIP's encoder.
    Family {
        text: Some("qwen2"),
        tie: Tie::Either(false),
        parts: &[
            tower("vision tower", "vision_tower.", towers::onevision_vision),
            tower(
                "multimodal projector",
                "multi_modal_projector.",
                towers::onevision_projector,
            ),
            tower("image newline", "image_newline", towers::onevision_newline),
        ],
        image: Some(towers::llava_onevision_image),
        ..wrapper(
            "llava_onevision",
            "LLaVA-OneVision",
            &[
                LLAVA_INERT,
                &[
                    "image_grid_pinpoints",
                    "video_token_index",
                    "video_token_id",
                    "vision_aspect_ratio",
                ],
            ],
        )
    },
    // Command A Vision: a Cohere2 language model under `model.language_model.` (the head
    // beside it, tied by the wrapper's flag), SigLIP's encoder and a pixel-shuffle SwiGLU
    // projector.
    Family {
        text: Some("cohere2"),
        tie: Tie::Wrapper(true),
        wrap: HfWrap::Nested,
        parts: &[
            tower(
                "vision tower",
                "model.vision_tower.",
                towers::cohere2_vision_tower,
            ),
            tower(
                "multimodal projector",
                "model.multi_modal_projector.",
                towers::cohere2_vision_projector,
            ),
        ],
        image: Some(towers::cohere2_vision_image),
        ..wrapper(
            "cohere2_vision",
            "Command A Vision",
            &[&[
                "vision_config",
                "image_token_id",
                "downsample_factor",
                "alignment_intermediate_size",
            ]],
        )
    },
    // LLaVA-OneVision-1.5 as published, in Qwen2-VL's layout: a Qwen3 language model under
    // `model.` and the head beside it (tied by the wrapper's flag), RiceViT under `visual.`.
    Family {
        text: Some("qwen3"),
        tie: Tie::Wrapper(false),
        wrap: HfWrap::None,
        parts: &[tower("vision tower", "visual.", towers::rice_vit)],
        ..wrapper("llava_onevision1_5", "LLaVA-OneVision-1.5", QWEN_VL_WRAPPER)
    },
    // LightOnOCR: a Qwen3 language model under `model.language_model.` (the head beside it, tied
    // by the wrapper's flag), Mistral 3's Pixtral tower and a bias-free projector.
    Family {
        text: Some("qwen3"),
        tie: Tie::Wrapper(true),
        wrap: HfWrap::Nested,
        parts: &[
            tower(
                "vision tower",
                "model.vision_encoder.",
                towers::mistral3_vision,
            ),
            tower(
                "multimodal projector",
                "model.vision_projection.",
                towers::lighton_ocr_projector,
            ),
        ],
        image: Some(towers::lighton_ocr_image),
        ..wrapper(
            "lighton_ocr",
            "LightOnOCR",
            &[&["vision_config", "image_token_id", "initializer_range"]],
        )
    },
    // Aya Vision: a Cohere2 language model beside SigLIP's encoder and Command A Vision's
    // projector with a LayerNorm before it; the head tied by the wrapper's flag.
    Family {
        text: Some("cohere2"),
        tie: Tie::Wrapper(true),
        parts: &[
            tower("vision tower", "vision_tower.", towers::aya_vision_tower),
            tower(
                "multimodal projector",
                "multi_modal_projector.",
                towers::aya_vision_projector,
            ),
        ],
        image: Some(towers::aya_vision_image),
        head_scale: true,
        ..wrapper(
            "aya_vision",
            "Aya Vision",
            &[&[
                "vision_config",
                "image_token_index",
                "image_token_id",
                "downsample_factor",
                "alignment_intermediate_size",
                "adapter_layer_norm_eps",
                "vision_feature_select_strategy",
                "vision_feature_layer",
            ]],
        )
    },
    // InternVL (3 and 3.5 as transformers converts them): a Qwen2 language model (or another the
    // registry reads) under `language_model.`, InternViT and a pixel-shuffle projector.
    Family {
        text: Some("qwen2"),
        tie: Tie::Wrapper(true),
        parts: &[
            tower("vision tower", "vision_tower.", towers::internvl_vision),
            tower(
                "multimodal projector",
                "multi_modal_projector.",
                towers::internvl_projector,
            ),
        ],
        image: Some(towers::internvl_image),
        ..wrapper(
            "internvl",
            "InternVL",
            &[&[
                "vision_config",
                "image_token_id",
                "image_seq_length",
                "downsample_ratio",
                "projector_hidden_act",
                "vision_feature_layer",
                "vision_feature_select_strategy",
            ]],
        )
    },
    // LFM2-VL: an LFM2 language model under `model.language_model.` (the head beside it, tied
    // by the wrapper's flag), SigLIP2's NaFlex encoder and a pixel-unshuffle projector.
    Family {
        text: Some("lfm2"),
        tie: Tie::Wrapper(true),
        wrap: HfWrap::Nested,
        parts: &[
            tower(
                "vision tower",
                "model.vision_tower.",
                towers::lfm2_vl_vision,
            ),
            tower(
                "multimodal projector",
                "model.multi_modal_projector.",
                towers::lfm2_vl_projector,
            ),
        ],
        ..wrapper(
            "lfm2_vl",
            "LFM2-VL",
            &[&[
                "vision_config",
                "image_token_id",
                "projector_hidden_act",
                "projector_hidden_size",
                "projector_bias",
                "projector_use_layernorm",
                "downsample_factor",
            ]],
        )
    },
    // Inkling 2 and Inkling 2 Loop: their language model under `model.llm.` as it is alone
    // (its own head and tie rule), a ViT backbone under `model.visual.backbone.` and the
    // projector beside it.
    inkling2_wrapper("inkling2", "inkling2_text", "Inkling 2", INKLING2_PARTS),
    inkling2_wrapper(
        "inkling2_loop",
        "inkling2_loop_text",
        "Inkling 2 Loop",
        INKLING2_LOOP_PARTS,
    ),
    // LFM3-VL: an LFM3 language model under `model.language_model.` (Qwen2-VL's wrapper), its
    // own vision tower of convolution and attention layers and a projector joining each
    // spatial_merge_size² tokens; the head tied by the wrapper's flag.
    Family {
        text: Some("lfm3"),
        tie: Tie::Wrapper(true),
        wrap: HfWrap::Nested,
        parts: &[
            tower(
                "vision tower",
                "model.vision_tower.",
                towers::lfm3_vl_vision,
            ),
            tower(
                "multimodal projector",
                "model.multi_modal_projector.",
                towers::lfm3_vl_projector,
            ),
        ],
        ..wrapper(
            "lfm3_vl",
            "LFM3-VL",
            &[&[
                "initializer_range",
                "vision_config",
                "image_token_id",
                "video_token_id",
                "vision_start_token_id",
                "vision_end_token_id",
                "projector_hidden_act",
                "projector_hidden_size",
                "projector_bias",
            ]],
        )
    },
    // Kimi K2.5: a DeepSeek-V3 language model under `language_model.` (its published
    // checkpoint's names; the head tied by the wrapper's flag), MoonViT's vision tower and a
    // patch-merging projector.
    Family {
        text: Some("deepseek_v3"),
        text_aliases: &["kimi_k2"],
        tie: Tie::Wrapper(true),
        parts: &[
            tower("vision tower", "vision_tower.", towers::kimi_k25_vision),
            tower(
                "multimodal projector",
                "mm_projector.",
                towers::kimi_k25_projector,
            ),
        ],
        ..wrapper(
            "kimi_k25",
            "Kimi K2.5",
            &[&[
                "vision_config",
                "initializer_range",
                "projection_layer_norm_eps",
                "image_token_id",
                "video_token_id",
                "vision_start_token_id",
                "vision_end_token_id",
            ]],
        )
    },
    // MiniMax-M3 with its vision tower: its language model under `language_model.` as
    // published (experts one by one, `block_sparse_moe.` …; the head there too, tied by the
    // wrapper's flag or the text config's), a CLIP-like encoder, a projector of each patch and
    // an MLP merging spatial_merge_size² of them. Its class derives `merged_hidden_size` (text
    // width × spatial_merge_size²) over any value saved.
    Family {
        text: Some("minimax_m3_vl_text"),
        text_read: Some(minimax_m3::published),
        tie: Tie::Either(false),
        parts: &[
            tower(
                "vision tower",
                "vision_tower.vision_model.",
                towers::minimax_m3_vl_vision,
            ),
            tower(
                "multimodal projector",
                "multi_modal_projector.",
                towers::minimax_m3_vl_projector,
            ),
            tower(
                "patch merger",
                "patch_merge_mlp.",
                towers::minimax_m3_vl_merger,
            ),
        ],
        ..wrapper(
            "minimax_m3_vl",
            "MiniMax-M3",
            &[&[
                "vision_config",
                "initializer_range",
                "image_token_index",
                "image_token_id",
                "video_token_index",
                "video_token_id",
                "merged_hidden_size",
            ]],
        )
    },
    // Idefics2: a Mistral language model under `model.text_model.` (the head beside it, tied by
    // the wrapper's flag), SigLIP's vision encoder, and a connector that projects the image's
    // features and resamples them into a fixed number of latents.
    Family {
        text: Some("mistral"),
        tie: Tie::Wrapper(false),
        wrap: HfWrap::Module {
            module: "text_model",
            head: false,
        },
        parts: &[
            tower(
                "vision encoder",
                "model.vision_model.",
                towers::idefics2_vision,
            ),
            tower("connector", "model.connector.", towers::idefics2_connector),
        ],
        ..wrapper(
            "idefics2",
            "Idefics2",
            &[&[
                "vision_config",
                "perceiver_config",
                "image_token_id",
                "use_cache",
                "initializer_range",
            ]],
        )
    },
    // VideoLLaMA 3: a Qwen2 language model under `model.language_model.` (the head beside it,
    // tied by the wrapper's flag), SigLIP's encoder with RoPE in place of a position table, and
    // a two-layer projector.
    Family {
        text: Some("qwen2"),
        tie: Tie::Wrapper(false),
        wrap: HfWrap::Nested,
        parts: &[
            tower(
                "vision tower",
                "model.vision_model.",
                towers::video_llama_3_vision,
            ),
            tower(
                "multimodal projector",
                "model.projector.",
                towers::video_llama_3_projector,
            ),
        ],
        ..wrapper(
            "video_llama_3",
            "VideoLLaMA 3",
            &[&[
                "vision_config",
                "image_token_id",
                "video_token_id",
                "initializer_range",
            ]],
        )
    },
    // DeepSeek-VL: a Llama language model under `model.language_model.` (the head beside it,
    // tied by the wrapper's flag), SigLIP's encoder with its pooling head, and a two-layer
    // aligner.
    Family {
        text: Some("llama"),
        tie: Tie::Wrapper(true),
        wrap: HfWrap::Nested,
        parts: &[
            tower(
                "vision tower",
                "model.vision_model.",
                towers::deepseek_vl_vision,
            ),
            tower("aligner", "model.aligner.", towers::deepseek_vl_aligner),
        ],
        image: Some(towers::deepseek_vl_image),
        ..wrapper(
            "deepseek_vl",
            "DeepSeek-VL",
            &[&["vision_config", "image_token_id", "initializer_range"]],
        )
    },
    // MiniCPM-V 4.6 and 4.7 and MiniCPM-OCR: a Qwen3.5 language model under
    // `model.language_model.` (the head beside it, tied by the wrapper's flag), SigLIP's encoder
    // with a window merger inside it, and downsampling MLPs into the text width.
    minicpmv_like("minicpmv4_6", "MiniCPM-V 4.6", false),
    minicpmv_like("minicpmv4_7", "MiniCPM-V 4.7", false),
    minicpmv_like("minicpm_ocr", "MiniCPM-OCR", true),
    // Aria: its MoE language model under `language_model.` (the head there too, tied by the
    // wrapper's flag alone), Idefics3's SigLIP encoder, and a projector whose learned queries
    // cross-attend to the image's patches.
    Family {
        text: Some("aria_text"),
        tie: Tie::Wrapper(false),
        parts: &[
            tower("vision tower", "vision_tower.", towers::aria_vision),
            tower(
                "multimodal projector",
                "multi_modal_projector.",
                towers::aria_projector,
            ),
        ],
        ..wrapper(
            "aria",
            "Aria",
            &[&[
                "vision_config",
                "initializer_range",
                "image_token_index",
                "image_token_id",
                "vision_feature_layer",
                "projector_patch_to_query_dict",
                // Derived by the class from the map above, over any value saved.
                "max_value_projector_patch_to_query_dict",
            ]],
        )
    },
    // BLIP-2, InstructBLIP and InstructBLIP-Video: an OPT language model (its head its own)
    // under `language_model.`, an EVA-style vision tower, a Q-Former whose learned queries read
    // the image (InstructBLIP's the prompt too), and a projection into the text width.
    blip_like("blip-2", "BLIP-2", BLIP_2_PARTS),
    blip_like("instructblip", "InstructBLIP", INSTRUCTBLIP_PARTS),
    blip_like(
        "instructblipvideo",
        "InstructBLIP-Video",
        INSTRUCTBLIP_VIDEO_PARTS,
    ),
    // DeepSeek-VL-Hybrid: DeepSeek-VL's language model and SigLIP tower beside SAM's
    // high-resolution tower, its neck and projection, and an aligner joining both.
    Family {
        text: Some("llama"),
        tie: Tie::Wrapper(true),
        wrap: HfWrap::Nested,
        parts: &[
            tower(
                "vision tower",
                "model.vision_model.",
                towers::deepseek_vl_vision,
            ),
            tower(
                "high-resolution tower",
                "model.high_res_vision_model.",
                towers::deepseek_vl_hybrid_high_res,
            ),
            tower(
                "high-resolution neck",
                "model.high_res_vision_neck.",
                towers::deepseek_vl_hybrid_neck,
            ),
            tower(
                "high-resolution projection",
                "model.high_res_vision_proj.",
                towers::deepseek_vl_hybrid_proj,
            ),
            tower(
                "high-resolution weight",
                "model.high_res_vision_alpha",
                towers::deepseek_vl_hybrid_alpha,
            ),
            tower(
                "aligner",
                "model.aligner.",
                towers::deepseek_vl_hybrid_aligner,
            ),
        ],
        ..wrapper(
            "deepseek_vl_hybrid",
            "DeepSeek-VL-Hybrid",
            &[&[
                "vision_config",
                "high_res_vision_config",
                "image_token_id",
                "initializer_range",
            ]],
        )
    },
    // Qianfan-OCR: a Qwen3 language model under `language_model.`, InternVL's tower and
    // projector under their original names (`vision_model.`, `mlp1.`), as published.
    Family {
        text: Some("qwen3"),
        tie: Tie::Wrapper(false),
        parts: &[
            tower("vision tower", "vision_model.", towers::qianfan_ocr_vision),
            tower(
                "multimodal projector",
                "mlp1.",
                towers::qianfan_ocr_projector,
            ),
        ],
        ..wrapper(
            "qianfan_ocr",
            "Qianfan-OCR",
            &[&[
                "vision_config",
                "initializer_range",
                "image_token_id",
                "image_seq_length",
                "projector_hidden_act",
                "vision_feature_layer",
                "vision_feature_select_strategy",
            ]],
        )
    },
    // Granite Docling: Idefics3's layout around its Granite language model, its SigLIP tower
    // with the connector inside it (coarse and fine pixel-shuffle paths, each with deep-stack
    // mergers) and, where configured, the density router choosing the fine path.
    Family {
        text: Some("granite_docling_text"),
        tie: Tie::Wrapper(true),
        wrap: HfWrap::Module {
            module: "text_model",
            head: false,
        },
        parts: &[
            tower(
                "vision tower",
                "model.vision_model.",
                towers::granite_docling_vision,
            ),
            tower(
                "density router",
                "model.density_router.",
                towers::granite_docling_router,
            ),
        ],
        head_scale: true,
        ..wrapper(
            "granite_docling",
            "Granite Docling",
            &[&[
                "initializer_range",
                "vision_config",
                "image_token_id",
                "use_cache",
                "pad_token_id",
                "density_router_hidden_size",
                "density_router_threshold",
                "density_router_loss_weight",
            ]],
        )
    },
    // Idefics3 and SmolVLM: a Llama language model under `model.text_model.` (the head beside
    // it), SigLIP's vision encoder and a pixel-shuffle connector.
    idefics3_like("idefics3", "Idefics3"),
    idefics3_like("smolvlm", "SmolVLM"),
    // Mistral 3 (Mistral Small 3.1 and 3.2, Ministral 3, Devstral Small): a Mistral language
    // model (or one the registry reads in text_config) under `language_model.`, beside Pixtral's
    // vision tower and a projector that merges patches; the head on the wrapper, tied by its flag.
    Family {
        text: Some("mistral"),
        tie: Tie::Wrapper(true),
        parts: &[
            tower("vision tower", "vision_tower.", towers::mistral3_vision),
            tower(
                "multimodal projector",
                "multi_modal_projector.",
                towers::mistral3_projector,
            ),
        ],
        image: Some(towers::mistral3_image),
        ..wrapper(
            "mistral3",
            "Mistral 3",
            &[&[
                "vision_config",
                "image_token_index",
                "image_token_id",
                "projector_hidden_act",
                "vision_feature_layer",
                "multimodal_projector_bias",
                "spatial_merge_size",
            ]],
        )
    },
    // Mllama (Llama 3.2 Vision): a Llama 3.1 language model with layers that cross-attend to
    // the image among its own, behind a tiled vision encoder. Its causal-LM class holds the
    // language model alone; published checkpoints hold the whole model.
    Family {
        text: Some("mllama_text_model"),
        parts: &[
            tower("vision tower", "vision_model.", towers::mllama_vision),
            tower(
                "multimodal projector",
                "multi_modal_projector.",
                towers::mllama_projector,
            ),
        ],
        ..wrapper(
            "mllama",
            "Mllama",
            &[&[
                "initializer_range",
                "vision_config",
                "image_token_index",
                "image_token_id",
            ]],
        )
    },
    // Emu3: a Llama language model that reads and writes images as tokens of its vocabulary,
    // which a VQ-VAE turns into pixels and back. Its checkpoints keep the language model, head
    // and all, under `text_model.`.
    Family {
        text: Some("emu3_text_model"),
        tie: Tie::Wrapper(false),
        wrap: HfWrap::Prefix("text_model"),
        parts: &[tower(
            "VQ-VAE image tokenizer",
            "vqmodel.",
            towers::emu3_vqvae,
        )],
        ..wrapper(
            "emu3",
            "Emu3",
            &[&[
                "vq_config",
                // The tokenizer's map from image codes to vocabulary ids, and the image token's.
                "vocabulary_map",
                "image_token_id",
            ]],
        )
    },
    // GOT-OCR 2: a Qwen2 language model behind a SAM-style vision tower. PP-Chart2Table is
    // built by its class from its own defaults (a smaller Qwen2).
    Family {
        text: Some("qwen2"),
        aliases: &["pp_chart2table"],
        tie: Tie::Wrapper(true),
        parts: &[
            tower("vision tower", "vision_tower.", towers::got_ocr2_vision),
            tower(
                "multimodal projector",
                "multi_modal_projector.",
                towers::got_ocr2_projector,
            ),
        ],
        ..wrapper(
            "got_ocr2",
            "GOT-OCR 2",
            &[&[
                "vision_config",
                "image_token_index",
                "image_token_id",
                "image_seq_length",
            ]],
        )
    },
    // Fuyu: a Persimmon language model reading image patches through one linear map.
    Family {
        text: Some("persimmon"),
        tie: Tie::Wrapper(false),
        parts: &[tower(
            "patch embedding",
            "vision_embed_tokens.",
            towers::fuyu_patches,
        )],
        ..wrapper(
            "fuyu",
            "Fuyu",
            &[&[
                "initializer_range",
                "image_size",
                "patch_size",
                "num_channels",
                "image_token_id",
            ]],
        )
    },
    // Keys of DeepSeek's own code that transformers' classes never read: expert parallelism,
    // the MoE layer frequency (first_k_dense_replace decides), the scoring function and, for
    // V3, the top-k method (V3 always scores with a sigmoid and routes by groups); `head_dim`,
    // which both config classes overwrite with qk_rope_head_dim.
    Family {
        renames: &[("num_experts", "n_routed_experts")],
        ..own(
            "deepseek_v2",
            "DeepSeek-V2",
            deepseek::load,
            None,
            &[TRAINING, DEEPSEEK_UNREAD],
        )
    },
    Family {
        renames: &[
            ("num_local_experts", "n_routed_experts"),
            ("num_mtp_layers", "num_nextn_predict_layers"),
        ],
        ..own(
            "deepseek_v3",
            "DeepSeek-V3",
            deepseek::load,
            None,
            &[TRAINING, DEEPSEEK_UNREAD, &["topk_method"]],
        )
    },
    // Mistral 4: its head dims are derived (`head_dim`, `qk_head_dim`), as V3's are.
    Family {
        renames: &[("num_local_experts", "n_routed_experts")],
        ..own(
            "mistral4",
            "Mistral 4",
            deepseek::load,
            None,
            &[TRAINING, DEEPSEEK_UNREAD],
        )
    },
    // LongCat-Flash: two latent-attention sublayers per layer and a MoE with zero-computation
    // experts on a shortcut. Its multi-token-prediction weights (`model.mtp.*`) are skipped on
    // load. Its first code's flags restate what transformers always does: the latents scaled,
    // the zero-computation experts identities.
    Family {
        echoes: &[
            ("mla_scale_q_lora", Echo::OneOf(&["true"])),
            ("mla_scale_kv_lora", Echo::OneOf(&["true"])),
            ("zero_expert_type", Echo::OneOf(&["\"identity\""])),
        ],
        renames: &[
            ("num_local_experts", "n_routed_experts"),
            ("num_experts_per_tok", "moe_topk"),
            ("intermediate_size", "ffn_hidden_size"),
            ("moe_intermediate_size", "expert_ffn_hidden_size"),
        ],
        ..own(
            "longcat_flash",
            "LongCat-Flash",
            longcat::load,
            None,
            &[TRAINING],
        )
    },
    // `layer_types` is "indexed_attention" in every layer whatever it says; the attention always
    // rotates interleaved pairs and the MLP has no bias, whatever `rope_interleave` and
    // `mlp_bias` say; `qk_head_dim` is derived (nope + rope).
    Family {
        renames: &[("num_local_experts", "n_routed_experts")],
        ..own(
            "deepseek_v32",
            "DeepSeek-V3.2",
            deepseek::load,
            None,
            &[
                TRAINING,
                DEEPSEEK_UNREAD,
                &[
                    "topk_method",
                    "layer_types",
                    "rope_interleave",
                    "mlp_bias",
                    "output_router_logits",
                    "qk_head_dim",
                ],
            ],
        )
    },
    // Ergo (Amazon): sandwich norms with gated residual adds, a fused QKV, full NoPE layers
    // among sliding ones, ReLU² experts each normed after.
    Family {
        renames: ergo::RENAMES,
        ..own("ergo", "Ergo", ergo::load, None, &[TRAINING])
    },
    // ZAYA: compressed convolutional attention, a router MLP carrying its state from layer to
    // layer, learned shifts and scales on the embeddings and residual adds.
    own("zaya", "ZAYA", zaya::load, None, &[TRAINING]),
    // MiniMax-M3's language model (its causal LM; the vision tower belongs to the wrapper's
    // conditional-generation class). Its router's jitter and loss weight are training's.
    Family {
        renames: &[("num_experts", "num_local_experts")],
        ..own(
            "minimax_m3_vl_text",
            "MiniMax-M3",
            minimax_m3::load,
            None,
            &[TRAINING, &["router_aux_loss_coef", "router_jitter_noise"]],
        )
    },
    // dots.3 Note's language model. Its MLPs never read `mlp_bias`; the multi-token-prediction
    // layers a checkpoint may carry are skipped on load; `rope_interleave` and `qk_head_dim` are
    // restated by the class (it always interleaves, and derives nope + rope).
    Family {
        renames: &[("num_local_experts", "n_routed_experts")],
        ..own(
            "dots3_note_text",
            "dots.3 Note",
            deepseek::load,
            None,
            &[
                TRAINING,
                &[
                    "mlp_bias",
                    "rope_interleave",
                    "qk_head_dim",
                    "num_nextn_predict_layers",
                    "attention_dropout",
                ],
            ],
        )
    },
    // dots.3 Note as published: its causal LM is the language model alone (the vision and audio
    // encoders belong to its conditional-generation class), read from `text_config`, or from
    // the top level where the config has none, as the class reads it. Beside a `text_config`
    // the wrapper's `tie_word_embeddings` ties nothing: the language model's own flag does.
    Family {
        text: Some("dots3_note_text"),
        text_at_top: true,
        wrap: HfWrap::None,
        ..wrapper(
            "dots3_note",
            "dots.3 Note",
            &[&[
                "tie_word_embeddings",
                "initializer_range",
                "vision_config",
                "audio_config",
                "image_token_id",
                "video_token_id",
                "audio_token_id",
            ]],
        )
    },
    // Ling's hybrid (Ling/Ring 2.5 linear): Kimi Delta Attention with full-rank gates and latent
    // attention with a gate per head. Its class never reads `rope_interleave` (it always
    // interleaves); the multi-token-prediction layers sit after the decoder in the checkpoint
    // and inference skips them.
    Family {
        renames: &[
            ("model_max_length", "max_position_embeddings"),
            ("moe_renormalize", "norm_topk_prob"),
            ("num_expert_group", "n_group"),
            ("num_experts", "n_routed_experts"),
            ("num_local_experts", "n_routed_experts"),
            ("num_experts_per_token", "num_experts_per_tok"),
            ("num_shared_experts", "n_shared_experts"),
            ("num_mtp_layers", "num_nextn_predict_layers"),
            ("swiglu_limits", "expert_swiglu_limit_list"),
            ("swiglu_limits_shared", "share_expert_swiglu_limit_list"),
        ],
        ..own(
            "bailing_hybrid",
            "Ling hybrid",
            deepseek::load,
            None,
            &[
                TRAINING,
                DEEPSEEK_UNREAD,
                &[
                    "rope_interleave",
                    "num_nextn_predict_layers",
                    "num_mtp_layers",
                    "mtp_loss_scaling_factor",
                    "topk_method",
                ],
            ],
        )
    },
    // RWKV-4: time and channel mixing in every layer. `context_length` sizes only the CUDA
    // kernel's buffers.
    Family {
        renames: &[("max_position_embeddings", "context_length")],
        ..own("rwkv", "RWKV", rwkv::load, None, &[TRAINING])
    },
    // RecurrentGemma: Griffin's recurrent blocks and local attention by `block_types`. Its
    // saved configs restate `final_w_init_variance_scale` (initialization only) and the
    // `partial_rotary_factor` its rotary reads from `rope_parameters`.
    Family {
        renames: &[("sliding_window", "attention_window_size")],
        ..own(
            "recurrent_gemma",
            "RecurrentGemma",
            recurrent_gemma::load,
            None,
            &[
                TRAINING,
                &["w_init_variance_scale", "final_w_init_variance_scale"],
            ],
        )
    },
    // Falcon-H1: attention and Mamba2 side by side in every layer, μP multipliers throughout.
    // `num_logits_to_keep` only trims generation's logits, `mamba_chunk_size` only groups the
    // prompt's scan.
    own(
        "falcon_h1",
        "Falcon-H1",
        falcon_h1::load,
        None,
        &[TRAINING, &["num_logits_to_keep", "mamba_chunk_size"]],
    ),
    // xLSTM: mLSTM layers with SwiGLU MLPs. Its kernels, their modes and chunks, the dtypes they
    // compute and keep states in, `add_out_norm` (transformers always norms the output) and the
    // size of inference chunks do not change the forward pass.
    Family {
        renames: &[],
        ..own(
            "xlstm",
            "xLSTM",
            xlstm::load,
            None,
            &[
                TRAINING,
                &[
                    "norm_reduction_force_float32",
                    "add_out_norm",
                    "chunkwise_kernel",
                    "sequence_kernel",
                    "step_kernel",
                    "mode",
                    "chunk_size",
                    "return_last_states",
                    "autocast_kernel_dtype",
                    "inference_state_dtype",
                    "max_inference_chunksize",
                ],
            ],
        )
    },
    // Zamba: multi-head Mamba layers, some running one shared attention-and-MLP block first. The
    // kernels' switches, the parallel scan's, Δ's initial range and `num_logits_to_keep` do not
    // change the forward pass.
    Family {
        renames: &[
            ("layer_types", "layers_block_type"),
            ("head_dim", "attention_head_dim"),
        ],
        ..own(
            "zamba",
            "Zamba",
            zamba::load_zamba,
            None,
            &[
                TRAINING,
                &[
                    "use_mamba_kernels",
                    "use_associative_scan",
                    "time_step_min",
                    "time_step_max",
                    "time_step_floor",
                    "num_logits_to_keep",
                ],
            ],
        )
    },
    // Zamba2: Mamba2 layers, some running a shared attention-and-MLP block first. The kernels'
    // switches, `chunk_size` (it groups the prompt's scan), Δ's initial range and
    // `num_logits_to_keep` do not change the forward pass.
    Family {
        renames: &[
            ("layer_types", "layers_block_type"),
            ("head_dim", "attention_head_dim"),
        ],
        ..own(
            "zamba2",
            "Zamba2",
            zamba::load_zamba2,
            None,
            &[
                TRAINING,
                &[
                    "use_mamba_kernels",
                    "use_mem_eff_path",
                    "chunk_size",
                    "time_step_max",
                    "time_step_floor",
                    "num_logits_to_keep",
                ],
            ],
        )
    },
    // Kimi Linear: Kimi Delta Attention and latent attention without positions. The class never
    // reads the RoPE keys (it deletes them), `head_dim` (a legacy of its first code),
    // `moe_layer_freq`, `use_grouped_topk` (it always groups, trivially with one group) or
    // `num_nextn_predict_layers` (it builds no MTP module); `mla_use_nope` and the router's
    // activation restate what it always does.
    Family {
        renames: &[
            ("model_max_length", "max_position_embeddings"),
            ("moe_renormalize", "norm_topk_prob"),
            ("num_expert_group", "n_group"),
            ("num_experts", "n_routed_experts"),
            ("num_local_experts", "n_routed_experts"),
            ("num_experts_per_token", "num_experts_per_tok"),
            ("num_shared_experts", "n_shared_experts"),
        ],
        echoes: &[
            ("mla_use_nope", Echo::OneOf(&["true"])),
            ("moe_router_activation_func", Echo::OneOf(&["\"sigmoid\""])),
        ],
        ..own(
            "kimi_linear",
            "Kimi Linear",
            deepseek::load,
            None,
            &[
                TRAINING,
                DEEPSEEK_UNREAD,
                &[
                    "rope_theta",
                    "rope_scaling",
                    "rope_parameters",
                    "rope_interleave",
                    "use_grouped_topk",
                    "num_nextn_predict_layers",
                    "topk_method",
                ],
            ],
        )
    },
    // Sarvam-105B: DeepSeek-V3's model. Its class drops `q_head_dim` (derived) and a legacy
    // `head_dim`.
    Family {
        renames: &[
            ("num_local_experts", "n_routed_experts"),
            ("num_mtp_layers", "num_nextn_predict_layers"),
            ("num_experts", "n_routed_experts"),
            ("num_shared_experts", "n_shared_experts"),
        ],
        ..own(
            "sarvam_mla",
            "Sarvam-MLA",
            deepseek::load,
            None,
            &[TRAINING, DEEPSEEK_UNREAD, &["topk_method", "q_head_dim"]],
        )
    },
    // NanoChat: every norm an RMSNorm without a weight (one right after the embedding too), a
    // weightless RMS norm on each rotated Q and K head, a plain ReLU² MLP, RoPE that rotates
    // backwards (its rotate_half is (x₂, −x₁)), and Gemma 2's final logit softcap.
    llama(
        "nanochat",
        "NanoChat",
        LlamaLike {
            mlp_bias: Bias::Never,
            norm: NormKind::PlainRms,
            qk_norm: QkNorm::L2,
            gated: false,
            embed_norm: true,
            reversed_rope: true,
            final_softcap: Some(("final_logit_softcapping", 15.0)),
            layout: Layout::NanoChat,
            ..LlamaLike::llama(Defaults {
                act: "relu2",
                ..d(
                    50304, 768, 8192, 12, 6, None, None, 2048, 1e-6, 10_000.0, false,
                )
            })
        },
        None,
        &[TRAINING],
    ),
    // MiniCPM3: `head_dim` is set to qk_rope_head_dim by the class.
    own(
        "minicpm3",
        "MiniCPM3",
        deepseek::load,
        None,
        &[TRAINING, &["pretraining_tp", "head_dim", "qk_head_dim"]],
    ),
    // A.X-K2: as DeepSeek-V3.2, `layer_types` is "indexed_attention" in every layer whatever it
    // says, and `qk_head_dim` and `head_dim` are derived.
    Family {
        renames: &[("num_local_experts", "n_routed_experts")],
        ..own(
            "axk2",
            "A.X-K2",
            deepseek::load,
            None,
            &[
                TRAINING,
                &[
                    "layer_types",
                    "head_dim",
                    "qk_head_dim",
                    "output_router_logits",
                    "rope_interleave",
                ],
            ],
        )
    },
    // DeepSeek-V4: `num_key_value_heads`, `n_shared_experts` and `norm_topk_prob` change
    // nothing (one K=V head, one shared expert, weights always renormalized).
    Family {
        renames: &[
            ("num_local_experts", "n_routed_experts"),
            ("intermediate_size", "moe_intermediate_size"),
        ],
        ..own(
            "deepseek_v4",
            "DeepSeek-V4",
            deepseek_v4::load,
            None,
            &[
                TRAINING,
                &[
                    "output_router_logits",
                    "router_jitter_noise",
                    "router_aux_loss_coef",
                    "num_nextn_predict_layers",
                ],
            ],
        )
    },
    // HY v4: `layer_types` is "indexed_attention" in every layer whatever it says; the class
    // overwrites `num_key_value_heads` with the query heads and `head_dim` with the rotary dims;
    // `learnable_sink_init` only initializes the sinks.
    Family {
        renames: &[("num_local_experts", "n_routed_experts")],
        ..own("hy_v4", "HY v4", deepseek::load, None, HY_V4_UNREAD)
    },
    // HY v4 VL's language model: HY v4's, read inside its wrapper.
    Family {
        renames: &[("num_local_experts", "n_routed_experts")],
        ..inner(own(
            "hy_v4_vl_text",
            "HY v4 VL",
            deepseek::load,
            None,
            HY_V4_UNREAD,
        ))
    },
    Family {
        renames: &[("num_local_experts", "n_routed_experts")],
        ..own(
            "glm_moe_dsa",
            "GLM-5",
            deepseek::load,
            None,
            &[
                TRAINING,
                DEEPSEEK_UNREAD,
                &[
                    "topk_method",
                    "layer_types",
                    "rope_interleave",
                    "mlp_bias",
                    "output_router_logits",
                    "qk_head_dim",
                ],
            ],
        )
    },
    Family {
        renames: &[("num_local_experts", "n_routed_experts")],
        ..inner(own(
            "glm4v_moe_text",
            "GLM-4.5V",
            deepseek::load,
            None,
            &[
                TRAINING,
                MROPE_SECTIONS,
                &["output_router_logits", "router_aux_loss_coef"],
            ],
        ))
    },
    Family {
        renames: &[
            ("num_local_experts", "n_routed_experts"),
            ("num_mtp_layers", "num_nextn_predict_layers"),
        ],
        ..own(
            "glm4_moe",
            "GLM-4.5",
            deepseek::load,
            None,
            &[TRAINING, &["output_router_logits"]],
        )
    },
    // A.X-K1 (SK Telecom): DeepSeek-V3 with a norm on each MoE block's output.
    Family {
        renames: &[("num_local_experts", "n_routed_experts")],
        ..own(
            "axk1",
            "A.X-K1",
            deepseek::load,
            None,
            &[
                TRAINING,
                DEEPSEEK_UNREAD,
                &["pretraining_tp", "output_router_logits", "topk_method"],
            ],
        )
    },
    // GLM-4.7-Flash. `mlp_layer_types` names the dense layers: the class never reads
    // `first_k_dense_replace`, nor DeepSeek's routing keys its checkpoints carry.
    Family {
        renames: &[("num_local_experts", "n_routed_experts")],
        ..own(
            "glm4_moe_lite",
            "GLM-4.7-Flash",
            deepseek::load,
            None,
            &[
                TRAINING,
                DEEPSEEK_UNREAD,
                &[
                    "pretraining_tp",
                    "output_router_logits",
                    "first_k_dense_replace",
                    "topk_method",
                ],
            ],
        )
    },
    // Sarvam-MoE: GLM-4.5's model under its own defaults and key names.
    Family {
        renames: SARVAM_NAMES,
        ..own(
            "sarvam_moe",
            "Sarvam-MoE",
            deepseek::load,
            None,
            &[TRAINING, &["output_router_logits"]],
        )
    },
    // MiniCPM5-MoE: GLM-4.5's config class without its QK-norm flag or MTP count.
    Family {
        renames: &[("num_local_experts", "n_routed_experts")],
        ..own(
            "minicpm5_moe",
            "MiniCPM5-MoE",
            deepseek::load,
            None,
            &[TRAINING, &["output_router_logits"]],
        )
    },
    // Param2: GLM-4.5's model under Param2's defaults and Sarvam's key names.
    Family {
        renames: SARVAM_NAMES,
        ..own(
            "param2moe",
            "Param2",
            deepseek::load,
            None,
            &[TRAINING, &["output_router_logits"]],
        )
    },
    own(
        "youtu",
        "Youtu",
        deepseek::load,
        None,
        &[TRAINING, &["embedding_initializer_range"], DEEPSEEK_UNREAD],
    ),
    Family {
        renames: &[("num_local_experts", "n_routed_experts")],
        ..own(
            "solar_open",
            "Solar Open",
            deepseek::load,
            None,
            // The class deletes GLM-4.5's dense width, dense layers, QK-norm flag and MTP count;
            // given anyway, they are attributes its layers never read.
            &[
                TRAINING,
                &[
                    "output_router_logits",
                    "router_aux_loss_coef",
                    "intermediate_size",
                    "first_k_dense_replace",
                    "use_qk_norm",
                    "num_mtp_layers",
                ],
            ],
        )
    },
    Family {
        renames: &[("num_local_experts", "n_routed_experts")],
        ..own(
            "dots1",
            "dots.llm1",
            deepseek::load,
            None,
            &[TRAINING, &["output_router_logits"]],
        )
    },
    // `experts_per_token` and `initial_context_length` come from OpenAI's own format; GptOssConfig
    // reads `num_experts_per_tok` and the RoPE dict.
    Family {
        renames: &[("num_experts", "num_local_experts")],
        ..own(
            "gpt_oss",
            "gpt-oss",
            gpt_oss::load,
            None,
            &[
                TRAINING,
                &[
                    "router_aux_loss_coef",
                    "output_router_logits",
                    "experts_per_token",
                    "initial_context_length",
                ],
            ],
        )
    },
    own(
        "llama4_text",
        "Llama 4",
        llama4::load,
        None,
        &[
            TRAINING,
            &[
                "router_aux_loss_coef",
                "output_router_logits",
                "router_jitter_noise",
            ],
        ],
    ),
    Family {
        text: Some("llama4_text"),
        parts: &[
            tower("vision encoder", "vision_model.", towers::llama4_vision),
            tower(
                "multimodal projector",
                "multi_modal_projector.",
                towers::llama4_projector,
            ),
        ],
        image: Some(towers::llama4_image),
        // The language model owns the head: the wrapper's own tie flag changes nothing.
        ..own(
            "llama4",
            "Llama 4",
            llama4::load,
            None,
            &[&[
                "vision_config",
                "boi_token_index",
                "eoi_token_index",
                "image_token_index",
                // The same ids under their attribute_map names.
                "boi_token_id",
                "eoi_token_id",
                "image_token_id",
                "tie_word_embeddings",
            ]],
        )
    },
];

/// Apertus's RoPE when its config has no RoPE dict: llama3, ×8 from 8192 positions.
fn cwm_rope() -> crate::spec::RopeScaling {
    crate::spec::RopeScaling::Llama3 {
        factor: 16.0,
        low_freq_factor: 1.0,
        high_freq_factor: 4.0,
        original: 8192,
    }
}

/// Ministral 3's YaRN without a RoPE dict: ×16 from 16,384 positions.
fn ministral3_rope() -> crate::spec::RopeScaling {
    crate::spec::RopeScaling::Yarn {
        factor: 16.0,
        original: 16384,
        beta_fast: 32.0,
        beta_slow: 1.0,
        attention_factor: 1.0,
        truncate: true,
    }
}

fn apertus_rope() -> crate::spec::RopeScaling {
    crate::spec::RopeScaling::Llama3 {
        factor: 8.0,
        low_freq_factor: 1.0,
        high_freq_factor: 4.0,
        original: 8192,
    }
}

/// Keys of Qwen3.5's configs that leave the language model's forward pass unchanged: the
/// multi-token-prediction head transformers does not load and the dtype the DeltaNet state is
/// kept in.
const QWEN3_5_INERT: &[&str] = &[
    "mtp_num_hidden_layers",
    "mtp_use_dedicated_embeddings",
    "mamba_ssm_dtype",
];

/// The multimodal RoPE's sections (Qwen2-VL to Qwen3.5), in either RoPE dict: they rotate text
/// alike whatever they are, a text token's temporal, height and width positions being equal.
const MROPE_SECTIONS: &[&str] = &[
    "rope_parameters.mrope_section",
    "rope_parameters.mrope_interleaved",
    "rope_scaling.mrope_section",
    "rope_scaling.mrope_interleaved",
];

/// Gemma 4 unified's parts beside its language model: embedders that take pixels and audio
/// features in place of towers, each counted, and not listed where the wrapper's config has
/// none.
const GEMMA4_UNIFIED_PARTS: &[Part] = &[
    tower(
        "patch embedder",
        "model.vision_embedder.",
        towers::gemma4_unified_patches,
    ),
    tower(
        "vision embedder",
        "model.embed_vision.",
        towers::gemma4_unified_embed_vision,
    ),
    tower(
        "audio embedder",
        "model.embed_audio.",
        towers::gemma4_unified_embed_audio,
    ),
];

/// Gemma 4's towers: each counted, and not listed where the wrapper's config has none.
const GEMMA4_PARTS: &[Part] = &[
    tower("vision tower", "model.vision_tower.", towers::gemma4_vision),
    tower(
        "vision embedder",
        "model.embed_vision.",
        towers::gemma4_embed_vision,
    ),
    tower("audio tower", "model.audio_tower.", towers::gemma4_audio),
    tower(
        "audio embedder",
        "model.embed_audio.",
        towers::gemma4_embed_audio,
    ),
];

/// Gemma 4's wrappers' keys: their towers' configs and the tokens that mark images and audio.
const GEMMA4_WRAPPER: &[&[&str]] = &[&[
    "initializer_range",
    "vision_config",
    "audio_config",
    "image_token_id",
    "video_token_id",
    "audio_token_id",
    "boi_token_id",
    "eoi_token_id",
    "boa_token_id",
    "eoa_token_index",
]];

/// GLM-4.1V's and GLM-4.5V's wrapper keys beside their towers.
const GLM4V_WRAPPER: &[&[&str]] = &[&[
    "initializer_range",
    "vision_config",
    "image_token_id",
    "video_token_id",
    "image_start_token_id",
    "image_end_token_id",
    "video_start_token_id",
    "video_end_token_id",
]];

/// ERNIE 4.5's layers at its class's defaults: one `use_bias` flag for every projection.
const ERNIE4_5: LlamaLike = LlamaLike {
    qkv_bias: Bias::Key("use_bias", false),
    o_bias: Bias::Key("use_bias", false),
    mlp_bias: Bias::Key("use_bias", false),
    ..LlamaLike::llama(d(
        103_424,
        1024,
        3072,
        18,
        16,
        Some(2),
        Some(128),
        131_072,
        1e-5,
        500_000.0,
        true,
    ))
};

/// The Qwen Omni thinkers' keys beside their language model: the towers' configs, the
/// placeholder ids and the audio's positions per second.
const OMNI_THINKER: &[&str] = &[
    "initializer_range",
    "vision_config",
    "audio_config",
    "image_token_id",
    "video_token_id",
    "audio_token_id",
    "audio_start_token_id",
    "user_token_id",
    "position_id_per_seconds",
];

/// HY v4's keys its class overwrites or reads only in training.
const HY_V4_UNREAD: &[&[&str]] = &[
    TRAINING,
    &[
        "layer_types",
        "num_key_value_heads",
        "head_dim",
        "qk_head_dim",
        "learnable_sink_init",
        "output_router_logits",
    ],
];

/// HY v4 VL's keys beside its tower and its language model.
const HY_V4_VL_WRAPPER: &[&[&str]] = &[&[
    "initializer_range",
    "vision_config",
    "image_token_id",
    "video_token_id",
]];

/// HunyuanOCR's keys beside its tower: the image's placeholder and framing ids.
const HUNYUAN_VL_WRAPPER: &[&[&str]] = &[&[
    "initializer_range",
    "vision_config",
    "image_token_id",
    "im_start_id",
    "im_end_id",
    "im_newline_id",
]];

/// The Qwen vision-language wrappers' keys beside their towers (Qwen2-VL to Qwen3.5).
const QWEN_VL_WRAPPER: &[&[&str]] = &[&[
    "initializer_range",
    "vision_config",
    "image_token_id",
    "video_token_id",
    "vision_start_token_id",
    "vision_end_token_id",
]];

/// LFM2's and LFM2-MoE's shared reader: short convolutions among attention layers with per-head
/// QK norms, no biases, the layer types as the key of indices (`full_attn_idxs`) allows, with the
/// class defaults' hidden and MLP widths.
const fn lfm2_like(indices: Option<&'static str>, hidden: u64, intermediate: u64) -> LlamaLike {
    LlamaLike {
        hybrid: Some(Hybrid {
            mixer: HybridMixer::ShortConv {
                kernel: ("conv_L_cache", 3),
                bias: ("conv_bias", false),
            },
            layers: HybridLayers::ConvTypes {
                types: "layer_types",
                indices,
                pattern: None,
            },
            recurrent_place: None,
        }),
        qk_norm: QkNorm::PerHead,
        qkv_bias: Bias::Never,
        o_bias: Bias::Never,
        mlp_bias: Bias::Never,
        eps_key: Some("norm_eps"),
        layout: Layout::Lfm2,
        ..LlamaLike::llama(d(
            65_536,
            hidden,
            intermediate,
            32,
            32,
            Some(8),
            None,
            128_000,
            1e-5,
            1_000_000.0,
            true,
        ))
    }
}

/// Qwen4-Exp's language model as the shared reader sees it: Qwen3.5-MoE's (experts renormalized
/// by `norm_topk_prob`, every head rotated by default), its attention layers `indexed_attention`.
/// `qwen4_exp::load` adds the gated streams and the indexer.
pub(super) const QWEN4_EXP: LlamaLike = LlamaLike {
    partial: 1.0,
    hybrid: Some(Hybrid {
        mixer: HybridMixer::DeltaNet(DeltaStore::Separate, DeltaHeads::Given(16, 32)),
        layers: HybridLayers::Indexed,
        recurrent_place: None,
    }),
    ..qwen3_5_moe_like(512, 10, Renormalize::Key(true))
};

/// Qwen2-VL's and Qwen2.5-VL's language model: Qwen2's (biases on q, k and v, sliding
/// windows as Qwen2 reads them) at the classes' defaults, which are the same.
const fn qwen2_vl_like() -> LlamaLike {
    LlamaLike {
        qkv_bias: Bias::Always,
        o_bias: Bias::Never,
        mlp_bias: Bias::Never,
        windows: Windows::Qwen,
        rope_types: RopeTypes::Mrope,
        ..LlamaLike::llama(Defaults {
            head_dim: HeadDim::Divided,
            ..d(
                152_064,
                8192,
                29568,
                80,
                64,
                Some(8),
                None,
                32768,
                1e-5,
                1_000_000.0,
                false,
            )
        })
    }
}

/// Qwen3.5-MoE's language model: experts (`count` and `top_k` by default, renormalized so)
/// with a gated shared expert in every layer, and Qwen3.5's class defaults.
const fn qwen3_5_moe_like(count: u64, top_k: u64, renormalize: Renormalize) -> LlamaLike {
    LlamaLike {
        experts: Experts::Routed(Routed {
            count: ("num_experts", count),
            top_k,
            width: Some(("moe_intermediate_size", 512)),
            renormalize,
            layers: MoeLayers::All,
            zero_is_dense: false,
            shared: Some(SharedMlp {
                gate: true,
                ..SharedMlp::of("shared_expert_intermediate_size", 512)
            }),
            ..Routed::MIXTRAL
        }),
        ..qwen3_next_like(
            DeltaStore::Separate,
            Layout::Qwen35,
            d(
                248_320,
                2048,
                5632,
                40,
                16,
                Some(2),
                Some(256),
                32768,
                1e-6,
                10_000.0,
                false,
            ),
        )
    }
}

/// Qwen3-Next's and Qwen3.5's shared reader: Gated DeltaNet layers among gated attention ones,
/// with the class defaults given.
const fn qwen3_next_like(store: DeltaStore, layout: Layout, defaults: Defaults) -> LlamaLike {
    LlamaLike {
        mlp_bias: Bias::Never,
        qk_norm: QkNorm::PerHead,
        one_plus: true,
        partial: 0.25,
        out_gate: Some(OutGate {
            softplus: false,
            per_head: false,
            bias: false,
            stored: GateStore::InQuery,
        }),
        hybrid: Some(Hybrid {
            mixer: HybridMixer::DeltaNet(store, DeltaHeads::Given(16, 32)),
            layers: HybridLayers::Interval,
            recurrent_place: None,
        }),
        layout,
        ..LlamaLike::llama(defaults)
    }
}

/// Defaults of a config class: sizes, eps, RoPE base, tying; SiLU.
#[allow(clippy::too_many_arguments)]
pub(super) const fn d(
    vocab: u64,
    hidden: u64,
    intermediate: u64,
    layers: u64,
    heads: u64,
    kv_heads: Option<u64>,
    head_dim: Option<u64>,
    context: u64,
    eps: f64,
    theta: f64,
    tied: bool,
) -> Defaults {
    let head_dim = match head_dim {
        Some(h) => HeadDim::Given(h),
        None => HeadDim::Divide,
    };
    Defaults {
        vocab,
        hidden,
        intermediate,
        layers,
        heads,
        kv_heads,
        head_dim,
        context,
        eps,
        theta,
        tied,
        act: "silu",
    }
}

/// The parts LLaVA and its variants share: CLIP's tower, the two-layer projector, LLaVA-NeXT's
/// learned row separator.
const LLAVA_TOWER: Part = tower("vision tower", "vision_tower.", towers::llava_vision);
const LLAVA_PROJECTOR: Part = tower(
    "multimodal projector",
    "multi_modal_projector.",
    towers::llava_projector,
);
const LLAVA_NEXT_NEWLINE: Part =
    tower("image newline", "image_newline", towers::llava_next_newline);

/// LLaVA's keys beside its language model's (LLaVA-NeXT's too).
const LLAVA_INERT: &[&str] = &[
    "vision_config",
    "image_token_index",
    "image_token_id",
    "image_seq_length",
    "projector_hidden_act",
    "vision_feature_select_strategy",
    "vision_feature_layer",
    "multimodal_projector_bias",
];

/// Inkling 2's wrapper row around its language model `text`.
const fn inkling2_wrapper(
    model_type: &'static str,
    text: &'static str,
    name: &'static str,
    parts: &'static [Part],
) -> Family {
    Family {
        text: Some(text),
        tie: Tie::Text,
        wrap: HfWrap::None,
        parts,
        ..wrapper(model_type, name, &[&["vision_config", "image_token_id"]])
    }
}

const INKLING2_PARTS: &[Part] = &[
    tower(
        "vision tower",
        "model.visual.backbone.",
        towers::inkling2_vision,
    ),
    tower(
        "multimodal projector",
        "model.visual.",
        towers::inkling2_projector,
    ),
];

const INKLING2_LOOP_PARTS: &[Part] = &[
    INKLING2_PARTS[0],
    tower(
        "multimodal projector",
        "model.visual.",
        towers::inkling2_loop_projector,
    ),
];

/// GLM-4.1V's language model.
const GLM4V_TEXT: LlamaLike = LlamaLike {
    qkv_bias: Bias::Always,
    o_bias: Bias::Never,
    mlp_bias: Bias::Never,
    place: NormPlace::Sandwich,
    fused_gate_up: true,
    interleaved_rope: true,
    layout: Layout::Glm4,
    ..LlamaLike::llama(Defaults {
        head_dim: HeadDim::Divided,
        ..d(
            151_552,
            4096,
            13696,
            40,
            32,
            Some(2),
            None,
            32768,
            1e-5,
            10_000.0,
            false,
        )
    })
};

/// Idefics3's row, and SmolVLM's, its twin under another name.
const fn idefics3_like(model_type: &'static str, name: &'static str) -> Family {
    Family {
        text: Some("llama"),
        tie: Tie::Wrapper(false),
        wrap: HfWrap::Module {
            module: "text_model",
            head: false,
        },
        parts: IDEFICS3_PARTS,
        image: Some(towers::idefics3_image),
        ..wrapper(model_type, name, IDEFICS3_INERT)
    }
}

/// A wrapper whose config may hold its language model's keys at the top level (Qwen2-VL's
/// published form) or in `text_config`: `(model_type, name, text type)`, its language model's
/// tensors under `model.` and the head beside them.
const fn flat_wrapper(
    (model_type, name, text): (&'static str, &'static str, &'static str),
    tie: Tie,
    parts: &'static [Part],
    inert: &'static [&'static [&'static str]],
) -> Family {
    Family {
        text: Some(text),
        text_at_top: true,
        tie,
        wrap: HfWrap::None,
        parts,
        ..wrapper(model_type, name, inert)
    }
}

const fn minicpmv_like(model_type: &'static str, name: &'static str, tied: bool) -> Family {
    Family {
        text: Some("qwen3_5_text"),
        tie: Tie::Wrapper(tied),
        wrap: HfWrap::Nested,
        parts: MINICPMV_PARTS,
        ..wrapper(model_type, name, MINICPMV_INERT)
    }
}

const fn blip_like(model_type: &'static str, name: &'static str, parts: &'static [Part]) -> Family {
    Family {
        text: Some("opt"),
        tie: Tie::Text,
        parts,
        ..wrapper(
            model_type,
            name,
            &[&[
                "vision_config",
                "qformer_config",
                "initializer_range",
                "initializer_factor",
                "image_token_index",
                "image_token_id",
                "video_token_index",
                "video_token_id",
                // Sizes of BLIP-2's image-text matching head, which this class does not build.
                "image_text_hidden_size",
                // Derived by the class from its language model's type.
                "use_decoder_only_language_model",
            ]],
        )
    }
}

/// BLIP-2's parts besides its language model.
const BLIP_2_PARTS: &[Part] = &[
    tower("vision tower", "vision_model.", towers::blip_2_vision),
    tower("query tokens", "query_tokens", towers::blip_query_tokens),
    tower("Q-Former", "qformer.", towers::blip_2_qformer),
    tower(
        "language projection",
        "language_projection.",
        towers::blip_language_projection,
    ),
];

/// InstructBLIP's parts besides its language model.
const INSTRUCTBLIP_PARTS: &[Part] = &[
    tower("vision tower", "vision_model.", towers::instructblip_vision),
    tower("query tokens", "query_tokens", towers::blip_query_tokens),
    tower("Q-Former", "qformer.", towers::instructblip_qformer),
    tower(
        "language projection",
        "language_projection.",
        towers::blip_language_projection,
    ),
];

/// InstructBLIP-Video's parts besides its language model.
const INSTRUCTBLIP_VIDEO_PARTS: &[Part] = &[
    tower(
        "vision tower",
        "vision_model.",
        towers::instructblipvideo_vision,
    ),
    tower("query tokens", "query_tokens", towers::blip_query_tokens),
    tower("Q-Former", "qformer.", towers::instructblipvideo_qformer),
    tower(
        "language projection",
        "language_projection.",
        towers::blip_language_projection,
    ),
];

/// MiniCPM-V's parts besides its language model.
const MINICPMV_PARTS: &[Part] = &[
    tower(
        "vision tower",
        "model.vision_tower.",
        towers::minicpmv_vision,
    ),
    tower("merger", "model.merger.", towers::minicpmv_merger),
];

/// MiniCPM-V's keys beside its language model and towers: token ids, the processor's image
/// size and downsampling mode, and where the window merger runs (which changes no tensor).
const MINICPMV_INERT: &[&[&str]] = &[&[
    "vision_config",
    "initializer_range",
    "image_token_id",
    "video_token_id",
    "image_size",
    "patch_size",
    "downsample_mode",
    "merge_kernel_size",
    "insert_layer_id",
    "drop_vision_last_layer",
    "image_start_id",
    "image_end_id",
    "slice_start_id",
    "slice_end_id",
    "newline_id",
]];

/// Idefics3's and SmolVLM's parts besides their language model.
const IDEFICS3_PARTS: &[Part] = &[
    tower(
        "vision encoder",
        "model.vision_model.",
        towers::idefics3_vision,
    ),
    tower("connector", "model.connector.", towers::idefics3_connector),
];

/// Idefics3's and SmolVLM's keys beside their language model's.
const IDEFICS3_INERT: &[&[&str]] = &[&[
    "vision_config",
    "image_token_id",
    "scale_factor",
    "use_cache",
    "pad_token_id",
    // SmolVLM's saved form of its pad token id.
    "_pad_token_id",
    // SmolVLM2's published configs repeat the text model's vocabulary at the top, which
    // transformers builds nothing from (the head and table are text_config's).
    "vocab_size",
]];

const fn llama(
    model_type: &'static str,
    name: &'static str,
    f: LlamaLike,
    gguf: Option<&'static str>,
    inert: &'static [&'static [&'static str]],
) -> Family {
    base(model_type, name, Reader::Llama(f), gguf, inert)
}

/// A language model's row read only inside its wrapper (`Family::standalone`).
const fn inner(row: Family) -> Family {
    Family {
        standalone: false,
        ..row
    }
}

/// A multimodal wrapper's row: it is read through its `text` row, never by a loader of its own.
const fn wrapper(
    model_type: &'static str,
    name: &'static str,
    inert: &'static [&'static [&'static str]],
) -> Family {
    own(model_type, name, read_through_text, None, inert)
}

fn read_through_text(cfg: &Config, model_type: &str, _: &str, _: &str) -> Result<Spec> {
    Err(cfg.err(
        "model_type",
        format!("`{model_type}` is a wrapper: anatomy reads its language model from text_config"),
    ))
}

const fn own(
    model_type: &'static str,
    name: &'static str,
    load: Loader,
    gguf: Option<&'static str>,
    inert: &'static [&'static [&'static str]],
) -> Family {
    base(model_type, name, Reader::Own(load), gguf, inert)
}

const fn base(
    model_type: &'static str,
    name: &'static str,
    read: Reader,
    gguf: Option<&'static str>,
    inert: &'static [&'static [&'static str]],
) -> Family {
    Family {
        model_type,
        aliases: &[],
        name,
        read,
        gguf,
        inert,
        text: None,
        text_aliases: &[],
        text_at_top: false,
        parts: &[],
        tie: Tie::Text,
        renames: &[],
        echoes: &[],
        wrap: HfWrap::Prefix("language_model"),
        text_read: None,
        standalone: true,
        image: None,
        head_scale: false,
    }
}

/// The row of `model_type` (or of a family that reads it as an alias).
pub fn find(model_type: &str) -> Option<&'static Family> {
    FAMILIES
        .iter()
        .find(|f| f.model_type == model_type || f.aliases.contains(&model_type))
}
