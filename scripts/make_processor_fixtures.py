"""Fixtures for `run --image`: small images, each with an image processor's config and the pixel
values transformers' PIL-backed processor (`AutoImageProcessor.from_pretrained(dir,
backend="pil")`) makes of it, in crates/exec/tests/fixtures/processor/<case>/.

Each case is one image file (PNG or JPEG as Pillow writes them: RGB, RGBA, grey, palette with a
transparent colour, 4:2:0, 4:4:4 and progressive JPEG, EXIF orientations), one processor (CLIP,
SigLIP, ViT, BLIP, BiT: their classes' defaults, sizes that shrink, grow and crop past the image,
every convolution filter; Qwen2-VL's smart resize, Pixtral's longest edge, Llama 4's tiles,
Idefics3's and SmolVLM's frames) and
`pixels.npy` ([3, H, W], f32, the PIL backend's; Llama 4's [tiles, 3, S, S]) and
`pixels_torchvision.npy` (the torchvision backend's, transformers' default where torchvision is
installed; absent where it has no such filter: box, Hamming). The image is opened as
transformers' `load_image` opens a file: turned upright by its EXIF orientation.

Needs Pillow and torchvision beside the reference venv, e.g.
    pip install --target ~/.cache/anatomy/imgsite --no-deps pillow torchvision
    PYTHONPATH=~/.cache/anatomy/imgsite python scripts/make_processor_fixtures.py
"""

import json
import pathlib
import shutil
import tempfile

import numpy
from PIL import Image, ImageOps
from transformers import AutoImageProcessor

OUT = pathlib.Path(__file__).resolve().parent.parent / "crates/exec/tests/fixtures/processor"


def picture(height=37, width=53, seed=7):
    """A gradient with noise: every filter's taps see different values."""
    rng = numpy.random.default_rng(seed)
    y, x = numpy.mgrid[0:height, 0:width]
    base = numpy.stack([x * 255 / width, y * 255 / height, (x + y) * 127 / (width + height)], -1)
    return numpy.clip(base + rng.normal(0, 40, base.shape), 0, 255).astype(numpy.uint8)


def images():
    rgb = picture()
    alpha = numpy.random.default_rng(8).integers(0, 256, rgb.shape[:2], dtype=numpy.uint8)
    palette = Image.fromarray(rgb).convert("P", palette=Image.ADAPTIVE, colors=16)
    palette.info["transparency"] = 3
    return {
        "rgb.png": lambda p: Image.fromarray(rgb).save(p),
        "rgba.png": lambda p: Image.fromarray(numpy.dstack([rgb, alpha])).save(p),
        "grey-alpha.png": lambda p: Image.fromarray(numpy.dstack([rgb[..., 1], alpha]), "LA").save(p),
        "palette.png": lambda p: palette.save(p, transparency=3),
        "grey.png": lambda p: Image.fromarray(rgb[..., 0]).save(p),
        "q75.jpg": lambda p: Image.fromarray(rgb).save(p, quality=75),
        "q95-444.jpg": lambda p: Image.fromarray(rgb).save(p, quality=95, subsampling=0),
        "progressive.jpg": lambda p: Image.fromarray(picture(41, 29, 9)).save(p, quality=80, progressive=True),
        "grey.jpg": lambda p: Image.fromarray(rgb[..., 2]).save(p),
        # 70 high: 70 / 28 is 2.5, which Python's round takes to 2.
        "tall.png": lambda p: Image.fromarray(picture(70, 45, 10)).save(p),
        # A photo as a phone saves it: turned a quarter clockwise by its EXIF orientation.
        "exif-6.jpg": lambda p: Image.fromarray(rgb).save(p, quality=90, exif=oriented(6)),
        # Each EXIF orientation (an eXIf chunk), on a small image kept as it is.
        **{f"exif-{o}.png": (lambda o: lambda p: Image.fromarray(picture(3, 5, 12)).save(p, exif=oriented(o)))(o)
           for o in range(2, 9)},
    }


def oriented(o):
    """EXIF metadata holding orientation `o`."""
    exif = Image.Exif()
    exif[0x0112] = o
    return exif


