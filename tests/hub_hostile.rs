//! A Hub that lies (`support/hostile.rs`), reached through `HF_ENDPOINT` with `HF_TOKEN=secret`:
//! whatever it says, nothing is written outside `HF_HOME`, the token goes to no other origin,
//! every hang ends within its deadline and every flood within a bounded memory, a corrupt or
//! short transfer never exits 0 and leaves nothing in the cache, and the next honest run works.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

#[path = "support/hostile.rs"]
mod hostile;
#[path = "support/measure.rs"]
mod measure;
#[path = "support/zeros.rs"]
mod zeros;

use measure::Ran;

use hostile::{Body, Reply, Repo, Req, Server};

const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";
/// The deadline the runs below are given (ANATOMY_HUB_TIMEOUT), and what a hang may take at most:
/// the request's deadline, one stalled read, and the process.
const DEADLINE: u64 = 2;
const HANG_ENDS: Duration = Duration::from_secs(3 * DEADLINE + 4);
/// The memory a run against a flood may reach (the largest body anatomy reads whole is 32 MiB).
const FLOOD_RSS_KB: u64 = 200 << 10;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/exec/tests/fixtures")
        .join(name)
}

fn tiny() -> Repo {
    let dir = fixture("llama");
    Repo {
        repo: "o/n".into(),
        commit: COMMIT.into(),
        files: ["config.json", "model.safetensors"]
            .iter()
            .map(|f| (f.to_string(), std::fs::read(dir.join(f)).unwrap()))
            .collect(),
    }
}

/// A sandbox: `home` is HF_HOME, `outside` a folder beside it that nothing may touch.
struct Sandbox {
    _dir: tempfile::TempDir,
    home: PathBuf,
    outside: PathBuf,
}

impl Sandbox {
    fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        let (home, outside) = (dir.path().join("home"), dir.path().join("outside"));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("victim"), b"keep").unwrap();
        Sandbox {
            _dir: dir,
            home,
            outside,
        }
    }

    /// Nothing outside HF_HOME was written: `outside` holds its one file, unchanged, and the
    /// sandbox nothing else.
    fn untouched(&self) {
        let names: Vec<_> = std::fs::read_dir(&self.outside)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["victim"], "written outside HF_HOME");
        assert_eq!(std::fs::read(self.outside.join("victim")).unwrap(), b"keep");
        let top: Vec<_> = std::fs::read_dir(self.home.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(top.len(), 2, "{top:?}");
    }

    /// Files in the cache's blobs folders (partial downloads included).
    fn blobs(&self) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        let hub = self.home.join("hub");
        for repo in std::fs::read_dir(&hub).into_iter().flatten().flatten() {
            for b in std::fs::read_dir(repo.path().join("blobs"))
                .into_iter()
                .flatten()
                .flatten()
            {
                out.push((
                    b.file_name().into_string().unwrap(),
                    b.metadata().unwrap().len(),
                ));
            }
        }
        out
    }
}

/// `anatomy ARGS` against `server` in `sb`, measured.
fn run(server: &Server, sb: &Sandbox, args: &[&str]) -> Ran {
    let mut c = measure::anatomy();
    c.env("HF_ENDPOINT", &server.url)
        .env("HF_HOME", &sb.home)
        .env("HF_TOKEN", "secret")
        .env("ANATOMY_HUB_TIMEOUT", DEADLINE.to_string())
        .args(args);
    measure::run(c)
}

fn spoiled(repo: Repo, f: impl Fn(&Repo, &Req) -> Option<Reply> + Send + Sync + 'static) -> Server {
    let repo = Arc::new(repo);
    Server::start(move |req| f(&repo, req).unwrap_or_else(|| repo.answer(req)))
}

#[test]
fn the_honest_hub_here_serves_the_commands() {
    let sb = Sandbox::new();
    let hub = spoiled(tiny(), |_, _| None);
    run(
        &hub,
        &sb,
        &["run", "o/n", "--ids", "1,2", "--max-tokens", "2"],
    )
    .ok();
    sb.untouched();
}

