//! The Spec: the normalized, validated hyper-parameters of one model, family-agnostic.
//!
//! Loaders (`families`) turn a config into a Spec; nothing downstream reads a raw config again.
//! A family differs from another only by what its Spec says.

use crate::layers::LayerSet;

#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// Display name: the catalog name, or the file's folder name.
    pub name: String,
    /// `model_type` of the language model (of `text_config` for multimodal wrappers).
    pub model_type: String,
    /// Family display name ("Llama", "Qwen3").
    pub family: String,
    pub vocab: u64,
    pub hidden: u64,
    pub layers: u64,
    /// Longest context the model is configured for (`max_position_embeddings`).
    pub context: u64,
    pub embedding: Embedding,
    pub attn: Attention,
    /// Attentions of layers that differ from `attn`, each with its layers (MiMo-V2-Flash's
    /// sliding-window layers: twice the K/V heads, and sinks; Laguna's per-layer query heads);
    /// `attn` holds for every other layer. Read through `attn_at` or `attn_variants`.
    pub layer_attn: Vec<(LayerSet, Attention)>,
    /// The dense FFN (every layer for dense models; the dense layers of a MoE model).
    pub mlp: Mlp,
    pub moe: Option<Moe>,
    /// The state-space mixer of the `Mixer::Mamba2` layers.
    pub ssm: Option<Ssm>,
    /// The selective scan of the `Mixer::Mamba` layers.
    pub s6: Option<S6>,
    /// The short convolution of the `Mixer::ShortConv` layers.
    pub short_conv: Option<ShortConv>,
    /// The gated delta rule of the `Mixer::DeltaNet` layers.
    pub delta: Option<DeltaNet>,
    /// The lightning attention of the `Mixer::Lightning` layers.
    pub lightning: Option<Lightning>,
    /// Griffin's recurrent block of the `Mixer::RgLru` layers.
    pub rg_lru: Option<RgLru>,
    /// RWKV's time mixing (`Mixer::Rwkv`) and channel mixing (`Ffn::ChannelMix`).
    pub rwkv: Option<Rwkv>,
    /// xLSTM's matrix memory (`Mixer::MLstm`).
    pub mlstm: Option<MLstm>,
    /// One entry per layer.
    pub plan: Vec<LayerPlan>,
    pub norm: Norm,
    /// The final norm's kind where it differs from the blocks' (xLSTM with `use_bias`: its
    /// output norm has no shift). Read through `final_norm`.
    pub final_norm_kind: Option<NormKind>,
    /// Falcon-H1's μP multipliers, on the sublayers its `Mixer::Parallel` layers run side by
    /// side and on its MLP.
    pub mup: Option<Mup>,
    /// Where the recurrent layers' norms sit, where it differs from `norm.place` (OLMo hybrid:
    /// pre-norm DeltaNet layers among post-norm attention layers). Read through `place_at`.
    pub recurrent_place: Option<NormPlace>,
    /// The factors of a `NormPlace::Normed` block's residual adds (MiniMax); `None` otherwise.
    pub stream_mix: Option<StreamMix>,
    pub position: Position,
    /// The LM head reuses the embedding matrix.
    pub tied: bool,
    /// Tanh softcap applied to the final logits.
    pub final_softcap: Option<f64>,
    /// The logits are multiplied by this (Cohere's `logit_scale`, 1 / Granite's
    /// `logits_scaling`); 1 otherwise.
    pub logits_mult: f64,
    /// Each sublayer's output is multiplied by this before it joins the residual stream
    /// (Granite's `residual_multiplier`); 1 otherwise.
    pub residual_mult: f64,
    /// The residual stream is multiplied elementwise by a learned vector where each sublayer's
    /// output joins it, x ⊙ ρ + f(x) (Doge's `input_residual` and `post_attention_residual`).
    pub residual_scales: bool,
    /// Each residual add shifts and scales both of its terms by learned vectors,
    /// (x + bᵣ) ⊙ sᵣ + (f(x) + bₕ) ⊙ sₕ (ZAYA's `post_attention_residual_scale` and
    /// `post_mlp_residual_scale`).
    pub residual_affine: bool,
    /// Each residual add keeps the stream's scale whatever the depth (Beam): the k-th add of the
    /// model (k = 2b + 2 for layer b's attention, 2b + 3 for its FFN) is
    /// x · √((k − 1)/k) + f(x) / √k. See `depth_factors`.
    pub depth_scaled: bool,
    /// The LM head has a bias (Phi-2, GPT-J).
    pub head_bias: bool,
    /// Layer 0 reads the embeddings without its pre-attention norm (ModernBERT's Identity there).
    pub skip_first_attn_norm: bool,
    /// Before the LM head: a dense layer (hidden → hidden), an activation and a norm of the
    /// model's kind (ModernBERT's prediction head).
    pub head_transform: Option<HeadTransform>,
    /// Per-layer embeddings (Gemma 4): each layer adds a signal of its own, gated by the stream.
    pub per_layer_input: Option<PerLayerInput>,
    /// Each layer's output is multiplied by a stored scalar of its own (Gemma 4's
    /// `layer_scalar`).
    pub layer_scalar: bool,
    /// Zamba2's shared transformer blocks, run before the mixer in some layers.
    pub shared: Option<SharedBlocks>,
    /// Hyper-connections (HY v4): the residual stream is `streams` copies of the hidden state,
    /// mixed into each sublayer's input and each written back by a learned per-token gate.
    pub hyper: Option<Hyper>,
    /// Gated residual streams (Qwen4-Exp): the residual stream is `streams` copies of the hidden
    /// state, each sublayer reading a gated mean of them and its output written back to each by a
    /// gate of its own; no final norm.
    pub gated_streams: Option<GatedStreams>,
    /// Qwen4-Exp's hashed n-gram per-layer embeddings: in some layers, before the mixer, a
    /// signal from a table read by hashes of the token and the ones before it.
    pub ngram_ple: Option<NgramPle>,
    /// Gemma 3n's alternating updates: the stream is several predictions of the hidden state,
    /// one of which the layer computes on (`AltUp`).
    pub altup: Option<AltUp>,
    /// HRM's two stacks run in a nested loop (`Hierarchy`): layers 0..per_stack are the
    /// low-level stack's, the rest the high-level one's.
    pub hierarchy: Option<Hierarchy>,
    /// BLT: this Spec is the latent transformer over patches; byte-level stacks of their own
    /// sizes make its input and read its output (`ByteLatent`).
    pub bytes: Option<Box<ByteLatent>>,
    /// Dory's looped section: some layers run several times in a row (`Looped`).
    pub looped: Option<Looped>,
    /// nGPT's learned scalings (Dory), with `NormPlace::Sphere` and `NormKind::Unit`.
    pub ngpt: Option<Ngpt>,
    /// Gemma 3n's LAuReL: a low-rank branch of this rank beside each attention.
    pub laurel: Option<u64>,
    /// Gemma 3n's activation sparsity: the layers whose MLP gate keeps only its values above
    /// mean + z · std (a Gaussian top-k), with the fraction p dropped, z = Φ⁻¹(p).
    pub sparsity: Vec<(LayerSet, f64)>,
    /// A.X-K2's gated norms: the attention's norm in every layer, the FFN's in the MoE layers
    /// (`gated_ffn_norm`).
    pub gated_norm: Option<GatedNorm>,
    /// Layers whose dense MLP has a width of its own rather than `mlp.intermediate` (Gemma 4's
    /// double-wide MLPs in the layers that share keys and values). Read through `mlp_width`.
    pub mlp_widths: Vec<(LayerSet, u64)>,
    /// The LM head scores only the first n ids (Apertus 1.5's `output_vocab_size`, a head
    /// pruned to the text tokens); `None`: all `vocab`. See `out_vocab`.
    pub head_rows: Option<u64>,
    /// CPM-Ant's learned prompt and segments; `None` elsewhere.
    pub prompt: Option<Prompt>,
    /// The head scores all its rows, and only the first n logits are kept (Inkling's
    /// `unpadded_vocab_size`: a head padded past the real vocabulary). See `logits_width`.
    pub logits_kept: Option<u64>,
    /// Each sublayer's output passes through a residual causal depthwise convolution before it
    /// joins the stream, y + conv(y) (Inkling's `attn_sconv` and `mlp_sconv`); its last inputs
    /// are carried from step to step.
    pub out_conv: Option<ResConv>,
    /// Block attention residuals (Inkling 2): each sublayer reads a learned mix of the stream's
    /// block summaries rather than the stream itself (`AttnRes`).
    pub attn_res: Option<AttnRes>,
    pub block: Block,
    /// How checkpoint tensors are named and laid out.
    pub layout: Layout,
    /// Where a multimodal wrapper keeps the language model's Hugging Face tensor names.
    pub hf_wrap: HfWrap,
    /// Parts of the checkpoint that anatomy does not draw or count (vision tower, projector).
    pub not_drawn: Vec<NotDrawn>,
    /// Auxiliary modules outside the main forward pass.
    pub mtp_layers: u64,
    /// A draft model for speculative decoding (Gemma 4's assistants): it reads its target's
    /// state, not token ids, and every layer attends over its target's keys and values.
    pub draft: Option<Draft>,
    /// Config keys anatomy did not understand and ignored because it was asked to (`--lenient`):
    /// every view that prints figures says so.
    pub ignored: Vec<Ignored>,
    /// Config keys that transformers does not read for this model type (neither its config class
    /// nor its modeling code): they cannot change the model, and are listed as such.
    pub not_read: Vec<Ignored>,
}

/// Hyper-connections, as HY v4 builds them (DeepSeek-V4's form without the Sinkhorn mixing of
/// the streams). Before each sublayer, from the RMS-scaled concatenation of the n streams
/// X ∈ [n, hidden]: m = (W · vec(X)) / rms(vec(X)), 2n logits; pre = σ(s₀ · m[:n] + b[:n]) + ε
/// weighs the streams into the sublayer's input Σᵢ preᵢ Xᵢ, and post = magnitude ·
/// σ(s₁ · m[n:] + b[n:]) + ε writes its output y back to every stream, Xᵢ + postᵢ · y. The
/// embedding starts all n streams; before the final norm a head of its own (n logits, one
/// scale) weighs them into one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hyper {
    pub streams: u64,
    /// `hc_magnitude`: the largest factor a sublayer's output is written back with.
    pub magnitude: f64,
    /// `hc_eps`, added to every gate. (The streams' weightless RMS scaling uses the model's
    /// norm ε.)
    pub eps: f64,
    /// DeepSeek-V4's manifold-constrained form: n² more logits give a mix of the streams,
    /// softmax rows made doubly stochastic by this many Sinkhorn iterations, C; the stream
    /// becomes Cᵀ X + post ⊗ y, post = magnitude · σ(·) without ε. `None`: HY v4's X + post ⊗ y.
    pub sinkhorn: Option<u64>,
}

impl Hyper {
    /// The logits a sublayer's mix computes: pre and post gates, and with Sinkhorn the n × n mix.
    pub fn logits(&self) -> u64 {
        match self.sinkhorn {
            Some(_) => (2 + self.streams) * self.streams,
            None => 2 * self.streams,
        }
    }
}

/// Qwen4-Exp's gated residual streams. Before each sublayer, X ∈ [n, hidden] is RMS-normed per
/// stream with one (1 + w) weight over all n · hidden features (no other norm precedes the
/// sublayer), X̂; the input mix a = σ(W_up · silu(W_down · vec(X̂) / n)), rank `rank`, weighs
/// X̂'s features, and the sublayer reads mean over i of aᵢ ⊙ X̂ᵢ; the injection weights
/// g = 2σ(W_inject · vec(X̂) / n) write its output y back, Xᵢ + gᵢ · y. The embedding starts all
/// n streams; a last mix without injection (`hyper_connection_mixer`) makes the head's input,
/// with no final norm after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GatedStreams {
    pub streams: u64,
    pub rank: u64,
}

/// Qwen4-Exp's hashed n-gram per-layer embeddings (PLE), in `layers`. Each such layer has a table
/// of its own, read by `heads()` hash heads, `heads_per_ngram` for each n from 2 to `ngram`: a
/// head's row is (XOR over the n-gram's tokens of token · multiplier) modulo the head's size (a
/// prime from `vocab_base` on), plus its offset; tokens do not reach back across an
/// end-of-sequence `eos`. The heads' rows, `head_dim()` each, concatenated (`width`) give a
/// value v = W_v e and, per stream i, a key kᵢ = RMS(W_k e)ᵢ; with qᵢ the stream RMS-normed (both
/// grouped (1 + w) norms), gᵢ = q̃ᵢ · k̃ᵢ / √hidden, signed square root, and uᵢ = σ(gᵢ) · v. The
/// streams gain u + SiLU(conv(RMS(u))), a depthwise causal convolution of `kernel` taps,
/// `ngram` apart. The arithmetic is in `ngram.rs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NgramPle {
    pub layers: LayerSet,
    pub width: u64,
    pub ngram: u64,
    pub heads_per_ngram: u64,
    pub vocab_base: u64,
    /// The table's rows are padded to a multiple of this.
    pub divisor: u64,
    pub seed: u64,
    /// The checkpoint splits each table into this many shards (`split_ngram_parts`).
    pub parts: u64,
    pub kernel: u64,
    pub eos: u64,
    /// Every head's table size, layer after layer (`ngram::primes`): each the next prime.
    pub sizes: Vec<u64>,
}

/// HRM-Text's hierarchical recurrence over two stacks of `per_stack` layers, a low-level one
/// (L) and a high-level one (H), each ending in its own norm. The high-level state starts as
/// the embeddings, the low-level one as a stored vector `z_L_init`; each of `high_cycles`
/// cycles runs L `low_cycles` times on the sum of both states, zL ← L(zL + zH), then H once,
/// zH ← H(zH + zL); the last zH is the output. Every run of a layer attends over its own keys
/// and values, so each layer runs, and caches, once per visit of its stack. The layers are
/// HRM's, pre-norm attention and MLP one after the other: the NumPy export and the PyTorch
/// reference write the loop for them alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hierarchy {
    pub per_stack: u64,
    pub high_cycles: u64,
    pub low_cycles: u64,
}

