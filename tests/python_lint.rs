//! The Python anatomy writes is held to a linter: every catalog model's PyTorch module and NumPy
//! file compile and pass pyflakes (no unused import or variable, no undefined name, even in a
//! branch the model never takes); the NumPy template they are made from compiles.

use std::path::Path;
use std::process::Command;

#[path = "support/paths.rs"]
mod paths;

/// Every catalog model's PyTorch module and NumPy file, written into `dir`.
fn write_all(dir: &Path) -> (Vec<String>, Vec<String>) {
    let (mut torch, mut numpy) = (Vec::new(), Vec::new());
    for e in anatomy_core::catalog::ENTRIES {
        let spec = anatomy_core::source::load(e.name, false)
            .unwrap_or_else(|err| panic!("{}: {err}", e.name))
            .spec;
        let g = anatomy_core::graph::build(&spec).unwrap_or_else(|err| panic!("{}: {err}", e.name));
        let stem = e.name.replace(['-', '.'], "_");
        let (t, n) = (format!("torch_{stem}.py"), format!("numpy_{stem}.py"));
        std::fs::write(dir.join(&t), anatomy_core::render::torch::module(&spec)).unwrap();
        std::fs::write(dir.join(&n), anatomy_core::render::numpy::module(&g, &n)).unwrap();
        torch.push(t);
        numpy.push(n);
    }
    (torch, numpy)
}

fn python(dir: &Path, args: &[&str], files: &[String]) -> (bool, String) {
    let out = Command::new(paths::python())
        .current_dir(dir)
        .args(args)
        .args(files)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

#[test]
#[cfg_attr(
    not(has_pyflakes),
    ignore = "needs Python with pyflakes ($ANATOMY_PYTHON, or the venv scripts/setup.sh makes)"
)]
fn every_catalog_models_python_compiles_and_passes_pyflakes() {
    let tmp = tempfile::tempdir().unwrap();
    let (torch, numpy) = write_all(tmp.path());
    assert_eq!(torch.len(), anatomy_core::catalog::ENTRIES.len());
    // The template as it stands in the repository (its names are defined by the header each file
    // gets, so it compiles but is linted only as part of the files).
    let template =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/core/src/render/numpy/template.py");
    std::fs::copy(&template, tmp.path().join("numpy_template.py")).unwrap();
    let generated: Vec<String> = torch.iter().chain(&numpy).cloned().collect();
    let mut all = generated.clone();
    all.push("numpy_template.py".into());
    let (ok, text) = python(tmp.path(), &["-m", "py_compile"], &all);
    assert!(ok, "generated Python that does not compile:\n{text}");
    let (ok, text) = python(tmp.path(), &["-m", "pyflakes"], &generated);
    assert!(ok && text.trim().is_empty(), "pyflakes:\n{text}");
}
