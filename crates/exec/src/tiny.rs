//! A scaled-down copy of any Spec with seeded random weights: every structural choice kept (the
//! layer variants, attention kind, norms, routing), every size made small, so any model can be run
//! and its activations looked at without its checkpoint.

use crate::weights::Weights;
use anatomy_checkpoint::Format;
use anatomy_core::graph::Graph;
use anatomy_core::layers::LayerSet;
use anatomy_core::manifest::{manifest, Naming};
use anatomy_core::spec::{AttnSpan, LayerPlan, Mixer, Recurrent, SharedBlocks, Spec, Stream};
use anatomy_core::Error;
use candle_core::{Device, Tensor};
use std::collections::HashMap;

/// The scaled-down Spec: hidden 64, 4 query heads of 16 (K/V heads as the attention kind has them), one layer
/// for each distinct kind of layer (at most 4), at most 8 experts, a 256-token vocabulary.
pub fn shrink(spec: &Spec) -> Spec {
    // The tiny model's weights are random floats, whatever the checkpoint's packing.
    if let Some(bl) = spec.bytes() {
        return Spec {
            quant: None,
            ..shrink_blt(spec, bl)
        };
    }
    let mut s = spec.clone();
    s.quant = None;
    s.name = format!("{} (tiny)", spec.name);
    shrink_attn(&mut s.attn, None);
    for ((_, a), (_, orig)) in s.layer_attn.iter_mut().zip(&spec.layer_attn) {
        // As many times the other layers' K/V heads as the model has, within the 4 query heads.
        let ratio = (orig.kv_heads / spec.attn.kv_heads.max(1)).max(1);
        shrink_attn(a, Some((s.attn.kv_heads * ratio).min(4)));
    }
    s.hidden = 64;
    // LongCat-Flash's and dots.3 Note's latents scaled to the new width.
    let hidden = s.hidden as f64;
    let attns = std::iter::once(&mut s.attn).chain(s.layer_attn.iter_mut().map(|(_, a)| a));
    for m in attns.filter_map(|a| a.mla.as_mut()) {
        if m.lora_scales.is_some() {
            let ranks = (
                m.q_lora_rank.map_or(hidden, |r| r as f64),
                m.kv_lora_rank as f64,
            );
            m.lora_scales = Some(((hidden / ranks.0).sqrt(), (hidden / ranks.1).sqrt()));
        }
    }
    s.vocab = spec.vocab.min(256);
    // The copy is the language model alone: a wrapper's towers are neither built nor counted.
    for part in &mut s.towers {
        part.blocks = None;
    }
    s.image = None;
    if let Some(p) = &mut s.per_layer_input {
        p.width = p.width.min(16);
        p.vocab = s.vocab;
    }
    s.head_rows = spec.head_rows.map(|r| r.min(s.vocab / 2).max(1));
    // A head padded past the real vocabulary keeps its padding, a few rows.
    s.logits_kept = spec
        .logits_kept
        .map(|k| s.out_vocab() - (spec.out_vocab() - k).min(7).min(s.out_vocab() - 1));
    s.mlp.intermediate = 128;
    // Wider MLPs keep their ratio to the others (Gemma 4's double-wide ones).
    for (_, w) in &mut s.mlp_widths {
        *w = (*w * 128 / spec.mlp.intermediate.max(1)).max(1);
    }
    match &mut s.recurrent {
        Some(Recurrent::Mamba(m)) => {
            m.inner = 128;
            m.state = 16;
            m.dt_rank = 4;
            // Heads of their own kept as two (Zamba).
            m.heads = m.heads.min(2);
        }
        Some(Recurrent::Mamba2(m)) => {
            // Twice the hidden size, in 8 heads of 16; groups shared where the model shares them.
            m.groups = if m.groups > 1 { 2 } else { 1 };
            m.heads = 8;
            m.head_dim = 16;
            m.state = 16;
        }
        Some(Recurrent::DeltaNet(d)) => {
            // Two key heads, each serving as many value heads as the model's do, heads of 16.
            d.value_heads = 2 * d.ratio();
            d.key_heads = 2;
            d.key_dim = 16;
            d.value_dim = 16;
        }
        Some(Recurrent::Lightning(l)) => {
            // The attention's heads, and chunks of at most 8 in the stored decay tables.
            l.heads = s.attn.heads;
            l.head_dim = 16;
            l.block = l.block.min(8);
        }
        Some(Recurrent::RgLru(r)) => {
            r.width = 128;
            r.heads = 4;
        }
        Some(Recurrent::Rwkv(r)) => r.attn = 64,
        Some(Recurrent::MLstm(m)) => {
            // 4 heads: keys of 8 and values of 16, as the model's are half and all of hidden.
            m.heads = 4;
            m.qk_dim = 32;
            m.v_dim = 64;
        }
        // A short convolution keeps its taps, whatever the width.
        Some(Recurrent::ShortConv(_)) | None => {}
    }
    if let Some(sh) = &mut s.shared {
        // Zamba2's shared block: its heads split [stream, embeddings], 2 × 64 wide, as the
        // model's split 2 × hidden (the adapters on Q, K and V add that many features).
        sh.adapter_rank = sh.adapter_rank.min(8);
        s.attn.head_dim = 2 * 64 / s.attn.heads;
        s.attn.v_head_dim = s.attn.head_dim;
        s.attn.scale_dim = s.attn.head_dim as f64 / 2.0;
    }
    s.context = spec.context.min(1024);
    if let Some(m) = &mut s.moe {
        m.experts = m.experts.min(8);
        m.zero_experts = m.zero_experts.min(4);
        m.top_k = m.top_k.min(2).min(m.experts);
        m.expert_intermediate = 32;
        m.shared_intermediate = 32 * m.shared_experts;
        m.n_group = if m.n_group > 1 { 2 } else { 1 };
        m.topk_group = m.topk_group.min(m.n_group);
    }
    // One layer of each kind, in order of first appearance, windows and chunks made small.
    // A layer's kind includes which attention it has; `kept` holds each kept layer's index.
    let variant = |b: usize| {
        spec.layer_attn
            .iter()
            .position(|(set, _)| set.contains(b as u64))
    };
    #[allow(clippy::type_complexity)]
    let mut plan: Vec<(
        LayerPlan,
        Option<usize>,
        Option<u64>,
        Option<(anatomy_core::spec::V4Kind, bool)>,
    )> = Vec::new();
    let mut kept = Vec::new();
    for (b, l) in spec.plan.iter().enumerate() {
        let mut l = l.clone();
        l.mixer = match l.mixer {
            Mixer::Attention(AttnSpan::Sliding(w)) => Mixer::Attention(AttnSpan::Sliding(w.min(8))),
            Mixer::Attention(AttnSpan::Chunked(c)) => Mixer::Attention(AttnSpan::Chunked(c.min(8))),
            other => other,
        };
        // A layer that runs a shared block is a kind of its own, one per block (Zamba2).
        let block = spec
            .shared
            .as_ref()
            .and_then(|sh| sh.visit(b as u64).map(|v| v % sh.blocks));
        // DeepSeek-V4: its attention kinds and its layers routed by token id, each kept.
        let v4 = spec.attn.v4.as_ref().map(|v| {
            let hashed = (spec.moe.as_ref())
                .and_then(|m| m.hash_layers.as_ref())
                .is_some_and(|h| h.contains(b as u64));
            (v.kind(b as u64), hashed)
        });
        let kind = (l, variant(b), block, v4);
        if !plan.contains(&kind) && plan.len() < 4 {
            plan.push(kind);
            kept.push(b as u64);
        }
    }
    s.layers = plan.len() as u64;
    s.plan = plan.into_iter().map(|(l, ..)| l).collect();
    // HRM: one layer in each of its two stacks, run in the model's loop.
    if let Stream::Hierarchy(h) = &mut s.stream {
        h.per_stack = 1;
        s.layers = 2;
        s.plan = vec![s.plan[0].clone(); 2];
        kept.push(spec.hierarchy().map_or(1, |h| h.per_stack));
    }
    // Dory: the kept layers in its three sections, the looped one (at least a layer) twice.
    if let Stream::Looped(l) = &mut s.stream {
        let n = s.layers;
        l.input = n.min(1).min(n - 1);
        l.recurrent = (n - l.input).min(n.saturating_sub(2)).max(1);
        l.loops = l.loops.min(2);
    }
    // The per-layer sets, among the layers kept: the shared blocks', the attention variants',
    // the MLP widths', Gemma 3n's sparse layers.
    let n = s.layers;
    let keep = |set: &LayerSet| LayerSet::from_fn(n, |i| set.contains(kept[i as usize]));
    if let Some(sh) = &mut s.shared {
        *sh = SharedBlocks::new(
            keep(&sh.layers),
            sh.blocks,
            sh.adapter_rank,
            sh.attn_adapters,
        );
    }
    s.layer_attn = kept_sets(std::mem::take(&mut s.layer_attn), keep);
    s.mlp_widths = kept_sets(std::mem::take(&mut s.mlp_widths), keep);
    // Kolibri 1.1's pool layers among those kept. A kept layer that reads another's keys and
    // values reads the last kept one of its kind that projects its own (its listed source may
    // not be kept; the first indexed layer, which projects its own, always is).
    for (_, a) in &mut s.layer_attn {
        if let Some(p) = &mut a.pool_index {
            p.pools = keep(&p.pools);
        }
    }
    s.kv_from.clear();
    s.sparsity = kept_sets(std::mem::take(&mut s.sparsity), keep);
    // Ling's per-layer clips, those of the layers kept.
    if let Some(c) = s.moe.as_mut().and_then(|m| m.act_clips.as_mut()) {
        let pick = |l: &[f64]| kept.iter().map(|&b| l[b as usize]).collect();
        (c.routed, c.shared) = (pick(&c.routed), pick(&c.shared));
    }
    if let Some(g) = &mut s.gated_norm {
        g.rank = g.rank.min(8);
    }
    if let Some(r) = &mut s.laurel {
        *r = (*r).min(8);
    }
    // The layers that run an indexer of their own, among those kept (GLM-5, DeepSeek-V3.2).
    if let Some(ix) = s.attn.mla.as_mut().and_then(|m| m.indexer.as_mut()) {
        ix.own = keep(&ix.own);
    }
    // DeepSeek-V4's layer kinds among those kept, windows of a few tokens.
    if let Some(v) = &mut s.attn.v4 {
        v.csa = (keep(&v.csa.0), v.csa.1.min(2));
        v.hca = (keep(&v.hca.0), v.hca.1.min(4));
    }
    if let Some(m) = &mut s.moe {
        if let Some(h) = m.hash_layers.take() {
            let h = keep(&h);
            m.correction_bias = h.len() < n;
            m.hash_layers = (!h.is_empty()).then_some(h);
        }
    }
    s.embedding.learned_positions = spec.embedding.learned_positions.map(|p| p.min(1024));
    // A projected table keeps its ratio to the hidden size (OPT-350M's 512 of 1024), within 4×.
    s.embedding.projected = spec.embedding.projected.map(|w| {
        let scaled = w as u128 * s.hidden as u128 / spec.hidden.max(1) as u128;
        scaled.clamp(1, 4 * s.hidden as u128) as u64
    });
    s.mtp_layers = 0;
    s.hf_wrap = anatomy_core::spec::HfWrap::None;
    s
}