impl Hierarchy {
    /// Whether layer `b` is the low-level stack's, and its index within its stack.
    pub fn locate(self, b: u64) -> (bool, u64) {
        (b < self.per_stack, b % self.per_stack)
    }

    /// How many times layer `b` runs for one token.
    pub fn runs(self, b: u64) -> u64 {
        if b < self.per_stack {
            self.high_cycles * self.low_cycles
        } else {
            self.high_cycles
        }
    }

    /// Every visit of a stack in order, true for the low-level stack's: each cycle's low-level
    /// visits, then its high-level one. A visit's index is its layers' cache slot.
    pub fn visits(self) -> impl Iterator<Item = bool> {
        let l = self.low_cycles;
        (0..self.high_cycles).flat_map(move |_| (0..=l).map(move |i| i < l))
    }
}

/// BLT's byte-level model around its latent transformer (the Spec that holds it, which runs
/// over patches). A patcher, a small byte-level language model, cuts the bytes into patches
/// where its next-byte entropy is high. The local encoder embeds each byte (its own table plus
/// hashed n-grams of the bytes ending there), runs its layers, and makes `cross_k` queries per
/// patch from the bytes' max-pooled states, which cross-attend to the patch's own bytes; those
/// patch embeddings feed the latent transformer. The local decoder starts from the encoder's
/// byte states; before its self-attention each byte cross-attends to `cross_k` keys made from
/// the latent output of the patch before its own; then its norm and the LM head. Every stack
/// is Llama's pre-norm layer with interleaved RoPE, a Spec of its own.
#[derive(Debug, Clone, PartialEq)]
pub struct ByteLatent {
    pub encoder: Spec,
    pub decoder: Spec,
    /// The entropy model; `None` where the config leaves it out (`patch_in_forward: false`).
    pub patcher: Option<Spec>,
    pub hash: ByteHash,
    /// Queries (encoder) and keys (decoder) per patch.
    pub cross_k: u64,
    /// Every encoder layer cross-attends, with a cross-attention of its own, rather than the
    /// last alone (`cross_attn_all_layers`); only the last one's result is read.
    pub encoder_cross_all: bool,
    /// Every decoder layer cross-attends before its self-attention, rather than the first alone.
    pub decoder_cross_all: bool,
    pub patching: Patching,
    /// Longer patches are cut into pieces of at most this many bytes (`max_patch_length`).
    pub max_patch: Option<u64>,
}

impl ByteLatent {
    /// The encoder's cross-attention layers.
    pub fn encoder_cross(&self) -> u64 {
        if self.encoder_cross_all {
            self.encoder.layers
        } else {
            1
        }
    }

    /// The decoder's cross-attention layers.
    pub fn decoder_cross(&self) -> u64 {
        if self.decoder_cross_all {
            self.decoder.layers
        } else {
            1
        }
    }

    /// The last positions a stack's layers attend over, all of them alike (`families::blt`
    /// makes each stack attend causally, in full or in a window); `None`: in full.
    pub fn window(stack: &Spec) -> Option<u64> {
        match stack.plan.first().and_then(LayerPlan::span) {
            Some(AttnSpan::Sliding(w)) => Some(w),
            Some(AttnSpan::Full) | None => None,
            Some(AttnSpan::Chunked(_) | AttnSpan::Whole) => {
                unreachable!("BLT's stacks attend causally, in full or in a window")
            }
        }
    }

    /// A stack's rotary embedding: every BLT stack rotates.
    pub fn rope(stack: &Spec) -> &Rope {
        match &stack.position {
            Position::Rope(r) => r,
            Position::Learned
            | Position::Sinusoidal(_)
            | Position::Alibi(_)
            | Position::Buckets(_)
            | Position::None => unreachable!("BLT's stacks rotate"),
        }
    }

    /// The stack `s`'s Spec.
    pub fn stack(&self, s: Stack) -> Option<&Spec> {
        match s {
            Stack::Patcher => self.patcher.as_ref(),
            Stack::Encoder => Some(&self.encoder),
            Stack::Decoder => Some(&self.decoder),
        }
    }

    /// The stacks the model has, in the order they run: the patcher (where there is one), the
    /// encoder, the decoder.
    pub fn stacks(&self) -> impl Iterator<Item = (Stack, &Spec)> {
        Stack::ALL
            .into_iter()
            .filter_map(|s| self.stack(s).map(|spec| (s, spec)))
    }
}

/// One of BLT's byte-level stacks (`ByteLatent`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stack {
    Patcher,
    Encoder,
    Decoder,
}

impl Stack {
    pub const ALL: [Stack; 3] = [Stack::Patcher, Stack::Encoder, Stack::Decoder];

    pub fn title(self) -> &'static str {
        match self {
            Stack::Patcher => "Patcher",
            Stack::Encoder => "Local encoder",
            Stack::Decoder => "Local decoder",
        }
    }
}

/// BLT's hashed byte n-grams: for each of `functions` primes and each n in `sizes`, the n bytes
/// ending at a position (zeros before the first) hash to Σᵢ byteᵢ · primeⁱ (wrapping 64-bit
/// arithmetic), taken modulo `vocab`; each (function, n) pair reads its own `vocab` rows of one
/// table, and the rows found are added to the byte's embedding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ByteHash {
    pub vocab: u64,
    pub sizes: Vec<u64>,
    pub functions: u64,
}

impl ByteHash {
    /// The primes transformers' `compute_hash_embeddings` cycles through.
    pub const PRIMES: [i64; 11] = [
        1_000_000_007,
        5_915_587_277,
        1_500_450_271,
        3_267_000_013,
        5_754_853_343,
        4_093_082_899,
        9_576_890_767,
        3_628_273_133,
        2_860_486_313,
        5_463_458_053,
        3_367_900_313,
    ];

    /// Rows of the table: one block of `vocab` per (function, size).
    pub fn rows(&self) -> u64 {
        self.vocab * self.functions * self.sizes.len() as u64
    }

    /// The table row of each byte for function `f` and n-gram size `n`, block `block`.
    pub fn ids(&self, bytes: &[u32], f: u64, n: u64, block: u64) -> Vec<u32> {
        let prime = Self::PRIMES[(f % Self::PRIMES.len() as u64) as usize];
        let n = n as usize;
        (0..bytes.len())
            .map(|t| {
                let mut h: i64 = 0;
                let mut power: i64 = 1;
                // The window's i-th byte (oldest first) is multiplied by primeⁱ.
                for i in 0..n {
                    let at = (t + 1 + i).checked_sub(n);
                    let byte = at.map_or(0, |a| bytes[a] as i64);
                    h = h.wrapping_add(byte.wrapping_mul(power));
                    power = power.wrapping_mul(prime);
                }
                // Python's modulo: never negative.
                (h.rem_euclid(self.vocab as i64) as u64 + block * self.vocab) as u32
            })
            .collect()
    }
}

/// How BLT cuts the bytes into patches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Patching {
    /// A patch starts at bytes 0 and 1 and after every byte t ≥ 1 whose patcher entropy
    /// exceeds this threshold (in nats).
    Entropy(f64),
    /// One patch per byte, and `extra` more (empty ones) at the end: without a patcher, or with
    /// one but no `patch_size`.
    Bytes { extra: u64 },
}

impl Patching {
    /// The patch lengths for `t` bytes, from the patcher's entropies where it runs, each patch
    /// longer than `max` cut into pieces (transformers' `process_patch_lengths`).
    pub fn lengths(self, t: usize, entropies: &[f32], max: Option<u64>) -> Vec<u64> {
        if t == 0 {
            return Vec::new();
        }
        let lengths: Vec<u64> = match self {
            Patching::Bytes { extra } => vec![1; t + extra as usize],
            Patching::Entropy(threshold) => {
                let mut starts = vec![0u64, 1];
                starts.extend(
                    (1..t)
                        .filter(|&i| entropies[i] as f64 > threshold)
                        .map(|i| i as u64 + 1),
                );
                let ends = starts[1..].iter().map(|s| s - 1).chain([t as u64 - 1]);
                starts.iter().zip(ends).map(|(s, e)| e + 1 - s).collect()
            }
        };
        let Some(max) = max else {
            return lengths;
        };
        lengths
            .iter()
            .flat_map(|&l| {
                let full = l / max;
                let rest = l % max;
                std::iter::repeat_n(max, full as usize).chain((rest > 0).then_some(rest))
            })
            .collect()
    }
}

/// Dory's looped section: layers `input..input + recurrent` run `loops` times in a row. Before
/// each pass the stream is normed and the normed output of the input layers added,
/// x ← n(x) + n(x₀). With `shared_cache` (`recurrent_kv_cache_mode: last_loop`) only the last
/// pass caches its keys and values and the earlier ones attend over them; otherwise each pass
/// caches its own (`per_loop`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Looped {
    pub input: u64,
    pub recurrent: u64,
    pub loops: u64,
    pub shared_cache: bool,
}

impl Looped {
    /// The looped section's layers.
    pub fn layers(self) -> LayerSet {
        LayerSet::range(self.input, self.input + self.recurrent)
    }

    /// Whether layer `b` is in the looped section.
    pub fn contains(self, b: u64) -> bool {
        (self.input..self.input + self.recurrent).contains(&b)
    }

    /// How many times layer `b` runs for one token.
    pub fn runs(self, b: u64) -> u64 {
        if self.contains(b) {
            self.loops
        } else {
            1
        }
    }

    /// How many copies of its keys and values layer `b` caches.
    pub fn caches(self, b: u64) -> u64 {
        if self.shared_cache {
            1
        } else {
            self.runs(b)
        }
    }
}

/// nGPT's learned scalings (Dory). Each is stored as a vector s and applied as s times a fixed
/// factor, so that it trains at the scale of the other weights: the queries are multiplied by
/// (s_qk · √head_dim / init)² after RoPE, the output gate's logits by (s_gate · hidden^¼ /
/// init)², the MLP's gate and up by s_u · √hidden and s_v · √hidden, the logits by
/// s_z / init; each residual moves towards the sublayer's normed output at the rate
/// |λ · α / init|. `init` is `initializer_range`, α `ngpt_alpha_init`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ngpt {
    pub init: f64,
    pub alpha: f64,
}

impl Ngpt {
    pub fn query_factor(self, head_dim: u64) -> f64 {
        (head_dim as f64).sqrt() / self.init
    }

    pub fn gate_factor(self, hidden: u64) -> f64 {
        (hidden as f64).powf(0.25) / self.init
    }

    pub fn uv_factor(self, hidden: u64) -> f64 {
        (hidden as f64).sqrt()
    }

    pub fn rate_factor(self) -> f64 {
        self.alpha / self.init
    }

    pub fn logit_factor(self) -> f64 {
        1.0 / self.init
    }
}

/// A.X-K2's gated RMSNorm: the norm's output y times σ(W_up · SiLU(W_down · y)), a gate of
/// rank `rank` computed from y itself.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GatedNorm {
    pub rank: u64,
}

/// Gemma 3n's alternating updates (AltUp). The stream holds `streams` versions of the hidden
/// state: the embedding and its projections, each rescaled to the embedding's RMS. Each layer
/// first predicts every stream from all of them, Pⱼ = Xⱼ + Σᵢ Cⱼᵢ Xᵢ with coefficients from a
/// router over the `active` one; computes on the active prediction alone; then corrects every
/// prediction by the layer's innovation O − Pₐ, Xᵢ ← Pᵢ + cᵢ (O − Pₐ), cᵢ = 1 + the router's
/// coefficient over O. At the end the streams are projected back, rescaled, and averaged.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AltUp {
    pub streams: u64,
    pub active: u64,
    /// The active stream, corrected, is scaled by a learned vector before the per-layer input
    /// reads it (`altup_correct_scale`).
    pub correct_scale: bool,
}

/// A config key ignored under `--lenient`, with its value as JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct Ignored {
    /// JSON path of the key (`text_config.rope_scaling.mrope_section`).
    pub key: String,
    pub value: String,
}

impl Ignored {
    /// `key = value`, as the JSON outputs list it.
    pub fn pair(&self) -> String {
        format!("{} = {}", self.key, self.value)
    }

    /// Each of `keys` as `key = value`.
    pub fn pairs(keys: &[Ignored]) -> Vec<String> {
        keys.iter().map(Ignored::pair).collect()
    }
}

impl std::fmt::Display for Ignored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "anatomy ignored: {}", self.pair())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct NotDrawn {
    /// What it is ("vision tower").
    pub what: String,
    /// Hugging Face name prefix of its tensors (`vision_tower.`).
    pub prefix: String,
    /// Its parameters, counted from the wrapper's config (in the model's total); `None` where
    /// anatomy cannot count it (then outside the total).
    pub params: Option<u64>,
}

