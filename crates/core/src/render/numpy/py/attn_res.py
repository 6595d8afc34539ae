#: attn_res
def res_mix(blocks, x, q, eps):
    # blocks: the block summaries (each [T, hidden]), x: [T, hidden], q: [n, hidden] or [hidden] -> n mixes [T, hidden]
    S = np.stack(blocks + [x], 1)  # S: [T, k, hidden], the candidates
    S = S / np.sqrt((S * S).mean(-1, keepdims=True) + np.float32(eps))  # each RMS-normed, no weight
    q = q.reshape(-1, S.shape[-1])  # q: [n, hidden]
    a = S @ q.T / np.float32(math.sqrt(S.shape[-1]))  # a: [T, k, n], each candidate's match with each query
    a = np.exp(a - a.max(1, keepdims=True))
    a = a / a.sum(1, keepdims=True)  # a: [T, k, n], a softmax over the candidates
    return [(S * a[:, :, i : i + 1]).sum(1) for i in range(q.shape[0])]  # n × [T, hidden]


#.
#: attn_res
def attn_res_forward(x, W):
    # x: [T, hidden] (the embeddings) -> logits. Inkling 2's block attention residuals: each sublayer reads a learned mix
    # of the block summaries and the stream; a block's first layer keeps its input as a summary and restarts the stream
    R, L = CONFIG["attn_res"], len(PLAN)
    loop = R["loop"] or {"start": L, "end": L, "passes": 1}
    start, end = min(loop["start"], L), min(loop["end"], L)  # a section past the last layer loops the layers it holds
    blocks = []  # the block summaries so far, each [T, hidden]
    for b in range(start):
        x = attn_res_layer(x, blocks, W, b)
    x0, blocks0 = x, list(blocks)
    before = None  # the summaries the pass before added after its first, and its output
    for p in range(loop["passes"]):  # a looped section: every pass from the same stream and summaries
        x, blocks = x0, list(blocks0)
        for b in range(start, end):
            messages = None
            if before:
                j = b - start
                qm, kv = w(W, "msg_queries")[2 * j : 2 * j + 2], w(W, "msg_kv_queries")[2 * j : 2 * j + 2]
                messages = res_mix(before[0], before[1], np.stack([qm[0], kv[0], kv[1], qm[1]]), R["eps"])  # q, k, v, FFN
            x = attn_res_layer(x, blocks, W, b, messages)
        before = (blocks[len(blocks0) + 1 :], x)
    for b in range(end, L):
        x = attn_res_layer(x, blocks, W, b)
    z = norm(res_mix(blocks, x, w(W, "head_res_query"), R["eps"])[0], w(W, "final_norm"))  # [T, hidden]
    return lm_head(z, W)


#.
#: looped_messages
def message_gate(x, m, W, b, key):
    # x, m: [T, hidden] -> [T, hidden]: x forgets a learned share of itself and takes in its message m
    rms = lambda u: u / np.sqrt((u * u).mean(-1, keepdims=True) + np.float32(CONFIG["eps"]))  # no weight
    g = np.concatenate([rms(x), rms(m)], -1) @ w(W, key + "_down", b).T  # g: [T, rank]
    forget, gain = np.tanh(g @ w(W, key + "_forget", b).T), np.tanh(g @ w(W, key + "_gain", b).T)  # [T, hidden] each
    return (1 - forget) * x + gain * m  # [T, hidden]


#.
#: attn_res
def attn_res_layer(x, blocks, W, b, messages=None):
    # x: [T, hidden] -> [T, hidden]: layer b; a block's first layer appends its input x to blocks. In a loop's later
    # passes, messages (q, k, v, FFN: [T, hidden] each) from the pass before are gated into the layer's inputs
    C, R = CONFIG, CONFIG["attn_res"]
    span, use_rope, ffn = PLAN[b]
    A = C
    for own in C["layer_attn"]:
        if b in own["layers"]:
            A = {**C, **own}  # this layer's own attention
    n = 3 if A["kv_inputs"] else 1  # the full layers mix inputs for Q, K and V apart
    xs = res_mix(blocks, x, w(W, "attn_res_query", b), R["eps"]) if b > 0 else [x] * n  # layer 0 reads the stream
#: looped_messages
    if messages is not None:
        xs = xs if n == 3 else xs * 3  # a sliding layer's K and V take inputs of their own too
        xs = [message_gate(xs[i], messages[i], W, b, key) for i, key in enumerate(["msg_q", "msg_k", "msg_v"])]
#.
    if A["kv_inputs"]:
        q_in, k_in, v_in = (norm(xs[i], w(W, key, b)) for i, key in enumerate(["q_in_norm", "k_in_norm", "v_in_norm"]))
        a = attention(q_in, W, b, span, use_rope, k_in, v_in)  # [T, hidden]
#: looped_messages
    elif messages is not None:
        q_in, k_in, v_in = (norm(u, w(W, "attn_norm", b)) for u in xs)
        a = attention(q_in, W, b, span, use_rope, k_in, v_in)  # [T, hidden]
#.
    else:
        a = attention(norm(xs[0], w(W, "attn_norm", b)), W, b, span, use_rope)  # [T, hidden]
    a = residual_conv(a, w(W, "attn_out_conv", b), C["out_conv"]["scaled"])  # [T, hidden]
    if b % R["block"] == 0:
        blocks.append(x)  # a block's first layer: its input becomes a summary, the stream restarts
        r = a
    else:
        r = x + a  # [T, hidden]
    h = res_mix(blocks, r, w(W, "ffn_res_query", b), R["eps"])[0]  # [T, hidden]
#: looped_messages
    if messages is not None:
        h = message_gate(h, messages[3], W, b, "msg_ffn")
#.
    h = norm(h, w(W, "ffn_norm", b))  # [T, hidden]
    return r + residual_conv(moe(h, W, b), w(W, "ffn_out_conv", b), C["out_conv"]["scaled"])  # [T, hidden]


#.
