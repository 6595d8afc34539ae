//! `anatomy numpy`: one runnable Python file holding the model in NumPy — every op a function with
//! its shapes commented, a forward() that composes them as the Graph does, and a loader of
//! safetensors weights in Hugging Face naming. It needs only NumPy and the standard library.

mod blt;
mod image;
mod pieces;

use crate::graph::Graph;
use crate::naming::{names, Role};
use crate::spec::{
    Act, Attention, AttnSpan, Block, DeltaStore, ExpertStorage, Ffn, Mixer, NormKind, NormPlace,
    Position, QkNorm, Qkv, Residual, RopeFreqs, RopeScaling, ScaleForm, Scoring, Spec,
};
use serde_json::json;

pub(crate) fn py(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

fn place_name(p: NormPlace) -> &'static str {
    match p {
        NormPlace::Pre => "pre",
        NormPlace::Post => "post",
        NormPlace::Sandwich => "sandwich",
        NormPlace::PostResidual => "post_residual",
        NormPlace::Normed => "normed",
        NormPlace::Sphere => "sphere",
    }
}

/// One Python tuple per layer, `((mixer, window), rope, ffn)`: the PLAN list that both the
/// NumPy file and the PyTorch module iterate.
/// An attention's latent sizes and options for the export's CONFIG, `None` without latent
/// attention.
fn mla_config(a: &Attention) -> serde_json::Value {
    let Some(m) = a.mla.as_ref() else {
        return json!(null);
    };
    let mut c = json!({
        "q_lora": m.q_lora_rank, "kv_lora": m.kv_lora_rank, "bias": m.bias, "nope": m.qk_nope_head_dim, "rope": m.qk_rope_head_dim,
        "v": a.v_head_dim, "eps": m.latent_eps, "rope_key_norm": m.rope_key_norm, "indexer": null,
    });
    if let Some((q, kv)) = m.lora_scales {
        c["lora_scales"] = json!([q, kv]);
    }
    if let Some(i) = m.indexer.as_ref() {
        c["indexer"] = json!({
            "heads": i.heads, "head_dim": i.head_dim, "top_k": i.top_k, "interleaved": i.interleaved,
            "key_eps": i.key_eps,
        });
    }
    c
}

pub(crate) fn python_plan(spec: &Spec) -> Vec<String> {
    spec.plan
        .iter()
        .map(|l| {
            let mixer = match l.mixer {
                // A parallel layer's attention span: its Mamba2 runs in every such layer.
                Mixer::Attention(AttnSpan::Full) | Mixer::Parallel(AttnSpan::Full) => {
                    "(\"full\", 0)".to_string()
                }
                Mixer::Attention(AttnSpan::Sliding(w)) | Mixer::Parallel(AttnSpan::Sliding(w)) => {
                    format!("(\"sliding\", {w})")
                }
                Mixer::Attention(AttnSpan::Chunked(c)) | Mixer::Parallel(AttnSpan::Chunked(c)) => {
                    format!("(\"chunked\", {c})")
                }
                Mixer::Attention(AttnSpan::Whole) | Mixer::Parallel(AttnSpan::Whole) => {
                    "(\"whole\", 0)".to_string()
                }
                Mixer::Mamba2 => "(\"mamba2\", 0)".to_string(),
                Mixer::Mamba => "(\"mamba\", 0)".to_string(),
                Mixer::ShortConv => "(\"conv\", 0)".to_string(),
                Mixer::DeltaNet => "(\"delta\", 0)".to_string(),
                Mixer::Lightning => "(\"lightning\", 0)".to_string(),
                Mixer::RgLru => "(\"rglru\", 0)".to_string(),
                Mixer::Rwkv => "(\"rwkv\", 0)".to_string(),
                Mixer::MLstm => "(\"mlstm\", 0)".to_string(),
                Mixer::None => "(\"none\", 0)".to_string(),
                Mixer::CrossAttention => "(\"cross\", 0)".to_string(),
            };
            let ffn = match l.ffn {
                Ffn::Dense => "dense",
                Ffn::Moe => "moe",
                Ffn::Shortcut => "shortcut",
                Ffn::DenseAndMoe => "both",
                Ffn::ChannelMix => "channel",
                Ffn::None => "none",
            };
            format!("({mixer}, {}, {ffn:?})", py(l.rope))
        })
        .collect()
}

/// The checkpoint name templates the file reads, by role, in Hugging Face naming: the roles
/// whose weight or bias this model's graph holds.
/// The `NAMES` table, and the `TRANSPOSED` set of the weights stored [in, out] among [out, in]
/// ones (empty but for Ergo's router and shared expert).
fn name_table(g: &Graph) -> String {
    let held: std::collections::HashSet<&str> = g.params.iter().map(|p| p.hf.as_str()).collect();
    let extra: &[(&str, Role)] = if g.spec.bytes().is_some() {
        &[("token_proj", Role::TokenProj)]
    } else {
        &[]
    };
    let (names, transposed) = name_dict(&g.spec, &held, extra);
    let set = if transposed.is_empty() {
        "set()".to_string()
    } else {
        let keys: Vec<String> = transposed.iter().map(|k| format!("{k:?}")).collect();
        format!("{{{}}}", keys.join(", "))
    };
    format!("NAMES = {names}TRANSPOSED = {set}  # weights stored [in, out], where the checkpoint's others are [out, in]\n")
}

