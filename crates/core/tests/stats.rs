//! Figures summed from the Graph: active parameters by the routing rule, KV cache per attention
//! kind, auxiliary modules counted apart.

use anatomy_core::{graph, source, stats};

fn stats_of(model: &str, context: Option<u64>) -> stats::Stats {
    let g = graph::build(&source::load(model, false).unwrap().spec).unwrap();
    stats::stats(&g, context).unwrap()
}

/// The figures the Breadth issue quotes, computed by anatomy (the fixtures check them against
/// transformers in exactness.rs).
#[test]
fn quoted_totals_and_active() {
    for (model, total, active, active_no_embed) in [
        ("deepseek-v3", 671_026_419_200u64, 37_552_297_472u64, None),
        ("mixtral-8x7b-v0.1", 46_702_792_704, 12_879_925_248, None),
        ("qwen3-30b-a3b", 30_532_122_624, 3_353_032_704, None),
        (
            "gpt-oss-20b",
            20_914_757_184,
            4_187_440_704,
            Some(3_608_307_264u64),
        ),
        (
            "gemma-2-9b",
            9_241_705_984,
            9_241_705_984,
            Some(8_324_201_984),
        ),
        ("gpt-2", 124_439_808, 124_439_808, None),
    ] {
        let s = stats_of(model, None);
        assert_eq!(
            (s.total_params, s.active_params),
            (total, active),
            "{model}"
        );
        if let Some(n) = active_no_embed {
            assert_eq!(s.active_params_without_embedding, n, "{model}");
        }
    }
}

/// The published DeepSeek-V3 checkpoint's "685B" is the model plus its multi-token-prediction layer.
#[test]
fn deepseek_mtp_counted_apart() {
    let s = stats_of("deepseek-v3", None);
    assert_eq!(s.aux_params, 13_463_426_304);
    assert_eq!(s.total_params + s.aux_params, 684_489_845_504);
    assert_eq!(stats_of("llama-3.1-8b", None).aux_params, 0);
}

#[test]
fn kv_cache_per_attention_kind() {
    // MLA: the KV latent (512) and the shared rotary key (64), per layer.
    assert_eq!(
        stats_of("deepseek-v3", None).kv_cache.values_per_token,
        61 * (512 + 64)
    );
    // DeepSeek sparse attention caches the indexer's key (128) beside the latent.
    assert_eq!(
        stats_of("deepseek-v3.2", None).kv_cache.values_per_token,
        61 * (512 + 64 + 128)
    );
    // GQA: K and V of each K/V head.
    assert_eq!(
        stats_of("llama-3.1-70b", None).kv_cache.values_per_token,
        80 * 2 * 8 * 128
    );
    // MHA: every head has its own K and V.
    assert_eq!(
        stats_of("gpt-2", None).kv_cache.values_per_token,
        12 * 2 * 768
    );
    // NoPE layers cache K all the same.
    assert_eq!(
        stats_of("smollm3-3b", None).kv_cache.values_per_token,
        36 * 2 * 4 * 128
    );
    // Sinks add nothing; sliding layers stop at their window of 128.
    let s = stats_of("gpt-oss-20b", Some(131_072));
    assert_eq!(s.kv_cache.values_per_token, 24 * 2 * 8 * 64);
    assert_eq!(
        s.kv_cache.values_at_context,
        12 * 2 * 8 * 64 * 131_072 + 12 * 2 * 8 * 64 * 128
    );
    // Chunked layers stop at their chunk.
    let s = stats_of("llama-4-scout-17b-16e", Some(1 << 20));
    assert_eq!(
        s.kv_cache.values_at_context,
        36 * 2 * 8 * 128 * 8192 + 12 * 2 * 8 * 128 * (1 << 20)
    );
}

/// Past its top-k, a query of DeepSeek sparse attention attends to a fixed number of keys: a
/// further token of context costs only the indexer's scores (64 heads × 128 dims, a multiply-add
/// each, in 61 layers), where DeepSeek-V3 also pays 128 heads' scores and values.
#[test]
fn sparse_attention_stops_growing_at_its_top_k() {
    let decode = |m: &str, c: u64| stats_of(m, Some(c)).flops.decode_per_token;
    let more = 65_536u64;
    let sparse = decode("deepseek-v3.2", 8192 + more) - decode("deepseek-v3.2", 8192);
    assert_eq!(sparse, 2 * 64 * 128 * 61 * more);
    let dense = decode("deepseek-v3", 8192 + more) - decode("deepseek-v3", 8192);
    assert_eq!(dense, 2 * 128 * (192 + 128) * 61 * more);
    // Below the top-k, every key is kept: the attention costs what V3's does.
    let attn = |m: &str| decode(m, 2048) - stats_of(m, Some(2048)).flops.matmul_per_token;
    assert_eq!(
        attn("deepseek-v3.2"),
        attn("deepseek-v3") + 2 * 64 * 128 * 61 * 2048
    );
}

