#: lightning
def lightning(x, W, b):
    # x: [T, hidden] -> [T, hidden]. Lightning attention: each head's key x value memory fades at a
    # fixed rate per head (stored as slope_rate) and takes k (x) v each token; no softmax, no scale.
    S = CONFIG["lightning"]
    T, H, D = x.shape[0], S["heads"], S["head_dim"]
    qkv = act(linear(x, w(W, "ssm_in", b)), S["act"]).reshape(T, H, 3 * D)  # qkv: [T, H, 3 D], each head's q | k | v
    q, k, v = qkv[..., :D], qkv[..., D : 2 * D], qkv[..., 2 * D :]  # each [T, H, D]
    rate = w(W, "light_slope", b).reshape(H)  # rate: [H], each head's fade s
    st = state_of(b)
    state = st.get("ssm", np.zeros((H, D, D), np.float32))  # state: [H, D, D], key x value: zeros before the first token
    # One token through the recurrence; a prompt chunk by chunk, as the executor runs it.
    out, st["ssm"] = light_loop(q, k, v, rate, state) if T == 1 else light_chunked(q, k, v, rate, 64, state)  # out: [T, H, D]
    o = out.reshape(T, H * D)  # o: [T, H D]
    o = o / np.sqrt((o * o).mean(-1, keepdims=True) + S["eps"]) * w(W, "ssm_norm", b)  # [T, H D], RMS over all heads
    g = 1 / (1 + np.exp(-linear(x, w(W, "ssm_z", b))))  # g: [T, H D], the output gate
    return linear(g * o, w(W, "ssm_out", b))  # [T, hidden]


#.
#: lightning
def light_loop(q, k, v, rate, state):
    # Lightning attention token after token. q, k, v: [T, H, D]; rate: [H]; state: [H, D, D],
    # key x value, the cache of this layer -> out: [T, H, D], and the state after the last token.
    # Each token, every head's key x value memory fades by exp(-s) and takes k (x) v; the head
    # reads q . memory.
    T, H, D = q.shape
    fade = np.exp(-rate)[:, None, None]  # fade: [H, 1, 1]
    out = np.empty((T, H, D), np.float32)  # out: [T, H, D]
    for t in range(T):
        state = fade * state + k[t][:, :, None] * v[t][:, None, :]  # [H, D, D]
        out[t] = (q[t][:, :, None] * state).sum(1)  # [H, D], q . S per head
    return out, state


#.
#: lightning
def light_chunked(q, k, v, rate, C, state):
    # light_loop's outputs computed in chunks of C tokens (transformers and anatomy's executor
    # run a prompt this way; equal to light_loop up to rounding). Within a chunk, token i reads
    # (q_i . k_j) exp(-s (i - j)) v_j for j <= i, plus q_i exp(-s (i + 1)) times the memory
    # carried in; the memory then moves to the chunk's end at once.
    T, H, D = q.shape  # state: [H, D, D], the memory at a chunk's start
    out = np.empty((T, H, D), np.float32)  # out: [T, H, D]
    s = rate[:, None, None]  # [H, 1, 1]
    for t0 in range(0, T, C):
        qc, kc, vc = (a[t0:t0 + C].transpose(1, 0, 2) for a in (q, k, v))  # each [H, c, D]
        i = np.arange(qc.shape[1])  # i: [c], positions within the chunk
        decay = np.where(i[:, None] >= i, np.exp(-s * np.maximum(i[:, None] - i, 0)), 0)  # [H, c, c], 0 above the diagonal
        out[t0:t0 + C] = ((qc @ kc.transpose(0, 2, 1) * decay) @ vc + (qc * np.exp(-s * (i[:, None] + 1))) @ state).transpose(1, 0, 2)
        state = np.exp(-s * len(i)) * state + (kc * np.exp(-s * (len(i) - 1 - i[:, None]))).transpose(0, 2, 1) @ vc  # [H, D, D]
    return out, state


#.
