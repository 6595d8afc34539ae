//! A captured run as the op view shows it: each activation placed on the graph step that computes
//! it (in the layer variant it ran in), router weights per token, and one head's attention.

use crate::model::Captured;
use anatomy_core::graph::{Category, Graph, Node, Op, Scope, ScopeKind, Step};
use anatomy_core::layers::LayerSet;
use anatomy_core::render::html::ops::{StepValues, Table, Values};
use std::collections::BTreeMap;

/// Where a step sits.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    Outside,
    Block,
    Mlp,
    Experts,
    Shared,
    /// Inside a BLT byte-level stack: run as a model of its own, not captured.
    Stack,
}

struct Site {
    step: Step,
    place: Place,
    /// The repeated frames around it (groups, heads, experts), outermost first.
    frames: Vec<ScopeKind>,
    /// Layers it runs in; `None` outside the blocks.
    layers: Option<LayerSet>,
}

fn sites(
    scope: &Scope,
    place: Place,
    layers: Option<LayerSet>,
    frames: &[ScopeKind],
    out: &mut Vec<Site>,
) {
    for n in &scope.children {
        match n {
            Node::Step(s) => out.push(Site {
                step: s.clone(),
                place,
                frames: frames.to_vec(),
                layers: s.layers.clone().or_else(|| layers.clone()),
            }),
            Node::Scope(sc) => {
                let inner = match sc.kind {
                    // BLT's byte-level stacks run as models of their own, not captured here.
                    _ if place == Place::Stack => Place::Stack,
                    ScopeKind::Stack(_) => Place::Stack,
                    ScopeKind::Block => Place::Block,
                    ScopeKind::Experts => Place::Experts,
                    // Inside a mixture, an MLP scope is its shared expert.
                    ScopeKind::Moe => Place::Mlp,
                    ScopeKind::Mlp if place == Place::Block => Place::Mlp,
                    ScopeKind::Mlp => Place::Shared,
                    // Not run: auxiliary modules, and cross-attention layers on text alone.
                    ScopeKind::Aux | ScopeKind::CrossAttention => Place::Outside,
                    _ => place,
                };
                let mut frames = frames.to_vec();
                if sc.repeat > 1
                    && matches!(
                        sc.kind,
                        ScopeKind::Group | ScopeKind::Head | ScopeKind::Experts
                    )
                {
                    frames.push(sc.kind);
                }
                sites(
                    sc,
                    inner,
                    sc.layers.clone().or_else(|| layers.clone()),
                    &frames,
                    out,
                );
            }
        }
    }
}

