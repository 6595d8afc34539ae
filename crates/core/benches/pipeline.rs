//! spec → graph → stats → terminal render, per catalog model; and, apart, the other views of a
//! built graph (the web page without a run's values, the op list, the NumPy file, the PyTorch
//! module).

use anatomy_core::{catalog, families, graph, render, stats};
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

fn pipeline(c: &mut Criterion) {
    let mut group = c.benchmark_group("pipeline");
    for entry in catalog::ENTRIES {
        group.bench_function(entry.name, |b| {
            b.iter(|| {
                let spec =
                    families::load_json(entry.name, black_box(entry.json), entry.name, false)
                        .unwrap();
                let g = graph::build(&spec).unwrap();
                let s = stats::stats(&g, None).unwrap();
                let out = render::render(
                    &g,
                    &render::Options {
                        width: 100,
                        color: false,
                        step: None,
                    },
                )
                .unwrap();
                black_box((s.total_params, out.len()))
            })
        });
    }
    group.finish();
}

/// A Kimi-K2-shaped config: DeepSeek V3's architecture with 384 experts over 61 layers.
fn kimi_like() -> String {
    let mut v: serde_json::Value =
        serde_json::from_str(catalog::get("deepseek-v3").unwrap().json).unwrap();
    v["model_type"] = "kimi_k2".into();
    v["n_routed_experts"] = 384.into();
    v["num_attention_heads"] = 64.into();
    // Latent attention's K/V heads are its query heads (a loader check since the bench was written).
    v["num_key_value_heads"] = 64.into();
    v["first_k_dense_replace"] = 1.into();
    v["n_group"] = 1.into();
    v["topk_group"] = 1.into();
    v["vocab_size"] = 163_840.into();
    v.to_string()
}

/// Graph and stats alone (no drawing) for the largest configs.
fn build_and_stats(c: &mut Criterion) {
    let mut group = c.benchmark_group("build_stats");
    let kimi = kimi_like();
    for (name, json) in [
        ("deepseek-v3", catalog::get("deepseek-v3").unwrap().json),
        ("384-experts-61-layers", kimi.as_str()),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let spec = families::load_json(name, black_box(json), name, false).unwrap();
                let g = graph::build(&spec).unwrap();
                black_box(stats::stats(&g, None).unwrap().total_params)
            })
        });
    }
    group.finish();
}

/// The views other than the terminal's, from a graph built once: what `html`, `ops`, `numpy` and
/// `torch` add to the pipeline above.
fn views(c: &mut Criterion) {
    let mut group = c.benchmark_group("views");
    for entry in catalog::ENTRIES {
        let spec = families::load_json(entry.name, entry.json, entry.name, false).unwrap();
        let g = graph::build(&spec).unwrap();
        group.bench_function(entry.name, |b| {
            b.iter(|| {
                let page = render::html::page(&render::html::PageInput {
                    graph: black_box(&g),
                    provenance: entry.name,
                    context: None,
                    values: None,
                })
                .unwrap();
                let ops = render::report::ops(&g);
                let numpy = render::numpy::module(&g, "model.py");
                let torch = render::torch::module(&g.spec);
                black_box(page.len() + ops.len() + numpy.len() + torch.len())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, pipeline, build_and_stats, views);
criterion_main!(benches);
