#!/usr/bin/env python3
"""bench/aoti_reference.cpp (torch-aoti's plain reference) against the fake loader on the CPU: the row it prints,
the inputs it makes as declared, and its errors (a package that does not load or run, bad arguments).
    aoti_reference_test.py AOTI_REFERENCE_EXECUTABLE
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

EXE = sys.argv.pop(1) if len(sys.argv) > 1 else None


def package(folder, *lines):
    path = os.path.join(folder, "model.pt2")
    with open(path, "w") as f:
        f.write("\n".join(("fake-pt2", "device cpu") + lines) + "\n")
    return path


class AotiReference(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()  # pylint: disable=consider-using-with

    def tearDown(self):
        self.folder.cleanup()

    def run_reference(self, *args):
        done = subprocess.run([EXE, *args], capture_output=True, text=True, timeout=60, check=False)
        lines = done.stdout.strip().splitlines()
        return done.returncode, json.loads(lines[-1]) if lines else None, done.stderr

    def test_a_package_that_runs_gives_the_references_row(self):
        path = package(self.folder.name, "input input_ids int64 ?,8", "input attention_mask int64 ?,8",
                       "input x float16 ?,3")
        code, row, err = self.run_reference(path, "cpu", "input_ids:int64:2x8", "attention_mask:int64:2x8",
                                            "x:float16:2x3")
        self.assertEqual(code, 0, err)
        timing = row["aoti"]
        self.assertGreaterEqual(timing["calls"], 20)
        self.assertGreater(timing["median_ms"], 0)
        self.assertLessEqual(timing["p10_ms"], timing["median_ms"])
        self.assertLessEqual(timing["median_ms"], timing["p90_ms"])
        self.assertGreater(timing["enqueue_median_ms"], 0)
        self.assertGreaterEqual(row["aoti_first_call_s"], 0)

    def test_it_warms_up_and_measures_as_long_as_asked(self):
        path = package(self.folder.name, "input x float32 ?,3")
        code, row, err = self.run_reference("--warmup=0", "--duration=0", path, "cpu", "x:float32:1x3")
        self.assertEqual(code, 0, err)
        self.assertEqual(row["aoti"]["calls"], 20, "no time asked: the least number of calls")
        began = time.monotonic()
        code, row, err = self.run_reference("--warmup=0.3", "--duration=0.4", path, "cpu", "x:float32:1x3")
        self.assertEqual(code, 0, err)
        self.assertGreater(row["aoti"]["calls"], 20)
        self.assertGreaterEqual(time.monotonic() - began, 0.7, "0.3 s warming up, then 0.4 s measured")

    def test_what_the_loader_refuses_is_the_rows_error(self):
        bad = os.path.join(self.folder.name, "not-a-package.pt2")
        with open(bad, "w") as f:
            f.write("hello\n")
        code, row, _ = self.run_reference(bad, "cpu", "x:float32:1x3")
        self.assertEqual(code, 1)
        self.assertIn("PytorchStreamReader failed reading zip archive", row["aoti_error"])
        self.assertNotIn("\n", row["aoti_error"])

        failing = package(self.folder.name, "input x float32 ?,3", "fail_run CUDA error: an illegal memory access")
        code, row, _ = self.run_reference(failing, "cpu", "x:float32:1x3")
        self.assertEqual(code, 1)
        self.assertIn("illegal memory access", row["aoti_error"])

        wrong_shape = package(self.folder.name, "input x float32 ?,3")
        code, row, _ = self.run_reference(wrong_shape, "cpu", "x:float32:1x4")
        self.assertEqual(code, 1)
        self.assertIn("dimension 1 must be 3", row["aoti_error"])

    def test_bad_arguments(self):
        path = package(self.folder.name, "input x float32 ?,3")
        code, row, err = self.run_reference(path, "cpu")
        self.assertEqual((code, row), (2, None))
        self.assertIn("usage: aoti_reference", err)
        for bad in ("--duration=", "--warmup=-1", "--duration=2s", "--duration=inf", "--warmup=nan", "--repeat=3"):
            code, row, err = self.run_reference(bad, path, "cpu", "x:float32:1x3")
            self.assertEqual((code, row), (2, None), bad)
            self.assertIn("usage: aoti_reference [--warmup=SECONDS]", err)
        code, row, _ = self.run_reference(path, "cpu", "x:complex64:1x3")
        self.assertEqual(code, 1)
        self.assertIn("dtype 'complex64' is not one of", row["aoti_error"])
        code, row, _ = self.run_reference(path, "cpu", "x-float32")
        self.assertIn("is not NAME:DTYPE:D0xD1x", row["aoti_error"])


if __name__ == "__main__":
    if not EXE:
        sys.exit("usage: aoti_reference_test.py AOTI_REFERENCE_EXECUTABLE")
    unittest.main()
