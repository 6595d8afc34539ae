#!/usr/bin/env python3
"""Make the executor's parity fixtures: tiny random-weight models of one config per family the
executor runs, saved by transformers (config.json + model.safetensors, float32), with the logits
transformers computes for fixed token ids.

Writes crates/exec/tests/fixtures/<name>/{config.json, model.safetensors, expected.json}.
Usage: python3 scripts/make_exec_fixtures.py [NAME ...]   (needs: pip install torch transformers)
The image fixtures (image/*) also need Pillow, and torchvision for Qwen2-VL's video processor,
installed beside the venv as scripts/make_processor_fixtures.py says; SmolVLM's processor needs
num2words too (pip install --target ... --no-deps num2words docopt).
"""
import json
import sys
from functools import partial
from pathlib import Path

import torch
import transformers
from transformers import AutoModelForCausalLM, CONFIG_MAPPING

from make_toy_fixtures import blt_threshold, decodes_as_prompted, randomize, save_model, stepwise_logits

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "crates/exec/tests/fixtures"
IDS = [5, 17, 42, 3, 90, 11, 7, 8, 61, 20, 33, 2]

BASE = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, vocab_size=97, max_position_embeddings=128, pad_token_id=0)

CONFIGS = {
    "llama": dict(BASE, model_type="llama", attention_bias=True, mlp_bias=True),
    "llama3-tied": dict(BASE, model_type="llama", rope_theta=500000.0, tie_word_embeddings=True,
                        rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                      "high_freq_factor": 4.0, "original_max_position_embeddings": 16}),
    "mistral": dict(BASE, model_type="mistral", sliding_window=4),
    "qwen2": dict(BASE, model_type="qwen2"),
    "qwen3": dict(BASE, model_type="qwen3", head_dim=16),
    "smollm3": dict(BASE, model_type="smollm3", no_rope_layer_interval=2),
    "phi3": dict(BASE, model_type="phi3", partial_rotary_factor=0.5),
    "olmo2": dict(BASE, model_type="olmo2"),
    # LongRoPE as Phi-3.5 and Phi-4-mini use it: short factors within the pretraining length,
    # long ones beyond (the second fixture's 12 tokens pass its 8).
    "phi3-longrope": dict(BASE, model_type="phi3", original_max_position_embeddings=64,
                          rope_scaling={"rope_type": "longrope", "short_factor": [1.0, 1.1, 1.3, 1.6],
                                        "long_factor": [1.0, 2.0, 4.0, 8.0]}),
    "phi3-longrope-long": dict(BASE, model_type="phi3", original_max_position_embeddings=8,
                               rope_scaling={"rope_type": "longrope", "short_factor": [1.0, 1.1, 1.3, 1.6],
                                             "long_factor": [1.0, 2.0, 4.0, 8.0], "attention_factor": 1.2}),
    # Dynamic NTK grows the base once the sequence passes max_position_embeddings (8 here).
    "llama-dynamic": dict(BASE, model_type="llama", max_position_embeddings=8,
                          rope_scaling={"rope_type": "dynamic", "factor": 2.0}),
    "gemma": dict(BASE, model_type="gemma", head_dim=16, hidden_act="gelu"),
    "seed-oss": dict(BASE, model_type="seed_oss", head_dim=8, attention_bias=True, attention_out_bias=True,
                     mlp_bias=True),
    "glm4": dict(BASE, model_type="glm4", head_dim=16, attention_bias=True),
    "glm": dict(BASE, model_type="glm", head_dim=16, attention_bias=True),
    "helium": dict(BASE, model_type="helium", head_dim=8),
    "starcoder2": dict(BASE, model_type="starcoder2", sliding_window=4),
    "phi": dict(BASE, model_type="phi", num_key_value_heads=4, partial_rotary_factor=0.5),
    "phi-qk-layernorm": dict(BASE, model_type="phi", num_key_value_heads=4, qk_layernorm=True),
    "gpt-neox": dict(model_type="gpt_neox", hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                     num_attention_heads=4, vocab_size=97, max_position_embeddings=128, rotary_pct=0.5),
    "gpt-neox-sequential": dict(model_type="gpt_neox", hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                                num_attention_heads=4, vocab_size=97, max_position_embeddings=128,
                                use_parallel_residual=False, hidden_act="gelu_fast"),
    # Falcon's three generations: multi-query with one norm, a K/V per head, grouped with two norms.
    "falcon-7b": dict(model_type="falcon", hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                      vocab_size=97, max_position_embeddings=128),
    "falcon-mha-sequential": dict(model_type="falcon", hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                  vocab_size=97, multi_query=False, parallel_attn=False, bias=True),
    "falcon-40b": dict(model_type="falcon", hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                       num_kv_heads=2, vocab_size=97, new_decoder_architecture=True, tie_word_embeddings=False),
    # Key names from the config classes' attribute maps, as published configs use them.
    "internlm3": dict(BASE, model_type="internlm3", head_dim=8, qkv_bias=True, bias=True),
    "exaone": dict(BASE, model_type="exaone", num_hidden_layers=3, num_layers=2, layer_norm_epsilon=1e-5,
                   activation_function="gelu_new"),
    "iquestcoder": dict(BASE, model_type="iquestcoder", head_dim=8),
    "arcee": dict(BASE, model_type="arcee", mlp_bias=True),
    "jais2": dict(BASE, model_type="jais2"),
    "ministral": dict(BASE, model_type="ministral", head_dim=8, sliding_window=4,
                      layer_types=["sliding_attention", "full_attention"]),
    "olmoe": dict(BASE, model_type="olmoe", num_experts=4, num_experts_per_tok=2, clip_qkv=0.5),
    "qwen2-moe": dict(BASE, model_type="qwen2_moe", num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                      shared_expert_intermediate_size=24, decoder_sparse_step=2, norm_topk_prob=True),
    "granite": dict(BASE, model_type="granite", embedding_multiplier=12.0, residual_multiplier=0.22,
                    attention_multiplier=0.0625, logits_scaling=6.0, mlp_bias=True),
    "granitemoe": dict(BASE, model_type="granitemoe", num_local_experts=4, num_experts_per_tok=2, intermediate_size=16,
                       embedding_multiplier=12.0, residual_multiplier=0.22, attention_multiplier=0.0625,
                       logits_scaling=6.0, tie_word_embeddings=True),
    "nemotron": dict(BASE, model_type="nemotron", attention_bias=True, mlp_bias=True),
    "cohere": dict(BASE, model_type="cohere", logit_scale=0.25, attention_bias=True),
    # Command R+'s QK-norm: a LayerNorm per head on Q and K, each head its own weight.
    "cohere-qk-norm": dict(BASE, model_type="cohere", logit_scale=0.25, use_qk_norm=True),
    "stablelm": dict(BASE, model_type="stablelm", use_qkv_bias=True),
    # StableLM 2 12B's qk_layernorm: a LayerNorm of its own for each head's Q and K.
    "stablelm-qk-layernorm": dict(BASE, model_type="stablelm", qk_layernorm=True, use_parallel_residual=True),
    "stablelm-parallel": dict(BASE, model_type="stablelm", use_parallel_residual=True, partial_rotary_factor=0.5),
    "persimmon": {k: v for k, v in dict(BASE, model_type="persimmon").items() if k != "num_key_value_heads"},
    "gptj": dict(model_type="gptj", n_embd=32, n_head=4, n_layer=2, n_positions=64, vocab_size=97, rotary_dim=4),
    "gpt-bigcode": dict(model_type="gpt_bigcode", n_embd=32, n_head=4, n_layer=2, n_positions=64, vocab_size=97),
    "gpt-bigcode-mha": dict(model_type="gpt_bigcode", n_embd=32, n_head=4, n_layer=2, n_positions=64, vocab_size=97,
                            multi_query=False, scale_attn_weights=False, tie_word_embeddings=False),
    "bloom": dict(model_type="bloom", hidden_size=32, n_layer=2, n_head=4, vocab_size=97),
    "bloom-6-heads": dict(model_type="bloom", n_embed=48, n_layer=2, n_head=6, vocab_size=97, tie_word_embeddings=False),
    "minimax-m2": dict(BASE, model_type="minimax_m2", head_dim=16, rotary_dim=8, num_local_experts=4,
                       num_experts_per_tok=2),
    "vaultgemma": dict(BASE, model_type="vaultgemma", head_dim=16, query_pre_attn_scalar=16, sliding_window=4),
    "olmo3": dict(BASE, model_type="olmo3", num_hidden_layers=4, sliding_window=4,
                  rope_scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32}),
    "exaone4": dict(BASE, model_type="exaone4", num_hidden_layers=4, sliding_window=4, sliding_window_pattern=2),
    "apertus": dict(BASE, model_type="apertus", max_position_embeddings=32768),
    "apertus-theta": dict(BASE, model_type="apertus", rope_theta=50.0, rope_scaling={"rope_type": "linear", "factor": 2.0}),
    "ernie4_5": dict(BASE, model_type="ernie4_5", head_dim=8, use_bias=True),
    "hunyuan": dict(BASE, model_type="hunyuan_v1_dense", head_dim=8, attention_bias=True),
    "gpt-neo": dict(model_type="gpt_neo", hidden_size=32, num_layers=2, num_heads=4, vocab_size=97,
                    max_position_embeddings=64, window_size=4, attention_types=[[["global", "local"], 1]]),
    "opt": dict(model_type="opt", hidden_size=32, num_hidden_layers=2, num_attention_heads=4, ffn_dim=48,
                vocab_size=97, max_position_embeddings=64, word_embed_proj_dim=32),
    # A table narrower than the stream before pre-norm layers, LayerNorms without weights, an
    # untied head at the table's width (OPT-350M's projections, with the other options turned).
    "opt-projected": dict(model_type="opt", hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                          ffn_dim=48, vocab_size=97, max_position_embeddings=64, word_embed_proj_dim=16,
                          layer_norm_elementwise_affine=False, tie_word_embeddings=False, enable_bias=False),
    "gpt2": dict(model_type="gpt2", n_embd=32, n_head=4, n_layer=2, n_positions=64, vocab_size=97),
    "gemma2": dict(BASE, model_type="gemma2", head_dim=16, query_pre_attn_scalar=16, sliding_window=4),
    "gemma3": dict(BASE, model_type="gemma3_text", head_dim=16, query_pre_attn_scalar=16, sliding_window=4,
                   sliding_window_pattern=2),
    "mixtral": dict(BASE, model_type="mixtral", num_local_experts=4, num_experts_per_tok=2),
    "qwen3-moe": dict(BASE, model_type="qwen3_moe", num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                      norm_topk_prob=True, head_dim=8),
    "glm4-moe": dict(BASE, model_type="glm4_moe", head_dim=8, n_routed_experts=8, n_shared_experts=1,
                     num_experts_per_tok=2, moe_intermediate_size=16, first_k_dense_replace=1, n_group=2,
                     topk_group=1, routed_scaling_factor=1.5, attention_bias=True, use_qk_norm=True),
    # GraniteSWA: Granite's multipliers, sinks, every 4th layer from the first full, a NoPE layer.
    "granite-swa": dict(BASE, model_type="granite_swa", num_hidden_layers=3, sliding_window=4,
                        layer_rope_theta=[10000.0, 0, 10000.0], embedding_multiplier=2.0,
                        residual_multiplier=0.5, attention_multiplier=0.3, logits_scaling=4.0),
    "granitemoe-swa": dict(BASE, model_type="granitemoe_swa", num_hidden_layers=3, sliding_window=4,
                           num_local_experts=4, num_experts_per_tok=2, layer_rope_theta=[0, 10000.0, 10000.0],
                           embedding_multiplier=2.0, residual_multiplier=0.5, attention_multiplier=0.3,
                           logits_scaling=4.0, shared_intermediate_size=16),
    # GraniteMoE-Shared: GraniteMoE's stacked experts beside a shared MLP (gate and up fused).
    "granitemoe-shared": dict(BASE, model_type="granitemoeshared", num_local_experts=4, num_experts_per_tok=2,
                              shared_intermediate_size=16, embedding_multiplier=2.0, residual_multiplier=0.5,
                              attention_multiplier=0.3, logits_scaling=4.0),
    # Cohere 2: parallel block, every 2nd layer full and without RoPE, the others sliding.
    "cohere2": dict(BASE, model_type="cohere2", num_hidden_layers=4, sliding_window=4, sliding_window_pattern=2,
                    logit_scale=0.5),
    "flex-olmo": dict(BASE, model_type="flex_olmo", num_experts=4, num_experts_per_tok=2),
    # CWM: every 4th layer from the first full, the others slide; its default llama3 RoPE.
    "cwm": dict(BASE, model_type="cwm", head_dim=8, num_hidden_layers=3, sliding_window=4),
    # Solar Open: GLM-4.5's experts in every layer (sigmoid scores, correction bias, a shared
    # expert) under Llama's attention.
    "solar-open": dict(BASE, model_type="solar_open", head_dim=8, n_routed_experts=8, n_shared_experts=1,
                       num_experts_per_tok=2, moe_intermediate_size=16, routed_scaling_factor=1.5,
                       attention_bias=True),
    # Sarvam-MoE: GLM-4.5's model; its original config's key names.
    "sarvam-moe": dict(BASE, model_type="sarvam_moe", head_dim=8, num_experts=8, num_shared_experts=1,
                       num_experts_per_tok=2, moe_intermediate_size=16, first_k_dense_replace=1,
                       use_qkv_bias=True),
    # Param2: GLM-4.5's model under Sarvam's key names and fused [q|k|v] checkpoint layout.
    "param2moe": dict(BASE, model_type="param2moe", head_dim=8, num_experts=8, num_shared_experts=1,
                      num_experts_per_tok=2, moe_intermediate_size=16, first_k_dense_replace=1,
                      use_qkv_bias=True),
    # MiniCPM5-MoE: an output gate per head feature in the query projection, V3's router (a
    # correction bias, routed scaling) over sparse layers named by mlp_layer_types.
    "minicpm5-moe": dict(BASE, model_type="minicpm5_moe", head_dim=8, n_routed_experts=8, n_shared_experts=1,
                         num_experts_per_tok=2, moe_intermediate_size=16, routed_scaling_factor=2.0,
                         mlp_layer_types=["sparse", "dense"]),
    # Ergo: gated residual adds, sandwich norms, a fused QKV; every second layer full, without
    # positions and its logits scaled, the others sliding over 4 with interleaved RoPE; a dense
    # ReLU² first layer, then ReLU² experts (stacked, each output normed) beside a normed shared
    # expert. (Its class reads no intermediate_size.)
    "ergo": dict({k: v for k, v in BASE.items() if k != "intermediate_size"}, model_type="ergo",
                 num_hidden_layers=4, first_dense_intermediate_size=48, moe_intermediate_size=16,
                 shared_intermediate_size=24, num_experts=8, num_experts_per_tok=2, sliding_window=4,
                 global_attention_every_n_layers=2, global_attention_scale=1.5,
                 moe_routed_scaling_factor=2.0),
    # Kolibri 1.1: two sliding and four indexed layers; layers 1 and 4 pick pools; layer 2
    # attends over layer 1's keys and values, layer 5 over layer 1's too (not the last own
    # layer's, 4). The indexer's sizes are small enough that the 12 ids pass them all: queries
    # past 5 keys choose 2 of their pool beside 1 sink and 2 local keys, past 4 keys the pool is
    # 2 blocks of 2. A dense first layer.
    "kolibri1_1": dict(BASE, model_type="kolibri1_1", num_hidden_layers=6, head_dim=16, sliding_window=4,
                       num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                       shared_expert_intermediate_size=16, mlp_only_layers=[0], mlp_only_intermediate_size=24,
                       layer_types=["sliding_attention", "indexed_attention", "indexed_attention",
                                    "sliding_attention", "indexed_attention", "indexed_attention"],
                       index_layers=[1, 4], kv_source_layers=[0, 1, 1, 3, 4, 1], index_topk=2,
                       index_pool_size=4, index_compression=2, index_num_heads=2, index_num_local_tokens=2,
                       index_num_sink_tokens=1),
    # Youtu: DeepSeek-V3's latent attention, dense layers, tied embeddings.
    "youtu": dict(BASE, model_type="youtu", num_key_value_heads=4, kv_lora_rank=16, q_lora_rank=24,
                  qk_nope_head_dim=8, qk_rope_head_dim=8, v_head_dim=8),
    # dots.llm1: V3's routing (sigmoid, correction bias, groups, shared experts, dense first layers)
    # with Qwen3's attention; the last layer slides.
    "dots1": dict(BASE, model_type="dots1", head_dim=8, n_routed_experts=8, n_shared_experts=1,
                  num_experts_per_tok=2, moe_intermediate_size=16, first_k_dense_replace=1, n_group=2,
                  topk_group=1, routed_scaling_factor=1.5, norm_topk_prob=True, sliding_window=4,
                  max_window_layers=1),
    # DeepSeek-V3.2: V3 with sparse attention; the indexer keeps 4 keys per query, so queries
    # past the fourth attend to a chosen few; YaRN as published. Eight indexer heads, so that no
    # two keys tie at the cut (torch's top-k breaks ties in no promised order).
    "deepseek-v32": dict(BASE, model_type="deepseek_v32", n_routed_experts=8, n_shared_experts=1,
                         num_experts_per_tok=2, moe_intermediate_size=16, first_k_dense_replace=1, n_group=2,
                         topk_group=1, routed_scaling_factor=2.5, kv_lora_rank=16, q_lora_rank=24,
                         qk_nope_head_dim=8, qk_rope_head_dim=8, v_head_dim=8, num_key_value_heads=4,
                         index_topk=4, index_n_heads=8, index_head_dim=12,
                         rope_scaling={"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32,
                                       "beta_fast": 32, "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0}),
    # GLM-5: V3.2's sparse attention with interleaved indexer RoPE; layer 2 has no indexer and
    # reuses layer 1's choice (index_topk_freq 2 from offset 2: full, full, shared, full).
    "glm-moe-dsa": dict(BASE, model_type="glm_moe_dsa", num_hidden_layers=4, n_routed_experts=8,
                        n_shared_experts=1, num_experts_per_tok=2, moe_intermediate_size=16,
                        first_k_dense_replace=1, routed_scaling_factor=2.5, kv_lora_rank=16, q_lora_rank=24,
                        qk_nope_head_dim=8, qk_rope_head_dim=8, v_head_dim=12, num_key_value_heads=4,
                        index_topk=4, index_n_heads=8, index_head_dim=12, index_topk_freq=2,
                        index_skip_topk_offset=2),
    # HY v4: V3.2's sparse attention with a sink and an output gate, the indexer rotating its
    # heads' last dims and reused by layers 2 and 3 (full, full, shared, shared); three
    # hyper-connection streams; experts clamped tight enough to bind.
    "hy-v4": dict(BASE, model_type="hy_v4", num_hidden_layers=4, n_routed_experts=8, n_shared_experts=1,
                  num_experts_per_tok=2, moe_intermediate_size=16, kv_lora_rank=16, q_lora_rank=24,
                  qk_nope_head_dim=8, qk_rope_head_dim=8, v_head_dim=8, index_topk=4, index_n_heads=8,
                  index_head_dim=12, hc_mult=3, swiglu_limit=0.5, bos_token_id=1, eos_token_id=2),
    # DeepSeek-V4: each attention kind (sliding alone, compressed sparse with windows of 2 and
    # an indexer keeping 2 entries, heavily compressed with windows of 4) over a window of 4
    # keys, so that over the 12-token prompt the window, the entries and the indexer's choice
    # all bind; two layers route by token id; YaRN on the compressed layers; three streams.
    "deepseek-v4": dict(vocab_size=97, hidden_size=32, num_hidden_layers=4, num_attention_heads=4, head_dim=16,
                        q_lora_rank=24, moe_intermediate_size=16, n_routed_experts=8, num_experts_per_tok=2,
                        o_groups=2, o_lora_rank=8, hc_mult=3, hc_sinkhorn_iters=5, index_n_heads=8,
                        index_head_dim=12, index_topk=2, sliding_window=4, routed_scaling_factor=1.5,
                        swiglu_limit=0.5, partial_rotary_factor=0.5, max_position_embeddings=128,
                        compress_rates={"compressed_sparse_attention": 2, "heavily_compressed_attention": 4},
                        layer_types=["sliding_attention", "compressed_sparse_attention",
                                     "heavily_compressed_attention", "compressed_sparse_attention"],
                        mlp_layer_types=["hash_moe", "moe", "moe", "hash_moe"],
                        rope_parameters={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32,
                                         "beta_fast": 32, "beta_slow": 1},
                        model_type="deepseek_v4", pad_token_id=0, bos_token_id=1, eos_token_id=2),
    # DeepSeek-V4 as the mutants found it read: the shared expert with biases (`mlp_bias`), 4
    # output groups over 2 heads (each group half a head), and the rotated fraction of the
    # nested rope_parameters (1/4) over the top-level key's (1/2); its router's other scoring,
    # σ, in a layer routed by score and one by token id.
    "deepseek-v4-nested": dict(vocab_size=97, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, head_dim=16,
                               q_lora_rank=24, moe_intermediate_size=16, n_routed_experts=4, num_experts_per_tok=2,
                               o_groups=4, o_lora_rank=4, hc_mult=2, hc_sinkhorn_iters=3, index_n_heads=8,
                               index_head_dim=8, index_topk=3, sliding_window=5, mlp_bias=True, scoring_func="sigmoid",
                               partial_rotary_factor=0.5, max_position_embeddings=128,
                               compress_rates={"compressed_sparse_attention": 3, "heavily_compressed_attention": 5},
                               layer_types=["heavily_compressed_attention", "compressed_sparse_attention"],
                               mlp_layer_types=["moe", "hash_moe"],
                               rope_parameters={"main": {"rope_type": "default", "rope_theta": 5000.0, "partial_rotary_factor": 0.25},
                                                "compress": {"rope_type": "default", "rope_theta": 80000.0, "partial_rotary_factor": 0.25}},
                               model_type="deepseek_v4", pad_token_id=0, bos_token_id=1, eos_token_id=2),
    # A.X-K2: V3.2's sparse attention with the query and its output gate from both query latents,
    # gated norms (the FFN's in the MoE layers only); one dense layer, then experts.
    "axk2": dict(BASE, model_type="axk2", num_hidden_layers=3, n_routed_experts=8, n_shared_experts=1,
                 num_experts_per_tok=2, moe_intermediate_size=16, kv_lora_rank=16, q_lora_rank=24,
                 qk_nope_head_dim=8, qk_rope_head_dim=8, v_head_dim=8, num_key_value_heads=4,
                 index_topk=4, index_n_heads=8, index_head_dim=12, gated_norm_rank=4,
                 mlp_layer_types=["dense", "sparse", "sparse"], bos_token_id=1, eos_token_id=2),
    # dots.3 Note: V3.2's sparse attention (GLM-5's interleaved indexer) in layers 0, 1 and 5,
    # a window of 3 with latent attention of its own sizes and RoPE base in the others; scaled
    # latents normed at the model's eps, a normed rotary key, a σ gate per head; one dense
    # layer, then experts whose shared expert has a width of its own.
    "dots3-note": dict(BASE, model_type="dots3_note_text", num_hidden_layers=6, num_key_value_heads=4,
                       n_routed_experts=8, n_shared_experts=1, num_experts_per_tok=2, moe_intermediate_size=16,
                       shared_experts_intermediate_size=24, kv_lora_rank=16, q_lora_rank=24, qk_nope_head_dim=8,
                       qk_rope_head_dim=8, v_head_dim=8, head_dim=16, index_topk=4, index_n_heads=4,
                       index_head_dim=12, sliding_window=3, swa_num_attention_heads=2, swa_num_key_value_heads=2,
                       swa_q_lora_rank=20, swa_kv_lora_rank=12, swa_head_dim=20, swa_qk_nope_head_dim=8,
                       swa_v_head_dim=12, rope_theta=10000.0, swa_rope_theta=500.0, rms_norm_eps=1e-5,
                       bos_token_id=1, eos_token_id=2),
    # MiniMax-M3's language model: the lightning indexer in layers 1 and 2 (blocks of 2 keys, each
    # query group keeping its latest block and the best other), Gemma-style norms, half of each
    # head rotated; a dense layer, then experts; the clamped SwiGLU tight enough to bind.
    "minimax-m3": dict(BASE, model_type="minimax_m3_vl_text", num_hidden_layers=3, head_dim=8,
                       intermediate_size=16, dense_intermediate_size=48, shared_intermediate_size=24,
                       num_local_experts=8, num_experts_per_tok=2, routed_scaling_factor=2.0, swiglu_limit=1.0,
                       index_n_heads=2, index_head_dim=8, index_block_size=2, index_topk_blocks=2,
                       index_local_blocks=1, partial_rotary_factor=0.5,
                       layer_types=["full_attention", "minimax_m3_sparse", "minimax_m3_sparse"],
                       mlp_layer_types=["dense", "sparse", "sparse"], bos_token_id=1, eos_token_id=2),
    # MiniMax-M3 with its vision tower: the same language model saved as its published wrapper
    # stores it (experts one by one under block_sparse_moe., gate and up apart, the indexer's
    # index_q_proj …), a tiny tower and both projectors beside it.
    "minimax-m3-vl": dict(model_type="minimax_m3_vl", architectures=["MiniMaxM3SparseForConditionalGeneration"],
                          text_config=dict(BASE, model_type="minimax_m3_vl_text", num_hidden_layers=3, head_dim=8,
                                           intermediate_size=16, dense_intermediate_size=48,
                                           shared_intermediate_size=24, num_local_experts=8, num_experts_per_tok=2,
                                           routed_scaling_factor=2.0, swiglu_limit=1.0, index_n_heads=2,
                                           index_head_dim=8, index_block_size=2, index_topk_blocks=2,
                                           index_local_blocks=1, partial_rotary_factor=0.5,
                                           layer_types=["full_attention", "minimax_m3_sparse", "minimax_m3_sparse"],
                                           mlp_layer_types=["dense", "sparse", "sparse"], bos_token_id=1,
                                           eos_token_id=2),
                          vision_config=dict(hidden_size=16, intermediate_size=24, num_hidden_layers=1,
                                             num_attention_heads=2),
                          projector_hidden_size=24),
    # ZAYA: compressed convolutional attention (convolutions of 2 and 3 taps, biases), a sliding
    # layer between two full ones, the router MLP carrying its state through every layer, the
    # embeddings' and residual adds' shifts and scales, an untied head with a bias.
    # Dory: five layers as released (an "mlp" block after each attention, counts doubled), the
    # middle three run three times with a cache per pass; a window of 4 in the sliding layers.
    "dory": dict(BASE, model_type="dory", head_dim=8, num_hidden_layers=10, n_input_layers=2, n_output_layers=2,
                 n_recurrent_loops=3, sliding_window=4,
                 layer_types=[t for lt in ["sliding_attention", "full_attention", "sliding_attention",
                                           "sliding_attention", "full_attention"] for t in (lt, "mlp")],
                 bos_token_id=1, eos_token_id=2),
    # Dory in the class's own form, only the last pass caching: the earlier passes attend over
    # the last one's keys of earlier tokens, so decoding is checked token by token from the start;
    # residual rates ten times the class's, so that the passes' keys differ enough to tell.
    "dory-last-loop": dict(BASE, model_type="dory", head_dim=8, num_hidden_layers=4, n_input_layers=1,
                           n_recurrent_layers=2, n_output_layers=1, n_recurrent_loops=2,
                           recurrent_kv_cache_mode="last_loop", sliding_window=3, attention_bias=True,
                           ngpt_alpha_init=0.5,
                           tie_word_embeddings=True,
                           layer_types=["full_attention", "sliding_attention", "full_attention", "sliding_attention"],
                           bos_token_id=1, eos_token_id=2),
    "zaya": {**{k: v for k, v in BASE.items() if k != "intermediate_size"}, "model_type": "zaya",
             "num_hidden_layers": 3, "head_dim": 8, "moe_intermediate_size": 16, "num_experts": 4,
             "router_hidden_size": 16, "cca_time0": 2, "cca_time1": 3, "sliding_window": 4,
             "layer_types": ["hybrid", "hybrid_sliding", "hybrid"], "attention_bias": True,
             "lm_head_bias": True, "tie_word_embeddings": False, "bos_token_id": 1, "eos_token_id": 2},
    # Gemma 3n: three AltUp streams, LAuReL, activation sparsity in the first two layers (two
    # levels), the last two layers reusing keys and values, MLPs of two widths, per-layer
    # inputs from a table shorter than the vocabulary (ids past it read row 0), a window of 4.
    "gemma3n": dict(BASE, model_type="gemma3n_text", num_hidden_layers=6, head_dim=8,
                    intermediate_size=[48, 48, 64, 48, 64, 48], vocab_size_per_layer_input=64,
                    hidden_size_per_layer_input=8, altup_num_inputs=3, laurel_rank=4,
                    num_kv_shared_layers=2, sliding_window=4,
                    activation_sparsity_pattern=[0.95, 0.5, 0.0, 0.0, 0.0, 0.0],
                    layer_types=["sliding_attention", "sliding_attention", "full_attention",
                                 "sliding_attention", "sliding_attention", "full_attention"],
                    bos_token_id=1, eos_token_id=2),
    # Sarvam-105B: V3's model without a Q latent, its own key names, RoPE as `deepseek_yarn`.
    "sarvam-mla": dict(BASE, model_type="sarvam_mla", num_experts=8, num_shared_experts=1,
                       num_experts_per_tok=2, moe_intermediate_size=16, kv_lora_rank=16, qk_nope_head_dim=8,
                       qk_rope_head_dim=8, v_head_dim=8, num_key_value_heads=4,
                       rope_scaling={"type": "deepseek_yarn", "factor": 4.0, "original_max_position_embeddings": 32,
                                     "beta_fast": 32, "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0}),
    # MiniCPM3: V2's latent attention with rotate-half RoPE in a Llama model with muP scales;
    # v_head_dim left to its default (hidden / heads), biases on.
    "minicpm3": dict(BASE, model_type="minicpm3", num_key_value_heads=4, kv_lora_rank=16, q_lora_rank=24,
                     qk_nope_head_dim=8, qk_rope_head_dim=8, scale_emb=3.0, scale_depth=1.4, dim_model_base=8,
                     attention_bias=True, mlp_bias=True, tie_word_embeddings=True),
    # GLM-4.7-Flash: V3's latent attention and routing, the dense layers by mlp_layer_types.
    "glm4-moe-lite": dict(BASE, model_type="glm4_moe_lite", num_hidden_layers=3, n_routed_experts=8,
                          n_shared_experts=1, num_experts_per_tok=2, moe_intermediate_size=16,
                          mlp_layer_types=["dense", "sparse", "dense"], n_group=2, topk_group=1,
                          routed_scaling_factor=1.5, kv_lora_rank=16, q_lora_rank=24, qk_nope_head_dim=8,
                          qk_rope_head_dim=8, v_head_dim=12, num_key_value_heads=4),
    # HunYuan-MoE: per-head QK norms after RoPE; 4 experts of the dense width, top-2, and a
    # shared MLP; the class's key names.
    "hunyuan-moe": dict(BASE, model_type="hunyuan_v1_moe", head_dim=8, num_experts=4, moe_topk=2),
    # HunYuan as its published configs set RoPE: `dynamic` with an NTK alpha (the base stretched
    # to θ·α^(d/(d−2))), beside YaRN-style keys the class never reads.
    "hunyuan-alpha": dict(BASE, model_type="hunyuan_v1_dense", head_dim=8, max_position_embeddings=32768,
                          rope_scaling={"type": "dynamic", "alpha": 1000.0, "factor": 1.0, "beta_fast": 32,
                                        "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0}),
    # ERNIE 4.5 MoE: experts in layers 1 and 3 (interval 2 from 1), softmax plus a correction
    # bias, two shared experts; biases everywhere but the routed experts; interleaved RoPE.
    "ernie4-5-moe": dict(BASE, model_type="ernie4_5_moe", num_hidden_layers=4, head_dim=8, moe_num_experts=4,
                         moe_k=2, moe_intermediate_size=16, moe_num_shared_experts=2, moe_layer_interval=2,
                         moe_layer_start_index=1, use_bias=True),
    # MPT: ALiBi with 6 heads (not a power of two: MPT's slope order), Q, K and V clamped, a
    # given softmax scale; its own key names.
    "mpt": dict(model_type="mpt", d_model=48, n_heads=6, n_layers=2, vocab_size=97, max_seq_len=128,
                pad_token_id=0, attn_config={"clip_qkv": 2.0, "softmax_scale": 0.3}),
    # OLMo: LayerNorms without parameters, Q, K and V clamped, biased attention.
    "olmo": dict(BASE, model_type="olmo", clip_qkv=0.5, attention_bias=True),
    # BioGPT: OPT's layer with embeddings scaled by sqrt(hidden); learned positions two rows in.
    "biogpt": dict({k: v for k, v in BASE.items() if k != "num_key_value_heads"}, model_type="biogpt"),
    # XGLM: OPT's layer with fixed sinusoidal positions and sqrt(d)-scaled embeddings; an odd
    # width leaves the sinusoid table a zero column.
    # CPM-Ant: a learned prompt of 3 tokens before the text, segment embeddings, a bucketed
    # relative-position bias whose logarithmic buckets and last one (from 12 on) the 15 positions
    # reach, attention both ways; 3 query heads of 8 dims on a 33-wide stream.
    "cpmant": dict(model_type="cpmant", vocab_size=97, hidden_size=33, num_attention_heads=3, dim_head=8,
                   dim_ff=48, num_hidden_layers=2, position_bias_num_buckets=16, position_bias_max_distance=12,
                   prompt_types=4, prompt_length=3, segment_types=4, eps=1e-5),
    # Inkling: no RoPE; relative logits reaching 6 positions back in the full layers (the 12 ids
    # pass them) and the window's 4 in the sliding one, whose heads are its own (2 query heads of
    # 16 dims sharing one K/V head); queries and biases scaled up from position 3; residual
    # convolutions of 4 taps on K, V and both sublayers' outputs; a dense first layer, then 5
    # experts (2 chosen) beside 2 shared ones; the head's last 7 rows are padding, their logits dropped.
    "inkling": dict(model_type="inkling_text", vocab_size=97, unpadded_vocab_size=90, hidden_size=32, num_hidden_layers=3,
                    num_attention_heads=4, num_key_value_heads=2, head_dim=8, swa_num_attention_heads=2,
                    swa_num_key_value_heads=1, swa_head_dim=16, sliding_window_size=4, d_rel=3, rel_extent=6,
                    log_scaling_n_floor=3, log_scaling_alpha=0.3, intermediate_size=40, moe_intermediate_size=12,
                    n_routed_experts=5, num_experts_per_tok=2, n_shared_experts=2, local_layer_ids=[1],
                    dense_mlp_idx=1, route_scale=2.5, logits_mup_width_multiplier=4.0,
                    max_position_embeddings=128),
    # Inkling 2: blocks of 2 layers over block attention residuals (sliding, full, sliding, full);
    # L2-clipped queries and keys, RMS-normed values, per-token sinks and a gated output; the full
    # layers' K and V from inputs of their own through convolutions with per-token taps; 5
    # experts (2 chosen) with a softcapped SwiGLU; a head of the real vocabulary's 90 rows.
    "inkling2": dict(model_type="inkling2_text", vocab_size=97, unpadded_vocab_size=90, hidden_size=32,
                     num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                     swa_num_attention_heads=2, swa_num_key_value_heads=1, swa_head_dim=16, sliding_window_size=4,
                     d_rel=3, rel_extent=6, log_scaling_n_floor=3, log_scaling_alpha=0.3, moe_intermediate_size=12,
                     n_routed_experts=5, num_experts_per_tok=2, n_layers_per_attn_res_block=2,
                     qk_l2_clip_threshold=3.0, rel_l2_clip_threshold=1.5, mlp_gate_softcap=2.0, mlp_up_softcap=3.0,
                     final_logit_softcapping=5.0,
                     layer_types=["hybrid_sliding", "hybrid", "hybrid_sliding", "hybrid"],
                     max_position_embeddings=128, eos_token_id=2),
    # Inkling 2 Loop: layers 2 and 3 (one block of 2) run 3 passes, the later ones fed messages from
    # the pass before through gates of rank 5.
    "inkling2-loop": dict(model_type="inkling2_loop_text", vocab_size=97, unpadded_vocab_size=90, hidden_size=32,
                          num_hidden_layers=6, num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                          swa_num_attention_heads=2, swa_num_key_value_heads=1, swa_head_dim=16,
                          sliding_window_size=4, d_rel=3, rel_extent=6, log_scaling_n_floor=3, log_scaling_alpha=0.3,
                          moe_intermediate_size=12, n_routed_experts=5, num_experts_per_tok=2,
                          n_layers_per_attn_res_block=2, qk_l2_clip_threshold=3.0, rel_l2_clip_threshold=1.5,
                          mlp_gate_softcap=2.0, mlp_up_softcap=3.0, final_logit_softcapping=5.0,
                          layer_types=["hybrid_sliding", "hybrid"] * 3, max_position_embeddings=128, eos_token_id=2,
                          loop_layer_index_start=2, loop_layer_index_end=4, loop_num_passes=3, loop_gate_rank=5),
    "xglm": dict(model_type="xglm", d_model=33, attention_heads=3, num_layers=2, ffn_dim=48, vocab_size=97,
                 max_position_embeddings=128, pad_token_id=1),
    # NanoChat: weightless RMS norms (one right after the embedding), weightless QK norms after a
    # backwards RoPE, a ReLU² MLP, the final logit softcap.
    "nanochat": dict(BASE, model_type="nanochat", final_logit_softcapping=3.0),
    # CodeGen: GPT-J's layer with q, v, k in four model-parallel parts (8 heads: 2 a part);
    # rotary_dim 6 of 8.
    "codegen": dict(model_type="codegen", n_embd=64, n_head=8, n_layer=2, rotary_dim=6, vocab_size=97,
                    n_positions=128, n_ctx=128),
    # GPT-1: LayerNorms after each residual add and no final norm; Conv1D weights.
    "openai-gpt": dict(model_type="openai-gpt", n_embd=32, n_head=4, n_layer=2, vocab_size=97, n_positions=128),
    # HyperCLOVA X: Granite's multipliers with a logit multiplier, sandwich norms (post_norm1/2),
    # the default score scale 1/sqrt(head_dim).
    "hyperclovax": dict(BASE, model_type="hyperclovax", embedding_multiplier=2.0, residual_multiplier=0.5,
                        logits_scaling=0.25),
    # HY-V3: per-head QK-norm; layer 0 dense, then sigmoid routing with a correction bias on the
    # MoE block, renormalized and scaled; two shared experts with biases (mlp_bias).
    "hy-v3": dict(BASE, model_type="hy_v3", num_hidden_layers=3, head_dim=8, num_experts=4, num_experts_per_tok=2,
                  moe_intermediate_size=16, num_shared_experts=2, router_scaling_factor=1.7, mlp_bias=True,
                  attention_bias=True),
    # EXAONE MoE: EXAONE 4's attention (sliding layers rotate, the full one is NoPE), dense first
    # layer, DeepSeek-V3 routing in 2 groups of 4.
    "exaone-moe": dict(BASE, model_type="exaone_moe", num_hidden_layers=4, sliding_window=4, sliding_window_pattern=2,
                       num_experts=8, num_experts_per_tok=2, moe_intermediate_size=16, num_shared_experts=1,
                       n_group=2, topk_group=1, routed_scaling_factor=1.5, first_k_dense_replace=1),
    # Flint: sinks, QK-norm; by its default pattern layers 0, 1 and 5 are full and NoPE, 2-4 slide
    # and rotate; layers 0 and 1 dense by default, then sigmoid routing beside an ungated shared expert.
    "flint": dict(BASE, model_type="flint", num_hidden_layers=6, head_dim=8, sliding_window=4, num_experts=4,
                  num_experts_per_tok=2, moe_intermediate_size=16, shared_expert_intermediate_size=24),
    # Mellum: QK-norm, RoPE bases per layer type (default dict), a sliding and a dense layer.
    "mellum": dict(BASE, model_type="mellum", num_hidden_layers=3, head_dim=8, sliding_window=4, num_experts=4,
                   num_experts_per_tok=2, moe_intermediate_size=16,
                   layer_types=["full_attention", "sliding_attention", "full_attention"],
                   mlp_layer_types=["dense", "sparse", "sparse"]),
    # MiMo-V2-Flash: the default layer pattern over 6 layers (full 0 and 5, sliding 1-4 with twice
    # the K/V heads and sinks), value heads narrower than Q/K and scaled, a third of each head
    # rotated by a base per layer type; layer 0 dense, then V3 routing in groups, scaled.
    "mimo-v2-flash": dict(BASE, model_type="mimo_v2_flash", num_hidden_layers=6, num_key_value_heads=1, head_dim=12,
                          v_head_dim=8, sliding_window=4, n_routed_experts=4, num_experts_per_tok=2,
                          moe_intermediate_size=16, n_group=2, topk_group=1, attention_value_scale=0.5,
                          routed_scaling_factor=2.0),
    # JetMoE: a mixture of attention heads (2 of 4 experts' query and output projections over 2
    # K/V heads) and of MLP experts, both with output biases; tied embeddings.
    "jetmoe": dict(BASE, model_type="jetmoe", kv_channels=8, num_local_experts=4, num_experts_per_tok=2,
                   intermediate_size=16),
    # Doge: dynamic mask attention keeping at most 4 keys per query (so the 12-token prompt
    # crosses it), biases on every projection, per-head QK-norm, residual scales.
    "doge": dict(BASE, model_type="doge", keep_window_size=4, attention_bias=True),
    # Laguna: a full layer rotating half of each head, sliding layers rotating all of it, with
    # 4, 8 and 4 query heads; a softplus gate per head; routing with softcapped logits, a
    # correction bias and a shared expert.
    "laguna": dict(BASE, model_type="laguna", num_hidden_layers=3, head_dim=8, sliding_window=4,
                   layer_types=["full_attention", "sliding_attention", "sliding_attention"],
                   num_attention_heads_per_layer=[4, 8, 4], num_experts=4, num_experts_per_tok=2,
                   moe_intermediate_size=16, shared_expert_intermediate_size=24, moe_router_logit_softcapping=2.0,
                   moe_routed_scaling_factor=1.5),
    # ... with a gate per head feature.
    "laguna-per-element": dict(BASE, model_type="laguna", num_hidden_layers=2, head_dim=8, gating="per-element",
                               num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                               shared_expert_intermediate_size=24),
    # DBRX: fused Q/K/V clamped at 0.3 (so the clamp bites), bias-free LayerNorms, experts
    # stored row after row, softmax routing renormalized; its attn_config.rope_theta as
    # transformers rotates (rope_parameters' base).
    "dbrx": dict(model_type="dbrx", d_model=32, n_heads=4, n_layers=2, vocab_size=97, max_seq_len=128,
                 attn_config={"kv_n_heads": 2, "clip_qkv": 0.3, "rope_theta": 10000.0},
                 ffn_config={"ffn_hidden_size": 24, "moe_num_experts": 4, "moe_top_k": 2}),
    # ... with its published base given where transformers reads it.
    "dbrx-theta": dict(model_type="dbrx", d_model=32, n_heads=4, n_layers=2, vocab_size=97, max_seq_len=128,
                       attn_config={"kv_n_heads": 1, "clip_qkv": 8.0, "rope_theta": 500000.0},
                       rope_parameters={"rope_type": "default", "rope_theta": 500000.0},
                       ffn_config={"ffn_hidden_size": 24, "moe_num_experts": 4, "moe_top_k": 1}),
    # Phi-4-multimodal: Phi-3's language model (a LongRoPE-free default) beside tiny image and
    # audio encoders, which the checkpoint holds and anatomy names without drawing.
    "phi4-multimodal": dict(BASE, model_type="phi4_multimodal", pad_token_id=0, bos_token_id=1, eos_token_id=2,
                            vision_config=dict(hidden_size=16, intermediate_size=16, num_hidden_layers=1,
                                               num_attention_heads=2, image_size=28, patch_size=14, crop_size=28),
                            audio_config=dict(hidden_size=16, intermediate_size=16, num_blocks=1, num_attention_heads=2,
                                              ext_pw_out_channel=16, depthwise_separable_out_channel=16,
                                              nemo_conv_channels=16, input_size=16, time_reduction=2)),
    # Cohere 2 MoE: a dense first layer (wider, rotating though full), then sliding/full layers
    # counted afresh; top-k softmax routing; a shared expert averaged in.
    "cohere2-moe": dict(BASE, model_type="cohere2_moe", num_hidden_layers=4, head_dim=8, sliding_window=4,
                        sliding_window_pattern=2, num_experts=4, num_experts_per_tok=2, num_shared_experts=1,
                        first_k_dense_replace=1, prefix_dense_intermediate_size=40, logit_scale=0.5),
    # ... with RMSNorms, sigmoid routing renormalized, and the shared expert summed.
    "cohere2-moe-rms": dict(BASE, model_type="cohere2_moe", num_hidden_layers=2, head_dim=8, sliding_window=4,
                            num_experts=4, num_experts_per_tok=2, num_shared_experts=2, rms_norm_eps=1e-6,
                            expert_selection_fn="sigmoid", shared_expert_combination_strategy="sum"),
    # Kolibri: sandwich norms, QK-norm, four sliding rotating layers then a full NoPE one; the
    # correction bias joins the logits (non-zero here, so it changes the choice).
    "kolibri1": dict(BASE, model_type="kolibri1", num_hidden_layers=5, head_dim=8, sliding_window=4, num_experts=4,
                     num_experts_per_tok=2, moe_intermediate_size=16, shared_expert_intermediate_size=24,
                     norm_topk_prob=True),
    # BitNet: sub-norms over the heads and over the ReLU²-gated activation; biased attention.
    "bitnet": dict(BASE, model_type="bitnet", attention_bias=True),
    # AFMoE: output gate, QK-norm, sandwich norms, NoPE full layer (every 2nd), a dense first
    # layer, sigmoid routing with a correction bias and route_scale, shared experts, muP embeddings.
    "afmoe": dict(BASE, model_type="afmoe", num_hidden_layers=4, head_dim=8, sliding_window=4,
                  global_attn_every_n_layers=2, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                  num_shared_experts=1, route_scale=2.0, mup_enabled=True),
    # Beam: three sliding layers (window 4, RoPE at a base of their own) and a full NoPE layer
    # whose queries grow with position, depth-scaled residual adds, an output gate with a bias
    # per head; three MoE layers routing 2 of 8 experts within the best 2 of 4 groups.
    "beam": dict(BASE, model_type="beam", num_hidden_layers=4, head_dim=8, sliding_window=4,
                 mlp_layer_types=["dense", "sparse", "sparse", "sparse"], num_experts=8,
                 num_experts_per_tok=2, moe_intermediate_size=16, n_group=4, topk_group=2,
                 routed_scaling_factor=2.0, final_logit_softcapping=5.0,
                 rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": 1000.0},
                                  "full_attention": None}),
    # Mllama: a Llama language model whose layers 1 and 3 cross-attend to the image (skipped on
    # text alone), 8 embedding rows past the vocabulary, behind a tiny tiled vision encoder; saved
    # as its published class saves it, the language model under `language_model.`.
    "mllama": dict(model_type="mllama", architectures=["MllamaForConditionalGeneration"],
                   text_config=dict(BASE, model_type="mllama_text_model", num_hidden_layers=5,
                                    cross_attention_layers=[1, 3], bos_token_id=1,
                                    eos_token_id=2, rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0,
                                    "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                    "original_max_position_embeddings": 16}),
                   vision_config=dict(hidden_size=16, intermediate_size=16, num_hidden_layers=1,
                                      num_global_layers=1, attention_heads=2, image_size=28, patch_size=14,
                                      max_num_tiles=1, supported_aspect_ratios=[[1, 1]],
                                      intermediate_layers_indices=[0], vision_output_dim=32)),
    # Qwen2-VL, Qwen2.5-VL and Qwen3-VL: their language models behind tiny vision towers that
    # text alone never reads, saved as their published classes save them. Their multimodal RoPE
    # rotates text as plain RoPE (a text token's three positions are equal): these logits are
    # the wrapper's own, positions computed by its class. Qwen2.5-VL's windows slide from its
    # second layer on.
    "qwen2_vl": dict(model_type="qwen2_vl", architectures=["Qwen2VLForConditionalGeneration"],
                     text_config=dict(BASE, model_type="qwen2_vl_text", rope_theta=1000000.0,
                                      rope_scaling={"type": "mrope", "mrope_section": [2, 1, 1]}),
                     vision_config=dict(depth=1, embed_dim=16, mlp_ratio=2, num_heads=2, hidden_size=32,
                                        patch_size=14, spatial_merge_size=2, temporal_patch_size=2),
                     image_token_id=95, video_token_id=96, vision_start_token_id=93, vision_end_token_id=94),
    "qwen2_5_vl": dict(model_type="qwen2_5_vl", architectures=["Qwen2_5_VLForConditionalGeneration"],
                       text_config=dict(BASE, model_type="qwen2_5_vl_text", use_sliding_window=True,
                                        sliding_window=4, max_window_layers=1, tie_word_embeddings=True,
                                        rope_scaling={"type": "mrope", "mrope_section": [2, 1, 1]}),
                       vision_config=dict(depth=1, hidden_size=16, intermediate_size=24, num_heads=2,
                                          out_hidden_size=32, patch_size=14, spatial_merge_size=2,
                                          fullatt_block_indexes=[0]),
                       image_token_id=95, video_token_id=96, vision_start_token_id=93, vision_end_token_id=94),
    "qwen3_vl": dict(model_type="qwen3_vl", architectures=["Qwen3VLForConditionalGeneration"],
                     text_config=dict(BASE, model_type="qwen3_vl_text", head_dim=8, attention_bias=True,
                                      rope_scaling={"rope_type": "default", "mrope_interleaved": True,
                                                    "mrope_section": [2, 1, 1]}, rope_theta=5000000.0),
                     vision_config=dict(depth=2, hidden_size=16, intermediate_size=24, num_heads=2,
                                        num_position_embeddings=16, out_hidden_size=32, patch_size=16,
                                        spatial_merge_size=2, deepstack_visual_indexes=[0]),
                     image_token_id=95, video_token_id=96, vision_start_token_id=93, vision_end_token_id=94),
    # GLM-4.1V: GLM-4's layers (half of each head rotated in interleaved pairs, M-RoPE sections
    # over them) behind a tiny vision tower, saved as its published class saves it.
    "glm4v": dict(model_type="glm4v", architectures=["Glm4vForConditionalGeneration"],
                  text_config=dict(BASE, model_type="glm4v_text", hidden_size=64, partial_rotary_factor=0.5,
                                   rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                    "mrope_section": [2, 1, 1]}),
                  vision_config=dict(depth=1, hidden_size=16, intermediate_size=24, num_heads=2, image_size=28,
                                     patch_size=14, out_hidden_size=64, spatial_merge_size=2),
                  image_token_id=95, video_token_id=96),
    # LFM3-VL: LFM3's layers (a convolution, a full and a sliding attention layer) in Qwen2-VL's
    # wrapper, untied; its tower (convolutions over the patch grid, attention) named, not run.
    "lfm3-vl": dict(model_type="lfm3_vl", architectures=["Lfm3VlForConditionalGeneration"],
                    tie_word_embeddings=False, projector_hidden_size=24,
                    text_config=dict(BASE, model_type="lfm3", num_hidden_layers=3,
                                     layer_types=["conv", "full_attention", "sliding_attention"], head_dim=16,
                                     sliding_window=4, conv_L_cache=3, norm_eps=1e-5),
                    vision_config=dict(model_type="lfm3_vl_vision", hidden_size=16, intermediate_size=24,
                                       num_hidden_layers=3, num_attention_heads=2, num_key_value_heads=1,
                                       patch_size=8)),
    # GLM-OCR: GLM-4.1V's language model without q, k, v biases, half of each head rotated; its
    # tower (normed queries and keys) named, not run.
    # Qwen2.5-Omni's thinker: Qwen2-VL's layers (sliding windows from layer 1 on), its towers
    # named, not run.
    "qwen2_5_omni_thinker": dict(model_type="qwen2_5_omni_thinker",
                                 architectures=["Qwen2_5OmniThinkerForConditionalGeneration"],
                                 text_config=dict(BASE, model_type="qwen2_5_omni_text", use_sliding_window=True,
                                                  sliding_window=4, max_window_layers=1,
                                                  rope_parameters={"rope_type": "default", "rope_theta": 1e6,
                                                                   "mrope_section": [2, 1, 1]}),
                                 vision_config=dict(depth=1, hidden_size=16, intermediate_size=24, num_heads=2,
                                                    out_hidden_size=32, fullatt_block_indexes=[0]),
                                 audio_config=dict(d_model=16, encoder_layers=1, encoder_attention_heads=2,
                                                   encoder_ffn_dim=24, num_mel_bins=16, output_dim=32,
                                                   max_source_positions=30)),
    # Ovis2: a Qwen2 language model in LLaVA's wrapper, the head tied by the wrapper's flag; its
    # visual tokenizer and embedding table named, not run.
    "ovis2": dict(model_type="ovis2", architectures=["Ovis2ForConditionalGeneration"], hidden_size=32,
                  text_config=dict(BASE, model_type="qwen2"),
                  vision_config=dict(hidden_size=16, intermediate_size=24, num_hidden_layers=1, num_attention_heads=2,
                                     image_size=28, patch_size=14, vocab_size=24, hidden_stride=2),
                  image_token_id=95),
    # Granite Docling: Granite's layers at its class's μP multipliers (none given), tied; its tower,
    # connector and density router named, not run.
    "granite_docling": dict(model_type="granite_docling", architectures=["GraniteDoclingForConditionalGeneration"],
                            text_config=dict(BASE, bos_token_id=1, eos_token_id=2),
                            vision_config=dict(hidden_size=16, intermediate_size=24, num_hidden_layers=2,
                                               num_attention_heads=2, image_size=32, patch_size=8, out_hidden_size=32,
                                               deepstack_visual_indexes=[0]),
                            density_router_hidden_size=8, pad_token_id=0, image_token_id=95),
    # LLaVA around Granite (Granite Vision 3's language model in LLaVA's wrapper): Granite's μP
    # multipliers inside its layers, but the wrapper's own head scales nothing, so Granite's
    # logits_scaling is dropped; the tower named, not run on text.
    "llava-granite": dict(model_type="llava", architectures=["LlavaForConditionalGeneration"], image_token_index=95,
                          text_config=dict(BASE, model_type="granite", vocab_size=96, logits_scaling=4.0,
                                           embedding_multiplier=2.0, residual_multiplier=0.5,
                                           attention_multiplier=0.25),
                          vision_config=dict(model_type="clip_vision_model", hidden_size=16, intermediate_size=24,
                                             num_hidden_layers=1, num_attention_heads=2, image_size=28,
                                             patch_size=14)),
    # Granite 4 Vision: Granite's layers in LLaVA-NeXT's layout under `model.`; its tower, row end
    # and window Q-Former projectors named, not run.
    "granite4_vision": dict(model_type="granite4_vision", architectures=["Granite4VisionForConditionalGeneration"],
                            text_config=dict(BASE, embedding_multiplier=4.0, logits_scaling=2.0,
                                             residual_multiplier=0.5, attention_multiplier=0.25),
                            vision_config=dict(model_type="siglip_vision_model", hidden_size=64, intermediate_size=24,
                                               num_hidden_layers=1, num_attention_heads=2, image_size=32,
                                               patch_size=8),
                            qformer_config={"num_hidden_layers": 1, "intermediate_size": 16,
                                            "cross_attention_frequency": 1},
                            downsample_rate="1/2", deepstack_layer_map=[[0, 1]], spatial_target_layers=[0, 1, 0, 1],
                            image_grid_pinpoints=[[32, 32]], image_token_id=95),
    # PaddleOCR-VL as published: ERNIE 4.5's layers (biased) at the top level, rotated half
    # against half under M-RoPE's sections, the head tied; its tower and projector named, not run.
    "paddleocr-vl": dict(BASE, model_type="paddleocr_vl", architectures=["PaddleOCRVLForConditionalGeneration"],
                         head_dim=8, use_bias=True, tie_word_embeddings=True, rope_theta=500000.0,
                         rope_scaling={"mrope_section": [2, 1, 1], "rope_type": "default", "type": "default"},
                         vision_config=dict(hidden_size=16, intermediate_size=24, num_hidden_layers=1,
                                            num_attention_heads=2, image_size=28, patch_size=14),
                         image_token_id=95, video_token_id=96),
    # HY v4 VL: HY v4's language model (its latents normed at the model's ε, M-RoPE sections),
    # its head hyper-connection named as HY v4 publishes it; its tower named, not run.
    "hy-v4-vl": dict(model_type="hy_v4_vl", architectures=["HYV4VLForConditionalGeneration"],
                     text_config=dict(BASE, model_type="hy_v4_vl_text", num_hidden_layers=4, n_routed_experts=8,
                                      n_shared_experts=1, num_experts_per_tok=2, moe_intermediate_size=16,
                                      kv_lora_rank=16, q_lora_rank=24, qk_nope_head_dim=8, qk_rope_head_dim=8,
                                      v_head_dim=8, index_topk=4, index_n_heads=8, index_head_dim=12, hc_mult=3,
                                      swiglu_limit=0.5, rms_norm_eps=1e-2, bos_token_id=1, eos_token_id=2,
                                      rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                       "mrope_section": [2, 1, 1]}),
                     vision_config=dict(hidden_size=16, intermediate_size=24, num_hidden_layers=1,
                                        num_attention_heads=2, patch_size=8, max_image_size=32, out_hidden_size=32),
                     image_token_id=95, video_token_id=96),
    # HunyuanOCR as published: its language model's keys at the top level under its class's
    # aliases (attention_head_dim, pad_id), RoPE `xdrope` with an NTK alpha and four sections, the
    # head tied; its tower named, not run.
    "hunyuan-vl": dict(BASE, model_type="hunyuan_vl", architectures=["HunYuanVLForConditionalGeneration"],
                       attention_head_dim=8, pad_id=0, tie_word_embeddings=True, max_position_embeddings=32768,
                       rope_scaling={"type": "xdrope", "alpha": 1000.0, "factor": 1.0, "beta_fast": 32,
                                     "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0,
                                     "xdrope_section": [1, 1, 1, 1]},
                       vision_config=dict(hidden_size=16, intermediate_size=24, num_hidden_layers=1,
                                          num_attention_heads=2, patch_size=8, max_image_size=32),
                       image_token_id=95, im_start_id=93, im_end_id=94, im_newline_id=96),
    "glm-ocr": dict(model_type="glm_ocr", architectures=["GlmOcrForConditionalGeneration"],
                    text_config=dict(BASE, model_type="glm_ocr_text", hidden_size=64, partial_rotary_factor=0.5,
                                     rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                      "mrope_section": [2, 1, 1]}),
                    vision_config=dict(model_type="glm_ocr_vision", depth=1, hidden_size=16, intermediate_size=24,
                                       num_heads=2, image_size=28, patch_size=14, out_hidden_size=64,
                                       spatial_merge_size=2),
                    image_token_id=95, video_token_id=96),
    # Qwen3-VL-MoE: Qwen3-MoE's layers (experts in the second and third, always renormalized),
    # the experts stacked as published ([E, hidden, 2·inter]), behind Qwen3-VL's tower.
    "qwen3_vl_moe": dict(model_type="qwen3_vl_moe", architectures=["Qwen3VLMoeForConditionalGeneration"],
                         text_config=dict(BASE, model_type="qwen3_vl_moe_text", head_dim=8, num_hidden_layers=3,
                                          num_experts=4, num_experts_per_tok=2, moe_intermediate_size=24,
                                          mlp_only_layers=[0],
                                          rope_scaling={"rope_type": "default", "mrope_interleaved": True,
                                                        "mrope_section": [2, 1, 1]}),
                         vision_config=dict(depth=1, hidden_size=16, intermediate_size=24, num_heads=2,
                                            num_position_embeddings=16, out_hidden_size=32, patch_size=16,
                                            spatial_merge_size=2, deepstack_visual_indexes=[0]),
                         image_token_id=95, video_token_id=96, vision_start_token_id=93, vision_end_token_id=94),
    # GLM-4.5V: GLM-4.5's experts (a dense first layer, two routed of four and a shared one,
    # sigmoid-scored) in GLM-4.1V's wrapper; q, k and v biased by its class default.
    "glm4v_moe": dict(model_type="glm4v_moe", architectures=["Glm4vMoeForConditionalGeneration"],
                      text_config=dict(BASE, model_type="glm4v_moe_text", hidden_size=64, num_hidden_layers=3,
                                       n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                                       n_shared_experts=1, first_k_dense_replace=1,
                                       rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                        "partial_rotary_factor": 0.5, "mrope_section": [2, 1, 1]}),
                      vision_config=dict(depth=1, hidden_size=16, intermediate_size=24, num_heads=2,
                                         image_size=28, patch_size=14, out_hidden_size=64, spatial_merge_size=2),
                      image_token_id=95, video_token_id=96),
    # Kimi K2.5: DeepSeek-V3's layers (its text config named `kimi_k2`, as published) behind a
    # tiny MoonViT, saved with the published checkpoint's names (`language_model.model.layers.`).
    "kimi_k25": dict(model_type="kimi_k25", architectures=["Kimi_K25ForConditionalGeneration"],
                     text_config=dict(BASE, model_type="kimi_k2", n_routed_experts=8, n_shared_experts=1,
                                      num_experts_per_tok=2, moe_intermediate_size=16, first_k_dense_replace=1,
                                      n_group=2, topk_group=1, routed_scaling_factor=2.5, kv_lora_rank=16,
                                      q_lora_rank=24, qk_nope_head_dim=8, qk_rope_head_dim=8, v_head_dim=8,
                                      num_key_value_heads=4),
                     vision_config=dict(hidden_size=16, intermediate_size=24, num_hidden_layers=1,
                                        num_attention_heads=2, pos_emb_height=4, pos_emb_width=4),
                     projection_hidden_size=16, tie_word_embeddings=False),
    # Qwen3-Omni's thinker: Qwen3-MoE's layers (a dense first layer, then two routed of four,
    # renormalized; M-RoPE sections as published) beside a tiny vision tower and audio encoder.
    "qwen3_omni_moe_thinker": dict(model_type="qwen3_omni_moe_thinker",
                                   architectures=["Qwen3OmniMoeThinkerForConditionalGeneration"],
                                   text_config=dict(BASE, model_type="qwen3_omni_moe_text", num_hidden_layers=3,
                                                    num_experts=4, num_experts_per_tok=2, moe_intermediate_size=24,
                                                    mlp_only_layers=[0],
                                                    rope_scaling={"rope_type": "default", "mrope_section": [2, 1, 1],
                                                                  "interleaved": True}),
                                   vision_config=dict(depth=1, hidden_size=16, intermediate_size=24, num_heads=2,
                                                      num_position_embeddings=16, out_hidden_size=32, patch_size=16,
                                                      spatial_merge_size=2, deepstack_visual_indexes=[0]),
                                   audio_config=dict(d_model=16, encoder_layers=1, encoder_attention_heads=2,
                                                     encoder_ffn_dim=24, num_mel_bins=16, downsample_hidden_size=8,
                                                     output_dim=32)),
    # HyperCLOVA X Vision v2: HyperCLOVA X's layers (its scaled logits) with the whole causal LM,
    # head included, under model.language_model., untied, behind a tiny Qwen2.5-VL tower.
    "hyperclovax_vision_v2": dict(model_type="hyperclovax_vision_v2",
                                  architectures=["HyperCLOVAXVisionV2ForConditionalGeneration"],
                                  text_config=dict(BASE, model_type="hyperclovax", logits_scaling=0.5),
                                  vision_config=dict(model_type="qwen2_5_vl_vision", depth=1, hidden_size=16,
                                                     intermediate_size=24, num_heads=2, out_hidden_size=24,
                                                     fullatt_block_indexes=[0]),
                                  tie_word_embeddings=False),
    # Idefics2: Mistral's layers under model.text_model., the head beside them, behind SigLIP and
    # the perceiver resampler.
    "idefics2": dict(model_type="idefics2", architectures=["Idefics2ForConditionalGeneration"],
                     text_config=dict(BASE, model_type="mistral"),
                     vision_config=dict(hidden_size=16, intermediate_size=24, num_hidden_layers=1,
                                        num_attention_heads=2, image_size=28, patch_size=14),
                     perceiver_config=dict(resampler_n_latents=4, resampler_depth=1, resampler_n_heads=2,
                                           resampler_head_dim=8, num_key_value_heads=1)),
    # MiniCPM-V 4.6: Qwen3.5's linear and full attention layers under model.language_model.,
    # behind a tiny SigLIP with its window merger.
    "minicpmv4_6": dict(model_type="minicpmv4_6", architectures=["MiniCPMV4_6ForConditionalGeneration"],
                        text_config=dict(BASE, model_type="qwen3_5_text", head_dim=8, linear_conv_kernel_dim=2,
                                         linear_key_head_dim=8, linear_value_head_dim=8, linear_num_key_heads=2,
                                         linear_num_value_heads=4, num_hidden_layers=2,
                                         layer_types=["linear_attention", "full_attention"]),
                        vision_config=dict(hidden_size=16, intermediate_size=24, num_hidden_layers=1,
                                           num_attention_heads=2, image_size=28, patch_size=14)),
    # Qianfan-OCR: Qwen3's layers under language_model. as published (transformers 5.25 saves
    # them as language_model.model.encoder.layers.), beside InternViT under its original names.
    "qianfan_ocr": dict(model_type="qianfan_ocr", architectures=["QianfanOCRForConditionalGeneration"],
                        text_config=dict(BASE, model_type="qwen3", head_dim=8),
                        vision_config=dict(hidden_size=16, intermediate_size=24, num_hidden_layers=1,
                                           num_attention_heads=2, image_size=[28, 28], patch_size=[14, 14])),
    # GIT: BERT's post-norm layer with learned positions and an embedding LayerNorm, a head with
    # a bias, beside a tiny image encoder (two frame embeddings) that text alone never reads.
    "git": dict(BASE, model_type="git", num_hidden_layers=2, hidden_act="gelu", layer_norm_eps=1e-5,
                num_image_with_embedding=2, bos_token_id=1, eos_token_id=2,
                vision_config=dict(hidden_size=16, intermediate_size=16, num_hidden_layers=1,
                                   num_attention_heads=2, image_size=28, patch_size=14)),
    # Emu3: a Llama language model beside a tiny VQ-VAE image tokenizer that text alone never
    # reads, saved as its published class saves it, the language model under `text_model.`; the
    # tokenizer's map of image codes (empty here) holds no weights.
    "emu3": dict(model_type="emu3", architectures=["Emu3ForConditionalGeneration"], vocabulary_map={},
                 text_config=dict(BASE, model_type="emu3_text_model", rope_parameters={"rope_type": "default",
                                  "rope_theta": 10000.0}, bos_token_id=1, eos_token_id=2),
                 vq_config=dict(codebook_size=16, embed_dim=4, latent_channels=4, base_channels=32,
                                channel_multiplier=[1], num_res_blocks=1, attn_resolutions=[0],
                                temporal_downsample_factor=2, hidden_size=16, num_attention_heads=2)),
    # HRM-Text: two stacks of two gated layers each, run in 2 cycles of 2 low-level visits and
    # one high-level, every visit with a cache of its own; the embeddings scaled by 1 / 0.02.
    # Its attention is multi-head: the class has no num_key_value_heads.
    # BLT: entropy patching (its threshold set from the random patcher, `entropy_threshold`),
    # cross-attention in every encoder layer and the first decoder layer, GQA in the encoder,
    # two hash functions, sliding windows shorter than the prompt, a projection into the
    # latent width.
    "blt": dict(model_type="blt", architectures=["BltForCausalLM"], vocab_size=260,
                max_position_embeddings=64, local_attention_window_len=8, cross_attn_k=2,
                encoder_hash_byte_group_size=[2, 3], encoder_hash_byte_group_vocab=97,
                encoder_hash_byte_group_nb_functions=2,
                patcher_config=dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                    intermediate_size=48, sliding_window=6, max_position_embeddings=64),
                encoder_config=dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                    num_key_value_heads=2, cross_attn_all_layers=True, cross_attn_k=2,
                                    hidden_size_global=48, max_position_embeddings=64),
                decoder_config=dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                    intermediate_size=40, cross_attn_all_layers=False, cross_attn_k=2,
                                    hidden_size_global=48, max_position_embeddings=64),
                global_config=dict(hidden_size=48, num_hidden_layers=2, num_attention_heads=4,
                                   intermediate_size=64, max_position_embeddings=64)),
    # BLT with patches cut to at most 2 bytes, cross-attention in every decoder layer and the
    # last encoder layer alone, an encoder exactly as wide as the latent transformer's patches
    # (no projection), MHA and full attention in the patcher.
    "blt-max-patch": dict(model_type="blt", architectures=["BltForCausalLM"], vocab_size=260,
                          max_position_embeddings=64, local_attention_window_len=5, cross_attn_k=2,
                          max_patch_length=2, encoder_hash_byte_group_size=[3],
                          encoder_hash_byte_group_vocab=53,
                          patcher_config=dict(hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                              intermediate_size=24, sliding_window=None,
                                              max_position_embeddings=64),
                          encoder_config=dict(hidden_size=24, num_hidden_layers=2, num_attention_heads=4,
                                              cross_attn_k=2, hidden_size_global=48,
                                              max_position_embeddings=64),
                          decoder_config=dict(hidden_size=24, num_hidden_layers=3, num_attention_heads=2,
                                              intermediate_size=40, cross_attn_k=2, hidden_size_global=48,
                                              max_position_embeddings=64),
                          global_config=dict(hidden_size=48, num_hidden_layers=1, num_attention_heads=4,
                                             intermediate_size=64, max_position_embeddings=64)),
    "hrm_text": dict({k: v for k, v in BASE.items() if k != "num_key_value_heads"}, model_type="hrm_text",
                     H_cycles=2, L_cycles=2, bos_token_id=1, eos_token_id=2),
    # Apertus 1.5: Apertus with its head pruned to the first 60 of 97 ids.
    "apertus1p5": dict(BASE, model_type="apertus1p5_text", max_position_embeddings=32768, output_vocab_size=60),
    # DiffLlama: differential attention over 4 K/V heads (8 query heads), λ from random vectors.
    "diffllama": dict(BASE, model_type="diffllama", num_attention_heads=8, num_key_value_heads=4, head_dim=8,
                      num_hidden_layers=3, attention_bias=True),
    # PhiMoE: SparseMixer over 8 experts with a wide jitter window (0.2), so near ties share
    # weight; LayerNorms with shifts, biased attention and head; LongRoPE read its own way
    # (short factors, short_mscale within 64 positions; past 8, long_mscale).
    "phimoe": dict(BASE, model_type="phimoe", num_local_experts=8, router_jitter_noise=0.2, attention_bias=True,
                   lm_head_bias=True, rope_scaling={"rope_type": "longrope", "short_factor": [1.0, 1.1, 1.3, 1.6],
                                                    "long_factor": [1.0, 2.0, 4.0, 8.0], "short_mscale": 1.1,
                                                    "long_mscale": 1.3, "original_max_position_embeddings": 64}),
    "phimoe-long": dict(BASE, model_type="phimoe", num_local_experts=4, rope_scaling={
        "rope_type": "longrope", "short_factor": [1.0, 1.1, 1.3, 1.6], "long_factor": [1.0, 2.0, 4.0, 8.0],
        "short_mscale": 1.1, "long_mscale": 1.3, "original_max_position_embeddings": 8}),
    # Aria: stacked [E, in, out] experts (fc1 gate|up, fc2), top-2 softmax routing, two shared
    # experts of the dense width.
    "aria-text": dict(BASE, model_type="aria_text", head_dim=8, moe_num_experts=4, moe_topk=2,
                      moe_num_shared_experts=2, mlp_bias=True),
    # A.X-K1: DeepSeek-V3 with the MoE output normed; dense layer 0, MoE every second layer
    # after it (moe_layer_freq 2: layers 2 and 4 route).
    "axk1": dict(BASE, model_type="axk1", num_hidden_layers=5, n_routed_experts=8, n_shared_experts=1,
                 num_experts_per_tok=2, moe_intermediate_size=16, first_k_dense_replace=1, moe_layer_freq=2,
                 n_group=2, topk_group=1, routed_scaling_factor=2.5, kv_lora_rank=16, q_lora_rank=24,
                 qk_nope_head_dim=8, qk_rope_head_dim=8, v_head_dim=8, num_key_value_heads=4),
    # CTRL: sqrt(d)-scaled embeddings plus CTRL's sinusoids (d = 33, odd: 17 sines, 16 cosines),
    # biased head tied to the embedding.
    "ctrl": dict(model_type="ctrl", n_embd=33, n_head=3, n_layer=2, dff=48, vocab_size=97, n_positions=64),
    # GPT-NeoX-Japanese: per-head q, k, v; a bias on the last layer's output alone; half the
    # head rotated; MLP 3 x hidden.
    "gpt-neox-japanese": dict(model_type="gpt_neox_japanese", hidden_size=32, num_attention_heads=4,
                              num_hidden_layers=3, intermediate_multiple_size=3, vocab_size=97,
                              max_position_embeddings=128,
                              rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                               "partial_rotary_factor": 0.5}),
    # ModernBERT-decoder: a normed embedding, layer 0 without its attention norm, GeGLU, layers
    # 0 and 3 global (base 160k), 1 and 2 sliding over local_attention / 2 = 4 (base 10k);
    # LayerNorms with shifts, the prediction head, a biased tied decoder.
    "modernbert-decoder": dict(model_type="modernbert-decoder", hidden_size=32, intermediate_size=48,
                               num_hidden_layers=4, num_attention_heads=4, vocab_size=97,
                               max_position_embeddings=128, local_attention=8, norm_bias=True, mlp_bias=True,
                               attention_bias=True, classifier_bias=True, pad_token_id=0, bos_token_id=1,
                               eos_token_id=2, cls_token_id=1, sep_token_id=2),
    # ... as saved: a sliding_window key (3) wins over local_attention / 2 (8), as the class sets
    # it after deriving its own.
    "modernbert-decoder-saved": dict(model_type="modernbert-decoder", hidden_size=32, intermediate_size=48,
                                     num_hidden_layers=3, num_attention_heads=4, vocab_size=97,
                                     max_position_embeddings=128, local_attention=16, sliding_window=3,
                                     pad_token_id=0, bos_token_id=1, eos_token_id=2, cls_token_id=1, sep_token_id=2),
    "deepseek-v3": dict(BASE, model_type="deepseek_v3", n_routed_experts=8, n_shared_experts=1, num_experts_per_tok=2,
                        moe_intermediate_size=16, first_k_dense_replace=1, n_group=2, topk_group=1,
                        routed_scaling_factor=2.5, kv_lora_rank=16, q_lora_rank=24, qk_nope_head_dim=8,
                        qk_rope_head_dim=8, v_head_dim=8, num_key_value_heads=4,
                        rope_scaling={"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32,
                                      "beta_fast": 32, "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0}),
    # Gemma 4: local layers with heads of 8, global ones of 16 with keys as values on one K/V head;
    # the last three layers reuse earlier keys and values; per-layer embeddings of 8.
    "gemma4": dict(model_type="gemma4_text", hidden_size=32, intermediate_size=48, num_hidden_layers=6,
                   num_attention_heads=4, num_key_value_heads=2, head_dim=8, global_head_dim=16,
                   vocab_size=97, max_position_embeddings=128, pad_token_id=0, sliding_window=4,
                   layer_types=["sliding_attention", "full_attention", "sliding_attention",
                                "sliding_attention", "full_attention", "full_attention"],
                   vocab_size_per_layer_input=97, hidden_size_per_layer_input=8, num_kv_shared_layers=3,
                   attention_k_eq_v=True, num_global_key_value_heads=1, use_double_wide_mlp=True),
    # Gemma 4's unified models' language model: no per-layer embeddings, its own defaults.
    "gemma4-unified": dict(model_type="gemma4_unified_text", hidden_size=32, intermediate_size=48,
                           num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                           global_head_dim=16, vocab_size=97, max_position_embeddings=128, pad_token_id=0,
                           sliding_window=4, num_kv_shared_layers=2, attention_k_eq_v=True,
                           layer_types=["sliding_attention", "full_attention", "sliding_attention",
                                        "full_attention"]),
    # Gemma 4's experts beside the MLP in every layer (26B-A4B's structure).
    "gemma4-moe": dict(model_type="gemma4_text", hidden_size=32, intermediate_size=48, num_hidden_layers=3,
                       num_attention_heads=4, num_key_value_heads=2, head_dim=8, global_head_dim=16,
                       vocab_size=97, max_position_embeddings=128, pad_token_id=0, sliding_window=4,
                       hidden_size_per_layer_input=0, enable_moe_block=True, num_experts=6, top_k_experts=2,
                       moe_intermediate_size=12, attention_k_eq_v=True, num_global_key_value_heads=1),
    # Without per-layer embeddings or sharing, its global heads as transformers saves them
    # (per_layer_config), a final softcap and RoPE of its own.
    "gemma4-plain": dict(model_type="gemma4_text", hidden_size=32, intermediate_size=48, num_hidden_layers=4,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=8, vocab_size=97,
                         max_position_embeddings=128, pad_token_id=0, sliding_window=4,
                         layer_types=["sliding_attention", "full_attention", "sliding_attention",
                                      "full_attention"],
                         hidden_size_per_layer_input=0, final_logit_softcapping=15.0,
                         per_layer_config={"1": {"head_dim": 16}, "3": {"head_dim": 16}},
                         rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": 100.0},
                                          "full_attention": {"rope_type": "proportional",
                                                             "partial_rotary_factor": 0.5,
                                                             "rope_theta": 10000.0}}),
    # LongCat-Flash: two sublayers a layer (num_layers 2: four sublayers, two shortcuts), four
    # zero-computation experts beside four routed ones, top-3, so that tokens pick both kinds.
    "longcat-flash": dict(model_type="longcat_flash", hidden_size=32, ffn_hidden_size=48, num_layers=2,
                          num_attention_heads=4, vocab_size=97, max_position_embeddings=128, pad_token_id=0,
                          n_routed_experts=4, zero_expert_num=4, moe_topk=3, expert_ffn_hidden_size=16,
                          routed_scaling_factor=6.0, kv_lora_rank=16, q_lora_rank=24, qk_nope_head_dim=8,
                          qk_rope_head_dim=8, head_dim=8, v_head_dim=6),
    "longcat-flash-yarn": dict(model_type="longcat_flash", hidden_size=32, ffn_hidden_size=48, num_hidden_layers=4,
                               num_attention_heads=4, vocab_size=97, max_position_embeddings=128, pad_token_id=0,
                               n_routed_experts=4, zero_expert_num=2, moe_topk=2, expert_ffn_hidden_size=16,
                               routed_scaling_factor=2.0, kv_lora_rank=16, q_lora_rank=24,
                               qk_nope_head_dim=8, qk_rope_head_dim=4, head_dim=4, v_head_dim=8,
                               rope_parameters={"rope_type": "yarn", "rope_theta": 10000000.0, "factor": 4.0,
                                                "original_max_position_embeddings": 32, "beta_fast": 32,
                                                "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0}),
    "deepseek-v2": dict(BASE, model_type="deepseek_v2", n_routed_experts=4, n_shared_experts=2, num_experts_per_tok=2,
                        moe_intermediate_size=16, first_k_dense_replace=1, topk_method="greedy", kv_lora_rank=16,
                        q_lora_rank=None, qk_nope_head_dim=8, qk_rope_head_dim=8, v_head_dim=8,
                        num_key_value_heads=4, routed_scaling_factor=1.0),
    # DeepSeek-V2 with mlp_bias: the dense layer's MLP and the shared experts carry biases.
    "deepseek-v2-bias": dict(BASE, model_type="deepseek_v2", n_routed_experts=4, n_shared_experts=2,
                             num_experts_per_tok=2, moe_intermediate_size=16, first_k_dense_replace=1,
                             topk_method="greedy", kv_lora_rank=16, q_lora_rank=None, qk_nope_head_dim=8,
                             qk_rope_head_dim=8, v_head_dim=8, num_key_value_heads=4, routed_scaling_factor=1.0,
                             mlp_bias=True),
    "gpt-oss": dict(BASE, model_type="gpt_oss", head_dim=8, num_local_experts=4, num_experts_per_tok=2,
                    intermediate_size=32, sliding_window=4),
    # Llama 4: the NoPE layers' queries grow every 4 positions (floor_scale), so the toy's 12
    # tokens see the attention temperature at work.
    "llama4": dict(BASE, model_type="llama4_text", head_dim=8, num_local_experts=4, num_experts_per_tok=1,
                   intermediate_size=32, intermediate_size_mlp=48, interleave_moe_layer_step=2,
                   attention_chunk_size=4, no_rope_layer_interval=2, num_hidden_layers=4, floor_scale=4,
                   attn_scale=0.5),
    # Mamba: 64 channels with a state of 6, a step of rank 4; biased projections.
    "mamba": dict(model_type="mamba", hidden_size=32, num_hidden_layers=2, vocab_size=97, state_size=6,
                  time_step_rank=4, conv_kernel=4, use_bias=True, pad_token_id=0),
    # Falcon-Mamba: the step's input, B and C RMS-normed without weights; no convolution bias.
    "falcon_mamba": dict(model_type="falcon_mamba", hidden_size=32, num_hidden_layers=2, vocab_size=97,
                         state_size=8, conv_kernel=3, use_conv_bias=False, mixer_rms_eps=1e-5,
                         tie_word_embeddings=False, pad_token_id=0),
    # Jamba: Mamba layers (the step, B and C RMS-normed with weights) around an attention layer
    # without positions; experts every other layer, not renormalized.
    "jamba": dict(BASE, model_type="jamba", num_hidden_layers=4, attn_layer_period=4, attn_layer_offset=2,
                  expert_layer_period=2, expert_layer_offset=1, num_experts=4, num_experts_per_tok=2,
                  mamba_d_state=6, mamba_dt_rank=4, mamba_d_conv=4, mamba_expand=2, mamba_proj_bias=True),
    # LFM2: short gated convolutions (with biases) around an attention layer with per-head QK
    # norms; the MLP's width derived from block_ff_dim.
    "lfm2": dict(BASE, model_type="lfm2", num_hidden_layers=3, layer_types=["conv", "full_attention", "conv"],
                 conv_L_cache=3, conv_bias=True, block_ff_dim=72, block_multiple_of=16, norm_eps=1e-5),
    # Qwen3-Next: Gated DeltaNet layers (2 key heads serving 4 value heads, projections in
    # key-head groups) around a gated attention layer with a half-rotated head; experts with a
    # gated shared expert, the last layer a dense MLP (mlp_only_layers).
    "qwen3_next": dict(BASE, model_type="qwen3_next", num_hidden_layers=3, full_attention_interval=2,
                       head_dim=8, partial_rotary_factor=0.5, linear_num_key_heads=2,
                       linear_num_value_heads=4, linear_key_head_dim=8, linear_value_head_dim=6,
                       linear_conv_kernel_dim=3, num_experts=4, num_experts_per_tok=2,
                       moe_intermediate_size=16, shared_expert_intermediate_size=24, mlp_only_layers=[2]),
    # Qwen3.5: the DeltaNet's projections apart, as many value heads as key heads, a dense MLP.
    "qwen3_5_text": dict(BASE, model_type="qwen3_5_text", num_hidden_layers=2,
                         layer_types=["linear_attention", "full_attention"], head_dim=8,
                         linear_num_key_heads=2, linear_num_value_heads=2, linear_key_head_dim=8,
                         linear_value_head_dim=8, linear_conv_kernel_dim=4, tie_word_embeddings=True),
    # Qwen3.5-MoE: experts in every layer, three value heads per key head.
    "qwen3_5_moe_text": dict(BASE, model_type="qwen3_5_moe_text", num_hidden_layers=2,
                             full_attention_interval=2, head_dim=8, linear_num_key_heads=1,
                             linear_num_value_heads=3, linear_key_head_dim=8, linear_value_head_dim=8,
                             num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                             shared_expert_intermediate_size=24),
    # Qwen4-Exp: Qwen3.5-MoE's layers under three gated residual streams, each attention layer
    # with a QSA indexer (4 heads, blocks of 2 tokens, 2 blocks kept beside the tail), half of
    # each head rotated, the DeltaNet's output gated by a sigmoid; no final norm.
    "qwen4-exp": dict(BASE, model_type="qwen4_exp_text", num_hidden_layers=3,
                      layer_types=["indexed_attention", "linear_attention", "indexed_attention"], head_dim=8,
                      rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5},
                      linear_num_key_heads=1, linear_num_value_heads=2, linear_key_head_dim=8,
                      linear_value_head_dim=8, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                      shared_expert_intermediate_size=24, hc_count=3, hc_lowrank=6, indexer_n_heads=4,
                      indexer_kv_heads=1, indexer_head_dim=8, indexer_budget=4, indexer_compress_ratio=2,
                      output_gate_type="sigmoid"),
    # ... with hashed n-gram embeddings in two of its DeltaNet layers (tables of their own, saved
    # in 7 uneven shards), an end of sequence among the ids (3) that n-grams stop at, two streams.
    "qwen4-exp-ple": dict(BASE, model_type="qwen4_exp_text", num_hidden_layers=4,
                          layer_types=["indexed_attention", "linear_attention", "indexed_attention",
                                       "linear_attention"], head_dim=8,
                          linear_num_key_heads=1, linear_num_value_heads=2, linear_key_head_dim=8,
                          linear_value_head_dim=8, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                          shared_expert_intermediate_size=24, hc_count=2, hc_lowrank=4, indexer_n_heads=4,
                          indexer_kv_heads=1, indexer_head_dim=8, indexer_budget=4, indexer_compress_ratio=2,
                          ple_layer_ids=[2, 4], ple_embed_dim=16, ngram_size=3, heads_per_ngram=2,
                          ngram_vocab_size_base=50, make_ngram_vocab_size_divisible_by=8, split_ngram_parts=7,
                          ple_conv_kernel_size=3, eos_token_id=3),
    # LFM2-MoE: short convolutions around an attention layer, one dense layer first, then
    # sigmoid-scored experts chosen with a per-expert bias, renormalized and scaled.
    "lfm2_moe": dict(BASE, model_type="lfm2_moe", num_hidden_layers=3, layer_types=["conv", "full_attention", "conv"],
                     num_dense_layers=1, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                     routed_scaling_factor=1.5, conv_bias=True, norm_eps=1e-5),
    # LFM3: short convolutions among a full (proportional RoPE, half of each head's pairs
    # turning) and a sliding-window attention layer, each head gated, norms after each sublayer.
    "lfm3": dict(BASE, model_type="lfm3", num_hidden_layers=4,
                 layer_types=["conv", "full_attention", "conv", "sliding_attention"], head_dim=16,
                 sliding_window=4, conv_L_cache=3, norm_eps=1e-5),
    # ... by the class's layer pattern, without the gates or the norms after each sublayer.
    "lfm3-plain": dict(BASE, model_type="lfm3", num_hidden_layers=5, head_dim=16, sliding_window=4,
                       use_attention_gate=False, use_sandwich_norm=False),
    # Kimi Linear: Kimi Delta Attention (a decay per key channel, a sigmoid output gate) around a
    # latent-attention layer without positions, named by the checkpoint's 1-indexed lists; one
    # dense layer, then V3's sigmoid experts with a shared one.
    "kimi_linear": dict(BASE, model_type="kimi_linear", num_hidden_layers=3, num_key_value_heads=4,
                        kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=8,
                        num_experts=4, num_experts_per_token=2, moe_intermediate_size=16,
                        routed_scaling_factor=1.5,
                        linear_attn_config={"full_attn_layers": [2], "kda_layers": [1, 3], "head_dim": 8,
                                            "num_heads": 3, "short_conv_kernel_size": 3}),
    # ... by layer_types and the top-level keys, with a query latent, two expert groups and no
    # dense layer; the head untied whatever tie_word_embeddings says.
    "kimi_linear-types": dict(BASE, model_type="kimi_linear", num_hidden_layers=3, num_key_value_heads=4,
                              tie_word_embeddings=True,
                              layer_types=["linear_attention", "linear_attention", "full_attention"],
                              linear_head_dim=6, linear_num_heads=2, linear_conv_kernel_dim=4,
                              q_lora_rank=12, kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=4,
                              v_head_dim=6, num_experts=4, num_experts_per_token=2, num_expert_group=2,
                              topk_group=1, first_k_dense_replace=0, moe_intermediate_size=16),
    # OLMo hybrid: pre-norm Gated DeltaNet layers (q, k, v projected and convolved apart, β up
    # to 2) around a post-norm attention layer with QK norms, by the class's pattern.
    "olmo_hybrid": dict(BASE, model_type="olmo_hybrid", num_hidden_layers=4, num_key_value_heads=4,
                        linear_num_key_heads=2, linear_num_value_heads=2, linear_key_head_dim=8,
                        linear_value_head_dim=12, linear_conv_kernel_dim=3, eos_token_id=1),
    # ... by layer_types, β within 1, the class's derived head widths, grouped K/V heads.
    "olmo_hybrid-types": dict(BASE, model_type="olmo_hybrid", num_hidden_layers=3,
                              layer_types=["full_attention", "linear_attention", "linear_attention"],
                              linear_allow_neg_eigval=False, eos_token_id=1),
    # ... fewer than four layers: the last attends.
    "olmo_hybrid-short": dict(BASE, model_type="olmo_hybrid", num_hidden_layers=2, eos_token_id=1),
    # Ling's hybrid: Kimi Delta Attention with full-rank gates and the decay bounded below, by
    # layer groups of 3, around latent attention with interleaved RoPE and a gate per head; one
    # dense layer, then sigmoid experts in two groups with a shared one.
    "bailing_hybrid": dict(BASE, model_type="bailing_hybrid", num_hidden_layers=3, num_key_value_heads=4,
                           head_dim=6, short_conv_kernel_size=3, kv_lora_rank=16, qk_nope_head_dim=8,
                           qk_rope_head_dim=4, v_head_dim=8, num_experts=4, num_experts_per_token=2,
                           num_expert_group=2, topk_group=1, first_k_dense_replace=1, moe_intermediate_size=16,
                           layer_group_size=3, rope_theta=10000.0, eos_token_id=1),
    # ... with per-layer clips after the activation (transformers 5.25), the routed experts' and
    # the shared ones' apart, some layers without; limits small enough that the toy's values reach them.
    "bailing_hybrid-clips": dict(BASE, model_type="bailing_hybrid", num_hidden_layers=4, num_key_value_heads=4,
                                 head_dim=6, short_conv_kernel_size=3, kv_lora_rank=16, qk_nope_head_dim=8,
                                 qk_rope_head_dim=4, v_head_dim=8, num_experts=4, num_experts_per_token=2,
                                 num_expert_group=1, topk_group=1, first_k_dense_replace=1,
                                 moe_intermediate_size=16, layer_group_size=2, rope_theta=10000.0, eos_token_id=1,
                                 expert_swiglu_limit_list=[0, 0.01, 0.02, 0],
                                 share_expert_swiglu_limit_list=[0.01, 0, 0.015, 0.02]),
    # ... by layer_types, the decay unbounded, a query latent, the head untied whatever
    # tie_word_embeddings says.
    "bailing_hybrid-types": dict(BASE, model_type="bailing_hybrid", num_hidden_layers=3, num_key_value_heads=4,
                                 tie_word_embeddings=True,
                                 layer_types=["full_attention", "linear_attention", "linear_attention"],
                                 head_dim=8, kda_safe_gate=False, q_lora_rank=12, kv_lora_rank=16,
                                 qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=8, num_experts=4,
                                 num_experts_per_token=2, num_expert_group=1, topk_group=1,
                                 first_k_dense_replace=0, moe_intermediate_size=16, eos_token_id=1),
    # Cohere Compass: Cohere 2's parallel block, RoPE (half against half) in the sliding layers
    # only, the full one's entry null, logits scaled.
    "cohere_compass_text": dict(BASE, model_type="cohere_compass_text", num_hidden_layers=3, sliding_window=5,
                                layer_types=["sliding_attention", "full_attention", "sliding_attention"],
                                rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": 50000.0,
                                                                       "mrope_section": [2, 1, 1]},
                                                 "full_attention": None},
                                logit_scale=0.5),
    # ... in its wrapper (Qwen3-VL's), its head tied by the wrapper's flag; the tower named, not run.
    "cohere_compass": dict(model_type="cohere_compass", architectures=["CohereCompassForConditionalGeneration"],
                           text_config=dict(BASE, model_type="cohere_compass_text", num_hidden_layers=3,
                                            sliding_window=5,
                                            layer_types=["sliding_attention", "full_attention", "sliding_attention"],
                                            rope_parameters={"sliding_attention": {"rope_type": "default",
                                                                                   "rope_theta": 50000.0,
                                                                                   "mrope_section": [2, 1, 1]},
                                                             "full_attention": None},
                                            logit_scale=0.5),
                           vision_config=dict(depth=1, hidden_size=16, intermediate_size=24, num_heads=2,
                                              out_hidden_size=32, patch_size=16, num_position_embeddings=16,
                                              deepstack_visual_indexes=[0]),
                           tie_word_embeddings=True, image_token_id=95, video_token_id=96),
    # ... every layer full and rotating, logits unscaled.
    "cohere_compass_text-full": dict(BASE, model_type="cohere_compass_text", num_hidden_layers=2,
                                     rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 10000.0}}),
    # MiniMax: lightning attention in the odd layers (by the class's default), GQA in the even
    # ones, Mixtral's experts; prompt chunks of 5 in transformers' prefill (5, 5, 2).
    "minimax": dict(BASE, model_type="minimax", num_hidden_layers=4, head_dim=8, num_local_experts=4,
                    num_experts_per_tok=2, block_size=5, rope_theta=10000.0, eos_token_id=1),
    # ... by layer_types, every residual factor its own, sliding-window attention, GELU.
    "minimax-types": dict(BASE, model_type="minimax", num_hidden_layers=3, head_dim=6, num_local_experts=4,
                          num_experts_per_tok=2, block_size=4, rope_theta=10000.0, eos_token_id=1,
                          layer_types=["linear_attention", "full_attention", "linear_attention"],
                          sliding_window=5, hidden_act="gelu", full_attn_alpha_factor=1.5,
                          full_attn_beta_factor=0.75, linear_attn_alpha_factor=0.5, linear_attn_beta_factor=1.25,
                          mlp_alpha_factor=0.8, mlp_beta_factor=1.3),
    # RWKV-4: time and channel mixing, the stream halved after every second layer in inference.
    "rwkv": dict(model_type="rwkv", hidden_size=32, num_hidden_layers=5, vocab_size=97, rescale_every=2,
                 context_length=64, pad_token_id=0),
    # ... narrower time mixing, a wider channel mixing, no rescaling, a tied head (its state,
    # sized by hidden_size, cannot hold the narrower sums: run without it).
    "rwkv-sizes": dict(model_type="rwkv", hidden_size=24, num_hidden_layers=3, vocab_size=97, attention_hidden_size=16,
                       intermediate_size=40, rescale_every=0, tie_word_embeddings=True, pad_token_id=0,
                       use_cache=False),
    # RecurrentGemma: Griffin's recurrent blocks and local attention (window 5 of the 12 ids) by
    # the class's pattern, one K/V head, half of each head rotated, a wider RG-LRU in 4 blocks.
    "recurrent_gemma": dict(model_type="recurrent_gemma", hidden_size=32, intermediate_size=48, num_hidden_layers=4,
                            num_attention_heads=4, num_key_value_heads=1, vocab_size=97, lru_width=40,
                            attention_window_size=5, conv1d_width=3, logits_soft_cap=3.0, pad_token_id=0),
    # ... by its own block types, biases on q, k and v, an untied head, the class's width.
    "recurrent_gemma-types": dict(model_type="recurrent_gemma", hidden_size=24, intermediate_size=40, num_hidden_layers=3,
                                  num_attention_heads=2, vocab_size=97, block_types=["attention", "recurrent"],
                                  attention_bias=True, tie_word_embeddings=False, attention_window_size=8,
                                  pad_token_id=0),
    # Lara Mini: by its pattern of 5, Gated DeltaNet (one fused input projection, 2 key heads
    # serving 4 value heads) among sliding layers that rotate and a full one that does not;
    # stacked experts beside an ungated shared one in every layer.
    "lara_mini": dict(BASE, model_type="lara_mini", num_hidden_layers=5, head_dim=8, linear_num_key_heads=2,
                      linear_num_value_heads=4, linear_key_head_dim=8, linear_value_head_dim=6,
                      linear_conv_kernel_dim=3, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                      shared_expert_intermediate_size=24, sliding_window=4, eos_token_id=1),
    # ... by layer_types, without renormalizing the chosen experts' weights.
    "lara_mini-types": dict(BASE, model_type="lara_mini", num_hidden_layers=3, head_dim=8,
                            layer_types=["full_attention", "linear_attention", "sliding_attention"],
                            linear_num_key_heads=2, linear_num_value_heads=2, linear_key_head_dim=8,
                            linear_value_head_dim=8, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                            shared_expert_intermediate_size=16, sliding_window=5, norm_topk_prob=False,
                            eos_token_id=1),
    # Falcon-H1: attention and Mamba2 side by side in every layer (the scan gated, not normed),
    # every μP multiplier set: on the embedding, the head, the keys, each mixer's input and
    # output, the projection's five parts and the MLP's gate and output.
    "falcon_h1": dict(BASE, model_type="falcon_h1", mamba_d_ssm=64, mamba_n_heads=8, mamba_d_state=6,
                      mamba_n_groups=2, mamba_d_conv=3, mamba_chunk_size=5, embedding_multiplier=1.5,
                      lm_head_multiplier=0.75, key_multiplier=0.5, attention_in_multiplier=0.8,
                      attention_out_multiplier=1.2, ssm_in_multiplier=1.3, ssm_out_multiplier=0.7,
                      ssm_multipliers=[1.1, 0.9, 0.8, 1.2, 0.6], mlp_multipliers=[0.9, 1.4]),
    # ... the width from expand, the scan RMS-normed before its gate, biased projections.
    "falcon_h1-normed": dict(BASE, model_type="falcon_h1", mamba_d_ssm=None, mamba_expand=2, mamba_n_heads=4,
                             mamba_d_state=8, mamba_n_groups=1, mamba_chunk_size=4, mamba_rms_norm=True,
                             mamba_proj_bias=True, projectors_bias=True, attention_bias=True, mlp_bias=True,
                             head_dim=16),
    # Mamba2: 8 heads of 8 in 2 groups, a state of 6, chunks of 5 so the prompt crosses chunks;
    # biased projections, and a convolution without a bias.
    "mamba2": dict(model_type="mamba2", hidden_size=32, num_hidden_layers=2, vocab_size=97, num_heads=8,
                   head_dim=8, expand=2, n_groups=2, state_size=6, conv_kernel=4, chunk_size=5, pad_token_id=0),
    "mamba2-biased": dict(model_type="mamba2", hidden_size=32, num_hidden_layers=2, vocab_size=97, num_heads=4,
                          head_dim=16, expand=2, n_groups=1, state_size=8, conv_kernel=3, chunk_size=4,
                          use_bias=True, use_conv_bias=False, tie_word_embeddings=True, pad_token_id=0),
    # Bamba: Mamba2 layers around one attention layer (half of each head rotated), a dense MLP
    # in every layer.
    "bamba": dict(BASE, model_type="bamba", num_hidden_layers=3, attn_layer_indices=[1], mamba_n_heads=8,
                  mamba_d_head=8, mamba_n_groups=2, mamba_d_state=6, mamba_d_conv=4, mamba_chunk_size=5,
                  mamba_proj_bias=True, attention_bias=True),
    # GraniteMoeHybrid: Mamba2 layers around an attention layer that rotates, experts beside a
    # shared MLP, Granite's multipliers (legacy layer names, as Granite 4.0-H's configs give them).
    "granitemoehybrid": dict(BASE, model_type="granitemoehybrid", num_hidden_layers=3,
                             layer_types=["mamba", "attention", "mamba"], position_embedding_type="rope",
                             num_local_experts=4, num_experts_per_tok=2, shared_intermediate_size=24,
                             mamba_n_heads=8, mamba_n_groups=2, mamba_d_state=6, mamba_d_conv=4, mamba_chunk_size=5,
                             embedding_multiplier=2.0, residual_multiplier=0.5, attention_multiplier=0.1,
                             logits_scaling=4.0),
    # ... without experts (its shared MLP the whole FFN) and without positions.
    "granitemoehybrid-dense": dict(BASE, model_type="granitemoehybrid", num_hidden_layers=2,
                                   layer_types=["mamba", "attention"], num_local_experts=0,
                                   shared_intermediate_size=40, mamba_n_heads=4, mamba_d_state=8,
                                   mamba_chunk_size=4),
    # Nemotron-H: one sublayer a layer (Mamba2, ReLU² experts with a shared one, attention
    # without positions, a ReLU² MLP), grouped sigmoid routing with a correction bias; a Δ floor
    # the scan never reaches, so that transformers' prompt and decode paths agree
    # (decodes_as_prompted).
    "nemotron_h": dict(model_type="nemotron_h", hidden_size=32, vocab_size=97, pad_token_id=0,
                       layers_block_type=["linear_attention", "moe", "full_attention", "mlp", "linear_attention"],
                       num_attention_heads=4, num_key_value_heads=2, head_dim=8, intermediate_size=48,
                       mamba_num_heads=4, mamba_head_dim=8, ssm_state_size=6, n_groups=2, chunk_size=5,
                       n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                       moe_shared_expert_intermediate_size=24, n_group=2, topk_group=1,
                       routed_scaling_factor=1.5, use_bias=True, time_step_min=1e-9),
    # ... with a large time_step_min, which transformers 5.24 floored Δ at in a prompt's scan and
    # 5.25 reads for Δ's initialization only.
    "nemotron_h-floor": dict(model_type="nemotron_h", hidden_size=32, vocab_size=97, pad_token_id=0,
                             hybrid_override_pattern="M-*M", intermediate_size=48, mamba_num_heads=4,
                             mamba_head_dim=8, ssm_state_size=6, n_groups=1, time_step_min=0.9,
                             num_attention_heads=4, num_key_value_heads=4, head_dim=8),
    # xLSTM: mLSTM layers (4 heads, keys of 16, values of 32) with SwiGLU MLPs; soft caps low
    # enough to bind; the prompt's chunked kernel in chunks of 4, in float32 (its bf16 default
    # is a precision, not another model).
    "xlstm": dict(model_type="xlstm", hidden_size=128, num_hidden_layers=2, num_heads=4, vocab_size=97,
                  pad_token_id=1, ffn_proj_factor=1.5, gate_soft_cap=5.0, output_logit_soft_cap=4.0,
                  norm_eps=1e-5, chunk_size=4, autocast_kernel_dtype="float32"),
    # xLSTM with biases on every projection, the blocks' RMS norms and the per-head LayerNorm
    # (the output norm has none).
    "xlstm-bias": dict(model_type="xlstm", hidden_size=128, num_hidden_layers=2, num_heads=2, vocab_size=97,
                       pad_token_id=1, use_bias=True, ffn_proj_factor=1.5, gate_soft_cap=5.0,
                       output_logit_soft_cap=4.0, chunk_size=4, autocast_kernel_dtype="float32"),
    # xLSTM stored fused (weight_mode "fused"): q | k | v | o in one projection, both gates in
    # another, the MLP's gate and up in a third; with biases, and without.
    "xlstm-fused": dict(model_type="xlstm", hidden_size=128, num_hidden_layers=2, num_heads=4, vocab_size=97,
                        pad_token_id=1, weight_mode="fused", ffn_proj_factor=1.5, gate_soft_cap=5.0,
                        output_logit_soft_cap=4.0, norm_eps=1e-5, chunk_size=4, autocast_kernel_dtype="float32"),
    "xlstm-fused-bias": dict(model_type="xlstm", hidden_size=128, num_hidden_layers=2, num_heads=2, vocab_size=97,
                             pad_token_id=1, weight_mode="fused", use_bias=True, ffn_proj_factor=1.5,
                             gate_soft_cap=5.0, output_logit_soft_cap=4.0, chunk_size=4,
                             autocast_kernel_dtype="float32"),
    # Zamba: multi-head Mamba layers (x and z interleaved, each head its own step, B and C), two
    # of them running the one shared block first (K/V grouped, no positions), biases on the
    # mixer's projections.
    "zamba": dict(model_type="zamba", hidden_size=32, vocab_size=97, pad_token_id=0, num_hidden_layers=5,
                  layers_block_type=["linear_attention", "linear_attention", "hybrid", "mamba", "hybrid"],
                  num_attention_heads=4, num_key_value_heads=2, intermediate_size=48, n_mamba_heads=2,
                  mamba_d_state=6, mamba_dt_rank=4, mamba_proj_bias=True, max_position_embeddings=128),
    # Zamba2: Mamba2 layers, three of them running a shared block first, two blocks taken in
    # turn (the first and third visits share one), rotated, K/V grouped, biases on the linear
    # layers; a Δ floor the scan never reaches (transformers decodes without it).
    "zamba2": dict(model_type="zamba2", hidden_size=32, vocab_size=97, pad_token_id=0, num_hidden_layers=5,
                   layers_block_type=["hybrid", "linear_attention", "hybrid", "mamba", "hybrid"],
                   num_mem_blocks=2, num_attention_heads=4, num_key_value_heads=2, intermediate_size=48,
                   adapter_rank=4, n_mamba_heads=4, mamba_d_state=6, mamba_ngroups=2, chunk_size=3,
                   add_bias_linear=True, use_mem_rope=True, time_step_min=1e-9,
                   max_position_embeddings=128),
    # ... with adapters on Q, K and V too, one block, no positions.
    "zamba2-adapters": dict(model_type="zamba2", hidden_size=32, vocab_size=97, pad_token_id=0, num_hidden_layers=3,
                            layers_block_type=["linear_attention", "hybrid", "hybrid"],
                            num_attention_heads=4, intermediate_size=40, adapter_rank=3,
                            use_shared_attention_adapter=True, n_mamba_heads=2, mamba_d_state=8,
                            time_step_min=1e-9, max_position_embeddings=128),
    # Ministral 3: YaRN, and queries scaled up every 4 positions.
    "ministral3": dict(BASE, model_type="ministral3", head_dim=8, sliding_window=6,
                       rope_parameters={"rope_type": "yarn", "rope_theta": 1000000.0, "factor": 16.0,
                                        "original_max_position_embeddings": 4, "max_position_embeddings": 128,
                                        "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 1.0,
                                        "mscale_all_dim": 1.0, "llama_4_scaling_beta": 0.5}),
    # PaliGemma 2's language model (Gemma 2's, a sliding layer of window 4 and a full one) on text
    # alone: the prompt a prefix that sees itself both ways in both layers, past the window; its
    # positions from 1. The vision tower is there, not run.
    "paligemma": dict(model_type="paligemma", architectures=["PaliGemmaForConditionalGeneration"],
                      image_token_index=96, projection_dim=32,
                      text_config=dict(model_type="gemma2", hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                                       num_attention_heads=4, num_key_value_heads=2, head_dim=8, vocab_size=97,
                                       sliding_window=4, query_pre_attn_scalar=8, pad_token_id=0),
                      vision_config=dict(model_type="siglip_vision_model", hidden_size=16, intermediate_size=24,
                                         num_hidden_layers=1, num_attention_heads=2, image_size=28, patch_size=14)),
    # Inkling 2 in its wrapper: the language model above, its vision tower named, not run.
    "inkling2-wrapped": dict(model_type="inkling2", architectures=["Inkling2ForConditionalGeneration"],
                             image_token_id=96,
                             vision_config=dict(model_type="inkling2_vision", hidden_size=16, num_hidden_layers=1,
                                                num_attention_heads=2, patch_size=8, posemb_grid_size=4,
                                                projection_hidden_dim=24, text_hidden_size=32)),
    # Mistral 4: DeepSeek-V3's latent attention with queries scaled up every 4 positions, softmax
    # routing with a shared expert, every layer's MLP the experts; YaRN as its class has it.
    "mistral4": dict(BASE, model_type="mistral4", architectures=["Mistral4ForCausalLM"], n_routed_experts=8, n_shared_experts=1, num_experts_per_tok=2,
                     moe_intermediate_size=16, kv_lora_rank=16, q_lora_rank=24, qk_nope_head_dim=8,
                     qk_rope_head_dim=8, v_head_dim=8, num_key_value_heads=4, bos_token_id=1, eos_token_id=2,
                     rope_parameters={"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0,
                                      "original_max_position_embeddings": 4, "max_position_embeddings": 128,
                                      "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0,
                                      "llama_4_scaling_beta": 0.5}),
}


