//! Every layout's names, as data: a table of rows (a role, its stored name, its GGUF name)
//! over a parent whose rows it takes for the roles it lacks. `{b}` stands for the layer index
//! and `{e}` for the expert index; a template without `{e}` for an expert tensor holds all of
//! a layer's experts, stacked first.

use super::Role::{self, *};
use crate::spec::Layout;

/// How a stored name ends, for a weight and for a bias.
#[derive(Debug, Clone, Copy)]
pub(super) enum End {
    /// `.weight` or `.bias`: a module's tensor.
    Dot,
    /// Nothing: a bare parameter, named as written.
    Bare,
    /// `_weight` or `_bias` (RG-LRU's gates, Zamba's per-head `dt_proj_bias`).
    Under,
    /// Nothing for the weight, `_bias` for the bias (stacked experts' `down_proj`,
    /// `down_proj_bias`).
    BiasOnly,
}

/// Where a stored name is.
#[derive(Debug, Clone, Copy)]
pub(super) enum At {
    Name(&'static str),
    /// In the module that holds another role's tensor, under this name (a Mamba mixer's
    /// `dt_bias` beside its `out_proj`).
    Beside(Role, &'static str),
}

#[derive(Debug)]
pub(super) struct Row {
    pub role: Role,
    pub hf: At,
    pub gguf: &'static str,
    /// The stored name's end and the GGUF name's.
    pub ends: [End; 2],
}

/// A layout's names: its rows, then its parent's for the roles it lacks, with `rename`'s
/// replacements (each made once, in order) in the parent's stored names.
pub(super) struct Table {
    pub parent: Option<&'static Table>,
    pub rename: &'static [(&'static str, &'static str)],
    pub rows: &'static [Row],
}

/// A module's tensor: `.weight` or `.bias` after both names.
const fn m(role: Role, hf: &'static str, gguf: &'static str) -> Row {
    row(role, hf, gguf, [End::Dot, End::Dot])
}

/// A bare parameter, both names as written.
const fn bare(role: Role, hf: &'static str, gguf: &'static str) -> Row {
    row(role, hf, gguf, [End::Bare, End::Bare])
}

const fn row(role: Role, hf: &'static str, gguf: &'static str, ends: [End; 2]) -> Row {
    Row {
        role,
        hf: At::Name(hf),
        gguf,
        ends,
    }
}

/// A bare parameter in the module holding `of`'s tensor.
const fn beside(role: Role, of: Role, name: &'static str, gguf: &'static str) -> Row {
    Row {
        role,
        hf: At::Beside(of, name),
        gguf,
        ends: [End::Bare, End::Bare],
    }
}

/// The table of `layout`'s names.
pub(super) fn of(layout: Layout) -> &'static Table {
    match layout {
        Layout::Llama | Layout::Phi3 | Layout::DeepSeek => &LLAMA,
        Layout::Hrm => &HRM,
        Layout::Blt => &BLT,
        Layout::Dory => &DORY,
        Layout::Mixtral => &MIXTRAL,
        Layout::Qwen3Next => &QWEN3_NEXT,
        Layout::Qwen35 => &QWEN35,
        Layout::OlmoHybrid => &OLMO_HYBRID,
        Layout::LaraMini => &LARA_MINI,
        Layout::FalconH1 => &FALCON_H1,
        Layout::Bailing => &BAILING,
        Layout::KimiLinear => &KIMI_LINEAR,
        Layout::MiniMaxM2 => &MINI_MAX_M2,
        Layout::MiniMaxM3 => &MINI_MAX_M3,
        Layout::MiniMaxM3Published => &MINI_MAX_M3_PUBLISHED,
        Layout::Zaya => &ZAYA,
        Layout::MiniMax => &MINI_MAX,
        Layout::RecurrentGemma => &RECURRENT_GEMMA,
        Layout::Rwkv => &RWKV,
        Layout::Sandwich => &SANDWICH,
        Layout::Gpt2 | Layout::GptBigCode => &GPT2,
        Layout::GptNeo => &GPT_NEO,
        Layout::Opt => &OPT,
        Layout::MiMo => &MI_MO,
        Layout::Dbrx => &DBRX,
        Layout::Laguna => &LAGUNA,
        Layout::JetMoe => &JET_MOE,
        Layout::GptOss => &GPT_OSS,
        Layout::Llama4 => &LLAMA4,
        Layout::Glm4 => &GLM4,
        Layout::Starcoder2 => &STARCODER2,
        Layout::Phi => &PHI,
        Layout::Gemma4 => &GEMMA4,
        Layout::LongCat => &LONG_CAT,
        Layout::GptNeox => &GPT_NEOX,
        Layout::Falcon => &FALCON,
        Layout::FalconTwoNorms => &FALCON_TWO_NORMS,
        Layout::Exaone => &EXAONE,
        Layout::HunYuan => &HUN_YUAN,
        Layout::Apertus => &APERTUS,
        Layout::Bloom => &BLOOM,
        Layout::Gptj => &GPTJ,
        Layout::Persimmon => &PERSIMMON,
        Layout::Qwen2Moe => &SHARED_EXPERT,
        Layout::GraniteMoe => &GRANITE_MOE,
        Layout::GraniteMoeSwa => &GRANITE_MOE_SWA,
        Layout::Sarvam => &SARVAM,
        Layout::NanoChat => &NANO_CHAT,
        Layout::HyperClovax => &HYPER_CLOVAX,
        Layout::OpenAiGpt => &OPEN_AI_GPT,
        Layout::Git => &GIT,
        Layout::CodeGen => &CODE_GEN,
        Layout::Xglm => &XGLM,
        Layout::StableLm => &STABLE_LM,
        Layout::CpmAnt => &CPM_ANT,
        Layout::BioGpt => &BIO_GPT,
        Layout::Mpt => &MPT,
        Layout::Ernie45Moe => &ERNIE45_MOE,
        Layout::Kolibri => &KOLIBRI,
        Layout::Ergo => &ERGO,
        Layout::Aria => &ARIA,
        Layout::Ctrl => &CTRL,
        Layout::GptNeoxJapanese => &GPT_NEOX_JAPANESE,
        Layout::ModernBertDecoder => &MODERN_BERT_DECODER,
        Layout::Flint => &FLINT,
        Layout::Afmoe => &AFMOE,
        Layout::ExaoneMoe => &EXAONE_MOE,
        Layout::HyV3 => &HY_V3,
        Layout::HyV4 => &HY_V4,
        Layout::HyV4Vl => &HY_V4_VL,
        Layout::DeepseekV4 => &DEEPSEEK_V4,
        Layout::Axk2 => &AXK2,
        Layout::Dots3 => &DOTS3,
        Layout::Gemma3n => &GEMMA3N,
        Layout::GraniteMoeHybrid => &GRANITE_MOE_HYBRID,
        Layout::NemotronH => &NEMOTRON_H,
        Layout::Lfm2 => &LFM2,
        Layout::Lfm3 => &LFM3,
        Layout::Bamba => &BAMBA,
        Layout::Mamba2 => &MAMBA2,
        Layout::Zamba2 => &ZAMBA2,
        Layout::Zamba => &ZAMBA,
        Layout::Xlstm => &XLSTM,
        Layout::Inkling => &INKLING,
        Layout::Inkling2 => &INKLING2,
    }
}

/// Names in every layout for the tensors of mechanisms whose models all name them alike (or
/// that llama.cpp does not define, whose GGUF names follow its style): bare parameters,
/// mostly, stored without a `.weight`.
const COMMON: Table = Table {
    parent: None,
    rename: &[],
    rows: &[
        bare(NgptQueryScale, "model.layers.{b}.self_attn.sqk", "blk.{b}.attn_q_scale"),
        bare(NgptGateScale, "model.layers.{b}.self_attn.s_gate", "blk.{b}.attn_gate_scale"),
        bare(NgptGateUvScale, "model.layers.{b}.mlp.suv_gate", "blk.{b}.ffn_gate_scale"),
        bare(NgptUpUvScale, "model.layers.{b}.mlp.suv_up", "blk.{b}.ffn_up_scale"),
        bare(NgptRateAttn, "model.layers.{b}.lambda_1", "blk.{b}.attn_rate"),
        bare(NgptRateFfn, "model.layers.{b}.lambda_2", "blk.{b}.ffn_rate"),
        bare(NgptLogitScale, "lm_head.logit_scale", "output_scale"),
        bare(EmbedScale, "model.input_hidden_states_scale", "token_embd_scale"),
        bare(EmbedShift, "model.input_hidden_states_bias", "token_embd_shift"),
        bare(CcaKeyTemp, "model.layers.{b}.self_attn.qk_norm.temp", "blk.{b}.attn_k_temp"),
        bare(RouterState, "model.layers.{b}.mlp.gate.router_states_scale", "blk.{b}.ffn_router_state_scale"),
        bare(RouterBalance, "model.layers.{b}.mlp.gate.balancing_biases", "blk.{b}.ffn_router_balance"),
        bare(ResidAttnOutScale, "model.layers.{b}.post_attention_residual_scale.hidden_states_scale", "blk.{b}.attn_out_scale"),
        bare(ResidAttnOutShift, "model.layers.{b}.post_attention_residual_scale.hidden_states_bias", "blk.{b}.attn_out_shift"),
        bare(ResidAttnScale, "model.layers.{b}.post_attention_residual_scale.residual_scale", "blk.{b}.attn_residual_scale"),
        bare(ResidAttnShift, "model.layers.{b}.post_attention_residual_scale.residual_bias", "blk.{b}.attn_residual_shift"),
        bare(ResidFfnOutScale, "model.layers.{b}.post_mlp_residual_scale.hidden_states_scale", "blk.{b}.ffn_out_scale"),
        bare(ResidFfnOutShift, "model.layers.{b}.post_mlp_residual_scale.hidden_states_bias", "blk.{b}.ffn_out_shift"),
        bare(ResidFfnScale, "model.layers.{b}.post_mlp_residual_scale.residual_scale", "blk.{b}.ffn_residual_scale"),
        bare(ResidFfnShift, "model.layers.{b}.post_mlp_residual_scale.residual_bias", "blk.{b}.ffn_residual_shift"),
        bare(PositionBias, "cpmant.position_bias.relative_attention_bias", "attn_rel_b"),
        bare(LowInit, "model.z_L_init", "z_l_init"),
        bare(LambdaQ1, "model.layers.{b}.self_attn.lambda_q1", "blk.{b}.attn_lambda_q1"),
        bare(LambdaK1, "model.layers.{b}.self_attn.lambda_k1", "blk.{b}.attn_lambda_k1"),
        bare(LambdaQ2, "model.layers.{b}.self_attn.lambda_q2", "blk.{b}.attn_lambda_q2"),
        bare(LambdaK2, "model.layers.{b}.self_attn.lambda_k2", "blk.{b}.attn_lambda_k2"),
        bare(HcAttnFn, "model.layers.{b}.hc_pre.hc_attn_layer.hc_fn", "blk.{b}.hc_attn_fn"),
        bare(HcAttnBase, "model.layers.{b}.hc_pre.hc_attn_layer.hc_base", "blk.{b}.hc_attn_base"),
        bare(HcAttnScale, "model.layers.{b}.hc_pre.hc_attn_layer.hc_scale", "blk.{b}.hc_attn_scale"),
        bare(HcFfnFn, "model.layers.{b}.hc_pre.hc_mlp_layer.hc_fn", "blk.{b}.hc_ffn_fn"),
        bare(HcFfnBase, "model.layers.{b}.hc_pre.hc_mlp_layer.hc_base", "blk.{b}.hc_ffn_base"),
        bare(HcFfnScale, "model.layers.{b}.hc_pre.hc_mlp_layer.hc_scale", "blk.{b}.hc_ffn_scale"),
        bare(HcHeadFn, "model.hc_pre.hc_head.hc_head_fn", "output_hc_fn"),
        bare(HcHeadBase, "model.hc_pre.hc_head.hc_head_base", "output_hc_base"),
        bare(HcHeadScale, "model.hc_pre.hc_head.hc_head_scale", "output_hc_scale"),
        bare(GsAttnNorm, "model.layers.{b}.attn_hyper_connection.hc_norm.weight", "blk.{b}.gs_attn_norm.weight"),
        bare(GsAttnDown, "model.layers.{b}.attn_hyper_connection.input_mix_weight_down.weight", "blk.{b}.gs_attn_down.weight"),
        bare(GsAttnUp, "model.layers.{b}.attn_hyper_connection.input_mix_weight_up.weight", "blk.{b}.gs_attn_up.weight"),
        bare(GsAttnInject, "model.layers.{b}.attn_hyper_connection.block_inject_weight.weight", "blk.{b}.gs_attn_inject.weight"),
        bare(GsFfnNorm, "model.layers.{b}.mlp_hyper_connection.hc_norm.weight", "blk.{b}.gs_ffn_norm.weight"),
        bare(GsFfnDown, "model.layers.{b}.mlp_hyper_connection.input_mix_weight_down.weight", "blk.{b}.gs_ffn_down.weight"),
        bare(GsFfnUp, "model.layers.{b}.mlp_hyper_connection.input_mix_weight_up.weight", "blk.{b}.gs_ffn_up.weight"),
        bare(GsFfnInject, "model.layers.{b}.mlp_hyper_connection.block_inject_weight.weight", "blk.{b}.gs_ffn_inject.weight"),
        bare(GsHeadNorm, "model.hyper_connection_mixer.hc_norm.weight", "output_gs_norm.weight"),
        bare(GsHeadDown, "model.hyper_connection_mixer.input_mix_weight_down.weight", "output_gs_down.weight"),
        bare(GsHeadUp, "model.hyper_connection_mixer.input_mix_weight_up.weight", "output_gs_up.weight"),
        bare(NgramTable, "model.layers.{b}.ple.ple_embedding.ngram_embedding.shard_{e}.weight", "blk.{b}.ple_ngram.{e}.weight"),
        bare(NgramMultipliers, "model.layers.{b}.ple.ple_embedding.layer_multipliers", "blk.{b}.ple_ngram_mult"),
        bare(NgramSizes, "model.layers.{b}.ple.ple_embedding.ngram_heads_vocab_sizes", "blk.{b}.ple_ngram_sizes"),
        bare(NgramOffsets, "model.layers.{b}.ple.ple_embedding.ngram_heads_offsets", "blk.{b}.ple_ngram_offsets"),
        bare(NgramKey, "model.layers.{b}.ple.key_proj.weight", "blk.{b}.ple_key.weight"),
        bare(NgramValue, "model.layers.{b}.ple.value_proj.weight", "blk.{b}.ple_value.weight"),
        bare(NgramNormKey, "model.layers.{b}.ple.norm_key.weight", "blk.{b}.ple_key_norm.weight"),
        bare(NgramNormQuery, "model.layers.{b}.ple.norm_query.weight", "blk.{b}.ple_query_norm.weight"),
        bare(NgramNormConv, "model.layers.{b}.ple.norm_conv.weight", "blk.{b}.ple_conv_norm.weight"),
        bare(NgramConv, "model.layers.{b}.ple.conv1d.weight", "blk.{b}.ple_conv.weight"),
        bare(AltUpScale, "model.layers.{b}.altup.correct_output_scale", "blk.{b}.altup_correct_scale.weight"),
        bare(ActAlphaP, "model.layers.{b}.mlp.act_fn.alpha_p", "blk.{b}.ffn_act_alpha_p"),
        bare(ActAlphaN, "model.layers.{b}.mlp.act_fn.alpha_n", "blk.{b}.ffn_act_alpha_n"),
        bare(ActBeta, "model.layers.{b}.mlp.act_fn.beta", "blk.{b}.ffn_act_beta"),
        bare(ActEps, "model.layers.{b}.mlp.act_fn.eps", "blk.{b}.ffn_act_eps"),
        bare(DynA, "model.layers.{b}.self_attn.A", "blk.{b}.attn_dyn_a"),
        bare(ResidScaleAttn, "model.layers.{b}.input_residual", "blk.{b}.attn_residual_scale"),
        bare(ResidScaleFfn, "model.layers.{b}.post_attention_residual", "blk.{b}.ffn_residual_scale"),
        bare(CrossAttnGate, "model.layers.{b}.cross_attn_attn_gate", "blk.{b}.cross_attn_attn_gate"),
        bare(CrossMlpGate, "model.layers.{b}.cross_attn_mlp_gate", "blk.{b}.cross_attn_mlp_gate"),
        bare(AttnGateBias, "model.layers.{b}.self_attn.gate_bias", "blk.{b}.attn_gate_bias"),
        bare(Sinks, "model.layers.{b}.self_attn.sinks", "blk.{b}.attn_sinks.weight"),
        bare(CorrectionBias, "model.layers.{b}.mlp.gate.e_score_correction_bias", "blk.{b}.exp_probs_b.bias"),
        bare(LayerScalar, "model.layers.{b}.layer_scalar", "blk.{b}.layer_output_scale.weight"),
        bare(TokenOrdering, "masked_embedding.token_ordering", "draft_token_order"),
        beside(SsmDtBias, SsmOut, "dt_bias", "blk.{b}.ssm_dt.bias"),
        beside(SsmALog, SsmOut, "A_log", "blk.{b}.ssm_a"),
        beside(SsmD, SsmOut, "D", "blk.{b}.ssm_d"),
        beside(LightSlope, SsmOut, "slope_rate", "blk.{b}.lightning_slope"),
        beside(LightQDecay, SsmOut, "query_decay", "blk.{b}.lightning_query_decay"),
        beside(LightKDecay, SsmOut, "key_decay", "blk.{b}.lightning_key_decay"),
        beside(LightDiagDecay, SsmOut, "diagonal_decay", "blk.{b}.lightning_diagonal_decay"),
        row(TmDecay, "rwkv.blocks.{b}.attention.time_decay", "blk.{b}.time_mix_decay", [End::Bare, End::Dot]),
        row(TmFirst, "rwkv.blocks.{b}.attention.time_first", "blk.{b}.time_mix_first", [End::Bare, End::Dot]),
        row(TmMixK, "rwkv.blocks.{b}.attention.time_mix_key", "blk.{b}.time_mix_lerp_k", [End::Bare, End::Dot]),
        row(TmMixV, "rwkv.blocks.{b}.attention.time_mix_value", "blk.{b}.time_mix_lerp_v", [End::Bare, End::Dot]),
        row(TmMixR, "rwkv.blocks.{b}.attention.time_mix_receptance", "blk.{b}.time_mix_lerp_r", [End::Bare, End::Dot]),
        row(CmMixK, "rwkv.blocks.{b}.feed_forward.time_mix_key", "blk.{b}.channel_mix_lerp_k", [End::Bare, End::Dot]),
        row(CmMixR, "rwkv.blocks.{b}.feed_forward.time_mix_receptance", "blk.{b}.channel_mix_lerp_r", [End::Bare, End::Dot]),
        row(LruParam, "model.layers.{b}.temporal_block.rg_lru.recurrent_param", "blk.{b}.rg_lru_a", [End::Bare, End::Dot]),
        row(LruInGate, "model.layers.{b}.temporal_block.rg_lru.input_gate", "blk.{b}.rg_lru_input_gate", [End::Under, End::Dot]),
        row(LruRecGate, "model.layers.{b}.temporal_block.rg_lru.recurrent_gate", "blk.{b}.rg_lru_recurrent_gate", [End::Under, End::Dot]),
    ],
};

/// Llama's names, and the names in Llama's style of the tensors other layouts add.
const LLAMA: Table = Table {
    parent: Some(&COMMON),
    rename: &[],
    rows: &[
        m(Embed, "model.embed_tokens", "token_embd"),
        m(AttnNorm, "model.layers.{b}.input_layernorm", "blk.{b}.attn_norm"),
        m(Q, "model.layers.{b}.self_attn.q_proj", "blk.{b}.attn_q"),
        m(K, "model.layers.{b}.self_attn.k_proj", "blk.{b}.attn_k"),
        m(V, "model.layers.{b}.self_attn.v_proj", "blk.{b}.attn_v"),
        m(O, "model.layers.{b}.self_attn.o_proj", "blk.{b}.attn_output"),
        m(QNorm, "model.layers.{b}.self_attn.q_norm", "blk.{b}.attn_q_norm"),
        m(KNorm, "model.layers.{b}.self_attn.k_norm", "blk.{b}.attn_k_norm"),
        m(FfnNorm, "model.layers.{b}.post_attention_layernorm", "blk.{b}.ffn_norm"),
        m(PostAttnNorm, "model.layers.{b}.post_attention_layernorm", "blk.{b}.ffn_norm"),
        m(PostFfnNorm, "model.layers.{b}.post_feedforward_layernorm", "blk.{b}.post_ffw_norm"),
        m(DynDt, "model.layers.{b}.self_attn.dt_proj", "blk.{b}.attn_dyn_dt"),
        m(Kv, "model.layers.{b}.self_attention.kv_proj", "blk.{b}.attn_kv"),
        m(AttnRouter, "model.layers.{b}.self_attention.experts.router.layer", "blk.{b}.attn_gate_inp"),
        m(AttnExpertQ, "model.layers.{b}.self_attention.experts.input_linear", "blk.{b}.attn_q_exps"),
        m(AttnExpertO, "model.layers.{b}.self_attention.experts.output_linear", "blk.{b}.attn_output_exps"),
        m(AttnExperts, "model.layers.{b}.self_attention.experts", "blk.{b}.attn_output_exps"),
        m(MoeBlock, "model.layers.{b}.mlp", "blk.{b}.ffn_out"),
        m(MoePostNorm, "model.layers.{b}.post_mlp_layernorm", "blk.{b}.ffn_post_norm"),
        m(Gate, "model.layers.{b}.mlp.gate_proj", "blk.{b}.ffn_gate"),
        m(Up, "model.layers.{b}.mlp.up_proj", "blk.{b}.ffn_up"),
        m(Down, "model.layers.{b}.mlp.down_proj", "blk.{b}.ffn_down"),
        m(FinalNorm, "model.norm", "output_norm"),
        m(MlpPostNorm, "model.layers.{b}.post_mlp_norm", "blk.{b}.post_ffw_norm_1"),
        m(ExpertsNorm, "model.layers.{b}.experts_norm", "blk.{b}.pre_ffw_norm_2"),
        m(ExpertsPostNorm, "model.layers.{b}.post_experts_norm", "blk.{b}.post_ffw_norm_2"),
        m(RouterScale, "model.layers.{b}.mlp.router.scale", "blk.{b}.ffn_gate_inp.scale"),
        m(RouterExpertScale, "model.layers.{b}.mlp.router.per_expert_scale", "blk.{b}.ffn_gate_inp.per_expert_scale"),
        m(PleEmbed, "model.embed_tokens_per_layer", "per_layer_token_embd"),
        m(DraftIn, "pre_projection", "draft_in"),
        m(DraftOut, "post_projection", "draft_out"),
        m(Centroids, "masked_embedding.centroids", "draft_centroids"),
        m(PleProj, "model.per_layer_model_projection", "per_layer_model_proj"),
        m(PleProjNorm, "model.per_layer_projection_norm", "per_layer_proj_norm"),
        m(PleGate, "model.layers.{b}.per_layer_input_gate", "blk.{b}.inp_gate"),
        m(PleUp, "model.layers.{b}.per_layer_projection", "blk.{b}.proj"),
        m(PleNorm, "model.layers.{b}.post_per_layer_input_norm", "blk.{b}.post_norm"),
        m(EmbedProjIn, "model.project_in", "token_embd_proj"),
        m(EmbedProjOut, "model.project_out", "output_proj"),
        m(HeadDense, "lm_head.dense", "output_dense"),
        m(HeadNorm, "lm_head.norm", "output_dense_norm"),
        m(LmHead, "lm_head", "output"),
        m(Router, "model.layers.{b}.mlp.gate", "blk.{b}.ffn_gate_inp"),
        m(ExpertGate, "model.layers.{b}.mlp.experts.{e}.gate_proj", "blk.{b}.ffn_gate_exps"),
        m(ExpertUp, "model.layers.{b}.mlp.experts.{e}.up_proj", "blk.{b}.ffn_up_exps"),
        m(ExpertDown, "model.layers.{b}.mlp.experts.{e}.down_proj", "blk.{b}.ffn_down_exps"),
        m(ExpertGateUp, "model.layers.{b}.mlp.experts.{e}.gate_up_proj", "blk.{b}.ffn_gate_up_exps"),
        m(SharedGate, "model.layers.{b}.mlp.shared_experts.gate_proj", "blk.{b}.ffn_gate_shexp"),
        m(SharedUp, "model.layers.{b}.mlp.shared_experts.up_proj", "blk.{b}.ffn_up_shexp"),
        m(SharedDown, "model.layers.{b}.mlp.shared_experts.down_proj", "blk.{b}.ffn_down_shexp"),
        m(SharedGateUp, "model.layers.{b}.mlp.shared_experts.gate_up_proj", "blk.{b}.ffn_gate_up_shexp"),
        m(SharedExpertGate, "model.layers.{b}.mlp.shared_expert_gate", "blk.{b}.ffn_gate_inp_shexp"),
        m(PosEmbed, "model.embed_positions", "position_embd"),
        m(SegmentEmbed, "model.segment_embedding", "token_types"),
        m(EmbedNorm, "model.embed_layernorm", "token_embd_norm"),
        m(Qkv, "model.layers.{b}.self_attn.qkv_proj", "blk.{b}.attn_qkv"),
        m(AttnSubNorm, "model.layers.{b}.self_attn.attn_sub_norm", "blk.{b}.attn_sub_norm"),
        m(FfnSubNorm, "model.layers.{b}.mlp.ffn_sub_norm", "blk.{b}.ffn_sub_norm"),
        m(AttnGate, "model.layers.{b}.self_attn.gate_proj", "blk.{b}.attn_gate"),
        m(CrossQ, "model.layers.{b}.cross_attn.q_proj", "blk.{b}.cross_attn_q"),
        m(CrossK, "model.layers.{b}.cross_attn.k_proj", "blk.{b}.cross_attn_k"),
        m(CrossV, "model.layers.{b}.cross_attn.v_proj", "blk.{b}.cross_attn_v"),
        m(CrossO, "model.layers.{b}.cross_attn.o_proj", "blk.{b}.cross_attn_o"),
        m(CrossQNorm, "model.layers.{b}.cross_attn.q_norm", "blk.{b}.cross_attn_q_norm"),
        m(CrossKNorm, "model.layers.{b}.cross_attn.k_norm", "blk.{b}.cross_attn_k_norm"),
        m(GateUp, "model.layers.{b}.mlp.gate_up_proj", "blk.{b}.ffn_up"),
        m(QA, "model.layers.{b}.self_attn.q_a_proj", "blk.{b}.attn_q_a"),
        m(QANorm, "model.layers.{b}.self_attn.q_a_layernorm", "blk.{b}.attn_q_a_norm"),
        m(QB, "model.layers.{b}.self_attn.q_b_proj", "blk.{b}.attn_q_b"),
        m(KvA, "model.layers.{b}.self_attn.kv_a_proj_with_mqa", "blk.{b}.attn_kv_a_mqa"),
        m(KvANorm, "model.layers.{b}.self_attn.kv_a_layernorm", "blk.{b}.attn_kv_a_norm"),
        m(KvB, "model.layers.{b}.self_attn.kv_b_proj", "blk.{b}.attn_kv_b"),
        m(KPeNorm, "model.layers.{b}.self_attn.k_rope_only_layernorm", "blk.{b}.attn_k_pe_norm"),
        m(BlockIndexQ, "model.layers.{b}.self_attn.indexer.q_proj", "blk.{b}.indexer.attn_q"),
        m(BlockIndexK, "model.layers.{b}.self_attn.indexer.k_proj", "blk.{b}.indexer.attn_k"),
        m(BlockIndexQNorm, "model.layers.{b}.self_attn.indexer.q_norm", "blk.{b}.indexer.q_norm"),
        m(BlockIndexKNorm, "model.layers.{b}.self_attn.indexer.k_norm", "blk.{b}.indexer.k_norm"),
        m(QsaQk, "model.layers.{b}.self_attn.indexer.index_qk_proj", "blk.{b}.indexer.attn_qk"),
        m(QsaQNorm, "model.layers.{b}.self_attn.indexer.q_layernorm", "blk.{b}.indexer.q_norm"),
        m(QsaKNorm, "model.layers.{b}.self_attn.indexer.k_layernorm", "blk.{b}.indexer.k_norm"),
        m(IndexQ, "model.layers.{b}.self_attn.indexer.wq_b", "blk.{b}.indexer.attn_q_b"),
        m(IndexK, "model.layers.{b}.self_attn.indexer.wk", "blk.{b}.indexer.attn_k"),
        m(IndexKNorm, "model.layers.{b}.self_attn.indexer.k_norm", "blk.{b}.indexer.k_norm"),
        m(IndexWeights, "model.layers.{b}.self_attn.indexer.weights_proj", "blk.{b}.indexer.proj"),
        m(MtpEmbed, "model.layers.{b}.embed_tokens", "blk.{b}.nextn.embed_tokens"),
        m(MtpENorm, "model.layers.{b}.enorm", "blk.{b}.nextn.enorm"),
        m(MtpHNorm, "model.layers.{b}.hnorm", "blk.{b}.nextn.hnorm"),
        m(MtpProj, "model.layers.{b}.eh_proj", "blk.{b}.nextn.eh_proj"),
        m(MtpNorm, "model.layers.{b}.shared_head.norm", "blk.{b}.nextn.shared_head_norm"),
        m(MtpHead, "model.layers.{b}.shared_head.head", "blk.{b}.nextn.shared_head_head"),
        m(SsmIn, "model.layers.{b}.mamba.in_proj", "blk.{b}.ssm_in"),
        m(SsmConv, "model.layers.{b}.mamba.conv1d", "blk.{b}.ssm_conv1d"),
        m(SsmNorm, "model.layers.{b}.mamba.norm", "blk.{b}.ssm_norm"),
        m(SsmOut, "model.layers.{b}.mamba.out_proj", "blk.{b}.ssm_out"),
        m(SsmX, "model.layers.{b}.mamba.x_proj", "blk.{b}.ssm_x"),
        m(SsmDt, "model.layers.{b}.mamba.dt_proj", "blk.{b}.ssm_dt"),
        m(SsmDtNorm, "model.layers.{b}.mamba.dt_layernorm", "blk.{b}.ssm_dt_norm"),
        m(SsmBNorm, "model.layers.{b}.mamba.b_layernorm", "blk.{b}.ssm_b_norm"),
        m(SsmCNorm, "model.layers.{b}.mamba.c_layernorm", "blk.{b}.ssm_c_norm"),
        m(SsmZ, "model.layers.{b}.linear_attn.in_proj_z", "blk.{b}.attn_gate"),
        m(SsmBa, "model.layers.{b}.linear_attn.in_proj_ba", "blk.{b}.ssm_ba"),
        m(SsmBeta, "model.layers.{b}.linear_attn.in_proj_b", "blk.{b}.ssm_beta"),
        m(SsmAlpha, "model.layers.{b}.linear_attn.in_proj_a", "blk.{b}.ssm_alpha"),
        m(SsmQ, "model.layers.{b}.self_attn.q_proj", "blk.{b}.attn_q"),
        m(SsmK, "model.layers.{b}.self_attn.k_proj", "blk.{b}.attn_k"),
        m(SsmV, "model.layers.{b}.self_attn.v_proj", "blk.{b}.attn_v"),
        m(SsmConvQ, "model.layers.{b}.self_attn.q_conv1d", "blk.{b}.ssm_conv1d_q"),
        m(SsmConvK, "model.layers.{b}.self_attn.k_conv1d", "blk.{b}.ssm_conv1d_k"),
        m(SsmConvV, "model.layers.{b}.self_attn.v_conv1d", "blk.{b}.ssm_conv1d_v"),
        m(SsmFA, "model.layers.{b}.self_attn.f_a_proj", "blk.{b}.ssm_f_a"),
        m(SsmFB, "model.layers.{b}.self_attn.f_b_proj", "blk.{b}.ssm_f_b"),
        m(SsmGA, "model.layers.{b}.self_attn.g_a_proj", "blk.{b}.ssm_g_a"),
        m(SsmGB, "model.layers.{b}.self_attn.g_b_proj", "blk.{b}.ssm_g_b"),
        m(TmKey, "model.layers.{b}.attention.key", "blk.{b}.time_mix_key"),
        m(TmValue, "model.layers.{b}.attention.value", "blk.{b}.time_mix_value"),
        m(TmReceptance, "model.layers.{b}.attention.receptance", "blk.{b}.time_mix_receptance"),
        m(TmOutput, "model.layers.{b}.attention.output", "blk.{b}.time_mix_output"),
        m(CmReceptance, "model.layers.{b}.feed_forward.receptance", "blk.{b}.channel_mix_receptance"),
        m(KConvDyn, "model.layers.{b}.self_attn.k_proj.sconv.weight_proj", "blk.{b}.attn_k_conv_dyn"),
        m(VConvDyn, "model.layers.{b}.self_attn.v_proj.sconv.weight_proj", "blk.{b}.attn_v_conv_dyn"),
        m(TokenSinks, "model.layers.{b}.self_attn.sink_proj", "blk.{b}.attn_sinks_proj"),
        m(QInNorm, "model.layers.{b}.q_input_layernorm", "blk.{b}.attn_q_in_norm"),
        m(KInNorm, "model.layers.{b}.k_input_layernorm", "blk.{b}.attn_k_in_norm"),
        m(VInNorm, "model.layers.{b}.v_input_layernorm", "blk.{b}.attn_v_in_norm"),
        m(KConvStatic, "model.layers.{b}.self_attn.k_conv_static", "blk.{b}.attn_k_conv"),
        m(VConvStatic, "model.layers.{b}.self_attn.v_conv_static", "blk.{b}.attn_v_conv"),
        m(QClipScale, "model.layers.{b}.self_attn.q_clip_scale", "blk.{b}.attn_q_clip_scale"),
        m(RelClipScale, "model.layers.{b}.self_attn.rel_clip_scale", "blk.{b}.attn_rel_clip_scale"),
        m(AttnResQuery, "model.layers.{b}.attention_input.query", "blk.{b}.attn_res_query"),
        m(FfnResQuery, "model.layers.{b}.mlp_input.query", "blk.{b}.ffn_res_query"),
        m(HeadResQuery, "model.final_input.query", "output_res_query"),
        m(MsgQDown, "model.layers.{b}.q_message_gate.down_proj", "blk.{b}.msg_q_down"),
        m(MsgQForget, "model.layers.{b}.q_message_gate.forget_gate_proj", "blk.{b}.msg_q_forget"),
        m(MsgQGain, "model.layers.{b}.q_message_gate.message_gate_proj", "blk.{b}.msg_q_gain"),
        m(MsgKDown, "model.layers.{b}.k_message_gate.down_proj", "blk.{b}.msg_k_down"),
        m(MsgKForget, "model.layers.{b}.k_message_gate.forget_gate_proj", "blk.{b}.msg_k_forget"),
        m(MsgKGain, "model.layers.{b}.k_message_gate.message_gate_proj", "blk.{b}.msg_k_gain"),
        m(MsgVDown, "model.layers.{b}.v_message_gate.down_proj", "blk.{b}.msg_v_down"),
        m(MsgVForget, "model.layers.{b}.v_message_gate.forget_gate_proj", "blk.{b}.msg_v_forget"),
        m(MsgVGain, "model.layers.{b}.v_message_gate.message_gate_proj", "blk.{b}.msg_v_gain"),
        m(MsgFfnDown, "model.layers.{b}.mlp_message_gate.down_proj", "blk.{b}.msg_ffn_down"),
        m(MsgFfnForget, "model.layers.{b}.mlp_message_gate.forget_gate_proj", "blk.{b}.msg_ffn_forget"),
        m(MsgFfnGain, "model.layers.{b}.mlp_message_gate.message_gate_proj", "blk.{b}.msg_ffn_gain"),
        m(MsgQueries, "model.message_input.query", "msg_queries"),
        m(MsgKvQueries, "model.message_input.query", "msg_queries"),
        m(RelProj, "model.layers.{b}.self_attn.r_proj", "blk.{b}.attn_rel"),
        m(KConv, "model.layers.{b}.self_attn.k_sconv.conv1d", "blk.{b}.attn_k_conv"),
        m(VConv, "model.layers.{b}.self_attn.v_sconv.conv1d", "blk.{b}.attn_v_conv"),
        m(AttnOutConv, "model.layers.{b}.attn_sconv.conv1d", "blk.{b}.attn_out_conv"),
        m(FfnOutConv, "model.layers.{b}.mlp_sconv.conv1d", "blk.{b}.ffn_out_conv"),
        m(RelBank, "model.layers.{b}.self_attn.rel_logits_proj.proj", "blk.{b}.attn_rel_bank"),
        m(MlpScalar, "model.layers.{b}.mlp.global_scale", "blk.{b}.ffn_scale"),
        m(RouterScalar, "model.layers.{b}.mlp.gate.global_scale", "blk.{b}.ffn_gate_inp_scale"),
    ],
};

/// One shared expert stored as `mlp.shared_expert` (Qwen2-MoE and its successors).
const SHARED_EXPERT: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(SharedGate, "model.layers.{b}.mlp.shared_expert.gate_proj", "blk.{b}.ffn_gate_shexp"),
        m(SharedUp, "model.layers.{b}.mlp.shared_expert.up_proj", "blk.{b}.ffn_up_shexp"),
        m(SharedDown, "model.layers.{b}.mlp.shared_expert.down_proj", "blk.{b}.ffn_down_shexp"),
    ],
};

