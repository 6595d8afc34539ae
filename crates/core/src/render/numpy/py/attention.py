#: attention
#: !draft
def attention_mask(span, T):
    # -> [T, T] additive mask: 0 where query i may attend to key j, -inf elsewhere
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    ok = j <= i
#: image_both_ways
    if "reach" in IMAGE:
        ok = j <= np.maximum(i, IMAGE["reach"][:T, None])  # an image's tokens see their whole image (a window still bounds them from below)
#.
    if span[0] == "sliding":
        ok &= (i - j) < span[1]
    if span[0] == "chunked":
        ok &= (j // span[1]) == (i // span[1])
    if span[0] == "whole":
        ok = np.ones((T, T), bool)  # both ways: every query sees every key, later ones too
#: prefix_lm
    ok = np.ones((T, T), bool)  # the ids are the prompt, a prefix that sees itself both ways (in every span)
#.
    return np.where(ok, 0.0, -np.inf).astype(np.float32)


#.
#.
#: query_scale_any
def query_factors(Q, T):
    # -> [T]: the scale of the queries at positions 0 .. T - 1
    pos = np.arange(T, dtype=np.float64)  # the queries' positions
    if Q["form"] == "power":
        f = np.exp(Q["beta"] * np.log1p((pos + Q["shift"]) / Q["length"]))  # (1 + (p + shift) / length) ** beta
    elif Q["form"] == "floored":
        f = 1 + Q["beta"] * np.log(np.maximum((pos + Q["shift"]) / Q["length"], 1))  # 1 until p + shift reaches length, then logarithmic
    else:
        f = 1 + Q["beta"] * np.log1p(np.floor((pos + Q["shift"]) / Q["length"]))  # 1 until p + shift reaches length, then stepped
    return f.astype(np.float32)


#.
#: l2_clip_fn
def l2_clip(u, c):
    # u: [..., d] -> [..., d]: each vector scaled down to L2 norm c where longer
    return u * np.minimum(1, np.float32(c) / (np.sqrt((u * u).sum(-1, keepdims=True)) + np.float32(1e-6)))


#.
#: attention
#: kv_inputs
def attention(x, W, b, span, use_rope, xk=None, xv=None):
    # x: [T, hidden] -> [T, hidden]; K and V read xk and xv where the layer gives them inputs of their own
    C = CONFIG
    xk, xv = x if xk is None else xk, x if xv is None else xv
#.
#: !kv_inputs
def attention(x, W, b, span, use_rope):
    # x: [T, hidden] -> [T, hidden]
    C = CONFIG
#.
#: decodes
    if STATE is not None:
        return attention_so_far(x, W, b, span, use_rope)  # decoding: over every input so far
#.
#: mla
    if C["mla"]:
        return mla_attention(x, W, b, span)
#.
#: moa
    if C["moa"]:
        return moa_attention(x, W, b, span, use_rope)
#.
#: layer_attn
    for own in C["layer_attn"]:
        if b in own["layers"]:
            C = {**C, **own}  # this layer's own attention (heads, sinks)
#.
    T, H, KV, D = x.shape[0], C["heads"], C["kv_heads"], C["head_dim"]  # tokens, query heads, K/V heads, d_head
    DV = C["v_head_dim"]  # d of a value head
    bias = lambda key: w(W, key, b, bias=True) if C["qkv_bias"] else None
    nb = lambda key: w(W, key, b, bias=True) if C["norm_bias"] else None  # a LayerNorm's bias
#: cca
    if C["cca"]:
        q, k, v = cca(x, W, b)  # [T, H D], [T, KV D], [T, KV D]: ZAYA's
    elif C["qkv"] == "stacked":
        qkv = linear(x, w(W, "qkv", b), bias("qkv"))  # qkv: [T, (H + 2 KV) D]
        q, k, v = qkv[:, : H * D], qkv[:, H * D : (H + KV) * D], qkv[:, (H + KV) * D :]  # [T, H D], [T, KV D], [T, KV D]
#.
#: !cca
    if C["qkv"] == "stacked":
#: !gate_before_qkv
        qkv = linear(x, w(W, "qkv", b), bias("qkv"))  # qkv: [T, (H + 2 KV) D]
#.
#: gate_before_qkv
        qkv = linear(x, w(W, "qkv", b), bias("qkv"))  # qkv: [T, (2 H + 2 KV) D]
        gate, qkv = qkv[:, : H * D], qkv[:, H * D :]  # gate: [T, H D], stored before the queries
#.
        q, k, v = qkv[:, : H * D], qkv[:, H * D : (H + KV) * D], qkv[:, (H + KV) * D :]  # [T, H D], [T, KV D], [T, KV D]
#.
    elif C["qkv"] == "parts":
        qkv = linear(x, w(W, "qkv", b), bias("qkv")).reshape(T, C["qkv_parts"], 3, -1)  # per part: its queries, values, keys
        q, v, k = (qkv[:, :, i].reshape(T, H * D) for i in range(3))  # [T, H D] each
    elif C["qkv"] == "grouped":
        G = H // KV  # query heads per K/V group
        qkv = linear(x, w(W, "qkv", b), bias("qkv")).reshape(T, KV, G + 2, D)  # per group: G queries, a key, a value
        q = qkv[:, :, :G].reshape(T, H * D)  # q: [T, H D]
        k, v = qkv[:, :, G].reshape(T, KV * D), qkv[:, :, G + 1].reshape(T, KV * D)  # k, v: [T, KV D]
#: k_only
    elif C["shares_kv"] or C["v_from_k"]:
        q = linear(x, w(W, "q", b), bias("q"))  # q: [T, H D]
        k = v = None if C["shares_kv"] else linear(x, w(W, "k", b), bias("k"))  # k: [T, KV D], the values too; a layer that shares has neither
#.
    else:
        # q: [T, H D]; k, v: [T, KV D]
#: kv_inputs
        q, k, v = linear(x, w(W, "q", b), bias("q")), linear(xk, w(W, "k", b), bias("k")), linear(xv, w(W, "v", b), bias("v"))
#.
#: !kv_inputs
        q, k, v = linear(x, w(W, "q", b), bias("q")), linear(x, w(W, "k", b), bias("k")), linear(x, w(W, "v", b), bias("v"))
#.
#: attn_adapters
    if C["shared"] and C["shared"]["attn_adapters"]:
        q, k, v = q + adapter(x, W, b, "q"), k + adapter(x, W, b, "k"), v + adapter(x, W, b, "v")  # plus this visit's own adapters
#.
#: kv_conv
    Kc = C["kv_conv"]
#: dynamic_conv
    if Kc and Kc["dynamic"]:
        k, v = dynamic_conv(k, xk, W, b, "k", KV), dynamic_conv(v, xv, W, b, "v", KV)  # k: [T, KV D], v: [T, KV DV], taps of each token's own too
    elif Kc:
        k, v = residual_conv(k, w(W, "k_conv", b), Kc["scaled"]), residual_conv(v, w(W, "v_conv", b), Kc["scaled"])  # k: [T, KV D], v: [T, KV DV], each channel mixed over its last positions
#.
#: !dynamic_conv
    if Kc:
        k, v = residual_conv(k, w(W, "k_conv", b), Kc["scaled"]), residual_conv(v, w(W, "v_conv", b), Kc["scaled"])  # k: [T, KV D], v: [T, KV DV], each channel mixed over its last positions
#.
#.
    if C["out_gate"] and C["out_gate"]["in_query"]:
        qg = q.reshape(T, H, 2, D)  # each head's queries, then its output gate
        q, gate = qg[:, :, 0].reshape(T, H * D), qg[:, :, 1].reshape(T, H * D)  # [T, H D] each
    if C["qk_norm"] == "full":
        q, k = norm(q, w(W, "q_norm", b), nb("q_norm")), norm(k, w(W, "k_norm", b), nb("k_norm"))  # q: [T, H D], k: [T, KV D], over all heads at once
    if C["clip_qkv"]:
        c = np.float32(C["clip_qkv"])
        q, k, v = np.clip(q, -c, c), np.clip(k, -c, c), np.clip(v, -c, c)  # every entry within [-c, c]
    q = q.reshape(T, H, D).transpose(1, 0, 2)  # q: [H, T, D]
#: !shares_kv
    k = k.reshape(T, KV, D).transpose(1, 0, 2)  # k: [KV, T, D]
    v = v.reshape(T, KV, DV).transpose(1, 0, 2)  # v: [KV, T, DV]
#.
#: shares_kv
    if k is not None:  # a layer that shares keys and values has none of its own
        k = k.reshape(T, KV, D).transpose(1, 0, 2)  # k: [KV, T, D]
        v = v.reshape(T, KV, DV).transpose(1, 0, 2)  # v: [KV, T, DV]
#.
#: v_scale
    if C["v_scale"] != 1:
        v = v * np.float32(C["v_scale"])  # v: [KV, T, DV], scaled
#.
#: v_norm
#: !shares_kv
    if C["v_norm"]:
        v = v / np.sqrt((v * v).mean(-1, keepdims=True) + C["eps"])  # v: [KV, T, DV], RMS-normed per head, no weight
#.
#: shares_kv
    if C["v_norm"] and v is not None:
        v = v / np.sqrt((v * v).mean(-1, keepdims=True) + C["eps"])  # v: [KV, T, DV], RMS-normed per head, no weight
#.
#.
#: dynamic_mask
    if C["dynamic_mask"]:
        dt = linear(v.transpose(1, 0, 2).reshape(T, KV * DV), w(W, "dt", b), bias("dt"))  # dt: [T, KV], from all heads' values
        delta = np.exp(w(W, "dyn_a", b) * np.logaddexp(0, dt)).T  # delta: [KV, T], each key's score per K/V head
#.
#: ngpt
    if C["qk_norm"] == "unit":
        q, k = norm(q, None), norm(k, None)  # q: [H, T, D], k: [KV, T, D], each head to length 1
#.
    if C["qk_norm"] == "per_head":
#: !shares_kv
        q, k = norm(q, w(W, "q_norm", b), nb("q_norm")), norm(k, w(W, "k_norm", b), nb("k_norm"))  # q: [H, T, D], k: [KV, T, D], per head
#.
#: shares_kv
        q = norm(q, w(W, "q_norm", b), nb("q_norm"))  # q: [H, T, D], per head
        k = k if k is None else norm(k, w(W, "k_norm", b), nb("k_norm"))  # k: [KV, T, D]
#.
    if C["qk_norm"] == "head_weights":
        ln = lambda u: (u - u.mean(-1, keepdims=True)) / np.sqrt(u.var(-1, keepdims=True) + C["eps"])  # LayerNorm over a head's dims, no shift
        hw = lambda key, n: np.stack([w(W, key, b, e=i) for i in range(n)]) if C["qk_split"] else w(W, key, b)  # [n, D]: stored per head, or as one tensor
        q, k = ln(q) * hw("q_norm", H)[:, None, :], ln(k) * hw("k_norm", KV)[:, None, :]  # q: [H, T, D], k: [KV, T, D], each head its own weight
#: l2_clip
    if C["l2_clip"]:
        q = l2_clip(q * w(W, "q_clip_scale", b)[:, None, :], C["l2_clip"])  # q: [H, T, D], scaled, then no longer than the threshold
        k = l2_clip(k, C["l2_clip"])  # k: [KV, T, D]
#.
    if use_rope and C["rope"]:
#: !draft
        cos, sin = rope_tables(T, span)  # cos, sin: [T, rot_dim]
#.
#: draft
        cos, sin = (t[-1:] for t in rope_tables(POSITION + 1, span))  # cos, sin: [1, rot_dim], at the step's position
#.
#: !shares_kv
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)  # q: [H, T, D], k: [KV, T, D]
#.
#: shares_kv
        q = apply_rope(q, cos, sin)  # q: [H, T, D]
        k = k if k is None else apply_rope(k, cos, sin)  # k: [KV, T, D]
