//! Tokenizers: `tokenizer.json` beside a safetensors checkpoint, or the vocabulary embedded in a
//! GGUF file (byte-level BPE split by the pre-tokenizer its `tokenizer.ggml.pre` names, or
//! SentencePiece), tokenizing as llama.cpp does.

use anatomy_core::Error;
use candle_core::quantized::gguf_file::Value;
use std::path::Path;
use tokenizers::models::bpe::BPE;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::SplitDelimiterBehavior::Isolated;
use tokenizers::{AddedToken, Tokenizer};

/// A checkpoint's tokenizer: a `tokenizers` one (tokenizer.json, a GGUF's byte-level BPE), or a
/// GGUF's SentencePiece vocabulary merged as llama.cpp merges it.
// One is held a run: the sizes of its variants do not matter.
#[allow(clippy::large_enum_variant)]
pub enum Encoder {
    Hf(Tokenizer),
    Spm(crate::spm::Spm, tokenizers::DecoderWrapper),
}

impl std::fmt::Debug for Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Encoder::Hf(_) => "Encoder::Hf",
            Encoder::Spm(..) => "Encoder::Spm",
        })
    }
}

impl Encoder {
    /// The ids of `text`, the special tokens written in it read as themselves. With
    /// `specials`, a tokenizer.json's post-processor adds what it adds (Llama 3's BOS), as
    /// transformers' `tokenizer(text)` does; a GGUF's SentencePiece vocabulary adds nothing
    /// here (`session::Opened::bos` adds its BOS, as llama.cpp does).
    pub fn encode(&self, text: &str, specials: bool) -> Result<Vec<u32>, String> {
        match self {
            Encoder::Hf(t) => t
                .encode(text, specials)
                .map(|e| e.get_ids().to_vec())
                .map_err(|e| e.to_string()),
            Encoder::Spm(s, _) => Ok(s.encode(text, true)),
        }
    }
}

impl Encoder {
    /// The text of token `id` in a tokenizer.json's vocabulary (a special token's as written);
    /// `None` for a GGUF's, or an id it lacks.
    pub fn token(&self, id: u64) -> Option<String> {
        match self {
            Encoder::Hf(t) => t.id_to_token(u32::try_from(id).ok()?),
            Encoder::Spm(..) => None,
        }
    }
}

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
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes) {
        for part in ["normalizer", "decoder"] {
            let g = growth(&v[part], 0);
            if g > MAX_GROWTH {
                return Err(Error::new(
                    &shown,
                    part,
                    format!("can make a text up to {g:.3e} times longer (its replacements multiply); anatomy reads a {part} that grows text at most {MAX_GROWTH} times"),
                ));
            }
        }
    }
    Tokenizer::from_bytes(&bytes)
        .map_err(|e| Error::file(&shown, format!("not a usable tokenizer.json: {e}")))
}

/// The most a tokenizer's normalizer or decoder may lengthen a text: real ones reach about 40
/// (a SentencePiece charsmap, then a space replaced by `▁`).
const MAX_GROWTH: f64 = 1024.0;

/// How many times longer a normalizer or decoder (tokenizer.json's JSON) can make a text, at
/// most: a sequence multiplies its parts' growths; a replacement grows by its content over its
/// pattern (a regex may match nothing, between every two characters); Unicode normalization by
/// 18 (the longest decomposition); what is not known, by 18 too.
fn growth(v: &serde_json::Value, depth: usize) -> f64 {
    const UNICODE: f64 = 18.0;
    let len = |k: &str| v[k].as_str().map_or(0, |s| s.chars().count()) as f64;
    match v["type"].as_str() {
        None if v.is_null() => 1.0,
        _ if depth > 16 => f64::INFINITY,
        Some("Sequence") => v["normalizers"]
            .as_array()
            .or(v["decoders"].as_array())
            .map_or(1.0, |parts| {
                parts.iter().map(|p| growth(p, depth + 1)).product()
            }),
        Some("Replace") => {
            let content = len("content");
            // A string pattern of n characters is replaced by the content at most once per n
            // characters; a regex (or an empty string) may match between every two.
            let pattern = v["pattern"]["String"]
                .as_str()
                .map_or(0, |p| p.chars().count());
            match pattern {
                0 => content + 1.0,
                n => (content / n as f64).max(1.0),
            }
        }
        Some("Prepend") => 1.0 + len("prepend"),
        Some("Strip" | "StripAccents" | "Fuse" | "CTC") => 1.0,
        Some("ByteLevel" | "ByteFallback") => 4.0,
        Some("Lowercase") => 3.0,
        Some("Metaspace" | "WordPiece" | "BPEDecoder") => 2.0,
        Some("BertNormalizer") => 3.0 * UNICODE,
        Some(_) | None => UNICODE,
    }
}

