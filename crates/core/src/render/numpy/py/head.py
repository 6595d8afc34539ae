def lm_head(z, W):
    # z: [T, hidden] -> logits: [T, vocab]
    C = CONFIG
#: embed_proj
    if C["embed_proj"]:
        z = linear(z, w(W, "project_out"))  # z: [T, width], mapped to the token table's width
#.
    head = w(W, "embed") if C["tied"] else w(W, "lm_head")  # head: [vocab, hidden]
#: !draft_centroids
    logits = z @ head.T  # logits: [T, vocab]
#.
#: draft_centroids
    logits = clustered(z, head, W)  # logits: [T, vocab], the best clusters' tokens scored
#.
    if C["head_bias"]:
        logits = logits + w(W, "lm_head", bias=True)  # logits: [T, vocab]
#: ngpt
    logits = logits * (w(W, "ngpt_logit_scale") * np.float32(C["ngpt"]["logit"]))  # logits: [T, vocab], a learned scale per entry
#.
    if C["logits_mult"] != 1:
        logits = logits * np.float32(C["logits_mult"])  # logits: [T, vocab], scaled
    if C["final_softcap"]:
        logits = C["final_softcap"] * np.tanh(logits / C["final_softcap"])  # logits: [T, vocab], in (-cap, cap)
#: logits_kept
    if C["logits_kept"]:
        logits = logits[:, : C["logits_kept"]]  # the rows that pad the head past the real vocabulary dropped
#.
    return logits.astype(np.float32)  # [T, vocab]
