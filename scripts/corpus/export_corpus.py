#!/usr/bin/env python3
"""Writes a corpus of real-world ONNX exports: models as users bring them, made by the exporters they
use (torch.onnx.export's TorchScript-based exporter and, where PyTorch has it, the dynamo exporter),
from torchvision, Hugging Face transformers (built from configs) and timm, with random weights. No hub
downloads: every model is built from its architecture alone.

Usage: export_corpus.py --out DIR [--only REGEX] [--exporter torchscript|dynamo|all] [--small] [--list]
                        [--recount]

DIR gets one .onnx file per (model, exporter) and manifest.json, which says for each entry: the file,
family, exporter, opset, inputs (name, shape at batch 1, dtype), whether the batch is dynamic, and
a reference count of the model's work per inference, with its convention and source:
  - torch.utils.flop_counter (PyTorch >= 2.1) on the same module (plus the products of the CPU
    attention kernel, which it leaves out), or
  - this script's own counter where PyTorch is older: the same convention (2 x multiply-adds of
    convolutions, matrix products and attention; nothing else), counted at the aten level.
Models whose library is missing, or whose export fails, are listed with status "skipped"/"failed" and
the reason, so a run on any machine says what it could not make. Files already written with the same
settings are kept (the manifest records a key per entry).
"""

import argparse
import inspect
import json
import os
import re
import sys
import tempfile
import time
import traceback
import warnings

import torch

SEQ = 128           # sequence length of the text models (fixed; the batch stays dynamic)
AUDIO_FRAMES = 3000  # Whisper's 30 s of log-mel frames
TORCH_VERSION = tuple(int(p) for p in re.findall(r"\d+", torch.__version__)[:2])
MAX_OPSET = 17 if TORCH_VERSION < (2, 0) else 20


# ---------------------------------------------------------------- reference counts (aten level)

def _prod(values):
    result = 1
    for v in values:
        result *= int(v)
    return result


def _conv_flops(args, out):
    weight = args[1]
    # Every output element takes in_channels/groups x kernel multiply-adds.
    return 2 * _prod(out.shape) * _prod(weight.shape[1:])


def _mm_flops(a, b):
    return 2 * _prod(a.shape[:-1]) * a.shape[-1] * b.shape[-1]


def _sdpa_flops(q, k, v):
    # Q K^T and (softmax) V: two batched products.
    batch = _prod(q.shape[:-2])
    return 2 * batch * q.shape[-2] * k.shape[-2] * q.shape[-1] + 2 * batch * q.shape[-2] * k.shape[-2] * v.shape[-1]


def _own_counter_rules():
    aten = torch.ops.aten
    rules = {
        aten.convolution.default: lambda args, out: _conv_flops(args, out),
        aten.mm.default: lambda args, out: _mm_flops(args[0], args[1]),
        aten.bmm.default: lambda args, out: _mm_flops(args[0], args[1]),
        aten.addmm.default: lambda args, out: _mm_flops(args[1], args[2]),
        aten.baddbmm.default: lambda args, out: _mm_flops(args[1], args[2]),
    }
    sdpa = getattr(aten, "_scaled_dot_product_attention", None) or getattr(aten, "scaled_dot_product_attention", None)
    if sdpa is not None and hasattr(sdpa, "default"):
        rules[sdpa.default] = lambda args, out: _sdpa_flops(args[0], args[1], args[2])
    return rules


class _OwnFlopCounter:
    """flop_counter's convention for PyTorch versions without torch.utils.flop_counter."""

    def __init__(self):
        from torch.utils._python_dispatch import TorchDispatchMode

        rules = _own_counter_rules()
        counter = self

        class Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                rule = rules.get(func)
                if rule is not None:
                    counter.total += rule(args, out)
                return out

        self.total = 0
        self.mode = Mode()


