#!/usr/bin/env python3
"""GGUF fixtures: tiny random models made by transformers, written as llama.cpp's converter
writes them (mixture-of-experts layers with each layer's experts stacked in
ffn_{gate,up,down}_exps), once in F32, once with their matrices in Q8_0 and for two of them once
in a 16-bit float (the Mixtral's F16, the Qwen3-MoE's BF16), with transformers' logits for the
F32 weights:
- a Mixtral, which llama.cpp writes as architecture `llama` with `expert_count`, Q and K rows
  permuted for its RoPE;
- a Qwen3-MoE (architecture `qwen3moe`, its Q and K norms, experts of their own width);
- a Qwen2-MoE (architecture `qwen2moe`: Q/K/V biases, and a shared expert whose output a
  sigmoid gate scales, `ffn_{gate,up,down}_shexp` and `ffn_gate_inp_shexp`);
- a Gemma 2 (architecture `gemma2`: sandwich norms, softcaps, sliding and global layers), its
  RMSNorm weights stored as 1 + w as llama.cpp's converter stores them (and drawn at random here,
  so that the 1 matters);
- a Gemma 3 (architecture `gemma3`: Q and K norms too, five local layers per global one, the
  global layers' RoPE scaled linearly);
- a Gemma 4 (architecture `gemma4`: per-layer embeddings, global layers of wider heads whose keys
  are their values, layers reusing earlier keys and values with double-wide MLPs, layer scalars,
  the global layers' proportional RoPE as frequency factors in `rope_freqs.weight`);
- a dense Qwen2 (Q/K/V biases) and Qwen3 (Q and K norms);
- a Phi-3 (fused Q/K/V and gate/up), an OLMo 2 (norms after each sublayer), a SmolLM3 (every
  fourth layer without RoPE) and a Granite (four multipliers), the last two with Q and K rows
  permuted as llama.cpp's converter permutes a LlamaModel's.

Each file carries a placeholder vocabulary so that llama.cpp can load it: where llama-cpp-python
is installed, llama.cpp's own logits on the F32 file (f32 K/V cache) are compared with
transformers' and the largest difference recorded in expected.json ("llama_cpp"), which checks
that the files are laid out as llama.cpp reads them.

Writes crates/exec/tests/fixtures/gguf/<name>/{model-f32.gguf,
model-q8_0.gguf, model-f16.gguf or model-bf16.gguf (the first two), expected.json}.
Usage: python3 scripts/make_gguf_fixtures.py [name …]   (all of them, or those named; needs:
torch, transformers, gguf; optionally llama-cpp-python)
"""
import json
import sys
import tempfile
from pathlib import Path

import gguf
import numpy as np
import torch
import transformers
from safetensors.numpy import load_file

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "crates/exec/tests/fixtures/gguf"
IDS = [5, 17, 42, 3, 90, 11, 7, 8, 61, 20, 33, 2]


def permute(w, heads):
    """llama.cpp's converter's permutation of Q and K rows (convert_hf_to_gguf.py)."""
    return w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def tensors(sd, cfg, arch):
    """The state dict under llama.cpp's names, experts stacked."""
    if arch == "gemma4":
        return gemma4_tensors(sd, cfg)
    if arch in DENSE:
        return dense_tensors(sd, cfg, arch)
    if arch == "phi2":
        return phi2_tensors(sd, cfg)
    if arch == "starcoder":
        return starcoder_tensors(sd, cfg)
    if arch in ("gptneox", "bloom"):
        return gptneox_tensors(sd, cfg, arch)
    if arch == "falcon":
        return falcon_tensors(sd, cfg)
    if arch == "mpt":
        return mpt_tensors(sd, cfg)
    if arch == "ernie4_5-moe":
        return ernie_moe_tensors(sd, cfg)
    if arch == "exaone":
        return exaone_tensors(sd, cfg)
    if arch == "minimax-m2":
        return minimax_tensors(sd, cfg)
    if arch == "gpt2":
        return gpt2_tensors(sd, cfg)
    if arch == "hunyuan-moe":
        return hunyuan_moe_tensors(sd, cfg)
    if arch == "lfm2":
        return lfm2_tensors(sd, cfg)
    if arch == "mamba2":
        return mamba2_tensors(sd, cfg)
    if arch == "mamba":
        return mamba_tensors(sd, cfg)
    mixtral = arch == "llama"
    out = {
        "token_embd.weight": sd["model.embed_tokens.weight"],
        "output_norm.weight": sd["model.norm.weight"],
        "output.weight": sd["lm_head.weight"],
    }
    for b in range(cfg.num_hidden_layers):
        p = f"model.layers.{b}."
        out[f"blk.{b}.attn_norm.weight"] = sd[p + "input_layernorm.weight"]
        q, k = sd[p + "self_attn.q_proj.weight"], sd[p + "self_attn.k_proj.weight"]
        if mixtral:
            q, k = permute(q, cfg.num_attention_heads), permute(k, cfg.num_key_value_heads)
        elif arch in ("qwen3moe", "olmoe"):
            out[f"blk.{b}.attn_q_norm.weight"] = sd[p + "self_attn.q_norm.weight"]
            out[f"blk.{b}.attn_k_norm.weight"] = sd[p + "self_attn.k_norm.weight"]
        else:
            for x in "qkv":
                out[f"blk.{b}.attn_{x}.bias"] = sd[p + f"self_attn.{x}_proj.bias"]
            for ours, theirs in (("gate", "gate_proj"), ("up", "up_proj"), ("down", "down_proj")):
                out[f"blk.{b}.ffn_{ours}_shexp.weight"] = sd[p + f"mlp.shared_expert.{theirs}.weight"]
            out[f"blk.{b}.ffn_gate_inp_shexp.weight"] = sd[p + "mlp.shared_expert_gate.weight"]
        out[f"blk.{b}.attn_q.weight"], out[f"blk.{b}.attn_k.weight"] = q, k
        out[f"blk.{b}.attn_v.weight"] = sd[p + "self_attn.v_proj.weight"]
        out[f"blk.{b}.attn_output.weight"] = sd[p + "self_attn.o_proj.weight"]
        out[f"blk.{b}.ffn_norm.weight"] = sd[p + "post_attention_layernorm.weight"]
        moe, names = (("block_sparse_moe", ("w1", "w3", "w2")) if mixtral
                      else ("mlp", ("gate_proj", "up_proj", "down_proj")))
        out[f"blk.{b}.ffn_gate_inp.weight"] = sd[f"{p}{moe}.gate.weight"]
        count = cfg.num_local_experts if mixtral else cfg.num_experts
        for ours, theirs in zip(("gate", "up", "down"), names):
            experts = [sd[f"{p}{moe}.experts.{e}.{theirs}.weight"] for e in range(count)]
            out[f"blk.{b}.ffn_{ours}_exps.weight"] = np.stack(experts)
    return out


# The dense architectures, and the layer tensors each holds beside its norms: (llama.cpp's name,
# transformers' module).
ATTN = [("attn_q", "self_attn.q_proj"), ("attn_k", "self_attn.k_proj"), ("attn_v", "self_attn.v_proj"),
        ("attn_output", "self_attn.o_proj")]
MLP = [("ffn_gate", "mlp.gate_proj"), ("ffn_up", "mlp.up_proj"), ("ffn_down", "mlp.down_proj")]
PRE_NORMS = [("attn_norm", "input_layernorm"), ("ffn_norm", "post_attention_layernorm")]
SANDWICH = [("attn_norm", "input_layernorm"), ("post_attention_norm", "post_attention_layernorm"),
            ("ffn_norm", "pre_feedforward_layernorm"), ("post_ffw_norm", "post_feedforward_layernorm")]
