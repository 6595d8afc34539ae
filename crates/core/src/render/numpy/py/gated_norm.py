#: gated_norm
def norm_gate(y, W, b, which):
    # y: [T, hidden], a norm's output -> y gated by sigmoid(W_up silu(W_down y))
    g = act(linear(y, w(W, which + "_gate_down", b)), "silu")  # g: [T, rank]
    g = linear(g, w(W, which + "_gate_up", b))  # g: [T, hidden]
    return y / (1 + np.exp(-g))  # [T, hidden]


#.
