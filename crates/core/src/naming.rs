//! Checkpoint tensor names per layout, in Hugging Face and GGUF naming.
//!
//! One table per layout; `{b}` stands for the layer index and `{e}` for the expert index. A
//! template without `{e}` for an expert tensor holds all of a layer's experts, stacked first.

use crate::spec::Layout;

/// What a checkpoint tensor is, independent of how a family names it.
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

/// `(hf, gguf)` names of `role`'s weight (`bias = false`) or bias.
/// Whether `layout` stores a per-head QK norm (`QkNorm::HeadWeights`) as one tensor per head
/// (StableLM's `q_layernorm.norms.{e}`) rather than one [heads, head_dim] tensor.
pub fn qk_norm_per_head(layout: Layout) -> bool {
    names(layout, Role::QNorm, false).0.contains("{e}")
}

pub fn names(layout: Layout, role: Role, bias: bool) -> (String, String) {
    use Role::*;
    let suffix = if bias { "bias" } else { "weight" };
    // Tensors stored without a .weight suffix.
    match (layout, role) {
        (Layout::DeepseekV4, _) => return deepseek_v4(role, bias),
        (Layout::Ergo, _) => return ergo(role, bias),
        (
            _,
            NgptQueryScale | NgptGateScale | NgptGateUvScale | NgptUpUvScale | NgptRateAttn
            | NgptRateFfn | NgptLogitScale,
        ) => {
            // llama.cpp defines no architecture for Dory: the GGUF names follow its style.
            let (hf, gguf) = match role {
                NgptQueryScale => ("model.layers.{b}.self_attn.sqk", "blk.{b}.attn_q_scale"),
                NgptGateScale => (
                    "model.layers.{b}.self_attn.s_gate",
                    "blk.{b}.attn_gate_scale",
                ),
                NgptGateUvScale => ("model.layers.{b}.mlp.suv_gate", "blk.{b}.ffn_gate_scale"),
                NgptUpUvScale => ("model.layers.{b}.mlp.suv_up", "blk.{b}.ffn_up_scale"),
                NgptRateAttn => ("model.layers.{b}.lambda_1", "blk.{b}.attn_rate"),
                NgptRateFfn => ("model.layers.{b}.lambda_2", "blk.{b}.ffn_rate"),
                NgptLogitScale => ("lm_head.logit_scale", "output_scale"),
                other => unreachable!("{other:?} is not matched by this arm"),
            };
            let hf = match layout {
                Layout::Dory => hf.replace("model.", "backbone."),
                _ => hf.into(),
            };
            return (hf, gguf.into());
        }
        (
            _,
            EmbedScale | EmbedShift | CcaKeyTemp | RouterState | RouterBalance | ResidAttnOutScale
            | ResidAttnOutShift | ResidAttnScale | ResidAttnShift | ResidFfnOutScale
            | ResidFfnOutShift | ResidFfnScale | ResidFfnShift,
        ) => {
            // ZAYA's bare parameters and buffer. llama.cpp defines no ZAYA: the GGUF names
            // follow its style.
            let (hf, gguf) = match role {
                EmbedScale => ("model.input_hidden_states_scale", "token_embd_scale"),
                EmbedShift => ("model.input_hidden_states_bias", "token_embd_shift"),
                CcaKeyTemp => (
                    "model.layers.{b}.self_attn.qk_norm.temp",
                    "blk.{b}.attn_k_temp",
                ),
                RouterState => (
                    "model.layers.{b}.mlp.gate.router_states_scale",
                    "blk.{b}.ffn_router_state_scale",
                ),
                RouterBalance => (
                    "model.layers.{b}.mlp.gate.balancing_biases",
                    "blk.{b}.ffn_router_balance",
                ),
                ResidAttnOutScale => (
                    "model.layers.{b}.post_attention_residual_scale.hidden_states_scale",
                    "blk.{b}.attn_out_scale",
                ),
                ResidAttnOutShift => (
                    "model.layers.{b}.post_attention_residual_scale.hidden_states_bias",
                    "blk.{b}.attn_out_shift",
                ),
                ResidAttnScale => (
                    "model.layers.{b}.post_attention_residual_scale.residual_scale",
                    "blk.{b}.attn_residual_scale",
                ),
                ResidAttnShift => (
                    "model.layers.{b}.post_attention_residual_scale.residual_bias",
                    "blk.{b}.attn_residual_shift",
                ),
                ResidFfnOutScale => (
                    "model.layers.{b}.post_mlp_residual_scale.hidden_states_scale",
                    "blk.{b}.ffn_out_scale",
                ),
                ResidFfnOutShift => (
                    "model.layers.{b}.post_mlp_residual_scale.hidden_states_bias",
                    "blk.{b}.ffn_out_shift",
                ),
                ResidFfnScale => (
                    "model.layers.{b}.post_mlp_residual_scale.residual_scale",
                    "blk.{b}.ffn_residual_scale",
                ),
                ResidFfnShift => (
                    "model.layers.{b}.post_mlp_residual_scale.residual_bias",
                    "blk.{b}.ffn_residual_shift",
                ),
                other => unreachable!("{other:?} is not matched by this arm"),
            };
            return (hf.into(), gguf.into());
        }
        (_, DenseBias) => {
            // Beside the output projection, under its name with `_bias`.
            let (o, _) = names(layout, O, false);
            let base = o.strip_suffix(".weight").unwrap_or(&o);
            return (format!("{base}_bias"), "blk.{b}.attn_output.bias".into());
        }
        // llama.cpp defines no CPM-Ant: the GGUF name follows its style.
        (_, PositionBias) => {
            return (
                "cpmant.position_bias.relative_attention_bias".into(),
                "attn_rel_b".into(),
            )
        }
        // HRM's initial low-level state, a bare parameter of the model.
        (_, LowInit) => return ("model.z_L_init".into(), "z_l_init".into()),
        (_, LambdaQ1 | LambdaK1 | LambdaQ2 | LambdaK2) => {
            let name = match role {
                LambdaQ1 => "lambda_q1",
                LambdaK1 => "lambda_k1",
                LambdaQ2 => "lambda_q2",
                LambdaK2 => "lambda_k2",
                other => unreachable!("{other:?} is not matched by this arm"),
            };
            return (
                format!("model.layers.{{b}}.self_attn.{name}"),
                format!("blk.{{b}}.attn_{name}"),
            );
        }
        (
            _,
            HcAttnFn | HcAttnBase | HcAttnScale | HcFfnFn | HcFfnBase | HcFfnScale | HcHeadFn
            | HcHeadBase | HcHeadScale,
        ) => {
            // As HY v4's checkpoints store them (transformers renames them on loading to
            // `layers.{b}.attn_hc.fn`, `hc_head.hc_fn` …). llama.cpp defines no architecture
            // with hyper-connections: the GGUF names follow its style.
            let (hf, gguf) = match role {
                HcAttnFn => (
                    "layers.{b}.hc_pre.hc_attn_layer.hc_fn",
                    "blk.{b}.hc_attn_fn",
                ),
                HcAttnBase => (
                    "layers.{b}.hc_pre.hc_attn_layer.hc_base",
                    "blk.{b}.hc_attn_base",
                ),
                HcAttnScale => (
                    "layers.{b}.hc_pre.hc_attn_layer.hc_scale",
                    "blk.{b}.hc_attn_scale",
                ),
                HcFfnFn => ("layers.{b}.hc_pre.hc_mlp_layer.hc_fn", "blk.{b}.hc_ffn_fn"),
                HcFfnBase => (
                    "layers.{b}.hc_pre.hc_mlp_layer.hc_base",
                    "blk.{b}.hc_ffn_base",
                ),
                HcFfnScale => (
                    "layers.{b}.hc_pre.hc_mlp_layer.hc_scale",
                    "blk.{b}.hc_ffn_scale",
                ),
                HcHeadFn => ("hc_pre.hc_head.hc_head_fn", "output_hc_fn"),
                HcHeadBase => ("hc_pre.hc_head.hc_head_base", "output_hc_base"),
                HcHeadScale => ("hc_pre.hc_head.hc_head_scale", "output_hc_scale"),
                other => unreachable!("{other:?} is not matched by this arm"),
            };
            return (format!("model.{hf}"), gguf.into());
        }
        (
            _,
            GsAttnNorm | GsAttnDown | GsAttnUp | GsAttnInject | GsFfnNorm | GsFfnDown | GsFfnUp
            | GsFfnInject | GsHeadNorm | GsHeadDown | GsHeadUp,
        ) => {
            // llama.cpp defines no architecture with these streams: the GGUF names follow its
            // style.
            let (hf, gguf) = match role {
                GsAttnNorm => (
                    "layers.{b}.attn_hyper_connection.hc_norm",
                    "blk.{b}.gs_attn_norm",
                ),
                GsAttnDown => (
                    "layers.{b}.attn_hyper_connection.input_mix_weight_down",
                    "blk.{b}.gs_attn_down",
                ),
                GsAttnUp => (
                    "layers.{b}.attn_hyper_connection.input_mix_weight_up",
                    "blk.{b}.gs_attn_up",
                ),
                GsAttnInject => (
                    "layers.{b}.attn_hyper_connection.block_inject_weight",
                    "blk.{b}.gs_attn_inject",
                ),
                GsFfnNorm => (
                    "layers.{b}.mlp_hyper_connection.hc_norm",
                    "blk.{b}.gs_ffn_norm",
                ),
                GsFfnDown => (
                    "layers.{b}.mlp_hyper_connection.input_mix_weight_down",
                    "blk.{b}.gs_ffn_down",
                ),
                GsFfnUp => (
                    "layers.{b}.mlp_hyper_connection.input_mix_weight_up",
                    "blk.{b}.gs_ffn_up",
                ),
                GsFfnInject => (
                    "layers.{b}.mlp_hyper_connection.block_inject_weight",
                    "blk.{b}.gs_ffn_inject",
                ),
                GsHeadNorm => ("hyper_connection_mixer.hc_norm", "output_gs_norm"),
                GsHeadDown => (
                    "hyper_connection_mixer.input_mix_weight_down",
                    "output_gs_down",
                ),
                GsHeadUp => ("hyper_connection_mixer.input_mix_weight_up", "output_gs_up"),
                other => unreachable!("{other:?} is not matched by this arm"),
            };
            return (format!("model.{hf}.weight"), format!("{gguf}.weight"));
        }
        (
            _,
            NgramTable | NgramMultipliers | NgramSizes | NgramOffsets | NgramKey | NgramValue
            | NgramNormKey | NgramNormQuery | NgramNormConv | NgramConv,
        ) => {
            // llama.cpp defines no architecture with these: the GGUF names follow its style.
            let (hf, gguf) = match role {
                NgramTable => (
                    "ple.ple_embedding.ngram_embedding.shard_{e}.weight",
                    "ple_ngram.{e}.weight",
                ),
                NgramMultipliers => ("ple.ple_embedding.layer_multipliers", "ple_ngram_mult"),
                NgramSizes => (
                    "ple.ple_embedding.ngram_heads_vocab_sizes",
                    "ple_ngram_sizes",
                ),
                NgramOffsets => ("ple.ple_embedding.ngram_heads_offsets", "ple_ngram_offsets"),
                NgramKey => ("ple.key_proj.weight", "ple_key.weight"),
                NgramValue => ("ple.value_proj.weight", "ple_value.weight"),
                NgramNormKey => ("ple.norm_key.weight", "ple_key_norm.weight"),
                NgramNormQuery => ("ple.norm_query.weight", "ple_query_norm.weight"),
                NgramNormConv => ("ple.norm_conv.weight", "ple_conv_norm.weight"),
                NgramConv => ("ple.conv1d.weight", "ple_conv.weight"),
                other => unreachable!("{other:?} is not matched by this arm"),
            };
            return (
                format!("model.layers.{{b}}.{hf}"),
                format!("blk.{{b}}.{gguf}"),
            );
        }
        (_, AltUpScale) => {
            return (
                "model.layers.{b}.altup.correct_output_scale".into(),
                "blk.{b}.altup_correct_scale.weight".into(),
            )
        }
        (Layout::HyV4, Sinks) => {
            return (
                "model.layers.{b}.self_attn.learnable_sink_param".into(),
                "blk.{b}.attn_sinks.weight".into(),
            )
        }
        (_, ActAlphaP | ActAlphaN | ActBeta | ActEps) => {
            let name = match role {
                ActAlphaP => "alpha_p",
                ActAlphaN => "alpha_n",
                ActBeta => "beta",
                _ => "eps",
            };
            return (
                format!("model.layers.{{b}}.mlp.act_fn.{name}"),
                format!("blk.{{b}}.ffn_act_{name}"),
            );
        }
        (Layout::Flint, Sinks) => {
            return (
                "model.layers.{b}.self_attn.softmax_offset".into(),
                "blk.{b}.attn_sinks.weight".into(),
            )
        }
        (_, DynA | ResidScaleAttn | ResidScaleFfn) => {
            let (hf, gguf) = match role {
                DynA => ("self_attn.A", "attn_dyn_a"),
                ResidScaleAttn => ("input_residual", "attn_residual_scale"),
                ResidScaleFfn => ("post_attention_residual", "ffn_residual_scale"),
                other => unreachable!("{other:?} is not matched by this arm"),
            };
            return (
                format!("model.layers.{{b}}.{hf}"),
                format!("blk.{{b}}.{gguf}"),
            );
        }
        (Layout::Bailing, CorrectionBias) => {
            return (
                "model.layers.{b}.mlp.gate.expert_bias".into(),
                "blk.{b}.exp_probs_b.bias".into(),
            )
        }
        (Layout::KimiLinear, CorrectionBias) => {
            return (
                "model.layers.{b}.block_sparse_moe.gate.e_score_correction_bias".into(),
                "blk.{b}.exp_probs_b.bias".into(),
            )
        }
        (
            _,
            SsmDtBias | SsmALog | SsmD | LightSlope | LightQDecay | LightKDecay | LightDiagDecay,
        ) => {
            // Beside the output projection in the mixer, stored without a suffix.
            let (hf, _) = names(layout, SsmOut, false);
            let module = hf.strip_suffix(".weight").unwrap_or(&hf);
            let base = module.rsplit_once('.').map_or("", |(m, _)| m);
            let (name, gguf) = match role {
                SsmDtBias => ("dt_bias", "ssm_dt.bias"),
                SsmALog => ("A_log", "ssm_a"),
                SsmD => ("D", "ssm_d"),
                LightSlope => ("slope_rate", "lightning_slope"),
                LightQDecay => ("query_decay", "lightning_query_decay"),
                LightKDecay => ("key_decay", "lightning_key_decay"),
                LightDiagDecay => ("diagonal_decay", "lightning_diagonal_decay"),
                other => unreachable!("{other:?} is not matched by this arm"),
            };
            return (format!("{base}.{name}"), format!("blk.{{b}}.{gguf}"));
        }
        (_, TmDecay | TmFirst | TmMixK | TmMixV | TmMixR | CmMixK | CmMixR) => {
            let (hf, gguf) = match role {
                TmDecay => ("attention.time_decay", "time_mix_decay"),
                TmFirst => ("attention.time_first", "time_mix_first"),
                TmMixK => ("attention.time_mix_key", "time_mix_lerp_k"),
                TmMixV => ("attention.time_mix_value", "time_mix_lerp_v"),
                TmMixR => ("attention.time_mix_receptance", "time_mix_lerp_r"),
                CmMixK => ("feed_forward.time_mix_key", "channel_mix_lerp_k"),
                CmMixR => ("feed_forward.time_mix_receptance", "channel_mix_lerp_r"),
                other => unreachable!("{other:?} is not matched by this arm"),
            };
            return (
                format!("rwkv.blocks.{{b}}.{hf}"),
                format!("blk.{{b}}.{gguf}.{suffix}"),
            );
        }
        (_, LruParam | LruInGate | LruRecGate) => {
            let (name, gguf) = match role {
                LruParam => ("recurrent_param", "rg_lru_a"),
                LruInGate => ("input_gate", "rg_lru_input_gate"),
                LruRecGate => ("recurrent_gate", "rg_lru_recurrent_gate"),
                other => unreachable!("{other:?} is not matched by this arm"),
            };
            let hf = match (role, bias) {
                (LruParam, _) => name.to_string(),
                (_, true) => format!("{name}_bias"),
                (_, false) => format!("{name}_weight"),
            };
            return (
                format!("model.layers.{{b}}.temporal_block.rg_lru.{hf}"),
                format!("blk.{{b}}.{gguf}.{suffix}"),
            );
        }
        (Layout::Dbrx, ExpertGate | ExpertUp | ExpertDown) => {
            let (hf, gguf) = match role {
                ExpertGate => ("w1", "ffn_gate_exps"),
                ExpertUp => ("v1", "ffn_up_exps"),
                ExpertDown => ("w2", "ffn_down_exps"),
                other => unreachable!("{other:?} is not matched by this arm"),
            };
            return (
                format!("transformer.blocks.{{b}}.ffn.experts.mlp.{hf}"),
                format!("blk.{{b}}.{gguf}.{suffix}"),
            );
        }
        (Layout::MiMo, Sinks) => {
            return (
                "model.layers.{b}.self_attn.attention_sink_bias".into(),
                "blk.{b}.attn_sinks.weight".into(),
            )
        }
        (_, CrossAttnGate | CrossMlpGate) => {
            let name = if role == CrossAttnGate {
                "cross_attn_attn_gate"
            } else {
                "cross_attn_mlp_gate"
            };
            return (
                format!("model.layers.{{b}}.{name}"),
                format!("blk.{{b}}.{name}"),
            );
        }
        (_, AttnGateBias) => {
            return (
                "model.layers.{b}.self_attn.gate_bias".into(),
                "blk.{b}.attn_gate_bias".into(),
            )
        }
        (_, Sinks) => {
            return (
                "model.layers.{b}.self_attn.sinks".into(),
                "blk.{b}.attn_sinks.weight".into(),
            )
        }
        (Layout::Sarvam, CorrectionBias) => {
            return (
                "model.layers.{b}.mlp.gate.expert_bias".into(),
                "blk.{b}.exp_probs_b.bias".into(),
            )
        }
        (Layout::Ernie45Moe, CorrectionBias) => {
            return (
                "model.layers.{b}.mlp.moe_statics.e_score_correction_bias".into(),
                "blk.{b}.exp_probs_b.bias".into(),
            )
        }
        (Layout::Lfm2, CorrectionBias) => {
            return (
                "model.layers.{b}.feed_forward.expert_bias".into(),
                "blk.{b}.exp_probs_b.bias".into(),
            )
        }
        (Layout::Kolibri, CorrectionBias) => {
            return (
                "model.layers.{b}.moe.router.expert_bias".into(),
                "blk.{b}.exp_probs_b.bias".into(),
            )
        }
        (Layout::ExaoneMoe, CorrectionBias) => {
            return (
                "model.layers.{b}.mlp.e_score_correction_bias".into(),
                "blk.{b}.exp_probs_b.bias".into(),
            )
        }
        (Layout::Laguna, CorrectionBias) => {
            return (
                "model.layers.{b}.mlp.experts.e_score_correction_bias".into(),
                "blk.{b}.exp_probs_b.bias".into(),
            )
        }
        (Layout::HyV3 | Layout::Afmoe, CorrectionBias) => {
            return (
                "model.layers.{b}.mlp.expert_bias".into(),
                "blk.{b}.exp_probs_b.bias".into(),
            )
        }
        (Layout::NemotronH, CorrectionBias) => {
            return (
                "backbone.layers.{b}.mixer.gate.e_score_correction_bias".into(),
                "blk.{b}.exp_probs_b.bias".into(),
            )
        }
        (Layout::MiniMaxM2, CorrectionBias) => {
            return (
                "model.layers.{b}.block_sparse_moe.e_score_correction_bias".into(),
                "blk.{b}.exp_probs_b.bias".into(),
            )
        }
        (_, LayerScalar) => {
            return (
                "model.layers.{b}.layer_scalar".into(),
                "blk.{b}.layer_output_scale.weight".into(),
            )
        }
        (_, TokenOrdering) => {
            return (
                "masked_embedding.token_ordering".into(),
                "draft_token_order".into(),
            )
        }
        // llama.cpp's converter keeps the router's input scale beside its weight and each
        // expert's weight scale as the scale of its down projection.
        (Layout::Gemma4, RouterScale) => {
            return (
                "model.layers.{b}.router.scale".into(),
                "blk.{b}.ffn_gate_inp.scale".into(),
            )
        }
        (Layout::Gemma4, RouterExpertScale) => {
            return (
                "model.layers.{b}.router.per_expert_scale".into(),
                "blk.{b}.ffn_down_exps.scale".into(),
            )
        }
        (Layout::Gemma4, ExpertGateUp | ExpertDown) => {
            let (hf, gguf) = if role == ExpertDown {
                ("down_proj", "ffn_down_exps")
            } else {
                ("gate_up_proj", "ffn_gate_up_exps")
            };
            return (
                format!("model.layers.{{b}}.experts.{hf}"),
                format!("blk.{{b}}.{gguf}.{suffix}"),
            );
        }
        // Inkling 2's checkpoints, in their own layout (transformers renames them on loading and
        // writes them back so).
        (Layout::Inkling2, _) => return inkling2(role, bias),
        // Inkling's bare parameters; the shared experts stacked [S, I, H]. llama.cpp defines no
        // Inkling: the GGUF names follow its style.
        (
            Layout::Inkling,
            RelBank | MlpScalar | RouterScalar | SharedGate | SharedUp | SharedDown,
        ) => {
            let (hf, gguf) = match role {
                RelBank => ("self_attn.rel_logits_proj.proj", "attn_rel_bank"),
                MlpScalar => ("mlp.global_scale", "ffn_scale"),
                RouterScalar => ("mlp.gate.global_scale", "ffn_gate_inp_scale"),
                SharedGate => ("mlp.shared_experts.gate_proj", "ffn_gate_shexp.weight"),
                SharedUp => ("mlp.shared_experts.up_proj", "ffn_up_shexp.weight"),
                SharedDown => ("mlp.shared_experts.down_proj", "ffn_down_shexp.weight"),
                other => unreachable!("{other:?} is not matched by this arm"),
            };
            return (
                format!("model.layers.{{b}}.{hf}"),
                format!("blk.{{b}}.{gguf}"),
            );
        }
        (Layout::LongCat, CorrectionBias) => {
            return (
                "model.layers.{p}.mlp.router.e_score_correction_bias".into(),
                "blk.{b}.exp_probs_b.bias".into(),
            )
        }
        (_, CorrectionBias) => {
            return (
                "model.layers.{b}.mlp.gate.e_score_correction_bias".into(),
                "blk.{b}.exp_probs_b.bias".into(),
            )
        }
        (
            Layout::GptOss
            | Layout::Llama4
            | Layout::GraniteMoeSwa
            | Layout::LaraMini
            | Layout::HyV4
            | Layout::MiniMaxM3
            | Layout::Zaya
            | Layout::Inkling,
            ExpertGateUp | ExpertDown,
        ) => {
            let module = match layout {
                Layout::GptOss
                | Layout::LaraMini
                | Layout::HyV4
                | Layout::MiniMaxM3
                | Layout::Zaya
                | Layout::Inkling => "mlp",
                Layout::Llama4 => "feed_forward",
                Layout::GraniteMoeSwa => "block_sparse_moe",
                other => unreachable!("{other:?} is not matched by this arm"),
            };
            let (hf, gguf) = if role == ExpertDown {
                ("down_proj", "ffn_down_exps")
            } else {
                ("gate_up_proj", "ffn_gate_up_exps")
            };
            let hf = format!(
                "model.layers.{{b}}.{module}.experts.{hf}{}",
                if bias { "_bias" } else { "" }
            );
            return (hf, format!("blk.{{b}}.{gguf}.{suffix}"));
        }
        (Layout::LongCat, _) => return longcat(role, suffix),
        // Zamba's multi-head Mamba: per-head tensors stored without a suffix.
        (Layout::Zamba, SsmX | SsmDt) => {
            let name = match (role, bias) {
                (SsmX, _) => "x_proj_weight",
                (_, false) => "dt_proj_weight",
                (_, true) => "dt_proj_bias",
            };
            let gguf = if role == SsmX { "ssm_x" } else { "ssm_dt" };
            return (
                format!("model.layers.{{b}}.{{d}}mamba.{name}"),
                format!("blk.{{b}}.{gguf}.{suffix}"),
            );
        }
        (Layout::Zamba, _) if zamba2(role).0.contains("shared_transformer") => {
            let (hf, gguf) = zamba2(role);
            return (
                format!(
                    "{}.{suffix}",
                    hf.replace("shared_transformer", "shared_transf")
                ),
                format!("{gguf}.{suffix}"),
            );
        }
        _ => {}
    }
    let (hf, gguf) = match layout {
        Layout::DeepseekV4 => unreachable!("named by deepseek_v4()"),
        Layout::Ergo => unreachable!("named by ergo()"),
        // Dory as transformers saves it: Llama's names under `backbone.`, the embeddings'
        // `embeddings`, the output gate's `g_proj`. (Its released checkpoints store each layer as
        // two blocks, which transformers renames on loading and does not write back: read
        // through `canonical`.)
        Layout::Dory => {
            let (hf, gguf) = match role {
                Embed => ("backbone.embeddings", "token_embd"),
                AttnGate => ("model.layers.{b}.self_attn.g_proj", "blk.{b}.attn_gate"),
                // Gemma 2's four norms a layer (weightless here: named, never stored).
                other => sandwich(other),
            };
            let hf = hf.replacen("model.", "backbone.", 1);
            return (format!("{hf}.{suffix}"), format!("{gguf}.{suffix}"));
        }
        // BLT's stacks: Llama's names (each stack's module prefixed by `HfWrap::Module`), and
        // the cross-attention and patch projections of the encoder and decoder.
        Layout::Blt => {
            let (hf, gguf) = match role {
                CrossQ => ("model.cross_attn_layers.{b}.q_proj", "blk.{b}.cross_attn_q"),
                CrossK => ("model.cross_attn_layers.{b}.k_proj", "blk.{b}.cross_attn_k"),
                CrossV => ("model.cross_attn_layers.{b}.v_proj", "blk.{b}.cross_attn_v"),
                CrossO => ("model.cross_attn_layers.{b}.o_proj", "blk.{b}.cross_attn_o"),
                CrossQNorm => (
                    "model.cross_attn_layers.{b}.q_norm",
                    "blk.{b}.cross_attn_q_norm",
                ),
                CrossKNorm => (
                    "model.cross_attn_layers.{b}.k_norm",
                    "blk.{b}.cross_attn_k_norm",
                ),
                PatchProj => ("model.patch_embedding_projection", "patch_proj"),
                TokenProj => ("model.token_embedding_projection", "patch_in_proj"),
                other => llama(other),
            };
            return (format!("{hf}.{suffix}"), format!("{gguf}.{suffix}"));
        }
        // HRM: Llama's layers in two stacks, `{stack}` the layer's (`Spec::instantiate`), the
        // output gate, Q, K and V in one tensor.
        Layout::Hrm => {
            let (hf, gguf) = match role {
                Qkv => ("model.layers.{b}.attn.gqkv_proj", "blk.{b}.attn_gqkv"),
                O => ("model.layers.{b}.attn.o_proj", "blk.{b}.attn_output"),
                other => llama(other),
            };
            let hf = hf.replace("model.layers.", "model.{stack}.layers.");
            return (format!("{hf}.{suffix}"), format!("{gguf}.{suffix}"));
        }
        // Phi-3's fused tensors, DeepSeek's MLA projections and shared experts are in the common table.
        Layout::Llama
        | Layout::Phi3
        | Layout::MiniMaxM3
        | Layout::DeepSeek
        | Layout::MiMo
        | Layout::Ernie45Moe
        | Layout::ExaoneMoe => llama(role),
        // Every `gate_proj` is a `linear_gate`: the attention's output gate, the MLP's and the
        // shared experts' gates.
        Layout::HyV4 => {
            let (hf, gguf) = llama(role);
            let hf = match role {
                AttnGate | Gate | SharedGate => hf.replace(".gate_proj", ".linear_gate"),
                _ => hf.into(),
            };
            return (format!("{hf}.{suffix}"), format!("{gguf}.{suffix}"));
        }
        Layout::HyV3 => match role {
            Router => ("model.layers.{b}.mlp.router.gate", "blk.{b}.ffn_gate_inp"),
            other => shared_mlp(other),
        },
        Layout::Mixtral | Layout::MiniMaxM2 => mixtral(role),
        Layout::LongCat => unreachable!("named by longcat()"),
        Layout::Rwkv => match role {
            Embed => ("rwkv.embeddings", "token_embd"),
            EmbedNorm => ("rwkv.blocks.0.pre_ln", "token_embd_norm"),
            AttnNorm => ("rwkv.blocks.{b}.ln1", "blk.{b}.attn_norm"),
            FfnNorm => ("rwkv.blocks.{b}.ln2", "blk.{b}.attn_norm_2"),
            TmKey => ("rwkv.blocks.{b}.attention.key", "blk.{b}.time_mix_key"),
            TmValue => ("rwkv.blocks.{b}.attention.value", "blk.{b}.time_mix_value"),
            TmReceptance => (
                "rwkv.blocks.{b}.attention.receptance",
                "blk.{b}.time_mix_receptance",
            ),
            TmOutput => (
                "rwkv.blocks.{b}.attention.output",
                "blk.{b}.time_mix_output",
            ),
            Up => (
                "rwkv.blocks.{b}.feed_forward.key",
                "blk.{b}.channel_mix_key",
            ),
            Down => (
                "rwkv.blocks.{b}.feed_forward.value",
                "blk.{b}.channel_mix_value",
            ),
            CmReceptance => (
                "rwkv.blocks.{b}.feed_forward.receptance",
                "blk.{b}.channel_mix_receptance",
            ),
            FinalNorm => ("rwkv.ln_out", "output_norm"),
            LmHead => ("head", "output"),
            other => llama(other),
        },
        Layout::RecurrentGemma => match role {
            AttnNorm => ("model.layers.{b}.temporal_pre_norm", "blk.{b}.attn_norm"),
            FfnNorm => ("model.layers.{b}.channel_pre_norm", "blk.{b}.ffn_norm"),
            Q => ("model.layers.{b}.temporal_block.q_proj", "blk.{b}.attn_q"),
            K => ("model.layers.{b}.temporal_block.k_proj", "blk.{b}.attn_k"),
            V => ("model.layers.{b}.temporal_block.v_proj", "blk.{b}.attn_v"),
            O => (
                "model.layers.{b}.temporal_block.o_proj",
                "blk.{b}.attn_output",
            ),
            SsmIn => ("model.layers.{b}.temporal_block.linear_x", "blk.{b}.ssm_x"),
            SsmZ => ("model.layers.{b}.temporal_block.linear_y", "blk.{b}.ssm_y"),
            SsmConv => (
                "model.layers.{b}.temporal_block.conv_1d",
                "blk.{b}.ssm_conv1d",
            ),
            SsmOut => (
                "model.layers.{b}.temporal_block.linear_out",
                "blk.{b}.ssm_out",
            ),
            Gate => ("model.layers.{b}.mlp_block.gate_proj", "blk.{b}.ffn_gate"),
            Up => ("model.layers.{b}.mlp_block.up_proj", "blk.{b}.ffn_up"),
            Down => ("model.layers.{b}.mlp_block.down_proj", "blk.{b}.ffn_down"),
            FinalNorm => ("model.final_norm", "output_norm"),
            other => llama(other),
        },
        Layout::MiniMax => match role {
            SsmIn => ("model.layers.{b}.self_attn.qkv_proj", "blk.{b}.ssm_in"),
            SsmZ => ("model.layers.{b}.self_attn.output_gate", "blk.{b}.ssm_gate"),
            SsmNorm => ("model.layers.{b}.self_attn.norm", "blk.{b}.ssm_norm"),
            SsmOut => ("model.layers.{b}.self_attn.out_proj", "blk.{b}.ssm_out"),
            other => mixtral(other),
        },
        Layout::Sandwich => sandwich(role),
        Layout::Gemma4 => match role {
            Router => ("model.layers.{b}.router.proj", "blk.{b}.ffn_gate_inp"),
            MlpPostNorm => (
                "model.layers.{b}.post_feedforward_layernorm_1",
                "blk.{b}.post_ffw_norm_1",
            ),
            ExpertsNorm => (
                "model.layers.{b}.pre_feedforward_layernorm_2",
                "blk.{b}.pre_ffw_norm_2",
            ),
            ExpertsPostNorm => (
                "model.layers.{b}.post_feedforward_layernorm_2",
                "blk.{b}.post_ffw_norm_2",
            ),
            other => sandwich(other),
        },
        Layout::Zaya => match role {
            Q => (
                "model.layers.{b}.self_attn.qkv_proj.q_proj",
                "blk.{b}.attn_q",
            ),
            K => (
                "model.layers.{b}.self_attn.qkv_proj.k_proj",
                "blk.{b}.attn_k",
            ),
            CcaVCurrent => (
                "model.layers.{b}.self_attn.qkv_proj.v_proj_current",
                "blk.{b}.attn_v_current",
            ),
            CcaVDelayed => (
                "model.layers.{b}.self_attn.qkv_proj.v_proj_delayed",
                "blk.{b}.attn_v_delayed",
            ),
            CcaConvDepthwise => (
                "model.layers.{b}.self_attn.qkv_proj.conv_qk_depthwise",
                "blk.{b}.attn_qk_conv_depthwise",
            ),
            CcaConvGrouped => (
                "model.layers.{b}.self_attn.qkv_proj.conv_qk_grouped",
                "blk.{b}.attn_qk_conv_grouped",
            ),
            RouterDown => (
                "model.layers.{b}.mlp.gate.down_proj",
                "blk.{b}.ffn_router_down",
            ),
            RouterNorm => (
                "model.layers.{b}.mlp.gate.router_mlp.norm",
                "blk.{b}.ffn_router_norm",
            ),
            RouterFc1 => (
                "model.layers.{b}.mlp.gate.router_mlp.fc1",
                "blk.{b}.ffn_router_fc1",
            ),
            RouterFc2 => (
                "model.layers.{b}.mlp.gate.router_mlp.fc2",
                "blk.{b}.ffn_router_fc2",
            ),
            Router => (
                "model.layers.{b}.mlp.gate.router_mlp.out_proj",
                "blk.{b}.ffn_gate_inp",
            ),
            other => llama(other),
        },
        Layout::Dots3 => match role {
            AttnGate => ("model.layers.{b}.self_attn.g_proj", "blk.{b}.attn_gate"),
            other => llama(other),
        },
        Layout::Axk2 => match role {
            AttnNorm => ("model.layers.{b}.input_layernorm.norm", "blk.{b}.attn_norm"),
            AttnNormDown => (
                "model.layers.{b}.input_layernorm.W_down",
                "blk.{b}.attn_norm_gate_down",
            ),
            AttnNormUp => (
                "model.layers.{b}.input_layernorm.W_up",
                "blk.{b}.attn_norm_gate_up",
            ),
            GatedFfnNorm => (
                "model.layers.{b}.post_attention_layernorm.norm",
                "blk.{b}.ffn_norm",
            ),
            FfnNormDown => (
                "model.layers.{b}.post_attention_layernorm.W_down",
                "blk.{b}.ffn_norm_gate_down",
            ),
            FfnNormUp => (
                "model.layers.{b}.post_attention_layernorm.W_up",
                "blk.{b}.ffn_norm_gate_up",
            ),
            other => llama(other),
        },
        Layout::Gemma3n => match role {
            AltUpRouterNorm => (
                "model.layers.{b}.altup.router_norm",
                "blk.{b}.altup_router_norm",
            ),
            AltUpRouter => (
                "model.layers.{b}.altup.modality_router",
                "blk.{b}.altup_router",
            ),
            AltUpPredict => (
                "model.layers.{b}.altup.prediction_coefs",
                "blk.{b}.altup_predict_coef",
            ),
            AltUpCorrect => (
                "model.layers.{b}.altup.correction_coefs",
                "blk.{b}.altup_correct_coef",
            ),
            LaurelLeft => ("model.layers.{b}.laurel.linear_left", "blk.{b}.laurel_l"),
            LaurelRight => ("model.layers.{b}.laurel.linear_right", "blk.{b}.laurel_r"),
            LaurelNorm => (
                "model.layers.{b}.laurel.post_laurel_norm",
                "blk.{b}.laurel_post_norm",
            ),
            AltUpProj => ("model.altup_projections.{e}", "altup_proj"),
            AltUpUnembed => ("model.altup_unembed_projections.{e}", "altup_unembd_proj"),
            other => sandwich(other),
        },
        Layout::Gpt2 | Layout::GptBigCode => gpt2(role),
        Layout::Opt => match role {
            Embed => ("model.decoder.embed_tokens", "token_embd"),
            EmbedProjIn => ("model.decoder.project_in", "token_embd_proj"),
            EmbedProjOut => ("model.decoder.project_out", "output_proj"),
            PosEmbed => ("model.decoder.embed_positions", "position_embd"),
            AttnNorm => (
                "model.decoder.layers.{b}.self_attn_layer_norm",
                "blk.{b}.attn_norm",
            ),
            Q => (
                "model.decoder.layers.{b}.self_attn.q_proj",
                "blk.{b}.attn_q",
            ),
            K => (
                "model.decoder.layers.{b}.self_attn.k_proj",
                "blk.{b}.attn_k",
            ),
            V => (
                "model.decoder.layers.{b}.self_attn.v_proj",
                "blk.{b}.attn_v",
            ),
            O => (
                "model.decoder.layers.{b}.self_attn.out_proj",
                "blk.{b}.attn_output",
            ),
            FfnNorm => (
                "model.decoder.layers.{b}.final_layer_norm",
                "blk.{b}.ffn_norm",
            ),
            Up => ("model.decoder.layers.{b}.fc1", "blk.{b}.ffn_up"),
            Down => ("model.decoder.layers.{b}.fc2", "blk.{b}.ffn_down"),
            FinalNorm => ("model.decoder.final_layer_norm", "output_norm"),
            other => llama(other),
        },
        Layout::GptNeo => match role {
            Q => ("transformer.h.{b}.attn.attention.q_proj", "blk.{b}.attn_q"),
            K => ("transformer.h.{b}.attn.attention.k_proj", "blk.{b}.attn_k"),
            V => ("transformer.h.{b}.attn.attention.v_proj", "blk.{b}.attn_v"),
            O => (
                "transformer.h.{b}.attn.attention.out_proj",
                "blk.{b}.attn_output",
            ),
            other => gpt2(other),
        },
        Layout::Phi => match role {
            O => ("model.layers.{b}.self_attn.dense", "blk.{b}.attn_output"),
            Up => ("model.layers.{b}.mlp.fc1", "blk.{b}.ffn_up"),
            Down => ("model.layers.{b}.mlp.fc2", "blk.{b}.ffn_down"),
            QNorm => (
                "model.layers.{b}.self_attn.q_layernorm",
                "blk.{b}.attn_q_norm",
            ),
            KNorm => (
                "model.layers.{b}.self_attn.k_layernorm",
                "blk.{b}.attn_k_norm",
            ),
            FinalNorm => ("model.final_layernorm", "output_norm"),
            other => llama(other),
        },
        Layout::GptNeox => match role {
            Embed => ("gpt_neox.embed_in", "token_embd"),
            AttnNorm => ("gpt_neox.layers.{b}.input_layernorm", "blk.{b}.attn_norm"),
            Qkv => (
                "gpt_neox.layers.{b}.attention.query_key_value",
                "blk.{b}.attn_qkv",
            ),
            O => ("gpt_neox.layers.{b}.attention.dense", "blk.{b}.attn_output"),
            FfnNorm => (
                "gpt_neox.layers.{b}.post_attention_layernorm",
                "blk.{b}.ffn_norm",
            ),
            Up => ("gpt_neox.layers.{b}.mlp.dense_h_to_4h", "blk.{b}.ffn_up"),
            Down => ("gpt_neox.layers.{b}.mlp.dense_4h_to_h", "blk.{b}.ffn_down"),
            FinalNorm => ("gpt_neox.final_layer_norm", "output_norm"),
            LmHead => ("embed_out", "output"),
            other => llama(other),
        },
        Layout::GptNeoxJapanese => match role {
            Embed => ("gpt_neox_japanese.embed_in", "token_embd"),
            AttnNorm => (
                "gpt_neox_japanese.layers.{b}.input_layernorm",
                "blk.{b}.attn_norm",
            ),
            Qkv => (
                "gpt_neox_japanese.layers.{b}.attention.query_key_value",
                "blk.{b}.attn_qkv",
            ),
            O => (
                "gpt_neox_japanese.layers.{b}.attention.dense",
                "blk.{b}.attn_output",
            ),
            FfnNorm => (
                "gpt_neox_japanese.layers.{b}.post_attention_layernorm",
                "blk.{b}.ffn_norm",
            ),
            Up => (
                "gpt_neox_japanese.layers.{b}.mlp.dense_h_to_4h",
                "blk.{b}.ffn_up",
            ),
            Down => (
                "gpt_neox_japanese.layers.{b}.mlp.dense_4h_to_h",
                "blk.{b}.ffn_down",
            ),
            FinalNorm => ("gpt_neox_japanese.final_layer_norm", "output_norm"),
            LmHead => ("embed_out", "output"),
            other => llama(other),
        },
        Layout::Falcon | Layout::FalconTwoNorms => match (layout, role) {
            (_, Embed) => ("transformer.word_embeddings", "token_embd"),
            // llama.cpp's attn_norm is the MLP's norm here, attn_norm_2 attention's (gguf-py's
            // tensor_mapping; llama.cpp's falcon graph).
            (Layout::FalconTwoNorms, AttnNorm) => {
                ("transformer.h.{b}.ln_attn", "blk.{b}.attn_norm_2")
            }
            (Layout::FalconTwoNorms, FfnNorm) => ("transformer.h.{b}.ln_mlp", "blk.{b}.attn_norm"),
            (_, AttnNorm) => ("transformer.h.{b}.input_layernorm", "blk.{b}.attn_norm"),
            (_, FfnNorm) => (
                "transformer.h.{b}.post_attention_layernorm",
                "blk.{b}.ffn_norm",
            ),
            (_, Qkv) => (
                "transformer.h.{b}.self_attention.query_key_value",
                "blk.{b}.attn_qkv",
            ),
            (_, O) => (
                "transformer.h.{b}.self_attention.dense",
                "blk.{b}.attn_output",
            ),
            (_, Up) => ("transformer.h.{b}.mlp.dense_h_to_4h", "blk.{b}.ffn_up"),
            (_, Down) => ("transformer.h.{b}.mlp.dense_4h_to_h", "blk.{b}.ffn_down"),
            (_, FinalNorm) => ("transformer.ln_f", "output_norm"),
            (_, other) => llama(other),
        },
        Layout::HunYuan => match role {
            QNorm => (
                "model.layers.{b}.self_attn.query_layernorm",
                "blk.{b}.attn_q_norm",
            ),
            KNorm => (
                "model.layers.{b}.self_attn.key_layernorm",
                "blk.{b}.attn_k_norm",
            ),
            // HunYuan-MoE: the router's `wg` and a shared MLP.
            Router => ("model.layers.{b}.mlp.gate.wg", "blk.{b}.ffn_gate_inp"),
            other => shared_mlp(other),
        },
        Layout::Apertus => match role {
            AttnNorm => ("model.layers.{b}.attention_layernorm", "blk.{b}.attn_norm"),
            FfnNorm => ("model.layers.{b}.feedforward_layernorm", "blk.{b}.ffn_norm"),
            other => llama(other),
        },
        Layout::Bloom => match role {
            Embed => ("transformer.word_embeddings", "token_embd"),
            EmbedNorm => ("transformer.word_embeddings_layernorm", "token_embd_norm"),
            AttnNorm => ("transformer.h.{b}.input_layernorm", "blk.{b}.attn_norm"),
            Qkv => (
                "transformer.h.{b}.self_attention.query_key_value",
                "blk.{b}.attn_qkv",
            ),
            O => (
                "transformer.h.{b}.self_attention.dense",
                "blk.{b}.attn_output",
            ),
            FfnNorm => (
                "transformer.h.{b}.post_attention_layernorm",
                "blk.{b}.ffn_norm",
            ),
            Up => ("transformer.h.{b}.mlp.dense_h_to_4h", "blk.{b}.ffn_up"),
            Down => ("transformer.h.{b}.mlp.dense_4h_to_h", "blk.{b}.ffn_down"),
            FinalNorm => ("transformer.ln_f", "output_norm"),
            other => llama(other),
        },
        Layout::NanoChat => match role {
            Up => ("model.layers.{b}.mlp.fc1", "blk.{b}.ffn_up"),
            Down => ("model.layers.{b}.mlp.fc2", "blk.{b}.ffn_down"),
            other => llama(other),
        },
        Layout::ModernBertDecoder => match role {
            Embed => ("model.embeddings.tok_embeddings", "token_embd"),
            EmbedNorm => ("model.embeddings.norm", "token_embd_norm"),
            AttnNorm => ("model.layers.{b}.attn_norm", "blk.{b}.attn_norm"),
            Q => ("model.layers.{b}.attn.q_proj", "blk.{b}.attn_q"),
            K => ("model.layers.{b}.attn.k_proj", "blk.{b}.attn_k"),
            V => ("model.layers.{b}.attn.v_proj", "blk.{b}.attn_v"),
            O => ("model.layers.{b}.attn.Wo", "blk.{b}.attn_output"),
            FfnNorm => ("model.layers.{b}.mlp_norm", "blk.{b}.ffn_norm"),
            GateUp => ("model.layers.{b}.mlp.Wi", "blk.{b}.ffn_up"),
            Down => ("model.layers.{b}.mlp.Wo", "blk.{b}.ffn_down"),
            FinalNorm => ("model.final_norm", "output_norm"),
            LmHead => ("decoder", "output"),
            other => llama(other),
        },
        Layout::Ctrl => match role {
            Embed => ("transformer.w", "token_embd"),
            AttnNorm => ("transformer.h.{b}.layernorm1", "blk.{b}.attn_norm"),
            Q => (
                "transformer.h.{b}.multi_head_attention.Wq",
                "blk.{b}.attn_q",
            ),
            K => (
                "transformer.h.{b}.multi_head_attention.Wk",
                "blk.{b}.attn_k",
            ),
            V => (
                "transformer.h.{b}.multi_head_attention.Wv",
                "blk.{b}.attn_v",
            ),
            O => (
                "transformer.h.{b}.multi_head_attention.dense",
                "blk.{b}.attn_output",
            ),
            FfnNorm => ("transformer.h.{b}.layernorm2", "blk.{b}.ffn_norm"),
            Up => ("transformer.h.{b}.ffn.0", "blk.{b}.ffn_up"),
            Down => ("transformer.h.{b}.ffn.2", "blk.{b}.ffn_down"),
            FinalNorm => ("transformer.layernorm", "output_norm"),
            other => llama(other),
        },
        Layout::StableLm => match role {
            QNorm => (
                "model.layers.{b}.self_attn.q_layernorm.norms.{e}",
                "blk.{b}.attn_q_norm",
            ),
            KNorm => (
                "model.layers.{b}.self_attn.k_layernorm.norms.{e}",
                "blk.{b}.attn_k_norm",
            ),
            other => llama(other),
        },
        Layout::Inkling => match role {
            EmbedNorm => ("model.embed_tokens.embed_norm", "token_embd_norm"),
            other => llama(other),
        },
        Layout::Inkling2 => unreachable!("named by inkling2()"),
        Layout::CpmAnt => match role {
            Embed => ("cpmant.input_embedding", "token_embd"),
            SegmentEmbed => ("cpmant.segment_embedding", "token_types"),
            AttnNorm => (
                "cpmant.encoder.layers.{b}.self_att.layernorm_before_attention",
                "blk.{b}.attn_norm",
            ),
            Q => (
                "cpmant.encoder.layers.{b}.self_att.self_attention.project_q",
                "blk.{b}.attn_q",
            ),
            K => (
                "cpmant.encoder.layers.{b}.self_att.self_attention.project_k",
                "blk.{b}.attn_k",
            ),
            V => (
                "cpmant.encoder.layers.{b}.self_att.self_attention.project_v",
                "blk.{b}.attn_v",
            ),
            O => (
                "cpmant.encoder.layers.{b}.self_att.self_attention.attention_out",
                "blk.{b}.attn_output",
            ),
            FfnNorm => (
                "cpmant.encoder.layers.{b}.ffn.layernorm_before_ffn",
                "blk.{b}.ffn_norm",
            ),
            Gate => (
                "cpmant.encoder.layers.{b}.ffn.ffn.w_in.w_0",
                "blk.{b}.ffn_gate",
            ),
            Up => (
                "cpmant.encoder.layers.{b}.ffn.ffn.w_in.w_1",
                "blk.{b}.ffn_up",
            ),
            Down => (
                "cpmant.encoder.layers.{b}.ffn.ffn.w_out",
                "blk.{b}.ffn_down",
            ),
            FinalNorm => ("cpmant.encoder.output_layernorm", "output_norm"),
            other => llama(other),
        },
        Layout::Xglm => match role {
            AttnNorm => ("model.layers.{b}.self_attn_layer_norm", "blk.{b}.attn_norm"),
            O => ("model.layers.{b}.self_attn.out_proj", "blk.{b}.attn_output"),
            FfnNorm => ("model.layers.{b}.final_layer_norm", "blk.{b}.ffn_norm"),
            Up => ("model.layers.{b}.fc1", "blk.{b}.ffn_up"),
            Down => ("model.layers.{b}.fc2", "blk.{b}.ffn_down"),
            FinalNorm => ("model.layer_norm", "output_norm"),
            other => llama(other),
        },
        Layout::BioGpt => match role {
            Embed => ("biogpt.embed_tokens", "token_embd"),
            PosEmbed => ("biogpt.embed_positions", "position_embd"),
            AttnNorm => (
                "biogpt.layers.{b}.self_attn_layer_norm",
                "blk.{b}.attn_norm",
            ),
            Q => ("biogpt.layers.{b}.self_attn.q_proj", "blk.{b}.attn_q"),
            K => ("biogpt.layers.{b}.self_attn.k_proj", "blk.{b}.attn_k"),
            V => ("biogpt.layers.{b}.self_attn.v_proj", "blk.{b}.attn_v"),
            O => (
                "biogpt.layers.{b}.self_attn.out_proj",
                "blk.{b}.attn_output",
            ),
            FfnNorm => ("biogpt.layers.{b}.final_layer_norm", "blk.{b}.ffn_norm"),
            Up => ("biogpt.layers.{b}.fc1", "blk.{b}.ffn_up"),
            Down => ("biogpt.layers.{b}.fc2", "blk.{b}.ffn_down"),
            FinalNorm => ("biogpt.layer_norm", "output_norm"),
            LmHead => ("output_projection", "output"),
            other => llama(other),
        },
        Layout::Mpt => match role {
            Embed => ("transformer.wte", "token_embd"),
            AttnNorm => ("transformer.blocks.{b}.norm_1", "blk.{b}.attn_norm"),
            Qkv => ("transformer.blocks.{b}.attn.Wqkv", "blk.{b}.attn_qkv"),
            O => (
                "transformer.blocks.{b}.attn.out_proj",
                "blk.{b}.attn_output",
            ),
            FfnNorm => ("transformer.blocks.{b}.norm_2", "blk.{b}.ffn_norm"),
            Up => ("transformer.blocks.{b}.ffn.up_proj", "blk.{b}.ffn_up"),
            Down => ("transformer.blocks.{b}.ffn.down_proj", "blk.{b}.ffn_down"),
            FinalNorm => ("transformer.norm_f", "output_norm"),
            other => llama(other),
        },
        Layout::HyperClovax => match role {
            PostAttnNorm => ("model.layers.{b}.post_norm1", "blk.{b}.post_attention_norm"),
            PostFfnNorm => ("model.layers.{b}.post_norm2", "blk.{b}.post_ffw_norm"),
            other => llama(other),
        },
        Layout::OpenAiGpt => match role {
            Embed => ("transformer.tokens_embed", "token_embd"),
            PosEmbed => ("transformer.positions_embed", "position_embd"),
            other => gpt2(other),
        },
        Layout::Git => match role {
            Embed => ("git.embeddings.word_embeddings", "token_embd"),
            PosEmbed => ("git.embeddings.position_embeddings", "position_embd"),
            EmbedNorm => ("git.embeddings.LayerNorm", "token_embd_norm"),
            Q => (
                "git.encoder.layer.{b}.attention.self.query",
                "blk.{b}.attn_q",
            ),
            K => ("git.encoder.layer.{b}.attention.self.key", "blk.{b}.attn_k"),
            V => (
                "git.encoder.layer.{b}.attention.self.value",
                "blk.{b}.attn_v",
            ),
            O => (
                "git.encoder.layer.{b}.attention.output.dense",
                "blk.{b}.attn_output",
            ),
            AttnNorm => (
                "git.encoder.layer.{b}.attention.output.LayerNorm",
                "blk.{b}.attn_output_norm",
            ),
            Up => ("git.encoder.layer.{b}.intermediate.dense", "blk.{b}.ffn_up"),
            Down => ("git.encoder.layer.{b}.output.dense", "blk.{b}.ffn_down"),
            FfnNorm => (
                "git.encoder.layer.{b}.output.LayerNorm",
                "blk.{b}.layer_output_norm",
            ),
            LmHead => ("output", "output"),
            other => llama(other),
        },
        Layout::CodeGen => match role {
            Qkv => ("transformer.h.{b}.attn.qkv_proj", "blk.{b}.attn_qkv"),
            other => gptj(other),
        },
        Layout::Gptj => gptj(role),
        Layout::Persimmon => match role {
            Qkv => (
                "model.layers.{b}.self_attn.query_key_value",
                "blk.{b}.attn_qkv",
            ),
            O => ("model.layers.{b}.self_attn.dense", "blk.{b}.attn_output"),
            QNorm => (
                "model.layers.{b}.self_attn.q_layernorm",
                "blk.{b}.attn_q_norm",
            ),
            KNorm => (
                "model.layers.{b}.self_attn.k_layernorm",
                "blk.{b}.attn_k_norm",
            ),
            Up => ("model.layers.{b}.mlp.dense_h_to_4h", "blk.{b}.ffn_up"),
            Down => ("model.layers.{b}.mlp.dense_4h_to_h", "blk.{b}.ffn_down"),
            FinalNorm => ("model.final_layernorm", "output_norm"),
            other => llama(other),
        },
        Layout::Sarvam => match role {
            Embed => ("model.word_embeddings", "token_embd"),
            Qkv => (
                "model.layers.{b}.attention.query_key_value",
                "blk.{b}.attn_qkv",
            ),
            O => ("model.layers.{b}.attention.dense", "blk.{b}.attn_output"),
            QNorm => (
                "model.layers.{b}.attention.query_layernorm",
                "blk.{b}.attn_q_norm",
            ),
            KNorm => (
                "model.layers.{b}.attention.key_layernorm",
                "blk.{b}.attn_k_norm",
            ),
            other => llama(other),
        },
        Layout::GraniteMoeSwa => match role {
            Router => (
                "model.layers.{b}.block_sparse_moe.router",
                "blk.{b}.ffn_gate_inp",
            ),
            SharedGateUp | SharedDown => granite_shared(role),
            other => llama(other),
        },
        Layout::Bamba => match role {
            FfnNorm => ("model.layers.{b}.pre_ff_layernorm", "blk.{b}.ffn_norm"),
            Router => (
                "model.layers.{b}.feed_forward.router",
                "blk.{b}.ffn_gate_inp",
            ),
            ExpertGate => (
                "model.layers.{b}.feed_forward.experts.{e}.gate_proj",
                "blk.{b}.ffn_gate_exps",
            ),
            ExpertUp => (
                "model.layers.{b}.feed_forward.experts.{e}.up_proj",
                "blk.{b}.ffn_up_exps",
            ),
            ExpertDown => (
                "model.layers.{b}.feed_forward.experts.{e}.down_proj",
                "blk.{b}.ffn_down_exps",
            ),
            Gate => (
                "model.layers.{b}.feed_forward.gate_proj",
                "blk.{b}.ffn_gate",
            ),
            Up => ("model.layers.{b}.feed_forward.up_proj", "blk.{b}.ffn_up"),
            Down => (
                "model.layers.{b}.feed_forward.down_proj",
                "blk.{b}.ffn_down",
            ),
            FinalNorm => ("model.final_layernorm", "output_norm"),
            other => llama(other),
        },
        Layout::Lfm3 => match role {
            PostAttnNorm => (
                "model.layers.{b}.post_operator_norm",
                "blk.{b}.post_attention_norm",
            ),
            PostFfnNorm => ("model.layers.{b}.post_ffn_norm", "blk.{b}.post_ffw_norm"),
            QNorm | KNorm | O | AttnGate => llama(role),
            other => return names(Layout::Lfm2, other, bias),
        },
        Layout::Lfm2 => match role {
            AttnNorm => ("model.layers.{b}.operator_norm", "blk.{b}.attn_norm"),
            QNorm => (
                "model.layers.{b}.self_attn.q_layernorm",
                "blk.{b}.attn_q_norm",
            ),
            KNorm => (
                "model.layers.{b}.self_attn.k_layernorm",
                "blk.{b}.attn_k_norm",
            ),
            O => ("model.layers.{b}.self_attn.out_proj", "blk.{b}.attn_output"),
            SsmIn => ("model.layers.{b}.conv.in_proj", "blk.{b}.shortconv.in_proj"),
            SsmConv => ("model.layers.{b}.conv.conv", "blk.{b}.shortconv.conv"),
            SsmOut => (
                "model.layers.{b}.conv.out_proj",
                "blk.{b}.shortconv.out_proj",
            ),
            FfnNorm => ("model.layers.{b}.ffn_norm", "blk.{b}.ffn_norm"),
            Gate => ("model.layers.{b}.feed_forward.w1", "blk.{b}.ffn_gate"),
            Up => ("model.layers.{b}.feed_forward.w3", "blk.{b}.ffn_up"),
            Down => ("model.layers.{b}.feed_forward.w2", "blk.{b}.ffn_down"),
            FinalNorm => ("model.embedding_norm", "token_embd_norm"),
            // LFM2-MoE's experts and router.
            Router => ("model.layers.{b}.feed_forward.gate", "blk.{b}.ffn_gate_inp"),
            ExpertGate => (
                "model.layers.{b}.feed_forward.experts.{e}.w1",
                "blk.{b}.ffn_gate_exps",
            ),
            ExpertUp => (
                "model.layers.{b}.feed_forward.experts.{e}.w3",
                "blk.{b}.ffn_up_exps",
            ),
            ExpertDown => (
                "model.layers.{b}.feed_forward.experts.{e}.w2",
                "blk.{b}.ffn_down_exps",
            ),
            other => llama(other),
        },
        Layout::NemotronH => match role {
            Embed => ("backbone.embeddings", "token_embd"),
            AttnNorm | FfnNorm => ("backbone.layers.{b}.norm", "blk.{b}.attn_norm"),
            SsmIn => ("backbone.layers.{b}.mixer.in_proj", "blk.{b}.ssm_in"),
            SsmConv => ("backbone.layers.{b}.mixer.conv1d", "blk.{b}.ssm_conv1d"),
            SsmNorm => ("backbone.layers.{b}.mixer.norm", "blk.{b}.ssm_norm"),
            SsmOut => ("backbone.layers.{b}.mixer.out_proj", "blk.{b}.ssm_out"),
            Q => ("backbone.layers.{b}.mixer.q_proj", "blk.{b}.attn_q"),
            K => ("backbone.layers.{b}.mixer.k_proj", "blk.{b}.attn_k"),
            V => ("backbone.layers.{b}.mixer.v_proj", "blk.{b}.attn_v"),
            O => ("backbone.layers.{b}.mixer.o_proj", "blk.{b}.attn_output"),
            Up => ("backbone.layers.{b}.mixer.up_proj", "blk.{b}.ffn_up"),
            Down => ("backbone.layers.{b}.mixer.down_proj", "blk.{b}.ffn_down"),
            Router => ("backbone.layers.{b}.mixer.gate", "blk.{b}.ffn_gate_inp"),
            ExpertUp => (
                "backbone.layers.{b}.mixer.experts.{e}.up_proj",
                "blk.{b}.ffn_up_exps",
            ),
            ExpertDown => (
                "backbone.layers.{b}.mixer.experts.{e}.down_proj",
                "blk.{b}.ffn_down_exps",
            ),
            SharedUp => (
                "backbone.layers.{b}.mixer.shared_experts.up_proj",
                "blk.{b}.ffn_up_shexp",
            ),
            SharedDown => (
                "backbone.layers.{b}.mixer.shared_experts.down_proj",
                "blk.{b}.ffn_down_shexp",
            ),
            FinalNorm => ("backbone.norm_f", "output_norm"),
            other => llama(other),
        },
        Layout::Zamba2 | Layout::Zamba => zamba2(role),
        Layout::Xlstm => match role {
            Embed => ("backbone.embeddings", "token_embd"),
            AttnNorm => ("backbone.blocks.{b}.norm_mlstm", "blk.{b}.attn_norm"),
            SsmQ => ("backbone.blocks.{b}.mlstm_layer.q", "blk.{b}.attn_q"),
            SsmK => ("backbone.blocks.{b}.mlstm_layer.k", "blk.{b}.attn_k"),
            SsmV => ("backbone.blocks.{b}.mlstm_layer.v", "blk.{b}.attn_v"),
            SsmZ => (
                "backbone.blocks.{b}.mlstm_layer.ogate_preact",
                "blk.{b}.attn_gate",
            ),
            SsmBeta => (
                "backbone.blocks.{b}.mlstm_layer.igate_preact",
                "blk.{b}.attn_igate",
            ),
            SsmAlpha => (
                "backbone.blocks.{b}.mlstm_layer.fgate_preact",
                "blk.{b}.attn_fgate",
            ),
            // Fused: q | k | v | o in one projection, the input and forget gates in another.
            SsmIn => (
                "backbone.blocks.{b}.mlstm_layer.qkv_opreact",
                "blk.{b}.attn_qkvo",
            ),
            SsmBa => (
                "backbone.blocks.{b}.mlstm_layer.ifgate_preact",
                "blk.{b}.attn_ifgate",
            ),
            GateUp => (
                "backbone.blocks.{b}.ffn.proj_up_gate_z",
                "blk.{b}.ffn_gate_up",
            ),
            SsmNorm => (
                "backbone.blocks.{b}.mlstm_layer.multihead_norm",
                "blk.{b}.attn_norm_2",
            ),
            SsmOut => (
                "backbone.blocks.{b}.mlstm_layer.out_proj",
                "blk.{b}.attn_output",
            ),
            FfnNorm => ("backbone.blocks.{b}.norm_ffn", "blk.{b}.ffn_norm"),
            Gate => ("backbone.blocks.{b}.ffn.proj_up_gate", "blk.{b}.ffn_gate"),
            Up => ("backbone.blocks.{b}.ffn.proj_up", "blk.{b}.ffn_up"),
            Down => ("backbone.blocks.{b}.ffn.proj_down", "blk.{b}.ffn_down"),
            FinalNorm => ("backbone.out_norm", "output_norm"),
            other => llama(other),
        },
        Layout::Mamba2 => match role {
            Embed => ("backbone.embeddings", "token_embd"),
            AttnNorm => ("backbone.layers.{b}.norm", "blk.{b}.attn_norm"),
            SsmIn => ("backbone.layers.{b}.mixer.in_proj", "blk.{b}.ssm_in"),
            SsmConv => ("backbone.layers.{b}.mixer.conv1d", "blk.{b}.ssm_conv1d"),
            SsmNorm => ("backbone.layers.{b}.mixer.norm", "blk.{b}.ssm_norm"),
            SsmOut => ("backbone.layers.{b}.mixer.out_proj", "blk.{b}.ssm_out"),
            SsmX => ("backbone.layers.{b}.mixer.x_proj", "blk.{b}.ssm_x"),
            SsmDt => ("backbone.layers.{b}.mixer.dt_proj", "blk.{b}.ssm_dt"),
            FinalNorm => ("backbone.norm_f", "output_norm"),
            other => llama(other),
        },
        Layout::Dbrx => match role {
            Embed => ("transformer.wte", "token_embd"),
            AttnNorm => (
                "transformer.blocks.{b}.norm_attn_norm.norm_1",
                "blk.{b}.attn_norm",
            ),
            Qkv => (
                "transformer.blocks.{b}.norm_attn_norm.attn.Wqkv",
                "blk.{b}.attn_qkv",
            ),
            O => (
                "transformer.blocks.{b}.norm_attn_norm.attn.out_proj",
                "blk.{b}.attn_output",
            ),
            FfnNorm => (
                "transformer.blocks.{b}.norm_attn_norm.norm_2",
                "blk.{b}.attn_output_norm",
            ),
            Router => (
                "transformer.blocks.{b}.ffn.router.layer",
                "blk.{b}.ffn_gate_inp",
            ),
            FinalNorm => ("transformer.norm_f", "output_norm"),
            other => llama(other),
        },
        Layout::JetMoe => match role {
            Router => ("model.layers.{b}.mlp.router.layer", "blk.{b}.ffn_gate_inp"),
            ExpertGateUp => (
                "model.layers.{b}.mlp.input_linear",
                "blk.{b}.ffn_gate_up_exps",
            ),
            ExpertDown => (
                "model.layers.{b}.mlp.output_linear",
                "blk.{b}.ffn_down_exps",
            ),
            other => llama(other),
        },
        Layout::GraniteMoe | Layout::GraniteMoeHybrid => match role {
            // GraniteMoeHybrid without experts: its shared MLP is the whole FFN.
            GateUp if layout == Layout::GraniteMoeHybrid => granite_shared(SharedGateUp),
            Down if layout == Layout::GraniteMoeHybrid => granite_shared(SharedDown),
            Router => (
                "model.layers.{b}.block_sparse_moe.router.layer",
                "blk.{b}.ffn_gate_inp",
            ),
            ExpertGateUp => (
                "model.layers.{b}.block_sparse_moe.input_linear",
                "blk.{b}.ffn_gate_up_exps",
            ),
            ExpertDown => (
                "model.layers.{b}.block_sparse_moe.output_linear",
                "blk.{b}.ffn_down_exps",
            ),
            SharedGateUp | SharedDown => granite_shared(role),
            other => llama(other),
        },
        Layout::Laguna if role == AttnGate => {
            ("model.layers.{b}.self_attn.g_proj", "blk.{b}.attn_gate")
        }
        Layout::KimiLinear => match role {
            SsmBeta => ("model.layers.{b}.self_attn.b_proj", "blk.{b}.ssm_beta"),
            SsmNorm => ("model.layers.{b}.self_attn.o_norm", "blk.{b}.ssm_norm"),
            SsmOut => ("model.layers.{b}.self_attn.o_proj", "blk.{b}.ssm_out"),
            // The dense FFN and the experts sit in the same module.
            Gate => (
                "model.layers.{b}.block_sparse_moe.gate_proj",
                "blk.{b}.ffn_gate",
            ),
            Up => (
                "model.layers.{b}.block_sparse_moe.up_proj",
                "blk.{b}.ffn_up",
            ),
            Down => (
                "model.layers.{b}.block_sparse_moe.down_proj",
                "blk.{b}.ffn_down",
            ),
            SharedGate => (
                "model.layers.{b}.block_sparse_moe.shared_experts.gate_proj",
                "blk.{b}.ffn_gate_shexp",
            ),
            SharedUp => (
                "model.layers.{b}.block_sparse_moe.shared_experts.up_proj",
                "blk.{b}.ffn_up_shexp",
            ),
            SharedDown => (
                "model.layers.{b}.block_sparse_moe.shared_experts.down_proj",
                "blk.{b}.ffn_down_shexp",
            ),
            Router | ExpertGate | ExpertUp | ExpertDown => mixtral(role),
            other => llama(other),
        },
        Layout::Bailing => match role {
            Embed => ("model.word_embeddings", "token_embd"),
            Q | SsmQ => ("model.layers.{b}.attention.q_proj", "blk.{b}.attn_q"),
            SsmK => ("model.layers.{b}.attention.k_proj", "blk.{b}.attn_k"),
            SsmV => ("model.layers.{b}.attention.v_proj", "blk.{b}.attn_v"),
            QA => ("model.layers.{b}.attention.q_a_proj", "blk.{b}.attn_q_a"),
            QANorm => (
                "model.layers.{b}.attention.q_a_layernorm",
                "blk.{b}.attn_q_a_norm",
            ),
            QB => ("model.layers.{b}.attention.q_b_proj", "blk.{b}.attn_q_b"),
            KvA => (
                "model.layers.{b}.attention.kv_a_proj_with_mqa",
                "blk.{b}.attn_kv_a_mqa",
            ),
            KvANorm => (
                "model.layers.{b}.attention.kv_a_layernorm",
                "blk.{b}.attn_kv_a_norm",
            ),
            KvB => ("model.layers.{b}.attention.kv_b_proj", "blk.{b}.attn_kv_b"),
            O | SsmOut => ("model.layers.{b}.attention.dense", "blk.{b}.attn_output"),
            // The attention's gate per head, and the KDA's output gate.
            AttnGate | SsmGB => ("model.layers.{b}.attention.g_proj", "blk.{b}.attn_gate"),
            SsmConvQ => (
                "model.layers.{b}.attention.q_conv1d",
                "blk.{b}.ssm_conv1d_q",
            ),
            SsmConvK => (
                "model.layers.{b}.attention.k_conv1d",
                "blk.{b}.ssm_conv1d_k",
            ),
            SsmConvV => (
                "model.layers.{b}.attention.v_conv1d",
                "blk.{b}.ssm_conv1d_v",
            ),
            SsmFB => ("model.layers.{b}.attention.f_proj", "blk.{b}.ssm_f"),
            SsmBeta => ("model.layers.{b}.attention.b_proj", "blk.{b}.ssm_beta"),
            SsmNorm => ("model.layers.{b}.attention.o_norm", "blk.{b}.ssm_norm"),
            other => llama(other),
        },
        Layout::FalconH1 => match role {
            FfnNorm => ("model.layers.{b}.pre_ff_layernorm", "blk.{b}.ffn_norm"),
            Gate => (
                "model.layers.{b}.feed_forward.gate_proj",
                "blk.{b}.ffn_gate",
            ),
            Up => ("model.layers.{b}.feed_forward.up_proj", "blk.{b}.ffn_up"),
            Down => (
                "model.layers.{b}.feed_forward.down_proj",
                "blk.{b}.ffn_down",
            ),
            FinalNorm => ("model.final_layernorm", "output_norm"),
            other => llama(other),
        },
        Layout::OlmoHybrid => match role {
            AttnNorm => ("model.layers.{b}.attention_layer_norm", "blk.{b}.attn_norm"),
            // Before the FFN in the DeltaNet layers, after the attention in the others.
            FfnNorm | PostAttnNorm => (
                "model.layers.{b}.feedforward_layer_norm",
                "blk.{b}.ffn_norm",
            ),
            PostFfnNorm => (
                "model.layers.{b}.post_feedforward_layernorm",
                "blk.{b}.post_ffw_norm",
            ),
            SsmQ => ("model.layers.{b}.linear_attn.q_proj", "blk.{b}.ssm_q"),
            SsmK => ("model.layers.{b}.linear_attn.k_proj", "blk.{b}.ssm_k"),
            SsmV => ("model.layers.{b}.linear_attn.v_proj", "blk.{b}.ssm_v"),
            SsmConvQ => (
                "model.layers.{b}.linear_attn.q_conv1d",
                "blk.{b}.ssm_conv1d_q",
            ),
            SsmConvK => (
                "model.layers.{b}.linear_attn.k_conv1d",
                "blk.{b}.ssm_conv1d_k",
            ),
            SsmConvV => (
                "model.layers.{b}.linear_attn.v_conv1d",
                "blk.{b}.ssm_conv1d_v",
            ),
            SsmZ => ("model.layers.{b}.linear_attn.g_proj", "blk.{b}.ssm_gate"),
            SsmBeta => ("model.layers.{b}.linear_attn.b_proj", "blk.{b}.ssm_beta"),
            SsmAlpha => ("model.layers.{b}.linear_attn.a_proj", "blk.{b}.ssm_alpha"),
            SsmNorm => ("model.layers.{b}.linear_attn.o_norm", "blk.{b}.ssm_norm"),
            SsmOut => ("model.layers.{b}.linear_attn.o_proj", "blk.{b}.ssm_out"),
            other => llama(other),
        },
        Layout::LaraMini => match role {
            SsmIn => ("model.layers.{b}.linear_attn.in_proj", "blk.{b}.ssm_in"),
            SsmConv => ("model.layers.{b}.linear_attn.conv1d", "blk.{b}.ssm_conv1d"),
            SsmNorm => ("model.layers.{b}.linear_attn.out_norm", "blk.{b}.ssm_norm"),
            SsmOut => ("model.layers.{b}.linear_attn.out_proj", "blk.{b}.ssm_out"),
            other => shared_expert(other),
        },
        Layout::Qwen3Next | Layout::Qwen35 => match role {
            SsmIn if layout == Layout::Qwen3Next => (
                "model.layers.{b}.linear_attn.in_proj_qkvz",
                "blk.{b}.ssm_in",
            ),
            SsmIn => (
                "model.layers.{b}.linear_attn.in_proj_qkv",
                "blk.{b}.attn_qkv",
            ),
            SsmConv => ("model.layers.{b}.linear_attn.conv1d", "blk.{b}.ssm_conv1d"),
            SsmNorm => ("model.layers.{b}.linear_attn.norm", "blk.{b}.ssm_norm"),
            SsmOut => ("model.layers.{b}.linear_attn.out_proj", "blk.{b}.ssm_out"),
            other => shared_expert(other),
        },
        Layout::Qwen2Moe | Layout::Flint | Layout::Laguna => shared_expert(role),
        Layout::Exaone => match role {
            Embed => ("transformer.wte", "token_embd"),
            AttnNorm => ("transformer.h.{b}.ln_1", "blk.{b}.attn_norm"),
            Q => ("transformer.h.{b}.attn.attention.q_proj", "blk.{b}.attn_q"),
            K => ("transformer.h.{b}.attn.attention.k_proj", "blk.{b}.attn_k"),
            V => ("transformer.h.{b}.attn.attention.v_proj", "blk.{b}.attn_v"),
            O => (
                "transformer.h.{b}.attn.attention.out_proj",
                "blk.{b}.attn_output",
            ),
            FfnNorm => ("transformer.h.{b}.ln_2", "blk.{b}.ffn_norm"),
            Gate => ("transformer.h.{b}.mlp.c_fc_0", "blk.{b}.ffn_gate"),
            Up => ("transformer.h.{b}.mlp.c_fc_1", "blk.{b}.ffn_up"),
            Down => ("transformer.h.{b}.mlp.c_proj", "blk.{b}.ffn_down"),
            FinalNorm => ("transformer.ln_f", "output_norm"),
            other => llama(other),
        },
        Layout::Starcoder2 => match role {
            Up => ("model.layers.{b}.mlp.c_fc", "blk.{b}.ffn_up"),
            Down => ("model.layers.{b}.mlp.c_proj", "blk.{b}.ffn_down"),
            other => llama(other),
        },
        Layout::Aria => match role {
            Router => ("model.layers.{b}.mlp.router", "blk.{b}.ffn_gate_inp"),
            ExpertGateUp => (
                "model.layers.{b}.mlp.experts.fc1",
                "blk.{b}.ffn_gate_up_exps",
            ),
            ExpertDown => ("model.layers.{b}.mlp.experts.fc2", "blk.{b}.ffn_down_exps"),
            other => llama(other),
        },
        Layout::Afmoe => match role {
            PostAttnNorm => (
                "model.layers.{b}.post_attention_layernorm",
                "blk.{b}.post_attention_norm",
            ),
            FfnNorm => ("model.layers.{b}.pre_mlp_layernorm", "blk.{b}.ffn_norm"),
            PostFfnNorm => (
                "model.layers.{b}.post_mlp_layernorm",
                "blk.{b}.post_ffw_norm",
            ),
            Router => ("model.layers.{b}.mlp.router.gate", "blk.{b}.ffn_gate_inp"),
            other => llama(other),
        },
        Layout::Kolibri => match role {
            PostAttnNorm => (
                "model.layers.{b}.post_attn_norm",
                "blk.{b}.post_attention_norm",
            ),
            FfnNorm => (
                "model.layers.{b}.post_attention_layernorm",
                "blk.{b}.ffn_norm",
            ),
            PostFfnNorm => ("model.layers.{b}.post_ffn_norm", "blk.{b}.post_ffw_norm"),
            other => llama(other),
        },
        Layout::Glm4 => match role {
            PostAttnNorm => (
                "model.layers.{b}.post_self_attn_layernorm",
                "blk.{b}.post_attention_norm",
            ),
            FfnNorm => (
                "model.layers.{b}.post_attention_layernorm",
                "blk.{b}.ffn_norm",
            ),
            PostFfnNorm => (
                "model.layers.{b}.post_mlp_layernorm",
                "blk.{b}.post_ffw_norm",
            ),
            other => llama(other),
        },
        Layout::GptOss => match role {
            Router => ("model.layers.{b}.mlp.router", "blk.{b}.ffn_gate_inp"),
            other => llama(other),
        },
        Layout::Llama4 => match role {
            Router => (
                "model.layers.{b}.feed_forward.router",
                "blk.{b}.ffn_gate_inp",
            ),
            Gate => (
                "model.layers.{b}.feed_forward.gate_proj",
                "blk.{b}.ffn_gate",
            ),
            Up => ("model.layers.{b}.feed_forward.up_proj", "blk.{b}.ffn_up"),
            Down => (
                "model.layers.{b}.feed_forward.down_proj",
                "blk.{b}.ffn_down",
            ),
            SharedGate => (
                "model.layers.{b}.feed_forward.shared_expert.gate_proj",
                "blk.{b}.ffn_gate_shexp",
            ),
            SharedUp => (
                "model.layers.{b}.feed_forward.shared_expert.up_proj",
                "blk.{b}.ffn_up_shexp",
            ),
            SharedDown => (
                "model.layers.{b}.feed_forward.shared_expert.down_proj",
                "blk.{b}.ffn_down_shexp",
            ),
            other => llama(other),
        },
    };
    (format!("{hf}.{suffix}"), format!("{gguf}.{suffix}"))
}

