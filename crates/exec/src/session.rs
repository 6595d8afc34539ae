//! What `anatomy run` and the page's op view do with a model, as library calls: open a checkpoint
//! with its tokenizer, turn a prompt or ids into checked ids, write every position's logits, make
//! a scaled-down copy on random weights, and capture a run for the op view.

use crate::model::{Cache, Model};
use crate::tokenizer::Encoder;
use crate::weights::Weights;
use anatomy_checkpoint::{Checkpoint, Format};
use anatomy_core::graph::Graph;
use anatomy_core::spec::{Placeholders, Reading, Spec};
use anatomy_core::values::Values;
use anatomy_core::Error;
use std::path::Path;

/// A checkpoint opened for running: its header, Spec and (on demand) tokenizer.
pub struct Opened {
    pub checkpoint: Checkpoint,
    pub spec: Spec,
}

/// Open the checkpoint at `path` (a .gguf file or a folder of safetensors) and read its Spec.
pub fn open(path: &Path, lenient: bool) -> Result<Opened, Error> {
    let checkpoint = anatomy_checkpoint::open(path)?;
    let spec = anatomy_checkpoint::spec(&checkpoint, lenient)?;
    Ok(Opened { checkpoint, spec })
}

impl Opened {
    /// The checkpoint's own tokenizer: embedded in a GGUF, or `tokenizer.json` beside safetensors.
    pub fn tokenizer(&self) -> Result<Encoder, Error> {
        let c = &self.checkpoint;
        match (&c.format, &c.gguf) {
            (Format::Gguf, Some(h)) => crate::tokenizer::from_gguf(h, &c.path),
            _ => {
                let file = Path::new(&c.path).join("tokenizer.json");
                if !file.exists() {
                    return Err(Error::file(
                        file.display().to_string(),
                        "is missing; a prompt needs the checkpoint's tokenizer.json (or give token ids with --ids)",
                    ));
                }
                crate::tokenizer::from_file(&file).map(Encoder::Hf)
            }
        }
    }

    /// The id a plain prompt starts with, where the checkpoint says one is added: a GGUF's
    /// `tokenizer.ggml.bos_token_id` where its `tokenizer.ggml.add_bos_token` is true (Gemma's,
    /// Llama's), as llama.cpp adds it. (A tokenizer.json's post-processor is not read for it.)
    pub fn bos(&self) -> Result<Option<u32>, Error> {
        use candle_core::quantized::gguf_file::Value;
        let Some(h) = &self.checkpoint.gguf else {
            return Ok(None);
        };
        let shown = &self.checkpoint.path;
        match h.get("tokenizer.ggml.add_bos_token") {
            None | Some(Value::Bool(false)) => Ok(None),
            Some(Value::Bool(true)) => match h.get("tokenizer.ggml.bos_token_id") {
                Some(Value::U32(id)) => Ok(Some(*id)),
                _ => Err(Error::new(
                    shown,
                    "tokenizer.ggml.bos_token_id",
                    "must be a u32 id where tokenizer.ggml.add_bos_token is true",
                )),
            },
            Some(_) => Err(Error::new(
                shown,
                "tokenizer.ggml.add_bos_token",
                "must be a bool",
            )),
        }
    }

    /// Drop what only the tokenizer and chat template read (a GGUF's vocabulary, merges and
    /// template: a few MB), once read, and give the memory freed so far back to the system (the
    /// caller has dropped its `Tokenizer`), so that neither is held beside the weights.
    pub fn forget_tokenizer(&mut self) {
        if let Some(h) = &mut self.checkpoint.gguf {
            h.metadata.retain(|(k, _)| !k.starts_with("tokenizer."));
            h.metadata.shrink_to_fit();
        }
        // glibc keeps freed small allocations resident inside its heap until trimmed.
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: malloc_trim only returns free pages of the allocator's own heaps.
        unsafe {
            libc::malloc_trim(0);
        }
    }

