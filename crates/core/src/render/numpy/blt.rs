//! The NumPy export's BLT part (`ByteLatent`): the file's layer functions read the globals
//! CONFIG, PLAN, NAMES and rope_frequencies, so each stack's figures, plan, names and rotary
//! frequencies are written beside the latent transformer's, and `within(stack)` points the
//! globals at them before that stack runs. The model's forward() runs the layers through
//! `stack_forward`, a range of them at a time.

use super::{config_py, freqs, name_dict, py, python_plan};
use crate::graph::Graph;
use crate::naming::Role;
use crate::spec::{ByteLatent, Patching, Spec, Stack};

/// `body` (the latent transformer's file body) with BLT's parts.
pub(crate) fn blt(g: &Graph, bl: &ByteLatent, body: String) -> String {
    let held: std::collections::HashSet<&str> = g.params.iter().map(|p| p.hf.as_str()).collect();
    let (start, end) = forward_block(&body);
    let layers = stack_forward(&body[start..end]);
    let mut stacks = String::new();
    let mut entries = vec!["    \"global\": (CONFIG, PLAN, NAMES, rope_frequencies),".to_string()];
    for (stack, spec) in bl.stacks() {
        let key = key(stack);
        let upper = key.to_uppercase();
        let cross: &[(&str, Role)] = match stack {
            Stack::Patcher => &[],
            Stack::Encoder | Stack::Decoder => CROSS_ROLES,
        };
        stacks += &format!(
            "# The {title}'s figures, plan, names and rotary frequencies.\nCONFIG_{upper} = {config}\n\nPLAN_{upper} = [\n    {plan},\n]\n\nNAMES_{upper} = {names}\n\n{rope}\n\n\n",
            title = stack.title().to_lowercase(),
            config = config_py(spec),
            plan = python_plan(spec).join(",\n    "),
            names = name_dict(spec, &held, cross).0,
            rope = rope(spec, &format!("{key}_rope_frequencies")),
        );
        entries.push(format!(
            "    {key:?}: (CONFIG_{upper}, PLAN_{upper}, NAMES_{upper}, {key}_rope_frequencies),"
        ));
    }
    let (threshold, extra) = match bl.patching {
        Patching::Entropy(t) => (crate::fmt::float(t), 0),
        Patching::Bytes { extra } => ("None".to_string(), extra),
    };
    let constants = format!(
        "# BLT: the hashed n-grams, the queries and keys per patch, how bytes are cut into patches.\nBLT = {{\n    \"hash_vocab\": {hv}, \"hash_sizes\": {sizes:?}, \"hash_functions\": {hf},\n    \"k\": {k}, \"encoder_cross_all\": {ea}, \"decoder_cross_all\": {da},\n    \"threshold\": {threshold}, \"extra_patches\": {extra}, \"max_patch\": {mp},\n    \"token_proj\": {tp},\n}}\nHASH_PRIMES = {primes:?}\nHASH_TABLE = \"model.encoder_hash_tok_embedding.weight\"\n\n{stacks}STACKS = {{\n{entries}\n}}",
        hv = bl.hash.vocab,
        sizes = bl.hash.sizes,
        hf = bl.hash.functions,
        k = bl.cross_k,
        ea = py(bl.encoder_cross_all),
        da = py(bl.decoder_cross_all),
        mp = bl.max_patch.map_or("None".into(), |m| m.to_string()),
        tp = py(bl.encoder.hidden * bl.cross_k != g.spec.hidden),
        primes = crate::spec::ByteHash::PRIMES,
        entries = entries.join("\n"),
    );
    format!(
        "{}{layers}\n\n\n{constants}\n\n\n{BODY}{}",
        &body[..start],
        &body[end..]
    )
}

const CROSS_ROLES: &[(&str, Role)] = &[
    ("cross_q_norm", Role::CrossQNorm),
    ("cross_k_norm", Role::CrossKNorm),
    ("cross_q", Role::CrossQ),
    ("cross_k", Role::CrossK),
    ("cross_v", Role::CrossV),
    ("cross_o", Role::CrossO),
    ("patch_proj", Role::PatchProj),
];

fn key(s: Stack) -> &'static str {
    match s {
        Stack::Patcher => "patcher",
        Stack::Encoder => "encoder",
        Stack::Decoder => "decoder",
    }
}

