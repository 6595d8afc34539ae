//! SentencePiece vocabularies of a GGUF (`tokenizer.ggml.model` llama: Llama 2's, Phi-3's,
//! Gemma's) tokenized as llama.cpp's `llm_tokenizer_spm` does, step for step: the special tokens
//! split out first, longest first (`tokenizer_st_partition`); then in each stretch of text,
//! spaces written ▁, every character a symbol, and the adjacent pair whose joined text is the
//! best-scored token merged first, the leftmost of equal scores, until none joins into a token;
//! a symbol that is no token written as its bytes (`<0xXX>`).
//!
//! transformers' rebuild of such a vocabulary as BPE merges ranked by score agrees with it on
//! Llama's and Phi-3's, not on Gemma's; this is the algorithm itself.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

/// A vocabulary's tokens, scores and special tokens, as llama.cpp reads them.
pub struct Spm {
    tokens: Vec<String>,
    ids: HashMap<String, u32>,
    scores: Vec<f32>,
    /// Control, unknown and user-defined tokens, longest first: (text, id, split out only where
    /// special tokens are parsed, space after it dropped).
    special: Vec<(String, u32, bool, bool)>,
    /// `<0xXX>`'s id for each byte.
    bytes: Vec<Option<u32>>,
    unknown: u32,
    space_prefix: bool,
}

/// llama.cpp's token types (`tokenizer.ggml.token_type`).
pub const UNKNOWN: i32 = 2;
pub const CONTROL: i32 = 3;
pub const USER_DEFINED: i32 = 4;

/// One pair of adjacent symbols whose text is a token, in the order llama.cpp's queue pops them.
struct Bigram {
    score: f32,
    left: usize,
    right: usize,
    /// The pair's length in bytes when queued: a pair since changed is stale.
    len: usize,
}

impl Ord for Bigram {
    fn cmp(&self, o: &Self) -> Ordering {
        self.score
            .total_cmp(&o.score)
            .then_with(|| o.left.cmp(&self.left))
    }
}
impl PartialOrd for Bigram {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl PartialEq for Bigram {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Bigram {}

/// A symbol: a byte range of the text, and its neighbours in the chain.
#[derive(Clone, Copy)]
struct Symbol {
    start: usize,
    len: usize,
    prev: Option<usize>,
    next: Option<usize>,
}

impl Spm {
    /// `types`: each token's llama.cpp type; `rstrip`: whether a special token drops the
    /// whitespace after it (llama.cpp sets it for models named Phi-3, `</s>` among them, `<unk>`,
    /// `<s>` and `<|endoftext|>` not).
    pub fn new(
        tokens: &[String],
        scores: Vec<f32>,
        types: &[i32],
        unknown: u32,
        space_prefix: bool,
        rstrip: bool,
    ) -> Spm {
        // As llama.cpp's token_to_id: a text held twice names its last id.
        let ids: HashMap<String, u32> = (tokens.iter().enumerate())
            .map(|(i, t)| (t.clone(), i as u32))
            .collect();
        let mut special: Vec<(String, u32, bool, bool)> = (tokens.iter().zip(types))
            .enumerate()
            .filter(|(_, (_, t))| matches!(**t, UNKNOWN | CONTROL | USER_DEFINED))
            .map(|(i, (s, &t))| {
                let strip = rstrip && !matches!(s.as_str(), "<unk>" | "<s>" | "<|endoftext|>");
                (s.clone(), i as u32, t != USER_DEFINED, strip)
            })
            .collect();
        // Longest first; among equal lengths, id order (llama.cpp's sort is not stable: where
        // two such tokens overlap in a text, it may differ).
        special.sort_by_key(|s| std::cmp::Reverse(s.0.len()));
        let bytes = (0..=255u8)
            .map(|b| {
                ids.get(&format!("<0x{b:02X}>"))
                    .or_else(|| ids.get(&(b as char).to_string()).filter(|_| b < 128))
                    .copied()
            })
            .collect();
        Spm {
            tokens: tokens.to_vec(),
            ids,
            scores,
            special,
            bytes,
            unknown,
            space_prefix,
        }
    }

    /// Every id's token in one string, and each one's (start, length) in it (`Detokenizer`).
    pub fn texts(&self) -> (String, Vec<Option<(u32, u32)>>) {
        let mut text = String::new();
        let spans = (self.tokens.iter())
            .map(|t| {
                text.push_str(t);
                Some(((text.len() - t.len()) as u32, t.len() as u32))
            })
            .collect();
        (text, spans)
    }

