#!/usr/bin/env python3
"""The plain-PyTorch side of scripts/gpu/torch_paths.py, and what both sides share: the models (built as their
specs name them, random weights, no hub access), inputs as the exporter declared them, CUDA-event timing of single
calls (warmed up and measured for as long as inferbench's plan warms up and measures a cell: TIMING), the
torch.compile warm-ups that fill Inductor's cache, and one model's reference figures on the two Python paths (eager,
torch.compile(mode="reduce-overhead"); the AOTI package's reference is bench/aoti_reference.cpp, in C++). A reference process writes each step to stderr and, through faulthandler, the
Python stack of a crash, so that a process that dies says where.
Started by torch_paths.py in processes of their own:
    torch_paths_reference.py OUT warm MODEL PRECISION BATCH      one JSON line
    torch_paths_reference.py OUT reference MODEL PATH PRECISION [BATCH]
                                                                 one JSON line: PATH (eager, compile) at
                                                                 PRECISION, every batch or BATCH alone
and by hand, to see what feeding a compiled model from the host does to its CUDA-event time:
    torch_paths_reference.py OUT feeds MODEL PRECISION BATCH     one JSON line: torch.compile(mode="reduce-overhead")
                                                                 timed with its inputs resident on the GPU and with
                                                                 them copied from pinned host memory before each call
                                                                 (as inferbench's runner feeds it), alternately, twice
"""

import faulthandler
import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# name in the tables -> the model spec every PyTorch path reads.
MODELS = {"resnet50": "torchvision:resnet50", "bert-large": "hf:bert-large-uncased",
          "convnext-t": "timm:convnext_tiny", "vit-b16": "torchvision:vit_b_16"}
# Options every path gets (runners, exporter, reference), so that all run one model: MLPerf's BERT-large is the
# question-answering model (its config's class is the masked-LM one). Other specs ignore it. Text models take 384
# tokens, the runners' and the exporter's default.
OPTIONS = {"hf_class": "BertForQuestionAnswering"}
PRECISIONS = ("fp16", "bf16")
PATHS = ("eager", "compile", "aoti")  # the reference's paths: the first two here, aoti in bench/aoti_reference.cpp
PYTHON_PATHS = PATHS[:2]
BATCHES = (1, 32)
# How long both sides warm up and measure one cell: inferbench's plan (torch_paths.py) and the references (here and
# bench/aoti_reference.cpp). A host-bound call (eager) drifts over seconds on a VM: the same process on the H200 gave
# a median of 6.5 ms over 50 calls and 3.3 ms over the 600 after them, so a reference of a few calls is no reference.
TIMING = {"warmup_s": 0.5, "warmup_calls": 5, "duration_s": 1.5, "min_calls": 20}


def cells(precisions=PRECISIONS):
    return [(m, p, b) for m in MODELS for p in precisions for b in BATCHES]


def cell_name(model, precision, batch):
    return f"{model}-{precision}-b{batch}"


def last_json(text):
    for line in reversed((text or "").splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


def write_json(path, obj):
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f, indent=1)
    os.replace(path + ".tmp", path)


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def build_model(model):
    """The nn.Module of `model` with random weights, built by runners/model_specs.py from the same spec and options
    as inferbench's runners and exporter (no hub access)."""
    sys.path.insert(0, os.path.join(ROOT, "runners"))
    import model_specs  # pylint: disable=import-outside-toplevel
    return model_specs.resolve(model_specs.parse_spec(MODELS[model]), 0, dict(OPTIONS)).module


def make_inputs(torch, declared, device):
    """Inputs as the exporter declared them for the package (names, dtypes, shapes), random."""
    tensors = {}
    for item in declared:
        dtype = getattr(torch, item["dtype"])
        shape = item["shape"]
        if dtype.is_floating_point:
            tensors[item["name"]] = torch.randn(shape, device=device).to(dtype)
        elif "mask" in item["name"]:
            tensors[item["name"]] = torch.ones(shape, dtype=dtype, device=device)
        else:
            tensors[item["name"]] = torch.randint(0, 2 if "type" in item["name"] else 1000, shape, dtype=dtype,
                                                  device=device)
    return tensors


