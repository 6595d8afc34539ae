#!/usr/bin/env python3
"""What a transformers release changes for anatomy: the model types it adds or removes (in the
causal-LM and image-text-to-text mappings and in all), and, for every type both have, the config
keys added or removed and the defaults that changed, with the keys its modeling code reads
(scripts/transformers_reads.py's rule) added or dropped.

  python3 scripts/transformers_release_diff.py 5.24.0 5.25.0 [--types llama qwen3 ...] [--json]

Each release's wheel is fetched from the package index (pip download, no dependencies) into
~/.cache/anatomy/transformers-wheels and imported in a process of its own, on top of the current
environment's dependencies (torch, tokenizers, huggingface_hub); nothing is installed.
"""
import json
import os
import subprocess
import sys
import zipfile

CACHE = os.path.expanduser("~/.cache/anatomy/transformers-wheels")
HERE = os.path.dirname(os.path.abspath(__file__))

# Run inside each release's process: its mappings, config fields and defaults, and what its
# modeling code reads.
DUMP = r"""
import inspect, json, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(1, sys.argv[2])
import transformers
from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES, CONFIG_MAPPING
from transformers.models.auto import modeling_auto as ma
import transformers_reads as tr
types = json.loads(sys.argv[3]) or sorted(CONFIG_MAPPING_NAMES)
out = {"version": transformers.__version__,
       "all": sorted(CONFIG_MAPPING_NAMES),
       "causal_lm": sorted(ma.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES),
       "image_text": sorted(getattr(ma, "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES", {})),
       "types": {}}
for t in types:
    if t not in CONFIG_MAPPING_NAMES:
        continue
    try:
        cls = CONFIG_MAPPING[t]
        params = inspect.signature(cls.__init__).parameters
        fields = {k: repr(p.default) for k, p in params.items() if k not in ("self", "kwargs", "args")}
        out["types"][t] = {"fields": fields, "reads": sorted(tr.reads(t))}
    except Exception as e:  # a class that cannot be imported here (a missing optional package)
        out["types"][t] = {"error": f"{type(e).__name__}: {e}"}
print(json.dumps(out))
"""


def wheel(version):
    os.makedirs(CACHE, exist_ok=True)
    folder = os.path.join(CACHE, version)
    if not os.path.isdir(os.path.join(folder, "transformers")):
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--dest", CACHE,
                        f"transformers=={version}"], check=True)
        whl = next(f for f in os.listdir(CACHE) if f.startswith(f"transformers-{version}-") and f.endswith(".whl"))
        zipfile.ZipFile(os.path.join(CACHE, whl)).extractall(folder)
    return folder


def dump(version, types):
    out = subprocess.run([sys.executable, "-c", DUMP, wheel(version), HERE, json.dumps(types)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def diff(old, new):
    report = {"old": old["version"], "new": new["version"]}
    for m in ("all", "causal_lm", "image_text"):
        report[f"{m}_added"] = sorted(set(new[m]) - set(old[m]))
        report[f"{m}_removed"] = sorted(set(old[m]) - set(new[m]))
    changed = {}
    for t in sorted(set(old["types"]) & set(new["types"])):
        a, b = old["types"][t], new["types"][t]
        if "fields" not in a or "fields" not in b:
            continue
        c = {
            "keys_added": sorted(set(b["fields"]) - set(a["fields"])),
            "keys_removed": sorted(set(a["fields"]) - set(b["fields"])),
            "defaults_changed": {k: [a["fields"][k], b["fields"][k]] for k in sorted(set(a["fields"]) & set(b["fields"]))
                                 if a["fields"][k] != b["fields"][k]},
            "reads_added": sorted(set(b["reads"]) - set(a["reads"])),
            "reads_dropped": sorted(set(a["reads"]) - set(b["reads"])),
        }
        if any(c.values()):
            changed[t] = c
    report["changed"] = changed
    return report


def main():
    args = sys.argv[1:]
    as_json = "--json" in args
    args = [a for a in args if a != "--json"]
    types = []
    if "--types" in args:
        i = args.index("--types")
        types, args = args[i + 1:], args[:i]
    if len(args) != 2:
        sys.exit(__doc__)
    report = diff(dump(args[0], types), dump(args[1], types))
    if as_json:
        print(json.dumps(report, indent=1))
        return
    print(f"transformers {report['old']} -> {report['new']}")
    for m, what in (("causal_lm", "causal-LM types"), ("image_text", "image-text-to-text types"), ("all", "model types")):
        print(f"{what} added: {', '.join(report[m + '_added']) or 'none'}")
        if report[m + "_removed"]:
            print(f"{what} removed: {', '.join(report[m + '_removed'])}")
    for t, c in report["changed"].items():
        print(f"\n{t}:")
        for k, v in c.items():
            if v:
                print(f"  {k.replace('_', ' ')}: {v}")


if __name__ == "__main__":
    main()
