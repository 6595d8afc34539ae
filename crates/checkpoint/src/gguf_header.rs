//! A checked reader of GGUF headers (versions 2 and 3): every count, length and offset is
//! bounded by the file before anything is allocated for it, keys and tensor names must be unique,
//! and every tensor's bytes are located: inside the file, aligned, sized for its type and shape,
//! overlapping no other. Only a header that passed is handed to candle (`Header::content`), which
//! then reads tensor data from it.

use crate::Problem;
use candle_core::quantized::gguf_file::{Content, TensorInfo, Value, VersionedMagic};
use candle_core::quantized::GgmlDType;
use std::io::{Read, Seek, SeekFrom};

/// The smallest file that holds a GGUF header: magic, version, two counts.
const MIN_HEADER: u64 = 24;
/// Arrays inside arrays, at most this deep.
const MAX_DEPTH: u32 = 4;
/// Bounds on what a header may claim whatever size its file says it has (a server's word, over
/// HTTP): the header's bytes, the items of all its arrays together, and its entries. Real headers
/// are far inside them: a 262,144-token vocabulary with 500,000 merges is a few million items
/// and tens of MB.
pub const MAX_HEADER_BYTES: u64 = 512 << 20;
pub const MAX_ITEMS: u64 = 1 << 23;
pub const MAX_ENTRIES: u64 = 1 << 20;
/// Capacity reserved ahead of reading: the rest grows as items are read.
const RESERVE: u64 = 4096;

pub struct Header {
    pub version: u32,
    /// Metadata in file order, keys unique.
    pub metadata: Vec<(String, Value)>,
    pub tensors: Vec<Info>,
    pub alignment: u64,
    /// Where tensor data starts: the header's end, aligned.
    pub data_start: u64,
    pub file_len: u64,
}

pub struct Info {
    pub name: String,
    /// Row-major (PyTorch order): GGUF stores the innermost dimension first.
    pub shape: Vec<u64>,
    /// The ggml type number, and candle's type where candle reads it.
    pub type_id: u32,
    pub dtype: Option<GgmlDType>,
    /// From the start of the tensor data.
    pub offset: u64,
    /// Bytes its type and shape take, where ggml defines the type.
    pub bytes: Option<u64>,
}

/// ggml's name of each type number (llama.cpp's ggml.h), for messages and reports.
pub fn type_name(id: u32) -> String {
    let name = match id {
        0 => "F32",
        1 => "F16",
        2 => "Q4_0",
        3 => "Q4_1",
        6 => "Q5_0",
        7 => "Q5_1",
        8 => "Q8_0",
        9 => "Q8_1",
        10 => "Q2_K",
        11 => "Q3_K",
        12 => "Q4_K",
        13 => "Q5_K",
        14 => "Q6_K",
        15 => "Q8_K",
        16 => "IQ2_XXS",
        17 => "IQ2_XS",
        18 => "IQ3_XXS",
        19 => "IQ1_S",
        20 => "IQ4_NL",
        21 => "IQ3_S",
        22 => "IQ2_S",
        23 => "IQ4_XS",
        24 => "I8",
        25 => "I16",
        26 => "I32",
        27 => "I64",
        28 => "F64",
        29 => "IQ1_M",
        30 => "BF16",
        34 => "TQ1_0",
        35 => "TQ2_0",
        39 => "MXFP4",
        _ => return format!("type {id}"),
    };
    name.to_string()
}

