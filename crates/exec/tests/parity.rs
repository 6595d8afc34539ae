//! The executor against transformers: logits of tiny random-weight models of every family it runs
//! (scripts/make_exec_fixtures.py) and of toy-size copies of every catalog config with all their
//! keys (scripts/make_toy_fixtures.py) agree within 1e-4, in one pass and token by token through
//! the KV cache; each checkpoint is exactly what the graph says (`verify`).

use anatomy_core::graph::Point;
use anatomy_exec::{weights::Weights, Cache, Model};
use std::path::Path;

mod common;
use common::{fixtures, load};

use fixtures::all as fixtures;

/// transformers' logits fed one token at a time through its cache, where the fixture holds them
/// (models with a recurrent state, whose decoding takes another code path); else its one pass.
fn stepwise(dir: &Path, one_pass: Vec<Vec<f32>>) -> Vec<Vec<f32>> {
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    match expected.get("stepwise_logits") {
        Some(v) => serde_json::from_value(v.clone()).unwrap(),
        None => one_pass,
    }
}

fn max_diff(got: &[Vec<f32>], want: &[Vec<f32>]) -> f32 {
    assert_eq!(got.len(), want.len(), "positions");
    assert!(
        got.iter().zip(want).all(|(g, w)| g.len() == w.len()),
        "vocabulary"
    );
    got.iter()
        .zip(want)
        .flat_map(|(g, w)| g.iter().zip(w).map(|(a, b)| (a - b).abs()))
        .fold(0.0, f32::max)
}

#[test]
fn logits_match_transformers() {
    let mut report = Vec::new();
    for dir in fixtures() {
        let (model, ids, want) = load(&dir);
        let got: Vec<Vec<f32>> = model
            .forward(&ids, &mut Cache::new(model.spec.layers as usize))
            .unwrap()
            .to_vec2()
            .unwrap();
        let d = max_diff(&got, &want);
        report.push((fixtures::name(&dir), d));
    }
    eprintln!("{report:?}");
    assert!(
        report.len() >= 16 + anatomy_core::catalog::ENTRIES.len(),
        "{report:?}"
    );
    let bad: Vec<_> = report.iter().filter(|(_, d)| *d >= 1e-4).collect();
    assert!(bad.is_empty(), "max |Δlogit| ≥ 1e-4: {bad:?}");
}

/// Dynamic NTK and LongRoPE choose frequencies by the sequence length: once decoding passes
/// their threshold, keys already cached keep the rotation of the shorter sequence (as in
/// transformers' own generation), so a one-pass forward of all the ids is not the reference.
fn rescales_within(spec: &anatomy_core::spec::Spec, len: usize) -> bool {
    use anatomy_core::spec::{Position, RopeScaling};
    let Position::Rope(r) = &spec.position else {
        return false;
    };
    std::iter::once(&r.full)
        .chain(&r.sliding)
        .any(|f| match &f.scaling {
            RopeScaling::Dynamic { original, .. } | RopeScaling::LongRope { original, .. } => {
                (*original as usize) < len
            }
            _ => false,
        })
}

#[test]
fn the_kv_cache_gives_the_same_logits() {
    for dir in fixtures() {
        let (model, ids, want) = load(&dir);
        if rescales_within(&model.spec, ids.len()) || decodes_otherwise(&model.spec) {
            continue;
        }
        let want = stepwise(&dir, want);
        let got = prompted_then_stepped(&model, &ids, 5);
        let d = max_diff(&got, &want);
        assert!(d < 1e-4, "{}: max |Δlogit| = {d}", fixtures::name(&dir));
        // Decoding asks for the last position's logits alone.
        let last: Vec<Vec<f32>> = model
            .forward_last(&ids, &mut Cache::new(model.spec.layers as usize))
            .unwrap()
            .to_vec2()
            .unwrap();
        let d = max_diff(&last, &want[want.len() - 1..]);
        assert!(
            d < 1e-4,
            "{}: last position, max |Δlogit| = {d}",
            dir.display()
        );
    }
}