    /// The checkpoint's chat template (`run --chat`).
    pub fn chat_template(&self) -> Result<crate::chat::Template, Error> {
        let c = &self.checkpoint;
        match &c.gguf {
            Some(h) => crate::chat::from_gguf(h, &c.path),
            None => crate::chat::from_folder(Path::new(&c.path)),
        }
    }

    /// The BOS's text, for a processor that writes it into the prompt itself: the GGUF's BOS
    /// token as `tok` writes it, or tokenizer_config.json's `bos_token` (empty where neither
    /// names one).
    pub fn bos_text(&self, tok: &Encoder) -> Result<String, Error> {
        let c = &self.checkpoint;
        match &c.gguf {
            Some(_) => Ok(self
                .bos()?
                .and_then(|b| tok.token(u64::from(b)))
                .unwrap_or_default()),
            None => crate::chat::folder_bos(Path::new(&c.path)),
        }
    }

    /// The ids decoding stops at: the GGUF's end-of-generation ids, or generation_config.json's
    /// (else config.json's) `eos_token_id`.
    pub fn eos_ids(&self) -> Result<Vec<u32>, Error> {
        let c = &self.checkpoint;
        match &c.gguf {
            Some(h) => Ok(crate::chat::eos_gguf(h)),
            None => crate::chat::eos_folder(Path::new(&c.path), &c.config),
        }
    }

    /// Load every weight, held as `hold` says, and make the model, reporting
    /// `progress(done, total)`.
    /// A checkpoint missing a tensor the graph reads, or holding one of another shape, is refused
    /// here, naming it, before any product could fail on it.
    pub fn load(
        self,
        hold: crate::weights::Hold,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Model, Error> {
        let g = anatomy_core::graph::build(&self.spec)?;
        let r = anatomy_checkpoint::verify::verify(&g, &self.checkpoint)?;
        if let Some((name, want, have)) = r.misshaped.first() {
            return Err(Error::file(
                &self.checkpoint.path,
                format!("holds {name} of shape {have:?}, but the graph of its config reads {want:?}; `anatomy verify` lists every difference"),
            ));
        }
        if let Some((name, want)) = r.missing.first() {
            return Err(Error::file(
                &self.checkpoint.path,
                format!("has no {name} {want:?}, which the graph of its config reads; `anatomy verify` lists every difference"),
            ));
        }
        let w = Weights::load_held(&self.checkpoint, &self.spec, hold, progress)?;
        Model::new(self.spec, w)
    }
}

/// The ids of `text` under `tok` (with the special tokens its post-processor adds, where
/// `specials`); errors name `--prompt`.
pub fn encode(tok: &Encoder, text: &str, specials: bool, file: &str) -> Result<Vec<u32>, Error> {
    let ids = tok
        .encode(text, specials)
        .map_err(|e| Error::new(file, "--prompt", format!("cannot be tokenized: {e}")))?;
    if ids.is_empty() {
        return Err(Error::new(
            file,
            "--prompt",
            "tokenizes to nothing; give some text",
        ));
    }
    Ok(ids)
}

/// Ids checked against the model: each inside the vocabulary, and the prompt plus `new` tokens
/// within the positions the model has. `arg` is the option they came from, for the error.
pub fn check_ids(ids: &[u32], new: u64, spec: &Spec, file: &str, arg: &str) -> Result<(), Error> {
    if ids.is_empty() {
        return Err(Error::new(file, arg, "gives no token; give at least one"));
    }
    if let Some(bad) = ids.iter().find(|&&i| i as u64 >= spec.vocab) {
        let what = if arg == "--prompt" {
            "tokenizes to id"
        } else {
            "has"
        };
        return Err(Error::new(
            file,
            arg,
            format!(
                "{what} {bad}, not a token id: this model's vocabulary has ids 0 to {}",
                spec.vocab - 1
            ),
        ));
    }
    if spec.prompt.is_some() && ids.contains(&0) {
        return Err(Error::new(
            file,
            arg,
            "has id 0, which CPM-Ant reads as padding (it changes the token's segment and masks positions out of attention); give ids from 1",
        ));
    }
    let total = (ids.len() as u64).saturating_add(new);
    if total > spec.context {
        let room = spec.context.saturating_sub(ids.len() as u64);
        let (field, msg) = if ids.len() as u64 > spec.context {
            (
                arg,
                format!(
                    "gives {} tokens; this model has {} positions",
                    ids.len(),
                    spec.context
                ),
            )
        } else {
            (
                "--max-tokens",
                format!(
                    "is {new}: with the prompt's {} tokens that passes this model's {} positions; give at most {room}",
                    ids.len(),
                    spec.context
                ),
            )
        };
        return Err(Error::new(file, field, msg));
    }
    Ok(())
}

/// Every position's logits for `ids`, as an f32 `.npy` file [T, vocab].
pub fn logits_npy(model: &Model, ids: &[u32]) -> Result<Vec<u8>, Error> {
    npy(&model.forward(ids, &mut Cache::new(model.spec.layers as usize))?)
}

/// `logits_npy` with an image's features in place of the placeholders.
pub fn image_logits_npy(
    model: &Model,
    ids: &[u32],
    pixels: &crate::Pixels,
) -> Result<Vec<u8>, Error> {
    npy(&model.forward_image(ids, pixels, &mut Cache::new(model.spec.layers as usize))?)
}

/// An image given to `run`: pixel values already processed (`--pixels`), or an image file for
/// the checkpoint's own image processor (`--image`).
pub enum Picture {
    /// The pixels, and the image's own size (height, width) where it is given.
    Pixels(std::path::PathBuf, Option<[u64; 2]>),
    File(std::path::PathBuf, crate::processor::Backend),
}

impl Picture {
    pub fn flag(&self) -> &'static str {
        match self {
            Picture::Pixels(..) => "--pixels",
            Picture::File(..) => "--image",
        }
    }

