

def load_safetensors(directory):
    """Every tensor of every .safetensors file in `directory`, as float32 arrays."""
    weights = {}
    files = sorted(Path(directory).glob("*.safetensors"))
    if not files:
        raise SystemExit(f"{directory}: holds no .safetensors files; this file reads a safetensors checkpoint (a folder with config.json and its *.safetensors), not a GGUF")
    for path in files:
        data = path.read_bytes()
        n = int.from_bytes(data[:8], "little")
        header = json.loads(data[8 : 8 + n])
        base = 8 + n
        for name, info in header.items():
            if name == "__metadata__":
                continue
            start, end = info["data_offsets"]
            raw = data[base + start : base + end]
            dtype = info["dtype"]
            if dtype == "BF16":
                a = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
            else:
                a = np.frombuffer(raw, dtype={"F32": "<f4", "F16": "<f2", "F64": "<f8", "I64": "<i8", "I32": "<i4", "U8": "u1"}[dtype])
            weights[name] = (a.astype(np.float32) if a.dtype.kind == "f" else a.astype(np.int64)).reshape(info["shape"])  # integers (stored buffers) kept exact
    return weights


def w(W, key, b=None, e=None, bias=False):
    if key not in NAMES:
        return None  # a tensor this model does not have (OLMo's norms have no weights)
#: hierarchy
    name = NAMES[key][1 if bias else 0]
    if b is not None and CONFIG["hierarchy"]:
        per = CONFIG["hierarchy"]["per_stack"]
        name, b = name.replace("{stack}", "L_module" if b < per else "H_module"), b % per  # layer b: layer b % per of its stack
    name = name.replace("{b}", str(b)).replace("{e}", str(e))
#.
#: !hierarchy
    name = NAMES[key][1 if bias else 0].replace("{b}", str(b)).replace("{e}", str(e))
