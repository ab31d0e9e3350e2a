#!/usr/bin/env python3
"""Issue 16's figures on one GPU: ResNet-50, BERT-large, ConvNeXt-T and ViT-B/16 at fp16 and bf16, batch 1 and 32,
through torch-eager, torch-compile (reduce-overhead), torch-aoti, torch (the model's ONNX file on inferbench's
LibTorch interpreter) and onnxruntime (CUDA execution provider), in one inferbench plan; the same models timed by
plain PyTorch (CUDA events around each call, median; eager and compiled in Python, the AOTI package by a plain C++
program, bench/aoti_reference.cpp) as the reference; then one table of inferbench's figures and
one of inferbench against the reference, path by path (ratio of GPU compute medians; past 3%, a gap where both sides
waited on the host's launches, one within plain PyTorch's own spread between processes and one where inferbench's
GPU compute held host time (its finding launch.host_in_compute) told apart from one not explained).

Usage, on the GPU host (PyTorch 2.x with CUDA, timm and transformers importable by this python3), after
`scripts/setup.sh && scripts/bundle.sh` here and with the folder copied there:
    python3 scripts/gpu/torch_paths.py OUT [--budget-s 540] [--jobs 6]
It builds the LibTorch modules there first where dist/ lacks them (scripts/gpu/verify.sh OUT/verify build).
Resumable: each call does what fits in its budget (default 9 min), prints its progress and what is left, and a
second call with the same OUT goes on where the first stopped. Exports and compiles are cached under /tmp
(/tmp/inferbench-cache: packages and ONNX files; /tmp/torchinductor_$USER: torch.compile's kernels), so a warm
machine does the heavy part once. Everything lands in OUT: figures.md (the tables), figures.json, results.db,
reference/*.json, exports/*.json, logs/.

Stages, each skipped when done: build; compile (in parallel processes: the .pt2 package of every model, precision
and batch with runners/torch_export.py, as torch-aoti asks for it, so that its benchmarks find them in the cache;
one ONNX file per model with a dynamic batch for torch and onnxruntime; torch.compile warm-ups that fill
Inductor's cache for the reference and the runner); inferbench (one plan, resumed with `run --resume` where a call
ran out of time; first, so that its figures are the ones kept where the GPU time ends); reference (nothing else on
the GPU; eager and compile one Python process per model and precision, the AOTI package one aoti_reference process
per cell, so that a crash loses one path's or one package's figures alone; then the paths --reference-repeats names,
compile by default, again in fresh processes, so that plain PyTorch's own spread from process to process is
measured); tables.
`--stages build,compile` does only those (e.g. in the background, on CPUs the measurements leave free, while the GPU
measures something else); the next call without --stages goes on from there.
CPU check of the plan alone: python3 scripts/gpu/torch_paths.py /tmp/tp --print-plan
"""

import argparse
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_paths_reference import (BATCHES, MODELS, OPTIONS, PATHS, PRECISIONS, ROOT, TIMING, cell_name,  # noqa: E402
                                   cells, last_json, read_json, write_json)

REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_paths_reference.py")
EXPORTER = os.path.join(ROOT, "runners", "torch_export.py")
CACHE_HOME = os.environ.get("XDG_CACHE_HOME", "/tmp/inferbench-cache")
MODEL_CACHE = os.path.join(CACHE_HOME, "inferbench", "models")
PACKAGE_CACHE = os.path.join(MODEL_CACHE, "converted", "torch_export")  # where torch-aoti keeps its packages

BACKENDS = ("torch-eager", "torch-compile", "torch-aoti", "torch", "onnxruntime")
# The path each backend is held against, and whether the comparison is like for like (flagged past 3%).
# torch runs the model's ONNX file on inferbench's own LibTorch interpreter (C++, no Python dispatch): no plain
# PyTorch path does that, so it is shown against eager for scale, as onnxruntime is, and not flagged.
REFERENCE_OF = {"torch-eager": ("eager", True), "torch-compile": ("compile", True), "torch-aoti": ("aoti", True),
                "torch": ("eager", False), "onnxruntime": ("eager", False)}
FLAG_RATIO = 0.03
# A side whose host took this share of the GPU time or more to enqueue a call is bound by its launches (trtexec's
# rule, as inferbench's finding launch.enqueue_bound): its figure times the host's dispatch, which drifted up to 2x
# from run to run on the H200's VM (bench/results/torch_paths_h200_partial.md), so a gap between two such figures is
# explained by it, not a fault of either side.
HOST_BOUND_SHARE = 0.8
TABLES_RESERVE_S = 20


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


class Budget:
    def __init__(self, seconds):
        self.end = time.monotonic() + seconds

    def left(self):
        return self.end - time.monotonic()


# ---------------------------------------------------------------- build

def inferbench_exe(args):
    return args.inferbench or os.path.join(ROOT, "dist", "inferbench")


