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


def tower_rms(x, W, name, eps):
    # x: [N, d] -> [N, d], an RMSNorm with its scale
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + np.float32(eps)) * W[name + ".weight"]


def patch_embed(pixels, W, name, p):
    # pixels: [channels, image, image] -> [g², d], the patch convolution (its stride its side) stored under name
    c = pixels.shape[0]
    g = pixels.shape[1] // p  # patches along a side
    patches = pixels[:, : g * p, : g * p].reshape(c, g, p, g, p).transpose(1, 3, 0, 2, 4).reshape(g * g, c * p * p)  # [g², c·p·p], each patch's pixels as the convolution's weight lays them out
    kernel = W[name]  # [d, c, p, p]
    return patches @ kernel.reshape(kernel.shape[0], -1).T  # [g², d]


def pixel_shuffle(x, k):
    # x: [g², d], a square of patches row by row -> [(g / k)², k²·d]: each k×k patches side by side, row offset first
    s = int(len(x) ** 0.5) // k  # features along a side
    return x.reshape(s, k, s, k, -1).transpose(0, 2, 1, 3, 4).reshape(s * s, -1)


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
#: image_clip
def clip_embed(pixels, W, I):
    # pixels: [channels, image, image] -> [1 + g², d], CLIP's embeddings under the tower's name prefix: the patches, the class token first, a learned position each, the first LayerNorm
    T = I["tower"]
    x = patch_embed(pixels, W, T + "embeddings.patch_embedding.weight", I["patch"])  # [g², d], no bias
    x = np.concatenate([W[T + "embeddings.class_embedding"][None], x])  # [1 + g², d], the class token first
    x = x + W[T + "embeddings.position_embedding.weight"]  # [1 + g², d], + a learned position each
    return tower_norm(x, W, T + "pre_layrnorm", I["eps"])  # [1 + g², d]


#.
#: image_llava
def llava_tile(pixels, W):
    # pixels: [channels, image, image], as LLaVA's processor makes them -> [features, hidden]
    I = CONFIG["image"]
    T = I["tower"]  # the vision tower's name prefix
    x = clip_embed(pixels, W, I)  # [1 + g², d]
    read = [i % (I["depth"] + 1) for i in I["layers"]]  # hidden states read: 0 the first layer's input, i layer i's output
    states = [x]
    for i in range(max(read)):
        x = vit_layer(x, W, f"{T}encoder.layers.{i}.", I)  # [1 + g², d]
        states.append(x)
    first = 1 if I["drop_class"] else 0  # the class token's state dropped, or kept
    f = np.concatenate([states[r][first:] for r in read], -1)  # [features, d · states read]
    P, bias = I["projector"], I["projector_bias"]
    if I["projector_norm"]:  # VipLlava: a LayerNorm over the joined states first
        f = tower_norm(f, W, P + "projector_layernorm", I["projector_norm"])  # [features, d · states read]
    f = act(tower_linear(f, W, P + "linear_1", bias), I["projector_act"])  # [features, hidden]
    return tower_linear(f, W, P + "linear_2", bias)  # [features, hidden]


#.
#: image_llava_square
def image_features(pixels, W):
    # pixels: [channels, image, image], as LLaVA's processor makes them -> [features, hidden]
    return llava_tile(pixels, W)


#.
#: image_llava_next
def image_features(pixels, W):
    # pixels: [tiles, channels, image, image], as LLaVA-NeXT's processor makes them (the whole image shrunk to a tile, then the tiles of its canvas row by row) -> [features, hidden]
    return pack_tiles(np.stack([llava_tile(tile, W) for tile in pixels]), W)  # LLaVA's features of each tile, packed


#.
#: image_llava_onevision
def image_features(pixels, W):
    # pixels: [tiles, channels, image, image], as LLaVA-OneVision's processor makes them (the whole image shrunk to a tile, then the tiles of its canvas row by row) -> [features, hidden]
    return pack_tiles(np.stack([onevision_tile(tile, W) for tile in pixels]), W)