fn llama(role: Role) -> (&'static str, &'static str) {
    use Role::*;
    match role {
        V4Kv | V4KvNorm | V4OA | V4OB | CompKv | CompGate | CompBias | CompNorm | IndexCompKv
        | IndexCompGate | IndexCompBias | IndexCompNorm | HashTable => {
            unreachable!("{role:?}: DeepSeek-V4's alone, named by deepseek_v4()")
        }
        PatchProj | TokenProj => unreachable!("{role:?}: BLT's alone, named in Layout::Blt"),
        Embed => ("model.embed_tokens", "token_embd"),
        AttnNorm => ("model.layers.{b}.input_layernorm", "blk.{b}.attn_norm"),
        Q => ("model.layers.{b}.self_attn.q_proj", "blk.{b}.attn_q"),
        K => ("model.layers.{b}.self_attn.k_proj", "blk.{b}.attn_k"),
        V => ("model.layers.{b}.self_attn.v_proj", "blk.{b}.attn_v"),
        O => ("model.layers.{b}.self_attn.o_proj", "blk.{b}.attn_output"),
        QNorm => ("model.layers.{b}.self_attn.q_norm", "blk.{b}.attn_q_norm"),
        KNorm => ("model.layers.{b}.self_attn.k_norm", "blk.{b}.attn_k_norm"),
        // A pre-norm model's second norm sits before the MLP, under this historical name.
        FfnNorm | PostAttnNorm => (
            "model.layers.{b}.post_attention_layernorm",
            "blk.{b}.ffn_norm",
        ),
        PostFfnNorm => (
            "model.layers.{b}.post_feedforward_layernorm",
            "blk.{b}.post_ffw_norm",
        ),
        DynDt => ("model.layers.{b}.self_attn.dt_proj", "blk.{b}.attn_dyn_dt"),
        // Only JetMoE has these: its names.
        Kv => ("model.layers.{b}.self_attention.kv_proj", "blk.{b}.attn_kv"),
        AttnRouter => (
            "model.layers.{b}.self_attention.experts.router.layer",
            "blk.{b}.attn_gate_inp",
        ),
        AttnExpertQ => (
            "model.layers.{b}.self_attention.experts.input_linear",
            "blk.{b}.attn_q_exps",
        ),
        AttnExpertO => (
            "model.layers.{b}.self_attention.experts.output_linear",
            "blk.{b}.attn_output_exps",
        ),
        AttnExperts => (
            "model.layers.{b}.self_attention.experts",
            "blk.{b}.attn_output_exps",
        ),
        MoeBlock => ("model.layers.{b}.mlp", "blk.{b}.ffn_out"),
        MoePostNorm => (
            "model.layers.{b}.post_mlp_layernorm",
            "blk.{b}.ffn_post_norm",
        ),
        Gate => ("model.layers.{b}.mlp.gate_proj", "blk.{b}.ffn_gate"),
        Up => ("model.layers.{b}.mlp.up_proj", "blk.{b}.ffn_up"),
        Down => ("model.layers.{b}.mlp.down_proj", "blk.{b}.ffn_down"),
        FinalNorm => ("model.norm", "output_norm"),
        // Named without a suffix, above.
        LowInit => ("model.z_L_init", "z_l_init"),
        MlpPostNorm => ("model.layers.{b}.post_mlp_norm", "blk.{b}.post_ffw_norm_1"),
        ExpertsNorm => ("model.layers.{b}.experts_norm", "blk.{b}.pre_ffw_norm_2"),
        ExpertsPostNorm => (
            "model.layers.{b}.post_experts_norm",
            "blk.{b}.post_ffw_norm_2",
        ),
        RouterScale => (
            "model.layers.{b}.mlp.router.scale",
            "blk.{b}.ffn_gate_inp.scale",
        ),
        RouterExpertScale => (
            "model.layers.{b}.mlp.router.per_expert_scale",
            "blk.{b}.ffn_gate_inp.per_expert_scale",
        ),
        PleEmbed => ("model.embed_tokens_per_layer", "per_layer_token_embd"),
        // llama.cpp defines no architecture for the assistants: GGUF names in its style.
        DraftIn => ("pre_projection", "draft_in"),
        DraftOut => ("post_projection", "draft_out"),
        Centroids => ("masked_embedding.centroids", "draft_centroids"),
        PleProj => ("model.per_layer_model_projection", "per_layer_model_proj"),
        PleProjNorm => ("model.per_layer_projection_norm", "per_layer_proj_norm"),
        PleGate => ("model.layers.{b}.per_layer_input_gate", "blk.{b}.inp_gate"),
        PleUp => ("model.layers.{b}.per_layer_projection", "blk.{b}.proj"),
        PleNorm => (
            "model.layers.{b}.post_per_layer_input_norm",
            "blk.{b}.post_norm",
        ),
        // Only OPT projects its embeddings (named in its layout); in Llama's style elsewhere.
        EmbedProjIn => ("model.project_in", "token_embd_proj"),
        EmbedProjOut => ("model.project_out", "output_proj"),
        HeadDense => ("lm_head.dense", "output_dense"),
        HeadNorm => ("lm_head.norm", "output_dense_norm"),
        LmHead => ("lm_head", "output"),
        Router => ("model.layers.{b}.mlp.gate", "blk.{b}.ffn_gate_inp"),
        // GGUF stacks a layer's experts into one tensor (`ffn_gate_exps`, shape [E, …]).
        ExpertGate => (
            "model.layers.{b}.mlp.experts.{e}.gate_proj",
            "blk.{b}.ffn_gate_exps",
        ),
        ExpertUp => (
            "model.layers.{b}.mlp.experts.{e}.up_proj",
            "blk.{b}.ffn_up_exps",
        ),
        ExpertDown => (
            "model.layers.{b}.mlp.experts.{e}.down_proj",
            "blk.{b}.ffn_down_exps",
        ),
        ExpertGateUp => (
            "model.layers.{b}.mlp.experts.{e}.gate_up_proj",
            "blk.{b}.ffn_gate_up_exps",
        ),
        SharedGate => (
            "model.layers.{b}.mlp.shared_experts.gate_proj",
            "blk.{b}.ffn_gate_shexp",
        ),
        SharedUp => (
            "model.layers.{b}.mlp.shared_experts.up_proj",
            "blk.{b}.ffn_up_shexp",
        ),
        SharedDown => (
            "model.layers.{b}.mlp.shared_experts.down_proj",
            "blk.{b}.ffn_down_shexp",
        ),
        SharedGateUp => (
            "model.layers.{b}.mlp.shared_experts.gate_up_proj",
            "blk.{b}.ffn_gate_up_shexp",
        ),
        SharedExpertGate => (
            "model.layers.{b}.mlp.shared_expert_gate",
            "blk.{b}.ffn_gate_inp_shexp",
        ),
        PosEmbed => ("model.embed_positions", "position_embd"),
        // Only CPM-Ant has them, under its own names.
        SegmentEmbed => ("model.segment_embedding", "token_types"),
        PositionBias => ("model.position_bias", "attn_rel_b"),
        EmbedNorm => ("model.embed_layernorm", "token_embd_norm"),
        Qkv => ("model.layers.{b}.self_attn.qkv_proj", "blk.{b}.attn_qkv"),
        AttnSubNorm => (
            "model.layers.{b}.self_attn.attn_sub_norm",
            "blk.{b}.attn_sub_norm",
        ),
        FfnSubNorm => ("model.layers.{b}.mlp.ffn_sub_norm", "blk.{b}.ffn_sub_norm"),
        AttnGate => ("model.layers.{b}.self_attn.gate_proj", "blk.{b}.attn_gate"),
        CrossQ => ("model.layers.{b}.cross_attn.q_proj", "blk.{b}.cross_attn_q"),
        CrossK => ("model.layers.{b}.cross_attn.k_proj", "blk.{b}.cross_attn_k"),
        CrossV => ("model.layers.{b}.cross_attn.v_proj", "blk.{b}.cross_attn_v"),
        CrossO => ("model.layers.{b}.cross_attn.o_proj", "blk.{b}.cross_attn_o"),
        CrossQNorm => (
            "model.layers.{b}.cross_attn.q_norm",
            "blk.{b}.cross_attn_q_norm",
        ),
        CrossKNorm => (
            "model.layers.{b}.cross_attn.k_norm",
            "blk.{b}.cross_attn_k_norm",
        ),
        GateUp => ("model.layers.{b}.mlp.gate_up_proj", "blk.{b}.ffn_up"),
        QA => ("model.layers.{b}.self_attn.q_a_proj", "blk.{b}.attn_q_a"),
        QANorm => (
            "model.layers.{b}.self_attn.q_a_layernorm",
            "blk.{b}.attn_q_a_norm",
        ),
        QB => ("model.layers.{b}.self_attn.q_b_proj", "blk.{b}.attn_q_b"),
        KvA => (
            "model.layers.{b}.self_attn.kv_a_proj_with_mqa",
            "blk.{b}.attn_kv_a_mqa",
        ),
        KvANorm => (
            "model.layers.{b}.self_attn.kv_a_layernorm",
            "blk.{b}.attn_kv_a_norm",
        ),
        KvB => ("model.layers.{b}.self_attn.kv_b_proj", "blk.{b}.attn_kv_b"),
        KPeNorm => (
            "model.layers.{b}.self_attn.k_rope_only_layernorm",
            "blk.{b}.attn_k_pe_norm",
        ),
        BlockIndexQ => (
            "model.layers.{b}.self_attn.indexer.q_proj",
            "blk.{b}.indexer.attn_q",
        ),
        BlockIndexK => (
            "model.layers.{b}.self_attn.indexer.k_proj",
            "blk.{b}.indexer.attn_k",
        ),
        BlockIndexQNorm => (
            "model.layers.{b}.self_attn.indexer.q_norm",
            "blk.{b}.indexer.q_norm",
        ),
        BlockIndexKNorm => (
            "model.layers.{b}.self_attn.indexer.k_norm",
            "blk.{b}.indexer.k_norm",
        ),
        QsaQk => (
            "model.layers.{b}.self_attn.indexer.index_qk_proj",
            "blk.{b}.indexer.attn_qk",
        ),
        QsaQNorm => (
            "model.layers.{b}.self_attn.indexer.q_layernorm",
            "blk.{b}.indexer.q_norm",
        ),
        QsaKNorm => (
            "model.layers.{b}.self_attn.indexer.k_layernorm",
            "blk.{b}.indexer.k_norm",
        ),
        IndexQ => (
            "model.layers.{b}.self_attn.indexer.wq_b",
            "blk.{b}.indexer.attn_q_b",
        ),
        IndexK => (
            "model.layers.{b}.self_attn.indexer.wk",
            "blk.{b}.indexer.attn_k",
        ),
        IndexKNorm => (
            "model.layers.{b}.self_attn.indexer.k_norm",
            "blk.{b}.indexer.k_norm",
        ),
        IndexWeights => (
            "model.layers.{b}.self_attn.indexer.weights_proj",
            "blk.{b}.indexer.proj",
        ),
        MtpEmbed => (
            "model.layers.{b}.embed_tokens",
            "blk.{b}.nextn.embed_tokens",
        ),
        MtpENorm => ("model.layers.{b}.enorm", "blk.{b}.nextn.enorm"),
        MtpHNorm => ("model.layers.{b}.hnorm", "blk.{b}.nextn.hnorm"),
        MtpProj => ("model.layers.{b}.eh_proj", "blk.{b}.nextn.eh_proj"),
        MtpNorm => (
            "model.layers.{b}.shared_head.norm",
            "blk.{b}.nextn.shared_head_norm",
        ),
        MtpHead => (
            "model.layers.{b}.shared_head.head",
            "blk.{b}.nextn.shared_head_head",
        ),
        SsmIn => ("model.layers.{b}.mamba.in_proj", "blk.{b}.ssm_in"),
        SsmConv => ("model.layers.{b}.mamba.conv1d", "blk.{b}.ssm_conv1d"),
        SsmNorm => ("model.layers.{b}.mamba.norm", "blk.{b}.ssm_norm"),
        SsmOut => ("model.layers.{b}.mamba.out_proj", "blk.{b}.ssm_out"),
        SsmX => ("model.layers.{b}.mamba.x_proj", "blk.{b}.ssm_x"),
        SsmDt => ("model.layers.{b}.mamba.dt_proj", "blk.{b}.ssm_dt"),
        SsmDtNorm => ("model.layers.{b}.mamba.dt_layernorm", "blk.{b}.ssm_dt_norm"),
        SsmBNorm => ("model.layers.{b}.mamba.b_layernorm", "blk.{b}.ssm_b_norm"),
        SsmCNorm => ("model.layers.{b}.mamba.c_layernorm", "blk.{b}.ssm_c_norm"),
        // Only Gated DeltaNet has these (Qwen3-Next, Qwen3.5).
        SsmZ => (
            "model.layers.{b}.linear_attn.in_proj_z",
            "blk.{b}.attn_gate",
        ),
        SsmBa => ("model.layers.{b}.linear_attn.in_proj_ba", "blk.{b}.ssm_ba"),
        SsmBeta => ("model.layers.{b}.linear_attn.in_proj_b", "blk.{b}.ssm_beta"),
        SsmAlpha => (
            "model.layers.{b}.linear_attn.in_proj_a",
            "blk.{b}.ssm_alpha",
        ),
        // Only Kimi Delta Attention has these (Kimi Linear).
        SsmQ => ("model.layers.{b}.self_attn.q_proj", "blk.{b}.attn_q"),
        SsmK => ("model.layers.{b}.self_attn.k_proj", "blk.{b}.attn_k"),
        SsmV => ("model.layers.{b}.self_attn.v_proj", "blk.{b}.attn_v"),
        SsmConvQ => (
            "model.layers.{b}.self_attn.q_conv1d",
            "blk.{b}.ssm_conv1d_q",
        ),
        SsmConvK => (
            "model.layers.{b}.self_attn.k_conv1d",
            "blk.{b}.ssm_conv1d_k",
        ),
        SsmConvV => (
            "model.layers.{b}.self_attn.v_conv1d",
            "blk.{b}.ssm_conv1d_v",
        ),
        SsmFA => ("model.layers.{b}.self_attn.f_a_proj", "blk.{b}.ssm_f_a"),
        SsmFB => ("model.layers.{b}.self_attn.f_b_proj", "blk.{b}.ssm_f_b"),
        SsmGA => ("model.layers.{b}.self_attn.g_a_proj", "blk.{b}.ssm_g_a"),
        SsmGB => ("model.layers.{b}.self_attn.g_b_proj", "blk.{b}.ssm_g_b"),
        // RWKV's own names, for a layout without them.
        TmKey => ("model.layers.{b}.attention.key", "blk.{b}.time_mix_key"),
        TmValue => ("model.layers.{b}.attention.value", "blk.{b}.time_mix_value"),
        TmReceptance => (
            "model.layers.{b}.attention.receptance",
            "blk.{b}.time_mix_receptance",
        ),
        TmOutput => (
            "model.layers.{b}.attention.output",
            "blk.{b}.time_mix_output",
        ),
        CmReceptance => (
            "model.layers.{b}.feed_forward.receptance",
            "blk.{b}.channel_mix_receptance",
        ),
        Sinks | AttnGateBias | CrossAttnGate | CrossMlpGate | DynA | ResidScaleAttn
        | ResidScaleFfn | CorrectionBias | ActAlphaP | ActAlphaN | ActBeta | ActEps | LambdaQ1
        | LambdaK1 | LambdaQ2 | LambdaK2 | DenseBias | SsmDtBias | SsmALog | SsmD | LightSlope
        | LightQDecay | LightKDecay | LightDiagDecay | LruParam | LruInGate | LruRecGate
        | TmDecay | TmFirst | TmMixK | TmMixV | TmMixR | CmMixK | CmMixR | LayerScalar
        | TokenOrdering | HcAttnFn | HcAttnBase | HcAttnScale | HcFfnFn | HcFfnBase
        | HcFfnScale | HcHeadFn | HcHeadBase | HcHeadScale | AltUpScale | GsAttnNorm
        | GsAttnDown | GsAttnUp | GsAttnInject | GsFfnNorm | GsFfnDown | GsFfnUp | GsFfnInject
        | GsHeadNorm | GsHeadDown | GsHeadUp | NgramTable | NgramMultipliers | NgramSizes
        | NgramOffsets | NgramKey | NgramValue | NgramNormKey | NgramNormQuery | NgramNormConv
        | NgramConv => {
            unreachable!("named in `names`")
        }
        GatedFfnNorm | AttnNormDown | AttnNormUp | FfnNormDown | FfnNormUp => {
            unreachable!("only A.X-K2's layout has gated norms")
        }
        ResidGateAttn | ResidGateFfn | ExpertOutNorm | SharedOutNorm => {
            unreachable!("{role:?}: Ergo's alone, named by ergo()")
        }
        AltUpRouterNorm | AltUpRouter | AltUpPredict | AltUpCorrect | AltUpProj | AltUpUnembed
        | LaurelLeft | LaurelRight | LaurelNorm => {
            unreachable!("only Gemma 3n's layout has AltUp and LAuReL")
        }
        SharedNorm | SharedFfnNorm | SharedLinear | QAdapterA | QAdapterB | KAdapterA
        | KAdapterB | VAdapterA | VAdapterB | GateUpAdapterA | GateUpAdapterB => {
            unreachable!("only Zamba2's layout has shared blocks")
        }
        EmbedScale | EmbedShift | CcaKeyTemp | RouterState | RouterBalance | ResidAttnOutScale
        | ResidAttnOutShift | ResidAttnScale | ResidAttnShift | ResidFfnOutScale
        | ResidFfnOutShift | ResidFfnScale | ResidFfnShift | NgptQueryScale | NgptGateScale
        | NgptGateUvScale | NgptUpUvScale | NgptRateAttn | NgptRateFfn | NgptLogitScale => {
            unreachable!("named in `names`")
        }
        CcaVCurrent | CcaVDelayed | CcaConvDepthwise | CcaConvGrouped | RouterDown | RouterNorm
        | RouterFc1 | RouterFc2 => {
            unreachable!("only ZAYA's layout has compressed convolutional attention")
        }
        // As Inkling 2 names them (its bare parameters are named in `names`).
        KConvDyn => (
            "model.layers.{b}.self_attn.k_proj.sconv.weight_proj",
            "blk.{b}.attn_k_conv_dyn",
        ),
        VConvDyn => (
            "model.layers.{b}.self_attn.v_proj.sconv.weight_proj",
            "blk.{b}.attn_v_conv_dyn",
        ),
        TokenSinks => (
            "model.layers.{b}.self_attn.sink_proj",
            "blk.{b}.attn_sinks_proj",
        ),
        QInNorm => (
            "model.layers.{b}.q_input_layernorm",
            "blk.{b}.attn_q_in_norm",
        ),
        KInNorm => (
            "model.layers.{b}.k_input_layernorm",
            "blk.{b}.attn_k_in_norm",
        ),
        VInNorm => (
            "model.layers.{b}.v_input_layernorm",
            "blk.{b}.attn_v_in_norm",
        ),
        KConvStatic => (
            "model.layers.{b}.self_attn.k_conv_static",
            "blk.{b}.attn_k_conv",
        ),
        VConvStatic => (
            "model.layers.{b}.self_attn.v_conv_static",
            "blk.{b}.attn_v_conv",
        ),
        QClipScale => (
            "model.layers.{b}.self_attn.q_clip_scale",
            "blk.{b}.attn_q_clip_scale",
        ),
        RelClipScale => (
            "model.layers.{b}.self_attn.rel_clip_scale",
            "blk.{b}.attn_rel_clip_scale",
        ),
        AttnResQuery => (
            "model.layers.{b}.attention_input.query",
            "blk.{b}.attn_res_query",
        ),
        FfnResQuery => ("model.layers.{b}.mlp_input.query", "blk.{b}.ffn_res_query"),
        HeadResQuery => ("model.final_input.query", "output_res_query"),
        MsgQDown => (
            "model.layers.{b}.q_message_gate.down_proj",
            "blk.{b}.msg_q_down",
        ),
        MsgQForget => (
            "model.layers.{b}.q_message_gate.forget_gate_proj",
            "blk.{b}.msg_q_forget",
        ),
        MsgQGain => (
            "model.layers.{b}.q_message_gate.message_gate_proj",
            "blk.{b}.msg_q_gain",
        ),
        MsgKDown => (
            "model.layers.{b}.k_message_gate.down_proj",
            "blk.{b}.msg_k_down",
        ),
        MsgKForget => (
            "model.layers.{b}.k_message_gate.forget_gate_proj",
            "blk.{b}.msg_k_forget",
        ),
        MsgKGain => (
            "model.layers.{b}.k_message_gate.message_gate_proj",
            "blk.{b}.msg_k_gain",
        ),
        MsgVDown => (
            "model.layers.{b}.v_message_gate.down_proj",
            "blk.{b}.msg_v_down",
        ),
        MsgVForget => (
            "model.layers.{b}.v_message_gate.forget_gate_proj",
            "blk.{b}.msg_v_forget",
        ),
        MsgVGain => (
            "model.layers.{b}.v_message_gate.message_gate_proj",
            "blk.{b}.msg_v_gain",
        ),
        MsgFfnDown => (
            "model.layers.{b}.mlp_message_gate.down_proj",
            "blk.{b}.msg_ffn_down",
        ),
        MsgFfnForget => (
            "model.layers.{b}.mlp_message_gate.forget_gate_proj",
            "blk.{b}.msg_ffn_forget",
        ),
        MsgFfnGain => (
            "model.layers.{b}.mlp_message_gate.message_gate_proj",
            "blk.{b}.msg_ffn_gain",
        ),
        MsgQueries | MsgKvQueries => ("model.message_input.query", "msg_queries"),
        // As Inkling names them (its bare parameters are named in `names`).
        RelProj => ("model.layers.{b}.self_attn.r_proj", "blk.{b}.attn_rel"),
        KConv => (
            "model.layers.{b}.self_attn.k_sconv.conv1d",
            "blk.{b}.attn_k_conv",
        ),
        VConv => (
            "model.layers.{b}.self_attn.v_sconv.conv1d",
            "blk.{b}.attn_v_conv",
        ),
        AttnOutConv => (
            "model.layers.{b}.attn_sconv.conv1d",
            "blk.{b}.attn_out_conv",
        ),
        FfnOutConv => ("model.layers.{b}.mlp_sconv.conv1d", "blk.{b}.ffn_out_conv"),
        RelBank => (
            "model.layers.{b}.self_attn.rel_logits_proj.proj",
            "blk.{b}.attn_rel_bank",
        ),
        MlpScalar => ("model.layers.{b}.mlp.global_scale", "blk.{b}.ffn_scale"),
        RouterScalar => (
            "model.layers.{b}.mlp.gate.global_scale",
            "blk.{b}.ffn_gate_inp_scale",
        ),
    }
}

