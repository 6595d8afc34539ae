#!/usr/bin/env python3
"""Random blocks of the ggml types anatomy dequantizes itself (crates/checkpoint/src/dequant.rs), with
the values gguf-py's reference `dequantize` gives them: crates/checkpoint/tests/fixtures/dequant.json.

Every byte is random but a block's scale, which is a random normal f16 (or, for MXFP4, an e8m0
exponent near 1), so that no value is infinite or NaN.

Usage: python3 scripts/make_dequant_fixture.py   (needs: pip install gguf numpy)
"""
import json
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf.constants import GGML_QUANT_SIZES
from gguf.quants import dequantize

OUT = Path(__file__).resolve().parent.parent / "crates/checkpoint/tests/fixtures/dequant.json"
# Where each type's f16 scale sits in its block (MXFP4's e8m0 exponent is its first byte).
SCALE_AT = {T.IQ4_NL: 0, T.IQ4_XS: 0, T.TQ1_0: 52, T.TQ2_0: 64}
BLOCKS = 4


def main():
    rng = np.random.default_rng(0)
    out = {}
    for t in (T.IQ4_NL, T.IQ4_XS, T.TQ1_0, T.TQ2_0, T.MXFP4):
        values, size = GGML_QUANT_SIZES[t]
        raw = rng.integers(0, 256, size=(BLOCKS, size), dtype=np.uint8)
        for b in raw:
            if t == T.MXFP4:
                b[0] = rng.integers(118, 136)
            else:
                at = SCALE_AT[t]
                b[at:at + 2] = np.frombuffer(np.float16(rng.normal(0, 0.1)).tobytes(), dtype=np.uint8)
        ref = dequantize(raw.reshape(-1), t).astype(np.float32).reshape(-1)
        assert ref.size == BLOCKS * values and np.isfinite(ref).all()
        out[str(int(t))] = {"name": t.name, "hex": raw.tobytes().hex(), "values": [float(v) for v in ref]}
    OUT.write_text(json.dumps(out) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
