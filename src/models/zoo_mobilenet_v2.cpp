// MobileNet v2, width multiplier 1.0, 224x224 (Sandler et al. 2018, arXiv:1801.04381), laid out as
// torchvision's mobilenet_v2 (BN epsilon 1e-5, ReLU6, no softmax). Names follow torchvision's
// state_dict ("features.2.conv.1.0.weight"), so a reader can match them to published checkpoints.
#include <array>

#include <fmt/format.h>

#include "models/zoo_builders.hpp"

namespace inferbench::models {

namespace {

// The scale of each residual block's projection BN, for the reason kResidualGamma in
// zoo_resnet.cpp gives: with uncalibrated BN statistics, unit scales let the linear bottlenecks'
// sums grow block after block.
constexpr float kProjectionGamma = 0.2F;

// The paper's Table 2: expansion t, output channels c, repeats n, first stride s.
struct Stage {
    std::int64_t expansion;
    std::int64_t channels;
    int repeats;
    std::int64_t stride;
};
constexpr std::array<Stage, 7> kStages = {
    {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2}, {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}}};
constexpr std::int64_t kLastChannels = 1280;

// torchvision's Conv2dNormActivation: `scope.0` (conv), `scope.1` (BN), then ReLU6.
std::string conv_bn_relu6(GraphBuilder& g, const std::string& scope, const std::string& x, std::int64_t in_channels,
                          std::int64_t out_channels, const ConvOptions& options) {
    std::string y = g.conv(scope + ".0", x, in_channels, out_channels, options);
    y = g.batch_norm(scope + ".1", y, out_channels);
    return g.relu6(scope + ".2", y);
}

// [1x1 expand -> BN -> ReLU6] -> 3x3 depthwise -> BN -> ReLU6 -> 1x1 project -> BN (linear), plus
// the input where stride is 1 and the width is unchanged. Without expansion (t = 1) the first
// convolution is absent and torchvision's indices shift down by one.
std::string inverted_residual(GraphBuilder& g, const std::string& prefix, const std::string& x,
                              std::int64_t in_channels, std::int64_t out_channels, std::int64_t stride,
                              std::int64_t expansion) {
    const std::int64_t hidden = in_channels * expansion;
    std::string y = x;
    int index = 0;
    const auto scope = [&] { return fmt::format("{}.conv.{}", prefix, index++); };
    if (expansion != 1) y = conv_bn_relu6(g, scope(), y, in_channels, hidden, {.kernel = 1});
    y = conv_bn_relu6(g, scope(), y, hidden, hidden, {.kernel = 3, .stride = stride, .pad = 1, .group = hidden});
    y = g.conv(scope(), y, hidden, out_channels, {.kernel = 1});
    const bool residual = stride == 1 && in_channels == out_channels;
    y = g.batch_norm(scope(), y, out_channels, 1e-5F, residual ? kProjectionGamma : 1.0F);
    return residual ? g.add(prefix + ".add", x, y) : y;
}

}  // namespace

// Parameter count convention: as build_resnet50 (weights, FC bias, BN gamma and beta), which
// gives torchvision's 3,504,872 (sum of p.numel() over mobilenet_v2().parameters()); the paper's
// Table 4 rounds to 3.4M.
// Any image of at least 32 pixels (the network's stride) fits: global pooling ends the backbone.
GraphBuilder build_mobilenet_v2(std::uint64_t seed, std::int64_t image_size) {
    check_input_size("mobilenet-v2", image_size, 32);
    GraphBuilder g("mobilenet_v2", seed);
    const auto batch = OnnxDim::symbolic(std::string(kBatchDimName));
    g.add_input("input", OnnxElemType::float32,
                {batch, OnnxDim::fixed(3), OnnxDim::fixed(image_size), OnnxDim::fixed(image_size)});

    std::string x = conv_bn_relu6(g, "features.0", "input", 3, 32, {.kernel = 3, .stride = 2, .pad = 1});
    std::int64_t channels = 32;
    int feature = 1;
    for (const Stage& stage : kStages) {
        for (int r = 0; r < stage.repeats; ++r) {
            x = inverted_residual(g, fmt::format("features.{}", feature++), x, channels, stage.channels,
                                  r == 0 ? stage.stride : 1, stage.expansion);
            channels = stage.channels;
        }
    }
    x = conv_bn_relu6(g, fmt::format("features.{}", feature), x, channels, kLastChannels, {.kernel = 1});

    // classifier.0 is Dropout: the identity at inference.
    x = g.flatten("flatten", g.global_avg_pool("avgpool", x));
    g.gemm("classifier.1", x, kLastChannels, 1000);
    g.rename_value("classifier.1", "logits");
    g.add_output("logits", OnnxElemType::float32, {batch, OnnxDim::fixed(1000)});
    return g;
}

}  // namespace inferbench::models
