class GitProjection(nn.Module):
    """GIT's visual projection: a biased map into the text width, then a LayerNorm of the vision tower's ε."""

    def __init__(self, vision, text, eps):
        super().__init__()
        self.visual_projection = nn.Sequential(nn.Linear(vision, text), nn.LayerNorm(text, eps=eps))

    def forward(self, x):  # [B, N, vision] -> [B, N, text]
        return self.visual_projection(x)
