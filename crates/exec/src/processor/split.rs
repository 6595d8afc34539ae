//! Idefics3's and SmolVLM's frames (`Idefics3ImageProcessor`, `SmolVLMImageProcessor`): the
//! image resized so that its longer side is `size.longest_edge` (up or down; the other side in
//! proportion, truncated and made even); then, where it splits, resized up to whole tiles of
//! `max_image_size.longest_edge` and cut into them row by row, the whole image resized to one
//! tile after them where there are several; where it does not split, resized to one tile.

use super::resample::{Filter, Image, Rounding};

/// The side no image passes after the first resize (transformers' `MAX_IMAGE_SIZE`).
const MAX_SIDE: usize = 4096;

/// The most tiles anatomy cuts an image into (each a frame the tower reads).
const MAX_TILES: usize = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    /// A tile's side (`max_image_size.longest_edge`).
    pub tile: usize,
    /// Whether it cuts the image into tiles (`do_image_splitting`), or resizes it to one.
    pub split: bool,
}

/// The frames an image makes: their pixels, and the grid of tiles (rows, columns) the prompt
/// lays out, `[0, 0]` where the image is one frame.
pub struct Frames {
    pub grid: [usize; 2],
    pub images: Vec<Image>,
}

impl Split {
    /// The frames of `image` (RGB, already resized to its longest edge: `to_edge`), resized
    /// with `filter` rounded as `rounding`; an error where `bounded` refuses the size the tiles
    /// need, or a side comes to nothing (an image far wider than high, which transformers
    /// cannot resize either).
    pub fn frames(
        &self,
        resized: Image,
        (filter, rounding): (Filter, Rounding),
        bounded: &dyn Fn(usize, usize) -> Result<(), String>,
    ) -> Result<Frames, String> {
        let t = self.tile;
        if !self.split {
            return Ok(Frames {
                grid: [0, 0],
                images: vec![resized.resize(t, t, filter, rounding)],
            });
        }
        let (h, w) = to_tiles(resized.height, resized.width, t);
        if h == 0 || w == 0 {
            return Err(format!("makes a {w}×{h} image of it on the way to its tiles (an aspect transformers cannot resize either)"));
        }
        bounded(h, w)?;
        let resized = resized.resize(w, h, filter, rounding);
        if h <= t && w <= t {
            return Ok(Frames {
                grid: [0, 0],
                images: vec![resized],
            });
        }
        let (rows, cols) = (h / t, w / t);
        // Published processors cut at most 4×4 tiles (and their vocabularies name 6×6).
        if rows * cols > MAX_TILES {
            return Err(format!("cuts it into {rows}×{cols} tiles of {t}×{t} pixels; anatomy cuts at most {MAX_TILES}: the processor's max_image_size is small for its size"));
        }
        let mut images: Vec<Image> = (0..rows * cols)
            .map(|i| cut(&resized, (i / cols) * t, (i % cols) * t, t))
            .collect();
        images.push(resized.resize(t, t, filter, rounding));
        Ok(Frames {
            grid: [rows, cols],
            images,
        })
    }
}

/// The `side`-pixel square of `image` whose top left corner is at row `top`, column `left`.
pub(super) fn cut(image: &Image, top: usize, left: usize, side: usize) -> Image {
    let k = image.channels;
    let mut data = Vec::with_capacity(side * side * k);
    for y in top..top + side {
        let from = (y * image.width + left) * k;
        data.extend_from_slice(&image.data[from..from + side * k]);
    }
    Image {
        width: side,
        height: side,
        channels: k,
        data,
    }
}

/// transformers' `get_resize_output_image_size` for Idefics3: the longer side to `edge`, the
/// other in proportion (Python's float quotient, truncated, then made even), then both
/// shrunk in proportion where the longer passes 4096 (truncated); each at least 1.
pub(super) fn to_edge(height: usize, width: usize, edge: usize) -> (usize, usize) {
    let aspect = width as f64 / height as f64;
    let (mut h, mut w) = match width >= height {
        true => {
            let h = (edge as f64 / aspect) as usize;
            (h + h % 2, edge)
        }
        false => {
            let w = (edge as f64 * aspect) as usize;
            (edge, w + w % 2)
        }
    };
    (h, w) = (h.max(1), w.max(1));
    let aspect = w as f64 / h as f64;
    if w >= h && w > MAX_SIDE {
        (h, w) = ((MAX_SIDE as f64 / aspect) as usize, MAX_SIDE);
    } else if h > w && h > MAX_SIDE {
        (h, w) = (MAX_SIDE, (MAX_SIDE as f64 * aspect) as usize);
    }
    (h.max(1), w.max(1))
}

/// transformers' `resize_for_vision_encoder`: the longer side rounded up to whole tiles, the
/// other in proportion to it (Python's float quotient, truncated) and rounded up too.
fn to_tiles(height: usize, width: usize, tile: usize) -> (usize, usize) {
    let aspect = width as f64 / height as f64;
    match width >= height {
        true => {
            let w = width.div_ceil(tile) * tile;
            let h = (w as f64 / aspect) as usize;
            (h.div_ceil(tile) * tile, w)
        }
        false => {
            let h = height.div_ceil(tile) * tile;
            let w = (h as f64 * aspect) as usize;
            (h, w.div_ceil(tile) * tile)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// transformers' own sizes (its `get_resize_output_image_size` and
    /// `resize_for_vision_encoder` for Idefics3) for each case.
    #[test]
    fn sizes_are_transformers() {
        // A wide image grown to the edge: 1456 / (61 / 40) → 954.75, truncated (even).
        assert_eq!(to_edge(40, 61, 1456), (954, 1456));
        // A tall one: 45 × 1456 / 70 → 936.
        assert_eq!(to_edge(70, 45, 1456), (1456, 936));
        // Odd truncated sides made even; a square.
        assert_eq!(to_edge(37, 53, 100), (70, 100));
        assert_eq!(to_edge(30, 30, 64), (64, 64));
        // Past 4096: shrunk back in proportion.
        assert_eq!(to_edge(10, 20, 5000), (2048, 4096));
        assert_eq!(to_tiles(954, 1456, 364), (1092, 1456));
        assert_eq!(to_tiles(1456, 936, 364), (1456, 1092));
        assert_eq!(to_tiles(70, 100, 32), (96, 128));
        assert_eq!(to_tiles(20, 30, 32), (32, 32));
    }

    /// Tiles too small for the image are refused before they are cut, not made by the
    /// million.
    #[test]
    fn too_many_tiles_are_refused() {
        let image = Image {
            width: 40,
            height: 33,
            channels: 3,
            data: vec![0; 40 * 33 * 3],
        };
        let split = Split {
            tile: 1,
            split: true,
        };
        let resample = (Filter::Bilinear, Rounding::Torch);
        let e = split.frames(image, resample, &|_, _| Ok(())).err().unwrap();
        assert!(
            e.contains("33×40 tiles") && e.contains("at most 1024"),
            "{e}"
        );
    }
}
