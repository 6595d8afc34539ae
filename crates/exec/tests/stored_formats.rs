//! A toy model with its projections held in each GGUF block format, as `run --dtype stored` holds
//! a GGUF's: its logits against the f32 path on the same weights (the stored blocks
//! dequantized). The difference is the activations' quantization in the quantized kernels (8
//! bits per value in a decode step, 16 in a prompt's tiles on AVX-512), so the tolerance is
//! stated per format against the logits' own spread.
use anatomy_exec::{Cache, Model};
use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::{DType, Device};

/// Each format, and how far its logits may lie from the f32 path's, as a fraction of the f32
/// logits' largest magnitude: about twice what was measured (0.009 to 0.012 for the formats
/// `qlinear` multiplies, with a decode step's activations quantized in blocks of 32, 0.0115 for
/// its 3-bit Q3_K; 0.0225 for Q2_K, which candle multiplies, in blocks of 256). A wrong kernel
/// is off by the logits' whole size.
const FORMATS: [(GgmlDType, f32); 10] = [
    (GgmlDType::Q4_0, 0.02),
    (GgmlDType::Q4_1, 0.02),
    (GgmlDType::Q5_0, 0.02),
    (GgmlDType::Q5_1, 0.02),
    (GgmlDType::Q8_0, 0.02),
    (GgmlDType::Q2K, 0.045),
    (GgmlDType::Q3K, 0.025),
    (GgmlDType::Q4K, 0.02),
    (GgmlDType::Q5K, 0.02),
    (GgmlDType::Q6K, 0.02),
];

/// Llama 3.2 3B's structure (tied embeddings, grouped K/V heads) at sizes every block format
/// divides: rows of 256 and 512 values.
fn toy() -> anatomy_core::spec::Spec {
    let spec = anatomy_core::source::load("llama-3.2-3b", false)
        .unwrap()
        .spec;
    let mut s = anatomy_exec::tiny::shrink(&spec);
    s.hidden = 256;
    s.mlp.intermediate = 512;
    s.attn.head_dim = 64;
    s.attn.v_head_dim = 64;
    s.attn.scale_dim = 64.0;
    s
}

#[test]
fn every_stored_format_gives_the_f32_paths_logits_within_its_tolerance() {
    let spec = toy();
    let g = anatomy_core::graph::build(&spec).unwrap();
    let ids: Vec<u32> = (0..12).map(|i| (i * 37 + 5) % spec.vocab as u32).collect();
    let logits = |m: &Model, ids: &[u32]| -> Vec<f32> {
        let mut cache = Cache::new(spec.layers as usize);
        let mut v: Vec<f32> = m
            .forward(ids, &mut cache)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1()
            .unwrap();
        // A decode step too: one row, the other kernel.
        let next: Vec<f32> = m
            .forward(&[3], &mut cache)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1()
            .unwrap();
        v.extend(next);
        v
    };
    for (format, tolerance) in FORMATS {
        let mut stored = anatomy_exec::tiny::random_weights(&g, 11).unwrap();
        let mut exact = anatomy_exec::tiny::random_weights(&g, 11).unwrap();
        let names: Vec<String> = stored
            .tensors
            .iter()
            .filter(|(_, t)| t.rank() == 2)
            .map(|(n, _)| n.clone())
            .collect();
        for name in &names {
            let t = stored.tensors.remove(name).unwrap();
            let q = QTensor::quantize(&t, format).unwrap();
            let d = q
                .dequantize(&Device::Cpu)
                .unwrap()
                .to_dtype(DType::F32)
                .unwrap();
            exact.tensors.insert(name.clone(), d);
            stored
                .stored
                .insert(name.clone(), anatomy_exec::weights::Stored::Blocks(q));
        }
        let stored = Model::new(spec.clone(), stored).unwrap();
        let held = stored.held();
        assert!(held.starts_with("stored format"), "{format:?}: {held}");
        let exact = Model::new(spec.clone(), exact).unwrap();
        let (a, b) = (logits(&stored, &ids), logits(&exact, &ids));
        let scale = b.iter().fold(0f32, |m, v| m.max(v.abs()));
        let worst = a
            .iter()
            .zip(&b)
            .fold(0f32, |m, (x, y)| m.max((x - y).abs()));
        eprintln!(
            "{format:?}: max |Δlogit| {worst:.2e}, {:.4} of max |logit| {scale:.2}",
            worst / scale
        );
        assert!(
            worst <= tolerance * scale,
            "{format:?}: {worst} > {tolerance} × {scale}"
        );
    }
}

#[path = "../../../tests/support/fixtures.rs"]
mod fixtures;

