//! The PyTorch reference of xLSTM: the mLSTM written as its recurrence, token after token, and
//! the blocks, backbone and head around it, named as its checkpoints name them.

use super::{fill, py_bool};
use crate::spec::Spec;

/// The mLSTM class.
pub(super) fn mlstm(spec: &Spec) -> String {
    let s = spec.mlstm().expect("xLSTM's layers run the mLSTM");
    let h = s.heads;
    let (d, qk, v, bias) = (spec.hidden, s.qk_dim, s.v_dim, py_bool(s.bias));
    let (init_proj, fwd_proj) = if s.fused {
        (
            format!("        self.qkv_opreact = nn.Linear({d}, 2 * {qk} + 2 * {v}, bias={bias})  # q | k | v | o\n        self.ifgate_preact = nn.Linear({d}, 2 * {h})  # per head an input gate, then per head a forget gate\n"),
            format!("        q, k, v, o = self.qkv_opreact(x).split([{qk}, {qk}, {v}, {v}], dim=-1)\n        i, f = cap(self.ifgate_preact(x)).float().chunk(2, dim=-1)  # [B, T, {h}] each\n"),
        )
    } else {
        (
            format!("        self.q = nn.Linear({d}, {qk}, bias={bias})\n        self.k = nn.Linear({d}, {qk}, bias={bias})\n        self.v = nn.Linear({d}, {v}, bias={bias})\n        self.ogate_preact = nn.Linear({d}, {v}, bias={bias})\n        self.igate_preact = nn.Linear({d}, {h})  # one input gate per head\n        self.fgate_preact = nn.Linear({d}, {h})  # one forget gate per head\n"),
            "        q, k, v, o = self.q(x), self.k(x), self.v(x), self.ogate_preact(x)\n        i, f = cap(self.igate_preact(x)).float(), cap(self.fgate_preact(x)).float()  # [B, T, heads]\n".to_string(),
        )
    };
    fill(
        r#"class MLstm(nn.Module):
    """xLSTM's mLSTM: ${h} heads, each carrying a ${dk} x ${dv} matrix memory, its normalizer and its
    stabilizer from token to token. transformers computes a prompt in chunks; the recurrence below
    is the same sum."""

    def __init__(self):
        super().__init__()
${init_proj}        self.multihead_norm = nn.Module()
        self.multihead_norm.weight = nn.Parameter(torch.ones(${v}))${norm_bias}
        self.out_proj = nn.Linear(${v}, ${d}, bias=${bias})

    def forward(self, x):  # [B, T, ${d}]
        B_, T, _ = x.shape
        cap = lambda g: ${cap} * torch.tanh(g / ${cap})  # soft cap
${fwd_proj}        q = q.view(B_, T, ${h}, ${dk}).float() / math.sqrt(${dk})
        k = k.view(B_, T, ${h}, ${dk}).float()
        v = v.view(B_, T, ${h}, ${dv}).float()
        st = state_of(self)  # decoding: the memory, normalizer and stabilizer after earlier calls
        C, n, m = st.get("state", (
            x.new_zeros(B_, ${h}, ${dk}, ${dv}, dtype=torch.float32),
            x.new_zeros(B_, ${h}, ${dk}, dtype=torch.float32),
            x.new_zeros(B_, ${h}, dtype=torch.float32),  # m: the running maximum of the log gates
        ))
        hs = []
        for t in range(T):
            f_log = F.logsigmoid(f[:, t])
            m_new = torch.maximum(f_log + m, i[:, t])
            fa, ia = torch.exp(f_log + m - m_new), torch.exp(i[:, t] - m_new)  # both at most 1
            C = fa[..., None, None] * C + ia[..., None, None] * k[:, t, :, :, None] * v[:, t, :, None, :]
            n = fa[..., None] * n + ia[..., None] * k[:, t]
            m = m_new
            num = torch.einsum("bhk,bhkv->bhv", q[:, t], C)
            den = torch.maximum((q[:, t] * n).sum(-1).abs(), torch.exp(-m)) + ${eps}
            hs.append(num / den[..., None])
        st["state"] = C, n, m
        h = torch.stack(hs, dim=1)  # [B, T, ${h}, ${dv}]
        h = (h - h.mean(-1, keepdim=True)) * torch.rsqrt(h.var(-1, keepdim=True, unbiased=False) + ${norm_eps})
        h = self.multihead_norm.weight * h.reshape(B_, T, ${v}).to(x.dtype)${shift}  # LayerNorm per head
        return self.out_proj(torch.sigmoid(o) * h)"#,
        &[
            ("init_proj", init_proj),
            ("fwd_proj", fwd_proj),
            ("h", h.to_string()),
            ("dk", (s.qk_dim / h).to_string()),
            ("dv", (s.v_dim / h).to_string()),
            ("qk", s.qk_dim.to_string()),
            ("v", s.v_dim.to_string()),
            ("d", spec.hidden.to_string()),
            ("cap", s.gate_cap.to_string()),
            ("eps", s.eps.to_string()),
            ("norm_eps", s.norm_eps.to_string()),
            ("bias", py_bool(s.bias)),
            (
                "norm_bias",
                if s.bias {
                    format!(
                        "\n        self.multihead_norm.bias = nn.Parameter(torch.zeros({}))",
                        s.v_dim
                    )
                } else {
                    String::new()
                },
            ),
            (
                "shift",
                if s.bias {
                    " + self.multihead_norm.bias"
                } else {
                    ""
                }
                .into(),
            ),
        ],
    )
}

