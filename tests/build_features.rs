//! The shipped binary reads a config's numbers correctly rounded, as Python's `json` does:
//! serde_json's `float_roundtrip` is on in the binary's own dependency graph. No test can see this
//! by parsing, because a test build unifies features with the dev-dependencies, one of which turns
//! it on; without it a release build read Inkling 2's `qk_l2_clip_threshold` (22.627416997969522)
//! one unit in the last place off. So this asks cargo what the binary's graph enables.

use std::process::Command;

#[test]
fn the_binarys_json_parser_rounds_correctly() {
    let out = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree",
            "--offline",
            "--locked",
            "-p",
            "anatomy",
            "-e",
            "normal,features",
        ])
        .args(["-i", "serde_json"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("serde_json feature \"float_roundtrip\""),
        "serde_json without float_roundtrip in the binary's graph:\n{text}"
    );
}
