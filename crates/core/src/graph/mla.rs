//! Multi-head latent attention (DeepSeek-V2/V3, GLM-5, Kimi): the compressed query and key-value
//! latents, each head read back from them.

use super::attention::{lin, rows};
use super::build::{n, Builder, Draft, Linear};
use super::*;
use crate::naming::Role;

impl Builder<'_> {
    /// Multi-head latent attention (DeepSeek V2/V3): Q and KV pass through low-rank latents; the
    /// cache holds the KV latent and one shared rotary key per token.
    /// The query latent of latent attention (MLA, DeepSeek-V4): the input compressed to `ql`
    /// features, `Cq`, then normed by `norm`, `Cq′`.
    pub(super) fn q_latent(
        &mut self,
        x_in: &str,
        ql: u64,
        bias: bool,
        norm: &crate::spec::Norm,
    ) -> [Node; 2] {
        let d = self.spec.hidden;
        let down = self
            .linear(Linear {
                bias,
                ..lin(
                    Role::QA,
                    "Q down-projection",
                    "Wqa",
                    "Cq",
                    x_in,
                    ql,
                    d,
                    ql,
                    None,
                    false,
                    format!("Compress the input to a {ql}-dim query latent"),
                )
            })
            .at(Point::QLatent);
        let mut normed = self
            .norm_step_as(
                norm,
                "Q latent RMSNorm",
                Role::QANorm,
                "γqa",
                "Cq",
                "Cq′",
                ql,
                true,
                None,
            )
            .at(Point::QLatentNorm);
        if let Node::Step(s) = &mut normed {
            s.category = Category::Attention;
        }
        [down, normed]
    }

    pub(super) fn mla(&mut self, x_in: &str) -> Vec<Node> {
        let spec = self.spec;
        let a = self.attn.clone();
        let m = a.mla.clone().expect("MLA spec");
        let (d, h) = (spec.hidden, a.heads);
        let (nope, rope_d, vd, kvl) = (
            m.qk_nope_head_dim,
            m.qk_rope_head_dim,
            a.v_head_dim,
            m.kv_lora_rank,
        );
        let qk = nope + rope_d;
        let rope = self.has_rope();
        let latent_norm = crate::spec::Norm {
            eps: m.latent_eps,
            ..spec.norm.clone()
        };
        let mut nodes = Vec::new();
        let (q_role, q_input, q_cols) = match m.q_lora_rank {
            Some(ql) => {
                nodes.extend(self.q_latent(x_in, ql, m.bias, &latent_norm));
                if let Some(ix) = &m.indexer {
                    let q_scale = m.lora_scales.map(|s| s.0);
                    let steps = self.indexer(x_in, ql, rope_d, ix, q_scale);
                    nodes.extend(steps);
                }
                // A.X-K2: one projection of both latents side by side.
                if m.q_gate {
                    (Role::QB, "[Cq′; Cq]", 2 * ql)
                } else {
                    (Role::QB, "Cq′", ql)
                }
            }
            None => (Role::Q, x_in, d),
        };
        nodes.push(
            self.linear(Linear {
                bias: m.bias,
                ..lin(
                    Role::KvA,
                    "KV down-projection",
                    "Wkva",
                    "Ckv",
                    x_in,
                    kvl,
                    d,
                    kvl + rope_d,
                    Some(format!("0:{kvl}")),
                    false,
                    format!(
                        "Compress the input to the {kvl}-dim KV latent that every head expands"
                    ),
                )
            })
            .at(Point::KvLatent),
        );
        let mut norm = self
            .norm_step_as(
                &latent_norm,
                "KV latent RMSNorm",
                Role::KvANorm,
                "γkv",
                "Ckv",
                "Ckv′",
                kvl,
                true,
                None,
            )
            .at(Point::KvLatentNorm);
        if let Node::Step(s) = &mut norm {
            s.category = Category::Attention;
            if let Some((_, kv_scale)) = m.lora_scales {
                // LongCat-Flash: the normed latent, and so every head's keys and values, scaled.
                s.equation += &format!(
                    ", then × {} (√(hidden / kv_lora))",
                    crate::fmt::float(kv_scale)
                );
            }
        }
        nodes.push(norm);
        if let TensorKind::Activation { cached } =
            &mut self.tensors.last_mut().expect("latent").kind
        {
            *cached = true;
        }
        nodes.push(self.linear(Linear {
            bias: m.bias,
            ..lin(
                Role::KvA,
                if rope {
                    "Shared rotary key projection"
                } else {
                    "Shared key projection"
                },
                "Wkva",
                "Kₚₑ",
                x_in,
                rope_d,
                d,
                kvl + rope_d,
                Some(format!("{kvl}:{}", kvl + rope_d)),
                false,
                if rope {
                    format!("Project the {rope_d}-dim key part that carries position, shared by all heads")
                } else {
                    format!("Project a {rope_d}-dim key part shared by all heads (no position: the model uses none)")
                },
            )
        }).at(Point::KPe));
        // dots.3 Note norms the shared key part before rotating it.
        let k_pe_in = if m.rope_key_norm {
            let mut norm = self
                .norm_step_as(
                    &spec.norm,
                    "Rotary key RMSNorm",
                    Role::KPeNorm,
                    "γkₚₑ",
                    "Kₚₑ",
                    "Kₚₑ′",
                    rope_d,
                    true,
                    None,
                )
                .at(Point::KPeNorm);
            if let Node::Step(s) = &mut norm {
                s.category = Category::Attention;
            }
            nodes.push(norm);
            "Kₚₑ′"
        } else {
            "Kₚₑ"
        };
        // Without RoPE (Kimi Linear) the shared part is a key part like the others.
        if rope {
            nodes.push(self.rope_step(("Kₚₑ", Point::KPeRot), k_pe_in, "Kₚₑᵣ", rope_d, true));
        } else if let TensorKind::Activation { cached } =
            &mut self.tensors.last_mut().expect("shared key").kind
        {
            *cached = true;
        }
        let (k_pe, q_in) = if rope {
            ("Kₚₑᵣ", "Qᵣ")
        } else {
            ("Kₚₑ", "Q")
        };

        let mut head = Vec::new();
        let nv = nope + vd;
        head.push(
            self.linear(lin(
                Role::KvB,
                "K up-projection",
                "Wkb",
                "Kₙₒₚₑ",
                "Ckv′",
                nope,
                kvl,
                h * nv,
                Some(format!("{nv}*i:{nv}*i+{nope}")),
                false,
                format!("Expand the latent to this head's {nope}-dim position-free key"),
            ))
            .at(Point::KNope),
        );
        head.push(
            self.linear(lin(
                Role::KvB,
                "V up-projection",
                "Wvb",
                "V",
                "Ckv′",
                vd,
                kvl,
                h * nv,
                Some(format!("{nv}*i+{nope}:{nv}*(i+1)")),
                false,
                format!("Expand the latent to this head's {vd}-dim value"),
            ))
            .at(Point::V),
        );
        let v = self.tensors.len() - 1;
        // A.X-K2's projection holds each head's query rows, then its gate rows.
        let (stored_q, q_rows) = if m.q_gate {
            (h * (qk + vd), format!("{}*i:{}*i+{qk}", qk + vd, qk + vd))
        } else {
            (h * qk, rows(0, qk, "i"))
        };
        let mut q_proj = self.linear(lin(
            q_role,
            "Q projection",
            "Wq",
            "Q",
            q_input,
            qk,
            q_cols,
            stored_q,
            Some(q_rows),
            false,
            if rope {
                format!("Project to this head's {qk}-dim query ({nope} position-free + {rope_d} rotary)")
            } else {
                format!("Project to this head's {qk}-dim query ({nope} for its own key part + {rope_d} for the shared one)")
            },
        )).at(Point::QProj);
        if let (Node::Step(s), Some((q_scale, _))) = (&mut q_proj, m.lora_scales) {
            s.equation += &format!(
                ", then × {} (√(hidden / q_lora))",
                crate::fmt::float(q_scale)
            );
        }
        head.push(q_proj);
        if rope {
            let qr = self.act("Qᵣ", self.seq(qk));
            let rope_text = self.rope_text();
            let q_rope = self
                .step(Draft {
                    title: "Q rotary position encoding".into(),
                    op: Op::Rope,
                    category: Category::Attention,
                    inputs: vec![],
                    output: qr,
                    operation: format!("Rotate the last {rope_d} dims of Q by position"),
                    equation: format!("Qᵣ = [Q[:{nope}], RoPE(Q[{nope}:], pos)], {rope_text}"),
                })
                .at(Point::Q);
            let layers = spec.layers_where(|l| l.rope);
            head.push(self.gate(q_rope, &layers));
        }
        // Mistral 4 scales the whole query up with position.
        let q_in = match a.query_scale {
            Some(qs) => {
                head.push(self.query_scale(q_in, "Qₜ", qs));
                "Qₜ"
            }
            None => q_in,
        };
        let keys = format!("[Kₙₒₚₑ; {k_pe}]ᵀ");
        let kt = self.act(&keys, [Dim::Seq, n(qk)]);
        let s = self.act("S", [Dim::Seq, Dim::Seq]);
        let mut equation = self.scores_equation(&keys, q_in);
        if let Some(ix) = &m.indexer {
            equation += &format!(
                ", kept only at the {} keys the indexer chose (Mᵢₓ)",
                ix.top_k
            );
        }
        head.push(
            self.step(Draft {
                title: "Attention scores".into(),
                op: Op::Scores { dim: qk },
                category: Category::Attention,
                inputs: vec![kt],
                output: s,
                operation:
                    if rope {
                    "Score queries against keys: the head's own key part and the shared rotary part"
                } else {
                    "Score queries against keys: the head's own key part and the part shared by all heads"
                }
                .into(),
                equation,
            }),
        );
        head.extend(self.softmax_and_values(Some("i"), v, "Hᵢ", None));
        nodes.push(Node::Scope(self.scope(
            ScopeKind::Head,
            "Attention Head i",
            "Head end",
            h,
            head,
        )));
        nodes.extend(self.attention_output(format!("{vd}×{h}={}", vd * h), x_in));
        nodes
    }
}