def stage_build(args, budget):
    backends = os.path.join(os.path.dirname(inferbench_exe(args)), "backends")
    wanted = [os.path.join(backends, f"libinferbench_backend_{m}.so") for m in ("torch", "torch-aoti")]
    wanted.append(aoti_reference_exe(args))
    if all(os.path.exists(w) for w in wanted):
        return True
    log("build: the torch and torch-aoti modules and aoti_reference against this PyTorch's LibTorch "
        "(scripts/gpu/verify.sh build)")
    with open(os.path.join(args.out, "logs", "build.log"), "w") as out:
        code = run_until([os.path.join(ROOT, "scripts", "gpu", "verify.sh"), os.path.join(args.out, "verify"), "build"],
                         budget.left() - TABLES_RESERVE_S, stdout=out, stderr=subprocess.STDOUT)
    missing = [w for w in wanted if not os.path.exists(w)]
    if missing:
        log(f"build: {', '.join(missing)} not built (exit {code}); see {args.out}/logs/build.log")
        return False
    return True


def run_until(argv, seconds, **kwargs):
    """Runs argv; past `seconds` sends SIGINT (inferbench keeps what it measured), then SIGKILL. Its exit code."""
    child = subprocess.Popen(argv, **kwargs)
    try:
        return child.wait(timeout=max(seconds, 1))
    except subprocess.TimeoutExpired:
        child.send_signal(signal.SIGINT)
        try:
            return child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
            return child.wait()


# ---------------------------------------------------------------- compile (parallel)

def export_job(kind, spec, precision, batch):
    device = "cuda:0" if kind == "pt2" else "cpu"
    # The options exactly as torch-aoti passes its export_options, so that its cells find these packages cached.
    options = [a for key, value in sorted(OPTIONS.items()) for a in ("--option", f"{key}={value}")]
    return [sys.executable, EXPORTER, "--spec", spec, "--format", kind, "--precision", precision,
            "--batch", str(batch), "--device", device, "--cache-dir", PACKAGE_CACHE] + options


def compile_jobs(args):
    """(result file, argv), the packages and ONNX files first: inferbench needs those, the warm-ups only save time."""
    jobs = []
    for model, precision, batch in cells(args.precisions):
        jobs.append((os.path.join(args.out, "exports", f"pt2-{cell_name(model, precision, batch)}.json"),
                     export_job("pt2", MODELS[model], precision, batch)))
    for model, spec in MODELS.items():
        jobs.append((os.path.join(args.out, "exports", f"onnx-{model}.json"), export_job("onnx", spec, "fp32", "dynamic")))
    for model, precision, batch in cells(args.precisions):
        jobs.append((os.path.join(args.out, "exports", f"warm-{cell_name(model, precision, batch)}.json"),
                     [sys.executable, REFERENCE, args.out, "warm", model, precision, str(batch)]))
    return [(path, argv) for path, argv in jobs if not os.path.exists(path)]


def ready(args, path):
    """A warm-up takes its inputs from the package's answer (or the ONNX file's): it starts after that one."""
    name = os.path.basename(path)
    if not name.startswith("warm-"):
        return True
    model = name[len("warm-"):].rsplit("-", 2)[0]
    exports = os.path.join(args.out, "exports")
    return (os.path.exists(os.path.join(exports, "pt2-" + name[len("warm-"):]))
            or os.path.exists(os.path.join(exports, f"onnx-{model}.json")))


