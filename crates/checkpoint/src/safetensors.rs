//! Safetensors checkpoints: a folder with config.json and one `.safetensors` file, or shards
//! listed in `model.safetensors.index.json`. Only headers are read (the first bytes of each
//! file), so a checkpoint of any size opens in milliseconds. The header is checked here, with
//! errors that name the tensor and its bytes: unique names, known types, offsets inside the file,
//! sizes that fit the type and shape, no overlaps or gaps; the index must agree with the shards.

use crate::{open_regular, Checkpoint, Format, Problem, Stored};
use anatomy_core::Error;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

/// The largest config.json or index file anatomy reads.
const MAX_JSON_BYTES: u64 = 64 << 20;
/// The largest safetensors header (the format's own limit is 100 MB).
pub const MAX_HEADER: u64 = 100_000_000;

/// A JSON file, regular and bounded, read as Python's `json` reads it (a byte-order mark and
/// `Infinity` allowed: `families::parse_json`).
pub fn read_json(path: &Path) -> Result<serde_json::Value, Error> {
    let shown = path.display().to_string();
    let file = open_regular(path)?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if len > MAX_JSON_BYTES {
        return Err(Error::file(
            &shown,
            format!("is {len} bytes; anatomy reads JSON files of at most {MAX_JSON_BYTES}"),
        ));
    }
    let mut text = String::new();
    file.take(MAX_JSON_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| Error::file(&shown, format!("cannot read as UTF-8 text: {e}")))?;
    anatomy_core::families::parse_json(&shown, &text)
}

