//! The PyTorch reference's Gemma 3n layers and model: AltUp's streams, LAuReL, the MLP with its
//! activation sparsity, and the per-layer inputs added to the streams after the first. The
//! attention classes are the shared ones (`torch::attention`). Attribute names are Gemma 3n's
//! checkpoint names (`Layout::Gemma3n`).

use super::{act_expr, fill, plan_list};
use crate::spec::Spec;

/// The MLP, LAuReL and AltUp classes, the layer and the model.
pub(super) fn classes(spec: &Spec) -> String {
    let a = spec.altup().expect("AltUp in the Spec");
    let p = spec.per_layer_input.expect("Gemma 3n has per-layer inputs");
    let (d, l, w) = (spec.hidden, spec.layers, p.width);
    let widths: Vec<String> = (0..l as usize)
        .map(|b| spec.mlp_width(b).to_string())
        .collect();
    let sparsity: Vec<String> = (0..l as usize)
        .map(|b| match spec.sparsity_at(b) {
            Some(p) => format!("{:?}", crate::spec::normal_quantile(p) as f32),
            None => "None".into(),
        })
        .collect();
    let attention = if spec.layer_attn.is_empty() {
        "Attention(span, use_rope)"
    } else {
        "ATTENTION[i](span, use_rope)  # this layer's own class"
    };
    let head = if spec.tied {
        "h @ self.model.embed_tokens.weight.T  # tied: the embedding matrix".to_string()
    } else {
        "self.lm_head(h)".to_string()
    };
    let head_init = if spec.tied {
        String::new()
    } else {
        format!(
            "        self.lm_head = nn.Linear({d}, {}, bias=False)\n",
            spec.out_vocab()
        )
    };
    let cap = match spec.final_softcap {
        Some(c) => format!("        logits = {c} * torch.tanh(logits / {c})  # final softcap\n"),
        None => String::new(),
    };
    fill(
        r#"# Per layer: (mixer and its span, RoPE on, FFN kind).
PLAN = ${plan}
N, ACTIVE = ${n}, ${active}  # AltUp's streams, and the one each layer computes on
# Per layer: its MLP's width, and its activation sparsity's Gaussian cut-off (None: none).
WIDTHS = [${widths}]
SPARSITY = [${sparsity}]


class MLP(nn.Module):
    def __init__(self, width, z=None):
        super().__init__()
        self.z = z
        self.gate_proj = nn.Linear(${d}, width, bias=False)
        self.up_proj = nn.Linear(${d}, width, bias=False)
        self.down_proj = nn.Linear(width, ${d}, bias=False)

    def forward(self, x):  # [B, T, ${d}]
        g = self.gate_proj(x)
        if self.z is not None:  # only the gate values above mean + z std, shifted to start at 0
            g = F.relu(g - g.mean(-1, keepdim=True) - self.z * g.std(-1, keepdim=True, unbiased=False))
        return self.down_proj(${act} * self.up_proj(x))


class Laurel(nn.Module):
    """LAuReL: a rank-${rank} branch of the normed input, normed and added back to it."""

    def __init__(self):
        super().__init__()
        self.linear_left = nn.Linear(${d}, ${rank}, bias=False)
        self.linear_right = nn.Linear(${rank}, ${d}, bias=False)
        self.post_laurel_norm = Norm(${d})

    def forward(self, x):
        return x + self.post_laurel_norm(self.linear_right(self.linear_left(x)))


class AltUp(nn.Module):
    """Alternating updates: predict every stream from all of them before the layer, correct
    every prediction by the layer's innovation after it."""

    def __init__(self):
        super().__init__()
        self.correct_output_scale = nn.Parameter(torch.zeros(${d}))
        self.correction_coefs = nn.Linear(N, N, bias=False)
        self.prediction_coefs = nn.Linear(N, N * N, bias=False)
        self.modality_router = nn.Linear(${d}, N, bias=False)
        self.router_norm = Norm(${d})

    def route(self, x):  # [B, T, ${d}] -> [B, T, N], in (-1, 1)
        return torch.tanh(self.modality_router(self.router_norm(x) / ${d}))

    def predict(self, x):  # x: [B, T, N, ${d}]
        c = self.prediction_coefs(self.route(x[:, :, ACTIVE])).unflatten(-1, (N, N))  # [B, T, N, N]
        return x + c @ x  # stream j plus its mix of all of them

    def correct(self, p, o):  # p: the predictions, o: the layer's new active stream
        c = self.correction_coefs(self.route(o)) + 1  # [B, T, N]
        return p + c.unsqueeze(-1) * (o - p[:, :, ACTIVE]).unsqueeze(-2)


def rescaled(x, target):  # x rescaled to the RMS of target, row by row
    want = target.pow(2).mean(-1, keepdim=True).sqrt()
    return x * want / x.pow(2).mean(-1, keepdim=True).clamp(min=1e-5).sqrt()


class DecoderLayer(nn.Module):
    def __init__(self, i):
        super().__init__()
        span, use_rope, _ = PLAN[i]
        self.self_attn = ${attention}
        self.mlp = MLP(WIDTHS[i], SPARSITY[i])
        self.input_layernorm = Norm(${d})
        self.post_attention_layernorm = Norm(${d})
        self.pre_feedforward_layernorm = Norm(${d})
        self.post_feedforward_layernorm = Norm(${d})
        self.altup = AltUp()
        self.laurel = Laurel()
        self.per_layer_input_gate = nn.Linear(${d}, ${w}, bias=False)
        self.per_layer_projection = nn.Linear(${w}, ${d}, bias=False)
        self.post_per_layer_input_norm = Norm(${d})

    def forward(self, x, rope, ple):  # x: [B, T, N, ${d}], ple: [B, T, ${w}]
        p = self.altup.predict(x)
        h = self.input_layernorm(p[:, :, ACTIVE])
        y = self.post_attention_layernorm(self.self_attn(h, rope))
        r = (p[:, :, ACTIVE] + y + self.laurel(h)) / math.sqrt(2)
        o = r + self.post_feedforward_layernorm(self.mlp(self.pre_feedforward_layernorm(r)))
        x = self.altup.correct(p, o)
        first = x[:, :, ACTIVE]${scale}
        g = ${gate} * ple
        y = self.post_per_layer_input_norm(self.per_layer_projection(g))
        return torch.cat([x[:, :, :1], x[:, :, 1:] + y.unsqueeze(-2)], dim=-2)  # into every stream after the first


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(${v}, ${d})
        self.embed_tokens_per_layer = nn.Embedding(${pv}, ${l} * ${w})  # per-layer embeddings
        self.per_layer_model_projection = nn.Linear(${d}, ${l} * ${w}, bias=False)
        self.per_layer_projection_norm = Norm(${w})
        self.altup_projections = nn.ModuleList(nn.Linear(${d}, ${d}, bias=False) for _ in range(N - 1))
        self.altup_unembed_projections = nn.ModuleList(nn.Linear(${d}, ${d}, bias=False) for _ in range(N - 1))
        self.layers = nn.ModuleList(DecoderLayer(i) for i in range(len(PLAN)))
        self.norm = Norm(${d})

    def forward(self, input_ids):  # [B, T] int64 -> [B, T, ${d}] after the final norm
        T = input_ids.shape[1]
        x = self.embed_tokens(input_ids) * torch.tensor(${d} ** 0.5)  # scaled by sqrt(d_model)
        ids = torch.where(input_ids < ${pv}, input_ids, 0)  # ids past the table read its row 0
        ple = self.embed_tokens_per_layer(ids).view(*ids.shape, ${l}, ${w}) * ${w} ** 0.5
        proj = self.per_layer_model_projection(x).view(*x.shape[:-1], ${l}, ${w}) * ${d} ** -0.5
        ple = (self.per_layer_projection_norm(proj) + ple) * 2 ** -0.5  # [B, T, ${l}, ${w}]
        x = torch.stack([x] + [rescaled(p(x), x) for p in self.altup_projections], dim=-2)  # [B, T, N, ${d}]
        full = rope_cos_sin(rope_frequencies, T, x.dtype)
        sliding = rope_cos_sin(sliding_rope_frequencies, T, x.dtype)
        for i, layer in enumerate(self.layers):
            x = layer(x, sliding if PLAN[i][0][0] == "sliding" else full, ple[:, :, i])
        first = x[:, :, 0]
        back = [rescaled(u(x[:, :, i + 1]), first) for i, u in enumerate(self.altup_unembed_projections)]
        return self.norm(torch.stack([first] + back, dim=-2).mean(-2))  # the streams averaged


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Decoder()
${head_init}
    def forward(self, input_ids):  # [B, T] int64 -> logits [B, T, ${ov}]
        h = self.model(input_ids)
        logits = ${head}
${cap}        return logits"#,
        &[
            ("n", a.streams.to_string()),
            ("active", a.active.to_string()),
            ("widths", widths.join(", ")),
            ("sparsity", sparsity.join(", ")),
            ("act", act_expr(spec.mlp.act, "g")),
            ("rank", spec.laurel.unwrap_or(0).to_string()),
            ("attention", attention.into()),
            (
                "scale",
                if a.correct_scale {
                    " * self.altup.correct_output_scale".into()
                } else {
                    String::new()
                },
            ),
            (
                "gate",
                act_expr(spec.mlp.act, "self.per_layer_input_gate(first)"),
            ),
            ("v", spec.vocab.to_string()),
            ("pv", p.vocab.to_string()),
            ("l", l.to_string()),
            ("w", w.to_string()),
            ("d", d.to_string()),
            ("head_init", head_init),
            ("head", head),
            ("cap", cap),
            ("ov", spec.out_vocab().to_string()),
            ("plan", plan_list(spec)),
        ],
    )
}
