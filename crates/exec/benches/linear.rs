//! The projections of SmolLM2-135M (hidden 576, MLP 1536, vocabulary 49152) for one row (a decode
//! step) and for prompts of 21, 64 and 256 rows: the packed kernel of `linear` against candle's
//! matmul (gemm) on the same values. Run with `cargo bench -p anatomy-exec --bench linear`;
//! RAYON_NUM_THREADS sets the threads of both.
use anatomy_exec::linear::Packed;
use candle_core::{Device, Tensor};
use criterion::{criterion_group, criterion_main, Criterion};

fn bench(c: &mut Criterion) {
    for m in [1, 21, 64, 256] {
        for (out, n) in [(576, 576), (1536, 576), (576, 1536), (49152, 576)] {
            let w = Tensor::rand(-1f32, 1.0, (out, n), &Device::Cpu).unwrap();
            let x = Tensor::rand(-1f32, 1.0, (m, n), &Device::Cpu).unwrap();
            let packed = Packed::from_tensor(&w).unwrap();
            let mut g = c.benchmark_group(format!("{m}x{n} times {out}x{n}T"));
            g.bench_function("packed", |b| b.iter(|| packed.times(&x).unwrap()));
            g.bench_function("candle matmul", |b| {
                b.iter(|| x.matmul(&w.t().unwrap()).unwrap())
            });
            g.finish();
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
