#!/usr/bin/env python3
"""Beyond the suite: random toy configs of the hybrid families, of sizes and keys no fixture holds,
saved by transformers on random weights and checked with `anatomy verify` (every tensor's name
and shape) and `anatomy run --logits` (the logits of a prompt, within --tol of transformers';
where they are not, both are compared with transformers' float64 run, and anatomy within --tol
of that passes, with both distances printed).

Usage: python3 scripts/check_unseen.py [--anatomy PATH] [--n N] [--seed S] [--tol T] [TYPE ...]
(needs: pip install torch transformers; TYPE among those in MAKERS, all by default)
Exits 1 when a config fails `verify` or exceeds the tolerance; prints each config that does.
"""
import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
import transformers
from transformers import AutoModelForCausalLM, CONFIG_MAPPING

from make_fixtures import unseen_blt, unseen_ergo, unseen_kolibri1_1, unseen_qwen4_exp
from make_toy_fixtures import CATALOG, blt_threshold, build, mutate, randomize, save_model, shrink

IDS = [5, 17, 42, 3, 90, 11, 7, 8, 61, 20]


def falcon_h1(rng):
    heads, n = rng.choice([2, 4]), rng.choice([4, 8])
    mult = lambda: rng.uniform(0.5, 2.0)
    return dict(model_type="falcon_h1", hidden_size=heads * rng.choice([8, 16]), intermediate_size=rng.choice([40, 72]),
                num_hidden_layers=rng.randint(1, 3), num_attention_heads=heads, num_key_value_heads=rng.choice([1, heads]),
                vocab_size=97, mamba_d_ssm=n * rng.choice([4, 8]), mamba_n_heads=n, mamba_d_state=rng.choice([4, 8]),
                mamba_n_groups=rng.choice([1, 2]), mamba_d_conv=rng.choice([2, 4]), mamba_chunk_size=4,
                mamba_rms_norm=rng.random() < 0.5, mamba_norm_before_gate=rng.random() < 0.5,
                embedding_multiplier=mult(), lm_head_multiplier=mult(), key_multiplier=mult(),
                attention_in_multiplier=mult(), attention_out_multiplier=mult(), ssm_in_multiplier=mult(),
                ssm_out_multiplier=mult(), ssm_multipliers=[mult() for _ in range(5)],
                mlp_multipliers=[mult() for _ in range(2)], tie_word_embeddings=rng.random() < 0.5, pad_token_id=0)


def olmo_hybrid(rng):
    heads = rng.choice([2, 4])
    raw = dict(model_type="olmo_hybrid", hidden_size=heads * 8, intermediate_size=48, num_hidden_layers=rng.randint(2, 5),
               num_attention_heads=heads, num_key_value_heads=rng.choice([1, heads]), vocab_size=97,
               linear_conv_kernel_dim=rng.choice([2, 3, 4]), linear_allow_neg_eigval=rng.random() < 0.5,
               tie_word_embeddings=rng.random() < 0.5, pad_token_id=0, eos_token_id=1)
    if rng.random() < 0.5:
        kh = rng.choice([1, 2])
        raw.update(linear_num_key_heads=kh, linear_num_value_heads=kh, linear_key_head_dim=rng.choice([4, 8]))
    return raw


def bailing_hybrid(rng):
    heads, layers = rng.choice([2, 4]), rng.randint(2, 4)
    # transformers 5.25's per-layer clips after the activation (0: none), or none at all.
    clips = lambda: [rng.choice([0, 0.01, 0.05]) for _ in range(layers)] if rng.random() < 0.5 else None
    return dict(model_type="bailing_hybrid", expert_swiglu_limit_list=clips(),
                share_expert_swiglu_limit_list=clips(), hidden_size=32, intermediate_size=48, moe_intermediate_size=16,
                num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads, vocab_size=97,
                head_dim=rng.choice([4, 8]), kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=4,
                v_head_dim=rng.choice([4, 8]), num_experts=4, num_experts_per_token=2, num_expert_group=rng.choice([1, 2]),
                topk_group=1, first_k_dense_replace=rng.randint(0, 1), layer_group_size=rng.choice([2, layers]),
                kda_safe_gate=rng.random() < 0.5, kda_lower_bound=rng.uniform(-8, -1),
                short_conv_kernel_size=rng.choice([2, 4]), rope_theta=10000.0, q_lora_rank=rng.choice([None, 12]),
                tie_word_embeddings=rng.random() < 0.5, pad_token_id=0, eos_token_id=1)


def lara_mini(rng):
    heads, kh = rng.choice([2, 4]), rng.choice([1, 2])
    return dict(model_type="lara_mini", hidden_size=32, num_hidden_layers=rng.randint(2, 6), num_attention_heads=heads,
                num_key_value_heads=rng.choice([1, 2]) if heads == 4 else 1, vocab_size=97, head_dim=8,
                linear_num_key_heads=kh, linear_num_value_heads=kh * rng.choice([1, 2]), linear_key_head_dim=8,
                linear_value_head_dim=rng.choice([4, 8]), num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                shared_expert_intermediate_size=rng.choice([8, 24]), sliding_window=rng.choice([3, 6]),
                norm_topk_prob=rng.random() < 0.5, tie_word_embeddings=rng.random() < 0.5, pad_token_id=0, eos_token_id=1)


def kimi_linear(rng):
    layers = rng.randint(2, 4)
    full = sorted(rng.sample(range(1, layers + 1), rng.randint(1, layers - 1)))
    return dict(model_type="kimi_linear", hidden_size=32, intermediate_size=48, moe_intermediate_size=16,
                num_hidden_layers=layers, num_attention_heads=2, num_key_value_heads=2, vocab_size=97, kv_lora_rank=16,
                qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=8, num_experts=4, num_experts_per_token=2,
                rms_norm_eps=rng.choice([1e-5, 1e-3]), tie_word_embeddings=rng.random() < 0.5, pad_token_id=0,
                linear_attn_config={"full_attn_layers": full,
                                    "kda_layers": [i for i in range(1, layers + 1) if i not in full],
                                    "head_dim": rng.choice([4, 8]), "num_heads": rng.choice([1, 2, 3]),
                                    "short_conv_kernel_size": rng.choice([2, 4])})


