//! A checkpoint against the Graph, tensor by tensor: what is missing, unexpected or mis-shaped,
//! and in which storage formats the weights are kept.
//!
//! Weights stored another way are recognized as the same weights and counted by logical shape:
//! fp8 with block scales (`weight_scale_inv`, DeepSeek-V3), MXFP4 `_blocks` and `_scales`
//! (gpt-oss, stored [experts, out, in/32, 16]), GGUF quant types, and the multi-token-prediction
//! layers DeepSeek-V3 stores after the model's own.

use crate::{Checkpoint, Format, Stored};
use anatomy_core::graph::{Component, Graph};
use anatomy_core::manifest::{self, Naming};
use anatomy_core::naming::instantiate;
use anatomy_core::Error;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Default)]
pub struct Report {
    pub matched: usize,
    /// Parameters of the matched tensors, by logical shape.
    pub params: u128,
    pub missing: Vec<(String, Vec<u64>)>,
    pub unexpected: Vec<Stored>,
    /// (name, expected shape, stored shape)
    pub misshaped: Vec<(String, Vec<u64>, Vec<u64>)>,
    /// Storage format → (tensors, parameters).
    pub formats: BTreeMap<String, (usize, u128)>,
    /// Auxiliary tensors (multi-token prediction) found, and their parameters.
    pub aux: (usize, u128),
    /// Towers of a multimodal checkpoint of kinds anatomy does not know, by what they are: the
    /// tensors under their prefix and their parameters.
    pub towers: BTreeMap<String, (usize, u128)>,
    /// Tensors whose bytes are not where or what the header says.
    pub problems: Vec<crate::Problem>,
}

impl Report {
    pub fn clean(&self) -> bool {
        self.missing.is_empty()
            && self.unexpected.is_empty()
            && self.misshaped.is_empty()
            && self.problems.is_empty()
    }
}

fn numel(shape: &[u64]) -> u128 {
    shape.iter().map(|&d| d as u128).product()
}

/// Auxiliary tensors the checkpoint may hold: the MTP module's own and, for each MTP layer, one
/// more decoder block shaped like the model's last layer.
fn optional(g: &Graph, naming: Naming) -> Vec<(String, Vec<u64>)> {
    let spec = &g.spec;
    let mut out = Vec::new();
    if spec.mtp_layers == 0 {
        return out;
    }
    let last = spec.layers - 1;
    let mtp = spec.layers..spec.layers + spec.mtp_layers;
    for p in &g.params {
        let template = if naming == Naming::Hf { &p.hf } else { &p.gguf };
        let in_last = p.layers.as_ref().is_some_and(|l| l.contains(last));
        if p.component != Component::Aux && !in_last {
            continue;
        }
        for b in mtp.clone() {
            let experts: Vec<Option<u64>> = if template.contains("{e}") {
                (0..p.experts).map(Some).collect()
            } else {
                vec![None]
            };
            for e in experts {
                out.push((instantiate(template, Some(b), e), p.shape.clone()));
            }
        }
    }
    out
}

