def canvas(h, w, pinpoints):  # the [height, width] of pinpoints that keeps most of an h × w image resized into it without distortion, the least wasted of those
    best, kept, wasted = None, 0, float("inf")
    for ch, cw in pinpoints:
        scale = min(cw / w, ch / h)
        effective = min(int(w * scale) * int(h * scale), w * h)
        if effective > kept or (effective == kept and ch * cw - effective < wasted):
            best, kept, wasted = (ch, cw), effective, ch * cw - effective
    return best


def pack_tiles(tiles, size, pinpoints, image, newline, most=None):  # [1 + tiles, g², D] of an image of size (height, width) -> [features, D]
    """LLaVA-NeXT's features: the whole image's tile's, then the canvas's tiles laid back into its grid, the padding's rows or columns dropped (and, past `most` tiles' worth, OneVision's resized down), a learned vector ending each row."""
    h, w = size
    g = math.isqrt(tiles.shape[1])
    ch, cw = canvas(h, w, pinpoints)
    th, tw = ch // image, cw // image
    grid = tiles[1:].reshape(th, tw, g, g, -1).permute(0, 2, 1, 3, 4).reshape(th * g, tw * g, -1)
    rows, cols = grid.shape[:2]
    if w / h > cols / rows:  # wider than the canvas: padded above and below
        pad = (rows - int(round(h * (cols / w), 7))) // 2
        grid = grid[pad : rows - pad]
    else:
        pad = (cols - int(round(w * (rows / h), 7))) // 2
        grid = grid[:, pad : cols - pad]
    rows, cols = grid.shape[:2]
    ratio = math.sqrt(rows * cols / (most * g * g)) if most else 0
    if ratio > 1.1:  # OneVision's: shrunk to about `most` tiles' worth
        shrunk = nn.functional.interpolate(grid.permute(2, 0, 1)[None], [int(rows // ratio), int(cols // ratio)], mode="bilinear")
        grid = shrunk[0].permute(1, 2, 0)
    ends = newline.to(grid.dtype).expand(grid.shape[0], 1, grid.shape[2])
    return torch.cat([tiles[0], torch.cat([grid, ends], 1).flatten(0, 1)])
