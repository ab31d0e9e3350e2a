// YOLOv5 v6.x/v7.0 (ultralytics, github.com/ultralytics/yolov5, models/yolov5{s,m,l,x}.yaml and
// models/common.py): CSP backbone of C3 blocks, SPPF, PANet neck, Detect head of three 1x1 convs
// (80 COCO classes, 3 anchors: 255 channels per scale). The graph ends at those convs' raw
// outputs: no sigmoid/grid/anchor decoding and no NMS. Names follow ultralytics' state_dict
// ("model.2.m.0.cv1.conv.weight"), layer indices as in the yaml.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "models/zoo_builders.hpp"
#include "models/zoo_graph_ops.hpp"

namespace inferbench::models {

namespace {

using graph_ops::concat;

constexpr std::int64_t kSppfPool = 5;
// See zoo_resnet.cpp: a small scale on each residual branch's last BN keeps random activations O(1).
constexpr float kResidualGamma = 0.2F;

// ultralytics' parse_model(): channels scaled then rounded up to a multiple of 8 (make_divisible),
// repeats (above 1) scaled and rounded to nearest, at least 1 (no multiple here
// produces a tie, where Python's round and llround would differ).
struct Scaler {
    YoloV5Config config;
    std::int64_t channels(std::int64_t c) const {
        return static_cast<std::int64_t>(std::ceil(static_cast<double>(c) * config.width_multiple / 8.0)) * 8;
    }
    std::int64_t repeats(std::int64_t n) const {
        if (n <= 1) return n;
        return std::max<std::int64_t>(std::llround(static_cast<double>(n) * config.depth_multiple), 1);
    }
};

// common.py Conv: conv (no bias, "same" padding) + BN + SiLU.
std::string conv_bn_silu(GraphBuilder& g, const std::string& name, const std::string& x, std::int64_t in,
                         std::int64_t out, std::int64_t kernel, std::int64_t stride = 1, float gamma = 1.0F) {
    std::string y = g.conv(name + ".conv", x, in, out, {.kernel = kernel, .stride = stride, .pad = kernel / 2});
    y = g.batch_norm(name + ".bn", y, out, graph_ops::kYoloBatchNormEpsilon, gamma);
    return graph_ops::silu(g, name + ".act", y);
}

// common.py C3: cv3(cat(m(cv1(x)), cv2(x))), m = n Bottlenecks of width c2 / 2 (expansion 1.0).
std::string c3(GraphBuilder& g, const std::string& p, const std::string& x, std::int64_t in, std::int64_t out,
               std::int64_t n, bool shortcut) {
    const std::int64_t hidden = out / 2;
    std::string y = conv_bn_silu(g, p + ".cv1", x, in, hidden, 1);
    for (std::int64_t i = 0; i < n; ++i) {
        const std::string bp = fmt::format("{}.m.{}", p, i);
        std::string b = conv_bn_silu(g, bp + ".cv1", y, hidden, hidden, 1);
        b = conv_bn_silu(g, bp + ".cv2", b, hidden, hidden, 3, 1, shortcut ? kResidualGamma : 1.0F);
        y = shortcut ? g.add(bp + ".add", y, b) : b;
    }
    const std::string side = conv_bn_silu(g, p + ".cv2", x, in, hidden, 1);
    return conv_bn_silu(g, p + ".cv3", concat(g, p + ".concat", {y, side}, 1), 2 * hidden, out, 1);
}

// common.py SPPF: three chained 5x5 stride-1 max pools, concatenated with their input.
std::string sppf(GraphBuilder& g, const std::string& p, const std::string& x, std::int64_t in, std::int64_t out) {
    const std::int64_t hidden = in / 2;
    std::vector<std::string> pyramid{conv_bn_silu(g, p + ".cv1", x, in, hidden, 1)};
    for (int i = 0; i < 3; ++i) {
        pyramid.push_back(g.max_pool(fmt::format("{}.m.{}", p, i), pyramid.back(), kSppfPool, 1, kSppfPool / 2));
    }
    return conv_bn_silu(g, p + ".cv2", concat(g, p + ".concat", pyramid, 1), 4 * hidden, out, 1);
}

}  // namespace

GraphBuilder build_yolov5(const YoloV5Config& config, std::uint64_t seed) {
    if (config.image_size <= 0 || config.image_size % 32 != 0) {
        throw std::logic_error(
            fmt::format("yolov5: image size {} is not a positive multiple of 32", config.image_size));
    }
    const Scaler s{config};
    const auto ch = [&](std::int64_t c) { return s.channels(c); };
    const auto n = [&](std::int64_t r) { return s.repeats(r); };
    const auto m = [](int i) { return fmt::format("model.{}", i); };

    GraphBuilder g("yolov5", seed);
    const auto batch = OnnxDim::symbolic(std::string(kBatchDimName));
    const auto fixed = [](std::int64_t v) { return OnnxDim::fixed(v); };
    g.add_input("images", OnnxElemType::float32, {batch, fixed(3), fixed(config.image_size), fixed(config.image_size)});

    // Backbone (yaml layers 0-9). Layer 0 is the 6x6 stride-2 conv, padding 2, that replaced Focus in v6.0.
    std::string x = g.conv("model.0.conv", "images", 3, ch(64), {.kernel = 6, .stride = 2, .pad = 2});
    x = graph_ops::silu(g, "model.0.act", g.batch_norm("model.0.bn", x, ch(64), graph_ops::kYoloBatchNormEpsilon));
    x = conv_bn_silu(g, m(1), x, ch(64), ch(128), 3, 2);
    x = c3(g, m(2), x, ch(128), ch(128), n(3), true);
    x = conv_bn_silu(g, m(3), x, ch(128), ch(256), 3, 2);
    const std::string p3 = c3(g, m(4), x, ch(256), ch(256), n(6), true);
    x = conv_bn_silu(g, m(5), p3, ch(256), ch(512), 3, 2);
    const std::string p4 = c3(g, m(6), x, ch(512), ch(512), n(9), true);
    x = conv_bn_silu(g, m(7), p4, ch(512), ch(1024), 3, 2);
    x = c3(g, m(8), x, ch(1024), ch(1024), n(3), true);
    x = sppf(g, m(9), x, ch(1024), ch(1024));

    // PANet neck (layers 10-23): top-down, then bottom-up.
    const std::string l10 = conv_bn_silu(g, m(10), x, ch(1024), ch(512), 1);
    x = concat(g, m(12), {graph_ops::upsample2x(g, m(11), l10), p4}, 1);
    x = c3(g, m(13), x, 2 * ch(512), ch(512), n(3), false);
    const std::string l14 = conv_bn_silu(g, m(14), x, ch(512), ch(256), 1);
    x = concat(g, m(16), {graph_ops::upsample2x(g, m(15), l14), p3}, 1);
    const std::string out_p3 = c3(g, m(17), x, 2 * ch(256), ch(256), n(3), false);
    x = concat(g, m(19), {conv_bn_silu(g, m(18), out_p3, ch(256), ch(256), 3, 2), l14}, 1);
    const std::string out_p4 = c3(g, m(20), x, 2 * ch(256), ch(512), n(3), false);
    x = concat(g, m(22), {conv_bn_silu(g, m(21), out_p4, ch(512), ch(512), 3, 2), l10}, 1);
    const std::string out_p5 = c3(g, m(23), x, 2 * ch(512), ch(1024), n(3), false);

    // Detect (layer 24): one 1x1 conv with bias per scale. Outputs in Detect's order, finest first.
    const std::string levels[] = {out_p3, out_p4, out_p5};
    const std::int64_t widths[] = {ch(256), ch(512), ch(1024)};
    for (int i = 0; i < 3; ++i) {
        const std::string name = fmt::format("model.24.m.{}", i);
        g.conv(name, levels[i], widths[i], kYoloOutputChannels, {.kernel = 1, .bias = true});
        const std::string output = fmt::format("output_p{}", i + 3);
        g.rename_value(name, output);
        const std::int64_t size = config.image_size >> (i + 3);
        g.add_output(output, OnnxElemType::float32, {batch, fixed(kYoloOutputChannels), fixed(size), fixed(size)});
    }
    return g;
}

GraphBuilder build_yolov5s(std::uint64_t seed) { return build_yolov5(kYoloV5s, seed); }
GraphBuilder build_yolov5m(std::uint64_t seed) { return build_yolov5(kYoloV5m, seed); }
GraphBuilder build_yolov5l(std::uint64_t seed) { return build_yolov5(kYoloV5l, seed); }
GraphBuilder build_yolov5x(std::uint64_t seed) { return build_yolov5(kYoloV5x, seed); }

}  // namespace inferbench::models
