//! The checkpoint layout the Graph implies: every stored tensor with its shape.

use crate::error::{Error, Result};
use crate::graph::{Component, Graph};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming {
    Hf,
    Gguf,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub shape: Vec<u64>,
    /// The parameters it holds: its values, a quantized matrix's logical `[out, in]` on its
    /// first stored tensor, and none on its scales, zero points and indices.
    pub params: u128,
    /// Where `quantization_config` packs it: the stored dtype and the format.
    pub packed: Option<Packed>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packed {
    /// Its dtype; `None`: the checkpoint's float type (scales).
    pub dtype: Option<crate::quant::Dtype>,
    pub format: String,
    /// One-dimensional, of a length the stored data sets (bitsandbytes' JSON state): `shape`
    /// is `[0]`.
    pub any_length: bool,
}

fn numel(shape: &[u64]) -> u128 {
    shape.iter().map(|&d| d as u128).product()
}

/// Ten times the entries of the largest real checkpoint (DeepSeek-V3 and Kimi K2 store about
/// 90,000 tensors); beyond it the listing is refused rather than built.
pub const MAX_ENTRIES: u128 = 1_000_000;

/// Every checkpoint tensor, in graph order (layer by layer within each template).
pub fn manifest(g: &Graph, naming: Naming) -> Result<Vec<Entry>> {
    // The layout transformers saves: auxiliary modules (multi-token prediction) are not in it.
    let params: Vec<_> = g
        .params
        .iter()
        .filter(|p| p.component != Component::Aux)
        .collect();
    // A wrapper's towers, where anatomy names their tensors: a GGUF file holds none of them
    // (llama.cpp keeps them in a separate mmproj file).
    let towers: Vec<_> = match naming {
        Naming::Hf => g.spec.towers.iter().collect(),
        Naming::Gguf => Vec::new(),
    };
    let count: u128 = params.iter().map(|p| p.instances()).sum::<u128>()
        + (towers.iter().flat_map(|t| t.steps()))
            .map(|b| b.count() as u128)
            .sum::<u128>();
    if count > MAX_ENTRIES {
        return Err(Error::new(
            g.spec.name.clone(),
            "",
            format!("would list {count} tensors; anatomy lists at most {MAX_ENTRIES} (check num_hidden_layers and the expert count)"),
        ));
    }
    let mut out = Vec::with_capacity(count as usize);
    // A quantized checkpoint stores its matrices packed, under names of the format's own.
    let quant = (g.spec.quant.as_ref().map(|d| &d.quant)).filter(|_| naming == Naming::Hf);
    let matrices = quant
        .map(|q| crate::quant::matrices(g, q))
        .unwrap_or_default();
    // A matrix's packing by its last two dims; the experts of an MLX stack lead every part.
    let push = |out: &mut Vec<Entry>, i: usize, name: String, shape: &Vec<u64>| {
        let (lead, matrix_shape) = shape.split_at(shape.len().saturating_sub(2));
        let packing = quant
            .zip(matrices.get(i))
            .and_then(|(q, &(matrix, lookup))| {
                let module = name.strip_suffix(".weight").filter(|_| matrix)?;
                let &[out, inp] = matrix_shape else {
                    return None;
                };
                Some((q, module, q.packing(module, out, inp, lookup)?))
            });
        match packing {
            Some((q, module, packing)) => {
                let format = q.format(packing);
                let parts = q.parts(packing, matrix_shape[0], matrix_shape[1]);
                for (k, part) in parts.into_iter().enumerate() {
                    out.push(Entry {
                        name: format!("{module}.{}", part.suffix),
                        params: if k == 0 { numel(shape) } else { 0 },
                        shape: lead.iter().copied().chain(part.shape).collect(),
                        packed: Some(Packed {
                            dtype: part.dtype,
                            format: format.clone(),
                            any_length: part.any_length,
                        }),
                    });
                }
            }
            None => out.push(Entry {
                params: numel(shape),
                name,
                shape: shape.clone(),
                packed: None,
            }),
        }
    };
    for (i, p) in g.params.iter().enumerate() {
        if p.component == Component::Aux {
            continue;
        }
        let template = match naming {
            Naming::Hf => &p.hf,
            Naming::Gguf => &p.gguf,
        };
        // MLX stacks a layer's experts (`switch_mlp`) where transformers saves one each.
        let switch = (quant.and_then(|q| q.mlx_switch_of(template))).filter(|_| p.experts > 1);
        let template = switch.as_deref().unwrap_or(template);
        let per_expert = template.contains("{e}");
        let experts: Vec<Option<u64>> = if per_expert {
            (0..p.experts).map(Some).collect()
        } else {
            vec![None]
        };
        // A template without `{e}` holds all of a layer's experts in one tensor, stacked first,
        // or row after row (DBRX).
        let shape = if !per_expert && p.flat {
            let mut s = p.shape.clone();
            s[0] *= p.experts;
            s
        } else if !per_expert && p.experts > 1 {
            std::iter::once(p.experts)
                .chain(p.shape.iter().copied())
                .collect()
        } else {
            p.shape.clone()
        };
        match &p.layers {
            None => {
                // Outside the blocks, one tensor per index (Gemma 3n's stream projections).
                for &e in &experts {
                    push(&mut out, i, g.spec.instantiate(template, None, e), &shape);
                }
            }
            Some(layers) => {
                for b in layers.iter() {
                    for &e in &experts {
                        push(
                            &mut out,
                            i,
                            g.spec.instantiate(template, Some(b), e),
                            &shape,
                        );
                    }
                }
            }
        }
    }
    for (name, shape) in towers.iter().flat_map(|t| t.tensors()) {
        out.push(Entry {
            params: numel(shape),
            name,
            shape: shape.to_vec(),
            packed: None,
        });
    }
    out.sort_by_cached_key(|a| natural_key(&a.name));
    Ok(out)
}

/// Sort key that orders `layers.10` after `layers.9`.
fn natural_key(name: &str) -> Vec<(u64, String)> {
    name.split('.')
        .map(|part| {
            part.parse::<u64>()
                .map_or((u64::MAX, part.to_string()), |n| (n, String::new()))
        })
        .collect()
}
