//! The planner against what runtimes hold: transformers' cache objects after a forward pass on
//! the toy copy of every catalog config (scripts/make_cache_fixtures.py), and its own invariants.

use anatomy_core::plan::{self, devices, KvType, Runtime, Settings, Target, WeightFormat, Weights};
use anatomy_core::{graph, source};
use std::path::PathBuf;

fn toys() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../exec/tests/fixtures/toy")
}

fn target(runtime: Runtime, context: u64, kv: Option<KvType>) -> Target {
    Target {
        device: devices::find("h100-sxm").unwrap(),
        runtime,
        settings: Settings::default(),
        context,
        batch: 1,
        weights: Weights::Format(WeightFormat::F32),
        kv,
    }
}

/// Layer by layer, the KV cache and state `plan --runtime transformers` gives for the toy's
/// float32 model after its 10 tokens equal the bytes transformers' cache holds.
#[test]
fn plan_kv_matches_transformers_caches() {
    let mut checked = 0;
    let mut wrong = Vec::new();
    let mut refused = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(toys())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let cache = dir.join("cache.json");
        let text = std::fs::read_to_string(&cache).unwrap_or_else(|_| {
            panic!("{name}: no cache.json; run scripts/make_cache_fixtures.py {name}")
        });
        let c: serde_json::Value = serde_json::from_str(&text).unwrap();
        if let Some(why) = c["refused"].as_str() {
            refused.push(format!("{name}: {why}"));
            continue;
        }
        let spec = source::load(dir.join("config.json").to_str().unwrap(), false)
            .unwrap()
            .spec;
        let g = graph::build(&spec).unwrap();
        let tokens = c["tokens"].as_u64().unwrap();
        let p = plan::plan(
            &g,
            &target(Runtime::Transformers, tokens, Some(KvType::F32)),
        )
        .unwrap();
        let ours: Vec<u64> = (p.kv_cache.by_layer.iter())
            .zip(&p.state.by_layer)
            .map(|(k, s)| k + s)
            .collect();
        // Layer by layer where transformers' cache has one per layer of ours; by name where it
        // names its layers (BLT's stacks: every layer it does not name holds nothing); else
        // the totals alone (HRM and Dory keep one per visit of a looped layer, xLSTM none).
        let mut theirs: Vec<u64> = c["layers"]
            .as_array()
            .map(|l| l.iter().map(|x| x.as_u64().unwrap()).collect())
            .unwrap_or_default();
        if let Some(named) = c["named"].as_object() {
            theirs = (p.layers.iter())
                .map(|n| named.get(n).map_or(0, |x| x.as_u64().unwrap()))
                .collect();
            assert!(
                named.keys().all(|n| p.layers.contains(n)),
                "{name}: transformers names layers anatomy does not: {named:?} vs {:?}",
                p.layers
            );
        }
        let total = c["total"].as_u64().unwrap();
        let per_layer = theirs.len() == ours.len();
        if (per_layer && ours != theirs) || p.kv_cache.bytes + p.state.bytes != total {
            wrong.push(format!(
                "{name}: anatomy {ours:?} = {}; transformers ({}) {theirs:?} = {total}",
                p.kv_cache.bytes + p.state.bytes,
                c["class"]
            ));
        }
        checked += 1;
    }
    eprintln!("{checked} toy caches checked");
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    // Every catalog family is checked: a toy whose cached forward fails in transformers is a
    // fixture to mend (as BLT's was), not one to pass over.
    assert!(
        refused.is_empty(),
        "transformers gave no cache for {}",
        refused.join("; ")
    );
    assert!(checked >= 70, "only {checked} toy caches checked");
}
