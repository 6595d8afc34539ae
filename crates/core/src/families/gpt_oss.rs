//! gpt-oss (`gpt_oss`): GQA with a bias on every projection and a learned sink logit per head,
//! sliding-window (128) and full layers alternating, YaRN RoPE; every layer a mixture of experts
//! with a biased router (softmax over the top-k logits), experts stored stacked with biases and
//! gate/up interleaved, and a clamped SwiGLU. Defaults follow `GptOssConfig`.

use super::{
    experts, heads, layer_count, layer_types, plain_attention, plain_moe, pre_rms, rope, top_k,
};
use crate::config::Config;
use crate::error::Result;
use crate::spec::*;

pub fn load(cfg: &Config, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, "gpt_oss", family);
    s.vocab = cfg.size("vocab_size", Some(201_088))?;
    s.hidden = cfg.size("hidden_size", Some(2880))?;
    s.layers = layer_count(cfg, &["num_hidden_layers"], Some(36))?;
    s.context = cfg.size("max_position_embeddings", Some(131_072))?;
    let (h, kv, hd) = heads(cfg, s.hidden, Some(64), Some(8), Some(64))?;
    let bias = cfg.flag("attention_bias", true)?;
    s.attn = Attention {
        qkv_bias: bias,
        o_bias: bias,
        sinks: true,
        ..plain_attention(h, kv, hd)
    };
    let f = cfg.size("intermediate_size", Some(2880))?;
    s.mlp = Mlp {
        intermediate: f,
        act: cfg.string("hidden_act", "silu")?,
        gated: true,
        bias: true,
        fused_gate_up: false,
    };
    let e = experts(cfg, "num_local_experts", Some(128))?;
    let k = top_k(cfg, e, Some(4))?;
    s.moe = Some(Moe {
        scoring: Scoring::TopkSoftmax,
        router_bias: true,
        expert_bias: true,
        swiglu_limit: Some(cfg.float("swiglu_limit", 7.0)?),
        stacked_experts: true,
        gate_up_interleaved: true,
        ..plain_moe(e, k, f)
    });
    let window = if cfg.map.contains_key("sliding_window") {
        cfg.opt_size("sliding_window")?
    } else {
        Some(128)
    };
    let spans = match layer_types(cfg, s.layers, window)? {
        Some(spans) => spans,
        None => (0..s.layers)
            .map(|i| match window {
                Some(w) if (i + 1) % 2 == 1 => AttnSpan::Sliding(w),
                _ => AttnSpan::Full,
            })
            .collect(),
    };
    s.plan = spans
        .into_iter()
        .map(|attn| LayerPlan {
            attn,
            rope: true,
            moe: true,
        })
        .collect();
    s.norm = pre_rms(cfg, 1e-5)?;
    let mut r = rope(cfg, 150_000.0)?;
    if !cfg.has("rope_scaling") && !cfg.has("rope_parameters") {
        // GptOssConfig's default: YaRN ×32 from 4096 tokens.
        r.scaling = RopeScaling {
            kind: "yarn".into(),
            factor: Some(32.0),
            original_context: Some(4096),
            params: vec![("beta_fast".into(), 32.0), ("beta_slow".into(), 1.0)],
        };
    }
    s.position = Position::Rope(r);
    s.tied = cfg.flag("tie_word_embeddings", false)?;
    s.layout = Layout::GptOss;
    Ok(s)
}
