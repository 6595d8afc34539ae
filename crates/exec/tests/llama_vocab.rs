//! Real vocabularies tokenize as llama.cpp does, byte-level BPE (GPT-2's, Llama 3's, Qwen2's,
//! Qwen3.5's) and SentencePiece (Llama's, Phi-3's): llama.cpp's own tokenizer tests, `ggml-vocab-*.gguf` with their texts (`.inp`) and the
//! ids llama.cpp gives them (`.out`), from the llama.cpp source in PyPI's llama-cpp-python
//! (scripts/setup.sh fetches them).

use anatomy_exec::tokenizer;

#[path = "../../../tests/support/paths.rs"]
mod paths;

/// llama.cpp's test-tokenizer-0 reading: texts separated by a line `__ggml_vocab_test__`, and one
/// line of space-separated ids for each.
fn cases(vocab: &std::path::Path) -> Vec<(String, Vec<u32>)> {
    let read = |ext: &str| {
        let mut p = vocab.as_os_str().to_owned();
        p.push(ext);
        std::fs::read_to_string(&p).unwrap()
    };
    let inp = read(".inp");
    let mut texts: Vec<&str> = inp.split("\n__ggml_vocab_test__\n").collect();
    if texts.last() == Some(&"") {
        texts.pop();
    }
    let out = read(".out");
    let ids: Vec<Vec<u32>> = out
        .lines()
        .map(|l| l.split_whitespace().map(|t| t.parse().unwrap()).collect())
        .collect();
    assert_eq!(texts.len(), ids.len(), "{}", vocab.display());
    texts.into_iter().map(String::from).zip(ids).collect()
}

#[test]
#[cfg_attr(
    not(has_llama_vocab),
    ignore = "needs llama.cpp's ggml-vocab test files: scripts/setup.sh fetches them (llama-cpp-python's source on PyPI)"
)]
fn real_vocabularies_tokenize_as_llama_cpp_does() {
    let dir = paths::llama_vocab();
    for name in [
        "gpt-2",
        "llama-bpe",
        "qwen2",
        "qwen35",
        "llama-spm",
        "phi-3",
    ] {
        let vocab = dir.join(format!("ggml-vocab-{name}.gguf"));
        let file = std::fs::File::open(&vocab).unwrap();
        let len = file.metadata().unwrap().len();
        let (header, _) =
            anatomy_checkpoint::gguf_header::read(&mut std::io::BufReader::new(file), len).unwrap();
        let tok = tokenizer::from_gguf(&header, &vocab.display().to_string()).unwrap();
        let cases = cases(&vocab);
        assert!(cases.len() >= 30, "{name}: {} cases", cases.len());
        let back = tokenizer::Detokenizer::new(&tok);
        for (text, want) in cases {
            let got = tok.encode(text.as_str(), false).unwrap().get_ids().to_vec();
            assert_eq!(got, want, "{name}: {text:?}");
            // And the ids read back as the text, as `run` prints them.
            assert_eq!(back.decode(&got).unwrap(), text, "{name}: {got:?}");
        }
    }
}