/// The checkpoint name templates of the roles `spec` (a model, or one of BLT's stacks) reads
/// whose weight or bias is `held`, as a Python dict literal; `extra` roles too. With it, the keys
/// of those the layout alone stores [in, out] (Ergo's router and shared expert).
pub(crate) fn name_dict<'k>(
    spec: &Spec,
    held: &std::collections::HashSet<&str>,
    extra: &[(&'k str, Role)],
) -> (String, Vec<&'k str>) {
    use Role::*;
    let roles = [
        ("embed", Embed),
        ("pos_embed", PosEmbed),
        ("segment_embed", SegmentEmbed),
        ("position_bias", PositionBias),
        ("attn_norm", AttnNorm),
        ("q", Q),
        ("k", K),
        ("v", V),
        ("qkv", Qkv),
        ("o", O),
        ("attn_sub_norm", AttnSubNorm),
        ("attn_gate", AttnGate),
        ("dense_bias", DenseBias),
        ("head_dense", HeadDense),
        ("project_in", EmbedProjIn),
        ("project_out", EmbedProjOut),
        ("head_norm", HeadNorm),
        ("moe_post_norm", MoePostNorm),
        ("lambda_q1", LambdaQ1),
        ("lambda_k1", LambdaK1),
        ("lambda_q2", LambdaQ2),
        ("lambda_k2", LambdaK2),
        ("ffn_sub_norm", FfnSubNorm),
        ("mlp_post_norm", MlpPostNorm),
        ("experts_norm", ExpertsNorm),
        ("experts_post_norm", ExpertsPostNorm),
        ("router_scale", RouterScale),
        ("router_expert_scale", RouterExpertScale),
        ("ple_embed", PleEmbed),
        ("ple_proj", PleProj),
        ("ple_proj_norm", PleProjNorm),
        ("ple_gate", PleGate),
        ("ple_up", PleUp),
        ("ple_norm", PleNorm),
        ("layer_scalar", LayerScalar),
        ("draft_in", DraftIn),
        ("draft_out", DraftOut),
        ("centroids", Centroids),
        ("token_ordering", TokenOrdering),
        ("low_init", LowInit),
        ("hc_attn_fn", HcAttnFn),
        ("hc_attn_base", HcAttnBase),
        ("hc_attn_scale", HcAttnScale),
        ("hc_ffn_fn", HcFfnFn),
        ("hc_ffn_base", HcFfnBase),
        ("hc_ffn_scale", HcFfnScale),
        ("hc_head_fn", HcHeadFn),
        ("hc_head_base", HcHeadBase),
        ("hc_head_scale", HcHeadScale),
        ("gs_attn_norm", GsAttnNorm),
        ("gs_attn_down", GsAttnDown),
        ("gs_attn_up", GsAttnUp),
        ("gs_attn_inject", GsAttnInject),
        ("gs_ffn_norm", GsFfnNorm),
        ("gs_ffn_down", GsFfnDown),
        ("gs_ffn_up", GsFfnUp),
        ("gs_ffn_inject", GsFfnInject),
        ("gs_head_norm", GsHeadNorm),
        ("gs_head_down", GsHeadDown),
        ("gs_head_up", GsHeadUp),
        ("qsa_qk", QsaQk),
        ("qsa_q_norm", QsaQNorm),
        ("qsa_k_norm", QsaKNorm),
        ("ngram_table", NgramTable),
        ("ngram_mult", NgramMultipliers),
        ("ngram_sizes", NgramSizes),
        ("ngram_offsets", NgramOffsets),
        ("ngram_key", NgramKey),
        ("ngram_value", NgramValue),
        ("ngram_norm_key", NgramNormKey),
        ("ngram_norm_query", NgramNormQuery),
        ("ngram_norm_conv", NgramNormConv),
        ("ngram_conv", NgramConv),
        ("q_norm", QNorm),
        ("k_norm", KNorm),
        ("rel_proj", RelProj),
        ("rel_bank", RelBank),
        ("k_conv", KConv),
        ("v_conv", VConv),
        ("attn_out_conv", AttnOutConv),
        ("ffn_out_conv", FfnOutConv),
        ("mlp_scalar", MlpScalar),
        ("router_scalar", RouterScalar),
        ("k_conv_static", KConvStatic),
        ("v_conv_static", VConvStatic),
        ("k_conv_dyn", KConvDyn),
        ("v_conv_dyn", VConvDyn),
        ("q_clip_scale", QClipScale),
        ("rel_clip_scale", RelClipScale),
        ("token_sinks", TokenSinks),
        ("q_in_norm", QInNorm),
        ("k_in_norm", KInNorm),
        ("v_in_norm", VInNorm),
        ("attn_res_query", AttnResQuery),
        ("ffn_res_query", FfnResQuery),
        ("head_res_query", HeadResQuery),
        ("msg_q_down", MsgQDown),
        ("msg_q_forget", MsgQForget),
        ("msg_q_gain", MsgQGain),
        ("msg_k_down", MsgKDown),
        ("msg_k_forget", MsgKForget),
        ("msg_k_gain", MsgKGain),
        ("msg_v_down", MsgVDown),
        ("msg_v_forget", MsgVForget),
        ("msg_v_gain", MsgVGain),
        ("msg_ffn_down", MsgFfnDown),
        ("msg_ffn_forget", MsgFfnForget),
        ("msg_ffn_gain", MsgFfnGain),
        ("msg_queries", MsgQueries),
        ("msg_kv_queries", MsgKvQueries),
        ("sinks", Sinks),
        ("attn_gate_bias", AttnGateBias),
        ("post_attn_norm", PostAttnNorm),
        ("ffn_norm", FfnNorm),
        ("post_ffn_norm", PostFfnNorm),
        ("gate", Gate),
        ("up", Up),
        ("gate_up", GateUp),
        ("down", Down),
        ("router", Router),
        ("correction_bias", CorrectionBias),
        ("expert_gate", ExpertGate),
        ("expert_up", ExpertUp),
        ("expert_gate_up", ExpertGateUp),
        ("expert_down", ExpertDown),
        ("shared_gate", SharedGate),
        ("shared_up", SharedUp),
        ("shared_gate_up", SharedGateUp),
        ("shared_down", SharedDown),
        ("shared_expert_gate", SharedExpertGate),
        ("act_alpha_p", ActAlphaP),
        ("act_alpha_n", ActAlphaN),
        ("act_beta", ActBeta),
        ("act_eps", ActEps),
        ("final_norm", FinalNorm),
        ("embed_norm", EmbedNorm),
        ("lm_head", LmHead),
        ("q_a", QA),
        ("q_a_norm", QANorm),
        ("q_b", QB),
        ("kv_a", KvA),
        ("kv_a_norm", KvANorm),
        ("kv_b", KvB),
        ("k_pe_norm", KPeNorm),
        ("embed_shift", EmbedShift),
        ("embed_scale", EmbedScale),
        ("cca_temp", CcaKeyTemp),
        ("router_state", RouterState),
        ("router_balance", RouterBalance),
        ("resid_attn_out_shift", ResidAttnOutShift),
        ("resid_attn_out_scale", ResidAttnOutScale),
        ("resid_attn_shift", ResidAttnShift),
        ("resid_attn_scale", ResidAttnScale),
        ("resid_ffn_out_shift", ResidFfnOutShift),
        ("resid_ffn_out_scale", ResidFfnOutScale),
        ("resid_ffn_shift", ResidFfnShift),
        ("resid_ffn_scale", ResidFfnScale),
        ("block_q", BlockIndexQ),
        ("block_k", BlockIndexK),
        ("block_q_norm", BlockIndexQNorm),
        ("block_k_norm", BlockIndexKNorm),
        ("index_q", IndexQ),
        ("index_k", IndexK),
        ("index_k_norm", IndexKNorm),
        ("index_weights", IndexWeights),
        ("kv", Kv),
        ("attn_router", AttnRouter),
        ("attn_expert_q", AttnExpertQ),
        ("attn_expert_o", AttnExpertO),
        ("attn_experts", AttnExperts),
        ("moe_block", MoeBlock),
        ("dt", DynDt),
        ("dyn_a", DynA),
        ("resid_attn_scale", ResidScaleAttn),
        ("resid_ffn_scale", ResidScaleFfn),
        ("ssm_in", SsmIn),
        ("ssm_conv", SsmConv),
        ("ssm_x", SsmX),
        ("ssm_dt", SsmDt),
        ("ssm_dt_norm", SsmDtNorm),
        ("ssm_b_norm", SsmBNorm),
        ("ssm_c_norm", SsmCNorm),
        ("ssm_dt_bias", SsmDtBias),
        ("ssm_a_log", SsmALog),
        ("ssm_d", SsmD),
        ("ssm_norm", SsmNorm),
        ("ssm_out", SsmOut),
        ("ssm_z", SsmZ),
        ("ssm_ba", SsmBa),
        ("ssm_beta", SsmBeta),
        ("ssm_alpha", SsmAlpha),
        ("ssm_q", SsmQ),
        ("ssm_k", SsmK),
        ("ssm_v", SsmV),
        ("ssm_conv_q", SsmConvQ),
        ("ssm_conv_k", SsmConvK),
        ("ssm_conv_v", SsmConvV),
        ("ssm_f_a", SsmFA),
        ("ssm_f_b", SsmFB),
        ("ssm_g_a", SsmGA),
        ("ssm_g_b", SsmGB),
        ("light_slope", LightSlope),
        ("lru_param", LruParam),
        ("lru_in_gate", LruInGate),
        ("lru_rec_gate", LruRecGate),
        ("tm_key", TmKey),
        ("tm_value", TmValue),
        ("tm_receptance", TmReceptance),
        ("tm_output", TmOutput),
        ("tm_decay", TmDecay),
        ("tm_first", TmFirst),
        ("tm_mix_k", TmMixK),
        ("tm_mix_v", TmMixV),
        ("tm_mix_r", TmMixR),
        ("cm_receptance", CmReceptance),
        ("cm_mix_k", CmMixK),
        ("cm_mix_r", CmMixR),
        ("ngpt_q", NgptQueryScale),
        ("ngpt_gate", NgptGateScale),
        ("ngpt_suv_gate", NgptGateUvScale),
        ("ngpt_suv_up", NgptUpUvScale),
        ("ngpt_rate_attn", NgptRateAttn),
        ("ngpt_rate_ffn", NgptRateFfn),
        ("ngpt_logit_scale", NgptLogitScale),
    ];
    // DeepSeek-V4's own, listed where the model has them.
    const V4_ROLES: &[(&str, Role)] = &[
        ("v4_kv", Role::V4Kv),
        ("v4_kv_norm", Role::V4KvNorm),
        ("v4_o_a", Role::V4OA),
        ("v4_o_b", Role::V4OB),
        ("comp_kv", Role::CompKv),
        ("comp_gate", Role::CompGate),
        ("comp_bias", Role::CompBias),
        ("comp_norm", Role::CompNorm),
        ("index_comp_kv", Role::IndexCompKv),
        ("index_comp_gate", Role::IndexCompGate),
        ("index_comp_bias", Role::IndexCompBias),
        ("index_comp_norm", Role::IndexCompNorm),
        ("hash_table", Role::HashTable),
    ];
    // Roles named in one layout alone, listed where the model has the mechanism.
    let only = |on: bool, roles: &'static [(&'static str, Role)]| if on { roles } else { &[] };
    let special = only(spec.shared.is_some(), SHARED_ROLES)
        .iter()
        .chain(only(spec.altup().is_some(), ALTUP_ROLES))
        .chain(only(spec.gated_norm.is_some(), GATED_NORM_ROLES))
        .chain(only(spec.layout == crate::spec::Layout::Zaya, ZAYA_ROLES))
        .chain(only(spec.layout == crate::spec::Layout::Ergo, ERGO_ROLES))
        .chain(only(spec.attn.v4.is_some(), V4_ROLES))
        .chain(extra);
    let mut out = String::from("{\n");
    let mut transposed = vec![];
    for &(key, role) in roles.iter().chain(special) {
        let (w, _) = names(spec.layout, role, false);
        let (b, _) = names(spec.layout, role, true);
        let (w, b) = (spec.hf_wrap.apply(&w), spec.hf_wrap.apply(&b));
        if !held.contains(w.as_str()) && !held.contains(b.as_str()) {
            continue;
        }
        out += &format!("    {key:?}: ({w:?}, {b:?}),\n");
        if crate::naming::stored_in_out(spec.layout, role) && !spec.layout.stores_in_out() {
            transposed.push(key);
        }
    }
    (out + "}\n", transposed)
}