#[test]
fn layer_runs_in_stats() {
    let s = stats_of("deepseek-v3", None);
    let runs: Vec<(u64, u64, u64)> = s
        .layer_runs
        .iter()
        .map(|r| (r.first_layer, r.last_layer, r.count))
        .collect();
    assert_eq!(runs, [(0, 2, 3), (3, 60, 58)]);
    assert_eq!(
        s.layer_runs
            .iter()
            .map(|r| r.params_per_layer as u128 * r.count as u128)
            .sum::<u128>()
            + 2 * 926_679_040
            + 7168,
        s.total_params as u128
    );
}

/// MQA: one K/V head shared by every query head.
#[test]
fn mqa_caches_one_head() {
    let mut spec = source::load("llama-3.2-1b", false).unwrap().spec;
    spec.attn.kv_heads = 1;
    spec.attn.kind = anatomy_core::spec::AttnKind::Mqa;
    let g = graph::build(&spec).unwrap();
    assert_eq!(
        stats::stats(&g, None).unwrap().kv_cache.values_per_token,
        16 * 2 * 64
    );
}

/// MiMo-V2-Flash's sliding-window layers cache twice the K/V heads of its full layers, for at
/// most their window; each layer's cache is sized by its own attention.
#[test]
fn kv_cache_follows_each_layers_attention() {
    let spec = source::load("mimo-v2-flash", false).unwrap().spec;
    let sliding = spec.attn_for(anatomy_core::spec::AttnSpan::Sliding(1));
    assert_eq!((spec.attn.kv_heads, sliding.kv_heads), (4, 8));
    let per_token: u64 = (0..spec.layers as usize)
        .map(|b| {
            let a = spec.attn_at(b);
            a.kv_heads * (a.head_dim + a.v_head_dim)
        })
        .sum();
    for context in [64u64, 4096] {
        let s = stats_of("mimo-v2-flash", Some(context));
        assert_eq!(s.kv_cache.values_per_token, per_token);
        let at: u64 = (0..spec.layers as usize)
            .map(|b| {
                let a = spec.attn_at(b);
                a.kv_heads
                    * (a.head_dim + a.v_head_dim)
                    * spec.plan[b]
                        .span()
                        .expect("attention")
                        .cached_tokens(context)
            })
            .sum();
        assert_eq!(s.kv_cache.values_at_context, at, "at {context}");
    }
}

/// A model of recurrent layers alone caches nothing per token: its state per sequence is each
/// layer's scan state (heads × head_dim × state) and convolution window ((kernel − 1) inputs of
/// x, B and C), the same at any context, and so are its decode FLOPs.
#[test]
fn recurrent_state_is_the_same_at_any_context() {
    let spec = source::load("mamba-codestral-7b", false).unwrap().spec;
    let s = spec.ssm().unwrap().clone();
    let conv = s.heads * s.head_dim + 2 * s.groups * s.state;
    let per_layer = s.heads * s.head_dim * s.state + conv * (s.conv_kernel - 1);
    let (short, long) = (
        stats_of("mamba-codestral-7b", Some(64)),
        stats_of("mamba-codestral-7b", Some(4096)),
    );
    for st in [&short, &long] {
        assert_eq!(st.kv_cache.values_per_token, 0);
        assert_eq!(st.kv_cache.values_at_context, 0);
        assert_eq!(st.state.values_per_sequence, per_layer * spec.layers);
        assert_eq!(st.state.bytes_bf16, 2 * per_layer * spec.layers);
        assert!(st.flops.recurrent_per_token > 0);
    }
    assert_eq!(short.flops.decode_per_token, long.flops.decode_per_token);
    assert_eq!(short.flops.prefill_per_token, long.flops.prefill_per_token);
    // An attention model next to it: no state, a cache that grows.
    let llama = (
        stats_of("llama-3.2-1b", Some(64)),
        stats_of("llama-3.2-1b", Some(4096)),
    );
    assert_eq!(llama.0.state.values_per_sequence, 0);
    assert!(llama.1.flops.decode_per_token > llama.0.flops.decode_per_token);
}

