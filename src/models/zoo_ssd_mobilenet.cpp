// SSD-MobileNet v1, 300x300, COCO (Liu et al. 2016, arXiv:1512.02325; Howard et al. 2017,
// arXiv:1704.04861), as MLPerf Inference's ssd-mobilenet: TensorFlow object detection's
// ssd_mobilenet_v1_coco (2018_01_28) with its ssd_mobilenet_v1_coco.config. Names follow that
// model's TF scopes. The graph ends at the raw predictions, before anchor decoding and NMS:
//   boxes:        [batch, 1917, 4]   box regressions (ty, tx, th, tw) per anchor
//   class_logits: [batch, 1917, 91]  per-anchor logits, class 0 the background
// 1917 anchors = 19*19*3 + 10*10*6 + 5*5*6 + 3*3*6 + 2*2*6 + 1*1*6.
#include <array>

#include <fmt/format.h>

#include "models/zoo_builders.hpp"

namespace inferbench::models {

namespace {

constexpr std::int64_t kClasses = 91;  // 90 COCO ids + background
constexpr std::int64_t kBoxCode = 4;

// The feature extractor's layer_depth [-1, -1, 512, 256, 256, 128]: the extra layers after
// Conv2d_13_pointwise, each a 1x1 to half the depth then a 3x3 stride-2 to the depth.
constexpr std::array<std::int64_t, 4> kExtraDepths = {512, 256, 256, 128};
// The six feature maps' channels and anchors per cell: ssd_anchor_generator with 5 aspect ratios
// plus the interpolated scale (6), and reduce_boxes_in_lowest_layer (3) on the first.
constexpr std::array<std::int64_t, 6> kMapChannels = {512, 1024, 512, 256, 256, 128};
constexpr std::array<std::int64_t, 6> kAnchors = {3, 6, 6, 6, 6, 6};

// The six maps' sides for an image side: Conv2d_11 is after 4 stride-2 3x3 convolutions (padding
// 1, so each gives ceil(n / 2)), Conv2d_13 after 5, each extra layer halves again. At 300: 19, 10,
// 5, 3, 2, 1.
std::array<std::int64_t, 6> map_sizes(std::int64_t image_size) {
    const auto halve = [](std::int64_t n) { return (n + 1) / 2; };
    std::int64_t n = image_size;
    for (int i = 0; i < 4; ++i) n = halve(n);
    std::array<std::int64_t, 6> sizes{};
    for (std::int64_t& size : sizes) {
        size = n;
        n = halve(n);
    }
    return sizes;
}

std::string op(GraphBuilder& g, std::string_view type, std::string name, std::vector<std::string> inputs,
               std::vector<OnnxAttribute> attributes = {}) {
    g.add_node({std::string(type), name, std::move(inputs), {name}, std::move(attributes)});
    return name;
}

// A 1x1 prediction convolution with bias, then NHWC and [batch, cells * anchors, width], as TF
// reshapes the predictor's output.
std::string prediction(GraphBuilder& g, const std::string& scope, const std::string& x, std::int64_t channels,
                       std::int64_t outputs, const std::string& shape) {
    std::string y = g.conv(scope, x, channels, outputs, {.kernel = 1, .bias = true});
    y = op(g, "Transpose", scope + "/Transpose", {y}, {OnnxAttribute::of_ints("perm", {0, 2, 3, 1})});
    return op(g, "Reshape", scope + "/Reshape", {y, shape});
}

}  // namespace

// Parameter count convention: as build_mobilenet (weights, biases, BN gamma and beta), i.e. the TF
// checkpoint's trainable variables: 6,819,839 (MLPerf Inference's paper, Reddi et al. 2020,
// arXiv:1911.02549, rounds to 6.8M). The frozen graph MLPerf distributes folds each BN into a bias
// (one value per channel, not two): 6,807,167, the count of MLPerf's PyTorch port
// (ssd_mobilenet_v1.py), whose extra layers are convolutions with bias.
//
// Any image of at least 32 pixels fits (the maps then shrink to 1x1); the anchors follow the maps.
GraphBuilder build_ssd_mobilenet(std::uint64_t seed, std::int64_t image_size) {
    check_input_size("ssd-mobilenet", image_size, 32);
    GraphBuilder g("ssd_mobilenet_v1", seed);
    const auto batch = OnnxDim::symbolic(std::string(kBatchDimName));
    g.add_input("input", OnnxElemType::float32,
                {batch, OnnxDim::fixed(3), OnnxDim::fixed(image_size), OnnxDim::fixed(image_size)});

    // TF pads SAME; symmetric padding 1 gives the same map sizes (150, 75, 38, 19, 10, ...).
    const std::string scope = "FeatureExtractor/MobilenetV1/";
    const MobilenetV1Features features = mobilenet_v1_features(g, "input", scope);
    std::string x = features.block_outputs.back();
    std::int64_t channels = features.channels;
    std::vector<std::string> maps = {features.block_outputs[10], features.block_outputs[12]};
    for (std::size_t i = 0; i < kExtraDepths.size(); ++i) {
        const std::int64_t depth = kExtraDepths[i];
        const auto index = i + 2;
        x = mobilenet_v1_unit(g, fmt::format("{}Conv2d_13_pointwise_1_Conv2d_{}_1x1_{}", scope, index, depth / 2), x,
                          channels, depth / 2, {.kernel = 1});
        x = mobilenet_v1_unit(g, fmt::format("{}Conv2d_13_pointwise_2_Conv2d_{}_3x3_s2_{}", scope, index, depth), x,
                          depth / 2, depth, {.kernel = 3, .stride = 2, .pad = 1});
        channels = depth;
        maps.push_back(x);
    }

    const auto int64s = [&](std::string name, std::vector<std::int64_t> values) {
        return op(g, "Constant", std::move(name), {}, {OnnxAttribute::of_ints("value_ints", std::move(values))});
    };
    const std::string box_shape = int64s("box_shape", {0, -1, kBoxCode});
    const std::string class_shape = int64s("class_shape", {0, -1, kClasses});
    std::vector<std::string> boxes;
    std::vector<std::string> classes;
    for (std::size_t i = 0; i < maps.size(); ++i) {
        const std::string predictor = fmt::format("BoxPredictor_{}/", i);
        boxes.push_back(prediction(g, predictor + "BoxEncodingPredictor", maps[i], kMapChannels[i],
                                   kAnchors[i] * kBoxCode, box_shape));
        classes.push_back(
            prediction(g, predictor + "ClassPredictor", maps[i], kMapChannels[i], kAnchors[i] * kClasses, class_shape));
    }
    op(g, "Concat", "boxes", boxes, {OnnxAttribute::of_int("axis", 1)});
    op(g, "Concat", "class_logits", classes, {OnnxAttribute::of_int("axis", 1)});

    const std::array<std::int64_t, 6> sizes = map_sizes(image_size);
    std::int64_t anchors = 0;
    for (std::size_t i = 0; i < kAnchors.size(); ++i) anchors += sizes[i] * sizes[i] * kAnchors[i];
    g.add_output("boxes", OnnxElemType::float32, {batch, OnnxDim::fixed(anchors), OnnxDim::fixed(kBoxCode)});
    g.add_output("class_logits", OnnxElemType::float32, {batch, OnnxDim::fixed(anchors), OnnxDim::fixed(kClasses)});
    return g;
}

}  // namespace inferbench::models
