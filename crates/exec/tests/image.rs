//! Wrappers run on an image against transformers: the tower's features replace the prompt's
//! placeholder tokens, and the logits agree within 1e-4 (`scripts/make_exec_fixtures.py`'s
//! `IMAGES`: toy LLaVAs with the class's defaults and with several layers' states, the class
//! token's kept, another activation and no projector biases); `stats`' FLOPs per image against
//! torch's count.

use anatomy_exec::{npy, weights::Weights, Cache, Model, Pixels};
use candle_core::{Device, Tensor};
use std::path::Path;

mod common;
use common::fixtures;

/// The fixture's model, ids, transformers' logits and image: its pixels, and its own size
/// where the fixture holds it (LLaVA-NeXT's features follow it).
fn load(dir: &Path) -> (Model, Vec<u32>, Vec<Vec<f32>>, Pixels) {
    let (model, ids, logits) = common::load(dir);
    let (shape, values) = npy::decode_f32(&std::fs::read(dir.join("pixels.npy")).unwrap()).unwrap();
    let values = Tensor::from_vec(values, shape, &Device::Cpu).unwrap();
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let size = serde_json::from_value(expected["image_size"].clone()).ok();
    (model, ids, logits, Pixels { values, size })
}

#[test]
fn logits_with_an_image_match_transformers() {
    let dirs = fixtures::images();
    assert!(dirs.len() >= 2, "{dirs:?}");
    for dir in dirs {
        let (model, ids, want, pixels) = load(&dir);
        let got: Vec<Vec<f32>> = model
            .forward_image(&ids, &pixels, &mut Cache::new(model.spec.layers as usize))
            .unwrap()
            .to_vec2()
            .unwrap();
        assert_eq!(got.len(), want.len());
        let d = got
            .iter()
            .zip(&want)
            .flat_map(|(g, w)| g.iter().zip(w).map(|(a, b)| (a - b).abs()))
            .fold(0.0f32, f32::max);
        eprintln!("{}: max |Δlogit| {d:e}", fixtures::name(&dir));
        assert!(d < 1e-4, "{}: max |Δlogit| {d}", fixtures::name(&dir));
        // Without the image, the placeholders are tokens like any other: other logits.
        let text: Vec<Vec<f32>> = model
            .forward(&ids, &mut Cache::new(model.spec.layers as usize))
            .unwrap()
            .to_vec2()
            .unwrap();
        assert!(text[ids.len() - 1] != want[ids.len() - 1]);
    }
}

/// The towers as LLaVA's and Gemma 3's published checkpoints store them, nested in their vision
/// model (`vision_tower.vision_model.*`, which transformers 5 drops on load and on save): the
/// checkpoint verifies and runs the image to the same logits.
#[test]
fn a_tower_nested_in_its_vision_model_runs_the_same() {
    for name in ["llava-jpeg", "gemma3-jpeg"] {
        let dir = fixtures::images()
            .into_iter()
            .find(|d| d.ends_with(name))
            .unwrap();
        let tmp = tempfile::tempdir().unwrap();
        for f in ["config.json", "expected.json", "pixels.npy"] {
            std::fs::copy(dir.join(f), tmp.path().join(f)).unwrap();
        }
        let bytes = std::fs::read(dir.join("model.safetensors")).unwrap();
        let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
        let renamed: Vec<(String, safetensors::tensor::TensorView)> = st
            .tensors()
            .into_iter()
            .map(|(n, t)| match n.strip_prefix("vision_tower.") {
                Some(rest) => (format!("vision_tower.vision_model.{rest}"), t),
                None => (n, t),
            })
            .collect();
        safetensors::serialize_to_file(renamed, None, &tmp.path().join("model.safetensors"))
            .unwrap();
        let c = anatomy_checkpoint::open(tmp.path()).unwrap();
        let spec = spec_of(&c);
        let g = anatomy_core::graph::build(&spec).unwrap();
        let r = anatomy_checkpoint::verify::verify(&g, &c).unwrap();
        assert!(
            r.missing.is_empty() && r.misshaped.is_empty() && r.unexpected.is_empty(),
            "{name}: {:?}",
            r.missing
        );
        let (model, ids, want, pixels) = load(tmp.path());
        let got: Vec<Vec<f32>> = model
            .forward_image(&ids, &pixels, &mut Cache::new(model.spec.layers as usize))
            .unwrap()
            .to_vec2()
            .unwrap();
        let d = got
            .iter()
            .zip(&want)
            .flat_map(|(g, w)| g.iter().zip(w).map(|(a, b)| (a - b).abs()))
            .fold(0.0f32, f32::max);
        assert!(d < 1e-4, "{name}: max |Δlogit| {d}");
    }
}

