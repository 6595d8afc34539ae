#!/usr/bin/env python3
"""Make the reference fixtures that anatomy's exactness tests compare against.

For every catalog config (crates/core/catalog/*.json) and for generated configs of the same families
that the catalog has never seen (random sizes, fixed seed, some fields left to their defaults), build
the model with Hugging Face `transformers` on the meta device (no weights are allocated) and record the
checkpoint layout that `save_pretrained` writes: the state_dict with tied weights removed and the
weight conversions of transformers 5 reverted (one tensor per expert where checkpoints keep them so).

Writes crates/core/tests/fixtures/reference/<name>.json:
  {"source": ..., "transformers": version, "total_params": int, "active_params": int,
   "tensors": {name: [dims...]}}

Active parameters follow the rule of the Breadth issue: the total minus the routed experts a token does
not use (each MoE layer keeps top_k of its n routed experts); everything else is active.

Usage: python3 scripts/make_fixtures.py [NAME ...]     (needs: pip install torch transformers; timm too for
Gemma 3n's wrapper, whose vision tower is timm's)
"""
import json
import math
import tempfile
import random
import re
import sys
from pathlib import Path

import torch
import transformers
from transformers import AutoModelForCausalLM, CONFIG_MAPPING
from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
from transformers.core_model_loading import revert_weight_conversion
from transformers.modeling_utils import remove_tied_weights_from_state_dict

from make_toy_fixtures import as_published, buildable, resplit_convs, transposed_on_load

ROOT = Path(__file__).resolve().parent.parent
CATALOG = ROOT / "crates/core/catalog"
FIXTURES = ROOT / "crates/core/tests/fixtures"
# Published classes of wrappers whose unseen configs name them too.
# The published class of a wrapper (Gemma3ForConditionalGeneration …), or of a type the causal-LM
# mapping lacks (MllamaForCausalLM): the defaults' fixtures and the unseen configs name it.
ARCHITECTURES = {
    "gemma3": "Gemma3ForConditionalGeneration", "llama4": "Llama4ForConditionalGeneration",
    "got_ocr2": "GotOcr2ForConditionalGeneration", "fuyu": "FuyuForCausalLM",
    "qwen3_5": "Qwen3_5ForConditionalGeneration", "qwen3_5_moe": "Qwen3_5MoeForConditionalGeneration",
    "gemma4": "Gemma4ForConditionalGeneration", "gemma4_unified": "Gemma4UnifiedForConditionalGeneration",
    "mllama": "MllamaForConditionalGeneration", "mllama_text_model": "MllamaForCausalLM",
    "emu3": "Emu3ForConditionalGeneration", "emu3_text_model": "Emu3ForCausalLM",
    "gemma3n": "Gemma3nForConditionalGeneration", "llava": "LlavaForConditionalGeneration",
    "mistral3": "Mistral3ForConditionalGeneration", "llava_next": "LlavaNextForConditionalGeneration",
    "smolvlm": "SmolVLMForConditionalGeneration", "idefics3": "Idefics3ForConditionalGeneration",
    "llava_onevision": "LlavaOnevisionForConditionalGeneration",
    "cohere2_vision": "Cohere2VisionForConditionalGeneration", "internvl": "InternVLForConditionalGeneration",
    "lfm2_vl": "Lfm2VlForConditionalGeneration",
    "qwen2_vl": "Qwen2VLForConditionalGeneration", "qwen2_5_vl": "Qwen2_5_VLForConditionalGeneration",
    "qwen3_vl": "Qwen3VLForConditionalGeneration", "qwen3_vl_moe": "Qwen3VLMoeForConditionalGeneration",
    "glm4v": "Glm4vForConditionalGeneration", "glm4v_moe": "Glm4vMoeForConditionalGeneration",
    "glm46v": "Glm46VForConditionalGeneration", "llava_next_video": "LlavaNextVideoForConditionalGeneration",
    "vipllava": "VipLlavaForConditionalGeneration", "video_llava": "VideoLlavaForConditionalGeneration",
    "aya_vision": "AyaVisionForConditionalGeneration", "lighton_ocr": "LightOnOcrForConditionalGeneration",
    "llava_onevision1_5": "LlavaOnevision15ForConditionalGeneration",
    "kimi_k25": "Kimi_K25ForConditionalGeneration",
    "minimax_m3_vl": "MiniMaxM3SparseForConditionalGeneration",
    "qwen3_omni_moe_thinker": "Qwen3OmniMoeThinkerForConditionalGeneration",
    "idefics2": "Idefics2ForConditionalGeneration",
    "video_llama_3": "VideoLlama3ForConditionalGeneration",
    "pp_chart2table": "GotOcr2ForConditionalGeneration",
    "glmga": "Glm46VForConditionalGeneration",
    "hyperclovax_vision_v2": "HyperCLOVAXVisionV2ForConditionalGeneration",
    "deepseek_vl": "DeepseekVLForConditionalGeneration",
    "minicpmv4_6": "MiniCPMV4_6ForConditionalGeneration", "minicpmv4_7": "MiniCPMV4_7ForConditionalGeneration",
    "minicpm_ocr": "MiniCPMOcrForConditionalGeneration",
    "aria": "AriaForConditionalGeneration",
    "blip-2": "Blip2ForConditionalGeneration", "instructblip": "InstructBlipForConditionalGeneration",
    "instructblipvideo": "InstructBlipVideoForConditionalGeneration",
    "deepseek_vl_hybrid": "DeepseekVLHybridForConditionalGeneration",
    "exaone4_5": "Exaone4_5_ForConditionalGeneration",
    "qianfan_ocr": "QianfanOCRForConditionalGeneration",
    "mistral4": "Mistral4ForCausalLM",
    "paligemma": "PaliGemmaForConditionalGeneration",
    "glm_ocr": "GlmOcrForConditionalGeneration",
    "hunyuan_vl": "HunYuanVLForConditionalGeneration",
    "hy_v4_vl": "HYV4VLForConditionalGeneration",
    "paddleocr_vl": "PaddleOCRVLForConditionalGeneration",
    "cohere_compass": "CohereCompassForConditionalGeneration",
    "qwen2_5_omni_thinker": "Qwen2_5OmniThinkerForConditionalGeneration",
    "ovis2": "Ovis2ForConditionalGeneration",
    "granite_docling": "GraniteDoclingForConditionalGeneration",
    "granite4_vision": "Granite4VisionForConditionalGeneration",
    "lfm3_vl": "Lfm3VlForConditionalGeneration",
    "inkling2": "Inkling2ForConditionalGeneration",
    "inkling2_loop": "Inkling2LoopForConditionalGeneration",
}


def build_config(raw):
    raw = dict(raw)
    if raw["model_type"] not in CONFIG_MAPPING and raw.get("architectures") == ["DeepseekV3ForCausalLM"]:
        raw["model_type"] = "deepseek_v3"  # Kimi K2 and others reuse DeepSeek V3's architecture
    cls = CONFIG_MAPPING[raw["model_type"]]
    return cls.from_dict(buildable(raw))


def text_part(config):
    """The language model of a multimodal wrapper, else the config itself."""
    return getattr(config, "text_config", None) or config


def checkpoint_layout(config, raw):
    # A multimodal wrapper is built as its published class, so the layout is the real checkpoint's
    # (AutoModelForCausalLM would build Llama 4 as text only, under other names); so is a type
    # the causal-LM mapping lacks (Mllama's language model alone).
    arch = (raw.get("architectures") or [None])[0]
    named = "text_config" in raw or raw["model_type"] not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    cls = getattr(transformers, arch, None) if named and arch else None
    with torch.device("meta"):
        model = cls._from_config(config) if cls else AutoModelForCausalLM.from_config(config)
    state = model.state_dict()
    state = remove_tied_weights_from_state_dict(state, model)
    # The parameters as transformers builds them: a stored tensor may hold more (Inkling's head,
    # padded past its real vocabulary with zero rows when saved).
    built = sum(t.numel() for t in state.values())
    state = resplit_convs(revert_weight_conversion(model, state), model)
    return published(config, {name: list(t.shape) for name, t in state.items()}), built


# Names transformers 5.25 reverts twice: LLaVA-OneVision-1.5's language model goes through its
# model's renaming and its conditional-generation class's, to `model.model.`; the published layout
# is Qwen2-VL's (`model.`, which the loading conversion reads).
REVERTED_TWICE = {"llava_onevision1_5": ("model.model.", "model.")}


def published(config, shapes):
    """Shapes as the published checkpoint stores them (`transposed_on_load`, `REVERTED_TWICE`,
    `as_published`)."""
    twice, once = REVERTED_TWICE.get(config.model_type, (None, None))
    out = {(once + name[len(twice):] if twice and name.startswith(twice) else name):
           (s[:-2] + [s[-1], s[-2]] if transposed_on_load(config.model_type, name) else s)
           for name, s in shapes.items()}
    return {as_published(config.model_type, n): s for n, s in out.items()}


def expert_counts(text):
    n = None
    for key in ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"):
        if getattr(text, key, None):
            n = getattr(text, key)
            break
    k = (getattr(text, "num_experts_per_tok", None) or getattr(text, "experts_per_token", None)
         or getattr(text, "moe_topk", None) or getattr(text, "top_k_experts", None))
    return n, k


ROUTED = re.compile(r"\.experts\.|(block_sparse_moe|mlp)\.(input|output)_linear|feed_forward\.(up_proj|down_proj|expert_output_norm\.scale)$")
# Not routed: shared experts (GraniteMoE-Shared's `shared_mlp`), the router and shared bias of JetMoE's attention experts, and a
# correction bias kept under the experts (Laguna).
SHARED = re.compile(r"shared_expert|shared_mlp\.|\.experts\.(router\.|bias$|e_score_correction_bias)")


def active_params(tensors, text):
    total = sum(numel(s) for s in tensors.values())
    n, k = expert_counts(text)
    if not n or not k:
        return total
    # Per layer and kind of expert tensor (gate_proj, or a stacked gate_up_proj): their count m,
    # n for a stacked tensor. A token runs k of them: m may exceed n where transformers builds
    # tensors for LongCat-Flash's zero-computation experts, which run none.
    routed = {}
    for name, shape in tensors.items():
        if ROUTED.search(name) and not SHARED.search(name):
            kind = re.sub(r"\.experts\.\d+\.", ".experts.*.", name[name.index("layers."):])
            count, m = routed.get(kind, (0, 0))
            routed[kind] = (count + numel(shape), m + (1 if ".experts.*." in kind else n))
    inactive = 0
    for kind, (count, m) in routed.items():
        assert count * (m - k) % m == 0, (kind, count, m, k)
        inactive += count * (m - k) // m
    return total - inactive


def numel(shape):
    out = 1
    for d in shape:
        out *= d
    return out


def write(name, source, raw):
    config = build_config(raw)
    tensors, built = checkpoint_layout(config, raw)
    padding = sum(numel(s) for s in tensors.values()) - built
    out = {
        "source": source,
        "transformers": transformers.__version__,
        "total_params": built,
        "active_params": active_params(tensors, text_part(config)) - padding,
        "tensors": tensors,
    }
    # The RoPE base of full-attention layers and the context, as the class resolves them from
    # the config and its defaults.
    text = text_part(config)
    rope = getattr(text, "rope_parameters", None)
    if isinstance(rope, dict):
        rope = rope.get("full_attention", rope)
        if isinstance(rope, dict) and rope.get("rope_theta") is not None:
            out["rope_theta"] = float(rope["rope_theta"])
            # HunYuan's `dynamic` with an alpha: the base its rotary embedding stretches
            # (compute_ntk_alpha_rope_parameters).
            if rope.get("rope_type") == "dynamic" and rope.get("alpha") and text.model_type.startswith("hunyuan"):
                out["rope_theta"] *= rope["alpha"] ** (text.head_dim / (text.head_dim - 2))
    if isinstance(getattr(text, "max_position_embeddings", None), int):
        out["context"] = text.max_position_embeddings
    path = FIXTURES / "reference" / f"{name}.json"
    path.write_text(json.dumps(out, indent=0, sort_keys=True) + "\n")
    print(f"{name}: {out['total_params']:,} total, {out['active_params']:,} active, {len(tensors)} tensors")


def write_unseen(name, raw):
    """A config no catalog entry has (unseen/NAME.json) and its reference."""
    (FIXTURES / "unseen" / f"{name}.json").write_text(json.dumps(raw, indent=2) + "\n")
    write(name, f"unseen/{name}.json", raw)


def flat_values(v):
    """Every value inside a JSON-like tree."""
    if isinstance(v, dict):
        for x in v.values():
            yield from flat_values(x)
    elif isinstance(v, (list, tuple)):
        for x in v:
            yield from flat_values(x)
    else:
        yield v


def as_saved(saved, raw):
    """A saved config without what names its saving (labels, version, path), with the published
    class's architectures."""
    for key in ("id2label", "label2id", "transformers_version", "_name_or_path"):
        saved.pop(key, None)
    if raw.get("architectures"):
        saved["architectures"] = raw["architectures"]
    return saved


def save_defaults(model_type, raw):
    """The defaults as `save_pretrained` writes them: every field of the config class, derived
    ones included. anatomy must read such a file, not only the sparse configs people write."""
    try:
        config = build_config(raw)
    except Exception:  # a class that cannot build its own defaults (checked apart)
        return
    saved = as_saved(config.to_dict(), raw)
    path = FIXTURES / "saved" / f"{model_type}.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(saved, indent=1, sort_keys=True, default=str) + "\n")
    # A class whose defaults hold a non-finite float (Mamba-2's time_step_limit): the file
    # `save_pretrained` itself writes, which tags it {"__float__": "Infinity"}.
    if any(isinstance(x, float) and not math.isfinite(x) for x in flat_values(saved)):
        with tempfile.TemporaryDirectory() as tmp:
            config.save_pretrained(tmp)
            written = as_saved(json.loads(Path(tmp, "config.json").read_text()), raw)
        path = FIXTURES / "saved_pretrained" / f"{model_type}.json"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(written, indent=1, sort_keys=True) + "\n")
    # Each attribute_map alias, alone, set to the default of the field it names: the same model.
    for alias, field in (getattr(type(config), "attribute_map", None) or {}).items():
        if alias == field or saved.get(field) is None:
            continue
        aliased = dict(raw, **{alias: saved[field]})
        path = FIXTURES / "aliases" / f"{model_type}--{alias}.json"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(aliased, indent=1, sort_keys=True) + "\n")


# ---- configs the catalog has never seen -------------------------------------------------------

def heads_and_kv(rng):
    kv = rng.choice([1, 2, 3, 4])
    group = rng.choice([1, 2, 3, 5])
    return kv * group, kv


def unseen_llama_like(rng, model_type):
    heads, kv = heads_and_kv(rng)
    head_dim = rng.choice([8, 16, 24])
    raw = {
        "model_type": model_type,
        "hidden_size": heads * head_dim if rng.random() < 0.5 else rng.choice([48, 96, 120]),
        "intermediate_size": rng.choice([40, 72, 136]),
        "num_hidden_layers": rng.randint(1, 4),
        "num_attention_heads": heads,
        "num_key_value_heads": kv,
        "vocab_size": rng.choice([97, 128, 1000]),
        "head_dim": head_dim,
        "tie_word_embeddings": rng.random() < 0.5,
    }
    if raw["hidden_size"] != heads * head_dim and rng.random() < 0.3:
        raw["hidden_size"] = heads * head_dim
        del raw["head_dim"]  # the default, hidden / heads
    if model_type == "llama":
        raw["attention_bias"] = rng.random() < 0.3
        raw["mlp_bias"] = rng.random() < 0.3
    if model_type == "qwen3":
        raw["attention_bias"] = rng.random() < 0.3
    if rng.random() < 0.3:
        raw.pop("num_key_value_heads")  # the class default
        # The class default of K/V heads: Mistral 8, Qwen2/Qwen3 32, Llama the head count.
        kv_default = {"mistral": 8, "qwen2": 32, "qwen3": 32}.get(model_type)
        if kv_default:
            raw["num_attention_heads"] = kv_default * rng.choice([1, 2])
            raw["head_dim"] = head_dim
    return raw


def unseen_moe(rng, model_type):
    raw = unseen_llama_like(rng, "mistral" if model_type == "mixtral" else "qwen3")
    raw["model_type"] = model_type
    raw.pop("attention_bias", None)
    experts = rng.choice([4, 6, 16])
    raw["num_experts_per_tok"] = rng.choice([1, 2, 3])
    if model_type == "mixtral":
        raw["num_local_experts"] = experts
    else:
        raw["num_experts"] = experts
        raw["moe_intermediate_size"] = rng.choice([16, 24])
        raw["norm_topk_prob"] = rng.random() < 0.5
        raw["num_hidden_layers"] = rng.randint(2, 5)
        if rng.random() < 0.5:
            raw["decoder_sparse_step"] = 2
        if rng.random() < 0.5:
            raw["mlp_only_layers"] = [0]
    return raw


def unseen_smollm3(rng):
    raw = unseen_llama_like(rng, "llama")
    raw["model_type"] = "smollm3"
    raw["pad_token_id"] = 0  # the class default (128004) lies outside a tiny vocabulary
    raw["num_hidden_layers"] = rng.randint(3, 6)
    if rng.random() < 0.5:
        raw["no_rope_layer_interval"] = rng.choice([2, 3])
    else:
        raw["no_rope_layers"] = [rng.choice([0, 1]) for _ in range(raw["num_hidden_layers"])]
    if "num_key_value_heads" not in raw:  # SmolLM3Config's default is 4 K/V heads
        raw["num_attention_heads"] = 4 * rng.choice([1, 2])
        raw["head_dim"] = 16
    return raw


