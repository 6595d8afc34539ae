class InternVitAttention(nn.Module):
    """Attention among a tile's patches and its class token; Q and K RMSNormed over the whole width where the tower says so."""

    def __init__(self, hidden, heads, bias, qk_norm):
        super().__init__()
        self.heads = heads
        self.q_proj = nn.Linear(hidden, hidden, bias=bias)
        self.k_proj = nn.Linear(hidden, hidden, bias=bias)
        self.v_proj = nn.Linear(hidden, hidden, bias=bias)
        self.projection_layer = nn.Linear(hidden, hidden)
        self.q_norm = nn.RMSNorm(hidden, eps=1e-6) if qk_norm else nn.Identity()
        self.k_norm = nn.RMSNorm(hidden, eps=1e-6) if qk_norm else nn.Identity()

    def forward(self, x):  # [B, N, hidden]
        B, N, D = x.shape
        q, k, v = self.q_norm(self.q_proj(x)), self.k_norm(self.k_proj(x)), self.v_proj(x)
        q, k, v = (t.view(B, N, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(D // self.heads), dim=-1)
        return self.projection_layer((a @ v).transpose(1, 2).reshape(B, N, D))


class InternVitLayer(nn.Module):
    """A pre-norm layer: attention, then the MLP, each scaled by a learned vector (lambda_1, lambda_2) before it joins the stream."""

    def __init__(self, hidden, intermediate, heads, eps, act, rms, bias, qk_norm):
        super().__init__()
        norm = nn.RMSNorm if rms else nn.LayerNorm
        self.layernorm_before = norm(hidden, eps=eps)
        self.attention = InternVitAttention(hidden, heads, bias, qk_norm)
        self.lambda_1 = nn.Parameter(torch.ones(hidden))
        self.layernorm_after = norm(hidden, eps=eps)
        self.mlp = ClipMlp(hidden, intermediate, act)
        self.lambda_2 = nn.Parameter(torch.ones(hidden))

    def forward(self, x):
        x = x + self.lambda_1 * self.attention(self.layernorm_before(x))
        return x + self.lambda_2 * self.mlp(self.layernorm_after(x))


class InternVit(nn.Module):
    """InternViT over each tile: a biased patch convolution, a class token before the patches, learned positions, the layers, a last LayerNorm
    where the tower has one; the class token dropped and each shuffle × shuffle patches side by side (the pixel shuffle)."""

    def __init__(self, channels, image, patch, hidden, intermediate, heads, layers, eps, act, rms, bias, qk_norm, positions, last_norm, shuffle):
        super().__init__()
        grid = image // patch
        self.embeddings = nn.Module()
        self.embeddings.cls_token = nn.Parameter(torch.zeros(1, 1, hidden))
        self.embeddings.patch_embeddings = nn.Module()
        self.embeddings.patch_embeddings.projection = nn.Conv2d(channels, hidden, patch, stride=patch)
        if positions:
            self.embeddings.position_embeddings = nn.Parameter(torch.zeros(1, grid * grid + 1, hidden))
        self.encoder = nn.Module()
        self.encoder.layer = nn.ModuleList(InternVitLayer(hidden, intermediate, heads, eps, act, rms, bias, qk_norm) for _ in range(layers))
        if last_norm:
            self.layernorm = nn.LayerNorm(hidden, eps=eps)
        self.grid, self.shuffle, self.positions, self.last_norm = grid, shuffle, positions, last_norm

    def forward(self, tiles):  # [tiles, channels, image, image] -> [tiles, features, shuffle² · hidden]
        x = self.embeddings.patch_embeddings.projection(tiles).flatten(2).transpose(1, 2)
        x = torch.cat([self.embeddings.cls_token.expand(x.shape[0], 1, -1), x], 1)
        if self.positions:
            x = x + self.embeddings.position_embeddings
        for layer in self.encoder.layer:
            x = layer(x)
        if self.last_norm:
            x = self.layernorm(x)
        return pixel_shuffle(x[:, 1:], self.grid, self.shuffle)


class InternVlProjector(nn.Module):
    """A LayerNorm over the shuffled patches, two maps into the text width with an activation between."""

    def __init__(self, joined, text, act):
        super().__init__()
        self.layer_norm = nn.LayerNorm(joined)
        self.linear_1 = nn.Linear(joined, text)
        self.linear_2 = nn.Linear(text, text)
        self.act = act

    def forward(self, x):
        return self.linear_2(self.act(self.linear_1(self.layer_norm(x))))
