#!/usr/bin/env python3
"""Whole-process timing of the release `anatomy` binary (median of N runs per command).

Usage: cargo build --release && python3 scripts/bench_process.py [N]
"""
import statistics
import subprocess
import sys
import time

N = int(sys.argv[1]) if len(sys.argv) > 1 else 30
COMMANDS = [
    ["show", "--width", "100"],
    ["show", "qwen3-30b-a3b", "--width", "100"],
    ["stats", "mixtral-8x7b-v0.1"],
    ["manifest", "qwen3-30b-a3b", "--json"],
]
for args in COMMANDS:
    times = []
    for _ in range(N):
        start = time.perf_counter()
        subprocess.run(["./target/release/anatomy", *args], stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    print(f"anatomy {' '.join(args):<44} median {statistics.median(times) * 1e3:6.2f} ms  min {min(times) * 1e3:6.2f} ms")