/// Every parity fixture (each family the executor runs, default and published configs) saved in
/// bf16: held as stored, its 16-bit matrices multiplied in 16 bits, it gives the logits of the
/// same file widened to f32 at load, to f32 rounding (the values are the same; only the order
/// of the sums differs).
#[test]
fn every_fixture_in_bf16_runs_stored_as_it_runs_widened_to_f32() {
    use anatomy_exec::weights::{Hold, Weights};
    let mut worst = (0f32, String::new());
    for dir in fixtures::all() {
        let name = fixtures::name(&dir);
        let tmp = tempfile::tempdir().unwrap();
        let loaded =
            candle_core::safetensors::load(dir.join("model.safetensors"), &Device::Cpu).unwrap();
        let bf16: std::collections::HashMap<String, candle_core::Tensor> = loaded
            .into_iter()
            .map(|(n, t)| {
                let t = if t.dtype().is_float() {
                    t.to_dtype(DType::BF16).unwrap()
                } else {
                    t
                };
                (n, t)
            })
            .collect();
        candle_core::safetensors::save(&bf16, tmp.path().join("model.safetensors")).unwrap();
        std::fs::copy(dir.join("config.json"), tmp.path().join("config.json")).unwrap();
        let c = anatomy_checkpoint::open(tmp.path()).unwrap();
        let spec = anatomy_checkpoint::spec(&c, false).unwrap();
        let expected: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap())
                .unwrap();
        let ids: Vec<u32> = serde_json::from_value(expected["ids"].clone()).unwrap();
        let run = |hold: Hold| -> (Vec<f32>, String) {
            let w = Weights::load_held(&c, &spec, hold, &mut |_, _| {}).unwrap();
            let m = Model::new(spec.clone(), w).unwrap();
            let v = m
                .forward(&ids, &mut Cache::new(spec.layers as usize))
                .unwrap();
            (v.flatten_all().unwrap().to_vec1().unwrap(), m.held())
        };
        let ((stored, held), (widened, _)) = (run(Hold::Stored), run(Hold::F32));
        assert!(held.contains("BF16 × "), "{name}: {held}");
        let scale = widened.iter().fold(1f32, |m, v| m.max(v.abs()));
        let diff = stored
            .iter()
            .zip(&widened)
            .fold(0f32, |m, (a, b)| m.max((a - b).abs()));
        assert!(
            diff <= 1e-4 * scale,
            "{name}: logits {diff} apart (largest {scale})"
        );
        if diff / scale > worst.0 {
            worst = (diff / scale, name);
        }
    }
    let count = fixtures::all().len();
    eprintln!(
        "{count} fixtures; largest difference: {:.1e} of the largest logit ({})",
        worst.0, worst.1
    );
}

/// GGUF files as llama.cpp's converter writes them (scripts/make_gguf_fixtures.py, which checks
/// each against llama.cpp itself): mixtures of experts with each layer's experts stacked in one
/// tensor, a Mixtral (a llama with experts, Q and K rows permuted), a Qwen3-MoE and a Qwen2-MoE
/// (a shared expert behind a sigmoid gate, Q/K/V biases), a Gemma 2 (its norm weights stored
/// as 1 + w) and a Gemma 3 (Q and K norms too; five local layers per global one, whose RoPE is
/// scaled), a dense Qwen2 and Qwen3, a Phi-3 (fused Q/K/V and gate/up), an OLMo 2 (norms after
/// each sublayer), a SmolLM3 (every fourth layer without RoPE) and a Granite (four multipliers),
/// the last two with Q and K rows permuted, a StarCoder2 (LayerNorms, biases everywhere) and a
/// Command R (attention and MLP side by side, logits scaled). In F32 each gives transformers' logits, in one pass and token by token; its Q8_0
/// copy, held as stored (each expert's slab of blocks multiplied on its own), gives the f32
/// path's within the Q8_0 tolerance above.
#[test]
fn ggufs_as_llama_cpp_writes_them_run_like_transformers_and_stored_like_f32() {
    for (fixture, moe, half) in [
        ("mixtral", true, Some("F16")),
        ("qwen3-moe", true, Some("BF16")),
        ("qwen2-moe", true, None),
        ("gemma2", false, None),
        ("gemma3", false, None),
        ("gemma4", false, None),
        ("qwen2", false, None),
        ("qwen3", false, None),
        ("phi3", false, None),
        ("olmo2", false, None),
        ("smollm3", false, None),
        ("granite", false, None),
        ("starcoder2", false, None),
        ("command-r", false, None),
        ("gemma", false, None),
        ("stablelm", false, None),
        ("olmo", false, None),
        ("arcee", false, None),
        ("ernie4_5", false, None),
        ("nemotron", false, None),
        ("olmoe", true, None),
        ("seed_oss", false, None),
        ("phi2", false, None),
        ("starcoder", false, None),
        ("gptneox", false, None),
        ("bloom", false, None),
        ("falcon", false, None),
        ("falcon-40b", false, None),
        ("mpt", false, None),
        ("cohere2", false, None),
        ("glm4", false, None),
        ("exaone4", false, None),
        ("ernie4_5-moe", true, None),
        ("mistral3", false, None),
        ("exaone", false, None),
        ("minimax-m2", true, None),
        ("hunyuan-dense", false, None),
        ("gpt2", false, None),
        ("jais2", false, None),
        ("hunyuan-moe", true, None),
        ("lfm2", false, None),
        ("mamba2", false, None),
        ("mamba", false, None),
    ] {
        gguf_fixture(fixture, moe, half);
    }
}

