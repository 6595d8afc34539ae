//! `run --image`: an image file made into the pixel values a model's image processor makes, as
//! either of transformers' backends makes them (`Backend`): decoded and made RGB (`decode`),
//! resized (`resample`), cropped at the centre, rescaled and normalized, channels first. The
//! processor's settings come from the checkpoint's `preprocessor_config.json` (or
//! `processor_config.json`'s `image_processor`), each key missing there at its class's default.
//!
//! The processors read are those whose whole work is that sequence (CLIP's, SigLIP's, ViT's,
//! BLIP's, BiT's, and Gemma 3's without pan and scan), and Qwen2-VL's, which resizes to its
//! own grid (`smart_resize`) and leaves the patching to the tower: its pixels are given here
//! before they are cut into patches; Llama 4's, which cuts an image into tiles (`tiles`);
//! GOT-OCR 2's, which crops it into tiles where it is asked to (`crops`; InternVL's and Aya
//! Vision's processors always ask); Command A Vision's, which crops it onto another grid
//! unless told not to; DeepSeek-VL's, which fits its longer side and pads it to a square; and
//! Idefics3's and SmolVLM's, which resize its longer side to an edge and cut it into tiles
//! (`split`).

pub mod anyres;
pub mod crops;
pub mod decode;
pub mod resample;
pub mod split;
pub mod tiles;

use anatomy_core::Error;
use crops::{Crops, Grid};
use resample::{Filter, Image, Rounding};
use serde_json::Value;
use split::Split;
use std::path::Path;
use tiles::Tiling;

/// Which of transformers' image-processor backends to match: they round differently (about
/// 0.5% of the values a level apart) and pad a crop larger than the image otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// torchvision's (`CLIPImageProcessor` in transformers 5), its default where torchvision is
    /// installed: torch's uint8 resize (bilinear as on CPUs with AVX2, AVX-512 or Arm, where
    /// torchvision takes it; elsewhere it resizes bilinear in f32).
    Torchvision,
    /// Pillow's and NumPy's (`CLIPImageProcessorPil`), its default without torchvision.
    Pil,
}

/// How the image is sized before the crop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    /// The shorter side to this, the longer in proportion (rounded down).
    ShortestEdge(usize),
    Exact {
        height: usize,
        width: usize,
    },
    /// Qwen2-VL's `smart_resize`: each side to a multiple of `factor` (patch × merge), the
    /// area kept within `min`..=`max` pixels, the aspect as near as may be.
    Smart {
        min: usize,
        max: usize,
        factor: usize,
    },
    /// Pixtral's: shrunk (never grown) so that neither side passes `edge`, each side then
    /// rounded up to a multiple of `multiple` (the processor's patch times its merge).
    Longest {
        edge: usize,
        multiple: usize,
    },
    /// DeepSeek-VL's: the longer side to `edge`, the other in proportion (rounded to even on
    /// halves, as Python's `round`), neither under `min`.
    Fit {
        edge: usize,
        min: usize,
    },
    /// Idefics3's: the longer side to this, up or down, the other in proportion (truncated,
    /// made even), neither over 4096.
    Edge(usize),
}

/// One image processor's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Processor {
    pub resize: Option<(Size, Filter)>,
    /// Height and width of the centre crop.
    pub crop: Option<(usize, usize)>,
    pub rescale: Option<f64>,
    /// Per-channel mean and standard deviation.
    pub normalize: Option<([f32; 3], [f32; 3])>,
    pub convert_rgb: bool,
    /// How the image is cut into tiles of the resize's square size, where it is.
    pub cut: Option<Cut>,
    /// The one backend transformers gives the class, and the model whose class it is, where
    /// it gives one alone.
    pub one_backend: Option<(Backend, &'static str)>,
    /// The colour the resized image is padded with to a square, centred, where it is.
    pub pad_square: Option<[u8; 3]>,
}

/// The ways a processor cuts an image into tiles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cut {
    /// Llama 4's: onto the canvas of tiles that fits it best, without distortion.
    Canvas(Tiling),
    /// GOT-OCR 2's and Command A Vision's: onto the grid its class chooses (`Crops::grid`),
    /// distorted.
    Crops(Crops),
    /// Idefics3's and SmolVLM's: after the resize, up to whole tiles and into them, the whole
    /// image one more (or, where it does not split, to one tile).
    Split(Split),
    /// LLaVA-NeXT's: the whole image resized to the processor's size, then the canvas of
    /// `pinpoints` (height, width) that fits it, cut into `tile`-pixel squares (`anyres`).
    AnyRes {
        pinpoints: Vec<[usize; 2]>,
        tile: usize,
    },
}

/// Which way a class cuts an image into tiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cuts {
    Never,
    /// Always: Llama 4's canvas.
    Canvas,
    /// Where `crop_to_patches` says (`true` by default: Command A Vision's), on the `Grid`
    /// the class chooses.
    Crops(Grid, bool),
    /// Always, after the resize: Idefics3's frames (tiles where `do_image_splitting`).
    Split,
    /// Always: LLaVA-NeXT's canvas of tiles, the whole image first; the class's canvases.
    AnyRes(&'static [[usize; 2]]),
}

