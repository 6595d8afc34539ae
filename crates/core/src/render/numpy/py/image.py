#: image
IMAGE = {}  # the image's features [placeholders, hidden] from --pixels (main), and each position's last key where its tokens see each other both ways


def tower_linear(x, W, name, bias=True):
    # x: [N, in] -> [N, out], a tower's linear map stored [out, in], with its bias where it has one
    y = x @ W[name + ".weight"].T  # [N, out]
    return y + W[name + ".bias"] if bias else y


def tower_norm(x, W, name, eps):
    # x: [N, d] -> [N, d], a LayerNorm with its scale and shift
    mean = x.mean(-1, keepdims=True)  # [N, 1]
    var = ((x - mean) ** 2).mean(-1, keepdims=True)  # [N, 1]
    return (x - mean) / np.sqrt(var + eps) * W[name + ".weight"] + W[name + ".bias"]  # [N, d]


def patch_embed(pixels, W, name, p):
    # pixels: [channels, image, image] -> [g², d], the patch convolution (its stride its side) stored under name
    c = pixels.shape[0]
    g = pixels.shape[1] // p  # patches along a side
    patches = pixels[:, : g * p, : g * p].reshape(c, g, p, g, p).transpose(1, 3, 0, 2, 4).reshape(g * g, c * p * p)  # [g², c·p·p], each patch's pixels as the convolution's weight lays them out
    kernel = W[name]  # [d, c, p, p]
    return patches @ kernel.reshape(kernel.shape[0], -1).T  # [g², d]


def vit_layer(x, W, L, I):
    # x: [N, d] -> [N, d], a ViT encoder layer (CLIP's, SigLIP's) under the name prefix L: attention among every patch, then the MLP
    H = I["heads"]
    hd = x.shape[-1] // H
    a = tower_norm(x, W, L + "layer_norm1", I["eps"])  # [N, d]
    q, k, v = (tower_linear(a, W, L + f"self_attn.{m}_proj").reshape(-1, H, hd).transpose(1, 0, 2) for m in "qkv")  # [H, N, hd] each
    s = q @ k.transpose(0, 2, 1) / math.sqrt(hd)  # [H, N, N], every patch sees every other
    s = np.exp(s - s.max(-1, keepdims=True))
    s = s / s.sum(-1, keepdims=True)  # softmax over keys
    o = (s @ v).transpose(1, 0, 2).reshape(-1, H * hd)  # [N, d], the heads side by side
    x = x + tower_linear(o, W, L + "self_attn.out_proj")  # [N, d]
    m = act(tower_linear(tower_norm(x, W, L + "layer_norm2", I["eps"]), W, L + "mlp.fc1"), I["act"])  # [N, intermediate]
    return x + tower_linear(m, W, L + "mlp.fc2")  # [N, d]


#.
#: image_llava
def image_features(pixels, W):
    # pixels: [channels, image, image], as LLaVA's processor makes them -> [features, hidden]
    I = CONFIG["image"]
    T = I["tower"]  # the vision tower's name prefix
    x = patch_embed(pixels, W, T + "embeddings.patch_embedding.weight", I["patch"])  # [g², d], no bias
    x = np.concatenate([W[T + "embeddings.class_embedding"][None], x])  # [1 + g², d], the class token first
    x = x + W[T + "embeddings.position_embedding.weight"]  # [1 + g², d], + a learned position each
    x = tower_norm(x, W, T + "pre_layrnorm", I["eps"])  # [1 + g², d]
    read = [i % (I["depth"] + 1) for i in I["layers"]]  # hidden states read: 0 the first layer's input, i layer i's output
    states = [x]
    for i in range(max(read)):
        x = vit_layer(x, W, f"{T}encoder.layers.{i}.", I)  # [1 + g², d]
        states.append(x)
    first = 1 if I["drop_class"] else 0  # the class token's state dropped, or kept
    f = np.concatenate([states[r][first:] for r in read], -1)  # [features, d · states read]
    P, bias = I["projector"], I["projector_bias"]
    f = act(tower_linear(f, W, P + "linear_1", bias), I["projector_act"])  # [features, hidden]
    return tower_linear(f, W, P + "linear_2", bias)  # [features, hidden]


#.
#: image_gemma3
def image_features(pixels, W):
    # pixels: [channels, image, image], as Gemma 3's processor makes them -> [tokens, hidden]
    I = CONFIG["image"]
    T = I["tower"]  # SigLIP's vision model's name prefix
    x = patch_embed(pixels, W, T + "embeddings.patch_embedding.weight", I["patch"]) + W[T + "embeddings.patch_embedding.bias"]  # [g², d]
    x = x + W[T + "embeddings.position_embedding.weight"]  # [g², d], + a learned position each
    for i in range(I["depth"]):
        x = vit_layer(x, W, f"{T}encoder.layers.{i}.", I)  # [g², d]
    x = tower_norm(x, W, T + "post_layernorm", I["eps"])  # [g², d]
    k = I["pool"]  # the pooling window's side
    s = I["image"] // I["patch"] // k  # features along a side
    x = x.reshape(s, k, s, k, -1).mean((1, 3)).reshape(s * s, -1)  # [tokens, d], each k×k window of patches averaged, row by row
    P = I["projector"]
    x = x / np.sqrt((x * x).mean(-1, keepdims=True) + np.float32(I["eps"])) * (1 + W[P + "mm_soft_emb_norm.weight"])  # an RMSNorm scaled by 1 + its weight
    return x @ W[P + "mm_input_projection_weight"]  # [tokens, hidden], stored [d, hidden]


