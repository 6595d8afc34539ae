//! Will it fit, and how fast: memory by component for a model on a device under a runtime's
//! rules, the largest context that fits, llama.cpp's layers to offload, and the ceilings that
//! memory bandwidth and matmul throughput put on decode and prefill. Every figure comes from
//! the Graph (tensors, cached rows, states, FLOPs) or a checkpoint's stored tensors, and states
//! its basis.

pub mod devices;
pub mod formats;
pub mod runtimes;

pub use devices::Device;
pub use formats::{KvType, WeightFormat};
pub use runtimes::{Runtime, Settings};

use crate::error::{Error, Result};
use crate::graph::{Component, Graph, Op, TensorKind};
use crate::spec::AttnSpan;
use crate::stats::{self, CacheRow};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// One tensor as a checkpoint stores it, with its bytes (block scales included).
#[derive(Debug, Clone)]
pub struct StoredTensor {
    pub name: String,
    pub format: String,
    /// Its first dimension in row-major order (a matrix's output rows).
    pub rows: u64,
    pub values: u64,
    pub bytes: u64,
}

/// How the weights are held.
#[derive(Debug, Clone)]
pub enum Weights {
    /// As a checkpoint stores them, tensor by tensor.
    Stored(Vec<StoredTensor>),
    /// In one format: every matrix (rows that fit its blocks), vectors in f32 for a GGUF type
    /// and in bf16 otherwise.
    Format(WeightFormat),
}

/// What to plan for.
#[derive(Debug, Clone)]
pub struct Target {
    pub device: Device,
    pub runtime: Runtime,
    pub settings: Settings,
    /// Tokens per sequence.
    pub context: u64,
    /// Sequences decoded together.
    pub batch: u64,
    pub weights: Weights,
    /// `None`: the runtime's default.
    pub kv: Option<KvType>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub model: String,
    pub runtime: &'static str,
    pub runtime_source: &'static str,
    pub device: Device,
    pub context: u64,
    pub batch: u64,
    pub weights: WeightsPart,
    pub kv_cache: KvPart,
    pub state: StatePart,
    pub compute: Part,
    pub overhead: Part,
    /// Bytes of all the parts.
    pub total: u64,
    /// Bytes the runtime may use on the device (vLLM's fraction of it); `None` where the device
    /// table leaves memory to the machine and none was given.
    pub usable_memory: Option<u64>,
    pub fits: Option<bool>,
    /// The longest context (per sequence, at this batch) that fits, up to the model's own.
    pub max_context: Option<MaxContext>,
    /// llama.cpp on a GPU: the layers `-ngl` can put in its memory.
    pub offload: Option<Offload>,
    pub decode: Decode,
    pub prefill: Prefill,
}

