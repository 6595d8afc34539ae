#!/usr/bin/env python3
"""An fp8 DeepSeek-V3 fixture, stored as DeepSeek publishes it: every projection matrix in
float8_e4m3fn with a float32 `weight_scale_inv` per block of rows and columns (here 16 x 16, so
that a toy's matrices hold several, partial ones at their edges), and the quantization_config that
says so. The logits are transformers' on the values those hold (e4m3 value times its block's
scale), loaded from a float32 copy.

Writes crates/exec/tests/fixtures/fp8/deepseek-v3/{config.json, model.safetensors, expected.json}.
Usage: python3 scripts/make_fp8_fixture.py   (needs: torch, transformers, safetensors)
"""
import json
import tempfile
from pathlib import Path

import torch
import transformers
from safetensors.torch import load_file, save_file

from make_toy_fixtures import randomize

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "crates/exec/tests/fixtures/fp8/deepseek-v3"
IDS = [5, 17, 42, 3, 90, 11, 7, 8, 61, 20, 33, 2]
BLOCK = (16, 16)
RAW = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
           num_key_value_heads=4, vocab_size=97, max_position_embeddings=128, pad_token_id=0,
           model_type="deepseek_v3", n_routed_experts=8, n_shared_experts=1, num_experts_per_tok=2,
           moe_intermediate_size=16, first_k_dense_replace=1, n_group=2, topk_group=1,
           routed_scaling_factor=2.5, kv_lora_rank=16, q_lora_rank=24, qk_nope_head_dim=8,
           qk_rope_head_dim=8, v_head_dim=8)


def quantize(w):
    """w [out, n] as e4m3 with a scale per BLOCK (its largest value brought to 448), and the
    values those hold."""
    out, n = w.shape
    rows, cols = -(-out // BLOCK[0]), -(-n // BLOCK[1])
    scale = torch.ones(rows, cols)
    for r in range(rows):
        for c in range(cols):
            b = w[r * BLOCK[0]:(r + 1) * BLOCK[0], c * BLOCK[1]:(c + 1) * BLOCK[1]]
            scale[r, c] = max(b.abs().max().item(), 1e-12) / 448.0
    full = scale.repeat_interleave(BLOCK[0], 0)[:out].repeat_interleave(BLOCK[1], 1)[:, :n]
    q = (w / full).to(torch.float8_e4m3fn)
    return q, scale, q.to(torch.float32) * full


def main():
    torch.manual_seed(0)
    config = transformers.CONFIG_MAPPING["deepseek_v3"](**RAW)
    model = transformers.AutoModelForCausalLM.from_config(config).eval()
    randomize(model)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model.save_pretrained(tmp)
        tensors = load_file(str(tmp / "model.safetensors"))
        stored, values = {}, {}
        for name, t in tensors.items():
            if t.dim() == 2 and name.endswith("_proj.weight") or name.endswith("_proj_with_mqa.weight"):
                q, scale, v = quantize(t)
                stored[name], stored[name + "_scale_inv"], values[name] = q, scale, v
            else:
                stored[name] = values[name] = t
        save_file(values, str(tmp / "model.safetensors"), metadata={"format": "pt"})
        reference = transformers.AutoModelForCausalLM.from_pretrained(tmp).eval()
        with torch.no_grad():
            logits = reference(torch.tensor([IDS])).logits[0].tolist()
    OUT.mkdir(parents=True, exist_ok=True)
    save_file(stored, str(OUT / "model.safetensors"), metadata={"format": "pt"})
    (OUT / "config.json").write_text(json.dumps(dict(RAW, quantization_config={
        "quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
        "weight_block_size": list(BLOCK)}), indent=1) + "\n")
    (OUT / "expected.json").write_text(json.dumps({"transformers": transformers.__version__, "ids": IDS,
                                                   "logits": logits}) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
