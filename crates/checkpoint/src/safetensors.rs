//! Safetensors checkpoints: a folder with config.json and one `.safetensors` file, or shards
//! listed in `model.safetensors.index.json`. Only headers are read, through a memory map, so a
//! checkpoint of any size opens in milliseconds.

use crate::{Checkpoint, Format, Stored};
use anatomy_core::Error;
use std::collections::BTreeMap;
use std::path::Path;

/// The largest config.json or index file anatomy reads.
const MAX_JSON_BYTES: u64 = 64 << 20;

fn read_json(path: &Path) -> Result<serde_json::Value, Error> {
    let shown = path.display().to_string();
    let meta =
        std::fs::metadata(path).map_err(|e| Error::file(&shown, format!("cannot read: {e}")))?;
    if meta.len() > MAX_JSON_BYTES {
        return Err(Error::file(
            &shown,
            format!(
                "is {} bytes; anatomy reads JSON files of at most {MAX_JSON_BYTES}",
                meta.len()
            ),
        ));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::file(&shown, format!("cannot read: {e}")))?;
    serde_json::from_str(&text).map_err(|e| {
        Error::file(
            &shown,
            format!("invalid JSON at line {}, column {}", e.line(), e.column()),
        )
    })
}

/// The tensors of one safetensors file, from its header.
pub fn header(path: &Path) -> Result<Vec<Stored>, Error> {
    let shown = path.display().to_string();
    let file =
        std::fs::File::open(path).map_err(|e| Error::file(&shown, format!("cannot open: {e}")))?;
    // SAFETY: the map is read-only and only the header is read; a file truncated while mapped
    // could fault, which is the usual caveat of memory-mapped reading.
    let map = unsafe { memmap2::Mmap::map(&file) }
        .map_err(|e| Error::file(&shown, format!("cannot map: {e}")))?;
    parse(&map, &shown)
}

/// The tensors a safetensors file's bytes declare (only the header is looked at).
pub fn parse(bytes: &[u8], shown: &str) -> Result<Vec<Stored>, Error> {
    let (_, meta) = safetensors::SafeTensors::read_metadata(bytes)
        .map_err(|e| Error::file(shown, format!("not a valid safetensors file: {e}")))?;
    let mut out: Vec<Stored> = meta
        .tensors()
        .into_iter()
        .map(|(name, info)| Stored {
            name,
            shape: info.shape.iter().map(|&d| d as u64).collect(),
            dtype: format!("{:?}", info.dtype),
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

pub fn open(dir: &Path) -> Result<Checkpoint, Error> {
    let shown = dir.display().to_string();
    if !dir.is_dir() {
        return Err(Error::file(&shown, "is not a folder; give a folder holding config.json and .safetensors files, or a .gguf file"));
    }
    let config_path = dir.join("config.json");
    if !config_path.is_file() {
        return Err(Error::file(
            config_path.display().to_string(),
            "is missing; a safetensors checkpoint needs its config.json beside it",
        ));
    }
    let config = read_json(&config_path)?;
    let index_path = dir.join("model.safetensors.index.json");
    let mut tensors = Vec::new();
    if index_path.is_file() {
        let index = read_json(&index_path)?;
        let shown_index = index_path.display().to_string();
        let map = index
            .get("weight_map")
            .and_then(|m| m.as_object())
            .ok_or_else(|| {
                Error::new(
                    &shown_index,
                    "weight_map",
                    "is missing or not an object; it maps each tensor name to its shard file",
                )
            })?;
        let mut by_file: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (name, file) in map {
            let file = file.as_str().ok_or_else(|| {
                Error::new(
                    &shown_index,
                    format!("weight_map.{name}"),
                    "must be a file name",
                )
            })?;
            if file.contains('/') || file.contains("..") {
                return Err(Error::new(
                    &shown_index,
                    format!("weight_map.{name}"),
                    format!("`{file}` is not a file name in this folder"),
                ));
            }
            by_file
                .entry(file.to_string())
                .or_default()
                .push(name.clone());
        }
        for (file, names) in by_file {
            let shard = header(&dir.join(&file))?;
            let have: std::collections::BTreeSet<&str> =
                shard.iter().map(|t| t.name.as_str()).collect();
            if let Some(n) = names.iter().find(|n| !have.contains(n.as_str())) {
                return Err(Error::new(
                    &shown_index,
                    format!("weight_map.{n}"),
                    format!("names shard {file}, which does not hold that tensor: the index and the shards disagree"),
                ));
            }
            let listed: std::collections::BTreeSet<&str> =
                names.iter().map(String::as_str).collect();
            if let Some(extra) = shard.iter().find(|t| !listed.contains(t.name.as_str())) {
                return Err(Error::file(
                    dir.join(&file).display().to_string(),
                    format!("holds {}, which the index does not list: the index and the shards disagree", extra.name),
                ));
            }
            tensors.extend(shard);
        }
    } else {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .map_err(|e| Error::file(&shown, format!("cannot list: {e}")))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "safetensors"))
            .collect();
        files.sort();
        match files.len() {
            0 => return Err(Error::file(&shown, "holds no .safetensors file")),
            1 => tensors = header(&files[0])?,
            n => {
                return Err(Error::file(
                    &shown,
                    format!("holds {n} .safetensors files but no model.safetensors.index.json saying which tensor is where"),
                ))
            }
        }
    }
    tensors.sort_by(|a, b| a.name.cmp(&b.name));
    if let Some(w) = tensors.windows(2).find(|w| w[0].name == w[1].name) {
        return Err(Error::file(
            &shown,
            format!("tensor {} is stored twice", w[0].name),
        ));
    }
    Ok(Checkpoint {
        format: Format::Safetensors,
        path: shown,
        tensors,
        config,
        config_file: config_path.display().to_string(),
    })
}
