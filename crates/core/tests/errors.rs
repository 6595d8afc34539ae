//! Bad configs give errors that name the file and the field and say what is valid.

use anatomy_core::{families, graph, source};
use serde_json::{json, Value};

fn base() -> Value {
    serde_json::from_str(anatomy_core::catalog::get("llama-3.2-1b").unwrap().json).unwrap()
}

fn err_of(v: &Value) -> anatomy_core::Error {
    match families::load_json("cfg.json", &v.to_string(), "t", false)
        .and_then(|s| graph::build(&s).map(|_| ()))
    {
        Ok(()) => panic!("expected an error for {v}"),
        Err(e) => e,
    }
}

fn with(key: &str, value: Value) -> Value {
    let mut v = base();
    v[key] = value;
    v
}

fn without(key: &str) -> Value {
    let mut v = base();
    v.as_object_mut().unwrap().remove(key);
    v
}

/// An unknown model type is refused with the closest one anatomy reads, where one is close,
/// and where to find them all; a decoder not read yet says what it holds.
#[test]
fn unknown_model_type_names_the_closest_and_the_list() {
    let e = err_of(&with("model_type", json!("mamba9")));
    assert_eq!(e.file, "cfg.json");
    assert_eq!(e.field, "model_type");
    assert!(
        e.message
            .contains("`mamba9` is not supported; did you mean `mamba2`?"),
        "{e}"
    );
    let n = anatomy_core::families::model_types().len();
    assert!(
        e.message.contains(&format!(
            "anatomy reads {n} model types (`anatomy list --model-types`"
        )),
        "{e}"
    );
    let e = err_of(&with("model_type", json!("no_such_model")));
    assert!(!e.message.contains("did you mean"), "{e}");
    // Not a wall of every supported type.
    assert!(e.message.len() < 300, "{e}");
    // A wrapper whose language model is read points to it.
    let e = err_of(&with("model_type", json!("apertus1p5")));
    assert!(
        e.message
            .contains("but its language model `apertus1p5_text` is: give its `text_config`"),
        "{e}"
    );
}

#[test]
fn missing_model_type() {
    let e = err_of(&without("model_type"));
    assert_eq!(e.field, "model_type");
    assert!(e.message.contains("is missing"), "{e}");
}

#[test]
fn zero_negative_and_non_integer_sizes() {
    for (value, says) in [
        (json!(0), "is 0; it must be a positive integer"),
        (json!(-8), "is negative (-8)"),
        (json!(2048.5), "is 2048.5, not an integer"),
        (json!("2048"), "is a string"),
        (json!(true), "is a boolean"),
    ] {
        let e = err_of(&with("hidden_size", value.clone()));
        assert_eq!(e.field, "hidden_size", "{value}");
        assert!(e.message.contains(says), "{value}: {e}");
    }
}

#[test]
fn missing_size_takes_the_class_default() {
    // LlamaConfig's default intermediate_size is 11008.
    let spec = families::load_json(
        "cfg.json",
        &without("intermediate_size").to_string(),
        "t",
        false,
    )
    .unwrap();
    assert_eq!(spec.mlp.intermediate, 11008);
}

#[test]
fn heads_not_a_multiple_of_kv_heads() {
    let e = err_of(&with("num_key_value_heads", json!(5)));
    assert_eq!(e.field, "num_key_value_heads");
    assert!(
        e.message
            .contains("does not divide num_attention_heads (32)"),
        "{e}"
    );
}

#[test]
fn hidden_not_divisible_by_heads_without_head_dim() {
    let mut v = with("hidden_size", json!(2050));
    v.as_object_mut().unwrap().remove("head_dim");
    let e = err_of(&v);
    assert_eq!(e.field, "hidden_size");
    assert!(
        e.message
            .contains("not divisible by num_attention_heads (32)"),
        "{e}"
    );
}

#[test]
fn counts_that_overflow_u64() {
    // Each size is plausible alone; together they overflow.
    let mut v = with("hidden_size", json!(1u64 << 27));
    v["intermediate_size"] = json!(1u64 << 27);
    v["num_hidden_layers"] = json!(100_000);
    v.as_object_mut().unwrap().remove("head_dim");
    let e = err_of(&v);
    assert!(e.message.contains("overflows 64 bits"), "{e}");
    let e = err_of(&with("num_hidden_layers", json!(10_000_000u64)));
    assert_eq!(e.field, "num_hidden_layers");
    assert!(e.message.contains("at most 100000"), "{e}");
    let e = err_of(&with("vocab_size", json!(u64::MAX / 2)));
    assert_eq!(e.field, "vocab_size");
    assert!(e.message.contains("supports sizes up to 268435456"), "{e}");
}

