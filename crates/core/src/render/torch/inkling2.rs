//! The PyTorch reference's Inkling 2: its attention (L2-clipped queries and keys, RMS-normed
//! values, relative logits, per-token sinks, a gated output, convolutions on K and V with
//! per-token taps in the full layers), its routed experts with a softcapped SwiGLU, and its
//! layers over block attention residuals. Attribute names are its checkpoints' (`model.llm.`,
//! `attn.wq_du` …, `Layout::Inkling2`).

use super::{fill, RELATIVE_LOGITS};
use crate::fmt::float as fmt_f;
use crate::spec::{Attention, Spec};

fn full_and_sliding(spec: &Spec) -> (Attention, Attention) {
    let mut full = spec.attn.clone();
    let mut sliding = spec.attn.clone();
    for (a, _) in spec.attn_variants() {
        if a.kv_inputs {
            full = a.clone();
        } else {
            sliding = a.clone();
        }
    }
    (full, sliding)
}

/// The convolutions, the L2 clips, the relative logits and the attention.
pub(super) fn attention(spec: &Spec) -> String {
    let (full, sliding) = full_and_sliding(spec);
    let d = spec.hidden;
    let rel = full
        .rel_logits
        .expect("Inkling 2's attention has relative logits");
    let taps = full.kv_conv.map_or(1, |c| c.conv.taps);
    let window = spec
        .plan
        .iter()
        .find_map(|l| match l.span() {
            Some(crate::spec::AttnSpan::Sliding(w)) => Some(w),
            _ => None,
        })
        .unwrap_or(0);
    // A model whose layers all slide has no full layer to scale its queries: the constants
    // are then read by no layer.
    let (alpha, floor) = full.query_scale.map_or((0.0, 0), |s| (s.beta, s.length));
    let kind = |a: &Attention| {
        format!(
            "({}, {}, {}, {})",
            a.heads,
            a.kv_heads,
            a.head_dim,
            a.rel_logits.map_or(0, |r| r.extent)
        )
    };
    [
        fill(
            r#"# Inkling 2's sizes: the full layers' and the sliding layers' heads, K/V heads, head size and
# reach of their relative logits.
FULL_SIZES, SLIDING_SIZES = ${full}, ${sliding}
WINDOW, TAPS, D_REL = ${window}, ${taps}, ${d_rel}
QK_CLIP, REL_CLIP = ${qk_clip}, ${rel_clip}
ALPHA, FLOOR = ${alpha}, ${floor}  # the full layers' log scaling of queries and relative states


def l2_clip(x, c):
    """Each vector scaled down to L2 norm c where longer."""
    return x * (c / (torch.linalg.vector_norm(x.float(), dim=-1, keepdim=True) + 1e-6)).clamp(max=1.0)


class Clip(nn.Module):
    """Each head's vector times a learned scale, then scaled down to L2 norm `threshold`."""

    def __init__(self, heads, dim, threshold):
        super().__init__()
        self.threshold = threshold
        self.scale = nn.Parameter(torch.ones(heads, dim))

    def forward(self, x):  # [B, T, heads, dim]
        return l2_clip(x.float() * self.scale.float(), self.threshold)


class Conv(nn.Module):
    """x plus its causal depthwise convolution over its last `taps` positions, divided by sqrt(taps + 1)."""

    def __init__(self, channels, taps):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(channels, 1, taps))

    def forward(self, x):  # [B, T, channels]
        T, taps = x.shape[1], self.weight.shape[-1]
        y = F.conv1d(x.float().transpose(1, 2), self.weight.float(), padding=taps - 1, groups=x.shape[-1])
        return (x.float() + y[..., :T].transpose(1, 2)) / math.sqrt(taps + 1)


class DynamicConv(nn.Module):
    """x plus a causal convolution whose taps are the stored ones (tap 0 the token itself) plus
    each token's own, projected from `source`, one set per K/V head; divided by sqrt(2 taps + 1)."""

    def __init__(self, channels, heads, taps):
        super().__init__()
        self.heads, self.taps = heads, taps
        self.static_w = nn.Parameter(torch.zeros(taps, channels))
        self.weight_proj = nn.Parameter(torch.empty(heads * taps, ${d}))

    def forward(self, x, source):  # x: [B, T, channels], source: [B, T, ${d}]
        B, T, C = x.shape
        own = F.linear(source, self.weight_proj).float().view(B, T, self.heads, 1, self.taps)
        taps = self.static_w.float().T.reshape(self.heads, C // self.heads, self.taps) + own
        padded = F.pad(x.float().transpose(1, 2), (self.taps - 1, 0))  # [B, C, T + taps - 1]
        windows = padded.unfold(-1, self.taps, 1).flip(-1).transpose(1, 2)  # [B, T, C, taps]: lag 0 first
        mix = (windows.reshape(B, T, self.heads, -1, self.taps) * taps).sum(-1).reshape(B, T, C)
        return (x.float() + mix) / math.sqrt(2 * self.taps + 1)"#,
            &[
                ("full", kind(&full)),
                ("sliding", kind(&sliding)),
                ("window", window.to_string()),
                ("taps", taps.to_string()),
                ("d_rel", rel.d_rel.to_string()),
                ("qk_clip", fmt_f(full.l2_clip.unwrap_or(0.0))),
                ("rel_clip", fmt_f(rel.clip.unwrap_or(0.0))),
                ("alpha", fmt_f(alpha)),
                ("floor", floor.to_string()),
                ("d", d.to_string()),
            ],
        ),
        RELATIVE_LOGITS.to_string(),
        fill(
            r#"class Attention(nn.Module):
    """The full layers' (K and V from inputs of their own, through convolutions with per-token
    taps; queries and relative states scaled up with position) or the sliding layers'."""

    def __init__(self, full):
        super().__init__()
        self.full = full
        H, KV, HD, extent = FULL_SIZES if full else SLIDING_SIZES
        self.sizes = H, KV, HD
        self.wq_du = nn.Linear(${d}, H * HD, bias=False)
        self.wk_dv = nn.Linear(${d}, KV * HD, bias=False)
        self.wv_dv = nn.Linear(${d}, KV * HD, bias=False)
        self.wo_ud = nn.Linear(H * HD, ${d}, bias=False)
        self.gate_attn = nn.Linear(${d}, H * HD, bias=False)  # the output gate
        self.attn_sink_proj = nn.Linear(${d}, H, bias=False)  # each token's sink logit per head
        self.wr_du = nn.Linear(${d}, H * D_REL, bias=False)  # the relative states
        self.q_l2_clip = Clip(H, HD, QK_CLIP)
        self.rel_l2_clip = Clip(H, D_REL, REL_CLIP)
        self.rel_logits_proj = RelativeLogits(D_REL, extent)
        self.k_sconv = DynamicConv(KV * HD, KV, TAPS) if full else Conv(KV * HD, TAPS)
        self.v_sconv = DynamicConv(KV * HD, KV, TAPS) if full else Conv(KV * HD, TAPS)

    def forward(self, x, xk, xv):  # [B, T, ${d}] each: the queries', keys' and values' inputs
        B, T, _ = x.shape
        H, KV, HD = self.sizes
        k, v = self.wk_dv(xk), self.wv_dv(xv)
        k, v = (self.k_sconv(k, xk), self.v_sconv(v, xv)) if self.full else (self.k_sconv(k), self.v_sconv(v))
        q = self.q_l2_clip(self.wq_du(x).view(B, T, H, HD))
        k = l2_clip(k.view(B, T, KV, HD), QK_CLIP)
        v = v.view(B, T, KV, HD)
        v = v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + ${eps})  # RMS-normed per head, no weight
        r = self.rel_l2_clip(self.wr_du(x).view(B, T, H, D_REL))
        if self.full:
            tau = 1 + ALPHA * torch.log(((torch.arange(T, device=x.device) + 1).float() / FLOOR).clamp(min=1.0))
            q, r = q * tau[None, :, None, None], r * tau[None, :, None, None]
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        k, v = k.repeat_interleave(H // KV, dim=1), v.repeat_interleave(H // KV, dim=1)
        scores = (q @ k.transpose(-1, -2)) * HD**-0.5 + self.rel_logits_proj(r.transpose(1, 2), T)
        i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
        allowed = (j <= i) if self.full else (j <= i) & (i - j < WINDOW)
        scores = scores.masked_fill(~allowed.to(x.device), float("-inf"))
        sink = self.attn_sink_proj(x).transpose(1, 2).unsqueeze(-1)  # [B, H, T, 1]
        probs = torch.cat([scores, sink], dim=-1).float().softmax(dim=-1)[..., :-1]  # the sink takes its share
        out = (probs @ v).transpose(1, 2).reshape(B, T, H * HD)
        return self.wo_ud(out * torch.sigmoid(self.gate_attn(x)))  # [B, T, ${d}], gated per feature"#,
            &[("d", d.to_string()), ("eps", spec.norm.eps.to_string())],
        ),
    ]
    .join("\n\n\n")
}