CLIP = "CLIPImageProcessor"
# case: (image, the processor's class, its settings beside the class defaults, file name)
CASES = {
    "clip-png": ("rgb.png", CLIP, {"size": {"shortest_edge": 28}, "crop_size": {"height": 28, "width": 28}}),
    "clip-jpeg": ("q75.jpg", CLIP, {"size": {"shortest_edge": 28}, "crop_size": {"height": 28, "width": 28}}),
    "clip-444": ("q95-444.jpg", CLIP, {"size": {"shortest_edge": 24}, "crop_size": {"height": 24, "width": 24}}),
    "clip-grow-crop-wide": ("progressive.jpg", CLIP,
                            {"size": {"shortest_edge": 64}, "crop_size": {"height": 48, "width": 60}}),
    "clip-crop-past-image": ("grey.jpg", CLIP,
                             {"size": {"shortest_edge": 20}, "crop_size": {"height": 33, "width": 24}}),
    "clip-rgba": ("rgba.png", CLIP, {"size": 30, "crop_size": 26}),
    "clip-grey-alpha-lanczos": ("grey-alpha.png", CLIP, {"size": {"shortest_edge": 31}, "resample": 1,
                                                         "crop_size": {"height": 31, "width": 31}}),
    "siglip-palette-bilinear": ("palette.png", "SiglipImageProcessor",
                                {"size": {"height": 30, "width": 45}, "resample": 2}),
    "vit-grey-hamming": ("grey.png", "ViTImageProcessor", {"size": [20, 70], "resample": 5, "do_convert_rgb": True}),
    "blip-box": ("rgb.png", "BlipImageProcessor", {"size": 40, "resample": 4, "image_mean": 0.3}),
    "bit-no-normalize": ("rgb.png", "BitImageProcessor",
                         {"size": {"shortest_edge": 16}, "crop_size": {"height": 16, "width": 16},
                          "do_normalize": False}),
    # Wider and shorter: Pillow 13 shrinks the height first.
    "siglip-widen-shorten": ("rgb.png", "SiglipImageProcessor", {"size": {"height": 20, "width": 90}}),
    # Narrowed a little, shortened a lot (the height loses more than twice the width's pixels):
    # Pillow 13 resizes the height first.
    "siglip-shorten-more": ("rgb.png", "SiglipImageProcessor", {"size": {"height": 20, "width": 50}}),
    "siglip-no-resize": ("q75.jpg", "SiglipImageProcessor", {"do_resize": False, "do_rescale": False}),
    # Qwen2-VL's smart resize: sides to multiples of patch × merge, rounded (to even on halves),
    # shrunk to the most pixels, grown to the fewest; its pixels before they are cut in patches.
    # Turned upright by the EXIF orientation first, as transformers' load_image turns it.
    "siglip-exif-jpeg": ("exif-6.jpg", "SiglipImageProcessor", {"size": {"height": 30, "width": 45}}),
    **{f"vit-exif-{o}": (f"exif-{o}.png", "ViTImageProcessor", {"do_resize": False, "do_rescale": False,
                                                                "do_normalize": False}) for o in range(2, 9)},
    "qwen2-vl-round": ("rgb.png", "Qwen2VLImageProcessor", {"size": {"shortest_edge": 256, "longest_edge": 100000}}),
    "qwen2-vl-half-to-even": ("tall.png", "Qwen2VLImageProcessor", {}),
    "qwen2-vl-most": ("q75.jpg", "Qwen2VLImageProcessor", {"size": {"shortest_edge": 100, "longest_edge": 900},
                                                           "patch_size": 5, "merge_size": 2}),
    "qwen2-vl-fewest": ("progressive.jpg", "Qwen2VLImageProcessor", {"min_pixels": 4000, "max_pixels": 100000}),
    # Pixtral's: shrunk so that no side passes the longest edge, then each side rounded up to
    # a multiple of the patch; and grown only to that multiple.
    "pixtral-shrink": ("rgb.png", "PixtralImageProcessor", {"size": {"longest_edge": 40}, "patch_size": 8}),
    "pixtral-round-up": ("progressive.jpg", "PixtralImageProcessor", {}),
    # Llama 4's tiles (torchvision's backend alone; rescaled and normalized in bfloat16): one
    # tile, the image enlarged to it; 2×3 tiles, shrunk, and the whole image as a seventh; the
    # largest canvas, enlarged onto 2×2 tiles.
    "llama4-one-tile": ("q75.jpg", "Llama4ImageProcessor", {"size": {"height": 56, "width": 56}}),
    "llama4-tiles": ("rgb.png", "Llama4ImageProcessor", {"size": {"height": 16, "width": 16}, "max_patches": 6}),
    "llama4-max-canvas": ("grey.jpg", "Llama4ImageProcessor", {"size": {"height": 40, "width": 40}, "max_patches": 4,
                                                               "resize_to_max_canvas": True}),
    # GOT-OCR 2's crops (InternVL's): the grid of tiles nearest the image's aspect (3×2 of 16
    # pixels, then the whole image as a seventh); at least 2 tiles (a tall image onto 1×2); and no
    # crops, the image resized to the size.
    "got-ocr2-crops": ("rgb.png", "GotOcr2ImageProcessor", {"size": {"height": 16, "width": 16},
                                                            "crop_to_patches": True, "max_patches": 6}),
    "got-ocr2-at-least": ("tall.png", "GotOcr2ImageProcessor", {"size": {"height": 20, "width": 20},
                                                                "crop_to_patches": True, "min_patches": 2,
                                                                "max_patches": 4}),
    "got-ocr2-whole": ("q75.jpg", "GotOcr2ImageProcessor", {"size": {"height": 24, "width": 24}}),
    # Command A Vision's crops (torchvision's backend alone): the grid the image fits with the
    # least upscale, or where none holds it the least downscale (a large image onto 6×1 tiles of
    # 16 and the whole image a seventh); a small image enlarged onto one tile; no crops.
    "cohere2-vision-tiles": ("rgb.png", "Cohere2VisionImageProcessor", {"size": {"height": 16, "width": 16},
                                                                        "max_patches": 6}),
    "cohere2-vision-one": ("q75.jpg", "Cohere2VisionImageProcessor", {"size": {"height": 96, "width": 96},
                                                                      "max_patches": 4}),
    "cohere2-vision-whole": ("grey.jpg", "Cohere2VisionImageProcessor", {"size": {"height": 24, "width": 24},
                                                                         "crop_to_patches": False}),
    # DeepSeek-VL's: the longer side fitted to the size, the image padded to a square of the
    # mean's colour, centred: a wide image (rows above and below, the class's CLIP mean), a tall
    # one (columns beside, a mean of 0.5), the shorter side held at min_size, and no padding.
    "deepseek-vl-wide": ("rgb.png", "DeepseekVLImageProcessor", {"size": {"height": 32, "width": 32}}),
    "deepseek-vl-tall": ("tall.png", "DeepseekVLImageProcessor", {"size": {"height": 40, "width": 40},
                                                                 "image_mean": [0.5, 0.5, 0.5],
                                                                 "image_std": [0.5, 0.5, 0.5]}),
    "deepseek-vl-min": ("progressive.jpg", "DeepseekVLImageProcessor", {"size": {"height": 20, "width": 20},
                                                                        "min_size": 16}),
    "deepseek-vl-no-pad": ("q75.jpg", "DeepseekVLImageProcessor", {"size": {"height": 30, "width": 30},
                                                                   "do_pad": False}),
    # Video-LLaVA's: CLIP's, in NumPy's code alone.
    "video-llava": ("q95-444.jpg", "VideoLlavaImageProcessor", {"size": {"shortest_edge": 30},
                                                                "crop_size": {"height": 26, "width": 26}}),
    # Idefics3's frames: the longer side to the size (the other truncated, made even), up to
    # whole tiles (2×2 of 32, the whole image a fifth), Lanczos by default; an image within one
    # tile (one frame); no splitting (resized to one tile, bicubic); SmolVLM's under its own name,
    # a tall image onto 4×3 tiles of 16.
    "idefics3-split": ("rgb.png", "Idefics3ImageProcessor", {"size": {"longest_edge": 64},
                                                              "max_image_size": {"longest_edge": 32}}),
    "idefics3-one": ("q75.jpg", "Idefics3ImageProcessor", {"size": {"longest_edge": 30},
                                                            "max_image_size": {"longest_edge": 32}}),
    "idefics3-no-split": ("tall.png", "Idefics3ImageProcessor", {"size": {"longest_edge": 48},
                                                                  "max_image_size": {"longest_edge": 24},
                                                                  "do_image_splitting": False, "resample": 3}),
    "smolvlm-tall": ("tall.png", "SmolVLMImageProcessor", {"size": {"longest_edge": 50},
                                                           "max_image_size": {"longest_edge": 16}}),
    # LLaVA-NeXT's tiles: the whole image at the size, then the canvas that keeps most of it (a
    # wide image on 2×2 tiles of 16 padded above and below; a tall one on 3×1 of 20 padded at
    # the sides, bilinear), black padding normalized as any pixel.
    "llava-next-wide": ("rgb.png", "LlavaNextImageProcessor", {
        "size": {"shortest_edge": 16}, "crop_size": {"height": 16, "width": 16},
        "image_grid_pinpoints": [[16, 32], [32, 16], [32, 32], [48, 16], [16, 48]]}),
    "llava-next-tall": ("tall.png", "LlavaNextImageProcessor", {
        "size": {"shortest_edge": 20}, "crop_size": {"height": 20, "width": 20}, "resample": 2,
        "image_grid_pinpoints": [[20, 40], [40, 20], [40, 40], [60, 20], [20, 60]]}),
    # LLaVA-OneVision's: LLaVA-NeXT's with a square size and no crop, its tile the size's.
    "llava-onevision": ("q75.jpg", "LlavaOnevisionImageProcessor", {
        "size": {"height": 16, "width": 16},
        "image_grid_pinpoints": [[16 * h, 16 * w] for h in range(1, 4) for w in range(1, 4)]}),
}
# Cases whose class has NumPy's code alone (transformers falls back to it from torchvision).
NUMPY_ONLY = {"video-llava"}
# Cases whose class has torchvision's backend alone: no pixels.npy.
TORCHVISION_ONLY = {"llama4-one-tile", "llama4-tiles", "llama4-max-canvas", "cohere2-vision-tiles",
                    "cohere2-vision-one", "cohere2-vision-whole"}
