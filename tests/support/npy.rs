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

/// A JSON list of rows of numbers, flattened row by row.
pub fn rows(v: &Value) -> Vec<f32> {
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