CONFIGS["inkling2-wrapped"]["text_config"] = CONFIGS["inkling2"]
# Mistral Small 4's layout: Mistral 4 in Mistral 3's wrapper, on text; Pixtral's tower not run.
CONFIGS["mistral3-mistral4"] = dict(model_type="mistral3", architectures=["Mistral3ForConditionalGeneration"],
                                    text_config={k: v for k, v in CONFIGS["mistral4"].items() if k != "architectures"},
                                    vision_config=dict(model_type="pixtral", hidden_size=16, intermediate_size=24,
                                                       num_hidden_layers=1, num_attention_heads=2, head_dim=8,
                                                       image_size=32, patch_size=8), image_token_index=96)


# Correction biases scaled up where the test must tell where the bias joins (randomize's 0.1 is
# too small to change many choices).
BIG_CORRECTION = {"kolibri1": 20.0, "kolibri1_1": 20.0, "minicpm5-moe": 20.0, "ergo": 20.0}


def model_of(config, raw):
    """The class the config names (a wrapper's published class holds its towers), else the causal
    LM transformers maps its model_type to."""
    arch = (raw.get("architectures") or [None])[0]
    if arch:
        return getattr(transformers, arch)(config)
    return AutoModelForCausalLM.from_config(config)


def make(name, raw):
    torch.manual_seed(0)
    config = CONFIG_MAPPING[raw["model_type"]].from_dict(dict(raw))
    config._attn_implementation = "eager"
    if raw.get("weight_mode") == "fused":
        # transformers' xLSTM cannot initialize its fused layout (its _init_weights slices the
        # gates' bias by a shape it does not have): built uninitialized, its vectors set as that
        # initialization sets them (norm weights 1, biases 0) before the random weights.
        from transformers.initialization import no_init_weights
        with no_init_weights():
            model = model_of(config, raw)
        with torch.no_grad():
            for n, p in model.named_parameters():
                p.fill_(1.0 if p.dim() == 1 and n.endswith("weight") else 0.0)
        model = randomize(model.float().eval())
    else:
        model = randomize(model_of(config, raw).float().eval())
    with torch.no_grad():
        for n, b in model.named_buffers():
            if "correction_bias" in n and name in BIG_CORRECTION:
                b.mul_(BIG_CORRECTION[name])
    d = OUT / name
    d.mkdir(parents=True, exist_ok=True)
    # Saved before any forward pass: RWKV's first one in eval mode rescales its weights in place.
    save_model(d, model)
    if raw["model_type"] == "blt":
        blt_threshold(model, raw, IDS)
    # BLT's forward fails with a cache in transformers 5.24 (huggingface/transformers#47916).
    kwargs = {"use_cache": False} if raw["model_type"] == "blt" else {}
    # PaliGemma's ids as its processor marks a prompt: token types 0, a prefix that sees itself
    # both ways.
    if raw["model_type"] == "paligemma":
        kwargs["token_type_ids"] = torch.zeros(1, len(IDS), dtype=torch.long)
    with torch.no_grad():
        logits = model(torch.tensor([IDS]), **kwargs).logits[0]
    for extra in ("generation_config.json",):
        (d / extra).unlink(missing_ok=True)
    # The config as the project reads it: the input dict, not transformers' full dump.
    (d / "config.json").write_text(json.dumps(raw, indent=1) + "\n")
    expected = {"transformers": transformers.__version__, "ids": IDS, "logits": logits.tolist()}
    if decodes_as_prompted(raw):
        expected["stepwise_logits"] = stepwise_logits(model, IDS).tolist()
    (d / "expected.json").write_text(json.dumps(expected) + "\n")
    print(f"{name}: {sum(p.numel() for p in model.parameters()):,} params, logits {tuple(logits.shape)}")