/// Does capture `point` belong to `s`?
fn matches(point: &str, s: &Site) -> bool {
    let t = s.step.title.as_str();
    let op = s.step.op;
    let norm = op == Op::Norm && s.step.category == Category::Norm;
    match (point, s.place) {
        ("embed_tokens", Place::Outside) => op == Op::Lookup && t == "Token embedding",
        ("embed", Place::Outside) => matches!(op, Op::Add | Op::Scale) && !t.starts_with("MTP"),
        ("final_norm", Place::Outside) => norm && t.starts_with("Final"),
        ("logits", Place::Outside) => t == "Language-model head",
        ("per_layer_inputs", Place::Outside) => t == "Per-layer inputs",
        ("segment", Place::Outside) => t == "Prompt and segment embedding",
        ("position_bias", Place::Outside) => t == "Position bias",
        ("hc_head_logits", Place::Outside) => t == "Head stream logits",
        ("altup_streams", Place::Outside) => t == "AltUp streams",
        ("altup_mean", Place::Outside) => t == "AltUp stream mean",
        ("hc_head", Place::Outside) => t == "Head stream sum" || t == "Head stream mean",
        ("gs_head_gates", Place::Outside) => t == "Head input gates",
        ("gs_head_norm", Place::Outside) => t == "Head stream norm",
        ("draft_state", Place::Outside) => t == "Target state",
        ("draft_in", Place::Outside) => t == "Projection in",
        ("draft_out", Place::Outside) => t == "Projection out",
        ("project_in", Place::Outside) => t == "Projection in",
        ("project_out", Place::Outside) => t == "Projection out",
        ("centroids", Place::Outside) => t == "Centroid scores",
        (_, Place::Outside) => false,
        ("block_in", Place::Block) => op == Op::Route,
        ("attn_norm", Place::Block) => {
            norm && (t.starts_with("Attention ") || t.starts_with("Mixer "))
        }
        ("ffn_norm", Place::Block) => norm && t.starts_with("MLP "),
        ("post_attn_norm", Place::Block) => norm && t.starts_with("Post-attention"),
        ("q_proj", Place::Block) => t == "Q projection",
        ("k_proj", Place::Block) => t == "K projection",
        ("q_norm", Place::Block) => op == Op::Norm && t.starts_with("Q ") && !t.contains("latent"),
        ("k_norm", Place::Block) => op == Op::Norm && t.starts_with("K ") && !t.contains("latent"),
        ("q_l2", Place::Block) => t.starts_with("Q L2"),
        ("k_l2", Place::Block) => t.starts_with("K L2"),
        ("q", Place::Block) => t.starts_with("Q rotary"),
        ("q_scaled", Place::Block) => t.starts_with("Query temperature"),
        ("k", Place::Block) => t.starts_with("K rotary"),
        ("v", Place::Block) => t == "V projection" || t == "V up-projection",
        ("q_latent", Place::Block) => t == "Q down-projection",
        ("q_latent_norm", Place::Block) => t == "Q latent RMSNorm",
        ("kv_latent", Place::Block) => t == "KV down-projection",
        ("kv_latent_norm", Place::Block) => t == "KV latent RMSNorm",
        ("k_pe", Place::Block) => t == "Shared rotary key projection",
        ("k_pe_norm", Place::Block) => t == "Rotary key RMSNorm",
        ("k_pe_rot", Place::Block) => t.starts_with("Kₚₑ rotary"),
        ("k_nope", Place::Block) => t == "K up-projection",
        ("index_q", Place::Block) => t == "Indexer Q rotary position encoding",
        ("index_k", Place::Block) => t == "Indexer K rotary position encoding",
        ("index_weights", Place::Block) => t == "Indexer head weights",
        ("index_scores", Place::Block) => matches!(op, Op::Index { .. }),
        ("index_mask", Place::Block) => matches!(op, Op::Select { .. }),
        ("scores", Place::Block) => matches!(op, Op::Scores { .. }),
        ("probs", Place::Block) => op == Op::Softmax,
        ("heads", Place::Block) => op == Op::Concat || matches!(op, Op::WeightedSum { .. }),
        ("attn_out", Place::Block) => {
            t == "Attention output projection" || t == "Mixer output projection"
        }
        // A half of the block that runs in some layers only says so after its name.
        ("resid_attn", Place::Block) => {
            t == "Attention residual" || t.starts_with("Mixer residual")
        }
        ("ssm_conv", Place::Block) => t == "Convolution activation",
        ("conv_out", Place::Block) => t == "Causal convolution",
        ("ssm_dt", Place::Block) => t == "Step size",
        ("ssm_state", Place::Block) => {
            t == "State update" || t == "Delta-rule update" || t == "Memory update"
        }
        ("light_qkv", Place::Block) => t.ends_with(" on q, k and v"),
        ("light_gate", Place::Block) => t == "Output gate",
        ("ssm_scan", Place::Block) => t == "State read-out" || t == "Memory read-out",
        ("delta_decay", Place::Block) => t == "Decay",
        ("ssm_norm", Place::Block) => t == "Gated RMSNorm" || t == "Output RMSNorm",
        ("gate", Place::Mlp) | ("expert_gate", Place::Experts) | ("shared_gate", Place::Shared) => {
            t == "Gate projection"
        }
        ("up", Place::Mlp) | ("expert_up", Place::Experts) | ("shared_up", Place::Shared) => {
            t == "Up projection"
        }
        ("act", Place::Mlp) | ("expert_act", Place::Experts) | ("shared_act", Place::Shared) => {
            op == Op::Activation
        }
        ("down", Place::Mlp) | ("expert_down", Place::Experts) | ("shared_down", Place::Shared) => {
            t == "Down projection"
        }
        ("attn_router", Place::Block) => t == "Attention router logits",
        ("attn_experts", Place::Block) => t == "Attention expert combination",
        ("router", Place::Mlp | Place::Block) => t == "Router logits",
        // The FFN's, not a mixture of attention heads' (JetMoE).
        ("routing", Place::Mlp | Place::Block) => {
            op == Op::TopK && s.step.category == Category::Ffn
        }
        // LongCat-Flash's shortcut experts are a layer's FFN combination too.
        ("combine" | "shortcut", Place::Mlp | Place::Block) => {
            op == Op::Combine && s.step.category == Category::Ffn
        }
        ("post_ffn_norm", Place::Mlp | Place::Block) => norm && t.starts_with("Post-MLP"),
        ("resid_ffn", Place::Mlp | Place::Block) => t.starts_with("MLP residual"),
        ("v_norm", Place::Block) => t.starts_with("V RMSNorm"),
        ("router_in", Place::Mlp | Place::Block) => t == "Router input",
        ("mlp_post_norm", Place::Mlp | Place::Block) => norm && t.starts_with("MLP output"),
        ("experts_norm", Place::Mlp | Place::Block) => {
            norm && t.starts_with("Experts' ") && !t.contains("output")
        }
        ("experts_post_norm", Place::Mlp | Place::Block) => {
            norm && t.starts_with("Experts' output")
        }
        ("ffn_sum", Place::Block) => t == "MLP and experts sum",
        ("ple_gate", Place::Block) => t == "Per-layer gate",
        ("ple_act", Place::Block) => t == "Per-layer input gating",
        ("ple_up", Place::Block) => t == "Per-layer up-projection",
        ("ple_norm", Place::Block) => norm && t.starts_with("Per-layer "),
        ("ple_resid", Place::Block) => t == "Per-layer residual",
        ("layer_scalar", Place::Block) => t == "Layer scale",
        ("hc_attn_logits", Place::Block) => t == "Attention stream logits",
        ("hc_attn_in", Place::Block) => t == "Attention stream sum" || t == "Attention stream mean",
        ("gs_attn_gates", Place::Block) => t == "Attention input gates",
        ("gs_ffn_gates", Place::Block) => t == "MLP input gates",
        ("gs_attn_norm", Place::Block) => t == "Attention stream norm",
        ("ngram_embed", Place::Block) => t == "N-gram embedding",
        ("ngram_gated", Place::Block) => t == "N-gram gates",
        ("ngram_conv", Place::Block) => t == "N-gram convolution",
        ("ngram_resid", Place::Block) => t == "N-gram residual",
        ("gs_ffn_norm", Place::Block) => t == "MLP stream norm",
        ("gs_attn_inject", Place::Block) => t == "Attention injection weights",
        ("gs_ffn_inject", Place::Block) => t == "MLP injection weights",
        ("qsa_k", Place::Block) => t == "Indexer key projection",
        ("qsa_blocks", Place::Block) => op == Op::Norm && t.starts_with("Block key"),
        ("hc_ffn_logits", Place::Block) => t == "MLP stream logits",
        ("hc_ffn_in", Place::Block) => t == "MLP stream sum" || t == "MLP stream mean",
        ("altup_predict", Place::Block) => t == "AltUp prediction",
        ("laurel", Place::Block) => t == "LAuReL residual",
        ("altup_correct", Place::Block) => t == "AltUp correction",
        ("altup_scale", Place::Block) => t == "AltUp output scale",
        ("sparse_gate", Place::Mlp) => t == "Activation sparsity",
        _ => false,
    }
}

