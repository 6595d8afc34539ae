//! anatomy-hub: MODEL and CHECKPOINT arguments that name a Hugging Face Hub repo.
//!
//! The client is `hf-hub`, so the conventions are the Hub's own: `HF_ENDPOINT`, `HF_TOKEN` (or
//! the token file `huggingface-cli login` writes), `HF_HOME` / `HF_HUB_CACHE` with Python's cache
//! layout (a file either one downloaded is the other's), and `HF_HUB_OFFLINE=1`, which this crate
//! adds: only the cache is read. Small files (config.json, the shard index, the tokenizer) are
//! downloaded into the cache; checkpoint headers are read with range requests, so a 700 GB
//! checkpoint is verified from a few hundred kilobytes; `download` fetches weights for `run`,
//! resuming a partial file.

mod http;
pub mod id;
mod remote;

pub use id::{parse, Id};

use anatomy_core::source::Origin;
use anatomy_core::Error;
use hf_hub::{HFClientBuilder, HFClientSync, HFError, HFRepositorySync, RepoTypeModel};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// The Hub client and the environment it was made from.
pub struct Hub {
    client: HFClientSync,
    http: http::Http,
    endpoint: String,
    cache: PathBuf,
    offline: bool,
    has_token: bool,
}

impl Hub {
    pub fn from_env() -> Result<Hub, Error> {
        let endpoint = std::env::var("HF_ENDPOINT")
            .ok()
            .filter(|e| !e.is_empty())
            .unwrap_or_else(|| "https://huggingface.co".into());
        let offline = std::env::var("HF_HUB_OFFLINE")
            .is_ok_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"));
        let token = http::token();
        let bad = |e: String| {
            Error::new(
                &endpoint,
                "HF_ENDPOINT",
                format!("{e}; give a URL such as https://huggingface.co"),
            )
        };
        let mut builder = HFClientBuilder::new()
            .endpoint(endpoint.clone())
            // A network failure is reported in a second, not after a minute of retries.
            .retry_max_attempts(2);
        if let Some(t) = &token {
            builder = builder.token(t.clone());
        }
        let client = builder.build_sync().map_err(|e| bad(e.to_string()))?;
        let http = http::Http::new(&endpoint, token.clone()).map_err(|e| bad(format!("{e:?}")))?;
        let has_token = token.is_some();
        Ok(Hub {
            client,
            http,
            endpoint,
            cache: hf_hub::resolve_cache_dir(),
            offline,
            has_token,
        })
    }

