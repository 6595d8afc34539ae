//! The PyTorch reference of Zamba's and Zamba2's layers: the shared transformer blocks (one
//! module run by several layers, its tensors stored under the first of them), each visit's
//! adapters, the two kinds of layer around the mixer, and Zamba's multi-head Mamba.

use super::{act_expr, fill, py_bool};
use crate::spec::{Layout, Position, SharedBlocks, Spec};

/// The shared block's attribute in a layer that holds it: Zamba2's name, or Zamba's.
fn holder(spec: &Spec) -> &'static str {
    if spec.layout == Layout::Zamba {
        "shared_transf"
    } else {
        "shared_transformer"
    }
}

/// Zamba's multi-head Mamba: each head's channels project to their own step, B and C.
pub(super) fn mamba_heads(spec: &Spec) -> String {
    let s = spec.s6().expect("Zamba's layers run Mamba");
    let (i, st, r, h, k) = (s.inner, s.state, s.dt_rank, s.heads, s.conv_kernel);
    fill(
        r#"class Mamba(nn.Module):
    """Zamba's multi-head Mamba: ${i} channels in ${h} heads of ${p}, each channel carrying a ${st}-wide
    state from token to token; each head projects its channels to its own step, B and C."""

    def __init__(self):
        super().__init__()
        self.in_proj = nn.Linear(${d}, ${two_i}, bias=${bias})  # x and the gate z, alternating row by row
        self.conv1d = nn.Conv1d(${i}, ${i}, ${k}, groups=${i}, padding=${pad}, bias=${conv_bias})
        self.x_proj_weight = nn.Parameter(torch.zeros(${h}, ${sel}, ${p}))  # per head: the step's input, B, C
        self.dt_proj_weight = nn.Parameter(torch.zeros(${h}, ${p}, ${r}))  # per head: a step per channel
        self.dt_proj_bias = nn.Parameter(torch.zeros(${h}, ${p}))
        self.A_log = nn.Parameter(torch.zeros(${h}, ${p}, ${st}))  # decay rates, A = -exp(A_log)
        self.D = nn.Parameter(torch.ones(${h}, ${p}))
        self.out_proj = nn.Linear(${i}, ${d}, bias=${bias})

    def forward(self, x):  # [B, T, ${d}]
        B_, T, _ = x.shape
        st = state_of(self)  # decoding: the conv inputs and state of earlier calls
        xz = self.in_proj(x).view(B_, T, ${i}, 2)
        xs, z = xz[..., 0], xz[..., 1]
        xs = F.silu(causal_conv(xs, self.conv1d.weight, self.conv1d.bias, st))  # the last ${k} positions
        heads = xs.view(B_, T, ${h}, ${p})
        sel = torch.einsum("bthp,hsp->bths", heads, self.x_proj_weight)  # [B, T, ${h}, ${sel}]
        step, b, c = sel.split([${r}, ${st}, ${st}], dim=-1)
        dt = F.softplus(torch.einsum("bthr,hpr->bthp", step, self.dt_proj_weight) + self.dt_proj_bias)
        dt = dt.reshape(B_, T, ${i}).float()  # a step per channel
        b = b.repeat_interleave(${p}, dim=2).float()  # [B, T, ${i}, ${st}]: each channel its head's B
        c = c.repeat_interleave(${p}, dim=2).float()
        a = -torch.exp(self.A_log.float()).reshape(${i}, ${st})
        xs = xs.float()
        state = st.get("ssm", x.new_zeros(B_, ${i}, ${st}, dtype=torch.float32))
        ys = []
        for t in range(T):
            state = torch.exp(dt[:, t, :, None] * a) * state + (dt[:, t] * xs[:, t])[..., None] * b[:, t]
            ys.append((state * c[:, t]).sum(-1) + self.D.reshape(${i}) * xs[:, t])
        st["ssm"] = state
        y = torch.stack(ys, dim=1) * F.silu(z.float())  # gated by z
        return self.out_proj(y.to(x.dtype))"#,
        &[
            ("i", i.to_string()),
            ("two_i", (2 * i).to_string()),
            ("h", h.to_string()),
            ("p", (i / h).to_string()),
            ("st", st.to_string()),
            ("r", r.to_string()),
            ("k", k.to_string()),
            ("pad", (k - 1).to_string()),
            ("sel", (r + 2 * st).to_string()),
            ("d", spec.hidden.to_string()),
            ("bias", py_bool(s.bias)),
            ("conv_bias", py_bool(s.conv_bias)),
        ],
    )
}

