class SiglipEmbeddings(nn.Module):
    """Each patch through a convolution (stride = its side, with a bias), a learned position each."""

    def __init__(self, channels, image, patch, hidden):
        super().__init__()
        self.patch_embedding = nn.Conv2d(channels, hidden, patch, stride=patch)
        self.position_embedding = nn.Embedding((image // patch) ** 2, hidden)

    def forward(self, pixel_values):  # [B, channels, image, image] -> [B, patches, hidden]
        return self.patch_embedding(pixel_values).flatten(2).transpose(1, 2) + self.position_embedding.weight


class SiglipHead(nn.Module):
    """SigLIP's attention-pooling head: stored where the config keeps it, not read by Gemma 3 or PaliGemma."""

    def __init__(self, hidden, intermediate, heads, eps, act):
        super().__init__()
        self.probe = nn.Parameter(torch.zeros(1, 1, hidden))
        self.attention = nn.MultiheadAttention(hidden, heads, batch_first=True)
        self.layernorm = nn.LayerNorm(hidden, eps=eps)
        self.mlp = ClipMlp(hidden, intermediate, act)


class SiglipVision(nn.Module):
    """SigLIP's vision model, as Gemma 3's and PaliGemma's checkpoints store it under vision_tower: its layers are CLIP's."""

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

    def state(self, pixel_values, read):  # [B, channels, image, image] -> [B, patches, hidden]: hidden state `read` (0 the embeddings', i layer i's output), before the last LayerNorm
        h = self.embeddings(pixel_values)
        for layer in self.encoder.layers[:read]:
            h = layer(h)
        return h
