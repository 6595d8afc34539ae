//! Matrices a quantized safetensors checkpoint stores packed (GPTQ, AWQ, compressed-tensors,
//! MLX), read as codes with a scale and an offset per group, w = scale · code + offset, the
//! affine form each format's reference dequantizes by (GPTQModel's `dequantize_weight`,
//! AutoAWQ's `dequantize_gemm`, compressed-tensors' `PackedQuantizationCompressor.decompress`,
//! `mlx.core.dequantize`). Then either f32 `[out, in]`, or, held as stored, 4-bit codes in groups
//! of a multiple of 32 inputs as Q4_0 blocks (symmetric: exact) or Q4_1 blocks (the scale and
//! offset rounded to f16) for `qlinear`'s kernels.

use crate::floatlinear::{to_e4m3, Fp8Linear};
use crate::qlinear::{Block, QLinear};
use crate::weights::Stored;
use anatomy_core::quant::{BnbKind, Fp8Scale, Groups, Packing, Quant};
use anatomy_core::Error;
use candle_core::{Device, Tensor};
use std::collections::HashMap;

/// A matrix `[out, inp]` as codes: w[o, i] = scale[o, g] · code[o, i] + offset[o, g], g = group[i].
struct Codes {
    out: usize,
    inp: usize,
    bits: usize,
    codes: Vec<u8>,
    groups: usize,
    group: Vec<usize>,
    scale: Vec<f32>,
    offset: Vec<f32>,
}

impl Codes {
    fn new(out: usize, inp: usize, bits: usize, groups: usize, group: Vec<usize>) -> Codes {
        Codes {
            out,
            inp,
            bits,
            codes: vec![0; out * inp],
            groups,
            group,
            scale: vec![0.0; out * groups],
            offset: vec![0.0; out * groups],
        }
    }

    /// Groups of `group` inputs in order.
    fn grouped(out: usize, inp: usize, bits: usize, group: usize) -> Codes {
        let group = group.max(1);
        Codes::new(
            out,
            inp,
            bits,
            inp.div_ceil(group),
            (0..inp).map(|i| i / group).collect(),
        )
    }

    fn set(&mut self, o: usize, g: usize, scale: f32, offset: f32) {
        self.scale[o * self.groups + g] = scale;
        self.offset[o * self.groups + g] = offset;
    }

    fn dequantize(&self) -> Vec<f32> {
        let mut w = vec![0f32; self.out * self.inp];
        for o in 0..self.out {
            for i in 0..self.inp {
                let g = o * self.groups + self.group[i];
                w[o * self.inp + i] =
                    self.scale[g] * self.codes[o * self.inp + i] as f32 + self.offset[g];
            }
        }
        w
    }

    /// As blocks where every run of a block's inputs shares one group (4-bit codes, the inputs
    /// a multiple of the block): INT4_G128 (f16 d and m for 128 values, the value d · code + m,
    /// m rounded to f16) where every 128 share one, else Q4_0 (f16 d, then byte j holding codes
    /// j and j + 16, the value d · (code − 8)) where every offset is −8 · scale and every scale
    /// an f16 (symmetric GPTQ: exact), else INT4_G64 where every 64 share one, else Q4_1 (f16 d
    /// and m for 32 values). Symmetric 8-bit codes as Q8_0 (`q8_0`), any other width as
    /// INT8_F32_MIN (`int8_min`).
    fn blocks(&self) -> Option<(Block, Vec<u8>, f32)> {
        let shared = |run: usize| {
            self.inp.is_multiple_of(run)
                && (self.group.chunks_exact(run)).all(|g| g.iter().all(|&x| x == g[0]))
        };
        let f16 = |v: f32| half::f16::from_f32(v);
        if !shared(32) {
            return None;
        }
        match self.bits {
            4 => {}
            8 => return self.q8_0().or_else(|| self.int8_min()),
            _ => return self.int8_min(),
        }
        let symmetric = (self.scale.iter().zip(&self.offset))
            .all(|(&s, &m)| m == -8.0 * s && f16(s).to_f32() == s);
        let block = match (shared(128), shared(64), symmetric) {
            (true, _, _) => Block::Int4G128,
            (false, true, false) => Block::Int4G64,
            (false, _, true) => Block::Q4_0,
            (false, false, false) => Block::Q4_1,
        };
        let (values, blocks) = (block.values(), self.inp / block.values());
        let mut data = Vec::with_capacity(self.out * blocks * block.bytes());
        for o in 0..self.out {
            for k in 0..blocks {
                let g = o * self.groups + self.group[values * k];
                data.extend(f16(self.scale[g]).to_le_bytes());
                if block.has_min() {
                    data.extend(f16(self.offset[g]).to_le_bytes());
                }
                for c in self.codes[o * self.inp + values * k..][..values].chunks_exact(32) {
                    data.extend((0..16).map(|j| c[j] | c[j + 16] << 4));
                }
            }
        }
        Some((block, data, 1.0))
    }

    /// As stored, for `qlinear`, where `blocks` holds the codes, in their order or, where a
    /// group's inputs are scattered (act-order's `g_idx`), gathered group by group.
    fn held(&self) -> Option<QLinear> {
        if let Some((block, data, unit)) = self.blocks() {
            return Some(
                QLinear::new(block, data, self.out, self.inp)
                    .ok()?
                    .scaled(unit),
            );
        }
        let (codes, inputs) = self.gathered()?;
        let (block, data, unit) = codes.blocks()?;
        let q = QLinear::new(block, data, self.out, self.inp).ok()?;
        q.scaled(unit).gathered(inputs).ok()
    }

    /// The codes with each row's inputs sorted by group (in order within one), and the input
    /// each column now holds; `None` where they are sorted already.
    fn gathered(&self) -> Option<(Codes, Vec<u32>)> {
        let mut inputs: Vec<u32> = (0..self.inp as u32).collect();
        inputs.sort_by_key(|&i| self.group[i as usize]);
        if inputs.iter().enumerate().all(|(k, &i)| k == i as usize) {
            return None;
        }
        let group = inputs.iter().map(|&i| self.group[i as usize]).collect();
        let mut c = Codes::new(self.out, self.inp, self.bits, self.groups, group);
        for o in 0..self.out {
            let row = &self.codes[o * self.inp..][..self.inp];
            let to = &mut c.codes[o * self.inp..][..self.inp];
            for (t, &i) in to.iter_mut().zip(&inputs) {
                *t = row[i as usize];
            }
        }
        (c.scale, c.offset) = (self.scale.clone(), self.offset.clone());
        Some((c, inputs))
    }

    /// Codes of any width up to 8 as INT8_F32_MIN blocks, each 32's scale and offset as stored
    /// (w = d · q + m); 8-bit codes less 128, the offset taking 128 · d back.
    fn int8_min(&self) -> Option<(Block, Vec<u8>, f32)> {
        if self.bits > 8 {
            return None;
        }
        let shift: i32 = if self.bits == 8 { 128 } else { 0 };
        let blocks = self.inp / 32;
        let mut data = Vec::with_capacity(self.out * blocks * Block::Int8F32Min.bytes());
        for o in 0..self.out {
            for k in 0..blocks {
                let g = o * self.groups + self.group[32 * k];
                let (d, m) = (self.scale[g], self.offset[g] + shift as f32 * self.scale[g]);
                data.extend(d.to_le_bytes().into_iter().chain(m.to_le_bytes()));
                let codes = &self.codes[o * self.inp + 32 * k..][..32];
                data.extend(codes.iter().map(|&c| (c as i32 - shift) as u8));
            }
        }
        Some((Block::Int8F32Min, data, 1.0))
    }

