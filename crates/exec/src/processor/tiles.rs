//! Llama 4's processor (`Llama4ImageProcessor`): the image resized without distortion onto the
//! canvas of tiles that fits it best, padded with black to the canvas, cut into tiles row by
//! row; where there are several, the whole image resized to one tile more, last. Its values are
//! rescaled and normalized in bfloat16, as its class does (its only backend is torchvision's).

use super::resample::{Filter, Image, Rounding};

/// A tiling processor's settings beyond the tile's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tiling {
    /// The most tiles a canvas holds (`max_patches`).
    pub max: usize,
    /// Take the canvas that enlarges the image most rather than least
    /// (`resize_to_max_canvas`); else never enlarge beyond a tile's side.
    pub to_max_canvas: bool,
}

impl Tiling {
    /// The canvas (rows, columns of tiles of `tile` pixels) for an image `height` × `width`:
    /// transformers' `get_best_fit` over `find_supported_resolutions`, in float32 as torch
    /// compares the scales.
    pub fn canvas(&self, height: usize, width: usize, tile: usize) -> (usize, usize) {
        let shapes = shapes(self.max);
        let scale = |&(r, c): &(usize, usize)| {
            let (sh, sw) = (
                (r * tile) as f32 / height as f32,
                (c * tile) as f32 / width as f32,
            );
            if sh > sw {
                sw
            } else {
                sh
            }
        };
        let scales: Vec<f32> = shapes.iter().map(scale).collect();
        let up = scales.iter().copied().filter(|&s| s >= 1.0);
        let chosen = match (self.to_max_canvas, up.clone().next().is_some()) {
            (true, true) => up.fold(f32::MIN, f32::max),
            (false, true) => up.fold(f32::MAX, f32::min),
            (_, false) => scales.iter().copied().fold(f32::MIN, f32::max),
        };
        // Of the canvases at that scale, the first of the least area.
        let mut best: Option<(usize, usize)> = None;
        for (shape, s) in shapes.into_iter().zip(scales) {
            if s == chosen && best.is_none_or(|(r, c)| shape.0 * shape.1 < r * c) {
                best = Some(shape);
            }
        }
        best.unwrap_or((1, 1))
    }

    /// The tiles of `image` (RGB) with `filter` and `rounding`, each `[3, tile, tile]` values
    /// rescaled by `rescale` and normalized by `(mean, std)` in bfloat16, and the canvas's rows
    /// and columns of them (the whole image after them where there are several).
    pub fn tiles(
        &self,
        image: &Image,
        tile: usize,
        (filter, rounding): (Filter, Rounding),
        rescale: Option<f64>,
        normalize: Option<([f32; 3], [f32; 3])>,
    ) -> ([usize; 2], Vec<f32>) {
        let (rows, cols) = self.canvas(image.height, image.width, tile);
        let (th, tw) = (rows * tile, cols * tile);
        // Enlarged at most to a tile's side, unless to the largest canvas.
        let (bh, bw) = match self.to_max_canvas {
            true => (th, tw),
            false => (
                image.height.max(tile).min(th),
                image.width.max(tile).min(tw),
            ),
        };
        let (h, w) = undistorted(image.height, image.width, bh, bw);
        let resized = image.resize(w.max(1), h.max(1), filter, rounding);
        let values = |img: &Image, height: usize, width: usize| -> Vec<f32> {
            // Black beyond the resized image, channels first.
            let mut out = vec![0f32; 3 * height * width];
            for c in 0..3 {
                for y in 0..height {
                    for x in 0..width {
                        let v = match y < img.height && x < img.width {
                            true => img.data[(y * img.width + x) * 3 + c],
                            false => 0,
                        };
                        out[(c * height + y) * width + x] = value(v, c, rescale, normalize);
                    }
                }
            }
            out
        };
        let canvas = values(&resized, th, tw);
        let mut out = Vec::with_capacity((rows * cols + 1) * 3 * tile * tile);
        for r in 0..rows {
            for col in 0..cols {
                for c in 0..3 {
                    for y in 0..tile {
                        let from = (c * th + r * tile + y) * tw + col * tile;
                        out.extend_from_slice(&canvas[from..from + tile]);
                    }
                }
            }
        }
        if rows * cols > 1 {
            let whole = image.resize(tile, tile, filter, rounding);
            out.extend(values(&whole, tile, tile));
        }
        ([rows, cols], out)
    }
}

/// transformers' `find_supported_resolutions`, in its order: for each tile count from `max` down
/// to 1, its factorizations (rows ascending), grouped by aspect ratio in the order each ratio
/// first appears.
fn shapes(max: usize) -> Vec<(usize, usize)> {
    let mut groups: Vec<(f64, Vec<(usize, usize)>)> = Vec::new();
    for n in (1..=max).rev() {
        for rows in (1..=n).filter(|r| n % r == 0) {
            let shape = (rows, n / rows);
            let ratio = rows as f64 / (n / rows) as f64;
            match groups.iter_mut().find(|(r, _)| *r == ratio) {
                Some((_, list)) => list.push(shape),
                None => groups.push((ratio, vec![shape])),
            }
        }
    }
    groups.into_iter().flat_map(|(_, list)| list).collect()
}

/// transformers' `get_max_res_without_distortion`: the largest size of an image `height` ×
/// `width` within `bh` × `bw` at its own aspect (the limiting side exact, the other floored).
fn undistorted(height: usize, width: usize, bh: usize, bw: usize) -> (usize, usize) {
    let (sw, sh) = (bw as f64 / width as f64, bh as f64 / height as f64);
    match sw < sh {
        true => (((height as f64 * sw).floor() as usize).min(bh), bw),
        false => (bh, ((width as f64 * sh).floor() as usize).min(bw)),
    }
}

/// One value as Llama 4's class rescales and normalizes it: each step rounded to bfloat16
/// (the factor a float32, the mean and deviation bfloat16, as torch takes them).
fn value(v: u8, c: usize, rescale: Option<f64>, normalize: Option<([f32; 3], [f32; 3])>) -> f32 {
    let bf = |x: f32| half::bf16::from_f32(x).to_f32();
    let x = match rescale {
        Some(f) => bf(f32::from(v) * f as f32),
        None => f32::from(v),
    };
    match normalize {
        Some((mean, std)) => bf(bf(x - bf(mean[c])) / bf(std[c])),
        None => x,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// transformers' order of the canvases for 4 tiles, and its docstring's example: a 200×300
    /// image onto tiles of 224 takes 1×2 of them (the least enlargement, then the least area).
    #[test]
    fn the_best_canvas_is_transformers() {
        assert_eq!(
            shapes(4),
            [
                (1, 4),
                (2, 2),
                (1, 1),
                (4, 1),
                (1, 3),
                (3, 1),
                (1, 2),
                (2, 1)
            ]
        );
        let t = Tiling {
            max: 4,
            to_max_canvas: false,
        };
        assert_eq!(t.canvas(200, 300, 224), (1, 2));
        // No canvas enlarges 900×900: the one that shrinks it least.
        assert_eq!(t.canvas(900, 900, 224), (2, 2));
        let most = Tiling {
            to_max_canvas: true,
            ..t
        };
        assert_eq!(most.canvas(200, 300, 224), (2, 2));
    }

    #[test]
    fn resizes_without_distortion_as_transformers() {
        // Its docstring's examples.
        assert_eq!(undistorted(200, 300, 450, 200), (133, 200));
        assert_eq!(undistorted(800, 600, 450, 1300), (450, 337));
    }
}
