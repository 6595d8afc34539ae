//! Lightning attention (MiniMax's linear attention).

use super::*;

/// MiniMax's lightning attention, its memory written as the recurrence, token after token.
pub(super) fn lightning_class(spec: &Spec, n: &Names) -> String {
    let Some(s) = spec.lightning() else {
        unreachable!("only models with lightning attention draw it")
    };
    let a = |r: Role| n.attr(r);
    fill(
        r#"class LightningAttention(nn.Module):
    """Lightning attention: ${h} heads, each carrying a ${hd} x ${hd} memory from key to value that
    fades at a fixed rate per head; no softmax.

    transformers computes a prompt in chunks of ${block} with the stored decay tables; the
    recurrence below is the same sum.
    """

    def __init__(self):
        super().__init__()
        self.${qkv} = nn.Linear(${d}, ${qkv_rows}, bias=False)  # per head: q | k | v
        self.${gate} = nn.Linear(${d}, ${inner}, bias=False)
        self.${norm} = nn.Module()
        self.${norm}.weight = nn.Parameter(torch.ones(${inner}))  # over all heads together
        self.${out_proj} = nn.Linear(${inner}, ${d}, bias=False)
        # Stored with the weights: each head's rate, and the chunked form's decay tables.
        self.${slope} = nn.Parameter(torch.zeros(${h}, 1, 1))
        self.${qd} = nn.Parameter(torch.zeros(${h}, ${block}, 1))
        self.${kd} = nn.Parameter(torch.zeros(${h}, ${block}, 1))
        self.${dd} = nn.Parameter(torch.zeros(1, ${h}, ${block}, ${block}))

    def forward(self, x):  # [B, T, ${d}]
        B_, T, _ = x.shape
        qkv = ${act}.view(B_, T, ${h}, ${three_hd})
        q, k, v = qkv.split(${hd}, dim=-1)  # each [B, T, ${h}, ${hd}]
        fade = torch.exp(-self.${slope})  # [${h}, 1, 1]
        st = state_of(self)  # decoding: the memory after earlier calls
        state = st.get("memory", x.new_zeros(B_, ${h}, ${hd}, ${hd}))
        outs = []
        for t in range(T):
            state = fade * state + k[:, t, :, :, None] * v[:, t, :, None, :]
            outs.append((state * q[:, t, :, :, None]).sum(-2))  # q . S per head
        st["memory"] = state
        o = torch.stack(outs, dim=1).reshape(B_, T, ${inner})
        o = self.${norm}.weight * (o * torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + ${eps}))
        return self.${out_proj}(torch.sigmoid(self.${gate}(x)) * o)"#,
        &[
            ("h", s.heads.to_string()),
            ("hd", s.head_dim.to_string()),
            ("three_hd", (3 * s.head_dim).to_string()),
            ("block", s.block.to_string()),
            ("d", spec.hidden.to_string()),
            ("inner", s.inner().to_string()),
            ("qkv_rows", (3 * s.inner()).to_string()),
            ("qkv", a(Role::SsmIn)),
            ("gate", a(Role::SsmZ)),
            ("norm", a(Role::SsmNorm)),
            ("out_proj", a(Role::SsmOut)),
            ("slope", a(Role::LightSlope)),
            ("qd", a(Role::LightQDecay)),
            ("kd", a(Role::LightKDecay)),
            ("dd", a(Role::LightDiagDecay)),
            (
                "act",
                act_expr(s.act, &format!("self.{}(x)", a(Role::SsmIn))),
            ),
            ("eps", fmt_f(s.eps)),
        ],
    )
}