/// BLT: each stack made small as any model is, its byte vocabulary and checkpoint names kept;
/// the hash table's blocks of at most 1024 rows.
fn shrink_blt(spec: &Spec, bl: &anatomy_core::spec::ByteLatent) -> Spec {
    let stack = |s: &Spec| Spec {
        vocab: s.vocab,
        hf_wrap: s.hf_wrap,
        ..shrink(s)
    };
    let mut small = bl.clone();
    small.encoder = stack(&bl.encoder);
    small.decoder = stack(&bl.decoder);
    small.patcher = bl.patcher.as_ref().map(stack);
    small.hash.vocab = bl.hash.vocab.min(1024);
    let latent = Spec {
        stream: Stream::Plain,
        ..spec.clone()
    };
    Spec {
        stream: Stream::Bytes(Box::new(small)),
        ..stack(&latent)
    }
}

/// Each set of `sets` narrowed to the layers kept (`keep`), those left empty dropped.
fn kept_sets<T>(
    sets: Vec<(LayerSet, T)>,
    keep: impl Fn(&LayerSet) -> LayerSet,
) -> Vec<(LayerSet, T)> {
    sets.into_iter()
        .map(|(set, v)| (keep(&set), v))
        .filter(|(set, _)| !set.is_empty())
        .collect()
}