/// A JSON object's entries in file order, duplicates kept (serde_json keeps only the last).
struct Entries(Vec<(String, serde_json::Value)>);

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Entries;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Entries, A::Error> {
                let mut out = Vec::new();
                while let Some(e) = m.next_entry::<String, serde_json::Value>()? {
                    out.push(e);
                }
                Ok(Entries(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// Bits per value of each safetensors type.
pub fn bits(dtype: &str) -> Option<u64> {
    Some(match dtype {
        "F4" => 4,
        "F6_E2M3" | "F6_E3M2" => 6,
        "BOOL" | "U8" | "I8" | "F8_E5M2" | "F8_E4M3" | "F8_E8M0" => 8,
        "I16" | "U16" | "F16" | "BF16" => 16,
        "I32" | "U32" | "F32" => 32,
        "I64" | "U64" | "F64" | "C64" => 64,
        _ => return None,
    })
}

/// The tensors a safetensors file's header declares, given its first bytes (at least the
/// header) and the file's length, with the problems of where their bytes lie.
pub fn parse_header(
    head: &[u8],
    file_len: u64,
    shown: &str,
) -> Result<(Vec<Stored>, Vec<Problem>), Error> {
    let err = |m: String| Error::file(shown, m);
    if file_len < 8 || head.len() < 8 {
        return Err(err(format!(
            "is {file_len} bytes; a safetensors file starts with an 8-byte header length"
        )));
    }
    let n = u64::from_le_bytes(head[..8].try_into().expect("8 bytes"));
    if n > MAX_HEADER || n > file_len - 8 {
        return Err(err(format!(
            "declares a header of {n} bytes, but the file has {} after the length (and headers are at most {MAX_HEADER}); it is not a safetensors file or is cut short",
            file_len - 8
        )));
    }
    let json = head
        .get(8..8 + n as usize)
        .ok_or_else(|| err("is cut short inside its header".into()))?;
    let entries: Entries = serde_json::from_slice(json).map_err(|e| {
        err(format!(
            "has a header that is not a JSON object of tensors: {e} (at byte {})",
            8 + e.column()
        ))
    })?;
    let data_len = file_len - 8 - n;
    let base = 8 + n;
    let mut seen = std::collections::HashSet::new();
    let mut tensors = Vec::new();
    let mut spans = Vec::new();
    let mut problems = Vec::new();
    for (name, v) in entries.0 {
        if !seen.insert(name.clone()) {
            return Err(err(format!(
                "declares tensor `{name}` twice in its header; names must be unique"
            )));
        }
        if name == "__metadata__" {
            if !v
                .as_object()
                .is_some_and(|m| m.values().all(|x| x.is_string()))
            {
                return Err(err(
                    "has `__metadata__` that is not an object of strings".into()
                ));
            }
            continue;
        }
        let field = |k: &str| {
            v.get(k)
                .ok_or_else(|| err(format!("tensor `{name}` has no `{k}` in the header")))
        };
        let dtype = field("dtype")?
            .as_str()
            .ok_or_else(|| {
                err(format!(
                    "tensor `{name}` has a `dtype` that is not a string"
                ))
            })?
            .to_string();
        let bits = bits(&dtype).ok_or_else(|| {
            err(format!(
                "tensor `{name}` has dtype `{}`, which safetensors does not define",
                anatomy_core::fmt::printable(&dtype)
            ))
        })?;
        let shape: Vec<u64> = field("shape")?
            .as_array()
            .and_then(|a| a.iter().map(|d| d.as_u64()).collect())
            .ok_or_else(|| {
                err(format!(
                    "tensor `{name}` has a `shape` that is not a list of sizes"
                ))
            })?;
        let offsets: Vec<u64> = field("data_offsets")?
            .as_array()
            .and_then(|a| a.iter().map(|d| d.as_u64()).collect())
            .filter(|o: &Vec<u64>| o.len() == 2)
            .ok_or_else(|| {
                err(format!(
                    "tensor `{name}` has `data_offsets` that are not [start, end]"
                ))
            })?;
        let (start, end) = (offsets[0], offsets[1]);
        let range = Some((base.saturating_add(start), base.saturating_add(end)));
        let need = shape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .and_then(|n| n.checked_mul(bits))
            .map(|b| b.div_ceil(8));
        if end < start {
            problems.push(Problem::new(
                &name,
                range,
                format!("ends (data offset {end}) before it starts ({start})"),
            ));
        } else if end > data_len {
            problems.push(Problem::new(
                &name,
                range,
                format!("ends past the end of the file: the data section has {data_len} bytes"),
            ));
        } else {
            match need {
                Some(need) if need == end - start => spans.push((start, end, name.clone())),
                Some(need) => problems.push(Problem::new(
                    &name,
                    range,
                    format!(
                        "holds {} bytes, but {dtype} of shape {shape:?} takes {need}",
                        end - start
                    ),
                )),
                None => problems.push(Problem::new(
                    &name,
                    range,
                    format!("has shape {shape:?}, whose size overflows"),
                )),
            }
        }
        tensors.push(Stored { name, shape, dtype });
    }
    // The data section is the tensors back to back: no overlaps, no gaps, nothing after.
    spans.sort();
    let mut at = 0;
    for (s, e, name) in &spans {
        if *s < at {
            problems.push(Problem::new(
                name,
                Some((base + s, base + e)),
                "overlaps the tensor before it".to_string(),
            ));
        } else if *s > at {
            problems.push(Problem::new(
                name,
                Some((base + at, base + s)),
                "is preceded by bytes that belong to no tensor".to_string(),
            ));
        }
        at = at.max(*e);
    }
    if spans.len() == tensors.len() && at < data_len {
        problems.push(Problem::new(
            "(end of file)",
            Some((base + at, file_len)),
            "bytes after the last tensor belong to no tensor",
        ));
    }
    for p in &mut problems {
        p.file = shown.to_string();
    }
    tensors.sort_by(|a, b| a.name.cmp(&b.name));
    Ok((tensors, problems))
}

/// The tensors of one safetensors file given whole, from its header (the fuzz target's entry).
pub fn parse(bytes: &[u8], shown: &str) -> Result<(Vec<Stored>, Vec<Problem>), Error> {
    parse_header(bytes, bytes.len() as u64, shown)
}

/// The tensors of one safetensors file, from its header (only the header is read).
pub fn header(path: &Path) -> Result<(Vec<Stored>, Vec<Problem>), Error> {
    let shown = path.display().to_string();
    let file = open_regular(path)?;
    let len = file
        .metadata()
        .map_err(|e| Error::file(&shown, format!("cannot read: {e}")))?
        .len();
    let mut head = Vec::new();
    let mut r = file.take(8);
    r.read_to_end(&mut head)
        .map_err(|e| Error::file(&shown, format!("cannot read: {e}")))?;
    if head.len() == 8 {
        let n = u64::from_le_bytes(head[..8].try_into().expect("8 bytes"));
        if n <= MAX_HEADER && n <= len - 8 {
            let mut file = r.into_inner();
            (&mut file)
                .take(n)
                .read_to_end(&mut head)
                .map_err(|e| Error::file(&shown, format!("cannot read: {e}")))?;
        }
    }
    parse_header(&head, len, &shown)
}

/// The shard files a `model.safetensors.index.json` names, each with the tensors it should hold;
/// a file name must stay in the index's folder.
pub fn shards(
    index: &serde_json::Value,
    shown: &str,
) -> Result<BTreeMap<String, Vec<String>>, Error> {
    let map = index
        .get("weight_map")
        .and_then(|m| m.as_object())
        .ok_or_else(|| {
            Error::new(
                shown,
                "weight_map",
                "is missing or not an object; it maps each tensor name to its shard file",
            )
        })?;
    let mut by_file: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (name, file) in map {
        let file = file.as_str().ok_or_else(|| {
            Error::new(shown, format!("weight_map.{name}"), "must be a file name")
        })?;
        if file.contains(['/', '\\']) || file == ".." || file == "." || file.is_empty() {
            return Err(Error::new(
                shown,
                format!("weight_map.{name}"),
                format!(
                    "`{}` is not a file name in this folder",
                    anatomy_core::fmt::printable(file)
                ),
            ));
        }
        by_file
            .entry(file.to_string())
            .or_default()
            .push(name.clone());
    }
    Ok(by_file)
}

/// One file's tensors and the problems of where their bytes lie.
pub type Header = (Vec<Stored>, Vec<Problem>);

/// Where a safetensors checkpoint's files are read from: a local folder, or a Hub repo read by
/// range requests (`anatomy-hub`). One `assemble` checks both the same way.
pub trait Files {
    /// How `name` is shown in messages.
    fn shown(&self, name: &str) -> String;
    fn exists(&self, name: &str) -> bool;
    /// A JSON file, bounded as `read_json` bounds a local one.
    fn json(&self, name: &str) -> Result<serde_json::Value, Error>;
    /// The `.safetensors` files at the top level, sorted.
    fn safetensors(&self) -> Result<Vec<String>, Error>;
    /// The headers of these files, in order (a remote reader fetches them in parallel).
    fn headers(&self, names: &[String]) -> Result<Vec<Header>, Error>;
}

struct Folder<'a>(&'a Path);

impl Files for Folder<'_> {
    fn shown(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }
    fn exists(&self, name: &str) -> bool {
        self.0.join(name).exists()
    }
    fn json(&self, name: &str) -> Result<serde_json::Value, Error> {
        read_json(&self.0.join(name))
    }
    fn safetensors(&self) -> Result<Vec<String>, Error> {
        let mut files: Vec<String> = std::fs::read_dir(self.0)
            .map_err(|e| Error::file(self.0.display().to_string(), format!("cannot list: {e}")))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "safetensors"))
            .filter_map(|p| p.file_name().and_then(|n| n.to_str()).map(String::from))
            .collect();
        files.sort();
        Ok(files)
    }
    fn headers(&self, names: &[String]) -> Result<Vec<Header>, Error> {
        names.iter().map(|n| header(&self.0.join(n))).collect()
    }
}

