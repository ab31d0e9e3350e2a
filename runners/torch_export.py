#!/usr/bin/env python3
"""Turns a PyTorch model spec (model_specs.py) into a file a C++ backend loads, before its measured worker
starts, with a cache: an AOTInductor package (pt2, torch-aoti), TorchScript (torch) or ONNX (torch, onnxruntime).

  PYTHON torch_export.py --spec SPEC --format pt2|torchscript|onnx --precision fp32|fp16|bf16 \
      --batch N|dynamic --device cpu|cuda:N --cache-dir DIR [--seq-len N] [--option KEY=VALUE ...]

The cache key covers the source (the spec, and the content of any file it names), the PyTorch version, the
format, precision, batch, device kind (for CUDA the GPU's name and compute capability) and every option; the
key is written beside the file as FILE.key.json, and a file is reused only when that key is the same. Files
are written under a temporary name and renamed. The option `seed` (default 42) seeds the random weights.

stdout: one JSON line at the end, {"path", "cache_hit", "seconds", "torch_version", "key", "inputs"} ("seconds":
this program's time, PyTorch's import included; on a cache hit the import and the lookup alone) or
{"error", "traceback_tail"}; the traceback itself goes to stderr. Exit status: 0 done; 2 bad input (unknown
library or model, bad syntax, a missing file, a .pt2 built for another GPU or PyTorch); 1 a failure while
exporting (the factory raised, out of memory, ...); 3 this PyTorch cannot do it (no PyTorch, no
aoti_compile_and_package before PyTorch 2.6, no CUDA device, a library the spec needs is missing).
Dynamic batch: torch.export's Dim on the first dimension of every input (pt2), dynamic_axes (ONNX); shapes
in "inputs" then have -1 for the batch.
"""

import argparse
import hashlib
import inspect
import json
import os
import sys
import time
import traceback
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_specs  # noqa: E402  (found next to this script)

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_UNSUPPORTED = 3
EXTENSIONS = {"pt2": ".pt2", "torchscript": ".pt", "onnx": ".onnx"}
PRECISIONS = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}
TRACEBACK_LINES = 8
ONNX_OPSET = 17
DYNAMIC_EXAMPLE_BATCH = 2  # torch.export specializes a dimension traced at 1
MAX_BATCH = 65536          # inferbench's largest batch size
DEFAULT_SEED = 42


class Unsupported(Exception):
    """This PyTorch (or machine) cannot make the file: exit 3, the cell is skipped."""


class ExportFailed(Exception):
    """Exporting or compiling raised (out of memory, an unsupported operator, ...): exit 1."""


class ArgumentParser(argparse.ArgumentParser):
    def error(self, message):
        raise model_specs.SpecError(f"torch_export.py: {message}")


def parse_args(argv):
    parser = ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--spec", required=True)
    parser.add_argument("--format", required=True, choices=sorted(EXTENSIONS))
    parser.add_argument("--precision", default="fp32", choices=sorted(PRECISIONS))
    parser.add_argument("--batch", default="1")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--cache-dir", required=True)
    parser.add_argument("--seq-len", type=int)
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    args.options = {}
    for item in args.option:
        key, equals, value = item.partition("=")
        if not equals or not key:
            raise model_specs.SpecError(f"--option {item}: write KEY=VALUE")
        args.options[key] = value
    if args.seq_len is not None:
        args.options["seq_len"] = str(args.seq_len)
    if args.batch != "dynamic" and not (args.batch.isdigit() and 1 <= int(args.batch) <= MAX_BATCH):
        raise model_specs.SpecError(f"--batch {args.batch}: use dynamic or a whole number from 1 to {MAX_BATCH}")
    return args


def import_torch():
    try:
        import torch  # pylint: disable=import-outside-toplevel
    except ImportError as error:
        raise Unsupported(f"PyTorch not importable by {sys.executable}: {error}") from None
    return torch


def device_key(torch, text):
    """The device part of the key: its kind, and for CUDA the GPU's name and compute capability."""
    try:
        device = torch.device(text)
    except RuntimeError:
        raise model_specs.SpecError(f"--device {text}: use cpu or cuda:N") from None
    if device.type == "cpu":
        return device, {"device": "cpu"}
    if device.type != "cuda":
        raise model_specs.SpecError(f"--device {text}: use cpu or cuda:N")
    if not torch.cuda.is_available() or (device.index or 0) >= torch.cuda.device_count():
        raise Unsupported(f"PyTorch {torch.__version__} under {sys.executable} has no CUDA device {text}")
    major, minor = torch.cuda.get_device_capability(device)
    return device, {"device": "cuda", "gpu_name": torch.cuda.get_device_name(device),
                    "compute_capability": f"{major}.{minor}"}