/// A stack's rotary frequencies under `name`.
fn rope(spec: &Spec, name: &str) -> String {
    let r = ByteLatent::rope(spec);
    freqs(&r.full, name, r.rotary_dim(spec.attn.head_dim))
}

/// Where the template's forward() sits in `body`: from its `def` to the blank lines after it.
fn forward_block(body: &str) -> (usize, usize) {
    let start = body
        .find("def forward(ids, W):")
        .expect("the template has a forward()");
    let end = body[start..]
        .find("\n\n\n")
        .map_or(body.len(), |e| start + e);
    (start, end)
}

/// The template's forward() cut down to its loop over the layers, over a range of them.
fn stack_forward(forward: &str) -> String {
    let loop_end = forward
        .find("\n    if C[\"prompt\"]:")
        .expect("forward() drops the prompt's positions after its loop");
    let mut f = forward[..loop_end].to_string();
    for (old, new) in [
        (
            "def forward(ids, W):\n    # ids: [T] int -> logits [T, vocab]\n",
            "def stack_forward(x, W, first=0, last=None):\n    # x: [T, hidden] -> [T, hidden], through layers first..last-1 of the stack in use (within())\n",
        ),
        ("    x = embed(ids, W)  # [T, hidden]\n", ""),
        (
            "    for b, (span, use_rope, ffn) in enumerate(PLAN):\n",
            "    for b, (span, use_rope, ffn) in list(enumerate(PLAN))[first:last]:\n",
        ),
    ] {
        assert!(f.contains(old), "forward() reads {old:?}");
        f = f.replacen(old, new, 1);
    }
    f + "\n    return x  # [T, hidden]"
}

const BODY: &str = r#"def within(stack):
    # Point the functions above at `stack`'s figures, plan, names and rotary frequencies
    global CONFIG, PLAN, NAMES, rope_frequencies
    CONFIG, PLAN, NAMES, rope_frequencies = STACKS[stack]


def hash_rows(ids, f, n, block):
    # ids: [T] int -> [T] int: the table row of the n bytes ending at each position (zeros
    # before the first), hashed by function f into block `block` of the table
    prime = np.array(HASH_PRIMES[f % len(HASH_PRIMES)], np.int64)
    padded = np.concatenate([np.zeros(n - 1, np.int64), ids.astype(np.int64)])  # [n - 1 + T]
    h, power = np.zeros(len(ids), np.int64), np.ones((), np.int64)
    with np.errstate(over="ignore"):  # 64-bit arithmetic that wraps, as torch's does
        for i in range(n):
            h = h + padded[i : i + len(ids)] * power  # the window's i-th byte times prime^i
            power = power * prime
    return h % BLT["hash_vocab"] + block * BLT["hash_vocab"]  # [T], modulo never negative


def entropies(ids, W):
    # ids: [T] int -> [T]: the patcher's entropy of each position's next-byte prediction, in nats
    within("patcher")
    z = norm(stack_forward(embed(ids, W), W), w(W, "final_norm"))  # [T, hidden]
    logits = lm_head(z, W)  # [T, vocab]
    logp = np.log(softmax(logits))  # [T, vocab]
    return -(np.exp(logp) * logp).sum(-1)  # [T]


