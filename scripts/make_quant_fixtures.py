#!/usr/bin/env python3
"""The toy Qwen3 (crates/exec/tests/fixtures/toy/qwen3-0.6b) stored as each quantized format's
own code stores it, beside transformers' logits on the weights that code dequantizes back:

- gptq: GPTQModel's TorchLinear packs each linear layer (int4, groups of 32, symmetric) and its
  v2-to-v1 conversion writes the `gptq` checkpoint format; TorchLinear.dequantize_weight is the
  reference dequantization;
- gptq-act-order: the same with desc_act, each group's columns scattered across the row by a
  random order (g_idx), as GPTQ's act-order checkpoints store them;
- awq: AutoAWQ's WQLinear_GEMM.from_linear packs (int4, groups of 32, zero points);
  awq.utils.packing_utils.dequantize_gemm dequantizes;
- awq-gemv: AutoAWQ's WQLinear_GEMV.from_linear packs (int4, groups of 32: each row's inputs in
  order, the zero points and scales padded to calculate_zeros_width), the packer's own
  arithmetic dequantizes;
- awq-g128: the same in AutoAWQ's default groups of 128, on the toy widened to 128 (its MLP to
  256), which `run` holds in the 4-bit format of groups of 128 (qlinear's INT4_G128);
- compressed: compressed-tensors' PackedQuantizationCompressor (pack-quantized, int4, groups of
  32, asymmetric, so that the packed zero points are exercised) compresses and decompresses;
- compressed-int8, compressed-fp8: compressed-tensors' IntQuantizationCompressor (int8 by
  channel) and FloatQuantizationCompressor (fp8 e4m3 in 32×32 blocks), the weight itself in
  8 bits beside its scales, decompressed back;
- compressed-nvfp4: NVFP4PackedCompressor (NVFP4A16: e2m1 codes, fp8 scales per 16 inputs, a
  global scale), decompressed back (in bf16, as it does);
- mlx: mlx.core.quantize (affine, 4 bits, groups of 32) on every linear layer and the embedding,
  mlx.core.dequantize back;
- mlx-g64: the same in mlx's default groups of 64, which `run` holds as INT4_G64, one layer in
  8 bits and one left unquantized by per-layer entries, as mlx-lm's quant_predicate writes them
  (a MoE's router in 8 bits), `quantization` copied to `quantization_config` as mlx-lm does;
- gptq-moe: the toy Qwen3-MoE (its experts 64 wide), each expert's projections packed by
  TorchLinear under their own names as GPTQ's MoE checkpoints hold them, the routers in floats;
- mlx-moe: the toy Qwen3-MoE (its experts 64 wide) as mlx-lm saves a mixture of experts: the
  experts stacked per projection under `switch_mlp`, the router in 8 bits, groups of 64;
- autoround, autoround-asym: AutoRound's own pipeline (round-to-nearest: iters=0), int4 in groups
  of 32, saved by quantize_and_save(format="auto_round"): symmetric in the packing format
  `auto_round:auto_gptq` it then writes (GPTQ's layout without g_idx, zero points less one; its
  QuantLinear's own forward on the identity dequantizes), asymmetric in `auto_round:auto_awq`
  (AWQ's GEMM layout; its dequantize_gemm), the scales widened to f32; autoround-3bit: int3,
  symmetric (GPTQ's 3-bit packing: each column's 32 values in three words, a value crossing from
  one word into the next);
- bnb-nf4, bnb-fp4, bnb-int8: bitsandbytes.functional.quantize_4bit (NF4 double quantized, FP4
  not) and int8_vectorwise_quant on every linear layer (NF4's but layer 1's MLP, which its
  llm_int8_skip_modules names by a prefix), each tensor under the name
  Linear4bit._save_to_state_dict and Linear8bitLt._save_to_state_dict give it (the 4-bit state
  by QuantState.as_dict(packed=True)), config.json's quantization_config as transformers'
  BitsAndBytesConfig.to_dict() writes it; dequantize_4bit and the row scales back.

The quantizer is round-to-nearest in each case: the fixture checks the format's packing, not the
search for its scales. Writes crates/exec/tests/fixtures/quant/<format>/{config.json,
model.safetensors, expected.json}; `quantized_checkpoints_run_as_their_reference_dequantizes`
(crates/exec/tests/stored_formats.rs) holds anatomy to them.

Usage: python3 scripts/make_quant_fixtures.py [FORMAT ...]  (all of them without one)
(needs torch, transformers, safetensors, compressed-tensors, bitsandbytes, mlx[cpu] and auto-round
(installed without its dependencies, then py-cpuinfo, accelerate, datasets and theirs) from PyPI, and the
sources of gptqmodel and autoawq on PYTHONPATH: pip download --no-deps gptqmodel autoawq, unpack
both; GPTQModel imports pypcre, logbar, device-smi, tokenicer, defuser, accelerate)
"""
import copy
import importlib.util
import json
import sys
import types
from pathlib import Path

