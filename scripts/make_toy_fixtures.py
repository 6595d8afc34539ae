#!/usr/bin/env python3
"""Make toy-size copies of published configs, the parity suite that catches keys the code ignores.

Each copy keeps every key of the real config.json and changes only sizes: hidden size, heads
(keeping the attention kind: MHA, GQA, MQA, MLA), head dims, FFN widths, experts (keeping top-k
and the group structure), layers (keeping one layer of each kind, per-layer lists cut to match),
vocabulary, windows and chunks (small enough that 10 tokens cross them), LongRoPE factor lists
(one per rotated pair) and the vision tower of a multimodal wrapper. Token ids that fall outside
the small vocabulary are moved inside it. transformers then builds the model with random weights
(norm weights, biases and buffers perturbed too, so nothing hides behind zeros and ones), and the
copy is saved with its logits for 10 token ids.

Writes crates/exec/tests/fixtures/toy/<name>/{config.json, model.safetensors, expected.json}.

With --mutants N --out DIR, writes instead N toy copies with random keys removed or set to
another valid value (the property test's cases, tests/mutants.rs) under DIR/<name>-<i>/, each
with transformers' logits, or with "refused" where transformers will not build or run it.

Usage: python3 scripts/make_toy_fixtures.py [NAME ...]
       python3 scripts/make_toy_fixtures.py --mutants N --out DIR [--seed S] [NAME ...]
(needs: pip install torch transformers; runs on the CPU in about a minute)
"""
import argparse
import copy
import json
import random
import re
import shutil
from pathlib import Path

import torch
import transformers
from safetensors.torch import load_file, save_file
from transformers import AutoModelForCausalLM, CONFIG_MAPPING
from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

ROOT = Path(__file__).resolve().parent.parent
CATALOG = ROOT / "crates/core/catalog"
OUT = ROOT / "crates/exec/tests/fixtures"
IDS = [5, 17, 42, 3, 90, 11, 7, 8, 61, 20]

# Heads keep a real head size where the config gives one (64), so RoPE rotates as many pairs
# as in a real model and a wrongly scaled frequency shows in the logits; derived, it is 32.
VOCAB = 128
HIDDEN = 64
HEADS = 4
HEAD_DIM = 64
FFN = 64
EXPERT_FFN = 16
WINDOW = 4

# Sizes, by key name, wherever they appear (top level, text_config).
SIZES = {
    "hidden_size": HIDDEN,
    "n_embd": HIDDEN,
    "intermediate_size": FFN,
    "intermediate_size_mlp": FFN + 32,
    "n_inner": FFN,
    # OPT's MLP width.
    "ffn_dim": FFN,
    "moe_intermediate_size": EXPERT_FFN,
    # LongCat-Flash's names for the dense and the expert width.
    "ffn_hidden_size": FFN,
    "expert_ffn_hidden_size": EXPERT_FFN,
    "shared_expert_intermediate_size": EXPERT_FFN,
    # ZAYA's router width.
    "router_hidden_size": 16,
    # MiniMax-M3's dense layers' and shared experts' widths.
    "dense_intermediate_size": FFN,
    "shared_intermediate_size": EXPERT_FFN + 16,
    "moe_shared_expert_intermediate_size": EXPERT_FFN + 8,
    # LFM2's first code's names: the block's width (and the convolution's), its MLP's.
    "block_dim": HIDDEN,
    "conv_dim": HIDDEN,
    "conv_dim_out": HIDDEN,
    "block_ff_dim": FFN,
    # CPM-Ant's MLP width, and buckets few enough that the toy's distances reach the
    # logarithmic ones.
    "dim_ff": FFN,
    "position_bias_num_buckets": 16,
    "vocab_size": VOCAB,
    "head_dim": HEAD_DIM,
    # Gemma 4's per-layer embeddings.
    "vocab_size_per_layer_input": VOCAB,
    "hidden_size_per_layer_input": 16,
    # Gemma 3n's LAuReL branch.
    "laurel_rank": 8,
    "kv_lora_rank": 16,
    "q_lora_rank": 24,
    "qk_nope_head_dim": 8,
    "qk_rope_head_dim": 8,
    "v_head_dim": 8,
    # DeepSeek sparse attention: 4 keys per query, so the toy's later queries attend sparsely;
    # 8 indexer heads, so that no two keys tie at the cut.
    "index_topk": 4,
    "index_n_heads": 8,
    "index_head_dim": 12,
}
WINDOWS = ("sliding_window", "attention_chunk_size", "attention_window_size")
TOKEN_IDS = ("bos_token_id", "eos_token_id", "pad_token_id", "boi_token_index", "eoi_token_index",
             "image_token_index", "decoder_start_token_id")


def layer_kinds(raw):
    """Each layer's kind as transformers' config class makes it (its own defaults included):
    (attention type, RoPE or not, MoE or not)."""
    raw = copy.deepcopy(raw)
    model_type = raw["model_type"]
    if model_type not in CONFIG_MAPPING:
        model_type = "deepseek_v3"
    text = CONFIG_MAPPING[model_type].from_dict(raw).get_text_config()
    n = text.num_hidden_layers
    types = list(getattr(text, "layer_types", None) or ["full_attention"] * n)
    for i in getattr(text, "cross_attention_layers", None) or []:  # Mllama's
        if 0 <= i < n:
            types[i] = "cross_attention"
    rope = list(getattr(text, "no_rope_layers", None) or [1] * n)
    if getattr(text, "mlp_layer_types", None) is not None:
        moe = [t == "sparse" for t in text.mlp_layer_types]
    elif getattr(text, "first_k_dense_replace", None) is not None:
        moe = [i >= text.first_k_dense_replace for i in range(n)]
    elif getattr(text, "moe_layers", None) is not None:
        moe = [i in text.moe_layers for i in range(n)]
    elif getattr(text, "interleave_moe_layer_step", None):
        moe = [(i + 1) % text.interleave_moe_layer_step == 0 for i in range(n)]
    elif getattr(text, "decoder_sparse_step", None):
        moe = [i not in (text.mlp_only_layers or []) and (i + 1) % text.decoder_sparse_step == 0
               for i in range(n)]
    else:
        moe = [False] * n
    return list(zip(types, rope, moe))