/// A class's defaults: the attributes transformers' class sets (the rest are off).
#[derive(Clone, Copy)]
struct Defaults {
    filter: Filter,
    mean: [f32; 3],
    std: [f32; 3],
    size: Size,
    crop: Option<usize>,
    /// How a bare number given as `size` reads: a square, or the shortest edge.
    square: bool,
    convert_rgb: bool,
    /// Whether and how the image is cut into tiles of the square size (`tiling` and `crops`
    /// read the settings).
    cuts: Cuts,
    /// The one backend the class has, and the model whose class it is, where it has one alone.
    one_backend: Option<(Backend, &'static str)>,
    /// It pads the resized image to a square of the mean's colour where `do_pad` says
    /// (DeepSeek-VL's).
    pad: bool,
}

// transformers' OPENAI_CLIP_MEAN and _STD as written; f32 rounds them as numpy's float32 does.
#[allow(clippy::excessive_precision)]
const CLIP_MEAN: [f32; 3] = [0.481_454_66, 0.457_827_5, 0.408_210_73];
#[allow(clippy::excessive_precision)]
const CLIP_STD: [f32; 3] = [0.268_629_54, 0.261_302_58, 0.275_777_11];
const HALF: [f32; 3] = [0.5; 3];

fn defaults(class: &str) -> Option<Defaults> {
    let square = |n| Size::Exact {
        height: n,
        width: n,
    };
    let base = class
        .strip_suffix("Fast")
        .or_else(|| class.strip_suffix("Pil"))
        .unwrap_or(class);
    let vit = Defaults {
        filter: Filter::Bilinear,
        mean: HALF,
        std: HALF,
        size: square(224),
        crop: None,
        square: true,
        convert_rgb: false,
        cuts: Cuts::Never,
        one_backend: None,
        pad: false,
    };
    let clip = Defaults {
        filter: Filter::Bicubic,
        mean: CLIP_MEAN,
        std: CLIP_STD,
        size: Size::ShortestEdge(224),
        crop: Some(224),
        square: false,
        convert_rgb: true,
        cuts: Cuts::Never,
        one_backend: None,
        pad: false,
    };
    let blip = Defaults {
        filter: Filter::Bicubic,
        mean: CLIP_MEAN,
        std: CLIP_STD,
        size: square(384),
        crop: None,
        square: true,
        convert_rgb: true,
        cuts: Cuts::Never,
        one_backend: None,
        pad: false,
    };
    Some(match base {
        "CLIPImageProcessor" | "BitImageProcessor" => clip,
        "SiglipImageProcessor" => Defaults {
            filter: Filter::Bicubic,
            mean: HALF,
            std: HALF,
            size: square(224),
            crop: None,
            square: false,
            convert_rgb: true,
            cuts: Cuts::Never,
            one_backend: None,
            pad: false,
        },
        "ViTImageProcessor" => vit,
        // ViT's, converting to RGB; with pan and scan off, as by default (refused otherwise).
        "Gemma3ImageProcessor" => Defaults {
            convert_rgb: true,
            ..vit
        },
        // Its factor and area bounds are the class's; `smart` reads the file's.
        "Qwen2VLImageProcessor" => Defaults {
            filter: Filter::Bicubic,
            mean: CLIP_MEAN,
            std: CLIP_STD,
            size: Size::Smart {
                min: 56 * 56,
                max: 28 * 28 * 1280,
                factor: 28,
            },
            crop: None,
            square: false,
            convert_rgb: true,
            cuts: Cuts::Never,
            one_backend: None,
            pad: false,
        },
        // Its multiple is the processor's (`from_folder`), else the image processor's patch.
        "PixtralImageProcessor" => Defaults {
            filter: Filter::Bicubic,
            mean: CLIP_MEAN,
            std: CLIP_STD,
            size: Size::Longest {
                edge: 1024,
                multiple: 16,
            },
            crop: None,
            square: true,
            convert_rgb: true,
            cuts: Cuts::Never,
            one_backend: None,
            pad: false,
        },
        "Llama4ImageProcessor" => Defaults {
            filter: Filter::Bilinear,
            mean: HALF,
            std: HALF,
            size: square(336),
            crop: None,
            square: true,
            convert_rgb: true,
            cuts: Cuts::Canvas,
            one_backend: Some((Backend::Torchvision, "Llama 4's")),
            pad: false,
        },
        "BlipImageProcessor" => blip,
        // BLIP's, cutting tiles of the resize's square where it crops.
        "GotOcr2ImageProcessor" => Defaults {
            cuts: Cuts::Crops(Grid::Aspect, false),
            ..blip
        },
        // BLIP's at 512 pixels, always cutting tiles unless told not to.
        "Cohere2VisionImageProcessor" => Defaults {
            size: square(512),
            cuts: Cuts::Crops(Grid::Upscale, true),
            one_backend: Some((Backend::Torchvision, "Command A Vision's")),
            ..blip
        },
        // BLIP's settings, its longer side fitted to the size, padded to a square; no RGB
        // conversion unless asked.
        "DeepseekVLImageProcessor" => Defaults {
            size: Size::Fit { edge: 384, min: 14 },
            convert_rgb: false,
            pad: true,
            ..blip
        },
        // CLIP's, cutting the image into tiles of its canvas.
        "LlavaNextImageProcessor" => Defaults {
            cuts: Cuts::AnyRes(&[[336, 672], [672, 336], [672, 672], [1008, 336], [336, 1008]]),
            ..clip
        },
        // LLaVA-NeXT's at 384 pixels a square tile, on canvases of 1 to 6 tiles a side.
        "LlavaOnevisionImageProcessor" => Defaults {
            size: square(384),
            crop: None,
            square: false,
            cuts: Cuts::AnyRes(&ONEVISION_CANVASES),
            ..clip
        },
        // Video-LLaVA's: CLIP's, in NumPy alone (transformers falls back to it from torchvision).
        "VideoLlavaImageProcessor" => Defaults {
            one_backend: Some((Backend::Pil, "Video-LLaVA's")),
            ..clip
        },
        // SmolVLM's is Idefics3's under another name.
        "Idefics3ImageProcessor" | "SmolVLMImageProcessor" => Defaults {
            filter: Filter::Lanczos,
            size: Size::Edge(4 * 364),
            cuts: Cuts::Split,
            ..vit
        },
        _ => return None,
    })
}

/// LlavaOnevisionImageProcessor's canvases: 1 to 6 tiles of 384 pixels down, and across.
const ONEVISION_CANVASES: [[usize; 2]; 36] = {
    let mut out = [[0; 2]; 36];
    let mut i = 0;
    while i < 36 {
        out[i] = [384 * (i / 6 + 1), 384 * (i % 6 + 1)];
        i += 1;
    }
    out
};

/// The classes `defaults` knows, for the refusal of others.
const READ: &str =
    "CLIP's, SigLIP's, ViT's, BLIP's, BiT's, LLaVA-NeXT's, LLaVA-OneVision's, Video-LLaVA's, Gemma 3's, Qwen2-VL's, Llama 4's, Pixtral's, GOT-OCR 2's, Command A Vision's, DeepSeek-VL's, Idefics3's and SmolVLM's";

impl Processor {
    /// The processor a checkpoint folder holds: `preprocessor_config.json`, else
    /// `processor_config.json`'s `image_processor`.
    pub fn from_folder(dir: &Path) -> Result<Processor, Error> {
        let own = dir.join("preprocessor_config.json");
        let shared = dir.join("processor_config.json");
        let nested = !own.exists();
        let file = match (nested, shared.exists()) {
            (false, _) => own,
            (true, true) => shared.clone(),
            (true, false) => {
                return Err(Error::file(
                    own.display().to_string(),
                    "is missing (and no processor_config.json beside it): --image needs the checkpoint's image processor; give pixels already processed with --pixels",
                ))
            }
        };
        let shown = file.display().to_string();
        let text =
            std::fs::read_to_string(&file).map_err(|e| Error::file(&shown, e.to_string()))?;
        let whole: Value = serde_json::from_str(&text)
            .map_err(|e| Error::file(&shown, format!("is not JSON: {e}")))?;
        // The processor around the image processor: this file where it nests it, else the one
        // beside it where there is one it can read (read once either way).
        let beside: Option<Value>;
        let (json, outer) = match nested {
            true => {
                let json = whole.get("image_processor").ok_or_else(|| {
                    Error::new(
                        &shown,
                        "image_processor",
                        "is missing: the file holds no image processor",
                    )
                })?;
                (json, Some(&whole))
            }
            false => {
                beside = std::fs::read_to_string(&shared)
                    .ok()
                    .and_then(|t| serde_json::from_str(&t).ok());
                (&whole, beside.as_ref())
            }
        };
        let mut processor = Processor::from_json(json, &shown)?;
        // InternVL's and Aya Vision's processors pass `crop_to_patches` true to their image
        // processor, whatever the image processor's own setting.
        let class = |v: &Value| {
            matches!(
                v.get("processor_class").and_then(Value::as_str),
                Some("InternVLProcessor" | "AyaVisionProcessor")
            )
        };
        let always_crops = class(json) || outer.is_some_and(class);
        let got_ocr2 = json
            .get("image_processor_type")
            .and_then(Value::as_str)
            .is_some_and(|c| c.starts_with("GotOcr2ImageProcessor"));
        if always_crops && got_ocr2 && processor.cut.is_none() {
            processor.cut = Some(Cut::Crops(crops(
                json,
                processor.resize,
                Grid::Aspect,
                &shown,
            )?));
        }
        // A saved PixtralProcessor resizes to multiples of its own patch times its merge (16
        // and 1 by default), whatever its image processor's patch; the image processor alone
        // (and LightOnOCR's processor), to its own.
        let outer = outer.filter(|o| {
            o.get("processor_class").and_then(Value::as_str) == Some("PixtralProcessor")
        });
        if let (Some((Size::Longest { multiple, .. }, _)), Some(outer)) =
            (&mut processor.resize, outer)
        {
            let number = |key: &str, default: u64| {
                (outer.get(key).and_then(Value::as_u64))
                    .filter(|n| (1..=1024).contains(n))
                    .unwrap_or(default) as usize
            };
            *multiple = number("patch_size", 16) * number("spatial_merge_size", 1);
        }
        Ok(processor)
    }

