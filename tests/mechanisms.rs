//! Every mechanism anatomy knows is run by at least one checkpoint transformers made (the
//! executor's fixtures), and so through every view those fixtures are held to: the executor and
//! its KV cache, the NumPy export, the PyTorch reference, the page and the op view with values.
//! A new Spec field or variant does not compile until `mechanisms` names it; named, this test
//! fails until a fixture uses it.

#[path = "support/fixtures.rs"]
mod fixtures;

use anatomy_core::mechanisms::{mechanisms, ALL};
use std::collections::BTreeSet;

#[test]
fn every_mechanism_is_run_by_a_fixture() {
    let mut seen = BTreeSet::new();
    // A draft model's fixture is its assistant beside its target (tests draft.rs, numpy_export,
    // torch_reference run it).
    let drafts = fixtures::drafts().into_iter().map(|d| d.join("assistant"));
    for dir in fixtures::all().into_iter().chain(drafts) {
        let spec = anatomy_core::source::load(&dir.display().to_string(), false)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .spec;
        seen.extend(mechanisms(&spec));
    }
    let unknown: Vec<_> = seen.iter().filter(|m| !ALL.contains(&m.as_str())).collect();
    assert!(
        unknown.is_empty(),
        "named by `mechanisms` but not in ALL: {unknown:?}"
    );
    let unrun: Vec<_> = ALL.iter().filter(|m| !seen.contains(**m)).collect();
    assert!(
        unrun.is_empty(),
        "no executor fixture uses {unrun:?}: add one (scripts/make_exec_fixtures.py)"
    );
}
