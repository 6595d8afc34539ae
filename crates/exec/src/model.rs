//! The forward pass, as the Spec describes the model and with the Graph's checkpoint names: one
//! decoder layer after another over a KV cache. Each computation follows the model's
//! `transformers` definition (where eps sits, (1 + w) norms, softcaps, sinks, routing); the parity
//! tests compare logits with transformers on tiny random models of every family it runs.

mod blt;
use crate::attention;
use crate::linear::with_values;
use crate::rope;
use crate::ssm::{self, SsmState};
use crate::weights::Weights;
use anatomy_checkpoint::Format;
use anatomy_core::graph::Point;
use anatomy_core::naming::{names, Role};
use anatomy_core::spec::{
    Act, AttnRes, AttnSpan, Block, DeltaStore, ExpertStorage, Ffn, Hierarchy, Indexer, Looped,
    Mixer, Moa, Norm, NormKind, NormPlace, Position, QkNorm, Qkv, QueryScale, RelLogits, Scoring,
    Spec, SsmGate,
};
use anatomy_core::Error;
use candle_core::{DType, Device, IndexOp, Tensor, D};

type R<T> = candle_core::Result<T>;

// DeepSeek-V4's attention and routing by token id, methods of `Model` kept apart.
#[path = "v4.rs"]
mod v4;

// Gemma 4's assistants: drafting from a target's state.
#[path = "draft.rs"]
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

/// One activation of a forward pass: where it was computed, its statistics, and — when small —
/// its values.
#[derive(Debug, Clone)]
pub struct Captured {
    /// Layer index, `None` outside the blocks.
    pub layer: Option<usize>,
    /// What it is.
    pub point: Point,
    pub shape: Vec<usize>,
    /// Statistics of its finite values.
    pub summary: Summary,
    /// Values that are NaN or infinite (masked attention scores, −∞ by design, not counted).
    pub nonfinite: usize,
    /// For an activation with a head axis (Q, K, V, scores, weights, head outputs): each head's
    /// own statistics, in head order (query heads, or K/V heads for K and V).
    pub heads: Vec<Summary>,
    /// The routed expert that computed it.
    pub expert: Option<usize>,
    /// All values (row-major) when there are at most `SMALL` of them.
    pub values: Option<Vec<f32>>,
}

/// Mean, standard deviation and range of the finite values of an activation or of a part of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub mean: f32,
    pub std: f32,
    pub min: f32,
    pub max: f32,
}

impl Summary {
    pub fn of(v: &[f32]) -> Summary {
        let finite: Vec<f32> = v.iter().copied().filter(|x| x.is_finite()).collect();
        let n = finite.len().max(1) as f32;
        let mean = finite.iter().sum::<f32>() / n;
        Summary {
            mean,
            std: (finite.iter().map(|x| (x - mean) * (x - mean)).sum::<f32>() / n).sqrt(),
            min: finite.iter().copied().fold(f32::INFINITY, f32::min),
            max: finite.iter().copied().fold(f32::NEG_INFINITY, f32::max),
        }
    }
}

/// Where the heads of capture `point` are: (axis, count). Projections are [T, heads · d]; the
/// rotated, scored and weighted tensors [heads, T, …].
fn head_axis(
    spec: &Spec,
    layer: Option<usize>,
    point: Point,
    dims: &[usize],
) -> Option<(usize, usize)> {
    let a = layer.map_or(&spec.attn, |b| spec.attn_at(b));
    let (q, kv) = (a.heads as usize, a.kv_heads as usize);
    match (point, dims.len()) {
        (
            Point::Q
            | Point::K
            | Point::V
            | Point::QNorm
            | Point::KNorm
            | Point::QL2
            | Point::KL2
            | Point::QScaled
            | Point::Scores
            | Point::Probs
            | Point::KNope,
            3,
        ) => Some((0, dims[0])),
        (Point::QProj | Point::QNorm | Point::Heads, 2) => Some((1, q)),
        (Point::KProj | Point::KNorm, 2) if a.mla.is_none() => Some((1, kv)),
        _ => None,
    }
    .filter(|(axis, n)| *n > 0 && dims[*axis].is_multiple_of(*n))
}

