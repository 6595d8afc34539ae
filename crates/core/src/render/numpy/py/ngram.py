#: ngram_ple
def ngram_rows(ids, W, b, P):
    # ids: [T] -> [T, heads]: the rows of layer b's table each token's n-grams hash to
    mult, sizes, offsets = (w(W, key, b).astype(np.int64) for key in ("ngram_mult", "ngram_sizes", "ngram_offsets"))
    H = len(sizes) // (P["ngram"] - 1)  # heads per n
    st = state_of(b)
    hist = st.get("ngram_ids", [P["eos"]] * (P["ngram"] - 1)) + [int(t) for t in ids]  # an end of sequence before the first token; decoding, the last ids of earlier calls
    st["ngram_ids"] = hist[len(ids):]  # the last n - 1
    rows = []
    for p in range(P["ngram"] - 1, len(hist)):
        toks, crossed = [hist[p]], False
        for s in range(1, P["ngram"]):
            crossed = crossed or (s > 1 and hist[p + 1 - s] == P["eos"])  # an end of sequence between: the n-gram stops there
            toks.append(P["eos"] if crossed else hist[p - s])
        row = []
        for n in range(2, P["ngram"] + 1):
            mixed = 0
            for s in range(n):
                mixed ^= toks[s] * int(mult[s])  # the n tokens, each times its odd multiplier, XORed
            row += [mixed % int(size) + int(off) for size, off in zip(sizes[(n - 2) * H : (n - 1) * H], offsets[(n - 2) * H : (n - 1) * H])]
        rows.append(row)
    return np.array(rows)  # [T, heads]


#.
#: ngram_ple
def ngram_ple(X, ids, W, b):
    # Qwen4-Exp's hashed n-gram embeddings in layer b. X: [T, n, hidden], the streams -> what
    # joins them, [T, n, hidden]
    P = CONFIG["ngram_ple"]
    T, n, d = X.shape
    shards = P["shards"][P["layers"].index(b)]
    table = np.concatenate([w(W, "ngram_table", b, e=i) for i in range(shards)])  # the layer's table, saved in shards
    e = table[ngram_rows(ids, W, b, P)].reshape(T, -1)  # e: [T, width], each head's row

    def grouped(y, key):  # y: [T, n hidden], each stream RMS-normed, all features scaled by (1 + w)
        y = y.reshape(T, n, d)
        return (y / np.sqrt((y * y).mean(-1, keepdims=True) + CONFIG["eps"])).reshape(T, -1) * (1 + w(W, key, b))

    v = linear(e, w(W, "ngram_value", b))  # v: [T, hidden], one value
    k = grouped(linear(e, w(W, "ngram_key", b)), "ngram_norm_key").reshape(T, n, d)  # a key per stream
    q = grouped(X.reshape(T, -1), "ngram_norm_query").reshape(T, n, d)  # each stream, normed
    g = (k * q).sum(-1) / np.float32(math.sqrt(d))  # g: [T, n]
    g = np.sign(g) * np.sqrt(np.maximum(np.abs(g), np.float32(1e-6)))  # a signed square root
    u = (1 / (1 + np.exp(-g)))[:, :, None] * v[:, None, :]  # u: [T, n, hidden], the value gated per stream
    K, D = P["kernel"], P["ngram"]  # taps, and the dilation between them
    st = state_of(b)
    un = np.concatenate([st.get("ngram_conv", np.zeros(((K - 1) * D, n * d), np.float32)), grouped(u.reshape(T, -1), "ngram_norm_conv")])  # zeros before the first token; decoding, the inputs of earlier calls
    st["ngram_conv"] = un[T:]  # [(K - 1) D, n hidden]
    wc = w(W, "ngram_conv", b)[:, 0, :]  # wc: [n hidden, K]
    c = sum(un[j * D : j * D + T] * wc[:, j] for j in range(K))  # c: [T, n hidden], each channel over K positions D apart
    return (u.reshape(T, -1) + c / (1 + np.exp(-c))).reshape(T, n, d)  # the gated values plus their convolution, SiLU'd


#.
