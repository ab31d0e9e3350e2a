#!/usr/bin/env python3
"""Self-tests of the Python runners (runners/), run by ctest with the system's python3.

What runs for real: the protocol helpers, and the PyTorch runner and models where torch is importable.
ONNX Runtime and TensorFlow run against the stand-ins in fakes/ (their argument and protocol
handling, not the frameworks themselves).
"""

import io
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNERS = os.environ.get("INFERBENCH_RUNNERS", os.path.join(HERE, "..", "..", "..", "runners"))
FAKES = os.path.join(HERE, "fakes")
sys.path.insert(0, RUNNERS)
import runner_protocol as rp  # noqa: E402

HAVE_TORCH = importlib.util.find_spec("torch") is not None
HAVE_NUMPY = importlib.util.find_spec("numpy") is not None  # the stand-ins in fakes/ need it


def make_request(model, **overrides):
    request = {"protocol_version": 1, "model": model, "batch_size": 1, "precision": "fp32", "device": "cpu",
               "warmup_ns": 0, "warmup_iterations": 1, "duration_ns": 0, "min_iterations": 3,
               "max_iterations": 0, "seed": 42, "options": {}}
    request.update(overrides)
    return request


def run_runner(script, request, args=(), fakes=False, timeout=300):
    """Returns (exit code, parsed stdout lines, stderr)."""
    env = dict(os.environ)
    if fakes:
        env["PYTHONPATH"] = FAKES + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, os.path.join(RUNNERS, script), *args], input=json.dumps(request),
                          capture_output=True, text=True, env=env, timeout=timeout, check=False)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return done.returncode, lines, done.stderr


class Step:
    def __init__(self):
        self.calls = 0

    def __call__(self):
        self.calls += 1


class NeverStop:  # pylint: disable=too-few-public-methods
    requested = False


class ProtocolHelpers(unittest.TestCase):
    def test_records_are_written_in_chunks_not_per_iteration(self):
        out = io.StringIO()
        log = rp.IterationLog(out)
        now = time.monotonic_ns()
        for i in range(rp.FLUSH_RECORDS - 1):
            log.add(now, 1 + i, None)
        self.assertEqual(out.getvalue(), "", "nothing printed inside the measured loop until a chunk is full")
        log.add(now, 5, {"compute_ns": 3, "h2d_ns": None})
        self.assertEqual(len(out.getvalue().splitlines()), rp.FLUSH_RECORDS)
        last = json.loads(out.getvalue().splitlines()[-1])
        self.assertEqual(last, {"type": "iteration", "start_ns": now, "e2e_ns": 5, "compute_ns": 3})
        log.add(now, 7, None)
        log.flush()
        self.assertEqual(len(out.getvalue().splitlines()), rp.FLUSH_RECORDS + 1)

    def test_slow_iterations_are_flushed_every_second(self):
        out = io.StringIO()
        log = rp.IterationLog(out)
        log.add(time.monotonic_ns(), 2 * rp.FLUSH_INTERVAL_NS, None)
        self.assertEqual(len(out.getvalue().splitlines()), 1)

    def test_loops_follow_the_request(self):
        step = Step()
        request = make_request("m", warmup_iterations=5, min_iterations=7)
        self.assertEqual(rp.warm_up(step, request, NeverStop())[0], 5)
        self.assertEqual(rp.measure(step, request, NeverStop(), rp.IterationLog(io.StringIO())), 7)
        request["max_iterations"] = 3
        self.assertEqual(rp.measure(step, request, NeverStop(), rp.IterationLog(io.StringIO())), 3)
        request.update(duration_ns=50_000_000, min_iterations=1, max_iterations=0)
        begin = time.monotonic_ns()
        rp.measure(step, request, NeverStop(), rp.IterationLog(io.StringIO()))
        self.assertGreaterEqual(time.monotonic_ns() - begin, 50_000_000)

    def test_sigterm_stops_the_loops(self):
        previous = signal.getsignal(signal.SIGTERM)
        try:
            stop = rp.StopFlag()
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.01)
            self.assertTrue(stop.requested)
            self.assertEqual(rp.measure(Step(), make_request("m", min_iterations=10), stop,
                                        rp.IterationLog(io.StringIO())), 0)
        finally:
            signal.signal(signal.SIGTERM, previous)

    def test_request_and_options(self):
        with self.assertRaisesRegex(rp.RunnerError, "lacks batch_size, precision"):
            rp.read_request(io.StringIO('{"model": "m", "device": "cpu", "warmup_ns": 0, "warmup_iterations": 0,'
                                        '"duration_ns": 0, "min_iterations": 1, "max_iterations": 0, "seed": 1}'))
        with self.assertRaisesRegex(rp.RunnerError, "not JSON"):
            rp.read_request(io.StringIO("model=resnet50"))
        self.assertTrue(rp.option_flag({"x": "True"}, "x"))
        self.assertFalse(rp.option_flag({}, "x"))
        with self.assertRaisesRegex(rp.RunnerError, "option x: 'maybe'"):
            rp.option_flag({"x": "maybe"}, "x")
        self.assertEqual(rp.option_count({"t": "4"}, "t"), 4)
        with self.assertRaises(rp.RunnerError):
            rp.option_count({"t": "-1"}, "t")
        self.assertEqual(rp.option_shape({"s": "3x16x16"}, "s"), (3, 16, 16))
        with self.assertRaises(rp.RunnerError):
            rp.option_shape({"s": "3,,0"}, "s")