def layer_count(raw):
    """Layers of the toy copy: up to the first layer of the last kind to appear (at least 2)."""
    kinds = layer_kinds(raw)
    firsts = {}
    for i, k in enumerate(kinds):
        firsts.setdefault(k, i)
    # Zamba ties its shared block's copies together, which transformers cannot do for one copy:
    # up to the second layer that runs it.
    hybrid = [i for i, k in enumerate(kinds) if k[0] == "hybrid"]
    if raw.get("model_type") == "zamba" and len(hybrid) > 1:
        return hybrid[1] + 1
    return max(2, max(firsts.values()) + 1)


def cut_lists(text, n):
    """Per-layer lists cut to n layers, keeping a layer of each kind present in the original."""
    for key in ("layer_types", "no_rope_layers", "mlp_layer_types", "indexer_types", "layer_rope_theta",
                "hybrid_layer_pattern", "moe_layer_freq", "num_attention_heads_per_layer", "layers_block_type",
                "intermediate_size", "activation_sparsity_pattern"):
        v = text.get(key)
        if isinstance(v, list) and len(v) > n:
            kinds = []
            for x in v:
                if x not in kinds:
                    kinds.append(x)
            head = v[:n]
            for k in kinds:
                if k not in head:
                    head[-1] = k
            text[key] = head
    # A layer pattern written as a string (Nemotron-H's M, E, *, -).
    p = text.get("hybrid_override_pattern")
    if isinstance(p, str) and len(p) > n:
        head = list(p[:n])
        for c in dict.fromkeys(p):
            if c not in head:
                head[-1] = c
        text["hybrid_override_pattern"] = "".join(head)
    for key in ("mlp_only_layers", "moe_layers", "full_attn_idxs", "hybrid_layer_ids"):
        v = text.get(key)
        if isinstance(v, list):
            text[key] = [i for i in v if i < n]
    # Kimi Linear's layer lists, numbered from 1.
    lac = text.get("linear_attn_config")
    if isinstance(lac, dict):
        for key in ("full_attn_layers", "kda_layers"):
            if isinstance(lac.get(key), list):
                lac[key] = [i for i in lac[key] if i <= n]


