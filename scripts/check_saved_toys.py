#!/usr/bin/env python3
"""Run every saved default config (crates/core/tests/fixtures/saved) at toy size against transformers.

Each config is shrunk as scripts/make_toy_fixtures.py shrinks the catalog's (every key kept),
built by transformers with random weights, run by `anatomy run`, and the logits compared. It
finds the keys a config class sets after deriving them (ModernBERT's `sliding_window`), which
the default fixtures cannot show. Not part of the test suite: it takes minutes and writes
checkpoints under /tmp/anatomy-saved-toys.

Usage: python3 scripts/check_saved_toys.py [MODEL_TYPE ...]   (anatomy built in target/debug)
"""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import make_toy_fixtures as toys  # noqa: E402

OUT = Path("/tmp/anatomy-saved-toys")
ANATOMY = ROOT / "target/debug/anatomy"


def check(path):
    name = path.stem
    try:
        toy = toys.shrink(json.loads(path.read_text()))
        model = toys.build(toy)
        d = OUT / name
        toys.save(d, toy, model)
    except Exception as e:  # the shrunk copy is not one transformers builds or runs
        return f"{name}: transformers refused the toy copy ({str(e)[:100]})"
    expected = json.loads((d / "expected.json").read_text())
    ids = ",".join(map(str, expected["ids"]))
    run = subprocess.run([str(ANATOMY), "run", str(d), "--ids", ids, "--logits", str(d / "logits.npy"),
                          "--force"], capture_output=True, text=True)
    if run.returncode != 0:
        return f"{name}: anatomy refused: {run.stderr.strip()[:200]}"
    got, want = np.load(d / "logits.npy"), np.array(expected["logits"])
    diff = float(np.abs(got - want).max()) if got.shape == want.shape else float("inf")
    return f"{name}: max |Δlogit| = {diff:.2e}{'' if diff < 1e-4 else '  MISMATCH'}"


if __name__ == "__main__":
    only = set(sys.argv[1:])
    for path in sorted((ROOT / "crates/core/tests/fixtures/saved").glob("*.json")):
        if not only or path.stem in only:
            print(check(path), flush=True)
