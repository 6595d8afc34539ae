//! Which pieces of the NumPy fragments a model's file holds: one line per piece, on where the
//! Spec has what it computes.

use crate::render::fragment::Pieces;
use crate::spec::Spec;

pub(super) fn pieces(spec: &Spec) -> Pieces {
    let mut p = Pieces::default();
    // Dory's nGPT: learned scales on queries, gates, the MLP's halves and the logits.
    p.set("ngpt", spec.ngpt.is_some());
    // DeepSeek-V4's layers whose experts are chosen by token id.
    p.set("hashed", spec.moe.as_ref().is_some_and(|m| m.hash_layers.is_some()));
    // Ling's clips after the activation (per layer, routed and shared apart).
    p.set("act_clips", spec.moe.as_ref().is_some_and(|m| m.act_clips.is_some()));
    // The shared experts' SwiGLU clamped as the routed ones' (HY v4).
    p.set("shared_clamp", spec.moe.as_ref().is_some_and(|m| m.shared_clamp));
    // DeepSeek-V4's compressed attention, in place of the plain one.
    p.set("v4", spec.attn.v4.is_some());
    // Hyper-connections whose streams' mix is a Sinkhorn-normalised matrix.
    p.set("sinkhorn", spec.hyper().is_some_and(|h| h.sinkhorn.is_some()));
    // Softcaps on the experts' gate and up halves.
    p.set("glu_softcaps", spec.moe.as_ref().is_some_and(|m| m.glu_softcaps.is_some()));
    let variants = spec.attn_variants();
    let any = |f: &dyn Fn(&crate::spec::Attention) -> bool| variants.iter().any(|(a, _)| f(a));
    // Attention residuals: each sublayer reads a mix of the block summaries; looped, with
    // messages from the pass before.
    p.set("attn_res", spec.attn_res().is_some());
    p.set("looped_messages", spec.attn_res().is_some_and(|r| r.looped.is_some()));
    // Layers whose K and V read inputs of their own.
    p.set("kv_inputs", any(&|a| a.kv_inputs) || spec.attn_res().is_some_and(|r| r.looped.is_some()));
    // Convolutions over the keys and values (static, or with each token's own taps).
    p.set("kv_conv", any(&|a| a.kv_conv.is_some()));
    p.set("dynamic_conv", any(&|a| a.kv_conv.is_some_and(|c| c.dynamic)));
    // Queries and keys (or relative logits' inputs) no longer than a threshold.
    p.set("l2_clip", any(&|a| a.l2_clip.is_some()));
    p.set("rel_clip", any(&|a| a.rel_logits.is_some_and(|r| r.clip.is_some())));
    p.set("l2_clip_fn", any(&|a| a.l2_clip.is_some() || a.rel_logits.is_some_and(|r| r.clip.is_some())));
    // A sink logit per token, from its own projection.
    p.set("token_sinks", any(&|a| a.token_sinks));
    // Each query's own bias for each key's distance.
    p.set("rel_logits", any(&|a| a.rel_logits.is_some()));
    p.set("query_scale_any", any(&|a| a.query_scale.is_some()));
    // Convolutions over the sublayers' outputs.
    p.set("out_conv", spec.out_conv.is_some());
    p.set("residual_conv", spec.out_conv.is_some() || any(&|a| a.kv_conv.is_some()));
    p.set("mlp_scalar", spec.mlp.scalar);
    // An embedding narrower than the stream, projected in and out.
    p.set("embed_proj", spec.embedding.projected.is_some());
    p.set("logits_kept", spec.logits_kept.is_some());
    p.set("moe_sink", spec.moe.as_ref().is_some_and(|m| m.scoring == crate::spec::Scoring::SigmoidSink));
    p.set("buckets", matches!(spec.position, crate::spec::Position::Buckets(_)));
    // Multi-head latent attention, its indexer (which layers choose their own keys), its
    // latents' scales and its rotated key's norm.
    let mla = spec.attn.mla.as_ref();
    p.set("mla", mla.is_some());
    p.set("indexer", mla.is_some_and(|m| m.indexer.is_some()));
    p.set("indexer_reuse", mla.is_some_and(|m| m.indexer.is_some()) && !spec.indexer_reusers().is_empty());
    p.set("indexer_lora", mla.is_some_and(|m| m.indexer.is_some() && m.lora_scales.is_some()));
    p.set("lora_scales", any(&|a| a.mla.as_ref().is_some_and(|m| m.lora_scales.is_some())));
    p.set("rope_key_norm", any(&|a| a.mla.as_ref().is_some_and(|m| m.rope_key_norm)));
    // Layers with attention sizes of their own.
    p.set("layer_attn", !spec.layer_attn.is_empty());
    let moe = spec.moe.as_ref();
    p.set("zero_experts", moe.is_some_and(|m| m.zero_experts > 0));
    // A router that reads its input normed and scaled (or another input than the experts').
    p.set("router_norm", moe.is_some_and(|m| m.router_norm));
    p.set("expert_scale", moe.is_some_and(|m| m.expert_scale));
    let ffn = |f: crate::spec::Ffn| spec.plan.iter().any(|l| l.ffn == f);
    // Gemma 4: the MLP and the experts side by side.
    p.set("dense_and_moe", ffn(crate::spec::Ffn::DenseAndMoe));
    // LongCat-Flash: two sublayers per checkpoint layer; the experts' output added a layer later.
    p.set("longcat", spec.layout == crate::spec::Layout::LongCat);
    p.set("shortcut", ffn(crate::spec::Ffn::Shortcut));
    // Layers that reuse another's keys and values, or take the values from the keys.
    p.set("shares_kv", any(&|a| a.shares_kv));
    p.set("k_only", any(&|a| a.shares_kv || a.v_from_k));
    p.set("v_norm", any(&|a| a.v_norm));
    p.set("indexer_rope_last", mla.and_then(|m| m.indexer.as_ref()).is_some_and(|i| i.rope_last));
    p.set("altup", spec.altup().is_some());
    p.set("gated_norm", spec.gated_norm.is_some());
    // A latent query whose projection holds the heads' output gate too.
    p.set("q_gate", mla.is_some_and(|m| m.q_gate));
    // Gaussian cut-offs of the MLP's gate, per layer.
    p.set("sparsity", !spec.sparsity.is_empty());
    p.set("ple_clamp_ids", spec.per_layer_input.is_some_and(|p| p.clamp_ids));
    p.set("rms_bias", spec.norm.kind == crate::spec::NormKind::RmsBias);
    p.set("final_norm_plain", spec.final_norm_kind.is_some_and(|k| !k.has_bias()) && spec.norm.kind.has_bias());
    // xLSTM's projections: apart or fused (`weight_mode`), with biases or not.
    p.set("mlstm_fused", spec.mlstm().is_some_and(|m| m.fused));
    p.set("mlstm_bias", spec.mlstm().is_some_and(|m| m.bias));
    p.set("hierarchy", spec.hierarchy().is_some());
    // A gate on the heads' outputs stored before the queries in the stacked projection.
    p.set("gate_before_qkv", spec.attn.out_gate.is_some_and(|g| g.before_qkv()));
    p.set("gate_bias", any(&|a| a.out_gate.is_some_and(|g| g.bias)));
    p.set("gated_streams", spec.gated_streams().is_some());
    p.set("ngram_ple", spec.ngram_ple.is_some());
    p.set("qsa", any(&|a| a.qsa.is_some()));
    p.set("hyper", spec.hyper().is_some());
    // A learned sink logit per head in latent attention.
    p.set("sinks", mla.is_some() && spec.attn.sinks);
    // The experts' clamped SwiGLU as a plain product (HY v4), not gpt-oss's form.
    p.set("swiglu_plain", moe.is_some_and(|m| m.swiglu_plain));
    p.set("per_layer_input", spec.per_layer_input.is_some());
    p.set("layer_scalar", spec.layer_scalar);
    p.set("dynamic_mask", spec.attn.dynamic_mask.is_some());
    p.set("depth_scaled", spec.depth_scaled);
    p.set("residual_scales", spec.residual == crate::spec::Residual::Scaled);
    p.set("moa", spec.attn.moa.is_some());
    p.set("v_scale", !variants.iter().all(|(a, _)| a.v_scale == 1.0));
    // Layers that cross-attend to an image, which text alone skips.
    p.set("cross", !spec.plan.iter().all(|l| l.mixer.runs_on_text()));
    p.set("query_scale", spec.attn.query_scale.is_some());
    p.set("sinusoidal", matches!(spec.position, crate::spec::Position::Sinusoidal(_)));
    p.set("xielu", spec.mlp.act == crate::spec::Act::Xielu);
    p
}