def unseen_simple(rng, model_type):
    raw = unseen_llama_like(rng, "llama")
    raw["model_type"] = model_type
    raw["pad_token_id"] = 0  # class defaults (Phi-3: 32000) can lie outside a tiny vocabulary
    raw.pop("mlp_bias", None)
    if "num_key_value_heads" not in raw and model_type in ("gemma2", "gemma3_text"):
        raw["num_attention_heads"] = 4 * rng.choice([1, 2])  # the Gemma classes default to 4 K/V heads
        raw["head_dim"] = 16
    if model_type == "phi3" and rng.random() < 0.5:
        raw["partial_rotary_factor"] = 0.5
        raw["head_dim"] = 16
        raw["hidden_size"] = raw["num_attention_heads"] * 16
    if model_type in ("gemma2", "gemma3_text"):
        raw["num_hidden_layers"] = rng.randint(2, 7)
        raw["sliding_window"] = rng.choice([16, 64])
        raw["query_pre_attn_scalar"] = rng.choice([16, 32])
        raw.setdefault("head_dim", 16)
        if model_type == "gemma3_text" and rng.random() < 0.5:
            raw["sliding_window_pattern"] = 3
    return raw


def unseen_gpt2(rng):
    heads = rng.choice([2, 3, 4])
    raw = {
        "model_type": "gpt2",
        "n_embd": heads * rng.choice([8, 16]),
        "n_head": heads,
        "n_layer": rng.randint(1, 4),
        "n_positions": rng.choice([32, 128]),
        "vocab_size": rng.choice([97, 1000]),
    }
    if rng.random() < 0.5:
        raw["n_inner"] = rng.choice([40, 100])
    if rng.random() < 0.3:
        raw["tie_word_embeddings"] = False
    return raw


def unseen_deepseek(rng, model_type):
    raw = {
        "model_type": model_type,
        "hidden_size": rng.choice([48, 64]),
        "intermediate_size": rng.choice([40, 72]),
        "moe_intermediate_size": rng.choice([16, 24]),
        "num_hidden_layers": rng.randint(2, 4),
        "num_attention_heads": rng.choice([2, 3, 4]),
        "vocab_size": rng.choice([97, 1000]),
        "n_routed_experts": rng.choice([8, 16]),
        "n_shared_experts": rng.choice([1, 2]),
        "num_experts_per_tok": rng.choice([2, 3]),
        "first_k_dense_replace": rng.choice([0, 1]),
        "tie_word_embeddings": rng.random() < 0.3,
    }
    if model_type != "glm4_moe":
        # MLA repeats each head's keys num_heads / num_key_value_heads times: they must be equal.
        raw["num_key_value_heads"] = raw["num_attention_heads"]
    if model_type == "glm4_moe":
        raw["num_key_value_heads"] = 1
        raw["head_dim"] = rng.choice([8, 16])
        raw["attention_bias"] = rng.random() < 0.5
        raw["use_qk_norm"] = rng.random() < 0.5
    else:
        raw["kv_lora_rank"] = rng.choice([16, 32])
        raw["q_lora_rank"] = rng.choice([None, 24])
        raw["qk_nope_head_dim"] = rng.choice([8, 16])
        raw["qk_rope_head_dim"] = 8
        raw["v_head_dim"] = rng.choice([8, 12])
        raw["n_group"] = rng.choice([1, 2, 4])
        raw["topk_group"] = 1
        if model_type == "deepseek_v2":
            raw["topk_method"] = rng.choice(["greedy", "group_limited_greedy"])
        if model_type == "kimi_k2":
            raw["architectures"] = ["DeepseekV3ForCausalLM"]
    return raw


def unseen_mistral4(rng):
    raw = unseen_deepseek(rng, "mistral4")
    raw["architectures"] = ["Mistral4ForCausalLM"]
    del raw["n_group"], raw["topk_group"]  # its router ranks groups its own way, which anatomy refuses
    raw["norm_topk_prob"] = rng.random() < 0.5
    if rng.random() < 0.5:
        raw["rope_interleave"] = False
    if rng.random() < 0.7:
        raw["rope_parameters"] = {"rope_type": "yarn", "rope_theta": rng.choice([10000.0, 1e6]),
                                  "factor": rng.choice([4.0, 32.0]), "original_max_position_embeddings": 64,
                                  "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 1.0,
                                  "mscale_all_dim": rng.choice([0.0, 1.0]), "llama_4_scaling_beta": 0.1}
    return raw


def unseen_paligemma(rng):
    gemma2 = rng.random() < 0.5
    hidden = rng.choice([32, 48, 64])
    text = {"model_type": "gemma2" if gemma2 else "gemma", "hidden_size": hidden,
            "intermediate_size": rng.choice([40, 72]), "num_hidden_layers": rng.randint(1, 3),
            "num_attention_heads": 4, "num_key_value_heads": rng.choice([1, 2, 4]), "head_dim": rng.choice([8, 16]),
            "vocab_size": rng.choice([300, 1000])}
    if gemma2:
        text["sliding_window"] = rng.choice([4, 16])
    raw = {"model_type": "paligemma", "architectures": ["PaliGemmaForConditionalGeneration"], "text_config": text,
           # A map to another width than the text's builds, but runs no image.
           "projection_dim": hidden if rng.random() < 0.8 else hidden + 8,
           "image_token_index": text["vocab_size"] - 1}
    if rng.random() < 0.8:
        raw["vision_config"] = {"model_type": "siglip_vision_model", "hidden_size": rng.choice([16, 32]),
                                "intermediate_size": 24, "num_hidden_layers": rng.randint(1, 2),
                                "num_attention_heads": 2, "image_size": 28, "patch_size": rng.choice([7, 14]),
                                "vision_use_head": rng.random() < 0.5}
    if rng.random() < 0.5:
        raw["tie_word_embeddings"] = rng.random() < 0.5
    return raw


def unseen_mistral3_mistral4(rng):
    """Mistral 3's wrapper around Mistral 4 (Mistral Small 4's layout): Pixtral's tower of its own
    sizes beside the language model's unseen configs."""
    text = unseen_mistral4(rng)
    del text["architectures"]
    vision = {"model_type": "pixtral", "hidden_size": rng.choice([32, 64]), "intermediate_size": rng.choice([40, 72]),
              "num_hidden_layers": rng.randint(1, 2), "num_attention_heads": 2, "head_dim": 16,
              "image_size": 64, "patch_size": rng.choice([8, 16])}
    return {"model_type": "mistral3", "architectures": ["Mistral3ForConditionalGeneration"], "text_config": text,
            "vision_config": vision, "spatial_merge_size": rng.choice([1, 2]),
            "tie_word_embeddings": rng.random() < 0.3}


def unseen_hy_v4(rng):
    raw = unseen_deepseek(rng, "deepseek_v32")
    del raw["num_key_value_heads"], raw["first_k_dense_replace"], raw["n_group"], raw["topk_group"]
    raw.update({
        "model_type": "hy_v4",
        "q_lora_rank": 24,  # the indexer reads the query latent
        "hc_mult": rng.choice([2, 3, 4]),
        "index_n_heads": rng.choice([2, 4]),
        "index_head_dim": rng.choice([16, 24]),
        "index_topk": rng.choice([4, 8]),
        "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2,
    })
    layers = raw["num_hidden_layers"]
    if rng.random() < 0.5:
        raw["indexer_types"] = ["full"] + [rng.choice(["full", "shared"]) for _ in range(layers - 1)]
    if rng.random() < 0.5:
        raw["mlp_layer_types"] = [rng.choice(["dense", "sparse"]) for _ in range(layers)]
    return raw


