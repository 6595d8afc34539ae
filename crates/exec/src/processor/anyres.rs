//! LLaVA-NeXT's tiles (`LlavaNextImageProcessor`): of its `image_grid_pinpoints`, the canvas
//! that keeps most of the image; the image resized into it without distortion (each side as
//! transformers' `get_patch_output_size` rounds it), padded with black to the canvas, centred,
//! and cut into tiles row by row; before them the whole image resized to the processor's size.

use super::resample::{Filter, Image, Rounding};
use super::split::cut;
use anatomy_core::spec::best_canvas;

/// The tiles of `image` (RGB): the whole image resized to `whole` (height, width), then the
/// canvas of `pinpoints` (height, width) that fits it, cut into `tile`-pixel squares; resized
/// with `filter` rounded as `rounding`. An error where the canvas is not whole tiles, or
/// larger than `bounded` allows.
pub fn tiles(
    image: &Image,
    pinpoints: &[[usize; 2]],
    (tile, whole): (usize, [usize; 2]),
    (filter, rounding): (Filter, Rounding),
    bounded: &dyn Fn(usize, usize) -> Result<(), String>,
) -> Result<Vec<Image>, String> {
    let (h, w) = (image.height, image.width);
    let wide = pinpoints
        .iter()
        .map(|p| p.map(|n| n as u64))
        .collect::<Vec<_>>();
    let [ch, cw] = best_canvas(&wide, [h as u64, w as u64]).map(|n| n as usize);
    if ch == 0 || cw == 0 || ch % tile != 0 || cw % tile != 0 {
        return Err(format!(
            "fits the image to a {cw}×{ch} canvas, which is not whole tiles of {tile} pixels"
        ));
    }
    bounded(ch, cw)?;
    let (nh, nw) = inside(h, w, ch, cw);
    let resized = image.resize(nw, nh, filter, rounding);
    let canvas = pad(&resized, ch, cw);
    let mut out = vec![image.resize(whole[1], whole[0], filter, rounding)];
    let cols = cw / tile;
    out.extend(
        (0..(ch / tile) * cols).map(|i| cut(&canvas, (i / cols) * tile, (i % cols) * tile, tile)),
    );
    Ok(out)
}

/// The size (height, width) an `h` × `w` image takes inside a `ch` × `cw` canvas without
/// distortion: the side that fills it exactly, the other rounded up, never past the canvas.
fn inside(h: usize, w: usize, ch: usize, cw: usize) -> (usize, usize) {
    let (sw, sh) = (cw as f64 / w as f64, ch as f64 / h as f64);
    match sw < sh {
        true => (((h as f64 * sw).ceil() as usize).min(ch), cw),
        false => (ch, ((w as f64 * sh).ceil() as usize).min(cw)),
    }
}

/// `image` centred on a black `ch` × `cw` canvas (an odd pixel of margin after it).
fn pad(image: &Image, ch: usize, cw: usize) -> Image {
    let k = image.channels;
    let (top, left) = ((ch - image.height) / 2, (cw - image.width) / 2);
    let mut data = vec![0u8; ch * cw * k];
    for y in 0..image.height {
        let from = &image.data[y * image.width * k..(y + 1) * image.width * k];
        let at = ((top + y) * cw + left) * k;
        data[at..at + from.len()].copy_from_slice(from);
    }
    Image {
        width: cw,
        height: ch,
        channels: k,
        data,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// transformers' `get_patch_output_size` on these sizes (computed with it).
    #[test]
    fn the_image_fills_one_side_of_its_canvas() {
        assert_eq!(inside(30, 50, 28, 56), (28, 47));
        assert_eq!(inside(50, 30, 56, 28), (47, 28));
        assert_eq!(inside(100, 100, 336, 672), (336, 336));
        assert_eq!(inside(479, 640, 672, 672), (503, 672));
    }

    /// An image far wider than any canvas still takes one (transformers' choice among canvases
    /// that keep none of it is the least wasted), one row of pixels high, the rest black.
    #[test]
    fn a_far_wider_image_takes_the_least_wasted_canvas() {
        let image = Image {
            width: 500,
            height: 1,
            channels: 3,
            data: vec![200; 1500],
        };
        let rounding = (Filter::Bilinear, Rounding::Pillow);
        let cut = tiles(
            &image,
            &[[8, 8], [8, 16]],
            (8, [8, 8]),
            rounding,
            &|_, _| Ok(()),
        );
        let cut = cut.unwrap();
        assert_eq!(cut.len(), 2);
        // The canvas's fourth row (of 8) holds the image; the others are padding.
        let lit: Vec<usize> = (0..8)
            .filter(|y| cut[1].data[y * 24..(y + 1) * 24].iter().any(|&v| v > 0))
            .collect();
        assert_eq!(lit, vec![3]);
    }
}
