//! An image file to 8-bit RGB, as transformers' image processors see it: decoded as Pillow
//! decodes it (JPEG through libjpeg-turbo's decoder, which Pillow's wheels bundle: mozjpeg's
//! is the same code), then `convert_to_rgb`: grey replicated, and any transparency composited
//! onto white with Pillow's `alpha_composite` rounding.

use super::resample::Image;

/// Pillow refuses images over twice its `MAX_IMAGE_PIXELS` as decompression bombs; so does
/// anatomy, before allocating them.
pub const MAX_PIXELS: u64 = anatomy_core::spec::PILLOW_MAX_PIXELS;

/// An image made RGB, and whether that changed it (it was grey or had transparency).
pub struct Decoded {
    pub image: Image,
    pub converted: bool,
}

impl Decoded {
    fn rgb(width: usize, height: usize, data: Vec<u8>, converted: bool) -> Decoded {
        let image = Image {
            width,
            height,
            channels: 3,
            data,
        };
        Decoded { image, converted }
    }
}

/// The file's bytes as an RGB image, turned upright by its EXIF orientation as transformers'
/// `load_image` turns it (Pillow's `exif_transpose`), or what is wrong with them.
pub fn rgb(bytes: &[u8]) -> Result<Decoded, String> {
    let mut decoded = if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        png(bytes)?
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        jpeg(bytes)?
    } else {
        return Err("is neither a PNG nor a JPEG file (anatomy reads those two)".into());
    };
    decoded.image = upright(decoded.image, orientation(bytes));
    Ok(decoded)
}

/// The EXIF orientation tag of a JPEG's or PNG's metadata (1, upright, where there is none or it
/// cannot be read, as Pillow then leaves the image).
fn orientation(bytes: &[u8]) -> u32 {
    exif::Reader::new()
        .read_from_container(&mut std::io::Cursor::new(bytes))
        .ok()
        .and_then(|e| {
            e.get_field(exif::Tag::Orientation, exif::In::PRIMARY)
                .and_then(|f| f.value.get_uint(0))
        })
        .unwrap_or(1)
}

/// `image` as Pillow's `exif_transpose` turns it for `orientation` (2: mirrored, 3: turned half
/// round, 4: flipped, 5: transposed, 6: turned a quarter clockwise, 7: transversed, 8: a quarter
/// anticlockwise); other values leave it.
fn upright(image: Image, orientation: u32) -> Image {
    let (w, h) = (image.width, image.height);
    // The source pixel of output (x, y), and the output's width and height.
    let map: fn(usize, usize, usize, usize) -> (usize, usize) = match orientation {
        2 => |x, y, w, _| (w - 1 - x, y),
        3 => |x, y, w, h| (w - 1 - x, h - 1 - y),
        4 => |x, y, _, h| (x, h - 1 - y),
        5 => |x, y, _, _| (y, x),
        6 => |x, y, _, h| (y, h - 1 - x),
        7 => |x, y, w, h| (w - 1 - y, h - 1 - x),
        8 => |x, y, w, _| (w - 1 - y, x),
        _ => return image,
    };
    let (ow, oh) = if orientation >= 5 { (h, w) } else { (w, h) };
    let mut data = Vec::with_capacity(image.data.len());
    for y in 0..oh {
        for x in 0..ow {
            let (sx, sy) = map(x, y, w, h);
            let at = (sy * w + sx) * 3;
            data.extend_from_slice(&image.data[at..at + 3]);
        }
    }
    Image {
        width: ow,
        height: oh,
        channels: 3,
        data,
    }
}

fn check_size(width: usize, height: usize) -> Result<(), String> {
    let pixels = width as u64 * height as u64;
    if pixels == 0 {
        return Err(format!("is {width}×{height} pixels: an empty image"));
    }
    if pixels > MAX_PIXELS {
        return Err(format!(
            "is {width}×{height} pixels; images over {MAX_PIXELS} pixels are refused, as Pillow refuses them"
        ));
    }
    Ok(())
}

