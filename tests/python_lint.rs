//! The Python anatomy writes is held to a linter: every catalog model's PyTorch module, and the
//! NumPy file of every catalog model, every registry row's defaults and every executor fixture's
//! config, compile and pass pyflakes (no unused import or variable, no undefined name, even in a
//! branch the model never takes). The NumPy fragments they are joined from compile on their own;
//! every line of them is in some file linted here (the fragments' own test,
//! `every_line_of_the_fragments_is_some_models`, holds that).

use std::path::Path;
use std::process::Command;

#[path = "support/fixtures.rs"]
mod fixtures;
#[path = "support/paths.rs"]
mod paths;

/// Every catalog model's PyTorch module, and the NumPy file of every model of the sweep
/// (`anatomy_core::corpus`), written into `dir`.
fn write_all(dir: &Path) -> (Vec<String>, Vec<String>) {
    let (mut torch, mut numpy) = (Vec::new(), Vec::new());
    for m in anatomy_core::corpus::models() {
        let g =
            anatomy_core::graph::build(&m.spec).unwrap_or_else(|err| panic!("{}: {err}", m.name));
        if m.from == anatomy_core::corpus::From::Catalog {
            let t = format!("torch_{}.py", m.name);
            std::fs::write(dir.join(&t), anatomy_core::render::torch::module(&m.spec)).unwrap();
            torch.push(t);
        }
        let n = format!("numpy_{}.py", m.name);
        std::fs::write(dir.join(&n), anatomy_core::render::numpy::module(&g, &n)).unwrap();
        numpy.push(n);
    }
    // The wrappers run on an image: their modules hold the towers' classes.
    for fixture in fixtures::images() {
        let c = anatomy_checkpoint::open(&fixture).unwrap();
        let spec = anatomy_checkpoint::spec(&c, false).unwrap();
        let t = format!(
            "torch_image_{}.py",
            fixtures::name(&fixture).replace(['/', '-'], "_")
        );
        std::fs::write(dir.join(&t), anatomy_core::render::torch::module(&spec)).unwrap();
        torch.push(t);
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
    assert_eq!(
        torch.len(),
        anatomy_core::catalog::ENTRIES.len() + fixtures::images().len()
    );
    assert!(numpy.len() > 400, "{} NumPy files", numpy.len());
    // The fragments as they stand in the repository (their names are defined by the header each
    // file gets and by each other, so they compile alone but are linted as the files made).
    let mut all: Vec<String> = torch.iter().chain(&numpy).cloned().collect();
    let generated = all.clone();
    let render = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/core/src/render");
    for (view, dir) in [
        ("numpy", render.join("numpy/py")),
        ("torch", render.join("torch")),
    ] {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            if e.path().extension().is_none_or(|x| x != "py") {
                continue;
            }
            let name = format!("fragment_{view}_{}", e.file_name().to_string_lossy());
            std::fs::copy(e.path(), tmp.path().join(&name)).unwrap();
            all.push(name);
        }
    }
    let (ok, text) = python(tmp.path(), &["-m", "py_compile"], &all);
    assert!(ok, "generated Python that does not compile:\n{text}");
    let (ok, text) = python(tmp.path(), &["-m", "pyflakes"], &generated);
    assert!(ok && text.trim().is_empty(), "pyflakes:\n{text}");
}
