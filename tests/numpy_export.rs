//! `anatomy numpy` exports run under plain NumPy and give transformers' logits: every tiny
//! random-weight model of the executor's fixtures (made by transformers) within 1e-4.

use assert_cmd::Command;
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
        let (ids, _, want) = npy::expected(&dir);
        let run = std::process::Command::new("python3")
            .args([
                py.to_str().unwrap(),
                "--weights",
                dir.to_str().unwrap(),
                "--ids",
                &ids,
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
        let worst = npy::max_diff(&got, &want);
        assert!(worst < 1e-4, "{name}: max |Δlogit| = {worst}");
        checked.push((name, worst));
    }
    assert!(checked.len() >= 16, "{checked:?}");
    eprintln!("{checked:?}");
}
