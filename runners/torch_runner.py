#!/usr/bin/env python3
"""inferbench runner for PyTorch, eager (--mode eager) or torch.compile (--mode compile).

Models: inferbench's zoo names, built here (torch_models.py), or a TorchScript file (.pt, .pth, .ts).
One iteration: host input -> .to(device, non_blocking=True) -> model -> host output; on CUDA the
iteration ends with a synchronisation and CUDA events give H2D, compute and D2H.
Protocol: docs/external-runner-protocol.md.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner_protocol as rp  # noqa: E402  (found next to this script)

MODES = ("eager", "compile")
TORCHSCRIPT_EXTENSIONS = (".pt", ".pth", ".ts")
ZOO_NAMES = ("resnet50", "mobilenet")
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


def probe_precision(torch, device, precision):
    """Runs the layer types of the zoo models in `precision`; returns why that fails, or None."""
    nn = torch.nn
    dtype = torch_dtype(torch, precision)
    layers = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1, groups=8), nn.Conv2d(8, 16, 1), nn.BatchNorm2d(16),
                           nn.ReLU6(), nn.MaxPool2d(3, 2, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                           nn.Linear(16, 4), nn.Softmax(dim=1))
    try:
        with torch.inference_mode():
            layers.eval().to(device=device, dtype=dtype)(torch.rand(1, 8, 8, 8, device=device).to(dtype))
    except RuntimeError as error:
        return f"PyTorch {torch.__version__} cannot run {precision} convolutions on {device} ({error})"
    return None


def describe(args):
    torch = import_torch()
    check_mode(args.mode)
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
    header.update(devices=devices, precisions=precisions, notes=notes, mode=args.mode)
    unavailable = compile_unavailable(torch, args.mode)
    if unavailable:
        header["unavailable"] = unavailable
    return header


def check_mode(mode):
    if mode not in MODES:
        raise rp.RunnerError(f"--mode '{mode}' is not valid (use {'|'.join(MODES)})")


def load_model(torch, request):
    """Returns (module, per-sample input shape, where the module came from)."""
    model, options = request["model"], request["options"]
    if model in ZOO_NAMES:
        import torch_models  # pylint: disable=import-outside-toplevel
        source = "torchvision" if model == "resnet50" and has_torchvision() else "built-in"
        return torch_models.build_zoo_model(model, request["seed"]), torch_models.ZOO_INPUT_SHAPES[model], source
    if not os.path.exists(model):
        raise rp.RunnerError(f"model '{model}' is neither a zoo model ({', '.join(ZOO_NAMES)}) nor a file")
    if not model.endswith(TORCHSCRIPT_EXTENSIONS):
        raise rp.RunnerError(f"the PyTorch runner reads TorchScript files ({', '.join(TORCHSCRIPT_EXTENSIONS)}), "
                             f"not {os.path.basename(model)}")
    return torch.jit.load(model, map_location="cpu"), rp.option_shape(options, "input_shape", "3,224,224"), \
        "torchscript"


def has_torchvision():
    try:
        import torchvision  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
    except ImportError:
        return False
    return True


def flatten(torch, outputs):
    if torch.is_tensor(outputs):
        return [outputs]
    if isinstance(outputs, dict):
        outputs = list(outputs.values())
    if isinstance(outputs, (list, tuple)):
        return [t for item in outputs for t in flatten(torch, item)]
    return []


def make_input(torch, request, shape, dtype, device, channels_last):
    generator = torch.Generator().manual_seed(request["seed"])
    x = (torch.rand((request["batch_size"],) + tuple(shape), generator=generator) * 2 - 1).to(dtype)
    if channels_last and x.dim() == 4:
        x = x.contiguous(memory_format=torch.channels_last)
    return x.pin_memory() if device.type == "cuda" else x


def cpu_step(torch, model, x_host, device):
    def step():
        for output in flatten(torch, model(x_host.to(device, non_blocking=True))):
            output.cpu()
        return None
    return step


def ms_to_ns(milliseconds):
    return int(round(milliseconds * 1e6))


def cuda_step(torch, upload, forward, x_host):
    """One iteration with CUDA events around H2D, compute and D2H; ends synchronised."""
    outputs = flatten(torch, forward(upload(x_host)))
    torch.cuda.synchronize()
    host_outputs = [torch.empty(o.shape, dtype=o.dtype, pin_memory=True) for o in outputs]
    events = [torch.cuda.Event(enable_timing=True) for _ in range(4)]

    def step():
        begin = time.monotonic_ns()
        events[0].record()
        x = upload(x_host)
        events[1].record()
        device_outputs = flatten(torch, forward(x))
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


def cuda_graph_step(torch, model, x_host, device):
    """Captures the forward pass once with static input and output buffers; each iteration replays it."""
    static_x = torch.empty_like(x_host, device=device)
    static_x.copy_(x_host)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(CUDA_GRAPH_WARMUP_CALLS):  # allocations and autotuning happen before capture
            model(static_x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_outputs = model(static_x)

    def upload(x):
        return static_x.copy_(x, non_blocking=True)

    def forward(_x):
        graph.replay()
        return static_outputs
    return cuda_step(torch, upload, forward, x_host)


def make_step(torch, model, x_host, device, cuda_graph):
    if device.type != "cuda":
        return cpu_step(torch, model, x_host, device)
    if cuda_graph:
        return cuda_graph_step(torch, model, x_host, device)
    return cuda_step(torch, lambda x: x.to(device, non_blocking=True), model, x_host)


def resolve_device(torch, text):
    device = torch.device(text)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise rp.RunnerError(f"PyTorch {torch.__version__} under {sys.executable} has no CUDA device")
    if device.type not in ("cpu", "cuda"):
        raise rp.RunnerError(f"device '{text}' is not valid (use cpu or cuda:N)")
    return device


def run(request, args, session):
    torch = import_torch()
    check_mode(args.mode)
    if compile_unavailable(torch, args.mode):
        raise rp.RunnerError(compile_unavailable(torch, args.mode))
    options = request["options"]
    threads = rp.option_count(options, "threads")
    if threads:
        torch.set_num_threads(threads)
    device = resolve_device(torch, request["device"])
    dtype = torch_dtype(torch, request["precision"])
    problem = probe_precision(torch, device, request["precision"])
    if problem:  # said before the header, not as a crash in the first warm-up iteration
        raise rp.RunnerError(problem)
    channels_last = rp.option_flag(options, "channels_last")
    cuda_graph = rp.option_flag(options, "cuda_graph")
    if cuda_graph and device.type != "cuda":
        raise rp.RunnerError("cuda_graph=true needs a cuda device")
    with torch.inference_mode():
        model, shape, source = load_model(torch, request)
        model = model.eval().to(device=device, dtype=dtype)
        if channels_last:
            model = model.to(memory_format=torch.channels_last)
        if args.mode == "compile":
            model = torch.compile(model)
        x_host = make_input(torch, request, shape, dtype, device, channels_last)
        if args.mode == "compile" and device.type == "cpu":
            model(x_host)  # compiles: part of loading, not of the first measured iteration
        step = make_step(torch, model, x_host, device, cuda_graph)
        name = torch.cuda.get_device_name(device) if device.type == "cuda" else rp.cpu_name()
        header = rp.base_header("torch", torch.__version__, str(device), name)
        header.update(mode=args.mode, model_source=source, threads=torch.get_num_threads())
        session.ready(header)
        session.measure(step)


if __name__ == "__main__":
    sys.exit(rp.main(sys.modules[__name__]))
