//! Which of a model's checkpoint layouts a safetensors header holds. One config is saved more
//! than one way: a multimodal family with its towers under its wrapper's prefix
//! (`model.language_model.*`, `language_model.model.*`), or text-only from its causal-LM class
//! (`model.*`, the head at `lm_head`), and a text config beside weights still named for the
//! wrapper. The header says which: the layout whose every tensor name it holds is read.

use crate::Stored;
use anatomy_core::manifest::{self, Naming};
use anatomy_core::quant::Quant;
use anatomy_core::spec::{HfWrap, Spec};
use std::collections::HashSet;

/// Does `stored` hold every checkpoint tensor of `spec`'s graph, by name?
fn holds(spec: &Spec, names: &HashSet<&str>) -> bool {
    // The language model's names decide: a wrapper's towers move with transformers' versions.
    let spec = &Spec {
        towers: Vec::new(),
        ..spec.clone()
    };
    let Ok(g) = anatomy_core::graph::build(spec) else {
        return false;
    };
    manifest::manifest(&g, Naming::Hf)
        .is_ok_and(|m| !m.is_empty() && m.iter().all(|e| names.contains(e.name.as_str())))
}

/// `spec` in the layout `stored` is saved in: its own when the header holds it, else the first
/// of the others (text-only, the language model nested under `model.`, or under a module's
/// prefix) whose every name the header holds; its own when none does (verify then reports what
/// is missing). BLT's stacks have one layout.
pub fn fit(spec: &mut Spec, stored: &[Stored]) {
    let names: HashSet<&str> = stored.iter().map(|t| t.name.as_str()).collect();
    fit_language_model(spec, &names);
    fit_mlx_experts(spec, &names);
    fit_unquantized(spec, &names);
    fit_towers(spec, &names);
}

/// A checkpoint whose config declares a quantization but whose header holds the unquantized
/// model's tensors (saved from a model built from that config, or dequantized with the config
/// left as it was) is read as stored: unquantized.
fn fit_unquantized(spec: &mut Spec, names: &HashSet<&str>) {
    if spec.quant.is_none() || holds(spec, names) {
        return;
    }
    let plain = Spec {
        quant: None,
        ..spec.clone()
    };
    if holds(&plain, names) {
        *spec = plain;
    }
}

/// An MLX checkpoint whose experts are saved one each (early conversions), not stacked as
/// mlx-lm's `switch_mlp`, is read so.
fn fit_mlx_experts(spec: &mut Spec, names: &HashSet<&str>) {
    let quant = spec.quant.as_ref().map(|d| &d.quant);
    if !matches!(quant, Some(Quant::Mlx { switch: true, .. })) || holds(spec, names) {
        return;
    }
    let mut other = spec.clone();
    if let Some(Quant::Mlx { switch, .. }) = other.quant.as_mut().map(|d| &mut d.quant) {
        *switch = false;
    }
    if holds(&other, names) {
        *spec = other;
    }
}

/// A tower saved with its vision model's own nesting (`vision_tower.vision_model.*`, as the
/// published LLaVA and Gemma 3 checkpoints hold it; transformers 5 drops the `vision_model.`
/// on load and on save) is read there: its prefix, and the image encoder's, gain it.
fn fit_towers(spec: &mut Spec, names: &HashSet<&str>) {
    const NESTED: &str = "vision_model.";
    for tower in &mut spec.towers {
        let saved: Vec<String> = tower.tensors().map(|(name, _)| name).collect();
        if saved.is_empty() || saved.iter().any(|n| names.contains(n.as_str())) {
            continue;
        }
        let nested = format!("{}{NESTED}", tower.prefix);
        let all = saved.iter().all(|name| {
            let rest = &name[tower.prefix.len()..];
            names.contains(format!("{nested}{rest}").as_str())
        });
        if !all {
            continue;
        }
        if let Some(image) = &mut spec.image {
            let vision = image.encoder.tower_mut();
            if vision.prefix == tower.prefix {
                vision.prefix = nested.clone();
            }
        }
        tower.prefix = nested;
    }
}

fn fit_language_model(spec: &mut Spec, names: &HashSet<&str>) {
    if matches!(spec.hf_wrap, HfWrap::Module { .. }) {
        return;
    }
    if holds(spec, names) {
        return;
    }
    let mut others = vec![
        HfWrap::None,
        HfWrap::Nested,
        HfWrap::Prefix("language_model"),
    ];
    if let HfWrap::Prefix(module) = spec.hf_wrap {
        others.push(HfWrap::Prefix(module));
    }
    for wrap in others.into_iter().filter(|w| *w != spec.hf_wrap) {
        let mut other = spec.clone();
        other.hf_wrap = wrap;
        // Saved text-only, from its causal-LM class: no towers.
        if wrap == HfWrap::None {
            other.towers.clear();
        }
        if holds(&other, names) {
            *spec = other;
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tensors a checkpoint of `spec` holds, by name and shape.
    fn saved_as(spec: &Spec) -> Vec<Stored> {
        let g = anatomy_core::graph::build(spec).unwrap();
        let entries = manifest::manifest(&g, Naming::Hf).unwrap().into_iter();
        let stored = |e: manifest::Entry| Stored {
            name: e.name,
            shape: e.shape,
            dtype: String::new(),
        };
        entries.map(stored).collect()
    }

    /// A header holding the unquantized model's tensors under a config that declares GPTQ is
    /// read unquantized; one holding GPTQ's packed tensors, as GPTQ.
    #[test]
    fn a_quantized_config_over_unquantized_tensors_reads_unquantized() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../exec/tests/fixtures/quant/gptq/config.json");
        let text = std::fs::read_to_string(dir).unwrap();
        let spec = anatomy_core::families::load_json("config.json", &text, "t", false).unwrap();
        for quantized in [true, false] {
            let mut saved = spec.clone();
            if !quantized {
                saved.quant = None;
            }
            let stored = saved_as(&saved);
            let mut read = spec.clone();
            fit(&mut read, &stored);
            assert_eq!(read.quant.is_some(), quantized);
        }
    }

    /// An MLX mixture of experts is read stacked (`switch_mlp`, as mlx-lm saves one) or one
    /// tensor each (early conversions), whichever the header holds.
    #[test]
    fn mlx_experts_are_read_stacked_or_one_each_as_stored() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../exec/tests/fixtures/quant/mlx-moe/config.json");
        let text = std::fs::read_to_string(dir).unwrap();
        let spec = anatomy_core::families::load_json("config.json", &text, "t", false).unwrap();
        let switch = |spec: &Spec| match spec.quant.as_ref().map(|d| &d.quant) {
            Some(Quant::Mlx { switch, .. }) => *switch,
            other => panic!("{other:?}"),
        };
        for stacked in [true, false] {
            let mut saved = spec.clone();
            if let Some(Quant::Mlx { switch, .. }) = saved.quant.as_mut().map(|d| &mut d.quant) {
                *switch = stacked;
            }
            let stored = saved_as(&saved);
            assert_eq!(
                stored.iter().any(|t| t.name.contains(".switch_mlp.")),
                stacked
            );
            let mut read = spec.clone();
            fit(&mut read, &stored);
            assert_eq!(switch(&read), stacked);
        }
    }
}
