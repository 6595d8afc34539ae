//! Which pieces of the NumPy fragments a model's file holds: one line per piece, on where the
//! Spec has what it computes.

use crate::render::fragment::Pieces;
use crate::spec::{
    DeltaStore, Ffn, Mixer, NormKind, NormPlace, Position, Residual, Spec, SsmGate, Stream,
};

pub(super) fn pieces(g: &crate::graph::Graph) -> Pieces {
    let spec = &g.spec;
    let mut p = Pieces::default();
    // A wrapper run on an image: its encoder's pieces (`image.rs`).
    super::image::pieces(spec, &mut p);
    // PaliGemma's prompt sees itself both ways.
    p.set("prefix_lm", spec.prefix_lm);
    // Dory's nGPT: learned scales on queries, gates, the MLP's halves and the logits.
    p.set("ngpt", spec.ngpt.is_some());
    // DeepSeek-V4's layers whose experts are chosen by token id.
    p.set(
        "hashed",
        spec.moe.as_ref().is_some_and(|m| m.hash_layers.is_some()),
    );
    // Ling's clips after the activation (per layer, routed and shared apart).
    p.set(
        "act_clips",
        spec.moe.as_ref().is_some_and(|m| m.act_clips.is_some()),
    );
    // The shared experts' SwiGLU clamped as the routed ones' (HY v4).
    p.set(
        "shared_clamp",
        spec.moe.as_ref().is_some_and(|m| m.shared_clamp),
    );
    // DeepSeek-V4's compressed attention, in place of the plain one.
    p.set("v4", spec.attn.v4.is_some());
    // Hyper-connections whose streams' mix is a Sinkhorn-normalised matrix.
    p.set(
        "sinkhorn",
        spec.hyper().is_some_and(|h| h.sinkhorn.is_some()),
    );
    // Softcaps on the experts' gate and up halves.
    p.set(
        "glu_softcaps",
        spec.moe.as_ref().is_some_and(|m| m.glu_softcaps.is_some()),
    );
    let variants = spec.attn_variants();
    let any = |f: &dyn Fn(&crate::spec::Attention) -> bool| variants.iter().any(|(a, _)| f(a));
    // Attention residuals: each sublayer reads a mix of the block summaries; looped, with
    // messages from the pass before.
    p.set("attn_res", spec.attn_res().is_some());
    p.set(
        "looped_messages",
        spec.attn_res().is_some_and(|r| r.looped.is_some()),
    );
    // Layers whose K and V read inputs of their own.
    p.set(
        "kv_inputs",
        any(&|a| a.kv_inputs) || spec.attn_res().is_some_and(|r| r.looped.is_some()),
    );
    // Convolutions over the keys and values (static, or with each token's own taps).
    p.set("kv_conv", any(&|a| a.kv_conv.is_some()));
    p.set(
        "dynamic_conv",
        any(&|a| a.kv_conv.is_some_and(|c| c.dynamic)),
    );
    // Queries and keys (or relative logits' inputs) no longer than a threshold.
    p.set("l2_clip", any(&|a| a.l2_clip.is_some()));
    p.set(
        "rel_clip",
        any(&|a| a.rel_logits.is_some_and(|r| r.clip.is_some())),
    );
    p.set(
        "l2_clip_fn",
        any(&|a| a.l2_clip.is_some() || a.rel_logits.is_some_and(|r| r.clip.is_some())),
    );
    // A sink logit per token, from its own projection.
    p.set("token_sinks", any(&|a| a.token_sinks));
    // Each query's own bias for each key's distance.
    p.set("rel_logits", any(&|a| a.rel_logits.is_some()));
    p.set("query_scale_any", any(&|a| a.query_scale.is_some()));
    // Convolutions over the sublayers' outputs.
    p.set("out_conv", spec.out_conv.is_some());
    p.set(
        "residual_conv",
        spec.out_conv.is_some() || any(&|a| a.kv_conv.is_some()),
    );
    p.set("mlp_scalar", spec.mlp.scalar);
    // An embedding narrower than the stream, projected in and out.
    p.set("embed_proj", spec.embedding.projected.is_some());
    p.set("logits_kept", spec.logits_kept.is_some());
    p.set(
        "moe_sink",
        spec.moe
            .as_ref()
            .is_some_and(|m| m.scoring == crate::spec::Scoring::SigmoidSink),
    );
    p.set(
        "buckets",
        matches!(spec.position, crate::spec::Position::Buckets(_)),
    );
    // Multi-head latent attention, its indexer (which layers choose their own keys), its
    // latents' scales and its rotated key's norm.
    let mla = spec.attn.mla.as_ref();
    p.set("mla", mla.is_some());
    p.set("indexer", mla.is_some_and(|m| m.indexer.is_some()));
    p.set(
        "mla_query_scale",
        mla.is_some() && spec.attn.query_scale.is_some(),
    );
    p.set(
        "indexer_reuse",
        mla.is_some_and(|m| m.indexer.is_some()) && !spec.indexer_reusers().is_empty(),
    );
    p.set(
        "indexer_lora",
        mla.is_some_and(|m| m.indexer.is_some() && m.lora_scales.is_some()),
    );
    p.set(
        "lora_scales",
        any(&|a| a.mla.as_ref().is_some_and(|m| m.lora_scales.is_some())),
    );
    p.set(
        "rope_key_norm",
        any(&|a| a.mla.as_ref().is_some_and(|m| m.rope_key_norm)),
    );
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
    p.set(
        "indexer_rope_last",
        mla.and_then(|m| m.indexer.as_ref())
            .is_some_and(|i| i.rope_last),
    );
    p.set("altup", spec.altup().is_some());
    p.set("gated_norm", spec.gated_norm.is_some());
    // A latent query whose projection holds the heads' output gate too.
    p.set("q_gate", mla.is_some_and(|m| m.q_gate));
    // Gaussian cut-offs of the MLP's gate, per layer.
    p.set("sparsity", !spec.sparsity.is_empty());
    p.set(
        "ple_clamp_ids",
        spec.per_layer_input.is_some_and(|p| p.clamp_ids),
    );
    p.set("rms_bias", spec.norm.kind == crate::spec::NormKind::RmsBias);
    p.set(
        "final_norm_plain",
        spec.final_norm_kind.is_some_and(|k| !k.has_bias()) && spec.norm.kind.has_bias(),
    );
    // xLSTM's projections: apart or fused (`weight_mode`), with biases or not.
    p.set("mlstm_fused", spec.mlstm().is_some_and(|m| m.fused));
    p.set("mlstm_bias", spec.mlstm().is_some_and(|m| m.bias));
    p.set("hierarchy", spec.hierarchy().is_some());
    // A gate on the heads' outputs stored before the queries in the stacked projection.
    p.set(
        "gate_before_qkv",
        spec.attn.out_gate.is_some_and(|g| g.before_qkv()),
    );
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
    p.set(
        "residual_scales",
        spec.residual == crate::spec::Residual::Scaled,
    );
    p.set("moa", spec.attn.moa.is_some());
    p.set("v_scale", !variants.iter().all(|(a, _)| a.v_scale == 1.0));
    // Layers that cross-attend to an image, which text alone skips.
    p.set("cross", !spec.plan.iter().all(|l| l.mixer.runs_on_text()));
    p.set("query_scale", spec.attn.query_scale.is_some());
    p.set(
        "sinusoidal",
        matches!(spec.position, crate::spec::Position::Sinusoidal(_)),
    );
    p.set("xielu", spec.mlp.act == crate::spec::Act::Xielu);
    // The token mixers: each one's functions, and the call that picks a layer's.
    p.set("mamba2", spec.ssm().is_some());
    p.set("mamba", spec.s6().is_some());
    p.set("short_conv", spec.short_conv().is_some());
    p.set("lightning", spec.lightning().is_some());
    p.set("rg_lru", spec.rg_lru().is_some());
    p.set("mlstm", spec.mlstm().is_some());
    p.set("rwkv", spec.rwkv().is_some());
    // transformers' RWKV inference: layer b's outputs scaled by 2^-(b // R), the stream halved
    // after every R-th layer.
    p.set(
        "rwkv_rescale",
        spec.rwkv().is_some_and(|r| r.rescale_every > 0),
    );
    let store = spec.delta().map(|d| d.store);
    let kimi = matches!(store, Some(DeltaStore::Kimi | DeltaStore::Bailing));
    p.set("delta", store.is_some());
    p.set("delta_gated", store.is_some() && !kimi);
    p.set("delta_kimi", kimi);
    // Ling's gates are full rank, its decay bounded below.
    p.set("delta_bailing", store == Some(DeltaStore::Bailing));
    p.set(
        "delta_gate_floor",
        kimi && spec.delta().is_some_and(|d| d.gate_floor.is_some()),
    );
    // Qwen4-Exp's "sigmoid" output gate.
    p.set(
        "delta_sigmoid_gate",
        spec.delta().is_some_and(|d| d.sigmoid_gate),
    );
    // MiniMax: each sublayer adds to its normed input, scaled.
    p.set("stream_mix", spec.stream_mix.is_some());
    // Mamba2's group norm after the gate; Falcon-H1's may come before it, or not at all.
    let ssm = spec.ssm();
    p.set(
        "ssm_part_mults",
        ssm.is_some_and(|s| s.part_mults != [1.0; 5]),
    );
    p.set(
        "ssm_norm_before",
        ssm.is_some_and(|s| s.gate == SsmGate::NormBefore),
    );
    p.set("ssm_plain", ssm.is_some_and(|s| s.gate == SsmGate::Plain));
    // Falcon-H1: attention and Mamba2 side by side in every layer, scaled in and out (muP).
    p.set("mup", spec.mup.is_some());
    p.set("recurrent_place", spec.recurrent_place.is_some());
    // Ling's latent attention gates its heads' outputs, as the other attention does; Kimi
    // Linear's has no positions.
    p.set(
        "mla_out_gate",
        any(&|a| a.mla.is_some() && a.out_gate.is_some()),
    );
    p.set(
        "mla_no_rope",
        any(&|a| a.mla.is_some()) && !matches!(spec.position, Position::Rope(_)),
    );
    p.set(
        "causal_conv",
        spec.ssm().is_some()
            || spec.s6().is_some()
            || spec.short_conv().is_some()
            || store.is_some()
            || spec.rg_lru().is_some(),
    );
    // Zamba2 has attention only inside its shared blocks.
    let blocks = spec.shared.as_ref().filter(|s| !s.layers.is_empty());
    let attention = !variants.is_empty() || blocks.is_some();
    p.set("attention", attention);
    // The experts' routing and the hyper-connections' mix take softmaxes too.
    p.set(
        "softmax",
        attention || moe.is_some() || spec.hyper().is_some(),
    );
    p.set("attention_so_far", attention && super::decodes(spec));
    p.fill(
        "rope",
        if attention {
            format!("{}\n\n\n", super::rope(spec))
        } else {
            String::new()
        },
    );
    p.fill("mixer_call", mixer_call(spec));
    p.set(
        "mixer_none",
        spec.plan.iter().any(|l| l.mixer == Mixer::None),
    );
    p.set("ffn_none", spec.plan.iter().any(|l| l.ffn == Ffn::None));
    let no_ffn = spec.plan.iter().all(|l| l.ffn == Ffn::None);
    // RWKV's FFN is its channel mixing.
    p.set(
        "mlp",
        !(no_ffn && blocks.is_none()) && spec.rwkv().is_none(),
    );
    // Zamba: each head projects its own step, B and C; x and z alternate in the input projection.
    p.set("s6_heads", spec.s6().is_some_and(|s| s.heads > 1));
    p.set(
        "s6_interleaved",
        spec.s6().is_some_and(|s| s.heads > 1 && s.interleaved),
    );
    // Zamba's and Zamba2's shared blocks, with their adapters where the visits have them.
    p.set("shared", spec.shared.is_some());
    p.set("shared_blocks", blocks.is_some());
    p.set("attn_adapters", blocks.is_some_and(|s| s.attn_adapters));
    p.set("adapters", blocks.is_some_and(|s| s.adapter_rank > 0));
    // ZAYA: compressed convolutional attention, the router MLP, the embeddings' shift and scale.
    p.set("cca", any(&|a| a.cca.is_some()));
    p.set("router_mlp", moe.is_some_and(|m| m.router_mlp.is_some()));
    p.set("residual_gate", spec.residual == Residual::Gated);
    p.set("residual_affine", spec.residual == Residual::Affine);
    p.set("pool_index", any(&|a| a.pool_index.is_some()));
    // Layers that read a listed layer's keys and values (Kolibri 1.1's kv_source_layers).
    p.set("kv_from", !spec.kv_from.is_empty());
    p.set("block_index", any(&|a| a.block_index.is_some()));
    // MiniMax-M3: the dense MLP's and the shared experts' SwiGLU clamped too.
    p.set("mlp_clamp", spec.mlp.clamp.is_some());
    p.set("glu", moe.is_some() || spec.mlp.clamp.is_some());
    p.set("moe", moe.is_some());
    // Dory's nGPT: the norm onto the unit sphere, the stream moved towards each sublayer's output;
    // its looped layers.
    p.set("unit_norm", spec.norm.kind == NormKind::Unit);
    p.set("sphere", spec.norm.place == NormPlace::Sphere);
    p.set("looped", spec.looped().is_some());
    // Decoding token by token, and the state the recurrent mixers carry for it.
    p.set("decodes", super::decodes(spec));
    // The state the recurrent mixers keep, wherever one's code is in the file (a config may
    // describe a mixer that no layer of its plan runs: LFM2's defaults).
    let mixers = [
        spec.ssm().is_some(),
        spec.s6().is_some(),
        spec.short_conv().is_some(),
        spec.delta().is_some(),
        spec.rg_lru().is_some(),
        spec.lightning().is_some(),
        spec.mlstm().is_some(),
        spec.rwkv().is_some(),
        spec.ngram_ple.is_some(),
    ];
    p.set(
        "recurrent",
        spec.plan.iter().any(|l| l.mixer.recurrent()) || mixers.contains(&true),
    );
    // A pass that is one function's: the rest of forward() never runs.
    p.set(
        "one_pass",
        matches!(
            spec.stream,
            Stream::Hierarchy(_) | Stream::Gated(_) | Stream::Hyper(_)
        ),
    );
    p.set("no_ffn", no_ffn);
    // Gemma 4's assistants: one step from the target's state, over the target's keys and values.
    p.set("draft", spec.draft.is_some());
    p.set(
        "draft_centroids",
        spec.draft.is_some_and(|d| d.centroids.is_some()),
    );
    // BLT: the byte stacks around the latent transformer, whose layers run through
    // stack_forward, a range at a time.
    p.set("blt", spec.bytes().is_some());
    p.fill(
        "blt_constants",
        spec.bytes()
            .map_or(String::new(), |bl| super::blt::constants(g, bl)),
    );
    p
}

