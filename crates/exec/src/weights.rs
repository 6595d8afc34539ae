//! Weights by checkpoint name, from safetensors files or a GGUF file: every one in f32, or
//! (`Hold::Stored`) the projections as stored, in quantized blocks, 16-bit or 8-bit floats
//! (see `Hold`); llama.cpp's Q/K row permutation undone either way, so that RoPE reads them as
//! transformers does.

use crate::floatlinear::{Fp8Linear, Half, HalfLinear, Rows};
use crate::linear::Packed;
use crate::qlinear::{int8_blocks, Block, QLinear};
use anatomy_checkpoint::{Checkpoint, Format};
use anatomy_core::spec::Spec;
use anatomy_core::Error;
use candle_core::quantized::{GgmlDType, QMatMul, QStorage, QTensor};
use candle_core::{DType, Device, Tensor};
use std::collections::HashMap;
use std::path::Path;

/// How a checkpoint's weights are held in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// Every weight dequantized to f32: the path the parity tests run.
    F32,
    /// The projections as stored: a GGUF's in their quantized blocks, multiplied by the
    /// kernels of `qlinear` (Q4_0 to Q8_0, Q3_K to Q6_K, MXFP4) or candle's (Q2_K, Q8_K); bf16
    /// and f16 matrices (safetensors, or a GGUF's BF16 and F16) in 16 bits and fp8 ones with
    /// their block scales in 8 (`floatlinear`); a GGUF's MXFP4, IQ4_NL, IQ4_XS and TQ2_0 in
    /// their own blocks, its other i-quants and TQ1_0 as their integers in int8 blocks
    /// (`int8_blocks`, 9 or 10 bits a weight, exact). Everything else in f32.
    Stored,
}

pub struct Weights {
    pub tensors: HashMap<String, Tensor>,
    /// Projection weights, moved out of `tensors` and packed for the kernel of `linear`.
    pub packed: HashMap<String, Packed>,
    /// The 2-D tensors held as stored (`Hold::Stored`), until `Model::new` keeps the
    /// projections among them (`quantized`) and converts the rest to f32.
    pub stored: HashMap<String, Stored>,
    /// Projection weights in their stored blocks.
    pub quantized: HashMap<String, Quantized>,
    pub format: Format,
    /// The fp8 tensors read, until their block scales join them (`fp8`).
    fp8_names: std::collections::HashSet<String>,
    /// The fp8 matrices to hold as stored, shape and bytes, until then.
    fp8_raw: HashMap<String, Raw>,
}

/// `held`'s tensors renamed as transformers loads them (`naming::canonical`).
fn canonical<T>(held: &mut HashMap<String, T>, layout: anatomy_core::spec::Layout) {
    let renamed: Vec<(String, String)> = held
        .keys()
        .filter_map(|k| match anatomy_core::naming::canonical(layout, k) {
            std::borrow::Cow::Owned(n) => Some((k.clone(), n)),
            std::borrow::Cow::Borrowed(_) => None,
        })
        .collect();
    for (from, to) in renamed {
        if let Some(t) = held.remove(&from) {
            held.insert(to, t);
        }
    }
}

fn err(path: &str, e: impl std::fmt::Display) -> Error {
    Error::file(path, format!("cannot load weights: {e}"))
}

