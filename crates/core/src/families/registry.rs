//! The registry: one row per `model_type`, holding what is data about a family — its display
//! name, the loader that reads its config (shared by families of one structure), its llama.cpp
//! GGUF architecture, and the keys of its config class known to leave the forward pass unchanged.
//! Mechanisms (norms, attention, FFNs, routing) are code, in the Spec's enums; a family that
//! reuses them is one row here and its fixtures.

use super::{deepseek, gemma, gpt2, gpt_oss, llama, llama4};
use crate::config::Config;
use crate::error::Result;
use crate::spec::Spec;

/// Reads a config of one structure into a Spec: `(config, model_type, family name, model name)`.
pub type Loader = fn(&Config, &str, &str, &str) -> Result<Spec>;

pub struct Family {
    /// The `model_type` this row reads.
    pub model_type: &'static str,
    /// Other `model_type`s read the same way.
    pub aliases: &'static [&'static str],
    /// Display name ("Llama", "Qwen3-MoE").
    pub name: &'static str,
    pub load: Loader,
    /// llama.cpp's `general.architecture` for this family, where anatomy reads its GGUF files.
    pub gguf: Option<&'static str>,
    /// Keys of the config class that do not change the forward pass (dropout, init ranges, token
    /// ids …), besides those of every config (`COMMON`).
    pub inert: &'static [&'static [&'static str]],
    /// A multimodal wrapper: the `model_type` of the language model in its `text_config`.
    pub text: Option<&'static str>,
    /// A wrapper's parts besides its language model: (what, Hugging Face name prefix).
    pub parts: &'static [(&'static str, &'static str)],
    /// Where a wrapper holds the LM head: on the wrapper itself (Gemma 3), when its own
    /// `tie_word_embeddings` decides tying, with this class default; `None` when the language
    /// model is a causal LM with its head (Llama 4) and the text config's flag decides.
    pub wrapper_tied: Option<bool>,
}

impl Family {
    pub fn is_inert(&self, key: &str) -> bool {
        COMMON.contains(&key) || self.inert.iter().any(|list| list.contains(&key))
    }
}

/// Keys every config has (transformers' `PretrainedConfig`): identity, token ids, generation
/// defaults, serialization. None reaches the forward pass of a causal language model.
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
    // How the weights are stored, not what they compute; `verify` reads the storage itself.
    "quantization_config",
    "_attn_implementation_autoset",
    "attn_implementation",
];

const DEEPSEEK_UNREAD: &[&str] = &[
    "aux_loss_alpha",
    "seq_aux",
    "pretraining_tp",
    "ep_size",
    "moe_layer_freq",
    "scoring_func",
    "head_dim",
];

/// Initialization and training-time settings that most config classes carry.
const TRAINING: &[&str] = &["initializer_range", "attention_dropout"];

pub static FAMILIES: &[Family] = &[
    // `is_llama_config` and `rope_interleaved` come from nanotron exports (SmolLM2); LlamaConfig
    // keeps them as attributes and LlamaModel never reads them.
    row(
        "llama",
        "Llama",
        llama::load,
        Some("llama"),
        &[
            TRAINING,
            &["pretraining_tp", "is_llama_config", "rope_interleaved"],
        ],
    ),
    row("mistral", "Mistral", llama::load, None, &[TRAINING]),
    // `use_mrope` belongs to Qwen2-VL's class; Qwen2Model never reads it.
    row(
        "qwen2",
        "Qwen2",
        llama::load,
        Some("qwen2"),
        &[TRAINING, &["use_mrope"]],
    ),
    row("qwen3", "Qwen3", llama::load, Some("qwen3"), &[TRAINING]),
    row(
        "mixtral",
        "Mixtral",
        llama::load,
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
    row(
        "qwen3_moe",
        "Qwen3-MoE",
        llama::load,
        None,
        &[TRAINING, &["router_aux_loss_coef", "output_router_logits"]],
    ),
    row(
        "smollm3",
        "SmolLM3",
        llama::load,
        None,
        &[TRAINING, &["pretraining_tp"]],
    ),
    // Phi-3's projections never have a bias, whatever `attention_bias` says.
    row(
        "phi3",
        "Phi-3",
        llama::load,
        None,
        &[TRAINING, &["resid_pdrop", "embd_pdrop", "attention_bias"]],
    ),
    row("olmo2", "OLMo 2", llama::load, None, &[TRAINING]),
    row(
        "gpt2",
        "GPT-2",
        gpt2::load,
        None,
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
    ),
    // Gemma reads `hidden_activation`; `hidden_act` is a legacy key its modeling never reads.
    row(
        "gemma2",
        "Gemma 2",
        gemma::load,
        Some("gemma2"),
        &[TRAINING, &["hidden_act"]],
    ),
    row(
        "gemma3_text",
        "Gemma 3",
        gemma::load,
        None,
        &[TRAINING, &["hidden_act"]],
    ),
    Family {
        text: Some("gemma3_text"),
        wrapper_tied: Some(true),
        parts: &[
            ("vision tower", "vision_tower."),
            ("multimodal projector", "multi_modal_projector."),
        ],
        ..row(
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
            ]],
        )
    },
    // Keys of DeepSeek's own code that transformers' classes never read: expert parallelism,
    // the MoE layer frequency (first_k_dense_replace decides), the scoring function and, for
    // V3, the top-k method (V3 always scores with a sigmoid and routes by groups); `head_dim`,
    // which both config classes overwrite with qk_rope_head_dim.
    row(
        "deepseek_v2",
        "DeepSeek-V2",
        deepseek::load,
        None,
        &[TRAINING, DEEPSEEK_UNREAD],
    ),
    row(
        "deepseek_v3",
        "DeepSeek-V3",
        deepseek::load,
        None,
        &[TRAINING, DEEPSEEK_UNREAD, &["topk_method"]],
    ),
    row("glm4_moe", "GLM-4.5", deepseek::load, None, &[TRAINING]),
    // `experts_per_token` and `initial_context_length` come from OpenAI's own format; GptOssConfig
    // reads `num_experts_per_tok` and the RoPE dict.
    row(
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
    ),
    row(
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
            ("vision encoder", "vision_model."),
            ("multimodal projector", "multi_modal_projector."),
        ],
        ..row(
            "llama4",
            "Llama 4",
            llama4::load,
            None,
            // The language model owns the head: the wrapper's own tie flag changes nothing.
            &[&[
                "vision_config",
                "boi_token_index",
                "eoi_token_index",
                "image_token_index",
                "tie_word_embeddings",
            ]],
        )
    },
];

const fn row(
    model_type: &'static str,
    name: &'static str,
    load: Loader,
    gguf: Option<&'static str>,
    inert: &'static [&'static [&'static str]],
) -> Family {
    Family {
        model_type,
        aliases: &[],
        name,
        load,
        gguf,
        inert,
        text: None,
        parts: &[],
        wrapper_tied: None,
    }
}

/// The row of `model_type` (or of a family that reads it as an alias).
pub fn find(model_type: &str) -> Option<&'static Family> {
    FAMILIES
        .iter()
        .find(|f| f.model_type == model_type || f.aliases.contains(&model_type))
}
