//! Convolutions over the keys and values with input-made taps (Inkling 2).

use super::*;

impl Model {
    /// Inkling 2's dynamic convolution of `x` [t, c] (K or V once projected, `heads` K/V heads):
    /// each token's taps are the stored ones ([taps, c], tap 0 the token itself) plus its own,
    /// projected from `input` (the K or V input, one set per head); x plus the mix, divided by
    /// √(2 · taps + 1). The last taps − 1 inputs are carried in the cache's `slot`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn dynamic_conv(
        &self,
        x: &Tensor,
        input: &Tensor,
        (stat, dynamic): (Role, Role),
        heads: usize,
        b: usize,
        slot: usize,
        cache: &mut Cache,
    ) -> Res<Tensor> {
        let (t, c) = x.dims2()?;
        let w: Vec<f32> = self.w(stat, Some(b))?.flatten_all()?.to_vec1()?;
        let taps = w.len() / c.max(1);
        let own: Vec<f32> = self
            .proj(input, dynamic, b, false)?
            .flatten_all()?
            .to_vec1()?;
        let hd = c / heads.max(1);
        let all = carried(&mut cache.tails[b][slot], x, taps)?;
        let mut out = all[(taps - 1) * c..].to_vec();
        let f = 1.0 / ((2 * taps + 1) as f32).sqrt();
        for (i, row) in out.iter_mut().enumerate() {
            let (tok, ch) = (i / c, i % c);
            let at = taps - 1 + tok;
            let mix: f32 = (0..taps)
                .map(|lag| {
                    let tap = w[lag * c + ch] + own[(tok * heads + ch / hd) * taps + lag];
                    tap * all[(at - lag) * c + ch]
                })
                .sum();
            *row = (*row + mix) * f;
        }
        Ok(Tensor::from_vec(out, (t, c), &Device::Cpu)?)
    }
}