/// GPT-2's split (`tokenizers`' ByteLevel pattern).
const GPT2: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
const LLAMA3: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const QWEN2: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const QWEN35: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
// Tekken's and GPT-4o's as llama.cpp writes them: its regex engine has no \p{M} and no case
// classes, so "upper" is a letter outside a-z and "lower" one outside A-Z.
const TEKKEN: &str = r"[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const GPT4O: &str = r"[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// A byte-level GGUF pre-tokenizer: the `tokenizer.ggml.pre` names llama.cpp gives it, the
/// patterns it splits text by, one after another (llama-vocab.cpp; as transformers rebuilds them
/// from a GGUF), each match and each stretch between matches a piece of its own, and whether a
/// piece the vocabulary holds whole is taken whole before any merge (llama.cpp's
/// `ignore_merges`).
struct Pre {
    names: &'static [&'static str],
    patterns: &'static [&'static str],
    whole_words: bool,
}

/// The pre-tokenizers anatomy reads, each checked against llama.cpp's own tokenization
/// (tests/fixtures/pretokenizers.json).
const PRE: &[Pre] = &[
    Pre {
        names: &["default"],
        patterns: &[r"[\p{P}\$\+<=>\^~\|]+", GPT2, r"\p{N}+", "[0-9][0-9][0-9]"],
        whole_words: false,
    },
    Pre {
        names: &["gpt-2"],
        patterns: &[GPT2],
        whole_words: false,
    },
    // Every digit its own piece.
    Pre {
        names: &["smollm"],
        patterns: &[r"\p{N}", GPT2],
        whole_words: false,
    },
    Pre {
        names: &["llama3", "llama-v3", "llama-bpe", "falcon3"],
        patterns: &[LLAMA3],
        whole_words: true,
    },
    Pre {
        names: &["dbrx", "smaug-bpe"],
        patterns: &[LLAMA3],
        whole_words: false,
    },
    Pre {
        names: &["qwen2", "deepseek-r1-qwen", "megrez"],
        patterns: &[QWEN2],
        whole_words: false,
    },
    Pre {
        names: &["qwen35"],
        patterns: &[QWEN35],
        whole_words: false,
    },
    Pre {
        names: &["tekken"],
        patterns: &[TEKKEN],
        whole_words: true,
    },
    Pre {
        names: &["gpt-4o", "llama4", "minimax-m2"],
        patterns: &[GPT4O],
        whole_words: false,
    },
];

/// The tokenizer embedded in a GGUF file, from its checked header: a byte-level BPE vocabulary
/// (`tokenizer.ggml.model` gpt2) or a SentencePiece one (llama), tokenizing as llama.cpp does.
pub fn from_gguf(
    header: &anatomy_checkpoint::gguf_header::Header,
    shown: &str,
) -> Result<Encoder, Error> {
    let v = Vocab { header, shown };
    let model = v.string("tokenizer.ggml.model")?;
    let tokens = v.strings("tokenizer.ggml.tokens")?;
    if tokens.is_empty() {
        return Err(Error::new(
            shown,
            "tokenizer.ggml.tokens",
            "holds no tokens",
        ));
    }
    let mut tok = match model.as_str() {
        "gpt2" => byte_level(&v, &tokens)?,
        "llama" => return sentencepiece(&v, &tokens),
        other => {
            return Err(Error::new(
                shown,
                "tokenizer.ggml.model",
                format!(
                    "`{}` is not supported; anatomy reads byte-level BPE (gpt2) and SentencePiece (llama) vocabularies; give token ids with --ids",
                    anatomy_core::fmt::printable(other)
                ),
            ))
        }
    };
    // Control and user-defined tokens are never split.
    if let Some(Ok(types)) = header.get("tokenizer.ggml.token_type").map(|v| v.to_vec()) {
        let special: Vec<AddedToken> = types
            .iter()
            .zip(&tokens)
            .filter(|(t, _)| matches!(t, Value::I32(3) | Value::I32(4)))
            .map(|(_, s)| AddedToken::from(s.clone(), true))
            .collect();
        tok.add_special_tokens(special)
            .map_err(|e| Error::new(shown, "tokenizer.ggml.token_type", e.to_string()))?;
    }
    Ok(Encoder::Hf(tok))
}