QK_NORMS = [("attn_q_norm", "self_attn.q_norm"), ("attn_k_norm", "self_attn.k_norm")]
DENSE = {
    "gemma2": (SANDWICH, ATTN + MLP),
    "gemma3": (SANDWICH + QK_NORMS, ATTN + MLP),
    "qwen2": (PRE_NORMS, ATTN + MLP),
    "qwen3": (PRE_NORMS + QK_NORMS, ATTN + MLP),
    # Fused Q/K/V and gate/up, as transformers stores them too.
    "phi3": (PRE_NORMS, [("attn_qkv", "self_attn.qkv_proj"), ("attn_output", "self_attn.o_proj"),
                         ("ffn_up", "mlp.gate_up_proj"), ("ffn_down", "mlp.down_proj")]),
    # Norms after each sublayer only, and Q/K norms over all heads.
    "olmo2": ([("post_attention_norm", "post_attention_layernorm"),
               ("post_ffw_norm", "post_feedforward_layernorm")] + QK_NORMS, ATTN + MLP),
    "smollm3": (PRE_NORMS, ATTN + MLP),
    "granite": (PRE_NORMS, ATTN + MLP),
    # LayerNorms, a plain two-layer MLP, every module with a bias.
    "starcoder2": (PRE_NORMS, ATTN + [("ffn_up", "mlp.c_fc"), ("ffn_down", "mlp.c_proj")]),
    # One LayerNorm (no bias) before attention and MLP side by side.
    "command-r": ([("attn_norm", "input_layernorm")], ATTN + MLP),
    "cohere2": ([("attn_norm", "input_layernorm")], ATTN + MLP),
    "mistral3": (PRE_NORMS, ATTN + MLP),
    # LayerNorms, every module with a bias, relu² between the MLP's two layers.
    "jais2": (PRE_NORMS, ATTN + [("ffn_up", "mlp.up_proj"), ("ffn_down", "mlp.down_proj")]),
    # Q/K norms per head, under HunYuan's names (after RoPE, in both).
    "hunyuan-dense": (PRE_NORMS + [("attn_q_norm", "self_attn.query_layernorm"),
                                   ("attn_k_norm", "self_attn.key_layernorm")], ATTN + MLP),
    # Norms after each sublayer only (as OLMo 2's), Q/K norms per head.
    "exaone4": ([("post_attention_norm", "post_attention_layernorm"),
                 ("post_ffw_norm", "post_feedforward_layernorm")] + QK_NORMS, ATTN + MLP),
    # Norms before and after each sublayer, under GLM's names; gate and up in one matrix.
    "glm4": ([("attn_norm", "input_layernorm"), ("post_attention_norm", "post_self_attn_layernorm"),
              ("ffn_norm", "post_attention_layernorm"), ("post_ffw_norm", "post_mlp_layernorm")],
             ATTN + [("ffn_up", "mlp.gate_up_proj"), ("ffn_down", "mlp.down_proj")]),
    "gemma": (PRE_NORMS, ATTN + MLP),
    # LayerNorms with biases; a quarter of each head rotated.
    "stablelm": (PRE_NORMS, ATTN + MLP),
    # LayerNorms without weights: no norm tensors at all.
    "olmo": ([], ATTN + MLP),
    # A two-layer MLP, relu² between.
    "arcee": (PRE_NORMS, ATTN + [("ffn_up", "mlp.up_proj"), ("ffn_down", "mlp.down_proj")]),
    "ernie4_5": (PRE_NORMS, ATTN + MLP),
    # The norm before the MLP under llama.cpp's post_attention_norm; Q/K/V biases.
    "seed_oss": ([("attn_norm", "input_layernorm"), ("post_attention_norm", "post_attention_layernorm")],
                 ATTN + MLP),
    # LayerNorm1P (scaling by 1 + w, with biases), relu², half of each head rotated.
    "nemotron": (PRE_NORMS, ATTN + [("ffn_up", "mlp.up_proj"), ("ffn_down", "mlp.down_proj")]),
}
# Architectures whose modules all carry a bias.
BIASED = ("starcoder2", "jais2")
# Architectures whose norms alone carry a bias.
NORM_BIASED = ("stablelm", "nemotron")
# Architectures whose norm weights llama.cpp's converter stores as 1 + w.
PLUS_ONE = ("gemma", "gemma2", "gemma3", "nemotron")
# Architectures whose Q and K rows llama.cpp's converter permutes (a LlamaModel's, and OLMo's).
PERMUTED = ("llama", "smollm3", "granite", "arcee", "olmo", "mistral3")


def phi2_tensors(sd, cfg):
    """Phi-2 (transformers' `phi`): LayerNorms, every module and the LM head with a bias."""
    out = {"token_embd.weight": sd["model.embed_tokens.weight"]}
    for x in ("weight", "bias"):
        out[f"output_norm.{x}"] = sd[f"model.final_layernorm.{x}"]
        out[f"output.{x}"] = sd[f"lm_head.{x}"]
        for b in range(cfg.num_hidden_layers):
            p = f"model.layers.{b}."
            for ours, theirs in (("attn_norm", "input_layernorm"), ("attn_q", "self_attn.q_proj"),
                                 ("attn_k", "self_attn.k_proj"), ("attn_v", "self_attn.v_proj"),
                                 ("attn_output", "self_attn.dense"), ("ffn_up", "mlp.fc1"), ("ffn_down", "mlp.fc2")):
                out[f"blk.{b}.{ours}.{x}"] = sd[f"{p}{theirs}.{x}"]
    return out


def starcoder_tensors(sd, cfg):
    """StarCoder (transformers' `gpt_bigcode`): learned positions, Q/K/V fused with one K/V head,
    LayerNorms, every module with a bias, the LM head tied."""
    out = {"token_embd.weight": sd["transformer.wte.weight"], "position_embd.weight": sd["transformer.wpe.weight"]}
    for x in ("weight", "bias"):
        out[f"output_norm.{x}"] = sd[f"transformer.ln_f.{x}"]
        for b in range(cfg.num_hidden_layers):
            p = f"transformer.h.{b}."
            for ours, theirs in (("attn_norm", "ln_1"), ("attn_qkv", "attn.c_attn"), ("attn_output", "attn.c_proj"),
                                 ("ffn_norm", "ln_2"), ("ffn_up", "mlp.c_fc"), ("ffn_down", "mlp.c_proj")):
                out[f"blk.{b}.{ours}.{x}"] = sd[f"{p}{theirs}.{x}"]
    return out


def gptneox_tensors(sd, cfg, arch):
    """GPT-NeoX and BLOOM: LayerNorms and every module with a bias, Q/K/V fused, which llama.cpp's
    converter moves from each head's q, k, v together to all queries, then keys, then values;
    BLOOM's embedding normalized, its LM head tied."""
    heads = cfg.num_attention_heads
    if arch == "bloom":
        base, attn = "transformer.h", "self_attention"
        out = {"token_embd.weight": sd["transformer.word_embeddings.weight"]}
        for x in ("weight", "bias"):
            out[f"token_embd_norm.{x}"] = sd[f"transformer.word_embeddings_layernorm.{x}"]
            out[f"output_norm.{x}"] = sd[f"transformer.ln_f.{x}"]
    else:
        base, attn = "gpt_neox.layers", "attention"
        out = {"token_embd.weight": sd["gpt_neox.embed_in.weight"], "output.weight": sd["embed_out.weight"]}
        for x in ("weight", "bias"):
            out[f"output_norm.{x}"] = sd[f"gpt_neox.final_layer_norm.{x}"]
    for x in ("weight", "bias"):
        for b in range(cfg.num_hidden_layers):
            p = f"{base}.{b}."
            for ours, theirs in (("attn_norm", "input_layernorm"), ("attn_qkv", f"{attn}.query_key_value"),
                                 ("attn_output", f"{attn}.dense"), ("ffn_norm", "post_attention_layernorm"),
                                 ("ffn_up", "mlp.dense_h_to_4h"), ("ffn_down", "mlp.dense_4h_to_h")):
                t = sd[f"{p}{theirs}.{x}"]
                if ours == "attn_qkv":
                    t = t.reshape(heads, 3, -1, *t.shape[1:]).swapaxes(0, 1).reshape(t.shape)
                out[f"blk.{b}.{ours}.{x}"] = t
    return out


