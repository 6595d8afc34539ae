//! NumPy `.npy` files of f32 arrays: written (format 1.0) and read (any format version), the
//! read checking every field against the file's length before it allocates. Hand-written: the
//! format is a short text header and raw values, and only little-endian f32 in C order is read.

/// The bytes of a little-endian f32 `.npy` file of `shape`.
pub fn encode_f32(shape: &[usize], data: &[f32]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape_text = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape_text}, }}");
    // Magic (6) + version (2) + header length (2) + header, padded with spaces to 64 bytes, ending in \n.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + data.len() * 4);
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for v in data {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

/// The shape and values of a little-endian f32 `.npy` file in C order; what is wrong with it
/// otherwise, in words that say what would be valid.
pub fn decode_f32(bytes: &[u8]) -> Result<(Vec<usize>, Vec<f32>), String> {
    let rest = bytes
        .strip_prefix(b"\x93NUMPY")
        .ok_or("is not a NumPy .npy file (it does not begin with \\x93NUMPY)")?;
    let (len, at) = match rest {
        [1, _, a, b, ..] => (u16::from_le_bytes([*a, *b]) as usize, 10usize),
        [2 | 3, _, a, b, c, d, ..] => (u32::from_le_bytes([*a, *b, *c, *d]) as usize, 12),
        _ => return Err("has a .npy format version other than 1, 2 or 3".into()),
    };
    let header = bytes
        .get(at..at.saturating_add(len))
        .ok_or("ends inside its header")?;
    let header = std::str::from_utf8(header).map_err(|_| "has a header that is not text")?;
    let field = |key: &str| -> Option<&str> {
        let from = header.find(&format!("'{key}':"))? + key.len() + 3;
        Some(header[from..].trim_start())
    };
    if !field("descr").is_some_and(|d| d.starts_with("'<f4'")) {
        return Err("holds values that are not little-endian float32 ('<f4'); save the array with .astype(numpy.float32)".into());
    }
    if !field("fortran_order").is_some_and(|d| d.starts_with("False")) {
        return Err("is in Fortran order; save a C-ordered array (numpy.ascontiguousarray)".into());
    }
    let shape = field("shape")
        .and_then(|s| s.strip_prefix('('))
        .and_then(|s| s.split_once(')'))
        .ok_or("has no shape in its header")?
        .0;
    let shape = shape
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| {
            d.parse::<usize>()
                .map_err(|_| format!("has a shape ({shape}) that is not sizes"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let data = &bytes[at + len..];
    let count = shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .filter(|&n| n.checked_mul(4) == Some(data.len()))
        .ok_or_else(|| {
            format!(
                "holds {} bytes of values, which is not 4 × its shape {shape:?}",
                data.len()
            )
        })?;
    let values = data
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect::<Vec<_>>();
    debug_assert_eq!(values.len(), count);
    Ok((shape, values))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_written_reads_back() {
        let bytes = encode_f32(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, -6.5]);
        assert_eq!(
            decode_f32(&bytes).unwrap(),
            (vec![2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, -6.5])
        );
        let one = encode_f32(&[1], &[7.0]);
        assert_eq!(decode_f32(&one).unwrap(), (vec![1], vec![7.0]));
    }

    /// A version 1.0 file of `header` and `data`, as a writer that lies might make it.
    fn file(header: &str, data: &[u8]) -> Vec<u8> {
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    /// Files that lie about their length, type or order are refused, not read past their end.
    #[test]
    fn malformed_files_are_refused() {
        let good = encode_f32(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
        assert!(decode_f32(&good[..good.len() - 1]).is_err());
        assert!(decode_f32(b"\x93NUMPY\x01\x00\xff\xff{").is_err());
        assert!(decode_f32(b"PK\x03\x04").is_err());
        let header = |descr: &str, order: &str, shape: &str| {
            format!("{{'descr': '{descr}', 'fortran_order': {order}, 'shape': {shape}, }}\n")
        };
        let data = [0u8; 16];
        assert!(decode_f32(&file(&header("<f4", "False", "(2, 2)"), &data)).is_ok());
        let f8 = decode_f32(&file(&header("<f8", "False", "(2, 2)"), &data));
        assert!(f8.unwrap_err().contains("float32"));
        let fortran = decode_f32(&file(&header("<f4", "True", "(2, 2)"), &data));
        assert!(fortran.unwrap_err().contains("Fortran"));
        let huge = decode_f32(&file(
            &header("<f4", "False", "(9999999999999, 99999999999)"),
            &data,
        ));
        assert!(huge.unwrap_err().contains("not 4 ×"));
        assert!(decode_f32(&file(&header("<f4", "False", "(2, x)"), &data)).is_err());
    }
}
