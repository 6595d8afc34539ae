//! Keys of particular families that describe another model than transformers builds.

use super::*;

/// Mamba2's sizes must agree with one another, and a Δ limit transformers applies to a prompt
/// but not to a decoded token is refused.
#[test]
fn mamba2_sizes_and_step_limits() {
    let base = anatomy_core::catalog::get("mamba-codestral-7b")
        .unwrap()
        .value();
    refused_by_name(
        &base,
        &[
            ("num_heads", json!(100), "must equal hidden_size × expand"),
            (
                "intermediate_size",
                json!(4096),
                "expand × hidden_size (4096 × 2)",
            ),
            ("n_groups", json!(3), "it must divide num_heads (128)"),
            (
                "time_step_limit",
                json!([0.0, 5.0]),
                "must be [0.0, Infinity]",
            ),
            ("hidden_act", json!("gelu"), "SiLU"),
        ],
    );
    // Python's json writes the default limit with a bare Infinity: read as the number.
    let text = anatomy_core::catalog::get("mamba-codestral-7b")
        .unwrap()
        .json;
    assert!(text.contains("Infinity"));
    families::load_json("cfg.json", text, "t", false).unwrap();
}

/// Nemotron-H: keys transformers reads otherwise than they say, or not at all, are refused by
/// name where they would describe another model.
#[test]
fn nemotron_h_keys_that_describe_another_model() {
    let base = anatomy_core::catalog::get("nemotron-3-nano-30b-a3b")
        .unwrap()
        .value();
    refused_by_name(
        &base,
        &[
            (
                "num_hidden_layers",
                json!(50),
                "the layer pattern gives 52 layers",
            ),
            ("hybrid_override_pattern", json!("MEX*"), "holds 'X'"),
            ("n_shared_experts", json!(2), "builds one shared expert"),
            ("norm_eps", json!(1e-6), "never read"),
            ("attention_bias", json!(true), "have no biases"),
            ("sliding_window", json!(4096), "sees every earlier token"),
            ("moe_latent_size", json!(1024), "latent projections"),
        ],
    );
}

/// Qwen3-Next: the DeltaNet's value heads must split evenly among its key heads, its layer
/// types are the two the class builds, and a sliding window its class never applies is refused.
#[test]
fn qwen3_next_keys_that_describe_another_model() {
    let base = anatomy_core::catalog::get("qwen3-next-80b-a3b")
        .unwrap()
        .value();
    refused_by_name(
        &base,
        &[
            (
                "linear_num_value_heads",
                json!(24),
                "a multiple of linear_num_key_heads (16)",
            ),
            ("linear_num_key_heads", json!(0), "positive integer"),
            ("use_sliding_window", json!(true), "false"),
            ("hidden_act", json!("gelu"), "SiLU"),
            (
                "full_attention_interval",
                json!(64),
                "no full_attention layer among the 48",
            ),
        ],
    );
    let mut v = base.clone();
    let mut types = vec!["linear_attention"; 48];
    types[5] = "mamba";
    v["layer_types"] = json!(types);
    let e = err_of(&v);
    assert_eq!(e.field, "layer_types[5]", "{e}");
    assert!(
        e.message.contains("\"linear_attention\" (Gated DeltaNet)"),
        "{e}"
    );
}

/// LFM2's derived MLP width: a multiplier whose width overflows is refused by name (the
/// mutation test found it panicking).
#[test]
fn lfm2_width_that_overflows() {
    let base = anatomy_core::catalog::get("lfm2-700m").unwrap().value();
    refused_by_name(
        &base,
        &[(
            "block_ffn_dim_multiplier",
            json!(1e300),
            "does not fit in 64 bits",
        )],
    );
}

/// Kimi Linear: its layer lists, numbered from 1, must name every layer once and stay within the
/// model; both lists or neither; some layer must attend; the keys that restate its attention
/// and router must agree.
#[test]
fn kimi_linear_keys_that_describe_another_model() {
    let base = anatomy_core::catalog::get("kimi-linear-48b-a3b")
        .unwrap()
        .value();
    refused_by_name(
        &base,
        &[
            ("mla_use_nope", json!(false), "true"),
            ("moe_router_activation_func", json!("softmax"), "sigmoid"),
            ("hidden_act", json!("gelu"), "SiLU"),
        ],
    );
    let lists = |full: Value, kda: Value| {
        let mut v = base.clone();
        v["linear_attn_config"]["full_attn_layers"] = full;
        v["linear_attn_config"]["kda_layers"] = kda;
        err_of(&v)
    };
    let every: Vec<u64> = (1..=27).collect();
    for (full, kda, field, says) in [
        (
            json!([0, 4]),
            json!(every),
            "full_attn_layers[0]",
            "from 1 to 27",
        ),
        (
            json!([28]),
            json!(every),
            "full_attn_layers[0]",
            "from 1 to 27",
        ),
        (
            json!([4]),
            json!([1, 2]),
            "kda_layers",
            "leave layer 3 (numbered from 1)",
        ),
        (
            json!([]),
            json!(every),
            "full_attn_layers",
            "no full_attention layer among the 27",
        ),
    ] {
        let e = lists(full, kda);
        assert_eq!(e.field, format!("linear_attn_config.{field}"), "{e}");
        assert!(e.message.contains(says), "{e}");
    }
    let mut v = base.clone();
    v["linear_attn_config"]
        .as_object_mut()
        .unwrap()
        .remove("kda_layers");
    let e = err_of(&v);
    assert_eq!(e.field, "linear_attn_config.full_attn_layers", "{e}");
    assert!(e.message.contains("without kda_layers"), "{e}");
    let mut v = base.clone();
    v["layer_types"] = json!(vec!["linear_attention"; 27]);
    let e = err_of(&v);
    assert_eq!(e.field, "layer_types", "{e}");
}

