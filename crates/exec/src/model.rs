//! The forward pass, as the Spec describes the model and with the Graph's checkpoint names: one
//! decoder layer after another over a KV cache. Each computation follows the model's
//! `transformers` definition (where eps sits, (1 + w) norms, softcaps, sinks, routing); the parity
//! tests compare logits with transformers on tiny random models of every family it runs.

mod altup;
mod attention;
mod attn_res;
mod blt;
mod cache;
mod capture;
mod cca;
mod delta;
mod ffn;
mod gated;
mod hierarchy;
mod hyper;
pub(crate) mod image;
mod indexer;
mod kv_conv;
mod lightning;
mod looped;
mod mla;
mod mlstm;
mod moa;
mod ngram;
mod pool_index;
mod qsa;
mod rel_logits;
mod rglru;
mod rwkv;
mod ssm;
use crate::linear::with_values;
use crate::rope;
use crate::ssm::SsmState;
use crate::weights::Weights;
use anatomy_checkpoint::Format;
use anatomy_core::graph::Point;
use anatomy_core::naming::{names, Role};
use anatomy_core::spec::{
    Act, AttnRes, AttnSpan, Block, DeltaStore, ExpertStorage, Ffn, Hierarchy, Indexer, Looped,
    Mixer, Moa, Norm, NormKind, NormPlace, Position, QkNorm, Qkv, QueryScale, RelLogits, Residual,
    Scoring, Spec, SsmGate, Stream,
};
use anatomy_core::Error;
use attention::{carried, unit};
pub use cache::Cache;
use cache::NgramState;
use candle_core::{DType, Device, IndexOp, Tensor, D};
pub use capture::{Captured, Summary};
use ffn::{by_expert, router_score, softmax_of, top_indices};
pub use image::Pixels;

type R<T> = candle_core::Result<T>;

// DeepSeek-V4's attention and routing by token id, methods of `Model` kept apart.
mod v4;

// Gemma 4's assistants: drafting from a target's state.
mod draft;
pub use draft::Drafted;

/// The cache slots of Inkling's residual convolutions: K, V, the attention's output, the
/// MLP's.
const CONV_K: usize = 0;
const CONV_V: usize = 1;
const CONV_ATTN: usize = 2;
const CONV_FFN: usize = 3;

pub struct Model {
    pub spec: Spec,
    weights: Weights,
    /// When set, every activation the forward pass computes is summarized here.
    capture: std::cell::RefCell<Option<Vec<Captured>>>,
    /// The router state ZAYA's layers carry from one to the next within a pass.
    router_state: std::cell::RefCell<Option<Tensor>>,
    /// The position-bias table ([rows, heads]) and its row for each query of the pass and key
    /// ([t, total]), read and chosen once a pass for every layer (`Position::Buckets`).
    pair_bias: std::cell::RefCell<Option<(Vec<f32>, Vec<u32>)>>,
    /// The block each query of the pass sees both ways, where some do (an image's tokens in
    /// Gemma 3, PaliGemma's prompt): `Rule::reach`.
    reach: std::cell::RefCell<Option<attention::Blocks>>,
    /// The pass's 3-D rotary positions (time, row, column) of each token, where the model's
    /// image takes them (M-RoPE, Qwen2-VL): `image::positions`.
    positions: std::cell::RefCell<Option<Vec<[i64; 3]>>>,
    /// The pass's image's deep-stack features (Qwen3-VL), [tokens, hidden] each: the k-th added
    /// after layer k at the image's token positions (`image_slots`).
    deepstack: std::cell::RefCell<Option<Vec<Tensor>>>,
    image_slots: std::cell::RefCell<Vec<u32>>,
    /// The relative logits of the layer running ([heads, t, extent] and the extent), made by
    /// its attention for its attend (Inkling).
    rel_bias: std::cell::RefCell<Option<(Vec<f32>, usize)>>,
    /// The sink logits of the layer running, [heads, t], made by its attention (Inkling 2).
    token_sinks: std::cell::RefCell<Option<Vec<f32>>>,
    /// The last pass's final normed hidden states, [t, hidden]: what a draft model reads of its
    /// target.
    final_hidden: std::cell::RefCell<Option<Tensor>>,
    /// BLT's byte-level stacks, around this model's latent transformer.
    stacks: Option<Box<blt::Stacks>>,
}

/// Activations of at most this many values are captured whole.
pub const SMALL: usize = 4096;

/// The chunk length of the chunked forms over a prompt: Mamba2's scan, the delta rule (with a
/// decay per head or per key channel), lightning attention, the mLSTM (transformers' defaults
/// are 256, 64, 256 and 64; any length gives the same sums).
const SSD_CHUNK: usize = 64;

/// A sublayer's post gates [t, n], and with Sinkhorn (DeepSeek-V4) the streams' mix [t, n, n].
type PostGates = (Tensor, Option<Tensor>);

/// Hyper-connections' tensors: each mix's logit weights, biases and scales.
const HC_ATTN: (Role, Role, Role) = (Role::HcAttnFn, Role::HcAttnBase, Role::HcAttnScale);
const HC_FFN: (Role, Role, Role) = (Role::HcFfnFn, Role::HcFfnBase, Role::HcFfnScale);
const HC_HEAD: (Role, Role, Role) = (Role::HcHeadFn, Role::HcHeadBase, Role::HcHeadScale);
/// A gated-stream mix's roles: its norm, input gate down and up, injection weights.
type GsRoles = (Role, Role, Role, Option<Role>);
const GS_ATTN: GsRoles = (
    Role::GsAttnNorm,
    Role::GsAttnDown,
    Role::GsAttnUp,
    Some(Role::GsAttnInject),
);
const GS_FFN: GsRoles = (
    Role::GsFfnNorm,
    Role::GsFfnDown,
    Role::GsFfnUp,
    Some(Role::GsFfnInject),
);
const GS_HEAD: GsRoles = (Role::GsHeadNorm, Role::GsHeadDown, Role::GsHeadUp, None);

/// A failure inside the forward pass: candle's or anatomy's, so that one `?` takes either;
/// it becomes anatomy's `Error` at the public boundary.
#[derive(Debug)]
enum Fault {
    Candle(candle_core::Error),
    Anatomy(Error),
}

impl From<candle_core::Error> for Fault {
    fn from(e: candle_core::Error) -> Self {
        Fault::Candle(e)
    }
}

impl From<Error> for Fault {
    fn from(e: Error) -> Self {
        Fault::Anatomy(e)
    }
}

impl From<Fault> for Error {
    fn from(f: Fault) -> Self {
        match f {
            Fault::Candle(e) => Error::file("executor", e.to_string()),
            Fault::Anatomy(e) => e,
        }
    }
}

type Res<T> = std::result::Result<T, Fault>;

impl Model {
    /// How its weights are held, in words (`Weights::held`).
    pub fn held(&self) -> String {
        self.weights.held()
    }