# Gemma 4's assistants with a target each: (target config, assistant config). The targets'
# last non-shared layers of each kind are not their last layers; prompts pass the window.
G4_TARGET = dict(model_type="gemma4_text", hidden_size=32, intermediate_size=48, num_hidden_layers=5,
                 num_attention_heads=4, num_key_value_heads=2, head_dim=8, global_head_dim=16, vocab_size=96,
                 sliding_window=4, hidden_size_per_layer_input=8, vocab_size_per_layer_input=96,
                 num_kv_shared_layers=2, pad_token_id=0,
                 layer_types=["sliding_attention", "sliding_attention", "full_attention", "sliding_attention",
                              "full_attention"])
G4_TEXT = dict(hidden_size=24, intermediate_size=40, num_hidden_layers=3, num_attention_heads=4,
               num_key_value_heads=2, head_dim=8, global_head_dim=16, vocab_size=96, sliding_window=4,
               pad_token_id=0, layer_types=["sliding_attention", "full_attention", "full_attention"])
DRAFTS = {
    "gemma4-assistant": (
        G4_TARGET,
        {"model_type": "gemma4_assistant", "architectures": ["Gemma4AssistantForCausalLM"],
         "backbone_hidden_size": 32, "use_ordered_embeddings": True, "num_centroids": 8,
         "centroid_intermediate_top_k": 2,
         "text_config": dict(G4_TEXT, model_type="gemma4_text", hidden_size_per_layer_input=0,
                             vocab_size_per_layer_input=0)}),
    "gemma4-unified-assistant": (
        {k: v for k, v in G4_TARGET.items() if "per_layer" not in k} | {"model_type": "gemma4_unified_text"},
        {"model_type": "gemma4_unified_assistant", "architectures": ["Gemma4UnifiedAssistantForCausalLM"],
         "backbone_hidden_size": 32, "tie_word_embeddings": False,
         "text_config": dict(G4_TEXT, model_type="gemma4_unified_text", num_kv_shared_layers=3)}),
}
DRAFTED = 4