/// Zamba2's shared blocks' roles, named in its layout alone.
const SHARED_ROLES: &[(&str, Role)] = &[
    ("shared_norm", Role::SharedNorm),
    ("shared_ffn_norm", Role::SharedFfnNorm),
    ("shared_linear", Role::SharedLinear),
    ("q_adapter_a", Role::QAdapterA),
    ("q_adapter_b", Role::QAdapterB),
    ("k_adapter_a", Role::KAdapterA),
    ("k_adapter_b", Role::KAdapterB),
    ("v_adapter_a", Role::VAdapterA),
    ("v_adapter_b", Role::VAdapterB),
    ("gate_up_adapter_a", Role::GateUpAdapterA),
    ("gate_up_adapter_b", Role::GateUpAdapterB),
];

/// Gemma 3n's AltUp and LAuReL roles, named in its layout alone.
const ALTUP_ROLES: &[(&str, Role)] = &[
    ("altup_router_norm", Role::AltUpRouterNorm),
    ("altup_router", Role::AltUpRouter),
    ("altup_predict", Role::AltUpPredict),
    ("altup_correct", Role::AltUpCorrect),
    ("altup_scale", Role::AltUpScale),
    ("altup_proj", Role::AltUpProj),
    ("altup_unembed", Role::AltUpUnembed),
    ("laurel_left", Role::LaurelLeft),
    ("laurel_right", Role::LaurelRight),
    ("laurel_norm", Role::LaurelNorm),
];

/// Ergo's residual gates and expert output norms, named in its layout alone.
const ERGO_ROLES: &[(&str, Role)] = &[
    ("resid_gate_attn", Role::ResidGateAttn),
    ("resid_gate_ffn", Role::ResidGateFfn),
    ("expert_out_norm", Role::ExpertOutNorm),
    ("shared_out_norm", Role::SharedOutNorm),
];

/// ZAYA's attention and router roles, named in its layout alone.
const ZAYA_ROLES: &[(&str, Role)] = &[
    ("cca_v_current", Role::CcaVCurrent),
    ("cca_v_delayed", Role::CcaVDelayed),
    ("cca_dw", Role::CcaConvDepthwise),
    ("cca_gr", Role::CcaConvGrouped),
    ("router_down", Role::RouterDown),
    ("router_norm", Role::RouterNorm),
    ("router_fc1", Role::RouterFc1),
    ("router_fc2", Role::RouterFc2),
];

/// A.X-K2's gated norms' roles, named in its layout alone.
const GATED_NORM_ROLES: &[(&str, Role)] = &[
    ("attn_norm_gate_down", Role::AttnNormDown),
    ("attn_norm_gate_up", Role::AttnNormUp),
    ("gated_ffn_norm", Role::GatedFfnNorm),
    ("ffn_norm_gate_down", Role::FfnNormDown),
    ("ffn_norm_gate_up", Role::FfnNormUp),
];

/// A query scale as the fragments read it (`ScaleForm`).
fn query_scale_json(q: Option<crate::spec::QueryScale>) -> serde_json::Value {
    match q {
        Some(q) => {
            let form = match q.form {
                ScaleForm::Stepped => "stepped",
                ScaleForm::Power => "power",
                ScaleForm::Floored => "floored",
            };
            json!({"form": form, "beta": q.beta, "length": q.length, "shift": q.shift, "nope_only": q.nope_only})
        }
        None => json!(null),
    }
}

/// The model as one runnable Python file; `script` is its file name, for its usage line.
pub fn module(g: &Graph, script: &str) -> String {
    let spec = &g.spec;
    let plan = python_plan(spec);
    let config_py = config_py(spec);
    let run = match spec.draft {
        Some(_) => "--inputs state.npz --out logits.npy",
        None => "--ids 1,2,3 --out logits.npy",
    };
    let decode = if decodes(spec) {
        "\nAdd --prompt N to decode: the first N ids as one sequence, then the rest one token at a time,\neach layer carrying its state from step to step (a recurrent layer's conv inputs and scan\nstate; an attention layer's inputs, from which it recomputes its keys and values).\n"
    } else {
        ""
    };
    let head = format!(
        "#!/usr/bin/env python3\n\"\"\"{} in NumPy, generated by anatomy from its architecture graph.\n\nRun: python3 {} --weights DIR {run}\n(DIR holds config.json and the safetensors files; only NumPy is needed.)\n{decode}\"\"\"",
        crate::fmt::py_doc(&spec.name),
        crate::fmt::py_doc(script)
    );
    let names = name_table(g);
    let p = pieces::pieces(g);
    let body = crate::render::fragment::join(FRAGMENTS, &p);

    format!(
        "{head}\nimport argparse\nimport json\nimport math\nfrom pathlib import Path\n\nimport numpy as np\n\nCONFIG = {config_py}\n\n# Per layer: (mixer and its span, RoPE on, FFN kind).\nPLAN = [\n    {plan},\n]\n\n{names}\n{body}",
        plan = plan.join(",\n    "),
    )
}

