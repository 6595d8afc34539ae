//! The checkpoint layouts anatomy names tensors for.

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
    /// norms, the experts stacked and the correction bias on the router (MiniMax-M3; Mistral 4's,
    /// which has neither indexer nor bias).
    MiniMaxM3,
    /// MiniMax-M3's published names (its wrapper's checkpoint): MiniMax-M2's MoE under
    /// `block_sparse_moe.` (the experts one by one as `w1`/`w2`/`w3`, the shared expert's
    /// `gate_proj`, `up_proj`, `down_proj` apart), the indexer's `self_attn.index_{q,k}_proj`
    /// and their norms.
    MiniMaxM3Published,
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
    /// Ergo's names (`naming::ergo`): sandwich norms, a fused QKV, stacked experts with a norm
    /// over each one's output, residual gates.
    Ergo,
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
    /// HY v4 VL's language model: HY v4's names, but the head's hyper-connection as transformers
    /// 5.25 saves and loads it in this wrapper, `hc_head.hc_pre.hc_head_fn` ….
    HyV4Vl,
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
