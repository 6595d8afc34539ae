//! The Graph: the model as nested scopes holding numbered steps, every tensor with its dims and,
//! for a weight, the checkpoint tensor (and slice) it comes from.
//!
//! Everything after the Spec reads this: parameter counts are sums over `params`, the manifest is
//! their names, the terminal view draws `root`.

mod altup;
mod attention;
mod attn_res;
mod blt;
mod build;
mod cca;
mod cross;
mod delta;
mod draft;
mod embedding;
mod ffn;
mod gated;
mod head;
mod hierarchy;
mod hyper;
mod indexer;
mod kv_conv;
mod layer;
mod lightning;
mod looped;
mod mla;
mod mlstm;
mod moa;
mod ngram;
mod per_layer;
mod point;
mod pool_index;
mod qsa;
mod rel_logits;
mod rglru;
mod rwkv;
mod shared;
mod ssm;
mod v4;

pub use build::build;
pub use point::Point;

use crate::layers::LayerSet;
use crate::spec::Spec;

#[derive(Debug, Clone)]
pub struct Graph {
    pub spec: Spec,
    /// Every checkpoint tensor template the model reads, in first-use order.
    pub params: Vec<Param>,
    pub tensors: Vec<Tensor>,
    pub root: Scope,
    pub step_count: usize,
}

/// What a parameter counts towards in `stats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Component {
    Embedding,
    Attention,
    Ffn,
    Norm,
    LmHead,
    /// A state-space mixer's own tensors (Mamba2's projections, convolution, decay rates).
    Mixer,
    /// An auxiliary module outside the model's forward pass (DeepSeek's multi-token prediction):
    /// stored in checkpoints, counted apart.
    Aux,
}

impl Component {
    pub const ALL: [Component; 6] = [
        Component::Embedding,
        Component::Attention,
        Component::Mixer,
        Component::Ffn,
        Component::Norm,
        Component::LmHead,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Component::Embedding => "embedding",
            Component::Attention => "attention",
            Component::Ffn => "ffn",
            Component::Norm => "norms",
            Component::LmHead => "lm_head",
            Component::Mixer => "mixer",
            Component::Aux => "auxiliary",
        }
    }
}

/// Drawing category (color and legend).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Category {
    Attention,
    /// A recurrent or state-space mixer (Mamba2).
    Mixer,
    Ffn,
    /// Norms and residual adds.
    Norm,
    /// Embedding and LM head.
    Embed,
    Aux,
}

/// One checkpoint tensor template: `{b}` repeats it per layer, `{e}` per expert.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub hf: String,
    pub gguf: String,
    /// Shape as stored (PyTorch order, rows first).
    pub shape: Vec<u64>,
    pub component: Component,
    /// The layers holding one instance each; `None` for tensors outside the blocks.
    pub layers: Option<LayerSet>,
    /// Instances per layer over `{e}` (1 when not per expert).
    pub experts: u64,
    /// Of those, how many run for one token (the top-k of routed experts).
    pub active: u64,
    /// The experts are stored as one 2-D tensor, their rows one after another (DBRX), rather
    /// than stacked along a first axis of their own.
    pub flat: bool,
    /// Belongs to routed experts: only `top_k` of `experts` are active per token.
    pub routed: bool,
    /// A mixture of experts' router (its logits' matrix), which GPTQ and AWQ leave unquantized.
    pub router: bool,
    /// The BLT stack whose layers `layers` counts; `None`: the model's own.
    pub stack: Option<crate::spec::Stack>,
    /// Rows stored past the model's own (Inkling's head, padded to `vocab_size` with zeros when
    /// saved; transformers builds only the first `unpadded_vocab_size`): not parameters.
    pub padding_rows: u64,
}

impl Param {
    /// Values stored, padding included.
    pub fn numel(&self) -> u128 {
        self.shape.iter().map(|&d| d as u128).product()
    }

    /// Parameters: what is stored, less the padding rows.
    pub fn counted(&self) -> u128 {
        let rows = self.shape.first().copied().unwrap_or(1).max(1) as u128;
        self.numel() - self.numel() / rows * self.padding_rows as u128
    }

    /// Number of stored instances (layers × experts).
    pub fn instances(&self) -> u128 {
        self.layers.as_ref().map_or(1, |l| l.len() as u128) * self.experts as u128
    }
}

