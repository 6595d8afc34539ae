//! The PyTorch reference's Qwen4-Exp parts: the gated residual streams' mix and the QSA
//! indexer.

use super::fill;
use crate::fmt::float as fmt_f;
use crate::spec::{GatedStreams, NgramPle, Qsa};

/// The mix's module, its tensors named as the checkpoint names them (`hc_norm`,
/// `input_mix_weight_down`, `input_mix_weight_up`, `block_inject_weight`).
pub(super) fn gated_mix_class(
    g: GatedStreams,
    hidden: u64,
    eps: f64,
    [norm, down, up, inject]: [String; 4],
) -> String {
    fill(
        r#"N = ${n}  # residual streams


class GatedMix(nn.Module):
    """Gated residual streams: the N streams [B, T, N, ${d}] each RMS-normed and scaled by
    (1 + w), gated feature by feature through a rank-${r} bottleneck and averaged into one input;
    before a sublayer also each stream's injection weight in (0, 2), which writes the sublayer's
    output back; in the head (`head=True`) the input alone."""

    def __init__(self, head=False):
        super().__init__()
        self.${norm} = nn.Module()
        self.${norm}.weight = nn.Parameter(torch.zeros(N * ${d}))
        self.${down} = nn.Linear(N * ${d}, ${r}, bias=False)
        self.${up} = nn.Linear(${r}, N * ${d}, bias=False)
        self.${inject} = None if head else nn.Linear(N * ${d}, N, bias=False)

    def forward(self, x):  # x: [B, T, N, ${d}] -> ([B, T, ${d}], [B, T, N] or None)
        xn = (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + ${eps})).flatten(-2) * (1 + self.${norm}.weight)
        a = torch.sigmoid(self.${up}(F.silu(self.${down}(xn) / N)))  # [B, T, N * ${d}]
        h = (a * xn).unflatten(-1, (N, ${d})).mean(-2)
        if self.${inject} is None:
            return h, None
        return h, 2 * torch.sigmoid(self.${inject}(xn) / N)"#,
        &[
            ("n", g.streams.to_string()),
            ("r", g.rank.to_string()),
            ("d", hidden.to_string()),
            ("eps", fmt_f(eps)),
            ("norm", norm),
            ("down", down),
            ("up", up),
            ("inject", inject),
        ],
    )
}

/// The QSA indexer, as a module returning the keys every head keeps.
pub(super) fn qsa_class(q: Qsa, hidden: u64, [qk, qn, kn]: [String; 3]) -> String {
    fill(
        r#"class QsaIndexer(nn.Module):
    """QSA: ${ih} index heads of ${id} and one raw key per token (cached). Each complete block
    of ${r} keys is averaged, normed and rotated at its first position; each query keeps its
    ${blocks} best blocks by the sum over heads of ReLU(q · k) / √${id}, and the tokens after its
    last complete block. Every attention head attends there alone."""

    def __init__(self):
        super().__init__()
        self.${qk} = nn.Linear(${d}, (${ih} + 1) * ${id}, bias=False)
        self.${qn} = Norm(${id})
        self.${kn} = Norm(${id})

    def forward(self, x, rope):  # -> [B, T, T] bool, True at the keys each query keeps
        B, T, _ = x.shape
        cos, sin = rope  # the attention's RoPE, on the first dims of each head
        q, k = self.${qk}(x).split([${ih} * ${id}, ${id}], dim=-1)
        q = apply_rope(self.${qn}(q.view(B, T, ${ih}, ${id})).transpose(1, 2), cos, sin)  # [B, ${ih}, T, ${id}]
        nb = T // ${r}  # complete blocks
        k = k[:, : nb * ${r}].reshape(B, nb, ${r}, ${id}).mean(2)  # each block's raw keys averaged
        k = apply_rope(self.${kn}(k).unsqueeze(1), cos[::${r}][:nb], sin[::${r}][:nb])  # [B, 1, nb, ${id}]
        scores = (q @ k.transpose(-1, -2)).relu().sum(1) / ${id} ** 0.5  # [B, T, nb]
        t = torch.arange(T, device=x.device)
        seen = (t + 1) // ${r}  # the complete blocks each query sees
        scores = scores.masked_fill(torch.arange(nb, device=x.device) >= seen[:, None], float("-inf"))
        keep = torch.zeros(B, T, nb, dtype=torch.bool, device=x.device)
        if nb:
            top = scores.topk(min(${blocks}, nb), dim=-1)
            keep = keep.scatter(-1, top.indices, top.values > float("-inf"))
        keep = F.pad(keep.repeat_interleave(${r}, dim=-1), (0, T - nb * ${r}), value=False)
        tail = (t[None, :] >= (seen * ${r})[:, None]) & (t[None, :] <= t[:, None])  # after the last complete block
        return keep | tail"#,
        &[
            ("ih", q.heads.to_string()),
            ("id", q.head_dim.to_string()),
            ("r", q.ratio.to_string()),
            ("blocks", q.blocks().to_string()),
            ("d", hidden.to_string()),
            ("qk", qk),
            ("qn", qn),
            ("kn", kn),
        ],
    )
}

