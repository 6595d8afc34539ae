//! Inkling 2's block attention residuals: each layer's sublayers read a learned mix of the block
//! summaries so far and the stream, and the stream restarts at every block's first layer.

use super::build::{framed, n, only_in, Builder, Draft};
use super::*;
use crate::layers::LayerSet;
use crate::naming::Role;
use crate::spec::AttnRes;

impl Builder<'_> {
    fn attn_res(&self) -> AttnRes {
        self.spec
            .attn_res()
            .expect("block attention residual steps are built for a Spec that has them")
    }

    /// A mix of the block summaries Bₛ and `stream` by query `q` (row `row` of the layer's
    /// queries where it has several) into `out`. The head's query is the model's, the others
    /// each layer's.
    fn res_mix(
        &mut self,
        title: &str,
        role: Role,
        shape: Vec<u64>,
        row: Option<usize>,
        stream: &str,
        out: &str,
    ) -> Node {
        let (r, d) = (self.attn_res(), self.spec.hidden);
        let per_layer = role != Role::HeadResQuery;
        let p = self.param(role, false, shape, Component::Norm, per_layer);
        let q = self.weight(p, "q", [n(d), n(1)], row.map(|i| format!("[{i}]")));
        // The head reads the last block's output, drawn as Xₗ.
        let read = if stream == "Xₗ" {
            "Xᵦ₊₁"
        } else {
            stream
        };
        let (b, x) = (self.latest("Bₛ"), self.latest(read));
        let o = self.act(out, self.seq(d));
        self.step(Draft {
            title: title.into(),
            op: Op::Combine,
            category: Category::Norm,
            inputs: vec![q, b, x],
            output: o,
            operation: format!("Mix the block summaries so far and {stream}, each normalized, by how well each matches a learned query"),
            equation: format!(
                "{out} = Σᵢ softmaxᵢ(q · nᵢ / √{d}) nᵢ over n = rms([Bₛ; {stream}]) (no weight, ε = {})",
                r.eps
            ),
        })
    }

    /// Inkling 2 Loop: the messages of the pass before, for the looped layers of the current
    /// scope (their query, key, value and FFN inputs' mixes of that pass's summaries).
    fn messages(&mut self) -> Node {
        let (r, d) = (self.attn_res(), self.spec.hidden);
        let l = r.looped.expect("messages are built for a loop");
        let n_loop = l.end - l.start;
        let mut inputs = Vec::new();
        for (role, w) in [(Role::MsgQueries, "q_qm"), (Role::MsgKvQueries, "q_kv")] {
            let p = self.param(role, false, vec![2 * n_loop, d], Component::Norm, false);
            inputs.push(self.weight(
                p,
                w,
                [n(d), n(2)],
                Some(format!("[2*(b-{s}):2*(b-{s})+2, :]", s = l.start)),
            ));
        }
        let o = self.act("Mₚ", self.seq(4 * d));
        self.step(Draft {
            title: "Messages of the pass before".into(),
            op: Op::Combine,
            category: Category::Norm,
            inputs,
            output: o,
            operation: format!("From the second of {} passes: four mixes of the summaries the pass before added (after its first) and its output, by this layer's four learned queries, one each for its query, key, value and FFN inputs", l.passes),
            equation: format!("Mₚ,ᵢ = Σⱼ softmaxⱼ(qᵢ · nⱼ / √{d}) nⱼ over n = rms([Bₛ of the pass before; X of the pass before]), i ∈ (q, k, v, FFN)"),
        })
    }

    /// A message gate on `x`: x ← (1 − tanh(W_f g)) ⊙ x + tanh(W_m g) ⊙ m, g = W_d · [rms(x); rms(m)].
    fn message_gate(&mut self, what: &str, roles: [Role; 3], x: &str) -> Node {
        let (r, d) = (self.attn_res(), self.spec.hidden);
        let rank = r.looped.map_or(1, |l| l.rank);
        let mut inputs = Vec::new();
        for (role, shape, w) in [
            (roles[0], vec![rank, 2 * d], "W_d"),
            (roles[1], vec![d, rank], "W_f"),
            (roles[2], vec![d, rank], "W_m"),
        ] {
            let dims = [n(shape[0]), n(shape[1])];
            let p = self.param(role, false, shape, Component::Norm, true);
            inputs.push(self.weight(p, w, dims, None));
        }
        let o = self.act(x, self.seq(d));
        self.step(Draft {
            title: format!("{what} message gate"),
            op: Op::Combine,
            category: Category::Norm,
            inputs,
            output: o,
            operation: format!("From the second pass: let the {what} input forget a learned share of itself and take in its message, by a gate of rank {rank} read from both"),
            equation: format!("{x} = (1 − tanh(W_f g)) ⊙ {x} + tanh(W_m g) ⊙ m, g = W_d · [rms({x}); rms(m)], m its message; in the first pass {x} as it is"),
        })
    }

    pub(super) fn attn_res_block(&mut self) -> Scope {
        let spec = self.spec;
        let (r, d) = (self.attn_res(), spec.hidden);
        let norm = self.norm_name();
        let mut children = Vec::new();
        let (xb, input) = self.block_input(d, "Route hidden state into block".into());
        children.push(input);
        // Inkling 2 Loop: the messages' queries, stored whether or not a layer of the section
        // exists, sized by the section.
        if let Some(l) = r.looped {
            for role in [Role::MsgQueries, Role::MsgKvQueries] {
                self.param(
                    role,
                    false,
                    vec![2 * (l.end - l.start), d],
                    Component::Norm,
                    false,
                );
            }
        }
        let bs = self.act("Bₛ", self.seq(d));
        children.push(self.step(Draft {
            title: "Block summaries".into(),
            op: Op::Route,
            category: Category::Norm,
            inputs: vec![],
            output: bs,
            operation: format!(
                "The summaries of the blocks so far: the stream as it entered each block's first layer (every {} layers), one {d}-vector each per position",
                r.block
            ),
            equation: format!(
                "Bₛ = [X₀; X₍{}₎; …], the inputs of the layers b with b mod {} = 0 before this one (none in layer 0)",
                r.block, r.block
            ),
        }));
        for (a, set) in spec.attn_variants() {
            self.attn = a.clone();
            self.layers = set.clone();
            let mixed = LayerSet::from_fn(spec.layers, |b| set.contains(b) && b > 0);
            let mut nodes = Vec::new();
            let x_in = if a.kv_inputs {
                // Three mixes, normed each: the queries', the keys' and the values' inputs.
                let mut mixes = Vec::new();
                self.layers = mixed.clone();
                for (i, which) in ["Xq", "Xk", "Xv"].iter().enumerate() {
                    let title = format!("{} input mix", ["Query", "Key", "Value"][i]);
                    mixes.push(self.res_mix(
                        &title,
                        Role::AttnResQuery,
                        vec![3, d],
                        Some(i),
                        "Xᵦ",
                        which,
                    ));
                }
                self.layers = set.clone();
                if mixed.len() != set.len() {
                    only_in(&mut mixes, &mixed, spec.layers);
                }
                nodes.extend(mixes);
                nodes.extend(
                    self.looped_gates(&set, &[("Query", "Xq"), ("Key", "Xk"), ("Value", "Xv")]),
                );
                for (role, which, normed) in [
                    (Role::QInNorm, "Xq", "Xq′"),
                    (Role::KInNorm, "Xk", "Xk′"),
                    (Role::VInNorm, "Xv", "Xv′"),
                ] {
                    let title = format!("{which} {norm}");
                    nodes.push(self.norm_step(&title, role, "γ", which, normed, d, true, None));
                }
                self.kv_in = Some(["Xk′".to_string(), "Xv′".to_string()]);
                "Xq′"
            } else {
                self.layers = mixed.clone();
                let mut mix = vec![self.res_mix(
                    "Attention input mix",
                    Role::AttnResQuery,
                    vec![d],
                    None,
                    "Xᵦ",
                    "Xₐ",
                )];
                self.layers = set.clone();
                if mixed.len() != set.len() {
                    only_in(&mut mix, &mixed, spec.layers);
                    if let Some(Node::Step(s)) = mix.first_mut() {
                        s.equation += "; Xₐ = Xᵦ in layer 0";
                    }
                }
                nodes.extend(mix);
                // A looped sliding layer's K and V read gated inputs of their own from the second
                // pass on, all normed by the attention's norm.
                nodes.extend(
                    self.looped_gates(&set, &[("Query", "Xₐ"), ("Key", "Xₐ"), ("Value", "Xₐ")]),
                );
                let title = format!("Attention {norm}");
                nodes.push(
                    self.norm_step(&title, Role::AttnNorm, "γ", "Xₐ", "Xᵦ′", d, true, None)
                        .at(Point::AttnNorm),
                );
                "Xᵦ′"
            };
            nodes.extend(self.attention_any(x_in));
            self.kv_in = None;
            let what = if a.kv_inputs {
                "Full attention"
            } else {
                "Sliding-window attention"
            };
            children.push(framed(
                ScopeKind::Attention,
                what,
                "Attention end",
                set,
                nodes,
            ));
        }
        self.layers = self.all_layers();
        if let Some(c) = spec.out_conv {
            children.extend(self.out_conv(Role::AttnOutConv, "Attention", "Y", c));
        }
        let starts = LayerSet::from_fn(spec.layers, |b| b % r.block == 0);
        let y = self.latest("Y");
        let rr = self.act("R", self.seq(d));
        children.push(self.step(Draft {
            title: "Attention residual".into(),
            op: Op::Add,
            category: Category::Norm,
            inputs: vec![xb, y],
            output: rr,
            operation: format!("Add the attention's output to the stream, except at a block's first layer (every {} layers), where the stream restarts from it and the block's input becomes a summary", r.block),
            equation: format!("R = Y and Bₛ = [Bₛ; Xᵦ] in layers {starts}; R = Xᵦ + Y elsewhere"),
        }).at(Point::ResidAttn));
        children.push(self.res_mix("MLP input mix", Role::FfnResQuery, vec![d], None, "R", "Xₘ"));
        let all = self.all_layers();
        children.extend(self.looped_gates(&all, &[("FFN", "Xₘ")]));
        self.layers = self.all_layers();
        let title = format!("MLP {norm}");
        children.push(
            self.norm_step(&title, Role::FfnNorm, "γ′", "Xₘ", "R′", d, true, None)
                .at(Point::FfnNorm),
        );
        children.push(Node::Scope(self.moe("R′")));
        if let Some(c) = spec.out_conv {
            children.extend(self.out_conv(Role::FfnOutConv, "MLP", "M", c));
        }
        let (rt, m) = (self.latest("R"), self.latest("M"));
        let out = self.act("Xᵦ₊₁", self.seq(d));
        children.push(
            self.step(Draft {
                title: "MLP residual".into(),
                op: Op::Add,
                category: Category::Norm,
                inputs: vec![rt, m],
                output: out,
                operation:
                    "Add the FFN output to the attention residual; this is the block's output"
                        .into(),
                equation: "Xᵦ₊₁ = R + M".into(),
            })
            .at(Point::ResidFfn),
        );
        self.block_scope(children)
    }

    /// The message steps of the looped layers in `set` (Inkling 2 Loop): the messages once, then
    /// a gate on each named input; nothing without a loop.
    fn looped_gates(&mut self, set: &LayerSet, inputs: &[(&str, &str)]) -> Vec<Node> {
        let Some(l) = self.attn_res().looped else {
            return Vec::new();
        };
        let here = LayerSet::from_fn(self.spec.layers, |b| set.contains(b) && l.contains(b));
        if here.is_empty() {
            return Vec::new();
        }
        let kept = std::mem::replace(&mut self.layers, here.clone());
        let mut nodes = Vec::new();
        if inputs.len() > 1 {
            nodes.push(self.messages());
        }
        for &(what, x) in inputs {
            let roles = match what {
                "Query" => [Role::MsgQDown, Role::MsgQForget, Role::MsgQGain],
                "Key" => [Role::MsgKDown, Role::MsgKForget, Role::MsgKGain],
                "Value" => [Role::MsgVDown, Role::MsgVForget, Role::MsgVGain],
                "FFN" => [Role::MsgFfnDown, Role::MsgFfnForget, Role::MsgFfnGain],
                other => unreachable!("no message gate on the {other} input"),
            };
            nodes.push(self.message_gate(what, roles, x));
        }
        only_in(&mut nodes, &here, self.spec.layers);
        self.layers = kept;
        nodes
    }

    /// Before the final norm: the head's own mix of the block summaries and the stream.
    pub(super) fn attn_res_head(&mut self, stream: &str, out: &str) -> Node {
        let d = self.spec.hidden;
        self.res_mix(
            "Head input mix",
            Role::HeadResQuery,
            vec![d],
            None,
            stream,
            out,
        )
    }
}
