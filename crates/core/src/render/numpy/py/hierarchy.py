#: hierarchy
def hierarchy_forward(x, W):
    # HRM: two stacks of pre-norm layers, each ending in its own weightless norm. x: [T, hidden],
    # the embeddings -> logits [T, vocab]
    Hc = CONFIG["hierarchy"]
    per = Hc["per_stack"]

    def stack(u, first):  # u: [T, hidden] through layers first .. first + per - 1 and the norm
        for b in range(first, first + per):
            span, use_rope, _ = PLAN[b]
            u = residual(u, attention(norm(u, w(W, "attn_norm", b)), W, b, span, use_rope))  # [T, hidden]
            u = residual(u, mlp(norm(u, w(W, "ffn_norm", b)), W, b))  # [T, hidden]
        return norm(u, w(W, "final_norm"))  # [T, hidden]

    high = x  # the high-level state starts as the embeddings
    low = np.broadcast_to(w(W, "low_init"), x.shape)  # the low-level one as a stored vector
    for _ in range(Hc["high_cycles"]):
        for _ in range(Hc["low_cycles"]):
            low = stack(low + high, 0)  # the low-level stack, layers 0 .. per - 1
        high = stack(high + low, per)  # the high-level stack, layers per .. 2 per - 1
    return lm_head(high, W)  # the last high-level state; its stack's norm was the final norm


#.