/// The values of each of `n` equal parts along `axis` of a row-major tensor of `dims`.
fn split(v: &[f32], dims: &[usize], axis: usize, n: usize) -> Vec<Vec<f32>> {
    let outer: usize = dims[..axis].iter().product();
    let inner: usize = dims[axis + 1..].iter().product::<usize>() * (dims[axis] / n);
    let mut out = vec![Vec::new(); n];
    for o in 0..outer {
        for (h, part) in out.iter_mut().enumerate() {
            let start = (o * n + h) * inner;
            part.extend_from_slice(&v[start..start + inner]);
        }
    }
    out
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

/// Keys and values of every layer seen so far, and the recurrent layers' states.
#[derive(Clone)]
pub struct Cache {
    /// Each attention layer's keys and values.
    kv: Vec<Option<crate::kv::Kv>>,
    /// Positions to make room for in `kv` at once: the whole generation, where known.
    room: usize,
    /// DeepSeek sparse attention's indexer keys, [T, index head dim] per layer.
    index_k: Vec<Option<Tensor>>,
    /// The keys the last indexer chose for this step's queries, [t, total], which layers without
    /// an indexer of their own reuse (GLM-5).
    chosen: Option<Vec<bool>>,
    /// The recurrent state of each state-space layer.
    ssm: Vec<Option<SsmState>>,
    /// The last inputs of each layer's residual convolutions (Inkling's K, V, attention output
    /// and MLP output: `CONV_K` …), [taps − 1, channels] each, oldest first.
    tails: Vec<[Vec<f32>; 4]>,
    /// DeepSeek-V4's attention state of each layer: its keys-and-values and compressors.
    v4: Vec<Option<v4::V4State>>,
    /// The token ids of the step running: DeepSeek-V4's first layers route by them.
    ids: Vec<u32>,
    /// Every byte so far (BLT: each pass runs on the whole sequence).
    bytes: Vec<u32>,
    /// Qwen4-Exp's n-gram embeddings in each layer that has them: the last ids and the
    /// convolution's last inputs.
    ngram: Vec<Option<NgramState>>,
    /// Each stack visit's own cache (HRM: every run of a layer attends over its own keys and
    /// values), made as the first step needs them.
    visits: Vec<Cache>,
    pub pos: usize,
}

/// What a layer's n-gram embeddings carry from step to step (`Spec::ngram_ple`).
#[derive(Clone)]
struct NgramState {
    /// The last `ngram` − 1 ids, oldest first (end-of-sequence before the first token).
    ids: Vec<u64>,
    /// The convolution's last `reach` inputs, [reach, channels] oldest first (zeros at first).
    conv: Vec<f32>,
}

/// A cache as `Cache::mark` found it.
struct Mark {
    rest: Cache,
    lens: Vec<Option<usize>>,
    visits: Vec<Mark>,
}

impl Cache {
    pub fn new(layers: usize) -> Self {
        Cache::with_room(layers, 0)
    }

    /// A cache that makes room for `positions` keys and values a layer at once (the prompt and
    /// every token to generate): no step then copies the cache.
    pub fn with_room(layers: usize, positions: usize) -> Self {
        Cache {
            kv: (0..layers).map(|_| None).collect(),
            room: positions,
            index_k: vec![None; layers],
            chosen: None,
            ssm: vec![None; layers],
            tails: vec![Default::default(); layers],
            v4: vec![None; layers],
            ids: Vec::new(),
            bytes: Vec::new(),
            ngram: vec![None; layers],
            visits: Vec::new(),
            pos: 0,
        }
    }

    /// Layer `b`'s indexer keys with `k` ([t, d]) appended: every key so far, kept for the next
    /// step.
    fn index_keys(&mut self, b: usize, k: Tensor) -> candle_core::Result<Tensor> {
        let all = match &self.index_k[b] {
            Some(prev) => Tensor::cat(&[prev, &k], 0)?,
            None => k,
        };
        self.index_k[b] = Some(all.clone());
        Ok(all)
    }

    /// Stack visit `i`'s own cache, at this one's position (`Spec::hierarchy`).
    fn visit(&mut self, i: usize) -> &mut Cache {
        while self.visits.len() <= i {
            self.visits.push(Cache::with_room(self.kv.len(), self.room));
        }
        let pos = self.pos;
        let c = &mut self.visits[i];
        c.pos = pos;
        c
    }

    /// Bytes the cache holds: keys and values (with their room to grow), indexer keys and
    /// recurrent states.
    pub fn bytes(&self) -> usize {
        let kv: usize = self.kv.iter().flatten().map(|kv| kv.bytes()).sum();
        let index: usize = self
            .index_k
            .iter()
            .flatten()
            .map(|k| k.elem_count() * 4)
            .sum();
        let ssm: usize = (self.ssm.iter().flatten())
            .map(|s| (s.conv.len() + s.h.len()) * 4 + s.memory.len() * 8)
            .sum();
        let tails: usize = self.tails.iter().flatten().map(|t| t.len() * 4).sum();
        let v4: usize = self.v4.iter().flatten().map(|s| s.bytes()).sum();
        let ngram: usize = (self.ngram.iter().flatten())
            .map(|s| s.ids.len() * 8 + s.conv.len() * 4)
            .sum();
        kv + index + ssm + tails + v4 + ngram + self.visits.iter().map(Cache::bytes).sum::<usize>()
    }

    /// This cache as it is, to run a step again from, taken before every step: the keys and
    /// values, which a step only appends to, by their length alone; the recurrent states (their
    /// size constant in context), copied.
    fn mark(&self) -> Mark {
        let lens = self
            .kv
            .iter()
            .map(|kv| kv.as_ref().map(|kv| kv.len()))
            .collect();
        let rest = Cache {
            kv: self.kv.iter().map(|_| None).collect(),
            room: self.room,
            index_k: self.index_k.clone(),
            chosen: self.chosen.clone(),
            ssm: self.ssm.clone(),
            tails: self.tails.clone(),
            v4: self.v4.clone(),
            ids: self.ids.clone(),
            bytes: self.bytes.clone(),
            ngram: self.ngram.clone(),
            visits: Vec::new(),
            pos: self.pos,
        };
        Mark {
            rest,
            lens,
            visits: self.visits.iter().map(Cache::mark).collect(),
        }
    }

    /// The cache `mark` took, from this one that has run on from it.
    fn rewound(&self, m: &Mark) -> Cache {
        let kv = self.kv.iter().zip(&m.lens).map(|(kv, len)| {
            let (mut kv, len) = (kv.clone()?, (*len)?);
            kv.truncate(len);
            Some(kv)
        });
        Cache {
            kv: kv.collect(),
            visits: self
                .visits
                .iter()
                .zip(&m.visits)
                .map(|(c, m)| c.rewound(m))
                .collect(),
            ..m.rest.clone()
        }
    }
}

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
        let stacks = match spec.bytes.as_deref() {
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
                read.insert(self.name(role, false, Some(b), None));
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

    /// Logits for `ids` and every activation computed on the way.
    pub fn forward_captured(&self, ids: &[u32]) -> Result<(Tensor, Vec<Captured>), Error> {
        *self.capture.borrow_mut() = Some(Vec::new());
        let logits = self.forward(ids, &mut Cache::new(self.spec.layers as usize));
        let captured = self.capture.borrow_mut().take().unwrap_or_default();
        Ok((logits?, captured))
    }

    fn capturing(&self) -> bool {
        self.capture.borrow().is_some()
    }

    fn keep(&self, layer: Option<usize>, point: Point, t: &Tensor) {
        self.record(layer, point, t, None);
    }

    /// An activation of routed expert `e`.
    fn keep_expert(&self, layer: usize, point: Point, t: &Tensor, e: usize) {
        self.record(Some(layer), point, t, Some(e));
    }

    fn record(&self, layer: Option<usize>, point: Point, t: &Tensor, expert: Option<usize>) {
        let mut guard = self.capture.borrow_mut();
        let Some(list) = guard.as_mut() else { return };
        let Ok(v) = t
            .flatten_all()
            .and_then(|f| f.to_dtype(DType::F32))
            .and_then(|f| f.to_vec1::<f32>())
        else {
            return;
        };
        // Masked scores are −∞ by design; anything else not finite is a fault.
        let nonfinite = v
            .iter()
            .filter(|x| !x.is_finite() && (point != Point::Scores || **x != f32::NEG_INFINITY))
            .count();
        let heads = match head_axis(&self.spec, layer, point, t.dims()) {
            Some((axis, n)) => split(&v, t.dims(), axis, n)
                .iter()
                .map(|h| Summary::of(h))
                .collect(),
            None => Vec::new(),
        };
        list.push(Captured {
            layer,
            point,
            shape: t.dims().to_vec(),
            summary: Summary::of(&v),
            nonfinite,
            heads,
            expert,
            values: (v.len() <= SMALL).then_some(v),
        });
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
        Ok(self.run(ids, cache, false)?)
    }

    /// The logits of the last of `ids` alone, [1, vocab]: all that decoding needs, without the
    /// LM head's product for the other positions of a prompt.
    pub fn forward_last(&self, ids: &[u32], cache: &mut Cache) -> Result<Tensor, Error> {
        Ok(self.run(ids, cache, true)?)
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
    fn run(&self, ids: &[u32], cache: &mut Cache, last: bool) -> Res<Tensor> {
        if self.spec.draft.is_some() {
            return Err(Error::new(
                &self.spec.name,
                "model_type",
                "is a draft model (a Gemma 4 assistant): it reads its target's state, not token ids alone; run it with --target TARGET",
            )
            .into());
        }
        let before = cache.mark();
        let logits = self.run_steps(ids, cache, last)?;
        let values: Vec<f32> = logits.flatten_all().and_then(|l| l.to_vec1())?;
        if values.iter().all(|x| x.is_finite()) {
            return Ok(logits);
        }
        let captured = if self.capturing() {
            self.capture.borrow().clone().unwrap_or_default()
        } else {
            *self.capture.borrow_mut() = Some(Vec::new());
            let _ = self.run_steps(ids, &mut cache.rewound(&before), last);
            self.capture.borrow_mut().take().unwrap_or_default()
        };
        Err(crate::values::non_finite(&self.spec, &captured).into())
    }

    fn run_steps(&self, ids: &[u32], cache: &mut Cache, last: bool) -> Res<Tensor> {
        let spec = &self.spec;
        if let (Some(bl), Some(s)) = (spec.bytes.as_deref(), self.stacks.as_deref()) {
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
        let t = ids.len();
        let ids_t = Tensor::new(ids, &Device::Cpu)?;
        let mut x = self.rows(Role::Embed, ids, &ids_t)?;
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
        if spec.embedding.learned_positions.is_some() {
            let offset = spec.embedding.position_offset as usize;
            let pos: Vec<u32> = (cache.pos + offset..cache.pos + t + offset)
                .map(|p| p as u32)
                .collect();
            let pe = self
                .w(Role::PosEmbed, None)?
                .embedding(&Tensor::new(pos.as_slice(), &Device::Cpu)?)?;
            x = (x + pe)?;
        }
        if let Position::Sinusoidal(table) = spec.position {
            let d = spec.hidden;
            let rows: Vec<f32> = (cache.pos..cache.pos + t)
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
        self.keep(None, Point::Embed, &x);
        // Hyper-connections and gated streams: every stream starts as the embedding,
        // [t, n · hidden].
        if spec.hyper.is_some() || spec.gated_streams.is_some() {
            x = Tensor::cat(&vec![&x; spec.streams() as usize], 1)?;
        }
        if spec.altup.is_some() {
            x = self.altup_streams(&x)?;
        }
        // LongCat-Flash's shortcut: the experts' output of one layer, added at the next one's end.
        let mut shortcut = None;
        // Zamba2's shared blocks read the embeddings beside the stream.
        let x0 = x.clone();
        if let Some(h) = spec.hierarchy {
            x = self.hierarchy(&x, h, cache)?;
        } else if let Some(l) = spec.looped {
            x = self.looped(&x, l, cache)?;
        } else if let Some(r) = spec.attn_res {
            x = self.attn_res_layers(&x, r, cache)?;
        } else {
            for b in 0..spec.layers as usize {
                if spec.altup.is_some() {
                    x = self.altup_layer(&x, b, cache, per_layer.as_ref())?;
                    continue;
                }
                let feed = match &spec.shared {
                    Some(s) if s.layers.contains(b as u64) => {
                        Some(self.shared_block(&x, &x0, b, cache)?)
                    }
                    _ => None,
                };
                x = self.layer(&x, b, cache, &mut shortcut, feed)?;
                x = self.layer_tail(x, b, per_layer.as_ref())?;
            }
        }
        cache.pos += t;
        // The prompt's outputs are dropped; the text's go on to the head.
        let t = t - prompt;
        if prompt > 0 {
            x = x.narrow(0, prompt, t)?;
        }
        if last && t > 1 {
            x = x.narrow(0, t - 1, 1)?;
        }
        if spec.altup.is_some() {
            x = self.altup_unembed(&x)?;
        }
        if spec.hyper.is_some() {
            let (h, _) = self.stream_mix(&x, HC_HEAD, None)?;
            self.keep(None, Point::HcHead, &h);
            x = h;
        }
        let gated = spec.gated_streams.is_some();
        if gated {
            let (h, _) = self.gated_mix(&x, GS_HEAD, None)?;
            self.keep(None, Point::HcHead, &h);
            x = h;
        }
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

    /// Inkling 2's layers over block attention residuals (`AttnRes`): each sublayer reads a mix
    /// of the block summaries and the stream; a block's first layer keeps its input as a summary
    /// and restarts the stream from its attention's output. A looped section (Inkling 2 Loop)
    /// runs its passes from the same stream and summaries, each with caches of its own, the later
    /// ones fed messages from the pass before. Returns the head's own mix.
    fn attn_res_layers(&self, x: &Tensor, r: AttnRes, cache: &mut Cache) -> Res<Tensor> {
        let layers = self.spec.layers as usize;
        // A section past the last layer loops the layers it holds.
        let (start, end, passes) = match r.looped {
            Some(l) => (
                (l.start as usize).min(layers),
                (l.end as usize).min(layers),
                l.passes as usize,
            ),
            None => (layers, layers, 1),
        };
        let mut blocks: Vec<Tensor> = Vec::new();
        let mut x = x.clone();
        for b in 0..start {
            x = self.attn_res_layer(&x, &mut blocks, b, None, r, cache)?;
        }
        let (x0, blocks0) = (x.clone(), blocks.clone());
        // The summaries the pass before added after its first, and its output.
        let mut before: Option<(Vec<Tensor>, Tensor)> = None;
        for p in 0..passes {
            if p > 0 {
                x = x0.clone();
                blocks = blocks0.clone();
            }
            let c = if p == 0 {
                &mut *cache
            } else {
                cache.visit(p - 1)
            };
            for b in start..end {
                let messages = match &before {
                    Some((summaries, out)) => Some(self.messages(summaries, out, b - start, r)?),
                    None => None,
                };
                x = self.attn_res_layer(&x, &mut blocks, b, messages, r, c)?;
            }
            before = Some((
                blocks[(blocks0.len() + 1).min(blocks.len())..].to_vec(),
                x.clone(),
            ));
        }
        for b in end..layers {
            x = self.attn_res_layer(&x, &mut blocks, b, None, r, cache)?;
        }
        let q = self.w(Role::HeadResQuery, None)?;
        let head = self.res_mix(&blocks, &x, q, r.eps)?;
        self.keep(None, Point::HeadMix, &head[0]);
        Ok(head[0].clone())
    }

    /// Inkling 2 Loop: looped layer j's four messages (its query, key, value and FFN inputs'),
    /// mixes of the pass before's `summaries` and `out` by the layer's four stored queries.
    fn messages(
        &self,
        summaries: &[Tensor],
        out: &Tensor,
        j: usize,
        r: AttnRes,
    ) -> Res<Vec<Tensor>> {
        let (qm, kv) = (
            self.w(Role::MsgQueries, None)?.narrow(0, 2 * j, 2)?,
            self.w(Role::MsgKvQueries, None)?.narrow(0, 2 * j, 2)?,
        );
        // Stored as the query and FFN queries, then the key and value ones: in order q, k, v, FFN.
        let queries = Tensor::cat(&[qm.narrow(0, 0, 1)?, kv, qm.narrow(0, 1, 1)?], 0)?;
        self.res_mix(summaries, out, &queries, r.eps)
    }

    /// A message gate of layer `b` on `x` with message `m`: (1 − tanh(W_f g)) ⊙ x + tanh(W_m g)
    /// ⊙ m, g = W_d · [rms(x); rms(m)].
    fn message_gate(&self, x: &Tensor, m: &Tensor, roles: [Role; 3], b: usize) -> Res<Tensor> {
        let eps = self.spec.norm.eps;
        let both = Tensor::cat(&[rms(x, eps)?, rms(m, eps)?], 1)?;
        let g = both.matmul(&self.w(roles[0], Some(b))?.t()?)?;
        let forget = g.matmul(&self.w(roles[1], Some(b))?.t()?)?.tanh()?;
        let gain = g.matmul(&self.w(roles[2], Some(b))?.t()?)?.tanh()?;
        Ok(((x - (x * forget)?)? + (m * gain)?)?)
    }

    /// Layer `b` over block attention residuals, `blocks` the summaries so far (a block's first
    /// layer adds its input), `messages` from the pass before where it is a later pass of a loop.
    fn attn_res_layer(
        &self,
        x: &Tensor,
        blocks: &mut Vec<Tensor>,
        b: usize,
        messages: Option<Vec<Tensor>>,
        r: AttnRes,
        cache: &mut Cache,
    ) -> Res<Tensor> {
        const Q: [Role; 3] = [Role::MsgQDown, Role::MsgQForget, Role::MsgQGain];
        const K: [Role; 3] = [Role::MsgKDown, Role::MsgKForget, Role::MsgKGain];
        const V: [Role; 3] = [Role::MsgVDown, Role::MsgVForget, Role::MsgVGain];
        const FFN: [Role; 3] = [Role::MsgFfnDown, Role::MsgFfnForget, Role::MsgFfnGain];
        let spec = &self.spec;
        self.keep(Some(b), Point::BlockIn, x);
        let a = spec.attn_at(b);
        let rows = if a.kv_inputs { 3 } else { 1 };
        let inputs = if b == 0 {
            vec![x.clone(); rows]
        } else {
            let q = self.w(Role::AttnResQuery, Some(b))?;
            self.res_mix(blocks, x, q, r.eps)?
        };
        // The query's, key's and value's inputs: one (a sliding layer) or three, each gated with
        // its message in a loop's later passes.
        let (qi, ki, vi) = match &messages {
            Some(m) => {
                let (k, v) = if a.kv_inputs {
                    (&inputs[1], &inputs[2])
                } else {
                    (&inputs[0], &inputs[0])
                };
                (
                    self.message_gate(&inputs[0], &m[0], Q, b)?,
                    self.message_gate(k, &m[1], K, b)?,
                    self.message_gate(v, &m[2], V, b)?,
                )
            }
            None if a.kv_inputs => (inputs[0].clone(), inputs[1].clone(), inputs[2].clone()),
            None => (inputs[0].clone(), inputs[0].clone(), inputs[0].clone()),
        };
        let y = if a.kv_inputs {
            let q = self.norm(&qi, Role::QInNorm, Some(b))?;
            let k = self.norm(&ki, Role::KInNorm, Some(b))?;
            let v = self.norm(&vi, Role::VInNorm, Some(b))?;
            self.keep(Some(b), Point::AttnNorm, &q);
            self.attention_from(&q, Some((&k, &v)), b, cache)?
        } else if messages.is_some() {
            let q = self.norm(&qi, Role::AttnNorm, Some(b))?;
            let k = self.norm(&ki, Role::AttnNorm, Some(b))?;
            let v = self.norm(&vi, Role::AttnNorm, Some(b))?;
            self.keep(Some(b), Point::AttnNorm, &q);
            self.attention_from(&q, Some((&k, &v)), b, cache)?
        } else {
            let h = self.norm(&qi, Role::AttnNorm, Some(b))?;
            self.keep(Some(b), Point::AttnNorm, &h);
            self.attention(&h, b, cache)?
        };
        let scaled = spec.out_conv.is_some_and(|c| c.scaled);
        let y = self.residual_conv_of(&y, Role::AttnOutConv, b, CONV_ATTN, scaled, cache)?;
        self.keep(Some(b), Point::AttnConv, &y);
        let stream = if (b as u64).is_multiple_of(r.block) {
            blocks.push(x.clone());
            y
        } else {
            (x + y)?
        };
        self.keep(Some(b), Point::ResidAttn, &stream);
        let q = self.w(Role::FfnResQuery, Some(b))?;
        let mut xm = self.res_mix(blocks, &stream, q, r.eps)?.swap_remove(0);
        if let Some(m) = &messages {
            xm = self.message_gate(&xm, &m[3], FFN, b)?;
        }
        let h = self.norm(&xm, Role::FfnNorm, Some(b))?;
        self.keep(Some(b), Point::FfnNorm, &h);
        let m = self.moe(&h, b)?;
        self.keep(Some(b), Point::Combine, &m);
        let m = self.residual_conv_of(&m, Role::FfnOutConv, b, CONV_FFN, scaled, cache)?;
        self.keep(Some(b), Point::FfnConv, &m);
        let out = (stream + m)?;
        self.keep(Some(b), Point::ResidFfn, &out);
        Ok(out)
    }

    /// A block attention residual's mixes of the summaries `blocks` and `stream` ([t, hidden]
    /// each), one per row of `queries` ([n, hidden], or [hidden] for one): every candidate
    /// RMS-normed without a weight, weighted by a softmax of its dot product with the query over
    /// √hidden.
    fn res_mix(
        &self,
        blocks: &[Tensor],
        stream: &Tensor,
        queries: &Tensor,
        eps: f64,
    ) -> Res<Vec<Tensor>> {
        let d = self.spec.hidden as usize;
        let all: Vec<Tensor> = blocks
            .iter()
            .chain(std::iter::once(stream))
            .map(|t| rms(t, eps))
            .collect::<R<_>>()?;
        let stacked = Tensor::stack(&all, 1)?; // [t, n, d]
        let rows = queries.elem_count() / d;
        let queries = queries.reshape((rows, d))?;
        let logits = stacked
            .broadcast_matmul(&queries.t()?)?
            .affine(1.0 / (d as f64).sqrt(), 0.0)?; // [t, n, rows]
                                                    // A softmax over the candidates (dim 1), shifted by each row's largest logit.
        let shifted = logits.broadcast_sub(&logits.max_keepdim(1)?)?.exp()?;
        let weights = shifted.broadcast_div(&shifted.sum_keepdim(1)?)?;
        (0..rows)
            .map(|j| {
                let w = weights.narrow(2, j, 1)?; // [t, n, 1]
                Ok(stacked.broadcast_mul(&w)?.sum(1)?)
            })
            .collect()
    }

    /// HRM's nested loop over its two stacks (`Hierarchy`): the low-level state starts as the
    /// stored `z_L_init`, the high-level one as the embeddings `x`; each visit of a stack reads
    /// the sum of both states and ends in the stack's weightless norm, with a cache of its own.
    /// The last visit's norm is left to the final norm.
    fn hierarchy(&self, x: &Tensor, h: Hierarchy, cache: &mut Cache) -> Res<Tensor> {
        let init = self.w(Role::LowInit, None)?;
        let mut low = init.unsqueeze(0)?.broadcast_as(x.shape())?.contiguous()?;
        let mut high = x.clone();
        let per = h.per_stack as usize;
        let visits: Vec<bool> = h.visits().collect();
        for (i, &is_low) in visits.iter().enumerate() {
            let c = cache.visit(i);
            let (mut y, first) = if is_low {
                ((&low + &high)?, 0)
            } else {
                ((&high + &low)?, per)
            };
            for b in first..first + per {
                y = self.layer(&y, b, c, &mut None, None)?;
                y = self.layer_tail(y, b, None)?;
            }
            if i + 1 < visits.len() {
                y = self.norm(&y, Role::FinalNorm, None)?;
            }
            if is_low {
                low = y;
            } else {
                high = y;
            }
        }
        Ok(high)
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
        if self.spec.hyper.is_some() {
            return self.hyper_layer(x, b, cache);
        }
        if self.spec.gated_streams.is_some() {
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
        let m_res = match self.spec.rwkv {
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
        if self.spec.rwkv.is_some_and(|r| r.halves_after(b as u64)) {
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

    /// Dory's looped section: the input layers once, the looped ones `loops` times, each pass
    /// from the stream normed plus the input layers' output normed, then the output layers.
    /// Each pass caches keys and values of its own (a visit's cache), or with `shared_cache`
    /// only the last does: an earlier pass appends its keys and values to the layers' caches,
    /// attends, and takes them off again.
    fn looped(&self, x: &Tensor, l: Looped, cache: &mut Cache) -> Res<Tensor> {
        let (a, z) = (l.input as usize, (l.input + l.recurrent) as usize);
        let mut x = x.clone();
        for b in 0..a {
            x = self.layer(&x, b, cache, &mut None, None)?;
        }
        let x0 = self.norm(&x, Role::FinalNorm, None)?;
        self.keep(None, Point::LoopInput, &x0);
        let passes = l.loops as usize;
        for p in 0..passes {
            x = (self.norm(&x, Role::FinalNorm, None)? + &x0)?;
            // An earlier pass of `last_loop`: what each looped layer held before it.
            let held: Option<Vec<Option<usize>>> = (l.shared_cache && p + 1 < passes).then(|| {
                (a..z)
                    .map(|b| cache.kv[b].as_ref().map(|kv| kv.len()))
                    .collect()
            });
            let c = if l.shared_cache || p == 0 {
                &mut *cache
            } else {
                cache.visit(p - 1)
            };
            for b in a..z {
                x = self.layer(&x, b, c, &mut None, None)?;
            }
            for (b, len) in (a..z).zip(held.into_iter().flatten()) {
                match len {
                    Some(n) => cache.kv[b].iter_mut().for_each(|kv| kv.truncate(n)),
                    None => cache.kv[b] = None,
                }
            }
        }
        for b in z..self.spec.layers as usize {
            x = self.layer(&x, b, cache, &mut None, None)?;
        }
        Ok(x)
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

    /// Gemma 3n: the embedding and its projections into the other streams, each rescaled to the
    /// embedding's RMS; [t, n · hidden].
    fn altup_streams(&self, x: &Tensor) -> Res<Tensor> {
        let a = self.spec.altup.expect("AltUp in the Spec");
        let mut streams = vec![x.clone()];
        for i in 0..a.streams as usize - 1 {
            let name = self.name(Role::AltUpProj, false, None, Some(i));
            streams.push(rescaled(&self.linear(x, &name, None)?, x)?);
        }
        let x = Tensor::cat(&streams, 1)?;
        self.keep(None, Point::AltupStreams, &x);
        Ok(x)
    }

    /// Gemma 3n: the streams after the first projected back, each rescaled to the first's RMS,
    /// and all of them averaged; [t, hidden].
    fn altup_unembed(&self, x: &Tensor) -> Res<Tensor> {
        let a = self.spec.altup.expect("AltUp in the Spec");
        let (n, d) = (a.streams as usize, self.spec.hidden as usize);
        let first = x.narrow(1, 0, d)?;
        let mut sum = first.clone();
        for i in 1..n {
            let name = self.name(Role::AltUpUnembed, false, None, Some(i - 1));
            let back = self.linear(&x.narrow(1, i * d, d)?, &name, None)?;
            sum = (sum + rescaled(&back, &first)?)?;
        }
        let mean = sum.affine(1.0 / n as f64, 0.0)?;
        self.keep(None, Point::AltupMean, &mean);
        Ok(mean)
    }

    /// Gemma 3n's AltUp router over one version of the hidden state: tanh of its projection
    /// of the normed input over the hidden size; [t, n].
    fn altup_router(&self, x: &Tensor, b: usize) -> Res<Tensor> {
        let h = self.norm(x, Role::AltUpRouterNorm, Some(b))?;
        let d = self.spec.hidden as f64;
        Ok(self
            .proj(&h.affine(1.0 / d, 0.0)?, Role::AltUpRouter, b, false)?
            .tanh()?)
    }

    /// A Gemma 3n layer over the streams `x` ([t, n · hidden]): every stream predicted from
    /// all; the attention (beside LAuReL) and the MLP on the active prediction; every
    /// prediction corrected by the layer's innovation; the per-layer input added to the
    /// streams after the first.
    fn altup_layer(
        &self,
        x: &Tensor,
        b: usize,
        cache: &mut Cache,
        per_layer: Option<&Tensor>,
    ) -> Res<Tensor> {
        let a = self.spec.altup.expect("AltUp in the Spec");
        let (t, n, d) = (x.dim(0)?, a.streams as usize, self.spec.hidden as usize);
        self.keep(Some(b), Point::BlockIn, x);
        let xs = x.reshape((t, n, d))?;
        let active = a.active as usize;
        let m = self.altup_router(&xs.narrow(1, active, 1)?.squeeze(1)?, b)?;
        let c = self
            .proj(&m, Role::AltUpPredict, b, false)?
            .reshape((t, n, n))?;
        // Pⱼ = Xⱼ + Σᵢ C[j, i] Xᵢ
        let p = (&xs + c.matmul(&xs)?)?;
        self.keep(Some(b), Point::AltupPredict, &p.reshape((t, n * d))?);
        let pa = p.narrow(1, active, 1)?.squeeze(1)?;
        let h = self.norm(&pa, Role::AttnNorm, Some(b))?;
        self.keep(Some(b), Point::AttnNorm, &h);
        let lr = self.proj(
            &self.proj(&h, Role::LaurelLeft, b, false)?,
            Role::LaurelRight,
            b,
            false,
        )?;
        let l = (&h + self.norm(&lr, Role::LaurelNorm, Some(b))?)?;
        self.keep(Some(b), Point::Laurel, &l);
        let y = self.attention(&h, b, cache)?;
        self.keep(Some(b), Point::AttnOut, &y);
        let y = self.norm(&y, Role::PostAttnNorm, Some(b))?;
        self.keep(Some(b), Point::PostAttnNorm, &y);
        let r = ((&pa + y)? + l)?.affine(std::f64::consts::FRAC_1_SQRT_2, 0.0)?;
        self.keep(Some(b), Point::ResidAttn, &r);
        let h = self.norm(&r, Role::FfnNorm, Some(b))?;
        self.keep(Some(b), Point::FfnNorm, &h);
        let f = self.mlp(&h, b)?;
        self.keep(Some(b), Point::Down, &f);
        let f = self.norm(&f, Role::PostFfnNorm, Some(b))?;
        self.keep(Some(b), Point::PostFfnNorm, &f);
        let o = (r + f)?;
        self.keep(Some(b), Point::ResidFfn, &o);
        let mc = self.altup_router(&o, b)?;
        let coef = self
            .proj(&mc, Role::AltUpCorrect, b, false)?
            .affine(1.0, 1.0)?;
        let innovation = (&o - &pa)?;
        let corrected = (p + coef
            .unsqueeze(2)?
            .broadcast_mul(&innovation.unsqueeze(1)?)?)?;
        self.keep(
            Some(b),
            Point::AltupCorrect,
            &corrected.reshape((t, n * d))?,
        );
        let mut first = corrected.narrow(1, active, 1)?.squeeze(1)?;
        if a.correct_scale {
            first = first.broadcast_mul(self.w(Role::AltUpScale, Some(b))?)?;
            self.keep(Some(b), Point::AltupScale, &first);
        }
        // With one stream there is none after the first to add the per-layer input to.
        let (Some(all), Some(pl), true) = (per_layer, self.spec.per_layer_input, n > 1) else {
            return Ok(corrected.reshape((t, n * d))?);
        };
        let w = pl.width as usize;
        let g = self.proj(&first, Role::PleGate, b, false)?;
        self.keep(Some(b), Point::PleGate, &g);
        let ga = (self.act(&g)? * all.narrow(1, b * w, w)?)?;
        self.keep(Some(b), Point::PleAct, &ga);
        let yp = self.proj(&ga, Role::PleUp, b, false)?;
        self.keep(Some(b), Point::PleUp, &yp);
        let yp = self.norm(&yp, Role::PleNorm, Some(b))?;
        self.keep(Some(b), Point::PleNorm, &yp);
        // Into every stream after the first.
        let rest = corrected
            .narrow(1, 1, n - 1)?
            .broadcast_add(&yp.unsqueeze(1)?)?;
        let out = Tensor::cat(&[&corrected.narrow(1, 0, 1)?, &rest], 1)?.reshape((t, n * d))?;
        self.keep(Some(b), Point::PleResid, &out);
        Ok(out)
    }

    /// A layer under hyper-connections: each sublayer reads the streams weighed into one, and
    /// its output joins every stream by that stream's post gate. Pre-norm, sequential.
    fn hyper_layer(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        let (h, post) = self.stream_mix(x, HC_ATTN, Some(b))?;
        self.keep(Some(b), Point::HcAttnIn, &h);
        let h = self.norm(&h, Role::AttnNorm, Some(b))?;
        self.keep(Some(b), Point::AttnNorm, &h);
        let a = self.attention(&h, b, cache)?;
        self.keep(Some(b), Point::AttnOut, &a);
        let r = self.stream_add(x, &post, &a)?;
        self.keep(Some(b), Point::ResidAttn, &r);
        let ffn = self.spec.plan[b].ffn;
        let (h, post) = self.stream_mix(&r, HC_FFN, Some(b))?;
        self.keep(Some(b), Point::HcFfnIn, &h);
        let h = self.norm(&h, Role::FfnNorm, Some(b))?;
        self.keep(Some(b), Point::FfnNorm, &h);
        let m = match ffn {
            Ffn::Moe => self.moe_by_ids(&h, &h, b, Some(&cache.ids))?,
            Ffn::Dense => self.mlp(&h, b)?,
            other => {
                unreachable!("hyper-connections are read with MLPs and experts, not {other:?}")
            }
        };
        self.keep(
            Some(b),
            if ffn == Ffn::Moe {
                Point::Combine
            } else {
                Point::Down
            },
            &m,
        );
        let out = self.stream_add(&r, &post, &m)?;
        self.keep(Some(b), Point::ResidFfn, &out);
        Ok(out)
    }

    /// A layer under gated streams (Qwen4-Exp): each sublayer reads the streams' gated mean,
    /// normed in the mix (no norm of its own), and its output joins every stream by that
    /// stream's injection weight.
    fn gated_layer(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        let with_ple;
        let x = match &self.spec.ngram_ple {
            Some(p) if p.layers.contains(b as u64) => {
                with_ple = (x + self.ngram_ple(x, p, b, cache)?)?;
                self.keep(Some(b), Point::NgramResid, &with_ple);
                &with_ple
            }
            _ => x,
        };
        let (h, inject) = self.gated_mix(x, GS_ATTN, Some(b))?;
        self.keep(Some(b), Point::HcAttnIn, &h);
        let a = match self.spec.plan[b].mixer {
            Mixer::Attention(_) => self.attention(&h, b, cache)?,
            Mixer::DeltaNet => self.delta_net(&h, b, cache)?,
            other => unreachable!(
                "gated streams are read with attention and Gated DeltaNet, not {other:?}"
            ),
        };
        self.keep(Some(b), Point::AttnOut, &a);
        let r = self.stream_add(x, &inject, &a)?;
        self.keep(Some(b), Point::ResidAttn, &r);
        let (h, inject) = self.gated_mix(&r, GS_FFN, Some(b))?;
        self.keep(Some(b), Point::HcFfnIn, &h);
        let m = self.moe(&h, b)?;
        self.keep(Some(b), Point::Combine, &m);
        let out = self.stream_add(&r, &inject, &m)?;
        self.keep(Some(b), Point::ResidFfn, &out);
        Ok(out)
    }

    /// Qwen4-Exp's n-gram embeddings in layer `b`, what joins the streams `x` ([t, n · hidden]):
    /// the token's n-grams hashed into rows of the layer's table (read shard by shard), a value
    /// and per-stream keys from them, the value gated per stream by its match with the normed
    /// stream, plus a dilated convolution of the gated values, normed, through SiLU.
    fn ngram_ple(
        &self,
        x: &Tensor,
        p: &anatomy_core::spec::NgramPle,
        b: usize,
        cache: &mut Cache,
    ) -> Res<Tensor> {
        let (t, n, d) = (
            x.dim(0)?,
            self.spec.streams() as usize,
            self.spec.hidden as usize,
        );
        let nd = n * d;
        let i = p.index_of(b as u64).expect("a PLE layer");
        let (sizes, mult) = (p.head_sizes(i), p.multipliers(self.spec.vocab, i));
        let (reach, taps, dil) = (p.reach() as usize, p.kernel as usize, p.ngram as usize);
        let state = cache.ngram[b].get_or_insert_with(|| NgramState {
            ids: vec![p.eos; p.ngram as usize - 1],
            conv: vec![0.0; reach * nd],
        });
        let ids: Vec<u64> = cache.ids.iter().map(|&id| id as u64).collect();
        let shifted = p.shifted(&state.ids, &ids);
        let all: Vec<u64> = state.ids.iter().chain(&ids).copied().collect();
        state.ids = all[all.len() - state.ids.len()..].to_vec();
        // The table as saved, shard by shard: row r sits in shard r / size.
        let (size, _) = p.shards(p.rows(i));
        let hd = p.head_dim() as usize;
        let mut e = Vec::with_capacity(t * p.width as usize);
        for s in &shifted {
            for row in p.rows_of(s, &mult, sizes) {
                let name = self.name(
                    Role::NgramTable,
                    false,
                    Some(b),
                    Some((row / size) as usize),
                );
                let shard = self.weights.get(&name)?;
                e.extend(vec(&shard
                    .narrow(0, (row % size) as usize, 1)?
                    .flatten_all()?)?);
            }
        }
        debug_assert_eq!(e.len(), t * p.heads() as usize * hd);
        let e = Tensor::from_vec(e, (t, p.width as usize), &Device::Cpu)?;
        self.keep(Some(b), Point::NgramEmbed, &e);
        let grouped = |x: &Tensor, role| self.grouped_norm(x, role, Some(b), n);
        let v = self.proj(&e, Role::NgramValue, b, false)?;
        let k = grouped(
            &self.proj(&e, Role::NgramKey, b, false)?,
            Role::NgramNormKey,
        )?;
        let q = grouped(x, Role::NgramNormQuery)?;
        let g: Vec<f32> = (k * q)?
            .reshape((t, n, d))?
            .sum(2)?
            .affine(1.0 / (d as f64).sqrt(), 0.0)?
            .flatten_all()?
            .to_vec1()?;
        let g: Vec<f32> = g
            .iter()
            // torch's sign(0) is 0; Rust's signum(0.0) is 1.
            .map(|&g| g.abs().max(1e-6).sqrt() * if g == 0.0 { 0.0 } else { g.signum() })
            .collect();
        let g = sigmoid(&Tensor::from_vec(g, (t, n, 1), &Device::Cpu)?)?;
        let u = g.broadcast_mul(&v.unsqueeze(1)?)?.reshape((t, nd))?;
        self.keep(Some(b), Point::NgramGated, &u);
        let un = vec(&grouped(&u, Role::NgramNormConv)?)?;
        // The dilated causal convolution over the carried inputs and these.
        let w = vec(self.w(Role::NgramConv, Some(b))?)?; // [nd, taps]
        let state = cache.ngram[b].as_mut().expect("made above");
        let seq: Vec<f32> = state.conv.iter().chain(&un).copied().collect();
        let mut c = vec![0f32; t * nd];
        for s in 0..t {
            for ch in 0..nd {
                let mut acc = 0f32;
                for j in 0..taps {
                    // Tap j reads the input (taps − 1 − j) · dilation before this one.
                    let at = reach + s - (taps - 1 - j) * dil;
                    acc += w[ch * taps + j] * seq[at * nd + ch];
                }
                c[s * nd + ch] = acc / (1.0 + (-acc).exp());
            }
        }
        state.conv = seq[seq.len() - reach * nd..].to_vec();
        let c = Tensor::from_vec(c, (t, nd), &Device::Cpu)?;
        self.keep(Some(b), Point::NgramConv, &c);
        Ok((u + c)?)
    }

    /// The `n` streams `x` ([t, n · hidden]) each RMS-normed on its own, and all n · hidden
    /// features scaled by (1 + w), w the weight of `role` (Qwen4-Exp's grouped norms).
    fn grouped_norm(&self, x: &Tensor, role: Role, b: Option<usize>, n: usize) -> Res<Tensor> {
        let (t, nd) = x.dims2()?;
        let xs = x.reshape((t, n, nd / n))?;
        let inv = (xs.sqr()?.mean_keepdim(2)? + self.spec.norm.eps)?
            .sqrt()?
            .recip()?;
        let w = (self.w(role, b)? + 1.0)?;
        Ok(xs
            .broadcast_mul(&inv)?
            .reshape((t, nd))?
            .broadcast_mul(&w)?)
    }

    /// A gated-stream mix of the streams `x` ([t, n · hidden]): each stream RMS-normed, all
    /// n · hidden features scaled by (1 + w); a = σ(W_up · silu(W_down · x̂ / n)); the mean over
    /// the streams of a ⊙ x̂ [t, hidden]; before a sublayer also the injection weights
    /// 2σ(W_inject · x̂ / n) [t, n].
    fn gated_mix(
        &self,
        x: &Tensor,
        (norm, down, up, inject): GsRoles,
        b: Option<usize>,
    ) -> Res<(Tensor, Option<PostGates>)> {
        let g = self.spec.gated_streams.expect("gated streams in the Spec");
        let (t, n, d) = (x.dim(0)?, g.streams as usize, self.spec.hidden as usize);
        let xn = self.grouped_norm(x, norm, b, n)?;
        let (normed, gates, injected) = match norm {
            Role::GsAttnNorm => (
                Point::GsAttnNorm,
                Point::GsAttnGates,
                Some(Point::GsAttnInject),
            ),
            Role::GsFfnNorm => (
                Point::GsFfnNorm,
                Point::GsFfnGates,
                Some(Point::GsFfnInject),
            ),
            Role::GsHeadNorm => (Point::GsHeadNorm, Point::GsHeadGates, None),
            other => unreachable!("{other:?} is not a gated-stream mix's norm"),
        };
        self.keep(b, normed, &xn);
        let k = 1.0 / n as f64;
        let low = self
            .linear(&xn, &self.name(down, false, b, None), None)?
            .affine(k, 0.0)?
            .silu()?;
        let a = sigmoid(&self.linear(&low, &self.name(up, false, b, None), None)?)?;
        self.keep(b, gates, &a);
        let h = (a * &xn)?.reshape((t, n, d))?.mean(1)?;
        let post = match inject {
            Some(role) => {
                let z = self
                    .linear(&xn, &self.name(role, false, b, None), None)?
                    .affine(k, 0.0)?;
                let g = sigmoid(&z)?.affine(2.0, 0.0)?;
                if let Some(p) = injected {
                    self.keep(b, p, &g);
                }
                Some((g, None))
            }
            None => None,
        };
        Ok((h, post))
    }

    /// A hyper-connection mix of the streams `x` ([t, n · hidden]): their logits (2n before a
    /// sublayer, n in the head) from the RMS-scaled streams, the pre gates' weighing of the
    /// streams into one [t, hidden], and (before a sublayer) the post gates [t, n].
    fn stream_mix(
        &self,
        x: &Tensor,
        (w, base, scale): (Role, Role, Role),
        b: Option<usize>,
    ) -> Res<(Tensor, Option<PostGates>)> {
        let point = match w {
            Role::HcAttnFn => Point::HcAttnLogits,
            Role::HcFfnFn => Point::HcFfnLogits,
            Role::HcHeadFn => Point::HcHeadLogits,
            other => unreachable!("{other:?} is not a hyper-connection's logit weight"),
        };
        let hc = self.spec.hyper.expect("hyper-connections in the Spec");
        let (t, n, d) = (x.dim(0)?, hc.streams as usize, self.spec.hidden as usize);
        let inv = (x.sqr()?.mean_keepdim(1)? + self.spec.norm.eps)?
            .sqrt()?
            .recip()?;
        let m = self
            .linear(x, &self.name(w, false, b, None), None)?
            .broadcast_mul(&inv)?;
        self.keep(b, point, &m);
        let (base, scale) = (self.w(base, b)?, vec(self.w(scale, b)?)?);
        let gate = |from: usize, s: f32| -> Res<Tensor> {
            let z = m.narrow(1, from, n)?.affine(s as f64, 0.0)?;
            Ok(sigmoid(&z.broadcast_add(&base.narrow(0, from, n)?)?)?)
        };
        let pre = gate(0, scale[0])?.affine(1.0, hc.eps)?;
        let post = match (b, hc.sinkhorn) {
            (None, _) => None,
            (Some(_), None) => Some((gate(n, scale[1])?.affine(hc.magnitude, hc.eps)?, None)),
            // DeepSeek-V4: post without ε, and the streams' mix C made doubly stochastic.
            (Some(_), Some(iters)) => {
                let post = gate(n, scale[1])?.affine(hc.magnitude, 0.0)?;
                let z = m
                    .narrow(1, 2 * n, n * n)?
                    .affine(scale[2] as f64, 0.0)?
                    .broadcast_add(&base.narrow(0, 2 * n, n * n)?)?
                    .reshape((t, n, n))?;
                let z = z.broadcast_sub(&z.max_keepdim(2)?)?.exp()?;
                let mut c = z.broadcast_div(&z.sum_keepdim(2)?)?.affine(1.0, hc.eps)?;
                let cols = |c: &Tensor| -> R<Tensor> {
                    c.broadcast_div(&c.sum_keepdim(1)?.affine(1.0, hc.eps)?)
                };
                c = cols(&c)?;
                for _ in 1..iters {
                    c = c.broadcast_div(&c.sum_keepdim(2)?.affine(1.0, hc.eps)?)?;
                    c = cols(&c)?;
                }
                Some((post, Some(c)))
            }
        };
        let h = x
            .reshape((t, n, d))?
            .broadcast_mul(&pre.unsqueeze(2)?)?
            .sum(1)?;
        Ok((h, post))
    }

    /// Every stream plus a sublayer's output `y` [t, hidden] times its post gate [t, n].
    fn stream_add(&self, x: &Tensor, post: &Option<PostGates>, y: &Tensor) -> Res<Tensor> {
        let (post, comb) = post.as_ref().expect("a sublayer's mix has post gates");
        let (t, n) = post.dims2()?;
        let d = y.dim(1)?;
        let add = post.unsqueeze(2)?.broadcast_mul(&y.unsqueeze(1)?)?;
        let x = x.reshape((t, n, d))?;
        // DeepSeek-V4: stream i becomes Σⱼ C[j, i] · Xⱼ before the output joins it.
        let x = match comb {
            Some(c) => c.transpose(1, 2)?.contiguous()?.matmul(&x)?,
            None => x,
        };
        Ok((x + add)?.reshape((t, n * d))?)
    }

    /// Mamba2's mixer: the input projection split into the gate z, the convolved x, B, C and
    /// the step Δ per head; the convolution and SiLU; the scan through the layer's state; the
    /// gated, grouped RMS norm; the output projection.
    fn mamba2(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        let s = self.spec.ssm.as_ref().expect("a Mamba2 layer has its Ssm");
        let (t, inner, conv_dim) = (x.dim(0)?, s.inner() as usize, s.conv_dim() as usize);
        let (heads, n, groups) = (s.heads as usize, s.state as usize, s.groups as usize);
        let mut p = self.proj(x, Role::SsmIn, b, s.bias)?;
        if s.part_mults != [1.0; 5] {
            // Falcon-H1's μP multipliers, one per part: z, x, B, C, Δ.
            let gn = groups * n;
            let widths = [inner, inner, gn, gn, heads];
            let scale: Vec<f32> = widths
                .iter()
                .zip(s.part_mults)
                .flat_map(|(&w, m)| std::iter::repeat_n(m as f32, w))
                .collect();
            let len = scale.len();
            p = p.broadcast_mul(&Tensor::from_vec(scale, len, &Device::Cpu)?)?;
        }
        let z = p.narrow(1, 0, inner)?;
        let u = p.narrow(1, inner, conv_dim)?.contiguous()?;
        let dt = p.narrow(1, inner + conv_dim, heads)?;
        let state = cache.ssm[b].get_or_insert_with(|| {
            SsmState::new(
                s.conv_kernel as usize,
                conv_dim,
                heads,
                s.head_dim as usize,
                n,
            )
        });
        let conv_bias = if s.conv_bias {
            Some(vec(self.bias(Role::SsmConv, Some(b))?)?)
        } else {
            None
        };
        let w = vec(self.w(Role::SsmConv, Some(b))?)?;
        let conv = ssm::causal_conv(
            &vec(&u)?,
            &mut state.conv,
            &w,
            conv_bias.as_deref(),
            conv_dim,
        );
        let conv = Tensor::from_vec(conv, (t, conv_dim), &Device::Cpu)?.silu()?;
        self.keep(Some(b), Point::SsmConv, &conv);
        let xs = conv.narrow(1, 0, inner)?;
        let bm = conv.narrow(1, inner, groups * n)?;
        let cm = conv.narrow(1, inner + groups * n, groups * n)?;
        let mut dt = softplus(&dt.broadcast_add(self.w(Role::SsmDtBias, Some(b))?)?)?;
        if s.dt_floor > 0.0 {
            dt = dt.maximum(s.dt_floor)?;
        }
        self.keep(Some(b), Point::SsmDt, &dt);
        let a: Vec<f32> = vec(self.w(Role::SsmALog, Some(b))?)?
            .iter()
            .map(|l| -l.exp())
            .collect();
        let dims = ssm::Dims {
            heads,
            head_dim: s.head_dim as usize,
            n,
            groups,
        };
        let (xs, dt, bm, cm) = (vec(&xs)?, vec(&dt)?, vec(&bm)?, vec(&cm)?);
        let d = vec(self.w(Role::SsmD, Some(b))?)?;
        let inputs = ssm::Inputs {
            x: &xs,
            dt: &dt,
            a: &a,
            b: &bm,
            c: &cm,
            d: &d,
        };
        // A prompt chunk by chunk, as transformers computes one; a decoded token through the
        // recurrence (the same sums).
        let y = if t > 1 {
            ssm::scan_chunked(&inputs, &mut state.h, dims, SSD_CHUNK)?
        } else {
            ssm::scan(&inputs, &mut state.h, dims)
        };
        if self.capturing() {
            let h = Tensor::from_vec(
                state.h.clone(),
                (heads * s.head_dim as usize, n),
                &Device::Cpu,
            )?;
            self.keep(Some(b), Point::SsmState, &h);
        }
        let y = Tensor::from_vec(y, (t, inner), &Device::Cpu)?;
        self.keep(Some(b), Point::SsmScan, &y);
        // RMS-normed per group, scaled by the norm's weight, and gated: the gate first (Mamba2),
        // after, or alone.
        let normed = |y: &Tensor| -> Res<Tensor> {
            let y = rms(&y.reshape((t, groups, inner / groups))?, s.eps)?.reshape((t, inner))?;
            Ok(y.broadcast_mul(self.w(Role::SsmNorm, Some(b))?)?)
        };
        let g = match s.gate {
            SsmGate::NormAfter => normed(&(y * z.silu()?)?)?,
            SsmGate::NormBefore => (normed(&y)? * z.silu()?)?,
            SsmGate::Plain => (y * z.silu()?)?,
        };
        self.keep(Some(b), Point::SsmNorm, &g);
        self.proj(&g, Role::SsmOut, b, s.bias)
    }

    /// Mamba's selective scan: x and the gate from one projection; the convolution and SiLU;
    /// the step, B and C from x (RMS-normed without weights in Falcon-Mamba); Δ per channel;
    /// the scan through a state per channel; the gate; the output projection.
    fn mamba(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        let s = self.spec.s6.as_ref().expect("a Mamba layer has its S6");
        let (t, i, n, r) = (
            x.dim(0)?,
            s.inner as usize,
            s.state as usize,
            s.dt_rank as usize,
        );
        let p = self.proj(x, Role::SsmIn, b, s.bias)?;
        let (u, z) = if s.interleaved {
            // Zamba: x and z alternate channel by channel.
            let p = p.reshape((t, i, 2))?;
            (
                p.narrow(2, 0, 1)?.reshape((t, i))?.contiguous()?,
                p.narrow(2, 1, 1)?.reshape((t, i))?,
            )
        } else {
            (p.narrow(1, 0, i)?.contiguous()?, p.narrow(1, i, i)?)
        };
        let state =
            cache.ssm[b].get_or_insert_with(|| SsmState::new(s.conv_kernel as usize, i, i, 1, n));
        let conv_bias = if s.conv_bias {
            Some(vec(self.bias(Role::SsmConv, Some(b))?)?)
        } else {
            None
        };
        let w = vec(self.w(Role::SsmConv, Some(b))?)?;
        let conv = ssm::causal_conv(&vec(&u)?, &mut state.conv, &w, conv_bias.as_deref(), i);
        let xs = Tensor::from_vec(conv, (t, i), &Device::Cpu)?.silu()?;
        self.keep(Some(b), Point::SsmConv, &xs);
        if s.heads > 1 {
            return self.mamba_heads(&xs, &z, b, state);
        }
        let sel = self.proj(&xs, Role::SsmX, b, false)?;
        // The step's input, B and C, each RMS-normed where the model does (with its weight
        // where stored).
        let part = |start, len, role| -> Res<Tensor> {
            let p = sel.narrow(1, start, len)?.contiguous()?;
            Ok(match s.bcdt_norm {
                Some(nm) if nm.weighted => {
                    rms(&p, nm.eps)?.broadcast_mul(self.w(role, Some(b))?)?
                }
                Some(nm) => rms(&p, nm.eps)?,
                None => p,
            })
        };
        let (step, bm, cm) = (
            part(0, r, Role::SsmDtNorm)?,
            part(r, n, Role::SsmBNorm)?,
            part(r + n, n, Role::SsmCNorm)?,
        );
        let dt = softplus(&self.proj(&step, Role::SsmDt, b, true)?)?;
        self.keep(Some(b), Point::SsmDt, &dt);
        self.s6_scan(&xs, &dt, &bm, &cm, &z, 1, b, state)
    }

    /// Zamba's multi-head Mamba after its convolution (`xs`): each head projects its channels
    /// to its own step input, B and C, and the step input to a step per channel; the scan runs
    /// per channel, each head's channels sharing its B and C.
    fn mamba_heads(&self, xs: &Tensor, z: &Tensor, b: usize, state: &mut SsmState) -> Res<Tensor> {
        let s = self.spec.s6.as_ref().expect("a Mamba layer has its S6");
        let (i, n, r, h) = (
            s.inner as usize,
            s.state as usize,
            s.dt_rank as usize,
            s.heads as usize,
        );
        let hd = i / h;
        let (wx, wdt) = (self.w(Role::SsmX, Some(b))?, self.w(Role::SsmDt, Some(b))?);
        let bdt = self.bias(Role::SsmDt, Some(b))?;
        let (mut dts, mut bs, mut cs) = (Vec::new(), Vec::new(), Vec::new());
        for head in 0..h {
            let x = xs.narrow(1, head * hd, hd)?;
            let sel = x.matmul(&wx.get(head)?.t()?)?;
            let step = sel.narrow(1, 0, r)?;
            bs.push(sel.narrow(1, r, n)?);
            cs.push(sel.narrow(1, r + n, n)?);
            let dt = step
                .matmul(&wdt.get(head)?.t()?)?
                .broadcast_add(&bdt.get(head)?)?;
            dts.push(softplus(&dt)?);
        }
        let dt = Tensor::cat(&dts, 1)?;
        self.keep(Some(b), Point::SsmDt, &dt);
        let (bm, cm) = (Tensor::cat(&bs, 1)?, Tensor::cat(&cs, 1)?);
        // Head h's channels share its B and C.
        self.s6_scan(xs, &dt, &bm, &cm, z, h, b, state)
    }

    /// Mamba's selective scan after the step (`dt`, per channel), B and C (per group of
    /// channels): every channel a "head" of one, its state decaying at a rate per state entry;
    /// the read-out gated by SiLU(z) and projected back.
    #[allow(clippy::too_many_arguments)]
    fn s6_scan(
        &self,
        xs: &Tensor,
        dt: &Tensor,
        bm: &Tensor,
        cm: &Tensor,
        z: &Tensor,
        groups: usize,
        b: usize,
        state: &mut SsmState,
    ) -> Res<Tensor> {
        let s = self.spec.s6.as_ref().expect("a Mamba layer has its S6");
        let (t, i, n) = (xs.dim(0)?, s.inner as usize, s.state as usize);
        let a: Vec<f32> = vec(self.w(Role::SsmALog, Some(b))?)?
            .iter()
            .map(|l| -l.exp())
            .collect();
        let (xv, dt, bm, cm) = (vec(xs)?, vec(dt)?, vec(bm)?, vec(cm)?);
        let d = vec(self.w(Role::SsmD, Some(b))?)?;
        let inputs = ssm::Inputs {
            x: &xv,
            dt: &dt,
            a: &a,
            b: &bm,
            c: &cm,
            d: &d,
        };
        let dims = ssm::Dims {
            heads: i,
            head_dim: 1,
            n,
            groups,
        };
        let y = ssm::scan(&inputs, &mut state.h, dims);
        if self.capturing() {
            let h = Tensor::from_vec(state.h.clone(), (i, n), &Device::Cpu)?;
            self.keep(Some(b), Point::SsmState, &h);
        }
        let y = Tensor::from_vec(y, (t, i), &Device::Cpu)?;
        self.keep(Some(b), Point::SsmScan, &y);
        let g = (y * z.silu()?)?;
        self.proj(&g, Role::SsmOut, b, s.bias)
    }

    /// xLSTM's mLSTM: q, k, v and the output gate; each head's input and forget gates,
    /// soft-capped; then per token and head the stabilized matrix-memory update and read-out
    /// (`Spec::MLstm`), a LayerNorm per head, the gate and the output projection.
    fn mlstm(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        let s = self.spec.mlstm.expect("an mLSTM layer has its settings");
        let (t, h) = (x.dim(0)?, s.heads as usize);
        let (dk, dv) = (s.qk_dim as usize / h, s.v_dim as usize / h);
        let cap = |v: Tensor| -> Res<Tensor> { Ok(softcap(&v, s.gate_cap)?) };
        let (qk, vd) = (s.qk_dim as usize, s.v_dim as usize);
        let (q, k, v, o, ig, fg) = if s.fused {
            // q | k | v | o from one projection; the input, then the forget gates from another.
            let p = self.proj(x, Role::SsmIn, b, s.bias)?;
            let g = cap(self.proj(x, Role::SsmBa, b, true)?)?;
            (
                p.narrow(1, 0, qk)?,
                p.narrow(1, qk, qk)?,
                p.narrow(1, 2 * qk, vd)?,
                p.narrow(1, 2 * qk + vd, vd)?,
                g.narrow(1, 0, h)?,
                g.narrow(1, h, h)?,
            )
        } else {
            (
                self.proj(x, Role::SsmQ, b, s.bias)?,
                self.proj(x, Role::SsmK, b, s.bias)?,
                self.proj(x, Role::SsmV, b, s.bias)?,
                self.proj(x, Role::SsmZ, b, s.bias)?,
                cap(self.proj(x, Role::SsmBeta, b, true)?)?,
                cap(self.proj(x, Role::SsmAlpha, b, true)?)?,
            )
        };
        let (q, k, v) = (vec(&q)?, vec(&k)?, vec(&v)?);
        let (ig, fg) = (vec(&ig)?, vec(&fg)?);
        // Per head: the memory [dk, dv], the normalizer [dk] and the stabilizer, in f64.
        let per = dk * dv + dk + 1;
        let state = cache.ssm[b].get_or_insert_with(|| {
            let mut st = SsmState::new(1, 0, 0, 0, 0);
            st.memory = vec![0.0; h * per];
            st
        });
        let dims = ssm::MLstmDims {
            heads: h,
            key_dim: dk,
            value_dim: dv,
            eps: s.eps,
        };
        // A prompt chunk by chunk, a decoded token through the loop (the same sums).
        let out = if t > 1 {
            ssm::mlstm_chunked(&q, &k, &v, &ig, &fg, &mut state.memory, dims, SSD_CHUNK)?
        } else {
            ssm::mlstm(&q, &k, &v, &ig, &fg, &mut state.memory, dims)
        };
        let y = Tensor::from_vec(out, (t, h, dv), &Device::Cpu)?;
        self.keep(Some(b), Point::SsmScan, &y.reshape((t, h * dv))?);
        // LayerNorm per head, then the norm's weight and its bias where it has one.
        let mean = y.mean_keepdim(2)?;
        let c = y.broadcast_sub(&mean)?;
        let var = c.sqr()?.mean_keepdim(2)?;
        let mut y = c
            .broadcast_div(&(var + s.norm_eps)?.sqrt()?)?
            .reshape((t, h * dv))?
            .broadcast_mul(self.w(Role::SsmNorm, Some(b))?)?;
        if s.bias {
            y = y.broadcast_add(self.bias(Role::SsmNorm, Some(b))?)?;
        }
        self.keep(Some(b), Point::SsmNorm, &y);
        let g = (y * sigmoid(&o)?)?;
        self.proj(&g, Role::SsmOut, b, s.bias)
    }

    /// LFM2's short convolution: B, C and x from one projection, B ⊙ x convolved through the
    /// layer's window, gated by C, projected back.
    fn short_conv(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        let c = self
            .spec
            .short_conv
            .expect("a short-convolution layer has its settings");
        let (t, d) = (x.dim(0)?, self.spec.hidden as usize);
        let p = self.proj(x, Role::SsmIn, b, c.bias)?;
        let (bg, cg, xs) = (
            p.narrow(1, 0, d)?,
            p.narrow(1, d, d)?,
            p.narrow(1, 2 * d, d)?,
        );
        let u = (bg * xs)?;
        let state =
            cache.ssm[b].get_or_insert_with(|| SsmState::new(c.kernel as usize, d, 0, 0, 0));
        let bias = if c.bias {
            Some(vec(self.bias(Role::SsmConv, Some(b))?)?)
        } else {
            None
        };
        let w = vec(self.w(Role::SsmConv, Some(b))?)?;
        let conv = ssm::causal_conv(&vec(&u)?, &mut state.conv, &w, bias.as_deref(), d);
        let conv = Tensor::from_vec(conv, (t, d), &Device::Cpu)?;
        self.keep(Some(b), Point::ConvOut, &conv);
        self.proj(&(cg * conv)?, Role::SsmOut, b, c.bias)
    }

    /// Gated DeltaNet: Q, K, V, z, β₀ and α₀ from the input projections, the convolution over
    /// Q, K and V through the layer's window, L2-normed Q and K, the delta rule through the
    /// layer's memory, the per-head norm gated by SiLU(z), projected back.
    fn delta_net(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        let s = self
            .spec
            .delta
            .expect("a Gated DeltaNet layer has its settings");
        let t = x.dim(0)?;
        let (kh, vh, dk, dv) = (
            s.key_heads as usize,
            s.value_heads as usize,
            s.key_dim as usize,
            s.value_dim as usize,
        );
        let (keys, values, conv_dim, r) = (kh * dk, vh * dv, s.conv_dim() as usize, vh / kh);
        // Per layout: U = [Q | K | V] before the convolution, the output gate before its
        // activation, β before its sigmoid, and the decay's step (α per head, or F per key
        // channel).
        let (u, gate, beta, step) = match s.store {
            DeltaStore::Grouped => {
                // Per key head: q, k, its value heads' v, their z; and their β, then their α.
                let p =
                    self.proj(x, Role::SsmIn, b, false)?
                        .reshape((t, kh, 2 * dk + 2 * r * dv))?;
                let part = |at: usize, len: usize| -> R<Tensor> {
                    p.narrow(2, at, len)?.contiguous()?.reshape((t, kh * len))
                };
                let ba = self
                    .proj(x, Role::SsmBa, b, false)?
                    .reshape((t, kh, 2 * r))?;
                let half = |at: usize| -> R<Tensor> {
                    ba.narrow(2, at, r)?.contiguous()?.reshape((t, vh))
                };
                let qkv = Tensor::cat(&[part(0, dk)?, part(dk, dk)?, part(2 * dk, r * dv)?], 1)?;
                (qkv, part(2 * dk + r * dv, r * dv)?, half(0)?, half(r)?)
            }
            DeltaStore::Separate => (
                self.proj(x, Role::SsmIn, b, false)?,
                self.proj(x, Role::SsmZ, b, false)?,
                self.proj(x, Role::SsmBeta, b, false)?,
                self.proj(x, Role::SsmAlpha, b, false)?,
            ),
            DeltaStore::Fused => {
                // One projection: q | k | v, then z, β and α.
                let p = self.proj(x, Role::SsmIn, b, false)?;
                (
                    p.narrow(1, 0, conv_dim)?,
                    p.narrow(1, conv_dim, values)?,
                    p.narrow(1, conv_dim + values, vh)?,
                    p.narrow(1, conv_dim + values + vh, vh)?,
                )
            }
            DeltaStore::Olmo => (
                Tensor::cat(
                    &[
                        self.proj(x, Role::SsmQ, b, false)?,
                        self.proj(x, Role::SsmK, b, false)?,
                        self.proj(x, Role::SsmV, b, false)?,
                    ],
                    1,
                )?,
                self.proj(x, Role::SsmZ, b, false)?,
                self.proj(x, Role::SsmBeta, b, false)?,
                self.proj(x, Role::SsmAlpha, b, false)?,
            ),
            DeltaStore::Kimi | DeltaStore::Bailing => {
                // Kimi's gates through a rank-d_k latent, Ling's straight from the input.
                let low_rank = |down: Role, up: Role| -> Res<Tensor> {
                    if s.store == DeltaStore::Bailing {
                        return self.proj(x, up, b, false);
                    }
                    let latent = self.proj(x, down, b, false)?;
                    self.proj(&latent, up, b, false)
                };
                let qkv = Tensor::cat(
                    &[
                        self.proj(x, Role::SsmQ, b, false)?,
                        self.proj(x, Role::SsmK, b, false)?,
                        self.proj(x, Role::SsmV, b, false)?,
                    ],
                    1,
                )?;
                (
                    qkv,
                    low_rank(Role::SsmGA, Role::SsmGB)?,
                    self.proj(x, Role::SsmBeta, b, false)?,
                    low_rank(Role::SsmFA, Role::SsmFB)?,
                )
            }
        };
        let state = cache.ssm[b]
            .get_or_insert_with(|| SsmState::delta(s.conv_kernel as usize, conv_dim, vh, dk, dv));
        let w = if s.split_qkv() {
            // One convolution over the three, their weights side by side.
            [Role::SsmConvQ, Role::SsmConvK, Role::SsmConvV]
                .into_iter()
                .map(|role| Ok(vec(self.w(role, Some(b))?)?))
                .collect::<Res<Vec<_>>>()?
                .concat()
        } else {
            vec(self.w(Role::SsmConv, Some(b))?)?
        };
        let conv = ssm::causal_conv(&vec(&u)?, &mut state.conv, &w, None, conv_dim);
        let conv = Tensor::from_vec(conv, (t, conv_dim), &Device::Cpu)?.silu()?;
        self.keep(Some(b), Point::SsmConv, &conv);
        // Each head scaled to unit length (ε inside the sum of squares), queries by 1/√dk too.
        let l2 = |x: Tensor| -> R<Tensor> {
            let x = x.reshape((t, kh, dk))?;
            x.broadcast_div(&(x.sqr()?.sum_keepdim(D::Minus1)? + 1e-6)?.sqrt()?)?
                .reshape((t, keys))
        };
        let q = l2(conv.narrow(1, 0, keys)?)?.affine(1.0 / (dk as f64).sqrt(), 0.0)?;
        let k = l2(conv.narrow(1, keys, keys)?)?;
        let v = conv.narrow(1, 2 * keys, values)?;
        let beta = sigmoid(&beta)?.affine(s.beta_scale, 0.0)?;
        // −exp(A_log) · softplus(step + b_dt): per head, or per key channel at its head's rate;
        // or bounded, floor · σ(exp(A_log) · (step + b_dt)) (Ling's).
        let rate: Tensor = self.w(Role::SsmALog, Some(b))?.exp()?;
        let step = step.broadcast_add(self.w(Role::SsmDtBias, Some(b))?)?;
        let g = if s.channel_decay() {
            let scaled = step
                .reshape((t, vh, dk))?
                .broadcast_mul(&rate.reshape((1, vh, 1))?)?
                .reshape((t, vh * dk))?;
            match s.gate_floor {
                Some(floor) => sigmoid(&scaled)?.affine(floor, 0.0)?,
                None => softplus(&step)?
                    .reshape((t, vh, dk))?
                    .broadcast_mul(&rate.neg()?.reshape((1, vh, 1))?)?
                    .reshape((t, vh * dk))?,
            }
        } else {
            softplus(&step)?.broadcast_mul(&rate.neg()?)?
        };
        self.keep(Some(b), Point::DeltaDecay, &g);
        let dims = ssm::DeltaDims {
            key_heads: kh,
            value_heads: vh,
            key_dim: dk,
            value_dim: dv,
            channel_decay: s.channel_decay(),
        };
        let (q, k, v, g, beta) = (vec(&q)?, vec(&k)?, vec(&v)?, vec(&g)?, vec(&beta)?);
        // A prompt chunk by chunk, as transformers computes one; a decoded token through the rule.
        let mem = &mut state.memory;
        let o = match (t > 1, s.channel_decay()) {
            (true, false) => ssm::delta_rule_chunked(&q, &k, &v, &g, &beta, mem, dims, SSD_CHUNK)?,
            (true, true) => {
                ssm::delta_rule_chunked_channels(&q, &k, &v, &g, &beta, mem, dims, SSD_CHUNK)?
            }
            (false, _) => ssm::delta_rule(&q, &k, &v, &g, &beta, mem, dims),
        };
        if self.capturing() {
            let m: Vec<f32> = state.memory.iter().map(|&x| x as f32).collect();
            let m = Tensor::from_vec(m, (vh * dk, dv), &Device::Cpu)?;
            self.keep(Some(b), Point::SsmState, &m);
        }
        let o = Tensor::from_vec(o, (t, vh, dv), &Device::Cpu)?;
        self.keep(Some(b), Point::SsmScan, &o.reshape((t, values))?);
        // RMS-normed per head, scaled by the weight the heads share, gated by SiLU(z) (σ(G) in
        // Kimi's).
        let o = rms(&o, s.eps)?.broadcast_mul(self.w(Role::SsmNorm, Some(b))?)?;
        let gate = gate.reshape((t, vh, dv))?;
        let gate = match s.store {
            _ if s.sigmoid_gate => sigmoid(&gate)?,
            DeltaStore::Grouped | DeltaStore::Separate | DeltaStore::Fused | DeltaStore::Olmo => {
                gate.silu()?
            }
            DeltaStore::Kimi | DeltaStore::Bailing => sigmoid(&gate)?,
        };
        let o = (o * gate)?.reshape((t, values))?;
        self.keep(Some(b), Point::SsmNorm, &o);
        self.proj(&o, Role::SsmOut, b, false)
    }

    /// `x` ([T, C]) beside each token's previous one, that of the last call coming from (and
    /// the last token going to) `past`.
    fn shifted(x: &Tensor, past: &mut [f32]) -> Res<Tensor> {
        let (t, c) = (x.dim(0)?, x.dim(1)?);
        let xs = vec(x)?;
        let mut prev = Vec::with_capacity(t * c);
        prev.extend_from_slice(past);
        prev.extend_from_slice(&xs[..(t - 1) * c]);
        past.copy_from_slice(&xs[(t - 1) * c..]);
        Ok(Tensor::from_vec(prev, (t, c), &Device::Cpu)?)
    }

    /// μ ⊙ x + (1 − μ) ⊙ x₋₁, μ stored [1, 1, C].
    fn token_mix(&self, x: &Tensor, prev: &Tensor, role: Role, b: usize) -> Res<Tensor> {
        let mu = self.w(role, Some(b))?.flatten_all()?;
        Ok((x.broadcast_mul(&mu)? + prev.broadcast_mul(&mu.affine(-1.0, 1.0)?)?)?)
    }

    /// RWKV's time mixing: the token shift, the three mixes, K, V and σ(R), the WKV
    /// recurrence through the layer's sums, the output projection.
    fn rwkv_time_mix(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        let r = self.spec.rwkv.expect("an RWKV layer has its settings");
        let (d, a) = (self.spec.hidden as usize, r.attn as usize);
        let state = cache.ssm[b].get_or_insert_with(|| SsmState::rwkv(d, a));
        let prev = Self::shifted(x, &mut state.conv[..d])?;
        let k = self.proj(
            &self.token_mix(x, &prev, Role::TmMixK, b)?,
            Role::TmKey,
            b,
            false,
        )?;
        let v = self.proj(
            &self.token_mix(x, &prev, Role::TmMixV, b)?,
            Role::TmValue,
            b,
            false,
        )?;
        let rec = self.proj(
            &self.token_mix(x, &prev, Role::TmMixR, b)?,
            Role::TmReceptance,
            b,
            false,
        )?;
        let w: Vec<f32> = vec(self.w(Role::TmDecay, Some(b))?)?
            .iter()
            .map(|x| -x.exp())
            .collect();
        let u = vec(self.w(Role::TmFirst, Some(b))?)?;
        let o = ssm::wkv(&vec(&k)?, &vec(&v)?, &w, &u, &mut state.h);
        if self.capturing() {
            let s = Tensor::from_vec(state.h.clone(), (3, a), &Device::Cpu)?.t()?;
            self.keep(Some(b), Point::SsmState, &s.contiguous()?);
        }
        let o = Tensor::from_vec(o, (x.dim(0)?, a), &Device::Cpu)?;
        self.keep(Some(b), Point::SsmScan, &o);
        let o = (sigmoid(&rec)? * o)?;
        self.proj(&o, Role::TmOutput, b, false)
    }

    /// RWKV's channel mixing: the token shift, two mixes, σ(R) ⊙ W_v ReLU(W_k x)².
    fn rwkv_channel_mix(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        let r = self.spec.rwkv.expect("an RWKV layer has its settings");
        let (d, a) = (self.spec.hidden as usize, r.attn as usize);
        let state = cache.ssm[b].get_or_insert_with(|| SsmState::rwkv(d, a));
        let prev = Self::shifted(x, &mut state.conv[d..])?;
        let k = self.proj(
            &self.token_mix(x, &prev, Role::CmMixK, b)?,
            Role::Up,
            b,
            false,
        )?;
        let h = k.relu()?.sqr()?;
        let rec = self.proj(
            &self.token_mix(x, &prev, Role::CmMixR, b)?,
            Role::CmReceptance,
            b,
            false,
        )?;
        Ok((sigmoid(&rec)? * self.proj(&h, Role::Down, b, false)?)?)
    }

    /// Griffin's recurrent block: the gate branch; x projected and convolved; the RG-LRU's
    /// gates from block-diagonal projections, its decay and normalized input; the recurrence of
    /// one state per channel (reset at position 0); the gated output projected back.
    fn rg_lru(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        let s = self.spec.rg_lru.expect("an RG-LRU layer has its settings");
        let (t, w, h, bw) = (
            x.dim(0)?,
            s.width as usize,
            s.heads as usize,
            s.block() as usize,
        );
        let y = apply_act(s.act, &self.proj(x, Role::SsmZ, b, true)?)?;
        let u = self.proj(x, Role::SsmIn, b, true)?;
        let pos = cache.pos;
        let state =
            cache.ssm[b].get_or_insert_with(|| SsmState::new(s.conv_kernel as usize, w, w, 1, 1));
        let conv_bias = vec(self.bias(Role::SsmConv, Some(b))?)?;
        let cw = vec(self.w(Role::SsmConv, Some(b))?)?;
        let xc = ssm::causal_conv(&vec(&u)?, &mut state.conv, &cw, Some(&conv_bias), w);
        let xc = Tensor::from_vec(xc, (t, w), &Device::Cpu)?;
        self.keep(Some(b), Point::ConvOut, &xc);
        // σ(x_k W_k + b_k) for each block k, W_k stored [in, out].
        let blocks = xc.reshape((t, h, bw))?.transpose(0, 1)?.contiguous()?;
        let gate = |role: Role| -> Res<Tensor> {
            let g = blocks.matmul(self.w(role, Some(b))?)?;
            let g = g.transpose(0, 1)?.reshape((t, w))?;
            Ok(sigmoid(
                &g.broadcast_add(&self.bias(role, Some(b))?.reshape(w)?)?,
            )?)
        };
        let (i, r) = (gate(Role::LruInGate)?, gate(Role::LruRecGate)?);
        let lam = softplus(self.w(Role::LruParam, Some(b))?)?;
        let log_a = r.broadcast_mul(&lam)?.affine(-8.0, 0.0)?;
        let (mut a, mut scale) = (
            vec(&log_a.exp()?)?,
            vec(&(log_a.affine(2.0, 0.0)?.exp()?.affine(-1.0, 1.0)?.sqrt()?))?,
        );
        if pos == 0 {
            // The state resets at position 0 and the input enters whole.
            a[..w].fill(0.0);
            scale[..w].fill(1.0);
        }
        let xn = vec(&(xc * i)?)?;
        let mut out = vec![0.0f32; t * w];
        for tok in 0..t {
            for c in 0..w {
                let at = tok * w + c;
                state.h[c] = a[at] * state.h[c] + xn[at] * scale[at];
                out[at] = state.h[c];
            }
        }
        if self.capturing() {
            let hs = Tensor::from_vec(state.h.clone(), (w, 1), &Device::Cpu)?;
            self.keep(Some(b), Point::SsmState, &hs);
        }
        let o = Tensor::from_vec(out, (t, w), &Device::Cpu)?;
        self.keep(Some(b), Point::SsmScan, &o);
        self.proj(&(o * y)?, Role::SsmOut, b, true)
    }

    /// MiniMax's lightning attention: q, k and v of every head from one projection through the
    /// activation; the recurrence through the layer's memory; the heads RMS-normed together,
    /// gated by σ of the input's own projection; the output projection.
    fn lightning(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        let s = self
            .spec
            .lightning
            .expect("a lightning layer has its settings");
        let (t, heads, d) = (x.dim(0)?, s.heads as usize, s.head_dim as usize);
        let qkv = apply_act(s.act, &self.proj(x, Role::SsmIn, b, false)?)?;
        self.keep(Some(b), Point::LightQkv, &qkv);
        let slope = vec(self.w(Role::LightSlope, Some(b))?)?;
        let state = cache.ssm[b].get_or_insert_with(|| SsmState::memory(heads, d, d));
        // A prompt chunk by chunk, a decoded token through the loop (the same sums).
        let o = if t > 1 {
            ssm::lightning_chunked(&vec(&qkv)?, &slope, &mut state.memory, heads, d, SSD_CHUNK)?
        } else {
            ssm::lightning(&vec(&qkv)?, &slope, &mut state.memory, heads, d)
        };
        if self.capturing() {
            let m: Vec<f32> = state.memory.iter().map(|&x| x as f32).collect();
            self.keep(
                Some(b),
                Point::SsmState,
                &Tensor::from_vec(m, (heads * d, d), &Device::Cpu)?,
            );
        }
        let o = Tensor::from_vec(o, (t, heads * d), &Device::Cpu)?;
        self.keep(Some(b), Point::SsmScan, &o);
        let o = rms(&o, s.eps)?.broadcast_mul(self.w(Role::SsmNorm, Some(b))?)?;
        self.keep(Some(b), Point::SsmNorm, &o);
        let o = (o * sigmoid(&self.proj(x, Role::SsmZ, b, false)?)?)?;
        self.keep(Some(b), Point::LightGate, &o);
        self.proj(&o, Role::SsmOut, b, false)
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

    /// Inkling 2's dynamic convolution of `x` [t, c] (K or V once projected, `heads` K/V heads):
    /// each token's taps are the stored ones ([taps, c], tap 0 the token itself) plus its own,
    /// projected from `input` (the K or V input, one set per head); x plus the mix, divided by
    /// √(2 · taps + 1). The last taps − 1 inputs are carried in the cache's `slot`.
    #[allow(clippy::too_many_arguments)]
    fn dynamic_conv(
        &self,
        x: &Tensor,
        input: &Tensor,
        (stat, dynamic): (Role, Role),
        heads: usize,
        b: usize,
        slot: usize,
        cache: &mut Cache,
    ) -> Res<Tensor> {
        let (t, c) = x.dims2()?;
        let w: Vec<f32> = self.w(stat, Some(b))?.flatten_all()?.to_vec1()?;
        let taps = w.len() / c.max(1);
        let own: Vec<f32> = self
            .proj(input, dynamic, b, false)?
            .flatten_all()?
            .to_vec1()?;
        let hd = c / heads.max(1);
        let all = carried(&mut cache.tails[b][slot], x, taps)?;
        let mut out = all[(taps - 1) * c..].to_vec();
        let f = 1.0 / ((2 * taps + 1) as f32).sqrt();
        for (i, row) in out.iter_mut().enumerate() {
            let (tok, ch) = (i / c, i % c);
            let at = taps - 1 + tok;
            let mix: f32 = (0..taps)
                .map(|lag| {
                    let tap = w[lag * c + ch] + own[(tok * heads + ch / hd) * taps + lag];
                    tap * all[(at - lag) * c + ch]
                })
                .sum();
            *row = (*row + mix) * f;
        }
        Ok(Tensor::from_vec(out, (t, c), &Device::Cpu)?)
    }

    /// Inkling's relative logits of attention layer `b` for the pass's queries at `start` on:
    /// each head's relative state r = x · W_r mixes the bank P [d_rel, extent] into one bias per
    /// distance, [heads, t, extent], scaled with the queries where they scale.
    fn rel_logits(
        &self,
        x: &Tensor,
        b: usize,
        rl: RelLogits,
        scale: Option<QueryScale>,
        start: usize,
    ) -> Res<(Vec<f32>, usize)> {
        let h = self.spec.attn_at(b).heads as usize;
        let (t, d, extent) = (x.dim(0)?, rl.d_rel as usize, rl.extent as usize);
        let mut r = self
            .proj(x, Role::RelProj, b, false)?
            .reshape((t, h, d))?
            .transpose(0, 1)?
            .contiguous()?;
        // Inkling 2: the relative states, times their learned scale, L2-clipped.
        if let Some(c) = rl.clip {
            let s = self.w(Role::RelClipScale, Some(b))?.unsqueeze(1)?;
            r = l2_clip(&r.broadcast_mul(&s)?, c)?;
        }
        let bank = self.w(Role::RelBank, Some(b))?.to_dtype(DType::F32)?;
        let mut bias = r.broadcast_matmul(&bank)?;
        if let Some(qs) = scale.filter(|qs| qs.applies(&self.spec.plan[b])) {
            let f: Vec<f32> = (start..start + t).map(|p| qs.at(p as u64) as f32).collect();
            bias = bias.broadcast_mul(&Tensor::from_vec(f, (1, t, 1), &Device::Cpu)?)?;
        }
        self.keep(Some(b), Point::RelLogits, &bias);
        Ok((bias.flatten_all()?.to_vec1()?, extent))
    }

    fn span(&self, b: usize) -> AttnSpan {
        self.spec
            .attn_span(b as u64)
            .expect("attention runs in attention layers only")
    }

    /// The residual stream times its learned vector where the model has one (Doge).
    /// The stream `x` plus a sublayer's output: the stream scaled by a learned vector (Doge),
    /// both scaled with depth (Beam), or as they are.
    fn residual_add(&self, x: &Tensor, delta: Tensor, role: Role, b: usize) -> Res<Tensor> {
        if self.spec.residual_affine {
            // ZAYA: both terms shifted and scaled by learned vectors.
            let roles = if role == Role::ResidScaleFfn {
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
        let x = if self.spec.residual_scales {
            x.broadcast_mul(self.w(role, Some(b))?)?
        } else {
            x.clone()
        };
        let (sx, sd) = self
            .spec
            .depth_factors(b as u64, role == Role::ResidScaleFfn);
        if (sx, sd) == (1.0, 1.0) {
            return Ok((x + delta)?);
        }
        Ok((x.affine(sx, 0.0)? + delta.affine(sd, 0.0)?)?)
    }

    fn attention(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        self.attention_from(x, None, b, cache)
    }

    /// Attention layer `b` on `x`, its K and V projected from `kv` where the layer gives them
    /// inputs of their own (Inkling 2's full layers).
    fn attention_from(
        &self,
        x: &Tensor,
        kv: Option<(&Tensor, &Tensor)>,
        b: usize,
        cache: &mut Cache,
    ) -> Res<Tensor> {
        if self.spec.attn_at(b).mla.is_some() {
            return self.mla(x, b, cache);
        }
        if self.spec.attn.v4.is_some() {
            return self.v4_attention(x, b, cache);
        }
        let (xk, xv) = kv.unwrap_or((x, x));
        let spec = &self.spec;
        let a = spec.attn_at(b);
        let (t, h, kv, hd, vd) = (
            x.dim(0)?,
            a.heads as usize,
            a.kv_heads as usize,
            a.head_dim as usize,
            a.v_head_dim as usize,
        );
        // A mixture of attention heads: the queries from each token's chosen experts, K and V
        // the two halves of one projection.
        let moa = match a.moa {
            Some(m) => Some(self.moa_route(x, b, m)?),
            None => None,
        };
        // An output gate stored with the queries, not in a tensor of its own.
        let mut q_gate = None;
        let cca = match a.cca {
            Some(c) => Some(self.cca(x, b, c, cache)?),
            None => None,
        };
        let (mut q, k, v) = match (&moa, a.qkv) {
            _ if cca.is_some() => cca.expect("made above"),
            (Some(choices), _) => {
                let kvp = self.proj(x, Role::Kv, b, false)?;
                (
                    self.moa_queries(x, b, choices, kv * hd)?,
                    kvp.narrow(1, 0, kv * hd)?,
                    kvp.narrow(1, kv * hd, kv * vd)?,
                )
            }
            // A layer that reuses an earlier layer's keys and values projects neither.
            (None, Qkv::Separate) if a.shares_kv => {
                let none = Tensor::zeros((t, 0), DType::F32, &Device::Cpu)?;
                (self.proj(x, Role::Q, b, a.qkv_bias)?, none.clone(), none)
            }
            // Keys that are the values too (Gemma 4): V is K as projected.
            (None, Qkv::Separate) if a.v_from_k => {
                let k = self.proj(x, Role::K, b, a.qkv_bias)?;
                (self.proj(x, Role::Q, b, a.qkv_bias)?, k.clone(), k)
            }
            (None, Qkv::Separate) => (
                self.adapted(x, Role::Q, b, a.qkv_bias)?,
                self.adapted(xk, Role::K, b, a.qkv_bias)?,
                self.adapted(xv, Role::V, b, a.qkv_bias)?,
            ),
            (None, Qkv::Stacked) => {
                let qkv = self.proj(x, Role::Qkv, b, a.qkv_bias)?;
                // An output gate stored first (HRM): a gate per query feature, then the queries.
                let g = if a.out_gate.is_some_and(|g| g.before_qkv()) {
                    q_gate = Some(qkv.narrow(1, 0, h * hd)?);
                    h * hd
                } else {
                    0
                };
                (
                    qkv.narrow(1, g, h * hd)?,
                    qkv.narrow(1, g + h * hd, kv * hd)?,
                    qkv.narrow(1, g + (h + kv) * hd, kv * hd)?,
                )
            }
            (None, Qkv::Parts(parts)) => {
                // Each part: its share of the queries, of the values, of the keys.
                let parts = parts as usize;
                let share = h * hd / parts;
                let qkv = self
                    .proj(x, Role::Qkv, b, a.qkv_bias)?
                    .reshape((t, parts, 3, share))?;
                let part = |which: usize| -> R<Tensor> {
                    qkv.narrow(2, which, 1)?
                        .contiguous()?
                        .reshape((t, parts * share))
                };
                (part(0)?, part(2)?, part(1)?)
            }
            (None, Qkv::Grouped) => {
                // Per K/V group: its g query heads, its key, its value.
                let g = h / kv;
                let qkv = self
                    .proj(x, Role::Qkv, b, a.qkv_bias)?
                    .reshape((t, kv, g + 2, hd))?;
                let part = |from: usize, n: usize, heads: usize| -> R<Tensor> {
                    qkv.narrow(2, from, n)?
                        .contiguous()?
                        .reshape((t, heads * hd))
                };
                (part(0, g, h)?, part(g, 1, kv)?, part(g + 1, 1, kv)?)
            }
        };
        // Inkling: K and V each through a residual convolution over time, once projected.
        let (k, v) = match a.kv_conv {
            // Inkling 2's full layers: taps of each token's own beside the stored ones.
            Some(c) if c.dynamic => {
                let kvh = a.kv_heads as usize;
                (
                    self.dynamic_conv(
                        &k,
                        xk,
                        (Role::KConvStatic, Role::KConvDyn),
                        kvh,
                        b,
                        CONV_K,
                        cache,
                    )?,
                    self.dynamic_conv(
                        &v,
                        xv,
                        (Role::VConvStatic, Role::VConvDyn),
                        kvh,
                        b,
                        CONV_V,
                        cache,
                    )?,
                )
            }
            Some(c) => (
                self.residual_conv_of(&k, Role::KConv, b, CONV_K, c.conv.scaled, cache)?,
                self.residual_conv_of(&v, Role::VConv, b, CONV_V, c.conv.scaled, cache)?,
            ),
            None => (k, v),
        };
        let mut k = k;
        // An output gate stored in the query projection: each head's queries, then its gates.
        if a.out_gate.is_some_and(|g| g.in_query()) {
            let both = q.reshape((t, h, 2, hd))?;
            q_gate = Some(both.narrow(2, 1, 1)?.contiguous()?.reshape((t, h * hd))?);
            q = both.narrow(2, 0, 1)?.contiguous()?.reshape((t, h * hd))?;
        }
        self.keep(Some(b), Point::QProj, &q);
        self.keep(Some(b), Point::KProj, &k);
        if a.qk_norm == QkNorm::Full {
            q = self.norm(&q, Role::QNorm, Some(b))?;
            k = self.norm(&k, Role::KNorm, Some(b))?;
            self.keep(Some(b), Point::QNorm, &q);
            self.keep(Some(b), Point::KNorm, &k);
        }
        let (q, k, v) = match a.clip_qkv {
            Some(c) => (q.clamp(-c, c)?, k.clamp(-c, c)?, v.clamp(-c, c)?),
            None => (q, k, v),
        };
        let heads = |t_: Tensor, n: usize, d: usize| -> R<Tensor> {
            t_.reshape((t, n, d))?.transpose(0, 1)?.contiguous()
        };
        let mut q = match a.moa {
            // [t, slot j, group i, d] → heads in group order, i·top_k + j, so that each group's
            // K/V head serves its top_k query heads.
            Some(m) => q
                .reshape((t, m.top_k as usize, kv, hd))?
                .permute((2, 1, 0, 3))?
                .reshape((h, t, hd))?
                .contiguous()?,
            None => heads(q, h, hd)?,
        };
        let shared = a.shares_kv;
        let (mut k, mut v) = if shared {
            (k, v)
        } else {
            (heads(k, kv, hd)?, heads(v, kv, vd)?)
        };
        if a.v_scale != 1.0 {
            v = v.affine(a.v_scale, 0.0)?;
        }
        if a.v_norm && !shared {
            v = rms(&v, spec.norm.eps)?;
            self.keep(Some(b), Point::VNorm, &v);
        }
        if a.qk_norm == QkNorm::Unit {
            q = unit(&q, spec.norm.eps)?;
            self.keep(Some(b), Point::QNorm, &q);
            if !shared {
                k = unit(&k, spec.norm.eps)?;
                self.keep(Some(b), Point::KNorm, &k);
            }
        }
        if a.qk_norm == QkNorm::HeadWeights {
            // LayerNorm without a shift, each head scaled by its own row of [heads, head_dim].
            let layer = Norm {
                kind: NormKind::Layer { bias: false },
                unit_offset: false,
                ..spec.norm.clone()
            };
            let wq = self.head_weights(Role::QNorm, b, h)?.unsqueeze(1)?;
            q = norm(&q, Some(&wq), None, &layer)?;
            self.keep(Some(b), Point::QNorm, &q);
            if !shared {
                let wk = self.head_weights(Role::KNorm, b, kv)?.unsqueeze(1)?;
                k = norm(&k, Some(&wk), None, &layer)?;
                self.keep(Some(b), Point::KNorm, &k);
            }
        }
        if a.qk_norm == QkNorm::PerHead {
            q = self.norm(&q, Role::QNorm, Some(b))?;
            self.keep(Some(b), Point::QNorm, &q);
            if !shared {
                k = self.norm(&k, Role::KNorm, Some(b))?;
                self.keep(Some(b), Point::KNorm, &k);
            }
        }
        // Inkling 2: Q (times its learned scale) and K scaled down to an L2 norm where longer.
        if let Some(c) = a.l2_clip {
            let s = self.w(Role::QClipScale, Some(b))?.unsqueeze(1)?;
            q = l2_clip(&q.broadcast_mul(&s)?, c)?;
            self.keep(Some(b), Point::QNorm, &q);
            k = l2_clip(&k, c)?;
            self.keep(Some(b), Point::KNorm, &k);
        }
        let plan = &spec.plan[b];
        if let (Position::Rope(r), true) = (&spec.position, plan.rope) {
            let dim = r.rotary_dim_for(self.span(b), a.head_dim) as usize;
            let (cos, sin) = rope::tables_for(r, self.span(b), dim, cache.pos, t)?;
            q = rope::rotate(&q, &cos, &sin, r.interleaved)?;
            self.keep(Some(b), Point::Q, &q);
            if !shared {
                k = rope::rotate(&k, &cos, &sin, r.interleaved)?;
                self.keep(Some(b), Point::K, &k);
            }
            if a.qk_norm == QkNorm::L2 {
                q = rms(&q, spec.norm.eps)?;
                k = rms(&k, spec.norm.eps)?;
                self.keep(Some(b), Point::QL2, &q);
                self.keep(Some(b), Point::KL2, &k);
            }
        }
        if a.qk_norm == QkNorm::PerHeadPostRope {
            q = self.norm(&q, Role::QNorm, Some(b))?;
            k = self.norm(&k, Role::KNorm, Some(b))?;
            self.keep(Some(b), Point::QNorm, &q);
            self.keep(Some(b), Point::KNorm, &k);
        }
        if let Some(qs) = a.query_scale.filter(|qs| qs.applies(plan)) {
            let f: Vec<f32> = (cache.pos..cache.pos + t)
                .map(|p| qs.at(p as u64) as f32)
                .collect();
            q = q.broadcast_mul(&Tensor::from_vec(f, (1, t, 1), &Device::Cpu)?)?;
            self.keep(Some(b), Point::QScaled, &q);
        }
        // nGPT: each query feature times its learned scale, squared.
        if let Some(g) = spec.ngpt {
            let s = self
                .w(Role::NgptQueryScale, Some(b))?
                .affine(g.query_factor(a.head_dim), 0.0)?
                .sqr()?
                .reshape((a.heads as usize, 1, a.head_dim as usize))?;
            q = q.broadcast_mul(&s)?;
            self.keep(Some(b), Point::QGain, &q);
        }
        // Inkling 2's sink logits, projected from the input, for this layer's attend.
        if a.token_sinks {
            let s = self
                .proj(x, Role::TokenSinks, b, false)?
                .t()?
                .contiguous()?;
            self.keep(Some(b), Point::Sinks, &s);
            *self.token_sinks.borrow_mut() = Some(s.flatten_all()?.to_vec1()?);
        }
        // Inkling's relative logits, for this layer's attend.
        if let Some(rl) = a.rel_logits {
            let bias = self.rel_logits(x, b, rl, a.query_scale, cache.pos)?;
            *self.rel_bias.borrow_mut() = Some(bias);
        }
        // The output gate, σ(x · W_g) (AFMoE) or softplus (Laguna), multiplies the heads
        // before the output projection, feature by feature or head by head.
        let gate = self.out_gate(x, b, q_gate, vd)?;
        let chosen = match (a.block_index, a.qsa) {
            (Some(bi), _) => Some((self.block_index(x, bi, b, cache)?, bi.heads as usize)),
            (None, Some(q)) => Some((self.qsa(x, q, b, cache)?, 1)),
            (None, None) => None,
        };
        let selected = chosen.as_ref().map(|(keys, groups)| attention::Selected {
            keys,
            groups: *groups,
        });
        let new = (!shared).then_some((k, v));
        let o = self.attend(q, new, b, cache, selected, gate.as_ref())?;
        match &moa {
            Some(choices) => self.moa_out(&o, b, choices),
            None => self.out_proj(o, b),
        }
    }

    /// The output gate of attention layer `b`, over each head's `vd` features: from the query
    /// projection (`q_gate`) or a projection of its own; `None` where it has none.
    fn out_gate(
        &self,
        x: &Tensor,
        b: usize,
        q_gate: Option<Tensor>,
        vd: usize,
    ) -> Res<Option<Tensor>> {
        let Some(og) = self.spec.attn_at(b).out_gate else {
            return Ok(None);
        };
        let mut g = match q_gate {
            Some(g) => g,
            None => self.proj(x, Role::AttnGate, b, false)?,
        };
        if og.bias {
            // One bias per head (Beam), shared by the head's features.
            let bias = self.w(Role::AttnGateBias, Some(b))?;
            let bias = if og.per_head {
                bias.clone()
            } else {
                let h = bias.dim(0)?;
                bias.unsqueeze(1)?
                    .broadcast_as((h, vd))?
                    .contiguous()?
                    .reshape(h * vd)?
            };
            g = g.broadcast_add(&bias)?;
        }
        if let Some(n) = self.spec.ngpt {
            let s = self.w(Role::NgptGateScale, Some(b))?;
            g = g.broadcast_mul(&s.affine(n.gate_factor(self.spec.hidden), 0.0)?.sqr()?)?;
        }
        self.keep(Some(b), Point::AttnGate, &g);
        let g = if og.softplus {
            softplus(&g)?
        } else {
            sigmoid(&g)?
        };
        Ok(Some(if og.per_head {
            // Each head's gate over its features: [t, h] → [t, h · dv].
            let (t, hh) = g.dims2()?;
            g.unsqueeze(2)?
                .broadcast_as((t, hh, vd))?
                .contiguous()?
                .reshape((t, hh * vd))?
        } else {
            g
        }))
    }

    /// A mixture of attention heads' routing: each token's top-k experts, weighted by a softmax
    /// over their logits, in slot order.
    fn moa_route(&self, x: &Tensor, b: usize, m: Moa) -> Res<Vec<Vec<(usize, f32)>>> {
        let logits = self.proj(x, Role::AttnRouter, b, false)?;
        self.keep(Some(b), Point::AttnRouter, &logits);
        let k = m.top_k as usize;
        let rows: Vec<Vec<f32>> = logits.to_vec2()?;
        Ok(rows
            .iter()
            .map(|row| {
                let idx = top_indices(row, k);
                let top: Vec<f32> = idx.iter().map(|&i| row[i]).collect();
                idx.into_iter().zip(softmax_of(&top)).collect()
            })
            .collect())
    }

    /// The queries of each token's chosen experts, [t, top_k · width] slot after slot.
    fn moa_queries(
        &self,
        x: &Tensor,
        b: usize,
        choices: &[Vec<(usize, f32)>],
        width: usize,
    ) -> Res<Tensor> {
        let w = self.w(Role::AttnExpertQ, Some(b))?;
        let (t, k) = (choices.len(), choices.first().map_or(0, |c| c.len()));
        let mut q = vec![0f32; t * k * width];
        for (ex, picks) in by_expert(choices) {
            let idx = Tensor::new(
                picks.iter().map(|p| p.0 as u32).collect::<Vec<_>>(),
                &Device::Cpu,
            )?;
            let ys: Vec<Vec<f32>> = x.index_select(&idx, 0)?.matmul(&w.i(ex)?.t()?)?.to_vec2()?;
            for ((tok, slot, _), y) in picks.iter().zip(ys) {
                let at = (tok * k + slot) * width;
                q[at..at + width].copy_from_slice(&y);
            }
        }
        Ok(Tensor::from_vec(q, (t, k * width), &Device::Cpu)?)
    }

    /// A mixture of attention heads' output: slot j's heads ([t, heads · dv] in group order)
    /// through its expert's output projection, times the expert's gate, summed, plus the bias.
    fn moa_out(&self, o: &Tensor, b: usize, choices: &[Vec<(usize, f32)>]) -> Res<Tensor> {
        let w = self.w(Role::AttnExpertO, Some(b))?;
        let (t, k) = (choices.len(), choices.first().map_or(0, |c| c.len()));
        let width = o.dim(1)? / k.max(1);
        let kv = self.spec.attn_at(b).kv_heads as usize;
        // [t, group i, slot j, dv] → [t, slot j, group i · dv]
        let slots = o
            .reshape((t, kv, k, width / kv))?
            .transpose(1, 2)?
            .contiguous()?
            .reshape((t, k, width))?;
        let mut y = Tensor::zeros((t, self.spec.hidden as usize), DType::F32, &Device::Cpu)?;
        for (ex, picks) in by_expert(choices) {
            let rows: Vec<Tensor> = picks
                .iter()
                .map(|&(tok, slot, _)| slots.i((tok, slot)))
                .collect::<R<_>>()?;
            let gates = Tensor::new(picks.iter().map(|p| p.2).collect::<Vec<_>>(), &Device::Cpu)?;
            let out = Tensor::stack(&rows, 0)?
                .matmul(&w.i(ex)?.t()?)?
                .broadcast_mul(&gates.unsqueeze(1)?)?;
            let idx = Tensor::new(
                picks.iter().map(|p| p.0 as u32).collect::<Vec<_>>(),
                &Device::Cpu,
            )?;
            y = y.index_add(&idx, &out, 0)?;
        }
        let y = y.broadcast_add(self.bias(Role::AttnExperts, Some(b))?)?;
        self.keep(Some(b), Point::AttnExperts, &y);
        Ok(y)
    }

    /// The part every attention shares: append K and V to the cache, score every query against
    /// every cached key (scaled, softcapped and masked as the layer says, with the head's sink
    /// where there is one), mix the values and stack the heads, [t, heads · dv].
    /// q: [H, T, d_qk]; k: [KV, T, d_qk]; v: [KV, T, d_v].
    /// Each query sees only the keys `selected` marks, when given (DeepSeek sparse attention's
    /// [t, total], MiniMax-M3's [groups, t, total]); the heads are multiplied by `gate`
    /// ([t, H d_v]) when given.
    #[allow(clippy::too_many_arguments)]
    fn attend(
        &self,
        q: Tensor,
        new: Option<(Tensor, Tensor)>,
        b: usize,
        cache: &mut Cache,
        selected: Option<attention::Selected>,
        gate: Option<&Tensor>,
    ) -> Res<Tensor> {
        let a = self.spec.attn_at(b);
        let (h, t, _) = q.dims3()?;
        let flat = |t: &Tensor| t.flatten_all().and_then(|t| t.to_vec1::<f32>());
        // This layer's new keys and values join its cache; a layer that shares reads the cache
        // of the layer it shares with, which has run this step already.
        let from = match new {
            Some((k, v)) => {
                let ((kv, _, d), dv) = (k.dims3()?, v.dim(2)?);
                let held = cache.kv[b].get_or_insert_with(|| crate::kv::Kv::new(kv, d, dv));
                held.append(&flat(&k)?, &flat(&v)?, t, cache.room);
                b
            }
            None => self.spec.kv_source(b),
        };
        let held = cache.kv[from]
            .as_ref()
            .expect("the layer whose keys are read has run this step");
        let (kv, _, dv) = held.shape();
        self.keep(Some(b), Point::Q, &q);
        if self.capturing() {
            self.keep(Some(b), Point::K, &held.keys()?);
            self.keep(Some(b), Point::V, &held.values()?);
        }
        let (total, (k_all, v_all)) = (held.len(), held.buffers());
        // The mechanisms that rework the values read them as a tensor of their own.
        let reworked = if a.differential || a.dynamic_mask.is_some() {
            Some(held.values()?)
        } else {
            None
        };
        // Differential attention: K/V head j offers the values of heads j mod KV/2 and
        // KV/2 + j mod KV/2 side by side, so each head's output is both mixes.
        let reworked = match (a.differential, reworked) {
            (true, Some(v)) => {
                let half = kv / 2;
                let pick = |off: usize| -> Res<Tensor> {
                    let idx: Vec<u32> = (0..kv).map(|j| (off + j % half) as u32).collect();
                    Ok(v.index_select(&Tensor::new(idx, &Device::Cpu)?, 0)?)
                };
                Some(Tensor::cat(&[pick(0)?, pick(half)?], 2)?)
            }
            (_, v) => v,
        };
        let vd = reworked.as_ref().map_or(Ok(dv), |v| v.dim(2))?;
        let sinks: Option<Vec<f32>> = if a.sinks {
            let name = self.name(Role::Sinks, false, Some(b), None);
            Some(self.weights.get(&name)?.to_vec1()?)
        } else {
            None
        };
        // Inkling 2: each query's sink logits, [heads, t], projected from the attention's input.
        let token_sinks = self.token_sinks.borrow_mut().take();
        let alibi: Option<Vec<f32>> = match &self.spec.position {
            Position::Alibi(slopes) => Some(slopes.iter().map(|&m| m as f32).collect()),
            _ => None,
        };
        let pair_bias = self.pair_bias.borrow();
        let rel_bias = self.rel_bias.borrow_mut().take();
        // Doge's dynamic mask: every cached key scored from the values of all K/V heads,
        // Δ = exp(A ⊙ softplus(W_dt · v + b)), [kv, total].
        let key_scores: Option<Vec<f32>> = match a.dynamic_mask {
            Some(_) => {
                let v = reworked
                    .as_ref()
                    .expect("the values, read above for the dynamic mask");
                let v_tok = v.transpose(0, 1)?.contiguous()?.reshape((total, kv * vd))?;
                let bias = if a.qkv_bias {
                    Some(self.bias(Role::DynDt, Some(b))?)
                } else {
                    None
                };
                let dt =
                    self.linear(&v_tok, &self.name(Role::DynDt, false, Some(b), None), bias)?;
                let delta = softplus(&dt)?
                    .broadcast_mul(self.w(Role::DynA, Some(b))?)?
                    .exp()?
                    .t()?
                    .contiguous()?;
                self.keep(Some(b), Point::KeyScores, &delta);
                Some(delta.flatten_all()?.to_vec1()?)
            }
            None => None,
        };
        // The cache's buffers as they are, or the keys beside values reworked above.
        let own = match &reworked {
            Some(v) => Some((flat(&held.keys()?)?, flat(v)?)),
            None => None,
        };
        let (k_read, v_read, stride) = match &own {
            Some((k, v)) => (&k[..], &v[..], total),
            None => (k_all, v_all, held.room()),
        };
        let qv = flat(&q)?;
        let heads = attention::Heads {
            q: &qv,
            k: k_read,
            v: v_read,
            heads: h,
            kv_heads: kv,
            d: q.dim(2)?,
            dv: vd,
            start: cache.pos,
            stride,
        };
        let rule = attention::Rule {
            scale: (a.scale_mult / a.scale_dim.sqrt()) as f32,
            softcap: a.softcap.map(|c| c as f32),
            span: self
                .spec
                .read_span(b as u64)
                .expect("attention runs in attention layers only"),
            key_scores: key_scores
                .as_deref()
                .zip(a.dynamic_mask)
                .map(|(scores, dm)| attention::KeyScores {
                    scores,
                    total,
                    keep: dm.keep as usize,
                }),
            sinks: sinks.as_deref(),
            token_sinks: token_sinks.as_deref(),
            alibi: alibi.as_deref(),
            pair_bias: pair_bias
                .as_ref()
                .map(|(table, rows)| attention::PairBias { table, rows }),
            rel_bias: rel_bias.as_ref().map(|(table, extent)| attention::RelBias {
                table,
                extent: *extent,
            }),
            selected,
        };
        let done = attention::attend(&heads, &rule, self.capturing());
        let cpu =
            |v: Vec<f32>, shape: (usize, usize, usize)| Tensor::from_vec(v, shape, &Device::Cpu);
        if let (Some(s), Some(p)) = (done.scores, done.probs) {
            self.keep(Some(b), Point::Scores, &cpu(s, (h, t, total))?);
            self.keep(Some(b), Point::Probs, &cpu(p, (h, t, total))?);
        }
        let mut o = Tensor::from_vec(done.out, (t, h * vd), &Device::Cpu)?;
        self.keep(Some(b), Point::Heads, &o);
        if a.differential {
            o = self.differential(&o, b, t, h, vd)?;
            self.keep(Some(b), Point::Differential, &o);
        }
        if let Some(g) = gate {
            o = (o * g)?;
        }
        if a.sub_norm {
            o = self.norm(&o, Role::AttnSubNorm, Some(b))?;
            self.keep(Some(b), Point::AttnSubNorm, &o);
        }
        Ok(o)
    }

    /// The heads ([t, heads · dv]) projected back to the hidden size.
    fn out_proj(&self, o: Tensor, b: usize) -> Res<Tensor> {
        let a = self.spec.attn_at(b);
        let y = self.proj(&o, Role::O, b, a.o_bias)?;
        if a.o_bias_last && b + 1 == self.spec.layers as usize {
            let name = self.name(Role::DenseBias, false, Some(b), None);
            return Ok(y.broadcast_add(self.weights.get(&name)?)?);
        }
        Ok(y)
    }

    /// Differential attention's combination of the heads' outputs `o` ([t, h · dv], each head's
    /// dv = 2 · head_dim): the first half minus λ times the second, RMS-normed per pair without a
    /// weight and scaled by 1 − λ_init; [t, h · dv / 2].
    fn differential(&self, o: &Tensor, b: usize, t: usize, h: usize, dv: usize) -> Res<Tensor> {
        let o = o.reshape((t, h, dv))?;
        let (first, second) = (o.narrow(1, 0, h / 2)?, o.narrow(1, h / 2, h / 2)?);
        let vec = |role| -> Res<Vec<f32>> {
            let name = self.name(role, false, Some(b), None);
            Ok(self.weights.get(&name)?.to_vec1()?)
        };
        let dot = |x: &[f32], y: &[f32]| x.iter().zip(y).map(|(a, b)| a * b).sum::<f32>();
        let init = 0.8 - 0.6 * (-0.3 * b as f64).exp();
        let lambda = dot(&vec(Role::LambdaQ1)?, &vec(Role::LambdaK1)?).exp()
            - dot(&vec(Role::LambdaQ2)?, &vec(Role::LambdaK2)?).exp()
            + init as f32;
        let d = (first - (second * lambda as f64)?)?;
        let d = (rms(&d, self.spec.norm.eps)? * (1.0 - init))?;
        Ok(d.reshape((t, h * dv / 2))?)
    }

    /// Multi-head latent attention: Q (through its latent when there is one) and a KV latent that
    /// every head expands; one rotary key shared by all heads.
    fn mla(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        let spec = &self.spec;
        let a = spec.attn_at(b);
        let m = a.mla.as_ref().expect("MLA");
        let t = x.dim(0)?;
        let (h, nope, rd, vd, kvl) = (
            a.heads as usize,
            m.qk_nope_head_dim as usize,
            m.qk_rope_head_dim as usize,
            a.v_head_dim as usize,
            m.kv_lora_rank as usize,
        );
        let mut selected = None;
        let mut q_gate = None;
        let q = match m.q_lora_rank {
            Some(_) => {
                let qa = self.proj(x, Role::QA, b, m.bias)?;
                self.keep(Some(b), Point::QLatent, &qa);
                let qn = self.latent_norm(&qa, Role::QANorm, b)?;
                self.keep(Some(b), Point::QLatentNorm, &qn);
                if let Some(ix) = &m.indexer {
                    if ix.own.contains(b as u64) {
                        // dots.3 Note's indexer reads the scaled latent, as its query does.
                        let qi = match m.lora_scales {
                            Some((q_scale, _)) => qn.affine(q_scale, 0.0)?,
                            None => qn.clone(),
                        };
                        cache.chosen = Some(self.index(x, &qi, ix, b, cache)?);
                    }
                    selected = cache.chosen.clone();
                }
                if m.q_gate {
                    // A.X-K2: both latents side by side give each head's query, then its gate.
                    let both = self
                        .proj(&Tensor::cat(&[&qn, &qa], 1)?, Role::QB, b, false)?
                        .reshape((t, h, nope + rd + vd))?;
                    let g = both.narrow(2, nope + rd, vd)?.contiguous()?;
                    q_gate = Some(g.reshape((t, h * vd))?);
                    both.narrow(2, 0, nope + rd)?
                        .contiguous()?
                        .reshape((t, h * (nope + rd)))?
                } else {
                    self.proj(&qn, Role::QB, b, false)?
                }
            }
            None => self.proj(x, Role::Q, b, false)?,
        };
        // LongCat-Flash scales the query and the normed KV latent.
        let scaled = |t: Tensor, s: Option<f64>| -> Res<Tensor> {
            Ok(match s {
                Some(s) => t.affine(s, 0.0)?,
                None => t,
            })
        };
        let (q_scale, kv_scale) = (m.lora_scales.map(|s| s.0), m.lora_scales.map(|s| s.1));
        // [h, t, nope + rope]
        let q = scaled(q, q_scale)?
            .reshape((t, h, nope + rd))
            .and_then(|q| q.transpose(0, 1)?.contiguous())?;
        self.keep(Some(b), Point::QProj, &q);
        let q_nope = q.narrow(2, 0, nope)?;
        let q_rot = q.narrow(2, nope, rd).and_then(|t| t.contiguous())?;
        let kva = self.proj(x, Role::KvA, b, m.bias)?; // [t, kv_lora + rope]
        let latent = kva.narrow(1, 0, kvl)?;
        self.keep(Some(b), Point::KvLatent, &latent);
        let c_kv = scaled(self.latent_norm(&latent, Role::KvANorm, b)?, kv_scale)?;
        self.keep(Some(b), Point::KvLatentNorm, &c_kv);
        let mut k_rot = kva
            .narrow(1, kvl, rd)
            .and_then(|k| k.contiguous()?.reshape((1, t, rd)))?;
        self.keep(Some(b), Point::KPe, &k_rot);
        if m.rope_key_norm {
            k_rot = norm(
                &k_rot,
                Some(self.w(Role::KPeNorm, Some(b))?),
                None,
                &spec.norm,
            )?;
            self.keep(Some(b), Point::KPeNorm, &k_rot);
        }
        let (q_rot, k_rot) = match &spec.position {
            Position::Rope(r) => {
                let span = self.span(b);
                let dim = r.rotary_dim(rd as u64) as usize;
                let (cos, sin) = rope::tables_for(r, span, dim, cache.pos, t)?;
                let k_rot = rope::rotate(&k_rot, &cos, &sin, r.interleaved)?;
                self.keep(Some(b), Point::KPeRot, &k_rot);
                (rope::rotate(&q_rot, &cos, &sin, r.interleaved)?, k_rot)
            }
            // Kimi Linear's: the shared key part carries no position either.
            Position::Learned
            | Position::Sinusoidal(_)
            | Position::Alibi(_)
            | Position::None
            | Position::Buckets(_) => (q_rot, k_rot),
        };
        let kv = self
            .proj(&c_kv, Role::KvB, b, false)?
            .reshape((t, h, nope + vd))
            .and_then(|kv| kv.transpose(0, 1)?.contiguous())?;
        let k_shared = k_rot
            .broadcast_as((h, t, rd))
            .and_then(|k| k.contiguous())?;
        let k = Tensor::cat(&[&kv.narrow(2, 0, nope)?, &k_shared], 2)?;
        let v = kv.narrow(2, nope, vd).and_then(|v| v.contiguous())?;
        self.keep(Some(b), Point::KNope, &kv.narrow(2, 0, nope)?);
        let q = Tensor::cat(&[&q_nope, &q_rot], 2)?;
        let gate = self.out_gate(x, b, q_gate, vd)?;
        let o = self.attend(
            q,
            Some((k, v)),
            b,
            cache,
            selected
                .as_deref()
                .map(|keys| attention::Selected { keys, groups: 1 }),
            gate.as_ref(),
        )?;
        self.out_proj(o, b)
    }

    /// MiniMax-M3's lightning indexer: which cached keys each of the `t` new queries of each
    /// index head's group may attend to, [index heads, t, total] row-major. Its keys join the
    /// layer's index cache.
    fn block_index(
        &self,
        x: &Tensor,
        bi: anatomy_core::spec::BlockIndex,
        b: usize,
        cache: &mut Cache,
    ) -> Res<Vec<bool>> {
        let spec = &self.spec;
        let (t, ih, id) = (x.dim(0)?, bi.heads as usize, bi.head_dim as usize);
        let q = self
            .proj(x, Role::BlockIndexQ, b, false)?
            .reshape((t, ih, id))?
            .transpose(0, 1)?
            .contiguous()?;
        let q = self.norm(&q, Role::BlockIndexQNorm, Some(b))?;
        let k = self.proj(x, Role::BlockIndexK, b, false)?;
        let k = self
            .norm(&k, Role::BlockIndexKNorm, Some(b))?
            .reshape((1, t, id))?;
        // The attention's RoPE tables, over the first dims of each index head.
        let (q, k) = match &spec.position {
            Position::Rope(r) => {
                let dim = r.rotary_dim(spec.attn_at(b).head_dim) as usize;
                let (cos, sin) = rope::tables_for(r, self.span(b), dim, cache.pos, t)?;
                (
                    rope::rotate(&q, &cos, &sin, r.interleaved)?,
                    rope::rotate(&k, &cos, &sin, r.interleaved)?,
                )
            }
            _ => (q, k),
        };
        self.keep(Some(b), Point::IndexQ, &q);
        let k = k.reshape((t, id))?;
        self.keep(Some(b), Point::IndexK, &k);
        let k = cache.index_keys(b, k)?;
        let total = k.dim(0)?;
        // [ih, t, total]: every index head's queries against every cached key.
        let scores: Vec<f32> = q
            .matmul(
                &k.t()?
                    .contiguous()?
                    .broadcast_as((ih, id, total))?
                    .contiguous()?,
            )?
            .flatten_all()?
            .to_vec1()?;
        let block = bi.block as usize;
        let blocks = total.div_ceil(block);
        let mut selected = vec![false; ih * t * total];
        let mut best = vec![f32::NEG_INFINITY; blocks];
        for h in 0..ih {
            for i in 0..t {
                let qpos = cache.pos + i;
                let row = &scores[(h * t + i) * total..][..total];
                best.fill(f32::NEG_INFINITY);
                for (s, &v) in row.iter().enumerate().take(qpos + 1) {
                    best[s / block] = best[s / block].max(v);
                }
                // The query's latest blocks always win a place.
                for l in 0..bi.local as usize {
                    best[(qpos / block).saturating_sub(l)] = f32::INFINITY;
                }
                // The top-k blocks by score, best first; a block with no visible key never.
                let mut order: Vec<usize> = (0..blocks)
                    .filter(|&j| best[j] > f32::NEG_INFINITY)
                    .collect();
                order.sort_by(|&a, &b| best[b].total_cmp(&best[a]).then(a.cmp(&b)));
                order.truncate(bi.top_k as usize);
                let keep = &mut selected[(h * t + i) * total..][..total];
                for j in order {
                    let end = ((j + 1) * block).min(qpos + 1);
                    keep[j * block..end].fill(true);
                }
            }
        }
        if self.capturing() {
            let s = Tensor::from_vec(scores, (ih, t, total), &Device::Cpu)?;
            self.keep_selection(b, s, &selected, (ih, t, total))?;
        }
        Ok(selected)
    }

    /// An indexer's scores and the keys it kept, as the op view shows them: the mask 0 where a
    /// key was kept, −∞ elsewhere.
    fn keep_selection(
        &self,
        b: usize,
        scores: Tensor,
        selected: &[bool],
        shape: impl Into<candle_core::Shape>,
    ) -> Res<()> {
        self.keep(Some(b), Point::IndexScores, &scores);
        let mask = selected
            .iter()
            .map(|&s| if s { 0.0 } else { f32::NEG_INFINITY })
            .collect();
        self.keep(
            Some(b),
            Point::IndexMask,
            &Tensor::from_vec(mask, shape, &Device::Cpu)?,
        );
        Ok(())
    }

    /// Qwen4-Exp's QSA indexer: which cached keys each of the `t` new queries may attend to,
    /// [t, total] row-major, for every head. Its raw keys join the layer's index cache; each
    /// complete block of them is averaged, normed and rotated at its first position.
    fn qsa(
        &self,
        x: &Tensor,
        q: anatomy_core::spec::Qsa,
        b: usize,
        cache: &mut Cache,
    ) -> Res<Vec<bool>> {
        let spec = &self.spec;
        let (t, ih, id, r) = (
            x.dim(0)?,
            q.heads as usize,
            q.head_dim as usize,
            q.ratio as usize,
        );
        let qk = self.proj(x, Role::QsaQk, b, false)?;
        let qh = qk
            .narrow(1, 0, ih * id)?
            .reshape((t, ih, id))?
            .transpose(0, 1)?
            .contiguous()?;
        let qh = self.norm(&qh, Role::QsaQNorm, Some(b))?;
        let k = qk.narrow(1, ih * id, id)?.contiguous()?;
        self.keep(Some(b), Point::QsaK, &k);
        let keys = cache.index_keys(b, k)?;
        let total = keys.dim(0)?;
        let complete = total / r;
        let pooled = keys
            .narrow(0, 0, complete * r)?
            .reshape((complete, r, id))?
            .mean(1)?;
        let pooled = self.norm(&pooled, Role::QsaKNorm, Some(b))?;
        // The attention's RoPE over the first dims: queries at their positions, block keys at
        // their blocks' first.
        let (qh, pooled) = match &spec.position {
            Position::Rope(rp) => {
                let dim = rp.rotary_dim(spec.attn_at(b).head_dim) as usize;
                let (cos, sin) = rope::tables_for(rp, self.span(b), dim, 0, total)?;
                let starts = Tensor::new(
                    (0..complete).map(|j| (j * r) as u32).collect::<Vec<_>>(),
                    &Device::Cpu,
                )?;
                let at = |c: &Tensor| c.index_select(&starts, 0);
                let now = |c: &Tensor| c.narrow(0, cache.pos, t);
                (
                    rope::rotate(&qh, &now(&cos)?, &now(&sin)?, rp.interleaved)?,
                    rope::rotate(
                        &pooled.reshape((1, complete, id))?,
                        &at(&cos)?,
                        &at(&sin)?,
                        rp.interleaved,
                    )?
                    .reshape((complete, id))?,
                )
            }
            _ => (qh, pooled),
        };
        self.keep(Some(b), Point::QsaBlocks, &pooled);
        self.keep(Some(b), Point::IndexQ, &qh);
        // [t, complete]: Σ over the index heads of ReLU(q · k), scaled.
        let scores: Vec<f32> = qh
            .matmul(
                &pooled
                    .t()?
                    .contiguous()?
                    .broadcast_as((ih, id, complete))?
                    .contiguous()?,
            )?
            .relu()?
            .sum(0)?
            .affine(1.0 / (id as f64).sqrt(), 0.0)?
            .flatten_all()?
            .to_vec1()?;
        let mut selected = vec![false; t * total];
        for i in 0..t {
            let visible = cache.pos + i + 1;
            let blocks = visible / r;
            let row = &scores[i * complete..][..blocks];
            // The best blocks, ties to the earlier one.
            let mut order: Vec<usize> = (0..blocks).collect();
            order.sort_by(|&a, &b| row[b].total_cmp(&row[a]).then(a.cmp(&b)));
            order.truncate(q.blocks() as usize);
            let keep = &mut selected[i * total..][..total];
            for j in order {
                keep[j * r..(j + 1) * r].fill(true);
            }
            keep[blocks * r..visible].fill(true);
        }
        if self.capturing() {
            let s = Tensor::from_vec(scores, (t, complete), &Device::Cpu)?;
            self.keep_selection(b, s, &selected, (t, total))?;
        }
        Ok(selected)
    }

    /// DeepSeek sparse attention's indexer: which cached keys each of the `t` new queries may
    /// attend to, [t, total] row-major. Its keys join the layer's indexer cache.
    fn index(
        &self,
        x: &Tensor,
        q_latent: &Tensor,
        ix: &Indexer,
        b: usize,
        cache: &mut Cache,
    ) -> Res<Vec<bool>> {
        let Position::Rope(r) = &self.spec.position else {
            unreachable!("MLA has RoPE")
        };
        let m = self.spec.attn_at(b).mla.as_ref().expect("MLA");
        let (t, ih, id) = (x.dim(0)?, ix.heads as usize, ix.head_dim as usize);
        let rd = m.qk_rope_head_dim as usize;
        let (cos, sin) = rope::tables_for(
            r,
            self.span(b),
            r.rotary_dim(rd as u64) as usize,
            cache.pos,
            t,
        )?;
        // The indexer pairs dims its own way, whatever the attention does.
        let q = self
            .proj(q_latent, Role::IndexQ, b, false)?
            .reshape((t, ih, id))?
            .transpose(0, 1)?
            .contiguous()?;
        // HY v4's indexer rotates the last rd dims of each head, V3.2's the first.
        let rotate = |x: &Tensor| -> Res<Tensor> {
            if !ix.rope_last {
                return Ok(rope::rotate(x, &cos, &sin, ix.interleaved)?);
            }
            let pass = id - rd;
            let rot = x.narrow(2, pass, rd)?.contiguous()?;
            let rot = rope::rotate(&rot, &cos, &sin, ix.interleaved)?;
            Ok(Tensor::cat(&[&x.narrow(2, 0, pass)?, &rot], 2)?)
        };
        let q = rotate(&q)?; // [ih, t, id]
        self.keep(Some(b), Point::IndexQ, &q);
        let k = self.proj(x, Role::IndexK, b, false)?;
        let k = norm(
            &k,
            Some(self.w(Role::IndexKNorm, Some(b))?),
            Some(self.bias(Role::IndexKNorm, Some(b))?),
            &ix.key_norm(),
        )?;
        let k = rotate(&k.reshape((1, t, id))?)?.reshape((t, id))?;
        self.keep(Some(b), Point::IndexK, &k);
        let k = cache.index_keys(b, k)?;
        let total = k.dim(0)?;
        let weights = self.proj(x, Role::IndexWeights, b, false)?;
        self.keep(Some(b), Point::IndexWeights, &weights);
        let weights: Vec<f32> = weights
            .affine((ih as f64).powf(-0.5), 0.0)?
            .flatten_all()?
            .to_vec1()?;
        // [ih, t, total]: every query head against every cached key.
        let dots: Vec<f32> = q
            .matmul(
                &k.t()?
                    .contiguous()?
                    .broadcast_as((ih, id, total))?
                    .contiguous()?,
            )?
            .affine((id as f64).powf(-0.5), 0.0)?
            .relu()?
            .flatten_all()?
            .to_vec1()?;
        let mut scores = vec![f32::NEG_INFINITY; t * total];
        let mut selected = vec![false; t * total];
        let top_k = ix.top_k as usize;
        for i in 0..t {
            let qpos = cache.pos + i;
            let row = &mut scores[i * total..][..total];
            for (j, s) in row.iter_mut().enumerate().take(qpos + 1) {
                *s = (0..ih)
                    .map(|h| weights[i * ih + h] * dots[(h * t + i) * total + j])
                    .sum();
            }
            // Best first. transformers leaves the order of equal scores to torch's top-k, which
            // promises none; here the later key wins. (ReLU makes exact zeros likely with few
            // indexer heads: the toy fixture has enough heads that no tie falls at the cut.)
            let mut order: Vec<usize> = (0..=qpos).collect();
            if order.len() > top_k {
                order.select_nth_unstable_by(top_k - 1, |&a, &b| {
                    row[b]
                        .partial_cmp(&row[a])
                        .unwrap_or(std::cmp::Ordering::Equal)
                        .then(b.cmp(&a))
                });
                order.truncate(top_k);
            }
            for j in order {
                selected[i * total + j] = true;
            }
        }
        let s = Tensor::from_vec(scores, (t, total), &Device::Cpu)?;
        self.keep_selection(b, s, &selected, (t, total))?;
        Ok(selected)
    }

    fn act(&self, x: &Tensor) -> R<Tensor> {
        apply_act(self.spec.mlp.act, x)
    }

    /// xIELU with layer `b`'s learned αₚ, αₙ and stored β, ε (Apertus).
    fn xielu(&self, x: &Tensor, b: usize) -> Res<Tensor> {
        let scalar = |role| -> Res<f32> {
            let t = self.weights.get(&self.name(role, false, Some(b), None))?;
            t.flatten_all()
                .and_then(|t| t.to_vec1::<f32>())?
                .first()
                .copied()
                .ok_or_else(|| {
                    Error::file(self.name(role, false, Some(b), None), "is empty").into()
                })
        };
        let softplus = |v: f32| (v as f64).exp().ln_1p() as f32;
        let beta = scalar(Role::ActBeta)?;
        let eps = scalar(Role::ActEps)?;
        let ap = softplus(scalar(Role::ActAlphaP)?);
        let an = beta + softplus(scalar(Role::ActAlphaN)?);
        let y = with_values(x, |v| {
            v.iter()
                .map(|&x| {
                    if x > 0.0 {
                        ap * x * x + beta * x
                    } else {
                        (x.min(eps).exp_m1() - x) * an + beta * x
                    }
                })
                .collect::<Vec<f32>>()
        })?;
        Ok(Tensor::from_vec(y, x.dims(), &Device::Cpu)?)
    }

    /// act(g) ⊙ u, in one pass for SiLU.
    fn act_mul(&self, g: &Tensor, u: &Tensor) -> R<Tensor> {
        match self.spec.mlp.act {
            Act::Silu => {
                let y = with_values(g, |g| with_values(u, |u| crate::math::silu_mul(g, u)))??;
                Tensor::from_vec(y, g.dims(), &Device::Cpu)
            }
            Act::Gelu | Act::GeluTanh | Act::QuickGelu | Act::Relu | Act::Relu2 | Act::Xielu => {
                self.act(g)? * u
            }
        }
    }

    fn mlp(&self, x: &Tensor, b: usize) -> Res<Tensor> {
        let spec = &self.spec;
        let bias = spec.mlp.bias;
        let f = spec.mlp_width(b) as usize;
        let hidden = if !spec.mlp.gated {
            let u = self.proj(x, Role::Up, b, bias)?;
            self.keep(Some(b), Point::Up, &u);
            if spec.mlp.act == Act::Xielu {
                self.xielu(&u, b)?
            } else {
                self.act(&u)?
            }
        } else {
            let (g, u) = if spec.mlp.fused_gate_up {
                let gu = self.adapted(x, Role::GateUp, b, bias)?;
                (gu.narrow(1, 0, f)?, gu.narrow(1, f, f)?)
            } else {
                (
                    self.proj(x, Role::Gate, b, bias)?,
                    self.proj(x, Role::Up, b, bias)?,
                )
            };
            // Falcon-H1 scales the gate before its activation.
            let g = match spec.mup {
                Some(m) if m.mlp_gate != 1.0 => g.affine(m.mlp_gate, 0.0)?,
                _ => g,
            };
            // nGPT: the gate and up times learned vectors.
            let (g, u) = match spec.ngpt {
                Some(n) => {
                    let f = n.uv_factor(spec.hidden);
                    let su = self.w(Role::NgptGateUvScale, Some(b))?.affine(f, 0.0)?;
                    let sv = self.w(Role::NgptUpUvScale, Some(b))?.affine(f, 0.0)?;
                    (g.broadcast_mul(&su)?, u.broadcast_mul(&sv)?)
                }
                None => (g, u),
            };
            self.keep(Some(b), Point::Gate, &g);
            let g = match spec.sparsity_at(b) {
                Some(p) => {
                    let g = gaussian_top_k(&g, p)?;
                    self.keep(Some(b), Point::SparseGate, &g);
                    g
                }
                None => g,
            };
            self.keep(Some(b), Point::Up, &u);
            self.glu(&g, &u, spec.mlp.clamp, false)?
        };
        self.keep(Some(b), Point::Act, &hidden);
        let hidden = if spec.mlp.sub_norm {
            let h = self.norm(&hidden, Role::FfnSubNorm, Some(b))?;
            self.keep(Some(b), Point::FfnSubNorm, &h);
            h
        } else {
            hidden
        };
        let down = self.proj(&hidden, Role::Down, b, bias)?;
        // Inkling: the output times a learned scalar.
        let down = if spec.mlp.scalar {
            down.broadcast_mul(self.w(Role::MlpScalar, Some(b))?)?
        } else {
            down
        };
        match spec.mup {
            Some(m) if m.mlp_down != 1.0 => Ok(down.affine(m.mlp_down, 0.0)?),
            _ => Ok(down),
        }
    }

    /// ZAYA's router MLP: its logits over the experts and the class that computes nothing, from
    /// the FFN input `x`; the state it carries on to the next layer is kept for it.
    fn router_mlp(&self, x: &Tensor, b: usize) -> Res<Tensor> {
        let mut r = self.proj(x, Role::RouterDown, b, true)?;
        if b > 0 {
            if let Some(prev) = self.router_state.borrow().as_ref() {
                r = (r + prev.broadcast_mul(self.w(Role::RouterState, Some(b))?)?)?;
            }
        }
        *self.router_state.borrow_mut() = Some(r.clone());
        let n = Norm {
            kind: anatomy_core::spec::NormKind::Rms,
            ..self.spec.norm.clone()
        };
        let h = norm(&r, Some(self.w(Role::RouterNorm, Some(b))?), None, &n)?;
        let h = self.proj(&h, Role::RouterFc1, b, true)?.gelu_erf()?;
        let h = self.proj(&h, Role::RouterFc2, b, true)?.gelu_erf()?;
        self.proj(&h, Role::Router, b, false)
    }

    /// ZAYA's compressed convolutional attention: Q, K and V ([t, H·d], [t, KV·d], [t, KV·d])
    /// from the input `x`, the convolutions' last inputs and the last delayed value carried in
    /// the layer's state.
    fn cca(
        &self,
        x: &Tensor,
        b: usize,
        cca: anatomy_core::spec::Cca,
        cache: &mut Cache,
    ) -> Res<(Tensor, Tensor, Tensor)> {
        let a = self.spec.attn_at(b);
        let (t, h, kv, hd) = (
            x.dim(0)?,
            a.heads as usize,
            a.kv_heads as usize,
            a.head_dim as usize,
        );
        let (qw, kw, c, g) = (h * hd, kv * hd, (h + kv) * hd, h / kv);
        let qp = self.proj(x, Role::Q, b, a.qkv_bias)?;
        let kp = self.proj(x, Role::K, b, a.qkv_bias)?;
        // The residual paths: each query head's mean of its query and its K/V head's key, and
        // for each K/V head the mean of those over its query heads.
        let k_rep = kp
            .reshape((t, kv, 1, hd))?
            .broadcast_as((t, kv, g, hd))?
            .reshape((t, h, hd))?;
        let q_res = ((qp.reshape((t, h, hd))? + k_rep)? * 0.5)?;
        let k_res = q_res.reshape((t, kv, g, hd))?.mean(2)?;
        // The convolutions, over the carried inputs and this call's.
        let (k0, k1) = (cca.depthwise as usize, cca.grouped as usize);
        let reach = cca.reach() as usize;
        let mut state = cache.ssm[b]
            .take()
            .unwrap_or_else(|| crate::ssm::SsmState::new(reach + 1, c, 0, 0, 0));
        let raw: Vec<f32> = Tensor::cat(&[&qp, &kp], 1)?.flatten_all()?.to_vec1()?;
        let mut full = state.conv.clone();
        full.extend_from_slice(&raw);
        let vec = |role, bias| -> Res<Vec<f32>> {
            let name = self.name(role, bias, Some(b), None);
            Ok(self.weights.get(&name)?.flatten_all()?.to_vec1()?)
        };
        let (w0, b0) = (
            vec(Role::CcaConvDepthwise, false)?,
            vec(Role::CcaConvDepthwise, true)?,
        );
        let (w1, b1) = (
            vec(Role::CcaConvGrouped, false)?,
            vec(Role::CcaConvGrouped, true)?,
        );
        let mid = t + k1 - 1;
        let mut y1 = vec![0f32; mid * c];
        for p in 0..mid {
            for ch in 0..c {
                let mut s = b0[ch];
                for j in 0..k0 {
                    s += w0[ch * k0 + j] * full[(p + j) * c + ch];
                }
                y1[p * c + ch] = s;
            }
        }
        let mut y2 = vec![0f32; t * c];
        for p in 0..t {
            for ch in 0..c {
                let group = ch / hd * hd;
                let mut s = b1[ch];
                for cc in 0..hd {
                    for j in 0..k1 {
                        s += w1[(ch * hd + cc) * k1 + j] * y1[(p + j) * c + group + cc];
                    }
                }
                y2[p * c + ch] = s;
            }
        }
        state.conv = full[full.len() - reach * c..].to_vec();
        let y2 = Tensor::from_vec(y2, (t, c), &Device::Cpu)?;
        let q = (y2.narrow(1, 0, qw)?.reshape((t, h, hd))? + q_res)?;
        let k = (y2.narrow(1, qw, kw)?.reshape((t, kv, hd))? + k_res)?;
        // The values: half from this token, half (the delayed projection) from the one before.
        let vc = self.proj(x, Role::CcaVCurrent, b, a.qkv_bias)?;
        let vd = self.proj(x, Role::CcaVDelayed, b, a.qkv_bias)?;
        let half = kw / 2;
        let prev = if state.h.len() == half {
            Tensor::from_vec(state.h.clone(), (1, half), &Device::Cpu)?
        } else if a.qkv_bias {
            self.bias(Role::CcaVDelayed, Some(b))?.reshape((1, half))?
        } else {
            Tensor::zeros((1, half), DType::F32, &Device::Cpu)?
        };
        let delayed = Tensor::cat(&[&prev, &vd.narrow(0, 0, t - 1)?], 0)?;
        state.h = vd.narrow(0, t - 1, 1)?.flatten_all()?.to_vec1()?;
        cache.ssm[b] = Some(state);
        let v = Tensor::cat(&[&vc, &delayed], 1)?;
        // Q and K to length √d per head, K then times its K/V head's learned scale.
        let unit = |x: &Tensor| -> Res<Tensor> {
            let len = x
                .sqr()?
                .sum_keepdim(2)?
                .sqrt()?
                .clamp(f32::EPSILON, f32::MAX)?;
            Ok(x.broadcast_div(&len)?.affine((hd as f64).sqrt(), 0.0)?)
        };
        let q = unit(&q)?.reshape((t, qw))?;
        let temp = self.w(Role::CcaKeyTemp, Some(b))?.reshape((1, kv, 1))?;
        let k = unit(&k)?.broadcast_mul(&temp)?.reshape((t, kw))?;
        Ok((q, k, v))
    }

    fn moe(&self, x: &Tensor, b: usize) -> Res<Tensor> {
        self.moe_reading(x, x, b)
    }

    /// The mixture of experts of layer `b`: its router reading `router_x`, its experts `x`.
    fn moe_reading(&self, router_x: &Tensor, x: &Tensor, b: usize) -> Res<Tensor> {
        self.moe_by_ids(router_x, x, b, None)
    }

    /// The experts, with the step's token ids where a layer routes by them (DeepSeek-V4).
    fn moe_by_ids(
        &self,
        router_x: &Tensor,
        x: &Tensor,
        b: usize,
        ids: Option<&[u32]>,
    ) -> Res<Tensor> {
        let spec = &self.spec;
        let m = spec.moe.as_ref().expect("MoE layer");
        let (t, e, k) = (x.dim(0)?, m.experts as usize, m.top_k as usize);
        // The router scores the zero-computation experts after the routed ones, and ZAYA's a
        // class that computes nothing.
        let sink = m.scoring == Scoring::SigmoidSink;
        let shared = if sink { m.shared_experts as usize } else { 0 };
        let scored = e + m.zero_experts as usize + usize::from(m.router_mlp.is_some()) + shared;
        // Gemma 4's router reads its input normed (no weight), times a vector and 1/√hidden.
        let router_x = if m.router_norm {
            let s = self.w(Role::RouterScale, Some(b))?;
            let rx = rms(router_x, spec.norm.eps)?
                .broadcast_mul(s)?
                .affine(1.0 / (spec.hidden as f64).sqrt(), 0.0)?;
            self.keep(Some(b), Point::RouterIn, &rx);
            rx
        } else {
            router_x.clone()
        };
        let mut logits = match m.router_mlp {
            Some(_) => self.router_mlp(&router_x, b)?,
            None => self.proj(&router_x, Role::Router, b, m.router_bias)?,
        };
        if let Some(c) = m.router_softcap {
            logits = softcap(&logits, c)?;
        }
        let lg: Vec<Vec<f32>> = logits.to_vec2()?;
        // DeepSeek-V4's first layers route by token id, without a correction bias.
        let hashed = (m.hash_layers.as_ref()).is_some_and(|h| h.contains(b as u64));
        let correction: Option<Vec<f32>> = if m.correction_bias && !hashed {
            Some(
                self.weights
                    .get(&self.name(Role::CorrectionBias, false, Some(b), None))?
                    .flatten_all()?
                    .to_vec1()?,
            )
        } else {
            None
        };
        self.keep(Some(b), Point::Router, &logits);
        // Routing on the host: per token, the chosen experts and their weights.
        let mut choices: Vec<Vec<(usize, f32)>> = Vec::with_capacity(t);
        if m.router_mlp.is_some() {
            // ZAYA: the best class after the balancing biases, weighted by its probability; the
            // last class computes nothing.
            let balance: Vec<f32> = self.w(Role::RouterBalance, Some(b))?.to_vec1()?;
            for row in &lg {
                let top = row.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
                let ex: Vec<f32> = row.iter().map(|l| (l - top).exp()).collect();
                let sum: f32 = ex.iter().sum();
                let p: Vec<f32> = ex.iter().map(|v| v / sum).collect();
                let c = (0..p.len())
                    .max_by(|&i, &j| {
                        (p[i] + balance[i])
                            .total_cmp(&(p[j] + balance[j]))
                            .then(j.cmp(&i))
                    })
                    .unwrap_or(0);
                choices.push(if c < e { vec![(c, p[c])] } else { vec![] });
            }
        } else if hashed {
            let ids = ids.expect("hash routing reads the step's token ids");
            choices = self.hashed(&lg, m, b, ids)?;
        } else {
            for row in &lg {
                choices.push(route(row, m, correction.as_deref(), scored, k));
            }
        }
        // Inkling: every weight, the shared experts' too, times the router's learned scalar.
        if sink {
            let g: Vec<f32> = self.w(Role::RouterScalar, Some(b))?.to_vec1()?;
            for c in &mut choices {
                c.iter_mut().for_each(|(_, w)| *w *= g[0]);
            }
        }
        // Gemma 4: each chosen weight times its expert's learned scale.
        if m.expert_scale {
            let s: Vec<f32> = self.w(Role::RouterExpertScale, Some(b))?.to_vec1()?;
            for c in &mut choices {
                for (ex, w) in c.iter_mut() {
                    *w *= s[*ex];
                }
            }
        }
        // The routing table: each token's weight for each expert, zero where not chosen.
        let mut table = vec![0f32; t * scored];
        for (i, c) in choices.iter().enumerate() {
            for &(ex, w) in c {
                table[i * scored + ex] = w;
            }
        }
        self.keep(
            Some(b),
            Point::Routing,
            &Tensor::from_vec(table, (t, scored), &Device::Cpu)?,
        );
        let mut out = Tensor::zeros((t, spec.hidden as usize), DType::F32, &Device::Cpu)?;
        for ex in 0..e {
            let rows: Vec<(u32, f32)> = choices
                .iter()
                .enumerate()
                .filter_map(|(i, c)| {
                    c.iter()
                        .find(|(id, _)| *id == ex)
                        .map(|(_, w)| (i as u32, *w))
                })
                .collect();
            if rows.is_empty() {
                continue;
            }
            let idx = Tensor::new(
                rows.iter().map(|r| r.0).collect::<Vec<_>>().as_slice(),
                &Device::Cpu,
            )?;
            let wts = Tensor::new(
                rows.iter().map(|r| r.1).collect::<Vec<_>>().as_slice(),
                &Device::Cpu,
            )?
            .unsqueeze(1)?;
            let xs = x.index_select(&idx, 0)?;
            let y = if m.scoring == Scoring::TopkSigmoid {
                self.expert(&xs.broadcast_mul(&wts)?, b, ex)?
            } else {
                self.expert(&xs, b, ex)?.broadcast_mul(&wts)?
            };
            out = out.index_add(&idx, &y, 0)?;
        }
        if m.zero_experts > 0 {
            // A chosen zero-computation expert returns its input, weighted.
            let w: Vec<f32> = (choices.iter())
                .map(|c| c.iter().filter(|(id, _)| *id >= e).map(|(_, w)| w).sum())
                .collect();
            out = (out + x.broadcast_mul(&Tensor::from_vec(w, (t, 1), &Device::Cpu)?)?)?;
        }
        if sink {
            // Inkling: each shared expert a gated MLP of its own (stacked [S, I, H]), weighted
            // by the router.
            let (wg, wu, wd) = (
                self.w(Role::SharedGate, Some(b))?,
                self.w(Role::SharedUp, Some(b))?,
                self.w(Role::SharedDown, Some(b))?,
            );
            for j in 0..shared {
                let g = x.matmul(&wg.get(j)?.t()?)?;
                let u = x.matmul(&wu.get(j)?.t()?)?;
                let y = self.glu(&g, &u, None, false)?.matmul(&wd.get(j)?.t()?)?;
                let wts: Vec<f32> = (choices.iter())
                    .map(|c| c.iter().find(|(id, _)| *id == e + j).map_or(0.0, |p| p.1))
                    .collect();
                let y = y.broadcast_mul(&Tensor::from_vec(wts, (t, 1), &Device::Cpu)?)?;
                self.keep_expert(b, Point::SharedDown, &y, j);
                out = (out + y)?;
            }
        } else if m.shared_experts > 0 && !self.spec.mlp.gated {
            // A plain shared MLP: up, the activation, down (Nemotron-H).
            let u = self.proj(x, Role::SharedUp, b, m.shared_bias)?;
            self.keep(Some(b), Point::SharedUp, &u);
            let a = self.act(&u)?;
            self.keep(Some(b), Point::SharedAct, &a);
            let s = self.proj(&a, Role::SharedDown, b, m.shared_bias)?;
            self.keep(Some(b), Point::SharedDown, &s);
            out = (out + s)?;
        } else if m.shared_experts > 0 {
            let (g, u) = if m.shared_fused {
                let f = m.shared_intermediate as usize;
                let gu = self.proj(x, Role::SharedGateUp, b, m.shared_bias)?;
                (gu.narrow(1, 0, f)?, gu.narrow(1, f, f)?)
            } else {
                (
                    self.proj(x, Role::SharedGate, b, m.shared_bias)?,
                    self.proj(x, Role::SharedUp, b, m.shared_bias)?,
                )
            };
            self.keep(Some(b), Point::SharedGate, &g);
            self.keep(Some(b), Point::SharedUp, &u);
            // DeepSeek-V4 clamps the shared expert as the routed ones.
            let a = if m.shared_clamp {
                self.glu(&g, &u, m.swiglu_limit, m.swiglu_plain)?
            } else if let Some(c) = &m.act_clips {
                self.clipped_glu(&g, &u, c.limit(b, true))?
            } else {
                self.glu(&g, &u, self.spec.mlp.clamp, false)?
            };
            self.keep(Some(b), Point::SharedAct, &a);
            let mut s = self.proj(&a, Role::SharedDown, b, m.shared_bias)?;
            self.keep(Some(b), Point::SharedDown, &s);
            if m.shared_gate {
                let name = self.name(Role::SharedExpertGate, false, Some(b), None);
                let g = self.linear(x, &name, None)?;
                self.keep(Some(b), Point::SharedExpertGate, &g);
                let g = sigmoid(&g)?;
                s = s.broadcast_mul(&g)?;
            }
            out = (out + s)?;
            if m.shared_average {
                out = (out * 0.5)?;
            }
        }
        if m.out_bias {
            out = out.broadcast_add(self.bias(Role::MoeBlock, Some(b))?)?;
        }
        if m.post_norm {
            out = self.norm(&out, Role::MoePostNorm, Some(b))?;
            self.keep(Some(b), Point::MoePostNorm, &out);
        }
        Ok(out)
    }

    fn expert(&self, x: &Tensor, b: usize, e: usize) -> Res<Tensor> {
        let m = self.spec.moe.as_ref().expect("MoE");
        let f = m.expert_intermediate as usize;
        if !self.spec.mlp.gated {
            // Plain experts, each stored apart: up, the activation, down (Nemotron-H).
            let w = move |role| self.name(role, false, Some(b), Some(e));
            let u = self.linear(x, &w(Role::ExpertUp), None)?;
            self.keep_expert(b, Point::ExpertUp, &u, e);
            let hidden = self.act(&u)?;
            self.keep_expert(b, Point::ExpertAct, &hidden, e);
            let y = self.linear(&hidden, &w(Role::ExpertDown), None)?;
            self.keep_expert(b, Point::ExpertDown, &y, e);
            return Ok(y);
        }
        // Gate and up, each [t, f], by how the experts are stored; then the down projection.
        let (g, u, down): (Tensor, Tensor, DownProj<'_>) = match m.storage {
            ExpertStorage::Stacked {
                out_in,
                interleaved,
            } => {
                // [E, in, out] (or [E, out, in]) tensors, gate and up fused (interleaved or
                // in halves).
                let slice = move |role, bias| -> Res<Tensor> {
                    let name = self.name(role, bias, Some(b), None);
                    let w = self.weights.get(&name)?.i(e)?;
                    if out_in && !bias {
                        Ok(w.t()?)
                    } else {
                        Ok(w)
                    }
                };
                // x · W (+ b) with expert e's slice of the stacked weight and bias, or its
                // weight as stored apart (MXFP4, `Weights::mxfp4`).
                let times = move |x: &Tensor, role| -> Res<Tensor> {
                    let part = format!("{}[{e}]", self.name(role, false, Some(b), None));
                    let y = match self.weights.quantized.get(&part) {
                        Some(q) => q.times(&x.contiguous()?)?,
                        None => x.matmul(&slice(role, false)?)?,
                    };
                    if m.expert_bias {
                        Ok(y.broadcast_add(&slice(role, true)?)?)
                    } else {
                        Ok(y)
                    }
                };
                let gu = times(x, Role::ExpertGateUp)?;
                let (g, u) = if interleaved {
                    let pairs = gu.reshape((gu.dim(0)?, f, 2))?;
                    (pairs.i((.., .., 0))?, pairs.i((.., .., 1))?)
                } else {
                    (gu.narrow(1, 0, f)?, gu.narrow(1, f, f)?)
                };
                (g, u, Box::new(move |h| times(h, Role::ExpertDown)))
            }
            ExpertStorage::Flat => {
                // Expert e's rows of one 2-D tensor per projection: gate and up [out, in],
                // down [in, out].
                let rows =
                    move |role| -> Res<Tensor> { Ok(self.w(role, Some(b))?.narrow(0, e * f, f)?) };
                let g = x.matmul(&rows(Role::ExpertGate)?.t()?)?;
                let u = x.matmul(&rows(Role::ExpertUp)?.t()?)?;
                (
                    g,
                    u,
                    Box::new(move |h| Ok(h.matmul(&rows(Role::ExpertDown)?)?)),
                )
            }
            ExpertStorage::PerExpert => {
                let w = move |role| self.name(role, false, Some(b), Some(e));
                (
                    self.linear(x, &w(Role::ExpertGate), None)?,
                    self.linear(x, &w(Role::ExpertUp), None)?,
                    Box::new(move |h| self.linear(h, &w(Role::ExpertDown), None)),
                )
            }
        };
        self.keep_expert(b, Point::ExpertGate, &g, e);
        self.keep_expert(b, Point::ExpertUp, &u, e);
        let hidden = match m.glu_softcaps {
            // Inkling 2: cap_g(g) · σ(g) · cap_u(u).
            Some((cg, cu)) => ((softcap(&g, cg)? * sigmoid(&g)?)? * softcap(&u, cu)?)?,
            None => match &m.act_clips {
                Some(c) => self.clipped_glu(&g, &u, c.limit(b, false))?,
                None => self.glu(&g, &u, m.swiglu_limit, m.swiglu_plain)?,
            },
        };
        self.keep_expert(b, Point::ExpertAct, &hidden, e);
        let y = down(&hidden)?;
        self.keep_expert(b, Point::ExpertDown, &y, e);
        Ok(y)
    }

    /// act(gate) ⊙ up, or gpt-oss's clamped form: (clamp(up) + 1) · g · σ(1.702 g), g = min(gate, limit);
    /// `plain`: act(gate) ⊙ up of the clamped inputs.
    /// Ling's clip after the activation: min(act(gate), L) ⊙ clamp(up, −L, L).
    fn clipped_glu(&self, g: &Tensor, u: &Tensor, limit: Option<f64>) -> R<Tensor> {
        match limit {
            Some(l) => {
                let g = self.act(g)?.clamp(f32::MIN, l as f32)?;
                g * u.clamp(-l as f32, l as f32)?
            }
            None => self.act_mul(g, u),
        }
    }

    fn glu(&self, g: &Tensor, u: &Tensor, limit: Option<f64>, plain: bool) -> R<Tensor> {
        match limit {
            // HY v4: act(gate) ⊙ up of the clamped inputs.
            Some(l) if plain => {
                let g = g.clamp(f32::MIN, l as f32)?;
                let u = u.clamp(-l as f32, l as f32)?;
                self.act_mul(&g, &u)
            }
            Some(l) => {
                let g = g.clamp(f32::MIN, l as f32)?;
                let u = u.clamp(-l as f32, l as f32)?;
                let sig = sigmoid(&g.affine(1.702, 0.0)?)?;
                (u.affine(1.0, 1.0)? * g)? * sig
            }
            None => self.act_mul(g, u),
        }
    }
}

/// An expert's down projection, applied to its hidden activations.
type DownProj<'a> = Box<dyn Fn(&Tensor) -> Res<Tensor> + 'a>;

/// One token's use of an expert: (token, slot, weight).
type Pick = (usize, usize, f32);

/// Each expert some token chose, with its picks.
fn by_expert(choices: &[Vec<(usize, f32)>]) -> Vec<(usize, Vec<Pick>)> {
    let mut out: std::collections::BTreeMap<usize, Vec<Pick>> = Default::default();
    for (tok, c) in choices.iter().enumerate() {
        for (slot, &(ex, w)) in c.iter().enumerate() {
            out.entry(ex).or_default().push((tok, slot, w));
        }
    }
    out.into_iter().collect()
}

/// The indices of the `n` highest scores, best first.
fn top_indices(scores: &[f32], n: usize) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..scores.len()).collect();
    idx.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    idx.truncate(n);
    idx
}

fn softmax_of(v: &[f32]) -> Vec<f32> {
    let mx = v.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
    let ex: Vec<f32> = v.iter().map(|x| (x - mx).exp()).collect();
    let s: f32 = ex.iter().sum();
    ex.iter().map(|x| x / s).collect()
}

/// A router's score of one logit: σ, or DeepSeek-V4's √softplus (as torch's softplus: the
/// logit itself above 20).
fn router_score(s: Scoring, v: f32) -> f32 {
    match s {
        Scoring::SqrtSoftplus => if v > 20.0 { v } else { v.exp().ln_1p() }.sqrt(),
        Scoring::Sigmoid | Scoring::SigmoidBiasedLogits | Scoring::SigmoidSink => {
            1.0 / (1.0 + (-v).exp())
        }
        other => unreachable!("{other:?} scores over the whole row, not logit by logit"),
    }
}

/// The experts a token's router row chooses, with their weights.
fn route(
    row: &[f32],
    m: &anatomy_core::spec::Moe,
    correction: Option<&[f32]>,
    e: usize,
    k: usize,
) -> Vec<(usize, f32)> {
    let mut chosen: Vec<(usize, f32)> = match m.scoring {
        Scoring::SparseMixer { eps } => {
            // The best expert, then the best of the rest, each weighted by a softmax over the
            // logits within a relative 2·eps of its own (NaN distances stay in, as in torch).
            let mut masked = row.to_vec();
            let mut chosen = Vec::with_capacity(2);
            for _ in 0..2 {
                let e = top_indices(&masked, 1)[0];
                let m = masked[e];
                let near: Vec<f32> = masked
                    .iter()
                    .zip(row)
                    .map(|(&x, &s)| {
                        let far = (m - s) / s.abs().max(m) > (2.0 * eps) as f32;
                        if far {
                            f32::NEG_INFINITY
                        } else {
                            x
                        }
                    })
                    .collect();
                chosen.push((e, softmax_of(&near)[e]));
                masked[e] = f32::NEG_INFINITY;
            }
            chosen
        }
        Scoring::SigmoidSink => {
            // The routed experts chosen by σ plus the bias; the chosen and the shared ones (the
            // row's last) weighted by σ normalized over them all.
            let routed = m.experts as usize;
            let probs: Vec<f32> = row.iter().map(|v| 1.0 / (1.0 + (-v).exp())).collect();
            let choice: Vec<f32> = (0..routed)
                .map(|i| probs[i] + correction.map_or(0.0, |c| c[i]))
                .collect();
            let picked: Vec<(usize, f32)> = top_indices(&choice, k)
                .into_iter()
                .chain(routed..probs.len())
                .map(|i| (i, probs[i]))
                .collect();
            let sum: f32 = picked.iter().map(|p| p.1).sum();
            picked.into_iter().map(|(i, p)| (i, p / sum)).collect()
        }
        Scoring::TopkSoftmax | Scoring::TopkSigmoid => {
            let idx = top_indices(row, k);
            let vals: Vec<f32> = idx.iter().map(|&i| row[i]).collect();
            let w = if m.scoring == Scoring::TopkSoftmax {
                softmax_of(&vals)
            } else {
                vals.iter().map(|v| 1.0 / (1.0 + (-v).exp())).collect()
            };
            idx.into_iter().zip(w).collect()
        }
        Scoring::Softmax
        | Scoring::Sigmoid
        | Scoring::SigmoidBiasedLogits
        | Scoring::SqrtSoftplus => {
            let probs: Vec<f32> = match m.scoring {
                Scoring::Softmax => softmax_of(row),
                s @ (Scoring::Sigmoid | Scoring::SigmoidBiasedLogits | Scoring::SqrtSoftplus) => {
                    row.iter().map(|&v| router_score(s, v)).collect()
                }
                other => unreachable!("{other:?} is routed by its own arm"),
            };
            let biased = if m.scoring == Scoring::SigmoidBiasedLogits {
                row
            } else {
                &probs
            };
            let mut choice: Vec<f32> = biased
                .iter()
                .enumerate()
                .map(|(i, p)| p + correction.map_or(0.0, |c| c[i]))
                .collect();
            let groups = m.n_group as usize;
            if groups > 1 {
                let per = e / groups;
                let score = |g: usize| -> f32 {
                    let mut s: Vec<f32> = choice[g * per..(g + 1) * per].to_vec();
                    s.sort_by(|a, b| b.total_cmp(a));
                    if m.scoring == Scoring::Sigmoid {
                        s[0] + s.get(1).copied().unwrap_or(0.0)
                    } else {
                        s[0]
                    }
                };
                let gs: Vec<f32> = (0..groups).map(score).collect();
                let keep = top_indices(&gs, m.topk_group as usize);
                // Out, whatever their score: a chosen group's expert may score below zero (a
                // sigmoid plus a negative correction bias) and must still win over them.
                for (i, c) in choice.iter_mut().enumerate() {
                    if !keep.contains(&(i / per)) {
                        *c = f32::NEG_INFINITY;
                    }
                }
            }
            let idx = top_indices(&choice, k);
            let mut w: Vec<f32> = idx.iter().map(|&i| probs[i]).collect();
            if m.norm_topk_prob {
                let s: f32 = w.iter().sum::<f32>()
                    + if m.scoring != Scoring::Softmax {
                        m.renorm_eps as f32
                    } else {
                        0.0
                    };
                w.iter_mut().for_each(|x| *x /= s);
            }
            idx.into_iter().zip(w).collect()
        }
    };
    for c in &mut chosen {
        c.1 *= m.routed_scaling as f32;
    }
    chosen
}

/// A residual convolution's inputs: the `past` carried (taps − 1 rows of x's width, zeros
/// before the first token) then `x`'s rows, [taps − 1 + t, c]; `past` keeps the last taps − 1
/// for the next step.
fn carried(past: &mut Vec<f32>, x: &Tensor, taps: usize) -> Res<Vec<f32>> {
    let (t, c) = x.dims2()?;
    if past.len() != (taps - 1) * c {
        *past = vec![0.0; (taps - 1) * c];
    }
    let mut all = std::mem::take(past);
    all.extend(x.flatten_all()?.to_vec1::<f32>()?);
    *past = all[t * c..].to_vec();
    Ok(all)
}

/// Each row of `x` scaled down to L2 norm `c` where longer: x · min(1, c / (‖x‖ + 10⁻⁶)).
fn l2_clip(x: &Tensor, c: f64) -> R<Tensor> {
    let norm = x.sqr()?.sum_keepdim(D::Minus1)?.sqrt()?;
    let f = (norm + 1e-6)?
        .recip()?
        .affine(c, 0.0)?
        .clamp(f32::MIN, 1.0)?;
    x.broadcast_mul(&f)
}

/// ln(1 + eˣ), as max(x, 0) + ln(1 + e^−|x|) so that large x do not overflow.
fn softplus(x: &Tensor) -> R<Tensor> {
    x.relu()? + (x.abs()?.neg()?.exp()? + 1.0)?.log()?
}

/// A tensor's values, flat, for the recurrences that run on slices.
/// `x` rescaled to the RMS of `target` (each row): x · rms(target) / √max(mean(x²), 10⁻⁵).
fn rescaled(x: &Tensor, target: &Tensor) -> R<Tensor> {
    let want = target.sqr()?.mean_keepdim(D::Minus1)?.sqrt()?;
    let have = x
        .sqr()?
        .mean_keepdim(D::Minus1)?
        .clamp(1e-5f32, f32::MAX)?
        .sqrt()?;
    x.broadcast_mul(&(want / have)?)
}

/// Gemma 3n's activation sparsity: each row's values above mean + Φ⁻¹(p) · std (the biased
/// std), shifted down by that level, the rest 0.
fn gaussian_top_k(g: &Tensor, p: f64) -> R<Tensor> {
    let z = anatomy_core::spec::normal_quantile(p) as f32 as f64;
    let mean = g.mean_keepdim(D::Minus1)?;
    let centered = g.broadcast_sub(&mean)?;
    let std = centered.sqr()?.mean_keepdim(D::Minus1)?.sqrt()?;
    let cutoff = (mean + std.affine(z, 0.0)?)?;
    g.broadcast_sub(&cutoff)?.relu()
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

/// `x` projected onto the unit sphere over its last dim (nGPT): length 1, not RMS 1.
fn unit(x: &Tensor, eps: f64) -> R<Tensor> {
    x.broadcast_div(&(x.sqr()?.sum_keepdim(D::Minus1)? + eps)?.sqrt()?)
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
