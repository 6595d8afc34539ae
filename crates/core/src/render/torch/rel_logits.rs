//! Relative logits (Inkling 2): the helper that scores learned relative states against the queries.

/// Inkling's relative logits.
pub(super) const RELATIVE_LOGITS: &str = r#"class RelativeLogits(nn.Module):
    """A bank of bias-by-distance profiles; each query's relative state mixes them into its bias."""

    def __init__(self, d_rel, extent):
        super().__init__()
        self.extent = extent
        self.proj = nn.Parameter(torch.empty(d_rel, extent))

    def forward(self, r, T):  # r: [B, heads, T, d_rel] -> [B, heads, T, T]
        per_distance = r @ self.proj  # [B, heads, T, extent]: the bias at each backward distance
        distance = (torch.arange(T)[:, None] - torch.arange(T)[None, :]).to(r.device)  # i - j
        index = distance.clamp(0, self.extent - 1).expand(*per_distance.shape[:2], T, T)
        bias = per_distance.gather(-1, index)
        return bias.masked_fill((distance < 0) | (distance >= self.extent), 0.0)  # nothing ahead or beyond"#;