#[test]
fn odd_rotary_dimension() {
    let e = err_of(&with("head_dim", json!(63)));
    assert_eq!(e.field, "head_dim");
    assert!(
        e.message
            .contains("head_dim 63 and a rotary dimension of 63, which is odd"),
        "{e}"
    );
}

#[test]
fn invalid_json_gives_line_and_column() {
    let e = families::load_json(
        "cfg.json",
        "{\n  \"model_type\": \"llama\",\n  \"hidden_size\": 12,,\n}",
        "t",
        false,
    )
    .unwrap_err();
    assert_eq!(e.file, "cfg.json");
    assert!(e.message.contains("invalid JSON at line 3, column"), "{e}");
    let e = families::load_json("cfg.json", "[1, 2]", "t", false).unwrap_err();
    assert!(e.message.contains("expected a JSON object"), "{e}");
}

#[test]
fn unknown_rope_type() {
    let mut v = base();
    v["rope_scaling"]["rope_type"] = json!("spiral");
    let e = err_of(&v);
    assert_eq!(e.field, "rope_scaling.rope_type");
    assert!(
        e.message
            .contains("valid: default, linear, dynamic, llama3, yarn"),
        "{e}"
    );
}

#[test]
fn missing_file_and_near_miss_names() {
    let e = source::load("/no/such/dir/config.json", false)
        .err()
        .unwrap();
    assert!(e.message.contains("no such file"), "{e}");
    let e = source::load("llama-3.2-3", false).err().unwrap();
    assert!(e.message.contains("did you mean `llama-3.2-3b`?"), "{e}");
    let e = source::load("qwen3-0.6", false).err().unwrap();
    assert!(e.message.contains("`qwen3-0.6b`"), "{e}");
}

/// An absent RoPE base or norm epsilon takes the family's config-class default (values read from
/// transformers 5.24's configuration classes).
#[test]
fn rope_base_and_eps_defaults_per_family() {
    for (model_type, theta, eps) in [
        ("llama", 10_000.0, 1e-6),
        ("mistral", 10_000.0, 1e-6),
        ("mixtral", 1_000_000.0, 1e-5),
        ("qwen3_moe", 10_000.0, 1e-6),
        ("smollm3", 2_000_000.0, 1e-6),
        ("phi3", 10_000.0, 1e-5),
        ("olmo2", 10_000.0, 1e-5),
        ("gpt_oss", 150_000.0, 1e-5),
        ("llama4_text", 500_000.0, 1e-5),
        ("gemma3_text", 1_000_000.0, 1e-6),
        ("deepseek_v3", 10_000.0, 1e-6),
        ("glm4_moe", 10_000.0, 1e-5),
    ] {
        // GLM-4.5's default 96 heads do not divide its default hidden size: give head_dim.
        let config = json!({ "model_type": model_type, "head_dim": 128 });
        let spec = families::load_json("c.json", &config.to_string(), "t", false).unwrap();
        let anatomy_core::spec::Position::Rope(r) = &spec.position else {
            panic!("{model_type}")
        };
        assert_eq!((r.full.theta, spec.norm.eps), (theta, eps), "{model_type}");
    }
}

#[test]
fn both_rope_formats_load() {
    // Classic: rope_theta + rope_scaling; transformers 5: rope_parameters.
    let classic = families::load_json("a.json", &base().to_string(), "t", false).unwrap();
    let mut v5 = base();
    let obj = v5.as_object_mut().unwrap();
    let mut params = obj.remove("rope_scaling").unwrap();
    params["rope_theta"] = obj.remove("rope_theta").unwrap();
    obj.insert("rope_parameters".into(), params);
    let modern = families::load_json("b.json", &v5.to_string(), "t", false).unwrap();
    assert_eq!(classic.position, modern.position);
    let anatomy_core::spec::Position::Rope(r) = &modern.position else {
        panic!()
    };
    assert_eq!(r.full.theta, 500000.0);
    assert_eq!(
        r.full.scaling,
        anatomy_core::spec::RopeScaling::Llama3 {
            factor: 32.0,
            low_freq_factor: 1.0,
            high_freq_factor: 4.0,
            original: 8192
        }
    );
}

fn load(v: &Value, lenient: bool) -> anatomy_core::Result<anatomy_core::spec::Spec> {
    families::load_json("cfg.json", &v.to_string(), "t", lenient)
}

