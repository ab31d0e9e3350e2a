#!/usr/bin/env python3
"""The plain-PyTorch side of scripts/gpu/torch_paths.py, and what both sides share: the models (built as their
specs name them, random weights, no hub access), inputs as the exporter declared them, CUDA-event timing of single
calls (median of 50 after 10 warm-up calls), the torch.compile warm-ups that fill Inductor's cache, and one model's
reference figures (eager, torch.compile(mode="reduce-overhead"), the same .pt2 package loaded in Python).
Started by torch_paths.py in processes of their own:
    torch_paths_reference.py OUT warm MODEL PRECISION BATCH      one JSON line
    torch_paths_reference.py OUT reference MODEL                 one JSON line: every precision and batch
"""

import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# name in the tables -> the model spec every PyTorch path reads.
MODELS = {"resnet50": "torchvision:resnet50", "bert-large": "hf:bert-large-uncased",
          "convnext-t": "timm:convnext_tiny", "vit-b16": "torchvision:vit_b_16"}
PRECISIONS = ("fp16", "bf16")
BATCHES = (1, 32)


def cells():
    return [(m, p, b) for m in MODELS for p in PRECISIONS for b in BATCHES]


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


def build_model(torch, model):
    """The nn.Module of `model` with random weights, as the specs name it (no hub access)."""
    if model == "resnet50":
        import torchvision
        return torchvision.models.resnet50(weights=None)
    if model == "vit-b16":
        import torchvision
        return torchvision.models.vit_b_16(weights=None)
    if model == "convnext-t":
        import timm
        return timm.create_model("convnext_tiny", pretrained=False)
    import transformers
    config_path = os.path.join(ROOT, "data", "hf_configs", "bert-large-uncased.json")
    if os.path.exists(config_path):
        config = transformers.BertConfig.from_json_file(config_path)
    else:  # the published bert-large-uncased configuration
        config = transformers.BertConfig(vocab_size=30522, hidden_size=1024, num_hidden_layers=24,
                                         num_attention_heads=16, intermediate_size=4096, max_position_embeddings=512)
    return transformers.BertModel(config)


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


def call(fn, inputs, positional=False):
    """An nn.Module by its inputs' names (x, input_ids, attention_mask, ...), else in the declared order."""
    if positional:
        return fn(*inputs.values())
    try:
        return fn(**inputs)
    except TypeError:
        return fn(*inputs.values())


def time_calls(torch, fn, inputs, positional=False, warmup=10, iterations=50):
    """Median, p10 and p90 of CUDA-event times around single calls, in ms."""
    for _ in range(warmup):
        call(fn, inputs, positional)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(iterations):
        start.record()
        call(fn, inputs, positional)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return {"median_ms": statistics.median(times), "p10_ms": times[len(times) // 10],
            "p90_ms": times[(9 * len(times)) // 10], "calls": len(times)}


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
    return build_model(torch, model).eval().to(device="cuda", dtype=dtype)


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


def reference_cell(torch, out, module, model, precision, batch):
    """Eager, torch.compile(mode="reduce-overhead") and the package loaded in Python; an error per path."""
    row = {}
    inputs = make_inputs(torch, declared_inputs(out, model, precision, batch), "cuda")
    package = read_json(os.path.join(out, "exports", f"pt2-{cell_name(model, precision, batch)}.json")) or {}
    paths = {"eager": lambda: (module, False), "compile": lambda: (torch.compile(module, mode="reduce-overhead"), False),
             "aoti": lambda: (torch._inductor.aoti_load_package(package["path"]), True)}
    for path, make in paths.items():
        try:
            if path == "aoti" and "path" not in package:
                raise RuntimeError(package.get("error", "no package"))
            with torch.inference_mode():
                began = time.monotonic()
                fn, positional = make()
                call(fn, inputs, positional)
                row[f"{path}_first_call_s"] = round(time.monotonic() - began, 2)
                row[path] = time_calls(torch, fn, inputs, positional)
        except Exception as error:  # noqa: BLE001 - one path's failure is that path's result
            row[f"{path}_error"] = f"{type(error).__name__}: {str(error).splitlines()[0][:200] if str(error) else ''}"
        torch.cuda.empty_cache()
    return row


def reference(out, model):
    """One model's plain-PyTorch times for every precision and batch: eager, compiled, the AOTI package."""
    import torch
    results = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(0), "cells": {}}
    for precision in PRECISIONS:
        module = prepared(torch, model, precision)
        for batch in BATCHES:
            name = cell_name(model, precision, batch)
            try:
                row = reference_cell(torch, out, module, model, precision, batch)
            except RuntimeError as error:
                row = {"error": str(error)}
            results["cells"][name] = row
            print(f"reference {name}: " + ", ".join(
                f"{k} {row[k]['median_ms']:.3f} ms" if k in row else f"{k} {row.get(k + '_error', row.get('error'))}"
                for k in ("eager", "compile", "aoti")), file=sys.stderr)
        del module
        torch.cuda.empty_cache()
    print(json.dumps(results))
    return 0


def main():
    out, command = os.path.abspath(sys.argv[1]), sys.argv[2]
    if command == "warm":
        return warm(out, sys.argv[3], sys.argv[4], int(sys.argv[5]))
    if command == "reference":
        return reference(out, sys.argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
