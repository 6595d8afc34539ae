#: v4
def v4_rope(x, pos, freqs, sign=1.0):
    # DeepSeek-V4: x: [..., T, D] -> x with its last rot_dim dims rotated in interleaved pairs by
    # the angle of each position (pos: [T]); backwards with sign -1
    inv, factor = freqs(int(pos.max()) + 1 if len(pos) else 1)  # inv: [rot_dim / 2]
    ang = pos.astype(np.float32)[:, None] * inv.astype(np.float32)[None, :]  # ang: [T, rot_dim / 2]
    cos, sin = (np.cos(ang) * factor).astype(np.float32), (sign * np.sin(ang) * factor).astype(np.float32)
    r = 2 * inv.shape[0]
    even, odd = x[..., -r::2], x[..., -r + 1 :: 2]  # the pairs' first and second dims
    out = x.copy()
    out[..., -r::2], out[..., -r + 1 :: 2] = even * cos - odd * sin, odd * cos + even * sin
    return out


#.
#: v4
def compress(x, W, b, key, m, overlap, D):
    # DeepSeek-V4's compressor. x: [T, hidden] -> entries [T // m, D]: each closed window of m
    # tokens pooled into one, by a softmax over its slots (feature by feature) of the gates plus
    # a bias per slot; with overlap, over the window before it too (2m slots: each token's first
    # D features serve the next window's entry, its last D its own window's)
    parts, gates = linear(x, w(W, key + "_kv", b)), linear(x, w(W, key + "_gate", b))  # [T, D or 2D] each
    bias = w(W, key + "_bias", b)  # bias: [m, D or 2D], one row per slot of a window
    n = x.shape[0] // m  # windows closed
    out = np.zeros((n, D), np.float32)  # out: [n, D]
    for e in range(n):
        own = slice(e * m, (e + 1) * m)
        if overlap:
            c, z = parts[own, D:], gates[own, D:] + bias[:, D:]  # [m, D] each: the window's own halves
            if e > 0:
                before = slice((e - 1) * m, e * m)
                c = np.concatenate([parts[before, :D], c])  # c: [2m, D]
                z = np.concatenate([gates[before, :D] + bias[:, :D], z])  # z: [2m, D]
        else:
            c, z = parts[own], gates[own] + bias  # [m, D] each
        p = np.exp(z - z.max(0))
        out[e] = (p / p.sum(0) * c).sum(0)  # out[e]: [D]
    out = norm(out, w(W, key + "_norm", b))  # [n, D]
    return v4_rope(out, np.arange(n) * m, compress_rope_frequencies)  # each rotated at its window's first position


#.
#: v4
def v4_index(x, cq, W, b, m, seen):
    # DeepSeek-V4's indexer. x: [T, hidden], cq: [T, q_lora], seen: [T, E] the entries of windows
    # closed by each query -> [T, E], True at each query's top-k of those
    I = CONFIG["v4"]["index"]
    T, IH, ID = x.shape[0], I["heads"], I["head_dim"]
    k = compress(x, W, b, "index_comp", m, True, ID)  # k: [E, ID]
    q = linear(cq, w(W, "index_q", b)).reshape(T, IH, ID).transpose(1, 0, 2)  # q: [IH, T, ID]
    q = v4_rope(q, np.arange(T), compress_rope_frequencies)
    weights = linear(x, w(W, "index_weights", b)) / np.sqrt(IH)  # weights: [T, IH]
    dots = np.maximum(q @ k.T, 0) / np.sqrt(ID)  # dots: [IH, T, E], ReLU'd
    scores = np.where(seen, np.einsum("th,hte->te", weights, dots), -np.inf)  # scores: [T, E]
    keep = np.zeros_like(seen)
    for t in range(T):
        best = np.argsort(-scores[t], kind="stable")[: min(I["top_k"], int(seen[t].sum()))]
        keep[t, best] = True
    return keep  # [T, E]


#.
#: v4
def v4_attention(x, W, b):
    # DeepSeek-V4's attention. x: [T, hidden] -> [T, hidden]
    C, V = CONFIG, CONFIG["v4"]
    T, H, D = x.shape[0], C["heads"], C["head_dim"]
    kind = V["kinds"][b]  # "sliding", "csa" (compressed sparse) or "hca" (heavily compressed)
    freqs = rope_frequencies if kind == "sliding" else compress_rope_frequencies
    pos = np.arange(T)
    cq = norm(linear(x, w(W, "q_a", b)), w(W, "q_a_norm", b))  # cq: [T, q_lora], the query latent
    q = linear(cq, w(W, "q_b", b)).reshape(T, H, D).transpose(1, 0, 2)  # q: [H, T, D]
    q = v4_rope(q / np.sqrt((q * q).mean(-1, keepdims=True) + C["eps"]), pos, freqs)  # each head RMS-normed (no weight), rotated
    kv = v4_rope(norm(linear(x, w(W, "v4_kv", b)), w(W, "v4_kv_norm", b)), pos, freqs)  # kv: [T, D], key and value both
    near = (pos[None, :] <= pos[:, None]) & (pos[:, None] - pos[None, :] < V["window"])  # near: [T, T], the sliding window
    keys, mask = kv, np.where(near, 0.0, -np.inf).astype(np.float32)  # keys: [T, D], mask: [T, T]
    if kind != "sliding":
        m = V[kind]  # tokens per entry
        entries = compress(x, W, b, "comp", m, kind == "csa", D)  # entries: [E, D]
        seen = np.arange(len(entries))[None, :] < ((pos + 1) // m)[:, None]  # seen: [T, E], windows closed by each query
        if kind == "csa":
            seen = seen & v4_index(x, cq, W, b, m, seen)  # only the entries the indexer keeps
        keys = np.concatenate([kv, entries])  # keys: [T + E, D]
        mask = np.concatenate([mask, np.where(seen, 0.0, -np.inf).astype(np.float32)], 1)  # mask: [T, T + E]
    s = q @ keys.T / np.float32(math.sqrt(D)) + mask  # s: [H, T, T + E]
    sink = np.broadcast_to(w(W, "sinks", b).reshape(H, 1, 1), (H, T, 1))  # sink: [H, T, 1], one learned logit per head
    p = softmax(np.concatenate([s, sink], -1))[..., :-1]  # p: [H, T, T + E], the sink's share dropped
    out = v4_rope(p @ keys, pos, freqs, -1.0).transpose(1, 0, 2)  # out: [T, H, D], values = keys, rotated back by the query's position
    g = V["o_groups"]
    woa = w(W, "v4_o_a", b).reshape(g, -1, H * D // g)  # woa: [g, o_rank, H D / g]
    oa = np.einsum("tgi,gri->tgr", out.reshape(T, g, -1), woa).reshape(T, -1)  # oa: [T, g o_rank], each group of heads on its own
    return linear(oa, w(W, "v4_o_b", b))  # [T, hidden]


#.