/// Values per block and bytes per block of each ggml type (ggml.c's type_traits), whether or
/// not candle reads it: what a tensor of that type takes in the file.
pub fn block_layout(id: u32) -> Option<(u64, u64)> {
    Some(match id {
        0 => (1, 4),       // F32
        1 | 30 => (1, 2),  // F16, BF16
        2 => (32, 18),     // Q4_0
        3 => (32, 20),     // Q4_1
        6 => (32, 22),     // Q5_0
        7 => (32, 24),     // Q5_1
        8 => (32, 34),     // Q8_0
        9 => (32, 36),     // Q8_1
        10 => (256, 84),   // Q2_K
        11 => (256, 110),  // Q3_K
        12 => (256, 144),  // Q4_K
        13 => (256, 176),  // Q5_K
        14 => (256, 210),  // Q6_K
        15 => (256, 292),  // Q8_K
        16 => (256, 66),   // IQ2_XXS
        17 => (256, 74),   // IQ2_XS
        18 => (256, 98),   // IQ3_XXS
        19 => (256, 50),   // IQ1_S
        20 => (32, 18),    // IQ4_NL
        21 => (256, 110),  // IQ3_S
        22 => (256, 82),   // IQ2_S
        23 => (256, 136),  // IQ4_XS
        24 => (1, 1),      // I8
        25 => (1, 2),      // I16
        26 => (1, 4),      // I32
        27 | 28 => (1, 8), // I64, F64
        29 => (256, 56),   // IQ1_M
        34 => (256, 54),   // TQ1_0
        35 => (256, 66),   // TQ2_0
        39 => (32, 17),    // MXFP4
        _ => return None,
    })
}

/// candle's type for a ggml type number, where candle reads it.
fn dtype_of(id: u32) -> Option<GgmlDType> {
    Some(match id {
        0 => GgmlDType::F32,
        1 => GgmlDType::F16,
        2 => GgmlDType::Q4_0,
        3 => GgmlDType::Q4_1,
        6 => GgmlDType::Q5_0,
        7 => GgmlDType::Q5_1,
        8 => GgmlDType::Q8_0,
        9 => GgmlDType::Q8_1,
        10 => GgmlDType::Q2K,
        11 => GgmlDType::Q3K,
        12 => GgmlDType::Q4K,
        13 => GgmlDType::Q5K,
        14 => GgmlDType::Q6K,
        15 => GgmlDType::Q8K,
        30 => GgmlDType::BF16,
        _ => return None,
    })
}

/// A reader that knows how many bytes are left and refuses to read past them.
struct Bounded<'r, R> {
    r: &'r mut R,
    pos: u64,
    len: u64,
    /// Array items read so far, against `MAX_ITEMS`.
    items: u64,
}

