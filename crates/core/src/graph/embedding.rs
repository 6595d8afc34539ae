//! The embedding: the token lookup and what the model adds to it before the first layer (scales,
//! shifts, positions, a norm, segments, the position bias, the streams).

use super::build::{n, Builder, Draft, Linear};
use super::*;
use crate::naming::Role;
use crate::spec::Position;

impl<'s> Builder<'s> {
    pub(super) fn embedding(&mut self) -> Scope {
        let spec = self.spec;
        if let Some(draft) = spec.draft {
            let steps = self.draft_input(draft);
            return self.scope(ScopeKind::Embedding, "Embedding", "Embedding end", 1, steps);
        }
        let d = spec.hidden;
        let width = spec.embed_width();
        let p = self.param(
            Role::Embed,
            false,
            vec![spec.vocab, width],
            Component::Embedding,
            false,
        );
        let t = self.act("T", [n(spec.vocab), Dim::Seq]);
        let e = self.push(
            "E",
            [n(width), n(spec.vocab)],
            TensorKind::Weight {
                param: p,
                slice: None,
                note: Some("drawn transposed: one column per token".into()),
            },
        );
        let looked_up = if spec.embedding.projected.is_some() {
            "Xₑ"
        } else {
            "X"
        };
        let x = self.act(looked_up, self.seq(width));
        let mut steps = vec![self
            .step(Draft {
                title: "Token embedding".into(),
                op: Op::Lookup,
                category: Category::Embed,
                inputs: vec![t, e],
                output: x,
                operation: "Look up each token's embedding row".into(),
                equation: format!(
                    "{looked_up} = E · T  (column t of {looked_up} is row T[t] of the embedding)"
                ),
            })
            .at(Point::EmbedTokens)];
        if spec.embedding.projected.is_some() {
            steps.push(
                self.linear(Linear {
                    role: Role::EmbedProjIn,
                    title: "Projection in".into(),
                    w: "W_in",
                    out: "X",
                    input: looked_up,
                    rows: d,
                    cols: width,
                    stored_rows: d,
                    block: None,
                    bias: false,
                    component: Component::Embedding,
                    category: Category::Embed,
                    cached: false,
                    operation: format!(
                        "Map each token's {width}-wide embedding to the hidden size, {d}"
                    ),
                })
                .at(Point::ProjectIn),
            );
        }
        // The scaling, shifts, positions and norm after the lookup: the last of them gives the
        // embedding the blocks read.
        let lookup = steps.len();
        if spec.embedding.scale_by_sqrt_hidden {
            let xs = self.act("X", self.seq(d));
            steps.push(
                self.step(Draft {
                    title: "Embedding scale".into(),
                    op: Op::Scale,
                    category: Category::Embed,
                    inputs: vec![],
                    output: xs,
                    operation: "Scale the embeddings up by the square root of the hidden size"
                        .into(),
                    equation: format!("X = X · √{d} (= {:.4})", (d as f64).sqrt()),
                })
                .at(Point::EmbedScale),
            );
        }
        if spec.embedding.affine {
            // ZAYA: a learned shift, then a learned scale, per feature.
            let mut inputs = vec![];
            for (role, name) in [(Role::EmbedShift, "βₑ"), (Role::EmbedScale, "γₑ")] {
                let p = self.param(role, false, vec![d], Component::Embedding, false);
                inputs.push(self.weight(p, name, [n(d), n(1)], None));
            }
            let xs = self.act("X", self.seq(d));
            steps.push(self.step(Draft {
                title: "Embedding shift and scale".into(),
                op: Op::Scale,
                category: Category::Embed,
                inputs,
                output: xs,
                operation: "Shift each feature of the embeddings by a learned amount, then scale it by a learned factor".into(),
                equation: "X = (X + βₑ) ⊙ γₑ".into(),
            }));
        }
        let m = spec.embedding.multiplier;
        if m != 1.0 {
            let xs = self.act("X", self.seq(d));
            steps.push(self.step(Draft {
                title: "Embedding multiplier".into(),
                op: Op::Scale,
                category: Category::Embed,
                inputs: vec![],
                output: xs,
                operation: format!("Scale the embeddings by a fixed {m}"),
                equation: format!("X = X · {m}"),
            }));
        }
        if let Some(positions) = spec.embedding.learned_positions {
            let pp = self.param(
                Role::PosEmbed,
                false,
                vec![positions, d],
                Component::Embedding,
                false,
            );
            let w = self.push(
                "Wₚ",
                [n(d), n(positions)],
                TensorKind::Weight {
                    param: pp,
                    slice: None,
                    note: Some("drawn transposed: one column per position".into()),
                },
            );
            let xp = self.act("X", self.seq(d));
            steps.push(self.step(Draft {
                title: "Position embedding".into(),
                op: Op::Add,
                category: Category::Embed,
                inputs: vec![w],
                output: xp,
                operation: format!(
                    "Add the learned embedding of each position (at most {})",
                    positions - spec.embedding.position_offset
                ),
                equation: match spec.embedding.position_offset {
                    0 => "X = X + Wₚ[:, pos]".into(),
                    o => format!("X = X + Wₚ[:, pos + {o}]  (the first {o} rows are never read)"),
                },
            }));
        }
        if let Position::Sinusoidal(table) = spec.position {
            let xp = self.act("X", self.seq(d));
            steps.push(self.step(Draft {
                title: "Position embedding".into(),
                op: Op::Add,
                category: Category::Embed,
                inputs: vec![],
                output: xp,
                operation: "Add each position's fixed sinusoids (computed, not learned)".into(),
                equation: format!(
                    "X = X + P[:, pos + {o}], P[r] = [sin(r·ωᵢ), cos(r·ωᵢ)], {}",
                    match table {
                        crate::spec::Sinusoids::Fairseq =>
                            format!("ωᵢ = 10000^(−i/{}), i < {}", (d / 2).max(2) - 1, d / 2),
                        crate::spec::Sinusoids::Ctrl => format!(
                            "ωᵢ = 10000^(−2i/{d}), {} sines and {} cosines",
                            d.div_ceil(2),
                            d / 2
                        ),
                    },
                    o = spec.embedding.position_offset
                ),
            }));
        }
        if spec.embedding.norm {
            let title = format!("Embedding {}", self.norm_name());
            steps.push(self.norm_step(&title, Role::EmbedNorm, "γₑ", "X", "X", d, false, None));
        }
        if steps.len() > lookup {
            let last = steps.pop().expect("a step after the lookup");
            steps.push(last.at(Point::Embed));
        }
        if let Some(p) = spec.prompt {
            steps.push(self.segments(p));
        }
        if let Position::Buckets(b) = spec.position {
            steps.push(self.position_bias(b));
        }
        if let Some(p) = spec.per_layer_input {
            steps.extend(self.per_layer_inputs(p, t));
        }
        if spec.streams() > 1 {
            steps.push(self.hyper_widen());
        }
        if spec.altup().is_some() {
            steps.extend(self.altup_streams());
        }
        self.scope(ScopeKind::Embedding, "Embedding", "Embedding end", 1, steps)
    }

