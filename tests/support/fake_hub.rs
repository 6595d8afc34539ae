//! A fake Hugging Face Hub on 127.0.0.1 for the Hub tests: the `api/models` and `resolve`
//! endpoints as the Hub serves them. Weight files (`.safetensors`, `.gguf`) answer `resolve`
//! with a redirect to a content-addressed `/cdn/` URL carrying `X-Linked-Etag` and
//! `X-Linked-Size`, as LFS files do; small files answer directly. Both honour `Range` (206)
//! and `If-None-Match` (304). A gated repo answers 401 without its token; a missing repo or
//! file 404 with the Hub's `X-Error-Code`. Every body byte sent is counted.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

pub struct Repo {
    pub commit: String,
    pub files: BTreeMap<String, Arc<Vec<u8>>>,
    /// The token this repo needs, if gated.
    pub token: Option<String>,
}

pub struct FakeHub {
    pub url: String,
    pub sent: Arc<AtomicU64>,
    pub requests: Arc<Mutex<Vec<String>>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
    port: u16,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for FakeHub {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wake the accept loop so it sees the flag.
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The ETags the Hub gives: SHA-256 for an LFS file, git's blob SHA-1 for another.
pub use super::hostile::{git_sha1 as git_etag, sha256 as etag};

fn lfs(name: &str) -> bool {
    name.ends_with(".safetensors") || name.ends_with(".gguf")
}

fn header(k: &str, v: &str) -> (String, String) {
    (k.to_string(), v.to_string())
}

// A request as the hubs of the tests read it: method, path with query, headers.
use super::hostile::Req as Request;

impl FakeHub {
    pub fn start(repos: BTreeMap<String, Repo>) -> FakeHub {
        FakeHub::start_as(repos, false)
    }

    /// `plain`: a simpler Hub, as another fake might be: weight files answer `resolve` directly
    /// (no redirect, no `X-Linked-*`), and `Range` is ignored (200 and the whole file).
    pub fn start_as(repos: BTreeMap<String, Repo>, plain: bool) -> FakeHub {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let url = format!("http://127.0.0.1:{port}");
        // The CDN is another host, as on the Hub: clients keep the token and stop their HEAD there.
        let cdn = format!("http://localhost:{port}");
        let sent = Arc::new(AtomicU64::new(0));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        // Hashed once: the files are served many times.
        let tags: Tags = repos
            .values()
            .flat_map(|r| r.files.iter())
            .map(|(name, b)| {
                let tag = if lfs(name) { etag(b) } else { git_etag(b) };
                (Arc::as_ptr(b) as usize, tag)
            })
            .collect();
        let by_hash: BTreeMap<String, Arc<Vec<u8>>> = repos
            .values()
            .flat_map(|r| r.files.values())
            .map(|b| (tags[&(Arc::as_ptr(b) as usize)].clone(), b.clone()))
            .collect();
        let shared = Arc::new((repos, by_hash, tags, cdn, plain));
        let (count, log, halt) = (sent.clone(), requests.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if halt.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(mut conn) = conn else { continue };
                let (shared, count, log) = (shared.clone(), count.clone(), log.clone());
                // A thread per connection, one request per connection (`Connection: close`).
                std::thread::spawn(move || {
                    use std::io::Write;
                    let Some(req) = Request::read(&conn) else {
                        return;
                    };
                    log.lock().unwrap().push(format!(
                        "{} {} {}",
                        req.method,
                        req.path,
                        req.header("Range").unwrap_or_default()
                    ));
                    let (repos, by_hash, tags, base, plain) = &*shared;
                    let (status, headers, body, len) =
                        answer(&req, repos, by_hash, tags, base, *plain);
                    let head = req.method == "HEAD";
                    let mut out = format!(
                        "HTTP/1.1 {status} X\r\nContent-Length: {len}\r\nConnection: close\r\n"
                    );
                    for (k, v) in headers {
                        out += &format!("{k}: {v}\r\n");
                    }
                    out += "\r\n";
                    let mut bytes = out.into_bytes();
                    if !head {
                        count.fetch_add(body.len() as u64, Ordering::Relaxed);
                        bytes.extend(body);
                    }
                    let _ = conn.write_all(&bytes);
                    let _ = conn.shutdown(std::net::Shutdown::Write);
                    // Let the client read to the end before the socket closes.
                    let _ = std::io::Read::read_to_end(&mut conn, &mut Vec::new());
                });
            }
        });
        FakeHub {
            url,
            sent,
            requests,
            stop,
            port,
            thread: Some(thread),
        }
    }
}

type Answer = (u16, Vec<(String, String)>, Vec<u8>, usize);
type Tags = std::collections::HashMap<usize, String>;

