// MobileNet v1, width multiplier 1.0, 224x224 (Howard et al. 2017, arXiv:1704.04861), laid out as
// TF-slim's mobilenet_v1 (BN epsilon 0.001, ReLU6). Names follow TF-slim's scopes.
#include <array>

#include <fmt/format.h>

#include "models/zoo_builders.hpp"

namespace inferbench::models {

namespace {

constexpr float kBnEpsilon = 0.001F;

struct SeparableBlock {
    std::int64_t out_channels;
    std::int64_t stride;
};
constexpr std::array<SeparableBlock, 13> kBlocks = {{{64, 1},
                                                     {128, 2},
                                                     {128, 1},
                                                     {256, 2},
                                                     {256, 1},
                                                     {512, 2},
                                                     {512, 1},
                                                     {512, 1},
                                                     {512, 1},
                                                     {512, 1},
                                                     {512, 1},
                                                     {1024, 2},
                                                     {1024, 1}}};

// Convolution -> BN -> ReLU6, the unit every MobileNet v1 layer is made of.
std::string conv_bn_relu6(GraphBuilder& g, const std::string& scope, const std::string& x,
                          std::int64_t in_channels, std::int64_t out_channels, const ConvOptions& options) {
    std::string y = g.conv(scope, x, in_channels, out_channels, options);
    y = g.batch_norm(scope + "/BatchNorm", y, out_channels, kBnEpsilon);
    return g.relu6(scope + "/Relu6", y);
}

}  // namespace

// Parameter count convention: as build_resnet50 (weights, FC bias, BN gamma and beta), which
// gives the paper's 4.2M (4,231,976, TF-slim's trainable variables).
GraphBuilder build_mobilenet(std::uint64_t seed) {
    GraphBuilder g("mobilenet", seed);
    const auto batch = OnnxDim::symbolic(std::string(kBatchDimName));
    g.add_input("input", OnnxElemType::float32,
                {batch, OnnxDim::fixed(3), OnnxDim::fixed(224), OnnxDim::fixed(224)});

    // TF pads SAME (0 before, 1 after, at stride 2); symmetric 1 gives the same 112x112 output
    // and the same work, and is what ONNX exporters of this network emit.
    std::string x = conv_bn_relu6(g, "Conv2d_0", "input", 3, 32, {.kernel = 3, .stride = 2, .pad = 1});
    std::int64_t channels = 32;
    for (std::size_t i = 0; i < kBlocks.size(); ++i) {
        const auto& block = kBlocks[i];
        const std::string scope = fmt::format("Conv2d_{}", i + 1);
        x = conv_bn_relu6(g, scope + "_depthwise", x, channels, channels,
                          {.kernel = 3, .stride = block.stride, .pad = 1, .group = channels});
        x = conv_bn_relu6(g, scope + "_pointwise", x, channels, block.out_channels, {.kernel = 1});
        channels = block.out_channels;
    }

    x = g.flatten("Logits/Flatten", g.global_avg_pool("Logits/AvgPool", x));
    x = g.gemm("Logits/Conv2d_1c_1x1", x, channels, 1000);
    g.softmax("probabilities", x, 1);
    g.add_output("probabilities", OnnxElemType::float32, {batch, OnnxDim::fixed(1000)});
    return g;
}

}  // namespace inferbench::models