def stage_compile(args, budget):
    pending = compile_jobs(args)
    if not pending:
        return True
    count = str(max(1, (os.cpu_count() or 2) // args.jobs))
    threads = {"TORCHINDUCTOR_COMPILE_THREADS": count, "OMP_NUM_THREADS": count}
    exporter_env = dict(os.environ, XDG_CACHE_HOME=CACHE_HOME, **threads)  # as torch-aoti starts the exporter
    log(f"compile: {len(pending)} exports, packages and warm-ups, {args.jobs} at a time")
    running = {}
    while pending or running:
        startable = [job for job in pending if ready(args, job[0])]
        while startable and len(running) < args.jobs and budget.left() > args.min_job_s:
            path, argv = startable.pop(0)
            pending.remove((path, argv))
            # Files, not pipes: a compile that prints much must not block on a pipe nobody reads yet.
            log_path = os.path.join(args.out, "logs", os.path.basename(path)[:-5])
            out, err = open(log_path + ".out", "w+"), open(log_path + ".log", "w")
            env = dict(plain_env(), **threads) if os.path.basename(path).startswith("warm-") else exporter_env
            running[path] = (subprocess.Popen(argv, stdout=out, stderr=err, env=env), (out, err), time.monotonic())
        if not running:
            if pending and budget.left() > args.min_job_s:  # warm-ups whose exports all failed to answer
                log(f"compile: {len(pending)} warm-ups wait for exports that gave no answer; retried next call")
            break
        for path, (child, files, began) in list(running.items()):
            if child.poll() is None and budget.left() > TABLES_RESERVE_S:
                continue
            if child.poll() is None:
                child.kill()
            child.wait()
            files[0].seek(0)
            answer = last_json(files[0].read())
            for f in files:
                f.close()
            del running[path]
            name = os.path.basename(path)[:-5]
            if child.returncode == 0 and answer and "error" not in answer:
                write_json(path, answer)
                log(f"compile: {name} done in {time.monotonic() - began:.0f} s"
                    f"{' (cache hit)' if answer.get('cache_hit') else ''}")
            elif child.returncode in (1, 2, 3) and answer:  # the exporter's answer: kept, not retried
                write_json(path, answer)
                log(f"compile: {name} exit {child.returncode}: {answer.get('error', '')}")
            else:
                log(f"compile: {name} stopped ({'out of time' if child.returncode < 0 else child.returncode}); "
                    f"retried next call")
        time.sleep(1)
    return not pending and not compile_jobs(args)


def reference_jobs(precisions, repeats=None):
    """(result name, arguments after `reference`): eager and compile for a model's batches at one precision in one
    process, the AOTI package one cell per process (a package load that crashes the interpreter loses that cell
    alone). `repeats` ({path: processes}, --reference-repeats) measures a path again in fresh processes, named
    NAME.r2, NAME.r3, ..., each pass after the whole of the one before, so that the repeats lie minutes apart as
    inferbench's cells and the reference do."""
    repeats = repeats or {}
    jobs = []
    for model in MODELS:
        for precision in precisions:
            jobs += [(f"{model}.{path}.{precision}", [model, path, precision]) for path in PATHS if path != "aoti"]
            jobs += [(f"{model}.aoti.{cell_name(model, precision, b)}", [model, "aoti", precision, str(b)])
                     for b in BATCHES]
    return jobs + [(f"{name}.r{k}", argv) for k in range(2, max(repeats.values(), default=1) + 1)
                   for name, argv in jobs if repeats.get(argv[1], 1) >= k]


def job_cells(argv):
    """The path and the cells a reference job (its arguments after `reference`) measures."""
    model, path, precision = argv[:3]
    return path, [cell_name(model, precision, b) for b in ([int(argv[3])] if len(argv) > 3 else BATCHES)]


def crashed(argv, code, last_step=None, hung_s=None):
    """What a reference process that gave no answer leaves for the cells it was to measure; `last_step`, the last
    step it wrote to its log (torch_paths_reference.step), says where it ended; `hung_s`, the limit it ran past and
    was killed at."""
    path, names = job_cells(argv)
    if hung_s is not None:
        why = f"no answer within {hung_s:.0f} s (killed)"
    else:
        why = f"the process ended without an answer ({f'signal {-code}' if code < 0 else f'exit {code}'})"
    if last_step:
        why += f" at its step '{last_step}'"
    return {"cells": {name: {f"{path}_error": why} for name in names}}


def last_step(log_path):
    """The last step a reference process wrote to its log ("[HH:MM:SS] CELL PATH: STEP"), without the time."""
    try:
        with open(log_path, errors="replace") as f:
            steps = [line.strip() for line in f if line.startswith("[") and "] " in line]
    except OSError:
        return None
    return steps[-1].split("] ", 1)[1] if steps else None


def plain_env():
    """The environment of a plain-PyTorch process (the reference, the warm-ups): this one's, less the folders that
    scripts/gpu/bundle_env.sh puts on LD_LIBRARY_PATH for inferbench (dist/lib, pip's nvidia-* lib folders). A plain
    script runs without them, and their libraries could be loaded in place of those its PyTorch links."""
    dist = os.path.join(ROOT, "dist") + os.sep
    kept = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":")
            if d and not (d + os.sep).startswith(dist) and not ("-packages" + os.sep + "nvidia" + os.sep) in d + os.sep]
    env = dict(os.environ, XDG_CACHE_HOME=CACHE_HOME)
    if kept:
        env["LD_LIBRARY_PATH"] = ":".join(kept)
    else:
        env.pop("LD_LIBRARY_PATH", None)
    return env


def aoti_reference_exe(args):
    """torch-aoti's plain reference (bench/aoti_reference.cpp), next to the inferbench executable (verify.sh build)."""
    return os.path.join(os.path.dirname(inferbench_exe(args)), "aoti_reference")


def reference_command(args, argv):
    """The command of a reference job: eager and compile in Python (torch_paths_reference.py); the AOTI package in
    C++ (bench/aoti_reference.cpp: the loader alone, as a deployment loads it; PyTorch's Python loader crashed on
    every package on the H200, where the C++ one loaded them all). Where nothing can run, the cell's row says why."""
    model, path, precision = argv[:3]
    if path != "aoti":
        return [sys.executable, REFERENCE, args.out, "reference"] + argv
    name = cell_name(model, precision, int(argv[3]))
    package = read_json(os.path.join(args.out, "exports", f"pt2-{name}.json")) or {}
    why = None
    if "path" not in package or not package.get("inputs"):
        why = f"no package: {package.get('error', 'not compiled yet')}"
    elif not os.path.exists(aoti_reference_exe(args)):
        why = (f"{aoti_reference_exe(args)} is not built (scripts/gpu/verify.sh OUT build builds it where LibTorch "
               f"has the AOTInductor loader)")
    if why:
        return {"cells": {name: {"aoti_error": why}}}
    inputs = [f"{i['name']}:{i['dtype']}:{'x'.join(str(d) for d in i['shape'])}" for i in package["inputs"]]
    timing = [f"--warmup={TIMING['warmup_s']}", f"--duration={TIMING['duration_s']}"]
    return [aoti_reference_exe(args)] + timing + [package["path"], "cuda:0"] + inputs


