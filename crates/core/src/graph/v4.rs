//! DeepSeek-V4's attention: a latent query, one key-and-value head over a sliding window, the
//! compressors (and the compressed sparse layers' indexer) that add long-range entries, the
//! heads, and the grouped low-rank output projection.

use super::attention::lin;
use super::build::{n, Builder, Draft};
use super::*;
use crate::naming::Role;
use crate::spec::V4Attn;

/// What one compressor's steps are called: its tensors' roles (parts, gates, bias, norm), its
/// two weights' and its tensors' names, and what it makes.
struct Compressor {
    roles: [Role; 4],
    weights: [&'static str; 2],
    what: &'static str,
    row: &'static str,
    parts: &'static str,
    gates: &'static str,
    bias: &'static str,
    pooled: &'static str,
    gamma: &'static str,
    normed: &'static str,
    out: &'static str,
}

/// The attention's compressor: its entries.
const ENTRIES: Compressor = Compressor {
    roles: [Role::CompKv, Role::CompGate, Role::CompBias, Role::CompNorm],
    weights: ["W_c", "W_z"],
    what: "Entry",
    row: "entry",
    parts: "C",
    gates: "Z",
    bias: "B",
    pooled: "Cₚ",
    gamma: "γc",
    normed: "Cₙ",
    out: "Cᶜ",
};

/// The indexer's: its keys.
const INDEX_KEYS: Compressor = Compressor {
    roles: [
        Role::IndexCompKv,
        Role::IndexCompGate,
        Role::IndexCompBias,
        Role::IndexCompNorm,
    ],
    weights: ["W_ci", "W_zi"],
    what: "Indexer key",
    row: "indexer key",
    parts: "Cᵢ",
    gates: "Zᵢ",
    bias: "Bᵢ",
    pooled: "Kᵢₚ",
    gamma: "γkᵢ",
    normed: "Kᵢₙ",
    out: "Kᵢ",
};

impl Builder<'_> {
    fn v4(&self) -> V4Attn {
        self.attn.v4.clone().expect("DeepSeek-V4 attention")
    }

    /// An RMSNorm step of the attention (with a weight at the model's ε).
    fn attn_norm(
        &mut self,
        title: &str,
        role: Role,
        gamma: &str,
        io: (&str, &str),
        dim: u64,
    ) -> Node {
        let norm = self.spec.norm.clone();
        let mut node = self.norm_step_as(&norm, title, role, gamma, io.0, io.1, dim, true, None);
        if let Node::Step(s) = &mut node {
            s.category = Category::Attention;
        }
        node
    }

