#: moa
def moa_attention(x, W, b, span, use_rope):
    # x: [T, hidden] -> [T, hidden]; a mixture of attention heads: each token's K chosen experts
    # bring a query and an output projection each, over one set of KV K/V heads
    C = CONFIG
    T, KV, D, K = x.shape[0], C["kv_heads"], C["head_dim"], C["moa"]["top_k"]
    logits = linear(x, w(W, "attn_router", b))  # logits: [T, E]
    chosen = np.argsort(-logits, axis=-1, kind="stable")[:, :K]  # chosen: [T, K], each token's experts, best first
    gates = softmax(np.take_along_axis(logits, chosen, -1))  # gates: [T, K], softmax over the chosen logits
    Wq, Wo = w(W, "attn_expert_q", b), w(W, "attn_expert_o", b)  # [E, KV D, hidden], [E, hidden, KV D]
    q = np.stack([[Wq[e] @ x[t] for e in chosen[t]] for t in range(T)])  # q: [T, K, KV D], slot j's queries
    kv = linear(x, w(W, "kv", b))  # kv: [T, 2 KV D], K then V
    k, v = kv[:, : KV * D], kv[:, KV * D :]  # [T, KV D] each
    q = q.reshape(T, K, KV, D).transpose(2, 1, 0, 3).reshape(KV * K, T, D)  # q: [KV K, T, D], group i's heads are the slots' head i
    k = k.reshape(T, KV, D).transpose(1, 0, 2)  # k: [KV, T, D]
    v = v.reshape(T, KV, D).transpose(1, 0, 2)  # v: [KV, T, D]
    if use_rope and C["rope"]:
        cos, sin = rope_tables(T, span)  # cos, sin: [T, rot_dim]
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
    k, v = np.repeat(k, K, axis=0), np.repeat(v, K, axis=0)  # k, v: [KV K, T, D]
    s = (q @ k.transpose(0, 2, 1)) * np.float32(C["scale"]) + attention_mask(span, T)  # s: [KV K, T, T]
    out = softmax(s) @ v  # out: [KV K, T, D]
    out = out.reshape(KV, K, T, D).transpose(2, 1, 0, 3).reshape(T, K, KV * D)  # out: [T, K, KV D], slot j's heads
    y = np.stack([sum(gates[t, j] * (Wo[chosen[t, j]] @ out[t, j]) for j in range(K)) for t in range(T)])  # y: [T, hidden]
    return y + w(W, "attn_experts", b, bias=True)  # [T, hidden], plus the experts' shared bias


#.