/// OLMo hybrid: one key head per value head (its class feeds them to the delta rule as they
/// are), and a model of one kind of layer is refused as its class refuses it.
#[test]
fn olmo_hybrid_keys_that_describe_another_model() {
    let base = json!({"model_type": "olmo_hybrid", "hidden_size": 64, "intermediate_size": 96,
        "num_hidden_layers": 4, "num_attention_heads": 4, "vocab_size": 100});
    refused_by_name(
        &base,
        &[
            (
                "linear_num_value_heads",
                json!(8),
                "must equal linear_num_key_heads (4)",
            ),
            (
                "layer_types",
                json!(vec!["full_attention"; 4]),
                "no linear_attention layer",
            ),
            (
                "layer_types",
                json!(vec!["linear_attention"; 4]),
                "no full_attention layer",
            ),
            ("num_hidden_layers", json!(1), "no linear_attention layer"),
            ("hidden_act", json!("gelu"), "SiLU"),
        ],
    );
}

/// Falcon-H1: its lists of multipliers have their lengths, the mixer's two projection-bias flags
/// agree, Mamba2's width splits into its heads, and Δ's clamp is the one both of transformers'
/// paths apply.
#[test]
fn falcon_h1_keys_that_describe_another_model() {
    let base = json!({"model_type": "falcon_h1", "hidden_size": 64, "intermediate_size": 96,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
        "vocab_size": 100, "mamba_d_ssm": 128, "mamba_n_heads": 8, "mamba_d_state": 16});
    refused_by_name(
        &base,
        &[
            ("ssm_multipliers", json!([1.0, 1.0, 1.0]), "it must have 5"),
            ("mlp_multipliers", json!([1.0]), "it must have 2"),
            ("projectors_bias", json!(true), "mamba_proj_bias is false"),
            ("mamba_n_heads", json!(5), "must equal mamba_d_ssm (128)"),
            (
                "time_step_limit",
                json!([0.001, 100.0]),
                "must be [0.0, Infinity]",
            ),
        ],
    );
}

/// Ling's hybrid: the decay's floor is a negative log decay, and some layer attends.
#[test]
fn bailing_hybrid_keys_that_describe_another_model() {
    let base = json!({"model_type": "bailing_hybrid", "hidden_size": 64, "num_hidden_layers": 4,
        "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 100, "num_experts": 8,
        "num_experts_per_token": 2,
        "num_expert_group": 1, "topk_group": 1});
    refused_by_name(
        &base,
        &[
            ("kda_lower_bound", json!(0.5), "must be a negative number"),
            (
                "layer_group_size",
                json!(5),
                "no full_attention layer among the 4",
            ),
            (
                "layer_types",
                json!(vec!["linear_attention"; 4]),
                "no full_attention layer",
            ),
        ],
    );
}

/// Lara Mini: layer types of its three kinds, at least one of them attention.
#[test]
fn lara_mini_keys_that_describe_another_model() {
    let base = json!({"model_type": "lara_mini", "hidden_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100, "num_experts": 4,
        "num_experts_per_tok": 2});
    refused_by_name(
        &base,
        &[(
            "layer_types",
            json!(["linear_attention", "linear_attention"]),
            "no attention layer among the 2",
        )],
    );
    let mut v = base.clone();
    v["layer_types"] = json!(["linear_attention", "conv"]);
    let e = err_of(&v);
    assert_eq!(e.field, "layer_types[1]", "{e}");
    assert!(
        e.message
            .contains("\"linear_attention\", \"full_attention\" or \"sliding_attention\""),
        "{e}"
    );
}

