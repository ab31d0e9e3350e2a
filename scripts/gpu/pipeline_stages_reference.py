#!/usr/bin/env python3
"""The GPU pipeline stages checked against independent references on the GPU host (scripts/gpu/pipeline_stages.sh).

  pipeline_stages_reference.py images  FOLDER               # writes the test JPEG files (Pillow, seeded)
  pipeline_stages_reference.py compare FOLDER WORK OUT_JSON SUMMARY_MD

compare reads what bench/pipeline_gpu_stages left in WORK (decoded/, nms/, gpu_stages.json) and checks:
  decode  the GPU's RGB pixels against Pillow's decode (libjpeg-turbo) of the same file, and against inferbench's
          CPU decode (the program's own comparison): mean absolute difference <= 1.5 levels and 99th percentile
          <= 8 levels per image against Pillow, mean <= 1.5 and max <= 64 against the CPU decode (nvJPEG's IDCT and
          chroma upsampling are not libjpeg-turbo's; a CMYK file is reported, not checked); against
          torchvision.io.decode_jpeg on the GPU (nvJPEG too), reported; the truncated and non-JPEG files must be
          refused per file, not fail the batch
  resize  the GPU's batch tensor against resize_image + normalize_into on the same decoded pixels: no element
          differs (the same fixed-point arithmetic and normalisation table)
  nms     the kept indices against torchvision.ops.batched_nms (CPU) and inferbench's CPU batched_nms, truncated to
          max_detections: identical indices in identical order
  ssd     the GPU's SSD decoding + NMS against decode_boxes + select_detections: the same detections in the same
          order, boxes and scores within 1e-5 relative (expf on the GPU, glibc's exp on the CPU)
and times torchvision's counterparts (decode_jpeg on the GPU, batched_nms on CPU and GPU) beside the GPU stages.
Each check that fails is listed; the exit status is 1 when any did, 0 otherwise.
"""
import json
import os
import sys
import time

import numpy as np


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def write_file(path, data, mode="wb"):
    with open(path, mode) as f:
        f.write(data)


def cpu_decode(path):
    """RGB8 HWC of a file on the CPU: Pillow (libjpeg-turbo), else torchvision.io.decode_jpeg on the CPU."""
    try:
        from PIL import Image

        return np.asarray(Image.open(path).convert("RGB"))
    except ImportError:
        import torch
        from torchvision.io import ImageReadMode, decode_jpeg

        data = torch.frombuffer(bytearray(read_bytes(path)), dtype=torch.uint8)
        return decode_jpeg(data, mode=ImageReadMode.RGB).permute(1, 2, 0).numpy()


