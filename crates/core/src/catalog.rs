//! The built-in catalog: real config.json files embedded at build time, with their provenance.

/// Date the catalog's first configs were copied from their repositories; later ones give theirs.
pub const SNAPSHOT: &str = "2026-11-29";

/// The model `anatomy show` draws when given none.
pub const DEFAULT: &str = "llama-3.2-3b";

pub struct Entry {
    /// Lowercase stem of the config file (`llama-3.1-70b`).
    pub name: &'static str,
    /// Hugging Face repository the config comes from.
    pub repo: &'static str,
    pub notes: &'static str,
    pub json: &'static str,
    /// When the config was copied.
    pub snapshot: &'static str,
    /// Where no published config was at hand: the transformers config class whose defaults the
    /// file holds (the class documents them as `repo`'s; the real file may differ).
    pub defaults_of: Option<&'static str>,
}

impl Entry {
    /// The config as JSON, read as transformers reads it (`Infinity` allowed).
    pub fn value(&self) -> serde_json::Value {
        crate::families::parse_json(self.name, self.json).expect("catalog configs are valid JSON")
    }

    /// Where the config comes from, in a line.
    pub fn provenance(&self) -> String {
        match self.defaults_of {
            None => format!("{} config.json, snapshot {}", self.repo, self.snapshot),
            Some(class) => format!(
                "transformers 5.24 {class} defaults, documented as {}'s (not its published config.json)",
                self.repo
            ),
        }
    }
}

macro_rules! entry {
    ($name:literal, $repo:literal, $notes:literal) => {
        entry!($name, $repo, $notes, "2026-11-29")
    };
    ($name:literal, $repo:literal, $notes:literal, $snapshot:literal) => {
        Entry {
            name: $name,
            repo: $repo,
            notes: $notes,
            json: include_str!(concat!("../catalog/", $name, ".json")),
            snapshot: $snapshot,
            defaults_of: None,
        }
    };
    (defaults $class:literal, $name:literal, $repo:literal, $notes:literal) => {
        Entry {
            defaults_of: Some($class),
            ..entry!($name, $repo, $notes, "2026-11-30")
        }
    };
}

