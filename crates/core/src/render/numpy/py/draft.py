#: draft
def draft_mask(span, Tk):
    # -> [1, Tk] additive mask of the step's query over the target's keys: every key in a full
    # layer; in a sliding layer the last window + 1, as transformers' bidirectional window
    # (|q - k| <= window) reads them once turned to look back
    j = np.arange(Tk)
    ok = (Tk - 1 - j) <= span[1] if span[0] == "sliding" else np.ones(Tk, bool)
    return np.where(ok, 0.0, -np.inf).astype(np.float32)[None, :]


#: draft_centroids
def clustered(z, head, W):
    # z: [T, hidden], head: [vocab, hidden] -> logits [T, vocab]: the centroids pick the best
    # clusters; their tokens are scored by the head's rows, every other token gets the smallest
    # of those scores minus one
    D = CONFIG["draft"]["centroids"]
    order = w(W, "token_ordering").astype(np.int64).reshape(D["count"], -1)  # [clusters, tokens each]
    out = np.empty((z.shape[0], head.shape[0]), np.float32)
    for t in range(z.shape[0]):
        c = linear(z[t : t + 1], w(W, "centroids"))[0]  # c: [clusters]
        best = np.argsort(-c, kind="stable")[: D["top_k"]]  # the top_k clusters
        tokens = order[best].reshape(-1)  # [top_k * tokens each]
        s = head[tokens] @ z[t]  # their tokens' logits
        out[t] = s.min() - 1
        out[t, tokens] = s
    return out
#.
#.
