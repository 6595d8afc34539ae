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


def image_reach(ids, token):
    # ids: [T] -> [T], the last key each position sees: an image placeholder its run's last (the image's tokens see each other both ways), any other itself
    reach = np.arange(len(ids))
    for t in range(len(ids) - 2, -1, -1):
        if ids[t] == token and ids[t + 1] == token:
            reach[t] = reach[t + 1]
    return reach
#.