/// One shared expert stored as `mlp.shared_expert` (Qwen2-MoE and its successors); Llama's names
/// otherwise.
fn shared_expert(role: Role) -> (&'static str, &'static str) {
    use Role::*;
    match role {
        SharedGate => (
            "model.layers.{b}.mlp.shared_expert.gate_proj",
            "blk.{b}.ffn_gate_shexp",
        ),
        SharedUp => (
            "model.layers.{b}.mlp.shared_expert.up_proj",
            "blk.{b}.ffn_up_shexp",
        ),
        SharedDown => (
            "model.layers.{b}.mlp.shared_expert.down_proj",
            "blk.{b}.ffn_down_shexp",
        ),
        other => llama(other),
    }
}

/// A shared MLP stored as `mlp.shared_mlp` (HunYuan-MoE, HY-V3); Llama's names otherwise.
fn shared_mlp(role: Role) -> (&'static str, &'static str) {
    use Role::*;
    match role {
        SharedGate => (
            "model.layers.{b}.mlp.shared_mlp.gate_proj",
            "blk.{b}.ffn_gate_shexp",
        ),
        SharedUp => (
            "model.layers.{b}.mlp.shared_mlp.up_proj",
            "blk.{b}.ffn_up_shexp",
        ),
        SharedDown => (
            "model.layers.{b}.mlp.shared_mlp.down_proj",
            "blk.{b}.ffn_down_shexp",
        ),
        other => llama(other),
    }
}

