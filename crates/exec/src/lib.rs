//! anatomy-exec: runs a model as its Spec and Graph describe it, on the CPU, with weights from
//! safetensors or GGUF (dequantized to f32), looked up by the Graph's own checkpoint names. Most
//! steps are candle ops; the products that take the time, every projection and attention, run in
//! kernels of their own (`linear`, `attention`) on the same values.

mod attention;
pub mod chat;
pub mod floatlinear;
mod kv;
pub mod linear;
mod math;
pub mod model;
pub mod npy;
mod pool;
pub mod processor;
pub mod qlinear;
pub mod rope;
pub mod session;
mod spm;
pub mod ssm;
pub mod tiny;
pub mod tokenizer;
mod unpack;
pub mod values;
pub mod weights;

pub use model::{Cache, Model, Pixels};

/// Greedy decoding: the prompt in one pass, then one token at a time through the KV cache.
/// `on_token` sees each new id as it comes; it returns false to stop early.
pub fn generate(
    model: &Model,
    prompt: &[u32],
    max_new: usize,
    on_token: &mut dyn FnMut(u32) -> bool,
) -> Result<Generation, anatomy_core::Error> {
    generate_with(model, prompt, None, max_new, on_token)
}

/// `generate`, the prompt's image placeholders replaced by the features of `pixels` where given.
pub fn generate_with(
    model: &Model,
    prompt: &[u32],
    pixels: Option<&Pixels>,
    max_new: usize,
    on_token: &mut dyn FnMut(u32) -> bool,
) -> Result<Generation, anatomy_core::Error> {
    let err = |e: candle_core::Error| anatomy_core::Error::file("executor", e.to_string());
    let mut cache = Cache::with_room(model.spec.layers as usize, prompt.len() + max_new);
    let start = std::time::Instant::now();
    let logits = model.forward_last_with(prompt, pixels, &mut cache)?;
    let mut next = argmax(&logits.get(0).map_err(err)?.to_vec1::<f32>().map_err(err)?);
    let prefill = start.elapsed();
    let mut out = Vec::with_capacity(max_new);
    let start = std::time::Instant::now();
    for i in 0..max_new {
        out.push(next);
        if !on_token(next) || i + 1 == max_new {
            break;
        }
        let logits = model.forward_last(&[next], &mut cache)?;
        next = argmax(&logits.get(0).map_err(err)?.to_vec1::<f32>().map_err(err)?);
    }
    Ok(Generation {
        ids: out,
        prefill,
        decode: start.elapsed(),
        cache_bytes: cache.bytes(),
    })
}

pub struct Generation {
    pub ids: Vec<u32>,
    pub prefill: std::time::Duration,
    pub decode: std::time::Duration,
    /// What the KV cache (and any recurrent state) held at the end.
    pub cache_bytes: usize,
}

/// The first index of the largest value (ties go to the lower id, as torch.argmax does).
pub fn argmax(v: &[f32]) -> u32 {
    let mut best = 0;
    for (i, x) in v.iter().enumerate() {
        if *x > v[best] {
            best = i;
        }
    }
    best as u32
}

/// Seeded values for the kernels' tests, uniform in [−w, w) and the same on every machine.
#[cfg(test)]
fn uniform(seed: u64, len: usize, w: f32) -> Vec<f32> {
    let mut s = seed;
    (0..len)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * w
        })
        .collect()
}
