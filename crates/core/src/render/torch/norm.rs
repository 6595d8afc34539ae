//! The norms, as the model defines them (RMSNorm, LayerNorm, offsets, no weight).

use super::*;

pub(super) fn norm(spec: &Spec) -> String {
    let eps = spec.norm.eps;
    match (spec.norm.kind, spec.norm.unit_offset) {
        (NormKind::Unit, _) => fill(
            r#"class Norm(nn.Module):
    """L2 norm (nGPT): project each vector onto the unit sphere, length 1, in float32; no weight."""

    def __init__(self, dim=None, eps=${eps}):
        super().__init__()
        self.eps = eps

    def forward(self, x):  # [..., dim]
        h = x.float()
        return (h * torch.rsqrt(h.pow(2).sum(-1, keepdim=True) + self.eps)).type_as(x)"#,
            &[("eps", eps.to_string())],
        ),
        (NormKind::PlainRms, _) => fill(
            r#"class Norm(nn.Module):
    """RMSNorm without a weight: rescale each vector to unit root-mean-square (in float32)."""

    def __init__(self, dim, eps=${eps}):
        super().__init__()
        self.eps = eps

    def forward(self, x):  # [..., dim]
        h = x.float()
        return (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x)"#,
            &[("eps", eps.to_string())],
        ),
        (NormKind::Plain, _) => fill(
            r#"def Norm(dim, eps=${eps}):
    """LayerNorm without parameters: subtract the mean, divide by the standard deviation."""
    return nn.LayerNorm(dim, eps=eps, elementwise_affine=False)"#,
            &[("eps", eps.to_string())],
        ),
        (NormKind::Layer { bias }, false) => fill(
            r#"def Norm(dim, eps=${eps}):
    """LayerNorm: subtract the mean, divide by the standard deviation, scale${shift}."""
    return nn.LayerNorm(dim, eps=eps, bias=${bias})"#,
            &[
                ("eps", eps.to_string()),
                (
                    "shift",
                    if bias { " and shift" } else { " (no shift)" }.into(),
                ),
                ("bias", py_bool(bias)),
            ],
        ),
        (NormKind::Layer { bias }, true) => fill(
            r#"class Norm(nn.LayerNorm):
    """LayerNorm whose stored weight w is applied as (1 + w)."""

    def __init__(self, dim, eps=${eps}):
        super().__init__(dim, eps=eps, bias=${bias})

    def forward(self, x):  # [..., dim]
        return F.layer_norm(x, self.normalized_shape, self.weight + 1.0, self.bias, self.eps)"#,
            &[("eps", eps.to_string()), ("bias", py_bool(bias))],
        ),
        (NormKind::Rms, true) => fill(
            r#"class Norm(nn.Module):
    """RMSNorm whose stored weight w is applied as (1 + w), computed in float32."""

    def __init__(self, dim, eps=${eps}):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(dim))

    def forward(self, x):  # [..., dim]
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return (h * (1.0 + self.weight.float())).type_as(x)"#,
            &[("eps", eps.to_string())],
        ),
        // Its blocks' norms shift; a final norm without one is built with bias=False.
        (NormKind::RmsBias, _) => fill(
            r#"class Norm(nn.Module):
    """RMSNorm with a shift: rescale each vector to unit root-mean-square (in float32), then
    apply a learned gain and, where it has one, a learned shift."""

    def __init__(self, dim, eps=${eps}, bias=True):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim)) if bias else None

    def forward(self, x):  # [..., dim]
        h = x.float()
        h = self.weight * (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x)
        return h if self.bias is None else h + self.bias"#,
            &[("eps", eps.to_string())],
        ),
        (NormKind::Rms, false) => fill(
            r#"class Norm(nn.Module):
    """RMSNorm: rescale each vector to unit root-mean-square (in float32), then apply a learned gain."""

    def __init__(self, dim, eps=${eps}):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):  # [..., dim]
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * h.type_as(x)"#,
            &[("eps", eps.to_string())],
        ),
    }
}
