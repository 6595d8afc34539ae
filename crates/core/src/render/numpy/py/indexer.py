#: indexer
def index_keys(x, cq, W, b, span):
    # DeepSeek sparse attention's indexer: which keys each query may attend to.
    # x: [T, hidden], cq: [T, q_lora] -> [T, T] additive mask, 0 at each query's top-k keys
    I = CONFIG["mla"]["indexer"]
#: indexer_lora
    if CONFIG["mla"]["lora_scales"]:
        cq = cq * np.float32(CONFIG["mla"]["lora_scales"][0])  # [T, q_lora], scaled as the attention's query is
#.
    T, IH, ID = x.shape[0], I["heads"], I["head_dim"]
#: !indexer_rope_last
    cos, sin = rope_tables(T, span)  # cos, sin: [T, rope]: the first rope dims of each head rotate
    rotate = lambda t: apply_rope(t, cos, sin, I["interleaved"])  # paired as the indexer pairs them
#.
#: indexer_rope_last
    cos, sin = rope_tables(T, span)  # cos, sin: [T, rope]: the last rope dims of each head rotate
    pass_ = ID - cos.shape[-1]  # the dims before them pass as they are
    rotate = lambda t: np.concatenate([t[..., :pass_], apply_rope(t[..., pass_:], cos, sin, I["interleaved"])], -1)
#.
    q = rotate(linear(cq, w(W, "index_q", b)).reshape(T, IH, ID).transpose(1, 0, 2))  # q: [IH, T, ID]
    k = linear(x, w(W, "index_k", b))  # k: [T, ID], one key per token for all indexer heads
    mu, var = k.mean(-1, keepdims=True), k.var(-1, keepdims=True)
    k = rotate((k - mu) / np.sqrt(var + I["key_eps"]) * w(W, "index_k_norm", b) + w(W, "index_k_norm", b, bias=True))  # LayerNorm, then RoPE
    weights = linear(x, w(W, "index_weights", b)) / np.sqrt(IH)  # weights: [T, IH]
    dots = np.maximum(q @ k.T / np.sqrt(ID), 0)  # dots: [IH, T, T], ReLU'd
    scores = np.einsum("th,hts->ts", weights, dots) + attention_mask(span, T)  # scores: [T, T]
    # Each query's top-k keys: the best first, equal scores to the later key.
    order = np.argsort(-scores[:, ::-1], axis=-1, kind="stable")[:, : I["top_k"]]  # [T, k], reversed positions
    keep = np.zeros((T, T), dtype=bool)
    np.put_along_axis(keep, T - 1 - order, True, -1)
    return np.where(keep, 0.0, -np.inf).astype(np.float32)  # [T, T]


#.
#: indexer_reuse
CHOSEN = {}  # the last indexer's choice, for the layers that have none of their own


#.
#: block_index
def block_mask(x, W, b, span, I):
    # MiniMax-M3's lightning indexer: which blocks of keys each index head's group of query heads
    # attends to. x: [T, hidden] -> [IH, T, T] additive mask, 0 in the chosen blocks
    T, IH, ID, B = x.shape[0], I["heads"], I["head_dim"], I["block"]
    q = linear(x, w(W, "block_q", b)).reshape(T, IH, ID).transpose(1, 0, 2)  # q: [IH, T, ID]
    q = norm(q, w(W, "block_q_norm", b))  # q: [IH, T, ID], each index head's query normed
    k = norm(linear(x, w(W, "block_k", b)), w(W, "block_k_norm", b))[None]  # k: [1, T, ID], one key per token
    cos, sin = rope_tables(T, span)  # the attention's tables: the first rot_dim dims of each head turn
    q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
    scores = q @ k[0].T + attention_mask(span, T)  # scores: [IH, T, T], unscaled, -inf past each query
    nb = -(-T // B)  # blocks of B keys, the last possibly short
    pad = np.full((IH, T, nb * B - T), -np.inf, np.float32)
    blocks = np.concatenate([scores, pad], -1).reshape(IH, T, nb, B).max(-1)  # blocks: [IH, T, nb], each block's best score
    for t in range(T):
        for back in range(I["local"]):
            blocks[:, t, max(t // B - back, 0)] = np.inf  # the query's latest blocks always stay
    keep = np.zeros((IH, T, nb), dtype=bool)
    for h in range(IH):
        for t in range(T):
            best = [j for j in np.argsort(-blocks[h, t], kind="stable") if blocks[h, t, j] > -np.inf]  # best first
            keep[h, t, best[: I["top_k"]]] = True
    keep = np.repeat(keep, B, axis=-1)[..., :T]  # keep: [IH, T, T], by key
    return np.where(keep, 0.0, -np.inf).astype(np.float32)  # [IH, T, T]


#.
