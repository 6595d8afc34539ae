//! `anatomy numpy` exports run under plain NumPy and give transformers' logits: every tiny
//! random-weight model of the executor's fixtures (made by transformers) within 1e-4, the
//! wrappers run on an image with it.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

#[path = "support/fixtures.rs"]
mod fixtures;
#[path = "support/npy.rs"]
mod npy;

#[path = "support/paths.rs"]
mod paths;

/// `anatomy numpy` of the model at `dir`, written to `py`.
fn export(dir: &Path, py: &Path) {
    Command::cargo_bin("anatomy")
        .unwrap()
        .args(["numpy", dir.to_str().unwrap(), "-o", py.to_str().unwrap()])
        .assert()
        .success();
}

/// The generated file `py` run with `args`, which must succeed.
fn run_file(name: &str, py: &Path, args: &[&str]) {
    let run = std::process::Command::new(paths::python())
        .arg(py)
        .args(args)
        .output()
        .expect("the Python the build script found NumPy in");
    assert!(
        run.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
}

/// The NumPy file `anatomy numpy` writes for the fixture at `dir` (into `tmp`), and the logits it
/// gives for `ids`, run with `extra` arguments.
fn export_and_run(dir: &Path, tmp: &Path, ids: &str, extra: &[&str]) -> (PathBuf, Vec<f32>) {
    let name = fixtures::name(dir).replace('/', "-");
    let (py, out) = (
        tmp.join(format!("{name}.py")),
        tmp.join(format!("{name}.npy")),
    );
    export(dir, &py);
    let (weights, out_arg) = (dir.to_str().unwrap(), out.to_str().unwrap());
    let mut args = vec!["--weights", weights, "--ids", ids, "--out", out_arg];
    args.extend(extra);
    run_file(&name, &py, &args);
    (py, npy::read_f32(&out).1)
}

#[test]
#[cfg_attr(
    not(has_numpy),
    ignore = "needs Python with NumPy ($ANATOMY_PYTHON, or the venv scripts/test.sh makes)"
)]
fn exported_numpy_matches_transformers() {
    let tmp = tempfile::tempdir().unwrap();
    let mut checked = Vec::new();
    for dir in fixtures::all() {
        let name = fixtures::name(&dir);
        let (ids, _, want) = npy::expected(&dir);
        let (_, got) = export_and_run(&dir, tmp.path(), &ids, &[]);
        let worst = npy::max_diff(&got, &want);
        assert!(worst < 1e-4, "{name}: max |Δlogit| = {worst}");
        checked.push((name, worst));
    }
    assert!(checked.len() >= 16 + 20, "{checked:?}");
    eprintln!("{checked:?}");
}

/// A wrapper run on an image: the file takes the processed image (--pixels), runs its tower and
/// gives transformers' logits.
#[test]
#[cfg_attr(
    not(has_numpy),
    ignore = "needs Python with NumPy ($ANATOMY_PYTHON, or the venv scripts/test.sh makes)"
)]
fn exported_numpy_runs_an_image_as_transformers() {
    let tmp = tempfile::tempdir().unwrap();
    let images = fixtures::images();
    assert!(images.len() >= 2, "{images:?}");
    for dir in images {
        let (ids, _, want) = npy::expected(&dir);
        let pixels = dir.join("pixels.npy");
        let mut args = vec!["--pixels".to_string(), pixels.display().to_string()];
        // LLaVA-NeXT's features follow the image's own size.
        let e: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap())
                .unwrap();
        if let Some(size) = e["image_size"].as_array() {
            args.push("--image-size".into());
            args.extend(size.iter().map(|n| n.to_string()));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (_, got) = export_and_run(&dir, tmp.path(), &ids, &args);
        let worst = npy::max_diff(&got, &want);
        eprintln!("{}: max |Δlogit| {worst:e}", fixtures::name(&dir));
        assert!(
            worst < 1e-4,
            "{}: max |Δlogit| = {worst}",
            fixtures::name(&dir)
        );
    }
}

/// transformers' logits fed one token at a time through its cache where the fixture holds them
/// (a recurrent model's decoding takes another code path), flattened; else its one pass.
fn stepwise(dir: &Path) -> Vec<f32> {
    let e: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let rows: Vec<Vec<f32>> =
        serde_json::from_value(e.get("stepwise_logits").unwrap_or(&e["logits"]).clone()).unwrap();
    rows.concat()
}