    /// Settings from a processor's JSON (`file` names it in errors).
    pub fn from_json(json: &Value, file: &str) -> Result<Processor, Error> {
        let class = json
            .get("image_processor_type")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                Error::new(
                    file,
                    "image_processor_type",
                    "must name the processor's class",
                )
            })?;
        let Some(d) = defaults(class) else {
            return Err(Error::new(
                file,
                "image_processor_type",
                format!("is `{class}`, which anatomy does not process yet; it reads {READ} image processors; give pixels already processed with --pixels"),
            ));
        };
        let flag = |key: &str, default: bool| -> Result<bool, Error> {
            match json.get(key) {
                None | Some(Value::Null) => Ok(default),
                Some(Value::Bool(b)) => Ok(*b),
                Some(_) => Err(Error::new(file, key, "must be true or false")),
            }
        };
        let resize = if flag("do_resize", true)? {
            let size = match (d.size, json.get("size")) {
                (Size::Smart { min, max, .. }, v) => smart(json, v, (min, max), file)?,
                (Size::Longest { edge, multiple }, v) => longest(json, v, (edge, multiple), file)?,
                (Size::Fit { edge, min }, v) => fit(json, v, (edge, min), file)?,
                (Size::Edge(edge), v) => Size::Edge(longest_edge(v, edge, file, "size")?),
                (size, None | Some(Value::Null)) => size,
                (_, Some(v)) => size(v, d.square, file, "size")?,
            };
            let filter = match json.get("resample") {
                None | Some(Value::Null) => d.filter,
                Some(v) => match v.as_u64() {
                    Some(1) => Filter::Lanczos,
                    Some(2) => Filter::Bilinear,
                    Some(3) => Filter::Bicubic,
                    Some(4) => Filter::Box,
                    Some(5) => Filter::Hamming,
                    Some(0) => {
                        return Err(Error::new(
                            file,
                            "resample",
                            "is 0 (nearest), which anatomy does not resize with yet; it resizes with 1–5 (Lanczos, bilinear, bicubic, box, Hamming)",
                        ))
                    }
                    _ => {
                        return Err(Error::new(
                            file,
                            "resample",
                            "must be one of PIL's resampling filters, 0–5",
                        ))
                    }
                },
            };
            Some((size, filter))
        } else {
            None
        };
        let crop = if flag("do_center_crop", d.crop.is_some())? {
            match json.get("crop_size") {
                None | Some(Value::Null) => match d.crop {
                    Some(n) => Some((n, n)),
                    None => {
                        return Err(Error::new(
                            file,
                            "crop_size",
                            "is missing, and do_center_crop is true: give {\"height\": H, \"width\": W}",
                        ))
                    }
                },
                Some(v) => match size(v, true, file, "crop_size")? {
                    Size::Exact { height, width } => Some((height, width)),
                    Size::ShortestEdge(_)
                    | Size::Smart { .. }
                    | Size::Longest { .. }
                    | Size::Fit { .. }
                    | Size::Edge(_) => {
                        return Err(Error::new(file, "crop_size", "must give a height and a width"))
                    }
                },
            }
        } else {
            None
        };
        let rescale = if flag("do_rescale", true)? {
            Some(match json.get("rescale_factor") {
                None | Some(Value::Null) => 1.0 / 255.0,
                Some(v) => v
                    .as_f64()
                    .filter(|f| f.is_finite())
                    .ok_or_else(|| Error::new(file, "rescale_factor", "must be a number"))?,
            })
        } else {
            None
        };
        let normalize = if flag("do_normalize", true)? {
            Some((
                triple(json.get("image_mean"), d.mean, file, "image_mean")?,
                triple(json.get("image_std"), d.std, file, "image_std")?,
            ))
        } else {
            None
        };
        if flag("do_pan_and_scan", false)? {
            return Err(Error::new(
                file,
                "do_pan_and_scan",
                "is true: Gemma 3's processor then adds crops of the image, which anatomy does not make yet; set it false or give pixels already processed with --pixels",
            ));
        }
        if flag("do_pad", false)? && json.get("pad_size").is_some_and(|v| !v.is_null()) {
            return Err(Error::new(
                file,
                "pad_size",
                "pads to a fixed size, which anatomy does not do yet; give pixels already processed with --pixels",
            ));
        }
        let cut = match d.cuts {
            Cuts::Canvas => Some(Cut::Canvas(tiling(json, resize, file)?)),
            Cuts::Crops(grid, default) if flag("crop_to_patches", default)? => {
                Some(Cut::Crops(crops(json, resize, grid, file)?))
            }
            Cuts::Split => {
                if resize.is_none() {
                    return Err(Error::new(file, "do_resize", "is false: anatomy makes Idefics3's frames from an image resized to its longest edge, as the processor does by default; give pixels already processed with --pixels"));
                }
                Some(Cut::Split(Split {
                    tile: longest_edge(json.get("max_image_size"), 364, file, "max_image_size")?,
                    split: flag("do_image_splitting", true)?,
                }))
            }
            Cuts::AnyRes(canvases) => Some(anyres_cut(json, resize, (d.crop, canvases), file)?),
            Cuts::Crops(..) | Cuts::Never => None,
        };
        // The colour is the mean's, each channel's int(mean × 255) as the class makes it.
        let pad_square = match d.pad && flag("do_pad", true)? {
            true => {
                Some(triple64(json.get("image_mean"), d.mean, file)?.map(|m| (m * 255.0) as u8))
            }
            false => None,
        };
        Ok(Processor {
            resize,
            crop,
            rescale,
            normalize,
            convert_rgb: flag("do_convert_rgb", d.convert_rgb)?,
            cut,
            one_backend: d.one_backend,
            pad_square,
        })
    }

    /// The image's pixel values as `backend` makes them, channels first; an error where that
    /// backend has no such filter.
    pub fn process(&self, image: &Image, backend: Backend) -> Result<Processed, String> {
        let backend = match (self.one_backend, backend) {
            (Some((Backend::Torchvision, model)), Backend::Pil) => {
                return Err(format!("has no PIL backend in transformers ({model} is torchvision's alone); give --image-backend torchvision"));
            }
            // transformers falls back to the PIL backend for a class that has no other.
            (Some((Backend::Pil, _)), _) => Backend::Pil,
            (Some(_) | None, backend) => backend,
        };
        // What the settings ask to make is bounded as what a file may hold.
        let bounded = |height: usize, width: usize| {
            match (height * width) as u64 <= decode::MAX_PIXELS {
            true => Ok(()),
            false => Err(format!("makes a {width}×{height} image of it; anatomy makes none over {} pixels, as Pillow opens none", decode::MAX_PIXELS)),
        }
        };
        if let (Some(Cut::Crops(c)), Some((Size::Exact { height, .. }, filter))) =
            (&self.cut, self.resize)
        {
            // The grid holds at most `max` tiles, and the whole image one more.
            bounded(height * (c.max + 1), height)?;
            let (n, values) = c.tiles(
                image,
                height,
                (filter, rounding(backend, filter)?),
                &|tile| self.values(tile, backend),
            );
            // One tile is the image, as transformers' processors give one.
            let dims = match n > 1 {
                true => vec![n, 3, height, height],
                false => vec![3, height, height],
            };
            return Ok(Processed {
                dims,
                values,
                tiles: None,
            });
        }
        if let (Some(Cut::Canvas(t)), Some((Size::Exact { height, .. }, filter))) =
            (&self.cut, self.resize)
        {
            // The canvas holds at most `max` tiles.
            bounded(height * t.max, height)?;
            let ([rows, cols], values) = t.tiles(
                image,
                height,
                (filter, Rounding::Torch),
                self.rescale,
                self.normalize,
            );
            let n = rows * cols + usize::from(rows * cols > 1);
            return Ok(Processed {
                dims: vec![n, 3, height, height],
                values,
                tiles: Some([rows, cols]),
            });
        }
        if let (Some(Cut::AnyRes { pinpoints, tile }), Some((size, filter))) =
            (&self.cut, self.resize)
        {
            // The whole image's tile: the processor's size, a square of its shortest edge.
            let whole = match size {
                Size::Exact { height, width } => [height, width],
                Size::ShortestEdge(side) => [side, side],
                Size::Smart { .. } | Size::Longest { .. } | Size::Fit { .. } | Size::Edge(_) => {
                    return Err(
                        "sizes the whole image other than LLaVA-NeXT's processor does".into(),
                    )
                }
            };
            bounded(whole[0], whole[1])?;
            let rounding = rounding(backend, filter)?;
            let tiles = anyres::tiles(
                image,
                pinpoints,
                (*tile, whole),
                (filter, rounding),
                &bounded,
            )?;
            let n = tiles.len();
            let mut values = Vec::new();
            let mut dims = vec![];
            // Each tile then goes the way of any image (a resize and crop that leave a tile of
            // the processor's size as it is).
            for t in tiles {
                let done = self.finish(t, backend, &bounded)?;
                if !dims.is_empty() && dims != done.dims {
                    return Err(format!("makes tiles of {:?} and {:?} pixels: its size, crop_size and tiles do not agree", dims, done.dims));
                }
                values.extend(done.values);
                dims = done.dims;
            }
            return Ok(Processed {
                dims: [vec![n], dims].concat(),
                values,
                tiles: None,
            });
        }
        self.finish(image.clone(), backend, &bounded)
    }

    /// `image` resized, cut into Idefics3's frames, cropped, padded and made values, as the
    /// settings say.
    fn finish(
        &self,
        mut image: Image,
        backend: Backend,
        bounded: &dyn Fn(usize, usize) -> Result<(), String>,
    ) -> Result<Processed, String> {
        if let Some((size, filter)) = self.resize {
            let (height, width) = match size {
                Size::Exact { height, width } => (height, width),
                Size::ShortestEdge(short) => shortest_edge(image.height, image.width, short),
                Size::Smart { min, max, factor } => {
                    smart_resize(image.height, image.width, factor, min, max)?
                }
                Size::Longest { edge, multiple } => {
                    within_edge(image.height, image.width, edge, multiple)
                }
                Size::Fit { edge, min } => fit_edge(image.height, image.width, edge, min),
                Size::Edge(edge) => split::to_edge(image.height, image.width, edge),
            };
            bounded(height, width)?;
            image = image.resize(width, height, filter, rounding(backend, filter)?);
        }
        if let (Some(Cut::Split(s)), Some((_, filter))) = (&self.cut, self.resize) {
            let frames = s.frames(image, (filter, rounding(backend, filter)?), bounded)?;
            let (n, t) = (frames.images.len(), s.tile);
            let values = (frames.images.iter())
                .flat_map(|f| self.values(f, backend))
                .collect();
            // One frame is the image, as the pixels of one are given.
            return Ok(Processed {
                dims: match n > 1 {
                    true => vec![n, 3, t, t],
                    false => vec![3, t, t],
                },
                values,
                tiles: (frames.grid != [0, 0]).then_some(frames.grid),
            });
        }
        if let Some((height, width)) = self.crop {
            bounded(height, width)?;
            image = center_crop(&image, height, width, backend);
        }
        if let Some(colour) = self.pad_square {
            image = pad_square(&image, colour);
        }
        Ok(Processed {
            dims: vec![3, image.height, image.width],
            values: self.values(&image, backend),
            tiles: None,
        })
    }

    /// An image's values rescaled and normalized as `backend` does it, channels first.
    fn values(&self, image: &Image, backend: Backend) -> Vec<f32> {
        let (h, w) = (image.height, image.width);
        let mut out = vec![0f32; 3 * h * w];
        for c in 0..3 {
            for i in 0..h * w {
                let v = image.data[i * 3 + c];
                out[c * h * w + i] = match (backend, self.rescale, &self.normalize) {
                    // torchvision's fused form: the mean and deviation over the factor, in f32.
                    (Backend::Torchvision, Some(f), Some((mean, std))) => {
                        let k = (1.0 / f) as f32;
                        (f32::from(v) - mean[c] * k) / (std[c] * k)
                    }
                    (Backend::Torchvision, Some(f), None) => f32::from(v) * f as f32,
                    // NumPy's order: to f64 times the factor, then f32.
                    (Backend::Pil, Some(f), normalize) => {
                        let x = (f64::from(v) * f) as f32;
                        normalize.map_or(x, |(mean, std)| (x - mean[c]) / std[c])
                    }
                    (_, None, normalize) => {
                        let x = f32::from(v);
                        normalize.map_or(x, |(mean, std)| (x - mean[c]) / std[c])
                    }
                };
            }
        }
        out
    }
}

