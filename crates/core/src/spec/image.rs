//! How an image reaches the language model, for the wrappers anatomy runs on one: which
//! encoder makes its features and which placeholder token they replace in the prompt.

use super::Act;

/// An image's way into the token stream.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageInput {
    /// The placeholder id the prompt holds once per image feature, each replaced by one; none
    /// where the features come before the prompt instead (GIT's).
    pub token: Option<u64>,
    pub encoder: ImageEncoder,
    /// How the model's processor writes the placeholders into the prompt.
    pub placeholders: Placeholders,
}

/// How a prompt holds an image's placeholders, as the model's processor writes them from what
/// the text (or its chat template) writes where the image goes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Placeholders {
    /// One run of them, one per feature, in place of the one placeholder written (LLaVA's, the
    /// Qwen VL models', LightOnOCR's).
    Run,
    /// The run framed by the ids `open` … `close` with blank lines around, in place of the
    /// `open` written (Gemma 3's `<start_of_image>` … `<end_of_image>`).
    Framed { open: u64, close: u64 },
    /// Llama 4's, in place of `<|image|>`: `open`, each tile's run row by row (a separator
    /// between columns and after each row), `<|image|>` and the whole image's run, `close`;
    /// one tile alone without the tiles' part.
    Tiles { open: u64, close: u64 },
    /// Pixtral's (Mistral 3's), in place of the placeholder written: a run per row of features,
    /// each ended by `[IMG_BREAK]`, the last by `[IMG_END]`.
    Rows,
    /// PaliGemma's: the run first (or in place of the placeholder written), then the BOS, the
    /// text and a newline; the processor writes the BOS itself.
    Prefix,
    /// InternVL's: the run of every tile's features framed by its tokenizer's `<img>` …
    /// `</img>`, in place of the placeholder written.
    Bracketed,
    /// Aya Vision's, in place of the `<image>` written: `<|START_OF_IMG|>`, each crop's run
    /// after its name (`TILE_1`, `TILE_2`, …), the whole image's after `TILE_GLOBAL`,
    /// `<|END_OF_IMG|>`; one tile alone is the whole image's.
    NamedTiles,
    /// Command A Vision's, in place of the placeholder written: `<|START_OF_IMG|>`, each tile's
    /// run ended by `<|IMG_LINE_BREAK|>`, `<|END_OF_IMG|>`.
    TileBreaks,
    /// Idefics3's and SmolVLM's, in place of the `<image>` written: each tile's run after
    /// `<fake_token_around_image><row_R_col_C>`, a newline after each row of tiles, then a
    /// newline and the whole image's run between `<fake_token_around_image><global-img>` and
    /// `<fake_token_around_image>`; one frame alone is the whole image's.
    TileGrid,
    /// GIT's: none; the features come before the prompt's embeddings (after their LayerNorm),
    /// see each other both ways and no text, and take no positions of the text's.
    Before,
}

impl Placeholders {
    /// The prompt holds them (GIT's features come before it instead).
    pub fn in_prompt(self) -> bool {
        match self {
            Placeholders::Before => false,
            Placeholders::Run
            | Placeholders::Framed { .. }
            | Placeholders::Tiles { .. }
            | Placeholders::Rows
            | Placeholders::Prefix
            | Placeholders::Bracketed
            | Placeholders::NamedTiles
            | Placeholders::TileBreaks
            | Placeholders::TileGrid => true,
        }
    }

    /// The processor writes the BOS into the text itself (after the image), so that the
    /// tokenizer adds none.
    pub fn writes_bos(self) -> bool {
        match self {
            Placeholders::Prefix => true,
            Placeholders::Run
            | Placeholders::Framed { .. }
            | Placeholders::Tiles { .. }
            | Placeholders::Rows
            | Placeholders::Bracketed
            | Placeholders::NamedTiles
            | Placeholders::TileBreaks
            | Placeholders::TileGrid
            | Placeholders::Before => false,
        }
    }
}

impl ImageInput {
    /// How the image runs through the encoder and joins the language model, in the page's
    /// words: the encoder's, and the prompt's layout where it is not a plain run.
    pub fn describe(&self) -> Vec<String> {
        let mut out = self.encoder.describe(self.placeholders.in_prompt());
        match self.placeholders {
            Placeholders::Rows => out.push(
                "In the prompt, each row of the image's placeholder tokens ends with [IMG_BREAK], the last with [IMG_END]."
                    .into(),
            ),
            Placeholders::Prefix => out.push(
                "In the prompt, the image's placeholder tokens come first, then the BOS, the text and a newline.".into(),
            ),
            Placeholders::Bracketed => out.push(
                "In the prompt, the image's placeholder tokens, every tile's one after another, are framed by <img> and </img>.".into(),
            ),
            Placeholders::NamedTiles => out.push(
                "In the prompt, the image's placeholder tokens are framed by <|START_OF_IMG|> and <|END_OF_IMG|>, each tile's run after its name (TILE_1, TILE_2, …), the whole image's after TILE_GLOBAL.".into(),
            ),
            Placeholders::TileBreaks => out.push(
                "In the prompt, the image's placeholder tokens are framed by <|START_OF_IMG|> and <|END_OF_IMG|>, each tile's run ended by <|IMG_LINE_BREAK|>.".into(),
            ),
            Placeholders::TileGrid => out.push(
                "In the prompt, each tile's placeholder tokens follow <fake_token_around_image> and the tile's place (<row_1_col_1>, …), each row of tiles ends with a newline, and the whole image's follow a newline and <fake_token_around_image><global-img>, closed by <fake_token_around_image>.".into(),
            ),
            Placeholders::Before => out.push(
                "The prompt holds no placeholder: the image's features come before the text's embeddings (after their LayerNorm), see each other both ways and no text, while the text sees them all and itself causally; the text's learned positions count from its first token.".into(),
            ),
            Placeholders::Run | Placeholders::Framed { .. } | Placeholders::Tiles { .. } => {}
        }
        out
    }

    /// `ids` hold one placeholder per feature of the image given (`n` of them:
    /// `ImageEncoder::features_of`), where the model has placeholders; else an error at `field`
    /// of `file` saying how many they must hold.
    pub fn check_placeholders(
        &self,
        ids: &[u32],
        n: u64,
        file: &str,
        field: &str,
    ) -> crate::Result<()> {
        let Some(token) = self.token else {
            return Ok(());
        };
        let held = ids.iter().filter(|&&id| u64::from(id) == token).count() as u64;
        if held == n {
            return Ok(());
        }
        Err(crate::Error::new(
            file,
            field,
            format!(
                "holds {held} image placeholder tokens (id {token}); the image gives {n} features, so it must hold {n} (or, given to run, one that stands for them all)"
            ),
        ))
    }
}

