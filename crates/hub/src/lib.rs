//! anatomy-hub: MODEL and CHECKPOINT arguments that name a Hugging Face Hub repo.
//!
//! The Hub's own conventions: `HF_ENDPOINT`, `HF_TOKEN` (or the token file
//! `huggingface-cli login` writes), `HF_HOME` / `HF_HUB_CACHE` with Python's cache layout (a file
//! either one downloaded is the other's), and `HF_HUB_OFFLINE=1`: only the cache is read. Small
//! files (config.json, the shard index, the tokenizer) are downloaded into the cache; checkpoint
//! headers are read with range requests, so a 700 GB checkpoint is verified from a few hundred
//! kilobytes; `download` fetches weights for `run`, resuming a partial file.
//!
//! The server is not trusted: what it says is checked before it names a file or a request
//! (`safe`), requests have deadlines and bodies caps (`http`), and every download is checked
//! against the hash its ETag names before the cache links it (`cache`).

pub mod cache;
mod http;
pub mod id;
mod remote;
pub mod safe;

pub use id::{parse, Id};

use anatomy_core::source::Origin;
use anatomy_core::Error;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// The largest small file downloaded whole (config.json, an index, a tokenizer's settings), and
/// the largest tokenizer.json (Gemma 3's is 33 MB).
const SMALL: u64 = 16 << 20;
const TOKENIZER: u64 = 256 << 20;

/// The Hub client and the environment it was made from.
pub struct Hub {
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
        let http = http::Http::new(&endpoint, token.clone()).map_err(|e| {
            Error::new(
                anatomy_core::fmt::printable(&endpoint),
                "HF_ENDPOINT",
                format!("{e}; give a URL such as https://huggingface.co"),
            )
        })?;
        Ok(Hub {
            http,
            endpoint: anatomy_core::fmt::printable(endpoint.trim_end_matches('/')),
            cache: cache::dir(),
            offline,
            has_token: token.is_some(),
        })
    }

    /// The repo at the revision asked for: its commit and its files.
    pub fn snapshot(&self, id: &Id) -> Result<Snapshot<'_>, Error> {
        let (commit, files) = if self.offline {
            self.cached(id)?
        } else {
            let url = self
                .http
                .api(&id.repo, id.revision())
                .map_err(|e| self.error(id, None, e))?;
            let body = self
                .http
                .get_api(url)
                .map_err(|e| self.error(id, None, e))?;
            info(&body).map_err(|e| self.error(id, None, e))?
        };
        Ok(Snapshot {
            hub: self,
            cache: cache::Repo::new(&self.cache, &id.repo),
            id: id.clone(),
            commit,
            files,
            read: Mutex::new(Vec::new()),
            sizes: Mutex::new(Vec::new()),
            transferred: AtomicU64::new(0),
        })
    }

    /// Offline: the commit a cached ref points at (or the commit given), and the files of its
    /// snapshot folder.
    fn cached(&self, id: &Id) -> Result<(String, Vec<String>), Error> {
        let repo = cache::Repo::new(&self.cache, &id.repo);
        let rev = id.revision();
        let commit = if safe::commit(rev) {
            rev.to_ascii_lowercase()
        } else {
            repo.reference(rev).ok_or_else(|| {
                Error::file(
                    &id.repo,
                    format!(
                        "HF_HUB_OFFLINE is set and the cache ({}) holds no revision {rev} of it; run once online, or unset HF_HUB_OFFLINE",
                        self.cache.display()
                    ),
                )
            })?
        };
        let files = repo.list(&commit);
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
        let at = &self.endpoint;
        let message = match why {
            Why::Denied(status) => format!("{at} refused access (HTTP {status}): {token}"),
            Why::NoRepo => format!(
                "no such model repo on {at} (a private repo also looks missing without a token; check the name, or set HF_TOKEN)"
            ),
            Why::NoRevision => format!(
                "has no revision `{}` on {at}; give a branch, tag or commit it has",
                id.revision()
            ),
            Why::NoFile => format!("is not in the repo at {} on {at}", id.revision()),
            Why::NotCached => format!(
                "HF_HUB_OFFLINE is set and the cache ({}) does not hold this file; run once online, or unset HF_HUB_OFFLINE",
                self.cache.display()
            ),
            Why::Network(e) => format!(
                "cannot reach {at} ({e}); check the network and HF_ENDPOINT, or set HF_HUB_OFFLINE=1 to use what the cache holds"
            ),
            Why::Timeout(e) => format!(
                "{at} is too slow: {e} (a request may take {} s, plus 1 s per 128 KiB of its body; ANATOMY_HUB_TIMEOUT sets the seconds); check the network, or set HF_HUB_OFFLINE=1 to use what the cache holds",
                self.http.base_secs()
            ),
            Why::RateLimited => format!(
                "{at} is rate-limiting requests; wait and try again, or set HF_TOKEN for a higher limit"
            ),
            Why::Malformed(e) => format!(
                "{at} answered with JSON anatomy cannot read ({e}); the server, not the network, is at fault"
            ),
            Why::TooLarge(e) => format!("{at} answered with too much: {e}"),
            Why::Corrupt(e) => format!(
                "{at} sent a corrupt transfer: {e}; nothing of it was kept, try again"
            ),
            Why::Unsafe(e) => format!("{at} {e}; nothing was written"),
            Why::Io(e) => format!("cannot write the cache at {}: {e}", self.cache.display()),
            Why::Other(e) => format!("{at} answered wrongly: {e}"),
        };
        Error::file(anatomy_core::fmt::printable(&shown), message)
    }
}

