//! What the planner reads off the Graph once: each layer's weight bytes in a format or as a
//! checkpoint stores them, what a decode step reads of them, the cached rows, the states, and
//! the activation widths its compute estimates use.

use super::{Target, WeightFormat, Weights};
use crate::error::Result;
use crate::graph::{Component, Graph, Op, TensorKind};
use crate::plan::{FormatBytes, Runtime};
use crate::spec::{AttnSpan, Spec, Stack};
use crate::stats::{self, CacheRow};
use std::collections::{BTreeMap, HashMap};

/// The layers the planner's per-layer figures run over: the model's own, then each BLT stack's
/// in the order they run.
pub(super) struct Slots {
    own: usize,
    stacks: Vec<(Stack, usize, usize)>,
}

impl Slots {
    fn of(spec: &Spec) -> Slots {
        let own = spec.layers as usize;
        let mut stacks = Vec::new();
        let mut next = own;
        for (st, s) in spec.bytes().into_iter().flat_map(|b| b.stacks()) {
            stacks.push((st, next, s.layers as usize));
            next += s.layers as usize;
        }
        Slots { own, stacks }
    }

    pub(super) fn len(&self) -> usize {
        self.stacks.last().map_or(self.own, |&(_, at, n)| at + n)
    }

    /// Where layer `b` of a stack (or of the model itself) sits; `None` past its layers.
    fn at(&self, stack: Option<Stack>, b: u64) -> Option<u64> {
        let (at, n) = match stack {
            None => (0, self.own),
            Some(st) => self.stacks.iter().find(|s| s.0 == st).map(|s| (s.1, s.2))?,
        };
        ((b as usize) < n).then_some((at + b as usize) as u64)
    }

    /// `7`, or `local encoder 1`: what each per-layer figure is.
    pub(super) fn names(&self) -> Vec<String> {
        let own = (0..self.own).map(|b| b.to_string());
        let stacks = self.stacks.iter().flat_map(|&(st, _, n)| {
            (0..n).map(move |b| format!("{} {b}", st.title().to_lowercase()))
        });
        own.chain(stacks).collect()
    }
}

/// What the planner reads off the Graph once.
pub(super) struct Model {
    pub(super) slots: Slots,
    /// BLT: the byte-level stacks around a latent transformer, which runtimes cache their own way.
    pub(super) bytes: bool,
    /// Per layer: weight bytes.
    pub(super) layer_weights: Vec<u128>,
    /// Weights outside the layers: the input table (kept on the CPU by llama.cpp) and the rest.
    pub(super) embedding_weights: u128,
    pub(super) other_weights: u128,
    pub(super) by_format: BTreeMap<String, FormatBytes>,
    /// What a decode step reads of the weights: bytes read whole, bytes of routed experts by
    /// (top-k, experts), bytes of tables read a row per sequence by their rows.
    pub(super) read_whole: u128,
    pub(super) read_routed: BTreeMap<(u64, u64), u128>,
    pub(super) read_rows: BTreeMap<u64, u128>,
    /// The cached rows, grouped by how a runtime keeps them.
    pub(super) groups: Vec<Group>,
    /// Per layer: recurrent state values per sequence.
    pub(super) state: Vec<u128>,
    /// Per layer: the channels of its convolution windows (each window keeps kernel − 1 of a
    /// channel's inputs; transformers' LinearAttentionLayer keeps the kernel's width).
    pub(super) conv_channels: Vec<u128>,
    /// `state` and `conv_channels` summed over the layers.
    pub(super) state_total: u128,
    pub(super) conv_total: u128,
    /// RecurrentGemma keeps its windows on its modules, kernel − 1 wide, not in a cache layer.
    pub(super) own_windows: bool,
    /// Per token: the largest sum of a layer's step outputs, the widest one, and the largest
    /// query-head count of an attention layer.
    pub(super) layer_activations: u128,
    pub(super) widest: u128,
    pub(super) heads: u64,
    /// Per token: the largest sum of an attention block's step outputs.
    pub(super) attention_rows: u128,
    pub(super) vocab: u128,
    pub(super) hidden: u128,
    /// Positions cached beyond the context's tokens (CPM-Ant's learned prompt).
    pub(super) prompt: u64,
}