/// RecurrentGemma: block types of its two kinds, at least one layer attending; an RG-LRU its
/// gate blocks divide; the default RoPE only.
#[test]
fn recurrent_gemma_keys_that_describe_another_model() {
    let base = json!({"model_type": "recurrent_gemma", "hidden_size": 64, "num_hidden_layers": 3,
        "num_attention_heads": 4, "intermediate_size": 96, "vocab_size": 100});
    refused_by_name(
        &base,
        &[
            (
                "block_types",
                json!(["recurrent"]),
                "no attention layer among the 3",
            ),
            ("block_types", json!([]), "is empty"),
            (
                "num_hidden_layers",
                json!(2),
                "no attention layer among the 2",
            ),
            ("lru_width", json!(30), "positive multiple of 4"),
            (
                "head_dim",
                json!(8),
                "the class sets it to hidden_size / num_attention_heads (16)",
            ),
            ("logits_soft_cap", json!(-1.0), "positive number"),
            (
                "rope_parameters",
                json!({"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0}),
                "default type only",
            ),
        ],
    );
    let mut v = base.clone();
    v["block_types"] = json!(["recurrent", "mlp"]);
    let e = err_of(&v);
    assert_eq!(e.field, "block_types[1]", "{e}");
}

/// RWKV: one ε for every norm (its final norm keeps LayerNorm's default).
#[test]
fn rwkv_keys_that_describe_another_model() {
    let base = json!({"model_type": "rwkv", "hidden_size": 64, "num_hidden_layers": 2,
        "vocab_size": 100});
    refused_by_name(
        &base,
        &[
            ("layer_norm_epsilon", json!(1e-6), "must be 1e-5"),
            ("rescale_every", json!(-1), "non-negative"),
        ],
    );
}

/// Each key set to its value on `base` is refused, naming that key, with `says` in the message.
fn refused_by_name(base: &Value, cases: &[(&str, Value, &str)]) {
    for (key, value, says) in cases {
        let mut v = base.clone();
        v[*key] = value.clone();
        let e = err_of(&v);
        assert_eq!(e.field, *key, "{e}");
        assert!(e.message.contains(says), "{key}: {e}");
    }
}

/// LongCat-Flash: keys whose values transformers would build a different model from than the
/// one it runs, or could not run.
#[test]
fn longcat_flash_keys_that_describe_another_model() {
    let base = json!({"model_type": "longcat_flash", "hidden_size": 32, "num_layers": 2,
        "num_attention_heads": 4, "vocab_size": 100, "ffn_hidden_size": 48, "q_lora_rank": 16,
        "kv_lora_rank": 8, "qk_nope_head_dim": 8, "qk_rope_head_dim": 4, "head_dim": 4,
        "v_head_dim": 6, "n_routed_experts": 4, "zero_expert_num": 2, "moe_topk": 2,
        "expert_ffn_hidden_size": 12});
    err_free(&base);
    refused_by_name(
        &base,
        &[
            ("router_bias", json!(true), "never adds it"),
            ("head_dim", json!(8), "rotary tables are head_dim wide"),
            ("qk_head_dim", json!(16), "so it must be 12"),
            ("q_lora_rank", json!(null), "needs a rank"),
            ("num_hidden_layers", json!(1), "come in pairs"),
            ("moe_topk", json!(7), "at most 6"),
            // Its first code's flags, which transformers never reads: it always scales the
            // latents and its zero-computation experts are identities.
            (
                "mla_scale_kv_lora",
                json!(false),
                "transformers ignores this key",
            ),
            (
                "zero_expert_type",
                json!("zero"),
                "transformers ignores this key",
            ),
        ],
    );
    let mut echoing = base.clone();
    echoing["mla_scale_q_lora"] = json!(true);
    echoing["mla_scale_kv_lora"] = json!(true);
    echoing["zero_expert_type"] = json!("identity");
    err_free(&echoing);
}

fn err_free(v: &Value) {
    families::load_json("cfg.json", &v.to_string(), "t", false)
        .and_then(|s| graph::build(&s).map(|_| ()))
        .unwrap_or_else(|e| panic!("{e}"));
}

/// Gemma 4: keys whose values describe a model transformers would not build or run as they say.
#[test]
fn gemma4_keys_that_describe_another_model() {
    let base = json!({"model_type": "gemma4_text", "hidden_size": 32, "num_hidden_layers": 4,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8, "global_head_dim": 16,
        "vocab_size": 100, "intermediate_size": 48, "sliding_window": 4,
        "hidden_size_per_layer_input": 8, "vocab_size_per_layer_input": 100,
        "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"]});
    err_free(&base);
    refused_by_name(
        &base,
        &[
            (
                "use_bidirectional_attention",
                json!("all"),
                "causal decoders",
            ),
            ("num_kv_shared_layers", json!(4), "must compute its own"),
            (
                "per_layer_config",
                json!({"1": {"head_dim": 16}}),
                "all of them or none",
            ),
        ],
    );
    // Errors inside a dict name the entry.
    for (key, value, field, says) in [
        (
            "per_layer_config",
            json!({"0": {"head_dim": 16}}),
            "per_layer_config.0",
            "local layer",
        ),
        (
            "per_layer_config",
            json!({"x": {"head_dim": 16}}),
            "per_layer_config.x",
            "not a layer index",
        ),
        (
            "rope_parameters",
            json!({"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}),
            "rope_parameters.full_attention",
            "is missing",
        ),
    ] {
        let mut v = base.clone();
        v[key] = value;
        let e = err_of(&v);
        assert_eq!(e.field, field, "{e}");
        assert!(e.message.contains(says), "{e}");
    }
    // The experts beside MLPs of two widths.
    let mut both = base.clone();
    both["num_kv_shared_layers"] = json!(2);
    both["use_double_wide_mlp"] = json!(true);
    err_free(&both);
    both["enable_moe_block"] = json!(true);
    both["num_experts"] = json!(4);
    both["top_k_experts"] = json!(2);
    both["moe_intermediate_size"] = json!(8);
    let e = err_of(&both);
    assert_eq!(e.field, "use_double_wide_mlp", "{e}");
    // The experts need their sizes: the class has no defaults for them.
    let mut moe = base.clone();
    moe["enable_moe_block"] = json!(true);
    assert_eq!(err_of(&moe).field, "num_experts");
}

/// Zamba2: keys whose values describe a model transformers would not build, or restate what it
/// derives with another value.
#[test]
fn zamba2_keys_that_describe_another_model() {
    let base = json!({"model_type": "zamba2", "hidden_size": 32, "num_hidden_layers": 3,
        "layers_block_type": ["linear_attention", "hybrid", "hybrid"], "num_attention_heads": 4,
        "n_mamba_heads": 4, "mamba_d_state": 8, "vocab_size": 100, "intermediate_size": 48});
    err_free(&base);
    refused_by_name(
        &base,
        &[
            ("num_mem_blocks", json!(0), "positive integer"),
            ("num_hidden_layers", json!(4), "one layer per entry"),
            ("attention_head_dim", json!(8), "derives 16"),
            ("hybrid_layer_ids", json!([1]), "layers [1, 2]"),
        ],
    );
    // A head width the class derives, restated as another: named beside the head count.
    let mut heads = base.clone();
    heads["mamba_headdim"] = json!(8);
    let e = err_of(&heads);
    assert_eq!(e.field, "n_mamba_heads", "{e}");
    assert!(e.message.contains("with mamba_headdim 8"), "{e}");
    let mut kinds = base.clone();
    kinds["layers_block_type"] = json!(["hybrid", "attention", "mamba"]);
    let e = err_of(&kinds);
    assert_eq!(e.field, "layers_block_type[1]", "{e}");
    assert!(
        e.message.contains("\"linear_attention\" or \"hybrid\""),
        "{e}"
    );
    // Adapters on Q, K and V add 2 × hidden features: only where Q, K and V are that wide.
    let mut gqa = base.clone();
    gqa["num_key_value_heads"] = json!(2);
    err_free(&gqa);
    gqa["use_shared_attention_adapter"] = json!(true);
    let e = err_of(&gqa);
    assert_eq!(e.field, "use_shared_attention_adapter", "{e}");
    assert!(e.message.contains("as many K/V heads as heads"), "{e}");
}

/// Zamba: a block width transformers could not run, heads that do not split the mixer's
/// channels, a layer list that disagrees with the layer count.
#[test]
fn zamba_keys_that_describe_another_model() {
    let base = json!({"model_type": "zamba", "hidden_size": 32, "num_hidden_layers": 5,
        "num_attention_heads": 4, "num_key_value_heads": 4, "n_mamba_heads": 2, "vocab_size": 100,
        "intermediate_size": 48, "mamba_d_state": 8});
    err_free(&base);
    refused_by_name(
        &base,
        &[
            ("attention_hidden_size", json!(32), "2 × hidden_size (64)"),
            (
                "n_mamba_heads",
                json!(3),
                "must divide the mixer's 64 channels",
            ),
            (
                "num_key_value_heads",
                json!(3),
                "must divide num_attention_heads",
            ),
            ("hidden_mamba_act", json!("gelu"), "SiLU"),
            // Bounded before the default layer list is built from it.
            ("num_hidden_layers", json!(200_000_000), "give 1 to 100000"),
        ],
    );
    // Fewer layers than the 3 the class lists before its pattern.
    let mut short = base.clone();
    short["num_hidden_layers"] = json!(2);
    let e = err_of(&short);
    assert_eq!(e.field, "num_hidden_layers", "{e}");
    assert!(e.message.contains("gives 3 layers"), "{e}");
}

/// xLSTM: a storage it does not have, and sizes the heads cannot split.
#[test]
fn xlstm_keys_that_describe_another_model() {
    let base = json!({"model_type": "xlstm", "hidden_size": 128, "num_hidden_layers": 2,
        "num_heads": 4, "vocab_size": 100});
    err_free(&base);
    let mut fused = base.clone();
    fused["weight_mode"] = json!("fused");
    err_free(&fused);
    refused_by_name(
        &base,
        &[
            ("weight_mode", json!("packed"), "\"fused\""),
            ("num_heads", json!(3), "does not divide"),
            ("embedding_dim", json!(64), "while hidden_size is 128"),
            ("gate_soft_cap", json!(0.0), "positive soft cap"),
            // 32 features, 8 a head, but the cache is sized by 64: transformers fails.
            (
                "qk_dim_factor",
                json!(0.25),
                "rounded up to a multiple of 64",
            ),
        ],
    );
}

/// Configs transformers cannot run, found by the mutation test: each is refused, naming the key.
#[test]
fn configs_transformers_cannot_run_are_refused() {
    // Falcon without multi-query or the new architecture splits every head's own K and V, then
    // reshapes them into num_kv_heads heads.
    let falcon = json!({"model_type": "falcon", "hidden_size": 64, "num_attention_heads": 4,
        "num_hidden_layers": 2, "vocab_size": 100, "multi_query": false});
    err_free(&falcon);
    refused_by_name(
        &falcon,
        &[(
            "num_kv_heads",
            json!(71),
            "must equal num_attention_heads (4)",
        )],
    );
    // LFM3 reads rope_parameters[type] for each attention layer type it has.
    let lfm3 = json!({"model_type": "lfm3", "hidden_size": 64, "num_attention_heads": 4,
        "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 64, "vocab_size": 100,
        "num_hidden_layers": 3, "layer_types": ["conv", "full_attention", "sliding_attention"],
        "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}});
    let e = err_of(&lfm3);
    assert_eq!(e.field, "rope_parameters.full_attention", "{e}");
    let mut sliding_only = lfm3.clone();
    sliding_only["layer_types"] = json!(["conv", "sliding_attention", "sliding_attention"]);
    err_free(&sliding_only);
}

/// Gemma 3n: lists of one value per layer, and the AltUp stream the layers compute on.
#[test]
fn gemma3n_keys() {
    let base = json!({"model_type": "gemma3n_text", "hidden_size": 32, "num_hidden_layers": 4,
        "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8, "vocab_size": 100,
        "vocab_size_per_layer_input": 50, "hidden_size_per_layer_input": 4, "laurel_rank": 4,
        "num_kv_shared_layers": 0, "layer_types": ["sliding_attention", "full_attention",
        "sliding_attention", "full_attention"]});
    err_free(&base);
    refused_by_name(
        &base,
        &[
            ("intermediate_size", json!([64, 64]), "one per layer (4)"),
            (
                "activation_sparsity_pattern",
                json!(0.95),
                "must be an array",
            ),
            ("altup_active_idx", json!(4), "one of the 4 AltUp streams"),
            (
                "num_kv_shared_layers",
                json!(15),
                "at least one of the 4 layers",
            ),
            ("final_logit_softcapping", json!(null), "requires a number"),
            (
                "hidden_size",
                json!(33),
                "not a multiple of num_attention_heads",
            ),
        ],
    );
    let mut v = base.clone();
    v["activation_sparsity_pattern"] = json!([0.95, 1.0, 0.0, 0.0]);
    assert_eq!(err_of(&v).field, "activation_sparsity_pattern[1]");
    // The default shares keys and values in the last 15 layers: a 4-layer model cannot.
    let mut v = base.clone();
    v.as_object_mut().unwrap().remove("num_kv_shared_layers");
    assert_eq!(err_of(&v).field, "num_kv_shared_layers");
}

/// A.X-K2: grouped routing fills the skipped groups' scores with 0, which is not read yet.
#[test]
fn axk2_grouped_routing_is_refused() {
    let base = json!({"model_type": "axk2", "hidden_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 100,
        "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 16,
        "q_lora_rank": 16, "kv_lora_rank": 8, "qk_nope_head_dim": 8, "qk_rope_head_dim": 8,
        "v_head_dim": 8, "index_head_dim": 16, "index_n_heads": 2, "pad_token_id": 0,
        "n_group": null, "topk_group": null});
    err_free(&base);
    let mut v = base.clone();
    v["n_group"] = json!(4);
    v["topk_group"] = json!(2);
    let e = err_of(&v);
    assert_eq!(e.field, "n_group", "{e}");
    assert!(e.message.contains("with 0"), "{e}");
}

/// HY v4: what its class overwrites is read as it does; what cannot run is refused.
#[test]
fn hy_v4_keys() {
    let base = json!({"model_type": "hy_v4", "hidden_size": 64, "num_hidden_layers": 3,
        "num_attention_heads": 4, "vocab_size": 100, "n_routed_experts": 4,
        "num_experts_per_tok": 2, "moe_intermediate_size": 16, "q_lora_rank": 16,
        "kv_lora_rank": 8, "qk_nope_head_dim": 8, "qk_rope_head_dim": 8, "v_head_dim": 8,
        "index_head_dim": 16, "index_n_heads": 2, "pad_token_id": 0});
    err_free(&base);
    // The class sets the K/V heads to the query heads whatever the file says.
    let mut kv = base.clone();
    kv["num_key_value_heads"] = json!(1);
    err_free(&kv);
    refused_by_name(
        &base,
        &[
            (
                "indexer_types",
                json!(["shared", "full", "full"]),
                "layer 0 must run its own",
            ),
            ("index_head_dim", json!(4), "less than qk_rope_head_dim"),
            ("q_lora_rank", json!(null), "needs a rank"),
            ("hc_mult", json!(65), "up to 64"),
        ],
    );
}

/// HY v4 VL's language model: M-RoPE's sections must be three over the rotated half of a head
/// (its class's default [12, 10, 10] fits only 64 rotated dims), as its config class checks.
#[test]
fn hy_v4_vl_rope_sections() {
    let text = json!({"model_type": "hy_v4_vl_text", "hidden_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 4, "vocab_size": 100, "n_routed_experts": 4,
        "num_experts_per_tok": 2, "moe_intermediate_size": 16, "q_lora_rank": 16,
        "kv_lora_rank": 8, "qk_nope_head_dim": 8, "qk_rope_head_dim": 8, "v_head_dim": 8,
        "index_head_dim": 16, "index_n_heads": 2, "pad_token_id": 0,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 1, 1]}});
    let wrapped = |text: &serde_json::Value| json!({"model_type": "hy_v4_vl", "text_config": text});
    err_free(&wrapped(&text));
    for bad in [json!([2, 2, 1]), json!([3, 1])] {
        let mut t = text.clone();
        t["rope_parameters"]["mrope_section"] = bad;
        let e = err_of(&wrapped(&t));
        assert_eq!(e.field, "text_config.rope_parameters.mrope_section", "{e}");
    }
    let mut t = text.clone();
    t["rope_parameters"]
        .as_object_mut()
        .unwrap()
        .remove("mrope_section");
    let e = err_of(&wrapped(&t));
    assert!(e.message.contains("[12, 10, 10]"), "{e}");
}

/// dots.3 Note: sizes its class refuses or could not run, for the model's layers and for the
/// sliding layers' own (the `swa_*` keys, or a `per_layer_config`).
#[test]
fn dots3_note_keys_that_describe_another_model() {
    let base = json!({"model_type": "dots3_note_text", "hidden_size": 64, "num_hidden_layers": 4,
        "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 100,
        "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 16,
        "q_lora_rank": 16, "kv_lora_rank": 8, "qk_nope_head_dim": 8, "qk_rope_head_dim": 8,
        "head_dim": 16, "v_head_dim": 8, "index_head_dim": 16, "index_n_heads": 2,
        "swa_num_attention_heads": 2, "swa_num_key_value_heads": 2, "swa_q_lora_rank": 12,
        "swa_kv_lora_rank": 8, "swa_head_dim": 16, "swa_qk_nope_head_dim": 8,
        "swa_qk_rope_head_dim": 8, "swa_v_head_dim": 8, "pad_token_id": 0, "bos_token_id": 1,
        "eos_token_id": 2});
    err_free(&base);
    refused_by_name(
        &base,
        &[
            ("q_lora_rank", json!(null), "needs a"),
            ("num_key_value_heads", json!(2), "must equal"),
            ("qk_rope_head_dim", json!(7), "odd"),
            // int(392 × (8 / 392)) is 7: transformers' frequencies would be another model's.
            ("head_dim", json!(392), "does not model"),
            ("swa_q_lora_rank", json!(null), "needs a query latent"),
            ("swa_head_dim", json!(20), "requires them equal"),
            ("index_head_dim", json!(4), "less than"),
            ("n_shared_experts", json!(0), "at least one shared expert"),
        ],
    );
    // Without its own key the sliding layers' rotary width is what their heads leave.
    let mut v = base.clone();
    v.as_object_mut().unwrap().remove("swa_qk_rope_head_dim");
    v["swa_qk_nope_head_dim"] = json!(16);
    let e = err_of(&v);
    assert_eq!(e.field, "swa_qk_nope_head_dim", "{e}");
    assert!(e.message.contains("must leave some"), "{e}");
    // The sliding layers' sizes per layer: one set for all of them, each layer a real index.
    let mut v = base.clone();
    v["per_layer_config"] = json!({"2": {"num_attention_heads": 2, "num_key_value_heads": 2}});
    let e = err_of(&v);
    assert!(e.field.starts_with("per_layer_config"), "{e}");
    assert!(e.message.contains("must agree"), "{e}");
    v["per_layer_config"] = json!({"2": {"num_attention_heads": 2, "num_key_value_heads": 2},
        "3": {"num_attention_heads": 2, "num_key_value_heads": 2}, "9": {}});
    let e = err_of(&v);
    assert_eq!(e.field, "per_layer_config.9", "{e}");
    // A dict per layer kind needs every kind the layers have.
    let mut v = base.clone();
    v["rope_parameters"] =
        json!({"indexed_attention": {"rope_type": "default", "rope_theta": 1e4}});
    let e = err_of(&v);
    assert_eq!(e.field, "rope_parameters.sliding_attention", "{e}");
}

/// MiniMax-M3: indexer sizes its class would run differently from what anatomy draws, or not
/// at all, and keys of other values than the ones it reads.
#[test]
fn minimax_m3_keys_that_describe_another_model() {
    let base = json!({"model_type": "minimax_m3_vl_text", "hidden_size": 32, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8, "vocab_size": 100,
        "intermediate_size": 16, "num_local_experts": 4, "num_experts_per_tok": 2,
        "index_n_heads": 2, "index_head_dim": 8, "index_block_size": 2, "index_topk_blocks": 2,
        "layer_types": ["full_attention", "minimax_m3_sparse"], "pad_token_id": 0});
    err_free(&base);
    refused_by_name(
        &base,
        &[
            ("index_n_heads", json!(3), "must divide num_attention_heads"),
            ("index_head_dim", json!(4), "fewer than the 8 dims"),
            ("index_local_blocks", json!(3), "room for them"),
            ("swiglu_alpha", json!(1.5), "1.702"),
        ],
    );
    for (key, value, field) in [
        (
            "layer_types",
            json!(["full_attention", "sliding_attention"]),
            "layer_types[1]",
        ),
        (
            "mlp_layer_types",
            json!(["dense", "moe"]),
            "mlp_layer_types[1]",
        ),
    ] {
        let mut v = base.clone();
        v[key] = value;
        assert_eq!(err_of(&v).field, field);
    }
    // The released configs' names for the indexer win over the flat keys, as in the class.
    let mut v = base.clone();
    v["sparse_attention_config"] = json!({"sparse_num_index_heads": 3});
    let e = err_of(&v);
    assert_eq!(e.field, "index_n_heads", "{e}");
}

/// ZAYA: settings its class refuses or could not run.
#[test]
fn zaya_keys_that_describe_another_model() {
    let base = json!({"model_type": "zaya", "hidden_size": 32, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 8, "vocab_size": 100,
        "moe_intermediate_size": 16, "num_experts": 4, "router_hidden_size": 8, "pad_token_id": 0,
        "bos_token_id": 1, "eos_token_id": 2});
    err_free(&base);
    refused_by_name(
        &base,
        &[
            ("num_experts_per_tok", json!(2), "one expert per token"),
            ("head_dim", json!(7), "must be even"),
            ("cca_time0", json!(65), "up to 64 taps"),
        ],
    );
    let mut v = base.clone();
    v["layer_types"] = json!(["hybrid", "hybrid_sliding"]);
    assert_eq!(err_of(&v).field, "sliding_window");
    v["sliding_window"] = json!(4);
    v["layer_types"] = json!(["hybrid", "hybrid_sliding"]);
    v["rope_parameters"] = json!({"hybrid": {"rope_type": "default", "rope_theta": 1e4}});
    assert_eq!(err_of(&v).field, "rope_parameters.hybrid_sliding");
}

/// Beam reads RoPE per layer type: a flat RoPE dict has no entry for its sliding layers, and
/// transformers' model fails on it.
#[test]
fn beam_needs_rope_per_layer_type() {
    let base = json!({"model_type": "beam", "hidden_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 100,
        "num_experts": 8, "n_group": 2, "topk_group": 1, "num_experts_per_tok": 2,
        "moe_intermediate_size": 16, "pad_token_id": 0});
    err_free(&base);
    let mut v = base.clone();
    v["rope_parameters"] = json!({"rope_type": "default", "rope_theta": 10000.0});
    let e = err_of(&v);
    assert_eq!(e.field, "rope_parameters", "{e}");
    assert!(e.message.contains("sliding_attention"), "{e}");
}

/// Mllama's cross-attention layers are listed by index: anything else is named.
#[test]
fn mllama_cross_attention_layers_are_indices() {
    let base = json!({"model_type": "mllama", "text_config": {"hidden_size": 64,
        "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
        "vocab_size": 100, "cross_attention_layers": [1], "pad_token_id": 0}});
    err_free(&base);
    let mut v = base.clone();
    v["text_config"]["cross_attention_layers"] = json!([1, -2]);
    let e = err_of(&v);
    assert_eq!(e.field, "text_config.cross_attention_layers[1]", "{e}");
    assert!(e.message.contains("non-negative"), "{e}");
}

/// HRM-Text's layer counts: per stack in `num_layers_per_stack`, with `num_hidden_layers` its
/// product with the stack visits (transformers' cache slots), or per stack in the latter alone;
/// biases, which its checkpoints have no stored form for, are refused by name.
#[test]
fn hrm_layer_counts_agree_and_biases_are_refused() {
    let base = json!({"model_type": "hrm_text", "hidden_size": 32, "intermediate_size": 48,
        "num_attention_heads": 4, "head_dim": 8, "vocab_size": 100, "H_cycles": 2, "L_cycles": 3});
    let layers = |v: &Value| {
        families::load_json("cfg.json", &v.to_string(), "t", false)
            .unwrap()
            .layers
    };
    let mut v = base.clone();
    v["num_hidden_layers"] = json!(3);
    assert_eq!(layers(&v), 6, "three layers a stack, two stacks");
    v["num_layers_per_stack"] = json!(3);
    v["num_hidden_layers"] = json!(24);
    assert_eq!(
        layers(&v),
        6,
        "as transformers saves it: 3 × 2 × (3 + 1) slots"
    );
    v["num_hidden_layers"] = json!(3);
    let e = err_of(&v);
    assert_eq!(e.field, "num_hidden_layers", "{e}");
    assert!(e.message.contains("24"), "{e}");
    for key in ["attention_bias", "mlp_bias"] {
        let mut v = base.clone();
        v[key] = json!(true);
        assert_eq!(err_of(&v).field, key);
    }
    let mut v = base.clone();
    v["H_cycles"] = json!(100_000);
    let e = err_of(&v);
    assert_eq!(e.field, "H_cycles", "{e}");
}

/// Dory's sections must cover its layers, its released block form must pair every attention
/// with an "mlp" block and count in blocks, and its cache mode is one of two.
#[test]
fn dory_sections_blocks_and_cache_mode() {
    let base = json!({"model_type": "dory", "hidden_size": 32, "num_hidden_layers": 4,
        "n_input_layers": 1, "n_output_layers": 1, "num_attention_heads": 4,
        "num_key_value_heads": 2, "head_dim": 8, "vocab_size": 100, "intermediate_size": 48,
        "pad_token_id": 0});
    err_free(&base);
    refused_by_name(
        &base,
        &[
            (
                "n_recurrent_layers",
                json!(3),
                "must equal num_hidden_layers",
            ),
            ("n_input_layers", json!(4), "more than the 4 layers"),
            (
                "recurrent_kv_cache_mode",
                json!("every_loop"),
                "\"last_loop\"",
            ),
            ("n_recurrent_loops", json!(0), "positive"),
            ("initializer_range", json!(0.0), "non-zero"),
        ],
    );
    let mut v = base.clone();
    v["n_input_layers"] = json!(2);
    v["n_output_layers"] = json!(2);
    assert!(
        err_of(&v).message.contains("at least one layer"),
        "{}",
        err_of(&v).message
    );
    // As released: an "mlp" block after each attention, every count doubled.
    let mut v = base.clone();
    v["layer_types"] = json!(["full_attention", "mlp", "sliding_attention", "mlp"]);
    v["sliding_window"] = json!(4);
    v["num_hidden_layers"] = json!(4);
    v["n_input_layers"] = json!(1);
    assert_eq!(err_of(&v).field, "n_input_layers");
    assert!(err_of(&v).message.contains("even count"));
    v["n_input_layers"] = json!(2);
    v["n_output_layers"] = json!(0);
    err_free(&v);
    v["layer_types"] = json!(["full_attention", "sliding_attention", "mlp", "mlp"]);
    assert_eq!(err_of(&v).field, "layer_types");
}

/// Qwen4-Exp's configs that its class refuses, or that hold what anatomy does not read yet, are
/// refused by the key that says so.
#[test]
fn qwen4_exp_refusals_name_their_key() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../exec/tests/fixtures/qwen4-exp/config.json");
    let base: Value = serde_json::from_str(&std::fs::read_to_string(dir).unwrap()).unwrap();
    let refused = |key: &str, value: Value, says: &str| {
        let mut v = base.clone();
        v[key] = value;
        let e = err_of(&v);
        assert_eq!(e.file, "cfg.json");
        assert!(e.field.starts_with(key), "{e}");
        assert!(e.message.contains(says), "{e}");
    };
    refused("ple_layer_ids", json!([1]), "an attention layer");
    refused("ple_layer_ids", json!([4]), "one-indexed layers, 1 to 3");
    refused("indexer_kv_heads", json!(2), "one key head (1)");
    refused(
        "indexer_budget",
        json!(5),
        "not a multiple of indexer_compress_ratio (2)",
    );
    refused("hc_count", json!(1), "more than one residual stream");
    refused(
        "output_gate_type",
        json!("tanh"),
        "by \"silu\" or \"sigmoid\"",
    );
    refused(
        "layer_types",
        json!(["linear_attention", "sliding_attention", "linear_attention"]),
        "\"indexed_attention\"",
    );
    let ple = |key: &str, value: Value, says: &str| {
        let mut v = base.clone();
        v["ple_layer_ids"] = json!([2]);
        v["eos_token_id"] = json!(1);
        v[key] = value;
        let e = err_of(&v);
        assert!(e.field.starts_with(key), "{e}");
        assert!(e.message.contains(says), "{e}");
    };
    ple("eos_token_id", json!(null), "needs an end-of-sequence id");
    ple("ngram_size", json!(1), "at least 2");
    ple(
        "ple_embed_dim",
        json!(30),
        "not a multiple of the 16 n-gram heads",
    );
    ple(
        "ngram_vocab_size_base",
        json!(1u64 << 50),
        "supports sizes up to",
    );
    // The keys of the n-gram embeddings change nothing without PLE layers.
    let mut v = base.clone();
    v["ple_layer_ids"] = json!([]);
    v["ngram_size"] = json!(4);
    v["split_ngram_parts"] = json!(8);
    let spec = families::load_json("cfg.json", &v.to_string(), "t", false).unwrap();
    assert!(spec.gated_streams().is_some() && spec.attn.qsa.is_some());
}

/// HunYuan's NTK alpha stretches the RoPE base by alpha ** (d / (d − 2)): a negative alpha, or a
/// head of two dims (Python's division by zero), is refused by the field; a zero alpha is no
/// alpha, as the class tests it for truth, and leaves `dynamic` to its factor.
#[test]
fn hunyuan_ntk_alpha() {
    let cfg = |alpha: serde_json::Value, head_dim: u64| {
        json!({"model_type": "hunyuan_v1_dense", "hidden_size": 32, "num_hidden_layers": 1,
            "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": head_dim,
            "intermediate_size": 48, "vocab_size": 97, "max_position_embeddings": 4096,
            "rope_scaling": {"type": "dynamic", "alpha": alpha, "factor": 2.0}})
        .to_string()
    };
    let e = families::load_json("cfg.json", &cfg(json!(-1.0), 8), "t", false).unwrap_err();
    assert_eq!(e.field, "rope_scaling.alpha", "{e}");
    let e = families::load_json("cfg.json", &cfg(json!(1000.0), 2), "t", false).unwrap_err();
    assert_eq!(e.field, "head_dim", "{e}");
    let theta = |json: &str| match families::load_json("cfg.json", json, "t", false)
        .unwrap()
        .position
    {
        anatomy_core::spec::Position::Rope(r) => r.full,
        other => panic!("{other:?}"),
    };
    let stretched = theta(&cfg(json!(1000.0), 8));
    assert_eq!(stretched.theta, 10_000.0 * 1000f64.powf(8.0 / 6.0));
    assert!(matches!(
        stretched.scaling,
        anatomy_core::spec::RopeScaling::None
    ));
    let dynamic = theta(&cfg(json!(0.0), 8));
    assert_eq!(dynamic.theta, 10_000.0);
    assert!(matches!(
        dynamic.scaling,
        anatomy_core::spec::RopeScaling::Dynamic { .. }
    ));
}
