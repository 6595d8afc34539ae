#!/usr/bin/env python3
"""Make the hostile corpus: small files that are wrong in one way each, for tests/hostile.rs.

Every case is a GGUF file or a safetensors checkpoint folder that a tool meeting real files could
be handed: cut short, offsets past the end, overlapping tensors, misaligned data, bad alignment,
duplicate keys and names, degenerate metadata (RoPE dims 0, odd or larger than a head; NaN base;
negative epsilon; unknown scaling), old versions, headers that claim more than the file holds.
Each is made from one valid model (a 2-layer llama at hidden 16, written here byte by byte, so
every field is placed on purpose) by changing one thing. tests/hostile.rs runs anatomy's
commands on each and requires a clear error naming the file, no panic, no hang, and no file
written; cases.json says which commands must fail and what the error says.

Writes tests/hostile/*. Usage: python3 scripts/make_hostile_corpus.py (standard library only)
"""
import json
import math
import shutil
import struct
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests/hostile"

HIDDEN, LAYERS, HEADS, KV, FFN, VOCAB = 16, 2, 4, 2, 24, 32
HEAD = HIDDEN // HEADS

# GGUF value types.
U32, I32, F32, BOOL, STRING, ARRAY, U64, F64 = 4, 5, 6, 7, 8, 9, 10, 12


def s(x):
    b = x.encode()
    return struct.pack("<Q", len(b)) + b


def value(ty, v):
    if ty == U32:
        return struct.pack("<I", v)
    if ty == I32:
        return struct.pack("<i", v)
    if ty == F32:
        return struct.pack("<f", v)
    if ty == U64:
        return struct.pack("<Q", v)
    if ty == F64:
        return struct.pack("<d", v)
    if ty == BOOL:
        return struct.pack("<B", v)
    if ty == STRING:
        return s(v)
    if ty == ARRAY:
        item, items = v
        return struct.pack("<IQ", item, len(items)) + b"".join(value(item, x) for x in items)
    raise ValueError(ty)


def metadata():
    return [
        ("general.architecture", STRING, "llama"),
        ("general.name", STRING, "hostile"),
        ("llama.block_count", U32, LAYERS),
        ("llama.context_length", U32, 64),
        ("llama.embedding_length", U32, HIDDEN),
        ("llama.feed_forward_length", U32, FFN),
        ("llama.attention.head_count", U32, HEADS),
        ("llama.attention.head_count_kv", U32, KV),
        ("llama.rope.freq_base", F32, 10000.0),
        ("llama.rope.dimension_count", U32, HEAD),
        ("llama.attention.layer_norm_rms_epsilon", F32, 1e-5),
        ("llama.vocab_size", U32, VOCAB),
    ]


def tensors():
    """(name, ggml dims innermost first, type) of a llama model; F32 throughout."""
    out = [("token_embd.weight", [HIDDEN, VOCAB]), ("output_norm.weight", [HIDDEN])]
    for b in range(LAYERS):
        out += [
            (f"blk.{b}.attn_norm.weight", [HIDDEN]),
            (f"blk.{b}.attn_q.weight", [HIDDEN, HEADS * HEAD]),
            (f"blk.{b}.attn_k.weight", [HIDDEN, KV * HEAD]),
            (f"blk.{b}.attn_v.weight", [HIDDEN, KV * HEAD]),
            (f"blk.{b}.attn_output.weight", [HEADS * HEAD, HIDDEN]),
            (f"blk.{b}.ffn_norm.weight", [HIDDEN]),
            (f"blk.{b}.ffn_gate.weight", [HIDDEN, FFN]),
            (f"blk.{b}.ffn_up.weight", [HIDDEN, FFN]),
            (f"blk.{b}.ffn_down.weight", [FFN, HIDDEN]),
        ]
    return [(n, d, 0) for n, d in out]