@unittest.skipUnless(HAVE_NUMPY, "numpy is not importable by this interpreter")
class PlanInputs(unittest.TestCase):
    """The plan's input files as the runners read them: inferbench's layouts (backends/input_files.hpp)."""

    INPUTS = [("x", "float32", (2, 4)), ("ids", "int64", (2, 3))]

    def sample(self, value):
        import numpy  # pylint: disable=import-outside-toplevel
        return {"x": numpy.full((2, 4), value, numpy.float32), "ids": numpy.full((2, 3), int(value), numpy.int64)}

    def test_every_layout_gives_its_samples_in_order(self):
        import numpy  # pylint: disable=import-outside-toplevel
        with tempfile.TemporaryDirectory() as folder:
            numpy.savez(os.path.join(folder, "one.npz"), **self.sample(1))
            samples = rp.read_input_samples(numpy, os.path.join(folder, "one.npz"), self.INPUTS)
            self.assertEqual([(len(s), float(s[0][0, 0]), int(s[1][0, 0])) for s in samples], [(2, 1.0, 1)])
            indexed = os.path.join(folder, "indexed")
            numbered = os.path.join(folder, "numbered")
            os.makedirs(indexed)
            os.makedirs(numbered)
            for k in range(3):
                for name, array in self.sample(k).items():
                    numpy.save(os.path.join(indexed, f"{name}_{k}.npy"), array)
                numpy.savez(os.path.join(numbered, f"{k}.npz"), **self.sample(10 + k))
            self.assertEqual([float(s[0][0, 0]) for s in rp.read_input_samples(numpy, indexed, self.INPUTS)],
                             [0.0, 1.0, 2.0])
            self.assertEqual([float(s[0][0, 0]) for s in rp.read_input_samples(numpy, numbered, self.INPUTS)],
                             [10.0, 11.0, 12.0])

    def test_a_misfit_is_one_line_naming_the_file_and_the_input(self):
        import numpy  # pylint: disable=import-outside-toplevel
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "b1.npz")
            numpy.savez(path, x=numpy.zeros((1, 4), numpy.float32), ids=numpy.zeros((2, 3), numpy.int64))
            with self.assertRaises(rp.RunnerError) as caught:
                rp.read_input_samples(numpy, path, self.INPUTS)
            self.assertEqual(str(caught.exception), f"inputs {path}:x.npy: shape [1, 4] does not fit input x, which "
                                                    "takes [2, 4] at this cell's batch size (the first dimension)")
            with self.assertRaisesRegex(rp.RunnerError, "no such file or folder"):
                rp.read_input_samples(numpy, os.path.join(folder, "nowhere.npz"), self.INPUTS)

    def test_the_loops_move_to_the_next_sample_between_iterations(self):
        cycle = rp.InputCycle(["a", "b", "c"], True)
        seen = []
        request = make_request("m", warmup_iterations=0, min_iterations=5)
        rp.measure(lambda: seen.append(cycle.current), request, NeverStop(), rp.IterationLog(io.StringIO()),
                   cycle.advance)
        self.assertEqual(seen, ["a", "b", "c", "a", "b"])
        self.assertEqual(cycle.header(), {"inputs": {"samples": 3, "cycled": True}})
        self.assertEqual(rp.InputCycle(["random"], False).header(), {}, "the runner's own inputs: nothing said")