impl<R: Read> Bounded<'_, R> {
    fn left(&self) -> u64 {
        self.len.saturating_sub(self.pos)
    }

    fn bytes(&mut self, n: u64, what: &str) -> Result<Vec<u8>, String> {
        if self.pos.saturating_add(n) > MAX_HEADER_BYTES {
            return Err(format!(
                "{what} needs {n} bytes at byte {}; anatomy reads GGUF headers of at most {} MiB",
                self.pos,
                MAX_HEADER_BYTES >> 20
            ));
        }
        if n > self.left() {
            return Err(format!(
                "{what} needs {n} bytes at byte {}, but the file has {} left",
                self.pos,
                self.left()
            ));
        }
        let mut v = vec![0u8; n as usize];
        self.r
            .read_exact(&mut v)
            .map_err(|e| format!("cannot read {what} at byte {}: {e}", self.pos))?;
        self.pos += n;
        Ok(v)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], String> {
        Ok(self.bytes(N as u64, what)?.try_into().expect("N bytes"))
    }

    fn u32(&mut self, what: &str) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    fn u64(&mut self, what: &str) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    fn string(&mut self, what: &str) -> Result<String, String> {
        let n = self.u64(what)?;
        let mut v = self.bytes(n, what)?;
        // Strings are not NUL-terminated, but some writers add one.
        while v.last() == Some(&0) {
            v.pop();
        }
        String::from_utf8(v).map_err(|_| format!("{what} at byte {} is not UTF-8", self.pos - n))
    }

    fn value(&mut self, ty: u32, what: &str, depth: u32) -> Result<Value, String> {
        Ok(match ty {
            0 => Value::U8(self.array::<1>(what)?[0]),
            1 => Value::I8(self.array::<1>(what)?[0] as i8),
            2 => Value::U16(u16::from_le_bytes(self.array(what)?)),
            3 => Value::I16(i16::from_le_bytes(self.array(what)?)),
            4 => Value::U32(self.u32(what)?),
            5 => Value::I32(i32::from_le_bytes(self.array(what)?)),
            6 => Value::F32(f32::from_le_bytes(self.array(what)?)),
            7 => match self.array::<1>(what)?[0] {
                0 => Value::Bool(false),
                1 => Value::Bool(true),
                b => {
                    return Err(format!(
                        "{what} is a boolean of value {b}; it must be 0 or 1"
                    ))
                }
            },
            8 => Value::String(self.string(what)?),
            9 => {
                if depth >= MAX_DEPTH {
                    return Err(format!("{what} nests arrays more than {MAX_DEPTH} deep"));
                }
                let item = self.u32(what)?;
                let n = self.u64(what)?;
                let min = min_size(item).ok_or_else(|| {
                    format!("{what} is an array of value type {item}, which GGUF does not define (0–12)")
                })?;
                if n.saturating_mul(min) > self.left() {
                    return Err(format!(
                        "{what} declares {n} items, which need at least {} bytes; the file has {} left",
                        n.saturating_mul(min),
                        self.left()
                    ));
                }
                self.items = self.items.saturating_add(n);
                if self.items > MAX_ITEMS {
                    return Err(format!(
                        "{what} declares {n} items, which makes more than {MAX_ITEMS} array items in the header; anatomy reads no more"
                    ));
                }
                let mut items = Vec::with_capacity(n.min(RESERVE) as usize);
                for _ in 0..n {
                    items.push(self.value(item, what, depth + 1)?);
                }
                Value::Array(items)
            }
            10 => Value::U64(self.u64(what)?),
            11 => Value::I64(i64::from_le_bytes(self.array(what)?)),
            12 => Value::F64(f64::from_le_bytes(self.array(what)?)),
            other => {
                return Err(format!(
                    "{what} has value type {other}, which GGUF does not define (0–12)"
                ))
            }
        })
    }
}

/// The fewest bytes a value of type `ty` takes.
fn min_size(ty: u32) -> Option<u64> {
    Some(match ty {
        0 | 1 | 7 => 1,
        2 | 3 => 2,
        4..=6 => 4,
        10..=12 => 8,
        8 => 8,
        9 => 12,
        _ => return None,
    })
}

