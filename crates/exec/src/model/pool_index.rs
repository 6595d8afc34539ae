//! Kolibri 1.1's weightless indexer (`PoolIndex`) and the NVFP4 rounding its layers attend
//! through, computed as transformers' `Kolibri1_1Indexer` and `nvfp4_fake_quantize` do.

use super::*;
use anatomy_core::spec::PoolIndex;

impl Model {
    /// Which cached keys each of the `t` new queries may attend to, [t, total] row-major.
    /// `q`: the layer's normed queries [heads, t, head_dim]; `keys`: the raw keys of K/V head
    /// 0 over every position so far [total, head_dim]. A pool layer leaves its pools in the
    /// cache for the indexed layers after it.
    pub(super) fn pool_select(
        &self,
        q: &Tensor,
        keys: &Tensor,
        p: &PoolIndex,
        b: usize,
        cache: &mut Cache,
    ) -> Res<Vec<bool>> {
        let (_, t, hd) = q.dims3()?;
        let total = keys.dim(0)?;
        let heads = p.heads as usize;
        let weight = ((hd as f64).powf(-0.5) / p.heads as f64) as f32;
        let mut qr: Vec<f32> = q.narrow(0, 0, heads)?.flatten_all()?.to_vec1()?;
        nvfp4(&mut qr);
        let raw: Vec<f32> = keys.flatten_all()?.to_vec1()?;
        // Σₕ ReLU(qₕ[i] · k) · weight, the heads summed one after another as transformers does.
        let score = |i: usize, k: &[f32]| -> f32 {
            let mut s = 0f32;
            for h in 0..heads {
                let qh = &qr[(h * t + i) * hd..][..hd];
                s += qh.iter().zip(k).map(|(a, b)| a * b).sum::<f32>().max(0.0);
            }
            s * weight
        };
        let len = |i: usize| cache.pos + i + 1;
        if p.pools.contains(b as u64) {
            let c = p.compression as usize;
            let blocks = total / c;
            // Each complete block's mean key, rounded.
            let mut means = vec![0f32; blocks * hd];
            for (j, m) in means.chunks_exact_mut(hd).enumerate() {
                for r in 0..c {
                    for (x, k) in m.iter_mut().zip(&raw[(j * c + r) * hd..][..hd]) {
                        *x += k;
                    }
                }
                m.iter_mut().for_each(|x| *x /= c as f32);
            }
            nvfp4(&mut means);
            let mut pool = vec![false; t * total];
            for i in 0..t {
                let l = len(i);
                let row = &mut pool[i * total..][..total];
                if l as u64 <= p.pool {
                    row[..l].iter_mut().for_each(|k| *k = true);
                    continue;
                }
                // The blocks and one more, for the newest tokens past the last complete block.
                let scores: Vec<f32> = (0..=blocks)
                    .map(|j| {
                        if j >= l.div_ceil(c) {
                            f32::NEG_INFINITY
                        } else if j < l / c {
                            score(i, &means[j * hd..][..hd])
                        } else {
                            0.0
                        }
                    })
                    .collect();
                let chosen = top_k(&scores, (p.pool / p.compression) as usize);
                for (s, k) in row.iter_mut().enumerate().take(l) {
                    *k = chosen[s / c];
                }
            }
            cache.pool = Some(pool);
        }
        let pool = cache
            .pool
            .as_ref()
            .expect("the first indexed layer picks a pool");
        let mut kr = raw;
        nvfp4(&mut kr);
        let (sinks, local) = (p.sinks as usize, p.local as usize);
        let mut shown = vec![f32::NEG_INFINITY; t * total];
        let mut selected = vec![false; t * total];
        for i in 0..t {
            let l = len(i);
            let row = &mut selected[i * total..][..total];
            if l as u64 <= p.budget() {
                row[..l].iter_mut().for_each(|k| *k = true);
                continue;
            }
            let scores: Vec<f32> = (0..total)
                .map(|s| {
                    let candidate = pool[i * total + s] && s >= sinks && s + local < l;
                    if candidate {
                        score(i, &kr[s * hd..][..hd])
                    } else {
                        f32::NEG_INFINITY
                    }
                })
                .collect();
            let chosen = top_k(&scores, p.top_k as usize);
            for s in 0..l {
                row[s] = chosen[s] || s < sinks || s + local >= l;
            }
            shown[i * total..][..total].copy_from_slice(&scores);
        }
        let shown = Tensor::from_vec(shown, (t, total), &Device::Cpu)?;
        self.keep_selection(b, shown, &selected, (t, total))?;
        Ok(selected)
    }
}