/// How `backend` rounds a resize with `filter`; an error where it has no such filter.
fn rounding(backend: Backend, filter: Filter) -> Result<Rounding, String> {
    match backend {
        Backend::Pil => Ok(Rounding::Pillow),
        Backend::Torchvision => match filter {
            Filter::Bilinear | Filter::Bicubic | Filter::Lanczos => Ok(Rounding::Torch),
            Filter::Box | Filter::Hamming => Err(format!("resamples with {filter:?}, which torchvision's resize does not have (transformers' torchvision backend fails on it); give --image-backend pil")),
        },
    }
}

/// GOT-OCR 2's crops: `min_patches` (1) to `max_patches` (12) tiles, each the square `resize`
/// size, which it must have.
fn crops(
    json: &Value,
    resize: Option<(Size, Filter)>,
    grid: Grid,
    file: &str,
) -> Result<Crops, Error> {
    match resize {
        Some((Size::Exact { height, width }, _)) if height == width => {}
        Some(_) => return Err(Error::new(file, "size", "must be a square {\"height\": N, \"width\": N}: anatomy cuts an image into square tiles of it, as the towers take them")),
        None => return Err(Error::new(file, "do_resize", "is false: a processor that crops resizes an image onto its tiles")),
    }
    let count = |key: &str, default: usize| -> Result<usize, Error> {
        match json.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => v
                .as_u64()
                .filter(|n| (1..=1024).contains(n))
                .map(|n| n as usize)
                .ok_or_else(|| Error::new(file, key, "must be a whole number from 1 to 1024")),
        }
    };
    let (min, max) = (count("min_patches", 1)?, count("max_patches", 12)?);
    if min > max {
        return Err(Error::new(
            file,
            "min_patches",
            format!("is {min}, more than max_patches ({max}): no grid of tiles fits"),
        ));
    }
    Ok(Crops { min, max, grid })
}