/// The shared block's classes: its attention, its MLP and the block.
pub(super) fn block_classes(spec: &Spec, s: &SharedBlocks) -> String {
    let (a, d) = (&spec.attn, spec.hidden);
    let wide = 2 * d;
    let rank = s.adapter_rank;
    let visits = s.layers.len();
    let adapters = |list: &str, out: u64, input: u64| {
        format!("        self.{list} = nn.ModuleList(adapter({input}, {out}) if i in visits else nn.Identity() for i in range({visits}))\n")
    };
    let (attn_init, attn_fwd) = if s.attn_adapters {
        (
            ["linear_q_adapter_list", "linear_k_adapter_list", "linear_v_adapter_list"]
                .map(|l| adapters(l, wide, wide))
                .concat(),
            "        q = q + self.linear_q_adapter_list[visit](x)  # plus this visit's own low-rank adapters\n        k = k + self.linear_k_adapter_list[visit](x)\n        v = v + self.linear_v_adapter_list[visit](x)\n".to_string(),
        )
    } else {
        (String::new(), String::new())
    };
    let rope = if matches!(spec.position, Position::Rope(_)) {
        "        cos, sin = rope\n        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)\n"
    } else {
        "        # no positions: the Mamba2 layers carry order\n"
    };
    let (qw, kvw) = (a.heads * a.head_dim, a.kv_heads * a.head_dim);
    let f = spec.mlp.intermediate;
    let adapter_fn = if rank > 0 {
        fill(
            r#"def adapter(n_in, n_out):
    """A visit's own low-rank adapter on a shared projection: B (A x), rank ${rank}."""
    return nn.Sequential(nn.Linear(n_in, ${rank}, bias=False), nn.Linear(${rank}, n_out, bias=False))


"#,
            &[("rank", rank.to_string())],
        )
    } else {
        String::new()
    };
    // Zamba2's fused gate/up with each visit's adapter, or Zamba's gate and up apart.
    let bias = py_bool(spec.mlp.bias);
    let (mlp_init, mlp_fwd) = if spec.mlp.fused_gate_up {
        (
            format!(
                "        self.gate_up_proj = nn.Linear({d}, {}, bias={bias})\n{}",
                2 * f,
                adapters("gate_up_proj_adapter_list", 2 * f, d),
            ),
            "        gate, up = (self.gate_up_proj(x) + self.gate_up_proj_adapter_list[visit](x)).chunk(2, dim=-1)\n",
        )
    } else {
        (
            format!("        self.gate_proj = nn.Linear({d}, {f}, bias={bias})\n        self.up_proj = nn.Linear({d}, {f}, bias={bias})\n"),
            "        gate, up = self.gate_proj(x), self.up_proj(x)\n",
        )
    };
    adapter_fn
        + &fill(
            r#"class SharedAttention(nn.Module):
    """The shared block's attention: ${h} heads of ${hd} over [stream, embeddings] (${wide} features),
    K and V in ${kv} heads, causal; scores scaled by 1/sqrt(${hd} / 2)."""

    def __init__(self, visits):  # the visits this block serves: each has its own adapters
        super().__init__()
        self.q_proj = nn.Linear(${wide}, ${qw}, bias=False)
        self.k_proj = nn.Linear(${wide}, ${kvw}, bias=False)
        self.v_proj = nn.Linear(${wide}, ${kvw}, bias=False)
        self.o_proj = nn.Linear(${qw}, ${d}, bias=False)
${attn_init}
    def forward(self, x, visit, rope):  # x: [B, T, ${wide}] -> [B, T, ${d}]
        B_, T, _ = x.shape
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
${attn_fwd}        q = q.view(B_, T, ${h}, ${hd}).transpose(1, 2)  # [B, ${h}, T, ${hd}]
        k = k.view(B_, T, ${kv}, ${hd}).transpose(1, 2).repeat_interleave(${group}, dim=1)
        v = v.view(B_, T, ${kv}, ${hd}).transpose(1, 2).repeat_interleave(${group}, dim=1)
${rope}        s = (q @ k.transpose(-1, -2)) * ${scale}  # [B, ${h}, T, T]
        s = s.masked_fill(torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1), float("-inf"))
        out = torch.softmax(s.float(), dim=-1).to(q.dtype) @ v  # [B, ${h}, T, ${hd}]
        return self.o_proj(out.transpose(1, 2).reshape(B_, T, ${qw}))


class SharedMLP(nn.Module):
    """The shared block's MLP: ${act_name}(gate) * up, ${f} wide."""

    def __init__(self, visits):
        super().__init__()
${mlp_init}        self.down_proj = nn.Linear(${f}, ${d}, bias=${bias})

    def forward(self, x, visit):  # [B, T, ${d}]
${mlp_fwd}        return self.down_proj(${act} * up)


class SharedBlock(nn.Module):
    """A shared transformer block: the attention, then the MLP, each after its norm, with no
    residual. Block j serves visits j, j + ${blocks}, j + 2 * ${blocks} …: the same weights every time."""

    def __init__(self, visits):
        super().__init__()
        self.self_attn = SharedAttention(visits)
        self.feed_forward = SharedMLP(visits)
        self.input_layernorm = Norm(${wide})
        self.pre_ff_layernorm = Norm(${d})

    def forward(self, x, x0, visit, rope):  # x (the stream), x0 (the embeddings): [B, T, ${d}]
        a = self.self_attn(self.input_layernorm(torch.cat([x, x0], dim=-1)), visit, rope)
        return self.feed_forward(self.pre_ff_layernorm(a), visit)"#,
            &[
                ("h", a.heads.to_string()),
                ("hd", a.head_dim.to_string()),
                ("kv", a.kv_heads.to_string()),
                ("group", (a.heads / a.kv_heads.max(1)).to_string()),
                ("wide", wide.to_string()),
                ("d", d.to_string()),
                ("qw", qw.to_string()),
                ("kvw", kvw.to_string()),
                ("attn_init", attn_init),
                ("attn_fwd", attn_fwd),
                ("rope", rope.to_string()),
                ("scale", (a.scale_dim).powf(-0.5).to_string()),
                ("act_name", spec.mlp.act.label().to_string()),
                ("act", act_expr(spec.mlp.act, "gate")),
                ("f", f.to_string()),
                ("bias", bias),
                ("mlp_init", mlp_init),
                ("mlp_fwd", mlp_fwd.to_string()),
                ("blocks", s.blocks.to_string()),
            ],
        )
}

