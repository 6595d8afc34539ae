//! Legal input that asks for unbounded work: chat templates, tokenizer normalizers, huge
//! manifests, thread counts, the offline cache walk. Each ends in a clear refusal within a
//! stated time and memory.

use std::path::{Path, PathBuf};
use std::time::Duration;

#[path = "support/measure.rs"]
mod measure;

/// What a refused run may cost: the binary and a tiny model take about 30 MB.
const RSS_KB: u64 = 200 << 10;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/exec/tests/fixtures")
        .join(name)
}

/// A copy of the tiny llama checkpoint with a word-level tokenizer, in a temporary folder.
fn checkpoint(normalizer: serde_json::Value) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for f in ["config.json", "model.safetensors"] {
        std::fs::copy(fixture("llama").join(f), dir.path().join(f)).unwrap();
    }
    let tokenizer = serde_json::json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
        "normalizer": normalizer, "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": null, "decoder": null,
        "model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "hi": 1, "a": 2}, "unk_token": "[UNK]"},
    });
    std::fs::write(dir.path().join("tokenizer.json"), tokenizer.to_string()).unwrap();
    dir
}

#[test]
fn a_chat_template_cannot_take_unbounded_memory_or_time() {
    let dir = checkpoint(serde_json::Value::Null);
    // `run --chat` on the checkpoint, with the template file as it stands.
    let chat = || {
        let mut c = measure::anatomy();
        c.args([
            "run",
            dir.path().to_str().unwrap(),
            "--chat",
            "--prompt",
            "hi",
        ]);
        c
    };
    let run = |template: &str| {
        std::fs::write(dir.path().join("chat_template.jinja"), template).unwrap();
        let mut c = chat();
        c.args(["--max-tokens", "1"]);
        measure::run(c)
    };
    // A plain template works through the child process.
    run("{% for m in messages %}{{ m.content }}{% endfor %}").ok();
    for (what, t) in [
        ("a list added to itself 40 times", "{% set ns = namespace(x=[1]) %}{% for i in range(40) %}{% set ns.x = ns.x + ns.x %}{% endfor %}{{ ns.x|length }}"),
        ("a list nested in itself 40 times", "{% set ns = namespace(x=[1]) %}{% for i in range(40) %}{% set ns.x = [ns.x, ns.x] %}{% endfor %}{{ ns.x }}"),
        ("a string doubled 40 times", "{% set ns = namespace(x='a') %}{% for i in range(40) %}{% set ns.x = ns.x ~ ns.x %}{% endfor %}{{ ns.x }}"),
        ("a string joined 40 times", "{% set ns = namespace(x='a') %}{% for i in range(40) %}{% set ns.x = [ns.x, ns.x]|join %}{% endfor %}{{ ns.x }}"),
        ("a loop without end", "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"),
    ] {
        let ran = run(t);
        assert_eq!(ran.code, Some(2), "{what}: {}", ran.stderr);
        assert!(ran.stderr.contains("chat_template"), "{what}: {}", ran.stderr);
        assert!(
            ran.took < Duration::from_secs(15),
            "{what}: {:?}",
            ran.took
        );
        assert!(ran.rss_kb < RSS_KB, "{what}: {} KiB", ran.rss_kb);
    }
    // A template file of 3 GB (sparse) is refused before it is read.
    let f = std::fs::File::create(dir.path().join("chat_template.jinja")).unwrap();
    f.set_len(3 << 30).unwrap();
    let ran = measure::run(chat());
    ran.refused("a chat template of at most");
    assert!(ran.rss_kb < RSS_KB, "{} KiB", ran.rss_kb);
}

#[test]
fn a_normalizer_that_multiplies_text_is_refused() {
    let double =
        serde_json::json!({"type": "Replace", "pattern": {"String": "a"}, "content": "aa"});
    let dir = checkpoint(serde_json::json!({"type": "Sequence", "normalizers": vec![double; 40]}));
    let mut c = measure::anatomy();
    c.args(["run", dir.path().to_str().unwrap(), "--prompt", "a a a"]);
    let ran = measure::run(c);
    ran.refused("normalizer");
    assert!(ran.took < Duration::from_secs(10), "{:?}", ran.took);
    assert!(ran.rss_kb < RSS_KB, "{} KiB", ran.rss_kb);
    // A normalizer of ordinary growth runs.
    let dir = checkpoint(serde_json::json!({"type": "Lowercase"}));
    let mut c = measure::anatomy();
    c.args([
        "run",
        dir.path().to_str().unwrap(),
        "--prompt",
        "HI a",
        "--max-tokens",
        "1",
    ]);
    measure::run(c).ok();
}

