"""The runner's half of inferbench's external-runner protocol (docs/external-runner-protocol.md).

A runner module supplies describe(args) -> header dict and run(request, args, session), where run
loads the model, calls session.ready(header) and then session.measure(step), or for a generative cell
(the request's "generation") session.serve_generations(prepare, generate). Everything else is
here: the request, the loop, the chunked output, the generation commands, SIGTERM, errors and exit codes.
"""

import argparse
import faulthandler
import json
import os
import signal
import sys
import time
import traceback

PROTOCOL_VERSION = 1
EXIT_ERROR = 1
EXIT_FRAMEWORK_MISSING = 3
FLUSH_RECORDS = 256
FLUSH_INTERVAL_NS = 1_000_000_000
REQUIRED_FIELDS = ("model", "batch_size", "precision", "device", "warmup_ns", "warmup_iterations",
                   "duration_ns", "min_iterations", "max_iterations", "seed")
TRUE_WORDS = ("true", "yes", "on", "1")
FALSE_WORDS = ("false", "no", "off", "0")
DEVICE_TIME_FIELDS = ("enqueue_ns", "h2d_ns", "compute_ns", "d2h_ns")
# A generative cell's commands come on this descriptor, one JSON object a line (stdin holds the request alone).
GENERATION_COMMAND_FD = 3


class RunnerError(Exception):
    """A failure meant for the user: bad model, bad option, unsupported combination."""


class FrameworkMissing(RunnerError):
    """The framework cannot be imported by this interpreter (exit code 3: inferbench tries another)."""


def emit(obj, out=None):
    out = out or sys.stdout
    out.write(json.dumps(obj, separators=(",", ":")) + "\n")
    out.flush()


def read_request(stream):
    try:
        request = json.loads(stream.read())
    except ValueError as error:
        raise RunnerError(f"the request on stdin is not JSON: {error}") from None
    missing = [key for key in REQUIRED_FIELDS if key not in request]
    if missing:
        raise RunnerError(f"the request lacks {', '.join(missing)}")
    request.setdefault("options", {})
    return request


def option_flag(options, name, default=False):
    value = str(options.get(name, default)).lower()
    if value in TRUE_WORDS:
        return True
    if value in FALSE_WORDS:
        return False
    raise RunnerError(f"option {name}: '{value}' is not valid (use true|false)")


def option_count(options, name, default=0):
    value = str(options.get(name, default))
    if not value.isdigit():
        raise RunnerError(f"option {name}: '{value}' is not valid (use a whole number >= 0)")
    return int(value)


def option_shape(options, name, default=""):
    text = str(options.get(name, default)).replace("x", ",")
    try:
        shape = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        shape = ()
    if not shape or min(shape) < 1:
        raise RunnerError(f"option {name}: '{text}' is not a shape (write e.g. 3,224,224)")
    return shape


def cpu_name():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "cpu"


def base_header(framework, version, device, device_name):
    return {"type": "header", "protocol_version": PROTOCOL_VERSION, "framework": framework,
            "version": version, "device": device, "device_name": device_name}


class StopFlag:
    """Set by SIGTERM: the loops end after the current inference and the runner reports what it has."""

    def __init__(self):
        self.requested = False
        signal.signal(signal.SIGTERM, self._on_term)

    def _on_term(self, _signum, _frame):
        self.requested = True


class IterationLog:
    """Collects records between clock reads and writes them in chunks, so no I/O is timed."""

    def __init__(self, out):
        self._out = out
        self._chunk = []
        self._last_flush_ns = time.monotonic_ns()
        self.count = 0

    def add(self, start_ns, e2e_ns, device_times):
        self._chunk.append((start_ns, e2e_ns, device_times))
        self.count += 1
        end_ns = start_ns + e2e_ns
        if len(self._chunk) >= FLUSH_RECORDS or end_ns - self._last_flush_ns >= FLUSH_INTERVAL_NS:
            self.flush(end_ns)

    def flush(self, now_ns=None):
        lines = []
        for start_ns, e2e_ns, device_times in self._chunk:
            record = {"type": "iteration", "start_ns": start_ns, "e2e_ns": e2e_ns}
            for field in DEVICE_TIME_FIELDS:
                if device_times and device_times.get(field) is not None:
                    record[field] = int(device_times[field])
            lines.append(json.dumps(record, separators=(",", ":")))
        if lines:
            self._out.write("\n".join(lines) + "\n")
        self._out.flush()
        self._chunk.clear()
        self._last_flush_ns = now_ns if now_ns is not None else time.monotonic_ns()