import torch
from safetensors.torch import save_file

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_toy_fixtures as toys  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TOY = ROOT / "crates/exec/tests/fixtures/toy/qwen3-0.6b"
OUT = ROOT / "crates/exec/tests/fixtures/quant"
GROUP = 32


def linears(model):
    """The decoder's linear layers, by module name: every format here leaves the head alone."""
    return {n: m for n, m in model.named_modules() if isinstance(m, torch.nn.Linear) and n != "lm_head"}


# A format's toy where it is not the toy Qwen3 as it is: wide enough for groups of 128.
WIDER = {"awq-g128": {"hidden_size": 128, "intermediate_size": 256, "head_dim": 32},
         "mlx-moe": {"moe_intermediate_size": 64}, "gptq-moe": {"moe_intermediate_size": 64}}
# The formats whose fixture is the toy Qwen3-MoE (crates/exec/tests/fixtures/toy/qwen3-30b-a3b).
TOY_MOE = ROOT / "crates/exec/tests/fixtures/toy/qwen3-30b-a3b"
MOE = {"mlx-moe", "gptq-moe"}


def rtn(w, bits, sym, group=GROUP):
    """Round-to-nearest scales and zeros per group of `group` inputs: ([out, groups], [out, groups])."""
    g = w.reshape(w.shape[0], -1, group)
    if sym:
        scale = g.abs().amax(-1) / (2 ** (bits - 1) - 1)
        zero = torch.full_like(scale, 2 ** (bits - 1))
    else:
        lo, hi = g.amin(-1).clamp(max=0), g.amax(-1).clamp(min=0)
        scale = (hi - lo) / (2**bits - 1)
        zero = torch.round(-lo / scale)
    return scale.clamp(min=1e-8), zero


def expert_linears(model):
    """Each expert's projections of transformers' stacked experts (Qwen3-MoE's gate_up_proj
    [E, 2I, H], gate rows first, and down_proj [E, H, I]) as Linear modules under the names
    per-expert checkpoints store them (`mlp.experts.{e}.gate_proj`, as GPTQModel quantizes
    them); a function that moves their dequantized weights back into the stacks; and the
    stacks' names, which the checkpoint does not hold."""
    mods, stacks = {}, {}
    for i, layer in enumerate(model.model.layers):
        experts, prefix = layer.mlp.experts, f"model.layers.{i}.mlp.experts"
        inter = experts.gate_up_proj.shape[1] // 2
        stacks[prefix] = (experts, inter)
        for e in range(experts.gate_up_proj.shape[0]):
            parts = {"gate_proj": experts.gate_up_proj[e, :inter], "up_proj": experts.gate_up_proj[e, inter:],
                     "down_proj": experts.down_proj[e]}
            for proj, w in parts.items():
                lin = torch.nn.Linear(w.shape[1], w.shape[0], bias=False)
                lin.weight.data.copy_(w.data)
                mods[f"{prefix}.{e}.{proj}"] = lin

    def write_back(dequantized):
        with torch.no_grad():
            for prefix, (experts, inter) in stacks.items():
                for e in range(experts.gate_up_proj.shape[0]):
                    experts.gate_up_proj[e, :inter] = dequantized.pop(f"{prefix}.{e}.gate_proj")
                    experts.gate_up_proj[e, inter:] = dequantized.pop(f"{prefix}.{e}.up_proj")
                    experts.down_proj[e] = dequantized.pop(f"{prefix}.{e}.down_proj")

    replaced = {f"{prefix}.{p}" for prefix in stacks for p in ("gate_up_proj", "down_proj")}
    return mods, write_back, replaced