/// The layers (Mamba2 alone, or a shared block first), the decoder and the model.
pub(super) fn model(spec: &Spec, s: &SharedBlocks) -> String {
    let d = spec.hidden;
    // The RoPE tables, for the sequence's length (read only for them).
    let (length, rope) = if matches!(spec.position, Position::Rope(_)) {
        (
            "\n        T = input_ids.shape[1]",
            "rope_cos_sin(rope_frequencies, T, x.dtype)",
        )
    } else {
        ("", "None")
    };
    let (head_init, logits) = if spec.tied {
        (
            String::new(),
            "h @ self.model.embed_tokens.weight.T  # tied: the embedding matrix",
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
    let layers: Vec<String> = s.layers.iter().map(|b| b.to_string()).collect();
    fill(
        r#"class MambaLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.input_layernorm = Norm(${d})
        self.mamba = ${mixer}()

    def forward(self, x, feed=None):  # [B, T, ${d}]; feed: a shared block's output
        h = x if feed is None else x + feed  # the block's output joins what the mixer reads, not the stream
        return x + self.mamba(self.input_layernorm(h))


class HybridLayer(nn.Module):
    def __init__(self, block, visit, holds):
        super().__init__()
        if holds:
            self.${holder} = block  # stored under the first layer that runs it
        self.block = [block]  # a plain list: the layers that run it again do not store it again
        self.visit = visit
        self.linear = nn.Linear(${d}, ${d}, bias=False)  # this layer's own
        self.mamba_decoder = MambaLayer()

    def forward(self, x, x0, rope):  # [B, T, ${d}]
        return self.mamba_decoder(x, self.linear(self.block[0](x, x0, self.visit, rope)))


SHARED = [${layers}]  # the layers that run a shared block: visit i runs block i % ${blocks}


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(${vocab}, ${d})
        blocks = [SharedBlock([i for i in range(len(SHARED)) if i % ${blocks} == j]) for j in range(${blocks})]
        self.layers = nn.ModuleList(
            HybridLayer(blocks[SHARED.index(b) % ${blocks}], SHARED.index(b), SHARED.index(b) < ${blocks})
            if b in SHARED else MambaLayer()
            for b in range(${n})
        )
        self.final_layernorm = Norm(${d})

    def forward(self, input_ids):  # [B, T] int64 -> [B, T, ${d}] after the final norm${length}
        x = x0 = self.embed_tokens(input_ids)  # the shared blocks read the embeddings beside the stream
        rope = ${rope}
        for layer in self.layers:
            x = layer(x, x0, rope) if isinstance(layer, HybridLayer) else layer(x)
        return self.final_layernorm(x)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Decoder()
${head_init}
    def forward(self, input_ids):  # [B, T] int64 -> logits [B, T, ${vocab}]
        h = self.model(input_ids)
        return ${logits}"#,
        &[
            ("d", d.to_string()),
            ("vocab", spec.vocab.to_string()),
            ("n", spec.layers.to_string()),
            ("layers", layers.join(", ")),
            ("blocks", s.blocks.min(s.layers.len()).to_string()),
            ("rope", rope.to_string()),
            ("length", length.to_string()),
            (
                "mixer",
                if spec.s6().is_some() {
                    "Mamba"
                } else {
                    "Mamba2"
                }
                .to_string(),
            ),
            ("holder", holder(spec).to_string()),
            ("head_init", head_init),
            ("logits", logits.to_string()),
        ],
    )
}