impl std::fmt::Display for NotDrawn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.params {
            Some(n) => write!(
                f,
                "{} ({}*, {})",
                self.what,
                self.prefix,
                crate::fmt::count(n as u128, "parameter")
            ),
            None => write!(f, "{} ({}*, not counted)", self.what, self.prefix),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Embedding {
    /// Multiply embeddings by √hidden (Gemma).
    pub scale_by_sqrt_hidden: bool,
    /// Learned absolute position embeddings of this many positions (GPT-2).
    pub learned_positions: Option<u64>,
    /// Position p reads row p + this of the learned table (OPT: 2).
    pub position_offset: u64,
    /// Embeddings are multiplied by this (Granite's `embedding_multiplier`); 1 otherwise.
    pub multiplier: f64,
    /// A norm (the model's kind) right after the lookup (Bloom's `word_embeddings_layernorm`).
    pub norm: bool,
    /// The embeddings are shifted and scaled by learned vectors, (e + b) ⊙ s (ZAYA's
    /// `input_hidden_states_bias` and `_scale`).
    pub affine: bool,
    /// The token table is this wide rather than `hidden` (OPT-350M: 512 of 1024): a linear map (no bias) takes each
    /// looked-up row to the hidden size, and another takes the final hidden state back to this
    /// width for the LM head (OPT-350M's `word_embed_proj_dim`, `project_in` and `project_out`).
    /// Read through `Spec::embed_width`.
    pub projected: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttnKind {
    /// Every query head has its own K and V head.
    Mha,
    /// Query heads share K/V heads in groups.
    Gqa,
    /// All query heads share one K/V head.
    Mqa,
    /// Multi-head latent attention (DeepSeek V2/V3): K and V come from a cached low-rank latent.
    Mla,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Attention {
    pub kind: AttnKind,
    pub heads: u64,
    pub kv_heads: u64,
    pub head_dim: u64,
    /// Head dim of V when it differs from Q/K (MLA, MiMo-V2-Flash).
    pub v_head_dim: u64,
    /// The values are multiplied by this once projected (MiMo-V2-Flash's
    /// `attention_value_scale`); 1 otherwise.
    pub v_scale: f64,
    pub qkv_bias: bool,
    pub o_bias: bool,
    pub qk_norm: QkNorm,
    /// Tanh softcap on attention scores (Gemma 2).
    pub softcap: Option<f64>,
    /// A learned per-head sink logit joins the softmax (gpt-oss).
    pub sinks: bool,
    /// Scores are scaled by 1/√scale_dim (query_pre_attn_scalar for Gemma, head_dim otherwise).
    pub scale_dim: f64,
    /// Extra factor on the score scale (DeepSeek's YaRN mscale²); 1 otherwise.
    pub scale_mult: f64,
    pub mla: Option<Mla>,
    /// How Q, K and V are stored: three tensors, or row blocks of one.
    pub qkv: Qkv,
    /// Q, K and V are clamped to [−c, c] once projected (and normed, with a whole-projection QK
    /// norm): OLMo, OLMoE, DBRX.
    pub clip_qkv: Option<f64>,
    /// Queries grow with position, for long contexts (Llama 4's NoPE layers, Ministral 3).
    pub query_scale: Option<QueryScale>,
    /// A norm (the model's kind) over the concatenated heads before the output projection
    /// (BitNet's `attn_sub_norm`).
    pub sub_norm: bool,
    /// The concatenated heads are multiplied by a gate projected from the attention's input,
    /// before the output projection (AFMoE's σ(x · W_g), Laguna's softplus per head).
    pub out_gate: Option<OutGate>,
    /// The output projection gains a bias in the last layer only, stored apart (GPT-NeoX-
    /// Japanese's `dense_bias`).
    pub o_bias_last: bool,
    /// Differential attention (DiffLlama): each head attends over the values of two K/V heads
    /// side by side; the first half of the heads minus λ times the second half, RMS-normed per
    /// pair without a weight and scaled by 1 − λ_init, goes to the output projection. λ is learned
    /// per layer from four vectors of head_dim.
    pub differential: bool,
    /// Mixture of attention heads (JetMoE): the query and output projections are routed experts.
    pub moa: Option<Moa>,
    /// V is RMS-normed per head, without a weight, before attention (Gemma 4).
    pub v_norm: bool,
    /// No V projection: the values are the key projection's output, as projected (before K's
    /// norm and RoPE) (Gemma 4's full layers with `attention_k_eq_v`).
    pub v_from_k: bool,
    /// The layer projects no K and V: it attends over those of the last layer before it of its
    /// span kind that does, and caches nothing (Gemma 4's `num_kv_shared_layers`).
    pub shares_kv: bool,
    /// Dynamic mask attention (Doge): every key is scored from its value, and the score biases
    /// and limits which keys each query attends to.
    pub dynamic_mask: Option<DynamicMask>,
    /// MiniMax-M3's lightning indexer: which blocks of keys each query group attends to.
    pub block_index: Option<BlockIndex>,
    /// Qwen4-Exp's QSA indexer: which blocks of keys every query head attends to.
    pub qsa: Option<Qsa>,
    /// ZAYA's compressed convolutional attention: how Q, K and V are made (see `Cca`).
    pub cca: Option<Cca>,
    /// Inkling's relative logits: a bias per head and backward distance, mixed by each query
    /// from a bank of learned profiles (`RelLogits`).
    pub rel_logits: Option<RelLogits>,
    /// K and V each pass through a residual causal depthwise convolution once projected, before
    /// K's norm, k + conv(k) (Inkling's `k_sconv` and `v_sconv`); its last inputs are carried
    /// from step to step.
    pub kv_conv: Option<KvConv>,
    /// Q (times a learned [heads, head_dim] scale) and K are scaled down to this L2 norm per
    /// head where longer (Inkling 2's `qk_l2_clip_threshold`).
    pub l2_clip: Option<f64>,
    /// Each query head's sink logit is projected from the token, `x · W_s`, rather than learned
    /// once (Inkling 2's `sink_proj`).
    pub token_sinks: bool,
    /// K and V are projected from inputs of their own, each normed by its own weight (Inkling
    /// 2's full layers, whose block attention residual mixes three inputs).
    pub kv_inputs: bool,
    /// DeepSeek-V4's attention: one key-and-value head beside a latent query, long-range
    /// entries compressed from the keys in some layers (`V4Attn`).
    pub v4: Option<V4Attn>,
}

/// DeepSeek-V4's attention. Each head's query comes from a latent, q = RMS(W_qb · RMS(W_qa ·
/// x)) (the second norm per head, without a weight); one head of `head_dim`, RMS-normed, is
/// both key and value. The last `rope_dim` dims of Q and of that head rotate (interleaved
/// pairs), and the output's last dims rotate back by the query's position. Every layer attends
/// over its sliding window of such keys with a learned sink per head; a compressed layer
/// (`csa`, `hca`) also over entries each summarizing a window of m tokens: a softmax-gated sum
/// of projections of them, plus a learned bias per slot, RMS-normed and rotated at the
/// window's first position by `compress_freqs`, which the whole layer uses. A compressed
/// sparse layer's windows overlap (each entry reads its window and the one before, 2m slots)
/// and an indexer keeps `index.top_k` entries per query; a heavily compressed layer's windows
/// do not, and every closed one is read. The heads' outputs go through a grouped low-rank
/// projection: `o_groups` groups of heads, each projected to `o_lora_rank`, then mixed.
#[derive(Debug, Clone, PartialEq)]
pub struct V4Attn {
    pub q_lora_rank: u64,
    pub rope_dim: u64,
    pub o_groups: u64,
    pub o_lora_rank: u64,
    pub compress_freqs: RopeFreqs,
    /// The compressed sparse layers and their m.
    pub csa: (LayerSet, u64),
    /// The heavily compressed layers and their m.
    pub hca: (LayerSet, u64),
    pub index: V4Index,
}

/// DeepSeek-V4's indexer: its own compressor (overlapping windows, `head_dim` per entry) and
/// `heads` query heads from the query latent; entry s scores Σₕ wₕ · ReLU(qₕ · kₛ) / √head_dim,
/// wₕ = (x · W_w)ₕ / √heads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct V4Index {
    pub heads: u64,
    pub head_dim: u64,
    pub top_k: u64,
}

/// A layer's kind of DeepSeek-V4 attention.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum V4Kind {
    Sliding,
    /// Compressed sparse attention, m tokens per entry.
    Csa(u64),
    /// Heavily compressed attention, m tokens per entry.
    Hca(u64),
}

impl V4Attn {
    pub fn kind(&self, b: u64) -> V4Kind {
        if self.csa.0.contains(b) {
            V4Kind::Csa(self.csa.1)
        } else if self.hca.0.contains(b) {
            V4Kind::Hca(self.hca.1)
        } else {
            V4Kind::Sliding
        }
    }
}

/// A residual causal depthwise convolution, y = x + conv(x), over `taps` positions; `scaled`:
/// the sum divided by √(taps + 1) (Inkling 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResConv {
    pub taps: u64,
    pub scaled: bool,
}

/// The convolution of K and V (`Attention::kv_conv`). `dynamic`: each token's taps are the
/// stored ones plus taps projected from the token, one set per K/V head, and the sum is divided
/// by √(2 · taps + 1) (Inkling 2's full layers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvConv {
    pub conv: ResConv,
    pub dynamic: bool,
}

/// Block attention residuals (Inkling 2, after Kimi's Attention Residuals). The layers form
/// blocks of `block`; a block's first layer keeps its input as a block summary and restarts the
/// stream from its attention's output. Every sublayer (and the head) reads, instead of the
/// stream, a softmax-weighted mix of the summaries so far and the stream, all RMS-normed
/// without a weight, weighted by their dot products with a learned query scaled by 1/√hidden.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AttnRes {
    pub block: u64,
    /// The weightless RMS norm's ε.
    pub eps: f64,
    /// A looped middle section (Inkling 2 Loop).
    pub looped: Option<AttnResLoop>,
}

/// Inkling 2 Loop: layers `start`..`end` (whole blocks) run `passes` times, each pass from the
/// stream and summaries the layers before them left, with KV and convolution caches of its own.
/// From the second pass on, each looped layer's query, key, value and FFN inputs are mixed with
/// messages from the pass before: four block attention residual mixes (by that layer's four
/// learned queries) of the summaries that pass added after its first and of its output, each
/// joined by a gate of rank `rank`, x ← (1 − tanh(W_f g)) ⊙ x + tanh(W_m g) ⊙ m, g = W_d ·
/// [rms(x); rms(m)] (the RMS norms without a weight, ε of the model's norm).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttnResLoop {
    pub start: u64,
    pub end: u64,
    pub passes: u64,
    pub rank: u64,
}

impl AttnResLoop {
    pub fn contains(&self, b: u64) -> bool {
        (self.start..self.end).contains(&b)
    }
}

/// Inkling's relative logits: each token's relative state r = x · W_r, `d_rel` features per
/// head, mixes the columns of a learned bank P [d_rel, extent] (one per layer) into one bias per
/// backward distance: key j's score for the query at i gains r_h · P[:, i − j] when
/// 0 ≤ i − j < extent, nothing beyond. Where the layer's query scale applies, the bias is
/// scaled with the queries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RelLogits {
    pub d_rel: u64,
    pub extent: u64,
    /// The relative states, times a learned [heads, d_rel] scale, are scaled down to this L2
    /// norm per head where longer (Inkling 2's `rel_l2_clip_threshold`).
    pub clip: Option<f64>,
}

/// ZAYA's compressed convolutional attention (CCA): Q and K are projected, then mixed along
/// time by two causal convolutions over their channels together (a depthwise one of
/// `depthwise` taps, then one of `grouped` taps within each head), each plus a residual path:
/// the queries' is (q + its K/V head's k) / 2, the keys' that averaged over the K/V head's
/// query heads. Half the value heads are projected from the token, half from the token
/// before it. Q and K are then scaled to length √head_dim, the keys times a learned scale per
/// K/V head. The convolution's last inputs and the last token's delayed value are carried
/// from step to step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cca {
    pub depthwise: u64,
    pub grouped: u64,
}

impl Cca {
    /// The positions of raw Q/K inputs carried between steps: both convolutions' reach.
    pub fn reach(self) -> u64 {
        (self.depthwise - 1) + (self.grouped - 1)
    }
}

/// MiniMax-M3's lightning indexer: `heads` heads of `head_dim` (each a projection RMS-normed
/// per head and rotated by the attention's RoPE, beside one shared key per token) score every
/// visible key by q · k; the scores are max-pooled over blocks of `block` keys (block j holds
/// positions j·block to (j + 1)·block − 1), and each query keeps its `local` latest blocks and
/// the best of the rest, `top_k` blocks in all. Index head h chooses for the query heads of its
/// group (query head i reads index head i / (heads / index heads)). Its keys are cached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockIndex {
    pub heads: u64,
    pub head_dim: u64,
    pub block: u64,
    pub top_k: u64,
    pub local: u64,
}

/// Qwen4-Exp's QSA indexer. One projection gives `heads` query heads and one key head of
/// `head_dim` per token; the queries are (1 + w) RMS-normed per head and rotated at their
/// position by the attention's RoPE (its rotated dims first). The raw keys are cached. A query
/// sees its visible keys in complete blocks of `ratio` (block j: positions j·ratio to
/// (j + 1)·ratio − 1) and an incomplete tail: each complete block's keys are averaged, the mean
/// (1 + w) RMS-normed and rotated at the block's first position, and scored
/// Σₕ ReLU(qₕ · k) / √head_dim; the query attends to the tokens of its `budget / ratio` best
/// blocks and to the tail, in every head. Where blocks tie at the cut (a ReLU sum of 0 is common
/// with few index heads) anatomy keeps the earlier; transformers keeps what torch.topk returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Qsa {
    pub heads: u64,
    pub head_dim: u64,
    pub budget: u64,
    pub ratio: u64,
}

impl Qsa {
    /// The complete blocks a query keeps.
    pub fn blocks(self) -> u64 {
        self.budget / self.ratio
    }
}

/// An output gate: g = act(x · W_g), one per head feature, or one per head shared by its
/// features.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutGate {
    /// softplus rather than σ (Laguna).
    pub softplus: bool,
    pub per_head: bool,
    /// A learned bias per head, stored apart and shared by the head's features, joins the gate
    /// before its function (Beam's `gate_bias`).
    pub bias: bool,
    /// Where its projection is stored.
    pub stored: GateStore,
}

/// Where an output gate's projection is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateStore {
    /// A tensor of its own (`gate_proj`).
    Own,
    /// In the query projection: each head's query rows, then its gate rows, one gate per head
    /// feature (Qwen3-Next's, Qwen3.5's `q_proj` of twice the query width).
    InQuery,
    /// First in the stacked QKV projection: every gate row, then the queries, keys and values
    /// (HRM-Text's `gqkv_proj`).
    BeforeQkv,
}

impl OutGate {
    /// Stored in the query projection (`GateStore::InQuery`).
    pub fn in_query(self) -> bool {
        self.stored == GateStore::InQuery
    }

    /// Stored first in the stacked QKV projection (`GateStore::BeforeQkv`).
    pub fn before_qkv(self) -> bool {
        self.stored == GateStore::BeforeQkv
    }

    /// The gate's function, in words and symbols (`σ`).
    pub fn symbol(self) -> &'static str {
        if self.softplus {
            "softplus"
        } else {
            "σ"
        }
    }
}

/// Doge's dynamic mask. Each K/V head scores every key from the values of all heads,
/// Δ = exp(A ⊙ softplus(W_dt · v + b)), one learned A per K/V head; Δ is added to that key's
/// attention score in the head's query heads, and where a query sees more than `keep` keys it
/// attends only to the `keep` with the highest Δ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DynamicMask {
    pub keep: u64,
}

