"""PyTorch model specs, read in one place for torch_runner.py (torch-eager, torch-compile) and torch_export.py
(the files torch-aoti, torch and onnxruntime run): a spec becomes an nn.Module, its inputs (name, dtype,
per-sample shape) and seeded example inputs with the batch dimension first.

  resnet50, bert, ...             inferbench's zoo, built here (torch_models.py)
  torchvision:NAME                torchvision.models.get_model(NAME, weights=None)
  timm:NAME                       timm.create_model(NAME, pretrained=False)
  hf:NAME                         transformers, the architecture of hf_configs/NAME.json (a published config
                                  shipped with inferbench; '/' in NAME is '--' in the file name), random
                                  weights, no hub access
  python:PATH.py:FACTORY          FACTORY() in PATH returns (module, example inputs): a tensor, a tuple of
                                  tensors or a dict name -> tensor, the batch dimension first
  FILE.pt / .pth / .ts            a TorchScript file
  FILE.pt2                        an AOTInductor package (torch_export.py --format pt2 returns it as it is)

Options (the runner's backend options, torch_export.py's --option KEY=VALUE): seq_len (text models' tokens,
default 384, MLPerf's BERT length, capped at the model's position table), input_shape (per-sample shape for
torchvision, TorchScript files: default 3,224,224), hf_class (the transformers class; default the config's
architectures[0]).
"""

import hashlib
import importlib.util
import inspect
import json
import os
import sys
from dataclasses import dataclass, field

LIBRARIES = ("torchvision", "timm", "hf", "python")
TORCHSCRIPT_EXTENSIONS = (".pt", ".pth", ".ts")
PT2_EXTENSION = ".pt2"
DEFAULT_SEQ_LEN = 384
DEFAULT_IMAGE_SHAPE = (3, 224, 224)
HF_CONFIG_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hf_configs")
HF_VISION_TYPES = ("vit", "deit", "beit", "convnext", "convnextv2", "swin", "resnet", "regnet", "efficientnet")
TOKEN_ID_LIMIT = 1000  # random token ids are below this, as inferbench's own random inputs


class SpecError(Exception):
    """Bad input: an unknown library or model, bad spec syntax, a missing file (torch_export.py exit 2)."""


class SpecUnavailable(Exception):
    """This interpreter cannot build the spec (its library is missing): the cell is skipped with the reason."""


class FactoryError(Exception):
    """The user's factory (or the library's constructor) raised; __cause__ holds the original exception."""


@dataclass(frozen=True)
class Spec:
    text: str
    kind: str       # "zoo", a library of LIBRARIES, "torchscript" or "pt2"
    name: str = ""  # the zoo or library model name, the factory's name
    path: str = ""  # the file (TorchScript, .pt2, python:'s module)


@dataclass(frozen=True)
class InputSpec:
    name: str
    dtype: str    # "float32", "int64", ...: torch's dtype names
    shape: tuple  # per sample, without the batch dimension


@dataclass
class ResolvedModel:
    module: object
    inputs: list
    source: str                                 # what built it, for the runner's header
    example: tuple = field(default_factory=tuple)  # the factory's own inputs (python: specs), batch first


def parse_spec(text):
    """The spec's kind and parts; SpecError for bad syntax or an unknown library."""
    library, colon, rest = text.partition(":")
    if colon and not os.path.exists(text):
        if library not in LIBRARIES:
            raise SpecError(f"model '{text}': unknown library '{library}'; use one of "
                            f"{', '.join(l + ':' for l in LIBRARIES)} (python:PATH.py:FACTORY)")
        if library == "python":
            path, _, factory = rest.rpartition(":")
            if not path.endswith(".py") or not factory.isidentifier():
                raise SpecError(f"model '{text}': write python:PATH.py:FACTORY (FACTORY a function name)")
            return Spec(text, "python", factory, path)
        if not rest:
            raise SpecError(f"model '{text}': the {library} model name is missing (e.g. {library}:resnet50)")
        return Spec(text, library, rest)
    if text.endswith(PT2_EXTENSION):
        return Spec(text, "pt2", path=require_file(text))
    if text.endswith(TORCHSCRIPT_EXTENSIONS):
        return Spec(text, "torchscript", path=require_file(text))
    import torch_models  # pylint: disable=import-outside-toplevel
    if text in torch_models.ZOO:
        return Spec(text, "zoo", text)
    raise SpecError(f"model '{text}' is neither a zoo model ({', '.join(torch_models.ZOO_NAMES)}), a spec "
                    f"(torchvision:NAME, timm:NAME, hf:NAME, python:PATH.py:FACTORY) nor a TorchScript or .pt2 file")