/// A hybrid caches keys and values in its attention layers only, and keeps a fixed state in its
/// Mamba2 layers only, at any context.
#[test]
fn a_hybrid_caches_in_attention_layers_and_keeps_state_in_the_others() {
    let cfg = serde_json::json!({
        "model_type": "bamba", "num_hidden_layers": 8, "attn_layer_indices": [3, 7],
        "hidden_size": 1024, "num_attention_heads": 8, "num_key_value_heads": 2,
        "mamba_n_heads": 32, "mamba_d_state": 64, "mamba_n_groups": 2, "mamba_d_conv": 4,
    });
    let spec =
        anatomy_core::families::load_json("bamba.json", &cfg.to_string(), "b", false).unwrap();
    let g = graph::build(&spec).unwrap();
    let s = spec.ssm().unwrap().clone();
    // Per attention layer and token: K and V, 2 heads of 1024 / 8.
    let kv_per_layer = 2 * 2 * (1024 / 8);
    // Per Mamba2 layer: 32 heads × 64 (2 × 1024 / 32) × 64, and 3 inputs of x, B and C.
    let state_per_layer = 32 * 64 * 64 + (2048 + 2 * 2 * 64) * 3;
    assert_eq!(s.heads * s.head_dim * s.state, 32 * 64 * 64);
    for context in [128, 65_536] {
        let st = stats::stats(&g, Some(context)).unwrap();
        assert_eq!(st.kv_cache.values_per_token, 2 * kv_per_layer, "{context}");
        assert_eq!(
            st.kv_cache.values_at_context,
            2 * kv_per_layer * context,
            "{context}"
        );
        assert_eq!(
            st.state.values_per_sequence,
            6 * state_per_layer,
            "{context}"
        );
    }
}

/// The state each new recurrent mixer keeps per layer, and the KV cache of the attention layers
/// beside them, at two contexts: MiniMax's lightning attention keeps a head_dim × head_dim
/// memory per head; RecurrentGemma's RG-LRU one value per channel and a convolution window, its
/// local attention a cache capped at its window; RWKV the WKV sums and the two mixings' previous
/// inputs, and no cache at all.
#[test]
fn new_recurrent_mixers_keep_their_state_and_cache_only_in_attention() {
    let load = |cfg: serde_json::Value| {
        let spec =
            anatomy_core::families::load_json("c.json", &cfg.to_string(), "m", false).unwrap();
        graph::build(&spec).unwrap()
    };
    let minimax = load(serde_json::json!({
        "model_type": "minimax", "num_hidden_layers": 6, "hidden_size": 512,
        "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 256,
        "num_local_experts": 4, "num_experts_per_tok": 2, "vocab_size": 1000,
    }));
    let gemma = load(serde_json::json!({
        "model_type": "recurrent_gemma", "num_hidden_layers": 6, "hidden_size": 512,
        "num_attention_heads": 8, "num_key_value_heads": 1, "lru_width": 768,
        "attention_window_size": 2048, "conv1d_width": 4, "intermediate_size": 1024,
        "vocab_size": 1000,
    }));
    let rwkv = load(serde_json::json!({
        "model_type": "rwkv", "num_hidden_layers": 6, "hidden_size": 512,
        "attention_hidden_size": 256, "vocab_size": 1000,
    }));
    for context in [128, 65_536] {
        // MiniMax: layers 0, 2, 4 attend (2 K/V heads of 64); 1, 3, 5 keep 8 heads × 64 × 64.
        let st = stats::stats(&minimax, Some(context)).unwrap();
        assert_eq!(st.kv_cache.values_per_token, 3 * 2 * 2 * 64, "{context}");
        assert_eq!(st.kv_cache.values_at_context, 3 * 2 * 2 * 64 * context);
        assert_eq!(st.state.values_per_sequence, 3 * 8 * 64 * 64);
        // RecurrentGemma: layers 2 and 5 attend (one K/V head of 512 / 8), within 2048 tokens;
        // the other four keep 768 channels and 3 convolution inputs of 768.
        let st = stats::stats(&gemma, Some(context)).unwrap();
        assert_eq!(st.kv_cache.values_per_token, 2 * 2 * 64, "{context}");
        assert_eq!(
            st.kv_cache.values_at_context,
            2 * 2 * 64 * context.min(2048),
            "{context}"
        );
        assert_eq!(st.state.values_per_sequence, 4 * (768 + 3 * 768));
        // RWKV: num, den and their largest exponent over 256 channels, and two inputs of 512.
        let st = stats::stats(&rwkv, Some(context)).unwrap();
        assert_eq!(st.kv_cache.values_per_token, 0);
        assert_eq!(st.state.values_per_sequence, 6 * (3 * 256 + 2 * 512));
        assert!(st.flops.recurrent_per_token > 0);
    }
}