/// `stats`' FLOPs per image equal torch's count of the same tower (its embedding and the
/// layers up to the last state read) and projector on the fixture's image, or on a square
/// image at the resolution the figures are stated at (Qwen2-VL's 16 × 16 features).
#[test]
fn flops_per_image_match_torchs_count() {
    for dir in fixtures::images() {
        let c = anatomy_checkpoint::open(&dir).unwrap();
        let spec = anatomy_checkpoint::spec(&c, false).unwrap();
        let g = anatomy_core::graph::build(&spec).unwrap();
        let image = anatomy_core::stats::stats(&g, None).unwrap().image.unwrap();
        let expected: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap())
                .unwrap();
        assert_eq!(
            Some(image.flops),
            expected["image_flops"].as_u64(),
            "{}",
            fixtures::name(&dir)
        );
        // Tokens per image: the fixture's image's, or those of the image the figures are stated
        // at, where the model reads an image at its own resolution (Qwen2-VL).
        let ids: Vec<u64> = serde_json::from_value(expected["ids"].clone()).unwrap();
        let token = spec.image.as_ref().unwrap().token;
        let held = ids.iter().filter(|&&i| Some(i) == token).count() as u64;
        assert_eq!(
            Some(image.tokens),
            expected["image_tokens"].as_u64().or(Some(held)),
            "{}",
            fixtures::name(&dir)
        );
    }
}

/// A prompt whose placeholders do not number the image's features, pixels of another shape, and
/// pixels given to a model that runs no image are refused with what would be valid.
#[test]
fn mismatched_images_are_refused() {
    let dir = &fixtures::images()
        .into_iter()
        .find(|d| d.ends_with("llava"))
        .unwrap();
    let (model, ids, _, pixels) = load(dir);
    let cache = || Cache::new(model.spec.layers as usize);
    let short: Vec<u32> = ids
        .iter()
        .copied()
        .filter(|&i| i != 95)
        .chain([95])
        .collect();
    let e = model
        .forward_image(&short, &pixels, &mut cache())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("1 image placeholder tokens (id 95)") && e.contains("must hold 4"),
        "{e}"
    );
    let wrong = Tensor::zeros((3, 14, 28), candle_core::DType::F32, &Device::Cpu).unwrap();
    let e = model
        .forward_image(&ids, &wrong.into(), &mut cache())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("[3, 14, 28]") && e.contains("[3, 28, 28]"),
        "{e}"
    );
    // Qwen2-VL reads an image of any size whose sides are multiples of patch × merge.
    let qwen = fixtures::images()
        .into_iter()
        .find(|d| d.ends_with("qwen2-vl-jpeg"))
        .unwrap();
    let (qwen, ids, _, _) = load(&qwen);
    let odd = Tensor::zeros((3, 84, 100), candle_core::DType::F32, &Device::Cpu).unwrap();
    let e = qwen
        .forward_image(&ids, &odd.into(), &mut Cache::new(2))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("[3, 84, 100]") && e.contains("multiples of 28"),
        "{e}"
    );
    // A larger image of the right kind has more features than the prompt's placeholders.
    let big = Tensor::zeros((3, 112, 112), candle_core::DType::F32, &Device::Cpu).unwrap();
    let e = qwen
        .forward_image(&ids, &big.into(), &mut Cache::new(2))
        .unwrap_err()
        .to_string();
    assert!(e.contains("must hold 16"), "{e}");
    // LLaVA-NeXT's features follow the image's own size: pixels without it, or with tiles of
    // another canvas, are refused.
    let next = fixtures::images()
        .into_iter()
        .find(|d| d.ends_with("llava-next-jpeg"))
        .unwrap();
    let (next, next_ids, _, next_pixels) = load(&next);
    let bare = Pixels {
        size: None,
        ..next_pixels.clone()
    };
    let e = next
        .forward_image(&next_ids, &bare, &mut Cache::new(2))
        .unwrap_err()
        .to_string();
    assert!(e.contains("own size") && e.contains("--image"), "{e}");
    // A 28×61 image fits the 28×84 canvas: 52 features (4 rows of 8 kept, their newlines, the
    // whole image's 16) from three tiles and the whole image's, not the five given.
    let other = Pixels {
        size: Some([28, 61]),
        ..next_pixels
    };
    let e = next
        .forward_image(&next_ids, &other, &mut Cache::new(2))
        .unwrap_err()
        .to_string();
    assert!(e.contains("must hold 52"), "{e}");
    let fewer: Vec<u32> = (next_ids.iter().copied().filter(|&i| i != 95))
        .chain(std::iter::repeat_n(95, 52))
        .collect();
    let e = next
        .forward_image(&fewer, &other, &mut Cache::new(2))
        .unwrap_err()
        .to_string();
    assert!(e.contains("hold 5 tiles") && e.contains("is 4"), "{e}");
    let text = fixtures::all()
        .into_iter()
        .find(|d| d.ends_with("llama"))
        .unwrap();
    let c = anatomy_checkpoint::open(&text).unwrap();
    let spec = anatomy_checkpoint::spec(&c, false).unwrap();
    let plain = Model::new(
        spec,
        Weights::load(&c, &spec_of(&c), &mut |_, _| {}).unwrap(),
    )
    .unwrap();
    let e = plain
        .forward_image(
            &[1, 2],
            &pixels,
            &mut Cache::new(plain.spec.layers as usize),
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("--pixels") && e.contains("text prompt"), "{e}");
}

fn spec_of(c: &anatomy_checkpoint::Checkpoint) -> anatomy_core::spec::Spec {
    anatomy_checkpoint::spec(c, false).unwrap()
}