/// The checkpoint at `path`, its bytes where its header says and every tensor the graph names
/// there in its shape, loaded as `hold` says.
fn verified_model(path: &std::path::Path, hold: anatomy_exec::weights::Hold) -> Model {
    let c = anatomy_checkpoint::open(path).unwrap();
    assert!(c.problems.is_empty(), "{path:?}: {:?}", c.problems);
    let spec = anatomy_checkpoint::spec(&c, false).unwrap();
    let g = anatomy_core::graph::build(&spec).unwrap();
    let r = anatomy_checkpoint::verify::verify(&g, &c).unwrap();
    assert!(
        r.missing.is_empty() && r.misshaped.is_empty(),
        "{path:?}: {:?} {:?}",
        r.missing,
        r.misshaped
    );
    let w = anatomy_exec::weights::Weights::load_held(&c, &spec, hold, &mut |_, _| {}).unwrap();
    Model::new(spec, w).unwrap()
}

/// `fixture`'s F32 GGUF against transformers, dequantized and held as stored, in one pass and
/// token by token; its Q8_0 and `half` (F16 or BF16) copies held as stored against the f32 path
/// on the same file: Q8_0 within its tolerance, the 16-bit floats (widened exactly) within f32
/// rounding. Held as stored, every matrix the file holds in Q8_0 (each expert of a stack one)
/// but a learned position table and GPT-2's Conv1D weights is a projection in the stored
/// format.
fn gguf_fixture(fixture: &str, moe: bool, half: Option<&str>) {
    use anatomy_exec::weights::Hold;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/gguf")
        .join(fixture);
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let ids: Vec<u32> = serde_json::from_value(expected["ids"].clone()).unwrap();
    let want: Vec<Vec<f32>> = serde_json::from_value(expected["logits"].clone()).unwrap();
    let model = |file: &str, hold: Hold| {
        let m = verified_model(&dir.join(file), hold);
        assert_eq!(
            m.spec.is_moe(),
            moe,
            "{file}: read as {}",
            m.spec.model_type
        );
        m
    };
    let rows = |m: &Model| -> Vec<Vec<f32>> {
        m.forward(&ids, &mut Cache::new(m.spec.layers as usize))
            .unwrap()
            .to_vec2()
            .unwrap()
    };
    let apart = |a: &[Vec<f32>], b: &[Vec<f32>]| {
        a.iter()
            .flatten()
            .zip(b.iter().flatten())
            .fold(0f32, |m, (x, y)| m.max((x - y).abs()))
    };
    for hold in [Hold::F32, Hold::Stored] {
        let m = model("model-f32.gguf", hold);
        assert!(
            apart(&rows(&m), &want) <= 1e-4,
            "{fixture}, {hold:?}: {}",
            apart(&rows(&m), &want)
        );
        let mut cache = Cache::new(m.spec.layers as usize);
        let stepwise: Vec<Vec<f32>> = ids
            .iter()
            .map(|&id| {
                m.forward(&[id], &mut cache)
                    .unwrap()
                    .to_vec2::<f32>()
                    .unwrap()
                    .remove(0)
            })
            .collect();
        assert!(
            apart(&stepwise, &want) <= 1e-4,
            "{fixture}, {hold:?} token by token: {}",
            apart(&stepwise, &want)
        );
    }
    let (stored, exact) = (
        model("model-q8_0.gguf", Hold::Stored),
        model("model-q8_0.gguf", Hold::F32),
    );
    let q8 = anatomy_checkpoint::open(&dir.join("model-q8_0.gguf")).unwrap();
    let arch = match q8.gguf.as_ref().unwrap().get("general.architecture") {
        Some(candle_core::quantized::gguf_file::Value::String(a)) => a.clone(),
        _ => panic!("{fixture}: no architecture"),
    };
    // Every matrix the file holds in Q8_0 (each expert of a stack one), but a learned position
    // table, looked up rather than multiplied (StarCoder's, GPT-2's), and GPT-2's Conv1D weights,
    // multiplied in f32.
    let matrices: u64 = q8
        .tensors
        .iter()
        .filter(|t| t.dtype == "Q8_0" && t.name != "position_embd.weight")
        .filter(|t| !anatomy_checkpoint::gguf::transposed(&arch, &t.name))
        .map(|t| match t.shape.len() {
            3 => t.shape[0],
            _ => 1,
        })
        .sum();
    let held =
        |format: &str| format!("stored format ({format} × {matrices} projections), the rest f32");
    assert_eq!(stored.held(), held("Q8_0"));
    let (a, b) = (rows(&stored), rows(&exact));
    let scale = b.iter().flatten().fold(0f32, |m, v| m.max(v.abs()));
    eprintln!(
        "Q8_0 {fixture} GGUF: stored {:.2e} from f32 (largest logit {scale:.2})",
        apart(&a, &b)
    );
    assert!(apart(&a, &b) <= 0.02 * scale);
    let Some(half) = half else { return };
    let file = format!("model-{}.gguf", half.to_lowercase());
    let (stored, exact) = (model(&file, Hold::Stored), model(&file, Hold::F32));
    // Every matrix, the embedding among them (its rows looked up as stored), in 16 bits.
    assert_eq!(stored.held(), held(half));
    let (a, b) = (rows(&stored), rows(&exact));
    eprintln!(
        "{half} {fixture} GGUF: stored {:.2e} from f32, {:.2e} from transformers",
        apart(&a, &b),
        apart(&a, &want)
    );
    assert!(apart(&a, &b) <= 1e-5 * scale.max(1.0));
    // And near transformers' logits, whose weights these round to 16 bits (measured: 0.06% of
    // the largest logit in F16, 0.4% in BF16).
    assert!(apart(&a, &want) <= 0.01 * scale, "{}", apart(&a, &want));
}