/// A token's weight matmuls cost 2 FLOPs per matmul parameter: every weight but the embedding
/// lookup and the norms, the LM head once (not once per layer), the embedding again where the
/// head is tied to it, the experts that run.
#[test]
fn matmul_flops_are_two_per_weight_used() {
    for (model, tied) in [
        ("llama-3.1-8b", false),
        ("qwen3-0.6b", true),
        ("mamba-codestral-7b", false),
    ] {
        let st = stats_of(model, None);
        let by = |c: &str| st.params_by_component[c];
        let mut weights = st.total_params - by("norms") - by("embedding");
        if tied {
            weights += by("embedding");
        }
        // Mamba2's per-head Δ bias, decay rates and skip, and its convolution, are not matmuls.
        let g = graph::build(&source::load(model, false).unwrap().spec).unwrap();
        let not_matmul: u64 = g
            .params
            .iter()
            .filter(|p| p.component == graph::Component::Mixer && p.shape.len() != 2)
            .map(|p| (p.numel() * p.instances()) as u64)
            .sum();
        assert_eq!(
            st.flops.matmul_per_token,
            2 * (weights - not_matmul),
            "{model}"
        );
    }
}

/// Zamba2: every layer keeps a Mamba2 state; the layers that run a shared block cache keys and
/// values of their own, though the block's weights are stored once; the weight FLOPs count the
/// block at every visit.
#[test]
fn zamba2_caches_per_visit_and_counts_the_shared_block_at_each() {
    let cfg = serde_json::json!({
        "model_type": "zamba2", "num_hidden_layers": 6, "hidden_size": 256,
        "layers_block_type": ["linear_attention", "hybrid", "linear_attention", "hybrid", "hybrid", "linear_attention"],
        "num_mem_blocks": 2, "num_attention_heads": 8, "num_key_value_heads": 4,
        "n_mamba_heads": 8, "mamba_d_state": 16, "mamba_ngroups": 1, "mamba_d_conv": 4,
        "intermediate_size": 512, "adapter_rank": 8, "vocab_size": 1000,
    });
    let spec = anatomy_core::families::load_json("z.json", &cfg.to_string(), "z", false).unwrap();
    let g = graph::build(&spec).unwrap();
    // Per visit and token: K and V, 4 heads of 2 × 256 / 8.
    let kv_per_visit = 2 * 4 * 64;
    // Per layer: 8 heads × 64 (2 × 256 / 8) × 16, and 3 inputs of x, B and C.
    let state_per_layer = 8 * 64 * 16 + (512 + 2 * 16) * 3;
    for context in [128, 65_536] {
        let st = stats::stats(&g, Some(context)).unwrap();
        assert_eq!(st.kv_cache.values_per_token, 3 * kv_per_visit, "{context}");
        assert_eq!(st.kv_cache.values_at_context, 3 * kv_per_visit * context);
        assert_eq!(st.state.values_per_sequence, 6 * state_per_layer);
    }
    // Weights: each block's attention (q, k, v, o) and MLP (gate/up, down), stored once but run
    // at 3 visits; each visit's adapter and its own output projection; Mamba2 and the head.
    let (d, wide) = (256u64, 512u64);
    let attn = wide * 512 + 2 * wide * 256 + 512 * d;
    let mlp = d * 1024 + 512 * d;
    let per_visit = (8 * d + 1024 * 8) + d * d;
    let mamba = d * (512 + 512 + 2 * 16 + 8) + 512 * d;
    let st = stats::stats(&g, Some(128)).unwrap();
    assert_eq!(
        st.flops.matmul_per_token,
        2 * (3 * (attn + mlp + per_visit) + 6 * mamba + 1000 * d)
    );
    let shared = |p: &&graph::Param| p.hf.contains("shared_transformer.self_attn.q_proj");
    assert_eq!(
        g.params
            .iter()
            .filter(shared)
            .map(|p| p.instances())
            .sum::<u128>(),
        2
    );
}

/// xLSTM keeps, per layer and head, its key × value memory, its normalizer and its stabilizer,
/// at any context, and caches nothing per token.
#[test]
fn xlstm_keeps_a_matrix_memory_per_head() {
    let cfg = serde_json::json!({"model_type": "xlstm", "hidden_size": 256, "num_hidden_layers": 3,
        "num_heads": 4, "vocab_size": 1000});
    let spec = anatomy_core::families::load_json("x.json", &cfg.to_string(), "x", false).unwrap();
    let g = graph::build(&spec).unwrap();
    // Keys of 256 / 2 / 4 = 32, values of 256 / 4 = 64 per head.
    let per_layer = 4 * (32 * 64 + 32 + 1);
    for context in [128, 65_536] {
        let st = stats::stats(&g, Some(context)).unwrap();
        assert_eq!(st.kv_cache.values_per_token, 0);
        assert_eq!(st.state.values_per_sequence, 3 * per_layer, "{context}");
    }
}

