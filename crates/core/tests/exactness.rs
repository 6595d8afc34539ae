//! The Graph's checkpoint layout and parameter counts against `transformers`.
//!
//! Fixtures come from `scripts/make_fixtures.py` (transformers on the meta device): for every catalog
//! model and for generated configs the catalog has never seen.

use anatomy_core::{catalog, families, graph, manifest, stats};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/reference")
        .join(format!("{name}.json"));
    serde_json::from_str(
        &std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap()
}

fn check(name: &str, config_file: &str, json: &str) {
    let mut spec =
        families::load_json(config_file, json, name, false).unwrap_or_else(|e| panic!("{e}"));
    // transformers builds a config's model unquantized (its quantizers act in from_pretrained):
    // the logical tensors; a quantized checkpoint's own are checked by `verify` on real files.
    spec.quant = None;
    let g = graph::build(&spec).unwrap();
    let expected = fixture(name);
    let all: BTreeMap<String, Vec<u64>> =
        serde_json::from_value(expected["tensors"].clone()).unwrap();
    // A tower's tensors are in the manifest like any other; one of a kind anatomy does not know
    // holds what is under its prefix, outside the total.
    let unknown =
        |k: &str| (spec.towers.iter()).any(|n| k.starts_with(&n.prefix) && n.blocks.is_none());
    let (skipped, want): (BTreeMap<_, _>, BTreeMap<_, _>) =
        all.into_iter().partition(|(k, _)| unknown(k));
    let uncounted: u64 = skipped.values().map(|s| s.iter().product::<u64>()).sum();
    let towers: u64 = spec.towers.iter().filter_map(|t| t.params()).sum();
    let entries = manifest::manifest(&g, manifest::Naming::Hf).unwrap();
    let listed = entries.len();
    let got: BTreeMap<String, Vec<u64>> = entries.into_iter().map(|e| (e.name, e.shape)).collect();
    assert_eq!(
        got.len(),
        listed,
        "{name}: a tensor is listed more than once"
    );
    let missing: Vec<_> = want
        .keys()
        .filter(|k| !got.contains_key(*k))
        .take(5)
        .collect();
    let extra: Vec<_> = got
        .keys()
        .filter(|k| !want.contains_key(*k))
        .take(5)
        .collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{name}: missing {missing:?}, unexpected {extra:?}"
    );
    for (k, shape) in &want {
        assert_eq!(&got[k], shape, "{name}: shape of {k}");
    }
    if let (Some(theta), anatomy_core::spec::Position::Rope(r)) =
        (expected["rope_theta"].as_f64(), &spec.position)
    {
        assert_eq!(r.full.theta, theta, "{name}: RoPE base");
    }
    if let Some(context) = expected["context"].as_u64() {
        assert_eq!(spec.context, context, "{name}: context");
    }
    let s = stats::stats(&g, None).unwrap();
    assert_eq!(
        s.total_params,
        expected["total_params"].as_u64().unwrap() - uncounted,
        "{name}: total params"
    );
    // A text token runs none of the towers.
    assert_eq!(
        s.active_params,
        expected["active_params"].as_u64().unwrap() - uncounted - towers,
        "{name}: active params"
    );
}

#[test]
fn catalog_models_match_transformers() {
    for entry in catalog::ENTRIES {
        check(entry.name, entry.name, entry.json);
    }
}

#[test]
fn unseen_configs_match_transformers() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/unseen");
    let mut n = 0;
    for f in std::fs::read_dir(&dir).unwrap() {
        let path = f.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        check(
            &name,
            &path.display().to_string(),
            &std::fs::read_to_string(&path).unwrap(),
        );
        n += 1;
    }
    assert!(
        n >= 54,
        "expected three generated configs for each of 18 model types, found {n}"
    );
}

/// The figures the Core issue quotes, read from the fixtures so a stale fixture cannot hide.
#[test]
fn quoted_figures() {
    for (name, total) in [
        ("llama-3.2-1b", 1_235_814_400u64),
        ("llama-3.2-3b", 3_212_749_824),
        ("llama-3.1-8b", 8_030_261_248),
        ("llama-3.1-70b", 70_553_706_496),
        ("smollm2-135m", 134_515_008),
        ("mistral-7b-v0.1", 7_241_732_096),
        ("qwen2.5-0.5b", 494_032_768),
        ("qwen3-0.6b", 596_049_920),
    ] {
        assert_eq!(
            fixture(name)["total_params"].as_u64(),
            Some(total),
            "{name}"
        );
    }
    assert_eq!(
        fixture("llama-3.2-3b")["tensors"]
            .as_object()
            .unwrap()
            .len(),
        254
    );
}