    /// 8-bit codes offset by 128 (w = scale · (code − 128), every offset −128 · scale) as Q8_0
    /// blocks: each 32's scale over the largest rounded to f16 (2⁻¹¹ of it: f32 scales as
    /// LLM.int8() stores them, so small ones do not fall to f16's subnormals), the codes exact;
    /// the largest scale the weight's own.
    fn q8_0(&self) -> Option<(Block, Vec<u8>, f32)> {
        let symmetric = (self.scale.iter().zip(&self.offset)).all(|(&s, &m)| m == -128.0 * s);
        if !symmetric {
            return None;
        }
        let unit = self.scale.iter().fold(0f32, |m, s| m.max(s.abs()));
        let unit = if unit > 0.0 && unit.is_finite() {
            unit
        } else {
            1.0
        };
        let blocks = self.inp / 32;
        let mut data = Vec::with_capacity(self.out * blocks * Block::Q8_0.bytes());
        for o in 0..self.out {
            for k in 0..blocks {
                let g = o * self.groups + self.group[32 * k];
                data.extend(half::f16::from_f32(self.scale[g] / unit).to_le_bytes());
                let codes = &self.codes[o * self.inp + 32 * k..][..32];
                data.extend(codes.iter().map(|&c| c.wrapping_sub(128)));
            }
        }
        Some((Block::Q8_0, data, unit))
    }
}

/// Integer tensors as stored: shape and 32-bit words (int32 and uint32 alike; int64 narrowed,
/// which only `weight_shape` uses; uint8 widened, a value a word: bitsandbytes' codes and state).
pub type Ints = HashMap<String, (Vec<usize>, Vec<u32>)>;

/// Bits `[at·bits, at·bits + bits)` of a little-endian stream of words: compressed-tensors' and
/// MLX's dense packing, AWQ's words of 32/bits values, and GPTQ's columns (its 3-bit values
/// crossing from one word into the next).
fn field(words: &[u32], at: usize, bits: usize) -> u32 {
    let (bit, word) = (at * bits % 32, at * bits / 32);
    let low = (words[word] as u64) >> bit;
    let high = match bit + bits > 32 {
        true => (words[word + 1] as u64) << (32 - bit),
        false => 0,
    };
    ((low | high) & ((1u64 << bits) - 1)) as u32
}

/// AutoAWQ's GEMM packing: the k-th 4-bit field of a word holds output 8·w + ORDER[k].
const AWQ_ORDER: [usize; 8] = [0, 2, 4, 6, 1, 3, 5, 7];

struct Parts<'a> {
    module: &'a str,
    shown: &'a str,
    ints: &'a mut Ints,
    floats: &'a mut HashMap<String, Tensor>,
}

impl Parts<'_> {
    fn bad(&self, what: String) -> Error {
        Error::file(self.shown, format!("{}: {what}", self.module))
    }

    fn ints(&mut self, part: &str, shape: &[usize]) -> Result<Vec<u32>, Error> {
        let name = format!("{}.{part}", self.module);
        let (dims, words) = self
            .ints
            .remove(&name)
            .ok_or_else(|| self.bad(format!("{name} is missing or not stored as integers")))?;
        if dims != shape {
            return Err(self.bad(format!(
                "{name} is {dims:?}; this format stores it {shape:?}"
            )));
        }
        Ok(words)
    }

    fn floats(&mut self, part: &str, shape: &[usize]) -> Result<Vec<f32>, Error> {
        let name = format!("{}.{part}", self.module);
        let t = self
            .floats
            .remove(&name)
            .ok_or_else(|| self.bad(format!("{name} is missing")))?;
        if t.dims() != shape {
            return Err(self.bad(format!(
                "{name} is {:?}; this format stores it {shape:?}",
                t.dims()
            )));
        }
        t.flatten_all()
            .and_then(|t| t.to_vec1())
            .map_err(|e| self.bad(e.to_string()))
    }
}

/// The stored tensor each packed matrix of `quant` is found by; a format `unpack` does not read
/// is refused here, before any tensor is loaded.
pub fn primary(quant: &Quant, shown: &str) -> Result<&'static str, Error> {
    Ok(match quant {
        Quant::Gptq { .. } | Quant::Awq { .. } => "qweight",
        Quant::Compressed { .. } => "weight_packed",
        Quant::Mlx { .. } => "weight",
        Quant::Bnb(b) => match b.kind {
            BnbKind::Nf4 => "weight.quant_state.bitsandbytes__nf4",
            BnbKind::Fp4 => "weight.quant_state.bitsandbytes__fp4",
            BnbKind::Int8 => "weight_format",
        },
        // The loader reads fine-grained fp8 by itself (`Weights::fp8`).
        Quant::Fp8 { .. } => {
            return Err(Error::file(
                shown,
                "holds fp8 weights beside their scales, which the loader reads, not `unpack`",
            ))
        }
        Quant::Unread(method) => {
            return Err(Error::file(
                shown,
                format!("is stored as {method}, whose packing anatomy does not read yet"),
            ))
        }
    })
}

/// Each of MLX's stacks of experts (`switch_mlp.*`: `weight` `[E, out, cols]`, `scales` and
/// `biases` `[E, out, groups]`) split into the per-expert matrices the graph reads
/// (`experts.{e}.*`), each then unpacked as any MLX matrix.
pub fn split_stacks(
    stacks: &[anatomy_core::quant::MlxStack],
    ints: &mut Ints,
    floats: &mut HashMap<String, Tensor>,
    shown: &str,
) -> Result<(), Error> {
    for s in stacks {
        let Some((dims, words)) = ints.remove(&format!("{}.weight", s.stacked)) else {
            continue;
        };
        let bad = |what: String| Error::file(shown, format!("{}: {what}", s.stacked));
        let &[experts, out, cols] = dims.as_slice() else {
            return Err(bad(format!(
                "weight is {dims:?}; a stack of experts is [experts, out, in·bits/32]"
            )));
        };
        if experts as u64 != s.experts {
            return Err(bad(format!(
                "stacks {experts} experts; the config has {}",
                s.experts
            )));
        }
        let each = |e: usize| s.each.replace("{e}", &e.to_string());
        for (e, part) in words.chunks_exact(out * cols).enumerate() {
            ints.insert(
                format!("{}.weight", each(e)),
                (vec![out, cols], part.to_vec()),
            );
        }
        for part in ["scales", "biases"] {
            let name = format!("{}.{part}", s.stacked);
            let t = floats
                .remove(&name)
                .ok_or_else(|| bad(format!("{name} is missing")))?;
            if t.dims().first() != Some(&experts) {
                return Err(bad(format!(
                    "{name} is {:?}; it stacks {experts} experts",
                    t.dims()
                )));
            }
            for e in 0..experts {
                let one = t.get(e).map_err(|x| bad(x.to_string()))?;
                floats.insert(format!("{}.{part}", each(e)), one);
            }
        }
    }
    Ok(())
}