/// A GGUF header's tokenizer fields, each error naming its key.
struct Vocab<'a> {
    header: &'a anatomy_checkpoint::gguf_header::Header,
    shown: &'a str,
}

impl Vocab<'_> {
    fn field(&self, k: &str) -> Result<&Value, Error> {
        self.header.get(k).ok_or_else(|| {
            Error::new(
                self.shown,
                k,
                "is missing; the GGUF carries no tokenizer anatomy can use",
            )
        })
    }

    fn string(&self, k: &str) -> Result<String, Error> {
        let v = self.field(k)?.to_string();
        v.cloned()
            .map_err(|e| Error::new(self.shown, k, e.to_string()))
    }

    fn list(&self, k: &str) -> Result<&Vec<Value>, Error> {
        self.field(k)?
            .to_vec()
            .map_err(|e| Error::new(self.shown, k, e.to_string()))
    }

    fn strings(&self, k: &str) -> Result<Vec<String>, Error> {
        self.list(k)?
            .iter()
            .map(|v| {
                v.to_string()
                    .cloned()
                    .map_err(|e| Error::new(self.shown, k, e.to_string()))
            })
            .collect()
    }

    fn bpe_error(&self, k: &str, e: impl std::fmt::Display) -> Error {
        Error::new(self.shown, k, format!("cannot build the BPE model: {e}"))
    }
}

fn token_ids(tokens: &[String]) -> tokenizers::models::bpe::Vocab {
    tokens
        .iter()
        .enumerate()
        .map(|(i, t)| (t.clone(), i as u32))
        .collect()
}

/// Byte-level BPE: the file's merges, the text split by its `tokenizer.ggml.pre`.
fn byte_level(v: &Vocab, tokens: &[String]) -> Result<Tokenizer, Error> {
    let pre = match v.header.get("tokenizer.ggml.pre") {
        Some(_) => v.string("tokenizer.ggml.pre")?,
        None => "default".into(),
    };
    let Some(pre) = PRE.iter().find(|p| p.names.contains(&pre.as_str())) else {
        let known: Vec<&str> = PRE.iter().flat_map(|p| p.names.iter().copied()).collect();
        return Err(Error::new(
            v.shown,
            "tokenizer.ggml.pre",
            format!(
                "`{}` is not a pre-tokenizer anatomy knows; known: {}",
                anatomy_core::fmt::printable(&pre),
                known.join(", ")
            ),
        ));
    };
    let merges: Vec<(String, String)> = v
        .strings("tokenizer.ggml.merges")?
        .into_iter()
        .map(|m| match m.split_once(' ') {
            Some((a, b)) => Ok((a.to_string(), b.to_string())),
            None => Err(Error::new(
                v.shown,
                "tokenizer.ggml.merges",
                format!("`{}` is not a pair", anatomy_core::fmt::printable(&m)),
            )),
        })
        .collect::<Result<_, _>>()?;
    let bpe = BPE::builder()
        .vocab_and_merges(token_ids(tokens), merges)
        .ignore_merges(pre.whole_words)
        .build()
        .map_err(|e| v.bpe_error("tokenizer.ggml.merges", e))?;
    let mut tok = Tokenizer::new(bpe);
    // The pieces, then their bytes spelled as GPT-2's byte alphabet, with no prefix space.
    let mut steps: Vec<PreTokenizerWrapper> = Vec::new();
    for p in pre.patterns {
        let split = Split::new(SplitPattern::Regex(p.to_string()), Isolated, false)
            .expect("the patterns above compile");
        steps.push(split.into());
    }
    steps.push(ByteLevel::new(false, true, false).into());
    tok.with_pre_tokenizer(Some(Sequence::new(steps)));
    tok.with_decoder(Some(ByteLevel::default()));
    Ok(tok)
}

