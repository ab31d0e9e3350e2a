#!/usr/bin/env python3
"""inferbench runner for ONNX Runtime's Python package: an .onnx (or .ort) file, CPU execution
provider, or CUDA where the package has it. One iteration: InferenceSession.run from host arrays to
host arrays. inferbench exports zoo models to ONNX for this backend, so it always gets a file.
Protocol: docs/external-runner-protocol.md.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner_protocol as rp  # noqa: E402  (found next to this script)

MODEL_EXTENSIONS = (".onnx", ".ort")
NUMPY_TYPES = {"tensor(float)": "float32", "tensor(float16)": "float16", "tensor(double)": "float64",
               "tensor(int8)": "int8", "tensor(uint8)": "uint8", "tensor(int32)": "int32",
               "tensor(int64)": "int64", "tensor(bool)": "bool"}


def import_onnxruntime():
    try:
        import numpy  # pylint: disable=import-outside-toplevel
        import onnxruntime  # pylint: disable=import-outside-toplevel
    except ImportError as error:
        raise rp.FrameworkMissing(f"ONNX Runtime not importable by {sys.executable}: {error}") from None
    return onnxruntime, numpy


def has_cuda(ort):
    return "CUDAExecutionProvider" in ort.get_available_providers()


def describe(_args):
    ort, _ = import_onnxruntime()
    devices = ["cpu"] + (["cuda"] if has_cuda(ort) else [])
    header = rp.base_header("onnxruntime", ort.__version__, "cpu", rp.cpu_name())
    reason = "the model runs in its own precision: export an fp16 or int8 model and run it as fp32"
    header.update(devices=devices, precisions={kind: ["fp32"] for kind in devices},
                  notes={f"{kind}/{p}": reason for kind in devices for p in ("fp16", "bf16", "int8", "fp8")})
    return header


def input_shape(info, batch_size):
    """The batch (first) dimension may be symbolic; any other symbolic dimension cannot be guessed."""
    shape = []
    for index, dim in enumerate(info.shape):
        if isinstance(dim, int) and dim > 0:
            shape.append(dim)
        elif index == 0:
            shape.append(batch_size)
        else:
            raise rp.RunnerError(f"input '{info.name}' has an open dimension {index} ({dim}); "
                                 "only the first (batch) dimension may be open")
    return tuple(shape)


def make_feeds(session, numpy, request):
    """The inputs, one dict per sample: the plan's files where the request names them, else seeded random ones."""
    declared = []
    for info in session.get_inputs():
        if info.type not in NUMPY_TYPES:
            raise rp.RunnerError(f"input '{info.name}' has type {info.type}, which the runner cannot fill")
        declared.append((info.name, NUMPY_TYPES[info.type], input_shape(info, request["batch_size"])))
    if request.get("inputs"):
        samples = rp.read_input_samples(numpy, request["inputs"], declared)
        return rp.InputCycle([{name: array for (name, _, _), array in zip(declared, sample)} for sample in samples],
                             True)
    rng = numpy.random.default_rng(request["seed"])
    feeds = {name: (rng.random(shape, dtype=numpy.float64) * 2 - 1).astype(dtype) for name, dtype, shape in declared}
    return rp.InputCycle([feeds], False)


def session_options(ort, options):
    settings = ort.SessionOptions()
    threads = rp.option_count(options, "threads")
    if threads:
        settings.intra_op_num_threads = threads
    settings.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return settings


def run(request, _args, session):
    ort, numpy = import_onnxruntime()
    model = request["model"]
    if not model.endswith(MODEL_EXTENSIONS) or not os.path.isfile(model):
        raise rp.RunnerError(f"onnxruntime-python reads an .onnx or .ort file; '{model}' is not one "
                             "(inferbench exports zoo models to ONNX for it)")
    if request["precision"] != "fp32":
        raise rp.RunnerError("onnxruntime-python runs the model in its own precision: ask for fp32")
    device = request["device"]
    if device.startswith("cuda") and not has_cuda(ort):
        raise rp.RunnerError(f"ONNX Runtime {ort.__version__} under {sys.executable} has no CUDAExecutionProvider")
    if device.startswith("cuda"):
        index = int(device.partition(":")[2] or 0)
        providers = [("CUDAExecutionProvider", {"device_id": index}), "CPUExecutionProvider"]
    else:
        providers = ["CPUExecutionProvider"]
    inference = ort.InferenceSession(model, sess_options=session_options(ort, request["options"]),
                                     providers=providers)
    feeds = make_feeds(inference, numpy, request)

    def step():
        inference.run(None, feeds.current)
        return None

    header = rp.base_header("onnxruntime", ort.__version__, device, rp.cpu_name() if device == "cpu" else device)
    header.update(feeds.header())
    session.ready(header)
    session.measure(step, feeds.advance)


if __name__ == "__main__":
    sys.exit(rp.main(sys.modules[__name__]))