#[test]
fn unknown_activation_is_refused() {
    let e = err_of(&with("hidden_act", json!("frobnicate")));
    assert_eq!(e.field, "hidden_act");
    assert!(
        e.message.contains("`frobnicate` is not an activation"),
        "{e}"
    );
    assert!(e.message.contains("gelu_pytorch_tanh"), "{e}");
}

#[test]
fn unknown_rope_kind_is_refused() {
    let mut v = base();
    v["rope_scaling"] = json!({"rope_type": "proportional-ish", "factor": 2.0});
    let e = err_of(&v);
    assert_eq!(e.field, "rope_scaling.rope_type");
    assert!(
        e.message.contains("not a RoPE type anatomy computes"),
        "{e}"
    );
    assert!(e.message.contains("longrope"), "{e}");
}

#[test]
fn unknown_keys_are_refused_or_listed_under_lenient() {
    // Keys transformers reads for a Llama that anatomy does not implement: at the top level
    // (the mask utilities read `attention_chunk_size` for every model), inside rope_scaling, of
    // any JSON type.
    for (v, key) in [
        (
            with("attention_chunk_size", json!(64)),
            "attention_chunk_size",
        ),
        (
            {
                let mut v = base();
                v["rope_scaling"]["mrope_section"] = json!([16, 24, 24]);
                v
            },
            "rope_scaling.mrope_section",
        ),
    ] {
        let e = err_of(&v);
        assert_eq!(e.field, key);
        assert!(e.message.contains("--lenient"), "{e}");
        assert!(e.message.contains("transformers reads this key"), "{e}");
        let spec = load(&v, true).unwrap();
        assert_eq!(spec.ignored.len(), 1, "{:?}", spec.ignored);
        assert_eq!(spec.ignored[0].key, key);
    }
}

/// A key that neither Llama's config class nor its modeling code reads cannot change the model:
/// accepted with the same numbers, and listed. Gemma's legacy `hidden_activation` is such a key
/// in a Llama config.
#[test]
fn keys_transformers_never_reads_are_accepted_and_listed() {
    let plain = graph::build(&load(&base(), false).unwrap()).unwrap();
    let count = |g: &graph::Graph| anatomy_core::stats::stats(g, None).unwrap().total_params;
    for (key, value) in [
        ("frobnicate", json!(true)),
        ("attention_gate", json!({"kind": "sigmoid"})),
        ("hidden_activation", json!("gelu")),
        ("attention_method", json!("MLA")),
    ] {
        let spec = load(&with(key, value.clone()), false).unwrap();
        assert!(spec.ignored.is_empty());
        assert_eq!(spec.not_read.len(), 1, "{:?}", spec.not_read);
        assert_eq!(spec.not_read[0].key, key);
        assert_eq!(spec.not_read[0].value, value.to_string());
        assert_eq!(count(&graph::build(&spec).unwrap()), count(&plain), "{key}");
    }
}

#[test]
fn booleans_in_rope_dicts_are_honoured() {
    let yarn = |truncate: Option<bool>| {
        let mut v = base();
        v["rope_scaling"] =
            json!({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192});
        if let Some(t) = truncate {
            v["rope_scaling"]["truncate"] = json!(t);
        }
        let anatomy_core::spec::Position::Rope(r) = load(&v, false).unwrap().position else {
            panic!()
        };
        r.full.scaling
    };
    let t = |s: anatomy_core::spec::RopeScaling| match s {
        anatomy_core::spec::RopeScaling::Yarn { truncate, .. } => truncate,
        other => panic!("{other:?}"),
    };
    assert!(t(yarn(None)));
    assert!(!t(yarn(Some(false))));
    let mut v = base();
    v["rope_scaling"] = json!({"rope_type": "yarn", "factor": 4.0, "truncate": "no"});
    assert_eq!(err_of(&v).field, "rope_scaling.truncate");
}

#[test]
fn degenerate_values_are_refused() {
    let mut zero_factor = base();
    zero_factor["rope_scaling"]["factor"] = json!(0.0);
    assert_eq!(err_of(&zero_factor).field, "rope_scaling.factor");
    let e = err_of(&with("rms_norm_eps", json!(-1e-5)));
    assert_eq!(e.field, "rms_norm_eps");
    assert!(e.message.contains("must not be negative"), "{e}");
    let e = err_of(&with("rope_theta", json!(0)));
    assert_eq!(e.field, "rope_theta");
    // Mixtral with no experts but a top-k cannot route; it is not drawn as a dense model.
    let mut mixtral: Value = serde_json::from_str(
        anatomy_core::catalog::get("mixtral-8x7b-v0.1")
            .unwrap()
            .json,
    )
    .unwrap();
    mixtral["num_local_experts"] = json!(0);
    let e = err_of(&mixtral);
    assert_eq!(e.field, "num_local_experts");
    // LongRoPE needs one factor per rotated pair of dims.
    let mut phi: Value =
        serde_json::from_str(anatomy_core::catalog::get("phi-3-mini-4k").unwrap().json).unwrap();
    phi["rope_scaling"] =
        json!({"rope_type": "longrope", "short_factor": [1.0, 1.0], "long_factor": [2.0, 2.0]});
    let e = err_of(&phi);
    assert!(e.message.contains("one per rotated pair"), "{e}");
}

