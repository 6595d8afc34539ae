//! Every fact of a Spec that a reader comparing two models would ask about: one table, row by
//! row, of its mechanisms, sizes and settings.

use super::{Fact, Kind};
use crate::spec::{
    AttnKind, AttnSpan, Block, Ffn, Mixer, NormKind, NormPlace, Position, QkNorm, Residual, Spec,
};

fn yes(b: bool) -> String {
    if b { "yes" } else { "no" }.into()
}

fn num(x: f64) -> String {
    crate::fmt::float(x)
}

/// Every fact of a Spec that a reader comparing two models would ask about.
pub fn facts(s: &Spec) -> Vec<Fact> {
    use Kind::*;
    let a = &s.attn;
    let mut out = Vec::new();
    let mut f = |key, label, kind, value: String| {
        out.push(Fact {
            key,
            label,
            kind,
            value,
        })
    };
    f("layers", "layers", Size, s.layers.to_string());
    f("hidden", "hidden size", Size, s.hidden.to_string());
    f("vocab", "vocabulary", Size, s.vocab.to_string());
    f("context", "context", Size, s.context.to_string());
    let kind = match a.kind {
        AttnKind::Mha => "multi-head (MHA)",
        AttnKind::Gqa => "grouped-query (GQA)",
        AttnKind::Mqa => "multi-query (MQA)",
        AttnKind::Mla => "multi-head latent (MLA)",
    };
    f("attention.kind", "attention", Mechanism, kind.into());
    f("attention.heads", "query heads", Size, a.heads.to_string());
    f(
        "attention.kv_heads",
        "K/V heads",
        Size,
        a.kv_heads.to_string(),
    );
    f(
        "attention.head_dim",
        "head dim",
        Size,
        a.head_dim.to_string(),
    );
    if a.v_head_dim != a.head_dim {
        f(
            "attention.v_head_dim",
            "V head dim",
            Size,
            a.v_head_dim.to_string(),
        );
    }
    if let Some(g) = a.out_gate {
        f(
            "attention.out_gate",
            "attention output gate",
            Mechanism,
            format!(
                "{} per {}{}",
                g.symbol(),
                if g.per_head { "head" } else { "head feature" },
                if g.bias { ", a bias per head" } else { "" }
            ),
        );
    }
    if let Some(q) = a.query_scale {
        let form = match q.form {
            crate::spec::ScaleForm::Stepped => format!(
                "1 + {} · ln(1 + ⌊(p + {}) / {}⌋)",
                num(q.beta),
                q.shift,
                q.length
            ),
            crate::spec::ScaleForm::Power => {
                format!("(1 + (p + {}) / {})^{}", q.shift, q.length, num(q.beta))
            }
            crate::spec::ScaleForm::Floored => format!(
                "1 + {} · ln(max((p + {}) / {}, 1))",
                num(q.beta),
                q.shift,
                q.length
            ),
        };
        let layers = if q.nope_only {
            " in the layers without RoPE"
        } else {
            ""
        };
        f(
            "attention.query_scale",
            "query scale by position",
            Mechanism,
            format!("{form}{layers}"),
        );
    }
    if let Some(dm) = a.dynamic_mask {
        f(
            "attention.dynamic_mask",
            "dynamic mask (keys kept)",
            Setting,
            dm.keep.to_string(),
        );
    }
    if let Some(m) = a.moa {
        f(
            "attention.experts",
            "attention experts (MoA)",
            Size,
            format!("{} of {}", m.top_k, m.experts),
        );
    }
    if a.v_scale != 1.0 {
        f("attention.v_scale", "value scale", Setting, num(a.v_scale));
    }
    if !s.layer_attn.is_empty() {
        let own: Vec<String> = s
            .layer_attn
            .iter()
            .map(|(set, o)| {
                let sinks = if o.sinks { ", sinks" } else { "" };
                format!(
                    "{}/{} Q/KV heads{sinks} in layers {set}",
                    o.heads, o.kv_heads
                )
            })
            .collect();
        f(
            "attention.layer_variants",
            "layers with their own attention",
            Setting,
            own.join("; "),
        );
    }
    if let Some(m) = &a.mla {
        f(
            "mla.kv_lora_rank",
            "KV latent rank",
            Size,
            m.kv_lora_rank.to_string(),
        );
        f(
            "mla.q_lora_rank",
            "Q latent rank",
            Size,
            m.q_lora_rank.map_or("none".into(), |r| r.to_string()),
        );
        f(
            "mla.rope_dim",
            "rotary key dim",
            Size,
            m.qk_rope_head_dim.to_string(),
        );
        f(
            "mla.q_gate",
            "query and output gate from both query latents",
            Mechanism,
            yes(m.q_gate),
        );
        f(
            "mla.indexer",
            "sparse-attention indexer",
            Mechanism,
            m.indexer.as_ref().map_or("none".into(), |i| {
                format!(
                    "{} heads of {}, top {} keys, own in {} of {} layers",
                    i.heads,
                    i.head_dim,
                    i.top_k,
                    i.own.len(),
                    i.own.len() + s.indexer_reusers().len()
                )
            }),
        );
    }
    f(
        "attention.qkv_bias",
        "Q/K/V biases",
        Mechanism,
        yes(a.qkv_bias),
    );
    f(
        "attention.o_bias",
        "attention output bias",
        Mechanism,
        yes(a.o_bias),
    );
    let qk = match a.qk_norm {
        QkNorm::None => "none",
        QkNorm::PerHead => "per head",
        QkNorm::Full => "over the whole projection",
        QkNorm::L2 => "weightless L2 after RoPE",
        QkNorm::PerHeadPostRope => "per head after RoPE",
        QkNorm::Unit => "unit length per head before RoPE",
        QkNorm::HeadWeights => "LayerNorm per head, each with its own weight",
    };
    f("attention.qk_norm", "QK-norm", Mechanism, qk.into());
    f(
        "attention.sinks",
        "attention sinks",
        Mechanism,
        yes(a.sinks),
    );
    f(
        "attention.softcap",
        "attention softcap",
        Setting,
        a.softcap.map_or("none".into(), num),
    );
    f(
        "attention.clip_qkv",
        "Q/K/V clipping",
        Setting,
        a.clip_qkv.map_or("none".into(), num),
    );
    let mut spans: Vec<&str> = s
        .plan
        .iter()
        .map(|l| match l.mixer {
            Mixer::Attention(AttnSpan::Full) => "full",
            Mixer::Attention(AttnSpan::Whole) => "bidirectional",
            Mixer::Parallel(AttnSpan::Whole) => "bidirectional, beside Mamba2",
            Mixer::Attention(AttnSpan::Sliding(_)) => "sliding-window",
            Mixer::Attention(AttnSpan::Chunked(_)) => "chunked",
            Mixer::Parallel(AttnSpan::Full) => "full, beside Mamba2",
            Mixer::Parallel(AttnSpan::Sliding(_)) => "sliding-window, beside Mamba2",
            Mixer::Parallel(AttnSpan::Chunked(_)) => "chunked, beside Mamba2",
            Mixer::Mamba2 => "none (Mamba2)",
            Mixer::Mamba => "none (Mamba)",
            Mixer::ShortConv => "none (short convolution)",
            Mixer::DeltaNet => match s.delta().map(|d| d.channel_decay()) {
                Some(true) => "none (Kimi Delta Attention)",
                Some(false) | None => "none (Gated DeltaNet)",
            },
            Mixer::Lightning => "none (lightning attention)",
            Mixer::RgLru => "none (RG-LRU)",
            Mixer::Rwkv => "none (RWKV time mixing)",
            Mixer::MLstm => "none (mLSTM)",
            Mixer::None => "none (FFN only)",
            Mixer::CrossAttention => "cross-attention to the image",
        })
        .collect();
    spans.sort();
    spans.dedup();
    f(
        "attention.spans",
        "attention spans",
        Mechanism,
        spans.join(" and "),
    );
    let mut windows: Vec<u64> = s
        .plan
        .iter()
        .filter_map(|l| match l.span() {
            Some(AttnSpan::Sliding(w) | AttnSpan::Chunked(w)) => Some(w),
            Some(AttnSpan::Full | AttnSpan::Whole) | None => None,
        })
        .collect();
    windows.dedup();
    if !windows.is_empty() {
        let w: Vec<String> = windows.iter().map(u64::to_string).collect();
        f("attention.window", "window", Size, w.join(", "));
        let local = s
            .plan
            .iter()
            .filter(|l| matches!(l.span(), Some(AttnSpan::Sliding(_) | AttnSpan::Chunked(_))))
            .count();
        f(
            "attention.local_layers",
            "local-attention layers",
            Size,
            local.to_string(),
        );
    }
    let block = match s.block {
        Block::Sequential => "sequential",
        Block::Parallel { shared_norm: true } => "parallel, one shared norm",
        Block::Parallel { shared_norm: false } => "parallel",
    };
    f("block", "block", Mechanism, block.into());
    let norm = match s.norm.kind {
        NormKind::Rms => "RMSNorm",
        NormKind::Layer { bias: true } => "LayerNorm",
        NormKind::Layer { bias: false } => "LayerNorm without bias",
        NormKind::Plain => "LayerNorm without parameters",
        NormKind::PlainRms => "RMSNorm without a weight",
        NormKind::RmsBias => "RMSNorm with a shift",
        NormKind::Unit => "projection onto the unit sphere",
    };
    f("norm.kind", "norm", Mechanism, norm.into());
    let place = match s.norm.place {
        NormPlace::Pre => "pre-norm",
        NormPlace::Post => "post-norm",
        NormPlace::Sandwich => "sandwich",
        NormPlace::PostResidual => "post-residual",
        NormPlace::Normed => "pre-norm, the normed input as the residual",
        NormPlace::Sphere => "on the unit sphere, moving towards each normed output",
    };
    f("norm.place", "norm placement", Mechanism, place.into());
    f(
        "norm.unit_offset",
        "(1 + w) norm weights",
        Mechanism,
        yes(s.norm.unit_offset),
    );
    f("norm.eps", "norm eps", Setting, num(s.norm.eps));
    match &s.position {
        Position::Rope(r) => {
            f("position", "positions", Mechanism, "RoPE".into());
            f("rope.theta", "RoPE base", Setting, num(r.full.theta));
            let scaling = &r.full.scaling;
            let kind = match scaling.kind() {
                "default" => "none",
                k => k,
            };
            f("rope.scaling", "RoPE scaling", Mechanism, kind.into());
            if let Some(x) = scaling.factor() {
                f("rope.factor", "RoPE scaling factor", Setting, num(x));
            }
            f(
                "rope.sliding",
                "own RoPE for sliding layers",
                Mechanism,
                yes(r.sliding.is_some()),
            );
            f(
                "rope.partial",
                "rotated share of each head",
                Setting,
                num(r.partial),
            );
            if let Some(p) = r.sliding_partial {
                f(
                    "rope.sliding_partial",
                    "rotated share in sliding layers",
                    Setting,
                    num(p),
                );
            }
            f(
                "rope.interleaved",
                "interleaved RoPE pairs",
                Mechanism,
                yes(r.interleaved),
            );
            if r.start != 0 {
                f("rope.start", "first position", Setting, r.start.to_string());
            }
            let nope = s.plan.iter().filter(|l| !l.rope).count();
            f(
                "rope.nope_layers",
                "layers without RoPE",
                Size,
                nope.to_string(),
            );
        }
        Position::Learned => f("position", "positions", Mechanism, "learned".into()),
        Position::Sinusoidal(_) => f("position", "positions", Mechanism, "sinusoidal".into()),
        Position::Alibi(_) => f("position", "positions", Mechanism, "ALiBi".into()),
        Position::None => f("position", "positions", Mechanism, "none".into()),
        Position::Buckets(b) => {
            f(
                "position",
                "positions",
                Mechanism,
                "bucketed relative bias".into(),
            );
            f(
                "position.buckets",
                "position buckets",
                Size,
                b.buckets.to_string(),
            );
            f(
                "position.max_distance",
                "bucketed up to",
                Size,
                b.max_distance.to_string(),
            );
        }
    }
    if s.prefix_lm {
        f(
            "attention.prefix_lm",
            "prompt seen both ways (a prefix)",
            Mechanism,
            yes(true),
        );
    }
    if let Some(p) = s.prompt {
        f(
            "prompt",
            "learned prompt tokens",
            Size,
            p.length.to_string(),
        );
        f(
            "prompt.segments",
            "segment types",
            Size,
            p.segments.to_string(),
        );
    }
    // RWKV's channel mixing has the dense FFN's width; LongCat-Flash's and Gemma 4's MLPs run
    // beside their experts.
    let dense = s
        .plan
        .iter()
        .filter(|l| l.dense() || l.ffn == Ffn::ChannelMix)
        .count();
    if dense > 0 {
        f(
            "mlp.intermediate",
            "FFN width",
            Size,
            s.mlp.intermediate.to_string(),
        );
    }
    f("mlp.act", "activation", Mechanism, s.mlp.act.label().into());
    f("mlp.gated", "gated FFN (GLU)", Mechanism, yes(s.mlp.gated));
    f("mlp.bias", "FFN biases", Mechanism, yes(s.mlp.bias));
    f("moe", "mixture of experts", Mechanism, yes(s.moe.is_some()));
    if let Some(m) = &s.moe {
        f("moe.experts", "experts", Size, m.experts.to_string());
        f("moe.top_k", "active experts", Size, m.top_k.to_string());
        f(
            "moe.expert_width",
            "expert width",
            Size,
            m.expert_intermediate.to_string(),
        );
        f(
            "moe.shared",
            "shared experts",
            Size,
            m.shared_experts.to_string(),
        );
        f("moe.dense_layers", "dense layers", Size, dense.to_string());
        f(
            "moe.scoring",
            "router scoring",
            Mechanism,
            format!("{:?}", m.scoring).to_lowercase(),
        );
        f(
            "moe.shared_gate",
            "shared-expert gate",
            Mechanism,
            yes(m.shared_gate),
        );
        f(
            "moe.router_bias",
            "router bias",
            Mechanism,
            yes(m.router_bias),
        );
        if let Some(c) = m.router_softcap {
            f(
                "moe.router_softcap",
                "router logit softcap",
                Setting,
                num(c),
            );
        }
        f(
            "moe.correction_bias",
            "routing correction bias",
            Mechanism,
            yes(m.correction_bias),
        );
        f(
            "moe.norm_topk",
            "renormalized top-k weights",
            Mechanism,
            yes(m.norm_topk_prob),
        );
        f(
            "moe.grouped",
            "grouped routing",
            Mechanism,
            yes(m.n_group > 1),
        );
        if m.n_group > 1 {
            f(
                "moe.groups",
                "expert groups",
                Size,
                format!("{} (top {})", m.n_group, m.topk_group),
            );
        }
        f(
            "moe.routed_scaling",
            "routed scaling",
            Setting,
            num(m.routed_scaling),
        );
        if let Some(c) = &m.act_clips {
            let list = |l: &[f64]| l.iter().map(|&x| num(x)).collect::<Vec<_>>().join(", ");
            f(
                "moe.act_clips",
                "clips after the activation (routed; shared)",
                Setting,
                format!("{}; {}", list(&c.routed), list(&c.shared)),
            );
        }
        f(
            "moe.out_norms",
            "experts' outputs normed (routed; shared)",
            Mechanism,
            format!("{}; {}", yes(m.expert_out_norm), yes(m.shared_out_norm)),
        );
        if m.zero_experts > 0 {
            f(
                "moe.zero_experts",
                "zero-computation experts",
                Size,
                m.zero_experts.to_string(),
            );
        }
        f(
            "moe.router_norm",
            "router input normed and scaled",
            Mechanism,
            yes(m.router_norm),
        );
        f(
            "moe.expert_scale",
            "per-expert weight scale",
            Mechanism,
            yes(m.expert_scale),
        );
        let placed = if s.plan.iter().any(|l| l.ffn == Ffn::Shortcut) {
            "on a shortcut to the next layer"
        } else if s.plan.iter().any(|l| l.ffn == Ffn::DenseAndMoe) {
            "beside the MLP"
        } else {
            "in place of the MLP"
        };
        f("moe.placement", "experts", Mechanism, placed.into());
    }
    // Gemma 4's attention and layer extras, and LongCat-Flash's latent scales.
    let variants = s.attn_variants();
    let any = |p: fn(&crate::spec::Attention) -> bool| yes(variants.iter().any(|(a, _)| p(a)));
    f(
        "attention.v_norm",
        "V normed (no weight)",
        Mechanism,
        any(|a| a.v_norm),
    );
    f(
        "attention.v_from_k",
        "keys as values",
        Mechanism,
        any(|a| a.v_from_k),
    );
    let sharing = (0..s.layers as usize)
        .filter(|&b| s.attn_at(b).shares_kv)
        .count();
    if sharing > 0 {
        f(
            "attention.shared_kv",
            if s.draft.is_some() {
                "layers reading the target's K/V"
            } else {
                "layers reusing earlier K/V"
            },
            Size,
            sharing.to_string(),
        );
    }
    // Gemma 4's assistants: a model that drafts from its target's state.
    f(
        "draft",
        "draft model",
        Mechanism,
        s.draft.map_or("no".into(), |d| {
            let head = d.centroids.map_or(String::new(), |c| {
                format!(", clustered head ({} centroids, top {})", c.count, c.top_k)
            });
            format!("from a target of width {}{head}", d.backbone)
        }),
    );
    f(
        "attention.latent_scales",
        "latents scaled by √(hidden / rank)",
        Mechanism,
        any(|a| a.mla.as_ref().is_some_and(|m| m.lora_scales.is_some())),
    );
    f(
        "attention.cca",
        "compressed convolutional attention",
        Mechanism,
        s.attn_variants()
            .iter()
            .find_map(|(a, _)| a.cca)
            .map_or("none".into(), |c| {
                format!("convolutions of {} and {} taps", c.depthwise, c.grouped)
            }),
    );
    // Inkling's and Inkling 2's attention and stream.
    let taps = |c: crate::spec::ResConv| {
        let scaled = if c.scaled { ", scaled" } else { "" };
        format!("{} taps{scaled}", c.taps)
    };
    f(
        "attention.rel_logits",
        "relative logits mixed per query",
        Mechanism,
        variants
            .iter()
            .find_map(|(a, _)| a.rel_logits)
            .map_or("none".into(), |r| {
                let clip = r
                    .clip
                    .map_or(String::new(), |c| format!(", clipped at {}", num(c)));
                format!("{} features a head{clip}", r.d_rel)
            }),
    );
    f(
        "attention.kv_conv",
        "convolutions on K and V",
        Mechanism,
        variants
            .iter()
            .find_map(|(a, _)| a.kv_conv)
            .map_or("none".into(), |c| {
                let own = if variants
                    .iter()
                    .any(|(a, _)| a.kv_conv.is_some_and(|c| c.dynamic))
                {
                    ", per-token taps in some layers"
                } else {
                    ""
                };
                format!("{}{own}", taps(c.conv))
            }),
    );
    f(
        "attention.l2_clip",
        "Q and K L2-clipped",
        Setting,
        variants
            .iter()
            .find_map(|(a, _)| a.l2_clip)
            .map_or("none".into(), num),
    );
    f(
        "attention.token_sinks",
        "sinks projected per token",
        Mechanism,
        any(|a| a.token_sinks),
    );
    f(
        "attention.kv_inputs",
        "K and V from inputs of their own",
        Mechanism,
        any(|a| a.kv_inputs),
    );
    f(
        "out_conv",
        "convolution on each sublayer's output",
        Mechanism,
        s.out_conv.map_or("none".into(), taps),
    );
    f(
        "attn_res",
        "block attention residuals",
        Mechanism,
        s.attn_res().map_or("none".into(), |r| {
            let looped = r.looped.map_or(String::new(), |l| {
                format!(", layers {}–{} run {} times", l.start, l.end - 1, l.passes)
            });
            format!("blocks of {}{looped}", r.block)
        }),
    );
    f(
        "mlp.scalar",
        "learned scalar on the MLP output",
        Mechanism,
        yes(s.mlp.scalar && s.plan.iter().any(|l| l.dense())),
    );
    f(
        "moe.glu_softcaps",
        "experts' SwiGLU softcapped",
        Setting,
        s.moe
            .as_ref()
            .and_then(|m| m.glu_softcaps)
            .map_or("none".into(), |(g, u)| {
                format!("gate {}, up {}", num(g), num(u))
            }),
    );
    f(
        "logits.kept",
        "logits kept (padded head)",
        Size,
        s.logits_kept.map_or("all".into(), |k| k.to_string()),
    );
    f(
        "moe.router_mlp",
        "router MLP carrying its state",
        Mechanism,
        s.moe
            .as_ref()
            .and_then(|m| m.router_mlp)
            .map_or("none".into(), |w| format!("{w} wide")),
    );
    f(
        "embedding.affine",
        "shifted and scaled embeddings",
        Mechanism,
        yes(s.embedding.affine),
    );
    f(
        "embedding.projected",
        "token table width (projected in and out)",
        Size,
        s.embedding
            .projected
            .map_or("the hidden size".into(), |w| w.to_string()),
    );
    f(
        "attention.block_index",
        "lightning indexer (blocks of keys)",
        Mechanism,
        s.attn_variants()
            .iter()
            .find_map(|(a, _)| a.block_index)
            .map_or("none".into(), |i| {
                format!(
                    "{} heads of {}, top {} blocks of {} keys ({} latest kept)",
                    i.heads, i.head_dim, i.top_k, i.block, i.local
                )
            }),
    );
    f(
        "attention.qsa",
        "QSA indexer (blocks of keys)",
        Mechanism,
        s.attn_variants()
            .iter()
            .find_map(|(a, _)| a.qsa)
            .map_or("none".into(), |q| {
                format!(
                    "{} heads of {}, top {} blocks of {} keys and the tail",
                    q.heads,
                    q.head_dim,
                    q.blocks(),
                    q.ratio
                )
            }),
    );
    f(
        "attention.pool_index",
        "weightless indexer over NVFP4 keys (pools of blocks)",
        Mechanism,
        s.attn_variants()
            .iter()
            .find_map(|(a, _)| a.pool_index.clone())
            .map_or("none".into(), |p| {
                format!(
                    "{} query heads, top {} keys of pools of {} in blocks of {}, {} sinks, {} local; pools in {} layers",
                    p.heads,
                    p.top_k,
                    p.pool,
                    p.compression,
                    p.sinks,
                    p.local,
                    p.pools.len()
                )
            }),
    );
    f(
        "attention.kv_from",
        "layers reading another's keys and values",
        Mechanism,
        match s
            .kv_from
            .iter()
            .enumerate()
            .filter(|&(b, &src)| src != b as u64)
            .count()
        {
            0 => "none".into(),
            n => format!("{n}, as listed"),
        },
    );
    f(
        "attention.rope_key_norm",
        "shared rotary key normed before RoPE",
        Mechanism,
        any(|a| a.mla.as_ref().is_some_and(|m| m.rope_key_norm)),
    );
    f(
        "per_layer_input",
        "per-layer embeddings",
        Setting,
        s.per_layer_input
            .map_or("none".into(), |p| format!("{} per layer", p.width)),
    );
    f(
        "shared_block",
        "shared transformer blocks",
        Setting,
        s.shared
            .as_ref()
            .filter(|b| !b.layers.is_empty())
            .map_or("none".into(), |b| {
                let adapted = match (b.adapter_rank, b.attn_adapters) {
                    (0, _) => "no adapters".to_string(),
                    (r, true) => format!("rank-{r} adapters on gate/up, Q, K, V"),
                    (r, false) => format!("rank-{r} adapters on gate/up"),
                };
                format!(
                    "{} shared by layers {}, {adapted}",
                    crate::fmt::count(b.blocks as u128, "block"),
                    b.layers,
                )
            }),
    );
    f(
        "layer_scalar",
        "layer output scalars",
        Mechanism,
        yes(s.layer_scalar),
    );
    f("tied", "tied embeddings", Mechanism, yes(s.tied));
    f(
        "stored",
        "weights stored as",
        Setting,
        s.quant
            .as_ref()
            .map_or("floats".into(), |d| d.quant.describe()),
    );
    f("head_bias", "LM-head bias", Mechanism, yes(s.head_bias));
    f(
        "embedding.scaled",
        "embeddings scaled by √hidden",
        Mechanism,
        yes(s.embedding.scale_by_sqrt_hidden),
    );
    f(
        "embedding.norm",
        "norm after the embedding",
        Mechanism,
        yes(s.embedding.norm),
    );
    f(
        "embedding.multiplier",
        "embedding multiplier",
        Setting,
        num(s.embedding.multiplier),
    );
    f(
        "logits.softcap",
        "final logit softcap",
        Setting,
        s.final_softcap.map_or("none".into(), num),
    );
    f(
        "logits.multiplier",
        "logit multiplier",
        Setting,
        num(s.logits_mult),
    );
    f(
        "residual.multiplier",
        "residual multiplier",
        Setting,
        num(s.residual_mult),
    );
    f(
        "residual.join",
        "how sublayers join the stream",
        Mechanism,
        match s.residual {
            Residual::Add => "added".into(),
            Residual::Scaled => "stream scaled by a learned vector".into(),
            Residual::Affine => "both terms shifted and scaled by learned vectors".into(),
            Residual::Gated => "mixed by a learned gate, variance kept".into(),
        },
    );
    f(
        "residual.depth_scaled",
        "residual adds scaled with depth",
        Mechanism,
        yes(s.depth_scaled),
    );
    f(
        "gated_norm",
        "gated norms",
        Mechanism,
        s.gated_norm.as_ref().map_or("none".into(), |g| {
            format!(
                "rank {}, before attention and before the FFN in layers {}",
                g.rank,
                s.layers_where(|l| l.moe())
            )
        }),
    );
    f(
        "altup",
        "AltUp streams",
        Mechanism,
        s.altup().map_or("none".into(), |a| {
            format!("{}, computing on stream {}", a.streams, a.active)
        }),
    );
    f(
        "laurel",
        "LAuReL rank",
        Mechanism,
        s.laurel.map_or("none".into(), |r| r.to_string()),
    );
    f(
        "mlp.sparsity",
        "activation sparsity",
        Mechanism,
        if s.sparsity.is_empty() {
            "none".into()
        } else {
            s.sparsity
                .iter()
                .map(|(set, p)| format!("{} in layers {set}", num(*p)))
                .collect::<Vec<_>>()
                .join("; ")
        },
    );
    f(
        "residual.streams",
        "hyper-connection streams",
        Mechanism,
        s.hyper().map_or("none".into(), |h| match h.sinkhorn {
            Some(n) => format!(
                "{}, written back by up to {}×, mixed by {n} Sinkhorn iterations",
                h.streams,
                num(h.magnitude)
            ),
            None => format!("{}, written back by up to {}×", h.streams, num(h.magnitude)),
        }),
    );
    f(
        "embedding.ngram",
        "hashed n-gram embeddings",
        Mechanism,
        s.ngram_ple.as_ref().map_or("none".into(), |p| {
            format!(
                "in layers {}: 2- to {}-grams, {} heads of {}",
                p.layers,
                p.ngram,
                p.heads(),
                p.head_dim()
            )
        }),
    );
    f(
        "residual.gated_streams",
        "gated residual streams",
        Mechanism,
        s.gated_streams().map_or("none".into(), |g| {
            format!("{} (rank-{} gates)", g.streams, g.rank)
        }),
    );
    f(
        "attention.compressed",
        "compressed attention (DeepSeek-V4)",
        Mechanism,
        s.attn.v4.as_ref().map_or("none".into(), |v| {
            let mut parts = vec![format!(
                "one K=V head, a {}-dim query latent",
                v.q_lora_rank
            )];
            if !v.csa.0.is_empty() {
                parts.push(format!(
                    "sparse in layers {}: windows of {}, top {} entries by a {}×{} indexer",
                    v.csa.0, v.csa.1, v.index.top_k, v.index.heads, v.index.head_dim
                ));
            }
            if !v.hca.0.is_empty() {
                parts.push(format!(
                    "heavy in layers {}: windows of {}",
                    v.hca.0, v.hca.1
                ));
            }
            parts.push(format!(
                "output in {} groups of rank {}",
                v.o_groups, v.o_lora_rank
            ));
            parts.join("; ")
        }),
    );
    f(
        "moe.hash",
        "experts chosen by token id",
        Mechanism,
        s.moe
            .as_ref()
            .and_then(|m| m.hash_layers.as_ref())
            .map_or("none".into(), |h| format!("layers {h}")),
    );
    f(
        "hierarchy",
        "hierarchical loop",
        Mechanism,
        s.hierarchy().map_or("none".into(), |h| {
            format!(
                "two stacks of {}, {} cycles of {} low-level visits and one high-level",
                h.per_stack, h.high_cycles, h.low_cycles
            )
        }),
    );
    f(
        "bytes",
        "byte-level stacks (BLT)",
        Mechanism,
        s.bytes().map_or("none".into(), |b| {
            let stack = |s: &Spec| {
                let window = crate::spec::ByteLatent::window(s)
                    .map_or(String::new(), |w| format!(", window {w}"));
                format!(
                    "{} × {} wide, {} heads{window}",
                    s.layers, s.hidden, s.attn.heads
                )
            };
            let patching = match b.patching {
                crate::spec::Patching::Entropy(t) => format!("entropy above {}", num(t)),
                crate::spec::Patching::Bytes { .. } => "one byte each".into(),
            };
            format!(
                "patcher {}; encoder {}; decoder {}; {} queries and keys per patch; n-grams of {:?} hashed by {} function(s) into {} rows each; patches {patching}{}",
                b.patcher.as_ref().map_or("none".into(), stack),
                stack(&b.encoder),
                stack(&b.decoder),
                b.cross_k,
                b.hash.sizes,
                b.hash.functions,
                b.hash.vocab,
                b.max_patch.map_or(String::new(), |m| format!(", at most {m} bytes")),
            )
        }),
    );
    f(
        "looped",
        "looped layers",
        Mechanism,
        s.looped().map_or("none".into(), |l| {
            format!(
                "{} run {} times, {}",
                l.layers().describe(),
                l.loops,
                if l.shared_cache {
                    "the last pass alone caching"
                } else {
                    "each pass caching"
                }
            )
        }),
    );
    f("ngpt", "nGPT scalings", Mechanism, yes(s.ngpt.is_some()));
    f(
        "mtp_layers",
        "multi-token-prediction layers",
        Size,
        s.mtp_layers.to_string(),
    );
    let mut mixers: Vec<&str> = s
        .plan
        .iter()
        .map(|l| match l.mixer {
            Mixer::Attention(_) => "attention",
            Mixer::Parallel(_) => "attention beside Mamba2",
            Mixer::Mamba2 => "Mamba2",
            Mixer::Mamba => "Mamba",
            Mixer::ShortConv => "short convolution",
            Mixer::DeltaNet => s.mixer_title(l.mixer),
            Mixer::Lightning => "lightning attention",
            Mixer::RgLru => "RG-LRU",
            Mixer::Rwkv => "RWKV time mixing",
            Mixer::MLstm => "mLSTM",
            Mixer::None => "none",
            Mixer::CrossAttention => "cross-attention to the image",
        })
        .collect();
    mixers.sort();
    mixers.dedup();
    f("mixer", "sequence mixers", Mechanism, mixers.join(" and "));
    // Each mixer's sizes, with the state size every recurrent mixer has said once.
    if let Some(m) = s.s6() {
        f("ssm.inner", "Mamba channels", Size, m.inner.to_string());
        if m.heads > 1 {
            f("ssm.s6_heads", "Mamba heads", Size, m.heads.to_string());
        }
    }
    if let Some(m) = s.mlstm() {
        f("mlstm.heads", "mLSTM heads", Size, m.heads.to_string());
        f(
            "mlstm.head_dims",
            "mLSTM key and value head dims",
            Size,
            format!("{} and {}", m.qk_dim / m.heads, m.v_dim / m.heads),
        );
        f(
            "mlstm.gate_cap",
            "mLSTM gate soft cap",
            Setting,
            crate::fmt::float(m.gate_cap),
        );
    }
    if let Some(m) = s.ssm() {
        f("ssm.heads", "Mamba2 heads", Size, m.heads.to_string());
        f(
            "ssm.head_dim",
            "Mamba2 head dim",
            Size,
            m.head_dim.to_string(),
        );
    }
    if let Some(m) = s.delta() {
        f(
            "delta.heads",
            "DeltaNet key and value heads",
            Size,
            format!("{} and {}", m.key_heads, m.value_heads),
        );
        f(
            "delta.head_dims",
            "DeltaNet key and value head dims",
            Size,
            format!("{} and {}", m.key_dim, m.value_dim),
        );
    }
    let state = (s.ssm().map(|m| m.state)).or(s.s6().map(|m| m.state));
    if let Some(n) = state {
        f("ssm.state", "state size", Size, n.to_string());
    }
    if let Some(m) = s.s6() {
        f("ssm.dt_rank", "step rank", Size, m.dt_rank.to_string());
    }
    if let Some(m) = s.ssm() {
        f("ssm.groups", "B/C groups", Size, m.groups.to_string());
    }
    if let Some(m) = s.lightning() {
        f(
            "lightning.block",
            "lightning chunk",
            Size,
            m.block.to_string(),
        );
    }
    if let Some(m) = &s.stream_mix {
        let pair = |(a, b): (f64, f64)| format!("{} · n(x) + {} · f", num(a), num(b));
        f(
            "stream_mix.attn",
            "attention residual",
            Setting,
            pair(m.attn),
        );
        f(
            "stream_mix.linear",
            "lightning residual",
            Setting,
            pair(m.linear),
        );
        f("stream_mix.mlp", "MLP residual", Setting, pair(m.mlp));
    }
    let kernel = (s.ssm().map(|m| m.conv_kernel))
        .or(s.s6().map(|m| m.conv_kernel))
        .or(s.short_conv().map(|c| c.kernel))
        .or(s.delta().map(|d| d.conv_kernel))
        .or(s.rg_lru().map(|r| r.conv_kernel));
    if let Some(k) = kernel {
        f("ssm.conv_kernel", "convolution width", Size, k.to_string());
    }
    // A wrapper's towers, each by its steps: what differs in how
    // an image is encoded.
    if !s.towers.is_empty() {
        let towers = s.towers.iter().map(|t| {
            let steps: Vec<String> = match t.steps() {
                [] => vec!["of a kind anatomy does not know".into()],
                blocks => (blocks.iter()).map(|b| b.label()).collect(),
            };
            format!("{}: {}", t.what, steps.join(" · "))
        });
        f(
            "towers",
            "towers",
            Mechanism,
            towers.collect::<Vec<_>>().join("; "),
        );
    }
    if let Some(i) = &s.image {
        f(
            "image.tokens",
            "tokens per image",
            Size,
            i.encoder.features().to_string(),
        );
    }
    // Without attention layers, the attention's settings describe nothing.
    if s.attn_variants().is_empty() {
        out.retain(|x| !x.key.starts_with("attention.") && !x.key.starts_with("mla."));
    }
    out
}
