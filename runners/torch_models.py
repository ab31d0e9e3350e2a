"""inferbench's zoo models built in PyTorch: the same architectures, parameter counts and output order as
the ONNX zoo (src/models/zoo*.cpp), with weights drawn from the same distributions, seeded. The values
differ from the ONNX zoo's (another generator), the work per inference does not; tests load the ONNX zoo's
weights into these modules and compare their outputs with inferbench's own run of the ONNX file
(tests/runners/zoo_vs_onnx_test.py).

Each entry gives the module, its inputs (name, dtype, per-sample shape) as the ONNX zoo declares them, and
its outputs' names. MobileNet v1 is always built here (torchvision only has v2, another network); ResNet-50 is
torchvision's where torchvision is importable (the same architecture).
"""

import math
from dataclasses import dataclass

import torch
from torch import nn

import torch_zoo_classifiers as classifiers
import torch_zoo_detectors as detectors
import torch_zoo_others as others

# See zoo_resnet.cpp's kResidualGamma: with untrained BN statistics, unit scales on every residual
# branch make activations grow block after block; a small last-BN scale keeps them O(1).
RESIDUAL_GAMMA = 0.2
BERT_INITIALIZER_RANGE = 0.02
BERT_SEQUENCE_LENGTH = 384  # MLPerf Inference's SQuAD sequence length, the ONNX zoo's


@dataclass(frozen=True)
class ZooEntry:
    build: object                # () -> nn.Module
    inputs: tuple                # ((name, dtype name, per-sample shape), ...); "seq" marks the sequence length
    outputs: tuple               # output names, in the module's (and the ONNX graph's) order
    size_option: str = "image"   # what a reduced size changes: "image" (side), "volume" or "sequence"


def image_input(name, side, channels=3):
    return ((name, "float32", (channels, side, side)),)


BERT_INPUTS = tuple((name, "int64", ("seq",)) for name in ("input_ids", "attention_mask", "token_type_ids"))

ZOO = {
    "resnet50": ZooEntry(classifiers.resnet50, image_input("input", 224), ("logits",)),
    "mobilenet": ZooEntry(classifiers.MobileNetV1, image_input("input", 224), ("probabilities",)),
    "ssd-mobilenet": ZooEntry(detectors.SsdMobilenet, image_input("input", 300), ("boxes", "class_logits")),
    "ssd-resnet34": ZooEntry(detectors.SsdResnet34, image_input("image", 1200), ("locs", "confs")),
    "3d-unet": ZooEntry(others.Unet3d, (("input", "float32", (1, 128, 128, 128)),), ("logits",), "volume"),
    "bert": ZooEntry(lambda: others.Bert(**others.BERT_LARGE), BERT_INPUTS, ("start_logits", "end_logits"),
                     "sequence"),
    "bert-base": ZooEntry(lambda: others.Bert(**others.BERT_BASE), BERT_INPUTS, ("start_logits", "end_logits"),
                          "sequence"),
    "yolov3": ZooEntry(detectors.YoloV3, image_input("input", 416), ("output_p5", "output_p4", "output_p3")),
    "yolov3-608": ZooEntry(detectors.YoloV3, image_input("input", 608), ("output_p5", "output_p4", "output_p3")),
}
ZOO_NAMES = tuple(ZOO)


def input_specs(name, size=0):
    """The zoo model's inputs as (name, dtype, per-sample shape); `size` > 0 replaces the published image side,
    volume side or sequence length (the same layers and weights), else the published one."""
    entry = ZOO[name]
    specs = []
    for input_name, dtype, shape in entry.inputs:
        if entry.size_option == "sequence":
            shape = tuple(size or BERT_SEQUENCE_LENGTH if d == "seq" else d for d in shape)
        elif size:
            shape = (shape[0],) + (size,) * (len(shape) - 1)
        specs.append((input_name, dtype, shape))
    return specs


def build_zoo_model(name, seed):
    """The zoo model `name`, in eval mode, with weights seeded by `seed`."""
    torch.manual_seed(seed)
    model = ZOO[name].build()
    if isinstance(model, others.Bert):
        return init_bert(model).eval()
    return init_like_zoo(model, getattr(model, "residual_norms", ())).eval()


def he_uniform_(weight, fan_in):
    bound = math.sqrt(6.0 / fan_in)
    weight.uniform_(-bound, bound)


def init_convolution(module):
    if isinstance(module, nn.ConvTranspose3d):
        fan_in = module.in_channels  # stride = kernel: one input voxel per channel feeds each output voxel
    else:
        fan_in = module.in_channels // module.groups * math.prod(module.kernel_size)
    he_uniform_(module.weight, fan_in)
    if module.bias is not None:  # torch.nn's default bias range
        module.bias.uniform_(-1.0 / math.sqrt(fan_in), 1.0 / math.sqrt(fan_in))


def init_like_zoo(model, residual_norms=()):
    """The ONNX zoo's weight distributions (He-uniform convolutions, LeCun-uniform classifier, norms near the
    identity), so activations stay O(1) as there (no denormals)."""
    residual_norms = set(id(norm) for norm in residual_norms)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, (nn.Conv2d, nn.Conv3d, nn.ConvTranspose3d)):
                init_convolution(module)
            elif isinstance(module, (nn.BatchNorm2d, nn.InstanceNorm3d)):
                gamma = RESIDUAL_GAMMA if id(module) in residual_norms else 1.0
                module.weight.uniform_(0.9 * gamma, 1.1 * gamma)
                module.bias.uniform_(-0.05, 0.05)
                if module.running_mean is not None:
                    module.running_mean.uniform_(-0.05, 0.05)
                    module.running_var.uniform_(0.9, 1.1)
            elif isinstance(module, nn.Linear):
                bound = math.sqrt(3.0 / module.in_features)
                module.weight.uniform_(-bound, bound)
                module.bias.uniform_(-1.0 / math.sqrt(module.in_features), 1.0 / math.sqrt(module.in_features))
    return model


def init_bert(model):
    """As zoo_bert.cpp: weights, biases and embeddings ~N(0, 0.02^2) (bounded at 3.46 std there), LayerNorm at
    the identity."""
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                for tensor in module.parameters():
                    bound = 3.46 * BERT_INITIALIZER_RANGE
                    tensor.normal_(0.0, BERT_INITIALIZER_RANGE).clamp_(-bound, bound)
            elif isinstance(module, nn.LayerNorm):
                module.weight.fill_(1.0)
                module.bias.fill_(0.0)
    return model


def parameter_count(model):
    """As inferbench's zoo counts: weights, biases, norm gamma and beta (not running statistics)."""
    return sum(p.numel() for p in model.parameters())


def onnx_tensor_name(model, key):
    """The ONNX zoo's initializer holding the module's state_dict entry `key`."""
    rename = getattr(model, "onnx_name", None)
    return rename(key) if rename else key