/// A shared MLP stored as `mlp.shared_mlp` (HunYuan-MoE, HY-V3).
const SHARED_MLP: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(SharedGate, "model.layers.{b}.mlp.shared_mlp.gate_proj", "blk.{b}.ffn_gate_shexp"),
        m(SharedUp, "model.layers.{b}.mlp.shared_mlp.up_proj", "blk.{b}.ffn_up_shexp"),
        m(SharedDown, "model.layers.{b}.mlp.shared_mlp.down_proj", "blk.{b}.ffn_down_shexp"),
    ],
};

const GPTJ: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Embed, "transformer.wte", "token_embd"),
        m(AttnNorm, "transformer.h.{b}.ln_1", "blk.{b}.attn_norm"),
        m(Q, "transformer.h.{b}.attn.q_proj", "blk.{b}.attn_q"),
        m(K, "transformer.h.{b}.attn.k_proj", "blk.{b}.attn_k"),
        m(V, "transformer.h.{b}.attn.v_proj", "blk.{b}.attn_v"),
        m(O, "transformer.h.{b}.attn.out_proj", "blk.{b}.attn_output"),
        m(Up, "transformer.h.{b}.mlp.fc_in", "blk.{b}.ffn_up"),
        m(Down, "transformer.h.{b}.mlp.fc_out", "blk.{b}.ffn_down"),
        m(FinalNorm, "transformer.ln_f", "output_norm"),
    ],
};