#[test]
fn every_catalog_config_loads_without_lenient() {
    for e in anatomy_core::catalog::ENTRIES {
        let spec = source::load(e.name, false).unwrap_or_else(|err| panic!("{err}"));
        assert!(spec.spec.ignored.is_empty(), "{}", e.name);
    }
}

/// A config class's `attribute_map` names: read as the attribute they set, winning over it as in
/// transformers, and named in errors as the file spells them.
#[test]
fn renamed_keys_are_read_and_named_as_written() {
    let load = |v: Value| families::load_json("cfg.json", &v.to_string(), "t", false);
    let spec =
        load(json!({"model_type": "exaone", "num_layers": 3, "num_hidden_layers": 5})).unwrap();
    assert_eq!(spec.layers, 3);
    let e = load(json!({"model_type": "exaone", "num_layers": "many"})).unwrap_err();
    assert_eq!(e.field, "num_layers", "{e}");
    // InternLM3's attention and MLP biases must agree (`qkv_bias` and `bias` in its configs).
    let spec = load(json!({"model_type": "internlm3", "qkv_bias": true, "bias": true})).unwrap();
    assert!(spec.attn.qkv_bias && spec.mlp.bias);
    let e = load(json!({"model_type": "internlm3", "qkv_bias": true})).unwrap_err();
    assert_eq!(e.field, "mlp_bias", "{e}");
    // Ministral's class has no head size of its own.
    let e = load(json!({"model_type": "ministral"})).unwrap_err();
    assert_eq!(e.field, "head_dim", "{e}");
}

/// MiMo-V2-Flash's published config restates the model in its first code's names, which
/// transformers ignores: each must agree with what transformers builds, or the config is refused.
#[test]
fn restating_keys_that_disagree_are_refused() {
    let mimo: Value =
        serde_json::from_str(anatomy_core::catalog::get("mimo-v2-flash").unwrap().json).unwrap();
    assert!(families::load_json("cfg.json", &mimo.to_string(), "t", false).is_ok());
    let mut pattern = mimo["hybrid_layer_pattern"].clone();
    pattern[3] = json!(0);
    for (key, value, says) in [
        ("swa_num_key_value_heads", json!(16), "builds 8"),
        ("swa_rope_theta", json!(20000), "builds 10000"),
        ("hybrid_layer_pattern", pattern, "builds [0, 1, 1, 1, 1, 0"),
        ("add_full_attention_sink_bias", json!(true), "builds false"),
        ("scoring_func", json!("softmax"), "builds \"sigmoid\""),
    ] {
        let mut v = mimo.clone();
        v[key] = value;
        let e = err_of(&v);
        assert_eq!(e.field, key);
        assert!(e.message.contains("transformers ignores this key"), "{e}");
        assert!(e.message.contains(says), "{key}: {e}");
    }
}

/// transformers 5.24 rotates DBRX by `rope_parameters` and ignores `attn_config.rope_theta`, the
/// base DBRX's published config states: such a config is refused, saying how to give the base.
#[test]
fn dbrx_base_where_transformers_does_not_read_it_is_refused() {
    let config = json!({
        "model_type": "dbrx", "d_model": 64, "n_heads": 4, "n_layers": 2,
        "attn_config": {"kv_n_heads": 2, "clip_qkv": 8, "rope_theta": 500000},
        "ffn_config": {"ffn_hidden_size": 32, "moe_num_experts": 4, "moe_top_k": 2},
    });
    let e = err_of(&config);
    assert_eq!(e.field, "attn_config.rope_theta");
    assert!(e.message.contains("rope_parameters"), "{e}");
    let mut given = config.clone();
    given["rope_parameters"] = json!({"rope_type": "default", "rope_theta": 500000});
    assert!(families::load_json("cfg.json", &given.to_string(), "t", false).is_ok());
}

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

