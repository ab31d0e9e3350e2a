#!/usr/bin/env python3
"""scripts/gpu/pipeline_stages_reference.py's parts that need no GPU: the test JPEG files it writes (good ones that
decode to their sizes, a grayscale and a CMYK one, a truncated file and a text file), and its comparison of a
GPU report: all passing where the report agrees with the references, each disagreement named and the exit status
1 where it does not (a GPU NMS keeping another box, a resized element differing, SSD detections apart, a part of
the GPU program that failed).
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "gpu", "pipeline_stages_reference.py")
sys.path.insert(0, os.path.dirname(SCRIPT))
import pipeline_stages_reference as reference  # noqa: E402


def agreeing_report(images, work):
    """A report as bench/pipeline_gpu_stages writes it, whose GPU results are the references' own."""
    import torch
    import torchvision

    os.makedirs(os.path.join(work, "decoded"))
    os.makedirs(os.path.join(work, "nms"))
    decode = []
    for i, name in enumerate(sorted(os.listdir(images))[:6] + ["zz_truncated.jpg"]):
        if name == "zz_truncated.jpg":
            decode.append({"file": name, "components": 3, "cpu_error": "corrupt", "error": "nvjpegDecode: bad"})
            continue
        pixels = reference.cpu_decode(os.path.join(images, name))
        pixels.tofile(os.path.join(work, "decoded", f"{i:03}.rgb"))
        decode.append({"file": name, "components": 3, "cpu": "ok", "width": pixels.shape[1], "height": pixels.shape[0],
                       "gpu_vs_cpu": {"mean_abs": 0.4, "max": 6}, "pixels": f"{i:03}.rgb"})
    rng = np.random.default_rng(3)
    corner = rng.uniform(0, 200, (400, 2)).astype(np.float32)
    boxes = np.concatenate([corner, corner + rng.uniform(1, 60, (400, 2)).astype(np.float32)], 1)
    scores = rng.uniform(0, 1, 400).astype(np.float32)
    labels = rng.integers(0, 4, 400).astype(np.int32)
    boxes.tofile(os.path.join(work, "nms", "case0.boxes.f32"))
    scores.tofile(os.path.join(work, "nms", "case0.scores.f32"))
    labels.tofile(os.path.join(work, "nms", "case0.labels.i32"))
    kept = torchvision.ops.batched_nms(torch.from_numpy(boxes), torch.from_numpy(scores),
                                       torch.from_numpy(labels).long(), 0.5).tolist()
    return {
        "device": "a test's",
        "decode_alone": [{"file": d["file"], "components": d["components"],
                          "outcome": "skipped (corrupt): no end-of-image marker" if "error" in d
                          else f"decoded {d['width']}x{d['height']} on the GPU (hardware)"} for d in decode],
        "decode": decode,
        "decode_throughput": [{"place": "gpu", "batch": 8, "median_ms": 2.0, "images_per_s": 4000.0}],
        "resize": [{"case": "plain 300 u8 nhwc", "batch": 8, "gpu_vs_cpu": {"elements": 2160000, "differing": 0},
                    "gpu_images_per_s": 9000.0, "cpu_1thread_images_per_s": 400.0}],
        "preprocess_throughput": [{"place": "gpu", "batch": 32, "images_per_s": 3000.0, "ms_per_batch": 10.7}],
        "nms": [{"case": "case0", "kind": "random", "candidates": 400, "classes": 4, "iou_threshold": 0.5,
                 "max_detections": 400, "kept": kept, "identical_to_cpu_batched_nms": True, "gpu_median_ms": 0.2,
                 "cpu_median_ms": 0.5}],
        "ssd": [{"coding": "ssd_tf_anchors", "anchors": 1917, "classes": 91, "batch": 8,
                 "gpu_vs_cpu": {"images": [{"gpu": 4, "cpu": 4, "max_relative_difference": 2e-7, "same": True}],
                                "all_same": True, "tolerance": 1e-5},
                 "gpu_ms_per_batch": 0.9, "cpu_1thread_ms_per_batch": 12.0}],
    }


class PipelineStagesReference(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory()  # pylint: disable=consider-using-with
        cls.images = os.path.join(cls.folder.name, "images")
        reference.write_images(cls.images)

    @classmethod
    def tearDownClass(cls):
        cls.folder.cleanup()

    def compare(self, report):
        work = tempfile.mkdtemp(dir=self.folder.name)
        os.rmdir(work)
        base = agreeing_report(self.images, work)
        base.update(report)
        with open(os.path.join(work, "gpu_stages.json"), "w") as f:
            json.dump(base, f)
        out_json, summary = os.path.join(work, "reference.json"), os.path.join(work, "summary.md")
        done = subprocess.run([sys.executable, SCRIPT, "compare", self.images, work, out_json, summary],
                              capture_output=True, text=True, timeout=120, check=False)
        with open(summary) as f:
            return done.returncode, f.read()

    def test_writes_good_and_bad_files(self):
        names = sorted(os.listdir(self.images))
        self.assertEqual(len([n for n in names if n.startswith("img_")]), 24)
        self.assertEqual(reference.cpu_decode(os.path.join(self.images, "img_002.jpg")).shape, (1080, 1920, 3))
        self.assertEqual(reference.cpu_decode(os.path.join(self.images, "zz_gray.jpg")).shape, (480, 640, 3))
        with self.assertRaises(Exception):
            reference.cpu_decode(os.path.join(self.images, "zz_not_an_image.jpg"))
        self.assertIn("zz_truncated.jpg", names)

    def test_an_agreeing_report_passes(self):
        status, summary = self.compare({})
        self.assertEqual(status, 0, summary)
        self.assertIn("- all passed", summary)
        self.assertIn("| case0 | random | 400 | 4 | 0.5 | 400 |", summary)
        self.assertIn("| zz_truncated.jpg | 3 | skipped (corrupt): no end-of-image marker |", summary)
        self.assertIn("1 of 7 files skipped by the GPU decoder.", summary)

    def test_each_disagreement_is_named(self):
        report = agreeing_report(self.images, tempfile.mkdtemp(dir=self.folder.name) + "/w")
        report["nms"][0]["kept"] = list(reversed(report["nms"][0]["kept"]))
        report["resize"][0]["gpu_vs_cpu"]["differing"] = 12
        report["ssd"][0]["gpu_vs_cpu"]["all_same"] = False
        report["preprocess_throughput"] = {"failed": "cudaMalloc: out of memory"}
        status, summary = self.compare({k: report[k] for k in ("nms", "resize", "ssd", "preprocess_throughput")})
        self.assertEqual(status, 1, summary)
        self.assertIn("FAILED nms case0 (random): ", summary)
        self.assertIn("FAILED resize plain 300 u8 nhwc: 12 of 2160000 elements differ", summary)
        self.assertIn("FAILED ssd ssd_tf_anchors", summary)
        self.assertIn("FAILED the GPU program's preprocess_throughput part: cudaMalloc: out of memory", summary)


if __name__ == "__main__":
    unittest.main()