#.
        if C["qk_norm"] == "l2":
            q = q / np.sqrt((q * q).mean(-1, keepdims=True) + C["eps"])  # q: [H, T, D], no weight
            k = k / np.sqrt((k * k).mean(-1, keepdims=True) + C["eps"])  # k: [KV, T, D]
    if C["qk_norm"] == "per_head_post_rope":
        q, k = norm(q, w(W, "q_norm", b), nb("q_norm")), norm(k, w(W, "k_norm", b), nb("k_norm"))  # q: [H, T, D], k: [KV, T, D], per head after RoPE
#: query_scale
    Q = C["query_scale"]
    if Q and (not use_rope or not Q["nope_only"]):
        f = query_factors(Q, T)  # f: [T]
        q = q * f[None, :, None]  # q: [H, T, D], grown with position
#.
#: ngpt
    q = q * ((w(W, "ngpt_q", b) * np.float32(C["ngpt"]["query"])) ** 2).reshape(H, 1, D)  # q: [H, T, D], each feature's learned scale, squared
#.
#: shares_kv
#: !kv_from
#: !draft
    if C["shares_kv"]:
        k, v = SHARED_KV[span[0]]  # k: [KV, T, D], v: [KV, T, DV], the last layer of this kind's that projects its own
    else:
        SHARED_KV[span[0]] = k, v  # for the later layers that share them
