//! Every PyTorch snippet the web pages show is valid Python: `python3 -m py_compile` on each
//! part's snippet, the decoder layer's and the assembled module, for every catalog model.

use anatomy_core::render::html::parts;
use anatomy_core::render::torch;
use anatomy_core::{catalog, graph, source};
use std::process::Command;

#[test]
fn every_snippet_compiles() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for e in catalog::ENTRIES {
        let g = graph::build(&source::load(e.name, false).unwrap().spec).unwrap();
        for p in parts(&g, g.spec.context) {
            let path = dir.path().join(format!(
                "{}_{}.py",
                e.name.replace(['.', '-'], "_"),
                p.id.replace('-', "_")
            ));
            std::fs::write(&path, torch::snippet(&g.spec, &p)).unwrap();
            files.push(path);
        }
        let layer = torch::layer_snippet(&g.spec);
        // The block's box shows the layer's piece, less than the whole module; a plain
        // decoder's is its layer class alone.
        let module = torch::module(&g.spec);
        assert!(layer.len() < module.len(), "{}: the whole module", e.name);
        if e.name == catalog::DEFAULT {
            assert!(layer.contains("class DecoderLayer(nn.Module):"), "{layer}");
            assert!(!layer.contains("class Model("), "{layer}");
        }
        let path = dir
            .path()
            .join(format!("{}_layer.py", e.name.replace(['.', '-'], "_")));
        std::fs::write(&path, layer).unwrap();
        files.push(path);
        let path = dir
            .path()
            .join(format!("{}_module.py", e.name.replace(['.', '-'], "_")));
        std::fs::write(&path, module).unwrap();
        files.push(path);
    }
    let out = Command::new("python3")
        .arg("-m")
        .arg("py_compile")
        .args(&files)
        .output()
        .expect("python3 runs (it is on every machine of this project)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(files.len() > 150, "{} files", files.len());
}
