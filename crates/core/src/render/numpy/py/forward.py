#: one_pass
def forward(ids, W):
    # ids: [T] int -> logits [T, vocab]
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
#: !draft
#: !blt
def forward(ids, W):
    # ids: [T] int -> logits [T, vocab]
    C = CONFIG
    x = embed(ids, W)  # [T, hidden]
#.
#: blt
def stack_forward(x, W, first=0, last=None):
    # x: [T, hidden] -> [T, hidden], through layers first..last-1 of the stack in use (within())
    C = CONFIG
#.
#.
#: draft
def forward(state, W):
    # state: [1, 2 backbone], the target's embedding of the token beside a hidden state -> logits [1, vocab], hidden [1, backbone]
    C = CONFIG
    x = linear(state, w(W, "draft_in"))  # x: [1, hidden], projected to this model's width
#.
#: cca
    x = (x + w(W, "embed_shift")) * w(W, "embed_scale")  # [T, hidden], shifted and scaled by learned vectors
#.
#: shortcut
    shortcut = None  # the experts' output of a shortcut layer, added at the next layer's end
#.
#: attn_res
    if C["attn_res"]:
        return attn_res_forward(x, W)  # each sublayer reads a mix of the block summaries, not the stream
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
        nb = lambda key: w(W, key, b, bias=True) if C["norm_bias"] else None
#.
#: !looped
#: blt
    for b, (span, use_rope, ffn) in list(enumerate(PLAN))[first:last]:
        nb = lambda key: w(W, key, b, bias=True) if C["norm_bias"] else None
#.
#: !blt
    for b, (span, use_rope, ffn) in enumerate(PLAN):
        nb = lambda key: w(W, key, b, bias=True) if C["norm_bias"] else None
#.
#.
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
            m = moe(h, W, b) if ffn == "moe" else mlp(h, W, b)
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
#: image_qwen3_vl
        if b < len(IMAGE.get("deepstack", [])):
            x[ids == CONFIG["image"]["token"]] += IMAGE["deepstack"][b]  # the image's tokens gain its b-th deep-stack features
#.
#: blt
    return x  # [T, hidden]
#.
#: !blt
    if C["prompt"]:
        x = x[C["prompt"]["length"]:]  # x: [T, hidden], the prompt's positions dropped
#.
#: image_git
    if "features" in IMAGE:
        x = x[len(IMAGE["features"]):]  # x: [T, hidden], the image's positions dropped
#.
#.
#: !blt
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
#: !draft
    return lm_head(z, W)
#.
#: draft
    return lm_head(z, W), linear(z, w(W, "draft_out"))  # and the hidden state the next step reads, [1, backbone]
#.
#.
#.
#.