    pub fn path(&self) -> &Path {
        match self {
            Picture::Pixels(p, _) | Picture::File(p, _) => p,
        }
    }
}

/// The pixel values of `picture` for the model `opened` holds: the `.npy` file read, or the
/// image file through the image processor beside the checkpoint; either checked against what
/// the tower takes before any weight is read. And, for Llama 4, the canvas's rows and columns
/// of tiles where they are known (from the processor, or one tile given).
pub fn pixels(
    picture: &Picture,
    opened: &Opened,
) -> Result<(crate::Pixels, Option<[usize; 2]>), Error> {
    let spec = &opened.spec;
    let path = picture.path();
    let shown = path.display().to_string();
    let Some(input) = &spec.image else {
        return Err(Error::new(
            &shown,
            picture.flag(),
            format!(
                "is given, but anatomy runs no image through a {} ({}) yet; give a text prompt",
                spec.family, spec.model_type
            ),
        ));
    };
    let (image, tiles) = match picture {
        Picture::Pixels(_, None) if matches!(input.encoder.reading(), Reading::Fitted { .. }) => {
            return Err(Error::new(&shown, "--pixels", format!("are an image's tiles without its own size, which the features of a `{}` model follow (its processor's image_sizes): give it with --image-size HEIGHT WIDTH, or give the image with --image", spec.model_type)));
        }
        Picture::Pixels(_, size) => (
            crate::Pixels {
                values: npy_pixels(path, input.encoder.pixels())?,
                size: *size,
            },
            None,
        ),
        Picture::File(_, backend) => {
            let folder = Path::new(&opened.checkpoint.path);
            crate::processor::processed(path, folder, *backend)?
        }
    };
    let crate::Pixels { values, size } = image;
    let (pixels, misfit) = crate::model::image::one_image(&input.encoder, &values)
        .map_err(|e| Error::file(&shown, e.to_string()))?;
    // One tile given is a canvas of one.
    let tiles = match input.placeholders {
        Placeholders::Tiles { .. } if pixels.rank() == 3 => Some([1, 1]),
        Placeholders::Tiles { .. }
        | Placeholders::Run
        | Placeholders::Framed { .. }
        | Placeholders::Rows
        | Placeholders::Prefix
        | Placeholders::Bracketed
        | Placeholders::NamedTiles
        | Placeholders::TileBreaks
        | Placeholders::TileGrid
        | Placeholders::Before => tiles,
    };
    match (misfit, picture) {
        (None, _) => Ok((
            crate::Pixels {
                values: pixels,
                size,
            },
            tiles,
        )),
        (Some(want), Picture::Pixels(..)) => Err(Error::file(
            &shown,
            format!(
                "holds an array of shape {:?}; this tower takes {want}, as the model's processor makes it",
                pixels.dims()
            ),
        )),
        (Some(want), Picture::File(..)) => Err(Error::file(
            &shown,
            format!(
                "comes out of the checkpoint's image processor as {:?} pixel values; this tower takes {want}: the processor's settings do not fit the model",
                pixels.dims()
            ),
        )),
    }
}

