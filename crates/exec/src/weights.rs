//! Weights by checkpoint name, as f32 tensors: from safetensors files (memory-mapped) or a GGUF
//! file (dequantized; llama.cpp's Q/K row permutation undone so RoPE reads them as transformers does).

use crate::linear::Packed;
use anatomy_checkpoint::{Checkpoint, Format};
use anatomy_core::spec::Spec;
use anatomy_core::Error;
use candle_core::{DType, Device, Tensor};
use std::collections::HashMap;
use std::path::Path;

pub struct Weights {
    pub tensors: HashMap<String, Tensor>,
    /// Projection weights, moved out of `tensors` and packed for the kernel of `linear`.
    pub packed: HashMap<String, Packed>,
    pub format: Format,
}

fn err(path: &str, e: impl std::fmt::Display) -> Error {
    Error::file(path, format!("cannot load weights: {e}"))
}

impl Weights {
    /// Load every tensor of `checkpoint`, calling `progress(done, total)` as it goes.
    pub fn load(
        checkpoint: &Checkpoint,
        spec: &Spec,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Weights, Error> {
        // Only a checkpoint whose tensor bytes are all where its header says reaches candle.
        checkpoint.data_is_sound()?;
        match (&checkpoint.format, &checkpoint.gguf) {
            (Format::Safetensors, _) => Self::safetensors(Path::new(&checkpoint.path), progress),
            (Format::Gguf, Some(header)) => {
                Self::gguf(Path::new(&checkpoint.path), header, spec, progress)
            }
            (Format::Gguf, None) => Err(Error::file(&checkpoint.path, "has no GGUF header read")),
        }
    }

    fn safetensors(dir: &Path, progress: &mut dyn FnMut(usize, usize)) -> Result<Weights, Error> {
        let shown = dir.display().to_string();
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .map_err(|e| err(&shown, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "safetensors"))
            .collect();
        files.sort();
        let mut tensors = HashMap::new();
        for (i, f) in files.iter().enumerate() {
            let loaded = candle_core::safetensors::load(f, &Device::Cpu)
                .map_err(|e| err(&f.display().to_string(), e))?;
            for (name, t) in loaded {
                tensors.insert(name, t.to_dtype(DType::F32).map_err(|e| err(&shown, e))?);
            }
            progress(i + 1, files.len());
        }
        Ok(Weights::new(tensors, Format::Safetensors))
    }

    fn gguf(
        path: &Path,
        header: &anatomy_checkpoint::gguf_header::Header,
        spec: &Spec,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Weights, Error> {
        let shown = path.display().to_string();
        let content = header.content();
        let mut reader = std::io::BufReader::new(anatomy_checkpoint::open_regular(path)?);
        let names: Vec<String> = content.tensor_infos.keys().cloned().collect();
        let mut tensors = HashMap::new();
        // llama.cpp stores a llama model's Q and K rows permuted for its RoPE layout.
        let permuted = spec.model_type == "llama";
        for (i, name) in names.iter().enumerate() {
            let q = content
                .tensor(&mut reader, name, &Device::Cpu)
                .map_err(|e| err(&shown, e))?;
            let mut t = q.dequantize(&Device::Cpu).map_err(|e| err(&shown, e))?;
            if permuted && (name.ends_with("attn_q.weight") || name.ends_with("attn_k.weight")) {
                let heads = if name.ends_with("attn_q.weight") {
                    spec.attn.heads
                } else {
                    spec.attn.kv_heads
                } as usize;
                t = unpermute(&t, heads).map_err(|e| err(&shown, e))?;
            }
            tensors.insert(name.clone(), t);
            progress(i + 1, names.len());
        }
        Ok(Weights::new(tensors, Format::Gguf))
    }

    pub fn new(tensors: HashMap<String, Tensor>, format: Format) -> Weights {
        Weights {
            tensors,
            packed: HashMap::new(),
            format,
        }
    }

    /// Packs every 2-D f32 tensor that `which` accepts, freeing its unpacked values.
    pub fn pack(&mut self, which: impl Fn(&str) -> bool) -> Result<(), Error> {
        let names: Vec<String> = self
            .tensors
            .iter()
            .filter(|(name, t)| t.rank() == 2 && t.dtype() == DType::F32 && which(name))
            .map(|(name, _)| name.clone())
            .collect();
        for name in names {
            let t = self.tensors.remove(&name).expect("listed above");
            let p = Packed::from_tensor(&t).map_err(|e| err(&name, e))?;
            self.packed.insert(name, p);
        }
        Ok(())
    }

    pub fn get(&self, name: &str) -> Result<&Tensor, Error> {
        self.tensors.get(name).ok_or_else(|| Error::file(name, "is not in the checkpoint, but the graph reads it; run `anatomy verify` for the whole list"))
    }
}

/// Undo llama.cpp's `permute`: rows of each head go from interleaved pairs back to two halves.
fn unpermute(w: &Tensor, heads: usize) -> candle_core::Result<Tensor> {
    let (rows, cols) = w.dims2()?;
    let half = rows / heads / 2;
    w.reshape((heads, half, 2, cols))?
        .transpose(1, 2)?
        .contiguous()?
        .reshape((rows, cols))
}
