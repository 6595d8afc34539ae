//! Numbers summed from the Graph: parameters, KV cache, weight memory, FLOPs.

use crate::error::{Error, Result};
use crate::graph::{Component, Dim, Graph, Op, ScopeKind, TensorKind, Visit};
use crate::layers::LayerSet;
use crate::spec::{AttnSpan, Qsa, V4Kind};
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Stats {
    pub model: String,
    pub total_params: u64,
    pub active_params: u64,
    /// Active parameters less the input embedding (as vendors often quote).
    pub active_params_without_embedding: u64,
    /// Auxiliary modules stored beside the model but outside its forward pass (DeepSeek's
    /// multi-token prediction), not in `total_params`.
    pub aux_params: u64,
    pub params_by_component: std::collections::BTreeMap<String, u64>,
    pub layer_runs: Vec<LayerRun>,
    pub kv_cache: KvCache,
    pub state: State,
    pub weight_bytes: WeightBytes,
    pub flops: Flops,
    /// Config keys ignored under `--lenient` (`key = value`); empty otherwise.
    pub ignored: Vec<String>,
    /// Config keys transformers does not read for this model type (`key = value`): accepted,
    /// since they cannot change the model.
    pub not_read_by_transformers: Vec<String>,
    /// Where `quantization_config` packs the matrices: the stored tensors by format.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stored: Vec<StoredFormat>,
    /// A wrapper's towers, each with its parameters (in `total_params`, not in
    /// `active_params`); in JSON an object by what each is, of numbers.
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "by_what")]
    pub towers: Vec<TowerParams>,
    /// What one image costs, for a wrapper anatomy runs on one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<ImageFigures>,
}

/// One image through a wrapper's encoder.
#[derive(Debug, Clone, Serialize)]
pub struct ImageFigures {
    /// The side of the square image the encoder takes, in pixels.
    pub side: u64,
    /// Features, and so tokens of the language model's (placeholders, or GIT's before the
    /// text), per image.
    pub tokens: u64,
    /// FLOPs to encode it (2 per multiply-add; matmuls and attention).
    pub flops: u64,
    /// Where the encoder reads an image at its own resolution (Qwen2-VL): the pixels a feature
    /// spans a side (an image h × w takes (h / step)(w / step) tokens); the figures are then
    /// for a square image `side` pixels wide.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<u64>,
    /// The processor cuts an image into tiles `side` pixels wide (and where there are several,
    /// the whole image one more): the figures are per tile (Llama 4, InternVL, Aya Vision).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub per_tile: bool,
}

/// One of a wrapper's towers in `stats`.
#[derive(Debug, Clone, Serialize)]
pub struct TowerParams {
    /// What it is ("vision tower"): its key in JSON.
    #[serde(skip)]
    pub what: String,
    /// Its tensors' name prefix (for the text report).
    #[serde(skip)]
    pub prefix: String,
    /// Its parameters; `None` (left out of JSON) for a tower of a kind anatomy does not know.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<u64>,
    /// Tensors it stores (0 for a tower of a kind anatomy does not know).
    pub tensors: u64,
}

fn by_what<S: serde::Serializer>(
    towers: &[TowerParams],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.collect_map(towers.iter().map(|t| (&t.what, t)))
}

/// The stored tensors of one format: their parameters (a packed matrix's unpacked values) and
/// bytes, scales, zero points and indices included (not bitsandbytes' JSON state, whose length
/// its numbers set: some 170 bytes a matrix).
#[derive(Debug, Clone, Serialize)]
pub struct StoredFormat {
    pub format: String,
    pub tensors: u64,
    pub params: u64,
    pub bytes: u64,
    /// bytes · 8 / params, for the text report; JSON gives its whole numbers alone.
    #[serde(skip)]
    pub bits_per_weight: f64,
}

/// The checkpoint `quantization_config` declares, by format; empty where it packs nothing.
fn stored(g: &Graph) -> Result<Vec<StoredFormat>> {
    let Some(d) = g.spec.quant.as_ref().filter(|d| d.quant.packs()) else {
        return Ok(Vec::new());
    };
    let mut by: std::collections::BTreeMap<String, (u64, u128, u128)> = Default::default();
    for e in crate::manifest::manifest(g, crate::manifest::Naming::Hf)? {
        let (format, dtype) = match &e.packed {
            Some(p) => (p.format.clone(), p.dtype),
            None => ("unquantized, in the config's dtype".to_string(), None),
        };
        let x = by.entry(format).or_default();
        x.0 += 1;
        x.1 += e.params;
        x.2 += d.bytes(&e.shape, dtype);
    }
    Ok(by
        .into_iter()
        .map(|(format, (tensors, params, bytes))| StoredFormat {
            format,
            tensors,
            params: params as u64,
            bytes: bytes as u64,
            bits_per_weight: bytes as f64 * 8.0 / params.max(1) as f64,
        })
        .collect())
}

