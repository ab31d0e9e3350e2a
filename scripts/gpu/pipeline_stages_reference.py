#!/usr/bin/env python3
"""The GPU pipeline stages checked against independent references on the GPU host (scripts/gpu/pipeline_stages.sh).

  pipeline_stages_reference.py images  FOLDER               # writes the test JPEG files (Pillow, seeded)
  pipeline_stages_reference.py compare FOLDER WORK OUT_JSON SUMMARY_MD

compare reads what bench/pipeline_gpu_stages left in WORK (decoded/, nms/, ssd/, gpu_stages.json) and checks:
  decode  the GPU's RGB pixels against Pillow's decode (libjpeg-turbo) of the same file: mean absolute difference
          <= 1.5 levels and 99th percentile <= 8 levels per image (nvJPEG's IDCT and chroma upsampling are not
          libjpeg-turbo's; a CMYK file is reported, not checked); against torchvision.io.decode_jpeg on the GPU
          (nvJPEG too), reported; the truncated and non-JPEG files must be refused per file, not fail the batch
  resize  the GPU tensor against the host's two-pass arithmetic on the same decoded pixels (from gpu_stages.json):
          f32 <= 1e-4 apart, f16 <= 1 unit in the last place, u8 <= 1 level, in at most 0.1% of elements
  nms     the kept indices against torchvision.ops.batched_nms (CPU), truncated to max_detections: identical
          indices in identical order
  ssd     the detections against a NumPy decoding written from the SSD paper's formulas + batched_nms: the same
          candidates in the same order, boxes within 1e-5, scores within 1e-6
and times torchvision's counterparts (decode_jpeg on the GPU, batched_nms on CPU and GPU) beside the GPU stages.
Each check that fails is listed; the exit status is 1 when any did, 0 otherwise.
"""
import json
import os
import sys
import time

import numpy as np


def cpu_decode(path):
    """RGB8 HWC of a file on the CPU: Pillow (libjpeg-turbo), else torchvision.io.decode_jpeg on the CPU."""
    try:
        from PIL import Image

        return np.asarray(Image.open(path).convert("RGB"))
    except ImportError:
        import torch
        from torchvision.io import ImageReadMode, decode_jpeg

        data = torch.frombuffer(bytearray(open(path, "rb").read()), dtype=torch.uint8)
        return decode_jpeg(data, mode=ImageReadMode.RGB).permute(1, 2, 0).numpy()


def save_jpeg(array, path):
    try:
        from PIL import Image

        Image.fromarray(array).save(path, quality=90)
    except ImportError:
        import torch
        from torchvision.io import encode_jpeg

        chw = torch.from_numpy(array).permute(2, 0, 1).contiguous() if array.ndim == 3 else torch.from_numpy(array)[None]
        open(path, "wb").write(bytes(encode_jpeg(chw, quality=90).numpy()))