/// Checkpoints quantized as published: gpt-oss with its experts in MXFP4 (`X_blocks`,
/// `X_scales`; scripts/make_mxfp4_fixture.py) and DeepSeek-V3 in fp8 with block scales
/// (`X_scale_inv`; scripts/make_fp8_fixture.py). Dequantized at load each gives transformers'
/// logits on the values it holds; held as stored, MXFP4 experts multiplied by `qlinear` within
/// the 32-value formats' tolerance (their activations quantized), fp8 widened in registers within
/// f32 rounding.
#[test]
fn published_mxfp4_and_fp8_checkpoints_run_like_transformers() {
    for (fixture, held, stored_tolerance) in [
        ("mxfp4/gpt-oss", "MXFP4 × 16 projections", 0.02),
        ("fp8/deepseek-v3", "F8_E4M3 × 40 projections", 1e-4),
    ] {
        published(fixture, held, stored_tolerance);
    }
}

/// `fixture`'s logits, dequantized (within 1e-4) and held as stored (within `stored_tolerance`
/// of the largest), against transformers'; held as stored its projections are `held`.
fn published(fixture: &str, held: &str, stored_tolerance: f32) {
    use anatomy_exec::weights::Hold;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(fixture);
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let ids: Vec<u32> = serde_json::from_value(expected["ids"].clone()).unwrap();
    let want: Vec<Vec<f32>> = serde_json::from_value(expected["logits"].clone()).unwrap();
    let scale = want.iter().flatten().fold(0f32, |m, v| m.max(v.abs()));
    for (hold, tolerance) in [(Hold::F32, 1e-4), (Hold::Stored, stored_tolerance * scale)] {
        let m = verified_model(&dir, hold);
        if hold == Hold::Stored {
            assert!(m.held().contains(held), "{fixture}: {}", m.held());
        }
        let got: Vec<Vec<f32>> = m
            .forward(&ids, &mut Cache::new(m.spec.layers as usize))
            .unwrap()
            .to_vec2()
            .unwrap();
        let apart = got
            .iter()
            .flatten()
            .zip(want.iter().flatten())
            .fold(0f32, |m, (a, b)| m.max((a - b).abs()));
        eprintln!("{fixture}, {hold:?}: {apart:.2e} from transformers (largest logit {scale:.2})");
        assert!(apart <= tolerance, "{fixture}, {hold:?}: {apart}");
    }
}

