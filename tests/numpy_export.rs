//! `anatomy numpy` exports run under plain NumPy and give transformers' logits: every tiny
//! random-weight model of the executor's fixtures (made by transformers) within 1e-4.

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

#[path = "support/npy.rs"]
mod npy;

#[test]
fn exported_numpy_matches_transformers() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/exec/tests/fixtures");
    let tmp = tempfile::tempdir().unwrap();
    let mut checked = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(&fixtures)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let py = tmp.path().join(format!("{name}.py"));
        let out = tmp.path().join(format!("{name}.npy"));
        Command::cargo_bin("anatomy")
            .unwrap()
            .args(["numpy", dir.to_str().unwrap(), "-o", py.to_str().unwrap()])
            .assert()
            .success();
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap())
                .unwrap();
        let ids: Vec<String> = expected["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.to_string())
            .collect();
        let run = std::process::Command::new("python3")
            .args([
                py.to_str().unwrap(),
                "--weights",
                dir.to_str().unwrap(),
                "--ids",
                &ids.join(","),
                "--out",
                out.to_str().unwrap(),
            ])
            .output()
            .expect("python3 with numpy (CI installs it)");
        assert!(
            run.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let (_, got) = npy::read_f32(&out);
        let want = npy::rows(&expected["logits"]);
        assert_eq!(got.len(), want.len(), "{name}");
        let worst = got
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max);
        assert!(worst < 1e-4, "{name}: max |Δlogit| = {worst}");
        checked.push((name, worst));
    }
    assert!(checked.len() >= 16, "{checked:?}");
    eprintln!("{checked:?}");
}