def save_pair(d, target, target_raw, assistant, raw):
    """A target and its assistant under d/target and d/assistant, configs as given."""
    for part, model, r in (("target", target, target_raw), ("assistant", assistant, raw)):
        (d / part).mkdir(parents=True, exist_ok=True)
        save_model(d / part, model)
        (d / part / "generation_config.json").unlink(missing_ok=True)
        (d / part / "config.json").write_text(json.dumps(r, indent=1) + "\n")


def drafted(target, assistant, ids, n):
    """transformers' drafting round after a prompt (`Gemma4AssistantCandidateGenerator`): the
    target reads `ids`; the assistant drafts n tokens from its state. Returns the tokens, each
    one's logits and the step's input and output hidden state (lists), and the target's keys."""
    ids = torch.tensor([ids])
    with torch.no_grad():
        out = target(ids, output_hidden_states=True, return_shared_kv_states=True)
        hidden = out.hidden_states[-1][:, -1:]
        kv = out.shared_kv_states
        token = ids[:, -1:]
        position = torch.tensor([[ids.shape[1] - 1]])
        tokens, logits, states, hiddens = [], [], [], []
        for _ in range(n):
            embeds = torch.cat([target.get_input_embeddings()(token), hidden], dim=-1)
            step = assistant(inputs_embeds=embeds, position_ids=position, shared_kv_states=kv, use_cache=False)
            token = step.logits.argmax(dim=-1)
            hidden = step.last_hidden_state
            tokens.append(int(token))
            logits.append(step.logits[0, 0].tolist())
            states.append(embeds[0, 0].numpy())
            hiddens.append(hidden[0, 0].tolist())
    return tokens, logits, states, hiddens, kv


