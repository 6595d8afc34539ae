#: mla
def mla_attention(x, W, b, span):
    # Multi-head latent attention. x: [T, hidden] -> [T, hidden]
#: layer_attn
    C = CONFIG
    for own in C["layer_attn"]:
        if b in own["layers"]:
            C = {**C, **own}  # this layer's own attention (its latent sizes)
    M = C["mla"]
#.
#: !layer_attn
    C, M = CONFIG, CONFIG["mla"]
#.
    T, H, nope, rd, vd, kvl = x.shape[0], C["heads"], M["nope"], M["rope"], M["v"], M["kv_lora"]
    mask = attention_mask(span, T)  # [T, T]
    if M["q_lora"]:
        qa = linear(x, w(W, "q_a", b), w(W, "q_a", b, bias=True) if M["bias"] else None)  # [T, q_lora]
        cq = norm(qa, w(W, "q_a_norm", b), eps=M["eps"])  # cq: [T, q_lora], the query latent (its norm at its own eps)
#: indexer
        if M["indexer"]:
#: indexer_reuse
            if b in M["indexer"]["own"]:
                CHOSEN["keys"] = index_keys(x, cq, W, b, span)
            mask = mask + CHOSEN["keys"]  # only the keys the last indexer chose
#.
#: !indexer_reuse
            mask = mask + index_keys(x, cq, W, b, span)  # only the keys the indexer chose
#.
#.
#: !q_gate
        q = linear(cq, w(W, "q_b", b))  # [T, H (nope + rope)]
#.
#: q_gate
        qg = linear(np.concatenate([cq, qa], -1), w(W, "q_b", b)).reshape(T, H, nope + rd + vd)  # [T, H, nope + rope + v], from both latents
        q, gate = qg[..., : nope + rd].reshape(T, -1), qg[..., nope + rd :].reshape(T, -1)  # q: [T, H (nope + rope)], gate: [T, H v]
#.
    else:
        q = linear(x, w(W, "q", b))  # q: [T, H (nope + rope)]
#: lora_scales
    if M["lora_scales"]:
        q = q * np.float32(M["lora_scales"][0])  # [T, H (nope + rope)], scaled by sqrt(hidden / q_lora)
#.
    q = q.reshape(T, H, nope + rd).transpose(1, 0, 2)  # q: [H, T, nope + rope]
    kva = linear(x, w(W, "kv_a", b), w(W, "kv_a", b, bias=True) if M["bias"] else None)  # [T, kv_lora + rope]
    c_kv = norm(kva[:, :kvl], w(W, "kv_a_norm", b), eps=M["eps"])  # c_kv: [T, kv_lora], the cached latent
#: lora_scales
    if M["lora_scales"]:
        c_kv = c_kv * np.float32(M["lora_scales"][1])  # [T, kv_lora], scaled by sqrt(hidden / kv_lora): keys and values both
#.
    k_rot = kva[None, :, kvl:]  # k_rot: [1, T, rope], one rotary key for all heads (cached)
#: rope_key_norm
    if M["rope_key_norm"]:
        k_rot = norm(k_rot, w(W, "k_pe_norm", b))  # [1, T, rope], normed before it is rotated
#.
#: !mla_no_rope
    cos, sin = rope_tables(T, span)  # cos, sin: [T, rope]
    q_rot = apply_rope(q[..., nope:], cos, sin)  # q_rot: [H, T, rope]
    k_rot = apply_rope(k_rot, cos, sin)  # k_rot: [1, T, rope]
#.
#: mla_no_rope
    q_rot = q[..., nope:]  # q_rot: [H, T, rope], scored against the shared key part as it is (no positions)
#.
    kv = linear(c_kv, w(W, "kv_b", b)).reshape(T, H, nope + vd).transpose(1, 0, 2)  # [H, T, nope + v]
    k = np.concatenate([kv[..., :nope], np.broadcast_to(k_rot, (H, T, rd))], -1)  # k: [H, T, nope + rope]
    v = kv[..., nope:]  # v: [H, T, v]
    qq = np.concatenate([q[..., :nope], q_rot], -1)  # qq: [H, T, nope + rope]
#: mla_query_scale
    qq = qq * query_factors(C["query_scale"], T)[None, :, None]  # qq: [H, T, nope + rope], grown with position
#.
    s = (qq @ k.transpose(0, 2, 1)) * np.float32(C["scale"]) + mask  # s: [H, T, T]
#: sinks
    if C["sinks"]:
        sink = np.broadcast_to(w(W, "sinks", b).reshape(H, 1, 1), (H, T, 1))  # sink: [H, T, 1], one learned logit per head
        s = np.concatenate([s, sink], -1)  # s: [H, T, T + 1]: the sink takes its share of the softmax
        v = np.concatenate([v, np.zeros_like(v[:, :1])], 1)  # v: [H, T + 1, v], and gives back nothing
#.
    out = (softmax(s) @ v).transpose(1, 0, 2).reshape(T, H * vd)  # [T, H v]
#: mla_out_gate
    G = C["out_gate"]
#: q_gate
    g = gate  # g: [T, H v], the query projection's gate rows
#.
#: !q_gate
    g = linear(x, w(W, "attn_gate", b))  # g: [T, H v], or [T, H] with a gate per head
#.
    g = np.logaddexp(0, g) if G["softplus"] else 1 / (1 + np.exp(-g))  # softplus or sigmoid of the input
    out = (out.reshape(T, H, -1) * g[:, :, None]).reshape(T, -1) if G["per_head"] else out * g  # [T, H v], gated
#.
    return linear(out, w(W, "o", b), w(W, "o", b, bias=True) if C["o_bias"] else None)  # [T, hidden]


#.
