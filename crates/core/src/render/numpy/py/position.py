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