#.
#: image_qwen2_vl
def image_features(pixels, W):
    # pixels: [channels, height, width], as Qwen2-VL's processor resizes and normalizes them -> [features, hidden]
    I = CONFIG["image"]
    T, p, m = I["tower"], I["patch"], I["merge"]
    c, h, w = pixels.shape
    gh, gw = h // p, w // p  # the patch grid
    IMAGE["grid"] = gh // m, gw // m  # the features' grid
    x = pixels.reshape(c, gh // m, m, p, gw // m, m, p).transpose(1, 4, 2, 5, 0, 3, 6)  # [gh/m, gw/m, m, m, c, p, p]: m×m blocks of patches, row by row
    x = np.broadcast_to(x[:, :, :, :, :, None], (*x.shape[:5], I["frames"], p, p)).reshape(gh * gw, -1)  # [patches, c·frames·p·p], the image's one frame repeated
    kernel = W[T + "patch_embed.proj.weight"]  # [d, c, frames, p, p], no bias
    x = x @ kernel.reshape(kernel.shape[0], -1).T  # [patches, d]
    rows, cols = np.meshgrid(np.arange(gh), np.arange(gw), indexing="ij")
    order = lambda a: a.reshape(gh // m, m, gw // m, m).transpose(0, 2, 1, 3).reshape(-1)  # in the patches' order
    pos = np.stack([order(rows), order(cols)], -1)  # [patches, 2]: each patch's row and column
    hd = x.shape[-1] // I["heads"]
    inv = 1.0 / np.float32(I["theta"]) ** (np.arange(0, hd // 2, 2, dtype=np.float32) / np.float32(hd // 2))  # [hd/4]
    ang = (pos[:, :, None].astype(np.float32) * inv).reshape(len(pos), -1)  # [patches, hd/2]: the row's angles, then the column's
    ang = np.concatenate([ang, ang], -1)  # [patches, hd]
    for i in range(I["depth"]):
        x = qwen2_vision_block(x, W, f"{T}blocks.{i}.", I, np.cos(ang), np.sin(ang))  # [patches, d]
    x = tower_norm(x, W, T + "merger.ln_q", I["eps"]).reshape(-1, x.shape[-1] * m * m)  # [features, d·m²], each block's patches side by side
    x = act(tower_linear(x, W, T + "merger.mlp.0"), "gelu")  # [features, d·m²]
    return tower_linear(x, W, T + "merger.mlp.2")  # [features, hidden]


def qwen2_vision_block(x, W, L, I, cos, sin):
    # x: [N, d] -> [N, d], a Qwen2-VL vision block under L: 2-D rotary attention among every patch, then the MLP
    H = I["heads"]
    hd = x.shape[-1] // H
    a = tower_norm(x, W, L + "norm1", I["eps"])  # [N, d]
    q, k, v = tower_linear(a, W, L + "attn.qkv").reshape(-1, 3, H, hd).transpose(1, 2, 0, 3)  # [H, N, hd] each
    turn = lambda t: t * cos + np.concatenate([-t[..., hd // 2 :], t[..., : hd // 2]], -1) * sin  # rotate-half pairs, at each patch's row and column
    q, k = turn(q), turn(k)
    s = q @ k.transpose(0, 2, 1) / math.sqrt(hd)  # [H, N, N], every patch sees every other
    s = np.exp(s - s.max(-1, keepdims=True))
    s = s / s.sum(-1, keepdims=True)  # softmax over keys
    o = (s @ v).transpose(1, 0, 2).reshape(-1, H * hd)  # [N, d]
    x = x + tower_linear(o, W, L + "attn.proj")  # [N, d]
    m = act(tower_linear(tower_norm(x, W, L + "norm2", I["eps"]), W, L + "mlp.fc1"), I["act"])  # [N, intermediate]
    return x + tower_linear(m, W, L + "mlp.fc2")  # [N, d]


def mrope_positions(ids, token, grid):
    # ids: [T] -> [3, T], each token's time, row and column (transformers' get_rope_index): text at the next position on all three;
    # the image's run of placeholders over its grid, time at the run's start, row and column added to it; text after it from the start plus the grid's longer side
    rows, cols = grid
    pos, nxt, t = [], 0, 0
    while t < len(ids):
        if ids[t] == token:
            pos += [(nxt, nxt + k // cols, nxt + k % cols) for k in range(rows * cols)]
            t, nxt = t + rows * cols, nxt + max(rows, cols)
        else:
            pos.append((nxt, nxt, nxt))
            t, nxt = t + 1, nxt + 1
    return np.array(pos[: len(ids)]).T  # [3, T]


#.
#: image_gemma3
def image_reach(ids, token):
    # ids: [T] -> [T], the last key each position sees: an image placeholder its run's last (the image's tokens see each other both ways), any other itself
    reach = np.arange(len(ids))
    for t in range(len(ids) - 2, -1, -1):
        if ids[t] == token and ids[t + 1] == token:
            reach[t] = reach[t + 1]
    return reach
#.
