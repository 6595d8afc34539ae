use super::*;

/// No format stores a float tensor (a scale, whose dtype is the checkpoint's or 16-bit)
/// under `weight`: the loader keeps a 16-bit `.weight` of a quantized checkpoint as an
/// unpacked matrix by that.
#[test]
fn no_format_stores_a_float_part_as_weight() {
    let g = |zeros| Groups {
        bits: 4,
        group: Some(32),
        zeros,
    };
    let formats = [
        (
            Quant::Gptq {
                groups: g(true),
                v1: true,
                dynamic: vec![],
                auto_round: false,
            },
            vec![Packing::PackedInt {
                groups: g(true),
                g_idx: true,
            }],
        ),
        (
            Quant::Awq {
                groups: g(true),
                gemv: false,
                skip: vec![],
            },
            vec![Packing::PackedInt {
                groups: g(true),
                g_idx: false,
            }],
        ),
        (
            Quant::Mlx {
                bits: 4,
                group: 32,
                layers: Vec::new(),
                switch: true,
            },
            vec![Packing::PackedInt {
                groups: g(false),
                g_idx: false,
            }],
        ),
        (
            Quant::Compressed {
                schemes: vec![],
                ignore: vec![],
            },
            vec![
                Packing::PackedInt {
                    groups: g(true),
                    g_idx: true,
                },
                Packing::Int8 { groups: g(false) },
                Packing::Fp8 {
                    scale: Fp8Scale::Block(32, 32),
                    input_scale: true,
                },
                Packing::Nvfp4 { input_scale: true },
            ],
        ),
        (
            Quant::Bnb(Bnb {
                kind: BnbKind::Nf4,
                double: true,
                skip: vec![],
            }),
            vec![
                Packing::Bnb4 {
                    fp4: false,
                    double: true,
                },
                Packing::Bnb8,
            ],
        ),
    ];
    for (q, packings) in formats {
        for p in packings {
            for part in q.parts(p, 64, 64) {
                let float = matches!(
                    part.dtype,
                    None | Some(Dtype::F16 | Dtype::BF16 | Dtype::F32)
                );
                assert!(!(float && part.suffix == "weight"), "{q:?} {p:?}: {part:?}");
            }
        }
    }
}

/// As transformers' `should_convert_module` decides (its own examples among them).
/// GPTQModel's `dynamic`: the first pattern matching a module (from its start) decides: a
/// `-:` pattern leaves it unquantized, another gives its own bits and group size.
#[test]
fn gptq_dynamic_patterns_choose_each_modules_packing() {
    let v = serde_json::json!({"quantization_config": {
        "quant_method": "gptq", "bits": 4, "group_size": 128,
        "dynamic": {
            "-:.*mlp\\.gate$": {},
            r"+:model\.layers\.0\..*": {"bits": 8, "group_size": 32},
            "model.layers.1.self_attn.q_proj": {"bits": 2}}}});
    let q = Quant::read(&Config::new("c.json", &v).unwrap())
        .unwrap()
        .unwrap();
    let groups = |m: &str| {
        q.packing(m, 4096, 4096, false).map(|p| match p {
            Packing::PackedInt { groups, .. } => (groups.bits, groups.group),
            other => panic!("{m}: {other:?}, not GPTQ's packing"),
        })
    };
    assert_eq!(groups("model.layers.0.mlp.gate"), None);
    assert_eq!(groups("model.layers.0.mlp.up_proj"), Some((8, Some(32))));
    assert_eq!(
        groups("model.layers.1.self_attn.q_proj"),
        Some((2, Some(128)))
    );
    assert_eq!(
        groups("model.layers.1.self_attn.k_proj"),
        Some((4, Some(128)))
    );
    let bad = serde_json::json!({"quantization_config": {
        "quant_method": "gptq", "bits": 4, "dynamic": {"model.layers.0": {"bits": 5}}}});
    let e = Quant::read(&Config::new("c.json", &bad).unwrap()).unwrap_err();
    assert!(e.to_string().contains("dynamic.model.layers.0.bits"), "{e}");
}