    /// A model the executor can run: every family; from a GGUF, the mixtures of experts whose
    /// gated experts the checkpoint names one by one (Mixtral, Qwen3-MoE), which a GGUF stacks.
    pub fn new(spec: Spec, mut weights: Weights) -> Result<Model, Error> {
        let stacks = match spec.bytes() {
            Some(bl) => Some(Box::new(
                blt::Stacks::new(bl, &mut weights).map_err(Error::from)?,
            )),
            None => None,
        };
        if let Some(m) = spec.moe.as_ref().filter(|_| weights.format == Format::Gguf) {
            if m.storage != anatomy_core::spec::ExpertStorage::PerExpert || !spec.mlp.gated {
                return Err(Error::new(
                    &spec.name,
                    "",
                    "this mixture-of-experts layout is not executed from GGUF files yet (Mixtral's and Qwen3-MoE's are)",
                ));
            }
        }
        let mut model = Model {
            spec,
            weights,
            capture: std::cell::RefCell::new(None),
            router_state: std::cell::RefCell::new(None),
            pair_bias: std::cell::RefCell::new(None),
            reach: std::cell::RefCell::new(None),
            positions: std::cell::RefCell::new(None),
            deepstack: std::cell::RefCell::new(None),
            image_slots: std::cell::RefCell::new(Vec::new()),
            rel_bias: std::cell::RefCell::new(None),
            token_sinks: std::cell::RefCell::new(None),
            final_hidden: std::cell::RefCell::new(None),
            stacks,
        };
        let read = model.packable();
        // GPT-2's Conv1D weights, stored [in, out], are not among them: a stored one of those
        // is dequantized.
        // The embedding too: its rows are dequantized as they are looked up.
        let embed = model.name(Role::Embed, false, None, None);
        // Gemma 4's per-layer embeddings are read row by row too.
        let per_layer = model.name(Role::PleEmbed, false, None, None);
        let rows = |name: &str| {
            name == embed || (model.spec.per_layer_input.is_some() && name == per_layer)
        };
        model
            .weights
            .keep_quantized(|name| read.contains(name) || rows(name))?;
        model.weights.pack(|name| {
            read.contains(name) || (model.spec.per_layer_input.is_some() && name == per_layer)
        })?;
        Ok(model)
    }

    /// The names of the weights `linear` reads stored [out, in], to be packed for its kernel:
    /// all of them, the LM head included (the embedding when they are tied), except GPT-2's
    /// Conv1D weights, stored [in, out], which go through candle's matmul.
    fn packable(&self) -> std::collections::HashSet<String> {
        use Role::*;
        let head = if self.spec.tied { Embed } else { LmHead };
        let mut read = std::collections::HashSet::from([self.name(head, false, None, None)]);
        if self.spec.per_layer_input.is_some() {
            read.insert(self.name(PleProj, false, None, None));
        }
        if self.spec.layout.stores_in_out() {
            return read;
        }
        let experts = match &self.spec.moe {
            Some(m) if !m.storage.grouped() => m.experts as usize,
            _ => 0,
        };
        for b in 0..self.spec.layers as usize {
            for role in [
                Q,
                K,
                V,
                Qkv,
                O,
                QA,
                QB,
                KvA,
                KvB,
                Gate,
                Up,
                GateUp,
                Down,
                Router,
                SharedGate,
                SharedUp,
                SharedDown,
                SharedExpertGate,
                Kv,
                AttnRouter,
                // The recurrent, linear-attention and convolution mixers' projections, the
                // sparse-attention indexer's and the attention output gate.
                SsmIn,
                SsmOut,
                SsmZ,
                SsmX,
                SsmDt,
                SsmQ,
                SsmK,
                SsmV,
                SsmAlpha,
                SsmBeta,
                TmOutput,
                IndexK,
                IndexWeights,
                AttnGate,
                PleGate,
                PleUp,
            ] {
                // (Ergo's router and shared expert, stored [in, out], are read as they are.)
                if !anatomy_core::naming::stored_in_out(self.spec.layout, role) {
                    read.insert(self.name(role, false, Some(b), None));
                }
            }
            // Zamba2's shared blocks: each layer's projection of the block's output, each
            // visit's adapters.
            if self.spec.shared.is_some() {
                for role in [
                    SharedLinear,
                    QAdapterA,
                    QAdapterB,
                    KAdapterA,
                    KAdapterB,
                    VAdapterA,
                    VAdapterB,
                    GateUpAdapterA,
                    GateUpAdapterB,
                ] {
                    read.insert(self.name(role, false, Some(b), None));
                }
            }
            for e in 0..experts {
                for role in [ExpertGate, ExpertUp, ExpertDown] {
                    read.insert(self.name(role, false, Some(b), Some(e)));
                }
            }
            // Stacked experts held apart as stored (MXFP4).
            if let Some(m) = self.spec.moe.as_ref().filter(|m| m.storage.grouped()) {
                for e in 0..m.experts as usize {
                    for role in [ExpertGateUp, ExpertDown] {
                        read.insert(format!("{}[{e}]", self.name(role, false, Some(b), None)));
                    }
                }
            }
        }
        read
    }

    fn name(&self, role: Role, bias: bool, b: Option<usize>, e: Option<usize>) -> String {
        let (hf, gguf) = names(self.spec.layout, role, bias);
        let t = match self.weights.format {
            Format::Gguf => gguf,
            Format::Safetensors => self.spec.hf_wrap.apply(&hf),
        };
        let name = self
            .spec
            .instantiate(&t, b.map(|b| b as u64), e.map(|e| e as u64));
        match e {
            // A GGUF stacks a layer's experts in one tensor, split at load (`Weights::gguf`).
            Some(e) if self.weights.format == Format::Gguf && !t.contains("{e}") => {
                format!("{name}[{e}]")
            }
            _ => name,
        }
    }

    fn w(&self, role: Role, b: Option<usize>) -> Res<&Tensor> {
        Ok(self.weights.get(&self.name(role, false, b, None))?)
    }

    fn bias(&self, role: Role, b: Option<usize>) -> Res<&Tensor> {
        Ok(self.weights.get(&self.name(role, true, b, None))?)
    }

    /// `x · Wᵀ (+ b)` for the weight `name`, stored [out, in] (packed, see `Model::new`), or
    /// `x · W` for GPT-2's Conv1D weights, stored [in, out].
    fn linear(&self, x: &Tensor, name: &str, b: Option<&Tensor>) -> Res<Tensor> {
        if let Some(q) = self.weights.quantized.get(name) {
            let y = q.times(x)?;
            return Ok(match b {
                Some(b) => y.broadcast_add(b)?,
                None => y,
            });
        }
        let y = match self.weights.packed.get(name) {
            Some(p) => p.times(x),
            None if self.spec.layout.stores_in_out() => x.matmul(self.weights.get(name)?),
            None => self.weights.get(name)?.t().and_then(|w| x.matmul(&w)),
        }?;
        match b {
            Some(b) => Ok(y.broadcast_add(b)?),
            None => Ok(y),
        }
    }

    fn proj(&self, x: &Tensor, role: Role, b: usize, bias: bool) -> Res<Tensor> {
        let bias = if bias {
            Some(self.bias(role, Some(b))?)
        } else {
            None
        };
        // A weight this layout alone stores [in, out] (Ergo's router and shared expert).
        if !self.spec.layout.stores_in_out()
            && anatomy_core::naming::stored_in_out(self.spec.layout, role)
        {
            let y = x.matmul(self.w(role, Some(b))?)?;
            return Ok(match bias {
                Some(b) => y.broadcast_add(b)?,
                None => y,
            });
        }
        self.linear(x, &self.name(role, false, Some(b), None), bias)
    }

