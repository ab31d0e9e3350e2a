// YOLOv3 (Redmon & Farhadi 2018, arXiv:1804.02767): the Darknet-53 backbone and the three-scale
// head of darknet's cfg/yolov3.cfg, 80 COCO classes, 3 anchors per cell: 3 * (80 + 5) = 255
// channels per scale. The graph ends at the head's raw 1x1 convolutions (darknet's [yolo] layers'
// inputs): no sigmoid/anchor decoding and no NMS, which are post-processing outside the network.
// Every other convolution is conv (no bias) + BN + LeakyReLU(0.1), as darknet and ultralytics.
#include <array>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "models/zoo_builders.hpp"
#include "models/zoo_graph_ops.hpp"

namespace inferbench::models {

namespace {

using graph_ops::op;

constexpr float kLeakySlope = 0.1F;
// See zoo_resnet.cpp: with untrained BN statistics, unit scales on every residual branch make
// activations grow block after block; a small last-BN scale keeps them O(1).
constexpr float kResidualGamma = 0.2F;

struct Stage {
    int blocks;
    std::int64_t channels;
};
// Darknet-53: after the stem, each stage is a stride-2 3x3 conv then residual blocks.
constexpr std::array<Stage, 5> kStages = {{{1, 64}, {2, 128}, {8, 256}, {8, 512}, {4, 1024}}};

std::string conv_bn_leaky(GraphBuilder& g, const std::string& name, const std::string& x, std::int64_t in,
                          std::int64_t out, std::int64_t kernel, std::int64_t stride = 1, float gamma = 1.0F) {
    std::string y = g.conv(name + ".conv", x, in, out, {.kernel = kernel, .stride = stride, .pad = kernel / 2});
    y = g.batch_norm(name + ".bn", y, out, graph_ops::kYoloBatchNormEpsilon, gamma);
    return op(g, "LeakyRelu", name + ".act", {y}, {OnnxAttribute::of_float("alpha", kLeakySlope)});
}

struct Backbone {
    std::string p3, p4, p5;  // strides 8 (256 ch), 16 (512 ch), 32 (1024 ch)
};

Backbone darknet53(GraphBuilder& g) {
    Backbone out;
    std::string x = conv_bn_leaky(g, "backbone.stem", "input", 3, 32, 3);
    std::int64_t channels = 32;
    for (std::size_t s = 0; s < kStages.size(); ++s) {
        const Stage& stage = kStages[s];
        const std::string p = fmt::format("backbone.stage{}", s + 1);
        x = conv_bn_leaky(g, p + ".down", x, channels, stage.channels, 3, 2);
        channels = stage.channels;
        for (int b = 0; b < stage.blocks; ++b) {
            const std::string bp = fmt::format("{}.block{}", p, b);
            std::string y = conv_bn_leaky(g, bp + ".conv1", x, channels, channels / 2, 1);
            y = conv_bn_leaky(g, bp + ".conv2", y, channels / 2, channels, 3, 1, kResidualGamma);
            x = g.add(bp + ".add", x, y);
        }
        if (s == 2) out.p3 = x;
        if (s == 3) out.p4 = x;
    }
    out.p5 = x;
    return out;
}

struct HeadOut {
    std::string route;   // the fifth conv's output, which feeds the next (finer) scale
    std::string output;  // [batch, 255, h, w]
};

// Five alternating 1x1 (width) / 3x3 (2 * width) convs, then a 3x3 and the 1x1 detection conv.
HeadOut yolo_head(GraphBuilder& g, const std::string& p, const std::string& x, std::int64_t in, std::int64_t width,
                  const std::string& output_name) {
    std::string y = x;
    std::int64_t channels = in;
    for (int i = 0; i < 5; ++i) {
        const bool pointwise = i % 2 == 0;
        const std::int64_t out = pointwise ? width : 2 * width;
        y = conv_bn_leaky(g, fmt::format("{}.conv{}", p, i), y, channels, out, pointwise ? 1 : 3);
        channels = out;
    }
    HeadOut head{y, {}};
    y = conv_bn_leaky(g, p + ".conv5", y, width, 2 * width, 3);
    g.conv(p + ".detect", y, 2 * width, kYoloOutputChannels, {.kernel = 1, .bias = true});
    g.rename_value(p + ".detect", output_name);
    head.output = output_name;
    return head;
}

}  // namespace

GraphBuilder build_yolov3(std::int64_t image_size, std::uint64_t seed) {
    if (image_size <= 0 || image_size % 32 != 0) {
        throw std::logic_error(fmt::format("yolov3: image size {} is not a positive multiple of 32", image_size));
    }
    GraphBuilder g("yolov3", seed);
    const auto batch = OnnxDim::symbolic(std::string(kBatchDimName));
    const auto fixed = [](std::int64_t v) { return OnnxDim::fixed(v); };
    g.add_input("input", OnnxElemType::float32, {batch, fixed(3), fixed(image_size), fixed(image_size)});

    const Backbone b = darknet53(g);
    const HeadOut large = yolo_head(g, "head.p5", b.p5, 1024, 512, "output_p5");
    std::string up =
        graph_ops::upsample2x(g, "head.p4.upsample", conv_bn_leaky(g, "head.p4.lateral", large.route, 512, 256, 1));
    const HeadOut medium =
        yolo_head(g, "head.p4", graph_ops::concat(g, "head.p4.concat", {up, b.p4}, 1), 256 + 512, 256, "output_p4");
    up = graph_ops::upsample2x(g, "head.p3.upsample", conv_bn_leaky(g, "head.p3.lateral", medium.route, 256, 128, 1));
    yolo_head(g, "head.p3", graph_ops::concat(g, "head.p3.concat", {up, b.p3}, 1), 128 + 256, 128, "output_p3");

    // Darknet's order: coarsest scale first.
    for (const auto& [name, stride] : {std::pair{"output_p5", 32}, {"output_p4", 16}, {"output_p3", 8}}) {
        g.add_output(name, OnnxElemType::float32,
                     {batch, fixed(kYoloOutputChannels), fixed(image_size / stride), fixed(image_size / stride)});
    }
    return g;
}

GraphBuilder build_yolov3_416(std::uint64_t seed) { return build_yolov3(416, seed); }

GraphBuilder build_yolov3_608(std::uint64_t seed) { return build_yolov3(608, seed); }

}  // namespace inferbench::models
