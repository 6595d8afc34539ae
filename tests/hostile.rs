//! Hostile input: the committed corpus (scripts/make_hostile_corpus.py) and the files that cannot
//! be committed (pipes, devices), run through the commands that read them. Every one gives a
//! clear error naming the file, exits 2 (never a panic's 101), finishes (no hang), and writes
//! nothing; outputs never replace what anatomy did not write, and never a device or a pipe.

use assert_cmd::Command;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn anatomy() -> Command {
    let mut c = Command::cargo_bin("anatomy").unwrap();
    c.timeout(Duration::from_secs(60));
    c
}

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile")
}

/// Run `args`; return (exit code, stderr then stdout: `verify` reports on stdout).
fn run(args: &[&str]) -> (i32, String) {
    let out = anatomy().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout),
    )
}

#[test]
fn every_hostile_file_gets_a_clear_error_and_nothing_is_written() {
    let cases: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(corpus().join("cases.json")).unwrap())
            .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut checked = 0;
    for (name, fails) in &cases {
        let path = corpus().join(name);
        let p = path.to_str().unwrap();
        let page = tmp.path().join(format!("{name}.html"));
        let commands: Vec<(&str, Vec<&str>)> = vec![
            ("show", vec!["show", p, "--width", "80"]),
            ("stats", vec!["stats", p]),
            ("verify", vec!["verify", p]),
            ("run", vec!["run", p, "--ids", "1,2", "--max-tokens", "2"]),
            ("html", vec!["html", p, "-o", page.to_str().unwrap()]),
        ];
        for (cmd, args) in commands {
            let must_fail = fails.as_array().unwrap().iter().any(|c| c == cmd);
            let (code, err) = run(&args);
            checked += 1;
            let ok = if must_fail {
                code == 2
                    && err
                        .lines()
                        .any(|l| l.starts_with("error: ") && l.contains(name.as_str()))
            } else {
                code == 0
            };
            if !ok || err.contains("panicked") {
                failures.push(format!("{cmd} {name}: exit {code}: {err}"));
            }
            if must_fail && cmd == "html" && page.exists() {
                failures.push(format!("html {name}: a page was written"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(cases.len() >= 35 && checked == cases.len() * 5);
    // Nothing but the good cases' pages was written.
    let written: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let good = cases
        .values()
        .filter(|f| f.as_array().unwrap().iter().all(|c| c != "html"))
        .count();
    assert_eq!(written.len(), good, "{written:?}");
}

/// Some errors must say exactly what is wrong, with the field.
#[test]
fn errors_name_what_is_wrong() {
    let c = |f: &str| corpus().join(f).to_str().unwrap().to_string();
    for (args, says) in [
        (vec!["verify", &c("version-1.gguf")], "is GGUF version 1 (2023)"),
        (vec!["verify", &c("23-bytes.gguf")], "is 23 bytes; a GGUF file starts with a 24-byte header"),
        (vec!["show", &c("alignment-0.gguf")], "has `general.alignment` 0; it must be a power of two"),
        (vec!["show", &c("duplicate-key.gguf")], "has the metadata key `llama.block_count` twice"),
        (vec!["show", &c("freq-base-nan.gguf")], "field `llama.rope.freq_base`: is NaN"),
        (vec!["show", &c("eps-negative.gguf")], "field `llama.attention.layer_norm_rms_epsilon`: is -0.0000"),
        (vec!["show", &c("rope-dims-63.gguf")], "field `llama.rope.dimension_count`: is 63; the rotated dims must be an even number from 2 to the head size (4)"),
        (vec!["show", &c("rope-dims-0.gguf")], "field `llama.rope.dimension_count`: is 0;"),
        (vec!["show", &c("rope-dims-4096.gguf")], "field `llama.rope.dimension_count`: is 4096;"),
        (vec!["show", &c("rope-scaling-unknown.gguf")], "`warp` is not a RoPE type"),
        (vec!["verify", &c("offset-max.gguf")], "blk.0.attn_q.weight has data offset 18446744073709551615, past any file"),
        (vec!["verify", &c("overlapping.gguf")], "blk.0.attn_q.weight overlaps `blk.0.attn_k.weight`"),
        (vec!["verify", &c("retyped-overlaps-next.gguf")], "overlaps `blk.0.attn_q.weight`"),
        (vec!["verify", &c("cut-after-header.gguf")], "past the end of the file"),
        (vec!["run", &c("overlapping.gguf"), "--ids", "1"], "overlaps"),
        (vec!["verify", &c("st-duplicate-name")], "declares tensor `model.embed_tokens.weight` twice"),
        (vec!["verify", &c("st-unknown-dtype")], "has dtype `Q4_K`, which safetensors does not define"),
        (vec!["verify", &c("st-wrong-size")], "holds 1024 bytes, but F16 of shape [16, 16] takes 512"),
        (vec!["verify", &c("st-folder-as-file")], "model.safetensors: is a folder; anatomy reads regular files"),
        (vec!["verify", &c("st-index-escapes")], "`../good.gguf` is not a file name in this folder"),
    ] {
        let (code, err) = run(&args);
        assert!(code == 2 && err.contains(says), "{args:?}: {err}");
    }
}

#[cfg(unix)]
fn fifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

/// Pipes and devices where files belong: refused at once, never read or written.
#[cfg(unix)]
#[test]
fn pipes_and_devices_are_refused_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let good = corpus().join("st-good");
    // A pipe named as a checkpoint's file, its config, its tokenizer.
    for file in ["model.safetensors", "config.json", "tokenizer.json"] {
        let dir = tmp.path().join(format!("pipe-{file}"));
        std::fs::create_dir(&dir).unwrap();
        for f in ["model.safetensors", "config.json"] {
            if f != file {
                std::fs::copy(good.join(f), dir.join(f)).unwrap();
            }
        }
        fifo(&dir.join(file));
        let args: Vec<&str> = if file == "tokenizer.json" {
            vec!["run", dir.to_str().unwrap(), "--prompt", "hi"]
        } else {
            vec!["verify", dir.to_str().unwrap()]
        };
        let (code, err) = run(&args);
        assert!(
            code == 2 && err.contains("not a regular file"),
            "{file}: {err}"
        );
    }
    for (args, says) in [
        (
            vec!["show", "/dev/zero"],
            "/dev/zero: is not a regular file",
        ),
        (
            vec!["show", "/dev/null"],
            "/dev/null: is not a regular file",
        ),
    ] {
        let (code, err) = run(&args);
        assert!(code == 2 && err.contains(says), "{args:?}: {err}");
    }
    // Outputs: a device or a pipe is never replaced, --force or not; a foreign file needs --force.
    let pipe = tmp.path().join("out.html");
    fifo(&pipe);
    for target in ["/dev/null", pipe.to_str().unwrap()] {
        let (code, err) = run(&["html", "smollm2-135m", "-o", target, "--force"]);
        assert!(
            code == 2 && err.contains("not a regular file"),
            "{target}: {err}"
        );
    }
    assert!(std::fs::metadata(&pipe).unwrap().file_type().is_fifo_like());
    let mine = tmp.path().join("notes.npy");
    std::fs::write(&mine, "my notes").unwrap();
    let fixture = corpus().join("st-good");
    let (code, err) = run(&[
        "run",
        fixture.to_str().unwrap(),
        "--ids",
        "1,2",
        "--logits",
        mine.to_str().unwrap(),
    ]);
    assert!(code == 2 && err.contains("pass --force"), "{err}");
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "my notes");
}

#[cfg(unix)]
trait FifoLike {
    fn is_fifo_like(&self) -> bool;
}

#[cfg(unix)]
impl FifoLike for std::fs::FileType {
    fn is_fifo_like(&self) -> bool {
        use std::os::unix::fs::FileTypeExt;
        self.is_fifo()
    }
}

/// `site` checks every page it would write before writing the first.
#[test]
fn site_writes_nothing_when_one_target_is_foreign() {
    let tmp = tempfile::tempdir().unwrap();
    let foreign = tmp.path().join("qwen3-0.6b.html");
    std::fs::write(&foreign, "someone else's page").unwrap();
    let (code, err) = run(&["site", "-o", tmp.path().to_str().unwrap()]);
    assert!(
        code == 2 && err.contains("qwen3-0.6b.html: exists and was not written by anatomy"),
        "{err}"
    );
    let files: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert_eq!(files.len(), 1, "nothing else written");
}

/// Numbers that would allocate without bound or print saturated figures are errors.
#[test]
fn numeric_arguments_are_bounded() {
    let fixture = corpus().join("st-good");
    let f = fixture.to_str().unwrap();
    for (args, says) in [
        (vec!["run", f, "--ids", "1", "--max-tokens", "4294967296"], "field `--max-tokens`: is 4294967296: with the prompt's 1 tokens that passes this model's 64 positions; give at most 63"),
        (vec!["run", f, "--ids", "1", "--max-tokens", "18446744073709551615"], "give at most 63"),
        (vec!["run", f, "--ids", "99"], "has 99, not a token id"),
        (vec!["stats", "llama-3.1-8b", "--context", "0"], "field `--context`: is 0"),
        (vec!["stats", "llama-3.1-8b", "--context", "18446744073709551615"], "give a number of tokens from 1 to 1099511627776"),
        (vec!["html", "llama-3.1-8b", "-o", "/tmp/never.html", "--context", "0"], "field `--context`: is 0"),
    ] {
        let (code, err) = run(&args);
        assert!(code == 2 && err.contains(says), "{args:?}: {err}");
    }
    assert!(!Path::new("/tmp/never.html").exists());
    // The largest context in range gives real figures, not u64::MAX.
    let out = anatomy()
        .args([
            "stats",
            "llama-3.1-8b",
            "--context",
            "1099511627776",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stdout).contains("18446744073709551615"));
}

/// A file name with terminal escapes is printed with them escaped.
#[cfg(unix)]
#[test]
fn control_characters_from_inputs_are_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("evil\u{1b}[31mred");
    std::fs::create_dir(&dir).unwrap();
    std::fs::copy(
        corpus().join("st-good/config.json"),
        dir.join("config.json"),
    )
    .unwrap();
    let out = anatomy()
        .args(["stats", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !text.contains('\u{1b}') && text.contains("evil\\u{1b}[31mred"),
        "{text}"
    );
    let out = anatomy()
        .args(["show", dir.join("nope.json").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains('\u{1b}'));
}

/// Folder names that are hostile to the languages anatomy writes, each a model's name.
const NAMES: &[&str] = &[
    "evil\\x",
    "evil\\N{bogus}",
    "a\"\"\"b",
    "ends with\\",
    "[click me](javascript:alert(1))",
    "x'y: \"z\" #c",
    "<img src=x onerror=alert(1)>",
    "tab\tand\u{7f}",
];

/// Every generator keeps such a name text: the NumPy file and the PyTorch module parse (Python's
/// `ast`), and the name is in them; the Markdown export links nothing. (The Mermaid export and
/// the Markdown are rendered in the browser tests.)
#[cfg(unix)]
#[test]
fn names_from_inputs_cannot_break_the_generated_code() {
    #[path = "support/paths.rs"]
    mod paths;
    let tmp = tempfile::tempdir().unwrap();
    for name in NAMES {
        let dir = tmp.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        std::fs::copy(
            corpus().join("st-good/config.json"),
            dir.join("config.json"),
        )
        .unwrap();
        let d = dir.to_str().unwrap();
        let py = tmp.path().join("model.py");
        let _ = std::fs::remove_file(&py);
        anatomy()
            .args(["numpy", d, "-o", py.to_str().unwrap()])
            .assert()
            .success();
        let torch = anatomy().args(["torch", d]).output().unwrap();
        assert!(torch.status.success());
        let torch_py = tmp.path().join("torch_model.py");
        std::fs::write(&torch_py, &torch.stdout).unwrap();
        for file in [&py, &torch_py] {
            let out = std::process::Command::new(paths::python())
                .args(["-c", "import ast, sys; t = ast.parse(open(sys.argv[1], encoding='utf-8').read()); print(ast.get_docstring(t) or '')"])
                .arg(file)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{name:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let doc = String::from_utf8_lossy(&out.stdout);
            // The name as anatomy shows it (control characters escaped), quotes aside.
            let unquoted =
                |s: &str| -> String { s.chars().filter(|c| *c != '"' && *c != '\'').collect() };
            let shown = name
                .chars()
                .map(|c| {
                    if c.is_control() {
                        c.escape_default().to_string()
                    } else {
                        c.to_string()
                    }
                })
                .collect::<String>();
            assert!(
                unquoted(&doc).contains(&unquoted(&shown)),
                "{name:?} not in {doc}"
            );
        }
        let md = anatomy()
            .args(["export", d, "--format", "md"])
            .output()
            .unwrap();
        let md = String::from_utf8(md.stdout).unwrap();
        assert!(!md.contains("](javascript"), "{md}");
        assert!(!md.contains("<img"), "{md}");
    }
}

/// A full disk is an error, not a success that wrote nothing.
#[cfg(target_os = "linux")]
#[test]
fn writing_to_a_full_disk_fails() {
    for args in [
        &["stats", "llama-3.1-8b"][..],
        &["manifest", "llama-3.1-8b", "--json"],
        &["diff", "llama-3.1-8b", "qwen3-0.6b", "--json"],
        &["export", "llama-3.1-8b", "--format", "md"],
        &[
            "run",
            "llama-3.1-8b",
            "--tiny",
            "--ids",
            "1,2",
            "--max-tokens",
            "3",
        ],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_anatomy"))
            .args(args)
            .stdout(full)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("No space left"),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// SIGINT while a 128 MB logits file is being written leaves neither it nor its temporary file.
#[cfg(unix)]
#[test]
fn an_interrupted_write_leaves_nothing() {
    #[path = "support/zeros.rs"]
    mod zeros;
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("wide");
    std::fs::create_dir(&model).unwrap();
    let config = serde_json::json!({
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 16,
        "intermediate_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2,
        "num_key_value_heads": 1, "vocab_size": 65536, "max_position_embeddings": 1024,
        "tie_word_embeddings": true, "torch_dtype": "bfloat16",
    });
    std::fs::write(model.join("config.json"), config.to_string()).unwrap();
    let tensors = zeros::tensors_of(&config);
    std::fs::write(
        model.join("model.safetensors"),
        zeros::safetensors_bf16(&tensors),
    )
    .unwrap();
    let ids = vec!["1"; 512].join(",");
    let out = tmp.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let leftovers = || -> Vec<String> {
        std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect()
    };
    for _ in 0..10 {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_anatomy"))
            .args([
                "run",
                model.to_str().unwrap(),
                "--ids",
                &ids,
                "--max-tokens",
                "1",
            ])
            .arg("--logits")
            .arg(out.join("logits.npy"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Interrupt once the temporary file is there.
        let caught = loop {
            if leftovers().iter().any(|n| n.starts_with(".anatomy-")) {
                // SAFETY: a signal to our own child.
                unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
                break true;
            }
            if child.try_wait().unwrap().is_some() {
                break false;
            }
            std::thread::sleep(Duration::from_micros(200));
        };
        let status = child.wait().unwrap();
        if caught {
            assert_eq!(status.code(), Some(130));
            assert_eq!(leftovers(), Vec::<String>::new());
            return;
        }
        // The write finished first: try again.
        std::fs::remove_file(out.join("logits.npy")).unwrap();
    }
    panic!("never caught the write under way in 10 tries");
}
