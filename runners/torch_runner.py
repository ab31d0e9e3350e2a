#!/usr/bin/env python3
"""inferbench runner for PyTorch, eager (--mode eager) or torch.compile (--mode compile).

Models: any PyTorch model spec (model_specs.py): inferbench's zoo (torch_models.py), torchvision:NAME,
timm:NAME, hf:NAME, python:PATH.py:FACTORY or a TorchScript file.
One iteration: host inputs -> .to(device, non_blocking=True) -> model -> host outputs; on CUDA the iteration
ends with a synchronisation and CUDA events give H2D, compute and D2H.
Modes and options: compile_mode (torch.compile's mode), cuda_graph (eager: capture the forward pass once and
replay it), channels_last, precision_mode (convert: weights and inputs converted to the precision; autocast:
fp32 weights under torch.autocast), cudnn_benchmark (torch.backends.cudnn.benchmark on CUDA: true, as the torch
backend; PyTorch's own default is false, which makes cuDNN pick by heuristics instead of timing). Building the
model, torch.compile's first call and a CUDA graph's capture happen before the header and are reported in it as
metrics, apart from the warm-up and the measured loop.
Protocol: docs/external-runner-protocol.md.
"""

import importlib.util
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner_protocol as rp  # noqa: E402  (found next to this script)
import model_specs  # noqa: E402

MODES = ("eager", "compile")
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
PRECISION_MODES = ("convert", "autocast")
# What each spec library needs importable; the zoo, python: and TorchScript files need only torch.
LIBRARY_MODULES = {"torchvision": "torchvision", "timm": "timm", "hf": "transformers"}
CUDA_GRAPH_WARMUP_CALLS = 3


def import_torch():
    try:
        import torch  # pylint: disable=import-outside-toplevel
    except ImportError as error:
        raise rp.FrameworkMissing(f"PyTorch not importable by {sys.executable}: {error}") from None
    return torch


def torch_dtype(torch, precision):
    dtypes = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
    if precision not in dtypes:
        raise rp.RunnerError(f"the PyTorch runner has no {precision}; it runs {', '.join(dtypes)}")
    return dtypes[precision]


def compile_unavailable(torch, mode):
    if mode == "compile" and not hasattr(torch, "compile"):
        return f"torch.compile needs PyTorch >= 2.0; {sys.executable} has PyTorch {torch.__version__}"
    return None


def probe_precision(torch, device, precision, precision_mode="convert"):
    """Runs the zoo's layer types in `precision` (converted or under autocast); returns why that fails, or None."""
    nn = torch.nn
    dtype = torch_dtype(torch, precision)
    layers = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1, groups=8), nn.Conv2d(8, 16, 1), nn.BatchNorm2d(16),
                           nn.ReLU6(), nn.MaxPool2d(3, 2, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                           nn.Linear(16, 4), nn.Softmax(dim=1)).eval().to(device)
    x = torch.rand(1, 8, 8, 8, device=device)
    try:
        with torch.inference_mode():
            if precision_mode == "autocast" and precision != "fp32":
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # an unsupported dtype is said below, not as a warning
                    with torch.autocast(device.type, dtype=dtype):
                        layers(x)
                        ran = layers[0](x).dtype
                if ran != dtype:  # autocast disabled itself: the cell would run fp32 under another name
                    return (f"PyTorch {torch.__version__}'s autocast on {device.type} does not run {precision} "
                            f"(a convolution stayed {str(ran).replace('torch.', '')}); use precision_mode=convert")
            else:
                layers.to(dtype)(x.to(dtype))
    except RuntimeError as error:
        how = "under autocast" if precision_mode == "autocast" else "convolutions"
        return f"PyTorch {torch.__version__} cannot run {precision} {how} on {device} ({error})"
    return None


def missing_libraries():
    """Spec libraries this interpreter cannot import: inferbench skips their cells with the reason."""
    return {library: f"{module} not importable by {sys.executable}" for library, module in LIBRARY_MODULES.items()
            if importlib.util.find_spec(module) is None}