/// Zamba2's names: `{m}` the layer holding the shared block, `{h}` the visit, `{d}`
/// `mamba_decoder.` in the layers that run a block (`SharedBlocks::place`).
const ZAMBA2: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Embed, "model.embed_tokens", "token_embd"),
        m(AttnNorm, "model.layers.{b}.{d}input_layernorm", "blk.{b}.attn_norm"),
        m(SsmIn, "model.layers.{b}.{d}mamba.in_proj", "blk.{b}.ssm_in"),
        m(SsmConv, "model.layers.{b}.{d}mamba.conv1d", "blk.{b}.ssm_conv1d"),
        m(SsmNorm, "model.layers.{b}.{d}mamba.norm", "blk.{b}.ssm_norm"),
        m(SsmOut, "model.layers.{b}.{d}mamba.out_proj", "blk.{b}.ssm_out"),
        m(SharedNorm, "model.layers.{m}.shared_transformer.input_layernorm", "blk.{m}.shared_attn_norm"),
        m(Q, "model.layers.{m}.shared_transformer.self_attn.q_proj", "blk.{m}.shared_attn_q"),
        m(K, "model.layers.{m}.shared_transformer.self_attn.k_proj", "blk.{m}.shared_attn_k"),
        m(V, "model.layers.{m}.shared_transformer.self_attn.v_proj", "blk.{m}.shared_attn_v"),
        m(O, "model.layers.{m}.shared_transformer.self_attn.o_proj", "blk.{m}.shared_attn_output"),
        m(QAdapterA, "model.layers.{m}.shared_transformer.self_attn.linear_q_adapter_list.{h}.0", "blk.{b}.shared_attn_q_adapter_a"),
        m(QAdapterB, "model.layers.{m}.shared_transformer.self_attn.linear_q_adapter_list.{h}.1", "blk.{b}.shared_attn_q_adapter_b"),
        m(KAdapterA, "model.layers.{m}.shared_transformer.self_attn.linear_k_adapter_list.{h}.0", "blk.{b}.shared_attn_k_adapter_a"),
        m(KAdapterB, "model.layers.{m}.shared_transformer.self_attn.linear_k_adapter_list.{h}.1", "blk.{b}.shared_attn_k_adapter_b"),
        m(VAdapterA, "model.layers.{m}.shared_transformer.self_attn.linear_v_adapter_list.{h}.0", "blk.{b}.shared_attn_v_adapter_a"),
        m(VAdapterB, "model.layers.{m}.shared_transformer.self_attn.linear_v_adapter_list.{h}.1", "blk.{b}.shared_attn_v_adapter_b"),
        m(SharedFfnNorm, "model.layers.{m}.shared_transformer.pre_ff_layernorm", "blk.{m}.shared_ffn_norm"),
        m(GateUp, "model.layers.{m}.shared_transformer.feed_forward.gate_up_proj", "blk.{m}.shared_ffn_gate_up"),
        m(Gate, "model.layers.{m}.shared_transformer.feed_forward.gate_proj", "blk.{m}.shared_ffn_gate"),
        m(Up, "model.layers.{m}.shared_transformer.feed_forward.up_proj", "blk.{m}.shared_ffn_up"),
        m(Down, "model.layers.{m}.shared_transformer.feed_forward.down_proj", "blk.{m}.shared_ffn_down"),
        m(GateUpAdapterA, "model.layers.{m}.shared_transformer.feed_forward.gate_up_proj_adapter_list.{h}.0", "blk.{b}.shared_ffn_gate_up_adapter_a"),
        m(GateUpAdapterB, "model.layers.{m}.shared_transformer.feed_forward.gate_up_proj_adapter_list.{h}.1", "blk.{b}.shared_ffn_gate_up_adapter_b"),
        m(SharedLinear, "model.layers.{b}.linear", "blk.{b}.shared_linear"),
        m(FinalNorm, "model.final_layernorm", "output_norm"),
    ],
};

/// Llama's names with `block_sparse_moe.gate` and `experts.{e}.w1/w2/w3`.
const MIXTRAL: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Router, "model.layers.{b}.block_sparse_moe.gate", "blk.{b}.ffn_gate_inp"),
        m(ExpertGate, "model.layers.{b}.block_sparse_moe.experts.{e}.w1", "blk.{b}.ffn_gate_exps"),
        m(ExpertUp, "model.layers.{b}.block_sparse_moe.experts.{e}.w3", "blk.{b}.ffn_up_exps"),
        m(ExpertDown, "model.layers.{b}.block_sparse_moe.experts.{e}.w2", "blk.{b}.ffn_down_exps"),
    ],
};

/// Gemma 2's and 3's: Llama's names with a norm before and after each sublayer.
const SANDWICH: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(PostAttnNorm, "model.layers.{b}.post_attention_layernorm", "blk.{b}.post_attention_norm"),
        m(FfnNorm, "model.layers.{b}.pre_feedforward_layernorm", "blk.{b}.ffn_norm"),
        m(PostFfnNorm, "model.layers.{b}.post_feedforward_layernorm", "blk.{b}.post_ffw_norm"),
    ],
};

const GPT2: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Embed, "transformer.wte", "token_embd"),
        m(PosEmbed, "transformer.wpe", "position_embd"),
        m(AttnNorm, "transformer.h.{b}.ln_1", "blk.{b}.attn_norm"),
        m(Qkv, "transformer.h.{b}.attn.c_attn", "blk.{b}.attn_qkv"),
        m(O, "transformer.h.{b}.attn.c_proj", "blk.{b}.attn_output"),
        m(FfnNorm, "transformer.h.{b}.ln_2", "blk.{b}.ffn_norm"),
        m(Up, "transformer.h.{b}.mlp.c_fc", "blk.{b}.ffn_up"),
        m(Down, "transformer.h.{b}.mlp.c_proj", "blk.{b}.ffn_down"),
        m(FinalNorm, "transformer.ln_f", "output_norm"),
    ],
};

// BLT's stacks: Llama's names (each stack's module prefixed by `HfWrap::Module`), and
const BLT: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(CrossQ, "model.cross_attn_layers.{b}.q_proj", "blk.{b}.cross_attn_q"),
        m(CrossK, "model.cross_attn_layers.{b}.k_proj", "blk.{b}.cross_attn_k"),
        m(CrossV, "model.cross_attn_layers.{b}.v_proj", "blk.{b}.cross_attn_v"),
        m(CrossO, "model.cross_attn_layers.{b}.o_proj", "blk.{b}.cross_attn_o"),
        m(CrossQNorm, "model.cross_attn_layers.{b}.q_norm", "blk.{b}.cross_attn_q_norm"),
        m(CrossKNorm, "model.cross_attn_layers.{b}.k_norm", "blk.{b}.cross_attn_k_norm"),
        m(PatchProj, "model.patch_embedding_projection", "patch_proj"),
        m(TokenProj, "model.token_embedding_projection", "patch_in_proj"),
    ],
};