def nothing():
    """Work between iterations where there is none."""


def warm_up(step, request, stop, between=nothing):
    """Returns the warm-up's iterations and its duration in ns."""
    begin = time.monotonic_ns()
    iterations = 0
    while not stop.requested:
        if time.monotonic_ns() - begin >= request["warmup_ns"] and iterations >= request["warmup_iterations"]:
            break
        step()
        between()
        iterations += 1
    return iterations, time.monotonic_ns() - begin


def measure(step, request, stop, log, between=nothing):
    """The measured loop, as inferbench's own: two clock reads around one inference, then a record; between()
    (the next input sample) after it, outside the clock reads."""
    min_iterations = max(1, int(request["min_iterations"]))
    max_iterations = int(request["max_iterations"])
    deadline = time.monotonic_ns() + request["duration_ns"]
    iterations = 0
    while not stop.requested:
        start = time.monotonic_ns()
        device_times = step()
        end = time.monotonic_ns()
        log.add(start, end - start, device_times)
        iterations += 1
        if (max_iterations and iterations >= max_iterations) or (end >= deadline and iterations >= min_iterations):
            break
        between()
    log.flush()
    return iterations


def _checked(array, name, dtype, shape, source):
    """`array` as input `name` takes it (numpy dtype name `dtype`, `shape` with the batch first), or RunnerError."""
    if str(array.dtype) != dtype:
        raise RunnerError(f"inputs {source}: holds {array.dtype} but input {name} takes {dtype}; save it as that type")
    if tuple(array.shape) != tuple(shape):
        raise RunnerError(f"inputs {source}: shape {list(array.shape)} does not fit input {name}, which takes "
                          f"{list(shape)} at this cell's batch size (the first dimension)")
    return array


def _npz_sample(numpy, path, inputs):
    with numpy.load(path, allow_pickle=False) as archive:
        held = list(archive.keys())
        sample = []
        for name, dtype, shape in inputs:
            if name not in held:
                raise RunnerError(f"inputs {path}: no array named {name} (it holds {', '.join(held) or 'none'}; the "
                                  f"model's inputs are {', '.join(n for n, _, _ in inputs)})")
            sample.append(_checked(archive[name], name, dtype, shape, f"{path}:{name}.npy"))
    return sample


def _npy_sample(numpy, path, inputs):
    if len(inputs) != 1:
        raise RunnerError(f"inputs {path}: one .npy array feeds a model of one input, and this one has {len(inputs)} "
                          f"({', '.join(n for n, _, _ in inputs)}); give an .npz archive or a folder with one NAME.npy "
                          "per input")
    name, dtype, shape = inputs[0]
    return [_checked(numpy.load(path, allow_pickle=False), name, dtype, shape, path)]


def _named_sample(numpy, folder, inputs, suffix):
    files = [os.path.join(folder, f"{name}{suffix}.npy") for name, _, _ in inputs]
    if not all(os.path.isfile(f) for f in files):
        return None
    return [_checked(numpy.load(f, allow_pickle=False), name, dtype, shape, f)
            for f, (name, dtype, shape) in zip(files, inputs)]


def _folder_samples(numpy, folder, inputs):
    one = _named_sample(numpy, folder, inputs, "")
    if one is not None:
        return [one]
    samples = []
    while True:
        sample = _named_sample(numpy, folder, inputs, f"_{len(samples)}")
        if sample is None:
            break
        samples.append(sample)
    if samples:
        return samples
    numbered = sorted((int(os.path.splitext(entry)[0]), entry) for entry in os.listdir(folder)
                      if os.path.splitext(entry)[0].isdigit())
    for _, entry in numbered:
        path = os.path.join(folder, entry)
        if os.path.isdir(path):
            sample = _named_sample(numpy, path, inputs, "")
            if sample is None:
                raise RunnerError(f"inputs {path}: no NAME.npy for every input "
                                  f"({', '.join(n for n, _, _ in inputs)})")
            samples.append(sample)
        elif entry.endswith(".npz"):
            samples.append(_npz_sample(numpy, path, inputs))
        else:
            samples.append(_npy_sample(numpy, path, inputs))
    if not samples:
        raise RunnerError(f"inputs {folder}: holds no NAME.npy per input ({', '.join(n for n, _, _ in inputs)}), no "
                          "NAME_0.npy, ... and no numbered samples (0/, 1/, ... or 0.npz, 1.npz, ...)")
    return samples


