//! spec → graph → stats → terminal render, per catalog model.

use anatomy_core::{catalog, families, graph, render, stats};
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

fn pipeline(c: &mut Criterion) {
    let mut group = c.benchmark_group("pipeline");
    for entry in catalog::ENTRIES {
        group.bench_function(entry.name, |b| {
            b.iter(|| {
                let spec = families::load_json(entry.name, black_box(entry.json), entry.name).unwrap();
                let g = graph::build(&spec).unwrap();
                let s = stats::stats(&g, None);
                let out = render::render(&g, &render::Options { width: 100, color: false, step: None }).unwrap();
                black_box((s.total_params, out.len()))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, pipeline);
criterion_main!(benches);
