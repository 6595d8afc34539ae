#: cca
def cca(x, W, b):
    # ZAYA's compressed convolutional attention. x: [T, hidden] -> q: [T, H D], k: [T, KV D], v: [T, KV D]
    C, Z = CONFIG, CONFIG["cca"]
    T, H, KV, D = x.shape[0], C["heads"], C["kv_heads"], C["head_dim"]
    G, K0, K1 = H // KV, Z["depthwise"], Z["grouped"]
    bias = lambda key: w(W, key, b, bias=True) if C["qkv_bias"] else None
    q, k = linear(x, w(W, "q", b), bias("q")), linear(x, w(W, "k", b), bias("k"))  # q: [T, H D], k: [T, KV D]
    q_res = (q.reshape(T, H, D) + np.repeat(k.reshape(T, KV, D), G, axis=1)) / 2  # [T, H, D], each query head with its K/V head's key
    k_res = q_res.reshape(T, KV, G, D).mean(2)  # [T, KV, D], over each K/V head's query heads
    reach = (K0 - 1) + (K1 - 1)  # the inputs both convolutions look back over
    u = np.concatenate([np.zeros((reach, (H + KV) * D), np.float32), np.concatenate([q, k], -1)])  # u: [reach + T, (H + KV) D], zeros before the first token
    w0 = w(W, "cca_dw", b)[:, 0].T  # [K0, (H + KV) D]: each channel's taps
    y = np.stack([(u[p : p + K0] * w0).sum(0) for p in range(T + K1 - 1)]) + w(W, "cca_dw", b, bias=True)  # y: [T + K1 - 1, (H + KV) D], depthwise
    w1 = w(W, "cca_gr", b).reshape(H + KV, D, D, K1)  # [head, out channel, in channel, tap]
    yh = y.reshape(-1, H + KV, D)  # [T + K1 - 1, head, channel]
    conv = np.stack([np.einsum("jhc,hocj->ho", yh[p : p + K1], w1) for p in range(T)]).reshape(T, -1) + w(W, "cca_gr", b, bias=True)  # [T, (H + KV) D], within each head
    q = conv[:, : H * D].reshape(T, H, D) + q_res  # q: [T, H, D]
    k = conv[:, H * D :].reshape(T, KV, D) + k_res  # k: [T, KV, D]
    vd = linear(x, w(W, "cca_v_delayed", b), bias("cca_v_delayed"))  # vd: [T, KV D / 2], read by the token after
    first = bias("cca_v_delayed") if C["qkv_bias"] else np.zeros(vd.shape[1], np.float32)  # what the first token reads: the projection of zeros
    v = np.concatenate([linear(x, w(W, "cca_v_current", b), bias("cca_v_current")), np.concatenate([first[None], vd[:-1]])], -1)  # v: [T, KV D]
    unit = lambda t: t * np.float32(math.sqrt(D)) / np.maximum(np.sqrt((t * t).sum(-1, keepdims=True)), np.finfo(np.float32).eps)  # each head to length sqrt(D)
    return unit(q).reshape(T, H * D), (unit(k) * w(W, "cca_temp", b)[None, :, None]).reshape(T, KV * D), v


#.
