//! Qwen4-Exp's QSA indexer: one projection gives the index queries and one raw key per token
//! (cached); each complete block of keys is averaged, normed and rotated at its first position,
//! scored by the queries, and every query head attends only to the best blocks and the
//! incomplete tail.

use super::attention::{lin, rows};
use super::build::{Builder, Draft};
use super::*;
use crate::naming::Role;
use crate::spec::{Position, Qsa};

impl Builder<'_> {
    pub(super) fn qsa(&mut self, x_in: &str, q: Qsa) -> Vec<Node> {
        let d = self.spec.hidden;
        let (ih, id, r) = (q.heads, q.head_dim, q.ratio);
        let stored = (ih + 1) * id;
        let rotated = match &self.spec.position {
            Position::Rope(p) => p.rotary_dim(self.attn.head_dim),
            Position::Learned
            | Position::Sinusoidal(_)
            | Position::Alibi(_)
            | Position::None
            | Position::Buckets(_) => 0,
        };
        let norm = self.norm_name();
        let mut nodes = vec![self.linear(lin(
            Role::QsaQk,
            "Indexer key projection",
            "Wᵢₓ",
            "Kᵢₓ",
            x_in,
            id,
            d,
            stored,
            Some(format!("{}:{stored}", ih * id)),
            true,
            format!("Project the input to one raw {id}-dim index key per token (the projection's last rows), cached as it is"),
        )).at(Point::QsaK)];
        let mut kn = self
            .norm_step(
                &format!("Block key {norm}"),
                Role::QsaKNorm,
                "γkᵢₓ",
                "Kᵢₓ",
                "K̄ᵢₓ",
                id,
                true,
                None,
            )
            .at(Point::QsaBlocks);
        if let Node::Step(s) = &mut kn {
            s.category = Category::Attention;
            s.operation = format!(
                "Average the raw keys of each complete block of {r} visible tokens, normalize the mean and rotate it at the block's first position"
            );
            s.equation = format!(
                "K̄ᵢₓ[j] = RoPE(RMSNorm(mean(Kᵢₓ[{r}j : {r}j + {r}])) ⊙ (1 + γkᵢₓ), {r}j), first {rotated} dims rotated"
            );
        }
        nodes.push(kn);
        let mut head = vec![self.linear(lin(
            Role::QsaQk,
            "Indexer query projection",
            "Wᵢₓ",
            "Qᵢₓ",
            x_in,
            id,
            d,
            stored,
            Some(rows(0, id, "h")),
            false,
            format!("Project the input to index head h's {id}-dim query"),
        ))];
        let mut qn = self.norm_step(
            &format!("Indexer Q {norm}"),
            Role::QsaQNorm,
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
        let o = self.act("Qᵢₓᵣ", self.seq(id));
        head.push(
            self.step(Draft {
                title: "Indexer Q rotary position encoding".into(),
                op: Op::Rope,
                category: Category::Attention,
                inputs: vec![],
                output: o,
                operation: format!(
                    "Rotate the query's first {rotated} dims as the attention rotates its heads"
                ),
                equation: format!("Qᵢₓᵣ = RoPE(Qᵢₓₙ, pos), {}", self.rope_text()),
            })
            .at(Point::IndexQ),
        );
        nodes.push(Node::Scope(self.scope(
            ScopeKind::Head,
            "Indexer head h",
            "Indexer head end",
            ih,
            head,
        )));
        let scores = self.act("Iᵢₓ", [Dim::Seq, Dim::Seq]);
        nodes.push(self.step(Draft {
            title: "Block scores".into(),
            op: Op::Index { dim: ih * id },
            category: Category::Attention,
            inputs: vec![],
            output: scores,
            operation: format!(
                "Score each complete block the query sees: the index heads' ReLU'd dot products with the block key, summed and scaled by 1/√{id}"
            ),
            equation: format!("Iᵢₓ[t, j] = Σₕ ReLU(Qᵢₓᵣ[t, h] · K̄ᵢₓ[j]) / √{id}, {r}(j + 1) ≤ t + 1"),
        }));
        let mask = self.act("Mᵢₓ", [Dim::Seq, Dim::Seq]);
        nodes.push(self.step(Draft {
            title: "Block selection".into(),
            op: Op::Select { k: q.blocks() },
            category: Category::Attention,
            inputs: vec![],
            output: mask,
            operation: format!(
                "Keep the query's {} best complete blocks ({} tokens) and the tokens after its last complete block; every attention head attends only there",
                q.blocks(),
                q.budget
            ),
            equation: format!(
                "Mᵢₓ[t, s] = 0 if ⌊s / {r}⌋ ∈ top-{}(Iᵢₓ[t]) or s ≥ {r}⌊(t + 1) / {r}⌋, −∞ otherwise",
                q.blocks()
            ),
        }));
        nodes
    }
}
