class SiglipEmbeddings(nn.Module):
    """Each patch through a convolution (stride = its side, with a bias), a learned position each."""

    def __init__(self, channels, image, patch, hidden):
        super().__init__()
        self.patch_embedding = nn.Conv2d(channels, hidden, patch, stride=patch)
        self.position_embedding = nn.Embedding((image // patch) ** 2, hidden)

    def forward(self, pixel_values):  # [B, channels, image, image] -> [B, patches, hidden]
        return self.patch_embedding(pixel_values).flatten(2).transpose(1, 2) + self.position_embedding.weight


class SiglipHead(nn.Module):
    """SigLIP's attention-pooling head: stored where the config keeps it, not read by Gemma 3."""

    def __init__(self, hidden, intermediate, heads, eps, act):
        super().__init__()
        self.probe = nn.Parameter(torch.zeros(1, 1, hidden))
        self.attention = nn.MultiheadAttention(hidden, heads, batch_first=True)
        self.layernorm = nn.LayerNorm(hidden, eps=eps)
        self.mlp = ClipMlp(hidden, intermediate, act)


class SiglipVision(nn.Module):
    """SigLIP's vision model, as Gemma 3's checkpoint stores it under vision_tower: its layers are CLIP's."""

    def __init__(self, channels, image, patch, hidden, intermediate, heads, layers, eps, act, head):
        super().__init__()
        self.embeddings = SiglipEmbeddings(channels, image, patch, hidden)
        self.encoder = nn.Module()
        self.encoder.layers = nn.ModuleList(ClipLayer(hidden, intermediate, heads, eps, act) for _ in range(layers))
        self.post_layernorm = nn.LayerNorm(hidden, eps=eps)
        if head:
            self.head = SiglipHead(hidden, intermediate, heads, eps, act)

    def forward(self, pixel_values):  # [B, channels, image, image] -> [B, patches, hidden]
        h = self.embeddings(pixel_values)
        for layer in self.encoder.layers:
            h = layer(h)
        return self.post_layernorm(h)


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
