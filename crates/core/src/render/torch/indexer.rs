//! Sparse attention's indexers: A.X-K2's block index and DeepSeek's lightning indexer.

use super::*;

/// MiniMax-M3's lightning indexer, as a module returning the keys each index head's group keeps.
pub(super) fn block_indexer(spec: &Spec, n: &Names, bi: crate::spec::BlockIndex) -> String {
    fill(
        r#"class BlockIndexer(nn.Module):
    """The lightning indexer: ${ih} heads of ${id} score every earlier key (q · k, unscaled); each
    query keeps its ${local} latest blocks of ${block} keys and the best-scored others, ${top_k}
    blocks in all, for the query heads of its index head's group. Its keys are cached."""

    def __init__(self):
        super().__init__()
        BlockIndexer.layers(self)

    @staticmethod
    def layers(m):  # its projections and norms, on `m` (where a checkpoint keeps them on the attention)
        m.${q} = nn.Linear(${d}, ${ih} * ${id}, bias=False)
        m.${k} = nn.Linear(${d}, ${id}, bias=False)
        m.${qn} = Norm(${id})
        m.${kn} = Norm(${id})

    def forward(self, x, rope):  # -> [B, ${ih}, T, T] bool, True at the keys each group keeps
        B, T, _ = x.shape
        cos, sin = rope  # the attention's RoPE, on the first dims of each head
        q = apply_rope(self.${qn}(self.${q}(x).view(B, T, ${ih}, ${id})).transpose(1, 2), cos, sin)
        k = apply_rope(self.${kn}(self.${k}(x)).view(B, 1, T, ${id}), cos, sin)
        scores = (q.float() @ k.float().transpose(-1, -2)).masked_fill(~attention_mask(T, ("full", 0)).to(x.device), float("-inf"))
        blocks = -(-T // ${block})
        scores = F.pad(scores, (0, blocks * ${block} - T), value=float("-inf"))
        best = scores.view(B, ${ih}, T, blocks, ${block}).amax(-1)  # [B, ${ih}, T, blocks]: each block's best score
        latest = torch.arange(T, device=x.device) // ${block}
        for back in range(${local}):  # the query's latest blocks always stay
            best[..., torch.arange(T, device=x.device), (latest - back).clamp(min=0)] = float("inf")
        top = best.topk(min(${top_k}, blocks), dim=-1)
        chosen = torch.zeros_like(best, dtype=torch.bool).scatter(-1, top.indices, top.values > float("-inf"))
        return chosen.repeat_interleave(${block}, dim=-1)[..., :T]"#,
        &[
            ("ih", bi.heads.to_string()),
            ("id", bi.head_dim.to_string()),
            ("block", bi.block.to_string()),
            ("top_k", bi.top_k.to_string()),
            ("local", bi.local.to_string()),
            ("d", spec.hidden.to_string()),
            ("q", n.attr(Role::BlockIndexQ)),
            ("k", n.attr(Role::BlockIndexK)),
            ("qn", n.attr(Role::BlockIndexQNorm)),
            ("kn", n.attr(Role::BlockIndexKNorm)),
        ],
    )
}

/// The layers that run an indexer of their own, where only some do (GLM-5's shared layers).
pub(super) fn own_indexers(spec: &Spec) -> Option<&crate::layers::LayerSet> {
    let ix = spec.attn.mla.as_ref()?.indexer.as_ref()?;
    (!spec.indexer_reusers().is_empty()).then_some(&ix.own)
}

/// DeepSeek sparse attention's indexer, as a module returning the keys each query keeps.
pub(super) fn indexer(ix: &crate::spec::Indexer, ql: u64, d: u64, rd: u64, n: &Names) -> String {
    let attr = |r| n.attr(r);
    fill(
        r#"class Indexer(nn.Module):
    """DeepSeek sparse attention: ${ih} light heads score every earlier token, and each query keeps
    its ${top_k} best. Its keys (${id} per token) are cached beside the latent."""

    def __init__(self):
        super().__init__()
        self.${wq} = nn.Linear(${ql}, ${ih} * ${id}, bias=False)
        self.${wk} = nn.Linear(${d}, ${id}, bias=False)
        self.${k_norm} = nn.LayerNorm(${id}, eps=${key_eps})
        self.${weights} = nn.Linear(${d}, ${ih}, bias=False)

    def forward(self, x, q_latent, rope):  # -> [B, T, T] bool, True at the keys each query keeps
        B, T, _ = x.shape
        cos, sin = rope

${rotate}
        q = rotate(self.${wq}(q_latent).view(B, T, ${ih}, ${id}).transpose(1, 2))  # [B, ${ih}, T, ${id}]
        k = rotate(self.${k_norm}(self.${wk}(x)))  # [B, T, ${id}], one key per token
        dots = F.relu(q @ k[:, None].transpose(-1, -2) / math.sqrt(${id}))  # [B, ${ih}, T, T]
        w = self.${weights}(x) / math.sqrt(${ih})  # [B, T, ${ih}]
        scores = torch.einsum("bth,bhts->bts", w, dots)
        scores = scores.masked_fill(~attention_mask(T, ("full", 0)).to(x.device), float("-inf"))
        top = scores.topk(min(${top_k}, T), dim=-1).indices
        return torch.zeros_like(scores, dtype=torch.bool).scatter(-1, top, True)"#,
        // The rotation first: it holds placeholders of its own.
        &[
            (
                "rotate",
                if ix.rope_last && ix.interleaved {
                    "        def rotate(t):  # RoPE on the last ${rd} dims, interleaved pairs
            rest, rot = t[..., :-${rd}], t[..., -${rd}:]
            a, b = rot[..., 0::2], rot[..., 1::2]
            c, s = cos[..., :${half}], sin[..., :${half}]
            rot = torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2)
            return torch.cat((rest, rot), dim=-1)
"
                    .to_string()
                } else if ix.rope_last {
                    "        def rotate(t):  # rotate-half on the last ${rd} dims
            rest, rot = t[..., :-${rd}], t[..., -${rd}:]
            half = torch.cat((-rot[..., ${half}:], rot[..., :${half}]), dim=-1)
            return torch.cat((rest, rot * cos + half * sin), dim=-1)
"
                    .to_string()
                } else if ix.interleaved {
                    "        def rotate(t):  # RoPE on the first ${rd} dims, interleaved pairs
            rot, rest = t[..., :${rd}], t[..., ${rd}:]
            a, b = rot[..., 0::2], rot[..., 1::2]
            c, s = cos[..., :${half}], sin[..., :${half}]
            rot = torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2)
            return torch.cat((rot, rest), dim=-1)
"
                    .to_string()
                } else {
                    "        def rotate(t):  # rotate-half on the first ${rd} dims (the attention itself pairs differently)
            rot, rest = t[..., :${rd}], t[..., ${rd}:]
            half = torch.cat((-rot[..., ${half}:], rot[..., :${half}]), dim=-1)
            return torch.cat((rot * cos + half * sin, rest), dim=-1)
".to_string()
                },
            ),
            ("ih", ix.heads.to_string()),
            ("key_eps", fmt_f(ix.key_eps)),
            ("id", ix.head_dim.to_string()),
            ("top_k", ix.top_k.to_string()),
            ("ql", ql.to_string()),
            ("d", d.to_string()),
            ("rd", rd.to_string()),
            ("half", (rd / 2).to_string()),
            ("wq", attr(Role::IndexQ)),
            ("wk", attr(Role::IndexK)),
            ("k_norm", attr(Role::IndexKNorm)),
            ("weights", attr(Role::IndexWeights)),
        ],
    )
}