def run_reference(args, budget, name, argv):
    """One reference process's answer (crashed()'s where it crashed or ran past --reference-timeout-s), or None
    where the call's budget ended first (done next call)."""
    command = reference_command(args, argv)
    if isinstance(command, dict):
        return command
    path, cells = job_cells(argv)
    # Python as a plain script runs; the C++ reference with the libraries inferbench's torch-aoti loads with.
    env = dict(os.environ, XDG_CACHE_HOME=CACHE_HOME) if path == "aoti" else plain_env()
    log_path = os.path.join(args.out, "logs", f"reference-{name}.log")
    budget_binds = budget.left() - TABLES_RESERVE_S < args.reference_timeout_s
    with open(log_path, "w") as err:
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
        try:
            out, _ = child.communicate(timeout=max(min(budget.left() - TABLES_RESERVE_S, args.reference_timeout_s), 1))
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
            if budget_binds:
                return None
            return crashed(argv, None, last_step(log_path), hung_s=args.reference_timeout_s)
    answer = last_json(out)
    if path == "aoti" and answer and child.returncode in (0, 1):  # the C++ reference's row, or its error
        return {"path": "aoti", "cells": {cells[0]: answer}}
    if child.returncode != 0 or not answer:
        return crashed(argv, child.returncode, last_step(log_path))
    return answer


def stage_reference(args, budget):
    for name, argv in reference_jobs(args.precisions, args.reference_repeats):
        path = os.path.join(args.out, "reference", f"{name}.json")
        if os.path.exists(path):
            continue
        if budget.left() < args.min_job_s:
            return False
        log(f"reference: {name} (CUDA events around single calls)")
        answer = run_reference(args, budget, name, argv)
        if answer is None:
            log(f"reference: {name} ran out of time; done next call")
            return False
        write_json(path, answer)
        log(f"reference: {name}: " + "; ".join(
            f"{cell} " + ", ".join(f"{k} {v['median_ms']:.3f} ms" if isinstance(v, dict) else f"{k}: {v}"
                                   for k, v in row.items() if not k.endswith("_first_call_s"))
            for cell, row in answer["cells"].items()))
    return True


def merged_reference(out, model):
    """The model's reference files as one: {"cells": {CELL: {path: timing, path_error: ...}}}. A path that several
    processes measured (--reference-repeats) has the median of their medians (and of their enqueue medians), the
    lowest of their correlations of GPU time with enqueue time, and each process's median in runs_ms."""
    merged = {"cells": {}}
    timings = {}
    folder = os.path.join(out, "reference")
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if name.startswith(model + ".") and name.endswith(".json"):
            answer = read_json(os.path.join(folder, name)) or {}
            for key in ("torch", "gpu"):
                merged.setdefault(key, answer.get(key))
            for cell, row in answer.get("cells", {}).items():
                for key, value in row.items():
                    if isinstance(value, dict) and "median_ms" in value:
                        timings.setdefault((cell, key), []).append(value)
                    else:
                        merged["cells"].setdefault(cell, {}).setdefault(key, value)
    for (cell, path), runs in timings.items():
        combined = runs[0]
        if len(runs) > 1:
            combined = {"median_ms": statistics.median(r["median_ms"] for r in runs),
                        "runs_ms": sorted(r["median_ms"] for r in runs)}
            enqueue = [r["enqueue_median_ms"] for r in runs if r.get("enqueue_median_ms") is not None]
            if len(enqueue) == len(runs):
                combined["enqueue_median_ms"] = statistics.median(enqueue)
            coupling = [r["enqueue_correlation"] for r in runs if r.get("enqueue_correlation") is not None]
            if len(coupling) == len(runs):
                combined["enqueue_correlation"] = min(coupling)  # the weakest process's
        merged["cells"].setdefault(cell, {})[path] = combined
    return merged


# ---------------------------------------------------------------- inferbench

def accepted(args, backend, key, value):
    """Whether `backend` takes option KEY=VALUE (a dry run of one cell)."""
    probe = subprocess.run([inferbench_exe(args), "run", "--model", "resnet50", "--backend", backend, "--device",
                            "cuda:0", "--dry-run", "--quiet", "--set", f"backend_options.{backend}.{key}={value}"],
                           capture_output=True, text=True)
    return probe.returncode == 0


