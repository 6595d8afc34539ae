//! The PyTorch reference of BLT (`ByteLatent`): four stacks of Llama layers of their own sizes,
//! so its classes take their sizes as arguments and `BltModel` builds each stack with its
//! numbers; the patcher's entropies, the hashed n-grams, pooling and the two cross-attentions
//! are written out as transformers' `BltModel` runs them (without a cache: every pass reads the
//! whole sequence, since its patches depend on every byte).

use super::{act_expr, fill, freqs_fn};
use crate::fmt::float as fmt_f;
use crate::render::html::parts::Kind;
use crate::spec::{ByteLatent, Patching, Spec};

pub(super) fn module(spec: &Spec, bl: &ByteLatent) -> String {
    let mut parts = layers(spec, bl);
    parts.push(model(spec, bl));
    parts.join("\n\n\n") + "\n"
}

/// The page's code for a part: the layers' classes for the latent transformer's parts, the
/// model's for the stacks and the ends.
pub(super) fn snippet(spec: &Spec, bl: &ByteLatent, kind: Kind) -> String {
    match kind {
        Kind::Norm | Kind::Attention | Kind::Residual | Kind::Mlp => {
            layers(spec, bl).join("\n\n\n")
        }
        Kind::Embedding
        | Kind::Head
        | Kind::HeadInput
        | Kind::Stack(_)
        | Kind::Mixer
        | Kind::Moe
        | Kind::PerLayer
        | Kind::Shared
        | Kind::Aux
        | Kind::CrossAttention
        | Kind::CrossGate
        | Kind::Hierarchy
        | Kind::Loop => model(spec, bl),
    }
}

/// The norm, each stack's rotary frequencies, and the layer classes.
fn layers(spec: &Spec, bl: &ByteLatent) -> Vec<String> {
    // The template's RMSNorm, `Norm(dim, eps)`: each stack passes its own ε.
    let mut parts = vec![super::norm(spec)];
    let stacks = [
        ("patcher", bl.patcher.as_ref()),
        ("encoder", Some(&bl.encoder)),
        ("global", Some(spec)),
        ("decoder", Some(&bl.decoder)),
    ];
    for (key, s) in stacks {
        if let Some(s) = s {
            parts.push(rope(s, key));
        }
    }
    parts.push(LAYERS.to_string());
    parts
}

/// The stacks, the patching and hashing helpers, and the model.
fn model(spec: &Spec, bl: &ByteLatent) -> String {
    let args = |s: &Spec| {
        let window = ByteLatent::window(s).map_or("None".into(), |w| w.to_string());
        format!(
            "d={}, heads={}, kv_heads={}, ffn={}, layers={}, eps={}, window={window}, act=lambda x: {}",
            s.hidden,
            s.attn.heads,
            s.attn.kv_heads,
            s.mlp.intermediate,
            s.layers,
            fmt_f(s.norm.eps),
            act_expr(s.mlp.act, "x"),
        )
    };
    let (threshold, extra) = match bl.patching {
        Patching::Entropy(t) => (fmt_f(t), 0),
        Patching::Bytes { extra } => ("None".to_string(), extra),
    };
    let patcher = match &bl.patcher {
        Some(p) => format!(
            "Patcher(vocab={}, rope=patcher_rope_frequencies, {})",
            p.vocab,
            args(p)
        ),
        None => "None  # patch_in_forward: false".into(),
    };
    let k = bl.cross_k;
    let wide = bl.encoder.hidden * k;
    fill(
        MODEL,
        &[
            ("patcher", patcher),
            ("enc", args(&bl.encoder)),
            ("enc_vocab", bl.encoder.vocab.to_string()),
            ("enc_cross", bl.encoder_cross().to_string()),
            ("glob", args(spec)),
            (
                "wide",
                (wide != spec.hidden)
                    .then_some(wide)
                    .map_or("None".into(), |w| w.to_string()),
            ),
            ("dec", args(&bl.decoder)),
            ("dec_cross", bl.decoder_cross().to_string()),
            ("d_glob", spec.hidden.to_string()),
            ("k", k.to_string()),
            ("enc_all", super::py_bool(bl.encoder_cross_all)),
            ("dec_all", super::py_bool(bl.decoder_cross_all)),
            ("rows", bl.hash.rows().to_string()),
            ("d_enc", bl.encoder.hidden.to_string()),
            ("d_dec", bl.decoder.hidden.to_string()),
            ("hash_vocab", bl.hash.vocab.to_string()),
            ("sizes", format!("{:?}", bl.hash.sizes)),
            ("functions", bl.hash.functions.to_string()),
            ("primes", format!("{:?}", crate::spec::ByteHash::PRIMES)),
            ("threshold", threshold),
            ("extra", extra.to_string()),
            (
                "max_patch",
                bl.max_patch.map_or("None".into(), |m| m.to_string()),
            ),
            ("vocab", spec.vocab.to_string()),
        ],
    )
}

