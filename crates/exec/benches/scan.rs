//! The recurrent mixers' prompt forms over 512 tokens, token after token against chunk by chunk
//! (chunks of 64), on the same inputs: Mamba2's scan at Mamba-Codestral-7B's sizes (128 heads
//! of 64, a state of 128, 8 groups), and the gated delta rule at Qwen3-Next-80B-A3B's (16 key
//! heads, 32 value heads, 128 × 128 memories), and lightning attention at MiniMax-Text-01's (64
//! heads of 128). After criterion's figures, the ratios, measured
//! in the same run from interleaved runs, are printed. `cargo bench -p anatomy-exec --bench scan`.
use anatomy_exec::ssm::{
    delta_rule, delta_rule_chunked, lightning, lightning_chunked, scan, scan_chunked, DeltaDims,
    Dims, Inputs,
};
use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Instant;

fn bench(c: &mut Criterion) {
    let s = Dims {
        heads: 128,
        head_dim: 64,
        n: 128,
        groups: 8,
    };
    let t = 512;
    let wave =
        |len: usize, k: f32| -> Vec<f32> { (0..len).map(|i| (i as f32 * k).sin() * 0.1).collect() };
    let (x, b, cm) = (
        wave(t * 128 * 64, 0.37),
        wave(t * 8 * 128, 0.73),
        wave(t * 8 * 128, 1.13),
    );
    let dt: Vec<f32> = wave(t * 128, 0.51).iter().map(|v| 0.01 + v.abs()).collect();
    let a: Vec<f32> = (0..128).map(|h| -0.1 - h as f32 / 64.0).collect();
    let d = vec![1.0f32; 128];
    let inputs = Inputs {
        x: &x,
        dt: &dt,
        a: &a,
        b: &b,
        c: &cm,
        d: &d,
    };
    let state = vec![0.0f32; 128 * 64 * 128];
    let mut group = c.benchmark_group("mamba2 scan, 512 tokens");
    group.sample_size(10);
    group.bench_function("token by token", |bch| {
        bch.iter(|| scan(&inputs, &mut state.clone(), s))
    });
    group.bench_function("chunks of 64", |bch| {
        bch.iter(|| scan_chunked(&inputs, &mut state.clone(), s, 64).unwrap())
    });
    group.finish();
    // The ratio, from runs taking turns.
    let (mut looped, mut chunked) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let t0 = Instant::now();
        scan(&inputs, &mut state.clone(), s);
        looped.push(t0.elapsed().as_secs_f64());
        let t0 = Instant::now();
        scan_chunked(&inputs, &mut state.clone(), s, 64).unwrap();
        chunked.push(t0.elapsed().as_secs_f64());
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (l, ch) = (median(&mut looped), median(&mut chunked));
    println!("mamba2 scan, 512 tokens: token by token {:.1} ms, chunked {:.1} ms: chunked is {:.2}x as fast", l * 1e3, ch * 1e3, l / ch);

    let dd = DeltaDims {
        key_heads: 16,
        value_heads: 32,
        key_dim: 128,
        value_dim: 128,
        channel_decay: false,
    };
    // Unit-length keys and queries, as the layer's L2 norm leaves them.
    let unit = |len: usize, k: f32| -> Vec<f32> { wave(len, k).iter().map(|v| v * 0.35).collect() };
    let (q, k, v) = (
        unit(t * 16 * 128, 0.37),
        unit(t * 16 * 128, 0.73),
        wave(t * 32 * 128, 1.13),
    );
    let g: Vec<f32> = wave(t * 32, 0.51).iter().map(|x| -0.01 - x.abs()).collect();
    let beta: Vec<f32> = wave(t * 32, 0.29).iter().map(|x| 0.3 + x.abs()).collect();
    let memory = vec![0.0f64; 32 * 128 * 128];
    let mut group = c.benchmark_group("gated delta rule, 512 tokens");
    group.sample_size(10);
    group.bench_function("token by token", |bch| {
        bch.iter(|| delta_rule(&q, &k, &v, &g, &beta, &mut memory.clone(), dd))
    });
    group.bench_function("chunks of 64", |bch| {
        bch.iter(|| delta_rule_chunked(&q, &k, &v, &g, &beta, &mut memory.clone(), dd, 64).unwrap())
    });
    group.finish();
    let (mut looped, mut chunked) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let t0 = Instant::now();
        delta_rule(&q, &k, &v, &g, &beta, &mut memory.clone(), dd);
        looped.push(t0.elapsed().as_secs_f64());
        let t0 = Instant::now();
        delta_rule_chunked(&q, &k, &v, &g, &beta, &mut memory.clone(), dd, 64).unwrap();
        chunked.push(t0.elapsed().as_secs_f64());
    }
    let (l, ch) = (median(&mut looped), median(&mut chunked));
    println!("gated delta rule, 512 tokens: token by token {:.1} ms, chunked {:.1} ms: chunked is {:.2}x as fast", l * 1e3, ch * 1e3, l / ch);

    let (heads, d) = (64, 128);
    let qkv = unit(t * heads * 3 * d, 0.41);
    let slope: Vec<f32> = (0..heads).map(|h| 0.5f32.powi(h as i32 % 8 + 1)).collect();
    let memory = vec![0.0f64; heads * d * d];
    let mut group = c.benchmark_group("lightning attention, 512 tokens");
    group.sample_size(10);
    group.bench_function("token by token", |bch| {
        bch.iter(|| lightning(&qkv, &slope, &mut memory.clone(), heads, d))
    });
    group.bench_function("chunks of 64", |bch| {
        bch.iter(|| lightning_chunked(&qkv, &slope, &mut memory.clone(), heads, d, 64).unwrap())
    });
    group.finish();
    let (mut looped, mut chunked) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let t0 = Instant::now();
        lightning(&qkv, &slope, &mut memory.clone(), heads, d);
        looped.push(t0.elapsed().as_secs_f64());
        let t0 = Instant::now();
        lightning_chunked(&qkv, &slope, &mut memory.clone(), heads, d, 64).unwrap();
        chunked.push(t0.elapsed().as_secs_f64());
    }
    let (l, ch) = (median(&mut looped), median(&mut chunked));
    println!("lightning attention, 512 tokens: token by token {:.1} ms, chunked {:.1} ms: chunked is {:.2}x as fast", l * 1e3, ch * 1e3, l / ch);
}

criterion_group!(benches, bench);
criterion_main!(benches);