/// Dory as NVIDIA releases it: each layer stored as two blocks, `layers.{2b}.mixer` (the
/// attention, with `attn_alpha`) and `layers.{2b+1}.mixer` (the MLP, with `mlp_alpha`), which
/// transformers renames on loading. The fixture's tensors written so verify clean and give
/// transformers' logits, in f32 and held in bf16 as stored.
#[test]
fn dorys_released_two_block_layout_verifies_and_runs() {
    use anatomy_exec::weights::{Hold, Weights};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dory");
    let loaded =
        candle_core::safetensors::load(dir.join("model.safetensors"), &Device::Cpu).unwrap();
    // Written here from the layout's description, apart from `naming::canonical`'s reading.
    let released = |n: &str| -> String {
        let Some(rest) = n.strip_prefix("backbone.layers.") else {
            return n.to_string();
        };
        let (b, tail) = rest.split_once('.').unwrap();
        let b: u64 = b.parse().unwrap();
        match tail {
            "lambda_1" => format!("backbone.layers.{}.attn_alpha", 2 * b),
            "lambda_2" => format!("backbone.layers.{}.mlp_alpha", 2 * b + 1),
            t if t.starts_with("self_attn.") => {
                format!(
                    "backbone.layers.{}.mixer.{}",
                    2 * b,
                    &t["self_attn.".len()..]
                )
            }
            t if t.starts_with("mlp.") => {
                format!("backbone.layers.{}.mixer.{}", 2 * b + 1, &t["mlp.".len()..])
            }
            t => panic!("an unexpected Dory tensor: {t}"),
        }
    };
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let ids: Vec<u32> = serde_json::from_value(expected["ids"].clone()).unwrap();
    let want: Vec<Vec<f32>> = serde_json::from_value(expected["logits"].clone()).unwrap();
    for bf16 in [false, true] {
        let tmp = tempfile::tempdir().unwrap();
        let renamed: std::collections::HashMap<String, candle_core::Tensor> = loaded
            .iter()
            .map(|(n, t)| {
                let t = if bf16 {
                    t.to_dtype(DType::BF16).unwrap()
                } else {
                    t.clone()
                };
                (released(n), t)
            })
            .collect();
        assert!(renamed.keys().any(|n| n.ends_with(".mixer.up_proj.weight")));
        candle_core::safetensors::save(&renamed, tmp.path().join("model.safetensors")).unwrap();
        std::fs::copy(dir.join("config.json"), tmp.path().join("config.json")).unwrap();
        let c = anatomy_checkpoint::open(tmp.path()).unwrap();
        let spec = anatomy_checkpoint::spec(&c, false).unwrap();
        let g = anatomy_core::graph::build(&spec).unwrap();
        let report = anatomy_checkpoint::verify::verify(&g, &c).unwrap();
        assert!(report.clean(), "{:?}", report.unexpected);
        let hold = if bf16 { Hold::Stored } else { Hold::F32 };
        let w = Weights::load_held(&c, &spec, hold, &mut |_, _| {}).unwrap();
        let m = Model::new(spec.clone(), w).unwrap();
        let got: Vec<Vec<f32>> = m
            .forward(&ids, &mut Cache::new(spec.layers as usize))
            .unwrap()
            .to_vec2()
            .unwrap();
        let scale = want.iter().flatten().fold(0f32, |m, v| m.max(v.abs()));
        let d = got
            .iter()
            .flatten()
            .zip(want.iter().flatten())
            .fold(0f32, |m, (a, b)| m.max((a - b).abs()));
        // bf16 weights: the logits within 2% of their largest (measured: 0.4%).
        let tol = if bf16 { 0.02 * scale } else { 1e-4 };
        assert!(d < tol, "bf16 {bf16}: max |Δlogit| = {d} (largest {scale})");
    }
}

/// GGUFs in types candle does not read (scripts/make_iquant_fixtures.py: IQ4_NL quantized by
/// llama.cpp, MXFP4 by gguf-py, a dense and a mixture-of-experts toy) verify, and run as the
/// same weights dequantized by gguf-py: within 1e-4 widened to f32; held as stored, IQ4_NL and
/// MXFP4 in their blocks through `qlinear`'s kernels (activations quantized), within 1%.
#[test]
fn ggufs_in_types_candle_lacks_run_as_their_reference_dequantization() {
    for fixture in ["qwen3", "qwen3-moe"] {
        reference_dequantization(fixture);
    }
}

/// `fixture`'s IQ4_NL and MXFP4 copies against the same weights dequantized by gguf-py (in
/// Qwen3-MoE, its stacked experts too).
fn reference_dequantization(fixture: &str) {
    use anatomy_exec::weights::Hold;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/gguf")
        .join(fixture);
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let ids: Vec<u32> = serde_json::from_value(expected["ids"].clone()).unwrap();
    let logits = |file: &str, hold: Hold| -> (Vec<f32>, String) {
        let m = verified_model(&dir.join(file), hold);
        let v = m
            .forward(&ids, &mut Cache::new(m.spec.layers as usize))
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1()
            .unwrap();
        (v, m.held())
    };
    for kind in ["iq4_nl", "mxfp4"] {
        let (want, _) = logits(&format!("model-{kind}-dequantized.gguf"), Hold::F32);
        let scale = want.iter().fold(0f32, |m, x| m.max(x.abs()));
        for (hold, tolerance) in [(Hold::F32, 1e-4), (Hold::Stored, 0.01 * scale)] {
            let (got, held) = logits(&format!("model-{kind}.gguf"), hold);
            if hold == Hold::Stored {
                let block = kind.to_uppercase();
                assert!(
                    held.contains(&format!("{block} × ")),
                    "{fixture} {kind}: {held}"
                );
            }
            let apart = got
                .iter()
                .zip(&want)
                .fold(0f32, |m, (a, b)| m.max((a - b).abs()));
            assert!(
                apart <= tolerance,
                "{fixture} {kind} {hold:?}: {apart} (logits up to {scale})"
            );
            eprintln!("{fixture} {kind} {hold:?}: {apart:e} apart, logits up to {scale}");
        }
    }
}

