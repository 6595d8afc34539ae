//! Rotary position encoding: the inverse frequencies of every scaling kind as transformers'
//! `modeling_rope_utils` computes them, their cos and sin tables, and the rotation.

use anatomy_core::spec::{AttnSpan, Rope, RopeFreqs, RopeScaling};
use candle_core::{Device, Tensor};
use std::f64::consts::PI;

type R<T> = candle_core::Result<T>;

/// The inverse frequencies of `dim` rotated dims for a sequence of `seq_len` tokens (dynamic NTK
/// and LongRoPE depend on it), and the factor on cos and sin.
pub fn inv_freq(f: &RopeFreqs, dim: usize, seq_len: usize) -> (Vec<f64>, f64) {
    let plain = |base: f64| -> Vec<f64> {
        (0..dim / 2)
            .map(|i| 1.0 / base.powf(2.0 * i as f64 / dim as f64))
            .collect()
    };
    let mut inv = plain(f.theta);
    let mut factor_out = 1.0;
    match &f.scaling {
        RopeScaling::None => {}
        RopeScaling::Linear { factor } => inv.iter_mut().for_each(|x| *x /= factor),
        RopeScaling::Dynamic { factor, original } => {
            let (s, o) = (seq_len as f64, *original as f64);
            if s > o {
                let d = dim as f64;
                let base = f.theta * ((factor * s / o) - (factor - 1.0)).powf(d / (d - 2.0));
                inv = plain(base);
            }
        }
        RopeScaling::Llama3 {
            factor,
            low_freq_factor: low,
            high_freq_factor: high,
            original,
        } => {
            let old = *original as f64;
            let (low_wl, high_wl) = (old / low, old / high);
            for x in inv.iter_mut() {
                let wl = 2.0 * PI / *x;
                let scaled = if wl > low_wl { *x / factor } else { *x };
                let smooth = (old / wl - low) / (high - low);
                *x = if wl >= high_wl && wl <= low_wl {
                    (1.0 - smooth) * scaled / factor + smooth * scaled
                } else {
                    scaled
                };
            }
        }
        RopeScaling::Yarn {
            factor,
            original,
            beta_fast,
            beta_slow,
            attention_factor,
            truncate,
        } => {
            factor_out = *attention_factor;
            let old = *original as f64;
            let cdim =
                |rot: f64| (dim as f64 * (old / (rot * 2.0 * PI)).ln()) / (2.0 * f.theta.ln());
            let (mut lo, mut hi) = (cdim(*beta_fast), cdim(*beta_slow));
            if *truncate {
                lo = lo.floor();
                hi = hi.ceil();
            }
            let (lo, mut hi) = (lo.max(0.0), hi.min(dim as f64 - 1.0));
            if lo == hi {
                hi += 0.001;
            }
            for (i, x) in inv.iter_mut().enumerate() {
                let ramp = ((i as f64 - lo) / (hi - lo)).clamp(0.0, 1.0);
                let extra = 1.0 - ramp;
                *x = *x / factor * (1.0 - extra) + *x * extra;
            }
        }
        RopeScaling::Proportional { factor, fraction } => {
            let turning = (fraction * dim as f64 / 2.0).floor() as usize;
            for (i, x) in inv.iter_mut().enumerate() {
                *x = if i < turning { *x / factor } else { 0.0 };
            }
        }
        RopeScaling::LongRope {
            short,
            long,
            original,
            attention_factor,
            mscale,
        } => {
            let beyond = seq_len as u64 > *original;
            factor_out = match mscale {
                Some((s, l)) => {
                    if beyond {
                        *l
                    } else {
                        *s
                    }
                }
                None => *attention_factor,
            };
            let ext = if beyond && mscale.is_none() {
                long
            } else {
                short
            };
            for (x, e) in inv.iter_mut().zip(ext) {
                *x /= e;
            }
        }
    }
    (inv, factor_out)
}