    /// The repo at the revision asked for: its commit and its files.
    pub fn snapshot(&self, id: &Id) -> Result<Snapshot<'_>, Error> {
        let repo = self.repo(id);
        let (commit, mut files) = if self.offline {
            self.cached(id)?
        } else {
            let info = repo
                .info()
                .maybe_revision(id.revision.clone())
                .send()
                .map_err(|e| self.error(id, None, e.into()))?;
            let commit = info.sha.ok_or_else(|| {
                Error::file(
                    &id.repo,
                    format!(
                        "{} answered without the revision's commit hash",
                        self.endpoint
                    ),
                )
            })?;
            let files = info
                .siblings
                .unwrap_or_default()
                .into_iter()
                .map(|s| s.rfilename)
                .collect();
            (commit, files)
        };
        files.sort();
        Ok(Snapshot {
            hub: self,
            repo,
            id: id.clone(),
            commit,
            files,
            read: Mutex::new(Vec::new()),
            sizes: Mutex::new(Vec::new()),
            transferred: AtomicU64::new(0),
        })
    }

    fn repo(&self, id: &Id) -> HFRepositorySync<RepoTypeModel> {
        let (owner, name) = id.repo.split_once('/').expect("an id has owner/name");
        self.client.model(owner, name)
    }

    fn folder(&self, id: &Id) -> PathBuf {
        self.cache
            .join(format!("models--{}", id.repo.replace('/', "--")))
    }

    /// Offline: the commit a cached ref points at (or the commit given), and the files of its
    /// snapshot folder.
    fn cached(&self, id: &Id) -> Result<(String, Vec<String>), Error> {
        let folder = self.folder(id);
        let rev = id.revision();
        let is_commit = rev.len() == 40 && rev.chars().all(|c| c.is_ascii_hexdigit());
        let commit = if is_commit {
            rev.to_string()
        } else {
            std::fs::read_to_string(folder.join("refs").join(rev))
                .map(|s| s.trim().to_string())
                .map_err(|_| {
                    Error::file(
                        &id.repo,
                        format!(
                            "HF_HUB_OFFLINE is set and the cache ({}) holds no revision {rev} of it; run once online, or unset HF_HUB_OFFLINE",
                            self.cache.display()
                        ),
                    )
                })?
        };
        let snap = folder.join("snapshots").join(&commit);
        let mut files = Vec::new();
        list(&snap, &snap, &mut files);
        if files.is_empty() {
            return Err(Error::file(
                &id.repo,
                format!("HF_HUB_OFFLINE is set and the cache has no files of commit {commit}; run once online, or unset HF_HUB_OFFLINE"),
            ));
        }
        Ok((commit, files))
    }

    /// A failure as an error a user can act on.
    fn error(&self, id: &Id, file: Option<&str>, why: Why) -> Error {
        let shown = match file {
            Some(f) => format!("{}/{f}", id.repo),
            None => id.repo.clone(),
        };
        let token = if self.has_token {
            "the token anatomy found (HF_TOKEN, HF_TOKEN_PATH or the file `huggingface-cli login` writes) has no access to it; request access on its Hub page, or use a token that has it"
        } else {
            "it is gated or private: accept its terms on its Hub page, then set HF_TOKEN or run `huggingface-cli login`"
        };
        let message = match why {
            Why::Denied(status) => {
                format!("{} refused access (HTTP {status}): {token}", self.endpoint)
            }
            Why::NoRepo => format!(
                "no such model repo on {} (a private repo also looks missing without a token; check the name, or set HF_TOKEN)",
                self.endpoint
            ),
            Why::NoRevision => format!(
                "has no revision `{}` on {}; give a branch, tag or commit it has",
                id.revision(),
                self.endpoint
            ),
            Why::NoFile => format!(
                "is not in the repo at {} on {}",
                id.revision(),
                self.endpoint
            ),
            Why::NotCached => format!(
                "HF_HUB_OFFLINE is set and the cache ({}) does not hold this file; run once online, or unset HF_HUB_OFFLINE",
                self.cache.display()
            ),
            Why::Network(e) => format!(
                "cannot reach {} ({e}); check the network and HF_ENDPOINT, or set HF_HUB_OFFLINE=1 to use what the cache holds",
                self.endpoint
            ),
            Why::RateLimited => format!(
                "{} is rate-limiting requests; wait and try again, or set HF_TOKEN for a higher limit",
                self.endpoint
            ),
            Why::Io(e) => format!("cannot write the cache at {}: {e}", self.cache.display()),
            Why::Other(e) => format!("{} answered wrongly: {e}", self.endpoint),
        };
        Error::file(anatomy_core::fmt::printable(&shown), message)
    }
}

/// Why a Hub request failed, whichever client made it.
#[derive(Debug)]
pub(crate) enum Why {
    Denied(u16),
    NoRepo,
    NoRevision,
    NoFile,
    NotCached,
    Network(String),
    RateLimited,
    Io(String),
    Other(String),
}

impl From<HFError> for Why {
    fn from(e: HFError) -> Why {
        match &e {
            HFError::AuthRequired { context } | HFError::Forbidden { context } => {
                Why::Denied(context.status.as_u16())
            }
            HFError::RepoNotFound { .. } => Why::NoRepo,
            HFError::RevisionNotFound { .. } => Why::NoRevision,
            HFError::EntryNotFound { .. } => Why::NoFile,
            HFError::LocalEntryNotFound { .. } => Why::NotCached,
            HFError::Request { .. } => Why::Network(e.to_string()),
            HFError::RateLimited { .. } => Why::RateLimited,
            HFError::Io(io) => Why::Io(io.to_string()),
            _ => Why::Other(e.to_string()),
        }
    }
}

/// Every file under `dir`, as paths relative to `root` with `/`.
fn list(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            list(root, &p, out);
        } else if let Ok(rel) = p.strip_prefix(root) {
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// What a repo holds for anatomy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// config.json with safetensors weights (or none: a config is enough to draw the model).
    Safetensors,
    /// One GGUF file, which is its own config.
    Gguf(String),
}

