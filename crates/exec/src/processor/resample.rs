//! An 8-bit image resized with a convolution filter, to the bit, as either of transformers'
//! image-processor backends does it: Pillow's `Image.resize` (the PIL backend) or torch's
//! antialiased `interpolate` on uint8 (torchvision's `resize`, the torchvision backend). Both
//! weigh each output pixel's source pixels alike in f64 (Pillow-SIMD's scheme, which torch
//! copied), then round them to fixed point, and each pass to 8 bits: Pillow with 22 fraction
//! bits and, in Pillow 13, the vertical pass first where the height loses more than twice the
//! pixels the width does; torch with as many bits as keep the largest weight within an i16, the
//! horizontal pass first. Channels are independent.

/// Pillow's resampling filters that resize by convolution (`PIL.Image.Resampling`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    Box,
    Bilinear,
    Hamming,
    Bicubic,
    Lanczos,
}

impl Filter {
    /// Half the filter's width at scale 1.
    fn support(self) -> f64 {
        match self {
            Filter::Box => 0.5,
            Filter::Bilinear | Filter::Hamming => 1.0,
            Filter::Bicubic => 2.0,
            Filter::Lanczos => 3.0,
        }
    }

    fn weight(self, x: f64) -> f64 {
        use std::f64::consts::PI;
        let sinc = |x: f64| {
            if x == 0.0 {
                1.0
            } else {
                (x * PI).sin() / (x * PI)
            }
        };
        match self {
            Filter::Box => {
                if x > -0.5 && x <= 0.5 {
                    1.0
                } else {
                    0.0
                }
            }
            Filter::Bilinear => {
                let x = x.abs();
                if x < 1.0 {
                    1.0 - x
                } else {
                    0.0
                }
            }
            Filter::Hamming => {
                let x = x.abs();
                if x == 0.0 {
                    1.0
                } else if x >= 1.0 {
                    0.0
                } else {
                    let x = x * PI;
                    // Pillow writes the window's constants as C floats (0.54f, 0.46f).
                    x.sin() / x * (f64::from(0.54f32) + f64::from(0.46f32) * x.cos())
                }
            }
            Filter::Bicubic => {
                // Keys' cubic with a = -0.5, as Pillow's.
                let a = -0.5;
                let x = x.abs();
                if x < 1.0 {
                    ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
                } else if x < 2.0 {
                    (((x - 5.0) * x + 8.0) * x - 4.0) * a
                } else {
                    0.0
                }
            }
            Filter::Lanczos => {
                if (-3.0..3.0).contains(&x) {
                    sinc(x) * sinc(x / 3.0)
                } else {
                    0.0
                }
            }
        }
    }
}

/// Pillow's fraction bits of the fixed-point weights: two bits of headroom over 8-bit sums in 32
/// bits.
const PRECISION: u32 = 32 - 8 - 2;

/// Whose rounding: Pillow's, or torch's (torchvision's resize).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounding {
    Pillow,
    Torch,
}

/// One output pixel's source span and fixed-point weights.
struct Taps {
    first: usize,
    weights: Vec<i32>,
}

/// Each output pixel's source span and weights for `from` input pixels to `to` (Pillow's
/// `precompute_coeffs`; torch's `_compute_weights_aa` is the same arithmetic), and the fraction
/// bits they are rounded to: Pillow's 22, or torch's most that keep the largest weight within an
/// i16 (`_compute_index_ranges_int16_weights`).
fn taps(from: usize, to: usize, filter: Filter, rounding: Rounding) -> (Vec<Taps>, u32) {
    let scale = from as f64 / to as f64;
    let filterscale = scale.max(1.0);
    let support = filter.support() * filterscale;
    let ss = 1.0 / filterscale;
    let spans: Vec<(usize, Vec<f64>)> = (0..to)
        .map(|xx| {
            let center = (xx as f64 + 0.5) * scale;
            // C's casts truncate toward zero; the low bound is clamped at 0 after.
            let lo = ((center - support + 0.5) as i64).max(0) as usize;
            let hi = ((center + support + 0.5) as i64).min(from as i64) as usize;
            let w: Vec<f64> = (lo..hi)
                .map(|x| filter.weight((x as f64 - center + 0.5) * ss))
                .collect();
            let total: f64 = w.iter().sum();
            (
                lo,
                w.iter()
                    .map(|&w| if total != 0.0 { w / total } else { w })
                    .collect(),
            )
        })
        .collect();
    let precision = match rounding {
        Rounding::Pillow => PRECISION,
        Rounding::Torch => {
            let max = spans
                .iter()
                .flat_map(|(_, w)| w)
                .fold(0.0f64, |m, &w| m.max(w));
            (0..22)
                .find(|&p| (0.5 + max * f64::from(1u32 << (p + 1))) as i64 >= 1 << 15)
                .unwrap_or(22)
        }
    };
    let one = f64::from(1u32 << precision);
    let taps = spans
        .into_iter()
        .map(|(first, w)| Taps {
            first,
            weights: w
                .iter()
                .map(|&w| match w < 0.0 {
                    true => (w * one - 0.5) as i32,
                    false => (w * one + 0.5) as i32,
                })
                .collect(),
        })
        .collect();
    (taps, precision)
}