/// Zamba's and Zamba2's mixers are named as plain layers' where no layer runs the shared block
/// (transformers' names, checked against it: 29 and 32 tensors), with no placeholder left.
#[test]
fn zamba_without_shared_layers_names_its_mixers_plainly() {
    for (cfg, tensors) in [
        (
            serde_json::json!({"model_type": "zamba2", "num_hidden_layers": 3,
                "layers_block_type": ["linear_attention", "linear_attention", "mamba"],
                "hidden_size": 32, "num_attention_heads": 4, "n_mamba_heads": 4,
                "mamba_d_state": 8, "vocab_size": 50, "intermediate_size": 16}),
            29,
        ),
        (
            serde_json::json!({"model_type": "zamba", "num_hidden_layers": 3,
                "layers_block_type": ["linear_attention", "linear_attention", "mamba"],
                "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 4,
                "n_mamba_heads": 2, "mamba_d_state": 8, "vocab_size": 50, "intermediate_size": 16}),
            32,
        ),
    ] {
        let spec =
            anatomy_core::families::load_json("z.json", &cfg.to_string(), "z", false).unwrap();
        let g = graph::build(&spec).unwrap();
        let names =
            anatomy_core::manifest::manifest(&g, anatomy_core::manifest::Naming::Hf).unwrap();
        assert_eq!(names.len(), tensors, "{cfg}");
        assert!(names.iter().all(|e| !e.name.contains('{')), "{names:?}");
        assert!(names
            .iter()
            .any(|e| e.name == "model.layers.2.mamba.in_proj.weight"));
        assert_eq!(
            stats::stats(&g, Some(64))
                .unwrap()
                .kv_cache
                .values_per_token,
            0
        );
    }
}

/// The stats report of a model without attention layers says it keeps no KV cache, in words,
/// and lists no attention among its components; a hybrid's lists both.
#[test]
fn a_model_without_attention_reports_no_kv_cache() {
    let report = |name: &str| {
        let loaded = source::load(name, false).unwrap();
        let g = graph::build(&loaded.spec).unwrap();
        let s = stats::stats(&g, None).unwrap();
        anatomy_core::render::report::stats(&g, &s, "catalog")
    };
    let xlstm = report("xlstm-7b");
    assert!(
        xlstm.contains("KV cache: none (no attention layer)"),
        "{xlstm}"
    );
    assert!(!xlstm.contains("    attention "), "{xlstm}");
    assert!(xlstm.contains("    mixer "), "{xlstm}");
    let hybrid = report("qwen3-next-80b-a3b");
    assert!(
        hybrid.contains("KV cache (12,288 values per token over 12 attention layers)"),
        "{hybrid}"
    );
    assert!(
        hybrid.contains("    attention ") && hybrid.contains("    mixer "),
        "{hybrid}"
    );
}

/// HRM-Text runs each stored layer once per visit of its stack: its KV cache and its layers'
/// FLOPs are those of the same layers run once each, times the visits over the two stacks,
/// H_cycles × (L_cycles + 1) / 2; its parameters are the stored layers' alone.
#[test]
fn a_hierarchy_caches_and_computes_once_per_visit() {
    let spec = source::load("hrm-text-1b", false).unwrap().spec;
    let h = spec.hierarchy().expect("HRM-Text loops over its stacks");
    let mut once = spec.clone();
    once.stream = anatomy_core::spec::Stream::Plain;
    let (looped, flat) = (graph::build(&spec).unwrap(), graph::build(&once).unwrap());
    let visits = h.high_cycles * (h.low_cycles + 1);
    for context in [128, 2048] {
        let (a, b) = (
            stats::stats(&looped, Some(context)).unwrap(),
            stats::stats(&flat, Some(context)).unwrap(),
        );
        assert_eq!(
            2 * a.kv_cache.values_per_token,
            visits * b.kv_cache.values_per_token
        );
        assert_eq!(
            2 * a.kv_cache.values_at_context,
            visits * b.kv_cache.values_at_context
        );
        // The LM head runs once either way; every layer's weights once per visit.
        let head = 2 * spec.vocab * spec.hidden;
        assert_eq!(
            2 * (a.flops.matmul_per_token - head),
            visits * (b.flops.matmul_per_token - head)
        );
        // The loop's stored initial state is the one parameter the flat copy lacks.
        assert_eq!(a.total_params, b.total_params + spec.hidden);
    }
}