/// LLaVA-NeXT's cut: its canvases (`image_grid_pinpoints`, the class's `canvases` by default)
/// and its tile's side: `crop_size`'s height (the class's `crop` by default), which it cuts by
/// even where it does not crop, else the size's.
fn anyres_cut(
    json: &Value,
    resize: Option<(Size, Filter)>,
    (crop, canvases): (Option<usize>, &[[usize; 2]]),
    file: &str,
) -> Result<Cut, Error> {
    let Some((resized, _)) = resize else {
        return Err(Error::new(file, "do_resize", "is false: anatomy makes LLaVA-NeXT's tiles from an image resized onto its canvas, as the processor does by default; give pixels already processed with --pixels"));
    };
    let sized = match resized {
        Size::Exact { height, .. } | Size::ShortestEdge(height) => height,
        Size::Smart { .. } | Size::Longest { .. } | Size::Fit { .. } | Size::Edge(_) => {
            return Err(Error::new(
                file,
                "size",
                "must give a height and a width, or a shortest edge",
            ))
        }
    };
    let tile = match json.get("crop_size") {
        None | Some(Value::Null) => crop.unwrap_or(sized),
        Some(v) => match size(v, true, file, "crop_size")? {
            Size::Exact { height, .. } => height,
            Size::ShortestEdge(_)
            | Size::Smart { .. }
            | Size::Longest { .. }
            | Size::Fit { .. }
            | Size::Edge(_) => {
                return Err(Error::new(
                    file,
                    "crop_size",
                    "must give a height and a width",
                ))
            }
        },
    };
    let pinpoints = match json.get("image_grid_pinpoints") {
        None | Some(Value::Null) => canvases.to_vec(),
        Some(v) => anatomy_core::spec::read_pinpoints(v)
            .ok_or_else(|| Error::new(file, "image_grid_pinpoints", anatomy_core::spec::PINPOINTS))?
            .into_iter()
            .map(|p| p.map(|n| n as usize))
            .collect(),
    };
    Ok(Cut::AnyRes { pinpoints, tile })
}

/// A processed image: its pixel values, channels first (`[3, height, width]`, Llama 4's
/// `[tiles, 3, side, side]`).
#[derive(Debug, Clone, PartialEq)]
pub struct Processed {
    pub dims: Vec<usize>,
    pub values: Vec<f32>,
    /// Llama 4's canvas, or Idefics3's grid: rows and columns of tiles (the whole image one
    /// tile more after them, where there are several), which its prompt's layout follows.
    pub tiles: Option<[usize; 2]>,
}

/// Llama 4's tiling: `max_patches` (16 by default) tiles at most, `resize_to_max_canvas`
/// (false), the tile the square `resize` size, which it must have.
fn tiling(json: &Value, resize: Option<(Size, Filter)>, file: &str) -> Result<Tiling, Error> {
    match resize {
        Some((Size::Exact { height, width }, _)) if height == width => {}
        Some(_) => return Err(Error::new(file, "size", "must be a square {\"height\": N, \"width\": N}: Llama 4's processor cuts the image into square tiles of it")),
        None => return Err(Error::new(file, "do_resize", "is false: Llama 4's processor always resizes an image onto its tiles (transformers refuses it too)")),
    }
    let max = match json.get("max_patches") {
        None | Some(Value::Null) => 16,
        Some(v) => v
            .as_u64()
            .filter(|n| (1..=1024).contains(n))
            .ok_or_else(|| {
                Error::new(file, "max_patches", "must be a whole number from 1 to 1024")
            })? as usize,
    };
    let to_max_canvas = match json.get("resize_to_max_canvas") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(Error::new(
                file,
                "resize_to_max_canvas",
                "must be true or false",
            ))
        }
    };
    Ok(Tiling { max, to_max_canvas })
}

/// transformers' `get_resize_output_image_size` without a maximum: `(height, width)`.
fn shortest_edge(height: usize, width: usize, short: usize) -> (usize, usize) {
    let (s, l) = if width <= height {
        (width, height)
    } else {
        (height, width)
    };
    // Python's `int(short * long / s)`: a float quotient, truncated.
    let long = ((short * l) as f64 / s as f64) as usize;
    if width <= height {
        (long, short)
    } else {
        (short, long)
    }
}

/// Qwen2-VL's size: the area bounds from `size` (`shortest_edge`, `longest_edge`), each
/// overridden by `min_pixels` or `max_pixels` where given, else `class`'s; the factor from
/// `patch_size` × `merge_size`.
fn smart(
    json: &Value,
    size: Option<&Value>,
    class: (usize, usize),
    file: &str,
) -> Result<Size, Error> {
    let number = |v: Option<&Value>, key: &str, default: usize| -> Result<usize, Error> {
        match v {
            None | Some(Value::Null) => Ok(default),
            Some(v) => v
                .as_u64()
                .filter(|n| (1..=decode::MAX_PIXELS).contains(n))
                .map(|n| n as usize)
                .ok_or_else(|| {
                    Error::new(
                        file,
                        key,
                        format!("must be a whole number from 1 to {}", decode::MAX_PIXELS),
                    )
                }),
        }
    };
    let (mut min, mut max) = class;
    match size {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            min = number(m.get("shortest_edge"), "size.shortest_edge", min)?;
            max = number(m.get("longest_edge"), "size.longest_edge", max)?;
        }
        Some(_) => {
            return Err(Error::new(
                file,
                "size",
                "must be {\"shortest_edge\": MIN_PIXELS, \"longest_edge\": MAX_PIXELS} for Qwen2-VL's processor",
            ))
        }
    }
    let min = number(json.get("min_pixels"), "min_pixels", min)?;
    let max = number(json.get("max_pixels"), "max_pixels", max)?;
    let patch = number(json.get("patch_size"), "patch_size", 14)?;
    let merge = number(json.get("merge_size"), "merge_size", 2)?;
    Ok(Size::Smart {
        min,
        max,
        factor: patch * merge,
    })
}

