//! SmolLM2-135M's projections (hidden 576, MLP 1536, vocabulary 49152) with the weights in GGUF
//! block formats, for one row (a decode step) and a 21-row prompt: `qlinear`'s kernel against
//! candle's quantized matmul and against the f32 kernel of `linear` on the same values. Run with
//! `cargo bench -p anatomy-exec --bench qlinear`.
use anatomy_exec::linear::Packed;
use anatomy_exec::qlinear::{Block, QLinear};
use candle_core::quantized::{GgmlDType, QMatMul, QTensor};
use candle_core::{Device, Module, Tensor};
use criterion::{criterion_group, criterion_main, Criterion};

fn bench(c: &mut Criterion) {
    for (block, dtype) in [
        (Block::Q4_1, GgmlDType::Q4_1),
        (Block::Q4_0, GgmlDType::Q4_0),
        (Block::Q8_0, GgmlDType::Q8_0),
    ] {
        for m in [1, 21] {
            for (out, n) in [(1536, 576), (576, 1536), (49152, 576)] {
                let w = Tensor::rand(-1f32, 1.0, (out, n), &Device::Cpu).unwrap();
                let x = Tensor::rand(-1f32, 1.0, (m, n), &Device::Cpu).unwrap();
                let q = QTensor::quantize(&w, dtype).unwrap();
                let own = QLinear::new(block, q.data().unwrap().into_owned(), out, n).unwrap();
                let packed = Packed::from_tensor(&q.dequantize(&Device::Cpu).unwrap()).unwrap();
                let candle = QMatMul::from_qtensor(q).unwrap();
                let mut g = c.benchmark_group(format!("{block:?} {m}x{n} times {out}x{n}T"));
                g.bench_function("qlinear", |b| b.iter(|| own.times(&x).unwrap()));
                g.bench_function("candle", |b| b.iter(|| candle.forward(&x).unwrap()));
                g.bench_function("f32 packed", |b| b.iter(|| packed.times(&x).unwrap()));
                g.finish();
            }
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
