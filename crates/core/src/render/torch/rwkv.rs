//! RWKV's time mix and channel mix, and its layer.

use super::*;

pub(super) fn py_pair((a, b): (f64, f64)) -> String {
    format!("({}, {})", fmt_f(a), fmt_f(b))
}

/// RWKV's layer: LayerNorm'd time mixing and channel mixing, each added to the stream, layer 0
/// holding the embeddings' norm; in inference the stream halved after every few layers.
pub(super) fn rwkv_layer(spec: &Spec, n: &Names) -> String {
    let Some(r) = spec.rwkv() else {
        unreachable!("only RWKV draws its layer")
    };
    let p = |role: Role| n.path(role);
    let (tm, cm) = (n.sublayer(Role::TmKey), n.sublayer(Role::Up));
    let pre = p(Role::EmbedNorm);
    let pre = pre.rsplit('.').next().unwrap_or("pre_ln").to_string();
    let (scale, halve) = if r.rescale_every > 0 {
        (
            format!("        # In inference transformers divides layer b's output projections by 2^(b // {k}) and\n        # halves the stream after every {k}th layer: the same up to the norms' eps.\n        self.scale = 0.5 ** (layer_idx // {k})\n        self.halve = (layer_idx + 1) % {k} == 0\n", k = r.rescale_every),
            "        return x / 2 if self.halve else x",
        )
    } else {
        (
            "        self.scale, self.halve = 1.0, False\n".to_string(),
            "        return x",
        )
    };
    fill(
        r#"# Per layer: (mixer and its span, RoPE on, FFN kind).
PLAN = ${plan}


class DecoderLayer(nn.Module):
    def __init__(self, span, use_rope, ffn, layer_idx):
        super().__init__()
        if layer_idx == 0:
            self.${pre} = Norm(${d})  # the embeddings' norm, kept in layer 0
        self.${ln1} = Norm(${d})
        self.${tm} = TimeMix()
        self.${ln2} = Norm(${d})
        self.${cm} = ChannelMix()
${scale}
    def forward(self, x, rope):  # [B, T, ${d}]
        x = x + self.scale * self.${tm}(self.${ln1}(x))
        x = x + self.scale * self.${cm}(self.${ln2}(x))
${halve}"#,
        &[
            ("plan", plan_list(spec)),
            ("pre", pre),
            ("d", spec.hidden.to_string()),
            ("ln1", p(Role::AttnNorm)),
            ("ln2", p(Role::FfnNorm)),
            ("tm", tm),
            ("cm", cm),
            ("scale", scale),
            ("halve", halve.into()),
        ],
    )
}

/// RWKV's time and channel mixing, the WKV sums written as the recurrence, token after token.
pub(super) fn rwkv_classes(spec: &Spec, n: &Names) -> String {
    let Some(r) = spec.rwkv() else {
        unreachable!("only RWKV draws its mixings")
    };
    let a = |role: Role| n.attr(role);
    fill(
        r#"def shifted(x, st):  # [B, T, C]: each token's predecessor, zeros before the first
    prev = torch.cat([st.get("last", torch.zeros_like(x[:, :1])), x[:, :-1]], dim=1)  # decoding: the previous call's last
    st["last"] = x[:, -1:]
    return prev


def token_mix(x, prev, mu):  # [B, T, C]: each token blended per channel with the one before it
    return x * mu + prev * (1 - mu)


class TimeMix(nn.Module):
    """RWKV time mixing: ${a} channels, each a decayed average of exp(key)-weighted values."""

    def __init__(self):
        super().__init__()
        self.${key} = nn.Linear(${d}, ${a}, bias=False)
        self.${value} = nn.Linear(${d}, ${a}, bias=False)
        self.${rec} = nn.Linear(${d}, ${a}, bias=False)
        self.${out} = nn.Linear(${a}, ${d}, bias=False)
        self.${decay} = nn.Parameter(torch.zeros(${a}))  # w: the sums fade by exp(-exp(w)) per token
        self.${first} = nn.Parameter(torch.zeros(${a}))  # u: the current token's bonus
        self.${mk} = nn.Parameter(torch.zeros(1, 1, ${d}))
        self.${mv} = nn.Parameter(torch.zeros(1, 1, ${d}))
        self.${mr} = nn.Parameter(torch.zeros(1, 1, ${d}))

    def forward(self, x):  # [B, T, ${d}], normed
        st = state_of(self)  # decoding: the last token and the sums of earlier calls
        prev = shifted(x, st)
        k, v = self.${key}(token_mix(x, prev, self.${mk})), self.${value}(token_mix(x, prev, self.${mv}))
        r = torch.sigmoid(self.${rec}(token_mix(x, prev, self.${mr})))
        w, u = -torch.exp(self.${decay}), self.${first}
        B_, T, _ = k.shape
        # num, den: the sums, scaled by exp(-top); top: the largest exponent so far
        num, den, top = st.get("wkv", (x.new_zeros(B_, ${a}), x.new_zeros(B_, ${a}), x.new_full((B_, ${a}), -1e38)))
        outs = []
        for t in range(T):
            kt, vt = k[:, t], v[:, t]
            m = torch.maximum(top, u + kt)
            e1, e2 = torch.exp(top - m), torch.exp(u + kt - m)
            outs.append((e1 * num + e2 * vt) / (e1 * den + e2))
            m = torch.maximum(top + w, kt)
            e1, e2 = torch.exp(top + w - m), torch.exp(kt - m)
            num, den, top = e1 * num + e2 * vt, e1 * den + e2, m
        st["wkv"] = num, den, top
        return self.${out}(r * torch.stack(outs, dim=1))


class ChannelMix(nn.Module):
    """RWKV channel mixing: sigma(r) * W_v relu(W_k x)^2, x blended with the previous token."""

    def __init__(self):
        super().__init__()
        self.${ck} = nn.Linear(${d}, ${f}, bias=False)
        self.${cr} = nn.Linear(${d}, ${d}, bias=False)
        self.${cv} = nn.Linear(${f}, ${d}, bias=False)
        self.${cmk} = nn.Parameter(torch.zeros(1, 1, ${d}))
        self.${cmr} = nn.Parameter(torch.zeros(1, 1, ${d}))

    def forward(self, x):  # [B, T, ${d}], normed
        prev = shifted(x, state_of(self))
        h = torch.square(torch.relu(self.${ck}(token_mix(x, prev, self.${cmk}))))
        return torch.sigmoid(self.${cr}(token_mix(x, prev, self.${cmr}))) * self.${cv}(h)"#,
        &[
            ("a", r.attn.to_string()),
            ("f", spec.mlp.intermediate.to_string()),
            ("d", spec.hidden.to_string()),
            ("key", a(Role::TmKey)),
            ("value", a(Role::TmValue)),
            ("rec", a(Role::TmReceptance)),
            ("out", a(Role::TmOutput)),
            ("decay", a(Role::TmDecay)),
            ("first", a(Role::TmFirst)),
            ("mk", a(Role::TmMixK)),
            ("mv", a(Role::TmMixV)),
            ("mr", a(Role::TmMixR)),
            ("ck", a(Role::Up)),
            ("cr", a(Role::CmReceptance)),
            ("cv", a(Role::Down)),
            ("cmk", a(Role::CmMixK)),
            ("cmr", a(Role::CmMixR)),
        ],
    )
}