fn error(status: u16, code: &str, message: &str) -> Answer {
    let body = format!("{{\"error\": \"{message}\"}}").into_bytes();
    let len = body.len();
    (
        status,
        vec![
            header("X-Error-Code", code),
            header("X-Error-Message", message),
            header("Content-Type", "application/json"),
        ],
        body,
        len,
    )
}

/// A file's bytes, whole or the requested range.
fn serve(
    req: &Request,
    bytes: &[u8],
    tag: &str,
    mut headers: Vec<(String, String)>,
    plain: bool,
) -> Answer {
    headers.push(header("ETag", &format!("\"{tag}\"")));
    headers.push(header("Accept-Ranges", "bytes"));
    let get = |k: &str| req.header(k);
    if get("If-None-Match").is_some_and(|v| v.trim_matches('"') == tag) {
        return (304, headers, Vec::new(), 0);
    }
    if let Some(range) = get("Range").filter(|_| !plain) {
        let spec = range.trim_start_matches("bytes=");
        let (a, b) = spec.split_once('-').unwrap();
        let a: usize = a.parse().unwrap();
        let b: usize = if b.is_empty() {
            bytes.len() - 1
        } else {
            b.parse::<usize>().unwrap().min(bytes.len() - 1)
        };
        if a >= bytes.len() {
            return (416, headers, Vec::new(), 0);
        }
        headers.push(header(
            "Content-Range",
            &format!("bytes {a}-{b}/{}", bytes.len()),
        ));
        let body = bytes[a..=b].to_vec();
        let len = body.len();
        return (206, headers, body, len);
    }
    (200, headers, bytes.to_vec(), bytes.len())
}

fn answer(
    req: &Request,
    repos: &BTreeMap<String, Repo>,
    by_hash: &BTreeMap<String, Arc<Vec<u8>>>,
    tags: &Tags,
    base: &str,
    plain: bool,
) -> Answer {
    let path = req.path.split('?').next().unwrap().to_string();
    if let Some(hash) = path.strip_prefix("/cdn/") {
        return match by_hash.get(hash) {
            Some(b) => serve(req, b, hash, Vec::new(), plain),
            None => error(404, "EntryNotFound", "no such blob"),
        };
    }
    let auth = req
        .header("Authorization")
        .map(|v| v.trim_start_matches("Bearer ").to_string());
    let (api, rest) = match path.strip_prefix("/api/models/") {
        Some(r) => (true, r.to_string()),
        None => (false, path.trim_start_matches('/').to_string()),
    };
    let mut parts = rest.splitn(3, '/');
    let (owner, name) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let tail = parts.next().unwrap_or("");
    let id = format!("{owner}/{name}");
    let Some(repo) = repos.get(&id) else {
        return error(404, "RepoNotFound", "Repository not found");
    };
    if repo.token.is_some() && auth != repo.token {
        return error(
            401,
            "GatedRepo",
            "Access to this model is restricted. You must have access to it and be authenticated to access it.",
        );
    }
    let commit_ok = |rev: &str| rev == "main" || rev == repo.commit;
    if api {
        // `api/models/o/n` or `api/models/o/n/revision/REV`
        if let Some(rev) = tail.strip_prefix("revision/") {
            if !commit_ok(rev) {
                return error(404, "RevisionNotFound", "Invalid rev id");
            }
        }
        let siblings: Vec<serde_json::Value> = repo
            .files
            .keys()
            .map(|f| serde_json::json!({ "rfilename": f }))
            .collect();
        let body = serde_json::json!({
            "id": id, "modelId": id, "sha": repo.commit, "private": false,
            "gated": repo.token.is_some(), "siblings": siblings,
        })
        .to_string()
        .into_bytes();
        let len = body.len();
        return (
            200,
            vec![header("Content-Type", "application/json")],
            body,
            len,
        );
    }
    let Some(after) = tail.strip_prefix("resolve/") else {
        return error(404, "EntryNotFound", "not an endpoint of this fake hub");
    };
    let (rev, file) = after.split_once('/').unwrap_or((after, ""));
    if !commit_ok(rev) {
        return error(404, "RevisionNotFound", "Invalid rev id");
    }
    let Some(bytes) = repo.files.get(file) else {
        return error(404, "EntryNotFound", "Entry not found");
    };
    let commit = header("X-Repo-Commit", &repo.commit);
    let tag = &tags[&(Arc::as_ptr(bytes) as usize)];
    if lfs(file) && !plain {
        let headers = vec![
            commit,
            header("Location", &format!("{base}/cdn/{tag}")),
            header("X-Linked-Etag", &format!("\"{tag}\"")),
            header("X-Linked-Size", &bytes.len().to_string()),
            header("ETag", &format!("\"{tag}\"")),
        ];
        return (302, headers, Vec::new(), 0);
    }
    serve(req, bytes, tag, vec![commit], plain)
}
