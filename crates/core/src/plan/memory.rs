//! The memory at one context under a runtime's rules, and llama.cpp's offload.

use super::model::Model;
use super::{KvType, Offload, Runtime, Target};
use crate::spec::AttnSpan;
use std::collections::BTreeMap;

const MIB: f64 = (1u64 << 20) as f64;

/// A kind of cache layer, with its layers and bytes.
pub(super) struct Kind {
    pub(super) layers: Vec<u64>,
    pub(super) cells: u64,
    /// Cached values per token of one sequence over these layers.
    pub(super) values: u128,
    pub(super) bytes: u128,
}

/// The memory at one context.
pub(super) struct Breakdown {
    pub(super) weights: u128,
    pub(super) kv_by_layer: Vec<u128>,
    pub(super) kinds: BTreeMap<String, Kind>,
    pub(super) state: u128,
    pub(super) state_by_layer: Vec<u128>,
    pub(super) compute: u128,
    pub(super) compute_basis: String,
    pub(super) overhead: u128,
    pub(super) overhead_basis: String,
}

impl Breakdown {
    pub(super) fn at(m: &Model, t: &Target, kv: KvType, context: u64) -> Breakdown {
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

    pub(super) fn total(&self) -> u128 {
        self.weights
            + self.kv_by_layer.iter().sum::<u128>()
            + self.state
            + self.compute
            + self.overhead
    }
}

/// The process around the buffers, measured where a run of it was measured.
pub(super) fn overhead(t: &Target) -> (u128, String) {
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
pub(super) fn offload(m: &Model, b: &Breakdown, mem: u64) -> Offload {
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