def check_format_supported(torch, fmt):
    if fmt != "pt2":
        return
    try:
        import torch._inductor  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
    except ImportError:
        pass
    if not hasattr(getattr(torch, "_inductor", None), "aoti_compile_and_package"):
        raise Unsupported(f"PyTorch {torch.__version__} under {sys.executable} has no "
                          f"torch._inductor.aoti_compile_and_package (PyTorch >= 2.6 makes .pt2 packages)")


def make_key(args, spec, torch, device_part):
    key = {"source": model_specs.source_key(spec), "torch_version": torch.__version__, "format": args.format,
           "precision": args.precision, "batch": args.batch, "options": dict(sorted(args.options.items()))}
    key.update(device_part)
    return key


def cache_paths(cache_dir, spec, key, fmt):
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in spec.text.split("/")[-1])[:60]
    path = os.path.abspath(os.path.join(cache_dir, f"{stem}-{digest}{EXTENSIONS[fmt]}"))
    return path, path + ".key.json"


def cached(path, key_path, key):
    try:
        return os.path.isfile(path) and read_key(key_path)[1] == key
    except (OSError, ValueError, AttributeError):
        return False


def prepared(torch, resolved, batch, seed, device, dtype):
    """The module on the device in `dtype` and its inputs (floats in `dtype`), the batch first."""
    module = resolved.module.to(device=device)
    if dtype != torch.float32:
        module = module.to(dtype)
    inputs = [t.to(dtype) if t.is_floating_point() else t
              for t in model_specs.make_inputs(resolved, batch, seed)]
    return module, [t.to(device) for t in inputs]


def flatten(torch, outputs):
    if torch.is_tensor(outputs):
        return [outputs]
    if isinstance(outputs, dict):
        outputs = list(outputs.values())
    if isinstance(outputs, (list, tuple)):
        return [t for item in outputs for t in flatten(torch, item)]
    return []


def export_torchscript(torch, module, inputs, _names, path, _dynamic):
    with torch.no_grad():
        traced = torch.jit.trace(module, tuple(inputs), strict=False, check_trace=False)
    traced.save(path)


def export_onnx(torch, module, inputs, names, path, dynamic):
    with torch.no_grad():
        outputs = [f"output{i}" for i in range(len(flatten(torch, module(*inputs))))]
    axes = {name: {0: "batch"} for name in names + outputs} if dynamic else None
    kwargs = {}
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False  # the TorchScript-based exporter: dynamic_axes as given
    # Traced with gradients on, as users call torch.onnx.export: under no_grad, nn.MultiheadAttention and
    # nn.TransformerEncoderLayer take their fused fast path (aten::_native_multi_head_attention, torchvision's ViT),
    # which this exporter cannot write; with gradients on they run as the plain operators it exports.
    torch.onnx.export(module, tuple(inputs), path, input_names=names, output_names=outputs, dynamic_axes=axes,
                      opset_version=ONNX_OPSET, do_constant_folding=True, **kwargs)


def export_pt2(torch, module, inputs, _names, path, dynamic, metadata=None):
    shapes = None
    if dynamic:
        batch = torch.export.Dim("batch", min=1, max=MAX_BATCH)
        shapes = tuple({0: batch} for _ in inputs)
    with torch.no_grad():
        try:
            program = torch.export.export(module, tuple(inputs), dynamic_shapes=shapes)
        except Exception as error:  # torch.export's own errors: constraint violations, unsupported code
            if dynamic:
                raise RuntimeError(f"torch.export cannot give this model a dynamic batch ({type(error).__name__}: "
                                   f"{str(error).splitlines()[0]}); ask for one package per batch (--batch N)") \
                    from error
            raise
        torch._inductor.aoti_compile_and_package(  # pylint: disable=protected-access
            program, package_path=path, inductor_configs={"aot_inductor.metadata": metadata or {}})


def pt2_metadata(torch, key):
    """Written into the package, so a later run can tell what it was built for."""
    meta = {"inferbench_torch_version": torch.__version__}
    if key.get("device") == "cuda":
        meta.update(inferbench_gpu_name=key["gpu_name"], inferbench_compute_capability=key["compute_capability"])
    return meta


def export(torch, args, spec, key, path):
    device, _ = device_key(torch, args.device)
    seed = int(args.options.get("seed", DEFAULT_SEED)) if str(args.options.get("seed", "0")).isdigit() else None
    if seed is None:
        raise model_specs.SpecError(f"option seed: '{args.options['seed']}' is not a whole number >= 0")
    resolved = model_specs.resolve(spec, seed, args.options)
    dynamic = args.batch == "dynamic"
    batch = DYNAMIC_EXAMPLE_BATCH if dynamic else int(args.batch)
    module, inputs = prepared(torch, resolved, batch, seed, device, getattr(torch, PRECISIONS[args.precision]))
    names = [item.name for item in resolved.inputs]
    temporary = f"{path}.tmp-{os.getpid()}{EXTENSIONS[args.format]}"
    try:
        if args.format == "pt2":
            export_pt2(torch, module, inputs, names, temporary, dynamic, pt2_metadata(torch, key))
        else:
            {"torchscript": export_torchscript, "onnx": export_onnx}[args.format](
                torch, module, inputs, names, temporary, dynamic)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)
    return [{"name": n, "dtype": str(t.dtype).replace("torch.", ""), "shape": [-1 if dynamic else batch] +
             list(t.shape[1:])} for n, t in zip(names, inputs)]


