//! The PyTorch reference's DeepSeek-V4: its attention (a latent query, one key-and-value head
//! over a sliding window, compressors and the indexer), its experts (routed by token id in some
//! layers), and its layers over hyper-connections mixed by Sinkhorn iterations. Attribute names
//! are its checkpoints' (`attn.wq_a`, `ffn.gate.tid2eid`, `hc_attn_fn` …, `Layout::DeepseekV4`).

use super::{act_expr, fill, freqs_fn};
use crate::fmt::float as fmt_f;
use crate::spec::{Scoring, Spec, V4Attn, V4Kind};

fn v4(spec: &Spec) -> &V4Attn {
    spec.attn.v4.as_ref().expect("DeepSeek-V4 attention")
}

/// The sizes, the two sets of frequencies, the rotation of each head's last dims, the
/// compressors, the indexer and the attention.
pub(super) fn attention(spec: &Spec) -> String {
    let v = v4(spec);
    let a = &spec.attn;
    let (main, window) = (spec.v4_main_freqs(), spec.v4_window());
    [
        fill(
            r#"# DeepSeek-V4's sizes.
HIDDEN, HEADS, HEAD_DIM, ROPE_DIM, Q_LORA = ${hidden}, ${heads}, ${hd}, ${rope}, ${q_lora}
O_GROUPS, O_RANK, WINDOW, EPS = ${groups}, ${o_rank}, ${window}, ${eps}
INDEX_HEADS, INDEX_DIM, INDEX_TOPK = ${ih}, ${id}, ${topk}"#,
            &[
                ("hidden", spec.hidden.to_string()),
                ("heads", a.heads.to_string()),
                ("hd", a.head_dim.to_string()),
                ("rope", v.rope_dim.to_string()),
                ("q_lora", v.q_lora_rank.to_string()),
                ("groups", v.o_groups.to_string()),
                ("o_rank", v.o_lora_rank.to_string()),
                ("window", window.to_string()),
                ("eps", fmt_f(spec.norm.eps)),
                ("ih", v.index.heads.to_string()),
                ("id", v.index.head_dim.to_string()),
                ("topk", v.index.top_k.to_string()),
            ],
        ),
        freqs_fn("main_frequencies", main, v.rope_dim),
        freqs_fn("compress_frequencies", &v.compress_freqs, v.rope_dim),
        ATTENTION.trim().to_string(),
    ]
    .join("\n\n\n")
}

const ATTENTION: &str = r#"
def rotate_last(x, pos, frequencies, sign=1.0):
    """Rotate the last ROPE_DIM dims of x [..., T, d] in interleaved pairs by the angle of each
    position pos [T]; backwards with sign -1 (the attention's output)."""
    inv_freq, factor = frequencies(int(pos.max()) + 1 if len(pos) else 1)
    angles = pos.float()[:, None] * inv_freq[None, :]  # [T, ROPE_DIM / 2]
    cos, sin = angles.cos() * factor, sign * angles.sin() * factor
    rest, rot = x[..., :-ROPE_DIM], x[..., -ROPE_DIM:]
    a, b = rot[..., 0::2], rot[..., 1::2]
    rot = torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)
    return torch.cat((rest, rot), dim=-1)


