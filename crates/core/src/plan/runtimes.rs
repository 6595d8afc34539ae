//! Each runtime's documented rules for what it allocates: the KV cache's cells per layer kind,
//! the type it caches in, its working buffers and its process, each with its source.

use super::formats::KvType;
use crate::spec::{AttnSpan, Stack};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Runtime {
    LlamaCpp,
    Vllm,
    Transformers,
    Anatomy,
}

/// A runtime's settings that change what it allocates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// llama.cpp's n_ubatch: the tokens of one compute graph.
    pub ubatch: u64,
    /// llama.cpp: flash attention (no score matrix in the compute buffer).
    pub flash_attn: bool,
    /// llama.cpp: sliding-window layers keep the whole context (`--swa-full`).
    pub swa_full: bool,
    /// vLLM's gpu_memory_utilization.
    pub memory_fraction: f64,
    /// vLLM's max_num_batched_tokens: the tokens of its profiling forward pass.
    pub batched_tokens: u64,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            ubatch: 512,
            flash_attn: false,
            swa_full: false,
            memory_fraction: 0.9,
            batched_tokens: 8192,
        }
    }
}

/// vLLM's KV cache block, in tokens.
pub const VLLM_BLOCK: u64 = 16;
/// llama.cpp pads its context, and its sliding-window cache, to 256 cells.
pub const LLAMA_PAD: u64 = 256;

const RUNTIMES: &[(Runtime, &str, &str)] = &[
    (Runtime::LlamaCpp, "llama.cpp", "llama.cpp src/llama-context.cpp (n_ctx padded to 256; worst-case graph of n_ubatch tokens with as many outputs), src/llama-kv-cache-iswa.cpp (sliding cache: n_swa + n_ubatch cells, padded to 256, unless swa_full), src/llama-memory-recurrent.cpp (f32 states), as vendored by llama-cpp-python 0.3.36"),
    (Runtime::Vllm, "vLLM", "docs.vllm.ai: gpu_memory_utilization 0.9 of the GPU for weights, activations and KV cache; KV blocks of 16 tokens; a sliding-window layer keeps the blocks of its window; activations from a profiling pass of max_num_batched_tokens"),
    (Runtime::Transformers, "transformers", "transformers cache_utils.py (DynamicCache: a full layer keeps every token, DynamicSlidingWindowLayer the last sliding_window − 1, LinearAttentionLayer its convolution and recurrent states), in the model's dtype"),
    (Runtime::Anatomy, "anatomy", "anatomy-exec: weights as stored and memory-mapped (or f32 with --dtype f32), an f32 KV cache holding every position of every attention layer (a window masks, it does not evict), f32 recurrent states, the prompt's activations in one pass"),
];

