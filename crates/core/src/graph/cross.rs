//! Cross-attention layers (Mllama), drawn after the decoder block in the layers that hold one.
//! Their queries come from the text, their keys and values from the vision encoder's states; a
//! prompt without an image skips these layers whole, so their steps cost a text token nothing
//! (`ScopeKind::CrossAttention`), while their weights count like any layer's.

use super::build::{n, Builder, Draft, Linear};
use super::ffn::Kind;
use super::*;
use crate::naming::Role;

impl Builder<'_> {
    pub(super) fn cross_attention(&mut self, layers: LayerSet) -> Scope {
        let spec = self.spec;
        let a = &spec.attn;
        let (d, h, kv, hd) = (spec.hidden, a.heads, a.kv_heads, a.head_dim);
        self.layers = layers.clone();
        self.apart = true;
        let mut nodes = Vec::new();
        let x = self.act("Xᵦ", self.seq(d));
        nodes.push(self.step(Draft {
            title: "Cross-attention layer input".into(),
            op: Op::Route,
            category: Category::Norm,
            inputs: vec![],
            output: x,
            operation: "The stream, in the layers that cross-attend to the image".into(),
            equation: "Xᵦ = output of block b−1".into(),
        }));
        nodes.push(self.norm_step(
            &format!("Cross-attention {}", self.norm_name()),
            Role::AttnNorm,
            "γ",
            "Xᵦ",
            "Xᵦ′",
            d,
            true,
            None,
        ));
        let img = self.act("Vᵢ", self.seq(d));
        nodes.push(self.step(Draft {
            title: "Image states".into(),
            op: Op::Route,
            category: Category::Attention,
            inputs: vec![],
            output: img,
            operation: "The vision encoder's output for the image, projected to the text width: one state per patch of each tile (the sequence here is the image's, not the text's)".into(),
            equation: "Vᵢ = projector(vision tower(image))".into(),
        }));
        let lin = |role, title, names, rows, op| {
            Linear::whole(role, title, names, rows, d, Category::Attention, op)
        };
        nodes.push(self.linear(lin(
            Role::CrossQ,
            "Cross-attention Q projection",
            ["W_q", "Q", "Xᵦ′"],
            h * hd,
            format!("Project the text to {h} query heads of {hd}"),
        )));
        nodes.push(self.norm_step(
            "Cross-attention Q RMSNorm",
            Role::CrossQNorm,
            "γq",
            "Q",
            "Qₙ",
            hd,
            true,
            None,
        ));
        nodes.push(self.linear(lin(
            Role::CrossK,
            "Cross-attention K projection",
            ["W_k", "K", "Vᵢ"],
            kv * hd,
            format!("Project the image states to {kv} key heads of {hd}"),
        )));
        nodes.push(self.norm_step(
            "Cross-attention K RMSNorm",
            Role::CrossKNorm,
            "γk",
            "K",
            "Kₙ",
            hd,
            true,
            None,
        ));
        nodes.push(self.linear(lin(
            Role::CrossV,
            "Cross-attention V projection",
            ["W_v", "V", "Vᵢ"],
            kv * hd,
            format!("Project the image states to {kv} value heads of {hd}"),
        )));
        let att = self.act("H", self.seq(h * hd));
        nodes.push(self.step(Draft {
            title: "Cross-attention".into(),
            op: Op::WeightedSum { dim: hd },
            category: Category::Attention,
            inputs: vec![],
            output: att,
            operation: format!("Each text position attends over every image state, no causal mask ({h} query heads sharing {kv} K/V heads)"),
            equation: format!("H = softmax(Qₙ Kₙᵀ / √{hd}) V, per head, over the image's states"),
        }));
        nodes.push(self.linear(Linear::whole(
            Role::CrossO,
            "Cross-attention output projection",
            ["W_o", "Y", "H"],
            d,
            h * hd,
            Category::Attention,
            "Project the heads back to the stream".into(),
        )));
        let r = self.gated_add(Role::CrossAttnGate, "g_a", "R", "Xᵦ", "Y", "attention");
        nodes.push(r);
        nodes.push(self.norm_step(
            &format!("Cross-attention layer FFN {}", self.norm_name()),
            Role::FfnNorm,
            "γ′",
            "R",
            "R′",
            d,
            true,
            None,
        ));
        nodes.extend(self.ffn_steps(Kind::Dense, spec.mlp.intermediate, "R′", "", "M"));
        nodes.push(self.gated_add(Role::CrossMlpGate, "g_m", "Xᵦ₊₁", "R", "M", "MLP"));
        self.layers = self.all_layers();
        self.apart = false;
        let mut scope = self.scope(
            ScopeKind::CrossAttention,
            &format!("Cross-attention layer (layers {layers}; skipped on text alone)"),
            "Cross-attention end",
            layers.len(),
            nodes,
        );
        scope.layers = Some(layers);
        scope
    }

    /// out = stream + tanh(g) · y, g a stored scalar of the layer (0 when initialized: the layer
    /// starts as the identity).
    fn gated_add(
        &mut self,
        role: Role,
        g: &str,
        out: &str,
        stream: &str,
        y: &str,
        what: &str,
    ) -> Node {
        let p = self.param(role, false, vec![1], Component::Attention, true);
        let gw = self.weight(p, g, [n(1), n(1)], None);
        let o = self.act(out, self.seq(self.spec.hidden));
        self.step(Draft {
            title: format!("Gated {what} residual"),
            op: Op::Add,
            category: Category::Norm,
            inputs: vec![gw],
            output: o,
            operation: format!("Add the {what}'s output through a learned tanh gate, one scalar per layer: a layer trained from 0 starts as the identity"),
            equation: format!("{out} = {stream} + tanh({g}) · {y}"),
        })
    }
}