def save_jpeg(array, path):
    try:
        from PIL import Image

        Image.fromarray(array).save(path, quality=90)
    except ImportError:
        import torch
        from torchvision.io import encode_jpeg

        chw = torch.from_numpy(array).permute(2, 0, 1).contiguous() if array.ndim == 3 else torch.from_numpy(array)[None]
        write_file(path, bytes(encode_jpeg(chw, quality=90).numpy()))


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
    whole = read_bytes(os.path.join(folder, "img_002.jpg"))
    write_file(os.path.join(folder, "zz_truncated.jpg"), whole[: len(whole) // 3])
    write_file(os.path.join(folder, "zz_not_an_image.jpg"), "this is text, not a JPEG file\n", "w")


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
            row["cpu"] = f"refused: {entry['cpu_error']}" if "cpu_error" in entry else entry.get("cpu", "")
            rows.append(row)
            continue
        row["gpu"] = f"{entry['width']}x{entry['height']}"
        if "gpu_vs_cpu" in entry:
            row["vs_cpu_mean_abs"] = entry["gpu_vs_cpu"]["mean_abs"]
            row["vs_cpu_max"] = entry["gpu_vs_cpu"]["max"]
            if not entry["file"].startswith("zz_cmyk"):
                checks.check(f"decode {entry['file']} vs the CPU decode", row["vs_cpu_mean_abs"] <= 1.5 and row["vs_cpu_max"] <= 64,
                             f"mean {row['vs_cpu_mean_abs']:.3f}, max {row['vs_cpu_max']}")
        elif "cpu_error" in entry:
            row["cpu"] = f"refused: {entry['cpu_error']}"
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
            try:
                from torchvision.io import ImageReadMode, decode_jpeg

                data = torch.frombuffer(bytearray(read_bytes(path)), dtype=torch.uint8)
                tv = decode_jpeg(data, mode=ImageReadMode.RGB, device="cuda").permute(1, 2, 0).cpu().numpy()
                if tv.shape == gpu.shape:
                    row["max_vs_torchvision_nvjpeg"] = int(np.abs(tv.astype(np.int16) - gpu.astype(np.int16)).max())
            except Exception as e:  # torchvision's own refusal is reported, not a failure of ours
                row["max_vs_torchvision_nvjpeg"] = f"torchvision refused: {e}"[:80]
        files.append(path)
        rows.append(row)
    return rows, files


def decode_throughput(files, torch):
    """torchvision's nvJPEG decode (batched lists on the GPU) and the CPU decode (Pillow's) on one thread, images/s."""
    out = {}
    datas = [read_bytes(f) for f in files]
    out["Pillow decode on the CPU, 1 thread"] = len(files) / median_seconds(lambda: [cpu_decode(f) for f in files], 5)
    if torch is not None and torch.cuda.is_available():
        from torchvision.io import decode_jpeg

        tensors = [torch.frombuffer(bytearray(d), dtype=torch.uint8) for d in datas]
        for batch in (1, 8, 32):
            chosen = [tensors[i % len(tensors)] for i in range(batch)]

            def run():
                decode_jpeg(chosen, device="cuda")
                torch.cuda.synchronize()

            out[f"torchvision decode_jpeg on the GPU, batch {batch}"] = batch / median_seconds(run)
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
        row["cpu_ms"] = case.get("cpu_median_ms", float("nan"))
        row["identical_to_cpu"] = case.get("identical_to_cpu_batched_nms")
        checks.check(f"nms {case['case']} ({case['kind']}) vs the CPU batched_nms", row["identical_to_cpu"] is True,
                     "the GPU kept other boxes or another order")
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


def check_ssd(report, checks):
    rows = []
    for case in report.get("ssd", []) if isinstance(report.get("ssd"), list) else []:
        same = case["gpu_vs_cpu"]["all_same"]
        checks.check(f"ssd {case['coding']}", same, json.dumps(case["gpu_vs_cpu"]["images"]))
        rows.append(case)
    return rows


def check_resize(report, checks):
    rows = []
    for case in report.get("resize", []):
        if not isinstance(case, dict) or "case" not in case:
            continue
        cmp = case["gpu_vs_cpu"]
        checks.check(f"resize {case['case']}", cmp["differing"] == 0, f"{cmp['differing']} of {cmp['elements']} elements differ")
        rows.append(case)
    return rows


def summary_markdown(report, results, checks):
    nan = float("nan")
    lines = [f"# GPU pipeline stages on {report.get('device', 'unknown device')}", ""]
    lines += ["## Decode: nvJPEG (GPU) vs Pillow and inferbench's CPU decode (libjpeg-turbo)", "",
              "| file | GPU | Pillow | mean abs vs Pillow | p99 | max | mean abs vs CPU | max vs CPU | max vs torchvision nvJPEG |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in results["decode"]:
        lines.append(f"| {r['file']} | {r['gpu']} | {r['pillow']} | {r.get('mean_abs', '')} | {r.get('p99', '')} | {r.get('max', '')} | "
                     f"{r.get('vs_cpu_mean_abs', '')} | {r.get('vs_cpu_max', '')} | {r.get('max_vs_torchvision_nvjpeg', '')} |")
    lines += ["", "## Decode throughput (images/s; files of 333x250 to 1920x1080)", "", "| what | batch | images/s |", "|---|---|---|"]
    for t in report.get("decode_throughput", []) if isinstance(report.get("decode_throughput"), list) else []:
        lines.append(f"| inferbench {t['place']} | {t['batch']} | {t['images_per_s']:.0f} |")
    for k, v in results.get("decode_throughput", {}).items():
        lines.append(f"| {k} | | {v:.0f} |")
    lines += ["", "## Pre-processing a batch (decode + resize 256 + crop 224 + normalise, f32 NCHW) from JPEG bytes", "",
              "| place | batch | images/s | ms per batch |", "|---|---|---|---|"]
    for t in report.get("preprocess_throughput", []) if isinstance(report.get("preprocess_throughput"), list) else []:
        lines.append(f"| {t['place']} | {t['batch']} | {t['images_per_s']:.0f} | {t['ms_per_batch']:.2f} |")
    lines += ["", "## Resize + normalise, batch 8 (GPU vs resize_image + normalize_into on the same pixels)", "",
              "| case | elements differing | GPU images/s | CPU 1 thread images/s |", "|---|---|---|---|"]
    for r in results["resize"]:
        c = r["gpu_vs_cpu"]
        lines.append(f"| {r['case']} | {c['differing']} of {c['elements']} | {r['gpu_images_per_s']:.0f} | {r['cpu_1thread_images_per_s']:.0f} |")
    lines += ["", "## Class-wise NMS vs torchvision.ops.batched_nms and inferbench's CPU batched_nms", "",
              "| case | kind | candidates | classes | IoU | max det | kept | = torchvision | = CPU | GPU ms | CPU ms | torchvision CPU ms | torchvision GPU ms |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results["nms"]:
        lines.append(f"| {r['case']} | {r['kind']} | {r['candidates']} | {r['classes']} | {r['iou_threshold']} | {r['max_detections']} | "
                     f"{r.get('kept', '')} | {r.get('identical', 'not checked')} | {r.get('identical_to_cpu')} | {r['gpu_ms']:.3f} | "
                     f"{r['cpu_ms']:.3f} | {r.get('torchvision_cpu_ms', nan):.3f} | {r.get('torchvision_gpu_ms', nan):.3f} |")
    lines += ["", "## SSD decoding + NMS, batch 8 (GPU vs decode_boxes + select_detections)", "",
              "| coding | anchors | classes | same detections | largest relative difference | GPU ms | CPU 1 thread ms |", "|---|---|---|---|---|---|---|"]
    for r in results["ssd"]:
        c = r["gpu_vs_cpu"]
        largest = max((i["max_relative_difference"] for i in c["images"]), default=0.0)
        lines.append(f"| {r['coding']} | {r['anchors']} | {r['classes']} | {c['all_same']} | {largest:.2e} | {r['gpu_ms_per_batch']:.3f} | {r['cpu_1thread_ms_per_batch']:.3f} |")
    lines += ["", "## Checks", ""]
    lines += [f"- FAILED {f}" for f in checks.failed] or ["- all passed"]
    return "\n".join(lines) + "\n"


def compare(folder, work, out_json, summary_md):
    with open(os.path.join(work, "gpu_stages.json")) as f:
        report = json.load(f)
    torch, torchvision = try_import_torch()
    checks = Checks()
    results = {}
    for name, fn in (("decode", lambda: compare_decode(folder, work, report, checks, torch, torchvision)),
                     ("resize", lambda: check_resize(report, checks)),
                     ("nms", lambda: compare_nms(work, report, checks, torch, torchvision)),
                     ("ssd", lambda: check_ssd(report, checks))):
        try:
            results[name] = fn()
        except Exception as e:  # one part's failure is reported; the others still run
            import traceback

            traceback.print_exc()
            checks.failed.append(f"{name}: the comparison itself failed: {e!r}")
            results[name] = []
    decoded_files = results["decode"][1] if isinstance(results["decode"], tuple) else []
    results["decode"] = results["decode"][0] if isinstance(results["decode"], tuple) else []
    try:
        results["decode_throughput"] = decode_throughput(decoded_files, torch) if decoded_files else {}
    except Exception as e:
        checks.failed.append(f"decode throughput: {e!r}")
        results["decode_throughput"] = {}
    for part in ("decode", "decode_throughput", "resize", "preprocess_throughput", "nms", "ssd"):
        if isinstance(report.get(part), dict) and "failed" in report[part]:
            checks.failed.append(f"the GPU program's {part} part: {report[part]['failed']}")
        elif part not in report:
            checks.failed.append(f"the GPU program's {part} part: no result")
    results["failed_checks"] = checks.failed
    write_file(out_json, json.dumps(results, indent=1), "w")
    summary = summary_markdown(report, results, checks)
    write_file(summary_md, summary, "w")
    print(summary)
    return 1 if checks.failed else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "images":
        write_images(sys.argv[2])
        sys.exit(0)
    if len(sys.argv) == 6 and sys.argv[1] == "compare":
        sys.exit(compare(*sys.argv[2:]))
    print(__doc__, file=sys.stderr)
    sys.exit(2)