/// Dory's looped layers compute once per pass; they cache once per pass (`per_loop`) or once in
/// all (`last_loop`), at any context. Its parameters are the stored layers' alone.
#[test]
fn looped_layers_compute_per_pass_and_cache_per_pass_or_once() {
    let spec = source::load("dory1.0-4b", false).unwrap().spec;
    let l = spec.looped().expect("Dory loops over its middle layers");
    let mut once = spec.clone();
    once.stream = anatomy_core::spec::Stream::Plain;
    let mut last = spec.clone();
    last.stream = anatomy_core::spec::Stream::Looped(anatomy_core::spec::Looped {
        shared_cache: true,
        ..l
    });
    let [looped, flat, last] = [&spec, &once, &last].map(|s| graph::build(s).unwrap());
    let (n, r) = (spec.layers as u128, l.recurrent as u128);
    let runs = n + (l.loops as u128 - 1) * r;
    for context in [128, 8192] {
        let [a, b, c] = [&looped, &flat, &last].map(|g| stats::stats(g, Some(context)).unwrap());
        // Every layer caches the same per token here: the looped ones once per pass.
        assert_eq!(
            n * a.kv_cache.values_per_token as u128,
            runs * b.kv_cache.values_per_token as u128
        );
        assert_eq!(c.kv_cache.values_per_token, b.kv_cache.values_per_token);
        assert_eq!(c.kv_cache.values_at_context, b.kv_cache.values_at_context);
        // The LM head runs once; every layer's weights once per run, whichever layers cache.
        let head = 2 * spec.vocab as u128 * spec.hidden as u128;
        let per_layer = (b.flops.matmul_per_token as u128 - head) / n;
        assert_eq!(a.flops.matmul_per_token as u128 - head, runs * per_layer);
        assert_eq!(c.flops.matmul_per_token, a.flops.matmul_per_token);
        assert_eq!(a.total_params, b.total_params);
    }
}

/// CPM-Ant caches its learned prompt's positions beside the text's, and a prefill runs them
/// through every layer, every query (the prompt's too) attending to every key; decoding a token
/// attends to the prompt and the text.
#[test]
fn a_learned_prompt_is_cached_and_run() {
    let spec = source::load("cpm-ant-10b", false).unwrap().spec;
    let g = graph::build(&spec).unwrap();
    let p = spec.prompt.unwrap().length;
    assert!(p > 0);
    // Q·Kᵀ and the weighted sum: 2 multiply-adds of head_dim per head, key and layer.
    let a = &spec.attn;
    let per_key = 2 * 2 * a.heads * a.head_dim * spec.layers;
    for context in [100u64, 2048] {
        let s = stats::stats(&g, Some(context)).unwrap();
        let kv = &s.kv_cache;
        assert_eq!(kv.values_at_context, kv.values_per_token * (context + p));
        let f = &s.flops;
        assert_eq!(
            f.decode_per_token,
            f.matmul_per_token + per_key * (context + p)
        );
        let n = (context + p) as f64;
        let prefill = (f.matmul_per_token as f64 * n + per_key as f64 * n * n) / context as f64;
        assert!(
            (f.prefill_per_token as f64 - prefill).abs() <= 1.0,
            "{} vs {prefill}",
            f.prefill_per_token
        );
    }
}

/// A Gemma 4 assistant caches nothing of its own, and a draft step's query reads all of its
/// target's keys in a full layer and the last window + 1 in a sliding one (transformers'
/// bidirectional window, turned to look back), at two contexts.
#[test]
fn a_draft_model_reads_its_targets_keys_and_caches_none() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../exec/tests/fixtures/draft/gemma4-assistant/assistant"
    );
    let cfg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{dir}/config.json")).unwrap())
            .unwrap();
    let text = &cfg["text_config"];
    let n = |v: &serde_json::Value| v.as_u64().unwrap();
    let (heads, window) = (n(&text["num_attention_heads"]), n(&text["sliding_window"]));
    let width = |kind: &str| {
        heads
            * if kind == "full_attention" {
                n(&text["global_head_dim"])
            } else {
                n(&text["head_dim"])
            }
    };
    for context in [100u64, 3000] {
        let s = stats_of(dir, Some(context));
        assert_eq!(s.kv_cache.values_at_context, 0);
        // Scores and the weighted sum: 2 FLOPs per multiply-add each, per key read.
        let attention: u64 = (text["layer_types"].as_array().unwrap().iter())
            .map(|k| {
                let kind = k.as_str().unwrap();
                let keys = if kind == "sliding_attention" {
                    (window + 1).min(context)
                } else {
                    context
                };
                2 * 2 * width(kind) * keys
            })
            .sum();
        assert_eq!(
            s.flops.decode_per_token,
            s.flops.matmul_per_token + attention,
            "context {context}"
        );
    }
}

