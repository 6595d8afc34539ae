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