/// Every packed matrix of `ints` replaced by its weight `{module}.weight`: in `stored` as Q4_0
/// or Q4_1 blocks where `stored` is given and the codes fit them, else in `floats` in f32.
pub fn unpack(
    quant: &Quant,
    ints: &mut Ints,
    floats: &mut HashMap<String, Tensor>,
    mut stored: Option<&mut HashMap<String, Stored>>,
    shown: &str,
) -> Result<(), Error> {
    let primary = primary(quant, shown)?;
    let mut modules: Vec<String> = ints
        .keys()
        .filter_map(|k| k.strip_suffix(&format!(".{primary}")).map(str::to_string))
        .collect();
    modules.sort();
    for module in modules {
        let mut p = Parts {
            module: &module,
            shown,
            ints,
            floats,
        };
        let c =
            match quant {
                Quant::Gptq { v1, auto_round, .. } => {
                    match quant.gptq_groups(&module) {
                        Some(g) => gptq(&mut p, g, *v1, !auto_round)?,
                        None => return Err(p.bad(
                            "is stored packed where the config's `dynamic` leaves it unquantized"
                                .into(),
                        )),
                    }
                }
                Quant::Awq {
                    groups: g, gemv, ..
                } => {
                    if !g.zeros {
                        // AutoAWQ's packers assert zero points: no library writes such a layout.
                        return Err(p.bad(
                            "is AWQ without zero points, which anatomy does not unpack yet".into(),
                        ));
                    }
                    match gemv {
                        true => awq_gemv(&mut p, g.bits as usize, g.group)?,
                        false => awq(&mut p, g.bits as usize, g.group)?,
                    }
                }
                // NVFP4: e2m1 codes, held as stored in `qlinear`'s NVFP4 blocks, or dequantized as
                // its reference does.
                Quant::Compressed { .. }
                    if p.floats
                        .contains_key(&format!("{module}.weight_global_scale")) =>
                {
                    let m = Nvfp4::read(&mut p)?;
                    hold_own(stored.as_deref_mut(), floats, (shown, &module), &m)?;
                    continue;
                }
                Quant::Compressed { .. } => compressed(&mut p, quant)?,
                Quant::Mlx { .. } => match quant.mlx_layer(&module) {
                    Some((bits, group)) => mlx(&mut p, bits as usize, group as usize)?,
                    None => return Err(p.bad(
                        "is stored packed where the config's quantization leaves it unquantized"
                            .into(),
                    )),
                },
                Quant::Bnb(b) if b.kind == BnbKind::Int8 => bnb8(&mut p)?,
                // A code book, not an affine map: held in NF4 or FP4 blocks, or dequantized.
                Quant::Bnb(_) => {
                    let m = bnb4(&mut p, primary)?;
                    hold_own(stored.as_deref_mut(), floats, (shown, &module), &m)?;
                    continue;
                }
                // Refused before the loop.
                Quant::Fp8 { .. } | Quant::Unread(_) => return Ok(()),
            };
        let name = format!("{module}.weight");
        if let (Some(stored), Some(q)) = (stored.as_deref_mut(), c.held()) {
            stored.insert(name, Stored::Own(q));
            continue;
        }
        let t = Tensor::from_vec(c.dequantize(), (c.out, c.inp), &Device::Cpu)
            .map_err(|e| p.bad(e.to_string()))?;
        floats.insert(name, t);
    }
    // compressed-tensors' int-quantized and float-quantized matrices: `weight` itself int8 or
    // fp8 (widened to f32 as loaded), beside `weight_scale`.
    if let Quant::Compressed { .. } = quant {
        let mut naive: Vec<String> = (floats.keys())
            .filter_map(|k| k.strip_suffix(".weight_scale").map(str::to_string))
            .collect();
        naive.sort();
        for module in naive {
            let mut p = Parts {
                module: &module,
                shown,
                ints,
                floats,
            };
            let m = scaled(&mut p, quant)?;
            let held = || match m.fp8 {
                true => m.fp8_linear().map(Stored::Fp8),
                false => m.int8_linear().map(Stored::Own),
            };
            let widened = || (m.out, m.inp, m.dequantize());
            hold(
                stored.as_deref_mut(),
                floats,
                (shown, &module),
                held,
                widened,
            )?;
        }
    }
    // An int8 weight no packing above read.
    if let Some(name) = ints.keys().find(|k| k.ends_with(".weight")) {
        return Err(Error::file(
            shown,
            format!(
                "{name} is stored in int8 as {}, which anatomy verifies but does not run yet",
                quant.describe()
            ),
        ));
    }
    Ok(())
}

/// A matrix a format stores its own way (NVFP4, bitsandbytes' 4 bits): `qlinear`'s blocks
/// where they hold it, else its values as the format's reference dequantizes them.
trait OwnMatrix {
    fn size(&self) -> (usize, usize);
    /// The matrix in `qlinear`'s blocks, where they hold it.
    fn held(&self) -> Option<QLinear>;
    /// Its values as the format's reference dequantizes them.
    fn dequantize(&self) -> Vec<f32>;
}

impl OwnMatrix for Nvfp4 {
    fn size(&self) -> (usize, usize) {
        (self.out, self.inp)
    }

    /// As stored, for `qlinear`: each 32 inputs a block of the two scales' bytes and the codes
    /// in MXFP4's order, the global scale the weight's own; where the rows are whole blocks.
    fn held(&self) -> Option<QLinear> {
        if !self.inp.is_multiple_of(32) {
            return None;
        }
        let mut data = Vec::with_capacity(self.out * self.inp / 32 * Block::Nvfp4.bytes());
        for o in 0..self.out {
            for k in 0..self.inp / 32 {
                for h in 0..2 {
                    data.push(to_e4m3(self.scales[o * (self.inp / 16) + 2 * k + h])?);
                }
                let code = |t: usize| self.code(o, 32 * k + t);
                data.extend((0..16).map(|t| code(t) | code(t + 16) << 4));
            }
        }
        let q = QLinear::new(Block::Nvfp4, data, self.out, self.inp).ok()?;
        Some(q.scaled(1.0 / self.global))
    }

    /// As `NVFP4PackedCompressor.decompress` computes it, the product rounded to bf16 as the
    /// reference's is.
    fn dequantize(&self) -> Vec<f32> {
        (0..self.out * self.inp)
            .map(|j| {
                let (o, i) = (j / self.inp, j % self.inp);
                let c = self.code(o, i);
                let v = E2M1[(c & 7) as usize] * if c & 8 != 0 { -1.0 } else { 1.0 };
                let scale = self.scales[o * (self.inp / 16) + i / 16];
                half::bf16::from_f32(v * (scale / self.global)).to_f32()
            })
            .collect()
    }
}

impl OwnMatrix for Book {
    fn size(&self) -> (usize, usize) {
        (self.out, self.inp)
    }

    /// As stored, for `qlinear`: NF4 or FP4 blocks of 32 (the book's levels rounded to
    /// integers, `NF4_LEVELS` or `FP4_LEVELS` times `top`), d = absmax / top in f16 relative to
    /// the largest absmax, which the weight's own scale restores (so that small blocks keep
    /// f16's precision). Only where the file's book rounds to those levels and a row is whole
    /// blocks of a multiple of 32 values.
    fn held(&self) -> Option<QLinear> {
        let (block, top) = match self.fp4 {
            true => (Block::Fp4, 120.0),
            false => (Block::Nf4, 127.0),
        };
        let levels = block.levels()?;
        let book_fits =
            (self.book.iter().zip(levels)).all(|(&b, &l)| (b * top - l as f32).abs() <= 0.5);
        let runs = self.blocksize.is_multiple_of(32) && self.inp.is_multiple_of(self.blocksize);
        if !book_fits || !runs {
            return None;
        }
        let unit = self.absmax.iter().fold(0f32, |m, a| m.max(a.abs())) / top;
        let unit = if unit > 0.0 && unit.is_finite() {
            unit
        } else {
            1.0
        };
        let mut data = Vec::with_capacity(self.out * self.inp / 32 * block.bytes());
        for start in (0..self.out * self.inp).step_by(32) {
            let d = self.absmax[start / self.blocksize] / top / unit;
            data.extend(half::f16::from_f32(d).to_le_bytes());
            let code = |t: usize| self.code(start + t) as u8;
            data.extend((0..16).map(|t| code(t) | code(t + 16) << 4));
        }
        let q = QLinear::new(block, data, self.out, self.inp).ok()?;
        Some(q.scaled(unit))
    }

