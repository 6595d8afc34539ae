def pixtral_rotary(rows, cols, head_dim, theta):
    """cos, sin [patches, head_dim]: a head's first quarter of dims turn by the patch's row (the even frequencies), its second by its column (the odd), written twice."""
    inv = 1.0 / theta ** (torch.arange(0, head_dim, 2).float() / head_dim)
    angles = torch.cat([rows[:, None] * inv[0::2], cols[:, None] * inv[1::2]], -1)
    angles = torch.cat([angles, angles], -1)
    return angles.cos(), angles.sin()


class PixtralAttention(nn.Module):
    """Attention among an image's patches, bias-free, each head's query and key turned by the patches' 2-D rotary angles (rotate-half pairs)."""

    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.q_proj = nn.Linear(hidden, hidden, bias=False)
        self.k_proj = nn.Linear(hidden, hidden, bias=False)
        self.v_proj = nn.Linear(hidden, hidden, bias=False)
        self.o_proj = nn.Linear(hidden, hidden, bias=False)

    def forward(self, x, cos, sin):  # x: [N, hidden]
        N, D = x.shape
        q, k, v = (p(x).view(N, self.heads, -1).transpose(0, 1) for p in (self.q_proj, self.k_proj, self.v_proj))

        def turn(t):
            half = t.shape[-1] // 2
            return t * cos + torch.cat([-t[..., half:], t[..., :half]], -1) * sin

        a = torch.softmax(turn(q) @ turn(k).transpose(-1, -2) / math.sqrt(D // self.heads), dim=-1)
        return self.o_proj((a @ v).transpose(0, 1).reshape(N, D))


class PixtralMlp(nn.Module):
    def __init__(self, hidden, intermediate, act):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = nn.Linear(hidden, intermediate, bias=False)
        self.down_proj = nn.Linear(intermediate, hidden, bias=False)
        self.act = act

    def forward(self, x):
        return self.down_proj(self.act(self.gate_proj(x)) * self.up_proj(x))


class PixtralLayer(nn.Module):
    """A pre-norm layer: RMSNorm, rotary attention, RMSNorm, a gated MLP, each added to the stream."""

    def __init__(self, hidden, intermediate, heads, eps, act):
        super().__init__()
        self.attention_norm = nn.RMSNorm(hidden, eps=eps)
        self.attention = PixtralAttention(hidden, heads)
        self.ffn_norm = nn.RMSNorm(hidden, eps=eps)
        self.feed_forward = PixtralMlp(hidden, intermediate, act)

    def forward(self, x, cos, sin):
        x = x + self.attention(self.attention_norm(x), cos, sin)
        return x + self.feed_forward(self.ffn_norm(x))


class PixtralVision(nn.Module):
    """Pixtral's vision model over one image at its own size: a bias-free patch convolution, an RMSNorm, the layers."""

    def __init__(self, channels, patch, hidden, intermediate, heads, layers, eps, act, theta):
        super().__init__()
        self.patch_conv = nn.Conv2d(channels, hidden, patch, stride=patch, bias=False)
        self.ln_pre = nn.RMSNorm(hidden, eps=eps)
        self.transformer = nn.Module()
        self.transformer.layers = nn.ModuleList(PixtralLayer(hidden, intermediate, heads, eps, act) for _ in range(layers))
        self.heads, self.theta = heads, theta

    def state(self, pixels, wanted):  # [channels, height, width] -> hidden state `wanted` (0: the embeddings'; negative from the end), [patches, hidden]
        x = self.patch_conv(pixels[None])[0]  # [hidden, rows, columns]
        _, gh, gw = x.shape
        x = self.ln_pre(x.flatten(1).T)
        rows, cols = torch.meshgrid(torch.arange(gh), torch.arange(gw), indexing="ij")
        cos, sin = pixtral_rotary(rows.flatten(), cols.flatten(), x.shape[-1] // self.heads, self.theta)
        for layer in self.transformer.layers[: wanted % (len(self.transformer.layers) + 1)]:
            x = layer(x, cos, sin)
        return x, (gh, gw)


class Mistral3Projector(nn.Module):
    """An RMSNorm, each merge × merge patches joined by a learned map (the patch merger), two maps into the text width with an activation between."""

    def __init__(self, vision, text, merge, eps, bias, act):
        super().__init__()
        self.norm = nn.RMSNorm(vision, eps=eps)
        self.patch_merger = nn.Module()
        self.patch_merger.merging_layer = nn.Linear(vision * merge * merge, vision, bias=False)
        self.linear_1 = nn.Linear(vision, text, bias=bias)
        self.linear_2 = nn.Linear(text, text, bias=bias)
        self.merge, self.act = merge, act

    def forward(self, x, grid):  # x: [patches, vision] over a grid (rows, columns) -> [features, text]
        m = self.merge
        x = self.norm(x).T.reshape(1, -1, *grid)  # [1, vision, rows, columns]
        x = F.unfold(x, kernel_size=m, stride=m)[0].T  # [features, vision·m²]
        return self.linear_2(self.act(self.linear_1(self.patch_merger.merging_layer(x))))