impl Weights {
    /// Load every tensor of `checkpoint` as f32, calling `progress(done, total)` as it goes.
    pub fn load(
        checkpoint: &Checkpoint,
        spec: &Spec,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Weights, Error> {
        Self::load_held(checkpoint, spec, Hold::F32, progress)
    }

    /// Load every tensor of `checkpoint`, held as `hold` says.
    pub fn load_held(
        checkpoint: &Checkpoint,
        spec: &Spec,
        hold: Hold,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Weights, Error> {
        // Only a checkpoint whose tensor bytes are all where its header says reaches candle.
        checkpoint.data_is_sound()?;
        match (&checkpoint.format, &checkpoint.gguf) {
            (Format::Safetensors, _) => {
                let block = fp8_block(&checkpoint.config, &checkpoint.config_file)?;
                let quant = (spec.quant.as_ref().map(|d| &d.quant)).filter(|q| q.unpacks());
                // A quantized checkpoint's packed matrices are unpacked apart (as Q4_1 blocks
                // where held as stored and their codes fit, else in f32); its other tensors
                // in f32.
                let (read, mut ints) = match quant {
                    Some(q) => {
                        crate::unpack::primary(q, &checkpoint.path)?;
                        (Hold::F32, Some(crate::unpack::Ints::new()))
                    }
                    None => (hold, None),
                };
                let path = Path::new(&checkpoint.path);
                // Held as stored, the 16-bit matrices beside the packed ones stay 16-bit (a tied
                // head is as large as several layers).
                let halves = quant.is_some() && hold == Hold::Stored;
                let mut w = Self::safetensors(path, read, ints.as_mut(), halves, progress)?;
                if let (Some(q), Some(mut ints)) = (quant, ints) {
                    let g = anatomy_core::graph::build(spec)?;
                    let stacks = anatomy_core::quant::mlx_stacks(&g);
                    crate::unpack::split_stacks(
                        &stacks,
                        &mut ints,
                        &mut w.tensors,
                        &checkpoint.path,
                    )?;
                    let stored = (hold == Hold::Stored).then_some(&mut w.stored);
                    crate::unpack::unpack(q, &mut ints, &mut w.tensors, stored, &checkpoint.path)?;
                }
                w.fp8(block, &checkpoint.path)?;
                // Each under the name transformers loads it as (Dory's released layout).
                canonical(&mut w.tensors, spec.layout);
                canonical(&mut w.stored, spec.layout);
                Ok(w)
            }
            (Format::Gguf, Some(header)) => {
                Self::gguf(Path::new(&checkpoint.path), header, spec, hold, progress)
            }
            (Format::Gguf, None) => Err(Error::file(&checkpoint.path, "has no GGUF header read")),
        }
    }

    /// `ints`: where integer tensors go as stored (a quantized checkpoint's packed words);
    /// `halves`: whether its f16 and bf16 weight matrices are held as stored (their scales and
    /// the rest widened to f32 for `unpack`).
    fn safetensors(
        dir: &Path,
        hold: Hold,
        mut ints: Option<&mut crate::unpack::Ints>,
        halves: bool,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Weights, Error> {
        let shown = dir.display().to_string();
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .map_err(|e| err(&shown, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "safetensors"))
            .collect();
        files.sort();
        let mut w = Weights::new(HashMap::new(), Format::Safetensors);
        let mut mx = HashMap::new();
        for (i, f) in files.iter().enumerate() {
            if hold == Hold::Stored {
                w.safetensors_stored(f, &mut mx)?;
            } else {
                let shown_f = f.display().to_string();
                let file = std::fs::File::open(f).map_err(|e| err(&shown_f, e))?;
                // SAFETY: read-only; the checkpoint is not written while it is read.
                let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| err(&shown_f, e))?;
                let st =
                    safetensors::SafeTensors::deserialize(&map).map_err(|e| err(&shown_f, e))?;
                for (name, view) in st.tensors() {
                    // int8 (LLM.int8()'s and int-quantized weights), which candle has no type
                    // for: as words, each value's two's complement.
                    if let (Some(ints), safetensors::Dtype::I8) =
                        (ints.as_deref_mut(), view.dtype())
                    {
                        let words = view.data().iter().map(|&b| b as i8 as i32 as u32).collect();
                        ints.insert(name, (view.shape().to_vec(), words));
                        continue;
                    }
                    let half = match view.dtype() {
                        safetensors::Dtype::BF16 => Some(Half::Bf16),
                        safetensors::Dtype::F16 => Some(Half::F16),
                        _ => None,
                    };
                    if let (true, Some(half), &[out, n]) = (halves, half, view.shape()) {
                        // No format stores a float part under `weight` (the quant tests hold it):
                        // a 16-bit `.weight` is a matrix left unpacked.
                        if name.ends_with(".weight") {
                            let h = half_linear(view.data(), half, out, n, None);
                            w.stored
                                .insert(name, Stored::Half(h.map_err(|e| err(&shown_f, e))?));
                            continue;
                        }
                    }
                    let t = candle_core::safetensors::Load::load(&view, &Device::Cpu)
                        .map_err(|e| err(&shown_f, e))?;
                    if let (Some(ints), DType::I32 | DType::U32 | DType::I64 | DType::U8) =
                        (ints.as_deref_mut(), t.dtype())
                    {
                        let words = t
                            .flatten_all()
                            .and_then(|t| match t.dtype() {
                                DType::I32 => {
                                    Ok(t.to_vec1::<i32>()?.into_iter().map(|x| x as u32).collect())
                                }
                                DType::I64 => {
                                    Ok(t.to_vec1::<i64>()?.into_iter().map(|x| x as u32).collect())
                                }
                                DType::U8 => {
                                    Ok(t.to_vec1::<u8>()?.into_iter().map(u32::from).collect())
                                }
                                _ => t.to_vec1::<u32>(),
                            })
                            .map_err(|e| err(&shown, e))?;
                        ints.insert(name, (t.dims().to_vec(), words));
                        continue;
                    }
                    if t.dtype() == DType::F8E4M3 {
                        w.fp8_names.insert(name.clone());
                    }
                    if is_mxfp4_part(&name, t.dtype() == DType::U8) {
                        let bytes = t.flatten_all().and_then(|t| t.to_vec1::<u8>());
                        mx.insert(
                            name,
                            (t.dims().to_vec(), bytes.map_err(|e| err(&shown, e))?),
                        );
                        continue;
                    }
                    let t = t.to_dtype(DType::F32).map_err(|e| err(&shown, e))?;
                    w.tensors.insert(name, t);
                }
            }
            progress(i + 1, files.len());
        }
        w.mxfp4(hold, mx, &shown)?;
        Ok(w)
    }

    /// fp8 weights with their block scales (`X_scale_inv`, DeepSeek-V3): in f32 each value times
    /// its block's scale; held as stored, the bytes and scales together (`Fp8Linear`).
    fn fp8(&mut self, block: (usize, usize), shown: &str) -> Result<(), Error> {
        for name in std::mem::take(&mut self.fp8_names) {
            let scale_name = format!("{name}_scale_inv");
            let scales = match self.tensors.remove(&scale_name) {
                Some(s) => Some(
                    s.flatten_all()
                        .and_then(|s| s.to_vec1::<f32>())
                        .map_err(|e| err(shown, e))?,
                ),
                None => None,
            };
            if let Some((shape, bytes)) = self.fp8_raw.remove(&name) {
                let (out, n) = (shape[0], shape[1]);
                // Without scales, one block of scale 1 (the columns rounded up to 16).
                let (scales, block) = match scales {
                    Some(s) => (s, block),
                    None => (vec![1.0], (out.max(1), n.div_ceil(16).max(1) * 16)),
                };
                let q = Fp8Linear::new(bytes, scales, block, out, n)
                    .map_err(|e| err(shown, format!("{name}: {e}")))?;
                self.stored.insert(name, Stored::Fp8(q));
                continue;
            }
            let (Some(scales), Some(t)) = (scales, self.tensors.get_mut(&name)) else {
                continue;
            };
            let Ok((out, n)) = t.dims2() else {
                return Err(Error::file(shown, format!("holds {name}_scale_inv for {name} of shape {:?}; fp8 block scales belong to a matrix", t.dims())));
            };
            let per = n.div_ceil(block.1);
            if scales.len() != out.div_ceil(block.0) * per {
                return Err(Error::file(shown, format!("holds {} scales in {scale_name}; {name} [{out}, {n}] in blocks of {block:?} has {}", scales.len(), out.div_ceil(block.0) * per)));
            }
            let mut v: Vec<f32> = t
                .flatten_all()
                .and_then(|t| t.to_vec1())
                .map_err(|e| err(shown, e))?;
            for (o, row) in v.chunks_exact_mut(n.max(1)).enumerate() {
                for (k, x) in row.iter_mut().enumerate() {
                    *x *= scales[o / block.0 * per + k / block.1];
                }
            }
            *t = Tensor::from_vec(v, (out, n), &Device::Cpu).map_err(|e| err(shown, e))?;
        }
        Ok(())
    }

    /// gpt-oss's MXFP4 weights: each `X_blocks` [E, out, g, 16] with its `X_scales` [E, out, g]
    /// becomes `X` [E, 32g, out] in f32 (transformers' dequantization), or, held as stored, one
    /// weight `X[e]` [out, 32g] per expert in its blocks, multiplied by `qlinear`.
    fn mxfp4(
        &mut self,
        hold: Hold,
        mut mx: HashMap<String, Raw>,
        shown: &str,
    ) -> Result<(), Error> {
        let mut names: Vec<String> = mx
            .keys()
            .filter(|n| n.ends_with("_blocks"))
            .cloned()
            .collect();
        names.sort();
        for blocks_name in names {
            let base = blocks_name.trim_end_matches("_blocks").to_string();
            let (shape, blocks) = mx.remove(&blocks_name).expect("listed above");
            let scales_name = format!("{base}_scales");
            let Some((scales_shape, scales)) = mx.remove(&scales_name) else {
                return Err(Error::file(
                    shown,
                    format!("holds {blocks_name} but no {scales_name}, its MXFP4 scales"),
                ));
            };
            let &[experts, out, groups, 16] = shape.as_slice() else {
                return Err(Error::file(shown, format!("holds {blocks_name} of shape {shape:?}; MXFP4 blocks are [experts, rows, groups, 16]")));
            };
            if scales_shape != [experts, out, groups] {
                return Err(Error::file(shown, format!("holds {scales_name} of shape {scales_shape:?}; the scales of {blocks_name} {shape:?} are [{experts}, {out}, {groups}]")));
            }
            let n = groups * 32;
            let mut wide = Vec::new();
            for e in 0..experts {
                let rows = e * out * groups..(e + 1) * out * groups;
                let data = crate::qlinear::mxfp4_blocks(
                    &blocks[rows.start * 16..rows.end * 16],
                    &scales[rows],
                );
                let q = QLinear::new(Block::Mxfp4, data, out, n).map_err(|e| err(shown, e))?;
                if hold == Hold::Stored {
                    self.stored.insert(format!("{base}[{e}]"), Stored::Own(q));
                } else {
                    // [out, in] as stored, [in, out] as the model's tensor holds it.
                    wide.push(
                        q.dequantize()
                            .and_then(|t| t.t()?.contiguous())
                            .map_err(|e| err(shown, e))?,
                    );
                }
            }
            if hold == Hold::F32 {
                let t = Tensor::stack(&wide, 0).map_err(|e| err(shown, e))?;
                self.tensors.insert(base, t);
            }
        }
        // A part without its partner, read as any other tensor (verify names what is missing).
        for (name, (shape, bytes)) in mx {
            let t =
                Tensor::from_vec(bytes, shape, &Device::Cpu).and_then(|t| t.to_dtype(DType::F32));
            self.tensors.insert(name, t.map_err(|e| err(shown, e))?);
        }
        Ok(())
    }

    /// One safetensors file's tensors: its bf16 and f16 matrices into `stored` as they are, its
    /// fp8 matrices and MXFP4 parts aside until their scales join them (`fp8`, `mxfp4`), the
    /// rest into `tensors` in f32. The file is mapped, and each tensor's pages are given back
    /// once copied, so memory holds the copies and never the file besides.
    fn safetensors_stored(&mut self, f: &Path, mx: &mut HashMap<String, Raw>) -> Result<(), Error> {
        let shown = f.display().to_string();
        let file = std::fs::File::open(f).map_err(|e| err(&shown, e))?;
        // SAFETY: a read-only mapping, dropped before this returns.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| err(&shown, e))?;
        let st = safetensors::SafeTensors::deserialize(&map).map_err(|e| err(&shown, e))?;
        for (name, view) in st.tensors() {
            let data = view.data();
            let half = match view.dtype() {
                safetensors::Dtype::BF16 => Some(Half::Bf16),
                safetensors::Dtype::F16 => Some(Half::F16),
                _ => None,
            };
            match (half, view.shape()) {
                _ if is_mxfp4_part(&name, view.dtype() == safetensors::Dtype::U8) => {
                    mx.insert(name, (view.shape().to_vec(), data.to_vec()));
                }
                (None, &[out, n]) if view.dtype() == safetensors::Dtype::F8_E4M3 => {
                    self.fp8_names.insert(name.clone());
                    self.fp8_raw.insert(name, (vec![out, n], data.to_vec()));
                }
                (Some(half), &[out, n]) => {
                    let h = half_linear(data, half, out, n, None);
                    self.stored
                        .insert(name, Stored::Half(h.map_err(|e| err(&shown, e))?));
                }
                _ => {
                    let t = candle_core::safetensors::Load::load(&view, &Device::Cpu)
                        .and_then(|t| t.to_dtype(DType::F32))
                        .map_err(|e| err(&shown, e))?;
                    self.tensors.insert(name, t);
                }
            }
            let offset = data.as_ptr() as usize - map.as_ptr() as usize;
            // SAFETY: the mapping is private and read-only: pages given back are read again
            // from the file if touched.
            let _ = unsafe {
                map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, offset, data.len())
            };
        }
        Ok(())
    }

    fn gguf(
        path: &Path,
        header: &anatomy_checkpoint::gguf_header::Header,
        spec: &Spec,
        hold: Hold,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Weights, Error> {
        let shown = path.display().to_string();
        let content = header.content();
        let file = anatomy_checkpoint::open_regular(path)?;
        let mut reader = std::io::BufReader::new(&file);
        // The file mapped once, on the first weight held as stored in place.
        let mut map: Option<std::sync::Arc<memmap2::Mmap>> = None;
        let names: Vec<String> = content.tensor_infos.keys().cloned().collect();
        let mut w = Weights::new(HashMap::new(), Format::Gguf);
        // What llama.cpp's converter changed, undone: reordered rows, norms stored as 1 + w.
        let Some(candle_core::quantized::gguf_file::Value::String(arch)) =
            header.get("general.architecture")
        else {
            return Err(Error::file(&shown, "names no general.architecture"));
        };
        let a = anatomy_checkpoint::gguf::find(arch).ok_or_else(|| {
            Error::file(
                &shown,
                format!("architecture `{arch}` is not one anatomy reads"),
            )
        })?;
        for (i, name) in names.iter().enumerate() {
            // Read under the file's name, held under the one the model asks for.
            let key = anatomy_checkpoint::gguf::tensor_name(arch, name);
            let info = &content.tensor_infos[name];
            let rows = info.shape.dims().first().copied().unwrap_or(0);
            let order = stored_order(a, name, spec, rows);
            // Tensors transformers holds in another shape are widened to f32 in its shape (none is
            // a projection held as stored): squeezed or regrouped ones, and GPT-2's Conv1D
            // weights, multiplied [in, out] in f32, transposed by llama.cpp to [out, in].
            let dims: Vec<u64> = info.shape.dims().iter().map(|&d| d as u64).collect();
            let shape = anatomy_checkpoint::gguf::shape_as_stored(arch, name, &dims);
            let reshaped = shape != dims;
            let transposed = anatomy_checkpoint::gguf::transposed(arch, name);
            // (A square transposed matrix keeps its shape: both are asked.)
            let stored = hold == Hold::Stored && !reshaped && !transposed;
            let own = Block::of(info.ggml_dtype).filter(|_| stored);
            if let (Some(block), Ok((out, n))) = (own, info.shape.dims2()) {
                // A format `qlinear` multiplies: its bytes in place in the mapped file (rows
                // llama.cpp permuted read in their order). `data_is_sound` saw them inside it.
                let start = (content.tensor_data_offset + info.offset) as usize;
                let range = start..start + out * n / block.values() * block.bytes();
                if map.is_none() {
                    // SAFETY: a read-only mapping, which the weights hold while they live.
                    let m = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| err(&shown, e))?;
                    map = Some(std::sync::Arc::new(m));
                }
                let map = map.clone().expect("mapped above");
                // Its pages faulted in now, at load, as llama.cpp maps a model (MAP_POPULATE),
                // rather than one by one inside the first forward pass.
                #[cfg(target_os = "linux")]
                let _ = map.advise_range(memmap2::Advice::PopulateRead, range.start, range.len());
                let bytes = crate::qlinear::Bytes::Mapped(map.clone(), range);
                let mut q = QLinear::new(block, bytes, out, n);
                if let Some(order) = order {
                    q = q.and_then(|q| q.reordered(order));
                }
                let q = q.map_err(|e| err(&shown, e))?;
                w.stored.insert(key.clone(), Stored::Own(q));
                progress(i + 1, names.len());
                continue;
            }
            let mut q = content
                .tensor(&mut reader, name, &Device::Cpu)
                .map_err(|e| err(&shown, e))?;
            if q.rank() == 3 && name.contains("_exps.") {
                // A layer's experts stacked [E, out, in]: one 2-D tensor each, `name[e]`, so
                // each is multiplied on its own and only when routed to.
                for (e, part) in split_experts(&q, hold).map_err(|e| err(&shown, e))? {
                    let part_name = format!("{key}[{e}]");
                    match part {
                        Part::Stored(s) => w.stored.insert(part_name, s).map(|_| ()),
                        Part::F32(t) => w.tensors.insert(part_name, t).map(|_| ()),
                    };
                }
                progress(i + 1, names.len());
                continue;
            }
            let half = half_of(q.dtype()).filter(|_| stored);
            if let (Some(half), Ok((out, n))) = (half, q.shape().dims2()) {
                // 16-bit floats as stored (rows llama.cpp permuted put back in order).
                let data = q.data().map_err(|e| err(&shown, e))?;
                let h = half_linear(&data, half, out, n, order.as_deref());
                w.stored
                    .insert(key.clone(), Stored::Half(h.map_err(|e| err(&shown, e))?));
                progress(i + 1, names.len());
                continue;
            }
            let keep = stored && q.rank() == 2 && is_quantized(q.dtype());
            if keep {
                if let Some(order) = &order {
                    q = reorder_blocks(&q, order).map_err(|e| err(&shown, e))?;
                }
                w.stored.insert(key.clone(), Stored::Blocks(q));
            } else {
                let t = q.dequantize(&Device::Cpu).map_err(|e| err(&shown, e))?;
                let t = as_transformers_holds(
                    t,
                    a,
                    arch,
                    name,
                    order.as_deref(),
                    spec_shape(transposed, reshaped, &shape),
                )
                .map_err(|e| err(&shown, e))?;
                w.tensors.insert(key.clone(), t);
            }
            progress(i + 1, names.len());
        }
        // Types candle does not read: held as stored in blocks `qlinear` multiplies (their own
        // or int8 ones), else (a matrix transformers holds transposed or reshaped, or `--dtype
        // f32`) dequantized here to f32.
        for t in header.tensors.iter().filter(|t| t.dtype.is_none()) {
            let name = &t.name;
            let key = anatomy_checkpoint::gguf::tensor_name(arch, name);
            let kind = anatomy_checkpoint::gguf_header::type_name(t.type_id);
            let data = header.raw(&mut reader, t).map_err(|e| err(&shown, e))?;
            let dims: Vec<usize> = t.shape.iter().map(|&d| d as usize).collect();
            // Held in `qlinear`'s blocks: a matrix or each expert of a stack.
            if let (Hold::Stored, &[out, n] | &[_, out, n]) = (hold, &dims[..]) {
                let experts = dims.len() == 3;
                let transposed = anatomy_checkpoint::gguf::transposed(arch, name);
                let plain =
                    anatomy_checkpoint::gguf::shape_as_stored(arch, name, &t.shape) == t.shape;
                let whole = plain && !transposed && (!experts || name.contains("_exps."));
                if let Some((block, data)) = whole.then(|| held_blocks(t.type_id, &data)).flatten()
                {
                    let order = stored_order(a, name, spec, out).filter(|_| !experts);
                    let each = data.len() / dims[0].max(1);
                    let parts: Vec<&[u8]> = match experts {
                        true => data.chunks_exact(each).collect(),
                        false => vec![&data[..]],
                    };
                    for (e, bytes) in parts.into_iter().enumerate() {
                        let mut q = QLinear::new(block, bytes.to_vec(), out, n);
                        if let Some(order) = &order {
                            q = q.and_then(|q| q.reordered(order.clone()));
                        }
                        let part_name = if experts {
                            format!("{key}[{e}]")
                        } else {
                            key.clone()
                        };
                        w.stored
                            .insert(part_name, Stored::Own(q.map_err(|e| err(&shown, e))?));
                    }
                    continue;
                }
            }
            let values = anatomy_checkpoint::dequant::dequantize(t.type_id, &data).ok_or_else(|| {
                Error::file(
                    &shown,
                    format!(
                        "{name} is stored as {kind}, which anatomy cannot run; it runs {} besides candle's types",
                        anatomy_checkpoint::dequant::TYPES.map(|(_, n)| n).join(", ")
                    ),
                )
            })?;
            if let (&[experts, out, n], true) = (&dims[..], name.contains("_exps.")) {
                // A layer's experts stacked [E, out, in]: one matrix each, `name[e]`, as
                // `split_experts` holds candle's types.
                for (e, part) in values.chunks_exact(out * n).take(experts).enumerate() {
                    let t = Tensor::from_slice(part, (out, n), &Device::Cpu)
                        .map_err(|e| err(&shown, e))?;
                    w.tensors.insert(format!("{key}[{e}]"), t);
                }
                continue;
            }
            let rows = dims.first().copied().unwrap_or(0);
            let order = stored_order(a, name, spec, rows);
            let shape = anatomy_checkpoint::gguf::shape_as_stored(arch, name, &t.shape);
            let reshaped = shape != t.shape;
            let transposed = anatomy_checkpoint::gguf::transposed(arch, name);
            let t = Tensor::from_vec(values, dims, &Device::Cpu).map_err(|e| err(&shown, e))?;
            let t = as_transformers_holds(
                t,
                a,
                arch,
                name,
                order.as_deref(),
                spec_shape(transposed, reshaped, &shape),
            )
            .map_err(|e| err(&shown, e))?;
            w.tensors.insert(key, t);
        }
        Ok(w)
    }

    /// Keep the stored tensors `which` accepts for the quantized matmul, and dequantize the
    /// others (the embedding, which is looked up by row, and any not multiplied by `linear`).
    pub fn keep_quantized(&mut self, which: impl Fn(&str) -> bool) -> Result<(), Error> {
        for (name, s) in std::mem::take(&mut self.stored) {
            if which(&name) {
                let m = Quantized::new(s).map_err(|e| err(&name, e))?;
                self.quantized.insert(name, m);
            } else {
                let t = match s {
                    Stored::Blocks(q) => q.dequantize(&Device::Cpu),
                    Stored::Half(h) => h.dequantize(),
                    Stored::Fp8(f) => f.dequantize(),
                    Stored::Own(q) => q.dequantize(),
                };
                let t = t.map_err(|e| err(&name, e))?;
                self.tensors.insert(name, t);
            }
        }
        Ok(())
    }

    /// How the weights are held, for `run` to say: "f32", or the stored formats kept with
    /// their tensor counts ("stored format (Q4_1 × 210 projections), the rest f32").
    pub fn held(&self) -> String {
        let mut by: std::collections::BTreeMap<String, usize> = Default::default();
        for m in self.quantized.values() {
            *by.entry(m.format()).or_default() += 1;
        }
        if by.is_empty() {
            return "f32".into();
        }
        let kinds: Vec<String> = by.iter().map(|(k, n)| format!("{k} × {n}")).collect();
        format!(
            "stored format ({} projections), the rest f32",
            kinds.join(", ")
        )
    }

    pub fn new(tensors: HashMap<String, Tensor>, format: Format) -> Weights {
        Weights {
            tensors,
            packed: HashMap::new(),
            stored: HashMap::new(),
            quantized: HashMap::new(),
            format,
            fp8_names: Default::default(),
            fp8_raw: HashMap::new(),
        }
    }

    /// The tensors `which` accepts, moved into weights of their own (BLT's stacks).
    pub fn take(&mut self, which: impl Fn(&str) -> bool) -> Weights {
        let mut own = Weights::new(HashMap::new(), self.format);
        let (mine, rest) = std::mem::take(&mut self.tensors)
            .into_iter()
            .partition(|(name, _)| which(name));
        (own.tensors, self.tensors) = (mine, rest);
        let (mine, rest) = std::mem::take(&mut self.stored)
            .into_iter()
            .partition(|(name, _)| which(name));
        (own.stored, self.stored) = (mine, rest);
        own
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

/// A 2-D tensor as a checkpoint stores it.
pub enum Stored {
    /// In a GGUF's quantized blocks, for candle's kernels.
    Blocks(QTensor),
    /// In a GGUF's quantized blocks, for `qlinear`'s.
    Own(QLinear),
    /// In 16-bit floats.
    Half(HalfLinear),
    /// In fp8 with block scales.
    Fp8(Fp8Linear),
}

/// A projection weight as stored, with the kernel that multiplies it.
pub enum Quantized {
    Own(QLinear),
    Candle(QMatMul),
    Half(HalfLinear),
    Fp8(Fp8Linear),
}

impl Quantized {
    fn new(s: Stored) -> candle_core::Result<Quantized> {
        let q = match s {
            Stored::Half(h) => return Ok(Quantized::Half(h)),
            Stored::Fp8(f) => return Ok(Quantized::Fp8(f)),
            Stored::Own(q) => return Ok(Quantized::Own(q)),
            Stored::Blocks(q) => q,
        };
        match Block::of(q.dtype()) {
            Some(block) => {
                let (out, n) = q.shape().dims2()?;
                let data = q.data()?.into_owned();
                Ok(Quantized::Own(QLinear::new(block, data, out, n)?))
            }
            None => Ok(Quantized::Candle(QMatMul::from_qtensor(q)?)),
        }
    }

    /// `x · Wᵀ` for `x` [m, n].
    pub fn times(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        match self {
            Quantized::Own(q) => q.times(x),
            Quantized::Half(h) => h.times(x),
            Quantized::Fp8(f) => f.times(x),
            // Candle's quantized kernels: a 2-D input, contiguous.
            Quantized::Candle(q) => candle_core::Module::forward(q, &x.contiguous()?),
        }
    }

    /// Rows `ids` of `W`, dequantized: an embedding lookup.
    pub fn rows(&self, ids: &[u32]) -> candle_core::Result<Tensor> {
        match self {
            Quantized::Own(q) => q.rows(ids),
            Quantized::Half(h) => h.rows(ids),
            Quantized::Fp8(f) => f.rows(ids),
            Quantized::Candle(q) => q.embedding(&Tensor::new(ids, &Device::Cpu)?),
        }
    }

    /// The stored format's name, as GGUF tools write it ("Q4_1", "Q6K").
    fn format(&self) -> String {
        match self {
            Quantized::Own(q) => q.block().name().to_string(),
            Quantized::Half(h) => format!("{:?}", h.half()).to_uppercase(),
            Quantized::Fp8(_) => "F8_E4M3".into(),
            // candle writes Q5K for GGUF's Q5_K.
            Quantized::Candle(QMatMul::QTensor(q)) => format!("{:?}", q.dtype()).replace('K', "_K"),
            Quantized::Candle(_) => "f32".into(),
        }
    }
}

/// The rows and columns of an fp8 weight's scale blocks: the config's
/// `quantization_config.weight_block_size`, else DeepSeek-V3's 128 × 128.
fn fp8_block(config: &serde_json::Value, file: &str) -> Result<(usize, usize), Error> {
    let Some(v) = config.pointer("/quantization_config/weight_block_size") else {
        return Ok((128, 128));
    };
    match v
        .as_array()
        .map(|a| a.iter().map(|x| x.as_u64()).collect::<Vec<_>>())
        .as_deref()
    {
        Some([Some(r), Some(c)]) if *r > 0 && *c > 0 && *r <= 1 << 20 && *c <= 1 << 20 => {
            Ok((*r as usize, *c as usize))
        }
        _ => Err(Error::new(
            file,
            "quantization_config.weight_block_size",
            format!("is {v}; it must be [rows, columns], two positive integers"),
        )),
    }
}

/// A tensor's shape and bytes, as stored.
type Raw = (Vec<usize>, Vec<u8>);

/// One of the two tensors of an MXFP4 weight (gpt-oss): `X_blocks` or `X_scales`, bytes.
fn is_mxfp4_part(name: &str, bytes: bool) -> bool {
    bytes && (name.ends_with("_blocks") || name.ends_with("_scales"))
}

/// One expert's slab of a stacked tensor.
enum Part {
    Stored(Stored),
    F32(Tensor),
}

/// The experts of a stacked [E, out, in] tensor, each [out, in]: held as stored, in their blocks
/// or 16-bit floats (a row's values run along it, so an expert's are a contiguous run of bytes),
/// or in f32.
fn split_experts(q: &QTensor, hold: Hold) -> candle_core::Result<Vec<(usize, Part)>> {
    let (experts, out, n) = q.shape().dims3()?;
    let half = half_of(q.dtype());
    if hold == Hold::Stored && (is_quantized(q.dtype()) || half.is_some()) {
        let data = q.data()?;
        let each = data.len() / experts.max(1);
        (0..experts)
            .map(|e| {
                let bytes = &data[e * each..(e + 1) * each];
                let part = match half {
                    Some(half) => Stored::Half(half_linear(bytes, half, out, n, None)?),
                    None => {
                        let bytes = std::borrow::Cow::Owned(bytes.to_vec());
                        let storage = QStorage::from_data(bytes, &Device::Cpu, q.dtype())?;
                        Stored::Blocks(QTensor::new(storage, (out, n))?)
                    }
                };
                Ok((e, Part::Stored(part)))
            })
            .collect()
    } else {
        let t = q.dequantize(&Device::Cpu)?;
        (0..experts)
            .map(|e| Ok((e, Part::F32(t.get(e)?.contiguous()?))))
            .collect()
    }
}

/// ggml type `id`'s `data` in blocks `qlinear` multiplies: MXFP4 (gpt-oss's experts), IQ4_NL
/// and IQ4_XS as ggml stores them, the other i-quants and ternary types as their integers
/// (`int8_blocks`); `None` for the types candle reads.
fn held_blocks(id: u32, data: &[u8]) -> Option<(Block, std::borrow::Cow<'_, [u8]>)> {
    use anatomy_checkpoint::dequant::{integers, scales_by_16};
    match Block::of_ggml(id) {
        Some(block) => Some((block, std::borrow::Cow::Borrowed(data))),
        None => integers(id, data).map(|values| {
            let (block, bytes) = int8_blocks(&values, scales_by_16(id));
            (block, std::borrow::Cow::Owned(bytes))
        }),
    }
}

/// How a dequantized tensor is turned to the shape transformers holds: transposed, or reshaped.
enum Turn {
    Keep,
    Transpose,
    Reshape(Vec<usize>),
}

fn spec_shape(transposed: bool, reshaped: bool, shape: &[u64]) -> Turn {
    match (transposed, reshaped) {
        (true, _) => Turn::Transpose,
        (false, true) => Turn::Reshape(shape.iter().map(|&d| d as usize).collect()),
        (false, false) => Turn::Keep,
    }
}

/// A GGUF tensor, dequantized, as transformers holds it: rows llama.cpp permuted put back,
/// transposed or reshaped, A_log from A, norms less the 1 llama.cpp added.
fn as_transformers_holds(
    mut t: Tensor,
    a: &anatomy_checkpoint::gguf::Architecture,
    arch: &str,
    name: &str,
    order: Option<&[u32]>,
    turn: Turn,
) -> candle_core::Result<Tensor> {
    if let Some(order) = order {
        t = reorder(&t, order)?;
    }
    t = match turn {
        Turn::Transpose => t.t()?.contiguous()?,
        Turn::Reshape(shape) => t.reshape(shape)?,
        Turn::Keep => t,
    };
    if anatomy_checkpoint::gguf::holds_a_not_its_log(arch, name) {
        // A = −exp(A_log), back to A_log.
        t = t.neg()?.log()?;
    }
    if a.norms_plus_one && name.ends_with("norm.weight") {
        t = t.affine(1.0, -1.0)?;
    }
    Ok(t)
}

/// The 16-bit float a GGUF type is, if it is one.
fn half_of(t: GgmlDType) -> Option<Half> {
    match t {
        GgmlDType::F16 => Some(Half::F16),
        GgmlDType::BF16 => Some(Half::Bf16),
        _ => None,
    }
}

/// A 16-bit float matrix [out, n] from its little-endian bytes, row o being stored row
/// `order[o]` where an order is given.
fn half_linear(
    bytes: &[u8],
    half: Half,
    out: usize,
    n: usize,
    order: Option<&[u32]>,
) -> candle_core::Result<HalfLinear> {
    if Some(bytes.len()) != out.checked_mul(n).and_then(|v| v.checked_mul(2)) {
        candle_core::bail!("{half:?} weight [{out}, {n}] has {} bytes", bytes.len())
    }
    let row = |r: usize| {
        bytes[r * n * 2..][..n * 2]
            .chunks_exact(2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    };
    let bits: Vec<u16> = match order {
        Some(order) => order.iter().flat_map(|&r| row(r as usize)).collect(),
        None => (0..out).flat_map(row).collect(),
    };
    HalfLinear::new(half, bits, out, n)
}

/// A block-quantized format (candle's quantized kernels multiply it), not a float one.
fn is_quantized(t: GgmlDType) -> bool {
    !matches!(t, GgmlDType::F32 | GgmlDType::F16 | GgmlDType::BF16)
}

/// How llama.cpp's converter reordered the `rows` rows of tensor `name`, as the order that
/// puts them back (row r in transformers' order is the file's row order[r]), if it did: Q and K
/// (`qk_permuted`), a fused Q/K/V and its bias (`qkv_regrouped`).
fn stored_order(
    a: &anatomy_checkpoint::gguf::Architecture,
    name: &str,
    spec: &Spec,
    rows: usize,
) -> Option<Vec<u32>> {
    let heads = spec.attn.heads as usize;
    if a.qk_permuted && name.ends_with("attn_q.weight") {
        Some(llama_order(rows, heads))
    } else if a.qk_permuted && name.ends_with("attn_k.weight") {
        Some(llama_order(rows, spec.attn.kv_heads as usize))
    } else if a.qkv_regrouped
        && (name.ends_with("attn_qkv.weight") || name.ends_with("attn_qkv.bias"))
    {
        Some(qkv_order(rows, heads, spec.attn.kv_heads as usize))
    } else {
        None
    }
}

/// A quantized tensor's rows in `order`, whole (a block runs along a row).
fn reorder_blocks(q: &QTensor, order: &[u32]) -> candle_core::Result<QTensor> {
    let (rows, cols) = q.shape().dims2()?;
    let data = q.data()?;
    let row = data.len() / rows.max(1);
    let out: Vec<u8> = order
        .iter()
        .flat_map(|&r| &data[r as usize * row..][..row])
        .copied()
        .collect();
    let storage = QStorage::from_data(std::borrow::Cow::Owned(out), &Device::Cpu, q.dtype())?;
    QTensor::new(storage, (rows, cols))
}

/// A tensor's rows (its first dimension) in `order`.
fn reorder(w: &Tensor, order: &[u32]) -> candle_core::Result<Tensor> {
    w.index_select(&Tensor::new(order, &Device::Cpu)?, 0)
}

/// Where each row of a fused Q/K/V weight (or bias) of `heads` query heads and `kv` K/V heads
/// is stored in a GGUF whose converter regroups them: transformers keeps each K/V group
/// together (its heads / kv queries, then its key, then its value: GPT-NeoX's and BLOOM's
/// [heads, 3, head], Falcon's groups, one for multi-query), llama.cpp all queries, then all
/// keys, then all values.
fn qkv_order(rows: usize, heads: usize, kv: usize) -> Vec<u32> {
    let kv = kv.max(1);
    let (head, per) = (rows / (heads + 2 * kv), heads / kv);
    let mut order = Vec::with_capacity(rows);
    for g in 0..kv {
        let stored = (0..per)
            .map(|i| g * per + i)
            .chain([heads + g, heads + kv + g]);
        for s in stored {
            order.extend((0..head).map(|d| (s * head + d) as u32));
        }
    }
    order
}

/// Where each row of a Q or K weight of `heads` heads is stored in a llama GGUF: row (h, i, j)
/// of transformers' [heads, 2, half] order is stored row (h, j, i) of llama.cpp's
/// [heads, half, 2] (its `permute`, which interleaves the two rotary halves).
fn llama_order(rows: usize, heads: usize) -> Vec<u32> {
    let half = rows / heads.max(1) / 2;
    let mut order = Vec::with_capacity(rows);
    for h in 0..heads {
        for i in 0..2 {
            for j in 0..half {
                order.push(((h * half + j) * 2 + i) as u32);
            }
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Module;
    use proptest::prelude::*;

    /// Every block format candle multiplies, as `Hold::Stored` keeps them.
    const FORMATS: [GgmlDType; 10] = [
        GgmlDType::Q4_0,
        GgmlDType::Q4_1,
        GgmlDType::Q5_0,
        GgmlDType::Q5_1,
        GgmlDType::Q8_0,
        GgmlDType::Q2K,
        GgmlDType::Q3K,
        GgmlDType::Q4K,
        GgmlDType::Q5K,
        GgmlDType::Q6K,
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// The quantized matmul of each format against a double-precision product with the
        /// weights it stores (dequantized): the kernels quantize the input to 8 bits per block,
        /// each value within max|x| / 254 of itself, so each output is within
        /// max|x| / 254 · Σ|w| (plus f32 rounding) of the exact product.
        #[test]
        fn quantized_products_match_a_double_precision_sum(
            m in 1usize..6, out in 1usize..9, blocks in 1usize..3, seed in 0u64..1000
        ) {
            let n = 256 * blocks;
            let x = crate::uniform(seed, m * n, 1.0);
            let w = crate::uniform(seed + 1, out * n, 1.0);
            let xt = Tensor::from_vec(x.clone(), (m, n), &Device::Cpu).unwrap();
            let wt = Tensor::from_vec(w, (out, n), &Device::Cpu).unwrap();
            for format in FORMATS {
                let q = QTensor::quantize(&wt, format).unwrap();
                let wd: Vec<f32> = q.dequantize(&Device::Cpu).unwrap().flatten_all().unwrap().to_vec1().unwrap();
                let y: Vec<f32> = QMatMul::from_qtensor(q).unwrap().forward(&xt).unwrap().flatten_all().unwrap().to_vec1().unwrap();
                let xmax = x.iter().fold(0f64, |a, v| a.max(v.abs() as f64));
                for i in 0..m {
                    for o in 0..out {
                        let row = &wd[o * n..(o + 1) * n];
                        let want: f64 = (0..n).map(|c| x[i * n + c] as f64 * row[c] as f64).sum();
                        let mass: f64 = row.iter().map(|v| v.abs() as f64).sum();
                        let tol = xmax / 254.0 * mass * 1.01 + 1e-5 * (1.0 + mass * xmax);
                        let got = y[i * out + o] as f64;
                        prop_assert!((got - want).abs() <= tol, "{format:?} [{i},{o}] of {m}×{out}×{n}: {got} vs {want} (tolerance {tol})");
                    }
                }
            }
        }
    }

    fn values(t: &Tensor) -> Vec<f32> {
        t.flatten_all().unwrap().to_vec1().unwrap()
    }

    /// llama.cpp's `permute` (convert_hf_to_gguf.py: reshape to [heads, 2, half, n], swap
    /// axes 1 and 2), undone in each of the three ways a GGUF's Q and K are read: f32 rows,
    /// candle's blocks copied in order, and `qlinear`'s blocks read in place through the order.
    #[test]
    fn llama_permuted_rows_are_read_back_in_order_every_way() {
        let (heads, rows, n) = (2, 8, 64);
        let w =
            Tensor::from_vec(crate::uniform(7, rows * n, 1.0), (rows, n), &Device::Cpu).unwrap();
        let w = QTensor::quantize(&w, GgmlDType::Q8_0)
            .unwrap()
            .dequantize(&Device::Cpu)
            .unwrap();
        let permuted = w
            .reshape((heads, 2, rows / heads / 2, n))
            .and_then(|t| t.transpose(1, 2)?.contiguous()?.reshape((rows, n)))
            .unwrap();
        let q = QTensor::quantize(&permuted, GgmlDType::Q8_0).unwrap();
        let want = values(&w);
        assert_ne!(values(&permuted), want, "the permutation moves rows");
        assert_eq!(
            values(&reorder(&permuted, &llama_order(rows, heads)).unwrap()),
            want
        );
        let blocks = reorder_blocks(&q, &llama_order(rows, heads)).unwrap();
        assert_eq!(values(&blocks.dequantize(&Device::Cpu).unwrap()), want);
        let own = QLinear::new(Block::Q8_0, q.data().unwrap().into_owned(), rows, n)
            .and_then(|l| l.reordered(llama_order(rows, heads)))
            .unwrap();
        assert_eq!(values(&own.dequantize().unwrap()), want);
        // A product comes out in order too, equal to the one on rows copied in order.
        let copied =
            QLinear::new(Block::Q8_0, blocks.data().unwrap().into_owned(), rows, n).unwrap();
        let x = Tensor::from_vec(crate::uniform(8, 3 * n, 1.0), (3, n), &Device::Cpu).unwrap();
        assert_eq!(
            values(&own.times(&x).unwrap()),
            values(&copied.times(&x).unwrap())
        );
    }

    #[test]
    fn a_row_order_must_be_an_order_of_the_rows() {
        let q = || QLinear::new(Block::Q8_0, vec![0u8; 3 * 34], 3, 32).unwrap();
        assert!(q().reordered(vec![2, 0, 1]).is_ok());
        assert!(q().reordered(vec![0, 0, 1]).is_err());
        assert!(q().reordered(vec![0, 1]).is_err());
        assert!(q().reordered(vec![0, 1, 3]).is_err());
    }
}