/// JetMoE's mixture of attention heads. Each token's router picks `top_k` of `experts` pairs of
/// query and output projections (a softmax over the chosen logits weights them). A chosen
/// expert's query projection gives `kv_heads` heads, which attend over the layer's one set of
/// K/V heads (`heads` = `top_k` · `kv_heads`, query head j of K/V group i being expert slot j's
/// head i); the same expert's output projection maps its heads back, weighted by its gate, and
/// a bias shared by the experts is added. K and V are the two halves of one projection.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moa {
    pub experts: u64,
    pub top_k: u64,
}

/// The query at position p is multiplied by a factor that grows with p, after RoPE (see
/// `ScaleForm`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueryScale {
    pub form: ScaleForm,
    pub beta: f64,
    pub length: u64,
    pub shift: u64,
    /// Only in the layers without RoPE (Llama 4, Beam); otherwise in every layer.
    pub nope_only: bool,
}

/// How a `QueryScale` grows with position p.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleForm {
    /// 1 + β · ln(1 + ⌊(p + shift) / length⌋): 1 until position `length − shift`, then a slow,
    /// stepped growth (Llama 4's attention temperature tuning; Ministral 3's
    /// `llama_4_scaling_beta`).
    Stepped,
    /// (1 + (p + shift) / length)^β, smooth from the first position (Beam's scalable softmax,
    /// exp(β · log1p((p + 1) / 2048))).
    Power,
    /// 1 + β · ln(max((p + shift) / length, 1)): 1 until position `length − shift`, then a
    /// smooth logarithmic growth (Inkling's `log_scaling_n_floor` and `log_scaling_alpha`).
    Floored,
}

impl QueryScale {
    /// The factor at absolute position `pos`.
    pub fn at(&self, pos: u64) -> f64 {
        match self.form {
            ScaleForm::Stepped => {
                1.0 + self.beta * (1.0 + ((pos + self.shift) / self.length) as f64).ln()
            }
            ScaleForm::Floored => {
                let n = (pos + self.shift) as f64 / self.length as f64;
                1.0 + self.beta * n.max(1.0).ln()
            }
            ScaleForm::Power => {
                (self.beta * ((pos + self.shift) as f64 / self.length as f64).ln_1p()).exp()
            }
        }
    }

    pub fn applies(&self, layer: &LayerPlan) -> bool {
        !self.nope_only || !layer.rope
    }
}

/// A draft model that runs on its target's state (Gemma 4's assistants). Its input is the
/// target's (scaled) embedding of the last token beside the target's last hidden state,
/// [2·backbone], projected to its own width; every layer's queries attend over the keys and
/// values the target's last layer of that span kind made (no K/V projections, no cache of its
/// own), at the last token's position; the final hidden state, projected back to the target's
/// width, is the next draft step's hidden state. It drafts token after token at one position
/// against one set of keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Draft {
    /// The target's hidden size (`backbone_hidden_size`).
    pub backbone: u64,
    /// Logits for the tokens of the top-scoring clusters only (`use_ordered_embeddings`).
    pub centroids: Option<Centroids>,
}

/// The assistant's clustered head: `count` centroids score the final hidden state; the tokens of
/// the `top_k` best clusters (vocab / count each, listed by a stored `token_ordering`) get their
/// logits from the head's rows, every other token the smallest of those minus one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Centroids {
    pub count: u64,
    pub top_k: u64,
}

impl Centroids {
    /// Tokens per cluster.
    pub fn per_cluster(&self, vocab: u64) -> u64 {
        vocab / self.count
    }

    /// Tokens the head scores: those of the `top_k` kept clusters.
    pub fn kept(&self, vocab: u64) -> u64 {
        self.top_k * self.per_cluster(vocab)
    }
}

/// Where a multimodal wrapper keeps its language model's tensors, relative to the names the
/// language model has alone (`Layout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HfWrap {
    /// No wrapper: the names as they are.
    None,
    /// A module's name before every name (`language_model.` in Gemma 3's and Llama 4's
    /// checkpoints, `text_model.` in Emu3's).
    Prefix(&'static str),
    /// The language model's `model.` becomes `model.language_model.`; the head stays where it
    /// is (Qwen3.5's checkpoints).
    Nested,
    /// The model's `model.` becomes `model.{module}.`; with `head`, the head moves there too
    /// (BLT's stacks: `model.local_encoder.`, and the patcher's `model.patcher.lm_head`).
    Module { module: &'static str, head: bool },
}

impl HfWrap {
    /// The checkpoint's name for the language model's tensor `name`.
    pub fn apply(self, name: &str) -> String {
        match self {
            HfWrap::None => name.to_string(),
            HfWrap::Prefix(module) => format!("{module}.{name}"),
            HfWrap::Nested => match name.strip_prefix("model.") {
                Some(rest) => format!("model.language_model.{rest}"),
                None => name.to_string(),
            },
            HfWrap::Module { module, head } => match name.strip_prefix("model.") {
                Some(rest) => format!("model.{module}.{rest}"),
                None if head => format!("model.{module}.{name}"),
                None => name.to_string(),
            },
        }
    }
}

/// How a model stores its Q, K and V projections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Qkv {
    /// Three tensors.
    Separate,
    /// One tensor: every query head, then every key head, then every value head (Phi-3
    /// `qkv_proj`, GPT-2 `c_attn`, Falcon-7B).
    Stacked,
    /// One tensor in K/V groups: each group's query heads, its key head, its value head, group
    /// after group (GPT-NeoX and Bloom, one query head a group; Falcon-40B).
    Grouped,
    /// One tensor in `n` equal parts, each holding [q | v | k] of a 1/n share of the heads, in
    /// that order (CodeGen's model-parallel layout, n = 4).
    Parts(u64),
}

impl Qkv {
    pub fn fused(self) -> bool {
        self != Qkv::Separate
    }
}

/// How a decoder layer joins its two sublayers to the residual stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Block {
    /// Attention, then the FFN on the attention's result (Llama and most models).
    Sequential,
    /// Attention and FFN both read the layer's input and both add to it: x + attn(n(x)) +
    /// ffn(n'(x)), with one norm shared by both when `shared_norm` (GPT-J, Phi-2, Cohere,
    /// Falcon-7B) or two (GPT-NeoX, Falcon-40B).
    Parallel { shared_norm: bool },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QkNorm {
    None,
    /// RMSNorm over each head's head_dim, one weight shared by all heads (Qwen3, Gemma 3).
    PerHead,
    /// RMSNorm over the whole projection (OLMo 2).
    Full,
    /// Weightless RMS normalization of each head after RoPE, in RoPE layers only (Llama 4).
    L2,
    /// RMSNorm over each head's head_dim after RoPE, one weight shared by the heads (HunYuan).
    PerHeadPostRope,
    /// Each head projected onto the unit sphere before RoPE, without a weight (nGPT).
    Unit,
    /// LayerNorm without a shift over each head's head_dim before RoPE, every head with a weight
    /// of its own: stored [heads, head_dim] (Cohere's `use_qk_norm`, Command R+), or one
    /// LayerNorm per head where the layout names them by head (StableLM's `qk_layernorm`).
    HeadWeights,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Mla {
    pub q_lora_rank: Option<u64>,
    /// The Q and KV down-projections carry a bias (`attention_bias`; the output projection's
    /// is `Attention::o_bias`).
    pub bias: bool,
    pub kv_lora_rank: u64,
    pub qk_nope_head_dim: u64,
    pub qk_rope_head_dim: u64,
    /// DeepSeek sparse attention: a light indexer picks the keys each query attends to.
    pub indexer: Option<Indexer>,
    /// The query and the normed KV latent are multiplied by these, √(hidden / q_lora) and
    /// √(hidden / kv_lora) (LongCat-Flash); the KV factor reaches the values too.
    pub lora_scales: Option<(f64, f64)>,
    /// The queries and an output gate (one per head feature) come from one projection, stored as
    /// `q_b_proj`, of the normed query latent beside the raw one, 2 · q_lora features: each
    /// head's query rows, then its gate rows (A.X-K2).
    pub q_gate: bool,
    /// The ε of the Q and KV latents' RMS norms: `LATENT_EPS` in DeepSeek's classes, the
    /// model's `rms_norm_eps` where a class builds them at it (dots.3 Note).
    pub latent_eps: f64,
    /// The shared rotary key is RMS-normed (with a weight, at the model's ε) before RoPE
    /// (dots.3 Note's `k_rope_only_layernorm`).
    pub rope_key_norm: bool,
}

impl Mla {
    /// The ε DeepSeek's classes build the latents' RMS norms at, their norm's default, whatever
    /// the config's `rms_norm_eps`.
    pub const LATENT_EPS: f64 = 1e-6;
}

/// DeepSeek sparse attention's indexer (DeepSeek-V3.2, GLM-5): from the query latent and the
/// layer's input it scores every earlier token, Σₕ wₕ · ReLU(qₕ · k), and each query attends only
/// to its `top_k` best. Its keys (one `head_dim` vector per token, LayerNorm'd and rotated) are
/// cached.
#[derive(Debug, Clone, PartialEq)]
pub struct Indexer {
    pub heads: u64,
    pub head_dim: u64,
    pub top_k: u64,
    /// Its RoPE rotates interleaved pairs (GLM-5) rather than half against half (V3.2).
    pub interleaved: bool,
    /// Its RoPE rotates the last `qk_rope_head_dim` dims of each head rather than the first
    /// (HY v4).
    pub rope_last: bool,
    /// The ε of its key LayerNorm: 10⁻⁶ (V3.2, GLM-5) or the model's `rms_norm_eps` (HY v4).
    pub key_eps: f64,
    /// The layers that run an indexer of their own; every other layer reuses the choice of the
    /// last one before it that did (GLM-5's "shared" layers). Always holds layer 0.
    pub own: LayerSet,
}

impl Indexer {
    /// The norm on its keys: a LayerNorm with a bias and ε = 10⁻⁶, whatever the model's norm.
    pub fn key_norm(&self) -> Norm {
        Norm {
            kind: NormKind::Layer { bias: true },
            eps: self.key_eps,
            unit_offset: false,
            place: NormPlace::Pre,
        }
    }
}

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
    /// PhiMoE's SparseMixer at inference: two experts, the best logit and then the best of the
    /// rest, each weighted by a softmax over the logits within a relative `eps` · 2 of it (the
    /// others masked out, and for the second the first too).
    /// Inkling: experts chosen by σ(L) plus the correction bias over the routed ones; the chosen
    /// and the shared experts (which the router's last rows score) each weighted by its σ(L)
    /// normalized over them all, times `routed_scaling` and a learned scalar. The shared experts
    /// are each an MLP of their own, weighted so.
    SigmoidSink,
    /// √softplus of the logits, chosen after the correction bias (DeepSeek-V4).
    SqrtSoftplus,
    SparseMixer {
        eps: f64,
    },
}

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

/// Zamba2's shared transformer blocks. In each of `layers`, before the layer's mixer, a block
/// of attention (`Spec::attn`, without a residual) and a gated MLP (`Spec::mlp`) reads the
/// stream beside the token embeddings, [Xᵦ, X₀], 2 × hidden wide; its output, projected by the
/// layer's own square `linear`, is added to the mixer's input but not to the stream. The
/// blocks' weights are shared: visit j (the j-th of `layers`) runs block j mod `blocks`, whose
/// tensors sit under the first layer that runs it. Each visit has its own low-rank adapters.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedBlocks {
    /// The layers that run a block (`new` keeps `visits` in step with them).
    pub layers: LayerSet,
    /// The same layers in order, to find a layer's visit in log time: tensor names ask for it
    /// once per layer.
    visits: Vec<u64>,
    /// How many distinct blocks the visits take in turn (`num_mem_blocks`).
    pub blocks: u64,
    /// Each visit's adapter rank: W·x + B·(A·x) on the MLP's fused gate/up projection, and
    /// with `attn_adapters` on the attention's Q, K and V too.
    pub adapter_rank: u64,
    pub attn_adapters: bool,
}

impl SharedBlocks {
    pub fn new(layers: LayerSet, blocks: u64, adapter_rank: u64, attn_adapters: bool) -> Self {
        SharedBlocks {
            visits: layers.iter().collect(),
            layers,
            blocks,
            adapter_rank,
            attn_adapters,
        }
    }

    /// Layer b's visit number among the layers that run a block.
    pub fn visit(&self, b: u64) -> Option<u64> {
        self.visits.binary_search(&b).ok().map(|i| i as u64)
    }

    /// The layer whose checkpoint entry holds layer b's block: the first layer that runs it.
    pub fn source(&self, b: u64) -> u64 {
        let v = self.visit(b).unwrap_or(0) % self.blocks.max(1);
        self.visits.get(v as usize).copied().unwrap_or(b)
    }

    /// The layers whose checkpoint entries hold the blocks.
    pub fn sources(&self, layers: u64) -> LayerSet {
        let firsts: Vec<u64> = self.layers.iter().take(self.blocks as usize).collect();
        LayerSet::from_fn(layers, |b| firsts.contains(&b))
    }

    /// A tensor name template for layer b: `{m}` the layer holding its block, `{h}` its visit,
    /// `{d}` the path of the mixer's sublayer in a layer that runs a block (`mamba_decoder.`).
    pub fn place(&self, template: &str, b: u64) -> String {
        let visit = self.visit(b);
        template
            .replace("{m}", &self.source(b).to_string())
            .replace("{h}", &visit.unwrap_or(0).to_string())
            .replace(
                "{d}",
                if visit.is_some() {
                    "mamba_decoder."
                } else {
                    ""
                },
            )
    }
}

/// Falcon-H1's μP multipliers: the attention reads the normed input × `attn_in` and its output
/// is scaled by `attn_out`; Mamba2 the same with `ssm_in` and `ssm_out`; the MLP's gate
/// projection is scaled by `mlp_gate` before its activation, its output by `mlp_down`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mup {
    pub attn_in: f64,
    pub attn_out: f64,
    pub ssm_in: f64,
    pub ssm_out: f64,
    pub mlp_gate: f64,
    pub mlp_down: f64,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AttnSpan {
    Full,
    /// Every key the cache holds, those a pass adds after the query included: a prompt attends
    /// both ways, each decoded token to all before it (CPM-Ant).
    Whole,
    Sliding(u64),
    Chunked(u64),
}

