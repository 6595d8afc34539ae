//! The mechanisms a Spec uses, by name: what a test holds against the executor's fixtures, so
//! that every mechanism is run by at least one checkpoint transformers made, through every view
//! (the executor, the NumPy export, the PyTorch reference, the page and the op view read them
//! all). The Spec and its parts are destructured without `..`: a new field or variant does not
//! compile until it is named here, and `ALL` then asks for a fixture that uses it.

use crate::spec::*;
use std::collections::BTreeSet;

/// Every name `mechanisms` gives, grouped by what they are.
#[rustfmt::skip]
pub const ALL: &[&str] = &[
    "attention:mha", "attention:gqa", "attention:mqa", "attention:mla",
    "span:full", "span:sliding", "span:chunked", "span:whole",
    "mixer:attention", "mixer:mamba2", "mixer:mamba", "mixer:short_conv", "mixer:delta_net",
    "mixer:lightning", "mixer:rg_lru", "mixer:rwkv", "mixer:mlstm", "mixer:parallel",
    "mixer:none", "mixer:cross_attention",
    "ffn:dense", "ffn:moe", "ffn:channel_mix", "ffn:dense_and_moe", "ffn:shortcut", "ffn:none",
    "qk_norm:per_head", "qk_norm:full", "qk_norm:l2", "qk_norm:per_head_post_rope",
    "qkv:separate", "qkv:stacked", "qkv:grouped", "qkv:parts",
    "out_gate:own", "out_gate:in_query", "out_gate:before_qkv",
    "attn:qkv_bias", "attn:o_bias", "attn:softcap", "attn:sinks", "attn:clip_qkv",
    "attn:query_scale", "attn:sub_norm", "attn:differential", "attn:moa", "attn:v_norm",
    "attn:v_from_k", "attn:shares_kv", "attn:dynamic_mask", "attn:indexer", "attn:layer_variants",
    "position:rope", "position:rope_sliding", "position:rope_partial", "position:rope_interleaved",
    "position:rope_reversed", "position:learned", "position:sinusoidal", "position:alibi", "position:none",
    "position:buckets", "prompt", "prefix_lm", "position:rope_start",
    "norm:rms", "norm:layer", "norm:layer_no_bias", "norm:plain", "norm:plain_rms", "norm:rms_bias", "norm:unit_offset", "final_norm_kind",
    "place:pre", "place:post", "place:sandwich", "place:post_residual", "place:normed",
    "block:sequential", "block:parallel_shared", "block:parallel",
    "embedding:sqrt_hidden", "embedding:multiplier", "embedding:norm", "embedding:learned_positions",
    "embedding:projected",
    "mlp:gated", "mlp:bias", "mlp:fused_gate_up", "mlp:sub_norm", "mlp:widths", "mlp:sparsity",
    "moe:shared_experts", "moe:shared_gate", "moe:router_bias", "moe:correction_bias", "moe:groups",
    "moe:zero_experts", "moe:softmax", "moe:sigmoid", "moe:topk_softmax", "moe:topk_sigmoid",
    "moe:sigmoid_biased_logits", "moe:sparse_mixer", "moe:per_expert", "moe:stacked", "moe:flat",
    "recurrent_place", "mup", "stream_mix", "tied", "final_softcap", "logits_mult", "residual_mult",
    "residual_scales", "depth_scaled", "head_bias", "skip_first_attn_norm", "head_transform",
    "per_layer_input", "layer_scalar", "shared_blocks", "hyper", "altup", "hierarchy", "laurel",
    "gated_norm", "head_rows", "mlstm:bias", "mlstm:fused",
    "mla:no_q_latent", "mla:bias", "mla:lora_scales", "mla:q_gate", "mla:latent_eps",
    "mla:rope_key_norm", "mlp:clamp", "attn:block_index", "attn:pool_index", "kv_from",
    "embedding:affine", "residual_affine", "residual_gate", "attn:cca", "moe:router_mlp",
    "qk_norm:unit", "qk_norm:head_weights", "norm:unit", "place:sphere", "looped", "looped:shared_cache", "ngpt",
    "attn:rel_logits", "attn:kv_conv", "out_conv", "mlp:scalar", "moe:sigmoid_sink", "logits_kept",
    "attn:kv_conv_dynamic", "conv:scaled", "attn:l2_clip", "attn:rel_clip", "attn:token_sinks",
    "attn:kv_inputs", "attn_res", "moe:glu_softcaps", "attn_res:loop",
    "attn:v4", "attn:v4_csa", "attn:v4_hca", "hyper:sinkhorn", "moe:sqrt_softplus", "moe:hash",
    "moe:shared_clamp", "moe:act_clips", "moe:expert_out_norm", "moe:shared_out_norm", "draft", "draft:centroids", "gated_streams", "attn:qsa", "ngram_ple", "delta:sigmoid_gate",
    "bytes", "bytes:patcher", "bytes:encoder_cross_all", "bytes:decoder_cross_all", "bytes:max_patch",
];

