// SSD-ResNet34, 1200x1200, COCO (Liu et al. 2016, arXiv:1512.02325; He et al. 2016,
// arXiv:1512.03385), as MLPerf Inference's ssd-resnet34: mlcommons/inference
// vision/classification_and_detection/python/models/ssd_r34.py (SSD_R34 with its default
// strides [3, 3, 2, 2, 2, 2]). Names follow that model's state_dict ("model.layer2.0.conv1.weight",
// "additional_blocks.0.0.weight", "loc.0.weight").
//
// Backbone: torchvision ResNet-34 up to and including layer3 (the reference's layer1 = children
// [:6], layer2 = layer3 with its first block's stride set to 1), giving 256 x 150 x 150. The
// additional blocks are convolutions with bias and ReLU, no BN. The loc/conf heads are 3x3
// convolutions with stride 3 (strides[0], strides[1]), hence the 50/25/13/7/3/3 maps of the
// reference's dboxes_R34_coco. The graph ends at the raw predictions (SSD_R34.bbox_view), before
// box decoding and NMS:
//   locs:  [batch, 4, 15130]   box regressions per default box
//   confs: [batch, 81, 15130]  per-box logits, class 0 the background
// 15130 = 50*50*4 + 25*25*6 + 13*13*6 + 7*7*6 + 3*3*4 + 3*3*4.
#include <array>
#include <stdexcept>

#include <fmt/format.h>

#include "models/zoo_builders.hpp"