/// Pixtral's size: `size.longest_edge` (the class's `edge` where missing), rounded to multiples
/// of the image processor's `patch_size` (`from_folder` puts the processor's in its place).
fn longest(
    json: &Value,
    size: Option<&Value>,
    (edge, multiple): (usize, usize),
    file: &str,
) -> Result<Size, Error> {
    let positive = |v: &Value, key: &str| whole(v, file, key);
    let edge = match size {
        None | Some(Value::Null) => edge,
        Some(v) => match v.get("longest_edge") {
            Some(e) => positive(e, "size.longest_edge")?,
            None => {
                return Err(Error::new(
                    file,
                    "size",
                    "must be {\"longest_edge\": N} for Pixtral's processor (anatomy reads no other size of it yet)",
                ))
            }
        },
    };
    let multiple = match json.get("patch_size") {
        None | Some(Value::Null) => multiple,
        Some(Value::Object(m)) => match (m.get("height"), m.get("width")) {
            (Some(h), Some(w)) if h == w => positive(h, "patch_size.height")?,
            _ => {
                return Err(Error::new(
                    file,
                    "patch_size",
                    "must be square: {\"height\": N, \"width\": N}",
                ))
            }
        },
        Some(v) => positive(v, "patch_size")?,
    };
    Ok(Size::Longest { edge, multiple })
}

/// Pixtral's `get_resize_output_image_size`: `(height, width)` shrunk by the larger of their
/// ratios to `edge` where that is over 1 (each floored), then rounded up to multiples of
/// `multiple`.
fn within_edge(height: usize, width: usize, edge: usize, multiple: usize) -> (usize, usize) {
    let ratio = (height as f64 / edge as f64).max(width as f64 / edge as f64);
    let (h, w) = match ratio > 1.0 {
        true => (
            (height as f64 / ratio).floor() as usize,
            (width as f64 / ratio).floor() as usize,
        ),
        false => (height, width),
    };
    let up = |n: usize| (n.max(1) - 1) / multiple * multiple + multiple;
    (up(h), up(w))
}

/// transformers' `smart_resize` (Qwen2-VL's): `(height, width)` in Python's arithmetic (its
/// `round` to even on halves); an error where the aspect ratio is over 200, as there.
fn smart_resize(
    height: usize,
    width: usize,
    factor: usize,
    min: usize,
    max: usize,
) -> Result<(usize, usize), String> {
    let (h, w, f) = (height as f64, width as f64, factor as f64);
    if h.max(w) / h.min(w) > 200.0 {
        return Err(format!(
            "takes no image whose sides are over 200 to 1 (this one is {width}×{height}), as transformers' smart_resize refuses it"
        ));
    }
    let mut hb = (h / f).round_ties_even() * f;
    let mut wb = (w / f).round_ties_even() * f;
    if hb * wb > max as f64 {
        let beta = ((h * w) / max as f64).sqrt();
        hb = f.max((h / beta / f).floor() * f);
        wb = f.max((w / beta / f).floor() * f);
    } else if hb * wb < min as f64 {
        let beta = (min as f64 / (h * w)).sqrt();
        hb = (h * beta / f).ceil() * f;
        wb = (w * beta / f).ceil() * f;
    }
    Ok((hb as usize, wb as usize))
}

/// DeepSeek-VL's size: `size` a square (its side the longer side's), `min_size` (14) the
/// least either side may take.
fn fit(
    json: &Value,
    size: Option<&Value>,
    (edge, min): (usize, usize),
    file: &str,
) -> Result<Size, Error> {
    let edge = match size {
        None | Some(Value::Null) => edge,
        Some(v) => match self::size(v, true, file, "size")? {
            Size::Exact { height, width } if height == width => height,
            Size::Exact { .. }
            | Size::ShortestEdge(_)
            | Size::Smart { .. }
            | Size::Longest { .. }
            | Size::Fit { .. }
            | Size::Edge(_) => {
                return Err(Error::new(
                    file,
                    "size",
                    "must be a square {\"height\": N, \"width\": N}, as DeepSeek-VL's processor requires",
                ))
            }
        },
    };
    let min = match json.get("min_size") {
        None | Some(Value::Null) => min,
        Some(v) => whole(v, file, "min_size")?,
    };
    Ok(Size::Fit { edge, min })
}

/// Idefics3's size settings (`size`, `max_image_size`): `{"longest_edge": N}`, `default` where
/// missing.
fn longest_edge(v: Option<&Value>, default: usize, file: &str, key: &str) -> Result<usize, Error> {
    match v {
        None | Some(Value::Null) => Ok(default),
        Some(v) => match v.get("longest_edge") {
            Some(e) => whole(e, file, &format!("{key}.longest_edge")),
            None => Err(Error::new(
                file,
                key,
                "must be {\"longest_edge\": N} for Idefics3's processor (anatomy reads no other size of it yet)",
            )),
        },
    }
}

/// A size setting: a whole number from 1 to 65536, else an error at `key` of `file`.
fn whole(v: &Value, file: &str, key: &str) -> Result<usize, Error> {
    v.as_u64()
        .filter(|n| (1..=1 << 16).contains(n))
        .map(|n| n as usize)
        .ok_or_else(|| Error::new(file, key, "must be a whole number from 1 to 65536"))
}

/// DeepSeek-VL's resize: `(height, width)` scaled so the longer is `edge` (Python's float
/// product and `round`), neither under `min`.
fn fit_edge(height: usize, width: usize, edge: usize, min: usize) -> (usize, usize) {
    let delta = edge as f64 / height.max(width) as f64;
    let side = |n: usize| ((n as f64 * delta).round_ties_even() as usize).max(min);
    (side(height), side(width))
}

/// `image` padded to a square of `colour`, centred along its shorter side (the offset rounded
/// down), as DeepSeek-VL's `pad_to_square` does on either backend.
fn pad_square(image: &Image, colour: [u8; 3]) -> Image {
    let (h, w) = (image.height, image.width);
    let side = h.max(w);
    let (top, left) = match w > h {
        true => ((side - h) / 2, 0),
        false => (0, (side - w) / 2),
    };
    let mut data: Vec<u8> = colour
        .iter()
        .copied()
        .cycle()
        .take(side * side * 3)
        .collect();
    for y in 0..h {
        let from = y * w * 3;
        let to = ((top + y) * side + left) * 3;
        data[to..to + w * 3].copy_from_slice(&image.data[from..from + w * 3]);
    }
    Image {
        width: side,
        height: side,
        channels: 3,
        data,
    }
}

