//! GOT-OCR 2's processor's crops (`GotOcr2ImageProcessor` with `crop_to_patches`, as InternVL's
//! and Aya Vision's processors always run it) and Command A Vision's
//! (`Cohere2VisionImageProcessor`): the image resized, aspect and all, onto a grid of tiles (the
//! one whose aspect ratio is nearest its own, or the one it fits with the least upscale), cut
//! into tiles row by row; where there are several, the whole image resized to one tile more,
//! last.

use super::resample::{Filter, Image, Rounding};
use super::split::cut;

/// The tile counts a grid may hold (`min_patches` to `max_patches`), and how the grid is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Crops {
    pub min: usize,
    pub max: usize,
    pub grid: Grid,
}

/// How a processor chooses the grid of tiles for an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grid {
    /// GOT-OCR 2's: the grid whose aspect ratio is nearest the image's.
    Aspect,
    /// Command A Vision's: the grid the image fits with the least upscale (else the least
    /// downscale), from 1 to `max` tiles (its `min_patches` unread).
    Upscale,
}

impl Crops {
    /// The grid (columns, rows) for an image `height` × `width` cut into tiles `tile` pixels a
    /// side: transformers' `get_optimal_tiled_canvas` of the processor's model. Of the grids in
    /// order of their tile count (columns before rows within a count):
    /// - `Aspect`: the first nearest the image's aspect; a later one as near replaces it while
    ///   the image's area passes half the grid's;
    /// - `Upscale`: each grid's scale the smaller of its width over the image's and its height
    ///   over the image's; the first of the least scale of at least 1, or where every scale is
    ///   under 1, the first of the greatest.
    pub fn grid(&self, height: usize, width: usize, tile: usize) -> (usize, usize) {
        let min = match self.grid {
            Grid::Aspect => self.min,
            Grid::Upscale => 1,
        };
        let mut grids: Vec<(usize, usize)> = (1..=self.max)
            .flat_map(|c| (1..=self.max).map(move |r| (c, r)))
            .filter(|&(c, r)| (min..=self.max).contains(&(c * r)))
            .collect();
        // Python's sort is stable, as this one.
        grids.sort_by_key(|&(c, r)| c * r);
        if self.grid == Grid::Upscale {
            // numpy's float64 quotients of the integers, as transformers divides them.
            let scale = |&(c, r): &(usize, usize)| {
                ((c * tile) as f64 / width as f64).min((r * tile) as f64 / height as f64)
            };
            let first = |better: &dyn Fn(f64, f64) -> bool| {
                let mut best: Option<((usize, usize), f64)> = None;
                for g in &grids {
                    let s = scale(g);
                    if best.is_none_or(|(_, b)| better(s, b)) {
                        best = Some((*g, s));
                    }
                }
                best.map_or((1, 1), |(g, _)| g)
            };
            return match grids.iter().all(|g| scale(g) < 1.0) {
                true => first(&|s, b| s > b),
                false => first(&|s, b| s >= 1.0 && (b < 1.0 || s < b)),
            };
        }
        let aspect = width as f64 / height as f64;
        let area = (width * height) as f64;
        let mut best = (f64::INFINITY, (1, 1));
        for (c, r) in grids {
            let diff = (aspect - c as f64 / r as f64).abs();
            if diff < best.0 {
                best = (diff, (c, r));
            } else if diff == best.0 && area > 0.5 * (tile * tile * c * r) as f64 {
                best.1 = (c, r);
            }
        }
        best.1
    }

    /// The tiles of `image` (RGB), each `tile` pixels a side as `[3, tile, tile]` values made by
    /// `values`, one after another, and their count: the grid's row by row, then the whole
    /// image's where the grid holds several.
    pub fn tiles(
        &self,
        image: &Image,
        tile: usize,
        (filter, rounding): (Filter, Rounding),
        values: &dyn Fn(&Image) -> Vec<f32>,
    ) -> (usize, Vec<f32>) {
        let (cols, rows) = self.grid(image.height, image.width, tile);
        let resized = image.resize(cols * tile, rows * tile, filter, rounding);
        let mut out = Vec::with_capacity((rows * cols + 1) * 3 * tile * tile);
        for r in 0..rows {
            for c in 0..cols {
                out.extend(values(&cut(&resized, r * tile, c * tile, tile)));
            }
        }
        let n = rows * cols;
        if n > 1 {
            out.extend(values(&image.resize(tile, tile, filter, rounding)));
        }
        (n + usize::from(n > 1), out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// transformers' choices: the nearest aspect, and among grids as near, more tiles while the
    /// image is larger than half of them.
    #[test]
    fn the_grid_is_transformers() {
        // transformers' own answers (its `get_optimal_tiled_canvas`) for each case.
        let crops = |min, max| Crops {
            min,
            max,
            grid: Grid::Aspect,
        };
        let c = crops(1, 4);
        // 61 / 40 is nearest 2 / 1.
        assert_eq!(c.grid(40, 61, 28), (2, 1));
        // A square ties 1×1 with 2×2: 2×2 where the image passes half of its 4 tiles.
        assert_eq!(c.grid(40, 40, 28), (2, 2));
        assert_eq!(c.grid(30, 30, 28), (1, 1));
        assert_eq!(c.grid(100, 40, 28), (1, 3));
        assert_eq!(crops(2, 6).grid(40, 40, 28), (2, 2));
        assert_eq!(crops(1, 1).grid(10, 500, 28), (1, 1));
        assert_eq!(crops(1, 6).grid(37, 53, 16), (3, 2));
        assert_eq!(crops(2, 4).grid(70, 45, 20), (1, 2));
    }

    /// Command A Vision's choices (transformers' `cohere2_vision` `get_optimal_tiled_canvas`):
    /// the least upscale, else the least downscale, the first in order of tile count on ties.
    #[test]
    fn the_upscale_grid_is_transformers() {
        let c = |max| Crops {
            min: 1,
            max,
            grid: Grid::Upscale,
        };
        // transformers' own answers for each case.
        assert_eq!(c(4).grid(40, 61, 28), (2, 2));
        assert_eq!(c(4).grid(20, 20, 28), (1, 1));
        assert_eq!(c(4).grid(20, 50, 28), (2, 1));
        assert_eq!(c(12).grid(500, 300, 64), (3, 4));
        assert_eq!(c(2).grid(1000, 1000, 28), (1, 1));
        assert_eq!(c(6).grid(30, 100, 16), (4, 1));
    }
}