    /// As `dequantize_4bit` computes it.
    fn dequantize(&self) -> Vec<f32> {
        (0..self.out * self.inp)
            .map(|j| self.book[self.code(j)] * self.absmax[j / self.blocksize])
            .collect()
    }
}

/// `hold` of a matrix `qlinear` holds in blocks of its own.
fn hold_own(
    stored: Option<&mut HashMap<String, Stored>>,
    floats: &mut HashMap<String, Tensor>,
    at: (&str, &str),
    m: &dyn OwnMatrix,
) -> Result<(), Error> {
    let widened = || {
        let (out, inp) = m.size();
        (out, inp, m.dequantize())
    };
    hold(stored, floats, at, || m.held().map(Stored::Own), widened)
}

/// `module`'s weight held as stored where the loader holds weights so (`stored`) and `held`
/// gives a kernel for it; otherwise widened to f32, computed only then.
fn hold(
    stored: Option<&mut HashMap<String, Stored>>,
    floats: &mut HashMap<String, Tensor>,
    (shown, module): (&str, &str),
    held: impl FnOnce() -> Option<Stored>,
    widened: impl FnOnce() -> (usize, usize, Vec<f32>),
) -> Result<(), Error> {
    let name = format!("{module}.weight");
    if let Some(stored) = stored {
        if let Some(q) = held() {
            stored.insert(name, q);
            return Ok(());
        }
    }
    let (out, inp, w) = widened();
    let t = Tensor::from_vec(w, (out, inp), &Device::Cpu)
        .map_err(|e| Error::file(shown, format!("{module}: {e}")))?;
    floats.insert(name, t);
    Ok(())
}

fn dims(p: &Parts, part: &str) -> Result<Vec<usize>, Error> {
    let name = format!("{}.{part}", p.module);
    match (p.ints.get(&name), p.floats.get(&name)) {
        (Some((d, _)), _) => Ok(d.clone()),
        (None, Some(t)) => Ok(t.dims().to_vec()),
        (None, None) => Err(p.bad(format!("{name} is missing"))),
    }
}

fn two(p: &Parts, part: &str) -> Result<(usize, usize), Error> {
    match dims(p, part)?.as_slice() {
        &[a, b] => Ok((a, b)),
        d => Err(p.bad(format!("{part} is {d:?}; this format stores a matrix"))),
    }
}

/// w[o, i] = scales[g, o] · (q[i, o] − zero[g, o]), g = g_idx[i] (without `g_idx`, AutoRound's,
/// i's group in order); a v1 zero point stored less one.
fn gptq(p: &mut Parts, g: Groups, v1: bool, g_idx: bool) -> Result<Codes, Error> {
    let bits = g.bits as usize;
    let (rows, out) = two(p, "qweight")?;
    if !(rows * 32).is_multiple_of(bits) || !(out * bits).is_multiple_of(32) {
        return Err(p.bad(format!(
            "qweight is [{rows}, {out}], which does not hold whole {bits}-bit values"
        )));
    }
    let inp = rows * 32 / bits;
    let (groups, _) = two(p, "scales")?;
    let q = p.ints("qweight", &[rows, out])?;
    let zeros = p.ints("qzeros", &[groups, out * bits / 32])?;
    let scales = p.floats("scales", &[groups, out])?;
    let g_idx = match g_idx {
        true => p.ints("g_idx", &[inp])?,
        false => {
            let size = g.group.map_or(inp, |n| n as usize).max(1);
            (0..inp).map(|i| (i / size) as u32).collect()
        }
    };
    if let Some(bad) = g_idx.iter().find(|&&g| g as usize >= groups) {
        return Err(p.bad(format!("g_idx holds group {bad}; there are {groups}")));
    }
    let zrow = out * bits / 32;
    let mut c = Codes::new(
        out,
        inp,
        bits,
        groups,
        g_idx.iter().map(|&g| g as usize).collect(),
    );
    // Each output's column of words is one stream (a 3-bit value may cross into the next word).
    let mut column = vec![0u32; rows];
    for o in 0..out {
        for (r, w) in column.iter_mut().enumerate() {
            *w = q[r * out + o];
        }
        for i in 0..inp {
            c.codes[o * inp + i] = field(&column, i, bits) as u8;
        }
    }
    for g in 0..groups {
        for o in 0..out {
            let z = field(&zeros[g * zrow..(g + 1) * zrow], o, bits) + v1 as u32;
            let s = scales[g * out + o];
            c.set(o, g, s, -s * z as f32);
        }
    }
    Ok(c)
}

/// w[o, i] = (q[i, o] − zero[g, o]) · scales[g, o], g = i / group, in AutoAWQ's field order.
fn awq(p: &mut Parts, bits: usize, group: Option<u64>) -> Result<Codes, Error> {
    let (inp, cols) = two(p, "qweight")?;
    let out = cols * 32 / bits;
    let group = group.map_or(inp, |g| g as usize).max(1);
    let groups = inp.div_ceil(group);
    let q = p.ints("qweight", &[inp, cols])?;
    let z = p.ints("qzeros", &[groups, cols])?;
    let scales = p.floats("scales", &[groups, out])?;
    let mut at = [0usize; 8];
    for (k, &o) in AWQ_ORDER.iter().enumerate() {
        at[o] = k;
    }
    let mut c = Codes::grouped(out, inp, bits, group);
    for i in 0..inp {
        for o in 0..out {
            c.codes[o * inp + i] = field(&q[i * cols + o / 8..], at[o % 8], bits) as u8;
        }
    }
    for g in 0..groups {
        for o in 0..out {
            let s = scales[g * out + o];
            let zero = field(&z[g * cols + o / 8..], at[o % 8], bits) as f32;
            c.set(o, g, s, -s * zero);
        }
    }
    Ok(c)
}

/// AWQ's GEMV layout: w[o, i] = (q[o, i] − zero[o, g]) · scales[o, g], g = i / group, each row
/// of `qweight` a dense stream of codes in order, the groups' zero points and scales padded to
/// `awq_gemv_width` (AutoAWQ's `WQLinear_GEMV.from_linear`).
fn awq_gemv(p: &mut Parts, bits: usize, group: Option<u64>) -> Result<Codes, Error> {
    let (out, cols) = two(p, "qweight")?;
    let inp = cols * 32 / bits;
    let group = group.map_or(inp, |g| g as usize).max(1);
    let width = anatomy_core::quant::awq_gemv_width(inp as u64, group as u64) as usize;
    let groups = inp.div_ceil(group);
    let q = p.ints("qweight", &[out, cols])?;
    let z = p.ints("qzeros", &[out, width])?;
    let scales = p.floats("scales", &[out, width * 32 / bits])?;
    let mut c = Codes::grouped(out, inp, bits, group);
    for o in 0..out {
        let row = &q[o * cols..(o + 1) * cols];
        for i in 0..inp {
            c.codes[o * inp + i] = field(row, i, bits) as u8;
        }
        for g in 0..groups {
            let s = scales[o * width * 32 / bits + g];
            let zero = field(&z[o * width..(o + 1) * width], g, bits) as f32;
            c.set(o, g, s, -s * zero);
        }
    }
    Ok(c)
}