#.
#: draft
    k, v = SHARED_KV[span[0]]  # k: [KV, Tk, D], v: [KV, Tk, DV], the target's, as its last layer of this kind cached them
#.
#.
#: kv_from
    if C["shares_kv"]:
        k, v = SHARED_KV[C["kv_from"][b]]  # k: [KV, T, D], v: [KV, T, DV], those of the layer this one reads
    else:
        SHARED_KV[b] = k, v  # for the later layers that read them
#.
#.
#: pool_index
    if C["pool_index"]:
        index = pool_mask(q, k[0], b, C["pool_index"])  # [T, T]: the keys each query keeps
        k, v = nvfp4(k), nvfp4(v)  # the layer attends over its keys and values rounded to NVFP4
#.
    if C["differential"]:
        half = np.arange(KV) % (KV // 2)  # K/V head j offers heads j mod KV/2 and KV/2 + j mod KV/2
        v = np.concatenate([v[half], v[KV // 2 + half]], -1)  # v: [KV, T, 2D], two heads' values side by side
    k, v = np.repeat(k, H // KV, axis=0), np.repeat(v, H // KV, axis=0)  # k: [H, T, D], v: [H, T, D or 2D]
    s = (q @ k.transpose(0, 2, 1)) * np.float32(C["scale"])  # s: [H, T, T]
    if C["alibi"]:
        distance = np.arange(T)[None, :] - np.arange(T)[:, None]  # j - i: [T, T]
        s = s + np.array(C["alibi"], np.float32)[:, None, None] * distance  # ALiBi: [H, T, T]
#: buckets
    if C["buckets"]:
        s = s + position_bias(T, W)  # s: [H, T, T], + the bias of each key's distance (or segment) from the query
#.
#: rel_logits
    if C["rel_logits"]:
        bias = rel_logits(x, W, b, C["rel_logits"], T)  # bias: [H, T, T], each query's own bias for each key's distance
#: query_scale_any
        if C["query_scale"]:
            bias = bias * f[None, :, None]  # scaled with the queries
#.
        s = s + bias
#.
    if C["softcap"]:
        s = C["softcap"] * np.tanh(s / C["softcap"])  # s: [H, T, T]
#: !draft
    s = s + attention_mask(span, T)  # s: [H, T, T], -inf where masked
#.
#: draft
    s = s + draft_mask(span, k.shape[1])  # s: [H, 1, Tk], -inf where masked
#.
#: block_index
    if C["block_index"]:
        s = s + np.repeat(block_mask(x, W, b, span, C["block_index"]), H // C["block_index"]["heads"], axis=0)  # s: [H, T, T], only in the blocks each group's index head chose
#.
#: qsa
    if C["qsa"]:
        s = s + qsa_mask(x, W, b, span, C["qsa"])  # s: [H, T, T], only where the indexer keeps
#.
#: pool_index
    if C["pool_index"]:
        s = s + index  # s: [H, T, T], only where the indexer keeps
#.
#: dynamic_mask
    if C["dynamic_mask"]:
        delta = np.repeat(delta, H // KV, axis=0)[:, None, :]  # delta: [H, 1, T]
        s = s + delta  # s: [H, T, T], each key's score added
        keep = C["dynamic_mask"]["keep"]
        if T > keep:
            choice = np.where(np.isfinite(s), delta, -np.inf)  # [H, T, T], the visible keys' scores
            floor = -np.sort(-choice, axis=-1)[..., keep - 1 : keep]  # [H, T, 1], the keep-th best
            s = np.where(choice >= floor, s, -np.inf)  # only the keep best-scored keys stay
#.
#: token_sinks
    if C["token_sinks"]:
        sink = linear(x, w(W, "token_sinks", b)).T[:, :, None]  # sink: [H, T, 1], each token's own sink logit per head
        p = softmax(np.concatenate([s, sink], -1))[..., :T]  # p: [H, T, T]; the sink takes its share, then is dropped
    elif C["sinks"]:
        sink = np.broadcast_to(w(W, "sinks", b).reshape(H, 1, 1), (H, T, 1))  # sink: [H, T, 1]
        p = softmax(np.concatenate([s, sink], -1))[..., :T]  # p: [H, T, T]; the sink takes its share, then is dropped
#.
#: !token_sinks
    if C["sinks"]:
        sink = np.broadcast_to(w(W, "sinks", b).reshape(H, 1, 1), (H, T, 1))  # sink: [H, T, 1]
        p = softmax(np.concatenate([s, sink], -1))[..., :T]  # p: [H, T, T]; the sink takes its share, then is dropped
#.
    else:
        p = softmax(s)  # p: [H, T, T]
    out = (p @ v).transpose(1, 0, 2)  # out: [T, H, D or 2D]
    if C["differential"]:
        dot = lambda a, c: float((w(W, a, b) * w(W, c, b)).sum())  # one learned scalar from two vectors
        init = 0.8 - 0.6 * math.exp(-0.3 * b)  # lambda_init of layer b
        lam = np.float32(math.exp(dot("lambda_q1", "lambda_k1")) - math.exp(dot("lambda_q2", "lambda_k2")) + init)
        d = out[:, : H // 2] - lam * out[:, H // 2 :]  # d: [T, H/2, 2D], the second half of the heads subtracted
        out = np.float32(1 - init) * d / np.sqrt((d * d).mean(-1, keepdims=True) + C["eps"])  # each pair RMS-normed, no weight
    out = out.reshape(T, -1)  # [T, H DV]
    G = C["out_gate"]
    if G:
#: !gate_before_qkv
        g = gate if G["in_query"] else linear(x, w(W, "attn_gate", b))  # g: [T, H D], or [T, H] with a gate per head
#.
#: gate_before_qkv
        g = gate  # g: [T, H D], the stacked projection's first rows
#.
#: gate_bias
        if G["bias"]:
            g = g + np.repeat(w(W, "attn_gate_bias", b), g.shape[1] // H)  # one bias per head, shared by its features
#.
#: ngpt
        g = g * (w(W, "ngpt_gate", b) * np.float32(C["ngpt"]["gate"])) ** 2  # the gate's learned scale, squared
#.
        g = np.logaddexp(0, g) if G["softplus"] else 1 / (1 + np.exp(-g))  # softplus or sigmoid of the input
        out = (out.reshape(T, H, -1) * g[:, :, None]).reshape(T, -1) if G["per_head"] else out * g  # [T, H DV], gated
    if C["attn_sub_norm"]:
        out = norm(out, w(W, "attn_sub_norm", b))  # [T, H D], normed before the output projection
    y = linear(out, w(W, "o", b), w(W, "o", b, bias=True) if C["o_bias"] else None)  # y: [T, hidden]
    if C["o_bias_last"] and b == len(PLAN) - 1:
        y = y + w(W, "dense_bias", b)  # the last layer's own output bias
    return y  # [T, hidden]


#.
#: shares_kv
#: !draft
SHARED_KV = {}  # span kind -> (k, v) of the last layer of that kind that projects its own
#.
#: draft
SHARED_KV = {}  # span kind -> (k, v): the target's keys and values, [KV, Tk, D] and [KV, Tk, DV]
POSITION = 0  # the last token's position: every draft step runs there
#.


#.
#: attention_so_far
def attention_so_far(x, W, b, span, use_rope):
    # Decoding through an attention layer. x: [T, hidden], the new tokens' inputs -> [T, hidden].
    # The layer keeps every input it has seen, attends over all of them and returns the new
    # rows: the keys and values it recomputes from those inputs are the numbers a KV cache holds
    # (kept as inputs here so that one attention() serves every variant; the executor caches K
    # and V).
    global STATE
    st = state_of(b)
    st["inputs"] = x if "inputs" not in st else np.concatenate([st["inputs"], x])  # [seen + T, hidden]
    saved, STATE = STATE, None  # every input so far, as one sequence
    try:
        return attention(st["inputs"], W, b, span, use_rope)[-len(x):]  # [T, hidden]
    finally:
        STATE = saved


#.