def gptq_moe(model, config):
    """GPTQ on the toy Qwen3-MoE, each expert's projections packed as their own modules (the
    layout GPTQ's MoE checkpoints publish), the routers left in floats as GPTQModel leaves them."""
    mods, write_back, replaced = expert_linears(model)
    stored, dequantized = gptq(model, config, extra=mods)
    write_back(dequantized)
    return stored, dequantized, replaced


def gptq(model, config, act_order=False, extra=None):
    """Symmetric int4 in groups of 32; with `act_order` (desc_act), each group's columns those a
    random order of the inputs puts together (GPTQ's order of decreasing activation), so that
    g_idx scatters the groups across the row as such checkpoints store them."""
    from gptqmodel.nn_modules.qlinear.torch import TorchLinear
    from gptqmodel.quantization.config import QuantizeConfig
    from gptqmodel.utils.model import convert_gptq_v2_to_v1_format_module

    qcfg = QuantizeConfig(bits=4, group_size=GROUP, sym=True, desc_act=act_order)
    order = torch.Generator().manual_seed(47)
    stored, dequantized = {}, {}
    for name, lin in {**linears(model), **(extra or {})}.items():
        q = TorchLinear(bits=4, group_size=GROUP, sym=True, desc_act=act_order, in_features=lin.in_features,
                        out_features=lin.out_features, bias=lin.bias is not None)
        n = lin.in_features
        perm = torch.randperm(n, generator=order) if act_order else torch.arange(n)
        g_idx = torch.empty(n, dtype=torch.int32)
        g_idx[perm] = (torch.arange(n) // GROUP).to(torch.int32)
        scale, zero = rtn(lin.weight.data[:, perm], 4, True)
        q.pack(lin, scale.half().float(), zero, g_idx)
        q.post_init()
        # Dequantized in f32: the reference multiplies in its scales' type (fp16 as stored).
        half = q.scales
        q.scales = half.float()
        dequantized[name] = q.dequantize_weight().T.float()
        q.scales = half
        convert_gptq_v2_to_v1_format_module(q, qcfg)
        for part in ("qweight", "qzeros", "scales", "g_idx"):
            stored[f"{name}.{part}"] = getattr(q, part).contiguous()
    config["quantization_config"] = {"bits": 4, "group_size": GROUP, "desc_act": act_order, "sym": True,
                                     "quant_method": "gptq", "checkpoint_format": "gptq"}
    return stored, dequantized


def autoround(model, config, sym, bits=4):
    """AutoRound on a copy of `model`, saved as it saves; the packed tensors and the weights its
    QuantLinear's forward gives back."""
    import tempfile

    import tokenizers
    import transformers
    from auto_round import AutoRound
    from safetensors.torch import load_file

    # AutoRound saves a tokenizer with the model: a one-word one will do for round-to-nearest.
    words = tokenizers.Tokenizer(tokenizers.models.WordLevel({"a": 0, "[UNK]": 1}, unk_token="[UNK]"))
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=words)
    with tempfile.TemporaryDirectory() as tmp:
        ar = AutoRound(copy.deepcopy(model), tokenizer=tok, bits=bits, group_size=GROUP, sym=sym, iters=0,
                       device_map="cpu", disable_opt_rtn=True)
        folder = ar.quantize_and_save(tmp, format="auto_round")
        folder = Path(folder[1] if isinstance(folder, tuple) else folder or tmp)
        if not (folder / "config.json").exists():
            folder = next(Path(tmp).rglob("config.json")).parent
        saved = load_file(str(folder / "model.safetensors"))
        config["quantization_config"] = json.loads((folder / "config.json").read_text())["quantization_config"]
    gptq = "gptq" in config["quantization_config"]["packing_format"]
    from auto_round.export.export_to_awq.utils import dequantize_gemm
    from auto_round_extension.torch.qlinear_torch_zp import QuantLinear
    stored, dequantized = {}, {}
    for name, lin in linears(model).items():
        parts = {part: saved[f"{name}.{part}"].contiguous() for part in ("qweight", "qzeros", "scales")}
        stored.update({f"{name}.{part}": t for part, t in parts.items()})
        with torch.no_grad():
            if gptq:
                q = QuantLinear(bits, GROUP, lin.in_features, lin.out_features, bias=False)
                for part, t in parts.items():
                    setattr(q, part, t)
                q.scales = q.scales.float()
                dequantized[name] = q(torch.eye(lin.in_features)).T.float()
            else:
                w = dequantize_gemm(parts["qweight"], parts["qzeros"], parts["scales"].float(), 4, GROUP)
                dequantized[name] = w.T.float()
    return stored, dequantized