/// Qwen4-Exp's QSA: each attention layer caches one raw index key per token beside K and V;
/// past the budget a query's heads attend to at most budget + ratio − 1 keys, and only the
/// indexer's block scores grow with the context.
#[test]
fn qsa_caches_its_index_keys_and_bounds_the_keys_attended() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../exec/tests/fixtures/qwen4-exp"
    );
    let spec = source::load(dir, false).unwrap().spec;
    let g = graph::build(&spec).unwrap();
    let (a, q) = (&spec.attn, spec.attn.qsa.unwrap());
    let attending = spec.attending_layers().len() as u64;
    let per_token = attending * (2 * a.kv_heads * a.head_dim + q.head_dim);
    let decode = |context: u64| {
        let st = stats::stats(&g, Some(context)).unwrap();
        assert_eq!(st.kv_cache.values_per_token, per_token);
        assert_eq!(st.kv_cache.values_at_context, per_token * context);
        st.flops.decode_per_token - st.flops.matmul_per_token - st.flops.recurrent_per_token
    };
    // Scores and values over the kept keys, and the indexer's score of each complete block.
    let attention = |context: u64| {
        let kept = (context / q.ratio * q.ratio).min(q.budget) + context % q.ratio;
        attending
            * (2 * a.heads * (a.head_dim + a.v_head_dim) * kept
                + 2 * q.heads * q.head_dim * (context / q.ratio))
    };
    for context in [1, q.budget - 1, q.budget + 1, 4096, 4096 + q.ratio - 1] {
        assert_eq!(decode(context), attention(context), "{context}");
    }
    // From the budget on, 2·ratio more tokens of context add two blocks to score, nothing else.
    let grow = decode(8192 + 2 * q.ratio) - decode(8192);
    assert_eq!(grow, attending * 2 * q.heads * q.head_dim * 2);
}

/// Qwen4-Exp's n-gram embeddings carry, in each layer that has them, the last ngram − 1 ids
/// and their convolution's last (kernel − 1) · ngram inputs per channel, the same at any
/// context; they add nothing to the KV cache.
#[test]
fn ngram_embeddings_carry_their_ids_and_convolution_inputs() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../exec/tests/fixtures/qwen4-exp-ple"
    );
    let spec = source::load(dir, false).unwrap().spec;
    let p = spec.ngram_ple.clone().unwrap();
    let mut without = spec.clone();
    without.ngram_ple = None;
    let (g, g0) = (
        graph::build(&spec).unwrap(),
        graph::build(&without).unwrap(),
    );
    let channels = spec.streams() * spec.hidden;
    let per_layer = (p.ngram - 1) + (p.kernel - 1) * p.ngram * channels;
    for context in [128, 65_536] {
        let (s, s0) = (
            stats::stats(&g, Some(context)).unwrap(),
            stats::stats(&g0, Some(context)).unwrap(),
        );
        assert_eq!(
            s.state.values_per_sequence - s0.state.values_per_sequence,
            p.layers.len() as u64 * per_layer,
            "{context}"
        );
        assert_eq!(s.kv_cache.values_per_token, s0.kv_cache.values_per_token);
    }
}

/// BLT's KV cache is its four stacks' together, each cached under its own Spec (the byte-level
/// stacks' sliding windows, the latent transformer's full attention), the latent transformer's
/// at one patch per byte.
#[test]
fn blt_caches_each_stack_under_its_own_spec() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/saved/blt.json");
    let spec = source::load(path, false).unwrap().spec;
    let bl = spec.bytes().expect("BLT holds its byte-level stacks");
    let mut latent = spec.clone();
    latent.stream = anatomy_core::spec::Stream::Plain;
    let stacks = [
        Some(&latent),
        Some(&bl.encoder),
        Some(&bl.decoder),
        bl.patcher.as_ref(),
    ];
    let whole = graph::build(&spec).unwrap();
    for context in [256, 4096] {
        let blt = stats::stats(&whole, Some(context)).unwrap();
        let (mut per_token, mut at_context) = (0, 0);
        for s in stacks.into_iter().flatten() {
            let alone = stats::stats(&graph::build(s).unwrap(), Some(context)).unwrap();
            per_token += alone.kv_cache.values_per_token;
            at_context += alone.kv_cache.values_at_context;
        }
        assert_eq!(blt.kv_cache.values_per_token, per_token);
        assert_eq!(blt.kv_cache.values_at_context, at_context);
    }
    // The byte-level stacks' windows bind at 4096 bytes: not every position is cached.
    let blt = stats::stats(&whole, Some(4096)).unwrap();
    assert!(blt.kv_cache.values_at_context < 4096 * blt.kv_cache.values_per_token);
}

