//! `anatomy diff` on catalog pairs whose differences are known from their configs: every
//! difference found, no other.

use anatomy_core::diff::{diff, Diff, Kind, StepStatus};
use anatomy_core::{catalog, families, graph, source};
use serde_json::Value;
use std::collections::BTreeSet;

fn graph_of(name: &str) -> graph::Graph {
    graph::build(&source::load(name, false).unwrap().spec).unwrap()
}

fn config(name: &str) -> Value {
    serde_json::from_str(catalog::get(name).unwrap().json).unwrap()
}

fn keys(d: &Diff) -> BTreeSet<&str> {
    d.changes.iter().map(|c| c.key).collect()
}

fn change<'d>(d: &'d Diff, key: &str) -> (&'d str, &'d str) {
    let c = d.changes.iter().find(|c| c.key == key).unwrap();
    (c.a.as_deref().unwrap_or("-"), c.b.as_deref().unwrap_or("-"))
}

fn text(v: &Value) -> String {
    match v {
        Value::Number(n) => match n.as_f64() {
            Some(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{}", x as i64),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

#[test]
fn llama_3_2_3b_to_qwen3_0_6b() {
    let d = diff(&graph_of("llama-3.2-3b"), &graph_of("qwen3-0.6b")).unwrap();
    let (a, b) = (config("llama-3.2-3b"), config("qwen3-0.6b"));
    // Same in both configs: layers, K/V heads, head_dim, ties, no biases. Qwen3 adds QK-norm and
    // drops llama3 RoPE scaling.
    assert_eq!(
        keys(&d),
        BTreeSet::from([
            "hidden",
            "vocab",
            "context",
            "attention.heads",
            "attention.qk_norm",
            "norm.eps",
            "rope.theta",
            "rope.scaling",
            "mlp.intermediate",
        ])
    );
    for (key, field) in [
        ("hidden", "hidden_size"),
        ("vocab", "vocab_size"),
        ("context", "max_position_embeddings"),
        ("attention.heads", "num_attention_heads"),
        ("mlp.intermediate", "intermediate_size"),
    ] {
        assert_eq!(
            change(&d, key),
            (&*text(&a[field]), &*text(&b[field])),
            "{key}"
        );
    }
    assert_eq!(change(&d, "attention.qk_norm"), ("none", "per head"));
    assert_eq!(change(&d, "rope.scaling"), ("llama3", "none"));
    assert!(!d.same_architecture);
    assert!(
        d.summary.starts_with(
            "qwen3-0.6b (Qwen3) is llama-3.2-3b (Llama) with QK-norm (per head) added"
        ),
        "{}",
        d.summary
    );
    // The QK norms are the steps only Qwen3 has; nothing is only Llama's.
    let only_b: Vec<&str> = d
        .steps
        .iter()
        .filter(|p| p.status == StepStatus::OnlyB)
        .map(|p| p.b.as_ref().unwrap().title.as_str())
        .collect();
    assert_eq!(only_b, ["K RMSNorm", "Q RMSNorm"]);
    assert!(!d.steps.iter().any(|p| p.status == StepStatus::OnlyA));
    insta::assert_snapshot!(anatomy_core::render::report::diff(&d));
}

#[test]
fn mistral_7b_to_mixtral_8x7b() {
    let d = diff(&graph_of("mistral-7b-v0.1"), &graph_of("mixtral-8x7b-v0.1")).unwrap();
    let b = config("mixtral-8x7b-v0.1");
    assert_eq!(
        keys(&d),
        BTreeSet::from(["attention.spans", "rope.theta", "moe"])
    );
    let moe = d.changes.iter().find(|c| c.key == "moe").unwrap();
    assert_eq!(
        moe.with,
        [
            format!("experts {}", b["num_local_experts"]),
            format!("active experts {}", b["num_experts_per_tok"]),
            format!("expert width {}", b["intermediate_size"]),
        ]
    );
    let spans = d
        .changes
        .iter()
        .find(|c| c.key == "attention.spans")
        .unwrap();
    assert_eq!(
        spans.with[0],
        format!("window {}", config("mistral-7b-v0.1")["sliding_window"])
    );
}

/// A Kimi-K2-like config: DeepSeek V3's with K2's expert count, heads, dense layers, routing
/// groups, vocabulary and RoPE base. The diff finds exactly those.
#[test]
fn deepseek_v3_to_a_kimi_k2_like_config() {
    let mut k2 = config("deepseek-v3");
    for (k, v) in [
        ("n_routed_experts", 384),
        ("num_attention_heads", 64),
        ("num_key_value_heads", 64),
        ("first_k_dense_replace", 1),
        ("n_group", 1),
        ("topk_group", 1),
        ("vocab_size", 163840),
        ("rope_theta", 50000),
    ] {
        k2[k] = serde_json::json!(v);
    }
    let spec = families::load_json("k2.json", &k2.to_string(), "kimi-k2-like", false).unwrap();
    let d = diff(&graph_of("deepseek-v3"), &graph::build(&spec).unwrap()).unwrap();
    assert_eq!(
        keys(&d),
        BTreeSet::from([
            "moe.experts",
            "attention.heads",
            "attention.kv_heads",
            "moe.dense_layers",
            "moe.grouped",
            "vocab",
            "rope.theta",
        ])
    );
    assert_eq!(change(&d, "moe.experts"), ("256", "384"));
    assert_eq!(change(&d, "moe.dense_layers"), ("3", "1"));
    assert!(!d.same_architecture, "grouped routing is a mechanism");
    let grouped = d.changes.iter().find(|c| c.key == "moe.grouped").unwrap();
    assert_eq!(grouped.with, ["expert groups 8 (top 4)"]);
}

#[test]
fn llama_3_1_8b_to_70b_is_the_same_architecture() {
    let d = diff(&graph_of("llama-3.1-8b"), &graph_of("llama-3.1-70b")).unwrap();
    assert!(d.same_architecture);
    assert_eq!(
        keys(&d),
        BTreeSet::from(["layers", "hidden", "attention.heads", "mlp.intermediate"])
    );
    assert!(d.changes.iter().all(|c| c.kind == Kind::Size));
    assert!(
        d.summary.starts_with(
            "Same architecture (Llama); llama-3.1-70b is llama-3.1-8b with 80 layers instead of 32"
        ),
        "{}",
        d.summary
    );
    assert!(d
        .steps
        .iter()
        .all(|p| matches!(p.status, StepStatus::Same | StepStatus::Dims)));
}

#[test]
fn every_catalog_model_against_itself_differs_in_nothing() {
    for e in catalog::ENTRIES {
        let g = graph_of(e.name);
        let d = diff(&g, &g).unwrap();
        assert!(d.changes.is_empty(), "{}: {:?}", e.name, d.changes);
        assert!(
            d.steps.iter().all(|p| p.status == StepStatus::Same),
            "{}",
            e.name
        );
        assert!(d.figures.iter().all(|f| f.a == f.b), "{}", e.name);
        assert!(d
            .summary
            .contains("the same architecture with the same sizes"));
    }
}

/// Every figure of the diff is the figure `stats` gives each model at the diff's context.
#[test]
fn figures_are_each_models_stats() {
    let (a, b) = (graph_of("gemma-3-27b"), graph_of("gpt-oss-20b"));
    let d = diff(&a, &b).unwrap();
    let (sa, sb) = (
        anatomy_core::stats::stats(&a, Some(d.context)).unwrap(),
        anatomy_core::stats::stats(&b, Some(d.context)).unwrap(),
    );
    let get = |name: &str| d.figures.iter().find(|f| f.name == name).unwrap();
    assert_eq!(
        (get("total parameters").a, get("total parameters").b),
        (sa.total_params, sb.total_params)
    );
    assert_eq!(get("decode FLOPs per token").b, sb.flops.decode_per_token);
    assert_eq!(
        get("KV cache per token (bf16 bytes)").a,
        sa.kv_cache.bytes_per_token_bf16
    );
}

/// A state-space model beside an attention model: the mixers differ, each side's mixer sizes
/// are said with that change, and attention settings a model without attention has no value for
/// are not listed as changes.
#[test]
fn mamba_codestral_to_mistral_7b() {
    let d = diff(
        &graph_of("mamba-codestral-7b"),
        &graph_of("mistral-7b-v0.1"),
    )
    .unwrap();
    let mixer = d.changes.iter().find(|c| c.key == "mixer").unwrap();
    assert_eq!(
        (mixer.a.as_deref(), mixer.b.as_deref()),
        (Some("Mamba2"), Some("attention"))
    );
    assert!(
        mixer.with.contains(&"state size 128".to_string()),
        "{:?}",
        mixer.with
    );
    assert!(
        !d.changes
            .iter()
            .any(|c| c.a.is_none() && c.b.as_deref() == Some("no")),
        "{:?}",
        d.changes
    );
    let only_a: Vec<&str> = d
        .steps
        .iter()
        .filter(|p| p.status == StepStatus::OnlyA)
        .map(|p| p.a.as_ref().unwrap().title.as_str())
        .collect();
    assert!(only_a.contains(&"State update"), "{only_a:?}");
    insta::assert_snapshot!(anatomy_core::render::report::diff(&d));
}

/// What Gemma 4 and LongCat-Flash add over their neighbours is named: per-layer embeddings, V's
/// norm and the layer scalars against Gemma 3; zero-computation experts on a shortcut and
/// scaled latents against DeepSeek-V3.
#[test]
fn new_mechanisms_are_named() {
    let d = diff(&graph_of("gemma-4-e2b-it"), &graph_of("gemma-3-27b")).unwrap();
    assert_eq!(change(&d, "attention.v_norm"), ("yes", "no"));
    assert_eq!(change(&d, "layer_scalar"), ("yes", "no"));
    assert_eq!(change(&d, "per_layer_input"), ("256 per layer", "none"));
    let d = diff(&graph_of("longcat-flash-chat"), &graph_of("deepseek-v3")).unwrap();
    assert_eq!(change(&d, "moe.zero_experts"), ("256", "-"));
    assert_eq!(
        change(&d, "moe.placement"),
        ("on a shortcut to the next layer", "in place of the MLP")
    );
    assert_eq!(change(&d, "attention.latent_scales"), ("yes", "no"));
    let zamba2 =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../exec/tests/fixtures/zamba2");
    let zamba2 =
        graph::build(&source::load(zamba2.to_str().unwrap(), false).unwrap().spec).unwrap();
    let d = diff(&zamba2, &graph_of("mamba-codestral-7b")).unwrap();
    assert_eq!(
        change(&d, "shared_block"),
        (
            "2 blocks shared by layers 0, 2, 4, rank-4 adapters on gate/up",
            "none"
        )
    );
}

/// Inkling 2 Loop against Inkling: each mechanism the loop model's config turns on is named, its
/// figures read from that config.
#[test]
fn inkling_2_loop_mechanisms_are_named() {
    let d = diff(&graph_of("inkling"), &graph_of("inkling-2-mini")).unwrap();
    let b = config("inkling-2-mini");
    assert_eq!(
        change(&d, "attention.l2_clip").1,
        text(&b["qk_l2_clip_threshold"])
    );
    assert_eq!(
        change(&d, "logits.kept"),
        ("all", text(&b["unpadded_vocab_size"]).as_str())
    );
    assert_eq!(
        change(&d, "moe.glu_softcaps").1,
        format!(
            "gate {}, up {}",
            text(&b["mlp_gate_softcap"]),
            text(&b["mlp_up_softcap"])
        )
    );
    assert!(change(&d, "attn_res").1.starts_with(&format!(
        "blocks of {}, layers {}–{} run {} times",
        b["n_layers_per_attn_res_block"],
        b["loop_layer_index_start"],
        b["loop_layer_index_end"].as_u64().unwrap() - 1,
        b["loop_num_passes"]
    )));
    assert!(change(&d, "attention.rel_logits")
        .1
        .ends_with(&format!("clipped at {}", text(&b["rel_l2_clip_threshold"]))));
    for key in ["attention.token_sinks", "attention.kv_inputs"] {
        assert_eq!(change(&d, key), ("no", "yes"), "{key}");
    }
    assert!(keys(&d).contains("attention.kv_conv") && keys(&d).contains("out_conv"));
}

/// Two multimodal wrappers: their towers differ step by step (the depth each config gives,
/// Qwen3-VL's deep-stack mergers), and each tower's parameters are a figure of their own.
#[test]
fn qwen2_vl_to_qwen3_vl_compares_their_towers() {
    let (a, b) = ("qwen2-vl-7b-instruct", "qwen3-vl-4b-instruct");
    let d = diff(&graph_of(a), &graph_of(b)).unwrap();
    let (ta, tb) = change(&d, "towers");
    let (ca, cb) = (config(a), config(b));
    let depth = |c: &Value| text(&c["vision_config"]["depth"]);
    assert!(
        ta.contains(&format!("vision block ×{}", depth(&ca))) && !ta.contains("deep-stack"),
        "{ta}"
    );
    let stacked = cb["vision_config"]["deepstack_visual_indexes"]
        .as_array()
        .unwrap()
        .len();
    assert!(
        tb.contains(&format!("vision block ×{}", depth(&cb)))
            && tb.ends_with(&format!("deep-stack merger ×{stacked}")),
        "{tb}"
    );
    let stats = |name| {
        anatomy_core::stats::stats(&graph_of(name), None)
            .unwrap()
            .towers[0]
            .params
    };
    let row = d
        .figures
        .iter()
        .find(|f| f.name.trim() == "vision tower")
        .unwrap();
    assert_eq!((Some(row.a), Some(row.b)), (stats(a), stats(b)));
    // A language model alone has no towers to differ in.
    let plain = diff(&graph_of("llama-3.2-3b"), &graph_of("qwen3-0.6b")).unwrap();
    assert!(!keys(&plain).contains("towers"));
}
