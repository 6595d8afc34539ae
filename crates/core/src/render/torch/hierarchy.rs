//! The PyTorch reference of HRM-Text's model: its two stacks of decoder layers, each ending in
//! its own norm, run in a nested loop (`Hierarchy`), as transformers' `HrmTextModel` runs them.

use super::fill;
use crate::spec::{Hierarchy, Spec};

pub(super) fn model(spec: &Spec, h: Hierarchy) -> String {
    let head = if spec.tied {
        "h @ self.model.embed_tokens.weight.T  # tied: the embedding matrix"
    } else {
        "self.lm_head(h)"
    };
    let head_init = if spec.tied {
        String::new()
    } else {
        format!(
            "\n        self.lm_head = nn.Linear({}, {}, bias=False)",
            spec.hidden, spec.vocab
        )
    };
    fill(
        r#"class Stack(nn.Module):
    """One of the two stacks: its ${per} layers, then a norm of its own."""

    def __init__(self, plan):
        super().__init__()
        self.layers = nn.ModuleList(DecoderLayer(*p) for p in plan)
        self.final_norm = Norm(${d})

    def forward(self, x, rope):  # [B, T, ${d}]
        for layer in self.layers:
            x = layer(x, rope)
        return self.final_norm(x)


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(${v}, ${d})
        self.z_L_init = nn.Parameter(torch.zeros(${d}))  # where the low-level state starts
        self.L_module = Stack(PLAN[:${per}])  # the low-level stack
        self.H_module = Stack(PLAN[${per}:])  # the high-level stack

    def forward(self, input_ids):  # [B, T] int64 -> [B, T, ${d}], the last high-level state
        T = input_ids.shape[1]
        x = self.embed_tokens(input_ids) * ${scale}  # [B, T, ${d}]
        rope = rope_cos_sin(rope_frequencies, T, x.dtype)
        high, low = x, self.z_L_init.expand_as(x)  # the high-level state starts as the embeddings
        for _ in range(${high}):
            for _ in range(${low}):
                low = self.L_module(low + high, rope)
            high = self.H_module(high + low, rope)
        return high


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Decoder()${head_init}

    def forward(self, input_ids):  # [B, T] int64 -> logits [B, T, ${v}]
        h = self.model(input_ids)
        return ${head}"#,
        &[
            ("per", h.per_stack.to_string()),
            ("d", spec.hidden.to_string()),
            ("v", spec.vocab.to_string()),
            ("scale", crate::fmt::float(spec.embedding.multiplier)),
            ("high", h.high_cycles.to_string()),
            ("low", h.low_cycles.to_string()),
            ("head_init", head_init),
            ("head", head.to_string()),
        ],
    )
}
