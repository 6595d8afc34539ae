//! The Spec: the normalized, validated hyper-parameters of one model, family-agnostic.
//!
//! Loaders (`families`) turn a config into a Spec; nothing downstream reads a raw config again.
//! A family differs from another only by what its Spec says.

mod attention;
mod draft;
mod ffn;
mod image;
mod layout;
mod mixer;
mod norm;
mod position;
mod streams;

pub use attention::*;
pub use draft::*;
pub use ffn::*;
pub use image::*;
pub use layout::*;
pub use mixer::*;
pub use norm::*;
pub use position::*;
pub use streams::*;

use crate::layers::LayerSet;

#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// Display name: the catalog name, or the file's folder name.
    pub name: String,
    /// `model_type` of the language model (of `text_config` for multimodal wrappers).
    pub model_type: String,
    /// Family display name ("Llama", "Qwen3").
    pub family: String,
    pub vocab: u64,
    pub hidden: u64,
    pub layers: u64,
    /// Longest context the model is configured for (`max_position_embeddings`).
    pub context: u64,
    pub embedding: Embedding,
    pub attn: Attention,
    /// Attentions of layers that differ from `attn`, each with its layers (MiMo-V2-Flash's
    /// sliding-window layers: twice the K/V heads, and sinks; Laguna's per-layer query heads);
    /// `attn` holds for every other layer. Read through `attn_at` or `attn_variants`.
    pub layer_attn: Vec<(LayerSet, Attention)>,
    /// The dense FFN (every layer for dense models; the dense layers of a MoE model).
    pub mlp: Mlp,
    pub moe: Option<Moe>,
    /// The recurrent mixer of the layers that run one (`Mixer::Mamba2`, `Mamba`, …), with its
    /// sizes: a model has one kind at most. Read through `ssm()`, `delta()` and the like.
    pub recurrent: Option<Recurrent>,
    /// One entry per layer.
    pub plan: Vec<LayerPlan>,
    pub norm: Norm,
    /// The final norm's kind where it differs from the blocks' (xLSTM with `use_bias`: its
    /// output norm has no shift). Read through `final_norm`.
    pub final_norm_kind: Option<NormKind>,
    /// Falcon-H1's μP multipliers, on the sublayers its `Mixer::Parallel` layers run side by
    /// side and on its MLP.
    pub mup: Option<Mup>,
    /// Where the recurrent layers' norms sit, where it differs from `norm.place` (OLMo hybrid:
    /// pre-norm DeltaNet layers among post-norm attention layers). Read through `place_at`.
    pub recurrent_place: Option<NormPlace>,
    /// The factors of a `NormPlace::Normed` block's residual adds (MiniMax); `None` otherwise.
    pub stream_mix: Option<StreamMix>,
    pub position: Position,
    /// The LM head reuses the embedding matrix.
    pub tied: bool,
    /// Tanh softcap applied to the final logits.
    pub final_softcap: Option<f64>,
    /// The logits are multiplied by this (Cohere's `logit_scale`, 1 / Granite's
    /// `logits_scaling`); 1 otherwise.
    pub logits_mult: f64,
    /// Each sublayer's output is multiplied by this before it joins the residual stream
    /// (Granite's `residual_multiplier`); 1 otherwise.
    pub residual_mult: f64,
    /// How each sublayer's output joins the residual stream: added, or mixed with it by learned
    /// vectors of the layer.
    pub residual: Residual,
    /// Each residual add keeps the stream's scale whatever the depth (Beam): the k-th add of the
    /// model (k = 2b + 2 for layer b's attention, 2b + 3 for its FFN) is
    /// x · √((k − 1)/k) + f(x) / √k. See `depth_factors`.
    pub depth_scaled: bool,
    /// The LM head has a bias (Phi-2, GPT-J).
    pub head_bias: bool,
    /// Layer 0 reads the embeddings without its pre-attention norm (ModernBERT's Identity there).
    pub skip_first_attn_norm: bool,
    /// Before the LM head: a dense layer (hidden → hidden), an activation and a norm of the
    /// model's kind (ModernBERT's prediction head).
    pub head_transform: Option<HeadTransform>,
    /// Per-layer embeddings (Gemma 4): each layer adds a signal of its own, gated by the stream.
    pub per_layer_input: Option<PerLayerInput>,
    /// Each layer's output is multiplied by a stored scalar of its own (Gemma 4's
    /// `layer_scalar`).
    pub layer_scalar: bool,
    /// Zamba2's shared transformer blocks, run before the mixer in some layers.
    pub shared: Option<SharedBlocks>,
    /// The residual stream's form: one plain stream, or one of the forms that replace it.
    pub stream: Stream,
    /// Qwen4-Exp's hashed n-gram per-layer embeddings: in some layers, before the mixer, a
    /// signal from a table read by hashes of the token and the ones before it.
    pub ngram_ple: Option<NgramPle>,
    /// nGPT's learned scalings (Dory), with `NormPlace::Sphere` and `NormKind::Unit`.
    pub ngpt: Option<Ngpt>,
    /// Gemma 3n's LAuReL: a low-rank branch of this rank beside each attention.
    pub laurel: Option<u64>,
    /// Gemma 3n's activation sparsity: the layers whose MLP gate keeps only its values above
    /// mean + z · std (a Gaussian top-k), with the fraction p dropped, z = Φ⁻¹(p).
    pub sparsity: Vec<(LayerSet, f64)>,
    /// A.X-K2's gated norms: the attention's norm in every layer, the FFN's in the MoE layers
    /// (`gated_ffn_norm`).
    pub gated_norm: Option<GatedNorm>,
    /// Layers whose dense MLP has a width of its own rather than `mlp.intermediate` (Gemma 4's
    /// double-wide MLPs in the layers that share keys and values). Read through `mlp_width`.
    pub mlp_widths: Vec<(LayerSet, u64)>,
    /// The LM head scores only the first n ids (Apertus 1.5's `output_vocab_size`, a head
    /// pruned to the text tokens); `None`: all `vocab`. See `out_vocab`.
    pub head_rows: Option<u64>,
    /// CPM-Ant's learned prompt and segments; `None` elsewhere.
    pub prompt: Option<Prompt>,
    /// The head scores all its rows, and only the first n logits are kept (Inkling's
    /// `unpadded_vocab_size`: a head padded past the real vocabulary). See `logits_width`.
    pub logits_kept: Option<u64>,
    /// Each sublayer's output passes through a residual causal depthwise convolution before it
    /// joins the stream, y + conv(y) (Inkling's `attn_sconv` and `mlp_sconv`); its last inputs
    /// are carried from step to step.
    pub out_conv: Option<ResConv>,
    pub block: Block,
    /// How checkpoint tensors are named and laid out.
    pub layout: Layout,
    /// Where a multimodal wrapper keeps the language model's Hugging Face tensor names.
    pub hf_wrap: HfWrap,
    /// A wrapper's parts beside its language model (vision and audio towers, projectors),
    /// each with the tensors its checkpoint stores, step by step.
    pub towers: Vec<Tower>,
    /// How an image enters the token stream, for a wrapper anatomy runs on one.
    pub image: Option<ImageInput>,
    /// The first pass's tokens (the prompt: PaliGemma's image and text prefix, as its
    /// processor's token types mark them) see each other both ways; each token after them sees
    /// those before it. In a sliding layer the prompt's tokens see all of the prompt.
    pub prefix_lm: bool,
    /// How the checkpoint stores its matrices (`quantization_config`); `None`: as floats.
    pub quant: Option<crate::quant::Declared>,
    /// Auxiliary modules outside the main forward pass.
    pub mtp_layers: u64,
    /// A draft model for speculative decoding (Gemma 4's assistants): it reads its target's
    /// state, not token ids, and every layer attends over its target's keys and values.
    pub draft: Option<Draft>,
    /// Each layer's source of keys and values where a config lists them (Kolibri 1.1's
    /// `kv_source_layers`: its own index, or an earlier layer's that it attends over); empty
    /// otherwise, and a sharing layer reads the last own layer of its kind (`kv_source`).
    pub kv_from: Vec<u64>,
    /// Config keys anatomy did not understand and ignored because it was asked to (`--lenient`):
    /// every view that prints figures says so.
    pub ignored: Vec<Ignored>,
    /// Config keys that transformers does not read for this model type (neither its config class
    /// nor its modeling code): they cannot change the model, and are listed as such.
    pub not_read: Vec<Ignored>,
}

