#: delta
def delta_loop(q, k, v, g, beta, s):
    # The gated delta rule token after token. q, k: [T, VH, DK] (each value head its key head's);
    # v: [T, VH, DV]; g (log decay): [T, VH], or [T, VH, DK] for a decay per key channel; beta:
    # [T, VH]; s: [VH, DK, DV], the memory carried in -> o: [T, VH, DV], and the memory after the
    # last token. Each token, every head's memory s [DK, DV] decays by exp(g) (each key channel's
    # row by its own), then moves what it recalls for k toward v by beta; the head reads s with q.
    T, VH, DK = k.shape
    g = g.reshape(T, VH, -1)  # g: [T, VH, 1 or DK]
    o = np.empty(v.shape, np.float32)  # o: [T, VH, DV]
    for t in range(T):
        s = s * np.exp(g[t])[:, :, None]  # [VH, DK, DV], decayed
        delta = (v[t] - np.einsum("hkv,hk->hv", s, k[t])) * beta[t][:, None]  # delta: [VH, DV], the value minus what k recalls
        s = s + k[t][:, :, None] * delta[:, None, :]  # s: [VH, DK, DV]
        o[t] = np.einsum("hkv,hk->hv", s, q[t])  # o[t]: [VH, DV], read with q
    return o, s


#.
#: delta
def delta_chunked(q, k, v, g, beta, C, s):
    # delta_loop's memory and outputs, computed in chunks of C tokens (the WY form: transformers
    # and anatomy's executor compute a prompt this way; equal to delta_loop up to rounding).
    # Within a chunk, with c the running sum of g and D_ij = exp(c_i - c_j) for j <= i (per key
    # channel where g is): the chunk's corrections U solve (I + strictly-lower(beta_i k_i . (D_ij
    # k_j))) U = beta v - (beta k exp(c)) s, s the memory carried in; each output is (q exp(c)) s
    # + (q_i . (D_ij k_j)) U; the memory then moves to the chunk's end at once.
    T, VH, DK = k.shape
    g = np.broadcast_to(g.reshape(T, VH, -1), (T, VH, DK))  # g: [T, VH, DK], a head's decay in each of its channels
    # s: [VH, DK, DV], the memory at a chunk's start
    o = np.empty(v.shape, np.float32)  # o: [T, VH, DV]
    for t0 in range(0, T, C):
        qc, kc, vc, gc = (a[t0:t0 + C].transpose(1, 0, 2).astype(np.float64) for a in (q, k, v, g))  # [VH, c, ·]
        bc, c = beta[t0:t0 + C].T[:, :, None], np.cumsum(gc, axis=1)  # [VH, c, 1], [VH, c, DK]
        n = c.shape[1]
        D = np.exp(np.where(np.tril(np.ones((n, n), bool))[:, :, None], c[:, :, None] - c[:, None], -np.inf))  # [VH, c, c, DK]
        L = np.tril(np.einsum("hid,hjd,hijd->hij", bc * kc, kc, D), -1)  # [VH, c, c], strictly lower
        rhs = bc * vc - (bc * kc * np.exp(c)) @ s  # [VH, c, DV]
        U = np.empty_like(rhs)
        for i in range(n):  # forward substitution: U_i = rhs_i - sum over j < i of L_ij U_j
            U[:, i] = rhs[:, i] - np.einsum("hj,hjv->hv", L[:, i, :i], U[:, :i])
        o[t0:t0 + C] = ((qc * np.exp(c)) @ s + np.einsum("hid,hjd,hijd->hij", qc, kc, D) @ U).transpose(1, 0, 2)
        s = np.exp(c[:, -1])[:, :, None] * s + (kc * np.exp(c[:, -1:] - c)).transpose(0, 2, 1) @ U
    return o, s


