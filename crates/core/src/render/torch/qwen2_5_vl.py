class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class Qwen25VisionBlock(Qwen2VisionBlock):
    """Qwen2-VL's block with RMSNorms and a biased gated MLP."""

    def __init__(self, hidden, intermediate, heads, eps, act):
        super().__init__(hidden, intermediate, heads, eps, act)
        self.norm1, self.norm2 = RMSNorm(hidden, eps), RMSNorm(hidden, eps)
        self.mlp = nn.Module()
        self.mlp.gate_proj = nn.Linear(hidden, intermediate)
        self.mlp.up_proj = nn.Linear(hidden, intermediate)
        self.mlp.down_proj = nn.Linear(intermediate, hidden)

    def mlp_of(self, x):
        return self.mlp.down_proj(self.act(self.mlp.gate_proj(x)) * self.mlp.up_proj(x))


class Qwen25Vision(Qwen2Vision):
    """Qwen2.5-VL's vision tower: Qwen2-VL's with RMSNorms, gated MLPs, and attention within windows of `window` features a
    side (tiled from the top left) except in the `full` blocks."""

    def __init__(self, channels, patch, frames, merge, hidden, intermediate, heads, layers, eps, act, theta, text, window, full):
        super().__init__(channels, patch, frames, merge, hidden, intermediate, heads, 0, eps, act, theta, text)
        self.blocks = nn.ModuleList(Qwen25VisionBlock(hidden, intermediate, heads, eps, act) for _ in range(layers))
        self.merger.ln_q = RMSNorm(hidden, 1e-6)
        self.window, self.full = window, full

    def forward(self, pixels):  # [channels, height, width] -> [features, text]
        x, pos, cos, sin = self.patches(pixels)
        span = self.window * self.merge  # a window's side in patches
        across = -(-(pixels.shape[2] // self.patch) // span)  # windows across
        win = pos[:, 0] // span * across + pos[:, 1] // span  # each patch's window
        same = win[:, None] == win[None, :]
        for i, block in enumerate(self.blocks):
            x = block(x, cos, sin, None if i in self.full else same)
        return self.merger.mlp(self.merger.ln_q(x).view(-1, x.shape[-1] * self.merge**2))  # [features, text]
