"""The independent side of tests/pipeline/image_reference_test.cpp: Pillow and torchvision decode, convert,
resize and normalise the images the test wrote, and write raw pixels back for the test to compare.

Usage: image_reference.py JOBS  (one job a line, words separated by spaces; paths without spaces)
  decode IN OUT                          Image.open(IN).convert("RGB") as raw RGB8
  save IN W H MODE OUT QUALITY           raw RGB8 IN converted to MODE (L, CMYK, RGB) and saved as JPEG
  save_progressive IN W H OUT QUALITY    raw RGB8 IN saved as a progressive JPEG
  pil_resize IN W H OW OH OUT            Pillow resize((OW, OH), BILINEAR)
  tv_resize IN W H OW OH OUT             torchvision resize of a uint8 tensor, antialias=True
  tv_classify IN W H SHORTER CROP OUT    torchvision Resize(SHORTER) + CenterCrop(CROP) on the PIL image
  tv_normalize IN W H M0 M1 M2 S0 S1 S2 OUT   float32 CHW (pixel - mean) / std, torchvision's normalize
"""
import sys

from PIL import Image

# torch and torchvision take seconds to import: only the jobs that use them import them.


def load_raw(path, w, h):
    return Image.frombytes("RGB", (int(w), int(h)), open(path, "rb").read())


def write(path, data):
    with open(path, "wb") as out:
        out.write(data)


def tensor_of(image):
    import numpy as np
    import torch
    return torch.from_numpy(np.asarray(image).copy()).permute(2, 0, 1)


def run(job):
    op, *a = job.split()
    if op == "decode":
        write(a[1], Image.open(a[0]).convert("RGB").tobytes())
    elif op == "save":
        load_raw(a[0], a[1], a[2]).convert(a[3]).save(a[4], "JPEG", quality=int(a[5]))
    elif op == "save_progressive":
        load_raw(a[0], a[1], a[2]).save(a[3], "JPEG", quality=int(a[4]), progressive=True)
    elif op == "pil_resize":
        write(a[5], load_raw(a[0], a[1], a[2]).resize((int(a[3]), int(a[4])), Image.BILINEAR).tobytes())
    elif op.startswith("tv_"):
        run_torchvision(op, a)
    else:
        raise SystemExit(f"unknown job {op}")


def run_torchvision(op, a):
    import torchvision.transforms as T
    import torchvision.transforms.functional as F
    if op == "tv_resize":
        t = tensor_of(load_raw(a[0], a[1], a[2]))
        r = F.resize(t, [int(a[4]), int(a[3])], interpolation=T.InterpolationMode.BILINEAR, antialias=True)
        write(a[5], r.permute(1, 2, 0).contiguous().numpy().tobytes())
    elif op == "tv_classify":
        pipeline = T.Compose([T.Resize(int(a[3]), interpolation=T.InterpolationMode.BILINEAR),
                              T.CenterCrop(int(a[4]))])
        write(a[5], pipeline(load_raw(a[0], a[1], a[2])).tobytes())
    elif op == "tv_normalize":
        t = tensor_of(load_raw(a[0], a[1], a[2])).float()
        mean = [float(v) for v in a[3:6]]
        std = [float(v) for v in a[6:9]]
        write(a[9], F.normalize(t, mean, std).contiguous().numpy().astype("<f4").tobytes())
    else:
        raise SystemExit(f"unknown job {op}")


for line in open(sys.argv[1]):
    if line.strip():
        run(line.strip())