/// The call of a layer's token mixer, among those this model has.
fn mixer_call(spec: &Spec) -> String {
    if spec.mup.is_some() {
        return "        a = M[\"attn_out\"] * attention(h * M[\"attn_in\"], W, b, span, use_rope) + M[\"ssm_out\"] * mamba2(h * M[\"ssm_in\"], W, b)  # both read h (M: the muP multipliers)\n".into();
    }
    let delta = match spec.delta().map(|d| d.store) {
        Some(DeltaStore::Kimi | DeltaStore::Bailing) => Some("kimi_delta_attention(h, W, b)"),
        Some(_) => Some("gated_delta_net(h, W, b)"),
        None => None,
    };
    let calls: Vec<(&str, &str)> = [
        (spec.ssm().is_some(), "mamba2", "mamba2(h, W, b)"),
        (spec.s6().is_some(), "mamba", "mamba(h, W, b)"),
        (spec.short_conv().is_some(), "conv", "short_conv(h, W, b)"),
        (
            spec.lightning().is_some(),
            "lightning",
            "lightning(h, W, b)",
        ),
        (spec.rg_lru().is_some(), "rglru", "rg_lru(h, W, b)"),
        (spec.mlstm().is_some(), "mlstm", "mlstm(h, W, b)"),
        (spec.rwkv().is_some(), "rwkv", "time_mix(h, W, b)"),
        (delta.is_some(), "delta", delta.unwrap_or_default()),
        (
            !spec.attn_variants().is_empty(),
            "",
            "attention(h, W, b, span, use_rope)",
        ),
    ]
    .into_iter()
    .filter(|c| c.0)
    .map(|(_, kind, call)| (kind, call))
    .collect();
    // Every layer its FFN alone: the call is never reached.
    let Some((last, rest)) = calls.split_last() else {
        return "        raise AssertionError(\"no layer of this model mixes tokens\")\n".into();
    };
    let chain: String = rest
        .iter()
        .map(|(kind, f)| format!("{f} if span[0] == \"{kind}\" else "))
        .collect();
    format!("        a = {chain}{}\n", last.1)
}

