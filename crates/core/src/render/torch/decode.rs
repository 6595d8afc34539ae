//! Decoding in the PyTorch reference: the state a recurrent model's modules carry from one call
//! of the model to the next (their conv inputs and their scan's, memory's or sums' state), and
//! `decode`, which runs a prompt and then one token per call through it.

use crate::render::numpy::decodes;
use crate::spec::{Position, Spec};

/// The state every recurrent module reads: `state_of` and the causal convolution over it.
const STATE: &str = r#"STATE = None  # decoding (see decode): each module's state, carried from one call of the model to the next; None runs the ids as one sequence


def state_of(key):
    """A module's share of the decoding state, a dict it reads its state from and writes it back
    to (a fresh one, thrown away, when the ids run as one sequence)."""
    return {} if STATE is None else STATE.setdefault(key, {})


def causal_conv(u, weight, bias, st, key="conv"):
    """u: [B, T, C] -> [B, T, C], each channel convolved (weight [C, 1, K]) over its last K
    positions: zeros before the first token; when decoding, the previous call's last K - 1
    inputs, kept in st."""
    T, K = u.shape[1], weight.shape[-1]
    u = torch.cat([st.get(key, u.new_zeros(u.shape[0], K - 1, u.shape[2])), u], dim=1)  # [B, K - 1 + T, C]
    st[key] = u[:, T:]
    return F.conv1d(u.transpose(1, 2), weight, bias, groups=u.shape[2]).transpose(1, 2)"#;

/// How an attention decodes here: over its inputs so far.
const ATTEND_SO_FAR: &str = r#"def attend_so_far(key, x, attend):
    """Decoding through an attention: x [B, T, d], the new tokens' inputs -> the new rows of
    attend(every input so far). The module keeps every input it has seen (the model's RoPE
    tables cover every position so far); the keys and values it recomputes from them are the
    numbers a KV cache holds, kept as inputs here so that one forward serves every variant."""
    global STATE
    st = state_of(key)
    st["inputs"] = x if "inputs" not in st else torch.cat([st["inputs"], x], dim=1)
    saved, STATE = STATE, None  # every input so far, as one sequence
    try:
        return attend(st["inputs"])[:, -x.shape[1]:]
    finally:
        STATE = saved"#;

const TOKENS_BEFORE: &str = r#"def tokens_before(T):
    """Decoding: how many tokens came before these T (0 when the ids run as one sequence)."""
    if STATE is None:
        return 0
    seen = STATE.get("seen", 0)
    STATE["seen"] = seen + T
    return seen"#;

const DECODE: &str = r#"@torch.no_grad()
def decode(model, input_ids, prompt):
    """input_ids [B, T] decoded -> logits [B, T, vocab]: the first `prompt` ids as one sequence,
    then one token per call, every recurrent module carrying its state (and every attention its
    inputs) from call to call."""
    global STATE
    STATE = {}  # empty before the first token
    try:
        steps = [input_ids[:, :prompt]] * (prompt > 0) + [input_ids[:, t : t + 1] for t in range(prompt, input_ids.shape[1])]
        return torch.cat([model(step) for step in steps], dim=1)
    finally:
        STATE = None"#;

/// The module's decoding helpers, where some layer carries a recurrent state: the state, and
/// where the model decodes (`decodes`), how its attention and positions follow and `decode`.
pub(super) fn helpers(spec: &Spec) -> Option<String> {
    if !spec.plan.iter().any(|l| l.mixer.recurrent()) {
        return None;
    }
    let mut parts = vec![STATE];
    if decodes(spec) {
        if !spec.attn_variants().is_empty() || spec.shared.is_some() {
            parts.push(ATTEND_SO_FAR);
        }
        if matches!(spec.position, Position::Rope(_)) {
            parts.push(TOKENS_BEFORE);
        }
        parts.push(DECODE);
    }
    Some(parts.join("\n\n\n"))
}

/// The whole module's attention forwards and RoPE tables turned to decode, where the model does:
/// each attention over its inputs so far, the tables over every position so far.
pub(super) fn decoding(spec: &Spec, mut module: String) -> String {
    if !decodes(spec) {
        return module;
    }
    for (head, call) in [
        (
            "    def forward(self, x, rope=None):  # x: [B, T, ",
            "attend_so_far(self, x, lambda inputs: self(inputs, rope))  # decoding: over every input so far",
        ),
        (
            "    def forward(self, x, visit, rope):  # x: [B, T, ",
            "attend_so_far((self, visit), x, lambda inputs: self(inputs, visit, rope))  # decoding: each visit over its inputs so far",
        ),
    ] {
        let mut at = 0;
        while let Some(found) = module[at..].find(head) {
            let end = at + found + module[at + found..].find('\n').map_or(0, |e| e + 1);
            let line = format!("        if STATE is not None:\n            return {call}\n");
            module.insert_str(end, &line);
            at = end + line.len();
        }
    }
    for (from, to) in [
        (
            "        full = rope_cos_sin(rope_frequencies, T, x.dtype)\n",
            "        seen = tokens_before(T)  # decoding: the tokens before these\n        full = rope_cos_sin(rope_frequencies, seen + T, x.dtype)  # every position so far\n",
        ),
        (
            "        sliding = rope_cos_sin(sliding_rope_frequencies, T, x.dtype)\n",
            "        sliding = rope_cos_sin(sliding_rope_frequencies, seen + T, x.dtype)\n",
        ),
        (
            "        rope = rope_cos_sin(rope_frequencies, T, x.dtype)\n",
            "        seen = tokens_before(T)  # decoding: the tokens before these\n        rope = rope_cos_sin(rope_frequencies, seen + T, x.dtype)  # every position so far\n",
        ),
    ] {
        module = module.replace(from, to);
    }
    // The edits find what they rewrite, or a template changed under them and decoding is wrong.
    assert!(
        !matches!(spec.position, Position::Rope(_)) || module.contains("seen = tokens_before(T)"),
        "a decoding model's RoPE tables cover every position so far"
    );
    assert!(
        (spec.attn_variants().is_empty() && spec.shared.is_none())
            || module.contains("return attend_so_far("),
        "a decoding model's attention runs over its inputs so far"
    );
    module
}