def require_file(path):
    if not os.path.isfile(path):
        raise SpecError(f"model file '{path}' not found; give an existing file")
    return path


def file_digest(path):
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def source_key(spec):
    """What identifies the model's source for a cache: the spec text, and the content of any file it names."""
    key = {"spec": spec.text}
    if spec.kind == "hf":
        key["config_sha256"] = file_digest(hf_config_path(spec.name))
    elif spec.path:
        key["file_sha256"] = file_digest(require_file(spec.path))
    return key


def option_int(options, name, default):
    text = str(options.get(name, default))
    if not text.isdigit() or int(text) < 1:
        raise SpecError(f"option {name}: '{text}' is not valid (use a whole number >= 1)")
    return int(text)


def option_shape(options, default):
    text = str(options.get("input_shape", ",".join(map(str, default)))).replace("x", ",")
    try:
        shape = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        shape = ()
    if not shape or min(shape) < 1:
        raise SpecError(f"option input_shape: '{text}' is not a shape (write e.g. 3,224,224)")
    return shape


def import_library(module_name, spec):
    try:
        return importlib.import_module(module_name)
    except ImportError as error:
        raise SpecUnavailable(f"{spec.text}: {module_name} not importable by {sys.executable} ({error}); install it "
                              f"there or give inferbench another interpreter (option python)") from None


def resolve(spec, seed, options):
    """The model of `spec` (from parse_spec), in eval mode on the CPU, weights seeded by `seed`."""
    import torch  # pylint: disable=import-outside-toplevel
    torch.manual_seed(seed)
    builders = {"zoo": zoo_model, "torchvision": torchvision_model, "timm": timm_model, "hf": hf_model,
                "python": python_model, "torchscript": torchscript_model}
    if spec.kind == "pt2":
        raise SpecError(f"{spec.text} is an AOTInductor package: it runs on the torch-aoti backend, not as an "
                        f"nn.Module")
    resolved = builders[spec.kind](spec, seed, options)
    resolved.module.eval()
    return resolved


def zoo_model(spec, seed, options):
    import torch_models  # pylint: disable=import-outside-toplevel
    entry = torch_models.ZOO[spec.name]
    size = option_int(options, "seq_len", DEFAULT_SEQ_LEN) if entry.size_option == "sequence" else 0
    inputs = [InputSpec(*item) for item in torch_models.input_specs(spec.name, size)]
    return ResolvedModel(torch_models.build_zoo_model(spec.name, seed), inputs, "inferbench zoo")


def constructed(spec, build):
    """Runs a library's constructor; its exceptions become SpecError (unknown name) or FactoryError."""
    try:
        return build()
    except (KeyError, ValueError, RuntimeError) as error:
        if "unknown" in str(error).lower() or isinstance(error, KeyError):
            raise SpecError(f"{spec.text}: unknown {spec.kind} model ({error})") from None
        raise FactoryError(f"{spec.text}: building the model raised {type(error).__name__}: {error}") from error


def torchvision_model(spec, _seed, options):
    torchvision = import_library("torchvision", spec)
    module = constructed(spec, lambda: torchvision.models.get_model(spec.name, weights=None))
    return ResolvedModel(module, [InputSpec("input", "float32", option_shape(options, DEFAULT_IMAGE_SHAPE))],
                         f"torchvision {torchvision.__version__}")


def timm_model(spec, _seed, options):
    timm = import_library("timm", spec)
    module = constructed(spec, lambda: timm.create_model(spec.name, pretrained=False))
    config = getattr(module, "pretrained_cfg", None) or getattr(module, "default_cfg", {}) or {}
    shape = option_shape(options, tuple(config.get("input_size", DEFAULT_IMAGE_SHAPE)))
    return ResolvedModel(module, [InputSpec("input", "float32", shape)], f"timm {timm.__version__}")


def hf_config_path(name):
    path = os.path.join(HF_CONFIG_DIR, name.replace("/", "--") + ".json")
    if not os.path.isfile(path):
        shipped = sorted(f[:-len(".json")].replace("--", "/") for f in os.listdir(HF_CONFIG_DIR) if f.endswith(".json"))
        raise SpecError(f"hf:{name}: no config shipped for it (inferbench has no hub access); shipped: "
                        f"{', '.join(shipped)}; or use python:PATH.py:FACTORY")
    return path


def hf_model(spec, _seed, options):
    with open(hf_config_path(spec.name), encoding="utf-8") as stream:
        values = json.load(stream)
    transformers = import_library("transformers", spec)
    class_name = options.get("hf_class") or (values.get("architectures") or ["AutoModel"])[0]
    model_class = getattr(transformers, class_name, None)
    if model_class is None:
        raise SpecError(f"{spec.text}: transformers {transformers.__version__} has no class {class_name}")
    config = transformers.AutoConfig.for_model(**values)
    config.return_dict = False  # tuples: what tracing and exporting handle
    module = constructed(spec, lambda: model_class(config) if class_name != "AutoModel"
                         else transformers.AutoModel.from_config(config))
    return ResolvedModel(module, hf_inputs(module, config, options), f"transformers {transformers.__version__}")


