// 3D U-Net for KiTS19 kidney tumour segmentation, as MLPerf Inference's 3d-unet (mlcommons/inference
// vision/medical_imaging/3d-unet-kits19, whose model is the MLPerf Training reference's Unet3D):
// the nnU-Net layout (Isensee et al. 2021, Nature Methods 18:203; Cicek et al. 2016,
// arXiv:1606.06650). One 1 x 128^3 sub-volume in, per-voxel logits for 3 classes (background,
// kidney, tumour) out; the sliding-window and Gaussian blending around it are not part of the graph.
//
// Every convolution block is Conv3d (3x3x3, no bias) -> InstanceNorm3d (affine) -> LeakyReLU(0.01).
// Encoder: input block (2 blocks, 32 filters), then 4 downsample stages of a stride-2 block and a
// block (64, 128, 256, 320), then the bottleneck (the same, 320). Decoder: 5 stages of
// ConvTranspose3d (2x2x2, stride 2, bias) -> concat with the encoder's skip -> 2 blocks (320, 256,
// 128, 64, 32). Output: Conv3d 1x1x1 with bias to 3 classes. Names follow the reference's
// state_dict ("downsample.0.conv1.0.weight").
#include <array>
#include <cmath>
#include <cstdint>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "models/zoo_builders.hpp"

namespace inferbench::models {

namespace {

constexpr std::int64_t kClasses = 3;
constexpr float kInstanceNormEpsilon = 1e-5F;
constexpr float kLeakySlope = 0.01F;
constexpr std::array<std::int64_t, 6> kFilters = {32, 64, 128, 256, 320, 320};

std::vector<std::int64_t> cube(std::int64_t v) { return {v, v, v}; }

// A 3-d convolution node (Conv or ConvTranspose) with He-uniform weights over `fan_in`.
std::string conv3d(GraphBuilder& g, std::string_view type, const std::string& name, const std::string& x,
                   std::vector<std::int64_t> weight_dims, std::int64_t fan_in, std::int64_t kernel, std::int64_t stride,
                   std::int64_t pad, std::int64_t bias_channels) {
    const std::string weight = name + ".weight";
    std::int64_t count = 1;
    for (const std::int64_t d : weight_dims) count *= d;
    auto gen = g.generator_for(weight);
    g.add_initializer({weight, std::move(weight_dims), he_uniform(gen, static_cast<std::size_t>(count), fan_in), true});
    OnnxNode node{std::string(type), name, {x, weight}, {name}, {}};
    if (bias_channels > 0) {
        const std::string bias = name + ".bias";
        std::vector<float> values(static_cast<std::size_t>(bias_channels));
        g.generator_for(bias).fill_symmetric(values, 1.0F / std::sqrt(static_cast<float>(fan_in)));
        g.add_initializer({bias, {bias_channels}, std::move(values), true});
        node.inputs.push_back(bias);
    }
    node.attributes = {OnnxAttribute::of_ints("kernel_shape", cube(kernel)),
                       OnnxAttribute::of_ints("pads", {pad, pad, pad, pad, pad, pad}),
                       OnnxAttribute::of_ints("strides", cube(stride))};
    g.add_node(std::move(node));
    return name;
}

// `name.0` Conv3d -> `name.1` InstanceNorm3d(affine) -> `name.2` LeakyReLU.
std::string conv_block(GraphBuilder& g, const std::string& name, const std::string& x, std::int64_t in_channels,
                       std::int64_t out_channels, std::int64_t stride) {
    std::string y =
        conv3d(g, "Conv", name + ".0", x, {out_channels, in_channels, 3, 3, 3}, in_channels * 27, 3, stride, 1, 0);
    const std::string norm = name + ".1";
    OnnxNode node{
        "InstanceNormalization", norm, {y}, {norm}, {OnnxAttribute::of_float("epsilon", kInstanceNormEpsilon)}};
    // As batch_norm's gamma and beta: near the identity, jittered so no runtime folds them away.
    for (const auto& [suffix, lo, hi] : {std::tuple{".weight", 0.9F, 1.1F}, std::tuple{".bias", -0.05F, 0.05F}}) {
        const std::string tensor = norm + suffix;
        std::vector<float> values(static_cast<std::size_t>(out_channels));
        g.generator_for(tensor).fill_uniform(values, lo, hi);
        g.add_initializer({tensor, {out_channels}, std::move(values), true});
        node.inputs.push_back(tensor);
    }
    g.add_node(std::move(node));
    const std::string act = name + ".2";
    g.add_node({"LeakyRelu", act, {norm}, {act}, {OnnxAttribute::of_float("alpha", kLeakySlope)}});
    return act;
}

std::string double_block(GraphBuilder& g, const std::string& prefix, const std::string& x, std::int64_t in_channels,
                         std::int64_t out_channels, std::int64_t stride) {
    const std::string y = conv_block(g, prefix + ".conv1", x, in_channels, out_channels, stride);
    return conv_block(g, prefix + ".conv2", y, out_channels, out_channels, 1);
}

}  // namespace

// Parameter count convention: every trainable tensor (convolution weights and biases, InstanceNorm
// scale and bias), as sum(p.numel() for p in Unet3D(1, 3, "instancenorm", "leaky_relu")
// .parameters()): 31,190,243 (the ~31M quoted for MLPerf's KiTS19 3D U-Net).
GraphBuilder build_unet3d(std::uint64_t seed, std::int64_t volume_size) {
    // Five stride-2 stages down, five transposed convolutions up: each skip must meet its decoder
    // stage at the same size.
    check_input_size("3d-unet", volume_size, 32, 32);
    GraphBuilder g("unet3d_kits19", seed);
    const auto batch = OnnxDim::symbolic(std::string(kBatchDimName));
    const auto volume = OnnxDim::fixed(volume_size);
    g.add_input("input", OnnxElemType::float32, {batch, OnnxDim::fixed(1), volume, volume, volume});

    std::vector<std::string> skips = {double_block(g, "input_block", "input", 1, kFilters[0], 1)};
    for (std::size_t i = 1; i < kFilters.size(); ++i) {
        const std::string prefix = i + 1 < kFilters.size() ? fmt::format("downsample.{}", i - 1) : "bottleneck";
        skips.push_back(double_block(g, prefix, skips.back(), kFilters[i - 1], kFilters[i], 2));
    }

    std::string x = skips.back();
    for (std::size_t i = kFilters.size() - 1; i > 0; --i) {
        const std::int64_t in = kFilters[i];
        const std::int64_t out = kFilters[i - 1];
        const std::string prefix = fmt::format("upsample.{}", kFilters.size() - 1 - i);
        // ConvTranspose weights are [in, out, k, k, k]; with stride = kernel each output voxel
        // takes one input voxel per input channel, so fan_in = in.
        x = conv3d(g, "ConvTranspose", prefix + ".upsample_conv.0", x, {in, out, 2, 2, 2}, in, 2, 2, 0, out);
        const std::string cat = prefix + ".concat";
        g.add_node({"Concat", cat, {x, skips[i - 1]}, {cat}, {OnnxAttribute::of_int("axis", 1)}});
        x = conv_block(g, prefix + ".conv1", cat, 2 * out, out, 1);
        x = conv_block(g, prefix + ".conv2", x, out, out, 1);
    }

    conv3d(g, "Conv", "output.conv", x, {kClasses, kFilters[0], 1, 1, 1}, kFilters[0], 1, 1, 0, kClasses);
    g.rename_value("output.conv", "logits");
    g.add_output("logits", OnnxElemType::float32, {batch, OnnxDim::fixed(kClasses), volume, volume, volume});
    return g;
}

}  // namespace inferbench::models
