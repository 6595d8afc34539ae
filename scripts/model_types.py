#!/usr/bin/env python3
"""Write the README's tables of transformers' causal-LM and image-text-to-text model types and what
anatomy does with each.

Every `model_type` in transformers' MODEL_FOR_CAUSAL_LM_MAPPING gets one row: read by anatomy
(from `anatomy list --model-types`), or why not yet; so does every one of its
MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING that the first does not list. The table sits in README.md between the
markers `<!-- model-types -->` and `<!-- /model-types -->`; `cargo test` checks that its
"read" rows are exactly the types anatomy reads.

Usage: python3 scripts/model_types.py [path/to/anatomy]   (needs: pip install transformers)
"""
import re
import json
import subprocess
import sys
from pathlib import Path

import transformers
from transformers import CONFIG_MAPPING
from transformers.models.auto.modeling_auto import (MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
                                                    MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES)

ROOT = Path(__file__).resolve().parent.parent

# Mixers other than softmax attention (state spaces, linear attention, recurrences, short
# convolutions) and the hybrids built from them: Breadth II.
RECURRENT = {
    "bailing_hybrid", "bamba", "falcon_h1", "falcon_mamba", "granitemoehybrid", "inkling_text",
    "inkling2_text", "inkling2_loop_text", "jamba", "kimi_linear", "lara_mini", "lfm2", "lfm2_moe",
    "lfm3", "mamba", "mamba2", "minimax", "nemotron_h", "olmo_hybrid",
    "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text", "qwen3_next", "qwen4_exp",
    "qwen4_exp_text", "recurrent_gemma", "rwkv", "xlstm", "zamba", "zamba2", "zaya",
}
# Encoders with a causal-LM head, and decoders of speech, music or OCR models.
NOT_DECODER_LM = {
    "bert", "bert-generation", "big_bird", "camembert", "data2vec-text", "electra", "ernie",
    "megatron-bert", "rembert", "roberta", "roberta-prelayernorm", "roc_bert", "roformer", "xlm",
    "xlm-roberta", "xlm-roberta-xl", "xmod", "xlnet", "reformer", "trocr", "whisper", "musicgen",
    "musicgen_melody", "moshi", "moss_transcribe_diarize",
}


# Draft models for speculative decoding: they read their target's hidden states and keys and
# values, so they do not run alone.
DRAFT = {"gemma4_assistant", "gemma4_unified_assistant"}


def status(t, read):
    if t in read:
        return f"read ({read[t]})"
    if t in DRAFT:
        return "not yet: a draft model, run on its target's hidden states and keys"
    if t in RECURRENT:
        return "not yet: recurrent or hybrid mixer"
    try:
        encdec = bool(getattr(CONFIG_MAPPING[t](), "is_encoder_decoder", False))
    except Exception:
        encdec = False
    if encdec:
        return "out of scope: encoder-decoder"
    if t in NOT_DECODER_LM:
        return "out of scope: encoder, or a speech/music/OCR decoder"
    return "not yet: attention decoder"


def towers(binary, model_type, runs):
    """What anatomy holds of a wrapper's towers, read from its stats on the first generated
    config of the type that the exactness fixtures hold; `runs`: a config of the type runs on an
    image (`runs_images`)."""
    config = ROOT / f"crates/core/tests/fixtures/unseen/unseen-{model_type}-0.json"
    stats = json.loads(subprocess.run([binary, "stats", str(config), "--json"], check=True,
                                      capture_output=True, text=True).stdout)
    if not stats.get("towers"):
        return "a language model alone (its class in this mapping is a causal LM), run as above"
    if not all(t["tensors"] > 0 for t in stats.get("towers", {}).values()):
        return "towers not all known"
    if runs or "image" in stats:
        return "towers named and drawn, run on an image (--image, --pixels)"
    return "towers named and drawn, not run"