/// LongCat-Flash's router picks its top-k among the routed and the zero-computation experts:
/// where k is more than the routed experts, each of them runs at most once; the zero-computation
/// ones hold no weights (transformers 5.25 builds none for them), so every parameter is active.
#[test]
fn a_top_k_above_the_routed_experts_runs_each_once() {
    let mut v = anatomy_core::catalog::get("longcat-flash-chat")
        .unwrap()
        .value();
    v["n_routed_experts"] = 4.into();
    assert!(v["moe_topk"].as_u64().unwrap() > 4);
    let spec = anatomy_core::families::load_json("m.json", &v.to_string(), "m", false).unwrap();
    assert!(spec.moe.as_ref().unwrap().zero_experts > 0);
    let g = graph::build(&spec).unwrap();
    let s = stats::stats(&g, None).unwrap();
    assert!(g.params.iter().filter(|p| p.routed).all(|p| p.experts == 4));
    assert_eq!(s.active_params, s.total_params);
}

/// A wrapper whose config transformers builds but cannot run on an image (VipLlava reading a
/// hidden state its tower lacks) or that anatomy does not run (a tower activation it lacks) is
/// read and counted as before, without an image: no figures per image.
#[test]
fn wrappers_that_cannot_run_an_image_are_counted_without_one() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let unseen = root.join("tests/fixtures/unseen/unseen-vipllava-1.json");
    let vip = source::load(unseen.to_str().unwrap(), false).unwrap().spec;
    assert!(vip.image.is_none() && !vip.towers.is_empty());
    let qwen = root.join("../exec/tests/fixtures/image/qwen2-vl-jpeg/config.json");
    let text = std::fs::read_to_string(&qwen).unwrap();
    let runs = anatomy_core::families::load_json("config.json", &text, "qwen", false).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["vision_config"]["hidden_act"] = "mish".into();
    let other =
        anatomy_core::families::load_json("config.json", &v.to_string(), "qwen", false).unwrap();
    assert!(runs.image.is_some() && other.image.is_none());
    // Every figure but the image's the same.
    let figures = |s: &anatomy_core::spec::Spec| {
        let stats = stats::stats(&graph::build(s).unwrap(), None).unwrap();
        let mut v = serde_json::to_value(stats).unwrap();
        let image = v.as_object_mut().unwrap().remove("image");
        (v, image.is_some())
    };
    let ((a, with), (b, without)) = (figures(&runs), figures(&other));
    assert!(with && !without);
    assert_eq!(a, b);
}

/// Aya Vision's and Command A Vision's settings transformers cannot run on an image: an odd
/// SwiGLU width (its halves unequal), a hidden state past the tower's, the states without their
/// first (no square of patches left), a shuffle that does not divide the patch grid. Each is
/// counted, without an image; the published settings run one.
#[test]
fn cohere_wrappers_that_cannot_run_an_image_are_counted_without_one() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let load = |v: &serde_json::Value| {
        anatomy_core::families::load_json("config.json", &v.to_string(), "m", false).unwrap()
    };
    for (fixture, changes) in [
        (
            "aya-vision-jpeg",
            vec![
                ("alignment_intermediate_size", serde_json::json!(41)),
                ("vision_feature_layer", serde_json::json!(-4)),
                (
                    "vision_feature_select_strategy",
                    serde_json::json!("default"),
                ),
                ("downsample_factor", serde_json::json!(3)),
            ],
        ),
        (
            "cohere2-vision-jpeg",
            vec![
                ("alignment_intermediate_size", serde_json::json!(41)),
                ("downsample_factor", serde_json::json!(3)),
            ],
        ),
    ] {
        let path = root.join(format!(
            "../exec/tests/fixtures/image/{fixture}/config.json"
        ));
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert!(load(&v).image.is_some(), "{fixture}");
        for (key, value) in changes {
            let mut changed = v.clone();
            changed[key] = value;
            let spec = load(&changed);
            assert!(
                spec.image.is_none() && !spec.towers.is_empty(),
                "{fixture}: {key}"
            );
        }
    }
}
