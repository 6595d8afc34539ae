//! ZAYA's compressed convolutional attention.

use super::*;

/// ZAYA's compressed convolutional attention as the module `class`, its tensors named as the
/// checkpoint's (`qkv_proj.q_proj` …).
pub(super) fn cca_attention(spec: &Spec, class: &str, cca: crate::spec::Cca) -> String {
    let a = &spec.attn;
    let (h, kv, hd) = (a.heads, a.kv_heads, a.head_dim);
    let rope = if matches!(spec.position, Position::Rope(_)) {
        "        if self.use_rope:\n            cos, sin = rope\n            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)\n"
    } else {
        ""
    };
    let repeat = if h != kv {
        format!("        k, v = k.repeat_interleave({g}, dim=1), v.repeat_interleave({g}, dim=1)  # each K/V head serves {g} query heads\n", g = h / kv)
    } else {
        String::new()
    };
    fill(
        r#"class ${class}(nn.Module):
    """ZAYA's compressed convolutional attention: Q and K mixed along time by two causal
    convolutions (${k0} taps per channel, then ${k1} across each head's channels), each with a
    residual path; half the values from the token before; Q and K scaled to length sqrt(${hd})."""

    def __init__(self, span=("full", 0), use_rope=True):
        super().__init__()
        self.span, self.use_rope = span, use_rope
        self.qkv_proj = p = nn.Module()
        p.q_proj = nn.Linear(${d}, ${h} * ${hd}, bias=${bias})
        p.k_proj = nn.Linear(${d}, ${kv} * ${hd}, bias=${bias})
        p.v_proj_current = nn.Linear(${d}, ${half}, bias=${bias})
        p.v_proj_delayed = nn.Linear(${d}, ${half}, bias=${bias})
        p.conv_qk_depthwise = nn.Conv1d(${c}, ${c}, ${k0}, groups=${c})
        p.conv_qk_grouped = nn.Conv1d(${c}, ${c}, ${k1}, groups=${heads})
        self.qk_norm = nn.Module()
        self.qk_norm.temp = nn.Parameter(torch.zeros(${kv}))  # each K/V head's key scale
        self.o_proj = nn.Linear(${h} * ${hd}, ${d}, bias=${bias})

    def forward(self, x, rope=None):  # x: [B, T, ${d}]
        B, T, _ = x.shape
        p = self.qkv_proj
        q, k = p.q_proj(x), p.k_proj(x)
        # the residual paths: each query head's mean with its K/V head's key, and its mean per K/V head
        q_res = (q.view(B, T, ${h}, ${hd}) + k.view(B, T, ${kv}, ${hd}).repeat_interleave(${g}, dim=2)) / 2
        k_res = q_res.view(B, T, ${kv}, ${g}, ${hd}).mean(3)
        qk = F.pad(torch.cat([q, k], dim=-1).transpose(1, 2), (${reach}, 0))  # causal: zeros before the first token
        qk = p.conv_qk_grouped(p.conv_qk_depthwise(qk)).transpose(1, 2)  # [B, T, ${c}]
        q = qk[..., : ${h} * ${hd}].view(B, T, ${h}, ${hd}) + q_res
        k = qk[..., ${h} * ${hd} :].view(B, T, ${kv}, ${hd}) + k_res
        # half of the values from this token, half from the one before (the first reads the projection of zeros)
        delayed = p.v_proj_delayed(x)
        first = p.v_proj_delayed(x.new_zeros(B, 1, ${d}))
        v = torch.cat([p.v_proj_current(x), torch.cat([first, delayed[:, :-1]], dim=1)], dim=-1).view(B, T, ${kv}, ${hd})
        unit = lambda t: t * ${hd} ** 0.5 / t.norm(dim=-1, keepdim=True).clamp_min(torch.finfo(t.dtype).eps)
        q, k = unit(q), unit(k) * self.qk_norm.temp[None, None, :, None]
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
${rope}${repeat}${attend}        return self.o_proj(out)  # [B, T, ${d}]"#,
        &[
            ("class", class.to_string()),
            ("d", spec.hidden.to_string()),
            ("h", h.to_string()),
            ("kv", kv.to_string()),
            ("hd", hd.to_string()),
            ("g", (h / kv).to_string()),
            ("half", (kv * hd / 2).to_string()),
            ("c", ((h + kv) * hd).to_string()),
            ("heads", (h + kv).to_string()),
            ("k0", cca.depthwise.to_string()),
            ("k1", cca.grouped.to_string()),
            ("reach", cca.reach().to_string()),
            ("bias", py_bool(a.qkv_bias)),
            ("rope", rope.into()),
            ("repeat", repeat),
            ("attend", attend(spec, h, a.v_head_dim, None)),
        ],
    )
}
