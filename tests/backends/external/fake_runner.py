#!/usr/bin/env python3
"""A runner that plays one scenario of the external-runner protocol, for the C++ tests; no framework.

The scenario is argv[1] (generic backend: part of the command) or $FAKE_RUNNER_SCENARIO (Python-runner
variants, whose arguments inferbench fixes). With $FAKE_RUNNER_REQUIRE_EXE set, any other interpreter
reports the framework as missing (exit 3), as a python3 without torch does.
"""

import json
import os
import signal
import sys
import time

stop = {"requested": False}


def on_term(_signum, _frame):
    stop["requested"] = True


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def header():
    emit({"type": "header", "framework": "fake", "version": "1.0", "device": "cpu", "device_name": sys.executable})


def iterations(count):
    lines = []
    for i in range(count):
        start = time.monotonic_ns()
        record = {"type": "iteration", "start_ns": start, "e2e_ns": 1000 + i}
        if i == 0:
            record.update(compute_ns=700, h2d_ns=None)
        lines.append(json.dumps(record))
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()


def wait_for_term(limit_s=20.0):
    deadline = time.monotonic() + limit_s
    while not stop["requested"] and time.monotonic() < deadline:
        time.sleep(0.01)


def describe():
    header = {"type": "header", "framework": "fake", "version": "1.0", "devices": ["cpu"],
              "precisions": {"cpu": ["fp32", "bf16"]}, "notes": {"cpu/fp16": "the fake runner has no fp16"},
              "precision_formats": {"bf16": ["pt"]}}
    # The zoo models it builds, as torch_runner.py says them: FAKE_RUNNER_ZOO=mobilenet,resnet50.
    if os.environ.get("FAKE_RUNNER_ZOO"):
        header["zoo_models"] = os.environ["FAKE_RUNNER_ZOO"].split(",")
    emit(header)


def scenario_ok(request):
    header()
    iterations(request["min_iterations"])
    emit({"type": "done", "iterations": request["min_iterations"]})


def scenario_text(request):
    print("loading weights from nowhere", flush=True)
    header()
    print("a framework's chatter on stdout", flush=True)
    iterations(request["min_iterations"])
    emit({"type": "done", "iterations": request["min_iterations"]})


def scenario_error(_request):
    sys.stderr.write("Traceback (most recent call last):\n  File \"model.py\", line 1\nOSError: boom\n")
    emit({"type": "error", "message": "fake runner: model not found"})
    sys.exit(1)


def scenario_crash(_request):
    header()
    iterations(3)
    sys.stderr.write("fake runner: crashing now\n")
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGSEGV)


def scenario_hang(_request):
    header()
    iterations(5)
    wait_for_term()
    emit({"type": "done", "iterations": 5})


def scenario_ignore_term(_request):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    header()
    iterations(5)
    while True:
        time.sleep(1)


def scenario_flood(_request):
    header()
    iterations(50)
    wait_for_term()
    emit({"type": "done", "iterations": 50})


def scenario_malformed(_request):
    header()
    print('{"type": "iteration", "start_ns": "soon", "e2e_ns": 5}', flush=True)
    wait_for_term()


def scenario_bad_json(_request):
    header()
    print('{"type": "iteration", ', flush=True)
    wait_for_term()


def scenario_wall_clock(_request):
    header()
    emit({"type": "iteration", "start_ns": time.time_ns(), "e2e_ns": 5})
    wait_for_term()


def scenario_truncated(_request):
    header()
    iterations(2)


def scenario_stages(request):
    """Each iteration of about 1 ms reports 300 us of pre-processing and 100 us of post-processing."""
    header()
    count = request["min_iterations"]
    lines = []
    for _ in range(count):
        start = time.monotonic_ns()
        time.sleep(0.001)
        lines.append(json.dumps({"type": "iteration", "start_ns": start, "e2e_ns": time.monotonic_ns() - start,
                                 "pre_ns": 300_000, "post_ns": 100_000}))
    sys.stdout.write("\n".join(lines) + "\n")
    emit({"type": "done", "iterations": count})


def scenario_inputs(request):
    """Says it fed the request's "inputs" as 3 samples, cycled, where the request has them."""
    fed = {"inputs": {"samples": 3, "cycled": True}} if request.get("inputs") else {}
    emit({"type": "header", "framework": "fake", "version": "1.0", "device": "cpu", "device_name": "cpu",
          "request_inputs": request.get("inputs"), **fed})
    iterations(request["min_iterations"])
    emit({"type": "done", "iterations": request["min_iterations"]})


def scenario_miscount(_request):
    header()
    iterations(2)
    emit({"type": "done", "iterations": 5})


def main():
    signal.signal(signal.SIGTERM, on_term)
    args = [a for a in sys.argv[1:] if not a.startswith("--") and a not in ("eager", "compile")]
    required = os.environ.get("FAKE_RUNNER_REQUIRE_EXE")
    if required and os.path.realpath(sys.executable) != os.path.realpath(required):
        emit({"type": "error", "message": f"fake framework not importable by {sys.executable}"})
        return 3
    if "--describe" in sys.argv:
        describe()
        return 0
    request = json.loads(sys.stdin.read())
    scenario = args[0] if args else os.environ.get("FAKE_RUNNER_SCENARIO", "ok")
    globals()["scenario_" + scenario](request)
    return 0


if __name__ == "__main__":
    sys.exit(main())