#[test]
fn no_etag_commit_or_file_name_from_the_server_names_a_path() {
    let sb = Sandbox::new();
    let victim = sb.outside.join("victim").display().to_string();
    for etag in [
        format!("\"{victim}\""),
        "\"../../../../outside/victim\"".to_string(),
        "\"x/../../y\"".to_string(),
    ] {
        let hub = spoiled(tiny(), move |_, req| {
            req.path
                .contains("/resolve/")
                .then(|| Reply::new(200, b"{}".to_vec()).header("ETag", etag.clone()))
        });
        run(&hub, &sb, &["stats", "o/n"]).refused("not a content hash");
    }
    // The API's commit holding a path, and siblings that leave the folder.
    for sha in ["../../../outside", "/etc", "main"] {
        let hub = spoiled(tiny(), move |_, req| {
            req.path.starts_with("/api/").then(|| {
                Reply::new(
                    200,
                    serde_json::json!({"sha": sha, "siblings": [{"rfilename": "config.json"}]})
                        .to_string()
                        .into_bytes(),
                )
            })
        });
        run(&hub, &sb, &["stats", "o/n"]).refused("not 40 hex digits");
    }
    for name in [
        "/etc/hostname",
        "../outside/victim",
        "a/../../b",
        "a\u{1}b",
        "",
    ] {
        let hub = spoiled(tiny(), move |r, req| {
            req.path.starts_with("/api/").then(|| {
                Reply::new(
                    200,
                    serde_json::json!({"sha": r.commit, "siblings": [
                        {"rfilename": "config.json"}, {"rfilename": name}]})
                    .to_string()
                    .into_bytes(),
                )
            })
        });
        run(&hub, &sb, &["run", "o/n", "--ids", "1"]).refused("cannot be a path in a repo");
    }
    // A shard index naming files outside the repo.
    let mut repo = tiny();
    repo.files.push((
        "model.safetensors.index.json".into(),
        serde_json::json!({"weight_map": {"model.embed_tokens.weight": "../../../outside/victim"}})
            .to_string()
            .into_bytes(),
    ));
    let hub = spoiled(repo, |_, _| None);
    run(&hub, &sb, &["run", "o/n", "--ids", "1"]).refused("is not a file name in this folder");
    // X-Repo-Commit holding a path names nothing: files are resolved by the API's commit.
    let hub = spoiled(tiny(), |r, req| {
        req.path
            .contains("/resolve/")
            .then(|| r.answer(req).header("X-Repo-Commit", "../../../outside"))
    });
    run(&hub, &sb, &["stats", "o/n"]).ok();
    sb.untouched();
}

#[test]
fn the_token_goes_to_no_other_origin() {
    let sb = Sandbox::new();
    let other = Server::start(|_| Reply::new(404, Vec::new()));
    let port = other.port;
    for to in [
        format!("/\\localhost:{port}/o/n/x"),
        format!("//127.0.0.1:{port}/o/n/x"),
        format!("http://127.0.0.1:{port}/o/n/x"),
        format!("http://localhost:{port}/o/n/x"),
    ] {
        let hub = spoiled(tiny(), move |_, req| {
            (req.path.contains("/resolve/") || req.path.starts_with("/api/"))
                .then(|| Reply::new(302, Vec::new()).header("Location", to.clone()))
        });
        assert_ne!(run(&hub, &sb, &["stats", "o/n"]).code, Some(0));
        // The endpoint got the token; a redirect's other origin never did.
        assert!(hub
            .requests("/api/")
            .iter()
            .all(|r| r.header("Authorization") == Some("Bearer secret")));
    }
    let seen = other.seen.lock().unwrap().clone();
    assert!(!seen.is_empty(), "the redirects were followed");
    assert!(
        seen.iter().all(|r| r.header("Authorization").is_none()),
        "{seen:?}"
    );
    sb.untouched();
}

