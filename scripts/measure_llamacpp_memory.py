#!/usr/bin/env python3
"""Groundwork for the memory planner (issue 46): what llama.cpp allocates and what a process running
it holds, beside anatomy's figures, for real GGUF files at several contexts.

For each GGUF and n_ctx it loads the file in a fresh process with llama-cpp-python (CPU, n_batch =
n_ubatch = 512, swa_full off and, for a model with sliding-window layers, on), evaluates 8 tokens,
and prints llama.cpp's own buffer sizes from its log (model, KV cache, compute), the process's peak
RSS, and anatomy's KV cache at that context (`anatomy stats --context N --json`, 2 bytes a value,
as llama.cpp's default f16 cache).

Usage: python3 scripts/measure_llamacpp_memory.py --anatomy target/release/anatomy GGUF [GGUF ...]
(needs llama-cpp-python: pip install llama-cpp-python, which builds llama.cpp, some minutes)
"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

CONTEXTS = [512, 2048, 8192, 32768]

# One load in a fresh process, so that the peak RSS is this load's alone.
ONE = r'''
import json, os, re, resource, sys
import llama_cpp
path, n_ctx, swa_full, log_path = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4]
log = open(log_path, "w+")
saved = os.dup(2)
os.dup2(log.fileno(), 2)
m = llama_cpp.Llama(model_path=path, n_ctx=n_ctx, n_batch=512, n_ubatch=512, swa_full=swa_full,
                    verbose=True, n_threads=2)
# Token ids rather than text: a toy GGUF's vocabulary may tokenize nothing.
m.eval(list(range(1, 9)))
os.dup2(saved, 2)
log.seek(0)
text = log.read()
mib = lambda pat: sum(float(x) for x in re.findall(pat, text))
print(json.dumps({
    "model": mib(r"CPU(?:_Mapped)? model buffer size =\s*([\d.]+) MiB"),
    "kv": mib(r"llama_kv_cache: size =\s*([\d.]+) MiB"),
    "compute": mib(r"CPU compute buffer size =\s*([\d.]+) MiB"),
    "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
'''


def anatomy_stats(anatomy, gguf, n_ctx):
    out = subprocess.run([anatomy, "stats", gguf, "--context", str(n_ctx), "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--anatomy", default="target/release/anatomy")
    ap.add_argument("gguf", nargs="+")
    args = ap.parse_args()
    print("| model | n_ctx | swa_full | llama.cpp model MiB | KV MiB: llama.cpp | anatomy | compute MiB | sum MiB | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for gguf in args.gguf:
        for n_ctx in CONTEXTS:
            try:
                stats = anatomy_stats(args.anatomy, gguf, n_ctx)
            except subprocess.CalledProcessError as e:
                print(f"| {gguf} | {n_ctx} | | anatomy refused it: {e.stderr.strip()} |")
                continue
            # A file named for its format alone (the fixtures' model-q8_0.gguf) by its folder.
            name = Path(gguf).stem if not Path(gguf).stem.startswith("model") else Path(gguf).parent.name
            # Some window is full at this context: llama.cpp's swa_full then changes its cache.
            kv = stats["kv_cache"]
            sliding = kv["values_at_context"] < kv["values_per_token"] * n_ctx
            for swa_full in ([False, True] if sliding else [False]):
                with tempfile.NamedTemporaryFile(mode="r", suffix=".log") as log:
                    run = subprocess.run([sys.executable, "-c", ONE, gguf, str(n_ctx), "1" if swa_full else "0",
                                          log.name], capture_output=True, text=True)
                    lines = (log.read() + run.stderr).strip().splitlines()
                if run.returncode:
                    why = (lines or [f"exit code {run.returncode}"])[-1]
                    print(f"| {name} | {n_ctx} | {swa_full} | llama.cpp failed: {why} |")
                    continue
                m = json.loads(run.stdout.strip().splitlines()[-1])
                ours = stats["kv_cache"]["bytes_at_context_bf16"] / 2**20
                total = m["model"] + m["kv"] + m["compute"]
                print(f"| {name} | {n_ctx} | {swa_full} | {m['model']:.1f} | {m['kv']:.3f} | {ours:.3f} | "
                      f"{m['compute']:.1f} | {total:.1f} | {m['rss']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
