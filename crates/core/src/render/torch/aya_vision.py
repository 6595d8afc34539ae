class AyaProjector(nn.Module):
    """Aya Vision's projector (Command A Vision's without the LayerNorm, eps None): each shuffle × shuffle patches joined by the pixel shuffle, a LayerNorm, a map whose second half, through SiLU, gates the first, and a map into the text width."""

    def __init__(self, hidden, grid, shuffle, inner, text, eps):
        super().__init__()
        joined = hidden * shuffle * shuffle
        self.layernorm = nn.LayerNorm(joined, eps=eps) if eps is not None else nn.Identity()
        self.linear_1 = nn.Linear(joined, inner)
        self.linear_2 = nn.Linear(inner // 2, text)
        self.grid, self.shuffle = grid, shuffle

    def forward(self, x):  # [tiles, grid², hidden] -> [tiles, features, text]
        x = pixel_shuffle(x, self.grid, self.shuffle)
        x, gate = self.linear_1(self.layernorm(x)).chunk(2, -1)
        return self.linear_2(F.silu(gate) * x)