/// One attention made small: 4 query heads of 16, and the same kind of attention (so the same
/// graph): MHA 4/4, GQA 4 queries on 2 K/V heads, MQA 4 on 1, MLA 4; `kv` K/V heads where
/// given. V's heads are 8 wide where the model's differ from Q's.
fn shrink_attn(a: &mut anatomy_core::spec::Attention, kv: Option<u64>) {
    use anatomy_core::spec::AttnKind;
    let (heads, default_kv) = match a.kind {
        AttnKind::Gqa => (4, 2),
        AttnKind::Mqa => (4, 1),
        AttnKind::Mha | AttnKind::Mla => (4, 4),
    };
    let narrow_v = a.mla.is_none() && a.v_head_dim != a.head_dim;
    let orig_head_dim = a.head_dim;
    a.heads = heads;
    a.kv_heads = kv.unwrap_or(default_kv);
    if a.mla.is_none() {
        a.kind = match a.kv_heads {
            k if k == heads => AttnKind::Mha,
            1 => AttnKind::Mqa,
            _ => AttnKind::Gqa,
        };
    }
    a.head_dim = 16;
    a.v_head_dim = if narrow_v { 8 } else { 16 };
    a.scale_dim = 16.0;
    if let Some(v) = &mut a.v4 {
        // The rotated share of the head kept, in whole pairs.
        let rope = (16 * v.rope_dim / orig_head_dim.max(1)).max(2) / 2 * 2;
        v.rope_dim = rope;
        v.q_lora_rank = 48;
        v.o_groups = v.o_groups.min(2);
        v.o_lora_rank = 8;
        v.index.heads = v.index.heads.min(8);
        v.index.head_dim = v.index.head_dim.min(16).max(rope);
        v.index.top_k = v.index.top_k.min(2);
    }
    // Kolibri 1.1's indexer: the query heads of K/V head 0 at most, and budgets a short
    // prompt passes, so that its selection shows.
    if let Some(p) = &mut a.pool_index {
        p.heads = p.heads.min(a.heads / a.kv_heads.max(1));
        p.top_k = p.top_k.min(2);
        p.local = p.local.min(2);
        p.sinks = p.sinks.min(1);
        p.compression = p.compression.min(2);
        p.pool = (p.pool.min(4) / p.compression).max(1) * p.compression;
    }
    if let Some(m) = &mut a.mla {
        m.kv_lora_rank = 32;
        m.q_lora_rank = m.q_lora_rank.map(|_| 48);
        m.qk_nope_head_dim = 8;
        m.qk_rope_head_dim = 8;
        if let Some(ix) = &mut m.indexer {
            ix.heads = ix.heads.min(8);
            ix.head_dim = ix.head_dim.min(16);
        }
    }
}