/// The model's CONFIG, as a Python literal: every figure the file's functions read.
pub(crate) fn config_py(spec: &Spec) -> String {
    py_literal(&config_json(spec))
}

/// A JSON value as a Python literal, laid out as `serde_json`'s pretty printer lays it out: the
/// literals written as Python's, strings escaped as JSON escapes them (escapes Python reads
/// alike), so a string holding "null" or "true" stays itself.
fn py_literal(v: &serde_json::Value) -> String {
    fn write(v: &serde_json::Value, indent: usize, out: &mut String) {
        use serde_json::Value;
        let pad = |n: usize| "  ".repeat(n);
        match v {
            Value::Null => out.push_str("None"),
            Value::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
            Value::Number(n) => out.push_str(&n.to_string()),
            Value::String(s) => out.push_str(&Value::String(s.clone()).to_string()),
            Value::Array(items) if items.is_empty() => out.push_str("[]"),
            Value::Object(map) if map.is_empty() => out.push_str("{}"),
            Value::Array(items) => {
                out.push_str("[\n");
                for (i, item) in items.iter().enumerate() {
                    out.push_str(&pad(indent + 1));
                    write(item, indent + 1, out);
                    out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
                }
                out.push_str(&pad(indent));
                out.push(']');
            }
            Value::Object(map) => {
                out.push_str("{\n");
                for (i, (k, item)) in map.iter().enumerate() {
                    out.push_str(&pad(indent + 1));
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push_str(": ");
                    write(item, indent + 1, out);
                    out.push_str(if i + 1 < map.len() { ",\n" } else { "\n" });
                }
                out.push_str(&pad(indent));
                out.push('}');
            }
        }
    }
    let mut out = String::new();
    write(v, 0, &mut out);
    out
}

