class SoftEmbNorm(nn.Module):
    """Gemma's RMSNorm: scaled by 1 + its weight."""

    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * (1 + self.weight)


class Gemma3Projector(nn.Module):
    """The patch grid average-pooled to the features' grid, an RMSNorm, and a map into the text width (stored [vision, text])."""

    def __init__(self, vision, text, grid, pool, eps):
        super().__init__()
        self.mm_input_projection_weight = nn.Parameter(torch.zeros(vision, text))
        self.mm_soft_emb_norm = SoftEmbNorm(vision, eps)
        self.grid = grid
        self.pool = nn.AvgPool2d(pool, stride=pool)

    def forward(self, x):  # [B, grid², vision] -> [B, tokens, text]
        B, N, D = x.shape
        x = self.pool(x.transpose(1, 2).reshape(B, D, self.grid, self.grid)).flatten(2).transpose(1, 2)
        return self.mm_soft_emb_norm(x) @ self.mm_input_projection_weight


def image_reach(ids, token):
    """The last key each position sees: an image placeholder its run's last (the image's tokens see each other both ways), any other itself."""
    reach = torch.arange(len(ids))
    for t in range(len(ids) - 2, -1, -1):
        if ids[t] == token and ids[t + 1] == token:
            reach[t] = reach[t + 1]
    return reach