/// Read and check the header of the GGUF file of `len` bytes behind `r`. Errors are messages
/// for the file as a whole; problems with where tensor data lies are returned beside the header,
/// for `verify` to report one by one.
pub fn read<R: Read + Seek>(r: &mut R, len: u64) -> Result<(Header, Vec<Problem>), String> {
    r.seek(SeekFrom::Start(0)).map_err(|e| e.to_string())?;
    if len < MIN_HEADER {
        return Err(format!(
            "is {len} bytes; a GGUF file starts with a {MIN_HEADER}-byte header (magic, version, counts)"
        ));
    }
    let mut b = Bounded {
        r,
        pos: 0,
        len,
        items: 0,
    };
    let magic = b.array::<4>("the magic number")?;
    if &magic != b"GGUF" {
        return Err(format!(
            "does not start with the GGUF magic number (found {:?}); it is not a GGUF file",
            String::from_utf8_lossy(&magic)
        ));
    }
    let version = b.u32("the version")?;
    match version {
        2 | 3 => {}
        1 => return Err("is GGUF version 1 (2023), which anatomy does not read; convert it with a current llama.cpp (versions 2 and 3 are read)".into()),
        v => return Err(format!("is GGUF version {v}; anatomy reads versions 2 and 3")),
    }
    let n_tensors = b.u64("the tensor count")?;
    let n_kv = b.u64("the metadata count")?;
    if n_tensors > MAX_ENTRIES || n_kv > MAX_ENTRIES {
        return Err(format!(
            "declares {n_tensors} tensors and {n_kv} metadata entries; anatomy reads at most {MAX_ENTRIES} of each"
        ));
    }
    // Each entry takes at least this much: a key or name length, a type, and a value or dims.
    let need = n_kv
        .saturating_mul(8 + 4 + 1)
        .saturating_add(n_tensors.saturating_mul(8 + 4 + 4 + 8));
    if need > b.left() {
        return Err(format!(
            "declares {n_tensors} tensors and {n_kv} metadata entries, which need at least {need} bytes; the file has {} after its header",
            b.left()
        ));
    }
    let mut metadata: Vec<(String, Value)> = Vec::with_capacity(n_kv.min(RESERVE) as usize);
    let mut keys = std::collections::HashSet::new();
    for i in 0..n_kv {
        let key = b.string(&format!("the key of metadata entry {i}"))?;
        let ty = b.u32(&format!("the type of `{key}`"))?;
        let value = b.value(ty, &format!("`{key}`"), 0)?;
        if !keys.insert(key.clone()) {
            return Err(format!(
                "has the metadata key `{key}` twice; each key must appear once"
            ));
        }
        metadata.push((key, value));
    }
    let alignment = match metadata.iter().find(|(k, _)| k == "general.alignment") {
        None => 32,
        Some((_, v)) => {
            let a = match v {
                Value::U8(x) => *x as u64,
                Value::U16(x) => *x as u64,
                Value::U32(x) => *x as u64,
                Value::U64(x) => *x,
                _ => {
                    return Err(
                        "has `general.alignment` of a type other than an unsigned integer".into(),
                    )
                }
            };
            if a == 0 || !a.is_power_of_two() {
                return Err(format!(
                    "has `general.alignment` {a}; it must be a power of two (32 when absent)"
                ));
            }
            a
        }
    };
    let mut tensors = Vec::with_capacity(n_tensors.min(RESERVE) as usize);
    let mut names = std::collections::HashSet::new();
    for i in 0..n_tensors {
        let name = b.string(&format!("the name of tensor {i}"))?;
        let what = format!("tensor `{name}`");
        let n_dims = b.u32(&what)?;
        if !(1..=4).contains(&n_dims) {
            return Err(format!(
                "says {what} has {n_dims} dimensions; GGUF tensors have 1 to 4"
            ));
        }
        let mut shape = Vec::with_capacity(n_dims as usize);
        for _ in 0..n_dims {
            shape.push(b.u64(&what)?);
        }
        shape.reverse();
        if shape.contains(&0) {
            return Err(format!("says {what} has a dimension of size 0 ({shape:?})"));
        }
        let type_id = b.u32(&what)?;
        let offset = b.u64(&what)?;
        if !names.insert(name.clone()) {
            return Err(format!(
                "has tensor `{name}` twice; each name must appear once"
            ));
        }
        let dtype = dtype_of(type_id);
        let numel = shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
        let bytes = match (block_layout(type_id), numel) {
            (_, None) => {
                return Err(format!(
                    "says {what} has shape {shape:?}, whose size overflows 64 bits"
                ))
            }
            (Some((block, size)), Some(n)) => {
                let inner = *shape.last().expect("one dim at least");
                if inner % block != 0 {
                    return Err(format!(
                        "says {what} is {} of shape {shape:?}; its rows of {inner} values do not fill whole blocks of {block}",
                        type_name(type_id)
                    ));
                }
                match (n / block).checked_mul(size) {
                    Some(bytes) => Some(bytes),
                    None => {
                        return Err(format!(
                        "says {what} has shape {shape:?}, whose size in bytes overflows 64 bits"
                    ))
                    }
                }
            }
            (None, Some(_)) => None,
        };
        tensors.push(Info {
            name,
            shape,
            type_id,
            dtype,
            offset,
            bytes,
        });
    }
    let data_start = b.pos.div_ceil(alignment) * alignment;
    let header = Header {
        version,
        metadata,
        tensors,
        alignment,
        data_start,
        file_len: len,
    };
    let problems = header.data_problems();
    Ok((header, problems))
}

