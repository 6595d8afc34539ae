//! A mixture of attention heads (JetMoE): the router and the head experts.

use super::*;

/// JetMoE's mixture of attention heads.
pub(super) fn moa(spec: &Spec, n: &Names, m: crate::spec::Moa) -> String {
    let a = &spec.attn;
    let (d, kv, hd, e, k) = (spec.hidden, a.kv_heads, a.head_dim, m.experts, m.top_k);
    let (kvp, router, wq, wo, bias) = (
        n.inside(Role::Kv),
        n.inside(Role::AttnRouter),
        n.inside(Role::AttnExpertQ),
        n.inside(Role::AttnExpertO),
        n.inside(Role::AttnExperts),
    );
    let holders = holders_of(&[
        router.clone(),
        format!("{wq}.weight"),
        format!("{wo}.weight"),
        format!("{bias}.bias"),
    ]);
    let rope = if matches!(spec.position, Position::Rope(_)) {
        "        if self.use_rope:\n            cos, sin = rope\n            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)\n"
    } else {
        ""
    };
    fill(
        r#"class Attention(nn.Module):
    """A mixture of attention heads: each token's ${k} chosen experts of ${e} bring a query and an
    output projection each, over one set of ${kv} K/V heads."""

    def __init__(self, span=("full", 0), use_rope=True):
        super().__init__()
        self.span, self.use_rope = span, use_rope
${holders}        self.${kvp} = nn.Linear(${d}, 2 * ${kv} * ${hd}, bias=False)  # K, then V
        self.${router} = nn.Linear(${d}, ${e}, bias=False)  # the router
        self.${wq}.weight = nn.Parameter(torch.zeros(${e}, ${kv} * ${hd}, ${d}))  # each expert's query projection
        self.${wo}.weight = nn.Parameter(torch.zeros(${e}, ${d}, ${kv} * ${hd}))  # each expert's output projection
        self.${bias}.bias = nn.Parameter(torch.zeros(${d}))  # shared by the experts

    def forward(self, x, rope=None):  # x: [B, T, ${d}]
        B, T, _ = x.shape
        top, idx = self.${router}(x).topk(${k}, dim=-1)  # [B, T, ${k}]: each token's experts, best first
        gates = top.float().softmax(dim=-1).to(x.dtype)  # softmax over the chosen logits
        slots = x.unsqueeze(2).expand(B, T, ${k}, ${d})  # the input, once per slot
        q = x.new_zeros(B, T, ${k}, ${kv} * ${hd})
        for e in range(${e}):
            rows = idx == e
            if rows.any():
                q[rows] = slots[rows] @ self.${wq}.weight[e].T  # slot j's queries from its expert
        k, v = self.${kvp}(x).view(B, T, 2, ${kv}, ${hd}).unbind(2)
        # K/V group i's query heads are the ${k} slots' head i
        q = q.view(B, T, ${k}, ${kv}, ${hd}).permute(0, 3, 2, 1, 4).reshape(B, ${kv} * ${k}, T, ${hd})
        k, v = k.transpose(1, 2), v.transpose(1, 2)  # [B, ${kv}, T, ${hd}]
${rope}        k = k.repeat_interleave(${k}, dim=1)  # each K/V head serves ${k} query heads
        v = v.repeat_interleave(${k}, dim=1)
${attend}        out = out.view(B, T, ${kv}, ${k}, ${hd}).transpose(2, 3).reshape(B, T, ${k}, ${kv} * ${hd})  # slot j's heads
        y = torch.zeros_like(x)
        for e in range(${e}):
            rows = idx == e
            if rows.any():
                b, t, _ = rows.nonzero(as_tuple=True)
                y.index_put_((b, t), gates[rows, None] * (out[rows] @ self.${wo}.weight[e].T), accumulate=True)
        return y + self.${bias}.bias  # [B, T, ${d}]"#,
        &[
            ("holders", holders),
            ("kvp", kvp),
            ("router", router),
            ("wq", wq),
            ("wo", wo),
            ("bias", bias),
            ("rope", rope.to_string()),
            ("attend", attend(spec, a.heads, a.v_head_dim, None)),
            ("d", d.to_string()),
            ("kv", kv.to_string()),
            ("hd", hd.to_string()),
            ("e", e.to_string()),
            ("k", k.to_string()),
        ],
    )
}
