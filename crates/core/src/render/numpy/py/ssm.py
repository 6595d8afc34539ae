#: causal_conv
def causal_conv(u, W, b, bias, keys=("ssm_conv",)):
    # u: [T, C] -> [T, C]: the depthwise convolution the recurrent mixers start with, each
    # channel over its last K positions, zeros before the first token (its filters stored in
    # one tensor, or in several side by side). Its state: the last K - 1 inputs, kept for the
    # next call when decoding.
    wc = np.concatenate([w(W, key, b) for key in keys])[:, 0, :]  # wc: [C, K], one filter per channel
    T, K = u.shape[0], wc.shape[1]
    st = state_of(b)
    past = np.concatenate([st.get(keys[0], np.zeros((K - 1, u.shape[1]), np.float32)), u])  # [K - 1 + T, C]
    st[keys[0]] = past[T:]  # [K - 1, C], the conv state
    u = sum(past[j:j + T] * wc[:, j] for j in range(K))  # u: [T, C]
    return u + w(W, keys[0], b, bias=True) if bias else u  # [T, C]


#.
#: mamba2
def ssd_loop(xs, dt, A, B, Cr, D, h):
    # Mamba2's scan as its recurrence. xs: [T, H, P]; dt: [T, H]; A, D: [H]; B, Cr: [T, H, N]
    # (each head its group's); h: [H, P, N], the state carried in -> y: [T, H, P], and the state
    # after the last token. Each token, every head's state h [P, N] decays by exp(dt A) and takes
    # in dt x (outer) B; the head reads h . C, plus D x.
    T, H, P = xs.shape
    y = np.empty((T, H, P), np.float32)  # y: [T, H, P]
    for t in range(T):
        h = np.exp(dt[t] * A)[:, None, None] * h + (dt[t][:, None] * xs[t])[:, :, None] * B[t][:, None, :]  # h: [H, P, N]
        y[t] = (h * Cr[t][:, None, :]).sum(-1) + D[:, None] * xs[t]  # y[t]: [H, P]
    return y, h


#.
#: mamba2
def ssd_chunked(xs, dt, A, B, Cr, D, Q, h):
    # ssd_loop's sums grouped in chunks of Q tokens (the SSD form: transformers and anatomy's
    # executor compute a prompt this way; equal to ssd_loop up to rounding). Within a chunk, with
    # L the running sum of dt A from its start: y_t = sum over s <= t of exp(L_t - L_s) (C_t . B_s)
    # dt_s x_s, plus the state carried in, exp(L_t) h . C_t; the state then moves to the chunk's
    # end at once.
    T, H, P = xs.shape  # h: [H, P, N], the state at a chunk's start
    y = np.empty((T, H, P), np.float32)  # y: [T, H, P]
    for s0 in range(0, T, Q):
        x, d, b, c = xs[s0:s0 + Q], dt[s0:s0 + Q], B[s0:s0 + Q], Cr[s0:s0 + Q]  # one chunk of q tokens
        L = np.cumsum(d * A, axis=0)  # L: [q, H]
        q = len(L)
        seg = np.where(np.tril(np.ones((q, q), bool))[:, :, None], L[:, None, :] - L[None, :, :], -np.inf)  # [q, q, H]: from s to t, s <= t
        M = np.einsum("thn,shn->tsh", c, b) * np.exp(seg) * d[None, :, :]  # M: [q, q, H]
        y[s0:s0 + Q] = np.einsum("tsh,shp->thp", M, x) + np.exp(L)[:, :, None] * np.einsum("hpn,thn->thp", h, c) + D[None, :, None] * x  # [q, H, P]
        h = np.exp(L[-1])[:, None, None] * h + np.einsum("sh,shp,shn->hpn", np.exp(L[-1] - L) * d, x, b)  # [H, P, N]
    return y, h


