#: qsa
def qsa_mask(x, W, b, span, I):
    # Qwen4-Exp's QSA indexer: which keys every query head attends to. x: [T, hidden] -> [T, T]
    # additive mask, 0 in the chosen blocks and after the query's last complete block
    T, IH, ID, R = x.shape[0], I["heads"], I["head_dim"], I["ratio"]
    qk = linear(x, w(W, "qsa_qk", b))  # qk: [T, (IH + 1) ID], the index queries, then one raw key per token
    q = norm(qk[:, : IH * ID].reshape(T, IH, ID).transpose(1, 0, 2), w(W, "qsa_q_norm", b))  # q: [IH, T, ID], each head normed
    cos, sin = rope_tables(T, span)  # the attention's tables: the first rot_dim dims turn
    q = apply_rope(q, cos, sin)  # rotated at each query's position
    nb = T // R  # the complete blocks of R tokens
    k = qk[: nb * R, IH * ID :].reshape(nb, R, ID).mean(1)  # k: [nb, ID], each block's raw keys averaged
    k = apply_rope(norm(k, w(W, "qsa_k_norm", b))[None], cos[::R][:nb], sin[::R][:nb])[0]  # normed, rotated at the block's first position
    scores = np.maximum(q @ k.T, 0).sum(0) / np.float32(math.sqrt(ID))  # scores: [T, nb], ReLU'd, summed over the heads
    keep = np.zeros((T, T), dtype=bool)
    for t in range(T):
        seen = (t + 1) // R  # the complete blocks query t sees
        for j in np.argsort(-scores[t, :seen], kind="stable")[: I["budget"] // R]:
            keep[t, j * R : (j + 1) * R] = True  # the best blocks, ties to the earlier
        keep[t, seen * R : t + 1] = True  # and the tokens after the last complete block
    return np.where(keep, 0.0, -np.inf).astype(np.float32)  # [T, T]


#.
