//! Gated DeltaNet and Kimi delta attention.

use super::*;

/// A DeltaNet's PyTorch class and the role whose module holds it.
pub(super) fn delta_class(s: &DeltaNet) -> (&'static str, Role) {
    match s.store {
        DeltaStore::Grouped | DeltaStore::Separate | DeltaStore::Fused => {
            ("GatedDeltaNet", Role::SsmIn)
        }
        DeltaStore::Olmo => ("GatedDeltaNet", Role::SsmQ),
        DeltaStore::Kimi | DeltaStore::Bailing => ("KimiDeltaAttention", Role::SsmQ),
    }
}

/// Gated DeltaNet, its memory written as the recurrence, token after token.
pub(super) fn gated_delta_net(spec: &Spec, n: &Names) -> String {
    let Some(s) = spec.delta() else {
        unreachable!("only models with a Gated DeltaNet draw one")
    };
    if s.channel_decay() {
        return kimi_delta_attention(spec, s, n);
    }
    let (kh, vh, dk, dv, r) = (
        s.key_heads,
        s.value_heads,
        s.key_dim,
        s.value_dim,
        s.ratio(),
    );
    let d = spec.hidden;
    let (inp, conv) = (n.attr(Role::SsmIn), n.attr(Role::SsmConv));
    let (projections, split) = match s.store {
        DeltaStore::Kimi | DeltaStore::Bailing => unreachable!("drawn by kimi_delta_attention"),
        DeltaStore::Grouped => {
            let ba = n.attr(Role::SsmBa);
            (
                format!("        self.{inp} = nn.Linear({d}, {}, bias=False)  # per key head: q, k, its {r} value heads' v, their z\n        self.{ba} = nn.Linear({d}, {}, bias=False)  # per key head: its value heads' beta, then alpha\n", 2 * s.keys() + 2 * s.values(), 2 * vh),
                format!("        p = self.{inp}(x).view(B_, T, {kh}, {})\n        q, k, v, z = p.split([{dk}, {dk}, {rdv}, {rdv}], dim=-1)\n        u = torch.cat([q.reshape(B_, T, -1), k.reshape(B_, T, -1), v.reshape(B_, T, -1)], dim=-1)\n        z = z.reshape(B_, T, {vh}, {dv})\n        beta, alpha = self.{ba}(x).view(B_, T, {kh}, {two_r}).split([{r}, {r}], dim=-1)\n        beta, alpha = beta.reshape(B_, T, {vh}), alpha.reshape(B_, T, {vh})\n", 2 * dk + 2 * r * dv, rdv = r * dv, two_r = 2 * r),
            )
        }
        DeltaStore::Separate => {
            let (z, b, a) = (
                n.attr(Role::SsmZ),
                n.attr(Role::SsmBeta),
                n.attr(Role::SsmAlpha),
            );
            (
                format!("        self.{inp} = nn.Linear({d}, {}, bias=False)  # q | k | v\n        self.{z} = nn.Linear({d}, {}, bias=False)\n        self.{b} = nn.Linear({d}, {vh}, bias=False)\n        self.{a} = nn.Linear({d}, {vh}, bias=False)\n", s.conv_dim(), s.values()),
                format!("        u = self.{inp}(x)\n        z = self.{z}(x).view(B_, T, {vh}, {dv})\n        beta, alpha = self.{b}(x), self.{a}(x)\n"),
            )
        }
        DeltaStore::Fused => (
            format!("        self.{inp} = nn.Linear({d}, {}, bias=False)  # q | k | v | z | beta | alpha\n", s.conv_dim() + s.values() + 2 * vh),
            format!("        u, z, beta, alpha = self.{inp}(x).split([{}, {}, {vh}, {vh}], dim=-1)\n        z = z.reshape(B_, T, {vh}, {dv})\n", s.conv_dim(), s.values()),
        ),
        DeltaStore::Olmo => {
            let a = |r: Role| n.attr(r);
            let (q, k, v, z, b, al) = (
                a(Role::SsmQ),
                a(Role::SsmK),
                a(Role::SsmV),
                a(Role::SsmZ),
                a(Role::SsmBeta),
                a(Role::SsmAlpha),
            );
            (
                format!("        self.{q} = nn.Linear({d}, {keys}, bias=False)\n        self.{k} = nn.Linear({d}, {keys}, bias=False)\n        self.{v} = nn.Linear({d}, {values}, bias=False)\n        self.{z} = nn.Linear({d}, {values}, bias=False)  # the output gate\n        self.{b} = nn.Linear({d}, {vh}, bias=False)\n        self.{al} = nn.Linear({d}, {vh}, bias=False)\n", keys = s.keys(), values = s.values()),
                format!("        u = torch.cat([self.{q}(x), self.{k}(x), self.{v}(x)], dim=-1)\n        z = self.{z}(x).view(B_, T, {vh}, {dv})\n        beta, alpha = self.{b}(x), self.{al}(x)\n"),
            )
        }
    };
    // One convolution over Q, K and V, or one stored for each (their channels side by side).
    let k = s.conv_kernel;
    let (conv_init, convolve) = if s.split_qkv() {
        let (cq, ck, cv) = (
            n.attr(Role::SsmConvQ),
            n.attr(Role::SsmConvK),
            n.attr(Role::SsmConvV),
        );
        (
            format!("        conv = lambda ch: nn.Conv1d(ch, ch, {k}, groups=ch, padding={}, bias=False)\n        self.{cq}, self.{ck}, self.{cv} = conv({keys}), conv({keys}), conv({values})\n", k - 1, keys = s.keys(), values = s.values()),
            format!("        w = torch.cat([self.{cq}.weight, self.{ck}.weight, self.{cv}.weight])  # one convolution over the three\n        u = F.silu(causal_conv(u, w, None, st))  # the last {k} positions\n"),
        )
    } else {
        (
            format!("        self.{conv} = nn.Conv1d({ch}, {ch}, {k}, groups={ch}, padding={}, bias=False)\n", k - 1, ch = s.conv_dim()),
            format!("        u = F.silu(causal_conv(u, self.{conv}.weight, None, st))  # the last {k} positions\n"),
        )
    };
    let beta = if s.beta_scale == 1.0 {
        "torch.sigmoid(beta.float())".to_string()
    } else {
        format!(
            "{} * torch.sigmoid(beta.float())  # past 1, the update overshoots",
            s.beta_scale
        )
    };
    fill(
        r#"class GatedDeltaNet(nn.Module):
    """Gated DeltaNet: ${vh} value heads, each carrying a ${dk} x ${dv} memory from key to value.

    transformers computes a prompt in chunks of 64; the recurrence below is the same sum.
    """

    def __init__(self):
        super().__init__()
${projections}${conv_init}        self.${dt_bias} = nn.Parameter(torch.ones(${vh}))
        self.${a_log} = nn.Parameter(torch.zeros(${vh}))  # decay rates, A = exp(A_log)
        self.${norm} = nn.Module()
        self.${norm}.weight = nn.Parameter(torch.ones(${dv}))  # shared by the heads
        self.${out_proj} = nn.Linear(${values}, ${d}, bias=False)

    def forward(self, x):  # [B, T, ${d}]
        B_, T, _ = x.shape
        st = state_of(self)  # decoding: the conv inputs and memory of earlier calls
${split}${convolve}        q, k, v = u.float().split([${keys}, ${keys}, ${values}], dim=-1)
        l2 = lambda t: t * torch.rsqrt((t * t).sum(-1, keepdim=True) + 1e-6)  # each head to unit length
        q = l2(q.view(B_, T, ${kh}, ${dk})).repeat_interleave(${r}, dim=2) / ${dk} ** 0.5  # each value head its key head's
        k = l2(k.view(B_, T, ${kh}, ${dk})).repeat_interleave(${r}, dim=2)
        v = v.view(B_, T, ${vh}, ${dv})
        beta = ${beta}  # [B, T, ${vh}]
        g = -torch.exp(self.${a_log}.float()) * F.softplus(alpha.float() + self.${dt_bias})  # log decay
        state = st.get("memory", x.new_zeros(B_, ${vh}, ${dk}, ${dv}, dtype=torch.float32))
        outs = []
        for t in range(T):
            state = state * torch.exp(g[:, t])[..., None, None]
            recall = (state * k[:, t, :, :, None]).sum(-2)  # what each head's memory holds for k
            state = state + k[:, t, :, :, None] * ((v[:, t] - recall) * beta[:, t, :, None])[..., None, :]
            outs.append((state * q[:, t, :, :, None]).sum(-2))
        st["memory"] = state
        o = torch.stack(outs, dim=1)  # [B, T, ${vh}, ${dv}]
        o = o * torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + ${eps})  # RMS per head
        o = self.${norm}.weight * o.to(x.dtype) * ${gate}(z.float()).to(x.dtype)
        return self.${out_proj}(o.reshape(B_, T, ${values}))"#,
        &[
            ("vh", vh.to_string()),
            ("kh", kh.to_string()),
            ("dk", dk.to_string()),
            ("dv", dv.to_string()),
            ("r", r.to_string()),
            ("d", d.to_string()),
            ("keys", s.keys().to_string()),
            ("values", s.values().to_string()),
            ("eps", fmt_f(s.eps)),
            ("projections", projections),
            ("split", split),
            ("conv_init", conv_init),
            ("convolve", convolve),
            ("beta", beta),
            // Qwen4-Exp's "sigmoid" output gate, or SiLU.
            (
                "gate",
                if s.sigmoid_gate {
                    "torch.sigmoid"
                } else {
                    "F.silu"
                }
                .into(),
            ),
            ("dt_bias", n.attr(Role::SsmDtBias)),
            ("a_log", n.attr(Role::SsmALog)),
            ("norm", n.attr(Role::SsmNorm)),
            ("out_proj", n.attr(Role::SsmOut)),
        ],
    )
}