const HY_V3: Table = Table {
    parent: Some(&SHARED_MLP),
    rename: &[],
    rows: &[
        m(Router, "model.layers.{b}.mlp.router.gate", "blk.{b}.ffn_gate_inp"),
        bare(CorrectionBias, "model.layers.{b}.mlp.expert_bias", "blk.{b}.exp_probs_b.bias"),
    ],
};

const RWKV: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Embed, "rwkv.embeddings", "token_embd"),
        m(EmbedNorm, "rwkv.blocks.0.pre_ln", "token_embd_norm"),
        m(AttnNorm, "rwkv.blocks.{b}.ln1", "blk.{b}.attn_norm"),
        m(FfnNorm, "rwkv.blocks.{b}.ln2", "blk.{b}.attn_norm_2"),
        m(TmKey, "rwkv.blocks.{b}.attention.key", "blk.{b}.time_mix_key"),
        m(TmValue, "rwkv.blocks.{b}.attention.value", "blk.{b}.time_mix_value"),
        m(TmReceptance, "rwkv.blocks.{b}.attention.receptance", "blk.{b}.time_mix_receptance"),
        m(TmOutput, "rwkv.blocks.{b}.attention.output", "blk.{b}.time_mix_output"),
        m(Up, "rwkv.blocks.{b}.feed_forward.key", "blk.{b}.channel_mix_key"),
        m(Down, "rwkv.blocks.{b}.feed_forward.value", "blk.{b}.channel_mix_value"),
        m(CmReceptance, "rwkv.blocks.{b}.feed_forward.receptance", "blk.{b}.channel_mix_receptance"),
        m(FinalNorm, "rwkv.ln_out", "output_norm"),
        m(LmHead, "head", "output"),
    ],
};

const RECURRENT_GEMMA: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(AttnNorm, "model.layers.{b}.temporal_pre_norm", "blk.{b}.attn_norm"),
        m(FfnNorm, "model.layers.{b}.channel_pre_norm", "blk.{b}.ffn_norm"),
        m(Q, "model.layers.{b}.temporal_block.q_proj", "blk.{b}.attn_q"),
        m(K, "model.layers.{b}.temporal_block.k_proj", "blk.{b}.attn_k"),
        m(V, "model.layers.{b}.temporal_block.v_proj", "blk.{b}.attn_v"),
        m(O, "model.layers.{b}.temporal_block.o_proj", "blk.{b}.attn_output"),
        m(SsmIn, "model.layers.{b}.temporal_block.linear_x", "blk.{b}.ssm_x"),
        m(SsmZ, "model.layers.{b}.temporal_block.linear_y", "blk.{b}.ssm_y"),
        m(SsmConv, "model.layers.{b}.temporal_block.conv_1d", "blk.{b}.ssm_conv1d"),
        m(SsmOut, "model.layers.{b}.temporal_block.linear_out", "blk.{b}.ssm_out"),
        m(Gate, "model.layers.{b}.mlp_block.gate_proj", "blk.{b}.ffn_gate"),
        m(Up, "model.layers.{b}.mlp_block.up_proj", "blk.{b}.ffn_up"),
        m(Down, "model.layers.{b}.mlp_block.down_proj", "blk.{b}.ffn_down"),
        m(FinalNorm, "model.final_norm", "output_norm"),
    ],
};

const MINI_MAX: Table = Table {
    parent: Some(&MIXTRAL),
    rename: &[],
    rows: &[
        m(SsmIn, "model.layers.{b}.self_attn.qkv_proj", "blk.{b}.ssm_in"),
        m(SsmZ, "model.layers.{b}.self_attn.output_gate", "blk.{b}.ssm_gate"),
        m(SsmNorm, "model.layers.{b}.self_attn.norm", "blk.{b}.ssm_norm"),
        m(SsmOut, "model.layers.{b}.self_attn.out_proj", "blk.{b}.ssm_out"),
    ],
};

const GEMMA4: Table = Table {
    parent: Some(&SANDWICH),
    rename: &[],
    rows: &[
        m(Router, "model.layers.{b}.router.proj", "blk.{b}.ffn_gate_inp"),
        m(MlpPostNorm, "model.layers.{b}.post_feedforward_layernorm_1", "blk.{b}.post_ffw_norm_1"),
        m(ExpertsNorm, "model.layers.{b}.pre_feedforward_layernorm_2", "blk.{b}.pre_ffw_norm_2"),
        m(ExpertsPostNorm, "model.layers.{b}.post_feedforward_layernorm_2", "blk.{b}.post_ffw_norm_2"),
        bare(RouterScale, "model.layers.{b}.router.scale", "blk.{b}.ffn_gate_inp.scale"),
        bare(RouterExpertScale, "model.layers.{b}.router.per_expert_scale", "blk.{b}.ffn_down_exps.scale"),
        row(ExpertGateUp, "model.layers.{b}.experts.gate_up_proj", "blk.{b}.ffn_gate_up_exps", [End::Bare, End::Dot]),
        row(ExpertDown, "model.layers.{b}.experts.down_proj", "blk.{b}.ffn_down_exps", [End::Bare, End::Dot]),
    ],
};

const ZAYA: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Q, "model.layers.{b}.self_attn.qkv_proj.q_proj", "blk.{b}.attn_q"),
        m(K, "model.layers.{b}.self_attn.qkv_proj.k_proj", "blk.{b}.attn_k"),
        m(CcaVCurrent, "model.layers.{b}.self_attn.qkv_proj.v_proj_current", "blk.{b}.attn_v_current"),
        m(CcaVDelayed, "model.layers.{b}.self_attn.qkv_proj.v_proj_delayed", "blk.{b}.attn_v_delayed"),
        m(CcaConvDepthwise, "model.layers.{b}.self_attn.qkv_proj.conv_qk_depthwise", "blk.{b}.attn_qk_conv_depthwise"),
        m(CcaConvGrouped, "model.layers.{b}.self_attn.qkv_proj.conv_qk_grouped", "blk.{b}.attn_qk_conv_grouped"),
        m(RouterDown, "model.layers.{b}.mlp.gate.down_proj", "blk.{b}.ffn_router_down"),
        m(RouterNorm, "model.layers.{b}.mlp.gate.router_mlp.norm", "blk.{b}.ffn_router_norm"),
        m(RouterFc1, "model.layers.{b}.mlp.gate.router_mlp.fc1", "blk.{b}.ffn_router_fc1"),
        m(RouterFc2, "model.layers.{b}.mlp.gate.router_mlp.fc2", "blk.{b}.ffn_router_fc2"),
        m(Router, "model.layers.{b}.mlp.gate.router_mlp.out_proj", "blk.{b}.ffn_gate_inp"),
        row(ExpertGateUp, "model.layers.{b}.mlp.experts.gate_up_proj", "blk.{b}.ffn_gate_up_exps", [End::BiasOnly, End::Dot]),
        row(ExpertDown, "model.layers.{b}.mlp.experts.down_proj", "blk.{b}.ffn_down_exps", [End::BiasOnly, End::Dot]),
    ],
};

const DOTS3: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(AttnGate, "model.layers.{b}.self_attn.g_proj", "blk.{b}.attn_gate"),
    ],
};

const AXK2: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(AttnNorm, "model.layers.{b}.input_layernorm.norm", "blk.{b}.attn_norm"),
        m(AttnNormDown, "model.layers.{b}.input_layernorm.W_down", "blk.{b}.attn_norm_gate_down"),
        m(AttnNormUp, "model.layers.{b}.input_layernorm.W_up", "blk.{b}.attn_norm_gate_up"),
        m(GatedFfnNorm, "model.layers.{b}.post_attention_layernorm.norm", "blk.{b}.ffn_norm"),
        m(FfnNormDown, "model.layers.{b}.post_attention_layernorm.W_down", "blk.{b}.ffn_norm_gate_down"),
        m(FfnNormUp, "model.layers.{b}.post_attention_layernorm.W_up", "blk.{b}.ffn_norm_gate_up"),
    ],
};

const GEMMA3N: Table = Table {
    parent: Some(&SANDWICH),
    rename: &[],
    rows: &[
        m(AltUpRouterNorm, "model.layers.{b}.altup.router_norm", "blk.{b}.altup_router_norm"),
        m(AltUpRouter, "model.layers.{b}.altup.modality_router", "blk.{b}.altup_router"),
        m(AltUpPredict, "model.layers.{b}.altup.prediction_coefs", "blk.{b}.altup_predict_coef"),
        m(AltUpCorrect, "model.layers.{b}.altup.correction_coefs", "blk.{b}.altup_correct_coef"),
        m(LaurelLeft, "model.layers.{b}.laurel.linear_left", "blk.{b}.laurel_l"),
        m(LaurelRight, "model.layers.{b}.laurel.linear_right", "blk.{b}.laurel_r"),
        m(LaurelNorm, "model.layers.{b}.laurel.post_laurel_norm", "blk.{b}.laurel_post_norm"),
        m(AltUpProj, "model.altup_projections.{e}", "altup_proj"),
        m(AltUpUnembed, "model.altup_unembed_projections.{e}", "altup_unembd_proj"),
    ],
};

const OPT: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Embed, "model.decoder.embed_tokens", "token_embd"),
        m(EmbedProjIn, "model.decoder.project_in", "token_embd_proj"),
        m(EmbedProjOut, "model.decoder.project_out", "output_proj"),
        m(PosEmbed, "model.decoder.embed_positions", "position_embd"),
        m(AttnNorm, "model.decoder.layers.{b}.self_attn_layer_norm", "blk.{b}.attn_norm"),
        m(Q, "model.decoder.layers.{b}.self_attn.q_proj", "blk.{b}.attn_q"),
        m(K, "model.decoder.layers.{b}.self_attn.k_proj", "blk.{b}.attn_k"),
        m(V, "model.decoder.layers.{b}.self_attn.v_proj", "blk.{b}.attn_v"),
        m(O, "model.decoder.layers.{b}.self_attn.out_proj", "blk.{b}.attn_output"),
        m(FfnNorm, "model.decoder.layers.{b}.final_layer_norm", "blk.{b}.ffn_norm"),
        m(Up, "model.decoder.layers.{b}.fc1", "blk.{b}.ffn_up"),
        m(Down, "model.decoder.layers.{b}.fc2", "blk.{b}.ffn_down"),
        m(FinalNorm, "model.decoder.final_layer_norm", "output_norm"),
    ],
};

const GPT_NEO: Table = Table {
    parent: Some(&GPT2),
    rename: &[],
    rows: &[
        m(Q, "transformer.h.{b}.attn.attention.q_proj", "blk.{b}.attn_q"),
        m(K, "transformer.h.{b}.attn.attention.k_proj", "blk.{b}.attn_k"),
        m(V, "transformer.h.{b}.attn.attention.v_proj", "blk.{b}.attn_v"),
        m(O, "transformer.h.{b}.attn.attention.out_proj", "blk.{b}.attn_output"),
    ],
};

const PHI: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(O, "model.layers.{b}.self_attn.dense", "blk.{b}.attn_output"),
        m(Up, "model.layers.{b}.mlp.fc1", "blk.{b}.ffn_up"),
        m(Down, "model.layers.{b}.mlp.fc2", "blk.{b}.ffn_down"),
        m(QNorm, "model.layers.{b}.self_attn.q_layernorm", "blk.{b}.attn_q_norm"),
        m(KNorm, "model.layers.{b}.self_attn.k_layernorm", "blk.{b}.attn_k_norm"),
        m(FinalNorm, "model.final_layernorm", "output_norm"),
    ],
};

const GPT_NEOX: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Embed, "gpt_neox.embed_in", "token_embd"),
        m(AttnNorm, "gpt_neox.layers.{b}.input_layernorm", "blk.{b}.attn_norm"),
        m(Qkv, "gpt_neox.layers.{b}.attention.query_key_value", "blk.{b}.attn_qkv"),
        m(O, "gpt_neox.layers.{b}.attention.dense", "blk.{b}.attn_output"),
        m(FfnNorm, "gpt_neox.layers.{b}.post_attention_layernorm", "blk.{b}.ffn_norm"),
        m(Up, "gpt_neox.layers.{b}.mlp.dense_h_to_4h", "blk.{b}.ffn_up"),
        m(Down, "gpt_neox.layers.{b}.mlp.dense_4h_to_h", "blk.{b}.ffn_down"),
        m(FinalNorm, "gpt_neox.final_layer_norm", "output_norm"),
        m(LmHead, "embed_out", "output"),
    ],
};

const GPT_NEOX_JAPANESE: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Embed, "gpt_neox_japanese.embed_in", "token_embd"),
        m(AttnNorm, "gpt_neox_japanese.layers.{b}.input_layernorm", "blk.{b}.attn_norm"),
        m(Qkv, "gpt_neox_japanese.layers.{b}.attention.query_key_value", "blk.{b}.attn_qkv"),
        m(O, "gpt_neox_japanese.layers.{b}.attention.dense", "blk.{b}.attn_output"),
        m(FfnNorm, "gpt_neox_japanese.layers.{b}.post_attention_layernorm", "blk.{b}.ffn_norm"),
        m(Up, "gpt_neox_japanese.layers.{b}.mlp.dense_h_to_4h", "blk.{b}.ffn_up"),
        m(Down, "gpt_neox_japanese.layers.{b}.mlp.dense_4h_to_h", "blk.{b}.ffn_down"),
        m(FinalNorm, "gpt_neox_japanese.final_layer_norm", "output_norm"),
        m(LmHead, "embed_out", "output"),
        bare(DenseBias, "gpt_neox_japanese.layers.{b}.attention.dense_bias", "blk.{b}.attn_output.bias"),
    ],
};

const HUN_YUAN: Table = Table {
    parent: Some(&SHARED_MLP),
    rename: &[],
    rows: &[
        m(QNorm, "model.layers.{b}.self_attn.query_layernorm", "blk.{b}.attn_q_norm"),
        m(KNorm, "model.layers.{b}.self_attn.key_layernorm", "blk.{b}.attn_k_norm"),
        m(Router, "model.layers.{b}.mlp.gate.wg", "blk.{b}.ffn_gate_inp"),
    ],
};

const APERTUS: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(AttnNorm, "model.layers.{b}.attention_layernorm", "blk.{b}.attn_norm"),
        m(FfnNorm, "model.layers.{b}.feedforward_layernorm", "blk.{b}.ffn_norm"),
    ],
};

const BLOOM: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Embed, "transformer.word_embeddings", "token_embd"),
        m(EmbedNorm, "transformer.word_embeddings_layernorm", "token_embd_norm"),
        m(AttnNorm, "transformer.h.{b}.input_layernorm", "blk.{b}.attn_norm"),
        m(Qkv, "transformer.h.{b}.self_attention.query_key_value", "blk.{b}.attn_qkv"),
        m(O, "transformer.h.{b}.self_attention.dense", "blk.{b}.attn_output"),
        m(FfnNorm, "transformer.h.{b}.post_attention_layernorm", "blk.{b}.ffn_norm"),
        m(Up, "transformer.h.{b}.mlp.dense_h_to_4h", "blk.{b}.ffn_up"),
        m(Down, "transformer.h.{b}.mlp.dense_4h_to_h", "blk.{b}.ffn_down"),
        m(FinalNorm, "transformer.ln_f", "output_norm"),
    ],
};