fn png(bytes: &[u8]) -> Result<Decoded, String> {
    use png::{BitDepth, ColorType, Transformations};
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    // Palettes to RGB, a transparent colour to an alpha channel, 1–4-bit grey to 8 bits.
    decoder.set_transformations(Transformations::EXPAND);
    let bad = |e: png::DecodingError| format!("is not a PNG file anatomy can read: {e}");
    let mut reader = decoder.read_info().map_err(bad)?;
    let info = reader.info();
    check_size(info.width as usize, info.height as usize)?;
    if info.bit_depth == BitDepth::Sixteen {
        return Err(
            "is a 16-bit PNG; anatomy reads 8-bit PNGs (and palette or 1–4-bit grey ones)".into(),
        );
    }
    let size = reader
        .output_buffer_size()
        .ok_or("is a PNG too large to decode")?;
    let mut buf = vec![0u8; size];
    let frame = reader.next_frame(&mut buf).map_err(bad)?;
    buf.truncate(frame.buffer_size());
    let (width, height) = (frame.width as usize, frame.height as usize);
    let converted = frame.color_type != ColorType::Rgb;
    let data = match frame.color_type {
        ColorType::Rgb => buf,
        ColorType::Grayscale => buf.iter().flat_map(|&g| [g; 3]).collect(),
        ColorType::Rgba => buf
            .chunks_exact(4)
            .flat_map(|p| over_white([p[0], p[1], p[2]], p[3]))
            .collect(),
        ColorType::GrayscaleAlpha => buf
            .chunks_exact(2)
            .flat_map(|p| over_white([p[0]; 3], p[1]))
            .collect(),
        ColorType::Indexed => return Err("is a palette PNG that did not expand".into()),
    };
    Ok(Decoded::rgb(width, height, data, converted))
}

/// A pixel of alpha `a` composited onto opaque white, as Pillow's `alpha_composite` rounds it
/// (7 extra bits, divisions by 255 as shifts).
fn over_white(rgb: [u8; 3], a: u8) -> [u8; 3] {
    let a = u32::from(a);
    rgb.map(|c| {
        let t = u32::from(c) * a * 128 + 255 * (255 - a) * 128 + (0x80 << 7);
        ((((t >> 8) + t) >> 8) >> 7) as u8
    })
}

fn jpeg(bytes: &[u8]) -> Result<Decoded, String> {
    use mozjpeg::ColorSpace;
    // libjpeg reports a bad file by unwinding out of its error handler.
    let decoded = std::panic::catch_unwind(|| -> Result<Decoded, String> {
        let bad = |e: std::io::Error| format!("is not a JPEG file anatomy can read: {e}");
        let d = mozjpeg::Decompress::new_mem(bytes).map_err(bad)?;
        check_size(d.width(), d.height())?;
        let converted = d.color_space() == ColorSpace::JCS_GRAYSCALE;
        match d.color_space() {
            ColorSpace::JCS_GRAYSCALE | ColorSpace::JCS_YCbCr | ColorSpace::JCS_RGB => {}
            other => {
                return Err(format!(
                "is a JPEG in {other:?}; anatomy reads greyscale, YCbCr and RGB JPEGs (not CMYK)"
            ))
            }
        }
        let mut started = d.rgb().map_err(bad)?;
        let (width, height) = (started.width(), started.height());
        let data: Vec<u8> = started.read_scanlines().map_err(bad)?;
        started.finish().map_err(bad)?;
        Ok(Decoded::rgb(width, height, data, converted))
    });
    match decoded {
        Ok(result) => result,
        Err(panic) => {
            let why = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("libjpeg stopped");
            Err(format!("is not a JPEG file anatomy can read: {why}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compositing_keeps_opaque_and_whitens_clear() {
        assert_eq!(over_white([10, 20, 30], 255), [10, 20, 30]);
        assert_eq!(over_white([10, 20, 30], 0), [255, 255, 255]);
    }

    #[test]
    fn other_bytes_are_refused() {
        assert!(rgb(b"GIF89a")
            .err()
            .unwrap()
            .contains("neither a PNG nor a JPEG"));
        let cut = rgb(&[0xff, 0xd8, 0xff, 0xe0, 0, 16]).err().unwrap();
        assert!(cut.contains("not a JPEG file"), "{cut}");
        let cut = rgb(b"\x89PNG\r\n\x1a\n\0\0").err().unwrap();
        assert!(cut.contains("not a PNG file"), "{cut}");
    }
}