def read_input_samples(numpy, path, inputs):
    """The plan's input files at `path` (the request's "inputs") for `inputs`, a list of (name, numpy dtype name,
    shape with the batch first): a list of samples, each a list of arrays in the order of `inputs`. The layouts are
    inferbench's own (backends/input_files.hpp): an .npz archive with one array per input name; an .npy file for a
    model of one input; a folder of NAME.npy (one sample), of NAME_0.npy, NAME_1.npy, ... (one sample per index), or
    of numbered entries 0, 1, ... (folders of NAME.npy, .npz archives, .npy files), in number order."""
    if os.path.isdir(path):
        return _folder_samples(numpy, path, inputs)
    if not os.path.exists(path):
        raise RunnerError(f"inputs {path}: no such file or folder")
    if path.endswith(".npz"):
        return [_npz_sample(numpy, path, inputs)]
    if path.endswith(".npy"):
        return [_npy_sample(numpy, path, inputs)]
    raise RunnerError(f"inputs {path}: not an .npz archive, an .npy file or a folder of them")


class InputCycle:
    """The samples an iteration takes, one per iteration in turn: `current` is the next iteration's, advance() (the
    measured loop's between-iterations work, untimed) moves on. header() is what the runner's header says of them."""

    def __init__(self, samples, from_files):
        self.samples = samples
        self.from_files = from_files
        self._next = 0
        self.current = samples[0]

    def advance(self):
        self._next = (self._next + 1) % len(self.samples)
        self.current = self.samples[self._next]

    def header(self):
        """{"inputs": {...}} for the plan's files; nothing for the runner's own inputs."""
        if not self.from_files:
            return {}
        return {"inputs": {"samples": len(self.samples), "cycled": len(self.samples) > 1}}


class Session:
    """What run() gets: the request, and the two calls that make up the protocol's output."""

    def __init__(self, request, stop, out):
        self.request = request
        self.stop = stop
        self._out = out
        self.warmup_iterations = 0
        self.warmup_ns = 0
        self.iterations = 0

    def ready(self, header):
        emit(header, self._out)

    def serve_generations(self, prepare, generate, commands=None):
        """A generative cell: answers inferbench's commands on GENERATION_COMMAND_FD until it closes. prepare(prompts,
        output_tokens, sampling, seed) is untimed (prompts to the device, the cache's length); generate(stop) runs one
        whole generation from an empty cache and returns (start_ns, steps), steps a list of (end_ns, tokens), ending
        early where stop.requested (SIGTERM). Each generation counts as one iteration of the done line."""
        commands = commands or os.fdopen(GENERATION_COMMAND_FD, "r", encoding="utf-8")
        prepared = False
        for text in commands:
            try:
                command = json.loads(text)
            except ValueError as error:
                raise RunnerError(f"a generation command is not JSON: {error}") from None
            kind = command.get("type") if isinstance(command, dict) else None
            if kind == "prepare":
                prepare(*check_prepare(command, self.request))
                prepared = True
                emit({"type": "prepared"}, self._out)
            elif kind == "generate" and prepared:
                start_ns, steps = generate(self.stop)
                write_generation(self._out, start_ns, steps)
                self.iterations += 1
            else:
                raise RunnerError(f"unexpected generation command {text.strip()[:80]} (prepare, then generate)")

    def measure(self, step, between=nothing):
        """step() runs one inference and returns None or a dict of device times in ns; between() runs after each
        iteration, untimed (the next input sample: InputCycle.advance)."""
        self.warmup_iterations, self.warmup_ns = warm_up(step, self.request, self.stop, between)
        self.iterations = measure(step, self.request, self.stop, IterationLog(self._out), between)