def describe(args):
    torch = import_torch()
    check_mode(args.mode)
    import torch_models  # pylint: disable=import-outside-toplevel
    header = rp.base_header("torch", torch.__version__, "cpu", rp.cpu_name())
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    precisions, notes = {}, {}
    for kind in devices:
        precisions[kind] = []
        for precision in ("fp32", "fp16", "bf16"):
            problem = probe_precision(torch, torch.device(kind), precision)
            if problem:
                notes[f"{kind}/{precision}"] = problem
            else:
                precisions[kind].append(precision)
    header.update(devices=devices, precisions=precisions, notes=notes, mode=args.mode,
                  zoo_models=list(torch_models.ZOO_NAMES), missing_libraries=missing_libraries())
    unavailable = compile_unavailable(torch, args.mode)
    if unavailable:
        header["unavailable"] = unavailable
    return header


def check_mode(mode):
    if mode not in MODES:
        raise rp.RunnerError(f"--mode '{mode}' is not valid (use {'|'.join(MODES)})")


def option_choice(options, name, choices):
    value = str(options.get(name, choices[0]))
    if value not in choices:
        raise rp.RunnerError(f"option {name}: '{value}' is not valid (use {'|'.join(choices)})")
    return value


def load_model(request):
    """The spec's model and its inputs (model_specs); bad input is one error line, a missing library exit 3."""
    try:
        spec = model_specs.parse_spec(request["model"])
        return model_specs.resolve(spec, request["seed"], request["options"])
    except model_specs.SpecUnavailable as error:
        raise rp.FrameworkMissing(str(error)) from None
    except model_specs.SpecError as error:
        raise rp.RunnerError(str(error)) from None
    except model_specs.FactoryError as error:
        raise rp.RunnerError(str(error)) from error.__cause__


def flatten(torch, outputs):
    if torch.is_tensor(outputs):
        return [outputs]
    if isinstance(outputs, dict):
        outputs = list(outputs.values())
    if isinstance(outputs, (list, tuple)):
        return [t for item in outputs for t in flatten(torch, item)]
    return []


def host_tensors(torch, made, dtype, device, channels_last):
    """Inputs as an iteration takes them: floats in `dtype` (None: kept as made), 4-D ones channels-last where asked,
    pinned."""
    tensors = []
    for x in made:
        if dtype is not None and x.is_floating_point():
            x = x.to(dtype)
        if channels_last and x.dim() == 4:
            x = x.contiguous(memory_format=torch.channels_last)
        tensors.append(x.pin_memory() if device.type == "cuda" else x)
    return tensors


def host_inputs(torch, resolved, request, dtype, device, channels_last):
    """The samples, made once: the plan's files where the request names them (each array as the model's input
    declares it, then converted as made ones are), else the model's own inputs (model_specs)."""
    batch = request["batch_size"]
    if request.get("inputs"):
        import numpy  # pylint: disable=import-outside-toplevel
        declared = [(spec.name, spec.dtype, (batch,) + tuple(spec.shape)) for spec in resolved.inputs]
        samples = rp.read_input_samples(numpy, request["inputs"], declared)
        return rp.InputCycle([host_tensors(torch, [torch.from_numpy(a.copy()) for a in sample], dtype, device,
                                           channels_last) for sample in samples], True)
    made = model_specs.make_inputs(resolved, batch, request["seed"])
    return rp.InputCycle([host_tensors(torch, made, dtype, device, channels_last)], False)


def ms_to_ns(milliseconds):
    return int(round(milliseconds * 1e6))


def cpu_step(torch, forward, xs, device):
    def step():
        for output in flatten(torch, forward(*[x.to(device, non_blocking=True) for x in xs])):
            output.cpu()
    return step


