#!/usr/bin/env python3
"""The torch backend beside PyTorch itself, model by model: for each corpus model (the entries of
scripts/corpus/export_corpus.py) the original nn.Module's CUDA-graph replay (CUDA events, median of
--replays replays after warm-up; on --device cpu: eager calls timed with perf_counter) and, back to
back, `inferbench run --backend torch` on the exported file (its GPU compute median on CUDA, its
end-to-end median on the CPU), with FLOPs from `inferbench models inspect --json` and from the
export's reference counter (torch.utils.flop_counter where PyTorch has it). Prints a markdown table;
a model that fails anywhere gets a row with the reason and the rest go on. A model whose output sizes
depend on the data (detection with NMS) cannot be replayed as a CUDA graph by either side: it is timed
eagerly on both (CUDA events around each call) and its row says so.

Usage (GPU host, after scripts/gpu/verify.sh OUT build):
  bench/torch_vs_pytorch.py --inferbench dist/inferbench --out OUT/torch-vs-pytorch
CPU check:
  bench/torch_vs_pytorch.py --inferbench build/release/inferbench --out /tmp/tvp --device cpu \\
      --precision fp32 --batch 1 --only 'tv_resnet18|tv_mobilenet_v3_small'
"""

import argparse
import concurrent.futures
import contextlib
import json
import multiprocessing
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "corpus"))

import torch  # noqa: E402

import export_corpus  # noqa: E402  (the model list and the exporter, shared with the corpus)

