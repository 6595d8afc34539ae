

def load_safetensors(directory):
    """Every tensor of every .safetensors file in `directory`, as float32 arrays."""
    weights = {}
    files = sorted(Path(directory).glob("*.safetensors"))
    if not files:
        raise SystemExit(f"{directory}: holds no .safetensors files; this file reads a safetensors checkpoint (a folder with config.json and its *.safetensors), not a GGUF")
    for path in files:
        data = path.read_bytes()
        n = int.from_bytes(data[:8], "little")
        header = json.loads(data[8 : 8 + n])
        base = 8 + n
        for name, info in header.items():
            if name == "__metadata__":
                continue
            start, end = info["data_offsets"]
            raw = data[base + start : base + end]
            dtype = info["dtype"]
            if dtype == "BF16":
                a = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
            else:
                a = np.frombuffer(raw, dtype={"F32": "<f4", "F16": "<f2", "F64": "<f8", "I64": "<i8", "I32": "<i4", "U8": "u1"}[dtype])
            weights[name] = (a.astype(np.float32) if a.dtype.kind == "f" else a.astype(np.int64)).reshape(info["shape"])  # integers (stored buffers) kept exact
    return weights


def w(W, key, b=None, e=None, bias=False):
    if key not in NAMES:
        return None  # a tensor this model does not have (OLMo's norms have no weights)
#: hierarchy
    name = NAMES[key][1 if bias else 0]
    if b is not None and CONFIG["hierarchy"]:
        per = CONFIG["hierarchy"]["per_stack"]
        name, b = name.replace("{stack}", "L_module" if b < per else "H_module"), b % per  # layer b: layer b % per of its stack
    name = name.replace("{b}", str(b)).replace("{e}", str(e))
#.
#: !hierarchy
    name = NAMES[key][1 if bias else 0].replace("{b}", str(b)).replace("{e}", str(e))
#.
#: longcat
    if b is not None:
        name = name.replace("{p}", str(b // 2)).replace("{s}", str(b % 2))  # layer b: sublayer b % 2 of checkpoint layer b // 2
#.
#: attn_res
    if b is not None:
        name = name.replace("{b-1}", str(b - 1))  # layer b's tensor stored under b - 1
#.
#: shared
    if b is not None and CONFIG["shared"]:
        name = place(name, b)
#.
    return W[name].T if key in TRANSPOSED else W[name]  # as [out, in], however stored
