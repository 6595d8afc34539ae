//! `anatomy export`: the JSON of every catalog model validates against the published schema and
//! holds the Graph's own numbers; Mermaid and Markdown carry the block structure and figures.

use anatomy_core::render::export;
use anatomy_core::{catalog, graph, source, stats};
use serde_json::Value;

fn schema() -> jsonschema::Validator {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schema/graph.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

#[test]
fn every_catalog_models_json_validates_against_the_schema() {
    let v = schema();
    for e in catalog::ENTRIES {
        let loaded = source::load(e.name, false).unwrap();
        let g = graph::build(&loaded.spec).unwrap();
        let doc = export::json(&g, &loaded.origin).unwrap();
        let errors: Vec<String> = v
            .iter_errors(&doc)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .take(5)
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", e.name);
        // The numbers are the Graph's: params by name and shape, the figures stats gives.
        assert_eq!(doc["params"].as_array().unwrap().len(), g.params.len());
        assert_eq!(doc["tensors"].as_array().unwrap().len(), g.tensors.len());
        let s = stats::stats(&g, None).unwrap();
        assert_eq!(doc["figures"]["total_params"], s.total_params, "{}", e.name);
        assert_eq!(doc["schema_version"], export::SCHEMA_VERSION);
    }
}

#[test]
fn the_schema_refuses_what_is_not_a_graph() {
    let v = schema();
    let loaded = source::load("qwen3-0.6b", false).unwrap();
    let g = graph::build(&loaded.spec).unwrap();
    let good = export::json(&g, &loaded.origin).unwrap();
    for (path, bad) in [
        ("/schema_version", serde_json::json!(2)),
        ("/figures/total_params", serde_json::json!(1.5)),
        ("/root/kind", serde_json::json!("layer")),
        ("/params/0/shape", serde_json::json!(["4096"])),
    ] {
        let mut doc = good.clone();
        *doc.pointer_mut(path).unwrap() = bad;
        assert!(!v.is_valid(&doc), "{path}");
    }
}

#[test]
fn mermaid_and_markdown_carry_the_structure_and_figures() {
    let loaded = source::load("deepseek-v3", false).unwrap();
    let g = graph::build(&loaded.spec).unwrap();
    let m = export::mermaid(&g).unwrap();
    assert!(m.contains("flowchart TD"));
    assert!(
        m.contains(&format!(
            "subgraph block[\"decoder layer ×{}\"]",
            g.spec.layers
        )),
        "{m}"
    );
    assert!(
        m.contains("ffn_moe[\"Mixture of experts (layers 3–60)\"]"),
        "{m}"
    );
    assert!(m.contains("-.-> mtp"), "{m}");
    let md = export::markdown(&g, &loaded.origin).unwrap();
    let s = stats::stats(&g, None).unwrap();
    assert!(
        md.contains(&format!(
            "| parameters | {} ",
            anatomy_core::fmt::grouped(s.total_params as u128)
        )),
        "{md}"
    );
    assert!(
        md.contains("- FFN: dense in 0–2 · MoE (256 experts, 8 active) in 3–60"),
        "{md}"
    );
    assert!(md.contains("multi-head latent (MLA) attention"), "{md}");
}

/// A model name full of markup stays text in Mermaid and Markdown.
#[test]
fn hostile_names_stay_text() {
    let json = catalog::get("qwen3-0.6b").unwrap().json;
    let spec = anatomy_core::families::load_json(
        "x",
        json,
        "a\"]; click x href \"javascript:1\" | <b>",
        false,
    )
    .unwrap();
    let g = graph::build(&spec).unwrap();
    let m = export::mermaid(&g).unwrap();
    let title = m.lines().nth(1).unwrap();
    assert!(!title[8..title.len() - 1].contains('"'), "{title}");
    assert!(!m.contains("<b>"), "{m}");
    let md = export::markdown(&g, &source::Origin::File("x".into())).unwrap();
    assert!(!md.contains("<b>"), "{md}");
    assert!(md.lines().next().unwrap().contains(r"\| &lt;b&gt;"), "{md}");
}
