def llama4_rotary(grid, head_dim, theta):
    """Each token's 2-D rotary turns, complex [grid² + 1, head_dim / 2]: pair j by (column + 1)·f_j in a head's first half, by (row + 1)·f_j in its second; the class token, last, not at all."""
    f = 1.0 / theta ** (torch.arange(0, head_dim // 2, 2)[: head_dim // 4].float() / (head_dim // 2))
    idx = torch.arange(grid * grid)
    angles = torch.cat([(idx % grid + 1)[:, None] * f, (idx // grid + 1)[:, None] * f], -1)
    angles = torch.cat([angles, torch.zeros(1, head_dim // 2)])
    return torch.polar(torch.ones_like(angles), angles)


class Llama4VisionAttention(nn.Module):
    """Attention among a tile's patches and its class token; each head's query and key turned in adjacent pairs by the 2-D rotary turns."""

    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.q_proj = nn.Linear(hidden, hidden)
        self.k_proj = nn.Linear(hidden, hidden)
        self.v_proj = nn.Linear(hidden, hidden)
        self.o_proj = nn.Linear(hidden, hidden)

    def forward(self, x, turns):  # x: [B, N, hidden]; turns: complex [N, head_dim / 2]
        B, N, D = x.shape
        q, k, v = (p(x).view(B, N, self.heads, -1) for p in (self.q_proj, self.k_proj, self.v_proj))

        def turn(t):
            pairs = torch.view_as_complex(t.float().reshape(B, N, self.heads, -1, 2))
            return torch.view_as_real(pairs * turns[:, None, :]).flatten(3)

        q, k, v = (t.transpose(1, 2) for t in (turn(q), turn(k), v))
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(D // self.heads), dim=-1)
        return self.o_proj((a @ v).transpose(1, 2).reshape(B, N, D))


class Llama4VisionMlp(nn.Module):
    def __init__(self, hidden, intermediate):
        super().__init__()
        self.fc1 = nn.Linear(hidden, intermediate)
        self.fc2 = nn.Linear(intermediate, hidden)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Llama4VisionLayer(nn.Module):
    """A pre-norm encoder layer: rotary attention, then a GELU MLP, each added to the stream."""

    def __init__(self, hidden, intermediate, heads, eps):
        super().__init__()
        self.input_layernorm = nn.LayerNorm(hidden, eps=eps)
        self.self_attn = Llama4VisionAttention(hidden, heads)
        self.post_attention_layernorm = nn.LayerNorm(hidden, eps=eps)
        self.mlp = Llama4VisionMlp(hidden, intermediate)

    def forward(self, x, turns):
        x = x + self.self_attn(self.input_layernorm(x), turns)
        return x + self.mlp(self.post_attention_layernorm(x))


class Llama4Vision(nn.Module):
    """Llama 4's vision model over each tile: its patches unfolded and mapped, a class token after them, learned positions, the layers between two
    LayerNorms; the class token dropped, each shuffle × shuffle patches side by side (the pixel shuffle), and the adapter's two GELU maps."""

    def __init__(self, channels, image, patch, hidden, intermediate, heads, layers, eps, shuffle, adapter, theta):
        super().__init__()
        grid = image // patch
        self.patch_embedding = nn.Module()
        self.patch_embedding.linear = nn.Linear(channels * patch * patch, hidden, bias=False)
        self.class_embedding = nn.Parameter(torch.zeros(hidden))
        self.positional_embedding_vlm = nn.Parameter(torch.zeros(grid * grid + 1, hidden))
        self.layernorm_pre = nn.LayerNorm(hidden, eps=eps)
        self.layernorm_post = nn.LayerNorm(hidden, eps=eps)
        self.model = nn.Module()
        self.model.layers = nn.ModuleList(Llama4VisionLayer(hidden, intermediate, heads, eps) for _ in range(layers))
        self.vision_adapter = nn.Module()
        self.vision_adapter.mlp = nn.Module()
        self.vision_adapter.mlp.fc1 = nn.Linear(intermediate, adapter, bias=False)
        self.vision_adapter.mlp.fc2 = nn.Linear(adapter, adapter, bias=False)
        self.patch, self.grid, self.shuffle = patch, grid, shuffle
        self.register_buffer("turns", llama4_rotary(grid, hidden // heads, theta), persistent=False)

    def forward(self, tiles):  # [tiles, channels, image, image] -> [tiles, features, adapter]
        x = self.patch_embedding.linear(F.unfold(tiles, self.patch, stride=self.patch).transpose(1, 2))
        x = torch.cat([x, self.class_embedding.expand(x.shape[0], 1, -1)], 1) + self.positional_embedding_vlm
        x = self.layernorm_pre(x)
        for layer in self.model.layers:
            x = layer(x, self.turns)
        x = self.layernorm_post(x)[:, :-1]
        B, _, D = x.shape
        k = self.shuffle
        s = self.grid // k
        x = x.reshape(B, s, k, s, k, D).permute(0, 1, 3, 2, 4, 5).reshape(B, s * s, k * k * D)
        mlp = self.vision_adapter.mlp
        return F.gelu(mlp.fc2(F.gelu(mlp.fc1(x))))
