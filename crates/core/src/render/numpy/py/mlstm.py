#: mlstm
def mlstm(x, W, b):
    # x: [T, hidden] -> [T, hidden]: xLSTM's mLSTM, through each head's matrix memory C,
    # normalizer n and stabilizer m
    S = CONFIG["mlstm"]
    T, H = x.shape[0], S["heads"]
    DK, DV = S["qk_dim"] // H, S["v_dim"] // H  # a head's key and value widths
    cap = lambda v: S["gate_cap"] * np.tanh(v / S["gate_cap"])  # soft cap
#: !mlstm_fused
#: !mlstm_bias
    q = linear(x, w(W, "ssm_q", b)).reshape(T, H, DK) / np.float32(math.sqrt(DK))  # [T, H, DK], scaled
    k = linear(x, w(W, "ssm_k", b)).reshape(T, H, DK)  # [T, H, DK]
    v = linear(x, w(W, "ssm_v", b)).reshape(T, H, DV)  # [T, H, DV]
    o = linear(x, w(W, "ssm_z", b))  # [T, H DV], the output gate
#.
#: mlstm_bias
    q = linear(x, w(W, "ssm_q", b), w(W, "ssm_q", b, bias=True)).reshape(T, H, DK) / np.float32(math.sqrt(DK))  # [T, H, DK], scaled
    k = linear(x, w(W, "ssm_k", b), w(W, "ssm_k", b, bias=True)).reshape(T, H, DK)  # [T, H, DK]
    v = linear(x, w(W, "ssm_v", b), w(W, "ssm_v", b, bias=True)).reshape(T, H, DV)  # [T, H, DV]
    o = linear(x, w(W, "ssm_z", b), w(W, "ssm_z", b, bias=True))  # [T, H DV], the output gate
#.
    i = cap(linear(x, w(W, "ssm_beta", b), w(W, "ssm_beta", b, bias=True)))  # [T, H], input gate
    f = cap(linear(x, w(W, "ssm_alpha", b), w(W, "ssm_alpha", b, bias=True)))  # [T, H], forget gate
#.
#: mlstm_fused
    QK, V = S["qk_dim"], S["v_dim"]
#: !mlstm_bias
    p = linear(x, w(W, "ssm_in", b))  # p: [T, 2 QK + 2 V], q | k | v | o stored as one projection
#.
#: mlstm_bias
    p = linear(x, w(W, "ssm_in", b), w(W, "ssm_in", b, bias=True))  # p: [T, 2 QK + 2 V], q | k | v | o stored as one projection
#.
    q = p[:, :QK].reshape(T, H, DK) / np.float32(math.sqrt(DK))  # [T, H, DK], scaled
    k = p[:, QK : 2 * QK].reshape(T, H, DK)  # [T, H, DK]
    v = p[:, 2 * QK : 2 * QK + V].reshape(T, H, DV)  # [T, H, DV]
    o = p[:, 2 * QK + V :]  # [T, H DV], the output gate
    g = cap(linear(x, w(W, "ssm_ba", b), w(W, "ssm_ba", b, bias=True)))  # g: [T, 2 H], the input gates, then the forget gates
    i, f = g[:, :H], g[:, H:]  # [T, H] each
#.
    st = state_of(b)
    carried = st.get("ssm", (np.zeros((H, DK, DV)), np.zeros((H, DK)), np.zeros(H)))  # memory, normalizer, stabilizer: zeros before the first token
    # One token through the recurrence; a prompt chunk by chunk, as the executor runs it.
    out, st["ssm"] = mlstm_loop(q, k, v, i, f, S["eps"], carried) if T == 1 else mlstm_chunked(q, k, v, i, f, S["eps"], 64, carried)  # out: [T, H, DV]
    mean = out.mean(-1, keepdims=True)
    var = ((out - mean) ** 2).mean(-1, keepdims=True)
#: !mlstm_bias
    hn = ((out - mean) / np.sqrt(var + S["norm_eps"])).reshape(T, -1) * w(W, "ssm_norm", b)  # [T, H DV], LayerNorm per head
#.
#: mlstm_bias
    hn = ((out - mean) / np.sqrt(var + S["norm_eps"])).reshape(T, -1) * w(W, "ssm_norm", b) + w(W, "ssm_norm", b, bias=True)  # [T, H DV], LayerNorm per head, shifted
#.
#: !mlstm_bias
    return linear(hn / (1 + np.exp(-o)), w(W, "ssm_out", b))  # [T, hidden], gated by sigmoid(o)