/// The `k` highest finite scores, ties to the lower index (`Kolibri1_1Indexer.top_k_mask`).
fn top_k(scores: &[f32], k: usize) -> Vec<bool> {
    let mut order: Vec<usize> = (0..scores.len())
        .filter(|&j| scores[j] > f32::NEG_INFINITY)
        .collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    let mut keep = vec![false; scores.len()];
    for j in order.into_iter().take(k) {
        keep[j] = true;
    }
    keep
}

/// Round to NVFP4 and back in place, each run of 16 values: E2M1 magnitudes (steps of 0.5 below
/// 2, of 1 below 4, of 2 up to 6) times one E4M3 scale, max|x| / 6 clamped to [2⁻⁹, 448];
/// ties to even.
pub(super) fn nvfp4(x: &mut [f32]) {
    for block in x.chunks_mut(16) {
        let amax = block.iter().fold(0f32, |m, v| m.max(v.abs()));
        let scale = e4m3((amax / 6.0).clamp(2f32.powi(-9), 448.0));
        for v in block.iter_mut() {
            let scaled = *v / scale;
            let m = scaled.abs().min(6.0);
            let step = if m < 2.0 {
                0.5
            } else if m < 4.0 {
                1.0
            } else {
                2.0
            };
            *v = ((m / step).round_ties_even() * step).copysign(scaled) * scale;
        }
    }
}

/// A positive value in [2⁻⁹, 448] rounded to the nearest E4M3 (3 mantissa bits; below 2⁻⁶ the
/// subnormals' step 2⁻⁹), ties to even.
fn e4m3(v: f32) -> f32 {
    let e = (((v.to_bits() >> 23) & 0xff) as i32 - 127).max(-6);
    let q = 2f32.powi(e - 3);
    (v / q).round_ties_even() * q
}

/// The NVFP4 rounding of a tensor, along its last dim.
pub(super) fn nvfp4_tensor(x: &Tensor) -> Res<Tensor> {
    let mut v: Vec<f32> = x.flatten_all()?.to_vec1()?;
    nvfp4(&mut v);
    Ok(Tensor::from_vec(v, x.shape(), &Device::Cpu)?)
}

#[cfg(test)]
mod tests {
    use super::{e4m3, nvfp4};

    #[test]
    fn e4m3_rounds_to_its_grid() {
        // 3 mantissa bits: 1.0625 lies between 1 and 1.125, a tie that goes to the even 1.
        assert_eq!(e4m3(1.0625), 1.0);
        assert_eq!(e4m3(1.1875), 1.25);
        assert_eq!(e4m3(447.0), 448.0);
        // Subnormal: steps of 2⁻⁹.
        assert_eq!(e4m3(3.4 * 2f32.powi(-9)), 3.0 * 2f32.powi(-9));
    }

    #[test]
    fn nvfp4_keeps_the_block_max_and_rounds_the_rest() {
        let mut x = [0f32; 16];
        x[0] = 6.0;
        x[1] = 1.3;
        x[2] = -2.6;
        x[3] = 0.25;
        nvfp4(&mut x);
        // Scale e4m3(6 / 6) = 1: 1.3 → 1.5, −2.6 → −3, 0.25 → 0 (a tie between 0 and 0.5).
        assert_eq!(&x[..4], &[6.0, 1.5, -3.0, 0.0]);
    }
}
