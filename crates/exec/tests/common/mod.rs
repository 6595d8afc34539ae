//! What the executor's fixture tests share: a fixture's model and transformers' expectations.

use anatomy_exec::{weights::Weights, Model};
use std::path::Path;

#[path = "../../../../tests/support/fixtures.rs"]
pub mod fixtures;

/// The fixture's model, its token ids and transformers' logits for them (`expected.json`).
#[allow(dead_code)]
pub fn load(dir: &Path) -> (Model, Vec<u32>, Vec<Vec<f32>>) {
    let c = anatomy_checkpoint::open(dir).unwrap();
    let spec = anatomy_checkpoint::spec(&c, false)
        .unwrap_or_else(|e| panic!("{}: {e}", fixtures::name(dir)));
    let w = Weights::load(&c, &spec, &mut |_, _| {}).unwrap();
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let ids = serde_json::from_value(expected["ids"].clone()).unwrap();
    let logits = serde_json::from_value(expected["logits"].clone()).unwrap();
    (Model::new(spec, w).unwrap(), ids, logits)
}
