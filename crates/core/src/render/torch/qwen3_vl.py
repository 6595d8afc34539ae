class Qwen3Merger(nn.Module):
    """Each merge² patches side by side, LayerNormed one by one before (the merger) or together after (a deep-stack merger), two biased maps with GELU between."""

    def __init__(self, hidden, merge, text, joined_norm):
        super().__init__()
        self.joined = hidden * merge * merge
        self.norm = nn.LayerNorm(self.joined if joined_norm else hidden, eps=1e-6)
        self.linear_fc1 = nn.Linear(self.joined, self.joined)
        self.linear_fc2 = nn.Linear(self.joined, text)
        self.joined_norm = joined_norm

    def forward(self, x):  # [patches, hidden] -> [features, text]
        x = self.norm(x.view(-1, self.joined)) if self.joined_norm else self.norm(x).view(-1, self.joined)
        return self.linear_fc2(F.gelu(self.linear_fc1(x)))


class Qwen3Vision(Qwen2Vision):
    """Qwen3-VL's vision tower: Qwen2-VL's with a biased patch convolution, a learned grid of positions resampled to each
    image's patches, and deep-stack mergers of chosen blocks' outputs, for the language model's first layers."""

    def __init__(self, channels, patch, frames, merge, hidden, intermediate, heads, layers, eps, act, theta, text, side, deepstack):
        super().__init__(channels, patch, frames, merge, hidden, intermediate, heads, 0, eps, act, theta, text)
        self.patch_embed.proj = nn.Conv3d(channels, hidden, (frames, patch, patch), stride=(frames, patch, patch))
        self.pos_embed = nn.Embedding(side * side, hidden)
        mlp = ("linear_fc1", "linear_fc2")
        self.blocks = nn.ModuleList(Qwen2VisionBlock(hidden, intermediate, heads, eps, act, mlp) for _ in range(layers))
        self.merger = Qwen3Merger(hidden, merge, text, False)
        self.deepstack_merger_list = nn.ModuleList(Qwen3Merger(hidden, merge, text, True) for _ in deepstack)
        self.side, self.deepstack = side, deepstack

    def resampled_positions(self, pos, gh, gw):  # pos: [patches, 2] -> [patches, hidden]
        """The learned grid resampled to the gh × gw patch grid (bilinear, corners aligned), at each patch's row and column."""
        s = self.side

        def taps(i, size):  # the two taps along an axis and their weights
            src = i.float() * (s - 1) / max(size - 1, 1)
            floor = src.floor()
            return [((floor + o).clamp(0, s - 1).long(), (1 - (src - floor - o).abs()).clamp(min=0)) for o in (0, 1)]

        out = 0
        for hi, hw in taps(pos[:, 0], gh):
            for wi, ww in taps(pos[:, 1], gw):
                out = out + self.pos_embed(hi * s + wi) * (hw * ww)[:, None]
        return out

    def forward(self, pixels):  # [channels, height, width] -> [features, text], and the deep-stack features
        x, pos, cos, sin = self.patches(pixels)
        x = x + self.resampled_positions(pos, pixels.shape[1] // self.patch, pixels.shape[2] // self.patch)
        deep = []
        for i, block in enumerate(self.blocks):
            x = block(x, cos, sin)
            if i in self.deepstack:
                deep.append(self.deepstack_merger_list[self.deepstack.index(i)](x))
        return self.merger(x), deep
