//! Random mutations of valid configs never panic: every one loads, or fails with an error.

use anatomy_core::{catalog, families, graph, manifest, render, stats};
use proptest::prelude::*;
use serde_json::{json, Value};

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (0u64..70000).prop_map(Value::from),
        (0u64..8).prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "[a-z_]{0,12}".prop_map(Value::from),
        Just(json!({"rope_type": "yarn", "factor": 4})),
        Just(json!(["full_attention", "sliding_attention"])),
        Just(json!([])),
    ]
}

/// Configs of families no catalog entry holds: the executor's fixtures of them.
const UNCATALOGED: [&str; 6] = [
    include_str!("../../exec/tests/fixtures/zamba/config.json"),
    include_str!("../../exec/tests/fixtures/zamba2/config.json"),
    include_str!("../../exec/tests/fixtures/zamba2-adapters/config.json"),
    include_str!("../../exec/tests/fixtures/xlstm/config.json"),
    include_str!("../../exec/tests/fixtures/qwen4-exp/config.json"),
    include_str!("../../exec/tests/fixtures/qwen4-exp-ple/config.json"),
];

/// Mutate `v` by `edits` (set or remove a key); whatever loads must build, count, name and
/// render without a panic.
fn mutated(mut v: Value, edits: Vec<(usize, Value, bool)>) -> Result<(), TestCaseError> {
    let obj = v.as_object_mut().unwrap();
    let keys: Vec<String> = obj.keys().cloned().collect();
    for (k, val, remove) in edits {
        let key = keys[k % keys.len()].clone();
        if remove {
            obj.remove(&key);
        } else {
            obj.insert(key, val);
        }
    }
    if let Ok(spec) = families::load_json("m.json", &v.to_string(), "m", false) {
        if let Ok(g) = graph::build(&spec) {
            // Figures too large for 64 bits are errors, never saturated numbers.
            if let Ok(s) = stats::stats(&g, Some(4096)) {
                prop_assert!(s.active_params <= s.total_params);
            }
            let _ = manifest::manifest(&g, manifest::Naming::Gguf);
            let _ = render::render(
                &g,
                &render::Options {
                    width: 80,
                    color: false,
                    step: Some(3),
                },
            );
            if let Ok(page) = render::html::page(&render::html::PageInput {
                graph: &g,
                provenance: "m.json",
                context: Some(4096),
                values: None,
            }) {
                prop_assert!(page.ends_with("</html>\n"));
            }
            let _ = render::torch::module(&g.spec);
        }
    }
    Ok(())
}

/// 250 cases a run (each run draws new ones, so CI's runs add up; the suite's time is
/// bounded); `ANATOMY_FUZZ_CASES` asks for more, to search longer than CI does.
fn cases() -> u32 {
    std::env::var("ANATOMY_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(250)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]
    #[test]
    fn mutated_configs_never_panic(
        model in 0..catalog::ENTRIES.len(),
        edits in prop::collection::vec((0usize..64, value(), any::<bool>()), 1..4),
    ) {
        mutated(catalog::ENTRIES[model].value(), edits)?;
    }

    #[test]
    fn mutated_configs_of_uncataloged_families_never_panic(
        model in 0..UNCATALOGED.len(),
        edits in prop::collection::vec((0usize..64, value(), any::<bool>()), 1..4),
    ) {
        mutated(serde_json::from_str(UNCATALOGED[model]).unwrap(), edits)?;
    }
}