/// SentencePiece (llama.cpp's "llama" vocabulary): `spm::Spm` with the file's scores and token
/// types, a space prepended after each special token unless `tokenizer.ggml.add_space_prefix`
/// is false (Gemma's); read back by ▁ as a space, `<0xXX>` as its byte.
fn sentencepiece(v: &Vocab, tokens: &[String]) -> Result<Encoder, Error> {
    use tokenizers::decoders::{byte_fallback::ByteFallback, fuse::Fuse, strip::Strip};
    let scores: Vec<f32> = v
        .list("tokenizer.ggml.scores")?
        .iter()
        .map(|s| match s {
            Value::F32(x) => Ok(*x),
            _ => Err(Error::new(
                v.shown,
                "tokenizer.ggml.scores",
                "must hold f32 scores",
            )),
        })
        .collect::<Result<_, _>>()?;
    if scores.len() != tokens.len() {
        return Err(Error::new(
            v.shown,
            "tokenizer.ggml.scores",
            format!("holds {} scores for {} tokens", scores.len(), tokens.len()),
        ));
    }
    let prefix = match v.header.get("tokenizer.ggml.add_space_prefix") {
        None => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(Error::new(
                v.shown,
                "tokenizer.ggml.add_space_prefix",
                "must be a bool",
            ))
        }
    };
    let unk = match v.header.get("tokenizer.ggml.unknown_token_id") {
        None => 0,
        Some(Value::U32(id)) if (*id as usize) < tokens.len() => *id,
        Some(_) => {
            return Err(Error::new(
                v.shown,
                "tokenizer.ggml.unknown_token_id",
                format!("must be a u32 id below the {} tokens", tokens.len()),
            ))
        }
    };
    let types: Vec<i32> = match v.header.get("tokenizer.ggml.token_type") {
        None => vec![1; tokens.len()],
        Some(t) => {
            let t = t
                .to_vec()
                .map_err(|e| Error::new(v.shown, "tokenizer.ggml.token_type", e.to_string()))?;
            let types: Vec<i32> = t
                .iter()
                .map(|x| match x {
                    Value::I32(n) => Some(*n),
                    _ => None,
                })
                .collect::<Option<_>>()
                .filter(|ty: &Vec<i32>| ty.len() == tokens.len())
                .ok_or_else(|| {
                    Error::new(
                        v.shown,
                        "tokenizer.ggml.token_type",
                        format!(
                            "must hold an i32 type for each of the {} tokens",
                            tokens.len()
                        ),
                    )
                })?;
            types
        }
    };
    // llama.cpp strips the space after a special token in models it knows as Phi-3's.
    let name = v.string("general.name").unwrap_or_default().to_lowercase();
    let rstrip = name.contains("phi-3") || name.contains("phi3");
    let spm = crate::spm::Spm::new(tokens, scores, &types, unk, prefix, rstrip);
    let mut decoders = vec![
        tokenizers::normalizers::replace::Replace::new("\u{2581}", " ")
            .expect("a plain pattern")
            .into(),
        ByteFallback::new().into(),
        Fuse::new().into(),
    ];
    if prefix {
        decoders.push(Strip::new(' ', 1, 0).into());
    }
    let decoder = tokenizers::decoders::sequence::Sequence::new(decoders).into();
    Ok(Encoder::Spm(spm, decoder))
}

/// What turning ids back into text needs of a tokenizer, and no more: each id's token, all in
/// one string, and the decoder. A run holds this beside the weights rather than the whole
/// `Tokenizer`, whose model keeps its vocabulary twice in hash maps and its merges besides
/// (SmolLM2's 49,152 tokens: 0.7 MB here, 15 MB there).
pub struct Detokenizer {
    text: String,
    /// Each id's token as (start, length) in `text`; `None` for an id the tokenizer lacks.
    spans: Vec<Option<(u32, u32)>>,
    decoder: Option<tokenizers::DecoderWrapper>,
}

