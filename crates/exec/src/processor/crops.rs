//! GOT-OCR 2's processor's crops (`GotOcr2ImageProcessor` with `crop_to_patches`, as InternVL's
//! processor always runs it): the image resized, aspect and all, onto the grid of tiles whose
//! aspect ratio is nearest its own, cut into tiles row by row; where there are several, the whole
//! image resized to one tile more, last.

use super::resample::{Filter, Image, Rounding};

/// The tile counts a grid may hold (`min_patches` to `max_patches`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Crops {
    pub min: usize,
    pub max: usize,
}

impl Crops {
    /// The grid (columns, rows) for an image `height` × `width` cut into tiles `tile` pixels a
    /// side: transformers' `get_optimal_tiled_canvas`. Of the grids in order of their tile count
    /// (columns before rows within a count), the first nearest the image's aspect; a later one as
    /// near replaces it while the image's area passes half the grid's.
    pub fn grid(&self, height: usize, width: usize, tile: usize) -> (usize, usize) {
        let mut grids: Vec<(usize, usize)> = (1..=self.max)
            .flat_map(|c| (1..=self.max).map(move |r| (c, r)))
            .filter(|&(c, r)| (self.min..=self.max).contains(&(c * r)))
            .collect();
        // Python's sort is stable, as this one.
        grids.sort_by_key(|&(c, r)| c * r);
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
                let k = resized.channels;
                let mut cut = Image {
                    width: tile,
                    height: tile,
                    channels: k,
                    data: Vec::with_capacity(tile * tile * k),
                };
                for y in r * tile..(r + 1) * tile {
                    let from = (y * resized.width + c * tile) * k;
                    cut.data
                        .extend_from_slice(&resized.data[from..from + tile * k]);
                }
                out.extend(values(&cut));
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
        let c = Crops { min: 1, max: 4 };
        // 61 / 40 is nearest 2 / 1.
        assert_eq!(c.grid(40, 61, 28), (2, 1));
        // A square ties 1×1 with 2×2: 2×2 where the image passes half of its 4 tiles.
        assert_eq!(c.grid(40, 40, 28), (2, 2));
        assert_eq!(c.grid(30, 30, 28), (1, 1));
        assert_eq!(c.grid(100, 40, 28), (1, 3));
        assert_eq!(Crops { min: 2, max: 6 }.grid(40, 40, 28), (2, 2));
        assert_eq!(Crops { min: 1, max: 1 }.grid(10, 500, 28), (1, 1));
        assert_eq!(Crops { min: 1, max: 6 }.grid(37, 53, 16), (3, 2));
        assert_eq!(Crops { min: 2, max: 4 }.grid(70, 45, 20), (1, 2));
    }
}