def runs_images(binary):
    """The causal-LM types whose wrapper anatomy runs on an image: those of a catalog config or
    an image fixture whose stats have figures per image (a type's default config may not fit
    its tower to its projector, as Llama 4's does not)."""
    out = set()
    fixtures = sorted((ROOT / "crates/exec/tests/fixtures/image").glob("*/config.json"))
    for path in sorted((ROOT / "crates/core/catalog").glob("*.json")) + fixtures:
        model_type = json.loads(path.read_text()).get("model_type")
        stats = json.loads(subprocess.run([binary, "stats", str(path), "--json"], check=True,
                                          capture_output=True, text=True).stdout)
        if "image" in stats:
            out.add(model_type)
    return out


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "target/debug/anatomy")
    lines = subprocess.run([binary, "list", "--model-types"], check=True, capture_output=True,
                           text=True).stdout.splitlines()[1:]
    read = {l.split()[0]: " ".join(l.split()[1:-1]) for l in lines if l.strip()}
    types = sorted(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)
    images_run = runs_images(binary)
    rows = [(t, status(t, read) + (": run on an image (--image, --pixels)" if t in images_run else ""))
            for t in types]
    images = sorted(set(MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES) - set(types))
    image_rows = [(t, f"read ({read[t]}): {towers(binary, t, t in images_run)}" if t in read else
                   "not yet: image-text-to-text (its towers and the language model between them)")
                  for t in images]
    # Language models anatomy reads only inside a wrapper, whose type neither mapping lists.
    inner = sorted(set(read) - set(types) - set(images))
    counts = {}
    for _, s in rows:
        key = s.split(" (")[0].split(":")[0]
        counts[key] = counts.get(key, 0) + 1
    def many(n, one, more):
        return f"{n} {one if n == 1 else more}"

    groups = (
        (sum(1 for _, s in rows if s == "not yet: attention decoder"), "attention decoder", "attention decoders"),
        (sum(1 for _, s in rows if "recurrent" in s), "recurrent or hybrid model", "recurrent or hybrid models"),
        (sum(1 for _, s in rows if "draft model" in s), "draft model", "draft models"),
    )
    not_yet = [many(*g) for g in groups if g[0]]
    not_yet = ", ".join(not_yet[:-1]) + (" and " if len(not_yet) > 1 else "") + (not_yet[-1] if not_yet else "")
    if not_yet:
        not_yet = f"{not_yet} {'is' if not_yet.startswith('1 ') and ' and ' not in not_yet else 'are'} not read yet; "
    table = [
        f"transformers {transformers.__version__} maps {len(types)} model types to a causal-LM class. "
        f"anatomy reads {counts.get('read', 0)} of them; "
        f"{not_yet}"
        f"{counts.get('out of scope', 0)} are encoders, encoder-decoders or speech/music/OCR decoders. "
        "(`anatomy list --model-types` prints what this build reads; `scripts/model_types.py` "
        "rewrites this table.)",
        "",
        "| model_type | anatomy |",
        "|---|---|",
    ] + [f"| `{t}` | {s} |" for t, s in rows]
    n = sum(1 for t in images if t in read)
    table += ["", f"transformers {transformers.__version__} maps {len(images)} more model types to an "
              f"image-text-to-text class alone. anatomy reads {n} of them: their language model as above, "
              "their vision towers and projectors as transformers builds them: each tensor named and "
              "drawn (manifest, verify, stats by tower, the page and the walkthrough); LLaVA's, VipLlava's, PaliGemma's, Mistral 3's, LightOnOCR's, InternVL's, Aya Vision's, Command A Vision's, DeepSeek-VL's, Idefics3's, SmolVLM's, Video-LLaVA's, LLaVA-NeXT's, LLaVA-NeXT-Video's, LLaVA-OneVision's and the Qwen VL models' (Qwen2-VL to Qwen3-VL-MoE) run on an image; Mistral 4's class there is a causal LM, read as one.", "",
              "| model_type | anatomy |", "|---|---|"]
    table += [f"| `{t}` | {s} |" for t, s in image_rows]
    if inner:
        table += ["", "Read as the language model inside a wrapper (not in the causal-LM mapping):", "",
                  "| model_type | anatomy |", "|---|---|"]
        table += [f"| `{t}` | read ({read[t]}) |" for t in inner]
    readme = ROOT / "README.md"
    text = readme.read_text()
    new = re.sub(r"(<!-- model-types -->\n)(?:.*?\n)?(<!-- /model-types -->)",
                 lambda m: m.group(1) + "\n".join(table) + "\n" + m.group(2), text, flags=re.S)
    if new == text and "<!-- model-types -->" not in text:
        sys.exit("README.md has no <!-- model-types --> markers")
    readme.write_text(new)
    print(f"README.md: {len(rows)} model types, {counts}")


if __name__ == "__main__":
    main()