#.
#: mlstm_bias
    return linear(hn / (1 + np.exp(-o)), w(W, "ssm_out", b), w(W, "ssm_out", b, bias=True))  # [T, hidden], gated by sigmoid(o)
#.


#.
#: mlstm
def mlstm_loop(q, k, v, i, f, eps, state):
    # The mLSTM token after token. q (scaled), k: [T, H, DK]; v: [T, H, DV]; i, f (the gates'
    # pre-activations): [T, H]; state: (C, n, m) carried in -> [T, H, DV], and the state after
    # the last token. Each token, every head's memory C and normalizer n fade by sigmoid(f) and
    # take exp(i) k (x) v and exp(i) k, both divided by exp(m), m the running maximum of the log
    # gates (the stabilizer: every exp stays at most 1).
    T, H, DK = k.shape
    C, n, m = state  # each head's memory [H, DK, DV], normalizer [H, DK] and stabilizer [H], in float64
    out = np.empty(v.shape, np.float32)  # out: [T, H, DV]
    for t in range(T):
        f_log = -np.logaddexp(0, -f[t].astype(np.float64))  # [H], log sigmoid(f)
        m_new = np.maximum(f_log + m, i[t])  # [H]
        fa, ia = np.exp(f_log + m - m_new), np.exp(i[t] - m_new)  # [H] each, both at most 1
        C = fa[:, None, None] * C + ia[:, None, None] * k[t][:, :, None] * v[t][:, None, :]  # [H, DK, DV]
        n = fa[:, None] * n + ia[:, None] * k[t]  # [H, DK]
        m = m_new
        num = np.einsum("hk,hkv->hv", q[t], C)  # [H, DV]
        den = np.maximum(np.abs((q[t] * n).sum(-1)), np.exp(-m)) + eps  # [H]
        out[t] = num / den[:, None]
    return out, (C, n, m)


#.
#: mlstm
def mlstm_chunked(q, k, v, i, f, eps, Q, state):
    # mlstm_loop's outputs computed in chunks of Q tokens (anatomy's executor runs a prompt this
    # way; equal to mlstm_loop up to rounding). Within a chunk, with F the running sum of
    # log sigmoid(f) and m0 the stabilizer carried in, the loop's stabilizer is m_t = F_t +
    # max(m0, max over s <= t of (i_s - F_s)); token t weighs token s by D_ts = exp(i_s + F_t -
    # F_s - m_t) and the memory carried in by exp(F_t + m0 - m_t), all at most 1; the state then
    # moves to the chunk's end at once.
    T, H, DK = k.shape
    C, n, m = state  # the state at a chunk's start
    out = np.empty(v.shape, np.float32)  # out: [T, H, DV]
    for t0 in range(0, T, Q):
        qc, kc, vc = (a[t0:t0 + Q].transpose(1, 0, 2).astype(np.float64) for a in (q, k, v))  # [H, c, ·]
        ic = i[t0:t0 + Q].T.astype(np.float64)  # [H, c]
        F = np.cumsum(-np.logaddexp(0, -f[t0:t0 + Q].T.astype(np.float64)), axis=1)  # [H, c]
        mt = F + np.maximum(m[:, None], np.maximum.accumulate(ic - F, axis=1))  # [H, c], the loop's stabilizers
        c = F.shape[1]
        D = np.exp(np.where(np.tril(np.ones((c, c), bool)), ic[:, None, :] + F[:, :, None] - F[:, None, :] - mt[:, :, None], -np.inf))  # [H, c, c]
        carry = np.exp(F + m[:, None] - mt)  # [H, c]
        S = qc @ kc.transpose(0, 2, 1) * D  # [H, c, c]
        num = S @ vc + carry[:, :, None] * (qc @ C)  # [H, c, DV]
        qn = S.sum(-1) + carry * (qc @ n[:, :, None])[..., 0]  # [H, c], q . n
        out[t0:t0 + Q] = (num / (np.maximum(np.abs(qn), np.exp(-mt)) + eps)[:, :, None]).transpose(1, 0, 2)
        C = carry[:, -1, None, None] * C + (kc * D[:, -1, :, None]).transpose(0, 2, 1) @ vc  # [H, DK, DV]
        n = carry[:, -1, None] * n + (D[:, -1, :, None] * kc).sum(1)  # [H, DK]
        m = mt[:, -1]  # [H]
    return out, (C, n, m)


#.