def awq_package():
    """AutoAWQ's package __init__ loads its model classes and their calibration datasets; the
    packing and dequantization modules need neither, so the package is entered without it."""
    if "awq" not in sys.modules:
        pkg = types.ModuleType("awq")
        pkg.__path__ = list(importlib.util.find_spec("awq").submodule_search_locations)
        sys.modules["awq"] = pkg


def awq(model, config, group=GROUP):
    awq_package()
    from awq.modules.linear.gemm import WQLinear_GEMM
    from awq.utils.packing_utils import dequantize_gemm

    stored, dequantized = {}, {}
    for name, lin in linears(model).items():
        scale, zero = rtn(lin.weight.data, 4, False, group)
        scale = scale.half().float()
        q = WQLinear_GEMM.from_linear(lin, 4, group, scales=scale.T.contiguous(), zeros=zero.T.contiguous())
        # In f32, as for GPTQ: the reference multiplies in its scales' type.
        dequantized[name] = dequantize_gemm(q.qweight, q.qzeros, q.scales.float(), 4, group).T.float()
        for part in ("qweight", "qzeros", "scales"):
            stored[f"{name}.{part}"] = getattr(q, part).contiguous()
    config["quantization_config"] = {"quant_method": "awq", "bits": 4, "group_size": group, "version": "gemm",
                                     "zero_point": True}
    return stored, dequantized


def awq_gemv(model, config, group=GROUP):
    """AutoAWQ's WQLinear_GEMV.from_linear packs; AutoAWQ has no GEMV dequantizer, so the
    reference is the packer's own arithmetic on its inputs: codes round((w + zero·scale) / scale),
    values (code − zero) · scale. The packer ORs codes in unclamped, so each weight is first
    kept within its group's 16 levels (a rounded zero point can put the top one at code 16)."""
    awq_package()
    from awq.modules.linear.gemv import WQLinear_GEMV

    stored, dequantized = {}, {}
    for name, lin in linears(model).items():
        scale, zero = rtn(lin.weight.data, 4, False, group)
        scale = scale.half().float()
        g = torch.arange(lin.in_features) // group
        with torch.no_grad():
            lo, hi = -zero[:, g] * scale[:, g], (15 - zero[:, g]) * scale[:, g]
            lin.weight.copy_(torch.minimum(torch.maximum(lin.weight, lo), hi))
        q = WQLinear_GEMV.from_linear(lin, 4, group, scales=scale, zeros=zero)
        codes = torch.round((lin.weight.data + (zero * scale)[:, g]) / scale[:, g])
        assert 0 <= codes.min() and codes.max() <= 15
        dequantized[name] = ((codes - zero[:, g]) * scale[:, g]).float()
        for part in ("qweight", "qzeros", "scales"):
            stored[f"{name}.{part}"] = getattr(q, part).contiguous()
    config["quantization_config"] = {"quant_method": "awq", "bits": 4, "group_size": group, "version": "gemv",
                                     "zero_point": True}
    return stored, dequantized


def compressed_config(scheme, fmt):
    """quantization_config as llm-compressor writes it: the one scheme for every Linear, the head left alone."""
    from compressed_tensors.quantization import QuantizationConfig

    qc = QuantizationConfig(config_groups={"group_0": scheme}, format=fmt, ignore=["lm_head"],
                            quantization_status="compressed")
    return {**json.loads(qc.model_dump_json()), "quant_method": "compressed-tensors"}