/// Seeded random weights for every tensor of `g`: matrices normal with standard deviation
/// 1/√fan-in, so activations stay near unit scale and attention is far from uniform (heads and
/// positions show in the values); norm weights near their identity, biases small.
pub fn random_weights(g: &Graph, seed: u64) -> Result<Weights, Error> {
    let mut rng = SplitMix(seed);
    let mut tensors = HashMap::new();
    for e in manifest(g, Naming::Hf)? {
        let n: usize = e.shape.iter().map(|&d| d as usize).product();
        let is_norm = e.name.contains("norm") || e.name.contains("ln_");
        // Inputs are the last dim of [out, in]; the first of a Conv1D's [in, out]; the middle of
        // stacked experts' [E, in, out].
        let fan_in = match e.shape.as_slice() {
            [_, i, _] => *i,
            [i, _] if g.spec.layout.stores_in_out() => *i,
            [.., i] => *i,
            [] => 1,
        };
        let std = (fan_in.max(1) as f64).powf(-0.5) as f32;
        let values: Vec<f32> = (0..n)
            .map(|_| {
                let z = rng.normal() as f32;
                if is_norm && e.shape.len() == 1 && !e.name.ends_with("bias") {
                    (if g.spec.norm.unit_offset { 0.0 } else { 1.0 }) + 0.1 * z
                } else if e.shape.len() == 1 {
                    0.02 * z
                } else {
                    std * z
                }
            })
            .collect();
        let shape: Vec<usize> = e.shape.iter().map(|&d| d as usize).collect();
        let t = Tensor::from_vec(values, shape, &Device::Cpu)
            .map_err(|err| Error::file(&e.name, err.to_string()))?;
        tensors.insert(e.name, t);
    }
    lightning_constants(g, &mut tensors)?;
    token_routes(g, &mut rng, &mut tensors)?;
    Ok(Weights::new(tensors, Format::Safetensors))
}

