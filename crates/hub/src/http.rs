//! Requests to the Hub, trusting nothing the server says: redirects are followed here, one hop at
//! a time, and the token goes only to the endpoint's own origin (scheme, host and port, as the
//! URL parser that sends the request reads them); every request has a total deadline, every body
//! a cap by what it is, and a range answer must be the range asked.

use crate::Why;
use reqwest::blocking::{Client, RequestBuilder, Response};
use reqwest::header::{HeaderMap, AUTHORIZATION, CONTENT_LENGTH, CONTENT_RANGE, LOCATION, RANGE};
use reqwest::{Method, Url};
use std::io::Read;
use std::time::{Duration, Instant};

/// Redirects followed before giving up.
const HOPS: usize = 10;
/// A request's deadline before its body: connecting, sending, the answer's headers.
const BASE: Duration = Duration::from_secs(30);
/// The slowest transfer accepted: a body's deadline grows by its length at this rate.
const FLOOR: u64 = 128 << 10;

/// The largest answer the API may give about a repo (its commit and file list).
const API_BODY: u64 = 32 << 20;

pub(crate) struct Http {
    client: Client,
    endpoint: Url,
    token: Option<String>,
    /// `BASE`, or `ANATOMY_HUB_TIMEOUT` seconds (a slow link, or a test of a hang).
    base: Duration,
}

/// What a HEAD on `resolve` says about a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    pub size: u64,
    pub hash: crate::safe::Hash,
}

fn text<'h>(h: &'h HeaderMap, k: &str) -> Option<&'h str> {
    h.get(k).and_then(|v| v.to_str().ok())
}

/// A failed answer as a reason: the Hub's `X-Error-Code` first, then the status.
pub fn why(status: u16, headers: &HeaderMap) -> Why {
    match (status, text(headers, "x-error-code").unwrap_or_default()) {
        (_, "RepoNotFound") => Why::NoRepo,
        (_, "RevisionNotFound") => Why::NoRevision,
        (_, "EntryNotFound") => Why::NoFile,
        (401 | 403, _) | (_, "GatedRepo") => Why::Denied(status),
        (404, _) => Why::NoFile,
        (429, _) => Why::RateLimited,
        (s, _) => Why::Other(format!("HTTP {s}")),
    }
}

/// A file's size and hash from the headers of a HEAD on `resolve`: an LFS file's redirect
/// carries `X-Linked-Size` and `X-Linked-Etag`, another file's answer `Content-Length` and `ETag`.
pub fn meta(headers: &HeaderMap) -> Result<Meta, Why> {
    let linked = text(headers, "x-linked-size").is_some();
    let (size, etag) = if linked {
        (
            text(headers, "x-linked-size"),
            text(headers, "x-linked-etag"),
        )
    } else {
        (
            text(headers, CONTENT_LENGTH.as_str()),
            text(headers, "etag"),
        )
    };
    let size = size
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| Why::Other("the Hub gave no size for the file".into()))?;
    let etag = etag.ok_or_else(|| Why::Other("the Hub gave no ETag for the file".into()))?;
    let hash = crate::safe::Hash::from_etag(etag).ok_or_else(|| {
        Why::Unsafe(format!(
            "gave the ETag {}, which is not a content hash (40 or 64 hex digits); anatomy names and checks every download by its hash",
            anatomy_core::fmt::printable(etag)
        ))
    })?;
    // An LFS file's hash is its SHA-256; a git blob's SHA-1 cannot name one.
    if linked && !matches!(hash, crate::safe::Hash::Sha256(_)) {
        return Err(Why::Unsafe(
            "gave an LFS file's ETag that is not a SHA-256".into(),
        ));
    }
    Ok(Meta { size, hash })
}

/// Is `header` (`Content-Range`) exactly `bytes START-END/…` for the `range` asked?
pub fn range_answered(header: Option<&str>, range: &std::ops::Range<u64>) -> bool {
    let Some(spec) = header.and_then(|h| h.trim().strip_prefix("bytes ")) else {
        return false;
    };
    let Some((span, _total)) = spec.split_once('/') else {
        return false;
    };
    let Some((a, b)) = span.split_once('-') else {
        return false;
    };
    matches!((a.parse::<u64>(), b.parse::<u64>()), (Ok(a), Ok(b)) if a == range.start && b + 1 == range.end)
}