/// The router and the experts.
pub(super) fn moe(spec: &Spec) -> String {
    let m = spec.moe.as_ref().expect("Inkling 2's FFNs are experts");
    let (cg, cu) = m.glu_softcaps.expect("Inkling 2's experts have softcaps");
    fill(
        r#"class Router(nn.Module):
    """Scores each token against the ${e} experts; the correction bias only steers the choice."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(${e}, ${d}))
        self.register_buffer("bias", torch.zeros(${e}))


class Experts(nn.Module):
    """All ${e} experts: gate and up rows alternating in one tensor, down in another."""

    def __init__(self):
        super().__init__()
        self.w13_weight = nn.Parameter(torch.empty(${e}, 2 * ${f}, ${d}))
        self.w2_weight = nn.Parameter(torch.empty(${e}, ${d}, ${f}))

    def forward(self, x, e):  # x: [tokens, ${d}] -> [tokens, ${d}], expert e
        gu = x @ self.w13_weight[e].T
        gate, up = gu[..., 0::2], gu[..., 1::2]
        h = ${cg} * torch.tanh(gate / ${cg}) * torch.sigmoid(gate) * (${cu} * torch.tanh(up / ${cu}))
        return h @ self.w2_weight[e].T


class MoE(nn.Module):
    """${e} experts, ${k} active per token, weighted by their sigmoid scores renormalized."""

    def __init__(self):
        super().__init__()
        self.gate = Router()
        self.experts = Experts()

    def forward(self, x):  # [B, T, ${d}]
        shape = x.shape
        x = x.reshape(-1, ${d})
        scores = F.linear(x.float(), self.gate.weight.float()).sigmoid()
        idx = (scores + self.gate.bias).topk(${k}, dim=-1).indices
        weights = scores.gather(1, idx)
        weights = weights / (weights.sum(-1, keepdim=True) + 1e-20) * ${scale}
        out = torch.zeros_like(x)
        for slot in range(${k}):
            for e in range(${e}):
                rows = idx[:, slot] == e
                if rows.any():
                    out[rows] += weights[rows, slot, None] * self.experts(x[rows], e)
        return out.reshape(shape)"#,
        &[
            ("e", m.experts.to_string()),
            ("k", m.top_k.to_string()),
            ("f", m.expert_intermediate.to_string()),
            ("d", spec.hidden.to_string()),
            ("cg", fmt_f(cg)),
            ("cu", fmt_f(cu)),
            ("scale", fmt_f(m.routed_scaling)),
        ],
    )
}

/// The block attention residuals' mix, the layer and the model.
pub(super) fn model(spec: &Spec) -> String {
    let r = spec
        .attn_res()
        .expect("Inkling 2 has block attention residuals");
    let d = spec.hidden;
    let sliding: Vec<&str> = (0..spec.layers as usize)
        .map(|b| {
            if spec.attn_at(b).kv_inputs {
                "False"
            } else {
                "True"
            }
        })
        .collect();
    let queries: Vec<String> = (1..spec.layers as usize)
        .map(|b| {
            if spec.attn_at(b).kv_inputs {
                format!("torch.zeros(3, {d})")
            } else {
                format!("torch.zeros({d})")
            }
        })
        .collect();
    let v = spec.vocab;
    let keep = match spec.logits_kept {
        Some(k) => {
            format!("[..., :{k}]  # the rows that pad the head past the real vocabulary dropped")
        }
        None => String::new(),
    };
    let cap = match spec.final_softcap {
        Some(c) => format!("\n        logits = {c} * torch.tanh(logits / {c})  # final softcap"),
        None => String::new(),
    };
    fill(
        r#"SLIDING = [${sliding}]  # per layer: a sliding layer, or a full one
BLOCK = ${block}  # layers per block: a block's first layer keeps its input as a summary
LOOP = ${looped}  # the looped layers (first, past the last) and their passes
LOOPED = ${has_loop}


def mix(blocks, x, q):
    """Block attention residual: the summaries and x, each RMS-normed without a weight, weighted
    by a softmax of their match with each of the queries q ([n, ${d}] or [${d}])."""
    S = torch.stack(blocks + [x], dim=-2).float()  # [B, T, k, ${d}]
    S = S * torch.rsqrt(S.pow(2).mean(-1, keepdim=True) + ${eps})
    q = q.float().view(-1, ${d})
    a = (S @ q.T / math.sqrt(${d})).softmax(dim=-2)  # [B, T, k, n]
    return [(S * a[..., i : i + 1]).sum(-2) for i in range(q.shape[0])]


class MessageGate(nn.Module):
    """x forgets a learned share of itself and takes in its message m, by a gate of rank ${rank}."""

    def __init__(self):
        super().__init__()
        self.down_weight = nn.Parameter(torch.empty(${rank}, 2 * ${d}))
        self.forget_weight = nn.Parameter(torch.empty(${d}, ${rank}))
        self.gain_weight = nn.Parameter(torch.empty(${d}, ${rank}))

    def forward(self, x, m):
        rms = lambda u: u * torch.rsqrt(u.pow(2).mean(-1, keepdim=True) + ${norm_eps})  # no weight
        g = torch.cat([rms(x.float()), rms(m.float())], dim=-1) @ self.down_weight.T
        return (1 - torch.tanh(g @ self.forget_weight.T)) * x + torch.tanh(g @ self.gain_weight.T) * m


class Layer(nn.Module):
    def __init__(self, i):
        super().__init__()
        if LOOP[0] <= i < LOOP[1]:  # a looped layer: a message gate for each of its inputs
            self.controllers = nn.ModuleDict({k: MessageGate() for k in ("attn", "k", "v", "mlp")})
        if SLIDING[i]:
            self.attn_norm = Norm(${d})
        else:  # the full layers norm their queries', keys' and values' inputs apart
            self.q_input_norm, self.k_input_norm, self.v_input_norm = Norm(${d}), Norm(${d}), Norm(${d})
        self.attn = Attention(full=not SLIDING[i])
        self.attn_sconv = Conv(${d}, TAPS)
        self.mlp_norm = Norm(${d})
        self.mlp = MoE()
        self.mlp_sconv = Conv(${d}, TAPS)


class AttnRes(nn.Module):
    """The block attention residuals' queries: each layer's after the first before its attention
    (three for a full layer), each layer's before its FFN, and the head's."""

    def __init__(self):
        super().__init__()
        self.attn_queries = nn.ParameterList([${queries}])
        self.mlp_queries = nn.ParameterList([torch.zeros(${d}) for _ in SLIDING])
        self.output_query = nn.Parameter(torch.zeros(${d}))


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(${v}, ${d})
        self.embed_norm = Norm(${d})
        self.layers = nn.ModuleList(Layer(i) for i in range(len(SLIDING)))
        self.attn_res = AttnRes()
        if LOOPED:  # the messages' queries: each looped layer's query and FFN ones, then key and value ones
            n = LOOP[1] - LOOP[0]
            self.middle_cycle_cross_pass_queries = nn.Parameter(torch.zeros(2 * n, ${d}))
            self.middle_cycle_cross_pass_kv_queries = nn.Parameter(torch.zeros(2 * n, ${d}))
        self.norm = Norm(${d})
        self.unembed = nn.Linear(${d}, ${v}, bias=False)

    def layer(self, i, x, blocks, messages=None):
        """Layer i on the stream x; a block's first layer appends x to blocks. In a loop's later
        passes, messages (q, k, v, FFN) from the pass before are gated into its inputs."""
        layer = self.layers[i]
        xs = mix(blocks, x, self.attn_res.attn_queries[i - 1]) if i > 0 else [x, x, x]
        xs = xs * 3 if len(xs) == 1 else xs  # a sliding layer's three inputs start as one
        if messages is not None:
            xs = [layer.controllers[k](xs[j], messages[j]) for j, k in enumerate(("attn", "k", "v"))]
        if SLIDING[i]:
            a = layer.attn(*(layer.attn_norm(u) for u in xs))
        else:
            a = layer.attn(layer.q_input_norm(xs[0]), layer.k_input_norm(xs[1]), layer.v_input_norm(xs[2]))
        a = layer.attn_sconv(a)
        if i % BLOCK == 0:  # a block's first layer: its input becomes a summary, the stream restarts
            blocks.append(x)
            r = a
        else:
            r = x + a
        h = mix(blocks, r, self.attn_res.mlp_queries[i])[0]
        if messages is not None:
            h = layer.controllers["mlp"](h, messages[3])
        return r + layer.mlp_sconv(layer.mlp(layer.mlp_norm(h)))

    def forward(self, input_ids):  # [B, T] -> [B, T, ${d}] after the final norm
        x = self.embed_norm(self.embed(input_ids))
        blocks = []  # the block summaries so far
        L = len(self.layers)
        start, end, passes = min(LOOP[0], L), min(LOOP[1], L), LOOP[2]  # a section past the last layer loops those it holds
        for i in range(start):
            x = self.layer(i, x, blocks)
        x0, blocks0, before = x, list(blocks), None
        for p in range(passes):  # the looped layers' passes, each from the same stream and summaries
            x, blocks = x0, list(blocks0)
            for i in range(start, end):
                messages = None
                if before is not None:
                    j = i - start
                    qm = self.middle_cycle_cross_pass_queries[2 * j : 2 * j + 2]
                    kv = self.middle_cycle_cross_pass_kv_queries[2 * j : 2 * j + 2]
                    messages = mix(before[0], before[1], torch.stack([qm[0], kv[0], kv[1], qm[1]]))
                x = self.layer(i, x, blocks, messages)
            before = (blocks[len(blocks0) + 1 :], x)  # what the pass added after its first summary, and its output
        for i in range(end, len(self.layers)):
            x = self.layer(i, x, blocks)
        return self.norm(mix(blocks, x, self.attn_res.output_query)[0])


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Module()
        self.model.llm = Decoder()

    def forward(self, input_ids):  # [B, T] int64 -> [B, T, vocab] logits
        h = self.model.llm(input_ids)
        logits = self.model.llm.unembed(h)${keep}${cap}
        return logits"#,
        &[
            ("sliding", sliding.join(", ")),
            ("block", r.block.to_string()),
            ("eps", r.eps.to_string()),
            ("d", d.to_string()),
            ("v", v.to_string()),
            ("queries", queries.join(", ")),
            ("keep", keep),
            ("cap", cap),
            (
                "looped",
                match r.looped {
                    Some(l) => format!("({}, {}, {})", l.start, l.end, l.passes),
                    None => format!("({0}, {0}, 1)", spec.layers),
                },
            ),
            ("rank", r.looped.map_or(1, |l| l.rank).to_string()),
            ("has_loop", super::py_bool(r.looped.is_some())),
            ("norm_eps", spec.norm.eps.to_string()),
        ],
    )
}
