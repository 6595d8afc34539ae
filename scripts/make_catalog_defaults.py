#!/usr/bin/env python3
"""Write the catalog entries that hold a config class's defaults instead of a published config.

For families whose published config.json was not at hand, the catalog holds what transformers'
config class builds with no arguments: the class documents those defaults as one checkpoint's
(catalog.rs names the class, and every view says so in its provenance line). Identity and
generation keys that every config carries are dropped; every architecture key is kept.

Usage: python3 scripts/make_catalog_defaults.py   (needs: pip install transformers)
"""
import json
from pathlib import Path

from transformers import CONFIG_MAPPING

ROOT = Path(__file__).resolve().parent.parent
CATALOG = ROOT / "crates/core/catalog"

# catalog name -> model_type; the class and its documented checkpoint are in catalog.rs.
ENTRIES = {
    "qwen1.5-moe-a2.7b": "qwen2_moe",
    "stablelm-3b-4e1t": "stablelm",
    "gpt-j-6b": "gptj",
    "persimmon-8b-base": "persimmon",
    "internlm3-8b-instruct": "internlm3",
    "exaone-3.0-7.8b-instruct": "exaone",
    "iquest-coder-v1-40b-instruct": "iquestcoder",
    "jais-2-8b-chat": "jais2",
    "longcat-flash-chat": "longcat_flash",
    "gemma-4-e2b-it": "gemma4_text",
    "xlstm-7b": "xlstm",
    "zamba-7b-v1": "zamba",
    "zamba2-2.7b": "zamba2",
    "recurrentgemma-2b": "recurrent_gemma",
    "olmo-hybrid-7b": "olmo_hybrid",
    "lfm3-1.7b": "lfm3",
    "hy4-preview": "hy_v4",
    "gemma-3n-e4b": "gemma3n_text",
    "a.x-k2": "axk2",
    "beam-1.0-501b-a23b": "beam",
    "llama-3.2-11b-vision": "mllama",
    "git-base": "git",
    "emu3-chat": "emu3",
    "hrm-text-1b": "hrm_text",
    "dots3-note-prev": "dots3_note_text",
    "minimax-m3": "minimax_m3_vl_text",
    "zaya1-8b": "zaya",
    "dory1.0-4b": "dory",
    "cpm-ant-10b": "cpmant",
    "inkling": "inkling_text",
    "inkling-2-small": "inkling2_text",
    "inkling-2-mini": "inkling2_loop_text",
    "deepseek-v4-flash-base": "deepseek_v4",
    "blt-1b": "blt",
}

# The published class of a wrapper whose causal-LM class holds its language model alone: the
# catalog, as the published config, names it.
ARCHITECTURES = {"mllama": "MllamaForConditionalGeneration", "emu3": "Emu3ForConditionalGeneration"}

# Keys of every PreTrainedConfig that say nothing about the architecture.
NOISE = {
    "return_dict", "output_hidden_states", "output_attentions", "torchscript", "dtype",
    "torch_dtype", "pruned_heads", "tie_encoder_decoder", "is_encoder_decoder", "is_decoder",
    "add_cross_attention", "chunk_size_feed_forward", "architectures", "finetuning_task", "id2label",
    "label2id", "task_specific_params", "problem_type", "tokenizer_class", "prefix", "sep_token_id",
    "decoder_start_token_id", "transformers_version", "_name_or_path", "use_cache",
    "output_router_logits", "num_labels",
}


def main():
    for name, model_type in ENTRIES.items():
        config = CONFIG_MAPPING[model_type]().to_dict()
        kept = {k: v for k, v in sorted(config.items()) if k not in NOISE and not k.startswith("_")}
        # A wrapper's sub-configs (text_config, vision_config) carry the same noise.
        for key, sub in kept.items():
            if key.endswith("_config") and isinstance(sub, dict):
                kept[key] = {k: v for k, v in sorted(sub.items()) if k not in NOISE and not k.startswith("_")}
        kept["model_type"] = model_type
        if model_type in ARCHITECTURES:
            kept["architectures"] = [ARCHITECTURES[model_type]]
        (CATALOG / f"{name}.json").write_text(json.dumps(kept, indent=2) + "\n")
        print(f"{name}: {type(CONFIG_MAPPING[model_type]()).__name__}, {len(kept)} keys")


if __name__ == "__main__":
    main()