/// DeepSeek-V4's token-id routing tables: for each token, distinct experts drawn at random.
fn token_routes(
    g: &Graph,
    rng: &mut SplitMix,
    tensors: &mut HashMap<String, Tensor>,
) -> Result<(), Error> {
    let Some((m, layers)) = (g.spec.moe.as_ref()).and_then(|m| Some((m, m.hash_layers.as_ref()?)))
    else {
        return Ok(());
    };
    let (e, k) = (m.experts as usize, m.top_k as usize);
    let (pattern, _) =
        anatomy_core::naming::names(g.spec.layout, anatomy_core::naming::Role::HashTable, false);
    for b in layers.iter() {
        let name = pattern.replace("{b}", &b.to_string());
        let Some(t) = tensors.get_mut(&name) else {
            continue;
        };
        let rows = t.dims().first().copied().unwrap_or(0);
        let mut ids = Vec::with_capacity(rows * k);
        for _ in 0..rows {
            let mut all: Vec<usize> = (0..e).collect();
            for j in 0..k {
                let pick = j + (rng.next() as usize) % (e - j);
                all.swap(j, pick);
                ids.push(all[j] as f32);
            }
        }
        *t = Tensor::from_vec(ids, (rows, k), &Device::Cpu)
            .map_err(|err| Error::file(&name, err.to_string()))?;
    }
    Ok(())
}

/// Lightning attention's stored rates and decay tables as its class computes them, not random:
/// a random rate below 0 would make its memory grow without bound.
fn lightning_constants(g: &Graph, tensors: &mut HashMap<String, Tensor>) -> Result<(), Error> {
    use anatomy_core::naming::{names, Role};
    let spec = &g.spec;
    let Some(l) = spec.lightning() else {
        return Ok(());
    };
    let (h, blk) = (l.heads as usize, l.block as usize);
    for b in spec.layers_where(|p| p.mixer == Mixer::Lightning).iter() {
        let s: Vec<f64> = (0..h as u64).map(|i| l.slope(b, spec.layers, i)).collect();
        let decay = |i: usize, steps: f64| (-s[i] * steps).exp() as f32;
        let q: Vec<f32> = (0..h * blk)
            .map(|k| decay(k / blk, (k % blk + 1) as f64))
            .collect();
        let kd: Vec<f32> = (0..h * blk)
            .map(|k| decay(k / blk, (blk - (k % blk + 1)) as f64))
            .collect();
        let diag: Vec<f32> = (0..h * blk * blk)
            .map(|k| {
                let (i, r, c) = (k / (blk * blk), (k / blk) % blk, k % blk);
                if r >= c {
                    decay(i, (r - c) as f64)
                } else {
                    0.0
                }
            })
            .collect();
        let slopes: Vec<f32> = s.iter().map(|&x| x as f32).collect();
        for (role, values, shape) in [
            (Role::LightSlope, slopes, vec![h, 1, 1]),
            (Role::LightQDecay, q, vec![h, blk, 1]),
            (Role::LightKDecay, kd, vec![h, blk, 1]),
            (Role::LightDiagDecay, diag, vec![1, h, blk, blk]),
        ] {
            let (template, _) = names(spec.layout, role, false);
            let name = template.replace("{b}", &b.to_string());
            let t = Tensor::from_vec(values, shape, &Device::Cpu)
                .map_err(|err| Error::file(&name, err.to_string()))?;
            tensors.insert(name, t);
        }
    }
    Ok(())
}

/// SplitMix64 with Box–Muller: the same numbers on every machine.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn uniform(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn normal(&mut self) -> f64 {
        (-2.0 * self.uniform().ln()).sqrt() * (2.0 * std::f64::consts::PI * self.uniform()).cos()
    }
}

#[cfg(test)]
mod tests {
    /// A scaled-down MiniMax holds its class's decay rates, and its lightning memory stays
    /// finite over a long prompt (random rates, some negative, made it grow without bound).
    #[test]
    fn a_tiny_minimax_holds_its_class_rates_and_stays_finite() {
        let cfg = serde_json::json!({ "model_type": "minimax" });
        let spec =
            anatomy_core::families::load_json("config.json", &cfg.to_string(), "m", false).unwrap();
        let model = crate::session::tiny(&spec).unwrap();
        let ids: Vec<u32> = (0..600u32).map(|i| (7 + 13 * i) % 200).collect();
        let logits = model
            .forward_last(&ids, &mut crate::Cache::new(model.spec.layers as usize))
            .unwrap();
        let v: Vec<f32> = logits.flatten_all().unwrap().to_vec1().unwrap();
        assert!(v.iter().all(|x| x.is_finite()));
    }
}