    /// The ids of `text`, with no BOS; `special`: whether control tokens written in it are read
    /// as themselves (user-defined ones always are).
    pub fn encode(&self, text: &str, special: bool) -> Vec<u32> {
        enum Part<'t> {
            Text(&'t str),
            Token(u32),
        }
        let mut parts = vec![Part::Text(text)];
        for (s, id, control, rstrip) in &self.special {
            if *control && !special || s.is_empty() {
                continue;
            }
            let mut next = Vec::with_capacity(parts.len());
            for p in parts {
                let Part::Text(mut t) = p else {
                    next.push(p);
                    continue;
                };
                while let Some(at) = t.find(s.as_str()) {
                    if at > 0 {
                        next.push(Part::Text(&t[..at]));
                    }
                    next.push(Part::Token(*id));
                    t = &t[at + s.len()..];
                    if *rstrip {
                        // C's isspace, as llama.cpp strips.
                        t = t.trim_start_matches([' ', '\t', '\n', '\x0B', '\x0C', '\r']);
                    }
                }
                if !t.is_empty() {
                    next.push(Part::Text(t));
                }
            }
            parts = next;
        }
        let mut out = Vec::new();
        let mut after_special = true;
        for p in parts {
            match p {
                Part::Token(id) => {
                    out.push(id);
                    after_special = true;
                }
                Part::Text(t) => {
                    let prefix = if self.space_prefix && after_special {
                        " "
                    } else {
                        ""
                    };
                    self.merge(&format!("{prefix}{t}").replace(' ', "\u{2581}"), &mut out);
                    after_special = false;
                }
            }
        }
        out
    }

    /// One stretch of text, its spaces already ▁: `llm_tokenizer_spm_session::tokenize`.
    fn merge(&self, text: &str, out: &mut Vec<u32>) {
        let n = text.chars().count();
        let mut sym: Vec<Symbol> = (text.char_indices().enumerate())
            .map(|(i, (start, c))| Symbol {
                start,
                len: c.len_utf8(),
                prev: i.checked_sub(1),
                next: (i + 1 < n).then_some(i + 1),
            })
            .collect();
        let mut queue = BinaryHeap::new();
        let bigram = |sym: &[Symbol], l: Option<usize>, r: Option<usize>| {
            let (l, r) = (l?, r?);
            let len = sym[l].len + sym[r].len;
            let id = *self.ids.get(&text[sym[l].start..sym[l].start + len])?;
            Some(Bigram {
                score: self.scores.get(id as usize).copied().unwrap_or(f32::MIN),
                left: l,
                right: r,
                len,
            })
        };
        for i in 1..n {
            queue.extend(bigram(&sym, Some(i - 1), Some(i)));
        }
        while let Some(b) = queue.pop() {
            let (l, r) = (sym[b.left], sym[b.right]);
            if l.len == 0 || r.len == 0 || l.len + r.len != b.len {
                continue;
            }
            sym[b.left].len += r.len;
            sym[b.right].len = 0;
            sym[b.left].next = r.next;
            if let Some(nx) = r.next {
                sym[nx].prev = Some(b.left);
            }
            queue.extend(bigram(&sym, sym[b.left].prev, Some(b.left)));
            queue.extend(bigram(&sym, Some(b.left), sym[b.left].next));
        }
        // A merged symbol is a token; one not merged that is no token, its bytes. (llama.cpp's
        // `resegment` also splits a symbol back along its merges, which only a merge whose text
        // is no token would need.)
        let mut i = (n > 0).then_some(0);
        while let Some(k) = i {
            let s = &text[sym[k].start..sym[k].start + sym[k].len];
            match self.ids.get(s) {
                Some(&id) => out.push(id),
                None => out.extend(
                    s.bytes()
                        .map(|b| self.bytes[b as usize].unwrap_or(self.unknown)),
                ),
            }
            i = sym[k].next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spm(tokens: &[(&str, f32, i32)], prefix: bool) -> Spm {
        let t: Vec<String> = tokens.iter().map(|t| t.0.to_string()).collect();
        let s = tokens.iter().map(|t| t.1).collect();
        let ty: Vec<i32> = tokens.iter().map(|t| t.2).collect();
        Spm::new(&t, s, &ty, 0, prefix, false)
    }

    /// The best-scored join first, the leftmost of equals; a character no token holds as its
    /// bytes; a special token split out before merging, a control one only where asked.
    #[test]
    fn merges_best_score_first_and_falls_back_to_bytes() {
        let v = spm(
            &[
                ("<unk>", 0.0, UNKNOWN),
                ("a", 0.0, 1),
                ("b", 0.0, 1),
                ("ab", -2.0, 1),
                ("bb", -1.0, 1),
                ("abb", -3.0, 1),
                ("<0xC3>", 0.0, 6),
                ("<0xA9>", 0.0, 6),
                ("<c>", 0.0, CONTROL),
                ("\u{2581}", -5.0, 1),
            ],
            false,
        );
        // "abb": bb (-1) before ab (-2), then a + bb = abb.
        assert_eq!(v.encode("abb", false), [5]);
        // "abab": ab twice, the left first; ab + ab is no token.
        assert_eq!(v.encode("abab", false), [3, 3]);
        // é is two bytes, neither a token.
        assert_eq!(v.encode("é", false), [6, 7]);
        assert_eq!(v.encode("a<c>b", true), [1, 8, 2]);
        assert_eq!(v.encode("a b", false), [1, 9, 2]);
    }
}
