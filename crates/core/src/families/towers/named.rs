//! A tower's tensors named as its checkpoint stores them, step by step: what the manifest lists,
//! `verify` checks, the page draws and the total counts, all from one list.

use super::*;
use crate::layers::LayerSet;
use crate::spec::TowerBlock;

/// A tower being named, block by block.
#[derive(Default)]
pub(super) struct Named {
    blocks: Vec<TowerBlock>,
    /// A size the config sets past what a shape can hold (64 bits a dimension).
    too_big: bool,
}

/// One block being named: chained calls add its tensors.
pub(super) struct Step<'a> {
    block: &'a mut TowerBlock,
    too_big: &'a mut bool,
}

impl Named {
    /// A step run once (the patch embedding, a last norm, a projector).
    pub fn step(&mut self, title: &str) -> Step<'_> {
        self.layers(title, 1)
    }

    /// A block repeated over `n` layers: `{i}` in its names is the layer.
    pub fn layers(&mut self, title: &str, n: u128) -> Step<'_> {
        let n = u64::try_from(n).unwrap_or_else(|_| {
            self.too_big = true;
            0
        });
        self.some_layers(title, LayerSet::all(n))
    }

    /// A block of the layers in `set` alone (GOT-OCR 2's global layers).
    pub fn some_layers(&mut self, title: &str, layers: LayerSet) -> Step<'_> {
        self.blocks.push(TowerBlock {
            title: title.to_string(),
            layers,
            tensors: Vec::new(),
        });
        Step {
            block: self.blocks.last_mut().expect("just pushed"),
            too_big: &mut self.too_big,
        }
    }

    /// Every name so far under `stem` (a tower nested in its part: GIT's `vision_model.`).
    pub fn under(mut self, stem: &str) -> Self {
        for b in &mut self.blocks {
            for (name, _) in &mut b.tensors {
                name.insert_str(0, stem);
            }
        }
        self
    }

    /// The tower, held only where its parameters fit in 64 bits (else an error at `key`, the
    /// wrapper's sub-config that sized it). Blocks without tensors or layers (a step the config
    /// turns off) are dropped.
    pub fn done(mut self, top: &Config, key: &str) -> Result<Option<Vec<TowerBlock>>> {
        let total = (!self.too_big)
            .then(|| {
                self.blocks.iter().try_fold(0u64, |sum, b| {
                    let one = b.tensors.iter().try_fold(0u64, |s, (_, shape)| {
                        let n = shape.iter().try_fold(1u64, |p, &d| p.checked_mul(d))?;
                        s.checked_add(n)
                    })?;
                    sum.checked_add(one.checked_mul(b.layers.len())?)
                })
            })
            .flatten();
        if total.is_none() {
            return Err(top.err(key, "gives a tower too large to count in 64 bits"));
        }
        self.blocks
            .retain(|b| !b.tensors.is_empty() && !b.layers.is_empty());
        Ok(Some(self.blocks))
    }
}

impl Step<'_> {
    /// One tensor of `shape`.
    pub fn t(self, name: &str, shape: &[u128]) -> Self {
        let shape = shape
            .iter()
            .map(|&d| {
                u64::try_from(d).unwrap_or_else(|_| {
                    *self.too_big = true;
                    0
                })
            })
            .collect();
        self.block.tensors.push((name.to_string(), shape));
        self
    }

    /// A linear map `[out, in]`, with its bias where `bias`.
    pub fn linear(self, name: &str, out: u128, inp: u128, bias: bool) -> Self {
        self.linear_shaped(name, &[out, inp], bias)
    }

    /// A linear map stored in another shape (a patch convolution's), with its bias where
    /// `bias`.
    /// An empty `name`: the part's prefix is the module's (Fuyu's `vision_embed_tokens.`).
    pub fn linear_shaped(self, name: &str, shape: &[u128], bias: bool) -> Self {
        let at = |end: &str| match name {
            "" => end.to_string(),
            _ => format!("{name}.{end}"),
        };
        let s = self.t(&at("weight"), shape);
        match bias {
            true => s.t(&at("bias"), &shape[..1]),
            false => s,
        }
    }

    /// Gemma's clipped linear: a bias-free map under `linear.`, and where `clip` the four scalar
    /// bounds of its input and output.
    pub fn clipped(self, name: &str, out: u128, inp: u128, clip: bool) -> Self {
        let s = self.t(&format!("{name}.linear.weight"), &[out, inp]);
        match clip {
            true => ["input_min", "input_max", "output_min", "output_max"]
                .iter()
                .fold(s, |s, b| s.t(&format!("{name}.{b}"), &[])),
            false => s,
        }
    }

    /// A convolution and the RMS norm after it, as timm's ConvNormAct holds them (`conv`,
    /// `bn`), the norm as wide as the convolution's output.
    pub fn conv_norm(self, name: &str, shape: &[u128]) -> Self {
        self.t(&format!("{name}.conv.weight"), shape)
            .rms(&format!("{name}.bn"), shape[0])
    }

    /// A LayerNorm: its scale and shift.
    pub fn layer_norm(self, name: &str, d: u128) -> Self {
        self.t(&format!("{name}.weight"), &[d])
            .t(&format!("{name}.bias"), &[d])
    }

    /// An RMSNorm: its scale.
    pub fn rms(self, name: &str, d: u128) -> Self {
        self.t(&format!("{name}.weight"), &[d])
    }

    /// A LayerNorm, or an RMSNorm where `rms`.
    pub fn norm(self, name: &str, d: u128, rms: bool) -> Self {
        match rms {
            true => self.rms(name, d),
            false => self.layer_norm(name, d),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> serde_json::Value {
        serde_json::json!({"vision_config": {}})
    }

    /// Blocks keep their tensors in order, a nested stem prefixes every name, a step the config
    /// turns off (no tensors) is dropped, and the count is every tensor over its repeats.
    #[test]
    fn blocks_name_count_and_drop_empty_steps() {
        let json = config();
        let top = Config::new("config.json", &json).unwrap();
        let mut n = Named::default();
        n.step("patch embedding").t("cls", &[4]);
        n.layers("layer", 3).linear("layers.{i}.fc", 2, 4, true);
        n.step("off");
        let Some(blocks) = n
            .under("vision_model.")
            .done(&top, "vision_config")
            .unwrap()
        else {
            panic!("named");
        };
        let titles: Vec<_> = blocks.iter().map(|b| b.title.as_str()).collect();
        assert_eq!(titles, ["patch embedding", "layer"]);
        assert_eq!(blocks[1].tensors[0].0, "vision_model.layers.{i}.fc.weight");
        assert_eq!(
            blocks.iter().map(|b| b.params()).sum::<u128>(),
            4 + 3 * (8 + 2)
        );
    }

    /// A shape or a count past 64 bits is an error at the sub-config that sized it.
    #[test]
    fn sizes_past_64_bits_are_an_error() {
        let json = config();
        let top = Config::new("config.json", &json).unwrap();
        let mut n = Named::default();
        n.step("huge").t("w", &[1 << 40, 1 << 40]);
        let e = n.done(&top, "vision_config").unwrap_err().to_string();
        assert!(e.contains("vision_config") && e.contains("64 bits"), "{e}");
        let mut n = Named::default();
        n.step("wide").t("w", &[u64::MAX as u128 + 1]);
        assert!(n.done(&top, "vision_config").is_err());
    }
}