    pub(super) fn v4_attention(&mut self, x_in: &str) -> Vec<Node> {
        let v = self.v4();
        let a = self.attn.clone();
        let (d, h, hd, ql, r) = (
            self.spec.hidden,
            a.heads,
            a.head_dim,
            v.q_lora_rank,
            v.rope_dim,
        );
        let norm = self.spec.norm.clone();
        let mut nodes = Vec::from(self.q_latent(x_in, ql, false, &norm));
        nodes.push(self.linear(lin(
            Role::V4Kv,
            "Key-and-value projection",
            "Wkv",
            "KV",
            x_in,
            hd,
            d,
            hd,
            None,
                false,
            format!("Project the input to one {hd}-dim head that is both key and value for every query head"),
            )));
        nodes.push(self.attn_norm(
            "Key-and-value RMSNorm",
            Role::V4KvNorm,
            "γkv",
            ("KV", "KV′"),
            hd,
        ));
        let kv = self.cached("KVᵣ", self.seq(hd));
        nodes.push(self.step(Draft {
            title: "Key-and-value rotary position encoding".into(),
            op: Op::Rope,
            category: Category::Attention,
            inputs: vec![],
            output: kv,
            operation: format!("Rotate the last {r} dims by position (interleaved pairs); the values rotate with the keys"),
            equation: format!("KVᵣ = [KV′[:{}], RoPE(KV′[{}:], pos)], {}", hd - r, hd - r, self.v4_rope_text(&v)),
        }));
        for (set, m, sparse) in [
            (v.csa.0.clone(), v.csa.1, true),
            (v.hca.0.clone(), v.hca.1, false),
        ] {
            if set.is_empty() {
                continue;
            }
            let all = std::mem::replace(&mut self.layers, set.clone());
            let mut steps = self.compressor(x_in, hd, m, sparse, &ENTRIES);
            if sparse {
                steps.extend(self.v4_indexer(x_in, m, &v));
            }
            self.layers = all;
            let what = if sparse {
                "Compressed sparse attention"
            } else {
                "Heavily compressed attention"
            };
            let mut scope = self.scope(
                ScopeKind::Compressor,
                &format!("{what}: compressor (layers {set})"),
                "Compressor end",
                1,
                steps,
            );
            scope.layers = Some(set);
            nodes.push(Node::Scope(scope));
        }

        let mut head = vec![self
            .linear(lin(
                Role::QB,
                "Q projection",
                "Wq",
                "Q",
                "Cq′",
                hd,
                ql,
                h * hd,
                Some(format!("{hd}*j:{hd}*(j+1)")),
                false,
                format!("Expand the latent to this head's {hd}-dim query"),
            ))
            .at(Point::QProj)];
        let q_norm = self.act("Q′", self.seq(hd));
        head.push(
            self.step(Draft {
                title: "Q RMSNorm (no weight)".into(),
                op: Op::Norm,
                category: Category::Attention,
                inputs: vec![],
                output: q_norm,
                operation: "Scale this head's query to unit RMS".into(),
                equation: format!("Q′ = Q / √(mean(Q²) + ε), ε = {}", self.spec.norm.eps),
            })
            .at(Point::QNorm),
        );
        let qr = self.act("Qᵣ", self.seq(hd));
        head.push(
            self.step(Draft {
                title: "Q rotary position encoding".into(),
                op: Op::Rope,
                category: Category::Attention,
                inputs: vec![],
                output: qr,
                operation: format!("Rotate the last {r} dims of Q by position"),
                equation: format!("Qᵣ = [Q′[:{}], RoPE(Q′[{}:], pos)]", hd - r, hd - r),
            })
            .at(Point::Q),
        );
        let keys = self.act("[KVᵣ; Cᶜ]ᵀ", [Dim::Seq, n(hd)]);
        let s = self.act("S", [Dim::Seq, Dim::Seq]);
        let w = self.spec.v4_window();
        head.push(self.step(Draft {
            title: "Attention scores".into(),
            op: Op::Scores { dim: hd },
            category: Category::Attention,
            inputs: vec![keys],
            output: s,
            operation: "Score the query against the keys of the window and, in compressed layers, the compressed entries".into(),
            equation: format!("S = Qᵣ · [KVᵣ; Cᶜ]ᵀ / √{hd}: the last {w} keys, then the entries of windows that closed by this position (those the indexer kept, in compressed sparse layers)"),
        }));
        let p = self.param(Role::Sinks, false, vec![h], Component::Attention, true);
        let sink = self.weight(p, "σₛ", [n(1), n(1)], Some("[j]".into()));
        let att = self.act("A", [Dim::Seq, Dim::Seq]);
        head.push(self.step(Draft {
            title: "Causal softmax".into(),
            op: Op::Softmax,
            category: Category::Attention,
            inputs: vec![sink],
            output: att,
            operation: "Normalize each query's scores to weights, with this head's learned sink as an extra key".into(),
            equation: "A = softmax([S, σₛ]) over the keys and the sink, then the sink dropped".into(),
        }));
        let o = self.act("Hⱼ′", self.seq(hd));
        head.push(self.step(Draft {
            title: "Weighted value aggregation".into(),
            op: Op::WeightedSum { dim: hd },
            category: Category::Attention,
            inputs: vec![kv],
            output: o,
            operation: "Mix the key-and-value vectors (the values are the keys) by the attention weights".into(),
            equation: "Hⱼ′ = A · [KVᵣ; Cᶜ]".into(),
        }));
        let out = self.act("Hⱼ", self.seq(hd));
        head.push(self.step(Draft {
            title: "Output inverse rotary encoding".into(),
            op: Op::Rope,
            category: Category::Attention,
            inputs: vec![],
            output: out,
            operation: format!("Rotate the output's last {r} dims back by the query's position: each value then enters by its distance to the query"),
            equation: format!("Hⱼ = [Hⱼ′[:{}], RoPE(Hⱼ′[{}:], −pos)]", hd - r, hd - r),
        }));
        nodes.push(Node::Scope(self.scope(
            ScopeKind::Head,
            "Attention Head j",
            "Head end",
            h,
            head,
        )));
        nodes.extend(self.grouped_output(&v));
        nodes
    }

