def turn_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


class Qwen2VisionBlock(nn.Module):
    """A LayerNorm, the fused biased QKV turned by each patch's row and column (2-D RoPE), attention among every patch, the biased output map; a LayerNorm and a biased two-layer MLP."""

    def __init__(self, hidden, intermediate, heads, eps, act, mlp=("fc1", "fc2")):
        super().__init__()
        self.norm1 = nn.LayerNorm(hidden, eps=eps)
        self.norm2 = nn.LayerNorm(hidden, eps=eps)
        self.attn = nn.Module()
        self.attn.qkv = nn.Linear(hidden, 3 * hidden)
        self.attn.proj = nn.Linear(hidden, hidden)
        self.mlp = nn.Module()  # its two maps under the checkpoint's names
        setattr(self.mlp, mlp[0], nn.Linear(hidden, intermediate))
        setattr(self.mlp, mlp[1], nn.Linear(intermediate, hidden))
        self.names, self.heads, self.act = mlp, heads, act

    def forward(self, x, cos, sin, allowed=None):  # x: [patches, hidden]; cos, sin: [patches, head dim]
        n, d = x.shape
        q, k, v = self.attn.qkv(self.norm1(x)).view(n, 3, self.heads, -1).permute(1, 2, 0, 3)  # [heads, patches, head dim] each
        q, k = q * cos + turn_half(q) * sin, k * cos + turn_half(k) * sin
        scores = q @ k.transpose(-1, -2) * q.shape[-1] ** -0.5  # every patch sees every other
        if allowed is not None:
            scores = scores.masked_fill(~allowed, float("-inf"))  # or those of its window alone
        o = torch.softmax(scores, dim=-1) @ v
        x = x + self.attn.proj(o.transpose(0, 1).reshape(n, d))
        return x + self.mlp_of(self.norm2(x))

    def mlp_of(self, x):
        fc1, fc2 = (getattr(self.mlp, n) for n in self.names)
        return fc2(self.act(fc1(x)))


class Qwen2Vision(nn.Module):
    """Qwen2-VL's vision tower: the image in patches (its frame repeated to the convolution's), the blocks, and the merger: a LayerNorm, each merge² patches side by side, two biased maps with GELU between."""

    def __init__(self, channels, patch, frames, merge, hidden, intermediate, heads, layers, eps, act, theta, text):
        super().__init__()
        self.patch_embed = nn.Module()
        self.patch_embed.proj = nn.Conv3d(channels, hidden, (frames, patch, patch), stride=(frames, patch, patch), bias=False)
        self.blocks = nn.ModuleList(Qwen2VisionBlock(hidden, intermediate, heads, eps, act) for _ in range(layers))
        self.merger = nn.Module()
        self.merger.ln_q = nn.LayerNorm(hidden, eps=1e-6)
        joined = hidden * merge * merge
        self.merger.mlp = nn.Sequential(nn.Linear(joined, joined), nn.GELU(), nn.Linear(joined, text))
        self.patch, self.frames, self.merge, self.heads, self.theta = patch, frames, merge, heads, theta

    def patches(self, pixels):  # [channels, height, width], as the processor resizes and normalizes them
        """Each patch through the convolution: [patches, hidden]; each patch's row and column, [patches, 2]; and the 2-D rotary tables."""
        c, h, w = pixels.shape
        p, m, f = self.patch, self.merge, self.frames
        gh, gw = h // p, w // p  # the patch grid
        x = pixels.reshape(c, gh // m, m, p, gw // m, m, p).permute(1, 4, 2, 5, 0, 3, 6)  # m×m blocks of patches, row by row
        x = x.unsqueeze(5).expand(-1, -1, -1, -1, -1, f, -1, -1).reshape(-1, c, f, p, p)  # each patch, its frame repeated
        x = self.patch_embed.proj(x).flatten(1)  # [patches, hidden]
        order = lambda a: a.reshape(gh // m, m, gw // m, m).transpose(1, 2).flatten()  # in the patches' order
        rows, cols = torch.meshgrid(torch.arange(gh), torch.arange(gw), indexing="ij")
        pos = torch.stack([order(rows), order(cols)], -1)  # [patches, 2]: each patch's row and column
        hd = x.shape[-1] // self.heads
        inv = 1.0 / self.theta ** (torch.arange(0, hd // 2, 2, dtype=torch.float) / (hd // 2))  # [head dim / 4]
        angles = (pos[:, :, None].float() * inv).flatten(1)  # [patches, head dim / 2]: the row's angles, then the column's
        angles = torch.cat((angles, angles), -1)
        return x, pos, angles.cos(), angles.sin()

    def forward(self, pixels):  # [channels, height, width] -> [features, text]
        x, _, cos, sin = self.patches(pixels)
        for block in self.blocks:
            x = block(x, cos, sin)
        return self.merger.mlp(self.merger.ln_q(x).view(-1, x.shape[-1] * self.merge**2))  # [features, text]


def mrope_positions(ids, token, grid):
    """[3, T]: each token's time, row and column (transformers' get_rope_index): text at the next position on all three; the
    image's run of placeholders over its features' grid, time at the run's start, row and column added to it; text after it
    from the start plus the grid's longer side."""
    rows, cols = grid
    pos, nxt, t = [], 0, 0
    while t < len(ids):
        if ids[t] == token:
            pos += [(nxt, nxt + k // cols, nxt + k % cols) for k in range(rows * cols)]
            t, nxt = t + rows * cols, nxt + max(rows, cols)
        else:
            pos.append((nxt, nxt, nxt))
            t, nxt = t + 1, nxt + 1
    return torch.tensor(pos[: len(ids)]).T
