class Idefics3Connector(nn.Module):
    """Idefics3's (SmolVLM's) connector: each shuffle × shuffle patches joined by the pixel shuffle (row offset first), one bias-free map into the text width."""

    def __init__(self, hidden, grid, shuffle, text):
        super().__init__()
        self.modality_projection = nn.Module()
        self.modality_projection.proj = nn.Linear(hidden * shuffle * shuffle, text, bias=False)
        self.grid, self.shuffle = grid, shuffle

    def forward(self, x):  # [frames, grid², hidden] -> [frames, features, text]
        B, _, D = x.shape
        k = self.shuffle
        s = self.grid // k
        x = x.reshape(B, s, k, s, k, D).permute(0, 1, 3, 2, 4, 5).reshape(B, s * s, k * k * D)
        return self.modality_projection.proj(x)
