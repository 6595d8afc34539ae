//! anatomy-checkpoint: what a checkpoint on disk holds, read from its headers only (memory-mapped
//! safetensors, GGUF metadata and tensor infos), and how it compares with the Graph.

pub mod gguf;
pub mod safetensors;
pub mod verify;

use anatomy_core::Error;
use std::path::Path;

/// One tensor as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    pub name: String,
    /// Row-major (PyTorch order) for both formats.
    pub shape: Vec<u64>,
    /// Storage type as the format names it (`BF16`, `F8_E4M3`, `q4_1`).
    pub dtype: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Safetensors,
    Gguf,
}

/// A checkpoint's tensors and the config they come with.
pub struct Checkpoint {
    pub format: Format,
    /// Shown in messages: the folder or file.
    pub path: String,
    pub tensors: Vec<Stored>,
    /// The model's config as a Hugging Face config.json would have it (for GGUF, made from its metadata).
    pub config: serde_json::Value,
    /// The name of the config's file, for errors.
    pub config_file: String,
}

/// Does `path` look like a checkpoint (a .gguf file, or a folder with safetensors)?
pub fn is_checkpoint(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "gguf")
        || (path.is_dir()
            && std::fs::read_dir(path).is_ok_and(|mut d| {
                d.any(|e| e.is_ok_and(|e| e.path().extension().is_some_and(|x| x == "safetensors")))
            }))
}

pub fn open(path: &Path) -> Result<Checkpoint, Error> {
    if path.extension().is_some_and(|e| e == "gguf") {
        gguf::open(path)
    } else {
        safetensors::open(path)
    }
}

/// The Spec of a checkpoint, from its config; `lenient` as for a config.json.
pub fn spec(c: &Checkpoint, lenient: bool) -> Result<anatomy_core::spec::Spec, Error> {
    let name = Path::new(&c.path)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("model")
        .to_string();
    anatomy_core::families::load(&c.config_file, &c.config, &name, lenient)
}