/// The SwiGLU MLP, the block, the backbone and the model.
pub(super) fn model(spec: &Spec) -> String {
    let (d, f) = (spec.hidden, spec.mlp.intermediate);
    let (head_init, logits) = if spec.tied {
        (
            String::new(),
            "h @ self.backbone.embeddings.weight.T  # tied: the embedding matrix",
        )
    } else {
        (
            format!(
                "        self.lm_head = nn.Linear({d}, {}, bias=False)\n",
                spec.vocab
            ),
            "self.lm_head(h)",
        )
    };
    let b = py_bool(spec.mlp.bias);
    let (mlp_init, mlp_fwd) = if spec.mlp.fused_gate_up {
        (
            format!("        self.proj_up_gate_z = nn.Linear({d}, 2 * {f}, bias={b})  # the gate, then z\n"),
            "        gate, z = self.proj_up_gate_z(x).chunk(2, dim=-1)\n        return self.proj_down(F.silu(gate) * z)".to_string(),
        )
    } else {
        (
            format!("        self.proj_up_gate = nn.Linear({d}, {f}, bias={b})\n        self.proj_up = nn.Linear({d}, {f}, bias={b})\n"),
            "        return self.proj_down(F.silu(self.proj_up_gate(x)) * self.proj_up(x))".to_string(),
        )
    };
    let cap = spec.final_softcap.map_or("logits".to_string(), |c| {
        format!("{c} * torch.tanh(logits / {c})  # soft-capped")
    });
    fill(
        r#"class MLP(nn.Module):
    """SwiGLU: SiLU(gate) * up, ${f} wide."""

    def __init__(self):
        super().__init__()
${mlp_init}        self.proj_down = nn.Linear(${f}, ${d}, bias=${bias})

    def forward(self, x):  # [B, T, ${d}]
${mlp_fwd}


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm_mlstm = Norm(${d})
        self.mlstm_layer = MLstm()
        self.norm_ffn = Norm(${d})
        self.ffn = MLP()

    def forward(self, x):  # [B, T, ${d}]
        x = x + self.mlstm_layer(self.norm_mlstm(x))
        return x + self.ffn(self.norm_ffn(x))


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.embeddings = nn.Embedding(${vocab}, ${d})
        self.blocks = nn.ModuleList(Block() for _ in range(${n}))
        self.out_norm = ${out_norm}

    def forward(self, input_ids):  # [B, T] int64 -> [B, T, ${d}] after the final norm
        x = self.embeddings(input_ids)
        for block in self.blocks:
            x = block(x)
        return self.out_norm(x)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = Backbone()
${head_init}
    def forward(self, input_ids):  # [B, T] int64 -> logits [B, T, ${vocab}]
        h = self.backbone(input_ids)
        logits = ${logits}
        return ${cap}"#,
        &[
            (
                "out_norm",
                // The blocks' norms shift; the output norm does not.
                if spec.norm.kind.has_bias() && !spec.final_norm().kind.has_bias() {
                    format!("Norm({d}, bias=False)")
                } else {
                    format!("Norm({d})")
                },
            ),
            ("d", d.to_string()),
            ("f", f.to_string()),
            ("bias", py_bool(spec.mlp.bias)),
            ("mlp_init", mlp_init),
            ("mlp_fwd", mlp_fwd),
            ("vocab", spec.vocab.to_string()),
            ("n", spec.layers.to_string()),
            ("head_init", head_init),
            ("logits", logits.to_string()),
            ("cap", cap),
        ],
    )
}