/// pack-quantized: each row a dense little-endian stream of values offset by 2^(bits−1);
/// w = (q − zero) · scale per group (by `weight_g_idx` where act-order stored it).
fn compressed(p: &mut Parts, quant: &Quant) -> Result<Codes, Error> {
    let shape = p.ints("weight_shape", &[2])?;
    let (out, inp) = (shape[0] as usize, shape[1] as usize);
    let group = match quant.packing(p.module, out as u64, inp as u64, false) {
        Some(Packing::PackedInt { groups, .. }) => groups.group.map_or(inp, |g| g as usize),
        Some(other) => {
            return Err(p.bad(format!(
                "is stored {other:?}, which anatomy verifies but does not run yet"
            )))
        }
        None => {
            return Err(
                p.bad("is stored packed, but no scheme of quantization_config targets it".into())
            )
        }
    };
    let (rows, cols) = two(p, "weight_packed")?;
    let bits = cols * 32 / inp.max(1);
    if rows != out || !matches!(bits, 2 | 4 | 8) || (inp * bits).div_ceil(32) != cols {
        return Err(p.bad(format!("weight_packed is [{rows}, {cols}] for a weight {shape:?}; pack-quantized int2, int4 or int8 stores [out, in·bits/32]")));
    }
    let (_, groups) = two(p, "weight_scale")?;
    let q = p.ints("weight_packed", &[out, cols])?;
    let scales = p.floats("weight_scale", &[out, groups])?;
    let offset = 1i32 << (bits - 1);
    let zname = format!("{}.weight_zero_point", p.module);
    let zeros = match p.ints.contains_key(&zname) {
        true => {
            let zrows = (out * bits).div_ceil(32);
            let z = p.ints("weight_zero_point", &[zrows, groups])?;
            // Packed down the rows: column g's stream runs over the outputs.
            let column: Vec<Vec<u32>> = (0..groups)
                .map(|g| (0..zrows).map(|r| z[r * groups + g]).collect())
                .collect();
            (0..out * groups)
                .map(|k| field(&column[k % groups], k / groups, bits) as i32 - offset)
                .collect()
        }
        false => vec![0i32; out * groups],
    };
    let gname = format!("{}.weight_g_idx", p.module);
    let g_idx: Vec<usize> = match p.ints.contains_key(&gname) {
        true => p
            .ints("weight_g_idx", &[inp])?
            .iter()
            .map(|&g| g as usize)
            .collect(),
        false => (0..inp).map(|i| i / group.max(1)).collect(),
    };
    if g_idx.iter().any(|&g| g >= groups) {
        return Err(p.bad(format!("weight_g_idx names a group past its {groups}")));
    }
    let mut c = Codes::new(out, inp, bits, groups, g_idx);
    for o in 0..out {
        let row = &q[o * cols..(o + 1) * cols];
        for i in 0..inp {
            c.codes[o * inp + i] = field(row, i, bits) as u8;
        }
        for g in 0..groups {
            let s = scales[o * groups + g];
            c.set(o, g, s, -s * (offset + zeros[o * groups + g]) as f32);
        }
    }
    Ok(c)
}