def compressed(model, config):
    from compressed_tensors.compressors.pack_quantized.base import PackedQuantizationCompressor
    from compressed_tensors.quantization import QuantizationArgs, QuantizationScheme

    args = QuantizationArgs(num_bits=4, type="int", symmetric=False, strategy="group", group_size=GROUP)
    scheme = QuantizationScheme(targets=["Linear"], weights=args)
    stored, dequantized = {}, {}
    for name, lin in linears(model).items():
        scale, zero = rtn(lin.weight.data, 4, False)
        # The scales in the model's dtype, as llm-compressor's observers leave them.
        state = {"weight": lin.weight.data, "weight_scale": scale,
                 "weight_zero_point": (zero - 8).to(torch.int8)}
        packed = PackedQuantizationCompressor.compress(state, scheme)
        back = PackedQuantizationCompressor.decompress(packed, scheme)
        dequantized[name] = back["weight"].float()
        for part, t in packed.items():
            stored[f"{name}.{part}"] = t.contiguous()
    config["quantization_config"] = compressed_config(scheme, "pack-quantized")
    return stored, dequantized


def compressed_naive(model, config, kind):
    """int-quantized int8 by channel, or float-quantized fp8 in 32×32 blocks: the weight itself
    stored in 8 bits beside its scales (IntQuantizationCompressor, FloatQuantizationCompressor)."""
    from compressed_tensors.compressors.naive_quantized.base import (FloatQuantizationCompressor,
                                                                      IntQuantizationCompressor)
    from compressed_tensors.quantization import QuantizationArgs, QuantizationScheme

    if kind == "int8":
        args = QuantizationArgs(num_bits=8, type="int", symmetric=True, strategy="channel")
        compressor, fmt = IntQuantizationCompressor, "int-quantized"
    else:
        args = QuantizationArgs(num_bits=8, type="float", symmetric=True, strategy="block", block_structure=[32, 32])
        compressor, fmt = FloatQuantizationCompressor, "float-quantized"
    scheme = QuantizationScheme(targets=["Linear"], weights=args)
    stored, dequantized = {}, {}
    for name, lin in linears(model).items():
        w = lin.weight.data
        if kind == "int8":
            scale = w.abs().amax(-1, keepdim=True) / 127  # [out, 1]
        else:
            blocks = w.reshape(w.shape[0] // 32, 32, w.shape[1] // 32, 32)
            scale = blocks.abs().amax((1, 3)) / 448  # [out / 32, in / 32]
        packed = compressor.compress({"weight": w, "weight_scale": scale}, scheme)
        back = compressor.decompress(packed, scheme)
        dequantized[name] = back["weight"].float()
        for part, t in packed.items():
            stored[f"{name}.{part}"] = t.contiguous()
    config["quantization_config"] = compressed_config(scheme, fmt)
    return stored, dequantized


def compressed_nvfp4(model, config):
    """nvfp4-pack-quantized (NVFP4A16): e2m1 codes two a byte, an fp8 scale per 16 inputs and a
    global scale, by NVFP4PackedCompressor; the scales as its observers set them (the global one
    maps the largest value to 448 · 6)."""
    from compressed_tensors.compressors.nvfp4.base import NVFP4PackedCompressor
    from compressed_tensors.quantization import preset_name_to_scheme

    scheme = preset_name_to_scheme("NVFP4A16", ["Linear"])
    stored, dequantized = {}, {}
    for name, lin in linears(model).items():
        w = lin.weight.data
        g = ((448 * 6) / w.abs().max()).reshape(1)
        blocks = w.reshape(w.shape[0], -1, 16).abs().amax(-1)
        scale = (blocks / 6 * g).to(torch.float8_e4m3fn).to(torch.float32)
        packed = NVFP4PackedCompressor.compress({"weight": w, "weight_scale": scale, "weight_global_scale": g}, scheme)
        dequantized[name] = NVFP4PackedCompressor.decompress(packed, scheme)["weight"].float()
        for part, t in packed.items():
            stored[f"{name}.{part}"] = t.contiguous()
    config["quantization_config"] = compressed_config(scheme, "nvfp4-pack-quantized")
    return stored, dequantized


def mlx(model, config, group=GROUP, layers=None):
    """mx.quantize on every linear layer and the embedding; `layers` are mlx-lm's per-module
    choices (its own bits and group, or False: left in its float type), written into
    `quantization` and copied to `quantization_config` as mlx-lm's quantize_model writes them."""
    import mlx.core as mx
    import numpy as np

    layers = layers or {}
    stored, dequantized = {}, {}
    mods = dict(linears(model))
    mods["model.embed_tokens"] = model.model.embed_tokens
    for name, m in mods.items():
        choice = layers.get(name, {"group_size": group, "bits": 4})
        if choice is False:
            continue
        w = mx.array(m.weight.data.numpy())
        g, bits = choice["group_size"], choice["bits"]
        # Scales and biases in the weights' type (the toy's float32), as mlx-lm saves them.
        q, s, b = mx.quantize(w, g, bits)
        dequantized[name] = torch.from_numpy(np.array(mx.dequantize(q, s, b, g, bits))).float()
        stored[f"{name}.weight"] = torch.from_numpy(np.array(q))
        stored[f"{name}.scales"] = torch.from_numpy(np.array(s))
        stored[f"{name}.biases"] = torch.from_numpy(np.array(b))
    config["quantization"] = {"group_size": group, "bits": 4, **layers}
    if layers:
        config["quantization_config"] = config["quantization"]
    return stored, dequantized


def mlx_moe(model, config, group=64):
    """The toy Qwen3-MoE as mlx-lm saves a mixture of experts: each layer's experts stacked per
    projection (`mlp.switch_mlp.{gate,up,down}_proj`, as its sanitize stacks transformers'
    experts) and quantized as mlx.core.quantize does a 3-D weight, the router in 8 bits by its
    quant_predicate's per-layer entry, the attention, embedding and head in 4 bits. Returns
    the experts' stacked parameters as replaced."""
    import mlx.core as mx
    import numpy as np

    def quantize(name, w, bits=4):
        q, s, b = mx.quantize(mx.array(w.numpy()), group, bits)
        stored[f"{name}.weight"] = torch.from_numpy(np.array(q))
        stored[f"{name}.scales"] = torch.from_numpy(np.array(s))
        stored[f"{name}.biases"] = torch.from_numpy(np.array(b))
        return torch.from_numpy(np.array(mx.dequantize(q, s, b, group, bits))).float()

    stored, dequantized, replaced, layers = {}, {}, set(), {}
    mods = dict(linears(model))
    mods["model.embed_tokens"] = model.model.embed_tokens
    mods["lm_head"] = model.lm_head
    for name, m in mods.items():
        dequantized[name] = quantize(name, m.weight.data)
    for i, layer in enumerate(model.model.layers):
        prefix = f"model.layers.{i}.mlp"
        dequantized[f"{prefix}.gate"] = quantize(f"{prefix}.gate", layer.mlp.gate.weight.data, 8)
        layers[f"{prefix}.gate"] = {"group_size": group, "bits": 8}
        experts = layer.mlp.experts
        inter = experts.gate_up_proj.shape[1] // 2
        gate, up = experts.gate_up_proj.data[:, :inter], experts.gate_up_proj.data[:, inter:]
        with torch.no_grad():
            experts.gate_up_proj.copy_(torch.cat([quantize(f"{prefix}.switch_mlp.gate_proj", gate),
                                                  quantize(f"{prefix}.switch_mlp.up_proj", up)], 1))
            experts.down_proj.copy_(quantize(f"{prefix}.switch_mlp.down_proj", experts.down_proj.data))
        replaced |= {f"{prefix}.experts.gate_up_proj", f"{prefix}.experts.down_proj"}
    config["quantization"] = {"group_size": group, "bits": 4, **layers}
    config["quantization_config"] = config["quantization"]
    return stored, dequantized, replaced


def bnb(model, config, kind):
    import bitsandbytes.functional as F
    from transformers import BitsAndBytesConfig
    from transformers.quantizers.quantizers_utils import should_convert_module

    # NF4's fixture leaves a layer's MLP unquantized, by a prefix, as Unsloth's dynamic quants do.
    skip = ["lm_head", "model.layers.1.mlp"] if kind == "nf4" else None
    stored, dequantized = {}, {}
    for name, lin in linears(model).items():
        if not should_convert_module(name, skip):
            continue
        w = lin.weight.data
        if kind == "int8":
            cb, scb, _ = F.int8_vectorwise_quant(w.half())
            stored[f"{name}.weight"] = cb.contiguous()
            stored[f"{name}.SCB"] = scb.float().contiguous()
            stored[f"{name}.weight_format"] = torch.tensor(0, dtype=torch.uint8)
            dequantized[name] = cb.float() * scb.float()[:, None] / 127.0
            continue
        q, state = F.quantize_4bit(w, blocksize=64, quant_type=kind, compress_statistics=kind == "nf4")
        stored[f"{name}.weight"] = q.contiguous()
        for k, v in state.as_dict(packed=True).items():
            stored[f"{name}.weight.{k}"] = v.contiguous()
        dequantized[name] = F.dequantize_4bit(q, state).float()
    if kind == "int8":
        qc = BitsAndBytesConfig(load_in_8bit=True)
    else:
        qc = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type=kind, bnb_4bit_use_double_quant=kind == "nf4",
                                bnb_4bit_compute_dtype=torch.float32, llm_int8_skip_modules=skip)
    config["quantization_config"] = qc.to_dict()
    return stored, dequantized


