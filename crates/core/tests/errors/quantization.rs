//! `quantization_config`: read, or refused at the field.

use super::*;

/// A quantization_config that names a packing anatomy cannot lay out is refused at the field,
/// saying what is read; one it does not read the packing of is accepted and says so.
#[test]
fn quantization_configs_are_read_or_refused_at_the_field() {
    let cases = [
        (
            json!({"quant_method": "gptq", "bits": 5, "group_size": 128}),
            "quantization_config.bits",
            "[2, 3, 4, 8]",
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
