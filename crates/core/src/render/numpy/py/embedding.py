#: !draft
def embed(ids, W):
    # ids: [T] int -> x: [T, hidden]
    C = CONFIG
    P = C["prompt"]
    if P:
        ids = np.concatenate([P["first_row"] + np.arange(P["length"]), ids])  # ids: [P + T], the learned prompt's rows first
    x = w(W, "embed")[ids]  # x: [T, hidden], row ids[t] of the embedding for each position
#: image_placed
    if "features" in IMAGE and not C["embed_scale"]:
        x[ids == CONFIG["image"]["token"]] = IMAGE["features"]  # each image placeholder's row the next of the image's features
#.
#: embed_proj
    if C["embed_proj"]:
        x = linear(x, w(W, "project_in"))  # x: [T, hidden], each row mapped from the table's width
#.
    if P:
        seg = np.where(np.arange(len(ids)) < P["length"], P["prompt_segment"], P["text_segment"])  # seg: [P + T], each position's segment
        x = x + w(W, "segment_embed")[seg]  # x: [P + T, hidden], + the embedding of its segment
    if C["embed_scale"]:
        x = x * np.float32(math.sqrt(C["hidden"]))  # x: [T, hidden], the token embeddings scaled by sqrt(hidden)
#: image_placed
    if "features" in IMAGE and C["embed_scale"]:
        x[ids == CONFIG["image"]["token"]] = IMAGE["features"]  # the features in place after the scaling, which is the embedding layer's own (Gemma's)
#.
    if C["embed_mult"] != 1:
        x = x * np.float32(C["embed_mult"])  # x: [T, hidden], a fixed multiplier
    if C["learned_positions"]:
        x = x + w(W, "pos_embed")[np.arange(len(ids)) + C["position_offset"]]  # x: [T, hidden], + learned position rows
#: sinusoidal
    if C["sinusoidal"]:
        x = x + sinusoids(np.arange(len(ids)) + C["position_offset"], C["hidden"])  # x: [T, hidden], + fixed position rows
#.
    if C["embed_norm"]:
        x = norm(x, w(W, "embed_norm"), w(W, "embed_norm", bias=True) if C["norm_bias"] else None)  # x: [T, hidden], normed
#: image_git
    if "features" in IMAGE:
        x = np.concatenate([IMAGE["features"], x])  # x: [N + T, hidden], the image's features before the text's embeddings, after their norm (GIT's)
#.
    return x  # [T, hidden]
#.
