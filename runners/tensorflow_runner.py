#!/usr/bin/env python3
"""inferbench runner for TensorFlow 2: a frozen GraphDef (.pb, with the options input_names and
output_names), a SavedModel (a folder named *.savedmodel, or its saved_model.pb) through its
serving_default signature, or a Keras file (.keras, .h5), whose fp16 runs under the mixed_float16
policy. Every model runs as a tf.function, inputs held in host memory, outputs copied to the host.
Protocol: docs/external-runner-protocol.md.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner_protocol as rp  # noqa: E402  (found next to this script)

KERAS_EXTENSIONS = (".keras", ".h5")
FP16_FORMATS = ["keras", "h5"]


def import_tensorflow():
    try:
        import numpy  # pylint: disable=import-outside-toplevel
        import tensorflow  # pylint: disable=import-outside-toplevel
    except ImportError as error:
        raise rp.FrameworkMissing(f"TensorFlow not importable by {sys.executable}: {error}") from None
    return tensorflow, numpy


def describe(_args):
    tf, _ = import_tensorflow()
    devices = ["cpu"] + (["cuda"] if tf.config.list_physical_devices("GPU") else [])
    header = rp.base_header("tensorflow", tf.__version__, "cpu", rp.cpu_name())
    header.update(devices=devices, precisions={kind: ["fp32", "fp16"] for kind in devices},
                  precision_formats={"fp16": FP16_FORMATS},
                  notes={f"{kind}/bf16": "the runner offers fp16 (mixed_float16) only" for kind in devices})
    return header


def tf_device(text):
    if text == "cpu":
        return "/CPU:0"
    if text.startswith("cuda"):
        return f"/GPU:{int(text.partition(':')[2] or 0)}"
    raise rp.RunnerError(f"device '{text}' is not valid (use cpu or cuda:N)")


def names_option(options, name):
    names = [part.strip() for part in str(options.get(name, "")).split(",") if part.strip()]
    if not names:
        raise rp.RunnerError(f"a frozen graph needs the option {name} (tensor names, e.g. input:0)")
    return names


def load_frozen_graph(tf, path, options):
    graph_def = tf.compat.v1.GraphDef()
    with open(path, "rb") as file:
        graph_def.ParseFromString(file.read())
    wrapped = tf.compat.v1.wrap_function(lambda: tf.compat.v1.import_graph_def(graph_def, name=""), [])
    inputs = [wrapped.graph.get_tensor_by_name(n) for n in names_option(options, "input_names")]
    outputs = [wrapped.graph.get_tensor_by_name(n) for n in names_option(options, "output_names")]
    pruned = wrapped.prune(inputs, outputs)
    specs = [(t.name, t.shape.as_list(), t.dtype.as_numpy_dtype) for t in inputs]
    return (lambda xs: pruned(*xs)), specs


def load_saved_model(tf, path):
    folder = os.path.dirname(path) if path.endswith("saved_model.pb") else path
    loaded = tf.saved_model.load(folder)
    if "serving_default" not in loaded.signatures:
        raise rp.RunnerError(f"SavedModel {folder} has no serving_default signature")
    function = loaded.signatures["serving_default"]
    inputs = sorted(function.structured_input_signature[1].items())
    names = [name for name, _ in inputs]
    specs = [(name, spec.shape.as_list(), spec.dtype.as_numpy_dtype) for name, spec in inputs]
    return (lambda xs: function(**dict(zip(names, xs)))), specs


def drop_float_dtypes(config):
    """Removes layers' float dtypes so that from_config gives them the global (mixed) policy."""
    if isinstance(config, dict):
        dtype = config.get("dtype")
        if isinstance(dtype, dict) or (isinstance(dtype, str) and dtype.startswith("float")):
            del config["dtype"]
        for value in config.values():
            drop_float_dtypes(value)
    elif isinstance(config, list):
        for value in config:
            drop_float_dtypes(value)
    return config


def load_keras(tf, path, precision):
    model = tf.keras.models.load_model(path, compile=False)
    if precision == "fp16":
        tf.keras.mixed_precision.set_global_policy("mixed_float16")
        mixed = model.__class__.from_config(drop_float_dtypes(model.get_config()))
        mixed.set_weights(model.get_weights())
        model = mixed
    function = tf.function(lambda *xs: model(list(xs) if len(xs) > 1 else xs[0], training=False))
    specs = [(t.name, t.shape.as_list(), t.dtype.as_numpy_dtype) for t in model.inputs]
    return (lambda xs: function(*xs)), specs


def load_model(tf, request):
    path, precision = request["model"], request["precision"]
    is_saved_model = path.endswith((".savedmodel", os.sep + "saved_model.pb")) or path == "saved_model.pb"
    if not os.path.exists(path):
        raise rp.RunnerError(f"tensorflow-python reads model files (.pb, *.savedmodel, .keras, .h5); "
                             f"'{path}' is not a file or folder")
    if precision == "fp16" and not path.endswith(KERAS_EXTENSIONS):
        raise rp.RunnerError("fp16 needs a Keras file (.keras, .h5): a graph runs in the precision it was saved in")
    if precision not in ("fp32", "fp16"):
        raise rp.RunnerError(f"tensorflow-python runs fp32 and fp16, not {precision}")
    if path.endswith(KERAS_EXTENSIONS):
        return load_keras(tf, path, precision)
    if is_saved_model:
        return load_saved_model(tf, path)
    if path.endswith(".pb"):
        return load_frozen_graph(tf, path, request["options"])
    raise rp.RunnerError(f"tensorflow-python does not read {os.path.basename(path)}")


def make_inputs(numpy, specs, request):
    rng = numpy.random.default_rng(request["seed"])
    sample_shape = request["options"].get("input_shape")
    arrays = []
    for name, shape, dtype in specs:
        shape = [request["batch_size"]] + list(shape[1:]) if shape else []
        if any(dim is None for dim in shape):
            if not sample_shape or len(specs) != 1:
                raise rp.RunnerError(f"input '{name}' has open dimensions {shape}; set the option input_shape")
            shape = [request["batch_size"]] + list(rp.option_shape(request["options"], "input_shape"))
        arrays.append((rng.random(shape) * 2 - 1).astype(dtype))
    return arrays


def flatten(outputs):
    if isinstance(outputs, dict):
        outputs = list(outputs.values())
    if isinstance(outputs, (list, tuple)):
        return [t for item in outputs for t in flatten(item)]
    return [outputs]


def run(request, _args, session):
    tf, numpy = import_tensorflow()
    threads = rp.option_count(request["options"], "threads")
    if threads:
        tf.config.threading.set_intra_op_parallelism_threads(threads)
    device = tf_device(request["device"])
    if device.startswith("/GPU") and not tf.config.list_physical_devices("GPU"):
        raise rp.RunnerError(f"TensorFlow {tf.__version__} under {sys.executable} sees no GPU")
    call, specs = load_model(tf, request)
    with tf.device("/CPU:0"):  # inputs stay in host memory: each iteration copies them to the device
        inputs = [tf.constant(array) for array in make_inputs(numpy, specs, request)]

    def step():
        with tf.device(device):
            for output in flatten(call(inputs)):
                output.numpy()
        return None

    step()  # traces the tf.function: part of loading, not of the first measured iteration
    session.ready(rp.base_header("tensorflow", tf.__version__, request["device"],
                                 rp.cpu_name() if device == "/CPU:0" else device))
    session.measure(step)


if __name__ == "__main__":
    sys.exit(rp.main(sys.modules[__name__]))