/// Every registry row's config class defaults (`{"model_type": T}` alone) build what transformers
/// builds; and every row has its fixtures: these defaults, and a tiny model with logits among the
/// executor's fixtures (crates/exec/tests/fixtures/<name>/config.json of that model_type).
#[test]
fn every_registry_row_has_fixtures_and_its_defaults_match() {
    let exec = Path::new(env!("CARGO_MANIFEST_DIR")).join("../exec/tests/fixtures");
    let exec_types: Vec<String> = std::fs::read_dir(&exec)
        .unwrap()
        .filter_map(|e| {
            let config = e.ok()?.path().join("config.json");
            let v: Value = serde_json::from_str(&std::fs::read_to_string(config).ok()?).ok()?;
            // A wrapper's fixture runs its language model's type too, where it names it.
            let inner = v["text_config"]["model_type"].as_str().map(str::to_string);
            Some([v["model_type"].as_str().map(str::to_string), inner])
        })
        .flatten()
        .flatten()
        .collect();
    let mut missing = Vec::new();
    for row in families::FAMILIES {
        let t = row.model_type;
        let name = format!("default-{t}");
        let mut config = serde_json::json!({ "model_type": t });
        if row.text.is_some() {
            config["text_config"] = serde_json::json!({});
        }
        if let Some((_, field)) = CANNOT_BUILD.iter().find(|(r, _)| *r == t) {
            let e = families::load_json("defaults", &config.to_string(), &name, false).unwrap_err();
            assert_eq!(e.field, *field, "{e}");
            continue;
        }
        // A language model transformers builds only inside its wrapper is refused alone; its
        // wrapper's fixtures hold it.
        if !row.standalone {
            let e = families::load_json("defaults", &config.to_string(), &name, false).unwrap_err();
            assert_eq!(e.field, "model_type", "{e}");
            assert!(
                families::FAMILIES.iter().any(|w| w.text == Some(t)),
                "{t}: read inside no wrapper"
            );
            continue;
        }
        if !Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("tests/fixtures/reference/{name}.json"))
            .exists()
        {
            missing.push(format!(
                "{t}: no reference/{name}.json (scripts/make_fixtures.py {name})"
            ));
            continue;
        }
        // A wrapper's tiny model is its language model's.
        let runs_as = row.text.unwrap_or(t);
        if !exec_types.iter().any(|e| e == t || e == runs_as) {
            missing.push(format!(
                "{t}: no executor fixture (scripts/make_exec_fixtures.py)"
            ));
        }
        if let Some((_, field)) = CANNOT_RUN.iter().find(|(r, _)| *r == t) {
            let e = families::load_json("defaults", &config.to_string(), &name, false).unwrap_err();
            assert_eq!(e.field, *field, "{e}");
            continue;
        }
        check(&name, &name, &config.to_string());
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// Defaults transformers cannot build (MinistralConfig and HunYuanDenseV1Config leave head_dim
/// unset and NemotronConfig num_key_value_heads, and their attention divides by them; Dots1Config
/// has no expert count; DBRX's attention reads an `attn_config.rope_theta` its defaults lack;
/// Lfm2MoeConfig has no layer types and its layers read one each), refused by the field that says
/// why: there is nothing to compare.
const CANNOT_BUILD: [(&str, &str); 15] = [
    // AyaVisionConfig's default SigLIP is 1152 wide in 14 heads, which do not divide it.
    ("aya_vision", "vision_config"),
    // Qwen4ExpTextConfig leaves the QSA indexer's sizes unset, and every attention layer builds
    // an indexer from them.
    ("qwen4_exp_text", "indexer_n_heads"),
    ("qwen4_exp", "text_config.indexer_n_heads"),
    // Gemma4AssistantConfig's validation refuses its own default text config, whose per-layer
    // embeddings an assistant cannot have.
    (
        "gemma4_assistant",
        "text_config.hidden_size_per_layer_input",
    ),
    // CohereCompassTextConfig's defaults have no RoPE entry for its full-attention layers, which
    // its rotary embedding reads.
    ("cohere_compass_text", "rope_parameters"),
    ("cohere_compass", "text_config.rope_parameters"),
    // Granite4VisionConfig's defaults list no deep-stack pairs, and its model builds a projector
    // per pair (len(None)).
    ("granite4_vision", "deepstack_layer_map"),
    // DbrxAttentionConfig's defaults have no rope_theta, which DbrxAttention reads.
    ("dbrx", "attn_config"),
    ("ministral", "head_dim"),
    ("nemotron", "num_key_value_heads"),
    ("hunyuan_v1_dense", "head_dim"),
    ("hunyuan_v1_moe", "head_dim"),
    // HunYuanVLTextConfig's defaults are HunYuanDenseV1Config's.
    ("hunyuan_vl", "text_config.head_dim"),
    ("dots1", "n_routed_experts"),
    ("lfm2_moe", "layer_types"),
];

/// Defaults transformers builds but cannot run, refused: DeepseekV2Config has no top-k;
/// Glm4MoeConfig's 96 heads of 4096 // 96 = 42 dims rotate 21 of them, an odd count.
const CANNOT_RUN: [(&str, &str); 4] = [
    ("deepseek_v2", "num_experts_per_tok"),
    ("glm4_moe", "hidden_size"),
    // Glm4vMoeTextConfig's defaults are Glm4MoeConfig's.
    ("glm4v_moe", "text_config.hidden_size"),
    // Qwen3OmniMoeTextConfig's 28 heads of 2048 // 28 = 73 dims: RoPE's tables are 74 wide and
    // its forward fails on them.
    ("qwen3_omni_moe_thinker", "text_config.hidden_size"),
];

/// Every registry row's defaults as `save_pretrained` writes them (every field of the config
/// class, derived ones included) read without --lenient and build what transformers builds; the
/// classes that cannot build or run their own defaults are refused by the same field.
#[test]
fn saved_default_configs_are_understood() {
    assert!(
        defaults_in("saved") >= 90,
        "a saved config per registry row"
    );
}

/// Defaults holding a non-finite float (Mamba-2's `time_step_limit` and its kin) as transformers'
/// own `save_pretrained` writes them, `{"__float__": "Infinity"}`: the same model.
#[test]
fn configs_saved_by_save_pretrained_with_tagged_floats_are_understood() {
    assert!(defaults_in("saved_pretrained") >= 5);
}

/// Each config class's attribute_map alias (`num_local_experts` for `n_routed_experts` …), set
/// alone to the default it stands for, reads as the same model.
#[test]
fn attribute_map_aliases_are_understood() {
    assert!(defaults_in("aliases") >= 70, "the config classes' aliases");
}

/// Checks every config in fixtures/`dir` (named `<model_type>[--…].json`) against its model
/// type's default fixture; returns how many there were.
fn defaults_in(dir: &str) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(dir);
    let mut n = 0;
    for f in std::fs::read_dir(&dir).unwrap() {
        let path = f.unwrap().path();
        let stem = path.file_stem().unwrap().to_str().unwrap();
        let t = stem.split("--").next().unwrap_or(stem).to_string();
        let json = std::fs::read_to_string(&path).unwrap();
        let file = path.display().to_string();
        match CANNOT_BUILD
            .iter()
            .chain(&CANNOT_RUN)
            .find(|(r, _)| *r == t)
        {
            Some((_, field)) => {
                let e = families::load_json(&file, &json, &t, false).unwrap_err();
                assert_eq!(e.field, *field, "{e}");
            }
            None => check(&format!("default-{t}"), &file, &json),
        }
        n += 1;
    }
    n
}