/// The encoders anatomy runs.
#[derive(Debug, Clone, PartialEq)]
pub enum ImageEncoder {
    /// LLaVA's: CLIP's vision model, the hidden states of chosen layers side by side (the
    /// class token's dropped or kept), through a two-layer projector.
    Llava(Llava),
    /// LLaVA-NeXT's: LLaVA's encoder over the whole image shrunk to one tile, then over each
    /// tile of the canvas its processor fits the image to (the `pinpoints` canvas that keeps
    /// most of it, the image resized without distortion and padded); the tiles' features laid
    /// back into the canvas's grid, the padding's rows or columns dropped, a learned vector
    /// ending each row, after the whole image's features.
    LlavaNext(LlavaNext),
    /// LLaVA-OneVision's: SigLIP's tower over LLaVA-NeXT's tiles, the hidden states read side by
    /// side through LLaVA's projector; the canvas's features, unpadded, resized (bilinear) down
    /// to about `anyres_max_N` tiles' worth where they pass it, a learned vector ending each
    /// row, after the whole image's features.
    LlavaOnevision(LlavaOnevision),
    /// Gemma 3's: SigLIP's vision model to its last LayerNorm, its patches average-pooled to
    /// `tokens` features, an RMSNorm and a map into the text width. An image's tokens see each
    /// other both ways in the language model (transformers masks them so with the processor's
    /// token types).
    Gemma3(Gemma3Vision),
    /// Qwen2-VL's: a ViT over the image at its own resolution (patches of two frames, 2-D
    /// rotary positions, attention among every patch), each `merge`² patches joined and
    /// projected into the text width. Its tokens take 3-D positions in the language model
    /// (M-RoPE: time, row, column).
    Qwen2Vl(Qwen2Vision),
    /// Qwen3-VL's: Qwen2-VL's with a biased patch convolution, a learned grid of positions
    /// resampled to each image's patches, and deep-stack mergers whose features of chosen blocks
    /// are added to the first layers' outputs at the image's tokens; its M-RoPE interleaves
    /// time, row and column.
    Qwen3Vl(Qwen3Vision),
    /// Qwen2.5-VL's: Qwen2-VL's with RMSNorms, a biased gated MLP, and attention within windows
    /// of patches except in chosen blocks.
    Qwen25Vl(Qwen25Vision),
    /// Llama 4's: a ViT over each tile its processor cuts the image into (patches unfolded and
    /// mapped, a class token after them, learned positions, 2-D rotary attention), the class
    /// token dropped, each `shuffle`² patches shuffled into one feature through a two-layer
    /// GELU MLP, and a map into the text width.
    Llama4(Llama4Vision),
    /// Mistral 3's and LightOnOCR's: Pixtral's ViT over the image at its own resolution (2-D
    /// rotary positions, RMSNorms, a gated MLP), an RMSNorm, each `merge`² patches joined by a
    /// learned map, and two maps into the text width.
    Pixtral(PixtralVision),
    /// PaliGemma's: SigLIP's vision model to its last LayerNorm, each patch one feature through
    /// a biased linear map into the text width.
    PaliGemma(PaliGemmaVision),
    /// InternVL's: InternViT over each tile its processor cuts the image into (a class token,
    /// learned positions, layers whose attention and MLP are scaled by learned vectors), the
    /// class token dropped, each `shuffle`² patches joined by the pixel shuffle, then a
    /// LayerNorm and two maps into the text width.
    InternVl(InternVlVision),
    /// Aya Vision's and Command A Vision's: SigLIP's vision model over each tile its processor
    /// cuts the image into, a layer's state read (Aya's before the tower's last LayerNorm), each
    /// `shuffle`² patches joined by the pixel shuffle, a LayerNorm (Aya's), a map whose halves
    /// gate each other (SwiGLU) and a map into the text width.
    Aya(AyaVision),
    /// GIT's: CLIP's vision model to its last LayerNorm (the class token kept), a biased map
    /// into the text width and a LayerNorm; the features come before the prompt
    /// (`Placeholders::Before`) and see each other both ways.
    Git(GitVision),
    /// DeepSeek-VL's: SigLIP's vision model to its last LayerNorm, each patch one feature
    /// through the aligner's two biased maps (exact GELU between) into the text width.
    DeepseekVl(DeepseekVlVision),
    /// Idefics3's and SmolVLM's: SigLIP's vision model to its last LayerNorm over each frame
    /// its processor makes of an image (tiles row by row, then the whole image), each
    /// `shuffle`² patches joined by the pixel shuffle, a bias-free map into the text width.
    Idefics3(Idefics3Vision),
}

impl ImageEncoder {
    /// Features (and so placeholder tokens) per image, at the stated resolution for an encoder
    /// that reads images at their own (`step`).
    pub fn features(&self) -> u64 {
        match self {
            ImageEncoder::Llava(l) => l.features(),
            ImageEncoder::LlavaNext(LlavaNext { base, anyres }) => {
                anyres.features_at(&base.tower, anyres.stated(&base.tower))
            }
            ImageEncoder::LlavaOnevision(LlavaOnevision { tower, anyres, .. }) => {
                anyres.features_at(tower, anyres.stated(tower))
            }
            ImageEncoder::Gemma3(g) => g.tokens,
            ImageEncoder::PaliGemma(p) => p.tower.grid().pow(2),
            ImageEncoder::Qwen2Vl(_)
            | ImageEncoder::Qwen3Vl(_)
            | ImageEncoder::Qwen25Vl(_)
            | ImageEncoder::Pixtral(_) => self.features_of(&[], None),
            ImageEncoder::Llama4(l) => l.features(),
            ImageEncoder::InternVl(i) => i.features(),
            ImageEncoder::Aya(a) => a.features(),
            ImageEncoder::Git(g) => g.features(),
            ImageEncoder::DeepseekVl(d) => d.tower.grid().pow(2),
            ImageEncoder::Idefics3(i) => i.features(),
        }
    }

    /// Features of a processed image of `dims` (channels, height, width), which `misfit` has
    /// accepted, from an image of `size` (height, width) where it is known (LLaVA-NeXT's
    /// features follow the image's own size, not its tiles').
    pub fn features_of(&self, dims: &[usize], size: Option<[u64; 2]>) -> u64 {
        let side = self.side();
        if let (Some((a, t)), Some(size)) = (self.anyres(), size) {
            return a.features_at(t, size);
        }
        match (self.reading(), dims) {
            (Reading::OwnSize(f), [_, h, w]) => (*h as u64 / f) * (*w as u64 / f),
            (Reading::OwnSize(f), _) => (side / f).pow(2),
            (Reading::Tiles, [tiles, _, _, _]) => *tiles as u64 * self.features(),
            (Reading::Square | Reading::Tiles | Reading::Fitted { .. }, _) => self.features(),
        }
    }

    /// How it takes an image: at one square size, as tiles of one, or at the size its processor
    /// resizes it to.
    pub fn reading(&self) -> Reading {
        match self {
            ImageEncoder::Llava(_)
            | ImageEncoder::Gemma3(_)
            | ImageEncoder::PaliGemma(_)
            | ImageEncoder::Git(_)
            | ImageEncoder::DeepseekVl(_) => Reading::Square,
            ImageEncoder::Llama4(_)
            | ImageEncoder::InternVl(_)
            | ImageEncoder::Aya(_)
            | ImageEncoder::Idefics3(_) => Reading::Tiles,
            ImageEncoder::LlavaNext(LlavaNext { base, anyres }) => Reading::Fitted {
                most: anyres.most_tiles(&base.tower),
            },
            ImageEncoder::LlavaOnevision(LlavaOnevision { tower, anyres, .. }) => Reading::Fitted {
                most: anyres.most_tiles(tower),
            },
            ImageEncoder::Pixtral(p) => Reading::OwnSize(p.factor()),
            ImageEncoder::Qwen2Vl(q)
            | ImageEncoder::Qwen3Vl(Qwen3Vision { base: q, .. })
            | ImageEncoder::Qwen25Vl(Qwen25Vision { base: q, .. }) => Reading::OwnSize(q.factor()),
        }
    }

    /// The tiles of an image at its own size, and the tower that reads them (LLaVA-NeXT's,
    /// LLaVA-OneVision's).
    pub fn anyres(&self) -> Option<(&AnyRes, &VisionTower)> {
        match self {
            ImageEncoder::LlavaNext(LlavaNext { base, anyres }) => Some((anyres, &base.tower)),
            ImageEncoder::LlavaOnevision(LlavaOnevision { tower, anyres, .. }) => {
                Some((anyres, tower))
            }
            ImageEncoder::Llava(_)
            | ImageEncoder::Gemma3(_)
            | ImageEncoder::PaliGemma(_)
            | ImageEncoder::Llama4(_)
            | ImageEncoder::Pixtral(_)
            | ImageEncoder::InternVl(_)
            | ImageEncoder::Aya(_)
            | ImageEncoder::Git(_)
            | ImageEncoder::DeepseekVl(_)
            | ImageEncoder::Idefics3(_)
            | ImageEncoder::Qwen2Vl(_)
            | ImageEncoder::Qwen3Vl(_)
            | ImageEncoder::Qwen25Vl(_) => None,
        }
    }

    /// Qwen2-VL's part of a Qwen encoder: the tower, patching, merge and M-RoPE they share.
    pub fn qwen(&self) -> Option<&Qwen2Vision> {
        match self {
            ImageEncoder::Qwen2Vl(q)
            | ImageEncoder::Qwen3Vl(Qwen3Vision { base: q, .. })
            | ImageEncoder::Qwen25Vl(Qwen25Vision { base: q, .. }) => Some(q),
            ImageEncoder::Llava(_)
            | ImageEncoder::LlavaNext(_)
            | ImageEncoder::LlavaOnevision(_)
            | ImageEncoder::Gemma3(_)
            | ImageEncoder::PaliGemma(_)
            | ImageEncoder::Llama4(_)
            | ImageEncoder::Pixtral(_)
            | ImageEncoder::InternVl(_)
            | ImageEncoder::Aya(_)
            | ImageEncoder::Git(_)
            | ImageEncoder::DeepseekVl(_)
            | ImageEncoder::Idefics3(_) => None,
        }
    }