/// A Qwen3 of rows 256 wide in each i-quant and ternary type llama.cpp defines beyond IQ4_NL
/// and IQ4_XS (scripts/make_iquant_fixtures.py: IQ3_S, TQ1_0 and TQ2_0 quantized by llama.cpp,
/// the others' blocks drawn at random): held as stored, its matrices in TQ2_0's own blocks or
/// in int8 blocks holding the file's values exactly (`Int8F32`, or `Int8F32x2` where a scale
/// covers 16), through `qlinear`'s kernels, within 2% of
/// the largest logit of the same file widened to f32, as the other formats (`FORMATS`; measured
/// 0.01% in a prompt, 16-bit activations, and 0.7–1.1% in a decode step, 8-bit ones); and that
/// within 1e-4 of llama.cpp's logits on the weights gguf-py dequantizes from the file, written
/// as F32.
#[test]
fn i_quants_run_held_as_their_integers() {
    use anatomy_exec::weights::Hold;
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gguf/qwen3-wide");
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let ids: Vec<u32> = serde_json::from_value(expected["ids"].clone()).unwrap();
    let kinds = expected["dequantized"].as_object().unwrap();
    assert_eq!(kinds.len(), 9, "every type but IQ4_NL and IQ4_XS");
    for (kind, llama) in kinds {
        let llama: Vec<f32> = serde_json::from_value::<Vec<Vec<f32>>>(llama.clone())
            .unwrap()
            .concat();
        let file = dir.join(format!("model-{}.gguf", kind.to_lowercase()));
        // The prompt in one pass (the prompt kernels), then its last token again as a decode
        // step after the others (the decode kernels: activations in 8 bits).
        let logits = |hold: Hold| -> (Vec<f32>, Vec<f32>, String) {
            let m = verified_model(&file, hold);
            let run = |ids: &[u32], cache: &mut Cache| -> Vec<f32> {
                let t = m.forward(ids, cache).unwrap();
                t.flatten_all().unwrap().to_vec1().unwrap()
            };
            let all = run(&ids, &mut Cache::new(m.spec.layers as usize));
            let mut cache = Cache::new(m.spec.layers as usize);
            let (first, last) = ids.split_at(ids.len() - 1);
            run(first, &mut cache);
            (all, run(last, &mut cache), m.held())
        };
        let apart = |a: &[f32], b: &[f32]| {
            assert_eq!(a.len(), b.len());
            a.iter().zip(b).fold(0f32, |m, (x, y)| m.max((x - y).abs()))
        };
        let (wide, _, _) = logits(Hold::F32);
        let (held, step, how) = logits(Hold::Stored);
        let block = match kind.as_str() {
            "TQ2_0" => "TQ2_0 × ",
            "IQ2_XS" | "IQ2_S" | "IQ1_M" => "INT8_F32x2 × ",
            _ => "INT8_F32 × ",
        };
        assert!(how.contains(block), "{kind}: {how}");
        let scale = wide.iter().fold(0f32, |m, x| m.max(x.abs()));
        let (d, reference) = (apart(&held, &wide), apart(&wide, &llama));
        let decode = apart(&step, &wide[wide.len() - step.len()..]);
        eprintln!(
            "{kind}: f32 {reference:.1e} from llama.cpp's; held {d:.1e} from f32 in a prompt, \
             {decode:.1e} in a decode step (logits up to {scale:.2})"
        );
        assert!(
            reference <= 1e-4,
            "{kind}: f32 {reference} from llama.cpp's"
        );
        let most = d.max(decode);
        assert!(
            most <= 0.02 * scale,
            "{kind}: held {most} from f32 (logits up to {scale})"
        );
    }
}

/// A quantized fixture of the toy Qwen3 (tests/fixtures/quant/`fixture`), opened, and its graph.
fn quant_fixture(fixture: &str) -> (anatomy_checkpoint::Checkpoint, anatomy_core::graph::Graph) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/quant")
        .join(fixture);
    let c = anatomy_checkpoint::open(&dir).unwrap();
    let spec = anatomy_checkpoint::spec(&c, false).unwrap();
    let g = anatomy_core::graph::build(&spec).unwrap();
    (c, g)
}

/// A quantized fixture of the toy Qwen3 verifies clean, counting the unquantized model's
/// parameters: its packed matrices in `format`, the rest (embedding and norms) in F32.
fn verifies_as(fixture: &str, format: &str) {
    let (c, g) = quant_fixture(fixture);
    let r = anatomy_checkpoint::verify::verify(&g, &c).unwrap();
    assert!(r.clean(), "{fixture}: {r:?}");
    let total = anatomy_core::stats::stats(&g, None).unwrap().total_params as u128;
    assert_eq!(r.params, total, "{fixture}: parameters as verified");
    let packed = r.formats.get(format).map(|f| f.1);
    let rest = r.formats.get("F32").map_or(0, |f| f.1);
    assert_eq!(
        packed.map(|p| p + rest),
        Some(total),
        "{fixture}: {:?}",
        r.formats
    );
}

