#: blt
#= blt_constants
def within(stack):
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
    return lm_head(norm(x, w(W, "final_norm")), W)  # [T, vocab]
#.