def unseen_hy_v4_vl(rng):
    """HY v4 VL around a small HY v4 language model (M-RoPE sections given, or its class's
    default where they fit the rotated dims), tied or not by the wrapper's flag whatever the
    language model's says, and a small vision tower of its own merge and output width."""
    text = unseen_hy_v4(rng)
    text["model_type"] = "hy_v4_vl_text"
    half = text["qk_rope_head_dim"] // 2
    text["rope_parameters"] = {"rope_type": "default", "rope_theta": rng.choice([10000.0, 1e6]),
                               "mrope_section": [half - 2 * (half // 3), half // 3, half // 3]}
    text.pop("rope_theta", None)
    if rng.random() < 0.5:
        text["tie_word_embeddings"] = rng.random() < 0.5
    vision = {"hidden_size": rng.choice([32, 48]), "intermediate_size": rng.choice([40, 56]),
              "num_hidden_layers": rng.randint(1, 2), "num_attention_heads": rng.choice([2, 4]),
              "patch_size": rng.choice([8, 16]), "max_image_size": rng.choice([64, 72]),
              "spatial_merge_size": rng.choice([1, 2]), "out_hidden_size": text["hidden_size"]}
    raw = {"model_type": "hy_v4_vl", "architectures": [ARCHITECTURES["hy_v4_vl"]], "text_config": text,
           "vision_config": vision, "image_token_id": 95, "video_token_id": 96}
    if rng.random() < 0.6:
        raw["tie_word_embeddings"] = rng.random() < 0.5
    return raw


def unseen_paddleocr_vl(rng):
    """PaddleOCR-VL as published: a small ERNIE 4.5 language model's keys at the top level (or in
    text_config), biased or not, M-RoPE's sections, the head tied or not by either flag, and a
    small SigLIP tower of its own image, patch and merge."""
    heads, kv = heads_and_kv(rng)
    head_dim = rng.choice([8, 16])
    text = {"hidden_size": rng.choice([48, 64]), "intermediate_size": rng.choice([40, 72]),
            "num_hidden_layers": rng.randint(1, 3), "num_attention_heads": heads, "num_key_value_heads": kv,
            "head_dim": head_dim, "vocab_size": rng.choice([97, 128]), "use_bias": rng.random() < 0.5,
            "rms_norm_eps": 1e-5, "rope_theta": 500000.0, "max_position_embeddings": 4096,
            "rope_scaling": {"mrope_section": [head_dim // 4, head_dim // 8, head_dim // 8],
                             "rope_type": "default", "type": "default"}}
    vision = {"hidden_size": rng.choice([32, 48]), "intermediate_size": rng.choice([40, 56]),
              "num_hidden_layers": rng.randint(1, 2), "num_attention_heads": rng.choice([2, 4]),
              "image_size": rng.choice([56, 84]), "patch_size": 14, "spatial_merge_size": rng.choice([1, 2]),
              "num_channels": 3}
    raw = {"model_type": "paddleocr_vl", "architectures": [ARCHITECTURES["paddleocr_vl"]], "vision_config": vision,
           "image_token_id": 95, "video_token_id": 96}
    return text_flat_or_nested(rng, raw, text, "paddleocr_vl_text")


def unseen_deepseek_v4(rng):
    layers = rng.choice([2, 3, 4, 5])
    heads = rng.choice([4, 8])
    raw = {
        "model_type": "deepseek_v4", "vocab_size": rng.choice([97, 128]), "hidden_size": rng.choice([32, 48, 64]),
        "num_hidden_layers": layers, "num_attention_heads": heads, "head_dim": rng.choice([16, 32]),
        "q_lora_rank": rng.choice([16, 24]), "moe_intermediate_size": rng.choice([16, 24]),
        "n_routed_experts": rng.choice([4, 8]), "num_experts_per_tok": 2,
        "o_groups": rng.choice([1, 2, 4]), "o_lora_rank": rng.choice([8, 16]),
        "hc_mult": rng.choice([2, 3, 4]), "hc_sinkhorn_iters": rng.choice([1, 3, 20]),
        "index_n_heads": rng.choice([8, 16]), "index_head_dim": rng.choice([16, 24]), "index_topk": rng.choice([2, 4]),
        "sliding_window": rng.choice([4, 8, 16]), "routed_scaling_factor": rng.choice([1.0, 1.5, 2.5]),
        "compress_rates": {"compressed_sparse_attention": rng.choice([2, 4]), "heavily_compressed_attention": rng.choice([4, 8])},
        "partial_rotary_factor": rng.choice([0.25, 0.5]), "swiglu_limit": rng.choice([3.0, 10.0]),
        "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2,
    }
    kinds = ["sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention"]
    if rng.random() < 0.7:
        raw["layer_types"] = [rng.choice(kinds) for _ in range(layers)]
    if rng.random() < 0.5:
        raw["mlp_layer_types"] = [rng.choice(["hash_moe", "moe"]) for _ in range(layers)]
    else:
        raw["num_hash_layers"] = rng.choice([0, 1, 2])
    if rng.random() < 0.5:
        raw["rope_parameters"] = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64,
                                  "beta_fast": 32, "beta_slow": 1}
    return raw


def unseen_axk2(rng):
    raw = unseen_deepseek(rng, "deepseek_v32")
    del raw["first_k_dense_replace"], raw["n_group"], raw["topk_group"]
    layers = raw["num_hidden_layers"]
    raw.update({
        "model_type": "axk2",
        "q_lora_rank": rng.choice([16, 24]),
        "index_n_heads": rng.choice([2, 4]),
        "index_head_dim": rng.choice([16, 24]),
        "index_topk": rng.choice([4, 8]),
        "gated_norm_rank": rng.choice([4, 8]),
        "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2,
        "mlp_layer_types": ["dense"] + [rng.choice(["dense", "sparse"]) for _ in range(layers - 1)],
    })
    return raw


def unseen_beam(rng):
    raw = unseen_llama_like(rng, "qwen3")
    layers = rng.randint(4, 8)  # past the three dense layers of the default
    n_group = rng.choice([1, 2, 4])
    raw.update({
        "model_type": "beam",
        "num_hidden_layers": layers,
        "attention_bias": rng.random() < 0.3,
        "sliding_window": rng.choice([16, 64]),
        "num_experts": n_group * rng.choice([2, 4]),
        "n_group": n_group,
        "topk_group": rng.randint(1, n_group),
        "num_experts_per_tok": rng.choice([1, 2]),
        "moe_intermediate_size": rng.choice([16, 24]),
        "norm_topk_prob": rng.random() < 0.7,
        "routed_scaling_factor": rng.choice([1.0, 2.5]),
        "final_logit_softcapping": rng.choice([None, 30.0]),
        "pad_token_id": 0,
    })
    if "num_key_value_heads" not in raw:  # Qwen3's default of 32 is not Beam's 8
        raw["num_key_value_heads"] = raw["num_attention_heads"]
    if rng.random() < 0.5:
        raw["mlp_layer_types"] = [rng.choice(["dense", "sparse"]) for _ in range(layers)]
    if rng.random() < 0.5:
        raw["layer_types"] = [rng.choice(["sliding_attention", "full_attention"]) for _ in range(layers)]
    if rng.random() < 0.5:
        raw["rope_parameters"] = {
            "sliding_attention": {"rope_type": "default", "rope_theta": rng.choice([1000.0, 500000.0])},
            "full_attention": None if rng.random() < 0.7 else {"rope_type": "default", "rope_theta": 10000.0},
        }
    return raw


def unseen_mllama(rng):
    text = unseen_llama_like(rng, "llama")
    for key in ("model_type", "attention_bias", "mlp_bias"):
        text.pop(key, None)
    layers = rng.randint(2, 9)
    text["num_hidden_layers"] = layers
    if "num_key_value_heads" not in text:  # Mllama's default of 8 K/V heads
        text["num_attention_heads"] = 8 * rng.choice([1, 2])
    # The class reads no head_dim: heads are hidden_size / num_attention_heads wide.
    text["hidden_size"] = text["num_attention_heads"] * text.pop("head_dim", 16)
    if rng.random() < 0.7:
        text["cross_attention_layers"] = sorted(rng.sample(range(layers + 2), rng.randint(1, 3)))
    text.update({"pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2})
    hidden = rng.choice([16, 32])
    vision = {"hidden_size": hidden, "intermediate_size": rng.choice([24, 48]),
              "num_hidden_layers": rng.randint(1, 3), "num_global_layers": rng.randint(1, 2),
              "attention_heads": 2, "image_size": rng.choice([28, 56]), "patch_size": 14,
              "max_num_tiles": rng.choice([1, 2]),
              "supported_aspect_ratios": [[1, 1]] if rng.random() < 0.5 else [[1, 1], [1, 2], [2, 1]],
              "intermediate_layers_indices": [0], "vision_output_dim": 2 * hidden}
    return {"model_type": "mllama", "architectures": ["MllamaForConditionalGeneration"],
            "text_config": text, "vision_config": vision}


def unseen_llava(rng):
    """LLaVA around a small Llama, Mistral or Qwen2: a CLIP tower of its own sizes (the keys it
    leaves out take CLIPVisionConfig's defaults), one feature layer or several, the projector
    with biases or without, the head tied or not."""
    text = unseen_llama_like(rng, rng.choice(["llama", "mistral", "qwen2"]))
    vision = {"model_type": "clip_vision_model", "hidden_size": rng.choice([32, 64]),
              "intermediate_size": rng.choice([48, 96]), "num_hidden_layers": rng.randint(1, 4),
              "num_attention_heads": 4, "image_size": rng.choice([28, 56]), "patch_size": 14}
    if rng.random() < 0.3:
        del vision["image_size"]  # CLIPVisionConfig's 224
    raw = {"model_type": "llava", "architectures": ["LlavaForConditionalGeneration"],
           "text_config": text, "vision_config": vision,
           "vision_feature_layer": rng.choice([-2, -1, [-2, -1]]),
           "multimodal_projector_bias": rng.random() < 0.6,
           "tie_word_embeddings": rng.random() < 0.4}
    if raw["vision_feature_layer"] == [-2, -1] and rng.random() < 0.5:
        raw["vision_feature_select_strategy"] = "full"
    return raw


def unseen_mistral3(rng):
    """Mistral 3 around a small Mistral, Llama or Qwen3: a Pixtral tower of its own sizes (the
    keys it leaves out take PixtralVisionConfig's defaults), patches merged by 1 or 2, one feature
    layer or several, the projector with biases or without, the head tied or not."""
    text = unseen_llama_like(rng, rng.choice(["mistral", "llama", "qwen3"]))
    hidden = rng.choice([32, 64])
    vision = {"model_type": "pixtral", "hidden_size": hidden, "intermediate_size": rng.choice([48, 96]),
              "num_hidden_layers": rng.randint(1, 3), "num_attention_heads": 4, "head_dim": hidden // 4,
              "image_size": rng.choice([56, 112]), "patch_size": 14}
    if rng.random() < 0.3:
        del vision["patch_size"]  # PixtralVisionConfig's 16
    return {"model_type": "mistral3", "architectures": ["Mistral3ForConditionalGeneration"],
            "text_config": text, "vision_config": vision, "spatial_merge_size": rng.choice([1, 2]),
            "vision_feature_layer": rng.choice([-1, [-2, -1]]),
            "multimodal_projector_bias": rng.random() < 0.4,
            "tie_word_embeddings": rng.random() < 0.5}


def unseen_llava_next(rng):
    """LLaVA-NeXT: LLaVA's unseen configs under its own type and class, with its grid of image
    resolutions."""
    raw = unseen_llava(rng)
    raw.update({"model_type": "llava_next", "architectures": ["LlavaNextForConditionalGeneration"],
                "image_grid_pinpoints": [[28, 56], [56, 28], [56, 56]]})
    return raw


def unseen_llava_onevision(rng):
    """LLaVA-OneVision around a small Qwen2 or Llama: a SigLIP tower of its own sizes, with its
    pooling head or not (SiglipVisionConfig's default, a head, where the key is left out)."""
    raw = unseen_llava(rng)
    raw["text_config"] = unseen_llama_like(rng, rng.choice(["qwen2", "llama"]))
    vision = {"model_type": "siglip_vision_model", "hidden_size": rng.choice([32, 64]),
              "intermediate_size": rng.choice([48, 96]), "num_hidden_layers": rng.randint(1, 3),
              "num_attention_heads": 4, "image_size": rng.choice([28, 56]), "patch_size": 14}
    head = rng.choice([None, True, False])
    if head is not None:
        vision["vision_use_head"] = head
    raw.update({"model_type": "llava_onevision", "architectures": ["LlavaOnevisionForConditionalGeneration"],
                "vision_config": vision, "image_grid_pinpoints": [[28, 56], [56, 28], [56, 56]]})
    raw.pop("vision_feature_select_strategy", None)
    return raw


def unseen_cohere2_vision(rng):
    """Command A Vision around a small Cohere2: a SigLIP tower of its own sizes with its pooling
    head or not (or the key left out), a pixel shuffle of 1 or 2, its own alignment width, the
    head tied or not."""
    text = unseen_simple(rng, "cohere2")
    vision = {"model_type": "siglip_vision_model", "hidden_size": rng.choice([32, 64]),
              "intermediate_size": rng.choice([48, 96]), "num_hidden_layers": rng.randint(1, 3),
              "num_attention_heads": 4, "image_size": rng.choice([64, 128]), "patch_size": 16}
    head = rng.choice([None, True, False])
    if head is not None:
        vision["vision_use_head"] = head
    return {"model_type": "cohere2_vision", "architectures": ["Cohere2VisionForConditionalGeneration"],
            "text_config": text, "vision_config": vision, "downsample_factor": rng.choice([1, 2]),
            "alignment_intermediate_size": rng.choice([64, 128]),
            "tie_word_embeddings": rng.random() < 0.5}


def unseen_internvl(rng):
    """InternVL around a small Qwen2, Qwen3 or Llama: InternViT of its own sizes, its norms
    LayerNorms or RMSNorms, Q and K normed or not, biased or not, a mask token, positions and
    the last norm where the flags say, a pixel shuffle of ratio 1/2 or 1/4 or none, the head tied
    or not."""
    text = unseen_llama_like(rng, rng.choice(["qwen2", "qwen3", "llama"]))
    hidden = rng.choice([32, 64])
    vision = {"model_type": "internvl_vision", "hidden_size": hidden, "intermediate_size": rng.choice([48, 96]),
              "num_hidden_layers": rng.randint(1, 3), "num_attention_heads": 4,
              "image_size": rng.choice([28, 56]), "patch_size": 14,
              "norm_type": rng.choice(["layer_norm", "rms_norm"]), "use_qk_norm": rng.random() < 0.5,
              "attention_bias": rng.random() < 0.5, "use_mask_token": rng.random() < 0.3,
              "use_absolute_position_embeddings": rng.random() < 0.7, "use_mean_pooling": rng.random() < 0.5}
    return {"model_type": "internvl", "architectures": ["InternVLForConditionalGeneration"],
            "text_config": text, "vision_config": vision, "downsample_ratio": rng.choice([0.5, 0.25, 1.0]),
            "tie_word_embeddings": rng.random() < 0.5}


def unseen_lfm2_vl(rng):
    """LFM2-VL around a small LFM2: SigLIP2 of its own sizes (its head or not, or the key left
    out), a pixel unshuffle of 1 or 2, the projector's width, norm and biases, the head tied or
    not."""
    text = json.loads((ROOT / "crates/exec/tests/fixtures/lfm2/config.json").read_text())
    text["tie_word_embeddings"] = rng.random() < 0.5
    vision = {"model_type": "siglip2_vision_model", "hidden_size": rng.choice([32, 64]),
              "intermediate_size": rng.choice([48, 96]), "num_hidden_layers": rng.randint(1, 3),
              "num_attention_heads": 4, "num_patches": rng.choice([16, 64]), "patch_size": 16}
    head = rng.choice([None, True, False])
    if head is not None:
        vision["vision_use_head"] = head
    return {"model_type": "lfm2_vl", "architectures": ["Lfm2VlForConditionalGeneration"],
            "text_config": text, "vision_config": vision, "downsample_factor": rng.choice([1, 2]),
            "projector_hidden_size": rng.choice([48, 96]), "projector_bias": rng.random() < 0.6,
            "projector_use_layernorm": rng.random() < 0.6, "tie_word_embeddings": rng.random() < 0.5}


def unseen_qwen2_vl(rng, model_type):
    """Qwen2-VL or Qwen2.5-VL as published: the language model's keys at the top level (or, as
    transformers 5 saves them, in text_config), RoPE type `mrope` with its sections, sliding
    windows from some layer on or none, the head tied by the wrapper's flag or the language
    model's, and a small vision tower under the published keys (Qwen2-VL's `in_chans` and
    `spatial_patch_size` among them, which its class never reads)."""
    heads, kv = heads_and_kv(rng)
    head_dim = rng.choice([8, 16])
    layers = rng.randint(1, 4)
    text = {"hidden_size": heads * head_dim, "intermediate_size": rng.choice([40, 72, 136]),
            "num_hidden_layers": layers, "num_attention_heads": heads, "num_key_value_heads": kv,
            "vocab_size": rng.choice([97, 128, 1000]), "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
            "max_position_embeddings": 4096,
            "rope_scaling": {"type": "mrope", "mrope_section": [head_dim // 4, head_dim // 8, head_dim // 8]}}
    if rng.random() < 0.5:
        text.update(use_sliding_window=True, sliding_window=16, max_window_layers=rng.randint(0, layers))
    if model_type == "qwen2_vl":
        vision = {"depth": rng.randint(1, 2), "embed_dim": rng.choice([32, 64]), "mlp_ratio": rng.choice([2, 4]),
                  "num_heads": 4, "in_chans": 3, "hidden_size": text["hidden_size"], "patch_size": 14,
                  "spatial_merge_size": rng.choice([1, 2]), "spatial_patch_size": 14, "temporal_patch_size": 2}
    else:
        vision = {"depth": rng.randint(1, 2), "hidden_size": rng.choice([32, 64]),
                  "intermediate_size": rng.choice([48, 96]), "num_heads": 4, "in_chans": 3,
                  "out_hidden_size": text["hidden_size"], "patch_size": 14, "spatial_merge_size": rng.choice([1, 2]),
                  "window_size": 112, "fullatt_block_indexes": [0], "tokens_per_second": 2, "temporal_patch_size": 2}
    if rng.random() < 0.3:
        vision.pop("hidden_size" if model_type == "qwen2_vl" else "out_hidden_size")  # the class default
    raw = {"model_type": model_type, "architectures": [ARCHITECTURES[model_type]], "vision_config": vision,
           "image_token_id": 95, "video_token_id": 96}
    return text_flat_or_nested(rng, raw, text, f"{model_type}_text")


def text_flat_or_nested(rng, raw, text, text_type):
    """A wrapper whose class reads its language model's keys at the top level or in text_config
    (Qwen2-VL's): the text keys placed one way or the other, the head tied or not by either
    flag."""
    if rng.random() < 0.35:
        text["model_type"] = text_type
        if rng.random() < 0.5:
            text["tie_word_embeddings"] = rng.random() < 0.5
        raw["text_config"] = text
    else:
        raw.update(text)
    if rng.random() < 0.7:
        raw["tie_word_embeddings"] = rng.random() < 0.5
    return raw


def unseen_hunyuan_vl(rng):
    """HunyuanOCR as published: its HunYuan language model's keys at the top level (or in
    text_config), head sizes by either name, RoPE `xdrope` with an NTK alpha and its four
    sections (or `dynamic`, or none), the head tied or not, and a small vision tower of its own
    heads (a head_dim of its own or not), largest image and merge."""
    heads, kv = heads_and_kv(rng)
    head_dim = rng.choice([8, 16])
    text = {"hidden_size": rng.choice([48, 64]), "intermediate_size": rng.choice([40, 72]),
            "num_hidden_layers": rng.randint(1, 3), "num_attention_heads": heads, "num_key_value_heads": kv,
            "vocab_size": rng.choice([97, 128]), "rope_theta": rng.choice([10000.0, 500000.0]),
            "max_position_embeddings": 4096, "eod_token_id": 3, "sep_token_id": 4, "pad_id": 0}
    text["attention_head_dim" if rng.random() < 0.5 else "head_dim"] = head_dim
    rope = rng.choice(["xdrope", "dynamic", None])
    if rope == "xdrope":
        text["rope_scaling"] = {"type": "xdrope", "alpha": rng.choice([1000.0, 10.0]), "factor": 1.0, "beta_fast": 32,
                                "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0,
                                "xdrope_section": [head_dim // 8] * 4}
    elif rope == "dynamic":
        text["rope_scaling"] = {"type": "dynamic", "factor": 2.0}
    vision = {"hidden_size": rng.choice([32, 48]), "intermediate_size": rng.choice([40, 56]),
              "num_hidden_layers": rng.randint(1, 2), "num_attention_heads": rng.choice([2, 4]),
              "patch_size": rng.choice([8, 16]), "max_image_size": rng.choice([64, 72]),
              "spatial_merge_size": rng.choice([1, 2]), "num_channels": rng.choice([3, 1])}
    if rng.random() < 0.3:
        vision["head_dim"] = 12
    raw = {"model_type": "hunyuan_vl", "architectures": [ARCHITECTURES["hunyuan_vl"]], "vision_config": vision,
           "image_token_id": 95, "im_start_id": 93, "im_end_id": 94, "im_newline_id": 96}
    if rng.random() < 0.35:
        raw["text_config"] = dict(text, model_type="hunyuan_vl_text")
    else:
        raw.update(text)
    if rng.random() < 0.6:
        raw["tie_word_embeddings"] = rng.random() < 0.5
    return raw


def unseen_qwen3_vl(rng):
    """Qwen3-VL around a small Qwen3-like language model (interleaved M-RoPE sections, a bias or
    not, the head tied by the wrapper's flag, whatever the language model's says), a vision tower
    of its own sizes with zero to two deep-stack mergers."""
    text = unseen_llama_like(rng, "qwen3")
    text["model_type"] = "qwen3_vl_text"
    text["rope_scaling"] = {"mrope_interleaved": True, "mrope_section": [2, 1, 1], "rope_type": "default"}
    text["rope_theta"] = 5000000
    vision = qwen3_vl_vision(rng, "qwen3_vl", rng.randint(1, 3), text["hidden_size"], 2)
    if rng.random() < 0.3:
        del vision["deepstack_visual_indexes"]  # the class's three
    return {"model_type": "qwen3_vl", "architectures": ["Qwen3VLForConditionalGeneration"], "text_config": text,
            "vision_config": vision, "tie_word_embeddings": rng.random() < 0.5}


def qwen3_vl_vision(rng, kind, depth, out, stacked):
    """A small Qwen3-VL tower `depth` blocks deep into `out`, with up to `stacked` (and `depth`)
    deep-stack mergers."""
    return {"model_type": kind, "depth": depth, "hidden_size": rng.choice([32, 64]),
            "intermediate_size": rng.choice([48, 96]), "num_heads": 4,
            "num_position_embeddings": rng.choice([16, 64]), "out_hidden_size": out,
            "patch_size": 16, "spatial_merge_size": rng.choice([1, 2]), "temporal_patch_size": 2,
            "deepstack_visual_indexes": list(range(rng.randint(0, min(depth, stacked))))}


def unseen_cohere_compass(rng):
    """Cohere Compass in its wrapper: a small Cohere Compass language model (sliding and full
    layers, RoPE per layer type with M-RoPE's sections, NoPE full layers or not), Qwen3-VL's tower
    of its own sizes, tied or not by the wrapper's flag."""
    heads, kv = heads_and_kv(rng)
    layers = rng.randint(1, 4)
    types = [rng.choice(["sliding_attention", "full_attention"]) for _ in range(layers)]
    rope = {"sliding_attention": {"rope_type": "default", "rope_theta": 50000.0, "mrope_section": [2, 1, 1]},
            "full_attention": None if rng.random() < 0.5 else {"rope_type": "default", "rope_theta": 10000.0,
                                                                "mrope_section": [2, 1, 1]}}
    text = {"model_type": "cohere_compass_text", "hidden_size": heads * 8, "head_dim": 8,
            "intermediate_size": rng.choice([40, 72]), "num_hidden_layers": layers, "num_attention_heads": heads,
            "num_key_value_heads": kv, "vocab_size": rng.choice([97, 128]), "sliding_window": 8,
            "layer_types": types, "rope_parameters": rope}
    if rng.random() < 0.5:
        text["logit_scale"] = 0.25
    vision = qwen3_vl_vision(rng, "cohere_compass_vision", rng.randint(1, 2), text["hidden_size"], 2)
    return {"model_type": "cohere_compass", "architectures": [ARCHITECTURES["cohere_compass"]], "text_config": text,
            "vision_config": vision, "tie_word_embeddings": rng.random() < 0.5}


def unseen_qwen2_5_omni_thinker(rng):
    """Qwen2.5-Omni's thinker around a small Qwen2-like language model (M-RoPE's sections,
    sliding windows from some layer on or none), tied or not by the wrapper's flag, a vision tower
    and an audio encoder of their own sizes."""
    heads, kv = heads_and_kv(rng)
    layers = rng.randint(1, 3)
    text = {"model_type": "qwen2_5_omni_text", "hidden_size": heads * 8, "intermediate_size": rng.choice([40, 72]),
            "num_hidden_layers": layers, "num_attention_heads": heads, "num_key_value_heads": kv,
            "vocab_size": rng.choice([97, 128]),
            "rope_parameters": {"rope_type": "default", "rope_theta": 1e6, "mrope_section": [2, 1, 1]}}
    if rng.random() < 0.5:
        text.update(use_sliding_window=True, sliding_window=16, max_window_layers=rng.randint(0, layers))
    if rng.random() < 0.5:
        text["tie_word_embeddings"] = rng.random() < 0.5
    vision = {"depth": rng.randint(1, 2), "hidden_size": rng.choice([32, 48]), "intermediate_size": rng.choice([40, 56]),
              "num_heads": 4, "out_hidden_size": text["hidden_size"], "spatial_merge_size": rng.choice([1, 2]),
              "fullatt_block_indexes": [0]}
    audio = {"d_model": rng.choice([32, 48]), "encoder_layers": rng.randint(1, 2), "encoder_attention_heads": 2,
             "encoder_ffn_dim": rng.choice([40, 64]), "num_mel_bins": rng.choice([16, 20]),
             "output_dim": text["hidden_size"], "max_source_positions": 30}
    raw = {"model_type": "qwen2_5_omni_thinker", "architectures": [ARCHITECTURES["qwen2_5_omni_thinker"]],
           "text_config": text, "vision_config": vision, "audio_config": audio}
    if rng.random() < 0.6:
        raw["tie_word_embeddings"] = rng.random() < 0.5
    return raw


def unseen_ovis2(rng):
    """Ovis2 around a small Qwen2 or Llama language model, tied or not by the wrapper's flag, a
    visual tokenizer of its own sizes (biases or not, a hidden stride, its own vocabulary and
    indicator count) and the wrapper's own width for the visual embedding table."""
    text = unseen_llama_like(rng, rng.choice(["qwen2", "llama"]))
    vision = {"hidden_size": rng.choice([32, 48]), "intermediate_size": rng.choice([40, 56]),
              "num_hidden_layers": rng.randint(1, 2), "num_attention_heads": 2, "image_size": rng.choice([28, 56]),
              "patch_size": 14, "qkv_bias": rng.random() < 0.5, "mlp_bias": rng.random() < 0.5,
              "hidden_stride": rng.choice([1, 2]), "vocab_size": rng.choice([40, 64]),
              "num_visual_indicator_tokens": rng.choice([5, 3])}
    raw = {"model_type": "ovis2", "architectures": [ARCHITECTURES["ovis2"]], "text_config": text,
           "vision_config": vision, "hidden_size": rng.choice([text["hidden_size"], 24]), "vocab_size": text["vocab_size"]}
    if rng.random() < 0.6:
        raw["tie_word_embeddings"] = rng.random() < 0.5
    return raw


def unseen_granite_docling(rng):
    """Granite Docling around a small Granite language model (its μP multipliers given or its
    class's), tied or not, a SigLIP tower of its own sizes, the connector with or without its
    fine path and with zero to two deep-stack mergers, and the density router or none."""
    heads, kv = heads_and_kv(rng)
    text = {"hidden_size": heads * 8, "intermediate_size": rng.choice([40, 72]), "num_hidden_layers": rng.randint(1, 3),
            "num_attention_heads": heads, "num_key_value_heads": kv, "vocab_size": rng.choice([97, 128]),
            "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2}
    if rng.random() < 0.5:
        text.update(embedding_multiplier=2.0, residual_multiplier=0.5, attention_multiplier=0.125, logits_scaling=2.0)
    depth = rng.randint(1, 4)
    vision = {"hidden_size": rng.choice([32, 48]), "intermediate_size": rng.choice([40, 56]), "num_hidden_layers": depth,
              "num_attention_heads": 2, "image_size": 64, "patch_size": 8, "out_hidden_size": text["hidden_size"],
              "scale_factor": rng.choice([2, 4]), "use_fine_route": rng.random() < 0.5,
              "deepstack_visual_indexes": list(range(rng.randint(0, min(depth, 2))))}
    raw = {"model_type": "granite_docling", "architectures": [ARCHITECTURES["granite_docling"]], "text_config": text,
           "vision_config": vision, "pad_token_id": 0}
    if vision["use_fine_route"] and rng.random() < 0.6:
        raw["density_router_hidden_size"] = 16
    if rng.random() < 0.6:
        raw["tie_word_embeddings"] = rng.random() < 0.5
    return raw


def unseen_granite4_vision(rng):
    """Granite 4 Vision around a small Granite language model, tied or not, a CLIP or SigLIP
    tower (its head or not), one to three deep-stack pairs, a window rate, and a Q-Former of its
    class's defaults or one of its own depth and width."""
    heads, kv = heads_and_kv(rng)
    layers = rng.randint(1, 3)
    text = {"hidden_size": heads * 8, "intermediate_size": rng.choice([40, 72]), "num_hidden_layers": layers,
            "num_attention_heads": heads, "num_key_value_heads": kv, "vocab_size": rng.choice([97, 128]),
            "embedding_multiplier": rng.choice([1.0, 4.0]), "logits_scaling": rng.choice([1.0, 2.0])}
    kind = rng.choice(["clip_vision_model", "siglip_vision_model"])
    vision = {"model_type": kind, "hidden_size": 64, "intermediate_size": rng.choice([40, 56]),
              "num_hidden_layers": rng.randint(1, 2), "num_attention_heads": 2, "image_size": 64, "patch_size": 8}
    if kind == "siglip_vision_model" and rng.random() < 0.5:
        vision["vision_use_head"] = False
    pairs = [[i % vision["num_hidden_layers"], i % layers] for i in range(rng.randint(1, 3))]
    raw = {"model_type": "granite4_vision", "architectures": [ARCHITECTURES["granite4_vision"]], "text_config": text,
           "vision_config": vision, "downsample_rate": rng.choice(["2/4", "1/2"]), "deepstack_layer_map": pairs,
           "spatial_target_layers": [0] * 4, "image_grid_pinpoints": [[64, 64]]}
    if rng.random() < 0.5:
        # Blip2QFormerConfig's defaults for what a given one leaves out (not the wrapper's).
        raw["qformer_config"] = rng.choice([{"num_hidden_layers": 2, "intermediate_size": 48,
                                             "cross_attention_frequency": 2}, {"intermediate_size": 24}])
    if rng.random() < 0.6:
        raw["tie_word_embeddings"] = rng.random() < 0.5
    return raw


def unseen_qwen3_vl_moe(rng):
    """Qwen3-VL-MoE around a small Qwen3-MoE-like language model (experts every layer or every
    other, some layers dense, the expert count under either of its names), Qwen3-VL's tower."""
    raw = unseen_qwen3_vl(rng)
    raw.update(model_type="qwen3_vl_moe", architectures=["Qwen3VLMoeForConditionalGeneration"])
    raw["vision_config"]["model_type"] = "qwen3_vl_moe"
    text = raw["text_config"]
    experts = rng.choice(["num_experts", "num_local_experts"])
    text.update({"model_type": "qwen3_vl_moe_text", experts: rng.choice([4, 8]), "num_experts_per_tok": 2,
                 "moe_intermediate_size": rng.choice([16, 24]), "decoder_sparse_step": rng.choice([1, 2])})
    if text["num_hidden_layers"] > 1 and rng.random() < 0.5:
        text["mlp_only_layers"] = [0]
    return raw


def unseen_llava_next_video(rng):
    """LLaVA-NeXT-Video: LLaVA-NeXT's unseen configs, frames pooled by average, max or a
    convolution (its output channels given or the vision width)."""
    raw = unseen_llava_next(rng)
    raw.update(model_type="llava_next_video", architectures=["LlavaNextVideoForConditionalGeneration"],
               spatial_pool_mode=rng.choice(["average", "max", "conv"]), spatial_pool_stride=rng.choice([1, 2]))
    if raw["spatial_pool_mode"] == "conv" and rng.random() < 0.5:
        raw["spatial_pool_out_channels"] = rng.choice([16, 48])
    return raw


def unseen_vipllava(rng):
    """VipLlava: LLaVA's unseen configs without the projector's bias flag, joining one vision
    layer or several under either key's name, or the class's five."""
    raw = unseen_llava(rng)
    raw.update(model_type="vipllava", architectures=["VipLlavaForConditionalGeneration"])
    for key in ("multimodal_projector_bias", "vision_feature_select_strategy", "vision_feature_layer"):
        raw.pop(key, None)
    layers = rng.choice([None, -2, [-2, -1], [-1, -2, 0]])
    if layers is not None:
        raw[rng.choice(["vision_feature_layer", "vision_feature_layers"])] = layers
    return raw


def unseen_video_llava(rng):
    """Video-LLaVA: LLaVA's unseen configs under its own type and class (its image and video
    towers share the vision config)."""
    raw = unseen_llava(rng)
    raw.update(model_type="video_llava", architectures=["VideoLlavaForConditionalGeneration"])
    return raw


def unseen_aya_vision(rng):
    """Aya Vision around a small Cohere2: a SigLIP tower of its own sizes (its head or not, or
    the key left out), a pixel shuffle of 1 or 2, the projector's inner width given or the text
    width, the head tied or not."""
    text = unseen_llama_like(rng, "llama")
    text = {k: v for k, v in text.items() if k not in ("attention_bias", "mlp_bias")}
    text.update(model_type="cohere2", sliding_window=16, layer_types=None)
    text.pop("layer_types")
    vision = {"model_type": "siglip_vision_model", "hidden_size": rng.choice([32, 64]),
              "intermediate_size": rng.choice([48, 96]), "num_hidden_layers": rng.randint(1, 3),
              "num_attention_heads": 4, "image_size": rng.choice([28, 56]), "patch_size": 14}
    head = rng.choice([None, True, False])
    if head is not None:
        vision["vision_use_head"] = head
    raw = {"model_type": "aya_vision", "architectures": ["AyaVisionForConditionalGeneration"], "text_config": text,
           "vision_config": vision, "downsample_factor": rng.choice([1, 2]), "tie_word_embeddings": rng.random() < 0.5}
    if rng.random() < 0.5:
        raw["alignment_intermediate_size"] = rng.choice([64, 128])
    return raw


def unseen_lighton_ocr(rng):
    """LightOnOCR around a small Qwen3: a Pixtral tower of its own sizes (the keys it leaves out
    take PixtralVisionConfig's defaults), patches merged by 1 or 2, the head tied or not."""
    vision = {"model_type": "pixtral", "hidden_size": rng.choice([32, 64]), "intermediate_size": rng.choice([48, 96]),
              "num_hidden_layers": rng.randint(1, 3), "num_attention_heads": 4, "head_dim": 8,
              "image_size": 56, "patch_size": 14}
    return {"model_type": "lighton_ocr", "architectures": ["LightOnOcrForConditionalGeneration"],
            "text_config": unseen_llama_like(rng, "qwen3"), "vision_config": vision,
            "spatial_merge_size": rng.choice([1, 2]), "tie_word_embeddings": rng.random() < 0.5}


def unseen_llava_onevision1_5(rng):
    """LLaVA-OneVision-1.5 around a small Qwen3: RiceViT of its own sizes (its output the text
    width, as the config class requires), patches merged by 1 or 2, the head tied or not."""
    text = unseen_llama_like(rng, "qwen3")
    vision = {"model_type": "llava_onevision1_5_vision", "depth": rng.randint(1, 3), "hidden_size": rng.choice([32, 64]),
              "intermediate_size": rng.choice([48, 96]), "num_heads": 4, "patch_size": 14,
              "spatial_merge_size": rng.choice([1, 2]), "out_hidden_size": text["hidden_size"]}
    return {"model_type": "llava_onevision1_5", "architectures": ["LlavaOnevision15ForConditionalGeneration"],
            "text_config": text, "vision_config": vision, "tie_word_embeddings": rng.random() < 0.5}


def unseen_kimi_k25(rng):
    """Kimi K2.5 around a small DeepSeek-V3 (named `kimi_k2` as its published configs do, or
    `deepseek_v3`): a MoonViT of its own sizes and position grid, patches merged 2×2 or 1×2, the
    projector's norm as wide as the tower, the head tied or not."""
    text = unseen_deepseek(rng, "deepseek_v3")
    text["model_type"] = rng.choice(["kimi_k2", "deepseek_v3"])
    hidden = rng.choice([32, 64])
    vision = {"model_type": "kimi_k25_vision", "hidden_size": hidden, "intermediate_size": rng.choice([48, 96]),
              "num_hidden_layers": rng.randint(1, 3), "num_attention_heads": 4, "patch_size": 14,
              "pos_emb_height": rng.choice([4, 8]), "pos_emb_width": rng.choice([4, 6]),
              "merge_kernel_size": rng.choice([[2, 2], [1, 2]])}
    return {"model_type": "kimi_k25", "architectures": ["Kimi_K25ForConditionalGeneration"],
            "text_config": text, "vision_config": vision, "projection_hidden_size": hidden,
            "tie_word_embeddings": rng.random() < 0.5}


def unseen_minimax_m3_vl(rng):
    """MiniMax-M3 with its vision tower around a small language model (unseen_minimax_m3's): a
    tower of its own sizes, patches merged by 1 or 2, the projector's width its own, the head
    tied by the wrapper's flag, the text config's, or neither."""
    text = unseen_minimax_m3(rng)
    tie = rng.choice([None, "wrapper", "text"])
    text["tie_word_embeddings"] = tie == "text"
    vision = {"model_type": "minimax_m3_vl_vision", "hidden_size": rng.choice([32, 64]),
              "intermediate_size": rng.choice([48, 96]), "num_hidden_layers": rng.randint(1, 3),
              "num_attention_heads": 4, "patch_size": 14, "temporal_patch_size": rng.choice([1, 2]),
              "spatial_merge_size": rng.choice([1, 2])}
    return {"model_type": "minimax_m3_vl", "architectures": ["MiniMaxM3SparseForConditionalGeneration"],
            "text_config": text, "vision_config": vision, "projector_hidden_size": rng.choice([40, 80]),
            "tie_word_embeddings": tie == "wrapper"}


def unseen_qwen3_omni(rng):
    """Qwen3-Omni's thinker around a small Qwen3-MoE-like language model (M-RoPE sections as
    published, some layers dense, a head_dim given or hidden // heads), a vision tower with one or
    two deep-stack mergers and an audio encoder of its own sizes, the head tied by the wrapper's
    flag or not."""
    text = unseen_moe(rng, "qwen3_moe")
    text["model_type"] = "qwen3_omni_moe_text"
    text.pop("sliding_window", None)
    text.pop("use_sliding_window", None)
    if rng.random() < 0.5 and text["hidden_size"] // text["num_attention_heads"] % 2 == 0:
        text.pop("head_dim", None)  # hidden // heads, where RoPE can turn it
    text["mlp_only_layers"] = rng.choice([[], [0]])
    text["rope_scaling"] = {"rope_type": "default", "mrope_section": [2, 1, 1], "interleaved": True}
    text["tie_word_embeddings"] = rng.random() < 0.5
    out = text["hidden_size"]
    vision = {"model_type": "qwen3_omni_moe_vision_encoder", "depth": rng.randint(1, 3), "hidden_size": 32,
              "intermediate_size": rng.choice([48, 64]), "num_heads": 4, "num_position_embeddings": 16,
              "out_hidden_size": out, "patch_size": 16, "spatial_merge_size": rng.choice([1, 2]),
              "deepstack_visual_indexes": rng.choice([[0], [0, 1]])}
    audio = {"model_type": "qwen3_omni_moe_audio_encoder", "d_model": 32, "encoder_layers": rng.randint(1, 2),
             "encoder_attention_heads": 4, "encoder_ffn_dim": rng.choice([48, 64]),
             "num_mel_bins": rng.choice([16, 20]), "downsample_hidden_size": rng.choice([8, 12]),
             "output_dim": out}
    return {"model_type": "qwen3_omni_moe_thinker", "architectures": ["Qwen3OmniMoeThinkerForConditionalGeneration"],
            "text_config": text, "vision_config": vision, "audio_config": audio,
            "tie_word_embeddings": rng.random() < 0.5}


def unseen_idefics2(rng):
    """Idefics2 around a small Mistral: a vision tower of its own sizes, a perceiver of its own
    latents, depth and heads (its width the text model's, which the class sets), the head tied
    or not."""
    text = unseen_llama_like(rng, "mistral")
    vision = {"model_type": "idefics2_vision", "hidden_size": rng.choice([32, 64]),
              "intermediate_size": rng.choice([48, 96]), "num_hidden_layers": rng.randint(1, 3),
              "num_attention_heads": 4, "image_size": 56, "patch_size": 14}
    perceiver = {"model_type": "idefics2_perceiver", "resampler_n_latents": rng.choice([4, 8]),
                 "resampler_depth": rng.randint(1, 2), "resampler_n_heads": 4, "resampler_head_dim": rng.choice([8, 16]),
                 "num_key_value_heads": rng.choice([1, 2, 4])}
    if rng.random() < 0.5:
        perceiver["hidden_size"] = text["hidden_size"]
    return {"model_type": "idefics2", "architectures": ["Idefics2ForConditionalGeneration"], "text_config": text,
            "vision_config": vision, "perceiver_config": perceiver, "tie_word_embeddings": rng.random() < 0.5}


def unseen_video_llama_3(rng):
    """VideoLLaMA 3 around a small Qwen2: a vision tower of its own sizes and patch, the head tied
    or not."""
    vision = {"model_type": "video_llama_3_vision", "hidden_size": rng.choice([32, 64]),
              "intermediate_size": rng.choice([48, 96]), "num_hidden_layers": rng.randint(1, 3),
              "num_attention_heads": 4, "patch_size": rng.choice([14, 16])}
    return {"model_type": "video_llama_3", "architectures": ["VideoLlama3ForConditionalGeneration"],
            "text_config": unseen_llama_like(rng, "qwen2"), "vision_config": vision,
            "tie_word_embeddings": rng.random() < 0.5}


def unseen_pp_chart2table(rng):
    """PP-Chart2Table: GOT-OCR 2's class under its own model types, the head tied or not."""
    raw = unseen_got_ocr2(rng)
    raw["vision_config"]["model_type"] = "pp_chart2table_vision"
    return dict(raw, model_type="pp_chart2table", tie_word_embeddings=rng.random() < 0.5)


def unseen_hyperclovax_vision_v2(rng):
    """HyperCLOVA X Vision v2 around a small HyperCLOVA X: Qwen2.5-VL's tower of its own sizes,
    the head tied or not."""
    text = unseen_llama_like(rng, "llama")
    text.update(model_type="hyperclovax", logits_scaling=rng.choice([1.0, 0.5]))
    vision = {"model_type": "qwen2_5_vl_vision", "depth": rng.randint(1, 2), "hidden_size": 32,
              "intermediate_size": rng.choice([40, 48]), "num_heads": 4, "out_hidden_size": rng.choice([24, 48]),
              "patch_size": 14, "spatial_merge_size": rng.choice([1, 2]), "fullatt_block_indexes": [0]}
    return {"model_type": "hyperclovax_vision_v2", "architectures": ["HyperCLOVAXVisionV2ForConditionalGeneration"],
            "text_config": text, "vision_config": vision, "tie_word_embeddings": rng.random() < 0.5}


def unseen_deepseek_vl(rng):
    """DeepSeek-VL around a small Llama: SigLIP of its own sizes with or without its pooling
    head, the head tied or not."""
    vision = {"model_type": "siglip_vision_model", "hidden_size": 32, "intermediate_size": rng.choice([48, 64]),
              "num_hidden_layers": rng.randint(1, 2), "num_attention_heads": 4, "image_size": 56, "patch_size": 14}
    if rng.random() < 0.5:
        vision["vision_use_head"] = False
    return {"model_type": "deepseek_vl", "architectures": ["DeepseekVLForConditionalGeneration"],
            "text_config": unseen_llama_like(rng, "llama"), "vision_config": vision,
            "tie_word_embeddings": rng.random() < 0.5}


def unseen_minicpmv(rng, model_type, prefix):
    """MiniCPM-V (4.6, 4.7) or MiniCPM-OCR around a small Qwen3.5 (linear and full attention
    layers): a tower of its own sizes and window, one or two merger MLPs, the head tied or not."""
    layers = rng.randint(2, 4)
    text = {"model_type": "qwen3_5_text", "hidden_size": 64, "intermediate_size": rng.choice([48, 96]),
            "num_hidden_layers": layers, "num_attention_heads": 4, "num_key_value_heads": rng.choice([1, 2]),
            "head_dim": 16, "linear_conv_kernel_dim": rng.choice([2, 4]), "linear_key_head_dim": 8,
            "linear_value_head_dim": rng.choice([8, 16]), "linear_num_key_heads": 2, "linear_num_value_heads": 4,
            "vocab_size": 97,
            "layer_types": [rng.choice(["linear_attention", "full_attention"]) for _ in range(layers - 1)]
            + ["full_attention"]}  # one full-attention layer at least, which the class needs to run
    vision = {"model_type": f"{model_type}_vision", "hidden_size": 32, "intermediate_size": rng.choice([48, 64]),
              "num_hidden_layers": rng.randint(1, 3), "num_attention_heads": 4, "image_size": 56, "patch_size": 14,
              "window_kernel_size": rng.choice([[2, 2], [1, 2]])}
    return {"model_type": model_type, "architectures": [f"{prefix}ForConditionalGeneration"], "text_config": text,
            "vision_config": vision, "merger_times": rng.choice([1, 2]), "tie_word_embeddings": rng.random() < 0.5}


def unseen_aria(rng):
    """Aria around a small Aria MoE: Idefics3's SigLIP of its own sizes, a query table of its
    own (the largest of the patch-to-query map's counts), the head tied by the wrapper's flag,
    the language model's, or neither."""
    text = {"model_type": "aria_text", "hidden_size": 64, "intermediate_size": rng.choice([32, 48]),
            "num_hidden_layers": rng.randint(1, 3), "num_attention_heads": 4, "num_key_value_heads": rng.choice([1, 2, 4]),
            "vocab_size": 97, "moe_num_experts": rng.choice([4, 8]), "moe_topk": 2,
            "moe_num_shared_experts": rng.choice([1, 2]), "tie_word_embeddings": rng.random() < 0.3}
    vision = {"model_type": "idefics3_vision", "hidden_size": 32, "intermediate_size": rng.choice([48, 64]),
              "num_hidden_layers": rng.randint(1, 2), "num_attention_heads": 4, "image_size": 56, "patch_size": 14}
    queries = {"16": rng.choice([4, 8]), "64": rng.choice([8, 12])}
    return {"model_type": "aria", "architectures": ["AriaForConditionalGeneration"], "text_config": text,
            "vision_config": vision, "projector_patch_to_query_dict": queries,
            "tie_word_embeddings": rng.random() < 0.3}


def unseen_blip(rng, model_type, kind, prefix):
    """BLIP-2 or InstructBLIP(-Video) around a small OPT: a vision tower of its own sizes (its QKV
    biased or not), a Q-Former of its own depth, width and cross-attention frequency (BLIP-2's
    reading the prompt or not), its own number of queries."""
    text = {"model_type": "opt", "hidden_size": 32, "ffn_dim": rng.choice([48, 64]), "num_hidden_layers": rng.randint(1, 2),
            "num_attention_heads": 4, "vocab_size": 97, "max_position_embeddings": 64, "word_embed_proj_dim": 32,
            "tie_word_embeddings": rng.random() < 0.5}
    vision = {"model_type": f"{kind}_vision_model", "hidden_size": 32, "intermediate_size": rng.choice([48, 64]),
              "num_hidden_layers": rng.randint(1, 2), "num_attention_heads": 4, "image_size": 56, "patch_size": 14,
              "qkv_bias": rng.random() < 0.7}
    qformer = {"model_type": f"{kind}_qformer", "hidden_size": 16, "intermediate_size": rng.choice([24, 32]),
               "num_hidden_layers": rng.randint(1, 4), "num_attention_heads": 2,
               "cross_attention_frequency": rng.choice([1, 2, 3]), "vocab_size": 50, "max_position_embeddings": 32}
    if model_type == "blip-2":
        qformer["use_qformer_text_input"] = rng.random() < 0.5
    return {"model_type": model_type, "architectures": [f"{prefix}ForConditionalGeneration"], "text_config": text,
            "vision_config": vision, "qformer_config": qformer, "num_query_tokens": rng.choice([4, 8])}


def unseen_deepseek_vl_hybrid(rng):
    """DeepSeek-VL-Hybrid: DeepSeek-VL's unseen configs with SAM's high-resolution tower of its own
    sizes, windows and global layers beside them."""
    raw = unseen_deepseek_vl(rng)
    layers = rng.randint(1, 3)
    raw["high_res_vision_config"] = {
        "model_type": "sam_vision_model", "hidden_size": 16, "output_channels": rng.choice([8, 12]),
        "num_hidden_layers": layers, "num_attention_heads": 2, "image_size": 64, "patch_size": 16, "mlp_dim": 24,
        "window_size": rng.choice([0, 2]), "global_attn_indexes": sorted(rng.sample(range(layers), 1))}
    return dict(raw, model_type="deepseek_vl_hybrid", architectures=["DeepseekVLHybridForConditionalGeneration"])


def unseen_exaone4_5(rng):
    """EXAONE 4.5 around a small EXAONE 4 (named `exaone4_5_text` as its first configs do, or
    `exaone4`): Qwen2.5-VL's tower with its own K/V heads, the head tied or not."""
    text = unseen_llama_like(rng, "llama")
    text.pop("attention_bias", None)
    text.pop("mlp_bias", None)
    text["model_type"] = rng.choice(["exaone4", "exaone4_5_text"])
    # Exaone4Config's K/V heads default to 32, more than these configs' heads.
    text.setdefault("num_key_value_heads", text["num_attention_heads"])
    vision = {"model_type": "exaone4_5_vision", "depth": rng.randint(1, 2), "hidden_size": 32,
              "intermediate_size": rng.choice([40, 48]), "num_heads": 4, "num_key_value_heads": rng.choice([1, 2, 4]),
              "out_hidden_size": text["hidden_size"], "spatial_merge_size": rng.choice([1, 2]),
              "fullatt_block_indexes": [0]}
    return {"model_type": "exaone4_5", "architectures": ["Exaone4_5_ForConditionalGeneration"], "text_config": text,
            "vision_config": vision, "tie_word_embeddings": rng.random() < 0.5}


def unseen_qianfan_ocr(rng):
    """Qianfan-OCR around a small Qwen3: InternViT of its own sizes and options (norms, QK norms,
    biases, mask token, positions, mean pooling), the pixel shuffle's ratio, the head tied or
    not."""
    vision = {"model_type": "qianfan_ocr_vision", "hidden_size": 32, "intermediate_size": rng.choice([48, 64]),
              "num_hidden_layers": rng.randint(1, 2), "num_attention_heads": 4, "image_size": [56, 56],
              "patch_size": [14, 14], "norm_type": rng.choice(["layer_norm", "rms_norm"]),
              "use_qk_norm": rng.random() < 0.5, "attention_bias": rng.random() < 0.5,
              "use_mask_token": rng.random() < 0.5, "use_absolute_position_embeddings": rng.random() < 0.7,
              "use_mean_pooling": rng.random() < 0.5}
    return {"model_type": "qianfan_ocr", "architectures": ["QianfanOCRForConditionalGeneration"],
            "text_config": unseen_llama_like(rng, "qwen3"), "vision_config": vision,
            "downsample_ratio": rng.choice([0.5, 1.0]), "tie_word_embeddings": rng.random() < 0.5}


def unseen_glm46v(rng):
    """GLM-4.6V around GLM-4.1V's language model and tower (anatomy refuses GLM-4.5V's, whose
    experts this wrapper stores stacked)."""
    raw = unseen_glm4v(rng)
    raw.update(model_type="glm46v", architectures=["Glm46VForConditionalGeneration"])
    return raw


def unseen_glm4v(rng):
    """GLM-4.1V around a small GLM-4-like language model (half of each head rotated or all of it,
    M-RoPE sections), the head tied by the wrapper's flag or the language model's, and a vision
    tower of its own sizes (a biased QKV or not)."""
    heads, kv = heads_and_kv(rng)
    head_dim = rng.choice([8, 16])
    text = {"model_type": "glm4v_text", "hidden_size": heads * head_dim, "intermediate_size": rng.choice([40, 72]),
            "num_hidden_layers": rng.randint(1, 3), "num_attention_heads": heads, "num_key_value_heads": kv,
            "vocab_size": rng.choice([97, 128]),
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [1, 1, 0]}}
    if rng.random() < 0.6:
        text["partial_rotary_factor"] = 0.5
    if rng.random() < 0.4:
        text["tie_word_embeddings"] = rng.random() < 0.5
    vision = {"model_type": "glm4v_vision", "depth": rng.randint(1, 2), "hidden_size": rng.choice([32, 64]),
              "intermediate_size": rng.choice([48, 96]), "num_heads": 4, "image_size": rng.choice([28, 56]),
              "patch_size": 14, "out_hidden_size": text["hidden_size"], "spatial_merge_size": rng.choice([1, 2]),
              "attention_bias": rng.random() < 0.5}
    raw = {"model_type": "glm4v", "architectures": ["Glm4vForConditionalGeneration"], "text_config": text,
           "vision_config": vision}
    if rng.random() < 0.7:
        raw["tie_word_embeddings"] = rng.random() < 0.5
    return raw


def unseen_glm_ocr(rng):
    """GLM-OCR around a small language model of its own (GLM-4.1V's without q, k, v biases) and a
    tower of its own sizes (biased or not, its MLP its own width, heads by either name)."""
    raw = unseen_glm4v(rng)
    raw.update(model_type="glm_ocr", architectures=["GlmOcrForConditionalGeneration"])
    raw["text_config"]["model_type"] = "glm_ocr_text"
    v = raw["vision_config"]
    v.update(model_type="glm_ocr_vision", intermediate_size=rng.choice([40, 72]), in_channels=rng.choice([3, 1]))
    if rng.random() < 0.3:
        v["num_attention_heads"] = v.pop("num_heads")
    return raw


def unseen_lfm3_vl(rng):
    """LFM3-VL around a small LFM3 (convolutions and attention layers), a tower of its own sizes
    (its layer kinds listed or by the class's pattern), the projector biased or not."""
    layers = rng.randint(2, 4)
    text = {"model_type": "lfm3", "hidden_size": 64, "intermediate_size": rng.choice([48, 96]),
            "num_hidden_layers": layers, "num_attention_heads": 4, "num_key_value_heads": rng.choice([1, 2]),
            "head_dim": 16, "vocab_size": rng.choice([97, 300]), "pad_token_id": 0, "sliding_window": 4,
            "layer_types": ["conv"] + [rng.choice(["full_attention", "conv", "sliding_attention"])
                                       for _ in range(layers - 1)]}
    depth = rng.randint(1, 4)
    vision = {"model_type": "lfm3_vl_vision", "hidden_size": rng.choice([32, 48]),
              "intermediate_size": rng.choice([40, 72]), "num_hidden_layers": depth,
              "num_attention_heads": 4, "num_key_value_heads": rng.choice([2, 4]), "patch_size": rng.choice([8, 16]),
              "conv_kernel_size": rng.choice([3, 5]), "spatial_merge_size": rng.choice([1, 2])}
    if rng.random() < 0.5:
        vision["layer_types"] = [rng.choice(["conv", "full_attention"]) for _ in range(depth)]
    raw = {"model_type": "lfm3_vl", "architectures": ["Lfm3VlForConditionalGeneration"], "text_config": text,
           "vision_config": vision, "projector_hidden_size": rng.choice([24, 40]),
           "projector_bias": rng.random() < 0.5}
    if rng.random() < 0.5:
        raw["tie_word_embeddings"] = rng.random() < 0.5
    return raw


def unseen_inkling2_wrapped(rng, model_type, text):
    """Inkling 2 (or Inkling 2 Loop) around its language model's unseen configs (`text`), its
    vision tower of its own sizes: the MLP by width or by ratio, under either name of the patch
    size, the projector biased or not."""
    lm = text(rng)
    vision = {"model_type": "inkling2_vision", "hidden_size": rng.choice([16, 32]),
              "num_hidden_layers": rng.randint(1, 2), "num_attention_heads": 4,
              "projection_hidden_dim": rng.choice([24, 40]), "text_hidden_size": lm["hidden_size"],
              "posemb_grid_size": rng.choice([4, 8]), "spatial_merge_size": rng.choice([1, 2]),
              "projector_bias": rng.random() < 0.5}
    if rng.random() < 0.5:
        vision["intermediate_size"] = rng.choice([40, 72])
    else:
        vision["mlp_ratio"] = rng.choice([2.0, 4.0])
    vision["native_patch_size" if rng.random() < 0.3 else "patch_size"] = rng.choice([8, 14])
    return {"model_type": model_type, "architectures": [ARCHITECTURES[model_type]], "text_config": lm,
            "vision_config": vision}


def unseen_glm4v_moe(rng):
    """GLM-4.5V around a small GLM-4.5-like language model: routed and shared experts, a dense
    first layer or none, biases or not, its own head size or hidden / heads; GLM-4.1V's tower."""
    raw = unseen_glm4v(rng)
    raw.update(model_type="glm4v_moe", architectures=["Glm4vMoeForConditionalGeneration"])
    raw["vision_config"]["model_type"] = "glm4v_moe_vision"
    text = raw["text_config"]
    text.update(model_type="glm4v_moe_text", n_routed_experts=rng.choice([4, 8]), num_experts_per_tok=2,
                moe_intermediate_size=rng.choice([16, 24]), n_shared_experts=rng.choice([1, 2]),
                first_k_dense_replace=rng.choice([0, 1]), attention_bias=rng.random() < 0.6)
    if rng.random() < 0.4:
        text["head_dim"] = rng.choice([8, 16])
    return raw


def unseen_idefics3(rng, model_type):
    """Idefics3 or SmolVLM around a small Llama: a SigLIP-like encoder of its own sizes (the keys
    it leaves out take the vision config's defaults), a pixel shuffle of 1, 2 or 4, the head tied
    or not, by the wrapper or by the text config."""
    text = unseen_llama_like(rng, "llama")
    # The class builds heads of hidden_size / num_attention_heads.
    text["hidden_size"] = text["num_attention_heads"] * text.pop("head_dim", 16)
    vision = {"model_type": f"{model_type}_vision", "hidden_size": rng.choice([32, 64]),
              "intermediate_size": rng.choice([48, 96]), "num_hidden_layers": rng.randint(1, 3),
              "num_attention_heads": 4, "image_size": rng.choice([64, 128]), "patch_size": 16}
    if rng.random() < 0.3:
        del vision["patch_size"]  # the vision config's 32
    cls = {"smolvlm": "SmolVLMForConditionalGeneration", "idefics3": "Idefics3ForConditionalGeneration"}
    return {"model_type": model_type, "architectures": [cls[model_type]], "text_config": text,
            "vision_config": vision, "scale_factor": rng.choice([1, 2, 4]),
            "tie_word_embeddings": rng.random() < 0.5}


def unseen_git(rng):
    heads = rng.choice([2, 4, 6])
    raw = {"model_type": "git", "hidden_size": heads * rng.choice([8, 16]),
           "num_hidden_layers": rng.randint(1, 4), "num_attention_heads": heads,
           "intermediate_size": rng.choice([40, 96]), "vocab_size": rng.choice([97, 1000]),
           "max_position_embeddings": rng.choice([64, 512]), "pad_token_id": 0,
           "bos_token_id": 1, "eos_token_id": 2, "tie_word_embeddings": rng.random() < 0.3,
           "vision_config": {"hidden_size": rng.choice([16, 32]), "intermediate_size": 24,
                             "num_hidden_layers": rng.randint(1, 3), "num_attention_heads": 2,
                             "image_size": rng.choice([28, 56]), "patch_size": 14}}
    if rng.random() < 0.5:
        raw["num_image_with_embedding"] = rng.randint(1, 4)
    return raw


def unseen_got_ocr2(rng):
    text = unseen_llama_like(rng, "qwen2")
    layers, heads = rng.randint(1, 6), rng.choice([1, 2, 4])
    # SAM's window of 0 attends over the whole grid, as its global layers do.
    vision = {"hidden_size": heads * rng.choice([8, 16]), "num_hidden_layers": layers,
              "num_attention_heads": heads, "image_size": rng.choice([64, 96, 128]),
              "patch_size": rng.choice([8, 16]), "output_channels": rng.choice([8, 24]),
              "mlp_dim": rng.choice([20, 64]), "qkv_bias": rng.random() < 0.5,
              "use_abs_pos": rng.random() < 0.5, "use_rel_pos": rng.random() < 0.7,
              "window_size": rng.choice([0, 2, 3]), "num_channels": rng.choice([1, 3]),
              "global_attn_indexes": sorted(rng.sample(range(layers), rng.randint(0, layers)))}
    return {"model_type": "got_ocr2", "architectures": ["GotOcr2ForConditionalGeneration"],
            "text_config": text, "vision_config": vision}


def unseen_emu3(rng):
    text = unseen_llama_like(rng, "llama")
    text.update(model_type="emu3_text_model", pad_token_id=0, bos_token_id=1, eos_token_id=2)
    # GroupNorm's 32 groups need channels in multiples of 32.
    levels = rng.randint(1, 3)
    vq = {"codebook_size": rng.choice([16, 97]), "embed_dim": rng.choice([2, 4]),
          "latent_channels": rng.choice([2, 4]), "double_latent": rng.random() < 0.3,
          "in_channels": rng.choice([1, 3]), "out_channels": rng.choice([1, 3]),
          "temporal_downsample_factor": rng.choice([1, 2, 4, 3]), "base_channels": 32,
          "channel_multiplier": [rng.choice([1, 2]) for _ in range(levels)],
          "num_res_blocks": rng.randint(1, 2),
          "attn_resolutions": sorted(rng.sample(range(levels + 1), rng.randint(0, 2))),
          "hidden_size": rng.choice([16, 32]), "num_attention_heads": rng.choice([1, 2])}
    return {"model_type": "emu3", "architectures": ["Emu3ForConditionalGeneration"],
            "tie_word_embeddings": rng.random() < 0.3, "text_config": text, "vq_config": vq}


def unseen_blt(rng):
    def stack(hidden, extra):
        heads = rng.choice([h for h in (1, 2, 4) if hidden % h == 0])
        return dict({"hidden_size": hidden, "num_hidden_layers": rng.randint(1, 3),
                     "num_attention_heads": heads, "num_key_value_heads": rng.choice([1, heads])}, **extra)
    k = rng.choice([1, 2, 3])
    enc = rng.choice([16, 24, 32])
    glob = rng.choice([enc * k, 48])
    raw = {"model_type": "blt", "vocab_size": 260, "cross_attn_k": k,
           "encoder_hash_byte_group_size": rng.sample([1, 2, 3, 4, 5, 6], rng.randint(1, 4)),
           "encoder_hash_byte_group_vocab": rng.choice([97, 1009]),
           "encoder_hash_byte_group_nb_functions": rng.randint(1, 3),
           "patch_in_forward": rng.random() < 0.7,
           "encoder_config": stack(enc, {"cross_attn_k": k, "cross_attn_all_layers": rng.random() < 0.5,
                                         "intermediate_size": rng.choice([None, 40])}),
           "decoder_config": stack(enc, {"cross_attn_k": k, "hidden_size_global": glob,
                                         "cross_attn_all_layers": rng.random() < 0.5, "intermediate_size": 40}),
           "global_config": stack(glob, {"intermediate_size": 64}),
           "patcher_config": stack(rng.choice([16, 32]), {"intermediate_size": 24})}
    return raw


def unseen_hrm_text(rng):
    heads = rng.choice([2, 4])
    raw = {"model_type": "hrm_text", "hidden_size": heads * rng.choice([8, 16]),
           "intermediate_size": rng.choice([40, 96]), "num_hidden_layers": rng.randint(1, 4),
           "num_attention_heads": heads, "head_dim": rng.choice([8, 16]), "vocab_size": rng.choice([97, 1000]),
           "H_cycles": rng.randint(1, 3), "L_cycles": rng.randint(1, 4), "tie_word_embeddings": rng.random() < 0.3,
           "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2}
    if rng.random() < 0.5:
        raw["embedding_scale"] = rng.choice([1.0, 8.0])
    return raw


def unseen_dots3(rng):
    """dots.3 Note: its layer kinds by the class's pattern or a list, the sliding layers' sizes
    from the `swa_*` keys or a `per_layer_config`; the language model alone or in its wrapper,
    read from the top level as the class reads published configs."""
    heads, layers = rng.choice([2, 4]), rng.randint(3, 7)
    nope, rope = rng.choice([8, 16]), 8
    raw = {
        "model_type": "dots3_note_text",
        "hidden_size": rng.choice([48, 64]),
        "intermediate_size": rng.choice([40, 72]),
        "moe_intermediate_size": rng.choice([16, 24]),
        "shared_experts_intermediate_size": rng.choice([16, 24]),
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "num_key_value_heads": heads,
        "vocab_size": rng.choice([97, 1000]),
        "n_routed_experts": rng.choice([8, 16]),
        "n_shared_experts": rng.choice([1, 2]),
        "num_experts_per_tok": rng.choice([2, 3]),
        "first_k_dense_replace": rng.choice([0, 1]),
        "kv_lora_rank": rng.choice([16, 32]),
        "q_lora_rank": rng.choice([16, 24]),
        "qk_nope_head_dim": nope,
        "qk_rope_head_dim": rope,
        "head_dim": rng.choice([16, 32]),
        "v_head_dim": rng.choice([8, 12]),
        "index_n_heads": 2, "index_head_dim": 16, "index_topk": rng.choice([2, 4]),
        "sliding_window": rng.choice([2, 3, 5]),
        "tie_word_embeddings": rng.random() < 0.3,
        "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2,
    }
    swa = {"num_attention_heads": rng.choice([2, 4]), "q_lora_rank": rng.choice([12, 20]),
           "kv_lora_rank": rng.choice([8, 12]), "qk_nope_head_dim": rng.choice([8, 12]),
           "v_head_dim": rng.choice([8, 16])}
    swa["num_key_value_heads"] = swa["num_attention_heads"]
    swa["head_dim"] = swa["qk_nope_head_dim"] + rng.choice([4, 8])
    if rng.random() < 0.5:
        raw.update({f"swa_{k}": v for k, v in swa.items()})
    else:
        kinds = [rng.choice(["indexed_attention", "sliding_attention"]) for _ in range(layers)]
        raw["layer_types"] = kinds
        raw["per_layer_config"] = {str(i): dict(swa, qk_rope_head_dim=swa["head_dim"] - swa["qk_nope_head_dim"])
                                   for i, k in enumerate(kinds) if k == "sliding_attention"}
    if rng.random() < 0.3:
        raw["use_dsa"] = False
    if rng.random() < 0.5:
        raw["rope_theta"] = rng.choice([10_000.0, 1_000_000.0])
        raw["swa_rope_theta"] = rng.choice([500.0, 10_000.0])
    if rng.random() < 0.5:
        hidden = raw["hidden_size"]
        raw.update(model_type="dots3_note", vision_config={"adapter_out_dim": hidden},
                   audio_config={"adapter_out_dim": hidden})
    return raw


def unseen_minimax_m3(rng):
    """MiniMax-M3's language model: sparse (indexed) and full layers, dense and MoE layers, by
    their lists or by the released configs' `sparse_attention_config` and `moe_layer_freq`."""
    layers, kv = rng.randint(2, 6), rng.choice([1, 2])
    raw = {
        "model_type": "minimax_m3_vl_text",
        "hidden_size": rng.choice([48, 64]),
        "intermediate_size": rng.choice([16, 24]),
        "dense_intermediate_size": rng.choice([40, 72]),
        "shared_intermediate_size": rng.choice([16, 32]),
        "num_hidden_layers": layers,
        "num_attention_heads": 4,
        "num_key_value_heads": kv,
        "head_dim": rng.choice([8, 16]),
        "vocab_size": rng.choice([97, 1000]),
        "num_local_experts": rng.choice([8, 16]),
        "num_experts_per_tok": rng.choice([2, 3]),
        "routed_scaling_factor": rng.choice([1.0, 2.0]),
        "swiglu_limit": rng.choice([7.0, 1.0]),
        "tie_word_embeddings": rng.random() < 0.3,
        "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2,
    }
    kinds = [rng.random() < 0.5 for _ in range(layers)]
    moe = [rng.random() < 0.7 for _ in range(layers)]
    index = {"n_heads": kv, "head_dim": 16, "block_size": rng.choice([2, 4]), "topk_blocks": rng.choice([2, 3]),
             "local_blocks": rng.choice([0, 1])}
    if rng.random() < 0.5:
        raw["layer_types"] = ["minimax_m3_sparse" if k else "full_attention" for k in kinds]
        raw["mlp_layer_types"] = ["sparse" if m else "dense" for m in moe]
        raw.update({f"index_{k}": v for k, v in index.items()})
    else:
        raw["sparse_attention_config"] = {
            "sparse_attention_freq": [int(k) for k in kinds], "sparse_num_index_heads": index["n_heads"],
            "sparse_index_dim": index["head_dim"], "sparse_block_size": index["block_size"],
            "sparse_topk_blocks": index["topk_blocks"], "sparse_local_block": index["local_blocks"]}
        raw["moe_layer_freq"] = [int(m) for m in moe]
    return raw


def unseen_zaya(rng):
    """ZAYA: full and sliding layers, convolutions of 1 to 3 taps, biases or not, tied or not."""
    layers, kv = rng.randint(2, 5), rng.choice([1, 2])
    raw = {
        "model_type": "zaya",
        "hidden_size": rng.choice([32, 48]),
        "num_hidden_layers": layers,
        "num_attention_heads": 4,
        "num_key_value_heads": kv,
        "head_dim": rng.choice([8, 16]),
        "vocab_size": rng.choice([97, 1000]),
        "moe_intermediate_size": rng.choice([16, 24]),
        "num_experts": rng.choice([4, 8]),
        "router_hidden_size": rng.choice([8, 16]),
        "cca_time0": rng.choice([1, 2, 3]),
        "cca_time1": rng.choice([1, 2, 3]),
        "attention_bias": rng.random() < 0.3,
        "lm_head_bias": rng.random() < 0.3,
        "tie_word_embeddings": rng.random() < 0.5,
        "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2,
    }
    if rng.random() < 0.6:
        raw["sliding_window"] = rng.choice([2, 3])
        raw["layer_types"] = [rng.choice(["hybrid", "hybrid_sliding"]) for _ in range(layers)]
    return raw


def unseen_ergo(rng):
    """Ergo: its window under either name, every n-th layer full (n 2 to 4) or layer_types
    given, with or without a logit scale on the full layers, one or two dense layers or
    mlp_layer_types given, the nested or the flat RoPE settings."""
    layers = rng.randint(2, 5)
    raw = {
        "model_type": "ergo",
        "hidden_size": rng.choice([32, 48]),
        "num_hidden_layers": layers,
        "num_attention_heads": 4,
        "num_key_value_heads": rng.choice([1, 2, 4]),
        "first_dense_intermediate_size": rng.choice([40, 64]),
        "moe_intermediate_size": rng.choice([16, 24]),
        "shared_intermediate_size": rng.choice([16, 32]),
        "num_experts": rng.choice([4, 8]),
        "num_experts_per_tok": rng.choice([1, 2]),
        "moe_routed_scaling_factor": rng.choice([1.0, 2.5]),
        "vocab_size": rng.choice([97, 1000]),
        "max_position_embeddings": 4096,
    }
    raw[rng.choice(["sliding_window", "local_attention_window"])] = rng.choice([4, 16])
    if rng.random() < 0.5:
        raw["layer_types"] = [rng.choice(["sliding_attention", "full_attention"]) for _ in range(layers)]
    else:
        raw["global_attention_every_n_layers"] = rng.randint(2, 4)
    if rng.random() < 0.5:
        raw["global_attention_scale"] = rng.choice([1.25, 2.0])
    if rng.random() < 0.5:
        raw["mlp_layer_types"] = [rng.choice(["dense", "sparse"]) for _ in range(layers)]
    else:
        raw["num_dense_blocks"] = rng.randint(0, 2)
    theta = rng.choice([1e4, 1e6])
    if rng.random() < 0.5:
        raw["rope_parameters"] = {"sliding_attention": {"rope_type": "default", "rope_theta": theta},
                                  "full_attention": None}
    else:
        raw["rope_theta"] = theta
    return raw


def unseen_kolibri1_1(rng):
    """Kolibri 1.1: indexed and sliding layers in any order, pool layers and K/V sources drawn
    as the class allows them, an indexer small enough that a short prompt passes its budgets,
    dense layers listed or the class's first two."""
    layers = rng.randint(3, 6)
    types = [rng.choice(["sliding_attention", "indexed_attention"]) for _ in range(layers)]
    if "indexed_attention" not in types:
        types[-1] = "indexed_attention"
    indexed = [i for i, t in enumerate(types) if t == "indexed_attention"]
    pools = [indexed[0]] + [i for i in indexed[1:] if rng.random() < 0.4]
    sources, owners = list(range(layers)), [indexed[0]]
    for i in indexed[1:]:
        if rng.random() < 0.5:
            sources[i] = rng.choice(owners)  # an earlier indexed layer's keys and values
        else:
            owners.append(i)
    heads, kv = rng.choice([(4, 2), (4, 1), (8, 2)])
    c = rng.choice([2, 4])
    raw = {
        "model_type": "kolibri1_1",
        "hidden_size": rng.choice([32, 48]),
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "num_key_value_heads": kv,
        "head_dim": rng.choice([16, 32]),
        "vocab_size": rng.choice([97, 1000]),
        "sliding_window": rng.choice([3, 513]),
        "num_experts": rng.choice([4, 8]),
        "num_experts_per_tok": rng.choice([1, 2]),
        "moe_intermediate_size": 16,
        "shared_expert_intermediate_size": rng.choice([16, 24]),
        "layer_types": types,
        "index_layers": pools,
        "kv_source_layers": sources,
        "index_topk": rng.choice([1, 2, 3]),
        "index_pool_size": c * rng.choice([1, 2]),
        "index_compression": c,
        "index_num_heads": rng.randint(1, heads // kv),
        "index_num_local_tokens": rng.choice([0, 1, 2]),
        "index_num_sink_tokens": rng.choice([0, 1]),
        "max_position_embeddings": 4096,
    }
    if rng.random() < 0.5:
        raw["mlp_only_layers"] = sorted(rng.sample(range(layers), rng.randint(0, 2)))
        raw["mlp_only_intermediate_size"] = rng.choice([24, 40])
    return raw


def unseen_dory(rng):
    """Dory: its sections of 1 to 3 layers, 1 to 3 passes, either cache mode, the released block
    form of layer_types or the class's own, biases or not, tied or not."""
    sections = [rng.randint(1, 3) for _ in range(3)]
    layers = sum(sections)
    types = [rng.choice(["sliding_attention", "full_attention"]) for _ in range(layers)]
    raw = {
        "model_type": "dory",
        "hidden_size": rng.choice([32, 48]),
        "intermediate_size": rng.choice([40, 64]),
        "num_attention_heads": 4,
        "num_key_value_heads": rng.choice([1, 2, 4]),
        "head_dim": rng.choice([8, 16]),
        "vocab_size": rng.choice([97, 1000]),
        "n_recurrent_loops": rng.randint(1, 3),
        "recurrent_kv_cache_mode": rng.choice(["per_loop", "last_loop"]),
        "sliding_window": rng.choice([2, 3]),
        "attention_bias": rng.random() < 0.3,
        "mlp_bias": rng.random() < 0.3,
        "tie_word_embeddings": rng.random() < 0.5,
        "ngpt_alpha_init": rng.choice([0.05, 0.1]),
        "initializer_range": rng.choice([0.0177, 0.02]),
        "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2,
    }
    if rng.random() < 0.5:
        raw["rope_parameters"] = {t: {"rope_type": "default", "rope_theta": rng.choice([1e4, 1e6])} for t in sorted(set(types))}
    if rng.random() < 0.5:  # as released: an "mlp" block after each attention, counts doubled
        raw["layer_types"] = [t for lt in types for t in (lt, "mlp")]
        raw["num_hidden_layers"], raw["n_input_layers"], raw["n_output_layers"] = 2 * layers, 2 * sections[0], 2 * sections[2]
    else:
        raw["layer_types"] = types
        raw["num_hidden_layers"], raw["n_input_layers"], raw["n_output_layers"] = layers, sections[0], sections[2]
        raw["n_recurrent_layers"] = sections[1]
    return raw


def unseen_inkling(rng):
    """Inkling: layer kinds as a list, as local_layer_ids or by the class's every-sixth rule;
    sliding heads of their own widths; dense layers first or listed; a checkpoint's
    dense_intermediate_size; 1 to 3 shared experts; convolutions of 2 to 4 taps under the
    checkpoints' key; log scaling on or off."""
    layers = rng.randint(2, 7)
    cfg = {
        "model_type": "inkling_text",
        "vocab_size": rng.choice([97, 1000]),
        "hidden_size": rng.choice([32, 48]),
        "num_hidden_layers": layers,
        "num_attention_heads": rng.choice([4, 6]),
        "num_key_value_heads": rng.choice([1, 2]),
        "head_dim": rng.choice([8, 12]),
        "swa_num_attention_heads": rng.choice([2, 4]),
        "swa_num_key_value_heads": rng.choice([1, 2]),
        "swa_head_dim": rng.choice([8, 16]),
        "sliding_window_size": rng.choice([4, 64]),
        "d_rel": rng.choice([2, 4]),
        "rel_extent": rng.choice([8, 100]),
        "sconv_kernel_size": rng.choice([2, 3, 4]),
        "intermediate_size": rng.choice([40, 64]),
        "moe_intermediate_size": rng.choice([12, 16]),
        "n_routed_experts": rng.choice([4, 8]),
        "num_experts_per_tok": rng.choice([1, 2]),
        "n_shared_experts": rng.randint(1, 3),
        "route_scale": rng.choice([1.0, 8.0]),
        "logits_mup_width_multiplier": rng.choice([1.0, 24.0]),
        "max_position_embeddings": 4096,
    }
    kind = rng.randrange(3)
    if kind == 0:
        cfg["layer_types"] = [rng.choice(["hybrid", "hybrid_sliding"]) for _ in range(layers)]
    elif kind == 1:
        cfg["local_layer_ids"] = sorted(rng.sample(range(layers), rng.randint(0, layers)))
    if rng.random() < 0.5:
        cfg["mlp_layer_types"] = [rng.choice(["dense", "sparse"]) for _ in range(layers)]
    else:
        cfg["dense_mlp_idx"] = rng.randint(0, 2)
    if rng.random() < 0.3:
        cfg["dense_intermediate_size"] = rng.choice([24, 56])
    if rng.random() < 0.5:
        cfg["log_scaling_n_floor"] = rng.choice([4, 256])
        cfg["log_scaling_alpha"] = rng.choice([0.1, 0.5])
    return cfg


def unseen_inkling2(rng):
    """Inkling 2: blocks of 1 to 3 layers, layer kinds listed or by the class's every-sixth rule,
    sliding heads of their own, a head padded or not, other clip thresholds and softcaps."""
    layers = rng.randint(2, 7)
    vocab = rng.choice([97, 1000])
    cfg = {
        "model_type": "inkling2_text",
        "vocab_size": vocab,
        "unpadded_vocab_size": vocab - rng.choice([0, 3]),
        "hidden_size": rng.choice([32, 48]),
        "num_hidden_layers": layers,
        "num_attention_heads": rng.choice([4, 6]),
        "num_key_value_heads": rng.choice([1, 2]),
        "head_dim": rng.choice([8, 12]),
        "swa_num_attention_heads": rng.choice([2, 4]),
        "swa_num_key_value_heads": rng.choice([1, 2]),
        "swa_head_dim": rng.choice([8, 16]),
        "sliding_window_size": rng.choice([4, 64]),
        "d_rel": rng.choice([2, 4]),
        "rel_extent": rng.choice([8, 100]),
        "sconv_kernel_size": rng.choice([2, 3, 4]),
        "intermediate_size": rng.choice([12, 16]),
        "n_routed_experts": rng.choice([4, 8]),
        "num_experts_per_tok": rng.choice([1, 2]),
        "routed_scaling_factor": rng.choice([1.0, 8.0]),
        "n_layers_per_attn_res_block": rng.randint(1, 3),
        "qk_l2_clip_threshold": rng.choice([2.0, 22.6]),
        "rel_l2_clip_threshold": rng.choice([1.0, 8.0]),
        "mlp_gate_softcap": rng.choice([2.0, 4.0]),
        "mlp_up_softcap": rng.choice([5.0, 25.0]),
        "final_logit_softcapping": rng.choice([10.0, 30.0]),
        "log_scaling_n_floor": rng.choice([4, 256]),
        "max_position_embeddings": 4096,
        "eos_token_id": 2,
    }
    if rng.random() < 0.6:
        cfg["layer_types"] = [rng.choice(["hybrid", "hybrid_sliding"]) for _ in range(layers)]
    return cfg


def unseen_inkling2_loop(rng):
    """Inkling 2 Loop: Inkling 2's variations, a looped section of whole blocks run 1 to 4 times,
    gates of other ranks, the loop given as the first code's loop_config."""
    cfg = unseen_inkling2(rng)
    block = cfg["n_layers_per_attn_res_block"]
    layers = cfg["num_hidden_layers"] = max(cfg["num_hidden_layers"], 2 * block)
    if "layer_types" in cfg:
        cfg["layer_types"] = (cfg["layer_types"] * layers)[:layers]
    cfg["model_type"] = "inkling2_loop_text"
    start = block * rng.randint(1, max(1, layers // block - 1))
    end = block * rng.randint(start // block + 1, layers // block)
    loop = {"core_start": start, "core_end": end, "num_passes": rng.randint(1, 4), "gate_rank": rng.choice([3, 8])}
    if rng.random() < 0.5:
        cfg["loop_config"] = loop
    else:
        cfg.update(loop_layer_index_start=start, loop_layer_index_end=end, loop_num_passes=loop["num_passes"],
                   loop_gate_rank=loop["gate_rank"])
    return cfg


def unseen_cpmant(rng):
    """CPM-Ant: no prompt or one of 1 to 4 tokens, 3 to 6 prompt and segment types, 8 to 32
    position buckets, heads whose width is not the stream's over their count."""
    buckets = rng.choice([8, 16, 32])
    return {
        "model_type": "cpmant",
        "vocab_size": rng.choice([97, 1000]),
        "hidden_size": rng.choice([32, 48]),
        "num_attention_heads": rng.choice([2, 4]),
        "dim_head": rng.choice([8, 12]),
        "dim_ff": rng.choice([40, 64]),
        "num_hidden_layers": rng.randint(1, 3),
        "position_bias_num_buckets": buckets,
        "position_bias_max_distance": max(buckets // 4 + 1, rng.choice([10, 16, 100])),
        "prompt_types": rng.randint(3, 6),
        "prompt_length": rng.choice([0, 1, 4]),
        "segment_types": rng.randint(3, 6),
        "eps": rng.choice([1e-6, 1e-5]),
        "tie_word_embeddings": rng.random() < 0.5,
    }


def unseen_gemma3n(rng):
    layers = rng.randint(3, 12)
    raw = {
        "model_type": "gemma3n_text",
        "hidden_size": rng.choice([32, 64]),
        "num_hidden_layers": layers,
        "num_attention_heads": rng.choice([2, 4]),
        "num_key_value_heads": rng.choice([1, 2]),
        "head_dim": rng.choice([8, 16]),
        "vocab_size": rng.choice([97, 1000]),
        "vocab_size_per_layer_input": rng.choice([50, 97]),
        "hidden_size_per_layer_input": rng.choice([4, 8]),
        "altup_num_inputs": rng.choice([2, 3, 4]),
        "laurel_rank": rng.choice([4, 8]),
        "num_kv_shared_layers": rng.choice([0, 1]),
        "sliding_window": rng.choice([4, 16]),
        "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2,
    }
    if rng.random() < 0.5:
        raw["intermediate_size"] = [rng.choice([48, 64]) for _ in range(layers)]
    else:
        raw["intermediate_size"] = rng.choice([48, 96])
    if rng.random() < 0.5:
        raw["activation_sparsity_pattern"] = [rng.choice([0.0, 0.5, 0.95]) for _ in range(layers)]
    raw["layer_types"] = ["full_attention" if (i + 1) % 3 == 0 else "sliding_attention" for i in range(layers)]
    raw["tie_word_embeddings"] = rng.random() < 0.7
    # The scale on the corrected stream is built either way.
    raw["altup_correct_scale"] = rng.random() < 0.5
    return raw


def unseen_gpt_oss(rng):
    return {
        "model_type": "gpt_oss",
        "hidden_size": 64,
        "intermediate_size": rng.choice([32, 48]),
        "num_hidden_layers": rng.randint(2, 4),
        "num_attention_heads": 4,
        "num_key_value_heads": rng.choice([1, 2]),
        "head_dim": 16,
        "num_local_experts": rng.choice([4, 8]),
        "num_experts_per_tok": 2,
        "sliding_window": 8,
        "vocab_size": 97,
    }


def unseen_llama4(rng):
    return {
        "model_type": "llama4_text",
        "hidden_size": 64,
        "intermediate_size": 32,
        "intermediate_size_mlp": 48,
        "num_hidden_layers": 4,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "num_local_experts": rng.choice([4, 8]),
        "num_experts_per_tok": rng.choice([1, 2]),
        "interleave_moe_layer_step": rng.choice([1, 2]),
        "attention_chunk_size": 16,
        "use_qk_norm": rng.random() < 0.5,
        "vocab_size": 97,
        "pad_token_id": 0,
    }


def unseen_longcat(rng):
    heads = rng.choice([2, 4])
    rope = rng.choice([4, 8])
    return {
        "model_type": "longcat_flash",
        "hidden_size": rng.choice([32, 48]),
        "ffn_hidden_size": rng.choice([40, 72]),
        "expert_ffn_hidden_size": rng.choice([16, 24]),
        "num_layers": rng.randint(1, 3),
        "num_attention_heads": heads,
        "vocab_size": rng.choice([97, 1000]),
        "n_routed_experts": rng.choice([4, 8]),
        "zero_expert_num": rng.choice([0, 2, 4]),
        "moe_topk": rng.choice([1, 2, 3]),
        "q_lora_rank": rng.choice([16, 24]),
        "kv_lora_rank": rng.choice([8, 16]),
        "qk_nope_head_dim": rng.choice([8, 16]),
        "qk_rope_head_dim": rope,
        "head_dim": rope,
        "v_head_dim": rng.choice([6, 8]),
        "tie_word_embeddings": rng.random() < 0.3,
    }


def unseen_gemma4(rng):
    layers = rng.randint(2, 7)
    types = [rng.choice(["sliding_attention", "full_attention"]) for _ in range(layers)]
    raw = {
        "model_type": "gemma4_text",
        "hidden_size": rng.choice([32, 48]),
        "intermediate_size": rng.choice([40, 72]),
        "num_hidden_layers": layers,
        "num_attention_heads": 4,
        "num_key_value_heads": rng.choice([1, 2, 4]),
        "head_dim": rng.choice([8, 16]),
        "global_head_dim": rng.choice([16, 32]),
        "vocab_size": rng.choice([97, 1000]),
        "sliding_window": rng.choice([4, 16]),
        "layer_types": types,
        "hidden_size_per_layer_input": rng.choice([0, 8]),
        "vocab_size_per_layer_input": 97,
        "attention_k_eq_v": rng.random() < 0.5,
        "tie_word_embeddings": rng.random() < 0.7,
    }
    if raw["attention_k_eq_v"] and rng.random() < 0.5:
        raw["num_global_key_value_heads"] = 1
    # Shared layers need a layer of each of their kinds before them.
    types[-1] = "full_attention"
    shared = rng.choice([0, 1, 2])
    if shared and all(t in types[: layers - shared] for t in types[layers - shared :]):
        raw["num_kv_shared_layers"] = shared
    if rng.random() < 0.75:
        raw.update(enable_moe_block=True, num_experts=rng.choice([4, 8]), top_k_experts=2,
                   moe_intermediate_size=rng.choice([8, 12]))
    elif raw.get("num_kv_shared_layers"):
        raw["use_double_wide_mlp"] = True
    return raw


def unseen_gemma4_assistant(rng):
    """A Gemma 4 assistant: every layer reads its target's keys and values; the clustered head
    or the plain one; its language model Gemma 4's or Gemma 4 unified's."""
    unified = rng.random() < 0.4
    layers = rng.randint(1, 5)
    types = [rng.choice(["sliding_attention", "full_attention"]) for _ in range(layers)]
    types[-1] = "full_attention"
    vocab = rng.choice([96, 1024])
    text = {
        "model_type": "gemma4_unified_text" if unified else "gemma4_text",
        "hidden_size": rng.choice([32, 48]),
        "intermediate_size": rng.choice([40, 72]),
        "num_hidden_layers": layers,
        "num_attention_heads": 4,
        "num_key_value_heads": rng.choice([1, 2]),
        "head_dim": rng.choice([8, 16]),
        "global_head_dim": rng.choice([16, 32]),
        "vocab_size": vocab,
        "sliding_window": rng.choice([4, 16]),
        "layer_types": types,
        "tie_word_embeddings": True,
    }
    if not unified:
        text.update(hidden_size_per_layer_input=0, vocab_size_per_layer_input=0)
    if rng.random() < 0.5:
        text["num_kv_shared_layers"] = layers
    kind = "gemma4_unified_assistant" if unified else "gemma4_assistant"
    raw = {"model_type": kind, "architectures": [ASSISTANT_CLASSES[kind]], "text_config": text,
           "backbone_hidden_size": rng.choice([24, 64]),
           "use_ordered_embeddings": rng.random() < 0.6, "num_centroids": rng.choice([4, 8]),
           "centroid_intermediate_top_k": rng.choice([1, 2, 3])}
    if rng.random() < 0.3:
        raw["tie_word_embeddings"] = False
    return raw


def unseen_qwen4_exp(rng):
    """Qwen4-Exp: Gated DeltaNet and QSA-indexed attention layers under gated residual streams,
    without n-gram embeddings; at times inside its multimodal wrapper with a small vision tower."""
    layers = rng.randint(2, 6)
    ratio = rng.choice([2, 3, 4])
    text = {
        "model_type": "qwen4_exp_text",
        "hidden_size": rng.choice([32, 48]),
        "num_hidden_layers": layers,
        "num_attention_heads": 4,
        "num_key_value_heads": rng.choice([1, 2]),
        "head_dim": rng.choice([8, 16]),
        "vocab_size": rng.choice([97, 1000]),
        "linear_key_head_dim": 8,
        "linear_value_head_dim": rng.choice([8, 16]),
        "linear_num_key_heads": 2,
        "linear_num_value_heads": rng.choice([2, 4]),
        "linear_conv_kernel_dim": rng.choice([2, 4]),
        "moe_intermediate_size": rng.choice([8, 16]),
        "shared_expert_intermediate_size": rng.choice([8, 24]),
        "num_experts": rng.choice([4, 8]),
        "num_experts_per_tok": 2,
        "hc_count": rng.choice([2, 3, 4]),
        "hc_lowrank": rng.choice([4, 6]),
        "indexer_n_heads": rng.choice([1, 2, 4]),
        "indexer_kv_heads": 1,
        "indexer_head_dim": 16,
        "indexer_compress_ratio": ratio,
        "indexer_budget": ratio * rng.choice([1, 2, 3]),
        "tie_word_embeddings": rng.random() < 0.3,
    }
    if rng.random() < 0.5:
        types = [rng.choice(["linear_attention", "indexed_attention"]) for _ in range(layers)]
        types[rng.randrange(layers)] = "indexed_attention"
        text["layer_types"] = types
    else:
        text["full_attention_interval"] = rng.choice([2, 3][: layers - 1])  # an attention layer at least
    if rng.random() < 0.5:
        text["rope_parameters"] = {"rope_type": "default", "rope_theta": 10000.0,
                                   "partial_rotary_factor": rng.choice([0.5, 1.0])}
    if rng.random() < 0.3:
        text["output_gate_type"] = "sigmoid"
    # Hashed n-gram embeddings in some of the linear layers, tables of their own sizes.
    types = text.get("layer_types") or [
        "linear_attention" if (i + 1) % text["full_attention_interval"] else "indexed_attention"
        for i in range(layers)]
    linear = [i + 1 for i, t in enumerate(types) if t == "linear_attention"]
    if linear and rng.random() < 0.7:
        ngram, per = rng.choice([2, 3, 4]), rng.choice([1, 2, 3])
        text.update(ple_layer_ids=rng.sample(linear, rng.randint(1, len(linear))), ngram_size=ngram,
                    heads_per_ngram=per, ple_embed_dim=(ngram - 1) * per * rng.choice([2, 4]),
                    ngram_vocab_size_base=rng.randint(30, 3000),
                    make_ngram_vocab_size_divisible_by=rng.choice([1, 8, 128]),
                    split_ngram_parts=rng.choice([1, 3, 7, 512]), ple_conv_kernel_size=rng.choice([2, 3, 4]),
                    seed=rng.randint(0, 10**6), eos_token_id=rng.choice([2, [2, 5]]))
    if rng.random() < 0.4:
        return {"model_type": "qwen4_exp", "architectures": ["Qwen4ExpForConditionalGeneration"],
                "text_config": text,
                "vision_config": {"depth": 2, "hidden_size": 64, "intermediate_size": 96, "num_heads": 4,
                                  "out_hidden_size": text["hidden_size"], "num_position_embeddings": 64}}
    return text


ASSISTANT_CLASSES = {"gemma4_assistant": "Gemma4AssistantForCausalLM",
                     "gemma4_unified_assistant": "Gemma4UnifiedAssistantForCausalLM"}


UNSEEN = {
    "llama": lambda rng: unseen_llama_like(rng, "llama"),
    "mistral": lambda rng: unseen_llama_like(rng, "mistral"),
    "qwen2": lambda rng: unseen_llama_like(rng, "qwen2"),
    "qwen3": lambda rng: unseen_llama_like(rng, "qwen3"),
    "mixtral": lambda rng: unseen_moe(rng, "mixtral"),
    "qwen3_moe": lambda rng: unseen_moe(rng, "qwen3_moe"),
    "smollm3": lambda rng: unseen_smollm3(rng),
    "phi3": lambda rng: unseen_simple(rng, "phi3"),
    "olmo2": lambda rng: unseen_simple(rng, "olmo2"),
    "gpt2": unseen_gpt2,
    "gemma2": lambda rng: unseen_simple(rng, "gemma2"),
    "gemma3_text": lambda rng: unseen_simple(rng, "gemma3_text"),
    "deepseek_v2": lambda rng: unseen_deepseek(rng, "deepseek_v2"),
    "deepseek_v3": lambda rng: unseen_deepseek(rng, "deepseek_v3"),
    "kimi_k2": lambda rng: unseen_deepseek(rng, "kimi_k2"),
    "glm4_moe": lambda rng: unseen_deepseek(rng, "glm4_moe"),
    "gpt_oss": unseen_gpt_oss,
    "llama4_text": unseen_llama4,
    "longcat_flash": unseen_longcat,
    "gemma4_text": unseen_gemma4,
    "hy_v4": unseen_hy_v4,
    "deepseek_v4": unseen_deepseek_v4,
    "gemma3n_text": unseen_gemma3n,
    "axk2": unseen_axk2,
    "beam": unseen_beam,
    "mllama": unseen_mllama,
    "git": unseen_git,
    "got_ocr2": unseen_got_ocr2,
    "emu3": unseen_emu3,
    "hrm_text": unseen_hrm_text,
    "dots3_note": unseen_dots3,
    "minimax_m3": unseen_minimax_m3,
    "zaya": unseen_zaya,
    "dory": unseen_dory,
    "cpmant": unseen_cpmant,
    "inkling_text": unseen_inkling,
    "inkling2_text": unseen_inkling2,
    "inkling2_loop_text": unseen_inkling2_loop,
    "gemma4_assistant": unseen_gemma4_assistant,
    "qwen4_exp": unseen_qwen4_exp,
    # Last: a family added here draws after the others, whose configs stay as they were.
    "blt": unseen_blt,
    "ergo": unseen_ergo,
    "kolibri1_1": unseen_kolibri1_1,
    "llava": unseen_llava,
    "mistral3": unseen_mistral3,
    "llava_next": unseen_llava_next,
    "smolvlm": lambda rng: unseen_idefics3(rng, "smolvlm"),
    "idefics3": lambda rng: unseen_idefics3(rng, "idefics3"),
    "llava_onevision": unseen_llava_onevision,
    "cohere2_vision": unseen_cohere2_vision,
    "internvl": unseen_internvl,
    "lfm2_vl": unseen_lfm2_vl,
    "qwen2_vl": lambda rng: unseen_qwen2_vl(rng, "qwen2_vl"),
    "qwen2_5_vl": lambda rng: unseen_qwen2_vl(rng, "qwen2_5_vl"),
    "qwen3_vl": unseen_qwen3_vl,
    "glm4v": unseen_glm4v,
    "glm4v_moe": unseen_glm4v_moe,
    "qwen3_vl_moe": unseen_qwen3_vl_moe,
    "llava_next_video": unseen_llava_next_video,
    "vipllava": unseen_vipllava,
    "glm46v": unseen_glm46v,
    "video_llava": unseen_video_llava,
    "aya_vision": unseen_aya_vision,
    "lighton_ocr": unseen_lighton_ocr,
    "llava_onevision1_5": unseen_llava_onevision1_5,
    "kimi_k25": unseen_kimi_k25,
    "minimax_m3_vl": unseen_minimax_m3_vl,
    "qwen3_omni_moe_thinker": unseen_qwen3_omni,
    "idefics2": unseen_idefics2,
    "video_llama_3": unseen_video_llama_3,
    "pp_chart2table": unseen_pp_chart2table,
    "glmga": lambda rng: dict(unseen_glm46v(rng), model_type="glmga"),
    "hyperclovax_vision_v2": unseen_hyperclovax_vision_v2,
    "deepseek_vl": unseen_deepseek_vl,
    "minicpmv4_6": lambda rng: unseen_minicpmv(rng, "minicpmv4_6", "MiniCPMV4_6"),
    "minicpmv4_7": lambda rng: unseen_minicpmv(rng, "minicpmv4_7", "MiniCPMV4_7"),
    "minicpm_ocr": lambda rng: unseen_minicpmv(rng, "minicpm_ocr", "MiniCPMOcr"),
    "aria": unseen_aria,
    "blip-2": lambda rng: unseen_blip(rng, "blip-2", "blip_2", "Blip2"),
    "instructblip": lambda rng: unseen_blip(rng, "instructblip", "instructblip", "InstructBlip"),
    "instructblipvideo": lambda rng: unseen_blip(rng, "instructblipvideo", "instructblipvideo", "InstructBlipVideo"),
    "deepseek_vl_hybrid": unseen_deepseek_vl_hybrid,
    "exaone4_5": unseen_exaone4_5,
    "qianfan_ocr": unseen_qianfan_ocr,
    "mistral4": unseen_mistral4,
    "paligemma": unseen_paligemma,
    "glm_ocr": unseen_glm_ocr,
    "lfm3_vl": unseen_lfm3_vl,
    "inkling2": lambda rng: unseen_inkling2_wrapped(rng, "inkling2", unseen_inkling2),
    "inkling2_loop": lambda rng: unseen_inkling2_wrapped(rng, "inkling2_loop", unseen_inkling2_loop),
    "mistral3_mistral4": unseen_mistral3_mistral4,
    "hunyuan_vl": unseen_hunyuan_vl,
    "hy_v4_vl": unseen_hy_v4_vl,
    "paddleocr_vl": unseen_paddleocr_vl,
    "cohere_compass": unseen_cohere_compass,
    "qwen2_5_omni_thinker": unseen_qwen2_5_omni_thinker,
    "ovis2": unseen_ovis2,
    "granite_docling": unseen_granite_docling,
    "granite4_vision": unseen_granite4_vision,
}


# Every model type anatomy reads (its registry, crates/core/src/families/registry.rs): the counts
# and layout of the config class's defaults, `{"model_type": T}` alone. A test fails when a
# registry row has no such fixture.
DEFAULT_TYPES = [
    "llama", "mistral", "ministral3", "qwen2", "qwen3", "mixtral", "qwen3_moe", "smollm3", "phi3", "olmo", "nanochat", "olmo2", "gemma", "cwm", "granite_swa", "granitemoe_swa", "granitemoeshared", "cohere2", "flex_olmo", "solar_open", "sarvam_moe", "youtu",
    "seed_oss", "glm4", "glm", "helium", "starcoder2", "phi", "gpt_neox", "falcon", "internlm3", "exaone",
    "iquestcoder", "arcee", "jais2", "olmoe", "qwen2_moe", "granite", "hyperclovax", "granitemoe", "cohere", "stablelm", "persimmon", "gptj", "codegen", "gpt_bigcode", "bloom", "mpt", "minimax_m2", "hy_v3", "exaone_moe", "flint", "mellum", "mimo_v2_flash", "jetmoe", "doge", "laguna", "phi4_multimodal", "cohere2_moe", "kolibri1", "bitnet", "afmoe", "apertus1p5_text", "diffllama", "phimoe", "got_ocr2", "fuyu", "aria_text", "axk1", "ctrl", "gpt_neox_japanese", "modernbert-decoder", "vaultgemma", "olmo3", "exaone4", "apertus", "ernie4_5", "ernie4_5_moe", "gpt_neo", "biogpt", "xglm", "opt", "openai-gpt", "gpt2", "gemma2", "gemma3_text", "gemma3", "deepseek_v2",
    "deepseek_v3", "deepseek_v32", "glm4_moe", "glm4_moe_lite", "glm_moe_dsa", "sarvam_mla", "minicpm3", "gpt_oss", "llama4_text", "llama4", "mamba2", "bamba", "granitemoehybrid", "nemotron_h", "mamba", "falcon_mamba", "jamba", "lfm2",
    "qwen3_next", "qwen3_5_text", "qwen3_5_moe_text", "qwen3_5", "qwen3_5_moe", "lfm3", "kimi_linear", "olmo_hybrid", "falcon_h1", "bailing_hybrid", "lara_mini", "minimax", "recurrent_gemma", "rwkv",
    "longcat_flash", "gemma4_text", "gemma4", "gemma4_unified_text", "gemma4_unified", "zamba2", "zamba", "xlstm", "hy_v4", "gemma3n_text", "axk2", "beam", "mllama", "mllama_text_model", "git",
    "emu3", "emu3_text_model", "hrm_text", "dots3_note_text", "dots3_note", "minimax_m3_vl_text", "zaya", "dory",
    "cpmant", "gemma3n", "inkling_text", "inkling2_text", "inkling2_loop_text", "deepseek_v4",
    "gemma4_unified_assistant", "blt", "param2moe", "minicpm5_moe", "ergo", "kolibri1_1", "llava", "mistral3", "llava_next", "smolvlm", "idefics3",
    "llava_onevision", "cohere2_vision", "internvl", "lfm2_vl", "qwen2_vl", "qwen2_5_vl", "qwen3_vl", "glm4v", "glm4v_moe", "qwen3_vl_moe", "llava_next_video",
    "vipllava", "glm46v", "video_llava", "lighton_ocr", "llava_onevision1_5",
    "kimi_k25", "minimax_m3_vl", "qwen3_omni_moe_thinker", "idefics2",
    "video_llama_3", "pp_chart2table", "glmga", "hyperclovax_vision_v2",
    "deepseek_vl", "minicpmv4_6", "minicpmv4_7", "minicpm_ocr", "aria",
    "blip-2", "instructblip", "instructblipvideo", "deepseek_vl_hybrid",
    "exaone4_5", "qianfan_ocr", "mistral4", "paligemma", "glm_ocr", "lfm3_vl",
    "inkling2", "inkling2_loop", "hy_v4_vl", "paddleocr_vl", "qwen2_5_omni_thinker", "ovis2", "granite_docling",
]


def main(only):
    for model_type in DEFAULT_TYPES:
        name = f"default-{model_type}"
        if only and name not in only:
            continue
        raw = {"model_type": model_type}
        # The published class of a wrapper (Gemma3ForConditionalGeneration …), or of a type the
        # causal-LM mapping lacks (MllamaForCausalLM); a wrapper holds its language model apart.
        arch = {**ARCHITECTURES, **ASSISTANT_CLASSES}.get(model_type)
        if arch:
            raw["architectures"] = [arch]
        # (Exaone4_5_Config's __post_init__ fails on an empty text_config: it reads its model_type.)
        if "text_config" in (CONFIG_MAPPING[model_type].sub_configs or {}) and arch and model_type != "exaone4_5":
            raw["text_config"] = {}
        write(name, f"the {model_type} config class's defaults", raw)
        save_defaults(model_type, raw)
    # Classes whose defaults build a config but no model (exactness.rs's CANNOT_BUILD): the saved
    # config alone, which anatomy must refuse by the same field.
    for model_type in ("qwen4_exp_text", "hunyuan_vl"):
        if not only or f"saved-{model_type}" in only:
            arch = ARCHITECTURES.get(model_type)
            save_defaults(model_type, {"model_type": model_type, **({"architectures": [arch]} if arch else {})})
    rng = random.Random(20261129)
    for path in sorted(CATALOG.glob("*.json")):
        name = path.stem
        if only and name not in only:
            continue
        raw = json.loads(path.read_text())
        write(name, f"catalog/{path.name}", raw)
    for family, make in UNSEEN.items():
        for i in range(3):
            raw = make(rng)
            name = f"unseen-{family}-{i}"
            if only and name not in only:
                continue
            write_unseen(name, raw)
    # Gemma 4 with the vision and audio towers its published checkpoints have (its class builds
    # none by default), and with the vision tower alone.
    for i, towers in enumerate(({"vision_config": {}, "audio_config": {}},
                                {"vision_config": {"hidden_size": 384, "num_hidden_layers": 3,
                                                   "use_clipped_linears": True, "standardize": True}})):
        name = f"unseen-gemma4_towers-{i}"
        if only and name not in only:
            continue
        raw = {"model_type": "gemma4", "architectures": ["Gemma4ForConditionalGeneration"],
               "text_config": {"hidden_size": 512}, **towers}
        write_unseen(name, raw)
    # Qwen4-Exp in its multimodal wrapper: a small vision tower, n-gram embeddings in a layer.
    name = "unseen-qwen4_exp_wrapped-0"
    if not only or name in only:
        text = json.loads((FIXTURES / "unseen" / "unseen-qwen4_exp-1.json").read_text())
        raw = {"model_type": "qwen4_exp", "architectures": ["Qwen4ExpForConditionalGeneration"], "text_config": text,
               "vision_config": {"depth": 2, "hidden_size": 64, "intermediate_size": 96, "num_heads": 4,
                                 "out_hidden_size": text["hidden_size"], "num_position_embeddings": 64}}
        write_unseen(name, raw)
    # xLSTM with biases on every projection and on its blocks' norms, tied and not.
    for i, tied in enumerate((False, True)):
        name = f"unseen-xlstm_bias-{i}"
        if only and name not in only:
            continue
        raw = {"model_type": "xlstm", "hidden_size": 128, "num_hidden_layers": 2 + i, "num_heads": 2 * (i + 1),
               "vocab_size": 97, "pad_token_id": 1, "use_bias": True, "ffn_proj_factor": 1.5,
               "tie_word_embeddings": tied}
        write_unseen(name, raw)
    # xLSTM stored fused, with biases and without, at another head count and widths.
    for i, bias in enumerate((False, True)):
        name = f"unseen-xlstm_fused-{i}"
        if only and name not in only:
            continue
        raw = {"model_type": "xlstm", "hidden_size": 128, "num_hidden_layers": 1 + 2 * i, "num_heads": 4 - 2 * i,
               "vocab_size": 97, "pad_token_id": 1, "use_bias": bias, "weight_mode": "fused",
               "qk_dim_factor": 1.0 if i else 0.5, "ffn_proj_factor": 2.0}
        write_unseen(name, raw)
    # Phi-4-multimodal's image and audio encoders at sizes and options of their own.
    for i, towers in enumerate(({"vision_config": {"hidden_size": 32, "intermediate_size": 40, "num_hidden_layers": 2,
                                                   "num_attention_heads": 2, "image_size": 56, "patch_size": 14},
                                 "audio_config": {"hidden_size": 32, "intermediate_size": 24, "num_blocks": 2,
                                                  "num_attention_heads": 4, "ext_pw_out_channel": 16,
                                                  "depthwise_separable_out_channel": 24, "depthwise_multiplier": 2,
                                                  "kernel_size": 5, "input_size": 20, "nemo_conv_channels": 8,
                                                  "time_reduction": 4, "bias_max_distance": 50,
                                                  "bias_symmetric": True, "downsample_rate": 2}},
                                {"vision_config": {"hidden_size": 48, "intermediate_size": 24, "num_hidden_layers": 1,
                                                   "num_attention_heads": 3, "image_size": 42, "patch_size": 14,
                                                   "num_channels": 1},
                                 "audio_config": {"hidden_size": 24, "intermediate_size": 40, "num_blocks": 1,
                                                  "num_attention_heads": 5, "input_size": 7, "nemo_conv_channels": 4,
                                                  "time_reduction": 16, "ext_pw_out_channel": 24,
                                                  "depthwise_separable_out_channel": 24}})):
        name = f"unseen-phi4_towers-{i}"
        if only and name not in only:
            continue
        raw = {"model_type": "phi4_multimodal", "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 1,
               "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000, "pad_token_id": 0,
               "bos_token_id": 1, "eos_token_id": 2, **towers}
        write_unseen(name, raw)
    # Gemma 4 unified with its class's vision and audio embedders, and with other sizes of each.
    for i, towers in enumerate(({"vision_config": {}, "audio_config": {}},
                                {"vision_config": {"patch_size": 8, "pooling_kernel_size": 2, "mm_embed_dim": 96,
                                                   "mm_posemb_size": 40, "output_proj_dims": 96},
                                 "audio_config": {"audio_embed_dim": 48}})):
        name = f"unseen-gemma4_unified_towers-{i}"
        if only and name not in only:
            continue
        raw = {"model_type": "gemma4_unified", "architectures": ["Gemma4UnifiedForConditionalGeneration"],
               "text_config": {"hidden_size": 256}, **towers}
        write_unseen(name, raw)
    # dots.3 Note with its sliding layers' sizes in a `per_layer_config`, all three layer kinds,
    # and RoPE given per kind; then the wrapper with its language model in `text_config`.
    swa = {"num_attention_heads": 2, "num_key_value_heads": 2, "q_lora_rank": 12, "kv_lora_rank": 8,
           "head_dim": 20, "qk_nope_head_dim": 12, "qk_rope_head_dim": 8, "v_head_dim": 16}
    kinds = ["indexed_attention", "sliding_attention", "full_attention", "sliding_attention", "indexed_attention"]
    text = {"hidden_size": 64, "intermediate_size": 72, "moe_intermediate_size": 16, "num_hidden_layers": 5,
            "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 97, "n_routed_experts": 8,
            "num_experts_per_tok": 2, "kv_lora_rank": 16, "q_lora_rank": 24, "qk_nope_head_dim": 8,
            "qk_rope_head_dim": 8, "head_dim": 32, "v_head_dim": 12, "index_n_heads": 2, "index_head_dim": 16,
            "index_topk": 4, "sliding_window": 4, "moe_shared_expert_intermediate_size": 20,
            "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2, "layer_types": kinds,
            "per_layer_config": {str(i): swa for i, k in enumerate(kinds) if k == "sliding_attention"},
            "rope_parameters": {k: {"rope_type": "default", "rope_theta": t} for k, t in
                                (("indexed_attention", 1e6), ("full_attention", 1e6), ("sliding_attention", 1e4))}}
    for i, raw in enumerate((dict(text, model_type="dots3_note_text"),
                             {"model_type": "dots3_note", "text_config": dict(text, model_type="dots3_note_text"),
                              "vision_config": {"adapter_out_dim": 64}, "audio_config": {"adapter_out_dim": 64}})):
        name = f"unseen-dots3_note_kinds-{i}"
        if only and name not in only:
            continue
        write_unseen(name, raw)
    # Gemma 3n as published (its wrapper): audio towers of other widths, heads that do not divide
    # the width, other convolutions and strides; small embedder tables.
    for i, audio in enumerate(({"hidden_size": 64, "conf_num_hidden_layers": 2, "conf_num_attention_heads": 4,
                                "conf_conv_kernel_size": 3, "input_feat_size": 40, "sscp_conv_channel_size": [16, 8],
                                "vocab_size": 32},
                               {"hidden_size": 66, "conf_num_hidden_layers": 1, "conf_num_attention_heads": 4,
                                "input_feat_size": 33, "sscp_conv_channel_size": [8, 4],
                                "sscp_conv_kernel_size": [[3, 5], [3, 3]], "sscp_conv_stride_size": [[2, 3], [1, 2]]})):
        name = f"unseen-gemma3n_towers-{i}"
        if only and name not in only:
            continue
        text = {"hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 5, "num_attention_heads": 2,
                "num_key_value_heads": 1, "head_dim": 32, "vocab_size": 300, "vocab_size_per_layer_input": 300,
                "hidden_size_per_layer_input": 8, "laurel_rank": 4, "sliding_window": 8,
                "num_kv_shared_layers": 2, "activation_sparsity_pattern": [0.95, 0.0, 0.0, 0.0, 0.0],
                "layer_types": ["sliding_attention", "full_attention"] * 2 + ["sliding_attention"]}
        write_unseen(name, {"model_type": "gemma3n", "architectures": ["Gemma3nForConditionalGeneration"],
                            "text_config": text, "audio_config": audio, "vision_config": {"hidden_size": 64 + 32 * i}})
    # Cohere with Command R+'s QK-norm (a LayerNorm per head, each head its own weight), GQA and
    # multi-query.
    for i, kv in enumerate((2, 1)):
        name = f"unseen-cohere_qk-{i}"
        if only and name not in only:
            continue
        write_unseen(name, {"model_type": "cohere", "hidden_size": 64, "intermediate_size": 96,
                            "num_hidden_layers": 2 + i, "num_attention_heads": 8, "num_key_value_heads": kv,
                            "vocab_size": 97, "use_qk_norm": True, "logit_scale": 0.125, "pad_token_id": 0})
    # StableLM 2 12B's qk_layernorm: a LayerNorm of its own for each head's Q and K.
    for i, kv in enumerate((4, 2)):
        name = f"unseen-stablelm_qk-{i}"
        if only and name not in only:
            continue
        write_unseen(name, {"model_type": "stablelm", "hidden_size": 64, "intermediate_size": 96,
                            "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": kv,
                            "vocab_size": 97, "qk_layernorm": True, "use_parallel_residual": bool(i)})
    # Inkling with one shared expert (still stacked [1, I, H]), with every layer dense (the
    # experts' keys then change nothing), and as its checkpoints give the widths
    # (dense_intermediate_size, the experts' width as intermediate_size, moe_intermediate_size
    # overwritten).
    for i, extra in enumerate(({"n_shared_experts": 1, "mlp_layer_types": ["dense", "sparse", "sparse"]},
                               {"n_shared_experts": 3, "mlp_layer_types": ["dense"] * 3},
                               {"dense_intermediate_size": 56, "mlp_layer_types": ["dense", "sparse", "sparse"]})):
        name = f"unseen-inkling_text_shared-{i}"
        if only and name not in only:
            continue
        write_unseen(name, {"model_type": "inkling_text", "vocab_size": 97, "hidden_size": 32, "num_hidden_layers": 3,
                            "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
                            "swa_num_attention_heads": 2, "swa_num_key_value_heads": 1, "swa_head_dim": 16,
                            "intermediate_size": 40, "moe_intermediate_size": 12, "n_routed_experts": 5,
                            "num_experts_per_tok": 2, "local_layer_ids": [1], **extra})
    if not only or "cpmant-buckets" in only:
        write_buckets()


def write_buckets():
    """CPM-Ant's relative-position buckets as transformers computes them (in float32), for
    distances -5000 to 5000 under a few bucket counts and reaches: each run of distances that share
    a bucket as [first distance, bucket]."""
    from transformers.models.cpmant.modeling_cpmant import CpmAntSegmentPositionEmbedding
    rel = torch.arange(-5000, 5001, dtype=torch.int32)
    out = {"transformers": transformers.__version__, "distances": [-5000, 5000], "cases": []}
    for buckets, reach in ((512, 2048), (32, 128), (16, 12), (8, 3), (64, 1000)):
        got = CpmAntSegmentPositionEmbedding._position_bucket(None, rel, num_buckets=buckets, max_distance=reach)
        runs = [[int(r), int(b)] for i, (r, b) in enumerate(zip(rel, got)) if i == 0 or b != got[i - 1]]
        out["cases"].append({"buckets": buckets, "max_distance": reach, "runs": runs})
    (FIXTURES / "cpmant-buckets.json").write_text(json.dumps(out) + "\n")
    print(f"cpmant-buckets: {len(out['cases'])} cases")


if __name__ == "__main__":
    main(set(sys.argv[1:]))
