//! `crates/core/src/families/transformers_reads.txt` is what the installed transformers reads:
//! `scripts/transformers_reads.py --check` remakes it from transformers' source for every model
//! type anatomy reads and compares.

#[path = "support/paths.rs"]
mod paths;

#[cfg_attr(
    not(has_transformers),
    ignore = "needs Python with transformers (scripts/test.sh installs it)"
)]
#[test]
fn the_table_of_keys_transformers_reads_is_the_installed_transformers() {
    let list = std::process::Command::new(env!("CARGO_BIN_EXE_anatomy"))
        .args(["list", "--model-types"])
        .output()
        .unwrap();
    let types: Vec<String> = String::from_utf8(list.stdout)
        .unwrap()
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .collect();
    assert!(types.len() > 100, "{types:?}");
    let out = std::process::Command::new(paths::python())
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/transformers_reads.py"
        ))
        .arg("--check")
        .args(&types)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
