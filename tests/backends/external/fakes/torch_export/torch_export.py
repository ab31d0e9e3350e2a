#!/usr/bin/env python3
"""A stand-in for runners/torch_export.py that obeys its contract (docs/architecture.md) without PyTorch, for
the C++ tests of the exporter's client and of the torch-aoti backend. It "compiles" a fake package that the
fake AOTIModelPackageLoader (tests/backends/torch_aoti/fake_aoti) runs: text, first line `fake-pt2`, then
`device D`, `scale S` (the output is the input times S), `input NAME DTYPE DIM,DIM,...` (? for a dynamic
dimension), and optionally `fail_load MESSAGE` or `fail_run MESSAGE`.

Specs it knows: any zoo name (resnet50, mobilenet, bert, ...) and fake:ok make a package of one input x of
[batch, 4]; a .pt2 file is returned as it is where it is a fake package; and scenarios:
  fake:unsupported  exit 3, this PyTorch cannot          fake:raises     exit 1, the factory raised (traceback)
  fake:oom          killed by SIGKILL, as by the OOM killer  fake:slow    sleeps $FAKE_SLOW_SECONDS (60)
  fake:badjson      exit 0 with a line that is not JSON  fake:noinputs   a package without inputs
  fake:foreign      compiled by PyTorch 2.10.0           fake:load-fails / fake:run-fails   a package that fails
  fake:silent-fail  exit 1 without its error line
$FAKE_SCENARIOS ("mobilenet=fake:unsupported,bert=fake:raises") plays a scenario for a zoo name, for plans,
which take only zoo names and files here. Anything else is an unknown library (exit 2). The cache is real: a key of every argument, the
file written under a temporary name and renamed, the key beside it as JSON. $FAKE_COMPILE_SECONDS (0.3) is
how long a compile takes; $FAKE_TORCH_VERSION (1.13.0+fake) the PyTorch it claims; with $FAKE_REQUIRE_EXE
set, any other interpreter answers exit 3 as a python3 without PyTorch 2.x would; $FAKE_EXPORT_LOG, if set,
gets one line per call with the arguments.
"""

import argparse
import hashlib
import json
import os
import signal
import sys
import time

ZOO = {"resnet50", "mobilenet", "ssd-mobilenet", "ssd-resnet34", "3d-unet", "bert", "yolov3"}
DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}


def answer(obj, code):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()
    sys.exit(code)


def fail(code, error, traceback_tail=()):
    answer({"error": error, "traceback_tail": list(traceback_tail)}, code)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--spec", required=True)
    p.add_argument("--format", required=True, choices=["pt2", "torchscript", "onnx"])
    p.add_argument("--precision", required=True, choices=["fp32", "fp16", "bf16"])
    p.add_argument("--batch", required=True)
    p.add_argument("--device", required=True)
    p.add_argument("--cache-dir", required=True)
    p.add_argument("--seq-len", type=int, default=0)
    p.add_argument("--option", action="append", default=[])
    return p.parse_args()


def package_text(args, spec):
    dim0 = "?" if args.batch == "dynamic" else args.batch
    lines = ["fake-pt2", "device " + args.device.split(":")[0], "scale 2"]
    if spec != "fake:noinputs":
        lines.append("input x {} {},4".format(DTYPES[args.precision], dim0))
    if spec == "fake:load-fails":
        lines.append("fail_load CUDA driver error: device kernel image is invalid")
    if spec == "fake:run-fails":
        lines.append("fail_run CUDA error: no kernel image is available for execution on the device")
    return "\n".join(lines) + "\n"


def inputs_of(text):
    inputs = []
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] == "input":
            dims = [None if d == "?" else int(d) for d in parts[3].split(",")]
            inputs.append({"name": parts[1], "dtype": parts[2], "shape": dims})
    return inputs


def check_scenario(spec):
    if os.environ.get("FAKE_REQUIRE_EXE") and sys.executable != os.environ["FAKE_REQUIRE_EXE"]:
        fail(3, "PyTorch is not importable by " + sys.executable)
    if spec == "fake:unsupported":
        fail(3, "PyTorch 1.13.0 has no torch._inductor.aoti_compile_and_package; .pt2 packages need PyTorch >= 2.6")
    if spec == "fake:raises":
        fail(1, "fake:raises: the factory raised RuntimeError: out of memory; fix the factory",
             ['  File "factory.py", line 3, in make_model', "RuntimeError: out of memory"])
    if spec == "fake:silent-fail":
        sys.stderr.write("something went wrong before the answer\n")
        sys.exit(1)
    if spec == "fake:oom":
        os.kill(os.getpid(), signal.SIGKILL)
    if spec == "fake:slow":
        time.sleep(float(os.environ.get("FAKE_SLOW_SECONDS", "60")))
    if spec == "fake:badjson":
        sys.stdout.write("compiled, honestly\n")
        sys.exit(0)
    known = spec in ZOO or spec.startswith("fake:") or spec.endswith(".pt2")
    if not known:
        fail(2, "unknown library '{}' in spec '{}'; use torchvision:, timm:, hf:, python:FILE.py:FACTORY or a zoo "
                "name".format(spec.split(":")[0], spec), ["ValueError: unknown library"])


def user_package(args, version):
    try:
        with open(args.spec) as f:
            text = f.read()
    except OSError as e:
        fail(2, "cannot read {}: {}".format(args.spec, e.strerror))
    if not text.startswith("fake-pt2"):
        fail(2, "{} is not a .pt2 package this PyTorch can load; compile it with this PyTorch".format(args.spec))
    answer({"path": os.path.abspath(args.spec), "cache_hit": True, "seconds": 0.0, "torch_version": version,
            "key": {"spec": args.spec}, "inputs": inputs_of(text)}, 0)


def scenario_of(spec):
    for item in filter(None, os.environ.get("FAKE_SCENARIOS", "").split(",")):
        name, _, scenario = item.partition("=")
        if name == spec:
            return scenario
    return spec


def main():
    args = parse_args()
    began = time.monotonic()
    if os.environ.get("FAKE_EXPORT_LOG"):
        with open(os.environ["FAKE_EXPORT_LOG"], "a") as log:
            log.write(" ".join(sys.argv[1:]) + "\n")
    scenario = scenario_of(args.spec)
    check_scenario(scenario)
    version = "2.10.0+cu130" if scenario == "fake:foreign" else os.environ.get("FAKE_TORCH_VERSION", "1.13.0+fake")
    if args.spec.endswith(".pt2"):
        user_package(args, version)
    key = {"spec": args.spec, "torch_version": version, "format": args.format, "precision": args.precision,
           "batch": args.batch, "device": args.device, "seq_len": args.seq_len, "options": sorted(args.option)}
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    os.makedirs(args.cache_dir, exist_ok=True)
    path = os.path.abspath(os.path.join(args.cache_dir, "fake-{}.pt2".format(digest)))
    hit = False
    try:
        with open(path + ".json") as f:
            hit = json.load(f) == key and os.path.getsize(path) > 0
    except (OSError, ValueError):
        hit = False
    if not hit:
        time.sleep(float(os.environ.get("FAKE_COMPILE_SECONDS", "0.3")))
        for target, text in ((path, package_text(args, scenario)), (path + ".json", json.dumps(key))):
            with open(target + ".tmp", "w") as f:
                f.write(text)
            os.replace(target + ".tmp", target)
    with open(path) as f:
        inputs = inputs_of(f.read())
    answer({"path": path, "cache_hit": hit, "seconds": round(time.monotonic() - began, 3), "torch_version": version,
            "key": key, "inputs": inputs}, 0)


if __name__ == "__main__":
    main()