#.
#: mamba2
def mamba2(x, W, b):
    # x: [T, hidden] -> [T, hidden]: Mamba2's mixer, its scan through a state of fixed size
    S = CONFIG["ssm"]
    T, H, P, N, G = x.shape[0], S["heads"], S["head_dim"], S["state"], S["groups"]
    I, CH = H * P, H * P + 2 * G * N  # the width of x, z and y; the convolved channels (x, B, C)
    bias = lambda key: w(W, key, b, bias=True) if S["bias"] else None
    p = linear(x, w(W, "ssm_in", b), bias("ssm_in"))  # p: [T, I + CH + H]
#: ssm_part_mults
    p = p * np.repeat(np.float32(S["part_mults"]), [I, I, G * N, G * N, H])  # [T, I + CH + H], the parts z, x, B, C, dt scaled (muP)
#.
    z, u, dt = p[:, :I], p[:, I:I + CH], p[:, I + CH:]  # z: [T, I], u: [T, CH], dt: [T, H]
    u = causal_conv(u, W, b, S["conv_bias"])  # u: [T, CH]
    u = u / (1 + np.exp(-u))  # u: [T, CH], SiLU
    xs = u[:, :I].reshape(T, H, P)  # xs: [T, H, P], the scan's input
    B = u[:, I:I + G * N].reshape(T, G, N)  # B: [T, G, N], what each position writes
    Cr = u[:, I + G * N:].reshape(T, G, N)  # Cr: [T, G, N], what each position reads
    dt = np.maximum(np.logaddexp(0, dt + w(W, "ssm_dt_bias", b)), S["dt_floor"])  # dt: [T, H], softplus: each head's step, at least the floor
    A = -np.exp(w(W, "ssm_a_log", b))  # A: [H], negative decay rates
    D = w(W, "ssm_d", b)  # D: [H], the input's skip weight
    g = np.arange(H) // (H // G)  # g: [H], each head's group
    st = state_of(b)
    h = st.get("ssm", np.zeros((H, P, N), np.float32))  # h: [H, P, N], the state carried in: zeros before the first token
    # One token through the recurrence; a prompt chunk by chunk, as the executor runs it.
    y, st["ssm"] = ssd_loop(xs, dt, A, B[:, g], Cr[:, g], D, h) if T == 1 else ssd_chunked(xs, dt, A, B[:, g], Cr[:, g], D, 64, h)  # y: [T, H, P]
#: !ssm_norm_before
    y = y.reshape(T, I) * (z / (1 + np.exp(-z)))  # y: [T, I], gated by SiLU(z)