/// The error for a forward pass whose logits were not all finite, naming the first step (in the
/// order the pass ran them) whose output held NaN or infinite values.
pub fn non_finite(spec: &anatomy_core::spec::Spec, captured: &[Captured]) -> anatomy_core::Error {
    let first = captured.iter().find(|c| c.nonfinite > 0);
    let message = match first {
        None => "the forward pass produced NaN or infinite logits".to_string(),
        Some(c) => {
            let step = anatomy_core::graph::build(spec).ok().and_then(|g| {
                let mut all = Vec::new();
                sites(&g.root, Place::Outside, None, &[], &mut all);
                all.into_iter()
                    .find(|s| {
                        matches(c.point, s)
                            && match (&s.layers, c.layer) {
                                (Some(l), Some(b)) => l.contains(b as u64),
                                (None, None) => true,
                                _ => false,
                            }
                    })
                    .map(|s| format!("step {} ({})", s.step.number, s.step.title))
            });
            let place = match c.layer {
                Some(b) => format!(" in layer {b}"),
                None => String::new(),
            };
            let total: usize = c.shape.iter().product();
            format!(
                "the forward pass produced NaN or infinite logits; the first output that was not finite is {}{place}: {} of its {total} values; the weights may hold NaN or infinite values",
                step.unwrap_or_else(|| c.point.to_string()),
                c.nonfinite
            )
        }
    };
    anatomy_core::Error::new(&spec.name, "", message)
}