const NANO_CHAT: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Up, "model.layers.{b}.mlp.fc1", "blk.{b}.ffn_up"),
        m(Down, "model.layers.{b}.mlp.fc2", "blk.{b}.ffn_down"),
    ],
};

const MODERN_BERT_DECODER: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Embed, "model.embeddings.tok_embeddings", "token_embd"),
        m(EmbedNorm, "model.embeddings.norm", "token_embd_norm"),
        m(AttnNorm, "model.layers.{b}.attn_norm", "blk.{b}.attn_norm"),
        m(Q, "model.layers.{b}.attn.q_proj", "blk.{b}.attn_q"),
        m(K, "model.layers.{b}.attn.k_proj", "blk.{b}.attn_k"),
        m(V, "model.layers.{b}.attn.v_proj", "blk.{b}.attn_v"),
        m(O, "model.layers.{b}.attn.Wo", "blk.{b}.attn_output"),
        m(FfnNorm, "model.layers.{b}.mlp_norm", "blk.{b}.ffn_norm"),
        m(GateUp, "model.layers.{b}.mlp.Wi", "blk.{b}.ffn_up"),
        m(Down, "model.layers.{b}.mlp.Wo", "blk.{b}.ffn_down"),
        m(FinalNorm, "model.final_norm", "output_norm"),
        m(LmHead, "decoder", "output"),
    ],
};

const CTRL: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Embed, "transformer.w", "token_embd"),
        m(AttnNorm, "transformer.h.{b}.layernorm1", "blk.{b}.attn_norm"),
        m(Q, "transformer.h.{b}.multi_head_attention.Wq", "blk.{b}.attn_q"),
        m(K, "transformer.h.{b}.multi_head_attention.Wk", "blk.{b}.attn_k"),
        m(V, "transformer.h.{b}.multi_head_attention.Wv", "blk.{b}.attn_v"),
        m(O, "transformer.h.{b}.multi_head_attention.dense", "blk.{b}.attn_output"),
        m(FfnNorm, "transformer.h.{b}.layernorm2", "blk.{b}.ffn_norm"),
        m(Up, "transformer.h.{b}.ffn.0", "blk.{b}.ffn_up"),
        m(Down, "transformer.h.{b}.ffn.2", "blk.{b}.ffn_down"),
        m(FinalNorm, "transformer.layernorm", "output_norm"),
    ],
};

const STABLE_LM: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(QNorm, "model.layers.{b}.self_attn.q_layernorm.norms.{e}", "blk.{b}.attn_q_norm"),
        m(KNorm, "model.layers.{b}.self_attn.k_layernorm.norms.{e}", "blk.{b}.attn_k_norm"),
    ],
};

const INKLING: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(EmbedNorm, "model.embed_tokens.embed_norm", "token_embd_norm"),
        bare(RelBank, "model.layers.{b}.self_attn.rel_logits_proj.proj", "blk.{b}.attn_rel_bank"),
        bare(MlpScalar, "model.layers.{b}.mlp.global_scale", "blk.{b}.ffn_scale"),
        bare(RouterScalar, "model.layers.{b}.mlp.gate.global_scale", "blk.{b}.ffn_gate_inp_scale"),
        bare(SharedGate, "model.layers.{b}.mlp.shared_experts.gate_proj", "blk.{b}.ffn_gate_shexp.weight"),
        bare(SharedUp, "model.layers.{b}.mlp.shared_experts.up_proj", "blk.{b}.ffn_up_shexp.weight"),
        bare(SharedDown, "model.layers.{b}.mlp.shared_experts.down_proj", "blk.{b}.ffn_down_shexp.weight"),
        row(ExpertGateUp, "model.layers.{b}.mlp.experts.gate_up_proj", "blk.{b}.ffn_gate_up_exps", [End::BiasOnly, End::Dot]),
        row(ExpertDown, "model.layers.{b}.mlp.experts.down_proj", "blk.{b}.ffn_down_exps", [End::BiasOnly, End::Dot]),
    ],
};

const CPM_ANT: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Embed, "cpmant.input_embedding", "token_embd"),
        m(SegmentEmbed, "cpmant.segment_embedding", "token_types"),
        m(AttnNorm, "cpmant.encoder.layers.{b}.self_att.layernorm_before_attention", "blk.{b}.attn_norm"),
        m(Q, "cpmant.encoder.layers.{b}.self_att.self_attention.project_q", "blk.{b}.attn_q"),
        m(K, "cpmant.encoder.layers.{b}.self_att.self_attention.project_k", "blk.{b}.attn_k"),
        m(V, "cpmant.encoder.layers.{b}.self_att.self_attention.project_v", "blk.{b}.attn_v"),
        m(O, "cpmant.encoder.layers.{b}.self_att.self_attention.attention_out", "blk.{b}.attn_output"),
        m(FfnNorm, "cpmant.encoder.layers.{b}.ffn.layernorm_before_ffn", "blk.{b}.ffn_norm"),
        m(Gate, "cpmant.encoder.layers.{b}.ffn.ffn.w_in.w_0", "blk.{b}.ffn_gate"),
        m(Up, "cpmant.encoder.layers.{b}.ffn.ffn.w_in.w_1", "blk.{b}.ffn_up"),
        m(Down, "cpmant.encoder.layers.{b}.ffn.ffn.w_out", "blk.{b}.ffn_down"),
        m(FinalNorm, "cpmant.encoder.output_layernorm", "output_norm"),
    ],
};

const XGLM: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(AttnNorm, "model.layers.{b}.self_attn_layer_norm", "blk.{b}.attn_norm"),
        m(O, "model.layers.{b}.self_attn.out_proj", "blk.{b}.attn_output"),
        m(FfnNorm, "model.layers.{b}.final_layer_norm", "blk.{b}.ffn_norm"),
        m(Up, "model.layers.{b}.fc1", "blk.{b}.ffn_up"),
        m(Down, "model.layers.{b}.fc2", "blk.{b}.ffn_down"),
        m(FinalNorm, "model.layer_norm", "output_norm"),
    ],
};

const BIO_GPT: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Embed, "biogpt.embed_tokens", "token_embd"),
        m(PosEmbed, "biogpt.embed_positions", "position_embd"),
        m(AttnNorm, "biogpt.layers.{b}.self_attn_layer_norm", "blk.{b}.attn_norm"),
        m(Q, "biogpt.layers.{b}.self_attn.q_proj", "blk.{b}.attn_q"),
        m(K, "biogpt.layers.{b}.self_attn.k_proj", "blk.{b}.attn_k"),
        m(V, "biogpt.layers.{b}.self_attn.v_proj", "blk.{b}.attn_v"),
        m(O, "biogpt.layers.{b}.self_attn.out_proj", "blk.{b}.attn_output"),
        m(FfnNorm, "biogpt.layers.{b}.final_layer_norm", "blk.{b}.ffn_norm"),
        m(Up, "biogpt.layers.{b}.fc1", "blk.{b}.ffn_up"),
        m(Down, "biogpt.layers.{b}.fc2", "blk.{b}.ffn_down"),
        m(FinalNorm, "biogpt.layer_norm", "output_norm"),
        m(LmHead, "output_projection", "output"),
    ],
};

const MPT: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Embed, "transformer.wte", "token_embd"),
        m(AttnNorm, "transformer.blocks.{b}.norm_1", "blk.{b}.attn_norm"),
        m(Qkv, "transformer.blocks.{b}.attn.Wqkv", "blk.{b}.attn_qkv"),
        m(O, "transformer.blocks.{b}.attn.out_proj", "blk.{b}.attn_output"),
        m(FfnNorm, "transformer.blocks.{b}.norm_2", "blk.{b}.ffn_norm"),
        m(Up, "transformer.blocks.{b}.ffn.up_proj", "blk.{b}.ffn_up"),
        m(Down, "transformer.blocks.{b}.ffn.down_proj", "blk.{b}.ffn_down"),
        m(FinalNorm, "transformer.norm_f", "output_norm"),
    ],
};

const HYPER_CLOVAX: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(PostAttnNorm, "model.layers.{b}.post_norm1", "blk.{b}.post_attention_norm"),
        m(PostFfnNorm, "model.layers.{b}.post_norm2", "blk.{b}.post_ffw_norm"),
    ],
};

const OPEN_AI_GPT: Table = Table {
    parent: Some(&GPT2),
    rename: &[],
    rows: &[
        m(Embed, "transformer.tokens_embed", "token_embd"),
        m(PosEmbed, "transformer.positions_embed", "position_embd"),
    ],
};

const GIT: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Embed, "git.embeddings.word_embeddings", "token_embd"),
        m(PosEmbed, "git.embeddings.position_embeddings", "position_embd"),
        m(EmbedNorm, "git.embeddings.LayerNorm", "token_embd_norm"),
        m(Q, "git.encoder.layer.{b}.attention.self.query", "blk.{b}.attn_q"),
        m(K, "git.encoder.layer.{b}.attention.self.key", "blk.{b}.attn_k"),
        m(V, "git.encoder.layer.{b}.attention.self.value", "blk.{b}.attn_v"),
        m(O, "git.encoder.layer.{b}.attention.output.dense", "blk.{b}.attn_output"),
        m(AttnNorm, "git.encoder.layer.{b}.attention.output.LayerNorm", "blk.{b}.attn_output_norm"),
        m(Up, "git.encoder.layer.{b}.intermediate.dense", "blk.{b}.ffn_up"),
        m(Down, "git.encoder.layer.{b}.output.dense", "blk.{b}.ffn_down"),
        m(FfnNorm, "git.encoder.layer.{b}.output.LayerNorm", "blk.{b}.layer_output_norm"),
        m(LmHead, "output", "output"),
    ],
};

const CODE_GEN: Table = Table {
    parent: Some(&GPTJ),
    rename: &[],
    rows: &[
        m(Qkv, "transformer.h.{b}.attn.qkv_proj", "blk.{b}.attn_qkv"),
    ],
};

const PERSIMMON: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Qkv, "model.layers.{b}.self_attn.query_key_value", "blk.{b}.attn_qkv"),
        m(O, "model.layers.{b}.self_attn.dense", "blk.{b}.attn_output"),
        m(QNorm, "model.layers.{b}.self_attn.q_layernorm", "blk.{b}.attn_q_norm"),
        m(KNorm, "model.layers.{b}.self_attn.k_layernorm", "blk.{b}.attn_k_norm"),
        m(Up, "model.layers.{b}.mlp.dense_h_to_4h", "blk.{b}.ffn_up"),
        m(Down, "model.layers.{b}.mlp.dense_4h_to_h", "blk.{b}.ffn_down"),
        m(FinalNorm, "model.final_layernorm", "output_norm"),
    ],
};

const SARVAM: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Embed, "model.word_embeddings", "token_embd"),
        m(Qkv, "model.layers.{b}.attention.query_key_value", "blk.{b}.attn_qkv"),
        m(O, "model.layers.{b}.attention.dense", "blk.{b}.attn_output"),
        m(QNorm, "model.layers.{b}.attention.query_layernorm", "blk.{b}.attn_q_norm"),
        m(KNorm, "model.layers.{b}.attention.key_layernorm", "blk.{b}.attn_k_norm"),
        bare(CorrectionBias, "model.layers.{b}.mlp.gate.expert_bias", "blk.{b}.exp_probs_b.bias"),
    ],
};

const GRANITE_MOE_SWA: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Router, "model.layers.{b}.block_sparse_moe.router", "blk.{b}.ffn_gate_inp"),
        m(SharedGateUp, "model.layers.{b}.shared_mlp.input_linear", "blk.{b}.ffn_gate_up_shexp"),
        m(SharedDown, "model.layers.{b}.shared_mlp.output_linear", "blk.{b}.ffn_down_shexp"),
        row(ExpertGateUp, "model.layers.{b}.block_sparse_moe.experts.gate_up_proj", "blk.{b}.ffn_gate_up_exps", [End::BiasOnly, End::Dot]),
        row(ExpertDown, "model.layers.{b}.block_sparse_moe.experts.down_proj", "blk.{b}.ffn_down_exps", [End::BiasOnly, End::Dot]),
    ],
};

const BAMBA: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(FfnNorm, "model.layers.{b}.pre_ff_layernorm", "blk.{b}.ffn_norm"),
        m(Router, "model.layers.{b}.feed_forward.router", "blk.{b}.ffn_gate_inp"),
        m(ExpertGate, "model.layers.{b}.feed_forward.experts.{e}.gate_proj", "blk.{b}.ffn_gate_exps"),
        m(ExpertUp, "model.layers.{b}.feed_forward.experts.{e}.up_proj", "blk.{b}.ffn_up_exps"),
        m(ExpertDown, "model.layers.{b}.feed_forward.experts.{e}.down_proj", "blk.{b}.ffn_down_exps"),
        m(Gate, "model.layers.{b}.feed_forward.gate_proj", "blk.{b}.ffn_gate"),
        m(Up, "model.layers.{b}.feed_forward.up_proj", "blk.{b}.ffn_up"),
        m(Down, "model.layers.{b}.feed_forward.down_proj", "blk.{b}.ffn_down"),
        m(FinalNorm, "model.final_layernorm", "output_norm"),
    ],
};

/// LFM3: LFM2's names, with Llama's for the attention's norms, output and gate, and its
/// own norms after each sublayer.
const LFM3: Table = Table {
    parent: Some(&LFM2),
    rename: &[],
    rows: &[
        m(PostAttnNorm, "model.layers.{b}.post_operator_norm", "blk.{b}.post_attention_norm"),
        m(PostFfnNorm, "model.layers.{b}.post_ffn_norm", "blk.{b}.post_ffw_norm"),
        m(O, "model.layers.{b}.self_attn.o_proj", "blk.{b}.attn_output"),
        m(QNorm, "model.layers.{b}.self_attn.q_norm", "blk.{b}.attn_q_norm"),
        m(KNorm, "model.layers.{b}.self_attn.k_norm", "blk.{b}.attn_k_norm"),
        m(AttnGate, "model.layers.{b}.self_attn.gate_proj", "blk.{b}.attn_gate"),
    ],
};

const LFM2: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(AttnNorm, "model.layers.{b}.operator_norm", "blk.{b}.attn_norm"),
        m(QNorm, "model.layers.{b}.self_attn.q_layernorm", "blk.{b}.attn_q_norm"),
        m(KNorm, "model.layers.{b}.self_attn.k_layernorm", "blk.{b}.attn_k_norm"),
        m(O, "model.layers.{b}.self_attn.out_proj", "blk.{b}.attn_output"),
        m(SsmIn, "model.layers.{b}.conv.in_proj", "blk.{b}.shortconv.in_proj"),
        m(SsmConv, "model.layers.{b}.conv.conv", "blk.{b}.shortconv.conv"),
        m(SsmOut, "model.layers.{b}.conv.out_proj", "blk.{b}.shortconv.out_proj"),
        m(FfnNorm, "model.layers.{b}.ffn_norm", "blk.{b}.ffn_norm"),
        m(Gate, "model.layers.{b}.feed_forward.w1", "blk.{b}.ffn_gate"),
        m(Up, "model.layers.{b}.feed_forward.w3", "blk.{b}.ffn_up"),
        m(Down, "model.layers.{b}.feed_forward.w2", "blk.{b}.ffn_down"),
        m(FinalNorm, "model.embedding_norm", "token_embd_norm"),
        m(Router, "model.layers.{b}.feed_forward.gate", "blk.{b}.ffn_gate_inp"),
        m(ExpertGate, "model.layers.{b}.feed_forward.experts.{e}.w1", "blk.{b}.ffn_gate_exps"),
        m(ExpertUp, "model.layers.{b}.feed_forward.experts.{e}.w3", "blk.{b}.ffn_up_exps"),
        m(ExpertDown, "model.layers.{b}.feed_forward.experts.{e}.w2", "blk.{b}.ffn_down_exps"),
        bare(CorrectionBias, "model.layers.{b}.feed_forward.expert_bias", "blk.{b}.exp_probs_b.bias"),
    ],
};