#[derive(Debug, Clone, Serialize)]
pub struct Part {
    pub bytes: u64,
    pub basis: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct StatePart {
    pub bytes: u64,
    pub basis: String,
    /// Each layer's state bytes for the whole batch, in layer order.
    pub by_layer: Vec<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct WeightsPart {
    pub bytes: u64,
    pub basis: String,
    pub by_format: Vec<FormatBytes>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FormatBytes {
    pub format: String,
    pub tensors: u64,
    pub values: u64,
    pub bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct KvPart {
    pub bytes: u64,
    pub kv_type: &'static str,
    pub basis: String,
    pub by_kind: Vec<KvKind>,
    /// Each layer's cache bytes for the whole batch, in layer order (0 for a layer without one).
    pub by_layer: Vec<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct KvKind {
    /// `full`, `sliding 512`, `chunked 8192`, `compressed every 4`.
    pub kind: String,
    pub layers: u64,
    /// Tokens one sequence's cache holds in each such layer.
    pub cells: u64,
    /// Bytes per cached token of one sequence, over these layers.
    pub bytes_per_token: u64,
    pub bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct MaxContext {
    pub tokens: u64,
    /// `memory`, or `model` where the model's own context fits.
    pub limited_by: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct Offload {
    /// `-ngl`: repeating layers from the last, then the output layer as one more.
    pub gpu_layers: u64,
    pub of: u64,
    pub gpu_bytes: u64,
    pub cpu_bytes: u64,
    pub basis: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Decode {
    /// Bytes read for one step of the batch: the weights a step touches (the active experts,
    /// the embedding rows) and every sequence's KV cache and state at the context.
    pub bytes_per_step: u64,
    /// Tokens per second over the batch if reading those bytes were all it took.
    pub tokens_per_s: f64,
    pub basis: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Prefill {
    /// Mean FLOPs per token of a prompt as long as the context.
    pub flops_per_token: u64,
    /// Tokens per second at the device's peak matmul rate; `None` where it states none.
    pub tokens_per_s: Option<f64>,
    pub basis: String,
}

/// What the planner reads off the Graph once.
struct Model {
    /// Per layer: weight bytes.
    layer_weights: Vec<u128>,
    /// Weights outside the layers: the input table (kept on the CPU by llama.cpp) and the rest.
    embedding_weights: u128,
    other_weights: u128,
    by_format: BTreeMap<String, FormatBytes>,
    /// What a decode step reads of the weights: bytes read whole, bytes of routed experts by
    /// (top-k, experts), bytes of tables read a row per sequence by their rows.
    read_whole: u128,
    read_routed: BTreeMap<(u64, u64), u128>,
    read_rows: BTreeMap<u64, u128>,
    rows: Vec<CacheRow>,
    /// Per layer: recurrent state values per sequence.
    state: Vec<u128>,
    /// Per layer: the channels of its convolution windows (each window keeps kernel − 1 of a
    /// channel's inputs; transformers' LinearAttentionLayer keeps the kernel's width).
    conv_channels: Vec<u128>,
    /// RecurrentGemma keeps its windows on its modules, kernel − 1 wide, not in a cache layer.
    own_windows: bool,
    /// Per token: the largest sum of a layer's step outputs, the widest one, and the largest
    /// query-head count of an attention layer.
    layer_activations: u128,
    widest: u128,
    heads: u64,
    /// Per token: the largest sum of an attention block's step outputs.
    attention_rows: u128,
    vocab: u128,
    hidden: u128,
    /// Positions cached beyond the context's tokens (CPM-Ant's learned prompt).
    prompt: u64,
    /// Per layer: DeepSeek-V4's compressed sparse attention, whose windows overlap.
    overlapping: Vec<bool>,
}

const MIB: f64 = (1u64 << 20) as f64;

/// The plan for `g` on `t`.
pub fn plan(g: &Graph, t: &Target) -> Result<Plan> {
    let spec = &g.spec;
    let bad = |field: &str, msg: String| Error::new(&spec.name, field, msg);
    if t.context == 0 || t.context > stats::MAX_CONTEXT {
        return Err(bad(
            "--context",
            format!("is {}; give a number of tokens from 1 to 2^40", t.context),
        ));
    }
    if t.batch == 0 || t.batch > 1 << 20 {
        return Err(bad(
            "--batch",
            format!("is {}; give a number of sequences from 1 to 2^20", t.batch),
        ));
    }
    let float = match &t.weights {
        Weights::Format(WeightFormat::F32) => KvType::F32,
        Weights::Format(WeightFormat::F16) => KvType::F16,
        Weights::Format(_) | Weights::Stored(_) => KvType::Bf16,
    };
    let kv = t.kv.unwrap_or_else(|| t.runtime.default_kv(float));
    if !t.runtime.kv_types().contains(&kv) {
        return Err(bad(
            "--kv-type",
            format!(
                "is {}, which {} does not offer; give one of {}",
                kv.name(),
                t.runtime.name(),
                t.runtime
                    .kv_types()
                    .iter()
                    .map(|k| k.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    let m = read_model(g, t)?;
    let at = |context: u64| Breakdown::at(&m, t, kv, context);
    let b = at(t.context);
    let usable = t.device.memory.map(|mem| match t.runtime {
        Runtime::Vllm => (mem as f64 * t.settings.memory_fraction) as u64,
        Runtime::LlamaCpp | Runtime::Transformers | Runtime::Anatomy => mem,
    });
    let total = b.total();
    let max_context = usable.map(|mem| {
        let model_max = spec.context.max(1);
        if at(model_max).total() <= mem as u128 {
            return Some(MaxContext {
                tokens: model_max,
                limited_by: "model",
            });
        }
        // The parts grow with the context: the largest that fits, by bisection.
        let (mut lo, mut hi) = (0u64, model_max);
        while lo + 1 < hi {
            let mid = lo + (hi - lo) / 2;
            if at(mid).total() <= mem as u128 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        (lo > 0).then_some(MaxContext {
            tokens: lo,
            limited_by: "memory",
        })
    });
    // Only a device with memory of its own beside the host's takes some layers and not others.
    let offload = match (t.runtime, t.device.memory, t.device.kind) {
        (Runtime::LlamaCpp, Some(mem), "gpu") => Some(offload(&m, &b, mem)),
        _ => None,
    };
    let s = stats::stats(g, Some(t.context))?;
    let kv_read: u128 = b.kv_by_layer.iter().sum::<u128>() + b.state;
    let bytes_per_step = m.read_per_step(t.batch) + kv_read as f64;
    let flops = (rate(&t.weights), rate_of(&t.device, rate(&t.weights)));
    let prefill_flops = s.flops.prefill_per_token;
    Ok(Plan {
        model: spec.name.clone(),
        runtime: t.runtime.name(),
        runtime_source: t.runtime.source(),
        device: t.device.clone(),
        context: t.context,
        batch: t.batch,
        weights: WeightsPart {
            bytes: fit(m.weights_total(), "weights")?,
            basis: match &t.weights {
                Weights::Stored(_) => "the checkpoint's tensors as stored, block scales included".to_string() + repack_basis(t),
                Weights::Format(f) => format!(
                    "every matrix in {} ({:.4} bits a weight, scales included), vectors in {}; a matrix whose rows do not fill its blocks in q8_0 or bf16{}",
                    f.name(),
                    f.bits_per_value(),
                    vector_format(*f).name(),
                    repack_basis(t)
                ),
            },
            by_format: m.by_format.values().cloned().collect(),
        },
        kv_cache: KvPart {
            bytes: fit(b.kv_by_layer.iter().sum(), "KV cache")?,
            kv_type: kv.name(),
            basis: format!(
                "{} sequence(s) × each layer's cached values per token × the cells {} keeps at {} tokens, in {}",
                t.batch,
                t.runtime.name(),
                t.context,
                kv.name()
            ),
            by_kind: b
                .kinds
                .iter()
                .map(|(kind, k)| {
                    Ok(KvKind {
                        kind: kind.clone(),
                        layers: k.layers.len() as u64,
                        cells: k.cells,
                        bytes_per_token: fit(kv.bytes(k.values), "KV cache")?,
                        bytes: fit(k.bytes, "KV cache")?,
                    })
                })
                .collect::<Result<_>>()?,
            by_layer: b
                .kv_by_layer
                .iter()
                .map(|&x| fit(x, "KV cache"))
                .collect::<Result<_>>()?,
        },
        state: StatePart {
            bytes: fit(b.state, "state")?,
            basis: format!(
                "{} sequence(s) × the recurrent layers' states in {}",
                t.batch,
                t.runtime.state_type(kv).name()
            ),
            by_layer: b
                .state_by_layer
                .iter()
                .map(|&x| fit(x, "state"))
                .collect::<Result<_>>()?,
        },
        compute: Part {
            bytes: fit(b.compute, "compute")?,
            basis: b.compute_basis.clone(),
        },
        overhead: Part {
            bytes: fit(b.overhead, "overhead")?,
            basis: b.overhead_basis.clone(),
        },
        total: fit(total, "total")?,
        usable_memory: usable,
        fits: usable.map(|mem| total <= mem as u128),
        max_context: max_context.flatten(),
        offload,
        decode: Decode {
            bytes_per_step: bytes_per_step as u64,
            tokens_per_s: t.device.bandwidth / bytes_per_step * t.batch as f64,
            basis: format!(
                "{:.0} GB/s ÷ bytes a step reads (the weights it touches: routed experts by the share {} sequences reach, embedding rows one per sequence; every KV cell and state), × {} sequences",
                t.device.bandwidth / 1e9,
                t.batch,
                t.batch
            ),
        },
        prefill: Prefill {
            flops_per_token: prefill_flops,
            tokens_per_s: flops.1.map(|f| f / prefill_flops.max(1) as f64),
            basis: match flops.1 {
                Some(f) => format!(
                    "{:.0} TFLOP/s ({} matmuls) ÷ the mean FLOPs per token of a {}-token prompt",
                    f / 1e12,
                    flops.0,
                    t.context
                ),
                None => format!("{} states no matmul rate: give --flops", t.device.name),
            },
        },
    })
}

fn repack_basis(t: &Target) -> &'static str {
    match (t.runtime, t.device.kind) {
        (Runtime::LlamaCpp, "cpu") => "; on a CPU, llama.cpp also holds a repacked copy of its Q4_0, Q4_K, IQ4_NL and MXFP4 matrices (ggml-cpu/repack.cpp, x86-64 with AVX2)",
        _ => "",
    }
}

fn fit(x: u128, what: &str) -> Result<u64> {
    u64::try_from(x).map_err(|_| {
        Error::new(
            "plan",
            "--context",
            format!("gives a {what} size too large for 64 bits; give a smaller context or batch"),
        )
    })
}

/// Vectors (norms, biases) stay in f32 beside a GGUF type, bf16 beside another quantized
/// format, and in the format itself where it is a plain float.
fn vector_format(f: WeightFormat) -> WeightFormat {
    match f {
        WeightFormat::F32 | WeightFormat::Bf16 | WeightFormat::F16 => f,
        _ if f.is_gguf() => WeightFormat::F32,
        _ => WeightFormat::Bf16,
    }
}

/// The format a tensor of this shape takes under `f`.
fn format_of(f: WeightFormat, shape: &[u64]) -> WeightFormat {
    if shape.len() < 2 {
        return vector_format(f);
    }
    let row = shape.last().copied().unwrap_or(1);
    if row % f.block() == 0 {
        f
    } else if f.is_gguf() && row % WeightFormat::Q8_0.block() == 0 {
        WeightFormat::Q8_0
    } else {
        vector_format(f).max_float()
    }
}

impl WeightFormat {
    /// A plain float format no wider than 16 bits.
    fn max_float(self) -> WeightFormat {
        match self {
            WeightFormat::F32 => WeightFormat::Bf16,
            other => other,
        }
    }
}

/// Where a param sits and how much of it a decode step reads.
struct ParamUse {
    layer: Option<u64>,
    /// Read through a table lookup alone (an input embedding): a row per sequence.
    lookup_only: bool,
    /// Share of its instances a step runs: the routed experts' top-k of all.
    routed_share: Option<(u64, u64)>,
    rows: u64,
}

fn read_model(g: &Graph, t: &Target) -> Result<Model> {
    let spec = &g.spec;
    let layers = spec.layers as usize;
    // Which params a step reads whole, and which only by looking up rows.
    let mut whole = vec![false; g.params.len()];
    let mut looked_up = vec![false; g.params.len()];
    for v in stats::inference_steps(g) {
        for &i in &v.step.inputs {
            if let TensorKind::Weight { param, .. } = g.tensor(i).kind {
                match v.step.op {
                    Op::Lookup => looked_up[param] = true,
                    _ => whole[param] = true,
                }
            }
        }
    }
    let use_of = |i: usize, layer: Option<u64>| {
        let p = &g.params[i];
        ParamUse {
            layer,
            lookup_only: looked_up[i] && !whole[i],
            routed_share: p.routed.then_some((p.active, p.experts)),
            rows: p.shape.first().copied().unwrap_or(1).max(1),
        }
    };
    let mut m = Model {
        layer_weights: vec![0; layers],
        embedding_weights: 0,
        other_weights: 0,
        by_format: BTreeMap::new(),
        read_whole: 0,
        read_routed: BTreeMap::new(),
        read_rows: BTreeMap::new(),
        rows: Vec::new(),
        state: vec![0; layers],
        conv_channels: vec![0; layers],
        layer_activations: 0,
        widest: 0,
        heads: 0,
        attention_rows: 0,
        vocab: spec.vocab as u128,
        hidden: spec.hidden as u128,
        prompt: spec.cached_positions(0),
        own_windows: spec.rg_lru().is_some(),
        overlapping: (0..spec.layers)
            .map(|b| {
                let v4 = spec.attn.v4.as_ref().map(|v| v.kind(b));
                matches!(v4, Some(crate::spec::V4Kind::Csa(_)))
            })
            .collect(),
    };
    // llama.cpp's CPU backend keeps a second, interleaved copy of some quantized matrices
    // beside the mapped file (ggml-cpu/repack.cpp, with AVX2 on x86-64: Q4_0, Q4_K, IQ4_NL and
    // MXFP4 matrices whose rows come in eights, read by a matmul rather than a lookup).
    let repacks = t.runtime == Runtime::LlamaCpp && t.device.kind == "cpu";
    let add = |m: &mut Model, u: &ParamUse, format: &str, values: u128, bytes: u128, n: u64| {
        let repacked = repacks
            && !u.lookup_only
            && u.rows.is_multiple_of(8)
            && ["Q4_0", "Q4_K", "IQ4_NL", "MXFP4"].contains(&format.to_ascii_uppercase().as_str());
        // A step reads one copy; memory holds both.
        match (u.lookup_only, u.routed_share) {
            (true, _) => *m.read_rows.entry(u.rows).or_default() += bytes,
            (false, Some((k, e))) if e > 0 => *m.read_routed.entry((k, e)).or_default() += bytes,
            (false, Some(_) | None) => m.read_whole += bytes,
        }
        let (bytes, format) = match repacked {
            true => (2 * bytes, format!("{format} + repack")),
            false => (bytes, format.to_string()),
        };
        match u.layer {
            Some(b) if (b as usize) < layers => m.layer_weights[b as usize] += bytes,
            Some(_) | None if u.lookup_only => m.embedding_weights += bytes,
            Some(_) | None => m.other_weights += bytes,
        }
        let e = m
            .by_format
            .entry(format.clone())
            .or_insert_with(|| FormatBytes {
                format,
                tensors: 0,
                values: 0,
                bytes: 0,
            });
        e.tensors += n;
        e.values += values as u64;
        e.bytes += bytes as u64;
    };
    let own = |i: &usize| {
        let p = &g.params[*i];
        p.component != Component::Aux && p.stack.is_none()
    };
    match &t.weights {
        Weights::Format(f) => {
            for i in (0..g.params.len()).filter(own) {
                let p = &g.params[i];
                let format = format_of(*f, &p.shape);
                let one = format.bytes(p.numel()) * p.experts as u128;
                let values = p.numel() * p.experts as u128;
                match &p.layers {
                    Some(set) => {
                        for b in set.iter() {
                            add(&mut m, &use_of(i, Some(b)), format.name(), values, one, 1);
                        }
                    }
                    None => add(&mut m, &use_of(i, None), format.name(), values, one, 1),
                }
            }
        }
        Weights::Stored(tensors) => {
            // Each stored name to its param and layer, under both namings.
            let mut names: HashMap<String, (usize, Option<u64>)> = HashMap::new();
            for i in (0..g.params.len()).filter(own) {
                let p = &g.params[i];
                let experts: Vec<Option<u64>> = (0..p.experts).map(Some).chain([None]).collect();
                let layer_list: Vec<Option<u64>> = match &p.layers {
                    Some(set) => set.iter().map(Some).collect(),
                    None => vec![None],
                };
                for template in [&p.hf, &p.gguf] {
                    for &b in &layer_list {
                        let per_expert = template.contains("{e}");
                        for &e in experts.iter().filter(|e| e.is_some() == per_expert) {
                            names.insert(spec.instantiate(template, b, e), (i, b));
                        }
                    }
                }
            }
            for s in tensors {
                let u = match names.get(&s.name) {
                    Some(&(i, b)) => use_of(i, b),
                    // A tensor the graph does not name (a quantizer's scales): read whole.
                    None => ParamUse {
                        layer: layer_in_name(&s.name),
                        lookup_only: false,
                        routed_share: None,
                        rows: s.rows,
                    },
                };
                add(&mut m, &u, &s.format, s.values as u128, s.bytes as u128, 1);
            }
        }
    }
    for v in stats::inference_steps(g) {
        m.rows.extend(stats::cache_rows(g, &v));
        let out = g.tensor(v.step.output);
        let spec = g.spec_of(&v);
        let per = out.elems().saturating_mul(v.per_layer());
        if let Some(set) = v.layers() {
            if out.kind == TensorKind::State {
                for b in set.iter().filter(|&b| (b as usize) < layers) {
                    m.state[b as usize] += per.saturating_mul(spec.runs(b) as u128);
                }
            }
            if let Op::Conv { kernel } = v.step.op {
                let window = v.step.inputs.iter().map(|&i| g.tensor(i));
                for w in window.filter(|w| w.kind == TensorKind::State && kernel > 1) {
                    let channels = w.elems() / (kernel as u128 - 1) * v.per_layer();
                    for b in set.iter().filter(|&b| (b as usize) < layers) {
                        m.conv_channels[b as usize] += channels * spec.runs(b) as u128;
                    }
                }
            }
            if matches!(out.kind, TensorKind::Activation { .. })
                && !matches!(
                    v.step.op,
                    Op::Scores { .. } | Op::WeightedSum { .. } | Op::Index { .. }
                )
            {
                m.widest = m.widest.max(per);
            }
            if let Op::Scores { .. } = v.step.op {
                for b in set.iter() {
                    m.heads = m.heads.max(spec.attn_at(b as usize).heads);
                }
            }
        }
    }
    // A layer's step outputs per token, summed: what one pass over a layer holds at its most.
    let mut per_layer = vec![0u128; layers];
    let mut attn = vec![0u128; layers];
    for v in stats::inference_steps(g) {
        let out = g.tensor(v.step.output);
        if !matches!(out.kind, TensorKind::Activation { .. })
            || matches!(
                v.step.op,
                Op::Scores { .. } | Op::WeightedSum { .. } | Op::Index { .. }
            )
        {
            continue;
        }
        let per = out.elems().saturating_mul(v.per_layer());
        let in_attention = v
            .scopes
            .iter()
            .any(|s| matches!(s.kind, crate::graph::ScopeKind::Attention));
        for b in v
            .layers()
            .map(|s| s.iter().collect::<Vec<_>>())
            .unwrap_or_default()
        {
            if let Some(x) = per_layer.get_mut(b as usize) {
                *x += per;
            }
            if in_attention {
                attn[b as usize] += per;
            }
        }
    }
    m.layer_activations = per_layer.into_iter().max().unwrap_or(0);
    m.attention_rows = attn.into_iter().max().unwrap_or(0);
    Ok(m)
}

/// `blk.7.` or `layers.7.`: the layer a stored name the graph does not know sits in.
fn layer_in_name(name: &str) -> Option<u64> {
    let parts: Vec<&str> = name.split('.').collect();
    parts.windows(2).find_map(|w| match w[0] {
        "blk" | "layers" | "h" | "blocks" | "layer" => w[1].parse().ok(),
        _ => None,
    })
}

impl Model {
    /// Bytes of the weights one decode step of `batch` sequences reads.
    fn read_per_step(&self, batch: u64) -> f64 {
        let b = batch as f64;
        let rows: f64 = (self.read_rows.iter())
            .map(|(&rows, &bytes)| bytes as f64 * (b / rows as f64).min(1.0))
            .sum();
        // The experts some sequence of the batch routes to, expected under uniform routing.
        let routed: f64 = (self.read_routed.iter())
            .map(|(&(k, e), &bytes)| bytes as f64 * (1.0 - (1.0 - k as f64 / e as f64).powf(b)))
            .sum();
        self.read_whole as f64 + rows + routed
    }

    fn weights_total(&self) -> u128 {
        self.layer_weights.iter().sum::<u128>() + self.embedding_weights + self.other_weights
    }
}

/// A kind of cache layer, with its layers and bytes.
struct Kind {
    layers: Vec<u64>,
    cells: u64,
    /// Cached values per token of one sequence over these layers.
    values: u128,
    bytes: u128,
}

/// The memory at one context.
struct Breakdown {
    weights: u128,
    kv_by_layer: Vec<u128>,
    kinds: BTreeMap<String, Kind>,
    state: u128,
    state_by_layer: Vec<u128>,
    compute: u128,
    compute_basis: String,
    overhead: u128,
    overhead_basis: String,
}

impl Breakdown {
    fn at(m: &Model, t: &Target, kv: KvType, context: u64) -> Breakdown {
        let s = &t.settings;
        let batch = t.batch as u128;
        let layers = m.layer_weights.len();
        let mut kv_by_layer = vec![0u128; layers];
        let mut kinds: BTreeMap<String, Kind> = BTreeMap::new();
        let mut most_cells = 0u64;
        let positions = context + m.prompt;
        for r in &m.rows {
            let (kind, cells) = if r.every > 1 {
                let entries = positions / r.every;
                // transformers also keeps the open window's inputs and gates (DeepSeek-V4's
                // compressor buffers; a compressed sparse layer's at twice the width), and an
                // overlapping layer the last closed window's.
                let held = match t.runtime {
                    Runtime::Transformers => {
                        let csa = m.overlapping.get(r.layer as usize) == Some(&true);
                        let open = positions % r.every;
                        2 * (open * (1 + csa as u64) + if csa { r.every } else { 0 })
                    }
                    Runtime::LlamaCpp | Runtime::Vllm | Runtime::Anatomy => 0,
                };
                (format!("compressed every {}", r.every), entries + held)
            } else {
                let span = r.span.unwrap_or(AttnSpan::Full);
                (span.describe(), t.runtime.cells(span, positions, s))
            };
            most_cells = most_cells.max(cells);
            let bytes = kv.bytes(r.values * cells as u128) * batch;
            if let Some(x) = kv_by_layer.get_mut(r.layer as usize) {
                *x += bytes;
            }
            let k = kinds.entry(kind).or_insert(Kind {
                layers: Vec::new(),
                cells,
                values: 0,
                bytes: 0,
            });
            if !k.layers.contains(&r.layer) {
                k.layers.push(r.layer);
            }
            k.values += r.values;
            k.bytes += bytes;
        }
        let state_type = t.runtime.state_type(kv);
        // transformers' LinearAttentionLayer keeps a convolution's whole kernel width.
        let widened = |b: usize| match t.runtime {
            Runtime::Transformers if !m.own_windows => m.conv_channels[b],
            Runtime::Transformers => 0,
            Runtime::LlamaCpp | Runtime::Vllm | Runtime::Anatomy => 0,
        };
        let state_by_layer: Vec<u128> = (0..layers)
            .map(|b| state_type.bytes(m.state[b] + widened(b)) * batch)
            .collect();
        let f = 4u128; // f32 activations
        let (compute, compute_basis) = match t.runtime {
            Runtime::LlamaCpp => {
                // ggml-alloc's worst-case graph: n_ubatch tokens (no more than the context), as
                // many outputs, attention over every cell. Its buffer holds the largest of the
                // phases that are live at once.
                let n = s.ubatch.min(context.saturating_mul(t.batch)) as u128;
                let logits = n * (m.vocab + 2 * m.hidden) * f;
                let attention = match s.flash_attn {
                    false => {
                        n * most_cells as u128 * (m.heads as u128 + 1) * f
                            + n * (m.attention_rows + m.hidden) * f
                    }
                    true => n * (m.attention_rows + m.hidden) * f,
                };
                let ffn = n * (3 * m.widest + 2 * m.hidden) * f;
                (
                    logits.max(attention).max(ffn),
                    format!(
                        "the largest phase of llama.cpp's worst-case graph of {n} tokens: logits (vocab × {n} in f32) {}, attention ({}) {}, FFN {}",
                        crate::fmt::bytes(logits),
                        match s.flash_attn {
                            false => "scores and mask over every cell, without flash attention",
                            true => "with flash attention: no score matrix",
                        },
                        crate::fmt::bytes(attention),
                        crate::fmt::bytes(ffn)
                    ),
                )
            }
            Runtime::Vllm => {
                let n = s.batched_tokens as u128;
                let acts = n * m.layer_activations * 2 + 256 * m.vocab * f;
                (
                    acts,
                    format!(
                        "vLLM's profiling pass: {n} tokens' activations of the largest layer in bf16, and f32 logits for 256 sequences (max_num_seqs); not measured here"
                    ),
                )
            }
            Runtime::Transformers => {
                let n = context as u128 * batch;
                let bytes = kv.bytes(n * m.layer_activations) + batch * m.vocab * f;
                (
                    bytes,
                    "one forward of the whole prompt: the largest layer's step outputs for every token in the model's dtype, and the last position's f32 logits (sdpa: no score matrix); not measured here".into(),
                )
            }
            Runtime::Anatomy => {
                let n = context as u128 * batch;
                (
                    n * m.layer_activations * f + batch * m.vocab * f,
                    "the prompt in one pass: a layer's step outputs for every token in f32, and the last position's logits".into(),
                )
            }
        };
        let (overhead, overhead_basis) = overhead(t);
        Breakdown {
            weights: m.weights_total(),
            kv_by_layer,
            kinds,
            state: state_by_layer.iter().sum(),
            state_by_layer,
            compute,
            compute_basis,
            overhead,
            overhead_basis,
        }
    }

    fn total(&self) -> u128 {
        self.weights
            + self.kv_by_layer.iter().sum::<u128>()
            + self.state
            + self.compute
            + self.overhead
    }
}

/// The process around the buffers, measured where a run of it was measured.
fn overhead(t: &Target) -> (u128, String) {
    let mib = |x: f64| (x * MIB) as u128;
    match t.runtime {
        Runtime::LlamaCpp => (
            mib(41.0),
            "llama-cpp-python's process with libllama and ggml loaded, 41 MiB as measured by scripts/measure_memory.py on CPU; a CUDA or Metal context (hundreds of MiB, driver-dependent) is not counted".into(),
        ),
        Runtime::Anatomy => (
            mib(12.0),
            "anatomy's process: its binary, the tokenizer and thread stacks, 12 MiB as measured by scripts/measure_memory.py".into(),
        ),
        Runtime::Vllm => (
            0,
            "not counted: the CUDA context and CUDA graphs (vLLM reserves them outside gpu_memory_utilization's share only in part)".into(),
        ),
        Runtime::Transformers => (
            0,
            "not counted: the Python process and PyTorch (hundreds of MiB on a CPU, a CUDA context on a GPU)".into(),
        ),
    }
}

/// llama.cpp's `-ngl`: the largest count of layers, from the last, whose weights, KV cache and
/// state fit beside the compute buffer on the device; beyond every layer, the output layer.
fn offload(m: &Model, b: &Breakdown, mem: u64) -> Offload {
    let n = m.layer_weights.len();
    let layer = |i: usize| m.layer_weights[i] + b.kv_by_layer[i] + b.state_by_layer[i];
    let gpu = |k: usize| -> u128 {
        if k == 0 {
            return 0;
        }
        let layers: u128 = (n.saturating_sub(k.min(n))..n).map(layer).sum();
        let output = if k > n { m.other_weights } else { 0 };
        layers + output + b.compute
    };
    let all = b.total() - b.overhead;
    let k = (0..=n + 1)
        .rev()
        .find(|&k| gpu(k) <= mem as u128)
        .unwrap_or(0);
    let on_gpu = gpu(k);
    Offload {
        gpu_layers: k as u64,
        of: n as u64 + 1,
        gpu_bytes: on_gpu as u64,
        cpu_bytes: all.saturating_sub(on_gpu) as u64,
        basis: "llama.cpp offloads the last -ngl repeating layers with their KV cache, then the output layer as one more; the input embedding stays on the CPU; the compute buffer is allocated on the device in full".into(),
    }
}

/// The planner's figures at the stops of the page's sliders, for its panel to look up offline:
/// every number is `plan`'s for that device, runtime, weight format, context and batch.
#[derive(Debug, Clone, Serialize)]
pub struct PageTable {
    pub contexts: Vec<u64>,
    pub batches: Vec<u64>,
    pub runtimes: Vec<PageRuntime>,
    pub formats: Vec<PageFormat>,
    /// Mean FLOPs per token of a prompt of each context.
    pub prefill_flops: Vec<u64>,
    /// The devices with memory of their own (a CPU's RAM is the machine's).
    pub devices: Vec<PageDevice>,
    /// The one chosen at first: `anatomy plan`'s default.
    pub default_device: usize,
}

/// `anatomy plan`'s device unless one is given.
pub const DEFAULT_DEVICE: &str = "h100-sxm";

/// A device as the page needs it: its figures without their sources' addresses, which a page
/// that requests nothing does not carry (`anatomy plan --device list` has them).
#[derive(Debug, Clone, Serialize)]
pub struct PageDevice {
    pub id: String,
    pub name: String,
    pub memory: u64,
    pub bandwidth: f64,
    pub flops_bf16: Option<f64>,
    pub flops_fp8: Option<f64>,
    pub flops_int8: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PageRuntime {
    pub name: &'static str,
    pub kv_type: &'static str,
    pub memory_fraction: f64,
    /// Per context, then per batch: KV cache, state, compute, overhead bytes.
    pub bytes: Vec<[u64; 4]>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PageFormat {
    pub name: &'static str,
    pub bytes: u64,
    /// Bytes of weights a decode step reads, per batch.
    pub read: Vec<u64>,
    /// Which of the device's matmul rates a prefill runs at: bf16, fp8 or int8.
    pub rate: &'static str,
}

/// The formats the page offers.
pub const PAGE_FORMATS: [WeightFormat; 5] = [
    WeightFormat::Bf16,
    WeightFormat::Fp8,
    WeightFormat::Q8_0,
    WeightFormat::Q4K,
    WeightFormat::Int4G128,
];

/// The runtimes the page offers (anatomy's own executor reads checkpoints, not the page's
/// formats).
pub const PAGE_RUNTIMES: [Runtime; 3] = [Runtime::LlamaCpp, Runtime::Vllm, Runtime::Transformers];

/// Which matmul rate a prefill of these weights runs at: 16-bit floats, fp8, or int8 dot
/// products for a quantized format (llama.cpp's MMQ kernels) where the device has them.
fn rate(w: &Weights) -> &'static str {
    match w {
        Weights::Format(WeightFormat::F32 | WeightFormat::Bf16 | WeightFormat::F16) => "bf16",
        Weights::Format(WeightFormat::Fp8) => "fp8",
        Weights::Format(_) => "int8",
        // A checkpoint by its narrowest kind of tensor.
        Weights::Stored(ts) => {
            let float = |f: &str| ["F32", "F16", "BF16", "F64"].contains(&f);
            if ts
                .iter()
                .any(|t| !float(&t.format) && !t.format.starts_with("F8"))
            {
                "int8"
            } else if ts.iter().any(|t| t.format.starts_with("F8")) {
                "fp8"
            } else {
                "bf16"
            }
        }
    }
}

fn rate_of(d: &Device, rate: &str) -> Option<f64> {
    match rate {
        "fp8" => d.flops_fp8,
        "int8" => d.flops_int8.or(d.flops_bf16),
        _ => d.flops_bf16,
    }
}

pub fn page_table(g: &Graph) -> Result<PageTable> {
    let model_max = g.spec.context.max(1);
    let mut contexts: Vec<u64> = (8..40)
        .map(|p| 1u64 << p)
        .take_while(|&c| c < model_max)
        .collect();
    contexts.push(model_max);
    let batches: Vec<u64> = (0..9).map(|p| 1u64 << p).collect();
    let device = devices::find(DEFAULT_DEVICE).expect("in the table");
    let target = |runtime, f| Target {
        device: device.clone(),
        runtime,
        settings: Settings::default(),
        context: 1,
        batch: 1,
        weights: Weights::Format(f),
        kv: None,
    };
    let mut runtimes = Vec::new();
    for r in PAGE_RUNTIMES {
        let t = target(r, WeightFormat::Bf16);
        let kv = r.default_kv(KvType::Bf16);
        let m = read_model(g, &t)?;
        let mut bytes = Vec::new();
        for &c in &contexts {
            for &b in &batches {
                let br = Breakdown::at(
                    &m,
                    &Target {
                        batch: b,
                        ..t.clone()
                    },
                    kv,
                    c,
                );
                bytes.push([
                    fit(br.kv_by_layer.iter().sum(), "KV cache")?,
                    fit(br.state, "state")?,
                    fit(br.compute, "compute")?,
                    fit(br.overhead, "overhead")?,
                ]);
            }
        }
        runtimes.push(PageRuntime {
            name: r.name(),
            kv_type: kv.name(),
            memory_fraction: match r {
                Runtime::Vllm => t.settings.memory_fraction,
                Runtime::LlamaCpp | Runtime::Transformers | Runtime::Anatomy => 1.0,
            },
            bytes,
        });
    }
    let formats = PAGE_FORMATS
        .iter()
        .map(|&f| {
            let t = target(Runtime::LlamaCpp, f);
            let m = read_model(g, &t)?;
            Ok(PageFormat {
                name: f.name(),
                bytes: fit(m.weights_total(), "weights")?,
                read: batches.iter().map(|&b| m.read_per_step(b) as u64).collect(),
                rate: rate(&t.weights),
            })
        })
        .collect::<Result<_>>()?;
    let with_memory: Vec<PageDevice> = devices::all()
        .into_iter()
        .filter_map(|d| {
            Some(PageDevice {
                memory: d.memory?,
                id: d.id,
                name: d.name,
                bandwidth: d.bandwidth,
                flops_bf16: d.flops_bf16,
                flops_fp8: d.flops_fp8,
                flops_int8: d.flops_int8,
            })
        })
        .collect();
    let prefill_flops = contexts
        .iter()
        .map(|&c| Ok(stats::stats(g, Some(c))?.flops.prefill_per_token))
        .collect::<Result<_>>()?;
    Ok(PageTable {
        contexts,
        batches,
        runtimes,
        formats,
        prefill_flops,
        default_device: with_memory
            .iter()
            .position(|d| d.id == DEFAULT_DEVICE)
            .unwrap_or(0),
        devices: with_memory,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{catalog, graph, source};

    fn graph_of(name: &str) -> Graph {
        assert!(catalog::get(name).is_some(), "{name}");
        graph::build(&source::load(name, false).unwrap().spec).unwrap()
    }

    fn target(runtime: Runtime, memory_gib: u64, context: u64, batch: u64) -> Target {
        let mut device = devices::find("h100-sxm").unwrap();
        device.memory = Some(memory_gib << 30);
        Target {
            device,
            runtime,
            settings: Settings::default(),
            context,
            batch,
            weights: Weights::Format(WeightFormat::Q4K),
            kv: None,
        }
    }

    #[test]
    fn llama_cpp_sliding_cells_are_window_and_ubatch_padded() {
        let s = Settings::default();
        let slide = AttnSpan::Sliding(512);
        assert_eq!(Runtime::LlamaCpp.cells(slide, 8192, &s), 1024);
        assert_eq!(Runtime::LlamaCpp.cells(slide, 300, &s), 512);
        assert_eq!(Runtime::LlamaCpp.cells(AttnSpan::Full, 300, &s), 512);
        let full = Settings {
            swa_full: true,
            ..s
        };
        assert_eq!(Runtime::LlamaCpp.cells(slide, 8192, &full), 8192);
        assert_eq!(Runtime::Transformers.cells(slide, 8192, &s), 511);
        assert_eq!(Runtime::Vllm.cells(slide, 8192, &s), 528);
        assert_eq!(Runtime::Anatomy.cells(slide, 8192, &s), 8192);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
        /// The longest context that fits does, and one token more does not; llama.cpp's -ngl
        /// fits the device, and one layer more does not.
        #[test]
        fn longest_context_and_offload_are_the_edge(
            model in proptest::sample::select(vec!["gemma-3-27b", "qwen3-next-80b-a3b", "llama-3.1-8b", "deepseek-v3"]),
            runtime in proptest::sample::select(PAGE_RUNTIMES.to_vec()),
            gib in 1u64..200,
            batch in 1u64..9,
        ) {
            let g = graph_of(model);
            let p = plan(&g, &target(runtime, gib, 4096, batch)).unwrap();
            let usable = p.usable_memory.unwrap();
            if let Some(m) = &p.max_context {
                let at = plan(&g, &target(runtime, gib, m.tokens, batch)).unwrap();
                proptest::prop_assert!(at.total <= usable);
                if m.limited_by == "memory" {
                    let past = plan(&g, &target(runtime, gib, m.tokens + 1, batch)).unwrap();
                    proptest::prop_assert!(past.total > usable, "{} fits at {}", model, m.tokens + 1);
                }
            }
            if let Some(o) = &p.offload {
                proptest::prop_assert!(o.gpu_bytes <= gib << 30);
                if o.gpu_layers < o.of {
                    // One layer more: give the device exactly what that takes and see it chosen.
                    let m = read_model(&g, &target(runtime, gib, 4096, batch)).unwrap();
                    let t = target(runtime, gib, 4096, batch);
                    let kv = runtime.default_kv(KvType::Bf16);
                    let b = Breakdown::at(&m, &t, kv, 4096);
                    let more = offload(&m, &b, u64::MAX);
                    proptest::prop_assert!(more.gpu_layers >= o.gpu_layers);
                    let n = m.layer_weights.len();
                    let k = o.gpu_layers as usize + 1;
                    let layers: u128 = (n.saturating_sub(k.min(n))..n)
                        .map(|i| m.layer_weights[i] + b.kv_by_layer[i] + b.state_by_layer[i])
                        .sum();
                    let next = layers + if k > n { m.other_weights } else { 0 } + b.compute;
                    proptest::prop_assert!(next > (gib << 30) as u128);
                }
            }
        }
    }
}
