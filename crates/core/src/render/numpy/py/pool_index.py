#: pool_index
POOL = None  # Kolibri 1.1: each query's pool of candidate keys [T, T], from the last layer that picked one


#.
#: pool_index
def e4m3(v):
    # v: positive float32 in [2^-9, 448] -> the nearest E4M3 value (3 mantissa bits; steps of 2^-9 below 2^-6), ties to even
    _, e = np.frexp(v)  # v = m 2^e, 0.5 <= m < 1
    q = np.ldexp(np.float32(1), np.maximum(e - 1, -6) - 3).astype(np.float32)  # the step at v's exponent
    return (np.round(v / q) * q).astype(np.float32)


#.
#: pool_index
def nvfp4(x):
    # x: [..., n], n a multiple of 16 -> x rounded to NVFP4 and back: each 16 values E2M1 magnitudes (0.5 steps below 2,
    # 1 below 4, 2 up to 6) times one E4M3 scale, max|x| / 6
    blocks = x.reshape(*x.shape[:-1], -1, 16).astype(np.float32)  # [..., n / 16, 16]
    scale = e4m3(np.clip(np.abs(blocks).max(-1, keepdims=True) / np.float32(6), np.float32(2.0**-9), np.float32(448)))  # [..., n / 16, 1]
    scaled = blocks / scale
    mag = np.minimum(np.abs(scaled), np.float32(6))
    step = np.where(mag < 2, np.float32(0.5), np.where(mag < 4, np.float32(1), np.float32(2)))
    return (np.copysign(np.round(mag / step) * step, scaled) * scale).reshape(x.shape).astype(np.float32)  # np.round: ties to even


#.
#: pool_index
def top_k_mask(scores, k):
    # scores: [n] -> bool [n]: the k highest finite scores, ties to the lower index
    order = np.lexsort((np.arange(len(scores)), -scores))  # best first, ties by index
    keep = np.zeros(len(scores), bool)
    keep[[j for j in order[:k] if np.isfinite(scores[j])]] = True
    return keep


#.
#: pool_index
def pool_mask(q, k0, b, P):
    # Kolibri 1.1's weightless indexer. q: [H, T, D], the layer's normed queries; k0: [T, D], the raw keys of K/V
    # head 0 -> [T, T], 0 where a query keeps a key, -inf elsewhere. A pool layer picks the pools (POOL) the
    # layers after it keep.
    global POOL
    T, D = k0.shape
    rq, rk = nvfp4(q[: P["heads"]]), nvfp4(k0)  # [heads, T, D], [T, D]: both rounded to NVFP4
    weight = np.float32(D**-0.5 / P["heads"])
    score = lambda keys: sum(np.maximum(rq[h] @ keys.T, 0) for h in range(P["heads"])) * weight  # [T, n]: ReLU'd, summed over the heads
    pos = np.arange(T)
    if b in P["pools"]:
        c = P["compression"]
        n = T // c  # complete blocks
        means = nvfp4(k0[: n * c].reshape(n, c, D).sum(1) / np.float32(c))  # [n, D]: each block's mean key, rounded
        scores = np.concatenate([score(means), np.zeros((T, 1), np.float32)], 1)  # [T, n + 1]: and the newest, incomplete block
        POOL = pos[None, :] <= pos[:, None]  # [T, T]: a query that sees at most P["pool"] keys keeps them all
        for t in range(T):
            L, j = t + 1, np.arange(n + 1)
            if L > P["pool"]:
                row = np.where(j < L // c, scores[t], 0)  # an incomplete newest block scores 0
                row = np.where(j >= -(-L // c), -np.inf, row)  # later blocks are not visible
                POOL[t] = np.repeat(top_k_mask(row, P["pool"] // c), c)[:T] & (pos < L)
    scores = score(rk)  # [T, T]
    keep = pos[None, :] <= pos[:, None]  # [T, T]: a query that sees at most top_k + sinks + local keys keeps them all
    for t in range(T):
        L = t + 1
        if L > P["top_k"] + P["local"] + P["sinks"]:
            candidates = POOL[t] & (pos >= P["sinks"]) & (pos < L - P["local"])
            chosen = top_k_mask(np.where(candidates, scores[t], -np.inf), P["top_k"])
            keep[t] = (chosen | (pos < P["sinks"]) | (pos >= L - P["local"])) & (pos < L)  # the best, the sinks, the latest
    return np.where(keep, 0, -np.inf).astype(np.float32)


#.