pub fn verify(g: &Graph, c: &Checkpoint) -> Result<Report, Error> {
    let naming = if c.format == Format::Gguf {
        Naming::Gguf
    } else {
        Naming::Hf
    };
    let expected = manifest::manifest(g, naming)?;
    // Each tensor under the name transformers loads it as (Dory's released two-block layers).
    let names: Vec<_> = c
        .tensors
        .iter()
        .map(|t| anatomy_core::naming::canonical(g.spec.layout, &t.name))
        .collect();
    let stored: BTreeMap<&str, &Stored> =
        names.iter().map(|n| n.as_ref()).zip(&c.tensors).collect();
    let mut used: BTreeSet<&str> = BTreeSet::new();
    let mut r = Report {
        problems: c.problems.clone(),
        ..Report::default()
    };
    let matched = |r: &mut Report, format: String, params: u128| {
        r.matched += 1;
        r.params += params;
        let f = r.formats.entry(format).or_default();
        f.0 += 1;
        f.1 += params;
    };
    for e in &expected {
        let name = e.name.as_str();
        if let Some(t) = stored.get(name) {
            used.insert(name);
            // A packed tensor's integer type is part of its format; its scales may be any float.
            if let Some(p) = &e.packed {
                let sound = match p.any_length {
                    true => t.shape.len() == 1,
                    false => t.shape == e.shape,
                };
                match p.dtype {
                    _ if !sound => {
                        r.misshaped
                            .push((e.name.clone(), e.shape.clone(), t.shape.clone()))
                    }
                    Some(d) if d.name() != t.dtype => r.problems.push(crate::Problem::new(
                        &t.name,
                        None,
                        format!("is {}; {} stores it as {}", t.dtype, p.format, d.name()),
                    )),
                    Some(_) | None => matched(&mut r, p.format.clone(), e.params),
                }
                continue;
            }
            if t.shape == e.shape {
                // fp8 weights come with one scale per 128×128 block.
                let scale = format!("{}_scale_inv", name);
                let format = match stored.get(scale.as_str()) {
                    Some(_) if t.dtype.starts_with("F8") => {
                        used.insert(
                            stored
                                .get_key_value(scale.as_str())
                                .map(|(k, _)| *k)
                                .unwrap_or(""),
                        );
                        format!("{} with block scales", t.dtype)
                    }
                    _ => t.dtype.clone(),
                };
                matched(&mut r, format, e.params);
            } else {
                r.misshaped
                    .push((e.name.clone(), e.shape.clone(), t.shape.clone()));
            }
            continue;
        }
        // MXFP4: X_blocks [E, out, in/32, 16] and X_scales [E, out, in/32] hold X [E, in, out].
        let (blocks, scales) = (format!("{name}_blocks"), format!("{name}_scales"));
        if let (Some(b), Some(s)) = (stored.get(blocks.as_str()), stored.get(scales.as_str())) {
            let logical: Option<Vec<u64>> = match (b.shape.as_slice(), e.shape.as_slice()) {
                ([ex, out, groups, 16], [ee, ein, eout])
                    if ex == ee && out == eout && groups * 32 == *ein =>
                {
                    Some(e.shape.clone())
                }
                _ => None,
            };
            used.insert(
                stored
                    .get_key_value(blocks.as_str())
                    .map(|(k, _)| *k)
                    .unwrap_or(""),
            );
            used.insert(
                stored
                    .get_key_value(scales.as_str())
                    .map(|(k, _)| *k)
                    .unwrap_or(""),
            );
            match logical {
                Some(shape) if s.shape.len() == 3 => matched(
                    &mut r,
                    "MXFP4 (32-value blocks, e8m0 scales)".into(),
                    numel(&shape),
                ),
                _ => r
                    .misshaped
                    .push((e.name.clone(), e.shape.clone(), b.shape.clone())),
            }
            continue;
        }
        r.missing.push((e.name.clone(), e.shape.clone()));
    }
    for (name, shape) in optional(g, naming) {
        if let Some((k, t)) = stored.get_key_value(name.as_str()) {
            used.insert(k);
            if let Some((sk, _)) = stored.get_key_value(format!("{name}_scale_inv").as_str()) {
                used.insert(sk);
            }
            if t.shape == shape {
                r.aux.0 += 1;
                r.aux.1 += numel(&shape);
            } else {
                r.misshaped.push((name, shape, t.shape.clone()));
            }
        }
    }
    for t in names
        .iter()
        .zip(&c.tensors)
        .filter(|(n, t)| !used.contains(n.as_ref()) && !c.read_as_config.contains(&t.name))
        .map(|(_, t)| t)
    {
        // A tower anatomy names is checked like the language model: a stray tensor under its
        // prefix is unexpected; one of a kind it does not know holds whatever its prefix holds.
        let unknown =
            |p: &&anatomy_core::spec::Tower| t.name.starts_with(&p.prefix) && p.blocks.is_none();
        match g.spec.towers.iter().find(unknown) {
            Some(part) => {
                let e = r.towers.entry(part.to_string()).or_default();
                e.0 += 1;
                e.1 += numel(&t.shape);
            }
            None => r.unexpected.push(t.clone()),
        }
    }
    Ok(r)
}