#[test]
fn every_hang_ends_within_its_deadline() {
    type Spoil = fn(&Repo, &Req) -> Option<Reply>;
    fn hang(_: &Repo, _: &Req) -> Reply {
        Reply {
            status: 200,
            headers: Vec::new(),
            body: Body::Hang,
            length: false,
        }
    }
    let cases: [(&str, Spoil); 4] = [
        ("an unanswered api/models", |r, q| {
            q.path.starts_with("/api/").then(|| hang(r, q))
        }),
        ("a file list a byte every 0.3 s", |r, q| {
            q.path.starts_with("/api/").then(|| Reply {
                status: 200,
                headers: Vec::new(),
                body: Body::Trickle(r.api(), Duration::from_millis(300)),
                length: true,
            })
        }),
        ("an unanswered HEAD", |r, q| {
            (q.method == "HEAD").then(|| hang(r, q))
        }),
        ("a config a byte every 0.3 s", |r, q| {
            (q.method == "GET" && q.path.ends_with("config.json")).then(|| {
                let mut a = r.answer(q);
                a.body = match a.body {
                    Body::Bytes(b) => Body::Trickle(b, Duration::from_millis(300)),
                    b => b,
                };
                a
            })
        }),
    ];
    for (what, spoil) in cases {
        let sb = Sandbox::new();
        let hub = spoiled(tiny(), spoil);
        let ran = run(&hub, &sb, &["stats", "o/n"]);
        ran.refused("too slow");
        assert!(ran.took < HANG_ENDS, "{what}: {:?}", ran.took);
        sb.untouched();
    }
}

#[test]
fn every_flood_ends_within_a_bounded_memory() {
    let endless = || Reply {
        status: 200,
        headers: Vec::new(),
        body: Body::Endless,
        length: false,
    };
    // An endless file list.
    let sb = Sandbox::new();
    let hub = spoiled(tiny(), move |_, q| {
        q.path.starts_with("/api/").then(endless)
    });
    let ran = run(&hub, &sb, &["stats", "o/n"]);
    ran.refused("too much");
    assert!(ran.rss_kb < FLOOD_RSS_KB, "{} KiB", ran.rss_kb);
    // An endless config.json behind an honest HEAD: the bytes asked are read, no more, and
    // they do not have the hash.
    let hub = spoiled(tiny(), move |_, q| {
        (q.method == "GET" && q.path.ends_with("config.json")).then(|| {
            let mut r = endless();
            r.status = 206;
            r
        })
    });
    let ran = run(&hub, &sb, &["stats", "o/n"]);
    assert_eq!(ran.code, Some(2), "{}", ran.stderr);
    assert!(ran.rss_kb < FLOOD_RSS_KB, "{} KiB", ran.rss_kb);
    // A config.json that says it is 5 GB.
    let hub = spoiled(tiny(), |r, q| {
        (q.method == "HEAD" && q.path.ends_with("config.json")).then(|| {
            let mut a = r.answer(q);
            a.length = false;
            a.header("Content-Length", (5u64 << 30).to_string())
        })
    });
    run(&hub, &sb, &["stats", "o/n"]).refused("too much");
    assert!(
        sb.blobs().iter().all(|(_, n)| *n < 1 << 20),
        "{:?}",
        sb.blobs()
    );
    sb.untouched();
}

/// What a run left in the cache is not trusted: a partial download planted as a symlink to a
/// file outside is replaced, not written through; a cached config whose bytes are not its blob's
/// hash (an error page an older client kept) is fetched again.
#[cfg(unix)]
#[test]
fn a_planted_or_poisoned_cache_is_neither_followed_nor_trusted() {
    let sb = Sandbox::new();
    let honest = spoiled(tiny(), |_, _| None);
    let repo = tiny();
    let (config, weights) = (&repo.files[0].1, &repo.files[1].1);
    let folder = sb.home.join("hub/models--o--n");
    std::fs::create_dir_all(folder.join("blobs")).unwrap();
    std::os::unix::fs::symlink(
        sb.outside.join("victim"),
        folder
            .join("blobs")
            .join(format!("{}.incomplete", hostile::sha256(weights))),
    )
    .unwrap();
    // config.json's snapshot entry and blob, named by its hash, holding an error page.
    let tag = hostile::git_sha1(config);
    std::fs::write(
        folder.join("blobs").join(&tag),
        b"<html>502 Bad Gateway</html>",
    )
    .unwrap();
    let snap = folder.join("snapshots").join(COMMIT);
    std::fs::create_dir_all(&snap).unwrap();
    std::os::unix::fs::symlink(format!("../../blobs/{tag}"), snap.join("config.json")).unwrap();
    run(
        &honest,
        &sb,
        &["run", "o/n", "--ids", "1", "--max-tokens", "1"],
    )
    .ok();
    assert_eq!(
        std::fs::read(folder.join("blobs").join(&tag)).unwrap(),
        *config
    );
    assert_eq!(
        std::fs::read(folder.join("blobs").join(hostile::sha256(weights))).unwrap(),
        *weights
    );
    sb.untouched();
}