/// One repo at one commit.
pub struct Snapshot<'h> {
    hub: &'h Hub,
    repo: HFRepositorySync<RepoTypeModel>,
    pub id: Id,
    pub commit: String,
    /// Every file of the repo at that commit, sorted.
    pub files: Vec<String>,
    read: Mutex<Vec<String>>,
    /// Sizes of the files whose size was asked, for "read X of Y bytes".
    sizes: Mutex<Vec<(String, u64)>>,
    transferred: AtomicU64,
}

impl Snapshot<'_> {
    pub fn has(&self, file: &str) -> bool {
        self.files.iter().any(|f| f == file)
    }

    /// How `file` is shown in messages.
    pub fn shown(&self, file: &str) -> String {
        anatomy_core::fmt::printable(&format!("{}/{file}", self.id.repo))
    }

    /// Which files make the model: the GGUF file named in the id, else config.json, else the
    /// repo's only GGUF file.
    pub fn kind(&self) -> Result<Kind, Error> {
        if let Some(f) = &self.id.file {
            if !f.ends_with(".gguf") {
                return Err(Error::file(
                    self.shown(f),
                    "is not a .gguf file; name a GGUF file in the repo, or give the repo alone for its config.json",
                ));
            }
            if !self.has(f) {
                return Err(Error::file(
                    self.shown(f),
                    format!(
                        "is not in the repo at {}{}",
                        self.id.revision(),
                        self.gguf_hint()
                    ),
                ));
            }
            return Ok(Kind::Gguf(f.clone()));
        }
        if self.has("config.json") {
            return Ok(Kind::Safetensors);
        }
        let gguf: Vec<&String> = self.files.iter().filter(|f| f.ends_with(".gguf")).collect();
        match gguf.as_slice() {
            [one] => Ok(Kind::Gguf((*one).clone())),
            [] => Err(Error::file(
                &self.id.repo,
                "holds neither a config.json nor a .gguf file; anatomy reads a transformers model repo or a GGUF file",
            )),
            _ => Err(Error::file(
                &self.id.repo,
                format!("holds no config.json and {} GGUF files; name one as {}/FILE.gguf{}", gguf.len(), self.id.repo, self.gguf_hint()),
            )),
        }
    }

    fn gguf_hint(&self) -> String {
        let gguf: Vec<&str> = self
            .files
            .iter()
            .filter(|f| f.ends_with(".gguf"))
            .map(String::as_str)
            .collect();
        if gguf.is_empty() {
            String::new()
        } else {
            format!(" (GGUF files there: {})", gguf.join(", "))
        }
    }

    fn note_read(&self, file: &str) {
        let mut read = self.read.lock().expect("lock");
        if !read.iter().any(|f| f == file) {
            read.push(file.to_string());
        }
    }

    /// The cached copy of `file`, if the cache holds this commit's.
    fn cached(&self, file: &str) -> Option<PathBuf> {
        let p = self
            .hub
            .folder(&self.id)
            .join("snapshots")
            .join(&self.commit)
            .join(file);
        p.is_file().then_some(p)
    }

    /// `file` in the local cache, downloaded first if need be.
    pub fn fetch(&self, file: &str) -> Result<PathBuf, Error> {
        self.note_read(file);
        if let Some(p) = self.cached(file) {
            return Ok(p);
        }
        let p = self
            .repo
            .download_file()
            .filename(file)
            // The revision as asked (as Python's hf_hub_download asks): hf-hub then keeps
            // refs/REVISION pointing at the commit, where offline runs look.
            .revision(self.id.revision().to_string())
            .local_files_only(self.hub.offline)
            .send()
            .map_err(|e| self.hub.error(&self.id, Some(file), e.into()))?;
        let len = std::fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
        self.transferred.fetch_add(len, Ordering::Relaxed);
        Ok(p)
    }

    /// Bytes `range` of `file`: from the cache when it holds the file, else a range request.
    pub(crate) fn range(&self, file: &str, range: std::ops::Range<u64>) -> Result<Vec<u8>, Error> {
        self.note_read(file);
        if let Some(p) = self.cached(file) {
            return remote::read_local(&p, range);
        }
        if self.hub.offline {
            return Err(self.hub.error(&self.id, Some(file), Why::NotCached));
        }
        let bytes = self
            .hub
            .http
            .range(&self.id.repo, self.id.revision(), file, range)
            .map_err(|e| self.hub.error(&self.id, Some(file), e))?;
        self.transferred
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        Ok(bytes)
    }

    /// The size of `file` in bytes.
    pub(crate) fn size(&self, file: &str) -> Result<u64, Error> {
        let n = self.size_of(file)?;
        self.sizes.lock().expect("lock").push((file.to_string(), n));
        Ok(n)
    }

    /// The total size of the files whose headers were read: what a download would have cost.
    pub fn size_of_files_read(&self) -> u64 {
        self.sizes
            .lock()
            .expect("lock")
            .iter()
            .map(|(_, n)| n)
            .sum()
    }

    fn size_of(&self, file: &str) -> Result<u64, Error> {
        if let Some(p) = self.cached(file) {
            return std::fs::metadata(&p).map(|m| m.len()).map_err(|e| {
                Error::file(
                    self.shown(file),
                    format!("cannot read the cached copy: {e}"),
                )
            });
        }
        Ok(self.meta(file)?.size)
    }

    fn meta(&self, file: &str) -> Result<http::Meta, Error> {
        if self.hub.offline {
            return Err(self.hub.error(&self.id, Some(file), Why::NotCached));
        }
        self.hub
            .http
            .meta(&self.id.repo, self.id.revision(), file)
            .map_err(|e| self.hub.error(&self.id, Some(file), e))
    }

    /// Bytes received over the network so far.
    pub fn transferred(&self) -> u64 {
        self.transferred.load(Ordering::Relaxed)
    }

    /// Where this came from, with the files read so far.
    pub fn origin(&self) -> Origin {
        Origin::Hub {
            repo: self.id.repo.clone(),
            revision: self.id.revision().to_string(),
            commit: self.commit.clone(),
            files: self.read.lock().expect("lock").clone(),
        }
    }

    /// The model's config as a local file (config.json in the cache), for a safetensors repo.
    pub fn config(&self) -> Result<PathBuf, Error> {
        self.fetch("config.json")
    }

    /// The checkpoint's tensors from its headers alone, read by range requests.
    pub fn checkpoint(
        &self,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<anatomy_checkpoint::Checkpoint, Error> {
        match self.kind()? {
            Kind::Gguf(file) => remote::gguf(self, &file),
            Kind::Safetensors => remote::safetensors(self, progress),
        }
    }

    /// Everything `run` needs, in the cache: the GGUF file, or config.json with its weights and
    /// tokenizer files. Returns the path to run (the snapshot folder, or the GGUF file).
    pub fn download(&self, progress: &(dyn Fn(&str, u64, u64) + Sync)) -> Result<PathBuf, Error> {
        match self.kind()? {
            Kind::Gguf(file) => remote::download(self, &file, progress),
            Kind::Safetensors => {
                let config = self.fetch("config.json")?;
                for f in [
                    "generation_config.json",
                    "tokenizer.json",
                    "tokenizer_config.json",
                ] {
                    if self.has(f) {
                        self.fetch(f)?;
                    }
                }
                let index = "model.safetensors.index.json";
                let weights: Vec<String> = if self.has(index) {
                    let json = anatomy_checkpoint::safetensors::read_json(&self.fetch(index)?)?;
                    anatomy_checkpoint::safetensors::shards(&json, &self.shown(index))?
                        .into_keys()
                        .collect()
                } else {
                    self.files
                        .iter()
                        .filter(|f| f.ends_with(".safetensors") && !f.contains('/'))
                        .cloned()
                        .collect()
                };
                if weights.is_empty() {
                    return Err(Error::file(
                        &self.id.repo,
                        "holds no .safetensors weights; `run` needs them (show, stats and html need only the config)",
                    ));
                }
                for w in &weights {
                    remote::download(self, w, progress)?;
                }
                Ok(config.parent().expect("a file in a folder").to_path_buf())
            }
        }
    }
}