def onnx_files(out):
    files = {}
    for model in MODELS:
        answer = read_json(os.path.join(out, "exports", f"onnx-{model}.json"))
        if answer and answer.get("path"):
            files[model] = answer["path"]
    return files


def plan_text(args, compile_mode_key):
    onnx = onnx_files(args.out)
    specs = list(MODELS.values())
    models = specs + list(onnx.values())
    exclude = [{"model": s, "backend": b} for s in specs for b in ("torch", "onnxruntime")]
    exclude += [{"model": f, "backend": b} for f in onnx.values() for b in ("torch-eager", "torch-compile", "torch-aoti")]
    python = sys.executable
    options = {"torch-eager": dict(OPTIONS, python=python), "torch-compile": dict(OPTIONS, python=python),
               "torch-aoti": {"python": python, "export_options": " ".join(f"{k}={v}" for k, v in sorted(OPTIONS.items()))},
               "onnxruntime": {"execution_provider": "cuda"}}
    if compile_mode_key:
        options["torch-compile"][compile_mode_key] = "reduce-overhead"
    plan = {"name": "torch-paths", "models": models, "backends": list(BACKENDS), "devices": ["cuda:0"],
            "precisions": list(args.precisions), "batch_sizes": list(BATCHES), "exclude": exclude,
            "warmup": f"{round(TIMING['warmup_s'] * 1000)}ms", "warmup_iterations": TIMING["warmup_calls"],
            "duration": f"{round(TIMING['duration_s'] * 1000)}ms", "min_iterations": TIMING["min_calls"],
            "timeout": "8m", "model_cache": MODEL_CACHE, "backend_options": options}
    # JSON is YAML: one line per key keeps the plan readable and exact.
    return "\n".join(f"{key}: {json.dumps(value)}" for key, value in plan.items()) + "\n"


def stage_inferbench(args, budget):
    done = os.path.join(args.out, "inferbench.done")
    if os.path.exists(done):
        return True
    db = os.path.join(args.out, "results.db")
    run_id_path = os.path.join(args.out, "run_id")
    env = dict(os.environ, XDG_CACHE_HOME=CACHE_HOME)
    if os.path.exists(run_id_path):
        with open(run_id_path) as f:
            run_id = f.read().strip()
        log(f"inferbench: resuming run {run_id}")
        argv = [inferbench_exe(args), "run", "--resume", run_id, "--db", db]
    else:
        mode_key = next((k for k in ("compile_mode", "mode") if accepted(args, "torch-compile", k, "reduce-overhead")),
                        None)
        if not mode_key:
            log("inferbench: torch-compile takes no compile-mode option here; its cells use its default mode")
        with open(os.path.join(args.out, "plan.yaml"), "w") as f:
            f.write(plan_text(args, mode_key))
        argv = [inferbench_exe(args), "run", os.path.join(args.out, "plan.yaml"), "--db", db]
        log(f"inferbench: {os.path.join(args.out, 'plan.yaml')}")
    with open(os.path.join(args.out, "logs", "inferbench.log"), "a") as out:
        code = run_until(argv, budget.left() - TABLES_RESERVE_S, stdout=out, stderr=subprocess.STDOUT, env=env)
    if not os.path.exists(run_id_path) and os.path.exists(db):
        with sqlite3.connect(db) as con:
            row = con.execute("SELECT max(run_id) FROM runs").fetchone()
        if row and row[0] is not None:
            with open(run_id_path, "w") as f:
                f.write(str(row[0]))
    if code in (0, 1, 3):  # finished: ok, some failed, all skipped
        open(done, "w").close()
        log(f"inferbench: finished (exit {code})")
        return True
    if code == 2:
        with open(os.path.join(args.out, "logs", "inferbench.log")) as f:
            last = [line.strip() for line in f if line.strip()][-1:]
        log(f"inferbench refused the plan: {last[0] if last else '?'} (fix it, delete {run_id_path} if present, and "
            f"call again)")
        return False
    log(f"inferbench: stopped (exit {code}); the next call resumes it")
    return False


# ---------------------------------------------------------------- tables

def host_in_compute(args):
    """{benchmark id: statement} of inferbench's finding launch.host_in_compute over the stored run (`inferbench
    explain`): a benchmark whose GPU compute followed its host's enqueue time call by call, so that its CUDA-event
    time holds host time. Empty where explain cannot say (said in the log)."""
    db = os.path.join(args.out, "results.db")
    if not os.path.exists(db):
        return {}
    try:
        answer = subprocess.run([inferbench_exe(args), "explain", "--db", db, "--run", "all", "--format", "json"],
                                capture_output=True, text=True)
    except OSError as error:
        log(f"tables: cannot run inferbench explain: {error}")
        return {}
    try:
        findings = json.loads(answer.stdout)["findings"]
    except (ValueError, KeyError, TypeError):
        log(f"tables: inferbench explain gave no findings (exit {answer.returncode}): "
            f"{(answer.stderr.strip().splitlines() or ['?'])[-1]}")
        return {}
    return {b: f["statement"] for f in findings if f["id"] == "launch.host_in_compute" for b in f["benchmarks"]}