def splitmix64_uniforms(seed):
    """The seeded sampling's draws, as every engine of inferbench makes them: a splitmix64 stream from the seed
    (core/splitmix64.hpp), each output's top 53 bits scaled to [0, 1); one draw per sequence per step, sequences in
    batch order. The token drawn is the first whose cumulative softmax probability exceeds the draw."""
    mask = (1 << 64) - 1
    state = seed & mask
    while True:
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z ^= z >> 31
        yield (z >> 11) * (1.0 / (1 << 53))


def check_prepare(command, request):
    """The prepare command's prompts and lengths, checked against the request: (prompts, output_tokens, sampling,
    seed), prompts a list of batch lists of input_tokens ids."""
    generation = request.get("generation") or {}
    prompts = command.get("prompts")
    batch, length = int(command.get("batch", 0)), int(command.get("input_tokens", 0))
    if (not isinstance(prompts, list) or len(prompts) != batch or batch < 1
            or any(not isinstance(row, list) or len(row) != length for row in prompts)):
        raise RunnerError(f"the prepare command's prompts are not {batch} lists of {length} token ids")
    if length != generation.get("input_tokens") or command.get("output_tokens") != generation.get("output_tokens"):
        raise RunnerError("the prepare command's lengths differ from the request's generation")
    if command.get("sampling") not in ("greedy", "seeded"):
        raise RunnerError(f"sampling '{command.get('sampling')}' is not greedy or seeded")
    return prompts, int(command["output_tokens"]), command["sampling"], int(command.get("seed", 0))


def write_generation(out, start_ns, steps):
    """A generation's lines, written after it ended (no printing is timed): one "step END_NS TOKEN..." line per
    step (END_NS on CLOCK_MONOTONIC, one token per sequence), then the generated line."""
    lines = [f"step {end_ns} " + " ".join(str(int(t)) for t in tokens) for end_ns, tokens in steps]
    lines.append(json.dumps({"type": "generated", "steps": len(steps), "start_ns": start_ns}, separators=(",", ":")))
    out.write("\n".join(lines) + "\n")
    out.flush()


def parse_args(argv):
    parser = argparse.ArgumentParser(description="inferbench runner (docs/external-runner-protocol.md)")
    parser.add_argument("--describe", action="store_true", help="print the header with capabilities and exit")
    parser.add_argument("--mode", default="", help="runner-specific mode (torch: eager or compile)")
    return parser.parse_args(argv)


def end_after_done(code=0):
    """Ends the process as soon as its last line is out, as inferbench's own worker does: nothing after the done line
    is measured, and on the H200 a torch.compile runner took 6-12 s from its last measured iteration to its end
    (PyTorch's teardown at exit, presumably: Inductor's compile workers, CUDA graph pools), time a plan only waited
    through. Inductor's workers end themselves once their parent is gone."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def main(runner, argv=None):
    """Runs a runner module (with describe() and run()); returns the exit code, or ends the process after a measurement
    that completed (end_after_done)."""
    # A crash in native code (the framework's, a driver's) writes the Python stack to stderr before the process
    # dies, and inferbench stores stderr's tail with the failed benchmark.
    faulthandler.enable()
    args = parse_args(sys.argv[1:] if argv is None else argv)
    stop = StopFlag()
    out = sys.stdout
    try:
        if args.describe:
            emit(runner.describe(args), out)
            return 0
        session = Session(read_request(sys.stdin), stop, out)
        runner.run(session.request, args, session)
        emit({"type": "done", "iterations": session.iterations,
              "warmup_iterations": session.warmup_iterations, "warmup_ns": session.warmup_ns,
              "stopped": stop.requested}, out)
        end_after_done()
    except FrameworkMissing as error:
        emit({"type": "error", "message": str(error)}, out)
        return EXIT_FRAMEWORK_MISSING
    except RunnerError as error:
        if error.__cause__ is not None:  # the user's code raised (a model factory): its traceback on stderr
            traceback.print_exception(type(error.__cause__), error.__cause__, error.__cause__.__traceback__)
        emit({"type": "error", "message": str(error)}, out)
        return EXIT_ERROR
    except Exception as error:  # a framework's own exception: its type and message, the trace on stderr
        traceback.print_exc()
        emit({"type": "error", "message": f"{type(error).__name__}: {error}"}, out)
        return EXIT_ERROR
