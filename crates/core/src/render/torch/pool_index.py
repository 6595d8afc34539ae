POOL = None  # Kolibri 1.1: each query's pool of candidate keys [B, T, T], from the last layer that picked one


def nvfp4(x):
    """Round to NVFP4 and back: E2M1 values with one E4M3 scale per 16 values of the last dim, ties to even."""
    blocks = x.float().unflatten(-1, (-1, 16))
    scale = (blocks.abs().amax(-1, keepdim=True) / 6).clamp(2**-9, 448).to(torch.float8_e4m3fn).float()
    scaled = blocks / scale
    magnitude = scaled.abs().clamp(max=6)
    # E2M1 magnitudes are 0.5 apart below 2, 1 apart below 4, 2 apart up to 6
    step = torch.where(magnitude < 2, 0.5, torch.where(magnitude < 4, 1.0, 2.0))
    return ((torch.round(magnitude / step) * step).copysign(scaled) * scale).flatten(-2).to(x.dtype)


def top_k_mask(scores, k):
    """The k highest finite scores of each row; ties go to the lower index."""
    k = min(k, scores.shape[-1])
    kth = scores.topk(k, dim=-1).values[..., -1:]
    tied = (scores == kth) & (kth > float("-inf"))
    free = k - (scores > kth).sum(-1, keepdim=True)
    return (scores > kth) | (tied & (tied.cumsum(-1) <= free))


class PoolIndexer(nn.Module):
    """Kolibri 1.1's weightless indexer: which keys each query attends to. A pool layer picks each query's pool of
    candidate blocks (all it sees while that is at most `pool` keys); every indexed layer keeps the `top_k` best keys
    of the last pool, the first `sinks` keys and the last `local` (all, for a query that sees no more than those)."""

    def __init__(self, heads, top_k, pool, compression, local, sinks, picks_pool):
        super().__init__()
        self.heads, self.top_k, self.pool, self.c = heads, top_k, pool, compression
        self.local, self.sinks, self.picks_pool = local, sinks, picks_pool

    def score(self, q, keys):  # q: [heads, t, D], keys: [n, D] -> [t, n]
        s = q.new_zeros(q.shape[1], keys.shape[0])
        for head in q:
            s += (head @ keys.T).relu()
        return s * (q.shape[-1] ** -0.5 / self.heads)

    def forward(self, q, k0):  # q: [B, H, T, D], the normed queries; k0: [B, T, D], K/V head 0's raw keys
        global POOL
        B, _, T, _ = q.shape
        pos = torch.arange(T, device=q.device)
        visible = pos[None, :] <= pos[:, None]  # [T, T]
        lengths = pos + 1  # the keys each query sees
        keep = visible.repeat(B, 1, 1)  # [B, T, T]
        if self.picks_pool:
            POOL = keep.clone()
        for b in range(B):
            rq, rk = nvfp4(q[b, : self.heads]).float(), nvfp4(k0[b]).float()  # both rounded to NVFP4
            rows = lengths > self.pool
            if self.picks_pool and rows.any():
                n, L = T // self.c, lengths[rows, None]
                means = nvfp4(k0[b, : n * self.c].float().unflatten(0, (n, self.c)).sum(1) / self.c)  # each block's mean key
                s = F.pad(self.score(rq[:, rows], means), (0, 1))  # and the newest, incomplete block
                j = torch.arange(n + 1, device=q.device)
                s = torch.where(j < L // self.c, s, 0.0).masked_fill(j >= (L + self.c - 1) // self.c, float("-inf"))
                POOL[b, rows] = top_k_mask(s, self.pool // self.c).repeat_interleave(self.c, dim=-1)[:, :T] & visible[rows]
            rows = lengths > self.top_k + self.local + self.sinks
            if rows.any():
                L = lengths[rows, None]
                sinks, local = pos < self.sinks, (pos >= L - self.local) & (pos < L)
                candidates = POOL[b, rows] & ~sinks & (pos < L - self.local)
                chosen = top_k_mask(self.score(rq[:, rows], rk).masked_fill(~candidates, float("-inf")), self.top_k)
                keep[b, rows] = (chosen | sinks | local) & visible[rows]
        return keep