/// The n-gram embeddings' modules: the table with its hashing buffers, and the layer's part
/// around it. `shards`: each PLE layer's shards' rows, by layer.
pub(super) fn ngram_classes(
    p: &NgramPle,
    hidden: u64,
    eps: f64,
    shards: &[(u64, Vec<u64>)],
) -> String {
    let list: Vec<String> = shards
        .iter()
        .map(|(b, rows)| {
            let r: Vec<String> = rows.iter().map(u64::to_string).collect();
            format!("{b}: [{}]", r.join(", "))
        })
        .collect();
    fill(
        r#"NGRAM, EOS, KERNEL = ${ngram}, ${eos}, ${kernel}  # n-grams of 2 to NGRAM tokens, the end of sequence they stop at, the convolution's taps
# Each PLE layer's table, saved in shards: their rows.
NGRAM_SHARDS = {${shards}}


class NgramTable(nn.Module):
    """A PLE layer's hashed n-gram table and the buffers that hash into it: for each n, the
    token and the n − 1 before it (none reaching back past an end of sequence), each times an
    odd multiplier, XORed; modulo each of the n's ${per} heads' prime sizes, plus the head's
    offset, a row of ${hd}."""

    def __init__(self, shards):
        super().__init__()
        self.register_buffer("layer_multipliers", torch.zeros(NGRAM, dtype=torch.long))
        self.register_buffer("ngram_heads_vocab_sizes", torch.zeros(${heads}, dtype=torch.long))
        self.register_buffer("ngram_heads_offsets", torch.zeros(${heads}, dtype=torch.long))
        self.ngram_embedding = nn.Module()
        self.shards = len(shards)
        for i, rows in enumerate(shards):
            setattr(self.ngram_embedding, f"shard_{i}", nn.Embedding(rows, ${hd}))

    def forward(self, ids):  # [B, T] -> [B, T, ${width}]
        B, T = ids.shape
        st = state_of(self)  # decoding: the ids of earlier calls
        hist = torch.cat([st.get("ids", ids.new_full((B, NGRAM - 1), EOS)), ids], dim=1)  # an end of sequence before the first token
        st["ids"] = hist[:, T:]  # the last NGRAM - 1
        shifted, crossed = [ids], torch.zeros_like(ids, dtype=torch.bool)
        for s in range(1, NGRAM):
            if s > 1:  # an end of sequence between the token and this one: the n-gram stops
                crossed = crossed | (hist[:, NGRAM - s : NGRAM - s + T] == EOS)
            shifted.append(torch.where(crossed, EOS, hist[:, NGRAM - 1 - s : NGRAM - 1 - s + T]))
        rows = []
        for n in range(2, NGRAM + 1):
            mixed = shifted[0] * self.layer_multipliers[0]
            for s in range(1, n):
                mixed = mixed ^ (shifted[s] * self.layer_multipliers[s])
            heads = slice((n - 2) * ${per}, (n - 1) * ${per})
            rows.append(mixed.unsqueeze(-1) % self.ngram_heads_vocab_sizes[heads] + self.ngram_heads_offsets[heads])
        table = torch.cat([getattr(self.ngram_embedding, f"shard_{i}").weight for i in range(self.shards)])
        return F.embedding(torch.cat(rows, -1), table).flatten(-2)


class GroupedNorm(nn.Module):
    """Each stream [.., N, ${d}] RMS-normed on its own, all N * ${d} features scaled by (1 + w)."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(N * ${d}))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + ${eps}) * (1 + self.weight.view(N, ${d}))


class NgramPle(nn.Module):
    """The n-gram embedding's value gated per stream by the stream's match with a key of its
    own, plus a convolution of the gated values (KERNEL taps, NGRAM apart): what joins the
    streams before the mixer."""

    def __init__(self, shards):
        super().__init__()
        self.ple_embedding = NgramTable(shards)
        self.key_proj = nn.Linear(${width}, N * ${d}, bias=False)
        self.value_proj = nn.Linear(${width}, ${d}, bias=False)
        self.norm_key, self.norm_query, self.norm_conv = GroupedNorm(), GroupedNorm(), GroupedNorm()
        self.conv1d = nn.Conv1d(N * ${d}, N * ${d}, KERNEL, groups=N * ${d}, dilation=NGRAM, bias=False)

    def forward(self, x, ids):  # x: [B, T, N, ${d}], the streams -> what joins them
        e = self.ple_embedding(ids)
        k = self.norm_key(self.key_proj(e).unflatten(-1, (N, ${d})))
        g = (k * self.norm_query(x)).sum(-1, keepdim=True) / ${d} ** 0.5
        g = g.abs().clamp_min(1e-6).sqrt() * g.sign()  # a signed square root
        u = torch.sigmoid(g) * self.value_proj(e).unsqueeze(-2)  # [B, T, N, ${d}]
        c = self.norm_conv(u).flatten(-2).transpose(1, 2)  # [B, N * ${d}, T]
        st = state_of(self)  # decoding: the convolution's inputs of earlier calls
        c = torch.cat([st.get("conv", c.new_zeros(*c.shape[:2], (KERNEL - 1) * NGRAM)), c], dim=2)  # zeros before the first token
        st["conv"] = c[..., u.shape[1] :]  # the last (KERNEL - 1) * NGRAM
        c = F.silu(self.conv1d(c)).transpose(1, 2)
        return u + c.unflatten(-1, (N, ${d}))"#,
        &[
            ("ngram", p.ngram.to_string()),
            ("eos", p.eos.to_string()),
            ("kernel", p.kernel.to_string()),
            ("shards", list.join(", ")),
            ("per", p.heads_per_ngram.to_string()),
            ("heads", p.heads().to_string()),
            ("hd", p.head_dim().to_string()),
            ("width", p.width.to_string()),
            ("d", hidden.to_string()),
            ("eps", fmt_f(eps)),
        ],
    )
}