#[derive(Debug, Clone, Serialize)]
pub struct LayerRun {
    /// A run of consecutive layers with the same parameter count: the first and the last.
    pub first_layer: u64,
    pub last_layer: u64,
    pub count: u64,
    pub params_per_layer: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct KvCache {
    /// Cached values per token over all layers, while no window is full.
    pub values_per_token: u64,
    pub bytes_per_token_bf16: u64,
    pub bytes_per_token_fp8: u64,
    pub context: u64,
    /// Cached values at `context`, windows capped.
    pub values_at_context: u64,
    pub bytes_at_context_bf16: u64,
    pub bytes_at_context_fp8: u64,
}

/// The recurrent layers' state per sequence (convolution windows, scan states): fixed, whatever
/// the context; zero for a model of attention alone.
#[derive(Debug, Clone, Serialize)]
pub struct State {
    pub values_per_sequence: u64,
    pub bytes_f32: u64,
    pub bytes_bf16: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct WeightBytes {
    pub fp32: u64,
    pub bf16: u64,
    pub fp8: u64,
    pub int4: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Flops {
    pub context: u64,
    /// Weight matmuls per token (2 × active matmul parameters).
    pub matmul_per_token: u64,
    /// Recurrent layers' convolutions and scans per token: the same at any context.
    pub recurrent_per_token: u64,
    /// Average per token over a prefill of `context` tokens (attention grows with position),
    /// rounded to a whole FLOP.
    pub prefill_per_token: u64,
    /// One decoded token with `context` tokens already cached.
    pub decode_per_token: u64,
}

impl Stats {
    /// A wrapper's towers' parameters (0 for a language model alone).
    pub fn tower_params(&self) -> u64 {
        self.params_by_component.get(TOWERS).copied().unwrap_or(0)
    }

    /// A token runs only some of the language model's parameters (routed experts): the towers,
    /// which a text token never runs, do not make a model sparse.
    pub fn sparse(&self) -> bool {
        self.active_params + self.tower_params() != self.total_params
    }
}

/// The `params_by_component` key of a wrapper's towers (vision and audio encoders, projectors):
/// in `total_params`, not in `active_params`. `towers` lists each.
pub const TOWERS: &str = "towers";

/// The longest context anatomy computes figures for.
pub const MAX_CONTEXT: u64 = 1 << 40;

/// Stats at `context` tokens (the model's maximum when `None`). A context outside 1..=2^40, or a
/// figure that does not fit in 64 bits, is an error: no figure is ever printed saturated.
pub fn stats(g: &Graph, context: Option<u64>) -> Result<Stats> {
    let spec = &g.spec;
    let context = context.unwrap_or(spec.context);
    if context == 0 || context > MAX_CONTEXT {
        return Err(Error::new(
            &spec.name,
            "--context",
            format!("is {context}; give a number of tokens from 1 to {MAX_CONTEXT} (2^40)"),
        ));
    }

    let mut total: u128 = 0;
    let mut inactive: u128 = 0;
    let mut by_component = [0u128; Component::ALL.len()];
    let mut aux: u128 = 0;
    for p in &g.params {
        let n = p.counted() * p.instances();
        if p.component == Component::Aux {
            aux += n;
            continue;
        }
        total += n;
        by_component[Component::ALL
            .iter()
            .position(|c| *c == p.component)
            .unwrap_or(0)] += n;
        if p.routed {
            inactive += n * (p.experts - p.active) as u128 / p.experts as u128;
        }
    }
    let active = total - inactive;
    let embedding = by_component[0];
    // A wrapper's towers: stored and counted, run by its images and audio, not by a text token.
    let towers: u128 = spec
        .towers
        .iter()
        .filter_map(|n| n.params())
        .map(u128::from)
        .sum();
    total += towers;

    let per_layer = per_layer_params(g);
    // Each multi-token-prediction layer holds one more decoder block like the model's last.
    aux += spec.mtp_layers as u128 * per_layer.last().copied().unwrap_or(0);
    let mut layer_runs: Vec<LayerRun> = Vec::new();
    let mut start = 0usize;
    for b in 1..=per_layer.len() {
        if b == per_layer.len() || per_layer[b] != per_layer[start] {
            layer_runs.push(LayerRun {
                first_layer: start as u64,
                last_layer: b as u64 - 1,
                count: (b - start) as u64,
                params_per_layer: per_layer[start] as u64,
            });
            start = b;
        }
    }

    // KV cache and FLOPs walk the steps; auxiliary modules (multi-token prediction) do not run in
    // ordinary inference.
    let mut sum = Cost::default();
    for v in inference_steps(g) {
        sum.add(&step_cost(g, &v, context));
    }
    let Cost {
        kv_per_token,
        kv_at_context,
        state,
        matmul,
        recurrent,
        prefill_attn,
        decode_attn,
    } = sum;

    let fit = |what: &str, x: u128| -> Result<u64> {
        u64::try_from(x).map_err(|_| {
            Error::new(
                &spec.name,
                "--context",
                format!("gives {what} too large for 64 bits at {context} tokens; give a smaller context"),
            )
        })
    };
    // A prefill also runs CPM-Ant's learned prompt through every layer: its share of the
    // weights' FLOPs falls on the text's tokens.
    let framed = match context {
        0 => 1.0,
        n => spec.cached_positions(n) as f64 / n as f64,
    };
    let prefill = ((matmul as f64 + recurrent as f64) * framed + prefill_attn).round();
    if prefill.is_nan() || prefill >= u64::MAX as f64 {
        return Err(fit("a prefill FLOP count", u128::MAX).unwrap_err());
    }
    Ok(Stats {
        ignored: crate::spec::Ignored::pairs(&spec.ignored),
        not_read_by_transformers: crate::spec::Ignored::pairs(&spec.not_read),
        stored: stored(g)?,
        image: match &spec.image {
            Some(i) => Some(ImageFigures {
                side: i.encoder.side(),
                tokens: i.encoder.features(),
                flops: fit("an image's FLOPs", i.encoder.flops(spec.hidden))?,
                step: i.encoder.step(),
                per_tile: i.encoder.reading() == crate::spec::Reading::Tiles,
            }),
            None => None,
        },
        towers: (spec.towers.iter())
            .map(|t| TowerParams {
                what: t.what.clone(),
                prefix: t.prefix.clone(),
                params: t.params(),
                tensors: (t.steps().iter()).map(|b| b.count()).sum(),
            })
            .collect(),
        model: spec.name.clone(),
        total_params: fit("a parameter count", total)?,
        active_params: fit("a parameter count", active)?,
        active_params_without_embedding: fit("a parameter count", active - embedding.min(active))?,
        aux_params: fit("a parameter count", aux)?,
        params_by_component: Component::ALL
            .iter()
            .zip(by_component)
            .map(|(c, n)| Ok((c.label().to_string(), fit("a parameter count", n)?)))
            .chain(
                (towers > 0).then(|| Ok((TOWERS.to_string(), fit("a parameter count", towers)?))),
            )
            .collect::<Result<_>>()?,
        layer_runs,
        kv_cache: KvCache {
            values_per_token: fit("a KV cache size", kv_per_token)?,
            bytes_per_token_bf16: fit("a KV cache size", kv_per_token.saturating_mul(2))?,
            bytes_per_token_fp8: fit("a KV cache size", kv_per_token)?,
            context,
            values_at_context: fit("a KV cache size", kv_at_context)?,
            bytes_at_context_bf16: fit("a KV cache size", kv_at_context.saturating_mul(2))?,
            bytes_at_context_fp8: fit("a KV cache size", kv_at_context)?,
        },
        state: State {
            values_per_sequence: fit("a state size", state)?,
            bytes_f32: fit("a state size", state.saturating_mul(4))?,
            bytes_bf16: fit("a state size", state.saturating_mul(2))?,
        },
        weight_bytes: WeightBytes {
            fp32: fit("a weight size in bytes", total * 4)?,
            bf16: fit("a weight size in bytes", total * 2)?,
            fp8: fit("a weight size in bytes", total)?,
            int4: fit("a weight size in bytes", total.div_ceil(2))?,
        },
        flops: Flops {
            context,
            matmul_per_token: fit("a FLOP count", matmul)?,
            recurrent_per_token: fit("a FLOP count", recurrent)?,
            prefill_per_token: prefill as u64,
            decode_per_token: fit(
                "a FLOP count",
                matmul.saturating_add(recurrent).saturating_add(decode_attn),
            )?,
        },
    })
}

/// What one step costs per token, over all the layers it runs in.
#[derive(Debug, Clone, Default)]
pub struct Cost {
    /// Values this step adds to the KV cache per token, and at the context length.
    pub kv_per_token: u128,
    pub kv_at_context: u128,
    /// Values of recurrent state this step keeps per sequence.
    pub state: u128,
    /// FLOPs of matmuls against weights (2 per multiply-add).
    pub matmul: u128,
    /// FLOPs of convolutions and scans, per token at any context.
    pub recurrent: u128,
    /// FLOPs of attention (scores and weighted values): mean per token over a prefill, and for
    /// one decoded token.
    pub prefill_attn: f64,
    pub decode_attn: u128,
}

impl Cost {
    pub fn add(&mut self, o: &Cost) {
        self.kv_per_token = self.kv_per_token.saturating_add(o.kv_per_token);
        self.kv_at_context = self.kv_at_context.saturating_add(o.kv_at_context);
        self.state = self.state.saturating_add(o.state);
        self.matmul = self.matmul.saturating_add(o.matmul);
        self.recurrent = self.recurrent.saturating_add(o.recurrent);
        self.prefill_attn += o.prefill_attn;
        self.decode_attn = self.decode_attn.saturating_add(o.decode_attn);
    }
}

/// One layer's rows of one cached tensor: `values` per row over the layer's caches, a row per
/// `every` tokens, kept as the layer's span says.
#[derive(Debug, Clone)]
pub struct CacheRow {
    pub layer: u64,
    pub values: u128,
    pub every: u64,
    pub span: Option<AttnSpan>,
}

/// The rows a step caches, layer by layer (none unless its output is cached).
pub fn cache_rows(g: &Graph, v: &Visit) -> Vec<CacheRow> {
    let spec = g.spec_of(v);
    let out = g.tensor(v.step.output);
    if out.kind != (TensorKind::Activation { cached: true }) {
        return Vec::new();
    }
    // A cached tensor is cached in every layer of its scope, even where its step is skipped.
    // One row per token, or per closed window of m tokens, kept however far back
    // (DeepSeek-V4's compressed entries).
    let every = out.dims.iter().find_map(Dim::every).unwrap_or(1);
    let all = LayerSet::all(spec.layers);
    let per_layer = v.per_layer();
    v.scope_layers()
        .unwrap_or(&all)
        .iter()
        .map(|b| CacheRow {
            layer: b,
            values: out
                .elems()
                .saturating_mul(per_layer)
                .saturating_mul(spec.caches(b) as u128),
            every,
            span: spec.attn_span(b),
        })
        .collect()
}

/// The steps inference runs: not the auxiliary modules (multi-token prediction), nor the
/// cross-attention layers a text token skips.
pub fn inference_steps(g: &Graph) -> impl Iterator<Item = Visit<'_>> {
    g.steps().into_iter().filter(|v| {
        !v.scopes
            .iter()
            .any(|s| matches!(s.kind, ScopeKind::Aux | ScopeKind::CrossAttention))
    })
}

/// The cost of one step at `context` tokens.
pub fn step_cost(g: &Graph, v: &Visit, context: u64) -> Cost {
    let spec = g.spec_of(v);
    let step = v.step;
    let per_layer = v.per_layer();
    let all = LayerSet::all(spec.layers);
    let layers = v.layers().unwrap_or(&all);
    // Steps outside the blocks (the LM head) run once, not once per layer; a layer runs once
    // per token, or once per visit of its stack (HRM).
    let runs = v.layers().map_or(1, |l| spec.runs_over(l));
    let mut c = Cost::default();
    let out = g.tensor(step.output);
    for row in cache_rows(g, v) {
        c.kv_per_token = c
            .kv_per_token
            .saturating_add(row.values / row.every as u128);
        // CPM-Ant's learned prompt is cached beside the text.
        let positions = spec.cached_positions(context);
        let kept = if row.every > 1 {
            positions / row.every
        } else {
            row.span.map_or(0, |s| s.cached_tokens(positions))
        } as u128;
        c.kv_at_context = c
            .kv_at_context
            .saturating_add(row.values.saturating_mul(kept));
    }
    if out.kind == TensorKind::State {
        c.state = out.elems().saturating_mul(per_layer).saturating_mul(runs);
    }
    match step.op {
        Op::Conv { kernel } => {
            // One multiply-add per channel and tap.
            let n = (2 * kernel as u128)
                .saturating_mul(out.dims[0].size().unwrap_or(0) as u128)
                .saturating_mul(per_layer)
                .saturating_mul(runs);
            c.recurrent = c.recurrent.saturating_add(n);
        }
        Op::Scan { flops } => {
            let n = (flops as u128)
                .saturating_mul(per_layer)
                .saturating_mul(runs);
            c.recurrent = c.recurrent.saturating_add(n);
        }
        Op::MatMul => {
            // Weight matrices only: a bias is an add, not a multiply-add per weight.
            for t in step
                .inputs
                .iter()
                .map(|&i| g.tensor(i))
                .filter(|t| t.is_weight() && t.dims[1] != Dim::N(1))
            {
                let n = 2 * t.elems().saturating_mul(per_layer).saturating_mul(runs);
                c.matmul = c.matmul.saturating_add(n);
            }
        }
        Op::Scores { dim } | Op::WeightedSum { dim } | Op::Index { dim } => {
            // Under DeepSeek sparse attention a query attends to at most its top-k keys, under
            // MiniMax-M3's to its top-k blocks of keys; the indexer itself scores every visible key.
            let limit = |b: u64| match step.op {
                Op::Index { .. } => None,
                _ => {
                    let a = spec.attn_at(b as usize);
                    let dsa = a.mla.as_ref().and_then(|m| m.indexer.as_ref());
                    dsa.map(|i| i.top_k)
                        .or(a.block_index.map(|i| i.top_k.saturating_mul(i.block)))
                        .or(a.pool_index.as_ref().map(|p| p.budget()))
                }
            };
            // DeepSeek-V4: a compressed layer's queries also read the entries of the windows
            // closed by their position (at most the indexer's top-k of them in a compressed
            // sparse layer), and its indexer scores every such entry.
            let indexer = out.dims.iter().any(|d| matches!(d, Dim::Windows(_)));
            // Looked up per layer only where some layer has QSA: `attn_at` is not free.
            let any_qsa =
                spec.attn.qsa.is_some() || spec.layer_attn.iter().any(|(_, a)| a.qsa.is_some());
            // Kolibri 1.1's indexer, in the layers that have it.
            let any_pool = spec
                .attn_variants()
                .iter()
                .any(|(a, _)| a.pool_index.is_some());
            for b in layers.iter() {
                let Some(span) = spec.read_span(b) else {
                    continue;
                };
                let attended = |n: u64| limit(b).map_or(n, |k| k.min(n));
                let per = 2.0 * dim as f64 * per_layer as f64 * spec.runs(b) as f64;
                let positions = spec.cached_positions(context);
                let (entries, cap) = match spec.attn.v4.as_ref().map(|v| (v.kind(b), v.index.top_k))
                {
                    Some((V4Kind::Csa(m), _)) if indexer => (Some(m), None),
                    Some((V4Kind::Csa(m), k)) => (Some(m), Some(k)),
                    Some((V4Kind::Hca(m), _)) => (Some(m), None),
                    Some((V4Kind::Sliding, _)) | None => (None, None),
                };
                let qsa = any_qsa.then(|| spec.attn_at(b as usize).qsa).flatten();
                let pool = any_pool
                    .then(|| spec.attn_at(b as usize).pool_index.clone())
                    .flatten();
                let (keys_prefill, keys_decode) = if indexer {
                    (0.0, 0)
                } else if let (Some(p), Op::Index { .. }) = (&pool, step.op) {
                    // Kolibri 1.1: a query past the budget scores every key it sees, and in a
                    // pool layer one past the pool size every complete block too.
                    let picks = p.pools.contains(b);
                    (
                        pool_scores_sum(p, picks, context) / context.max(1) as f64,
                        pool_scores(p, picks, positions),
                    )
                } else if let Some(q) = qsa {
                    // QSA: the indexer scores each complete block a query sees; the heads
                    // attend to its best blocks and the tail.
                    match step.op {
                        Op::Index { .. } => (
                            qsa_blocks_sum(q, context) / context.max(1) as f64,
                            positions / q.ratio,
                        ),
                        _ => (
                            qsa_keys_sum(q, context) / context.max(1) as f64,
                            qsa_keys(q, positions),
                        ),
                    }
                } else {
                    (
                        match span {
                            // Every query of the pass, the prompt's too, sees every key.
                            AttnSpan::Whole if context == 0 => 0.0,
                            AttnSpan::Whole => (positions as f64).powi(2) / context as f64,
                            AttnSpan::Full | AttnSpan::Sliding(_) | AttnSpan::Chunked(_) => {
                                mean_attended(attended(span.cached_tokens(u64::MAX)), context)
                            }
                        },
                        attended(span.cached_tokens(positions)),
                    )
                };
                let (entries_prefill, entries_decode) = match entries {
                    Some(m) => (
                        mean_entries(m, cap, context),
                        cap.map_or(positions / m, |k| k.min(positions / m)),
                    ),
                    None => (0.0, 0),
                };
                c.prefill_attn += per * (keys_prefill + entries_prefill);
                let decode = (2 * dim as u128)
                    .saturating_mul(per_layer)
                    .saturating_mul(spec.runs(b) as u128)
                    .saturating_mul((keys_decode + entries_decode) as u128);
                c.decode_attn = c.decode_attn.saturating_add(decode);
            }
        }
        _ => {}
    }
    c
}

/// The keys a QSA query attends to when it sees `n`: its best complete blocks, up to the budget,
/// and the tokens after its last complete block.
fn qsa_keys(q: Qsa, n: u64) -> u64 {
    (n / q.ratio * q.ratio).min(q.budget) + n % q.ratio
}

/// Σ over p = 1..=n of `qsa_keys(q, p)`: p itself below the budget (a multiple of the ratio),
/// the budget and p's place in its block from there.
fn qsa_keys_sum(q: Qsa, n: u64) -> f64 {
    let (b, r) = (q.budget as f64, q.ratio);
    let below = n.min(q.budget.saturating_sub(1)) as f64;
    let mut sum = below * (below + 1.0) / 2.0;
    if n >= q.budget {
        let count = n - q.budget + 1;
        let (cycles, rest) = ((count / r) as f64, (count % r) as f64);
        let r = r as f64;
        sum += count as f64 * b + cycles * r * (r - 1.0) / 2.0 + rest * (rest - 1.0) / 2.0;
    }
    sum
}

/// Σ over p = 1..=n of ⌊p / ratio⌋: the complete blocks QSA's indexer scores for each query.
fn qsa_blocks_sum(q: Qsa, n: u64) -> f64 {
    let r = q.ratio as f64;
    let m = ((n + 1) / q.ratio) as f64;
    r * m * (m - 1.0) / 2.0 + m * ((n + 1) as f64 - m * r)
}

/// The keys and blocks Kolibri 1.1's indexer scores for the query at position n (1-based): every
/// key it sees past the budget, and in a pool layer (`picks`) every complete block past the pool
/// size.
fn pool_scores(p: &crate::spec::PoolIndex, picks: bool, n: u64) -> u64 {
    let keys = if n > p.budget() { n } else { 0 };
    let blocks = if picks && n > p.pool {
        n / p.compression
    } else {
        0
    };
    keys + blocks
}

/// Σ over positions 1..=n of `pool_scores`.
fn pool_scores_sum(p: &crate::spec::PoolIndex, picks: bool, n: u64) -> f64 {
    let above = |from: u64| {
        let (f, n) = (from.min(n) as f64, n as f64);
        n * (n + 1.0) / 2.0 - f * (f + 1.0) / 2.0
    };
    let mut sum = above(p.budget());
    if picks && n > p.pool {
        sum += windows_sum(p.compression, n) - windows_sum(p.compression, p.pool);
    }
    sum
}

/// Mean number of keys a query attends to over positions 1..=n, each seeing at most `window`.
fn mean_attended(window: u64, n: u64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let (w, n) = (window.min(n) as f64, n as f64);
    // Σ_{p=1}^{w} p + (n − w)·w, over n.
    (w * (w + 1.0) / 2.0 + (n - w) * w) / n
}

/// Σ_{p=1}^{x} ⌊p / m⌋: the entries of closed windows of m tokens seen by positions 1..=x.
fn windows_sum(m: u64, x: u64) -> f64 {
    let (q, r) = ((x / m) as f64, (x % m) as f64);
    m as f64 * q * (q - 1.0).max(0.0) / 2.0 + q * (r + 1.0)
}

/// Mean number of compressed entries a query reads over positions 1..=n: one per window of m
/// tokens closed by its position, at most `cap`.
fn mean_entries(m: u64, cap: Option<u64>, n: u64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let sum = match cap {
        // From position k·m on, k entries are closed: the cap binds.
        Some(k) if n >= k.saturating_mul(m) => {
            let p = k.saturating_mul(m);
            windows_sum(m, p.saturating_sub(1)) + k as f64 * (n - p + 1) as f64
        }
        _ => windows_sum(m, n),
    };
    sum / n as f64
}

/// Parameters stored per layer, for each layer.
pub fn per_layer_params(g: &Graph) -> Vec<u128> {
    let mut out = vec![0u128; g.spec.layers as usize];
    // A BLT stack's layers are its own, not the model's.
    let own = g.params.iter().filter(|p| p.stack.is_none());
    for p in own.filter(|p| p.component != Component::Aux) {
        if let Some(layers) = &p.layers {
            let n = p.numel() * p.experts as u128;
            for b in layers.iter() {
                out[b as usize] += n;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The closed forms equal the sums they stand for, counted query by query.
        #[test]
        fn qsa_sums_are_the_counts_summed(ratio in 1u64..6, blocks in 1u64..5, n in 0u64..200) {
            let q = Qsa { heads: 1, head_dim: 1, budget: ratio * blocks, ratio };
            let keys: u64 = (1..=n)
                .map(|p| {
                    let complete = p / ratio;
                    complete.min(blocks) * ratio + p - complete * ratio
                })
                .sum();
            proptest::prop_assert_eq!(qsa_keys_sum(q, n), keys as f64);
            let scored: u64 = (1..=n).map(|p| p / ratio).sum();
            proptest::prop_assert_eq!(qsa_blocks_sum(q, n), scored as f64);
            if n > 0 {
                proptest::prop_assert_eq!(qsa_keys_sum(q, n) - qsa_keys_sum(q, n - 1), qsa_keys(q, n) as f64);
            }
        }

        /// Kolibri 1.1's indexer: the closed form equals its scores counted query by query, a
        /// key for each one a query past the budget sees, a block for each complete one a query
        /// past the pool size sees in a pool layer.
        #[test]
        fn pool_index_sums_are_the_counts_summed(
            top_k in 1u64..6, local in 0u64..4, sinks in 0u64..3, c in 1u64..5,
            blocks in 1u64..5, picks: bool, n in 0u64..200,
        ) {
            let p = crate::spec::PoolIndex {
                heads: 1, top_k, pool: c * blocks, compression: c, local, sinks,
                pools: crate::layers::LayerSet::from_fn(1, |_| true),
            };
            let counted: u64 = (1..=n)
                .map(|q| {
                    let keys = if q > top_k + local + sinks { q } else { 0 };
                    let blocks = if picks && q > c * blocks { q / c } else { 0 };
                    keys + blocks
                })
                .sum();
            proptest::prop_assert_eq!(pool_scores_sum(&p, picks, n), counted as f64);
            if n > 0 {
                proptest::prop_assert_eq!(pool_scores(&p, picks, n) as f64, pool_scores_sum(&p, picks, n) - pool_scores_sum(&p, picks, n - 1));
            }
        }
    }

    #[test]
    fn compressed_entries_read() {
        // Windows of 4 over 9 positions: 0, 0, 0, 1, 1, 1, 1, 2, 2.
        assert_eq!(windows_sum(4, 9), 8.0);
        assert_eq!(mean_entries(4, None, 9), 8.0 / 9.0);
        // At most one: 0, 0, 0, 1, 1, 1, 1, 1, 1.
        assert_eq!(mean_entries(4, Some(1), 9), 6.0 / 9.0);
        assert_eq!(mean_entries(4, Some(3), 9), 8.0 / 9.0);
        assert_eq!(mean_entries(4, None, 0), 0.0);
    }

    #[test]
    fn attended_keys() {
        assert_eq!(mean_attended(u64::MAX, 4), 2.5);
        // window 2 over 4 positions: 1, 2, 2, 2
        assert_eq!(mean_attended(2, 4), 7.0 / 4.0);
    }
}