def minimax(rng):
    layers, heads = rng.randint(1, 4), rng.choice([2, 4])
    raw = dict(model_type="minimax", hidden_size=32, intermediate_size=rng.choice([16, 40]), num_hidden_layers=layers,
               num_attention_heads=heads, num_key_value_heads=rng.choice([1, heads]), head_dim=rng.choice([4, 8]),
               num_local_experts=4, num_experts_per_tok=rng.choice([1, 2]), block_size=rng.choice([2, 3, 7, 16]),
               hidden_act=rng.choice(["silu", "gelu"]), rms_norm_eps=rng.choice([1e-6, 1e-3]),
               tie_word_embeddings=rng.random() < 0.5, vocab_size=97, pad_token_id=0)
    if rng.random() < 0.5:
        raw["layer_types"] = [rng.choice(["full_attention", "linear_attention"]) for _ in range(layers)]
    for key in ("full_attn", "linear_attn", "mlp"):
        if rng.random() < 0.5:
            raw[f"{key}_alpha_factor"], raw[f"{key}_beta_factor"] = rng.uniform(0.3, 3), rng.uniform(0.3, 3)
    return raw


def recurrent_gemma(rng):
    heads = rng.choice([1, 2, 4])
    hidden = heads * rng.choice([4, 8])
    raw = dict(model_type="recurrent_gemma", hidden_size=hidden, intermediate_size=rng.choice([16, 40]),
               num_hidden_layers=rng.randint(3, 5), num_attention_heads=heads, num_key_value_heads=rng.choice([1, heads]),
               attention_window_size=rng.choice([2, 5, 64]), conv1d_width=rng.choice([2, 4]),
               logits_soft_cap=rng.uniform(2, 30), attention_bias=rng.random() < 0.5,
               tie_word_embeddings=rng.random() < 0.5, vocab_size=97, pad_token_id=0)
    if rng.random() < 0.5:
        raw["lru_width"] = heads * rng.choice([2, 6])
    if rng.random() < 0.5:
        # At least one attending layer: transformers runs the model only with one.
        raw["block_types"] = [rng.choice(["recurrent", "attention"]) for _ in range(rng.randint(0, 2))] + ["attention"]
        raw["num_hidden_layers"] = max(raw["num_hidden_layers"], len(raw["block_types"]))
    return raw