pub fn report_text(g: &Graph, c: &Checkpoint, r: &Report) -> Result<String, Error> {
    use anatomy_core::fmt::{count, grouped};
    let mut out = format!(
        "{} · {} checkpoint · {} stored, {} expected by the graph\n",
        anatomy_core::fmt::printable(&c.path),
        if c.format == Format::Gguf {
            "GGUF"
        } else {
            "safetensors"
        },
        count(c.tensors.len() as u128, "tensor"),
        r.matched + r.missing.len() + r.misshaped.len()
    );
    out += &format!(
        "matched {}, {} (graph total {})\n",
        count(r.matched as u128, "tensor"),
        count(r.params, "parameter"),
        grouped(anatomy_core::stats::stats(g, None)?.total_params as u128)
    );
    out += "storage:\n";
    for (f, (n, p)) in &r.formats {
        let tensors = if *n == 1 { "tensor " } else { "tensors" };
        out += &format!("  {f:<40} {n:>6} {tensors} {:>20} params\n", grouped(*p));
    }
    if r.aux.0 > 0 {
        out += &format!(
            "auxiliary (multi-token prediction): {}, {}\n",
            count(r.aux.0 as u128, "tensor"),
            count(r.aux.1, "parameter")
        );
    }
    for (part, (n, p)) in &r.towers {
        out += &format!(
            "not known: {part}: {}, {}\n",
            count(*n as u128, "tensor"),
            count(*p, "parameter")
        );
    }
    let list = |out: &mut String, title: &str, items: Vec<String>| {
        if items.is_empty() {
            return;
        }
        *out += &format!("{title} ({}):\n", items.len());
        for i in items.iter().take(20) {
            *out += &format!("  {}\n", anatomy_core::fmt::printable(i));
        }
        if items.len() > 20 {
            *out += &format!("  … and {} more\n", items.len() - 20);
        }
    };
    list(
        &mut out,
        "missing",
        r.missing
            .iter()
            .map(|(n, s)| format!("{n} {s:?}"))
            .collect(),
    );
    list(
        &mut out,
        "mis-shaped (expected, stored)",
        r.misshaped
            .iter()
            .map(|(n, e, s)| format!("{n} {e:?} ≠ {s:?}"))
            .collect(),
    );
    list(
        &mut out,
        "data problems",
        r.problems.iter().map(|p| p.to_string()).collect(),
    );
    list(
        &mut out,
        "unexpected",
        r.unexpected
            .iter()
            .map(|t| format!("{} {:?} {}", t.name, t.shape, t.dtype))
            .collect(),
    );
    out += if r.clean() {
        "verify: OK, the checkpoint is what the graph says\n"
    } else {
        "verify: FAILED\n"
    };
    Ok(out)
}

/// The report as data (`verify --json`).
pub fn report_json(r: &Report, findings: Option<&[Finding]>) -> serde_json::Value {
    use serde_json::json;
    let mut v = json!({
        "clean": r.clean() && findings.is_none_or(|f| f.is_empty()),
        "matched": r.matched,
        "params": r.params as u64,
        "missing": r.missing.iter().map(|m| json!({"name": m.0, "shape": m.1})).collect::<Vec<_>>(),
        "unexpected": r.unexpected.iter().map(|t| json!({"name": t.name, "shape": t.shape, "dtype": t.dtype})).collect::<Vec<_>>(),
        "misshaped": r.misshaped.iter().map(|m| json!({"name": m.0, "expected": m.1, "stored": m.2})).collect::<Vec<_>>(),
        "problems": r.problems.iter().map(|p| json!({"tensor": p.tensor, "file": p.file, "bytes": p.range.map(|(a, b)| [a, b]), "problem": p.what})).collect::<Vec<_>>(),
        "formats": r.formats.iter().map(|(f, (n, p))| (f.clone(), json!({"tensors": n, "params": *p as u64}))).collect::<serde_json::Map<_, _>>(),
        "towers": r.towers.iter().map(|(f, (n, p))| (f.clone(), json!({"tensors": n, "params": *p as u64}))).collect::<serde_json::Map<_, _>>(),
    });
    if let Some(f) = findings {
        v["data"] = json!(f
            .iter()
            .map(|f| json!({"tensor": f.tensor, "finding": f.what}))
            .collect::<Vec<_>>());
    }
    v
}

/// What reading a tensor's values found: NaN or infinite values, or nothing but zeros.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub tensor: String,
    pub what: String,
}

