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
