#!/usr/bin/env python3
"""scripts/gpu/torch_paths.py's parts that need no GPU: the plan (every path runs one model: the runners, the
packages torch-aoti asks for and the ones made ahead share their exporter options, so the cells find them
cached), the reference's jobs and what a crashed one leaves, the tables from stored figures, and its arguments.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "..", "scripts", "gpu")
sys.path.insert(0, SCRIPTS)
import torch_paths  # noqa: E402
import torch_paths_reference  # noqa: E402
from torch_paths_reference import OPTIONS, cell_name, write_json  # noqa: E402


class Args:  # what parse_args() gives the stages
    def __init__(self, out, precisions=("fp16", "bf16")):
        self.out = out
        self.precisions = precisions


def plan_of(text):
    return {line.split(":", 1)[0]: json.loads(line.split(":", 1)[1]) for line in text.splitlines()}


class TorchPaths(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()  # pylint: disable=consider-using-with
        self.out = self.folder.name
        for sub in ("exports", "reference", "logs"):
            os.makedirs(os.path.join(self.out, sub))

    def tearDown(self):
        self.folder.cleanup()

    def test_packages_made_ahead_are_the_ones_torch_aoti_asks_for(self):
        args = Args(self.out, ("fp16",))
        jobs = torch_paths.compile_jobs(args)
        packages = [argv for path, argv in jobs if os.path.basename(path).startswith("pt2-")]
        self.assertEqual(len(packages), 8)  # 4 models x 1 precision x 2 batches
        plan = plan_of(torch_paths.plan_text(args, "compile_mode"))
        self.assertEqual(plan["precisions"], ["fp16"])
        aoti = plan["backend_options"]["torch-aoti"]["export_options"].split()
        for argv in packages:
            given = [argv[i + 1] for i, a in enumerate(argv) if a == "--option"]
            self.assertEqual(given, aoti, "torch_export.py's cache key holds its options")
            self.assertEqual(argv[argv.index("--device") + 1], "cuda:0")
        for runner in ("torch-eager", "torch-compile"):
            for key, value in OPTIONS.items():
                self.assertEqual(plan["backend_options"][runner][key], value)
        self.assertEqual(plan["backend_options"]["torch-compile"]["compile_mode"], "reduce-overhead")

    def test_the_reference_runs_each_path_apart_and_a_crash_costs_that_path_alone(self):
        jobs = torch_paths.reference_jobs(("fp16", "bf16"))
        # Per model: eager and compile per precision, the package per cell.
        self.assertEqual(len(jobs), 4 * (2 * 2 + 2 * 2))
        self.assertIn(("resnet50.aoti.resnet50-bf16-b32", ["resnet50", "aoti", "bf16", "32"]), jobs)
        write_json(os.path.join(self.out, "reference", "resnet50.eager.fp16.json"),
                   {"cells": {"resnet50-fp16-b1": {"eager": {"median_ms": 2.0}},
                              "resnet50-fp16-b32": {"eager": {"median_ms": 4.0}}}})
        log = os.path.join(self.out, "reference-aoti.log")
        with open(log, "w") as f:
            f.write("[17:30:20] resnet50-fp16-b1 aoti: load\nFatal Python error: Segmentation fault\n"
                    "  File \"torch_paths_reference.py\", line 180 in aoti_runner\n")
        write_json(os.path.join(self.out, "reference", "resnet50.aoti.resnet50-fp16-b1.json"),
                   torch_paths.crashed(["resnet50", "aoti", "fp16", "1"], -11, torch_paths.last_step(log)))
        write_json(os.path.join(self.out, "reference", "resnet50.compile.fp16.json"),
                   torch_paths.crashed(["resnet50", "compile", "fp16"], 1))
        merged = torch_paths.merged_reference(self.out, "resnet50")["cells"]
        self.assertEqual(merged["resnet50-fp16-b1"], {
            "eager": {"median_ms": 2.0}, "aoti_error": "the process ended without an answer (signal 11) at its step "
                                                  "'resnet50-fp16-b1 aoti: load'",
            "compile_error": "the process ended without an answer (exit 1)"})
        self.assertEqual(set(merged["resnet50-fp16-b32"]), {"eager", "compile_error"})
        self.assertIsNotNone(torch_paths.no_answer(
            torch_paths.read_json(os.path.join(self.out, "reference", "resnet50.aoti.resnet50-fp16-b1.json"))))
        self.assertIsNone(torch_paths.no_answer({"cells": {"c": {"eager": {"median_ms": 1.0}}}}))
        left_out = torch_paths.not_run_after(["bert-large", "aoti", "fp16", "32"], "resnet50.aoti.resnet50-fp16-b1",
                                             "signal 11")
        self.assertEqual(list(left_out["cells"]), ["bert-large-fp16-b32"])
        self.assertTrue(left_out["cells"]["bert-large-fp16-b32"]["aoti_error"].startswith(
            "not run: the aoti reference of resnet50.aoti.resnet50-fp16-b1 gave no answer (signal 11)"))
        hung = torch_paths.crashed(["vit-b16", "aoti", "fp16", "32"], -9, "vit-b16-fp16-b32 aoti: first call", 240)
        why = "no answer within 240 s (killed) at its step 'vit-b16-fp16-b32 aoti: first call'"
        self.assertEqual(hung, {"no_answer": why, "cells": {"vit-b16-fp16-b32": {"aoti_error": why}}})

    def test_after_one_aoti_process_gives_no_answer_the_other_packages_are_not_loaded(self):
        fake = os.path.join(self.out, "fake_reference.py")
        with open(fake, "w") as f:  # answers eager and compile; an AOTI package load crashes the interpreter
            f.write("import json, os, signal, sys\n"
                    "out, _, model, path, precision = sys.argv[1:6]\n"
                    "print(f'[00:00:00] {model} {path}: load', file=sys.stderr, flush=True)\n"
                    "if path == 'aoti':\n"
                    "    os.kill(os.getpid(), signal.SIGSEGV)\n"
                    "cells = {f'{model}-{precision}-b{b}': {path: {'median_ms': 1.0}} for b in (1, 32)}\n"
                    "print(json.dumps({'cells': cells}))\n")
        args = Args(self.out, ("fp16",))
        args.min_job_s, args.reference_timeout_s = 0, 60
        saved = torch_paths.REFERENCE
        torch_paths.REFERENCE = fake
        try:
            self.assertTrue(torch_paths.stage_reference(args, torch_paths.Budget(600)))
        finally:
            torch_paths.REFERENCE = saved
        merged = torch_paths.merged_reference(self.out, "resnet50")["cells"]["resnet50-fp16-b1"]
        self.assertEqual(merged["eager"], {"median_ms": 1.0})
        self.assertEqual(merged["aoti_error"], "the process ended without an answer (signal 11) at its step "
                                               "'resnet50 aoti: load'")
        later = torch_paths.merged_reference(self.out, "vit-b16")["cells"]["vit-b16-fp16-b32"]
        self.assertEqual(later["compile"], {"median_ms": 1.0})
        self.assertTrue(later["aoti_error"].startswith("not run: the aoti reference of resnet50.aoti.resnet50-fp16-b1"))
        self.assertFalse(os.path.exists(os.path.join(self.out, "logs", "reference-vit-b16.aoti.vit-b16-fp16-b32.log")),
                         "no process started for it")

    def test_tables_hold_every_cell_and_hold_inferbench_against_the_reference(self):
        write_json(os.path.join(self.out, "reference", "resnet50.eager.fp16.json"),
                   {"cells": {cell_name("resnet50", "fp16", 1): {"eager": {"median_ms": 2.0}}}})
        rows = {("resnet50", "fp16", 1, "torch-eager"): {"status": "ok", "reason": None, "load_s": 8.0,
                                                         "compute_ms": 2.1, "e2e_ms": 2.2, "iterations": 500},
                ("resnet50", "fp16", 1, "onnxruntime"): {"status": "ok", "reason": None, "load_s": 3.0,
                                                         "compute_ms": 1.0, "e2e_ms": 1.1, "iterations": 900}}
        refs = {m: torch_paths.merged_reference(self.out, m) for m in torch_paths.MODELS}
        flagged = []
        figures = torch_paths.figures_table(rows)
        self.assertEqual(len([line for line in figures if line.startswith("| ")]), 1 + 16)  # header + 16 cells
        self.assertIn("| resnet50 | fp16 | 1 | 2.100 (2.200) | not run yet |", "\n".join(figures))
        table = "\n".join(torch_paths.reference_table(rows, refs, flagged))
        # 2.1 / 2.0: 5% apart, flagged; onnxruntime is another runtime, shown for scale and never flagged.
        self.assertIn("| resnet50 | fp16 | 1 | 2.000 / – / – | 1.050 ⚠ | – | – | – | 0.500 |", table)
        self.assertEqual(flagged, ["resnet50-fp16-b1 torch-eager: 1.050"])

    def test_the_reference_loads_a_package_as_torch_aoti_does(self):
        made, runs = [], []

        class Loader:  # AOTIModelPackageLoader's Python face, as PyTorch 2.11 has it
            def __init__(self, *args):
                made.append(args)

            def run(self, tensors):
                runs.append(tensors)
                return ["out"]

        class FakeTorch:  # what aoti_runner reads of torch
            class _C:  # noqa: N801 - torch._C
                class _aoti:  # noqa: N801
                    AOTIModelPackageLoader = Loader

            class cuda:  # noqa: N801
                @staticmethod
                def current_device():
                    return 3

        runner = torch_paths_reference.aoti_runner(FakeTorch, "/cache/m.pt2")
        self.assertEqual(made, [("/cache/m.pt2", "model", False, 1, 3)], "inferbench's C++ arguments")
        self.assertEqual(runner("a", "b"), ["out"])
        self.assertEqual(runs, [["a", "b"]], "run with the flat list of inputs, not boxed_run")

        class OldLoader(Loader):  # one without the device index: PyTorch's own wrapper
            def __init__(self, path):  # pylint: disable=super-init-not-called
                made.append((path,))

        FakeTorch._C._aoti.AOTIModelPackageLoader = OldLoader  # pylint: disable=protected-access
        FakeTorch._inductor = type("inductor", (), {"aoti_load_package": staticmethod(lambda path: ("wrapped", path))})
        self.assertEqual(torch_paths_reference.aoti_runner(FakeTorch, "/cache/m.pt2"), ("wrapped", "/cache/m.pt2"))

    def test_unknown_stages_and_precisions_are_refused(self):
        script = os.path.join(SCRIPTS, "torch_paths.py")
        for bad in (["--stages", "build,measure"], ["--precisions", "fp32"]):
            done = subprocess.run([sys.executable, script, self.out, *bad], capture_output=True, text=True,
                                  check=False, timeout=60)
            self.assertEqual(done.returncode, 2, done.stderr)
            self.assertIn("torch_paths:", done.stderr)


if __name__ == "__main__":
    unittest.main()
