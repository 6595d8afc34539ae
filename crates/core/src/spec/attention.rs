//! Attention: its kind, heads and norms, latent attention, the sparse indexers, mixtures of heads,
//! output gates, query scales, convolutions and relative logits.

use super::*;

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
    /// Kolibri 1.1's weightless indexer, in its indexed layers (`PoolIndex`).
    pub pool_index: Option<PoolIndex>,
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

/// Kolibri 1.1's weightless indexer. It scores keys with the layer's own queries: the first
/// `heads` query heads against K/V head 0, Σₕ ReLU(qₕ · k) / (√head_dim · heads), both rounded to
/// NVFP4 first (E2M1 values, one E4M3 scale per 16 features). A pool layer (`pools`) picks each
/// query's pool of candidate keys: all it sees while that is at most `pool` keys, else the
/// `pool / compression` best blocks of `compression` keys, each block scored by its NVFP4-rounded
/// mean (an incomplete newest block scores 0). Every indexed layer then attends to the `top_k`
/// best keys of the pool of the last pool layer before it (or its own), plus the first `sinks`
/// and the last `local` keys; a query that sees at most top_k + sinks + local keys sees them all.
/// Ties go to the earlier key. The layer attends over its keys and values rounded to NVFP4.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolIndex {
    pub heads: u64,
    pub top_k: u64,
    pub pool: u64,
    pub compression: u64,
    pub local: u64,
    pub sinks: u64,
    /// The layers that pick a new pool (`index_layers`); the other indexed layers read the last
    /// one's before them.
    pub pools: LayerSet,
}

impl PoolIndex {
    /// A query that sees more keys than this picks among them.
    pub fn budget(&self) -> u64 {
        self.top_k + self.local + self.sinks
    }
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
