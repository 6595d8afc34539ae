//! Kolibri 1.1's weightless indexer (`PoolIndex`): the layer's own queries score its keys, a pool
//! layer picks each query's pool of candidate blocks, and each query keeps its best keys of the
//! pool with the sinks and its latest keys; the layer attends over NVFP4-rounded keys and values.

use super::build::{Builder, Draft};
use super::*;
use crate::layers::LayerSet;
use crate::spec::PoolIndex;

impl Builder<'_> {
    /// The indexer's steps, before the heads: its scores, the pool (in the pool layers) and the
    /// selection each query head attends through.
    pub(super) fn pool_index(&mut self, p: &PoolIndex) -> Vec<Node> {
        let hd = self.attn.head_dim;
        let (h, budget) = (p.heads, p.budget());
        let mut nodes = vec![];
        let scores = self.act("Iᵢₓ", [Dim::Seq, Dim::Seq]);
        nodes.push(self.step(Draft {
            title: "Index scores".into(),
            op: Op::Index { dim: h * hd },
            category: Category::Attention,
            inputs: vec![],
            output: scores,
            operation: format!(
                "Where a query sees more than {budget} keys, score each against it with the layer's first {h} query heads and K/V head 0, both rounded to NVFP4; no weights of its own"
            ),
            equation: format!(
                "Iᵢₓ[t, s] = Σₕ ReLU(r(Qₙ[t, h]) · r(Kₙ[s, 0])) / (√{hd} · {h}), h < {h}, s ≤ t; r = NVFP4 rounding"
            ),
        }));
        let pools = LayerSet::from_fn(self.spec.layers, |b| {
            self.layers.contains(b) && p.pools.contains(b)
        });
        if !pools.is_empty() {
            let c = p.compression;
            let pool = self.act("Pᵢₓ", [Dim::Seq, Dim::Seq]);
            let mut step = self.step(Draft {
                title: "Pool selection".into(),
                op: Op::Select { k: p.pool / c },
                category: Category::Attention,
                inputs: vec![],
                output: pool,
                operation: format!(
                    "Where a query sees more than {} keys, keep as its pool the {} blocks of {c} keys whose rounded mean key scores best; the indexed layers after this one keep its pools",
                    p.pool,
                    p.pool / c
                ),
                equation: format!(
                    "K̄[j] = r(mean of Kₙ[{c}j … {c}j + {}, 0]); Pᵢₓ[t] = the keys of the top-{} blocks by Σₕ ReLU(r(Qₙ[t, h]) · K̄[j]), an incomplete newest block scoring 0, ties to the earlier",
                    c - 1,
                    p.pool / c
                ),
            });
            if pools.len() != self.layers.len() {
                if let Node::Step(s) = &mut step {
                    s.title += &format!(" (layers {pools})");
                    s.layers = Some(pools);
                }
            }
            nodes.push(step);
        }
        let mask = self.act("Mᵢₓ", [Dim::Seq, Dim::Seq]);
        nodes.push(self.step(Draft {
            title: "Key selection".into(),
            op: Op::Select { k: p.top_k },
            category: Category::Attention,
            inputs: vec![],
            output: mask,
            operation: format!(
                "Keep each query's {} best keys of its pool, its first {} and its last {} keys; a query that sees at most {budget} keeps them all. Every head attends only there",
                p.top_k, p.sinks, p.local
            ),
            equation: format!(
                "Mᵢₓ[t, s] = 0 if s < {} or s > t − {} or s ∈ top-{}(Iᵢₓ[t] over Pᵢₓ[t]), −∞ otherwise (ties to the earlier key)",
                p.sinks, p.local, p.top_k
            ),
        }));
        nodes
    }

    /// The NVFP4 rounding of the keys or the values the layer attends over: E2M1 values with one
    /// E4M3 scale per 16 features.
    pub(super) fn nvfp4(&mut self, what: &str, input: &str, output: &str, dim: u64) -> Node {
        let t = self.act(output, self.seq(dim));
        self.step(Draft {
            title: format!("NVFP4 {what}"),
            op: Op::Scale,
            category: Category::Attention,
            inputs: vec![],
            output: t,
            operation: format!(
                "Round the {what} to NVFP4 and back, as the model was trained: each block of 16 features to 4-bit values (±0, 0.5, 1, 1.5, 2, 3, 4, 6) times one 8-bit (E4M3) scale"
            ),
            equation: format!(
                "{output} = e2m1({input} / s) · s per 16 features, s = e4m3(clamp(max|{input}| / 6, 2⁻⁹, 448)), ties to even"
            ),
        })
        .at(if what == "keys" {
            Point::KRounded
        } else {
            Point::VRounded
        })
    }
}