class Compressor(nn.Module):
    """Each closed window of m tokens pooled into one entry: a softmax over the window's slots
    (feature by feature) of the gates plus a learned bias per slot weighs the tokens' parts. With
    overlap, each token projects two parts, its first dim features for the next window's entry
    and its last for its own, so an entry reads 2m slots. The entry is RMS-normed and rotated at
    its window's first position."""

    def __init__(self, m, dim, overlap):
        super().__init__()
        self.m, self.dim, self.overlap = m, dim, overlap
        width = 2 * dim if overlap else dim
        self.wkv = nn.Linear(HIDDEN, width, bias=False)
        self.wgate = nn.Linear(HIDDEN, width, bias=False)
        self.ape = nn.Parameter(torch.zeros(m, width))  # a bias per slot of a window
        self.norm = Norm(dim)

    def forward(self, x):  # x: [B, T, HIDDEN] -> entries [B, T // m, dim]
        B, T, _ = x.shape
        m, d, n = self.m, self.dim, T // self.m
        if n == 0:
            return x.new_zeros(B, 0, d)
        kv = self.wkv(x[:, : n * m]).view(B, n, m, -1)  # [B, n, m, width]
        z = self.wgate(x[:, : n * m]).view(B, n, m, -1) + self.ape
        if self.overlap:
            # the window before's first halves (none before the first window) beside its own last halves
            before_kv = F.pad(kv[:, :-1, :, :d], (0, 0, 0, 0, 1, 0))
            before_z = F.pad(z[:, :-1, :, :d], (0, 0, 0, 0, 1, 0), value=float("-inf"))
            kv = torch.cat((before_kv, kv[..., d:]), dim=2)  # [B, n, 2m, d]
            z = torch.cat((before_z, z[..., d:]), dim=2)
        entries = self.norm((kv * z.softmax(dim=2)).sum(dim=2))  # [B, n, d]
        return rotate_last(entries, torch.arange(n) * m, compress_frequencies)


class Indexer(nn.Module):
    """Scores each query against the entries of its own compressor: sum over its heads of a
    per-token weight times ReLU(q . k), and keeps the INDEX_TOPK best of the windows closed by
    the query's position."""

    def __init__(self, m):
        super().__init__()
        self.compressor = Compressor(m, INDEX_DIM, True)
        self.wq_b = nn.Linear(Q_LORA, INDEX_HEADS * INDEX_DIM, bias=False)
        self.weights_proj = nn.Linear(HIDDEN, INDEX_HEADS, bias=False)

    def forward(self, x, cq, seen):  # seen: [T, E], closed by each query -> [B, T, E] kept
        B, T, _ = x.shape
        k = self.compressor(x)  # [B, E, INDEX_DIM]
        q = self.wq_b(cq).view(B, T, INDEX_HEADS, INDEX_DIM).transpose(1, 2)
        q = rotate_last(q, torch.arange(T), compress_frequencies)  # [B, INDEX_HEADS, T, INDEX_DIM]
        w = self.weights_proj(x) * INDEX_HEADS ** -0.5  # [B, T, INDEX_HEADS]
        dots = (q @ k.unsqueeze(1).transpose(-1, -2)).relu() * INDEX_DIM ** -0.5  # [B, INDEX_HEADS, T, E]
        scores = torch.einsum("bth,bhte->bte", w, dots).masked_fill(~seen, float("-inf"))
        best = scores.topk(min(INDEX_TOPK, scores.shape[-1]), dim=-1).indices
        return torch.zeros_like(scores, dtype=torch.bool).scatter_(-1, best, True) & seen