/// A config key ignored under `--lenient`, with its value as JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct Ignored {
    /// JSON path of the key (`text_config.rope_scaling.mrope_section`).
    pub key: String,
    pub value: String,
}

impl Ignored {
    /// `key = value`, as the JSON outputs list it.
    pub fn pair(&self) -> String {
        format!("{} = {}", self.key, self.value)
    }

    /// Each of `keys` as `key = value`.
    pub fn pairs(keys: &[Ignored]) -> Vec<String> {
        keys.iter().map(Ignored::pair).collect()
    }
}

impl std::fmt::Display for Ignored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "anatomy ignored: {}", self.pair())
    }
}

/// A part of a multimodal checkpoint beside its language model (a vision tower, a projector):
/// run by an image or audio, not by a text token.
#[derive(Debug, Clone, PartialEq)]
pub struct Tower {
    /// What it is ("vision tower").
    pub what: String,
    /// Hugging Face name prefix of its tensors (`vision_tower.`).
    pub prefix: String,
    /// Its tensors, step by step, named and shaped as the checkpoint stores them; `None` for a
    /// kind anatomy does not know (then outside the total).
    pub blocks: Option<Vec<TowerBlock>>,
}

/// A step of a tower: its tensors, once or once per layer.
#[derive(Debug, Clone, PartialEq)]
pub struct TowerBlock {
    /// What it does ("patch embedding", "encoder layer").
    pub title: String,
    /// The layers it holds tensors for (`{i}` in its names is the layer); layer 0 alone for a
    /// step outside them.
    pub layers: crate::layers::LayerSet,
    /// Names under the tower's prefix, with their shapes.
    pub tensors: Vec<(String, Vec<u64>)>,
}