/// The mechanisms `spec` uses.
pub fn mechanisms(spec: &Spec) -> BTreeSet<String> {
    let mut m = BTreeSet::new();
    let mut on = |name: &str, yes: bool| {
        if yes {
            m.insert(name.to_string());
        }
    };
    let Spec {
        name: _,
        model_type: _,
        family: _,
        vocab: _,
        hidden: _,
        layers: _,
        context: _,
        embedding,
        attn: _,
        layer_attn,
        mlp,
        moe,
        recurrent,
        plan,
        norm,
        final_norm_kind,
        mup,
        recurrent_place,
        stream_mix,
        position,
        tied,
        final_softcap,
        logits_mult,
        residual_mult,
        residual,
        depth_scaled,
        head_bias,
        skip_first_attn_norm,
        head_transform,
        per_layer_input,
        layer_scalar,
        shared,
        stream,
        ngram_ple,
        ngpt,
        laurel,
        sparsity,
        gated_norm,
        mlp_widths,
        head_rows,
        prompt,
        out_conv,
        logits_kept,
        block,
        layout: _,
        hf_wrap: _,
        towers: _,
        image: _,
        prefix_lm,
        quant: _,
        mtp_layers: _,
        draft,
        kv_from,
        ignored: _,
        not_read: _,
    } = spec;
    if let Some(Draft {
        backbone: _,
        centroids,
    }) = draft
    {
        on("draft", true);
        on("draft:centroids", centroids.is_some());
    }
    // The recurrent mixers' own settings are each one mechanism, named by the plan's mixers.
    for l in plan {
        let LayerPlan {
            mixer,
            rope: _,
            ffn,
        } = l;
        let (mixer, span) = match mixer {
            Mixer::Attention(s) => ("attention", Some(s)),
            Mixer::Parallel(s) => ("parallel", Some(s)),
            Mixer::Mamba2 => ("mamba2", None),
            Mixer::Mamba => ("mamba", None),
            Mixer::ShortConv => ("short_conv", None),
            Mixer::DeltaNet => ("delta_net", None),
            Mixer::Lightning => ("lightning", None),
            Mixer::RgLru => ("rg_lru", None),
            Mixer::Rwkv => ("rwkv", None),
            Mixer::MLstm => ("mlstm", None),
            Mixer::None => ("none", None),
            Mixer::CrossAttention => ("cross_attention", None),
        };
        on(&format!("mixer:{mixer}"), true);
        if let Some(s) = span {
            on(
                match s {
                    AttnSpan::Full => "span:full",
                    AttnSpan::Whole => "span:whole",
                    AttnSpan::Sliding(_) => "span:sliding",
                    AttnSpan::Chunked(_) => "span:chunked",
                },
                true,
            );
        }
        let ffn = match ffn {
            Ffn::Dense => "dense",
            Ffn::Moe => "moe",
            Ffn::ChannelMix => "channel_mix",
            Ffn::DenseAndMoe => "dense_and_moe",
            Ffn::Shortcut => "shortcut",
            Ffn::None => "none",
        };
        on(&format!("ffn:{ffn}"), true);
    }
    // Attention's mechanisms, over every layer variant's attention, where a layer attends.
    let attends = plan
        .iter()
        .any(|l| matches!(l.mixer, Mixer::Attention(_) | Mixer::Parallel(_)))
        || shared.is_some();
    on("attn:layer_variants", !layer_attn.is_empty());
    for (a, _) in spec.attn_variants().into_iter().filter(|_| attends) {
        attention(a, &mut on);
    }
    let Embedding {
        scale_by_sqrt_hidden,
        learned_positions,
        position_offset: _,
        multiplier,
        norm: embed_norm,
        affine: embed_affine,
        projected,
    } = embedding;
    on("embedding:sqrt_hidden", *scale_by_sqrt_hidden);
    on("embedding:multiplier", *multiplier != 1.0);
    on("embedding:norm", *embed_norm);
    on("embedding:affine", *embed_affine);
    on("embedding:projected", projected.is_some());
    on("embedding:learned_positions", learned_positions.is_some());
    let Mlp {
        intermediate: _,
        act: _,
        gated,
        bias,
        fused_gate_up,
        sub_norm,
        clamp,
        scalar,
    } = mlp;
    let dense = plan.iter().any(|l| l.dense()) || shared.is_some();
    on("mlp:gated", dense && *gated);
    on("mlp:bias", dense && *bias);
    on("mlp:fused_gate_up", dense && *fused_gate_up);
    on("mlp:sub_norm", dense && *sub_norm);
    on("mlp:clamp", clamp.is_some());
    on("mlp:scalar", dense && *scalar);
    on("mlp:widths", !mlp_widths.is_empty());
    on("mlp:sparsity", !sparsity.is_empty());
    if let Some(moe) = moe.as_ref().filter(|_| spec.is_moe()) {
        on("moe:shared_experts", moe.shared_experts > 0);
        on("moe:shared_gate", moe.shared_gate);
        on("moe:router_bias", moe.router_bias);
        on("moe:correction_bias", moe.correction_bias);
        on("moe:groups", moe.n_group > 1);
        on("moe:glu_softcaps", moe.glu_softcaps.is_some());
        on("moe:zero_experts", moe.zero_experts > 0);
        on("moe:router_mlp", moe.router_mlp.is_some());
        on("moe:hash", moe.hash_layers.is_some());
        on("moe:shared_clamp", moe.shared_clamp);
        on("moe:act_clips", moe.act_clips.is_some());
        on("moe:expert_out_norm", moe.expert_out_norm);
        on("moe:shared_out_norm", moe.shared_out_norm);
        on(
            match moe.scoring {
                Scoring::Softmax => "moe:softmax",
                Scoring::Sigmoid => "moe:sigmoid",
                Scoring::TopkSoftmax => "moe:topk_softmax",
                Scoring::TopkSigmoid => "moe:topk_sigmoid",
                Scoring::SigmoidBiasedLogits => "moe:sigmoid_biased_logits",
                Scoring::SparseMixer { .. } => "moe:sparse_mixer",
                Scoring::SigmoidSink => "moe:sigmoid_sink",
                Scoring::SqrtSoftplus => "moe:sqrt_softplus",
            },
            true,
        );
        on(
            match moe.storage {
                ExpertStorage::PerExpert => "moe:per_expert",
                ExpertStorage::Stacked { .. } => "moe:stacked",
                ExpertStorage::Flat => "moe:flat",
            },
            true,
        );
    }
    let Norm {
        kind,
        eps: _,
        unit_offset,
        place,
    } = norm;
    on(
        match kind {
            NormKind::Rms => "norm:rms",
            NormKind::Layer { bias: true } => "norm:layer",
            NormKind::Layer { bias: false } => "norm:layer_no_bias",
            NormKind::Plain => "norm:plain",
            NormKind::PlainRms => "norm:plain_rms",
            NormKind::RmsBias => "norm:rms_bias",
            NormKind::Unit => "norm:unit",
        },
        true,
    );
    on("norm:unit_offset", *unit_offset);
    on(
        match place {
            NormPlace::Pre => "place:pre",
            NormPlace::Post => "place:post",
            NormPlace::Sandwich => "place:sandwich",
            NormPlace::PostResidual => "place:post_residual",
            NormPlace::Normed => "place:normed",
            NormPlace::Sphere => "place:sphere",
        },
        true,
    );
    on(
        match block {
            Block::Sequential => "block:sequential",
            Block::Parallel { shared_norm: true } => "block:parallel_shared",
            Block::Parallel { shared_norm: false } => "block:parallel",
        },
        true,
    );
    match position {
        Position::Rope(r) => {
            on("position:rope", true);
            on("position:rope_sliding", r.sliding.is_some());
            on("position:rope_partial", r.partial < 1.0);
            on("position:rope_interleaved", r.interleaved);
            on("position:rope_reversed", r.reversed);
            on("position:rope_start", r.start != 0);
        }
        Position::Learned => on("position:learned", true),
        Position::Sinusoidal(_) => on("position:sinusoidal", true),
        Position::Alibi(_) => on("position:alibi", true),
        Position::None => on("position:none", true),
        Position::Buckets(_) => on("position:buckets", true),
    }
    on("prompt", prompt.is_some());
    on("prefix_lm", *prefix_lm);
    on("final_norm_kind", final_norm_kind.is_some());
    if let Some(Recurrent::MLstm(m)) = recurrent {
        on("mlstm:bias", m.bias);
        on("mlstm:fused", m.fused);
    }
    on("recurrent_place", recurrent_place.is_some());
    on("mup", mup.is_some());
    on("stream_mix", stream_mix.is_some());
    on("kv_from", !kv_from.is_empty());
    on("tied", *tied);
    on("final_softcap", final_softcap.is_some());
    on("logits_mult", *logits_mult != 1.0);
    on("residual_mult", *residual_mult != 1.0);
    match residual {
        Residual::Add => {}
        Residual::Scaled => on("residual_scales", true),
        Residual::Affine => on("residual_affine", true),
        Residual::Gated => on("residual_gate", true),
    }
    on("depth_scaled", *depth_scaled);
    on("head_bias", *head_bias);
    on("skip_first_attn_norm", *skip_first_attn_norm);
    on("head_transform", head_transform.is_some());
    on("per_layer_input", per_layer_input.is_some());
    on("layer_scalar", *layer_scalar);
    on(
        "shared_blocks",
        shared.as_ref().is_some_and(|s| !s.layers.is_empty()),
    );
    on("ngram_ple", ngram_ple.is_some());
    on(
        "delta:sigmoid_gate",
        matches!(recurrent, Some(Recurrent::DeltaNet(d)) if d.sigmoid_gate),
    );
    match stream {
        Stream::Plain => {}
        Stream::Hyper(h) => {
            on("hyper", true);
            on("hyper:sinkhorn", h.sinkhorn.is_some());
        }
        Stream::Gated(_) => on("gated_streams", true),
        Stream::AltUp(_) => on("altup", true),
        Stream::Hierarchy(_) => on("hierarchy", true),
        Stream::Bytes(b) => {
            on("bytes", true);
            on("bytes:patcher", b.patcher.is_some());
            on("bytes:encoder_cross_all", b.encoder_cross_all);
            on("bytes:decoder_cross_all", b.decoder_cross_all);
            on("bytes:max_patch", b.max_patch.is_some());
            // The stacks' own mechanisms (interleaved RoPE, sliding windows) run too.
            for (_, s) in b.stacks() {
                for name in mechanisms(s) {
                    on(&name, true);
                }
            }
        }
        Stream::Looped(l) => {
            on("looped", true);
            on("looped:shared_cache", l.shared_cache);
        }
        Stream::AttnRes(r) => {
            on("attn_res", true);
            on("attn_res:loop", r.looped.is_some());
        }
    }
    on("ngpt", ngpt.is_some());
    on("laurel", laurel.is_some());
    on("gated_norm", gated_norm.is_some());
    on("head_rows", head_rows.is_some());
    on("out_conv", out_conv.is_some());
    on("conv:scaled", out_conv.is_some_and(|c| c.scaled));
    on("logits_kept", logits_kept.is_some());
    m
}