/// w = scales · q + biases per group of `group` inputs, q a dense stream of `bits`-bit values.
fn mlx(p: &mut Parts, bits: usize, group: usize) -> Result<Codes, Error> {
    let (out, cols) = two(p, "weight")?;
    let inp = cols * 32 / bits;
    let group = group.max(1);
    if !inp.is_multiple_of(group) {
        return Err(p.bad(format!("holds {inp} inputs, not whole groups of {group}")));
    }
    let groups = inp / group;
    let q = p.ints("weight", &[out, cols])?;
    let scales = p.floats("scales", &[out, groups])?;
    let biases = p.floats("biases", &[out, groups])?;
    let mut c = Codes::grouped(out, inp, bits, group);
    for o in 0..out {
        let row = &q[o * cols..(o + 1) * cols];
        for i in 0..inp {
            c.codes[o * inp + i] = field(row, i, bits) as u8;
        }
    }
    c.scale = scales;
    c.offset = biases;
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::{field, Book, Codes, Nvfp4, OwnMatrix, Scaled};

    use crate::qlinear::{Block, QLinear};
    use proptest::prelude::*;

    proptest! {
        /// NVFP4 held in `qlinear`'s blocks holds the codes times their scales over the global
        /// scale: the reference's values before its rounding to bf16.
        #[test]
        fn nvfp4_held_as_stored_is_its_codes_times_their_scales(
            out in 1usize..5,
            blocks in 1usize..4,
            seed in any::<u64>(),
        ) {
            let mut r = seed;
            let mut next = move || { r = r.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); (r >> 33) as u32 };
            let inp = 32 * blocks;
            let packed = (0..out * inp / 2).map(|_| next() % 256).collect();
            let scales = (0..out * inp / 16).map(|_| crate::floatlinear::e4m3((next() % 0x7F) as u8)).collect();
            let m = Nvfp4 { out, inp, packed, scales, global: 0.75 };
            let q = m.held().expect("rows of whole blocks, e4m3 scales");
            let got: Vec<f32> = q.dequantize().unwrap().flatten_all().unwrap().to_vec1().unwrap();
            for (j, g) in got.iter().enumerate() {
                let (o, i) = (j / inp, j % inp);
                let c = m.code(o, i);
                let v = super::E2M1[(c & 7) as usize] * if c & 8 != 0 { -1.0 } else { 1.0 };
                let want = v * m.scales[o * inp / 16 + i / 16] / m.global;
                prop_assert!((g - want).abs() <= 1e-6 * want.abs(), "[{o}, {i}]: {g} vs {want}");
            }
        }

        /// fp8 held as stored, by tensor, by channel and in blocks, gives the values dequantizing
        /// gives: the same bytes times the same scales.
        #[test]
        fn fp8_held_as_stored_is_fp8_dequantized(
            out in 1usize..6,
            inp in 1usize..70,
            seed in any::<u64>(),
            strategy in 0usize..3,
        ) {
            use crate::floatlinear::Rows;
            let mut r = seed;
            let mut next = move || { r = r.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); (r >> 33) as u32 };
            // Any e4m3 but NaN (0x7F, 0xFF), zeros of both signs included.
            let byte = |b: u32| if b & 0x7F == 0x7F { 0 } else { b as u8 };
            let x: Vec<f32> = (0..out * inp).map(|_| crate::floatlinear::e4m3(byte(next() % 256))).collect();
            let row = inp.div_ceil(16) * 16;
            let block = [(out, row), (1, row), (2, 32)][strategy];
            let scales = out.div_ceil(block.0) * inp.div_ceil(block.1);
            let s = (0..scales).map(|_| (next() % 1000) as f32 / 250.0).collect();
            let m = Scaled { out, inp, x, s, block, fp8: true };
            let q = m.fp8_linear().expect("e4m3 values in blocks of 16 columns");
            let got: Vec<f32> = q.dequantize().unwrap().flatten_all().unwrap().to_vec1().unwrap();
            prop_assert_eq!(got, m.dequantize());
        }

        /// 4-bit codes in groups of whole blocks dequantize by `qlinear` to the codes' own
        /// values, whatever the group order of the blocks: symmetric ones (offset −8 · scale,
        /// the scales f16) as Q4_0 blocks, exactly; others as Q4_1 blocks, the scale and
        /// offset rounded to f16.
        #[test]
        fn blocks_hold_the_codes(
            out in 1usize..4,
            blocks in 1usize..5,
            per in prop::sample::select(vec![1usize, 2, 4, 8]),
            symmetric in any::<bool>(),
            seed in any::<u64>(),
        ) {
            let inp = 32 * blocks * per;
            let groups = blocks;
            let mut r = seed;
            let mut next = move || { r = r.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); (r >> 33) as u32 };
            // Groups in reverse order: each block's own, not its position's.
            let group: Vec<usize> = (0..inp).map(|i| groups - 1 - i / (32 * per)).collect();
            let mut c = Codes::new(out, inp, 4, groups, group);
            for x in c.codes.iter_mut() { *x = (next() % 16) as u8; }
            let f16 = |x: f32| half::f16::from_f32(x).to_f32();
            for k in 0..out * groups {
                c.scale[k] = (next() % 2000) as f32 / 1000.0 - 1.0;
                c.offset[k] = (next() % 2000) as f32 / 100.0 - 10.0;
                if symmetric {
                    c.scale[k] = f16(c.scale[k]);
                    c.offset[k] = -8.0 * c.scale[k];
                }
            }
            let (block, data, _) = c.blocks().unwrap();
            let want = match (per % 4 == 0, per % 2 == 0, symmetric) {
                (true, _, _) => Block::Int4G128,
                (false, true, false) => Block::Int4G64,
                (false, _, true) => Block::Q4_0,
                (false, false, false) => Block::Q4_1,
            };
            prop_assert_eq!(block, want);
            let q = QLinear::new(block, data, out, inp).unwrap();
            let got: Vec<f32> = q.dequantize().unwrap().flatten_all().unwrap().to_vec1().unwrap();
            for o in 0..out {
                for i in 0..inp {
                    let g = o * groups + c.group[i];
                    let want = f16(c.scale[g]) * c.codes[o * inp + i] as f32 + f16(c.offset[g]);
                    prop_assert!((got[o * inp + i] - want).abs() <= 1e-5 * want.abs().max(1.0));
                }
            }
        }

        /// Affine codes of any other width (MLX's 2, 3, 5, 6 and 8 bits, GPTQ's 2, 3 and 8)
        /// are held as INT8_F32_MIN blocks whose values are the codes' own: exactly below 8
        /// bits, within f32 rounding of the offset that takes 128 · scale back at 8; symmetric
        /// 8-bit codes (offset −128 · scale) as Q8_0.
        #[test]
        fn other_widths_hold_their_codes(
            out in 1usize..4,
            blocks in 1usize..4,
            bits in prop::sample::select(vec![2usize, 3, 5, 6, 7, 8]),
            seed in any::<u64>(),
        ) {
            let inp = 32 * blocks;
            let mut c = Codes::grouped(out, inp, bits, 32);
            let mut r = seed;
            let mut next = move || { r = r.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); (r >> 33) as u32 };
            for x in c.codes.iter_mut() { *x = (next() % (1 << bits)) as u8; }
            for k in 0..out * blocks {
                c.scale[k] = (next() % 2000) as f32 / 1e5 - 0.01;
                c.offset[k] = (next() % 2000) as f32 / 1e3 - 1.0;
            }
            let (block, data, unit) = c.blocks().unwrap();
            prop_assert_eq!((block, unit), (Block::Int8F32Min, 1.0));
            let q = QLinear::new(block, data, out, inp).unwrap();
            let got: Vec<f32> = q.dequantize().unwrap().flatten_all().unwrap().to_vec1().unwrap();
            for (g, w) in got.iter().zip(c.dequantize()) {
                let tol = if bits == 8 { 1e-6 * w.abs().max(1.0) } else { 0.0 };
                prop_assert!((g - w).abs() <= tol, "{} bits: {} for {}", bits, g, w);
            }
            if bits == 8 {
                for k in 0..out * blocks {
                    c.offset[k] = -128.0 * c.scale[k];
                }
                prop_assert_eq!(c.blocks().unwrap().0, Block::Q8_0);
            }
        }

        /// bitsandbytes' 4-bit books held as NF4 or FP4 blocks give each value within half a
        /// level step of the book's (0.5 / 127 or 0.5 / 120 of its absmax) and f16's rounding of
        /// d; a book that is neither, or blocks that cross rows, are left to f32.
        #[test]
        fn code_books_hold_their_levels_within_half_a_step(
            out in 1usize..4,
            runs in 1usize..4,
            blocksize in prop::sample::select(vec![32usize, 64, 128]),
            fp4 in any::<bool>(),
            seed in any::<u64>(),
        ) {
            let inp = blocksize * runs;
            let mut r = seed;
            let mut next = move || { r = r.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); (r >> 33) as u32 };
            let book: Vec<f32> = match fp4 {
                false => crate::qlinear::NF4_BOOK.to_vec(),
                true => [0.0, 0.0625, 8.0, 12.0, 4.0, 6.0, 2.0, 3.0].iter().chain(&[-0.0, -0.0625, -8.0, -12.0, -4.0, -6.0, -2.0, -3.0]).map(|v| v / 12.0).collect(),
            };
            let (top, block) = if fp4 { (120.0, Block::Fp4) } else { (127.0, Block::Nf4) };
            let m = Book {
                out,
                inp,
                fp4,
                bytes: (0..out * inp / 2).map(|_| next() % 256).collect(),
                book: book.clone(),
                absmax: (0..out * inp / blocksize).map(|_| (next() % 10_000) as f32 / 1000.0).collect(),
                blocksize,
            };
            let q = m.held().unwrap();
            prop_assert_eq!(q.block(), block);
            let got: Vec<f32> = q.dequantize().unwrap().flatten_all().unwrap().to_vec1().unwrap();
            for (j, (g, w)) in got.iter().zip(m.dequantize()).enumerate() {
                let absmax = m.absmax[j / blocksize];
                let bound = absmax * (0.5 / top + book[m.code(j)].abs() / 1024.0) + 1e-6;
                prop_assert!((g - w).abs() <= bound, "{j}: {g} vs {w}");
            }
            let other = Book { book: book.iter().map(|v| v * 0.9).collect(), ..m };
            prop_assert!(other.held().is_none());
            let crossing = Book { inp: 48, out: 2, absmax: vec![1.0; 3], bytes: vec![0; 48], blocksize: 32, book, ..other };
            prop_assert!(crossing.held().is_none());
        }

        /// Groups scattered across a row (act-order's g_idx, whole groups of 32 each) hold as
        /// blocks of the row gathered group by group, and give back the row in its order.
        #[test]
        fn scattered_groups_hold_gathered(
            out in 1usize..4,
            groups in 1usize..5,
            seed in any::<u64>(),
        ) {
            let inp = 32 * groups;
            let mut r = seed;
            let mut next = move || { r = r.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); (r >> 33) as u32 };
            // A random order of the inputs, each run of 32 in it a group.
            let mut order: Vec<usize> = (0..inp).collect();
            for i in (1..inp).rev() { order.swap(i, next() as usize % (i + 1)); }
            let mut group = vec![0; inp];
            for (k, &i) in order.iter().enumerate() { group[i] = k / 32; }
            let mut c = Codes::new(out, inp, 4, groups, group);
            for x in c.codes.iter_mut() { *x = (next() % 16) as u8; }
            for k in 0..out * groups {
                c.scale[k] = half::f16::from_f32((next() % 2000) as f32 / 1000.0 - 1.0).to_f32();
                c.offset[k] = -8.0 * c.scale[k];
            }
            let q = c.held().unwrap();
            let got: Vec<f32> = q.dequantize().unwrap().flatten_all().unwrap().to_vec1().unwrap();
            prop_assert_eq!(got, c.dequantize());
            // And its products take x in the row's order.
            let x: Vec<f32> = (0..inp).map(|_| (next() % 200) as f32 / 100.0 - 1.0).collect();
            let mut y = vec![0f32; out];
            q.product(crate::qlinear::Path::Scalar, &x, 1, &mut y);
            let w = c.dequantize();
            for o in 0..out {
                let want: f32 = (0..inp).map(|i| w[o * inp + i] * x[i]).sum();
                let mass: f32 = (0..inp).map(|i| (w[o * inp + i] * x[i]).abs()).sum();
                prop_assert!((y[o] - want).abs() <= 0.01 * mass + 1e-4, "{}: {} vs {}", o, y[o], want);
            }
        }

        /// 8-bit codes offset by 128 hold as Q8_0 with their scales rounded to f16.
        #[test]
        fn int8_rows_hold_as_q8_0(out in 1usize..4, blocks in 1usize..4, seed in any::<u64>()) {
            let inp = 32 * blocks;
            let mut r = seed;
            let mut next = move || { r = r.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); (r >> 33) as u32 };
            let mut c = Codes::grouped(out, inp, 8, inp);
            for x in c.codes.iter_mut() { *x = (next() % 256) as u8; }
            for o in 0..out {
                let s = (next() % 10_000) as f32 / 1e6;
                c.set(o, 0, s, -128.0 * s);
            }
            let q = c.held().unwrap();
            prop_assert_eq!(q.block(), Block::Q8_0);
            let got: Vec<f32> = q.dequantize().unwrap().flatten_all().unwrap().to_vec1().unwrap();
            for (g, w) in got.iter().zip(c.dequantize()) {
                prop_assert!((g - w).abs() <= w.abs() / 2048.0 + 1e-9, "{g} vs {w}");
            }
        }

        /// Groups that split a block of 32 are left to f32.
        #[test]
        fn hostile_packings_are_refused_by_name(huge in 1u32..u32::MAX) {
            use super::{unpack, Ints};
            use anatomy_core::quant::{Groups, Packing, Quant, Scheme};
            use candle_core::{Device, Tensor};
            use std::collections::HashMap;
            let m = "model.layers.0.mlp.down_proj";
            let floats = |shape: (usize, usize)| {
                HashMap::from([(format!("{m}.scales"), Tensor::zeros(shape, candle_core::DType::F32, &Device::Cpu).unwrap())])
            };
            let groups = Groups { bits: 4, group: Some(32), zeros: true };
            // GPTQ: a g_idx naming a group past the scales'.
            let mut ints: Ints = HashMap::from([
                (format!("{m}.qweight"), (vec![4, 8], vec![0; 32])),
                (format!("{m}.qzeros"), (vec![1, 1], vec![0])),
                (format!("{m}.g_idx"), (vec![32], vec![huge; 32])),
            ]);
            let e = unpack(&Quant::Gptq { groups, v1: true, dynamic: vec![], auto_round: false }, &mut ints, &mut floats((1, 8)), None, "x").unwrap_err();
            prop_assert!(e.to_string().contains("g_idx"), "{e}");
            // compressed-tensors: a weight_shape its packed words cannot hold.
            let kind = Packing::PackedInt { groups, g_idx: false };
            let schemes = vec![Scheme { targets: vec!["Linear".into()], kind }];
            let q = Quant::Compressed { schemes, ignore: vec![] };
            let mut ints: Ints = HashMap::from([
                (format!("{m}.weight_packed"), (vec![2, 4], vec![0; 8])),
                (format!("{m}.weight_shape"), (vec![2], vec![huge, huge])),
            ]);
            let e = unpack(&q, &mut ints, &mut HashMap::new(), None, "x").unwrap_err();
            prop_assert!(e.to_string().contains("weight_packed"), "{e}");
        }

        /// Groups that split a block of 32 are left to f32.
        #[test]
        fn q4_1_refuses_groups_inside_a_block(half_block in 1usize..31) {
            let c = Codes::new(1, 32, 4, 2, (0..32).map(|i| (i >= half_block) as usize).collect());
            prop_assert!(c.blocks().is_none());
        }

        /// A value written at any place of a dense stream reads back, whatever straddles words.
        #[test]
        fn fields_read_what_a_dense_stream_holds(
            bits in prop::sample::select(vec![2usize, 3, 4, 5, 6, 8]),
            values in prop::collection::vec(any::<u32>(), 1..100),
        ) {
            let values: Vec<u32> = values.iter().map(|v| v & ((1 << bits) - 1)).collect();
            let mut words = vec![0u32; (values.len() * bits).div_ceil(32) + 1];
            for (k, &v) in values.iter().enumerate() {
                for b in 0..bits {
                    let at = k * bits + b;
                    words[at / 32] |= ((v >> b) & 1) << (at % 32);
                }
            }
            for (k, &v) in values.iter().enumerate() {
                prop_assert_eq!(field(&words, k, bits), v);
            }
        }
    }
}

