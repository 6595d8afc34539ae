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

    /// Its vision tower (its name prefix moves with the checkpoint's layout).
    pub fn tower_mut(&mut self) -> &mut VisionTower {
        match self {
            ImageEncoder::Llava(Llava { tower, .. })
            | ImageEncoder::Gemma3(Gemma3Vision { tower, .. }) => tower,
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
            ImageEncoder::Llava(Llava { tower: t, .. })
            | ImageEncoder::Gemma3(Gemma3Vision { tower: t, .. }) => [t.channels, t.image, t.image],
        }
    }

    /// The side of the square image it takes, in pixels.
    pub fn side(&self) -> u64 {
        match self {
            ImageEncoder::Llava(Llava { tower: t, .. })
            | ImageEncoder::Gemma3(Gemma3Vision { tower: t, .. }) => t.image,
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