def patch_lengths(ids, W):
    # ids: [T] int -> the length of each patch, in order (a patch may be empty)
    T = len(ids)
    if BLT["threshold"] is None:
        lengths = [1] * (T + BLT["extra_patches"])  # every byte a patch
    else:
        e = entropies(ids, W)  # [T]
        starts = [0, 1] + [t + 1 for t in range(1, T) if e[t] > BLT["threshold"]]  # after each hard-to-predict byte
        ends = [s - 1 for s in starts[1:]] + [T - 1]
        lengths = [end - start + 1 for start, end in zip(starts, ends)]
    m = BLT["max_patch"]
    if m:
        lengths = [piece for n in lengths for piece in [m] * (n // m) + ([n % m] if n % m else [])]  # longer ones cut, empty ones dropped
    return lengths


def patch_ids(lengths, T):
    # -> [T] int: each position's patch, the last one starting at or before it
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)  # [P]
    return (starts[None, :] <= np.arange(T)[:, None]).sum(-1) - 1  # [T]


def max_pool(x, ids, P):
    # x: [T, d] -> [P, d]: each patch's elementwise maximum over its bytes, zeros where it has none
    out = np.zeros((P, x.shape[1]), np.float32)  # [P, d]
    for p in range(P):
        if (ids == p).any():
            out[p] = x[ids == p].max(0)
    return out


def cross_attention(x, kv, W, c, visible):
    # x: [Tq, d] queries, kv: [Tk, d], visible: [Tq, Tk] bool -> [Tq, d]; a query with no visible
    # key attends to all evenly, as the mask of float minima it is given makes it
    C = CONFIG
    Tq, Tk, H, KV, D = len(x), len(kv), C["heads"], C["kv_heads"], C["head_dim"]
    q = linear(norm(x, w(W, "cross_q_norm", c)), w(W, "cross_q", c)).reshape(Tq, H, D).transpose(1, 0, 2)  # [H, Tq, D]
    kn = norm(kv, w(W, "cross_k_norm", c))  # [Tk, d]
    k = linear(kn, w(W, "cross_k", c)).reshape(Tk, KV, D).transpose(1, 0, 2)  # [KV, Tk, D]
    v = linear(kn, w(W, "cross_v", c)).reshape(Tk, KV, D).transpose(1, 0, 2)  # [KV, Tk, D]
    k, v = np.repeat(k, H // KV, 0), np.repeat(v, H // KV, 0)  # [H, Tk, D], each K/V head serving H / KV query heads
    s = (q @ k.transpose(0, 2, 1)) / np.float32(math.sqrt(D))  # s: [H, Tq, Tk]
    s = s + np.where(visible, np.float32(0), np.finfo(np.float32).min)  # masked keys pushed to the float minimum
    o = (softmax(s) @ v).transpose(1, 0, 2).reshape(Tq, H * D)  # [Tq, H * D]
    return x + (linear(o, w(W, "cross_o", c)) + x)  # the attention adds its input, and so does its caller


def forward(ids, W):
    # ids: [T] bytes -> logits [T, vocab]
    T, k = len(ids), BLT["k"]
    lengths = patch_lengths(ids, W)
    P = len(lengths)
    own = patch_ids(lengths, T)  # [T]: each byte's patch
    before = patch_ids(lengths[1:], T)  # [T]: the patch whose keys the decoder reads at each byte
    within("encoder")
    x = embed(ids, W)  # [T, d_enc]
    block = 0
    for f in range(BLT["hash_functions"]):
        for n in BLT["hash_sizes"]:
            x = x + W[HASH_TABLE][hash_rows(ids, f, n, block)]  # + each hashed n-gram's row
            block += 1
    queries = np.arange(P * k)[:, None] // k == own[None, :]  # [P k, T]: query j sees the bytes of patch j // k
    for b in range(len(PLAN)):
        x = stack_forward(x, W, b, b + 1)  # [T, d_enc]
        if BLT["encoder_cross_all"] or b == len(PLAN) - 1:
            p = linear(max_pool(x, own, P), w(W, "patch_proj")).reshape(P * k, -1)  # [P k, d_enc], k queries per patch
            patches = cross_attention(p, x, W, b if BLT["encoder_cross_all"] else 0, queries)  # [P k, d_enc]
    enc = x  # [T, d_enc]
    within("global")
    g = patches.reshape(P, -1)  # [P, k d_enc], one position per patch
    if BLT["token_proj"]:
        g = linear(g, w(W, "token_proj"))  # [P, hidden]
    g = stack_forward(g, W)  # [P, hidden]
    within("decoder")
    keys = linear(g, w(W, "patch_proj")).reshape(P * k, -1)  # [P k, d_dec], k keys per patch
    sees = before[:, None] == np.arange(P * k)[None, :] // k  # [T, P k]
    x = enc
    for b in range(len(PLAN)):
        if b == 0 or BLT["decoder_cross_all"]:
            x = cross_attention(x, keys, W, b, sees)  # [T, d_dec]
        x = stack_forward(x, W, b, b + 1)
    return lm_head(norm(x, w(W, "final_norm")), W)  # [T, vocab]"#;