/// A model with a recurrent mixer decodes in its export (`--prompt 5`: five ids as one
/// sequence, the chunked forms, then one token at a time through each layer's state, the loops)
/// and gives transformers' token-by-token logits within 1e-4.
#[test]
#[cfg_attr(
    not(has_numpy),
    ignore = "needs Python with NumPy ($ANATOMY_PYTHON, or the venv scripts/test.sh makes)"
)]
fn exported_numpy_decodes_through_the_state_as_transformers() {
    let tmp = tempfile::tempdir().unwrap();
    let mut checked = Vec::new();
    for dir in fixtures::all() {
        let c = anatomy_checkpoint::open(&dir).unwrap();
        let spec = anatomy_checkpoint::spec(&c, false).unwrap();
        if !spec.plan.iter().any(|l| l.mixer.recurrent()) {
            continue;
        }
        let name = fixtures::name(&dir);
        let (ids, n, _) = npy::expected(&dir);
        assert!(n > 6, "{name}: a prompt of 5 and decoded tokens");
        let (py, got) = export_and_run(&dir, tmp.path(), &ids, &["--prompt", "5"]);
        assert!(
            std::fs::read_to_string(&py)
                .unwrap()
                .contains("\"--prompt\""),
            "{name}: no --prompt"
        );
        let worst = npy::max_diff(&got, &stepwise(&dir));
        assert!(worst < 1e-4, "{name}: max |Δlogit| = {worst}");
        checked.push((name, worst));
    }
    // Every hybrid and recurrent family the suite has a fixture of, and their toy copies.
    assert!(checked.len() >= 50, "{checked:?}");
    eprintln!("{checked:?}");
}

/// A draft model's export runs each step from its inputs (the target's state and keys, saved by
/// transformers' drafting loop) and gives transformers' logits and next hidden states.
#[test]
#[cfg_attr(
    not(has_numpy),
    ignore = "needs Python with NumPy ($ANATOMY_PYTHON, or the venv scripts/test.sh makes)"
)]
fn exported_numpy_drafts_as_transformers() {
    let tmp = tempfile::tempdir().unwrap();
    let mut checked = Vec::new();
    for dir in fixtures::drafts() {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let (py, out, hidden) = (
            tmp.path().join(format!("{name}.py")),
            tmp.path().join(format!("{name}.npy")),
            tmp.path().join(format!("{name}-hidden.npy")),
        );
        let assistant = dir.join("assistant");
        export(&assistant, &py);
        run_file(
            &name,
            &py,
            &[
                "--weights",
                assistant.to_str().unwrap(),
                "--inputs",
                dir.join("inputs.npz").to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                "--hidden",
                hidden.to_str().unwrap(),
            ],
        );
        let expected: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap())
                .unwrap();
        let flat = |key: &str| -> Vec<f32> {
            let rows: Vec<Vec<f32>> = serde_json::from_value(expected[key].clone()).unwrap();
            rows.concat()
        };
        let worst = npy::max_diff(&npy::read_f32(&out).1, &flat("logits"))
            .max(npy::max_diff(&npy::read_f32(&hidden).1, &flat("hidden")));
        assert!(worst < 1e-4, "{name}: max |Δ| = {worst}");
        checked.push((name, worst));
    }
    assert_eq!(checked.len(), 2, "{checked:?}");
    eprintln!("{checked:?}");
}