/// The toy Qwen3 as GPTQ, AWQ, compressed-tensors and MLX store it, each packed by the format's
/// own code (scripts/make_quant_fixtures.py): every stored tensor verifies in its packed shape
/// and dtype, the parameters count as the unquantized model's, and the logits are transformers'
/// on the weights that code dequantizes: within 1e-4 in f32, and held as stored (every matrix
/// as Q4_0 blocks where symmetric, else as Q4_1 blocks, or in groups of 128 or 64 as INT4_G128
/// or INT4_G64, its scale and offset rounded to f16, multiplied by `qlinear`) within the
/// tolerance above of the GGUF type it is (the INT4 groups Q4_1's: its values, a minimum each,
/// only four or two times as many); act-order's scattered groups gathered.
#[test]
fn quantized_checkpoints_run_as_their_reference_dequantizes() {
    let tolerance = |t| FORMATS.iter().find(|f| f.0 == t).unwrap().1;
    // Seven projections in each of two layers; MLX quantizes the embedding too, which the
    // tied head multiplies by. Symmetric GPTQ (zero points all 8) is Q4_0 exactly.
    for (fixture, format, held, kin) in [
        (
            "gptq",
            "GPTQ int4, groups of 32",
            "Q4_0 × 14",
            GgmlDType::Q4_0,
        ),
        // GPTQ's mixture of experts: each expert's projections their own modules, the routers
        // in floats.
        (
            "gptq-moe",
            "GPTQ int4, groups of 32",
            "Q4_0 × 104",
            GgmlDType::Q4_0,
        ),
        (
            "gptq-act-order",
            "GPTQ int4, groups of 32",
            "Q4_0 × 14",
            GgmlDType::Q4_0,
        ),
        (
            "awq",
            "AWQ GEMM int4, groups of 32",
            "Q4_1 × 14",
            GgmlDType::Q4_1,
        ),
        (
            "awq-gemv",
            "AWQ GEMV int4, groups of 32",
            "Q4_1 × 14",
            GgmlDType::Q4_1,
        ),
        (
            "awq-g128",
            "AWQ GEMM int4, groups of 128",
            "INT4_G128 × 14",
            GgmlDType::Q4_1,
        ),
        (
            "compressed",
            "compressed-tensors int4 packed, groups of 32",
            "Q4_1 × 14",
            GgmlDType::Q4_1,
        ),
        (
            "mlx",
            "MLX int4, groups of 32",
            "Q4_1 × 15",
            GgmlDType::Q4_1,
        ),
        // AutoRound's two packings as auto-round saves them: symmetric in GPTQ's layout
        // without g_idx, asymmetric in AWQ's GEMM layout.
        (
            "autoround",
            "AutoRound (GPTQ layout) int4, groups of 32",
            "Q4_0 × 14",
            GgmlDType::Q4_0,
        ),
        (
            "autoround-asym",
            "AWQ GEMM int4, groups of 32",
            "Q4_1 × 14",
            GgmlDType::Q4_1,
        ),
        // GPTQ's 3-bit packing (a value crossing words), held as INT8_F32_MIN.
        (
            "autoround-3bit",
            "AutoRound (GPTQ layout) int3, groups of 32",
            "INT8_F32_MIN × 14",
            GgmlDType::Q4_0,
        ),
        // mlx-lm's mixture of experts: each layer's experts stacked per projection
        // (`switch_mlp`), split into one matrix each; the routers in 8 bits (INT8_F32_MIN).
        (
            "mlx-moe",
            "MLX int4, groups of 64 (2 layers otherwise)",
            "INT4_G64 × 106, INT8_F32_MIN × 2",
            GgmlDType::Q4_1,
        ),
        // One projection in 8 bits (INT8_F32_MIN), one left unquantized, by mlx-lm's per-layer
        // entries.
        (
            "mlx-g64",
            "MLX int4, groups of 64 (2 layers otherwise)",
            "INT4_G64 × 13, INT8_F32_MIN × 1",
            GgmlDType::Q4_1,
        ),
    ] {
        verifies_as(fixture, format);
        let name = format!("{held} projections");
        published(&format!("quant/{fixture}"), &name, tolerance(kin));
    }
}