#.
#: delta_gated
def gated_delta_net(x, W, b):
    # x: [T, hidden] -> [T, hidden]: Gated DeltaNet, a memory per head updated by the delta rule
    S = CONFIG["delta"]
    T, KH, VH, DK, DV = x.shape[0], S["key_heads"], S["value_heads"], S["key_dim"], S["value_dim"]
    R = VH // KH  # value heads per key head
    conv_keys = ("ssm_conv",)  # one convolution over q | k | v
    if S["store"] == "fused":
        # one projection: q | k | v, then z, beta and alpha
        p = linear(x, w(W, "ssm_in", b))  # p: [T, 2 KH DK + 2 VH DV + 2 VH]
        CH, VD = 2 * KH * DK + VH * DV, VH * DV
        u, z = p[:, :CH], p[:, CH:CH + VD]  # u: [T, CH], z: [T, VH DV]
        beta, alpha = p[:, CH + VD:CH + VD + VH], p[:, CH + VD + VH:]  # [T, VH] each
    elif S["store"] == "grouped":
        # per key head: its q, its k, its value heads' v, their z; and their beta, then their alpha
        p = linear(x, w(W, "ssm_in", b)).reshape(T, KH, 2 * DK + 2 * R * DV)  # p: [T, KH, 2 DK + 2 R DV]
        q, k = p[:, :, :DK].reshape(T, -1), p[:, :, DK:2 * DK].reshape(T, -1)  # q, k: [T, KH DK]
        v = p[:, :, 2 * DK:2 * DK + R * DV].reshape(T, -1)  # v: [T, VH DV]
        z = p[:, :, 2 * DK + R * DV:].reshape(T, -1)  # z: [T, VH DV]
        ba = linear(x, w(W, "ssm_ba", b)).reshape(T, KH, 2 * R)  # ba: [T, KH, 2R]
        beta, alpha = ba[:, :, :R].reshape(T, VH), ba[:, :, R:].reshape(T, VH)  # [T, VH] each
        u = np.concatenate([q, k, v], -1)  # u: [T, 2 KH DK + VH DV]
    else:
        if S["store"] == "olmo":
            # q, k and v projected apart, and their convolutions stored apart
            u = np.concatenate([linear(x, w(W, "ssm_" + key, b)) for key in "qkv"], -1)  # u: [T, 2 KH DK + VH DV]
            conv_keys = ("ssm_conv_q", "ssm_conv_k", "ssm_conv_v")
        else:
            u = linear(x, w(W, "ssm_in", b))  # u: [T, 2 KH DK + VH DV], q | k | v
        z = linear(x, w(W, "ssm_z", b))  # z: [T, VH DV]
        beta, alpha = linear(x, w(W, "ssm_beta", b)), linear(x, w(W, "ssm_alpha", b))  # [T, VH] each
    u = causal_conv(u, W, b, False, conv_keys)  # u: [T, CH]
    u = u / (1 + np.exp(-u))  # u: [T, CH], SiLU
    l2 = lambda t: t / np.sqrt((t * t).sum(-1, keepdims=True) + 1e-6)  # each head to unit length
    q = l2(u[:, :KH * DK].reshape(T, KH, DK)) / np.sqrt(DK)  # q: [T, KH, DK], scaled by 1/sqrt(DK)
    k = l2(u[:, KH * DK:2 * KH * DK].reshape(T, KH, DK))  # k: [T, KH, DK]
    v = u[:, 2 * KH * DK:].reshape(T, VH, DV)  # v: [T, VH, DV]
    beta = S["beta_scale"] / (1 + np.exp(-beta))  # beta: [T, VH], how far each write goes (past 1 it overshoots)
    g = -np.exp(w(W, "ssm_a_log", b)) * np.logaddexp(0, alpha + w(W, "ssm_dt_bias", b))  # g: [T, VH], log decay
    kh = np.arange(VH) // R  # kh: [VH], the key head each value head reads
    st = state_of(b)
    s = st.get("ssm", np.zeros((VH, DK, DV)))  # s: [VH, DK, DV], the memory carried in (zeros before the first token; in float64: rank-one updates summed in float32 drift)
    # One token through the rule; a prompt chunk by chunk, as the executor runs it.
    o, st["ssm"] = delta_loop(q[:, kh], k[:, kh], v, g, beta, s) if T == 1 else delta_chunked(q[:, kh], k[:, kh], v, g, beta, 64, s)  # o: [T, VH, DV]
    o = o / np.sqrt((o * o).mean(-1, keepdims=True) + S["eps"]) * w(W, "ssm_norm", b)  # [T, VH, DV], RMS per head