/// The logits of `ids`: the first `prompt` in one pass, then one token at a time through the cache.
fn prompted_then_stepped(model: &Model, ids: &[u32], prompt: usize) -> Vec<Vec<f32>> {
    let mut cache = Cache::new(model.spec.layers as usize);
    let mut got: Vec<Vec<f32>> = if prompt > 0 {
        model
            .forward(&ids[..prompt], &mut cache)
            .unwrap()
            .to_vec2()
            .unwrap()
    } else {
        Vec::new()
    };
    for &id in &ids[prompt..] {
        got.extend(
            model
                .forward(&[id], &mut cache)
                .unwrap()
                .to_vec2::<f32>()
                .unwrap(),
        );
    }
    got
}

/// Models for which a prompt run whole is not the same computation as one run token by token:
/// Dory with only its last pass caching (the earlier passes attend over the last pass's keys of
/// earlier tokens), a model whose prompt attends both ways (CPM-Ant, PaliGemma), and BLT with
/// patches cut to a length.
fn decodes_otherwise(spec: &anatomy_core::spec::Spec) -> bool {
    // BLT with patches cut to a length: a prefix's patches are not the whole sequence's.
    spec.bytes().as_ref().is_some_and(|b| b.max_patch.is_some())
        || spec.looped().is_some_and(|l| l.shared_cache)
        || spec.prefix_lm
        || spec
            .plan
            .iter()
            .any(|l| l.span() == Some(anatomy_core::spec::AttnSpan::Whole))
}

/// Such a model fed one token at a time from the start gives transformers' logits fed so, and
/// its last position of a prompt run whole the one-pass logits' last.
#[test]
fn a_model_that_decodes_otherwise_decodes_as_transformers_does() {
    let mut seen = 0;
    for dir in fixtures() {
        let (model, ids, one_pass) = load(&dir);
        if !decodes_otherwise(&model.spec) {
            continue;
        }
        let last: Vec<Vec<f32>> = model
            .forward_last(&ids, &mut Cache::new(model.spec.layers as usize))
            .unwrap()
            .to_vec2()
            .unwrap();
        let d = max_diff(&last, &one_pass[one_pass.len() - 1..]);
        assert!(
            d < 1e-4,
            "{}: last position, max |Δlogit| = {d}",
            fixtures::name(&dir)
        );
        let want: Vec<Vec<f32>> = {
            let e: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap())
                    .unwrap();
            serde_json::from_value(e["stepwise_logits"].clone())
                .unwrap_or_else(|_| panic!("{}: no stepwise_logits", fixtures::name(&dir)))
        };
        let got = prompted_then_stepped(&model, &ids, 0);
        let d = max_diff(&got, &want);
        assert!(d < 1e-4, "{}: max |Δlogit| = {d}", fixtures::name(&dir));
        // Not the one-pass logits: the test would pass on a model that ignored the mode.
        let (_, _, one_pass) = load(&dir);
        assert!(max_diff(&got, &one_pass) > 1e-3, "{}", fixtures::name(&dir));
        seen += 1;
    }
    assert!(
        seen > 1,
        "a fixture of each kind, Dory's last pass and CPM-Ant's"
    );
}

/// Every catalog entry has its toy copy, and each toy checkpoint holds exactly the tensors the
/// graph of its config names, with their shapes.
#[test]
fn every_catalog_config_has_a_toy_copy_the_graph_matches() {
    let toys: Vec<String> = fixtures::toys().iter().map(|d| fixtures::name(d)).collect();
    for e in anatomy_core::catalog::ENTRIES {
        assert!(
            toys.contains(&format!("toy/{}", e.name)),
            "no toy copy of {}: run scripts/make_toy_fixtures.py {}",
            e.name,
            e.name
        );
    }
    for dir in fixtures::all() {
        let c = anatomy_checkpoint::open(&dir).unwrap();
        let g = anatomy_core::graph::build(&anatomy_checkpoint::spec(&c, false).unwrap()).unwrap();
        let r = anatomy_checkpoint::verify::verify(&g, &c).unwrap();
        assert!(
            r.clean(),
            "{}: missing {:?} unexpected {:?} mis-shaped {:?}",
            fixtures::name(&dir),
            r.missing,
            r.unexpected.iter().map(|t| &t.name).collect::<Vec<_>>(),
            r.misshaped
        );
    }
}