/// The model's CONFIG, every figure the file's functions read, as data.
fn config_json(spec: &Spec) -> serde_json::Value {
    let a = &spec.attn;
    let interleaved = matches!(&spec.position, Position::Rope(r) if r.interleaved);
    let moe = spec.moe.as_ref().map(|m| {
        json!({
            "experts": m.experts, "top_k": m.top_k, "shared": m.shared_experts, "shared_gate": m.shared_gate, "shared_fused": m.shared_fused, "shared_bias": m.shared_bias, "shared_average": m.shared_average, "post_norm": m.post_norm, "eps": m.scoring.jitter_eps(), "scoring": match m.scoring {
                Scoring::Softmax => "softmax", Scoring::Sigmoid => "sigmoid", Scoring::TopkSoftmax => "topk_softmax", Scoring::TopkSigmoid => "topk_sigmoid", Scoring::SigmoidBiasedLogits => "sigmoid_biased_logits", Scoring::SparseMixer { .. } => "sparsemixer", Scoring::SigmoidSink => "sigmoid_sink", Scoring::SqrtSoftplus => "sqrt_softplus" },
            "norm_topk_prob": m.norm_topk_prob, "renorm_eps": m.renorm_eps, "router_bias": m.router_bias, "correction_bias": m.correction_bias,
            "expert_bias": m.expert_bias, "n_group": m.n_group, "topk_group": m.topk_group, "routed_scaling": m.routed_scaling,
            "swiglu_limit": m.swiglu_limit, "stacked": matches!(m.storage, ExpertStorage::Stacked { .. }), "interleaved": matches!(m.storage, ExpertStorage::Stacked { interleaved: true, .. }), "out_in": matches!(m.storage, ExpertStorage::Stacked { out_in: true, .. }), "out_bias": m.out_bias, "router_softcap": m.router_softcap, "flat": m.storage == ExpertStorage::Flat, "glu_softcaps": m.glu_softcaps.map(|(g, u)| [g, u]),
            "expert_intermediate": m.expert_intermediate, "expert_out_norm": m.expert_out_norm, "shared_out_norm": m.shared_out_norm,
        })
    });
    let mut config = json!({
        "hidden": spec.hidden, "vocab": spec.vocab, "heads": a.heads, "kv_heads": a.kv_heads, "head_dim": a.head_dim,
        "qkv_bias": a.qkv_bias, "o_bias": a.o_bias, "qk_norm": match a.qk_norm { QkNorm::None => "none", QkNorm::PerHead => "per_head", QkNorm::Full => "full", QkNorm::L2 => "l2", QkNorm::PerHeadPostRope => "per_head_post_rope", QkNorm::Unit => "unit", QkNorm::HeadWeights => "head_weights" },
        "softcap": a.softcap, "sinks": a.sinks, "scale": a.scale_mult / a.scale_dim.sqrt(), "qkv": match a.qkv { Qkv::Separate => "separate", Qkv::Stacked => "stacked", Qkv::Grouped => "grouped", Qkv::Parts(_) => "parts" }, "clip_qkv": a.clip_qkv,
        "intermediate": spec.mlp.intermediate, "act": act_name(spec.mlp.act), "gated": spec.mlp.gated, "mlp_bias": spec.mlp.bias,
        "fused_gate_up": spec.mlp.fused_gate_up, "moe": moe,
        "norm": match spec.norm.kind { NormKind::Rms | NormKind::PlainRms | NormKind::RmsBias | NormKind::Unit => "rms", NormKind::Layer { .. } | NormKind::Plain => "layer" }, "eps": spec.norm.eps,
        "unit_offset": spec.norm.unit_offset, "place": place_name(spec.norm.place),
        "rope": matches!(spec.position, Position::Rope(_)), "interleaved": interleaved,
        "context": spec.context, "learned_positions": spec.embedding.learned_positions, "embed_scale": spec.embedding.scale_by_sqrt_hidden,
        "tied": spec.tied, "final_softcap": spec.final_softcap, "head_bias": spec.head_bias,
        "block": match spec.block { Block::Sequential => "sequential", Block::Parallel { shared_norm: true } => "parallel_shared", Block::Parallel { shared_norm: false } => "parallel" }, "in_out": spec.layout.stores_in_out(),
        "mla": mla_config(&spec.attn),
    });
    config["image"] = image::config(spec);
    if let Some(m) = spec.moe.as_ref().filter(|m| m.zero_experts > 0) {
        config["moe"]["zero_experts"] = json!(m.zero_experts);
    }
    if let Some(m) = spec
        .moe
        .as_ref()
        .filter(|m| m.router_norm || m.expert_scale)
    {
        config["moe"]["router_norm"] = json!(m.router_norm);
        config["moe"]["expert_scale"] = json!(m.expert_scale);
    }
    if let Some(i) = spec.attn.mla.as_ref().and_then(|m| m.indexer.as_ref()) {
        // Which layers choose for themselves, where not all do (GLM-5).
        if !spec.indexer_reusers().is_empty() {
            config["mla"]["indexer"]["own"] = json!(i.own.iter().collect::<Vec<_>>());
        }
    }
    // Multipliers beside the rest (one json! literal of everything exceeds macro recursion).
    config["norm_bias"] = json!(spec.norm.kind.has_bias());
    config["alibi"] = match &spec.position {
        Position::Alibi(slopes) => json!(slopes),
        Position::Rope(_)
        | Position::Learned
        | Position::Sinusoidal(_)
        | Position::None
        | Position::Buckets(_) => json!(null),
    };
    config["buckets"] = match &spec.position {
        Position::Buckets(b) => json!({"buckets": b.buckets, "max_distance": b.max_distance}),
        Position::Rope(_)
        | Position::Learned
        | Position::Sinusoidal(_)
        | Position::Alibi(_)
        | Position::None => json!(null),
    };
    config["prompt"] = match spec.prompt {
        Some(p) => json!({
            "length": p.length, "first_row": p.row(spec.out_vocab(), 0), "segments": p.segments,
            "prompt_segment": crate::spec::PROMPT_SEGMENT, "text_segment": crate::spec::TEXT_SEGMENT,
        }),
        None => json!(null),
    };
    // QK norms stored one per head (StableLM's `q_layernorm.norms.{e}`).
    config["qk_split"] = json!(crate::naming::qk_norm_per_head(spec.layout));
    config["embed_mult"] = json!(spec.embedding.multiplier);
    config["moa"] = match a.moa {
        Some(m) => json!({"experts": m.experts, "top_k": m.top_k}),
        None => json!(null),
    };
    config["dynamic_mask"] = match a.dynamic_mask {
        Some(d) => json!({"keep": d.keep}),
        None => json!(null),
    };
    config["residual_scales"] = json!(spec.residual == Residual::Scaled);
    config["depth_scaled"] = json!(spec.depth_scaled);
    config["short_conv"] = match spec.short_conv() {
        Some(c) => json!({"kernel": c.kernel, "bias": c.bias}),
        None => json!(null),
    };
    config["recurrent_place"] = json!(spec.recurrent_place.map(place_name));
    config["lightning"] = match spec.lightning() {
        Some(l) => {
            json!({"heads": l.heads, "head_dim": l.head_dim, "eps": l.eps, "act": act_name(l.act)})
        }
        None => json!(null),
    };
    config["rwkv"] = match spec.rwkv() {
        Some(r) => json!({"rescale_every": r.rescale_every}),
        None => json!(null),
    };
    if let Some(m) = spec.mlstm() {
        config["mlstm"] = json!({
            "heads": m.heads, "qk_dim": m.qk_dim, "v_dim": m.v_dim, "gate_cap": m.gate_cap,
            "eps": m.eps, "norm_eps": m.norm_eps,
        });
    }
    config["rg_lru"] = match spec.rg_lru() {
        Some(r) => json!({"width": r.width, "heads": r.heads, "act": act_name(r.act)}),
        None => json!(null),
    };
    config["stream_mix"] = match &spec.stream_mix {
        Some(m) => {
            json!({"attn": [m.attn.0, m.attn.1], "linear": [m.linear.0, m.linear.1], "mlp": [m.mlp.0, m.mlp.1]})
        }
        None => json!(null),
    };
    config["delta"] = match spec.delta() {
        Some(d) => json!({
            "key_heads": d.key_heads, "value_heads": d.value_heads, "key_dim": d.key_dim,
            "value_dim": d.value_dim, "conv_kernel": d.conv_kernel, "eps": d.eps,
            "store": match d.store { DeltaStore::Grouped => "grouped", DeltaStore::Separate => "separate", DeltaStore::Fused => "fused", DeltaStore::Olmo => "olmo", DeltaStore::Kimi => "kimi", DeltaStore::Bailing => "bailing" },
            "beta_scale": d.beta_scale, "gate_floor": d.gate_floor,
        }),
        None => json!(null),
    };
    config["s6"] = match spec.s6() {
        Some(s) => json!({
            "inner": s.inner, "state": s.state, "dt_rank": s.dt_rank, "conv_kernel": s.conv_kernel,
            "conv_bias": s.conv_bias, "bias": s.bias, "bcdt_norm": s.bcdt_norm.map(|b| b.eps),
        }),
        None => json!(null),
    };
    if let Some(s) = spec.s6().filter(|s| s.heads > 1) {
        config["s6"]["heads"] = json!(s.heads);
    }
    config["ssm"] = match spec.ssm() {
        Some(s) => json!({
            "heads": s.heads, "head_dim": s.head_dim, "state": s.state, "groups": s.groups,
            "conv_kernel": s.conv_kernel, "conv_bias": s.conv_bias, "bias": s.bias, "eps": s.eps,
            "dt_floor": s.dt_floor, "part_mults": s.part_mults,
        }),
        None => json!(null),
    };
    config["mup"] = match &spec.mup {
        Some(m) => json!({
            "attn_in": m.attn_in, "attn_out": m.attn_out, "ssm_in": m.ssm_in,
            "ssm_out": m.ssm_out, "mlp_gate": m.mlp_gate, "mlp_down": m.mlp_down,
        }),
        None => json!(null),
    };
    config["v_head_dim"] = json!(a.v_head_dim);
    config["mlp_clamp"] = json!(spec.mlp.clamp);
    config["cca"] = match a.cca {
        Some(c) => json!({"depthwise": c.depthwise, "grouped": c.grouped}),
        None => json!(null),
    };
    let block_index = |a: &Attention| match a.block_index {
        Some(i) => {
            json!({"heads": i.heads, "head_dim": i.head_dim, "block": i.block, "top_k": i.top_k, "local": i.local})
        }
        None => json!(null),
    };
    config["block_index"] = block_index(a);
    let pool_index = |a: &Attention| match &a.pool_index {
        Some(p) => json!({
            "heads": p.heads, "top_k": p.top_k, "pool": p.pool, "compression": p.compression,
            "local": p.local, "sinks": p.sinks, "pools": p.pools.iter().collect::<Vec<_>>(),
        }),
        None => json!(null),
    };
    config["pool_index"] = pool_index(a);
    config["qsa"] = match a.qsa {
        Some(q) => {
            json!({"heads": q.heads, "head_dim": q.head_dim, "budget": q.budget, "ratio": q.ratio})
        }
        None => json!(null),
    };
    config["v_scale"] = json!(a.v_scale);
    let rel = |a: &Attention| match a.rel_logits {
        Some(r) => json!({"d_rel": r.d_rel, "extent": r.extent, "clip": r.clip}),
        None => json!(null),
    };
    let kv_conv = |a: &Attention| match a.kv_conv {
        Some(c) => json!({"scaled": c.conv.scaled, "dynamic": c.dynamic}),
        None => json!(null),
    };
    config["rel_logits"] = rel(a);
    config["kv_conv"] = kv_conv(a);
    config["l2_clip"] = json!(a.l2_clip);
    config["token_sinks"] = json!(a.token_sinks);
    config["kv_inputs"] = json!(a.kv_inputs);
    config["out_conv"] = match spec.out_conv {
        Some(c) => json!({"scaled": c.scaled}),
        None => json!(null),
    };
    config["attn_res"] = match spec.attn_res() {
        Some(r) => json!({"block": r.block, "eps": r.eps, "loop": r.looped.map(|l| json!({
            "start": l.start, "end": l.end, "passes": l.passes,
        }))}),
        None => json!(null),
    };
    config["mlp_scalar"] = json!(spec.mlp.scalar);
    // What differs in the sliding layers' attention, where it differs.
    // The layers whose attention is their own, and what differs in it.
    config["layer_attn"] = json!(spec
        .layer_attn
        .iter()
        .map(|(set, o)| json!({
            "layers": set.iter().collect::<Vec<_>>(), "heads": o.heads, "kv_heads": o.kv_heads,
            "head_dim": o.head_dim, "v_head_dim": o.v_head_dim, "sinks": o.sinks, "v_scale": o.v_scale,
            "scale": o.scale_mult / o.scale_dim.sqrt(),
        }))
        .collect::<Vec<_>>());
    // Latent attention of the layers' own sizes (dots.3 Note's sliding layers), and the
    // layers' own indexer (MiniMax-M3's sparse layers).
    if let Some(list) = config["layer_attn"].as_array_mut() {
        for (entry, (_, o)) in list.iter_mut().zip(&spec.layer_attn) {
            if spec.attn.mla.is_some() {
                entry["mla"] = mla_config(o);
            }
            entry["block_index"] = block_index(o);
            entry["pool_index"] = pool_index(o);
            if spec.attn.rel_logits.is_some() {
                // Inkling's sliding layers: their own reach, and no query scale; Inkling 2's
                // their own convolutions and one input.
                entry["rel_logits"] = rel(o);
                entry["query_scale"] = query_scale_json(o.query_scale);
                entry["kv_conv"] = kv_conv(o);
                entry["kv_inputs"] = json!(o.kv_inputs);
            }
        }
    }
    // Gemma 4's values normed and taken from the keys, and its layers that share keys and values.
    let variants = spec.attn_variants();
    if variants
        .iter()
        .any(|(o, _)| o.v_norm || o.v_from_k || o.shares_kv)
    {
        for (key, get) in [
            (
                "v_norm",
                (|o: &Attention| o.v_norm) as fn(&Attention) -> bool,
            ),
            ("v_from_k", |o| o.v_from_k),
            ("shares_kv", |o| o.shares_kv),
        ] {
            config[key] = json!(get(a));
            if let Some(list) = config["layer_attn"].as_array_mut() {
                for (entry, (_, o)) in list.iter_mut().zip(&spec.layer_attn) {
                    entry[key] = json!(get(o));
                }
            }
        }
    }
    if let Some(p) = spec.per_layer_input {
        config["per_layer_input"] = json!({"width": p.width, "vocab": p.vocab});
    }
    // Layers that read a listed layer's keys and values, not the last of their kind's.
    if !spec.kv_from.is_empty() {
        config["kv_from"] = json!(spec.kv_from);
    }
    if let Some(s) = &spec.shared {
        config["shared"] = json!({
            "layers": s.layers.iter().collect::<Vec<_>>(),
            "blocks": s.blocks,
            "attn_adapters": s.attn_adapters,
        });
    }
    if spec.layer_scalar {
        config["layer_scalar"] = json!(true);
    }
    if spec.moe.as_ref().is_some_and(|m| m.swiglu_plain) {
        config["moe"]["swiglu_plain"] = json!(true);
    }
    if let Some(c) = spec.moe.as_ref().and_then(|m| m.act_clips.as_ref()) {
        config["moe"]["act_clips"] = json!([c.routed, c.shared]);
    }
    if spec.gated_norm.is_some() {
        config["gated_norm"] = json!(true);
    }
    if let Some(a) = spec.altup() {
        config["altup"] =
            json!({"streams": a.streams, "active": a.active, "correct_scale": a.correct_scale});
    }
    if !spec.sparsity.is_empty() {
        // Each layer's Gaussian cut-off z = Φ⁻¹(p) (as float32), or None.
        let z: Vec<Option<f32>> = (0..spec.layers as usize)
            .map(|b| {
                spec.sparsity_at(b)
                    .map(|p| crate::spec::normal_quantile(p) as f32)
            })
            .collect();
        config["sparsity"] = json!(z);
    }
    if let Some(g) = spec.ngpt {
        let a = &spec.attn;
        config["ngpt"] = json!({
            "query": g.query_factor(a.head_dim), "gate": g.gate_factor(spec.hidden),
            "uv": g.uv_factor(spec.hidden), "rate": g.rate_factor(), "logit": g.logit_factor(),
        });
    }
    if let Some(l) = spec.looped() {
        config["looped"] = json!({"input": l.input, "recurrent": l.recurrent, "loops": l.loops});
    }
    if let Some(h) = spec.hierarchy() {
        config["hierarchy"] = json!({
            "per_stack": h.per_stack, "high_cycles": h.high_cycles, "low_cycles": h.low_cycles,
        });
    }
    config["gated_streams"] = match spec.gated_streams() {
        Some(g) => json!({"streams": g.streams, "rank": g.rank}),
        None => json!(null),
    };
    config["ngram_ple"] = match &spec.ngram_ple {
        Some(p) => json!({
            "layers": p.layers.iter().collect::<Vec<_>>(), "ngram": p.ngram, "eos": p.eos,
            "kernel": p.kernel,
            "shards": (0..p.layers.len()).map(|i| p.shards(p.rows(i)).1).collect::<Vec<_>>(),
        }),
        None => json!(null),
    };
    if let Some(h) = spec.hyper() {
        config["hyper"] = json!({
            "streams": h.streams, "magnitude": h.magnitude, "eps": h.eps,
        });
        if let Some(n) = h.sinkhorn {
            config["hyper"]["sinkhorn"] = json!(n);
        }
    }
    if let Some(m) = spec.moe.as_ref() {
        if let Some(h) = &m.hash_layers {
            config["moe"]["hash"] = json!(h.iter().collect::<Vec<_>>());
        }
        if m.shared_clamp {
            config["moe"]["shared_clamp"] = json!(true);
        }
    }
    if let Some(v) = &a.v4 {
        let kinds: Vec<&str> = (0..spec.layers)
            .map(|b| match v.kind(b) {
                crate::spec::V4Kind::Sliding => "sliding",
                crate::spec::V4Kind::Csa(_) => "csa",
                crate::spec::V4Kind::Hca(_) => "hca",
            })
            .collect();
        config["v4"] = json!({
            "kinds": kinds, "window": spec.v4_window(), "csa": v.csa.1, "hca": v.hca.1, "o_groups": v.o_groups,
            "index": {"heads": v.index.heads, "head_dim": v.index.head_dim, "top_k": v.index.top_k},
        });
    }
    config["attn_sub_norm"] = json!(a.sub_norm);
    config["out_gate"] = match a.out_gate {
        Some(g) => {
            json!({"softplus": g.softplus, "per_head": g.per_head, "in_query": g.in_query(), "bias": g.bias})
        }
        None => json!(null),
    };
    config["differential"] = json!(a.differential);
    config["o_bias_last"] = json!(a.o_bias_last);
    config["skip_first_attn_norm"] = json!(spec.skip_first_attn_norm);
    config["head_transform"] = match spec.head_transform {
        Some(t) => json!({"act": act_name(t.act), "bias": t.bias}),
        None => json!(null),
    };
    config["ffn_sub_norm"] = json!(spec.mlp.sub_norm);
    if let Qkv::Parts(n) = a.qkv {
        config["qkv_parts"] = json!(n);
    }
    config["query_scale"] = query_scale_json(a.query_scale);
    config["sinusoidal"] = match spec.position {
        Position::Sinusoidal(crate::spec::Sinusoids::Fairseq) => json!("fairseq"),
        Position::Sinusoidal(crate::spec::Sinusoids::Ctrl) => json!("ctrl"),
        Position::Rope(_)
        | Position::Learned
        | Position::Alibi(_)
        | Position::None
        | Position::Buckets(_) => json!(null),
    };
    config["embed_norm"] = json!(spec.embedding.norm);
    config["embed_proj"] = json!(spec.embedding.projected.is_some());
    config["position_offset"] = json!(spec.embedding.position_offset);
    config["residual_mult"] = json!(spec.residual_mult);
    config["logits_mult"] = json!(spec.logits_mult);
    config["logits_kept"] = json!(spec.logits_kept);
    if let Some(d) = spec.draft {
        config["draft"] = json!({
            "backbone": d.backbone,
            "centroids": d.centroids.map(|c| json!({"count": c.count, "top_k": c.top_k})),
        });
    }
    config
}