impl TowerBlock {
    /// Parameters over every repeat.
    pub fn params(&self) -> u128 {
        let one: u128 = (self.tensors.iter())
            .map(|(_, s)| s.iter().map(|&d| d as u128).product::<u128>())
            .sum();
        one * self.layers.len() as u128
    }

    /// Its stored tensors, over every layer.
    pub fn count(&self) -> u64 {
        self.layers.len() * self.tensors.len() as u64
    }

    /// Its title, with the layers it repeats over: "encoder layer ×24", "global positions in
    /// layers 2, 5, 8, 11".
    pub fn label(&self) -> String {
        let n = self.layers.len();
        match self.layers == crate::layers::LayerSet::all(n) {
            true if n == 1 => self.title.clone(),
            true => format!("{} ×{n}", self.title),
            false => format!("{} in layers {}", self.title, self.layers),
        }
    }
}

impl Tower {
    /// Its parameters, where anatomy knows it (they fit in 64 bits: the reader checks).
    pub fn params(&self) -> Option<u64> {
        (self.blocks.as_ref()).map(|b| b.iter().map(|b| b.params()).sum::<u128>() as u64)
    }

    /// Its steps; none for a kind anatomy does not know.
    pub fn steps(&self) -> &[TowerBlock] {
        self.blocks.as_deref().unwrap_or_default()
    }

    /// Every tensor it stores, full name (prefix and layer) and shape, in block order.
    pub fn tensors(&self) -> impl Iterator<Item = (String, &[u64])> + '_ {
        self.steps().iter().flat_map(move |b| {
            b.layers.iter().flat_map(move |i| {
                b.tensors.iter().map(move |(name, shape)| {
                    let name = name.replace("{i}", &i.to_string());
                    (format!("{}{name}", self.prefix), shape.as_slice())
                })
            })
        })
    }
}

impl std::fmt::Display for Tower {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.params() {
            Some(n) => write!(
                f,
                "{} ({}*, {})",
                self.what,
                self.prefix,
                crate::fmt::count(n as u128, "parameter")
            ),
            None => write!(f, "{} ({}*, not counted)", self.what, self.prefix),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Embedding {
    /// Multiply embeddings by √hidden (Gemma).
    pub scale_by_sqrt_hidden: bool,
    /// Learned absolute position embeddings of this many positions (GPT-2).
    pub learned_positions: Option<u64>,
    /// Position p reads row p + this of the learned table (OPT: 2).
    pub position_offset: u64,
    /// Embeddings are multiplied by this (Granite's `embedding_multiplier`); 1 otherwise.
    pub multiplier: f64,
    /// A norm (the model's kind) right after the lookup (Bloom's `word_embeddings_layernorm`).
    pub norm: bool,
    /// The embeddings are shifted and scaled by learned vectors, (e + b) ⊙ s (ZAYA's
    /// `input_hidden_states_bias` and `_scale`).
    pub affine: bool,
    /// The token table is this wide rather than `hidden` (OPT-350M: 512 of 1024): a linear map (no bias) takes each
    /// looked-up row to the hidden size, and another takes the final hidden state back to this
    /// width for the LM head (OPT-350M's `word_embed_proj_dim`, `project_in` and `project_out`).
    /// Read through `Spec::embed_width`.
    pub projected: Option<u64>,
}

/// Where a multimodal wrapper keeps its language model's tensors, relative to the names the
/// language model has alone (`Layout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HfWrap {
    /// No wrapper: the names as they are.
    None,
    /// A module's name before every name (`language_model.` in Gemma 3's and Llama 4's
    /// checkpoints, `text_model.` in Emu3's).
    Prefix(&'static str),
    /// The language model's `model.` becomes `model.language_model.`; the head stays where it
    /// is (Qwen3.5's checkpoints).
    Nested,
    /// The model's `model.` becomes `model.{module}.`; with `head`, the head moves there too
    /// (BLT's stacks: `model.local_encoder.`, and the patcher's `model.patcher.lm_head`).
    Module { module: &'static str, head: bool },
}

impl HfWrap {
    /// The checkpoint's name for the language model's tensor `name`.
    pub fn apply(self, name: &str) -> String {
        match self {
            HfWrap::None => name.to_string(),
            HfWrap::Prefix(module) => format!("{module}.{name}"),
            HfWrap::Nested => match name.strip_prefix("model.") {
                Some(rest) => format!("model.language_model.{rest}"),
                None => name.to_string(),
            },
            HfWrap::Module { module, head } => match name.strip_prefix("model.") {
                Some(rest) => format!("model.{module}.{rest}"),
                None if head => format!("model.{module}.{name}"),
                None => name.to_string(),
            },
        }
    }
}

/// How a sublayer's output f joins the residual stream x, with vectors learned per layer and
/// sublayer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Residual {
    /// x + f.
    Add,
    /// x ⊙ ρ + f (Doge's `input_residual` and `post_attention_residual`).
    Scaled,
    /// (f + bₒ) ⊙ sₒ + (x + bᵣ) ⊙ sᵣ (ZAYA's `post_attention_residual_scale` and
    /// `post_mlp_residual_scale`).
    Affine,
    /// σ(w) ⊙ f + √(1 + σ(w)) · e^(−softplus(w)/2) ⊙ x, one vector w (Ergo's
    /// `attention_residual_gate` and `feedforward_residual_gate`). The second factor is
    /// √(1 − σ(w)²): the two factors' squares sum to 1 whatever w.
    Gated,
}

/// How a decoder layer joins its two sublayers to the residual stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Block {
    /// Attention, then the FFN on the attention's result (Llama and most models).
    Sequential,
    /// Attention and FFN both read the layer's input and both add to it: x + attn(n(x)) +
    /// ffn(n'(x)), with one norm shared by both when `shared_norm` (GPT-J, Phi-2, Cohere,
    /// Falcon-7B) or two (GPT-NeoX, Falcon-40B).
    Parallel { shared_norm: bool },
}

/// Per-layer embeddings (Gemma 4's PLE). A second table gives each token `width` values per layer
/// (scaled by √width); the embeddings, projected to the same [layers, width], scaled by
/// 1/√hidden and RMS-normed per layer, are added to them and the sum scaled by 1/√2. At the end of
/// layer b: x ← x + norm(W_up (act(W_gate x) ⊙ pₛ)), pₛ that layer's `width` values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PerLayerInput {
    pub width: u64,
    /// The second table's rows.
    pub vocab: u64,
    /// Ids past the table read its row 0 (Gemma 3n); otherwise every id is in it.
    pub clamp_ids: bool,
}