impl AttnSpan {
    /// Tokens this layer keeps in its KV cache at `context`.
    pub fn cached_tokens(self, context: u64) -> u64 {
        match self {
            AttnSpan::Full | AttnSpan::Whole => context,
            AttnSpan::Sliding(w) | AttnSpan::Chunked(w) => w.min(context),
        }
    }

    pub fn describe(self) -> String {
        match self {
            AttnSpan::Full => "full".into(),
            AttnSpan::Whole => "bidirectional".into(),
            AttnSpan::Sliding(w) => format!("sliding {w}"),
            AttnSpan::Chunked(w) => format!("chunked {w}"),
        }
    }
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

#[derive(Debug, Clone, PartialEq)]
pub enum Position {
    Rope(Rope),
    /// Learned absolute positions added to the embedding (GPT-2).
    Learned,
    /// Fixed sinusoids added to the embedding: row r of the table is [sin(r·ωᵢ) …, cos(r·ωᵢ) …],
    /// the frequencies as the table says; position p reads row p + `Embedding::position_offset`.
    Sinusoidal(Sinusoids),
    /// ALiBi: each head's score of key j for the query at i gets slopes[h] · (j − i) (Bloom,
    /// MPT); one slope per query head.
    Alibi(Vec<f64>),
    /// None: order comes from the recurrence alone (Mamba2).
    None,
    /// T5's bucketed relative positions as a learned bias per head on the attention scores,
    /// one table for every layer (CPM-Ant): see `Buckets`.
    Buckets(Buckets),
}

/// A learned bias per head for each pair of positions, from a table of `buckets` rows (plus
/// one row per pair of segments where the model has segments, `Spec::prompt`). Half the
/// buckets are for keys before the query, half for keys after it; in each half the first
/// `buckets / 4` distances have a bucket each and the rest share buckets spaced by the log of
/// the distance up to `max_distance`, beyond which all share the last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Buckets {
    pub buckets: u64,
    pub max_distance: u64,
}

impl Buckets {
    /// The bucket of a key `rel` = j − i positions from its query, in float32 as transformers'
    /// `_position_bucket` computes it.
    pub fn bucket(&self, rel: i64) -> u64 {
        let half = self.buckets / 2;
        let exact = half / 2;
        let base = if rel > 0 { half } else { 0 };
        let a = rel.unsigned_abs();
        if a < exact {
            return base + a;
        }
        let span = (self.max_distance as f64 / exact as f64).ln() as f32;
        let far = ((a as f32 / exact as f32).ln() / span * (half - exact) as f32) as i64;
        base + (exact as i64 + far).clamp(0, half as i64 - 1) as u64
    }
}

/// CPM-Ant's frame around the text: `length` learned prompt tokens prepended to every input
/// (embedding rows `out_vocab() + 2·length` on, the third of the table's prompts, the only one
/// its causal LM reads), and a segment id per position, `PROMPT_SEGMENT` for the prompt and
/// `TEXT_SEGMENT` for the text, whose row of a `segments`-row table is added to each embedding.
/// A pair of positions in different segments reads the bias row `buckets + segment of the query
/// · segments + segment of the key` rather than a distance's. The prompt's positions are cached
/// like the text's; their outputs are dropped before the final norm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prompt {
    pub length: u64,
    pub segments: u64,
}

pub const PROMPT_SEGMENT: u64 = 0;
pub const TEXT_SEGMENT: u64 = 2;

impl Prompt {
    /// The embedding row of prompt position `p`.
    pub fn row(&self, text_vocab: u64, p: u64) -> u64 {
        text_vocab + 2 * self.length + p
    }

    /// The segment of absolute position `p` (the prompt's first).
    pub fn segment(&self, p: u64) -> u64 {
        if p < self.length {
            PROMPT_SEGMENT
        } else {
            TEXT_SEGMENT
        }
    }
}

/// Per-layer embeddings (Gemma 4's PLE). A second table gives each token `width` values per layer
/// (scaled by √width); the embeddings, projected to the same [layers, width], scaled by
/// 1/√hidden and RMS-normed per layer, are added to them and the sum scaled by 1/√2. At the end of
/// layer b: x ← x + norm(W_up (act(W_gate x) ⊙ pₛ)), pₛ that layer's `width` values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PerLayerInput {
    pub width: u64,
    /// The second table's rows.
    pub vocab: u64,
    /// Ids past the table read its row 0 (Gemma 3n); otherwise every id is in it.
    pub clamp_ids: bool,
}

/// A dense layer, activation and norm between the final norm and the LM head.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeadTransform {
    pub act: Act,
    /// The dense layer has a bias.
    pub bias: bool,
}

/// How a sinusoid table spaces its frequencies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sinusoids {
    /// fairseq's (XGLM): ωᵢ = 10000^(−i / (d/2 − 1)) for i < d/2, a zero column when d is odd.
    Fairseq,
    /// CTRL's: ωᵢ = 10000^(−2i / d), ⌈d/2⌉ sines then ⌊d/2⌋ cosines.
    Ctrl,
}

impl Sinusoids {
    /// The frequencies of the sines and of the cosines of width `d`.
    pub fn freqs(self, d: u64) -> (Vec<f64>, Vec<f64>) {
        match self {
            Sinusoids::Fairseq => {
                let half = d / 2;
                let step = (10000f64).ln() / (half.max(2) - 1) as f64;
                let f: Vec<f64> = (0..half).map(|i| (-(i as f64) * step).exp()).collect();
                (f.clone(), f)
            }
            Sinusoids::Ctrl => {
                let f = |n: u64| -> Vec<f64> {
                    (0..n)
                        .map(|i| 10000f64.powf(-2.0 * i as f64 / d as f64))
                        .collect()
                };
                (f(d.div_ceil(2)), f(d / 2))
            }
        }
    }
}

/// ALiBi's head slopes as Bloom computes them (`build_alibi_tensor`): a geometric series from
/// 2^(−8/n) for the largest power of two n ≤ heads, the rest interleaved from the series of 2n.
/// MPT's ALiBi slopes (transformers' `build_mpt_alibi_tensor`, bias max 8): 2^(−8i/n) for
/// i = 1..n over n, the next power of two of the heads; with fewer heads than that, the odd
/// ones first, then the even, cut to the heads.
/// Row `row` of the sinusoid table of width `d` (`Position::Sinusoidal`).
pub fn sinusoid_row(row: u64, d: u64, table: Sinusoids) -> Vec<f64> {
    let (sines, cosines) = table.freqs(d);
    let r = row as f64;
    let mut out: Vec<f64> = sines.iter().map(|w| (r * w).sin()).collect();
    out.extend(cosines.iter().map(|w| (r * w).cos()));
    out.resize(d as usize, 0.0);
    out
}

pub fn alibi_slopes_mpt(heads: u64) -> Vec<f64> {
    let n = heads.max(1).next_power_of_two();
    let all: Vec<f64> = (1..=n)
        .map(|i| 1.0 / 2f64.powf(i as f64 * 8.0 / n as f64))
        .collect();
    if n == heads {
        return all;
    }
    all.iter()
        .skip(1)
        .step_by(2)
        .chain(all.iter().step_by(2))
        .take(heads as usize)
        .copied()
        .collect()
}

pub fn alibi_slopes_bloom(heads: u64) -> Vec<f64> {
    let closest = 1u64 << (63 - heads.max(1).leading_zeros());
    let base = |n: u64| 2f64.powf(-(2f64.powf(-((n as f64).log2() - 3.0))));
    let mut s: Vec<f64> = (1..=closest)
        .map(|p| base(closest).powi(p as i32))
        .collect();
    if closest != heads {
        let extra = base(2 * closest);
        let remaining = closest.min(heads - closest);
        s.extend((0..remaining).map(|i| extra.powi((1 + 2 * i) as i32)));
    }
    s
}

#[derive(Debug, Clone, PartialEq)]
pub struct Rope {
    /// The frequencies of full-attention layers (of every layer unless `sliding` is set).
    pub full: RopeFreqs,
    /// The frequencies of sliding-window layers when they differ (Gemma 3: its own base, no
    /// scaling): transformers' `rope_parameters` per layer type.
    pub sliding: Option<RopeFreqs>,
    /// Fraction of head_dim that is rotated (1.0 for all of it).
    pub partial: f64,
    /// The sliding-window layers' fraction where it differs (Laguna: all of each head, while
    /// its full layers rotate half).
    pub sliding_partial: Option<f64>,
    /// Rotates interleaved pairs (x₀,x₁), (x₂,x₃) … (Llama 4, as complex numbers) rather than
    /// the two halves of each head (rotate_half, the transformers default).
    pub interleaved: bool,
    /// Rotates by −angle, sin negated (NanoChat's rotate_half is (x₂, −x₁)).
    pub reversed: bool,
}

impl Rope {
    /// The frequencies a layer of this span uses.
    pub fn freqs(&self, span: AttnSpan) -> &RopeFreqs {
        match (span, &self.sliding) {
            (AttnSpan::Sliding(_), Some(s)) => s,
            _ => &self.full,
        }
    }

    /// Rotated dims of a head of `head_dim`: transformers' `int(head_dim × partial)`, made even.
    pub fn rotary_dim(&self, head_dim: u64) -> u64 {
        ((head_dim as f64 * self.partial) as u64) / 2 * 2
    }

    /// The fraction a layer of this span rotates.
    pub fn partial_for(&self, span: AttnSpan) -> f64 {
        match (span, self.sliding_partial) {
            (AttnSpan::Sliding(_), Some(p)) => p,
            _ => self.partial,
        }
    }

    /// Rotated dims of a head of `head_dim` in a layer of this span.
    pub fn rotary_dim_for(&self, span: AttnSpan, head_dim: u64) -> u64 {
        ((head_dim as f64 * self.partial_for(span)) as u64) / 2 * 2
    }
}

/// One set of rotary frequencies: a base and how it is scaled.
#[derive(Debug, Clone, PartialEq)]
pub struct RopeFreqs {
    pub theta: f64,
    pub scaling: RopeScaling,
}

/// How a RoPE's inverse frequencies are rescaled for longer contexts, with every parameter
/// resolved to the value transformers computes with (`modeling_rope_utils`). Every view, the
/// executor and the reference code match this exhaustively; the loader refuses any other kind.
#[derive(Debug, Clone, PartialEq)]
pub enum RopeScaling {
    None,
    /// Every frequency divided by `factor` (positions interpolated).
    Linear {
        factor: f64,
    },
    /// Dynamic NTK: the base grows with the sequence once it passes `original` positions
    /// (transformers' `max_position_embeddings`); below that the frequencies are unscaled.
    Dynamic {
        factor: f64,
        original: u64,
    },
    /// Llama 3.1: long wavelengths slowed by `factor`, short ones kept, a smooth ramp between.
    Llama3 {
        factor: f64,
        low_freq_factor: f64,
        high_freq_factor: f64,
        original: u64,
    },
    /// YaRN: interpolation by `factor` ramped in between the dims that turn `beta_fast` and
    /// `beta_slow` times over `original` positions; cos and sin scaled by `attention_factor`.
    Yarn {
        factor: f64,
        original: u64,
        beta_fast: f64,
        beta_slow: f64,
        attention_factor: f64,
        /// Round the ramp's ends to whole dims (transformers' default; gpt-oss turns it off).
        truncate: bool,
    },
    /// LongRoPE (Phi-3 long-context): one rescale factor per frequency, `short` up to
    /// `original` positions and `long` beyond; cos and sin scaled by `attention_factor`.
    LongRope {
        short: Vec<f64>,
        long: Vec<f64>,
        original: u64,
        attention_factor: f64,
        /// PhiMoE's reading: the `short` factors at every length, cos and sin scaled by the first
        /// (`short_mscale`) up to `original` positions and by the second (`long_mscale`) beyond.
        mscale: Option<(f64, f64)>,
    },
    /// Proportional RoPE (LFM3, Gemma 4): the whole head's pairs (i, i + d/2), of which the first
    /// ⌊fraction · d / 2⌋ turn at base^(−2i/d), the head's own spacing, and the rest not at all;
    /// every frequency divided by `factor`. The layer's rotated fraction is then 1.
    Proportional {
        factor: f64,
        fraction: f64,
    },
}

impl RopeScaling {
    /// The name transformers gives this kind (`rope_type`).
    pub fn kind(&self) -> &'static str {
        match self {
            RopeScaling::None => "default",
            RopeScaling::Linear { .. } => "linear",
            RopeScaling::Dynamic { .. } => "dynamic",
            RopeScaling::Llama3 { .. } => "llama3",
            RopeScaling::Yarn { .. } => "yarn",
            RopeScaling::LongRope { .. } => "longrope",
            RopeScaling::Proportional { .. } => "proportional",
        }
    }

    /// The factor by which the context is stretched, where the kind has one.
    pub fn factor(&self) -> Option<f64> {
        match self {
            RopeScaling::None | RopeScaling::LongRope { .. } => None,
            RopeScaling::Linear { factor }
            | RopeScaling::Dynamic { factor, .. }
            | RopeScaling::Llama3 { factor, .. }
            | RopeScaling::Yarn { factor, .. }
            | RopeScaling::Proportional { factor, .. } => Some(*factor),
        }
    }
}

impl RopeScaling {
    /// In words (`llama3 scaling ×8 from 8192 positions`); empty for none.
    pub fn describe(&self) -> String {
        use crate::fmt::float;
        match self {
            RopeScaling::None => String::new(),
            RopeScaling::Linear { factor } => format!("linear scaling ×{}", float(*factor)),
            RopeScaling::Dynamic { factor, original } => {
                format!(
                    "dynamic NTK scaling ×{} beyond {original} positions",
                    float(*factor)
                )
            }
            RopeScaling::Llama3 {
                factor, original, ..
            } => {
                format!(
                    "llama3 scaling ×{} from {original} positions",
                    float(*factor)
                )
            }
            RopeScaling::Yarn {
                factor,
                original,
                truncate,
                ..
            } => format!(
                "YaRN scaling ×{} from {original} positions{}",
                float(*factor),
                if *truncate {
                    ""
                } else {
                    " (ramp not truncated)"
                }
            ),
            RopeScaling::LongRope {
                original,
                mscale: Some((short, long)),
                ..
            } => format!(
                "LongRoPE short per-dim factors, cos and sin ×{short} up to {original} positions, ×{long} beyond"
            ),
            RopeScaling::LongRope { original, .. } => {
                format!("LongRoPE per-dim factors (short up to {original} positions, long beyond)")
            }
            RopeScaling::Proportional { factor, fraction } => format!(
                "proportional: {} of each head's pairs turn, the rest stay still{}",
                float(*fraction),
                if *factor == 1.0 {
                    String::new()
                } else {
                    format!(", ×{}", float(*factor))
                }
            ),
        }
    }
}