def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--inferbench", required=True, help="the inferbench executable")
    p.add_argument("--out", required=True, help="folder for the exports, the results database and logs")
    p.add_argument("--device", default="cuda:0", help="cuda:N or cpu")
    p.add_argument("--precision", default="fp16", choices=["fp16", "bf16", "fp32"])
    p.add_argument("--batch", default="1,32", help="batch sizes, comma-separated")
    p.add_argument("--only", default="", help="regular expression on model names")
    p.add_argument("--exporter", default="torchscript", choices=["torchscript", "dynamo"],
                   help="torch.onnx.export's TorchScript-based exporter (dynamo=False) or the dynamo one")
    p.add_argument("--duration", default="1s", help="inferbench's measured time per cell")
    p.add_argument("--warmup", default="0.5s", help="inferbench's warm-up per cell")
    p.add_argument("--replays", type=int, default=50, help="PyTorch replays (or calls) measured per cell")
    p.add_argument("--jobs", type=int, default=max(1, min(8, (os.cpu_count() or 2) // 2)),
                   help="parallel exports")
    p.add_argument("--json", help="also write the rows as JSON here")
    p.add_argument("--no-timing", action="store_true", help="costs (and --check) only: time neither side")
    p.add_argument("--check", action="store_true",
                   help="also compare each model's outputs with ONNX Runtime's fp32 on the CPU (`inferbench models "
                        "check`, batch 1, the bench's device and precision)")
    return p.parse_args()


# ---------------------------------------------------------------- export (parallel, cached)

def _export_worker(name, exporter, out_dir, previous):
    torch.set_num_threads(2)
    warnings.simplefilter("ignore")
    entry = next(e for e in export_corpus.entries() if e.name == name)
    with contextlib.redirect_stdout(sys.stderr):  # the dynamo exporter's progress lines: not the table's
        return export_corpus.export_one(entry, exporter, out_dir, previous)


def export_all(entries, exporter, out_dir, jobs):
    """export_corpus's records by model name; files exported before with the same settings are kept."""
    manifest_path = os.path.join(out_dir, "manifest.json")
    previous = {}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            previous = {r["name"]: r for r in json.load(f).get("models", [])}
    records = {}
    # Spawned, not forked: the dynamo exporter initialises CUDA, which a forked child of a process that
    # touched it cannot.
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(_export_worker, e.name, exporter, out_dir, previous): e.name for e in entries}
        for future in concurrent.futures.as_completed(futures):
            name = futures[future]
            try:
                records[name] = future.result()
            except Exception as e:  # noqa: BLE001 - a worker that died is one failed model
                records[name] = {"name": name, "status": "failed", "reason": f"export worker: {e}"[:300]}
    merged = dict(previous, **{r["name"]: r for r in records.values()})
    with open(manifest_path, "w") as f:
        json.dump({"torch": torch.__version__, "exporters": sorted({r.get("exporter", exporter) for r in merged.values()}),
                   "models": sorted(merged.values(), key=lambda r: r["name"])}, f, indent=1)
    return records


# ---------------------------------------------------------------- PyTorch's own time

def batched(example, batch, dtype, device):
    out = []
    for t in example:
        t = t.expand(batch, *t.shape[1:]).contiguous().to(device)
        out.append(t.to(dtype) if t.is_floating_point() else t)
    return out


def cuda_graph_ms(model, inputs, replays):
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            model(*inputs)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        model(*inputs)
    for _ in range(10):
        graph.replay()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(replays):
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def eager_cuda_ms(model, inputs, replays):
    for _ in range(3):
        model(*inputs)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(replays):
        start.record()
        model(*inputs)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def eager_cpu_ms(model, inputs, replays):
    for _ in range(2):
        model(*inputs)
    times = []
    for _ in range(replays):
        begin = time.perf_counter()
        model(*inputs)
        times.append((time.perf_counter() - begin) * 1e3)
    return statistics.median(times)


def pytorch_times(entry, batches, args):
    """{batch: ms or reason}. The module is built as the export built it (same seed)."""
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[args.precision]
    device = torch.device(args.device)
    torch.manual_seed(0)
    model = entry.build()
    if entry.wrapper is not None:
        model = entry.wrapper(model)
    model = model.eval().to(device=device, dtype=dtype)
    example = entry.example()
    result = {}
    for batch in batches:
        if batch > 1 and not entry.dynamic_batch:
            result[batch] = "fixed batch"
            continue
        try:
            with torch.inference_mode():
                inputs = batched(example, batch, dtype, device)
                if device.type == "cuda":
                    timer = cuda_graph_ms if entry.graphable else eager_cuda_ms
                    result[batch] = timer(model, inputs, args.replays)
                else:
                    result[batch] = eager_cpu_ms(model, inputs, max(3, args.replays // 10))
        except Exception as e:  # noqa: BLE001 - recorded per cell
            result[batch] = f"pytorch: {str(e).splitlines()[0][:160]}"
        finally:
            if device.type == "cuda":
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
    return result


# ---------------------------------------------------------------- inferbench's time and FLOPs

def _tool(cmd, timeout):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, 124, "", f"timed out after {timeout} s")


def _last_line(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else "no output"


def inferbench_flops(exe, path):
    """(2 x MACs, unknown node count, data-dependent node count) of one inference at batch 1, or
    (None, reason, None): the reference's
    convention (convolutions, matrix products and attention), not inspect's total, which adds every
    element-wise op."""
    p = _tool([exe, "models", "inspect", path, "--json", "--batch", "1"], 300)
    if p.returncode != 0:
        return None, _last_line(p.stderr), None
    totals = json.loads(p.stdout)["totals"]
    return 2 * totals["macs"], totals["unknown_nodes"], totals.get("data_dependent_nodes", 0)


def inferbench_times(exe, path, name, batches, args, graph):
    """({batch: ms or reason}, fusion line) from `inferbench run`, then `inferbench summary --json`."""
    db = os.path.join(args.out, "db", f"{name}.db")
    os.makedirs(os.path.dirname(db), exist_ok=True)
    if os.path.exists(db):
        os.remove(db)
    cuda = args.device.startswith("cuda")
    cmd = [exe, "run", "--db", db, "--name", f"torch-vs-pytorch {name}", "--backend", "torch", "--model", path,
           "--device", args.device, "--precision", args.precision, "--batch", ",".join(map(str, batches)),
           "--duration", args.duration, "--warmup", args.warmup, "--quiet", "--set", "telemetry_enabled=false"]
    if cuda:
        cmd += ["--set", f"backend_options.torch.cuda_graph={'true' if graph else 'false'}"]
    else:
        cmd += ["--min-iterations", "3"]
    run = _tool(cmd, 600)
    with open(os.path.join(args.out, "db", f"{name}.log"), "w") as f:
        f.write(" ".join(cmd) + "\n" + run.stderr)
    summary = _tool([exe, "summary", "--db", db, "--json"], 60)
    times = {b: f"inferbench: {_last_line(run.stderr)}" for b in batches}
    if summary.returncode == 0 and summary.stdout.strip():
        for row in json.loads(summary.stdout)["rows"]:
            if row["model"] != path or row["batch_size"] not in times:
                continue
            # The summary's JSON leaves out a column that has no value (a failed cell has no times).
            value = row.get("gpu_compute_p50_ms" if cuda else "p50_ms")
            ok = row.get("status") == "ok" and value is not None
            times[row["batch_size"]] = value if ok else f"inferbench {row.get('status')}: {(row.get('note') or '')[:160]}"
    return times, fusion_line(db)


def output_check(exe, path, args):
    """`inferbench models check` of the file: (largest relative error, agree) or (None, reason)."""
    p = _tool([exe, "models", "check", path, "--device", args.device, "--precision", args.precision, "--json"], 600)
    if p.returncode not in (0, 1) or not p.stdout.strip():
        return None, _last_line(p.stderr)
    doc = json.loads(p.stdout)
    problems = [r["problem"] for r in doc["rows"] if r.get("problem")]
    # Elements NaN or infinite on one side only (an fp16 overflow): the error over the finite ones says nothing.
    mismatched = sum(int(r.get("mismatched", 0)) for r in doc["rows"])
    if mismatched:
        problems.append(f"{mismatched} elements NaN/inf on one side only")
    worst = max((r.get("relative_error", 0) for r in doc["rows"]), default=0)
    if doc["agree"]:
        return worst, "agree"
    return (None if mismatched else worst), ("; ".join(problems) or "differ")


def fusion_line(db):
    """The torch backend's "fused ..." line of the first cell: the worker's output is kept with the cell."""
    try:
        with contextlib.closing(sqlite3.connect(db)) as c:
            tails = [r[0] or "" for r in c.execute("SELECT stderr_tail FROM benchmarks ORDER BY benchmark_id")]
    except sqlite3.Error as e:
        return f"(results database: {e})"
    found = [m.group(1) for t in tails if (m := re.search(r"^torch: .*?: (fused .*)$", t, re.M))]
    return found[0] if found else "no fusions"


# ---------------------------------------------------------------- one model, the table

def export_reason(text):
    """The line that says why: the exporter's own summary when it wrote one, else the first line."""
    summary = re.search(r"## Exception summary\s+(.+)", text)
    if summary:
        return summary.group(1)[:200]
    # A traceback's last "...Error: message" line, else its last line.
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    errors = [line for line in lines if re.match(r"^[A-Za-z_][\w.]*: ", line)]
    return (errors[-1] if errors else lines[-1] if lines else "no reason given")[:200]


def measure(entry, record, batches, args):
    row = {"model": entry.name, "family": entry.family, "export": record.get("status"), "reasons": [],
           "graph": entry.graphable,
           "inferbench_ms": {}, "pytorch_ms": {}, "fusions": "", "inferbench_flops": None, "unknown_nodes": None,
           "reference_flops": None}
    if record.get("status") != "ok":
        row["reasons"].append(f"export {record.get('status')}: {export_reason(record.get('reason', ''))}")
        return row
    path = os.path.join(args.out, record["file"])
    row["reference_flops"] = record["reference"]["flops_per_inference"]
    row["reference_source"] = record["reference"]["source"]
    if args.no_timing:
        batches = []
    try:
        row["pytorch_ms"] = pytorch_times(entry, batches, args) if batches else {}
    except Exception as e:  # noqa: BLE001 - building or moving the module failed: the model's row says so
        row["pytorch_ms"] = {b: f"pytorch: {str(e).splitlines()[0][:160]}" for b in batches}
    if args.device.startswith("cuda"):
        torch.cuda.empty_cache()  # the GPU's memory back for the inferbench process
    # A file exported with a fixed batch runs at that batch only (inferbench refuses the others).
    runnable = batches if entry.dynamic_batch else [b for b in batches if b == 1]
    row["inferbench_ms"], row["fusions"] = (inferbench_times(args.inferbench, path, record["name"], runnable, args,
                                                             entry.graphable) if runnable else ({}, ""))
    row["inferbench_ms"].update({b: "fixed batch" for b in batches if b not in runnable})
    if args.check:
        row["check_error"], row["check"] = output_check(args.inferbench, path, args)
    flops, unknown, data_dependent = inferbench_flops(args.inferbench, path)
    if flops is None:
        row["reasons"].append(f"inspect: {unknown}")
    row["inferbench_flops"], row["unknown_nodes"], row["data_dependent_nodes"] = flops, unknown, data_dependent
    for side in ("pytorch_ms", "inferbench_ms"):
        row["reasons"] += [f"b{b}: {v}" for b, v in row[side].items() if isinstance(v, str) and v != "fixed batch"]
    return row


def _ms(value):
    return f"{value:.2f}" if isinstance(value, (int, float)) else "-"


def _gflop(row):
    flops = row["inferbench_flops"]
    if flops is None:
        return "-"
    shown = f"{flops / 1e9:.2f}"
    if row["unknown_nodes"]:
        return f">={shown} ({row['unknown_nodes']} nodes unknown)"
    # Sizes the data decides (NMS, RoiAlign's boxes) taken at their largest: an upper bound.
    return f"<={shown}" if row.get("data_dependent_nodes") else shown


def _check(row):
    """"agree, 3.1e-03" (largest relative error), or what stopped the comparison."""
    error, verdict = row.get("check_error"), row.get("check", "-")
    return f"{verdict}, {error:.1e}" if isinstance(error, (int, float)) else verdict


def ratio(row, batch):
    ours, theirs = row["inferbench_ms"].get(batch), row["pytorch_ms"].get(batch)
    both = isinstance(ours, (int, float)) and isinstance(theirs, (int, float)) and theirs > 0
    return ours / theirs if both else None


def markdown(rows, batches, args):
    cuda = args.device.startswith("cuda")
    theirs = "PyTorch CUDA graph" if cuda else "PyTorch eager"
    ours = "inferbench GPU compute" if cuda else "inferbench p50"
    per = " / ".join(f"b{b}" for b in batches)
    lines = [f"| model | status | {ours} ({per}) ms | {theirs} ({per}) ms | ratio ({per}) | "
             f"2 x MACs G inferbench | 2 x MACs G reference | fusions |" + (" outputs vs ONNX Runtime fp32 |" if args.check else ""),
             "| --- | --- | --- | --- | --- | --- | --- | --- |" + (" --- |" if args.check else "")]
    for row in rows:
        status = "ok" if not row["reasons"] else "; ".join(row["reasons"])
        if cuda and not row.get("graph", True):
            status += " (eager on both sides: output sizes depend on the data)"
        ratios = " / ".join(f"{r:.2f}" if (r := ratio(row, b)) is not None else "-" for b in batches)
        reference = f"{row['reference_flops'] / 1e9:.2f}" if row["reference_flops"] else "-"
        lines.append(f"| {row['model']} | {status} | {' / '.join(_ms(row['inferbench_ms'].get(b)) for b in batches)} | "
                     f"{' / '.join(_ms(row['pytorch_ms'].get(b)) for b in batches)} | {ratios} | {_gflop(row)} | "
                     f"{reference} | {row['fusions']} |" + (f" {_check(row)} |" if args.check else ""))
    cells = [r for row in rows for b in batches if (r := ratio(row, b)) is not None]
    within = sum(1 for r in cells if r <= 1.10)
    lines.append("")
    lines.append(f"{within} of {len(cells)} measured cells within 1.10x of PyTorch; {args.exporter} exporter, "
                 f"{args.precision}, {args.device}, "
                 f"torch {torch.__version__}, inferbench cells of {args.duration} after {args.warmup} warm-up, "
                 f"PyTorch median of {args.replays} {'replays' if cuda else 'calls (a tenth of --replays, >= 3)'}.")
    if any(row.get("data_dependent_nodes") for row in rows):
        lines.append("<=: an upper bound, sizes the data decides (NMS, RoiAlign's boxes) taken at their largest.")
    if args.check:
        lines.append("Outputs: `inferbench models check` at batch 1, the largest max |ours - ORT| / max(1, max |ORT|) "
                     f"over the outputs, against ONNX Runtime fp32 on the CPU (tolerance for {args.precision}: "
                     "fp32 2e-3, fp16 2e-2, bf16 8e-2).")
    return "\n".join(lines)


def main():
    args = parse_args()
    batches = [int(b) for b in args.batch.split(",") if b]
    entries = [e for e in export_corpus.entries() if re.search(args.only, e.name)]
    if not entries:
        print(f"torch_vs_pytorch.py: no corpus model matches --only '{args.only}'", file=sys.stderr)
        return 2
    if not os.access(args.inferbench, os.X_OK):
        print(f"torch_vs_pytorch.py: --inferbench {args.inferbench} is not an executable; build it or give its path",
              file=sys.stderr)
        return 2
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("torch_vs_pytorch.py: this PyTorch has no CUDA device; use --device cpu", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    warnings.simplefilter("ignore")
    began = time.monotonic()
    records = export_all(entries, args.exporter, args.out, args.jobs)
    print(f"exported {len(records)} models in {time.monotonic() - began:.0f} s", file=sys.stderr)
    rows = []
    for entry in entries:
        rows.append(measure(entry, records[entry.name], batches, args))
        print(f"{time.monotonic() - began:6.0f} s  {entry.name}: {rows[-1]['reasons'] or 'ok'}", file=sys.stderr)
        if args.json:  # after every model, so a run stopped early keeps what it measured
            with open(args.json, "w") as f:
                json.dump(rows, f, indent=1, default=str)
    print(markdown(rows, batches, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