    /// A projection of Zamba2's shared block, plus this visit's low-rank adapter where it has
    /// one: W·x + B·(A·x). Any other projection as it is.
    fn adapted(&self, x: &Tensor, role: Role, b: usize, bias: bool) -> Res<Tensor> {
        let y = self.proj(x, role, b, bias)?;
        let Some(s) = self
            .spec
            .shared
            .as_ref()
            .filter(|s| s.layers.contains(b as u64))
        else {
            return Ok(y);
        };
        let (down, up) = match role {
            Role::Q if s.attn_adapters => (Role::QAdapterA, Role::QAdapterB),
            Role::K if s.attn_adapters => (Role::KAdapterA, Role::KAdapterB),
            Role::V if s.attn_adapters => (Role::VAdapterA, Role::VAdapterB),
            Role::GateUp => (Role::GateUpAdapterA, Role::GateUpAdapterB),
            _ => return Ok(y),
        };
        let low = self.proj(x, down, b, false)?;
        Ok((y + self.proj(&low, up, b, false)?)?)
    }

    /// Zamba2's shared block in layer b: attention and the MLP over [stream, embeddings], each
    /// after its norm, no residual; then this layer's own projection of the result.
    fn shared_block(&self, x: &Tensor, x0: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        let xs = Tensor::cat(&[x, x0], 1)?;
        let h = self.norm(&xs, Role::SharedNorm, Some(b))?;
        self.keep(Some(b), Point::SharedNorm, &h);
        let a = self.attention(&h, b, cache)?;
        self.keep(Some(b), Point::SharedAttn, &a);
        let h = self.norm(&a, Role::SharedFfnNorm, Some(b))?;
        let m = self.mlp(&h, b)?;
        self.keep(Some(b), Point::SharedMlp, &m);
        let out = self.proj(&m, Role::SharedLinear, b, false)?;
        self.keep(Some(b), Point::SharedOut, &out);
        Ok(out)
    }

    fn norm(&self, x: &Tensor, role: Role, b: Option<usize>) -> Res<Tensor> {
        // The final norm may be of a kind of its own (xLSTM's, without the blocks' shift).
        let n = if role == Role::FinalNorm {
            self.spec.final_norm()
        } else {
            self.spec.norm.clone()
        };
        let w = if n.kind.has_weight() {
            Some(self.w(role, b)?)
        } else {
            None
        };
        let bias = if n.kind.has_bias() {
            Some(self.bias(role, b)?)
        } else {
            None
        };
        Ok(norm(x, w, bias, &n)?)
    }

    /// A per-head QK norm's weights, [heads, head_dim]: stored so, or one tensor per head
    /// (StableLM's `q_layernorm.norms.{e}`) stacked here.
    fn head_weights(&self, role: Role, b: usize, heads: usize) -> Res<Tensor> {
        if !anatomy_core::naming::qk_norm_per_head(self.spec.layout) {
            return Ok(self.w(role, Some(b))?.clone());
        }
        let rows = (0..heads)
            .map(|e| {
                Ok(self
                    .weights
                    .get(&self.name(role, false, Some(b), Some(e)))?
                    .clone())
            })
            .collect::<Res<Vec<Tensor>>>()?;
        Ok(Tensor::stack(&rows, 0)?)
    }

    /// An MLA latent's RMS norm, at the ε its classes build it with whatever the config's.
    fn latent_norm(&self, x: &Tensor, role: Role, b: usize) -> Res<Tensor> {
        let m = self.spec.attn_at(b).mla.as_ref().expect("MLA");
        let n = Norm {
            eps: m.latent_eps,
            ..self.spec.norm.clone()
        };
        Ok(norm(x, Some(self.w(role, Some(b))?), None, &n)?)
    }

    /// Logits [T, vocab] for `ids`, continuing from `cache`.
    pub fn forward(&self, ids: &[u32], cache: &mut Cache) -> Result<Tensor, Error> {
        Ok(self.run(ids, None, cache, false)?)
    }

    /// Logits [T, vocab] for `ids` holding an image's placeholder tokens, each replaced by a
    /// feature of `pixels` ([channels, height, width], processed as the model's processor does).
    pub fn forward_image(
        &self,
        ids: &[u32],
        pixels: &Pixels,
        cache: &mut Cache,
    ) -> Result<Tensor, Error> {
        Ok(self.run(ids, Some(pixels), cache, false)?)
    }

    /// The logits of the last of `ids` alone, [1, vocab]: all that decoding needs, without the
    /// LM head's product for the other positions of a prompt.
    pub fn forward_last(&self, ids: &[u32], cache: &mut Cache) -> Result<Tensor, Error> {
        Ok(self.run(ids, None, cache, true)?)
    }

    /// `forward_last`, with an image's features in place of the placeholders (`forward_image`)
    /// where `pixels` is given.
    pub fn forward_last_with(
        &self,
        ids: &[u32],
        pixels: Option<&Pixels>,
        cache: &mut Cache,
    ) -> Result<Tensor, Error> {
        Ok(self.run(ids, pixels, cache, true)?)
    }

