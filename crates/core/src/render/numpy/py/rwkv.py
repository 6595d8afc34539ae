#: rwkv
def token_mix(x, W, b, key):
    # x: [T, C] -> [T, C]: each token blended, channel by channel, with the one before it (zeros
    # before the first; when decoding, the last of the previous call's, kept in the state) by the
    # stored mix mu
    st = state_of(b)
    prev = np.concatenate([st.get(key, np.zeros((1, x.shape[1]), np.float32)), x[:-1]])  # prev: [T, C]
    st[key] = x[-1:]  # [1, C]
    mu = w(W, key, b).reshape(-1)  # mu: [C]
    return x * mu + prev * (1 - mu)  # [T, C]


#.
#: rwkv
def time_mix(x, W, b):
    # x: [T, hidden] -> [T, hidden]: RWKV's time mixing, the WKV sums carried token after token
    k = linear(token_mix(x, W, b, "tm_mix_k"), w(W, "tm_key", b))  # k: [T, A]
    v = linear(token_mix(x, W, b, "tm_mix_v"), w(W, "tm_value", b))  # v: [T, A]
    r = 1 / (1 + np.exp(-linear(token_mix(x, W, b, "tm_mix_r"), w(W, "tm_receptance", b))))  # r: [T, A], the gate
    decay, u = -np.exp(w(W, "tm_decay", b)), w(W, "tm_first", b)  # [A] each
    T, A = k.shape
    st = state_of(b)
    # num, den: [A], the sums of exp(k) v and exp(k), scaled by exp(-top); top: [A], the largest
    # exponent so far (the state: empty sums before the first token)
    num, den, top = st.get("wkv", (np.zeros(A, np.float32), np.zeros(A, np.float32), np.full(A, -1e38, np.float32)))
    out = np.empty((T, A), np.float32)  # out: [T, A]
    for t in range(T):
        m = np.maximum(top, u + k[t])  # the current token weighted by exp(u + k)
        e1, e2 = np.exp(top - m), np.exp(u + k[t] - m)
        out[t] = (e1 * num + e2 * v[t]) / (e1 * den + e2)  # [A]
        m = np.maximum(top + decay, k[t])  # the sums fade by exp(decay), then take this token
        e1, e2 = np.exp(top + decay - m), np.exp(k[t] - m)
        num, den, top = e1 * num + e2 * v[t], e1 * den + e2, m
    st["wkv"] = num, den, top  # kept for the next call when decoding
    return linear(r * out, w(W, "tm_output", b))  # [T, hidden]


#.
#: rwkv
def channel_mix(x, W, b):
    # x: [T, hidden] -> [T, hidden]: RWKV's channel mixing, a squared-ReLU MLP gated by sigma(r)
    h = np.maximum(linear(token_mix(x, W, b, "cm_mix_k"), w(W, "up", b)), 0) ** 2  # h: [T, F]
    r = 1 / (1 + np.exp(-linear(token_mix(x, W, b, "cm_mix_r"), w(W, "cm_receptance", b))))  # r: [T, hidden]
    return r * linear(h, w(W, "down", b))  # [T, hidden]


#.