    /// Why a processed image of `dims` does not fit the tower (the shape it takes), or `None`
    /// where it does.
    pub fn misfit(&self, dims: &[usize]) -> Option<String> {
        let [c, h, w] = self.shape().map(|n| n as usize);
        // An image at its own size: sides a whole number of `f` pixels (Pixtral's patches, whose
        // merge drops a last odd row or column of them; Qwen's features).
        let own = |f: u64, what: &str| {
            let f = f as usize;
            let fits = matches!(dims, [channels, h, w]
                if *channels == c && *h >= f && *w >= f && h % f == 0 && w % f == 0);
            (
                fits,
                format!("[{c}, height, width] with height and width multiples of {f} ({what})"),
            )
        };
        let (fits, takes) = match self {
            ImageEncoder::Llava(_)
            | ImageEncoder::Gemma3(_)
            | ImageEncoder::PaliGemma(_)
            | ImageEncoder::Git(_)
            | ImageEncoder::DeepseekVl(_) => (
                dims == [c, h, w],
                format!("[{c}, {h}, {w}] (channels, height, width)"),
            ),
            // A tile, or several.
            ImageEncoder::Llama4(_)
            | ImageEncoder::InternVl(_)
            | ImageEncoder::Aya(_)
            | ImageEncoder::LlavaNext(_)
            | ImageEncoder::LlavaOnevision(_)
            | ImageEncoder::Idefics3(_) => (
                dims == [c, h, w]
                    || matches!(dims, [tiles, rest @ ..] if *tiles > 0 && rest == [c, h, w]),
                format!("[tiles, {c}, {h}, {w}] (the tiles its processor cuts an image into: tiles, channels, height, width)"),
            ),
            ImageEncoder::Pixtral(p) => own(p.tower.patch, "the patch"),
            ImageEncoder::Qwen2Vl(q)
            | ImageEncoder::Qwen3Vl(Qwen3Vision { base: q, .. })
            | ImageEncoder::Qwen25Vl(Qwen25Vision { base: q, .. }) => {
                own(q.factor(), "the patch times the merge")
            }
        };
        (!fits).then_some(takes)
    }

    /// Its vision tower (its name prefix moves with the checkpoint's layout).
    pub fn tower_mut(&mut self) -> &mut VisionTower {
        match self {
            ImageEncoder::Llava(Llava { tower, .. })
            | ImageEncoder::LlavaNext(LlavaNext {
                base: Llava { tower, .. },
                ..
            })
            | ImageEncoder::LlavaOnevision(LlavaOnevision { tower, .. })
            | ImageEncoder::Gemma3(Gemma3Vision { tower, .. })
            | ImageEncoder::PaliGemma(PaliGemmaVision { tower, .. })
            | ImageEncoder::Llama4(Llama4Vision { tower, .. })
            | ImageEncoder::Pixtral(PixtralVision { tower, .. })
            | ImageEncoder::InternVl(InternVlVision { tower, .. })
            | ImageEncoder::Aya(AyaVision { tower, .. })
            | ImageEncoder::Git(GitVision { tower, .. })
            | ImageEncoder::DeepseekVl(DeepseekVlVision { tower, .. })
            | ImageEncoder::Idefics3(Idefics3Vision { tower, .. })
            | ImageEncoder::Qwen2Vl(Qwen2Vision { tower, .. })
            | ImageEncoder::Qwen3Vl(Qwen3Vision {
                base: Qwen2Vision { tower, .. },
                ..
            })
            | ImageEncoder::Qwen25Vl(Qwen25Vision {
                base: Qwen2Vision { tower, .. },
                ..
            }) => tower,
        }
    }

    /// Whether an image's placeholder tokens attend to each other both ways (a run of them, up
    /// to the last), not only to those before.
    pub fn both_ways(&self) -> bool {
        match self {
            ImageEncoder::Llava(_)
            | ImageEncoder::LlavaNext(_)
            | ImageEncoder::LlavaOnevision(_)
            | ImageEncoder::Qwen2Vl(_)
            | ImageEncoder::Qwen3Vl(_)
            | ImageEncoder::Qwen25Vl(_)
            | ImageEncoder::Llama4(_)
            | ImageEncoder::Pixtral(_)
            | ImageEncoder::InternVl(_)
            | ImageEncoder::Aya(_)
            | ImageEncoder::DeepseekVl(_)
            | ImageEncoder::Idefics3(_) => false,
            // GIT's, all of them before the text.
            ImageEncoder::Gemma3(_) | ImageEncoder::Git(_) => true,
            // The whole prompt sees itself both ways (`Spec::prefix_lm`), the image with it.
            ImageEncoder::PaliGemma(_) => false,
        }
    }

    /// The most values a processed image may hold: channels × height × width (at most
    /// Pillow's image size where the encoder reads images at their own resolution).
    pub fn pixels(&self) -> u64 {
        match self.reading() {
            Reading::OwnSize(_) => self.tower().channels * PILLOW_MAX_PIXELS,
            // Tiles of an image resized up to at most Pillow's size, and one more.
            Reading::Tiles => {
                let t = self.tower();
                t.channels * (PILLOW_MAX_PIXELS + t.image.pow(2))
            }
            Reading::Square => self.shape().iter().product(),
            // The largest canvas's tiles and the whole image's.
            Reading::Fitted { most } => {
                let t = self.tower();
                t.channels * t.image.pow(2) * (most + 1)
            }
        }
    }

    /// The processed image it takes (the stated one where it reads images at their own
    /// resolution): channels, height, width.
    pub fn shape(&self) -> [u64; 3] {
        let t = self.tower();
        [t.channels, t.image, t.image]
    }

    /// The side of the square image it takes (or the stated one), in pixels.
    pub fn side(&self) -> u64 {
        self.tower().image
    }

    /// Its vision tower's name prefix.
    pub fn tower_prefix(&self) -> &str {
        &self.tower().prefix
    }

    fn tower(&self) -> &VisionTower {
        match self {
            ImageEncoder::Llava(Llava { tower, .. })
            | ImageEncoder::LlavaNext(LlavaNext {
                base: Llava { tower, .. },
                ..
            })
            | ImageEncoder::LlavaOnevision(LlavaOnevision { tower, .. })
            | ImageEncoder::Gemma3(Gemma3Vision { tower, .. })
            | ImageEncoder::PaliGemma(PaliGemmaVision { tower, .. })
            | ImageEncoder::Llama4(Llama4Vision { tower, .. })
            | ImageEncoder::Pixtral(PixtralVision { tower, .. })
            | ImageEncoder::InternVl(InternVlVision { tower, .. })
            | ImageEncoder::Aya(AyaVision { tower, .. })
            | ImageEncoder::Git(GitVision { tower, .. })
            | ImageEncoder::DeepseekVl(DeepseekVlVision { tower, .. })
            | ImageEncoder::Idefics3(Idefics3Vision { tower, .. }) => tower,
            ImageEncoder::Qwen2Vl(q)
            | ImageEncoder::Qwen3Vl(Qwen3Vision { base: q, .. })
            | ImageEncoder::Qwen25Vl(Qwen25Vision { base: q, .. }) => &q.tower,
        }
    }

    /// Where it reads an image at the resolution its processor resizes it to rather than at one
    /// size, the pixels a feature spans a side (its figures are then stated for a square image
    /// `side` pixels wide).
    pub fn step(&self) -> Option<u64> {
        match self.reading() {
            Reading::OwnSize(f) => Some(f),
            Reading::Square | Reading::Tiles | Reading::Fitted { .. } => None,
        }
    }

    /// The 3-D positions of the language model's rotary embedding where an image's tokens
    /// take them (M-RoPE).
    pub fn mrope(&self) -> Option<&Mrope> {
        self.qwen().map(|q| &q.mrope)
    }