/// A response body read with a cap and a deadline.
pub(crate) struct Reader {
    r: Response,
    deadline: Instant,
    left: u64,
    cap: u64,
    what: &'static str,
}

impl Reader {
    /// At most `out.len()` bytes; 0 at the end of the body.
    pub(crate) fn read(&mut self, out: &mut [u8]) -> Result<usize, Why> {
        if Instant::now() > self.deadline {
            return Err(Why::Timeout(format!(
                "{} did not arrive in time",
                self.what
            )));
        }
        let n = self.r.read(out).map_err(|e| {
            // A read cut by the request's timeout says so only deep in its sources.
            let late = Instant::now() + Duration::from_millis(250) >= self.deadline;
            if late || timed_out(&e) {
                Why::Timeout(format!("{} did not arrive in time", self.what))
            } else {
                Why::Network(e.to_string())
            }
        })?;
        if n as u64 > self.left {
            return Err(Why::TooLarge(format!(
                "{} is larger than the {} bytes expected",
                self.what, self.cap
            )));
        }
        self.left -= n as u64;
        Ok(n)
    }

    /// The rest of the body.
    pub(crate) fn all(mut self) -> Result<Vec<u8>, Why> {
        let mut out = Vec::new();
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let n = self.read(&mut buf)?;
            if n == 0 {
                return Ok(out);
            }
            out.extend_from_slice(&buf[..n]);
        }
    }
}

/// Does `e`, or an error it wraps, say it timed out?
fn timed_out(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut at = Some(e);
    while let Some(e) = at {
        if e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut)
            || e.downcast_ref::<reqwest::Error>()
                .is_some_and(|r| r.is_timeout())
        {
            return true;
        }
        at = e.source();
    }
    false
}

