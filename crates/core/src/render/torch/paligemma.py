class PaliGemmaProjector(nn.Module):
    """One biased map from the vision width into the text width: a feature per patch."""

    def __init__(self, vision, text):
        super().__init__()
        self.linear = nn.Linear(vision, text)

    def forward(self, x):  # [B, patches, vision] -> [B, patches, text]
        return self.linear(x)