    /// How the image runs through it and joins the language model, in the page's words: its
    /// features in the placeholders' places where the prompt holds them (`in_prompt`).
    pub fn describe(&self, in_prompt: bool) -> Vec<String> {
        let side = self.side();
        let n = self.features();
        let mut out = vec![match self.reading() {
            Reading::OwnSize(f) => format!("It reads an image at the size its processor resizes it to (sides multiples of {f} pixels): a token per {f}×{f} pixels, {n} for a {side}×{side} image, each replacing a placeholder token's embedding."),
            Reading::Fitted { .. } => format!("It reads an image as tiles of {side}×{side} pixels: the whole image shrunk to one, then the canvas its processor fits the image to without distortion (the size in its list that keeps most of the image, padded), cut into tiles; a {side}×{side} image gives {n} features, each replacing a placeholder token's embedding."),
            Reading::Tiles => format!("It reads an image as tiles of {side}×{side} pixels, as its processor cuts it (a grid of tiles, and where there are several the whole image shrunk to one more); each tile's {n} features replace placeholder tokens' embeddings, one each."),
            Reading::Square if in_prompt => format!("It reads a {side}×{side} image; its {n} features replace the placeholder tokens' embeddings, one each."),
            Reading::Square => format!("It reads a {side}×{side} image into {n} features."),
        }];
        match self {
            ImageEncoder::Llava(l) => out.push(format!(
                "The hidden states read: {:?} (0 the embeddings', negative from the last layer's){}, side by side{}, then the projector's two maps.",
                l.layers,
                if l.drop_class { ", the class token's dropped" } else { ", the class token's kept" },
                if l.projector_norm.is_some() { ", LayerNormed" } else { "" }
            )),
            ImageEncoder::LlavaNext(l) => out.push(format!(
                "Each tile runs LLaVA's way: the hidden states read: {:?}{}, then the projector's two maps. The tiles' features are laid back into the canvas's grid, the rows or columns of its padding dropped, and a learned vector ends each row; the whole image's features come first. {}",
                l.base.layers,
                if l.base.drop_class { ", the class token's dropped" } else { ", the class token's kept" },
                l.anyres.describe()
            )),
            ImageEncoder::LlavaOnevision(o) => out.push(format!(
                "Each tile runs through SigLIP's tower: the hidden states read: {:?} (0 the embeddings', negative from the last layer's, before its last LayerNorm), every patch's, then the projector's two maps. The tiles' features are laid back into the canvas's grid, the rows or columns of its padding dropped, and a learned vector ends each row; the whole image's features come first. {}",
                o.layers,
                o.anyres.describe()
            )),
            ImageEncoder::Gemma3(g) => out.push(format!(
                "The patch grid is average-pooled {0}×{0} to its features; in the language model the image's tokens see each other both ways, the text causally.",
                g.pool()
            )),
            ImageEncoder::Llama4(l) => out.push(format!(
                "A tile's patches take learned positions and 2-D rotary ones (the column turns the first half of a head's pairs, the row the second); its class token, after them, is dropped at the end, and each {0}×{0} patches are shuffled into one feature {1} wide, through a two-layer GELU MLP and a map into the text width.",
                l.shuffle,
                l.tower.hidden * l.shuffle * l.shuffle
            )),
            ImageEncoder::PaliGemma(_) => out.push(
                "Each patch's state after the tower's last LayerNorm is one feature, through a biased linear map into the text width; in the language model the whole prompt (the image and the text after it) sees itself both ways, as PaliGemma's processor marks it a prefix.".into(),
            ),
            ImageEncoder::Pixtral(p) => out.push(format!(
                "Its patches take 2-D rotary positions (half of a head's rotated pairs turn by the patch's row, half by its column); the hidden state read, RMSNormed, joins each {0}×{0} patches in a learned map, then two maps into the text width.",
                p.merge
            )),
            ImageEncoder::InternVl(i) => out.push(format!(
                "Each layer's attention and MLP outputs are scaled by learned vectors before they join the stream{qk}; the class token is dropped at the end, and each {k}×{k} patches are shuffled into one feature {joined} wide, LayerNormed, through two maps into the text width.",
                qk = if i.qk_norm { " (Q and K RMSNormed over the whole width)" } else { "" },
                k = i.shuffle,
                joined = i.tower.hidden * i.shuffle * i.shuffle
            )),
            ImageEncoder::Aya(a) => out.push(format!(
                "The hidden state read: {} (0 the embeddings', negative from the last layer's), {} the tower's last LayerNorm; each {k}×{k} patches are shuffled into one feature {joined} wide{}, mapped to {inner} values whose second half, through SiLU, gates the first, and mapped into the text width.",
                a.layer,
                if a.last_norm { "after" } else { "before" },
                if a.projector_norm.is_some() { ", LayerNormed" } else { "" },
                k = a.shuffle,
                joined = a.tower.hidden * a.shuffle * a.shuffle,
                inner = a.inner
            )),
            ImageEncoder::Git(_) => out.push(
                "The tower's output after its last LayerNorm, the class token's kept, is mapped into the text width and LayerNormed.".into(),
            ),
            ImageEncoder::DeepseekVl(_) => out.push(
                "Each patch's state after the tower's last LayerNorm is one feature, through the aligner's two maps (GELU between) into the text width.".into(),
            ),
            ImageEncoder::Idefics3(i) => out.push(format!(
                "Its patches take learned positions; after the tower's last LayerNorm each {k}×{k} patches are shuffled into one feature {joined} wide and mapped into the text width (no bias).",
                k = i.shuffle,
                joined = i.tower.hidden * i.shuffle * i.shuffle
            )),
            ImageEncoder::Qwen2Vl(_) | ImageEncoder::Qwen25Vl(_) | ImageEncoder::Qwen3Vl(_) => {}
        }
        if let Some(m) = self.mrope() {
            out.push(format!(
                "The image's tokens take 3-D positions in the language model's rotary embedding (M-RoPE): time, row and column over the features' grid, its rotated pairs split {:?} among them{}; the text after the image goes on from the grid's longer side.",
                m.sections,
                if m.interleaved { ", interleaved" } else { "" }
            ));
        }
        match self {
            ImageEncoder::Qwen25Vl(w) => out.push(format!(
                "Its blocks attend within windows of {0}×{0} features, except blocks {1:?}, which see every patch.",
                w.window, w.full
            )),
            // (Qwen3.5's tower has none.)
            ImageEncoder::Qwen3Vl(t) if !t.deepstack.is_empty() => out.push(format!(
                "Its deep-stack mergers take the outputs of blocks {:?}; the k-th one's features are added to the language model's layer k output at the image's tokens.",
                t.deepstack
            )),
            ImageEncoder::Qwen3Vl(_) => {}
            ImageEncoder::Llava(_)
            | ImageEncoder::LlavaNext(_)
            | ImageEncoder::LlavaOnevision(_)
            | ImageEncoder::Gemma3(_)
            | ImageEncoder::PaliGemma(_)
            | ImageEncoder::Qwen2Vl(_)
            | ImageEncoder::Llama4(_)
            | ImageEncoder::Pixtral(_)
            | ImageEncoder::InternVl(_)
            | ImageEncoder::Aya(_)
            | ImageEncoder::Git(_)
            | ImageEncoder::DeepseekVl(_)
            | ImageEncoder::Idefics3(_) => {}
        }
        out
    }

    /// FLOPs to encode one image into its features (2 per multiply-add; matmuls and attention,
    /// as the language model's figures count them), into a language model `text` wide.
    pub fn flops(&self, text: u64) -> u128 {
        match self {
            ImageEncoder::Llava(l) => l.flops(text),
            ImageEncoder::LlavaNext(l) => l.flops(text),
            ImageEncoder::LlavaOnevision(o) => o.flops(text),
            ImageEncoder::Gemma3(g) => g.flops(text),
            ImageEncoder::PaliGemma(p) => p.flops(text),
            ImageEncoder::Qwen2Vl(q) => q.flops(q.tower.image, q.tower.image),
            ImageEncoder::Qwen3Vl(q) => q.flops(),
            ImageEncoder::Qwen25Vl(q) => q.flops(),
            ImageEncoder::Llama4(l) => l.flops(text),
            ImageEncoder::Pixtral(p) => p.flops(text),
            ImageEncoder::InternVl(i) => i.flops(text),
            ImageEncoder::Aya(a) => a.flops(text),
            ImageEncoder::Git(g) => g.flops(text),
            ImageEncoder::DeepseekVl(d) => d.flops(text),
            ImageEncoder::Idefics3(i) => i.flops(text),
        }
    }
}

