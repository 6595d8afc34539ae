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
    pub(super) compute: Compute,
    pub(super) overhead: u128,
}

/// The runtime's working buffers. Their basis is written once, where a plan reports it, not at
/// each of the contexts the page and the bisection evaluate.
#[derive(Clone, Copy)]
pub(super) enum Compute {
    /// llama.cpp's worst-case graph of `tokens`: the largest of its phases.
    Graph {
        tokens: u128,
        logits: u128,
        attention: u128,
        ffn: u128,
    },
    /// vLLM's profiling pass.
    Profiled(u128),
    /// One forward of the whole prompt.
    Pass(u128),
}

impl Compute {
    pub(super) fn bytes(&self) -> u128 {
        match *self {
            Compute::Graph {
                logits,
                attention,
                ffn,
                ..
            } => logits.max(attention).max(ffn),
            Compute::Profiled(b) | Compute::Pass(b) => b,
        }
    }

    pub(super) fn basis(&self, t: &Target) -> String {
        match (*self, t.runtime) {
            (Compute::Graph { tokens: n, logits, attention, ffn }, _) => format!(
                "the largest phase of llama.cpp's worst-case graph of {n} tokens: logits (vocab × {n} in f32) {}, attention ({}) {}, FFN {}",
                crate::fmt::bytes(logits),
                match t.settings.flash_attn {
                    false => "scores and mask over every cell, without flash attention",
                    true => "with flash attention: no score matrix",
                },
                crate::fmt::bytes(attention),
                crate::fmt::bytes(ffn)
            ),
            (Compute::Profiled(_), _) => format!(
                "vLLM's profiling pass: {} tokens' activations of the largest layer in bf16, and f32 logits for 256 sequences (max_num_seqs); not measured here",
                t.settings.batched_tokens
            ),
            (Compute::Pass(_), Runtime::Anatomy) => "the prompt in one pass: a layer's step outputs for every token in f32, and the last position's logits".into(),
            (Compute::Pass(_), Runtime::LlamaCpp | Runtime::Vllm | Runtime::Transformers) => "one forward of the whole prompt: the largest layer's step outputs for every token in the model's dtype, and the last position's f32 logits (sdpa: no score matrix); not measured here".into(),
        }
    }
}

/// Each layer's KV cache and state bytes, for the whole batch.
pub(super) struct PerLayer {
    pub(super) kv: Vec<u128>,
    pub(super) state: Vec<u128>,
}

/// Tokens one sequence's cache holds in a group of layers at `positions` under `t`'s runtime.
fn cells(m: &Model, g: &Group, t: &Target, positions: u64) -> u64 {
    if let Some(cells) = m
        .bytes
        .then(|| t.runtime.blt_cells(g.stack, positions))
        .flatten()
    {
        return cells;
    }
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
            let cells = cells(m, g, t, context + m.prompt) as u128;
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
            let cells = cells(m, g, t, context + m.prompt);
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
        let compute = match t.runtime {
            Runtime::LlamaCpp => {
                // ggml-alloc's worst-case graph: n_ubatch tokens (no more than the context), as
                // many outputs, attention over every cell. Its buffer holds the largest of the
                // phases that are live at once.
                let n = s.ubatch.min(context.saturating_mul(t.batch)) as u128;
                let attention = match s.flash_attn {
                    false => n * most_cells as u128 * (m.heads as u128 + 1) * f,
                    true => 0,
                } + n * (m.attention_rows + m.hidden) * f;
                Compute::Graph {
                    tokens: n,
                    logits: n * (m.vocab + 2 * m.hidden) * f,
                    attention,
                    ffn: n * (3 * m.widest + 2 * m.hidden) * f,
                }
            }
            Runtime::Vllm => Compute::Profiled(
                s.batched_tokens as u128 * m.layer_activations * 2 + 256 * m.vocab * f,
            ),
            Runtime::Transformers => Compute::Pass(
                kv.bytes(context as u128 * batch * m.layer_activations) + batch * m.vocab * f,
            ),
            Runtime::Anatomy => Compute::Pass(
                context as u128 * batch * m.layer_activations * f + batch * m.vocab * f,
            ),
        };
        let overhead = overhead(t).0;
        Breakdown {
            weights: m.weights_total(),
            kv: kinds.values().map(|k| k.bytes).sum(),
            kinds,
            state,
            compute,
            overhead,
        }
    }

    pub(super) fn total(&self) -> u128 {
        self.weights + self.kv + self.state + self.compute.bytes() + self.overhead
    }
}

/// The process around the buffers, measured where a run of it was measured.
pub(super) fn overhead(t: &Target) -> (u128, &'static str) {
    let mib = |x: f64| (x * MIB) as u128;
    match t.runtime {
        Runtime::LlamaCpp => (
            mib(41.0),
            "llama-cpp-python's process with libllama and ggml loaded, 41 MiB as measured by scripts/measure_memory.py on CPU; a CUDA or Metal context (hundreds of MiB, driver-dependent) is not counted",
        ),
        Runtime::Anatomy => (
            mib(12.0),
            "anatomy's process: its binary, the tokenizer and thread stacks, 12 MiB as measured by scripts/measure_memory.py",
        ),
        Runtime::Vllm => (
            0,
            "not counted: the CUDA context and CUDA graphs (vLLM reserves them outside gpu_memory_utilization's share only in part)",
        ),
        Runtime::Transformers => (
            0,
            "not counted: the Python process and PyTorch (hundreds of MiB on a CPU, a CUDA context on a GPU)",
        ),
    }
}

/// llama.cpp's `-ngl`: the largest count of layers, from the last, whose weights, KV cache and
/// state fit beside the compute buffer on the device; beyond every layer, the output layer.
pub(super) fn offload(m: &Model, b: &Breakdown, per: &PerLayer, mem: u64) -> Offload {
    let n = m.layer_weights.len();
    let layer = |i: usize| m.layer_weights[i] + per.kv[i] + per.state[i];
    let compute = b.compute.bytes();
    let gpu = |k: usize| -> u128 {
        if k == 0 {
            return 0;
        }
        let layers: u128 = (n.saturating_sub(k.min(n))..n).map(layer).sum();
        let output = if k > n { m.other_weights } else { 0 };
        layers + output + compute
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
