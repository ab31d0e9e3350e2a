#!/usr/bin/env python3
"""scripts/gpu/torch_paths.py's parts that need no GPU: the plan (every path runs one model: the runners, the
packages torch-aoti asks for and the ones made ahead share their exporter options, so the cells find them
cached), the reference's jobs and what a crashed one leaves, the tables from stored figures, and its arguments.
"""

import json
import os
import sqlite3
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
    def __init__(self, out, precisions=("fp16", "bf16"), inferbench=None):
        self.out = out
        self.precisions = precisions
        self.inferbench = inferbench
        self.reference_repeats = {}


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
        hung = torch_paths.crashed(["vit-b16", "aoti", "fp16", "32"], -9, "vit-b16-fp16-b32 aoti: first call", 240)
        why = "no answer within 240 s (killed) at its step 'vit-b16-fp16-b32 aoti: first call'"
        self.assertEqual(hung, {"cells": {"vit-b16-fp16-b32": {"aoti_error": why}}})

    def fake_programs(self, aoti_body):
        """A fake Python reference (answers eager and compile) and a fake aoti_reference whose body is aoti_body
        (Python), next to a fake inferbench; the packages of every fp16 cell declared made. Returns the Args."""
        fake = os.path.join(self.out, "fake_reference.py")
        with open(fake, "w") as f:
            f.write("import json, sys\n"
                    "out, _, model, path, precision = sys.argv[1:6]\n"
                    "cells = {f'{model}-{precision}-b{b}': {path: {'median_ms': 1.0}} for b in (1, 32)}\n"
                    "print(json.dumps({'cells': cells}))\n")
        bin_dir = os.path.join(self.out, "bin")
        os.makedirs(bin_dir)
        aoti = os.path.join(bin_dir, "aoti_reference")
        with open(aoti, "w") as f:
            f.write(f"#!{sys.executable}\nimport json, os, signal, sys\n{aoti_body}\n")
        os.chmod(aoti, 0o755)
        for model, precision, batch in torch_paths_reference.cells(("fp16",)):
            write_json(os.path.join(self.out, "exports", f"pt2-{cell_name(model, precision, batch)}.json"),
                       {"path": f"/cache/{model}-{batch}.pt2",
                        "inputs": [{"name": "input", "dtype": "float16", "shape": [batch, 3, 224, 224]}]})
        args = Args(self.out, ("fp16",), inferbench=os.path.join(bin_dir, "inferbench"))
        args.min_job_s, args.reference_timeout_s = 0, 60
        self.addCleanup(setattr, torch_paths, "REFERENCE", torch_paths.REFERENCE)
        torch_paths.REFERENCE = fake
        return args

    def test_the_aoti_reference_runs_the_cells_package_in_cpp(self):
        args = self.fake_programs(
            "print(json.dumps({'aoti': {'median_ms': float(len(sys.argv))}, 'argv': sys.argv[1:]}))")
        self.assertTrue(torch_paths.stage_reference(args, torch_paths.Budget(600)))
        row = torch_paths.merged_reference(self.out, "resnet50")["cells"]["resnet50-fp16-b32"]
        self.assertEqual(row["compile"], {"median_ms": 1.0})
        self.assertEqual(row["argv"], ["--warmup=0.5", "--duration=1.5", "/cache/resnet50-32.pt2", "cuda:0",
                                       "input:float16:32x3x224x224"],
                         "warmed up and measured as the plan's cells, the package, the device and the inputs as the "
                         "exporter declared them")
        self.assertEqual(row["aoti"], {"median_ms": 6.0})

    def test_an_aoti_cell_without_a_package_or_reference_program_says_why(self):
        args = Args(self.out, ("fp16",), inferbench=os.path.join(self.out, "bin", "inferbench"))
        write_json(os.path.join(self.out, "exports", "pt2-resnet50-fp16-b1.json"), {"error": "torch.export failed"})
        self.assertEqual(torch_paths.reference_command(args, ["resnet50", "aoti", "fp16", "1"]),
                         {"cells": {"resnet50-fp16-b1": {"aoti_error": "no package: torch.export failed"}}})
        write_json(os.path.join(self.out, "exports", "pt2-resnet50-fp16-b1.json"),
                   {"path": "/cache/r.pt2", "inputs": [{"name": "input", "dtype": "float16", "shape": [1, 3]}]})
        row = torch_paths.reference_command(args, ["resnet50", "aoti", "fp16", "1"])["cells"]["resnet50-fp16-b1"]
        self.assertIn("aoti_reference is not built (scripts/gpu/verify.sh OUT build", row["aoti_error"])
        self.assertEqual(torch_paths.reference_command(args, ["resnet50", "eager", "fp16"]),
                         [sys.executable, torch_paths.REFERENCE, self.out, "reference", "resnet50", "eager", "fp16"],
                         "eager and compile: the Python reference")

    def test_a_crashed_aoti_process_loses_its_own_cell_alone(self):
        args = self.fake_programs("if 'resnet50-1' in sys.argv[3]:\n    os.kill(os.getpid(), signal.SIGSEGV)\n"
                                  "print(json.dumps({'aoti': {'median_ms': 2.0}}))")
        self.assertTrue(torch_paths.stage_reference(args, torch_paths.Budget(600)))
        merged = torch_paths.merged_reference(self.out, "resnet50")["cells"]
        self.assertEqual(merged["resnet50-fp16-b1"]["eager"], {"median_ms": 1.0})
        self.assertEqual(merged["resnet50-fp16-b1"]["aoti_error"], "the process ended without an answer (signal 11)")
        self.assertEqual(merged["resnet50-fp16-b32"]["aoti"], {"median_ms": 2.0})
        later = torch_paths.merged_reference(self.out, "vit-b16")["cells"]["vit-b16-fp16-b32"]
        self.assertEqual((later["compile"], later["aoti"]), ({"median_ms": 1.0}, {"median_ms": 2.0}),
                         "every other package still measured")

    def test_tables_hold_every_cell_and_hold_inferbench_against_the_reference(self):
        write_json(os.path.join(self.out, "reference", "resnet50.eager.fp16.json"),
                   {"cells": {cell_name("resnet50", "fp16", 1): {"eager": {"median_ms": 2.0}}}})
        rows = {("resnet50", "fp16", 1, "torch-eager"): {"status": "ok", "reason": None, "load_s": 8.0,
                                                         "compute_ms": 2.1, "e2e_ms": 2.2, "iterations": 500},
                ("resnet50", "fp16", 1, "onnxruntime"): {"status": "ok", "reason": None, "load_s": 3.0,
                                                         "compute_ms": 1.0, "e2e_ms": 1.1, "iterations": 900}}
        refs = {m: torch_paths.merged_reference(self.out, m) for m in torch_paths.MODELS}
        verdicts = {"unexplained": [], "host_bound": [], "spread": []}
        figures = torch_paths.figures_table(rows)
        self.assertEqual(len([line for line in figures if line.startswith("| ")]), 1 + 16)  # header + 16 cells
        self.assertIn("| resnet50 | fp16 | 1 | 2.100 (2.200) | not run yet |", "\n".join(figures))
        # 2.1 / 2.0: 5% apart, flagged; torch (inferbench's ONNX interpreter) and onnxruntime are other paths,
        # shown for scale and never flagged.
        rows[("resnet50", "fp16", 1, "torch")] = dict(rows[("resnet50", "fp16", 1, "onnxruntime")])
        table = "\n".join(torch_paths.reference_table(rows, refs, verdicts))
        self.assertIn("| resnet50 | fp16 | 1 | 2.000 / – / – | 1.050 ⚠ | – | – | 0.500 | 0.500 |", table)
        self.assertEqual(verdicts, {"unexplained": ["resnet50-fp16-b1 torch-eager: 1.050"], "host_bound": [],
                                    "spread": []},
                         "no enqueue time measured: nothing explains the gap")

    def test_a_gap_where_both_sides_waited_on_the_host_is_explained_by_it(self):
        name = cell_name("resnet50", "fp16", 1)
        write_json(os.path.join(self.out, "reference", "resnet50.eager.fp16.json"),
                   {"cells": {name: {"eager": {"median_ms": 4.0, "enqueue_median_ms": 3.9}}}})
        write_json(os.path.join(self.out, "reference", "resnet50.compile.fp16.json"),
                   {"cells": {name: {"compile": {"median_ms": 1.0, "enqueue_median_ms": 0.4}}}})
        row = {"status": "ok", "reason": None, "load_s": 8.0, "e2e_ms": 2.2, "iterations": 500}
        rows = {("resnet50", "fp16", 1, "torch-eager"): dict(row, compute_ms=2.0, enqueue_ms=1.9),
                ("resnet50", "fp16", 1, "torch-compile"): dict(row, compute_ms=1.1, enqueue_ms=1.0)}
        verdicts = {"unexplained": [], "host_bound": [], "spread": []}
        table = "\n".join(torch_paths.reference_table(
            rows, {m: torch_paths.merged_reference(self.out, m) for m in torch_paths.MODELS}, verdicts))
        self.assertIn("| resnet50 | fp16 | 1 | 4.000 / 1.000 / – | 0.500 host | 1.100 ⚠ |", table)
        self.assertEqual(verdicts, {
            "host_bound": ["resnet50-fp16-b1 torch-eager: 0.500 (enqueue / GPU compute: inferbench 95%, "
                           "reference 98%)"],
            "unexplained": ["resnet50-fp16-b1 torch-compile: 1.100 (enqueue / GPU compute: inferbench 91%, "
                            "reference 40%)"], "spread": []}, "one side bound by the host is no explanation")

    def test_a_path_measured_by_several_processes_shows_their_spread(self):
        jobs = torch_paths.reference_jobs(("fp16",), {"compile": 3})
        names = [name for name, _ in jobs]
        self.assertEqual(len(jobs), 4 * 4 + 2 * 4, "one pass of every job, then compile twice more per model")
        self.assertEqual(names[16:20], ["resnet50.compile.fp16.r2", "bert-large.compile.fp16.r2",
                                        "convnext-t.compile.fp16.r2", "vit-b16.compile.fp16.r2"],
                         "each pass after the whole of the one before")
        self.assertEqual(names[-1], "vit-b16.compile.fp16.r3")
        name = cell_name("resnet50", "fp16", 1)
        for suffix, median, enqueue in (("", 1.0, 0.3), (".r2", 1.2, 0.5), (".r3", 0.9, 0.4)):
            write_json(os.path.join(self.out, "reference", f"resnet50.compile.fp16{suffix}.json"),
                       {"cells": {name: {"compile": {"median_ms": median, "enqueue_median_ms": enqueue},
                                         "compile_first_call_s": 9.0}}})
        merged = torch_paths.merged_reference(self.out, "resnet50")["cells"][name]
        self.assertEqual(merged, {"compile": {"median_ms": 1.0, "runs_ms": [0.9, 1.0, 1.2], "enqueue_median_ms": 0.4},
                                  "compile_first_call_s": 9.0})
        row = {"status": "ok", "reason": None, "load_s": 8.0, "e2e_ms": 2.2, "iterations": 500, "enqueue_ms": 0.5}
        refs = {m: torch_paths.merged_reference(self.out, m) for m in torch_paths.MODELS}
        for compute_ms, mark in ((1.15, "1.150 spread"), (1.25, "1.250 ⚠"), (1.02, "1.020")):
            verdicts = {"unexplained": [], "host_bound": [], "spread": []}
            rows = {("resnet50", "fp16", 1, "torch-compile"): dict(row, compute_ms=compute_ms)}
            table = "\n".join(torch_paths.reference_table(rows, refs, verdicts))
            self.assertIn(f"| resnet50 | fp16 | 1 | – / 1.000 [0.900–1.200] / – | – | {mark} |", table)
        self.assertEqual(verdicts, {"unexplained": [], "host_bound": [], "spread": []}, "1.02: within 3%")
        verdicts = {"unexplained": [], "host_bound": [], "spread": []}
        torch_paths.reference_table({("resnet50", "fp16", 1, "torch-compile"): dict(row, compute_ms=1.15)}, refs,
                                    verdicts)
        self.assertEqual(verdicts["spread"], ["resnet50-fp16-b1 torch-compile: 1.150 (1.150 ms, among plain "
                                              "PyTorch's 3 processes: 0.900, 1.000, 1.200 ms, 33% apart)"])
        self.assertEqual(torch_paths.path_counts("compile=3,aoti=2"), {"compile": 3, "aoti": 2})
        self.assertEqual(torch_paths.path_counts(""), {})
        for bad in ("compile", "jit=2", "eager=0"):
            with self.assertRaises(Exception):
                torch_paths.path_counts(bad)

    def test_a_gap_where_inferbench_found_its_compute_following_its_host_is_explained_by_it(self):
        # inferbench's findings as `inferbench explain --format json` gives them: a fake that prints them.
        statement = ("GPU compute follows the host's enqueue time iteration by iteration (r = 0.99 over 1514 "
                     "iterations): median 751.50 us in the quarter with the shortest enqueue, 992.88 us in the "
                     "quarter with the longest (+32%), enqueue at 52% of compute: the GPU waited for the host inside "
                     "the timed region, so this compute includes host time and moves with the host's speed")
        fake = os.path.join(self.out, "inferbench")
        with open(fake, "w") as f:
            f.write(f"#!{sys.executable}\nimport json, sys\nassert sys.argv[1:3] == ['explain', '--db']\n"
                    f"print(json.dumps({{'findings': [{{'id': 'launch.host_in_compute', 'benchmarks': [7], "
                    f"'statement': {statement!r}}}, {{'id': 'launch.enqueue_bound', 'benchmarks': [8], "
                    f"'statement': 'x'}}]}}))\n")
        os.chmod(fake, 0o755)
        open(os.path.join(self.out, "results.db"), "w").close()
        self.assertEqual(torch_paths.host_in_compute(Args(self.out, inferbench=fake)), {7: statement})
        self.assertEqual(torch_paths.host_in_compute(Args(self.out, inferbench="/bin/false")), {},
                         "no findings from explain: none, and the log says why")
        self.assertEqual(torch_paths.host_in_compute(Args(self.out, inferbench=os.path.join(self.out, "none"))), {})
        name = cell_name("vit-b16", "bf16", 1)
        for suffix, median, coupling in (("", 0.74, 0.98), (".r2", 0.73, 0.95), (".r3", 0.76, 0.99)):
            write_json(os.path.join(self.out, "reference", f"vit-b16.compile.bf16{suffix}.json"),
                       {"cells": {name: {"compile": {"median_ms": median, "enqueue_median_ms": 0.2,
                                                     "enqueue_correlation": coupling}}}})
        refs = {m: torch_paths.merged_reference(self.out, m) for m in torch_paths.MODELS}
        self.assertEqual(refs["vit-b16"]["cells"][name]["compile"]["enqueue_correlation"], 0.95,
                         "the weakest process's")
        row = {"status": "ok", "reason": None, "load_s": 8.0, "e2e_ms": 1.0, "iterations": 1514, "compute_ms": 0.925,
               "enqueue_ms": 0.48}
        for coupled, mark in ((statement, "1.250 host-timed"), (None, "1.250 ⚠")):
            verdicts = {"unexplained": [], "host_bound": [], "spread": [], "host_timed": []}
            rows = {("vit-b16", "bf16", 1, "torch-compile"): dict(row, host_in_compute=coupled)}
            table = "\n".join(torch_paths.reference_table(rows, refs, verdicts))
            self.assertIn(f"| vit-b16 | bf16 | 1 | – / 0.740 [0.730–0.760] / – | – | {mark} |", table)
        verdicts = {"unexplained": [], "host_bound": [], "spread": [], "host_timed": []}
        torch_paths.reference_table({("vit-b16", "bf16", 1, "torch-compile"): dict(row, host_in_compute=statement)},
                                    refs, verdicts)
        self.assertEqual(verdicts["host_timed"], [
            "vit-b16-bf16-b1 torch-compile: 1.250 (inferbench: GPU compute follows the host's enqueue time iteration by "
            "iteration (r = 0.99 over 1514 iterations): median 751.50 us in the quarter with the shortest enqueue, "
            "992.88 us in the quarter with the longest (+32%), enqueue at 52% of compute: the GPU waited for the host "
            "inside the timed region, so this compute includes host time and moves with the host's speed; plain "
            "PyTorch's GPU time against its enqueue time: r = 0.95)"])

    def test_inferbench_figures_are_medians_of_the_stored_iterations(self):
        db = os.path.join(self.out, "results.db")
        with sqlite3.connect(db) as con:
            con.execute("CREATE TABLE benchmarks (benchmark_id INTEGER, model TEXT, backend TEXT, precision TEXT, "
                        "batch_size INTEGER, status TEXT, reason TEXT, load_ns INTEGER)")
            con.execute("CREATE TABLE iterations (benchmark_id INTEGER, e2e_ns INTEGER, enqueue_ns INTEGER, "
                        "compute_ns INTEGER)")
            con.execute("INSERT INTO benchmarks VALUES (1, 'torchvision:resnet50', 'torch-eager', 'fp16', 1, 'ok', "
                        "NULL, 8000000000)")
            con.executemany("INSERT INTO iterations VALUES (1, ?, ?, ?)",
                            [(3_000_000, 1_000_000, 2_000_000), (5_000_000, None, 4_000_000),
                             (4_000_000, 3_000_000, None)])
        row = torch_paths.inferbench_rows(self.out)[("resnet50", "fp16", 1, "torch-eager")]
        self.assertEqual((row["compute_ms"], row["e2e_ms"], row["enqueue_ms"], row["iterations"], row["load_s"]),
                         (3.0, 4.0, 2.0, 3, 8.0), "each median over the iterations that have the figure")

    def test_the_reference_times_the_gpu_and_the_hosts_enqueue_of_single_calls(self):
        clock = [0.0]

        class GpuEvent:  # GPU time between two records: 2 ms more than the host's
            def __init__(self, enable_timing):
                self.at = None

            def record(self):
                self.at = clock[0]

            def synchronize(self):
                pass

            def elapsed_time(self, other):
                return (other.at - self.at) * 1e3 + 2.0

        class FakeTorch:  # what time_calls reads of torch
            class cuda:  # noqa: N801
                @staticmethod
                def Event(enable_timing):  # noqa: N802 - torch.cuda.Event
                    return GpuEvent(enable_timing)

                @staticmethod
                def synchronize():
                    pass

        calls = []

        def fn(x, mask):  # named otherwise than the declared inputs, as torchvision's forward(x) against "input"
            calls.append((x, mask))
            clock[0] += 0.001  # each call takes 1 ms of host time
            return x

        real = torch_paths_reference.time.perf_counter
        torch_paths_reference.time.perf_counter = lambda: clock[0]
        try:
            timing = {"warmup_s": 0.0035, "warmup_calls": 2, "duration_s": 0.0095, "min_calls": 5}
            timed = torch_paths_reference.time_calls(FakeTorch, fn, {"input": 1, "attention_mask": 2}, timing)
            few = torch_paths_reference.time_calls(FakeTorch, fn, {"input": 1, "attention_mask": 2},
                                                   dict(timing, warmup_s=0, duration_s=0))
            fed = torch_paths_reference.time_calls(FakeTorch, fn, {"input": 1, "attention_mask": 2},
                                                   dict(timing, warmup_s=0, duration_s=0),
                                                   feed=lambda: {"input": 3, "attention_mask": 4})

            def slower_each_third(x, mask):  # 1, 2 or 3 ms of host time: the GPU's time follows it
                clock[0] += 0.001 * (1 + len(calls) % 3)
                calls.append((x, mask))

            coupled = torch_paths_reference.time_calls(FakeTorch, slower_each_third, {"input": 1, "mask": 2},
                                                       dict(timing, warmup_s=0, duration_s=0, min_calls=9))
        finally:
            torch_paths_reference.time.perf_counter = real
        self.assertAlmostEqual(timed["median_ms"], 3.0)
        self.assertAlmostEqual(timed["enqueue_median_ms"], 1.0)
        self.assertEqual(timed["calls"], 10, "measured for 9.5 ms of 1 ms calls: past the 5 calls asked at least")
        self.assertEqual(calls[:14], [(1, 2)] * 14, "4 warm-up calls (3.5 ms), then 10 timed, in the declared order, "
                                                     "one call each: no keyword call that fails first")
        self.assertEqual(few["calls"], 5, "no time asked: the least number of calls")
        self.assertEqual(calls[21:28], [(3, 4)] * 7, "fed: each call, warm-up and timed, takes what feed() gives")
        self.assertEqual(fed["calls"], 5)
        self.assertAlmostEqual(coupled["enqueue_correlation"], 1.0)
        self.assertEqual(len(calls), 14 + 2 + 5 + 7 + 2 + 9)
        self.assertEqual(set(torch_paths_reference.TIMING), {"warmup_s", "warmup_calls", "duration_s", "min_calls"})

    def test_plain_pytorch_runs_without_the_library_folders_set_for_inferbench(self):
        dist_lib = os.path.join(torch_paths.ROOT, "dist", "lib")
        wheel = "/usr/lib/python3/dist-packages/nvidia/cublas/lib"
        saved = os.environ.get("LD_LIBRARY_PATH")
        try:
            os.environ["LD_LIBRARY_PATH"] = f"{dist_lib}:{wheel}:/opt/cuda/lib64"
            self.assertEqual(torch_paths.plain_env()["LD_LIBRARY_PATH"], "/opt/cuda/lib64", "the user's own kept")
            os.environ["LD_LIBRARY_PATH"] = f"{dist_lib}:{wheel}"
            self.assertNotIn("LD_LIBRARY_PATH", torch_paths.plain_env())
        finally:
            if saved is None:
                os.environ.pop("LD_LIBRARY_PATH", None)
            else:
                os.environ["LD_LIBRARY_PATH"] = saved

    def test_unknown_stages_and_precisions_are_refused(self):
        script = os.path.join(SCRIPTS, "torch_paths.py")
        for bad in (["--stages", "build,measure"], ["--precisions", "fp32"]):
            done = subprocess.run([sys.executable, script, self.out, *bad], capture_output=True, text=True,
                                  check=False, timeout=60)
            self.assertEqual(done.returncode, 2, done.stderr)
            self.assertIn("torch_paths:", done.stderr)


if __name__ == "__main__":
    unittest.main()
