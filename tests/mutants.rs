//! The property behind the toy copies: take a catalog config at toy size, remove some of its keys
//! or give them another valid value (at the top level and inside the RoPE dict), and anatomy
//! either refuses the config with an error or builds the model transformers builds: the same
//! tensors (names, shapes, so the same counts) and the same logits within 1e-4, or, on a config
//! so badly conditioned that float32's rounding carries past that, logits no farther from
//! transformers' float64 ones than its float32 ones are. Where transformers refuses a config,
//! anatomy must refuse it too.
//!
//! The cases come from scripts/make_toy_fixtures.py --mutants (transformers builds each one);
//! $ANATOMY_MUTANTS sets how many (40), $ANATOMY_MUTANT_SEED which (a fixed seed), and
//! $ANATOMY_MUTANT_NAMES (catalog names, comma-separated) from which configs (all of them).

use anatomy_exec::{weights::Weights, Cache, Model};
use std::path::Path;

#[path = "support/paths.rs"]
mod paths;

#[test]
#[cfg_attr(
    not(has_transformers),
    ignore = "needs Python with transformers, torch and safetensors ($ANATOMY_PYTHON, or the venv scripts/test.sh makes)"
)]
fn changed_configs_match_transformers_or_are_refused() {
    let n = std::env::var("ANATOMY_MUTANTS").unwrap_or_else(|_| "40".into());
    let seed = std::env::var("ANATOMY_MUTANT_SEED").unwrap_or_else(|_| "20261130".into());
    let tmp = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/make_toy_fixtures.py");
    let out = std::process::Command::new(paths::python())
        .arg(script)
        .args(["--mutants", &n, "--seed", &seed, "--out"])
        .arg(tmp.path())
        .args(
            std::env::var("ANATOMY_MUTANT_NAMES")
                .unwrap_or_default()
                .split(',')
                .filter(|s| !s.is_empty()),
        )
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut dirs: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    let (mut matched, mut refused_both, mut refused_by_anatomy) = (0, 0, Vec::new());
    let mut bad = Vec::new();
    for dir in &dirs {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let expected: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap())
                .unwrap();
        let changed = expected["changed"].to_string();
        let config = std::fs::read_to_string(dir.join("config.json")).unwrap();
        let spec = anatomy_core::families::load_json("config.json", &config, &name, false)
            .and_then(|s| anatomy_core::graph::build(&s).map(|_| s));
        if let Some(why) = expected["refused"].as_str() {
            match spec {
                Err(_) => refused_both += 1,
                Ok(_) => bad.push(format!(
                    "{name} {changed}: transformers refuses ({why}), anatomy accepts"
                )),
            }
            continue;
        }
        let mut spec = match spec {
            Ok(s) => s,
            Err(e) => {
                refused_by_anatomy.push(format!("{name} {changed}: {e}"));
                continue;
            }
        };
        let c = anatomy_checkpoint::open(dir).unwrap();
        // Read in the layout its header shows, as `anatomy verify` reads it (saved from a model
        // transformers built from the config: unquantized, whatever quantization_config says).
        anatomy_checkpoint::layout::fit(&mut spec, &c.tensors);
        let g = anatomy_core::graph::build(&spec).unwrap();
        let r = anatomy_checkpoint::verify::verify(&g, &c).unwrap();
        if !r.clean() {
            bad.push(format!(
                "{name} {changed}: tensors differ: missing {:?} unexpected {:?} mis-shaped {:?}",
                r.missing,
                r.unexpected.iter().map(|t| &t.name).collect::<Vec<_>>(),
                r.misshaped
            ));
            continue;
        }
        let w = Weights::load(&c, &spec, &mut |_, _| {}).unwrap();
        let model = Model::new(spec, w).unwrap();
        let ids: Vec<u32> = serde_json::from_value(expected["ids"].clone()).unwrap();
        let want: Vec<Vec<f32>> = serde_json::from_value(expected["logits"].clone()).unwrap();
        let got: Vec<Vec<f32>> = model
            .forward(&ids, &mut Cache::new(model.spec.layers as usize))
            .unwrap()
            .to_vec2()
            .unwrap();
        let diff = |x: &[Vec<f32>], y: &[Vec<f32>]| {
            x.iter()
                .flatten()
                .zip(y.iter().flatten())
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f32::max)
        };
        let d = diff(&got, &want);
        // A recurrent model's reference computes the same logits two ways (its chunked prompt
        // and its token-by-token decoding); where those differ past 1e-4 on a badly conditioned
        // config, anatomy must be within that spread of the prompt's.
        let spread = match expected.get("stepwise_logits") {
            Some(s) => diff(
                &serde_json::from_value::<Vec<Vec<f32>>>(s.clone()).unwrap(),
                &want,
            ),
            None => 0.0,
        };
        // On such a config both float32 answers stray from the exact one (transformers' in
        // float64) in their own ways, and may stray from each other by the sum: anatomy's must
        // then be no farther from the exact logits than transformers' float32 ones are.
        let exact = expected
            .get("exact_logits")
            .map(|e| serde_json::from_value::<Vec<Vec<f32>>>(e.clone()).unwrap());
        let as_exact = exact
            .as_ref()
            .is_some_and(|e| diff(&got, e) <= diff(&want, e));
        if d < 1e-4 || d <= spread || as_exact {
            matched += 1;
        } else {
            bad.push(format!(
                "{name} {changed}: max |Δlogit| = {d} (transformers' own two paths differ by {spread}; from its float64 logits, anatomy's are {:?} away and its own {:?})",
                exact.as_ref().map(|e| diff(&got, e)),
                exact.as_ref().map(|e| diff(&want, e))
            ));
        }
    }
    eprintln!(
        "{} cases: {matched} match transformers, {refused_both} refused by both, {} refused by anatomy alone:\n{}",
        dirs.len(),
        refused_by_anatomy.len(),
        refused_by_anatomy.join("\n")
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(
        matched * 2 > dirs.len(),
        "most cases must build and match, not be refused"
    );
}
