"""inferbench's zoo detectors as nn.Modules, layer for layer as the ONNX zoo builds them: SSD-MobileNet v1
(src/models/zoo_ssd_mobilenet.cpp), SSD-ResNet34 (zoo_ssd_resnet34.cpp) and YOLOv3 (zoo_yolov3.cpp). Each
ends at its raw predictions (no box decoding, no NMS), with the ONNX graph's outputs in its order. Module
names are the ONNX zoo's tensor names (the references' state_dict names) where PyTorch allows; onnx_name()
maps the rest.
"""

import torch
from torch import nn
from torch.nn import functional as F

import torch_zoo_classifiers as classifiers

SSD_MOBILENET_CLASSES = 91
SSD_MOBILENET_EXTRA_DEPTHS = (512, 256, 256, 128)
SSD_MOBILENET_MAP_CHANNELS = (512, 1024, 512, 256, 256, 128)
SSD_MOBILENET_ANCHORS = (3, 6, 6, 6, 6, 6)
SSD_MOBILENET_SCOPE = "FeatureExtractor/MobilenetV1/"

SSD_RESNET34_CLASSES = 81
SSD_RESNET34_STAGES = ((3, 64, 1), (4, 128, 2), (6, 256, 1))  # layer3's stride set to 1, as the reference
SSD_RESNET34_EXTRAS = ((256, 512, 2, 1), (256, 512, 2, 1), (128, 256, 2, 1), (128, 256, 2, 0), (128, 256, 1, 0))
SSD_RESNET34_MAP_CHANNELS = (256, 512, 512, 256, 256, 256)
SSD_RESNET34_DEFAULTS = (4, 6, 6, 6, 4, 4)
SSD_RESNET34_HEAD_STRIDE = 3

YOLO_OUTPUT_CHANNELS = 3 * (80 + 5)
YOLO_BN_EPSILON = 1e-3
YOLO_LEAKY_SLOPE = 0.1
DARKNET53_STAGES = ((1, 64), (2, 128), (8, 256), (8, 512), (4, 1024))


