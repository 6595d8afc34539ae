#!/usr/bin/env python3
"""Random blocks of the ggml types anatomy dequantizes itself (crates/checkpoint/src/dequant/),
with the values llama.cpp's own ggml gives them (`ggml_get_type_traits(type)->to_float`, from
the libggml-base that llama-cpp-python ships): crates/checkpoint/tests/fixtures/dequant.json.
gguf-py's `dequantize` is checked against the same values as it goes.

Every byte is random; a block whose scale decodes to an infinite or NaN value is drawn again.

Usage: python3 scripts/make_dequant_fixture.py   (needs: pip install llama-cpp-python gguf numpy)
"""
import ctypes
import json
from pathlib import Path

import llama_cpp
import numpy as np
from gguf import GGMLQuantizationType as T
from gguf.quants import dequantize

OUT = Path(__file__).resolve().parent.parent / "crates/checkpoint/tests/fixtures/dequant.json"
TYPES = [T.IQ2_XXS, T.IQ2_XS, T.IQ3_XXS, T.IQ1_S, T.IQ4_NL, T.IQ3_S, T.IQ2_S, T.IQ4_XS, T.IQ1_M,
         T.TQ1_0, T.TQ2_0, T.MXFP4]
BLOCKS = 4


class Traits(ctypes.Structure):
    _fields_ = [("type_name", ctypes.c_char_p), ("blck_size", ctypes.c_int64),
                ("blck_size_interleave", ctypes.c_int64), ("type_size", ctypes.c_size_t),
                ("is_quantized", ctypes.c_bool), ("to_float", ctypes.c_void_p),
                ("from_float_ref", ctypes.c_void_p)]


def ggml():
    lib = ctypes.CDLL(str(Path(llama_cpp.__file__).parent / "lib" / "libggml-base.so"))
    lib.ggml_get_type_traits.restype = ctypes.POINTER(Traits)
    lib.ggml_get_type_traits.argtypes = [ctypes.c_int]
    return lib


def main():
    lib = ggml()
    to_float_t = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(ctypes.c_float), ctypes.c_int64)
    rng = np.random.default_rng(0)
    out = {}
    for t in TYPES:
        traits = lib.ggml_get_type_traits(int(t)).contents
        values, size = traits.blck_size, traits.type_size
        to_float = to_float_t(traits.to_float)
        blocks = []
        while len(blocks) < BLOCKS:
            b = rng.integers(0, 256, size=size, dtype=np.uint8)
            y = (ctypes.c_float * values)()
            to_float(b.ctypes.data, y, values)
            y = np.array(y[:], dtype=np.float32)
            if np.isfinite(y).all() and np.abs(y).max() < 1e4:
                blocks.append((b, y))
        raw = np.concatenate([b for b, _ in blocks])
        ref = np.concatenate([y for _, y in blocks])
        py = dequantize(raw, t).astype(np.float32).reshape(-1)
        assert np.array_equal(py, ref), f"gguf-py and ggml differ on {t.name}"
        out[str(int(t))] = {"name": t.name, "hex": raw.tobytes().hex(), "values": [float(v) for v in ref]}
    OUT.write_text(json.dumps(out) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