/// A size along one edge of a drawn tensor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dim {
    /// The sequence length: symbolic.
    Seq,
    N(u64),
    /// A size with a worked label (`128×3×8=3072`).
    Labeled(String, u64),
    /// One per closed window of this many tokens, ⌊seq / m⌋: symbolic (DeepSeek-V4's compressed
    /// entries).
    Windows(u64),
}

impl Dim {
    /// Tokens per row along this dim where it grows with the sequence: 1 for `Seq`, m for
    /// `Windows(m)`.
    pub fn every(&self) -> Option<u64> {
        match self {
            Dim::Seq => Some(1),
            Dim::Windows(m) => Some(*m),
            Dim::N(_) | Dim::Labeled(..) => None,
        }
    }

    pub fn size(&self) -> Option<u64> {
        match self {
            Dim::Seq | Dim::Windows(_) => None,
            Dim::N(n) | Dim::Labeled(_, n) => Some(*n),
        }
    }
}

/// The label drawn on a box's edge: `seq`, `seq/m`, the size, or its worked label.
impl std::fmt::Display for Dim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dim::Seq => f.write_str("seq"),
            Dim::Windows(m) => write!(f, "seq/{m}"),
            Dim::N(n) => write!(f, "{n}"),
            Dim::Labeled(s, _) => f.write_str(s),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum TensorKind {
    Activation {
        /// Kept in the KV cache.
        cached: bool,
    },
    /// A recurrent layer's state: one per sequence, the same size however long the context,
    /// carried from each token to the next (the KV cache's counterpart).
    State,
    Weight {
        param: usize,
        /// The part of the checkpoint tensor read here, in Python slice notation (`[128*i:128*(i+1), :]`).
        slice: Option<String>,
        /// Drawn transposed relative to storage (an embedding drawn hidden × vocab).
        note: Option<String>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    /// Display name with sub- and superscripts (`Xᵦ′`, `Kᵣᵀ`).
    pub name: String,
    /// Drawn as rows × cols: `[rows]` for vectors drawn as a column.
    pub dims: [Dim; 2],
    pub kind: TensorKind,
}

impl Tensor {
    pub fn is_weight(&self) -> bool {
        matches!(self.kind, TensorKind::Weight { .. })
    }

    /// Elements per sequence position (product of the non-`seq` dims), or all elements of a weight.
    pub fn elems(&self) -> u128 {
        self.dims
            .iter()
            .filter_map(Dim::size)
            .map(|n| n as u128)
            .product()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Lookup,
    Route,
    Norm,
    MatMul,
    Rope,
    /// Q·Kᵀ over `dim` per attended position.
    Scores {
        dim: u64,
    },
    Softmax,
    /// A·V over `dim` per attended position.
    WeightedSum {
        dim: u64,
    },
    Concat,
    Add,
    Activation,
    /// Choose each token's experts and their weights.
    TopK,
    /// Weighted sum of the chosen experts' outputs.
    Combine,
    /// Multiplication by a constant.
    Scale,
    /// DeepSeek sparse attention's index scores: every visible key scored by the indexer's heads,
    /// `dim` multiply-adds per key (heads × head dim).
    Index {
        dim: u64,
    },
    /// Keep each query's `k` best-scored keys; attention masks the rest.
    Select {
        k: u64,
    },
    /// A causal depthwise convolution over the last `kernel` positions of each channel.
    Conv {
        kernel: u64,
    },
    /// One step of a recurrence per token through a state of fixed size: `flops` per token
    /// (2 per multiply-add), whatever the context.
    Scan {
        flops: u64,
    },
}

#[derive(Debug, Clone)]
pub struct Step {
    /// 1-based, in drawing order.
    pub number: usize,
    pub title: String,
    pub op: Op,
    pub category: Category,
    pub inputs: Vec<usize>,
    pub output: usize,
    pub operation: String,
    pub equation: String,
    /// Runs only in these layers of its block (RoPE skipped in NoPE layers); `None`: in all of them.
    pub layers: Option<LayerSet>,
    /// What it computes, where a run's values can be shown on it.
    pub point: Option<Point>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeKind {
    Model,
    /// An auxiliary module (multi-token prediction), drawn after the model.
    Aux,
    /// The layers that cross-attend to an image (Mllama), drawn after the decoder block: a
    /// prompt without an image skips them.
    CrossAttention,
    Embedding,
    Block,
    /// The attention of one variant's layers, where the layers' attentions differ
    /// (`Spec::layer_attn`).
    Attention,
    Group,
    Head,
    Mlp,
    Moe,
    Experts,
    /// DeepSeek sparse attention's indexer, in the layers that run one of their own (GLM-5).
    Indexer,
    /// DeepSeek-V4's compressor of a kind of layer, with the indexer where it has one.
    Compressor,
    /// A recurrent mixer in the layers that run it, beside the attention of the others.
    Mixer,
    /// Gemma 4's per-layer input, gated into the layer's output after its FFN.
    PerLayer,
    /// Zamba2's shared transformer block, before the mixer in the layers that run it.
    Shared,
    /// HRM's loop over its two stacks, drawn before the block whose layers it runs.
    Hierarchy,
    /// Dory's looped section: which layers run several times, and how each pass starts.
    Loop,
    /// One of BLT's byte-level stacks: its steps run under the stack's own Spec.
    Stack(crate::spec::Stack),
    /// BLT's cross-attention between bytes and patches, in the encoder or the decoder.
    PatchCross,
    Final,
}

#[derive(Debug, Clone)]
pub struct Scope {
    pub kind: ScopeKind,
    /// Frame title without the count (`GQA Group i`).
    pub title: String,
    /// Closing rule (`GQA end`).
    pub end: String,
    /// Instances (×N); 1 draws no badge.
    pub repeat: u64,
    /// Instances that run for one token, when fewer than `repeat` (routed experts: top-k).
    pub active: Option<u64>,
    /// For a block: the layers it stands for.
    pub layers: Option<LayerSet>,
    pub children: Vec<Node>,
}

#[derive(Debug, Clone)]
pub enum Node {
    Scope(Scope),
    Step(Step),
}

impl Node {
    /// The step, marked as computing `p`.
    pub(crate) fn at(mut self, p: Point) -> Node {
        if let Node::Step(s) = &mut self {
            s.point = Some(p);
        }
        self
    }
}

/// A step in context: its enclosing scopes, outermost first.
pub struct Visit<'g> {
    pub step: &'g Step,
    pub scopes: Vec<&'g Scope>,
}

impl Visit<'_> {
    /// Instances of this step that run per token within one layer: the product of the repeats
    /// inside the block, counting only the active ones of routed experts.
    pub fn per_layer(&self) -> u128 {
        self.scopes
            .iter()
            .filter(|s| !matches!(s.kind, ScopeKind::Block | ScopeKind::Model))
            .map(|s| s.active.unwrap_or(s.repeat) as u128)
            .product()
    }

    /// Layers of the scope holding this step, ignoring the step's own gate: a K cached in every
    /// layer is cached whether or not its layer rotates it.
    pub fn scope_layers(&self) -> Option<&LayerSet> {
        self.scopes.iter().rev().find_map(|s| s.layers.as_ref())
    }

    /// The BLT stack this step runs in; `None`: the model's own layers.
    pub fn stack(&self) -> Option<crate::spec::Stack> {
        self.scopes.iter().find_map(|s| match s.kind {
            ScopeKind::Stack(st) => Some(st),
            _ => None,
        })
    }

    /// Layers this step runs in; `None` outside the blocks.
    pub fn layers(&self) -> Option<&LayerSet> {
        self.step
            .layers
            .as_ref()
            .or_else(|| self.scopes.iter().rev().find_map(|s| s.layers.as_ref()))
    }
}

impl Graph {
    /// Every step in drawing order, with its enclosing scopes.
    pub fn steps(&self) -> Vec<Visit<'_>> {
        fn walk<'g>(scope: &'g Scope, stack: &mut Vec<&'g Scope>, out: &mut Vec<Visit<'g>>) {
            stack.push(scope);
            for node in &scope.children {
                match node {
                    Node::Scope(s) => walk(s, stack, out),
                    Node::Step(step) => out.push(Visit {
                        step,
                        scopes: stack.clone(),
                    }),
                }
            }
            stack.pop();
        }
        let mut out = Vec::new();
        walk(&self.root, &mut Vec::new(), &mut out);
        out
    }

    pub fn step(&self, number: usize) -> Option<Visit<'_>> {
        self.steps().into_iter().find(|v| v.step.number == number)
    }

    pub fn tensor(&self, id: usize) -> &Tensor {
        &self.tensors[id]
    }

    /// The Spec a step runs under: its BLT stack's, or the model's.
    pub fn spec_of(&self, v: &Visit) -> &Spec {
        let stack = v.stack().and_then(|st| self.spec.bytes()?.stack(st));
        stack.unwrap_or(&self.spec)
    }
}