/// A dense layer, activation and norm between the final norm and the LM head.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeadTransform {
    pub act: Act,
    /// The dense layer has a bias.
    pub bias: bool,
}

impl Spec {
    /// Hyper-connections, where the stream is theirs.
    pub fn hyper(&self) -> Option<Hyper> {
        if let Stream::Hyper(h) = self.stream {
            Some(h)
        } else {
            None
        }
    }

    /// Gated residual streams, where the stream is theirs.
    pub fn gated_streams(&self) -> Option<GatedStreams> {
        if let Stream::Gated(g) = self.stream {
            Some(g)
        } else {
            None
        }
    }

    /// Gemma 3n's alternating updates, where the stream is theirs.
    pub fn altup(&self) -> Option<AltUp> {
        if let Stream::AltUp(a) = self.stream {
            Some(a)
        } else {
            None
        }
    }

    /// HRM's nested stacks, where the stream is theirs.
    pub fn hierarchy(&self) -> Option<Hierarchy> {
        if let Stream::Hierarchy(h) = self.stream {
            Some(h)
        } else {
            None
        }
    }

    /// BLT's byte-level stacks, where this Spec is their latent transformer.
    pub fn bytes(&self) -> Option<&ByteLatent> {
        if let Stream::Bytes(b) = &self.stream {
            Some(b)
        } else {
            None
        }
    }

    /// Dory's looped section, where the stream runs through one.
    pub fn looped(&self) -> Option<Looped> {
        if let Stream::Looped(l) = self.stream {
            Some(l)
        } else {
            None
        }
    }

    /// Block attention residuals, where the stream is theirs.
    pub fn attn_res(&self) -> Option<AttnRes> {
        if let Stream::AttnRes(r) = self.stream {
            Some(r)
        } else {
            None
        }
    }
    /// A tensor's name for layer b and expert e from its template (`naming::instantiate`), with
    /// Zamba2's shared-block placeholders filled in (`SharedBlocks::place`).
    pub fn instantiate(&self, template: &str, b: Option<u64>, e: Option<u64>) -> String {
        match (&self.shared, self.hierarchy(), b) {
            (Some(s), _, Some(b)) => crate::naming::instantiate(&s.place(template, b), Some(b), e),
            // HRM: `{stack}` is the layer's stack, numbered within it.
            (_, Some(h), Some(b)) if template.contains("{stack}") => {
                let (low, i) = h.locate(b);
                let module = if low { "L_module" } else { "H_module" };
                crate::naming::instantiate(&template.replace("{stack}", module), Some(i), e)
            }
            _ => crate::naming::instantiate(template, b, e),
        }
    }

    /// The final norm: the blocks' norm, or of a kind of its own (`final_norm_kind`).
    pub fn final_norm(&self) -> Norm {
        Norm {
            kind: self.final_norm_kind.unwrap_or(self.norm.kind),
            ..self.norm.clone()
        }
    }

