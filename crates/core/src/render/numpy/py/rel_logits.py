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
