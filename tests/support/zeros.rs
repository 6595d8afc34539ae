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