/// GraniteMoE-Shared's (and GraniteMoeSWA's) shared MLP, gate and up in one tensor.
fn granite_shared(role: Role) -> (&'static str, &'static str) {
    match role {
        Role::SharedGateUp => (
            "model.layers.{b}.shared_mlp.input_linear",
            "blk.{b}.ffn_gate_up_shexp",
        ),
        Role::SharedDown => (
            "model.layers.{b}.shared_mlp.output_linear",
            "blk.{b}.ffn_down_shexp",
        ),
        other => unreachable!("{other:?} is not a shared-MLP tensor"),
    }
}

fn gptj(role: Role) -> (&'static str, &'static str) {
    use Role::*;
    match role {
        Embed => ("transformer.wte", "token_embd"),
        AttnNorm => ("transformer.h.{b}.ln_1", "blk.{b}.attn_norm"),
        Q => ("transformer.h.{b}.attn.q_proj", "blk.{b}.attn_q"),
        K => ("transformer.h.{b}.attn.k_proj", "blk.{b}.attn_k"),
        V => ("transformer.h.{b}.attn.v_proj", "blk.{b}.attn_v"),
        O => ("transformer.h.{b}.attn.out_proj", "blk.{b}.attn_output"),
        Up => ("transformer.h.{b}.mlp.fc_in", "blk.{b}.ffn_up"),
        Down => ("transformer.h.{b}.mlp.fc_out", "blk.{b}.ffn_down"),
        FinalNorm => ("transformer.ln_f", "output_norm"),
        other => llama(other),
    }
}

