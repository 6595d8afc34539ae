//! How an image reaches the language model, for the wrappers anatomy runs on one: which
//! encoder makes its features and which placeholder token they replace in the prompt.

use super::Act;

/// An image's way into the token stream.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageInput {
    /// The placeholder id the prompt holds once per image feature; each is replaced by one.
    pub token: u64,
    pub encoder: ImageEncoder,
}

/// The encoders anatomy runs.
#[derive(Debug, Clone, PartialEq)]
pub enum ImageEncoder {
    /// LLaVA's: CLIP's vision model, the hidden states of chosen layers side by side (the
    /// class token's dropped or kept), through a two-layer projector.
    Llava(Llava),
}

impl ImageEncoder {
    /// Features (and so placeholder tokens) per image.
    pub fn features(&self) -> u64 {
        match self {
            ImageEncoder::Llava(l) => l.features(),
        }
    }

    /// Values of one processed image: channels × height × width.
    pub fn pixels(&self) -> u64 {
        match self {
            ImageEncoder::Llava(l) => l.channels * l.image * l.image,
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
}
