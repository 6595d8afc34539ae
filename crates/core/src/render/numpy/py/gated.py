#: gated_streams
def gated_mix(X, W, which, b=None):
    # Gated residual streams' mix. X: [T, n, hidden] -> (h [T, hidden], the injection weights
    # [T, n]; None in the head's mix)
    T, n = X.shape[:2]
    Xn = (X / np.sqrt((X * X).mean(-1, keepdims=True) + CONFIG["eps"])).reshape(T, -1)  # Xn: [T, n hidden], each stream RMS-normed
    Xn = Xn * (1 + w(W, which + "_norm", b))  # one (1 + w) over all n hidden features
    a = act(linear(Xn, w(W, which + "_down", b)) / np.float32(n), "silu")  # a: [T, rank]
    a = 1 / (1 + np.exp(-linear(a, w(W, which + "_up", b))))  # a: [T, n hidden], a gate per feature
    h = (a * Xn).reshape(T, n, -1).mean(1)  # h: [T, hidden], the gated streams' mean
    if which == "gs_head":
        return h, None
    return h, 2 / (1 + np.exp(-linear(Xn, w(W, which + "_inject", b)) / np.float32(n)))  # [T, n], in (0, 2)


#.
#: gated_streams
def gated_forward(x, W, ids):
    # Gated residual streams' forward pass. x: [T, hidden], the embeddings -> logits [T, vocab]
    X = np.repeat(x[:, None, :], CONFIG["gated_streams"]["streams"], axis=1)  # X: [T, n, hidden], every stream starts as the embedding
    for b, (span, use_rope, ffn) in enumerate(PLAN):
#: ngram_ple
        if CONFIG["ngram_ple"] and b in CONFIG["ngram_ple"]["layers"]:
            X = X + ngram_ple(X, ids, W, b)  # the n-gram embeddings, before the mixer
#.
        h, g = gated_mix(X, W, "gs_attn", b)  # h: [T, hidden], normed in the mix: no norm of its own
        a = gated_delta_net(h, W, b) if span[0] == "delta" else attention(h, W, b, span, use_rope)  # a: [T, hidden]
        X = X + g[:, :, None] * a[:, None, :]  # X: [T, n, hidden], the output into every stream by its weight
        h, g = gated_mix(X, W, "gs_ffn", b)
        X = X + g[:, :, None] * moe(h, W, b)[:, None, :]  # X: [T, n, hidden]
    h, _ = gated_mix(X, W, "gs_head")  # h: [T, hidden], the streams gated into one
    return lm_head(h, W)  # no final norm


#.
