#!/usr/bin/env python3
"""GGUFs of the toy Qwen3 and Qwen3-MoE (crates/exec/tests/fixtures/gguf/{qwen3,qwen3-moe}/
model-f32.gguf) in ggml types candle does not read, each beside the same weights dequantized by gguf-py, llama.cpp's own
Python reference, and written as F32:

- model-iq4_nl.gguf: quantized by llama.cpp itself (llama_model_quantize, IQ4_NL; the matrices
  whose rows do not fill its blocks fall back as llama.cpp chooses);
- model-mxfp4.gguf: every matrix (and stack of experts) quantized to MXFP4 by gguf-py's
  quantizer;
- model-<type>-dequantized.gguf: each of those files' tensors through gguf-py's `dequantize`.

The toy's rows are 64 values wide, which the 256-value types (IQ4_XS, TQ1_0, TQ2_0) do not fill:
their kernels are checked block by block against gguf-py (scripts/make_dequant_fixture.py).

Usage: python3 scripts/make_iquant_fixtures.py   (needs: pip install llama-cpp-python gguf numpy)
"""
import ctypes
from pathlib import Path

import gguf
import llama_cpp
import numpy as np

FIXTURES = Path(__file__).resolve().parent.parent / "crates/exec/tests/fixtures/gguf"


def rewrite(src, dst, convert):
    """`src` written to `dst` with each tensor's (data, type) as `convert(tensor)` gives it."""
    r = gguf.GGUFReader(src)
    w = gguf.GGUFWriter(str(dst), arch=r.fields["general.architecture"].contents(), endianess=r.endianess)
    for f in r.fields.values():
        if f.name == "general.architecture" or f.name.startswith("GGUF."):
            continue
        sub = f.types[-1] if f.types[0] == gguf.GGUFValueType.ARRAY else None
        w.add_key_value(f.name, f.contents(), f.types[0], sub_type=sub)
    out = [(t.name, *convert(t)) for t in r.tensors]
    for name, data, kind in out:
        w.add_tensor_info(name, data.shape, data.dtype, data.nbytes, kind)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    for _, data, _ in out:
        w.write_tensor_data(data)
    w.close()


def mxfp4(t):
    if len(t.data.shape) >= 2 and t.data.shape[-1] % 32 == 0 and t.tensor_type == gguf.GGMLQuantizationType.F32:
        return gguf.quants.quantize(np.ascontiguousarray(t.data), gguf.GGMLQuantizationType.MXFP4), gguf.GGMLQuantizationType.MXFP4
    return t.data, t.tensor_type


def dequantized(t):
    return gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32), gguf.GGMLQuantizationType.F32


def main():
    for fixture in ("qwen3", "qwen3-moe"):
        folder = FIXTURES / fixture
        src = folder / "model-f32.gguf"
        p = llama_cpp.llama_model_quantize_default_params()
        p.ftype = llama_cpp.LLAMA_FTYPE_MOSTLY_IQ4_NL
        assert llama_cpp.llama_model_quantize(str(src).encode(), str(folder / "model-iq4_nl.gguf").encode(),
                                              ctypes.byref(p)) == 0
        rewrite(src, folder / "model-mxfp4.gguf", mxfp4)
        for kind in ("iq4_nl", "mxfp4"):
            rewrite(folder / f"model-{kind}.gguf", folder / f"model-{kind}-dequantized.gguf", dequantized)
            types = sorted({t.tensor_type.name for t in gguf.GGUFReader(folder / f"model-{kind}.gguf").tensors})
            print(f"wrote {fixture}/model-{kind}.gguf ({', '.join(types)}) and its dequantized copy")


if __name__ == "__main__":
    main()
