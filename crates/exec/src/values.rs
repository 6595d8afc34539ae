//! A captured run as the op view shows it: each activation placed on the graph step that computes
//! it (in the layer variant it ran in), router weights per token, and one head's attention.

use crate::model::Captured;
use anatomy_core::graph::{Graph, Node, Point, Scope, ScopeKind, Step};
use anatomy_core::layers::LayerSet;
use anatomy_core::values::{StepValues, Table, Values};
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

/// The step point a capture shows on, and the places such a step may sit: an FFN's projections
/// are captured apart in an MLP, a routed expert and a shared expert; a point captured but not
/// drawn (a part of a step the page shows whole) has no place.
fn shown_at(p: Point) -> (Point, &'static [Place]) {
    use Place::{Block, Experts, Mlp, Outside, Shared};
    const OUTSIDE: &[Place] = &[Outside];
    const BLOCK: &[Place] = &[Block];
    const FFN: &[Place] = &[Mlp, Block];
    const NONE: &[Place] = &[];
    match p {
        Point::EmbedTokens
        | Point::Embed
        | Point::EmbedScale
        | Point::FinalNorm
        | Point::Logits
        | Point::PerLayerInputs
        | Point::Segment
        | Point::PositionBias
        | Point::HcHeadLogits
        | Point::AltupStreams
        | Point::AltupMean
        | Point::HcHead
        | Point::GsHeadGates
        | Point::GsHeadNorm
        | Point::DraftState
        | Point::DraftIn
        | Point::DraftOut
        | Point::ProjectIn
        | Point::ProjectOut
        | Point::Centroids => (p, OUTSIDE),
        Point::Gate
        | Point::Up
        | Point::Act
        | Point::Down
        | Point::SparseGate
        | Point::FfnSubNorm => (p, &[Mlp]),
        Point::ExpertGate => (Point::Gate, &[Experts]),
        Point::ExpertUp => (Point::Up, &[Experts]),
        Point::ExpertAct => (Point::Act, &[Experts]),
        Point::ExpertDown => (Point::Down, &[Experts]),
        Point::ExpertOutNorm => (Point::OutNorm, &[Experts]),
        Point::SharedGate => (Point::Gate, &[Shared]),
        Point::SharedUp => (Point::Up, &[Shared]),
        Point::SharedAct => (Point::Act, &[Shared]),
        Point::SharedDown => (Point::Down, &[Shared]),
        Point::SharedOutNorm => (Point::OutNorm, &[Shared]),
        // LongCat-Flash's shortcut experts are a layer's FFN combination too.
        Point::Shortcut => (Point::Combine, FFN),
        Point::Router
        | Point::Routing
        | Point::Combine
        | Point::PostFfnNorm
        | Point::ResidFfn
        | Point::RouterIn
        | Point::MlpPostNorm
        | Point::ExpertsNorm
        | Point::ExpertsPostNorm => (p, FFN),
        Point::BlockIn
        | Point::AttnNorm
        | Point::FfnNorm
        | Point::PostAttnNorm
        | Point::QProj
        | Point::KProj
        | Point::QNorm
        | Point::KNorm
        | Point::QL2
        | Point::KL2
        | Point::Q
        | Point::QScaled
        | Point::K
        | Point::KRounded
        | Point::VRounded
        | Point::V
        | Point::QLatent
        | Point::QLatentNorm
        | Point::KvLatent
        | Point::KvLatentNorm
        | Point::KPe
        | Point::KPeNorm
        | Point::KPeRot
        | Point::KNope
        | Point::IndexQ
        | Point::IndexK
        | Point::IndexWeights
        | Point::IndexScores
        | Point::IndexMask
        | Point::Scores
        | Point::Probs
        | Point::Heads
        | Point::AttnOut
        | Point::ResidAttn
        | Point::SsmConv
        | Point::ConvOut
        | Point::SsmDt
        | Point::SsmState
        | Point::LightQkv
        | Point::LightGate
        | Point::SsmScan
        | Point::DeltaDecay
        | Point::SsmNorm
        | Point::AttnRouter
        | Point::AttnExperts
        | Point::VNorm
        | Point::FfnSum
        | Point::PleGate
        | Point::PleAct
        | Point::PleUp
        | Point::PleNorm
        | Point::PleResid
        | Point::LayerScalar
        | Point::HcAttnLogits
        | Point::HcAttnIn
        | Point::GsAttnGates
        | Point::GsFfnGates
        | Point::GsAttnNorm
        | Point::NgramEmbed
        | Point::NgramGated
        | Point::NgramConv
        | Point::NgramResid
        | Point::GsFfnNorm
        | Point::GsAttnInject
        | Point::GsFfnInject
        | Point::QsaK
        | Point::QsaBlocks
        | Point::HcFfnLogits
        | Point::HcFfnIn
        | Point::AltupPredict
        | Point::Laurel
        | Point::AltupCorrect
        | Point::AltupScale
        | Point::AttnSubNorm => (p, BLOCK),
        Point::AttnConv
        | Point::AttnGate
        | Point::AttnHeads
        | Point::Differential
        | Point::FfnConv
        | Point::HeadMix
        | Point::HeadTransform
        | Point::KeyScores
        | Point::Kv
        | Point::LoopInput
        | Point::MoePostNorm
        | Point::OA
        | Point::OutNorm
        | Point::QGain
        | Point::RelLogits
        | Point::SharedAttn
        | Point::SharedExpertGate
        | Point::SharedMlp
        | Point::SharedNorm
        | Point::SharedOut
        | Point::Sinks => (p, NONE),
    }
}

/// Does capture `p` belong to `s`?
fn matches(p: Point, s: &Site) -> bool {
    let (step, places) = shown_at(p);
    s.step.point == Some(step) && places.contains(&s.place)
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
    let patches = g.spec.bytes().is_some();
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
        .find(|c| c.point == Point::Routing && c.values.is_some())
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
        .find(|c| c.point == Point::Probs && c.layer == Some(0) && c.values.is_some())
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every point the op view shows is one the graph builder sets on a step of some model
    /// (the catalog's and the fixtures'), so no capture waits for a step that is never drawn;
    /// and a step's point is one a capture shows, or one its op alone gives.
    #[test]
    fn every_shown_point_is_drawn_somewhere() {
        let mut specs = Vec::new();
        for e in anatomy_core::catalog::ENTRIES {
            specs.push(anatomy_core::source::load(e.name, false).unwrap().spec);
        }
        let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut dirs = vec![here];
        while let Some(dir) = dirs.pop() {
            for e in std::fs::read_dir(&dir).unwrap().flatten() {
                if e.path().is_dir() {
                    dirs.push(e.path());
                }
            }
            if dir.join("config.json").exists() {
                if let Ok(c) = anatomy_checkpoint::open(&dir) {
                    specs.push(anatomy_checkpoint::spec(&c, false).unwrap());
                }
            }
        }
        let mut drawn = std::collections::BTreeSet::new();
        for spec in &specs {
            let g = anatomy_core::graph::build(spec).unwrap();
            let mut all = Vec::new();
            sites(&g.root, Place::Outside, None, &[], &mut all);
            for s in &all {
                if let Some(p) = s.step.point {
                    drawn.insert((p, s.place as u8));
                }
            }
        }
        let missing: Vec<&str> = Point::ALL
            .iter()
            .filter(|p| {
                let (step, places) = shown_at(**p);
                !places.is_empty() && !places.iter().any(|pl| drawn.contains(&(step, *pl as u8)))
            })
            .map(|p| p.name())
            .collect();
        assert!(
            missing.is_empty(),
            "shown but drawn on no step: {missing:?}"
        );
    }
}
