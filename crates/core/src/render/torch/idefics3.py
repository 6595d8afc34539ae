class Idefics3Connector(nn.Module):
    """Idefics3's (SmolVLM's) connector: each shuffle × shuffle patches joined by the pixel shuffle (row offset first), one bias-free map into the text width."""

    def __init__(self, hidden, grid, shuffle, text):
        super().__init__()
        self.modality_projection = nn.Module()
        self.modality_projection.proj = nn.Linear(hidden * shuffle * shuffle, text, bias=False)
        self.grid, self.shuffle = grid, shuffle

    def forward(self, x):  # [frames, grid², hidden] -> [frames, features, text]
        return self.modality_projection.proj(pixel_shuffle(x, self.grid, self.shuffle))