impl RopeFreqs {
    /// `θ=500000, llama3 scaling ×8 from 8192 positions`.
    pub fn describe(&self) -> String {
        let scaling = self.scaling.describe();
        let theta = crate::fmt::float(self.theta);
        if scaling.is_empty() {
            format!("θ={theta}")
        } else {
            format!("θ={theta}, {scaling}")
        }
    }
}

impl Rope {
    /// The frequencies in words, with the sliding layers' own where they differ.
    pub fn describe(&self) -> String {
        match &self.sliding {
            None => self.full.describe(),
            Some(s) => format!(
                "{} in full-attention layers; {} in sliding layers",
                self.full.describe(),
                s.describe()
            ),
        }
    }
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

/// How a family names and lays out its checkpoint tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `model.layers.{b}.self_attn.q_proj.weight`, `mlp.gate_proj` (Llama, Mistral, Qwen, Gemma, OLMo, SmolLM3).
    Llama,
    /// Llama's names in HRM-Text's two stacks, `model.L_module.layers.{i}` and
    /// `model.H_module.layers.{i}`, and its stored initial state `model.z_L_init`.
    Hrm,
    /// BLT's stacks: Llama's names, with `cross_attn_layers.{b}` and the patch projections.
    Blt,
    /// Dory: Llama's names under `backbone.` (`NgptQueryScale` … beside them).
    Dory,
    /// Llama names with `block_sparse_moe.gate` and `experts.{e}.w1/w2/w3` (Mixtral).
    Mixtral,
    /// Qwen2-MoE's names with the Gated DeltaNet layers' `linear_attn.in_proj_qkvz`,
    /// `in_proj_ba`, `conv1d`, `dt_bias`, `A_log`, `norm`, `out_proj` (Qwen3-Next).
    Qwen3Next,
    /// Qwen3-Next's names with the DeltaNet's projections apart: `in_proj_qkv`, `in_proj_z`,
    /// `in_proj_b`, `in_proj_a` (Qwen3.5).
    Qwen35,
    /// Llama's names for the attention layers (with `q_norm`, `k_norm`), the DeltaNet's under
    /// `linear_attn.` (`q_proj`, `q_conv1d` …, `a_proj`, `b_proj`, `g_proj`, `o_norm`,
    /// `o_proj`), and norms as transformers saves them: `attention_layer_norm` before a
    /// DeltaNet, `feedforward_layer_norm` before its FFN or after an attention,
    /// `post_feedforward_layernorm` after an attention layer's FFN (OLMo hybrid).
    OlmoHybrid,
    /// Qwen3's attention names, the DeltaNet's under `linear_attn.` with one `in_proj` and
    /// `out_norm`, the experts stacked in `mlp.experts.gate_up_proj` and `down_proj` beside an
    /// ungated `mlp.shared_expert` (Lara Mini).
    LaraMini,
    /// Llama's attention names, Mamba2's under `mamba.` as Bamba's, the MLP as `feed_forward.`,
    /// its norm `pre_ff_layernorm`, and `model.final_layernorm` (Falcon-H1).
    FalconH1,
    /// DeepSeek's names under `attention.` (the output projection `dense`, the attention's gate
    /// `g_proj`), the Kimi Delta Attention there too (`f_proj`, `g_proj`, `dense` …), the
    /// embedding as `model.word_embeddings` and the correction bias as `mlp.gate.expert_bias`
    /// (Ling's hybrid, as transformers saves it).
    Bailing,
    /// DeepSeek's MLA names; the Kimi Delta Attention under `self_attn.` too (`q_proj`,
    /// `q_conv1d`, `f_a_proj`, `b_proj`, `g_a_proj`, `o_norm`, `o_proj` …); every FFN under
    /// `block_sparse_moe.` (the dense one's `gate_proj`, the experts' `w1`/`w2`/`w3`, the
    /// `gate` with its correction bias, `shared_experts`) (Kimi Linear, as transformers saves
    /// it).
    KimiLinear,
    /// Mixtral's names with the block's own `block_sparse_moe.e_score_correction_bias`
    /// (MiniMax-M2).
    MiniMaxM2,
    /// Llama's names with the lightning indexer's `self_attn.indexer.{q,k}_proj` and their
    /// norms, the experts stacked and the correction bias on the router (MiniMax-M3).
    MiniMaxM3,
    /// ZAYA: the attention's projections and convolutions under `self_attn.qkv_proj`, the
    /// router's MLP under `mlp.gate`, the residual adds' vectors under
    /// `post_attention_residual_scale` and `post_mlp_residual_scale`.
    Zaya,
    /// Mixtral's names; the lightning attention under `self_attn.` (`qkv_proj`,
    /// `output_gate`, `norm`, `out_proj` and its stored decay tables) (MiniMax).
    MiniMax,
    /// `temporal_pre_norm`, `temporal_block` (the attention's `q_proj` … or the recurrent
    /// block's `linear_x`, `linear_y`, `conv_1d`, `rg_lru`, `linear_out`), `channel_pre_norm`,
    /// `mlp_block`, `final_norm` (RecurrentGemma).
    RecurrentGemma,
    /// `rwkv.embeddings`, `rwkv.blocks.{b}.ln1`, `.attention.key` …, `.ln2`,
    /// `.feed_forward.key` …, `rwkv.ln_out`, `head`; the embeddings' norm as layer 0's `pre_ln`
    /// (RWKV).
    Rwkv,
    /// Llama names with `qkv_proj` and `gate_up_proj` (Phi-3).
    Phi3,
    /// Llama names with norms around each sublayer: `post_attention_layernorm` after attention,
    /// `pre_/post_feedforward_layernorm` around the MLP (Gemma 2/3, OLMo 2).
    Sandwich,
    /// `transformer.h.{b}.attn.c_attn`, Conv1D weights stored [in, out] (GPT-2).
    Gpt2,
    /// GPT-2's names with `nn.Linear` weights, stored [out, in] (GPT-BigCode).
    GptBigCode,
    /// GPT-2's names with `attn.attention.q_proj`…`out_proj` (GPT-Neo).
    GptNeo,
    /// `model.decoder.layers.{b}.self_attn.q_proj`…`out_proj`, `self_attn_layer_norm`,
    /// `fc1`/`fc2`, `final_layer_norm`, `model.decoder.embed_positions` (OPT).
    Opt,
    /// Llama names plus MLA projections, `mlp.shared_experts` and `gate.e_score_correction_bias` (DeepSeek V2/V3, GLM-4.5).
    DeepSeek,
    /// DeepSeek's names without MLA, the sinks as `self_attn.attention_sink_bias`
    /// (MiMo-V2-Flash's checkpoints).
    MiMo,
    /// `transformer.wte`, `transformer.blocks.{b}.norm_attn_norm.norm_1`, `attn.Wqkv`,
    /// `attn.out_proj`, `norm_2`, `ffn.router.layer`, the experts flat in `ffn.experts.mlp.w1`,
    /// `v1`, `w2`, and `transformer.norm_f` (DBRX).
    Dbrx,
    /// Qwen2-MoE's names with the output gate as `self_attn.g_proj` and the correction bias as
    /// `mlp.experts.e_score_correction_bias` (Laguna).
    Laguna,
    /// Llama's norms, `self_attention.kv_proj` (K then V), the attention experts under
    /// `self_attention.experts.` (`router.layer`, stacked `input_linear` and `output_linear`,
    /// `bias`) and the MLP experts under `mlp.` the same way (JetMoE).
    JetMoe,
    /// Llama names plus `self_attn.sinks`, `mlp.router` and stacked `mlp.experts.gate_up_proj` (gpt-oss).
    GptOss,
    /// `feed_forward.router`, stacked `feed_forward.experts.gate_up_proj`, `feed_forward.shared_expert` (Llama 4).
    Llama4,
    /// Llama names with norms around each sublayer: `post_self_attn_layernorm` after attention,
    /// `post_attention_layernorm` before the MLP and `post_mlp_layernorm` after it; gate and up
    /// fused (GLM-4).
    Glm4,
    /// Llama names with a plain MLP of `mlp.c_fc` and `mlp.c_proj` (StarCoder2).
    Starcoder2,
    /// Llama names with `self_attn.dense`, `mlp.fc1`/`fc2`, `q_layernorm`/`k_layernorm` and
    /// `model.final_layernorm` (Phi-2).
    Phi,
    /// Gemma 3's names (`Sandwich`), per-layer embeddings' `model.embed_tokens_per_layer`,
    /// `per_layer_model_projection`, `per_layer_projection_norm` and each layer's
    /// `per_layer_input_gate`, `per_layer_projection`, `post_per_layer_input_norm`,
    /// `layer_scalar` (Gemma 4).
    Gemma4,
    /// Llama's and DeepSeek's names, a checkpoint layer's two sublayers in lists of two:
    /// `model.layers.{p}.self_attn.{s}.q_a_proj`, `mlps.{s}.gate_proj`, `input_layernorm.{s}`,
    /// the one MoE `mlp.router.classifier`, `mlp.experts.{e}.gate_proj` (LongCat-Flash).
    LongCat,
    /// `gpt_neox.layers.{b}.attention.query_key_value`, `attention.dense`,
    /// `mlp.dense_h_to_4h`/`dense_4h_to_h`, `gpt_neox.embed_in`, `embed_out` (GPT-NeoX).
    GptNeox,
    /// `transformer.h.{b}.self_attention.query_key_value`, `self_attention.dense`,
    /// `input_layernorm`, `mlp.dense_h_to_4h`/`dense_4h_to_h`, `transformer.word_embeddings`,
    /// `transformer.ln_f` (Falcon).
    Falcon,
    /// Falcon's names with a norm for each sublayer: `ln_attn` and `ln_mlp` (Falcon-40B).
    FalconTwoNorms,
    /// `transformer.h.{b}.attn.attention.q_proj`, `attn.attention.out_proj`, `ln_1`/`ln_2`,
    /// `mlp.c_fc_0` (gate), `c_fc_1` (up), `c_proj`, `transformer.wte`, `transformer.ln_f`
    /// (EXAONE 3, which transformers loads and saves under these names).
    Exaone,
    /// Llama names with `self_attn.query_layernorm`/`key_layernorm` (HunYuan).
    HunYuan,
    /// Llama names with `attention_layernorm` and `feedforward_layernorm` before the sublayers
    /// and a plain MLP whose xIELU holds parameters (`mlp.act_fn.alpha_p`…) (Apertus).
    Apertus,
    /// `transformer.word_embeddings` and its `word_embeddings_layernorm`,
    /// `transformer.h.{b}.self_attention.query_key_value` (per head: q, k, v),
    /// `self_attention.dense`, `mlp.dense_h_to_4h`/`dense_4h_to_h`, `transformer.ln_f` (Bloom).
    Bloom,
    /// `transformer.h.{b}.ln_1`, `attn.q_proj`…`attn.out_proj`, `mlp.fc_in`/`fc_out`,
    /// `transformer.wte`, `transformer.ln_f` (GPT-J).
    Gptj,
    /// `self_attn.query_key_value` (per head: q, k, v), `self_attn.dense`,
    /// `q_layernorm`/`k_layernorm`, `mlp.dense_h_to_4h`/`dense_4h_to_h`,
    /// `model.final_layernorm` (Persimmon).
    Persimmon,
    /// Llama names with one `mlp.shared_expert` and its `mlp.shared_expert_gate` (Qwen2-MoE).
    Qwen2Moe,
    /// Llama names with `block_sparse_moe.router.layer` and every expert stacked in
    /// `block_sparse_moe.input_linear` and `output_linear` (GraniteMoE).
    GraniteMoe,
    /// GraniteMoE's tensors as transformers 5 names them: `block_sparse_moe.router` and the
    /// stacked `block_sparse_moe.experts.gate_up_proj` / `down_proj`, without `.weight`
    /// (GraniteMoeSWA).
    GraniteMoeSwa,
    /// DeepSeek's names but for the attention as Sarvam stores it: `model.word_embeddings`,
    /// `attention.query_key_value` ([q|k|v] rows), `attention.dense`, `query_layernorm` and
    /// `key_layernorm`, and the router's `gate.expert_bias` (Sarvam-MoE).
    Sarvam,
    /// Llama's names with a plain MLP's `mlp.fc1` and `mlp.fc2` (NanoChat).
    NanoChat,
    /// Llama's names with sandwich norms `post_norm1` (after attention),
    /// `post_attention_layernorm` (before the FFN) and `post_norm2` (HyperCLOVA X).
    HyperClovax,
    /// GPT-2's Conv1D names under `transformer.`: `tokens_embed`, `positions_embed`, `h.N`
    /// with `attn.c_attn`, `attn.c_proj`, `ln_1`, `mlp.c_fc`, `mlp.c_proj`, `ln_2` (GPT-1).
    OpenAiGpt,
    /// BERT's names under `git.`: `embeddings.word_embeddings`, `position_embeddings`,
    /// `LayerNorm`; `encoder.layer.{b}.attention.self.query` …, `attention.output.dense` and
    /// `LayerNorm`, `intermediate.dense`, `output.dense` and `LayerNorm`; the head `output` (GIT).
    Git,
    /// GPT-J's names with one `attn.qkv_proj` (CodeGen).
    CodeGen,
    /// OPT's layer names under `model.`, the final norm `model.layer_norm` (XGLM).
    Xglm,
    /// Llama's names, the QK LayerNorms one per head (`self_attn.q_layernorm.norms.{e}`,
    /// StableLM 2 12B's `qk_layernorm`).
    StableLm,
    /// `cpmant.encoder.layers.{b}.self_att.self_attention.project_q`, `ffn.ffn.w_in.w_0`, the
    /// segment and position-bias tables beside the embedding (CPM-Ant).
    CpmAnt,
    /// OPT's layer names under `biogpt.`, the final norm `biogpt.layer_norm` and the head
    /// `output_projection` (BioGPT).
    BioGpt,
    /// `transformer.wte`, `transformer.blocks.N` with `norm_1`, `attn.Wqkv`, `attn.out_proj`,
    /// `norm_2`, `ffn.up_proj`, `ffn.down_proj`, and `transformer.norm_f` (MPT).
    Mpt,
    /// Llama's names, with the correction bias in the MoE block's `moe_statics`, stored [1, E]
    /// (ERNIE 4.5 MoE).
    Ernie45Moe,
    /// Llama's names with `post_attn_norm` after attention, `post_attention_layernorm` before
    /// the MLP, `post_ffn_norm` after it, and the correction bias as `moe.router.expert_bias`
    /// (Kolibri's checkpoints).
    Kolibri,
    /// Llama's names with the router as `mlp.router` and every expert stacked in
    /// `mlp.experts.fc1` (gate and up, [E, hidden, 2·inter]) and `fc2` (Aria).
    Aria,
    /// `transformer.w`, `transformer.h.{b}.multi_head_attention.Wq`…`dense`, `layernorm1`/`2`,
    /// `ffn.0`/`ffn.2`, `transformer.layernorm` (CTRL).
    Ctrl,
    /// `gpt_neox_japanese.embed_in`, `gpt_neox_japanese.layers.{b}.attention.query_key_value`
    /// (per head: q, k, v), `attention.dense`, `mlp.dense_h_to_4h`/`dense_4h_to_h`,
    /// `final_layer_norm`, `embed_out` (GPT-NeoX-Japanese).
    GptNeoxJapanese,
    /// `model.embeddings.tok_embeddings` and `norm`, `model.layers.{b}.attn_norm`,
    /// `attn.q_proj`…`attn.Wo`, `mlp_norm`, `mlp.Wi` (gate and up) and `mlp.Wo`,
    /// `model.final_norm`, `lm_head.dense`/`norm` and `decoder` (ModernBERT-decoder).
    ModernBertDecoder,
    /// Qwen2-MoE's names with the sinks as `self_attn.softmax_offset` (Flint's checkpoints).
    Flint,
    /// Llama's names with `pre_mlp_layernorm` before the MLP and `post_mlp_layernorm` after it,
    /// the router as `mlp.router.gate` and the correction bias as `mlp.expert_bias` (AFMoE).
    Afmoe,
    /// Llama's names with the correction bias on the MoE block, `mlp.e_score_correction_bias`
    /// (EXAONE MoE's checkpoints).
    ExaoneMoe,
    /// Llama's names with the router as `mlp.router.gate`, the correction bias as
    /// `mlp.expert_bias` and the shared experts as `mlp.shared_mlp` (HY-V3's checkpoints).
    HyV3,
    /// HY v4: DeepSeek's names, with every `gate_proj` stored as `linear_gate`, the sinks as
    /// `learnable_sink_param` and the hyper-connections under `hc_pre`.
    HyV4,
    /// DeepSeek-V4: its attention's `q_a_proj` … `o_b_proj` and `compressor.…`, `sinks`, the
    /// hyper-connections' `attn_hc.fn` …, the router's `tid2eid`.
    DeepseekV4,
    /// A.X-K2: DeepSeek's names, each gated norm a module of its own (`input_layernorm.norm`,
    /// `.W_down`, `.W_up`).
    Axk2,
    /// dots.3 Note: DeepSeek's names, the output gate as `self_attn.g_proj` and the rotary key's
    /// norm as `self_attn.k_rope_only_layernorm`.
    Dots3,
    /// Gemma 3n: Gemma's sandwich names, with each layer's `altup` and `laurel` modules and the
    /// model's `altup_projections` and `altup_unembed_projections`.
    Gemma3n,
    /// GraniteMoE's names, the shared MLP as `shared_mlp` (the whole FFN in a model without
    /// experts), the Mamba2 mixer as `mamba` (GraniteMoeHybrid).
    GraniteMoeHybrid,
    /// `backbone.embeddings`, `backbone.layers.{b}.norm` and every sublayer as
    /// `backbone.layers.{b}.mixer` (Mamba2's, attention's, the MLP's `up_proj`/`down_proj`, the
    /// experts' `gate`, `experts.{e}`, `shared_experts`), `backbone.norm_f` (Nemotron-H).
    NemotronH,
    /// `model.layers.{b}.operator_norm`, `self_attn.q_layernorm`…`out_proj` or `conv.in_proj`,
    /// `conv.conv`, `conv.out_proj`, `ffn_norm`, `feed_forward.w1`/`w3`/`w2`, and the final norm
    /// as `model.embedding_norm` (LFM2).
    Lfm2,
    /// LFM2's names with Qwen3's attention (`q_norm`, `k_norm`, `o_proj`, the gate as
    /// `gate_proj`) and norms after each sublayer (`post_operator_norm`, `post_ffn_norm`) (LFM3).
    Lfm3,
    /// Llama's names with `pre_ff_layernorm` before the MLP, the MLP (or the router and each
    /// expert) under `feed_forward`, the Mamba or Mamba2 mixer as `mamba` and the final norm as
    /// `model.final_layernorm` (Bamba, Jamba).
    Bamba,
    /// `backbone.embeddings`, `backbone.layers.{b}.norm`, `mixer.in_proj`, `conv1d`, `dt_bias`,
    /// `A_log`, `D`, `norm`, `out_proj`, `backbone.norm_f` (Mamba2).
    Mamba2,
    /// Mamba2 under `model.layers.{b}.mamba` (`mamba_decoder.mamba` in the layers that run a
    /// shared block), the shared blocks under the first layer that runs each
    /// (`shared_transformer.self_attn`, `feed_forward.gate_up_proj`, the visits' adapter lists),
    /// each such layer's `linear`, and `model.final_layernorm` (Zamba2).
    Zamba2,
    /// Zamba2's names with the block as `shared_transf`, its MLP's `gate_proj` and `up_proj`
    /// apart, and the multi-head Mamba's per-head `x_proj_weight`, `dt_proj_weight` and
    /// `dt_proj_bias` (Zamba).
    Zamba,
    /// `backbone.embeddings`, `backbone.blocks.{b}.norm_mlstm`, `mlstm_layer.q` … `igate_preact`,
    /// `fgate_preact`, `multihead_norm`, `out_proj`, `norm_ffn`, `ffn.proj_up_gate`, `proj_up`,
    /// `proj_down`, `backbone.out_norm` (xLSTM).
    Xlstm,
    /// Llama's names, plus `embed_tokens.embed_norm`, `self_attn.r_proj`, the convolutions
    /// `self_attn.k_sconv`, `v_sconv`, `attn_sconv` and `mlp_sconv` (each `.conv1d`), the bank
    /// `rel_logits_proj.proj`, the scalars `mlp.global_scale` and `mlp.gate.global_scale`, and
    /// the stacked experts and shared experts (`mlp.experts.gate_up_proj`,
    /// `mlp.shared_experts.gate_proj` [S, I, H]) (Inkling).
    Inkling,
    /// Inkling 2: its projections as modules (`q_proj.linear`, `q_proj.norm.scale`,
    /// `k_proj.sconv.conv1d` or `.static_weight` and `.weight_proj`, `o_proj.gate_proj` and
    /// `.linear`, `relative_position_bias.*`, `sink_proj`), the full layers'
    /// `q/k/v_input_layernorm`, `post_attention_convolution`, `post_mlp_convolution`, the block
    /// attention residuals' `attention_input`, `mlp_input` and `final_input` queries.
    Inkling2,
}