    /// Layer `b` alone on the hidden states `x` ([t, hidden]) at the cache's position, reading
    /// and updating its share of `cache`: what a benchmark times to measure one kind of layer (a
    /// hybrid's recurrent layers apart from its attention). Layers that read another's output
    /// (a shared block, a shortcut) are run without it.
    pub fn layer_step(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Result<Tensor, Error> {
        let y = self.layer(x, b, cache, &mut None, None)?;
        Ok(self.layer_tail(y, b, None)?)
    }

    /// The forward pass, refusing to return logits that are not all finite: it runs the same
    /// step again with every activation captured and names the first step whose output was not.
    fn run(
        &self,
        ids: &[u32],
        image: Option<&Pixels>,
        cache: &mut Cache,
        last: bool,
    ) -> Res<Tensor> {
        if self.spec.draft.is_some() {
            return Err(Error::new(
                &self.spec.name,
                "model_type",
                "is a draft model (a Gemma 4 assistant): it reads its target's state, not token ids alone; run it with --target TARGET",
            )
            .into());
        }
        let before = cache.mark();
        let logits = self.run_steps(ids, image, cache, last)?;
        let values: Vec<f32> = logits.flatten_all().and_then(|l| l.to_vec1())?;
        if values.iter().all(|x| x.is_finite()) {
            return Ok(logits);
        }
        let captured = if self.capturing() {
            self.capture.borrow().clone().unwrap_or_default()
        } else {
            *self.capture.borrow_mut() = Some(Vec::new());
            let _ = self.run_steps(ids, image, &mut cache.rewound(&before), last);
            self.capture.borrow_mut().take().unwrap_or_default()
        };
        Err(crate::values::non_finite(&self.spec, &captured).into())
    }

    fn run_steps(
        &self,
        ids: &[u32],
        image: Option<&Pixels>,
        cache: &mut Cache,
        last: bool,
    ) -> Res<Tensor> {
        let spec = &self.spec;
        if let (Some(bl), Some(s)) = (spec.bytes(), self.stacks.as_deref()) {
            return self.blt(bl, s, ids, cache, last);
        }
        // CPM-Ant takes id 0 for padding: a segment of its own, and a count of the other ids that
        // masks positions out of attention, which is not a forward pass over these ids.
        if spec.prompt.is_some() && ids.contains(&0) {
            return Err(Error::new(
                &spec.name,
                "ids",
                "include 0, which CPM-Ant reads as padding (it changes the token's segment and masks positions out of attention); anatomy runs CPM-Ant on ids from 1",
            )
            .into());
        }
        // DeepSeek-V4's first layers route by token id.
        cache.ids = ids.to_vec();
        // CPM-Ant: the first pass puts the learned prompt before the text.
        let prompt = match spec.prompt {
            Some(p) if cache.pos == 0 => p.length as usize,
            _ => 0,
        };
        let framed: Vec<u32>;
        let ids = match spec.prompt {
            Some(p) if prompt > 0 => {
                framed = (0..p.length)
                    .map(|i| p.row(spec.out_vocab(), i) as u32)
                    .chain(ids.iter().copied())
                    .collect();
                &framed
            }
            _ => ids,
        };
        let mut t = ids.len();
        let ids_t = Tensor::new(ids, &Device::Cpu)?;
        let mut x = self.rows(Role::Embed, ids, &ids_t)?;
        // An image's features go in the placeholders' places, or before the prompt (GIT's).
        let (placed, before) = match spec
            .image
            .as_ref()
            .is_none_or(|i| i.placeholders.in_prompt())
        {
            true => (image, None),
            false => (None, image),
        };
        // The features replace the placeholders' embeddings as the embedding layer leaves them:
        // after Gemma's scaling by √hidden, which is the layer's own.
        let scaled = spec.embedding.scale_by_sqrt_hidden;
        *self.deepstack.borrow_mut() = None;
        if let Some(pixels) = placed.filter(|_| !scaled) {
            x = self.with_image(x, ids, pixels)?;
        }
        // Tokens that see each other both ways: an image's (Gemma 3), or the first pass's
        // (PaliGemma's prompt); each query's block.
        *self.reach.borrow_mut() = if spec.prefix_lm && cache.pos == 0 {
            Some(attention::Blocks {
                blocks: vec![(0, t - 1); t],
                within_span: false,
            })
        } else {
            (placed.and(spec.image.as_ref()))
                .filter(|i| i.encoder.both_ways())
                .map(|i| attention::Blocks {
                    blocks: image::reach(ids, i.token, cache.pos),
                    within_span: true,
                })
        };
        // M-RoPE: each token's 3-D position, an image's laid out over its grid.
        *self.positions.borrow_mut() =
            match spec.image.as_ref().filter(|i| i.encoder.mrope().is_some()) {
                Some(i) => {
                    let grid = (image.zip(i.encoder.qwen()))
                        .map(|(p, q)| image::merged_grid(q, &p.values))
                        .transpose()?;
                    let start = cache.pos as i64 + cache.pos_delta;
                    let (positions, delta) = image::positions(ids, i.token, grid, start);
                    cache.pos_delta += delta;
                    Some(positions)
                }
                None => None,
            };
        self.keep(None, Point::EmbedTokens, &x);
        if spec.embedding.projected.is_some() {
            let name = self.name(Role::EmbedProjIn, false, None, None);
            x = self.linear(&x, &name, None)?;
            self.keep(None, Point::ProjectIn, &x);
        }
        if let Some(p) = spec.prompt {
            let segments: Vec<u32> = (cache.pos..cache.pos + t)
                .map(|q| p.segment(q as u64) as u32)
                .collect();
            let seg = self
                .w(Role::SegmentEmbed, None)?
                .embedding(&Tensor::new(segments, &Device::Cpu)?)?;
            x = (x + seg)?;
            self.keep(None, Point::Segment, &x);
        }
        if let Position::Buckets(b) = spec.position {
            let total = cache.pos + t;
            let rows: Vec<u32> = (cache.pos..total)
                .flat_map(|q| (0..total).map(move |k| spec.bias_row(b, q as u64, k as u64) as u32))
                .collect();
            let table = self.w(Role::PositionBias, None)?.to_dtype(DType::F32)?;
            if self.capturing() {
                // The bias itself, [heads, t, total], for the op view.
                let idx = Tensor::new(rows.as_slice(), &Device::Cpu)?;
                let bias = table
                    .index_select(&idx, 0)?
                    .reshape((t, total, spec.attn.heads as usize))?
                    .permute((2, 0, 1))?;
                self.keep(None, Point::PositionBias, &bias);
            }
            *self.pair_bias.borrow_mut() = Some((table.flatten_all()?.to_vec1()?, rows));
        }
        if spec.embedding.scale_by_sqrt_hidden {
            x = x.affine((spec.hidden as f64).sqrt(), 0.0)?;
            self.keep(None, Point::EmbedScale, &x);
        }
        if let Some(pixels) = placed.filter(|_| scaled) {
            x = self.with_image(x, ids, pixels)?;
        }
        let per_layer = match spec.per_layer_input {
            Some(p) => Some(self.per_layer_inputs(&x, ids, &ids_t, p)?),
            None => None,
        };
        if spec.embedding.multiplier != 1.0 {
            x = x.affine(spec.embedding.multiplier, 0.0)?;
        }
        if spec.embedding.affine {
            x = x
                .broadcast_add(self.w(Role::EmbedShift, None)?)?
                .broadcast_mul(self.w(Role::EmbedScale, None)?)?;
            self.keep(None, Point::Embed, &x);
        }
        // ZAYA's router state starts afresh with each pass.
        *self.router_state.borrow_mut() = None;
        // Positions join after the scaling, which is of the token embeddings alone (BioGPT).
        // The text's positions (GIT's image before it takes none).
        let first = cache.pos.saturating_add_signed(cache.pos_delta as isize);
        if spec.embedding.learned_positions.is_some() {
            let offset = spec.embedding.position_offset as usize;
            let pos: Vec<u32> = (first + offset..first + t + offset)
                .map(|p| p as u32)
                .collect();
            let pe = self
                .w(Role::PosEmbed, None)?
                .embedding(&Tensor::new(pos.as_slice(), &Device::Cpu)?)?;
            x = (x + pe)?;
        }
        if let Position::Sinusoidal(table) = spec.position {
            let d = spec.hidden;
            let rows: Vec<f32> = (first..first + t)
                .flat_map(|p| {
                    let row = (p as u64) + spec.embedding.position_offset;
                    anatomy_core::spec::sinusoid_row(row, d, table)
                })
                .map(|v| v as f32)
                .collect();
            x = (x + Tensor::from_vec(rows, (t, d as usize), &Device::Cpu)?)?;
        }
        if spec.embedding.norm {
            x = self.norm(&x, Role::EmbedNorm, None)?;
        }
        // GIT's image: its features before the text's normed embeddings, seeing each other both
        // ways and no text; their outputs are dropped as a prompt's.
        let mut prompt = prompt;
        if let Some(pixels) = before {
            let features = self.image_features(ids, pixels)?;
            let n = features.dim(0)?;
            x = Tensor::cat(&[&features.to_dtype(x.dtype())?, &x], 0)?;
            let at = cache.pos;
            *self.reach.borrow_mut() = Some(attention::Blocks {
                blocks: (at..at + n + t)
                    .map(|p| if p < at + n { (at, at + n - 1) } else { (p, p) })
                    .collect(),
                within_span: false,
            });
            cache.pos_delta -= n as i64;
            (t, prompt) = (t + n, prompt + n);
        }
        self.keep(None, Point::Embed, &x);
        // Into the stream's form: hyper-connections and gated streams start every stream as the
        // embedding, [t, n · hidden]; AltUp its predictions.
        x = match &spec.stream {
            Stream::Hyper(_) | Stream::Gated(_) => {
                Tensor::cat(&vec![&x; spec.streams() as usize], 1)?
            }
            Stream::AltUp(_) => self.altup_streams(&x)?,
            Stream::Plain
            | Stream::Hierarchy(_)
            | Stream::Bytes(_)
            | Stream::Looped(_)
            | Stream::AttnRes(_) => x,
        };
        // Through the layers, in the order the stream's form runs them.
        x = match &spec.stream {
            Stream::Hierarchy(h) => self.hierarchy(&x, *h, cache)?,
            Stream::Looped(l) => self.looped(&x, *l, cache)?,
            Stream::AttnRes(r) => self.attn_res_layers(&x, *r, cache)?,
            Stream::AltUp(_) => {
                for b in 0..spec.layers as usize {
                    x = self.altup_layer(&x, b, cache, per_layer.as_ref())?;
                }
                x
            }
            Stream::Plain | Stream::Hyper(_) | Stream::Gated(_) | Stream::Bytes(_) => {
                // LongCat-Flash's shortcut: the experts' output of one layer, added at the next
                // one's end.
                let mut shortcut = None;
                // Zamba2's shared blocks read the embeddings beside the stream.
                let x0 = x.clone();
                for b in 0..spec.layers as usize {
                    let feed = match &spec.shared {
                        Some(s) if s.layers.contains(b as u64) => {
                            Some(self.shared_block(&x, &x0, b, cache)?)
                        }
                        _ => None,
                    };
                    x = self.layer(&x, b, cache, &mut shortcut, feed)?;
                    x = self.layer_tail(x, b, per_layer.as_ref())?;
                    x = self.deepstack(x, b)?;
                }
                x
            }
        };
        cache.pos += t;
        // The prompt's outputs are dropped; the text's go on to the head.
        let t = t - prompt;
        if prompt > 0 {
            x = x.narrow(0, prompt, t)?;
        }
        if last && t > 1 {
            x = x.narrow(0, t - 1, 1)?;
        }
        // Out of the stream's form, into one hidden state for the head.
        x = match &spec.stream {
            Stream::AltUp(_) => self.altup_unembed(&x)?,
            Stream::Hyper(_) => {
                let (h, _) = self.stream_mix(&x, HC_HEAD, None)?;
                self.keep(None, Point::HcHead, &h);
                h
            }
            Stream::Gated(_) => {
                let (h, _) = self.gated_mix(&x, GS_HEAD, None)?;
                self.keep(None, Point::HcHead, &h);
                h
            }
            Stream::Plain
            | Stream::Hierarchy(_)
            | Stream::Bytes(_)
            | Stream::Looped(_)
            | Stream::AttnRes(_) => x,
        };
        let gated = matches!(spec.stream, Stream::Gated(_));
        // A post-residual model ends on its last layer's norm; gated streams on their mix.
        let z = if spec.norm.place.on_stream() || gated {
            x
        } else {
            self.norm(&x, Role::FinalNorm, None)?
        };
        self.keep(None, Point::FinalNorm, &z);
        *self.final_hidden.borrow_mut() = Some(z.clone());
        let z = match spec.head_transform {
            Some(t) => {
                let bias = if t.bias {
                    Some(self.bias(Role::HeadDense, None)?)
                } else {
                    None
                };
                let name = self.name(Role::HeadDense, false, None, None);
                let h = apply_act(t.act, &self.linear(&z, &name, bias)?)?;
                let h = self.norm(&h, Role::HeadNorm, None)?;
                self.keep(None, Point::HeadTransform, &h);
                h
            }
            None => z,
        };
        let z = if spec.embedding.projected.is_some() {
            let name = self.name(Role::EmbedProjOut, false, None, None);
            let p = self.linear(&z, &name, None)?;
            self.keep(None, Point::ProjectOut, &p);
            p
        } else {
            z
        };
        let head = if spec.tied {
            self.name(Role::Embed, false, None, None)
        } else {
            self.name(Role::LmHead, false, None, None)
        };
        let head_bias = if spec.head_bias {
            Some(self.bias(Role::LmHead, None)?)
        } else {
            None
        };
        let mut logits = self.linear(&z, &head, head_bias)?;
        if let Some(g) = spec.ngpt {
            let s = self
                .w(Role::NgptLogitScale, None)?
                .affine(g.logit_factor(), 0.0)?;
            logits = logits.broadcast_mul(&s)?;
        }
        if spec.logits_mult != 1.0 {
            logits = logits.affine(spec.logits_mult, 0.0)?;
        }
        if let Some(c) = spec.final_softcap {
            logits = softcap(&logits, c)?;
        }
        // Inkling: the rows that pad the head past the real vocabulary are dropped.
        if let Some(kept) = spec.logits_kept {
            logits = logits.narrow(1, 0, kept as usize)?;
        }
        self.keep(None, Point::Logits, &logits);
        Ok(logits)
    }

    /// Embedding rows of `role`'s table for `ids`, dequantized or unpacked as they are read.
    fn rows(&self, role: Role, ids: &[u32], ids_t: &Tensor) -> Res<Tensor> {
        let name = self.name(role, false, None, None);
        Ok(match (
            self.weights.quantized.get(&name),
            self.weights.packed.get(&name),
        ) {
            (Some(q), _) => q.rows(ids),
            (None, Some(p)) => p.rows(ids),
            (None, None) => self.weights.get(&name)?.embedding(ids_t),
        }?)
    }

    /// Gemma 4's per-layer inputs, [t, layers · width]: the looked-up rows (× √width) and the
    /// embeddings projected (÷ √hidden) and normed per layer, summed and scaled by 1/√2.
    fn per_layer_inputs(
        &self,
        x: &Tensor,
        ids: &[u32],
        ids_t: &Tensor,
        p: anatomy_core::spec::PerLayerInput,
    ) -> Res<Tensor> {
        let (t, l, w) = (ids.len(), self.spec.layers as usize, p.width as usize);
        // Gemma 3n: ids past the table read its row 0.
        let looked = if p.clamp_ids {
            let ids: Vec<u32> = ids
                .iter()
                .map(|&i| if i as u64 >= p.vocab { 0 } else { i })
                .collect();
            let ids_t = Tensor::new(ids.as_slice(), &Device::Cpu)?;
            self.rows(Role::PleEmbed, &ids, &ids_t)?
        } else {
            self.rows(Role::PleEmbed, ids, ids_t)?
        };
        let looked = looked.affine((w as f64).sqrt(), 0.0)?;
        let proj = self.linear(x, &self.name(Role::PleProj, false, None, None), None)?;
        let proj = proj.affine(1.0 / (self.spec.hidden as f64).sqrt(), 0.0)?;
        let normed = self
            .norm(&proj.reshape((t, l, w))?, Role::PleProjNorm, None)?
            .reshape((t, l * w))?;
        let out = ((normed + looked)? * std::f64::consts::FRAC_1_SQRT_2)?;
        self.keep(None, Point::PerLayerInputs, &out);
        Ok(out)
    }

    /// What follows a layer's FFN (Gemma 4): its share of the per-layer inputs gated in by the
    /// stream, then its stored output scalar.
    fn layer_tail(&self, x: Tensor, b: usize, per_layer: Option<&Tensor>) -> Res<Tensor> {
        let mut x = x;
        if let (Some(all), Some(p)) = (per_layer, self.spec.per_layer_input) {
            let w = p.width as usize;
            let g = self.proj(&x, Role::PleGate, b, false)?;
            self.keep(Some(b), Point::PleGate, &g);
            let a = (self.act(&g)? * all.narrow(1, b * w, w)?)?;
            self.keep(Some(b), Point::PleAct, &a);
            let y = self.proj(&a, Role::PleUp, b, false)?;
            self.keep(Some(b), Point::PleUp, &y);
            let y = self.norm(&y, Role::PleNorm, Some(b))?;
            self.keep(Some(b), Point::PleNorm, &y);
            x = (x + y)?;
            self.keep(Some(b), Point::PleResid, &x);
        }
        if self.spec.layer_scalar {
            x = x.broadcast_mul(self.w(Role::LayerScalar, Some(b))?)?;
            self.keep(Some(b), Point::LayerScalar, &x);
        }
        Ok(x)
    }

    fn layer(
        &self,
        x: &Tensor,
        b: usize,
        cache: &mut Cache,
        shortcut: &mut Option<Tensor>,
        feed: Option<Tensor>,
    ) -> Res<Tensor> {
        let place = self.spec.place_at(b);
        self.keep(Some(b), Point::BlockIn, x);
        if !self.spec.plan[b].mixer.runs_on_text() {
            // A cross-attention layer reads the image's states: without an image transformers
            // skips the whole layer, and so does a run here, which reads only text.
            return Ok(x.clone());
        }
        if self.spec.hyper().is_some() {
            return self.hyper_layer(x, b, cache);
        }
        if self.spec.gated_streams().is_some() {
            return self.gated_layer(x, b, cache);
        }
        // What the mixer reads: the stream, plus a shared block's output (Zamba2).
        let fed = match feed {
            Some(s) => (x + s)?,
            None => x.clone(),
        };
        if self.spec.plan[b].mixer == Mixer::None {
            // The layer is its FFN alone, pre-normed (Nemotron-H's MLP and MoE layers).
            let h = self.norm(x, Role::FfnNorm, Some(b))?;
            self.keep(Some(b), Point::FfnNorm, &h);
            let moe = self.spec.plan[b].moe();
            let m = if moe {
                self.moe(&h, b)?
            } else {
                self.mlp(&h, b)?
            };
            self.keep(Some(b), if moe { Point::Combine } else { Point::Down }, &m);
            let out = (x + m)?;
            self.keep(Some(b), Point::ResidFfn, &out);
            return Ok(out);
        }
        // ModernBERT's first layer reads the embeddings without a norm.
        let h = if place.before() && !(b == 0 && self.spec.skip_first_attn_norm) {
            let h = self.norm(&fed, Role::AttnNorm, Some(b))?;
            self.norm_gated(h, (Role::AttnNormDown, Role::AttnNormUp), b)?
        } else {
            fed
        };
        if place.before() {
            self.keep(Some(b), Point::AttnNorm, &h);
        }
        let mut a = match self.spec.plan[b].mixer {
            Mixer::Attention(_) => self.attention(&h, b, cache)?,
            Mixer::Mamba2 => self.mamba2(&h, b, cache)?,
            Mixer::Mamba => self.mamba(&h, b, cache)?,
            Mixer::ShortConv => self.short_conv(&h, b, cache)?,
            Mixer::DeltaNet => self.delta_net(&h, b, cache)?,
            Mixer::Lightning => self.lightning(&h, b, cache)?,
            Mixer::RgLru => self.rg_lru(&h, b, cache)?,
            Mixer::Rwkv => self.rwkv_time_mix(&h, b, cache)?,
            Mixer::MLstm => self.mlstm(&h, b, cache)?,
            Mixer::Parallel(_) => {
                // Both read the normed input, each scaled, and their scaled outputs are summed.
                let m = self.spec.mup.expect("a parallel layer has its multipliers");
                let a = self.attention(&h.affine(m.attn_in, 0.0)?, b, cache)?;
                let s = self.mamba2(&h.affine(m.ssm_in, 0.0)?, b, cache)?;
                (a.affine(m.attn_out, 0.0)? + s.affine(m.ssm_out, 0.0)?)?
            }
            Mixer::None | Mixer::CrossAttention => unreachable!("returned above"),
        };
        if place.after() {
            a = self.norm(&a, Role::PostAttnNorm, Some(b))?;
            self.keep(Some(b), Point::PostAttnNorm, &a);
        }
        if self.spec.out_conv.is_some() {
            a = self.residual_conv(&a, Role::AttnOutConv, b, CONV_ATTN, cache)?;
            self.keep(Some(b), Point::AttnConv, &a);
        }
        // Residual multipliers (Granite), or RWKV's inference scaling of layer b's outputs.
        let m_res = match self.spec.rwkv() {
            Some(r) => 0.5f64.powi(r.halvings(b as u64) as i32),
            None => self.spec.residual_mult,
        };
        if m_res != 1.0 {
            a = a.affine(m_res, 0.0)?;
        }
        self.keep(Some(b), Point::AttnOut, &a);
        let mut r = match self.spec.stream_mix {
            None if place == NormPlace::Sphere => self.ngpt_move(&h, &a, Role::NgptRateAttn, b)?,
            // MiniMax: added to the normed input, each scaled.
            Some(mix) => {
                let (alpha, beta) = mix.mixer(self.spec.plan[b].mixer);
                (h.affine(alpha, 0.0)? + a.affine(beta, 0.0)?)?
            }
            None => self.residual_add(x, a, Role::ResidScaleAttn, b)?,
        };
        self.keep(Some(b), Point::ResidAttn, &r);
        // Post-residual: the stream itself is normed after each add.
        if place.on_stream() {
            r = self.norm(&r, Role::AttnNorm, Some(b))?;
            self.keep(Some(b), Point::AttnNorm, &r);
        }
        let ffn = self.spec.plan[b].ffn;
        if ffn == Ffn::None {
            return Ok(r);
        }
        // A parallel block's FFN reads the block input: through the attention's norm, or its own.
        let h = match (self.spec.block, place) {
            (Block::Parallel { shared_norm: true }, _) => h,
            (Block::Parallel { shared_norm: false }, _) => self.norm(x, Role::FfnNorm, Some(b))?,
            (Block::Sequential, NormPlace::Post | NormPlace::PostResidual) => r.clone(),
            // A.X-K2's MoE layers gate their FFN norm, stored under a name of its own.
            (Block::Sequential, NormPlace::Pre) if self.spec.gated_ffn_norm(b) => {
                let h = self.norm(&r, Role::GatedFfnNorm, Some(b))?;
                self.norm_gated(h, (Role::FfnNormDown, Role::FfnNormUp), b)?
            }
            (
                Block::Sequential,
                NormPlace::Pre | NormPlace::Sandwich | NormPlace::Normed | NormPlace::Sphere,
            ) => self.norm(&r, Role::FfnNorm, Some(b))?,
        };
        if place.before() {
            self.keep(Some(b), Point::FfnNorm, &h);
        }
        let mut m = match ffn {
            Ffn::Moe => self.moe(&h, b)?,
            Ffn::Dense => self.mlp(&h, b)?,
            Ffn::Shortcut => {
                let s = self.moe(&h, b)?;
                self.keep(Some(b), Point::Shortcut, &s);
                *shortcut = Some(s);
                self.mlp(&h, b)?
            }
            Ffn::DenseAndMoe => {
                // Gemma 4: the MLP on the FFN's norm, the experts on a norm of their own of the
                // stream and the router on the stream itself, each output normed, then summed.
                let m1 = self.mlp(&h, b)?;
                self.keep(Some(b), Point::Down, &m1);
                let m1 = self.norm(&m1, Role::MlpPostNorm, Some(b))?;
                self.keep(Some(b), Point::MlpPostNorm, &m1);
                let he = self.norm(&r, Role::ExpertsNorm, Some(b))?;
                self.keep(Some(b), Point::ExpertsNorm, &he);
                let m2 = self.moe_reading(&r, &he, b)?;
                self.keep(Some(b), Point::Combine, &m2);
                let m2 = self.norm(&m2, Role::ExpertsPostNorm, Some(b))?;
                self.keep(Some(b), Point::ExpertsPostNorm, &m2);
                (m1 + m2)?
            }
            Ffn::ChannelMix => self.rwkv_channel_mix(&h, b, cache)?,
            Ffn::None => unreachable!("returned above"),
        };
        self.keep(
            Some(b),
            match ffn {
                Ffn::Moe => Point::Combine,
                Ffn::DenseAndMoe => Point::FfnSum,
                Ffn::Dense | Ffn::Shortcut | Ffn::ChannelMix | Ffn::None => Point::Down,
            },
            &m,
        );
        if place.after() {
            m = self.norm(&m, Role::PostFfnNorm, Some(b))?;
            self.keep(Some(b), Point::PostFfnNorm, &m);
        }
        if self.spec.out_conv.is_some() {
            m = self.residual_conv(&m, Role::FfnOutConv, b, CONV_FFN, cache)?;
            self.keep(Some(b), Point::FfnConv, &m);
        }
        if m_res != 1.0 {
            m = m.affine(m_res, 0.0)?;
        }
        let mut out = match self.spec.stream_mix {
            None if place == NormPlace::Sphere => self.ngpt_move(&h, &m, Role::NgptRateFfn, b)?,
            Some(mix) => (h.affine(mix.mlp.0, 0.0)? + m.affine(mix.mlp.1, 0.0)?)?,
            None => self.residual_add(&r, m, Role::ResidScaleFfn, b)?,
        };
        if ffn != Ffn::Shortcut {
            if let Some(s) = shortcut.take() {
                out = (out + s)?;
            }
        }
        self.keep(Some(b), Point::ResidFfn, &out);
        if place.on_stream() {
            out = self.norm(&out, Role::FfnNorm, Some(b))?;
            self.keep(Some(b), Point::FfnNorm, &out);
        }
        // RWKV in inference: the stream halved after every few layers.
        if self.spec.rwkv().is_some_and(|r| r.halves_after(b as u64)) {
            out = out.affine(0.5, 0.0)?;
        }
        Ok(out)
    }

    /// nGPT's residual move: from the normed stream `h` towards the sublayer's normed output
    /// `y` at the learned rate |λ · α / init| per feature.
    fn ngpt_move(&self, h: &Tensor, y: &Tensor, rate: Role, b: usize) -> Res<Tensor> {
        let n = self.spec.ngpt.expect("an nGPT model");
        let r = self.w(rate, Some(b))?.affine(n.rate_factor(), 0.0)?.abs()?;
        Ok((h + (y - h)?.broadcast_mul(&r)?)?)
    }

    /// A.X-K2's gate on a norm's output, where the model gates its norms:
    /// y ⊙ σ(W_up · SiLU(W_down · y)).
    fn norm_gated(&self, y: Tensor, (down, up): (Role, Role), b: usize) -> Res<Tensor> {
        if self.spec.gated_norm.is_none() {
            return Ok(y);
        }
        let g = apply_act(Act::Silu, &self.proj(&y, down, b, false)?)?;
        let g = sigmoid(&self.proj(&g, up, b, false)?)?;
        Ok((y * g)?)
    }

    /// The span of attention layer `b` (only attention layers reach the attention code).
    /// `x` [t, c] plus its causal depthwise convolution by layer `b`'s `role` ([c, 1, taps]):
    /// Inkling's residual short convolutions. The last taps − 1 inputs are carried in the
    /// cache's `slot` for the next step (zeros before the first token).
    fn residual_conv(
        &self,
        x: &Tensor,
        role: Role,
        b: usize,
        slot: usize,
        cache: &mut Cache,
    ) -> Res<Tensor> {
        self.residual_conv_of(x, role, b, slot, false, cache)
    }

    /// `residual_conv`, its sum divided by √(taps + 1) where `scaled` (Inkling 2).
    fn residual_conv_of(
        &self,
        x: &Tensor,
        role: Role,
        b: usize,
        slot: usize,
        scaled: bool,
        cache: &mut Cache,
    ) -> Res<Tensor> {
        let (t, c) = x.dims2()?;
        let w: Vec<f32> = self.w(role, Some(b))?.flatten_all()?.to_vec1()?;
        let taps = w.len() / c.max(1);
        let all = carried(&mut cache.tails[b][slot], x, taps)?;
        let mut out = all[(taps - 1) * c..].to_vec();
        for (i, row) in out.chunks_exact_mut(c).enumerate() {
            for (ch, y) in row.iter_mut().enumerate() {
                let kernel = &w[ch * taps..][..taps];
                *y += (0..taps)
                    .map(|j| kernel[j] * all[(i + j) * c + ch])
                    .sum::<f32>();
            }
        }
        if scaled {
            let f = 1.0 / ((taps + 1) as f32).sqrt();
            out.iter_mut().for_each(|y| *y *= f);
        }
        Ok(Tensor::from_vec(out, (t, c), &Device::Cpu)?)
    }

    /// The stream `x` and a sublayer's output joined as the model joins them (`Residual`), or
    /// added, each scaled with depth (Beam) where the model does that.
    fn residual_add(&self, x: &Tensor, delta: Tensor, role: Role, b: usize) -> Res<Tensor> {
        let ffn = role == Role::ResidScaleFfn;
        if self.spec.residual == Residual::Gated {
            // Ergo: σ(w) ⊙ f + √(1 + σ(w)) · e^(−softplus(w)/2) ⊙ x, the factors computed as
            // the class computes them.
            let gate = if ffn {
                Role::ResidGateFfn
            } else {
                Role::ResidGateAttn
            };
            let w: Vec<f32> = self.w(gate, Some(b))?.flatten_all()?.to_vec1()?;
            let (out, keep): (Vec<f32>, Vec<f32>) = w
                .iter()
                .map(|&w| {
                    let s = 1.0 / (1.0 + (-w).exp());
                    let sp = w.max(0.0) + (-w.abs()).exp().ln_1p();
                    (s, (1.0 + s).sqrt() * (-0.5 * sp).exp())
                })
                .unzip();
            let d = w.len();
            let out = Tensor::from_vec(out, d, &Device::Cpu)?;
            let keep = Tensor::from_vec(keep, d, &Device::Cpu)?;
            return Ok((delta.broadcast_mul(&out)? + x.broadcast_mul(&keep)?)?);
        }
        if self.spec.residual == Residual::Affine {
            // ZAYA: both terms shifted and scaled by learned vectors.
            let roles = if ffn {
                [
                    Role::ResidFfnOutShift,
                    Role::ResidFfnOutScale,
                    Role::ResidFfnShift,
                    Role::ResidFfnScale,
                ]
            } else {
                [
                    Role::ResidAttnOutShift,
                    Role::ResidAttnOutScale,
                    Role::ResidAttnShift,
                    Role::ResidAttnScale,
                ]
            };
            let w = |r| self.w(r, Some(b));
            let out = delta
                .broadcast_add(w(roles[0])?)?
                .broadcast_mul(w(roles[1])?)?;
            let stream = x.broadcast_add(w(roles[2])?)?.broadcast_mul(w(roles[3])?)?;
            return Ok((out + stream)?);
        }
        let x = if self.spec.residual == Residual::Scaled {
            x.broadcast_mul(self.w(role, Some(b))?)?
        } else {
            x.clone()
        };
        let (sx, sd) = self.spec.depth_factors(b as u64, ffn);
        if (sx, sd) == (1.0, 1.0) {
            return Ok((x + delta)?);
        }
        Ok((x.affine(sx, 0.0)? + delta.affine(sd, 0.0)?)?)
    }
}

/// ln(1 + eˣ), as max(x, 0) + ln(1 + e^−|x|) so that large x do not overflow.
fn softplus(x: &Tensor) -> R<Tensor> {
    x.relu()? + (x.abs()?.neg()?.exp()? + 1.0)?.log()?
}

fn vec(t: &Tensor) -> R<Vec<f32>> {
    t.flatten_all()?.to_vec1::<f32>()
}

fn sigmoid(x: &Tensor) -> R<Tensor> {
    (x.neg()?.exp()? + 1.0)?.recip()
}

fn softcap(x: &Tensor, c: f64) -> R<Tensor> {
    x.affine(1.0 / c, 0.0)?.tanh()?.affine(c, 0.0)
}

fn rms(x: &Tensor, eps: f64) -> R<Tensor> {
    x.broadcast_div(&(x.sqr()?.mean_keepdim(D::Minus1)? + eps)?.sqrt()?)
}

/// `x` normalized over its last dim, scaled by `w` (absent for a plain LayerNorm) and shifted
/// by `b` where the norm has them.
fn norm(x: &Tensor, w: Option<&Tensor>, b: Option<&Tensor>, n: &Norm) -> R<Tensor> {
    let y = match n.kind {
        NormKind::Layer { .. } | NormKind::Plain => {
            let mean = x.mean_keepdim(D::Minus1)?;
            let c = x.broadcast_sub(&mean)?;
            let var = c.sqr()?.mean_keepdim(D::Minus1)?;
            c.broadcast_div(&(var + n.eps)?.sqrt()?)?
        }
        NormKind::Rms | NormKind::PlainRms | NormKind::RmsBias => rms(x, n.eps)?,
        NormKind::Unit => unit(x, n.eps)?,
    };
    let y = match w {
        Some(w) if n.unit_offset => y.broadcast_mul(&(w + 1.0)?)?,
        Some(w) => y.broadcast_mul(w)?,
        None => y,
    };
    match b {
        Some(b) => y.broadcast_add(b),
        None => Ok(y),
    }
}

/// `act` applied to `x`; xIELU, which reads its layer's parameters, is `Model::xielu`.
fn apply_act(act: Act, x: &Tensor) -> R<Tensor> {
    match act {
        Act::Silu => x.silu(),
        Act::GeluTanh => x.gelu(),
        Act::Gelu => x.gelu_erf(),
        Act::QuickGelu => x * sigmoid(&x.affine(1.702, 0.0)?)?,
        Act::Relu => x.relu(),
        Act::Relu2 => x.relu()?.sqr(),
        Act::Xielu => Err(candle_core::Error::Msg(
            "xIELU reads its layer's parameters: use Model::xielu".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kv::Kv;

    /// A step run again (to name its first non-finite output) starts from the cache as it was:
    /// positions appended since the mark are gone, layers that had no keys have none, and
    /// recurrent states are the ones marked.
    #[test]
    fn a_rewound_cache_holds_what_it_held_when_marked() {
        let keys = |c: &Cache, b: usize| -> Option<Vec<f32>> {
            let kv = c.kv[b].as_ref()?;
            Some(kv.keys().unwrap().flatten_all().unwrap().to_vec1().unwrap())
        };
        let mut c = Cache::with_room(3, 4);
        let mut kv = Kv::new(1, 2, 1);
        kv.append(&[1.0, 2.0], &[3.0], 1, c.room);
        c.kv[0] = Some(kv);
        let mut s = SsmState::new(2, 1, 1, 1, 1);
        s.h[0] = 5.0;
        c.ssm[2] = Some(s);
        c.pos = 1;
        let mark = c.mark();
        c.kv[0]
            .as_mut()
            .unwrap()
            .append(&[8.0, 9.0], &[7.0], 1, c.room);
        let mut kv = Kv::new(1, 2, 1);
        kv.append(&[6.0, 6.0], &[6.0], 1, c.room);
        c.kv[1] = Some(kv);
        c.ssm[2].as_mut().unwrap().h[0] = 4.0;
        c.pos = 2;
        let r = c.rewound(&mark);
        assert_eq!(r.pos, 1);
        assert_eq!(keys(&r, 0), Some(vec![1.0, 2.0]));
        assert_eq!(keys(&r, 1), None);
        assert_eq!(r.ssm[2].as_ref().unwrap().h, vec![5.0]);
        // The cache that ran on is as it was.
        assert_eq!(keys(&c, 0), Some(vec![1.0, 2.0, 8.0, 9.0]));
    }
}
