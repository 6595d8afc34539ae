#!/usr/bin/env python3
"""llama.cpp's own tokenization of a set of texts with Gemma 3's SentencePiece vocabulary (the
Gemma 3 270M GGUF of scripts/setup.sh, loaded vocabulary-only), special tokens written in the
text read as themselves and no BOS added, as `anatomy run --prompt` tokenizes: whitespace runs,
newlines, control tokens of the chat template, non-Latin scripts, emoji, a zero-width space.

Writes crates/exec/tests/fixtures/gemma3-vocab.json, which
`gemmas_sentencepiece_vocabulary_tokenizes_as_llama_cpp_does` (crates/exec/tests/llama_vocab.rs)
holds anatomy to.
Usage: python3 scripts/make_gemma_vocab_fixture.py [--gguf FILE]
(needs: pip install llama-cpp-python; the Gemma GGUF, see scripts/setup.sh)
"""
import argparse
import json
import os
from pathlib import Path

from llama_cpp import Llama

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "crates/exec/tests/fixtures/gemma3-vocab.json"
TEXTS = [
    "Hello world, this is Gemma.",
    " leading space and  double  spaces",
    "Tabs\tand\nnewlines\n\nparagraphs\n\n\n",
    "Ünïcödé: naïve café, 日本語のテキスト, emoji 🦙🚀, Ελληνικά",
    "<start_of_turn>user\nWhat is 2+2?<end_of_turn>\n<start_of_turn>model\n",
    "code: def f(x):\n    return x**2  # squares",
    "numbers 1234567890 3.14159 -42 1e-10",
    "    ",
    "a" * 50,
    "URL https://example.com/path?q=1&b=two#frag",
    "<bos>not at start <eos> and <unk> <pad> inline",
    "mixed CASE WoRdS and punctuation!!! ??? ...",
    "\u200b zero width and \u00a0 nbsp",
    "Ａ full-width ＡＢＣ and ½ ligature ﬁ",
]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gguf", default=os.environ.get("ANATOMY_GEMMA_GGUF") or str(
        Path.home() / ".cache/anatomy/gemma3/gemma-3-270m-q4_k_m.gguf"))
    a = ap.parse_args()
    llm = Llama(model_path=a.gguf, vocab_only=True, verbose=False)
    cases = [{"text": t, "ids": llm.tokenize(t.encode(), add_bos=False, special=True)} for t in TEXTS]
    OUT.write_text(json.dumps(cases, ensure_ascii=False, indent=1) + "\n")
    print(OUT, len(cases), "texts")


if __name__ == "__main__":
    main()