# Cases whose config is saved nested in processor_config.json, as a processor's save_pretrained
# writes it since transformers 5, rather than as preprocessor_config.json.
NESTED = {"clip-jpeg"}
# Cases saved with every setting written out, as save_pretrained writes them; the others keep
# only the settings given, so that the rest come from the class's defaults.
FULL = {"clip-png", "clip-jpeg", "qwen2-vl-round"}


def processed(processor, path):
    """The processor's pixel values of the image at `path` (turned upright by its EXIF
    orientation), [3, H, W]: Qwen2-VL's flattened
    patches put back into the image they were cut from (their frames are copies); Llama 4's
    tiles [tiles, 3, S, S] (bfloat16, as float32), GOT-OCR 2's crops where there are several."""
    image = ImageOps.exif_transpose(Image.open(path))  # as transformers' load_image opens a file
    if "Llama4" in type(processor).__name__:
        return processor(images=image, return_tensors="pt")["pixel_values"].float().numpy()
    out = processor(images=image, return_tensors="np")
    if "pixel_values_images" in out:  # Video-LLaVA's name for them
        return out["pixel_values_images"][0]
    if "image_sizes" in out:  # LLaVA-NeXT's tiles: [1, tiles, 3, S, S]
        return out["pixel_values"][0]
    if "pixel_attention_mask" in out:  # Idefics3's frames: [1, frames, 3, S, S]
        frames = out["pixel_values"][0]
        return frames if len(frames) > 1 else frames[0]
    if out.get("num_patches", [1])[0] > 1:  # GOT-OCR 2's crops: [tiles, 3, S, S]
        return out["pixel_values"]
    if "image_grid_thw" not in out:
        return out["pixel_values"][0]
    _, gh, gw = out["image_grid_thw"][0]
    p, m, t = processor.patch_size, processor.merge_size, processor.temporal_patch_size
    x = out["pixel_values"].reshape(gh // m, gw // m, m, m, 3, t, p, p)
    assert (x == x[:, :, :, :, :, :1]).all()
    return x[:, :, :, :, :, 0].transpose(4, 0, 2, 5, 1, 3, 6).reshape(3, gh * p, gw * p)


def main():
    if OUT.exists():
        shutil.rmtree(OUT)
    makers = images()
    for case, (image, cls, settings) in CASES.items():
        d = OUT / case
        d.mkdir(parents=True)
        path = d / ("image" + pathlib.Path(image).suffix)
        makers[image](path)
        config = {"image_processor_type": cls, **settings}
        with tempfile.TemporaryDirectory() as tmp:
            (pathlib.Path(tmp) / "preprocessor_config.json").write_text(json.dumps(config))
            tv = AutoImageProcessor.from_pretrained(tmp, backend="torchvision")
            # (A class with NumPy's code alone is given in its place: the same pixels.)
            assert case in NUMPY_ONLY or tv.backend == "torchvision", tv
            if case in TORCHVISION_ONLY:
                pixels = processed(tv, path)
                numpy.save(d / "pixels_torchvision.npy", pixels.astype(numpy.float32))
                (d / "preprocessor_config.json").write_text(json.dumps(config, indent=2) + "\n")
                print(f"{case}: {image} through {cls}: {pixels.shape}, torchvision's alone")
                continue
            pil = AutoImageProcessor.from_pretrained(tmp, backend="pil")
            assert case in NUMPY_ONLY or pil.backend == "pil", pil
            # Every setting as the class holds it, saved as transformers saves it.
            saved = pil.to_dict()
            pixels = processed(pil, path)
            try:
                other = processed(tv, path)
                numpy.save(d / "pixels_torchvision.npy", other.astype(numpy.float32))
                differ = f", torchvision's {(numpy.abs(other - pixels) > 1e-6).mean():.2%} apart"
            except NotImplementedError:  # torchvision has no box or Hamming filter
                differ = ", none from torchvision"
        written = saved if case in FULL else config
        if case in NESTED:
            (d / "processor_config.json").write_text(json.dumps({"image_processor": written}, indent=2) + "\n")
        else:
            (d / "preprocessor_config.json").write_text(json.dumps(written, indent=2) + "\n")
        numpy.save(d / "pixels.npy", pixels.astype(numpy.float32))
        print(f"{case}: {image} through {cls}: {pixels.shape}{differ}")


if __name__ == "__main__":
    main()
