class DeepseekVlAligner(nn.Module):
    """DeepSeek-VL's aligner: two biased maps into the text width, exact GELU between."""

    def __init__(self, vision, text):
        super().__init__()
        self.linear1 = nn.Linear(vision, text)
        self.linear2 = nn.Linear(text, text)

    def forward(self, x):  # [B, N, vision] -> [B, N, text]
        return self.linear2(F.gelu(self.linear1(x)))