/// Whether the file decodes token by token (`--prompt`): a model with a recurrent mixer, whose
/// state is what decoding carries, and nothing else that reads earlier positions outside its
/// mixers (which `attention_so_far`, the mixers' states and Qwen4-Exp's n-gram embeddings' cover).
pub(crate) fn decodes(spec: &Spec) -> bool {
    spec.plan.iter().any(|l| l.mixer.recurrent())
        && spec.draft.is_none()
        && spec.attn_variants().iter().all(|(a, _)| !a.kv_inputs)
}

/// The activation's name in CONFIG, one per kind `act()` computes.
fn act_name(a: Act) -> &'static str {
    match a {
        Act::Silu => "silu",
        Act::Gelu => "gelu",
        Act::GeluTanh => "gelu_tanh",
        Act::QuickGelu => "quick_gelu",
        Act::Relu => "relu",
        Act::Relu2 => "relu2",
        Act::Xielu => "xielu",
    }
}

/// This model's RoPE: a function per set of frequencies (full-attention layers, and sliding ones
/// where they differ) and `rope_tables` choosing by the layer's span. Empty without RoPE.
fn rope(spec: &Spec) -> String {
    let Position::Rope(r) = &spec.position else {
        return "def rope_tables(T, span):\n    raise AssertionError(\"this model has no rotary embedding\")".into();
    };
    // The head size of the layers of each span (Gemma 4's global heads are larger).
    let hd = |span| {
        let a = spec.attn_for(span);
        a.mla.as_ref().map_or(a.head_dim, |m| m.qk_rope_head_dim)
    };
    let dim = r.rotary_dim(hd(AttnSpan::Full));
    let mut out = freqs(&r.full, "rope_frequencies", dim);
    // DeepSeek-V4's compressed layers rotate by frequencies of their own.
    if let Some(v) = &spec.attn.v4 {
        out += "\n\n\n";
        out += &freqs(&v.compress_freqs, "compress_rope_frequencies", v.rope_dim);
    }
    let pick = match &r.sliding {
        Some(s) => {
            let sliding = AttnSpan::Sliding(1);
            out += "\n\n\n";
            out += &freqs(
                s,
                "sliding_rope_frequencies",
                r.rotary_dim_for(sliding, hd(sliding)),
            );
            "    frequencies = sliding_rope_frequencies if span[0] == \"sliding\" else rope_frequencies\n"
        }
        None => "    frequencies = rope_frequencies  # the same in every layer\n",
    };
    let sin = if r.reversed {
        "-(np.sin(ang) * factor).astype(np.float32)  # sin negated: this model rotates backwards"
    } else {
        "(np.sin(ang) * factor).astype(np.float32)"
    };
    // M-RoPE (Qwen2-VL): the pairs turn by time, row or column where an image set them.
    if let Some(m) = spec.image.as_ref().and_then(|i| i.encoder.mrope()) {
        let axes = m.axes(dim as usize / 2);
        return out + &format!(
            "\n\n\ndef rope_tables(T, span):\n    # -> cos, sin: [T, rot_dim] for positions 0..T-1, or where an image set them each token's time, row and column (M-RoPE)\n{pick}    inv, factor = frequencies(T)  # inv: [rot_dim / 2]\n    pos = IMAGE[\"positions\"][:, :T] if \"positions\" in IMAGE else np.tile(np.arange(T), (3, 1))  # [3, T]\n    axis = np.array({axes:?})  # [rot_dim / 2]: the axis each pair turns by\n    ang = pos[axis].T.astype(np.float32) * inv[None, :]  # [T, rot_dim / 2]\n    ang = np.concatenate([ang, ang], -1)  # [T, rot_dim]\n    return (np.cos(ang) * factor).astype(np.float32), {sin}"
        );
    }
    // PaliGemma's positions count from 1.
    let (positions, first) = match r.start {
        0 => (
            "np.arange(T, dtype=np.float32)".to_string(),
            "0..T-1".to_string(),
        ),
        s => (
            format!("np.arange({s}, T + {s}, dtype=np.float32)"),
            format!("{s}..T+{}", s as i64 - 1),
        ),
    };
    out + &format!(
        "\n\n\ndef rope_tables(T, span):\n    # -> cos, sin: [T, rot_dim] for positions {first} in a layer of this span\n{pick}    inv, factor = frequencies(T)  # inv: [rot_dim / 2]\n    ang = {positions}[:, None] * inv[None, :]  # [T, rot_dim / 2]\n    ang = np.concatenate([ang, ang], -1)  # [T, rot_dim]\n    return (np.cos(ang) * factor).astype(np.float32), {sin}"
    )
}