def reference_flops(model, example):
    """(flops, source) of one forward pass at the example's batch (1).

    Grad mode stays on, as in the export: in eval mode without grad, nn.MultiheadAttention takes a
    fused fast path that no exporter of PyTorch 1.13 can write, and that hides its products."""
    try:
        from torch.utils.flop_counter import FlopCounterMode
    except ImportError:
        own = _OwnFlopCounter()
        with own.mode:
            model(*example)
        return int(own.total), (f"export_corpus.py's aten counter, flop_counter's convention "
                                f"(PyTorch {torch.__version__} has no torch.utils.flop_counter)")
    mapping, added = _cpu_attention_mapping()
    counter = FlopCounterMode(display=False, custom_mapping=mapping)
    with counter:
        model(*example)
    source = f"torch.utils.flop_counter (PyTorch {torch.__version__})"
    if added:
        source += f", plus the Q K^T and P V products of {added}, which it leaves out"
    return int(counter.get_total_flops()), source


def _cpu_attention_mapping():
    """flop_counter counts SDPA's CUDA kernels but not the CPU one, which scaled_dot_product_attention
    dispatches to on the CPU: without it, the attention products of every transformer counted here
    (on the CPU) would be missing from the reference (Whisper's encoder: more than a third of its
    work). The CPU kernel gets the same formula as the others, Q K^T and P V (flop_counter keys its
    formulas by operator packet)."""
    from torch.utils import flop_counter

    cpu = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu", None)
    if cpu is None or cpu in getattr(flop_counter, "flop_registry", {}):
        return {}, None

    def cpu_sdpa_flops(query_shape, key_shape, value_shape, *args, out_shape=None, **kwargs):
        batch = _prod(query_shape[:-2])
        length, keys = query_shape[-2], key_shape[-2]
        return 2 * batch * length * keys * query_shape[-1] + 2 * batch * length * keys * value_shape[-1]

    return {cpu: cpu_sdpa_flops}, "aten._scaled_dot_product_flash_attention_for_cpu"


# ---------------------------------------------------------------- the models

def image(size=224, channels=3):
    return lambda: (torch.randn(1, channels, size, size),)


def tokens(vocab=30522, with_mask=True, with_type_ids=False):
    def make():
        ids = torch.randint(0, min(vocab, 1000), (1, SEQ), dtype=torch.int64)
        args = [ids]
        if with_mask:
            args.append(torch.ones(1, SEQ, dtype=torch.int64))
        if with_type_ids:
            args.append(torch.zeros(1, SEQ, dtype=torch.int64))
        return tuple(args)
    return make


class Entry:
    def __init__(self, name, family, build, example, input_names, opset, dynamic_batch=True, output_names=None,
                 wrapper=None, graphable=True):
        self.name = name
        self.family = family
        self.build = build
        self.example = example
        self.input_names = input_names
        self.opset = min(opset, MAX_OPSET)
        self.dynamic_batch = dynamic_batch
        self.output_names = output_names or ["output"]
        self.wrapper = wrapper
        # False where the outputs' sizes depend on the data (NMS): no CUDA graph can replay the model.
        self.graphable = graphable


def _tv(name, **kwargs):
    def build():
        import torchvision

        builder = getattr(torchvision.models, name)
        try:
            return builder(weights=None, **kwargs)
        except TypeError:
            return builder(pretrained=False, **kwargs)
    return build


def _tv_detection(name, **kwargs):
    def build():
        import torchvision

        builder = getattr(torchvision.models.detection, name)
        return builder(weights=None, weights_backbone=None, **kwargs)
    return build


def _tv_segmentation(name, **kwargs):
    def build():
        import torchvision

        builder = getattr(torchvision.models.segmentation, name)
        return builder(weights=None, weights_backbone=None, **kwargs)
    return build


class FirstOutput(torch.nn.Module):
    """Keeps the tensor users take from a model that returns a dict, tuple or ModelOutput."""

    def __init__(self, model, key=None):
        super().__init__()
        self.model = model
        self.key = key

    def forward(self, *args):
        out = self.model(*args)
        if isinstance(out, dict) or hasattr(out, "keys"):
            return out[self.key] if self.key else next(iter(out.values()))
        if isinstance(out, (tuple, list)):
            return out[0]
        return out


