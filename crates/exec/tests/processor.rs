//! `run --image`'s processing against transformers' image processors, both backends
//! (`scripts/make_processor_fixtures.py`): PNG and JPEG images of each kind Pillow writes, through
//! CLIP's, SigLIP's, ViT's, BLIP's and BiT's processors with every convolution filter, sizes that
//! shrink, grow and crop past the image, Qwen2-VL's smart resize in each of its branches (the
//! pixels before they are cut into patches), Llama 4's tiles (one, several with the whole image
//! as one more, the largest canvas; in bfloat16, torchvision's backend alone), GOT-OCR 2's crops
//! (InternVL's: the grid nearest the image's aspect, at least a given count of tiles, the whole
//! image one more; and none), Pixtral's longest edge, images turned upright by each EXIF orientation (a JPEG's and a PNG's), and settings from
//! the file or the class's defaults; the pixel values agree within 1e-6 with the PIL backend's
//! and with the torchvision backend's (where a backend lacks a filter or a class: refused).

use anatomy_exec::processor::Backend;
use anatomy_exec::{npy, processor};
use std::path::PathBuf;

mod common;
use common::fixtures;

fn image(dir: &std::path::Path) -> PathBuf {
    ["image.png", "image.jpg"]
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{}: no image", dir.display()))
}

#[test]
fn pixels_match_transformers_processors() {
    let dirs = fixtures::processed();
    assert!(dirs.len() >= 12, "{dirs:?}");
    let mut torchvision = 0;
    for dir in dirs {
        let name = fixtures::name(&dir);
        for (backend, file) in [
            (Backend::Pil, "pixels.npy"),
            (Backend::Torchvision, "pixels_torchvision.npy"),
        ] {
            let got = processor::pixels(&image(&dir), &dir, backend);
            let Ok(bytes) = std::fs::read(dir.join(file)) else {
                // torchvision has no such filter: transformers fails, and so does anatomy.
                let e = got.unwrap_err().to_string();
                assert!(e.contains("--image-backend"), "{name}: {e}");
                continue;
            };
            torchvision += usize::from(backend == Backend::Torchvision);
            let (shape, want) = npy::decode_f32(&bytes).unwrap();
            let got = got.unwrap_or_else(|e| panic!("{name} {backend:?}: {e}"));
            assert_eq!(got.dims(), &shape[..], "{name}");
            let got: Vec<f32> = got.flatten_all().unwrap().to_vec1().unwrap();
            let d = got
                .iter()
                .zip(&want)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max);
            eprintln!("{name} {backend:?}: {shape:?}, max |Δ| {d:e}");
            assert!(d <= 1e-6, "{name} {backend:?}: max |Δ| {d}");
        }
    }
    assert!(torchvision >= 10, "{torchvision}");
}

/// The image fixtures that see a JPEG through their saved processor (LLaVA's CLIP processor,
/// Gemma 3's, Qwen2-VL's; Llama 4's, whose backend is torchvision's alone): the pixels they ran
/// on are transformers' processor's, and anatomy's equal them.
#[test]
fn image_fixtures_pixels_are_their_processors() {
    let dirs: Vec<_> = fixtures::images()
        .into_iter()
        .filter(|d| d.join("image.jpg").is_file())
        .collect();
    assert!(dirs.len() >= 2, "{dirs:?}");
    for dir in dirs {
        let name = fixtures::name(&dir);
        let expected: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap())
                .unwrap();
        // The backend its processor ran with: PIL's unless it says otherwise.
        let backend = match expected["image_backend"].as_str() {
            None | Some("pil") => Backend::Pil,
            Some("torchvision") => Backend::Torchvision,
            Some(other) => panic!("{name}: image_backend {other:?}"),
        };
        let (_, want) = npy::decode_f32(&std::fs::read(dir.join("pixels.npy")).unwrap()).unwrap();
        let got = processor::pixels(&dir.join("image.jpg"), &dir, backend)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let got: Vec<f32> = got.flatten_all().unwrap().to_vec1().unwrap();
        assert_eq!(got.len(), want.len(), "{name}");
        let d = got
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(d <= 1e-6, "{name}: max |Δ| {d}");
    }
}

/// A processor whose config turns RGB conversion off refuses a grey image (transformers would
/// hand the tower one channel), and a file that is no image is refused by name.
#[test]
fn images_the_processor_cannot_take_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let grey = fixtures::processed()
        .into_iter()
        .find(|d| d.join("image.png").is_file() && fixtures::name(d).contains("grey"))
        .unwrap();
    std::fs::copy(grey.join("image.png"), dir.path().join("grey.png")).unwrap();
    std::fs::write(
        dir.path().join("preprocessor_config.json"),
        r#"{"image_processor_type": "ViTImageProcessor"}"#,
    )
    .unwrap();
    let e = processor::pixels(&dir.path().join("grey.png"), dir.path(), Backend::Pil)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("grey.png") && e.contains("do_convert_rgb"),
        "{e}"
    );
    std::fs::write(dir.path().join("not.png"), b"\x89PNG\r\n\x1a\nnothing").unwrap();
    let e = processor::pixels(&dir.path().join("not.png"), dir.path(), Backend::Pil)
        .unwrap_err()
        .to_string();
    assert!(e.contains("not.png") && e.contains("not a PNG"), "{e}");
    std::fs::remove_file(dir.path().join("preprocessor_config.json")).unwrap();
    let e = processor::pixels(&dir.path().join("grey.png"), dir.path(), Backend::Pil)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("preprocessor_config.json") && e.contains("--pixels"),
        "{e}"
    );
}