/// One set of inverse frequencies for a sequence of `seq_len` tokens, as transformers computes
/// them (`modeling_rope_utils`), with this model's numbers written in.
pub(crate) fn freqs(f: &RopeFreqs, name: &str, dim: u64) -> String {
    use crate::fmt::float;
    let base = float(f.theta);
    let body = match &f.scaling {
        RopeScaling::None => String::new(),
        RopeScaling::Linear { factor } => format!("    inv = inv / {}  # linear scaling\n", float(*factor)),
        RopeScaling::Dynamic { factor, original } => format!(
            "    if seq_len > {original}:  # dynamic NTK: the base grows past {original} positions\n        base = {base} * (({f} * seq_len / {original}) - ({f} - 1)) ** ({dim} / ({dim} - 2))\n        inv = 1.0 / base ** (np.arange(0, {dim}, 2, dtype=np.float64) / {dim})\n",
            f = float(*factor)
        ),
        RopeScaling::Llama3 { factor, low_freq_factor, high_freq_factor, original } => format!(
            "    # llama3: long wavelengths slowed by {f}, short ones kept, a smooth ramp between\n    wl = 2 * math.pi / inv  # [{half}]\n    scaled = np.where(wl > {original} / {low}, inv / {f}, inv)\n    smooth = ({original} / wl - {low}) / ({high} - {low})\n    medium = (wl >= {original} / {high}) & (wl <= {original} / {low})\n    inv = np.where(medium, (1 - smooth) * scaled / {f} + smooth * scaled, scaled)\n",
            f = float(*factor), low = float(*low_freq_factor), high = float(*high_freq_factor), half = dim / 2
        ),
        RopeScaling::Yarn { factor, original, beta_fast, beta_slow, attention_factor, truncate } => format!(
            "    # YaRN: low frequencies interpolated ×{f}, high ones kept, a linear ramp between\n    cdim = lambda r: ({dim} * math.log({original} / (r * 2 * math.pi))) / (2 * math.log({base}))\n    lo, hi = cdim({fast}), cdim({slow})\n{trunc}    lo, hi = max(lo, 0), min(hi, {dim} - 1)\n    if lo == hi:\n        hi += 0.001\n    extra = 1 - np.clip((np.arange({half}) - lo) / (hi - lo), 0, 1)  # [{half}]\n    inv = inv / {f} * (1 - extra) + inv * extra\n    factor = {attention_factor}\n",
            f = float(*factor), fast = float(*beta_fast), slow = float(*beta_slow), half = dim / 2,
            trunc = if *truncate { "    lo, hi = math.floor(lo), math.ceil(hi)\n" } else { "    # truncate: false, the ramp's ends stay fractional\n" }
        ),
        RopeScaling::Proportional { factor, fraction } => format!(
            "    # proportional: the first {turning} of the {half} pairs turn, the rest stay still\n    inv = np.where(np.arange({half}) < {turning}, inv / {f}, 0.0)\n",
            turning = (fraction * dim as f64 / 2.0).floor() as u64, half = dim / 2, f = float(*factor)
        ),
        RopeScaling::LongRope { short, original, mscale: Some((s, l)), .. } => format!(
            "    # LongRoPE as PhiMoE reads it: the short factors at every length; cos and sin ×{s} up to {original} positions, ×{l} beyond\n    ext = np.array({short:?})  # [{half}]\n    inv = 1.0 / (ext * {base} ** (np.arange(0, {dim}, 2, dtype=np.float64) / {dim}))\n    factor = {l} if seq_len > {original} else {s}\n",
            half = dim / 2
        ),
        RopeScaling::LongRope { short, long, original, attention_factor, mscale: None } => format!(
            "    # LongRoPE: one factor per rotated pair, short up to {original} positions, long beyond\n    ext = np.array({long:?} if seq_len > {original} else {short:?})  # [{half}]\n    inv = 1.0 / (ext * {base} ** (np.arange(0, {dim}, 2, dtype=np.float64) / {dim}))\n    factor = {attention_factor}\n",
            half = dim / 2
        ),
    };
    format!(
        "def {name}(seq_len):\n    # -> inverse frequencies [{half}] of {dim} rotated dims ({desc}), and the factor on cos and sin\n    inv = 1.0 / {base} ** (np.arange(0, {dim}, 2, dtype=np.float64) / {dim})  # [{half}]\n    factor = 1.0\n{body}    return inv.astype(np.float32), factor",
        half = dim / 2,
        desc = f.describe()
    )
}