/// Kimi Delta Attention: the delta rule with a decay per key channel and a sigmoid output gate.
pub(super) fn kimi_delta_attention(spec: &Spec, s: &DeltaNet, n: &Names) -> String {
    let (h, dk, dv) = (s.value_heads, s.key_dim, s.value_dim);
    let a = |r: Role| n.attr(r);
    fill(
        r#"class KimiDeltaAttention(nn.Module):
    """Kimi Delta Attention: ${h} heads, each carrying a ${dk} x ${dv} memory from key to value,
    each key channel of it decaying at its own rate.

    transformers computes a prompt in chunks of 64; the recurrence below is the same sum.
    """

    def __init__(self):
        super().__init__()
        self.${q} = nn.Linear(${d}, ${keys}, bias=False)
        self.${k} = nn.Linear(${d}, ${keys}, bias=False)
        self.${v} = nn.Linear(${d}, ${values}, bias=False)
        conv = lambda ch: nn.Conv1d(ch, ch, ${kernel}, groups=ch, padding=${pad}, bias=False)
        self.${cq}, self.${ck}, self.${cv} = conv(${keys}), conv(${keys}), conv(${values})
${gates_init}        self.${dt_bias} = nn.Parameter(torch.zeros(${keys}))  # one per key channel
        self.${a_log} = nn.Parameter(torch.zeros(${a_shape}))  # decay rates per head, A = exp(A_log)
        self.${b} = nn.Linear(${d}, ${h}, bias=False)
        self.${norm} = nn.Module()
        self.${norm}.weight = nn.Parameter(torch.ones(${dv}))  # shared by the heads
        self.${out_proj} = nn.Linear(${values}, ${d}, bias=False)

    def forward(self, x):  # [B, T, ${d}]
        B_, T, _ = x.shape
        st = state_of(self)  # decoding: the conv inputs and memory of earlier calls
        conv = lambda c, u, key: F.silu(causal_conv(u, c.weight, None, st, key))  # the last ${kernel} positions
        q = conv(self.${cq}, self.${q}(x), "q").float().view(B_, T, ${h}, ${dk})
        k = conv(self.${ck}, self.${k}(x), "k").float().view(B_, T, ${h}, ${dk})
        v = conv(self.${cv}, self.${v}(x), "v").float().view(B_, T, ${h}, ${dv})
        l2 = lambda t: t / torch.sqrt((t * t).sum(-1, keepdim=True) + 1e-6)  # each head to unit length
        q, k = l2(q) / ${dk} ** 0.5, l2(k)
        beta = torch.sigmoid(self.${b}(x).float())  # [B, T, ${h}]
        f = (${f} + self.${dt_bias}).view(B_, T, ${h}, ${dk})
        g = ${g}  # [B, T, ${h}, ${dk}]: log decay per key channel
        state = st.get("memory", x.new_zeros(B_, ${h}, ${dk}, ${dv}, dtype=torch.float32))
        outs = []
        for t in range(T):
            state = state * torch.exp(g[:, t])[..., None]  # each key channel's row decays apart
            recall = (state * k[:, t, :, :, None]).sum(-2)  # what each head's memory holds for k
            state = state + k[:, t, :, :, None] * ((v[:, t] - recall) * beta[:, t, :, None])[..., None, :]
            outs.append((state * q[:, t, :, :, None]).sum(-2))
        st["memory"] = state
        o = torch.stack(outs, dim=1)  # [B, T, ${h}, ${dv}]
        o = o * torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + ${eps})  # RMS per head
        gate = ${gate}.float().view(B_, T, ${h}, ${dv})
        o = (self.${norm}.weight * o * torch.sigmoid(gate)).to(x.dtype)
        return self.${out_proj}(o.reshape(B_, T, ${values}))"#,
        &[
            ("h", h.to_string()),
            ("dk", dk.to_string()),
            ("dv", dv.to_string()),
            ("d", spec.hidden.to_string()),
            ("kernel", s.conv_kernel.to_string()),
            ("pad", (s.conv_kernel - 1).to_string()),
            ("keys", s.keys().to_string()),
            ("values", s.values().to_string()),
            ("eps", fmt_f(s.eps)),
            ("q", a(Role::SsmQ)),
            ("k", a(Role::SsmK)),
            ("v", a(Role::SsmV)),
            ("cq", a(Role::SsmConvQ)),
            ("ck", a(Role::SsmConvK)),
            ("cv", a(Role::SsmConvV)),
            ("b", a(Role::SsmBeta)),
            (
                "gates_init",
                if s.store == DeltaStore::Kimi {
                    format!("        self.{fa} = nn.Linear({d}, {dk}, bias=False)  # the forget gate, through rank {dk}\n        self.{fb} = nn.Linear({dk}, {keys}, bias=False)\n        self.{ga} = nn.Linear({d}, {dk}, bias=False)  # the output gate, through rank {dk}\n        self.{gb} = nn.Linear({dk}, {values}, bias=False)\n", fa = a(Role::SsmFA), fb = a(Role::SsmFB), ga = a(Role::SsmGA), gb = a(Role::SsmGB), d = spec.hidden, keys = s.keys(), values = s.values())
                } else {
                    format!("        self.{f} = nn.Linear({d}, {keys}, bias=False)  # the forget gate's step\n        self.{g} = nn.Linear({d}, {values}, bias=False)  # the output gate\n", f = a(Role::SsmFB), g = a(Role::SsmGB), d = spec.hidden, keys = s.keys(), values = s.values())
                },
            ),
            (
                "a_shape",
                if s.store == DeltaStore::Kimi {
                    format!("1, 1, {h}, 1")
                } else {
                    h.to_string()
                },
            ),
            (
                "f",
                if s.store == DeltaStore::Kimi {
                    format!("self.{}(self.{}(x)).float()", a(Role::SsmFB), a(Role::SsmFA))
                } else {
                    format!("self.{}(x).float()", a(Role::SsmFB))
                },
            ),
            (
                "gate",
                if s.store == DeltaStore::Kimi {
                    format!("self.{}(self.{}(x))", a(Role::SsmGB), a(Role::SsmGA))
                } else {
                    format!("self.{}(x)", a(Role::SsmGB))
                },
            ),
            (
                "g",
                match s.gate_floor {
                    Some(floor) => format!(
                        "{} * torch.sigmoid(torch.exp(self.{}.float()).view({h}, 1) * f)  # bounded below",
                        fmt_f(floor),
                        a(Role::SsmALog)
                    ),
                    None => format!(
                        "-torch.exp(self.{}.float()).view({h}, 1) * F.softplus(f)",
                        a(Role::SsmALog)
                    ),
                },
            ),
            ("dt_bias", a(Role::SsmDtBias)),
            ("a_log", a(Role::SsmALog)),
            ("norm", a(Role::SsmNorm)),
            ("out_proj", a(Role::SsmOut)),
        ],
    )
}
