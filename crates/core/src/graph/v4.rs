//! DeepSeek-V4's attention: a latent query, one key-and-value head over a sliding window, the
//! compressors (and the compressed sparse layers' indexer) that add long-range entries, the
//! heads, and the grouped low-rank output projection.

use super::build::{n, Builder, Draft, Linear};
use super::*;
use crate::naming::Role;
use crate::spec::V4Attn;

/// A bias-free matmul of the attention.
#[allow(clippy::too_many_arguments)]
fn lin<'a>(
    role: Role,
    title: &str,
    w: &'a str,
    out: &'a str,
    input: &'a str,
    rows: u64,
    cols: u64,
    stored_rows: u64,
    block: Option<String>,
    operation: String,
) -> Linear<'a> {
    Linear {
        role,
        title: title.into(),
        w,
        out,
        input,
        rows,
        cols,
        stored_rows,
        block,
        bias: false,
        component: Component::Attention,
        category: Category::Attention,
        cached: false,
        operation,
    }
}

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
        let mut nodes = vec![self.linear(lin(
            Role::QA,
            "Q down-projection",
            "Wqa",
            "Cq",
            x_in,
            ql,
            d,
            ql,
            None,
            format!("Compress the input to a {ql}-dim query latent"),
        ))];
        nodes.push(self.attn_norm("Q latent RMSNorm", Role::QANorm, "γqa", ("Cq", "Cq′"), ql));
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
            let mut steps = self.compressor(x_in, hd, m, sparse, &v);
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
                ScopeKind::Indexer,
                &format!("{what}: compressor (layers {set})"),
                "Compressor end",
                1,
                steps,
            );
            scope.layers = Some(set);
            nodes.push(Node::Scope(scope));
        }

        let mut head = vec![self.linear(lin(
            Role::QB,
            "Q projection",
            "Wq",
            "Q",
            "Cq′",
            hd,
            ql,
            h * hd,
            Some(format!("{hd}*j:{hd}*(j+1)")),
            format!("Expand the latent to this head's {hd}-dim query"),
        ))];
        let q_norm = self.act("Q′", self.seq(hd));
        head.push(self.step(Draft {
            title: "Q RMSNorm (no weight)".into(),
            op: Op::Norm,
            category: Category::Attention,
            inputs: vec![],
            output: q_norm,
            operation: "Scale this head's query to unit RMS".into(),
            equation: format!("Q′ = Q / √(mean(Q²) + ε), ε = {}", self.spec.norm.eps),
        }));
        let qr = self.act("Qᵣ", self.seq(hd));
        head.push(self.step(Draft {
            title: "Q rotary position encoding".into(),
            op: Op::Rope,
            category: Category::Attention,
            inputs: vec![],
            output: qr,
            operation: format!("Rotate the last {r} dims of Q by position"),
            equation: format!("Qᵣ = [Q′[:{}], RoPE(Q′[{}:], pos)]", hd - r, hd - r),
        }));
        let keys = self.act("[KVᵣ; Cᶜ]ᵀ", [Dim::Seq, n(hd)]);
        let s = self.act("S", [Dim::Seq, Dim::Seq]);
        let w = match self.spec.plan[0].span() {
            Some(crate::spec::AttnSpan::Sliding(w)) => w,
            _ => unreachable!("DeepSeek-V4's layers attend over a sliding window"),
        };
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
    /// into one entry (the overlapping form reads the window before too), normed and rotated.
    fn compressor(&mut self, x_in: &str, hd: u64, m: u64, overlap: bool, v: &V4Attn) -> Vec<Node> {
        let d = self.spec.hidden;
        let width = if overlap { 2 * hd } else { hd };
        let mut nodes = vec![];
        for (role, title, w, out, what) in [
            (Role::CompKv, "Entry projection", "W_c", "C", "entry part"),
            (Role::CompGate, "Entry gate projection", "W_z", "Z", "gate"),
        ] {
            nodes.push(self.linear(lin(
                role,
                title,
                w,
                out,
                x_in,
                width,
                d,
                width,
                None,
                if overlap {
                    format!("Project each token to two {hd}-dim {what}s: one for its own window's entry, one for the next window's")
                } else {
                    format!("Project each token to its {hd}-dim {what}")
                },
            )));
        }
        let p = self.param(
            Role::CompBias,
            false,
            vec![m, width],
            Component::Attention,
            true,
        );
        let bias = self.weight(p, "B", [n(m), n(width)], None);
        let c = self.latest("C");
        let pooled = self.act("Cₚ", [n(hd), Dim::Windows(m)]);
        nodes.push(self.step(Draft {
            title: "Window pooling".into(),
            op: Op::Combine,
            category: Category::Attention,
            inputs: vec![c, bias],
            output: pooled,
            operation: if overlap {
                format!("Pool each window of {m} tokens and the window before it into one entry: a softmax over the {} slots weighs the parts, feature by feature", 2 * m)
            } else {
                format!("Pool each window of {m} tokens into one entry: a softmax over its {m} slots weighs the parts, feature by feature")
            },
            equation: if overlap {
                format!("Cₚ[w] = Σ softmax([Z_a[w−1] + B_a; Z_b[w] + B_b]) ⊙ [C_a[w−1]; C_b[w]] over 2·{m} slots, C = [C_a | C_b]; one entry per closed window")
            } else {
                format!("Cₚ[w] = Σ softmax(Z[w] + B) ⊙ C[w] over the window's {m} slots; one entry per closed window")
            },
        }));
        let mut norm = self.norm_step_as(
            &self.spec.norm.clone(),
            "Entry RMSNorm",
            Role::CompNorm,
            "γc",
            "Cₚ",
            "Cₙ",
            hd,
            true,
            None,
        );
        if let Node::Step(s) = &mut norm {
            s.category = Category::Attention;
        }
        nodes.push(norm);
        self.per_window(m);
        let entries = self.cached("Cᶜ", [n(hd), Dim::Windows(m)]);
        nodes.push(self.step(Draft {
            title: "Entry rotary position encoding".into(),
            op: Op::Rope,
            category: Category::Attention,
            inputs: vec![],
            output: entries,
            operation: format!(
                "Rotate each entry's last {} dims by its window's first position",
                v.rope_dim
            ),
            equation: format!("Cᶜ[w] = RoPE(Cₙ[w], {m}·w), cached: one entry per {m} tokens"),
        }));
        nodes
    }

    /// The compressed sparse layers' indexer: its own overlapping compressor at its head size,
    /// queries from the query latent, ReLU scores weighted per head, the top k entries kept.
    fn v4_indexer(&mut self, x_in: &str, m: u64, v: &V4Attn) -> Vec<Node> {
        let d = self.spec.hidden;
        let ix = v.index;
        let (ih, id) = (ix.heads, ix.head_dim);
        let mut nodes = vec![];
        for (role, title, w, out, what) in [
            (
                Role::IndexCompKv,
                "Indexer entry projection",
                "W_ci",
                "Cᵢ",
                "entry part",
            ),
            (
                Role::IndexCompGate,
                "Indexer entry gate projection",
                "W_zi",
                "Zᵢ",
                "gate",
            ),
        ] {
            nodes.push(self.linear(lin(
                role,
                title,
                w,
                out,
                x_in,
                2 * id,
                d,
                2 * id,
                None,
                format!("Project each token to two {id}-dim indexer {what}s (its window's, the next window's)"),
            )));
        }
        let p = self.param(
            Role::IndexCompBias,
            false,
            vec![m, 2 * id],
            Component::Attention,
            true,
        );
        let bias = self.weight(p, "Bᵢ", [n(m), n(2 * id)], None);
        let c = self.latest("Cᵢ");
        let pooled = self.act("Kᵢₚ", [n(id), Dim::Windows(m)]);
        nodes.push(self.step(Draft {
            title: "Indexer window pooling".into(),
            op: Op::Combine,
            category: Category::Attention,
            inputs: vec![c, bias],
            output: pooled,
            operation: format!("Pool each window and the one before it into one {id}-dim indexer key, as the compressor does"),
            equation: format!("Kᵢₚ[w] = Σ softmax over 2·{m} slots of the gates ⊙ the parts"),
        }));
        let mut norm = self.norm_step_as(
            &self.spec.norm.clone(),
            "Indexer key RMSNorm",
            Role::IndexCompNorm,
            "γkᵢ",
            "Kᵢₚ",
            "Kᵢₙ",
            id,
            true,
            None,
        );
        if let Node::Step(s) = &mut norm {
            s.category = Category::Attention;
        }
        nodes.push(norm);
        self.per_window(m);
        let keys = self.cached("Kᵢ", [n(id), Dim::Windows(m)]);
        nodes.push(self.step(Draft {
            title: "Indexer key rotary position encoding".into(),
            op: Op::Rope,
            category: Category::Attention,
            inputs: vec![],
            output: keys,
            operation: "Rotate each indexer key's last dims by its window's first position".into(),
            equation: format!("Kᵢ[w] = RoPE(Kᵢₙ[w], {m}·w), cached"),
        }));
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
            format!("Project the query latent to the indexer's {ih} heads of {id} dims, then rotate their last dims by position"),
        )));
        nodes.push(self.linear(lin(
            Role::IndexWeights,
            "Indexer head weights",
            "W_w",
            "Wᵢ",
            x_in,
            ih,
            d,
            ih,
            None,
            format!("Project the input to one weight per indexer head, scaled by 1/√{ih}"),
        )));
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
            "Mix the groups' features back to the hidden size".into(),
        )));
        nodes
    }
}