def falcon_tensors(sd, cfg):
    """Falcon: attention and MLP side by side after one LayerNorm (7B) or two (the new decoder
    architecture of 40B and 180B), no biases but the norms', the LM head tied; Q/K/V fused in
    K/V groups (each group's queries, key, value), which llama.cpp's converter regroups as all
    queries, keys, values (a no-op for multi-query's one group)."""
    heads = cfg.num_attention_heads
    kv = cfg.num_kv_heads if cfg.new_decoder_architecture else 1
    out = {"token_embd.weight": sd["transformer.word_embeddings.weight"]}
    for x in ("weight", "bias"):
        out[f"output_norm.{x}"] = sd[f"transformer.ln_f.{x}"]
    for b in range(cfg.num_hidden_layers):
        p = f"transformer.h.{b}."
        # In the new architecture llama.cpp's attn_norm is the MLP's norm, attn_norm_2 attention's.
        norms = ((("attn_norm", "ln_mlp"), ("attn_norm_2", "ln_attn")) if cfg.new_decoder_architecture
                 else (("attn_norm", "input_layernorm"),))
        for ours, theirs in norms:
            for x in ("weight", "bias"):
                out[f"blk.{b}.{ours}.{x}"] = sd[f"{p}{theirs}.{x}"]
        qkv = sd[p + "self_attention.query_key_value.weight"]
        groups = qkv.reshape(kv, heads // kv + 2, -1, qkv.shape[1])
        out[f"blk.{b}.attn_qkv.weight"] = np.concatenate(
            [groups[:, :-2].reshape(-1, qkv.shape[1]), groups[:, -2].reshape(-1, qkv.shape[1]),
             groups[:, -1].reshape(-1, qkv.shape[1])])
        for ours, theirs in (("attn_output", "self_attention.dense"), ("ffn_up", "mlp.dense_h_to_4h"),
                             ("ffn_down", "mlp.dense_4h_to_h")):
            out[f"blk.{b}.{ours}.weight"] = sd[f"{p}{theirs}.weight"]
    return out


def ernie_moe_tensors(sd, cfg):
    """ERNIE 4.5 MoE: dense layers before moe_layer_start_index, then experts stacked, shared
    experts beside them and a per-expert correction bias for choosing them."""
    out = {"token_embd.weight": sd["model.embed_tokens.weight"], "output_norm.weight": sd["model.norm.weight"]}
    for b in range(cfg.num_hidden_layers):
        p = f"model.layers.{b}."
        for ours, theirs in PRE_NORMS + ATTN:
            out[f"blk.{b}.{ours}.weight"] = sd[p + theirs + ".weight"]
        if b < cfg.moe_layer_start_index:
            for ours, theirs in MLP:
                out[f"blk.{b}.{ours}.weight"] = sd[p + theirs + ".weight"]
            continue
        out[f"blk.{b}.ffn_gate_inp.weight"] = sd[p + "mlp.gate.weight"]
        out[f"blk.{b}.exp_probs_b.bias"] = sd[p + "mlp.moe_statics.e_score_correction_bias"].reshape(-1)
        for x in ("gate", "up", "down"):
            experts = [sd[f"{p}mlp.experts.{e}.{x}_proj.weight"] for e in range(cfg.moe_num_experts)]
            out[f"blk.{b}.ffn_{x}_exps.weight"] = np.stack(experts)
            out[f"blk.{b}.ffn_{x}_shexp.weight"] = sd[f"{p}mlp.shared_experts.{x}_proj.weight"]
    return out


def exaone_tensors(sd, cfg):
    """EXAONE 3: a llama under GPT-2's module names (gate and up as c_fc_0 and c_fc_1)."""
    out = {"token_embd.weight": sd["transformer.wte.weight"], "output_norm.weight": sd["transformer.ln_f.weight"],
           "output.weight": sd["lm_head.weight"]}
    for b in range(cfg.num_hidden_layers):
        p = f"transformer.h.{b}."
        for ours, theirs in (("attn_norm", "ln_1"), ("attn_q", "attn.attention.q_proj"),
                             ("attn_k", "attn.attention.k_proj"), ("attn_v", "attn.attention.v_proj"),
                             ("attn_output", "attn.attention.out_proj"), ("ffn_norm", "ln_2"),
                             ("ffn_gate", "mlp.c_fc_0"), ("ffn_up", "mlp.c_fc_1"), ("ffn_down", "mlp.c_proj")):
            out[f"blk.{b}.{ours}.weight"] = sd[f"{p}{theirs}.weight"]
    return out


def minimax_tensors(sd, cfg):
    """MiniMax-M2: Q and K norms over all heads, experts stacked (Mixtral's w1, w3, w2), chosen
    by a sigmoid with a correction bias."""
    out = {"token_embd.weight": sd["model.embed_tokens.weight"], "output_norm.weight": sd["model.norm.weight"],
           "output.weight": sd["lm_head.weight"]}
    for b in range(cfg.num_hidden_layers):
        p = f"model.layers.{b}."
        for ours, theirs in PRE_NORMS + QK_NORMS + ATTN:
            out[f"blk.{b}.{ours}.weight"] = sd[p + theirs + ".weight"]
        moe = p + "block_sparse_moe."
        out[f"blk.{b}.ffn_gate_inp.weight"] = sd[moe + "gate.weight"]
        out[f"blk.{b}.exp_probs_b.bias"] = sd[moe + "e_score_correction_bias"]
        for ours, theirs in (("gate", "w1"), ("up", "w3"), ("down", "w2")):
            experts = [sd[f"{moe}experts.{e}.{theirs}.weight"] for e in range(cfg.num_local_experts)]
            out[f"blk.{b}.ffn_{ours}_exps.weight"] = np.stack(experts)
    return out


def gpt2_tensors(sd, cfg):
    """GPT-2: learned positions, LayerNorms and every module with a bias, the LM head tied; its
    Conv1D weights, [in, out] in transformers, transposed to [out, in] as llama.cpp's converter
    writes them."""
    out = {"token_embd.weight": sd["transformer.wte.weight"], "position_embd.weight": sd["transformer.wpe.weight"]}
    for x in ("weight", "bias"):
        out[f"output_norm.{x}"] = sd[f"transformer.ln_f.{x}"]
        for b in range(cfg.n_layer):
            p = f"transformer.h.{b}."
            for ours, theirs in (("attn_norm", "ln_1"), ("attn_qkv", "attn.c_attn"), ("attn_output", "attn.c_proj"),
                                 ("ffn_norm", "ln_2"), ("ffn_up", "mlp.c_fc"), ("ffn_down", "mlp.c_proj")):
                t = sd[f"{p}{theirs}.{x}"]
                out[f"blk.{b}.{ours}.{x}"] = t.T if t.ndim == 2 and "ln_" not in theirs else t
    return out


def hunyuan_moe_tensors(sd, cfg):
    """HunYuan-MoE: HunYuan's attention (per-head Q/K norms after RoPE), experts stacked beside a
    shared MLP in every layer."""
    out = {"token_embd.weight": sd["model.embed_tokens.weight"], "output_norm.weight": sd["model.norm.weight"],
           "output.weight": sd["lm_head.weight"]}
    for b in range(cfg.num_hidden_layers):
        p = f"model.layers.{b}."
        for ours, theirs in DENSE["hunyuan-dense"][0] + ATTN:
            out[f"blk.{b}.{ours}.weight"] = sd[p + theirs + ".weight"]
        out[f"blk.{b}.ffn_gate_inp.weight"] = sd[p + "mlp.gate.wg.weight"]
        for x in ("gate", "up", "down"):
            experts = [sd[f"{p}mlp.experts.{e}.{x}_proj.weight"] for e in range(cfg.num_experts)]
            out[f"blk.{b}.ffn_{x}_exps.weight"] = np.stack(experts)
            out[f"blk.{b}.ffn_{x}_shexp.weight"] = sd[f"{p}mlp.shared_mlp.{x}_proj.weight"]
    return out


def lfm2_tensors(sd, cfg):
    """LFM2: short-convolution layers and attention layers (Q/K norms per head), the final norm
    under llama.cpp's token_embd_norm, the LM head tied; a convolution's [channels, 1, L] kernel
    squeezed to [channels, L]."""
    out = {"token_embd.weight": sd["model.embed_tokens.weight"],
           "token_embd_norm.weight": sd["model.embedding_norm.weight"]}
    for b, kind in enumerate(cfg.layer_types):
        p = f"model.layers.{b}."
        names = [("attn_norm", "operator_norm"), ("ffn_norm", "ffn_norm"), ("ffn_gate", "feed_forward.w1"),
                 ("ffn_up", "feed_forward.w3"), ("ffn_down", "feed_forward.w2")]
        if kind == "conv":
            names += [("shortconv.in_proj", "conv.in_proj"), ("shortconv.out_proj", "conv.out_proj")]
            out[f"blk.{b}.shortconv.conv.weight"] = sd[p + "conv.conv.weight"][:, 0, :]
        else:
            names += ATTN[:3] + [("attn_output", "self_attn.out_proj"), ("attn_q_norm", "self_attn.q_layernorm"),
                                 ("attn_k_norm", "self_attn.k_layernorm")]
        for ours, theirs in names:
            out[f"blk.{b}.{ours}.weight"] = sd[p + theirs + ".weight"]
    return out


def mamba_tensors(sd, cfg):
    """Mamba as llama.cpp's converter writes it: A as -exp(A_log), the convolution kernel
    [channels, L]."""
    out = {"token_embd.weight": sd["backbone.embeddings.weight"], "output_norm.weight": sd["backbone.norm_f.weight"]}
    for b in range(cfg.num_hidden_layers):
        p = f"backbone.layers.{b}."
        m = p + "mixer."
        out[f"blk.{b}.attn_norm.weight"] = sd[p + "norm.weight"]
        for ours, theirs in (("ssm_in", "in_proj"), ("ssm_x", "x_proj"), ("ssm_dt", "dt_proj"), ("ssm_out", "out_proj")):
            out[f"blk.{b}.{ours}.weight"] = sd[f"{m}{theirs}.weight"]
        out[f"blk.{b}.ssm_dt.bias"] = sd[m + "dt_proj.bias"]
        out[f"blk.{b}.ssm_conv1d.weight"] = sd[m + "conv1d.weight"][:, 0, :]
        out[f"blk.{b}.ssm_conv1d.bias"] = sd[m + "conv1d.bias"]
        out[f"blk.{b}.ssm_a"] = -np.exp(sd[m + "A_log"])
        out[f"blk.{b}.ssm_d"] = sd[m + "D"]
    return out


def mamba2_tensors(sd, cfg):
    """Mamba-2 as llama.cpp's converter writes it: A as -exp(A_log) and D, each [heads, 1]; the
    gated norm's weight [groups, inner / groups]; the convolution kernel [channels, L]."""
    out = {"token_embd.weight": sd["backbone.embeddings.weight"], "output_norm.weight": sd["backbone.norm_f.weight"],
           "output.weight": sd["lm_head.weight"]}
    for b in range(cfg.num_hidden_layers):
        p = f"backbone.layers.{b}."
        m = p + "mixer."
        out[f"blk.{b}.attn_norm.weight"] = sd[p + "norm.weight"]
        out[f"blk.{b}.ssm_in.weight"] = sd[m + "in_proj.weight"]
        out[f"blk.{b}.ssm_conv1d.weight"] = sd[m + "conv1d.weight"][:, 0, :]
        out[f"blk.{b}.ssm_conv1d.bias"] = sd[m + "conv1d.bias"]
        out[f"blk.{b}.ssm_dt.bias"] = sd[m + "dt_bias"]
        out[f"blk.{b}.ssm_a"] = -np.exp(sd[m + "A_log"]).reshape(-1, 1)
        out[f"blk.{b}.ssm_d"] = sd[m + "D"].reshape(-1, 1)
        out[f"blk.{b}.ssm_norm.weight"] = sd[m + "norm.weight"].reshape(cfg.n_groups, -1)
        out[f"blk.{b}.ssm_out.weight"] = sd[m + "out_proj.weight"]
    return out


def mpt_tensors(sd, cfg):
    """MPT: ALiBi, LayerNorms without bias, Q/K/V stacked in one matrix, no biases, the LM head
    tied."""
    out = {"token_embd.weight": sd["transformer.wte.weight"], "output_norm.weight": sd["transformer.norm_f.weight"]}
    for b in range(cfg.n_layers):
        p = f"transformer.blocks.{b}."
        for ours, theirs in (("attn_norm", "norm_1"), ("attn_qkv", "attn.Wqkv"), ("attn_output", "attn.out_proj"),
                             ("ffn_norm", "norm_2"), ("ffn_up", "ffn.up_proj"), ("ffn_down", "ffn.down_proj")):
            out[f"blk.{b}.{ours}.weight"] = sd[f"{p}{theirs}.weight"]
    return out


def gemma4_global_head_dim(cfg):
    cfg.allow_global_per_layer_attribute_access = True
    return cfg.per_layer_config[cfg.layer_types.index("full_attention")].head_dim


def gemma4_tensors(sd, cfg):
    """Gemma 4 as llama.cpp's converter writes it: Gemma 3's names (its norms not shifted), no
    V projection where the keys are the values, the per-layer embeddings, each layer's output
    scalar, and the global layers' proportional RoPE as frequency factors (1e30 for the pairs
    that do not turn)."""
    out = {"token_embd.weight": sd["model.embed_tokens.weight"], "output_norm.weight": sd["model.norm.weight"]}
    if cfg.hidden_size_per_layer_input:
        out["per_layer_token_embd.weight"] = sd["model.embed_tokens_per_layer.weight"]
        out["per_layer_model_proj.weight"] = sd["model.per_layer_model_projection.weight"]
        out["per_layer_proj_norm.weight"] = sd["model.per_layer_projection_norm.weight"]
    hd = gemma4_global_head_dim(cfg)
    turning = int(hd * cfg.rope_parameters["full_attention"]["partial_rotary_factor"] / 2)
    out["rope_freqs.weight"] = np.array([1.0] * turning + [1e30] * (hd // 2 - turning), dtype=np.float32)
    names = SANDWICH + QK_NORMS + ATTN + MLP + [
        ("inp_gate", "per_layer_input_gate"), ("proj", "per_layer_projection"),
        ("post_norm", "post_per_layer_input_norm")]
    for b in range(cfg.num_hidden_layers):
        p = f"model.layers.{b}."
        for ours, theirs in names:
            if p + theirs + ".weight" in sd:
                out[f"blk.{b}.{ours}.weight"] = sd[p + theirs + ".weight"]
        out[f"blk.{b}.layer_output_scale.weight"] = sd[p + "layer_scalar"]
    return out


def dense_tensors(sd, cfg, arch):
    """A dense model under llama.cpp's names: Gemma's norm weights plus one (its LM head tied,
    not written), Qwen2's Q/K/V biases, Q and K rows permuted where llama.cpp permutes them."""
    one = 1 if arch in PLUS_ONE else 0
    out = {"token_embd.weight": sd["model.embed_tokens.weight"]}
    if "model.norm.weight" in sd:
        out["output_norm.weight"] = sd["model.norm.weight"] + one
    if arch in BIASED + NORM_BIASED:
        out["output_norm.bias"] = sd["model.norm.bias"]
    if not cfg.tie_word_embeddings:
        out["output.weight"] = sd["lm_head.weight"]
    norms, layer = DENSE[arch]
    for b in range(cfg.num_hidden_layers):
        p = f"model.layers.{b}."
        for ours, theirs in norms:
            out[f"blk.{b}.{ours}.weight"] = sd[p + theirs + ".weight"] + one
        for ours, theirs in layer:
            out[f"blk.{b}.{ours}.weight"] = sd[p + theirs + ".weight"]
        if arch in BIASED + NORM_BIASED:
            for ours, theirs in norms + (layer if arch in BIASED else []):
                out[f"blk.{b}.{ours}.bias"] = sd[p + theirs + ".bias"]
        if arch in PERMUTED:
            out[f"blk.{b}.attn_q.weight"] = permute(out[f"blk.{b}.attn_q.weight"], cfg.num_attention_heads)
            out[f"blk.{b}.attn_k.weight"] = permute(out[f"blk.{b}.attn_k.weight"], cfg.num_key_value_heads)
        if arch in ("qwen2", "seed_oss", "glm4"):
            for x in "qkv":
                out[f"blk.{b}.attn_{x}.bias"] = sd[p + f"self_attn.{x}_proj.bias"]
    return out


def write(path, cfg, named, kind, arch):
    """`named` in a GGUF at `path`, its matrices in `kind` (a GGMLQuantizationType), or all in F32
    where `kind` is None."""
    w = gguf.GGUFWriter(str(path), arch)
    if arch == "gemma4":
        gemma4_keys(w, cfg)
    elif arch in ("mamba", "mamba2"):
        mamba_keys(w, cfg, arch)
    else:
        attention_keys(w, cfg, named, arch)
    write_vocabulary_and_tensors(w, cfg, named, kind)


def gemma4_keys(w, cfg):
    """Gemma 4's metadata as llama.cpp's converter writes it (Gemma3Model's, then Gemma4Model's)."""
    cfg.allow_global_per_layer_attribute_access = True  # the converter reads the config's own
    w.add_block_count(cfg.num_hidden_layers)
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(cfg.num_attention_heads)
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    rope = cfg.rope_parameters
    w.add_rope_freq_base(rope["full_attention"]["rope_theta"])
    w.add_rope_freq_base_swa(rope["sliding_attention"]["rope_theta"])
    if cfg.final_logit_softcapping:
        w.add_final_logit_softcapping(cfg.final_logit_softcapping)
    w.add_sliding_window(cfg.sliding_window)
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_vocab_size(cfg.vocab_size)
    w.add_shared_kv_layers(cfg.num_kv_shared_layers)
    w.add_embedding_length_per_layer_input(cfg.hidden_size_per_layer_input or 0)
    swa = [t == "sliding_attention" for t in cfg.layer_types]
    w.add_sliding_window_pattern(swa)
    hd = gemma4_global_head_dim(cfg)
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_key_length_swa(cfg.head_dim)
    w.add_value_length_swa(cfg.head_dim)
    if cfg.use_double_wide_mlp:
        first = cfg.num_hidden_layers - cfg.num_kv_shared_layers
        w.add_feed_forward_length([cfg.intermediate_size * (1 if b < first else 2) for b in range(cfg.num_hidden_layers)])
    full = cfg.per_layer_config[cfg.layer_types.index("full_attention")]
    if cfg.attention_k_eq_v and full.num_key_value_heads != cfg.num_key_value_heads:
        w.add_head_count_kv([cfg.num_key_value_heads if s else full.num_key_value_heads for s in swa])
    w.add_rope_dimension_count(hd)
    w.add_rope_dimension_count_swa(int(cfg.head_dim * rope["sliding_attention"].get("partial_rotary_factor", 1.0)))


def mamba_keys(w, cfg, arch):
    """A Mamba's or Mamba-2's metadata as llama.cpp's converter writes it: no attention, no MLP."""
    w.add_block_count(cfg.num_hidden_layers)
    w.add_context_length(2 ** 20)
    w.add_embedding_length(cfg.hidden_size)
    w.add_feed_forward_length(0)
    w.add_head_count(0)
    w.add_ssm_conv_kernel(cfg.conv_kernel)
    w.add_ssm_state_size(cfg.state_size)
    if arch == "mamba2":
        w.add_ssm_inner_size(cfg.num_heads * cfg.head_dim)
        w.add_ssm_time_step_rank(cfg.num_heads)
        w.add_ssm_group_count(cfg.n_groups)
    else:
        w.add_ssm_inner_size(cfg.intermediate_size)
        w.add_ssm_time_step_rank(cfg.time_step_rank)
    w.add_layer_norm_rms_eps(cfg.layer_norm_epsilon)
    w.add_vocab_size(cfg.vocab_size)


def attention_keys(w, cfg, named, arch):
    """A transformer's metadata as llama.cpp's converter writes it for `arch`."""
    w.add_block_count(cfg.num_hidden_layers)
    w.add_context_length(getattr(cfg, "max_position_embeddings", 128))
    w.add_embedding_length(cfg.hidden_size)
    w.add_feed_forward_length({"starcoder": getattr(cfg, "n_inner", None), "bloom": 4 * cfg.hidden_size,
                               "lfm2": named.get("blk.0.ffn_gate.weight", np.zeros((0,))).shape[0],
                               "gpt2": getattr(cfg, "n_inner", None) or 4 * cfg.hidden_size,
                               "mpt": 4 * cfg.hidden_size,
                               "falcon": getattr(cfg, "ffn_hidden_size", None)}.get(arch)
                              or cfg.intermediate_size)
    w.add_head_count(cfg.num_attention_heads)
    falcon_kv = cfg.num_kv_heads if getattr(cfg, "new_decoder_architecture", False) else 1
    if arch == "lfm2":
        # Which layers attend: a K/V head count per layer, 0 for the convolutions.
        w.add_head_count_kv([cfg.num_key_value_heads if t == "full_attention" else 0 for t in cfg.layer_types])
        w.add_shortconv_l_cache(cfg.conv_L_cache)
    elif arch == "mpt":
        # As llama.cpp's converter writes an MPT: its LayerNorm epsilon, ALiBi's maximum.
        w.add_layer_norm_eps(1e-5)
        w.add_max_alibi_bias(cfg.attn_config.alibi_bias_max)
    else:
        w.add_head_count_kv({"starcoder": 1, "bloom": cfg.num_attention_heads, "falcon": falcon_kv,
                             "gpt2": cfg.num_attention_heads}.get(arch)
                            or cfg.num_key_value_heads)
    if arch == "gptneox":
        w.add_parallel_residual(cfg.use_parallel_residual)
    if arch == "mpt":
        pass
    elif arch in ("phi2", "starcoder", "gptneox", "bloom", "falcon", "gpt2", "jais2"):
        w.add_layer_norm_eps(cfg.layer_norm_eps if arch in ("phi2", "gptneox", "jais2") else cfg.layer_norm_epsilon)
    elif arch == "starcoder2":
        w.add_layer_norm_eps(cfg.norm_epsilon)
    elif arch == "stablelm":
        w.add_layer_norm_eps(cfg.layer_norm_eps)
    elif arch == "nemotron":
        w.add_layer_norm_eps(cfg.norm_eps)
    elif arch == "olmo":
        # transformers' OLMo LayerNorm has no epsilon setting: 1e-5, as llama.cpp's converter
        # writes.
        w.add_layer_norm_eps(1e-5)
    elif arch in ("command-r", "cohere2"):
        w.add_layer_norm_eps(cfg.layer_norm_eps)
        w.add_logit_scale(cfg.logit_scale)
    else:
        w.add_layer_norm_rms_eps({"exaone": getattr(cfg, "layer_norm_epsilon", None),
                                  "lfm2": getattr(cfg, "norm_eps", None)}.get(arch) or cfg.rms_norm_eps)
    rope = getattr(cfg, "rope_parameters", None) or {}
    rope = rope.get("full_attention", rope)
    if "rope_theta" in rope:
        w.add_rope_freq_base(rope["rope_theta"])
    w.add_vocab_size(cfg.vocab_size)
    if arch == "llama":
        w.add_expert_count(cfg.num_local_experts)
    elif arch in ("qwen3moe", "qwen2moe"):
        w.add_expert_count(cfg.num_experts)
        w.add_expert_feed_forward_length(cfg.moe_intermediate_size)
    elif arch == "olmoe":
        # Its experts are intermediate_size wide: feed_forward_length.
        w.add_expert_count(cfg.num_experts)
    elif arch == "hunyuan-moe":
        w.add_expert_count(cfg.num_experts)
        w.add_expert_used_count(cfg.moe_topk)
        w.add_expert_feed_forward_length(cfg.intermediate_size)
        w.add_expert_shared_feed_forward_length(cfg.intermediate_size * getattr(cfg, "num_shared_expert", 1))
    elif arch == "minimax-m2":
        w.add_expert_count(cfg.num_local_experts)
        w.add_expert_used_count(cfg.num_experts_per_tok)
        w.add_expert_feed_forward_length(cfg.intermediate_size)
        w.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)
        w.add_rope_dimension_count(cfg.rotary_dim)
    elif arch == "ernie4_5-moe":
        w.add_expert_count(cfg.moe_num_experts)
        w.add_expert_used_count(cfg.moe_k)
        w.add_expert_feed_forward_length(cfg.moe_intermediate_size)
        w.add_expert_shared_feed_forward_length(cfg.moe_intermediate_size * cfg.moe_num_shared_experts)
        w.add_leading_dense_block_count(cfg.moe_layer_start_index)
        w.add_interleave_moe_layer_step(cfg.moe_layer_interval)
    if arch in ("llama", "qwen3moe", "qwen2moe", "olmoe"):
        w.add_expert_used_count(cfg.num_experts_per_tok)
    if arch in ("qwen3moe", "gemma", "gemma2", "gemma3", "qwen3", "seed_oss", "glm4", "exaone4", "ernie4_5-moe",
                "mistral3", "minimax-m2", "hunyuan-dense", "hunyuan-moe"):
        w.add_key_length(cfg.head_dim)
        w.add_value_length(cfg.head_dim)
    if arch in ("stablelm", "nemotron", "phi2", "gptneox", "glm4"):
        head = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        w.add_rope_dimension_count(int(head * rope["partial_rotary_factor"]))
    if arch == "qwen2moe":
        w.add_expert_shared_feed_forward_length(cfg.shared_expert_intermediate_size)
    if arch == "gemma2":
        w.add_attn_logit_softcapping(cfg.attn_logit_softcapping)
        w.add_final_logit_softcapping(cfg.final_logit_softcapping)
    if arch in ("gemma2", "gemma3", "cohere2"):
        w.add_sliding_window(cfg.sliding_window)
    if arch == "granite":
        w.add_embedding_scale(cfg.embedding_multiplier)
        w.add_residual_scale(cfg.residual_multiplier)
        w.add_attention_scale(cfg.attention_multiplier)
        w.add_logit_scale(cfg.logits_scaling)
    if arch == "mistral3":
        # YaRN and the queries' scaling with position, under the keys llama.cpp's converter writes
        # (mscale_all_dim as the YaRN log multiplier; mscale is taken to be 1).
        p = cfg.rope_parameters
        w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        w.add_rope_scaling_factor(p["factor"])
        w.add_rope_scaling_orig_ctx_len(p["original_max_position_embeddings"])
        w.add_rope_scaling_yarn_beta_fast(p["beta_fast"])
        w.add_rope_scaling_yarn_beta_slow(p["beta_slow"])
        w.add_rope_scaling_yarn_log_mul(p["mscale_all_dim"])
        w.add_attn_temperature_scale(p["llama_4_scaling_beta"])
    if arch == "gemma3":
        full = cfg.rope_parameters["full_attention"]
        w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        w.add_rope_scaling_factor(full["factor"])


def write_vocabulary_and_tensors(w, cfg, named, kind):
    # A placeholder vocabulary, only so that llama.cpp loads the file.
    tokens = [f"<t{i}>" for i in range(cfg.vocab_size)]
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([0.0] * len(tokens))
    w.add_token_types([1] * len(tokens))
    for name, t in named.items():
        t = np.ascontiguousarray(t, dtype=np.float32)
        # Matrices with rows of a block's multiple quantized, as llama.cpp's converter does; others
        # (LFM2's convolution kernels) and Mamba-2's grouped norm kept in F32.
        if kind is not None and t.ndim >= 2 and t.shape[-1] % 32 == 0 and "norm" not in name:
            w.add_tensor(name, gguf.quants.quantize(t, kind), raw_dtype=kind)
        else:
            w.add_tensor(name, t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    # Every row a multiple of 32 values, so every matrix has a Q8_0 copy.
    small = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                 vocab_size=97, max_position_embeddings=128, num_experts_per_tok=2)
    make("mixtral", "llama", transformers.MixtralConfig(intermediate_size=64, num_local_experts=4, **small),
         transformers.MixtralForCausalLM, "f16")
    # Published Qwen3-MoE configs renormalize the chosen experts' weights; llama.cpp always does.
    make("qwen3-moe", "qwen3moe", transformers.Qwen3MoeConfig(intermediate_size=96, moe_intermediate_size=32,
                                                              num_experts=4, head_dim=16, norm_topk_prob=True,
                                                              **small),
         transformers.Qwen3MoeForCausalLM, "bf16")
    # Qwen2-MoE's defaults: the chosen experts' weights not renormalized, as llama.cpp does too.
    make("qwen2-moe", "qwen2moe", transformers.Qwen2MoeConfig(intermediate_size=96, moe_intermediate_size=32,
                                                              shared_expert_intermediate_size=64,
                                                              num_experts=4, **small),
         transformers.Qwen2MoeForCausalLM, None)
    # llama.cpp scales Gemma 2's scores by 1/sqrt(head_dim): query_pre_attn_scalar is head_dim. A
    # window shorter than the prompt, so that the sliding layer's window binds.
    make("gemma2", "gemma2", transformers.Gemma2Config(intermediate_size=96, head_dim=16, query_pre_attn_scalar=16,
                                                       sliding_window=4, **{k: v for k, v in small.items()
                                                                            if k != "num_experts_per_tok"}),
         transformers.Gemma2ForCausalLM, None)
    dense = {k: v for k, v in small.items() if k != "num_experts_per_tok"}
    # Gemma 3 as llama.cpp runs it: five local layers (window 4) per global one, whose RoPE is
    # scaled linearly (the 4B to 27B models' factor 8), scores by 1/sqrt(head_dim).
    make("gemma3", "gemma3", transformers.Gemma3TextConfig(
        intermediate_size=96, head_dim=16, query_pre_attn_scalar=16, sliding_window=4,
        rope_parameters={"full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1_000_000.0},
                         "sliding_attention": {"rope_type": "default", "rope_theta": 10_000.0}},
        **{**dense, "num_hidden_layers": 6}), transformers.Gemma3ForCausalLM, None)
    make("qwen2", "qwen2", transformers.Qwen2Config(intermediate_size=96, **dense), transformers.Qwen2ForCausalLM,
         None)
    make("qwen3", "qwen3", transformers.Qwen3Config(intermediate_size=96, head_dim=16, **dense),
         transformers.Qwen3ForCausalLM, None)
    make("phi3", "phi3", transformers.Phi3Config(intermediate_size=96, sliding_window=None, pad_token_id=0, **dense),
         transformers.Phi3ForCausalLM, None)
    make("olmo2", "olmo2", transformers.Olmo2Config(intermediate_size=96, **dense), transformers.Olmo2ForCausalLM,
         None)
    # Granite's four multipliers, none of them 1, and its LM head tied.
    make("granite", "granite", transformers.GraniteConfig(
        intermediate_size=96, embedding_multiplier=12.0, residual_multiplier=0.22, attention_multiplier=0.0078125,
        logits_scaling=6.0, tie_word_embeddings=True, pad_token_id=0, **dense), transformers.GraniteForCausalLM, None)
    make("starcoder2", "starcoder2", transformers.Starcoder2Config(intermediate_size=96, pad_token_id=0, **dense),
         transformers.Starcoder2ForCausalLM, None)
    make("command-r", "command-r", transformers.CohereConfig(intermediate_size=96, logit_scale=0.25, pad_token_id=0,
                                                             **dense), transformers.CohereForCausalLM, None)
    make("gemma", "gemma", transformers.GemmaConfig(intermediate_size=96, head_dim=16, **dense),
         transformers.GemmaForCausalLM, None)
    make("stablelm", "stablelm", transformers.StableLmConfig(intermediate_size=96, **dense),
         transformers.StableLmForCausalLM, None)
    # OLMo 1's published configs have as many K/V heads as query heads.
    make("olmo", "olmo", transformers.OlmoConfig(intermediate_size=96, pad_token_id=0,
                                                 **{**dense, "num_key_value_heads": 4}),
         transformers.OlmoForCausalLM, None)
    make("arcee", "arcee", transformers.ArceeConfig(intermediate_size=96, pad_token_id=0, **dense),
         transformers.ArceeForCausalLM, None)
    make("ernie4_5", "ernie4_5", transformers.Ernie4_5Config(intermediate_size=96, head_dim=16, pad_token_id=0,
                                                              **dense), transformers.Ernie4_5ForCausalLM, None)
    make("nemotron", "nemotron", transformers.NemotronConfig(intermediate_size=96, pad_token_id=0, **dense),
         transformers.NemotronForCausalLM, None)
    # Q and K norms over all heads (as many K/V heads as query heads, as published and as llama.cpp
    # requires); the chosen experts' weights not renormalized, as llama.cpp does.
    make("olmoe", "olmoe", transformers.OlmoeConfig(intermediate_size=32, num_experts=4, pad_token_id=0,
                                                   **{**small, "num_key_value_heads": 4}),
         transformers.OlmoeForCausalLM, None)
    make("seed_oss", "seed_oss", transformers.SeedOssConfig(intermediate_size=96, head_dim=16, pad_token_id=0,
                                                             **dense), transformers.SeedOssForCausalLM, None)
    make("phi2", "phi2", transformers.PhiConfig(intermediate_size=96, **{**dense, "num_key_value_heads": 4}),
         transformers.PhiForCausalLM, None)
    make("starcoder", "starcoder", transformers.GPTBigCodeConfig(n_embd=64, n_layer=2, n_head=4, n_positions=128,
                                                                 vocab_size=97, n_inner=96),
         transformers.GPTBigCodeForCausalLM, None)
    make("gptneox", "gptneox", transformers.GPTNeoXConfig(intermediate_size=96, **{**dense, "num_key_value_heads": 4}),
         transformers.GPTNeoXForCausalLM, None)
    make("bloom", "bloom", transformers.BloomConfig(hidden_size=64, n_layer=2, n_head=4, vocab_size=97),
         transformers.BloomForCausalLM, None)
    # Falcon 7B's multi-query attention, and 40B's new decoder architecture (two norms, K/V groups).
    make("falcon", "falcon", transformers.FalconConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                                       vocab_size=97, max_position_embeddings=128),
         transformers.FalconForCausalLM, None)
    make("falcon-40b", "falcon", transformers.FalconConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                                           vocab_size=97, max_position_embeddings=128,
                                                           new_decoder_architecture=True, num_kv_heads=2),
         transformers.FalconForCausalLM, None)
    make("mpt", "mpt", transformers.MptConfig(d_model=64, n_layers=2, n_heads=4, vocab_size=97, max_seq_len=128),
         transformers.MptForCausalLM, None)
    # Three sliding layers (window 4, RoPE) per global one (no RoPE), the LM head tied.
    make("cohere2", "cohere2", transformers.Cohere2Config(intermediate_size=96, sliding_window=4, logit_scale=0.25,
                                                          pad_token_id=0, **{**dense, "num_hidden_layers": 4}),
         transformers.Cohere2ForCausalLM, None)
    # EXAONE 4.0 1.2B's form: every layer global, with RoPE (llama.cpp slides only the 64-layer
    # 32B's).
    make("exaone4", "exaone4", transformers.Exaone4Config(
        intermediate_size=96, head_dim=16, sliding_window=None, sliding_window_pattern=1,
        layer_types=["full_attention"] * 2, pad_token_id=0, **dense), transformers.Exaone4ForCausalLM, None)
    make("exaone", "exaone", transformers.ExaoneConfig(hidden_size=64, num_layers=2, num_attention_heads=4,
                                                       num_key_value_heads=2, intermediate_size=96, vocab_size=97,
                                                       max_position_embeddings=128, pad_token_id=0),
         transformers.AutoModelForCausalLM.from_config, None)
    make("hunyuan-dense", "hunyuan-dense", transformers.HunYuanDenseV1Config(
        intermediate_size=96, head_dim=16, pad_token_id=0, **dense), transformers.AutoModelForCausalLM.from_config, None)
    make("gpt2", "gpt2", transformers.GPT2Config(n_embd=64, n_layer=2, n_head=4, n_positions=128, vocab_size=97),
         transformers.GPT2LMHeadModel, None)
    # Softmax top-k over the experts, renormalized, beside a shared MLP of their width.
    make("hunyuan-moe", "hunyuan-moe", transformers.HunYuanMoEV1Config(
        intermediate_size=32, head_dim=16, num_experts=4, moe_topk=2, pad_token_id=0, **dense),
        transformers.AutoModelForCausalLM.from_config, None)
    # LFM2: a convolution, an attention layer, a convolution; its MLP width adjusted as its class
    # adjusts it (two thirds, rounded up to a multiple of 32), which the file states.
    make("lfm2", "lfm2", transformers.Lfm2Config(
        intermediate_size=96, block_multiple_of=32, layer_types=["conv", "full_attention", "conv"], pad_token_id=0,
        **{**dense, "num_hidden_layers": 3}), transformers.AutoModelForCausalLM.from_config, None)
    make("mamba", "mamba", transformers.MambaConfig(
        hidden_size=64, num_hidden_layers=2, state_size=16, expand=2, conv_kernel=4, vocab_size=97, pad_token_id=0),
        transformers.AutoModelForCausalLM.from_config, None)
    # Mamba-2: two groups of B and C, eight heads; A_log, D and the norm at random so that how each
    # is stored matters.
    make("mamba2", "mamba2", transformers.Mamba2Config(
        hidden_size=64, num_hidden_layers=2, state_size=16, expand=2, conv_kernel=4, n_groups=2, head_dim=16,
        num_heads=8, vocab_size=97, pad_token_id=0), transformers.AutoModelForCausalLM.from_config, None)
    make("jais2", "jais2", transformers.Jais2Config(intermediate_size=96, pad_token_id=0, **dense),
         transformers.AutoModelForCausalLM.from_config, None)
    # MiniMax-M2: half of each head rotated (rotary_dim), experts chosen by a sigmoid.
    make("minimax-m2", "minimax-m2", transformers.MiniMaxM2Config(
        intermediate_size=32, head_dim=16, num_local_experts=4, num_experts_per_tok=2, rotary_dim=8, pad_token_id=0,
        **dense), transformers.AutoModelForCausalLM.from_config, None)
    # Ministral 3: YaRN, and queries scaled up with position past each 4 of the original context
    # (shortened so that the 12-token prompt crosses it).
    make("mistral3", "mistral3", transformers.Ministral3Config(
        intermediate_size=96, head_dim=16, pad_token_id=0, rope_parameters={
            "rope_type": "yarn", "rope_theta": 1_000_000.0, "factor": 16.0, "original_max_position_embeddings": 4,
            "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0, "llama_4_scaling_beta": 0.1},
        **dense), transformers.Ministral3ForCausalLM, None)
    # A dense first layer, then experts with a shared one; the chosen experts' weights
    # renormalized, as both do.
    make("ernie4_5-moe", "ernie4_5-moe", transformers.Ernie4_5_MoeConfig(
        intermediate_size=96, head_dim=16, pad_token_id=0, moe_num_experts=4, moe_k=2, moe_intermediate_size=32,
        moe_num_shared_experts=1, moe_layer_start_index=1, **{**dense, "num_hidden_layers": 3}),
        transformers.Ernie4_5_MoeForCausalLM, None)
    # Half of each head rotated, in interleaved pairs.
    # Gemma 4: local layers with heads of 16, global ones of 32 whose keys are their values (on one
    # K/V head), the last two layers reusing earlier keys and values with double-wide MLPs,
    # per-layer embeddings of 16; norm weights and layer scalars drawn at random.
    make("gemma4", "gemma4", transformers.Gemma4TextConfig(
        intermediate_size=96, head_dim=16, global_head_dim=32, sliding_window=4, hidden_size_per_layer_input=16,
        vocab_size_per_layer_input=97, num_kv_shared_layers=2, use_double_wide_mlp=True, attention_k_eq_v=True,
        num_global_key_value_heads=1,
        layer_types=["sliding_attention", "full_attention", "sliding_attention", "full_attention",
                     "sliding_attention", "full_attention"],
        **{**dense, "num_hidden_layers": 6}), transformers.Gemma4ForCausalLM, None)
    make("glm4", "glm4", transformers.Glm4Config(intermediate_size=96, head_dim=16, pad_token_id=0, **dense),
         transformers.Glm4ForCausalLM, None)
    # Four layers, so that the fourth goes without RoPE.
    make("smollm3", "smollm3", transformers.SmolLM3Config(intermediate_size=96, pad_token_id=0, **{**dense, "num_hidden_layers": 4}),
         transformers.SmolLM3ForCausalLM, None)


def make(name, arch, cfg, cls, half):
    if sys.argv[1:] and name not in sys.argv[1:]:
        return
    torch.manual_seed(0)
    model = cls(cfg).eval()
    with torch.no_grad():
        if arch in ("gemma", "gemma2", "gemma3", "qwen3", "olmo2", "starcoder2", "command-r", "stablelm",
                    "arcee", "ernie4_5", "nemotron", "olmoe", "seed_oss", "phi2", "starcoder", "gptneox",
                    "bloom", "falcon", "mpt", "cohere2", "glm4", "exaone4", "ernie4_5-moe", "mistral3",
                    "exaone", "minimax-m2", "hunyuan-dense", "gpt2", "jais2", "hunyuan-moe", "lfm2", "mamba2",
                    "mamba", "gemma4"):
            # Norm weights (and biases) at random (Gemma's and Nemotron's around 0, since their
            # norms scale by 1 + w; the others' around 1), so that how each is stored is tested.
            for n, p in model.named_parameters():
                if "norm" in n or ".ln_" in n:
                    p.normal_(0 if arch in PLUS_ONE or n.endswith("bias") else 1, 0.3)
        # A correction bias (zero at init) that changes which experts are chosen; Mamba's A, D and
        # dt bias, regular at init, drawn so that how each is stored is tested.
        for n, t in [*model.named_parameters(), *model.named_buffers()]:
            if "correction_bias" in n or n.endswith(("mixer.D", "mixer.dt_bias")):
                t.normal_(0, 0.3)
            if n.endswith("mixer.A_log"):
                t.uniform_(-1, 1)
            if n.endswith("layer_scalar"):
                t.uniform_(0.5, 1.5)
        logits = model(torch.tensor([IDS])).logits[0].tolist()
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp)
        sd = load_file(str(Path(tmp) / "model.safetensors"))
    named = tensors(sd, cfg, arch)
    out = OUT / name
    out.mkdir(parents=True, exist_ok=True)
    write(out / "model-f32.gguf", cfg, named, None, arch)
    write(out / "model-q8_0.gguf", cfg, named, gguf.GGMLQuantizationType.Q8_0, arch)
    if half:
        write(out / f"model-{half}.gguf", cfg, named, gguf.GGMLQuantizationType[half.upper()], arch)
    (out / "expected.json").write_text(json.dumps({
        "transformers": transformers.__version__, "gguf": gguf.__version__ if hasattr(gguf, "__version__") else "",
        "llama_cpp": llama_cpp_apart(out / "model-f32.gguf", logits), "ids": IDS, "logits": logits}) + "\n")
    print(f"wrote {out}")


def llama_cpp_apart(path, logits):
    """The largest difference between llama.cpp's logits on `path` (f32 K/V cache) and
    `logits`, or None without llama-cpp-python."""
    try:
        import llama_cpp
    except ImportError:
        print("llama-cpp-python is not installed: the files are not checked against llama.cpp")
        return None
    llm = llama_cpp.Llama(model_path=str(path), n_ctx=len(IDS), logits_all=True, verbose=False,
                          type_k=llama_cpp.GGML_TYPE_F32, type_v=llama_cpp.GGML_TYPE_F32)
    llm.eval(IDS)
    apart = float(np.abs(np.array(llm.scores[:len(IDS)]) - np.array(logits)).max())
    print(f"{path}: llama.cpp {apart:.2e} from transformers (largest logit {np.abs(logits).max():.2f})")
    return apart


if __name__ == "__main__":
    main()
