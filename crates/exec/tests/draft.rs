//! Gemma 4's assistants against transformers: a tiny target reads the prompt, its assistant
//! drafts tokens from the target's state (scripts/make_exec_fixtures.py, `DRAFTS`); the drafted
//! tokens are transformers' and each one's logits agree within 1e-4. Each checkpoint is exactly
//! what its graph says (`verify`).

use anatomy_exec::{weights::Weights, Model};
use std::path::Path;

#[path = "../../../tests/support/fixtures.rs"]
mod fixtures;

fn model(dir: &Path) -> Model {
    let c = anatomy_checkpoint::open(dir).unwrap();
    let spec = anatomy_checkpoint::spec(&c, false).unwrap_or_else(|e| panic!("{e}"));
    let g = anatomy_core::graph::build(&spec).unwrap();
    let r = anatomy_checkpoint::verify::verify(&g, &c).unwrap();
    assert!(
        r.clean(),
        "{}: missing {:?} unexpected {:?} mis-shaped {:?}",
        dir.display(),
        r.missing,
        r.unexpected.iter().map(|t| &t.name).collect::<Vec<_>>(),
        r.misshaped
    );
    let w = Weights::load(&c, &spec, &mut |_, _| {}).unwrap();
    Model::new(spec, w).unwrap()
}

#[test]
fn assistants_draft_what_transformers_drafts() {
    let mut report = Vec::new();
    for dir in fixtures::drafts() {
        let expected: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap())
                .unwrap();
        let ids: Vec<u32> = serde_json::from_value(expected["ids"].clone()).unwrap();
        let tokens: Vec<u32> = serde_json::from_value(expected["tokens"].clone()).unwrap();
        let want: Vec<Vec<f32>> = serde_json::from_value(expected["logits"].clone()).unwrap();
        let (target, assistant) = (model(&dir.join("target")), model(&dir.join("assistant")));
        let drafted = assistant.draft(&target, &ids, tokens.len()).unwrap();
        let got: Vec<Vec<f32>> = drafted.logits.to_vec2().unwrap();
        assert_eq!(drafted.tokens, tokens, "{}", dir.display());
        assert_eq!(got.len(), want.len());
        let d = got
            .iter()
            .zip(&want)
            .flat_map(|(g, w)| {
                assert_eq!(g.len(), w.len(), "vocabulary");
                g.iter().zip(w).map(|(a, b)| (a - b).abs())
            })
            .fold(0.0f32, f32::max);
        report.push((dir.file_name().unwrap().to_string_lossy().to_string(), d));
    }
    eprintln!("{report:?}");
    assert_eq!(report.len(), 2, "{report:?}");
    assert!(report.iter().all(|(_, d)| *d < 1e-4), "{report:?}");
}

/// A draft model refuses a target without the layers whose keys it reads, naming the field.
#[test]
fn an_assistant_refuses_a_target_without_the_keys_it_reads() {
    let dir = &fixtures::drafts()[0];
    let assistant = model(&dir.join("assistant"));
    let other = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llama");
    let e = assistant.draft(&model(&other), &[1, 2], 1).err().unwrap();
    assert_eq!(e.field, "layer_types", "{e}");
}

/// An assistant's page renders with the op view's values from one draft step, and its NumPy
/// file and PyTorch module are written (numpy_export.rs and torch_reference.rs run them).
#[test]
fn an_assistants_views_render_with_values_from_a_draft_step() {
    use anatomy_core::render;
    for dir in fixtures::drafts() {
        let assistant = dir.join("assistant");
        let c = anatomy_checkpoint::open(&assistant).unwrap();
        let spec = anatomy_checkpoint::spec(&c, false).unwrap();
        let g = anatomy_core::graph::build(&spec).unwrap();
        let values =
            anatomy_exec::session::draft_values(&assistant, &dir.join("target"), &g, false)
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let page = render::html::page(&render::html::PageInput {
            graph: &g,
            provenance: "draft fixture",
            context: None,
            values: Some(&values),
        })
        .unwrap();
        assert!(page.contains("Values from one draft step"));
        assert!(render::numpy::module(&g, "model.py").contains("def forward(state, W):"));
        assert!(
            render::torch::module(&spec).contains("def forward(self, state, shared_kv, position):")
        );
    }
}
