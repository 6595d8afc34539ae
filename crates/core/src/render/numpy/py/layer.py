def residual(x, delta):
    # x, delta: [T, hidden] -> [T, hidden]
    if CONFIG["residual_mult"] != 1:
        delta = delta * np.float32(CONFIG["residual_mult"])  # the sublayer's output, scaled
    return x + delta  # [T, hidden]


#: residual_gate
def residual_gate(out, x, g):
    # out (the sublayer's output), x (the stream): [T, hidden], g: [hidden], a learned vector -> [T, hidden].
    # sigmoid(g) * out + sqrt(1 - sigmoid(g)^2) * x, computed as the class does: the squares of the two factors sum to 1
    s = 1 / (1 + np.exp(-g))  # [hidden]
    return s * out + np.sqrt(1 + s) * np.exp(-0.5 * np.logaddexp(0, g)) * x  # [T, hidden]


#.