    /// CPM-Ant's learned prompt before the text, and each position's segment embedding added.
    pub(super) fn segments(&mut self, p: crate::spec::Prompt) -> Node {
        let d = self.spec.hidden;
        let table = self.param(
            Role::SegmentEmbed,
            false,
            vec![p.segments, d],
            Component::Embedding,
            false,
        );
        let w = self.push(
            "Wₛ",
            [n(d), n(p.segments)],
            TensorKind::Weight {
                param: table,
                slice: None,
                note: Some("drawn transposed: one column per segment".into()),
            },
        );
        let x = self.act("X", self.seq(d));
        let first = p.row(self.spec.out_vocab(), 0);
        self.step(Draft {
            title: "Prompt and segment embedding".into(),
            op: Op::Add,
            category: Category::Embed,
            inputs: vec![w],
            output: x,
            operation: format!(
                "The first pass puts {} learned prompt tokens (embedding rows {}–{}) before the text; every position then gets its segment's embedding added, segment {} for the prompt and {} for the text",
                p.length,
                first,
                first + p.length.max(1) - 1,
                crate::spec::PROMPT_SEGMENT,
                crate::spec::TEXT_SEGMENT
            ),
            equation: "X = E[:, [prompt; T]] + Wₛ[:, seg]".into(),
        }).at(Point::Segment)
    }

    /// The bucketed relative-position bias (`Position::Buckets`): computed once a pass from one
    /// table, added to the scores of every layer.
    pub(super) fn position_bias(&mut self, b: crate::spec::Buckets) -> Node {
        let spec = self.spec;
        let (rows, heads) = (spec.bias_rows(b), spec.attn.heads);
        let table = self.param(
            Role::PositionBias,
            false,
            vec![rows, heads],
            Component::Attention,
            false,
        );
        let w = self.push(
            "Wᵦ",
            [n(heads), n(rows)],
            TensorKind::Weight {
                param: table,
                slice: None,
                note: Some("drawn transposed: one column per bucket".into()),
            },
        );
        let out = self.act("Bₚ", [Dim::Seq, Dim::Seq]);
        let across = match spec.prompt {
            Some(p) => format!(
                "; a pair in different segments reads row {} + segment(i)·{} + segment(j)",
                b.buckets, p.segments
            ),
            None => String::new(),
        };
        self.step(Draft {
            title: "Position bias".into(),
            op: Op::Lookup,
            category: Category::Embed,
            inputs: vec![w],
            output: out,
            operation: format!(
                "Look up, for each head and each pair of positions, the learned bias of the key's distance from the query: {} buckets each way, one per distance below {}, then spaced by log distance up to {}; every layer adds it to its scores",
                b.buckets / 2,
                b.buckets / 4,
                b.max_distance
            ),
            equation: format!("Bₚ[h, i, j] = Wᵦ[h, bucket(j − i)]{across}"),
        }).at(Point::PositionBias)
    }
}