const NEMOTRON_H: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Embed, "backbone.embeddings", "token_embd"),
        m(AttnNorm, "backbone.layers.{b}.norm", "blk.{b}.attn_norm"),
        m(FfnNorm, "backbone.layers.{b}.norm", "blk.{b}.attn_norm"),
        m(SsmIn, "backbone.layers.{b}.mixer.in_proj", "blk.{b}.ssm_in"),
        m(SsmConv, "backbone.layers.{b}.mixer.conv1d", "blk.{b}.ssm_conv1d"),
        m(SsmNorm, "backbone.layers.{b}.mixer.norm", "blk.{b}.ssm_norm"),
        m(SsmOut, "backbone.layers.{b}.mixer.out_proj", "blk.{b}.ssm_out"),
        m(Q, "backbone.layers.{b}.mixer.q_proj", "blk.{b}.attn_q"),
        m(K, "backbone.layers.{b}.mixer.k_proj", "blk.{b}.attn_k"),
        m(V, "backbone.layers.{b}.mixer.v_proj", "blk.{b}.attn_v"),
        m(O, "backbone.layers.{b}.mixer.o_proj", "blk.{b}.attn_output"),
        m(Up, "backbone.layers.{b}.mixer.up_proj", "blk.{b}.ffn_up"),
        m(Down, "backbone.layers.{b}.mixer.down_proj", "blk.{b}.ffn_down"),
        m(Router, "backbone.layers.{b}.mixer.gate", "blk.{b}.ffn_gate_inp"),
        m(ExpertUp, "backbone.layers.{b}.mixer.experts.{e}.up_proj", "blk.{b}.ffn_up_exps"),
        m(ExpertDown, "backbone.layers.{b}.mixer.experts.{e}.down_proj", "blk.{b}.ffn_down_exps"),
        m(SharedUp, "backbone.layers.{b}.mixer.shared_experts.up_proj", "blk.{b}.ffn_up_shexp"),
        m(SharedDown, "backbone.layers.{b}.mixer.shared_experts.down_proj", "blk.{b}.ffn_down_shexp"),
        m(FinalNorm, "backbone.norm_f", "output_norm"),
        bare(CorrectionBias, "backbone.layers.{b}.mixer.gate.e_score_correction_bias", "blk.{b}.exp_probs_b.bias"),
    ],
};

const XLSTM: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Embed, "backbone.embeddings", "token_embd"),
        m(AttnNorm, "backbone.blocks.{b}.norm_mlstm", "blk.{b}.attn_norm"),
        m(SsmQ, "backbone.blocks.{b}.mlstm_layer.q", "blk.{b}.attn_q"),
        m(SsmK, "backbone.blocks.{b}.mlstm_layer.k", "blk.{b}.attn_k"),
        m(SsmV, "backbone.blocks.{b}.mlstm_layer.v", "blk.{b}.attn_v"),
        m(SsmZ, "backbone.blocks.{b}.mlstm_layer.ogate_preact", "blk.{b}.attn_gate"),
        m(SsmBeta, "backbone.blocks.{b}.mlstm_layer.igate_preact", "blk.{b}.attn_igate"),
        m(SsmAlpha, "backbone.blocks.{b}.mlstm_layer.fgate_preact", "blk.{b}.attn_fgate"),
        m(SsmIn, "backbone.blocks.{b}.mlstm_layer.qkv_opreact", "blk.{b}.attn_qkvo"),
        m(SsmBa, "backbone.blocks.{b}.mlstm_layer.ifgate_preact", "blk.{b}.attn_ifgate"),
        m(GateUp, "backbone.blocks.{b}.ffn.proj_up_gate_z", "blk.{b}.ffn_gate_up"),
        m(SsmNorm, "backbone.blocks.{b}.mlstm_layer.multihead_norm", "blk.{b}.attn_norm_2"),
        m(SsmOut, "backbone.blocks.{b}.mlstm_layer.out_proj", "blk.{b}.attn_output"),
        m(FfnNorm, "backbone.blocks.{b}.norm_ffn", "blk.{b}.ffn_norm"),
        m(Gate, "backbone.blocks.{b}.ffn.proj_up_gate", "blk.{b}.ffn_gate"),
        m(Up, "backbone.blocks.{b}.ffn.proj_up", "blk.{b}.ffn_up"),
        m(Down, "backbone.blocks.{b}.ffn.proj_down", "blk.{b}.ffn_down"),
        m(FinalNorm, "backbone.out_norm", "output_norm"),
    ],
};

const MAMBA2: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Embed, "backbone.embeddings", "token_embd"),
        m(AttnNorm, "backbone.layers.{b}.norm", "blk.{b}.attn_norm"),
        m(SsmIn, "backbone.layers.{b}.mixer.in_proj", "blk.{b}.ssm_in"),
        m(SsmConv, "backbone.layers.{b}.mixer.conv1d", "blk.{b}.ssm_conv1d"),
        m(SsmNorm, "backbone.layers.{b}.mixer.norm", "blk.{b}.ssm_norm"),
        m(SsmOut, "backbone.layers.{b}.mixer.out_proj", "blk.{b}.ssm_out"),
        m(SsmX, "backbone.layers.{b}.mixer.x_proj", "blk.{b}.ssm_x"),
        m(SsmDt, "backbone.layers.{b}.mixer.dt_proj", "blk.{b}.ssm_dt"),
        m(FinalNorm, "backbone.norm_f", "output_norm"),
    ],
};

const DBRX: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Embed, "transformer.wte", "token_embd"),
        m(AttnNorm, "transformer.blocks.{b}.norm_attn_norm.norm_1", "blk.{b}.attn_norm"),
        m(Qkv, "transformer.blocks.{b}.norm_attn_norm.attn.Wqkv", "blk.{b}.attn_qkv"),
        m(O, "transformer.blocks.{b}.norm_attn_norm.attn.out_proj", "blk.{b}.attn_output"),
        m(FfnNorm, "transformer.blocks.{b}.norm_attn_norm.norm_2", "blk.{b}.attn_output_norm"),
        m(Router, "transformer.blocks.{b}.ffn.router.layer", "blk.{b}.ffn_gate_inp"),
        m(FinalNorm, "transformer.norm_f", "output_norm"),
        row(ExpertGate, "transformer.blocks.{b}.ffn.experts.mlp.w1", "blk.{b}.ffn_gate_exps", [End::Bare, End::Dot]),
        row(ExpertUp, "transformer.blocks.{b}.ffn.experts.mlp.v1", "blk.{b}.ffn_up_exps", [End::Bare, End::Dot]),
        row(ExpertDown, "transformer.blocks.{b}.ffn.experts.mlp.w2", "blk.{b}.ffn_down_exps", [End::Bare, End::Dot]),
    ],
};

const JET_MOE: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Router, "model.layers.{b}.mlp.router.layer", "blk.{b}.ffn_gate_inp"),
        m(ExpertGateUp, "model.layers.{b}.mlp.input_linear", "blk.{b}.ffn_gate_up_exps"),
        m(ExpertDown, "model.layers.{b}.mlp.output_linear", "blk.{b}.ffn_down_exps"),
    ],
};

const GRANITE_MOE: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Router, "model.layers.{b}.block_sparse_moe.router.layer", "blk.{b}.ffn_gate_inp"),
        m(ExpertGateUp, "model.layers.{b}.block_sparse_moe.input_linear", "blk.{b}.ffn_gate_up_exps"),
        m(ExpertDown, "model.layers.{b}.block_sparse_moe.output_linear", "blk.{b}.ffn_down_exps"),
        m(SharedGateUp, "model.layers.{b}.shared_mlp.input_linear", "blk.{b}.ffn_gate_up_shexp"),
        m(SharedDown, "model.layers.{b}.shared_mlp.output_linear", "blk.{b}.ffn_down_shexp"),
    ],
};

const KIMI_LINEAR: Table = Table {
    parent: Some(&MIXTRAL),
    rename: &[],
    rows: &[
        m(SsmBeta, "model.layers.{b}.self_attn.b_proj", "blk.{b}.ssm_beta"),
        m(SsmNorm, "model.layers.{b}.self_attn.o_norm", "blk.{b}.ssm_norm"),
        m(SsmOut, "model.layers.{b}.self_attn.o_proj", "blk.{b}.ssm_out"),
        m(Gate, "model.layers.{b}.block_sparse_moe.gate_proj", "blk.{b}.ffn_gate"),
        m(Up, "model.layers.{b}.block_sparse_moe.up_proj", "blk.{b}.ffn_up"),
        m(Down, "model.layers.{b}.block_sparse_moe.down_proj", "blk.{b}.ffn_down"),
        m(SharedGate, "model.layers.{b}.block_sparse_moe.shared_experts.gate_proj", "blk.{b}.ffn_gate_shexp"),
        m(SharedUp, "model.layers.{b}.block_sparse_moe.shared_experts.up_proj", "blk.{b}.ffn_up_shexp"),
        m(SharedDown, "model.layers.{b}.block_sparse_moe.shared_experts.down_proj", "blk.{b}.ffn_down_shexp"),
        bare(CorrectionBias, "model.layers.{b}.block_sparse_moe.gate.e_score_correction_bias", "blk.{b}.exp_probs_b.bias"),
    ],
};

const BAILING: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Embed, "model.word_embeddings", "token_embd"),
        m(Q, "model.layers.{b}.attention.q_proj", "blk.{b}.attn_q"),
        m(SsmQ, "model.layers.{b}.attention.q_proj", "blk.{b}.attn_q"),
        m(SsmK, "model.layers.{b}.attention.k_proj", "blk.{b}.attn_k"),
        m(SsmV, "model.layers.{b}.attention.v_proj", "blk.{b}.attn_v"),
        m(QA, "model.layers.{b}.attention.q_a_proj", "blk.{b}.attn_q_a"),
        m(QANorm, "model.layers.{b}.attention.q_a_layernorm", "blk.{b}.attn_q_a_norm"),
        m(QB, "model.layers.{b}.attention.q_b_proj", "blk.{b}.attn_q_b"),
        m(KvA, "model.layers.{b}.attention.kv_a_proj_with_mqa", "blk.{b}.attn_kv_a_mqa"),
        m(KvANorm, "model.layers.{b}.attention.kv_a_layernorm", "blk.{b}.attn_kv_a_norm"),
        m(KvB, "model.layers.{b}.attention.kv_b_proj", "blk.{b}.attn_kv_b"),
        m(O, "model.layers.{b}.attention.dense", "blk.{b}.attn_output"),
        m(SsmOut, "model.layers.{b}.attention.dense", "blk.{b}.attn_output"),
        m(AttnGate, "model.layers.{b}.attention.g_proj", "blk.{b}.attn_gate"),
        m(SsmGB, "model.layers.{b}.attention.g_proj", "blk.{b}.attn_gate"),
        m(SsmConvQ, "model.layers.{b}.attention.q_conv1d", "blk.{b}.ssm_conv1d_q"),
        m(SsmConvK, "model.layers.{b}.attention.k_conv1d", "blk.{b}.ssm_conv1d_k"),
        m(SsmConvV, "model.layers.{b}.attention.v_conv1d", "blk.{b}.ssm_conv1d_v"),
        m(SsmFB, "model.layers.{b}.attention.f_proj", "blk.{b}.ssm_f"),
        m(SsmBeta, "model.layers.{b}.attention.b_proj", "blk.{b}.ssm_beta"),
        m(SsmNorm, "model.layers.{b}.attention.o_norm", "blk.{b}.ssm_norm"),
        bare(CorrectionBias, "model.layers.{b}.mlp.gate.expert_bias", "blk.{b}.exp_probs_b.bias"),
    ],
};

const FALCON_H1: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(FfnNorm, "model.layers.{b}.pre_ff_layernorm", "blk.{b}.ffn_norm"),
        m(Gate, "model.layers.{b}.feed_forward.gate_proj", "blk.{b}.ffn_gate"),
        m(Up, "model.layers.{b}.feed_forward.up_proj", "blk.{b}.ffn_up"),
        m(Down, "model.layers.{b}.feed_forward.down_proj", "blk.{b}.ffn_down"),
        m(FinalNorm, "model.final_layernorm", "output_norm"),
    ],
};

const OLMO_HYBRID: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(AttnNorm, "model.layers.{b}.attention_layer_norm", "blk.{b}.attn_norm"),
        m(FfnNorm, "model.layers.{b}.feedforward_layer_norm", "blk.{b}.ffn_norm"),
        m(PostAttnNorm, "model.layers.{b}.feedforward_layer_norm", "blk.{b}.ffn_norm"),
        m(PostFfnNorm, "model.layers.{b}.post_feedforward_layernorm", "blk.{b}.post_ffw_norm"),
        m(SsmQ, "model.layers.{b}.linear_attn.q_proj", "blk.{b}.ssm_q"),
        m(SsmK, "model.layers.{b}.linear_attn.k_proj", "blk.{b}.ssm_k"),
        m(SsmV, "model.layers.{b}.linear_attn.v_proj", "blk.{b}.ssm_v"),
        m(SsmConvQ, "model.layers.{b}.linear_attn.q_conv1d", "blk.{b}.ssm_conv1d_q"),
        m(SsmConvK, "model.layers.{b}.linear_attn.k_conv1d", "blk.{b}.ssm_conv1d_k"),
        m(SsmConvV, "model.layers.{b}.linear_attn.v_conv1d", "blk.{b}.ssm_conv1d_v"),
        m(SsmZ, "model.layers.{b}.linear_attn.g_proj", "blk.{b}.ssm_gate"),
        m(SsmBeta, "model.layers.{b}.linear_attn.b_proj", "blk.{b}.ssm_beta"),
        m(SsmAlpha, "model.layers.{b}.linear_attn.a_proj", "blk.{b}.ssm_alpha"),
        m(SsmNorm, "model.layers.{b}.linear_attn.o_norm", "blk.{b}.ssm_norm"),
        m(SsmOut, "model.layers.{b}.linear_attn.o_proj", "blk.{b}.ssm_out"),
    ],
};

const LARA_MINI: Table = Table {
    parent: Some(&SHARED_EXPERT),
    rename: &[],
    rows: &[
        m(SsmIn, "model.layers.{b}.linear_attn.in_proj", "blk.{b}.ssm_in"),
        m(SsmConv, "model.layers.{b}.linear_attn.conv1d", "blk.{b}.ssm_conv1d"),
        m(SsmNorm, "model.layers.{b}.linear_attn.out_norm", "blk.{b}.ssm_norm"),
        m(SsmOut, "model.layers.{b}.linear_attn.out_proj", "blk.{b}.ssm_out"),
        row(ExpertGateUp, "model.layers.{b}.mlp.experts.gate_up_proj", "blk.{b}.ffn_gate_up_exps", [End::BiasOnly, End::Dot]),
        row(ExpertDown, "model.layers.{b}.mlp.experts.down_proj", "blk.{b}.ffn_down_exps", [End::BiasOnly, End::Dot]),
    ],
};

