//! How an image reaches the language model, for the wrappers anatomy runs on one: which
//! encoder makes its features and which placeholder token they replace in the prompt.

use super::Act;

/// An image's way into the token stream.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageInput {
    /// The placeholder id the prompt holds once per image feature; each is replaced by one.
    pub token: u64,
    pub encoder: ImageEncoder,
    /// The ids that open and close an image's placeholders, where the processor frames them
    /// (Gemma 3's `<start_of_image>` … `<end_of_image>`): a prompt holds the opening one where
    /// the image goes, and the processor writes the rest around it.
    pub frame: Option<(u64, u64)>,
}

impl ImageInput {
    /// `ids` hold one placeholder per image feature; else an error at `field` of `file` saying
    /// how many they must hold.
    pub fn check_placeholders(&self, ids: &[u32], file: &str, field: &str) -> crate::Result<()> {
        let held = ids
            .iter()
            .filter(|&&id| u64::from(id) == self.token)
            .count() as u64;
        let n = self.encoder.features();
        if held == n {
            return Ok(());
        }
        Err(crate::Error::new(
            file,
            field,
            format!(
                "holds {held} image placeholder tokens (id {}); the image gives {n} features, so it must hold {n} (or, given to run, one that stands for them all)",
                self.token
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
    /// Gemma 3's: SigLIP's vision model to its last LayerNorm, its patches average-pooled to
    /// `tokens` features, an RMSNorm and a map into the text width. An image's tokens see each
    /// other both ways in the language model (transformers masks them so with the processor's
    /// token types).
    Gemma3(Gemma3Vision),
}

impl ImageEncoder {
    /// Features (and so placeholder tokens) per image.
    pub fn features(&self) -> u64 {
        match self {
            ImageEncoder::Llava(l) => l.features(),
            ImageEncoder::Gemma3(g) => g.tokens,
        }
    }

    /// The name prefix of its vision tower's tensors, to move with the checkpoint's layout.
    pub fn tower_mut(&mut self) -> &mut String {
        match self {
            ImageEncoder::Llava(l) => &mut l.tower,
            ImageEncoder::Gemma3(g) => &mut g.tower,
        }
    }

    /// Whether an image's placeholder tokens attend to each other both ways (a run of them, up
    /// to the last), not only to those before.
    pub fn both_ways(&self) -> bool {
        match self {
            ImageEncoder::Llava(_) => false,
            ImageEncoder::Gemma3(_) => true,
        }
    }

    /// Values of one processed image: channels × height × width.
    pub fn pixels(&self) -> u64 {
        self.shape().iter().product()
    }

    /// The processed image it takes: channels, height, width.
    pub fn shape(&self) -> [u64; 3] {
        match self {
            ImageEncoder::Llava(l) => [l.channels, l.image, l.image],
            ImageEncoder::Gemma3(g) => [g.channels, g.image, g.image],
        }
    }

    /// The side of the square image it takes, in pixels.
    pub fn side(&self) -> u64 {
        match self {
            ImageEncoder::Llava(l) => l.image,
            ImageEncoder::Gemma3(g) => g.image,
        }
    }

    /// FLOPs to encode one image into its features (2 per multiply-add; matmuls and attention,
    /// as the language model's figures count them), into a language model `text` wide.
    pub fn flops(&self, text: u64) -> u128 {
        match self {
            ImageEncoder::Llava(l) => l.flops(text),
            ImageEncoder::Gemma3(g) => g.flops(text),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Llava {
    /// Name prefixes of the tower's and the projector's tensors.
    pub tower: String,
    pub projector: String,
    /// The square image the tower takes, in pixels, and its patch's side.
    pub image: u64,
    pub patch: u64,
    pub channels: u64,
    /// The tower's width and its MLP's.
    pub hidden: u64,
    pub intermediate: u64,
    pub heads: u64,
    /// Its encoder layers.
    pub depth: u64,
    /// The tower's LayerNorms' ε and its MLP's activation.
    pub eps: f64,
    pub act: Act,
    /// The hidden states read (`vision_feature_layer`): indexes into the embeddings' output and
    /// every layer's, from the end where negative.
    pub layers: Vec<i64>,
    /// The class token's state is dropped (`vision_feature_select_strategy` "default").
    pub drop_class: bool,
    /// The projector's activation between its two maps, and whether they have biases.
    pub projector_act: Act,
    pub projector_bias: bool,
}

impl Llava {
    /// Patches along a side.
    pub fn grid(&self) -> u64 {
        self.image / self.patch
    }

    /// Features (and so placeholder tokens) per image.
    pub fn features(&self) -> u64 {
        self.grid().pow(2) + u64::from(!self.drop_class)
    }

    /// The hidden states read, as indexes from the first layer's input (0) to the last layer's
    /// output (`depth`).
    pub fn states(&self) -> Vec<u64> {
        let n = self.depth as i64 + 1;
        (self.layers.iter())
            .map(|&i| i.rem_euclid(n) as u64)
            .collect()
    }

    /// The encoder layers run: up to the last hidden state read.
    pub fn layers_run(&self) -> u64 {
        self.states().into_iter().max().unwrap_or(0)
    }

    /// The patch convolution over every patch; per layer run, the four attention projections
    /// and the MLP over every patch and the class token, and attention's scores and weighted
    /// values among them; the projector over every feature into `text`.
    fn flops(&self, text: u64) -> u128 {
        let [d, i, c, p] =
            [self.hidden, self.intermediate, self.channels, self.patch].map(u128::from);
        let patches = u128::from(self.grid()).pow(2);
        let n = patches + 1;
        let layer = 2 * n * (4 * d * d + 2 * d * i) + 4 * n * n * d;
        let joined = d * self.layers.len() as u128;
        let text = u128::from(text);
        2 * patches * d * c * p * p
            + u128::from(self.layers_run()) * layer
            + 2 * u128::from(self.features()) * (joined * text + text * text)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Gemma3Vision {
    /// Name prefixes of the tower's and the projector's tensors.
    pub tower: String,
    pub projector: String,
    /// The square image the tower takes, in pixels, and its patch's side.
    pub image: u64,
    pub patch: u64,
    pub channels: u64,
    /// The tower's width and its MLP's, its heads and layers.
    pub hidden: u64,
    pub intermediate: u64,
    pub heads: u64,
    pub depth: u64,
    /// The tower's LayerNorms' ε (the projector's RMSNorm's too) and its MLP's activation.
    pub eps: f64,
    pub act: Act,
    /// Features per image (`mm_tokens_per_image`), a square number: the patch grid is
    /// average-pooled down to its side.
    pub tokens: u64,
    /// SigLIP's attention-pooling head is stored (`vision_use_head`), though Gemma 3 reads the
    /// patches' states before it.
    pub head: bool,
}

impl Gemma3Vision {
    /// Patches along a side.
    pub fn grid(&self) -> u64 {
        self.image / self.patch
    }

    /// The pooling window's side: the patch grid over the features' grid.
    pub fn pool(&self) -> u64 {
        self.grid() / self.tokens.isqrt()
    }

    /// The patch convolution; per layer, the four attention projections and the MLP over every
    /// patch, and attention's scores and weighted values among them; the map of every feature
    /// into `text` (the pooling and the norms are not products).
    fn flops(&self, text: u64) -> u128 {
        let [d, i, c, p] =
            [self.hidden, self.intermediate, self.channels, self.patch].map(u128::from);
        let n = u128::from(self.grid()).pow(2);
        let layer = 2 * n * (4 * d * d + 2 * d * i) + 4 * n * n * d;
        2 * n * d * c * p * p
            + u128::from(self.depth) * layer
            + 2 * u128::from(self.tokens) * d * u128::from(text)
    }
}
