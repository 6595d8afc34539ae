//! The requests hf-hub does not expose: a file's metadata as Python's client reads it (a HEAD
//! on `resolve` that follows only relative redirects, so an LFS file's `X-Linked-Size`,
//! `X-Linked-Etag` and `X-Repo-Commit` are read off the redirect), and byte ranges.

use crate::Why;
use reqwest::blocking::{Client, Response};
use reqwest::header::{HeaderMap, AUTHORIZATION, CONTENT_LENGTH, ETAG, LOCATION, RANGE};
use std::io::Read;

pub(crate) struct Http {
    /// Follows no redirect: `head` follows the relative ones itself.
    head: Client,
    /// Follows redirects (to the CDN), dropping the token when the host changes.
    get: Client,
    endpoint: String,
    token: Option<String>,
}

/// What a HEAD on `resolve` says about a file.
pub(crate) struct Meta {
    pub size: u64,
    pub etag: String,
}

fn text(h: &HeaderMap, k: &str) -> Option<String> {
    h.get(k).and_then(|v| v.to_str().ok()).map(String::from)
}

/// A failed response as a reason: the Hub's `X-Error-Code` first, then the status.
fn why(r: &Response) -> Why {
    let code = text(r.headers(), "x-error-code").unwrap_or_default();
    match (r.status().as_u16(), code.as_str()) {
        (_, "RepoNotFound") => Why::NoRepo,
        (_, "RevisionNotFound") => Why::NoRevision,
        (_, "EntryNotFound") => Why::NoFile,
        (401 | 403, _) | (_, "GatedRepo") => Why::Denied(r.status().as_u16()),
        (404, _) => Why::NoFile,
        (429, _) => Why::RateLimited,
        (s, _) => Why::Other(format!("HTTP {s}")),
    }
}

impl Http {
    pub(crate) fn new(endpoint: &str, token: Option<String>) -> Result<Http, Why> {
        let ua = concat!("anatomy/", env!("CARGO_PKG_VERSION"));
        let build = |policy| {
            Client::builder()
                .user_agent(ua)
                .redirect(policy)
                .timeout(std::time::Duration::from_secs(60))
                .build()
                .map_err(|e| Why::Other(e.to_string()))
        };
        Ok(Http {
            head: build(reqwest::redirect::Policy::none())?,
            get: build(reqwest::redirect::Policy::default())?,
            endpoint: endpoint.trim_end_matches('/').to_string(),
            token,
        })
    }

    fn url(&self, repo: &str, rev: &str, file: &str) -> String {
        let enc = |s: &str| {
            s.replace('%', "%25")
                .replace('#', "%23")
                .replace('?', "%3F")
        };
        format!(
            "{}/{repo}/resolve/{}/{}",
            self.endpoint,
            enc(rev).replace('/', "%2F"),
            enc(file)
        )
    }

    fn auth(&self, mut b: reqwest::blocking::RequestBuilder) -> reqwest::blocking::RequestBuilder {
        if let Some(t) = &self.token {
            b = b.header(AUTHORIZATION, format!("Bearer {t}"));
        }
        b
    }

    pub(crate) fn meta(&self, repo: &str, rev: &str, file: &str) -> Result<Meta, Why> {
        let mut url = reqwest::Url::parse(&self.url(repo, rev, file))
            .map_err(|e| Why::Other(e.to_string()))?;
        let home = url.host_str().map(String::from);
        for _ in 0..10 {
            let mut req = self
                .head
                .head(url.clone())
                .header("Accept-Encoding", "identity");
            // The token goes to the Hub only, never to the host a redirect names.
            if url.host_str().map(String::from) == home {
                req = self.auth(req);
            }
            let r = req.send().map_err(|e| Why::Network(e.to_string()))?;
            let h = r.headers();
            if r.status().is_redirection() {
                // An LFS file's redirect carries its size and ETag: stop there, as Python does.
                if text(h, "x-linked-size").is_some() {
                    return meta(h);
                }
                let loc = text(h, LOCATION.as_str())
                    .ok_or_else(|| Why::Other("a redirect without a Location".into()))?;
                url = url.join(&loc).map_err(|e| Why::Other(e.to_string()))?;
                continue;
            }
            if !r.status().is_success() {
                return Err(why(&r));
            }
            return meta(h);
        }
        Err(Why::Other("too many redirects".into()))
    }

    /// Bytes `range` of a file, at most what the range asks even if the server sends more.
    pub(crate) fn range(
        &self,
        repo: &str,
        rev: &str,
        file: &str,
        range: std::ops::Range<u64>,
    ) -> Result<Vec<u8>, Why> {
        let want = range.end.saturating_sub(range.start);
        if want == 0 {
            return Ok(Vec::new());
        }
        let r = self
            .auth(self.get.get(self.url(repo, rev, file)))
            .header(RANGE, format!("bytes={}-{}", range.start, range.end - 1))
            .header("Accept-Encoding", "identity")
            .send()
            .map_err(|e| Why::Network(e.to_string()))?;
        if !r.status().is_success() {
            return Err(why(&r));
        }
        let whole = r.status().as_u16() == 200;
        let mut body = r.take(if whole { range.end } else { want });
        let mut out = Vec::with_capacity(want.min(64 << 20) as usize);
        body.read_to_end(&mut out)
            .map_err(|e| Why::Network(e.to_string()))?;
        if whole {
            // A server that ignores Range sends the file from its start.
            out.drain(..(range.start as usize).min(out.len()));
        }
        Ok(out)
    }
}

fn meta(h: &HeaderMap) -> Result<Meta, Why> {
    let size = text(h, "x-linked-size")
        .or_else(|| text(h, CONTENT_LENGTH.as_str()))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| Why::Other("the Hub gave no size for the file".into()))?;
    let etag = text(h, "x-linked-etag")
        .or_else(|| text(h, ETAG.as_str()))
        .map(|e| e.trim_start_matches("W/").trim_matches('"').to_string())
        .ok_or_else(|| Why::Other("the Hub gave no ETag for the file".into()))?;
    Ok(Meta { size, etag })
}

/// The token as hf-hub and Python find it: HF_TOKEN, HF_TOKEN_PATH, then `$HF_HOME/token`.
pub(crate) fn token() -> Option<String> {
    if std::env::var_os("HF_HUB_DISABLE_IMPLICIT_TOKEN").is_some_and(|v| !v.is_empty()) {
        return None;
    }
    if let Some(t) = std::env::var("HF_TOKEN").ok().filter(|t| !t.is_empty()) {
        return Some(t);
    }
    let file = std::env::var_os("HF_TOKEN_PATH")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| hf_hub::hf_home().join("token"));
    std::fs::read_to_string(file)
        .ok()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
}