def make_draft(name, target_raw, raw):
    """A target and its assistant, and the logits of `DRAFTED` tokens drafted after the prompt as
    transformers' assisted generation drafts them (`Gemma4AssistantCandidateGenerator`)."""
    torch.manual_seed(0)
    target_cfg = CONFIG_MAPPING[target_raw["model_type"]].from_dict(dict(target_raw))
    target_cfg._attn_implementation = "eager"
    target = randomize(AutoModelForCausalLM.from_config(target_cfg).float().eval())
    config = CONFIG_MAPPING[raw["model_type"]].from_dict(dict(raw))
    config._attn_implementation = "eager"
    config.get_text_config()._attn_implementation = "eager"
    assistant = randomize(model_of(config, raw).float().eval())
    with torch.no_grad():
        if assistant.masked_embedding is not None:
            # transformers initializes the ordering to zeros: a permutation, as checkpoints hold.
            vocab = assistant.masked_embedding.token_ordering.shape[0]
            assistant.masked_embedding.token_ordering.copy_(torch.randperm(vocab))
    d = OUT / "draft" / name
    save_pair(d, target, target_raw, assistant, raw)
    tokens = save_drafted(d, target, assistant, IDS, DRAFTED)
    print(f"{name}: drafted {tokens}")


def save_drafted(d, target, assistant, ids, n):
    """transformers' drafting round (`drafted`) written beside the pair in d: expected.json (the
    tokens, each one's logits and the hidden state it hands on) and inputs.npz, each step's input
    and the target's keys for the references that run the assistant alone (the NumPy export, the
    PyTorch reference): [steps, 2 backbone], and [KV, T, D] per kind. Returns the tokens."""
    import numpy as np
    tokens, logits, states, hiddens, kv = drafted(target, assistant, ids, n)
    np.savez(d / "inputs.npz", state=np.stack(states), position=np.array(len(ids) - 1),
             **{f"{part}_{kind.split('_')[0]}": t[0].numpy() for kind, (k, v) in kv.items()
                for part, t in (("k", k), ("v", v))})
    expected = {"transformers": transformers.__version__, "ids": ids, "tokens": tokens, "logits": logits,
                "hidden": hiddens}
    (d / "expected.json").write_text(json.dumps(expected) + "\n")
    return tokens


# Wrappers run on an image: a toy language model and tower, and a fixed random image already
# processed (pixel values as the model's processor leaves them). The prompt holds one
# placeholder per image feature.
LLAVA_TEXT = dict(model_type="llama", hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, vocab_size=96, pad_token_id=0)
LLAVA_CLIP = dict(model_type="clip_vision_model", hidden_size=16, intermediate_size=24,
                  num_hidden_layers=3, num_attention_heads=2, image_size=28, patch_size=14)
IMAGES = {
    # The class's defaults: the second-to-last layer's states without the class token's.
    "llava": {"model_type": "llava", "architectures": ["LlavaForConditionalGeneration"],
              "image_token_index": 95, "text_config": LLAVA_TEXT, "vision_config": LLAVA_CLIP},
    # Two layers' states side by side with the class token's, GELU in the tower, no biases in
    # the projector.
    "llava-layers": {"model_type": "llava", "architectures": ["LlavaForConditionalGeneration"],
                     "image_token_index": 95, "vision_feature_layer": [0, -1],
                     "vision_feature_select_strategy": "full", "multimodal_projector_bias": False,
                     "projector_hidden_act": "gelu_pytorch_tanh",
                     "text_config": LLAVA_TEXT, "vision_config": dict(LLAVA_CLIP, hidden_act="gelu")},
    # The class's defaults again, seeing a JPEG photo-like image through its CLIP processor
    # (PIL backend) rather than random pixel values: `run --image`'s end-to-end fixture.
    "llava-jpeg": {"model_type": "llava", "architectures": ["LlavaForConditionalGeneration"],
                   "image_token_index": 95, "text_config": LLAVA_TEXT, "vision_config": LLAVA_CLIP},
    # VipLlava: three layers' states (without the class token's) joined, LayerNormed, then the
    # projector's biased maps.
    "vipllava": {"model_type": "vipllava", "architectures": ["VipLlavaForConditionalGeneration"],
                 "image_token_index": 95, "vision_feature_layers": [-2, -4, 1], "text_config": LLAVA_TEXT,
                 "vision_config": LLAVA_CLIP},
}
# Fixtures whose image is a file, processed by transformers' PIL-backed processor (Pillow
# needed; see scripts/make_processor_fixtures.py): the image processor's settings.
IMAGE_FILES = {"llava-jpeg": {"image_processor_type": "CLIPImageProcessor", "size": {"shortest_edge": 28},
                              "crop_size": {"height": 28, "width": 28}}}


def image_flops(model, raw, pixels):
    """torch's count of an image's FLOPs through the tower (the patch embedding and the layers up
    to the last hidden state read; transformers runs the rest too, unread) and the projector."""
    from torch.utils.flop_counter import FlopCounterMode
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        if model.config.model_type in ("gemma3", "paligemma"):
            model.model.get_image_features(pixels)
        elif model.config.model_type == "vipllava":
            model.model.get_image_features(pixels, vision_feature_layer=model.config.vision_feature_layers)
        else:
            model.model.get_image_features(pixels, vision_feature_layer=model.config.vision_feature_layer,
                                           vision_feature_select_strategy=model.config.vision_feature_select_strategy)
    counts = {k: sum(v.values()) for k, v in counter.get_flop_counts().items()}
    if model.config.model_type in ("gemma3", "paligemma"):  # the whole tower and the projector
        return counts.get("SiglipVisionModel", 0) + counts.get("Gemma3MultiModalProjector", 0) + \
            counts.get("PaliGemmaMultiModalProjector", 0)
    read = model.config.vision_feature_layer
    states = model.config.vision_config.num_hidden_layers + 1
    run = max(i % states for i in (read if isinstance(read, list) else [read]))
    modules = ["CLIPVisionModel.embeddings", "LlavaMultiModalProjector", "VipLlavaMultiModalProjector",
               "VideoLlavaMultiModalProjector"]
    modules += [f"CLIPVisionModel.encoder.layers.{i}" for i in range(run)]
    return sum(counts.get(m, 0) for m in modules)


# LLaVA-1.5's chat template (llava-hf's), and the question the image fixture asks with it.
LLAVA_CHAT = ("{% for message in messages %}{% if message['role'] != 'system' %}{{ message['role'].upper() + ': '}}"
              "{% endif %}{# Render all images first #}{% for content in message['content'] | selectattr('type', "
              "'equalto', 'image') %}{{ '<image>\\n' }}{% endfor %}{# Render all text next #}{% if message['role'] != "
              "'assistant' %}{% for content in message['content'] | selectattr('type', 'equalto', 'text') %}"
              "{{ content['text'] + ' '}}{% endfor %}{% else %}{% for content in message['content'] | selectattr("
              "'type', 'equalto', 'text') %}{% generation %}{{ content['text'] + ' '}}{% endgeneration %}{% endfor %}"
              "{% endif %}{% endfor %}{% if add_generation_prompt %}{{ 'ASSISTANT:' }}{% endif %}")
# SmolVLM and Idefics3 seeing an image: SigLIP's tower (32-pixel frames in patches of 8), each
# 2×2 patches joined by the pixel shuffle, the connector's bias-free map into a Llama language
# model. SmolVLM's processor (torchvision's backend) resizes the 40×61 photo to a longest edge of
# 64 and up to 2×2 tiles of 32, the whole image a fifth frame, laid out as
# <fake_token_around_image><row_R_col_C> runs, a newline after each row, then the whole image's
# run after <global-img>; Idefics3's (PIL's backend, Lanczos and bicubic alike) does not split it:
# one frame, the whole image's run alone.
IDEFICS3_TEXT = {"model_type": "llama", "hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2,
                 "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 128, "bos_token_id": 1,
                 "eos_token_id": 2, "pad_token_id": 0}
IDEFICS3_VISION = {"hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 2, "num_attention_heads": 2,
                   "image_size": 32, "patch_size": 8}
IDEFICS3_IMAGES = {
    "smolvlm-jpeg": {"model_type": "smolvlm", "architectures": ["SmolVLMForConditionalGeneration"],
                     "image_token_id": 127, "scale_factor": 2, "text_config": IDEFICS3_TEXT,
                     "vision_config": dict(IDEFICS3_VISION, model_type="smolvlm_vision")},
    "idefics3-whole": {"model_type": "idefics3", "architectures": ["Idefics3ForConditionalGeneration"],
                       "image_token_id": 127, "scale_factor": 2, "text_config": IDEFICS3_TEXT,
                       "vision_config": dict(IDEFICS3_VISION, model_type="idefics3_vision", hidden_act="gelu")},
    # The catalog's SmolVLM2 as its toy copy keeps it (every key; 4×4 patches shuffled into a
    # feature, 12 tower layers), its tiles 128 pixels rather than 512 and its placeholder the
    # toy vocabulary's last id: 2×2 tiles and the whole image, 4 features each.
    "smolvlm2-500m-video-instruct": "toy/smolvlm2-500m-video-instruct",
}
IDEFICS3_CHAT = ("<|im_start|>{% for message in messages %}{{ message['role'] }}: "
                 "{% for content in message['content'] %}{% if content['type'] == 'image' %}<image>"
                 "{% elif content['type'] == 'text' %} {{ content['text'] }}{% endif %}{% endfor %}"
                 "<end_of_utterance>{{ '\\n' }}{% endfor %}{% if add_generation_prompt %}Assistant:{% endif %}")
# The image tokens the processors write, the last ids: the placeholder last.
IDEFICS3_TOKENS = (["\n", "<fake_token_around_image>", "<global-img>"]
                   + [f"<row_{r}_col_{c}>" for r in range(1, 3) for c in range(1, 3)] + ["<image>"])


