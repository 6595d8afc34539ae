def linear(x, weight, bias=None):
    # x: [T, in]; weight: [out, in] (or [in, out] for Conv1D checkpoints) -> [T, out]
    y = x @ weight if CONFIG["in_out"] else x @ weight.T  # y: [T, out]
    return y + bias if bias is not None else y  # [T, out]


def norm(x, weight, bias=None, eps=None):
    # x: [..., d] -> [..., d], statistics over the last dim in float32
    eps = CONFIG["eps"] if eps is None else eps  # scalar, the model's unless given
    if CONFIG["norm"] == "layer":
        mu = x.mean(-1, keepdims=True)  # mu: [..., 1]
        var = ((x - mu) ** 2).mean(-1, keepdims=True)  # var: [..., 1]
        y = (x - mu) / np.sqrt(var + eps)  # y: [..., d]
        if weight is None:
            return y  # a LayerNorm without parameters
        y = y * (1.0 + weight) if CONFIG["unit_offset"] else y * weight  # [..., d]
        return y if bias is None else y + bias  # [..., d]
#: !unit_norm
    y = x / np.sqrt((x * x).mean(-1, keepdims=True) + eps)  # y: [..., d], eps inside the root
#.
#: unit_norm
    y = x / np.sqrt((x * x).sum(-1, keepdims=True) + eps)  # y: [..., d], projected onto the unit sphere (length 1)
#.
    if weight is None:
        return y  # an RMSNorm without a weight
#: !rms_bias
    return y * (1.0 + weight) if CONFIG["unit_offset"] else y * weight  # [..., d]
#.
#: rms_bias
    y = y * (1.0 + weight) if CONFIG["unit_offset"] else y * weight  # [..., d]
    return y if bias is None else y + bias  # [..., d], plus the shift where the norm has one
#.


def act(x, kind=None):
    # x: [T, F] -> [T, F], elementwise; the MLP's activation unless another is named
    kind = kind or CONFIG["act"]  # str
    if kind == "gelu_tanh":
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))  # [T, F]
    if kind == "gelu":
        return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)).astype(np.float32))  # [T, F]
    if kind == "quick_gelu":
        return x / (1.0 + np.exp(-1.702 * x))  # [T, F]
    if kind == "relu":
        return np.maximum(x, 0)  # [T, F]
    if kind == "relu2":
        return np.maximum(x, 0) ** 2  # [T, F]
#: xielu
    assert kind != "xielu", "xIELU reads its layer's parameters: see xielu()"
#.
    assert kind == "silu", kind
    return x / (1.0 + np.exp(-x))  # SiLU: [T, F]


#: softmax
def softmax(x):
    # x: [..., n] -> [..., n], over the last axis
    x = x - x.max(-1, keepdims=True)  # x: [..., n], shifted for stability
    e = np.exp(x)  # e: [..., n]
    return e / e.sum(-1, keepdims=True)  # [..., n]


#.