def inferbench_rows(out, coupled=None):
    """Each cell's figures from the stored run, with `coupled` (host_in_compute()) said where the cell has it."""
    coupled = coupled or {}
    db = os.path.join(out, "results.db")
    if not os.path.exists(db):
        return {}
    by_path = {path: model for model, path in onnx_files(out).items()}
    by_spec = {spec: model for model, spec in MODELS.items()}
    rows = {}
    with sqlite3.connect(db) as con:
        for bid, model, backend, precision, batch, status, reason, load_ns in con.execute(
                "SELECT benchmark_id, model, backend, precision, batch_size, status, reason, load_ns FROM benchmarks"):
            name = by_spec.get(model) or by_path.get(model)
            if not name:
                continue
            iterations = con.execute("SELECT compute_ns, e2e_ns, enqueue_ns FROM iterations WHERE benchmark_id = ?",
                                     (bid,)).fetchall()
            # Each figure's median over the iterations that have it (a backend may leave a device time out).
            medians = [statistics.median(v) / 1e6 if v else None
                       for v in ([x for x in column if x is not None and x >= 0] for column in zip(*iterations))]
            compute_ms, e2e_ms, enqueue_ms = medians if iterations else (None, None, None)
            rows[(name, precision, batch, backend)] = {
                "status": status, "reason": reason, "load_s": load_ns / 1e9 if load_ns else None,
                "compute_ms": compute_ms, "e2e_ms": e2e_ms, "enqueue_ms": enqueue_ms, "iterations": len(iterations),
                "host_in_compute": coupled.get(bid)}
    return rows


def short(text, width=60):
    text = (text or "").replace("|", "/")
    return text if len(text) <= width else text[:width - 1] + "…"


def figure_cell(row):
    if not row:
        return "not run yet"
    if row["status"] != "ok" or row["compute_ms"] is None:
        return f"{row['status']}: {short(row['reason'])}"
    return f"{row['compute_ms']:.3f} ({row['e2e_ms']:.3f})"


HEADER = "| model | precision | batch | "


def figures_table(rows):
    lines = ["GPU compute median in ms (CUDA events around the model's run), end-to-end median in brackets (host "
             "inputs in, host outputs out: H2D + compute + D2H and the host's share).", "",
             HEADER + " | ".join(BACKENDS) + " |", "|---|---|---:|" + "---|" * len(BACKENDS)]
    for model, precision, batch in cells():
        lines.append(f"| {model} | {precision} | {batch} | " + " | ".join(
            figure_cell(rows.get((model, precision, batch, b))) for b in BACKENDS) + " |")
    return lines


def host_shares(row, ref):
    """Each side's enqueue time as a share of its GPU time (inferbench, reference), or None where one side did not
    measure it: near 100%, the GPU waited for the host's launches, and the figure measures the host (its CPU,
    Python's dispatch), not the GPU."""
    if row.get("enqueue_ms") is None or ref.get("enqueue_median_ms") is None:
        return None
    return row["enqueue_ms"] / row["compute_ms"], ref["enqueue_median_ms"] / ref["median_ms"]


def ratio_cell(row, ref, backend, name, verdicts):
    """The ratio of GPU compute medians; one past FLAG_RATIO on a like-for-like path goes into verdicts["host_bound"]
    where both sides were bound by their launches (marked "host"); else into verdicts["spread"] where plain PyTorch's
    own processes (--reference-repeats) were as far apart and inferbench's figure lies among them (marked
    "spread"); else into verdicts["host_timed"] where inferbench found its GPU compute following its host's enqueue
    time call by call (launch.host_in_compute; marked "host-timed"); else into verdicts["unexplained"] (marked ⚠)."""
    path, like_for_like = REFERENCE_OF[backend]
    if not row or row["compute_ms"] is None or path not in ref:
        return "–"
    ratio = row["compute_ms"] / ref[path]["median_ms"]
    if not like_for_like or abs(ratio - 1) <= FLAG_RATIO:
        return f"{ratio:.3f}"
    shares = host_shares(row, ref[path])
    said = f" (enqueue / GPU compute: inferbench {shares[0]:.0%}, reference {shares[1]:.0%})" if shares else ""
    runs = ref[path].get("runs_ms", [])
    if shares is not None and min(shares) >= HOST_BOUND_SHARE:
        verdict, mark = "host_bound", "host"
    elif len(runs) > 1 and runs[0] <= row["compute_ms"] <= runs[-1]:
        verdict, mark = "spread", "spread"
        said = (f" ({row['compute_ms']:.3f} ms, among plain PyTorch's {len(runs)} processes: "
                f"{', '.join(f'{r:.3f}' for r in runs)} ms, {runs[-1] / runs[0] - 1:.0%} apart)")
    elif row.get("host_in_compute"):
        verdict, mark = "host_timed", "host-timed"
        plain = ref[path].get("enqueue_correlation")
        said = (f" (inferbench: {row['host_in_compute']}; plain PyTorch's GPU time "
                f"against its enqueue time: " + (f"r = {plain:.2f}" if plain is not None else "not measured") + ")")
    else:
        verdict, mark = "unexplained", "⚠"
    verdicts[verdict].append(f"{name} {backend}: {ratio:.3f}{said}")
    return f"{ratio:.3f} {mark}"


