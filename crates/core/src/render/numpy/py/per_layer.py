#: per_layer_input
def per_layer_inputs(ids, x, W):
    # ids: [T], x: [T, hidden] (the scaled embeddings) -> [T, layers, width]: each layer's own input
    T, L, P = len(ids), len(PLAN), CONFIG["per_layer_input"]["width"]
#: ple_clamp_ids
    ids = np.where(ids < CONFIG["per_layer_input"]["vocab"], ids, 0)  # ids past the table read its row 0
#.
    looked = w(W, "ple_embed")[ids].reshape(T, L, P) * np.float32(math.sqrt(P))  # [T, L, P], a table of their own
    proj = (linear(x, w(W, "ple_proj")) / np.float32(math.sqrt(CONFIG["hidden"]))).reshape(T, L, P)  # [T, L, P], from the embeddings
    return (norm(proj, w(W, "ple_proj_norm")) + looked) * np.float32(1 / math.sqrt(2))  # [T, L, P]


#.