const QWEN3_NEXT: Table = Table {
    parent: Some(&SHARED_EXPERT),
    rename: &[],
    rows: &[
        m(SsmIn, "model.layers.{b}.linear_attn.in_proj_qkvz", "blk.{b}.ssm_in"),
        m(SsmConv, "model.layers.{b}.linear_attn.conv1d", "blk.{b}.ssm_conv1d"),
        m(SsmNorm, "model.layers.{b}.linear_attn.norm", "blk.{b}.ssm_norm"),
        m(SsmOut, "model.layers.{b}.linear_attn.out_proj", "blk.{b}.ssm_out"),
    ],
};

const EXAONE: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Embed, "transformer.wte", "token_embd"),
        m(AttnNorm, "transformer.h.{b}.ln_1", "blk.{b}.attn_norm"),
        m(Q, "transformer.h.{b}.attn.attention.q_proj", "blk.{b}.attn_q"),
        m(K, "transformer.h.{b}.attn.attention.k_proj", "blk.{b}.attn_k"),
        m(V, "transformer.h.{b}.attn.attention.v_proj", "blk.{b}.attn_v"),
        m(O, "transformer.h.{b}.attn.attention.out_proj", "blk.{b}.attn_output"),
        m(FfnNorm, "transformer.h.{b}.ln_2", "blk.{b}.ffn_norm"),
        m(Gate, "transformer.h.{b}.mlp.c_fc_0", "blk.{b}.ffn_gate"),
        m(Up, "transformer.h.{b}.mlp.c_fc_1", "blk.{b}.ffn_up"),
        m(Down, "transformer.h.{b}.mlp.c_proj", "blk.{b}.ffn_down"),
        m(FinalNorm, "transformer.ln_f", "output_norm"),
    ],
};

const STARCODER2: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Up, "model.layers.{b}.mlp.c_fc", "blk.{b}.ffn_up"),
        m(Down, "model.layers.{b}.mlp.c_proj", "blk.{b}.ffn_down"),
    ],
};

const ARIA: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Router, "model.layers.{b}.mlp.router", "blk.{b}.ffn_gate_inp"),
        m(ExpertGateUp, "model.layers.{b}.mlp.experts.fc1", "blk.{b}.ffn_gate_up_exps"),
        m(ExpertDown, "model.layers.{b}.mlp.experts.fc2", "blk.{b}.ffn_down_exps"),
    ],
};

const AFMOE: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(PostAttnNorm, "model.layers.{b}.post_attention_layernorm", "blk.{b}.post_attention_norm"),
        m(FfnNorm, "model.layers.{b}.pre_mlp_layernorm", "blk.{b}.ffn_norm"),
        m(PostFfnNorm, "model.layers.{b}.post_mlp_layernorm", "blk.{b}.post_ffw_norm"),
        m(Router, "model.layers.{b}.mlp.router.gate", "blk.{b}.ffn_gate_inp"),
        bare(CorrectionBias, "model.layers.{b}.mlp.expert_bias", "blk.{b}.exp_probs_b.bias"),
    ],
};

const KOLIBRI: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(PostAttnNorm, "model.layers.{b}.post_attn_norm", "blk.{b}.post_attention_norm"),
        m(FfnNorm, "model.layers.{b}.post_attention_layernorm", "blk.{b}.ffn_norm"),
        m(PostFfnNorm, "model.layers.{b}.post_ffn_norm", "blk.{b}.post_ffw_norm"),
        bare(CorrectionBias, "model.layers.{b}.moe.router.expert_bias", "blk.{b}.exp_probs_b.bias"),
    ],
};

const GLM4: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(PostAttnNorm, "model.layers.{b}.post_self_attn_layernorm", "blk.{b}.post_attention_norm"),
        m(FfnNorm, "model.layers.{b}.post_attention_layernorm", "blk.{b}.ffn_norm"),
        m(PostFfnNorm, "model.layers.{b}.post_mlp_layernorm", "blk.{b}.post_ffw_norm"),
    ],
};

const GPT_OSS: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Router, "model.layers.{b}.mlp.router", "blk.{b}.ffn_gate_inp"),
        row(ExpertGateUp, "model.layers.{b}.mlp.experts.gate_up_proj", "blk.{b}.ffn_gate_up_exps", [End::BiasOnly, End::Dot]),
        row(ExpertDown, "model.layers.{b}.mlp.experts.down_proj", "blk.{b}.ffn_down_exps", [End::BiasOnly, End::Dot]),
    ],
};

const LLAMA4: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Router, "model.layers.{b}.feed_forward.router", "blk.{b}.ffn_gate_inp"),
        m(Gate, "model.layers.{b}.feed_forward.gate_proj", "blk.{b}.ffn_gate"),
        m(Up, "model.layers.{b}.feed_forward.up_proj", "blk.{b}.ffn_up"),
        m(Down, "model.layers.{b}.feed_forward.down_proj", "blk.{b}.ffn_down"),
        m(SharedGate, "model.layers.{b}.feed_forward.shared_expert.gate_proj", "blk.{b}.ffn_gate_shexp"),
        m(SharedUp, "model.layers.{b}.feed_forward.shared_expert.up_proj", "blk.{b}.ffn_up_shexp"),
        m(SharedDown, "model.layers.{b}.feed_forward.shared_expert.down_proj", "blk.{b}.ffn_down_shexp"),
        row(ExpertGateUp, "model.layers.{b}.feed_forward.experts.gate_up_proj", "blk.{b}.ffn_gate_up_exps", [End::BiasOnly, End::Dot]),
        row(ExpertDown, "model.layers.{b}.feed_forward.experts.down_proj", "blk.{b}.ffn_down_exps", [End::BiasOnly, End::Dot]),
    ],
};

/// Qwen3-Next's names with the DeltaNet's projections apart.
const QWEN35: Table = Table {
    parent: Some(&QWEN3_NEXT),
    rename: &[],
    rows: &[
        m(SsmIn, "model.layers.{b}.linear_attn.in_proj_qkv", "blk.{b}.attn_qkv"),
    ],
};

/// Dory as transformers saves it: Gemma 2's names under `backbone.`, the embeddings'
/// `embeddings`, the output gate's `g_proj`. (Its released checkpoints store each layer as
/// two blocks, which transformers renames on loading and does not write back: read
/// through `canonical`.)
const DORY: Table = Table {
    parent: Some(&SANDWICH),
    rename: &[("model.", "backbone.")],
    rows: &[
        m(Embed, "backbone.embeddings", "token_embd"),
        m(AttnGate, "backbone.layers.{b}.self_attn.g_proj", "blk.{b}.attn_gate"),
    ],
};

/// HRM: Llama's layers in two stacks, `{stack}` the layer's (`Spec::instantiate`), the
/// output gate, Q, K and V in one tensor.
const HRM: Table = Table {
    parent: Some(&LLAMA),
    rename: &[("model.layers.", "model.{stack}.layers.")],
    rows: &[
        m(Qkv, "model.{stack}.layers.{b}.attn.gqkv_proj", "blk.{b}.attn_gqkv"),
        m(O, "model.{stack}.layers.{b}.attn.o_proj", "blk.{b}.attn_output"),
    ],
};

/// HY v4: every `gate_proj` is a `linear_gate` (the attention's output gate, the MLP's and the
/// shared experts' gates); the experts stacked; the sinks a parameter of their own.
const HY_V4: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(AttnGate, "model.layers.{b}.self_attn.linear_gate", "blk.{b}.attn_gate"),
        m(Gate, "model.layers.{b}.mlp.linear_gate", "blk.{b}.ffn_gate"),
        m(SharedGate, "model.layers.{b}.mlp.shared_experts.linear_gate", "blk.{b}.ffn_gate_shexp"),
        bare(Sinks, "model.layers.{b}.self_attn.learnable_sink_param", "blk.{b}.attn_sinks.weight"),
        row(ExpertGateUp, "model.layers.{b}.mlp.experts.gate_up_proj", "blk.{b}.ffn_gate_up_exps", [End::BiasOnly, End::Dot]),
        row(ExpertDown, "model.layers.{b}.mlp.experts.down_proj", "blk.{b}.ffn_down_exps", [End::BiasOnly, End::Dot]),
    ],
};

/// HY v4's names, the head's hyper-connection as HY v4 VL's class saves and loads it.
const HY_V4_VL: Table = Table {
    parent: Some(&HY_V4),
    rename: &[],
    rows: &[
        bare(HcHeadFn, "model.hc_head.hc_pre.hc_head_fn", "output_hc_fn"),
        bare(HcHeadBase, "model.hc_head.hc_pre.hc_head_base", "output_hc_base"),
        bare(HcHeadScale, "model.hc_head.hc_pre.hc_head_scale", "output_hc_scale"),
    ],
};

/// Qwen2-MoE's names, the sinks as `softmax_offset`.
const FLINT: Table = Table {
    parent: Some(&SHARED_EXPERT),
    rename: &[],
    rows: &[
        bare(Sinks, "model.layers.{b}.self_attn.softmax_offset", "blk.{b}.attn_sinks.weight"),
    ],
};

/// Llama's names, the sinks as `attention_sink_bias`.
const MI_MO: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        bare(Sinks, "model.layers.{b}.self_attn.attention_sink_bias", "blk.{b}.attn_sinks.weight"),
    ],
};

/// MiniMax-M3, Qwen3-VL-MoE and Mistral 4: Llama's names, the experts stacked.
const MINI_MAX_M3: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        row(ExpertGateUp, "model.layers.{b}.mlp.experts.gate_up_proj", "blk.{b}.ffn_gate_up_exps", [End::BiasOnly, End::Dot]),
        row(ExpertDown, "model.layers.{b}.mlp.experts.down_proj", "blk.{b}.ffn_down_exps", [End::BiasOnly, End::Dot]),
    ],
};

const MINI_MAX_M3_PUBLISHED: Table = Table {
    parent: Some(&MINI_MAX_M2),
    rename: &[],
    rows: &[
        m(SharedGate, "model.layers.{b}.block_sparse_moe.shared_experts.gate_proj", "blk.{b}.ffn_gate_shexp"),
        m(SharedUp, "model.layers.{b}.block_sparse_moe.shared_experts.up_proj", "blk.{b}.ffn_up_shexp"),
        m(SharedDown, "model.layers.{b}.block_sparse_moe.shared_experts.down_proj", "blk.{b}.ffn_down_shexp"),
        m(BlockIndexQ, "model.layers.{b}.self_attn.index_q_proj", "blk.{b}.indexer.attn_q"),
        m(BlockIndexK, "model.layers.{b}.self_attn.index_k_proj", "blk.{b}.indexer.attn_k"),
        m(BlockIndexQNorm, "model.layers.{b}.self_attn.index_q_norm", "blk.{b}.indexer.q_norm"),
        m(BlockIndexKNorm, "model.layers.{b}.self_attn.index_k_norm", "blk.{b}.indexer.k_norm"),
    ],
};

const MINI_MAX_M2: Table = Table {
    parent: Some(&MIXTRAL),
    rename: &[],
    rows: &[
        bare(CorrectionBias, "model.layers.{b}.block_sparse_moe.e_score_correction_bias", "blk.{b}.exp_probs_b.bias"),
    ],
};

const ERNIE45_MOE: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        bare(CorrectionBias, "model.layers.{b}.mlp.moe_statics.e_score_correction_bias", "blk.{b}.exp_probs_b.bias"),
    ],
};

const EXAONE_MOE: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        bare(CorrectionBias, "model.layers.{b}.mlp.e_score_correction_bias", "blk.{b}.exp_probs_b.bias"),
    ],
};

const LAGUNA: Table = Table {
    parent: Some(&SHARED_EXPERT),
    rename: &[],
    rows: &[
        m(AttnGate, "model.layers.{b}.self_attn.g_proj", "blk.{b}.attn_gate"),
        bare(CorrectionBias, "model.layers.{b}.mlp.experts.e_score_correction_bias", "blk.{b}.exp_probs_b.bias"),
    ],
};

const FALCON: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Embed, "transformer.word_embeddings", "token_embd"),
        m(AttnNorm, "transformer.h.{b}.input_layernorm", "blk.{b}.attn_norm"),
        m(FfnNorm, "transformer.h.{b}.post_attention_layernorm", "blk.{b}.ffn_norm"),
        m(Qkv, "transformer.h.{b}.self_attention.query_key_value", "blk.{b}.attn_qkv"),
        m(O, "transformer.h.{b}.self_attention.dense", "blk.{b}.attn_output"),
        m(Up, "transformer.h.{b}.mlp.dense_h_to_4h", "blk.{b}.ffn_up"),
        m(Down, "transformer.h.{b}.mlp.dense_4h_to_h", "blk.{b}.ffn_down"),
        m(FinalNorm, "transformer.ln_f", "output_norm"),
    ],
};

/// Falcon's new decoder: llama.cpp's attn_norm is the MLP's norm here, attn_norm_2 the
/// attention's (gguf-py's tensor_mapping; llama.cpp's falcon graph).
const FALCON_TWO_NORMS: Table = Table {
    parent: Some(&FALCON),
    rename: &[],
    rows: &[
        m(AttnNorm, "transformer.h.{b}.ln_attn", "blk.{b}.attn_norm_2"),
        m(FfnNorm, "transformer.h.{b}.ln_mlp", "blk.{b}.attn_norm"),
    ],
};

/// GraniteMoeHybrid without experts: its shared MLP is the whole FFN.
const GRANITE_MOE_HYBRID: Table = Table {
    parent: Some(&GRANITE_MOE),
    rename: &[],
    rows: &[
        m(GateUp, "model.layers.{b}.shared_mlp.input_linear", "blk.{b}.ffn_gate_up_shexp"),
        m(Down, "model.layers.{b}.shared_mlp.output_linear", "blk.{b}.ffn_down_shexp"),
    ],
};

/// Zamba: Zamba2's names with the shared block as `shared_transf`, the per-head Mamba's
/// projections stored without a suffix.
const ZAMBA: Table = Table {
    parent: Some(&ZAMBA2),
    rename: &[("shared_transformer", "shared_transf")],
    rows: &[
        row(SsmX, "model.layers.{b}.{d}mamba.x_proj_weight", "blk.{b}.ssm_x", [End::Bare, End::Dot]),
        row(SsmDt, "model.layers.{b}.{d}mamba.dt_proj", "blk.{b}.ssm_dt", [End::Under, End::Dot]),
    ],
};

