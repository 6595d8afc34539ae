#!/usr/bin/env python3
"""Assemble the PyTorch reference snippets of anatomy's web pages into a module, load a
`transformers` model's weights into it, and compare logits (not part of CI: needs torch and
transformers; `pip install torch transformers`).

For each tiny config below: build the Hugging Face model with random weights (fixed seed),
write its config.json, ask `anatomy torch DIR` for the assembled module (every part's snippet
and a Model composing them as the Graph does), load the checkpoint-layout state dict into it with
only top-level prefixes renamed, and print the largest logit difference.

Usage: cargo build && python3 scripts/check_torch_snippets.py
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, CONFIG_MAPPING
from transformers.core_model_loading import revert_weight_conversion

ROOT = Path(__file__).resolve().parent.parent
ANATOMY = os.environ.get("ANATOMY_BIN", str(ROOT / "target/debug/anatomy"))

BASE = dict(hidden_size=64, intermediate_size=96, num_hidden_layers=3, num_attention_heads=4,
            num_key_value_heads=2, vocab_size=211, max_position_embeddings=256, pad_token_id=0)

CONFIGS = {
    "llama": dict(BASE, model_type="llama", rope_theta=10000.0),
    "llama3-scaling": dict(BASE, model_type="llama", rope_theta=500000.0, tie_word_embeddings=True,
                           rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                         "high_freq_factor": 4.0, "original_max_position_embeddings": 32}),
    "qwen2": dict(BASE, model_type="qwen2"),
    "qwen3": dict(BASE, model_type="qwen3", head_dim=32),
    "mistral-sliding": dict(BASE, model_type="mistral", sliding_window=4),
    "olmo2": dict(BASE, model_type="olmo2"),
    "gemma2": dict(BASE, model_type="gemma2", head_dim=16, query_pre_attn_scalar=16, sliding_window=4),
    "gemma3": dict(BASE, model_type="gemma3_text", head_dim=16, query_pre_attn_scalar=16, sliding_window=4,
                   sliding_window_pattern=2),
    "phi3": dict(BASE, model_type="phi3"),
    "smollm3": dict(BASE, model_type="smollm3", no_rope_layer_interval=2),
    "mixtral": dict(BASE, model_type="mixtral", num_local_experts=4, num_experts_per_tok=2),
    "qwen3-moe": dict(BASE, model_type="qwen3_moe", num_experts=4, num_experts_per_tok=2,
                      moe_intermediate_size=32, norm_topk_prob=True),
}

# Checkpoint names → the snippets' attribute names, by prefix.
RENAMES = [
    ("model.embed_tokens.", "embed.embed_tokens."),
    ("model.norm.", "norm."),
    ("model.layers.", "layers."),
    (".block_sparse_moe.gate.", ".mlp.gate."),
    (".block_sparse_moe.experts.", ".mlp.experts."),
]
EXPERT_NAMES = {".w1.": ".gate_proj.", ".w3.": ".up_proj.", ".w2.": ".down_proj."}


def rename(key):
    for a, b in RENAMES:
        key = key.replace(a, b)
    if ".mlp.experts." in key:
        for a, b in EXPERT_NAMES.items():
            key = key.replace(a, b)
    return key


def check(name, raw):
    torch.manual_seed(0)
    config = CONFIG_MAPPING[raw["model_type"]].from_dict(dict(raw))
    config._attn_implementation = "eager"
    hf = AutoModelForCausalLM.from_config(config).float().eval()
    with tempfile.TemporaryDirectory() as d:
        Path(d, "config.json").write_text(json.dumps(raw))
        source = subprocess.run([ANATOMY, "torch", d], check=True, capture_output=True, text=True).stdout
    ns = {}
    exec(compile(source, f"<anatomy torch {name}>", "exec"), ns)
    ours = ns["Model"]().float().eval()
    state = revert_weight_conversion(hf, {k: v for k, v in hf.state_dict().items()})
    state = {rename(k): v for k, v in state.items()}
    missing, unexpected = ours.load_state_dict(state, strict=False)
    # A tied head is the embedding itself; buffers such as rotary caches are not weights.
    missing = [m for m in missing if m != "lm_head.weight" and "correction_bias" not in m]
    if missing or unexpected:
        return f"{name:16s} names differ: missing {missing[:4]} unexpected {unexpected[:4]}"
    ids = torch.tensor([[5, 17, 42, 3, 99, 150, 7, 8, 61, 200]])
    with torch.no_grad():
        want = hf(ids).logits
        got = ours(ids)
    diff = (want - got).abs().max().item()
    return f"{name:16s} max |logits − transformers| = {diff:.3e}  {'ok' if diff < 1e-4 else 'DIFFERS'}"


def main():
    only = set(sys.argv[1:])
    for name, raw in CONFIGS.items():
        if only and name not in only:
            continue
        try:
            print(check(name, raw), flush=True)
        except Exception as e:  # report and go on: one family's failure says nothing of the others
            print(f"{name:16s} failed: {type(e).__name__}: {e}", flush=True)


if __name__ == "__main__":
    main()
