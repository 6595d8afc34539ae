//! Reading what `anatomy run --logits` and `np.save` write, and the logits of a fixture.

use serde_json::Value;
use std::path::Path;

/// The header and data of a version-1 `.npy` file of little-endian float32, asserting both.
pub fn read_f32(path: &Path) -> (String, Vec<f32>) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..6], b"\x93NUMPY", "{}", path.display());
    let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(&bytes[10..10 + header_len])
        .unwrap()
        .to_string();
    assert!(header.contains("'descr': '<f4'"), "{header}");
    let data = bytes[10 + header_len..]
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    (header, data)
}

/// A fixture's token ids, comma-separated as `--ids` takes them, their count, and the expected
/// logits flattened row by row (from its `expected.json`, made by transformers).
pub fn expected(dir: &Path) -> (String, usize, Vec<f32>) {
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let ids: Vec<String> = expected["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.to_string())
        .collect();
    (ids.join(","), ids.len(), rows(&expected["logits"]))
}

/// The largest |got − want|, asserting both hold as many values.
pub fn max_diff(got: &[f32], want: &[f32]) -> f32 {
    assert_eq!(got.len(), want.len(), "number of logits");
    got.iter()
        .zip(want)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max)
}

/// A JSON list of rows of numbers, flattened row by row.
fn rows(v: &Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .flat_map(|r| {
            r.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
        })
        .collect()
}