def idefics3_processor(d, raw):
    """The image (image.jpg) and SmolVLMProcessor (Idefics3Processor) saved in `d` for the model
    `raw` configures: its image tokens and a newline the last ids, `<image>` the last."""
    photo(d / "image.jpg", 40, 61, 24, lambda x, y: [(x + y) * 2.0, x * 4.0, y * 5.0])
    smol = raw["model_type"] == "smolvlm"
    v = raw["vision_config"]
    side, k = v["image_size"], raw["scale_factor"]
    settings = {"image_processor_type": "SmolVLMImageProcessor" if smol else "Idefics3ImageProcessor",
                "size": {"longest_edge": 2 * side}, "max_image_size": {"longest_edge": side},
                "do_image_splitting": smol, "resample": 1 if smol else 3}
    image_processor = saved_image_processor(settings, "torchvision" if smol else "pil")
    size = raw["text_config"]["vocab_size"]
    assert size - 1 == raw["image_token_id"]
    fast = word_tokenizer(size, ["<pad>", "<|im_start|>", "<end_of_utterance>"],
                          ["user:", "Assistant:", "What", "is", "this?"], IDEFICS3_TOKENS,
                          bos_token="<|im_start|>", eos_token="<end_of_utterance>")
    seq = (side // v["patch_size"] // k) ** 2
    if smol:
        from transformers import SmolVLMProcessor, SmolVLMVideoProcessor
        processor = SmolVLMProcessor(image_processor=image_processor, tokenizer=fast,
                                     video_processor=SmolVLMVideoProcessor(), image_seq_len=seq,
                                     chat_template=IDEFICS3_CHAT)
    else:
        from transformers import Idefics3Processor
        processor = Idefics3Processor(image_processor=image_processor, tokenizer=fast, image_seq_len=seq,
                                      chat_template=IDEFICS3_CHAT)
    processor.save_pretrained(d)
    return processor


def make_idefics3_image(name, raw):
    import numpy
    from torch.utils.flop_counter import FlopCounterMode
    if isinstance(raw, str):  # a catalog model's toy copy
        raw = json.loads((OUT / raw / "config.json").read_text())
        raw["image_token_id"] = raw["text_config"]["vocab_size"] - 1
        raw["vision_config"]["image_size"] = 128
    model, d, processor, image = image_model(name, raw, idefics3_processor)
    run = partial(logits_of_inputs, model)
    prompt = "<image> What is this?"
    plain = processor(text=[prompt], images=[image], return_tensors="pt")
    pixels = plain["pixel_values"][0]  # [frames, 3, S, S]
    # A whole frame's patches take their own positions (the bucketing anatomy leaves out).
    inner = model.model
    g = raw["vision_config"]["image_size"] // raw["vision_config"]["patch_size"]
    seen = {}
    hook = inner.vision_model.embeddings.position_embedding.register_forward_hook(
        lambda m, args, out: seen.update(ids=args[0]))
    logits = run(plain)
    hook.remove()
    assert (seen["ids"] == torch.arange(g * g)).all(), seen["ids"]
    # The figures are stated for one frame: the tower to its last LayerNorm and the connector.
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        inner.connector(inner.vision_model(pixel_values=pixels[:1]).last_hidden_state)
    numpy.save(d / "pixels.npy", (pixels if len(pixels) > 1 else pixels[0]).numpy().astype(numpy.float32))
    expected = {"transformers": transformers.__version__, "ids": plain["input_ids"][0].tolist(),
                "prompt_text": prompt, "logits": logits.tolist(), "image_flops": counter.get_total_flops(),
                "image_tokens": (plain["input_ids"][0] == raw["image_token_id"]).sum().item() // len(pixels),
                "image_backend": "torchvision" if raw["model_type"] == "smolvlm" else "pil"}
    finish_chat(d, name, (model, processor, image, run), plain, expected, f"frames {tuple(pixels.shape)}")


# Video-LLaVA seeing an image: LLaVA's CLIP tower (28 pixels in patches of 7) as its image tower,
# a video tower of the same config stored beside it and unread, LLaVA's projector of the
# second-to-last layer's states without the class token's; a JPEG through its saved
# VideoLlavaProcessor (its image processor NumPy's alone), `<image>` repeated once per feature.
VIDEO_LLAVA_IMAGES = {
    "video-llava-jpeg": {"model_type": "video_llava", "architectures": ["VideoLlavaForConditionalGeneration"],
                         "image_token_index": 127, "video_token_index": 126,
                         "text_config": dict(LLAVA_TEXT, vocab_size=128),
                         "vision_config": dict(LLAVA_CLIP, patch_size=7)},
}


def video_llava_processor(d, raw):
    """The image (image.jpg) and VideoLlavaProcessor saved in `d` for the model `raw` configures:
    `<video>` and `<image>` its last two ids, its tokenizer adding the BOS as Llama's does."""
    from tokenizers import processors
    from transformers import VideoLlavaProcessor, VideoLlavaVideoProcessor
    photo(d / "image.jpg", 45, 61, 25, lambda x, y: [x * 3.0, (x + y) * 2.5, y * 4.5])
    v = raw["vision_config"]
    side = v["image_size"]
    image_processor = saved_image_processor({"image_processor_type": "VideoLlavaImageProcessor",
                                             "size": {"shortest_edge": side},
                                             "crop_size": {"height": side, "width": side}}, "pil")
    size = raw["text_config"]["vocab_size"]
    assert size - 1 == raw["image_token_index"]
    fast = word_tokenizer(size, ["<pad>", "<s>", "</s>"], ["USER:", "ASSISTANT:", "What", "is", "this?"],
                          ["<video>", "<image>"], bos_token="<s>", eos_token="</s>")
    fast.backend_tokenizer.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    processor = VideoLlavaProcessor(image_processor=image_processor, video_processor=VideoLlavaVideoProcessor(),
                                    tokenizer=fast, patch_size=v["patch_size"], chat_template=LLAVA_CHAT)
    processor.save_pretrained(d)
    return processor


def make_video_llava_image(name, raw):
    import numpy
    model, d, processor, image = image_model(name, raw, video_llava_processor)
    run = partial(logits_of_inputs, model)
    prompt = "<image> What is this?"
    plain = processor(text=[prompt], images=[image], return_tensors="pt")
    pixels = plain["pixel_values_images"]
    logits = run(plain)
    flops = image_flops(model, raw, pixels)
    numpy.save(d / "pixels.npy", pixels[0].numpy().astype(numpy.float32))
    expected = {"transformers": transformers.__version__, "ids": plain["input_ids"][0].tolist(),
                "prompt_text": prompt, "logits": logits.tolist(), "image_flops": flops}
    finish_chat(d, name, (model, processor, image, run), plain, expected, f"pixels {tuple(pixels.shape)}, image flops {flops}")


# LLaVA-NeXT seeing an image: LLaVA's CLIP tower (28 pixels in patches of 7) over the whole image
# and the tiles of its canvas (the published canvases' shapes at 28 pixels a tile), the
# canvas's features unpadded, a learned vector ending each row; a 61×45 JPEG through its saved
# LlavaNextProcessor (NumPy's backend): a 2×2 canvas padded above and below, 70 features.
# LLaVA-NeXT-Video's class runs an image the same way, through its own processor.
LLAVA_NEXT_PINPOINTS = [[28, 56], [56, 28], [56, 56], [84, 28], [28, 84]]
ONEVISION_PINPOINTS = [[28 * h, 28 * w] for h in range(1, 4) for w in range(1, 4)]
ONEVISION_TEXT = dict(model_type="qwen2", hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, vocab_size=128)
ONEVISION_SIGLIP = dict(model_type="siglip_vision_model", hidden_size=16, intermediate_size=24,
                        num_hidden_layers=2, num_attention_heads=2, image_size=28, patch_size=7,
                        vision_use_head=False)
LLAVA_NEXT_IMAGES = {
    "llava-next-jpeg": {"model_type": "llava_next", "architectures": ["LlavaNextForConditionalGeneration"],
                        "image_token_index": 95, "image_grid_pinpoints": LLAVA_NEXT_PINPOINTS,
                        "text_config": LLAVA_TEXT, "vision_config": dict(LLAVA_CLIP, patch_size=7)},
    "llava-next-video-jpeg": {"model_type": "llava_next_video",
                              "architectures": ["LlavaNextVideoForConditionalGeneration"],
                              "image_token_index": 127, "video_token_index": 126,
                              "image_grid_pinpoints": LLAVA_NEXT_PINPOINTS, "vision_feature_layer": [-1, 1],
                              "text_config": dict(LLAVA_TEXT, vocab_size=128),
                              "vision_config": dict(LLAVA_CLIP, patch_size=7)},
    # LLaVA-OneVision: SigLIP's tower (no class token, the last layer's state before its last
    # LayerNorm) around a Qwen2 language model, on canvases of 1 to 3 tiles a side; 2×2 tiles'
    # worth at the most, so that the canvas's 48 kept features stay; one tile's worth (anyres_max_1),
    # so that they are resized (bilinear) down to 3×4.
    "llava-onevision-jpeg": {"model_type": "llava_onevision",
                             "architectures": ["LlavaOnevisionForConditionalGeneration"],
                             "image_token_index": 127, "video_token_index": 126,
                             "image_grid_pinpoints": ONEVISION_PINPOINTS, "vision_aspect_ratio": "anyres_max_4",
                             "text_config": ONEVISION_TEXT, "vision_config": ONEVISION_SIGLIP},
    "llava-onevision-shrunk": {"model_type": "llava_onevision",
                               "architectures": ["LlavaOnevisionForConditionalGeneration"],
                               "image_token_index": 127, "video_token_index": 126,
                               "image_grid_pinpoints": ONEVISION_PINPOINTS, "vision_aspect_ratio": "anyres_max_1",
                               "vision_feature_layer": [-1, 1],
                               "text_config": ONEVISION_TEXT, "vision_config": ONEVISION_SIGLIP},
}


def llava_next_processor(d, raw):
    """The image (image.jpg) and the processor of `raw`'s class saved in `d`: LLaVA-NeXT's image
    processor (NumPy's backend) at the tower's size with the model's canvases, a word-level
    tokenizer adding the BOS as Llama's does, `<image>` at the placeholder id."""
    from tokenizers import processors
    from transformers import (LlavaNextProcessor, LlavaNextVideoProcessor, LlavaNextVideoVideoProcessor,
                              LlavaOnevisionProcessor, LlavaOnevisionVideoProcessor)
    photo(d / "image.jpg", 45, 61, 31, lambda x, y: [(x + y) * 2.0, x * 4.0, y * 5.0])
    v = raw["vision_config"]
    side = v["image_size"]
    onevision = raw["model_type"] == "llava_onevision"
    settings = {"image_processor_type": "LlavaNextImageProcessor", "size": {"shortest_edge": side},
                "crop_size": {"height": side, "width": side}}
    if onevision:  # OneVision's: a square size, no crop
        settings = {"image_processor_type": "LlavaOnevisionImageProcessor", "size": {"height": side, "width": side}}
    image_processor = saved_image_processor(dict(settings, image_grid_pinpoints=raw["image_grid_pinpoints"]), "pil")
    size = raw["text_config"]["vocab_size"]
    video = raw["model_type"] != "llava_next"
    special = ["<video>", "<image>"] if video else ["<image>"]
    assert size - 1 == raw["image_token_index"]
    fast = word_tokenizer(size, ["<pad>", "<s>", "</s>"], ["USER:", "ASSISTANT:", "What", "is", "this?"],
                          special, bos_token="<s>", eos_token="</s>")
    fast.backend_tokenizer.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    common = dict(image_processor=image_processor, tokenizer=fast, patch_size=v["patch_size"],
                  vision_feature_select_strategy="default", chat_template=LLAVA_CHAT,
                  num_additional_image_tokens=1)
    if onevision:
        common.update(vision_feature_select_strategy="full", num_image_tokens=(side // v["patch_size"]) ** 2,
                      vision_aspect_ratio=raw["vision_aspect_ratio"])
        processor = LlavaOnevisionProcessor(video_processor=LlavaOnevisionVideoProcessor(), **common)
    elif video:
        processor = LlavaNextVideoProcessor(video_processor=LlavaNextVideoVideoProcessor(), **common)
    else:
        processor = LlavaNextProcessor(**common)
    processor.save_pretrained(d)
    return processor


def make_llava_next_image(name, raw):
    import numpy
    from PIL import Image
    from torch.utils.flop_counter import FlopCounterMode
    model, d, processor, image = image_model(name, raw, llava_next_processor)
    onevision = raw["model_type"] == "llava_onevision"
    run = partial(logits_of_inputs, model)
    prompt = "<image> What is this?"
    plain = processor(text=[prompt], images=[image], return_tensors="pt")
    pixels, sizes = plain["pixel_values"], plain["image_sizes"]
    logits = run(plain)
    # FLOPs at the size the figures are stated at: a square image of the tower's side.
    side = raw["vision_config"]["image_size"]
    square = processor.image_processor(images=Image.new("RGB", (side, side)), return_tensors="pt")
    read = raw.get("vision_feature_layer", -1 if raw["model_type"] == "llava_onevision" else -2)
    states = raw["vision_config"]["num_hidden_layers"] + 1
    layers = max(i % states for i in (read if isinstance(read, list) else [read]))
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        model.model.get_image_features(square["pixel_values"], square["image_sizes"])
    counts = {k: sum(v.values()) for k, v in counter.get_flop_counts().items()}
    tower = "SiglipVisionModel" if raw["model_type"] == "llava_onevision" else "CLIPVisionModel"
    modules = [f"{tower}.embeddings", "LlavaNextMultiModalProjector", "LlavaNextVideoMultiModalProjector",
               "LlavaOnevisionMultiModalProjector"]
    modules += [f"{tower}.encoder.layers.{i}" for i in range(layers)]
    flops = sum(counts.get(m, 0) for m in modules)
    ids = plain["input_ids"][0].tolist()
    numpy.save(d / "pixels.npy", pixels[0].numpy().astype(numpy.float32))
    expected = {"transformers": transformers.__version__, "ids": ids, "prompt_text": prompt,
                "logits": logits.tolist(), "image_flops": flops, "image_size": sizes[0].tolist(),
                "image_tokens": processor._get_number_of_features(side, side, side, side) - (not onevision)}
    finish_chat(d, name, (model, processor, image, run), plain, expected,
                f"pixels {tuple(pixels.shape)}, {ids.count(raw['image_token_index'])} features, image flops {flops}")


QUESTION = "What is this?"


def finish_chat(d, name, made, plain, expected, shown):
    """`expected` (the prompt's ids and logits) completed and written to d/expected.json: the
    chat about the image as the processor runs it, four greedy tokens from the prompt, and the
    question's ids as the tokenizer gives them alone."""
    model, processor, image, run = made
    expected["chat"] = processor_chat(processor, image, run)
    with torch.no_grad():
        out = model.generate(**plain, max_new_tokens=4, do_sample=False)
    expected["generated"] = out[0, plain["input_ids"].shape[1]:].tolist()
    expected["prompt"] = {"text": QUESTION, "ids": processor.tokenizer(QUESTION)["input_ids"]}
    (d / "expected.json").write_text(json.dumps(expected) + "\n")
    logits = expected["logits"]
    print(f"image/{name}: {sum(p.numel() for p in model.parameters()):,} params, "
          f"logits ({len(logits)}, {len(logits[0])}), {shown}")


def photo(path, height, width, seed, colour):
    """A photo-like JPEG: gradients (`colour` maps the grid to RGB) with noise."""
    import numpy
    from PIL import Image
    y, x = numpy.mgrid[0:height, 0:width]
    rgb = numpy.stack(colour(x, y), -1) + numpy.random.default_rng(seed).normal(0, 30, (height, width, 3))
    Image.fromarray(numpy.clip(rgb, 0, 255).astype(numpy.uint8)).save(path, quality=90)


def llava_processor(d, settings):
    """A photo-like JPEG in `d` (image.jpg) and a LlavaProcessor saved beside the model as
    transformers 5 saves one (processor_config.json with the image processor, PIL-backed, in it;
    tokenizer.json; chat_template.jinja): a word-level tokenizer over the toy vocabulary whose
    post-processor adds the BOS, as Llama's does, and `<image>` at the config's placeholder id."""
    import tempfile
    from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers, processors
    from transformers import AutoImageProcessor, LlavaProcessor, PreTrainedTokenizerFast
    photo(d / "image.jpg", 45, 61, 11, lambda x, y: [x * 4.0, y * 5.0, (x + y) * 2.0])
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "preprocessor_config.json").write_text(json.dumps(settings))
        image_processor = AutoImageProcessor.from_pretrained(tmp, backend="pil")
    words = ["<pad>", "<s>", "</s>", "USER:", "ASSISTANT:", "What", "is", "this?"]
    vocab = {w: i for i, w in enumerate(words + [f"w{i}" for i in range(len(words), 95)] + ["<image>"])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    tok.add_special_tokens([AddedToken(t, special=True) for t in ["<pad>", "<s>", "</s>", "<image>"]])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
                                   unk_token="<pad>")
    processor = LlavaProcessor(image_processor=image_processor, tokenizer=fast, patch_size=14,
                               vision_feature_select_strategy="default", chat_template=LLAVA_CHAT,
                               image_token="<image>", num_additional_image_tokens=1)
    processor.save_pretrained(d)
    return processor


def make_image(name, raw):
    import numpy
    torch.manual_seed(0)
    config = CONFIG_MAPPING[raw["model_type"]].from_dict(dict(raw))
    config._attn_implementation = "eager"
    model = randomize(model_of(config, raw).float().eval())
    v = config.vision_config
    d = OUT / "image" / name
    d.mkdir(parents=True, exist_ok=True)
    processor = None
    if name in IMAGE_FILES:
        from PIL import Image
        processor = llava_processor(d, IMAGE_FILES[name])
        pixels = processor.image_processor(images=Image.open(d / "image.jpg"), return_tensors="pt")["pixel_values"]
    else:
        pixels = torch.randn(1, v.num_channels, v.image_size, v.image_size)
    grid = (v.image_size // v.patch_size) ** 2
    features = grid + (raw.get("vision_feature_select_strategy", "default") == "full")
    ids = [5, 17] + [raw["image_token_index"]] * features + [42, 3, 90, 11]
    save_model(d, model)
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids]), pixel_values=pixels).logits[0]
    (d / "generation_config.json").unlink(missing_ok=True)
    (d / "config.json").write_text(json.dumps(raw, indent=1) + "\n")
    numpy.save(d / "pixels.npy", pixels[0].numpy().astype(numpy.float32))
    expected = {"transformers": transformers.__version__, "ids": ids, "logits": logits.tolist(),
                "image_flops": image_flops(model, raw, pixels)}
    if processor is not None:
        # The chat as transformers' processor runs it: the template's text, then the text and
        # image through the processor (placeholder expanded, BOS added); and the question alone
        # through the tokenizer, as `tokenizer(text)` gives it.
        from PIL import Image
        chat = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": QUESTION}]}]
        text = processor.apply_chat_template(chat, add_generation_prompt=True)
        inputs = processor(images=Image.open(d / "image.jpg"), text=text, return_tensors="pt")
        with torch.no_grad():
            chat_logits = model(**inputs).logits[0]
        expected["chat"] = {"prompt": QUESTION, "text": text, "ids": inputs["input_ids"][0].tolist(),
                            "logits": chat_logits.tolist()}
        expected["prompt"] = {"text": QUESTION, "ids": processor.tokenizer(QUESTION)["input_ids"]}
    (d / "expected.json").write_text(json.dumps(expected) + "\n")
    print(f"image/{name}: {sum(p.numel() for p in model.parameters()):,} params, logits {tuple(logits.shape)}")


# Gemma 3 seeing an image: SigLIP's tower (28 pixels in patches of 7: a 4×4 grid pooled to 2×2
# features), a sliding layer (window 4, shorter than the prompt) and a full one, the image's
# four placeholders framed by <start_of_image> and <end_of_image>. Its processor (PIL backend),
# a word-level tokenizer (newlines as tokens of their own, BOS from the template) and a
# Gemma-style chat template are saved beside it.
GEMMA3_IMAGES = {
    "gemma3-jpeg": {"model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"],
               "image_token_index": 95, "boi_token_index": 93, "eoi_token_index": 94, "mm_tokens_per_image": 4,
               "text_config": {"model_type": "gemma3_text", "hidden_size": 32, "intermediate_size": 48,
                               "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                               "head_dim": 8, "query_pre_attn_scalar": 8, "vocab_size": 96, "sliding_window": 4,
                               "layer_types": ["sliding_attention", "full_attention"], "pad_token_id": 0},
               "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 16, "intermediate_size": 24,
                                 "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 28,
                                 "patch_size": 7, "vision_use_head": False}},
    # The catalog's Gemma 3 27B as its toy copy keeps it (every key; widths shrunk), its tower's
    # image shrunk to 224 pixels: 16×16 patches, pooled to the 256 features its config keeps.
    "gemma-3-27b": "toy/gemma-3-27b",
}
GEMMA_CHAT = ("{{ bos_token }}{% for message in messages %}<start_of_turn>user\n{% for content in message['content'] %}"
              "{% if content['type'] == 'image' %}<start_of_image>{% elif content['type'] == 'text' %}{{ content['text'] }}"
              "{% endif %}{% endfor %}<end_of_turn>\n{% endfor %}{% if add_generation_prompt %}<start_of_turn>model\n"
              "{% endif %}")


def gemma3_processor(d, raw):
    """The image (image.jpg) and Gemma3Processor saved in `d`, for the model `raw` configures:
    its image size, placeholder count and ids."""
    import tempfile
    from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers
    from transformers import AutoImageProcessor, Gemma3Processor, PreTrainedTokenizerFast
    photo(d / "image.jpg", 40, 52, 12, lambda x, y: [x * 5.0, y * 6.0, (x * y) * 0.1])
    side = raw["vision_config"]["image_size"]
    settings = {"image_processor_type": "Gemma3ImageProcessor", "size": {"height": side, "width": side}}
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "preprocessor_config.json").write_text(json.dumps(settings))
        image_processor = AutoImageProcessor.from_pretrained(tmp, backend="pil")
    special = ["<pad>", "<eos>", "<bos>", "<start_of_turn>", "<end_of_turn>"]
    words = special + ["\n", "\n\n", "user", "model", "What", "is", "this?"]
    image = ["<start_of_image>", "<end_of_image>", "<image_soft_token>"]
    at = {raw["boi_token_index"]: image[0], raw["eoi_token_index"]: image[1], raw["image_token_index"]: image[2]}
    size = raw["text_config"]["vocab_size"]
    vocab = {at.get(i, words[i] if i < len(words) else f"w{i}"): i for i in range(size)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.add_special_tokens([AddedToken(t, special=True) for t in special + image])
    tok.add_tokens([AddedToken(t, normalized=False) for t in ["\n\n", "\n"]])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>",
                                   unk_token="<pad>", extra_special_tokens={
                                       "boi_token": "<start_of_image>", "eoi_token": "<end_of_image>",
                                       "image_token": "<image_soft_token>"})
    processor = Gemma3Processor(image_processor=image_processor, tokenizer=fast, chat_template=GEMMA_CHAT,
                                image_seq_length=raw.get("mm_tokens_per_image", 256))
    processor.save_pretrained(d)
    return processor


def image_model(name, raw, make_processor):
    """The toy model `raw` configures on seeded random weights, saved with its config in
    image/<name> beside the processor and image `make_processor(d, raw)` saves there: the model,
    the folder, the processor and the image."""
    from PIL import Image
    torch.manual_seed(0)
    config = CONFIG_MAPPING[raw["model_type"]].from_dict(dict(raw))
    config._attn_implementation = "eager"
    model = randomize(model_of(config, raw).float().eval())
    d = OUT / "image" / name
    d.mkdir(parents=True, exist_ok=True)
    processor = make_processor(d, raw)
    save_model(d, model)
    (d / "generation_config.json").unlink(missing_ok=True)
    (d / "config.json").write_text(json.dumps(raw, indent=1) + "\n")
    return model, d, processor, Image.open(d / "image.jpg")


def logits_of_inputs(model, inputs):
    with torch.no_grad():
        return model(**inputs).logits[0]


def make_gemma3_image(name, raw):
    import numpy
    catalog = isinstance(raw, str)
    if catalog:  # a catalog model's toy copy, its tower's image at 224 pixels
        raw = json.loads((OUT / raw / "config.json").read_text())
        raw["vision_config"]["image_size"] = 224
    model, d, processor, image = image_model(name, raw, gemma3_processor)
    run = partial(logits_of_inputs, model)

    # The ids with the image's placeholders in place (framed as the processor frames them) and
    # the token types that make them see each other both ways.
    plain = processor(text=["<start_of_image> What is this?"], images=[image], return_tensors="pt")
    pixels = plain["pixel_values"]
    logits = run(plain)
    chat = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": QUESTION}]}]
    text = processor.apply_chat_template(chat, add_generation_prompt=True)
    inputs = processor(text=[text], images=[image], return_tensors="pt")
    numpy.save(d / "pixels.npy", pixels[0].numpy().astype(numpy.float32))
    expected = {"transformers": transformers.__version__, "ids": plain["input_ids"][0].tolist(),
                "prompt_text": "<start_of_image> What is this?", "logits": logits.tolist(),
                "image_flops": image_flops(model, raw, pixels)}
    if not catalog:  # (a catalog toy's 256 placeholders would double the file for little)
        expected["chat"] = {"prompt": QUESTION, "text": text, "ids": inputs["input_ids"][0].tolist(),
                            "logits": run(inputs).tolist()}
    # Without the token types, transformers masks the image's tokens causally: not what its
    # processor runs, and not the same logits (the fixture must tell the two apart).
    causal = run({"input_ids": plain["input_ids"], "pixel_values": pixels})
    assert (causal - logits).abs().max() > 1e-3, "the two-way mask makes no difference here"
    (d / "expected.json").write_text(json.dumps(expected) + "\n")
    print(f"image/{name}: {sum(p.numel() for p in model.parameters()):,} params, logits {tuple(logits.shape)}")


# PaliGemma 2 seeing an image: SigLIP's tower (28 pixels in patches of 7: 16 features, one per
# patch), Gemma 2's language model with a sliding layer (window 4, shorter than the prompt) and a
# full one; the image's placeholders, the BOS and the prompt as its processor lays them out, all
# one prefix that sees itself both ways. Its processor (SigLIP's image processor, PIL backend)
# and a word-level tokenizer are saved beside it.
PALIGEMMA_IMAGES = {
    "paligemma-jpeg": {"model_type": "paligemma", "architectures": ["PaliGemmaForConditionalGeneration"],
                       "image_token_index": 95, "projection_dim": 32,
                       "text_config": {"model_type": "gemma2", "hidden_size": 32, "intermediate_size": 48,
                                       "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                                       "head_dim": 8, "query_pre_attn_scalar": 8, "vocab_size": 96,
                                       "sliding_window": 4, "pad_token_id": 0, "bos_token_id": 2, "eos_token_id": 1},
                       "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 16,
                                         "intermediate_size": 24, "num_hidden_layers": 2, "num_attention_heads": 2,
                                         "image_size": 28, "patch_size": 7, "vision_use_head": False}},
}