/// The file names itself in its usage, and a folder without safetensors is a clear error.
#[test]
#[cfg_attr(
    not(has_numpy),
    ignore = "needs Python with NumPy ($ANATOMY_PYTHON, or the venv scripts/test.sh makes)"
)]
fn exported_numpy_says_how_to_run_it_and_what_it_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let py = tmp.path().join("qwen.py");
    Command::cargo_bin("anatomy")
        .unwrap()
        .args(["numpy", "qwen3-0.6b", "-o", py.to_str().unwrap()])
        .assert()
        .success();
    let help = std::process::Command::new(paths::python())
        .args([py.to_str().unwrap(), "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("Run: python3 qwen.py --weights DIR"),
        "{help}"
    );
    assert!(!help.contains("{this file}"), "{help}");
    let only_gguf = tmp.path().join("gguf");
    std::fs::create_dir(&only_gguf).unwrap();
    std::fs::write(only_gguf.join("model.gguf"), b"GGUF").unwrap();
    let run = std::process::Command::new(paths::python())
        .args([
            py.to_str().unwrap(),
            "--weights",
            only_gguf.to_str().unwrap(),
        ])
        .args([
            "--ids",
            "1,2",
            "--out",
            tmp.path().join("x.npy").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(err.contains("holds no .safetensors files"), "{err}");
    assert!(!err.contains("Traceback"), "{err}");
}

/// The largest difference `check` prints between a recurrent mixer's two forms in the NumPy
/// file exported for `fixture`: the chunked one the file runs on a prompt and the
/// token-by-token loop it runs on one token, for chunk lengths that split 11 tokens evenly,
/// raggedly, one by one and not at all; their outputs and the states they end in, from a state
/// carried in (as when a prompt follows earlier tokens).
fn loop_and_chunks_differ_by(fixture: &str, check: &str) -> f64 {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fixtures::all()
        .into_iter()
        .find(|d| fixtures::name(d) == fixture)
        .unwrap_or_else(|| panic!("the {fixture} fixture"));
    let py = tmp.path().join("exported.py");
    Command::cargo_bin("anatomy")
        .unwrap()
        .args(["numpy", dir.to_str().unwrap(), "-o", py.to_str().unwrap()])
        .assert()
        .success();
    // `differ(loop, chunked)`: the largest difference over the chunk lengths.
    let head = "import sys\nimport numpy as np\nsys.path.insert(0, sys.argv[1])\nimport exported as m\nrng = np.random.default_rng(0)\ndef flat(r):\n    out, state = r\n    return [out, *(state if isinstance(state, tuple) else (state,))]\ndef differ(loop, chunked):\n    want = flat(loop())\n    return max(float(np.abs(g - w).max()) for c in (1, 3, 4, 11, 64) for g, w in zip(flat(chunked(c)), want, strict=True))\n";
    let run = std::process::Command::new(paths::python())
        .args([
            "-c",
            &format!("{head}{check}"),
            tmp.path().to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    String::from_utf8(run.stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// The exported Mamba2 scan's two forms agree.
#[test]
#[cfg_attr(
    not(has_numpy),
    ignore = "needs Python with NumPy ($ANATOMY_PYTHON, or the venv scripts/test.sh makes)"
)]
fn exported_mamba2_scan_chunks_give_the_loops_sums() {
    let worst = loop_and_chunks_differ_by(
        "mamba2",
        r#"
T, H, P, N = 11, 4, 3, 5
xs = rng.standard_normal((T, H, P)).astype(np.float32)
dt = (0.05 + rng.random((T, H))).astype(np.float32)
A = -np.array([0.5, 1.0, 2.0, 0.1], np.float32)
B, C = (rng.standard_normal((T, H, N)).astype(np.float32) for _ in range(2))
D = rng.standard_normal(H).astype(np.float32)
h = rng.standard_normal((H, P, N)).astype(np.float32)
print(differ(lambda: m.ssd_loop(xs, dt, A, B, C, D, h), lambda q: m.ssd_chunked(xs, dt, A, B, C, D, q, h)))
"#,
    );
    assert!(worst < 1e-5, "chunked and loop differ by {worst}");
}

/// The exported gated delta rule's two forms agree, with a decay per head and per key channel
/// (Kimi's, one channel's steep).
#[test]
#[cfg_attr(
    not(has_numpy),
    ignore = "needs Python with NumPy ($ANATOMY_PYTHON, or the venv scripts/test.sh makes)"
)]
fn exported_delta_rule_chunks_give_the_loops_sums() {
    let worst = loop_and_chunks_differ_by(
        "qwen3_next",
        r#"
T, H, DK, DV = 11, 4, 4, 3
unit = lambda a: a / np.linalg.norm(a, axis=-1, keepdims=True)
q, k = (unit(rng.standard_normal((T, H, DK))).astype(np.float32) for _ in range(2))
v = rng.standard_normal((T, H, DV)).astype(np.float32)
g = -(0.05 + rng.random((T, H))).astype(np.float32)
beta = (0.2 + rng.random((T, H))).astype(np.float32)
gk = -(0.05 + rng.random((T, H, DK))).astype(np.float32)
gk[:, 1, 2] = -30.0
s = 0.3 * rng.standard_normal((H, DK, DV))
print(max(differ(lambda: m.delta_loop(q, k, v, g, beta, s), lambda c: m.delta_chunked(q, k, v, g, beta, c, s)) for g in (g, gk)))
"#,
    );
    assert!(worst < 1e-5, "chunked and loop differ by {worst}");
}

/// The exported lightning attention's two forms agree, over fades from slow to steep.
#[test]
#[cfg_attr(
    not(has_numpy),
    ignore = "needs Python with NumPy ($ANATOMY_PYTHON, or the venv scripts/test.sh makes)"
)]
fn exported_lightning_chunks_give_the_loops_sums() {
    let worst = loop_and_chunks_differ_by(
        "minimax",
        r#"
T, H, D = 11, 3, 4
q, k, v = (0.5 * rng.standard_normal((T, H, D)).astype(np.float32) for _ in range(3))
rate = np.array([0.05, 0.3, 1.2], np.float32)
state = 0.3 * rng.standard_normal((H, D, D)).astype(np.float32)
print(differ(lambda: m.light_loop(q, k, v, rate, state), lambda c: m.light_chunked(q, k, v, rate, c, state)))
"#,
    );
    assert!(worst < 1e-5, "chunked and loop differ by {worst}");
}

/// The exported mLSTM's two forms agree, with input gates above and below the forget gates.
#[test]
#[cfg_attr(
    not(has_numpy),
    ignore = "needs Python with NumPy ($ANATOMY_PYTHON, or the venv scripts/test.sh makes)"
)]
fn exported_mlstm_chunks_give_the_loops_sums() {
    let worst = loop_and_chunks_differ_by(
        "xlstm",
        r#"
T, H, DK, DV = 11, 3, 4, 2
q, k, v = (0.5 * rng.standard_normal((T, H, d)).astype(np.float32) for d in (DK, DK, DV))
i = (4 * rng.standard_normal((T, H))).astype(np.float32)
f = (1 + 3 * rng.standard_normal((T, H))).astype(np.float32)
state = (0.3 * rng.standard_normal((H, DK, DV)), 0.3 * rng.standard_normal((H, DK)), rng.standard_normal(H))
print(differ(lambda: m.mlstm_loop(q, k, v, i, f, 1e-6, state), lambda c: m.mlstm_chunked(q, k, v, i, f, 1e-6, c, state)))
"#,
    );
    assert!(worst < 1e-5, "chunked and loop differ by {worst}");
}