#[test]
fn a_corrupt_transfer_never_exits_0_and_the_cache_recovers() {
    let sb = Sandbox::new();
    let honest = spoiled(tiny(), |_, _| None);
    // An error page where config.json should be.
    let hub = spoiled(tiny(), |_, q| {
        (q.method == "GET" && q.path.ends_with("config.json"))
            .then(|| Reply::new(500, b"<html>Internal Server Error</html>".to_vec()))
    });
    run(&hub, &sb, &["stats", "o/n"]).refused("HTTP 500");
    // Other bytes than the ETag's.
    let hub = spoiled(tiny(), |r, q| {
        (q.method == "GET" && q.path.ends_with("config.json")).then(|| {
            let mut a = r.answer(q);
            if let Body::Bytes(b) = &mut a.body {
                b[1] ^= 1;
            }
            a
        })
    });
    run(&hub, &sb, &["stats", "o/n"]).refused("do not have the hash");
    // Every range answered from offset 0, under an honest-looking Content-Range.
    let weights = tiny().files[1].1.clone();
    let hub = spoiled(tiny(), |r, q| {
        let range = q.header("Range")?;
        let (name, bytes) = r.file_of(&q.path)?;
        let (a, b) = range.trim_start_matches("bytes=").split_once('-')?;
        let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
        let b = b.min(bytes.len() - 1);
        Some(
            Reply::new(206, bytes[..=b - a].to_vec())
                .header("ETag", format!("\"{}\"", r.etag(name, bytes)))
                .header("Content-Range", format!("bytes {a}-{b}/{}", bytes.len())),
        )
    });
    // A partial download to resume, so the range does not start at 0.
    run(&honest, &sb, &["stats", "o/n"]).ok();
    let blobs = sb.home.join("hub/models--o--n/blobs");
    let partial = blobs.join(format!("{}.incomplete", hostile::sha256(&weights)));
    std::fs::write(&partial, &weights[..weights.len() / 2]).unwrap();
    let ran = run(&hub, &sb, &["run", "o/n", "--ids", "1"]);
    ran.refused("do not have the hash");
    assert!(!partial.exists(), "the wrong partial download is removed");
    // A range answered with another Content-Range, and a short body.
    let hub = spoiled(tiny(), |r, q| {
        q.header("Range")?;
        let mut a = r.answer(q);
        a.headers.retain(|(k, _)| k != "Content-Range");
        Some(a.header("Content-Range", "bytes 0-0/1"))
    });
    run(&hub, &sb, &["run", "o/n", "--ids", "1"]).refused("Content-Range");
    let hub = spoiled(tiny(), |r, q| {
        q.header("Range")?;
        let mut a = r.answer(q);
        a.length = false;
        if let Body::Bytes(b) = &mut a.body {
            b.truncate(b.len() / 2);
        }
        Some(a)
    });
    run(&hub, &sb, &["run", "o/n", "--ids", "1"]).refused("sent");
    // Nothing wrong was kept: the next honest run works, and the blobs are the files.
    run(
        &honest,
        &sb,
        &["run", "o/n", "--ids", "1", "--max-tokens", "1"],
    )
    .ok();
    let mut blobs = sb.blobs();
    blobs.sort();
    let repo = tiny();
    let mut want: Vec<_> = repo
        .files
        .iter()
        .map(|(n, b)| (repo.etag(n, b), b.len() as u64))
        .collect();
    want.sort();
    assert_eq!(blobs, want);
    sb.untouched();
}