/// The API's answer about a repo at a revision: its commit and its files, each checked (a
/// commit is 40 hex digits, a file a relative path that stays in its folder), sorted.
pub fn info(body: &[u8]) -> Result<(String, Vec<String>), Why> {
    let v: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| Why::Malformed(e.to_string()))?;
    let sha = v
        .get("sha")
        .ok_or_else(|| Why::Malformed("no `sha`: the revision's commit hash".into()))?;
    let commit = sha
        .as_str()
        .filter(|c| safe::commit(c))
        .ok_or_else(|| {
            Why::Unsafe(format!(
                "gave the commit {}, which is not 40 hex digits",
                anatomy_core::fmt::printable(&sha.to_string())
            ))
        })?
        .to_ascii_lowercase();
    let mut files = Vec::new();
    match v.get("siblings") {
        None | Some(serde_json::Value::Null) => {}
        Some(serde_json::Value::Array(list)) => {
            for s in list {
                let name = s
                    .get("rfilename")
                    .and_then(|n| n.as_str())
                    .ok_or_else(|| Why::Malformed("a sibling without `rfilename`".into()))?;
                if !safe::repo_path(name) {
                    return Err(Why::Unsafe(format!(
                        "listed a file named {}, which cannot be a path in a repo (absolute, `..`, empty or control characters)",
                        anatomy_core::fmt::printable(&format!("{name:?}"))
                    )));
                }
                files.push(name.to_string());
            }
        }
        Some(_) => return Err(Why::Malformed("`siblings` is not a list".into())),
    }
    files.sort();
    files.dedup();
    Ok((commit, files))
}

/// What anatomy makes of a server's answer, through the checks every answer goes through (the
/// fuzz target's entry): the failure a status and headers mean, a file's size and hash from a
/// HEAD's headers, whether a `Content-Range` is the range asked, the API's commit and files.
/// Whatever the input, each result is checked here: a hash names one file, a commit is 40 hex
/// digits, every file a path that stays in its folder.
pub fn check_answer(
    status: u16,
    headers: &[(&str, &[u8])],
    body: &[u8],
    asked: std::ops::Range<u64>,
) {
    let mut h = reqwest::header::HeaderMap::new();
    for (k, v) in headers {
        if let (Ok(k), Ok(v)) = (
            reqwest::header::HeaderName::from_bytes(k.as_bytes()),
            reqwest::header::HeaderValue::from_bytes(v),
        ) {
            h.append(k, v);
        }
    }
    let _ = http::why(status, &h);
    if let Ok(m) = http::meta(&h) {
        let hex = m.hash.hex();
        assert!(matches!(hex.len(), 40 | 64) && hex.bytes().all(|b| b.is_ascii_hexdigit()));
    }
    let range = h.get("content-range").and_then(|v| v.to_str().ok());
    if !asked.is_empty() && http::range_answered(range, &asked) {
        let r = range.expect("answered");
        assert!(r.contains(&format!("{}-{}", asked.start, asked.end - 1)));
    }
    if let Ok((commit, files)) = info(body) {
        assert!(safe::commit(&commit));
        for f in &files {
            assert!(safe::repo_path(f));
            let joined = std::path::Path::new("/cache/snapshots/c").join(f);
            assert!(joined.starts_with("/cache/snapshots/c"));
            assert!(!joined
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir)));
        }
    }
}

