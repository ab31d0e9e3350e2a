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

}  // namespace

std::string mobilenet_v1_unit(GraphBuilder& g, const std::string& scope, const std::string& x, std::int64_t in_channels,
                          std::int64_t out_channels, const ConvOptions& options) {
    std::string y = g.conv(scope, x, in_channels, out_channels, options);
    y = g.batch_norm(scope + "/BatchNorm", y, out_channels, kBnEpsilon);
    return g.relu6(scope + "/Relu6", y);
}

MobilenetV1Features mobilenet_v1_features(GraphBuilder& g, const std::string& input, const std::string& scope) {
    // TF pads SAME (0 before, 1 after, at stride 2); symmetric 1 gives the same output sizes and the
    // same work, and is what ONNX exporters of this network emit.
    MobilenetV1Features features;
    std::string x = mobilenet_v1_unit(g, scope + "Conv2d_0", input, 3, 32, {.kernel = 3, .stride = 2, .pad = 1});
    std::int64_t channels = 32;
    for (std::size_t i = 0; i < kBlocks.size(); ++i) {
        const auto& block = kBlocks[i];
        const std::string name = fmt::format("{}Conv2d_{}", scope, i + 1);
        x = mobilenet_v1_unit(g, name + "_depthwise", x, channels, channels,
                          {.kernel = 3, .stride = block.stride, .pad = 1, .group = channels});
        x = mobilenet_v1_unit(g, name + "_pointwise", x, channels, block.out_channels, {.kernel = 1});
        channels = block.out_channels;
        features.block_outputs.push_back(x);
    }
    features.channels = channels;
    return features;
}

// Parameter count convention: as build_resnet50 (weights, FC bias, BN gamma and beta), which
// gives the paper's 4.2M (4,231,976, TF-slim's trainable variables).
// Any image of at least 32 pixels (the network's stride) fits: global pooling ends the backbone.
GraphBuilder build_mobilenet(std::uint64_t seed, std::int64_t image_size) {
    check_input_size("mobilenet", image_size, 32);
    GraphBuilder g("mobilenet", seed);
    const auto batch = OnnxDim::symbolic(std::string(kBatchDimName));
    g.add_input("input", OnnxElemType::float32,
                {batch, OnnxDim::fixed(3), OnnxDim::fixed(image_size), OnnxDim::fixed(image_size)});

    const MobilenetV1Features features = mobilenet_v1_features(g, "input", "");
    const std::int64_t channels = features.channels;
    std::string x = g.flatten("Logits/Flatten", g.global_avg_pool("Logits/AvgPool", features.block_outputs.back()));
    x = g.gemm("Logits/Conv2d_1c_1x1", x, channels, 1000);
    g.softmax("probabilities", x, 1);
    g.add_output("probabilities", OnnxElemType::float32, {batch, OnnxDim::fixed(1000)});
    return g;
}

}  // namespace inferbench::models