/// LLM.int8(): w[o, i] = weight[o, i] · SCB[o] / 127, each row scaled by its absolute maximum;
/// as codes offset by 128, one group a row.
fn bnb8(p: &mut Parts) -> Result<Codes, Error> {
    let (out, inp) = two(p, "weight")?;
    let format = p.ints("weight_format", &[])?;
    if format != [0] {
        return Err(p.bad(format!(
            "weight_format is {format:?}; bitsandbytes reads 0, rows in order"
        )));
    }
    let q = p.ints("weight", &[out, inp])?;
    let scb = p.floats("SCB", &[out])?;
    let mut c = Codes::grouped(out, inp, 8, inp);
    for (code, &x) in c.codes.iter_mut().zip(&q) {
        *code = (x as i32 + 128) as u8;
    }
    for (o, &m) in scb.iter().enumerate() {
        let scale = m / 127.0;
        c.set(o, 0, scale, -128.0 * scale);
    }
    Ok(c)
}

/// FP4 (e2m1) codes: sign, then the magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6.
const E2M1: [f32; 8] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];

/// compressed-tensors' `nvfp4-pack-quantized`: e2m1 codes, value 2k the low half of byte k and
/// 2k + 1 the high, each group of 16 times its fp8 scale over the global scale.
struct Nvfp4 {
    out: usize,
    inp: usize,
    /// [out, inp / 2] bytes.
    packed: Vec<u32>,
    /// [out, inp / 16], e4m3 values widened.
    scales: Vec<f32>,
    global: f32,
}

impl Nvfp4 {
    fn read(p: &mut Parts) -> Result<Nvfp4, Error> {
        let (out, half) = two(p, "weight_packed")?;
        let inp = half * 2;
        if !inp.is_multiple_of(16) {
            return Err(p.bad(format!(
                "holds {inp} inputs a row; NVFP4 scales groups of 16"
            )));
        }
        let packed = p.ints("weight_packed", &[out, half])?;
        let scales = p.floats("weight_scale", &[out, inp / 16])?;
        let global = p.floats("weight_global_scale", &[1])?[0];
        let name = format!("{}.input_global_scale", p.module);
        p.floats.remove(&name);
        Ok(Nvfp4 {
            out,
            inp,
            packed,
            scales,
            global,
        })
    }

    fn code(&self, o: usize, i: usize) -> u8 {
        let byte = self.packed[o * self.inp / 2 + i / 2] as u8;
        if i.is_multiple_of(2) {
            byte & 15
        } else {
            byte >> 4
        }
    }
}

