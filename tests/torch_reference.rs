//! The PyTorch reference `anatomy torch` writes (the module every page's code comes from) loads
//! each fixture checkpoint's own state dict with strict=True, names and shapes as stored, and
//! gives transformers' logits within 1e-4: the default-config fixtures of every family and the
//! toy-size copies of every catalog config, the wrappers run on an image (their towers held too,
//! also as published checkpoints nest them); a recurrent model's also decoding token by token
//! through its modules' state.

use assert_cmd::Command;

#[path = "support/fixtures.rs"]
mod fixtures;
#[path = "support/paths.rs"]
mod paths;

#[test]
#[cfg_attr(
    not(has_torch),
    ignore = "needs Python with torch, safetensors and NumPy ($ANATOMY_PYTHON, or the venv scripts/test.sh makes)"
)]
fn the_pytorch_reference_loads_each_checkpoint_and_matches_transformers() {
    let tmp = tempfile::tempdir().unwrap();
    let mut args = Vec::new();
    // A draft model's module is written for its assistant and checked on its steps' inputs.
    let drafts = fixtures::drafts()
        .into_iter()
        .map(|d| (d.join("assistant"), d));
    // Wrappers run on an image take it beside their checkpoint (pixels.npy).
    for (checkpoint, dir) in fixtures::all()
        .into_iter()
        .chain(fixtures::images())
        .map(|d| (d.clone(), d))
        .chain(drafts)
    {
        let module = tmp.path().join(format!(
            "{}.py",
            fixtures::name(&dir).replace(['/', '-', '.'], "_")
        ));
        write_module(&checkpoint, &module);
        args.push(module.display().to_string());
        args.push(dir.display().to_string());
    }
    // Towers as the published LLaVA and Gemma 3 checkpoints nest them in their vision model
    // (`vision_tower.vision_model.*`, which transformers 5 drops on load and on save): the
    // module holds them there and loads the checkpoint strictly.
    for name in ["llava-jpeg", "gemma3-jpeg"] {
        let from = fixtures::images()
            .into_iter()
            .find(|d| d.ends_with(name))
            .unwrap();
        let dir = tmp.path().join(format!("published-{name}"));
        std::fs::create_dir(&dir).unwrap();
        for f in ["config.json", "expected.json", "pixels.npy"] {
            std::fs::copy(from.join(f), dir.join(f)).unwrap();
        }
        let rename = "import sys\nfrom safetensors.torch import load_file, save_file\nt = load_file(sys.argv[1])\nsave_file({('vision_tower.vision_model.' + k[len('vision_tower.'):] if k.startswith('vision_tower.') else k): v for k, v in t.items()}, sys.argv[2], metadata={'format': 'pt'})";
        let renamed = std::process::Command::new(paths::python())
            .args(["-c", rename])
            .arg(from.join("model.safetensors"))
            .arg(dir.join("model.safetensors"))
            .output()
            .unwrap();
        assert!(
            renamed.status.success(),
            "{}",
            String::from_utf8_lossy(&renamed.stderr)
        );
        let module = tmp
            .path()
            .join(format!("published_{}.py", name.replace('-', "_")));
        write_module(&dir, &module);
        args.push(module.display().to_string());
        args.push(dir.display().to_string());
    }
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/check_torch_reference.py");
    let run = std::process::Command::new(paths::python())
        .arg(script)
        .args(&args)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let mut report = Vec::new();
    let mut decoded = Vec::new();
    let mut bad = Vec::new();
    for line in String::from_utf8(run.stdout).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let dir = std::path::Path::new(v["fixture"].as_str().unwrap());
        let name = fixtures::name(dir);
        // A cross-attention layer's image path, which text alone skips, is compared apart.
        let cross_ok = v["cross_max_diff"].as_f64().is_none_or(|d| d < 1e-4);
        // A recurrent model's module decodes, token by token through its state (checked on a
        // text prompt: an image fixture's logits are its image's).
        let decodes =
            dir.join("model.safetensors").is_file() && !dir.join("pixels.npy").is_file() && {
                let spec = anatomy_checkpoint::spec(&anatomy_checkpoint::open(dir).unwrap(), false)
                    .unwrap();
                spec.plan.iter().any(|l| l.mixer.recurrent())
            };
        let decode_ok = match v["decode_max_diff"].as_f64() {
            Some(d) if decodes && d < 1e-4 => {
                decoded.push((name.clone(), d));
                true
            }
            None => !decodes,
            Some(_) => false,
        };
        match v["max_diff"].as_f64() {
            Some(d) if d < 1e-4 && cross_ok && decode_ok => report.push((name, d)),
            _ => bad.push(format!("{name}: {}", v)),
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // Every hybrid and recurrent family the suite has a fixture of, and their toy copies.
    assert!(decoded.len() >= 50, "{decoded:?}");
    eprintln!("decoded: {decoded:?}");
    assert_eq!(report.len(), args.len() / 2, "one result per fixture");
    assert!(
        report.len() >= 16 + anatomy_core::catalog::ENTRIES.len(),
        "{report:?}"
    );
    eprintln!("{report:?}");
}

/// `anatomy torch CHECKPOINT`, written to `module`.
fn write_module(checkpoint: &std::path::Path, module: &std::path::Path) {
    let out = Command::cargo_bin("anatomy")
        .unwrap()
        .args(["torch", checkpoint.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(module, out.stdout).unwrap();
}