def gguf(meta=None, infos=None, alignment=32, version=3, counts=None, edit=None):
    """A GGUF file. `infos` are (name, dims, type, offset or None for the next aligned one);
    `edit(header_bytes)` may change the header before the data is appended."""
    meta = metadata() if meta is None else meta
    infos = [(n, d, t, None) for n, d, t in tensors()] if infos is None else infos
    sizes = {0: 4, 1: 2}
    placed, at = [], 0
    for name, dims, ty, off in infos:
        n = math.prod(dims) * sizes.get(ty, 1)
        if off is None:
            off = at
            at += -(-n // alignment) * alignment
        placed.append((name, dims, ty, off, n))
    head = b"GGUF" + struct.pack("<I", version)
    n_t, n_kv = counts or (len(placed), len(meta))
    head += struct.pack("<QQ", n_t, n_kv)
    for k, ty, v in meta:
        head += s(k) + struct.pack("<I", ty) + value(ty, v)
    for name, dims, ty, off, _ in placed:
        head += s(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        head += struct.pack("<IQ", ty, off)
    if edit:
        head = edit(head)
    start = -(-len(head) // alignment) * alignment if alignment else len(head)
    data_len = max((off + n for _, _, _, off, n in placed if off < 1 << 40), default=0)
    data = bytearray(data_len)
    for i in range(0, data_len, 4):
        data[i:i + 4] = struct.pack("<f", 0.01 * ((i // 4) % 97 - 48))
    return head + bytes(start - len(head)) + bytes(data)


def with_meta(key, ty, v):
    return [(k, t, x) for k, t, x in metadata() if k != key] + [(key, ty, v)]


def moved(name, offset=None, ty=None):
    out = []
    for n, d, t, in tensors():
        out.append((n, d, ty if n == name and ty is not None else t, offset if n == name else None))
    return out


def gguf_cases():
    good = gguf()
    q = "blk.0.attn_q.weight"
    k = "blk.0.attn_k.weight"
    infos = [(n, d, t, None) for n, d, t in tensors()]
    # Where layer 0's Q lies when placed in order, so K can be put on top of it.
    q_at, at = None, 0
    for n, d, _ in tensors():
        if n == q:
            q_at = at
        at += -(-math.prod(d) * 4 // 32) * 32
    return {
        "good.gguf": (good, []),
        "cut-after-header.gguf": (good[: len(good) // 3], DATA),
        "offset-2-62.gguf": (gguf(infos=moved(q, 1 << 62)), DATA),
        "offset-max.gguf": (gguf(infos=moved(q, (1 << 64) - 1)), DATA),
        "overlapping.gguf": (gguf(infos=moved(k, q_at)), DATA),
        # Q placed with room for F16, then its type set to F32: it runs into the next tensor.
        "retyped-overlaps-next.gguf": (
            gguf(infos=[(n, d, 1 if n == q else t, None) for n, d, t in tensors()],
                 edit=lambda h: retype(h, q, 0)),
            DATA,
        ),
        "misaligned.gguf": (gguf(infos=moved(q, q_at + 4)), DATA),
        "alignment-0.gguf": (gguf(meta=with_meta("general.alignment", U32, 0)), ALL),
        "alignment-3.gguf": (gguf(meta=with_meta("general.alignment", U32, 3)), ALL),
        "duplicate-key.gguf": (gguf(meta=metadata() + [("llama.block_count", U32, 7)]), ALL),
        "duplicate-tensor.gguf": (gguf(infos=infos + [infos[0]]), ALL),
        "rope-dims-0.gguf": (gguf(meta=with_meta("llama.rope.dimension_count", U32, 0)), ALL),
        "rope-dims-63.gguf": (gguf(meta=with_meta("llama.rope.dimension_count", U32, 63)), ALL),
        "rope-dims-4096.gguf": (gguf(meta=with_meta("llama.rope.dimension_count", U32, 4096)), ALL),
        "rope-scaling-unknown.gguf": (gguf(meta=metadata() + [("llama.rope.scaling.type", STRING, "warp"),
                                                              ("llama.rope.scaling.factor", F32, 2.0)]), ALL),
        "freq-base-nan.gguf": (gguf(meta=with_meta("llama.rope.freq_base", F32, float("nan"))), ALL),
        "eps-negative.gguf": (gguf(meta=with_meta("llama.attention.layer_norm_rms_epsilon", F32, -1e-5)), ALL),
        "version-1.gguf": (gguf(version=1), ALL),
        "empty.gguf": (b"", ALL),
        "23-bytes.gguf": (good[:23], ALL),
        "counts-huge.gguf": (gguf(counts=((1 << 62), 12)), ALL),
        "string-huge.gguf": (good[:24] + struct.pack("<Q", (1 << 63)) + good[32:200], ALL),
        "dims-5.gguf": (gguf(infos=[(n, d + [1, 1, 1, 1] if n == q else d, t, None) for n, d, t in tensors()]), ALL),
        "value-type-99.gguf": (gguf(edit=lambda h: h.replace(s("general.name") + struct.pack("<I", STRING),
                                                            s("general.name") + struct.pack("<I", 99))), ALL),
        # A type number ggml no longer defines (31, once Q4_0_4_4): the header shows the model,
        # the data cannot be sized or read.
        "unknown-type.gguf": (gguf(infos=[(n, d, 31 if n == q else t, None) for n, d, t in tensors()]), DATA),
        # IQ2_XXS, whose blocks of 256 values rows of 16 cannot fill.
        "iq-rows.gguf": (gguf(infos=[(n, d, 16 if n == q else t, None) for n, d, t in tensors()]), ALL),
        "not-gguf.gguf": (b"PK\x03\x04" + bytes(100), ALL),
    }


def retype(head, name, ty):
    """Set tensor `name`'s type field in a header to `ty`."""
    i = head.index(s(name)) + len(s(name))
    n_dims = struct.unpack("<I", head[i:i + 4])[0]
    j = i + 4 + 8 * n_dims
    return head[:j] + struct.pack("<I", ty) + head[j + 4:]


# ---- safetensors ------------------------------------------------------------------------------

CONFIG = {"model_type": "llama", "hidden_size": HIDDEN, "intermediate_size": FFN, "num_hidden_layers": LAYERS,
          "num_attention_heads": HEADS, "num_key_value_heads": KV, "vocab_size": VOCAB, "max_position_embeddings": 64,
          "tie_word_embeddings": True}


def hf_tensors():
    out = [("model.embed_tokens.weight", [VOCAB, HIDDEN]), ("model.norm.weight", [HIDDEN])]
    for b in range(LAYERS):
        p = f"model.layers.{b}."
        out += [(p + "input_layernorm.weight", [HIDDEN]), (p + "post_attention_layernorm.weight", [HIDDEN]),
                (p + "self_attn.q_proj.weight", [HEADS * HEAD, HIDDEN]), (p + "self_attn.k_proj.weight", [KV * HEAD, HIDDEN]),
                (p + "self_attn.v_proj.weight", [KV * HEAD, HIDDEN]), (p + "self_attn.o_proj.weight", [HIDDEN, HEADS * HEAD]),
                (p + "mlp.gate_proj.weight", [FFN, HIDDEN]), (p + "mlp.up_proj.weight", [FFN, HIDDEN]),
                (p + "mlp.down_proj.weight", [HIDDEN, FFN])]
    return out


def safetensors(entries=None, header_text=None, extra=b"", cut=0):
    """A safetensors file: `entries` (name, dtype, shape, (start, end) or None for the next)."""
    entries = entries or [(n, "F32", sh, None) for n, sh in hf_tensors()]
    header, at = {}, 0
    for name, dtype, shape, offsets in entries:
        n = math.prod(shape) * {"F32": 4, "F16": 2, "BF16": 2}.get(dtype, 4)
        if offsets is None:
            offsets = (at, at + n)
            at += n
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": list(offsets)}
    text = header_text if header_text is not None else json.dumps(header)
    hb = text.encode()
    data = bytes(max((e["data_offsets"][1] for e in header.values()), default=0))
    out = struct.pack("<Q", len(hb)) + hb + data + extra
    return out[: len(out) - cut] if cut else out


def safetensors_cases():
    t = [(n, "F32", sh, None) for n, sh in hf_tensors()]
    q = 4  # index of layer 0's q_proj
    q_name = t[q][0]
    dup = json.dumps({n: {"dtype": d, "shape": sh, "data_offsets": [0, 4]} for n, d, sh, _ in t[:1]})
    dup = dup[:-1] + ", " + dup[1:]  # the same name twice
    sizes = [math.prod(sh) * 4 for _, _, sh, _ in t]
    start_q = sum(sizes[:q])
    return {
        "good": (safetensors(), []),
        "header-past-end": (struct.pack("<Q", 1 << 40) + b"{}", ALL),
        "duplicate-name": (safetensors(header_text=dup), ALL),
        "offsets-past-end": (safetensors(cut=100), DATA),
        # Layer 0's Q placed over the embedding's bytes.
        "overlapping": (safetensors(t[:q] + [(q_name, "F32", t[q][2], (0, sizes[q]))] + t[q + 1:]),
                        DATA),
        "wrong-size": (safetensors([(q_name, "F16", sh, (start_q, start_q + sizes[q])) if n == q_name else (n, d, sh, o)
                                    for n, d, sh, o in t]), DATA),
        "unknown-dtype": (safetensors([(n, "Q4_K" if n == q_name else d, sh, o) for n, d, sh, o in t]), ALL),
        "not-json": (struct.pack("<Q", 8) + b"{{{{{{{{", ALL),
        "trailing-bytes": (safetensors(extra=b"hidden!!"), DATA),
    }


# Which commands must fail: every one, for a file whose header cannot be read or whose metadata
# is wrong; those that read tensor data (verify checks where it lies), for the rest.
ALL = ["show", "stats", "verify", "run", "html"]
DATA = ["verify", "run", "html"]


def main():
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    cases = {}
    for name, (data, fails) in gguf_cases().items():
        (OUT / name).write_bytes(data)
        cases[name] = fails
    # `show` and `stats` of a checkpoint folder read its config.json alone: a bad safetensors
    # file fails the commands that read it.
    for name, (data, fails) in safetensors_cases().items():
        d = OUT / f"st-{name}"
        d.mkdir()
        (d / "config.json").write_text(json.dumps(CONFIG))
        (d / "model.safetensors").write_bytes(data)
        cases[d.name] = DATA if fails else []
    # A folder where the checkpoint's file should be; an index pointing out of the folder.
    d = OUT / "st-folder-as-file"
    (d / "model.safetensors").mkdir(parents=True)
    (d / "model.safetensors" / "README").write_text("a folder named like a checkpoint file\n")
    (d / "config.json").write_text(json.dumps(CONFIG))
    cases[d.name] = DATA
    d = OUT / "st-index-escapes"
    d.mkdir()
    (d / "config.json").write_text(json.dumps(CONFIG))
    (d / "model.safetensors.index.json").write_text(json.dumps(
        {"weight_map": {n: "../good.gguf" for n, _ in hf_tensors()}}))
    (d / "model-00001-of-00001.safetensors").write_bytes(safetensors())
    cases[d.name] = DATA
    d = OUT / "st-config-bom"
    d.mkdir()
    (d / "config.json").write_bytes("\ufeff".encode() + json.dumps(CONFIG).encode())
    (d / "model.safetensors").write_bytes(safetensors())
    cases[d.name] = []
    (OUT / "cases.json").write_text(json.dumps(cases, indent=1, sort_keys=True) + "\n")
    total = sum(f.stat().st_size for f in OUT.rglob("*") if f.is_file())
    print(f"{len(cases)} cases, {total:,} bytes in {OUT}")


if __name__ == "__main__":
    main()