/// `text` as the model's processor writes it before tokenizing, where the processor lays an
/// image's placeholders out: Gemma 3's turns each opening token written in it into
/// `"\n\n" + open + placeholder × features + close + "\n\n"`; Llama 4's turns each
/// `<|image|>` into its layout of the image's tiles `tiles` (rows, columns): the opening token,
/// each tile's placeholders row by row (a separator between columns and after each row), then
/// `<|image|>` and the whole image's, and the closing token; one tile alone has no separators;
/// Mistral 3's turns each placeholder into the image's rows of them (the image `dims` [3, H, W]
/// says how many), each row ended by `[IMG_BREAK]`, the last by `[IMG_END]` (LightOnOCR's, one
/// run, is expanded as LLaVA's: `with_placeholders`); PaliGemma's puts the image's placeholders
/// first (or in place of those written), then the BOS's text `bos`, the text and a newline;
/// InternVL's turns its one placeholder written into every tile's run framed by `<img>` and
/// `</img>`; Aya Vision's turns each `<image>` into `<|START_OF_IMG|>`, each crop's run after
/// its name (`TILE_1`, …), the whole image's after `TILE_GLOBAL`, and `<|END_OF_IMG|>`
/// (the image `dims` [tiles, 3, H, W] says how many); Command A Vision's turns its one
/// placeholder written into `<|START_OF_IMG|>`, each tile's run ended by `<|IMG_LINE_BREAK|>`,
/// and `<|END_OF_IMG|>`; Idefics3's (SmolVLM's) turns its one placeholder written into each
/// tile's run after `<fake_token_around_image><row_R_col_C>`, a newline after each row of tiles,
/// then a newline and the whole image's run framed by `<fake_token_around_image><global-img>` …
/// `<fake_token_around_image>` (one frame alone: the whole image's part). Other text is kept;
/// an error at `file` where Llama 4's or Idefics3's layout needs a grid of tiles not known.
pub fn framed(
    text: &str,
    spec: &Spec,
    (tok, bos): (&Encoder, &str),
    (dims, tiles): (&[usize], Option<[usize; 2]>),
    file: &str,
) -> Result<String, Error> {
    let Some(input) = &spec.image else {
        return Ok(text.to_string());
    };
    let Some(p) = input.token.and_then(|t| tok.token(t)) else {
        return Ok(text.to_string());
    };
    let placeholders = p.repeat(input.encoder.features() as usize);
    // A tiler's tile count ([tiles, 3, S, S]); one image ([3, S, S]) is one tile.
    let cut = match dims {
        [n, _, _, _] => *n,
        [..] => 1,
    };
    match input.placeholders {
        // Expanded from the ids (`with_placeholders`); GIT's prompt holds none.
        Placeholders::Run | Placeholders::Before => Ok(text.to_string()),
        Placeholders::Framed { open, close } => match (tok.token(open), tok.token(close)) {
            (Some(o), Some(c)) => Ok(text.replace(&o, &format!("\n\n{o}{placeholders}{c}\n\n"))),
            (None, _) | (_, None) => Ok(text.to_string()),
        },
        Placeholders::Tiles { open, close } => {
            // Llama4Processor's own tokens (its defaults, which checkpoints keep).
            const IMAGE: &str = "<|image|>";
            let (Some(o), Some(c)) = (tok.token(open), tok.token(close)) else {
                return Ok(text.to_string());
            };
            if !text.contains(IMAGE) {
                return Ok(text.to_string());
            }
            let Some([rows, cols]) = tiles else {
                return Err(Error::new(file, "--pixels", "holds several tiles, whose canvas (rows × columns) Llama 4's prompt lays out and the pixels do not say: give the image with --image, or the ids with the processor's layout written (--ids)"));
            };
            let mut layout = o;
            if rows * cols > 1 {
                let row = vec![placeholders.as_str(); cols].join("<|tile_x_separator|>");
                layout += &format!("{row}<|tile_y_separator|>").repeat(rows);
            }
            Ok(text.replace(IMAGE, &format!("{layout}{IMAGE}{placeholders}{c}")))
        }
        Placeholders::Bracketed => {
            // InternVLProcessor's own tokens (its tokenizer's, which checkpoints keep): the one
            // placeholder written framed, the run every tile's.
            let n = input.encoder.features_of(dims, None) as usize;
            // None written, or already one per feature: the text as it is.
            Ok(match text.matches(&p).count() == 1 {
                true => text.replace(&p, &format!("<img>{}</img>", p.repeat(n))),
                false => text.to_string(),
            })
        }
        Placeholders::NamedTiles => {
            // AyaVisionProcessor's own tokens (its defaults, which checkpoints keep): the crops
            // before the whole image, which is the one tile where there is one.
            let mut layout = "<|START_OF_IMG|>".to_string();
            for i in 1..cut {
                layout += &format!("TILE_{i}{placeholders}");
            }
            layout += &format!("TILE_GLOBAL{placeholders}<|END_OF_IMG|>");
            Ok(text.replace("<image>", &layout))
        }
        Placeholders::TileBreaks => {
            // Command A Vision's tokenizer's own tokens (which its processor reads).
            let layout = format!("{placeholders}<|IMG_LINE_BREAK|>").repeat(cut);
            // None written, or already laid out: the text as it is.
            Ok(match text.matches(&p).count() == 1 {
                true => text.replace(&p, &format!("<|START_OF_IMG|>{layout}<|END_OF_IMG|>")),
                false => text.to_string(),
            })
        }
        Placeholders::TileGrid => {
            // Idefics3Processor's own tokens (SmolVLMProcessor's defaults, which its tokenizers
            // name alike). None written, or already laid out: the text as it is.
            if text.matches(&p).count() != 1 {
                return Ok(text.to_string());
            }
            const FAKE: &str = "<fake_token_around_image>";
            let whole = format!("{FAKE}<global-img>{placeholders}{FAKE}");
            let layout = match (cut, tiles) {
                (1, _) => whole,
                (_, Some([rows, cols])) if rows * cols + 1 == cut => {
                    let mut grid = String::new();
                    for r in 1..=rows {
                        for c in 1..=cols {
                            grid += &format!("{FAKE}<row_{r}_col_{c}>{placeholders}");
                        }
                        grid.push('\n');
                    }
                    format!("{grid}\n{whole}")
                }
                (_, Some(_) | None) => return Err(Error::new(file, "--pixels", "holds several frames, whose grid of tiles (rows × columns) Idefics3's prompt lays out and the pixels do not say: give the image with --image, or the ids with the processor's layout written (--ids)")),
            };
            Ok(text.replace(&p, &layout))
        }
        Placeholders::Prefix => {
            // PaliGemmaProcessor's layout: the BOS after the last placeholder written.
            Ok(match text.rfind(&p) {
                Some(at) => {
                    let (head, tail) = text.split_at(at + p.len());
                    format!("{}{bos}{tail}\n", head.replace(&p, &placeholders))
                }
                None => format!("{placeholders}{bos}{text}\n"),
            })
        }
        Placeholders::Rows => {
            // The features' grid: the image's sides over the pixels a feature spans.
            let (&[_, h, w], Some(f)) = (dims, input.encoder.step()) else {
                return Ok(text.to_string());
            };
            let f = f as usize;
            // PixtralProcessor's own tokens (its defaults).
            let layout = format!("{}[IMG_BREAK]", p.repeat(w / f)).repeat(h / f);
            let layout = match layout.strip_suffix("[IMG_BREAK]") {
                Some(rest) => format!("{rest}[IMG_END]"),
                None => layout,
            };
            Ok(text.replace(&p, &layout))
        }
    }
}

