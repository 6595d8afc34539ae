#!/usr/bin/env python3
"""The lattice grids of ggml's i-quants as Rust data (crates/checkpoint/src/dequant/grids.rs),
from gguf-py, llama.cpp's Python reference, which packs ggml-common.h's tables: each grid as its
hex string (2 or 4 bits a value, indices into the grid's levels), the levels, and the 128 sign
patterns IQ2 and IQ3 share.

Usage: python3 scripts/make_iquant_grids.py   (needs: pip install gguf)
"""
from pathlib import Path

from gguf import quants

OUT = Path(__file__).resolve().parent.parent / "crates/checkpoint/src/dequant/grids.rs"


def main():
    lines = [
        "//! The i-quants' lattice grids (ggml-common.h), as gguf-py packs them: a hex digit pair a",
        "//! byte, each byte holding 8 / bits values, each an index into the grid's levels. Written",
        "//! by scripts/make_iquant_grids.py.",
        "",
        "/// A grid: its packed hex, bits a value, its levels, and values per entry.",
        "pub(super) struct Grid {",
        "    pub hex: &'static [u8],",
        "    pub bits: u32,",
        "    pub levels: &'static [i8],",
        "    pub width: usize,",
        "}",
        "",
    ]
    for cls in (quants.IQ2_XXS, quants.IQ2_XS, quants.IQ2_S, quants.IQ3_XXS, quants.IQ3_S, quants.IQ1_S):
        bits = (len(cls.grid_map) - 1).bit_length()
        levels = ", ".join(str(int(v)) for v in cls.grid_map)
        hex_ = cls.grid_hex.decode()
        lines.append(f"pub(super) const {cls.__name__}: Grid = Grid {{")
        lines.append(f"    hex: b\"{hex_}\",")
        lines.append(f"    bits: {bits},")
        lines.append(f"    levels: &[{levels}],")
        lines.append(f"    width: {cls.grid_shape[1]},")
        lines.append("};")
        lines.append("")
    signs = ", ".join(str(b) for b in quants.IQ2_XXS.ksigns)
    lines.append("/// IQ2's and IQ3's 128 sign patterns of 8 (ggml-common.h `ksigns_iq2xs`).")
    lines.append(f"pub(super) const KSIGNS: [u8; 128] = [{signs}];")
    lines.append("")
    lines.append(f"/// IQ1_S's and IQ1_M's offset from the grid (ggml-common.h `IQ1S_DELTA`).")
    lines.append(f"pub(super) const IQ1_DELTA: f32 = {quants.IQ1_S.delta};")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