def call(fn, inputs):
    """One call with the inputs in their declared order (the order of the module's forward arguments), as
    inferbench's runners and the AOTI loader take them. Never by name first: a module whose argument is named
    otherwise (torchvision's forward(x) against the input "input") would raise and retry inside the timed call."""
    return fn(*inputs.values())


def time_calls(torch, fn, inputs, timing=None, feed=None):
    """Median, p10 and p90 of CUDA-event times around single calls, in ms, after a warm-up, each phase as long as
    `timing` (TIMING) says, in calls and seconds alike; the median of the host's time to enqueue a call (from the
    first event's record to the second's, as inferbench's runners measure enqueue_ns): where it is close to the GPU
    time, the call is bound by the host's launches, not by the GPU; and the correlation of the two over the calls
    (inferbench's finding launch.host_in_compute reads the same from its iterations). `feed()`, where given, gives
    each call's inputs before the first event, outside the timed region (else every call takes `inputs`)."""
    timing = timing or TIMING
    feed = feed or (lambda: inputs)
    warming, calls = time.perf_counter(), 0
    while calls < timing["warmup_calls"] or time.perf_counter() - warming < timing["warmup_s"]:
        call(fn, feed())
        calls += 1
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times, enqueue = [], []
    measuring = time.perf_counter()
    while len(times) < timing["min_calls"] or time.perf_counter() - measuring < timing["duration_s"]:
        given = feed()
        began = time.perf_counter()
        start.record()
        call(fn, given)
        end.record()
        enqueue.append((time.perf_counter() - began) * 1e3)
        end.synchronize()
        times.append(start.elapsed_time(end))
    correlation = statistics.correlation(times, enqueue) if len(set(times)) > 1 and len(set(enqueue)) > 1 else None
    times.sort()
    return {"median_ms": statistics.median(times), "p10_ms": times[len(times) // 10],
            "p90_ms": times[(9 * len(times)) // 10], "enqueue_median_ms": statistics.median(enqueue),
            "enqueue_correlation": correlation, "calls": len(times)}


def declared_inputs(out, model, precision, batch):
    """The inputs the exporter declared for the cell's package; else its ONNX file's, at the cell's batch and
    precision (so that eager and compiled references do not depend on the package). Raises RuntimeError."""
    answer = read_json(os.path.join(out, "exports", f"pt2-{cell_name(model, precision, batch)}.json")) or {}
    if answer.get("inputs"):
        return answer["inputs"]
    onnx = read_json(os.path.join(out, "exports", f"onnx-{model}.json")) or {}
    if not onnx.get("inputs"):
        raise RuntimeError(f"no inputs declared for {cell_name(model, precision, batch)}: "
                           f"{answer.get('error') or onnx.get('error') or 'not exported yet'}")
    inputs = []
    for item in onnx["inputs"]:
        floating = item["dtype"].startswith("float")
        shape = [batch if d == 0 else (n if isinstance(n, int) else 1) for d, n in enumerate(item["shape"])]
        inputs.append({"name": item["name"], "shape": shape,
                       "dtype": {"fp16": "float16", "bf16": "bfloat16"}[precision] if floating else item["dtype"]})
    return inputs


def prepared(torch, model, precision):
    torch.backends.cudnn.benchmark = True
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[precision]
    return build_model(model).eval().to(device="cuda", dtype=dtype)


def warm(out, model, precision, batch):
    """Compiles `model` with torch.compile(mode="reduce-overhead") as the reference does, filling Inductor's cache."""
    import torch
    began = time.monotonic()
    try:
        inputs = make_inputs(torch, declared_inputs(out, model, precision, batch), "cuda")
    except RuntimeError as error:
        print(json.dumps({"error": str(error)}))
        return 1
    with torch.inference_mode():
        compiled = torch.compile(prepared(torch, model, precision), mode="reduce-overhead")
        for _ in range(3):
            call(compiled, inputs)
    torch.cuda.synchronize()
    print(json.dumps({"warmed": cell_name(model, precision, batch), "seconds": round(time.monotonic() - began, 1)}))
    return 0


def step(text):
    """A step of a reference process on stderr (its log), flushed: where a crash comes, the last one says where."""
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def reference_cell(torch, out, module, model, precision, batch, path):
    """One path's CUDA-event times for one cell, or that path's error: eager (the module) or compile
    (torch.compile(mode="reduce-overhead") of it, static shapes as the runner's own process compiles them)."""
    row = {}
    try:
        inputs = make_inputs(torch, declared_inputs(out, model, precision, batch), "cuda")
        if path == "compile":
            torch._dynamo.reset()  # no shapes from the cell before: each cell compiles for its own, as in the runner
            make = lambda: torch.compile(module, mode="reduce-overhead")  # noqa: E731
        else:
            make = lambda: module  # noqa: E731
        with torch.inference_mode():
            began = time.monotonic()
            step(f"{cell_name(model, precision, batch)} {path}: load")
            fn = make()
            step(f"{cell_name(model, precision, batch)} {path}: first call")
            call(fn, inputs)
            row[f"{path}_first_call_s"] = round(time.monotonic() - began, 2)
            step(f"{cell_name(model, precision, batch)} {path}: timing")
            row[path] = time_calls(torch, fn, inputs)
    except Exception as error:  # noqa: BLE001 - the path's failure is its result
        row[f"{path}_error"] = f"{type(error).__name__}: {str(error).splitlines()[0][:200] if str(error) else ''}"
    torch.cuda.empty_cache()
    return row


def reference(out, model, path, precision, batch=None):
    """Plain-PyTorch times of one path for `model` at `precision`, every batch (or `batch` alone), as one JSON line:
    {"cells": {CELL: {PATH: {...}} or {PATH_error: ...}}}. Paths run in processes of their own, so that one that
    crashes the interpreter takes no other path's figures with it."""
    import torch
    results = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(0), "path": path, "cells": {}}
    module = prepared(torch, model, precision)
    for b in BATCHES if batch is None else (batch,):
        name = cell_name(model, precision, b)
        row = reference_cell(torch, out, module, model, precision, b, path)
        results["cells"][name] = row
        print(f"reference {name} {path}: " + (f"{row[path]['median_ms']:.3f} ms" if path in row
                                              else row[f"{path}_error"]), file=sys.stderr)
    print(json.dumps(results))
    return 0


def feeds(out, model, precision, batch):
    """torch.compile(mode="reduce-overhead") of `model` timed with its inputs resident on the GPU (the reference's
    way) and copied from pinned host memory before each call (the runner's), alternately, twice, in one process: a
    difference that follows the feeding, not the process, is the feeding's."""
    import torch
    inputs = make_inputs(torch, declared_inputs(out, model, precision, batch), "cuda")
    host = {name: x.cpu().pin_memory() for name, x in inputs.items()}
    fed = lambda: {name: x.to("cuda", non_blocking=True) for name, x in host.items()}  # noqa: E731
    results = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(0),
               "cell": cell_name(model, precision, batch), "timings": []}
    with torch.inference_mode():
        compiled = torch.compile(prepared(torch, model, precision), mode="reduce-overhead")
        call(compiled, inputs)
        for way in ("resident", "host", "resident", "host"):
            row = time_calls(torch, compiled, inputs, feed=fed if way == "host" else None)
            results["timings"].append(dict(row, inputs=way))
            step(f"{results['cell']} {way}: {row['median_ms']:.3f} ms, enqueue {row['enqueue_median_ms']:.3f} ms")
    print(json.dumps(results))
    return 0


def main():
    faulthandler.enable()  # a crash's Python stack goes to stderr, the process's log
    out, command = os.path.abspath(sys.argv[1]), sys.argv[2]
    if command == "warm":
        return warm(out, sys.argv[3], sys.argv[4], int(sys.argv[5]))
    if command == "feeds" and len(sys.argv) == 6:
        return feeds(out, sys.argv[3], sys.argv[4], int(sys.argv[5]))
    if command == "reference" and len(sys.argv) in (6, 7) and sys.argv[4] in PYTHON_PATHS:
        return reference(out, sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]) if len(sys.argv) == 7 else None)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    # The answer is out: end as inferbench's runners do, without PyTorch's teardown at exit, which torch_paths.py
    # would only wait through.
    sys.path.insert(0, os.path.join(ROOT, "runners"))
    import runner_protocol  # noqa: E402 pylint: disable=wrong-import-position
    runner_protocol.end_after_done(main())