def rwkv(rng):
    hidden = rng.choice([16, 24, 32])
    raw = dict(model_type="rwkv", hidden_size=hidden, num_hidden_layers=rng.randint(2, 7), vocab_size=97,
               rescale_every=rng.choice([0, 1, 2, 3, 6]), intermediate_size=rng.choice([None, 40, 72]),
               tie_word_embeddings=rng.random() < 0.5, pad_token_id=0)
    if rng.random() < 0.3:
        # Its cache is sized by hidden_size: a narrower time mixing runs without one.
        raw.update(attention_hidden_size=hidden // 2, use_cache=False)
    return raw


def hy_v4(rng):
    layers, heads = rng.randint(1, 4), rng.choice([2, 4])
    return dict(model_type="hy_v4", hidden_size=rng.choice([32, 48]), intermediate_size=rng.choice([40, 64]),
                moe_intermediate_size=rng.choice([8, 16]), num_hidden_layers=layers, num_attention_heads=heads,
                vocab_size=97, n_routed_experts=rng.choice([4, 8]), num_experts_per_tok=2,
                n_shared_experts=rng.choice([1, 2]), q_lora_rank=rng.choice([12, 24]), kv_lora_rank=rng.choice([8, 16]),
                qk_nope_head_dim=rng.choice([4, 8]), qk_rope_head_dim=rng.choice([4, 8]), v_head_dim=rng.choice([4, 8]),
                index_n_heads=rng.choice([8, 16]), index_head_dim=rng.choice([8, 12]), index_topk=rng.choice([3, 6]),
                hc_mult=rng.choice([1, 2, 3, 4]), hc_magnitude=rng.uniform(1.0, 3.0), swiglu_limit=rng.choice([0.3, 7.0]),
                routed_scaling_factor=rng.uniform(1.0, 3.0), tie_word_embeddings=rng.random() < 0.3,
                pad_token_id=0, bos_token_id=1, eos_token_id=2)


def deepseek_v4(rng):
    layers, heads = rng.randint(1, 5), rng.choice([2, 4, 8])
    kinds = ["sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention"]
    raw = dict(model_type="deepseek_v4", hidden_size=rng.choice([32, 48]), moe_intermediate_size=rng.choice([8, 16]),
               num_hidden_layers=layers, num_attention_heads=heads, head_dim=rng.choice([8, 16, 24]), vocab_size=97,
               n_routed_experts=rng.choice([4, 8]), num_experts_per_tok=rng.choice([1, 2]), q_lora_rank=rng.choice([12, 24]),
               o_groups=rng.choice([g for g in (1, 2, 4) if heads % g == 0]), o_lora_rank=rng.choice([4, 8]),
               index_n_heads=rng.choice([8, 16]), index_head_dim=rng.choice([8, 12]), index_topk=rng.choice([1, 2, 3]),
               hc_mult=rng.choice([1, 2, 3, 4]), hc_sinkhorn_iters=rng.choice([1, 2, 20]), hc_eps=rng.choice([1e-6, 1e-3]),
               swiglu_limit=rng.choice([0.3, 7.0]), sliding_window=rng.choice([2, 3, 5, 16]),
               routed_scaling_factor=rng.uniform(1.0, 3.0), partial_rotary_factor=rng.choice([0.25, 0.5, 1.0]),
               rope_theta=rng.choice([10000.0, 500.0]), compress_rope_theta=rng.choice([160000.0, 1000.0]),
               compress_rates={"compressed_sparse_attention": rng.choice([2, 3]),
                               "heavily_compressed_attention": rng.choice([3, 4, 5])},
               layer_types=[rng.choice(kinds) for _ in range(layers)], rms_norm_eps=rng.choice([1e-6, 1e-5]),
               scoring_func=rng.choice(["sqrtsoftplus", "sigmoid"]),
               tie_word_embeddings=False, pad_token_id=0, bos_token_id=1, eos_token_id=2)
    # The indexer rotates the last rotated-dims of its heads: they must hold them.
    raw["index_head_dim"] = max(raw["index_head_dim"], int(raw["head_dim"] * raw["partial_rotary_factor"]))
    if rng.random() < 0.5:
        raw["mlp_layer_types"] = [rng.choice(["hash_moe", "moe"]) for _ in range(layers)]
    else:
        raw["num_hash_layers"] = rng.choice([0, 1, 3])
    if rng.random() < 0.5:
        raw["rope_parameters"] = {"rope_type": "yarn", "factor": rng.choice([2.0, 16.0]),
                                  "original_max_position_embeddings": rng.choice([8, 64]), "beta_fast": 32, "beta_slow": 1}
    return raw


def gemma3n_text(rng):
    layers = rng.randint(2, 6)
    types = [rng.choice(["sliding_attention", "full_attention"]) for _ in range(layers)]
    shared = rng.choice([0, 1]) if len(set(types[:-1])) == len(set(types)) else 0
    return dict(model_type="gemma3n_text", hidden_size=rng.choice([32, 64]), num_hidden_layers=layers,
                num_attention_heads=rng.choice([2, 4]), num_key_value_heads=rng.choice([1, 2]), head_dim=rng.choice([8, 16]),
                intermediate_size=[rng.choice([128, 256]) for _ in range(layers)], vocab_size=97,
                vocab_size_per_layer_input=rng.choice([50, 97]), hidden_size_per_layer_input=rng.choice([4, 8]),
                altup_num_inputs=rng.choice([1, 2, 3, 4]), altup_active_idx=0, altup_correct_scale=rng.random() < 0.7,
                laurel_rank=rng.choice([2, 8]), num_kv_shared_layers=shared, sliding_window=rng.choice([3, 8]),
                activation_sparsity_pattern=[rng.choice([0.0, 0.6, 0.9]) for _ in range(layers)], layer_types=types,
                final_logit_softcapping=rng.choice([10.0, 30.0]), tie_word_embeddings=rng.random() < 0.7,
                pad_token_id=0, bos_token_id=1, eos_token_id=2)


def axk2(rng):
    layers = rng.randint(1, 4)
    return dict(model_type="axk2", hidden_size=rng.choice([32, 48]), intermediate_size=rng.choice([40, 64]),
                moe_intermediate_size=rng.choice([8, 16]), num_hidden_layers=layers, num_attention_heads=4,
                num_key_value_heads=4, vocab_size=97, n_routed_experts=rng.choice([4, 8]), num_experts_per_tok=2,
                q_lora_rank=rng.choice([12, 24]), kv_lora_rank=rng.choice([8, 16]), qk_nope_head_dim=rng.choice([4, 8]),
                qk_rope_head_dim=rng.choice([4, 8]), v_head_dim=rng.choice([4, 8]), index_n_heads=rng.choice([8, 16]),
                index_head_dim=rng.choice([8, 12]), index_topk=rng.choice([3, 6]), gated_norm_rank=rng.choice([2, 8]),
                mlp_layer_types=[rng.choice(["dense", "sparse"]) for _ in range(layers)],
                tie_word_embeddings=rng.random() < 0.3, pad_token_id=0, bos_token_id=1, eos_token_id=2)


def param2moe(rng):
    # GLM-4.5's model under Sarvam's key names: saved in Sarvam's fused [q|k|v] layout.
    layers, heads = rng.randint(2, 4), rng.choice([2, 4])
    return dict(model_type="param2moe", hidden_size=32, intermediate_size=rng.choice([40, 48]),
                moe_intermediate_size=rng.choice([8, 16]), num_hidden_layers=layers, num_attention_heads=heads,
                num_key_value_heads=rng.choice([1, 2]), head_dim=rng.choice([8, 16]), vocab_size=97,
                num_experts=rng.choice([4, 8]), num_shared_experts=rng.choice([1, 2]),
                num_experts_per_tok=rng.choice([1, 2]), first_k_dense_replace=rng.randint(0, layers - 1),
                use_qkv_bias=rng.random() < 0.5, use_qk_norm=rng.random() < 0.7,
                routed_scaling_factor=rng.choice([1.0, 2.5]), norm_topk_prob=rng.random() < 0.7,
                tie_word_embeddings=rng.random() < 0.5, pad_token_id=0)


def minicpm5_moe(rng):
    # The output gate in the query projection, V3's router, dense layers by mlp_layer_types (or
    # first_k_dense_replace).
    layers, heads = rng.randint(2, 4), rng.choice([2, 4])
    raw = dict(model_type="minicpm5_moe", hidden_size=32, intermediate_size=rng.choice([40, 48]),
               moe_intermediate_size=rng.choice([8, 16]), num_hidden_layers=layers, num_attention_heads=heads,
               num_key_value_heads=rng.choice([1, 2]), head_dim=rng.choice([8, 16, None]), vocab_size=97,
               n_routed_experts=rng.choice([4, 8]), n_shared_experts=rng.choice([1, 2]),
               num_experts_per_tok=rng.choice([1, 2]), routed_scaling_factor=rng.choice([1.0, 3.66]),
               norm_topk_prob=rng.random() < 0.7, attention_bias=rng.random() < 0.3,
               tie_word_embeddings=rng.random() < 0.3, pad_token_id=0)
    if rng.random() < 0.5:
        raw["mlp_layer_types"] = [rng.choice(["dense", "sparse"]) for _ in range(layers)]
    else:
        raw["first_k_dense_replace"] = rng.randint(0, layers)
    return raw


def ergo(rng):
    # Gated residual adds, full layers by period or layer_types (their logits scaled or not),
    # dense layers by count or mlp_layer_types, either RoPE form, either name of the window.
    return unseen_ergo(rng)


def kolibri1_1(rng):
    # Indexed and sliding layers in any order, pool layers and K/V sources as the class allows,
    # an indexer whose budgets a 10-token prompt passes.
    return unseen_kolibri1_1(rng)


def beam(rng):
    layers = rng.randint(2, 6)
    heads, n_group = rng.choice([4, 8]), rng.choice([1, 2, 4])
    raw = dict(model_type="beam", hidden_size=rng.choice([32, 48]), intermediate_size=rng.choice([40, 64]),
               moe_intermediate_size=rng.choice([8, 16]), num_hidden_layers=layers, num_attention_heads=heads,
               num_key_value_heads=rng.choice([1, 2, 4]), head_dim=rng.choice([8, 12]), vocab_size=97,
               sliding_window=rng.choice([2, 3, 5]), num_experts=n_group * rng.choice([2, 4]), n_group=n_group,
               topk_group=rng.randint(1, n_group), num_experts_per_tok=rng.choice([1, 2]),
               norm_topk_prob=rng.random() < 0.7, routed_scaling_factor=rng.choice([1.0, 2.5]),
               attention_bias=rng.random() < 0.3, final_logit_softcapping=rng.choice([None, 5.0]),
               mlp_layer_types=[rng.choice(["dense", "sparse"]) for _ in range(layers)],
               layer_types=[rng.choice(["sliding_attention", "full_attention"]) for _ in range(layers)],
               tie_word_embeddings=rng.random() < 0.3, pad_token_id=0)
    if rng.random() < 0.5:
        raw["rope_parameters"] = {
            "sliding_attention": {"rope_type": "default", "rope_theta": rng.choice([100.0, 10000.0])},
            "full_attention": None if rng.random() < 0.6 else {"rope_type": "default", "rope_theta": 1000.0},
        }
    return raw


def mllama(rng):
    layers, heads = rng.randint(2, 6), rng.choice([4, 8])
    text = dict(hidden_size=heads * rng.choice([4, 8]), intermediate_size=rng.choice([40, 64]),
                num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=rng.choice([1, 2, 4]),
                vocab_size=97, cross_attention_layers=sorted(rng.sample(range(layers), rng.randint(1, layers - 1))),
                pad_token_id=0, bos_token_id=1, eos_token_id=2, tie_word_embeddings=rng.random() < 0.3)
    if rng.random() < 0.5:
        text["rope_parameters"] = {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
                                   "high_freq_factor": 4.0, "original_max_position_embeddings": 4}
    vision = dict(hidden_size=16, intermediate_size=16, num_hidden_layers=1, num_global_layers=1, attention_heads=2,
                  image_size=28, patch_size=14, max_num_tiles=1, supported_aspect_ratios=[[1, 1]],
                  intermediate_layers_indices=[0], vision_output_dim=32)
    return dict(model_type="mllama", architectures=["MllamaForConditionalGeneration"], text_config=text,
                vision_config=vision)


def git(rng):
    heads = rng.choice([2, 4])
    raw = dict(model_type="git", hidden_size=heads * rng.choice([8, 12]), num_hidden_layers=rng.randint(1, 4),
               num_attention_heads=heads, intermediate_size=rng.choice([40, 64]), vocab_size=97,
               hidden_act=rng.choice(["gelu", "gelu_new", "relu"]), layer_norm_eps=rng.choice([1e-12, 1e-5]),
               max_position_embeddings=rng.choice([16, 64]), tie_word_embeddings=rng.random() < 0.3,
               pad_token_id=0, bos_token_id=1, eos_token_id=2,
               vision_config=dict(hidden_size=16, intermediate_size=16, num_hidden_layers=1, num_attention_heads=2,
                                  image_size=28, patch_size=14))
    if rng.random() < 0.5:
        raw["num_image_with_embedding"] = rng.randint(1, 3)
    return raw


def emu3(rng):
    heads = rng.choice([2, 4])
    text = dict(model_type="emu3_text_model", hidden_size=heads * rng.choice([8, 16]), intermediate_size=rng.choice([40, 64]),
                num_hidden_layers=rng.randint(1, 3), num_attention_heads=heads, num_key_value_heads=rng.choice([1, heads]),
                vocab_size=97, pad_token_id=0, bos_token_id=1, eos_token_id=2, attention_bias=rng.random() < 0.3,
                rope_parameters={"rope_type": "default", "rope_theta": rng.choice([10000.0, 1e6])})
    # The tokenizer's map of image codes holds no weights; the class cannot build without one.
    vq = dict(codebook_size=16, embed_dim=4, latent_channels=4, base_channels=32, channel_multiplier=[1],
              num_res_blocks=1, attn_resolutions=[0], temporal_downsample_factor=2, hidden_size=16, num_attention_heads=2)
    return dict(model_type="emu3", architectures=["Emu3ForConditionalGeneration"], vocabulary_map={},
                tie_word_embeddings=rng.random() < 0.3, text_config=text, vq_config=vq)


def hrm_text(rng):
    heads = rng.choice([2, 4])
    raw = dict(model_type="hrm_text", hidden_size=heads * rng.choice([8, 16]), intermediate_size=rng.choice([40, 64]),
               num_hidden_layers=rng.randint(1, 3), num_attention_heads=heads, head_dim=rng.choice([8, 16]),
               vocab_size=97, H_cycles=rng.randint(1, 3), L_cycles=rng.randint(1, 3),
               rms_norm_eps=rng.choice([1e-6, 1e-5]), tie_word_embeddings=rng.random() < 0.3,
               rope_parameters={"rope_type": "default", "rope_theta": rng.choice([10000.0, 1e6])},
               pad_token_id=0, bos_token_id=1, eos_token_id=2)
    if rng.random() < 0.5:
        raw["embedding_scale"] = rng.uniform(0.5, 8.0)
    else:
        raw["initializer_range"] = rng.choice([0.02, 0.1])  # the scale is its inverse
    return raw


def dots3_note(rng):
    layers, heads = rng.randint(2, 6), rng.choice([2, 4])
    nope, rope = rng.choice([4, 8]), rng.choice([4, 8])
    raw = dict(model_type="dots3_note_text", hidden_size=rng.choice([32, 48]), intermediate_size=rng.choice([40, 64]),
               moe_intermediate_size=rng.choice([8, 16]), shared_experts_intermediate_size=rng.choice([8, 24]),
               num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads, vocab_size=97,
               n_routed_experts=rng.choice([4, 8]), n_shared_experts=rng.choice([1, 2]), num_experts_per_tok=2,
               first_k_dense_replace=rng.choice([0, 1, 2]), q_lora_rank=rng.choice([12, 24]),
               kv_lora_rank=rng.choice([8, 16]), qk_nope_head_dim=nope, qk_rope_head_dim=rope,
               head_dim=rope * rng.choice([2, 4]), v_head_dim=rng.choice([4, 8]),
               # Enough indexer heads that no two keys tie at the cut (ReLU zeros tie with few):
               # a tie's order is torch.topk's to choose, not the model's.
               index_n_heads=rng.choice([8, 16]), index_head_dim=rng.choice([8, 12]), index_topk=rng.choice([2, 4]), sliding_window=rng.choice([2, 3, 5]),
               rms_norm_eps=rng.choice([1e-6, 1e-5]), tie_word_embeddings=rng.random() < 0.3,
               pad_token_id=0, bos_token_id=1, eos_token_id=2)
    swa_nope = rng.choice([4, 8])
    swa = dict(num_attention_heads=rng.choice([2, 4]), q_lora_rank=rng.choice([8, 20]), kv_lora_rank=rng.choice([8, 12]),
               qk_nope_head_dim=swa_nope, head_dim=swa_nope + rng.choice([4, 8]), v_head_dim=rng.choice([4, 12]))
    swa["num_key_value_heads"] = swa["num_attention_heads"]
    if rng.random() < 0.5:
        raw.update({f"swa_{k}": v for k, v in swa.items()})
        if rng.random() < 0.3:
            raw["use_sliding_window"] = False
    else:
        kinds = [rng.choice(["indexed_attention", "full_attention", "sliding_attention"]) for _ in range(layers)]
        raw["layer_types"] = kinds
        raw["per_layer_config"] = {str(i): dict(swa, qk_rope_head_dim=swa["head_dim"] - swa_nope)
                                   for i, k in enumerate(kinds) if k == "sliding_attention"}
    if rng.random() < 0.3:
        raw["use_dsa"] = False
    r = rng.random()
    if r < 0.3:
        raw["rope_theta"], raw["swa_rope_theta"] = rng.choice([100.0, 10000.0]), rng.choice([50.0, 5000.0])
    elif r < 0.5:
        raw["rope_scaling"] = {"rope_type": "linear", "factor": rng.choice([2.0, 4.0]), "rope_theta": 1000.0}
    if rng.random() < 0.4:
        raw.update(model_type="dots3_note", vision_config={"adapter_out_dim": raw["hidden_size"]},
                   audio_config={"adapter_out_dim": raw["hidden_size"]})
    return raw


def minimax_m3(rng):
    layers, kv = rng.randint(2, 6), rng.choice([1, 2, 4])
    head_dim = rng.choice([8, 16])
    raw = dict(model_type="minimax_m3_vl_text", hidden_size=rng.choice([32, 48]), intermediate_size=rng.choice([8, 16]),
               dense_intermediate_size=rng.choice([24, 40]), shared_intermediate_size=rng.choice([8, 24]),
               num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=kv, head_dim=head_dim,
               vocab_size=97, num_local_experts=rng.choice([4, 8]), num_experts_per_tok=2,
               routed_scaling_factor=rng.choice([1.0, 2.0]), swiglu_limit=rng.choice([0.5, 7.0]),
               rms_norm_eps=rng.choice([1e-6, 1e-5]), tie_word_embeddings=rng.random() < 0.3,
               pad_token_id=0, bos_token_id=1, eos_token_id=2)
    if rng.random() < 0.5:
        raw["partial_rotary_factor"] = 0.5
    kinds = [rng.random() < 0.6 for _ in range(layers)]
    moe = [rng.random() < 0.7 for _ in range(layers)]
    index = dict(n_heads=rng.choice([h for h in (1, 2, 4) if 4 % h == 0]), head_dim=rng.choice([head_dim, 2 * head_dim]),
                 block_size=rng.choice([1, 2, 3]), topk_blocks=rng.choice([1, 2, 3]))
    index["local_blocks"] = rng.randint(0, index["topk_blocks"])
    if rng.random() < 0.5:
        raw.update(layer_types=["minimax_m3_sparse" if k else "full_attention" for k in kinds],
                   mlp_layer_types=["sparse" if m else "dense" for m in moe], **{f"index_{k}": v for k, v in index.items()})
    else:
        raw.update(moe_layer_freq=[int(m) for m in moe], sparse_attention_config=dict(
            sparse_attention_freq=[int(k) for k in kinds], sparse_num_index_heads=index["n_heads"],
            sparse_index_dim=index["head_dim"], sparse_block_size=index["block_size"],
            sparse_topk_blocks=index["topk_blocks"], sparse_local_block=index["local_blocks"]))
    return raw


def zaya(rng):
    layers, kv = rng.randint(1, 5), rng.choice([1, 2, 4])
    raw = dict(model_type="zaya", hidden_size=rng.choice([32, 48]), num_hidden_layers=layers, num_attention_heads=4,
               num_key_value_heads=kv, head_dim=rng.choice([4, 8, 12]), vocab_size=97,
               moe_intermediate_size=rng.choice([8, 16]), num_experts=rng.choice([2, 4, 8]),
               router_hidden_size=rng.choice([4, 16]), cca_time0=rng.randint(1, 4), cca_time1=rng.randint(1, 4),
               attention_bias=rng.random() < 0.4, lm_head_bias=rng.random() < 0.4,
               tie_word_embeddings=rng.random() < 0.5, rms_norm_eps=rng.choice([1e-6, 1e-5]),
               hidden_act=rng.choice(["silu", "gelu"]), pad_token_id=0, bos_token_id=1, eos_token_id=2)
    if rng.random() < 0.6:
        raw["sliding_window"] = rng.choice([1, 2, 5])
        raw["layer_types"] = [rng.choice(["hybrid", "hybrid_sliding"]) for _ in range(layers)]
    if rng.random() < 0.5:
        raw["rope_parameters"] = {t: {"rope_type": "default", "rope_theta": rng.choice([100.0, 1e4]),
                                      "partial_rotary_factor": rng.choice([0.5, 1.0])}
                                  for t in ("hybrid", "hybrid_sliding")}
        raw["rope_parameters"]["rope_type"] = "default"  # as the released config has it
    return raw


def dory(rng):
    sections = [rng.randint(0, 2), rng.randint(1, 3), rng.randint(0, 2)]
    layers = sum(sections)
    types = [rng.choice(["sliding_attention", "full_attention"]) for _ in range(layers)]
    raw = dict(model_type="dory", hidden_size=rng.choice([32, 48]), intermediate_size=rng.choice([24, 64]),
               num_attention_heads=4, num_key_value_heads=rng.choice([1, 2, 4]), head_dim=rng.choice([4, 8, 16]),
               vocab_size=97, n_recurrent_loops=rng.randint(1, 4), sliding_window=rng.choice([1, 2, 5]),
               recurrent_kv_cache_mode=rng.choice(["per_loop", "last_loop"]), attention_bias=rng.random() < 0.4,
               mlp_bias=rng.random() < 0.4, tie_word_embeddings=rng.random() < 0.5,
               ngpt_alpha_init=rng.choice([0.05, 0.3]), initializer_range=rng.choice([0.0177, 0.05]),
               hidden_act=rng.choice(["silu", "gelu"]), pad_token_id=0, bos_token_id=1, eos_token_id=2)
    if rng.random() < 0.5:  # as released: an "mlp" block after each attention, counts doubled
        raw.update(layer_types=[t for lt in types for t in (lt, "mlp")], num_hidden_layers=2 * layers,
                   n_input_layers=2 * sections[0], n_output_layers=2 * sections[2])
    else:
        raw.update(layer_types=types, num_hidden_layers=layers, n_input_layers=sections[0],
                   n_recurrent_layers=sections[1], n_output_layers=sections[2])
    if rng.random() < 0.5:
        raw["rope_parameters"] = {t: {"rope_type": "default", "rope_theta": rng.choice([100.0, 1e4])}
                                  for t in sorted(set(types))}
    return raw


def cpmant(rng):
    buckets = rng.choice([4, 12, 64])
    return dict(model_type="cpmant", vocab_size=rng.choice([97, 500]), hidden_size=rng.choice([24, 40]),
                num_attention_heads=rng.choice([1, 3]), dim_head=rng.choice([4, 16]), dim_ff=rng.choice([24, 72]),
                num_hidden_layers=rng.randint(1, 4), position_bias_num_buckets=buckets,
                position_bias_max_distance=max(buckets // 4 + 1, rng.choice([10, 11, 30])),
                prompt_types=rng.randint(3, 8), prompt_length=rng.choice([0, 2, 7]), segment_types=rng.randint(3, 8),
                eps=rng.choice([1e-6, 1e-4]), tie_word_embeddings=rng.random() < 0.5)


def inkling(rng):
    layers = rng.randint(1, 5)
    raw = dict(model_type="inkling_text", vocab_size=rng.choice([97, 500]), hidden_size=rng.choice([24, 40]),
               num_hidden_layers=layers, num_attention_heads=rng.choice([2, 4]), num_key_value_heads=rng.choice([1, 2]),
               head_dim=rng.choice([4, 8]), swa_num_attention_heads=rng.choice([1, 3]), swa_num_key_value_heads=1,
               swa_head_dim=rng.choice([4, 12]), sliding_window_size=rng.choice([2, 5, 100]), d_rel=rng.choice([1, 3]),
               rel_extent=rng.choice([1, 4, 50]), conv_kernel_size=rng.choice([2, 4]), intermediate_size=rng.choice([24, 40]),
               moe_intermediate_size=rng.choice([8, 16]), n_routed_experts=rng.choice([3, 6]),
               num_experts_per_tok=rng.choice([1, 3]), n_shared_experts=rng.randint(1, 2),
               route_scale=rng.choice([1.0, 8.0]), logits_mup_width_multiplier=rng.choice([2.0, 24.0]),
               local_layer_ids=sorted(rng.sample(range(layers), rng.randint(0, layers))),
               mlp_layer_types=[rng.choice(["dense", "sparse"]) for _ in range(layers)])
    if rng.random() < 0.6:
        raw.update(log_scaling_n_floor=rng.choice([1, 3, 8]), log_scaling_alpha=rng.choice([0.1, 0.7]))
    if rng.random() < 0.3:
        raw["dense_intermediate_size"] = rng.choice([16, 48])  # the checkpoints' widths
    if rng.random() < 0.3:
        raw["unpadded_vocab_size"] = raw["vocab_size"] - rng.choice([1, 7])
    return raw


def inkling2(rng):
    layers = rng.randint(1, 6)
    vocab = rng.choice([97, 500])
    raw = dict(model_type="inkling2_text", vocab_size=vocab, unpadded_vocab_size=vocab - rng.choice([0, 5]),
               hidden_size=rng.choice([24, 40]), num_hidden_layers=layers, num_attention_heads=rng.choice([2, 4]),
               num_key_value_heads=rng.choice([1, 2]), head_dim=rng.choice([4, 8]),
               swa_num_attention_heads=rng.choice([1, 3]), swa_num_key_value_heads=1, swa_head_dim=rng.choice([4, 12]),
               sliding_window_size=rng.choice([2, 5, 100]), d_rel=rng.choice([1, 3]), rel_extent=rng.choice([1, 4, 50]),
               conv_kernel_size=rng.choice([2, 4]), moe_intermediate_size=rng.choice([8, 16]),
               n_routed_experts=rng.choice([3, 6]), num_experts_per_tok=rng.choice([1, 3]),
               route_scale=rng.choice([1.0, 8.0]), n_layers_per_attn_res_block=rng.randint(1, 4),
               qk_l2_clip_threshold=rng.choice([1.0, 3.0, 22.6]), rel_l2_clip_threshold=rng.choice([0.5, 8.0]),
               mlp_gate_softcap=rng.choice([1.0, 4.0]), mlp_up_softcap=rng.choice([2.0, 25.0]),
               final_logit_softcapping=rng.choice([3.0, 30.0]), log_scaling_n_floor=rng.choice([1, 3, 8]),
               log_scaling_alpha=rng.choice([0.1, 0.7]), eos_token_id=1,
               layer_types=[rng.choice(["hybrid", "hybrid_sliding"]) for _ in range(layers)])
    return raw


def inkling2_loop(rng):
    raw = inkling2(rng)
    block = raw["n_layers_per_attn_res_block"]
    layers = max(raw["num_hidden_layers"], 2 * block)
    raw.update(model_type="inkling2_loop_text", num_hidden_layers=layers,
               layer_types=(raw["layer_types"] * layers)[:layers])
    start = block * rng.randint(1, max(1, layers // block - 1))
    end = block * rng.randint(start // block + 1, layers // block)
    raw.update(loop_layer_index_start=start, loop_layer_index_end=end, loop_num_passes=rng.randint(1, 4),
               loop_gate_rank=rng.choice([2, 6]))
    return raw


def gemma4_assistant(rng):
    """A target (Gemma 4 or Gemma 4 unified, alone or in its multimodal wrapper) and its
    assistant, which reads the keys of the target's last non-shared layer of each kind: head
    sizes and window agree."""
    unified = rng.random() < 0.4
    kv, hd, ghd = rng.choice([1, 2]), rng.choice([8, 16]), rng.choice([16, 32])
    vocab, window = rng.choice([96, 120]), rng.choice([3, 5])
    shared = dict(num_attention_heads=4, num_key_value_heads=kv, head_dim=hd, global_head_dim=ghd, vocab_size=vocab,
                  sliding_window=window, pad_token_id=0, model_type="gemma4_unified_text" if unified else "gemma4_text")
    layers = rng.randint(3, 6)
    kinds = ["sliding_attention"] * (layers - 2) + ["full_attention"] * 2
    rng.shuffle(kinds)
    kinds[-1] = "full_attention"
    kinds[0] = "sliding_attention"
    target = dict(shared, hidden_size=rng.choice([32, 48]), intermediate_size=rng.choice([40, 64]),
                  num_hidden_layers=layers, layer_types=kinds)
    if not unified:
        target.update(hidden_size_per_layer_input=rng.choice([0, 8]), vocab_size_per_layer_input=vocab)
    small = rng.randint(1, 4)
    text = dict(shared, hidden_size=rng.choice([16, 24]), intermediate_size=rng.choice([24, 40]),
                num_hidden_layers=small, layer_types=[rng.choice(["sliding_attention", "full_attention"])
                                                      for _ in range(small)])
    if not unified:
        text.update(hidden_size_per_layer_input=0, vocab_size_per_layer_input=0)
    kind = "gemma4_unified_assistant" if unified else "gemma4_assistant"
    assistant = {"model_type": kind, "architectures": [("Gemma4UnifiedAssistantForCausalLM" if unified
                                                        else "Gemma4AssistantForCausalLM")],
                 "backbone_hidden_size": target["hidden_size"], "text_config": text,
                 "use_ordered_embeddings": rng.random() < 0.6, "num_centroids": rng.choice([4, 8]),
                 "centroid_intermediate_top_k": rng.choice([1, 2, 3]), "tie_word_embeddings": rng.random() < 0.7}
    if rng.random() < 0.3:
        # The target as published: its language model inside the multimodal wrapper.
        wrapper = ("gemma4_unified", "Gemma4UnifiedForConditionalGeneration") if unified else \
            ("gemma4", "Gemma4ForConditionalGeneration")
        target = {"model_type": wrapper[0], "architectures": [wrapper[1]], "text_config": target}
    return {"target": target, "assistant": assistant}


def check_draft(anatomy, pair, seed, tol, work):
    """Whether anatomy drafts what transformers drafts from a target, both saved on random weights,
    and its NumPy export and PyTorch reference of the assistant give each step's logits and next
    hidden state from that step's inputs."""
    from check_torch_reference import check_draft as torch_check
    from make_exec_fixtures import save_drafted, save_pair

    torch.manual_seed(seed)
    built = []
    for raw in (pair["target"], pair["assistant"]):
        config = CONFIG_MAPPING[raw["model_type"]].from_dict(dict(raw))
        config._attn_implementation = "eager"
        arch = (raw.get("architectures") or [None])[0]
        model = getattr(transformers, arch)(config) if arch else AutoModelForCausalLM.from_config(config)
        built.append(randomize(model.float().eval()))
    target, assistant = built
    with torch.no_grad():
        if assistant.masked_embedding is not None:
            order = assistant.masked_embedding.token_ordering
            order.copy_(torch.randperm(order.shape[0]))
    d = Path(tempfile.mkdtemp(dir=work))
    save_pair(d, target, pair["target"], assistant, pair["assistant"])
    n = 3
    tokens = save_drafted(d, target, assistant, IDS, n)
    expected = json.loads((d / "expected.json").read_text())
    want = expected["logits"]
    verify = [subprocess.run([anatomy, "verify", str(d / p)], capture_output=True, text=True).returncode
              for p in ("target", "assistant")]
    run = subprocess.run([anatomy, "run", str(d / "assistant"), "--target", str(d / "target"), "--ids",
                          ",".join(map(str, IDS)), "--max-tokens", str(n), "--logits", str(d / "logits.npy")],
                         capture_output=True, text=True)
    name = f"{pair['assistant']['model_type']} (target {pair['target']['model_type']})"
    if run.returncode != 0:
        print(f"{name}: run failed: {run.stderr.strip()[-300:]}\n  {json.dumps(pair)}")
        return False
    # Each draft step reads the hidden state the one before made, so rounding compounds over the
    # steps (at unit-scale random weights, transformers' own float32 steps drift from its float64
    # ones by up to ~1e-4): the executor, which runs the whole chain, is held to the chain run in
    # float64; the references below run each step from transformers' float32 inputs.
    from make_exec_fixtures import drafted
    _, exact, _, _, _ = drafted(target.double(), assistant.double(), IDS, n)
    err = float(np.abs(np.load(d / "logits.npy") - np.array(exact)).max())
    # The NumPy export and the PyTorch reference, each step from its inputs.
    assistant_dir = str(d / "assistant")
    subprocess.run([anatomy, "numpy", assistant_dir, "-o", str(d / "m.py")], check=True, capture_output=True)
    numpy_run = subprocess.run([sys.executable, str(d / "m.py"), "--weights", assistant_dir,
                                "--inputs", str(d / "inputs.npz"), "--out", str(d / "np.npy"),
                                "--hidden", str(d / "np_hidden.npy")], capture_output=True, text=True)
    np_err = float("inf")
    if numpy_run.returncode == 0:
        np_err = max(float(np.abs(np.load(d / "np.npy") - np.array(want)).max()),
                     float(np.abs(np.load(d / "np_hidden.npy") - np.array(expected["hidden"])).max()))
    (d / "t.py").write_text(subprocess.run([anatomy, "torch", assistant_dir], check=True, capture_output=True,
                                           text=True).stdout)
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"t{seed}", d / "t.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch_err = torch_check(module, str(d))["max_diff"]
    ok = verify == [0, 0] and max(err, np_err, torch_err) < tol
    print(f"{name}: verify {'ok' if verify == [0, 0] else 'FAILED'}, drafted {tokens}, max |Δ| executor "
          f"{err:.2e} (float64 chain), NumPy {np_err:.2e}, PyTorch {torch_err:.2e}" + ("" if ok else f"\n  {json.dumps(pair)}"))
    return ok


def qwen4_exp(rng):
    """Qwen4-Exp: gated streams, QSA-indexed attention among Gated DeltaNet layers, at times in
    its multimodal wrapper (the fixtures' generator)."""
    return unseen_qwen4_exp(rng)


RECURRENT_CATALOG = ("jamba-v0.1", "kimi-linear-48b-a3b", "lfm2-700m", "lfm3-1.7b", "mamba-codestral-7b",
                     "nemotron-3-nano-30b-a3b", "olmo-hybrid-7b", "qwen3-next-80b-a3b", "qwen3.5-35b-a3b",
                     "recurrentgemma-2b", "xlstm-7b", "zamba-7b-v1", "zamba2-2.7b")


def blt(rng):
    raw = unseen_blt(rng)
    if rng.random() < 0.3:
        raw["max_patch_length"] = rng.choice([1, 2, 3])
    if rng.random() < 0.3:
        raw["local_attention_window_len"] = rng.choice([2, 4, None])
    return raw


def opt(rng):
    """OPT with every option the 350M model turns: a token table narrower or wider than the stream,
    post-norm layers without a final norm, LayerNorms without weights, no biases, an untied head."""
    heads = rng.choice([2, 4])
    hidden = heads * rng.choice([8, 16])
    return dict(model_type="opt", vocab_size=97, hidden_size=hidden, num_attention_heads=heads,
                ffn_dim=rng.choice([24, 72]), num_hidden_layers=rng.randint(1, 3), max_position_embeddings=rng.choice([16, 64]),
                word_embed_proj_dim=rng.choice([hidden, hidden // 2, 8, 2 * hidden]),
                do_layer_norm_before=rng.random() < 0.5, layer_norm_elementwise_affine=rng.random() < 0.7,
                enable_bias=rng.random() < 0.7, tie_word_embeddings=rng.random() < 0.5,
                activation_function=rng.choice(["relu", "gelu", "silu"]))


def recurrent_published(rng):
    """A published config of a recurrent or hybrid family from the catalog, shrunk to toy size with
    every key kept, then one to three of its keys changed or dropped (a seed of its own: none the
    suite's mutants saw); drawn again while transformers cannot build it."""
    for _ in range(20):
        name = rng.choice(RECURRENT_CATALOG)
        raw, _ = mutate(shrink(json.loads((CATALOG / f"{name}.json").read_text())), rng)
        try:
            build(raw)
            return raw
        except Exception:  # transformers refuses this change: draw another
            continue
    raise RuntimeError("no buildable mutation in 20 draws")


MAKERS = {f.__name__: f for f in (recurrent_published, falcon_h1, olmo_hybrid, bailing_hybrid, lara_mini, kimi_linear, minimax,
                                  recurrent_gemma, rwkv, hy_v4, gemma3n_text, axk2, beam, mllama, git, emu3,
                                  hrm_text, dots3_note, minimax_m3, zaya, dory, cpmant, inkling, inkling2,
                                  inkling2_loop, deepseek_v4, gemma4_assistant, qwen4_exp, blt, opt,
                                  param2moe, minicpm5_moe, ergo, kolibri1_1)}


class TopkTies:
    """Counts the calls of Tensor.topk whose k-th and (k+1)-th values are equal: which of the
    tied entries torch keeps is its implementation's choice (Qwen4-Exp's QSA indexer scores a
    block 0 where every index head's dot product is negative), where anatomy keeps the earlier."""

    def __enter__(self):
        self.ties, self.topk = 0, torch.Tensor.topk
        outer = self

        def topk(t, k, dim=-1, *args, **kwargs):
            ranked = t.sort(dim=dim, descending=True).values
            if 0 < k < t.shape[dim] and bool((ranked.select(dim, k - 1) == ranked.select(dim, k)).any()):
                outer.ties += 1
            return outer.topk(t, k, dim, *args, **kwargs)

        torch.Tensor.topk = topk
        return self

    def __exit__(self, *exc):
        torch.Tensor.topk = self.topk


def check(anatomy, raw, seed, tol, work):
    """Whether anatomy reads and runs `raw` as transformers does; prints what it found."""
    torch.manual_seed(seed)
    config = CONFIG_MAPPING[raw["model_type"]].from_dict(dict(raw))
    config._attn_implementation = "eager"
    arch = (raw.get("architectures") or [None])[0]
    model = getattr(transformers, arch)(config) if arch else AutoModelForCausalLM.from_config(config)
    model = randomize(model.float().eval())
    d = Path(tempfile.mkdtemp(dir=work))
    # Saved before any forward pass: RWKV's first one in eval mode rescales its weights in place.
    save_model(d, model)
    # BLT: a patching threshold among the random patcher's entropies; no cache (transformers
    # 5.24's BLT fails with one).
    kwargs = {}
    if raw["model_type"] == "blt":
        if raw.get("patch_in_forward", True):
            blt_threshold(model, raw, IDS)
        kwargs["use_cache"] = False
    with torch.no_grad(), TopkTies() as ties:
        want = model(torch.tensor([IDS]), **kwargs).logits[0].numpy()
    (d / "config.json").write_text(json.dumps(raw))
    verify = subprocess.run([anatomy, "verify", str(d)], capture_output=True, text=True)
    run = subprocess.run([anatomy, "run", str(d), "--ids", ",".join(map(str, IDS)), "--logits", str(d / "logits.npy")],
                         capture_output=True, text=True)
    if run.returncode != 0:
        print(f"{raw['model_type']}: run failed: {run.stderr.strip()[-300:]}\n  {json.dumps(raw)}")
        return False
    got = np.load(d / "logits.npy")
    err = float(np.abs(got - want).max())
    if ties.ties and err >= tol:
        print(f"{raw['model_type']}: verify {'ok' if verify.returncode == 0 else 'FAILED'}, not compared: "
              f"{ties.ties} top-k choice(s) with a tie at the cut, which torch breaks its own way")
        return verify.returncode == 0
    exact, best = "", err
    if err >= tol:
        # transformers' float32 can be the side that drifted: both against its float64 run.
        with torch.no_grad():
            want64 = model.double()(torch.tensor([IDS]), **kwargs).logits[0].numpy()
        best, theirs = float(np.abs(got - want64).max()), float(np.abs(want - want64).max())
        exact = f"; from its float64 run: anatomy {best:.2e}, transformers' float32 {theirs:.2e}"
    ok = verify.returncode == 0 and best < tol
    print(f"{raw['model_type']}: verify {'ok' if verify.returncode == 0 else 'FAILED'}, max |Δlogit| {err:.2e}{exact}"
          + ("" if ok else f"\n  {json.dumps(raw)}"))
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("types", nargs="*", help=f"among {', '.join(MAKERS)}; all by default")
    ap.add_argument("--anatomy", default=str(Path(__file__).resolve().parent.parent / "target/debug/anatomy"))
    ap.add_argument("--n", type=int, default=4, help="configs per type")
    ap.add_argument("--seed", type=int, default=20261130)
    ap.add_argument("--tol", type=float, default=1e-4)
    a = ap.parse_args()
    unknown = [t for t in a.types if t not in MAKERS]
    if unknown:
        ap.error(f"unknown type(s) {', '.join(unknown)}; choose among {', '.join(MAKERS)}")
    rng = random.Random(a.seed)
    failed = 0
    with tempfile.TemporaryDirectory() as work:
        for name in a.types or MAKERS:
            for i in range(a.n):
                raw = MAKERS[name](rng)
                checker = check_draft if "assistant" in raw else check
                failed += not checker(a.anatomy, raw, i, a.tol, work)
    print(f"{failed} config(s) failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
