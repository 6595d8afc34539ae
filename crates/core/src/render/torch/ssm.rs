//! Mamba and Mamba-2 mixers, and the short convolution mixer.

use super::*;

/// LFM2's short gated convolution.
pub(super) fn short_conv_class(spec: &Spec, n: &Names) -> String {
    let Some(c) = spec.short_conv() else {
        unreachable!("only models with a short convolution draw one")
    };
    let d = spec.hidden;
    fill(
        r#"class ShortConv(nn.Module):
    """B, C and x from one projection; B * x convolved over the last ${k} positions, gated by C."""

    def __init__(self):
        super().__init__()
        self.${in_proj} = nn.Linear(${d}, ${three_d}, bias=${bias})  # B | C | x
        self.${conv} = nn.Conv1d(${d}, ${d}, ${k}, groups=${d}, padding=${pad}, bias=${bias})
        self.${out_proj} = nn.Linear(${d}, ${d}, bias=${bias})

    def forward(self, x):  # [B, T, ${d}]
        b, c, xs = self.${in_proj}(x).chunk(3, dim=-1)
        u = causal_conv(b * xs, self.${conv}.weight, self.${conv}.bias, state_of(self))  # the last ${k} positions
        return self.${out_proj}(c * u)"#,
        &[
            ("d", d.to_string()),
            ("three_d", (3 * d).to_string()),
            ("k", c.kernel.to_string()),
            ("pad", (c.kernel - 1).to_string()),
            ("bias", py_bool(c.bias)),
            ("in_proj", n.attr(Role::SsmIn)),
            ("conv", n.attr(Role::SsmConv)),
            ("out_proj", n.attr(Role::SsmOut)),
        ],
    )
}

/// Mamba's selective scan (S6), written as the recurrence, token after token.
pub(super) fn mamba(spec: &Spec, n: &Names) -> String {
    let Some(s) = spec.s6() else {
        unreachable!("only models with Mamba's scan draw one")
    };
    let (i, st, r, k) = (s.inner, s.state, s.dt_rank, s.conv_kernel);
    let (norms, norm_init) = match s.bcdt_norm {
        Some(b) if b.weighted => {
            let (dn, bn, cn) = (
                n.attr(Role::SsmDtNorm),
                n.attr(Role::SsmBNorm),
                n.attr(Role::SsmCNorm),
            );
            (
                format!("        step, b, c = self.{dn}(step), self.{bn}(b), self.{cn}(c)\n"),
                format!("        self.{dn} = Norm({r}, eps={eps})  # the step's input, B and C normed\n        self.{bn} = Norm({st}, eps={eps})\n        self.{cn} = Norm({st}, eps={eps})\n", eps = fmt_f(b.eps)),
            )
        }
        Some(b) => (
            format!(
                "        rms = lambda v: v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + {})  # no weight\n        step, b, c = rms(step), rms(b), rms(c)\n",
                fmt_f(b.eps)
            ),
            String::new(),
        ),
        None => (String::new(), String::new()),
    };
    fill(
        r#"class Mamba(nn.Module):
    """Mamba's selective scan: ${i} channels, each carrying a ${st}-wide state from token to token."""

    def __init__(self):
        super().__init__()
        self.${in_proj} = nn.Linear(${d}, ${two_i}, bias=${bias})  # x, then the gate z
        self.${conv1d} = nn.Conv1d(${i}, ${i}, ${k}, groups=${i}, padding=${pad}, bias=${conv_bias})
        self.${x_proj} = nn.Linear(${i}, ${sel}, bias=False)  # the step's input, B, C
        self.${dt_proj} = nn.Linear(${r}, ${i})  # a step per channel
${norm_init}        self.${a_log} = nn.Parameter(torch.zeros(${i}, ${st}))  # decay rates, A = -exp(A_log)
        self.${skip} = nn.Parameter(torch.ones(${i}))
        self.${out_proj} = nn.Linear(${i}, ${d}, bias=${bias})

    def forward(self, x):  # [B, T, ${d}]
        B_, T, _ = x.shape
        st = state_of(self)  # decoding: the conv inputs and state of earlier calls
        xs, z = self.${in_proj}(x).chunk(2, dim=-1)
        xs = F.silu(causal_conv(xs, self.${conv1d}.weight, self.${conv1d}.bias, st))  # the last ${k} positions
        step, b, c = self.${x_proj}(xs).split([${r}, ${st}, ${st}], dim=-1)
${norms}        dt = F.softplus(self.${dt_proj}(step)).float()  # [B, T, ${i}]
        a = -torch.exp(self.${a_log}.float())  # [${i}, ${st}]
        xs, b, c = xs.float(), b.float(), c.float()
        state = st.get("ssm", x.new_zeros(B_, ${i}, ${st}, dtype=torch.float32))
        ys = []
        for t in range(T):
            state = torch.exp(dt[:, t, :, None] * a) * state + (dt[:, t] * xs[:, t])[..., None] * b[:, t, None, :]
            ys.append((state * c[:, t, None, :]).sum(-1) + self.${skip} * xs[:, t])
        st["ssm"] = state
        y = torch.stack(ys, dim=1) * F.silu(z.float())  # gated by z
        return self.${out_proj}(y.to(x.dtype))"#,
        &[
            ("i", i.to_string()),
            ("two_i", (2 * i).to_string()),
            ("st", st.to_string()),
            ("r", r.to_string()),
            ("k", k.to_string()),
            ("pad", (k - 1).to_string()),
            ("sel", (r + 2 * st).to_string()),
            ("d", spec.hidden.to_string()),
            ("norms", norms),
            ("norm_init", norm_init),
            ("bias", py_bool(s.bias)),
            ("conv_bias", py_bool(s.conv_bias)),
            ("in_proj", n.attr(Role::SsmIn)),
            ("conv1d", n.attr(Role::SsmConv)),
            ("x_proj", n.attr(Role::SsmX)),
            ("dt_proj", n.attr(Role::SsmDt)),
            ("a_log", n.attr(Role::SsmALog)),
            ("skip", n.attr(Role::SsmD)),
            ("out_proj", n.attr(Role::SsmOut)),
        ],
    )
}

