#: altup
def rescaled(x, target):
    # x, target: [T, hidden] -> x, each row rescaled to the RMS of target's
    want = np.sqrt((target * target).mean(-1, keepdims=True))  # [T, 1]
    have = np.sqrt(np.maximum((x * x).mean(-1, keepdims=True), np.float32(1e-5)))  # [T, 1]
    return x * (want / have)  # [T, hidden]


#.
#: altup
def altup_router(x, W, b):
    # x: [T, hidden] -> [T, n]: AltUp's score of each stream's role for each token, in (-1, 1)
    h = norm(x, w(W, "altup_router_norm", b)) / np.float32(CONFIG["hidden"])  # [T, hidden]
    return np.tanh(linear(h, w(W, "altup_router", b)))  # [T, n]


#.
#: altup
def altup_forward(x, ple, W):
    # AltUp's forward pass. x: [T, hidden], the scaled embeddings; ple: [T, layers, width],
    # the per-layer inputs -> logits [T, vocab]
    A = CONFIG["altup"]
    n, a = A["streams"], A["active"]  # streams, and the one each layer computes on
    X = np.stack([x] + [rescaled(linear(x, w(W, "altup_proj", e=i)), x) for i in range(n - 1)], 1)  # X: [T, n, hidden]
    for b, (span, use_rope, ffn) in enumerate(PLAN):
        T = X.shape[0]
        coefs = linear(altup_router(X[:, a], W, b), w(W, "altup_predict", b)).reshape(T, n, n)  # coefs: [T, n, n]
        P = X + coefs @ X  # P: [T, n, hidden], each stream predicted from all of them
        h = norm(P[:, a], w(W, "attn_norm", b))  # h: [T, hidden], the active prediction, normed
        laurel = h + norm(linear(linear(h, w(W, "laurel_left", b)), w(W, "laurel_right", b)), w(W, "laurel_norm", b))  # [T, hidden], a low-rank branch beside the attention
        y = norm(attention(h, W, b, span, use_rope), w(W, "post_attn_norm", b))  # y: [T, hidden]
        r = (P[:, a] + y + laurel) / np.float32(math.sqrt(2))  # r: [T, hidden]
        o = r + norm(mlp(norm(r, w(W, "ffn_norm", b)), W, b), w(W, "post_ffn_norm", b))  # o: [T, hidden], the layer's new active stream
        c = linear(altup_router(o, W, b), w(W, "altup_correct", b)) + 1  # c: [T, n]
        X = P + c[:, :, None] * (o - P[:, a])[:, None, :]  # X: [T, n, hidden], every prediction corrected by the innovation
        first = X[:, a] * w(W, "altup_scale", b) if A["correct_scale"] else X[:, a]  # first: [T, hidden]
        g = act(linear(first, w(W, "ple_gate", b))) * ple[:, b]  # g: [T, width], this layer's per-layer input, gated
        X[:, 1:] = X[:, 1:] + norm(linear(g, w(W, "ple_up", b)), w(W, "ple_norm", b))[:, None, :]  # into every stream after the first
    first = X[:, 0]  # [T, hidden]
    h = (first + sum(rescaled(linear(X[:, i], w(W, "altup_unembed", e=i - 1)), first) for i in range(1, n))) / np.float32(n)  # [T, hidden], the streams projected back and averaged
    return lm_head(norm(h, w(W, "final_norm")), W)


#.
