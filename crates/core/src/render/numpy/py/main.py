#: !decodes
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weights", required=True, help="folder with config.json and *.safetensors")
    ap.add_argument("--ids", required=True, help="comma-separated token ids")
    ap.add_argument("--out", required=True, help="where to write the logits (.npy, float32 [T, vocab])")
    a = ap.parse_args()
    ids = np.array([int(i) for i in a.ids.split(",")])
    np.save(a.out, forward(ids, load_safetensors(a.weights)))


#.
#: decodes
def main():
    global STATE
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weights", required=True, help="folder with config.json and *.safetensors")
    ap.add_argument("--ids", required=True, help="comma-separated token ids")
    ap.add_argument("--out", required=True, help="where to write the logits (.npy, float32 [T, vocab])")
    ap.add_argument("--prompt", type=int, help="decode: the first PROMPT ids as one sequence, then the rest one at a time, each layer carrying its state")
    a = ap.parse_args()
    ids = np.array([int(i) for i in a.ids.split(",")])
    W = load_safetensors(a.weights)
    if a.prompt is None:
        np.save(a.out, forward(ids, W))  # the ids as one sequence
        return
    STATE = {}  # every layer's state, empty before the first token
    steps = ([ids[: a.prompt]] if a.prompt > 0 else []) + [ids[t : t + 1] for t in range(max(a.prompt, 0), len(ids))]
    np.save(a.out, np.concatenate([forward(step, W) for step in steps]))  # each step's logits, [T, vocab]


#.
if __name__ == "__main__":
    main()