fn rope(s: &Spec, key: &str) -> String {
    let r = ByteLatent::rope(s);
    freqs_fn(
        &format!("{key}_rope_frequencies"),
        &r.full,
        r.rotary_dim(s.attn.head_dim),
    )
}

const LAYERS: &str = r#"def rope_cos_sin(frequencies, T, dtype):
    """cos and sin of every position's angles, each repeated for the pair it turns: [T, head dim]."""
    inv_freq, factor = frequencies(T)
    angles = torch.arange(T, dtype=torch.float32)[:, None] * inv_freq[None, :]  # [T, head dim / 2]
    angles = angles.repeat_interleave(2, dim=-1)  # interleaved pairs (x0, x1), (x2, x3) …
    return (angles.cos() * factor).to(dtype), (angles.sin() * factor).to(dtype)


def apply_rope(x, cos, sin):  # x: [B, heads, T, d]
    """Rotate interleaved pairs (x0, x1), (x2, x3) … as complex numbers."""
    turned = torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)
    return x * cos + turned * sin


def causal_mask(T, window):
    """True where position i may attend to j: j ≤ i, and within the last `window` (None: all)."""
    i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    ok = j <= i
    return ok & (i - j < window) if window else ok


class Attention(nn.Module):
    def __init__(self, d, heads, kv_heads, window):
        super().__init__()
        self.heads, self.kv_heads, self.dim, self.window = heads, kv_heads, d // heads, window
        self.q_proj = nn.Linear(d, d, bias=False)
        self.k_proj = nn.Linear(d, kv_heads * self.dim, bias=False)
        self.v_proj = nn.Linear(d, kv_heads * self.dim, bias=False)
        self.o_proj = nn.Linear(d, d, bias=False)

    def forward(self, x, rope):  # x: [B, T, d]
        B, T, _ = x.shape
        H, KV, D = self.heads, self.kv_heads, self.dim
        q = self.q_proj(x).view(B, T, H, D).transpose(1, 2)  # [B, H, T, D]
        k = self.k_proj(x).view(B, T, KV, D).transpose(1, 2)  # [B, KV, T, D]
        v = self.v_proj(x).view(B, T, KV, D).transpose(1, 2)
        cos, sin = rope
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        k, v = k.repeat_interleave(H // KV, dim=1), v.repeat_interleave(H // KV, dim=1)  # [B, H, T, D]
        scores = (q @ k.transpose(-1, -2)) * D ** -0.5  # [B, H, T, T]
        scores = scores.masked_fill(~causal_mask(T, self.window).to(x.device), float("-inf"))
        probs = scores.float().softmax(dim=-1).to(q.dtype)
        return self.o_proj((probs @ v).transpose(1, 2).reshape(B, T, H * D))  # [B, T, d]


class MLP(nn.Module):
    def __init__(self, d, ffn, act):
        super().__init__()
        self.act = act
        self.gate_proj = nn.Linear(d, ffn, bias=False)
        self.up_proj = nn.Linear(d, ffn, bias=False)
        self.down_proj = nn.Linear(ffn, d, bias=False)

    def forward(self, x):  # [B, T, d]
        return self.down_proj(self.act(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    """Llama's pre-norm layer: attention, then the gated MLP, each added to the stream."""

    def __init__(self, d, heads, kv_heads, ffn, eps, window, act):
        super().__init__()
        self.input_layernorm = Norm(d, eps)
        self.self_attn = Attention(d, heads, kv_heads, window)
        self.post_attention_layernorm = Norm(d, eps)
        self.mlp = MLP(d, ffn, act)

    def forward(self, x, rope):  # [B, T, d]
        x = x + self.self_attn(self.input_layernorm(x), rope)
        return x + self.mlp(self.post_attention_layernorm(x))


class Stack(nn.Module):
    """A stack of decoder layers with its own sizes and rotary frequencies."""

    def __init__(self, rope, layers, **sizes):
        super().__init__()
        self.rope = rope
        self.layers = nn.ModuleList(DecoderLayer(**sizes) for _ in range(layers))

    def run(self, x, first=0, last=None):  # x: [B, T, d], through layers first..last-1
        rope = rope_cos_sin(self.rope, x.shape[1], x.dtype)
        for layer in self.layers[first:last]:
            x = layer(x, rope)
        return x


class CrossAttention(nn.Module):
    """Queries from one sequence, keys and values from another, each normed first; a query sees
    the keys `visible` allows (one with none attends to all evenly, as transformers' mask of
    float minima makes it). Returns its output plus its input."""

    def __init__(self, d, heads, kv_heads, eps):
        super().__init__()
        self.heads, self.kv_heads, self.dim = heads, kv_heads, d // heads
        self.q_proj = nn.Linear(d, d, bias=False)
        self.k_proj = nn.Linear(d, kv_heads * self.dim, bias=False)
        self.v_proj = nn.Linear(d, kv_heads * self.dim, bias=False)
        self.o_proj = nn.Linear(d, d, bias=False)
        self.q_norm = Norm(d, eps)
        self.k_norm = Norm(d, eps)

    def forward(self, x, kv, visible):  # x: [B, Tq, d], kv: [B, Tk, d], visible: [Tq, Tk]
        B, Tq, _ = x.shape
        H, KV, D = self.heads, self.kv_heads, self.dim
        q = self.q_proj(self.q_norm(x)).view(B, Tq, H, D).transpose(1, 2)  # [B, H, Tq, D]
        kv = self.k_norm(kv)
        k = self.k_proj(kv).view(B, -1, KV, D).transpose(1, 2).repeat_interleave(H // KV, dim=1)
        v = self.v_proj(kv).view(B, -1, KV, D).transpose(1, 2).repeat_interleave(H // KV, dim=1)
        scores = (q @ k.transpose(-1, -2)) * D ** -0.5  # [B, H, Tq, Tk]
        scores = scores + torch.where(visible, 0.0, torch.finfo(scores.dtype).min)
        probs = scores.float().softmax(dim=-1).to(q.dtype)
        return self.o_proj((probs @ v).transpose(1, 2).reshape(B, Tq, H * D)) + x"#;

const MODEL: &str = r#"class Patcher(Stack):
    """The entropy model: a small byte-level language model."""

    def __init__(self, vocab, rope, **sizes):
        super().__init__(rope, **sizes)
        self.embed_tokens = nn.Embedding(vocab, sizes["d"])
        self.norm = Norm(sizes["d"], sizes["eps"])
        self.lm_head = nn.Linear(sizes["d"], vocab, bias=False)

    def entropies(self, ids):  # [B, T] -> [B, T]: each next-byte prediction's entropy, in nats
        logits = self.lm_head(self.norm(self.run(self.embed_tokens(ids)))).float()
        logp = logits.log_softmax(-1)
        return -(logp.exp() * logp).sum(-1)


class LocalEncoder(Stack):
    def __init__(self, vocab, k, cross_layers, **sizes):
        super().__init__(encoder_rope_frequencies, **sizes)
        d = sizes["d"]
        self.embed_tokens = nn.Embedding(vocab, d)
        self.patch_embedding_projection = nn.Linear(d, d * k, bias=False)  # k queries per patch
        self.cross_attn_layers = nn.ModuleList(
            CrossAttention(d, sizes["heads"], sizes["kv_heads"], sizes["eps"]) for _ in range(cross_layers))


class GlobalTransformer(Stack):
    def __init__(self, wide, **sizes):
        super().__init__(global_rope_frequencies, **sizes)
        if wide:  # the encoder's patches are wider than the latent width
            self.token_embedding_projection = nn.Linear(wide, sizes["d"], bias=False)


class LocalDecoder(Stack):
    def __init__(self, d_global, k, cross_layers, **sizes):
        super().__init__(decoder_rope_frequencies, **sizes)
        d = sizes["d"]
        self.patch_embedding_projection = nn.Linear(d_global, d * k, bias=False)  # k keys per patch
        self.norm = Norm(d, sizes["eps"])
        self.cross_attn_layers = nn.ModuleList(
            CrossAttention(d, sizes["heads"], sizes["kv_heads"], sizes["eps"]) for _ in range(cross_layers))


HASH = {"vocab": ${hash_vocab}, "sizes": ${sizes}, "functions": ${functions}}
PRIMES = ${primes}
K = ${k}  # queries (encoder) and keys (decoder) per patch
THRESHOLD = ${threshold}  # nats of next-byte entropy that end a patch; None: a patch per byte


def hash_rows(ids, f, n, block):
    """[T] int64 -> the table row of the n bytes ending at each position (zeros before the
    first) under hash function f: sum of byte_i * prime^i in wrapping 64-bit arithmetic."""
    padded = torch.cat([torch.zeros(n - 1, dtype=torch.int64), ids])
    windows = padded.unfold(0, n, 1)  # [T, n]
    powers = torch.tensor(PRIMES[f % len(PRIMES)], dtype=torch.int64) ** torch.arange(n)
    return (windows * powers).sum(-1) % HASH["vocab"] + block * HASH["vocab"]


def patch_lengths(entropies, T):
    """The length of each patch, in order: a patch starts at bytes 0 and 1 and after every later
    byte whose entropy exceeds the threshold (one per byte without one); longer ones cut."""
    if THRESHOLD is None:
        lengths = [1] * (T + ${extra})
    else:
        starts = [0, 1] + [t + 1 for t in range(1, T) if entropies[t] > THRESHOLD]
        ends = [s - 1 for s in starts[1:]] + [T - 1]
        lengths = [e - s + 1 for s, e in zip(starts, ends)]
    m = ${max_patch}  # the longest patch
    if m:
        lengths = [piece for n in lengths for piece in [m] * (n // m) + ([n % m] if n % m else [])]
    return lengths


def patch_ids(lengths, T):
    """[T]: each position's patch, the last one starting at or before it."""
    starts = torch.tensor([0] + lengths[:-1]).cumsum(0)
    return (starts[None, :] <= torch.arange(T)[:, None]).sum(-1) - 1


class BltModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.patcher = ${patcher}
        self.local_encoder = LocalEncoder(vocab=${enc_vocab}, k=K, cross_layers=${enc_cross}, ${enc})
        self.global_transformer = GlobalTransformer(wide=${wide}, ${glob})
        self.local_decoder = LocalDecoder(d_global=${d_glob}, k=K, cross_layers=${dec_cross}, ${dec})
        self.encoder_hash_tok_embedding = nn.Embedding(${rows}, ${d_enc})  # one block of rows per (function, n)

    def forward(self, input_ids):  # [1, T] bytes -> [1, T, ${d_dec}]
        ids, T = input_ids[0], input_ids.shape[1]
        ent = self.patcher.entropies(input_ids)[0].tolist() if THRESHOLD is not None else None
        lengths = patch_lengths(ent, T)
        P = len(lengths)
        own, before = patch_ids(lengths, T), patch_ids(lengths[1:], T)  # each byte's patch; the one whose keys it reads
        enc = self.local_encoder
        x = enc.embed_tokens(input_ids)  # [1, T, ${d_enc}]
        block = 0
        for f in range(HASH["functions"]):
            for n in HASH["sizes"]:
                x = x + self.encoder_hash_tok_embedding(hash_rows(ids, f, n, block))
                block += 1
        queries = torch.arange(P * K)[:, None] // K == own[None, :]  # [P K, T]: query j sees patch j // K's bytes
        for b in range(len(enc.layers)):
            x = enc.run(x, b, b + 1)
            if ${enc_all} or b == len(enc.layers) - 1:
                pooled = torch.zeros(1, P, x.shape[-1], dtype=x.dtype).scatter_reduce(
                    1, own[None, :, None].expand_as(x), x, reduce="amax", include_self=False)  # each patch's max, 0 if empty
                p = enc.patch_embedding_projection(pooled).reshape(1, P * K, -1)  # [1, P K, ${d_enc}]
                patches = p + enc.cross_attn_layers[b if ${enc_all} else 0](p, x, queries)
        g = patches.reshape(1, P, -1)  # one position per patch
        glob = self.global_transformer
        if hasattr(glob, "token_embedding_projection"):
            g = glob.token_embedding_projection(g)
        g = glob.run(g)  # [1, P, ${d_glob}]
        dec = self.local_decoder
        keys = dec.patch_embedding_projection(g).reshape(1, P * K, -1)  # [1, P K, ${d_dec}]
        sees = before[:, None] == torch.arange(P * K)[None, :] // K  # [T, P K]
        for b in range(len(dec.layers)):
            if b == 0 or ${dec_all}:
                x = x + dec.cross_attn_layers[b](x, keys, sees)
            x = dec.run(x, b, b + 1)
        return dec.norm(x)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = BltModel()
        self.lm_head = nn.Linear(${d_dec}, ${vocab}, bias=False)

    def forward(self, input_ids):  # [1, T] bytes -> logits [1, T, ${vocab}]
        return self.lm_head(self.model(input_ids))"#;