def cuda_step(torch, upload, forward, xs):
    """One iteration with CUDA events around H2D, compute and D2H; ends synchronised."""
    outputs = flatten(torch, forward(*upload(xs)))
    torch.cuda.synchronize()
    host_outputs = [torch.empty(o.shape, dtype=o.dtype, pin_memory=True) for o in outputs]
    events = [torch.cuda.Event(enable_timing=True) for _ in range(4)]

    def step():
        begin = time.monotonic_ns()
        events[0].record()
        device_xs = upload(xs)
        events[1].record()
        device_outputs = flatten(torch, forward(*device_xs))
        events[2].record()
        for host, device_output in zip(host_outputs, device_outputs):
            host.copy_(device_output, non_blocking=True)
        events[3].record()
        enqueue_ns = time.monotonic_ns() - begin
        events[3].synchronize()
        return {"enqueue_ns": enqueue_ns, "h2d_ns": ms_to_ns(events[0].elapsed_time(events[1])),
                "compute_ns": ms_to_ns(events[1].elapsed_time(events[2])),
                "d2h_ns": ms_to_ns(events[2].elapsed_time(events[3]))}
    return step


def cuda_graph_step(torch, forward, xs, device):
    """Captures the forward pass once with static input and output buffers; each iteration replays it."""
    static_xs = [torch.empty_like(x, device=device).copy_(x) for x in xs]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(CUDA_GRAPH_WARMUP_CALLS):  # allocations and autotuning happen before capture
            forward(*static_xs)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_outputs = forward(*static_xs)

    def upload(host_xs):
        return [s.copy_(x, non_blocking=True) for s, x in zip(static_xs, host_xs)]

    def replay(*_xs):
        graph.replay()
        return static_outputs
    return cuda_step(torch, upload, replay, xs)


def make_step(torch, forward, xs, device, cuda_graph):
    if device.type != "cuda":
        return cpu_step(torch, forward, xs, device)
    if cuda_graph:
        return cuda_graph_step(torch, forward, xs, device)
    return cuda_step(torch, lambda host: [x.to(device, non_blocking=True) for x in host], forward, xs)


def resolve_device(torch, text):
    device = torch.device(text)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise rp.RunnerError(f"PyTorch {torch.__version__} under {sys.executable} has no CUDA device")
    if device.type not in ("cpu", "cuda"):
        raise rp.RunnerError(f"device '{text}' is not valid (use cpu or cuda:N)")
    return device


class Settings:  # pylint: disable=too-few-public-methods
    """The request's options, each read and checked once, before anything is built."""

    def __init__(self, torch, request, mode):
        options = request["options"]
        self.mode = mode
        self.threads = rp.option_count(options, "threads")
        self.device = resolve_device(torch, request["device"])
        self.dtype = torch_dtype(torch, request["precision"])
        self.precision_mode = option_choice(options, "precision_mode", PRECISION_MODES)
        self.compile_mode = option_choice(options, "compile_mode", COMPILE_MODES)
        self.channels_last = rp.option_flag(options, "channels_last")
        self.cuda_graph = rp.option_flag(options, "cuda_graph")
        self.cudnn_benchmark = rp.option_flag(options, "cudnn_benchmark", True)
        if self.cuda_graph and self.device.type != "cuda":
            raise rp.RunnerError("cuda_graph=true needs a cuda device")
        if self.cuda_graph and mode == "compile" and self.compile_mode != "default":
            raise rp.RunnerError(f"cuda_graph=true captures the eager forward pass; compile_mode={self.compile_mode} "
                                 f"makes its own CUDA graphs (use compile_mode=default or torch-eager)")
        problem = probe_precision(torch, self.device, request["precision"], self.precision_mode)
        if problem:  # said before the header, not as a crash in the first warm-up iteration
            raise rp.RunnerError(problem)

    @property
    def autocast(self):
        return self.precision_mode == "autocast"


def timed(torch, device, metrics, name, action):
    """Runs action() (synchronised on CUDA) and records its duration as the metric `name` (ns)."""
    begin = time.monotonic_ns()
    result = action()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    metrics.append({"name": name, "value": time.monotonic_ns() - begin, "unit": "ns"})
    return result