/// The README's table says "not yet" of the decoders whose refusal says what they hold
/// (`families::NOT_YET`), and of no other decoder.
#[test]
fn the_readme_and_the_refusals_name_the_same_decoders_not_read_yet() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let mut listed: Vec<&str> = readme
        .lines()
        .filter(|l| l.contains("| not yet: "))
        .filter_map(|l| l.split('`').nth(1))
        .collect();
    let mut refused: Vec<&str> = families::NOT_YET.iter().map(|(t, _)| *t).collect();
    listed.sort();
    refused.sort();
    assert_eq!(listed, refused);
}

/// The README's table of transformers' model types says "read" for exactly the types the
/// registry reads (scripts/model_types.py writes it).
#[test]
fn the_readme_lists_exactly_the_model_types_anatomy_reads() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let table = readme
        .split("<!-- model-types -->")
        .nth(1)
        .and_then(|s| s.split("<!-- /model-types -->").next())
        .expect("README.md has the model-types table");
    let mut listed: Vec<&str> = table
        .lines()
        .filter(|l| l.contains("| read ("))
        .filter_map(|l| l.split('`').nth(1))
        .collect();
    let mut read: Vec<&str> = families::FAMILIES
        .iter()
        .flat_map(|f| std::iter::once(f.model_type).chain(f.aliases.iter().copied()))
        .collect();
    listed.sort();
    read.sort();
    assert_eq!(
        listed, read,
        "run `python3 scripts/model_types.py` to rewrite README.md's table"
    );
}
