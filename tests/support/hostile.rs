//! A Hub that answers as the test says: each request goes to a handler that picks the status,
//! the headers and how the body comes (whole, never ending, a byte at a time, or never). Every
//! request is recorded with its `Authorization` header, so a test sees where a token went. The
//! server's loops are bounded in time and bytes, and stop when the server is dropped.

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How a body is sent.
pub enum Body {
    Bytes(Vec<u8>),
    /// `b'a'` forever (until the client goes, the server stops, or 8 GB).
    Endless,
    /// These bytes, one every interval.
    Trickle(Vec<u8>, Duration),
    /// No answer at all: not even a status line.
    Hang,
}

pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Body,
    /// Write `Content-Length` of the body (for `Bytes` and `Trickle`).
    pub length: bool,
}

impl Reply {
    pub fn new(status: u16, body: Vec<u8>) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: Body::Bytes(body),
            length: true,
        }
    }
    pub fn header(mut self, k: &str, v: impl Into<String>) -> Reply {
        self.headers.push((k.to_string(), v.into()));
        self
    }
}

#[derive(Debug, Clone)]
pub struct Req {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
}

impl Req {
    pub fn header(&self, k: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(k))
            .map(|(_, v)| v.as_str())
    }

    /// One request off a connection (no body: the clients send none).
    pub fn read(stream: &std::net::TcpStream) -> Option<Req> {
        let mut r = std::io::BufReader::new(stream);
        let mut line = String::new();
        r.read_line(&mut line).ok()?;
        let mut parts = line.split_whitespace();
        let (method, path) = (parts.next()?.to_string(), parts.next()?.to_string());
        let mut headers = Vec::new();
        loop {
            let mut l = String::new();
            r.read_line(&mut l).ok()?;
            let l = l.trim_end();
            if l.is_empty() {
                break;
            }
            let (k, v) = l.split_once(':')?;
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
        Some(Req {
            method,
            path,
            headers,
        })
    }
}

type Handler = dyn Fn(&Req) -> Reply + Send + Sync;

pub struct Server {
    pub url: String,
    pub port: u16,
    /// Every request, in order of arrival.
    pub seen: Arc<Mutex<Vec<Req>>>,
    /// Body bytes written.
    pub sent: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// The longest any connection is served.
const LIFE: Duration = Duration::from_secs(120);

impl Server {
    pub fn start(handler: impl Fn(&Req) -> Reply + Send + Sync + 'static) -> Server {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sent = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        let (seen2, sent2, stop2) = (seen.clone(), sent.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stop2.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (handler, seen, sent, stop) =
                    (handler.clone(), seen2.clone(), sent2.clone(), stop2.clone());
                std::thread::spawn(move || serve(conn, &*handler, &seen, &sent, &stop));
            }
        });
        Server {
            url: format!("http://127.0.0.1:{port}"),
            port,
            seen,
            sent,
            stop,
        }
    }

    /// The requests seen whose path starts with `prefix`.
    pub fn requests(&self, prefix: &str) -> Vec<Req> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.path.starts_with(prefix))
            .cloned()
            .collect()
    }
}

