//! MODEL arguments: a catalog name, a path to a config.json, or a folder holding one.

use crate::catalog;
use crate::error::{Error, Result};
use crate::families;
use crate::spec::Spec;
use std::path::Path;

/// Where a Spec came from, for headers and provenance lines.
#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    Catalog {
        name: &'static str,
        repo: &'static str,
        snapshot: &'static str,
        /// The entry's provenance line (`catalog::Entry::provenance`).
        provenance: String,
    },
    File(String),
    /// A Hugging Face Hub repo: the revision asked for, the commit it resolved to, and the
    /// files anatomy read from it.
    Hub {
        repo: String,
        revision: String,
        commit: String,
        files: Vec<String>,
    },
}

impl Origin {
    /// The Hub page the config came from: a catalog entry's repo, a Hub id at its commit.
    pub fn source_url(&self) -> Option<String> {
        match self {
            Origin::Catalog { repo, .. } => Some(format!("https://huggingface.co/{repo}")),
            Origin::Hub { repo, commit, .. } => {
                Some(format!("https://huggingface.co/{repo}/tree/{commit}"))
            }
            Origin::File(_) => None,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Origin::Catalog { provenance, .. } => format!("catalog: {provenance}"),
            Origin::File(p) => format!("file: {}", crate::fmt::printable(p)),
            Origin::Hub {
                repo,
                revision,
                commit,
                files,
            } => crate::fmt::printable(&format!(
                "hub: {repo} at {revision} (commit {commit}), read {}",
                files.join(", ")
            )),
        }
    }

    /// The same as data, for `--json` outputs.
    pub fn json(&self) -> serde_json::Value {
        match self {
            Origin::Catalog {
                name,
                repo,
                snapshot,
                provenance,
            } => serde_json::json!({
                "kind": "catalog", "name": name, "repo": repo, "snapshot": snapshot,
                "provenance": provenance,
            }),
            Origin::File(p) => serde_json::json!({ "kind": "file", "path": p }),
            Origin::Hub {
                repo,
                revision,
                commit,
                files,
            } => serde_json::json!({
                "kind": "hub", "repo": repo, "revision": revision, "commit": commit, "files": files,
            }),
        }
    }
}

pub struct Loaded {
    pub spec: Spec,
    pub origin: Origin,
}

/// Load MODEL; `lenient` turns config keys anatomy does not understand from errors into notes.
pub fn load(arg: &str, lenient: bool) -> Result<Loaded> {
    let path = Path::new(arg);
    if path.exists() {
        let file = if path.is_dir() {
            path.join("config.json")
        } else {
            path.to_path_buf()
        };
        let shown = file.display().to_string();
        if path.is_dir() && !file.exists() {
            return Err(Error::file(&shown, "is missing: give a config.json, a folder holding one, or a catalog name (see `anatomy list`)"));
        }
        let text = read_bounded(&file, &shown)?;
        let name = clean(model_name(&file));
        let spec = families::load_json(&shown, &text, &name, lenient)?;
        return Ok(Loaded {
            spec,
            origin: Origin::File(shown),
        });
    }
    if let Some(entry) = catalog::get(arg) {
        let file = format!("catalog:{}", entry.name);
        let spec = families::load_json(&file, entry.json, entry.name, lenient)?;
        return Ok(Loaded {
            spec,
            origin: Origin::Catalog {
                name: entry.name,
                repo: entry.repo,
                snapshot: entry.snapshot,
                provenance: entry.provenance(),
            },
        });
    }
    let looks_like_path = arg.contains('/') || arg.ends_with(".json");
    let mut msg = if looks_like_path {
        "no such file or folder".to_string()
    } else {
        "not a catalog name, and no file or folder of that name exists".to_string()
    };
    if let Some(s) = catalog::suggest(arg) {
        msg += &format!("; did you mean `{s}`?");
    } else {
        msg += "; run `anatomy list` for the catalog";
    }
    Err(Error::file(arg, msg))
}

/// The Spec of a config.json named `name`, its errors naming the file as `shown` (a Hub file
/// is shown by its repo path, not its place in the cache).
pub fn load_file(file: &Path, shown: &str, name: &str, lenient: bool) -> Result<Spec> {
    let text = read_bounded(file, shown)?;
    families::load_json(shown, &text, &clean(name.to_string()), lenient)
}

/// A config.json is small; refuse to read anything that could not be one.
const MAX_CONFIG_BYTES: u64 = 16 << 20;

fn read_bounded(file: &Path, shown: &str) -> Result<String> {
    use std::io::Read;
    let meta =
        std::fs::metadata(file).map_err(|e| Error::file(shown, format!("cannot read: {e}")))?;
    // A pipe would block and a device could be endless: a config is a regular file.
    if !meta.is_file() {
        return Err(Error::file(
            shown,
            "is not a regular file (a pipe, socket or device); give a config.json",
        ));
    }
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(Error::file(
            shown,
            format!(
                "is {} bytes; a config.json is at most {} bytes",
                meta.len(),
                MAX_CONFIG_BYTES
            ),
        ));
    }
    let mut text = String::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(MAX_CONFIG_BYTES).read_to_string(&mut text))
        .map_err(|e| Error::file(shown, format!("cannot read as UTF-8 text: {e}")))?;
    Ok(text)
}

/// A display name for a local file: its folder's name, or the file stem when that says more.
fn model_name(file: &Path) -> String {
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("model");
    if stem == "config" {
        if let Some(dir) = file
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|s| s.to_str())
        {
            return dir.to_string();
        }
    }
    stem.trim_end_matches(".config").to_string()
}

/// A name taken from a file or folder, with control characters escaped: it reaches terminals.
fn clean(name: String) -> String {
    crate::fmt::printable(&name)
}