/// The toy Qwen3 in the formats `run` reads by dequantizing every matrix or holds in a type of
/// its own, each made by its own library (scripts/make_quant_fixtures.py): compressed-tensors'
/// IntQuantizationCompressor (int8 by channel), FloatQuantizationCompressor (fp8 in 32×32 blocks,
/// held as its bytes and block scales, multiplied by `floatlinear`) and NVFP4PackedCompressor
/// (held in `qlinear`'s NVFP4 blocks, within the 4-bit types' tolerance: the activations
/// quantized to 8 bits, the reference's values rounded to bf16); bitsandbytes' `quantize_4bit`
/// (NF4 double quantized, FP4) and `int8_vectorwise_quant`, each tensor named as its modules save
/// them. Each verifies clean, counts the unquantized model's parameters and runs within 1e-4 of
/// transformers' logits on the weights the library's own dequantization gives (`decompress`,
/// `dequantize_4bit`, the rows times their scales over 127) in f32; held as stored, int8 as Q8_0
/// (each scale rounded to f16), NF4 and FP4 in `qlinear`'s code-book blocks, within the stated
/// tolerances. (Before, an fp8 weight beside `weight_scale` ran unscaled.)
#[test]
fn dequantized_formats_run_as_their_reference_dequantizes() {
    let q4 = FORMATS.iter().find(|f| f.0 == GgmlDType::Q4_0).unwrap().1;
    let q8 = FORMATS.iter().find(|f| f.0 == GgmlDType::Q8_0).unwrap().1;
    // NF4's levels held rounded to integers (up to 0.37% of a block's absmax off the book's)
    // on top of the activations' 8 bits: measured 0.0216 of the largest logit, FP4's (one
    // level rounded) 0.0124.
    let nf4 = 0.04;
    for (fixture, format, held, tolerance) in [
        (
            "compressed-int8",
            "compressed-tensors int8",
            "Q8_0 × 14 projections",
            q8,
        ),
        (
            "bnb-nf4",
            "bitsandbytes NF4, double quantized",
            "NF4 × 11 projections",
            nf4,
        ),
        ("bnb-fp4", "bitsandbytes FP4", "FP4 × 14 projections", q4),
        (
            "bnb-int8",
            "bitsandbytes LLM.int8()",
            "Q8_0 × 14 projections",
            q8,
        ),
        (
            "compressed-fp8",
            "compressed-tensors fp8",
            "F8_E4M3 × 14 projections",
            1e-4,
        ),
        (
            "compressed-nvfp4",
            "compressed-tensors NVFP4",
            "NVFP4 × 14 projections",
            q4,
        ),
    ] {
        verifies_as(fixture, format);
        published(&format!("quant/{fixture}"), held, tolerance);
    }
}

/// `stats` on a quantized checkpoint's config gives the bytes its file's tensors hold, format by
/// format, scales and zero points counted; the planner's tensors as the config declares them are
/// the file's, name by name.
#[test]
fn quantized_checkpoints_stored_bytes_are_their_files() {
    let fixtures = [
        "gptq",
        "gptq-act-order",
        "gptq-moe",
        "awq",
        "awq-gemv",
        "awq-g128",
        "compressed",
        "compressed-int8",
        "compressed-fp8",
        "compressed-nvfp4",
        "mlx",
        "mlx-g64",
        "mlx-moe",
        "autoround",
        "autoround-asym",
        "autoround-3bit",
        "bnb-nf4",
        "bnb-fp4",
        "bnb-int8",
    ];
    for fixture in fixtures {
        let (c, g) = quant_fixture(fixture);
        let s = anatomy_core::stats::stats(&g, None).unwrap();
        // bitsandbytes' JSON state is as long as its numbers' text: uncounted, and each short.
        let (state, file): (Vec<_>, Vec<_>) = anatomy_checkpoint::stored_bytes(&c)
            .into_iter()
            .partition(|t| t.name.contains(".weight.quant_state.bitsandbytes__"));
        assert!(state.iter().all(|t| t.bytes < 1024), "{fixture}: {state:?}");
        assert_eq!(
            state.is_empty(),
            !fixture.starts_with("bnb-") || fixture == "bnb-int8"
        );
        let file: u64 = file.iter().map(|t| t.bytes).sum();
        let declared: u64 = s.stored.iter().map(|f| f.bytes).sum();
        assert_eq!(declared, file, "{fixture}: {:?}", s.stored);
        assert!(s.stored.len() == 2, "{fixture}: {:?}", s.stored);
        let named = |v: Vec<anatomy_core::plan::StoredTensor>| {
            let mut v: Vec<(String, u64)> = v.into_iter().map(|t| (t.name, t.bytes)).collect();
            v.sort();
            v
        };
        let planned = anatomy_core::plan::declared(&g).unwrap().unwrap();
        let mut stored = named(anatomy_checkpoint::stored_bytes(&c));
        for t in &state {
            let at = stored.iter().position(|(n, _)| n == &t.name).unwrap();
            stored[at].1 = 0;
        }
        assert_eq!(named(planned), stored, "{fixture}");
    }
}
