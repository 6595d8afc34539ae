#: !decodes
#: !draft
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weights", required=True, help="folder with config.json and *.safetensors")
    ap.add_argument("--ids", required=True, help="comma-separated token ids")
    ap.add_argument("--out", required=True, help="where to write the logits (.npy, float32 [T, vocab])")
#: image
    ap.add_argument("--pixels", help="an image as the model's processor makes it (.npy, float32 [channels, height, width], or [tiles, channels, side, side] for a tiling processor); its features replace the placeholder ids, one each")
#.
#: image_anyres
    ap.add_argument("--image-size", nargs=2, type=int, metavar=("HEIGHT", "WIDTH"), help="the image's own size before its processor (its image_sizes), which LLaVA-NeXT's features follow; needed with --pixels")
#.
    a = ap.parse_args()
    ids = np.array([int(i) for i in a.ids.split(",")])
#: !image
    np.save(a.out, forward(ids, load_safetensors(a.weights)))
#.
#: image
    W = load_safetensors(a.weights)
    if a.pixels:
#: image_anyres
        if a.image_size is None:
            ap.error("--pixels needs --image-size: LLaVA-NeXT's (and OneVision's) features follow the image's own size")
        IMAGE["size"] = a.image_size
#.
        IMAGE["features"] = image_features(np.load(a.pixels).astype(np.float32), W)
#: image_gemma3
        IMAGE["reach"] = image_reach(ids, CONFIG["image"]["token"])
#.
#: image_git
        IMAGE["reach"] = image_first_reach(len(IMAGE["features"]), len(ids))
#.
#: image_qwen
        IMAGE["positions"] = mrope_positions(ids, CONFIG["image"]["token"], IMAGE["grid"])
#.
    np.save(a.out, forward(ids, W))
#.


#.
#: draft
def main():
    global POSITION
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weights", required=True, help="folder with config.json and *.safetensors")
    ap.add_argument("--inputs", required=True, help="a .npz of the target's state: `state` [steps, 2 backbone] (each draft step's input), "
                    "`position` (the last token's), and `k_full`, `v_full`, `k_sliding`, `v_sliding` ([KV, Tk, D], the target's keys and values)")
    ap.add_argument("--out", required=True, help="where to write the logits (.npy, float32 [steps, vocab])")
    ap.add_argument("--hidden", help="where to write each step's hidden state for the next (.npy, float32 [steps, backbone])")
    a = ap.parse_args()
    inputs = np.load(a.inputs)
    POSITION = int(inputs["position"])
    for kind in ("full", "sliding"):
        if f"k_{kind}" in inputs:
            SHARED_KV[kind] = inputs[f"k_{kind}"].astype(np.float32), inputs[f"v_{kind}"].astype(np.float32)
    W = load_safetensors(a.weights)
    steps = [forward(s[None, :].astype(np.float32), W) for s in inputs["state"]]
    np.save(a.out, np.concatenate([logits for logits, _ in steps]))
    if a.hidden:
        np.save(a.hidden, np.concatenate([h for _, h in steps]).astype(np.float32))


#.
#.
#: decodes
def main():
    global STATE
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weights", required=True, help="folder with config.json and *.safetensors")
    ap.add_argument("--ids", required=True, help="comma-separated token ids")
    ap.add_argument("--out", required=True, help="where to write the logits (.npy, float32 [T, vocab])")
    ap.add_argument("--prompt", type=int, help="decode: the first PROMPT ids as one sequence, then the rest one at a time, each layer carrying its state")
#: image
    ap.add_argument("--pixels", help="an image as the model's processor makes it (.npy, float32); its features replace the placeholder ids, one each (the ids as one sequence)")
#.
    a = ap.parse_args()
    ids = np.array([int(i) for i in a.ids.split(",")])
    W = load_safetensors(a.weights)
#: image
    if a.pixels:
        if a.prompt is not None:
            ap.error("--pixels runs the ids as one sequence: leave out --prompt")
        IMAGE["features"] = image_features(np.load(a.pixels).astype(np.float32), W)
#: image_qwen
        IMAGE["positions"] = mrope_positions(ids, CONFIG["image"]["token"], IMAGE["grid"])
#.
#.
    if a.prompt is None:
        np.save(a.out, forward(ids, W))  # the ids as one sequence
        return
    STATE = {}  # every layer's state, empty before the first token
    steps = ([ids[: a.prompt]] if a.prompt > 0 else []) + [ids[t : t + 1] for t in range(max(a.prompt, 0), len(ids))]
    np.save(a.out, np.concatenate([forward(step, W) for step in steps]))  # each step's logits, [T, vocab]


#.
if __name__ == "__main__":
    main()
