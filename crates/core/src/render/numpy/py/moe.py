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
def moe(x, W, b, rx=None):
    # x: [T, hidden] -> [T, hidden]; router, routed experts, shared experts (the router reads rx where given)
    M = CONFIG["moe"]
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
            h = clip_after_act(g, u, M["act_clips"][1][b]) if M["act_clips"] else act(g) * u  # h: [T, F_shared]
#.
#: !act_clips
#: shared_clamp
            h = glu(g, u, M["swiglu_limit"]) if M["shared_clamp"] else act(g) * u  # h: [T, F_shared]
#.
#: !shared_clamp
#: !mlp_clamp
            h = act(g) * u  # h: [T, F_shared]
#.
#: mlp_clamp
            h = glu(g, u, CONFIG["mlp_clamp"])  # h: [T, F_shared], the clamped SwiGLU (MiniMax-M3's, as published: gate and up apart)
#.
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
