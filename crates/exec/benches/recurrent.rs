//! Decoding through a recurrent state: one token after 128 and after 4096 tokens, for a
//! scaled-down Mamba2 (every layer recurrent) and three scaled-down hybrids (Bamba: Mamba2 layers
//! and one attention layer in four; Qwen3-Next: Gated DeltaNet layers and one gated attention
//! layer in four, with experts; Kimi Linear: Kimi Delta Attention and latent attention; MiniMax:
//! lightning attention in every other layer) and a scaled-down RWKV (every layer recurrent), on
//! random weights. A recurrent layer's step costs the same at
//! any context; the attention layers' grows. Each model's decode step is timed whole, and its
//! recurrent layers' share of it alone (`Model::layer_step` over those layers). After
//! criterion's figures, the ratios of the two contexts are printed: the fastest of 200 steps at
//! each, the two contexts' steps alternating (this machine's speed drifts by 2x between runs;
//! measured apart, the ratio moved from 0.6 to 1.06 between two runs of the same code).
//! `cargo bench -p anatomy-exec --bench recurrent`.
use anatomy_core::{families, source};
use anatomy_exec::{session, Cache, Model};
use candle_core::{Device, Tensor};
use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Instant;

fn models() -> Vec<(&'static str, Model)> {
    let mamba = source::load("mamba-codestral-7b", false).unwrap().spec;
    let hybrid = serde_json::json!({
        "model_type": "bamba", "num_hidden_layers": 8, "attn_layer_indices": [3, 7],
        "hidden_size": 1024, "num_attention_heads": 8, "num_key_value_heads": 2,
        "max_position_embeddings": 8192,
    });
    let hybrid = families::load_json("bamba.json", &hybrid.to_string(), "hybrid", false).unwrap();
    let delta = source::load("qwen3-next-80b-a3b", false).unwrap().spec;
    let kda = source::load("kimi-linear-48b-a3b", false).unwrap().spec;
    let class = |t: &str| {
        let cfg = serde_json::json!({ "model_type": t });
        families::load_json("config.json", &cfg.to_string(), t, false).unwrap()
    };
    vec![
        ("Mamba2", session::tiny(&mamba).unwrap()),
        ("hybrid", session::tiny(&hybrid).unwrap()),
        ("Qwen3-Next", session::tiny(&delta).unwrap()),
        ("Kimi Linear", session::tiny(&kda).unwrap()),
        ("MiniMax", session::tiny(&class("minimax")).unwrap()),
        ("RWKV", session::tiny(&class("rwkv")).unwrap()),
    ]
}

/// The cache after `n` prompt tokens.
fn after(model: &Model, n: usize) -> Cache {
    let ids: Vec<u32> = (0..n as u32).map(|i| (7 + 13 * i) % 200).collect();
    let mut cache = Cache::new(model.spec.layers as usize);
    model.forward_last(&ids, &mut cache).unwrap();
    cache
}

/// The fastest of 200 runs of `step` on each of two caches, the runs alternating between them
/// so that the machine's drift falls on both alike: each on a fresh copy of its cache, or
/// (`fresh` false) one after another on one copy, after a first run that warms it.
fn fastest_pair(caches: [&Cache; 2], fresh: bool, mut step: impl FnMut(&mut Cache)) -> [f64; 2] {
    let mut copies = caches.map(|c| c.clone());
    if !fresh {
        copies.iter_mut().for_each(&mut step);
    }
    let mut best = [f64::MAX; 2];
    for _ in 0..200 {
        for i in 0..2 {
            if fresh {
                copies[i] = caches[i].clone();
            }
            let t = Instant::now();
            step(&mut copies[i]);
            best[i] = best[i].min(t.elapsed().as_secs_f64());
        }
    }
    best
}

fn bench(c: &mut Criterion) {
    let models = models();
    let mut ratios = Vec::new();
    for (name, model) in &models {
        let mut g = c.benchmark_group(format!("{name} decode"));
        let caches: Vec<(usize, Cache)> = [128, 4096].map(|n| (n, after(model, n))).into();
        for (n, cache) in &caches {
            g.bench_function(format!("1 token after {n}"), |b| {
                b.iter(|| model.forward_last(&[42], &mut cache.clone()).unwrap())
            });
        }
        g.finish();
        // The same steps timed back to back, for the ratio: each on a fresh copy of the cache,
        // which a whole step extends.
        let [short, long] = fastest_pair([&caches[0].1, &caches[1].1], true, |c| {
            model.forward_last(&[42], c).unwrap();
        });
        // The recurrent layers alone: one token's step through each of them.
        let recurrent: Vec<usize> = (0..model.spec.layers as usize)
            .filter(|&b| model.spec.plan[b].mixer.recurrent())
            .collect();
        let x = Tensor::randn(0f32, 1.0, (1, model.spec.hidden as usize), &Device::Cpu).unwrap();
        let step = |cache: &mut Cache| {
            for &b in &recurrent {
                model.layer_step(&x, b, cache).unwrap();
            }
        };
        let mut g = c.benchmark_group(format!("{name} recurrent layers"));
        // Step after step on one copy of the cache: these layers read only their own state,
        // whatever the context, and a fresh copy per step would time the copy (at 4096 tokens,
        // the attention layers' keys and values) flushing the processor's caches instead.
        for (n, cache) in &caches {
            let mut c = cache.clone();
            g.bench_function(format!("1 token after {n}"), |b| b.iter(|| step(&mut c)));
        }
        g.finish();
        let [rs, rl] = fastest_pair([&caches[0].1, &caches[1].1], false, step);
        ratios.push((
            name,
            1.0 / short,
            1.0 / long,
            recurrent.len(),
            1.0 / rs,
            1.0 / rl,
        ));
    }
    for (name, short, long, n, rs, rl) in ratios {
        println!(
            "{name}: decode {short:.0} tok/s after 128 tokens, {long:.0} after 4096: ratio {:.2}; \
             its recurrent layers ({n}) alone {rs:.0} and {rl:.0} steps/s: ratio {:.2}",
            long / short,
            rl / rs
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
