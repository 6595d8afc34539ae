//! The PyTorch reference's hyper-connections (HY v4): the module that mixes the n streams, and
//! the lines a layer and the decoder add around their sublayers.

use super::fill;
use crate::fmt::float as fmt_f;
use crate::spec::Hyper;

/// The mix's module: held under `holder` with its tensors named `{prefix}fn`, `{prefix}base`,
/// `{prefix}scale`, as the checkpoint names them.
pub(super) fn stream_mix_class(h: Hyper, hidden: u64, norm_eps: f64) -> String {
    fill(
        r#"N, HC_MAGNITUDE, HC_EPS = ${n}, ${mag}, ${eps}  # hyper-connection streams, their gates' bounds


class StreamMix(nn.Module):
    """Hyper-connections: the n streams [B, T, N, ${d}] weighed into one input, by gates
    computed from the streams themselves. Before a sublayer also post gates, each stream's share
    of the sublayer's output; in the head (`head=True`) the pre gates alone."""

    def __init__(self, prefix, head=False):
        super().__init__()
        k = N if head else 2 * N
        self.prefix, self.head = prefix, head
        setattr(self, prefix + "fn", nn.Parameter(torch.zeros(k, N * ${d})))
        setattr(self, prefix + "base", nn.Parameter(torch.zeros(k)))
        setattr(self, prefix + "scale", nn.Parameter(torch.zeros(1 if head else 2)))

    def forward(self, x):  # x: [B, T, N, ${d}] -> ([B, T, ${d}], post [B, T, N] or None)
        fn, base, scale = (getattr(self, self.prefix + s) for s in ("fn", "base", "scale"))
        flat = x.flatten(-2)  # [B, T, N * ${d}]
        m = (flat @ fn.T) * torch.rsqrt(flat.pow(2).mean(-1, keepdim=True) + ${norm_eps})  # RMS-scaled, no weight
        pre = torch.sigmoid(m[..., :N] * scale[0] + base[:N]) + HC_EPS
        post = None if self.head else HC_MAGNITUDE * torch.sigmoid(m[..., N:] * scale[1] + base[N:]) + HC_EPS
        return (pre.unsqueeze(-1) * x).sum(-2), post"#,
        &[
            ("n", h.streams.to_string()),
            ("mag", fmt_f(h.magnitude)),
            ("eps", fmt_f(h.eps)),
            ("norm_eps", fmt_f(norm_eps)),
            ("d", hidden.to_string()),
        ],
    )
}

/// `(module path, attribute prefix)` of a mix from its `fn` tensor's path
/// (`hc_pre.hc_attn_layer.hc_fn` → `hc_pre.hc_attn_layer`, `hc_`).
pub(super) fn split(fn_path: &str) -> (String, String) {
    let (module, attr) = fn_path.rsplit_once('.').unwrap_or(("", fn_path));
    (
        module.to_string(),
        attr.strip_suffix("fn").unwrap_or(attr).to_string(),
    )
}