/// Zamba2's names: `{m}` the layer holding the shared block, `{h}` the visit, `{d}`
/// `mamba_decoder.` in the layers that run a block (`SharedBlocks::place`).
fn zamba2(role: Role) -> (&'static str, &'static str) {
    use Role::*;
    match role {
        Embed => ("model.embed_tokens", "token_embd"),
        AttnNorm => ("model.layers.{b}.{d}input_layernorm", "blk.{b}.attn_norm"),
        SsmIn => ("model.layers.{b}.{d}mamba.in_proj", "blk.{b}.ssm_in"),
        SsmConv => ("model.layers.{b}.{d}mamba.conv1d", "blk.{b}.ssm_conv1d"),
        SsmNorm => ("model.layers.{b}.{d}mamba.norm", "blk.{b}.ssm_norm"),
        SsmOut => ("model.layers.{b}.{d}mamba.out_proj", "blk.{b}.ssm_out"),
        SharedNorm => (
            "model.layers.{m}.shared_transformer.input_layernorm",
            "blk.{m}.shared_attn_norm",
        ),
        Q => (
            "model.layers.{m}.shared_transformer.self_attn.q_proj",
            "blk.{m}.shared_attn_q",
        ),
        K => (
            "model.layers.{m}.shared_transformer.self_attn.k_proj",
            "blk.{m}.shared_attn_k",
        ),
        V => (
            "model.layers.{m}.shared_transformer.self_attn.v_proj",
            "blk.{m}.shared_attn_v",
        ),
        O => (
            "model.layers.{m}.shared_transformer.self_attn.o_proj",
            "blk.{m}.shared_attn_output",
        ),
        QAdapterA => (
            "model.layers.{m}.shared_transformer.self_attn.linear_q_adapter_list.{h}.0",
            "blk.{b}.shared_attn_q_adapter_a",
        ),
        QAdapterB => (
            "model.layers.{m}.shared_transformer.self_attn.linear_q_adapter_list.{h}.1",
            "blk.{b}.shared_attn_q_adapter_b",
        ),
        KAdapterA => (
            "model.layers.{m}.shared_transformer.self_attn.linear_k_adapter_list.{h}.0",
            "blk.{b}.shared_attn_k_adapter_a",
        ),
        KAdapterB => (
            "model.layers.{m}.shared_transformer.self_attn.linear_k_adapter_list.{h}.1",
            "blk.{b}.shared_attn_k_adapter_b",
        ),
        VAdapterA => (
            "model.layers.{m}.shared_transformer.self_attn.linear_v_adapter_list.{h}.0",
            "blk.{b}.shared_attn_v_adapter_a",
        ),
        VAdapterB => (
            "model.layers.{m}.shared_transformer.self_attn.linear_v_adapter_list.{h}.1",
            "blk.{b}.shared_attn_v_adapter_b",
        ),
        SharedFfnNorm => (
            "model.layers.{m}.shared_transformer.pre_ff_layernorm",
            "blk.{m}.shared_ffn_norm",
        ),
        GateUp => (
            "model.layers.{m}.shared_transformer.feed_forward.gate_up_proj",
            "blk.{m}.shared_ffn_gate_up",
        ),
        Gate => (
            "model.layers.{m}.shared_transformer.feed_forward.gate_proj",
            "blk.{m}.shared_ffn_gate",
        ),
        Up => (
            "model.layers.{m}.shared_transformer.feed_forward.up_proj",
            "blk.{m}.shared_ffn_up",
        ),
        Down => (
            "model.layers.{m}.shared_transformer.feed_forward.down_proj",
            "blk.{m}.shared_ffn_down",
        ),
        GateUpAdapterA => (
            "model.layers.{m}.shared_transformer.feed_forward.gate_up_proj_adapter_list.{h}.0",
            "blk.{b}.shared_ffn_gate_up_adapter_a",
        ),
        GateUpAdapterB => (
            "model.layers.{m}.shared_transformer.feed_forward.gate_up_proj_adapter_list.{h}.1",
            "blk.{b}.shared_ffn_gate_up_adapter_b",
        ),
        SharedLinear => ("model.layers.{b}.linear", "blk.{b}.shared_linear"),
        FinalNorm => ("model.final_layernorm", "output_norm"),
        other => llama(other),
    }
}

