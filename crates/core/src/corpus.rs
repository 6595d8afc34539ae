//! The models the tests sweep: every catalog entry, every registry row's defaults and every
//! executor fixture's config. Test support, shared by the library's tests and the workspace's
//! (the fixtures are read from this checkout, where `cargo test` runs).

use crate::spec::Spec;
use std::path::Path;

/// One model of the sweep: a name fit for a file stem, where it comes from, and its Spec.
pub struct Model {
    pub name: String,
    pub from: From,
    pub spec: Spec,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum From {
    Catalog,
    /// A registry row's defaults: `{"model_type": …}` alone.
    Defaults,
    /// An executor fixture's config.json.
    Fixture,
}

/// The sweep, in a stable order: the catalog, the registry's defaults (those transformers can
/// build; the others are refused, as `exactness.rs` checks), the executor's fixtures.
///
/// # Panics
/// Where a catalog entry or a fixture's config does not load: the checkout is broken.
pub fn models() -> Vec<Model> {
    let mut out = Vec::new();
    for e in crate::catalog::ENTRIES {
        let spec = crate::families::load_json(e.name, e.json, e.name, false)
            .unwrap_or_else(|err| panic!("{}: {err}", e.name));
        out.push(Model {
            name: e.name.replace(['-', '.'], "_"),
            from: From::Catalog,
            spec,
        });
    }
    for row in crate::families::FAMILIES {
        let mut c = serde_json::json!({ "model_type": row.model_type });
        if row.text.is_some() {
            c["text_config"] = serde_json::json!({});
        }
        let name = format!("default_{}", row.model_type);
        if let Ok(spec) = crate::families::load_json(&name, &c.to_string(), &name, false) {
            out.push(Model {
                name,
                from: From::Defaults,
                spec,
            });
        }
    }
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../exec/tests/fixtures");
    let mut configs = Vec::new();
    let mut dirs = vec![fixtures.clone()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = e.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.file_name().is_some_and(|n| n == "config.json") {
                configs.push(path);
            }
        }
    }
    configs.sort();
    for path in configs {
        let rel = path.parent().and_then(|p| p.strip_prefix(&fixtures).ok());
        let name =
            format!("fixture_{}", rel.unwrap_or(&path).display()).replace(['/', '-', '.'], "_");
        let json = std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{name}: {err}"));
        let spec = crate::families::load_json(&name, &json, &name, false)
            .unwrap_or_else(|err| panic!("{name}: {err}"));
        out.push(Model {
            name,
            from: From::Fixture,
            spec,
        });
    }
    out
}