    fn v4_rope_text(&self, v: &V4Attn) -> String {
        let main = self.rope_text();
        if v.csa.0.is_empty() && v.hca.0.is_empty() {
            return main;
        }
        let f = &v.compress_freqs;
        let scaling = f.scaling.describe();
        format!(
            "{main} in sliding layers; θ = {}{} in compressed layers",
            crate::fmt::float(f.theta),
            if scaling.is_empty() {
                String::new()
            } else {
                format!(", {scaling}")
            }
        )
    }

    /// The last tensor drawn holds one row per closed window of m tokens (a norm's output,
    /// drawn per token by the norm step).
    fn per_window(&mut self, m: u64) {
        if let Some(t) = self.tensors.last_mut() {
            t.dims[1] = Dim::Windows(m);
        }
    }

    /// A compressor: each token's entry part and gate; each closed window of m tokens pooled
    /// into one row (the overlapping form reads the window before too), normed and rotated at
    /// the window's first position, cached: the attention's entries or its indexer's keys.
    fn compressor(
        &mut self,
        x_in: &str,
        dim: u64,
        m: u64,
        overlap: bool,
        c: &Compressor,
    ) -> Vec<Node> {
        let d = self.spec.hidden;
        let width = if overlap { 2 * dim } else { dim };
        let mut nodes = vec![];
        for (role, title, w, out, what) in [
            (c.roles[0], "projection", c.weights[0], c.parts, "part"),
            (c.roles[1], "gate projection", c.weights[1], c.gates, "gate"),
        ] {
            nodes.push(self.linear(lin(
                role,
                &format!("{} {title}", c.what),
                w,
                out,
                x_in,
                width,
                d,
                width,
                None,
                false,
                if overlap {
                    format!("Project each token to two {dim}-dim {what}s: one for its own window's {}, one for the next window's", c.row)
                } else {
                    format!("Project each token to its {dim}-dim {what}")
                },
            )));
        }
        let p = self.param(
            c.roles[2],
            false,
            vec![m, width],
            Component::Attention,
            true,
        );
        let bias = self.weight(p, c.bias, [n(m), n(width)], None);
        let parts = self.latest(c.parts);
        let pooled = self.act(c.pooled, [n(dim), Dim::Windows(m)]);
        let (pp, gg, bb, out) = (c.parts, c.gates, c.bias, c.pooled);
        nodes.push(self.step(Draft {
            title: format!("{} window pooling", c.what),
            op: Op::Combine,
            category: Category::Attention,
            inputs: vec![parts, bias],
            output: pooled,
            operation: if overlap {
                format!("Pool each window of {m} tokens and the window before it into one {}: a softmax over the {} slots weighs the parts, feature by feature", c.row, 2 * m)
            } else {
                format!("Pool each window of {m} tokens into one {}: a softmax over its {m} slots weighs the parts, feature by feature", c.row)
            },
            equation: if overlap {
                format!("{out}[w] = Σ softmax([{gg}_a[w−1] + {bb}_a; {gg}_b[w] + {bb}_b]) ⊙ [{pp}_a[w−1]; {pp}_b[w]] over 2·{m} slots, {pp} = [{pp}_a | {pp}_b]; one per closed window")
            } else {
                format!("{out}[w] = Σ softmax({gg}[w] + {bb}) ⊙ {pp}[w] over the window's {m} slots; one per closed window")
            },
        }));
        let mut norm = self.norm_step_as(
            &self.spec.norm.clone(),
            &format!("{} RMSNorm", c.what),
            c.roles[3],
            c.gamma,
            c.pooled,
            c.normed,
            dim,
            true,
            None,
        );
        if let Node::Step(s) = &mut norm {
            s.category = Category::Attention;
        }
        nodes.push(norm);
        self.per_window(m);
        let rows = self.cached(c.out, [n(dim), Dim::Windows(m)]);
        nodes.push(self.step(Draft {
            title: format!("{} rotary position encoding", c.what),
            op: Op::Rope,
            category: Category::Attention,
            inputs: vec![],
            output: rows,
            operation: format!(
                "Rotate each {}'s last dims by its window's first position",
                c.row
            ),
            equation: format!(
                "{}[w] = RoPE({}[w], {m}·w), cached: one per {m} tokens",
                c.out, c.normed
            ),
        }));
        nodes
    }

