//! Tokenizers: `tokenizer.json` beside a safetensors checkpoint, or the vocabulary and merges
//! embedded in a GGUF file, with the pre-tokenizer its `tokenizer.ggml.pre` names.

use anatomy_core::Error;
use candle_core::quantized::gguf_file::Value;
use std::path::Path;
use tokenizers::models::bpe::BPE;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::{AddedToken, Tokenizer};

/// The largest tokenizer.json anatomy reads (real ones are a few MB).
const MAX_TOKENIZER_BYTES: u64 = 256 << 20;

pub fn from_file(path: &Path) -> Result<Tokenizer, Error> {
    use std::io::Read;
    let shown = path.display().to_string();
    let mut bytes = Vec::new();
    anatomy_checkpoint::open_regular(path)?
        .take(MAX_TOKENIZER_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::file(&shown, format!("cannot read: {e}")))?;
    Tokenizer::from_bytes(&bytes)
        .map_err(|e| Error::file(&shown, format!("not a usable tokenizer.json: {e}")))
}

/// GGUF pre-tokenizers anatomy knows, by `tokenizer.ggml.pre`.
const PRE: &[&str] = &["smollm", "gpt2", "default"];

/// The tokenizer embedded in a GGUF file, from its checked header.
pub fn from_gguf(
    header: &anatomy_checkpoint::gguf_header::Header,
    shown: &str,
) -> Result<Tokenizer, Error> {
    let shown = shown.to_string();
    let field = |k: &str| {
        header.get(k).ok_or_else(|| {
            Error::new(
                &shown,
                k,
                "is missing; the GGUF carries no tokenizer anatomy can use",
            )
        })
    };
    let model = field("tokenizer.ggml.model")?
        .to_string()
        .map_err(|e| Error::new(&shown, "tokenizer.ggml.model", e.to_string()))?;
    if model != "gpt2" {
        return Err(Error::new(
            &shown,
            "tokenizer.ggml.model",
            format!("`{model}` is not supported; anatomy reads byte-level BPE (gpt2) vocabularies"),
        ));
    }
    let strings = |k: &str| -> Result<Vec<String>, Error> {
        field(k)?
            .to_vec()
            .map_err(|e| Error::new(&shown, k, e.to_string()))?
            .iter()
            .map(|v| {
                v.to_string()
                    .cloned()
                    .map_err(|e| Error::new(&shown, k, e.to_string()))
            })
            .collect()
    };
    let tokens = strings("tokenizer.ggml.tokens")?;
    let merges: Vec<(String, String)> = strings("tokenizer.ggml.merges")?
        .into_iter()
        .map(|m| match m.split_once(' ') {
            Some((a, b)) => Ok((a.to_string(), b.to_string())),
            None => Err(Error::new(
                &shown,
                "tokenizer.ggml.merges",
                format!("`{m}` is not a pair"),
            )),
        })
        .collect::<Result<_, _>>()?;
    let vocab: tokenizers::models::bpe::Vocab = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| (t.clone(), i as u32))
        .collect();
    let bpe = BPE::builder()
        .vocab_and_merges(vocab, merges)
        .build()
        .map_err(|e| {
            Error::new(
                &shown,
                "tokenizer.ggml.merges",
                format!("cannot build the BPE model: {e}"),
            )
        })?;
    let mut tok = Tokenizer::new(bpe);
    let pre = header
        .get("tokenizer.ggml.pre")
        .and_then(|v| v.to_string().ok())
        .cloned()
        .unwrap_or_else(|| "default".into());
    // `smollm`: every digit its own piece, then byte-level splitting with no prefix space.
    let byte_level = ByteLevel::new(false, true, true);
    match pre.as_str() {
        "smollm" => {
            tok.with_pre_tokenizer(Some(Sequence::new(vec![
                Digits::new(true).into(),
                byte_level.into(),
            ])));
        }
        "gpt2" | "default" => {
            tok.with_pre_tokenizer(Some(byte_level));
        }
        other => {
            return Err(Error::new(
                &shown,
                "tokenizer.ggml.pre",
                format!(
                    "`{other}` is not a pre-tokenizer anatomy knows; known: {}",
                    PRE.join(", ")
                ),
            ))
        }
    }
    tok.with_decoder(Some(ByteLevel::default()));
    // Control and user-defined tokens are never split.
    if let Some(Ok(types)) = header.get("tokenizer.ggml.token_type").map(|v| v.to_vec()) {
        let special: Vec<AddedToken> = types
            .iter()
            .zip(&tokens)
            .filter(|(t, _)| matches!(t, Value::I32(3) | Value::I32(4)))
            .map(|(_, s)| AddedToken::from(s.clone(), true))
            .collect();
        tok.add_special_tokens(special)
            .map_err(|e| Error::new(&shown, "tokenizer.ggml.token_type", e.to_string()))?;
    }
    Ok(tok)
}