/// How an encoder takes an image.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reading {
    /// One square image of the tower's size (LLaVA's, Gemma 3's, PaliGemma's).
    Square,
    /// Tiles of the tower's size, as its processor cuts an image (a grid of them, and where
    /// there are several the whole image shrunk to one more): Llama 4's, InternVL's, Aya
    /// Vision's, Command A Vision's, Idefics3's. Its figures are per tile.
    Tiles,
    /// Tiles of the tower's size: the whole image shrunk to one, then the canvas its processor
    /// fits the image to, cut into `most` tiles at the most (LLaVA-NeXT's); its features follow
    /// the image's own size, its figures are stated for a square image of the tower's size.
    Fitted { most: u64 },
    /// The image at the size its processor resizes it to, sides multiples of the pixels a
    /// feature spans (Pixtral's, the Qwen VL models'); its figures are stated for a square
    /// image of the tower's size.
    OwnSize(u64),
}

/// M-RoPE: the language model's rotated pairs each turn by one of a token's three positions
/// (time, row, column), as `sections` shares them out.
#[derive(Debug, Clone, PartialEq)]
pub struct Mrope {
    /// Pairs for time, row and column (`mrope_section`; a longer list goes round the three
    /// again).
    pub sections: Vec<u64>,
    /// Qwen3-VL's order: row and column take every third pair from the second and third, up to
    /// three times their share, time the rest; else (Qwen2-VL) the shares in turn.
    pub interleaved: bool,
}

impl Mrope {
    /// The axis (0 time, 1 row, 2 column) each of `pairs` rotated pairs turns by.
    pub fn axes(&self, pairs: usize) -> Vec<usize> {
        let s = |i: usize| self.sections.get(i).copied().unwrap_or(0) as usize;
        (0..pairs)
            .map(|j| match self.interleaved {
                true if j % 3 == 1 && j < 3 * s(1) => 1,
                true if j % 3 == 2 && j < 3 * s(2) => 2,
                true => 0,
                // The share holding pair j (transformers' `split`, then `m[i % 3]`).
                false => {
                    let mut end = 0;
                    let share = self.sections.iter().position(|&n| {
                        end += n as usize;
                        j < end
                    });
                    share.unwrap_or(0) % 3
                }
            })
            .collect()
    }

    /// Whether transformers can share `pairs` pairs so: the contiguous split must fill them.
    pub fn fits(&self, pairs: u64) -> bool {
        self.interleaved || self.sections.iter().sum::<u64>() == pairs
    }
}

/// Pillow's decompression-bomb limit (twice its `MAX_IMAGE_PIXELS`), in pixels: the largest
/// image a processor opens.
pub const PILLOW_MAX_PIXELS: u64 = 2 * 89_478_485;

/// A ViT tower as the encoders run it (CLIP's, SigLIP's): a patch convolution, encoder layers
/// (LayerNorms, attention among every token, a two-layer MLP), their sizes and settings.
#[derive(Debug, Clone, PartialEq)]
pub struct VisionTower {
    /// Name prefix of its tensors.
    pub prefix: String,
    /// The square image it takes, in pixels, and its patch's side.
    pub image: u64,
    pub patch: u64,
    pub channels: u64,
    /// Its width and its MLP's, its heads and layers.
    pub hidden: u64,
    pub intermediate: u64,
    pub heads: u64,
    pub depth: u64,
    /// Its LayerNorms' ε and its MLP's activation.
    pub eps: f64,
    pub act: Act,
}

impl VisionTower {
    /// Patches along a side.
    pub fn grid(&self) -> u64 {
        self.image / self.patch
    }

    /// The patch convolution over every patch.
    fn embed_flops(&self) -> u128 {
        let [d, c, p] = [self.hidden, self.channels, self.patch].map(u128::from);
        2 * u128::from(self.grid()).pow(2) * d * c * p * p
    }

    /// A tile's patches and class token through the patch convolution and every layer.
    fn with_class_flops(&self) -> u128 {
        self.embed_flops()
            + u128::from(self.depth) * self.layer_flops(u128::from(self.grid()).pow(2) + 1)
    }

    /// Features of a tile whose patches are shuffled `k`×`k` into one.
    fn shuffled(&self, k: u64) -> u64 {
        (self.grid() / k).pow(2)
    }

