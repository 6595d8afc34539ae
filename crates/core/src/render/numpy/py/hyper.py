#: sinkhorn
def sinkhorn_mix(m, base, scale, n):
    # DeepSeek-V4: a sublayer's mix logits m: [T, (2 + n) n] -> its post gates [T, n] (without
    # eps) and C: [T, n, n], how the streams mix among themselves, a softmax per row made doubly
    # stochastic (rows and columns summing to 1) by Sinkhorn iterations
    Hc, T = CONFIG["hyper"], m.shape[0]
    sig = lambda z: 1 / (1 + np.exp(-z))
    post = Hc["magnitude"] * sig(m[:, n : 2 * n] * scale[1] + base[n : 2 * n])  # post: [T, n]
    c = softmax((m[:, 2 * n :] * scale[2] + base[2 * n :]).reshape(T, n, n)) + Hc["eps"]  # c: [T, n, n]
    c = c / (c.sum(1, keepdims=True) + Hc["eps"])  # columns
    for _ in range(Hc["sinkhorn"] - 1):
        c = c / (c.sum(2, keepdims=True) + Hc["eps"])  # rows
        c = c / (c.sum(1, keepdims=True) + Hc["eps"])  # columns
    return post, c


#.
#: hyper
def stream_mix(X, W, key, b=None):
    # Hyper-connections: X: [T, n, hidden] -> (the streams weighed into one [T, hidden], the
    # post gates [T, n] before a sublayer, None in the head)
    Hc = CONFIG["hyper"]
    T, n = X.shape[0], Hc["streams"]
    flat = X.reshape(T, -1)  # flat: [T, n hidden]
    m = linear(flat, w(W, key + "_fn", b)) / np.sqrt((flat * flat).mean(-1, keepdims=True) + CONFIG["eps"])  # m: [T, 2n] (n in the head), RMS-scaled, no weight
    base, scale = w(W, key + "_base", b), w(W, key + "_scale", b)  # base: [2n], scale: [2] (the head's: [n], [1])
    sig = lambda z: 1 / (1 + np.exp(-z))
    pre = sig(m[:, :n] * scale[0] + base[:n]) + Hc["eps"]  # pre: [T, n], how much of each stream is read
    post = None if b is None else Hc["magnitude"] * sig(m[:, n:] * scale[1] + base[n:]) + Hc["eps"]  # post: [T, n], how much of the output each stream gets
#: sinkhorn
    if b is not None and Hc["sinkhorn"]:
        return (pre[:, :, None] * X).sum(1), sinkhorn_mix(m, base, scale, n)  # [T, hidden], (post [T, n], C [T, n, n])
#.
    return (pre[:, :, None] * X).sum(1), post  # [T, hidden], [T, n]


#.
#: hyper
#: hashed
def hyper_forward(x, W, ids):
    # Hyper-connections' forward pass. x: [T, hidden], the embeddings -> logits [T, vocab]
    X = np.repeat(x[:, None, :], CONFIG["hyper"]["streams"], axis=1)  # X: [T, n, hidden], every stream starts as the embedding
#.
#: !hashed
def hyper_forward(x, W):
    # Hyper-connections' forward pass. x: [T, hidden], the embeddings -> logits [T, vocab]
    X = np.repeat(x[:, None, :], CONFIG["hyper"]["streams"], axis=1)  # X: [T, n, hidden], every stream starts as the embedding
#.
    for b, (span, use_rope, ffn) in enumerate(PLAN):
        h, post = stream_mix(X, W, "hc_attn", b)  # h: [T, hidden], post: [T, n]
#: !v4
        a = attention(norm(h, w(W, "attn_norm", b)), W, b, span, use_rope)  # a: [T, hidden]
#.
#: v4
        a = v4_attention(norm(h, w(W, "attn_norm", b)), W, b)  # a: [T, hidden]
#.
#: !sinkhorn
        X = X + post[:, :, None] * a[:, None, :]  # X: [T, n, hidden], the output written to every stream
#.
#: sinkhorn
        post, c = post  # the post gates [T, n] and the streams' mix C [T, n, n]
        X = np.einsum("tji,tjd->tid", c, X) + post[:, :, None] * a[:, None, :]  # X: [T, n, hidden], stream i = sum_j C[j, i] X_j plus the output
#.
        h, post = stream_mix(X, W, "hc_ffn", b)
        h = norm(h, w(W, "ffn_norm", b))  # h: [T, hidden]
#: hashed
        m = moe(h, W, b, ids=ids) if ffn == "moe" else mlp(h, W, b)  # m: [T, hidden]
#.
#: !hashed
        m = moe(h, W, b) if ffn == "moe" else mlp(h, W, b)  # m: [T, hidden]
#.
#: !sinkhorn
        X = X + post[:, :, None] * m[:, None, :]  # X: [T, n, hidden]
#.
#: sinkhorn
        post, c = post  # the post gates [T, n] and the streams' mix C [T, n, n]
        X = np.einsum("tji,tjd->tid", c, X) + post[:, :, None] * m[:, None, :]  # X: [T, n, hidden]
#.
    h, _ = stream_mix(X, W, "hc_head")  # h: [T, hidden], the streams weighed into one
    return lm_head(norm(h, w(W, "final_norm")), W)


#.