/// transformers' `center_crop`: the middle `height` × `width`, padded with zeros (black) where
/// the image is smaller: NumPy's puts it at ceil(pad / 2), torchvision's at floor(pad / 2).
fn center_crop(image: &Image, height: usize, width: usize, backend: Backend) -> Image {
    let (h, w) = (image.height as i64, image.width as i64);
    let offset = |size: i64, crop: i64| match backend {
        // Python's floor division of a possibly negative difference.
        Backend::Pil => (size - crop).div_euclid(2),
        Backend::Torchvision => match crop > size {
            true => -((crop - size) / 2),
            false => (size - crop) / 2,
        },
    };
    let top = offset(h, height as i64);
    let left = offset(w, width as i64);
    let mut data = vec![0u8; height * width * 3];
    for y in 0..height as i64 {
        for x in 0..width as i64 {
            let (sy, sx) = (top + y, left + x);
            if (0..h).contains(&sy) && (0..w).contains(&sx) {
                let from = ((sy * w + sx) * 3) as usize;
                let to = ((y * width as i64 + x) * 3) as usize;
                data[to..to + 3].copy_from_slice(&image.data[from..from + 3]);
            }
        }
    }
    Image {
        width,
        height,
        channels: 3,
        data,
    }
}

/// A size as transformers' `get_size_dict` reads it: `{"shortest_edge"}`, `{"height",
/// "width"}`, `[height, width]`, or a number (a square where `square`, else the shortest edge).
fn size(v: &Value, square: bool, file: &str, key: &str) -> Result<Size, Error> {
    let n = |v: &Value| {
        v.as_u64()
            .filter(|&n| (1..=1 << 16).contains(&n))
            .map(|n| n as usize)
    };
    let bad = || {
        Error::new(
            file,
            key,
            "must be {\"shortest_edge\": N}, {\"height\": H, \"width\": W}, [H, W] or N, each from 1 to 65536 (anatomy reads no other sizes yet)",
        )
    };
    match v {
        Value::Object(m) => {
            let get = |k: &str| m.get(k).filter(|v| !v.is_null());
            match (
                get("shortest_edge"),
                get("height"),
                get("width"),
                get("longest_edge"),
            ) {
                (Some(s), None, None, None) => n(s).map(Size::ShortestEdge).ok_or_else(bad),
                (None, Some(h), Some(w), None) => match (n(h), n(w)) {
                    (Some(height), Some(width)) => Ok(Size::Exact { height, width }),
                    _ => Err(bad()),
                },
                _ => Err(bad()),
            }
        }
        Value::Array(a) => match a.as_slice() {
            [h, w] => match (n(h), n(w)) {
                (Some(height), Some(width)) => Ok(Size::Exact { height, width }),
                _ => Err(bad()),
            },
            _ => Err(bad()),
        },
        v => match n(v) {
            Some(s) if square => Ok(Size::Exact {
                height: s,
                width: s,
            }),
            Some(s) => Ok(Size::ShortestEdge(s)),
            None => Err(bad()),
        },
    }
}

/// Three per-channel numbers (or one for all), as f32.
/// The image mean as written (f64, as Python reads it), the class's where missing.
fn triple64(v: Option<&Value>, default: [f32; 3], file: &str) -> Result<[f64; 3], Error> {
    match v.and_then(Value::as_array) {
        Some(list) => match list.iter().map(Value::as_f64).collect::<Option<Vec<f64>>>() {
            Some(m) if m.len() == 3 && m.iter().all(|x| (0.0..=1.0).contains(x)) => {
                Ok([m[0], m[1], m[2]])
            }
            _ => Err(Error::new(
                file,
                "image_mean",
                "must be three numbers from 0 to 1 to pad with their colour",
            )),
        },
        // The class's mean (none of whose channels is within f32's error of a whole level).
        None => Ok(default.map(f64::from)),
    }
}

fn triple(v: Option<&Value>, default: [f32; 3], file: &str, key: &str) -> Result<[f32; 3], Error> {
    let bad = || Error::new(file, key, "must be three numbers (one a channel) or one");
    match v {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Array(a)) if a.len() == 3 => {
            let mut out = [0f32; 3];
            for (o, x) in out.iter_mut().zip(a) {
                *o = x.as_f64().filter(|f| f.is_finite()).ok_or_else(bad)? as f32;
            }
            Ok(out)
        }
        Some(x) => x
            .as_f64()
            .filter(|f| f.is_finite())
            .map(|f| [f as f32; 3])
            .ok_or_else(bad),
    }
}

/// The pixel values of the image file at `path` through the processor of the checkpoint
/// folder `dir` as `backend` makes them, as a `[3, height, width]` f32 tensor (Llama 4's
/// `[tiles, 3, side, side]`).
pub fn pixels(path: &Path, dir: &Path, backend: Backend) -> Result<candle_core::Tensor, Error> {
    processed(path, dir, backend).map(|(pixels, _)| pixels.values)
}