#: !ssm_plain
    y = y.reshape(T, G, I // G)  # [T, G, I / G]
#.
#.
#: ssm_norm_before
    y = y.reshape(T, G, I // G)  # [T, G, I / G], normed before the gate
#.
#: !ssm_plain
    y = (y / np.sqrt((y * y).mean(-1, keepdims=True) + S["eps"])).reshape(T, I)  # y: [T, I], RMS per group
    y = y * w(W, "ssm_norm", b)  # [T, I]
#.
#: ssm_norm_before
    y = y * (z / (1 + np.exp(-z)))  # y: [T, I], gated by SiLU(z)
#.
    return linear(y, w(W, "ssm_out", b), bias("ssm_out"))  # [T, hidden]


#.
#: mamba
def mamba(x, W, b):
    # x: [T, hidden] -> [T, hidden]: Mamba's selective scan, token after token through a state
    # per channel
    S = CONFIG["s6"]
    T, I, N, R = x.shape[0], S["inner"], S["state"], S["dt_rank"]
    bias = lambda key: w(W, key, b, bias=True) if S["bias"] else None
    p = linear(x, w(W, "ssm_in", b), bias("ssm_in"))  # p: [T, 2I]
#: !s6_interleaved
    u, z = p[:, :I], p[:, I:]  # u: [T, I], the scan's input; z: [T, I], the gate
#.
#: s6_interleaved
    u, z = p[:, 0::2], p[:, 1::2]  # u: [T, I], the scan's input; z: [T, I], the gate (alternating rows)
#.
    u = causal_conv(u, W, b, S["conv_bias"])  # u: [T, I]
    xs = u / (1 + np.exp(-u))  # xs: [T, I], SiLU
#: !s6_heads
    sel = linear(xs, w(W, "ssm_x", b))  # sel: [T, R + 2N]
    def rms(v, key):  # the step's, B's and C's own RMS norm, with its weight where stored
        if not S["bcdt_norm"]:
            return v
        v = v / np.sqrt((v * v).mean(-1, keepdims=True) + S["bcdt_norm"])
        return v * w(W, key, b) if key in NAMES else v
    step, B, Cr = rms(sel[:, :R], "ssm_dt_norm"), rms(sel[:, R:R + N], "ssm_b_norm"), rms(sel[:, R + N:], "ssm_c_norm")  # [T, R], [T, N], [T, N]
    dt = np.logaddexp(0, linear(step, w(W, "ssm_dt", b), w(W, "ssm_dt", b, bias=True)))  # dt: [T, I], softplus
    A = -np.exp(w(W, "ssm_a_log", b))  # A: [I, N], negative decay rates
    D = w(W, "ssm_d", b)  # D: [I], the input's skip weight
    h = state_of(b).get("ssm", np.zeros((I, N), np.float32))  # h: [I, N], the state, carried token to token (zeros before the first)
    y = np.empty((T, I), np.float32)  # y: [T, I]
    for t in range(T):
        h = np.exp(dt[t][:, None] * A) * h + (dt[t] * xs[t])[:, None] * B[t][None, :]  # h: [I, N]
        y[t] = h @ Cr[t] + D * xs[t]  # y[t]: [I]
#.
#: s6_heads
    H, P = S["heads"], I // S["heads"]  # heads, each P channels with its own step, B and C
    B, Cr = np.empty((T, I, N), np.float32), np.empty((T, I, N), np.float32)  # per channel, its head's
    dt = np.empty((T, I), np.float32)  # dt: [T, I]
    for hd in range(H):
        ch = slice(hd * P, (hd + 1) * P)  # head hd's channels
        sel = xs[:, ch] @ w(W, "ssm_x", b)[hd].T  # sel: [T, R + 2N]
        B[:, ch], Cr[:, ch] = sel[:, None, R:R + N], sel[:, None, R + N:]  # [T, P, N] each
        dt[:, ch] = np.logaddexp(0, sel[:, :R] @ w(W, "ssm_dt", b)[hd].T + w(W, "ssm_dt", b, bias=True)[hd])  # [T, P], softplus
    A = -np.exp(w(W, "ssm_a_log", b)).reshape(I, N)  # A: [I, N], negative decay rates
    D = w(W, "ssm_d", b).reshape(I)  # D: [I], the input's skip weight
    h = state_of(b).get("ssm", np.zeros((I, N), np.float32))  # h: [I, N], the state, carried token to token (zeros before the first)
    y = np.empty((T, I), np.float32)  # y: [T, I]
    for t in range(T):
        h = np.exp(dt[t][:, None] * A) * h + (dt[t] * xs[t])[:, None] * B[t]  # h: [I, N]
        y[t] = (h * Cr[t]).sum(-1) + D * xs[t]  # y[t]: [I]
#.
    state_of(b)["ssm"] = h  # [I, N], kept for the next call when decoding
    y = y * (z / (1 + np.exp(-z)))  # y: [T, I], gated by SiLU(z)
    return linear(y, w(W, "ssm_out", b), bias("ssm_out"))  # [T, hidden]


#.
#: short_conv
def short_conv(x, W, b):
    # x: [T, hidden] -> [T, hidden]: LFM2's short gated convolution
    S = CONFIG["short_conv"]
    D = CONFIG["hidden"]
    bias = lambda key: w(W, key, b, bias=True) if S["bias"] else None
    p = linear(x, w(W, "ssm_in", b), bias("ssm_in"))  # p: [T, 3 hidden]
    B, Cg, xs = p[:, :D], p[:, D:2 * D], p[:, 2 * D:]  # each [T, hidden]
    u = B * xs  # u: [T, hidden], gated before the convolution
    u = causal_conv(u, W, b, S["bias"])  # u: [T, hidden]
    return linear(Cg * u, w(W, "ssm_out", b), bias("ssm_out"))  # [T, hidden], gated by C, projected back


#.