fn serve(
    mut conn: std::net::TcpStream,
    handler: &Handler,
    seen: &Mutex<Vec<Req>>,
    sent: &AtomicU64,
    stop: &AtomicBool,
) {
    let Some(req) = Req::read(&conn) else { return };
    seen.lock().unwrap().push(req.clone());
    let reply = handler(&req);
    let start = Instant::now();
    let alive = || !stop.load(Ordering::Relaxed) && start.elapsed() < LIFE;
    if let Body::Hang = reply.body {
        while alive() {
            std::thread::sleep(Duration::from_millis(50));
        }
        return;
    }
    let mut head = format!("HTTP/1.1 {} X\r\nConnection: close\r\n", reply.status);
    let len = match &reply.body {
        Body::Bytes(b) | Body::Trickle(b, _) => Some(b.len()),
        Body::Endless | Body::Hang => None,
    };
    if let Some(n) = len.filter(|_| reply.length) {
        head += &format!("Content-Length: {n}\r\n");
    }
    for (k, v) in &reply.headers {
        head += &format!("{k}: {v}\r\n");
    }
    head += "\r\n";
    if conn.write_all(head.as_bytes()).is_err() || req.method == "HEAD" {
        return;
    }
    match reply.body {
        Body::Bytes(b) => {
            if conn.write_all(&b).is_ok() {
                sent.fetch_add(b.len() as u64, Ordering::Relaxed);
            }
        }
        Body::Endless => {
            let chunk = vec![b'a'; 64 << 10];
            let mut n = 0u64;
            while alive() && n < 8 << 30 && conn.write_all(&chunk).is_ok() {
                n += chunk.len() as u64;
                sent.fetch_add(chunk.len() as u64, Ordering::Relaxed);
            }
        }
        Body::Trickle(b, every) => {
            for byte in b {
                if !alive() || conn.write_all(&[byte]).is_err() {
                    break;
                }
                sent.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(every);
            }
        }
        Body::Hang => unreachable!("answered above"),
    }
    let _ = conn.shutdown(std::net::Shutdown::Write);
}

/// A repo as the Hub serves it, for handlers to answer from and then spoil: `api/models` and
/// `resolve` (by revision or commit), ETags the Hub's hashes, `Range` honoured.
pub struct Repo {
    pub repo: String,
    pub commit: String,
    pub files: Vec<(String, Vec<u8>)>,
}

pub fn sha256(b: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

pub fn git_sha1(b: &[u8]) -> String {
    use sha1::Digest;
    let mut h = sha1::Sha1::new();
    h.update(format!("blob {}\0", b.len()).as_bytes());
    h.update(b);
    h.finalize().iter().map(|x| format!("{x:02x}")).collect()
}

impl Repo {
    pub fn etag(&self, name: &str, bytes: &[u8]) -> String {
        if name.ends_with(".safetensors") || name.ends_with(".gguf") {
            sha256(bytes)
        } else {
            git_sha1(bytes)
        }
    }

    /// The file `resolve` names in `path`, if this repo has it.
    pub fn file_of(&self, path: &str) -> Option<(&str, &[u8])> {
        let rest = path.strip_prefix(&format!("/{}/resolve/", self.repo))?;
        let (rev, file) = rest.split_once('/')?;
        if rev != "main" && rev != self.commit {
            return None;
        }
        self.files
            .iter()
            .find(|(n, _)| n == file)
            .map(|(n, b)| (n.as_str(), b.as_slice()))
    }

    pub fn api(&self) -> Vec<u8> {
        let siblings: Vec<_> = self
            .files
            .iter()
            .map(|(n, _)| serde_json::json!({ "rfilename": n }))
            .collect();
        serde_json::json!({ "id": self.repo, "sha": self.commit, "siblings": siblings })
            .to_string()
            .into_bytes()
    }

    /// The honest answer.
    pub fn answer(&self, req: &Req) -> Reply {
        if req.path.starts_with(&format!("/api/models/{}", self.repo)) {
            return Reply::new(200, self.api()).header("Content-Type", "application/json");
        }
        let Some((name, bytes)) = self.file_of(&req.path) else {
            return Reply::new(404, b"{}".to_vec()).header("X-Error-Code", "EntryNotFound");
        };
        let tag = format!("\"{}\"", self.etag(name, bytes));
        if let Some(r) = req.header("Range") {
            let (a, b) = r.trim_start_matches("bytes=").split_once('-').unwrap();
            let a: usize = a.parse().unwrap();
            let b: usize = b.parse::<usize>().unwrap().min(bytes.len() - 1);
            return Reply::new(206, bytes[a..=b].to_vec())
                .header("ETag", tag)
                .header("Content-Range", format!("bytes {a}-{b}/{}", bytes.len()));
        }
        Reply::new(200, bytes.to_vec()).header("ETag", tag)
    }
}