/// Cached rows a runtime keeps alike: the same span, or the same compression.
pub(super) struct Group {
    /// `full`, `sliding 512`, `compressed every 4`; BLT's prefixed by the stack.
    pub(super) label: String,
    /// The BLT stack of the rows; `None`: the model's own layers.
    pub(super) stack: Option<Stack>,
    pub(super) span: Option<AttnSpan>,
    pub(super) every: u64,
    /// DeepSeek-V4's compressed sparse attention, whose windows overlap.
    pub(super) overlapping: bool,
    /// Values per token of one sequence over the group's rows.
    pub(super) values: u128,
    /// Layers with a row in the group.
    pub(super) layers: u64,
    /// (slot, values) of each row.
    pub(super) rows: Vec<(u64, u128)>,
}

/// Rows grouped by how a runtime keeps them, in first-seen order.
fn groups(g: &Graph, slots: &Slots, rows: Vec<(Option<Stack>, CacheRow)>) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    let mut seen: Vec<std::collections::HashSet<u64>> = Vec::new();
    for (stack, r) in rows {
        let Some(slot) = slots.at(stack, r.layer) else {
            continue;
        };
        let spec = stack
            .and_then(|st| g.spec.bytes()?.stack(st))
            .unwrap_or(&g.spec);
        let v4 = spec.attn.v4.as_ref().map(|v| v.kind(r.layer));
        let overlapping = matches!(v4, Some(crate::spec::V4Kind::Csa(_))) && r.every > 1;
        let at = out
            .iter()
            .position(|g| {
                g.stack == stack
                    && g.span == r.span
                    && g.every == r.every
                    && g.overlapping == overlapping
            })
            .unwrap_or_else(|| {
                let kind = match r.every {
                    1 => r.span.unwrap_or(AttnSpan::Full).describe(),
                    m => format!("compressed every {m}"),
                };
                out.push(Group {
                    label: match (stack, g.spec.bytes().is_some()) {
                        (Some(st), _) => format!("{}: {kind}", st.title().to_lowercase()),
                        (None, true) => format!("latent transformer: {kind}"),
                        (None, false) => kind,
                    },
                    stack,
                    span: r.span,
                    every: r.every,
                    overlapping,
                    values: 0,
                    layers: 0,
                    rows: Vec::new(),
                });
                seen.push(Default::default());
                out.len() - 1
            });
        let g = &mut out[at];
        g.values += r.values;
        g.rows.push((slot, r.values));
        if seen[at].insert(slot) {
            g.layers += 1;
        }
    }
    out
}

/// llama.cpp on a CPU: its backend repacks some quantized matrices into a second copy.
pub(super) fn repacks(t: &Target) -> bool {
    t.runtime == Runtime::LlamaCpp && t.device.kind == super::devices::Kind::Cpu
}

/// Vectors (norms, biases) stay in f32 beside a GGUF type, bf16 beside another quantized
/// format, and in the format itself where it is a plain float.
pub(super) fn vector_format(f: WeightFormat) -> WeightFormat {
    if matches!(
        f,
        WeightFormat::F32 | WeightFormat::Bf16 | WeightFormat::F16
    ) {
        f
    } else if f.is_gguf() {
        WeightFormat::F32
    } else {
        WeightFormat::Bf16
    }
}