#: !delta_sigmoid_gate
    o = o * (z.reshape(T, VH, DV) / (1 + np.exp(-z.reshape(T, VH, DV))))  # [T, VH, DV], gated by SiLU(z)
#.
#: delta_sigmoid_gate
    o = o / (1 + np.exp(-z.reshape(T, VH, DV)))  # [T, VH, DV], gated by σ(z)
#.
    return linear(o.reshape(T, VH * DV), w(W, "ssm_out", b))  # [T, hidden]


#.
#: delta_kimi
def kimi_delta_attention(x, W, b):
    # x: [T, hidden] -> [T, hidden]: Kimi Delta Attention, the delta rule with a decay per key
    # channel
    S = CONFIG["delta"]
    T, H, DK, DV = x.shape[0], S["value_heads"], S["key_dim"], S["value_dim"]
    silu = lambda t: t / (1 + np.exp(-t))
    conv = lambda key: silu(causal_conv(linear(x, w(W, "ssm_" + key, b)), W, b, False, ("ssm_conv_" + key,)))  # projected, then convolved
    l2 = lambda t: t / np.sqrt((t * t).sum(-1, keepdims=True) + 1e-6)  # each head to unit length
    q = l2(conv("q").reshape(T, H, DK)) / np.sqrt(DK)  # q: [T, H, DK], scaled by 1/sqrt(DK)
    k = l2(conv("k").reshape(T, H, DK))  # k: [T, H, DK]
    v = conv("v").reshape(T, H, DV)  # v: [T, H, DV]
    beta = 1 / (1 + np.exp(-linear(x, w(W, "ssm_beta", b))))  # beta: [T, H], how far each write goes
#: !delta_bailing
    f = linear(linear(x, w(W, "ssm_f_a", b)), w(W, "ssm_f_b", b)) + w(W, "ssm_dt_bias", b)  # f: [T, H DK], through rank DK
#.
#: delta_bailing
    f = linear(x, w(W, "ssm_f_b", b)) + w(W, "ssm_dt_bias", b)  # f: [T, H DK]
#.
#: !delta_gate_floor
    g = -np.exp(w(W, "ssm_a_log", b).reshape(H, 1)) * np.logaddexp(0, f.reshape(T, H, DK))  # g: [T, H, DK], log decay per key channel
#.
#: delta_gate_floor
    g = np.float32(S["gate_floor"]) / (1 + np.exp(-np.exp(w(W, "ssm_a_log", b).reshape(H, 1)) * f.reshape(T, H, DK)))  # g: [T, H, DK], log decay per key channel, bounded below
#.
    st = state_of(b)
    s = st.get("ssm", np.zeros((H, DK, DV)))  # s: [H, DK, DV], the memory carried in: zeros before the first token
    # One token through the rule; a prompt chunk by chunk, as the executor runs it.
    o, st["ssm"] = delta_loop(q, k, v, g, beta, s) if T == 1 else delta_chunked(q, k, v, g, beta, 64, s)  # o: [T, H, DV]
    o = o / np.sqrt((o * o).mean(-1, keepdims=True) + S["eps"]) * w(W, "ssm_norm", b)  # [T, H, DV], RMS per head
#: !delta_bailing
    gate = linear(linear(x, w(W, "ssm_g_a", b)), w(W, "ssm_g_b", b)).reshape(T, H, DV)  # gate: [T, H, DV], through rank DK
#.
#: delta_bailing
    gate = linear(x, w(W, "ssm_g_b", b)).reshape(T, H, DV)  # gate: [T, H, DV]
#.
    o = o / (1 + np.exp(-gate))  # [T, H, DV], gated by sigmoid
    return linear(o.reshape(T, H * DV), w(W, "ssm_out", b))  # [T, hidden]


#.