impl Detokenizer {
    pub fn new(enc: &Encoder) -> Detokenizer {
        let tok = match enc {
            Encoder::Hf(t) => t,
            Encoder::Spm(s, decoder) => {
                let (text, spans) = s.texts();
                return Detokenizer {
                    text,
                    spans,
                    decoder: Some(decoder.clone()),
                };
            }
        };
        let n = tok.get_vocab(true).values().max().map_or(0, |&m| m + 1);
        let (mut text, mut spans) = (String::new(), Vec::with_capacity(n as usize));
        for id in 0..n {
            spans.push(tok.id_to_token(id).map(|t| {
                text.push_str(&t);
                ((text.len() - t.len()) as u32, t.len() as u32)
            }));
        }
        text.shrink_to_fit();
        Detokenizer {
            text,
            spans,
            decoder: tok.get_decoder().cloned(),
        }
    }

    /// The text of `ids`, as `Tokenizer::decode(ids, false)` makes it: each id's token (ids it
    /// lacks skipped) through the decoder, or joined by spaces where there is none.
    pub fn decode(&self, ids: &[u32]) -> tokenizers::Result<String> {
        let tokens: Vec<String> = ids
            .iter()
            .filter_map(|&id| *self.spans.get(id as usize)?)
            .map(|(s, l)| self.text[s as usize..(s + l) as usize].to_string())
            .collect();
        match &self.decoder {
            Some(d) => tokenizers::Decoder::decode(d, tokens),
            None => Ok(tokens.join(" ")),
        }
    }
}

#[cfg(test)]
mod growth_tests {
    use super::growth;
    use serde_json::json;