class DetectionOutputs(torch.nn.Module):
    """A detector taking a batch tensor and returning the first image's boxes, scores and labels."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, images):
        result = self.model(list(images))[0]
        return result["boxes"], result["scores"], result["labels"]


# --small: the same architectures at 2 layers and width 64, for test fixtures that keep each exporter's
# graph patterns (shape subgraphs, attention, masks) in a few hundred kilobytes.
SMALL = {"enabled": False}
SMALL_HF = {
    "BertConfig": dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128),
    "RobertaConfig": dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128),
    "DistilBertConfig": dict(dim=64, n_layers=2, n_heads=2, hidden_dim=128),
    "GPT2Config": dict(n_embd=64, n_layer=2, n_head=2),
    "T5Config": dict(d_model=64, d_ff=128, d_kv=32, num_layers=2, num_heads=2),
    "ViTConfig": dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128),
    "CLIPTextConfig": dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128),
    "CLIPVisionConfig": dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128),
    "WhisperConfig": dict(d_model=64, encoder_layers=2, encoder_attention_heads=2, encoder_ffn_dim=128,
                          decoder_layers=1, decoder_attention_heads=2, decoder_ffn_dim=128),
}
SMALL_TIMM = {
    "vit_base_patch16_224": dict(depth=2, embed_dim=64, num_heads=2),
    "deit_small_patch16_224": dict(depth=2, embed_dim=64, num_heads=2),
    "convnext_tiny": dict(depths=(1, 1, 1, 1), dims=(16, 32, 64, 128)),
}
# Models that --small leaves out (timm's EfficientNet builder fixes its own width and depth).
SMALL_LEFT_OUT = {"timm_efficientnet_b0"}


def _hf_config(config_name, **config):
    import transformers

    if SMALL["enabled"]:
        # A small vocabulary too: embedding tables would otherwise be most of the file.
        # (Whisper's encoder has no token embedding, and its decoder's padding id needs the full vocabulary.)
        vocab = {} if config_name in ("ViTConfig", "CLIPVisionConfig", "WhisperConfig") else {"vocab_size": 1000}
        config = {**config, **SMALL_HF.get(config_name, {}), **vocab}
    return getattr(transformers, config_name)(**config)


def _hf(config_name, model_name, **config):
    def build():
        import transformers

        return FirstOutput(getattr(transformers, model_name)(_hf_config(config_name, **config)))
    return build


def _hf_whisper_encoder():
    import transformers

    return FirstOutput(transformers.WhisperModel(_hf_config("WhisperConfig")).get_encoder())


def _timm(name):
    def build():
        import timm

        return timm.create_model(name, pretrained=False, **(SMALL_TIMM.get(name, {}) if SMALL["enabled"] else {}))
    return build


def entries():
    tv = "torchvision"
    out = [
        Entry("tv_resnet18", tv, _tv("resnet18"), image(), ["input"], 13),
        Entry("tv_resnet50", tv, _tv("resnet50"), image(), ["input"], 17),
        Entry("tv_resnext50_32x4d", tv, _tv("resnext50_32x4d"), image(), ["input"], 15),
        Entry("tv_mobilenet_v2", tv, _tv("mobilenet_v2"), image(), ["input"], 14),
        Entry("tv_mobilenet_v3_small", tv, _tv("mobilenet_v3_small"), image(), ["input"], 16),
        Entry("tv_mobilenet_v3_large", tv, _tv("mobilenet_v3_large"), image(), ["input"], 17),
        Entry("tv_efficientnet_b0", tv, _tv("efficientnet_b0"), image(), ["input"], 17),
        Entry("tv_efficientnet_b3", tv, _tv("efficientnet_b3"), image(300), ["input"], 13),
        Entry("tv_regnet_y_400mf", tv, _tv("regnet_y_400mf"), image(), ["input"], 15),
        Entry("tv_regnet_x_1_6gf", tv, _tv("regnet_x_1_6gf"), image(), ["input"], 16),
        Entry("tv_convnext_tiny", tv, _tv("convnext_tiny"), image(), ["input"], 17),
        Entry("tv_vit_b_16", tv, _tv("vit_b_16"), image(), ["input"], 17),
        Entry("tv_swin_t", tv, _tv("swin_t"), image(), ["input"], 17),
        Entry("tv_densenet121", tv, _tv("densenet121"), image(), ["input"], 13),
        Entry("tv_shufflenet_v2_x1_0", tv, _tv("shufflenet_v2_x1_0"), image(), ["input"], 14),
        Entry("tv_squeezenet1_1", tv, _tv("squeezenet1_1"), image(), ["input"], 13),
        Entry("tv_inception_v3", tv, _tv("inception_v3", aux_logits=False, init_weights=True), image(299),
              ["input"], 16),
        Entry("tv_googlenet", tv, _tv("googlenet", aux_logits=False, init_weights=True), image(), ["input"], 15),
        Entry("tv_mnasnet1_0", tv, _tv("mnasnet1_0"), image(), ["input"], 14),
        Entry("tv_ssdlite320_mobilenet_v3_large", "torchvision-detection",
              _tv_detection("ssdlite320_mobilenet_v3_large"), image(320), ["images"], 17, dynamic_batch=False,
              output_names=["boxes", "scores", "labels"], wrapper=DetectionOutputs, graphable=False),
        Entry("tv_fasterrcnn_mobilenet_v3_large_320_fpn", "torchvision-detection",
              _tv_detection("fasterrcnn_mobilenet_v3_large_320_fpn"), image(320), ["images"], 17,
              dynamic_batch=False, output_names=["boxes", "scores", "labels"], wrapper=DetectionOutputs, graphable=False),
        Entry("tv_deeplabv3_mobilenet_v3_large", "torchvision-segmentation",
              _tv_segmentation("deeplabv3_mobilenet_v3_large", aux_loss=False), image(320), ["input"], 16,
              wrapper=lambda m: FirstOutput(m, "out")),
        Entry("tv_lraspp_mobilenet_v3_large", "torchvision-segmentation",
              _tv_segmentation("lraspp_mobilenet_v3_large"), image(320), ["input"], 15,
              wrapper=lambda m: FirstOutput(m, "out")),
        # Hugging Face transformers, default (base-size) configs, random weights.
        Entry("hf_bert_base", "transformers", _hf("BertConfig", "BertModel"), tokens(with_type_ids=True),
              ["input_ids", "attention_mask", "token_type_ids"], 17),
        Entry("hf_distilbert", "transformers", _hf("DistilBertConfig", "DistilBertModel"), tokens(),
              ["input_ids", "attention_mask"], 14),
        Entry("hf_roberta_base", "transformers", _hf("RobertaConfig", "RobertaModel", vocab_size=50265),
              tokens(50265), ["input_ids", "attention_mask"], 16),
        Entry("hf_gpt2", "transformers", _hf("GPT2Config", "GPT2Model"), tokens(50257, with_mask=False),
              ["input_ids"], 17),
        Entry("hf_t5_encoder", "transformers", _hf("T5Config", "T5EncoderModel"), tokens(32128),
              ["input_ids", "attention_mask"], 15),
        Entry("hf_vit_base", "transformers", _hf("ViTConfig", "ViTModel"), image(), ["pixel_values"], 17),
        Entry("hf_clip_text", "transformers", _hf("CLIPTextConfig", "CLIPTextModel"),
              lambda: (torch.randint(0, 1000, (1, 77), dtype=torch.int64),), ["input_ids"], 14),
        Entry("hf_clip_vision", "transformers", _hf("CLIPVisionConfig", "CLIPVisionModel"), image(),
              ["pixel_values"], 16),
        Entry("hf_whisper_encoder", "transformers", _hf_whisper_encoder,
              lambda: (torch.randn(1, 80, AUDIO_FRAMES),), ["input_features"], 17),
        # timm
        Entry("timm_vit_base_patch16_224", "timm", _timm("vit_base_patch16_224"), image(), ["input"], 17),
        Entry("timm_deit_small_patch16_224", "timm", _timm("deit_small_patch16_224"), image(), ["input"], 15),
        Entry("timm_convnext_tiny", "timm", _timm("convnext_tiny"), image(), ["input"], 17),
        Entry("timm_efficientnet_b0", "timm", _timm("efficientnet_b0"), image(), ["input"], 14),
    ]
    return out


# ---------------------------------------------------------------- export

def _library_version(family):
    module = {"torchvision": "torchvision", "torchvision-detection": "torchvision",
              "torchvision-segmentation": "torchvision", "transformers": "transformers", "timm": "timm"}[family]
    try:
        return module, __import__(module).__version__
    except ImportError:
        return module, None


def _dtype_name(tensor):
    return {torch.float32: "float32", torch.int64: "int64", torch.float16: "float16"}.get(tensor.dtype, str(tensor.dtype))


def _export_torchscript(model, example, entry, path):
    """torch.onnx.export's TorchScript-based exporter: one file, weights inside."""
    dynamic_axes = None
    if entry.dynamic_batch:
        dynamic_axes = {name: {0: "batch"} for name in entry.input_names + entry.output_names}
    # From PyTorch 2.9 on, dynamo=True is the default; this entry is the other exporter.
    extra = {"dynamo": False} if TORCH_VERSION >= (2, 5) else {}
    torch.onnx.export(model, example, path, input_names=entry.input_names, output_names=entry.output_names,
                      dynamic_axes=dynamic_axes, opset_version=entry.opset, do_constant_folding=True, **extra)