/// Every catalog model the executor runs has a scaled-down copy that runs on random weights, and
/// is small: every size shrunk, whatever mixer holds it.
#[test]
fn every_catalog_model_runs_tiny() {
    for e in anatomy_core::catalog::ENTRIES {
        let spec = anatomy_core::source::load(e.name, false).unwrap().spec;
        runs_tiny(e.name, &spec);
    }
}

/// So does every model type's default config as transformers saves it (the page's op view runs
/// that copy for any config): its sizes may be far from any catalog model's (Kolibri 1.1's 12
/// index heads against the copy's 4 query heads).
#[test]
fn every_model_types_defaults_run_tiny() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/tests/fixtures/saved");
    let mut ran = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let shown = path.display().to_string();
        // A saved config anatomy refuses is held to its refusal by the exactness tests.
        let Ok(source) = anatomy_core::source::load(&shown, false) else {
            continue;
        };
        // A draft model runs on its target's state (tests/draft.rs runs them so).
        if source.spec.draft.is_some() {
            continue;
        }
        runs_tiny(&shown, &source.spec);
        ran += 1;
    }
    assert!(ran > 140, "{ran} saved default configs ran");
}

fn runs_tiny(name: &str, spec: &anatomy_core::spec::Spec) {
    let tiny = anatomy_exec::tiny::shrink(spec);
    let g = anatomy_core::graph::build(&tiny).unwrap();
    let total = anatomy_core::stats::stats(&g, None).unwrap().total_params;
    assert!(total < 1_000_000, "{name}: {total} parameters");
    let w = anatomy_exec::tiny::random_weights(&g, 7).unwrap();
    match Model::new(tiny.clone(), w) {
        Ok(model) => {
            let logits = model
                .forward(&[1, 2, 3, 4, 5], &mut Cache::new(tiny.layers as usize))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(logits.dims(), [5, tiny.logits_width() as usize], "{name}");
            let v: Vec<Vec<f32>> = logits.to_vec2().unwrap();
            assert!(v.iter().flatten().all(|x| x.is_finite()), "{name}");
        }
        Err(err) => assert!(tiny.attn.mla.is_some(), "{name}: {err}"),
    }
}

/// A captured run records every activation with its statistics, and small ones whole; the routing
/// table has each token's chosen experts and zeros elsewhere.
#[test]
fn capture_records_every_activation() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mixtral");
    let (model, ids, want) = load(&dir);
    let (logits, captured) = model.forward_captured(&ids).unwrap();
    assert!(
        max_diff(&logits.to_vec2().unwrap(), &want) < 1e-4,
        "capturing changes nothing"
    );
    for point in [
        Point::Embed,
        Point::AttnNorm,
        Point::Q,
        Point::K,
        Point::V,
        Point::Scores,
        Point::Probs,
        Point::Heads,
        Point::AttnOut,
        Point::ResidAttn,
        Point::FfnNorm,
        Point::Router,
        Point::Routing,
        Point::ExpertGate,
        Point::ExpertAct,
        Point::ExpertDown,
        Point::Combine,
        Point::ResidFfn,
        Point::FinalNorm,
        Point::Logits,
    ] {
        let c = captured
            .iter()
            .find(|c| c.point == point)
            .unwrap_or_else(|| panic!("{point} not captured"));
        let s = c.summary;
        assert!(s.std.is_finite() && s.max >= s.min, "{point}: {c:?}");
    }
    let routing = captured
        .iter()
        .find(|c| c.point == Point::Routing && c.layer == Some(0))
        .unwrap();
    let (t, e) = (routing.shape[0], routing.shape[1]);
    let table = routing.values.as_ref().unwrap();
    for row in table.chunks(e) {
        assert_eq!(row.iter().filter(|w| **w != 0.0).count(), 2, "top-2 of {e}");
        assert!(
            (row.iter().sum::<f32>() - 1.0).abs() < 1e-5,
            "renormalized weights"
        );
    }
    assert_eq!(t, ids.len());
    let probs = captured
        .iter()
        .find(|c| c.point == Point::Probs && c.layer == Some(1))
        .unwrap();
    let p = probs.values.as_ref().unwrap();
    assert!(
        (p[..ids.len()].iter().sum::<f32>() - 1.0).abs() < 1e-5,
        "each attention row sums to 1"
    );
}

