//! A draft model's ends (Gemma 4's assistants): its input made from its target's state, the
//! projection of its last hidden state back to the target's width, and the clustered head.

use super::build::{n, Builder, Draft, Linear};
use super::*;
use crate::naming::Role;

impl Builder<'_> {
    /// The embedding scope's steps: the target's embedding of the last token beside its last
    /// hidden state, projected to this model's width. The embedding matrix is registered for
    /// the head, which reads it where tied; no token is looked up in it.
    pub(super) fn draft_input(&mut self, d: crate::spec::Draft) -> Vec<Node> {
        let spec = self.spec;
        let h = spec.hidden;
        self.param(
            Role::Embed,
            false,
            vec![spec.vocab, h],
            Component::Embedding,
            false,
        );
        let x_t = self.act("Xₜ", self.seq(2 * d.backbone));
        let state = self.step(Draft {
            title: "Target state".into(),
            op: Op::Concat,
            category: Category::Embed,
            inputs: vec![],
            output: x_t,
            operation: format!(
                "Take the target's embedding of the last token (scaled as the target scales it) beside the target's last hidden state, {} features each: after the prompt, the target's final normed state at the last token; after a drafted token, this model's own output projected back (below)",
                d.backbone
            ),
            equation: "Xₜ = [E_target[token] · s ; H]".into(),
        }).at(Point::DraftState);
        let project = self
            .linear(Linear {
                role: Role::DraftIn,
                title: "Projection in".into(),
                w: "W_in",
                out: "X",
                input: "Xₜ",
                rows: h,
                cols: 2 * d.backbone,
                stored_rows: h,
                block: None,
                bias: false,
                component: Component::Embedding,
                category: Category::Embed,
                cached: false,
                operation: format!("Project the target's state to this model's width, {h}"),
            })
            .at(Point::DraftIn);
        vec![state, project]
    }

    /// The final scope's steps after the final norm: `Z` projected back to the target's width,
    /// the next draft step's hidden state.
    pub(super) fn draft_output(&mut self, d: crate::spec::Draft, z: &str) -> Node {
        self.linear(Linear {
            role: Role::DraftOut,
            title: "Projection out".into(),
            w: "W_out",
            out: "H",
            input: z,
            rows: d.backbone,
            cols: self.spec.hidden,
            stored_rows: d.backbone,
            block: None,
            bias: false,
            component: Component::LmHead,
            category: Category::Embed,
            cached: false,
            operation: format!(
                "Project the final hidden state back to the target's width, {}: the hidden state the next draft step reads beside its token",
                d.backbone
            ),
        }).at(Point::DraftOut)
    }

    /// The clustered head's first steps: centroid scores and the clusters kept. The head that
    /// follows scores only the kept clusters' tokens.
    pub(super) fn clusters(&mut self, c: crate::spec::Centroids, z: &str) -> Vec<Node> {
        let spec = self.spec;
        let scores = self
            .linear(Linear {
                role: Role::Centroids,
                title: "Centroid scores".into(),
                w: "W_c",
                out: "C",
                input: z,
                rows: c.count,
                cols: spec.hidden,
                stored_rows: c.count,
                block: None,
                bias: false,
                component: Component::LmHead,
                category: Category::Embed,
                cached: false,
                operation: format!(
                    "Score the {} clusters of {} tokens each",
                    c.count,
                    c.per_cluster(spec.vocab)
                ),
            })
            .at(Point::Centroids);
        let p = self.param(
            Role::TokenOrdering,
            false,
            vec![spec.vocab],
            Component::LmHead,
            false,
        );
        let order = self.push(
            "order",
            [n(spec.vocab), n(1)],
            TensorKind::Weight {
                param: p,
                slice: None,
                note: Some("integers: the vocabulary listed cluster by cluster".into()),
            },
        );
        let kept = c.kept(spec.vocab);
        let out = self.act("Tₖ", self.seq(kept));
        let choose = self.step(Draft {
            title: "Clusters kept".into(),
            op: Op::TopK,
            category: Category::Embed,
            inputs: vec![order],
            output: out,
            operation: format!(
                "Keep the {} best-scored clusters: their {kept} tokens are the only ones the head scores",
                c.top_k
            ),
            equation: format!(
                "Tₖ = order.reshape({}, {})[top{}(C)]",
                c.count,
                c.per_cluster(spec.vocab),
                c.top_k
            ),
        });
        vec![scores, choose]
    }
}
