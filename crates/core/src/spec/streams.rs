//! The residual stream's forms beyond one plain stream: hyper-connections, gated streams, AltUp,
//! attention residuals, hierarchies, loops, BLT's byte stacks, nGPT, n-gram embeddings, shared
//! blocks.

use super::*;

/// The residual stream: one plain stream, or one of the forms that replace it. A model has one
/// form, so no two can be combined.
#[derive(Debug, Clone, PartialEq)]
pub enum Stream {
    Plain,
    /// Hyper-connections (HY v4, DeepSeek-V4): the residual stream is `streams` copies of the
    /// hidden state, mixed into each sublayer's input and each written back by a learned
    /// per-token gate.
    Hyper(Hyper),
    /// Gated residual streams (Qwen4-Exp): the residual stream is `streams` copies of the hidden
    /// state, each sublayer reading a gated mean of them and its output written back to each by
    /// a gate of its own; no final norm.
    Gated(GatedStreams),
    /// Gemma 3n's alternating updates: the stream is several predictions of the hidden state,
    /// one of which the layer computes on.
    AltUp(AltUp),
    /// HRM's two stacks run in a nested loop: layers 0..per_stack are the low-level stack's, the
    /// rest the high-level one's.
    Hierarchy(Hierarchy),
    /// BLT: this Spec is the latent transformer over patches; byte-level stacks of their own
    /// sizes make its input and read its output.
    Bytes(Box<ByteLatent>),
    /// Dory's looped section: some layers run several times in a row.
    Looped(Looped),
    /// Block attention residuals (Inkling 2): each sublayer reads a learned mix of the stream's
    /// block summaries rather than the stream itself.
    AttnRes(AttnRes),
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