/// A forward pass whose logits are not all finite is an error naming the first step whose
/// output was not, in the layer where it happened, whether decoding or not.
#[test]
fn non_finite_logits_name_the_first_bad_step() {
    let dir = fixtures::all()
        .into_iter()
        .find(|d| fixtures::name(d) == "llama")
        .unwrap();
    let c = anatomy_checkpoint::open(&dir).unwrap();
    let spec = anatomy_checkpoint::spec(&c, false).unwrap();
    let mut w = Weights::load(&c, &spec, &mut |_, _| {}).unwrap();
    let name = "model.layers.1.post_attention_layernorm.weight";
    let mut v: Vec<f32> = w.tensors[name].to_vec1().unwrap();
    v[3] = f32::NAN;
    w.tensors.insert(
        name.into(),
        candle_core::Tensor::from_vec(v, w.tensors[name].dims(), &candle_core::Device::Cpu)
            .unwrap(),
    );
    let model = Model::new(spec, w).unwrap();
    let e = model
        .forward(&[1, 2, 3], &mut Cache::new(model.spec.layers as usize))
        .unwrap_err();
    assert!(
        e.message.contains("MLP RMSNorm") && e.message.contains("in layer 1"),
        "{e}"
    );
    assert!(e.message.contains("3 of its 96 values"), "{e}");
    // In a decode step too, on the state the cache had.
    let mut cache = Cache::new(model.spec.layers as usize);
    assert!(model.forward(&[1], &mut cache).is_err());
}

/// Every fixture's model, whatever mechanisms it combines, renders every view: the terminal
/// walkthrough, the page with the op view's values from a run of its checkpoint, the op list's
/// sources, stats, the NumPy file and the PyTorch module.
#[test]
fn every_fixture_renders_every_view_with_values_from_a_run() {
    use anatomy_core::render;
    for dir in fixtures() {
        let name = fixtures::name(&dir);
        let c = anatomy_checkpoint::open(&dir).unwrap();
        let spec = anatomy_checkpoint::spec(&c, false).unwrap();
        let g = anatomy_core::graph::build(&spec).unwrap();
        let values = anatomy_exec::session::op_values(&dir, &g, false)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let page = render::html::page(&render::html::PageInput {
            graph: &g,
            provenance: &name,
            context: None,
            values: Some(&values),
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(page.contains("</html>"), "{name}");
        let opts = render::terminal::Options {
            width: 100,
            color: false,
            step: None,
        };
        assert!(!render::terminal::render(&g, &opts).unwrap().is_empty());
        anatomy_core::stats::stats(&g, Some(4096)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(render::numpy::module(&g, "model.py").contains("def forward("));
        assert!(render::torch::module(&spec).contains("class Model("));
    }
}

/// CPM-Ant takes id 0 for padding, which its forward pass treats otherwise than a token: the
/// executor refuses it, in a prompt and when decoding, rather than compute something else.
#[test]
fn cpmant_refuses_the_padding_id() {
    let dir = fixtures::all()
        .into_iter()
        .find(|d| fixtures::name(d) == "cpmant")
        .unwrap();
    let (model, _, _) = load(&dir);
    let mut cache = Cache::new(model.spec.layers as usize);
    let e = model.forward(&[3, 0, 5], &mut cache).unwrap_err();
    assert!(e.to_string().contains("padding"), "{e}");
    model.forward(&[3, 5], &mut cache).unwrap();
    assert!(model.forward(&[0], &mut cache).is_err());
}
