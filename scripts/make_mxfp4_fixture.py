#!/usr/bin/env python3
"""An MXFP4 gpt-oss fixture, stored as OpenAI publishes gpt-oss: each expert weight X as
`X_blocks` [experts, rows, groups, 16] (two e2m1 codes a byte, the low nibble first) and
`X_scales` [experts, rows, groups] (e8m0), rows being X's output dim, and the quantization_config
that says so. The logits are transformers' on the values those blocks hold (dequantized with
transformers' own convert_moe_packed_tensors).

Writes crates/exec/tests/fixtures/mxfp4/gpt-oss/{config.json, model.safetensors, expected.json}.
Usage: python3 scripts/make_mxfp4_fixture.py   (needs: torch, transformers, safetensors)
"""
import json
import tempfile
from pathlib import Path

import numpy as np
import torch
import transformers
from safetensors.numpy import load_file, save_file
from transformers.integrations.mxfp4 import convert_moe_packed_tensors

from make_toy_fixtures import randomize

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "crates/exec/tests/fixtures/mxfp4/gpt-oss"
IDS = [5, 17, 42, 3, 90, 11, 7, 8, 61, 20, 33, 2]
E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0],
                dtype=np.float32)


def quantize(w):
    """w [E, in, out] as MXFP4 blocks and scales of w transposed, [E, out, in/32, 16] and
    [E, out, in/32]: each block's scale the power of two that brings its largest value within 6,
    each value the nearest code."""
    t = np.ascontiguousarray(np.swapaxes(w, 1, 2))
    e, out, n = t.shape
    b = t.reshape(e, out, n // 32, 32)
    amax = np.abs(b).max(axis=-1)
    scale = np.clip(np.ceil(np.log2(np.maximum(amax, 1e-30) / 6.0)) + 127, 0, 254).astype(np.uint8)
    unit = np.ldexp(np.float32(1.0), scale.astype(np.int32) - 127)[..., None]
    codes = np.abs(b[..., None] - E2M1 * unit[..., None]).argmin(axis=-1).astype(np.uint8)
    blocks = codes[..., 0::2] | (codes[..., 1::2] << 4)
    return blocks, scale


def main():
    torch.manual_seed(0)
    raw = dict(hidden_size=64, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
               num_key_value_heads=2, vocab_size=97, max_position_embeddings=128, pad_token_id=0,
               model_type="gpt_oss", head_dim=16, num_local_experts=4, num_experts_per_tok=2,
               sliding_window=4)
    config = transformers.CONFIG_MAPPING["gpt_oss"](**raw)
    model = transformers.AutoModelForCausalLM.from_config(config).eval()
    randomize(model)
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp)
        tensors = load_file(str(Path(tmp) / "model.safetensors"))
    for name in sorted(tensors):
        if not (name.endswith("experts.gate_up_proj") or name.endswith("experts.down_proj")):
            continue
        blocks, scales = quantize(tensors.pop(name))
        tensors[name + "_blocks"], tensors[name + "_scales"] = blocks, scales
        # The values the blocks hold, as transformers reads them, into the reference model.
        values = convert_moe_packed_tensors(torch.from_numpy(blocks), torch.from_numpy(scales),
                                            dtype=torch.float32)
        model.get_parameter(name).data.copy_(values)
    with torch.no_grad():
        logits = model(torch.tensor([IDS])).logits[0].tolist()
    OUT.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(OUT / "model.safetensors"), metadata={"format": "pt"})
    (OUT / "config.json").write_text(json.dumps(dict(raw, quantization_config={
        "quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
                                                            "model.embed_tokens", "lm_head"]}), indent=1) + "\n")
    (OUT / "expected.json").write_text(json.dumps({"transformers": transformers.__version__, "ids": IDS,
                                                   "logits": logits}) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