/// AutoRound's config as auto-round 0.16 writes it: `auto_round:auto_gptq` is GPTQ's
/// layout without `g_idx`; `extra_config` names a module by name (its dots literal: layer
/// 1's entry is not layer 11's), 16 bits leaving it unquantized; nothing outside
/// `block_name_to_quantize`'s blocks is packed; `auto_round:auto_awq` is AWQ's GEMM layout;
/// other packings and data types are refused by name.
#[test]
fn auto_round_reads_as_gptq_or_awq() {
    let read = |q: serde_json::Value| {
        let v = serde_json::json!({ "quantization_config": q });
        Quant::read(&Config::new("c.json", &v).unwrap()).map(Option::unwrap)
    };
    let q = read(serde_json::json!({
        "quant_method": "auto-round", "packing_format": "auto_round:auto_gptq", "bits": 4,
        "group_size": 128, "sym": true, "data_type": "int",
        "block_name_to_quantize": "model.layers",
        "extra_config": {"model.layers.1.mlp.down_proj": {"bits": 8, "group_size": 32},
                         "model.layers.2.self_attn.q_proj": {"bits": 16}}}))
    .unwrap();
    let packing = |m: &str| q.packing(m, 4096, 4096, false);
    assert_eq!(
        packing("model.layers.0.mlp.up_proj"),
        Some(Packing::PackedInt {
            groups: Groups {
                bits: 4,
                group: Some(128),
                zeros: true
            },
            g_idx: false
        })
    );
    let bits = |m: &str| {
        packing(m).map(|p| match p {
            Packing::PackedInt { groups, .. } => (groups.bits, groups.group),
            other => panic!("{m}: {other:?}, not GPTQ's packing"),
        })
    };
    assert_eq!(bits("model.layers.1.mlp.down_proj"), Some((8, Some(32))));
    assert_eq!(bits("model.layers.11.mlp.down_proj"), Some((4, Some(128))));
    assert_eq!(bits("model.layers.2.self_attn.q_proj"), None);
    assert_eq!(bits("model.visual.blocks.0.attn.qkv"), None);
    let parts = q.parts(packing("model.layers.0.mlp.up_proj").unwrap(), 64, 64);
    assert!(parts.iter().all(|p| p.suffix != "g_idx"), "{parts:?}");
    assert!(q.describe().starts_with("AutoRound"), "{}", q.describe());
    let awq = read(serde_json::json!({
        "quant_method": "auto-round", "packing_format": "auto_round:auto_awq", "bits": 4,
        "group_size": 32, "sym": false}))
    .unwrap();
    assert!(matches!(awq, Quant::Awq { gemv: false, .. }), "{awq:?}");
    for (key, value, says) in [
        (
            "packing_format",
            "auto_round:marlin",
            "auto_round:auto_gptq",
        ),
        ("data_type", "nv_fp", "integer"),
    ] {
        let mut q = serde_json::json!({"quant_method": "auto-round", "bits": 4, "group_size": 32});
        q[key] = value.into();
        let e = read(q).unwrap_err().to_string();
        assert!(e.contains(key) && e.contains(says), "{e}");
    }
}

/// AWQ's `modules_to_not_convert` (AutoAWQ writes `["gate"]` for Mixtral's routers) leaves
/// those modules unpacked, matched as transformers matches them.
#[test]
fn awq_leaves_the_modules_it_names_unconverted() {
    let v = serde_json::json!({"quantization_config": {
        "quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemm",
        "modules_to_not_convert": ["gate"]}});
    let q = Quant::read(&Config::new("c.json", &v).unwrap())
        .unwrap()
        .unwrap();
    let packs = |m: &str| q.packing(m, 4096, 4096, false).is_some();
    assert!(!packs("model.layers.0.block_sparse_moe.gate"));
    assert!(packs("model.layers.0.block_sparse_moe.experts.0.w1"));
    assert!(packs("model.layers.0.mlp.gate_proj"));
}

#[test]
fn skipped_modules_are_transformers_own() {
    for (pattern, module, skipped) in [
        ("lm_head", "lm_head", true),
        ("fc1", "model.decoder.layers.23.fc1", true),
        ("layers.1", "layers.1.attn", true),
        ("layers.1", "layers.11.attn", false),
        ("layer.*", "layer.11.attn", true),
        ("mlp.gate", "model.layers.0.mlp.gate_proj", false),
        ("model.layers.2.mlp", "model.layers.2.mlp.down_proj", true),
        ("model.layers.2.mlp", "model.layers.21.mlp.down_proj", false),
        ("model.layers.", "model.layers.3.self_attn.q_proj", true),
        ("vision_tower", "model.layers.0.self_attn.q_proj", false),
    ] {
        assert_eq!(super::skips(pattern, module), skipped, "{pattern} {module}");
    }
}