/// Malformed API JSON is the server's fault, not the network's.
#[test]
fn malformed_answers_are_named_for_what_they_are() {
    let sb = Sandbox::new();
    let hub = spoiled(tiny(), |r, q| {
        q.path.starts_with("/api/").then(|| {
            let mut b = r.api();
            b.truncate(b.len() / 2);
            Reply::new(200, b)
        })
    });
    let ran = run(&hub, &sb, &["stats", "o/n"]);
    ran.refused("JSON anatomy cannot read");
    assert!(!ran.stderr.contains("cannot reach"), "{}", ran.stderr);
    sb.untouched();
}

/// A Llama checkpoint of about 40 MB in one file, more than one download chunk (32 MiB).
fn one_big_shard() -> Repo {
    let config = zeros::llama_40mb();
    let tensors = zeros::tensors_of(&config);
    Repo {
        repo: "o/n".into(),
        commit: COMMIT.into(),
        files: vec![
            ("config.json".into(), config.to_string().into_bytes()),
            (
                "model.safetensors".into(),
                zeros::safetensors_bf16(&tensors),
            ),
        ],
    }
}

/// A server that ignores `Range` is read once, not once per chunk.
#[test]
fn a_server_that_ignores_range_is_read_once() {
    let sb = Sandbox::new();
    let repo = one_big_shard();
    let size = repo.files[1].1.len() as u64;
    assert!(size > 32 << 20);
    let hub = spoiled(repo, |r, q| {
        q.header("Range")?;
        let mut q = q.clone();
        q.headers.retain(|(k, _)| !k.eq_ignore_ascii_case("Range"));
        Some(r.answer(&q))
    });
    run(
        &hub,
        &sb,
        &["run", "o/n", "--ids", "1", "--max-tokens", "1"],
    )
    .ok();
    let sent = hub.sent.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        sent < size + size / 20,
        "sent {sent} bytes for a {size}-byte file"
    );
    sb.untouched();
}

/// A GGUF header read over ranges cannot claim memory: the file says it is 1 PB and holds an
/// array of 2^40 bytes.
#[test]
fn a_gguf_header_cannot_claim_memory() {
    let sb = Sandbox::new();
    let mut g = Vec::new();
    g.extend(b"GGUF");
    g.extend(3u32.to_le_bytes());
    g.extend(0u64.to_le_bytes()); // tensors
    g.extend(1u64.to_le_bytes()); // metadata entries
    let key = b"tokenizer.ggml.tokens";
    g.extend((key.len() as u64).to_le_bytes());
    g.extend(key);
    g.extend(9u32.to_le_bytes()); // array
    g.extend(0u32.to_le_bytes()); // of u8
    g.extend((1u64 << 40).to_le_bytes());
    g.extend(vec![7u8; 1 << 16]);
    let repo = Repo {
        repo: "o/n".into(),
        commit: COMMIT.into(),
        files: vec![("x.gguf".into(), g)],
    };
    // The file as the server claims it: its bytes, then zeros to 1 PB.
    let claimed = 1u64 << 50;
    let hub = spoiled(repo, move |r, q| {
        let (_, bytes) = r.file_of(&q.path)?;
        if q.method == "HEAD" {
            let mut a = r.answer(q);
            a.length = false;
            return Some(a.header("Content-Length", claimed.to_string()));
        }
        let range = q.header("Range")?.trim_start_matches("bytes=").to_string();
        let (a, b) = range.split_once('-')?;
        let (a, b): (u64, u64) = (a.parse().ok()?, b.parse().ok()?);
        let body: Vec<u8> = (a..=b)
            .map(|i| bytes.get(i as usize).copied().unwrap_or(0))
            .collect();
        Some(Reply::new(206, body).header("Content-Range", format!("bytes {a}-{b}/{claimed}")))
    });
    let ran = run(&hub, &sb, &["verify", "o/n/x.gguf"]);
    assert_eq!(ran.code, Some(2), "{}", ran.stderr);
    assert!(
        ran.stderr.contains("tokenizer.ggml.tokens"),
        "{}",
        ran.stderr
    );
    assert!(ran.rss_kb < FLOOD_RSS_KB, "{} KiB", ran.rss_kb);
    sb.untouched();
}