    /// One layer over `n` tokens: the four attention projections and the MLP over each, and
    /// attention's scores and weighted values among them.
    fn layer_flops(&self, n: u128) -> u128 {
        let [d, i] = [self.hidden, self.intermediate].map(u128::from);
        2 * n * (4 * d * d + 2 * d * i) + 4 * n * n * d
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Llava {
    /// CLIP's vision model.
    pub tower: VisionTower,
    /// Name prefix of the projector's tensors.
    pub projector: String,
    /// The hidden states read (`vision_feature_layer`): indexes into the embeddings' output and
    /// every layer's, from the end where negative.
    pub layers: Vec<i64>,
    /// The class token's state is dropped (`vision_feature_select_strategy` "default").
    pub drop_class: bool,
    /// The projector's activation between its two maps, and whether they have biases.
    pub projector_act: Act,
    pub projector_bias: bool,
    /// The ε of a LayerNorm over the joined states before the projector's maps (VipLlava's
    /// `projector_layernorm`), where it has one.
    pub projector_norm: Option<f64>,
    /// A second tower of the same config stored beside the one read, which an image does not
    /// read: Video-LLaVA's video tower, named as its image tower with `video_tower` for
    /// `image_tower`.
    pub video_tower: bool,
}

impl Llava {
    /// Features (and so placeholder tokens) per image.
    pub fn features(&self) -> u64 {
        self.tower.grid().pow(2) + u64::from(!self.drop_class)
    }

    /// The hidden states read, as indexes from the first layer's input (0) to the last layer's
    /// output (`depth`).
    pub fn states(&self) -> Vec<u64> {
        let n = self.tower.depth as i64 + 1;
        (self.layers.iter())
            .map(|&i| i.rem_euclid(n) as u64)
            .collect()
    }

    /// The encoder layers run: up to the last hidden state read.
    pub fn layers_run(&self) -> u64 {
        self.states().into_iter().max().unwrap_or(0)
    }

    /// The patch convolution; each layer run over every patch and the class token; the
    /// projector over every feature into `text`.
    fn flops(&self, text: u64) -> u128 {
        let n = u128::from(self.tower.grid()).pow(2) + 1;
        let joined = u128::from(self.tower.hidden) * self.layers.len() as u128;
        let text = u128::from(text);
        self.tower.embed_flops()
            + u128::from(self.layers_run()) * self.tower.layer_flops(n)
            + 2 * u128::from(self.features()) * (joined * text + text * text)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct LlavaNext {
    /// LLaVA's encoder, over each tile.
    pub base: Llava,
    pub anyres: AnyRes,
}

impl LlavaNext {
    /// Every tile of an image at the stated size through LLaVA's tower and projector (the
    /// projector maps every patch's feature, the padding's too).
    fn flops(&self, text: u64) -> u128 {
        let t = &self.base.tower;
        u128::from(self.anyres.tiles(t, self.anyres.stated(t))) * self.base.flops(text)
    }
}

/// LLaVA-OneVision's encoder: SigLIP's over each tile, the hidden states read side by side,
/// LLaVA's projector; its tiles as LLaVA-NeXT's, their features shrunk where many.
#[derive(Debug, Clone, PartialEq)]
pub struct LlavaOnevision {
    /// SigLIP's vision model, and whether its pooling head is stored (never read).
    pub tower: VisionTower,
    pub head: bool,
    /// Name prefix of the projector's tensors.
    pub projector: String,
    /// The hidden states read (`vision_feature_layer`), from the end where negative; every
    /// patch's (SigLIP has no class token).
    pub layers: Vec<i64>,
    pub projector_act: Act,
    pub projector_bias: bool,
    pub anyres: AnyRes,
}

impl LlavaOnevision {
    /// The hidden states read, as indexes from the first layer's input (0) to the last layer's
    /// output (`depth`).
    pub fn states(&self) -> Vec<u64> {
        let n = self.tower.depth as i64 + 1;
        (self.layers.iter())
            .map(|&i| i.rem_euclid(n) as u64)
            .collect()
    }

    /// Each tile of an image at the stated size: the patch convolution, the layers up to the
    /// last state read over every patch, the projector over every patch's feature.
    fn flops(&self, text: u64) -> u128 {
        let t = &self.tower;
        let n = u128::from(t.grid()).pow(2);
        let run = u128::from(self.states().into_iter().max().unwrap_or(0));
        let joined = u128::from(t.hidden) * self.layers.len() as u128;
        let text = u128::from(text);
        let tile = t.embed_flops() + run * t.layer_flops(n) + 2 * n * (joined * text + text * text);
        u128::from(self.anyres.tiles(t, self.anyres.stated(t))) * tile
    }
}

/// LLaVA-NeXT's way of taking an image at its own size (LLaVA-OneVision's too): the whole
/// image shrunk to one tile, then the canvas of `pinpoints` that keeps most of it, cut into
/// tiles; the canvas's features unpadded, shrunk where there are many (OneVision's), a learned
/// vector ending each row, after the whole image's.
#[derive(Debug, Clone, PartialEq)]
pub struct AnyRes {
    /// `image_grid_pinpoints`: the canvases, height and width in pixels, the processor may fit
    /// an image to, each a whole number of tiles.
    pub pinpoints: Vec<[u64; 2]>,
    /// Name of the learned vector ending each row (`image_newline`).
    pub newline: String,
    /// OneVision's `anyres_max_N`: where the canvas's kept features pass N tiles' worth by more
    /// than a tenth in side, they are resized (bilinear) down to about that.
    pub most: Option<u64>,
}

/// What `image_grid_pinpoints` must be, for the refusal of anything else.
pub const PINPOINTS: &str =
    "must be a list of [height, width] pairs of whole numbers from 1 to 100000";

/// `image_grid_pinpoints` as a model's config or its processor's writes it: [height, width]
/// pairs, each side 1 to 100,000 pixels (as a processed image is bounded); `None` where it is
/// not such a list (`PINPOINTS` says what it must be).
pub fn read_pinpoints(v: &serde_json::Value) -> Option<Vec<[u64; 2]>> {
    let side = |x: &serde_json::Value| x.as_u64().filter(|n| (1..=100_000).contains(n));
    let pair = |v: &serde_json::Value| match v.as_array()?.as_slice() {
        [h, w] => Some([side(h)?, side(w)?]),
        // Not a pair.
        _ => None,
    };
    let list = v.as_array().filter(|l| !l.is_empty())?;
    list.iter().map(pair).collect()
}

/// Of `pinpoints` (height, width), the canvas for an image of `size` (height, width): the one
/// that keeps most of the image once it is resized into it without distortion, the least
/// wasted among those, the first of equals (transformers' `select_best_resolution`); `[0, 0]`
/// where there is none.
pub fn best_canvas(pinpoints: &[[u64; 2]], [h, w]: [u64; 2]) -> [u64; 2] {
    let mut best = [0, 0];
    let (mut kept, mut wasted) = (0u64, u64::MAX);
    for &[ch, cw] in pinpoints {
        let scale = (cw as f64 / w as f64).min(ch as f64 / h as f64);
        let (dw, dh) = ((w as f64 * scale) as u64, (h as f64 * scale) as u64);
        let effective = (dw * dh).min(w * h);
        let waste = (ch * cw).saturating_sub(effective);
        if effective > kept || (effective == kept && waste < wasted) {
            (kept, wasted, best) = (effective, waste, [ch, cw]);
        }
    }
    best
}

/// Where the features of an image's canvas stand once the padding's are dropped: the rows
/// `top..top + rows` and columns `left..left + cols` of its grid of features; and the size
/// they are resized to (bilinear), where they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unpadded {
    /// The canvas's tiles down and across.
    pub tiles: [u64; 2],
    pub top: u64,
    pub rows: u64,
    pub left: u64,
    pub cols: u64,
    pub resized: Option<[u64; 2]>,
}

impl AnyRes {
    /// The canvas (height, width) for an image of `size` (height, width): `best_canvas`.
    pub fn canvas(&self, size: [u64; 2]) -> [u64; 2] {
        best_canvas(&self.pinpoints, size)
    }

    /// Where the features of an image of `size` stand in its canvas's grid of `t`'s tiles once
    /// the padding's are dropped (transformers' `unpad_image` over the features), and their
    /// size once shrunk (OneVision's).
    pub fn unpadded(&self, t: &VisionTower, [h, w]: [u64; 2]) -> Unpadded {
        let g = t.grid();
        let [ch, cw] = self.canvas([h, w]);
        let tiles = [ch / t.image, cw / t.image];
        let (rows, cols) = (tiles[0] * g, tiles[1] * g);
        // Python's `int(round(x, 7))`: rounded to 7 decimals, then truncated.
        let kept = |x: f64| ((x * 1e7).round() / 1e7) as u64;
        let (fh, fw) = (h as f64, w as f64);
        let mut u = if fw / fh > cols as f64 / rows as f64 {
            let pad = rows.saturating_sub(kept(fh * (cols as f64 / fw))) / 2;
            Unpadded {
                tiles,
                top: pad,
                rows: rows - 2 * pad,
                left: 0,
                cols,
                resized: None,
            }
        } else {
            let pad = cols.saturating_sub(kept(fw * (rows as f64 / fh))) / 2;
            Unpadded {
                tiles,
                top: 0,
                rows,
                left: pad,
                cols: cols - 2 * pad,
                resized: None,
            }
        };
        if let Some(most) = self.most {
            let ratio = ((u.rows * u.cols) as f64 / (most as f64 * (g * g) as f64)).sqrt();
            if ratio > 1.1 {
                let shrunk = |n: u64| (n as f64 / ratio).floor() as u64;
                u.resized = Some([shrunk(u.rows), shrunk(u.cols)]);
            }
        }
        u
    }

    /// Features (and so placeholder tokens) of an image of `size` through tiles of `t`: the
    /// whole image's tile's, then the canvas's kept (or shrunk), and a newline each row.
    pub fn features_at(&self, t: &VisionTower, size: [u64; 2]) -> u64 {
        let u = self.unpadded(t, size);
        let [rows, cols] = u.resized.unwrap_or([u.rows, u.cols]);
        t.grid().pow(2) + rows * cols + rows
    }

    /// The size its figures are stated at: a square image of the tower's size.
    pub fn stated(&self, t: &VisionTower) -> [u64; 2] {
        [t.image; 2]
    }

    /// Tiles of an image of `size`: the whole image's and its canvas's.
    pub fn tiles(&self, t: &VisionTower, size: [u64; 2]) -> u64 {
        let [rows, cols] = self.unpadded(t, size).tiles;
        1 + rows * cols
    }

    /// The most tiles a canvas holds.
    pub fn most_tiles(&self, t: &VisionTower) -> u64 {
        (self.pinpoints.iter())
            .map(|[h, w]| (h / t.image) * (w / t.image))
            .max()
            .unwrap_or(1)
    }

    /// The page's words: its canvases, and where its features are shrunk.
    fn describe(&self) -> String {
        let canvases = (self.pinpoints.iter())
            .map(|[h, w]| format!("{h}×{w}"))
            .collect::<Vec<_>>()
            .join(", ");
        match self.most {
            Some(n) => format!("Canvases: {canvases}; where the canvas's kept features pass {n} tiles' worth by more than a tenth in side, they are resized (bilinear) down to about that."),
            None => format!("Canvases: {canvases}."),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Gemma3Vision {
    /// SigLIP's vision model.
    pub tower: VisionTower,
    /// Name prefix of the projector's tensors (its RMSNorm's ε is the tower's).
    pub projector: String,
    /// Features per image (`mm_tokens_per_image`), a square number: the patch grid is
    /// average-pooled down to its side.
    pub tokens: u64,
    /// SigLIP's attention-pooling head is stored (`vision_use_head`), though Gemma 3 reads the
    /// patches' states before it.
    pub head: bool,
}

/// PaliGemma's image encoder.
#[derive(Debug, Clone, PartialEq)]
pub struct PaliGemmaVision {
    /// SigLIP's vision model.
    pub tower: VisionTower,
    /// Name prefix of the projector's `linear`.
    pub projector: String,
    /// SigLIP's attention-pooling head is stored (`vision_use_head`), though PaliGemma reads
    /// the patches' states before it.
    pub head: bool,
}

impl PaliGemmaVision {
    /// The patch convolution; every layer over every patch; the map of every patch into
    /// `text`.
    fn flops(&self, text: u64) -> u128 {
        let n = u128::from(self.tower.grid()).pow(2);
        self.tower.embed_flops()
            + u128::from(self.tower.depth) * self.tower.layer_flops(n)
            + 2 * n * u128::from(self.tower.hidden) * u128::from(text)
    }
}

impl Gemma3Vision {
    /// The pooling window's side: the patch grid over the features' grid.
    pub fn pool(&self) -> u64 {
        self.tower.grid() / self.tokens.isqrt()
    }

    /// The patch convolution; every layer over every patch; the map of every feature into
    /// `text` (the pooling and the norms are not products).
    fn flops(&self, text: u64) -> u128 {
        let n = u128::from(self.tower.grid()).pow(2);
        self.tower.embed_flops()
            + u128::from(self.tower.depth) * self.tower.layer_flops(n)
            + 2 * u128::from(self.tokens) * u128::from(self.tower.hidden) * u128::from(text)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Qwen2Vision {
    /// The ViT: `image` is the stated square resolution its figures are given at (it reads an
    /// image at the processor's resolution); `patch` the side of a patch, `eps` its
    /// LayerNorms' (1e-6 in the class).
    pub tower: VisionTower,
    /// Frames a patch spans (an image's one frame is repeated to fill them).
    pub frames: u64,
    /// The side of the square of patches the merger joins into one feature.
    pub merge: u64,
    /// The base of the tower's 2-D rotary frequencies.
    pub theta: f64,
    /// The text width the merger projects into.
    pub out: u64,
    /// How the language model's rotary pairs take an image token's 3-D position.
    pub mrope: Mrope,
}

impl Qwen2Vision {
    /// Pixels the height and width of a processed image are multiples of.
    pub fn factor(&self) -> u64 {
        self.tower.patch * self.merge
    }

    /// Features of an image `h` × `w` pixels (multiples of `factor`).
    pub fn features(&self, h: u64, w: u64) -> u64 {
        (h / self.factor()) * (w / self.factor())
    }

    /// Values of one patch: channels × frames × patch².
    pub fn patch_values(&self) -> u64 {
        self.tower.channels * self.frames * self.tower.patch.pow(2)
    }

    /// The patch convolution over every patch; every layer over every patch; the merger's two
    /// maps over every feature.
    fn flops(&self, h: u64, w: u64) -> u128 {
        let n = u128::from((h / self.tower.patch) * (w / self.tower.patch));
        self.embed_flops(n)
            + u128::from(self.tower.depth) * self.tower.layer_flops(n)
            + self.merger_flops(h, w)
    }

    /// The patch convolution over `n` patches.
    fn embed_flops(&self, n: u128) -> u128 {
        2 * n * u128::from(self.tower.hidden) * u128::from(self.patch_values())
    }

    /// The merger's two maps over every feature of an image `h` × `w`.
    fn merger_flops(&self, h: u64, w: u64) -> u128 {
        let joined = u128::from(self.tower.hidden * self.merge * self.merge);
        2 * u128::from(self.features(h, w)) * (joined * joined + joined * u128::from(self.out))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Qwen3Vision {
    /// What it shares with Qwen2-VL's (its MLP and merger named `linear_fc1`, `linear_fc2`, its
    /// merger's norm `norm`).
    pub base: Qwen2Vision,
    /// The side of the learned position grid (`num_position_embeddings` = side²), resampled
    /// bilinearly (corners aligned) to each image's patch grid.
    pub positions: u64,
    /// The blocks whose output a deep-stack merger takes (`deepstack_visual_indexes`): the k-th
    /// one's features are added after the language model's layer k.
    pub deepstack: Vec<u64>,
}

impl Qwen3Vision {
    /// Qwen2-VL's count (a bias and the position sum are not products) and each deep-stack
    /// merger's two maps over every feature.
    fn flops(&self) -> u128 {
        let q = &self.base;
        let side = q.tower.image;
        q.flops(side, side) + self.deepstack.len() as u128 * q.merger_flops(side, side)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Qwen25Vision {
    /// What it shares with Qwen2-VL's (its blocks' and merger's norms RMSNorms, its MLP a biased
    /// gated one: `gate_proj`, `up_proj`, `down_proj`; its width `hidden_size`).
    pub base: Qwen2Vision,
    /// A window's side in features (`window_size` over the patch and the merge): a patch sees
    /// only the patches of its window, windows tiled over the features' grid from its top left.
    pub window: u64,
    /// The blocks that attend among every patch (`fullatt_block_indexes`).
    pub full: Vec<u64>,
}

impl Qwen25Vision {
    /// The window of the patch at `row`, `col` of a grid of patches `cols` wide, numbered row
    /// by row.
    pub fn window_of(&self, row: u64, col: u64, cols: u64) -> u64 {
        let span = self.window * self.base.merge;
        (row / span) * cols.div_ceil(span) + col / span
    }

    /// Qwen2-VL's count with a third map in each MLP, and each windowed block's attention among
    /// its windows' patches alone.
    fn flops(&self) -> u128 {
        let q = &self.base;
        let t = &q.tower;
        let side = t.image / t.patch;
        let n = u128::from(side * side);
        let [d, i, depth] = [t.hidden, t.intermediate, t.depth].map(u128::from);
        // Patches a window spans along a side: whole spans, then what is left.
        let span = self.window * q.merge;
        let spans: Vec<u128> = (0..side.div_ceil(span))
            .map(|k| u128::from(span.min(side - k * span)))
            .collect();
        let windowed: u128 = (spans.iter())
            .flat_map(|a| spans.iter().map(move |b| (a * b).pow(2)))
            .sum();
        let full = (0..t.depth).filter(|b| self.full.contains(b)).count() as u128;
        let layers = depth * (t.layer_flops(n) + 2 * n * d * i)
            - (depth - full) * 4 * (n * n - windowed) * d;
        q.embed_flops(n) + layers + q.merger_flops(t.image, t.image)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Llama4Vision {
    /// The ViT a tile runs through (`image` the tile's side; its LayerNorms' ε 1e-5 and its
    /// MLP's GELU are the class's, whatever the config says).
    pub tower: VisionTower,
    /// The side of the square of patches the pixel shuffle joins into one feature (1 /
    /// `pixel_shuffle_ratio`).
    pub shuffle: u64,
    /// The adapter MLP's width, after each of its two maps and into the projector
    /// (`projector_input_dim`, which must equal `projector_output_dim` and `vision_output_dim`).
    pub adapter: u64,
    /// The base of the tower's 2-D rotary frequencies.
    pub theta: f64,
    /// Name prefix of the projector's map into the text width.
    pub projector: String,
}

impl Llama4Vision {
    /// Features (and so placeholder tokens) per tile.
    pub fn features(&self) -> u64 {
        self.tower.shuffled(self.shuffle)
    }

    /// One tile: the patches' map; every layer over the patches and the class token; the
    /// adapter's two maps and the projector's over every feature into `text`.
    fn flops(&self, text: u64) -> u128 {
        let joined = u128::from(self.tower.hidden * self.shuffle * self.shuffle);
        let a = u128::from(self.adapter);
        self.tower.with_class_flops()
            + 2 * u128::from(self.features()) * (joined * a + a * a + a * u128::from(text))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct InternVlVision {
    /// InternViT, over a tile (`image` its side; `eps` its norms', `act` its MLP's).
    pub tower: VisionTower,
    /// Its layers' norms are RMSNorms (`norm_type` "rms_norm"), else LayerNorms.
    pub rms: bool,
    /// Q, K and V are biased (`attention_bias`); RMSNorms (ε 1e-6, the class's) over the whole
    /// width of Q and of K (`use_qk_norm`).
    pub qkv_bias: bool,
    pub qk_norm: bool,
    /// Learned positions, one more than the patches (`use_absolute_position_embeddings`).
    pub positions: bool,
    /// A LayerNorm after the last layer (where `use_mean_pooling` is false).
    pub last_norm: bool,
    /// The side of the square of patches the pixel shuffle joins (1 / `downsample_ratio`).
    pub shuffle: u64,
    /// Name prefix of the projector's tensors (its LayerNorm's ε torch's default, 1e-5), its
    /// activation between its two maps.
    pub projector: String,
    pub projector_act: Act,
}

impl InternVlVision {
    /// Features (and so placeholder tokens) per tile.
    pub fn features(&self) -> u64 {
        self.tower.shuffled(self.shuffle)
    }

    /// One tile: the patch convolution; every layer over the patches and the class token; the
    /// projector's two maps over every feature into `text`.
    fn flops(&self, text: u64) -> u128 {
        let joined = u128::from(self.tower.hidden * self.shuffle * self.shuffle);
        let text = u128::from(text);
        self.tower.with_class_flops()
            + 2 * u128::from(self.features()) * (joined * text + text * text)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct AyaVision {
    /// SigLIP's vision model, over a tile (`image` its side).
    pub tower: VisionTower,
    /// SigLIP's attention-pooling head is stored (`vision_use_head`), though Aya Vision reads
    /// a layer's state before it.
    pub head: bool,
    /// The hidden state read (`vision_feature_layer`): 0 the embeddings', negative from the
    /// last layer's; with the tower's last LayerNorm applied (Command A Vision reads the tower's
    /// output), or not (Aya Vision's hidden states).
    pub layer: i64,
    pub last_norm: bool,
    /// The side of the square of patches the pixel shuffle joins (`downsample_factor`).
    pub shuffle: u64,
    /// Name prefix of the projector's tensors; its LayerNorm's ε where it has one (Aya's
    /// `adapter_layer_norm_eps`); the width of its first map (`alignment_intermediate_size`),
    /// whose second half gates the first.
    pub projector: String,
    pub projector_norm: Option<f64>,
    pub inner: u64,
}

impl AyaVision {
    /// Features (and so placeholder tokens) per tile.
    pub fn features(&self) -> u64 {
        self.tower.shuffled(self.shuffle)
    }

    /// The encoder layers run: up to the hidden state read.
    pub fn layers_run(&self) -> u64 {
        self.layer.rem_euclid(self.tower.depth as i64 + 1) as u64
    }

    /// One tile: the patch convolution; each layer run over every patch; the projector's two
    /// maps over every feature into `text`.
    fn flops(&self, text: u64) -> u128 {
        let t = &self.tower;
        let n = u128::from(t.grid()).pow(2);
        let joined = u128::from(t.hidden * self.shuffle * self.shuffle);
        let inner = u128::from(self.inner);
        t.embed_flops()
            + u128::from(self.layers_run()) * t.layer_flops(n)
            + 2 * u128::from(self.features()) * (joined * inner + inner / 2 * u128::from(text))
    }
}

/// DeepSeek-VL's image encoder.
#[derive(Debug, Clone, PartialEq)]
pub struct DeepseekVlVision {
    /// SigLIP's vision model.
    pub tower: VisionTower,
    /// SigLIP's attention-pooling head is stored (`vision_use_head`), though DeepSeek-VL reads
    /// the patches' states before it.
    pub head: bool,
    /// Name prefix of the aligner's `linear1` and `linear2`.
    pub projector: String,
}

impl DeepseekVlVision {
    /// The patch convolution; every layer over every patch; the aligner's two maps of every
    /// patch into `text`.
    fn flops(&self, text: u64) -> u128 {
        let t = &self.tower;
        let n = u128::from(t.grid()).pow(2);
        let text = u128::from(text);
        t.embed_flops()
            + u128::from(t.depth) * t.layer_flops(n)
            + 2 * n * (u128::from(t.hidden) * text + text * text)
    }
}

/// Idefics3's and SmolVLM's image encoder.
#[derive(Debug, Clone, PartialEq)]
pub struct Idefics3Vision {
    /// SigLIP's vision model without its pooling head, over a frame (`image` its side).
    pub tower: VisionTower,
    /// The side of the square of patches the pixel shuffle joins (`scale_factor`).
    pub shuffle: u64,
    /// Name prefix of the connector's bias-free map (`modality_projection.proj`).
    pub projector: String,
}

impl Idefics3Vision {
    /// Features (and so placeholder tokens) per frame.
    pub fn features(&self) -> u64 {
        self.tower.shuffled(self.shuffle)
    }

    /// One frame: the patch convolution; every layer over every patch; the connector's map of
    /// every feature into `text`.
    fn flops(&self, text: u64) -> u128 {
        let t = &self.tower;
        let n = u128::from(t.grid()).pow(2);
        let joined = u128::from(t.hidden * self.shuffle * self.shuffle);
        t.embed_flops()
            + u128::from(t.depth) * t.layer_flops(n)
            + 2 * u128::from(self.features()) * joined * u128::from(text)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct GitVision {
    /// CLIP's vision model.
    pub tower: VisionTower,
    /// Name prefix of the projection's map (`0`) and its LayerNorm (`1`, of the tower's ε).
    pub projector: String,
    /// Learned vectors stored for a video's frames (`num_image_with_embedding`), which one
    /// image does not read.
    pub frames: u64,
}

impl GitVision {
    /// Features per image: a patch's each, and the class token's.
    pub fn features(&self) -> u64 {
        self.tower.grid().pow(2) + 1
    }

    /// The patch convolution; every layer over the patches and the class token; the map of
    /// every feature into `text`.
    fn flops(&self, text: u64) -> u128 {
        self.tower.with_class_flops()
            + 2 * u128::from(self.features()) * u128::from(self.tower.hidden) * u128::from(text)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct PixtralVision {
    /// Pixtral's ViT (`image` the square its figures are stated at: the config's largest
    /// image; its RMSNorms' ε 1e-5, the class's).
    pub tower: VisionTower,
    /// The side of the square of patches the patch merger joins into one feature.
    pub merge: u64,
    /// The base of the tower's 2-D rotary frequencies.
    pub theta: f64,
    /// The hidden state read (`vision_feature_layer`): 0 the embeddings', negative from the
    /// last layer's.
    pub layer: i64,
    /// Name prefix of the projector's tensors (its RMSNorm's ε the language model's), its
    /// activation between its two maps and whether they have biases.
    pub projector: String,
    pub projector_act: Act,
    pub projector_bias: bool,
}

impl PixtralVision {
    /// Pixels a feature spans a side: the patch times the merge.
    pub fn factor(&self) -> u64 {
        self.tower.patch * self.merge
    }

    /// The encoder layers run: up to the hidden state read.
    pub fn layers_run(&self) -> u64 {
        self.layer.rem_euclid(self.tower.depth as i64 + 1) as u64
    }

    /// A square image of the stated side: the patch convolution; each layer run over every
    /// patch (a gated MLP: three maps); the merger's and the projector's maps over every
    /// feature into `text`.
    fn flops(&self, text: u64) -> u128 {
        let t = &self.tower;
        let n = u128::from(t.grid()).pow(2);
        let [d, i, m] = [t.hidden, t.intermediate, self.merge].map(u128::from);
        let f = u128::from((t.image / self.factor()).pow(2));
        let text = u128::from(text);
        t.embed_flops()
            + u128::from(self.layers_run()) * (t.layer_flops(n) + 2 * n * d * i)
            + 2 * f * (d * m * m * d + d * text + text * text)
    }
}

#[cfg(test)]
mod tests {
    use super::Mrope;

    /// Each rotated pair's axis as transformers' recomposition gives it: Qwen2-VL's shares in
    /// turn (a longer list going round again), Qwen3-VL's interleaved row and column.
    #[test]
    fn mrope_gives_each_pair_its_axis() {
        let m = |sections: &[u64], interleaved| Mrope {
            sections: sections.to_vec(),
            interleaved,
        };
        assert_eq!(m(&[2, 1, 1], false).axes(4), [0, 0, 1, 2]);
        assert_eq!(m(&[1, 1, 1, 1], false).axes(4), [0, 1, 2, 0]);
        assert_eq!(m(&[2, 1, 1], true).axes(4), [0, 1, 2, 0]);
        let axes = m(&[24, 20, 20], true).axes(64);
        let count = |a| axes.iter().filter(|&&x| x == a).count();
        assert_eq!([count(0), count(1), count(2)], [24, 20, 20]);
        assert_eq!(&axes[57..], [0, 1, 2, 0, 0, 0, 0]);
        assert!(m(&[16, 24, 24], false).fits(64) && !m(&[16, 24, 24], false).fits(60));
    }
}