pub static ENTRIES: &[Entry] = &[
    entry!(
        "llama-3.2-1b",
        "meta-llama/Llama-3.2-1B",
        "tied embeddings, head_dim 64"
    ),
    entry!("llama-3.2-3b", "meta-llama/Llama-3.2-3B", "tied embeddings"),
    entry!(
        "llama-3.1-8b",
        "meta-llama/Llama-3.1-8B",
        "llama3 RoPE scaling"
    ),
    entry!(
        "llama-3.1-70b",
        "meta-llama/Llama-3.1-70B",
        "llama3 RoPE scaling"
    ),
    entry!("smollm2-135m", "HuggingFaceTB/SmolLM2-135M", "llama family"),
    entry!(
        "mistral-7b-v0.1",
        "mistralai/Mistral-7B-v0.1",
        "sliding window 4096"
    ),
    entry!("qwen2.5-0.5b", "Qwen/Qwen2.5-0.5B", "QKV bias"),
    entry!(
        "qwen3-0.6b",
        "Qwen/Qwen3-0.6B",
        "head_dim 128 > hidden/heads; q/k RMSNorm"
    ),
    entry!(
        "deepseek-v3",
        "deepseek-ai/DeepSeek-V3",
        "MLA, 256 routed + 1 shared expert, 3 dense layers, 1 MTP layer"
    ),
    entry!(
        "deepseek-v3.2",
        "deepseek-ai/DeepSeek-V3.2",
        "DeepSeek-V3 with sparse attention: an indexer picks 2048 keys per query",
        "2026-11-30"
    ),
    entry!(
        "glm-4.5-air",
        "zai-org/GLM-4.5-Air",
        "128 routed + 1 shared expert, sigmoid routing"
    ),
    entry!(
        "gpt-oss-20b",
        "openai/gpt-oss-20b",
        "32 experts, top-4, sinks, alternating sliding 128"
    ),
    entry!(
        "llama-4-scout-17b-16e",
        "meta-llama/Llama-4-Scout-17B-16E",
        "multimodal wrapper; 16 experts + shared, chunked attention"
    ),
    entry!(
        "smollm3-3b",
        "HuggingFaceTB/SmolLM3-3B",
        "no RoPE in every 4th layer"
    ),
    entry!(
        "phi-3-mini-4k",
        "microsoft/Phi-3-mini-4k-instruct",
        "fused qkv and gate_up weights"
    ),
    entry!(
        "olmo-2-1124-7b",
        "allenai/OLMo-2-1124-7B",
        "norms after each sublayer, QK-norm"
    ),
    entry!(
        "gemma-2-9b",
        "google/gemma-2-9b",
        "sandwich norms, softcaps, local/global layers"
    ),
    entry!(
        "gemma-3-27b",
        "google/gemma-3-27b-pt",
        "multimodal wrapper; 5 local : 1 global layers"
    ),
    entry!(
        "gpt-2",
        "openai-community/gpt2",
        "LayerNorm, learned positions, GELU, tied"
    ),
    entry!(
        "mixtral-8x7b-v0.1",
        "mistralai/Mixtral-8x7B-v0.1",
        "8 experts, top-2"
    ),
    entry!("qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B", "128 experts, top-8"),
    entry!(
        "gemma-7b",
        "google/gemma-7b",
        "Gemma 1: (1 + w) RMSNorm, GeGLU, scaled embeddings",
        "2026-11-30"
    ),
    entry!(
        "seed-oss-36b",
        "ByteDance-Seed/Seed-OSS-36B-Instruct",
        "QKV bias, 512K context",
        "2026-11-30"
    ),
    entry!(
        "glm-4-9b-0414",
        "THUDM/GLM-4-9B-0414",
        "norms around each sublayer, half-rotated interleaved RoPE",
        "2026-11-30"
    ),
    entry!(
        "starcoder2-15b",
        "bigcode/starcoder2-15b",
        "LayerNorm with bias, plain GELU MLP, sliding window 4096",
        "2026-11-30"
    ),
    entry!(
        "phi-2",
        "microsoft/phi-2",
        "parallel attention and MLP on one LayerNorm, 40% of each head rotated, LM-head bias",
        "2026-11-30"
    ),
    entry!(
        "gpt-neox-20b",
        "EleutherAI/gpt-neox-20b",
        "parallel residual on two LayerNorms, per-head fused QKV, a quarter of each head rotated",
        "2026-11-30"
    ),
    entry!(
        "falcon-7b",
        "tiiuae/falcon-7b",
        "multi-query attention (one K/V head for 71 query heads), parallel attention and MLP",
        "2026-11-30"
    ),
    entry!(
        "olmoe-1b-7b-0924",
        "allenai/OLMoE-1B-7B-0924",
        "64 experts, 8 active, in every layer; Q and K normalized over the whole projection",
        "2026-11-30"
    ),
    entry!(
        "granite-3.0-3b-a800m-instruct",
        "ibm-granite/granite-3.0-3b-a800m-instruct",
        "40 experts, 8 active; μP multipliers on embeddings, residuals, scores and logits",
        "2026-11-30"
    ),
    entry!(
        "command-r-08-2024",
        "CohereForAI/c4ai-command-r-08-2024",
        "parallel attention and MLP on one LayerNorm without a shift, logits scaled by 1/16",
        "2026-11-30"
    ),
    entry!(
        "opt-350m",
        "facebook/opt-350m",
        "a 512-wide token table projected in and out of a 1024-wide stream; LayerNorms after each residual add, no final norm",
        "2026-12-03"
    ),
    entry!(
        "bloom-560m",
        "bigscience/bloom-560m",
        "ALiBi instead of positions, a LayerNorm right after the embedding",
        "2026-11-30"
    ),
    entry!(
        "minimax-m2.7",
        "MiniMaxAI/MiniMax-M2.7",
        "256 experts, 8 chosen by sigmoid scores plus a bias; half of each head rotated",
        "2026-11-30"
    ),
    entry!(
        "mimo-v2-flash",
        "XiaomiMiMo/MiMo-V2-Flash",
        "256 experts, 8 active; five 128-token sliding-window layers with twice the K/V heads and sinks to each full layer; value heads narrower than Q/K",
        "2026-11-30"
    ),
    entry!(
        "nemotron-3-nano-30b-a3b",
        "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
        "23 Mamba2 layers, 23 layers of 128 ReLU² experts (6 active) and 6 attention layers without positions, one sublayer each",
        "2026-11-30"
    ),
    entry!(
        "jamba-v0.1",
        "ai21labs/Jamba-v0.1",
        "Mamba layers with one attention layer in eight (no positions), 16 experts (2 active) in every other layer",
        "2026-11-30"
    ),
    entry!(
        "qwen3-next-80b-a3b",
        "Qwen/Qwen3-Next-80B-A3B-Instruct",
        "Gated DeltaNet in three layers of four, gated attention with a quarter of each head rotated in the fourth; 512 experts (10 active) with a gated shared expert",
        "2026-11-30"
    ),
    entry!(
        "kimi-linear-48b-a3b",
        "moonshotai/Kimi-Linear-48B-A3B-Instruct",
        "Kimi Delta Attention (a decay per key channel) in three layers of four, latent attention without positions in the rest; 256 experts (8 active) with a shared one",
        "2026-11-30"
    ),
    entry!(
        "qwen3.5-35b-a3b",
        "Qwen/Qwen3.5-35B-A3B",
        "Qwen3-Next's Gated DeltaNet and gated attention with the DeltaNet's projections apart; 256 experts (8 active) in every layer; a vision tower beside it (not counted)",
        "2026-11-30"
    ),
    entry!(
        "lfm2-700m",
        "LiquidAI/LFM2-700M",
        "10 short gated convolution layers and 6 attention layers with per-head QK norms, each with a SwiGLU MLP",
        "2026-11-30"
    ),
    entry!(
        "mamba-codestral-7b",
        "mistralai/Mamba-Codestral-7B-v0.1",
        "no attention: 64 Mamba2 layers, each a state of 128 heads × 64 × 128 carried token to token",
        "2026-11-30"
    ),
    entry!(
        "apertus-8b",
        "swiss-ai/Apertus-8B-2509",
        "xIELU, an activation with learned parameters, in a plain MLP; per-head QK-norm",
        "2026-11-30"
    ),
    entry!(
        defaults "GlmMoeDsaConfig",
        "glm-5",
        "zai-org/GLM-5",
        "DeepSeek sparse attention (an indexer picks 2048 keys per query) under latent attention; 256 experts"
    ),
    entry!(
        defaults "MiniCPM3Config",
        "minicpm3-4b",
        "openbmb/MiniCPM3-4B",
        "latent attention in a dense Llama model; μP scales on embeddings, residuals and logits"
    ),
    entry!(
        defaults "Qwen2MoeConfig",
        "qwen1.5-moe-a2.7b",
        "Qwen/Qwen1.5-MoE-A2.7B",
        "60 experts, top-4, and a shared expert behind a sigmoid gate"
    ),
    entry!(
        defaults "StableLmConfig",
        "stablelm-3b-4e1t",
        "stabilityai/stablelm-3b-4e1t",
        "LayerNorm with shifts, a quarter of each head rotated"
    ),
    entry!(
        defaults "GPTJConfig",
        "gpt-j-6b",
        "EleutherAI/gpt-j-6B",
        "parallel attention and MLP, interleaved rotary over 64 dims"
    ),
    entry!(
        defaults "PersimmonConfig",
        "persimmon-8b-base",
        "adept/persimmon-8b-base",
        "per-head QK LayerNorm, ReLU² MLP, half of each head rotated"
    ),
    entry!(
        defaults "InternLM3Config",
        "internlm3-8b-instruct",
        "internlm/internlm3-8b-instruct",
        "GQA with 2 K/V heads for 32 query heads"
    ),
    entry!(
        defaults "ExaoneConfig",
        "exaone-3.0-7.8b-instruct",
        "LGAI-EXAONE/EXAONE-3.0-7.8B-Instruct",
        "Llama under its own tensor names"
    ),
    entry!(
        defaults "IQuestCoderConfig",
        "iquest-coder-v1-40b-instruct",
        "IQuestLab/IQuest-Coder-V1-40B-Instruct",
        "Llama, 80 layers"
    ),
    entry!(
        defaults "Jais2Config",
        "jais-2-8b-chat",
        "inceptionai/Jais-2-8B-Chat",
        "LayerNorm with shifts, ReLU² MLP, biases everywhere"
    ),
    entry!(
        defaults "Gemma4TextConfig",
        "gemma-4-e2b-it",
        "google/gemma-4-e2b-it",
        "per-layer embeddings, global layers of wider heads, V normed, scores unscaled"
    ),
    entry!(
        defaults "LongcatFlashConfig",
        "longcat-flash-chat",
        "meituan-longcat/LongCat-Flash-Chat",
        "two latent-attention sublayers a layer, experts on a shortcut, zero-computation experts"
    ),
    entry!(
        defaults "xLSTMConfig",
        "xlstm-7b",
        "NX-AI/xLSTM-7b",
        "no attention: 32 mLSTM layers, each head a 256 × 512 matrix memory with exponential input gates"
    ),
    entry!(
        defaults "ZambaConfig",
        "zamba-7b-v1",
        "Zyphra/Zamba-7B-v1",
        "76 Mamba layers; one shared attention-and-MLP block runs in 13 of them, reading the stream beside the embeddings"
    ),
    entry!(
        defaults "Zamba2Config",
        "zamba2-2.7b",
        "Zyphra/Zamba2-2.7B",
        "54 Mamba2 layers; a shared transformer block runs in 9 of them, each visit with its own output projection"
    ),
    entry!(
        defaults "RecurrentGemmaConfig",
        "recurrentgemma-2b",
        "google/recurrentgemma-2b",
        "Griffin: RG-LRU recurrent blocks after a temporal convolution, local attention in every third layer"
    ),
    entry!(
        defaults "OlmoHybridConfig",
        "olmo-hybrid-7b",
        "allenai/Olmo-Hybrid-7B",
        "pre-normed Gated DeltaNet in three of every four layers, post-normed full attention in the fourth"
    ),
    entry!(
        defaults "Lfm3Config",
        "lfm3-1.7b",
        "LiquidAI/LFM3-1.7B",
        "short gated convolutions, with sliding-window and full attention in 11 of 24 layers"
    ),
    entry!(
        defaults "GitConfig",
        "git-base",
        "microsoft/git-base",
        "a post-norm BERT decoder over image and text; its CLIP image encoder counted"
    ),
    entry!(
        defaults "MllamaConfig",
        "llama-3.2-11b-vision",
        "meta-llama/Llama-3.2-11B-Vision",
        "8 of 40 layers cross-attend to the image; a tiled vision encoder, counted"
    ),
    entry!(
        "qwen2-vl-7b-instruct",
        "Qwen/Qwen2-VL-7B-Instruct",
        "the language model's keys at the top level; multimodal RoPE (its sections rotate text as plain RoPE); a 675M-parameter vision tower, counted",
        "2026-12-06"
    ),
    entry!(
        "smolvlm2-500m-video-instruct",
        "HuggingFaceTB/SmolVLM2-500M-Video-Instruct",
        "a SmolLM2 language model behind SigLIP over 512-pixel tiles, each 4×4 patches shuffled into a token; its text model's vocabulary repeated at the top, unread",
        "2026-12-07"
    ),
    entry!(
        "qwen3-vl-4b-instruct",
        "Qwen/Qwen3-VL-4B-Instruct",
        "Qwen3's layers in a wrapper tied by its own flag; interleaved multimodal RoPE; a vision tower with three deep-stack mergers, counted",
        "2026-12-06"
    ),
    entry!(
        defaults "Emu3Config",
        "emu3-chat",
        "Emu3-community/Emu3-Chat-hf",
        "a Llama that reads and writes images as tokens; its VQ-VAE image tokenizer counted"
    ),
    entry!(
        defaults "CpmAntConfig",
        "cpm-ant-10b",
        "openbmb/cpm-ant-10b",
        "a learned 32-token prompt and segment embeddings before the text, T5-style bucketed position biases, attention both ways"
    ),
    entry!(
        defaults "InklingTextConfig",
        "inkling",
        "thinkingmachines/Inkling",
        "no RoPE: relative logits each query mixes, short convolutions on K, V and every sublayer's output; 256 experts (6 active) and 2 shared, scored by one router"
    ),
    entry!(
        defaults "Inkling2TextConfig",
        "inkling-2-small",
        "thinkingmachines/Inkling-2-Small-MXFP8",
        "block attention residuals in place of the residual stream; L2-clipped queries and keys, per-token sinks, convolutions with per-token taps; 384 experts (8 active)"
    ),
    entry!(
        defaults "Inkling2LoopTextConfig",
        "inkling-2-mini",
        "thinkingmachines/Inkling-2-Mini",
        "Inkling 2 whose layers 6–17 run three passes, the later ones fed messages from the pass before"
    ),
    entry!(
        defaults "DoryConfig",
        "dory1.0-4b",
        "nvidia/NVIDIA-Nemotron-Labs-Dory1.0-4B-BF16",
        "nGPT on the unit sphere; layers 8–27 run twice, so each token runs 56 layers from 36"
    ),
    entry!(
        defaults "ZayaConfig",
        "zaya1-8b",
        "Zyphra/ZAYA1-8B",
        "compressed convolutional attention; one expert per token, chosen by a router MLP that carries its state"
    ),
    entry!(
        defaults "MiniMaxM3VLTextConfig",
        "minimax-m3",
        "MiniMaxAI/MiniMax-M3",
        "clamped SwiGLU experts; its class defaults name no sparse layer, so no indexer runs"
    ),
    entry!(
        defaults "Dots3NoteTextConfig",
        "dots3-note-prev",
        "dots-studio/dots3-note-prev",
        "latent attention of two sizes: indexed layers, and three of four in a 512-token window"
    ),
    entry!(
        defaults "BltConfig",
        "blt-1b",
        "itazap/blt-1b-hf",
        "bytes in patches cut by a small model's entropy: a 25-layer latent transformer between byte-level encoder and decoder"
    ),
    entry!(
        defaults "HrmTextConfig",
        "hrm-text-1b",
        "sapientinc/HRM-Text-1B",
        "two stacks of 16 layers in a nested loop: each token runs 128 layers"
    ),
    entry!(
        defaults "BeamConfig",
        "beam-1.0-501b-a23b",
        "reflection/Beam-1.0-501B-A23B",
        "NoPE full layers with queries grown by position, depth-scaled residual adds, gated heads"
    ),
    entry!(
        defaults "AXK2Config",
        "a.x-k2",
        "skt/A.X-K2",
        "sparse latent attention whose query and output gate come from both query latents; gated norms"
    ),
    entry!(
        defaults "Gemma3nTextConfig",
        "gemma-3n-e4b",
        "google/gemma-3n-E4B",
        "4 AltUp streams, a low-rank LAuReL branch beside attention, a Gaussian top-k on the first 10 MLPs"
    ),
    entry!(
        defaults "HYV4Config",
        "hy4-preview",
        "tencent/Hy4-preview",
        "hyper-connections: 4 residual streams mixed around every sublayer; sparse latent attention with sinks and gates"
    ),
    entry!(
        defaults "DeepseekV4Config",
        "deepseek-v4-flash-base",
        "deepseek-ai/DeepSeek-V4-Flash-Base",
        "one K=V head over a sliding window plus compressed entries (sparse, by an indexer, or heavy); Sinkhorn-mixed hyper-connections; experts by token id in the first layers"
    ),
];

pub fn get(name: &str) -> Option<&'static Entry> {
    let lower = name.to_ascii_lowercase();
    ENTRIES.iter().find(|e| e.name == lower)
}

/// The catalog name closest to `name`, if any is close enough to be a likely typo.
pub fn suggest(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    ENTRIES
        .iter()
        .map(|e| {
            (
                strsim::normalized_damerau_levenshtein(&lower, e.name),
                e.name,
            )
        })
        .filter(|(score, _)| *score >= 0.6)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, n)| n)
}
