//! A safetensors file of zeros, for tests that need a checkpoint's headers more than its values.

/// One safetensors file holding `tensors` (name, shape), every value a BF16 zero.
pub fn safetensors_bf16(tensors: &[(String, Vec<u64>)]) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut at = 0u64;
    for (name, shape) in tensors {
        let n = shape.iter().product::<u64>() * 2;
        header.insert(
            name.clone(),
            serde_json::json!({"dtype": "BF16", "shape": shape, "data_offsets": [at, at + n]}),
        );
        at += n;
    }
    let mut json = serde_json::Value::Object(header).to_string().into_bytes();
    while !json.len().is_multiple_of(8) {
        json.push(b' ');
    }
    let mut out = (json.len() as u64).to_le_bytes().to_vec();
    out.extend(json);
    out.resize(out.len() + at as usize, 0);
    out
}

/// The checkpoint tensors (name, shape) anatomy's graph gives `config`, from `anatomy manifest
/// --json` of the test's binary.
#[allow(dead_code)]
pub fn tensors_of(config: &serde_json::Value) -> Vec<(String, Vec<u64>)> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.json"), config.to_string()).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_anatomy"))
        .args(["manifest", dir.path().to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    m["tensors"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            let dims = v.as_array().unwrap().iter().map(|d| d.as_u64().unwrap());
            (k.clone(), dims.collect())
        })
        .collect()
}

/// A Llama config whose bf16 checkpoint is about 40 MB: more than one download chunk (32 MiB).
#[allow(dead_code)]
pub fn llama_40mb() -> serde_json::Value {
    serde_json::json!({
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "hidden_size": 512, "intermediate_size": 1536, "num_hidden_layers": 4,
        "num_attention_heads": 8, "num_key_value_heads": 4, "vocab_size": 8192,
        "max_position_embeddings": 2048, "rms_norm_eps": 1e-5, "tie_word_embeddings": false,
        "torch_dtype": "bfloat16",
    })
}
