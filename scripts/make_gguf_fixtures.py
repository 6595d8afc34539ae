#!/usr/bin/env python3
"""A mixture-of-experts GGUF fixture: a tiny random Mixtral made by transformers, written as
llama.cpp's converter writes one (architecture `llama` with `expert_count`, Q and K rows permuted
for its RoPE, each layer's experts stacked in ffn_{gate,up,down}_exps), once in F32 and once with
its matrices in Q8_0, with transformers' logits for the F32 weights.

Writes crates/exec/tests/fixtures/gguf/mixtral/{model-f32.gguf, model-q8_0.gguf, expected.json}.
Usage: python3 scripts/make_gguf_fixtures.py   (needs: torch, transformers, gguf)
"""
import json
import tempfile
from pathlib import Path

import gguf
import numpy as np
import torch
import transformers
from safetensors.numpy import load_file

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "crates/exec/tests/fixtures/gguf/mixtral"
IDS = [5, 17, 42, 3, 90, 11, 7, 8, 61, 20, 33, 2]


def permute(w, heads):
    """llama.cpp's converter's permutation of Q and K rows (convert_hf_to_gguf.py)."""
    return w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def tensors(sd, cfg):
    """The state dict under llama.cpp's names, experts stacked."""
    out = {
        "token_embd.weight": sd["model.embed_tokens.weight"],
        "output_norm.weight": sd["model.norm.weight"],
        "output.weight": sd["lm_head.weight"],
    }
    for b in range(cfg.num_hidden_layers):
        p = f"model.layers.{b}."
        out[f"blk.{b}.attn_norm.weight"] = sd[p + "input_layernorm.weight"]
        out[f"blk.{b}.attn_q.weight"] = permute(sd[p + "self_attn.q_proj.weight"], cfg.num_attention_heads)
        out[f"blk.{b}.attn_k.weight"] = permute(sd[p + "self_attn.k_proj.weight"], cfg.num_key_value_heads)
        out[f"blk.{b}.attn_v.weight"] = sd[p + "self_attn.v_proj.weight"]
        out[f"blk.{b}.attn_output.weight"] = sd[p + "self_attn.o_proj.weight"]
        out[f"blk.{b}.ffn_norm.weight"] = sd[p + "post_attention_layernorm.weight"]
        out[f"blk.{b}.ffn_gate_inp.weight"] = sd[p + "block_sparse_moe.gate.weight"]
        for ours, theirs in (("gate", "w1"), ("up", "w3"), ("down", "w2")):
            experts = [sd[f"{p}block_sparse_moe.experts.{e}.{theirs}.weight"] for e in range(cfg.num_local_experts)]
            out[f"blk.{b}.ffn_{ours}_exps.weight"] = np.stack(experts)
    return out


def write(path, cfg, named, quantize):
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(cfg.num_hidden_layers)
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    w.add_rope_freq_base(cfg.rope_parameters["rope_theta"])
    w.add_vocab_size(cfg.vocab_size)
    w.add_expert_count(cfg.num_local_experts)
    w.add_expert_used_count(cfg.num_experts_per_tok)
    for name, t in named.items():
        t = np.ascontiguousarray(t, dtype=np.float32)
        if quantize and t.ndim >= 2:
            q = gguf.quants.quantize(t, gguf.GGMLQuantizationType.Q8_0)
            w.add_tensor(name, q, raw_dtype=gguf.GGMLQuantizationType.Q8_0)
        else:
            w.add_tensor(name, t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    torch.manual_seed(0)
    # Every row a multiple of 32 values, so every matrix has a Q8_0 copy.
    cfg = transformers.MixtralConfig(hidden_size=64, intermediate_size=64, num_hidden_layers=2,
                                     num_attention_heads=4, num_key_value_heads=2, vocab_size=97,
                                     max_position_embeddings=128, num_local_experts=4,
                                     num_experts_per_tok=2)
    model = transformers.MixtralForCausalLM(cfg).eval()
    with torch.no_grad():
        logits = model(torch.tensor([IDS])).logits[0].tolist()
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp)
        sd = load_file(str(Path(tmp) / "model.safetensors"))
    named = tensors(sd, cfg)
    OUT.mkdir(parents=True, exist_ok=True)
    write(OUT / "model-f32.gguf", cfg, named, quantize=False)
    write(OUT / "model-q8_0.gguf", cfg, named, quantize=True)
    (OUT / "expected.json").write_text(json.dumps({
        "transformers": transformers.__version__, "gguf": gguf.__version__ if hasattr(gguf, "__version__") else "",
        "ids": IDS, "logits": logits}) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
