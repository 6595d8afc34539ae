//! Zamba2's shared transformer block: attention and a gated MLP over the stream beside the
//! token embeddings, the same weights in every layer that runs the block, each visit with its
//! own low-rank adapters; its output, projected by the layer's own matrix, feeds the mixer.

use super::build::{framed, Builder, Draft, Linear};
use super::*;
use crate::naming::Role;
use crate::spec::SharedBlocks;

/// Apply `f` to every step in `nodes`, inside frames too.
fn each_step(nodes: &mut [Node], f: &mut impl FnMut(&mut Step)) {
    for node in nodes {
        match node {
            Node::Step(s) => f(s),
            Node::Scope(s) => each_step(&mut s.children, f),
        }
    }
}

impl Builder<'_> {
    /// The block in the layers that run it, then its output added to the mixer's input there
    /// (`Xₘ`, the stream itself in the other layers).
    pub(super) fn shared_block(&mut self, s: &SharedBlocks) -> Vec<Node> {
        let spec = self.spec;
        let (d, wide, f) = (spec.hidden, 2 * spec.hidden, spec.mlp.intermediate);
        let (x0, xb) = (self.latest("X"), self.latest("Xᵦ"));
        let kept = std::mem::replace(&mut self.layers, s.layers.clone());
        // The block's own tensors sit under the first layer that runs it; each visit's
        // adapters under that layer too, by the visit's number (`SharedBlocks::place`).
        let sources = s.sources(spec.layers);
        self.param_layers = Some(sources.clone());
        let mut nodes = Vec::new();
        let xs = self.act("Xₛ", self.seq(wide));
        nodes.push(self.step(Draft {
            title: "Stream beside the embeddings".into(),
            op: Op::Concat,
            category: Category::Attention,
            inputs: vec![xb, x0],
            output: xs,
            operation: "Set the token embeddings beside the stream: the block reads both, every time it runs".into(),
            equation: format!("Xₛ = [Xᵦ; X]  ({d} + {d} = {wide} features)"),
        }));
        nodes.push(self.norm_step(
            &format!("Shared block {}", self.norm_name()),
            Role::SharedNorm,
            "γₛ",
            "Xₛ",
            "Xₛ′",
            wide,
            true,
            None,
        ));
        let qkv: &[(&str, Role, Role)] = if s.attn_adapters {
            &[
                ("Q", Role::QAdapterA, Role::QAdapterB),
                ("K", Role::KAdapterA, Role::KAdapterB),
                ("V", Role::VAdapterA, Role::VAdapterB),
            ]
        } else {
            &[]
        };
        let mut deltas = Vec::new();
        self.param_layers = None;
        for &(letter, a, b) in qkv {
            let (adapter, delta) = self.adapter(letter, a, b, "Xₛ′", wide, wide, s.adapter_rank);
            nodes.extend(adapter);
            deltas.push((format!("{letter} projection"), letter.to_string(), delta));
        }
        self.param_layers = Some(sources.clone());
        self.attn_in = wide;
        let mut attn = self.attention_any("Xₛ′");
        self.attn_in = d;
        joined(&mut attn, &deltas, "this head's rows");
        nodes.extend(attn);
        nodes.push(self.norm_step(
            &format!("Shared block MLP {}", self.norm_name()),
            Role::SharedFfnNorm,
            "γₘ",
            "Y",
            "Y′",
            d,
            true,
            None,
        ));
        // Zamba2's visits adapt the fused gate/up projection; Zamba's have no adapters.
        let mut gu = Vec::new();
        if s.adapter_rank > 0 {
            self.param_layers = None;
            let (adapter, delta) = self.adapter(
                "GU",
                Role::GateUpAdapterA,
                Role::GateUpAdapterB,
                "Y′",
                d,
                2 * f,
                s.adapter_rank,
            );
            nodes.extend(adapter);
            gu = vec![
                ("Gate projection".to_string(), "GU".to_string(), delta),
                ("Up projection".to_string(), "GU".to_string(), delta),
            ];
        }
        self.param_layers = Some(sources);
        let mut mlp = self.ffn_steps(super::ffn::Kind::Dense, f, "Y′", "", "M");
        joined(&mut mlp, &gu, "the rows this projection reads");
        nodes.extend(mlp);
        self.param_layers = None;
        nodes.push(self.linear(Linear::whole(
            Role::SharedLinear,
            "Block output projection",
            ["Wₛ", "Yₛ", "M"],
            d,
            d,
            Category::Attention,
            "Project the block's output with this layer's own matrix (not shared)".into(),
        )));
        let framed_block = framed(
            ScopeKind::Shared,
            "Shared transformer block",
            "Shared block end",
            s.layers.clone(),
            nodes,
        );
        let (out, xb) = (self.tensors.len() - 1, self.latest("Xᵦ"));
        let xm = self.act("Xₘ", self.seq(d));
        let mut add = self.step(Draft {
            title: format!("Block output into the mixer's input ({} of {} layers)", s.layers.len(), spec.layers),
            op: Op::Add,
            category: Category::Norm,
            inputs: vec![xb, out],
            output: xm,
            operation: "Add the block's output to what the mixer reads, not to the stream: the residual below adds the mixer's output to Xᵦ".into(),
            equation: "Xₘ = Xᵦ + Yₛ; Xₘ = Xᵦ in the other layers".into(),
        });
        if let Node::Step(st) = &mut add {
            st.layers = Some(s.layers.clone());
        }
        self.layers = kept;
        vec![framed_block, add]
    }

    /// A visit's low-rank adapter on a projection reading `input` (`cols` wide) to `rows`
    /// outputs: Δ = B · (A · input), A `rank` × cols, B rows × `rank`. Returns its steps and Δ.
    #[allow(clippy::too_many_arguments)]
    fn adapter(
        &mut self,
        letter: &str,
        a: Role,
        b: Role,
        input: &str,
        cols: u64,
        rows: u64,
        rank: u64,
    ) -> (Vec<Node>, usize) {
        let (wa, wb) = (format!("A{letter}"), format!("B{letter}"));
        let (low, delta) = (format!("L{letter}"), format!("Δ{letter}"));
        let category = if letter == "GU" {
            Category::Ffn
        } else {
            Category::Attention
        };
        let lin = |role, title, names, rows, cols, operation| {
            Linear::whole(role, title, names, rows, cols, category, operation)
        };
        let what = if letter == "GU" { "gate/up" } else { letter };
        let down = self.linear(lin(
            a,
            format!("{what} adapter down"),
            [&wa, &low, input],
            rank,
            cols,
            format!("This visit's own adapter: {cols} features down to rank {rank}"),
        ));
        let up = self.linear(lin(
            b,
            format!("{what} adapter up"),
            [&wb, &delta, &low],
            rows,
            rank,
            format!("Back up to the {rows} outputs of the shared {what} projection"),
        ));
        (vec![down, up], self.tensors.len() - 1)
    }
}

/// The projection steps titled as in `deltas` read their adapter's Δ too.
fn joined(nodes: &mut [Node], deltas: &[(String, String, usize)], rows: &str) {
    each_step(nodes, &mut |st| {
        if let Some((_, letter, delta)) = deltas.iter().find(|(t, _, _)| st.title == *t) {
            st.inputs.push(*delta);
            st.equation += &format!(" + Δ{letter} ({rows})");
            st.operation += ", plus this visit's adapter";
        }
    });
}