impl Layout {
    /// Linear weights are stored [in, out] (GPT-2's Conv1D) rather than [out, in].
    pub fn stores_in_out(self) -> bool {
        matches!(self, Layout::Gpt2 | Layout::OpenAiGpt)
    }

    /// The stored shape of the routers' correction bias over `experts` experts.
    pub fn correction_shape(self, experts: u64) -> Vec<u64> {
        if self == Layout::Ernie45Moe {
            vec![1, experts]
        } else {
            vec![experts]
        }
    }
}

impl Spec {
    /// A tensor's name for layer b and expert e from its template (`naming::instantiate`), with
    /// Zamba2's shared-block placeholders filled in (`SharedBlocks::place`).
    pub fn instantiate(&self, template: &str, b: Option<u64>, e: Option<u64>) -> String {
        match (&self.shared, self.hierarchy, b) {
            (Some(s), _, Some(b)) => crate::naming::instantiate(&s.place(template, b), Some(b), e),
            // HRM: `{stack}` is the layer's stack, numbered within it.
            (_, Some(h), Some(b)) if template.contains("{stack}") => {
                let (low, i) = h.locate(b);
                let module = if low { "L_module" } else { "H_module" };
                crate::naming::instantiate(&template.replace("{stack}", module), Some(i), e)
            }
            _ => crate::naming::instantiate(template, b, e),
        }
    }

    /// The final norm: the blocks' norm, or of a kind of its own (`final_norm_kind`).
    pub fn final_norm(&self) -> Norm {
        Norm {
            kind: self.final_norm_kind.unwrap_or(self.norm.kind),
            ..self.norm.clone()
        }
    }

    /// How many times layer `b` runs for one token: once, or once per visit of its stack
    /// (`Hierarchy`).
    pub fn runs(&self, b: u64) -> u64 {
        match (self.hierarchy, self.looped) {
            (Some(h), _) => h.runs(b),
            (None, Some(l)) => l.runs(b),
            (None, None) => match self.attn_res.and_then(|r| r.looped) {
                Some(l) if l.contains(b) => l.passes,
                Some(_) | None => 1,
            },
        }
    }

    /// How many copies of its keys and values layer `b` caches: one per run, but one in all in
    /// a looped section whose last pass alone caches (`Looped::shared_cache`).
    pub fn caches(&self, b: u64) -> u64 {
        match self.looped {
            Some(l) => l.caches(b),
            None => self.runs(b),
        }
    }

    /// The runs of the layers of `set` for one token: their count where no layer runs twice,
    /// else each one's runs (a walk over the set, which only a loop needs).
    pub fn runs_over(&self, set: &LayerSet) -> u128 {
        let loops = self.attn_res.is_some_and(|r| r.looped.is_some());
        if self.hierarchy.is_none() && self.looped.is_none() && !loops {
            return set.len() as u128;
        }
        set.iter().map(|b| self.runs(b) as u128).sum()
    }

    /// The width of the token table and of the LM head's rows: `hidden` unless the embeddings
    /// are projected (`Embedding::projected`).
    pub fn embed_width(&self) -> u64 {
        self.embedding.projected.unwrap_or(self.hidden)
    }

    /// How many logits the LM head produces: its rows.
    pub fn out_vocab(&self) -> u64 {
        self.head_rows.unwrap_or(self.vocab)
    }

    /// The logits a forward pass gives per position: the head's rows, or the first of them it
    /// keeps (`logits_kept`).
    pub fn logits_width(&self) -> u64 {
        self.logits_kept.unwrap_or(self.out_vocab())
    }

    /// The row of the position-bias table (`Position::Buckets`) that the query at absolute
    /// position `q` reads for the key at `k`.
    pub fn bias_row(&self, b: Buckets, q: u64, k: u64) -> u64 {
        match self.prompt {
            Some(p) if p.segment(q) != p.segment(k) => {
                b.buckets + p.segment(q) * p.segments + p.segment(k)
            }
            _ => b.bucket(k as i64 - q as i64),
        }
    }

    /// Rows of the position-bias table.
    pub fn bias_rows(&self, b: Buckets) -> u64 {
        b.buckets + self.prompt.map_or(0, |p| p.segments * p.segments)
    }

    /// Positions cached for `context` tokens of text: the prompt's too.
    pub fn cached_positions(&self, context: u64) -> u64 {
        context + self.prompt.map_or(0, |p| p.length)
    }

    pub fn is_moe(&self) -> bool {
        self.moe.is_some() && self.plan.iter().any(|l| l.moe())
    }

    /// Where layer `b`'s norms sit.
    pub fn place_at(&self, b: usize) -> NormPlace {
        match self.recurrent_place {
            Some(p) if self.plan[b].mixer.recurrent() => p,
            _ => self.norm.place,
        }
    }

