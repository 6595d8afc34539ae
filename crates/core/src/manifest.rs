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
    let count: u128 = params.iter().map(|p| p.instances()).sum();
    if count > MAX_ENTRIES {
        return Err(Error::new(
            g.spec.name.clone(),
            "",
            format!("would list {count} tensors; anatomy lists at most {MAX_ENTRIES} (check num_hidden_layers and the expert count)"),
        ));
    }
    let mut out = Vec::with_capacity(count as usize);
    for p in params {
        let template = match naming {
            Naming::Hf => &p.hf,
            Naming::Gguf => &p.gguf,
        };
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
                    out.push(Entry {
                        name: g.spec.instantiate(template, None, e),
                        shape: shape.clone(),
                    });
                }
            }
            Some(layers) => {
                for b in layers.iter() {
                    for &e in &experts {
                        out.push(Entry {
                            name: g.spec.instantiate(template, Some(b), e),
                            shape: shape.clone(),
                        });
                    }
                }
            }
        }
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