/// A matrix stored in 8 bits beside its scales, each scale covering a block of rows and
/// columns: by tensor, the whole matrix; by channel, a row; by group, part of a row.
struct Scaled {
    out: usize,
    inp: usize,
    /// The stored values, widened to f32.
    x: Vec<f32>,
    /// [⌈out / block.0⌉, ⌈inp / block.1⌉].
    s: Vec<f32>,
    block: (usize, usize),
    fp8: bool,
}

impl Scaled {
    fn dequantize(&self) -> Vec<f32> {
        let per = self.inp.div_ceil(self.block.1);
        (0..self.out * self.inp)
            .map(|j| {
                let (o, i) = (j / self.inp, j % self.inp);
                self.x[j] * self.s[o / self.block.0 * per + i / self.block.1]
            })
            .collect()
    }

    /// int8 as stored, for `qlinear`: Q8_0 blocks where each scale covers part of one row, in
    /// runs of 32 (`Codes::q8_0`).
    fn int8_linear(&self) -> Option<QLinear> {
        if self.fp8 || self.block.0 != 1 {
            return None;
        }
        let mut c = Codes::grouped(self.out, self.inp, 8, self.block.1);
        for (code, &x) in c.codes.iter_mut().zip(&self.x) {
            *code = (x as i32 + 128).clamp(0, 255) as u8;
        }
        let per = self.inp.div_ceil(self.block.1);
        for o in 0..self.out {
            for g in 0..per {
                let s = self.s[o * per + g];
                c.set(o, g, s, -128.0 * s);
            }
        }
        c.held()
    }

    /// fp8 as stored, for `floatlinear`'s kernel: the values' e4m3 bytes (every one an e4m3, as
    /// loaded) and the scales, where a block's columns are a multiple of 16 (its vectors').
    fn fp8_linear(&self) -> Option<Fp8Linear> {
        if !self.fp8 || !self.block.1.is_multiple_of(16) {
            return None;
        }
        let bytes: Option<Vec<u8>> = self.x.iter().map(|&v| to_e4m3(v)).collect();
        Fp8Linear::new(bytes?, self.s.clone(), self.block, self.out, self.inp).ok()
    }
}

/// compressed-tensors' `int-quantized` (int8 codes times `weight_scale`, by channel or group) and
/// `float-quantized` (fp8 values times `weight_scale`, by tensor, channel or block) matrices, as
/// its `NaiveQuantizationCompressor.decompress` reads them.
fn scaled(p: &mut Parts, quant: &Quant) -> Result<Scaled, Error> {
    let (out, inp) = two(p, "weight")?;
    // A whole row's columns, rounded up to the fp8 kernel's 16: one block across.
    let row = inp.div_ceil(16).max(1) * 16;
    let (x, s, block, fp8) = match quant.packing(p.module, out as u64, inp as u64, false) {
        Some(Packing::Int8 { groups }) if !groups.zeros => {
            let group = groups.group.map_or(inp, |g| g as usize).max(1);
            let q = p.ints("weight", &[out, inp])?;
            let x = q.iter().map(|&v| v as i32 as f32).collect();
            let s = p.floats("weight_scale", &[out, inp.div_ceil(group)])?;
            (x, s, (1, group), false)
        }
        Some(Packing::Fp8 { scale, input_scale }) => {
            let x = p.floats("weight", &[out, inp])?;
            if input_scale {
                // The activations' static scale: the weights are what is checked.
                p.floats("input_scale", &[1])?;
            }
            let (s, block) = match scale {
                Fp8Scale::Tensor => (p.floats("weight_scale", &[1])?, (out.max(1), row)),
                Fp8Scale::Channel => (p.floats("weight_scale", &[out, 1])?, (1, row)),
                Fp8Scale::Block(r, c) => {
                    let (r, c) = ((r as usize).max(1), (c as usize).max(1));
                    let s = p.floats("weight_scale", &[out.div_ceil(r), inp.div_ceil(c)])?;
                    (s, (r, c))
                }
            };
            (x, s, block, true)
        }
        other => {
            return Err(p.bad(format!(
            "is stored {other:?} beside weight_scale, which anatomy verifies but does not run yet"
        )))
        }
    };
    Ok(Scaled {
        out,
        inp,
        x,
        s,
        block,
        fp8,
    })
}

/// The rest of a bitsandbytes 4-bit matrix's state, as `QuantState.as_dict(packed=True)` writes
/// it beside the tensors.
#[derive(serde::Deserialize)]
struct BnbState {
    quant_type: String,
    blocksize: usize,
    shape: Vec<usize>,
    nested_blocksize: Option<usize>,
    nested_offset: Option<f32>,
}

/// A bitsandbytes 4-bit matrix: codes into a book of sixteen levels, each block of `blocksize`
/// values (in row-major order) times its absmax.
struct Book {
    out: usize,
    inp: usize,
    fp4: bool,
    /// [out · inp / 2] bytes, code 2k the high half of byte k and 2k + 1 the low.
    bytes: Vec<u32>,
    book: Vec<f32>,
    absmax: Vec<f32>,
    blocksize: usize,
}

impl Book {
    fn code(&self, j: usize) -> usize {
        let byte = self.bytes[j / 2];
        (if j.is_multiple_of(2) { byte >> 4 } else { byte } & 15) as usize
    }
}

/// bitsandbytes' 4 bits, as `dequantize_4bit` reads them: value j is
/// `quant_map[code j] · absmax[j / blocksize]`, code 2k the high half of byte k and 2k + 1 the
/// low; double quantized, `absmax[b] = nested_quant_map[absmax code b] ·
/// nested_absmax[b / nested_blocksize] + nested_offset`.
fn bnb4(p: &mut Parts, state: &str) -> Result<Book, Error> {
    let len = dims(p, state)?;
    let json: Vec<u8> = p.ints(state, &len)?.into_iter().map(|b| b as u8).collect();
    let s: BnbState = serde_json::from_slice(&json).map_err(|e| {
        p.bad(format!(
            "{state} is not bitsandbytes' JSON quant state: {e}"
        ))
    })?;
    let want = state.rsplit("__").next().unwrap_or_default();
    let (&[out, inp], true) = (s.shape.as_slice(), s.quant_type == want) else {
        return Err(p.bad(format!(
            "{state} describes a {} matrix of shape {:?}; this layer stores {want} [out, in]",
            s.quant_type, s.shape
        )));
    };
    let n = out * inp;
    if s.blocksize == 0 || !n.is_multiple_of(2) {
        return Err(p.bad(format!(
            "{state}: blocks of {} over {n} values",
            s.blocksize
        )));
    }
    let blocks = n.div_ceil(s.blocksize);
    let bytes = p.ints("weight", &[n / 2, 1])?;
    let code = p.floats("weight.quant_map", &[16])?;
    let absmax: Vec<f32> = match (s.nested_blocksize, s.nested_offset) {
        (None, None) => p.floats("weight.absmax", &[blocks])?,
        (Some(nb), Some(offset)) if nb > 0 => {
            let q = p.ints("weight.absmax", &[blocks])?;
            let scale = p.floats("weight.nested_absmax", &[blocks.div_ceil(nb)])?;
            let map = p.floats("weight.nested_quant_map", &[256])?;
            (q.iter().enumerate())
                .map(|(b, &c)| map[c as usize & 255] * scale[b / nb] + offset)
                .collect()
        }
        (nb, offset) => {
            return Err(p.bad(format!(
                "{state} has nested_blocksize {nb:?} and nested_offset {offset:?}; double quantization needs both, the block size positive"
            )))
        }
    };
    Ok(Book {
        out,
        inp,
        fp4: want == "fp4",
        bytes,
        book: code,
        absmax,
        blocksize: s.blocksize,
    })
}