    /// How many times layer `b` runs for one token: once, or once per visit of its stack
    /// (`Hierarchy`).
    pub fn runs(&self, b: u64) -> u64 {
        match (self.hierarchy(), self.looped()) {
            (Some(h), _) => h.runs(b),
            (None, Some(l)) => l.runs(b),
            (None, None) => match self.attn_res().and_then(|r| r.looped) {
                Some(l) if l.contains(b) => l.passes,
                Some(_) | None => 1,
            },
        }
    }

    /// How many copies of its keys and values layer `b` caches: one per run, but one in all in
    /// a looped section whose last pass alone caches (`Looped::shared_cache`).
    pub fn caches(&self, b: u64) -> u64 {
        match self.looped() {
            Some(l) => l.caches(b),
            None => self.runs(b),
        }
    }

    /// The runs of the layers of `set` for one token: their count where no layer runs twice,
    /// else each one's runs (a walk over the set, which only a loop needs).
    pub fn runs_over(&self, set: &LayerSet) -> u128 {
        let loops = self.attn_res().is_some_and(|r| r.looped.is_some());
        if self.hierarchy().is_none() && self.looped().is_none() && !loops {
            return set.len() as u128;
        }
        set.iter().map(|b| self.runs(b) as u128).sum()
    }

    /// The width of the token table and of the LM head's rows: `hidden` unless the embeddings
    /// are projected (`Embedding::projected`).
    pub fn embed_width(&self) -> u64 {
        self.embedding.projected.unwrap_or(self.hidden)
    }

    /// How many logits the LM head produces: its rows.
    pub fn out_vocab(&self) -> u64 {
        self.head_rows.unwrap_or(self.vocab)
    }

    /// The logits a forward pass gives per position: the head's rows, or the first of them it
    /// keeps (`logits_kept`).
    pub fn logits_width(&self) -> u64 {
        self.logits_kept.unwrap_or(self.out_vocab())
    }

    /// The row of the position-bias table (`Position::Buckets`) that the query at absolute
    /// position `q` reads for the key at `k`.
    pub fn bias_row(&self, b: Buckets, q: u64, k: u64) -> u64 {
        match self.prompt {
            Some(p) if p.segment(q) != p.segment(k) => {
                b.buckets + p.segment(q) * p.segments + p.segment(k)
            }
            _ => b.bucket(k as i64 - q as i64),
        }
    }

    /// Rows of the position-bias table.
    pub fn bias_rows(&self, b: Buckets) -> u64 {
        b.buckets + self.prompt.map_or(0, |p| p.segments * p.segments)
    }

    /// Positions cached for `context` tokens of text: the prompt's too.
    pub fn cached_positions(&self, context: u64) -> u64 {
        context + self.prompt.map_or(0, |p| p.length)
    }

    pub fn is_moe(&self) -> bool {
        self.moe.is_some() && self.plan.iter().any(|l| l.moe())
    }

    /// Where layer `b`'s norms sit.
    pub fn place_at(&self, b: usize) -> NormPlace {
        match self.recurrent_place {
            Some(p) if self.plan[b].mixer.recurrent() => p,
            _ => self.norm.place,
        }
    }