#[cfg(test)]
mod tests {
    use crate::render::fragment::names_in;

    /// Every piece the fragments name is decided, and every piece decided is named in a
    /// fragment: the table and the Python agree, for any model (the table decides every piece
    /// for every Spec).
    #[test]
    fn the_table_decides_exactly_the_pieces_the_fragments_name() {
        let spec = crate::families::load_json(
            "llama",
            crate::catalog::get("llama-3.2-1b").unwrap().json,
            "llama",
            false,
        )
        .unwrap();
        let p = super::pieces(&crate::graph::build(&spec).unwrap());
        let mut decided: Vec<&str> = p.names().collect();
        decided.sort_unstable();
        let (mut named, mut fills) = (Vec::new(), Vec::new());
        for (_, src) in super::super::FRAGMENTS {
            let (n, f) = names_in(src);
            for x in n {
                if !named.contains(&x) {
                    named.push(x);
                }
            }
            fills.extend(f);
        }
        named.sort_unstable();
        assert_eq!(named, decided);
        fills.sort_unstable();
        assert_eq!(fills, ["blt_constants", "mixer_call", "rope"]);
    }

    /// Every line of the fragments is some tested model's: no section that no model keeps, which
    /// neither the linter (run on the files made) nor the parity tests would ever read.
    #[test]
    fn every_line_of_the_fragments_is_some_models() {
        let graphs: Vec<_> = crate::corpus::models()
            .iter()
            .map(|m| crate::graph::build(&m.spec).unwrap())
            .collect();
        assert!(graphs.len() > 400, "{}", graphs.len());
        let mut never = Vec::new();
        for (file, src) in super::super::FRAGMENTS {
            let mut kept = vec![false; src.split_inclusive('\n').count()];
            for g in &graphs {
                let p = super::pieces(g);
                for (k, on) in kept
                    .iter_mut()
                    .zip(crate::render::fragment::kept_lines(file, src, &p))
                {
                    *k |= on;
                }
            }
            for (i, line) in src.lines().enumerate() {
                let code = !line.trim().is_empty()
                    && !line.starts_with("#:")
                    && !line.starts_with("#.")
                    && !line.starts_with("#=");
                if code && !kept[i] {
                    never.push(format!("{file}:{}: {line}", i + 1));
                }
            }
        }
        assert!(
            never.is_empty(),
            "lines no model keeps:\n{}",
            never.join("\n")
        );
    }
}