def paligemma_processor(d, raw):
    """The image (image.jpg) and PaliGemmaProcessor saved in `d`, for the model `raw`
    configures: its image size and placeholder id."""
    import tempfile
    from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers
    from transformers import AutoImageProcessor, PaliGemmaProcessor, PreTrainedTokenizerFast
    photo(d / "image.jpg", 40, 52, 12, lambda x, y: [x * 5.0, y * 6.0, (x * y) * 0.1])
    v = raw["vision_config"]
    side = v["image_size"]
    settings = {"image_processor_type": "SiglipImageProcessor", "size": {"height": side, "width": side},
                "image_seq_length": (side // v["patch_size"]) ** 2}
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "preprocessor_config.json").write_text(json.dumps(settings))
        image_processor = AutoImageProcessor.from_pretrained(tmp, backend="pil")
    special = ["<pad>", "<eos>", "<bos>"]
    words = special + ["\n", "caption", "en", "What", "is", "this?"]
    size = raw["text_config"]["vocab_size"]
    vocab = {"<image>" if i == raw["image_token_index"] else words[i] if i < len(words) else f"w{i}": i
             for i in range(size)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.add_special_tokens([AddedToken(t, special=True) for t in special + ["<image>"]])
    tok.add_tokens([AddedToken("\n", normalized=False)])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>",
                                   unk_token="<pad>", extra_special_tokens={"image_token": "<image>"})
    processor = PaliGemmaProcessor(image_processor=image_processor, tokenizer=fast)
    processor.save_pretrained(d)
    return processor


def make_paligemma_image(name, raw):
    import numpy
    model, d, processor, image = image_model(name, raw, paligemma_processor)
    run = partial(logits_of_inputs, model)
    prompt = "caption en"
    inputs = processor(text=[prompt], images=[image], return_tensors="pt")
    assert (inputs["token_type_ids"] == 0).all()
    logits = run(inputs)
    pixels = inputs["pixel_values"]
    numpy.save(d / "pixels.npy", pixels[0].numpy().astype(numpy.float32))
    expected = {"transformers": transformers.__version__, "ids": inputs["input_ids"][0].tolist(),
                "prompt_text": prompt, "logits": logits.tolist(), "image_flops": image_flops(model, raw, pixels)}
    # Without the token types, transformers masks the prompt causally: not what its processor
    # runs, and not the same logits (the fixture must tell the two apart).
    causal = run({"input_ids": inputs["input_ids"], "pixel_values": pixels})
    assert (causal - logits).abs().max() > 1e-3, "the two-way prefix makes no difference here"
    with torch.no_grad():
        out = model.generate(**inputs, max_new_tokens=4, do_sample=False)
    expected["generated"] = out[0, inputs["input_ids"].shape[1]:].tolist()
    (d / "expected.json").write_text(json.dumps(expected) + "\n")
    print(f"image/{name}: {sum(p.numel() for p in model.parameters()):,} params, logits {tuple(logits.shape)}")


# Qwen2-VL seeing an image at its own resolution: a JPEG of 80×115 pixels that its processor
# (PIL backend) resizes to 84×112, 6×8 patches of 14 merged to 3×4 features, which take M-RoPE's
# 3-D positions in the language model (its pairs split [2, 1, 1] among time, row and column).
# Its processor, a word-level tokenizer and a Qwen-style chat template are saved beside it.
QWEN2_VL_IMAGES = {
    "qwen2-vl-jpeg": {"model_type": "qwen2_vl", "architectures": ["Qwen2VLForConditionalGeneration"],
                      "image_token_id": 95, "video_token_id": 96, "vision_start_token_id": 93,
                      "vision_end_token_id": 94,
                      "text_config": {"model_type": "qwen2_vl_text", "hidden_size": 32, "intermediate_size": 48,
                                      "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                                      "vocab_size": 97, "pad_token_id": 0,
                                      "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0,
                                                          "mrope_section": [2, 1, 1]}},
                      "vision_config": {"depth": 2, "embed_dim": 16, "mlp_ratio": 2, "num_heads": 2,
                                        "hidden_size": 32, "patch_size": 14, "spatial_merge_size": 2,
                                        "temporal_patch_size": 2}},
    # The catalog's Qwen2-VL 7B as its toy copy keeps it (every key; widths shrunk), with the
    # merger's output widened to the toy's text width and the image's ids inside its toy
    # vocabulary (the toy shrinks them apart, which transformers cannot run on an image).
    "qwen2-vl-7b-instruct": "toy/qwen2-vl-7b-instruct",
    # Qwen3-VL: patches of 16 (4×8 of them: the photo resized to 64×128), a learned 4×4 grid of positions
    # resampled to them, two deep-stack mergers (after blocks 0 and 1) feeding the language
    # model's two layers, and its interleaved M-RoPE (pairs [2, 1, 1] of 4).
    "qwen3-vl-jpeg": {"model_type": "qwen3_vl", "architectures": ["Qwen3VLForConditionalGeneration"],
                      "image_token_id": 95, "video_token_id": 96, "vision_start_token_id": 93,
                      "vision_end_token_id": 94,
                      "text_config": {"model_type": "qwen3_vl_text", "hidden_size": 32, "intermediate_size": 48,
                                      "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                                      "head_dim": 8, "vocab_size": 97, "pad_token_id": 0,
                                      "rope_parameters": {"rope_type": "default", "rope_theta": 5000000.0,
                                                          "mrope_section": [2, 1, 1], "mrope_interleaved": True}},
                      "vision_config": {"depth": 3, "hidden_size": 16, "intermediate_size": 24, "num_heads": 2,
                                        "out_hidden_size": 32, "patch_size": 16, "spatial_merge_size": 2,
                                        "temporal_patch_size": 2, "num_position_embeddings": 16,
                                        "deepstack_visual_indexes": [0, 1]}},
    # The catalog's Qwen3-VL 4B as its toy copy keeps it, its merger's output widened to the
    # toy's text width and the image's ids inside its toy vocabulary.
    "qwen3-vl-4b-instruct": "toy/qwen3-vl-4b-instruct",
    # Qwen3-VL-MoE: Qwen3-VL's tower and wrapper around experts (a dense first layer, then
    # four experts of which two are chosen); one deep-stack merger.
    "qwen3-vl-moe-jpeg": "qwen3_vl_moe",
    # Qwen3.5: Qwen3-VL's tower without deep-stack mergers (the config's list is ignored, as its
    # class ignores it) before a DeltaNet layer and a gated-attention one whose partial rotary
    # pairs (4 of 16 dims' 8) take M-RoPE's interleaved positions.
    "qwen3_5-jpeg": {"model_type": "qwen3_5", "architectures": ["Qwen3_5ForConditionalGeneration"],
                     "image_token_id": 95, "video_token_id": 96, "vision_start_token_id": 93,
                     "vision_end_token_id": 94,
                     "text_config": {"model_type": "qwen3_5_text", "hidden_size": 32, "intermediate_size": 48,
                                     "num_hidden_layers": 2, "layer_types": ["linear_attention", "full_attention"],
                                     "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
                                     "linear_num_key_heads": 2, "linear_num_value_heads": 4,
                                     "linear_key_head_dim": 8, "linear_value_head_dim": 8, "vocab_size": 97,
                                     "pad_token_id": 0,
                                     "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0,
                                                         "partial_rotary_factor": 0.5, "mrope_section": [2, 1, 1],
                                                         "mrope_interleaved": True}},
                     "vision_config": {"depth": 2, "hidden_size": 16, "intermediate_size": 24, "num_heads": 2,
                                       "out_hidden_size": 32, "patch_size": 16, "spatial_merge_size": 2,
                                       "temporal_patch_size": 2, "num_position_embeddings": 16,
                                       "deepstack_visual_indexes": [0]}},
    # The catalog's Qwen3.5-35B-A3B as its toy copy keeps it, its merger's output widened to the
    # toy's text width and the image's ids inside its toy vocabulary.
    "qwen3.5-35b-a3b": "toy/qwen3.5-35b-a3b",
    # Qwen2.5-VL: RMSNorms, gated MLPs, windows of 2×2 features (56 pixels) in blocks 0 and 2 and
    # every patch in block 1, over the 3×4 features of the photo resized to 84×112 (windows of
    # 2×2, 2×2, 1×2 and 1×2 features).
    "qwen2_5-vl-jpeg": {"model_type": "qwen2_5_vl", "architectures": ["Qwen2_5_VLForConditionalGeneration"],
                        "image_token_id": 95, "video_token_id": 96, "vision_start_token_id": 93,
                        "vision_end_token_id": 94,
                        "text_config": {"model_type": "qwen2_5_vl_text", "hidden_size": 32, "intermediate_size": 48,
                                        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                                        "vocab_size": 97, "pad_token_id": 0,
                                        "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0,
                                                            "mrope_section": [2, 1, 1]}},
                        "vision_config": {"depth": 3, "hidden_size": 16, "intermediate_size": 24, "num_heads": 2,
                                          "out_hidden_size": 32, "patch_size": 14, "spatial_merge_size": 2,
                                          "temporal_patch_size": 2, "window_size": 56, "fullatt_block_indexes": [1]}},
}
QWEN_CHAT = ("{% for message in messages %}<|im_start|>{{ message['role'] }} {% for content in message['content'] %}"
             "{% if content['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>{% elif content['type'] == "
             "'text' %}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|> {% endfor %}{% if add_generation_prompt %}"
             "<|im_start|>assistant {% endif %}")
# Qwen2-VL's figures are stated for a square image of this many features a side.
STATED_SIDE = 16


def qwen2_vl_processor(d, raw):
    """The image (image.jpg) and Qwen2VLProcessor saved in `d` for the model `raw` configures."""
    import tempfile
    from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers
    from transformers import AutoImageProcessor, PreTrainedTokenizerFast, Qwen2VLProcessor, Qwen2VLVideoProcessor
    photo(d / "image.jpg", 80, 115, 13, lambda x, y: [x * 2.0, y * 3.0, (x + y) * 1.5])
    v = raw["vision_config"]
    settings = {"image_processor_type": "Qwen2VLImageProcessor", "patch_size": v["patch_size"],
                "merge_size": v["spatial_merge_size"], "temporal_patch_size": v.get("temporal_patch_size", 2)}
    if raw["model_type"].startswith(("qwen3_vl", "qwen3_5")):  # as Qwen3-VL's and Qwen3.5's checkpoints set it
        settings.update(image_mean=[0.5] * 3, image_std=[0.5] * 3)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "preprocessor_config.json").write_text(json.dumps(settings))
        image_processor = AutoImageProcessor.from_pretrained(tmp, backend="pil")
    special = ["<pad>", "<|im_start|>", "<|im_end|>"]
    words = special + ["user", "assistant", "What", "is", "this?"]
    image = ["<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]
    at = {raw["vision_start_token_id"]: image[0], raw["vision_end_token_id"]: image[1],
          raw["image_token_id"]: image[2], raw["video_token_id"]: image[3]}
    size = raw.get("text_config", raw)["vocab_size"]
    vocab = {at.get(i, words[i] if i < len(words) else f"w{i}"): i for i in range(size)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.add_special_tokens([AddedToken(t, special=True) for t in special + image])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<pad>", unk_token="<pad>")
    processor = Qwen2VLProcessor(image_processor=image_processor, tokenizer=fast, chat_template=QWEN_CHAT,
                                 video_processor=Qwen2VLVideoProcessor())
    processor.save_pretrained(d)
    return processor


def unpatched(flat, grid, v):
    """Qwen2-VL's flattened patches [N, C·T·P·P] back to the image [C, H, W] they were cut from
    (the frames are copies): what `--pixels` takes."""
    import numpy
    _, gh, gw = grid
    c, p, m, t = 3, v["patch_size"], v["spatial_merge_size"], v.get("temporal_patch_size", 2)
    x = flat.reshape(gh // m, gw // m, m, m, c, t, p, p)
    assert (x == x[:, :, :, :, :, :1]).all(), "the frames are copies"
    return numpy.ascontiguousarray(x[:, :, :, :, :, 0].transpose(4, 0, 2, 5, 1, 3, 6).reshape(c, gh * p, gw * p))


def make_qwen2_vl_image(name, raw):
    import numpy
    from torch.utils.flop_counter import FlopCounterMode
    catalog = isinstance(raw, str)
    if catalog and not raw.startswith("toy/"):  # an exec fixture's config, as it is
        raw = json.loads((OUT / raw / "config.json").read_text())
        catalog = False
    if catalog:
        raw = json.loads((OUT / raw / "config.json").read_text())
        text = raw.get("text_config", raw)
        raw["vision_config"]["out_hidden_size" if "text_config" in raw else "hidden_size"] = text["hidden_size"]
        size = text["vocab_size"]
        for i, key in enumerate(["vision_start_token_id", "vision_end_token_id", "vision_token_id",
                                 "image_token_id", "video_token_id"]):
            raw[key] = size - 7 + i
    model, d, processor, image = image_model(name, raw, qwen2_vl_processor)
    run = partial(logits_of_inputs, model)

    prompt = "<|vision_start|><|image_pad|><|vision_end|> What is this?"
    plain = processor(text=[prompt], images=[image], return_tensors="pt")
    grid = plain["image_grid_thw"][0].tolist()
    v = raw["vision_config"]
    pixels = unpatched(plain["pixel_values"].numpy(), grid, v)
    logits = run(plain)
    numpy.save(d / "pixels.npy", pixels.astype(numpy.float32))
    # The figures at the stated resolution: a square image of STATED_SIDE features a side.
    side = STATED_SIDE * v["spatial_merge_size"]
    stated = torch.randn(side * side, 3 * v.get("temporal_patch_size", 2) * v["patch_size"] ** 2)
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        model.model.get_image_features(stated, torch.tensor([[1, side, side]]))
    expected = {"transformers": transformers.__version__, "ids": plain["input_ids"][0].tolist(),
                "prompt_text": prompt, "logits": logits.tolist(), "grid_thw": grid,
                "image_flops": counter.get_total_flops(), "image_tokens": STATED_SIDE ** 2}
    if not catalog:
        chat = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": QUESTION}]}]
        text = processor.apply_chat_template(chat, add_generation_prompt=True)
        inputs = processor(text=[text], images=[image], return_tensors="pt")
        expected["chat"] = {"prompt": QUESTION, "text": text, "ids": inputs["input_ids"][0].tolist(),
                            "logits": run(inputs).tolist()}
        # Greedy decoding from the plain prompt, through transformers' rope deltas.
        with torch.no_grad():
            out = model.generate(**plain, max_new_tokens=4, do_sample=False)
        expected["generated"] = out[0, plain["input_ids"].shape[1]:].tolist()
    # Without the 3-D positions (the image's tokens in a row), other logits: the fixture must
    # tell the two apart.
    flat = run({"input_ids": plain["input_ids"], "pixel_values": plain["pixel_values"],
                "image_grid_thw": plain["image_grid_thw"],
                "position_ids": torch.arange(plain["input_ids"].shape[1])[None].expand(3, 1, -1)})
    assert (flat - logits).abs().max() > 1e-3, "M-RoPE makes no difference here"
    (d / "expected.json").write_text(json.dumps(expected) + "\n")
    print(f"image/{name}: {sum(p.numel() for p in model.parameters()):,} params, logits {tuple(logits.shape)}, grid {grid}")


# Llama 4 seeing an image as its processor tiles it (torchvision's backend, bfloat16 values): a
# JPEG of 40×61 pixels onto 2×2 tiles of 28 (each 4×4 patches of 7, shuffled to 2×2 features)
# and the whole image as a fifth, 20 `<|patch|>` placeholders among the processor's separators;
# a chunked attention layer (chunks of 8, shorter than the prompt) and a NoPE one around experts.
LLAMA4_TEXT = {"model_type": "llama4_text", "hidden_size": 32, "intermediate_size": 48, "intermediate_size_mlp": 64,
               "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
               "vocab_size": 96, "num_local_experts": 2, "num_experts_per_tok": 1, "attention_chunk_size": 8,
               "no_rope_layers": [1, 0], "pad_token_id": 0}
LLAMA4_IMAGES = {
    "llama4-jpeg": {"model_type": "llama4", "architectures": ["Llama4ForConditionalGeneration"],
                    "boi_token_index": 88, "eoi_token_index": 89, "image_token_index": 91, "text_config": LLAMA4_TEXT,
                    "vision_config": {"model_type": "llama4_vision_model", "hidden_size": 16, "intermediate_size": 64,
                                      "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 28,
                                      "patch_size": 7, "projector_input_dim": 24, "projector_output_dim": 24,
                                      "vision_output_dim": 24}},
    # The catalog's Llama 4 Scout as its toy copy keeps it (every key; widths shrunk), its tile
    # shrunk to 56 pixels (4×4 patches of 14, 2×2 features) and its adapter widened to the
    # shuffled width (the toy shrinks both to 32, which cannot run an image).
    "llama-4-scout-17b-16e": "toy/llama-4-scout-17b-16e",
}
LLAMA4_CHAT = ("{{ bos_token }}{% for message in messages %}<|header_start|> {{ message['role'] }} <|header_end|> "
               "{% for content in message['content'] %}{% if content['type'] == 'image' %}<|image|>"
               "{% elif content['type'] == 'text' %} {{ content['text'] }}{% endif %}{% endfor %} <|eot|> "
               "{% endfor %}{% if add_generation_prompt %}<|header_start|> assistant <|header_end|>{% endif %}")
LLAMA4_TOKENS = ["<|image_start|>", "<|image_end|>", "<|image|>", "<|patch|>", "<|tile_x_separator|>",
                 "<|tile_y_separator|>"]


def llama4_processor(d, raw):
    """The image (image.jpg) and Llama4Processor saved in `d` for the model `raw` configures: its
    tokens from the start-of-image id on, in the processor's order."""
    import tempfile
    from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers, processors
    from transformers import AutoImageProcessor, Llama4Processor, PreTrainedTokenizerFast
    photo(d / "image.jpg", 40, 61, 14, lambda x, y: [x * 3.0, y * 4.0, (x + 2 * y) * 1.5])
    v = raw["vision_config"]
    side = v["image_size"]
    settings = {"image_processor_type": "Llama4ImageProcessor", "size": {"height": side, "width": side},
                "max_patches": 4}
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "preprocessor_config.json").write_text(json.dumps(settings))
        image_processor = AutoImageProcessor.from_pretrained(tmp, backend="torchvision")
    special = ["<pad>", "<|begin_of_text|>", "<|eot|>", "<|header_start|>", "<|header_end|>"]
    words = special + ["user", "assistant", "What", "is", "this?"]
    at = {raw["boi_token_index"] + i: t for i, t in enumerate(LLAMA4_TOKENS)}
    assert at[raw["image_token_index"]] == "<|patch|>"
    size = raw["text_config"]["vocab_size"]
    vocab = {at.get(i, words[i] if i < len(words) else f"w{i}"): i for i in range(size)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.post_processor = processors.TemplateProcessing(single="<|begin_of_text|> $A",
                                                       special_tokens=[("<|begin_of_text|>", 1)])
    tok.add_special_tokens([AddedToken(t, special=True) for t in special + LLAMA4_TOKENS])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|begin_of_text|>", eos_token="<|eot|>",
                                   pad_token="<pad>", unk_token="<pad>")
    processor = Llama4Processor(image_processor=image_processor, tokenizer=fast, chat_template=LLAMA4_CHAT,
                                patch_size=v["patch_size"], pixel_shuffle_ratio=v.get("pixel_shuffle_ratio", 0.5))
    processor.save_pretrained(d)
    return processor


def processor_chat(processor, image, run):
    """The question about the image as transformers' processor runs a chat with it (tokenized by
    its apply_chat_template: no BOS added where its template writes one): the text, ids and the
    logits `run` gives."""
    chat = [{"role": "user", "content": [{"type": "image", "image": image}, {"type": "text", "text": QUESTION}]}]
    text = processor.apply_chat_template(chat, add_generation_prompt=True)
    inputs = processor.apply_chat_template(chat, add_generation_prompt=True, tokenize=True, return_dict=True,
                                           return_tensors="pt")
    return {"prompt": QUESTION, "text": text, "ids": inputs["input_ids"][0].tolist(), "logits": run(inputs).tolist()}


def make_llama4_image(name, raw):
    import numpy
    from torch.utils.flop_counter import FlopCounterMode
    catalog = isinstance(raw, str)
    if catalog:
        raw = json.loads((OUT / raw / "config.json").read_text())
        v = raw["vision_config"]
        v["image_size"] = 56
        v["intermediate_size"] = v["hidden_size"] * 4
        size = raw["text_config"]["vocab_size"]
        raw["boi_token_index"], raw["eoi_token_index"], raw["image_token_index"] = size - 8, size - 7, size - 5
    model, d, processor, image = image_model(name, raw, llama4_processor)

    def run(inputs):  # the processor's bfloat16 pixels as float32 (exact)
        return logits_of_inputs(model, {**inputs, "pixel_values": inputs["pixel_values"].float()})

    prompt = "<|image|> What is this?"
    plain = processor(text=[prompt], images=[image], return_tensors="pt")
    pixels = plain["pixel_values"].float()
    logits = run(plain)
    numpy.save(d / "pixels.npy", pixels.numpy())
    # The figures are stated for an image of one tile.
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        model.get_image_features(pixels[:1])
    expected = {"transformers": transformers.__version__, "ids": plain["input_ids"][0].tolist(),
                "prompt_text": prompt, "logits": logits.tolist(), "image_flops": counter.get_total_flops(),
                "image_tokens": (plain["input_ids"][0] == raw["image_token_index"]).sum().item() // len(pixels),
                "image_backend": "torchvision"}
    expected["chat"] = processor_chat(processor, image, run)
    (d / "expected.json").write_text(json.dumps(expected) + "\n")
    print(f"image/{name}: {sum(p.numel() for p in model.parameters()):,} params, logits {tuple(logits.shape)}, "
          f"tiles {tuple(pixels.shape)}")


# InternVL seeing an image: InternViT (28-pixel tiles in patches of 7, 4×4 patches shuffled to
# 2×2 features) before a Qwen2 language model; its processor (GOT-OCR 2's image processor, its own
# crop_to_patches off, which InternVL's processor turns on) cuts the 40×61 photo onto 2×1 tiles and
# the whole image a third, 12 placeholders framed by <img> and </img>. One as published (LayerNorms,
# biased Q, K and V, no last norm; torchvision's backend), one with InternViT-6B's settings (RMSNorms,
# Q and K RMSNormed, unbiased, a last LayerNorm) and another projector activation (PIL's backend).
INTERNVL_TEXT = {"model_type": "qwen2", "hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2,
                 "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 96, "pad_token_id": 0}
INTERNVL_VISION = {"model_type": "internvl_vision", "hidden_size": 16, "intermediate_size": 24,
                   "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 28, "patch_size": 7}
INTERNVL_IMAGES = {
    "internvl-jpeg": {"model_type": "internvl", "architectures": ["InternVLForConditionalGeneration"],
                      "image_token_id": 95, "image_seq_length": 4, "text_config": INTERNVL_TEXT,
                      "vision_config": dict(INTERNVL_VISION, attention_bias=True)},
    "internvl-rms": {"model_type": "internvl", "architectures": ["InternVLForConditionalGeneration"],
                     "image_token_id": 95, "image_seq_length": 4, "projector_hidden_act": "silu",
                     "text_config": INTERNVL_TEXT,
                     "vision_config": dict(INTERNVL_VISION, norm_type="rms_norm", use_qk_norm=True,
                                           use_mean_pooling=False, layer_norm_eps=1e-5)},
}
INTERNVL_CHAT = ("{% for message in messages %}<|im_start|> {{ message['role'] }} {% for content in message['content'] %}"
                 "{% if content['type'] == 'image' %}<IMG_CONTEXT>{% elif content['type'] == 'text' %} "
                 "{{ content['text'] }}{% endif %}{% endfor %} <|im_end|> {% endfor %}"
                 "{% if add_generation_prompt %}<|im_start|> assistant{% endif %}")
INTERNVL_TOKENS = ["<img>", "</img>", "<video>", "<IMG_CONTEXT>"]


def saved_image_processor(settings, backend):
    """transformers' image processor of `settings` (its preprocessor_config.json) on `backend`."""
    import tempfile
    from transformers import AutoImageProcessor
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "preprocessor_config.json").write_text(json.dumps(settings))
        return AutoImageProcessor.from_pretrained(tmp, backend=backend)


def word_tokenizer(size, special, words, tokens, **kwargs):
    """A word-level tokenizer of `size` ids: `special` and `words` first, the image's `tokens` the
    last ids (in order), the rest filler words; split on white space, `special` and `tokens`
    special. `kwargs` go to PreTrainedTokenizerFast."""
    from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    at = {size - len(tokens) + i: t for i, t in enumerate(tokens)}
    names = special + words
    vocab = {at.get(i, names[i] if i < len(names) else f"w{i}"): i for i in range(size)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token=special[0]))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.add_special_tokens([AddedToken(t, special=True) for t in special + tokens])
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token=special[0], unk_token=special[0], **kwargs)


def internvl_processor(d, raw):
    """The image (image.jpg) and InternVLProcessor saved in `d` for the model `raw` configures:
    <img>, </img>, <video> and <IMG_CONTEXT> the last four ids (the placeholder's last)."""
    from transformers import InternVLProcessor, InternVLVideoProcessor
    photo(d / "image.jpg", 40, 61, 16, lambda x, y: [x * 4.0, y * 3.0, (x + y) * 1.5])
    side = raw["vision_config"]["image_size"]
    settings = {"image_processor_type": "GotOcr2ImageProcessor", "size": {"height": side, "width": side},
                "crop_to_patches": False, "max_patches": 4}
    backend = "torchvision" if raw["vision_config"].get("norm_type") != "rms_norm" else "pil"
    image_processor = saved_image_processor(settings, backend)
    size = raw["text_config"]["vocab_size"]
    assert size - 1 == raw["image_token_id"]  # <IMG_CONTEXT>
    fast = word_tokenizer(size, ["<pad>", "<|im_start|>", "<|im_end|>"], ["user", "assistant", "What", "is", "this?"],
                          INTERNVL_TOKENS, eos_token="<|im_end|>",
                          extra_special_tokens={"start_image_token": "<img>", "end_image_token": "</img>",
                                                "video_token": "<video>", "context_image_token": "<IMG_CONTEXT>"})
    # (Its video processor, which the class requires, plays no part.)
    processor = InternVLProcessor(image_processor=image_processor, tokenizer=fast, chat_template=INTERNVL_CHAT,
                                  video_processor=InternVLVideoProcessor(), image_seq_length=raw["image_seq_length"])
    processor.save_pretrained(d)
    return processor, backend


# Aya Vision seeing an image: SigLIP (28-pixel tiles in patches of 7) before a Cohere2 language
# model, each 2×2 patches of the state read joined by the pixel shuffle, a LayerNorm and a SwiGLU
# projector; its processor (GOT-OCR 2's image processor, its own crop_to_patches off, which Aya's
# processor turns on) cuts the 40×61 photo onto 2×1 tiles and the whole image a third, laid out as
# <|START_OF_IMG|> TILE_1 run, TILE_2 run, TILE_GLOBAL run <|END_OF_IMG|> in place of <image>. One
# as published (the last layer's state, before the tower's last LayerNorm; no pooling head;
# torchvision's backend), one reading the layer before (-2), with a pooling head stored and the
# projector's width the text's (no alignment_intermediate_size; PIL's backend).
AYA_TEXT = {"model_type": "cohere2", "hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2,
            "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 96, "pad_token_id": 0,
            "sliding_window": 4, "logit_scale": 0.5, "eos_token_id": 2}
AYA_VISION = {"model_type": "siglip_vision_model", "hidden_size": 16, "intermediate_size": 24,
              "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 28, "patch_size": 7}
AYA_IMAGES = {
    "aya-vision-jpeg": {"model_type": "aya_vision", "architectures": ["AyaVisionForConditionalGeneration"],
                        "image_token_index": 95, "downsample_factor": 2, "alignment_intermediate_size": 40,
                        "adapter_layer_norm_eps": 1e-5, "vision_feature_select_strategy": "full",
                        "vision_feature_layer": -1, "text_config": AYA_TEXT,
                        "vision_config": dict(AYA_VISION, vision_use_head=False)},
    "aya-vision-layer": {"model_type": "aya_vision", "architectures": ["AyaVisionForConditionalGeneration"],
                         "image_token_index": 95, "downsample_factor": 2, "vision_feature_layer": -2,
                         "text_config": AYA_TEXT, "vision_config": dict(AYA_VISION, vision_use_head=True)},
}
AYA_CHAT = ("{% for message in messages %}<|START_OF_TURN_TOKEN|> {{ message['role'] }} "
            "{% for content in message['content'] %}{% if content['type'] == 'image' %}<image>"
            "{% elif content['type'] == 'text' %} {{ content['text'] }}{% endif %}{% endfor %} <|END_OF_TURN_TOKEN|> "
            "{% endfor %}{% if add_generation_prompt %}<|START_OF_TURN_TOKEN|> assistant{% endif %}")
AYA_TOKENS = ["<|START_OF_IMG|>", "<|END_OF_IMG|>", "<|IMG_LINE_BREAK|>", "<|IMG_PATCH|>"]
AYA_SPECIAL = ["<PAD>", "<|START_OF_TURN_TOKEN|>", "<|END_OF_TURN_TOKEN|>"]
AYA_WORDS = ["user", "assistant", "What", "is", "this?"]


def aya_processor(d, raw):
    """The image (image.jpg) and AyaVisionProcessor saved in `d` for the model `raw` configures:
    its image tokens the last four ids (the placeholder, <|IMG_PATCH|>, the last), the tiles'
    names words of its vocabulary."""
    from transformers import AyaVisionProcessor
    photo(d / "image.jpg", 40, 61, 17, lambda x, y: [x * 3.0, y * 3.5, (2 * x + y) * 1.5])
    v = raw["vision_config"]
    side = v["image_size"]
    settings = {"image_processor_type": "GotOcr2ImageProcessor", "size": {"height": side, "width": side},
                "crop_to_patches": False, "max_patches": 4}
    backend = "torchvision" if raw.get("vision_feature_layer", -1) == -1 else "pil"
    image_processor = saved_image_processor(settings, backend)
    size = raw["text_config"]["vocab_size"]
    assert size - 1 == raw["image_token_index"]  # <|IMG_PATCH|>
    fast = word_tokenizer(size, AYA_SPECIAL, AYA_WORDS + ["TILE_1", "TILE_2", "TILE_3", "TILE_GLOBAL"], AYA_TOKENS,
                          eos_token="<|END_OF_TURN_TOKEN|>")
    processor = AyaVisionProcessor(image_processor=image_processor, tokenizer=fast, chat_template=AYA_CHAT,
                                   img_size=side, patch_size=v["patch_size"],
                                   downsample_factor=raw.get("downsample_factor", 2))
    processor.save_pretrained(d)
    return processor, backend



# Command A Vision seeing an image: Aya Vision's tower and shuffle, SigLIP's last state after its
# LayerNorm, a SwiGLU projector without a LayerNorm; its image processor (torchvision's alone)
# picks the grid by the least upscale (2×1 for the 40×61 photo at 28-pixel tiles) and adds the
# whole image a third, each tile's run of <|IMG_PATCH|> ended by <|IMG_LINE_BREAK|>.
COHERE2_VISION_IMAGES = {
    "cohere2-vision-jpeg": {"model_type": "cohere2_vision", "architectures": ["Cohere2VisionForConditionalGeneration"],
                            "image_token_id": 95, "downsample_factor": 2, "alignment_intermediate_size": 40,
                            "text_config": AYA_TEXT, "vision_config": dict(AYA_VISION, vision_use_head=False)},
}
COHERE2_VISION_CHAT = AYA_CHAT.replace("<image>", "<|IMG_PATCH|>")


def cohere2_vision_processor(d, raw):
    """The image (image.jpg) and Cohere2VisionProcessor saved in `d` for the model `raw`
    configures: Aya Vision's tokens, its tokenizer naming them as the processor reads them."""
    from transformers import Cohere2VisionProcessor
    photo(d / "image.jpg", 40, 61, 18, lambda x, y: [x * 2.5, y * 4.0, (x + 2 * y) * 1.5])
    v = raw["vision_config"]
    side = v["image_size"]
    shuffled = side // v["patch_size"] // raw.get("downsample_factor", 2)
    settings = {"image_processor_type": "Cohere2VisionImageProcessor", "size": {"height": side, "width": side},
                "patch_size": shuffled, "max_patches": 4}
    image_processor = saved_image_processor(settings, "torchvision")
    size = raw["text_config"]["vocab_size"]
    assert size - 1 == raw["image_token_id"]  # <|IMG_PATCH|>
    fast = word_tokenizer(size, AYA_SPECIAL, AYA_WORDS, AYA_TOKENS, eos_token="<|END_OF_TURN_TOKEN|>",
                          extra_special_tokens={"boi_token": "<|START_OF_IMG|>", "eoi_token": "<|END_OF_IMG|>",
                                                "image_token": "<|IMG_PATCH|>",
                                                "img_line_break_token": "<|IMG_LINE_BREAK|>"})
    processor = Cohere2VisionProcessor(image_processor=image_processor, tokenizer=fast,
                                       chat_template=COHERE2_VISION_CHAT)
    processor.save_pretrained(d)
    return processor

# The tilers' processors (and backends), the placeholder their prompts write, its id's key.
TILED = {
    "internvl": (internvl_processor, "<IMG_CONTEXT>", "image_token_id"),
    "aya_vision": (aya_processor, "<image>", "image_token_index"),
    "cohere2_vision": (lambda d, raw: (cohere2_vision_processor(d, raw), "torchvision"), "<|IMG_PATCH|>",
                       "image_token_id"),
}


def make_tiled_image(name, raw):
    """InternVL, Aya Vision or Command A Vision seeing the photo through its processor's tiles."""
    import numpy
    from torch.utils.flop_counter import FlopCounterMode
    make, placeholder, key = TILED[raw["model_type"]]
    made = {}

    def make_processor(d, raw):
        made["processor"], made["backend"] = make(d, raw)
        return made["processor"]

    model, d, processor, image = image_model(name, raw, make_processor)
    run = partial(logits_of_inputs, model)
    prompt = placeholder + " What is this?"
    plain = processor(text=[prompt], images=[image], return_tensors="pt")
    pixels = plain["pixel_values"]
    logits = run(plain)
    numpy.save(d / "pixels.npy", pixels.numpy().astype(numpy.float32))
    # The figures are stated for an image of one tile: InternViT's whole count; SigLIP's patch
    # embedding and layers up to the state read (transformers runs the rest and the pooling head
    # too, unread) and the projector.
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        model.get_image_features(pixels[:1])
    flops = counter.get_total_flops()
    if raw["model_type"] != "internvl":
        counts = {k: sum(v.values()) for k, v in counter.get_flop_counts().items()}
        read = raw.get("vision_feature_layer", -1) % (raw["vision_config"]["num_hidden_layers"] + 1)
        modules = ["SiglipVisionModel.embeddings", "AyaVisionMultiModalProjector", "Cohere2VisionMultiModalProjector"]
        flops = sum(counts.get(m, 0) for m in modules + [f"SiglipVisionModel.encoder.layers.{i}" for i in range(read)])
    expected = {"transformers": transformers.__version__, "ids": plain["input_ids"][0].tolist(),
                "prompt_text": prompt, "logits": logits.tolist(), "image_flops": flops,
                "image_tokens": (plain["input_ids"][0] == raw[key]).sum().item() // len(pixels),
                "image_backend": made["backend"]}
    expected["chat"] = processor_chat(processor, image, run)
    with torch.no_grad():
        out = model.generate(**plain, max_new_tokens=4, do_sample=False)
    expected["generated"] = out[0, plain["input_ids"].shape[1]:].tolist()
    (d / "expected.json").write_text(json.dumps(expected) + "\n")
    print(f"image/{name}: {sum(p.numel() for p in model.parameters()):,} params, logits {tuple(logits.shape)}, "
          f"tiles {tuple(pixels.shape)}")


# Mistral 3 seeing an image at its own size (Pixtral's processor, PIL backend): a JPEG of 40×61
# pixels rounded up to 48×64 (multiples of its patch of 8 times the merge of 2), 6×8 patches merged
# to 3×4 features, each row of [IMG] placeholders ended by [IMG_BREAK], the last by [IMG_END].
PIXTRAL_TEXT = {"hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2, "num_attention_heads": 4,
                "num_key_value_heads": 2, "head_dim": 8, "vocab_size": 96, "pad_token_id": 0}
PIXTRAL_TOY = {"model_type": "pixtral", "hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 2,
               "num_attention_heads": 2, "head_dim": 8, "image_size": 64, "patch_size": 8}
MISTRAL3_IMAGES = {
    "mistral3-jpeg": {"model_type": "mistral3", "architectures": ["Mistral3ForConditionalGeneration"],
                      "image_token_index": 95, "spatial_merge_size": 2,
                      "text_config": dict(PIXTRAL_TEXT, model_type="mistral"), "vision_config": PIXTRAL_TOY},
    # LightOnOCR: the same tower and projector (the last layer read, no biases) before a Qwen3
    # language model, its placeholders one run of <|image_pad|>: the photo's 40×64 pixels are 5×8
    # patches, whose merge drops the last row.
    "lighton-ocr-jpeg": {"model_type": "lighton_ocr", "architectures": ["LightOnOcrForConditionalGeneration"],
                         "image_token_id": 95, "spatial_merge_size": 2,
                         "text_config": dict(PIXTRAL_TEXT, model_type="qwen3"), "vision_config": PIXTRAL_TOY},
}
LIGHTON_CHAT = ("{% for message in messages %}<|im_start|>{{ message['role'] }} {% for content in message['content'] %}"
                "{% if content['type'] == 'image' %}<|image_pad|>{% elif content['type'] == 'text' %} {{ content['text'] }}"
                "{% endif %}{% endfor %}<|im_end|> {% endfor %}{% if add_generation_prompt %}<|im_start|>assistant "
                "{% endif %}")
MISTRAL_CHAT = ("{{ bos_token }}{% for message in messages %}[INST] {% for content in message['content'] %}"
                "{% if content['type'] == 'image' %}[IMG]{% elif content['type'] == 'text' %} {{ content['text'] }}"
                "{% endif %}{% endfor %} [/INST]{% endfor %}")


def pixtral_processor(d, raw):
    """The image (image.jpg) and PixtralProcessor (LightOnOcrProcessor) saved in `d` for the model
    `raw` configures: [IMG] (<|image_pad|>) at its placeholder id, [IMG_BREAK] and [IMG_END]
    (<|vision_pad|>, <|vision_end|>) the two ids before it."""
    import tempfile
    from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers, processors
    from transformers import AutoImageProcessor, LightOnOcrProcessor, PixtralProcessor, PreTrainedTokenizerFast
    lighton = raw["model_type"] == "lighton_ocr"
    photo(d / "image.jpg", 40, 61, 15, lambda x, y: [x * 3.5, y * 4.5, (x + y) * 2.0])
    v = raw["vision_config"]
    settings = {"image_processor_type": "PixtralImageProcessor", "size": {"longest_edge": v["image_size"]},
                "patch_size": v["patch_size"]}
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "preprocessor_config.json").write_text(json.dumps(settings))
        image_processor = AutoImageProcessor.from_pretrained(tmp, backend="pil")
    special = ["<unk>", "<s>", "</s>", "[INST]", "[/INST]"] if not lighton else ["<unk>", "<|im_start|>", "<|im_end|>"]
    words = special + ["user", "assistant", "What", "is", "this?"]
    token = raw["image_token_id" if lighton else "image_token_index"]
    names = ["<|vision_pad|>", "<|vision_end|>", "<|image_pad|>"] if lighton else ["[IMG_BREAK]", "[IMG_END]", "[IMG]"]
    image = {token - 2 + i: name for i, name in enumerate(names)}
    vocab = {image.get(i, words[i] if i < len(words) else f"w{i}"): i for i in range(raw["text_config"]["vocab_size"])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.add_special_tokens([AddedToken(t, special=True) for t in special + list(image.values())])
    if lighton:
        fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", unk_token="<unk>",
                                       pad_token="<unk>", extra_special_tokens=dict(zip(
                                           ["image_break_token", "image_end_token", "image_token"], names)))
        return_processor = LightOnOcrProcessor(image_processor=image_processor, tokenizer=fast,
                                               chat_template=LIGHTON_CHAT, patch_size=v["patch_size"],
                                               spatial_merge_size=raw.get("spatial_merge_size", 2))
        return_processor.save_pretrained(d)
        return return_processor
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
                                   pad_token="<unk>")
    processor = PixtralProcessor(image_processor=image_processor, tokenizer=fast, chat_template=MISTRAL_CHAT,
                                 patch_size=v["patch_size"], spatial_merge_size=raw.get("spatial_merge_size", 2))
    processor.save_pretrained(d)
    return processor


