//! A mixture of attention heads (JetMoE): the router over head experts, and their outputs combined.

use super::build::{n, Builder, Draft, Linear};
use super::*;
use crate::naming::Role;
use crate::spec::Moa;

impl Builder<'_> {
    /// A mixture of attention heads' router: logits over the experts and each token's top-k,
    /// weighted by a softmax over the chosen logits.
    pub(super) fn moa_router(&mut self, m: Moa, x_in: &str) -> Vec<Node> {
        let (d, e, k) = (self.spec.hidden, m.experts, m.top_k);
        let logits = self
            .linear(Linear {
                role: Role::AttnRouter,
                title: "Attention router logits".into(),
                w: "Wₐᵣ",
                out: "Lₐ",
                input: x_in,
                rows: e,
                cols: d,
                stored_rows: e,
                block: None,
                bias: false,
                component: Component::Attention,
                category: Category::Attention,
                cached: false,
                operation: format!("Score each token against all {e} attention experts"),
            })
            .at(Point::AttnRouter);
        let gates = self.act("Gₐ", self.seq(e));
        let choose = self.step(Draft {
            title: format!("Top-{k} attention expert selection"),
            op: Op::TopK,
            category: Category::Attention,
            inputs: vec![],
            output: gates,
            operation: format!(
                "Keep each token's {k} best attention experts, slots j = 0 … {}: each brings its query and output projections",
                k - 1
            ),
            equation: format!("Gₐ = softmax over the top-{k} of Lₐ; zeros elsewhere; eⱼ = the expert in slot j"),
        });
        vec![logits, choose]
    }

    /// A mixture of attention heads' output: each slot's heads through its expert's output
    /// projection, weighted by the expert's gate, summed, plus the experts' shared bias.
    pub(super) fn moa_output(&mut self, m: Moa) -> Vec<Node> {
        let a = self.attn.clone();
        let (d, width) = (self.spec.hidden, a.kv_heads * a.v_head_dim);
        let concat = self.act(
            "Hⱼ",
            [
                Dim::Labeled(format!("{}×{}={width}", a.v_head_dim, a.kv_heads), width),
                Dim::Seq,
            ],
        );
        let cat = self.step(Draft {
            title: "Head concatenation (per slot)".into(),
            op: Op::Concat,
            category: Category::Attention,
            inputs: vec![],
            output: concat,
            operation: format!(
                "Stack slot j's {} heads (one per K/V group) into one {width}-dim vector per position",
                a.kv_heads
            ),
            equation: format!("Hⱼ = concat(H₀ⱼ … H_{}ⱼ)", a.kv_heads - 1),
        });
        let kept = self.experts.replace((m.experts, m.top_k));
        let proj = self.linear(Linear {
            role: Role::AttnExpertO,
            title: "Output projection (slot j's expert)".into(),
            w: "Wₒⱼ",
            out: "Yⱼ",
            input: "Hⱼ",
            rows: d,
            cols: width,
            stored_rows: d,
            block: None,
            bias: false,
            component: Component::Attention,
            category: Category::Attention,
            cached: false,
            operation: "Project the slot's heads back to the hidden size with its expert's output projection".into(),
        });
        self.experts = kept;
        let p = self.param(Role::AttnExperts, true, vec![d], Component::Attention, true);
        let bias = self.weight(p, "bₐ", [n(d), n(1)], None);
        let y = self.act("Y", self.seq(d));
        let combine = self.step(Draft {
            title: "Attention expert combination".into(),
            op: Op::Combine,
            category: Category::Attention,
            inputs: vec![bias],
            output: y,
            operation: format!("Sum the {} slots' outputs, each scaled by its expert's gate, and add the experts' shared bias", m.top_k),
            equation: "Y = Σⱼ Gₐ[eⱼ] · Yⱼ + bₐ".into(),
        }).at(Point::AttnExperts);
        let slots = self.scope(
            ScopeKind::Experts,
            "Slot j",
            "Slot end",
            m.top_k,
            vec![cat, proj],
        );
        vec![Node::Scope(slots), combine]
    }
}