pub fn open(dir: &Path) -> Result<Checkpoint, Error> {
    let shown = dir.display().to_string();
    if !dir.is_dir() {
        return Err(Error::file(&shown, "is not a folder; give a folder holding config.json and .safetensors files, or a .gguf file"));
    }
    assemble(&Folder(dir), &shown)
}

/// A checkpoint from its config.json and its safetensors headers: one file, or the shards of
/// `model.safetensors.index.json`, which must agree with the index tensor by tensor.
pub fn assemble(files: &dyn Files, shown: &str) -> Result<Checkpoint, Error> {
    if !files.exists("config.json") {
        return Err(Error::file(
            files.shown("config.json"),
            "is missing; a safetensors checkpoint needs its config.json beside it",
        ));
    }
    let config = files.json("config.json")?;
    let index = "model.safetensors.index.json";
    let mut tensors = Vec::new();
    let mut problems = Vec::new();
    if files.exists(index) {
        let shown_index = files.shown(index);
        let by_file = shards(&files.json(index)?, &shown_index)?;
        let names: Vec<String> = by_file.keys().cloned().collect();
        for ((file, listed), (shard, shard_problems)) in by_file.iter().zip(files.headers(&names)?)
        {
            problems.extend(shard_problems);
            let have: std::collections::BTreeSet<&str> =
                shard.iter().map(|t| t.name.as_str()).collect();
            if let Some(n) = listed.iter().find(|n| !have.contains(n.as_str())) {
                return Err(Error::new(
                    &shown_index,
                    format!("weight_map.{n}"),
                    format!("names shard {file}, which does not hold that tensor: the index and the shards disagree"),
                ));
            }
            let listed: std::collections::BTreeSet<&str> =
                listed.iter().map(String::as_str).collect();
            if let Some(extra) = shard.iter().find(|t| !listed.contains(t.name.as_str())) {
                return Err(Error::file(
                    files.shown(file),
                    format!("holds {}, which the index does not list: the index and the shards disagree", extra.name),
                ));
            }
            tensors.extend(shard);
        }
    } else {
        let found = files.safetensors()?;
        match found.len() {
            0 => return Err(Error::file(shown, "holds no .safetensors file")),
            1 => {
                let (t, p) = files.headers(&found)?.remove(0);
                tensors = t;
                problems = p;
            }
            n => {
                return Err(Error::file(
                    shown,
                    format!("holds {n} .safetensors files but no model.safetensors.index.json saying which tensor is where"),
                ))
            }
        }
    }
    tensors.sort_by(|a, b| a.name.cmp(&b.name));
    if let Some(w) = tensors.windows(2).find(|w| w[0].name == w[1].name) {
        return Err(Error::file(
            shown,
            format!("tensor {} is stored twice", w[0].name),
        ));
    }
    Ok(Checkpoint {
        format: Format::Safetensors,
        path: shown.to_string(),
        tensors,
        config,
        config_file: files.shown("config.json"),
        field_names: Vec::new(),
        problems,
        gguf: None,
        read_as_config: Vec::new(),
    })
}
