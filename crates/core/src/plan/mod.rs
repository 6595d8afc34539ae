//! Will it fit, and how fast: memory by component for a model on a device under a runtime's
//! rules, the largest context that fits, llama.cpp's layers to offload, and the ceilings that
//! memory bandwidth and matmul throughput put on decode and prefill. Every figure comes from
//! the Graph (tensors, cached rows, states, FLOPs) or a checkpoint's stored tensors, and states
//! its basis.

pub mod devices;
pub mod formats;
mod memory;
mod model;
mod page;
pub mod runtimes;

pub use devices::Device;
pub use formats::{KvType, WeightFormat};
pub use page::{
    page_table, PageDevice, PageFormat, PageRuntime, PageTable, PAGE_FORMATS, PAGE_RUNTIMES,
};
pub use runtimes::{Runtime, Settings};

use crate::error::{Error, Result};
use crate::graph::Graph;
use crate::stats;
use memory::{offload, Breakdown, PerLayer};
use model::{read_model, vector_format};
use serde::Serialize;

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

/// The tensors a config's `quantization_config` says its checkpoint stores, packed matrices in
/// their format's tensors; `None` where it declares no packing.
pub fn declared(g: &Graph) -> Result<Option<Vec<StoredTensor>>> {
    let Some(d) = g.spec.quant.as_ref().filter(|d| d.quant.packs()) else {
        return Ok(None);
    };
    let entries = crate::manifest::manifest(g, crate::manifest::Naming::Hf)?;
    Ok(Some(
        entries
            .into_iter()
            .map(|e| {
                let dtype = e.packed.as_ref().and_then(|p| p.dtype);
                StoredTensor {
                    bytes: d.bytes(&e.shape, dtype) as u64,
                    format: e.packed.map_or(d.float.name().to_string(), |p| p.format),
                    rows: e.shape.first().copied().unwrap_or(1),
                    // The parameters it holds: a packed matrix's on its first tensor.
                    values: e.params as u64,
                    name: e.name,
                }
            })
            .collect(),
    ))
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
    /// What each `by_layer` entry is: a layer's number, or a BLT stack's layer (`local encoder 1`)
    /// after the model's own.
    pub layers: Vec<String>,
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
    /// Each layer's state bytes for the whole batch, in the order of `Plan::layers`.
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
    /// Each layer's cache bytes for the whole batch, in the order of `Plan::layers` (0 for a layer
    /// without one).
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

/// `anatomy plan`'s device unless one is given.
pub const DEFAULT_DEVICE: &str = "h100-sxm";

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
    let usable = t
        .device
        .memory
        .map(|mem| (mem as f64 * t.runtime.memory_share(&t.settings)) as u64);
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
    let per = PerLayer::at(&m, t, kv, t.context);
    let offload = t
        .device
        .memory
        .filter(|_| t.runtime == Runtime::LlamaCpp && t.device.kind == devices::Kind::Gpu)
        .map(|mem| offload(&m, &b, &per, mem));
    let s = stats::stats(g, Some(t.context))?;
    let kv_read: u128 = b.kv + b.state;
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
        layers: m.slots.names(),
        weights: WeightsPart {
            bytes: fit(m.weights_total(), "weights")?,
            basis: match &t.weights {
                Weights::Stored(_) => "the checkpoint's tensors as stored (a config's as its quantization_config declares them), block scales included".to_string() + repack_basis(t),
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
            bytes: fit(b.kv, "KV cache")?,
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
                        layers: k.layers,
                        cells: k.cells,
                        bytes_per_token: fit(kv.bytes(k.values), "KV cache")?,
                        bytes: fit(k.bytes, "KV cache")?,
                    })
                })
                .collect::<Result<_>>()?,
            by_layer: per
                .kv
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
            by_layer: per
                .state
                .iter()
                .map(|&x| fit(x, "state"))
                .collect::<Result<_>>()?,
        },
        compute: Part {
            bytes: fit(b.compute.bytes(), "compute")?,
            basis: b.compute.basis(t),
        },
        overhead: Part {
            bytes: fit(b.overhead, "overhead")?,
            basis: memory::overhead(t).1.to_string(),
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
                    flops.0.name(),
                    t.context
                ),
                None => format!("{} states no matmul rate: give --flops", t.device.name),
            },
        },
    })
}
fn repack_basis(t: &Target) -> &'static str {
    if model::repacks(t) {
        "; on a CPU, llama.cpp also holds a repacked copy of its Q4_0, Q4_K, IQ4_NL and MXFP4 matrices (ggml-cpu/repack.cpp, x86-64 with AVX2)"
    } else {
        ""
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
/// Which matmul rate a prefill of these weights runs at: 16-bit floats, fp8, or int8 dot
/// products for a quantized format (llama.cpp's MMQ kernels) where the device has them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Rate {
    Bf16,
    Fp8,
    Int8,
}

impl Rate {
    pub fn name(self) -> &'static str {
        match self {
            Rate::Bf16 => "bf16",
            Rate::Fp8 => "fp8",
            Rate::Int8 => "int8",
        }
    }
}

fn rate(w: &Weights) -> Rate {
    match w {
        Weights::Format(WeightFormat::F32 | WeightFormat::Bf16 | WeightFormat::F16) => Rate::Bf16,
        Weights::Format(WeightFormat::Fp8) => Rate::Fp8,
        Weights::Format(_) => Rate::Int8,
        // A checkpoint by its narrowest kind of tensor.
        Weights::Stored(ts) => {
            let float = |f: &str| ["F32", "F16", "BF16", "F64"].contains(&f);
            if ts
                .iter()
                .any(|t| !float(&t.format) && !t.format.starts_with("F8"))
            {
                Rate::Int8
            } else if ts.iter().any(|t| t.format.starts_with("F8")) {
                Rate::Fp8
            } else {
                Rate::Bf16
            }
        }
    }
}

fn rate_of(d: &Device, rate: Rate) -> Option<f64> {
    match rate {
        Rate::Bf16 => d.flops_bf16,
        Rate::Fp8 => d.flops_fp8,
        Rate::Int8 => d.flops_int8.or(d.flops_bf16),
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::AttnSpan;
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
                    let per = PerLayer::at(&m, &t, kv, 4096);
                    let more = offload(&m, &b, &per, u64::MAX);
                    proptest::prop_assert!(more.gpu_layers >= o.gpu_layers);
                    let n = m.layer_weights.len();
                    let k = o.gpu_layers as usize + 1;
                    let layers: u128 = (n.saturating_sub(k.min(n))..n)
                        .map(|i| m.layer_weights[i] + per.kv[i] + per.state[i])
                        .sum();
                    let next = layers + if k > n { m.other_weights } else { 0 } + b.compute.bytes();
                    proptest::prop_assert!(next > (gib << 30) as u128);
                }
            }
        }
    }
}