def write_key(key_path, key, inputs):
    temporary = f"{key_path}.tmp-{os.getpid()}"
    with open(temporary, "w", encoding="utf-8") as stream:
        json.dump(dict(key, inputs=inputs), stream, sort_keys=True, indent=1)
    os.replace(temporary, key_path)


def read_key(key_path):
    with open(key_path, encoding="utf-8") as stream:
        stored = json.load(stream)
    return stored.pop("inputs", []), stored


def given_pt2(torch, args, spec):
    """A user's package, returned as it is once what it says it was built for matches this machine."""
    _, device_part = device_key(torch, args.device)
    metadata = {}
    with zipfile.ZipFile(spec.path) as archive:
        for member in archive.namelist():
            if member.endswith("_metadata.json"):
                metadata.update(json.loads(archive.read(member)))
    built_for = metadata.get("AOTI_DEVICE_KEY")
    if built_for and built_for != device_part["device"]:
        raise model_specs.SpecError(f"{spec.path} was built for {built_for}, not {args.device}; rebuild it there")
    checks = {"inferbench_torch_version": torch.__version__, "inferbench_gpu_name": device_part.get("gpu_name"),
              "inferbench_compute_capability": device_part.get("compute_capability")}
    for field, here in checks.items():
        if field in metadata and here is not None and metadata[field] != here:
            raise model_specs.SpecError(f"{spec.path} was built for {field[len('inferbench_'):]} {metadata[field]}, "
                                        f"this machine has {here}; rebuild the package here")
    checked = sorted(f[len("inferbench_"):] for f in checks if f in metadata) + (["device"] if built_for else [])
    return {"path": os.path.abspath(spec.path), "cache_hit": False, "seconds": 0.0, "torch_version": torch.__version__,
            "key": {"source": model_specs.source_key(spec), "checked": checked}, "inputs": []}


def run(argv):
    begin = time.monotonic()
    args = parse_args(argv)
    torch = import_torch()
    spec = model_specs.parse_spec(args.spec)
    check_format_supported(torch, args.format)
    if spec.kind == "pt2":
        if args.format != "pt2":
            raise model_specs.SpecError(f"{spec.path} is an AOTInductor package; it cannot become {args.format}")
        return given_pt2(torch, args, spec)
    _, device_part = device_key(torch, args.device)
    key = make_key(args, spec, torch, device_part)
    os.makedirs(args.cache_dir, exist_ok=True)
    path, key_path = cache_paths(args.cache_dir, spec, key, args.format)
    hit = cached(path, key_path, key)
    if hit:
        inputs, _ = read_key(key_path)
    else:
        try:
            inputs = export(torch, args, spec, key, path)
        except (model_specs.SpecError, model_specs.SpecUnavailable, model_specs.FactoryError):
            raise
        except Exception as error:  # exporting or compiling: whatever PyTorch raises
            first = (str(error).strip().splitlines() or [""])[0]
            raise ExportFailed(f"exporting {spec.text} as {args.format} ({args.precision}, batch {args.batch}, "
                               f"{args.device}) failed: {type(error).__name__}: {first}") from error
        write_key(key_path, key, inputs)
    return {"path": path, "cache_hit": hit, "seconds": round(time.monotonic() - begin, 3),
            "torch_version": torch.__version__, "key": key, "inputs": inputs}


def traceback_tail(error):
    lines = [line for chunk in traceback.format_exception(type(error), error, error.__traceback__)
             for line in chunk.rstrip("\n").split("\n") if line.strip()]
    return lines[-TRACEBACK_LINES:]


def fail(error, status):
    traceback.print_exception(type(error), error, error.__traceback__, file=sys.stderr)
    root = error.__cause__ or error
    print(json.dumps({"error": str(error), "traceback_tail": traceback_tail(root)}), flush=True)
    return status


def main(argv=None):
    try:
        print(json.dumps(run(sys.argv[1:] if argv is None else argv)), flush=True)
        return 0
    except model_specs.SpecError as error:
        return fail(error, EXIT_BAD_INPUT)
    except (Unsupported, model_specs.SpecUnavailable) as error:
        return fail(error, EXIT_UNSUPPORTED)
    except (model_specs.FactoryError, ExportFailed) as error:
        return fail(error, EXIT_FAILED)


if __name__ == "__main__":
    sys.exit(main())