impl Runtime {
    fn row(self) -> &'static (Runtime, &'static str, &'static str) {
        RUNTIMES
            .iter()
            .find(|r| r.0 == self)
            .expect("every runtime has a row")
    }

    pub fn name(self) -> &'static str {
        self.row().1
    }

    pub fn source(self) -> &'static str {
        self.row().2
    }

    pub fn parse(s: &str) -> Option<Runtime> {
        let s = s.to_ascii_lowercase().replace(['.', '-', '_'], "");
        RUNTIMES
            .iter()
            .find(|r| r.1.to_ascii_lowercase().replace('.', "") == s)
            .map(|r| r.0)
    }

    pub fn names() -> String {
        RUNTIMES.iter().map(|r| r.1).collect::<Vec<_>>().join(", ")
    }

    /// The share of the device's memory the runtime may use: vLLM's gpu_memory_utilization,
    /// all of it for the others.
    pub fn memory_share(self, s: &Settings) -> f64 {
        match self {
            Runtime::Vllm => s.memory_fraction,
            Runtime::LlamaCpp | Runtime::Transformers | Runtime::Anatomy => 1.0,
        }
    }

    /// The cache type unless one is asked for: llama.cpp's f16, the model's 16 bits for vLLM and
    /// transformers (`float` for a model run in f32), f32 for anatomy.
    pub fn default_kv(self, float: KvType) -> KvType {
        match self {
            Runtime::LlamaCpp => KvType::F16,
            Runtime::Vllm | Runtime::Transformers => float,
            Runtime::Anatomy => KvType::F32,
        }
    }

    /// The cache types the runtime offers.
    pub fn kv_types(self) -> &'static [KvType] {
        match self {
            Runtime::LlamaCpp => &[
                KvType::F32,
                KvType::F16,
                KvType::Bf16,
                KvType::Q8_0,
                KvType::Q4_0,
            ],
            Runtime::Vllm => &[KvType::Bf16, KvType::F16, KvType::Fp8],
            Runtime::Transformers => &[KvType::F32, KvType::Bf16, KvType::F16],
            Runtime::Anatomy => &[KvType::F32],
        }
    }

    /// The type recurrent states are kept in.
    pub fn state_type(self, kv: KvType) -> KvType {
        match self {
            Runtime::LlamaCpp | Runtime::Anatomy => KvType::F32,
            // The model's own float type, whatever the KV cache's.
            Runtime::Vllm | Runtime::Transformers => match kv {
                KvType::F32 => KvType::F32,
                KvType::F16 => KvType::F16,
                KvType::Bf16 | KvType::Fp8 | KvType::Q8_0 | KvType::Q4_0 => KvType::Bf16,
            },
        }
    }

    /// Cells (bytes of text) one sequence's cache holds in a layer of a BLT stack (`None`: the latent
    /// transformer) at `positions`, where the runtime has a rule of its own for BLT.
    /// transformers (modeling_blt.py, `BltModel.forward`) caches the local encoder's and the
    /// local decoder's self-attention in the two halves of an `EncoderDecoderCache`; the patcher
    /// and the latent transformer run without a cache. 5.25 builds those halves from `BltConfig`,
    /// which names no layers, and fails; the halves its forward takes are config-less
    /// `DynamicCache`s, whose lazily made `DynamicLayer`s keep every byte, whatever the window.
    /// anatomy's executor keeps the bytes and runs each pass over all of them. llama.cpp and vLLM
    /// do not run BLT: `None`, each stack kept as its spans say.
    pub fn blt_cells(self, stack: Option<Stack>, positions: u64) -> Option<u64> {
        match (self, stack) {
            (Runtime::Transformers, Some(Stack::Encoder | Stack::Decoder)) => Some(positions),
            (Runtime::Transformers, None | Some(Stack::Patcher)) | (Runtime::Anatomy, _) => Some(0),
            (Runtime::LlamaCpp | Runtime::Vllm, _) => None,
        }
    }

    /// Tokens one sequence's cache holds in a layer of this span at `context`.
    pub fn cells(self, span: AttnSpan, context: u64, s: &Settings) -> u64 {
        let pad = |n: u64, to: u64| n.div_ceil(to).saturating_mul(to);
        match (self, span) {
            (Runtime::LlamaCpp, AttnSpan::Full | AttnSpan::Whole) => pad(context, LLAMA_PAD),
            (Runtime::LlamaCpp, AttnSpan::Sliding(_) | AttnSpan::Chunked(_)) if s.swa_full => {
                pad(context, LLAMA_PAD)
            }
            (Runtime::LlamaCpp, AttnSpan::Sliding(w) | AttnSpan::Chunked(w)) => pad(
                pad(context, LLAMA_PAD).min(w.saturating_add(s.ubatch)),
                LLAMA_PAD,
            ),
            (Runtime::Vllm, AttnSpan::Full | AttnSpan::Whole) => pad(context, VLLM_BLOCK),
            // The blocks the window's last w − 1 keys and the new token may straddle.
            (Runtime::Vllm, AttnSpan::Sliding(w) | AttnSpan::Chunked(w)) => {
                pad(context, VLLM_BLOCK)
                    .min((w.saturating_sub(1).div_ceil(VLLM_BLOCK) + 1) * VLLM_BLOCK)
            }
            (Runtime::Transformers, AttnSpan::Full | AttnSpan::Whole) => context,
            (Runtime::Transformers, AttnSpan::Sliding(w) | AttnSpan::Chunked(w)) => {
                context.min(w.saturating_sub(1))
            }
            (Runtime::Anatomy, _) => context,
        }
    }
}
