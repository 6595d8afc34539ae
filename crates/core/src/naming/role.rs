//! What a checkpoint tensor is, independent of how a family names it.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Embed,
    /// OPT-350M's maps from the token table's width to the hidden size and back
    /// (`Embedding::projected`).
    EmbedProjIn,
    EmbedProjOut,
    PosEmbed,
    /// CPM-Ant's table of segment embeddings.
    SegmentEmbed,
    /// The position-bias table of `Position::Buckets`, [rows, heads], a bare parameter.
    PositionBias,
    /// The norm right after the embedding (Bloom).
    EmbedNorm,
    AttnNorm,
    Q,
    K,
    V,
    /// Q, K and V fused.
    Qkv,
    O,
    QNorm,
    KNorm,
    /// MLA: Q down-projection, its norm, Q up-projection.
    QA,
    QANorm,
    QB,
    /// MLA: joint KV down-projection (latent and rotary key), its norm, KV up-projection.
    KvA,
    KvANorm,
    KvB,
    /// MLA: the norm of the shared rotary key, before RoPE (dots.3 Note).
    KPeNorm,
    /// MiniMax-M3's lightning indexer: its query and key projections and their norms.
    BlockIndexQ,
    BlockIndexK,
    BlockIndexQNorm,
    BlockIndexKNorm,
    /// Qwen4-Exp's QSA indexer: its joint query and key projection, their norms.
    QsaQk,
    QsaQNorm,
    QsaKNorm,
    /// DeepSeek sparse attention's indexer: its query projection (from the Q latent), key
    /// projection, key LayerNorm and per-head weights.
    IndexQ,
    IndexK,
    IndexKNorm,
    IndexWeights,
    Sinks,
    /// DeepSeek-V4's attention: the K=V head's projection and norm, the grouped output
    /// projection's two parts; a compressor's projections of each token (entry part and gate),
    /// its bias per slot and its entries' norm; the indexer's own compressor likewise; the
    /// router's token-id table.
    V4Kv,
    V4KvNorm,
    V4OA,
    V4OB,
    CompKv,
    CompGate,
    CompBias,
    CompNorm,
    IndexCompKv,
    IndexCompGate,
    IndexCompBias,
    IndexCompNorm,
    HashTable,
    /// BitNet's norms inside the sublayers: over the heads before the output projection, over
    /// the activation before the down projection.
    AttnSubNorm,
    FfnSubNorm,
    /// The attention's output gate projection (AFMoE).
    AttnGate,
    /// The output gate's bias, one per head, stored apart (Beam's `gate_bias`).
    AttnGateBias,
    /// A cross-attention layer's own tensors (Mllama): its Q, K, V and output projections, the
    /// per-head norms of Q and K, and the scalar tanh gates of its attention and MLP outputs.
    /// Its norms and MLP are named as any layer's.
    CrossQ,
    CrossK,
    CrossV,
    CrossO,
    CrossQNorm,
    CrossKNorm,
    /// BLT: the encoder's widening of each pooled patch into its queries, the decoder's
    /// projection of the latent output into each patch's keys.
    PatchProj,
    /// BLT: the latent transformer's projection of the encoder's patches to its width.
    TokenProj,
    CrossAttnGate,
    CrossMlpGate,
    /// The last layer's own output-projection bias (GPT-NeoX-Japanese's `dense_bias`).
    DenseBias,
    /// K and V as the two halves of one projection (JetMoE's `kv_proj`).
    Kv,
    /// Dynamic mask attention's per-head A and key-score projection (Doge).
    DynA,
    DynDt,
    /// The learned vectors scaling the residual stream where the attention and the MLP join it
    /// (Doge).
    ResidScaleAttn,
    ResidScaleFfn,
    /// The learned vectors gating how the attention's and the FFN's outputs mix with the stream
    /// (Ergo's `attention_residual_gate`, `feedforward_residual_gate`).
    ResidGateAttn,
    ResidGateFfn,
    /// Each routed expert's RMSNorm weight over its output, [E, hidden] in one tensor, and the
    /// shared expert's (Ergo's `post_expert_norm`, `shared_experts.norm`).
    ExpertOutNorm,
    SharedOutNorm,
    /// Mixture of attention heads: the router, every expert's query and output projection
    /// stacked, and the experts' shared output bias (a module holding only a bias).
    AttnRouter,
    AttnExpertQ,
    AttnExpertO,
    AttnExperts,
    /// Differential attention's λ vectors (DiffLlama).
    LambdaQ1,
    LambdaK1,
    LambdaQ2,
    LambdaK2,
    PostAttnNorm,
    FfnNorm,
    PostFfnNorm,
    /// The norm on a MoE block's output, in the MoE layers only (A.X-K1).
    MoePostNorm,
    /// Gemma 4's MLP and experts side by side: the norm after the MLP, the experts' own norm
    /// before and after them, the router's input scale and each expert's weight scale.
    MlpPostNorm,
    ExpertsNorm,
    ExpertsPostNorm,
    RouterScale,
    RouterExpertScale,
    /// The MoE block itself, for a bias on its output (JetMoE's `mlp.bias`).
    MoeBlock,
    Gate,
    Up,
    /// Gate and up fused.
    GateUp,
    Down,
    Router,
    /// Per-expert bias added to the scores for selection only (DeepSeek V3).
    CorrectionBias,
    ExpertGate,
    ExpertUp,
    ExpertGateUp,
    ExpertDown,
    SharedGate,
    SharedUp,
    /// The shared expert's gate and up fused.
    SharedGateUp,
    SharedDown,
    /// The shared expert's gate, one output (Qwen2-MoE).
    SharedExpertGate,
    /// xIELU's learned αₚ and αₙ and its stored β and ε (Apertus).
    ActAlphaP,
    ActAlphaN,
    ActBeta,
    ActEps,
    FinalNorm,
    /// HRM's stored initial low-level state (`z_L_init`).
    LowInit,
    /// Per-layer embeddings (Gemma 4): their table, the projection of the embeddings to every
    /// layer's share and its norm; in each layer the gate from the stream, the projection back
    /// and its norm.
    PleEmbed,
    PleProj,
    PleProjNorm,
    PleGate,
    PleUp,
    PleNorm,
    /// A layer's stored output scalar (Gemma 4's `layer_scalar`).
    LayerScalar,
    /// A draft model's projection of its target's state to its own width, and of its last
    /// hidden state back (Gemma 4's assistants' `pre_projection`, `post_projection`).
    DraftIn,
    DraftOut,
    /// The clustered head's centroids [count, hidden] and the vocabulary listed cluster by
    /// cluster (an integer buffer, [vocab]).
    Centroids,
    TokenOrdering,
    /// Zamba2's shared block: the norm of [stream, embeddings] before its attention, the norm
    /// before its MLP, the layer's own projection of the block's output, and each visit's
    /// low-rank adapters (down A, up B) on Q, K, V and the fused gate/up projection.
    SharedNorm,
    SharedFfnNorm,
    SharedLinear,
    QAdapterA,
    QAdapterB,
    KAdapterA,
    KAdapterB,
    VAdapterA,
    VAdapterB,
    GateUpAdapterA,
    GateUpAdapterB,
    /// The prediction head's dense layer and norm before the LM head (ModernBERT).
    HeadDense,
    HeadNorm,
    LmHead,
    /// DeepSeek's multi-token-prediction module: its embedding copy, input norms, projection,
    /// output norm and head copy.
    MtpEmbed,
    MtpENorm,
    MtpHNorm,
    MtpProj,
    MtpNorm,
    MtpHead,
    /// Mamba2's mixer: its input projection (z, x, B, C, Δ), depthwise convolution, Δ bias,
    /// log decay rates, skip weights, gated norm and output projection.
    SsmIn,
    SsmConv,
    /// Mamba's (S6) projection of x to its step, B and C, and the step's projection to Δ.
    SsmX,
    SsmDt,
    /// Jamba's RMS norms on the step's input, B and C.
    SsmDtNorm,
    SsmBNorm,
    SsmCNorm,
    SsmDtBias,
    SsmALog,
    SsmD,
    SsmNorm,
    SsmOut,
    /// Gated DeltaNet's own projections: the output gate z (Qwen3.5's `in_proj_z`), β and α
    /// as one tensor in key-head groups (Qwen3-Next's `in_proj_ba`), or apart (Qwen3.5's
    /// `in_proj_b`, `in_proj_a`). Q, K and V are `SsmIn` (with z in Qwen3-Next).
    SsmZ,
    SsmBa,
    SsmBeta,
    SsmAlpha,
    /// Kimi Delta Attention's own tensors: Q, K and V projected apart, a convolution for each,
    /// the forget gate's two low-rank projections (down, up) and the output gate's.
    SsmQ,
    SsmK,
    SsmV,
    SsmConvQ,
    SsmConvK,
    SsmConvV,
    SsmFA,
    SsmFB,
    SsmGA,
    SsmGB,
    /// Lightning attention's stored constants: each head's decay rate (`slope_rate`) and the
    /// chunked form's decay tables (`query_decay`, `key_decay`, `diagonal_decay`). Its
    /// projections are `SsmIn` (q, k, v), `SsmZ` (the output gate), `SsmNorm` and `SsmOut`.
    LightSlope,
    LightQDecay,
    LightKDecay,
    LightDiagDecay,
    /// The RG-LRU's Λ (`recurrent_param`) and its two gates' block-diagonal weights, each with
    /// a bias stored beside it as `…_bias` (RecurrentGemma). Its projections are `SsmIn` (x),
    /// `SsmZ` (the gate branch y), `SsmConv` and `SsmOut`.
    LruParam,
    LruInGate,
    LruRecGate,
    /// RWKV's time mixing: its K, V, R and output projections, each channel's decay rate w and
    /// the current token's bonus u, and the three token-shift mixes μ; the channel mixing's
    /// receptance projection and two mixes (its key and value projections are `Up`, `Down`).
    TmKey,
    TmValue,
    TmReceptance,
    TmOutput,
    TmDecay,
    TmFirst,
    TmMixK,
    TmMixV,
    TmMixR,
    CmReceptance,
    CmMixK,
    CmMixR,
    /// Hyper-connections (HY v4): each sublayer's stream weights (`fn`: 2n logits from the n
    /// streams), their biases and their two scales; the final head's (n logits, one scale).
    HcAttnFn,
    HcAttnBase,
    HcAttnScale,
    HcFfnFn,
    HcFfnBase,
    HcFfnScale,
    HcHeadFn,
    HcHeadBase,
    HcHeadScale,
    /// Qwen4-Exp's gated residual streams: each sublayer's stream norm, input mix (down and
    /// up) and injection weights; the head's mix (no injection).
    GsAttnNorm,
    GsAttnDown,
    GsAttnUp,
    GsAttnInject,
    GsFfnNorm,
    GsFfnDown,
    GsFfnUp,
    GsFfnInject,
    GsHeadNorm,
    GsHeadDown,
    GsHeadUp,
    /// Qwen4-Exp's n-gram per-layer embeddings: the table (saved in shards, `{e}`), its stored
    /// int64 buffers (multipliers, head sizes and offsets), the key and value projections, the
    /// three grouped norms and the dilated convolution.
    NgramTable,
    NgramMultipliers,
    NgramSizes,
    NgramOffsets,
    NgramKey,
    NgramValue,
    NgramNormKey,
    NgramNormQuery,
    NgramNormConv,
    NgramConv,
    /// Gemma 3n's AltUp: its router's norm and projection, the prediction and correction
    /// coefficients, the scale on the corrected active stream; the model's projections into and
    /// out of the extra streams (one per stream after the first, `{e}`).
    AltUpRouterNorm,
    AltUpRouter,
    AltUpPredict,
    AltUpCorrect,
    AltUpScale,
    AltUpProj,
    AltUpUnembed,
    /// A.X-K2's gated norms: the FFN's norm where it is gated (the MoE layers; the attention's
    /// is `AttnNorm`, always gated), and each gate's down and up projections.
    GatedFfnNorm,
    AttnNormDown,
    AttnNormUp,
    FfnNormDown,
    FfnNormUp,
    /// Gemma 3n's LAuReL: the low-rank branch's two projections and its norm.
    LaurelLeft,
    LaurelRight,
    LaurelNorm,
    /// ZAYA: the embeddings' learned scale and shift.
    EmbedScale,
    EmbedShift,
    /// ZAYA's compressed convolutional attention: the value projections of the token and of
    /// the token before it, the two convolutions over Q and K, the keys' scale per K/V head.
    CcaVCurrent,
    CcaVDelayed,
    CcaConvDepthwise,
    CcaConvGrouped,
    CcaKeyTemp,
    /// ZAYA's router MLP (its logits are `Router`): the down projection, the carried state's
    /// scale, the balancing biases, the norm and the two hidden layers.
    RouterDown,
    RouterState,
    RouterBalance,
    RouterNorm,
    RouterFc1,
    RouterFc2,
    /// ZAYA's residual adds: the sublayer output's scale and shift, the stream's scale and
    /// shift, after the attention and after the FFN.
    ResidAttnOutScale,
    ResidAttnOutShift,
    ResidAttnScale,
    ResidAttnShift,
    ResidFfnOutScale,
    ResidFfnOutShift,
    ResidFfnScale,
    ResidFfnShift,
    /// nGPT's learned scalings (Dory): the queries' (`sqk`), the output gate's (`s_gate`), the
    /// MLP's gate and up (`suv_gate`, `suv_up`), the residual rates after the attention and the
    /// MLP (`lambda_1`, `lambda_2`) and the logits' (`logit_scale`).
    NgptQueryScale,
    NgptGateScale,
    NgptGateUvScale,
    NgptUpUvScale,
    NgptRateAttn,
    NgptRateFfn,
    NgptLogitScale,
    /// Inkling: the relative states' projection and the bank of profiles they mix (a bare
    /// parameter); the residual convolutions of K, V and of each sublayer's output; the dense
    /// MLP's and the router's learned scalars (bare).
    RelProj,
    RelBank,
    KConv,
    VConv,
    AttnOutConv,
    FfnOutConv,
    MlpScalar,
    RouterScalar,
    /// Inkling 2: the dynamic convolutions' stored taps and per-token tap projections of K and
    /// V; the learned scales of Q's and the relative states' L2 clips; the per-token sink
    /// projection; the full layers' norms of their K and V inputs; and the block attention
    /// residuals' queries before the attention, before the FFN and before the head.
    KConvStatic,
    VConvStatic,
    KConvDyn,
    VConvDyn,
    QClipScale,
    RelClipScale,
    TokenSinks,
    QInNorm,
    KInNorm,
    VInNorm,
    AttnResQuery,
    FfnResQuery,
    HeadResQuery,
    /// Inkling 2 Loop: each looped layer's four message gates (the query's, key's, value's and
    /// FFN's input: down projection, forget and message projections), and the messages'
    /// queries, stored as two tensors: the query and FFN queries of each looped layer, then the
    /// key and value ones.
    MsgQDown,
    MsgQForget,
    MsgQGain,
    MsgKDown,
    MsgKForget,
    MsgKGain,
    MsgVDown,
    MsgVForget,
    MsgVGain,
    MsgFfnDown,
    MsgFfnForget,
    MsgFfnGain,
    MsgQueries,
    MsgKvQueries,
}