#.
#: longcat
    if b is not None:
        name = name.replace("{p}", str(b // 2)).replace("{s}", str(b % 2))  # layer b: sublayer b % 2 of checkpoint layer b // 2
#.
#: attn_res
    if b is not None:
        name = name.replace("{b-1}", str(b - 1))  # layer b's tensor stored under b - 1
#.
#: shared
    if b is not None and CONFIG["shared"]:
        name = place(name, b)
#.
    return W[name].T if key in TRANSPOSED else W[name]  # as [out, in], however stored


#: shared
def place(name, b):
    # Zamba2: a shared block's tensors sit under the first layer that runs it ({m}); each visit
    # ({h}, the count of block-running layers before b) has its own adapters; a layer that runs a
    # block holds its Mamba2 under mamba_decoder. ({d})
    S = CONFIG["shared"]
    visit = S["layers"].index(b) if b in S["layers"] else None
    if visit is not None:
        name = name.replace("{m}", str(S["layers"][visit % S["blocks"]])).replace("{h}", str(visit))
    return name.replace("{d}", "" if visit is None else "mamba_decoder.")


#.
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


#: attention
def softmax(x):
    # x: [..., n] -> [..., n], over the last axis
    x = x - x.max(-1, keepdims=True)  # x: [..., n], shifted for stability
    e = np.exp(x)  # e: [..., n]
    return e / e.sum(-1, keepdims=True)  # [..., n]


#.
#= rope
#: attention
def apply_rope(x, cos, sin, interleaved=None):
    # x: [heads, T, d_head] -> same; rotates the first rot_dim dims, in pairs as the attention does
    # unless `interleaved` says otherwise
    dim = cos.shape[-1]  # rot_dim
    rot, rest = x[..., :dim], x[..., dim:]  # rot: [heads, T, rot_dim]; rest: [heads, T, d_head - rot_dim]
    if CONFIG["interleaved"] if interleaved is None else interleaved:
        a, b = rot[..., 0::2], rot[..., 1::2]  # a, b: [heads, T, rot_dim/2]
        c, s = cos[:, : dim // 2], sin[:, : dim // 2]  # c, s: [T, rot_dim/2]
        rot = np.stack([a * c - b * s, a * s + b * c], -1).reshape(rot.shape)  # rot: [heads, T, rot_dim]
    else:
        half = np.concatenate([-rot[..., dim // 2 :], rot[..., : dim // 2]], -1)  # half: [heads, T, rot_dim]
        rot = rot * cos + half * sin  # rot: [heads, T, rot_dim]
    return np.concatenate([rot, rest], -1)  # [heads, T, d_head]


#.
#: residual_conv
def residual_conv(u, wc, scaled=False):
    # u: [T, C], wc: [C, 1, K] -> [T, C]: u plus its causal depthwise convolution over time
    K = wc.shape[-1]
    padded = np.concatenate([np.zeros((K - 1, u.shape[1]), np.float32), u])  # K - 1 zero rows before the first token
    y = u + sum(wc[:, 0, j] * padded[j : j + len(u)] for j in range(K))  # [T, C]
    return y / np.float32(math.sqrt(K + 1)) if scaled else y  # [T, C]


#.
#: dynamic_conv
def dynamic_conv(u, xin, W, b, which, heads):
    # u: [T, C] (K or V once projected), xin: [T, hidden] (its input) -> [T, C]. Each token's taps are the stored ones
    # ([K, C], tap 0 the token itself) plus its own, projected from xin, one set per K/V head
    static = w(W, which + "_conv_static", b)  # static: [K, C]
    K, C_ = static.shape
    own = linear(xin, w(W, which + "_conv_dyn", b)).reshape(len(u), heads, K)  # own: [T, heads, K]
    taps = static.T[None] + np.repeat(own, C_ // heads, axis=1)  # taps: [T, C, K], each channel its head's
    padded = np.concatenate([np.zeros((K - 1, C_), np.float32), u])  # K - 1 zero rows before the first token
    mix = sum(taps[:, :, lag] * padded[K - 1 - lag : K - 1 - lag + len(u)] for lag in range(K))  # [T, C], lag tokens back
    return (u + mix) / np.float32(math.sqrt(2 * K + 1))  # [T, C]


#.
#: l2_clip_fn
def l2_clip(u, c):
    # u: [..., d] -> [..., d]: each vector scaled down to L2 norm c where longer
    return u * np.minimum(1, np.float32(c) / (np.sqrt((u * u).sum(-1, keepdims=True)) + np.float32(1e-6)))


#.
#: rel_logits
def rel_logits(x, W, b, R, T):
    # x: [T, hidden] -> [H, T, T]: each query's relative state mixes a bank of distance profiles
    r = linear(x, w(W, "rel_proj", b)).reshape(T, -1, R["d_rel"]).transpose(1, 0, 2)  # r: [H, T, d_rel]
#: rel_clip
    if R["clip"]:
        r = l2_clip(r * w(W, "rel_clip_scale", b)[:, None, :], R["clip"])  # r: [H, T, d_rel], scaled, then no longer than the threshold
#.
    per_distance = r @ w(W, "rel_bank", b)  # [H, T, extent]: the query's bias at each backward distance
    distance = np.arange(T)[:, None] - np.arange(T)[None, :]  # i - j: [T, T]
    index = np.broadcast_to(np.clip(distance, 0, R["extent"] - 1), per_distance.shape[:1] + distance.shape)  # [H, T, T]
    bias = np.take_along_axis(per_distance, index, -1)  # [H, T, T]
    return np.where((distance >= 0) & (distance < R["extent"]), bias, 0).astype(np.float32)  # nothing ahead or beyond the extent


#.
#: attention
def attention_mask(span, T):
    # -> [T, T] additive mask: 0 where query i may attend to key j, -inf elsewhere
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    ok = j <= i
    if span[0] == "sliding":
        ok &= (i - j) < span[1]
    if span[0] == "chunked":
        ok &= (j // span[1]) == (i // span[1])
    if span[0] == "whole":
        ok = np.ones((T, T), bool)  # both ways: every query sees every key, later ones too
    return np.where(ok, 0.0, -np.inf).astype(np.float32)


#.
#: buckets
def position_bias(T, W):
    # -> [H, T, T]: the learned bias of key j for the query at i, per head, one table for every layer
    B, P = CONFIG["buckets"], CONFIG["prompt"]
    rel = np.arange(T)[None, :] - np.arange(T)[:, None]  # rel: [T, T], j - i
    half = B["buckets"] // 2  # half the buckets for keys after the query, half for keys before
    exact = half // 2  # distances below this have a bucket each
    a = np.abs(rel)
    far = exact + (np.log(np.maximum(a, 1).astype(np.float32) / np.float32(exact)) / np.float32(math.log(B["max_distance"] / exact)) * np.float32(half - exact)).astype(np.int32)  # beyond, buckets spaced by log distance, in float32 as transformers computes them
    row = np.where(rel > 0, half, 0) + np.where(a < exact, a, np.minimum(far, half - 1))  # row: [T, T], the bucket
    if P:
        seg = np.where(np.arange(T) < P["length"], P["prompt_segment"], P["text_segment"])  # seg: [T], each position's segment
        across = B["buckets"] + seg[:, None] * P["segments"] + seg[None, :]  # a row of its own per pair of segments
        row = np.where(seg[:, None] == seg[None, :], row, across)  # row: [T, T]
    return w(W, "position_bias")[row].transpose(2, 0, 1)  # [H, T, T]


#.
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
#: indexer
def index_keys(x, cq, W, b, span):
    # DeepSeek sparse attention's indexer: which keys each query may attend to.
    # x: [T, hidden], cq: [T, q_lora] -> [T, T] additive mask, 0 at each query's top-k keys
    I = CONFIG["mla"]["indexer"]
#: indexer_lora
    if CONFIG["mla"]["lora_scales"]:
        cq = cq * np.float32(CONFIG["mla"]["lora_scales"][0])  # [T, q_lora], scaled as the attention's query is
#.
    T, IH, ID = x.shape[0], I["heads"], I["head_dim"]
#: !indexer_rope_last
    cos, sin = rope_tables(T, span)  # cos, sin: [T, rope]: the first rope dims of each head rotate
    rotate = lambda t: apply_rope(t, cos, sin, I["interleaved"])  # paired as the indexer pairs them
#.
#: indexer_rope_last
    cos, sin = rope_tables(T, span)  # cos, sin: [T, rope]: the last rope dims of each head rotate
    pass_ = ID - cos.shape[-1]  # the dims before them pass as they are
    rotate = lambda t: np.concatenate([t[..., :pass_], apply_rope(t[..., pass_:], cos, sin, I["interleaved"])], -1)
#.
    q = rotate(linear(cq, w(W, "index_q", b)).reshape(T, IH, ID).transpose(1, 0, 2))  # q: [IH, T, ID]
    k = linear(x, w(W, "index_k", b))  # k: [T, ID], one key per token for all indexer heads
    mu, var = k.mean(-1, keepdims=True), k.var(-1, keepdims=True)
    k = rotate((k - mu) / np.sqrt(var + I["key_eps"]) * w(W, "index_k_norm", b) + w(W, "index_k_norm", b, bias=True))  # LayerNorm, then RoPE
    weights = linear(x, w(W, "index_weights", b)) / np.sqrt(IH)  # weights: [T, IH]
    dots = np.maximum(q @ k.T / np.sqrt(ID), 0)  # dots: [IH, T, T], ReLU'd
    scores = np.einsum("th,hts->ts", weights, dots) + attention_mask(span, T)  # scores: [T, T]
    # Each query's top-k keys: the best first, equal scores to the later key.
    order = np.argsort(-scores[:, ::-1], axis=-1, kind="stable")[:, : I["top_k"]]  # [T, k], reversed positions
    keep = np.zeros((T, T), dtype=bool)
    np.put_along_axis(keep, T - 1 - order, True, -1)
    return np.where(keep, 0.0, -np.inf).astype(np.float32)  # [T, T]


#.
#: indexer_reuse
CHOSEN = {}  # the last indexer's choice, for the layers that have none of their own


#.
#: cca
def cca(x, W, b):
    # ZAYA's compressed convolutional attention. x: [T, hidden] -> q: [T, H D], k: [T, KV D], v: [T, KV D]
    C, Z = CONFIG, CONFIG["cca"]
    T, H, KV, D = x.shape[0], C["heads"], C["kv_heads"], C["head_dim"]
    G, K0, K1 = H // KV, Z["depthwise"], Z["grouped"]
    bias = lambda key: w(W, key, b, bias=True) if C["qkv_bias"] else None
    q, k = linear(x, w(W, "q", b), bias("q")), linear(x, w(W, "k", b), bias("k"))  # q: [T, H D], k: [T, KV D]
    q_res = (q.reshape(T, H, D) + np.repeat(k.reshape(T, KV, D), G, axis=1)) / 2  # [T, H, D], each query head with its K/V head's key
    k_res = q_res.reshape(T, KV, G, D).mean(2)  # [T, KV, D], over each K/V head's query heads
    reach = (K0 - 1) + (K1 - 1)  # the inputs both convolutions look back over
    u = np.concatenate([np.zeros((reach, (H + KV) * D), np.float32), np.concatenate([q, k], -1)])  # u: [reach + T, (H + KV) D], zeros before the first token
    w0 = w(W, "cca_dw", b)[:, 0].T  # [K0, (H + KV) D]: each channel's taps
    y = np.stack([(u[p : p + K0] * w0).sum(0) for p in range(T + K1 - 1)]) + w(W, "cca_dw", b, bias=True)  # y: [T + K1 - 1, (H + KV) D], depthwise
    w1 = w(W, "cca_gr", b).reshape(H + KV, D, D, K1)  # [head, out channel, in channel, tap]
    yh = y.reshape(-1, H + KV, D)  # [T + K1 - 1, head, channel]
    conv = np.stack([np.einsum("jhc,hocj->ho", yh[p : p + K1], w1) for p in range(T)]).reshape(T, -1) + w(W, "cca_gr", b, bias=True)  # [T, (H + KV) D], within each head
    q = conv[:, : H * D].reshape(T, H, D) + q_res  # q: [T, H, D]
    k = conv[:, H * D :].reshape(T, KV, D) + k_res  # k: [T, KV, D]
    vd = linear(x, w(W, "cca_v_delayed", b), bias("cca_v_delayed"))  # vd: [T, KV D / 2], read by the token after
    first = bias("cca_v_delayed") if C["qkv_bias"] else np.zeros(vd.shape[1], np.float32)  # what the first token reads: the projection of zeros
    v = np.concatenate([linear(x, w(W, "cca_v_current", b), bias("cca_v_current")), np.concatenate([first[None], vd[:-1]])], -1)  # v: [T, KV D]
    unit = lambda t: t * np.float32(math.sqrt(D)) / np.maximum(np.sqrt((t * t).sum(-1, keepdims=True)), np.finfo(np.float32).eps)  # each head to length sqrt(D)
    return unit(q).reshape(T, H * D), (unit(k) * w(W, "cca_temp", b)[None, :, None]).reshape(T, KV * D), v


#.
#: router_mlp
ROUTER = {}  # the router state ZAYA's layers carry from one to the next within a pass


#.
#: router_mlp
def router_mlp(x, W, b):
    # ZAYA's router. x: [T, hidden] -> logits: [T, E + 1], the last class computing nothing
    r = linear(x, w(W, "router_down", b), w(W, "router_down", b, bias=True))  # r: [T, R]
    if b > 0 and "state" in ROUTER:
        r = r + ROUTER["state"] * w(W, "router_state", b)  # plus the previous layer's state, scaled
    ROUTER["state"] = r  # carried on to the next layer
    h = act(linear(norm(r, w(W, "router_norm", b)), w(W, "router_fc1", b), w(W, "router_fc1", b, bias=True)), "gelu")  # [T, R]
    h = act(linear(h, w(W, "router_fc2", b), w(W, "router_fc2", b, bias=True)), "gelu")  # [T, R]
    return linear(h, w(W, "router", b))  # [T, E + 1]


#.
#: router_mlp
def top1(logits, balance):
    # ZAYA's choice for one token: the best class after the balancing biases, weighted by its probability
    p = softmax(logits)  # over the experts and the class that computes nothing
    e = int(np.argmax(p + balance))
    return [(e, float(p[e]))] if e < CONFIG["moe"]["experts"] else []


#.
#: block_index
def block_mask(x, W, b, span, I):
    # MiniMax-M3's lightning indexer: which blocks of keys each index head's group of query heads
    # attends to. x: [T, hidden] -> [IH, T, T] additive mask, 0 in the chosen blocks
    T, IH, ID, B = x.shape[0], I["heads"], I["head_dim"], I["block"]
    q = linear(x, w(W, "block_q", b)).reshape(T, IH, ID).transpose(1, 0, 2)  # q: [IH, T, ID]
    q = norm(q, w(W, "block_q_norm", b))  # q: [IH, T, ID], each index head's query normed
    k = norm(linear(x, w(W, "block_k", b)), w(W, "block_k_norm", b))[None]  # k: [1, T, ID], one key per token
    cos, sin = rope_tables(T, span)  # the attention's tables: the first rot_dim dims of each head turn
    q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
    scores = q @ k[0].T + attention_mask(span, T)  # scores: [IH, T, T], unscaled, -inf past each query
    nb = -(-T // B)  # blocks of B keys, the last possibly short
    pad = np.full((IH, T, nb * B - T), -np.inf, np.float32)
    blocks = np.concatenate([scores, pad], -1).reshape(IH, T, nb, B).max(-1)  # blocks: [IH, T, nb], each block's best score
    for t in range(T):
        for back in range(I["local"]):
            blocks[:, t, max(t // B - back, 0)] = np.inf  # the query's latest blocks always stay
    keep = np.zeros((IH, T, nb), dtype=bool)
    for h in range(IH):
        for t in range(T):
            best = [j for j in np.argsort(-blocks[h, t], kind="stable") if blocks[h, t, j] > -np.inf]  # best first
            keep[h, t, best[: I["top_k"]]] = True
    keep = np.repeat(keep, B, axis=-1)[..., :T]  # keep: [IH, T, T], by key
    return np.where(keep, 0.0, -np.inf).astype(np.float32)  # [IH, T, T]


#.
#: pool_index
POOL = None  # Kolibri 1.1: each query's pool of candidate keys [T, T], from the last layer that picked one


#.
#: pool_index
def e4m3(v):
    # v: positive float32 in [2^-9, 448] -> the nearest E4M3 value (3 mantissa bits; steps of 2^-9 below 2^-6), ties to even
    _, e = np.frexp(v)  # v = m 2^e, 0.5 <= m < 1
    q = np.ldexp(np.float32(1), np.maximum(e - 1, -6) - 3).astype(np.float32)  # the step at v's exponent
    return (np.round(v / q) * q).astype(np.float32)


#.
#: pool_index
def nvfp4(x):
    # x: [..., n], n a multiple of 16 -> x rounded to NVFP4 and back: each 16 values E2M1 magnitudes (0.5 steps below 2,
    # 1 below 4, 2 up to 6) times one E4M3 scale, max|x| / 6
    blocks = x.reshape(*x.shape[:-1], -1, 16).astype(np.float32)  # [..., n / 16, 16]
    scale = e4m3(np.clip(np.abs(blocks).max(-1, keepdims=True) / np.float32(6), np.float32(2.0**-9), np.float32(448)))  # [..., n / 16, 1]
    scaled = blocks / scale
    mag = np.minimum(np.abs(scaled), np.float32(6))
    step = np.where(mag < 2, np.float32(0.5), np.where(mag < 4, np.float32(1), np.float32(2)))
    return (np.copysign(np.round(mag / step) * step, scaled) * scale).reshape(x.shape).astype(np.float32)  # np.round: ties to even


#.
#: pool_index
def top_k_mask(scores, k):
    # scores: [n] -> bool [n]: the k highest finite scores, ties to the lower index
    order = np.lexsort((np.arange(len(scores)), -scores))  # best first, ties by index
    keep = np.zeros(len(scores), bool)
    keep[[j for j in order[:k] if np.isfinite(scores[j])]] = True
    return keep


#.
#: pool_index
def pool_mask(q, k0, b, P):
    # Kolibri 1.1's weightless indexer. q: [H, T, D], the layer's normed queries; k0: [T, D], the raw keys of K/V
    # head 0 -> [T, T], 0 where a query keeps a key, -inf elsewhere. A pool layer picks the pools (POOL) the
    # layers after it keep.
    global POOL
    T, D = k0.shape
    rq, rk = nvfp4(q[: P["heads"]]), nvfp4(k0)  # [heads, T, D], [T, D]: both rounded to NVFP4
    weight = np.float32(D**-0.5 / P["heads"])
    score = lambda keys: sum(np.maximum(rq[h] @ keys.T, 0) for h in range(P["heads"])) * weight  # [T, n]: ReLU'd, summed over the heads
    pos = np.arange(T)
    if b in P["pools"]:
        c = P["compression"]
        n = T // c  # complete blocks
        means = nvfp4(k0[: n * c].reshape(n, c, D).sum(1) / np.float32(c))  # [n, D]: each block's mean key, rounded
        scores = np.concatenate([score(means), np.zeros((T, 1), np.float32)], 1)  # [T, n + 1]: and the newest, incomplete block
        POOL = pos[None, :] <= pos[:, None]  # [T, T]: a query that sees at most P["pool"] keys keeps them all
        for t in range(T):
            L, j = t + 1, np.arange(n + 1)
            if L > P["pool"]:
                row = np.where(j < L // c, scores[t], 0)  # an incomplete newest block scores 0
                row = np.where(j >= -(-L // c), -np.inf, row)  # later blocks are not visible
                POOL[t] = np.repeat(top_k_mask(row, P["pool"] // c), c)[:T] & (pos < L)
    scores = score(rk)  # [T, T]
    keep = pos[None, :] <= pos[:, None]  # [T, T]: a query that sees at most top_k + sinks + local keys keeps them all
    for t in range(T):
        L = t + 1
        if L > P["top_k"] + P["local"] + P["sinks"]:
            candidates = POOL[t] & (pos >= P["sinks"]) & (pos < L - P["local"])
            chosen = top_k_mask(np.where(candidates, scores[t], -np.inf), P["top_k"])
            keep[t] = (chosen | (pos < P["sinks"]) | (pos >= L - P["local"])) & (pos < L)  # the best, the sinks, the latest
    return np.where(keep, 0, -np.inf).astype(np.float32)


#.
#: qsa
def qsa_mask(x, W, b, span, I):
    # Qwen4-Exp's QSA indexer: which keys every query head attends to. x: [T, hidden] -> [T, T]
    # additive mask, 0 in the chosen blocks and after the query's last complete block
    T, IH, ID, R = x.shape[0], I["heads"], I["head_dim"], I["ratio"]
    qk = linear(x, w(W, "qsa_qk", b))  # qk: [T, (IH + 1) ID], the index queries, then one raw key per token
    q = norm(qk[:, : IH * ID].reshape(T, IH, ID).transpose(1, 0, 2), w(W, "qsa_q_norm", b))  # q: [IH, T, ID], each head normed
    cos, sin = rope_tables(T, span)  # the attention's tables: the first rot_dim dims turn
    q = apply_rope(q, cos, sin)  # rotated at each query's position
    nb = T // R  # the complete blocks of R tokens
    k = qk[: nb * R, IH * ID :].reshape(nb, R, ID).mean(1)  # k: [nb, ID], each block's raw keys averaged
    k = apply_rope(norm(k, w(W, "qsa_k_norm", b))[None], cos[::R][:nb], sin[::R][:nb])[0]  # normed, rotated at the block's first position
    scores = np.maximum(q @ k.T, 0).sum(0) / np.float32(math.sqrt(ID))  # scores: [T, nb], ReLU'd, summed over the heads
    keep = np.zeros((T, T), dtype=bool)
    for t in range(T):
        seen = (t + 1) // R  # the complete blocks query t sees
        for j in np.argsort(-scores[t, :seen], kind="stable")[: I["budget"] // R]:
            keep[t, j * R : (j + 1) * R] = True  # the best blocks, ties to the earlier
        keep[t, seen * R : t + 1] = True  # and the tokens after the last complete block
    return np.where(keep, 0.0, -np.inf).astype(np.float32)  # [T, T]


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
#: !gate_before_qkv
        qkv = linear(x, w(W, "qkv", b), bias("qkv"))  # qkv: [T, (H + 2 KV) D]
#.
#: gate_before_qkv
        qkv = linear(x, w(W, "qkv", b), bias("qkv"))  # qkv: [T, (2 H + 2 KV) D]
        gate, qkv = qkv[:, : H * D], qkv[:, H * D :]  # gate: [T, H D], stored before the queries
#.
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
        cos, sin = rope_tables(T, span)  # cos, sin: [T, rot_dim]
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
        pos = np.arange(T, dtype=np.float64)  # the queries' positions
        if Q["form"] == "power":
            f = np.exp(Q["beta"] * np.log1p((pos + Q["shift"]) / Q["length"]))  # (1 + (p + shift) / length) ** beta
        elif Q["form"] == "floored":
            f = 1 + Q["beta"] * np.log(np.maximum((pos + Q["shift"]) / Q["length"], 1))  # 1 until p + shift reaches length, then logarithmic
        else:
            f = 1 + Q["beta"] * np.log1p(np.floor((pos + Q["shift"]) / Q["length"]))  # 1 until p + shift reaches length, then stepped
        q = q * f.astype(np.float32)[None, :, None]  # q: [H, T, D], grown with position
#.
#: ngpt
    q = q * ((w(W, "ngpt_q", b) * np.float32(C["ngpt"]["query"])) ** 2).reshape(H, 1, D)  # q: [H, T, D], each feature's learned scale, squared
#.
#: shares_kv
#: !kv_from
    if C["shares_kv"]:
        k, v = SHARED_KV[span[0]]  # k: [KV, T, D], v: [KV, T, DV], the last layer of this kind's that projects its own
    else:
        SHARED_KV[span[0]] = k, v  # for the later layers that share them
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
            bias = bias * f.astype(np.float32)[None, :, None]  # scaled with the queries
#.
        s = s + bias
#.
    if C["softcap"]:
        s = C["softcap"] * np.tanh(s / C["softcap"])  # s: [H, T, T]
    s = s + attention_mask(span, T)  # s: [H, T, T], -inf where masked
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
#: causal_conv
def causal_conv(u, W, b, bias, keys=("ssm_conv",)):
    # u: [T, C] -> [T, C]: the depthwise convolution the recurrent mixers start with, each
    # channel over its last K positions, zeros before the first token (its filters stored in
    # one tensor, or in several side by side). Its state: the last K - 1 inputs, kept for the
    # next call when decoding.
    wc = np.concatenate([w(W, key, b) for key in keys])[:, 0, :]  # wc: [C, K], one filter per channel
    T, K = u.shape[0], wc.shape[1]
    st = state_of(b)
    past = np.concatenate([st.get(keys[0], np.zeros((K - 1, u.shape[1]), np.float32)), u])  # [K - 1 + T, C]
    st[keys[0]] = past[T:]  # [K - 1, C], the conv state
    u = sum(past[j:j + T] * wc[:, j] for j in range(K))  # u: [T, C]
    return u + w(W, keys[0], b, bias=True) if bias else u  # [T, C]


#.
#: mamba2
def ssd_loop(xs, dt, A, B, Cr, D, h):
    # Mamba2's scan as its recurrence. xs: [T, H, P]; dt: [T, H]; A, D: [H]; B, Cr: [T, H, N]
    # (each head its group's); h: [H, P, N], the state carried in -> y: [T, H, P], and the state
    # after the last token. Each token, every head's state h [P, N] decays by exp(dt A) and takes
    # in dt x (outer) B; the head reads h . C, plus D x.
    T, H, P = xs.shape
    y = np.empty((T, H, P), np.float32)  # y: [T, H, P]
    for t in range(T):
        h = np.exp(dt[t] * A)[:, None, None] * h + (dt[t][:, None] * xs[t])[:, :, None] * B[t][:, None, :]  # h: [H, P, N]
        y[t] = (h * Cr[t][:, None, :]).sum(-1) + D[:, None] * xs[t]  # y[t]: [H, P]
    return y, h


#.
#: mamba2
def ssd_chunked(xs, dt, A, B, Cr, D, Q, h):
    # ssd_loop's sums grouped in chunks of Q tokens (the SSD form: transformers and anatomy's
    # executor compute a prompt this way; equal to ssd_loop up to rounding). Within a chunk, with
    # L the running sum of dt A from its start: y_t = sum over s <= t of exp(L_t - L_s) (C_t . B_s)
    # dt_s x_s, plus the state carried in, exp(L_t) h . C_t; the state then moves to the chunk's
    # end at once.
    T, H, P = xs.shape  # h: [H, P, N], the state at a chunk's start
    y = np.empty((T, H, P), np.float32)  # y: [T, H, P]
    for s0 in range(0, T, Q):
        x, d, b, c = xs[s0:s0 + Q], dt[s0:s0 + Q], B[s0:s0 + Q], Cr[s0:s0 + Q]  # one chunk of q tokens
        L = np.cumsum(d * A, axis=0)  # L: [q, H]
        q = len(L)
        seg = np.where(np.tril(np.ones((q, q), bool))[:, :, None], L[:, None, :] - L[None, :, :], -np.inf)  # [q, q, H]: from s to t, s <= t
        M = np.einsum("thn,shn->tsh", c, b) * np.exp(seg) * d[None, :, :]  # M: [q, q, H]
        y[s0:s0 + Q] = np.einsum("tsh,shp->thp", M, x) + np.exp(L)[:, :, None] * np.einsum("hpn,thn->thp", h, c) + D[None, :, None] * x  # [q, H, P]
        h = np.exp(L[-1])[:, None, None] * h + np.einsum("sh,shp,shn->hpn", np.exp(L[-1] - L) * d, x, b)  # [H, P, N]
    return y, h


#.
#: mamba2
def mamba2(x, W, b):
    # x: [T, hidden] -> [T, hidden]: Mamba2's mixer, its scan through a state of fixed size
    S = CONFIG["ssm"]
    T, H, P, N, G = x.shape[0], S["heads"], S["head_dim"], S["state"], S["groups"]
    I, CH = H * P, H * P + 2 * G * N  # the width of x, z and y; the convolved channels (x, B, C)
    bias = lambda key: w(W, key, b, bias=True) if S["bias"] else None
    p = linear(x, w(W, "ssm_in", b), bias("ssm_in"))  # p: [T, I + CH + H]
#: ssm_part_mults
    p = p * np.repeat(np.float32(S["part_mults"]), [I, I, G * N, G * N, H])  # [T, I + CH + H], the parts z, x, B, C, dt scaled (muP)
#.
    z, u, dt = p[:, :I], p[:, I:I + CH], p[:, I + CH:]  # z: [T, I], u: [T, CH], dt: [T, H]
    u = causal_conv(u, W, b, S["conv_bias"])  # u: [T, CH]
    u = u / (1 + np.exp(-u))  # u: [T, CH], SiLU
    xs = u[:, :I].reshape(T, H, P)  # xs: [T, H, P], the scan's input
    B = u[:, I:I + G * N].reshape(T, G, N)  # B: [T, G, N], what each position writes
    Cr = u[:, I + G * N:].reshape(T, G, N)  # Cr: [T, G, N], what each position reads
    dt = np.maximum(np.logaddexp(0, dt + w(W, "ssm_dt_bias", b)), S["dt_floor"])  # dt: [T, H], softplus: each head's step, at least the floor
    A = -np.exp(w(W, "ssm_a_log", b))  # A: [H], negative decay rates
    D = w(W, "ssm_d", b)  # D: [H], the input's skip weight
    g = np.arange(H) // (H // G)  # g: [H], each head's group
    st = state_of(b)
    h = st.get("ssm", np.zeros((H, P, N), np.float32))  # h: [H, P, N], the state carried in: zeros before the first token
    # One token through the recurrence; a prompt chunk by chunk, as the executor runs it.
    y, st["ssm"] = ssd_loop(xs, dt, A, B[:, g], Cr[:, g], D, h) if T == 1 else ssd_chunked(xs, dt, A, B[:, g], Cr[:, g], D, 64, h)  # y: [T, H, P]
#: !ssm_norm_before
    y = y.reshape(T, I) * (z / (1 + np.exp(-z)))  # y: [T, I], gated by SiLU(z)
#: !ssm_plain
    y = y.reshape(T, G, I // G)  # [T, G, I / G]
#.
#.
#: ssm_norm_before
    y = y.reshape(T, G, I // G)  # [T, G, I / G], normed before the gate
#.
#: !ssm_plain
    y = (y / np.sqrt((y * y).mean(-1, keepdims=True) + S["eps"])).reshape(T, I)  # y: [T, I], RMS per group
    y = y * w(W, "ssm_norm", b)  # [T, I]
#.
#: ssm_norm_before
    y = y * (z / (1 + np.exp(-z)))  # y: [T, I], gated by SiLU(z)
#.
    return linear(y, w(W, "ssm_out", b), bias("ssm_out"))  # [T, hidden]


#.
#: mamba
def mamba(x, W, b):
    # x: [T, hidden] -> [T, hidden]: Mamba's selective scan, token after token through a state
    # per channel
    S = CONFIG["s6"]
    T, I, N, R = x.shape[0], S["inner"], S["state"], S["dt_rank"]
    bias = lambda key: w(W, key, b, bias=True) if S["bias"] else None
    p = linear(x, w(W, "ssm_in", b), bias("ssm_in"))  # p: [T, 2I]
#: !s6_interleaved
    u, z = p[:, :I], p[:, I:]  # u: [T, I], the scan's input; z: [T, I], the gate
#.
#: s6_interleaved
    u, z = p[:, 0::2], p[:, 1::2]  # u: [T, I], the scan's input; z: [T, I], the gate (alternating rows)
#.
    u = causal_conv(u, W, b, S["conv_bias"])  # u: [T, I]
    xs = u / (1 + np.exp(-u))  # xs: [T, I], SiLU
#: !s6_heads
    sel = linear(xs, w(W, "ssm_x", b))  # sel: [T, R + 2N]
    def rms(v, key):  # the step's, B's and C's own RMS norm, with its weight where stored
        if not S["bcdt_norm"]:
            return v
        v = v / np.sqrt((v * v).mean(-1, keepdims=True) + S["bcdt_norm"])
        return v * w(W, key, b) if key in NAMES else v
    step, B, Cr = rms(sel[:, :R], "ssm_dt_norm"), rms(sel[:, R:R + N], "ssm_b_norm"), rms(sel[:, R + N:], "ssm_c_norm")  # [T, R], [T, N], [T, N]
    dt = np.logaddexp(0, linear(step, w(W, "ssm_dt", b), w(W, "ssm_dt", b, bias=True)))  # dt: [T, I], softplus
    A = -np.exp(w(W, "ssm_a_log", b))  # A: [I, N], negative decay rates
    D = w(W, "ssm_d", b)  # D: [I], the input's skip weight
    h = state_of(b).get("ssm", np.zeros((I, N), np.float32))  # h: [I, N], the state, carried token to token (zeros before the first)
    y = np.empty((T, I), np.float32)  # y: [T, I]
    for t in range(T):
        h = np.exp(dt[t][:, None] * A) * h + (dt[t] * xs[t])[:, None] * B[t][None, :]  # h: [I, N]
        y[t] = h @ Cr[t] + D * xs[t]  # y[t]: [I]
#.
#: s6_heads
    H, P = S["heads"], I // S["heads"]  # heads, each P channels with its own step, B and C
    B, Cr = np.empty((T, I, N), np.float32), np.empty((T, I, N), np.float32)  # per channel, its head's
    dt = np.empty((T, I), np.float32)  # dt: [T, I]
    for hd in range(H):
        ch = slice(hd * P, (hd + 1) * P)  # head hd's channels
        sel = xs[:, ch] @ w(W, "ssm_x", b)[hd].T  # sel: [T, R + 2N]
        B[:, ch], Cr[:, ch] = sel[:, None, R:R + N], sel[:, None, R + N:]  # [T, P, N] each
        dt[:, ch] = np.logaddexp(0, sel[:, :R] @ w(W, "ssm_dt", b)[hd].T + w(W, "ssm_dt", b, bias=True)[hd])  # [T, P], softplus
    A = -np.exp(w(W, "ssm_a_log", b)).reshape(I, N)  # A: [I, N], negative decay rates
    D = w(W, "ssm_d", b).reshape(I)  # D: [I], the input's skip weight
    h = state_of(b).get("ssm", np.zeros((I, N), np.float32))  # h: [I, N], the state, carried token to token (zeros before the first)
    y = np.empty((T, I), np.float32)  # y: [T, I]
    for t in range(T):
        h = np.exp(dt[t][:, None] * A) * h + (dt[t] * xs[t])[:, None] * B[t]  # h: [I, N]
        y[t] = (h * Cr[t]).sum(-1) + D * xs[t]  # y[t]: [I]
#.
    state_of(b)["ssm"] = h  # [I, N], kept for the next call when decoding
    y = y * (z / (1 + np.exp(-z)))  # y: [T, I], gated by SiLU(z)
    return linear(y, w(W, "ssm_out", b), bias("ssm_out"))  # [T, hidden]


#.
#: short_conv
def short_conv(x, W, b):
    # x: [T, hidden] -> [T, hidden]: LFM2's short gated convolution
    S = CONFIG["short_conv"]
    D = CONFIG["hidden"]
    bias = lambda key: w(W, key, b, bias=True) if S["bias"] else None
    p = linear(x, w(W, "ssm_in", b), bias("ssm_in"))  # p: [T, 3 hidden]
    B, Cg, xs = p[:, :D], p[:, D:2 * D], p[:, 2 * D:]  # each [T, hidden]
    u = B * xs  # u: [T, hidden], gated before the convolution
    u = causal_conv(u, W, b, S["bias"])  # u: [T, hidden]
    return linear(Cg * u, w(W, "ssm_out", b), bias("ssm_out"))  # [T, hidden], gated by C, projected back


#.
#: rwkv
def token_mix(x, W, b, key):
    # x: [T, C] -> [T, C]: each token blended, channel by channel, with the one before it (zeros
    # before the first; when decoding, the last of the previous call's, kept in the state) by the
    # stored mix mu
    st = state_of(b)
    prev = np.concatenate([st.get(key, np.zeros((1, x.shape[1]), np.float32)), x[:-1]])  # prev: [T, C]
    st[key] = x[-1:]  # [1, C]
    mu = w(W, key, b).reshape(-1)  # mu: [C]
    return x * mu + prev * (1 - mu)  # [T, C]


#.
#: mlstm
def mlstm(x, W, b):
    # x: [T, hidden] -> [T, hidden]: xLSTM's mLSTM, through each head's matrix memory C,
    # normalizer n and stabilizer m
    S = CONFIG["mlstm"]
    T, H = x.shape[0], S["heads"]
    DK, DV = S["qk_dim"] // H, S["v_dim"] // H  # a head's key and value widths
    cap = lambda v: S["gate_cap"] * np.tanh(v / S["gate_cap"])  # soft cap
#: !mlstm_fused
#: !mlstm_bias
    q = linear(x, w(W, "ssm_q", b)).reshape(T, H, DK) / np.float32(math.sqrt(DK))  # [T, H, DK], scaled
    k = linear(x, w(W, "ssm_k", b)).reshape(T, H, DK)  # [T, H, DK]
    v = linear(x, w(W, "ssm_v", b)).reshape(T, H, DV)  # [T, H, DV]
    o = linear(x, w(W, "ssm_z", b))  # [T, H DV], the output gate
#.
#: mlstm_bias
    q = linear(x, w(W, "ssm_q", b), w(W, "ssm_q", b, bias=True)).reshape(T, H, DK) / np.float32(math.sqrt(DK))  # [T, H, DK], scaled
    k = linear(x, w(W, "ssm_k", b), w(W, "ssm_k", b, bias=True)).reshape(T, H, DK)  # [T, H, DK]
    v = linear(x, w(W, "ssm_v", b), w(W, "ssm_v", b, bias=True)).reshape(T, H, DV)  # [T, H, DV]
    o = linear(x, w(W, "ssm_z", b), w(W, "ssm_z", b, bias=True))  # [T, H DV], the output gate
#.
    i = cap(linear(x, w(W, "ssm_beta", b), w(W, "ssm_beta", b, bias=True)))  # [T, H], input gate
    f = cap(linear(x, w(W, "ssm_alpha", b), w(W, "ssm_alpha", b, bias=True)))  # [T, H], forget gate
#.
#: mlstm_fused
    QK, V = S["qk_dim"], S["v_dim"]
#: !mlstm_bias
    p = linear(x, w(W, "ssm_in", b))  # p: [T, 2 QK + 2 V], q | k | v | o stored as one projection
#.
#: mlstm_bias
    p = linear(x, w(W, "ssm_in", b), w(W, "ssm_in", b, bias=True))  # p: [T, 2 QK + 2 V], q | k | v | o stored as one projection
#.
    q = p[:, :QK].reshape(T, H, DK) / np.float32(math.sqrt(DK))  # [T, H, DK], scaled
    k = p[:, QK : 2 * QK].reshape(T, H, DK)  # [T, H, DK]
    v = p[:, 2 * QK : 2 * QK + V].reshape(T, H, DV)  # [T, H, DV]
    o = p[:, 2 * QK + V :]  # [T, H DV], the output gate
    g = cap(linear(x, w(W, "ssm_ba", b), w(W, "ssm_ba", b, bias=True)))  # g: [T, 2 H], the input gates, then the forget gates
    i, f = g[:, :H], g[:, H:]  # [T, H] each
#.
    st = state_of(b)
    carried = st.get("ssm", (np.zeros((H, DK, DV)), np.zeros((H, DK)), np.zeros(H)))  # memory, normalizer, stabilizer: zeros before the first token
    # One token through the recurrence; a prompt chunk by chunk, as the executor runs it.
    out, st["ssm"] = mlstm_loop(q, k, v, i, f, S["eps"], carried) if T == 1 else mlstm_chunked(q, k, v, i, f, S["eps"], 64, carried)  # out: [T, H, DV]
    mean = out.mean(-1, keepdims=True)
    var = ((out - mean) ** 2).mean(-1, keepdims=True)
#: !mlstm_bias
    hn = ((out - mean) / np.sqrt(var + S["norm_eps"])).reshape(T, -1) * w(W, "ssm_norm", b)  # [T, H DV], LayerNorm per head
#.
#: mlstm_bias
    hn = ((out - mean) / np.sqrt(var + S["norm_eps"])).reshape(T, -1) * w(W, "ssm_norm", b) + w(W, "ssm_norm", b, bias=True)  # [T, H DV], LayerNorm per head, shifted
#.
#: !mlstm_bias
    return linear(hn / (1 + np.exp(-o)), w(W, "ssm_out", b))  # [T, hidden], gated by sigmoid(o)
#.
#: mlstm_bias
    return linear(hn / (1 + np.exp(-o)), w(W, "ssm_out", b), w(W, "ssm_out", b, bias=True))  # [T, hidden], gated by sigmoid(o)
#.


#.
#: mlstm
def mlstm_loop(q, k, v, i, f, eps, state):
    # The mLSTM token after token. q (scaled), k: [T, H, DK]; v: [T, H, DV]; i, f (the gates'
    # pre-activations): [T, H]; state: (C, n, m) carried in -> [T, H, DV], and the state after
    # the last token. Each token, every head's memory C and normalizer n fade by sigmoid(f) and
    # take exp(i) k (x) v and exp(i) k, both divided by exp(m), m the running maximum of the log
    # gates (the stabilizer: every exp stays at most 1).
    T, H, DK = k.shape
    C, n, m = state  # each head's memory [H, DK, DV], normalizer [H, DK] and stabilizer [H], in float64
    out = np.empty(v.shape, np.float32)  # out: [T, H, DV]
    for t in range(T):
        f_log = -np.logaddexp(0, -f[t].astype(np.float64))  # [H], log sigmoid(f)
        m_new = np.maximum(f_log + m, i[t])  # [H]
        fa, ia = np.exp(f_log + m - m_new), np.exp(i[t] - m_new)  # [H] each, both at most 1
        C = fa[:, None, None] * C + ia[:, None, None] * k[t][:, :, None] * v[t][:, None, :]  # [H, DK, DV]
        n = fa[:, None] * n + ia[:, None] * k[t]  # [H, DK]
        m = m_new
        num = np.einsum("hk,hkv->hv", q[t], C)  # [H, DV]
        den = np.maximum(np.abs((q[t] * n).sum(-1)), np.exp(-m)) + eps  # [H]
        out[t] = num / den[:, None]
    return out, (C, n, m)


#.
#: mlstm
def mlstm_chunked(q, k, v, i, f, eps, Q, state):
    # mlstm_loop's outputs computed in chunks of Q tokens (anatomy's executor runs a prompt this
    # way; equal to mlstm_loop up to rounding). Within a chunk, with F the running sum of
    # log sigmoid(f) and m0 the stabilizer carried in, the loop's stabilizer is m_t = F_t +
    # max(m0, max over s <= t of (i_s - F_s)); token t weighs token s by D_ts = exp(i_s + F_t -
    # F_s - m_t) and the memory carried in by exp(F_t + m0 - m_t), all at most 1; the state then
    # moves to the chunk's end at once.
    T, H, DK = k.shape
    C, n, m = state  # the state at a chunk's start
    out = np.empty(v.shape, np.float32)  # out: [T, H, DV]
    for t0 in range(0, T, Q):
        qc, kc, vc = (a[t0:t0 + Q].transpose(1, 0, 2).astype(np.float64) for a in (q, k, v))  # [H, c, ·]
        ic = i[t0:t0 + Q].T.astype(np.float64)  # [H, c]
        F = np.cumsum(-np.logaddexp(0, -f[t0:t0 + Q].T.astype(np.float64)), axis=1)  # [H, c]
        mt = F + np.maximum(m[:, None], np.maximum.accumulate(ic - F, axis=1))  # [H, c], the loop's stabilizers
        c = F.shape[1]
        D = np.exp(np.where(np.tril(np.ones((c, c), bool)), ic[:, None, :] + F[:, :, None] - F[:, None, :] - mt[:, :, None], -np.inf))  # [H, c, c]
        carry = np.exp(F + m[:, None] - mt)  # [H, c]
        S = qc @ kc.transpose(0, 2, 1) * D  # [H, c, c]
        num = S @ vc + carry[:, :, None] * (qc @ C)  # [H, c, DV]
        qn = S.sum(-1) + carry * (qc @ n[:, :, None])[..., 0]  # [H, c], q . n
        out[t0:t0 + Q] = (num / (np.maximum(np.abs(qn), np.exp(-mt)) + eps)[:, :, None]).transpose(1, 0, 2)
        C = carry[:, -1, None, None] * C + (kc * D[:, -1, :, None]).transpose(0, 2, 1) @ vc  # [H, DK, DV]
        n = carry[:, -1, None] * n + (D[:, -1, :, None] * kc).sum(1)  # [H, DK]
        m = mt[:, -1]  # [H]
    return out, (C, n, m)


#.
#: rwkv
def time_mix(x, W, b):
    # x: [T, hidden] -> [T, hidden]: RWKV's time mixing, the WKV sums carried token after token
    k = linear(token_mix(x, W, b, "tm_mix_k"), w(W, "tm_key", b))  # k: [T, A]
    v = linear(token_mix(x, W, b, "tm_mix_v"), w(W, "tm_value", b))  # v: [T, A]
    r = 1 / (1 + np.exp(-linear(token_mix(x, W, b, "tm_mix_r"), w(W, "tm_receptance", b))))  # r: [T, A], the gate
    decay, u = -np.exp(w(W, "tm_decay", b)), w(W, "tm_first", b)  # [A] each
    T, A = k.shape
    st = state_of(b)
    # num, den: [A], the sums of exp(k) v and exp(k), scaled by exp(-top); top: [A], the largest
    # exponent so far (the state: empty sums before the first token)
    num, den, top = st.get("wkv", (np.zeros(A, np.float32), np.zeros(A, np.float32), np.full(A, -1e38, np.float32)))
    out = np.empty((T, A), np.float32)  # out: [T, A]
    for t in range(T):
        m = np.maximum(top, u + k[t])  # the current token weighted by exp(u + k)
        e1, e2 = np.exp(top - m), np.exp(u + k[t] - m)
        out[t] = (e1 * num + e2 * v[t]) / (e1 * den + e2)  # [A]
        m = np.maximum(top + decay, k[t])  # the sums fade by exp(decay), then take this token
        e1, e2 = np.exp(top + decay - m), np.exp(k[t] - m)
        num, den, top = e1 * num + e2 * v[t], e1 * den + e2, m
    st["wkv"] = num, den, top  # kept for the next call when decoding
    return linear(r * out, w(W, "tm_output", b))  # [T, hidden]


#.
#: rwkv
def channel_mix(x, W, b):
    # x: [T, hidden] -> [T, hidden]: RWKV's channel mixing, a squared-ReLU MLP gated by sigma(r)
    h = np.maximum(linear(token_mix(x, W, b, "cm_mix_k"), w(W, "up", b)), 0) ** 2  # h: [T, F]
    r = 1 / (1 + np.exp(-linear(token_mix(x, W, b, "cm_mix_r"), w(W, "cm_receptance", b))))  # r: [T, hidden]
    return r * linear(h, w(W, "down", b))  # [T, hidden]


#.
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
#: lightning
def lightning(x, W, b):
    # x: [T, hidden] -> [T, hidden]. Lightning attention: each head's key x value memory fades at a
    # fixed rate per head (stored as slope_rate) and takes k (x) v each token; no softmax, no scale.
    S = CONFIG["lightning"]
    T, H, D = x.shape[0], S["heads"], S["head_dim"]
    qkv = act(linear(x, w(W, "ssm_in", b)), S["act"]).reshape(T, H, 3 * D)  # qkv: [T, H, 3 D], each head's q | k | v
    q, k, v = qkv[..., :D], qkv[..., D : 2 * D], qkv[..., 2 * D :]  # each [T, H, D]
    rate = w(W, "light_slope", b).reshape(H)  # rate: [H], each head's fade s
    st = state_of(b)
    state = st.get("ssm", np.zeros((H, D, D), np.float32))  # state: [H, D, D], key x value: zeros before the first token
    # One token through the recurrence; a prompt chunk by chunk, as the executor runs it.
    out, st["ssm"] = light_loop(q, k, v, rate, state) if T == 1 else light_chunked(q, k, v, rate, 64, state)  # out: [T, H, D]
    o = out.reshape(T, H * D)  # o: [T, H D]
    o = o / np.sqrt((o * o).mean(-1, keepdims=True) + S["eps"]) * w(W, "ssm_norm", b)  # [T, H D], RMS over all heads
    g = 1 / (1 + np.exp(-linear(x, w(W, "ssm_z", b))))  # g: [T, H D], the output gate
    return linear(g * o, w(W, "ssm_out", b))  # [T, hidden]


#.
#: lightning
def light_loop(q, k, v, rate, state):
    # Lightning attention token after token. q, k, v: [T, H, D]; rate: [H]; state: [H, D, D],
    # key x value, the cache of this layer -> out: [T, H, D], and the state after the last token.
    # Each token, every head's key x value memory fades by exp(-s) and takes k (x) v; the head
    # reads q . memory.
    T, H, D = q.shape
    fade = np.exp(-rate)[:, None, None]  # fade: [H, 1, 1]
    out = np.empty((T, H, D), np.float32)  # out: [T, H, D]
    for t in range(T):
        state = fade * state + k[t][:, :, None] * v[t][:, None, :]  # [H, D, D]
        out[t] = (q[t][:, :, None] * state).sum(1)  # [H, D], q . S per head
    return out, state


#.
#: lightning
def light_chunked(q, k, v, rate, C, state):
    # light_loop's outputs computed in chunks of C tokens (transformers and anatomy's executor
    # run a prompt this way; equal to light_loop up to rounding). Within a chunk, token i reads
    # (q_i . k_j) exp(-s (i - j)) v_j for j <= i, plus q_i exp(-s (i + 1)) times the memory
    # carried in; the memory then moves to the chunk's end at once.
    T, H, D = q.shape  # state: [H, D, D], the memory at a chunk's start
    out = np.empty((T, H, D), np.float32)  # out: [T, H, D]
    s = rate[:, None, None]  # [H, 1, 1]
    for t0 in range(0, T, C):
        qc, kc, vc = (a[t0:t0 + C].transpose(1, 0, 2) for a in (q, k, v))  # each [H, c, D]
        i = np.arange(qc.shape[1])  # i: [c], positions within the chunk
        decay = np.where(i[:, None] >= i, np.exp(-s * np.maximum(i[:, None] - i, 0)), 0)  # [H, c, c], 0 above the diagonal
        out[t0:t0 + C] = ((qc @ kc.transpose(0, 2, 1) * decay) @ vc + (qc * np.exp(-s * (i[:, None] + 1))) @ state).transpose(1, 0, 2)
        state = np.exp(-s * len(i)) * state + (kc * np.exp(-s * (len(i) - 1 - i[:, None]))).transpose(0, 2, 1) @ vc  # [H, D, D]
    return out, state


#.
#: delta
def delta_loop(q, k, v, g, beta, s):
    # The gated delta rule token after token. q, k: [T, VH, DK] (each value head its key head's);
    # v: [T, VH, DV]; g (log decay): [T, VH], or [T, VH, DK] for a decay per key channel; beta:
    # [T, VH]; s: [VH, DK, DV], the memory carried in -> o: [T, VH, DV], and the memory after the
    # last token. Each token, every head's memory s [DK, DV] decays by exp(g) (each key channel's
    # row by its own), then moves what it recalls for k toward v by beta; the head reads s with q.
    T, VH, DK = k.shape
    g = g.reshape(T, VH, -1)  # g: [T, VH, 1 or DK]
    o = np.empty(v.shape, np.float32)  # o: [T, VH, DV]
    for t in range(T):
        s = s * np.exp(g[t])[:, :, None]  # [VH, DK, DV], decayed
        delta = (v[t] - np.einsum("hkv,hk->hv", s, k[t])) * beta[t][:, None]  # delta: [VH, DV], the value minus what k recalls
        s = s + k[t][:, :, None] * delta[:, None, :]  # s: [VH, DK, DV]
        o[t] = np.einsum("hkv,hk->hv", s, q[t])  # o[t]: [VH, DV], read with q
    return o, s


#.
#: delta
def delta_chunked(q, k, v, g, beta, C, s):
    # delta_loop's memory and outputs, computed in chunks of C tokens (the WY form: transformers
    # and anatomy's executor compute a prompt this way; equal to delta_loop up to rounding).
    # Within a chunk, with c the running sum of g and D_ij = exp(c_i - c_j) for j <= i (per key
    # channel where g is): the chunk's corrections U solve (I + strictly-lower(beta_i k_i . (D_ij
    # k_j))) U = beta v - (beta k exp(c)) s, s the memory carried in; each output is (q exp(c)) s
    # + (q_i . (D_ij k_j)) U; the memory then moves to the chunk's end at once.
    T, VH, DK = k.shape
    g = np.broadcast_to(g.reshape(T, VH, -1), (T, VH, DK))  # g: [T, VH, DK], a head's decay in each of its channels
    # s: [VH, DK, DV], the memory at a chunk's start
    o = np.empty(v.shape, np.float32)  # o: [T, VH, DV]
    for t0 in range(0, T, C):
        qc, kc, vc, gc = (a[t0:t0 + C].transpose(1, 0, 2).astype(np.float64) for a in (q, k, v, g))  # [VH, c, ·]
        bc, c = beta[t0:t0 + C].T[:, :, None], np.cumsum(gc, axis=1)  # [VH, c, 1], [VH, c, DK]
        n = c.shape[1]
        D = np.exp(np.where(np.tril(np.ones((n, n), bool))[:, :, None], c[:, :, None] - c[:, None], -np.inf))  # [VH, c, c, DK]
        L = np.tril(np.einsum("hid,hjd,hijd->hij", bc * kc, kc, D), -1)  # [VH, c, c], strictly lower
        rhs = bc * vc - (bc * kc * np.exp(c)) @ s  # [VH, c, DV]
        U = np.empty_like(rhs)
        for i in range(n):  # forward substitution: U_i = rhs_i - sum over j < i of L_ij U_j
            U[:, i] = rhs[:, i] - np.einsum("hj,hjv->hv", L[:, i, :i], U[:, :i])
        o[t0:t0 + C] = ((qc * np.exp(c)) @ s + np.einsum("hid,hjd,hijd->hij", qc, kc, D) @ U).transpose(1, 0, 2)
        s = np.exp(c[:, -1])[:, :, None] * s + (kc * np.exp(c[:, -1:] - c)).transpose(0, 2, 1) @ U
    return o, s


#.
#: delta_gated
def gated_delta_net(x, W, b):
    # x: [T, hidden] -> [T, hidden]: Gated DeltaNet, a memory per head updated by the delta rule
    S = CONFIG["delta"]
    T, KH, VH, DK, DV = x.shape[0], S["key_heads"], S["value_heads"], S["key_dim"], S["value_dim"]
    R = VH // KH  # value heads per key head
    conv_keys = ("ssm_conv",)  # one convolution over q | k | v
    if S["store"] == "fused":
        # one projection: q | k | v, then z, beta and alpha
        p = linear(x, w(W, "ssm_in", b))  # p: [T, 2 KH DK + 2 VH DV + 2 VH]
        CH, VD = 2 * KH * DK + VH * DV, VH * DV
        u, z = p[:, :CH], p[:, CH:CH + VD]  # u: [T, CH], z: [T, VH DV]
        beta, alpha = p[:, CH + VD:CH + VD + VH], p[:, CH + VD + VH:]  # [T, VH] each
    elif S["store"] == "grouped":
        # per key head: its q, its k, its value heads' v, their z; and their beta, then their alpha
        p = linear(x, w(W, "ssm_in", b)).reshape(T, KH, 2 * DK + 2 * R * DV)  # p: [T, KH, 2 DK + 2 R DV]
        q, k = p[:, :, :DK].reshape(T, -1), p[:, :, DK:2 * DK].reshape(T, -1)  # q, k: [T, KH DK]
        v = p[:, :, 2 * DK:2 * DK + R * DV].reshape(T, -1)  # v: [T, VH DV]
        z = p[:, :, 2 * DK + R * DV:].reshape(T, -1)  # z: [T, VH DV]
        ba = linear(x, w(W, "ssm_ba", b)).reshape(T, KH, 2 * R)  # ba: [T, KH, 2R]
        beta, alpha = ba[:, :, :R].reshape(T, VH), ba[:, :, R:].reshape(T, VH)  # [T, VH] each
        u = np.concatenate([q, k, v], -1)  # u: [T, 2 KH DK + VH DV]
    else:
        if S["store"] == "olmo":
            # q, k and v projected apart, and their convolutions stored apart
            u = np.concatenate([linear(x, w(W, "ssm_" + key, b)) for key in "qkv"], -1)  # u: [T, 2 KH DK + VH DV]
            conv_keys = ("ssm_conv_q", "ssm_conv_k", "ssm_conv_v")
        else:
            u = linear(x, w(W, "ssm_in", b))  # u: [T, 2 KH DK + VH DV], q | k | v
        z = linear(x, w(W, "ssm_z", b))  # z: [T, VH DV]
        beta, alpha = linear(x, w(W, "ssm_beta", b)), linear(x, w(W, "ssm_alpha", b))  # [T, VH] each
    u = causal_conv(u, W, b, False, conv_keys)  # u: [T, CH]
    u = u / (1 + np.exp(-u))  # u: [T, CH], SiLU
    l2 = lambda t: t / np.sqrt((t * t).sum(-1, keepdims=True) + 1e-6)  # each head to unit length
    q = l2(u[:, :KH * DK].reshape(T, KH, DK)) / np.sqrt(DK)  # q: [T, KH, DK], scaled by 1/sqrt(DK)
    k = l2(u[:, KH * DK:2 * KH * DK].reshape(T, KH, DK))  # k: [T, KH, DK]
    v = u[:, 2 * KH * DK:].reshape(T, VH, DV)  # v: [T, VH, DV]
    beta = S["beta_scale"] / (1 + np.exp(-beta))  # beta: [T, VH], how far each write goes (past 1 it overshoots)
    g = -np.exp(w(W, "ssm_a_log", b)) * np.logaddexp(0, alpha + w(W, "ssm_dt_bias", b))  # g: [T, VH], log decay
    kh = np.arange(VH) // R  # kh: [VH], the key head each value head reads
    st = state_of(b)
    s = st.get("ssm", np.zeros((VH, DK, DV)))  # s: [VH, DK, DV], the memory carried in (zeros before the first token; in float64: rank-one updates summed in float32 drift)
    # One token through the rule; a prompt chunk by chunk, as the executor runs it.
    o, st["ssm"] = delta_loop(q[:, kh], k[:, kh], v, g, beta, s) if T == 1 else delta_chunked(q[:, kh], k[:, kh], v, g, beta, 64, s)  # o: [T, VH, DV]
    o = o / np.sqrt((o * o).mean(-1, keepdims=True) + S["eps"]) * w(W, "ssm_norm", b)  # [T, VH, DV], RMS per head
#: !delta_sigmoid_gate
    o = o * (z.reshape(T, VH, DV) / (1 + np.exp(-z.reshape(T, VH, DV))))  # [T, VH, DV], gated by SiLU(z)
#.
#: delta_sigmoid_gate
    o = o / (1 + np.exp(-z.reshape(T, VH, DV)))  # [T, VH, DV], gated by σ(z)
#.
    return linear(o.reshape(T, VH * DV), w(W, "ssm_out", b))  # [T, hidden]


#.
#: delta_kimi
def kimi_delta_attention(x, W, b):
    # x: [T, hidden] -> [T, hidden]: Kimi Delta Attention, the delta rule with a decay per key
    # channel
    S = CONFIG["delta"]
    T, H, DK, DV = x.shape[0], S["value_heads"], S["key_dim"], S["value_dim"]
    silu = lambda t: t / (1 + np.exp(-t))
    conv = lambda key: silu(causal_conv(linear(x, w(W, "ssm_" + key, b)), W, b, False, ("ssm_conv_" + key,)))  # projected, then convolved
    l2 = lambda t: t / np.sqrt((t * t).sum(-1, keepdims=True) + 1e-6)  # each head to unit length
    q = l2(conv("q").reshape(T, H, DK)) / np.sqrt(DK)  # q: [T, H, DK], scaled by 1/sqrt(DK)
    k = l2(conv("k").reshape(T, H, DK))  # k: [T, H, DK]
    v = conv("v").reshape(T, H, DV)  # v: [T, H, DV]
    beta = 1 / (1 + np.exp(-linear(x, w(W, "ssm_beta", b))))  # beta: [T, H], how far each write goes
#: !delta_bailing
    f = linear(linear(x, w(W, "ssm_f_a", b)), w(W, "ssm_f_b", b)) + w(W, "ssm_dt_bias", b)  # f: [T, H DK], through rank DK
#.
#: delta_bailing
    f = linear(x, w(W, "ssm_f_b", b)) + w(W, "ssm_dt_bias", b)  # f: [T, H DK]
#.
#: !delta_gate_floor
    g = -np.exp(w(W, "ssm_a_log", b).reshape(H, 1)) * np.logaddexp(0, f.reshape(T, H, DK))  # g: [T, H, DK], log decay per key channel
#.
#: delta_gate_floor
    g = np.float32(S["gate_floor"]) / (1 + np.exp(-np.exp(w(W, "ssm_a_log", b).reshape(H, 1)) * f.reshape(T, H, DK)))  # g: [T, H, DK], log decay per key channel, bounded below
#.
    st = state_of(b)
    s = st.get("ssm", np.zeros((H, DK, DV)))  # s: [H, DK, DV], the memory carried in: zeros before the first token
    # One token through the rule; a prompt chunk by chunk, as the executor runs it.
    o, st["ssm"] = delta_loop(q, k, v, g, beta, s) if T == 1 else delta_chunked(q, k, v, g, beta, 64, s)  # o: [T, H, DV]
    o = o / np.sqrt((o * o).mean(-1, keepdims=True) + S["eps"]) * w(W, "ssm_norm", b)  # [T, H, DV], RMS per head
#: !delta_bailing
    gate = linear(linear(x, w(W, "ssm_g_a", b)), w(W, "ssm_g_b", b)).reshape(T, H, DV)  # gate: [T, H, DV], through rank DK
#.
#: delta_bailing
    gate = linear(x, w(W, "ssm_g_b", b)).reshape(T, H, DV)  # gate: [T, H, DV]
#.
    o = o / (1 + np.exp(-gate))  # [T, H, DV], gated by sigmoid
    return linear(o.reshape(T, H * DV), w(W, "ssm_out", b))  # [T, hidden]


#.
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
#: adapters
def adapter(x, W, b, key):
    # x: [T, in] -> [T, out]: this visit's low-rank adapter on a shared projection, B (A x)
    return linear(linear(x, w(W, key + "_adapter_a", b)), w(W, key + "_adapter_b", b))  # [T, out]


#.
#: shared_blocks
def shared_block(x, x0, W, b):
    # x, x0 (the stream, the embeddings): [T, hidden] -> [T, hidden]. Zamba2's shared block:
    # attention and the MLP over both side by side, each after its norm, with no residual; then
    # this layer's own projection
    h = norm(np.concatenate([x, x0], axis=-1), w(W, "shared_norm", b))  # h: [T, 2 hidden]
    a = attention(h, W, b, ("full", 0), PLAN[b][1])  # a: [T, hidden]
    m = mlp(norm(a, w(W, "shared_ffn_norm", b)), W, b)  # m: [T, hidden]
    return linear(m, w(W, "shared_linear", b))  # [T, hidden]


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
#: moe
def route(logits, correction):
    # logits: [E] -> list of (expert, weight) for one token
    M = CONFIG["moe"]
    k, kind = M["top_k"], M["scoring"]  # experts per token, how they are scored
    if kind == "sparsemixer":
        # PhiMoE: the best expert, then the best of the rest, each weighted by a softmax over
        # the logits close enough to its own (relative distance at most 2 eps)
        idx, wts, masked = [], [], logits.astype(np.float32)  # masked: [E]
        for _ in range(2):
            e = int(np.argmax(masked))  # the best expert left
            m = masked[e]
            with np.errstate(divide="ignore", invalid="ignore"):
                near = ~((m - logits) / np.maximum(np.abs(logits), m) > 2 * M["eps"])  # near: [E]
            g = np.where(near & np.isfinite(masked), masked, -np.inf)  # g: [E]
            idx.append(e)
            wts.append(softmax(g)[e])
            masked = np.where(np.arange(len(masked)) == e, -np.inf, masked)  # the chosen one is out
        idx, wts = np.array(idx), np.array(wts, np.float32)  # idx, wts: [2]
    elif kind in ("topk_softmax", "topk_sigmoid"):
        idx = np.argsort(-logits, kind="stable")[:k]  # idx: [k]
        vals = logits[idx]  # vals: [k]
        wts = softmax(vals) if kind == "topk_softmax" else 1 / (1 + np.exp(-vals))  # wts: [k]
    else:
        if kind == "sqrt_softplus":
            probs = np.sqrt(np.logaddexp(0, logits))  # probs: [E], √softplus
        else:
            probs = softmax(logits) if kind == "softmax" else 1 / (1 + np.exp(-logits))  # probs: [E]
        biased = logits if kind == "sigmoid_biased_logits" else probs  # what the bias is added to
        choice = biased + (correction if correction is not None else 0)  # choice: [E], bias for choosing only
        if M["n_group"] > 1:
            g = M["n_group"]  # groups
            per = len(choice) // g  # experts per group
            grouped = np.sort(choice.reshape(g, per), -1)[:, ::-1]  # grouped: [groups, per], best first
            score = grouped[:, :2].sum(-1) if kind == "sigmoid" else grouped[:, 0]  # score: [groups]
            keep = np.argsort(-score, kind="stable")[: M["topk_group"]]  # keep: [topk_group]
            choice = np.where(np.isin(np.arange(len(choice)) // per, keep), choice, -np.inf)  # choice: [E], other groups' experts out
        idx = np.argsort(-choice, kind="stable")[:k]  # idx: [k]
        wts = probs[idx]  # wts: [k]
        if M["norm_topk_prob"]:
            wts = wts / (wts.sum() + (M["renorm_eps"] if kind != "softmax" else 0))  # wts: [k], summing to 1
    return list(zip(idx.tolist(), (wts * M["routed_scaling"]).tolist()))  # k × (expert, weight)


#.
#: hashed
def route_hashed(logits, experts):
    # DeepSeek-V4's first layers: logits: [E], experts: [k], the ones the stored table lists for
    # this token -> list of (expert, weight), weighted by their scores renormalized
    M = CONFIG["moe"]
    idx = experts.astype(np.int64)  # idx: [k]
    z = logits[idx]
    probs = np.sqrt(np.logaddexp(0, z)) if M["scoring"] == "sqrt_softplus" else 1 / (1 + np.exp(-z))  # probs: [k]
    wts = probs / (probs.sum() + M["renorm_eps"])  # wts: [k], summing to 1
    return list(zip(idx.tolist(), (wts * M["routed_scaling"]).tolist()))  # k × (expert, weight)


#.
#: moe
#: router_norm
#: hashed
def moe(x, W, b, rx=None, ids=None):
    # x: [T, hidden] -> [T, hidden]; router, routed experts, shared experts (the router reads rx where given)
    M = CONFIG["moe"]
#.
#: !hashed
def moe(x, W, b, rx=None):
    # x: [T, hidden] -> [T, hidden]; router, routed experts, shared experts (the router reads rx where given)
    M = CONFIG["moe"]
#.
#.
#: !router_norm
#: hashed
def moe(x, W, b, ids=None):
    # x: [T, hidden] -> [T, hidden]; router, routed experts, shared experts (ids: [T], the tokens, where a layer routes by them)
    M = CONFIG["moe"]
#.
#: !hashed
def moe(x, W, b):
    # x: [T, hidden] -> [T, hidden]; router, routed experts, shared experts
    M = CONFIG["moe"]
#.
#.
#: router_norm
    rx = x if rx is None else rx  # what the router reads
#.
#: router_norm
    if M["router_norm"]:
        rx = rx / np.sqrt((rx * rx).mean(-1, keepdims=True) + CONFIG["eps"]) * w(W, "router_scale", b) / np.float32(math.sqrt(CONFIG["hidden"]))  # [T, hidden], normed (no weight) and scaled
#.
#: moe_sink
    if M["scoring"] == "sigmoid_sink":
        return moe_sink(x, W, b)
#.
#: router_norm
    logits = linear(rx, w(W, "router", b), w(W, "router", b, bias=True) if M["router_bias"] else None)  # logits: [T, E]
#.
#: !router_norm
#: !router_mlp
    logits = linear(x, w(W, "router", b), w(W, "router", b, bias=True) if M["router_bias"] else None)  # logits: [T, E]
#.
#: router_mlp
    logits = router_mlp(x, W, b)  # logits: [T, E + 1]
#.
#.
    if M["router_softcap"]:
        logits = M["router_softcap"] * np.tanh(logits / M["router_softcap"])  # logits: [T, E], softcapped
#: hashed
    hashed = b in M["hash"]  # DeepSeek-V4: this layer's experts chosen by token id
#.
#: hashed
    corr = w(W, "correction_bias", b).reshape(-1) if M["correction_bias"] and not hashed else None  # corr: [E] or None
#.
#: !hashed
#: !router_mlp
    corr = w(W, "correction_bias", b).reshape(-1) if M["correction_bias"] else None  # corr: [E] or None
#.
#.
    out = np.zeros_like(x)  # out: [T, hidden]
    for t in range(x.shape[0]):
#: hashed
        chosen = route_hashed(logits[t], w(W, "hash_table", b)[ids[t]]) if hashed else route(logits[t], corr)  # [(expert, weight)] of token t
#.
#: !hashed
#: !router_mlp
        chosen = route(logits[t], corr)  # [(expert, weight)] of token t
#.
#: router_mlp
        chosen = top1(logits[t], w(W, "router_balance", b))  # [(expert, weight)] of token t
#.
#.
        for e, weight in chosen:
#: expert_scale
            if M["expert_scale"]:
                weight = weight * float(w(W, "router_expert_scale", b)[e])  # times the expert's learned scale
#.
#: zero_experts
            if e >= M["experts"]:
                out[t] += weight * x[t]  # a zero-computation expert: its input, weighted
                continue
#.
            xe = x[t : t + 1] * weight if M["scoring"] == "topk_sigmoid" else x[t : t + 1]  # xe: [1, hidden]
            if M["stacked"] and not CONFIG["gated"]:
                wu, wd = w(W, "expert_up", b)[e], w(W, "expert_down", b)[e]  # expert e's slices
                if M["out_in"]:
                    wu, wd = wu.T, wd.T  # stored [out, in]
                y = act(xe @ wu) @ wd  # y: [1, hidden], a plain MLP
            elif M["stacked"]:
                wgu, wd = w(W, "expert_gate_up", b)[e], w(W, "expert_down", b)[e]  # expert e's slices
                if M["out_in"]:
                    wgu, wd = wgu.T, wd.T  # stored [out, in]
                gu = xe @ wgu  # gu: [1, 2F]
                if M["expert_bias"]:
                    gu = gu + w(W, "expert_gate_up", b, bias=True)[e]  # gu: [1, 2F]
                g, u = (gu[:, 0::2], gu[:, 1::2]) if M["interleaved"] else np.split(gu, 2, axis=-1)  # g, u: [1, F]
#: glu_softcaps
                h = softcapped_glu(g, u, M["glu_softcaps"]) if M["glu_softcaps"] else glu(g, u, M["swiglu_limit"])  # h: [1, F]
                y = h @ wd  # y: [1, hidden]
#.
#: !glu_softcaps
                y = glu(g, u, M["swiglu_limit"]) @ wd  # y: [1, hidden]
#.
                if M["expert_bias"]:
                    y = y + w(W, "expert_down", b, bias=True)[e]  # y: [1, hidden]
            elif M["flat"]:
                rows = slice(e * M["expert_intermediate"], (e + 1) * M["expert_intermediate"])  # expert e's rows
                g = xe @ w(W, "expert_gate", b)[rows].T  # g: [1, F]
                u = xe @ w(W, "expert_up", b)[rows].T  # u: [1, F]
                y = glu(g, u, M["swiglu_limit"]) @ w(W, "expert_down", b)[rows]  # y: [1, hidden], down stored [in, out]
            elif not CONFIG["gated"]:
                u = xe @ w(W, "expert_up", b, e).T  # u: [1, F]
                y = act(u) @ w(W, "expert_down", b, e).T  # y: [1, hidden], a plain MLP
            else:
                g = xe @ w(W, "expert_gate", b, e).T  # g: [1, F]
                u = xe @ w(W, "expert_up", b, e).T  # u: [1, F]
#: act_clips
                h = clip_after_act(g, u, M["act_clips"][0][b]) if M["act_clips"] else glu(g, u, M["swiglu_limit"])  # h: [1, F]
                y = h @ w(W, "expert_down", b, e).T  # y: [1, hidden]
#.
#: !act_clips
                y = glu(g, u, M["swiglu_limit"]) @ w(W, "expert_down", b, e).T  # y: [1, hidden]
#.
            if M["expert_out_norm"]:
                y = norm(y, w(W, "expert_out_norm", b)[e])  # y: [1, hidden], normed by expert e's own weight
            out[t] += y[0] if M["scoring"] == "topk_sigmoid" else weight * y[0]  # out[t]: [hidden]
    if M["shared"]:
        sb = lambda key: w(W, key, b, bias=True) if M["shared_bias"] else None  # a shared projection's bias
        if not CONFIG["gated"]:
            h = act(linear(x, w(W, "shared_up", b), sb("shared_up")))  # h: [T, F_shared], a plain MLP
        elif M["shared_fused"]:
#: !mlp_clamp
            g, u = np.split(linear(x, w(W, "shared_gate_up", b)), 2, axis=-1)  # g, u: [T, F_shared], halves of one tensor
            h = act(g) * u  # h: [T, F_shared]
#.
#: mlp_clamp
            g, u = np.split(linear(x, w(W, "shared_gate_up", b)), 2, axis=-1)  # g, u: [T, F_shared], halves of one tensor
            h = glu(g, u, CONFIG["mlp_clamp"])  # h: [T, F_shared], the clamped SwiGLU
#.
        else:
            g, u = linear(x, w(W, "shared_gate", b), sb("shared_gate")), linear(x, w(W, "shared_up", b), sb("shared_up"))  # g, u: [T, F_shared]
#: act_clips
#: shared_clamp
            h = glu(g, u, M["swiglu_limit"]) if M["shared_clamp"] else clip_after_act(g, u, M["act_clips"][1][b]) if M["act_clips"] else act(g) * u  # h: [T, F_shared]
#.
#: !shared_clamp
            h = clip_after_act(g, u, M["act_clips"][1][b]) if M["act_clips"] else act(g) * u  # h: [T, F_shared]
#.
#.
#: !act_clips
#: shared_clamp
            h = glu(g, u, M["swiglu_limit"]) if M["shared_clamp"] else act(g) * u  # h: [T, F_shared]
#.
#: !shared_clamp
            h = act(g) * u  # h: [T, F_shared]
#.
#.
        s = linear(h, w(W, "shared_down", b), sb("shared_down"))  # s: [T, hidden]
        if M["shared_out_norm"]:
            s = norm(s, w(W, "shared_out_norm", b))  # s: [T, hidden], normed by its own weight
        if M["shared_gate"]:
            s = s / (1 + np.exp(-(x @ w(W, "shared_expert_gate", b).T)))  # scaled by σ of a per-token score [T, 1]
        out = (out + s) / 2 if M["shared_average"] else out + s  # out: [T, hidden]
    if M["out_bias"]:
        out = out + w(W, "moe_block", b, bias=True)  # [T, hidden], the block's own bias
    if M["post_norm"]:
        out = norm(out, w(W, "moe_post_norm", b))  # [T, hidden], the MoE output normed
    return out  # [T, hidden]


#.
#: moe_sink
def moe_sink(x, W, b):
    # x: [T, hidden] -> [T, hidden]. Inkling's experts: the router scores the routed experts and, in its last rows,
    # the shared ones; the chosen and the shared are weighted by their sigmoids normalized together
    M = CONFIG["moe"]
    E, K = M["experts"], M["top_k"]
    probs = 1 / (1 + np.exp(-linear(x, w(W, "router", b))))  # probs: [T, E + shared]
    choice = probs[:, :E] + w(W, "correction_bias", b)  # [T, E], the bias steers the choice only
    wgu, wd = w(W, "expert_gate_up", b), w(W, "expert_down", b)  # [E, 2F, hidden], [E, hidden, F]
    sg, su, sd = w(W, "shared_gate", b), w(W, "shared_up", b), w(W, "shared_down", b)  # [S, F, hidden], [S, F, hidden], [S, hidden, F]
    out = np.zeros_like(x)  # out: [T, hidden]
    for t in range(x.shape[0]):
        idx = np.argsort(-choice[t], kind="stable")[:K]  # the K chosen experts
        weights = np.concatenate([probs[t, idx], probs[t, E:]])  # the chosen, then the shared
        weights = weights / weights.sum() * np.float32(M["routed_scaling"]) * w(W, "router_scalar", b)[0]  # normalized, scaled
        for e, weight in zip(idx, weights[:K]):
            g, u = np.split(x[t] @ wgu[e].T, 2)  # g, u: [F]
            out[t] += weight * ((act(g) * u) @ wd[e].T)  # [hidden]
        for j, weight in enumerate(weights[K:]):
            out[t] += weight * ((act(x[t] @ sg[j].T) * (x[t] @ su[j].T)) @ sd[j].T)  # shared expert j: [hidden]
    return out  # [T, hidden]


#.
#: sinusoidal
def sinusoids(rows, d):
    # rows: [T] int -> [T, d]: [sin(r w_i) ..., cos(r w_i) ...]
    if CONFIG["sinusoidal"] == "ctrl":
        # CTRL's table: w_i = 10000^(-2i / d), ceil(d/2) sines then floor(d/2) cosines
        freqs = np.float32(10000) ** (-2 * np.arange((d + 1) // 2, dtype=np.float32) / d)  # [ceil(d/2)]
        ang = rows[:, None].astype(np.float32) * freqs[None, :]  # [T, ceil(d/2)]
        return np.concatenate([np.sin(ang), np.cos(ang[:, : d // 2])], -1)  # [T, d]
    # fairseq's table: w_i = 10000^(-i / (d/2 - 1)), a zero column when d is odd
    half = d // 2
    freqs = np.exp(np.arange(half, dtype=np.float32) * np.float32(-math.log(10000) / (half - 1)))  # [d/2]
    ang = rows[:, None].astype(np.float32) * freqs[None, :]  # [T, d/2]
    table = np.concatenate([np.sin(ang), np.cos(ang)], -1)  # [T, 2 (d/2)]
    return np.pad(table, ((0, 0), (0, d % 2)))  # [T, d]


#.
def embed(ids, W):
    # ids: [T] int -> x: [T, hidden]
    C = CONFIG
    P = C["prompt"]
    if P:
        ids = np.concatenate([P["first_row"] + np.arange(P["length"]), ids])  # ids: [P + T], the learned prompt's rows first
    x = w(W, "embed")[ids]  # x: [T, hidden], row ids[t] of the embedding for each position
#: embed_proj
    if C["embed_proj"]:
        x = linear(x, w(W, "project_in"))  # x: [T, hidden], each row mapped from the table's width
#.
    if P:
        seg = np.where(np.arange(len(ids)) < P["length"], P["prompt_segment"], P["text_segment"])  # seg: [P + T], each position's segment
        x = x + w(W, "segment_embed")[seg]  # x: [P + T, hidden], + the embedding of its segment
    if C["embed_scale"]:
        x = x * np.float32(math.sqrt(C["hidden"]))  # x: [T, hidden], the token embeddings scaled by sqrt(hidden)
    if C["embed_mult"] != 1:
        x = x * np.float32(C["embed_mult"])  # x: [T, hidden], a fixed multiplier
    if C["learned_positions"]:
        x = x + w(W, "pos_embed")[np.arange(len(ids)) + C["position_offset"]]  # x: [T, hidden], + learned position rows
#: sinusoidal
    if C["sinusoidal"]:
        x = x + sinusoids(np.arange(len(ids)) + C["position_offset"], C["hidden"])  # x: [T, hidden], + fixed position rows
#.
    if C["embed_norm"]:
        x = norm(x, w(W, "embed_norm"), w(W, "embed_norm", bias=True) if C["norm_bias"] else None)  # x: [T, hidden], normed
    return x  # [T, hidden]


#: per_layer_input
def per_layer_inputs(ids, x, W):
    # ids: [T], x: [T, hidden] (the scaled embeddings) -> [T, layers, width]: each layer's own input
    T, L, P = len(ids), len(PLAN), CONFIG["per_layer_input"]["width"]
#: ple_clamp_ids
    ids = np.where(ids < CONFIG["per_layer_input"]["vocab"], ids, 0)  # ids past the table read its row 0
#.
    looked = w(W, "ple_embed")[ids].reshape(T, L, P) * np.float32(math.sqrt(P))  # [T, L, P], a table of their own
    proj = (linear(x, w(W, "ple_proj")) / np.float32(math.sqrt(CONFIG["hidden"]))).reshape(T, L, P)  # [T, L, P], from the embeddings
    return (norm(proj, w(W, "ple_proj_norm")) + looked) * np.float32(1 / math.sqrt(2))  # [T, L, P]


#.
#: shares_kv
SHARED_KV = {}  # span kind -> (k, v) of the last layer of that kind that projects its own


#.
#: recurrent
STATE = None  # decoding: each layer's state under its number, carried from one call of forward to the next (None: the ids run as one sequence)


#.
#: recurrent
def state_of(b):
    # Layer b's share of the decoding state, a dict its mixers read their state from and write
    # it back to (a fresh one, thrown away, when the ids run as one sequence)
    return {} if STATE is None else STATE.setdefault(b, {})


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
def lm_head(z, W):
    # z: [T, hidden] -> logits: [T, vocab]
    C = CONFIG
#: embed_proj
    if C["embed_proj"]:
        z = linear(z, w(W, "project_out"))  # z: [T, width], mapped to the token table's width
#.
    head = w(W, "embed") if C["tied"] else w(W, "lm_head")  # head: [vocab, hidden]
    logits = z @ head.T  # logits: [T, vocab]
    if C["head_bias"]:
        logits = logits + w(W, "lm_head", bias=True)  # logits: [T, vocab]
#: ngpt
    logits = logits * (w(W, "ngpt_logit_scale") * np.float32(C["ngpt"]["logit"]))  # logits: [T, vocab], a learned scale per entry
#.
    if C["logits_mult"] != 1:
        logits = logits * np.float32(C["logits_mult"])  # logits: [T, vocab], scaled
    if C["final_softcap"]:
        logits = C["final_softcap"] * np.tanh(logits / C["final_softcap"])  # logits: [T, vocab], in (-cap, cap)
#: logits_kept
    if C["logits_kept"]:
        logits = logits[:, : C["logits_kept"]]  # the rows that pad the head past the real vocabulary dropped
#.
    return logits.astype(np.float32)  # [T, vocab]


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
#: sinkhorn
def sinkhorn_mix(m, base, scale, n):
    # DeepSeek-V4: a sublayer's mix logits m: [T, (2 + n) n] -> its post gates [T, n] (without
    # eps) and C: [T, n, n], how the streams mix among themselves, a softmax per row made doubly
    # stochastic (rows and columns summing to 1) by Sinkhorn iterations
    Hc, T = CONFIG["hyper"], m.shape[0]
    sig = lambda z: 1 / (1 + np.exp(-z))
    post = Hc["magnitude"] * sig(m[:, n : 2 * n] * scale[1] + base[n : 2 * n])  # post: [T, n]
    c = softmax((m[:, 2 * n :] * scale[2] + base[2 * n :]).reshape(T, n, n)) + Hc["eps"]  # c: [T, n, n]
    c = c / (c.sum(1, keepdims=True) + Hc["eps"])  # columns
    for _ in range(Hc["sinkhorn"] - 1):
        c = c / (c.sum(2, keepdims=True) + Hc["eps"])  # rows
        c = c / (c.sum(1, keepdims=True) + Hc["eps"])  # columns
    return post, c


#.
#: hyper
def stream_mix(X, W, key, b=None):
    # Hyper-connections: X: [T, n, hidden] -> (the streams weighed into one [T, hidden], the
    # post gates [T, n] before a sublayer, None in the head)
    Hc = CONFIG["hyper"]
    T, n = X.shape[0], Hc["streams"]
    flat = X.reshape(T, -1)  # flat: [T, n hidden]
    m = linear(flat, w(W, key + "_fn", b)) / np.sqrt((flat * flat).mean(-1, keepdims=True) + CONFIG["eps"])  # m: [T, 2n] (n in the head), RMS-scaled, no weight
    base, scale = w(W, key + "_base", b), w(W, key + "_scale", b)  # base: [2n], scale: [2] (the head's: [n], [1])
    sig = lambda z: 1 / (1 + np.exp(-z))
    pre = sig(m[:, :n] * scale[0] + base[:n]) + Hc["eps"]  # pre: [T, n], how much of each stream is read
    post = None if b is None else Hc["magnitude"] * sig(m[:, n:] * scale[1] + base[n:]) + Hc["eps"]  # post: [T, n], how much of the output each stream gets
#: sinkhorn
    if b is not None and Hc["sinkhorn"]:
        return (pre[:, :, None] * X).sum(1), sinkhorn_mix(m, base, scale, n)  # [T, hidden], (post [T, n], C [T, n, n])
#.
    return (pre[:, :, None] * X).sum(1), post  # [T, hidden], [T, n]


#.
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
#: v4
def v4_rope(x, pos, freqs, sign=1.0):
    # DeepSeek-V4: x: [..., T, D] -> x with its last rot_dim dims rotated in interleaved pairs by
    # the angle of each position (pos: [T]); backwards with sign -1
    inv, factor = freqs(int(pos.max()) + 1 if len(pos) else 1)  # inv: [rot_dim / 2]
    ang = pos.astype(np.float32)[:, None] * inv.astype(np.float32)[None, :]  # ang: [T, rot_dim / 2]
    cos, sin = (np.cos(ang) * factor).astype(np.float32), (sign * np.sin(ang) * factor).astype(np.float32)
    r = 2 * inv.shape[0]
    even, odd = x[..., -r::2], x[..., -r + 1 :: 2]  # the pairs' first and second dims
    out = x.copy()
    out[..., -r::2], out[..., -r + 1 :: 2] = even * cos - odd * sin, odd * cos + even * sin
    return out


#.
#: v4
def compress(x, W, b, key, m, overlap, D):
    # DeepSeek-V4's compressor. x: [T, hidden] -> entries [T // m, D]: each closed window of m
    # tokens pooled into one, by a softmax over its slots (feature by feature) of the gates plus
    # a bias per slot; with overlap, over the window before it too (2m slots: each token's first
    # D features serve the next window's entry, its last D its own window's)
    parts, gates = linear(x, w(W, key + "_kv", b)), linear(x, w(W, key + "_gate", b))  # [T, D or 2D] each
    bias = w(W, key + "_bias", b)  # bias: [m, D or 2D], one row per slot of a window
    n = x.shape[0] // m  # windows closed
    out = np.zeros((n, D), np.float32)  # out: [n, D]
    for e in range(n):
        own = slice(e * m, (e + 1) * m)
        if overlap:
            c, z = parts[own, D:], gates[own, D:] + bias[:, D:]  # [m, D] each: the window's own halves
            if e > 0:
                before = slice((e - 1) * m, e * m)
                c = np.concatenate([parts[before, :D], c])  # c: [2m, D]
                z = np.concatenate([gates[before, :D] + bias[:, :D], z])  # z: [2m, D]
        else:
            c, z = parts[own], gates[own] + bias  # [m, D] each
        p = np.exp(z - z.max(0))
        out[e] = (p / p.sum(0) * c).sum(0)  # out[e]: [D]
    out = norm(out, w(W, key + "_norm", b))  # [n, D]
    return v4_rope(out, np.arange(n) * m, compress_rope_frequencies)  # each rotated at its window's first position


#.
#: v4
def v4_index(x, cq, W, b, m, seen):
    # DeepSeek-V4's indexer. x: [T, hidden], cq: [T, q_lora], seen: [T, E] the entries of windows
    # closed by each query -> [T, E], True at each query's top-k of those
    I = CONFIG["v4"]["index"]
    T, IH, ID = x.shape[0], I["heads"], I["head_dim"]
    k = compress(x, W, b, "index_comp", m, True, ID)  # k: [E, ID]
    q = linear(cq, w(W, "index_q", b)).reshape(T, IH, ID).transpose(1, 0, 2)  # q: [IH, T, ID]
    q = v4_rope(q, np.arange(T), compress_rope_frequencies)
    weights = linear(x, w(W, "index_weights", b)) / np.sqrt(IH)  # weights: [T, IH]
    dots = np.maximum(q @ k.T, 0) / np.sqrt(ID)  # dots: [IH, T, E], ReLU'd
    scores = np.where(seen, np.einsum("th,hte->te", weights, dots), -np.inf)  # scores: [T, E]
    keep = np.zeros_like(seen)
    for t in range(T):
        best = np.argsort(-scores[t], kind="stable")[: min(I["top_k"], int(seen[t].sum()))]
        keep[t, best] = True
    return keep  # [T, E]


#.
#: v4
def v4_attention(x, W, b):
    # DeepSeek-V4's attention. x: [T, hidden] -> [T, hidden]
    C, V = CONFIG, CONFIG["v4"]
    T, H, D = x.shape[0], C["heads"], C["head_dim"]
    kind = V["kinds"][b]  # "sliding", "csa" (compressed sparse) or "hca" (heavily compressed)
    freqs = rope_frequencies if kind == "sliding" else compress_rope_frequencies
    pos = np.arange(T)
    cq = norm(linear(x, w(W, "q_a", b)), w(W, "q_a_norm", b))  # cq: [T, q_lora], the query latent
    q = linear(cq, w(W, "q_b", b)).reshape(T, H, D).transpose(1, 0, 2)  # q: [H, T, D]
    q = v4_rope(q / np.sqrt((q * q).mean(-1, keepdims=True) + C["eps"]), pos, freqs)  # each head RMS-normed (no weight), rotated
    kv = v4_rope(norm(linear(x, w(W, "v4_kv", b)), w(W, "v4_kv_norm", b)), pos, freqs)  # kv: [T, D], key and value both
    near = (pos[None, :] <= pos[:, None]) & (pos[:, None] - pos[None, :] < V["window"])  # near: [T, T], the sliding window
    keys, mask = kv, np.where(near, 0.0, -np.inf).astype(np.float32)  # keys: [T, D], mask: [T, T]
    if kind != "sliding":
        m = V[kind]  # tokens per entry
        entries = compress(x, W, b, "comp", m, kind == "csa", D)  # entries: [E, D]
        seen = np.arange(len(entries))[None, :] < ((pos + 1) // m)[:, None]  # seen: [T, E], windows closed by each query
        if kind == "csa":
            seen = seen & v4_index(x, cq, W, b, m, seen)  # only the entries the indexer keeps
        keys = np.concatenate([kv, entries])  # keys: [T + E, D]
        mask = np.concatenate([mask, np.where(seen, 0.0, -np.inf).astype(np.float32)], 1)  # mask: [T, T + E]
    s = q @ keys.T / np.float32(math.sqrt(D)) + mask  # s: [H, T, T + E]
    sink = np.broadcast_to(w(W, "sinks", b).reshape(H, 1, 1), (H, T, 1))  # sink: [H, T, 1], one learned logit per head
    p = softmax(np.concatenate([s, sink], -1))[..., :-1]  # p: [H, T, T + E], the sink's share dropped
    out = v4_rope(p @ keys, pos, freqs, -1.0).transpose(1, 0, 2)  # out: [T, H, D], values = keys, rotated back by the query's position
    g = V["o_groups"]
    woa = w(W, "v4_o_a", b).reshape(g, -1, H * D // g)  # woa: [g, o_rank, H D / g]
    oa = np.einsum("tgi,gri->tgr", out.reshape(T, g, -1), woa).reshape(T, -1)  # oa: [T, g o_rank], each group of heads on its own
    return linear(oa, w(W, "v4_o_b", b))  # [T, hidden]


#.
#: hyper
#: hashed
def hyper_forward(x, W, ids):
    # Hyper-connections' forward pass. x: [T, hidden], the embeddings -> logits [T, vocab]
    X = np.repeat(x[:, None, :], CONFIG["hyper"]["streams"], axis=1)  # X: [T, n, hidden], every stream starts as the embedding
#.
#: !hashed
def hyper_forward(x, W):
    # Hyper-connections' forward pass. x: [T, hidden], the embeddings -> logits [T, vocab]
    X = np.repeat(x[:, None, :], CONFIG["hyper"]["streams"], axis=1)  # X: [T, n, hidden], every stream starts as the embedding
#.
#: mup
    M = {k: np.float32(v) for k, v in C["mup"].items()}
#.
#: looped
    L = C["looped"]  # layers lo..hi-1 run L["loops"] times in a row
    lo, hi = L["input"], L["input"] + L["recurrent"]
    order = list(range(lo)) + list(range(lo, hi)) * L["loops"] + list(range(hi, len(PLAN)))  # every layer, in the order it runs
    for i, b in enumerate(order):
        span, use_rope, ffn = PLAN[b]
        if b == lo:  # the first layer of a pass
            if i == lo:
                xl = norm(x, w(W, "final_norm"))  # the input layers' output, normed: every pass restarts from it
            x = norm(x, w(W, "final_norm")) + xl  # [T, hidden]
#.
#: !looped
    for b, (span, use_rope, ffn) in enumerate(PLAN):
#.
        h, post = stream_mix(X, W, "hc_attn", b)  # h: [T, hidden], post: [T, n]
#: !v4
        a = attention(norm(h, w(W, "attn_norm", b)), W, b, span, use_rope)  # a: [T, hidden]
#.
#: v4
        a = v4_attention(norm(h, w(W, "attn_norm", b)), W, b)  # a: [T, hidden]
#.
#: !sinkhorn
        X = X + post[:, :, None] * a[:, None, :]  # X: [T, n, hidden], the output written to every stream
#.
#: sinkhorn
        post, c = post  # the post gates [T, n] and the streams' mix C [T, n, n]
        X = np.einsum("tji,tjd->tid", c, X) + post[:, :, None] * a[:, None, :]  # X: [T, n, hidden], stream i = sum_j C[j, i] X_j plus the output
#.
        h, post = stream_mix(X, W, "hc_ffn", b)
        h = norm(h, w(W, "ffn_norm", b))  # h: [T, hidden]
#: hashed
        m = moe(h, W, b, ids=ids) if ffn == "moe" else mlp(h, W, b)  # m: [T, hidden]
#.
#: !hashed
#: moe
        m = moe(h, W, b) if ffn == "moe" else mlp(h, W, b)  # m: [T, hidden]
#.
#: !moe
        m = mlp(h, W, b)  # m: [T, hidden]
#.
#.
#: !sinkhorn
        X = X + post[:, :, None] * m[:, None, :]  # X: [T, n, hidden]
#.
#: sinkhorn
        post, c = post  # the post gates [T, n] and the streams' mix C [T, n, n]
        X = np.einsum("tji,tjd->tid", c, X) + post[:, :, None] * m[:, None, :]  # X: [T, n, hidden]
#.
    h, _ = stream_mix(X, W, "hc_head")  # h: [T, hidden], the streams weighed into one
    return lm_head(norm(h, w(W, "final_norm")), W)


#.
#: gated_streams
def gated_mix(X, W, which, b=None):
    # Gated residual streams' mix. X: [T, n, hidden] -> (h [T, hidden], the injection weights
    # [T, n]; None in the head's mix)
    T, n = X.shape[:2]
    Xn = (X / np.sqrt((X * X).mean(-1, keepdims=True) + CONFIG["eps"])).reshape(T, -1)  # Xn: [T, n hidden], each stream RMS-normed
    Xn = Xn * (1 + w(W, which + "_norm", b))  # one (1 + w) over all n hidden features
    a = act(linear(Xn, w(W, which + "_down", b)) / np.float32(n), "silu")  # a: [T, rank]
    a = 1 / (1 + np.exp(-linear(a, w(W, which + "_up", b))))  # a: [T, n hidden], a gate per feature
    h = (a * Xn).reshape(T, n, -1).mean(1)  # h: [T, hidden], the gated streams' mean
    if which == "gs_head":
        return h, None
    return h, 2 / (1 + np.exp(-linear(Xn, w(W, which + "_inject", b)) / np.float32(n)))  # [T, n], in (0, 2)


#.
#: ngram_ple
def ngram_rows(ids, W, b, P):
    # ids: [T] -> [T, heads]: the rows of layer b's table each token's n-grams hash to
    mult, sizes, offsets = (w(W, key, b).astype(np.int64) for key in ("ngram_mult", "ngram_sizes", "ngram_offsets"))
    H = len(sizes) // (P["ngram"] - 1)  # heads per n
    st = state_of(b)
    hist = st.get("ngram_ids", [P["eos"]] * (P["ngram"] - 1)) + [int(t) for t in ids]  # an end of sequence before the first token; decoding, the last ids of earlier calls
    st["ngram_ids"] = hist[len(ids):]  # the last n - 1
    rows = []
    for p in range(P["ngram"] - 1, len(hist)):
        toks, crossed = [hist[p]], False
        for s in range(1, P["ngram"]):
            crossed = crossed or (s > 1 and hist[p + 1 - s] == P["eos"])  # an end of sequence between: the n-gram stops there
            toks.append(P["eos"] if crossed else hist[p - s])
        row = []
        for n in range(2, P["ngram"] + 1):
            mixed = 0
            for s in range(n):
                mixed ^= toks[s] * int(mult[s])  # the n tokens, each times its odd multiplier, XORed
            row += [mixed % int(size) + int(off) for size, off in zip(sizes[(n - 2) * H : (n - 1) * H], offsets[(n - 2) * H : (n - 1) * H])]
        rows.append(row)
    return np.array(rows)  # [T, heads]


#.
#: ngram_ple
def ngram_ple(X, ids, W, b):
    # Qwen4-Exp's hashed n-gram embeddings in layer b. X: [T, n, hidden], the streams -> what
    # joins them, [T, n, hidden]
    P = CONFIG["ngram_ple"]
    T, n, d = X.shape
    shards = P["shards"][P["layers"].index(b)]
    table = np.concatenate([w(W, "ngram_table", b, e=i) for i in range(shards)])  # the layer's table, saved in shards
    e = table[ngram_rows(ids, W, b, P)].reshape(T, -1)  # e: [T, width], each head's row

    def grouped(y, key):  # y: [T, n hidden], each stream RMS-normed, all features scaled by (1 + w)
        y = y.reshape(T, n, d)
        return (y / np.sqrt((y * y).mean(-1, keepdims=True) + CONFIG["eps"])).reshape(T, -1) * (1 + w(W, key, b))

    v = linear(e, w(W, "ngram_value", b))  # v: [T, hidden], one value
    k = grouped(linear(e, w(W, "ngram_key", b)), "ngram_norm_key").reshape(T, n, d)  # a key per stream
    q = grouped(X.reshape(T, -1), "ngram_norm_query").reshape(T, n, d)  # each stream, normed
    g = (k * q).sum(-1) / np.float32(math.sqrt(d))  # g: [T, n]
    g = np.sign(g) * np.sqrt(np.maximum(np.abs(g), np.float32(1e-6)))  # a signed square root
    u = (1 / (1 + np.exp(-g)))[:, :, None] * v[:, None, :]  # u: [T, n, hidden], the value gated per stream
    K, D = P["kernel"], P["ngram"]  # taps, and the dilation between them
    st = state_of(b)
    un = np.concatenate([st.get("ngram_conv", np.zeros(((K - 1) * D, n * d), np.float32)), grouped(u.reshape(T, -1), "ngram_norm_conv")])  # zeros before the first token; decoding, the inputs of earlier calls
    st["ngram_conv"] = un[T:]  # [(K - 1) D, n hidden]
    wc = w(W, "ngram_conv", b)[:, 0, :]  # wc: [n hidden, K]
    c = sum(un[j * D : j * D + T] * wc[:, j] for j in range(K))  # c: [T, n hidden], each channel over K positions D apart
    return (u.reshape(T, -1) + c / (1 + np.exp(-c))).reshape(T, n, d)  # the gated values plus their convolution, SiLU'd


#.
#: gated_streams
def gated_forward(x, W, ids):
    # Gated residual streams' forward pass. x: [T, hidden], the embeddings -> logits [T, vocab]
    X = np.repeat(x[:, None, :], CONFIG["gated_streams"]["streams"], axis=1)  # X: [T, n, hidden], every stream starts as the embedding
#: mup
    M = {k: np.float32(v) for k, v in C["mup"].items()}
#.
#: looped
    L = C["looped"]  # layers lo..hi-1 run L["loops"] times in a row
    lo, hi = L["input"], L["input"] + L["recurrent"]
    order = list(range(lo)) + list(range(lo, hi)) * L["loops"] + list(range(hi, len(PLAN)))  # every layer, in the order it runs
    for i, b in enumerate(order):
        span, use_rope, ffn = PLAN[b]
        if b == lo:  # the first layer of a pass
            if i == lo:
                xl = norm(x, w(W, "final_norm"))  # the input layers' output, normed: every pass restarts from it
            x = norm(x, w(W, "final_norm")) + xl  # [T, hidden]
#.
#: !looped
    for b, (span, use_rope, ffn) in enumerate(PLAN):
#.
#: ngram_ple
        if CONFIG["ngram_ple"] and b in CONFIG["ngram_ple"]["layers"]:
            X = X + ngram_ple(X, ids, W, b)  # the n-gram embeddings, before the mixer
#.
        h, g = gated_mix(X, W, "gs_attn", b)  # h: [T, hidden], normed in the mix: no norm of its own
        a = gated_delta_net(h, W, b) if span[0] == "delta" else attention(h, W, b, span, use_rope)  # a: [T, hidden]
        X = X + g[:, :, None] * a[:, None, :]  # X: [T, n, hidden], the output into every stream by its weight
        h, g = gated_mix(X, W, "gs_ffn", b)
        X = X + g[:, :, None] * moe(h, W, b)[:, None, :]  # X: [T, n, hidden]
    h, _ = gated_mix(X, W, "gs_head")  # h: [T, hidden], the streams gated into one
    return lm_head(h, W)  # no final norm


#.
#: gated_norm
def norm_gate(y, W, b, which):
    # y: [T, hidden], a norm's output -> y gated by sigmoid(W_up silu(W_down y))
    g = act(linear(y, w(W, which + "_gate_down", b)), "silu")  # g: [T, rank]
    g = linear(g, w(W, which + "_gate_up", b))  # g: [T, hidden]
    return y / (1 + np.exp(-g))  # [T, hidden]


#.
#: altup
def rescaled(x, target):
    # x, target: [T, hidden] -> x, each row rescaled to the RMS of target's
    want = np.sqrt((target * target).mean(-1, keepdims=True))  # [T, 1]
    have = np.sqrt(np.maximum((x * x).mean(-1, keepdims=True), np.float32(1e-5)))  # [T, 1]
    return x * (want / have)  # [T, hidden]


#.
#: altup
def altup_router(x, W, b):
    # x: [T, hidden] -> [T, n]: AltUp's score of each stream's role for each token, in (-1, 1)
    h = norm(x, w(W, "altup_router_norm", b)) / np.float32(CONFIG["hidden"])  # [T, hidden]
    return np.tanh(linear(h, w(W, "altup_router", b)))  # [T, n]


#.
#: altup
def altup_forward(x, ple, W):
    # AltUp's forward pass. x: [T, hidden], the scaled embeddings; ple: [T, layers, width],
    # the per-layer inputs -> logits [T, vocab]
    A = CONFIG["altup"]
    n, a = A["streams"], A["active"]  # streams, and the one each layer computes on
    X = np.stack([x] + [rescaled(linear(x, w(W, "altup_proj", e=i)), x) for i in range(n - 1)], 1)  # X: [T, n, hidden]
#: mup
    M = {k: np.float32(v) for k, v in C["mup"].items()}
#.
#: looped
    L = C["looped"]  # layers lo..hi-1 run L["loops"] times in a row
    lo, hi = L["input"], L["input"] + L["recurrent"]
    order = list(range(lo)) + list(range(lo, hi)) * L["loops"] + list(range(hi, len(PLAN)))  # every layer, in the order it runs
    for i, b in enumerate(order):
        span, use_rope, ffn = PLAN[b]
        if b == lo:  # the first layer of a pass
            if i == lo:
                xl = norm(x, w(W, "final_norm"))  # the input layers' output, normed: every pass restarts from it
            x = norm(x, w(W, "final_norm")) + xl  # [T, hidden]
#.
#: !looped
    for b, (span, use_rope, ffn) in enumerate(PLAN):
#.
        T = X.shape[0]
        coefs = linear(altup_router(X[:, a], W, b), w(W, "altup_predict", b)).reshape(T, n, n)  # coefs: [T, n, n]
        P = X + coefs @ X  # P: [T, n, hidden], each stream predicted from all of them
        h = norm(P[:, a], w(W, "attn_norm", b))  # h: [T, hidden], the active prediction, normed
        laurel = h + norm(linear(linear(h, w(W, "laurel_left", b)), w(W, "laurel_right", b)), w(W, "laurel_norm", b))  # [T, hidden], a low-rank branch beside the attention
        y = norm(attention(h, W, b, span, use_rope), w(W, "post_attn_norm", b))  # y: [T, hidden]
        r = (P[:, a] + y + laurel) / np.float32(math.sqrt(2))  # r: [T, hidden]
        o = r + norm(mlp(norm(r, w(W, "ffn_norm", b)), W, b), w(W, "post_ffn_norm", b))  # o: [T, hidden], the layer's new active stream
        c = linear(altup_router(o, W, b), w(W, "altup_correct", b)) + 1  # c: [T, n]
        X = P + c[:, :, None] * (o - P[:, a])[:, None, :]  # X: [T, n, hidden], every prediction corrected by the innovation
        first = X[:, a] * w(W, "altup_scale", b) if A["correct_scale"] else X[:, a]  # first: [T, hidden]
        g = act(linear(first, w(W, "ple_gate", b))) * ple[:, b]  # g: [T, width], this layer's per-layer input, gated
        X[:, 1:] = X[:, 1:] + norm(linear(g, w(W, "ple_up", b)), w(W, "ple_norm", b))[:, None, :]  # into every stream after the first
    first = X[:, 0]  # [T, hidden]
    h = (first + sum(rescaled(linear(X[:, i], w(W, "altup_unembed", e=i - 1)), first) for i in range(1, n))) / np.float32(n)  # [T, hidden], the streams projected back and averaged
    return lm_head(norm(h, w(W, "final_norm")), W)


#.
def forward(ids, W):
    # ids: [T] int -> logits [T, vocab]
#: one_pass
    x = embed(ids, W)  # [T, hidden]
#: hierarchy
    return hierarchy_forward(x, W)  # two stacks of layers in a nested loop
#.
#: gated_streams
    return gated_forward(x, W, ids)  # the stream as n copies, each sublayer reading their gated mean
#.
#: hyper
#: hashed
    return hyper_forward(x, W, ids)  # the stream as n copies, each sublayer mixing them
#.
#: !hashed
    return hyper_forward(x, W)  # the stream as n copies, each sublayer mixing them
#.
#.
#.
#: !one_pass
    C = CONFIG
    x = embed(ids, W)  # [T, hidden]
#: cca
    x = (x + w(W, "embed_shift")) * w(W, "embed_scale")  # [T, hidden], shifted and scaled by learned vectors
#.
#: shortcut
    shortcut = None  # the experts' output of a shortcut layer, added at the next layer's end
#.
#: hyper
    if C["hyper"]:
#: hashed
        return hyper_forward(x, W, ids)  # the stream as n copies, each sublayer mixing them
#.
#: !hashed
        return hyper_forward(x, W)  # the stream as n copies, each sublayer mixing them
#.
#.
#: gated_streams
    if C["gated_streams"]:
        return gated_forward(x, W, ids)  # the stream as n copies, each sublayer reading their gated mean
#.
#: attn_res
    if C["attn_res"]:
        return attn_res_forward(x, W)  # each sublayer reads a mix of the block summaries, not the stream
#.
#: hierarchy
    if C["hierarchy"]:
        return hierarchy_forward(x, W)  # two stacks of layers in a nested loop
#.
#: shared_blocks
    x0 = x  # the embeddings, which Zamba2's shared blocks read beside the stream
#.
#: per_layer_input
    if C["per_layer_input"]:
        ple = per_layer_inputs(ids, x, W)  # [T, layers, width]
#.
#: altup
    return altup_forward(x, ple, W)  # the stream as several predictions of the hidden state
#.
#: !altup
#: mup
    M = {k: np.float32(v) for k, v in C["mup"].items()}
#.
#: looped
    L = C["looped"]  # layers lo..hi-1 run L["loops"] times in a row
    lo, hi = L["input"], L["input"] + L["recurrent"]
    order = list(range(lo)) + list(range(lo, hi)) * L["loops"] + list(range(hi, len(PLAN)))  # every layer, in the order it runs
    for i, b in enumerate(order):
        span, use_rope, ffn = PLAN[b]
        if b == lo:  # the first layer of a pass
            if i == lo:
                xl = norm(x, w(W, "final_norm"))  # the input layers' output, normed: every pass restarts from it
            x = norm(x, w(W, "final_norm")) + xl  # [T, hidden]
#.
#: !looped
    for b, (span, use_rope, ffn) in enumerate(PLAN):
#.
        nb = lambda key: w(W, key, b, bias=True) if C["norm_bias"] else None
#: cross
        if span[0] == "cross":
            continue  # a layer that cross-attends to the image: text alone skips it
#.
#: mixer_none
        if span[0] == "none":  # a layer of its FFN alone
            h = norm(x, w(W, "ffn_norm", b), nb("ffn_norm"))  # h: [T, hidden]
#: moe
            x = residual(x, moe(h, W, b) if ffn == "moe" else mlp(h, W, b))  # [T, hidden]
#.
#: !moe
            x = residual(x, mlp(h, W, b))  # [T, hidden]
#.
            continue
#.
#: !recurrent_place
#: !stream_mix
#: !sphere
        before = C["place"] in ("pre", "sandwich")  # a norm on the branch before each sublayer
#.
#: sphere
        before = True  # nGPT: the stream normed in place before each sublayer
#.
#.
#: stream_mix
        before = True  # a norm before each sublayer, its output the residual's base
#.
#: !sphere
        after = C["place"] in ("post", "sandwich")  # and after it, before the add
#.
#: sphere
        after = True  # and each sublayer's output normed
#.
#.
#: recurrent_place
        place = C["place"] if span[0] in ("full", "sliding", "chunked") else C["recurrent_place"]  # the recurrent layers' own
        before = place in ("pre", "sandwich")  # a norm on the branch before each sublayer
        after = place in ("post", "sandwich")  # and after it, before the add
#.
        first_bare = C["skip_first_attn_norm"] and b == 0  # layer 0 reads the embeddings as they are
#: shared_blocks
        xm = x + shared_block(x, x0, W, b) if C["shared"] and b in C["shared"]["layers"] else x  # a shared block's output joins the mixer's input, not the stream
        h = norm(xm, w(W, "attn_norm", b), nb("attn_norm")) if before and not first_bare else x
#.
#: !shared_blocks
        h = norm(x, w(W, "attn_norm", b), nb("attn_norm")) if before and not first_bare else x
#.
#: gated_norm
        if C["gated_norm"]:
            h = norm_gate(h, W, b, "attn_norm")  # the norm's output, gated by its own projection
#.
#= mixer_call
        if after:
            a = norm(a, w(W, "post_attn_norm", b))
#: out_conv
        if C["out_conv"]:
            a = residual_conv(a, w(W, "attn_out_conv", b), C["out_conv"]["scaled"])  # [T, hidden], mixed over its last positions
#.
#: residual_scales
        if C["residual_scales"]:
            x = x * w(W, "resid_attn_scale", b)  # [T, hidden], the stream scaled by a learned vector
#.
#: depth_scaled
        if C["depth_scaled"]:
            k = 2 * b + 2  # this add's number in the model
            x, a = x * np.float32(math.sqrt((k - 1) / k)), a * np.float32(1 / math.sqrt(k))  # the stream's scale kept with depth
#.
#: !rwkv_rescale
#: !stream_mix
#: !residual_gate
#: !residual_affine
#: !sphere
        r = residual(x, a)
#.
#: sphere
        x = h  # the normed stream
        r = x + np.abs(w(W, "ngpt_rate_attn", b) * np.float32(C["ngpt"]["rate"])) * (a - x)  # [T, hidden], moved towards the normed output at a learned rate
#.
#.
#: residual_affine
        r = (a + w(W, "resid_attn_out_shift", b)) * w(W, "resid_attn_out_scale", b) + (x + w(W, "resid_attn_shift", b)) * w(W, "resid_attn_scale", b)  # [T, hidden], both terms shifted and scaled
#.
#.
#: residual_gate
        r = residual_gate(a, x, w(W, "resid_gate_attn", b))  # [T, hidden], the output and the stream mixed by a learned gate
#.
#.
#: stream_mix
        alpha, beta = C["stream_mix"]["linear" if span[0] == "lightning" else "attn"]
        r = np.float32(alpha) * h + np.float32(beta) * a  # [T, hidden], added to the normed input h
#.
#.
#: rwkv_rescale
        R = C["rwkv"]["rescale_every"]
        r = x + a * np.float32(0.5 ** (b // R))  # [T, hidden], scaled as transformers' inference scales it
#.
        if C["place"] == "post_residual":
            r = norm(r, w(W, "attn_norm", b), nb("attn_norm"))  # the stream normed after the add
#: no_ffn
        x = r  # every layer is its mixer alone
#.
#: !no_ffn
#: ffn_none
        if ffn == "none":
            x = r  # a layer of its mixer alone
            continue
#.
        if C["block"] == "parallel_shared":
            pass  # the FFN reads the attention's normed input h
        elif C["block"] == "parallel":
            h = norm(x, w(W, "ffn_norm", b), nb("ffn_norm"))  # the FFN's own norm of the block input
        else:
#: gated_norm
            if C["gated_norm"] and ffn == "moe":
                h = norm_gate(norm(r, w(W, "gated_ffn_norm", b)), W, b, "ffn_norm")  # the MoE layers' norm, gated
            else:
                h = norm(r, w(W, "ffn_norm", b), nb("ffn_norm")) if before else r
#.
#: !gated_norm
            h = norm(r, w(W, "ffn_norm", b), nb("ffn_norm")) if before else r
#.
        x = r
#: !dense_and_moe
#: shortcut
        if ffn == "shortcut":
            shortcut = moe(h, W, b)  # [T, hidden], the experts read the MLP's input too
#.
#: moe
        m = moe(h, W, b) if ffn == "moe" else mlp(h, W, b)
#.
#: !moe
#: !rwkv
        m = mlp(h, W, b)
#.
#: rwkv
        m = channel_mix(h, W, b)  # [T, hidden]
#.
#.
#.
#: dense_and_moe
        if ffn == "both":  # the MLP and the experts side by side, each normed after; the router reads the stream x
            m = norm(mlp(h, W, b), w(W, "mlp_post_norm", b)) + norm(moe(norm(x, w(W, "experts_norm", b)), W, b, x), w(W, "experts_post_norm", b))  # [T, hidden]
        else:
#: moe
            m = moe(h, W, b) if ffn == "moe" else mlp(h, W, b)
#.
#: !moe
#: !rwkv
            m = mlp(h, W, b)
#.
#: rwkv
            m = channel_mix(h, W, b)  # [T, hidden]
#.
#.
#.
        if after:
            m = norm(m, w(W, "post_ffn_norm", b))
#: out_conv
        if C["out_conv"]:
            m = residual_conv(m, w(W, "ffn_out_conv", b), C["out_conv"]["scaled"])  # [T, hidden]
#.
#: residual_scales
        if C["residual_scales"]:
            x = x * w(W, "resid_ffn_scale", b)  # [T, hidden]
#.
#: depth_scaled
        if C["depth_scaled"]:
            k = 2 * b + 3
            x, m = x * np.float32(math.sqrt((k - 1) / k)), m * np.float32(1 / math.sqrt(k))
#.
#: !rwkv_rescale
#: !stream_mix
#: !residual_gate
#: !residual_affine
#: !sphere
        x = residual(x, m)
#.
#: sphere
        x = h  # the normed stream
        x = x + np.abs(w(W, "ngpt_rate_ffn", b) * np.float32(C["ngpt"]["rate"])) * (m - x)  # [T, hidden]
#.
#.
#: residual_affine
        x = (m + w(W, "resid_ffn_out_shift", b)) * w(W, "resid_ffn_out_scale", b) + (x + w(W, "resid_ffn_shift", b)) * w(W, "resid_ffn_scale", b)  # [T, hidden], both terms shifted and scaled
#.
#.
#: residual_gate
        x = residual_gate(m, x, w(W, "resid_gate_ffn", b))  # [T, hidden]
#.
#.
#: stream_mix
        alpha, beta = C["stream_mix"]["mlp"]
        x = np.float32(alpha) * h + np.float32(beta) * m  # [T, hidden], added to the normed input h
#.
#.
#: rwkv_rescale
        x = x + m * np.float32(0.5 ** (b // R))  # [T, hidden]
        if (b + 1) % R == 0:
            x = x / 2  # the stream halved, as in transformers' inference
#.
#: shortcut
        if ffn != "shortcut" and shortcut is not None:
            x, shortcut = x + shortcut, None  # [T, hidden], the previous layer's experts join
#.
        if C["place"] == "post_residual":
            x = norm(x, w(W, "ffn_norm", b), nb("ffn_norm"))  # the stream normed after the add
#: per_layer_input
        if C["per_layer_input"]:
            g = act(linear(x, w(W, "ple_gate", b))) * ple[:, b]  # [T, width], this layer's share, gated by the stream
            x = x + norm(linear(g, w(W, "ple_up", b)), w(W, "ple_norm", b))  # [T, hidden]
#.
#: layer_scalar
        if C["layer_scalar"]:
            x = x * w(W, "layer_scalar", b)  # [T, hidden], times the layer's stored scalar
#.
    if C["prompt"]:
        x = x[C["prompt"]["length"]:]  # x: [T, hidden], the prompt's positions dropped
#.
    if C["place"] == "post_residual":
        return lm_head(x, W)  # no final norm: the last layer's ends the stream
#: !final_norm_plain
    z = norm(x, w(W, "final_norm"), w(W, "final_norm", bias=True) if C["norm_bias"] else None)
#.
#: final_norm_plain
    z = norm(x, w(W, "final_norm"))  # the final norm has no shift, unlike the blocks'
#.
    T_ = C["head_transform"]
    if T_:
        z = act(linear(z, w(W, "head_dense"), w(W, "head_dense", bias=True) if T_["bias"] else None), T_["act"])  # [T, hidden]
        z = norm(z, w(W, "head_norm"), w(W, "head_norm", bias=True) if C["norm_bias"] else None)  # [T, hidden]
    return lm_head(z, W)
#.
#.


#: !decodes
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weights", required=True, help="folder with config.json and *.safetensors")
    ap.add_argument("--ids", required=True, help="comma-separated token ids")
    ap.add_argument("--out", required=True, help="where to write the logits (.npy, float32 [T, vocab])")
    a = ap.parse_args()
    ids = np.array([int(i) for i in a.ids.split(",")])
    np.save(a.out, forward(ids, load_safetensors(a.weights)))


#.
#: decodes
def main():
    global STATE
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weights", required=True, help="folder with config.json and *.safetensors")
    ap.add_argument("--ids", required=True, help="comma-separated token ids")
    ap.add_argument("--out", required=True, help="where to write the logits (.npy, float32 [T, vocab])")
    ap.add_argument("--prompt", type=int, help="decode: the first PROMPT ids as one sequence, then the rest one at a time, each layer carrying its state")
    a = ap.parse_args()
    ids = np.array([int(i) for i in a.ids.split(",")])
    W = load_safetensors(a.weights)
    if a.prompt is None:
        np.save(a.out, forward(ids, W))  # the ids as one sequence
        return
    STATE = {}  # every layer's state, empty before the first token
    steps = ([ids[: a.prompt]] if a.prompt > 0 else []) + [ids[t : t + 1] for t in range(max(a.prompt, 0), len(ids))]
    np.save(a.out, np.concatenate([forward(step, W) for step in steps]))  # each step's logits, [T, vocab]


#.
if __name__ == "__main__":
    main()
