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

/// The recurrent, hybrid and other families' keys that would describe another model.
mod family_keys;
/// `quantization_config`.
mod quantization;