    #[test]
    fn replacements_that_multiply_are_measured() {
        let double = json!({"type": "Replace", "pattern": {"String": "a"}, "content": "aa"});
        let chain = json!({"type": "Sequence", "normalizers": vec![double.clone(); 40]});
        assert_eq!(growth(&chain, 0), 2f64.powi(40));
        // SentencePiece's usual normalizer and decoder stay far below the bound.
        let sp = json!({"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "▁"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]});
        assert_eq!(growth(&sp, 0), 2.0);
        assert!(growth(&json!({"type": "Precompiled"}), 0) < super::MAX_GROWTH);
        assert_eq!(growth(&serde_json::Value::Null, 0), 1.0);
        let regex = json!({"type": "Replace", "pattern": {"Regex": "x*"}, "content": "yyy"});
        assert_eq!(growth(&regex, 0), 4.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A SentencePiece vocabulary's fields of the wrong kind are errors naming the key, never a
    /// default or a panic.
    #[test]
    fn a_malformed_sentencepiece_vocabulary_is_refused_by_key() {
        let header = |extra: Vec<(&str, Value)>, tokens: Vec<&str>| {
            let mut metadata = vec![
                ("tokenizer.ggml.model".into(), Value::String("llama".into())),
                (
                    "tokenizer.ggml.tokens".into(),
                    Value::Array(
                        tokens
                            .iter()
                            .map(|t| Value::String(t.to_string()))
                            .collect(),
                    ),
                ),
                (
                    "tokenizer.ggml.scores".into(),
                    Value::Array(tokens.iter().map(|_| Value::F32(0.0)).collect()),
                ),
            ];
            metadata.extend(extra.into_iter().map(|(k, v)| (k.to_string(), v)));
            anatomy_checkpoint::gguf_header::Header {
                version: 3,
                metadata,
                tensors: Vec::new(),
                alignment: 32,
                data_start: 0,
                file_len: 0,
            }
        };
        let ok = header(vec![], vec!["<unk>", "\u{2581}a"]);
        assert!(from_gguf(&ok, "t").is_ok());
        for (h, key) in [
            (header(vec![], vec![]), "tokenizer.ggml.tokens"),
            (
                header(
                    vec![("tokenizer.ggml.add_space_prefix", Value::U32(1))],
                    vec!["<unk>"],
                ),
                "tokenizer.ggml.add_space_prefix",
            ),
            (
                header(
                    vec![("tokenizer.ggml.unknown_token_id", Value::U32(9))],
                    vec!["<unk>"],
                ),
                "tokenizer.ggml.unknown_token_id",
            ),
        ] {
            let e = from_gguf(&h, "t").unwrap_err();
            assert_eq!(e.field, key, "{e}");
        }
    }

    /// Each byte-level pre-tokenizer splits text as llama.cpp does: a vocabulary of the 256 bytes
    /// and merges that each cross a boundary one pattern draws and another does not, relabelled
    /// with every `tokenizer.ggml.pre` anatomy reads (and a whole word no merge makes), against
    /// llama.cpp's ids (scripts/make_pretokenizer_fixture.py): nine different tokenizations.
    #[test]
    fn each_pre_tokenizer_splits_as_llama_cpp_does() {
        let fixture: serde_json::Value =
            serde_json::from_str(include_str!("../tests/fixtures/pretokenizers.json")).unwrap();
        let texts: Vec<String> = serde_json::from_value(fixture["texts"].clone()).unwrap();
        let strings = |k: &str| -> Value {
            let v: Vec<String> = serde_json::from_value(fixture["probe"][k].clone()).unwrap();
            Value::Array(v.into_iter().map(Value::String).collect())
        };
        let header = |pre: &str| anatomy_checkpoint::gguf_header::Header {
            version: 3,
            metadata: vec![
                ("tokenizer.ggml.model".into(), Value::String("gpt2".into())),
                ("tokenizer.ggml.pre".into(), Value::String(pre.into())),
                ("tokenizer.ggml.tokens".into(), strings("tokens")),
                ("tokenizer.ggml.merges".into(), strings("merges")),
            ],
            tensors: Vec::new(),
            alignment: 32,
            data_start: 0,
            file_len: 0,
        };
        let ids = fixture["probe_ids"].as_object().unwrap();
        let known: Vec<&str> = PRE.iter().flat_map(|p| p.names.iter().copied()).collect();
        let mut tested: Vec<&str> = ids.keys().map(String::as_str).collect();
        tested.sort();
        let mut known_sorted = known.clone();
        known_sorted.sort();
        assert_eq!(
            tested, known_sorted,
            "every pre-tokenizer anatomy reads has llama.cpp's ids"
        );
        let mut distinct = std::collections::BTreeSet::new();
        for (pre, want) in ids {
            let tok = from_gguf(&header(pre), "probe").unwrap();
            let want: Vec<Vec<u32>> = serde_json::from_value(want.clone()).unwrap();
            for (text, want) in texts.iter().zip(&want) {
                let got = tok.encode(text.as_str(), false).unwrap();
                assert_eq!(&got, want, "{pre}: {text:?}");
            }
            distinct.insert(want);
        }
        assert_eq!(
            distinct.len(),
            PRE.len(),
            "each pattern set tokenizes differently"
        );
    }

    /// The Detokenizer gives `Tokenizer::decode`'s text for ids with special tokens, multi-byte
    /// characters split across tokens, and ids past the vocabulary, with a byte-level decoder
    /// and without one.
    #[test]
    fn a_detokenizer_decodes_as_its_tokenizer_does() {
        let vocab: tokenizers::models::bpe::Vocab =
            ["a", "b", "Ġ", "Ã", "©", "Ġa", "ab", "Ġab", "<|end|>", "Ä"]
                .iter()
                .enumerate()
                .map(|(i, t)| (t.to_string(), i as u32))
                .collect();
        let merges = vec![
            ("Ġ".to_string(), "a".to_string()),
            ("a".to_string(), "b".to_string()),
            ("Ġ".to_string(), "ab".to_string()),
        ];
        let bpe = BPE::builder()
            .vocab_and_merges(vocab, merges)
            .build()
            .unwrap();
        let mut tok = Tokenizer::new(bpe);
        tok.add_special_tokens(vec![
            AddedToken::from("<|end|>", true),
            AddedToken::from("<|x|>", true),
        ])
        .unwrap();
        let cases: [&[u32]; 5] = [&[0, 1, 7, 5], &[3, 4, 2, 0], &[8, 0, 10, 9], &[99, 6], &[]];
        for with_decoder in [false, true] {
            if with_decoder {
                tok.with_decoder(Some(ByteLevel::default()));
            }
            let enc = Encoder::Hf(tok.clone());
            let d = Detokenizer::new(&enc);
            for ids in cases {
                assert_eq!(
                    d.decode(ids).unwrap(),
                    tok.decode(ids, false).unwrap(),
                    "{ids:?}"
                );
            }
        }
    }
}
