#!/usr/bin/env python3
"""Run anatomy's PyTorch reference modules on fixture checkpoints and compare their logits.

Each argument pair is a module written by `anatomy torch` and a fixture folder holding
model.safetensors and expected.json (transformers' logits for its ids). The module's Model loads
the checkpoint's own state dict with strict=True (a multimodal checkpoint less the parts the
module does not hold, through its language_model_only), runs the ids, and this prints one JSON
line per pair: {"fixture", "max_diff"} or {"fixture", "error"}; a module that decodes (a
recurrent model's, with `decode`) is also run on a prompt of 5 ids and then token by token
through its state: "decode_max_diff", against transformers' logits fed so.

Usage: python3 scripts/check_torch_reference.py MODULE.py FIXTURE_DIR [MODULE.py FIXTURE_DIR ...]
(needs torch, safetensors and numpy; the test suite runs it with $ANATOMY_PYTHON)
"""
import importlib.util
import json
import sys
import traceback
from pathlib import Path

import torch
from safetensors.torch import load_file


def check(module_path, fixture):
    spec = importlib.util.spec_from_file_location(Path(module_path).stem, module_path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    if (Path(fixture) / "inputs.npz").is_file():
        return check_draft(m, fixture)
    expected = json.loads((Path(fixture) / "expected.json").read_text())
    state = load_file(str(Path(fixture) / "model.safetensors"))
    if hasattr(m, "language_model_only"):
        state = m.language_model_only(state)
    torch.manual_seed(0)
    model = m.Model()
    model.load_state_dict(state, strict=True)
    model.eval()
    # A wrapper run on an image: the processed pixels beside the checkpoint.
    pixels = Path(fixture) / "pixels.npy"
    inputs = {}
    if pixels.is_file():
        import numpy as np

        inputs["pixel_values"] = torch.from_numpy(np.load(pixels))[None]
        if "image_size" in expected:  # LLaVA-NeXT's features follow the image's own size
            inputs["image_sizes"] = torch.tensor([expected["image_size"]])
    with torch.no_grad():
        logits = model(torch.tensor([expected["ids"]]), **inputs)[0].float()
    want = torch.tensor(expected["logits"], dtype=torch.float32)
    if logits.shape != want.shape:
        raise ValueError(f"logits of shape {tuple(logits.shape)}, expected {tuple(want.shape)}")
    out = {"max_diff": (logits - want).abs().max().item()}
    if hasattr(m, "decode") and not inputs:
        # A recurrent model decodes: a prompt of 5, then token by token through its modules'
        # state, against transformers' logits fed so (its decoding takes another code path; a
        # text prompt's, which its image fixtures' logits are not).
        steps = m.decode(model, torch.tensor([expected["ids"]]), 5)[0].float()
        want = torch.tensor(expected.get("stepwise_logits", expected["logits"]), dtype=torch.float32)
        out["decode_max_diff"] = (steps - want).abs().max().item()
    if hasattr(m, "CrossAttentionLayer"):
        out["cross_max_diff"] = cross_attention_diff(model, fixture)
    return out


def check_draft(m, fixture):
    """A draft model's fixture (assistant/, inputs.npz): each step run from the target's state and
    keys as transformers' drafting loop gave them; its logits and next hidden state compared."""
    import numpy as np

    expected = json.loads((Path(fixture) / "expected.json").read_text())
    inputs = np.load(Path(fixture) / "inputs.npz")
    model = m.Model()
    model.load_state_dict(load_file(str(Path(fixture) / "assistant" / "model.safetensors")), strict=True)
    model.eval()
    kv = {kind: (torch.from_numpy(inputs[f"k_{kind}"])[None], torch.from_numpy(inputs[f"v_{kind}"])[None])
          for kind in ("full", "sliding") if f"k_{kind}" in inputs}
    worst = 0.0
    with torch.no_grad():
        for i, state in enumerate(inputs["state"]):
            logits, hidden = model(torch.from_numpy(state)[None, None], kv, int(inputs["position"]))
            for got, key in ((logits, "logits"), (hidden, "hidden")):
                want = torch.tensor(expected[key][i], dtype=torch.float32)
                worst = max(worst, (got[0, 0].float() - want).abs().max().item())
    return {"max_diff": worst}


def cross_attention_diff(model, fixture):
    """A cross-attention layer's output for random image states, against transformers' layer of
    the same weights: the path a text-only prompt skips."""
    import transformers  # only here: the other checks need torch alone

    config = transformers.AutoConfig.from_pretrained(fixture)
    config._attn_implementation = "eager"
    cls = getattr(transformers, config.architectures[0])
    ref, info = cls.from_pretrained(fixture, config=config, output_loading_info=True)
    if info["missing_keys"]:
        # The wrapper's config beside weights saved text-only: the wrapper's class cannot load
        # them, its causal-LM class of the text config does.
        text = config.get_text_config()
        text._attn_implementation = "eager"
        causal = next(c for n in dir(transformers) if n.endswith("ForCausalLM")
                      and getattr(c := getattr(transformers, n), "config_class", None) is type(text))
        ref, info = causal.from_pretrained(fixture, config=text, output_loading_info=True)
        assert not info["missing_keys"], info["missing_keys"][:5]
    ref = ref.eval()
    ours = [l for l in model.modules() if type(l).__name__ == "CrossAttentionLayer"]
    theirs = [l for l in ref.modules() if type(l).__name__.endswith("CrossAttentionDecoderLayer")]
    torch.manual_seed(1)
    worst = 0.0
    with torch.no_grad():
        for a, b in zip(ours, theirs, strict=True):
            d = a.input_layernorm.weight.shape[0]
            x, image = torch.randn(1, 5, d), torch.randn(1, 7, d)
            want = b(x, cross_attention_states=image, cross_attention_mask=None, attention_mask=None,
                     full_text_row_masked_out_mask=None)
            want = want[0] if isinstance(want, tuple) else want
            worst = max(worst, (a(x, None, image) - want).abs().max().item())
    return worst


def main(args):
    torch.set_num_threads(1)
    for module_path, fixture in zip(args[::2], args[1::2]):
        try:
            out = {"fixture": fixture, **check(module_path, fixture)}
        except Exception as e:  # reported per fixture; the test says which failed and why
            out = {"fixture": fixture, "error": f"{type(e).__name__}: {e}",
                   "trace": traceback.format_exc()[-1500:]}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