def reference_figure(ref, path):
    """A reference path's median for the table, with its processes' range where several measured it."""
    if path not in ref:
        return "failed" if f"{path}_error" in ref else "–"
    runs = ref[path].get("runs_ms")
    spread = f" [{runs[0]:.3f}–{runs[-1]:.3f}]" if runs else ""
    return f"{ref[path]['median_ms']:.3f}{spread}"


def reference_table(rows, refs, verdicts):
    lines = [f"inferbench's GPU compute median / the reference's (the same model, precision and batch; CUDA events "
             f"around single calls, warmed up {TIMING['warmup_s']} s and measured {TIMING['duration_s']} s as the "
             f"plan's cells). torch-eager is held against eager "
             f"PyTorch, torch-compile against torch.compile(mode=\"reduce-overhead\"), torch-aoti against the same "
             f".pt2 package run by a plain C++ program (bench/aoti_reference.cpp: AOTIModelPackageLoader alone); torch "
             f"(the ONNX file on inferbench's LibTorch interpreter, no Python dispatch) and onnxruntime are other "
             f"paths, shown against eager for scale and not flagged. ⚠: more than {FLAG_RATIO:.0%} apart; host: as "
             f"far apart, both sides bound by the host's launches (enqueue >= {HOST_BOUND_SHARE:.0%} of GPU "
             f"compute); spread: as far apart, and inferbench's figure lies among those of plain PyTorch's own "
             f"processes (a path measured by several, --reference-repeats: their median, [lowest–highest]); "
             f"host-timed: as far apart, and inferbench's GPU compute followed its host's enqueue time call by call "
             f"(its finding launch.host_in_compute), so that the figure holds host time and moves with the host.", "",
             HEADER + "reference eager / compile / aoti ms | " + " | ".join(BACKENDS) + " |",
             "|---|---|---:|---|" + "---|" * len(BACKENDS)]
    failures = []
    for model, precision, batch in cells():
        name = cell_name(model, precision, batch)
        ref = refs[model].get("cells", {}).get(name, {})
        ref_text = " / ".join(reference_figure(ref, k) for k in PATHS)
        failures += [f"{name} {k}: {ref[k + '_error']}" for k in PATHS if f"{k}_error" in ref]
        cols = [ratio_cell(rows.get((model, precision, batch, b)), ref, b, name, verdicts) for b in BACKENDS]
        lines.append(f"| {model} | {precision} | {batch} | {ref_text} | " + " | ".join(cols) + " |")
    if failures:
        lines += ["", "Reference paths that failed: " + "; ".join(short(f, 160) for f in failures)]
    return lines


def load_table(out, rows):
    lines = [HEADER + " | ".join(BACKENDS) + " |", "|---|---|---:|" + "---|" * len(BACKENDS)]
    packages = []
    for model, precision, batch in cells():
        loads = [rows.get((model, precision, batch, b), {}).get("load_s") for b in BACKENDS]
        lines.append(f"| {model} | {precision} | {batch} | " +
                     " | ".join("–" if s is None else f"{s:.1f}" for s in loads) + " |")
        answer = read_json(os.path.join(out, "exports", f"pt2-{cell_name(model, precision, batch)}.json")) or {}
        packages.append(f"{cell_name(model, precision, batch)}: " + (
            f"{answer['seconds']:.1f} s{' (cache hit)' if answer.get('cache_hit') else ''}" if "seconds" in answer
            else short(answer.get("error", "not compiled yet"), 120)))
    return lines + ["", "AOTInductor package compiles (torch_export.py): " + "; ".join(packages)]