/// The op view's values from a captured run of the model whose graph is `g`.
pub fn values(
    g: &Graph,
    captured: &[Captured],
    ids: &[u32],
    pieces: Vec<String>,
    note: String,
) -> Values {
    let mut all = Vec::new();
    sites(&g.root, Place::Outside, None, &[], &mut all);
    let mut steps = BTreeMap::new();
    let mut lanes = BTreeMap::new();
    let stats = |c: &Captured, s: &crate::model::Summary| StepValues {
        shape: c.shape.clone(),
        mean: s.mean,
        std: s.std,
        max: s.max,
    };
    for c in captured {
        for s in all.iter().filter(|s| matches(c.point, s)) {
            let in_layers = match (&s.layers, c.layer) {
                (Some(l), Some(b)) => l.contains(b as u64),
                (None, None) => true,
                _ => false,
            };
            if !in_layers {
                continue;
            }
            // The first layer of each variant to run speaks for it; each head and expert for
            // its own lane.
            steps
                .entry(s.step.number)
                .or_insert_with(|| stats(c, &c.summary));
            // A head's place among the frames: query head h of a GQA layer sits in group
            // h / g as its head h % g; K/V head i in group i; any other head in its own lane.
            let group = g.spec.group_size();
            for (h, part) in c.heads.iter().enumerate() {
                let h = h as u64;
                let path = match s.frames.as_slice() {
                    [ScopeKind::Group, ScopeKind::Head] => vec![h / group, h % group],
                    [ScopeKind::Group | ScopeKind::Head] => vec![h],
                    _ => continue,
                };
                lanes
                    .entry((s.step.number, path))
                    .or_insert_with(|| stats(c, part));
            }
            if let (Some(e), [ScopeKind::Experts]) = (c.expert, s.frames.as_slice()) {
                lanes
                    .entry((s.step.number, vec![e as u64]))
                    .or_insert_with(|| stats(c, &c.summary));
            }
        }
    }
    // CPM-Ant's learned prompt runs before the text through every layer: its rows come first.
    let prompt = g.spec.prompt.map_or(0, |p| p.length as usize);
    // BLT's latent transformer, the model captured here, runs over patches, not the ids.
    let patches = g.spec.bytes.is_some();
    let label = |i: usize| match i.checked_sub(prompt) {
        None => format!("prompt {i}"),
        Some(i) if patches => format!("patch {i}"),
        Some(i) => pieces
            .get(i)
            .map_or(format!("{}", ids[i]), |p| format!("{} {p:?}", ids[i])),
    };
    let mut tables = Vec::new();
    if let Some(r) = captured
        .iter()
        .find(|c| c.point == "routing" && c.values.is_some())
    {
        let (t, e) = (r.shape[0], r.shape[1]);
        let v = r.values.as_ref().expect("checked");
        // Zero-computation experts (LongCat-Flash) follow the routed ones: z0, z1 …
        let routed = g.spec.moe.as_ref().map_or(e, |m| m.experts as usize);
        tables.push(Table {
            title: format!("Router weights in layer {} — each token's chosen experts; 0 marks an expert not chosen", r.layer.unwrap_or(0)),
            rows: (0..t).map(label).collect(),
            cols: (0..e)
                .map(|i| match i.checked_sub(routed) {
                    None => format!("e{i}"),
                    Some(z) => format!("z{z}"),
                })
                .collect(),
            cells: v.chunks(e).map(|c| c.to_vec()).collect(),
        });
    }
    if let Some(p) = captured
        .iter()
        .find(|c| c.point == "probs" && c.layer == Some(0) && c.values.is_some())
    {
        let (t, total) = (p.shape[1], p.shape[2]);
        let v = p.values.as_ref().expect("checked");
        tables.push(Table {
            title: "Attention weights of head 0 in layer 0 — rows are queries, columns keys".into(),
            rows: (0..t).map(label).collect(),
            cols: (0..total).map(|i| format!("k{i}")).collect(),
            cells: v[..t * total].chunks(total).map(|c| c.to_vec()).collect(),
        });
    }
    Values {
        note,
        ids: ids.to_vec(),
        pieces,
        steps,
        lanes,
        tables,
    }
}
