// ResNet-50 v1.5 (He et al. 2016, arXiv:1512.03385, with the stride on the 3x3 convolution as in
// torchvision and the MLPerf Inference reference). Names follow torchvision's state_dict
// ("layer1.0.conv1.weight"), so a reader can match them to published checkpoints.
#include <array>

#include <fmt/format.h>

#include "models/zoo_builders.hpp"

namespace inferbench::models {

namespace {

constexpr std::int64_t kExpansion = 4;

// The scale of each residual branch's last BN. With BN statistics at ~identity (not calibrated
// on data), unit scales let every block add a branch as large as its input and activations grow
// ~1.4x per block (to logits of ~1e3). Trained ResNets have small last-BN scales (torchvision's
// zero_init_residual and Goyal et al. 2017 start them at 0); 0.2 keeps activations O(1) to O(10).
constexpr float kResidualGamma = 0.2F;

struct Stage {
    int blocks;
    std::int64_t width;
    std::int64_t stride;
};
constexpr std::array<Stage, 4> kStages = {{{3, 64, 1}, {4, 128, 2}, {6, 256, 2}, {3, 512, 2}}};

// conv1x1 -> BN -> ReLU -> conv3x3 (stride) -> BN -> ReLU -> conv1x1 -> BN, plus the shortcut,
// which is projected (conv1x1 + BN) where the shape changes, i.e. in each stage's first block.
std::string bottleneck(GraphBuilder& g, const std::string& prefix, const std::string& x,
                       std::int64_t in_channels, std::int64_t width, std::int64_t stride) {
    const std::int64_t out_channels = width * kExpansion;
    const auto name = [&](std::string_view part) { return fmt::format("{}.{}", prefix, part); };

    std::string y = g.conv(name("conv1"), x, in_channels, width, {.kernel = 1});
    y = g.relu(name("relu1"), g.batch_norm(name("bn1"), y, width));
    y = g.conv(name("conv2"), y, width, width, {.kernel = 3, .stride = stride, .pad = 1});
    y = g.relu(name("relu2"), g.batch_norm(name("bn2"), y, width));
    y = g.conv(name("conv3"), y, width, out_channels, {.kernel = 1});
    y = g.batch_norm(name("bn3"), y, out_channels, 1e-5F, kResidualGamma);

    std::string shortcut = x;
    if (stride != 1 || in_channels != out_channels) {
        shortcut =
            g.conv(name("downsample.0"), x, in_channels, out_channels, {.kernel = 1, .stride = stride});
        shortcut = g.batch_norm(name("downsample.1"), shortcut, out_channels);
    }
    return g.relu(name("relu"), g.add(name("add"), y, shortcut));
}

}  // namespace

// Parameter count convention (as torchvision's sum(p.numel() for p in model.parameters())):
// convolution and FC weights, FC bias, BN gamma and beta; not BN running mean and variance.
// Any image of at least 32 pixels (the last stage's stride) fits: global pooling ends the backbone.
GraphBuilder build_resnet50(std::uint64_t seed, std::int64_t image_size) {
    check_input_size("resnet50", image_size, 32);
    GraphBuilder g("resnet50", seed);
    const auto batch = OnnxDim::symbolic(std::string(kBatchDimName));
    g.add_input("input", OnnxElemType::float32,
                {batch, OnnxDim::fixed(3), OnnxDim::fixed(image_size), OnnxDim::fixed(image_size)});

    std::string x = g.conv("conv1", "input", 3, 64, {.kernel = 7, .stride = 2, .pad = 3});
    x = g.relu("relu", g.batch_norm("bn1", x, 64));
    x = g.max_pool("maxpool", x, 3, 2, 1);

    std::int64_t channels = 64;
    for (std::size_t s = 0; s < kStages.size(); ++s) {
        const Stage& stage = kStages[s];
        for (int b = 0; b < stage.blocks; ++b) {
            const std::string prefix = fmt::format("layer{}.{}", s + 1, b);
            x = bottleneck(g, prefix, x, channels, stage.width, b == 0 ? stage.stride : 1);
            channels = stage.width * kExpansion;
        }
    }

    x = g.flatten("flatten", g.global_avg_pool("avgpool", x));
    g.gemm("fc", x, channels, 1000);
    g.rename_value("fc", "logits");
    g.add_output("logits", OnnxElemType::float32, {batch, OnnxDim::fixed(1000)});
    return g;
}

}  // namespace inferbench::models