impl Header {
    /// Where each tensor's bytes lie, checked: aligned, inside the file, no two overlapping.
    fn data_problems(&self) -> Vec<Problem> {
        let mut out = Vec::new();
        let mut spans = Vec::new();
        for t in &self.tensors {
            let start = self.data_start.checked_add(t.offset);
            let Some(bytes) = t.bytes else {
                out.push(Problem::new(
                    &t.name,
                    None,
                    format!(
                        "is stored as {}, which anatomy cannot read or size",
                        type_name(t.type_id)
                    ),
                ));
                continue;
            };
            let end = start.and_then(|s| s.checked_add(bytes));
            let (Some(start), Some(end)) = (start, end) else {
                out.push(Problem::new(
                    &t.name,
                    None,
                    format!("has data offset {}, past any file", t.offset),
                ));
                continue;
            };
            if t.offset % self.alignment != 0 {
                out.push(Problem::new(
                    &t.name,
                    Some((start, end)),
                    format!(
                        "starts at data offset {}, not a multiple of the alignment {}",
                        t.offset, self.alignment
                    ),
                ));
            }
            if end > self.file_len {
                out.push(Problem::new(
                    &t.name,
                    Some((start, end)),
                    format!(
                        "needs {bytes} bytes ({} of shape {:?}) ending at byte {end}, past the end of the file ({} bytes)",
                        type_name(t.type_id),
                        t.shape,
                        self.file_len
                    ),
                ));
                continue;
            }
            spans.push((start, end, &t.name));
        }
        spans.sort();
        for w in spans.windows(2) {
            if w[1].0 < w[0].1 {
                out.push(Problem::new(
                    w[1].2,
                    Some((w[1].0, w[1].1)),
                    format!("overlaps `{}` (bytes {}..{})", w[0].2, w[0].0, w[0].1),
                ));
            }
        }
        out
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.metadata.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// candle's view of this checked header's tensors, to read tensor data through; the
    /// metadata stays here (`get`), not copied (a tokenizer's vocabulary is megabytes).
    /// A tensor's bytes as stored (its type's size; none for a type ggml does not define).
    pub fn raw<R: Read + Seek>(&self, r: &mut R, t: &Info) -> std::io::Result<Vec<u8>> {
        r.seek(std::io::SeekFrom::Start(self.data_start + t.offset))?;
        let mut data = vec![0u8; t.bytes.unwrap_or(0) as usize];
        r.read_exact(&mut data)?;
        Ok(data)
    }

    pub fn content(&self) -> Content {
        Content {
            magic: if self.version == 2 {
                VersionedMagic::GgufV2
            } else {
                VersionedMagic::GgufV3
            },
            metadata: Default::default(),
            tensor_infos: self
                .tensors
                .iter()
                .filter_map(|t| {
                    Some((
                        t.name.clone(),
                        TensorInfo {
                            ggml_dtype: t.dtype?,
                            shape: candle_core::Shape::from(
                                t.shape.iter().map(|&d| d as usize).collect::<Vec<_>>(),
                            ),
                            offset: t.offset,
                        },
                    ))
                })
                .collect(),
            tensor_data_offset: self.data_start,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anatomy_core::plan::WeightFormat;

    /// The planner's table of GGUF formats (anatomy-core, which cannot read this crate) and
    /// ggml's block layouts here agree for every type both name.
    #[test]
    fn the_planners_gguf_formats_have_ggmls_block_sizes() {
        let mut named = 0;
        for id in 0..64 {
            let name = type_name(id).to_ascii_lowercase();
            if let (Some(f), Some((values, bytes))) = (WeightFormat::parse(&name), block_layout(id))
            {
                assert!(f.is_gguf(), "{name}");
                assert_eq!(f.block(), values, "{name}");
                assert_eq!(f.bytes(values as u128), bytes as u128, "{name}");
                named += 1;
            }
        }
        // Every GGUF format the planner offers is one of ggml's.
        let offered = WeightFormat::names()
            .split(", ")
            .filter(|n| WeightFormat::parse(n).is_some_and(|f| f.is_gguf()))
            .count();
        assert_eq!(named, offered);
    }
}