def _export_dynamo(model, example, entry, path):
    """The dynamo exporter as a user calls it (torch.onnx.export(model, args, path, dynamo=True)), so with
    its default of the weights in an external file beside the model (PATH.data)."""
    dynamic_shapes = None
    if entry.dynamic_batch:
        # torch.export specialises a dimension of size 1; trace at batch 2 to keep it symbolic.
        example = tuple(torch.cat([t, t]) for t in example)
        batch = torch.export.Dim("batch", min=1, max=1024)
        dynamic_shapes = tuple({0: batch} for _ in example)
        # torch.export matches dynamic_shapes to forward's parameters: a forward(*args) takes one tuple.
        parameters = inspect.signature(model.forward).parameters.values()
        if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters):
            dynamic_shapes = (dynamic_shapes,)
    torch.onnx.export(model, example, path, input_names=entry.input_names, output_names=entry.output_names,
                      dynamic_shapes=dynamic_shapes, opset_version=max(entry.opset, 18), dynamo=True)


def exporters_available():
    names = ["torchscript"]
    if TORCH_VERSION >= (2, 5):
        names.append("dynamo")
    return names


def export_one(entry, exporter, out_dir, previous):
    file_name = f"{entry.name}.onnx" if exporter == "torchscript" else f"{entry.name}.{exporter}.onnx"
    path = os.path.join(out_dir, file_name)
    module_name, version = _library_version(entry.family)
    record = {"name": entry.name if exporter == "torchscript" else f"{entry.name}.{exporter}",
              "model": entry.name, "family": entry.family, "exporter": exporter, "file": file_name,
              "size": "small" if SMALL["enabled"] else "full",
              "torch": torch.__version__, module_name: version,
              "dynamic_batch": entry.dynamic_batch}
    if version is None:
        record.update(status="skipped", reason=f"python module {module_name} is not installed")
        return record
    key = f"{torch.__version__}/{version}/{exporter}/{entry.opset}/{entry.dynamic_batch}/{record['size']}"
    old = previous.get(record["name"])
    if old and old.get("key") == key and old.get("status") == "ok" and os.path.exists(path):
        return old
    torch.manual_seed(0)
    began = time.monotonic()
    try:
        model = entry.build()
        if entry.wrapper is not None:
            model = entry.wrapper(model)
        model.eval()
        example = entry.example()
        flops, source = reference_flops(model, example)
        # Written in a folder of its own, then moved: a reader never sees a half-written file, and an
        # external data file keeps the name the model refers to.
        with tempfile.TemporaryDirectory(dir=out_dir) as staging:
            (_export_torchscript if exporter == "torchscript" else _export_dynamo)(
                model, example, entry, os.path.join(staging, file_name))
            for written in os.listdir(staging):
                os.replace(os.path.join(staging, written), os.path.join(out_dir, written))
        import onnx

        opset = next((o.version for o in onnx.load(path, load_external_data=False).opset_import
                      if o.domain in ("", "ai.onnx")), None)
        record.update(status="ok", key=key, opset=opset,
                      inputs=[{"name": n, "shape": list(t.shape), "dtype": _dtype_name(t)}
                              for n, t in zip(entry.input_names, example)],
                      reference={"flops_per_inference": flops, "convention":
                                 "2 x multiply-adds of convolutions, matrix products and attention", "source": source},
                      bytes=sum(os.path.getsize(os.path.join(out_dir, f)) for f in os.listdir(out_dir)
                                if f == file_name or f.startswith(file_name + ".")),
                      external_data=os.path.exists(path + ".data"), export_seconds=round(time.monotonic() - began, 1))
    except Exception as e:  # noqa: BLE001 - every failure is recorded with its reason, the rest goes on
        text = "".join(traceback.format_exception_only(type(e), e)).strip()
        record.update(status="failed", reason=re.sub(r"\x1b\[[0-9;]*m", "", text)[-1200:])
    return record