/// The format a tensor of this shape takes under `f`.
pub(super) fn format_of(f: WeightFormat, shape: &[u64]) -> WeightFormat {
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
pub(super) struct ParamUse {
    /// Its slot (`Slots`); `None` outside the layers.
    layer: Option<u64>,
    /// Read through a table lookup alone (an input embedding): a row per sequence.
    lookup_only: bool,
    /// Share of its instances a step runs: the routed experts' top-k of all.
    routed_share: Option<(u64, u64)>,
    rows: u64,
}

pub(super) fn read_model(g: &Graph, t: &Target) -> Result<Model> {
    let spec = &g.spec;
    let slots = Slots::of(spec);
    let layers = slots.len();
    // Which params a step reads whole, and which only by looking up rows.
    let mut whole = vec![false; g.params.len()];
    let mut looked_up = vec![false; g.params.len()];
    for v in stats::inference_steps(g) {
        for &i in &v.step.inputs {
            if let TensorKind::Weight { param, .. } = g.tensor(i).kind {
                // Every op but a lookup reads a weight whole.
                if v.step.op == Op::Lookup {
                    looked_up[param] = true;
                } else {
                    whole[param] = true;
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
        bytes: spec.bytes().is_some(),
        layer_weights: vec![0; layers],
        embedding_weights: 0,
        other_weights: 0,
        by_format: BTreeMap::new(),
        read_whole: 0,
        read_routed: BTreeMap::new(),
        read_rows: BTreeMap::new(),
        groups: Vec::new(),
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
        state_total: 0,
        conv_total: 0,
        slots,
    };
    // llama.cpp's CPU backend keeps a second, interleaved copy of some quantized matrices
    // beside the mapped file (ggml-cpu/repack.cpp, with AVX2 on x86-64: Q4_0, Q4_K, IQ4_NL and
    // MXFP4 matrices whose rows come in eights, read by a matmul rather than a lookup).
    let repacks = repacks(t);
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
    let own = |i: &usize| g.params[*i].component != Component::Aux;
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
                            let u = use_of(i, m.slots.at(p.stack, b));
                            add(&mut m, &u, format.name(), values, one, 1);
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
                        let slot = b.and_then(|b| m.slots.at(p.stack, b));
                        for &e in experts.iter().filter(|e| e.is_some() == per_expert) {
                            names.insert(spec.instantiate(template, b, e), (i, slot));
                        }
                    }
                }
            }
            for s in tensors {
                // A packed matrix's tensors (`qweight`, `scales`) are read as the matrix is.
                let packed = || {
                    let (module, _) = s.name.rsplit_once('.')?;
                    names.get(&format!("{module}.weight"))
                };
                let u = match names.get(&s.name).or_else(packed) {
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
    let mut rows = Vec::new();
    let mut per_layer = vec![0u128; layers];
    let mut attn = vec![0u128; layers];
    for v in stats::inference_steps(g) {
        let stack = v.stack();
        rows.extend(stats::cache_rows(g, &v).into_iter().map(|r| (stack, r)));
        let out = g.tensor(v.step.output);
        let spec = g.spec_of(&v);
        let per = out.elems().saturating_mul(v.per_layer());
        let Some(set) = v.layers() else { continue };
        let in_layers = || {
            set.iter()
                .filter_map(|b| Some((b, m.slots.at(stack, b)? as usize)))
                .collect::<Vec<_>>()
        };
        if out.kind == TensorKind::State {
            for (b, at) in in_layers() {
                m.state[at] += per.saturating_mul(spec.runs(b) as u128);
            }
        }
        if let Op::Conv { kernel } = v.step.op {
            let window = v.step.inputs.iter().map(|&i| g.tensor(i));
            for w in window.filter(|w| w.kind == TensorKind::State && kernel > 1) {
                let channels = w.elems() / (kernel as u128 - 1) * v.per_layer();
                for (b, at) in in_layers() {
                    m.conv_channels[at] += channels * spec.runs(b) as u128;
                }
            }
        }
        if let Op::Scores { .. } = v.step.op {
            for b in set.iter() {
                m.heads = m.heads.max(spec.attn_at(b as usize).heads);
            }
        }
        // A layer's step outputs per token, summed: what one pass over a layer holds at its
        // most; the widest one.
        if !matches!(out.kind, TensorKind::Activation { .. })
            || matches!(
                v.step.op,
                Op::Scores { .. } | Op::WeightedSum { .. } | Op::Index { .. }
            )
        {
            continue;
        }
        m.widest = m.widest.max(per);
        let in_attention = v
            .scopes
            .iter()
            .any(|s| matches!(s.kind, crate::graph::ScopeKind::Attention));
        for (_, at) in in_layers() {
            per_layer[at] += per;
            if in_attention {
                attn[at] += per;
            }
        }
    }
    m.groups = groups(g, &m.slots, rows);
    m.state_total = m.state.iter().sum();
    m.conv_total = m.conv_channels.iter().sum();
    m.layer_activations = per_layer.into_iter().max().unwrap_or(0);
    m.attention_rows = attn.into_iter().max().unwrap_or(0);
    Ok(m)
}

/// `blk.7.` or `layers.7.`: the layer a stored name the graph does not know sits in.
pub(super) fn layer_in_name(name: &str) -> Option<u64> {
    let parts: Vec<&str> = name.split('.').collect();
    parts.windows(2).find_map(|w| match w[0] {
        "blk" | "layers" | "h" | "blocks" | "layer" => w[1].parse().ok(),
        _ => None,
    })
}

impl Model {
    /// Bytes of the weights one decode step of `batch` sequences reads.
    pub(super) fn read_per_step(&self, batch: u64) -> f64 {
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

    pub(super) fn weights_total(&self) -> u128 {
        self.layer_weights.iter().sum::<u128>() + self.embedding_weights + self.other_weights
    }
}
