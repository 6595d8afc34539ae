#!/usr/bin/env python3
"""The config keys transformers reads, per model type, from its own source: the line between a
key anatomy must understand and one that cannot change the model transformers builds.

A key is read for a model type when it is
  - a parameter of its config class's __init__, or a key of its attribute_map;
  - named as `<…config>.KEY`, `getattr(<…config>, "KEY"` or `hasattr(<…config>, "KEY"` in its
    modeling or configuration file, or `kwargs.pop("KEY"` / `kwargs.get("KEY"` in the latter;
  - or named so in one of the files every model runs through (SHARED: the rope, mask, cache,
    attention and modeling utilities), which count for every type.

Writes crates/core/src/families/transformers_reads.txt: one line per model type,
`model_type key key …`, the first line `* key …` (the shared keys), sorted. With --check, compares
the file with what the installed transformers gives and exits 1 on a difference (the suite's
test runs it so).

  python3 scripts/transformers_reads.py [--check] MODEL_TYPE ...
  (the model types anatomy reads: `anatomy list --model-types`)
"""
import inspect
import os
import re
import sys

import transformers
from transformers.models.auto.configuration_auto import CONFIG_MAPPING, model_type_to_module_name

OUT = os.path.join(os.path.dirname(__file__), "..", "crates/core/src/families/transformers_reads.txt")
ROOT = os.path.dirname(transformers.__file__)
SHARED = [
    "configuration_utils.py",
    "modeling_utils.py",
    "modeling_rope_utils.py",
    "masking_utils.py",
    "cache_utils.py",
    "modeling_layers.py",
    "modeling_flash_attention_utils.py",
    "integrations/sdpa_attention.py",
    "integrations/flash_attention.py",
    "integrations/flex_attention.py",
    "integrations/eager_paged.py",
    "integrations/hub_kernels.py",
    "integrations/moe.py",
]
NAME = r"([A-Za-z_][A-Za-z0-9_]*)"
PATTERNS = [
    re.compile(r"\b\w*config\w*\s*\.\s*" + NAME),
    re.compile(r"\b(?:getattr|hasattr)\(\s*(?:self\.)?\w*config\w*\s*,\s*[\"']" + NAME + r"[\"']"),
    re.compile(r"\bkwargs\.(?:pop|get|setdefault)\(\s*[\"']" + NAME + r"[\"']"),
]


def named_in(path):
    try:
        text = open(path, encoding="utf-8").read()
    except FileNotFoundError:
        return set()
    return {m.group(1) for p in PATTERNS for m in p.finditer(text)}


def reads(model_type):
    cls = CONFIG_MAPPING[model_type]
    keys = set(inspect.signature(cls.__init__).parameters) - {"self", "kwargs", "args"}
    keys |= set(getattr(cls, "attribute_map", {}) or {})
    # Sub-configs' classes are their own model types; the file of this one's module is read.
    module = model_type_to_module_name(model_type)
    folder = os.path.join(ROOT, "models", module)
    for f in os.listdir(folder) if os.path.isdir(folder) else []:
        if f.startswith(("modeling_", "configuration_")) and f.endswith(".py"):
            keys |= named_in(os.path.join(folder, f))
    return keys


def table(types):
    shared = set()
    for f in SHARED:
        shared |= named_in(os.path.join(ROOT, f))
    lines = ["* " + " ".join(sorted(shared))]
    for t in sorted(set(types)):
        if t not in CONFIG_MAPPING:
            continue
        lines.append(t + " " + " ".join(sorted(reads(t) - shared)))
    return f"# transformers {transformers.__version__}: scripts/transformers_reads.py\n" + "\n".join(lines) + "\n"


def main():
    args = sys.argv[1:]
    check = "--check" in args
    types = [a for a in args if a != "--check"]
    text = table(types)
    if check:
        have = open(OUT, encoding="utf-8").read()
        if have != text:
            sys.exit(f"{OUT} is not what transformers {transformers.__version__} reads; remake it with scripts/transformers_reads.py")
        return
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
