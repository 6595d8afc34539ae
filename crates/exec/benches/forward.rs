//! The executor's forward pass on the real SmolLM2-135M-Instruct (Q4_1 GGUF, dequantized to
//! f32): a 21-token and a 336-token prefill, and one decode step after 21 tokens. Skipped when the GGUF is absent (see
//! tests/support/smollm2.rs). `cargo bench -p anatomy-exec --bench forward`; compare with PyTorch
//! through scripts/bench_run.py.
use anatomy_exec::{weights::Weights, Cache, Model};
use criterion::{criterion_group, criterion_main, Criterion};

#[path = "../../../tests/support/smollm2.rs"]
mod smollm2;

fn bench(c: &mut Criterion) {
    if !smollm2::smollm2_gguf().is_file() {
        eprintln!("skipped: {}", smollm2::ABSENT);
        return;
    }
    let path = smollm2::gguf();
    let ckpt = anatomy_checkpoint::open(&path).unwrap();
    let spec = anatomy_checkpoint::spec(&ckpt, false).unwrap();
    let weights = Weights::load(&ckpt, &spec, &mut |_, _| {}).unwrap();
    let model = Model::new(spec, weights).unwrap();
    let prompt: Vec<u32> = (0..336).map(|i| 100 + 37 * i).collect();
    let fresh = || Cache::new(model.spec.layers as usize);
    c.bench_function("prefill 21 tokens", |b| {
        b.iter(|| model.forward_last(&prompt[..21], &mut fresh()).unwrap())
    });
    let mut long = c.benchmark_group("long");
    long.sample_size(10);
    long.bench_function("prefill 336 tokens", |b| {
        b.iter(|| model.forward_last(&prompt, &mut fresh()).unwrap())
    });
    long.finish();
    let prompt = &prompt[..21];
    // Room for the step, so that each iteration copies the 21 positions and no more.
    let mut after = Cache::with_room(model.spec.layers as usize, 22);
    model.forward(prompt, &mut after).unwrap();
    c.bench_function("decode 1 token after 21", |b| {
        b.iter(|| model.forward_last(&[42], &mut after.clone()).unwrap())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
