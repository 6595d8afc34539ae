//! The memory at one context under a runtime's rules, and llama.cpp's offload.

use super::model::{Group, Model};
use super::{KvType, Offload, Runtime, Target};
use crate::spec::AttnSpan;
use std::collections::BTreeMap;

const MIB: f64 = (1u64 << 20) as f64;

/// A kind of cache layer, with its layers and bytes.
pub(super) struct Kind {
    pub(super) layers: u64,
    pub(super) cells: u64,
    /// Cached values per token of one sequence over these layers.
    pub(super) values: u128,
    pub(super) bytes: u128,
}

/// The memory at one context: totals by kind, in time linear in the kinds of layer, not the
/// layers (the page evaluates hundreds; `per_layer` gives each layer's share where asked).
pub(super) struct Breakdown {
    pub(super) weights: u128,
    pub(super) kv: u128,
    pub(super) kinds: BTreeMap<String, Kind>,
    pub(super) state: u128,
    pub(super) compute: u128,
    pub(super) compute_basis: String,
    pub(super) overhead: u128,
    pub(super) overhead_basis: String,
}

/// Each layer's KV cache and state bytes, for the whole batch.
pub(super) struct PerLayer {
    pub(super) kv: Vec<u128>,
    pub(super) state: Vec<u128>,
}

/// Tokens one sequence's cache holds in a group of layers at `positions` under `t`'s runtime.
fn cells(g: &Group, t: &Target, positions: u64) -> u64 {
    if g.every > 1 {
        let entries = positions / g.every;
        // transformers also keeps the open window's inputs and gates (DeepSeek-V4's compressor
        // buffers; a compressed sparse layer's at twice the width), and an overlapping layer the
        // last closed window's.
        let held = match t.runtime {
            Runtime::Transformers => {
                let open = positions % g.every;
                let csa = g.overlapping;
                2 * (open * (1 + csa as u64) + if csa { g.every } else { 0 })
            }
            Runtime::LlamaCpp | Runtime::Vllm | Runtime::Anatomy => 0,
        };
        entries + held
    } else {
        let span = g.span.unwrap_or(AttnSpan::Full);
        t.runtime.cells(span, positions, &t.settings)
    }
}

/// The state a layer keeps under `t`'s runtime, in values per sequence.
fn state_values(m: &Model, t: &Target, b: usize) -> u128 {
    // transformers' LinearAttentionLayer keeps a convolution's whole kernel width.
    let widened = match t.runtime {
        Runtime::Transformers if !m.own_windows => m.conv_channels[b],
        Runtime::Transformers | Runtime::LlamaCpp | Runtime::Vllm | Runtime::Anatomy => 0,
    };
    m.state[b] + widened
}

impl PerLayer {
    pub(super) fn at(m: &Model, t: &Target, kv: KvType, context: u64) -> PerLayer {
        let batch = t.batch as u128;
        let layers = m.layer_weights.len();
        let mut out = PerLayer {
            kv: vec![0; layers],
            state: (0..layers)
                .map(|b| t.runtime.state_type(kv).bytes(state_values(m, t, b)) * batch)
                .collect(),
        };
        for g in &m.groups {
            let cells = cells(g, t, context + m.prompt) as u128;
            for &(layer, values) in &g.rows {
                if let Some(x) = out.kv.get_mut(layer as usize) {
                    *x += kv.bytes(values * cells) * batch;
                }
            }
        }
        out
    }
}

impl Breakdown {
    pub(super) fn at(m: &Model, t: &Target, kv: KvType, context: u64) -> Breakdown {
        let s = &t.settings;
        let batch = t.batch as u128;
        let mut kinds: BTreeMap<String, Kind> = BTreeMap::new();
        let mut most_cells = 0u64;
        for g in &m.groups {
            let cells = cells(g, t, context + m.prompt);
            most_cells = most_cells.max(cells);
            let k = kinds.entry(g.label.clone()).or_insert(Kind {
                layers: 0,
                cells,
                values: 0,
                bytes: 0,
            });
            k.layers += g.layers;
            k.values += g.values;
            // A block type's rounding taken over the kind, not row by row (a cached row is a
            // multiple of its blocks in every model anatomy reads).
            k.bytes += kv.bytes(g.values * cells as u128) * batch;
        }
        let state = t.runtime.state_type(kv).bytes(match t.runtime {
            Runtime::Transformers if !m.own_windows => m.state_total + m.conv_total,
            Runtime::Transformers | Runtime::LlamaCpp | Runtime::Vllm | Runtime::Anatomy => {
                m.state_total
            }
        }) * batch;
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
            kv: kinds.values().map(|k| k.bytes).sum(),
            kinds,
            state,
            compute,
            compute_basis,
            overhead,
            overhead_basis,
        }
    }

    pub(super) fn total(&self) -> u128 {
        self.weights + self.kv + self.state + self.compute + self.overhead
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
pub(super) fn offload(m: &Model, b: &Breakdown, per: &PerLayer, mem: u64) -> Offload {
    let n = m.layer_weights.len();
    let layer = |i: usize| m.layer_weights[i] + per.kv[i] + per.state[i];
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
