//! The PyTorch reference's Qwen4-Exp parts: the gated residual streams' mix and the QSA
//! indexer.

use super::torch::fill;
use crate::fmt::float as fmt_f;
use crate::spec::{GatedStreams, Qsa};

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