@unittest.skipUnless(HAVE_TORCH, "torch is not importable by this interpreter")
class TorchRunner(unittest.TestCase):
    def test_zoo_models_have_the_onnx_zoos_parameter_counts(self):
        import torch  # pylint: disable=import-outside-toplevel
        import torch_models  # pylint: disable=import-outside-toplevel
        import torch_zoo_classifiers  # pylint: disable=import-outside-toplevel
        resnet = torch_zoo_classifiers.ResNet50()  # the built-in definition, with or without torchvision
        self.assertEqual(torch_models.parameter_count(resnet), 25_557_032)
        mobilenet = torch_models.build_zoo_model("mobilenet", 1)
        self.assertEqual(torch_models.parameter_count(mobilenet), 4_231_976)
        with torch.inference_mode():
            probabilities = mobilenet.eval()(torch.rand(2, 3, 224, 224) * 2 - 1)
        self.assertEqual(tuple(probabilities.shape), (2, 1000))
        self.assertAlmostEqual(probabilities.sum(dim=1)[0].item(), 1.0, places=4)
        same = torch_models.build_zoo_model("mobilenet", 1)
        self.assertTrue(torch.equal(same.fc.weight, mobilenet.fc.weight), "seeded weights")

    def test_eager_run_prints_header_iterations_and_done(self):
        begin = time.monotonic_ns()
        code, lines, err = run_runner("torch_runner.py", make_request("mobilenet"), ["--mode", "eager"])
        self.assertEqual(code, 0, err)
        self.assertEqual(lines[0]["type"], "header")
        self.assertEqual(lines[0]["framework"], "torch")
        self.assertEqual(lines[0]["model_source"], "inferbench zoo")
        self.assertEqual([m["name"] for m in lines[0]["metrics"]], ["torch_model_build_ns"])
        iterations = [line for line in lines if line["type"] == "iteration"]
        self.assertEqual(len(iterations), 3)
        for record in iterations:
            self.assertGreater(record["start_ns"], begin, "time.monotonic_ns() is CLOCK_MONOTONIC")
            self.assertGreater(record["e2e_ns"], 100_000)
            self.assertNotIn("compute_ns", record, "no device times on the CPU")
        self.assertGreater(lines[-1].pop("warmup_ns"), 0)
        self.assertEqual(lines[-1], {"type": "done", "iterations": 3, "warmup_iterations": 1, "stopped": False})

    def test_bf16_and_channels_last(self):
        request = make_request("mobilenet", precision="bf16", options={"channels_last": "true", "threads": "1"})
        code, lines, err = run_runner("torch_runner.py", request, ["--mode", "eager"])
        self.assertEqual(code, 0, err)
        self.assertEqual(lines[-1]["iterations"], 3)
        self.assertIsNone(lines[0]["cudnn_benchmark"], "cuDNN's setting means nothing on the CPU")
        code, lines, _ = run_runner("torch_runner.py", make_request("mobilenet", options={"cudnn_benchmark": "maybe"}),
                                    ["--mode", "eager"])
        self.assertEqual(lines[-1]["message"], "option cudnn_benchmark: 'maybe' is not valid (use true|false)")

    def test_torchscript_file(self):
        import torch  # pylint: disable=import-outside-toplevel
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "tiny.pt")
            torch.jit.script(torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU())).save(path)
            request = make_request(path, batch_size=2, options={"input_shape": "3,16,16"})
            code, lines, err = run_runner("torch_runner.py", request, ["--mode", "eager"])
        self.assertEqual(code, 0, err)
        self.assertEqual(lines[0]["model_source"], "torchscript")
        self.assertEqual(lines[-1]["iterations"], 3)

    def test_refusals_are_error_lines(self):
        import torch  # pylint: disable=import-outside-toplevel
        code, lines, _ = run_runner("torch_runner.py", make_request("vgg16"), ["--mode", "eager"])
        self.assertEqual((code, lines[-1]["type"]), (1, "error"))
        self.assertIn("'vgg16' is neither a zoo model (resnet50, mobilenet, ", lines[-1]["message"])
        code, lines, _ = run_runner("torch_runner.py", make_request("mobilenet", options={"compile_mode": "fast"}),
                                    ["--mode", "eager"])
        self.assertEqual(lines[-1]["message"], "option compile_mode: 'fast' is not valid (use default|reduce-overhead|"
                                               "max-autotune|max-autotune-no-cudagraphs)")
        code, lines, _ = run_runner("torch_runner.py", make_request("mobilenet", device="cuda:0"),
                                    ["--mode", "eager"])
        if not torch.cuda.is_available():
            self.assertEqual(code, 1)
            self.assertIn("has no CUDA device", lines[-1]["message"])
        code, lines, _ = run_runner("torch_runner.py", make_request("mobilenet", options={"cuda_graph": "true"}),
                                    ["--mode", "eager"])
        self.assertEqual(lines[-1]["message"], "cuda_graph=true needs a cuda device")
        if not hasattr(torch, "compile"):
            code, lines, _ = run_runner("torch_runner.py", make_request("mobilenet"), ["--mode", "compile"])
            self.assertEqual(code, 1)
            self.assertIn("torch.compile needs PyTorch >= 2.0", lines[-1]["message"])

    def test_autocast_and_python_factories(self):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "tiny.py")
            with open(path, "w", encoding="utf-8") as stream:
                stream.write("import torch\n\ndef make():\n    return torch.nn.Linear(8, 2), torch.rand(1, 8)\n\n"
                             "def broken():\n    raise ValueError('no weights')\n")
            request = make_request(f"python:{path}:make", batch_size=4, precision="bf16",
                                   options={"precision_mode": "autocast"})
            code, lines, err = run_runner("torch_runner.py", request, ["--mode", "eager"])
            self.assertEqual(code, 0, err)
            self.assertEqual((lines[0]["precision_mode"], lines[-1]["iterations"]), ("autocast", 3))
            code, lines, err = run_runner("torch_runner.py", make_request(f"python:{path}:broken"), ["--mode", "eager"])
        self.assertEqual(code, 1)
        self.assertIn("broken() raised ValueError: no weights", lines[-1]["message"])
        self.assertIn("ValueError: no weights", err, "the traceback on stderr, which inferbench stores")

    def test_the_plans_inputs_are_fed_one_sample_per_iteration(self):
        import numpy  # pylint: disable=import-outside-toplevel
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "seen.py")
            with open(path, "w", encoding="utf-8") as stream:  # the model says on stderr what each call got
                stream.write("import sys, torch\n\nclass Seen(torch.nn.Module):\n    def forward(self, x):\n"
                             "        sys.stderr.write(f'seen {x[0, 0].item():g}\\n')\n        return x * 2\n\n"
                             "def make():\n    return Seen(), torch.zeros(1, 8)\n")
            samples = os.path.join(folder, "set")
            os.makedirs(samples)
            for k in range(3):
                numpy.save(os.path.join(samples, f"{k}.npy"), numpy.full((2, 8), 100 * k, numpy.float32))
            request = make_request(f"python:{path}:make", batch_size=2, warmup_iterations=0, min_iterations=4,
                                   inputs=samples)
            code, lines, err = run_runner("torch_runner.py", request, ["--mode", "eager"])
            self.assertEqual(code, 0, err)
            self.assertEqual(lines[0]["inputs"], {"samples": 3, "cycled": True})
            self.assertEqual([line.split()[1] for line in err.splitlines() if line.startswith("seen ")],
                             ["0", "100", "200", "0"])
            numpy.save(os.path.join(folder, "b1.npy"), numpy.zeros((1, 8), numpy.float32))
            code, lines, _ = run_runner("torch_runner.py", dict(request, inputs=os.path.join(folder, "b1.npy")),
                                        ["--mode", "eager"])
        self.assertEqual(code, 1)
        self.assertIn("b1.npy: shape [1, 8] does not fit input x, which takes [2, 8]", lines[-1]["message"])

    def test_compile_metrics_count_graphs_breaks_and_skipped_cuda_graphs(self):
        import collections  # pylint: disable=import-outside-toplevel
        sys.path.insert(0, RUNNERS)
        import torch_runner  # pylint: disable=import-outside-toplevel
        counters = collections.defaultdict(collections.Counter)  # as torch._dynamo.utils.counters
        counters["stats"]["unique_graphs"] = 3
        counters["graph_break"].update({"Tensor.item": 1, "print": 1})
        counters["inductor"]["cudagraph_skips"] = 1
        self.assertEqual(torch_runner.compile_metrics(counters), [
            {"name": "torch_compile_graphs", "value": 3, "unit": "count"},
            {"name": "torch_compile_graph_breaks", "value": 2, "unit": "count"},
            {"name": "torch_compile_cudagraph_skips", "value": 1, "unit": "count"}])
        nothing = torch_runner.compile_metrics(collections.defaultdict(collections.Counter))
        self.assertEqual([m["value"] for m in nothing], [0, 0, 0], "a group Dynamo never counted in is 0")

    def test_the_runner_ends_at_its_done_line_without_the_teardown_at_exit(self):
        with tempfile.TemporaryDirectory() as folder:
            script = os.path.join(folder, "slow_teardown_runner.py")
            with open(script, "w", encoding="utf-8") as stream:
                stream.write(f"import atexit, sys\nsys.path.insert(0, {RUNNERS!r})\nimport runner_protocol as rp\n\n"
                             "def run(request, args, session):\n"
                             "    atexit.register(lambda: print('teardown ran', file=sys.stderr))\n"
                             "    session.ready(rp.base_header('fake', '1', 'cpu', 'cpu'))\n"
                             "    session.measure(lambda: None)\n\n"
                             "sys.exit(rp.main(sys.modules[__name__]))\n")
            done = subprocess.run([sys.executable, script], input=json.dumps(make_request("m")), capture_output=True,
                                  text=True, timeout=60, check=False)
        lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual((lines[-1]["type"], lines[-1]["iterations"]), ("done", 3), "every line out before the end")
        self.assertNotIn("teardown ran", done.stderr, "the process ends at its done line: exit handlers are skipped")

    def test_a_crash_in_native_code_leaves_the_python_stack(self):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "crashing.py")
            with open(path, "w", encoding="utf-8") as stream:
                stream.write("import ctypes\n\ndef make():\n    ctypes.string_at(0)\n")  # reads address 0
            code, _, err = run_runner("torch_runner.py", make_request(f"python:{path}:make"), ["--mode", "eager"])
        self.assertEqual(code, -signal.SIGSEGV)
        self.assertIn("Fatal Python error: Segmentation fault", err)
        self.assertIn('crashing.py", line 4 in make', err, "the frame that crashed, on stderr, which inferbench stores")

    def test_describe_names_the_zoo_and_missing_libraries(self):
        code, lines, err = run_runner("torch_runner.py", {}, ["--describe", "--mode", "eager"])
        self.assertEqual(code, 0, err)
        self.assertIn("bert", lines[0]["zoo_models"])
        if importlib.util.find_spec("transformers") is None:
            self.assertIn("transformers not importable by", lines[0]["missing_libraries"]["hf"])

    def test_describe_matches_what_runs(self):
        code, lines, err = run_runner("torch_runner.py", {}, ["--describe", "--mode", "eager"])
        self.assertEqual(code, 0, err)
        header = lines[0]
        self.assertIn("fp32", header["precisions"]["cpu"])
        if "fp16" not in header["precisions"]["cpu"]:
            code, lines, _ = run_runner("torch_runner.py", make_request("mobilenet", precision="fp16"),
                                        ["--mode", "eager"])
            self.assertEqual(code, 1)
            self.assertEqual(lines[-1]["message"], header["notes"]["cpu/fp16"])

    def test_sigterm_ends_measuring_and_reports(self):
        request = make_request("mobilenet", duration_ns=600_000_000_000)
        with subprocess.Popen([sys.executable, os.path.join(RUNNERS, "torch_runner.py"), "--mode", "eager"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as child:
            child.stdin.write(json.dumps(request))
            child.stdin.close()
            self.assertEqual(json.loads(child.stdout.readline())["type"], "header")
            time.sleep(1.0)
            child.send_signal(signal.SIGTERM)
            lines = [json.loads(line) for line in child.stdout.read().splitlines()]
            self.assertEqual(child.wait(timeout=30), 0)
        self.assertEqual(lines[-1]["type"], "done")
        self.assertTrue(lines[-1]["stopped"])
        self.assertEqual(lines[-1]["iterations"], len(lines) - 1)


@unittest.skipUnless(HAVE_NUMPY, "numpy is not importable by this interpreter")
class GenerationProtocol(unittest.TestCase):
    """runner_protocol's generation half: the commands on descriptor 3 (here a text stream) and the lines printed."""

    def test_prepare_then_generations_print_steps_and_generated(self):
        request = make_request("folder", generation={"input_tokens": 2, "output_tokens": 3, "sampling": "greedy"})
        out = io.StringIO()
        session = rp.Session(request, NeverStop(), out)
        prepared = []

        def generate(_stop):
            return 100, [(101, [7, 8]), (102, [9, 10]), (103, [11, 12])]

        commands = io.StringIO(json.dumps({"type": "prepare", "batch": 2, "input_tokens": 2, "output_tokens": 3,
                                           "sampling": "greedy", "seed": 5, "prompts": [[1, 2], [3, 4]]}) + "\n"
                               + '{"type":"generate"}\n' * 2)
        session.serve_generations(lambda *args: prepared.append(args), generate, commands)
        self.assertEqual(prepared, [([[1, 2], [3, 4]], 3, "greedy", 5)])
        lines = out.getvalue().splitlines()
        self.assertEqual(lines[0], '{"type":"prepared"}')
        self.assertEqual(lines[1:4], ["step 101 7 8", "step 102 9 10", "step 103 11 12"])
        self.assertEqual(json.loads(lines[4]), {"type": "generated", "steps": 3, "start_ns": 100})
        self.assertEqual(session.iterations, 2)

    def test_prompts_that_do_not_fit_the_request_are_an_error(self):
        request = make_request("folder", generation={"input_tokens": 2, "output_tokens": 3, "sampling": "greedy"})
        session = rp.Session(request, NeverStop(), io.StringIO())
        commands = io.StringIO(json.dumps({"type": "prepare", "batch": 1, "input_tokens": 2, "output_tokens": 3,
                                           "sampling": "greedy", "prompts": [[1, 2, 3]]}) + "\n")
        with self.assertRaisesRegex(rp.RunnerError, "not 1 lists of 2 token ids"):
            session.serve_generations(lambda *a: None, lambda s: (0, []), commands)
        with self.assertRaisesRegex(rp.RunnerError, "prepare, then generate"):
            session.serve_generations(lambda *a: None, lambda s: (0, []), io.StringIO('{"type":"generate"}\n'))

    def test_splitmix_draws_are_the_cpp_engines(self):
        draws = rp.splitmix64_uniforms(7)
        # backends/token_choice_test.cpp pins the same two values.
        self.assertEqual((next(draws), next(draws)), (0.3898297483912715, 0.01678829452815611))


def load_torch_generate():
    spec = importlib.util.spec_from_file_location("torch_generate", os.path.join(RUNNERS, "torch_generate.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@unittest.skipUnless(HAVE_TORCH, "torch is not importable by this python3")
class TorchGeneratePieces(unittest.TestCase):
    """torch_generate.py's parts that need torch but not transformers (Debian has torch, not transformers)."""

    def test_seeded_sampler_draws_as_the_cpp_engines(self):
        import torch  # pylint: disable=import-outside-toplevel
        process = load_torch_generate().seeded_sampler(torch, 7)
        flat = torch.zeros(2, 4)
        # Four equal logits: token floor(4 u); seed 7's first draws 0.3898... and 0.0167...: tokens 1 and 0, one
        # per sequence in batch order (backends/token_choice_test.cpp, SeededDrawsFollowTheRunnersStream).
        self.assertEqual(process(None, flat).argmax(-1).tolist(), [1, 0])
        peaked = torch.tensor([[0.0, 0.0, 50.0]])
        self.assertEqual(process(None, peaked).argmax(-1).tolist(), [2])

    def test_step_clock_leaves_out_the_prompt(self):
        import torch  # pylint: disable=import-outside-toplevel
        clock = load_torch_generate().StepClock(torch, cuda=False)
        before = time.monotonic_ns()
        clock.put(torch.tensor([[1, 2, 3], [4, 5, 6]]))  # generate() hands the prompt over first
        clock.put(torch.tensor([7, 8]))
        clock.put(torch.tensor([9, 10]))
        self.assertEqual([tokens for _, tokens in clock.steps], [[7, 8], [9, 10]])
        self.assertTrue(before <= clock.steps[0][0] <= clock.steps[1][0] <= time.monotonic_ns())


@unittest.skipIf(importlib.util.find_spec("transformers") is not None, "transformers is installed")
class TorchGenerateWithoutTransformers(unittest.TestCase):
    def test_describe_says_transformers_is_missing(self):
        done = subprocess.run([sys.executable, os.path.join(RUNNERS, "torch_generate.py"), "--describe"],
                              capture_output=True, text=True, timeout=120, check=False)
        self.assertEqual(done.returncode, rp.EXIT_FRAMEWORK_MISSING)
        self.assertIn("transformers is not installed", json.loads(done.stdout.splitlines()[-1])["message"])


class FakeFrameworkRunners(unittest.TestCase):
    def test_onnxruntime_runner(self):
        code, lines, err = run_runner("onnxruntime_runner.py", {}, ["--describe"], fakes=True)
        self.assertEqual(code, 0, err)
        self.assertEqual((lines[0]["framework"], lines[0]["version"]), ("onnxruntime", "0.0-fake"))
        self.assertEqual(lines[0]["precisions"], {"cpu": ["fp32"]})
        with tempfile.TemporaryDirectory() as folder:
            model = os.path.join(folder, "m.onnx")
            open(model, "wb").close()
            code, lines, err = run_runner("onnxruntime_runner.py", make_request(model, batch_size=4,
                                          options={"threads": "2"}), fakes=True)
            self.assertEqual(code, 0, err)
            self.assertEqual([line["type"] for line in lines],
                             ["header", "iteration", "iteration", "iteration", "done"])
            code, lines, _ = run_runner("onnxruntime_runner.py", make_request(model, precision="fp16"), fakes=True)
            self.assertEqual((code, lines[-1]["message"]),
                             (1, "onnxruntime-python runs the model in its own precision: ask for fp32"))
            code, lines, _ = run_runner("onnxruntime_runner.py", make_request(model, device="cuda:0"), fakes=True)
            self.assertIn("has no CUDAExecutionProvider", lines[-1]["message"])
        code, lines, _ = run_runner("onnxruntime_runner.py", make_request("resnet50"), fakes=True)
        self.assertIn("reads an .onnx or .ort file; 'resnet50' is not one", lines[-1]["message"])

    def test_onnxruntime_runner_takes_the_plans_inputs(self):
        import numpy  # pylint: disable=import-outside-toplevel
        with tempfile.TemporaryDirectory() as folder:
            model = os.path.join(folder, "m.onnx")
            open(model, "wb").close()
            for k in range(2):
                numpy.save(os.path.join(folder, f"input_{k}.npy"), numpy.full((4, 3, 8, 8), k / 2, numpy.float32))
            code, lines, err = run_runner("onnxruntime_runner.py", make_request(model, batch_size=4, inputs=folder),
                                          fakes=True)
            self.assertEqual(code, 0, err)
            self.assertEqual(lines[0]["inputs"], {"samples": 2, "cycled": True})
            code, lines, _ = run_runner("onnxruntime_runner.py", make_request(model, batch_size=2, inputs=folder),
                                        fakes=True)
            self.assertIn("does not fit input input, which takes [2, 3, 8, 8]", lines[-1]["message"])

    @unittest.skipUnless(importlib.util.find_spec("onnxruntime") is None, "onnxruntime is installed here")
    def test_missing_framework_exits_3(self):
        code, lines, _ = run_runner("onnxruntime_runner.py", {}, ["--describe"])
        self.assertEqual(code, rp.EXIT_FRAMEWORK_MISSING)
        self.assertIn("ONNX Runtime not importable by", lines[-1]["message"])

    def test_tensorflow_runner_frozen_graph(self):
        code, lines, err = run_runner("tensorflow_runner.py", {}, ["--describe"], fakes=True)
        self.assertEqual(code, 0, err)
        self.assertEqual(lines[0]["precision_formats"], {"fp16": ["keras", "h5"]})
        with tempfile.TemporaryDirectory() as folder:
            graph = os.path.join(folder, "frozen.pb")
            open(graph, "wb").close()
            options = {"input_names": "input:0", "output_names": "output:0"}
            code, lines, err = run_runner("tensorflow_runner.py", make_request(graph, batch_size=2, options=options),
                                          fakes=True)
            self.assertEqual(code, 0, err)
            self.assertEqual(lines[-1]["iterations"], 3)
            code, lines, _ = run_runner("tensorflow_runner.py", make_request(graph), fakes=True)
            self.assertIn("needs the option input_names", lines[-1]["message"])
            code, lines, _ = run_runner("tensorflow_runner.py", make_request(graph, precision="fp16", options=options),
                                        fakes=True)
            self.assertIn("fp16 needs a Keras file", lines[-1]["message"])
        code, lines, _ = run_runner("tensorflow_runner.py", make_request("mobilenet"), fakes=True)
        self.assertIn("'mobilenet' is not a file or folder", lines[-1]["message"])


if __name__ == "__main__":
    unittest.main()