fn mixtral(role: Role) -> (&'static str, &'static str) {
    use Role::*;
    match role {
        Router => (
            "model.layers.{b}.block_sparse_moe.gate",
            "blk.{b}.ffn_gate_inp",
        ),
        ExpertGate => (
            "model.layers.{b}.block_sparse_moe.experts.{e}.w1",
            "blk.{b}.ffn_gate_exps",
        ),
        ExpertUp => (
            "model.layers.{b}.block_sparse_moe.experts.{e}.w3",
            "blk.{b}.ffn_up_exps",
        ),
        ExpertDown => (
            "model.layers.{b}.block_sparse_moe.experts.{e}.w2",
            "blk.{b}.ffn_down_exps",
        ),
        other => llama(other),
    }
}

/// Gemma 2's and 3's: Llama's names with a norm before and after each sublayer.
fn sandwich(role: Role) -> (&'static str, &'static str) {
    use Role::*;
    match role {
        PostAttnNorm => (
            "model.layers.{b}.post_attention_layernorm",
            "blk.{b}.post_attention_norm",
        ),
        FfnNorm => (
            "model.layers.{b}.pre_feedforward_layernorm",
            "blk.{b}.ffn_norm",
        ),
        PostFfnNorm => (
            "model.layers.{b}.post_feedforward_layernorm",
            "blk.{b}.post_ffw_norm",
        ),
        other => llama(other),
    }
}

