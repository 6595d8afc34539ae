//! The PyTorch reference of a draft model (Gemma 4's assistants): the Gemma 4 module the
//! template writes for its layers, turned to run one draft step from its target's state, every
//! layer's query at the last token's position over the target's keys and values.

use crate::render::rewrite::{replace_block, swap};
use crate::spec::{Draft, Spec};

/// `plain`: the module of the same model read as a language model of its own.
pub fn module(spec: &Spec, d: Draft, plain: &str) -> String {
    let mut out = plain.to_string();
    let mut swap = |old: &str, new: &str, all: bool| swap(&mut out, old, new, all);
    swap(
        "    logits = model(torch.tensor([[1, 2, 3]]))\n",
        "    # one draft step: the target's embedding of the last token beside a hidden state, the\n    # target's keys and values per span kind ([B, KV, Tk, D]), the last token's position\n    logits, hidden = model(state, {\"full\": (k, v), \"sliding\": (k, v)}, position)\n",
        false,
    );
    swap(
        "        k, v = SHARED_KV[self.span[0]]  # the last layer of this kind's that projects its own\n",
        "        k, v = SHARED_KV[self.span[0]]  # the target's, as its last layer of this kind cached them\n",
        true,
    );
    swap(
        "        scores = scores.masked_fill(~attention_mask(T, self.span).to(x.device), float(\"-inf\"))\n",
        "        scores = scores.masked_fill(~draft_mask(k.shape[-2], self.span).to(x.device), float(\"-inf\"))\n",
        true,
    );
    swap(
        "# The keys and values of the last layer of each span kind that projects its own, for the\n# layers that share them.\n",
        "# The target's keys and values, by span kind: every layer reads those of its kind.\n",
        false,
    );
    replace_block(&mut out, "def attention_mask(", DRAFT_MASK);
    // The decoder runs from the projected state at the step's position.
    let start = out
        .find("    def forward(self, input_ids):  # [B, T] int64")
        .expect("the decoder's forward");
    let end = start + out[start..].find("        for ").expect("its layer loop");
    let ropes: String = out[start..end]
        .lines()
        .filter(|l| l.contains("= rope_cos_sin("))
        .map(|l| {
            let (name, call) = l.trim().split_once(" = ").expect("an assignment");
            let call = call.replace(", T, x.dtype)", ", position + 1, x.dtype)");
            format!("        {name} = tuple(t[-1:] for t in {call})  # at the step's position\n")
        })
        .collect();
    out.replace_range(
        start..end,
        &format!(
            "    def forward(self, x, position):  # x: [B, 1, {}], the projected state -> [B, 1, {}] after the final norm\n{ropes}",
            spec.hidden, spec.hidden
        ),
    );
    let model = out
        .find("class Model(nn.Module):")
        .expect("the model class");
    out.replace_range(model.., &model_class(spec, d));
    out
}

const DRAFT_MASK: &str = r#"def draft_mask(Tk, span):
    """True where the step's query may attend to the target's key j ([1, Tk]): every key in a
    full layer; in a sliding layer the last window + 1, as transformers' bidirectional window
    (|q - k| <= window) reads them once turned to look back."""
    j = torch.arange(Tk)[None, :]
    if span[0] == "sliding":
        return Tk - 1 - j <= span[1]
    return torch.ones(1, Tk, dtype=torch.bool)"#;

fn model_class(spec: &Spec, d: Draft) -> String {
    let (h, b, v) = (spec.hidden, d.backbone, spec.vocab);
    let mut init = format!(
        "        self.model = Decoder()\n        self.pre_projection = nn.Linear({}, {h}, bias=False)  # the target's state to this width\n        self.post_projection = nn.Linear({h}, {b}, bias=False)  # back to the target's, for the next step\n",
        2 * b
    );
    if !spec.tied {
        init += &format!("        self.lm_head = nn.Linear({h}, {v}, bias=False)\n");
    }
    let weight = if spec.tied {
        "self.model.embed_tokens.weight  # tied: the embedding matrix"
    } else {
        "self.lm_head.weight"
    };
    let (classes, head) = match d.centroids {
        Some(c) => {
            init += "        self.masked_embedding = MaskedEmbedding()\n";
            (
                format!(
                    "class MaskedEmbedding(nn.Module):\n    \"\"\"The clustered head: {count} centroids score the state; the tokens of the {k} best clusters\n    ({per} each, listed cluster by cluster in token_ordering) are scored by the head's rows, every\n    other token gets the smallest of those scores minus one.\"\"\"\n\n    def __init__(self):\n        super().__init__()\n        self.centroids = nn.Linear({h}, {count}, bias=False)\n        self.register_buffer(\"token_ordering\", torch.zeros({v}, dtype=torch.long))\n\n    def forward(self, h, weight):  # h: [B, T, {h}], weight: [{v}, {h}] -> [B, T, {v}]\n        best = self.centroids(h).topk({k}, dim=-1).indices  # [B, T, {k}]\n        tokens = self.token_ordering.view({count}, {per})[best].flatten(-2)  # [B, T, {k} * {per}]\n        picked = (weight[tokens] @ h.unsqueeze(-1)).squeeze(-1)  # their logits\n        out = torch.full((*h.shape[:-1], {v}), picked.min().item() - 1.0, dtype=h.dtype)\n        return out.scatter(-1, tokens, picked)\n\n\n",
                    count = c.count,
                    k = c.top_k,
                    per = c.per_cluster(v),
                ),
                "self.masked_embedding(h, weight)",
            )
        }
        None => (String::new(), "h @ weight.T"),
    };
    format!(
        "{classes}class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n{init}\n    def forward(self, state, shared_kv, position):  # state: [B, 1, {}] -> logits [B, 1, {v}], hidden [B, 1, {b}]\n        SHARED_KV.clear()\n        SHARED_KV.update(shared_kv)  # the target's keys and values: {{span kind: (k, v)}}\n        h = self.model(self.pre_projection(state), position)\n        weight = {weight}\n        return {head}, self.post_projection(h)\n",
        2 * b
    )
}