class SsdMobilenet(nn.Module):
    """TF object detection's ssd_mobilenet_v1_coco (MLPerf's ssd-mobilenet): outputs boxes [N, anchors, 4]
    and class_logits [N, anchors, 91]."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(*classifiers.mobilenet_v1_units())
        extras = []
        channels = 1024
        for depth in SSD_MOBILENET_EXTRA_DEPTHS:
            extras.append(classifiers.conv_bn_relu6(channels, depth // 2, 1, 1))
            extras.append(classifiers.conv_bn_relu6(depth // 2, depth, 3, 2))
            channels = depth
        self.extras = nn.ModuleList(extras)
        pairs = zip(SSD_MOBILENET_MAP_CHANNELS, SSD_MOBILENET_ANCHORS)
        self.box = nn.ModuleList(nn.Conv2d(c, a * 4, 1) for c, a in pairs)
        pairs = zip(SSD_MOBILENET_MAP_CHANNELS, SSD_MOBILENET_ANCHORS)
        self.cls = nn.ModuleList(nn.Conv2d(c, a * SSD_MOBILENET_CLASSES, 1) for c, a in pairs)

    def forward(self, x):
        maps = []
        for index, unit in enumerate(self.features):
            x = unit(x)
            if index in (22, 26):  # Conv2d_11_pointwise and Conv2d_13_pointwise
                maps.append(x)
        for index in range(0, len(self.extras), 2):
            x = self.extras[index + 1](self.extras[index](x))
            maps.append(x)
        boxes = [predict(head, m, 4) for head, m in zip(self.box, maps)]
        classes = [predict(head, m, SSD_MOBILENET_CLASSES) for head, m in zip(self.cls, maps)]
        return torch.cat(boxes, 1), torch.cat(classes, 1)

    @staticmethod
    def onnx_name(key):
        part, index, rest = key.split(".", 2)
        index = int(index)
        if part == "features":
            return classifiers.unit_tensor_name(SSD_MOBILENET_SCOPE + classifiers.mobilenet_unit_scope(index), rest)
        if part == "extras":
            depth = SSD_MOBILENET_EXTRA_DEPTHS[index // 2]
            step = (f"1_Conv2d_{index // 2 + 2}_1x1_{depth // 2}" if index % 2 == 0
                    else f"2_Conv2d_{index // 2 + 2}_3x3_s2_{depth}")
            return classifiers.unit_tensor_name(f"{SSD_MOBILENET_SCOPE}Conv2d_13_pointwise_{step}", rest)
        predictor = "BoxEncodingPredictor" if part == "box" else "ClassPredictor"
        return f"BoxPredictor_{index}/{predictor}.{rest}"


def predict(head, feature_map, width):
    """A 1x1 prediction convolution, then NHWC and [N, cells * anchors, width], as TF reshapes it."""
    y = head(feature_map).permute(0, 2, 3, 1)
    return y.reshape(y.shape[0], -1, width)


class BasicBlock(nn.Module):
    """torchvision's ResNet-34 block: conv3x3 (stride) -> BN -> ReLU -> conv3x3 -> BN, plus the shortcut."""

    def __init__(self, in_channels, width, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, width, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.downsample = None
        if stride != 1 or in_channels != width:
            self.downsample = nn.Sequential(nn.Conv2d(in_channels, width, 1, stride=stride, bias=False),
                                            nn.BatchNorm2d(width))

    def forward(self, x):
        y = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        return F.relu(y + (x if self.downsample is None else self.downsample(x)))


class SsdResnet34Backbone(nn.Module):
    """The reference's self.model: layer1 = ResNet-34's stem, layer1 and layer2; layer2 = its layer3."""

    def __init__(self):
        super().__init__()
        stages = []
        channels = 64
        for blocks, width, stride in SSD_RESNET34_STAGES:
            stage = []
            for block in range(blocks):
                stage.append(BasicBlock(channels, width, stride if block == 0 else 1))
                channels = width
            stages.append(nn.Sequential(*stage))
        self.layer1 = nn.Sequential(nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False), nn.BatchNorm2d(64),
                                    nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1), stages[0], stages[1])
        self.layer2 = nn.Sequential(stages[2])

    def forward(self, x):
        return self.layer2(self.layer1(x))


class SsdResnet34(nn.Module):
    """mlcommons/inference's SSD_R34 (MLPerf's ssd-resnet34): outputs locs [N, 4, boxes] and confs
    [N, 81, boxes]."""

    def __init__(self):
        super().__init__()
        self.model = SsdResnet34Backbone()
        blocks = []
        channels = SSD_RESNET34_MAP_CHANNELS[0]
        for mid, out, stride, pad in SSD_RESNET34_EXTRAS:
            blocks.append(nn.Sequential(nn.Conv2d(channels, mid, 1), nn.ReLU(inplace=True),
                                        nn.Conv2d(mid, out, 3, stride=stride, padding=pad), nn.ReLU(inplace=True)))
            channels = out
        self.additional_blocks = nn.ModuleList(blocks)
        pairs = list(zip(SSD_RESNET34_MAP_CHANNELS, SSD_RESNET34_DEFAULTS))
        self.loc = nn.ModuleList(nn.Conv2d(c, d * 4, 3, stride=SSD_RESNET34_HEAD_STRIDE, padding=1) for c, d in pairs)
        self.conf = nn.ModuleList(nn.Conv2d(c, d * SSD_RESNET34_CLASSES, 3, stride=SSD_RESNET34_HEAD_STRIDE, padding=1)
                                  for c, d in pairs)
        self.residual_norms = [block.bn2 for stage in (self.model.layer1[4], self.model.layer1[5],
                                                       self.model.layer2[0]) for block in stage]

    def forward(self, x):
        maps = [self.model(x)]
        for block in self.additional_blocks:
            maps.append(block(maps[-1]))
        batch = x.shape[0]
        locs = [head(m).reshape(batch, 4, -1) for head, m in zip(self.loc, maps)]
        confs = [head(m).reshape(batch, SSD_RESNET34_CLASSES, -1) for head, m in zip(self.conf, maps)]
        return torch.cat(locs, 2), torch.cat(confs, 2)