def hf_inputs(module, config, options):
    if config.model_type in HF_VISION_TYPES:
        side = getattr(config, "image_size", 224)
        return [InputSpec("pixel_values", "float32", (getattr(config, "num_channels", 3), side, side))]
    limit = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", DEFAULT_SEQ_LEN)
    seq_len = min(option_int(options, "seq_len", DEFAULT_SEQ_LEN), limit)
    accepted = inspect.signature(module.forward).parameters
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in accepted]
    if getattr(config, "type_vocab_size", 2) < 2 and "token_type_ids" in names:  # RoBERTa: one type, left out
        names.remove("token_type_ids")
    return [InputSpec(name, "int64", (seq_len,)) for name in names]


def python_model(spec, _seed, _options):
    path = require_file(spec.path)
    loader = importlib.util.spec_from_file_location(f"inferbench_factory_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(loader)
    try:
        loader.loader.exec_module(module)
    except Exception as error:  # the user's file: whatever it raises
        raise FactoryError(f"{spec.text}: importing {path} raised {type(error).__name__}: {error}") from error
    factory = getattr(module, spec.name, None)
    if not callable(factory):
        raise SpecError(f"{spec.text}: {path} has no function {spec.name}")
    try:
        made = factory()
    except Exception as error:  # the user's factory: whatever it raises
        raise FactoryError(f"{spec.text}: {spec.name}() raised {type(error).__name__}: {error}") from error
    return factory_result(spec, made)


def factory_result(spec, made):
    import torch  # pylint: disable=import-outside-toplevel
    if not (isinstance(made, tuple) and len(made) == 2 and isinstance(made[0], torch.nn.Module)):
        raise SpecError(f"{spec.text}: {spec.name}() must return (nn.Module, example inputs); it returned "
                        f"{type(made).__name__}")
    module, example = made
    if isinstance(example, dict):
        names, tensors = list(example), list(example.values())
    else:
        tensors = [example] if torch.is_tensor(example) else list(example)
        parameters = [p for p in inspect.signature(module.forward).parameters if p not in ("args", "kwargs")]
        names = [parameters[i] if i < len(parameters) else f"input{i}" for i in range(len(tensors))]
    if not tensors or not all(torch.is_tensor(t) and t.dim() >= 1 for t in tensors):
        raise SpecError(f"{spec.text}: the example inputs must be tensors with the batch dimension first")
    inputs = [InputSpec(n, str(t.dtype).replace("torch.", ""), tuple(t.shape[1:])) for n, t in zip(names, tensors)]
    return ResolvedModel(module, inputs, f"python {os.path.basename(spec.path)}:{spec.name}", tuple(tensors))


def torchscript_model(spec, _seed, options):
    import torch  # pylint: disable=import-outside-toplevel
    try:
        module = torch.jit.load(spec.path, map_location="cpu")
    except RuntimeError as error:
        raise SpecError(f"{spec.path} is not a TorchScript file torch {torch.__version__} loads: "
                        f"{str(error).splitlines()[0]}") from None
    return ResolvedModel(module, [InputSpec("input", "float32", option_shape(options, DEFAULT_IMAGE_SHAPE))],
                         "torchscript")


def make_inputs(resolved, batch, seed):
    """The model's inputs for `batch` samples on the CPU: the factory's own example tiled along the batch, else
    seeded random values as inferbench's (floats uniform in [-1, 1); token ids below 1000, masks all ones,
    token type ids 0 or 1)."""
    import torch  # pylint: disable=import-outside-toplevel
    if resolved.example:
        return [t.repeat((batch // t.shape[0] + 1,) + (1,) * (t.dim() - 1))[:batch].contiguous()
                for t in resolved.example]
    generator = torch.Generator().manual_seed(seed)
    tensors = []
    for spec in resolved.inputs:
        shape = (batch,) + tuple(spec.shape)
        dtype = getattr(torch, spec.dtype)
        if dtype.is_floating_point:
            tensors.append((torch.rand(shape, generator=generator) * 2 - 1).to(dtype))
        elif "mask" in spec.name:
            tensors.append(torch.ones(shape, dtype=dtype))
        else:
            limit = 2 if "type" in spec.name or "segment" in spec.name else TOKEN_ID_LIMIT
            tensors.append(torch.randint(0, limit, shape, generator=generator, dtype=dtype))
    return tensors