    /// A mixer's name in this model: a DeltaNet's by its variant (Kimi's has its own).
    pub fn mixer_title(&self, m: Mixer) -> &'static str {
        match (m, self.delta()) {
            (Mixer::DeltaNet, Some(d)) => d.name(),
            _ => m.title(),
        }
    }

    /// A mixer as a phrase: `mixer_title`'s name for a DeltaNet, `Mixer::describe` otherwise.
    pub fn mixer_describe(&self, m: Mixer) -> String {
        match (m, self.delta()) {
            (Mixer::DeltaNet, Some(d)) => d.name().into(),
            _ => m.describe(),
        }
    }

    /// Layers whose plan entry satisfies `f`.
    pub fn layers_where(&self, f: impl Fn(&LayerPlan) -> bool) -> LayerSet {
        LayerSet::from_fn(self.layers, |b| f(&self.plan[b as usize]))
    }

    /// The factors of layer b's residual add after its attention (`ffn` false) or its FFN:
    /// (the stream's, the sublayer output's); (1, 1) unless `depth_scaled`.
    pub fn depth_factors(&self, b: u64, ffn: bool) -> (f64, f64) {
        if !self.depth_scaled {
            return (1.0, 1.0);
        }
        let k = (2 * b + 2 + ffn as u64) as f64;
        (((k - 1.0) / k).sqrt(), 1.0 / k.sqrt())
    }

    /// The span of layer b's softmax attention: its mixer's, or a shared block's (Zamba2), which
    /// sees every earlier token.
    /// DeepSeek-V4's window, which every layer attends over (`Attention::v4`).
    pub fn v4_window(&self) -> u64 {
        match self.plan.first().and_then(|l| l.span()) {
            Some(AttnSpan::Sliding(w)) => w,
            other => {
                unreachable!("DeepSeek-V4's layers attend over a sliding window, not {other:?}")
            }
        }
    }

    /// DeepSeek-V4's sliding layers' RoPE frequencies (its compressed layers' are
    /// `V4Attn::compress_freqs`).
    pub fn v4_main_freqs(&self) -> &RopeFreqs {
        match &self.position {
            Position::Rope(r) => &r.full,
            other @ (Position::Learned
            | Position::Sinusoidal(_)
            | Position::Alibi(_)
            | Position::None
            | Position::Buckets(_)) => unreachable!("DeepSeek-V4 rotates by RoPE, not {other:?}"),
        }
    }

    pub fn attn_span(&self, b: u64) -> Option<AttnSpan> {
        self.plan[b as usize].span().or_else(|| {
            self.shared
                .as_ref()
                .and_then(|s| s.visit(b))
                .map(|_| AttnSpan::Full)
        })
    }

    /// The keys a query of layer `b` reads, as a span: `attn_span`, except that a draft model's
    /// query, at the last token's position, reads its target's keys through a bidirectional
    /// window, |q − k| ≤ w, turned to look back: one key more than the target's own window.
    pub fn read_span(&self, b: u64) -> Option<AttnSpan> {
        match (self.attn_span(b), self.draft) {
            (Some(AttnSpan::Sliding(w)), Some(_)) => Some(AttnSpan::Sliding(w + 1)),
            (span, _) => span,
        }
    }

    /// The layers that run softmax attention: as their mixer, or in a shared block (Zamba2).
    pub fn attending_layers(&self) -> LayerSet {
        let own = self.layers_where(|l| l.span().is_some());
        match &self.shared {
            Some(s) => own.union(&s.layers),
            None => own,
        }
    }

    /// How layers differ, one line per property that varies: attention span, RoPE, FFN kind
    /// (`FFN: dense in 0–2 · MoE in 3–60`). Empty when every layer is alike.
    pub fn plan_summary(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut describe = |what: &str, kinds: Vec<(String, LayerSet)>| {
            let kinds: Vec<_> = kinds.into_iter().filter(|(_, s)| !s.is_empty()).collect();
            if kinds.len() > 1 {
                let parts: Vec<String> = kinds.iter().map(|(k, s)| format!("{k} in {s}")).collect();
                out.push(format!("{what}: {}", parts.join(" · ")));
            }
        };
        let mut mixers: Vec<Mixer> = self.plan.iter().map(|l| l.mixer).collect();
        mixers.sort();
        mixers.dedup();
        if mixers.iter().all(|m| matches!(m, Mixer::Attention(_))) {
            describe(
                "attention",
                mixers
                    .iter()
                    .filter_map(|m| m.span_of())
                    .map(|k| (k.describe(), self.layers_where(|l| l.span() == Some(k))))
                    .collect(),
            );
        } else {
            describe(
                "mixer",
                mixers
                    .iter()
                    .map(|m| {
                        (
                            self.mixer_describe(*m),
                            self.layers_where(|l| l.mixer == *m),
                        )
                    })
                    .collect(),
            );
        }
        let variants = self.attn_variants();
        if variants.len() > 1 {
            let sizes = variants
                .iter()
                .any(|(a, _)| a.head_dim != variants[0].0.head_dim);
            describe(
                "heads",
                variants
                    .into_iter()
                    .map(|(a, set)| {
                        let mut what = format!("{}/{} (Q/KV)", a.heads, a.kv_heads);
                        if sizes {
                            what += &format!(" of {}", a.head_dim);
                        }
                        for (on, words) in [
                            (a.sinks, " with sinks"),
                            (a.v_from_k, ", keys as values"),
                            (
                                a.shares_kv && self.draft.is_none(),
                                ", K/V of an earlier layer",
                            ),
                            (a.shares_kv && self.draft.is_some(), ", K/V of the target's"),
                            (a.block_index.is_some(), " on the blocks an indexer picks"),
                            (
                                a.pool_index.is_some(),
                                " on the keys an indexer picks, rounded to NVFP4",
                            ),
                            (
                                a.mla.as_ref().is_some_and(|m| m.indexer.is_some()),
                                " on the keys an indexer picks",
                            ),
                        ] {
                            if on {
                                what += words;
                            }
                        }
                        (what, set)
                    })
                    .collect(),
            );
        }
        describe(
            "RoPE",
            vec![
                ("applied".into(), self.layers_where(|l| l.rope)),
                (
                    "none".into(),
                    self.layers_where(|l| !l.rope && l.span().is_some()),
                ),
            ],
        );
        let moe = match &self.moe {
            Some(m) => format!("MoE ({} experts, {} active)", m.experts, m.top_k),
            None => "MoE".into(),
        };
        describe(
            "FFN",
            vec![
                ("dense".into(), self.layers_where(|l| l.ffn == Ffn::Dense)),
                (
                    "dense with the MoE beside it".into(),
                    self.layers_where(|l| matches!(l.ffn, Ffn::Shortcut | Ffn::DenseAndMoe)),
                ),
                (moe, self.layers_where(|l| l.ffn == Ffn::Moe)),
                ("none".into(), self.layers_where(|l| l.ffn == Ffn::None)),
            ],
        );
        if let Some(ix) = self.attn.mla.as_ref().and_then(|m| m.indexer.as_ref()) {
            describe(
                "indexer",
                vec![
                    ("own".into(), ix.own.clone()),
                    (
                        "reused from the layer before".into(),
                        self.indexer_reusers(),
                    ),
                ],
            );
        }
        out
    }

    /// The query heads that share one K/V head (in the layers of `attn`).
    pub fn group_size(&self) -> u64 {
        self.attn.heads / self.attn.kv_heads.max(1)
    }

    /// The layer whose keys and values layer `b` attends over: `b` itself, or for a layer that
    /// shares them the last layer before it of the same span kind that projects its own.
    pub fn kv_source(&self, b: usize) -> usize {
        if !self.attn_at(b).shares_kv {
            return b;
        }
        if let Some(&s) = self.kv_from.get(b) {
            return s as usize;
        }
        let kind = self.plan[b].span().map(|s| std::mem::discriminant(&s));
        // A draft model's layers read their target's keys, which its drafter holds at its first
        // layer of each span kind.
        if self.draft.is_some() {
            return (0..=b)
                .find(|&s| self.plan[s].span().map(|s| std::mem::discriminant(&s)) == kind)
                .unwrap_or(b);
        }
        self.own_kv_before(b, kind)
            .expect("a loader that shares keys and values checks there is a layer to share")
    }

    /// The last layer before `b` of span kind `kind` (a discriminant of `AttnSpan`) that
    /// projects keys and values of its own: what a later layer of that kind shares, and what a
    /// draft model reads of its target (with `b` the target's layer count).
    pub fn own_kv_before(
        &self,
        b: usize,
        kind: Option<std::mem::Discriminant<AttnSpan>>,
    ) -> Option<usize> {
        (0..b).rev().find(|&s| {
            !self.attn_at(s).shares_kv
                && self.plan[s].span().map(|s| std::mem::discriminant(&s)) == kind
        })
    }

    /// The width of layer `b`'s dense MLP.
    /// Is layer `b`'s FFN norm gated (A.X-K2's MoE layers)?
    pub fn gated_ffn_norm(&self, b: usize) -> bool {
        self.gated_norm.is_some() && self.plan[b].moe()
    }

    /// The fraction of layer `b`'s MLP gate that activation sparsity drops, if any.
    pub fn sparsity_at(&self, b: usize) -> Option<f64> {
        self.sparsity
            .iter()
            .find(|(set, _)| set.contains(b as u64))
            .map(|(_, p)| *p)
    }

    pub fn mlp_width(&self, b: usize) -> u64 {
        self.mlp_widths
            .iter()
            .find(|(set, _)| set.contains(b as u64))
            .map_or(self.mlp.intermediate, |(_, w)| *w)
    }

    /// The attention of layer `b`.
    pub fn attn_at(&self, b: usize) -> &Attention {
        self.layer_attn
            .iter()
            .find(|(set, _)| set.contains(b as u64))
            .map_or(&self.attn, |(_, a)| a)
    }

    /// The attention of the first layer of a span of this kind (`attn` when there is none).
    pub fn attn_for(&self, span: AttnSpan) -> &Attention {
        let kind = std::mem::discriminant(&span);
        match self
            .plan
            .iter()
            .position(|l| l.span().map(|s| std::mem::discriminant(&s)) == Some(kind))
        {
            Some(b) => self.attn_at(b),
            None => &self.attn,
        }
    }

    /// Copies of the hidden state the residual stream holds: hyper-connections' or gated
    /// streams' n, else 1.
    pub fn streams(&self) -> u64 {
        match (self.hyper(), self.gated_streams()) {
            (Some(h), _) => h.streams,
            (None, Some(g)) => g.streams,
            (None, None) => 1,
        }
    }

    /// The layers of `attn` with DeepSeek sparse attention's indexer that reuse an earlier
    /// layer's choice of keys rather than run their own (GLM-5's shared layers): empty where
    /// each runs its own, or none has one. Layers with an attention of their own
    /// (`layer_attn`, dots.3 Note's sliding layers) have no indexer to reuse.
    pub fn indexer_reusers(&self) -> LayerSet {
        let own = self
            .attn
            .mla
            .as_ref()
            .and_then(|m| m.indexer.as_ref())
            .map(|ix| &ix.own);
        LayerSet::from_fn(self.layers, |b| {
            own.is_some_and(|own| !own.contains(b))
                && self.plan[b as usize].span().is_some()
                && !self.layer_attn.iter().any(|(set, _)| set.contains(b))
        })
    }

    /// Each distinct attention with the layers that use it, `attn` first: one entry unless
    /// some layers have their own (`layer_attn`); none without attention layers.
    pub fn attn_variants(&self) -> Vec<(&Attention, LayerSet)> {
        let others = LayerSet::from_fn(self.layers, |b| {
            self.plan[b as usize].span().is_some()
                && !self.layer_attn.iter().any(|(set, _)| set.contains(b))
        });
        std::iter::once((&self.attn, others))
            .chain(self.layer_attn.iter().map(|(set, a)| (a, set.clone())))
            .filter(|(_, set)| !set.is_empty())
            .collect()
    }
}