def onevision_tile(pixels, W):
    # pixels: [channels, image, image] -> [g², hidden]: SigLIP's hidden states read (before its last LayerNorm) side by side, through the projector
    I = CONFIG["image"]
    read = [i % (I["depth"] + 1) for i in I["layers"]]  # hidden states read: 0 the embeddings', i layer i's output
    x = siglip(pixels, W, I, 0)  # [g², d], the embeddings
    states = [x]
    for i in range(max(read)):
        x = vit_layer(x, W, f"{I['tower']}encoder.layers.{i}.", I)  # [g², d]
        states.append(x)
    f = np.concatenate([states[r] for r in read], -1)  # [g², d · states read]
    P, bias = I["projector"], I["projector_bias"]
    f = act(tower_linear(f, W, P + "linear_1", bias), I["projector_act"])  # [g², hidden]
    return tower_linear(f, W, P + "linear_2", bias)  # [g², hidden]


#.
#: image_anyres
def pack_tiles(f, W):
    # f: [tiles, g², hidden], the features of the whole image's tile and of its canvas's, row by row -> [features, hidden]
    I = CONFIG["image"]
    h, w = IMAGE["size"]  # the image's own height and width (--image-size), which its features follow
    g, (ch, cw) = I["image"] // I["patch"], canvas(h, w, I["pinpoints"])
    th, tw = ch // I["image"], cw // I["image"]  # the canvas's tiles down and across
    grid = f[1:].reshape(th, tw, g, g, -1).transpose(0, 2, 1, 3, 4).reshape(th * g, tw * g, -1)  # [th · g, tw · g, hidden], each feature in its place on the canvas
    grid = unpad(grid, h, w)  # [rows, cols, hidden], the rows or columns of the padding dropped
    rows, cols = grid.shape[:2]
    ratio = math.sqrt(rows * cols / (I["most"] * g * g)) if I["most"] else 0  # OneVision's: the kept features over anyres_max_N tiles' worth, in side
    if ratio > 1.1:
        grid = bilinear(grid, int(rows // ratio), int(cols // ratio))  # shrunk to about N tiles' worth
    ends = np.broadcast_to(W[I["newline"]], (grid.shape[0], 1, grid.shape[2]))  # the learned vector ending each row
    packed = np.concatenate([grid, ends], 1).reshape(-1, grid.shape[2])  # [rows · (cols + 1), hidden]
    return np.concatenate([f[0], packed])  # [g² + rows · (cols + 1), hidden], the whole image's features first


def canvas(h, w, pinpoints):  # the [height, width] of pinpoints that keeps most of an h × w image resized into it without distortion, the least wasted of those
    best, kept, wasted = None, 0, float("inf")
    for ch, cw in pinpoints:
        scale = min(cw / w, ch / h)
        effective = min(int(w * scale) * int(h * scale), w * h)
        if effective > kept or (effective == kept and ch * cw - effective < wasted):
            best, kept, wasted = (ch, cw), effective, ch * cw - effective
    return best


def unpad(grid, h, w):  # [rows, cols, D] of an h × w image's canvas -> the rows (or columns) of its padding dropped
    rows, cols = grid.shape[:2]
    if w / h > cols / rows:  # wider than the canvas: padded above and below
        pad = (rows - int(round(h * (cols / w), 7))) // 2
        return grid[pad : rows - pad]
    pad = (cols - int(round(w * (rows / h), 7))) // 2
    return grid[:, pad : cols - pad]


def bilinear(grid, oh, ow):  # [H, W, D] -> [oh, ow, D], as torch's interpolate(mode="bilinear"), corners not aligned
    def taps(n, out):  # each output's two source indexes and the second's weight
        src = np.maximum((np.arange(out) + 0.5) * (n / out) - 0.5, 0)
        i0 = np.minimum(np.floor(src).astype(int), n - 1)
        return i0, np.minimum(i0 + 1, n - 1), (src - i0).astype(np.float32)
    (y0, y1, ly), (x0, x1, lx) = taps(grid.shape[0], oh), taps(grid.shape[1], ow)
    lx = lx[None, :, None]
    row = lambda y: grid[y][:, x0] * (1 - lx) + grid[y][:, x1] * lx  # [oh, ow, D], along each row
    return row(y0) * (1 - ly)[:, None, None] + row(y1) * ly[:, None, None]


#.
#: image_git
def image_features(pixels, W):
    # pixels: [channels, image, image], as GIT's processor (CLIP's) makes them -> [1 + g², hidden]: CLIP's vision model to its last LayerNorm, the class token kept, then GIT's projection
    I = CONFIG["image"]
    T = I["tower"]  # the vision tower's name prefix
    x = clip_embed(pixels, W, I)  # [1 + g², d]
    for i in range(I["depth"]):
        x = vit_layer(x, W, f"{T}encoder.layers.{i}.", I)  # [1 + g², d]
    x = tower_norm(x, W, T + "post_layernorm", I["eps"])  # [1 + g², d]
    P = I["projector"]
    x = tower_linear(x, W, P + "0")  # [1 + g², hidden], into the text width
    return tower_norm(x, W, P + "1", I["eps"])  # [1 + g², hidden], a LayerNorm of the tower's ε


def image_first_reach(n, T):
    # -> [n + T], the last key each position sees: the image's n features (first) see each other both ways, the text's T tokens causally
    return np.concatenate([np.full(n, n - 1), np.arange(n, n + T)])


#.
#: image_siglip
def siglip(pixels, W, I, read=None):
    # pixels: [channels, image, image] -> [g², d]: SigLIP's vision model to its last LayerNorm, or the hidden state `read` (0 the embeddings', i layer i's output) without it
    T = I["tower"]  # SigLIP's vision model's name prefix
    x = patch_embed(pixels, W, T + "embeddings.patch_embedding.weight", I["patch"]) + W[T + "embeddings.patch_embedding.bias"]  # [g², d]
    x = x + W[T + "embeddings.position_embedding.weight"]  # [g², d], + a learned position each
    for i in range(I["depth"] if read is None else read):
        x = vit_layer(x, W, f"{T}encoder.layers.{i}.", I)  # [g², d]
    return tower_norm(x, W, T + "post_layernorm", I["eps"]) if read is None else x  # [g², d]


#.
#: image_paligemma
def image_features(pixels, W):
    # pixels: [channels, image, image], as PaliGemma's processor makes them -> [g², hidden]: a feature per patch
    I = CONFIG["image"]
    return tower_linear(siglip(pixels, W, I), W, I["projector"] + "linear")  # [g², hidden]


#.
#: image_deepseek_vl
def image_features(pixels, W):
    # pixels: [channels, image, image], as DeepSeek-VL's processor makes them -> [g², hidden]: a feature per patch through the aligner
    I = CONFIG["image"]
    P = I["projector"]
    x = act(tower_linear(siglip(pixels, W, I), W, P + "linear1"), "gelu")  # [g², hidden], exact GELU
    return tower_linear(x, W, P + "linear2")  # [g², hidden]


#.
#: image_gemma3
def image_features(pixels, W):
    # pixels: [channels, image, image], as Gemma 3's processor makes them -> [tokens, hidden]
    I = CONFIG["image"]
    x = siglip(pixels, W, I)  # [g², d]
    k = I["pool"]  # the pooling window's side
    s = I["image"] // I["patch"] // k  # features along a side
    x = x.reshape(s, k, s, k, -1).mean((1, 3)).reshape(s * s, -1)  # [tokens, d], each k×k window of patches averaged, row by row
    P = I["projector"]
    x = x / np.sqrt((x * x).mean(-1, keepdims=True) + np.float32(I["eps"])) * (1 + W[P + "mm_soft_emb_norm.weight"])  # an RMSNorm scaled by 1 + its weight
    return x @ W[P + "mm_input_projection_weight"]  # [tokens, hidden], stored [d, hidden]


#.
#: image_qwen
def qwen_patches(pixels, I):
    # pixels: [channels, height, width] -> [patches, channels·frames·p·p] in the order the processor flattens them (m×m blocks of patches,
    # row by row; the image's one frame repeated), each patch's row and column [patches, 2]; and the features' grid (rows, columns)
    p, m = I["patch"], I["merge"]
    c, h, w = pixels.shape
    gh, gw = h // p, w // p  # the patch grid
    x = pixels.reshape(c, gh // m, m, p, gw // m, m, p).transpose(1, 4, 2, 5, 0, 3, 6)  # [gh/m, gw/m, m, m, c, p, p]
    x = np.broadcast_to(x[:, :, :, :, :, None], (*x.shape[:5], I["frames"], p, p)).reshape(gh * gw, -1)
    rows, cols = np.meshgrid(np.arange(gh), np.arange(gw), indexing="ij")
    order = lambda a: a.reshape(gh // m, m, gw // m, m).transpose(0, 2, 1, 3).reshape(-1)  # in the patches' order
    return x, np.stack([order(rows), order(cols)], -1), (gh // m, gw // m)


def qwen_embed(pixels, W, I):
    # pixels: [channels, height, width] -> the patches through the convolution (its bias apart) [patches, d], each patch's row and
    # column [patches, 2], and the 2-D rotary cos, sin [patches, hd]; the features' grid into IMAGE
    x, pos, IMAGE["grid"] = qwen_patches(pixels, I)
    kernel = W[I["tower"] + "patch_embed.proj.weight"]  # [d, c, frames, p, p]
    x = x @ kernel.reshape(kernel.shape[0], -1).T  # [patches, d]
    return (x, pos) + qwen_rope(pos, x.shape[-1] // I["heads"], I["theta"])


def qwen_rope(pos, hd, theta):
    # pos: [patches, 2] -> cos, sin [patches, hd]: a quarter of a head's dims turn by the patch's row, a quarter by its column, the two written twice
    inv = 1.0 / np.float32(theta) ** (np.arange(0, hd // 2, 2, dtype=np.float32) / np.float32(hd // 2))  # [hd/4]
    ang = (pos[:, :, None].astype(np.float32) * inv).reshape(len(pos), -1)  # [patches, hd/2]: the row's angles, then the column's
    ang = np.concatenate([ang, ang], -1)  # [patches, hd]
    return np.cos(ang), np.sin(ang)


def qwen_block(x, W, L, I, cos, sin, mlp, norm=tower_norm, allowed=None):
    # x: [N, d] -> [N, d], a Qwen vision block under L: 2-D rotary attention among every patch (or where allowed), then the MLP
    # (its two maps named mlp, or a gated MLP's three)
    H = I["heads"]
    hd = x.shape[-1] // H
    a = norm(x, W, L + "norm1", I["eps"])  # [N, d]
    q, k, v = tower_linear(a, W, L + "attn.qkv").reshape(-1, 3, H, hd).transpose(1, 2, 0, 3)  # [H, N, hd] each
    turn = lambda t: t * cos + np.concatenate([-t[..., hd // 2 :], t[..., : hd // 2]], -1) * sin  # rotate-half pairs, at each patch's row and column
    q, k = turn(q), turn(k)
    s = q @ k.transpose(0, 2, 1) / math.sqrt(hd)  # [H, N, N], every patch sees every other
    if allowed is not None:
        s = np.where(allowed, s, -np.inf)  # or those of its window alone
    s = np.exp(s - s.max(-1, keepdims=True))
    s = s / s.sum(-1, keepdims=True)  # softmax over keys
    o = (s @ v).transpose(1, 0, 2).reshape(-1, H * hd)  # [N, d]
    x = x + tower_linear(o, W, L + "attn.proj")  # [N, d]
    h = norm(x, W, L + "norm2", I["eps"])  # [N, d]
    if len(mlp) == 3:  # gated: act(gate) times up, then down
        return x + tower_linear(act(tower_linear(h, W, L + mlp[0]), I["act"]) * tower_linear(h, W, L + mlp[1]), W, L + mlp[2])
    return x + tower_linear(act(tower_linear(h, W, L + mlp[0]), I["act"]), W, L + mlp[1])  # [N, d]


def qwen_merger(x, W, P, names, joined_norm=False, norm=tower_norm):
    # x: [patches, d] -> [features, hidden]: each merge² patches side by side (normed one by one before, or together after where joined_norm), two biased maps with GELU between
    j = x.shape[-1] * CONFIG["image"]["merge"] ** 2
    x = norm(x.reshape(-1, j), W, P + names[0], 1e-6) if joined_norm else norm(x, W, P + names[0], 1e-6).reshape(-1, j)  # [features, d·m²]
    return tower_linear(act(tower_linear(x, W, P + names[1]), "gelu"), W, P + names[2])  # [features, hidden]


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
#: image_qwen2_vl
def image_features(pixels, W):
    # pixels: [channels, height, width], as Qwen2-VL's processor resizes and normalizes them -> [features, hidden]
    I = CONFIG["image"]
    T = I["tower"]
    x, _, cos, sin = qwen_embed(pixels, W, I)  # [patches, d], no bias
    for i in range(I["depth"]):
        x = qwen_block(x, W, f"{T}blocks.{i}.", I, cos, sin, ("mlp.fc1", "mlp.fc2"))  # [patches, d]
    return qwen_merger(x, W, T + "merger.", ("ln_q", "mlp.0", "mlp.2"))  # [features, hidden]


#.
#: image_qwen2_5_vl
def image_features(pixels, W):
    # pixels: [channels, height, width], as Qwen2.5-VL's processor resizes and normalizes them -> [features, hidden]
    I = CONFIG["image"]
    T = I["tower"]
    x, pos, cos, sin = qwen_embed(pixels, W, I)  # [patches, d], no bias
    span = I["window"] * I["merge"]  # a window's side in patches, windows tiled from the top left
    win = pos[:, 0] // span * -(-(pixels.shape[2] // I["patch"]) // span) + pos[:, 1] // span  # [patches], each one's window
    same = win[:, None] == win[None, :]  # [patches, patches]
    for i in range(I["depth"]):
        allowed = None if i in I["full"] else same  # the full blocks see every patch, the others their window's
        x = qwen_block(x, W, f"{T}blocks.{i}.", I, cos, sin, ("mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"), tower_rms, allowed)
    return qwen_merger(x, W, T + "merger.", ("ln_q", "mlp.0", "mlp.2"), norm=tower_rms)  # [features, hidden]


#.
#: image_qwen3_vl
def image_features(pixels, W):
    # pixels: [channels, height, width], as Qwen3-VL's processor resizes and normalizes them -> [features, hidden]; its deep-stack features into IMAGE
    I = CONFIG["image"]
    T = I["tower"]
    x, pos, cos, sin = qwen_embed(pixels, W, I)
    x = x + W[T + "patch_embed.proj.bias"]  # [patches, d]
    x = x + resampled_positions(W[T + "pos_embed.weight"], pos, pixels.shape[1] // I["patch"], pixels.shape[2] // I["patch"])  # + the learned grid, resampled
    names = ("norm", "linear_fc1", "linear_fc2")
    IMAGE["deepstack"] = []
    for i in range(I["depth"]):
        x = qwen_block(x, W, f"{T}blocks.{i}.", I, cos, sin, ("mlp.linear_fc1", "mlp.linear_fc2"))  # [patches, d]
        if i in I["deepstack"]:  # this block's output through a deep-stack merger, for the language model's next layer in turn
            IMAGE["deepstack"].append(qwen_merger(x, W, f"{T}deepstack_merger_list.{I['deepstack'].index(i)}.", names, joined_norm=True))
    return qwen_merger(x, W, T + "merger.", names)  # [features, hidden]


def resampled_positions(table, pos, gh, gw):
    # table: [side², d] -> [patches, d]: the learned grid resampled to the gh × gw patch grid (bilinear, corners aligned, in float32), at each patch's row and column
    side = CONFIG["image"]["positions"]

    def taps(i, size):  # the two taps along an axis and their weights
        src = i.astype(np.float32) * np.float32(side - 1) / np.float32(max(size - 1, 1))
        floor = np.floor(src)
        return [(np.clip(floor + o, 0, side - 1).astype(int), np.maximum(np.float32(1) - np.abs(src - floor - np.float32(o)), 0)) for o in (0, 1)]

    out = 0
    for hi, hw in taps(pos[:, 0], gh):
        for wi, ww in taps(pos[:, 1], gw):
            out = out + table[hi * side + wi] * (hw * ww)[:, None]
    return out  # [patches, d]


#.
#: image_llama4
def image_features(pixels, W):
    # pixels: [tiles, channels, image, image] (or one tile [channels, image, image]), as Llama 4's processor cuts an image -> [tiles · features, hidden]
    tiles = pixels.reshape(-1, *pixels.shape[-3:])
    return np.concatenate([llama4_tile(t, W, CONFIG["image"]) for t in tiles])


def llama4_tile(pixels, W, I):
    # pixels: [channels, image, image] -> [features, hidden]: Llama 4's ViT over one tile, the pixel shuffle, the adapter and the projector
    T, p, k = I["tower"], I["patch"], I["shuffle"]
    g = I["image"] // p  # patches along a side
    c = pixels.shape[0]
    x = pixels[:, : g * p, : g * p].reshape(c, g, p, g, p).transpose(1, 3, 0, 2, 4).reshape(g * g, c * p * p)  # [g², c·p·p], as torch's Unfold lays a patch out
    x = x @ W[T + "patch_embedding.linear.weight"].T  # [g², d], no bias
    x = np.concatenate([x, W[T + "class_embedding"][None]])  # [g² + 1, d], the class token last
    x = tower_norm(x + W[T + "positional_embedding_vlm"], W, T + "layernorm_pre", I["eps"])  # + a learned position each
    cos, sin = llama4_rope(g, x.shape[-1] // I["heads"], I["theta"])
    for i in range(I["depth"]):
        x = llama4_layer(x, W, f"{T}model.layers.{i}.", I, cos, sin)  # [g² + 1, d]
    x = pixel_shuffle(tower_norm(x, W, T + "layernorm_post", I["eps"])[:-1], k)  # [features, k²·d], the class token dropped
    gelu = lambda y: act(y, "gelu")
    x = gelu(tower_linear(gelu(tower_linear(x, W, T + "vision_adapter.mlp.fc1", False)), W, T + "vision_adapter.mlp.fc2", False))
    return tower_linear(x, W, I["projector"] + "linear_1", False)  # [features, hidden]


def llama4_rope(g, hd, theta):
    # -> cos, sin [g² + 1, hd / 2]: pair j of a head turns by (column + 1)·f_j in its first half, by (row + 1)·f_j in its second; the class token not at all
    f = np.float32(1) / np.float32(theta) ** (np.arange(0, hd // 2, 2, dtype=np.float32)[: hd // 4] / np.float32(hd // 2))  # [hd/4]
    idx = np.arange(g * g)
    ang = np.concatenate([(idx % g + 1)[:, None] * f, (idx // g + 1)[:, None] * f], -1).astype(np.float32)  # [g², hd/2]
    ang = np.concatenate([ang, np.zeros((1, hd // 2), np.float32)])  # the class token's
    return np.cos(ang), np.sin(ang)


def llama4_layer(x, W, L, I, cos, sin):
    # x: [N, d] -> [N, d], a Llama 4 vision layer under L: 2-D rotary attention among every token (adjacent pairs turned), then the MLP
    H = I["heads"]
    hd = x.shape[-1] // H
    a = tower_norm(x, W, L + "input_layernorm", I["eps"])
    q, k, v = (tower_linear(a, W, L + f"self_attn.{m}_proj").reshape(-1, H, hd // 2, 2).transpose(1, 0, 2, 3) for m in "qkv")  # [H, N, hd/2, 2]
    turn = lambda t: np.stack([t[..., 0] * cos - t[..., 1] * sin, t[..., 0] * sin + t[..., 1] * cos], -1).reshape(H, -1, hd)
    q, k, v = turn(q), turn(k), v.reshape(H, -1, hd)
    s = q @ k.transpose(0, 2, 1) / math.sqrt(hd)  # [H, N, N], every token sees every other
    s = np.exp(s - s.max(-1, keepdims=True))
    s = s / s.sum(-1, keepdims=True)
    o = (s @ v).transpose(1, 0, 2).reshape(-1, H * hd)  # [N, d]
    x = x + tower_linear(o, W, L + "self_attn.o_proj")
    m = act(tower_linear(tower_norm(x, W, L + "post_attention_layernorm", I["eps"]), W, L + "mlp.fc1"), "gelu")
    return x + tower_linear(m, W, L + "mlp.fc2")  # [N, d]


#.
#: image_internvl
def image_features(pixels, W):
    # pixels: [tiles, channels, image, image] (or one tile [channels, image, image]), as InternVL's processor cuts an image -> [tiles · features, hidden]
    tiles = pixels.reshape(-1, *pixels.shape[-3:])
    return np.concatenate([internvl_tile(t, W, CONFIG["image"]) for t in tiles])


def internvl_tile(pixels, W, I):
    # pixels: [channels, image, image] -> [features, hidden]: InternViT over one tile, the pixel shuffle and the projector
    T, k = I["tower"], I["shuffle"]
    x = patch_embed(pixels, W, T + "embeddings.patch_embeddings.projection.weight", I["patch"]) + W[T + "embeddings.patch_embeddings.projection.bias"]  # [g², d]
    x = np.concatenate([W[T + "embeddings.cls_token"][0], x])  # [1 + g², d], the class token first
    if I["positions"]:
        x = x + W[T + "embeddings.position_embeddings"][0]  # + a learned position each
    norm = tower_rms if I["rms"] else tower_norm
    H = I["heads"]
    hd = x.shape[-1] // H
    for i in range(I["depth"]):
        L = f"{T}encoder.layer.{i}."
        a = norm(x, W, L + "layernorm_before", I["eps"])  # [N, d]
        q, kk, v = (tower_linear(a, W, L + f"attention.{m}_proj", I["qkv_bias"]) for m in "qkv")  # [N, d] each
        if I["qk_norm"]:  # RMSNorms over the whole width, before the heads split
            q, kk = tower_rms(q, W, L + "attention.q_norm", 1e-6), tower_rms(kk, W, L + "attention.k_norm", 1e-6)
        q, kk, v = (t.reshape(-1, H, hd).transpose(1, 0, 2) for t in (q, kk, v))  # [H, N, hd]
        s = q @ kk.transpose(0, 2, 1) / math.sqrt(hd)  # [H, N, N], every token sees every other
        s = np.exp(s - s.max(-1, keepdims=True))
        s = s / s.sum(-1, keepdims=True)
        o = (s @ v).transpose(1, 0, 2).reshape(-1, H * hd)  # [N, d]
        x = x + W[L + "lambda_1"] * tower_linear(o, W, L + "attention.projection_layer")  # scaled by a learned vector
        m = act(tower_linear(norm(x, W, L + "layernorm_after", I["eps"]), W, L + "mlp.fc1"), I["act"])
        x = x + W[L + "lambda_2"] * tower_linear(m, W, L + "mlp.fc2")  # [N, d]
    if I["last_norm"]:
        x = tower_norm(x, W, T + "layernorm", I["eps"])
    x = pixel_shuffle(x[1:], k)  # [features, k²·d], the class token dropped
    P = I["projector"]
    x = act(tower_linear(tower_norm(x, W, P + "layer_norm", 1e-5), W, P + "linear_1"), I["projector_act"])  # [features, hidden]
    return tower_linear(x, W, P + "linear_2")  # [features, hidden]


#.
#: image_aya
def image_features(pixels, W):
    # pixels: [tiles, channels, image, image] (or one tile [channels, image, image]), as Aya Vision's (Command A Vision's) processor cuts an image -> [tiles · features, hidden]
    tiles = pixels.reshape(-1, *pixels.shape[-3:])
    return np.concatenate([aya_tile(t, W, CONFIG["image"]) for t in tiles])


def aya_tile(pixels, W, I):
    # pixels: [channels, image, image] -> [features, hidden]: SigLIP to the state read, the pixel shuffle and the SwiGLU projector
    x = siglip(pixels, W, I, None if I["last_norm"] else I["layers_run"])  # [g², d]: the tower's output, or a hidden state before its last LayerNorm
    x = pixel_shuffle(x, I["shuffle"])  # [features, k²·d]
    P = I["projector"]
    if I["projector_norm"] is not None:  # Aya Vision's LayerNorm
        x = tower_norm(x, W, P + "layernorm", I["projector_norm"])
    h = tower_linear(x, W, P + "linear_1")  # [features, inner]
    half = h.shape[-1] // 2
    h = h[:, :half] * act(h[:, half:], "silu")  # [features, inner / 2]: the second half, through SiLU, gates the first
    return tower_linear(h, W, P + "linear_2")  # [features, hidden]


#.
#: image_idefics3
def image_features(pixels, W):
    # pixels: [frames, channels, image, image] (or one frame [channels, image, image]), as Idefics3's (SmolVLM's) processor makes them: the tiles row by row, then the whole image -> [frames · features, hidden]
    frames = pixels.reshape(-1, *pixels.shape[-3:])
    return np.concatenate([idefics3_frame(f, W, CONFIG["image"]) for f in frames])


def idefics3_frame(pixels, W, I):
    # pixels: [channels, image, image] -> [features, hidden]: SigLIP to its last LayerNorm (a whole frame's patches at their own positions), the pixel shuffle and the connector's bias-free map
    x = pixel_shuffle(siglip(pixels, W, I), I["shuffle"])  # [features, k²·d]
    return tower_linear(x, W, I["projector"] + "modality_projection.proj", bias=False)  # [features, hidden]


#.
#: image_pixtral
def image_features(pixels, W):
    # pixels: [channels, height, width], as Pixtral's processor resizes and normalizes them (sides multiples of patch × merge) -> [features, hidden]
    I = CONFIG["image"]
    T, P, p, m = I["tower"], I["projector"], I["patch"], I["merge"]
    c, h, w = pixels.shape
    gh, gw = h // p, w // p  # the patch grid
    x = pixels.reshape(c, gh, p, gw, p).transpose(1, 3, 0, 2, 4).reshape(gh * gw, c * p * p)  # [patches, c·p·p], row by row
    kernel = W[T + "patch_conv.weight"]  # [d, c, p, p]
    x = tower_rms(x @ kernel.reshape(kernel.shape[0], -1).T, W, T + "ln_pre", I["eps"])  # [patches, d], no bias
    rows, cols = np.meshgrid(np.arange(gh), np.arange(gw), indexing="ij")
    cos, sin = pixtral_rope(rows.reshape(-1), cols.reshape(-1), x.shape[-1] // I["heads"], I["theta"])
    for i in range(I["layer"] % (I["depth"] + 1)):  # up to the hidden state read (0: the embeddings')
        x = pixtral_layer(x, W, f"{T}transformer.layers.{i}.", I, cos, sin)  # [patches, d]
    x = tower_rms(x, W, P + "norm", I["projector_eps"])  # the language model's ε
    d = x.shape[-1]
    x = x.reshape(gh, gw, d)[: gh // m * m, : gw // m * m]  # a last odd row or column of patches dropped, as torch's unfold drops it
    x = x.reshape(gh // m, m, gw // m, m, d).transpose(0, 2, 4, 1, 3).reshape(-1, d * m * m)  # [features, d·m²]: each m×m patches, channel by row by column (torch's unfold)
    x = x @ W[P + "patch_merger.merging_layer.weight"].T  # [features, d]
    x = act(tower_linear(x, W, P + "linear_1", I["projector_bias"]), I["projector_act"])  # [features, hidden]
    return tower_linear(x, W, P + "linear_2", I["projector_bias"])  # [features, hidden]


def pixtral_rope(rows, cols, hd, theta):
    # -> cos, sin [patches, hd]: a head's first quarter of dims turn by the patch's row (the even frequencies), its second by its column (the odd), written twice (rotate-half pairs)
    inv = np.float32(1) / np.float32(theta) ** (np.arange(0, hd, 2, dtype=np.float32) / np.float32(hd))  # [hd/2]
    ang = np.concatenate([rows[:, None] * inv[0::2], cols[:, None] * inv[1::2]], -1).astype(np.float32)  # [patches, hd/2]
    ang = np.concatenate([ang, ang], -1)  # [patches, hd]
    return np.cos(ang), np.sin(ang)


def pixtral_layer(x, W, L, I, cos, sin):
    # x: [N, d] -> [N, d], a Pixtral layer under L: RMSNorms, rotary attention among every patch (bias-free projections), a gated MLP
    H = I["heads"]
    hd = x.shape[-1] // H
    a = tower_rms(x, W, L + "attention_norm", I["eps"])
    q, k, v = ((a @ W[L + f"attention.{n}_proj.weight"].T).reshape(-1, H, hd).transpose(1, 0, 2) for n in "qkv")  # [H, N, hd] each
    turn = lambda t: t * cos + np.concatenate([-t[..., hd // 2 :], t[..., : hd // 2]], -1) * sin
    q, k = turn(q), turn(k)
    s = q @ k.transpose(0, 2, 1) / math.sqrt(hd)  # [H, N, N], every patch sees every other
    s = np.exp(s - s.max(-1, keepdims=True))
    s = s / s.sum(-1, keepdims=True)
    o = (s @ v).transpose(1, 0, 2).reshape(-1, H * hd)  # [N, d]
    x = x + o @ W[L + "attention.o_proj.weight"].T
    h = tower_rms(x, W, L + "ffn_norm", I["eps"])
    g = act(h @ W[L + "feed_forward.gate_proj.weight"].T, I["act"]) * (h @ W[L + "feed_forward.up_proj.weight"].T)
    return x + g @ W[L + "feed_forward.down_proj.weight"].T  # [N, d]


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
