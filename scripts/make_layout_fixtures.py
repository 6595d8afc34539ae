#!/usr/bin/env python3
"""Checkpoints of the catalog's multimodal families saved text-only, as people save them
(crates/exec/tests/fixtures/layout/): the language model of each toy copy
(crates/exec/tests/fixtures/toy/NAME, saved with its towers) loaded into its causal-LM class and
saved by transformers, with transformers' logits (Emu3ForCausalLM does not load its wrapper's
`text_model.*` names: its weights are its seeded initialization).

  NAME-text      the causal-LM class's own save: its text config, and the tensor names that
                 class writes after loading the wrapper's checkpoint (Qwen3.5 keeps
                 `model.language_model.*`; the others write `model.*`)
  NAME-fresh     the same weights saved from a freshly built causal-LM class (`model.*`), where
                 that names them otherwise
  NAME-wrapper   the wrapper's config.json beside the `model.*` weights (a fine-tune saved
                 text-only, its published config kept); model.safetensors links to NAME-fresh's
                 or NAME-text's

Weights are stored in float32, as the toy copies are.

  python3 scripts/make_layout_fixtures.py [NAME ...]
"""
import json
import os
import shutil
import struct
import sys
from pathlib import Path

import torch
import transformers
from transformers import AutoConfig

ROOT = Path(__file__).resolve().parent.parent / "crates/exec/tests/fixtures"
FAMILIES = {
    "qwen3.5-35b-a3b": "Qwen3_5MoeForCausalLM",
    "gemma-3-27b": "Gemma3ForCausalLM",
    "llama-4-scout-17b-16e": "Llama4ForCausalLM",
    "llama-3.2-11b-vision": "MllamaForCausalLM",
    "emu3-chat": "Emu3ForCausalLM",
}
IDS = [5, 17, 42, 3, 9, 77, 12, 1]


def names(folder):
    with open(folder / "model.safetensors", "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        return sorted(k for k in json.loads(f.read(n)) if k != "__metadata__")


def save(model, out):
    shutil.rmtree(out, ignore_errors=True)
    model.save_pretrained(out)
    with torch.no_grad():
        logits = model(torch.tensor([IDS])).logits[0]
    (out / "expected.json").write_text(json.dumps(
        {"transformers": transformers.__version__, "ids": IDS, "logits": logits.tolist()}))
    for f in ("generation_config.json",):
        (out / f).unlink(missing_ok=True)


def make(name, cls_name):
    toy = ROOT / "toy" / name
    cls = getattr(transformers, cls_name)
    torch.manual_seed(0)
    loaded = cls.from_pretrained(toy, dtype=torch.float32)
    text = ROOT / "layout" / f"{name}-text"
    save(loaded, text)
    fresh = cls(loaded.config)
    fresh.load_state_dict(loaded.state_dict())
    plain = ROOT / "layout" / f"{name}-fresh"
    shutil.rmtree(plain, ignore_errors=True)
    target = text
    if names(text) != names_of_fresh(fresh):
        save(fresh, plain)
        target = plain
    wrapper = ROOT / "layout" / f"{name}-wrapper"
    shutil.rmtree(wrapper, ignore_errors=True)
    wrapper.mkdir(parents=True)
    shutil.copy(toy / "config.json", wrapper / "config.json")
    shutil.copy(target / "expected.json", wrapper / "expected.json")
    os.symlink(f"../{target.name}/model.safetensors", wrapper / "model.safetensors")
    print(f"{name}: {text.name} ({names(text)[1]}…), wrapper -> {target.name}")


def names_of_fresh(model):
    tmp = ROOT / "layout" / ".probe"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    out = names(tmp)
    shutil.rmtree(tmp)
    return out


def main(only):
    for name, cls in FAMILIES.items():
        if not only or name in only:
            make(name, cls)


if __name__ == "__main__":
    main(set(sys.argv[1:]))