/// Φ⁻¹(p): the standard normal's quantile, the number of standard deviations above the mean
/// below which a fraction `p` of a Gaussian lies (Gemma 3n's activation sparsity cut-off).
pub fn normal_quantile(p: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    Normal::standard().inverse_cdf(p)
}

#[cfg(test)]
mod quantile_tests {
    /// The value torch's Normal(0, 1).icdf gives in float32 for Gemma 3n's 0.95: 1.6448536.
    #[test]
    fn the_normal_quantile_is_torchs() {
        let z = super::normal_quantile(0.95);
        assert!((z - 1.644_853_626_951_472_2).abs() < 1e-12, "{z}");
        assert_eq!(z as f32, 1.644_853_6_f32);
    }
}

#[cfg(test)]
mod query_scale_tests {
    use super::{QueryScale, ScaleForm};

    fn scale(form: ScaleForm) -> QueryScale {
        QueryScale {
            form,
            beta: 0.1,
            length: 2048,
            shift: 1,
            nope_only: true,
        }
    }

    /// Beam's exp(0.1 · log1p((p + 1) / 2048)): above 1 from the first position, 2^0.1 once
    /// p + 1 reaches 2048.
    #[test]
    fn the_power_form_grows_from_the_first_position() {
        let q = scale(ScaleForm::Power);
        assert_eq!(q.at(2047), 2f64.powf(0.1));
        assert_eq!(q.at(0), (1.0 + 1.0 / 2048.0f64).powf(0.1));
        assert!(q.at(0) > 1.0 && q.at(1) > q.at(0));
    }