def write_images(folder):
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(20261205)
    sizes = [(640, 480), (1280, 720), (1920, 1080), (500, 375), (375, 500), (800, 600), (1024, 768), (333, 250)]
    for i in range(24):
        w, h = sizes[i % len(sizes)]
        y, x = np.mgrid[0:h, 0:w].astype(np.float32)
        img = np.zeros((h, w, 3), np.float32)
        for c in range(3):  # smooth gradients, a few soft blobs, fine noise: costs what a photo costs to decode
            img[..., c] = 128 + 90 * np.sin(x / (37 + 11 * c + i) + y / (53 + 7 * c))
        for _ in range(6):
            cx, cy, r = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(20, max(w, h) / 4)
            mask = np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2 * r * r))
            img += mask[..., None] * rng.uniform(-120, 120, 3)
        img += rng.normal(0, 6, img.shape)
        save_jpeg(np.clip(img, 0, 255).astype(np.uint8), os.path.join(folder, f"img_{i:03}.jpg"))
    first = cpu_decode(os.path.join(folder, "img_000.jpg")).astype(np.float32)
    save_jpeg((first @ np.array([0.299, 0.587, 0.114], np.float32)).astype(np.uint8), os.path.join(folder, "zz_gray.jpg"))
    try:
        from PIL import Image

        Image.open(os.path.join(folder, "img_001.jpg")).convert("CMYK").save(os.path.join(folder, "zz_cmyk.jpg"), quality=90)
    except ImportError:
        print("pipeline_stages_reference: no Pillow: no CMYK file written", file=sys.stderr)
    whole = open(os.path.join(folder, "img_002.jpg"), "rb").read()
    open(os.path.join(folder, "zz_truncated.jpg"), "wb").write(whole[: len(whole) // 3])
    open(os.path.join(folder, "zz_not_an_image.jpg"), "w").write("this is text, not a JPEG file\n")


class Checks:
    def __init__(self):
        self.failed = []
        self.results = {}

    def check(self, name, ok, detail):
        if not ok:
            self.failed.append(f"{name}: {detail}")
        return ok


def median_seconds(fn, repeats=20):
    fn()
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def try_import_torch():
    try:
        import torch
        import torchvision

        return torch, torchvision
    except Exception as e:  # the checks that need them are reported as not run
        print(f"pipeline_stages_reference: torch/torchvision unavailable: {e}", file=sys.stderr)
        return None, None


def compare_decode(folder, work, report, checks, torch, torchvision):
    rows = []
    files = []
    for entry in report.get("decode", []):
        if not isinstance(entry, dict):
            continue
        path = os.path.join(folder, entry["file"])
        row = {"file": entry["file"]}
        try:
            pil = cpu_decode(path)
            row["pillow"] = f"{pil.shape[1]}x{pil.shape[0]}"
        except Exception as e:
            pil = None
            row["pillow"] = f"refused: {e}"
        if "error" in entry:
            row["gpu"] = f"refused: {entry['error']}"
            rows.append(row)
            continue
        row["gpu"] = f"{entry['width']}x{entry['height']}"
        if "pixels" not in entry or pil is None:
            rows.append(row)
            continue
        gpu = np.fromfile(os.path.join(work, "decoded", entry["pixels"]), np.uint8).reshape(entry["height"], entry["width"], 3)
        if gpu.shape != pil.shape:
            checks.check(f"decode {entry['file']}", False, f"GPU {gpu.shape} vs Pillow {pil.shape}")
            rows.append(row)
            continue
        diff = np.abs(gpu.astype(np.int16) - pil.astype(np.int16))
        row.update(mean_abs=float(diff.mean()), p99=float(np.percentile(diff, 99)), max=int(diff.max()))
        # A CMYK file's colours depend on the decoder's CMYK rule (Pillow's is naive): reported, not checked.
        if not entry["file"].startswith("zz_cmyk"):
            checks.check(f"decode {entry['file']} vs Pillow", row["mean_abs"] <= 1.5 and row["p99"] <= 8,
                         f"mean {row['mean_abs']:.3f}, p99 {row['p99']}, max {row['max']}")
        if torch is not None and torch.cuda.is_available():
            from torchvision.io import decode_jpeg

            data = torch.frombuffer(bytearray(open(path, "rb").read()), dtype=torch.uint8)
            tv = decode_jpeg(data, device="cuda").permute(1, 2, 0).cpu().numpy()
            if tv.shape == gpu.shape:
                row["max_vs_torchvision_nvjpeg"] = int(np.abs(tv.astype(np.int16) - gpu.astype(np.int16)).max())
        files.append(path)
        rows.append(row)
    return rows, files


def decode_throughput(files, torch):
    """torchvision's nvJPEG decode (batched lists on the GPU) and the CPU decode (Pillow's) on one thread, images/s."""
    out = {}
    datas = [open(f, "rb").read() for f in files]
    out["cpu_decode_1thread_images_per_s"] = len(files) / median_seconds(lambda: [cpu_decode(f) for f in files], 5)
    if torch is not None and torch.cuda.is_available():
        from torchvision.io import decode_jpeg

        tensors = [torch.frombuffer(bytearray(d), dtype=torch.uint8) for d in datas]
        for batch in (1, 8, 32):
            chosen = [tensors[i % len(tensors)] for i in range(batch)]

            def run():
                decode_jpeg(chosen, device="cuda")
                torch.cuda.synchronize()

            out[f"torchvision_gpu_b{batch}_images_per_s"] = batch / median_seconds(run)
    return out


def load_case(work, stem):
    boxes = np.fromfile(os.path.join(work, "nms", stem + ".boxes.f32"), np.float32).reshape(-1, 4)
    scores = np.fromfile(os.path.join(work, "nms", stem + ".scores.f32"), np.float32)
    labels = np.fromfile(os.path.join(work, "nms", stem + ".labels.i32"), np.int32)
    return boxes, scores, labels


def compare_nms(work, report, checks, torch, torchvision):
    rows = []
    for case in report.get("nms", []):
        if not isinstance(case, dict) or "case" not in case:
            continue
        row = {k: case[k] for k in ("case", "kind", "candidates", "classes", "iou_threshold", "max_detections")}
        row["gpu_ms"] = case["gpu_median_ms"]
        if torch is None:
            rows.append(row)
            continue
        boxes, scores, labels = (torch.from_numpy(a) for a in load_case(work, case["case"]))
        ref = torchvision.ops.batched_nms(boxes, scores, labels.long(), case["iou_threshold"])[: case["max_detections"]]
        ref = ref.tolist()
        got = case["kept"]
        row["kept"] = len(got)
        row["identical"] = ref == got
        if not row["identical"]:
            first = next((i for i, (a, b) in enumerate(zip(ref, got)) if a != b), min(len(ref), len(got)))
            row["first_difference"] = {"at": first, "torchvision": ref[first: first + 3], "gpu": got[first: first + 3],
                                       "lengths": [len(ref), len(got)]}
        checks.check(f"nms {case['case']} ({case['kind']})", row["identical"], row.get("first_difference"))
        row["torchvision_cpu_ms"] = 1e3 * median_seconds(
            lambda: torchvision.ops.batched_nms(boxes, scores, labels.long(), case["iou_threshold"]), 5)
        if torch.cuda.is_available():
            b, s, l = boxes.cuda(), scores.cuda(), labels.long().cuda()

            def run():
                torchvision.ops.batched_nms(b, s, l, case["iou_threshold"])
                torch.cuda.synchronize()

            row["torchvision_gpu_ms"] = 1e3 * median_seconds(run)
        rows.append(row)
    return rows


def compare_ssd(work, report, checks, torch, torchvision):
    ssd = report.get("ssd")
    if not isinstance(ssd, dict) or "detections" not in ssd or torch is None:
        return {"not_run": "no SSD results or no torchvision"}
    anchors, classes, batch = ssd["anchors"], ssd["classes"], ssd["batch"]
    priors = np.fromfile(os.path.join(work, "ssd", "priors.f32"), np.float32).reshape(anchors, 4)
    locs = np.fromfile(os.path.join(work, "ssd", "locs.f32"), np.float32).reshape(batch, anchors, 4)
    logits = np.fromfile(os.path.join(work, "ssd", "logits.f32"), np.float32).reshape(batch, anchors, classes)
    out = {"images": []}
    for b in range(batch):
        # (y, x, h, w) deltas and priors: centre = prior centre + delta / 10 * prior size; size = prior size * exp(d / 5)
        d = locs[b]
        cy = priors[:, 0] + d[:, 0] / np.float32(10) * priors[:, 2]
        cx = priors[:, 1] + d[:, 1] / np.float32(10) * priors[:, 3]
        h = priors[:, 2] * np.exp(d[:, 2] / np.float32(5))
        w = priors[:, 3] * np.exp(d[:, 3] / np.float32(5))
        boxes = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1).astype(np.float32)
        probs = (1 / (1 + np.exp(-logits[b].astype(np.float64)))).astype(np.float32)
        probs[:, ssd["background_class"]] = -1
        anchor_idx, class_idx = np.nonzero(probs > ssd["score_threshold"])  # anchor-major: candidate id order
        cand_boxes = torch.from_numpy(boxes[anchor_idx])
        cand_scores = torch.from_numpy(probs[anchor_idx, class_idx])
        keep = torchvision.ops.batched_nms(cand_boxes, cand_scores, torch.from_numpy(class_idx), ssd["iou_threshold"])
        keep = keep[: ssd["max_detections"]].numpy()
        ref_ids = (anchor_idx[keep] * classes + class_idx[keep]).tolist()
        got = ssd["detections"][b]
        got_ids = [g["candidate"] for g in got]
        same = ref_ids == got_ids
        row = {"image": b, "reference": len(ref_ids), "gpu": len(got_ids), "identical_candidates": same}
        if same and got:
            row["max_box_diff"] = float(np.abs(np.array([g["box"] for g in got]) - boxes[anchor_idx[keep]]).max())
            row["max_score_diff"] = float(np.abs(np.array([g["score"] for g in got]) - probs[anchor_idx[keep], class_idx[keep]]).max())
            checks.check(f"ssd image {b} boxes", row["max_box_diff"] <= 1e-5 and row["max_score_diff"] <= 1e-6,
                         f"box {row['max_box_diff']}, score {row['max_score_diff']}")
        else:
            checks.check(f"ssd image {b} candidates", same, f"reference {ref_ids[:5]}..., GPU {got_ids[:5]}...")
        out["images"].append(row)
    out["gpu_ms_per_batch"] = ssd.get("gpu_median_ms_per_batch")
    return out


def check_resize(report, checks):
    rows = []
    for case in report.get("resize", []):
        if not isinstance(case, dict) or "case" not in case:
            continue
        cmp = case["gpu_vs_cpu"]
        limit = 1e-4 if "f32" in case["case"] else 1
        largest = cmp.get("max_abs_diff", cmp.get("max_diff_f16_units", 0))
        ok = largest <= limit and cmp["differing"] <= 0.001 * cmp["elements"]
        checks.check(f"resize {case['case']}", ok, f"max {largest}, {cmp['differing']} of {cmp['elements']} differ")
        rows.append(case)
    return rows


def summary_markdown(report, results, checks):
    lines = [f"# GPU pipeline stages on {report.get('device', 'unknown device')}", ""]
    lines += ["## Decode (nvJPEG, GPU) vs Pillow (libjpeg-turbo, CPU)", "", "| file | GPU | Pillow | mean abs | p99 | max | max vs torchvision nvJPEG |", "|---|---|---|---|---|---|---|"]
    for r in results["decode"]:
        lines.append(f"| {r['file']} | {r['gpu']} | {r['pillow']} | {r.get('mean_abs', '')} | {r.get('p99', '')} | {r.get('max', '')} | {r.get('max_vs_torchvision_nvjpeg', '')} |")
    lines += ["", "## Decode throughput (images/s; files of 333x250 to 1920x1080)", "", "| what | images/s |", "|---|---|"]
    for t in report.get("decode_throughput", []) if isinstance(report.get("decode_throughput"), list) else []:
        lines.append(f"| inferbench GPU decode, batch {t['batch']} | {t['images_per_s']:.0f} |")
    for k, v in results.get("decode_throughput", {}).items():
        lines.append(f"| {k} | {v:.0f} |")
    lines += ["", "## Resize + normalise, batch 8 (GPU vs the host's arithmetic on the same pixels)", "", "| case | elements differing | max diff | GPU images/s | CPU 1 thread images/s |", "|---|---|---|---|---|"]
    for r in results["resize"]:
        c = r["gpu_vs_cpu"]
        lines.append(f"| {r['case']} | {c['differing']} of {c['elements']} | {c.get('max_abs_diff', c.get('max_diff_f16_units'))} | {r['gpu_images_per_s']:.0f} | {r['cpu_1thread_images_per_s']:.0f} |")
    lines += ["", "## Class-wise NMS vs torchvision.ops.batched_nms", "", "| case | kind | candidates | classes | IoU | max det | kept | identical | GPU ms | torchvision CPU ms | torchvision GPU ms |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results["nms"]:
        lines.append(f"| {r['case']} | {r['kind']} | {r['candidates']} | {r['classes']} | {r['iou_threshold']} | {r['max_detections']} | {r.get('kept', '')} | {r.get('identical', 'not checked')} | {r['gpu_ms']:.3f} | {r.get('torchvision_cpu_ms', float('nan')):.3f} | {r.get('torchvision_gpu_ms', float('nan')):.3f} |")
    ssd = report.get("ssd") if isinstance(report.get("ssd"), dict) else {}
    lines += ["", f"## SSD decoding + NMS ({ssd.get('anchors')} anchors, {ssd.get('classes')} classes, batch {ssd.get('batch')}) vs NumPy + batched_nms", "", "```", json.dumps(results["ssd"], indent=1), "```", ""]
    lines += ["## Checks", ""]
    lines += [f"- FAILED {f}" for f in checks.failed] or ["- all passed"]
    for part in ("decode", "decode_throughput", "resize", "nms", "ssd"):
        if isinstance(report.get(part), dict) and "failed" in report[part]:
            lines.append(f"- the GPU program's {part} stage FAILED: {report[part]['failed']}")
    return "\n".join(lines) + "\n"


def compare(folder, work, out_json, summary_md):
    report = json.load(open(os.path.join(work, "gpu_stages.json")))
    torch, torchvision = try_import_torch()
    checks = Checks()
    results = {}
    for name, fn in (("decode", lambda: compare_decode(folder, work, report, checks, torch, torchvision)),
                     ("resize", lambda: check_resize(report, checks)),
                     ("nms", lambda: compare_nms(work, report, checks, torch, torchvision)),
                     ("ssd", lambda: compare_ssd(work, report, checks, torch, torchvision))):
        try:
            results[name] = fn()
        except Exception as e:  # one part's failure is reported; the others still run
            import traceback

            traceback.print_exc()
            checks.failed.append(f"{name}: the comparison itself failed: {e!r}")
            results[name] = [] if name != "ssd" else {"failed": repr(e)}
    decoded_files = results["decode"][1] if isinstance(results["decode"], tuple) else []
    results["decode"] = results["decode"][0] if isinstance(results["decode"], tuple) else []
    try:
        results["decode_throughput"] = decode_throughput(decoded_files, torch) if decoded_files else {}
    except Exception as e:
        checks.failed.append(f"decode throughput: {e!r}")
        results["decode_throughput"] = {}
    results["failed_checks"] = checks.failed
    json.dump(results, open(out_json, "w"), indent=1)
    open(summary_md, "w").write(summary_markdown(report, results, checks))
    print(open(summary_md).read())
    return 1 if checks.failed else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "images":
        write_images(sys.argv[2])
        sys.exit(0)
    if len(sys.argv) == 6 and sys.argv[1] == "compare":
        sys.exit(compare(*sys.argv[2:]))
    print(__doc__, file=sys.stderr)
    sys.exit(2)