    /// The compressed sparse layers' indexer: its own overlapping compressor at its head size,
    /// queries from the query latent, ReLU scores weighted per head, the top k entries kept.
    fn v4_indexer(&mut self, x_in: &str, m: u64, v: &V4Attn) -> Vec<Node> {
        let d = self.spec.hidden;
        let ix = v.index;
        let (ih, id) = (ix.heads, ix.head_dim);
        let mut nodes = self.compressor(x_in, id, m, true, &INDEX_KEYS);
        nodes.push(self.linear(lin(
            Role::IndexQ,
            "Indexer query projection",
            "Wqᵢ",
            "Qᵢ",
            "Cq′",
            ih * id,
            v.q_lora_rank,
            ih * id,
            None,
            false,
            format!("Project the query latent to the indexer's {ih} heads of {id} dims, then rotate their last dims by position"),
        )));
        nodes.push(
            self.linear(lin(
                Role::IndexWeights,
                "Indexer head weights",
                "W_w",
                "Wᵢ",
                x_in,
                ih,
                d,
                ih,
                None,
                false,
                format!("Project the input to one weight per indexer head, scaled by 1/√{ih}"),
            ))
            .at(Point::IndexWeights),
        );
        let (q, wts) = (self.latest("Qᵢ"), self.latest("Wᵢ"));
        let scores = self.act("Sᵢ", [Dim::Windows(m), Dim::Seq]);
        nodes.push(self.step(Draft {
            title: "Indexer scores".into(),
            op: Op::Scores { dim: ih * id },
            category: Category::Attention,
            inputs: vec![q, wts],
            output: scores,
            operation: "Score every closed window's entry for each query".into(),
            equation: format!("Sᵢ[t, w] = Σₕ Wᵢ[t, h] · ReLU(RoPE(Qᵢ)[t, h] · Kᵢ[w]) / √{id}"),
        }));
        let keep = self.act("Mᵢₓ", [n(ix.top_k), Dim::Seq]);
        nodes.push(self.step(Draft {
            title: format!("Top-{} entries", ix.top_k),
            op: Op::Select { k: ix.top_k },
            category: Category::Attention,
            inputs: vec![],
            output: keep,
            operation: format!(
                "Keep each query's {} best entries among the windows closed by its position",
                ix.top_k
            ),
            equation: format!("Mᵢₓ = top-{}(Sᵢ[t, w] for w < (t + 1) / {m})", ix.top_k),
        }));
        nodes
    }

    /// The grouped low-rank output projection: each group of heads projected on its own, then
    /// all mixed back to the hidden size.
    fn grouped_output(&mut self, v: &V4Attn) -> Vec<Node> {
        let a = self.attn.clone();
        let (h, hd, g, r) = (a.heads, a.head_dim, v.o_groups, v.o_lora_rank);
        let width = h * hd;
        let concat = self.act(
            "H",
            [Dim::Labeled(format!("{hd}×{h}={width}"), width), Dim::Seq],
        );
        let mut nodes = vec![self.step(Draft {
            title: "Head concatenation".into(),
            op: Op::Concat,
            category: Category::Attention,
            inputs: vec![],
            output: concat,
            operation: format!(
                "Stack the {h} head outputs into {g} groups of {} heads",
                h / g
            ),
            equation: format!(
                "H = concat(H₀ … H_{}), groups Hᵍ = H[{}·g : {}·(g+1)]",
                h - 1,
                width / g,
                width / g
            ),
        })];
        nodes.push(self.linear(lin(
            Role::V4OA,
            "Grouped output projection",
            "Wₒₐ",
            "Oₐ",
            "H",
            g * r,
            width / g,
            g * r,
            None,
                false,
            format!("Project each group's {} features to {r} on its own (block-diagonal): {g} × {r} = {} features", width / g, g * r),
            )));
        nodes.push(self.linear(lin(
            Role::V4OB,
            "Output projection",
            "Wₒᵦ",
            "Y",
            "Oₐ",
            self.spec.hidden,
            g * r,
            self.spec.hidden,
            None,
            false,
            "Mix the groups' features back to the hidden size".into(),
        )));
        nodes
    }
}