def recount_one(entry, record):
    """The record of an exported file with its reference count made again (the file is kept)."""
    torch.manual_seed(0)
    model = entry.build()
    if entry.wrapper is not None:
        model = entry.wrapper(model)
    model.eval()
    flops, source = reference_flops(model, entry.example())
    return dict(record, reference=dict(record["reference"], flops_per_inference=flops, source=source))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--only", default="", help="regular expression on model names")
    parser.add_argument("--exporter", default="all", choices=["torchscript", "dynamo", "all"])
    parser.add_argument("--list", action="store_true", help="list the models and exit")
    parser.add_argument("--small", action="store_true",
                        help="transformers and timm models at 2 layers and width 64 (same graph patterns, small files)")
    parser.add_argument("--recount", action="store_true",
                        help="make the reference counts of the files already exported again; export nothing")
    args = parser.parse_args()
    SMALL["enabled"] = args.small
    warnings.simplefilter("ignore")  # exporter warnings are about tracing; failures are recorded per model
    selected = [e for e in entries() if re.search(args.only, e.name) and not (args.small and e.name in SMALL_LEFT_OUT)]
    if args.list:
        for e in selected:
            print(f"{e.name:42} {e.family:26} opset {e.opset}")
        return 0
    if not selected:
        print(f"export_corpus.py: no model matches --only '{args.only}'", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    manifest_path = os.path.join(args.out, "manifest.json")
    previous = {}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            previous = {r["name"]: r for r in json.load(f).get("models", [])}
    exporters = exporters_available() if args.exporter == "all" else [args.exporter]
    records = dict(previous)
    for entry in selected:
        for exporter in exporters:
            if exporter not in exporters_available():
                continue
            name = entry.name if exporter == "torchscript" else f"{entry.name}.{exporter}"
            if args.recount:
                if previous.get(name, {}).get("status") != "ok":
                    continue
                record = recount_one(entry, previous[name])
            else:
                record = export_one(entry, exporter, args.out, previous)
            records[record["name"]] = record
            detail = record.get("reason", f"{record.get('bytes', 0) / 1e6:.1f} MB, opset {record.get('opset')}")
            print(f"{record['status']:8} {record['name']:48} {detail}", flush=True)
            manifest = {"torch": torch.__version__, "exporters": exporters_available(),
                        "models": sorted(records.values(), key=lambda r: r["name"])}
            with open(manifest_path + ".partial", "w") as f:
                json.dump(manifest, f, indent=1)
            os.replace(manifest_path + ".partial", manifest_path)
    failed = [r for r in records.values() if r["status"] == "failed"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
