//! anatomy-checkpoint: what a checkpoint on disk holds, read from its headers only, and how it
//! compares with the Graph. Each format has one checked reader that bounds every offset, length
//! and count by the file before trusting it, and locates every tensor's bytes; only then does a
//! checkpoint reach candle's readers (`anatomy-exec`).

pub mod dequant;
pub mod gguf;
mod gguf_arch;
pub mod gguf_header;
pub mod layout;
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
    /// Storage type as the format names it (`BF16`, `F8_E4M3`, `Q4_1`).
    pub dtype: String,
}

/// Something wrong with where a tensor's bytes are: outside the file, overlapping another,
/// misaligned, or not the size its type and shape need. Headers with such problems still show
/// the model; `verify` reports each and `run` refuses them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub tensor: String,
    /// The file it is in.
    pub file: String,
    /// Its bytes in the file, where they could be computed.
    pub range: Option<(u64, u64)>,
    pub what: String,
}

impl Problem {
    pub fn new(tensor: &str, range: Option<(u64, u64)>, what: impl Into<String>) -> Problem {
        Problem {
            tensor: tensor.to_string(),
            file: String::new(),
            range,
            what: what.into(),
        }
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some((a, b)) = self.range {
            write!(f, " bytes {a}..{b}")?;
        }
        write!(f, ": {} {}", self.tensor, self.what)
    }
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
    /// For a config made from GGUF metadata: the metadata key each field came from, so errors
    /// name the key the file has.
    pub field_names: Vec<(String, String)>,
    /// Where tensor data is not what the header says.
    pub problems: Vec<Problem>,
    /// A GGUF file's checked header, from which its tensors are read.
    pub gguf: Option<gguf_header::Header>,
    /// Tensors the config was read from rather than model weights (a GGUF's `rope_freqs.weight`
    /// for Gemma 4's proportional RoPE).
    pub read_as_config: Vec<String>,
}

impl Checkpoint {
    /// An error unless every tensor's bytes are where and what the header says.
    pub fn data_is_sound(&self) -> Result<(), Error> {
        match self.problems.first() {
            None => Ok(()),
            Some(p) => Err(Error::file(
                &p.file,
                format!(
                    "{} {}{}; `anatomy verify` lists every problem",
                    p.tensor,
                    p.what,
                    match self.problems.len() {
                        1 => String::new(),
                        n => format!(" (and {} more problems)", n - 1),
                    }
                ),
            )),
        }
    }
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

/// Open `path` for reading only if it is a regular file: a FIFO would block, a device could
/// be endless, and a folder is not a file.
pub fn open_regular(path: &Path) -> Result<std::fs::File, Error> {
    let shown = path.display().to_string();
    let meta =
        std::fs::metadata(path).map_err(|e| Error::file(&shown, format!("cannot read: {e}")))?;
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a folder"
        } else {
            "not a regular file (a pipe, socket or device)"
        };
        return Err(Error::file(
            &shown,
            format!("is {what}; anatomy reads regular files"),
        ));
    }
    std::fs::File::open(path).map_err(|e| Error::file(&shown, format!("cannot open: {e}")))
}

/// Each tensor with the bytes it is stored in, for the planner: a GGUF tensor's by its type,
/// or, for a type anatomy does not size, the span to the next tensor's bytes (alignment
/// padding included); a safetensors tensor's by its dtype.
pub fn stored_bytes(c: &Checkpoint) -> Vec<anatomy_core::plan::StoredTensor> {
    let values = |shape: &[u64]| shape.iter().product::<u64>();
    match &c.gguf {
        Some(h) => {
            let mut starts: Vec<u64> = h.tensors.iter().map(|t| t.offset).collect();
            starts.sort_unstable();
            let data_end = h.file_len.saturating_sub(h.data_start);
            h.tensors
                .iter()
                .map(|t| {
                    let next = starts
                        .iter()
                        .find(|&&o| o > t.offset)
                        .copied()
                        .unwrap_or(data_end);
                    anatomy_core::plan::StoredTensor {
                        name: t.name.clone(),
                        format: gguf_header::type_name(t.type_id),
                        rows: t.shape.first().copied().unwrap_or(1),
                        values: values(&t.shape),
                        bytes: t.bytes.unwrap_or(next.saturating_sub(t.offset)),
                    }
                })
                .collect()
        }
        None => c
            .tensors
            .iter()
            .map(|t| {
                let n = values(&t.shape);
                anatomy_core::plan::StoredTensor {
                    name: t.name.clone(),
                    format: t.dtype.clone(),
                    rows: t.shape.first().copied().unwrap_or(1),
                    values: n,
                    bytes: (n as u128 * safetensors::bits(&t.dtype).unwrap_or(0) as u128 / 8)
                        as u64,
                }
            })
            .collect(),
    }
}

