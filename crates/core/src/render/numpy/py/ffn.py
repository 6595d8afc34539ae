#: mlp
def mlp(x, W, b):
    # x: [T, hidden] -> [T, hidden]
    C = CONFIG
    bias = lambda key: w(W, key, b, bias=True) if C["mlp_bias"] else None
    if not C["gated"]:
        u = linear(x, w(W, "up", b), bias("up"))  # u: [T, F]
#: xielu
        h = xielu(u, W, b) if C["act"] == "xielu" else act(u)  # h: [T, F]
#.
#: !xielu
        h = act(u)  # h: [T, F]
#.
        return linear(h, w(W, "down", b), bias("down"))  # [T, hidden]
    if C["fused_gate_up"]:
        gu = linear(x, w(W, "gate_up", b), bias("gate_up"))  # gu: [T, 2F]
#: adapters
        if C["shared"]:
            gu = gu + adapter(x, W, b, "gate_up")  # [T, 2F], plus this visit's own adapter
#.
        g, u = np.split(gu, 2, axis=-1)  # g, u: [T, F]
    else:
        g, u = linear(x, w(W, "gate", b), bias("gate")), linear(x, w(W, "up", b), bias("up"))  # g, u: [T, F]
#: sparsity
    z = C["sparsity"][b]  # the layer's Gaussian cut-off, or None
    if z is not None:
        g = np.maximum(g - g.mean(-1, keepdims=True) - np.float32(z) * g.std(-1, keepdims=True), 0)  # g: [T, F], only the values above mean + z std, shifted to start at 0
#.
#: ngpt
    g = g * (w(W, "ngpt_suv_gate", b) * np.float32(C["ngpt"]["uv"]))  # g: [T, F], a learned scale
    u = u * (w(W, "ngpt_suv_up", b) * np.float32(C["ngpt"]["uv"]))  # u: [T, F]
#.
#: !mup
#: !mlp_clamp
    h = act(g) * u  # h: [T, F]
#.
#: mlp_clamp
    h = glu(g, u, C["mlp_clamp"])  # h: [T, F], the clamped SwiGLU
#.
#.
#: mup
    h = act(g * np.float32(C["mup"]["mlp_gate"])) * u  # h: [T, F], the gate scaled first (muP)
#.
    if C["ffn_sub_norm"]:
        h = norm(h, w(W, "ffn_sub_norm", b))  # [T, F], normed before the down projection
#: mlp_scalar
    if C["mlp_scalar"]:
        return linear(h, w(W, "down", b), bias("down")) * w(W, "mlp_scalar", b)  # [T, hidden], times a learned scalar
#.
#: !mup
    return linear(h, w(W, "down", b), bias("down"))  # [T, hidden]
#.
#: mup
    return linear(h, w(W, "down", b), bias("down")) * np.float32(C["mup"]["mlp_down"])  # [T, hidden], scaled (muP)
#.


#.
#: xielu
def xielu(x, W, b):
    # x: [T, F] -> [T, F]; xIELU with layer b's learned alpha_p, alpha_n and stored beta, eps
    softplus = lambda v: np.log1p(np.exp(v))
    beta, eps = w(W, "act_beta", b).reshape(()), w(W, "act_eps", b).reshape(())  # scalars
    alpha_p = softplus(w(W, "act_alpha_p", b).reshape(()))  # scalar
    alpha_n = beta + softplus(w(W, "act_alpha_n", b).reshape(()))  # scalar
    below = (np.expm1(np.minimum(x, eps)) - x) * alpha_n + beta * x  # [T, F]
    return np.where(x > 0, alpha_p * x * x + beta * x, below).astype(np.float32)  # [T, F]


#.
#: glu_softcaps
def softcapped_glu(g, u, caps):
    # g, u: [T, F] -> [T, F]: Inkling 2's SwiGLU, the gate's linear factor and the up projection softcapped
    cg, cu = np.float32(caps[0]), np.float32(caps[1])
    return cg * np.tanh(g / cg) / (1 + np.exp(-g)) * (cu * np.tanh(u / cu))  # [T, F]


#.
#: glu
def glu(g, u, limit):
    # g, u: [T, F] -> [T, F]
    if limit is None:
        return act(g) * u  # [T, F]
    g = np.minimum(g, limit)  # g: [T, F], capped above
    u = np.clip(u, -limit, limit)  # u: [T, F], clipped both ways
#: swiglu_plain
    return act(g) * u  # [T, F], the clamped inputs' plain product
#.
#: !swiglu_plain
    return (u + 1) * g / (1 + np.exp(-1.702 * g))  # [T, F]
#.


#.
#: act_clips
def clip_after_act(g, u, limit):
    # g, u: [T, F] -> [T, F]; limit: this layer's (0: none)
    if not limit:
        return act(g) * u  # [T, F]
    return np.minimum(act(g), limit) * np.clip(u, -limit, limit)  # [T, F], the activated gate capped, up clipped


#.
