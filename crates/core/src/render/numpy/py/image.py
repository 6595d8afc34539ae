#: image
IMAGE = {}  # the image's features [placeholders, hidden], from --pixels (main)


def tower_linear(x, W, name, bias=True):
    # x: [N, in] -> [N, out], a tower's linear map stored [out, in], with its bias where it has one
    y = x @ W[name + ".weight"].T  # [N, out]
    return y + W[name + ".bias"] if bias else y


def tower_norm(x, W, name, eps):
    # x: [N, d] -> [N, d], a LayerNorm with its scale and shift
    mean = x.mean(-1, keepdims=True)  # [N, 1]
    var = ((x - mean) ** 2).mean(-1, keepdims=True)  # [N, 1]
    return (x - mean) / np.sqrt(var + eps) * W[name + ".weight"] + W[name + ".bias"]  # [N, d]


def llava_features(pixels, W):
    # pixels: [channels, image, image], as the model's processor makes them -> [features, hidden]
    I = CONFIG["image"]
    T = I["tower"]  # the vision tower's name prefix
    c, p = I["channels"], I["patch"]
    g = I["image"] // p  # patches along a side
    patches = pixels[:, : g * p, : g * p].reshape(c, g, p, g, p).transpose(1, 3, 0, 2, 4).reshape(g * g, c * p * p)  # [g², c·p·p], each patch's pixels as the convolution's weight lays them out
    kernel = W[T + "embeddings.patch_embedding.weight"]  # [d, c, p, p]
    d = kernel.shape[0]
    x = patches @ kernel.reshape(d, -1).T  # [g², d], the patch convolution (its stride its side)
    x = np.concatenate([W[T + "embeddings.class_embedding"][None], x])  # [1 + g², d], the class token first
    x = x + W[T + "embeddings.position_embedding.weight"]  # [1 + g², d], + a learned position each
    x = tower_norm(x, W, T + "pre_layrnorm", I["eps"])  # [1 + g², d]
    read = [i % (I["depth"] + 1) for i in I["layers"]]  # hidden states read: 0 the first layer's input, i layer i's output
    states = [x]
    H = I["heads"]
    hd = d // H
    for i in range(max(read)):
        L = f"{T}encoder.layers.{i}."
        a = tower_norm(x, W, L + "layer_norm1", I["eps"])  # [N, d]
        q, k, v = (tower_linear(a, W, L + f"self_attn.{m}_proj").reshape(-1, H, hd).transpose(1, 0, 2) for m in "qkv")  # [H, N, hd] each
        s = q @ k.transpose(0, 2, 1) / math.sqrt(hd)  # [H, N, N], every patch sees every other
        s = np.exp(s - s.max(-1, keepdims=True))
        s = s / s.sum(-1, keepdims=True)  # softmax over keys
        o = (s @ v).transpose(1, 0, 2).reshape(-1, d)  # [N, d], the heads side by side
        x = x + tower_linear(o, W, L + "self_attn.out_proj")  # [N, d]
        m = act(tower_linear(tower_norm(x, W, L + "layer_norm2", I["eps"]), W, L + "mlp.fc1"), I["act"])  # [N, intermediate]
        x = x + tower_linear(m, W, L + "mlp.fc2")  # [N, d]
        states.append(x)
    first = 1 if I["drop_class"] else 0  # the class token's state dropped, or kept
    f = np.concatenate([states[r][first:] for r in read], -1)  # [features, d · states read]
    P, bias = I["projector"], I["projector_bias"]
    f = act(tower_linear(f, W, P + "linear_1", bias), I["projector_act"])  # [features, hidden]
    return tower_linear(f, W, P + "linear_2", bias)  # [features, hidden]
#.