class Attention(nn.Module):
    """kind: ("sliding", 0), ("csa", m) compressed sparse or ("hca", m) heavily compressed."""

    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        self.wq_a = nn.Linear(HIDDEN, Q_LORA, bias=False)
        self.q_norm = Norm(Q_LORA)
        self.wq_b = nn.Linear(Q_LORA, HEADS * HEAD_DIM, bias=False)
        self.wkv = nn.Linear(HIDDEN, HEAD_DIM, bias=False)  # one head, both key and value
        self.norm = Norm(HEAD_DIM)
        self.wo_a = nn.Linear(HEADS * HEAD_DIM // O_GROUPS, O_GROUPS * O_RANK, bias=False)
        self.wo_b = nn.Linear(O_GROUPS * O_RANK, HIDDEN, bias=False)
        self.attn_sink = nn.Parameter(torch.zeros(HEADS))  # one learned sink logit per head
        if kind[0] != "sliding":
            self.compressor = Compressor(kind[1], HEAD_DIM, kind[0] == "csa")
        if kind[0] == "csa":
            self.indexer = Indexer(kind[1])

    def forward(self, x):  # x: [B, T, HIDDEN]
        B, T, _ = x.shape
        frequencies = main_frequencies if self.kind[0] == "sliding" else compress_frequencies
        pos = torch.arange(T)
        cq = self.q_norm(self.wq_a(x))  # [B, T, Q_LORA], the query latent
        q = self.wq_b(cq).view(B, T, HEADS, HEAD_DIM).transpose(1, 2)
        q = rotate_last(q * torch.rsqrt(q.pow(2).mean(-1, keepdim=True) + EPS), pos, frequencies)  # each head RMS-normed (no weight)
        kv = rotate_last(self.norm(self.wkv(x)), pos, frequencies)  # [B, T, HEAD_DIM]
        i, j = pos[:, None], pos[None, :]
        allowed = ((j <= i) & (i - j < WINDOW)).expand(B, T, T)  # the sliding window
        keys = kv
        if self.kind[0] != "sliding":
            entries = self.compressor(x)  # [B, E, HEAD_DIM]
            seen = torch.arange(entries.shape[1])[None, :] < ((pos + 1) // self.kind[1])[:, None]  # [T, E]
            seen = self.indexer(x, cq, seen) if self.kind[0] == "csa" else seen.expand(B, -1, -1)
            keys = torch.cat((kv, entries), dim=1)  # [B, T + E, HEAD_DIM]
            allowed = torch.cat((allowed, seen), dim=-1)
        scores = (q @ keys.unsqueeze(1).transpose(-1, -2)) * HEAD_DIM ** -0.5  # [B, HEADS, T, T + E]
        scores = scores.masked_fill(~allowed.unsqueeze(1), float("-inf"))
        sink = self.attn_sink.view(1, HEADS, 1, 1).expand(B, HEADS, T, 1)
        probs = torch.cat((scores, sink), dim=-1).softmax(dim=-1)[..., :-1]  # the sink takes its share, then is dropped
        out = rotate_last(probs @ keys.unsqueeze(1), pos, frequencies, -1.0)  # values = keys; rotated back by the query's position
        out = out.transpose(1, 2).reshape(B, T, O_GROUPS, -1)  # [B, T, O_GROUPS, HEADS * HEAD_DIM / O_GROUPS]
        w = self.wo_a.weight.view(O_GROUPS, O_RANK, -1)  # each group of heads projected on its own
        return self.wo_b(torch.einsum("btgi,gri->btgr", out, w).flatten(2))  # [B, T, HIDDEN]
"#;

/// The experts: each a clamped SwiGLU; the router's choice by score or by token id.
pub(super) fn moe(spec: &Spec) -> String {
    let m = spec.moe.as_ref().expect("DeepSeek-V4's experts");
    let (score, score_name) = match m.scoring {
        Scoring::SqrtSoftplus => ("F.softplus(logits).sqrt()", "sqrt(softplus)"),
        Scoring::Sigmoid => ("torch.sigmoid(logits)", "sigmoid"),
        other @ (Scoring::Softmax
        | Scoring::TopkSoftmax
        | Scoring::TopkSigmoid
        | Scoring::SigmoidBiasedLogits
        | Scoring::SparseMixer { .. }
        | Scoring::SigmoidSink) => {
            unreachable!("DeepSeek-V4 scores by √softplus or σ, not {other:?}")
        }
    };
    fill(
        MOE,
        &[
            ("experts", m.experts.to_string()),
            ("k", m.top_k.to_string()),
            ("inter", m.expert_intermediate.to_string()),
            ("limit", fmt_f(m.swiglu_limit.unwrap_or(f64::INFINITY))),
            ("scale", fmt_f(m.routed_scaling)),
            ("vocab", spec.vocab.to_string()),
            ("eps", fmt_f(m.renorm_eps)),
            ("act", act_expr(spec.mlp.act, "self.w1(x).clamp(max=LIMIT)")),
            ("shared_bias", super::py_bool(m.shared_bias)),
            ("score", score.into()),
            ("score_name", score_name.into()),
        ],
    )
    .trim()
    .to_string()
}

const MOE: &str = r#"
EXPERTS, TOP_K, INTER, LIMIT, ROUTED_SCALE = ${experts}, ${k}, ${inter}, ${limit}, ${scale}
SHARED_BIAS = ${shared_bias}  # the shared expert's projections carry biases (`mlp_bias`)


class Expert(nn.Module):
    """A SwiGLU whose gate is clamped above at LIMIT and its up both ways."""

    def __init__(self, bias=False):
        super().__init__()
        self.w1 = nn.Linear(HIDDEN, INTER, bias=bias)  # gate
        self.w3 = nn.Linear(HIDDEN, INTER, bias=bias)  # up
        self.w2 = nn.Linear(INTER, HIDDEN, bias=bias)  # down

    def forward(self, x):
        return self.w2(${act} * self.w3(x).clamp(-LIMIT, LIMIT))


def score(logits):
    """The router's score of each expert: its ${score_name}."""
    return ${score}


class Gate(nn.Module):
    def __init__(self, hashed):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(EXPERTS, HIDDEN))
        if hashed:
            self.register_buffer("tid2eid", torch.zeros(${vocab}, TOP_K, dtype=torch.long))  # each token's experts
        else:
            self.register_buffer("bias", torch.zeros(EXPERTS))  # steers the choice only


class MoE(nn.Module):
    """EXPERTS routed experts, TOP_K per token, weighted by their ${score_name} scores
    renormalized; chosen by score plus a correction bias, or in a hashed layer by token id."""

    def __init__(self, hashed):
        super().__init__()
        self.hashed = hashed
        self.gate = Gate(hashed)
        self.experts = nn.ModuleList(Expert() for _ in range(EXPERTS))
        self.shared_experts = Expert(bias=SHARED_BIAS)

    def forward(self, x, ids):  # x: [B, T, HIDDEN], ids: [B, T]
        shape = x.shape
        x = x.reshape(-1, HIDDEN)  # one row per token
        probs = score(F.linear(x.float(), self.gate.weight.float()))  # [tokens, EXPERTS]
        if self.hashed:
            idx = self.gate.tid2eid[ids.reshape(-1)]  # [tokens, TOP_K]
        else:
            idx = (probs + self.gate.bias).topk(TOP_K, dim=-1).indices
        weights = probs.gather(1, idx)
        weights = weights / (weights.sum(-1, keepdim=True) + ${eps}) * ROUTED_SCALE
        out = torch.zeros_like(x)
        for slot in range(TOP_K):
            for e in range(EXPERTS):
                rows = idx[:, slot] == e
                if rows.any():
                    out[rows] += weights[rows, slot, None].to(x.dtype) * self.experts[e](x[rows])
        return (out + self.shared_experts(x)).reshape(shape)
"#;

/// The hyper-connections, the layers and the model.
pub(super) fn model(spec: &Spec) -> String {
    let v = v4(spec);
    let h = spec.hyper().expect("DeepSeek-V4's hyper-connections");
    let m = spec.moe.as_ref().expect("DeepSeek-V4's experts");
    let kinds: Vec<String> = (0..spec.layers)
        .map(|b| match v.kind(b) {
            V4Kind::Sliding => "(\"sliding\", 0)".to_string(),
            V4Kind::Csa(m) => format!("(\"csa\", {m})"),
            V4Kind::Hca(m) => format!("(\"hca\", {m})"),
        })
        .collect();
    let hashed: Vec<&str> = (0..spec.layers)
        .map(|b| {
            if m.hash_layers.as_ref().is_some_and(|l| l.contains(b)) {
                "True"
            } else {
                "False"
            }
        })
        .collect();
    let head = if spec.tied {
        "        return h @ self.model.embed_tokens.weight.T  # the head is the embedding"
    } else {
        "        return self.head(h)"
    };
    let head_init = if spec.tied {
        ""
    } else {
        "\n        self.head = nn.Linear(HIDDEN, ${vocab}, bias=False)"
    };
    fill(
        &MODEL.replace("${head_init}", head_init),
        &[
            ("n", h.streams.to_string()),
            ("magnitude", fmt_f(h.magnitude)),
            ("hc_eps", fmt_f(h.eps)),
            ("sinkhorn", h.sinkhorn.unwrap_or(1).to_string()),
            ("kinds", kinds.join(", ")),
            ("hashed", hashed.join(", ")),
            ("vocab", spec.vocab.to_string()),
            ("head", head.into()),
        ],
    )
    .trim()
    .to_string()
}

const MODEL: &str = r#"
N, HC_MAGNITUDE, HC_EPS, SINKHORN = ${n}, ${magnitude}, ${hc_eps}, ${sinkhorn}  # streams, their gates, Sinkhorn iterations
KINDS = [${kinds}]  # each layer's attention
HASHED = [${hashed}]  # each layer routes by token id


def stream_mix(x, fn, base, scale, head=False):
    """The N streams x [B, T, N, HIDDEN] weighed into one [B, T, HIDDEN] by pre gates computed
    from the streams; before a sublayer also the post gates [B, T, N], each stream's share of its
    output, and C [B, T, N, N], how the streams mix among themselves: a softmax made doubly
    stochastic by Sinkhorn iterations."""
    flat = x.flatten(-2).float()
    m = (flat @ fn.T) * torch.rsqrt(flat.pow(2).mean(-1, keepdim=True) + EPS)  # RMS-scaled, no weight
    pre = torch.sigmoid(m[..., :N] * scale[0] + base[:N]) + HC_EPS
    h = (pre.unsqueeze(-1) * x).sum(-2)
    if head:
        return h, None
    post = HC_MAGNITUDE * torch.sigmoid(m[..., N : 2 * N] * scale[1] + base[N : 2 * N])
    c = (m[..., 2 * N :] * scale[2] + base[2 * N :]).unflatten(-1, (N, N)).softmax(-1) + HC_EPS
    c = c / (c.sum(-2, keepdim=True) + HC_EPS)  # columns
    for _ in range(SINKHORN - 1):
        c = c / (c.sum(-1, keepdim=True) + HC_EPS)  # rows
        c = c / (c.sum(-2, keepdim=True) + HC_EPS)  # columns
    return h, (post, c)


class DecoderLayer(nn.Module):
    def __init__(self, kind, hashed):
        super().__init__()
        self.attn = Attention(kind)
        self.ffn = MoE(hashed)
        self.attn_norm = Norm(HIDDEN)
        self.ffn_norm = Norm(HIDDEN)
        for s in ("attn", "ffn"):  # each sublayer's stream mix: pre, post and C's logits
            setattr(self, f"hc_{s}_fn", nn.Parameter(torch.zeros((2 + N) * N, N * HIDDEN)))
            setattr(self, f"hc_{s}_base", nn.Parameter(torch.zeros((2 + N) * N)))
            setattr(self, f"hc_{s}_scale", nn.Parameter(torch.zeros(3)))

    def forward(self, x, ids):  # x: [B, T, N, HIDDEN]
        h, (post, c) = stream_mix(x, self.hc_attn_fn, self.hc_attn_base, self.hc_attn_scale)
        y = self.attn(self.attn_norm(h))
        x = c.transpose(-1, -2) @ x + post.unsqueeze(-1) * y.unsqueeze(-2)  # stream i: sum_j C[j, i] x_j plus its share
        h, (post, c) = stream_mix(x, self.hc_ffn_fn, self.hc_ffn_base, self.hc_ffn_scale)
        y = self.ffn(self.ffn_norm(h), ids)
        return c.transpose(-1, -2) @ x + post.unsqueeze(-1) * y.unsqueeze(-2)


class HcHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.hc_fn = nn.Parameter(torch.zeros(N, N * HIDDEN))
        self.hc_base = nn.Parameter(torch.zeros(N))
        self.hc_scale = nn.Parameter(torch.zeros(1))

    def forward(self, x):  # the streams weighed into one before the final norm
        return stream_mix(x, self.hc_fn, self.hc_base, self.hc_scale, head=True)[0]


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(${vocab}, HIDDEN)
        self.layers = nn.ModuleList(DecoderLayer(k, h) for k, h in zip(KINDS, HASHED))
        self.norm = Norm(HIDDEN)
        self.hc_head = HcHead()

    def forward(self, input_ids):  # [B, T] int64 -> [B, T, HIDDEN] after the final norm
        x = self.embed_tokens(input_ids)
        x = x.unsqueeze(-2).expand(-1, -1, N, -1)  # [B, T, N, HIDDEN]: every stream starts as the embedding
        for layer in self.layers:
            x = layer(x, input_ids)
        return self.norm(self.hc_head(x))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Decoder()${head_init}

    def forward(self, input_ids):  # [B, T] int64 -> logits [B, T, vocab]
        h = self.model(input_ids)
${head}
"#;