namespace inferbench::models {

namespace {

constexpr std::int64_t kClasses = 81;  // 80 COCO classes + background
constexpr std::int64_t kHeadStride = 3;
// See zoo_resnet.cpp's kResidualGamma.
constexpr float kResidualGamma = 0.2F;

struct Stage {
    int blocks;
    std::int64_t width;
    std::int64_t stride;
};
// ResNet-34's layer1..layer3; layer3's stride 2 is set to 1 by the reference's _ModifyBlock.
constexpr std::array<Stage, 3> kStages = {{{3, 64, 1}, {4, 128, 2}, {6, 256, 1}}};

// The additional blocks: 1x1 to `mid`, then 3x3 to `out` with `stride` and `pad`.
struct ExtraBlock {
    std::int64_t mid;
    std::int64_t out;
    std::int64_t stride;
    std::int64_t pad;
};
constexpr std::array<ExtraBlock, 5> kExtras = {
    {{256, 512, 2, 1}, {256, 512, 2, 1}, {128, 256, 2, 1}, {128, 256, 2, 0}, {128, 256, 1, 0}}};
constexpr std::array<std::int64_t, 6> kMapChannels = {256, 512, 512, 256, 256, 256};
constexpr std::array<std::int64_t, 6> kDefaults = {4, 6, 6, 6, 4, 4};

// A convolution's (or pooling's) output side.
constexpr std::int64_t conv_out(std::int64_t n, std::int64_t kernel, std::int64_t stride, std::int64_t pad) {
    return (n + 2 * pad - kernel) / stride + 1;
}

// The six feature maps' sides for an image side: the backbone's stride is 8 (stem 2, max pool 2,
// layer2 2), then the additional blocks. At 1200: 150, 75, 38, 19, 9, 7. Throws std::logic_error
// where a block's 3x3 convolution without padding gets less than 3x3.
std::array<std::int64_t, 6> map_sizes(std::int64_t image_size) {
    std::int64_t n = conv_out(conv_out(conv_out(image_size, 7, 2, 3), 3, 2, 1), 3, 2, 1);
    std::array<std::int64_t, 6> sizes{n};
    for (std::size_t i = 0; i < kExtras.size(); ++i) {
        if (n < 3 - 2 * kExtras[i].pad) {
            throw std::logic_error(fmt::format(
                "ssd-resnet34: image size {} leaves additional block {} a {}x{} map; the smallest image is 385",
                image_size, i, n, n));
        }
        n = conv_out(n, 3, kExtras[i].stride, kExtras[i].pad);
        sizes[i + 1] = n;
    }
    return sizes;
}

std::string op(GraphBuilder& g, std::string_view type, std::string name, std::vector<std::string> inputs,
               std::vector<OnnxAttribute> attributes = {}) {
    g.add_node({std::string(type), name, std::move(inputs), {name}, std::move(attributes)});
    return name;
}

// torchvision's BasicBlock: conv3x3 (stride) -> BN -> ReLU -> conv3x3 -> BN, plus the shortcut,
// projected (conv1x1 + BN) where the shape changes.
std::string basic_block(GraphBuilder& g, const std::string& prefix, const std::string& x, std::int64_t in_channels,
                        std::int64_t width, std::int64_t stride) {
    const auto name = [&](std::string_view part) { return fmt::format("{}.{}", prefix, part); };
    std::string y = g.conv(name("conv1"), x, in_channels, width, {.kernel = 3, .stride = stride, .pad = 1});
    y = g.relu(name("relu1"), g.batch_norm(name("bn1"), y, width));
    y = g.conv(name("conv2"), y, width, width, {.kernel = 3, .pad = 1});
    y = g.batch_norm(name("bn2"), y, width, 1e-5F, kResidualGamma);

    std::string shortcut = x;
    if (stride != 1 || in_channels != width) {
        shortcut = g.conv(name("downsample.0"), x, in_channels, width, {.kernel = 1, .stride = stride});
        shortcut = g.batch_norm(name("downsample.1"), shortcut, width);
    }
    return g.relu(name("relu"), g.add(name("add"), y, shortcut));
}

std::string backbone(GraphBuilder& g, const std::string& input) {
    std::string x = g.conv("model.layer1.0", input, 3, 64, {.kernel = 7, .stride = 2, .pad = 3});
    x = g.relu("model.layer1.2", g.batch_norm("model.layer1.1", x, 64));
    x = g.max_pool("model.layer1.3", x, 3, 2, 1);
    std::int64_t channels = 64;
    for (std::size_t s = 0; s < kStages.size(); ++s) {
        const Stage& stage = kStages[s];
        for (int b = 0; b < stage.blocks; ++b) {
            // layer1/layer2 of torchvision are children 4 and 5 of the reference's layer1;
            // torchvision's layer3 is the reference's layer2.0.
            const std::string prefix =
                s < 2 ? fmt::format("model.layer1.{}.{}", s + 4, b) : fmt::format("model.layer2.0.{}", b);
            x = basic_block(g, prefix, x, channels, stage.width, b == 0 ? stage.stride : 1);
            channels = stage.width;
        }
    }
    return x;
}

}  // namespace

// Parameter count convention: as build_resnet50 (weights, biases, BN gamma and beta), which gives
// 19,972,534 for the reference's SSD_R34 (backbone 8,170,304; additional blocks 3,574,400; heads
// 8,227,830): the ~20M usually quoted for MLPerf's SSD-ResNet34. Work per 1200x1200 image: see
// ssd_resnet34_macs in zoo_ssd_resnet34_test.cpp's comment.
GraphBuilder build_ssd_resnet34(std::uint64_t seed, std::int64_t image_size) {
    check_input_size("ssd-resnet34", image_size, 1);
    const std::array<std::int64_t, 6> sizes = map_sizes(image_size);
    GraphBuilder g("ssd_resnet34", seed);
    const auto batch = OnnxDim::symbolic(std::string(kBatchDimName));
    g.add_input("image", OnnxElemType::float32,
                {batch, OnnxDim::fixed(3), OnnxDim::fixed(image_size), OnnxDim::fixed(image_size)});

    std::vector<std::string> maps = {backbone(g, "image")};
    std::int64_t channels = kMapChannels[0];
    for (std::size_t i = 0; i < kExtras.size(); ++i) {
        const ExtraBlock& e = kExtras[i];
        const auto name = [&](int index) { return fmt::format("additional_blocks.{}.{}", i, index); };
        std::string x = g.conv(name(0), maps.back(), channels, e.mid, {.kernel = 1, .bias = true});
        x = g.relu(name(1), x);
        x = g.conv(name(2), x, e.mid, e.out, {.kernel = 3, .stride = e.stride, .pad = e.pad, .bias = true});
        maps.push_back(g.relu(name(3), x));
        channels = e.out;
    }

    const auto int64s = [&](std::string name, std::vector<std::int64_t> values) {
        return op(g, "Constant", std::move(name), {}, {OnnxAttribute::of_ints("value_ints", std::move(values))});
    };
    const std::string loc_shape = int64s("loc_shape", {0, 4, -1});
    const std::string conf_shape = int64s("conf_shape", {0, kClasses, -1});
    std::vector<std::string> locs;
    std::vector<std::string> confs;
    const ConvOptions head{.kernel = 3, .stride = kHeadStride, .pad = 1, .bias = true};
    for (std::size_t i = 0; i < maps.size(); ++i) {
        const std::string loc = g.conv(fmt::format("loc.{}", i), maps[i], kMapChannels[i], kDefaults[i] * 4, head);
        locs.push_back(op(g, "Reshape", loc + ".view", {loc, loc_shape}));
        const std::string conf =
            g.conv(fmt::format("conf.{}", i), maps[i], kMapChannels[i], kDefaults[i] * kClasses, head);
        confs.push_back(op(g, "Reshape", conf + ".view", {conf, conf_shape}));
    }
    op(g, "Concat", "locs", locs, {OnnxAttribute::of_int("axis", 2)});
    op(g, "Concat", "confs", confs, {OnnxAttribute::of_int("axis", 2)});

    std::int64_t boxes = 0;
    for (std::size_t i = 0; i < kDefaults.size(); ++i) {
        const std::int64_t cells = conv_out(sizes[i], 3, kHeadStride, 1);  // 50, 25, 13, 7, 3, 3 at 1200
        boxes += cells * cells * kDefaults[i];
    }
    g.add_output("locs", OnnxElemType::float32, {batch, OnnxDim::fixed(4), OnnxDim::fixed(boxes)});
    g.add_output("confs", OnnxElemType::float32, {batch, OnnxDim::fixed(kClasses), OnnxDim::fixed(boxes)});
    return g;
}

}  // namespace inferbench::models