def make_mistral3_image(name, raw):
    import numpy
    from torch.utils.flop_counter import FlopCounterMode
    model, d, processor, image = image_model(name, raw, pixtral_processor)
    run = partial(logits_of_inputs, model)
    prompt = ("<|image_pad|>" if raw["model_type"] == "lighton_ocr" else "[IMG]") + " What is this?"
    plain = processor(text=[prompt], images=[image], return_tensors="pt")
    logits = run(plain)
    numpy.save(d / "pixels.npy", plain["pixel_values"][0].numpy().astype(numpy.float32))
    # The figures are stated for a square image of the tower's image_size.
    v = raw["vision_config"]
    side = v["image_size"]
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        layer = getattr(model.config, "vision_feature_layer", None)
        model.model.get_image_features(pixel_values=torch.randn(1, 3, side, side),
                                       image_sizes=torch.tensor([[side, side]]),
                                       **({} if layer is None else {"vision_feature_layer": layer}))
    merge = raw.get("spatial_merge_size", 2)
    expected = {"transformers": transformers.__version__, "ids": plain["input_ids"][0].tolist(),
                "prompt_text": prompt, "logits": logits.tolist(), "image_flops": counter.get_total_flops(),
                "image_tokens": (side // (v["patch_size"] * merge)) ** 2}
    expected["chat"] = processor_chat(processor, image, run)
    with torch.no_grad():
        out = model.generate(**plain, max_new_tokens=4, do_sample=False)
    expected["generated"] = out[0, plain["input_ids"].shape[1]:].tolist()
    (d / "expected.json").write_text(json.dumps(expected) + "\n")
    print(f"image/{name}: {sum(p.numel() for p in model.parameters()):,} params, logits {tuple(logits.shape)}, "
          f"pixels {tuple(plain['pixel_values'].shape)}")


# GIT seeing an image: CLIP's vision model to its last LayerNorm and the visual projection, the
# features before the prompt (which holds no placeholder), seeing each other both ways; the text
# after them causally, its learned positions from its first token. The catalog's git-base as its
# toy copy keeps it (its tower's 224 pixels in patches of 16: 197 features), and a small one
# that stores two frames' vectors (which one image does not read) and runs torchvision's
# backend. Each sees a JPEG through its saved GitProcessor: CLIP's image processor as git-base's
# preprocessor_config.json sets it, and a word-level tokenizer whose post-processor frames the
# text with [CLS] and [SEP], as BERT's does.
GIT_IMAGES = {
    "git-base": "toy/git-base",
    "git-frames": {"model_type": "git", "architectures": ["GitForCausalLM"], "hidden_size": 32,
                   "intermediate_size": 48, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 128,
                   "num_image_with_embedding": 2,
                   "vision_config": {"model_type": "git_vision_model", "hidden_size": 16, "intermediate_size": 24,
                                     "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 28,
                                     "patch_size": 7, "hidden_act": "gelu"}},
}


def git_backend(raw):
    """The image backend a GIT fixture's processor runs: torchvision's for the one with frames."""
    return "torchvision" if raw.get("num_image_with_embedding") else "pil"


def git_processor(d, raw):
    """The image (image.jpg) and GitProcessor saved in `d` for the model `raw` configures: [CLS]
    and [SEP] at its BOS and EOS ids."""
    from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers, processors
    from transformers import GitProcessor, PreTrainedTokenizerFast
    photo(d / "image.jpg", 45, 61, 19, lambda x, y: [x * 4.0, (x + y) * 2.0, y * 5.0])
    side = raw.get("vision_config", {}).get("image_size", 224)
    settings = {"image_processor_type": "CLIPImageProcessor", "size": {"shortest_edge": side},
                "crop_size": {"height": side, "width": side}}
    image_processor = saved_image_processor(settings, git_backend(raw))
    bos, eos = raw.get("bos_token_id", 101), raw.get("eos_token_id", 102)
    names = {0: "[PAD]", 1: "what", 2: "is", 3: "this?", bos: "[CLS]", eos: "[SEP]"}
    tok = Tokenizer(models.WordLevel({names.get(i, f"w{i}"): i for i in range(raw["vocab_size"])}, unk_token="[PAD]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]",
                                                       special_tokens=[("[CLS]", bos), ("[SEP]", eos)])
    tok.add_special_tokens([AddedToken(t, special=True) for t in ["[PAD]", "[CLS]", "[SEP]"]])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="[PAD]", unk_token="[PAD]", cls_token="[CLS]",
                                   sep_token="[SEP]", bos_token="[CLS]", eos_token="[SEP]")
    processor = GitProcessor(image_processor=image_processor, tokenizer=fast)
    processor.save_pretrained(d)
    return processor


def make_git_image(name, raw):
    import numpy
    from torch.utils.flop_counter import FlopCounterMode
    if isinstance(raw, str):  # a catalog model's toy copy, as it is
        raw = json.loads((OUT / raw / "config.json").read_text())
        raw["architectures"] = ["GitForCausalLM"]
    model, d, processor, image = image_model(name, raw, git_processor)
    prompt = "what is this?"
    inputs = processor(text=prompt, images=image, return_tensors="pt")
    pixels = inputs["pixel_values"]
    with torch.no_grad():
        full = model(**inputs).logits[0]
        features = model.git.visual_projection(model.git.image_encoder(pixels).last_hidden_state)
    n = features.shape[1]
    logits = full[n:]  # the text's; the features' positions come first
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        model.git.visual_projection(model.git.image_encoder(pixels).last_hidden_state)
    # Without the image the text's logits differ (the fixture must see it).
    assert (logits - logits_of_inputs(model, {"input_ids": inputs["input_ids"]})).abs().max() > 1e-3
    numpy.save(d / "pixels.npy", pixels[0].numpy().astype(numpy.float32))
    expected = {"transformers": transformers.__version__, "ids": inputs["input_ids"][0].tolist(),
                "prompt_text": prompt, "logits": logits.tolist(), "image_flops": counter.get_total_flops(),
                "image_tokens": n}
    if git_backend(raw) != "pil":
        expected["image_backend"] = git_backend(raw)
    with torch.no_grad():
        out = model.generate(**inputs, max_new_tokens=4, do_sample=False)
    expected["generated"] = out[0, inputs["input_ids"].shape[1]:].tolist()
    expected["prompt"] = {"text": prompt, "ids": processor.tokenizer(prompt)["input_ids"]}
    (d / "expected.json").write_text(json.dumps(expected) + "\n")
    print(f"image/{name}: {sum(p.numel() for p in model.parameters()):,} params, logits {tuple(logits.shape)}, "
          f"{n} features before the text")


# DeepSeek-VL seeing an image: SigLIP's tower (28 pixels in patches of 7: 16 features, one per
# patch, its pooling head stored and unread) and the aligner's two maps into a Llama language
# model; a JPEG through its saved DeepseekVLProcessor (torchvision's backend), fitted into the
# square and padded with the mean's colour, `<image_placeholder>` repeated once per feature.
DEEPSEEK_VL_IMAGES = {
    "deepseek-vl-jpeg": {"model_type": "deepseek_vl", "architectures": ["DeepseekVLForConditionalGeneration"],
                         "image_token_id": 127,
                         "text_config": {"model_type": "llama", "hidden_size": 32, "intermediate_size": 48,
                                         "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                                         "vocab_size": 128, "bos_token_id": 1, "eos_token_id": 2},
                         "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 16,
                                           "intermediate_size": 24, "num_hidden_layers": 2, "num_attention_heads": 2,
                                           "image_size": 28, "patch_size": 7}},
}
DEEPSEEK_CHAT = ("{{ bos_token }}{% for message in messages %}{{ message['role'] }}: {% for content in message['content'] %}"
                 "{% if content['type'] == 'image' %}<image_placeholder> {% elif content['type'] == 'text' %}"
                 "{{ content['text'] }}{% endif %}{% endfor %}{{ '\\n' }}{% endfor %}"
                 "{% if add_generation_prompt %}Assistant:{% endif %}")


def deepseek_vl_processor(d, raw):
    """The image (image.jpg) and DeepseekVLProcessor saved in `d` for the model `raw` configures:
    `<image_placeholder>` its last id."""
    from tokenizers import processors
    from transformers import DeepseekVLProcessor
    photo(d / "image.jpg", 52, 37, 23, lambda x, y: [y * 4.0, x * 5.0, (x + y) * 2.5])
    v = raw["vision_config"]
    side = v["image_size"]
    image_processor = saved_image_processor({"image_processor_type": "DeepseekVLImageProcessor",
                                             "size": {"height": side, "width": side}}, "torchvision")
    size = raw["text_config"]["vocab_size"]
    assert size - 1 == raw["image_token_id"]
    fast = word_tokenizer(size, ["<pad>", "<s>", "</s>"], ["user:", "Assistant:", "What", "is", "this?"],
                          ["<image_placeholder>"], bos_token="<s>", eos_token="</s>",
                          extra_special_tokens={"image_token": "<image_placeholder>"})
    fast.backend_tokenizer.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    processor = DeepseekVLProcessor(image_processor=image_processor, tokenizer=fast, chat_template=DEEPSEEK_CHAT,
                                    num_image_tokens=(side // v["patch_size"]) ** 2)
    processor.save_pretrained(d)
    return processor


def make_deepseek_vl_image(name, raw):
    import numpy
    from torch.utils.flop_counter import FlopCounterMode
    model, d, processor, image = image_model(name, raw, deepseek_vl_processor)
    run = partial(logits_of_inputs, model)
    prompt = "<image_placeholder> What is this?"
    plain = processor(text=[prompt], images=[image], return_tensors="pt")
    pixels = plain["pixel_values"]
    logits = run(plain)
    # The tower to its last LayerNorm (its pooling head unread) and the aligner.
    vision = model.model.vision_model
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        x = vision.embeddings(pixels)
        x = vision.post_layernorm(vision.encoder(inputs_embeds=x).last_hidden_state)
        model.model.aligner(x)
    numpy.save(d / "pixels.npy", pixels[0].numpy().astype(numpy.float32))
    expected = {"transformers": transformers.__version__, "ids": plain["input_ids"][0].tolist(),
                "prompt_text": prompt, "logits": logits.tolist(), "image_flops": counter.get_total_flops(),
                "image_backend": "torchvision"}
    finish_chat(d, name, (model, processor, image, run), plain, expected, f"pixels {tuple(pixels.shape)}")


if __name__ == "__main__":
    only = set(sys.argv[1:])
    for table, make_one in [(IMAGES, make_image), (GEMMA3_IMAGES, make_gemma3_image),
                            (QWEN2_VL_IMAGES, make_qwen2_vl_image), (LLAMA4_IMAGES, make_llama4_image),
                            (MISTRAL3_IMAGES, make_mistral3_image), (PALIGEMMA_IMAGES, make_paligemma_image),
                            (INTERNVL_IMAGES, make_tiled_image), (AYA_IMAGES, make_tiled_image),
                            (COHERE2_VISION_IMAGES, make_tiled_image), (GIT_IMAGES, make_git_image),
                            (DEEPSEEK_VL_IMAGES, make_deepseek_vl_image),
                            (IDEFICS3_IMAGES, make_idefics3_image),
                            (VIDEO_LLAVA_IMAGES, make_video_llava_image),
                            (LLAVA_NEXT_IMAGES, make_llava_next_image),
                            (CONFIGS, make)]:
        for name, raw in table.items():
            if not only or name in only:
                make_one(name, raw)
    for name, (target_raw, raw) in DRAFTS.items():
        if not only or name in only:
            make_draft(name, target_raw, raw)