fn attention(a: &Attention, on: &mut impl FnMut(&str, bool)) {
    let Attention {
        kind,
        heads: _,
        kv_heads: _,
        head_dim: _,
        v_head_dim: _,
        v_scale: _,
        qkv_bias,
        o_bias,
        qk_norm,
        softcap,
        sinks,
        scale_dim: _,
        scale_mult: _,
        mla,
        qkv,
        clip_qkv,
        query_scale,
        sub_norm,
        out_gate,
        o_bias_last: _,
        differential,
        moa,
        v_norm,
        v_from_k,
        shares_kv,
        dynamic_mask,
        block_index,
        pool_index,
        qsa,
        cca,
        rel_logits,
        kv_conv,
        l2_clip,
        token_sinks,
        kv_inputs,
        v4,
    } = a;
    if let Some(v) = v4 {
        on("attn:v4", true);
        on("attn:v4_csa", !v.csa.0.is_empty());
        on("attn:v4_hca", !v.hca.0.is_empty());
    }
    on(
        match kind {
            AttnKind::Mha => "attention:mha",
            AttnKind::Gqa => "attention:gqa",
            AttnKind::Mqa => "attention:mqa",
            AttnKind::Mla => "attention:mla",
        },
        true,
    );
    match qk_norm {
        QkNorm::None => {}
        QkNorm::PerHead => on("qk_norm:per_head", true),
        QkNorm::Full => on("qk_norm:full", true),
        QkNorm::L2 => on("qk_norm:l2", true),
        QkNorm::PerHeadPostRope => on("qk_norm:per_head_post_rope", true),
        QkNorm::Unit => on("qk_norm:unit", true),
        QkNorm::HeadWeights => on("qk_norm:head_weights", true),
    }
    if mla.is_none() && moa.is_none() {
        on(
            match qkv {
                Qkv::Separate => "qkv:separate",
                Qkv::Stacked => "qkv:stacked",
                Qkv::Grouped => "qkv:grouped",
                Qkv::Parts(_) => "qkv:parts",
            },
            true,
        );
    }
    if let Some(g) = out_gate {
        on(
            match g.stored {
                GateStore::Own => "out_gate:own",
                GateStore::InQuery => "out_gate:in_query",
                GateStore::BeforeQkv => "out_gate:before_qkv",
            },
            true,
        );
    }
    on("attn:qkv_bias", *qkv_bias);
    on("attn:o_bias", *o_bias);
    on("attn:softcap", softcap.is_some());
    on("attn:sinks", *sinks);
    on("attn:clip_qkv", clip_qkv.is_some());
    on("attn:query_scale", query_scale.is_some());
    on("attn:sub_norm", *sub_norm);
    on("attn:differential", *differential);
    on("attn:moa", moa.is_some());
    on("attn:v_norm", *v_norm);
    on("attn:v_from_k", *v_from_k);
    on("attn:shares_kv", *shares_kv);
    on("attn:dynamic_mask", dynamic_mask.is_some());
    on("attn:block_index", block_index.is_some());
    on("attn:pool_index", pool_index.is_some());
    on("attn:qsa", qsa.is_some());
    on("attn:cca", cca.is_some());
    on("attn:rel_logits", rel_logits.is_some());
    on("attn:kv_conv", kv_conv.is_some());
    on("attn:kv_conv_dynamic", kv_conv.is_some_and(|c| c.dynamic));
    on("conv:scaled", kv_conv.is_some_and(|c| c.conv.scaled));
    on("attn:l2_clip", l2_clip.is_some());
    on(
        "attn:rel_clip",
        rel_logits.is_some_and(|r| r.clip.is_some()),
    );
    on("attn:token_sinks", *token_sinks);
    on("attn:kv_inputs", *kv_inputs);
    if let Some(Mla {
        q_lora_rank,
        bias,
        kv_lora_rank: _,
        qk_nope_head_dim: _,
        qk_rope_head_dim: _,
        indexer,
        lora_scales,
        q_gate,
        latent_eps,
        rope_key_norm,
    }) = mla
    {
        on("attn:indexer", indexer.is_some());
        on("mla:no_q_latent", q_lora_rank.is_none());
        on("mla:bias", *bias);
        on("mla:lora_scales", lora_scales.is_some());
        on("mla:q_gate", *q_gate);
        on("mla:latent_eps", *latent_eps != Mla::LATENT_EPS);
        on("mla:rope_key_norm", *rope_key_norm);
    }
}