impl Http {
    pub(crate) fn new(endpoint: &str, token: Option<String>) -> Result<Http, String> {
        let endpoint = Url::parse(endpoint.trim_end_matches('/')).map_err(|e| e.to_string())?;
        if !matches!(endpoint.scheme(), "http" | "https") || endpoint.host_str().is_none() {
            return Err("it is not an http or https URL".into());
        }
        let base = std::env::var("ANATOMY_HUB_TIMEOUT")
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0 && *s < 1e6)
            .map_or(BASE, Duration::from_secs_f64);
        let client = Client::builder()
            .user_agent(concat!("anatomy/", env!("CARGO_PKG_VERSION")))
            // Redirects are followed by `send`, which decides where the token goes.
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(base)
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Http {
            client,
            endpoint,
            token,
            base,
        })
    }

    /// The seconds a request may take before its body.
    pub(crate) fn base_secs(&self) -> f64 {
        self.base.as_secs_f64()
    }

    fn path(&self, tail: &str) -> Result<Url, Why> {
        let base = self.endpoint.as_str().trim_end_matches('/');
        Url::parse(&format!("{base}/{tail}")).map_err(|e| Why::Other(e.to_string()))
    }

    /// `api/models/REPO/revision/REV`.
    pub(crate) fn api(&self, repo: &str, rev: &str) -> Result<Url, Why> {
        self.path(&format!("api/models/{repo}/revision/{}", enc(rev, true)))
    }

    /// `REPO/resolve/REV/FILE`.
    pub(crate) fn resolve(&self, repo: &str, rev: &str, file: &str) -> Result<Url, Why> {
        self.path(&format!(
            "{repo}/resolve/{}/{}",
            enc(rev, true),
            enc(file, false)
        ))
    }

    /// The deadline of a request made at `start` whose body is `len` bytes.
    fn deadline(&self, start: Instant, len: u64) -> Instant {
        start + self.base + Duration::from_secs(len / FLOOR)
    }

    /// One request and the redirects it gets, each hop checked: http(s) only, the token only to
    /// the endpoint's origin. `stop` ends the walk at a redirect it accepts (an LFS file's HEAD
    /// stops at the one carrying its size and hash).
    fn send(
        &self,
        method: Method,
        mut url: Url,
        range: Option<&std::ops::Range<u64>>,
        deadline: Instant,
        stop: impl Fn(&HeaderMap) -> bool,
    ) -> Result<Response, Why> {
        for _ in 0..HOPS {
            if !matches!(url.scheme(), "http" | "https") {
                return Err(Why::Unsafe(format!("redirected to a {} URL", url.scheme())));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Why::Timeout("the answer did not arrive in time".into()));
            }
            let mut req: RequestBuilder = self
                .client
                .request(method.clone(), url.clone())
                .header("Accept-Encoding", "identity")
                .timeout(left);
            if let Some(r) = range {
                req = req.header(RANGE, format!("bytes={}-{}", r.start, r.end - 1));
            }
            if url.origin() == self.endpoint.origin() {
                if let Some(t) = &self.token {
                    req = req.header(AUTHORIZATION, format!("Bearer {t}"));
                }
            }
            let r = req.send().map_err(|e| {
                if e.is_timeout() {
                    Why::Timeout("the answer did not arrive in time".into())
                } else {
                    Why::Network(e.to_string())
                }
            })?;
            if !r.status().is_redirection() || r.status().as_u16() == 304 || stop(r.headers()) {
                return Ok(r);
            }
            let loc = text(r.headers(), LOCATION.as_str())
                .ok_or_else(|| Why::Other("a redirect without a Location".into()))?;
            url = url
                .join(loc)
                .map_err(|e| Why::Other(format!("a redirect to a bad URL: {e}")))?;
        }
        Err(Why::Other("too many redirects".into()))
    }

    /// The API's answer (a GET read whole, up to `API_BODY`).
    pub(crate) fn get_api(&self, url: Url) -> Result<Vec<u8>, Why> {
        let start = Instant::now();
        let r = self.send(Method::GET, url, None, self.deadline(start, 0), |_| false)?;
        if !r.status().is_success() {
            return Err(why(r.status().as_u16(), r.headers()));
        }
        // Without a length, a file list is given the time of a few MB.
        let len = r.content_length().unwrap_or(4 << 20);
        self.reader(
            r,
            API_BODY,
            self.deadline(start, len),
            "the repo's file list",
        )?
        .all()
    }

    fn reader(
        &self,
        r: Response,
        cap: u64,
        deadline: Instant,
        what: &'static str,
    ) -> Result<Reader, Why> {
        if let Some(n) = r.content_length() {
            if n > cap {
                return Err(Why::TooLarge(format!(
                    "{what} is {n} bytes; at most {cap} are accepted"
                )));
            }
        }
        Ok(Reader {
            r,
            deadline,
            left: cap,
            cap,
            what,
        })
    }

    /// A file's size and hash, as Python's client reads them: a HEAD on `resolve`, stopping at
    /// an LFS file's redirect, which carries them.
    pub(crate) fn meta(&self, url: Url) -> Result<Meta, Why> {
        let r = self.send(
            Method::HEAD,
            url,
            None,
            self.deadline(Instant::now(), 0),
            |h| text(h, "x-linked-size").is_some(),
        )?;
        if !r.status().is_success() && !r.status().is_redirection() {
            return Err(why(r.status().as_u16(), r.headers()));
        }
        meta(r.headers())
    }

    /// Bytes `range` of a file, as a reader of exactly those bytes. A server that ignores
    /// `Range` answers 200 with the whole file: the reader then skips to the range's start
    /// (`Ranged::Whole` says so, for a caller that can use the rest).
    /// `total`: the file's size, which bounds the time given to a whole-file answer.
    pub(crate) fn range(
        &self,
        url: Url,
        range: std::ops::Range<u64>,
        total: u64,
    ) -> Result<Ranged, Why> {
        let want = range.end - range.start;
        let start = Instant::now();
        let deadline = self.deadline(start, want);
        let r = self.send(Method::GET, url, Some(&range), deadline, |_| false)?;
        match r.status().as_u16() {
            206 => {
                if !range_answered(text(r.headers(), CONTENT_RANGE.as_str()), &range) {
                    return Err(Why::Corrupt(format!(
                        "answered bytes {}-{} with Content-Range {}",
                        range.start,
                        range.end - 1,
                        anatomy_core::fmt::printable(
                            text(r.headers(), CONTENT_RANGE.as_str()).unwrap_or("(none)")
                        )
                    )));
                }
                if r.content_length().is_some_and(|n| n != want) {
                    return Err(Why::Corrupt(format!(
                        "answered a range of {want} bytes with a body of {} bytes",
                        r.content_length().unwrap_or_default()
                    )));
                }
                Ok(Ranged::Part(self.reader(r, want, deadline, "the range")?))
            }
            200 => {
                let deadline = self.deadline(start, total.max(range.end));
                Ok(Ranged::Whole(self.reader(
                    r,
                    u64::MAX,
                    deadline,
                    "the file",
                )?))
            }
            s => Err(if (200..300).contains(&s) {
                Why::Other(format!("answered a range request with HTTP {s}"))
            } else {
                why(s, r.headers())
            }),
        }
    }
}