/// `tables` for a layer of `span` under `r`: its frequencies, and sin negated where the model
/// rotates backwards (NanoChat).
pub fn tables_for(
    r: &Rope,
    span: AttnSpan,
    dim: usize,
    start: usize,
    t: usize,
) -> R<(Tensor, Tensor)> {
    // `start` counts the tokens before; PaliGemma's positions count from 1.
    let (cos, sin) = tables(r.freqs(span), dim, start + r.start as usize, t)?;
    Ok(if r.reversed {
        (cos, sin.neg()?)
    } else {
        (cos, sin)
    })
}

/// cos and sin for positions start..start+t: [t, dim], each frequency written twice as
/// transformers' `cat((freqs, freqs))` does. Angles are taken in float32, as there.
pub fn tables(f: &RopeFreqs, dim: usize, start: usize, t: usize) -> R<(Tensor, Tensor)> {
    let (inv, factor) = inv_freq(f, dim, start + t);
    let mut cos = Vec::with_capacity(t * dim);
    let mut sin = Vec::with_capacity(t * dim);
    for p in start..start + t {
        for _half in 0..2 {
            for x in &inv {
                let a = (p as f32) * (*x as f32);
                cos.push(a.cos() * factor as f32);
                sin.push(a.sin() * factor as f32);
            }
        }
    }
    Ok((
        Tensor::from_vec(cos, (t, dim), &Device::Cpu)?,
        Tensor::from_vec(sin, (t, dim), &Device::Cpu)?,
    ))
}

/// cos and sin for tokens at 3-D positions `at` (M-RoPE: time, row, column), [t, dim]: rotated
/// pair j turns by the position on `axis[j]` (transformers' `recomposition_frequencies`), each
/// written twice as `tables` writes them.
pub fn mrope_tables(
    f: &RopeFreqs,
    dim: usize,
    at: &[[i64; 3]],
    axis: &[usize],
) -> R<(Tensor, Tensor)> {
    let reach = at
        .iter()
        .flatten()
        .max()
        .map_or(1, |&p| p.max(0) as usize + 1);
    let (inv, factor) = inv_freq(f, dim, reach);
    let mut cos = Vec::with_capacity(at.len() * dim);
    let mut sin = Vec::with_capacity(at.len() * dim);
    for pos in at {
        for _half in 0..2 {
            for (x, &a) in inv.iter().zip(axis) {
                let angle = (pos[a] as f32) * (*x as f32);
                cos.push(angle.cos() * factor as f32);
                sin.push(angle.sin() * factor as f32);
            }
        }
    }
    let t = at.len();
    Ok((
        Tensor::from_vec(cos, (t, dim), &Device::Cpu)?,
        Tensor::from_vec(sin, (t, dim), &Device::Cpu)?,
    ))
}

/// Rotate the first rotary_dim dims of x [heads, t, hd]: the two halves of each head, or
/// interleaved pairs; one pass over the values, with transformers' products and sums.
pub fn rotate(x: &Tensor, cos: &Tensor, sin: &Tensor, interleaved: bool) -> R<Tensor> {
    let dim = cos.dim(1)?;
    let (heads, t, hd) = x.dims3()?;
    let (cos, sin) = (
        cos.flatten_all()?.to_vec1::<f32>()?,
        sin.flatten_all()?.to_vec1::<f32>()?,
    );
    let mut v = x.flatten_all()?.to_vec1::<f32>()?;
    let half = dim / 2;
    for (r, row) in v.chunks_exact_mut(hd).enumerate() {
        let (c, s) = (&cos[r % t * dim..][..dim], &sin[r % t * dim..][..dim]);
        for j in 0..half {
            if interleaved {
                // Pair j is (x₂ⱼ, x₂ⱼ₊₁) with frequency j: the tables' first half.
                let (a, b) = (row[2 * j], row[2 * j + 1]);
                row[2 * j] = a * c[j] - b * s[j];
                row[2 * j + 1] = a * s[j] + b * c[j];
            } else {
                // x·cos + rotate_half(x)·sin, rotate_half(x) = (−x₂, x₁).
                let (a, b) = (row[j], row[j + half]);
                row[j] = a * c[j] - b * s[j];
                row[j + half] = b * c[j + half] + a * s[j + half];
            }
        }
    }
    Tensor::from_vec(v, (heads, t, hd), &Device::Cpu)
}
