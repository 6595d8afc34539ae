def pixel_shuffle(x, grid, k):  # [B, grid², D] -> [B, (grid / k)², k²·D]: each k × k patches side by side, row offset first
    B, _, D = x.shape
    s = grid // k
    return x.reshape(B, s, k, s, k, D).permute(0, 1, 3, 2, 4, 5).reshape(B, s * s, k * k * D)


class ClipAttention(nn.Module):
    """CLIP's attention over an image's patches: every patch sees every other (no mask)."""

    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.q_proj = nn.Linear(hidden, hidden)
        self.k_proj = nn.Linear(hidden, hidden)
        self.v_proj = nn.Linear(hidden, hidden)
        self.out_proj = nn.Linear(hidden, hidden)

    def forward(self, x):  # [B, N, hidden]
        B, N, D = x.shape
        q, k, v = (p(x).view(B, N, self.heads, -1).transpose(1, 2) for p in (self.q_proj, self.k_proj, self.v_proj))
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(D // self.heads), dim=-1)
        return self.out_proj((a @ v).transpose(1, 2).reshape(B, N, D))


class ClipMlp(nn.Module):
    def __init__(self, hidden, intermediate, act):
        super().__init__()
        self.fc1 = nn.Linear(hidden, intermediate)
        self.fc2 = nn.Linear(intermediate, hidden)
        self.act = act

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class ClipLayer(nn.Module):
    """A pre-norm encoder layer: attention, then the MLP, each added to the patches' stream."""

    def __init__(self, hidden, intermediate, heads, eps, act):
        super().__init__()
        self.layer_norm1 = nn.LayerNorm(hidden, eps=eps)
        self.self_attn = ClipAttention(hidden, heads)
        self.layer_norm2 = nn.LayerNorm(hidden, eps=eps)
        self.mlp = ClipMlp(hidden, intermediate, act)

    def forward(self, x):
        x = x + self.self_attn(self.layer_norm1(x))
        return x + self.mlp(self.layer_norm2(x))


class ClipEmbeddings(nn.Module):
    """Each patch through a convolution (stride = its side), a class token before them, a learned position each."""

    def __init__(self, channels, image, patch, hidden):
        super().__init__()
        self.class_embedding = nn.Parameter(torch.zeros(hidden))
        self.patch_embedding = nn.Conv2d(channels, hidden, patch, stride=patch, bias=False)
        self.position_embedding = nn.Embedding((image // patch) ** 2 + 1, hidden)

    def forward(self, pixel_values):  # [B, channels, image, image] -> [B, 1 + patches, hidden]
        patches = self.patch_embedding(pixel_values).flatten(2).transpose(1, 2)
        cls = self.class_embedding.expand(patches.shape[0], 1, -1)
        return torch.cat([cls, patches], 1) + self.position_embedding.weight


class ClipVision(nn.Module):
    """CLIP's vision model, as a LLaVA checkpoint stores it under vision_tower."""

    def __init__(self, channels, image, patch, hidden, intermediate, heads, layers, eps, act):
        super().__init__()
        self.embeddings = ClipEmbeddings(channels, image, patch, hidden)
        self.pre_layrnorm = nn.LayerNorm(hidden, eps=eps)
        self.encoder = nn.Module()
        self.encoder.layers = nn.ModuleList(ClipLayer(hidden, intermediate, heads, eps, act) for _ in range(layers))
        self.post_layernorm = nn.LayerNorm(hidden, eps=eps)  # stored; LLaVA reads earlier states

    def states(self, pixel_values, wanted):
        """The hidden states `wanted` (0: the first layer's input; i: layer i's output; negative from the end)."""
        n = len(self.encoder.layers) + 1
        wanted = [w % n for w in wanted]
        h = self.pre_layrnorm(self.embeddings(pixel_values))
        kept = [h]
        for layer in self.encoder.layers[: max(wanted)]:
            h = layer(h)
            kept.append(h)
        return [kept[w] for w in wanted]


class LlavaProjector(nn.Module):
    """Two linear maps into the text width, an activation between; a LayerNorm before them where `norm` gives its ε (VipLlava's)."""

    def __init__(self, vision, text, bias, act, norm=None):
        super().__init__()
        if norm is not None:
            self.projector_layernorm = nn.LayerNorm(vision, eps=norm)
        self.linear_1 = nn.Linear(vision, text, bias=bias)
        self.linear_2 = nn.Linear(text, text, bias=bias)
        self.act, self.norm = act, norm

    def forward(self, x):
        if self.norm is not None:
            x = self.projector_layernorm(x)
        return self.linear_2(self.act(self.linear_1(x)))
