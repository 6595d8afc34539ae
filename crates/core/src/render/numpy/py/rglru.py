#: rg_lru
def rg_lru(x, W, b):
    # x: [T, hidden] -> [T, hidden]: Griffin's recurrent block, the RG-LRU run token after token
    # through one state per channel
    S = CONFIG["rg_lru"]
    T, Wd, H = x.shape[0], S["width"], S["heads"]
    y = act(linear(x, w(W, "ssm_z", b), w(W, "ssm_z", b, bias=True)), S["act"])  # y: [T, Wd], the gate branch
    u = linear(x, w(W, "ssm_in", b), w(W, "ssm_in", b, bias=True))  # u: [T, Wd]
    u = causal_conv(u, W, b, True)  # u: [T, Wd]
    ub = u.reshape(T, H, Wd // H)  # ub: [T, H, Wd / H], the gates' blocks
    def gate(key):  # sigma of a block-diagonal projection, each block's weight stored [in, out]
        return 1 / (1 + np.exp(-(np.einsum("thi,hio->tho", ub, w(W, key, b)) + w(W, key, b, bias=True)).reshape(T, Wd)))
    i, r = gate("lru_in_gate"), gate("lru_rec_gate")  # [T, Wd] each
    log_a = -8.0 * r * np.logaddexp(0, w(W, "lru_param", b))  # log_a: [T, Wd]
    a = np.exp(log_a)  # a: [T, Wd], each channel's decay at each token
    scale = np.sqrt(1 - np.exp(2 * log_a))  # scale: [T, Wd]
    st = state_of(b)
    if "ssm" not in st:
        a[0], scale[0] = 0.0, 1.0  # position 0: the state resets and the input enters whole
    xn = u * i * scale  # xn: [T, Wd]
    h = st.get("ssm", np.zeros(Wd, np.float32))  # h: [Wd], the state, carried token to token
    out = np.empty((T, Wd), np.float32)  # out: [T, Wd]
    for t in range(T):
        h = a[t] * h + xn[t]  # [Wd]
        out[t] = h
    st["ssm"] = h  # kept for the next call when decoding
    return linear(out * y, w(W, "ssm_out", b), w(W, "ssm_out", b, bias=True))  # [T, hidden]


#.
