#!/usr/bin/env python3
"""An 8B-class checkpoint in bf16 with random weights, run by anatomy in its stored format: peak
resident memory against the file's size, and prefill and decode speed.

The tensors and shapes are the ones `anatomy manifest` lists for a published config (default:
Llama 3.1 8B, ../shared/configs), so nothing here is typed in for one model. Weights are normal
with standard deviation 1/sqrt(fan-in), norms 1; written once to a cache folder (about 16 GB)
and reused.

Usage: python3 scripts/bench_8b_bf16.py [--config FILE] [--dir DIR] [--threads N] [--tokens N]
(needs: numpy; cargo build --release)
"""
import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def write_checkpoint(anatomy, config, out):
    """A safetensors file with every tensor `anatomy manifest` lists for `config`, in bf16."""
    tensors = json.loads(subprocess.check_output([anatomy, "manifest", str(config), "--json"]))["tensors"]
    names = sorted(tensors)
    header, offset = {}, 0
    for name in names:
        size = 2 * int(np.prod(tensors[name]))
        header[name] = {"dtype": "BF16", "shape": tensors[name], "data_offsets": [offset, offset + size]}
        offset += size
    head = json.dumps(header).encode()
    head += b" " * (-len(head) % 8)
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(config, out / "config.json")
    rng = np.random.default_rng(0)
    part = out / "model.safetensors.part"
    with open(part, "wb") as f:
        f.write(struct.pack("<Q", len(head)) + head)
        for name in names:
            shape = tensors[name]
            if len(shape) == 1:
                values = np.ones(shape, dtype=np.float32)
            else:
                # Row by row block, so the float32 values never exceed a few hundred MB.
                values = None
                rows, fan_in = shape[0], int(np.prod(shape[1:]))
                step = max(1, (64 << 20) // fan_in)
                for r in range(0, rows, step):
                    block = rng.standard_normal((min(step, rows - r), fan_in), dtype=np.float32)
                    block *= fan_in ** -0.5
                    f.write((block.view(np.uint32) >> 16).astype("<u2").tobytes())
            if values is not None:
                f.write((values.view(np.uint32) >> 16).astype("<u2").tobytes())
    part.rename(out / "model.safetensors")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=str(ROOT.parent / "shared/configs/Llama-3.1-8B.config.json"))
    ap.add_argument("--dir", default=str(Path.home() / ".cache/anatomy/random-llama-3.1-8b-bf16"))
    ap.add_argument("--anatomy", default=str(ROOT / "target/release/anatomy"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tokens", type=int, default=8, help="greedy tokens to generate")
    a = ap.parse_args()
    out = Path(a.dir)
    if not (out / "model.safetensors").is_file():
        print(f"writing {out} (about 16 GB, once)", file=sys.stderr)
        write_checkpoint(a.anatomy, a.config, out)
    size = (out / "model.safetensors").stat().st_size / 1e9
    wrapper = ("import os, sys\npid = os.fork()\nif pid == 0:\n    os.execvp(sys.argv[1], sys.argv[1:])\n"
               "_, status, usage = os.wait4(pid, 0)\nsys.stderr.write(f'\\nPEAK_KB {usage.ru_maxrss}\\n')\n"
               "sys.exit(os.waitstatus_to_exitcode(status))\n")
    ids = ",".join(str(i) for i in range(1000, 1016))
    p = subprocess.run([sys.executable, "-c", wrapper, a.anatomy, "run", str(out), "--ids", ids,
                        "--max-tokens", str(a.tokens), "--ignore-eos", "--threads", str(a.threads)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"anatomy failed:\n{p.stderr[-2000:]}")
    peak = int(re.findall(r"PEAK_KB (\d+)", p.stderr)[-1]) * 1024 / 1e9
    held = re.search(r"weights: (.*)", p.stderr)[1]
    speed = re.search(r"prefill: .*", p.stderr)[0]
    print(f"{out.name}: {size:.2f} GB of bf16, {a.threads} threads")
    print(f"weights: {held}")
    print(speed)
    print(f"peak RSS {peak:.2f} GB = {peak / size:.3f} x the file")


if __name__ == "__main__":
    main()