def main():
    raws = {toy: json.loads((toy / "config.json").read_text()) for toy in (TOY, TOY_MOE)}
    ids = {toy: json.loads((toy / "expected.json").read_text())["ids"] for toy in (TOY, TOY_MOE)}
    formats = [("gptq", gptq), ("awq", awq), ("compressed", compressed), ("mlx", mlx)]
    formats += [("awq-g128", lambda m, c: awq(m, c, 128))]
    formats += [("gptq-act-order", lambda m, c: gptq(m, c, act_order=True)), ("awq-gemv", awq_gemv)]
    mixed = {"model.layers.0.mlp.gate_proj": {"group_size": 64, "bits": 8}, "model.layers.1.self_attn.o_proj": False}
    formats += [("mlx-g64", lambda m, c: mlx(m, c, 64, mixed)), ("mlx-moe", mlx_moe), ("gptq-moe", gptq_moe)]
    formats += [(f"compressed-{k}", lambda m, c, k=k: compressed_naive(m, c, k)) for k in ("int8", "fp8")]
    formats += [("compressed-nvfp4", compressed_nvfp4)]
    formats += [(f"bnb-{k}", lambda m, c, k=k: bnb(m, c, k)) for k in ("nf4", "fp4", "int8")]
    formats += [("autoround", lambda m, c: autoround(m, c, True)), ("autoround-asym", lambda m, c: autoround(m, c, False))]
    formats += [("autoround-3bit", lambda m, c: autoround(m, c, True, 3))]
    only = set(sys.argv[1:])
    for fmt, quantize in formats:
        if only and fmt not in only:
            continue
        toy = TOY_MOE if fmt in MOE else TOY
        config = {**copy.deepcopy(raws[toy]), **WIDER.get(fmt, {})}
        model = toys.build(config)
        config["torch_dtype"] = "float32"  # what the file holds beside the packed matrices
        stored, dequantized, *replaced = quantize(model, config)
        replaced = set(*replaced)
        # Everything else as the model holds it; the reference's weights in place for the logits.
        packed_modules = {k.rsplit(".", 1)[0] for k in stored}
        for name, t in model.state_dict().items():
            module = name.rsplit(".", 1)[0]
            tied = name == "lm_head.weight" and model.config.tie_word_embeddings
            if module not in packed_modules and not tied and name not in replaced:
                stored[name] = t.contiguous()
        with torch.no_grad():
            for name, w in dequantized.items():
                model.get_submodule(name).weight.copy_(w)
            logits = model(input_ids=torch.tensor([ids[toy]])).logits[0]
        folder = OUT / fmt
        folder.mkdir(parents=True, exist_ok=True)
        save_file(stored, str(folder / "model.safetensors"), metadata={"format": "pt"})
        (folder / "config.json").write_text(json.dumps(config, indent=1) + "\n")
        (folder / "expected.json").write_text(json.dumps({"ids": ids[toy], "logits": logits.tolist()}) + "\n")
        print(fmt, len(stored), "tensors; logits up to", float(logits.abs().max()))


if __name__ == "__main__":
    main()