#[test]
fn a_manifest_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let config = |experts: u64, layers: u64| {
        serde_json::json!({
            "model_type": "mixtral", "hidden_size": 64, "intermediate_size": 32,
            "num_hidden_layers": layers, "num_attention_heads": 4, "num_key_value_heads": 2,
            "vocab_size": 128, "num_local_experts": experts, "num_experts_per_tok": 2,
        })
    };
    let file = dir.path().join("config.json");
    // A million experts in each of 32 layers: refused before anything is listed.
    std::fs::write(&file, config(1_000_000, 32).to_string()).unwrap();
    let mut c = measure::anatomy();
    c.args(["manifest", file.to_str().unwrap(), "--json"]);
    let ran = measure::run(c);
    ran.refused("anatomy lists at most");
    assert!(ran.took < Duration::from_secs(10), "{:?}", ran.took);
    assert!(ran.rss_kb < RSS_KB, "{} KiB", ran.rss_kb);
    // The largest listing allowed (just under a million tensors) in bounded memory.
    std::fs::write(&file, config(330_000, 1).to_string()).unwrap();
    let mut c = measure::anatomy();
    c.args(["manifest", file.to_str().unwrap(), "--json"]);
    let ran = measure::run(c);
    ran.ok();
    let v: serde_json::Value = serde_json::from_str(&ran.stdout).unwrap();
    assert!(v["tensors"].as_object().unwrap().len() > 990_000);
    assert!(ran.rss_kb < 1 << 20, "{} KiB", ran.rss_kb);
}

#[test]
fn threads_beyond_the_cores_are_refused_unless_forced() {
    let cores = std::thread::available_parallelism().unwrap().get();
    let llama = fixture("llama");
    let run = |threads: &str, force: bool| {
        let mut c = measure::anatomy();
        c.arg("run").arg(&llama);
        c.args(["--ids", "1", "--max-tokens", "1", "--threads", threads]);
        if force {
            c.arg("--force");
        }
        measure::run(c)
    };
    let many = (cores + 1).to_string();
    run(&many, false).refused("more than this machine's");
    run(&many, true).ok();
    run(&cores.to_string(), false).ok();
}

/// The offline cache walk follows no snapshot symlink out, and a ref must hold a commit.
#[cfg(unix)]
#[test]
fn the_offline_cache_walk_stays_in_the_cache() {
    let home = tempfile::tempdir().unwrap();
    let repo = home.path().join("hub/models--o--n");
    let commit = "0123456789abcdef0123456789abcdef01234567";
    let snap = repo.join("snapshots").join(commit);
    std::fs::create_dir_all(&snap).unwrap();
    std::fs::create_dir_all(repo.join("refs")).unwrap();
    for f in ["config.json", "model.safetensors"] {
        std::fs::copy(fixture("llama").join(f), snap.join(f)).unwrap();
    }
    std::os::unix::fs::symlink(".", snap.join("loop")).unwrap();
    std::os::unix::fs::symlink("/etc", snap.join("etc")).unwrap();
    std::fs::write(repo.join("refs/main"), "/etc").unwrap();
    std::fs::write(repo.join("refs/good"), commit).unwrap();
    let offline = |rev: &str| {
        let mut c = measure::anatomy();
        c.env("HF_HOME", home.path())
            .env("HF_HUB_OFFLINE", "1")
            .args(["stats", &format!("o/n@{rev}"), "--json"]);
        measure::run(c)
    };
    offline("main").refused("holds no revision main");
    let ran = offline("good");
    ran.ok();
    let v: serde_json::Value = serde_json::from_str(&ran.stdout).unwrap();
    assert_eq!(v["source"]["commit"], commit);
    let ran = offline(commit);
    assert!(ran.took < Duration::from_secs(10));
    ran.ok();
}