def stage_tables(args):
    rows = inferbench_rows(args.out, host_in_compute(args))
    refs = {m: merged_reference(args.out, m) for m in MODELS}
    verdicts = {"unexplained": [], "host_bound": [], "spread": [], "host_timed": []}
    lines = (["# PyTorch's deployment paths through inferbench, and plain PyTorch beside them", ""] + figures_table(rows)
             + ["", "## inferbench against plain PyTorch", ""] + reference_table(rows, refs, verdicts)
             + ["", "## Load times (s): the worker's load, torch-aoti's with its package compile (or cache lookup)", ""]
             + load_table(args.out, rows) + [""])
    if verdicts["unexplained"]:
        lines += [f"More than {FLAG_RATIO:.0%} apart, not explained: " + "; ".join(verdicts["unexplained"]), ""]
    if verdicts["host_bound"]:
        lines += [f"More than {FLAG_RATIO:.0%} apart, both sides bound by the host's launches (each figure times the "
                  f"host's dispatch, which drifts from run to run, not the GPU): " + "; ".join(verdicts["host_bound"]),
                  ""]
    if verdicts["spread"]:
        lines += [f"More than {FLAG_RATIO:.0%} apart, within plain PyTorch's own spread from process to process (the "
                  f"same script, model and inputs, timed in fresh processes minutes apart): "
                  + "; ".join(verdicts["spread"]), ""]
    if verdicts["host_timed"]:
        lines += [f"More than {FLAG_RATIO:.0%} apart, inferbench's GPU compute timed its host too (CUDA events time the "
                  f"stream, and a stream with nothing before the call waits inside the timed region for the host's "
                  f"work ahead of the launch: torch.compile's Python before its CUDA graph; its figure moves with the "
                  f"host's speed, and with what precedes the call on the stream): "
                  + "; ".join(verdicts["host_timed"]), ""]
    text = "\n".join(lines)
    with open(os.path.join(args.out, "figures.md"), "w") as f:
        f.write(text)
    write_json(os.path.join(args.out, "figures.json"),
               {"inferbench": [dict(zip(("model", "precision", "batch", "backend"), k), **v) for k, v in rows.items()],
                "reference": refs, "apart": verdicts})
    print(text)


# Each returns whether it finished; all() stops at the first that did not (a later stage needs the earlier ones).
# inferbench's plan before the reference: where the GPU time ends first, its figures are the ones kept.
STAGES = {"build": stage_build, "compile": stage_compile, "inferbench": stage_inferbench,
          "reference": stage_reference, "tables": lambda args, budget: True}


def path_counts(text):
    """--reference-repeats: "compile=3,aoti=2" -> {"compile": 3, "aoti": 2}."""
    counts = {}
    for item in filter(None, text.split(",")):
        path, _, count = item.partition("=")
        if path not in PATHS or not count.isdigit() or int(count) < 1:
            raise argparse.ArgumentTypeError(f"'{item}': use PATH=N with PATH one of {', '.join(PATHS)} and N >= 1")
        counts[path] = int(count)
    return counts


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out", help="the folder for everything this writes; the same folder resumes")
    p.add_argument("--budget-s", type=float, default=540, help="stop starting work past this many seconds")
    p.add_argument("--jobs", type=int, default=6, help="compiles at once (each gets cores/jobs compile threads)")
    p.add_argument("--min-job-s", type=float, default=45, help="do not start a compile or a model with less left")
    p.add_argument("--reference-timeout-s", type=float, default=240,
                   help="a reference process with no answer by then is killed and its cells say so (not retried)")
    p.add_argument("--reference-repeats", default="compile=3", type=path_counts,
                   help="PATH=N,...: measure a reference path in N fresh processes, minutes apart (default compile=3); "
                        "a figure past 3%% that lies among them is within plain PyTorch's own spread. '' for none")
    p.add_argument("--inferbench", help="the inferbench executable (default: dist/inferbench)")
    p.add_argument("--stages", default=",".join(STAGES),
                   help="the stages to run, in their order (default: all); e.g. --stages build,compile in the "
                        "background while the GPU measures something else, compiles using the CPUs alone")
    p.add_argument("--precisions", default=",".join(PRECISIONS),
                   help="the precisions to make, measure and plan (default: fp16,bf16), e.g. fp16 where the GPU time "
                        "allows half the table; the tables keep every cell, those not run as such. A new OUT for "
                        "another choice: a resumed plan keeps its own")
    p.add_argument("--print-plan", action="store_true", help="print the plan for the exports done so far, and stop")
    return p.parse_args()


def main():
    args = parse_args()
    args.out = os.path.abspath(args.out)
    args.precisions = tuple(p for p in args.precisions.split(",") if p)
    if not args.precisions or any(p not in PRECISIONS for p in args.precisions):
        print(f"torch_paths: --precisions takes {', '.join(PRECISIONS)} (comma-separated)", file=sys.stderr)
        return 2
    for sub in ("exports", "reference", "logs"):
        os.makedirs(os.path.join(args.out, sub), exist_ok=True)
    if args.print_plan:
        print(plan_text(args, "compile_mode"), end="")
        return 0
    wanted = [stage for stage in args.stages.split(",") if stage]
    unknown = [stage for stage in wanted if stage not in STAGES]
    if unknown:
        print(f"torch_paths: unknown stage {', '.join(unknown)}; stages: {', '.join(STAGES)}", file=sys.stderr)
        return 2
    budget = Budget(args.budget_s)
    log(f"out: {args.out}; budget {args.budget_s:.0f} s; stages {','.join(wanted)}; caches under {CACHE_HOME}")
    finished = all(STAGES[stage](args, budget) for stage in STAGES if stage in wanted)
    if "tables" in wanted:
        stage_tables(args)
    log("all done" if finished else "NOT DONE: call again with the same OUT to go on where this call stopped")
    return 0 if finished else 75


if __name__ == "__main__":
    sys.exit(main())