/// The Python the file is joined from, one fragment per mechanism (named as graph/'s files
/// where it has one), in the order the file reads: ops with their shapes commented, each
/// mechanism's functions, forward() and main().
pub(crate) const FRAGMENTS: &[(&str, &str)] = &[
    ("weights.py", include_str!("py/weights.py")),
    ("ops.py", include_str!("py/ops.py")),
    ("image.py", include_str!("py/image.py")),
    ("position.py", include_str!("py/position.py")),
    ("kv_conv.py", include_str!("py/kv_conv.py")),
    ("rel_logits.py", include_str!("py/rel_logits.py")),
    ("attention.py", include_str!("py/attention.py")),
    ("moa.py", include_str!("py/moa.py")),
    ("mla.py", include_str!("py/mla.py")),
    ("indexer.py", include_str!("py/indexer.py")),
    ("cca.py", include_str!("py/cca.py")),
    ("pool_index.py", include_str!("py/pool_index.py")),
    ("qsa.py", include_str!("py/qsa.py")),
    ("ssm.py", include_str!("py/ssm.py")),
    ("mlstm.py", include_str!("py/mlstm.py")),
    ("rwkv.py", include_str!("py/rwkv.py")),
    ("rglru.py", include_str!("py/rglru.py")),
    ("lightning.py", include_str!("py/lightning.py")),
    ("delta.py", include_str!("py/delta.py")),
    ("ffn.py", include_str!("py/ffn.py")),
    ("moe.py", include_str!("py/moe.py")),
    ("shared.py", include_str!("py/shared.py")),
    ("embedding.py", include_str!("py/embedding.py")),
    ("per_layer.py", include_str!("py/per_layer.py")),
    ("decode.py", include_str!("py/decode.py")),
    ("layer.py", include_str!("py/layer.py")),
    ("draft.py", include_str!("py/draft.py")),
    ("head.py", include_str!("py/head.py")),
    ("attn_res.py", include_str!("py/attn_res.py")),
    ("hyper.py", include_str!("py/hyper.py")),
    ("hierarchy.py", include_str!("py/hierarchy.py")),
    ("v4.py", include_str!("py/v4.py")),
    ("gated.py", include_str!("py/gated.py")),
    ("ngram.py", include_str!("py/ngram.py")),
    ("gated_norm.py", include_str!("py/gated_norm.py")),
    ("altup.py", include_str!("py/altup.py")),
    ("forward.py", include_str!("py/forward.py")),
    ("blt.py", include_str!("py/blt.py")),
    ("main.py", include_str!("py/main.py")),
];

/// Function `name` of a generated file (`module`), as it is there.
pub fn function_in<'m>(module: &'m str, name: &str) -> Option<&'m str> {
    let start = module.find(&format!("\ndef {name}("))? + 1;
    let end = module[start..]
        .find("\n\n\n")
        .map_or(module.len(), |e| start + e);
    Some(&module[start..end])
}

/// This model's CONFIG as data, for `config_read_by`.
pub fn config(spec: &Spec) -> serde_json::Map<String, serde_json::Value> {
    let serde_json::Value::Object(all) = config_json(spec) else {
        unreachable!("CONFIG is an object")
    };
    all
}

/// The entries of `config` (`config(spec)`) that `code` reads (`CONFIG["key"]`, or `C["key"]`
/// where the functions call it `C`; not the keys of its parts, such as `P["heads"]` of an
/// indexer's own settings), as a Python assignment; `None` where it reads none.
pub fn config_read_by(
    config: &serde_json::Map<String, serde_json::Value>,
    code: &str,
) -> Option<String> {
    let reads = |k: &str| {
        ["CONFIG", "C"]
            .iter()
            .any(|c| code.contains(&format!("{c}[\"{k}\"]")))
    };
    let read: serde_json::Map<String, serde_json::Value> = (config.iter())
        .filter(|(k, _)| reads(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    (!read.is_empty()).then(|| format!("CONFIG = {}", py_literal(&read.into())))
}

#[cfg(test)]
mod tests {
    use crate::{catalog, families};

    fn file(name: &str) -> String {
        let e = catalog::get(name).unwrap();
        let spec = families::load_json(name, e.json, name, false).unwrap();
        super::module(&crate::graph::build(&spec).unwrap(), "model.py")
    }

    /// Python literals are written as such, and a string that holds one stays itself; the
    /// layout is serde_json's pretty one, which the op view reads line by line.
    #[test]
    fn a_config_string_holding_a_literal_stays_itself() {
        let v = serde_json::json!({
            "act": "null_or_true_or_false", "eps": 1e-5, "gated": true, "cap": null,
            "heads": [4, false], "empty": [], "nested": {}, "quote": "a\"b\\c",
        });
        let py = super::py_literal(&v);
        let want = r#"{
  "act": "null_or_true_or_false",
  "eps": 0.00001,
  "gated": True,
  "cap": None,
  "heads": [
    4,
    False
  ],
  "empty": [],
  "nested": {},
  "quote": "a\"b\\c"
}"#;
        assert_eq!(py, want);
        assert!(py.contains("\"null_or_true_or_false\""), "{py}");
    }

    /// Each file holds the functions its model runs, and no others.
    #[test]
    fn holds_only_what_the_model_runs() {
        let llama = file("llama-3.2-1b");
        for absent in [
            "def mla_attention(",
            "def moe(",
            "def route(",
            "def xielu(",
            "mla_attention(x",
        ] {
            assert!(!llama.contains(absent), "Llama's file has {absent}");
        }
        let deepseek = file("deepseek-v3");
        for present in ["def mla_attention(", "def moe(", "def route("] {
            assert!(
                deepseek.contains(present),
                "DeepSeek's file lacks {present}"
            );
        }
        assert!(file("apertus-8b").contains("def xielu("));
    }
}