def head_size(text):
    hidden = text.get("hidden_size", text.get("n_embd"))
    heads = text.get("num_attention_heads", text.get("n_head"))
    return text.get("head_dim") or (hidden // heads if hidden and heads else None)


def shrink_text(text, n):
    heads = text.get("num_attention_heads", text.get("n_head"))
    kv = text.get("num_key_value_heads")
    # A rotated dim count (GPT-J, MiniMax-M2) keeps its fraction of the head.
    rotary = text.get("rotary_dim")
    rotary_fraction = rotary / head_size(text) if isinstance(rotary, int) and head_size(text) else None
    # RecurrentGemma's RG-LRU width: the stream's, where the real model's is (else wider).
    lru = text.get("lru_width")
    if isinstance(lru, int):
        text["lru_width"] = HIDDEN if lru == text.get("hidden_size") else HIDDEN + 16
    # OPT's token table keeps its ratio to the stream (OPT-350M's is half as wide; most, as wide).
    proj, hidden = text.get("word_embed_proj_dim"), text.get("hidden_size")
    if isinstance(proj, int) and isinstance(hidden, int) and hidden > 0:
        text["word_embed_proj_dim"] = max(8, HIDDEN * proj // hidden)
    # Mamba's saved `intermediate_size` restates expand × hidden (the class derives it): so it stays.
    expand, inner = text.get("expand"), text.get("intermediate_size")
    restated = isinstance(expand, int) and isinstance(hidden, int) and inner == expand * hidden
    vocab = text.get("vocab_size")
    for key, value in SIZES.items():
        if isinstance(text.get(key), int):
            text[key] = value
    if restated:
        text["intermediate_size"] = expand * text["hidden_size"]
    # DeepSeek-V4: windows of 2 and 4 tokens, so that the toy's 10 tokens close several of each;
    # head groups that divide the toy's heads, and a small rank per group.
    rates = text.get("compress_rates")
    if isinstance(rates, dict):
        text["compress_rates"] = {k: min(v, 2 if k == "compressed_sparse_attention" else 4) for k, v in rates.items()}
    if isinstance(text.get("o_groups"), int):
        text["o_groups"] = min(text["o_groups"], 2)
        text["o_lora_rank"] = 8
    # Inkling 2 Loop: blocks of 2 layers so that the toy's layers hold a looped block between
    # others (the real model's blocks of 6 and loop from layer 6 would leave nothing to loop).
    if isinstance(text.get("loop_layer_index_start"), int) and isinstance(text.get("n_layers_per_attn_res_block"), int):
        text.update(n_layers_per_attn_res_block=2, loop_layer_index_start=2, loop_layer_index_end=4,
                    loop_gate_rank=min(text.get("loop_gate_rank", 8), 8))
    # Inkling's head padded past the real vocabulary: padded in the toy too, by a few rows.
    unpadded = text.get("unpadded_vocab_size")
    if isinstance(unpadded, int) and isinstance(vocab, int):
        text["unpadded_vocab_size"] = VOCAB - min(7, max(0, vocab - unpadded))
    # Gemma 3n's width per layer: each distinct width its own toy width. Its activation sparsity
    # keeps 5% of the gate: at the toy's usual width that is 3 values, whose small sum the
    # post-FFN norm then scales up with its rounding (transformers' own float32 logits drift
    # 6.7e-5 from float64's at 64 wide); 512 wide keeps 26.
    widths = text.get("intermediate_size")
    if isinstance(widths, list):
        base = 512 if text.get("activation_sparsity_pattern") else FFN
        distinct = sorted(set(widths))
        text["intermediate_size"] = [base + 16 * distinct.index(w) for w in widths]
    # RecurrentGemma's class derives the head size, and says so in head_dim.
    if isinstance(lru, int):
        text["head_dim"] = HIDDEN // HEADS
    for key in ("num_attention_heads", "n_head"):
        if key in text:
            text[key] = HEADS
    # LFM2 restates its attention heads as `num_heads` (Mamba2's own key, sized below).
    if isinstance(text.get("num_heads"), int) and "num_attention_heads" in text:
        text["num_heads"] = HEADS
    # A state-space mixer (Mamba2): heads and state of 16, B and C still shared by groups where
    # the real model shares them, and chunks small enough that the prompt crosses several.
    if isinstance(text.get("state_size"), int) and isinstance(text.get("num_heads"), int):
        expand = text.get("expand", 2)
        text["head_dim"] = text["state_size"] = 16
        text["num_heads"] = text["hidden_size"] * expand // 16
        text["n_groups"] = 2 if text.get("n_groups", 8) > 1 else 1
        if "intermediate_size" in text:
            text["intermediate_size"] = text["hidden_size"] * expand
        if isinstance(text.get("chunk_size"), int):
            text["chunk_size"] = 4
    # Jamba's: a state of 16, a step of rank 8, chunks of 4 positions.
    if isinstance(text.get("mamba_d_state"), int) and isinstance(text.get("mamba_dt_rank"), int):
        text["mamba_d_state"], text["mamba_dt_rank"] = 16, 8
    # Nemotron-H's: heads and state of 16, two groups.
    if isinstance(text.get("ssm_state_size"), int) and isinstance(text.get("mamba_num_heads"), int):
        text["mamba_head_dim"] = text["ssm_state_size"] = 16
        text["mamba_num_heads"] = 4
        text["n_groups"] = 2 if text.get("n_groups", 8) > 1 else 1
        if isinstance(text.get("chunk_size"), int):
            text["chunk_size"] = 4
    # Gated DeltaNet (Qwen3-Next, Qwen3.5): two key heads, each serving as many value heads as
    # the real model's do, heads of 16.
    if isinstance(text.get("linear_num_key_heads"), int):
        ratio = text.get("linear_num_value_heads", 32) // text["linear_num_key_heads"]
        text["linear_num_key_heads"], text["linear_num_value_heads"] = 2, 2 * ratio
        text["linear_key_head_dim"] = text["linear_value_head_dim"] = 16
    # xLSTM's width under its own name, its key share a multiple of 64 (which the class's cache
    # rounds it to), and its heads; its prompt kernel in chunks of 4, and in float32 (its bf16
    # default is a precision, not another model).
    if isinstance(text.get("embedding_dim"), int) and text.get("model_type") == "xlstm":
        text["embedding_dim"] = text["hidden_size"] = 2 * HIDDEN
        text["num_heads"] = HEADS
        text["chunk_size"] = 4
        text["autocast_kernel_dtype"] = "float32"
    # Zamba's and Zamba2's attention widths (twice the stream) and Mamba sizes, which their
    # configs save though the classes derive them; Zamba2's state, adapters and chunks.
    if text.get("model_type") in ("zamba", "zamba2"):
        text["attention_hidden_size"] = 2 * text["hidden_size"]
        text["attention_head_dim"] = 2 * text["hidden_size"] // text["num_attention_heads"]
        for key, value in (("mamba_d_state", 16), ("adapter_rank", 8), ("chunk_size", 4),
                           ("kv_channels", text["hidden_size"] // text["num_attention_heads"]),
                           ("num_query_groups", text["num_attention_heads"])):
            if isinstance(text.get(key), int):
                text[key] = value
        if isinstance(text.get("mamba_headdim"), int):
            text["mamba_headdim"] = text.get("mamba_expand", 2) * text["hidden_size"] // text["n_mamba_heads"]
    # Kimi Delta Attention (Kimi Linear), in its sub-config: two heads of 16.
    lac = text.get("linear_attn_config")
    if isinstance(lac, dict):
        lac["num_heads"], lac["head_dim"] = 2, 16
    if isinstance(kv, int) and isinstance(heads, int):
        text["num_key_value_heads"] = HEADS if kv == heads else (1 if kv == 1 else 2)
    # Per-layer query heads (Laguna): each distinct count a multiple of the toy's heads, in order.
    per_layer = text.get("num_attention_heads_per_layer")
    if isinstance(per_layer, list):
        ranks = sorted(set(per_layer))
        text["num_attention_heads_per_layer"] = [HEADS * (ranks.index(h) + 1) for h in per_layer]
    # The sliding layers' own attention in the names of MiMo-V2-Flash's first code: as many times
    # the K/V heads as the real model has, within the heads.
    swa_kv = text.get("swa_num_key_value_heads")
    if isinstance(swa_kv, int) and isinstance(kv, int):
        text["swa_num_key_value_heads"] = min(HEADS, text["num_key_value_heads"] * max(1, swa_kv // kv))
    for key, like in (("swa_num_attention_heads", "num_attention_heads"), ("swa_head_dim", "head_dim"),
                      ("swa_v_head_dim", "v_head_dim")):
        if isinstance(text.get(key), int) and isinstance(text.get(like), int):
            text[key] = text[like]
    # A third of a 64-dim head is 21 dims, an odd count; keep the rotated dims even, for the
    # top-level fraction and each layer type's.
    partials = [text.get("partial_rotary_factor")]
    if isinstance(text.get("rope_parameters"), dict):
        partials += [r.get("partial_rotary_factor") for r in text["rope_parameters"].values() if isinstance(r, dict)]
    partials = [p for p in partials if isinstance(p, float)]
    if partials and isinstance(text.get("head_dim"), int):
        while any(int(text["head_dim"] * p) % 2 for p in partials):
            text["head_dim"] -= 8
        for key in ("swa_head_dim",):
            if isinstance(text.get(key), int):
                text[key] = text["head_dim"]
    for key in WINDOWS:
        if isinstance(text.get(key), int):
            text[key] = WINDOW
    # The window less the query's own position (MiMo-V2-Flash's), which wins over the window.
    if isinstance(text.get("sliding_window_size"), int):
        text["sliding_window_size"] = WINDOW - 1
    if rotary_fraction is not None:
        text["rotary_dim"] = max(2, round(rotary_fraction * head_size(text) / 2) * 2)
    if isinstance(text.get("query_pre_attn_scalar"), int):
        text["query_pre_attn_scalar"] = HEAD_DIM
    # LongCat-Flash: the qk head is nope + rope dims, and its rotary tables are head_dim wide
    # (the rope dims, where the real config has them so).
    if isinstance(text.get("qk_head_dim"), int):
        text["qk_head_dim"] = text["qk_nope_head_dim"] + text["qk_rope_head_dim"]
    if raw_rope_head_dim(text) is not None:
        text["head_dim"] = text["qk_rope_head_dim"]
    # Experts: twice top-k (at least 8), a multiple of the groups with two or more in each.
    k = text.get("num_experts_per_tok") or text.get("num_experts_per_token") or text.get("moe_topk") or 1
    groups = text.get("n_group") or 1
    for key in ("num_local_experts", "num_experts", "n_routed_experts"):
        e = text.get(key)
        if isinstance(e, int):
            want = max(8, 2 * k, 2 * groups)
            # LongCat-Flash's zero-computation experts keep their share of the routed ones.
            zero = text.get("zero_expert_num")
            if isinstance(zero, int) and zero:
                text["zero_expert_num"] = max(1, min(e, -(-want // groups) * groups) * zero // e)
            text[key] = min(e, -(-want // groups) * groups)
    # (LongCat-Flash's num_layers counts pairs of layers.)
    for key in ("num_hidden_layers", "n_layer", "num_layers", "num_blocks"):
        if key in text:
            text[key] = n
    if isinstance(text.get("max_window_layers"), int):
        text["max_window_layers"] = min(text["max_window_layers"], n - 1)
    cut_lists(text, n)
    # dots.3 Note's sliding layers as its class saves them: latent attention of their own
    # sizes (half the heads, other ranks and widths, the same rotary dims).
    plc = text.get("per_layer_config")
    if text.get("model_type") == "dots3_note_text" and isinstance(plc, dict):
        swa = {"num_attention_heads": HEADS // 2, "num_key_value_heads": HEADS // 2, "q_lora_rank": 20,
               "kv_lora_rank": 12, "head_dim": 20, "qk_nope_head_dim": 12, "qk_rope_head_dim": 8,
               "v_head_dim": 12}
        types = text.get("layer_types") or []
        text["per_layer_config"] = {str(i): dict(swa) for i, t in enumerate(types) if t == "sliding_attention"}
    # Gemma 4's global layers as transformers saves them: the same overrides on the toy's global
    # layers, their heads twice the local ones.
    elif isinstance(plc, dict) and plc:
        first = dict(next(iter(plc.values())))
        if "head_dim" in first:
            first["head_dim"] = 2 * text["head_dim"]
        if "num_key_value_heads" in first:
            first["num_key_value_heads"] = 1
        types = text.get("layer_types") or []
        text["per_layer_config"] = {str(i): dict(first) for i, t in enumerate(types) if t == "full_attention"}
    for rope_key in ("rope_scaling", "rope_parameters"):
        r = text.get(rope_key)
        if isinstance(r, dict):
            for f in ("short_factor", "long_factor"):
                if isinstance(r.get(f), list):
                    pairs = rotary_pairs(text)
                    step = len(r[f]) / pairs
                    r[f] = [r[f][int(i * step)] for i in range(pairs)]
            # The multimodal RoPE's sections split the rotated pairs (Qwen2-VL's must sum to
            # them): scaled down in proportion, the first taking what rounding leaves.
            sections = r.get("mrope_section")
            if isinstance(sections, list) and sections and sum(sections) > rotary_pairs(text):
                pairs = rotary_pairs(text)
                scaled = [max(1, x * pairs // sum(sections)) for x in sections]
                scaled[0] += pairs - sum(scaled)
                r["mrope_section"] = scaled


def raw_rope_head_dim(text):
    """LongCat-Flash's head_dim, which sizes its rotary tables: the rope dims, or None elsewhere."""
    if text.get("model_type") == "longcat_flash" and isinstance(text.get("qk_rope_head_dim"), int):
        return text["qk_rope_head_dim"]
    return None


def rotary_pairs(text):
    hd = text.get("head_dim") or text["hidden_size"] // text["num_attention_heads"]
    partial = text.get("partial_rotary_factor", 1.0)
    return int(hd * partial) // 2


def shrink_vision(v):
    # Set even where the class default applies: a vision tower is not what the copy tests.
    for key in ("hidden_size", "intermediate_size", "projector_input_dim", "projector_output_dim",
                "vision_output_dim"):
        v[key] = 32
    for key in ("num_hidden_layers",):
        if isinstance(v.get(key), int):
            v[key] = 1
    for key in ("num_attention_heads",):
        if isinstance(v.get(key), int):
            v[key] = 2
    # The Qwen VL towers' own keys: depth, Qwen2-VL's width (`embed_dim`; its `hidden_size` is
    # the merger's output), heads, and layer lists cut to the one block left.
    for key, value in (("depth", 1), ("embed_dim", 32), ("num_heads", 2), ("out_hidden_size", 32),
                       ("num_position_embeddings", 16), ("deepstack_visual_indexes", [0]),
                       ("fullatt_block_indexes", [0])):
        if key in v:
            v[key] = value
    if v.get("model_type") == "mllama_vision_model":
        # Its position tables hold every patch of every tile for each aspect ratio: two patches
        # a side, and one layer of its global encoder too.
        v.update(image_size=2 * v.get("patch_size", 14), num_global_layers=1, attention_heads=2)


def token_ids_inside(cfg, vocab):
    for key in TOKEN_IDS:
        v = cfg.get(key)
        if isinstance(v, int) and v >= vocab:
            cfg[key] = vocab - 1 - TOKEN_IDS.index(key)
        elif isinstance(v, list):
            cfg[key] = [x if x < vocab else vocab - 1 for x in v]


def shrink_blt(cfg):
    """BLT's four stacks made small, each sub-config's keys kept: encoder and decoder 32 wide, the
    latent transformer as wide as the encoder's k queries of a patch (no projection) or wider,
    the byte vocabulary kept (every id a byte), windows shorter than the prompt, a small hash."""
    k = cfg.get("cross_attn_k", 2)
    widths = {"encoder_config": 32, "decoder_config": 32, "global_config": 32 * k + 16, "patcher_config": 32}
    for key, width in widths.items():
        sub = cfg.setdefault(key, {})
        sub.update(hidden_size=width, num_attention_heads=HEADS, num_hidden_layers=2, intermediate_size=FFN)
        if sub.get("num_key_value_heads") is not None:
            sub["num_key_value_heads"] = 2
        if sub.get("sliding_window") is not None:
            sub["sliding_window"] = WINDOW
        if sub.get("head_dim") is not None:
            sub["head_dim"] = width // HEADS
        if "hidden_size_global" in sub:
            sub["hidden_size_global"] = widths["global_config"]
    cfg["encoder_hash_byte_group_vocab"] = 97
    if cfg.get("local_attention_window_len") is not None:
        cfg["local_attention_window_len"] = WINDOW
    return cfg


def shrink(raw):
    cfg = copy.deepcopy(raw)
    if cfg.get("model_type") == "blt":
        return shrink_blt(cfg)
    text = cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else cfg
    # Dense layers first: one of them is enough.
    if isinstance(text.get("first_k_dense_replace"), int):
        text["first_k_dense_replace"] = min(text["first_k_dense_replace"], 1)
    n = layer_count(cfg)
    # Gemma 3n's layers that reuse keys and values need a layer of their kind before them: twice
    # the layers, the last two sharing.
    if text.get("model_type") == "gemma3n_text" and text.get("num_kv_shared_layers", 15):
        n, text["num_kv_shared_layers"] = 2 * n, 2
    shrink_text(text, n)
    if text.get("model_type") == "dory":
        # Dory's sections: one input layer, two looped, one output, of the kinds the original has,
        # counted in blocks (an attention and an MLP each) where its layer_types list them so.
        kinds = list(dict.fromkeys(k[0] for k in layer_kinds(raw)))
        types = [kinds[i % len(kinds)] for i in range(4)]
        blocks = "mlp" in (raw.get("layer_types") or [])
        per = 2 if blocks else 1
        text["layer_types"] = [t for lt in types for t in ((lt, "mlp") if blocks else (lt,))]
        text["num_hidden_layers"], text["n_input_layers"], text["n_output_layers"] = 4 * per, per, per
        text.pop("n_recurrent_layers", None)
    if "num_layers_per_stack" in text:
        # HRM keeps its layers per stack apart; num_hidden_layers is their product with the stack
        # visits, its cache's slots.
        text["num_layers_per_stack"] = text["num_hidden_layers"]
        text["num_hidden_layers"] *= text.get("H_cycles", 2) * (text.get("L_cycles", 3) + 1)
    # The vocabulary is a size even where the class default gives it (Gemma 3: 262,208).
    text.setdefault("vocab_size", VOCAB)
    if isinstance(cfg.get("vision_config"), dict):
        shrink_vision(cfg["vision_config"])
    if isinstance(cfg.get("vq_config"), dict):
        # Emu3's image tokenizer, a convolutional VQ-VAE: one resolution of 32 channels (its
        # GroupNorms' 32 groups), attention there, two frames to a latent one.
        cfg["vq_config"].update(base_channels=32, channel_multiplier=[1], num_res_blocks=1,
                                attn_resolutions=[0], hidden_size=32, num_attention_heads=2,
                                codebook_size=16, temporal_downsample_factor=2)
    token_ids_inside(cfg, VOCAB)
    if text is not cfg:
        token_ids_inside(text, VOCAB)
    return cfg


def buildable(raw):
    """`raw` as its class can build it: Emu3's wrapper cannot without its tokenizer's map of image
    codes to token ids, which holds no weights, so an empty one stands in where a config has none."""
    if raw["model_type"] == "emu3" and raw.get("vocabulary_map") is None:
        return {**raw, "vocabulary_map": {}}
    return raw


def build(raw):
    """The model transformers builds for `raw`, float32, eager attention, random weights."""
    raw = dict(raw)
    model_type = raw["model_type"]
    if model_type not in CONFIG_MAPPING and raw.get("architectures") == ["DeepseekV3ForCausalLM"]:
        model_type = "deepseek_v3"
    config = CONFIG_MAPPING[model_type].from_dict(copy.deepcopy(buildable(raw)))
    text = config.get_text_config()
    if getattr(text, "pad_token_id", None) is not None and text.pad_token_id >= text.vocab_size:
        # A class default outside the small vocabulary (Phi-3: 32000); ids never reach the math.
        raw["pad_token_id"] = None
        return build(raw)
    arch = (raw.get("architectures") or [None])[0]
    # A wrapper is built as its published class, whose language model may sit at its top level
    # (Qwen2-VL's flat configs, a type the causal-LM mapping lacks).
    wrapped = "text_config" in raw or model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    cls = getattr(transformers, arch, None) if wrapped and arch else None
    torch.manual_seed(0)
    if cls is not None:
        model = cls._from_config(config, attn_implementation="eager", dtype=torch.float32)
    else:
        model = AutoModelForCausalLM.from_config(config, attn_implementation="eager", dtype=torch.float32)
    return randomize(model.float().eval())


def dory_scale(model, name):
    return getattr(model.config, "model_type", None) == "dory" and name.rsplit(".", 1)[-1] in (
        "sqk", "s_gate", "suv_gate", "suv_up", "lambda_1", "lambda_2", "logit_scale")


def randomize(model):
    """Random weights at unit scale (transformers' 0.02 makes every attention nearly uniform,
    where positions and masks cannot show), norm weights, biases and buffers perturbed too."""
    with torch.no_grad():
        for n, p in model.named_parameters():
            if p.dim() >= 2:
                fan_in = p.shape[-1] if "experts" not in n or p.dim() < 3 else p.shape[-2]
                p.normal_(0.0, fan_in ** -0.5)
            if dory_scale(model, n):
                # nGPT's scales are applied times 1 / initializer_range (56 at Dory's 0.0177), some
                # squared: perturbed by a tenth of their value, not by 0.1, so that the queries'
                # factor stays near head_dim, where a trained model keeps it, not 10⁴ times more.
                p.mul_(1 + torch.randn_like(p) * 0.1)
            elif p.dim() == 1 or "sinks" in n or "bias" in n:
                p.add_(torch.randn_like(p) * 0.1)
            if n.endswith("dt_bias") or n.endswith("dt_proj.bias"):
                # State-space steps near 1 rather than the initial 0.001 to 0.1, so that the scan,
                # and not only its skip, shows in the logits.
                p.normal_(0.0, 1.0)
        for n, b in model.named_buffers():
            if "correction_bias" in n:
                b.add_(torch.randn_like(b) * 0.1)
            if n.endswith("layer_scalar"):
                b.uniform_(0.5, 1.5)  # Gemma 4's stored output scalars, 1 when initialized
            if n.endswith("tid2eid"):
                # DeepSeek-V4's token-id routing table, zeros when initialized: distinct experts
                # per token, so that which ones a token gets shows in the logits.
                experts = model.config.n_routed_experts
                b.copy_(torch.stack([torch.randperm(experts)[: b.shape[1]] for _ in range(b.shape[0])]))
    return model


def logits_of(model, ids):
    with torch.no_grad():
        if model.config.model_type == "blt":
            # transformers 5.24's BLT fails with a cache (huggingface/transformers#47916).
            return model(input_ids=torch.tensor([ids]), use_cache=False).logits[0].float()
        if model.config.model_type == "paligemma":
            # As its processor gives them: the ids a prompt, token types 0 (a prefix that sees
            # itself both ways).
            return model(input_ids=torch.tensor([ids]), token_type_ids=torch.zeros(1, len(ids), dtype=torch.long)).logits[0].float()
        try:
            return model(input_ids=torch.tensor([ids])).logits[0].float()
        except AttributeError:
            # transformers 5.24's Llama4ForConditionalGeneration fails on text alone (it reads
            # `image_outputs` from a text-only output); its language model is a causal LM.
            return model.language_model(input_ids=torch.tensor([ids])).logits[0].float()


# Model types whose layers carry a recurrent state: their fixtures also hold transformers' logits
# when it is fed one token at a time through that state (its other code path).
RECURRENT = {"mamba", "falcon_mamba", "mamba2", "bamba", "granitemoehybrid", "nemotron_h", "jamba", "lfm2", "lfm3_vl",
             "qwen3_next", "qwen3_5_text", "qwen3_5_moe_text", "qwen3_5", "qwen3_5_moe", "lfm2_moe", "lfm3",
             "kimi_linear", "olmo_hybrid", "falcon_h1", "bailing_hybrid", "lara_mini", "minimax", "recurrent_gemma", "rwkv",
             "zamba", "zamba2", "xlstm"}


def blt_threshold(model, raw, ids):
    """Set BLT's patching threshold in the widest gap between the random patcher's entropies on
    `ids` near their median: patches of several lengths, no byte within float error of a
    boundary."""
    with torch.no_grad():
        ent, _, _ = model.model.patcher(torch.tensor([ids]), patch_size=None)
    e = sorted(ent[0, 1:].tolist())
    lo, hi = len(e) // 3, 2 * len(e) // 3
    _, i = max((e[i + 1] - e[i], i) for i in range(lo, hi))
    raw["patching_threshold"] = (e[i] + e[i + 1]) / 2
    model.config.patching_threshold = raw["patching_threshold"]


def decodes_as_prompted(raw):
    """Whether transformers' token-by-token path computes what its prompt path does. Nemotron-H
    clamps Δ to time_step_min (0.001 by default) in a prompt's scan but not when it decodes, so
    where the floor binds the prompt's logits are the reference for both (anatomy clamps in both);
    so for MiniMax's sliding window. Where transformers cannot decode at all (RecurrentGemma with an
    RG-LRU wider or narrower than the stream), the prompt's logits are the reference too."""
    # Dory with only the last pass caching: decoding is not the prompt's computation, and
    # transformers' token-by-token logits are the reference for it.
    if raw.get("model_type") == "dory":
        return raw.get("recurrent_kv_cache_mode") == "last_loop"
    # CPM-Ant's prompt attends both ways, as PaliGemma's does: their token-by-token logits are the
    # reference for decoding.
    if raw.get("model_type") in ("cpmant", "paligemma"):
        return True
    # BLT decodes by running every byte so far again; where patches are cut to a length, a
    # prefix's last patch can lose the empty one after it, and its logits differ from the
    # whole sequence's.
    if raw.get("model_type") == "blt":
        return raw.get("max_patch_length") is not None
    # DeepSeek-V4's compressors carry their unfinished window (and the last window's half that
    # the next entry reads) from step to step beside the sliding window.
    if raw.get("model_type") == "deepseek_v4":
        return True
    # Inkling carries its convolutions' last inputs from step to step beside the KV cache.
    if raw.get("model_type") in ("inkling_text", "inkling2_text", "inkling2_loop_text", "inkling2", "inkling2_loop"):
        return True
    if raw.get("model_type") not in RECURRENT:
        return False
    # MiniMax decodes through a cache made without its config, whose attention layers keep every
    # token: a sliding window binds in its prompt only.
    if raw["model_type"] == "minimax" and raw.get("sliding_window") is not None:
        return False
    # RecurrentGemma's decoding sizes its convolution window by hidden_size, and fails where
    # lru_width differs.
    # RWKV's decoding sizes its state by hidden_size, and fails where attention_hidden_size
    # differs (its prompt runs without a cache).
    if raw["model_type"] == "rwkv" and raw.get("attention_hidden_size", raw.get("hidden_size")) != raw.get("hidden_size"):
        return False
    if raw["model_type"] == "recurrent_gemma" and raw.get("lru_width", raw.get("hidden_size")) != raw.get("hidden_size"):
        return False
    # Nemotron-H and Zamba2 floor Δ in a prompt's scan, not when decoding.
    return raw["model_type"] not in ("nemotron_h", "zamba2") or raw.get("time_step_min", 0.001) < 1e-6


def stepwise_logits(model, ids):
    """The logits of `ids` fed one at a time through transformers' cache, each with its position
    as `generate` gives it (a hybrid left to infer it from its cache rotates by the wrong one)."""
    with torch.no_grad():
        if model.config.model_type == "blt":
            # BLT's generate runs every id so far again (without a cache: transformers 5.24's
            # BLT fails with one).
            return torch.stack([model(input_ids=torch.tensor([ids[:i + 1]]), use_cache=False).logits[0, -1]
                                for i in range(len(ids))]).float()
        if model.config.model_type == "rwkv":
            # RWKV returns its state (each layer's last inputs and the WKV sums) to pass back.
            out = model(input_ids=torch.tensor([ids[:1]]), use_cache=True)
            rows = [out.logits[0, -1]]
            for i in range(1, len(ids)):
                out = model(input_ids=torch.tensor([ids[i:i + 1]]), state=out.state, use_cache=True)
                rows.append(out.logits[0, -1])
            return torch.stack(rows).float()
        if hasattr(model, "_setup_cache"):
            # RecurrentGemma keeps its recurrent state in its modules and returns no cache: one
            # cache for every step, the state reset before the first.
            from transformers import DynamicCache
            cache = DynamicCache(config=model.config)
            model._setup_cache(model.config, 1, model.device, torch.float32)
            rows = [model(input_ids=torch.tensor([ids[i:i + 1]]), cache=cache, use_cache=True,
                          position_ids=torch.tensor([[i]])).logits[0, -1] for i in range(len(ids))]
            return torch.stack(rows).float()
        out = model(input_ids=torch.tensor([ids[:1]]), use_cache=True)
        rows = [out.logits[0, -1]]
        for i in range(1, len(ids)):
            if model.config.model_type == "cpmant":
                # CPM-Ant decodes as `generate` calls it: every id so far, of which it runs the
                # ones past its cache.
                out = model(input_ids=torch.tensor([ids[:i + 1]]), cache=out.cache, use_cache=True)
            else:
                # PaliGemma's positions count from 1, as its `generate` gives them.
                first = 1 if model.config.model_type == "paligemma" else 0
                out = model(input_ids=torch.tensor([ids[i:i + 1]]), cache=out.cache, use_cache=True,
                            position_ids=torch.tensor([[i + first]]))
            rows.append(out.logits[0, -1])
    return torch.stack(rows).float()


def conv_cuts(model):
    """transformers 5.24 loads OLMo hybrid's convolution as the concatenation of a checkpoint's
    q_conv1d, k_conv1d and v_conv1d, but saves it cut into three equal parts; published
    checkpoints hold the key, key and value channels. Their sizes, or None for other models."""
    c = model.config.get_text_config()
    if c.model_type != "olmo_hybrid":
        return None
    keys = c.linear_num_key_heads * c.linear_key_head_dim
    return [keys, keys, c.linear_num_value_heads * c.linear_value_head_dim]


def resplit_convs(state, model):
    """`state` (as saved) with OLMo hybrid's convolutions cut as published checkpoints cut them."""
    sizes = conv_cuts(model)
    if sizes is None:
        return state
    for name, t in model.state_dict().items():
        if name.endswith("linear_attn.conv1d.weight"):
            base = name[: -len("conv1d.weight")]
            for part, piece in zip("qkv", t.split(sizes)):
                state[f"{base}{part}_conv1d.weight"] = piece.contiguous()
    return state


# Stacked experts that transformers transposes on load from the grouped-GEMM layout published
# checkpoints store ([E, hidden, 2·inter] and [E, inter, hidden]), and 5.25 saves as it holds
# them ([E, 2·inter, hidden] …): the published layout is the one people download.
TRANSPOSED_ON_LOAD = {"qwen3_vl_moe": (".mlp.experts.gate_up_proj", ".mlp.experts.down_proj")}


def transposed_on_load(model_type, name):
    return name.endswith(TRANSPOSED_ON_LOAD.get(model_type, ()))


# Names transformers 5.25 reverts to other than the published checkpoint's (regex, replacement):
# Kimi K2.5's renaming of the tower's `blocks` to `layers` reverts every `layers` (the language
# model's too), its split of the tower's `wqkv` into `attn.q_proj` … reverts the language model's
# `self_attn.q_proj` as well, and two names its loading reaches through the `model.` prefix it adds
# are not reverted at all.
REVERTED_WRONG = {"kimi_k25": ((r"^language_model\.model\.blocks\.", "language_model.model.layers."),
                               (r"^(language_model\..*)\.self_wqkv\.", r"\1.self_attn.q_proj."),
                               (r"^model\.mm_projector\.", "mm_projector."),
                               (r"^vision_tower\.encoder\.patch_embed\.", "vision_tower.patch_embed.")),
                  # Qianfan-OCR's renaming of the tower's `encoder.layers` to `layers` reverts the
                  # language model's `layers` too.
                  "qianfan_ocr": ((r"^language_model\.model\.encoder\.layers\.", "language_model.model.layers."),)}


def as_published(model_type, name):
    """A name as the published checkpoint has it (`REVERTED_WRONG`)."""
    for wrong, right in REVERTED_WRONG.get(model_type, ()):
        name = re.sub(wrong, right, name)
    return name


def save_model(d, model):
    """`save_pretrained`, its convolutions cut as published checkpoints cut them, its stacked
    experts laid out and its tensors named as they publish them."""
    model.save_pretrained(d, safe_serialization=True)
    model_type = model.config.model_type
    if conv_cuts(model) is not None or model_type in TRANSPOSED_ON_LOAD or model_type in REVERTED_WRONG:
        path = d / "model.safetensors"
        tensors = resplit_convs(load_file(path), model)
        tensors = {as_published(model_type, n): t.transpose(-1, -2).contiguous() if transposed_on_load(model_type, n) else t
                   for n, t in tensors.items()}
        save_file(tensors, path, metadata={"format": "pt"})


def save(d, raw, model, extra=None):
    d.mkdir(parents=True, exist_ok=True)
    save_model(d, model)
    for f in d.iterdir():
        if f.name not in ("model.safetensors",):
            f.unlink()
    (d / "config.json").write_text(json.dumps(raw, indent=1) + "\n")
    logits = logits_of(model, IDS)
    out = {"transformers": transformers.__version__, "ids": IDS, "logits": logits.tolist()}
    if decodes_as_prompted(raw):
        out["stepwise_logits"] = stepwise_logits(model, IDS).tolist()
    out.update(extra or {})
    (d / "expected.json").write_text(json.dumps(out) + "\n")
    return logits


# ---- mutants: random keys removed or set to another valid value --------------------------------

# Sizes whose class defaults are real-model sizes: removing one builds a model far too large for a
# test; the default-config fixtures cover those defaults.
SIZE_KEYS = set(SIZES) | {"num_hidden_layers", "n_layer", "num_attention_heads", "n_head",
                          "num_local_experts", "num_experts", "n_routed_experts", "intermediate_size_mlp"}


def alternatives(key, value):
    """Other values `key` could validly hold, by its type."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int) and key.endswith(("_token_id", "_token_index")):
        return []
    if isinstance(value, float):
        return [value * 2, value / 2]
    if isinstance(value, int) and key in WINDOWS:
        return [2, 8, None]
    if isinstance(value, str) and key in ("hidden_act", "hidden_activation", "activation_function"):
        return ["gelu", "gelu_pytorch_tanh", "relu", "silu", "relu2", "quick_gelu"]
    if isinstance(value, int) and key in ("num_key_value_heads",):
        return [1, 2, 4]
    if isinstance(value, int) and key not in SIZE_KEYS:
        return [value * 2, max(1, value // 2)]
    return []


def mutate(cfg, rng):
    cfg = copy.deepcopy(cfg)
    text = cfg["text_config"] if isinstance(cfg.get("text_config"), dict) else cfg
    changed = []
    rope = next((text[k] for k in ("rope_scaling", "rope_parameters") if isinstance(text.get(k), dict)), None)
    if rope and rng.random() < 0.4:
        # A key inside the RoPE dict: another value, or gone.
        key = rng.choice([k for k in rope if k not in ("rope_type", "type")] or ["factor"])
        options = alternatives(key, rope.get(key))
        if options and rng.random() < 0.7:
            rope[key] = rng.choice(options)
            changed.append(f"rope.{key} = {json.dumps(rope[key])}")
        elif key in rope:
            del rope[key]
            changed.append(f"rope.{key} removed")
    keys = [k for k in text if k not in ("model_type", "architectures")]
    rng.shuffle(keys)
    for key in keys[: rng.randint(1, 3)]:
        options = alternatives(key, text[key])
        if options and rng.random() < 0.7:
            text[key] = rng.choice(options)
            changed.append(f"{key} = {json.dumps(text[key])}")
        elif key not in SIZE_KEYS and (not isinstance(text[key], (dict, list)) or rng.random() < 0.5):
            del text[key]
            changed.append(f"{key} removed")
    return cfg, changed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--mutants", type=int, default=0)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--seed", type=int, default=20261130)
    a = ap.parse_args()
    if a.mutants:
        mutants(a.mutants, a.out, a.seed, a.names)
        return
    for path in sorted(CATALOG.glob("*.json")):
        name = path.stem
        if a.names and name not in a.names:
            continue
        raw = json.loads(path.read_text())
        toy = shrink(raw)
        model = build(toy)
        if toy["model_type"] == "blt":
            blt_threshold(model, toy, IDS)
        save(OUT / "toy" / name, toy, model)
        print(f"toy/{name}: {sum(p.numel() for p in model.state_dict().values()):,} params")


def exact(model):
    """The logits of `model`'s weights computed in float64 (`exact_logits`), where transformers
    runs the model so: the answer both its float32 logits and anatomy's approximate, which tells
    how far a badly conditioned config carries float32's rounding."""
    import copy
    try:
        return {"exact_logits": logits_of(copy.deepcopy(model).double(), IDS).tolist()}
    except Exception:  # a class that runs in float32 alone
        return {}


def mutants(n, out, seed, names=()):
    rng = random.Random(seed)
    paths = [p for p in sorted(CATALOG.glob("*.json")) if not names or p.stem in names]
    for i in range(n):
        path = rng.choice(paths)
        toy = shrink(json.loads(path.read_text()))
        cfg, changed = mutate(toy, rng)
        d = out / f"{path.stem}-{i}"
        try:
            model = build(cfg)
            logits_of(model, IDS)
            if decodes_as_prompted(cfg):
                stepwise_logits(model, IDS[:2])  # a model transformers cannot decode is refused too
            save(d, cfg, model, {"changed": changed, **exact(model)})  # nor one it cannot save
        except Exception as e:  # transformers refuses: anatomy must refuse too
            shutil.rmtree(d, ignore_errors=True)
            d.mkdir(parents=True, exist_ok=True)
            (d / "config.json").write_text(json.dumps(cfg, indent=1) + "\n")
            (d / "expected.json").write_text(json.dumps({"refused": f"{type(e).__name__}: {e}"[:300],
                                                         "changed": changed}) + "\n")
            print(f"{d.name}: {changed}: transformers refuses ({type(e).__name__})")
            continue
        print(f"{d.name}: {changed}")

if __name__ == "__main__":
    main()
