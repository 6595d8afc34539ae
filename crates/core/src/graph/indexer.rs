//! Sparse attention's indexers: A.X-K2's block index, and DeepSeek's lightning indexer that picks
//! the keys each query attends to.

use super::attention::{lin, rows};
use super::build::{Builder, Draft};
use super::*;
use crate::naming::Role;
use crate::spec::Indexer;

impl Builder<'_> {
    /// MiniMax-M3's lightning indexer: one key per token, normed and rotated; per index head a
    /// query, normed and rotated, scored against every visible key, the scores max-pooled over
    /// blocks of keys and the query's blocks chosen for the query heads of its group.
    pub(super) fn block_index(&mut self, x_in: &str, bi: crate::spec::BlockIndex) -> Vec<Node> {
        let d = self.spec.hidden;
        let (ih, id) = (bi.heads, bi.head_dim);
        let norm = self.norm_name();
        let mut nodes = vec![self.linear(lin(
            Role::BlockIndexK,
            "Indexer key projection",
            "Wkᵢₓ",
            "Kᵢₓ",
            x_in,
            id,
            d,
            id,
            None,
            false,
            format!(
                "Project the input to one {id}-dim index key per token, shared by the index heads"
            ),
        ))];
        let mut kn = self.norm_step(
            &format!("Indexer K {norm}"),
            Role::BlockIndexKNorm,
            "γkᵢₓ",
            "Kᵢₓ",
            "Kᵢₓₙ",
            id,
            true,
            None,
        );
        if let Node::Step(s) = &mut kn {
            s.category = Category::Attention;
        }
        nodes.push(kn);
        nodes.push(self.rope_step(("Indexer K", Point::IndexK), "Kᵢₓₙ", "Kᵢₓᵣ", id, true));
        let mut head = vec![self.linear(lin(
            Role::BlockIndexQ,
            "Indexer query projection",
            "Wqᵢₓ",
            "Qᵢₓ",
            x_in,
            id,
            d,
            ih * id,
            Some(rows(0, id, "h")),
            false,
            format!("Project the input to index head h's {id}-dim query"),
        ))];
        let mut qn = self.norm_step(
            &format!("Indexer Q {norm}"),
            Role::BlockIndexQNorm,
            "γqᵢₓ",
            "Qᵢₓ",
            "Qᵢₓₙ",
            id,
            true,
            None,
        );
        if let Node::Step(s) = &mut qn {
            s.category = Category::Attention;
            s.operation = format!("Normalize each index head's query over its {id} dims (one weight shared by the heads)");
        }
        head.push(qn);
        head.push(self.rope_step(("Indexer Q", Point::IndexQ), "Qᵢₓₙ", "Qᵢₓᵣ", id, false));
        let scores = self.act("Iᵢₓ", [Dim::Seq, Dim::Seq]);
        head.push(self.step(Draft {
            title: "Index scores".into(),
            op: Op::Index { dim: id },
            category: Category::Attention,
            inputs: vec![],
            output: scores,
            operation:
                "Score every visible key for each query: a plain dot product, unscaled".into(),
            equation: "Iᵢₓ[t, s] = Qᵢₓᵣ[t] · Kᵢₓᵣ[s], s ≤ t".into(),
        }));
        let mask = self.act("Mᵢₓ", [Dim::Seq, Dim::Seq]);
        head.push(self.step(Draft {
            title: "Block selection".into(),
            op: Op::Select { k: bi.top_k },
            category: Category::Attention,
            inputs: vec![],
            output: mask,
            operation: format!(
                "Pool each block of {} keys to its best score, keep the query's {} latest block{} and the best of the rest, {} blocks in all; the query heads of this index head's group attend only there",
                bi.block,
                bi.local,
                if bi.local == 1 { "" } else { "s" },
                bi.top_k
            ),
            equation: format!(
                "Bᵢₓ[t, j] = max over s in block j (s ≤ t) of Iᵢₓ[t, s], +∞ for the {} block{} up to t's; Mᵢₓ[t, s] = 0 if block(s) ∈ top-{}(Bᵢₓ[t]), −∞ otherwise; block(s) = ⌊s / {}⌋",
                bi.local,
                if bi.local == 1 { "" } else { "s" },
                bi.top_k,
                bi.block
            ),
        }));
        nodes.push(Node::Scope(self.scope(
            ScopeKind::Head,
            "Indexer head h",
            "Indexer head end",
            ih,
            head,
        )));
        nodes
    }

    /// DeepSeek sparse attention's indexer: a few light heads score every visible key from the
    /// Q latent and the layer input, and each query keeps its top-k keys for attention.
    /// Where only some layers run their own indexer (GLM-5), its steps sit in a frame of those
    /// layers; the others reuse the last selection.
    /// `q_scale`: the query latent is scaled before the indexer reads it (dots.3 Note).
    pub(super) fn indexer(
        &mut self,
        x_in: &str,
        ql: u64,
        rope_d: u64,
        ix: &Indexer,
        q_scale: Option<f64>,
    ) -> Vec<Node> {
        if self.spec.indexer_reusers().is_empty() {
            return self.indexer_steps(x_in, ql, rope_d, ix, q_scale);
        }
        let all = std::mem::replace(&mut self.layers, ix.own.clone());
        let steps = self.indexer_steps(x_in, ql, rope_d, ix, q_scale);
        self.layers = all;
        let mut scope = self.scope(
            ScopeKind::Indexer,
            &format!("Indexer (layers {})", ix.own),
            "Indexer end",
            1,
            steps,
        );
        scope.layers = Some(ix.own.clone());
        vec![Node::Scope(scope)]
    }

    pub(super) fn indexer_steps(
        &mut self,
        x_in: &str,
        ql: u64,
        rope_d: u64,
        ix: &Indexer,
        q_scale: Option<f64>,
    ) -> Vec<Node> {
        let d = self.spec.hidden;
        let (ih, id) = (ix.heads, ix.head_dim);
        let mut nodes = vec![self.linear(lin(
            Role::IndexQ,
            "Indexer query projection",
            "Wqᵢₓ",
            "Qᵢₓ",
            "Cq′",
            ih * id,
            ql,
            ih * id,
            None,
            false,
            format!("Project the query latent to the indexer's {ih} heads of {id} dims"),
        ))];
        if let (Some(Node::Step(s)), Some(q_scale)) = (nodes.first_mut(), q_scale) {
            s.equation += &format!(
                ", of the latent × {} (√(hidden / q_lora), as the attention's query)",
                crate::fmt::float(q_scale)
            );
        }
        nodes.push(self.linear(lin(
            Role::IndexK,
            "Indexer key projection",
            "Wkᵢₓ",
            "Kᵢₓ",
            x_in,
            id,
            d,
            id,
            None,
            false,
            format!("Project the input to one {id}-dim indexer key per token, shared by its heads"),
        )));
        let mut norm = self.norm_step_as(
            &ix.key_norm(),
            "Indexer key LayerNorm",
            Role::IndexKNorm,
            "γkᵢₓ",
            "Kᵢₓ",
            "Kᵢₓ′",
            id,
            true,
            None,
        );
        if let Node::Step(s) = &mut norm {
            s.category = Category::Attention;
        }
        nodes.push(norm);
        let rope = self.rope_text_paired(Some(ix.interleaved));
        let pairs = if ix.interleaved {
            "interleaved pairs"
        } else {
            "rotate-half pairs"
        };
        for (which, point, input, out, dim, cached) in [
            ("Indexer Q", Point::IndexQ, "Qᵢₓ", "Qᵢₓᵣ", ih * id, false),
            ("Indexer K", Point::IndexK, "Kᵢₓ′", "Kᵢₓᵣ", id, true),
        ] {
            let o = if cached {
                self.cached(out, self.seq(dim))
            } else {
                self.act(out, self.seq(dim))
            };
            nodes.push(
                self.step(Draft {
                    title: format!("{which} rotary position encoding"),
                    op: Op::Rope,
                    category: Category::Attention,
                    inputs: vec![],
                    output: o,
                    operation: format!(
                        "Rotate the {} {rope_d} dims of each {id}-dim {} by position ({pairs})",
                        if ix.rope_last { "last" } else { "first" },
                        if cached { "key" } else { "head" }
                    ),
                    equation: if ix.rope_last {
                        let pass = id - rope_d;
                        format!("{out} = {input}[:{pass}] ‖ RoPE({input}[{pass}:], pos), {rope}")
                    } else {
                        format!(
                            "{out} = RoPE({input}[:{rope_d}], pos) ‖ {input}[{rope_d}:], {rope}"
                        )
                    },
                })
                .at(point),
            );
        }
        nodes.push(
            self.linear(lin(
                Role::IndexWeights,
                "Indexer head weights",
                "Wwᵢₓ",
                "wᵢₓ",
                x_in,
                ih,
                d,
                ih,
                None,
                false,
                format!("Weigh the indexer's {ih} heads per token"),
            ))
            .at(Point::IndexWeights),
        );
        let scores = self.act("Iᵢₓ", [Dim::Seq, Dim::Seq]);
        nodes.push(self.step(Draft {
            title: "Index scores".into(),
            op: Op::Index { dim: ih * id },
            category: Category::Attention,
            inputs: vec![],
            output: scores,
            operation: "Score every visible key for each query: a ReLU'd dot product per indexer head, weighed and summed".into(),
            equation: format!(
                "Iᵢₓ[t, s] = Σₕ wᵢₓ[t, h]/√{ih} · ReLU(Qᵢₓᵣ[t, h] · Kᵢₓᵣ[s] / √{id}), s ≤ t"
            ),
        }));
        let mask = self.act("Mᵢₓ", [Dim::Seq, Dim::Seq]);
        let reuse = if self.spec.indexer_reusers().is_empty() {
            String::new()
        } else {
            "; the layers without an indexer reuse this choice".into()
        };
        nodes.push(self.step(Draft {
            title: "Top-k key selection".into(),
            op: Op::Select { k: ix.top_k },
            category: Category::Attention,
            inputs: vec![],
            output: mask,
            operation: format!(
                "Keep each query's {} best-scored keys (all of them while it sees fewer); attention masks the rest{reuse}",
                ix.top_k
            ),
            equation: format!(
                "Mᵢₓ[t, s] = 0 if s ∈ top-{}(Iᵢₓ[t]), −∞ otherwise",
                ix.top_k
            ),
        }));
        nodes
    }
}