/// LongCat-Flash: Llama's names (DeepSeek's for the latent attention), each layer's two
/// sublayers in lists of two (`{p}` the checkpoint layer, `{s}` the sublayer), the dense MLPs
/// `mlps`, the one MoE `mlp` with its router's `classifier`.
const LONG_CAT: Table = Table {
    parent: Some(&LLAMA),
    rename: &[("{b}.self_attn.", "{p}.self_attn.{s}."), ("{b}", "{p}")],
    rows: &[
        m(Router, "model.layers.{p}.mlp.router.classifier", "blk.{b}.ffn_gate_inp"),
        m(AttnNorm, "model.layers.{p}.input_layernorm.{s}", "blk.{b}.attn_norm"),
        m(FfnNorm, "model.layers.{p}.post_attention_layernorm.{s}", "blk.{b}.ffn_norm"),
        m(Gate, "model.layers.{p}.mlps.{s}.gate_proj", "blk.{b}.ffn_gate"),
        m(Up, "model.layers.{p}.mlps.{s}.up_proj", "blk.{b}.ffn_up"),
        m(Down, "model.layers.{p}.mlps.{s}.down_proj", "blk.{b}.ffn_down"),
        bare(CorrectionBias, "model.layers.{p}.mlp.router.e_score_correction_bias", "blk.{b}.exp_probs_b.bias"),
    ],
};

/// Ergo's names as its checkpoints store them, and as transformers saves them (its conversion
/// mapping reverted): `tok_embeddings`, `layers.{b}.attention.wqkv`, the norms `attention_norm`,
/// `post_attention_norm`, `ffn_norm`, `post_ffn_norm`, the residual gates' `scale`, and under
/// `feed_forward` the dense MLP's `up` and `down`, the router's `gate_kernel` [hidden, E] and
/// `router_bias`, the experts' stacked `up_proj` [E, in, out], `down_proj` and
/// `expert_output_norm.scale` [E, hidden], the shared expert's `shared_up_proj` and
/// `shared_down_proj` stored [in, out] (`stored_in_out`). llama.cpp defines no Ergo: the GGUF
/// names follow its style.
const ERGO: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Embed, "tok_embeddings", "token_embd"),
        m(FinalNorm, "norm", "output_norm"),
        m(LmHead, "output", "output"),
        m(AttnNorm, "layers.{b}.attention_norm", "blk.{b}.attn_norm"),
        m(PostAttnNorm, "layers.{b}.post_attention_norm", "blk.{b}.post_attention_norm"),
        m(FfnNorm, "layers.{b}.ffn_norm", "blk.{b}.ffn_norm"),
        m(PostFfnNorm, "layers.{b}.post_ffn_norm", "blk.{b}.post_ffw_norm"),
        row(ResidGateAttn, "layers.{b}.post_attention_residual.scale", "blk.{b}.attn_residual_gate", [End::Bare, End::Dot]),
        row(ResidGateFfn, "layers.{b}.post_ffn_residual.scale", "blk.{b}.ffn_residual_gate", [End::Bare, End::Dot]),
        m(Qkv, "layers.{b}.attention.wqkv", "blk.{b}.attn_qkv"),
        m(O, "layers.{b}.attention.wo", "blk.{b}.attn_output"),
        m(QNorm, "layers.{b}.attention.q_norm", "blk.{b}.attn_q_norm"),
        m(KNorm, "layers.{b}.attention.k_norm", "blk.{b}.attn_k_norm"),
        m(Up, "layers.{b}.feed_forward.up", "blk.{b}.ffn_up"),
        m(Down, "layers.{b}.feed_forward.down", "blk.{b}.ffn_down"),
        row(Router, "layers.{b}.feed_forward.gate_kernel", "blk.{b}.ffn_gate_inp", [End::Bare, End::Dot]),
        row(CorrectionBias, "layers.{b}.feed_forward.router_bias", "blk.{b}.exp_probs_b", [End::Bare, End::Dot]),
        row(ExpertUp, "layers.{b}.feed_forward.up_proj", "blk.{b}.ffn_up_exps", [End::Bare, End::Dot]),
        row(ExpertDown, "layers.{b}.feed_forward.down_proj", "blk.{b}.ffn_down_exps", [End::Bare, End::Dot]),
        row(ExpertOutNorm, "layers.{b}.feed_forward.expert_output_norm.scale", "blk.{b}.ffn_post_norm_exps", [End::Bare, End::Dot]),
        row(SharedUp, "layers.{b}.feed_forward.shared_up_proj", "blk.{b}.ffn_up_shexp", [End::Bare, End::Dot]),
        row(SharedDown, "layers.{b}.feed_forward.shared_down_proj", "blk.{b}.ffn_down_shexp", [End::Bare, End::Dot]),
        row(SharedOutNorm, "layers.{b}.feed_forward.shared_expert_output_norm.scale", "blk.{b}.ffn_post_norm_shexp", [End::Bare, End::Dot]),
    ],
};

/// DeepSeek-V4's names, those of DeepSeek's own checkpoints (which transformers renames on
/// loading and writes back); llama.cpp defines no DeepSeek-V4: the GGUF names follow its style.
const DEEPSEEK_V4: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Embed, "model.embed_tokens", "token_embd"),
        m(FinalNorm, "model.norm", "output_norm"),
        m(AttnNorm, "model.layers.{b}.attn_norm", "blk.{b}.attn_norm"),
        m(FfnNorm, "model.layers.{b}.ffn_norm", "blk.{b}.ffn_norm"),
        m(QA, "model.layers.{b}.attn.wq_a", "blk.{b}.attn_q_a"),
        m(QANorm, "model.layers.{b}.attn.q_norm", "blk.{b}.attn_q_a_norm"),
        m(QB, "model.layers.{b}.attn.wq_b", "blk.{b}.attn_q_b"),
        m(V4Kv, "model.layers.{b}.attn.wkv", "blk.{b}.attn_kv"),
        m(V4KvNorm, "model.layers.{b}.attn.norm", "blk.{b}.attn_kv_norm"),
        m(V4OA, "model.layers.{b}.attn.wo_a", "blk.{b}.attn_output_a"),
        m(V4OB, "model.layers.{b}.attn.wo_b", "blk.{b}.attn_output_b"),
        bare(Sinks, "model.layers.{b}.attn.attn_sink", "blk.{b}.attn_sinks.weight"),
        m(CompKv, "model.layers.{b}.attn.compressor.wkv", "blk.{b}.attn_comp_kv"),
        m(CompGate, "model.layers.{b}.attn.compressor.wgate", "blk.{b}.attn_comp_gate"),
        bare(CompBias, "model.layers.{b}.attn.compressor.ape", "blk.{b}.attn_comp_ape"),
        m(CompNorm, "model.layers.{b}.attn.compressor.norm", "blk.{b}.attn_comp_norm"),
        m(IndexCompKv, "model.layers.{b}.attn.indexer.compressor.wkv", "blk.{b}.indexer.comp_kv"),
        m(IndexCompGate, "model.layers.{b}.attn.indexer.compressor.wgate", "blk.{b}.indexer.comp_gate"),
        bare(IndexCompBias, "model.layers.{b}.attn.indexer.compressor.ape", "blk.{b}.indexer.comp_ape"),
        m(IndexCompNorm, "model.layers.{b}.attn.indexer.compressor.norm", "blk.{b}.indexer.comp_norm"),
        m(IndexQ, "model.layers.{b}.attn.indexer.wq_b", "blk.{b}.indexer.attn_q_b"),
        m(IndexWeights, "model.layers.{b}.attn.indexer.weights_proj", "blk.{b}.indexer.proj"),
        m(Router, "model.layers.{b}.ffn.gate", "blk.{b}.ffn_gate_inp"),
        bare(CorrectionBias, "model.layers.{b}.ffn.gate.bias", "blk.{b}.exp_probs_b.bias"),
        bare(HashTable, "model.layers.{b}.ffn.gate.tid2eid", "blk.{b}.ffn_gate_tid2eid"),
        m(ExpertGate, "model.layers.{b}.ffn.experts.{e}.w1", "blk.{b}.ffn_gate.{e}"),
        m(ExpertUp, "model.layers.{b}.ffn.experts.{e}.w3", "blk.{b}.ffn_up.{e}"),
        m(ExpertDown, "model.layers.{b}.ffn.experts.{e}.w2", "blk.{b}.ffn_down.{e}"),
        m(SharedGate, "model.layers.{b}.ffn.shared_experts.w1", "blk.{b}.ffn_gate_shexp"),
        m(SharedUp, "model.layers.{b}.ffn.shared_experts.w3", "blk.{b}.ffn_up_shexp"),
        m(SharedDown, "model.layers.{b}.ffn.shared_experts.w2", "blk.{b}.ffn_down_shexp"),
        bare(HcAttnFn, "model.layers.{b}.hc_attn_fn", "blk.{b}.hc_attn_fn"),
        bare(HcAttnBase, "model.layers.{b}.hc_attn_base", "blk.{b}.hc_attn_base"),
        bare(HcAttnScale, "model.layers.{b}.hc_attn_scale", "blk.{b}.hc_attn_scale"),
        bare(HcFfnFn, "model.layers.{b}.hc_ffn_fn", "blk.{b}.hc_ffn_fn"),
        bare(HcFfnBase, "model.layers.{b}.hc_ffn_base", "blk.{b}.hc_ffn_base"),
        bare(HcFfnScale, "model.layers.{b}.hc_ffn_scale", "blk.{b}.hc_ffn_scale"),
        bare(HcHeadFn, "model.hc_head.hc_fn", "output_hc_fn"),
        bare(HcHeadBase, "model.hc_head.hc_base", "output_hc_base"),
        bare(HcHeadScale, "model.hc_head.hc_scale", "output_hc_scale"),
        bare(LmHead, "head.weight", "output.weight"),
    ],
};

/// Inkling 2's names as its checkpoints store them (`model.llm.`, `attn.wq_du` …, the block
/// attention residuals' queries under `attn_res.`, layer b's attention query as
/// `attn_queries.{b − 1}`); llama.cpp defines no Inkling 2: the GGUF names follow its style.
const INKLING2: Table = Table {
    parent: Some(&LLAMA),
    rename: &[],
    rows: &[
        m(Embed, "model.llm.embed", "token_embd"),
        m(EmbedNorm, "model.llm.embed_norm", "token_embd_norm"),
        m(AttnNorm, "model.llm.layers.{b}.attn_norm", "blk.{b}.attn_norm"),
        m(QInNorm, "model.llm.layers.{b}.q_input_norm", "blk.{b}.attn_q_in_norm"),
        m(KInNorm, "model.llm.layers.{b}.k_input_norm", "blk.{b}.attn_k_in_norm"),
        m(VInNorm, "model.llm.layers.{b}.v_input_norm", "blk.{b}.attn_v_in_norm"),
        m(FfnNorm, "model.llm.layers.{b}.mlp_norm", "blk.{b}.ffn_norm"),
        m(Q, "model.llm.layers.{b}.attn.wq_du", "blk.{b}.attn_q"),
        m(K, "model.llm.layers.{b}.attn.wk_dv", "blk.{b}.attn_k"),
        m(V, "model.llm.layers.{b}.attn.wv_dv", "blk.{b}.attn_v"),
        m(O, "model.llm.layers.{b}.attn.wo_ud", "blk.{b}.attn_output"),
        m(AttnGate, "model.llm.layers.{b}.attn.gate_attn", "blk.{b}.attn_gate"),
        m(TokenSinks, "model.llm.layers.{b}.attn.attn_sink_proj", "blk.{b}.attn_sinks"),
        m(RelProj, "model.llm.layers.{b}.attn.wr_du", "blk.{b}.attn_rel"),
        bare(RelBank, "model.llm.layers.{b}.attn.rel_logits_proj.proj", "blk.{b}.attn_rel_bank"),
        bare(RelClipScale, "model.llm.layers.{b}.attn.rel_l2_clip.scale", "blk.{b}.attn_rel_scale"),
        bare(QClipScale, "model.llm.layers.{b}.attn.q_l2_clip.scale", "blk.{b}.attn_q_scale"),
        m(KConv, "model.llm.layers.{b}.attn.k_sconv", "blk.{b}.attn_k_conv"),
        m(VConv, "model.llm.layers.{b}.attn.v_sconv", "blk.{b}.attn_v_conv"),
        bare(KConvStatic, "model.llm.layers.{b}.attn.k_sconv.static_w", "blk.{b}.attn_k_conv"),
        bare(VConvStatic, "model.llm.layers.{b}.attn.v_sconv.static_w", "blk.{b}.attn_v_conv"),
        bare(KConvDyn, "model.llm.layers.{b}.attn.k_sconv.weight_proj", "blk.{b}.attn_k_conv_dyn"),
        bare(VConvDyn, "model.llm.layers.{b}.attn.v_sconv.weight_proj", "blk.{b}.attn_v_conv_dyn"),
        m(AttnOutConv, "model.llm.layers.{b}.attn_sconv", "blk.{b}.attn_out_conv"),
        m(FfnOutConv, "model.llm.layers.{b}.mlp_sconv", "blk.{b}.ffn_out_conv"),
        m(Router, "model.llm.layers.{b}.mlp.gate", "blk.{b}.ffn_gate_inp"),
        bare(CorrectionBias, "model.llm.layers.{b}.mlp.gate.bias", "blk.{b}.exp_probs_b.bias"),
        bare(ExpertGateUp, "model.llm.layers.{b}.mlp.experts.w13_weight", "blk.{b}.ffn_gate_up_exps"),
        bare(ExpertDown, "model.llm.layers.{b}.mlp.experts.w2_weight", "blk.{b}.ffn_down_exps"),
        bare(AttnResQuery, "model.llm.attn_res.attn_queries.{b-1}", "blk.{b}.attn_res_query"),
        bare(FfnResQuery, "model.llm.attn_res.mlp_queries.{b}", "blk.{b}.ffn_res_query"),
        bare(HeadResQuery, "model.llm.attn_res.output_query", "output_res_query"),
        bare(MsgQDown, "model.llm.layers.{b}.controllers.attn.down_weight", "blk.{b}.msg_q_down"),
        bare(MsgQForget, "model.llm.layers.{b}.controllers.attn.forget_weight", "blk.{b}.msg_q_forget"),
        bare(MsgQGain, "model.llm.layers.{b}.controllers.attn.gain_weight", "blk.{b}.msg_q_gain"),
        bare(MsgKDown, "model.llm.layers.{b}.controllers.k.down_weight", "blk.{b}.msg_k_down"),
        bare(MsgKForget, "model.llm.layers.{b}.controllers.k.forget_weight", "blk.{b}.msg_k_forget"),
        bare(MsgKGain, "model.llm.layers.{b}.controllers.k.gain_weight", "blk.{b}.msg_k_gain"),
        bare(MsgVDown, "model.llm.layers.{b}.controllers.v.down_weight", "blk.{b}.msg_v_down"),
        bare(MsgVForget, "model.llm.layers.{b}.controllers.v.forget_weight", "blk.{b}.msg_v_forget"),
        bare(MsgVGain, "model.llm.layers.{b}.controllers.v.gain_weight", "blk.{b}.msg_v_gain"),
        bare(MsgFfnDown, "model.llm.layers.{b}.controllers.mlp.down_weight", "blk.{b}.msg_ffn_down"),
        bare(MsgFfnForget, "model.llm.layers.{b}.controllers.mlp.forget_weight", "blk.{b}.msg_ffn_forget"),
        bare(MsgFfnGain, "model.llm.layers.{b}.controllers.mlp.gain_weight", "blk.{b}.msg_ffn_gain"),
        bare(MsgQueries, "model.llm.middle_cycle_cross_pass_queries", "msg_queries"),
        bare(MsgKvQueries, "model.llm.middle_cycle_cross_pass_kv_queries", "msg_kv_queries"),
        m(FinalNorm, "model.llm.norm", "output_norm"),
        m(LmHead, "model.llm.unembed", "output"),
    ],
};
