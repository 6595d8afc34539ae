#!/usr/bin/env python3
"""What transformers' cache objects hold after a forward pass, for the planner's KV and state.

For each toy copy of a catalog config (crates/exec/tests/fixtures/toy/<name>/config.json), build
the model as scripts/make_toy_fixtures.py does (float32), run its 10 token ids with use_cache=True
and weigh the cache that comes back: every floating-point tensor each cache layer holds (keys and
values, convolution and recurrent states), layer by layer. Writes cache.json beside the config;
`plan_kv_matches_transformers_caches` (crates/core/tests/plan.rs) holds `anatomy plan --runtime
transformers` to those bytes.

Usage: python3 scripts/make_cache_fixtures.py [NAME ...]
(needs: pip install torch transformers; about two minutes on the CPU)
"""
import json
import sys
from pathlib import Path

import torch
import transformers

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_toy_fixtures as toys  # noqa: E402

TOY = toys.OUT / "toy"


def tensors_in(obj, seen):
    """The floating-point tensors an object holds in its attributes, lists and tuples."""
    out = []
    items = list(vars(obj).values()) if hasattr(obj, "__dict__") else []
    stack = items
    while stack:
        x = stack.pop()
        if isinstance(x, torch.Tensor):
            if x.is_floating_point() and x.data_ptr() not in seen and x.numel() > 0:
                seen.add(x.data_ptr())
                out.append(x)
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x.values())
    return out


def weigh(cache):
    seen = set()
    layers = getattr(cache, "layers", None)
    if layers is not None:
        per = [sum(t.numel() * t.element_size() for t in tensors_in(layer, seen)) for layer in layers]
        rest = sum(t.numel() * t.element_size() for t in tensors_in(cache, seen))
        return per, sum(per) + rest
    total = sum(t.numel() * t.element_size() for t in tensors_in(cache, seen))
    return None, total


def recurrent_gemma(model, ids):
    """RecurrentGemma keeps its recurrent layers' states on the modules and returns no cache: give
    it one, set the modules' states up as its forward would, and weigh both, layer by layer."""
    from transformers import DynamicCache
    inner = model.model
    inner._setup_cache(model.config, 1, torch.device("cpu"), torch.float32)
    cache = DynamicCache(config=model.config)
    with torch.no_grad():
        model(input_ids=torch.tensor([ids]), use_cache=True, cache=cache)
    seen = set()
    per = []
    for i, layer in enumerate(inner.layers):
        block = layer.temporal_block
        held = tensors_in(cache.layers[i], seen) if i < len(cache.layers) else []
        for x in (getattr(block, "conv1d_state", None), getattr(getattr(block, "rg_lru", None), "recurrent_states", None)):
            if isinstance(x, torch.Tensor) and x.data_ptr() not in seen:
                seen.add(x.data_ptr())
                held.append(x)
        per.append(sum(t.numel() * t.element_size() for t in held))
    return type(cache).__name__, {"layers": per}, sum(per)


def blt(model, ids):
    """BLT caches its local encoder's and decoder's self-attention in the two halves of an
    EncoderDecoderCache (the patcher and the latent transformer run uncached). 5.25 builds the
    halves from BltConfig, which names no layers, and fails; give it the config-less caches its
    forward accepts and weigh each half's layers under the names `anatomy plan` gives them."""
    from transformers import DynamicCache, EncoderDecoderCache
    cache = EncoderDecoderCache(DynamicCache(), DynamicCache())
    with torch.no_grad():
        model(input_ids=torch.tensor([ids]), use_cache=True, cache=cache)
    named = {}
    for stack, half in (("local encoder", cache.self_attention_cache), ("local decoder", cache.cross_attention_cache)):
        per, _ = weigh(half)
        named.update({f"{stack} {b}": n for b, n in enumerate(per)})
    return type(cache).__name__, {"named": named}, sum(named.values())


# Models whose caches the plain forward does not give: each weigher's class name, its layers'
# bytes (a list, or a map by anatomy's layer names) and the total.
OWN = {"recurrent_gemma": recurrent_gemma, "blt": blt}


def main():
    names = sys.argv[1:] or sorted(p.name for p in TOY.iterdir() if (p / "config.json").exists())
    for name in names:
        folder = TOY / name
        raw = json.loads((folder / "config.json").read_text())
        ids = json.loads((folder / "expected.json").read_text())["ids"]
        model = toys.build(raw)
        record = {"transformers": transformers.__version__, "tokens": len(ids)}
        try:
            if raw["model_type"] in OWN:
                cls, layers, total = OWN[raw["model_type"]](model, ids)
                record.update({"class": cls, **layers, "total": total})
                (folder / "cache.json").write_text(json.dumps(record) + "\n")
                print(name, f"{cls}: {total} bytes", flush=True)
                continue
            with torch.no_grad():
                try:
                    out = model(input_ids=torch.tensor([ids]), use_cache=True)
                except AttributeError:
                    # As make_toy_fixtures.py: Llama 4's wrapper fails on text alone.
                    if not hasattr(model, "language_model"):
                        raise
                    out = model.language_model(input_ids=torch.tensor([ids]), use_cache=True)
            cache = getattr(out, "past_key_values", None)
            if cache is None:
                record["refused"] = "the model returned no cache"
            else:
                per, total = weigh(cache)
                record.update({"class": type(cache).__name__, "layers": per, "total": total})
        except Exception as e:  # a model whose cached path fails in this release
            record["refused"] = f"{type(e).__name__}: {e}"[:300]
        (folder / "cache.json").write_text(json.dumps(record) + "\n")
        print(name, record.get("refused") or f"{record['class']}: {record['total']} bytes", flush=True)


if __name__ == "__main__":
    main()
