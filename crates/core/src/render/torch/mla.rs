//! Multi-head latent attention (DeepSeek-V2/V3, GLM-5, Kimi): its class, as the checkpoint names
//! its latents.

use super::*;

/// Latent attention as the module `class`.
pub(super) fn mla(spec: &Spec, n: &Names, class: &str) -> String {
    let a = &spec.attn;
    let m = a.mla.as_ref().expect("MLA");
    let (d, h, vd) = (spec.hidden, a.heads, a.v_head_dim);
    let (nope, rd, kvl) = (m.qk_nope_head_dim, m.qk_rope_head_dim, m.kv_lora_rank);
    let qk = nope + rd;
    let eps = fmt_f(m.latent_eps);
    let index = n.inside(Role::IndexQ);
    let index = index.split('.').next().unwrap_or("indexer");
    // dots.3 Note's indexer reads the query latent scaled, as its query is.
    let index_in = match m.lora_scales {
        Some((q, _)) => format!("q_latent * {}", fmt_f(q)),
        None => "q_latent".into(),
    };
    let (q_init, q_fwd) = match m.q_lora_rank {
        Some(ql) if m.indexer.is_some() => {
            let (qa, qan, qb) = (n.attr(Role::QA), n.attr(Role::QANorm), n.attr(Role::QB));
            let (make, choose) = if own_indexers(spec).is_some() {
                (
                    format!("        self.{index} = Indexer() if own_indexer else None  # picks the keys each query attends to\n"),
                    format!("        if self.{index} is not None:  # the other layers reuse the last indexer's choice\n            Attention.chosen = self.{index}(x, {index_in}, rope)\n        keep = Attention.chosen  # [B, T, T]\n"),
                )
            } else {
                (
                    format!("        self.{index} = Indexer()  # picks the keys each query attends to\n"),
                    format!("        keep = self.{index}(x, {index_in}, rope)  # [B, T, T]\n"),
                )
            };
            if m.q_gate {
                // A.X-K2: the query and its gate from the normed and the raw latent.
                let vd = a.v_head_dim;
                (
                    format!("        self.{qa} = nn.Linear({d}, {ql}, bias={})  # Q latent\n        self.{qan} = Norm({ql}, eps={eps})  # the latents' norms at their own eps\n        self.{qb} = nn.Linear(2 * {ql}, {h} * ({qk} + {vd}), bias=False)  # each head's query, then its gate\n{make}", py_bool(m.bias)),
                    format!("        raw = self.{qa}(x)\n        q_latent = self.{qan}(raw)\n{choose}        qg = self.{qb}(torch.cat([q_latent, raw], dim=-1)).view(B, T, {h}, {qk} + {vd})\n        q, gate = qg[..., :{qk}].reshape(B, T, -1), qg[..., {qk}:].reshape(B, T, -1)\n"),
                )
            } else {
                (
                    format!("        self.{qa} = nn.Linear({d}, {ql}, bias={})  # Q latent\n        self.{qan} = Norm({ql}, eps={eps})  # the latents' norms at their own eps\n        self.{qb} = nn.Linear({ql}, {h} * {qk}, bias=False)\n{make}", py_bool(m.bias)),
                    format!("        q_latent = self.{qan}(self.{qa}(x))\n{choose}        q = self.{qb}(q_latent)\n"),
                )
            }
        }
        Some(ql) => {
            let (qa, qan, qb) = (n.attr(Role::QA), n.attr(Role::QANorm), n.attr(Role::QB));
            (
                format!("        self.{qa} = nn.Linear({d}, {ql}, bias={})  # Q latent\n        self.{qan} = Norm({ql}, eps={eps})  # the latents' norms at their own eps\n        self.{qb} = nn.Linear({ql}, {h} * {qk}, bias=False)\n", py_bool(m.bias)),
                format!("        q = self.{qb}(self.{qan}(self.{qa}(x)))\n"),
            )
        }
        None => {
            let q = n.attr(Role::Q);
            (
                format!("        self.{q} = nn.Linear({d}, {h} * {qk}, bias=False)\n"),
                format!("        q = self.{q}(x)\n"),
            )
        }
    };
    let (kva, kvan, kvb, o) = (
        n.attr(Role::KvA),
        n.attr(Role::KvANorm),
        n.attr(Role::KvB),
        n.attr(Role::O),
    );
    // LongCat-Flash scales the query and the normed KV latent (so keys and values both).
    let (q_fwd, kv_scale) = match m.lora_scales {
        Some((q, kv)) => (
            q_fwd + &format!("        q = q * {}  # sqrt(hidden / q_lora)\n", fmt_f(q)),
            format!(" * {}", fmt_f(kv)),
        ),
        None => (q_fwd, String::new()),
    };
    let indexer = match (&m.indexer, m.q_lora_rank) {
        (Some(ix), Some(ql)) => indexer(ix, ql, d, rd, n) + "\n\n\n",
        _ => String::new(),
    };
    let keep = m.indexer.as_ref().map(|_| "keep[:, None]");
    indexer
        + &fill(
            r#"class ${class}(nn.Module):
    """Multi-head latent attention: the cache holds c_kv (${kvl}) and k_pe (${rd}) per token."""

    def __init__(self, span=("full", 0), use_rope=True${own_param}):
        super().__init__()
        self.span, self.use_rope = span, use_rope
${q_init}        self.${kva} = nn.Linear(${d}, ${kvl} + ${rd}, bias=${bias})  # latent + one shared ${shared} key
        self.${kvan} = Norm(${kvl}, eps=${eps})
${k_pe_norm_init}        self.${kvb} = nn.Linear(${kvl}, ${h} * (${nope} + ${vd}), bias=False)
        self.${o} = nn.Linear(${h} * ${vd}, ${d}, bias=${o_bias})
${gate_init}
    def forward(self, x, rope=None):  # x: [B, T, ${d}]
        B, T, _ = x.shape
${q_fwd}        q = q.view(B, T, ${h}, ${qk}).transpose(1, 2)  # [B, ${h}, T, ${qk}]
        q_nope, q_pe = q.split([${nope}, ${rd}], dim=-1)
        c_kv, k_pe = self.${kva}(x).split([${kvl}, ${rd}], dim=-1)
        kv = self.${kvb}(self.${kvan}(c_kv)${kv_scale}).view(B, T, ${h}, ${nope} + ${vd}).transpose(1, 2)
        k_nope, v = kv.split([${nope}, ${vd}], dim=-1)
${position}        q = torch.cat([q_nope, q_pe], dim=-1)
${query_scale}        k = torch.cat([k_nope, k_pe], dim=-1)
${attend}${gate}        return self.${o}(out)  # [B, T, ${d}]"#,
            &[
                ("class", class.to_string()),
                ("kvl", kvl.to_string()),
                ("rd", rd.to_string()),
                ("eps", eps.clone()),
                (
                    "k_pe_norm_init",
                    if m.rope_key_norm {
                        format!(
                            "        self.{} = Norm({rd})  # the shared rotary key's own norm\n",
                            n.attr(Role::KPeNorm)
                        )
                    } else {
                        String::new()
                    },
                ),
                ("q_init", q_init),
                ("q_fwd", q_fwd),
                ("kva", kva),
                ("kvan", kvan),
                ("kvb", kvb),
                ("kv_scale", kv_scale),
                ("o", o),
                ("d", d.to_string()),
                ("h", h.to_string()),
                ("nope", nope.to_string()),
                ("vd", vd.to_string()),
                ("qk", qk.to_string()),
                ("attend", attend(spec, h, vd, keep)),
                ("gate_init", {
                    let sinks = if a.sinks {
                        format!(
                            "        self.{} = nn.Parameter(torch.zeros({h}))  # one learned sink logit per head\n",
                            n.inside(Role::Sinks)
                        )
                    } else {
                        String::new()
                    };
                    sinks
                        + &match a.out_gate {
                            // A.X-K2's gate comes with the query.
                            Some(g) if g.in_query() => String::new(),
                            Some(g) => format!(
                                "        self.{} = {}  # the output gate\n{}",
                                n.inside(Role::AttnGate),
                                linear(
                                    spec,
                                    &d.to_string(),
                                    &if g.per_head {
                                        h.to_string()
                                    } else {
                                        format!("{h} * {vd}")
                                    },
                                    false
                                ),
                                gate_logits(n, g, h, vd).0
                            ),
                            None => String::new(),
                        }
                }),
                ("gate", {
                    match a.out_gate {
                        Some(g) if g.in_query() => {
                            "        out = out * torch.sigmoid(gate)  # gated by the query projection's gate rows\n".to_string()
                        }
                        Some(g) => {
                            let z = gate_logits(n, g, h, vd).1;
                            let f = if g.softplus {
                                format!("F.softplus({z}.float()).to(out.dtype)")
                            } else {
                                format!("torch.sigmoid({z})")
                            };
                            if g.per_head {
                                format!("        out = (out.view(B, T, {h}, {vd}) * {f}.unsqueeze(-1)).view(B, T, {h} * {vd})  # each head gated by the input\n")
                            } else {
                                format!("        out = out * {f}  # gated by the input\n")
                            }
                        }
                        None => String::new(),
                    }
                }),
                (
                    "position",
                    if matches!(spec.position, Position::Rope(_)) {
                        let normed = if m.rope_key_norm {
                            format!(
                                "        k_pe = self.{}(k_pe)  # normed, then rotated\n",
                                n.attr(Role::KPeNorm)
                            )
                        } else {
                            String::new()
                        };
                        format!("{normed}        cos, sin = rope\n        q_pe = apply_rope(q_pe, cos, sin)\n        k_pe = apply_rope(k_pe.view(B, 1, T, {rd}), cos, sin).expand(B, {h}, T, {rd})\n")
                    } else {
                        format!("        k_pe = k_pe.view(B, 1, T, {rd}).expand(B, {h}, T, {rd})  # no positions: the shared part as it is\n")
                    },
                ),
                (
                    "shared",
                    if matches!(spec.position, Position::Rope(_)) {
                        "rotary"
                    } else {
                        "position-free"
                    }
                    .into(),
                ),
                (
                    "own_param",
                    if own_indexers(spec).is_some() {
                        ", own_indexer=True".into()
                    } else {
                        String::new()
                    },
                ),
                ("bias", py_bool(m.bias)),
                ("o_bias", py_bool(a.o_bias)),
                (
                    "query_scale",
                    a.query_scale.map_or(String::new(), |qs| {
                        format!(
                            "        q = q * {}[None, None, :, None].to(q.dtype)  # queries grow with position\n",
                            super::attention::query_factor(qs)
                        )
                    }),
                ),
            ],
        )
}