/// LongCat-Flash: Llama's names (DeepSeek's for the latent attention), each layer's two
/// sublayers in lists of two (`{p}` the checkpoint layer, `{s}` the sublayer), the dense MLPs
/// `mlps`, the one MoE `mlp` with its router's `classifier`.
/// Inkling 2's names as its checkpoints store them (`model.llm.`, `attn.wq_du` …, the block
/// attention residuals' queries under `attn_res.`, layer b's attention query as
/// `attn_queries.{b − 1}`); llama.cpp defines no Inkling 2: the GGUF names follow its style.
/// Ergo's names as its checkpoints store them, and as transformers saves them (its conversion
/// mapping reverted): `tok_embeddings`, `layers.{b}.attention.wqkv`, the norms `attention_norm`,
/// `post_attention_norm`, `ffn_norm`, `post_ffn_norm`, the residual gates' `scale`, and under
/// `feed_forward` the dense MLP's `up` and `down`, the router's `gate_kernel` [hidden, E] and
/// `router_bias`, the experts' stacked `up_proj` [E, in, out], `down_proj` and
/// `expert_output_norm.scale` [E, hidden], the shared expert's `shared_up_proj` and
/// `shared_down_proj` stored [in, out] (`stored_in_out`). llama.cpp defines no Ergo: the GGUF
/// names follow its style.
fn ergo(role: Role, bias: bool) -> (String, String) {
    use Role::*;
    // (stored name, GGUF name, whether the stored name has a `.weight` suffix)
    let (hf, gguf, suffixed) = match role {
        Embed => ("tok_embeddings", "token_embd", true),
        FinalNorm => ("norm", "output_norm", true),
        LmHead => ("output", "output", true),
        AttnNorm => ("layers.{b}.attention_norm", "blk.{b}.attn_norm", true),
        PostAttnNorm => (
            "layers.{b}.post_attention_norm",
            "blk.{b}.post_attention_norm",
            true,
        ),
        FfnNorm => ("layers.{b}.ffn_norm", "blk.{b}.ffn_norm", true),
        PostFfnNorm => ("layers.{b}.post_ffn_norm", "blk.{b}.post_ffw_norm", true),
        ResidGateAttn => (
            "layers.{b}.post_attention_residual.scale",
            "blk.{b}.attn_residual_gate",
            false,
        ),
        ResidGateFfn => (
            "layers.{b}.post_ffn_residual.scale",
            "blk.{b}.ffn_residual_gate",
            false,
        ),
        Qkv => ("layers.{b}.attention.wqkv", "blk.{b}.attn_qkv", true),
        O => ("layers.{b}.attention.wo", "blk.{b}.attn_output", true),
        QNorm => ("layers.{b}.attention.q_norm", "blk.{b}.attn_q_norm", true),
        KNorm => ("layers.{b}.attention.k_norm", "blk.{b}.attn_k_norm", true),
        Up => ("layers.{b}.feed_forward.up", "blk.{b}.ffn_up", true),
        Down => ("layers.{b}.feed_forward.down", "blk.{b}.ffn_down", true),
        Router => (
            "layers.{b}.feed_forward.gate_kernel",
            "blk.{b}.ffn_gate_inp",
            false,
        ),
        CorrectionBias => (
            "layers.{b}.feed_forward.router_bias",
            "blk.{b}.exp_probs_b",
            false,
        ),
        ExpertUp => (
            "layers.{b}.feed_forward.up_proj",
            "blk.{b}.ffn_up_exps",
            false,
        ),
        ExpertDown => (
            "layers.{b}.feed_forward.down_proj",
            "blk.{b}.ffn_down_exps",
            false,
        ),
        ExpertOutNorm => (
            "layers.{b}.feed_forward.expert_output_norm.scale",
            "blk.{b}.ffn_post_norm_exps",
            false,
        ),
        SharedUp => (
            "layers.{b}.feed_forward.shared_up_proj",
            "blk.{b}.ffn_up_shexp",
            false,
        ),
        SharedDown => (
            "layers.{b}.feed_forward.shared_down_proj",
            "blk.{b}.ffn_down_shexp",
            false,
        ),
        SharedOutNorm => (
            "layers.{b}.feed_forward.shared_expert_output_norm.scale",
            "blk.{b}.ffn_post_norm_shexp",
            false,
        ),
        // No such tensor in Ergo: Llama's name, which its checkpoints never hold.
        other => return names(Layout::Llama, other, bias),
    };
    let suffix = if bias { "bias" } else { "weight" };
    let hf = if suffixed {
        format!("{hf}.{suffix}")
    } else {
        hf.to_string()
    };
    (hf, format!("{gguf}.{suffix}"))
}

/// Whether `layout` stores `role`'s linear weight [in, out] rather than PyTorch's [out, in]:
/// every one of GPT-2's Conv1D layers; Ergo's router and shared expert.
pub fn stored_in_out(layout: Layout, role: Role) -> bool {
    match layout {
        Layout::Ergo => matches!(role, Role::Router | Role::SharedUp | Role::SharedDown),
        other => other.stores_in_out(),
    }
}