/// The Spec of a checkpoint, from its config; `lenient` as for a config.json. An error about a
/// GGUF value names its metadata key.
pub fn spec(c: &Checkpoint, lenient: bool) -> Result<anatomy_core::spec::Spec, Error> {
    let name = anatomy_core::fmt::printable(
        Path::new(&c.path)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("model"),
    );
    let mut spec = anatomy_core::families::load(&c.config_file, &c.config, &name, lenient)
        .map_err(|mut e| {
            if let Some((_, key)) = c.field_names.iter().find(|(f, _)| *f == e.field) {
                e.field = key.clone();
            }
            e
        })?;
    // A safetensors checkpoint is read in the layout its header shows.
    if c.format == Format::Safetensors {
        layout::fit(&mut spec, &c.tensors);
    }
    Ok(spec)
}

/// How two checkpoints' tensors differ, by their headers: names in one only, and the same name
/// stored with another dtype or shape.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Compared {
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
    /// (tensor, dtype in A, dtype in B)
    pub dtype: Vec<(String, String, String)>,
    /// (tensor, shape in A, shape in B)
    pub shape: Vec<(String, Vec<u64>, Vec<u64>)>,
    /// Tensors stored the same in both.
    pub same: usize,
}

impl Compared {
    pub fn is_empty(&self) -> bool {
        self.only_a.is_empty()
            && self.only_b.is_empty()
            && self.dtype.is_empty()
            && self.shape.is_empty()
    }
}

pub fn compare(a: &Checkpoint, b: &Checkpoint) -> Compared {
    let by_name = |c: &Checkpoint| -> std::collections::BTreeMap<String, Stored> {
        c.tensors
            .iter()
            .map(|t| (t.name.clone(), t.clone()))
            .collect()
    };
    let (ta, tb) = (by_name(a), by_name(b));
    let mut out = Compared::default();
    for (name, x) in &ta {
        match tb.get(name) {
            None => out.only_a.push(name.clone()),
            Some(y) => {
                if x.dtype != y.dtype {
                    out.dtype
                        .push((name.clone(), x.dtype.clone(), y.dtype.clone()));
                }
                if x.shape != y.shape {
                    out.shape
                        .push((name.clone(), x.shape.clone(), y.shape.clone()));
                }
                if x.dtype == y.dtype && x.shape == y.shape {
                    out.same += 1;
                }
            }
        }
    }
    out.only_b = tb
        .keys()
        .filter(|n| !ta.contains_key(*n))
        .cloned()
        .collect();
    out
}

impl Compared {
    /// The difference in one line, then each differing tensor.
    pub fn text(&self, a: &str, b: &str) -> String {
        use anatomy_core::fmt::count;
        if self.is_empty() {
            return format!(
                "checkpoints: all {} stored alike (names, dtypes, shapes)\n",
                count(self.same as u128, "tensor")
            );
        }
        let mut parts = Vec::new();
        if !self.only_a.is_empty() {
            parts.push(format!(
                "{} only in {a}",
                count(self.only_a.len() as u128, "tensor")
            ));
        }
        if !self.only_b.is_empty() {
            parts.push(format!(
                "{} only in {b}",
                count(self.only_b.len() as u128, "tensor")
            ));
        }
        if !self.dtype.is_empty() {
            let mut kinds: Vec<String> = self
                .dtype
                .iter()
                .map(|(_, x, y)| format!("{x} → {y}"))
                .collect();
            kinds.sort();
            kinds.dedup();
            parts.push(format!(
                "{} stored in another dtype ({})",
                count(self.dtype.len() as u128, "tensor"),
                kinds.join(", ")
            ));
        }
        if !self.shape.is_empty() {
            parts.push(format!(
                "{} of another shape",
                count(self.shape.len() as u128, "tensor")
            ));
        }
        let mut out = format!(
            "checkpoints differ: {}; {} alike\n",
            parts.join(", "),
            count(self.same as u128, "tensor")
        );
        for n in &self.only_a {
            out += &format!("  - {n}  (only in {a})\n");
        }
        for n in &self.only_b {
            out += &format!("  + {n}  (only in {b})\n");
        }
        for (n, x, y) in &self.dtype {
            out += &format!("  # {n}  {x} → {y}\n");
        }
        for (n, x, y) in &self.shape {
            out += &format!("  # {n}  {x:?} → {y:?}\n");
        }
        out
    }
}
