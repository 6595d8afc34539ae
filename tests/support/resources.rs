// Included by the build scripts of the crates whose tests need resources from outside the
// repository. It decides, once per build, which are here, as cfgs the tests read: a test whose
// resource is missing is ignored with the reason (`#[cfg_attr(not(has_torch), ignore = "…")]`),
// never passed. scripts/test.sh installs every one and fails if any test was ignored.

include!("paths.rs");

fn python_imports(modules: &str) -> bool {
    std::process::Command::new(python())
        .args(["-c", &format!("import {modules}")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn resources() {
    for cfg in [
        "has_smollm2",
        "has_gemma",
        "has_llama_vocab",
        "has_numpy",
        "has_torch",
        "has_transformers",
        "has_huggingface_hub",
        "has_pyflakes",
    ] {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
    }
    for var in [
        "ANATOMY_SMOLLM2_GGUF",
        "ANATOMY_GEMMA_GGUF",
        "ANATOMY_LLAMA_VOCAB",
        "ANATOMY_PYTHON",
        "HOME",
    ] {
        println!("cargo::rerun-if-env-changed={var}");
    }
    let gguf = smollm2_gguf();
    println!("cargo::rerun-if-changed={}", gguf.display());
    if gguf.is_file() {
        println!("cargo::rustc-cfg=has_smollm2");
    }
    let gemma = gemma_gguf();
    println!("cargo::rerun-if-changed={}", gemma.display());
    if gemma.is_file() {
        println!("cargo::rustc-cfg=has_gemma");
    }
    // The last file scripts/setup.sh unpacks.
    let vocab = llama_vocab().join("ggml-vocab-phi-3.gguf.out");
    println!("cargo::rerun-if-changed={}", vocab.display());
    if vocab.is_file() {
        println!("cargo::rustc-cfg=has_llama_vocab");
    }
    let py = python();
    if py.is_absolute() {
        println!("cargo::rerun-if-changed={}", py.display());
    }
    if python_imports("numpy") {
        println!("cargo::rustc-cfg=has_numpy");
    }
    if python_imports("numpy, torch, safetensors") {
        println!("cargo::rustc-cfg=has_torch");
    }
    if python_imports("pyflakes") {
        println!("cargo::rustc-cfg=has_pyflakes");
    }
    if python_imports("huggingface_hub") {
        println!("cargo::rustc-cfg=has_huggingface_hub");
    }
    if python_imports("numpy, torch, safetensors, transformers") {
        println!("cargo::rustc-cfg=has_transformers");
    }
}
