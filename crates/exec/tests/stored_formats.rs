//! A toy model with its projections held in each GGUF block format, as `run --dtype stored` holds
//! a GGUF's: its logits against the f32 path on the same weights (the stored blocks
//! dequantized). The difference is the activations' 8-bit quantization in the quantized
//! kernels, so the tolerance is stated per format against the logits' own spread.
use anatomy_exec::{Cache, Model};
use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::{DType, Device};

/// Each format, and how far its logits may lie from the f32 path's, as a fraction of the f32
/// logits' largest magnitude: about twice what was measured (0.008 to 0.011 for the 32-value
/// formats, whose activations are quantized in blocks of 32; 0.018 to 0.023 for the K-quants,
/// in blocks of 256). A wrong kernel is off by the logits' whole size.
const FORMATS: [(GgmlDType, f32); 10] = [
    (GgmlDType::Q4_0, 0.02),
    (GgmlDType::Q4_1, 0.02),
    (GgmlDType::Q5_0, 0.02),
    (GgmlDType::Q5_1, 0.02),
    (GgmlDType::Q8_0, 0.02),
    (GgmlDType::Q2K, 0.045),
    (GgmlDType::Q3K, 0.045),
    (GgmlDType::Q4K, 0.045),
    (GgmlDType::Q5K, 0.045),
    (GgmlDType::Q6K, 0.045),
];

/// Llama 3.2 3B's structure (tied embeddings, grouped K/V heads) at sizes every block format
/// divides: rows of 256 and 512 values.
fn toy() -> anatomy_core::spec::Spec {
    let spec = anatomy_core::source::load("llama-3.2-3b", false)
        .unwrap()
        .spec;
    let mut s = anatomy_exec::tiny::shrink(&spec);
    s.hidden = 256;
    s.mlp.intermediate = 512;
    s.attn.head_dim = 64;
    s.attn.v_head_dim = 64;
    s.attn.scale_dim = 64.0;
    s
}

#[test]
fn every_stored_format_gives_the_f32_paths_logits_within_its_tolerance() {
    let spec = toy();
    let g = anatomy_core::graph::build(&spec).unwrap();
    let ids: Vec<u32> = (0..12).map(|i| (i * 37 + 5) % spec.vocab as u32).collect();
    let logits = |m: &Model, ids: &[u32]| -> Vec<f32> {
        let mut cache = Cache::new(spec.layers as usize);
        let mut v: Vec<f32> = m
            .forward(ids, &mut cache)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1()
            .unwrap();
        // A decode step too: one row, the other kernel.
        let next: Vec<f32> = m
            .forward(&[3], &mut cache)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1()
            .unwrap();
        v.extend(next);
        v
    };
    for (format, tolerance) in FORMATS {
        let mut stored = anatomy_exec::tiny::random_weights(&g, 11).unwrap();
        let mut exact = anatomy_exec::tiny::random_weights(&g, 11).unwrap();
        let names: Vec<String> = stored
            .tensors
            .iter()
            .filter(|(_, t)| t.rank() == 2)
            .map(|(n, _)| n.clone())
            .collect();
        for name in &names {
            let t = stored.tensors.remove(name).unwrap();
            let q = QTensor::quantize(&t, format).unwrap();
            let d = q
                .dequantize(&Device::Cpu)
                .unwrap()
                .to_dtype(DType::F32)
                .unwrap();
            exact.tensors.insert(name.clone(), d);
            stored.stored.insert(name.clone(), q);
        }
        let stored = Model::new(spec.clone(), stored).unwrap();
        let held = stored.held();
        assert!(held.starts_with("stored format"), "{format:?}: {held}");
        let exact = Model::new(spec.clone(), exact).unwrap();
        let (a, b) = (logits(&stored, &ids), logits(&exact, &ids));
        let scale = b.iter().fold(0f32, |m, v| m.max(v.abs()));
        let worst = a
            .iter()
            .zip(&b)
            .fold(0f32, |m, (x, y)| m.max((x - y).abs()));
        eprintln!(
            "{format:?}: max |Δlogit| {worst:.2e}, {:.4} of max |logit| {scale:.2}",
            worst / scale
        );
        assert!(
            worst <= tolerance * scale,
            "{format:?}: {worst} > {tolerance} × {scale}"
        );
    }
}