/// The answer to a range request.
pub(crate) enum Ranged {
    /// The bytes asked.
    Part(Reader),
    /// The whole file from its first byte: the server ignores `Range`.
    Whole(Reader),
}

impl Ranged {
    /// Exactly the bytes of `range`: an error if the server sent fewer.
    pub(crate) fn bytes(self, range: &std::ops::Range<u64>) -> Result<Vec<u8>, Why> {
        let want = (range.end - range.start) as usize;
        let (mut r, mut skip) = match self {
            Ranged::Part(r) => (r, 0),
            Ranged::Whole(r) => (r, range.start),
        };
        let mut out = Vec::with_capacity(want.min(64 << 20));
        let mut buf = vec![0u8; 64 << 10];
        while out.len() < want {
            let n = r.read(&mut buf)?;
            if n == 0 {
                return Err(Why::Corrupt(format!(
                    "sent {} of the {want} bytes asked",
                    out.len()
                )));
            }
            let from = (skip.min(n as u64)) as usize;
            skip -= from as u64;
            let take = (n - from).min(want - out.len());
            out.extend_from_slice(&buf[from..from + take]);
        }
        Ok(out)
    }
}

/// A revision or file path in a URL: `%`, `#`, `?` escaped, and `/` too in a revision
/// (`refs/pr/1` is one path segment of `resolve`).
fn enc(s: &str, slash: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '%' => out.push_str("%25"),
            '#' => out.push_str("%23"),
            '?' => out.push_str("%3F"),
            '/' if slash => out.push_str("%2F"),
            c => out.push(c),
        }
    }
    out
}

/// The token as Python finds it: HF_TOKEN, HF_TOKEN_PATH, then `$HF_HOME/token`.
pub(crate) fn token() -> Option<String> {
    if std::env::var_os("HF_HUB_DISABLE_IMPLICIT_TOKEN").is_some_and(|v| !v.is_empty()) {
        return None;
    }
    if let Some(t) = std::env::var("HF_TOKEN").ok().filter(|t| !t.is_empty()) {
        return Some(t);
    }
    let file = std::env::var_os("HF_TOKEN_PATH")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| crate::cache::home().join("token"));
    // A token file is a line; a larger one is not a token file.
    let f = std::fs::File::open(file).ok()?;
    let mut s = String::new();
    f.take(64 << 10).read_to_string(&mut s).ok()?;
    Some(s.trim().to_string()).filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_answer_is_the_range_asked() {
        assert!(range_answered(Some("bytes 0-9/100"), &(0..10)));
        assert!(range_answered(Some("bytes 90-99/*"), &(90..100)));
        assert!(!range_answered(Some("bytes 0-9/100"), &(10..20)));
        assert!(!range_answered(Some("bytes 0-99/100"), &(0..10)));
        assert!(!range_answered(None, &(0..10)));
        assert!(!range_answered(Some("bytes x-y/z"), &(0..10)));
    }

    #[test]
    fn the_token_goes_to_the_endpoints_origin_only() {
        let home = Url::parse("http://127.0.0.1:8080/").unwrap();
        for (loc, same) in [
            ("/x", true),
            ("http://127.0.0.1:8080/y", true),
            ("http://127.0.0.1:8081/y", false),
            ("/\\localhost:9/x", false),
            ("//127.0.0.1:9/x", false),
            ("https://127.0.0.1:8080/x", false),
            ("http://localhost:8080/x", false),
        ] {
            let to = home.join(loc).unwrap();
            assert_eq!(to.origin() == home.origin(), same, "{loc} -> {to}");
        }
    }
}