/// Why a Hub request failed.
#[derive(Debug)]
pub enum Why {
    Denied(u16),
    NoRepo,
    NoRevision,
    NoFile,
    NotCached,
    Network(String),
    /// The request's deadline passed, or its body stalled.
    Timeout(String),
    RateLimited,
    /// A body that is not the JSON it should be.
    Malformed(String),
    /// A body larger than what it is may be.
    TooLarge(String),
    /// A transfer short, long, of the wrong range or the wrong hash.
    Corrupt(String),
    /// A commit, ETag, file name or redirect that cannot be used safely.
    Unsafe(String),
    Io(String),
    Other(String),
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
    cache: cache::Repo,
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
            format!(
                " (GGUF files there: {})",
                anatomy_core::fmt::printable(&gguf.join(", "))
            )
        }
    }

    fn note_read(&self, file: &str) {
        let mut read = self.read.lock().expect("lock");
        if !read.iter().any(|f| f == file) {
            read.push(file.to_string());
        }
    }

    /// `file` if it can be a path in the repo (a name from a shard index is the server's word).
    fn checked<'f>(&self, file: &'f str) -> Result<&'f str, Error> {
        if safe::repo_path(file) {
            Ok(file)
        } else {
            Err(Error::file(
                self.shown(file),
                "cannot be a file of a repo (absolute, `..`, empty or control characters); anatomy reads nothing by that name",
            ))
        }
    }

    /// The cached copy of `file`, if the cache holds this commit's (`check`: and its bytes have
    /// the hash its blob is named by; cheap for small files only).
    fn cached(&self, file: &str, check: bool) -> Option<PathBuf> {
        self.cache.cached(&self.commit, file, check)
    }

    fn url(&self, file: &str) -> Result<reqwest::Url, Error> {
        self.hub
            .http
            .resolve(&self.id.repo, &self.commit, file)
            .map_err(|e| self.hub.error(&self.id, Some(file), e))
    }

    /// `file` in the local cache, downloaded first if need be: a small file, whose size is
    /// capped (a config, an index, a tokenizer).
    pub fn fetch(&self, file: &str) -> Result<PathBuf, Error> {
        let file = self.checked(file)?;
        let cap = if file.ends_with("tokenizer.json") {
            TOKENIZER
        } else {
            SMALL
        };
        remote::download(self, file, Some(cap), true, &|_, _, _| {})
    }

    /// Bytes `range` of `file`: from the cache when it holds the file, else a range request.
    pub(crate) fn range(&self, file: &str, range: std::ops::Range<u64>) -> Result<Vec<u8>, Error> {
        let file = self.checked(file)?;
        self.note_read(file);
        if let Some(p) = self.cached(file, false) {
            return remote::read_local(&p, range);
        }
        if self.hub.offline {
            return Err(self.hub.error(&self.id, Some(file), Why::NotCached));
        }
        if range.is_empty() {
            return Ok(Vec::new());
        }
        let total = self.size_of(file)?;
        let bytes = self
            .hub
            .http
            .range(self.url(file)?, range.clone(), total)
            .and_then(|r| r.bytes(&range))
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
        let known = self
            .sizes
            .lock()
            .expect("lock")
            .iter()
            .find(|(f, _)| f == file)
            .map(|(_, n)| *n);
        if let Some(n) = known {
            return Ok(n);
        }
        if let Some(p) = self.cached(self.checked(file)?, false) {
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
            .meta(self.url(file)?)
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
            Kind::Gguf(file) => remote::download(self, self.checked(&file)?, None, false, progress),
            Kind::Safetensors => {
                let config = self.fetch("config.json")?;
                for f in [
                    "generation_config.json",
                    "tokenizer.json",
                    "tokenizer_config.json",
                    // The chat template where it is a file of its own (transformers 5 saves
                    // it so), or a processor's: `run --chat`.
                    "chat_template.jinja",
                    "chat_template.json",
                    // The image processor's settings, for `run --image`.
                    "preprocessor_config.json",
                    "processor_config.json",
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
                    remote::download(self, self.checked(w)?, None, false, progress)?;
                }
                Ok(config.parent().expect("a file in a folder").to_path_buf())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        // The fuzz target's property in the suite, on fewer cases: any answer goes through the
        // checks without a panic, and what they accept names nothing outside the cache.
        #[test]
        fn any_answer_is_checked_without_a_panic(
            status in any::<u16>(),
            headers in proptest::collection::vec(
                (prop::sample::select(vec!["etag", "x-linked-etag", "x-linked-size",
                    "content-length", "content-range", "x-error-code", "location"]),
                 prop::collection::vec(any::<u8>(), 0..80)), 0..6),
            body in prop_oneof![
                prop::collection::vec(any::<u8>(), 0..200),
                ("[0-9a-f/.\\\\ ]{0,44}", prop::collection::vec("[a-z./\\\\]{0,12}", 0..4)).prop_map(|(sha, names)| {
                    let s: Vec<_> = names.iter().map(|n| serde_json::json!({"rfilename": n})).collect();
                    serde_json::json!({"sha": sha, "siblings": s}).to_string().into_bytes()
                }),
            ],
            start in 0u64..1 << 40,
            len in 0u64..1 << 20,
        ) {
            let h: Vec<(&str, &[u8])> = headers.iter().map(|(k, v)| (*k, v.as_slice())).collect();
            check_answer(status, &h, &body, start..start + len);
        }
    }

    #[test]
    fn an_api_answer_is_read_only_when_sound() {
        let c = "ab".repeat(20);
        let ok =
            serde_json::json!({"sha": c, "siblings": [{"rfilename": "b"}, {"rfilename": "a/c"}]});
        let (commit, files) = info(ok.to_string().as_bytes()).unwrap();
        assert_eq!(
            (commit.as_str(), files),
            (c.as_str(), vec!["a/c".to_string(), "b".into()])
        );
        for bad in [
            serde_json::json!({"sha": "../x"}),
            serde_json::json!({"sha": c, "siblings": [{"rfilename": "/etc/passwd"}]}),
            serde_json::json!({"sha": c, "siblings": [{"rfilename": "a/../../b"}]}),
            serde_json::json!({"sha": c, "siblings": "x"}),
        ] {
            assert!(info(bad.to_string().as_bytes()).is_err(), "{bad}");
        }
        assert!(matches!(info(b"{\"sha\": \"ab"), Err(Why::Malformed(_))));
    }
}