/// A fixed-point sum of `precision` fraction bits back to 8 bits, rounded (the sums start at
/// half a unit) and clamped.
fn clip8(sum: i64, precision: u32) -> u8 {
    (sum >> precision).clamp(0, 255) as u8
}

/// An interleaved 8-bit image: `height` rows of `width` pixels of `channels` bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    pub width: usize,
    pub height: usize,
    pub channels: usize,
    pub data: Vec<u8>,
}

impl Image {
    /// Resized to `width` × `height` as Pillow's `Image.resize(…, resample=filter)` (no box,
    /// no reducing gap) or torch's antialiased uint8 `interpolate` round it: a pass only along
    /// each axis whose size changes, the horizontal one first, unless Pillow's height loses more
    /// than twice the pixels its width does (Pillow 13 then shortens it first; Pillow 12 and
    /// before did not).
    pub fn resize(&self, width: usize, height: usize, filter: Filter, rounding: Rounding) -> Image {
        let horizontal = |i: &Image| match width != i.width {
            true => i.pass(width, filter, rounding, true),
            false => i.clone(),
        };
        let vertical = |i: &Image| match height != i.height {
            true => i.pass(height, filter, rounding, false),
            false => i.clone(),
        };
        // Pillow 13 shortens first where the height loses more than twice the pixels the width
        // does (its `Resample.c`; measured against it on random sizes).
        let [w0, h0, w1, h1] = [self.width, self.height, width, height].map(|n| n as i64);
        if rounding == Rounding::Pillow && h1 < h0 && h0 - h1 > 2 * (w0 - w1) {
            horizontal(&vertical(self))
        } else {
            vertical(&horizontal(self))
        }
    }

    /// One pass along rows (`horizontal`) or columns to `size` pixels.
    fn pass(&self, size: usize, filter: Filter, rounding: Rounding, horizontal: bool) -> Image {
        let c = self.channels;
        let (width, height) = if horizontal {
            (size, self.height)
        } else {
            (self.width, size)
        };
        let (taps, precision) = taps(
            if horizontal { self.width } else { self.height },
            size,
            filter,
            rounding,
        );
        let mut data = vec![0u8; width * height * c];
        for y in 0..height {
            for x in 0..width {
                let t = &taps[if horizontal { x } else { y }];
                for ch in 0..c {
                    let mut sum = 1i64 << precision >> 1;
                    for (i, &w) in t.weights.iter().enumerate() {
                        let (sx, sy) = if horizontal {
                            (t.first + i, y)
                        } else {
                            (x, t.first + i)
                        };
                        sum += i64::from(self.data[(sy * self.width + sx) * c + ch]) * i64::from(w);
                    }
                    data[(y * width + x) * c + ch] = clip8(sum, precision);
                }
            }
        }
        Image {
            width,
            height,
            channels: c,
            data,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn image(width: usize, height: usize, data: Vec<u8>) -> Image {
        Image {
            width,
            height,
            channels: 1,
            data,
        }
    }

    /// Each output pixel's weights sum to one (in fixed point, within rounding).
    #[test]
    fn weights_sum_to_one() {
        for filter in [
            Filter::Box,
            Filter::Bilinear,
            Filter::Hamming,
            Filter::Bicubic,
            Filter::Lanczos,
        ] {
            for (from, to) in [(37, 28), (28, 37), (53, 7), (5, 64)] {
                for rounding in [Rounding::Pillow, Rounding::Torch] {
                    let (taps, precision) = taps(from, to, filter, rounding);
                    for t in taps {
                        let sum: i64 = t.weights.iter().map(|&w| i64::from(w)).sum();
                        let n = t.weights.len() as i64;
                        assert!(
                            (sum - (1 << precision)).abs() <= n,
                            "{filter:?} {from}→{to}"
                        );
                        // torch's weights fit an i16.
                        if rounding == Rounding::Torch {
                            assert!(t.weights.iter().all(|&w| i16::try_from(w).is_ok()));
                        }
                    }
                }
            }
        }
    }

    proptest! {
        /// A flat image stays flat through any filter and size.
        #[test]
        fn a_flat_image_stays_flat(v in any::<u8>(), w in 1usize..40, h in 1usize..40, tw in 1usize..40, th in 1usize..40) {
            for rounding in [Rounding::Pillow, Rounding::Torch] {
                let out = image(w, h, vec![v; w * h]).resize(tw, th, Filter::Bicubic, rounding);
                prop_assert!(out.data.iter().all(|&x| x == v));
                prop_assert_eq!(out.data.len(), tw * th);
            }
        }
    }

    /// Halving by Box averages each pair, rounded half up as Pillow rounds.
    #[test]
    fn box_halving_averages_pairs() {
        let out = image(4, 1, vec![0, 1, 10, 20]).resize(2, 1, Filter::Box, Rounding::Pillow);
        assert_eq!(out.data, vec![1, 15]);
    }
}
