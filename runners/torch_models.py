"""inferbench's zoo models built in PyTorch: the same architectures as src/models/zoo_resnet.cpp and
zoo_mobilenet.cpp (ResNet-50 v1.5, MobileNet v1 1.0 224), with weights drawn from the same
distributions (He-uniform convolutions, LeCun-uniform classifier, BN near identity), seeded.

The values differ from the ONNX zoo's (another generator), the work per inference does not.
torchvision's resnet50 is used when torchvision is importable (it is this architecture); MobileNet v1
is always built here, since torchvision only has v2, a different network.
"""

import math

import torch
from torch import nn

ZOO_INPUT_SHAPES = {"resnet50": (3, 224, 224), "mobilenet": (3, 224, 224)}
# ResNet's last BN of each residual branch, scaled down as in zoo_resnet.cpp (kResidualGamma).
RESIDUAL_GAMMA = 0.2
MOBILENET_BLOCKS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1),
                    (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1))


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


def conv_bn_relu6(in_channels, out_channels, kernel, stride, groups):
    return nn.Sequential(nn.Conv2d(in_channels, out_channels, kernel, stride=stride, padding=kernel // 2,
                                   groups=groups, bias=False),
                         nn.BatchNorm2d(out_channels, eps=1e-3), nn.ReLU6(inplace=True))


class MobileNetV1(nn.Module):
    """TF-slim's mobilenet_v1 layout: BN epsilon 0.001, ReLU6, softmax output."""

    def __init__(self):
        super().__init__()
        layers = [conv_bn_relu6(3, 32, 3, 2, 1)]
        channels = 32
        for out_channels, stride in MOBILENET_BLOCKS:
            layers.append(conv_bn_relu6(channels, channels, 3, stride, channels))
            layers.append(conv_bn_relu6(channels, out_channels, 1, 1, 1))
            channels = out_channels
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(channels, 1000)

    def forward(self, x):
        x = torch.flatten(self.avgpool(self.features(x)), 1)
        return torch.softmax(self.fc(x), dim=1)


def init_like_zoo(model, residual_bns=()):
    """The ONNX zoo's weight distributions, so activations stay O(1) as there (no denormals)."""
    residual_bns = set(id(bn) for bn in residual_bns)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.Conv2d):
                fan_in = module.in_channels // module.groups * module.kernel_size[0] * module.kernel_size[1]
                bound = math.sqrt(6.0 / fan_in)
                module.weight.uniform_(-bound, bound)
            elif isinstance(module, nn.BatchNorm2d):
                gamma = RESIDUAL_GAMMA if id(module) in residual_bns else 1.0
                module.weight.uniform_(0.9 * gamma, 1.1 * gamma)
                module.bias.uniform_(-0.05, 0.05)
                module.running_mean.uniform_(-0.05, 0.05)
                module.running_var.uniform_(0.9, 1.1)
            elif isinstance(module, nn.Linear):
                module.weight.uniform_(-math.sqrt(3.0 / module.in_features), math.sqrt(3.0 / module.in_features))
                module.bias.uniform_(-1.0 / math.sqrt(module.in_features), 1.0 / math.sqrt(module.in_features))
    return model


def resnet50():
    try:
        import torchvision  # pylint: disable=import-outside-toplevel
        model = torchvision.models.resnet50(weights=None)
    except ImportError:
        model = ResNet50()
    residual_bns = [block.bn3 for layer in (model.layer1, model.layer2, model.layer3, model.layer4) for block in layer]
    return init_like_zoo(model, residual_bns)


def mobilenet():
    return init_like_zoo(MobileNetV1())


def build_zoo_model(name, seed):
    builders = {"resnet50": resnet50, "mobilenet": mobilenet}
    torch.manual_seed(seed)
    return builders[name]()


def parameter_count(model):
    """As inferbench's zoo counts: weights, biases, BN gamma and beta (not running statistics)."""
    return sum(p.numel() for p in model.parameters())