/// An f32 `.npy` file of at most about `values` values.
fn npy_pixels(path: &Path, values: u64) -> Result<candle_core::Tensor, Error> {
    let shown = path.display().to_string();
    let size = std::fs::metadata(path)
        .map_err(|e| Error::file(&shown, e.to_string()))?
        .len();
    // The header is at most a few hundred bytes (numpy pads it to 64-byte lines).
    if size > values.saturating_mul(4).saturating_add(4096) {
        return Err(Error::file(
            &shown,
            format!("is {size} bytes; an image of {values} f32 values, as this model's processor makes it, takes about {} bytes", values * 4 + 128),
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| Error::file(&shown, e.to_string()))?;
    let (shape, data) = crate::npy::decode_f32(&bytes).map_err(|e| Error::file(&shown, e))?;
    candle_core::Tensor::from_vec(data, shape, &candle_core::Device::Cpu)
        .map_err(|e| Error::file(&shown, e.to_string()))
}

/// The prompt holds one placeholder per feature of the image `pixels` (after
/// `with_placeholders`), checked before the weights load; `arg` is the flag that gave the ids.
pub fn check_placeholders(
    ids: &[u32],
    pixels: &crate::Pixels,
    spec: &Spec,
    file: &str,
    arg: &str,
) -> Result<(), Error> {
    match &spec.image {
        Some(input) => {
            let n = input.encoder.features_of(pixels.values.dims(), pixels.size);
            input.check_placeholders(ids, n, file, arg)
        }
        None => Ok(()),
    }
}

/// `ids` as the model's processor gives them: where they hold one image placeholder, it
/// stands for the whole image `pixels` and is repeated once per feature (LLaVA's and Qwen2-VL's
/// processors expand theirs so); ids already holding one per feature are kept.
pub fn with_placeholders(ids: &[u32], pixels: &crate::Pixels, spec: &Spec) -> Vec<u32> {
    let Some(input) = &spec.image else {
        return ids.to_vec();
    };
    let placeholder = |id: &u32| Some(u64::from(*id)) == input.token;
    // Llama 4's and Mistral 3's placeholders sit among their processor's separators: a prompt
    // lays them out.
    let run = match input.placeholders {
        Placeholders::Run
        | Placeholders::Framed { .. }
        | Placeholders::Prefix
        | Placeholders::Bracketed => true,
        Placeholders::Tiles { .. }
        | Placeholders::Rows
        | Placeholders::NamedTiles
        | Placeholders::TileBreaks
        | Placeholders::TileGrid
        | Placeholders::Before => false,
    };
    if !run || ids.iter().filter(|id| placeholder(id)).count() != 1 {
        return ids.to_vec();
    }
    let n = input.encoder.features_of(pixels.values.dims(), pixels.size) as usize;
    ids.iter()
        .flat_map(|id| std::iter::repeat_n(*id, if placeholder(id) { n } else { 1 }))
        .collect()
}

/// A 2-D f32 tensor as `.npy` bytes.
pub fn npy(t: &candle_core::Tensor) -> Result<Vec<u8>, Error> {
    let fail = |e: candle_core::Error| Error::file("executor", e.to_string());
    let (rows, cols) = t.dims2().map_err(fail)?;
    let data: Vec<f32> = t.flatten_all().and_then(|t| t.to_vec1()).map_err(fail)?;
    Ok(crate::npy::encode_f32(&[rows, cols], &data))
}

/// A scaled-down copy of `spec` on seeded random weights (`run --tiny`, the op view).
pub fn tiny(spec: &Spec) -> Result<Model, Error> {
    let small = crate::tiny::shrink(spec);
    let g = anatomy_core::graph::build(&small)?;
    let w = crate::tiny::random_weights(&g, 0)?;
    Model::new(small, w)
}

/// The op view's values for a draft model (`g`, of the checkpoint at `path`): one draft step
/// after a short prompt that the target at `target` reads.
pub fn draft_values(path: &Path, target: &Path, g: &Graph, lenient: bool) -> Result<Values, Error> {
    let (assistant, target) = (open(path, lenient)?, open(target, lenient)?);
    let shown = target.checkpoint.path.clone();
    let (ids, pieces) = prompt(&target)?;
    check_ids(&ids, 0, &target.spec, &shown, "--prompt")?;
    let t = target.load(crate::weights::Hold::F32, &mut |_, _| {})?;
    let a = assistant.load(crate::weights::Hold::F32, &mut |_, _| {})?;
    let captured = a.draft_captured(&t, &ids)?;
    let last = ids.len() - 1;
    let note = format!(
        "Values from one draft step of {} on its own weights, after {shown} read the prompt.",
        a.spec.name
    );
    Ok(crate::values::values(
        g,
        &captured,
        &ids[last..],
        pieces
            .get(last..)
            .map(<[String]>::to_vec)
            .unwrap_or_default(),
        note,
    ))
}

/// The op view's prompt: a short sentence in the checkpoint's own tokens where it has a
/// tokenizer (and each token's text), else a few ids.
fn prompt(opened: &Opened) -> Result<(Vec<u32>, Vec<String>), Error> {
    Ok(match opened.tokenizer() {
        Ok(tok) => {
            let ids = encode(
                &tok,
                "The capital of France is",
                false,
                &opened.checkpoint.path,
            )?;
            let back = crate::tokenizer::Detokenizer::new(&tok);
            let pieces = ids
                .iter()
                .map(|&i| back.decode(&[i]).unwrap_or_default())
                .collect();
            (ids, pieces)
        }
        Err(_) => (
            SAMPLE_IDS
                .iter()
                .map(|&i| i % opened.spec.vocab as u32)
                .collect(),
            Vec::new(),
        ),
    })
}

/// Token ids the op view runs where there is no tokenizer.
const SAMPLE_IDS: [u32; 6] = [1, 7, 3, 12, 5, 9];

/// The op view's values for the model `g` was built from: a run of its checkpoint on a short
/// prompt when `path` is one, otherwise of a scaled-down copy on random weights.
pub fn op_values(path: &Path, g: &Graph, lenient: bool) -> Result<Values, Error> {
    if anatomy_checkpoint::is_checkpoint(path) {
        let opened = open(path, lenient)?;
        let shown = opened.checkpoint.path.clone();
        let (ids, pieces) = prompt(&opened)?;
        check_ids(&ids, 0, &opened.spec, &shown, "--prompt")?;
        let m = opened.load(crate::weights::Hold::F32, &mut |_, _| {})?;
        let (_, captured) = m.forward_captured(&ids)?;
        let note = format!("Values from a run of {shown} on its own weights.");
        return Ok(crate::values::values(g, &captured, &ids, pieces, note));
    }
    let m = tiny(&g.spec)?;
    let ids: Vec<u32> = SAMPLE_IDS
        .iter()
        .map(|&i| i % m.spec.vocab as u32)
        .collect();
    let (_, captured) = m.forward_captured(&ids)?;
    let s = &m.spec;
    let note = format!(
        "Values from a run of a scaled-down copy on random weights (hidden {}, {} heads, {} layers, {} experts): the shapes here are the full model's, the numbers the copy's.",
        s.hidden,
        s.attn.heads,
        s.layers,
        s.moe.as_ref().map_or(0, |m| m.experts)
    );
    let tiny_graph = anatomy_core::graph::build(s)?;
    Ok(crate::values::values(
        &tiny_graph,
        &captured,
        &ids,
        Vec::new(),
        note,
    ))
}