class ConvBnLeaky(nn.Module):
    """Darknet's convolution (no bias) -> BN (epsilon 0.001) -> LeakyReLU(0.1)."""

    def __init__(self, in_channels, out_channels, kernel, stride=1):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel, stride=stride, padding=kernel // 2, bias=False)
        self.bn = nn.BatchNorm2d(out_channels, eps=YOLO_BN_EPSILON)

    def forward(self, x):
        return F.leaky_relu(self.bn(self.conv(x)), YOLO_LEAKY_SLOPE)


class DarknetResidual(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = ConvBnLeaky(channels, channels // 2, 1)
        self.conv2 = ConvBnLeaky(channels // 2, channels, 3)

    def forward(self, x):
        return x + self.conv2(self.conv1(x))


class Darknet53(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = ConvBnLeaky(3, 32, 3)
        channels = 32
        for index, (blocks, out) in enumerate(DARKNET53_STAGES):
            stage = nn.Module()
            stage.down = ConvBnLeaky(channels, out, 3, 2)
            channels = out
            for block in range(blocks):
                setattr(stage, f"block{block}", DarknetResidual(channels))
            stage.blocks = blocks
            setattr(self, f"stage{index + 1}", stage)

    def forward(self, x):
        x = self.stem(x)
        taps = []
        for index in range(len(DARKNET53_STAGES)):
            stage = getattr(self, f"stage{index + 1}")
            x = stage.down(x)
            for block in range(stage.blocks):
                x = getattr(stage, f"block{block}")(x)
            taps.append(x)
        return taps[2], taps[3], taps[4]


class YoloHead(nn.Module):
    """Five alternating 1x1 (width) / 3x3 (2 * width) units, a 3x3 and the 1x1 detection convolution; the
    fifth unit's output (the route) feeds the next finer scale through `lateral`."""

    def __init__(self, in_channels, width, lateral_from=0):
        super().__init__()
        if lateral_from:
            self.lateral = ConvBnLeaky(lateral_from, lateral_from // 2, 1)
        channels = in_channels
        for index in range(5):
            out = width if index % 2 == 0 else 2 * width
            setattr(self, f"conv{index}", ConvBnLeaky(channels, out, 1 if index % 2 == 0 else 3))
            channels = out
        self.conv5 = ConvBnLeaky(width, 2 * width, 3)
        self.detect = nn.Conv2d(2 * width, YOLO_OUTPUT_CHANNELS, 1)

    def forward(self, x):
        for index in range(5):
            x = getattr(self, f"conv{index}")(x)
        return x, self.detect(self.conv5(x))


class YoloV3(nn.Module):
    """darknet's cfg/yolov3.cfg: outputs the raw head convolutions, coarsest scale first."""

    def __init__(self):
        super().__init__()
        self.backbone = Darknet53()
        self.head = nn.Module()
        self.head.p5 = YoloHead(1024, 512)
        self.head.p4 = YoloHead(256 + 512, 256, lateral_from=512)
        self.head.p3 = YoloHead(128 + 256, 128, lateral_from=256)
        self.residual_norms = [module.conv2.bn for module in self.backbone.modules()
                               if isinstance(module, DarknetResidual)]

    def forward(self, x):
        p3, p4, p5 = self.backbone(x)
        route, out5 = self.head.p5(p5)
        route, out4 = self.head.p4(torch.cat([upsample2x(self.head.p4.lateral(route)), p4], 1))
        _, out3 = self.head.p3(torch.cat([upsample2x(self.head.p3.lateral(route)), p3], 1))
        return out5, out4, out3


def upsample2x(x):
    return F.interpolate(x, scale_factor=2.0, mode="nearest")