    /// Llama 4's 1 + β · ln(1 + ⌊(p + shift) / length⌋): flat below length − shift, then a step.
    #[test]
    fn the_stepped_form_is_flat_until_its_length() {
        let q = scale(ScaleForm::Stepped);
        assert_eq!(q.at(0), 1.0);
        assert_eq!(q.at(2046), 1.0);
        assert_eq!(q.at(2047), 1.0 + 0.1 * 2f64.ln());
    }
}

#[cfg(test)]
mod bucket_tests {
    use super::Buckets;

    /// Every distance from −5000 to 5000 falls in the bucket transformers' `_position_bucket`
    /// gives it (tests/fixtures/cpmant-buckets.json, made by scripts/make_fixtures.py), under
    /// CPM-Ant's 512 buckets up to 2048 and bucket counts and reaches of the toy configs.
    #[test]
    fn buckets_are_transformers() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/cpmant-buckets.json"
        );
        let fixture: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let cases = fixture["cases"].as_array().unwrap();
        assert!(cases.len() >= 5);
        for case in cases {
            let b = Buckets {
                buckets: case["buckets"].as_u64().unwrap(),
                max_distance: case["max_distance"].as_u64().unwrap(),
            };
            let runs: Vec<(i64, u64)> = case["runs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| (r[0].as_i64().unwrap(), r[1].as_u64().unwrap()))
                .collect();
            for rel in -5000..=5000i64 {
                let want = runs.iter().rev().find(|(from, _)| *from <= rel).unwrap().1;
                assert_eq!(b.bucket(rel), want, "{b:?}, j − i = {rel}");
            }
        }
    }
}

#[cfg(test)]
mod patching_tests {
    use super::Patching;

    proptest::proptest! {
        /// Entropy patches cover the bytes once, in order, starting at bytes 0 and 1 and after
        /// each byte above the threshold; cut to at most `max` bytes they cover the same bytes
        /// with no empty patch left.
        #[test]
        fn patches_cover_the_bytes(
            entropies in proptest::collection::vec(0.0f32..2.0, 1..40),
            max in proptest::option::of(1u64..5),
        ) {
            let t = entropies.len();
            let whole = Patching::Entropy(1.0).lengths(t, &entropies, None);
            proptest::prop_assert_eq!(whole.iter().sum::<u64>(), t as u64);
            proptest::prop_assert_eq!(whole[0], 1);
            let starts = (1..t).filter(|&i| entropies[i] > 1.0).count();
            proptest::prop_assert_eq!(whole.len(), 2 + starts);
            let cut = Patching::Entropy(1.0).lengths(t, &entropies, max);
            proptest::prop_assert_eq!(cut.iter().sum::<u64>(), t as u64);
            if let Some(m) = max {
                proptest::prop_assert!(cut.iter().all(|&l| (1..=m).contains(&l)));
            }
        }
    }

    /// Without a patcher every byte is a patch, and one empty patch follows.
    #[test]
    fn bytes_patch_one_byte_each() {
        assert_eq!(
            Patching::Bytes { extra: 1 }.lengths(3, &[], None),
            [1, 1, 1, 1]
        );
        assert_eq!(
            Patching::Bytes { extra: 1 }.lengths(3, &[], Some(2)),
            [1, 1, 1, 1]
        );
    }
}
