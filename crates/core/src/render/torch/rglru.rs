//! RecurrentGemma's recurrent block (RG-LRU).

use super::*;

/// Griffin's recurrent block, its RG-LRU written as the recurrence, token after token.
pub(super) fn rg_lru_class(spec: &Spec, n: &Names) -> String {
    let Some(s) = spec.rg_lru() else {
        unreachable!("only models with an RG-LRU draw it")
    };
    let a = |r: Role| n.attr(r);
    let lru = n.path(Role::LruParam);
    let lru = lru.rsplit('.').nth(1).unwrap_or("rg_lru").to_string();
    fill(
        r#"class RGLRU(nn.Module):
    """The real-gated linear recurrent unit: one state per channel, gated per block of ${bw}."""

    def __init__(self):
        super().__init__()
        self.recurrent_param = nn.Parameter(torch.zeros(${w}))  # Lambda
        self.input_gate_weight = nn.Parameter(torch.zeros(${h}, ${bw}, ${bw}))  # per block, [in, out]
        self.input_gate_bias = nn.Parameter(torch.zeros(${h}, ${bw}))
        self.recurrent_gate_weight = nn.Parameter(torch.zeros(${h}, ${bw}, ${bw}))
        self.recurrent_gate_bias = nn.Parameter(torch.zeros(${h}, ${bw}))

    def forward(self, x):  # [B, T, ${w}], the convolved input
        B_, T, _ = x.shape
        xb = x.view(B_, T, ${h}, ${bw})
        gate = lambda w, b: torch.sigmoid(torch.einsum("bthi,hio->btho", xb, w) + b).reshape(B_, T, ${w})
        i, r = gate(self.input_gate_weight, self.input_gate_bias), gate(self.recurrent_gate_weight, self.recurrent_gate_bias)
        log_a = -8.0 * r * F.softplus(self.recurrent_param)  # [B, T, ${w}]
        a = torch.exp(log_a)
        scale = torch.sqrt(1 - torch.exp(2 * log_a))
        st = state_of(self)  # decoding: the state after earlier calls
        if "h" not in st:
            scale[:, 0] = 1.0  # position 0: the state resets and the input enters whole
            a[:, 0] = 0.0
        xn = x * i * scale
        h = st.get("h", x.new_zeros(B_, ${w}))
        outs = []
        for t in range(T):
            h = a[:, t] * h + xn[:, t]
            outs.append(h)
        st["h"] = h
        return torch.stack(outs, dim=1)


class RecurrentBlock(nn.Module):
    """Griffin's recurrent block: a ${act_name} gate branch beside a convolution and the RG-LRU."""

    def __init__(self):
        super().__init__()
        self.${y} = nn.Linear(${d}, ${w})
        self.${x} = nn.Linear(${d}, ${w})
        self.${out} = nn.Linear(${w}, ${d})
        self.${conv} = nn.Conv1d(${w}, ${w}, ${k}, groups=${w}, padding=${pad})
        self.${lru} = RGLRU()

    def forward(self, x):  # [B, T, ${d}]
        y = ${act}
        u = causal_conv(self.${x}(x), self.${conv}.weight, self.${conv}.bias, state_of(self))  # the last ${k} positions
        return self.${out}(self.${lru}(u) * y)"#,
        &[
            ("w", s.width.to_string()),
            ("h", s.heads.to_string()),
            ("bw", s.block().to_string()),
            ("d", spec.hidden.to_string()),
            ("k", s.conv_kernel.to_string()),
            ("pad", (s.conv_kernel - 1).to_string()),
            ("y", a(Role::SsmZ)),
            ("x", a(Role::SsmIn)),
            ("out", a(Role::SsmOut)),
            ("conv", a(Role::SsmConv)),
            ("lru", lru),
            ("act_name", s.act.label().into()),
            (
                "act",
                act_expr(s.act, &format!("self.{}(x)", a(Role::SsmZ))),
            ),
        ],
    )
}
