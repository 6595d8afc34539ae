//! gpt-oss (`gpt_oss`): GQA with a bias on every projection and a learned sink logit per head,
//! sliding-window (128) and full layers alternating, YaRN RoPE; every layer a mixture of experts
//! with a biased router (softmax over the top-k logits), experts stored stacked with biases and
//! gate/up interleaved, and a clamped SwiGLU. Defaults follow `GptOssConfig`.

use super::{
    experts, heads, layer_count, layer_types, plain_attention, plain_moe, pre_rms, rope, top_k,
    HeadDim, RopeDefaults,
};
use crate::config::Config;
use crate::error::Result;
use crate::spec::*;

pub fn load(cfg: &Config, _model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, "gpt_oss", family);
    s.vocab = cfg.size("vocab_size", Some(201_088))?;
    s.hidden = cfg.size("hidden_size", Some(2880))?;
    s.layers = layer_count(cfg, &["num_hidden_layers"], Some(36))?;
    s.context = cfg.size("max_position_embeddings", Some(131_072))?;
    let (h, kv, hd) = heads(cfg, s.hidden, Some(64), Some(8), HeadDim::Given(64))?;
    let bias = cfg.flag("attention_bias", true)?;
    s.attn = Attention {
        qkv_bias: bias,
        o_bias: bias,
        sinks: true,
        ..plain_attention(h, kv, hd)
    };
    let f = cfg.size("intermediate_size", Some(2880))?;
    s.mlp = Mlp {
        bias: true,
        ..Mlp::gated(f, super::act(cfg, "hidden_act", "silu")?)
    };
    // The experts' gate reads σ(1.702 · g): anatomy draws that constant.
    let alpha = cfg.float("swiglu_alpha", 1.702)?;
    if alpha != 1.702 {
        return Err(cfg.err(
            "swiglu_alpha",
            format!("is {alpha}; anatomy draws gpt-oss's clamped SwiGLU with σ(1.702 · gate), as released"),
        ));
    }
    let e = experts(cfg, "num_local_experts", Some(128))?;
    let k = top_k(cfg, e, Some(4))?;
    s.moe = Some(Moe {
        scoring: Scoring::TopkSoftmax,
        router_bias: true,
        expert_bias: true,
        swiglu_limit: Some(cfg.float("swiglu_limit", 7.0)?),
        storage: ExpertStorage::Stacked {
            out_in: false,
            interleaved: true,
        },
        ..plain_moe(e, k, f)
    });
    let window = super::window(cfg, Some(128))?;
    let spans = match layer_types(cfg, s.layers, window, false)? {
        Some(spans) => spans,
        None => (0..s.layers)
            .map(|i| match window {
                Some(w) if (i + 1) % 2 == 1 => AttnSpan::Sliding(w),
                _ => AttnSpan::Full,
            })
            .collect(),
    };
    s.plan = super::uniform_plan(spans, true);
    s.norm = pre_rms(cfg, 1e-5)?;
    // GptOssConfig's default: YaRN ×32 from 4096 tokens, without truncation.
    let defaults = RopeDefaults {
        scaling: Some(|_| RopeScaling::Yarn {
            factor: 32.0,
            original: 4096,
            beta_fast: 32.0,
            beta_slow: 1.0,
            attention_factor: 0.1 * 32f64.ln() + 1.0,
            truncate: false,
        }),
        ..RopeDefaults::new(150_000.0, s.context)
    };
    s.position = Position::Rope(rope(cfg, &defaults)?);
    s.tied = cfg.flag("tie_word_embeddings", false)?;
    s.layout = Layout::GptOss;
    Ok(s)
}