    /// A mixer's name in this model: a DeltaNet's by its variant (Kimi's has its own).
    pub fn mixer_title(&self, m: Mixer) -> &'static str {
        match (m, &self.delta) {
            (Mixer::DeltaNet, Some(d)) => d.name(),
            _ => m.title(),
        }
    }

    /// A mixer as a phrase: `mixer_title`'s name for a DeltaNet, `Mixer::describe` otherwise.
    pub fn mixer_describe(&self, m: Mixer) -> String {
        match (m, &self.delta) {
            (Mixer::DeltaNet, Some(d)) => d.name().into(),
            _ => m.describe(),
        }
    }

    /// Layers whose plan entry satisfies `f`.
    pub fn layers_where(&self, f: impl Fn(&LayerPlan) -> bool) -> LayerSet {
        LayerSet::from_fn(self.layers, |b| f(&self.plan[b as usize]))
    }

    /// The factors of layer b's residual add after its attention (`ffn` false) or its FFN:
    /// (the stream's, the sublayer output's); (1, 1) unless `depth_scaled`.
    pub fn depth_factors(&self, b: u64, ffn: bool) -> (f64, f64) {
        if !self.depth_scaled {
            return (1.0, 1.0);
        }
        let k = (2 * b + 2 + ffn as u64) as f64;
        (((k - 1.0) / k).sqrt(), 1.0 / k.sqrt())
    }

    /// The span of layer b's softmax attention: its mixer's, or a shared block's (Zamba2), which
    /// sees every earlier token.
    /// DeepSeek-V4's window, which every layer attends over (`Attention::v4`).
    pub fn v4_window(&self) -> u64 {
        match self.plan.first().and_then(|l| l.span()) {
            Some(AttnSpan::Sliding(w)) => w,
            other => {
                unreachable!("DeepSeek-V4's layers attend over a sliding window, not {other:?}")
            }
        }
    }

    /// DeepSeek-V4's sliding layers' RoPE frequencies (its compressed layers' are
    /// `V4Attn::compress_freqs`).
    pub fn v4_main_freqs(&self) -> &RopeFreqs {
        match &self.position {
            Position::Rope(r) => &r.full,
            other => unreachable!("DeepSeek-V4 rotates by RoPE, not {other:?}"),
        }
    }

    pub fn attn_span(&self, b: u64) -> Option<AttnSpan> {
        self.plan[b as usize].span().or_else(|| {
            self.shared
                .as_ref()
                .and_then(|s| s.visit(b))
                .map(|_| AttnSpan::Full)
        })
    }

    /// The keys a query of layer `b` reads, as a span: `attn_span`, except that a draft model's
    /// query, at the last token's position, reads its target's keys through a bidirectional
    /// window, |q − k| ≤ w, turned to look back: one key more than the target's own window.
    pub fn read_span(&self, b: u64) -> Option<AttnSpan> {
        match (self.attn_span(b), self.draft) {
            (Some(AttnSpan::Sliding(w)), Some(_)) => Some(AttnSpan::Sliding(w + 1)),
            (span, _) => span,
        }
    }

    /// The layers that run softmax attention: as their mixer, or in a shared block (Zamba2).
    pub fn attending_layers(&self) -> LayerSet {
        let own = self.layers_where(|l| l.span().is_some());
        match &self.shared {
            Some(s) => own.union(&s.layers),
            None => own,
        }
    }

    /// How layers differ, one line per property that varies: attention span, RoPE, FFN kind
    /// (`FFN: dense in 0–2 · MoE in 3–60`). Empty when every layer is alike.
    pub fn plan_summary(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut describe = |what: &str, kinds: Vec<(String, LayerSet)>| {
            let kinds: Vec<_> = kinds.into_iter().filter(|(_, s)| !s.is_empty()).collect();
            if kinds.len() > 1 {
                let parts: Vec<String> = kinds.iter().map(|(k, s)| format!("{k} in {s}")).collect();
                out.push(format!("{what}: {}", parts.join(" · ")));
            }
        };
        let mut mixers: Vec<Mixer> = self.plan.iter().map(|l| l.mixer).collect();
        mixers.sort();
        mixers.dedup();
        if mixers.iter().all(|m| matches!(m, Mixer::Attention(_))) {
            describe(
                "attention",
                mixers
                    .iter()
                    .filter_map(|m| m.span_of())
                    .map(|k| (k.describe(), self.layers_where(|l| l.span() == Some(k))))
                    .collect(),
            );
        } else {
            describe(
                "mixer",
                mixers
                    .iter()
                    .map(|m| {
                        (
                            self.mixer_describe(*m),
                            self.layers_where(|l| l.mixer == *m),
                        )
                    })
                    .collect(),
            );
        }
        let variants = self.attn_variants();
        if variants.len() > 1 {
            let sizes = variants
                .iter()
                .any(|(a, _)| a.head_dim != variants[0].0.head_dim);
            describe(
                "heads",
                variants
                    .into_iter()
                    .map(|(a, set)| {
                        let mut what = format!("{}/{} (Q/KV)", a.heads, a.kv_heads);
                        if sizes {
                            what += &format!(" of {}", a.head_dim);
                        }
                        for (on, words) in [
                            (a.sinks, " with sinks"),
                            (a.v_from_k, ", keys as values"),
                            (
                                a.shares_kv && self.draft.is_none(),
                                ", K/V of an earlier layer",
                            ),
                            (a.shares_kv && self.draft.is_some(), ", K/V of the target's"),
                            (a.block_index.is_some(), " on the blocks an indexer picks"),
                            (
                                a.mla.as_ref().is_some_and(|m| m.indexer.is_some()),
                                " on the keys an indexer picks",
                            ),
                        ] {
                            if on {
                                what += words;
                            }
                        }
                        (what, set)
                    })
                    .collect(),
            );
        }
        describe(
            "RoPE",
            vec![
                ("applied".into(), self.layers_where(|l| l.rope)),
                (
                    "none".into(),
                    self.layers_where(|l| !l.rope && l.span().is_some()),
                ),
            ],
        );
        let moe = match &self.moe {
            Some(m) => format!("MoE ({} experts, {} active)", m.experts, m.top_k),
            None => "MoE".into(),
        };
        describe(
            "FFN",
            vec![
                ("dense".into(), self.layers_where(|l| l.ffn == Ffn::Dense)),
                (
                    "dense with the MoE beside it".into(),
                    self.layers_where(|l| matches!(l.ffn, Ffn::Shortcut | Ffn::DenseAndMoe)),
                ),
                (moe, self.layers_where(|l| l.ffn == Ffn::Moe)),
                ("none".into(), self.layers_where(|l| l.ffn == Ffn::None)),
            ],
        );
        if let Some(ix) = self.attn.mla.as_ref().and_then(|m| m.indexer.as_ref()) {
            describe(
                "indexer",
                vec![
                    ("own".into(), ix.own.clone()),
                    (
                        "reused from the layer before".into(),
                        self.indexer_reusers(),
                    ),
                ],
            );
        }
        out
    }

    /// The query heads that share one K/V head (in the layers of `attn`).
    pub fn group_size(&self) -> u64 {
        self.attn.heads / self.attn.kv_heads.max(1)
    }

    /// The layer whose keys and values layer `b` attends over: `b` itself, or for a layer that
    /// shares them the last layer before it of the same span kind that projects its own.
    pub fn kv_source(&self, b: usize) -> usize {
        if !self.attn_at(b).shares_kv {
            return b;
        }
        let kind = self.plan[b].span().map(|s| std::mem::discriminant(&s));
        // A draft model's layers read their target's keys, which its drafter holds at its first
        // layer of each span kind.
        if self.draft.is_some() {
            return (0..=b)
                .find(|&s| self.plan[s].span().map(|s| std::mem::discriminant(&s)) == kind)
                .unwrap_or(b);
        }
        self.own_kv_before(b, kind)
            .expect("a loader that shares keys and values checks there is a layer to share")
    }

    /// The last layer before `b` of span kind `kind` (a discriminant of `AttnSpan`) that
    /// projects keys and values of its own: what a later layer of that kind shares, and what a
    /// draft model reads of its target (with `b` the target's layer count).
    pub fn own_kv_before(
        &self,
        b: usize,
        kind: Option<std::mem::Discriminant<AttnSpan>>,
    ) -> Option<usize> {
        (0..b).rev().find(|&s| {
            !self.attn_at(s).shares_kv
                && self.plan[s].span().map(|s| std::mem::discriminant(&s)) == kind
        })
    }

    /// The width of layer `b`'s dense MLP.
    /// Is layer `b`'s FFN norm gated (A.X-K2's MoE layers)?
    pub fn gated_ffn_norm(&self, b: usize) -> bool {
        self.gated_norm.is_some() && self.plan[b].moe()
    }

    /// The fraction of layer `b`'s MLP gate that activation sparsity drops, if any.
    pub fn sparsity_at(&self, b: usize) -> Option<f64> {
        self.sparsity
            .iter()
            .find(|(set, _)| set.contains(b as u64))
            .map(|(_, p)| *p)
    }

    pub fn mlp_width(&self, b: usize) -> u64 {
        self.mlp_widths
            .iter()
            .find(|(set, _)| set.contains(b as u64))
            .map_or(self.mlp.intermediate, |(_, w)| *w)
    }

    /// The attention of layer `b`.
    pub fn attn_at(&self, b: usize) -> &Attention {
        self.layer_attn
            .iter()
            .find(|(set, _)| set.contains(b as u64))
            .map_or(&self.attn, |(_, a)| a)
    }

    /// The attention of the first layer of a span of this kind (`attn` when there is none).
    pub fn attn_for(&self, span: AttnSpan) -> &Attention {
        let kind = std::mem::discriminant(&span);
        match self
            .plan
            .iter()
            .position(|l| l.span().map(|s| std::mem::discriminant(&s)) == Some(kind))
        {
            Some(b) => self.attn_at(b),
            None => &self.attn,
        }
    }

    /// Copies of the hidden state the residual stream holds: hyper-connections' or gated
    /// streams' n, else 1.
    pub fn streams(&self) -> u64 {
        match (self.hyper, self.gated_streams) {
            (Some(h), _) => h.streams,
            (None, Some(g)) => g.streams,
            (None, None) => 1,
        }
    }

    /// The layers of `attn` with DeepSeek sparse attention's indexer that reuse an earlier
    /// layer's choice of keys rather than run their own (GLM-5's shared layers): empty where
    /// each runs its own, or none has one. Layers with an attention of their own
    /// (`layer_attn`, dots.3 Note's sliding layers) have no indexer to reuse.
    pub fn indexer_reusers(&self) -> LayerSet {
        let own = self
            .attn
            .mla
            .as_ref()
            .and_then(|m| m.indexer.as_ref())
            .map(|ix| &ix.own);
        LayerSet::from_fn(self.layers, |b| {
            own.is_some_and(|own| !own.contains(b))
                && self.plan[b as usize].span().is_some()
                && !self.layer_attn.iter().any(|(set, _)| set.contains(b))
        })
    }

    /// Each distinct attention with the layers that use it, `attn` first: one entry unless
    /// some layers have their own (`layer_attn`); none without attention layers.
    pub fn attn_variants(&self) -> Vec<(&Attention, LayerSet)> {
        let others = LayerSet::from_fn(self.layers, |b| {
            self.plan[b as usize].span().is_some()
                && !self.layer_attn.iter().any(|(set, _)| set.contains(b))
        });
        std::iter::once((&self.attn, others))
            .chain(self.layer_attn.iter().map(|(set, a)| (a, set.clone())))
            .filter(|(_, set)| !set.is_empty())
            .collect()
    }
}

/// Φ⁻¹(p): the standard normal's quantile, the number of standard deviations above the mean
/// below which a fraction `p` of a Gaussian lies (Gemma 3n's activation sparsity cut-off).
pub fn normal_quantile(p: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    Normal::standard().inverse_cdf(p)
}

#[cfg(test)]
mod quantile_tests {
    /// The value torch's Normal(0, 1).icdf gives in float32 for Gemma 3n's 0.95: 1.6448536.
    #[test]
    fn the_normal_quantile_is_torchs() {
        let z = super::normal_quantile(0.95);
        assert!((z - 1.644_853_626_951_472_2).abs() < 1e-12, "{z}");
        assert_eq!(z as f32, 1.644_853_6_f32);
    }
}

#[cfg(test)]
mod query_scale_tests {
    use super::{QueryScale, ScaleForm};

    fn scale(form: ScaleForm) -> QueryScale {
        QueryScale {
            form,
            beta: 0.1,
            length: 2048,
            shift: 1,
            nope_only: true,
        }
    }

    /// Beam's exp(0.1 · log1p((p + 1) / 2048)): above 1 from the first position, 2^0.1 once
    /// p + 1 reaches 2048.
    #[test]
    fn the_power_form_grows_from_the_first_position() {
        let q = scale(ScaleForm::Power);
        assert_eq!(q.at(2047), 2f64.powf(0.1));
        assert_eq!(q.at(0), (1.0 + 1.0 / 2048.0f64).powf(0.1));
        assert!(q.at(0) > 1.0 && q.at(1) > q.at(0));
    }

    /// Llama 4's 1 + β · ln(1 + ⌊(p + shift) / length⌋): flat below length − shift, then a step.
    #[test]
    fn the_stepped_form_is_flat_until_its_length() {
        let q = scale(ScaleForm::Stepped);
        assert_eq!(q.at(0), 1.0);
        assert_eq!(q.at(2046), 1.0);
        assert_eq!(q.at(2047), 1.0 + 0.1 * 2f64.ln());
    }
}

#[cfg(test)]
mod bucket_tests {
    use super::Buckets;

    /// Every distance from −5000 to 5000 falls in the bucket transformers' `_position_bucket`
    /// gives it (tests/fixtures/cpmant-buckets.json, made by scripts/make_fixtures.py), under
    /// CPM-Ant's 512 buckets up to 2048 and bucket counts and reaches of the toy configs.
    #[test]
    fn buckets_are_transformers() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/cpmant-buckets.json"
        );
        let fixture: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let cases = fixture["cases"].as_array().unwrap();
        assert!(cases.len() >= 5);
        for case in cases {
            let b = Buckets {
                buckets: case["buckets"].as_u64().unwrap(),
                max_distance: case["max_distance"].as_u64().unwrap(),
            };
            let runs: Vec<(i64, u64)> = case["runs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| (r[0].as_i64().unwrap(), r[1].as_u64().unwrap()))
                .collect();
            for rel in -5000..=5000i64 {
                let want = runs.iter().rev().find(|(from, _)| *from <= rel).unwrap().1;
                assert_eq!(b.bucket(rel), want, "{b:?}, j − i = {rel}");
            }
        }
    }
}

#[cfg(test)]
mod patching_tests {
    use super::Patching;

    proptest::proptest! {
        /// Entropy patches cover the bytes once, in order, starting at bytes 0 and 1 and after
        /// each byte above the threshold; cut to at most `max` bytes they cover the same bytes
        /// with no empty patch left.
        #[test]
        fn patches_cover_the_bytes(
            entropies in proptest::collection::vec(0.0f32..2.0, 1..40),
            max in proptest::option::of(1u64..5),
        ) {
            let t = entropies.len();
            let whole = Patching::Entropy(1.0).lengths(t, &entropies, None);
            proptest::prop_assert_eq!(whole.iter().sum::<u64>(), t as u64);
            proptest::prop_assert_eq!(whole[0], 1);
            let starts = (1..t).filter(|&i| entropies[i] > 1.0).count();
            proptest::prop_assert_eq!(whole.len(), 2 + starts);
            let cut = Patching::Entropy(1.0).lengths(t, &entropies, max);
            proptest::prop_assert_eq!(cut.iter().sum::<u64>(), t as u64);
            if let Some(m) = max {
                proptest::prop_assert!(cut.iter().all(|&l| (1..=m).contains(&l)));
            }
        }
    }

    /// Without a patcher every byte is a patch, and one empty patch follows.
    #[test]
    fn bytes_patch_one_byte_each() {
        assert_eq!(
            Patching::Bytes { extra: 1 }.lengths(3, &[], None),
            [1, 1, 1, 1]
        );
        assert_eq!(
            Patching::Bytes { extra: 1 }.lengths(3, &[], Some(2)),
            [1, 1, 1, 1]
        );
    }
}
