#!/usr/bin/env python3
"""GGUFs of the toy Qwen3 and Qwen3-MoE (crates/exec/tests/fixtures/gguf/{qwen3,qwen3-moe}/
model-f32.gguf) in ggml types candle does not read, each beside the same weights dequantized by gguf-py, llama.cpp's own
Python reference, and written as F32:

- model-iq4_nl.gguf: quantized by llama.cpp itself (llama_model_quantize, IQ4_NL; the matrices
  whose rows do not fill its blocks fall back as llama.cpp chooses);
- model-mxfp4.gguf: every matrix (and stack of experts) quantized to MXFP4 by gguf-py's
  quantizer;
- model-<type>-dequantized.gguf: each of those files' tensors through gguf-py's `dequantize`.

The toy's rows are 64 values wide, which the 256-value types do not fill. For those, a Qwen3 of
rows 256 wide (one layer; crates/exec/tests/fixtures/gguf/qwen3-wide/): model-<type>.gguf in
IQ3_S, TQ1_0 and TQ2_0 quantized by llama.cpp from transformers' random weights, and in IQ3_XXS,
IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S and IQ1_M, which llama.cpp quantizes only with an importance matrix
(IQ3_XXS's mix puts small models' K in IQ2_S) that its Python binding cannot pass, as blocks drawn at random (each block's d set so that
the weights are about transformers' size); expected.json holds, for each, llama.cpp's logits
(f32 K/V cache) on the file's weights as gguf-py dequantizes them, written as F32 (llama.cpp on the
file itself quantizes the activations to 8 bits: 1.5–2% of the largest logit apart). Their blocks are also checked one by one against ggml
(scripts/make_dequant_fixture.py).

Usage: python3 scripts/make_iquant_fixtures.py [wide]   (needs: pip install llama-cpp-python gguf
numpy; the wide fixture also torch and transformers; `wide` makes only it)
"""
import ctypes
import json
import sys
import tempfile
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


# llama.cpp quantizes these without an importance matrix; the others' blocks are drawn.
QUANTIZED = ("IQ3_S", "TQ1_0", "TQ2_0")
DRAWN = {"IQ3_XXS": 4e-4, "IQ2_XXS": 6e-4, "IQ2_XS": 6e-4, "IQ2_S": 6e-4, "IQ1_S": 4e-3, "IQ1_M": 4e-3}


def drawn(kind, d, rng):
    """A `rewrite` conversion: each matrix of rows a multiple of 256 as random `kind` blocks whose
    f16 d is `d` (IQ1_M's, the top nibbles of its four u16 scales)."""
    qtype = gguf.GGMLQuantizationType[kind]
    _, size = gguf.GGML_QUANT_SIZES[qtype]

    def convert(t):
        shape = t.data.shape
        if len(shape) < 2 or shape[-1] % 256 or t.tensor_type != gguf.GGMLQuantizationType.F32 or "norm" in t.name:
            return t.data, t.tensor_type
        blocks = rng.integers(0, 256, size=(int(np.prod(shape)) // 256, size), dtype=np.uint8)
        bits = int(np.float16(d).view(np.uint16))
        if kind == "IQ1_M":
            for i in range(4):
                scale = blocks[:, 48 + 2 * i:50 + 2 * i].copy().view(np.uint16)
                scale[:] = (scale & 0x0FFF) | (((bits >> (4 * i)) & 15) << 12)
                blocks[:, 48 + 2 * i:50 + 2 * i] = scale.view(np.uint8)
        else:
            blocks[:, 0:2] = np.array([bits], dtype=np.uint16).view(np.uint8)
        return blocks.reshape(*shape[:-1], shape[-1] // 256 * size), qtype

    return convert


def llama_logits(path, ids):
    llm = llama_cpp.Llama(model_path=str(path), n_ctx=len(ids), logits_all=True, verbose=False,
                          type_k=llama_cpp.GGML_TYPE_F32, type_v=llama_cpp.GGML_TYPE_F32)
    llm.eval(ids)
    return [[float(f"{v:.8g}") for v in row] for row in np.array(llm.scores[:len(ids)])]


def wide():
    import torch
    import transformers
    from safetensors.numpy import load_file
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import make_gguf_fixtures as m

    cfg = transformers.Qwen3Config(hidden_size=256, intermediate_size=256, num_hidden_layers=1,
                                   num_attention_heads=4, num_key_value_heads=2, head_dim=64, vocab_size=97,
                                   max_position_embeddings=128, tie_word_embeddings=False)
    torch.manual_seed(0)
    model = transformers.Qwen3ForCausalLM(cfg).eval()
    out = FIXTURES / "qwen3-wide"
    out.mkdir(exist_ok=True)
    rng = np.random.default_rng(0)
    expected = {"ids": m.IDS, "dequantized": {}}
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp)
        named = m.tensors(load_file(str(Path(tmp) / "model.safetensors")), cfg, "qwen3")
        src = Path(tmp) / "model-f32.gguf"
        m.write(src, cfg, named, None, "qwen3")
        for kind in (*QUANTIZED, *DRAWN):
            dst = out / f"model-{kind.lower()}.gguf"
            if kind in QUANTIZED:
                p = llama_cpp.llama_model_quantize_default_params()
                p.ftype = getattr(llama_cpp, f"LLAMA_FTYPE_MOSTLY_{kind}")
                assert llama_cpp.llama_model_quantize(str(src).encode(), str(dst).encode(), ctypes.byref(p)) == 0
            else:
                rewrite(src, dst, drawn(kind, DRAWN[kind], rng))
            wide_copy = Path(tmp) / f"{kind}-dequantized.gguf"
            rewrite(dst, wide_copy, dequantized)
            expected["dequantized"][kind] = llama_logits(wide_copy, m.IDS)
            types = sorted({t.tensor_type.name for t in gguf.GGUFReader(dst).tensors})
            print(f"wrote qwen3-wide/{dst.name} ({', '.join(types)})")
    (out / "expected.json").write_text(json.dumps(expected) + "\n")


def main():
    if sys.argv[1:] == ["wide"]:
        return wide()
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
    wide()


if __name__ == "__main__":
    main()