/// `pixels` with the image's own size, and Llama 4's canvas of tiles (`Processed::tiles`).
pub fn processed(
    path: &Path,
    dir: &Path,
    backend: Backend,
) -> Result<(crate::Pixels, Option<[usize; 2]>), Error> {
    let processor = Processor::from_folder(dir)?;
    let shown = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| Error::file(&shown, e.to_string()))?;
    // The largest image Pillow opens, stored raw, bounds what a file can justify reading.
    if meta.len() > decode::MAX_PIXELS * 4 {
        return Err(Error::file(
            &shown,
            format!(
                "is {} bytes: larger than any image anatomy opens",
                meta.len()
            ),
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| Error::file(&shown, e.to_string()))?;
    let decoded = decode::rgb(&bytes).map_err(|e| Error::file(&shown, e))?;
    if decoded.converted && !processor.convert_rgb {
        return Err(Error::file(
            &shown,
            "is grey or has transparency, and the processor's do_convert_rgb is false: transformers would pass it on with other than 3 channels, which the tower does not take; save it as RGB",
        ));
    }
    let done = processor
        .process(&decoded.image, backend)
        .map_err(|e| Error::file(&shown, format!("goes through a processor that {e}")))?;
    let values = candle_core::Tensor::from_vec(done.values, done.dims, &candle_core::Device::Cpu)
        .map_err(|e| Error::file(&shown, e.to_string()))?;
    let image = &decoded.image;
    let size = Some([image.height as u64, image.width as u64]);
    Ok((crate::Pixels { values, size }, done.tiles))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// transformers' `smart_resize` in Python's arithmetic: 70 / 28 = 2.5 rounds to 2; too
    /// many pixels floors, too few ceils; a side over 200 times the other is refused.
    #[test]
    fn smart_resize_rounds_as_python() {
        assert_eq!(smart_resize(70, 45, 28, 3136, 1_003_520), Ok((56, 56)));
        assert_eq!(smart_resize(98, 45, 28, 3136, 1_003_520), Ok((112, 56)));
        assert_eq!(smart_resize(37, 53, 10, 100, 900), Ok((20, 30)));
        assert_eq!(smart_resize(41, 29, 28, 4000, 100_000), Ok((84, 56)));
        let e = smart_resize(1, 201, 28, 3136, 1_003_520).unwrap_err();
        assert!(e.contains("over 200 to 1"), "{e}");
    }

    #[test]
    fn deepseek_vl_fits_the_longer_side_rounding_as_python() {
        assert_eq!(fit_edge(37, 53, 32, 14), (22, 32));
        // 5 × 0.5 = 2.5, which Python's round takes to 2; the shorter side held at `min`.
        assert_eq!(fit_edge(5, 10, 5, 1), (2, 5));
        assert_eq!(fit_edge(41, 29, 20, 16), (20, 16));
    }

    #[test]
    fn shortest_edge_keeps_the_aspect_rounding_down() {
        assert_eq!(shortest_edge(37, 53, 28), (28, 40));
        assert_eq!(shortest_edge(53, 37, 28), (40, 28));
        assert_eq!(shortest_edge(10, 10, 7), (7, 7));
    }

    #[test]
    fn crops_the_middle_and_pads_a_small_image() {
        let image = Image {
            width: 3,
            height: 1,
            channels: 3,
            data: (1..=9).collect(),
        };
        let c = center_crop(&image, 1, 1, Backend::Pil);
        assert_eq!(c.data, vec![4, 5, 6]);
        // 3 wide into 5: one black column each side; 1 high into 2: NumPy pads on top,
        // torchvision below.
        let t = center_crop(&image, 2, 5, Backend::Torchvision);
        let top: Vec<u8> = [0; 3].into_iter().chain(1..=9).chain([0; 3]).collect();
        assert_eq!(t.data[..15], top[..]);
        assert_eq!(t.data[15..], [0; 15]);
        let p = center_crop(&image, 2, 5, Backend::Pil);
        let row = |y: usize| p.data[y * 15..(y + 1) * 15].to_vec();
        assert_eq!(row(0), vec![0; 15]);
        assert_eq!(row(1)[3..12], (1..=9).collect::<Vec<u8>>()[..]);
        assert_eq!(row(1)[..3], [0, 0, 0]);
    }

    #[test]
    fn other_processors_and_sizes_are_refused_by_key() {
        let refuse = |json: &str| {
            Processor::from_json(&serde_json::from_str(json).unwrap(), "p.json")
                .unwrap_err()
                .to_string()
        };
        let e = refuse(
            r#"{"image_processor_type": "LlavaNextImageProcessor", "image_grid_pinpoints": [[336]]}"#,
        );
        assert!(
            e.contains("image_grid_pinpoints") && e.contains("[height, width]"),
            "{e}"
        );
        let e = refuse(r#"{"image_processor_type": "MllamaImageProcessor"}"#);
        assert!(
            e.contains("image_processor_type") && e.contains("--pixels"),
            "{e}"
        );
        let e = refuse(
            r#"{"image_processor_type": "CLIPImageProcessor", "size": {"longest_edge": 9}}"#,
        );
        assert!(e.contains("size"), "{e}");
        let e = refuse(r#"{"image_processor_type": "CLIPImageProcessor", "resample": 0}"#);
        assert!(e.contains("resample"), "{e}");
        let e = refuse(r#"{"image_processor_type": "CLIPImageProcessor", "image_mean": [1, 2]}"#);
        assert!(e.contains("image_mean"), "{e}");
        // GOT-OCR 2's crops: a grid that holds no tile count, a count past the bound, tiles of
        // no square.
        let crops = |extra: &str| {
            refuse(&format!(
                r#"{{"image_processor_type": "GotOcr2ImageProcessor", "crop_to_patches": true, {extra}}}"#
            ))
        };
        let e = crops(r#""min_patches": 5, "max_patches": 4"#);
        assert!(
            e.contains("min_patches") && e.contains("max_patches (4)"),
            "{e}"
        );
        let e = crops(r#""max_patches": 100000"#);
        assert!(e.contains("max_patches") && e.contains("1 to 1024"), "{e}");
        let e = crops(r#""size": {"height": 20, "width": 30}"#);
        assert!(e.contains("size") && e.contains("square"), "{e}");
    }

    /// InternVL's and Aya Vision's processors crop whatever their image processor's own
    /// `crop_to_patches` says; GOT-OCR 2's alone (or under another processor) does as it says.
    #[test]
    fn internvls_and_ayas_processors_always_crop() {
        let image = serde_json::json!({"image_processor_type": "GotOcr2ImageProcessor", "crop_to_patches": false, "max_patches": 6});
        for (class, cut) in [
            (
                "InternVLProcessor",
                Some(Cut::Crops(Crops {
                    min: 1,
                    max: 6,
                    grid: Grid::Aspect,
                })),
            ),
            (
                "AyaVisionProcessor",
                Some(Cut::Crops(Crops {
                    min: 1,
                    max: 6,
                    grid: Grid::Aspect,
                })),
            ),
            ("LlavaProcessor", None),
        ] {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(
                dir.path().join("preprocessor_config.json"),
                image.to_string(),
            )
            .unwrap();
            assert_eq!(Processor::from_folder(dir.path()).unwrap().cut, None);
            let outer = serde_json::json!({"processor_class": class, "image_processor": image});
            std::fs::remove_file(dir.path().join("preprocessor_config.json")).unwrap();
            std::fs::write(dir.path().join("processor_config.json"), outer.to_string()).unwrap();
            assert_eq!(
                Processor::from_folder(dir.path()).unwrap().cut,
                cut,
                "{class}"
            );
        }
    }

    /// Settings that would make an image larger than any file may hold are refused, not run.
    #[test]
    fn a_huge_size_is_refused() {
        let p = Processor::from_json(
            &serde_json::json!({"image_processor_type": "SiglipImageProcessor", "size": [65536, 65536]}),
            "p.json",
        )
        .unwrap();
        let image = Image {
            width: 2,
            height: 2,
            channels: 3,
            data: vec![0; 12],
        };
        for backend in [Backend::Pil, Backend::Torchvision] {
            let e = p.process(&image, backend).unwrap_err();
            assert!(e.contains("65536×65536"), "{e}");
        }
    }

    #[test]
    fn defaults_fill_what_the_file_leaves_out() {
        let p = Processor::from_json(
            &serde_json::json!({"image_processor_type": "CLIPImageProcessorFast", "size": 336}),
            "p.json",
        )
        .unwrap();
        assert_eq!(p.resize, Some((Size::ShortestEdge(336), Filter::Bicubic)));
        assert_eq!(p.crop, Some((224, 224)));
        let p = Processor::from_json(
            &serde_json::json!({"image_processor_type": "SiglipImageProcessor", "crop_size": 5}),
            "p.json",
        )
        .unwrap();
        assert_eq!(p.crop, None);
        assert_eq!(p.normalize, Some((HALF, HALF)));
    }
}