def prepare_forward(torch, settings, module, xs, metrics):
    """The callable one inference runs: the module under autocast where asked, compiled where asked (its first
    call, which compiles, timed apart)."""
    forward = module
    if settings.autocast and settings.dtype != torch.float32:
        def forward(*inputs):  # pylint: disable=function-redefined
            with torch.autocast(settings.device.type, dtype=settings.dtype):
                return module(*inputs)
    if settings.mode == "compile":
        show_compile_hints(torch)
        compiled = torch.compile(forward, mode=None if settings.compile_mode == "default" else settings.compile_mode)
        device_xs = [x.to(settings.device) for x in xs]
        timed(torch, settings.device, metrics, "torch_compile_first_call_ns", lambda: compiled(*device_xs))
        from torch._dynamo.utils import counters  # pylint: disable=import-outside-toplevel
        metrics += compile_metrics(counters)
        forward = compiled
    return forward


def show_compile_hints(torch):
    """PyTorch's performance hints on stderr, which inferbench stores with the benchmark: why reduce-overhead skipped
    CUDA graphs ("skipping cudagraphs due to mutated inputs"), where a graph broke."""
    try:
        torch._logging.set_logs(perf_hints=True, graph_breaks=True)  # pylint: disable=protected-access
    except (AttributeError, TypeError, ValueError):  # a PyTorch without these log settings: nothing shown
        pass


def compile_metrics(counters):
    """What torch.compile did by its first call, from Dynamo's counters (torch._dynamo.utils.counters, Counters by
    group): the graphs it compiled, the graph breaks that split the model between them, and the CUDA graphs that
    reduce-overhead skipped (its kernels then launch one by one from the host, as in eager). Benchmark metrics."""
    return [{"name": "torch_compile_graphs", "value": counters["stats"]["unique_graphs"], "unit": "count"},
            {"name": "torch_compile_graph_breaks", "value": sum(counters["graph_break"].values()), "unit": "count"},
            {"name": "torch_compile_cudagraph_skips", "value": counters["inductor"]["cudagraph_skips"],
             "unit": "count"}]


def run(request, args, session):
    torch = import_torch()
    check_mode(args.mode)
    if compile_unavailable(torch, args.mode):
        raise rp.RunnerError(compile_unavailable(torch, args.mode))
    settings = Settings(torch, request, args.mode)
    if settings.threads:
        torch.set_num_threads(settings.threads)
    if settings.device.type == "cuda":
        torch.backends.cudnn.benchmark = settings.cudnn_benchmark
    metrics = []
    with torch.inference_mode():
        resolved = timed(torch, settings.device, metrics, "torch_model_build_ns", lambda: load_model(request))
        module = resolved.module.to(device=settings.device)
        if not settings.autocast:
            module = module.to(settings.dtype)
        if settings.channels_last:
            module = module.to(memory_format=torch.channels_last)
        feeds = host_inputs(torch, resolved, request, None if settings.autocast else settings.dtype, settings.device,
                            settings.channels_last)
        # The steps read the list xs each iteration: the next sample goes in place between iterations, untimed.
        xs = list(feeds.current)

        def next_sample():
            feeds.advance()
            xs[:] = feeds.current
        forward = prepare_forward(torch, settings, module, xs, metrics)
        if settings.cuda_graph:
            step = timed(torch, settings.device, metrics, "cuda_graph_capture_ns",
                         lambda: make_step(torch, forward, xs, settings.device, True))
        else:
            step = make_step(torch, forward, xs, settings.device, False)
        device = settings.device
        name = torch.cuda.get_device_name(device) if device.type == "cuda" else rp.cpu_name()
        header = rp.base_header("torch", torch.__version__, str(device), name)
        header.update(mode=args.mode, model_source=resolved.source, threads=torch.get_num_threads(), metrics=metrics,
                      compile_mode=settings.compile_mode if args.mode == "compile" else None,
                      precision_mode=settings.precision_mode,
                      cudnn_benchmark=settings.cudnn_benchmark if device.type == "cuda" else None, **feeds.header())
        session.ready(header)
        session.measure(step, next_sample)


if __name__ == "__main__":
    sys.exit(rp.main(sys.modules[__name__]))