/// Read every tensor's values once (`verify --data`): report NaN and infinite values and tensors
/// that are all zeros. Safetensors values are decoded from the mapped file (F32, F16, BF16, F64;
/// other types are checked for all-zero bytes); GGUF tensors are dequantized. `progress(done,
/// total)` is called after each tensor.
pub fn data(c: &Checkpoint, progress: &mut dyn FnMut(usize, usize)) -> Result<Vec<Finding>, Error> {
    c.data_is_sound()?;
    let mut out = Vec::new();
    let total = c.tensors.len();
    let mut done = 0;
    let mut check =
        |name: &str, values: Option<Vec<f32>>, zero_bytes: bool, out: &mut Vec<Finding>| {
            if let Some(v) = values {
                let nan = v.iter().filter(|x| x.is_nan()).count();
                let inf = v.iter().filter(|x| x.is_infinite()).count();
                if nan + inf > 0 {
                    out.push(Finding {
                        tensor: name.to_string(),
                        what: format!("{nan} NaN and {inf} infinite values of {}", v.len()),
                    });
                } else if v.iter().all(|x| *x == 0.0) {
                    out.push(Finding {
                        tensor: name.to_string(),
                        what: "is all zeros".into(),
                    });
                }
            } else if zero_bytes {
                out.push(Finding {
                    tensor: name.to_string(),
                    what: "is all zeros".into(),
                });
            }
            done += 1;
            progress(done, total);
        };
    match (&c.format, &c.gguf) {
        (Format::Gguf, Some(h)) => {
            let content = h.content();
            let path = std::path::Path::new(&c.path);
            let mut reader = std::io::BufReader::new(crate::open_regular(path)?);
            for t in &h.tensors {
                let cannot =
                    |e: String| Error::file(&c.path, format!("cannot read {}: {e}", t.name));
                if t.dtype.is_none() {
                    // A type candle does not read: dequantized here, or, where anatomy has no
                    // dequantizer for it, checked for all-zero bytes.
                    let bytes = h.raw(&mut reader, t).map_err(|e| cannot(e.to_string()))?;
                    let values = crate::dequant::dequantize(t.type_id, &bytes);
                    let zero = values.is_none() && bytes.iter().all(|b| *b == 0);
                    check(&t.name, values, zero, &mut out);
                    continue;
                }
                let q = content
                    .tensor(&mut reader, &t.name, &candle_core::Device::Cpu)
                    .map_err(|e| cannot(e.to_string()))?;
                let v = q
                    .dequantize(&candle_core::Device::Cpu)
                    .and_then(|t| t.flatten_all()?.to_vec1::<f32>())
                    .map_err(|e| cannot(e.to_string()))?;
                check(&t.name, Some(v), false, &mut out);
            }
        }
        _ => {
            let dir = std::path::Path::new(&c.path);
            let mut files: Vec<_> = std::fs::read_dir(dir)
                .map_err(|e| Error::file(&c.path, format!("cannot list: {e}")))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "safetensors"))
                .collect();
            files.sort();
            for f in files {
                let shown = f.display().to_string();
                let file = crate::open_regular(&f)?;
                // SAFETY: read-only; the header was checked against the file's length.
                let map = unsafe { memmap2::Mmap::map(&file) }
                    .map_err(|e| Error::file(&shown, format!("cannot map: {e}")))?;
                let st = safetensors::SafeTensors::deserialize(&map).map_err(|e| {
                    Error::file(&shown, format!("not a valid safetensors file: {e}"))
                })?;
                let mut names: Vec<String> = st.names().into_iter().map(String::from).collect();
                names.sort();
                for name in names {
                    let view = st
                        .tensor(&name)
                        .map_err(|e| Error::file(&shown, e.to_string()))?;
                    let bytes = view.data();
                    let values = decode(view.dtype(), bytes);
                    let zero = values.is_none() && bytes.iter().all(|b| *b == 0);
                    check(&name, values, zero, &mut out);
                }
            }
        }
    }
    Ok(out)
}

/// The values of a tensor's little-endian bytes as f32, for the float types NaN can hide in.
fn decode(dtype: safetensors::Dtype, b: &[u8]) -> Option<Vec<f32>> {
    use safetensors::Dtype::*;
    Some(match dtype {
        F32 => b
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect(),
        F64 => b
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()) as f32)
            .collect(),
        F16 => b
            .chunks_exact(2)
            .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32())
            .collect(),
        BF16 => b
            .chunks_exact(2)
            .map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f32())
            .collect(),
        _ => return None,
    })
}
