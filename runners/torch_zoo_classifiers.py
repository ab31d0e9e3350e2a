"""inferbench's zoo classifiers as nn.Modules: ResNet-50 v1.5 (src/models/zoo_resnet.cpp) and MobileNet v1
1.0 224 (zoo_mobilenet.cpp), with the ONNX zoo's layers, channels and parameter counts. Module names follow
the ONNX zoo's tensor names where PyTorch allows (ResNet-50: torchvision's, which the zoo uses); onnx_name()
maps the others.
"""

import torch
from torch import nn

MOBILENET_BLOCKS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1),
                    (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1))
MOBILENET_BN_EPSILON = 1e-3


class Bottleneck(nn.Module):
    """ResNet v1.5 bottleneck: the stride sits on the 3x3 convolution, as in torchvision."""

    expansion = 4

    def __init__(self, in_channels, width, stride):
        super().__init__()
        out_channels = width * self.expansion
        self.conv1 = nn.Conv2d(in_channels, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, out_channels, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or in_channels != out_channels:
            self.downsample = nn.Sequential(nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False),
                                            nn.BatchNorm2d(out_channels))

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        shortcut = x if self.downsample is None else self.downsample(x)
        return self.relu(y + shortcut)


class ResNet50(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        channels = 64
        for index, (blocks, width, stride) in enumerate(((3, 64, 1), (4, 128, 2), (6, 256, 2), (3, 512, 2))):
            layer = []
            for block in range(blocks):
                layer.append(Bottleneck(channels, width, stride if block == 0 else 1))
                channels = width * Bottleneck.expansion
            setattr(self, f"layer{index + 1}", nn.Sequential(*layer))
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(channels, 1000)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def resnet50():
    """torchvision's resnet50 where torchvision is importable (it is this architecture), else ResNet50."""
    try:
        import torchvision  # pylint: disable=import-outside-toplevel
        model = torchvision.models.resnet50(weights=None)
    except ImportError:
        model = ResNet50()
    model.residual_norms = [block.bn3 for layer in (model.layer1, model.layer2, model.layer3, model.layer4)
                            for block in layer]
    return model


def conv_bn_relu6(in_channels, out_channels, kernel, stride, groups=1):
    """MobileNet v1's unit: convolution -> BN (epsilon 0.001) -> ReLU6."""
    return nn.Sequential(nn.Conv2d(in_channels, out_channels, kernel, stride=stride, padding=kernel // 2,
                                   groups=groups, bias=False),
                         nn.BatchNorm2d(out_channels, eps=MOBILENET_BN_EPSILON), nn.ReLU6(inplace=True))


def mobilenet_v1_units():
    """Conv2d_0 and the 13 separable blocks (depthwise, pointwise): 27 units, as mobilenet_v1_features()."""
    units = [conv_bn_relu6(3, 32, 3, 2)]
    channels = 32
    for out_channels, stride in MOBILENET_BLOCKS:
        units.append(conv_bn_relu6(channels, channels, 3, stride, channels))
        units.append(conv_bn_relu6(channels, out_channels, 1, 1))
        channels = out_channels
    return units


def mobilenet_unit_scope(index):
    """The TF-slim scope of unit `index` of mobilenet_v1_units()."""
    if index == 0:
        return "Conv2d_0"
    return f"Conv2d_{(index + 1) // 2}_{'depthwise' if index % 2 else 'pointwise'}"


def unit_tensor_name(scope, rest):
    """A unit's tensor under its scope: '0.weight' is the convolution's, '1.*' the BatchNorm's."""
    layer, _, tensor = rest.partition(".")
    return f"{scope}.{tensor}" if layer == "0" else f"{scope}/BatchNorm.{tensor}"


class MobileNetV1(nn.Module):
    """TF-slim's mobilenet_v1 layout: BN epsilon 0.001, ReLU6, softmax output."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(*mobilenet_v1_units())
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(1024, 1000)

    def forward(self, x):
        x = torch.flatten(self.avgpool(self.features(x)), 1)
        return torch.softmax(self.fc(x), dim=1)

    @staticmethod
    def onnx_name(key):
        if key.startswith("fc."):
            return "Logits/Conv2d_1c_1x1." + key[len("fc."):]
        _, index, rest = key.split(".", 2)
        return unit_tensor_name(mobilenet_unit_scope(int(index)), rest)
