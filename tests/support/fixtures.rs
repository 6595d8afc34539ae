//! The parity fixtures made by transformers, for the test crates of the workspace (`#[path]`):
//! tiny models of each family's default config (`scripts/make_exec_fixtures.py`) and toy-size
//! copies of every catalog config with every key kept (`scripts/make_toy_fixtures.py`).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|p| p.join("crates/exec/tests/fixtures").is_dir())
        .expect("the workspace root")
        .join("crates/exec/tests/fixtures")
}

fn checkpoints(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("model.safetensors").is_file())
        .collect();
    out.sort();
    out
}

/// Every fixture checkpoint with logits: the default-config ones, the toy copies, then the
/// multimodal families' text-only saves.
#[allow(dead_code)]
pub fn all() -> Vec<PathBuf> {
    let mut out = checkpoints(&root());
    out.extend(toys());
    out.extend(layouts());
    out
}

/// The catalog's multimodal families saved text-only (`scripts/make_layout_fixtures.py`): by
/// their causal-LM class with its text config, and beside the wrapper's config.
#[allow(dead_code)]
pub fn layouts() -> Vec<PathBuf> {
    checkpoints(&root().join("layout"))
}

/// Wrappers run on an image (`scripts/make_exec_fixtures.py`): each folder holds the processed
/// image (`pixels.npy`) beside its checkpoint and transformers' logits.
#[allow(dead_code)]
pub fn images() -> Vec<PathBuf> {
    checkpoints(&root().join("image"))
}

/// Images through image processors (`scripts/make_processor_fixtures.py`): each folder holds
/// `image.png` or `image.jpg`, the processor's config and transformers' `pixels.npy` (the PIL
/// backend's) or `pixels_torchvision.npy` or both.
#[allow(dead_code)]
pub fn processed() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root().join("processor"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            ["pixels.npy", "pixels_torchvision.npy"]
                .iter()
                .any(|f| p.join(f).is_file())
        })
        .collect();
    out.sort();
    out
}

/// The toy copies of the catalog's configs, one per catalog entry.
#[allow(dead_code)]
pub fn toys() -> Vec<PathBuf> {
    checkpoints(&root().join("toy"))
}

/// Draft models with their targets (Gemma 4's assistants): each folder holds `assistant/`,
/// `target/`, the steps' inputs (`inputs.npz`) and transformers' logits and hidden states.
#[allow(dead_code)]
pub fn drafts() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root().join("draft"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("inputs.npz").is_file())
        .collect();
    out.sort();
    out
}

/// The property test's cases: toy copies with keys removed or changed.
#[allow(dead_code)]
pub fn mutants() -> Vec<PathBuf> {
    let dir = root().join("mutant");
    if !dir.is_dir() {
        return Vec::new();
    }
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("expected.json").is_file())
        .collect();
    out.sort();
    out
}

/// The fixture's name as the tests report it (`toy/gemma-3-27b`, `llama`).
#[allow(dead_code)]
pub fn name(dir: &Path) -> String {
    let leaf = dir.file_name().unwrap().to_string_lossy().to_string();
    match dir
        .parent()
        .and_then(|p| p.file_name())
        .map(|s| s.to_string_lossy().to_string())
    {
        Some(p) if p == "toy" || p == "mutant" || p == "layout" => format!("{p}/{leaf}"),
        _ => leaf,
    }
}