/// Mamba2's mixer, its scan written as the recurrence, token after token.
pub(super) fn mamba2(spec: &Spec, n: &Names) -> String {
    let Some(s) = spec.ssm() else {
        unreachable!("only models with a state-space mixer draw one")
    };
    let (h, p, st, g, k) = (s.heads, s.head_dim, s.state, s.groups, s.conv_kernel);
    let (inner, conv) = (s.inner(), s.conv_dim());
    fill(
        r#"class Mamba2(nn.Module):
    """Mamba2's mixer: ${h} heads, each carrying a ${p} x ${st} state from token to token.

    transformers computes a prompt in chunks (SSD); the recurrence below is the same sum.
    """

    def __init__(self):
        super().__init__()
        self.${in_proj} = nn.Linear(${d}, ${proj}, bias=${bias})  # z, then x | B | C, then a step per head
        self.${conv1d} = nn.Conv1d(${conv}, ${conv}, ${k}, groups=${conv}, padding=${pad}, bias=${conv_bias})
        self.${dt_bias} = nn.Parameter(torch.zeros(${h}))
        self.${a_log} = nn.Parameter(torch.zeros(${h}))  # decay rates, A = -exp(A_log)
        self.${skip} = nn.Parameter(torch.ones(${h}))
${norm_init}        self.${out_proj} = nn.Linear(${inner}, ${d}, bias=${bias})

    def forward(self, x):  # [B, T, ${d}]
        B_, T, _ = x.shape
        p = self.${in_proj}(x)${part_mults}
        z, xbc, dt = p.split([${inner}, ${conv}, ${h}], dim=-1)
        st = state_of(self)  # decoding: the conv inputs and state of earlier calls
        xbc = F.silu(causal_conv(xbc, self.${conv1d}.weight, self.${conv1d}.bias, st))  # the last ${k} positions
        xs, b, c = xbc.split([${inner}, ${gn}, ${gn}], dim=-1)
        xs = xs.view(B_, T, ${h}, ${p}).float()
        b = b.view(B_, T, ${g}, ${st}).float().repeat_interleave(${per_group}, dim=2)  # each head its group's B
        c = c.view(B_, T, ${g}, ${st}).float().repeat_interleave(${per_group}, dim=2)
        dt = F.softplus(dt.float() + self.${dt_bias})${floor}  # [B, T, ${h}]
        a = -torch.exp(self.${a_log}.float())  # [${h}]
        state = st.get("ssm", x.new_zeros(B_, ${h}, ${p}, ${st}, dtype=torch.float32))
        ys = []
        for t in range(T):
            decay = torch.exp(dt[:, t] * a)[..., None, None]  # [B, ${h}, 1, 1]
            state = decay * state + (dt[:, t, :, None] * xs[:, t])[..., None] * b[:, t, :, None, :]
            ys.append((state * c[:, t, :, None, :]).sum(-1) + self.${skip}[:, None] * xs[:, t])
        st["ssm"] = state
        y = torch.stack(ys, dim=1).reshape(B_, T, ${inner})
${gate}        return self.${out_proj}(y)"#,
        &[
            ("h", h.to_string()),
            ("p", p.to_string()),
            ("st", st.to_string()),
            ("g", g.to_string()),
            ("k", k.to_string()),
            ("pad", (k - 1).to_string()),
            ("d", spec.hidden.to_string()),
            ("inner", inner.to_string()),
            ("conv", conv.to_string()),
            ("gn", (g * st).to_string()),
            ("proj", s.in_proj().to_string()),
            ("per_group", (h / g).to_string()),
            ("per_norm", (inner / g).to_string()),
            (
                "norm_init",
                if s.gate.normed() {
                    format!("        self.{norm} = nn.Module()\n        self.{norm}.weight = nn.Parameter(torch.ones({inner}))\n", norm = n.attr(Role::SsmNorm))
                } else {
                    String::new()
                },
            ),
            (
                "part_mults",
                if s.part_mults == [1.0; 5] {
                    String::new()
                } else {
                    let m: Vec<String> = s.part_mults.iter().map(|&x| fmt_f(x)).collect();
                    let gn = g * st;
                    format!(" * torch.tensor([{}]).repeat_interleave(torch.tensor([{inner}, {inner}, {gn}, {gn}, {h}]))  # z, x, B, C, dt scaled (muP)", m.join(", "))
                },
            ),
            ("gate", {
                let rms = format!("        y = y.view(B_, T, {g}, {per})\n        y = y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + {eps})  # RMS per group\n        y = self.{norm}.weight * y.view(B_, T, {inner}).to(x.dtype)\n", per = inner / g, eps = fmt_f(s.eps), norm = n.attr(Role::SsmNorm));
                let gated = "        y = y * F.silu(z.float())  # gated by z\n";
                match s.gate {
                    SsmGate::NormAfter => format!("{gated}{rms}"),
                    SsmGate::NormBefore => format!("{rms}{gated}"),
                    SsmGate::Plain => format!("{gated}        y = y.to(x.dtype)\n"),
                }
            }),
            (
                "floor",
                if s.dt_floor > 0.0 {
                    format!(".clamp(min={})", fmt_f(s.dt_floor))
                } else {
                    String::new()
                },
            ),
            ("bias", py_bool(s.bias)),
            ("conv_bias", py_bool(s.conv_bias)),
            ("in_proj", n.attr(Role::SsmIn)),
            ("conv1d", n.attr(Role::SsmConv)),
            ("dt_bias", n.attr(Role::SsmDtBias)),
            ("a_log", n.attr(Role::SsmALog)),
            ("skip", n.attr(Role::SsmD)),
            ("out_proj", n.attr(Role::SsmOut)),
        ],
    )
}