/// A quantization_config that names a packing anatomy cannot lay out is refused at the field,
/// saying what is read; one it does not read the packing of is accepted and says so.
#[test]
fn quantization_configs_are_read_or_refused_at_the_field() {
    let cases = [
        (
            json!({"quant_method": "gptq", "bits": 5, "group_size": 128}),
            "quantization_config.bits",
            "[2, 4, 8]",
        ),
        (
            json!({"quant_method": "gptq", "bits": 4, "checkpoint_format": "marlin"}),
            "quantization_config.checkpoint_format",
            "gptq_v2",
        ),
        (
            json!({"quant_method": "awq", "bits": 4, "version": "gemv_fast"}),
            "quantization_config.version",
            "`gemm` and `gemv`",
        ),
        (
            json!({"quant_method": "awq", "bits": 4, "version": "gemv", "group_size": 16}),
            "quantization_config.group_size",
            "32, 64 or 128 and up",
        ),
        (
            json!({"quant_method": "fp8", "fmt": "e5m2"}),
            "quantization_config.fmt",
            "e4m3",
        ),
        (
            json!({"quant_method": "fp8", "weight_block_size": [128]}),
            "quantization_config.weight_block_size",
            "two positive sizes",
        ),
        (
            json!({"quant_method": "compressed-tensors", "format": "pack-quantized"}),
            "quantization_config.config_groups",
            "is missing",
        ),
        (
            json!({"bits": 4}),
            "quantization_config.quant_method",
            "is missing",
        ),
        (
            json!({"quant_method": "bitsandbytes", "load_in_4bit": false}),
            "quantization_config.load_in_4bit",
            "one says how the weights are stored",
        ),
        (
            json!({"quant_method": "bitsandbytes", "load_in_4bit": true, "load_in_8bit": true}),
            "quantization_config.load_in_8bit",
            "both true",
        ),
        (
            json!({"quant_method": "bitsandbytes", "load_in_4bit": true, "bnb_4bit_quant_type": "int4"}),
            "quantization_config.bnb_4bit_quant_type",
            "`nf4` and `fp4`",
        ),
        (
            json!({"quant_method": "bitsandbytes", "load_in_4bit": true, "bnb_4bit_quant_storage": "bfloat16"}),
            "quantization_config.bnb_4bit_quant_storage",
            "uint8",
        ),
    ];
    for (q, field, says) in cases {
        let e = err_of(&with("quantization_config", q.clone())).to_string();
        assert!(
            e.contains("cfg.json") && e.contains(field) && e.contains(says),
            "{q}: {e}"
        );
    }
    // MLX's per-layer entries: its own bits and group, true or false.
    let mlx = [
        (
            json!({"group_size": 64, "bits": 4, "model.layers.0.mlp.gate": "8"}),
            "quantization.model.layers.0.mlp.gate",
            "true or false",
        ),
        (
            json!({"group_size": 64, "bits": 4, "model.layers.0.mlp.gate": {"bits": 7}}),
            "quantization.model.layers.0.mlp.gate.bits",
            "[2, 3, 4, 5, 6, 8]",
        ),
        (
            json!({"group_size": 64, "bits": 4, "model.layers.0.mlp.gate": {"mode": "mxfp4"}}),
            "quantization.model.layers.0.mlp.gate.mode",
            "`affine`",
        ),
    ];
    for (q, field, says) in mlx {
        let e = err_of(&with("quantization", q.clone())).to_string();
        assert!(
            e.contains("cfg.json") && e.contains(field) && e.contains(says),
            "{q}: {e}"
        );
    }
    let spec = families::load_json(
        "cfg.json",
        &with(
            "quantization_config",
            json!({"quant_method": "hqq", "nbits": 4}),
        )
        .to_string(),
        "t",
        false,
    )
    .unwrap();
    let q = spec.quant.unwrap().quant;
    assert!(!q.packs() && q.describe().contains("hqq"), "{q:?}");
    // mlx-lm's copy of `quantization` in `quantization_config`, without a quant_method, is MLX's.
    let mlx = json!({"group_size": 64, "bits": 4, "model.layers.0.mlp.gate_proj": false});
    let mut v = with("quantization", mlx.clone());
    v["quantization_config"] = mlx;
    let spec = families::load_json("cfg.json", &v.to_string(), "t", false).unwrap();
    let q = spec.quant.unwrap().quant;
    assert_eq!(q.mlx_layer("model.layers.0.mlp.gate_proj"), None, "{q:?}");
    assert_eq!(q.mlx_layer("model.layers.0.mlp.up_proj"), Some((4, 64)));
}
