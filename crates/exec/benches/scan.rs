//! The recurrent mixers' prompt forms over 512 tokens, token after token against chunk by chunk
//! (chunks of 64), on the same inputs: Mamba2's scan at Mamba-Codestral-7B's sizes (128 heads
//! of 64, a state of 128, 8 groups); the gated delta rule at Qwen3-Next-80B-A3B's (16 key heads,
//! 32 value heads, 128 × 128 memories); Kimi Delta Attention's, a decay per key channel, at
//! Kimi-Linear-48B-A3B's (32 heads, 128 × 128); lightning attention at MiniMax-Text-01's (64
//! heads of 128); the mLSTM at xLSTM-7B's (8 heads, keys of 256, values of 512). After criterion's figures, each ratio, measured in the same run from
//! interleaved runs, is printed. `cargo bench -p anatomy-exec --bench scan`.
use anatomy_exec::ssm::{
    delta_rule, delta_rule_chunked, delta_rule_chunked_channels, lightning, lightning_chunked,
    mlstm, mlstm_chunked, scan, scan_chunked, DeltaDims, Dims, Inputs, MLstmDims,
};
use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Instant;

/// Both forms of one mixer under criterion, then the ratio of their medians over runs taking
/// turns, printed.
fn compare(c: &mut Criterion, what: &str, looped: impl Fn(), chunked: impl Fn()) {
    let mut group = c.benchmark_group(format!("{what}, 512 tokens"));
    group.sample_size(10);
    group.bench_function("token by token", |b| b.iter(&looped));
    group.bench_function("chunks of 64", |b| b.iter(&chunked));
    group.finish();
    let (mut l, mut ch) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let t0 = Instant::now();
        looped();
        l.push(t0.elapsed().as_secs_f64());
        let t0 = Instant::now();
        chunked();
        ch.push(t0.elapsed().as_secs_f64());
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (l, ch) = (median(&mut l), median(&mut ch));
    println!(
        "{what}, 512 tokens: token by token {:.1} ms, chunked {:.1} ms: chunked is {:.2}x as fast",
        l * 1e3,
        ch * 1e3,
        l / ch
    );
}

fn bench(c: &mut Criterion) {
    let t = 512;
    let wave =
        |len: usize, k: f32| -> Vec<f32> { (0..len).map(|i| (i as f32 * k).sin() * 0.1).collect() };

    let s = Dims {
        heads: 128,
        head_dim: 64,
        n: 128,
        groups: 8,
    };
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
    compare(
        c,
        "mamba2 scan",
        || {
            scan(&inputs, &mut state.clone(), s);
        },
        || {
            scan_chunked(&inputs, &mut state.clone(), s, 64).unwrap();
        },
    );

    // Unit-length keys and queries, as the layer's L2 norm leaves them.
    let unit = |len: usize, k: f32| -> Vec<f32> { wave(len, k).iter().map(|v| v * 0.35).collect() };
    for (what, kh, vh, channel_decay) in [
        ("gated delta rule", 16, 32, false),
        ("kimi delta attention", 32, 32, true),
    ] {
        let dd = DeltaDims {
            key_heads: kh,
            value_heads: vh,
            key_dim: 128,
            value_dim: 128,
            channel_decay,
        };
        let (q, k, v) = (
            unit(t * kh * 128, 0.37),
            unit(t * kh * 128, 0.73),
            wave(t * vh * 128, 1.13),
        );
        let decays = if channel_decay { vh * 128 } else { vh };
        let g: Vec<f32> = wave(t * decays, 0.51)
            .iter()
            .map(|x| -0.01 - x.abs())
            .collect();
        let beta: Vec<f32> = wave(t * vh, 0.29).iter().map(|x| 0.3 + x.abs()).collect();
        let memory = vec![0.0f64; vh * 128 * 128];
        let chunked = if channel_decay {
            delta_rule_chunked_channels
        } else {
            delta_rule_chunked
        };
        compare(
            c,
            what,
            || {
                delta_rule(&q, &k, &v, &g, &beta, &mut memory.clone(), dd);
            },
            || {
                chunked(&q, &k, &v, &g, &beta, &mut memory.clone(), dd, 64).unwrap();
            },
        );
    }

    let (heads, d) = (64, 128);
    let qkv = wave(t * heads * 3 * d, 0.41);
    let slope: Vec<f32> = (0..heads).map(|h| 0.5f32.powi(h as i32 % 8 + 1)).collect();
    let memory = vec![0.0f64; heads * d * d];
    compare(
        c,
        "lightning attention",
        || {
            lightning(&qkv, &slope, &mut memory.clone(), heads, d);
        },
        || {
            lightning_chunked(&qkv, &slope, &mut memory.clone(), heads, d, 64).unwrap();
        },
    );

    let md = MLstmDims {
        heads: 8,
        key_dim: 256,
        value_dim: 512,
        eps: 1e-6,
    };
    let (q, k, v) = (
        wave(t * 8 * 256, 0.37),
        wave(t * 8 * 256, 0.73),
        wave(t * 8 * 512, 1.13),
    );
    let (ig, fg) = (wave(t * 8, 0.61), wave(t * 8, 0.29));
    let state = vec![0.0f64; 8 * (256 * 512 + 256 + 1)];
    compare(
        c,
        "mlstm",
        || {
            mlstm(&q, &k, &v, &ig, &fg, &mut state.clone(), md);
        },
        || {
            mlstm_chunked(&q, &k, &v, &ig, &fg, &mut state.clone(), md, 64).unwrap();
        },
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