/// DeepSeek-V4's names; llama.cpp defines no DeepSeek-V4: the GGUF names follow its style.
fn deepseek_v4(role: Role, bias: bool) -> (String, String) {
    use Role::*;
    let suffix = if bias { "bias" } else { "weight" };
    // (name under `model.`, GGUF name, stored without a suffix): the names of DeepSeek's own
    // checkpoints, which transformers renames on loading and writes back.
    let (hf, gguf, bare) = match role {
        Embed => ("embed_tokens", "token_embd", false),
        FinalNorm => ("norm", "output_norm", false),
        LmHead => return ("head.weight".into(), "output.weight".into()),
        AttnNorm => ("layers.{b}.attn_norm", "blk.{b}.attn_norm", false),
        FfnNorm => ("layers.{b}.ffn_norm", "blk.{b}.ffn_norm", false),
        QA => ("layers.{b}.attn.wq_a", "blk.{b}.attn_q_a", false),
        QANorm => ("layers.{b}.attn.q_norm", "blk.{b}.attn_q_a_norm", false),
        QB => ("layers.{b}.attn.wq_b", "blk.{b}.attn_q_b", false),
        V4Kv => ("layers.{b}.attn.wkv", "blk.{b}.attn_kv", false),
        V4KvNorm => ("layers.{b}.attn.norm", "blk.{b}.attn_kv_norm", false),
        V4OA => ("layers.{b}.attn.wo_a", "blk.{b}.attn_output_a", false),
        V4OB => ("layers.{b}.attn.wo_b", "blk.{b}.attn_output_b", false),
        Sinks => (
            "layers.{b}.attn.attn_sink",
            "blk.{b}.attn_sinks.weight",
            true,
        ),
        CompKv => (
            "layers.{b}.attn.compressor.wkv",
            "blk.{b}.attn_comp_kv",
            false,
        ),
        CompGate => (
            "layers.{b}.attn.compressor.wgate",
            "blk.{b}.attn_comp_gate",
            false,
        ),
        CompBias => (
            "layers.{b}.attn.compressor.ape",
            "blk.{b}.attn_comp_ape",
            true,
        ),
        CompNorm => (
            "layers.{b}.attn.compressor.norm",
            "blk.{b}.attn_comp_norm",
            false,
        ),
        IndexCompKv => (
            "layers.{b}.attn.indexer.compressor.wkv",
            "blk.{b}.indexer.comp_kv",
            false,
        ),
        IndexCompGate => (
            "layers.{b}.attn.indexer.compressor.wgate",
            "blk.{b}.indexer.comp_gate",
            false,
        ),
        IndexCompBias => (
            "layers.{b}.attn.indexer.compressor.ape",
            "blk.{b}.indexer.comp_ape",
            true,
        ),
        IndexCompNorm => (
            "layers.{b}.attn.indexer.compressor.norm",
            "blk.{b}.indexer.comp_norm",
            false,
        ),
        IndexQ => (
            "layers.{b}.attn.indexer.wq_b",
            "blk.{b}.indexer.attn_q_b",
            false,
        ),
        IndexWeights => (
            "layers.{b}.attn.indexer.weights_proj",
            "blk.{b}.indexer.proj",
            false,
        ),
        Router => ("layers.{b}.ffn.gate", "blk.{b}.ffn_gate_inp", false),
        CorrectionBias => ("layers.{b}.ffn.gate.bias", "blk.{b}.exp_probs_b.bias", true),
        HashTable => (
            "layers.{b}.ffn.gate.tid2eid",
            "blk.{b}.ffn_gate_tid2eid",
            true,
        ),
        ExpertGate => (
            "layers.{b}.ffn.experts.{e}.w1",
            "blk.{b}.ffn_gate.{e}",
            false,
        ),
        ExpertUp => ("layers.{b}.ffn.experts.{e}.w3", "blk.{b}.ffn_up.{e}", false),
        ExpertDown => (
            "layers.{b}.ffn.experts.{e}.w2",
            "blk.{b}.ffn_down.{e}",
            false,
        ),
        SharedGate => (
            "layers.{b}.ffn.shared_experts.w1",
            "blk.{b}.ffn_gate_shexp",
            false,
        ),
        SharedUp => (
            "layers.{b}.ffn.shared_experts.w3",
            "blk.{b}.ffn_up_shexp",
            false,
        ),
        SharedDown => (
            "layers.{b}.ffn.shared_experts.w2",
            "blk.{b}.ffn_down_shexp",
            false,
        ),
        HcAttnFn => ("layers.{b}.hc_attn_fn", "blk.{b}.hc_attn_fn", true),
        HcAttnBase => ("layers.{b}.hc_attn_base", "blk.{b}.hc_attn_base", true),
        HcAttnScale => ("layers.{b}.hc_attn_scale", "blk.{b}.hc_attn_scale", true),
        HcFfnFn => ("layers.{b}.hc_ffn_fn", "blk.{b}.hc_ffn_fn", true),
        HcFfnBase => ("layers.{b}.hc_ffn_base", "blk.{b}.hc_ffn_base", true),
        HcFfnScale => ("layers.{b}.hc_ffn_scale", "blk.{b}.hc_ffn_scale", true),
        HcHeadFn => ("hc_head.hc_fn", "output_hc_fn", true),
        HcHeadBase => ("hc_head.hc_base", "output_hc_base", true),
        HcHeadScale => ("hc_head.hc_scale", "output_hc_scale", true),
        // Llama's names for what DeepSeek-V4 does not have (asked of every layout).
        other => return names(Layout::Llama, other, bias),
    };
    if bare {
        (format!("model.{hf}"), gguf.into())
    } else {
        (format!("model.{hf}.{suffix}"), format!("{gguf}.{suffix}"))
    }
}

fn inkling2(role: Role, bias: bool) -> (String, String) {
    use Role::*;
    let suffix = if bias { "bias" } else { "weight" };
    // (name under `model.llm.`, GGUF name, stored without a suffix)
    let (hf, gguf, bare) = match role {
        Embed => ("embed", "token_embd", false),
        EmbedNorm => ("embed_norm", "token_embd_norm", false),
        AttnNorm => ("layers.{b}.attn_norm", "blk.{b}.attn_norm", false),
        QInNorm => ("layers.{b}.q_input_norm", "blk.{b}.attn_q_in_norm", false),
        KInNorm => ("layers.{b}.k_input_norm", "blk.{b}.attn_k_in_norm", false),
        VInNorm => ("layers.{b}.v_input_norm", "blk.{b}.attn_v_in_norm", false),
        FfnNorm => ("layers.{b}.mlp_norm", "blk.{b}.ffn_norm", false),
        Q => ("layers.{b}.attn.wq_du", "blk.{b}.attn_q", false),
        K => ("layers.{b}.attn.wk_dv", "blk.{b}.attn_k", false),
        V => ("layers.{b}.attn.wv_dv", "blk.{b}.attn_v", false),
        O => ("layers.{b}.attn.wo_ud", "blk.{b}.attn_output", false),
        AttnGate => ("layers.{b}.attn.gate_attn", "blk.{b}.attn_gate", false),
        TokenSinks => (
            "layers.{b}.attn.attn_sink_proj",
            "blk.{b}.attn_sinks",
            false,
        ),
        RelProj => ("layers.{b}.attn.wr_du", "blk.{b}.attn_rel", false),
        RelBank => (
            "layers.{b}.attn.rel_logits_proj.proj",
            "blk.{b}.attn_rel_bank",
            true,
        ),
        RelClipScale => (
            "layers.{b}.attn.rel_l2_clip.scale",
            "blk.{b}.attn_rel_scale",
            true,
        ),
        QClipScale => (
            "layers.{b}.attn.q_l2_clip.scale",
            "blk.{b}.attn_q_scale",
            true,
        ),
        KConv => ("layers.{b}.attn.k_sconv", "blk.{b}.attn_k_conv", false),
        VConv => ("layers.{b}.attn.v_sconv", "blk.{b}.attn_v_conv", false),
        KConvStatic => (
            "layers.{b}.attn.k_sconv.static_w",
            "blk.{b}.attn_k_conv",
            true,
        ),
        VConvStatic => (
            "layers.{b}.attn.v_sconv.static_w",
            "blk.{b}.attn_v_conv",
            true,
        ),
        KConvDyn => (
            "layers.{b}.attn.k_sconv.weight_proj",
            "blk.{b}.attn_k_conv_dyn",
            true,
        ),
        VConvDyn => (
            "layers.{b}.attn.v_sconv.weight_proj",
            "blk.{b}.attn_v_conv_dyn",
            true,
        ),
        AttnOutConv => ("layers.{b}.attn_sconv", "blk.{b}.attn_out_conv", false),
        FfnOutConv => ("layers.{b}.mlp_sconv", "blk.{b}.ffn_out_conv", false),
        Router => ("layers.{b}.mlp.gate", "blk.{b}.ffn_gate_inp", false),
        CorrectionBias => ("layers.{b}.mlp.gate.bias", "blk.{b}.exp_probs_b.bias", true),
        ExpertGateUp => (
            "layers.{b}.mlp.experts.w13_weight",
            "blk.{b}.ffn_gate_up_exps",
            true,
        ),
        ExpertDown => (
            "layers.{b}.mlp.experts.w2_weight",
            "blk.{b}.ffn_down_exps",
            true,
        ),
        AttnResQuery => (
            "attn_res.attn_queries.{b-1}",
            "blk.{b}.attn_res_query",
            true,
        ),
        FfnResQuery => ("attn_res.mlp_queries.{b}", "blk.{b}.ffn_res_query", true),
        HeadResQuery => ("attn_res.output_query", "output_res_query", true),
        MsgQDown => (
            "layers.{b}.controllers.attn.down_weight",
            "blk.{b}.msg_q_down",
            true,
        ),
        MsgQForget => (
            "layers.{b}.controllers.attn.forget_weight",
            "blk.{b}.msg_q_forget",
            true,
        ),
        MsgQGain => (
            "layers.{b}.controllers.attn.gain_weight",
            "blk.{b}.msg_q_gain",
            true,
        ),
        MsgKDown => (
            "layers.{b}.controllers.k.down_weight",
            "blk.{b}.msg_k_down",
            true,
        ),
        MsgKForget => (
            "layers.{b}.controllers.k.forget_weight",
            "blk.{b}.msg_k_forget",
            true,
        ),
        MsgKGain => (
            "layers.{b}.controllers.k.gain_weight",
            "blk.{b}.msg_k_gain",
            true,
        ),
        MsgVDown => (
            "layers.{b}.controllers.v.down_weight",
            "blk.{b}.msg_v_down",
            true,
        ),
        MsgVForget => (
            "layers.{b}.controllers.v.forget_weight",
            "blk.{b}.msg_v_forget",
            true,
        ),
        MsgVGain => (
            "layers.{b}.controllers.v.gain_weight",
            "blk.{b}.msg_v_gain",
            true,
        ),
        MsgFfnDown => (
            "layers.{b}.controllers.mlp.down_weight",
            "blk.{b}.msg_ffn_down",
            true,
        ),
        MsgFfnForget => (
            "layers.{b}.controllers.mlp.forget_weight",
            "blk.{b}.msg_ffn_forget",
            true,
        ),
        MsgFfnGain => (
            "layers.{b}.controllers.mlp.gain_weight",
            "blk.{b}.msg_ffn_gain",
            true,
        ),
        MsgQueries => ("middle_cycle_cross_pass_queries", "msg_queries", true),
        MsgKvQueries => ("middle_cycle_cross_pass_kv_queries", "msg_kv_queries", true),
        FinalNorm => ("norm", "output_norm", false),
        LmHead => ("unembed", "output", false),
        other => {
            let (hf, gguf) = llama(other);
            return (format!("{hf}.{suffix}"), format!("{gguf}.{suffix}"));
        }
    };
    if bare {
        (format!("model.llm.{hf}"), gguf.to_string())
    } else {
        (
            format!("model.llm.{hf}.{suffix}"),
            format!("{gguf}.{suffix}"),
        )
    }
}

fn longcat(role: Role, suffix: &str) -> (String, String) {
    use Role::*;
    let (hf, gguf) = llama(role);
    let hf = match role {
        Router => format!("model.layers.{{p}}.mlp.router.classifier.{suffix}"),
        AttnNorm | FfnNorm => format!("{}.{{s}}.{suffix}", hf.replace("{b}", "{p}")),
        Gate | Up | Down => format!("{}.{suffix}", hf.replace("{b}.mlp.", "{p}.mlps.{s}.")),
        _ if hf.contains(".self_attn.") => format!(
            "{}.{suffix}",
            hf.replace("{b}.self_attn.", "{p}.self_attn.{s}.")
        ),
        _ => format!("{}.{suffix}", hf.replace("{b}", "{p}")),
    };
    (hf, format!("{gguf}.{suffix}"))
}

fn gpt2(role: Role) -> (&'static str, &'static str) {
    use Role::*;
    match role {
        Embed => ("transformer.wte", "token_embd"),
        PosEmbed => ("transformer.wpe", "position_embd"),
        AttnNorm => ("transformer.h.{b}.ln_1", "blk.{b}.attn_norm"),
        Qkv => ("transformer.h.{b}.attn.c_attn", "blk.{b}.attn_qkv"),
        O => ("transformer.h.{b}.attn.c_proj", "blk.{b}.attn_output"),
        FfnNorm => ("transformer.h.{b}.ln_2", "blk.{b}.ffn_norm"),
        Up => ("transformer.h.{b}.mlp.c_fc", "blk.{b}.ffn_up"),
        Down => ("transformer.h.{b}.mlp.c_proj", "blk.{b}.ffn_down"),
        FinalNorm => ("transformer.ln_f", "output_norm"),
        other => llama(other),
    }
}

/// The name transformers loads a stored tensor as, where a layout's released checkpoints name it
/// otherwise than transformers writes it (its conversion mapping): Dory's store each layer as two
/// blocks, `layers.{2b}.mixer` (the attention) and `layers.{2b+1}.mixer` (the MLP), with their
/// residual rates `layers.{2b}.attn_alpha` and `layers.{2b+1}.mlp_alpha`.
pub fn canonical(layout: Layout, stored: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    if layout != Layout::Dory {
        return Cow::Borrowed(stored);
    }
    let Some(rest) = stored.strip_prefix("backbone.layers.") else {
        return Cow::Borrowed(stored);
    };
    let Some((n, tail)) = rest.split_once('.') else {
        return Cow::Borrowed(stored);
    };
    let Ok(n) = n.parse::<u64>() else {
        return Cow::Borrowed(stored);
    };
    let (b, attention) = (n / 2, n % 2 == 0);
    let tail = match (tail.strip_prefix("mixer."), tail, attention) {
        (Some(t), _, true) => format!("self_attn.{t}"),
        (Some(t), _, false) => format!("mlp.{t}"),
        (None, "attn_alpha", true) => "lambda_1".into(),
        (None, "mlp_alpha", false) => "lambda_2".into(),
        _ => return Cow::Borrowed(stored),
    };
    Cow::Owned(format!("backbone.layers.{b}.{tail}"))
}

/// Fill in the layer and expert index of a template; `{p}` and `{s}` are layer b's checkpoint
/// layer and its sublayer there, where a checkpoint layer holds two (LongCat-Flash).
pub fn instantiate(template: &str, b: Option<u64>, e: Option<u64>) -> String {
    let mut s = template.to_string();
    if let Some(b) = b {
        s = s.replace("{b}", &b.to_string());
        s = s.replace("{p}", &(b / 2).to_string());
        s = s.replace("{b-1}", &b.saturating_sub(1).to_string());
        s = s.replace("{s}", &(b % 2).to_string());
    }
    if let Some(e) = e {
        s = s.replace("{e}", &e.to_string());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_reads_dorys_two_blocks_as_one_layer_and_leaves_the_rest() {
        let d = |s| canonical(Layout::Dory, s).into_owned();
        assert_eq!(
            d("backbone.layers.6.mixer.q_proj.weight"),
            "backbone.layers.3.self_attn.q_proj.weight"
        );
        assert_eq!(
            d("backbone.layers.7.mixer.up_proj.weight"),
            "backbone.layers.3.mlp.up_proj.weight"
        );
        assert_eq!(
            d("backbone.layers.6.attn_alpha"),
            "backbone.layers.3.lambda_1"
        );
        assert_eq!(
            d("backbone.layers.7.mlp_alpha"),
            "backbone.layers.3.lambda_2"
        );
        // Names transformers writes, and pairings the layout does not have, stay as they are.
        for kept in [
            "backbone.layers.3.self_attn.q_proj.weight",
            "backbone.layers.7.attn_alpha",
            "backbone.embeddings.weight",
            "lm_head.weight",
        ] {
            assert_eq!(d(kept), kept);
        }
        let other = canonical(Layout::Llama, "backbone.layers.6.mixer.q_proj.weight");
        assert!(matches!(other, std::borrow::Cow::Borrowed(_)));
    }
}
