// The detectors' box decoding, each as its model's published post-processing writes it: TF object detection's SSD
// box coder and anchor generator (MLPerf's ssd-mobilenet and its PyTorch port models/ssd_mobilenet_v1.py), MLPerf's
// ssd_r34.py Encoder and dboxes_R34_coco, darknet's [yolo] layer (YOLOv3) and ultralytics' Detect (YOLOv5).
#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "pipeline/postprocess.hpp"

namespace inferbench::pipeline {

namespace {

float sigmoid(float x) { return 1.0F / (1.0F + std::exp(-x)); }

Box corners(float cx, float cy, float w, float h) {
    return {cx - 0.5F * w, cy - 0.5F * h, cx + 0.5F * w, cy + 0.5F * h};
}

std::string shape_text(const FloatTensor& t) { return fmt::format("[{}]", fmt::join(t.shape, ", ")); }

[[noreturn]] void wrong_outputs(std::string_view coding, std::string_view expected,
                                std::span<const FloatTensor> outputs) {
    std::vector<std::string> shapes;
    for (const FloatTensor& t : outputs) shapes.push_back(shape_text(t));
    throw UserError(
        fmt::format("{} box decoding needs {}; the model's outputs are {}: name the right post step in "
                    "the plan's pipeline.steps",
                    coding, expected, shapes.empty() ? "none" : fmt::format("{}", fmt::join(shapes, " "))));
}

std::int64_t element_count(const FloatTensor& t) {
    std::int64_t n = 1;
    for (const std::int64_t d : t.shape) n *= d;
    return n;
}

bool fits(const FloatTensor& t, std::size_t rank) {
    return t.shape.size() == rank && static_cast<std::int64_t>(t.values.size()) == element_count(t);
}

// ---- SSD (TF object detection, ssd_mobilenet_v1_coco.config) ----

constexpr int kSsdLayers = 6;
constexpr float kSsdMinScale = 0.2F;
constexpr float kSsdMaxScale = 0.95F;
constexpr std::array<float, 5> kSsdAspectRatios = {1.0F, 2.0F, 0.5F, 3.0F, 0.3333F};
// faster_rcnn_box_coder's scale factors for y, x, h, w.
constexpr std::array<float, 4> kSsdCoderWeights = {10.0F, 10.0F, 5.0F, 5.0F};

// The feature maps' sides, as the zoo builds ssd-mobilenet (zoo_ssd_mobilenet.cpp's map_sizes: four stride-2
// convolutions to Conv2d_11, then each map half the previous, rounded up).
std::array<std::int64_t, kSsdLayers> ssd_mobilenet_maps(std::int64_t image_side) {
    std::int64_t n = image_side;
    for (int i = 0; i < 4; ++i) n = (n + 1) / 2;
    std::array<std::int64_t, kSsdLayers> sizes{};
    for (std::int64_t& size : sizes) {
        size = n;
        n = (n + 1) / 2;
    }
    return sizes;
}

struct AnchorSpec {
    float scale;
    float aspect_ratio;
};

// ssd_anchor_generator's boxes of one layer: three on the lowest (reduce_boxes_in_lowest_layer), else each aspect
// ratio at the layer's scale and one square at the geometric mean of this scale and the next.
std::vector<AnchorSpec> ssd_layer_specs(int layer) {
    const auto scale_of = [](int i) {
        if (i >= kSsdLayers) return 1.0F;
        return kSsdMinScale + (kSsdMaxScale - kSsdMinScale) * static_cast<float>(i) / (kSsdLayers - 1);
    };
    const float scale = scale_of(layer);
    if (layer == 0) return {{0.1F, 1.0F}, {scale, 2.0F}, {scale, 0.5F}};
    std::vector<AnchorSpec> specs;
    for (const float ratio : kSsdAspectRatios) specs.push_back({scale, ratio});
    specs.push_back({std::sqrt(scale * scale_of(layer + 1)), 1.0F});
    return specs;
}

std::vector<BoxCandidates> decode_ssd_tf(std::span<const FloatTensor> outputs, ImageSize input, float threshold) {
    const auto bad = [&] {
        wrong_outputs("ssd-mobilenet (TF SSD)",
                      "boxes [b, anchors, 4] and class_logits "
                      "[b, anchors, classes]",
                      outputs);
    };
    if (outputs.size() != 2 || !fits(outputs[0], 3) || !fits(outputs[1], 3)) bad();
    const FloatTensor& codes = outputs[0];
    const FloatTensor& logits = outputs[1];
    if (codes.shape[2] != 4 || logits.shape[0] != codes.shape[0] || logits.shape[1] != codes.shape[1]) bad();
    if (input.width != input.height) {
        throw UserError(fmt::format("TF SSD anchors need a square input; this model's is {}", to_string(input)));
    }
    const std::vector<Prior> priors = ssd_mobilenet_priors(input.width);
    if (static_cast<std::int64_t>(priors.size()) != codes.shape[1]) {
        throw UserError(fmt::format("TF SSD box decoding: a {} input has {} anchors; the model's outputs have {}",
                                    to_string(input), priors.size(), codes.shape[1]));
    }
    const std::int64_t classes = logits.shape[2];
    const auto w = static_cast<float>(input.width);
    const auto h = static_cast<float>(input.height);
    std::vector<BoxCandidates> images(static_cast<std::size_t>(codes.shape[0]));
    for (std::size_t b = 0; b < images.size(); ++b) {
        for (std::size_t a = 0; a < priors.size(); ++a) {
            const float* code = &codes.values[(b * priors.size() + a) * 4];
            const float* row = &logits.values[(b * priors.size() + a) * static_cast<std::size_t>(classes)];
            const Prior& p = priors[a];
            const float cy = code[0] / kSsdCoderWeights[0] * p.h + p.cy;
            const float cx = code[1] / kSsdCoderWeights[1] * p.w + p.cx;
            const float bh = std::exp(code[2] / kSsdCoderWeights[2]) * p.h;
            const float bw = std::exp(code[3] / kSsdCoderWeights[3]) * p.w;
            const Box unit = corners(cx, cy, bw, bh);
            for (std::int64_t c = 1; c < classes; ++c) {  // class 0: the background
                const float score = sigmoid(row[c]);
                if (!(score > threshold)) continue;
                images[b].boxes.push_back({unit.x1 * w, unit.y1 * h, unit.x2 * w, unit.y2 * h});
                images[b].scores.push_back(score);
                images[b].classes.push_back(c);
            }
        }
    }
    return images;
}

// ---- SSD-ResNet34 (MLPerf ssd_r34.py) ----

constexpr double kR34Figure = 1200;
constexpr std::array<int, 6> kR34Maps = {50, 25, 13, 7, 3, 3};
constexpr std::array<double, 6> kR34Steps = {24, 48, 92, 171, 400, 400};
constexpr std::array<double, 7> kR34Scales = {84, 180, 324, 492, 660, 828, 996};
constexpr float kR34ScaleXy = 0.1F;
constexpr float kR34ScaleWh = 0.2F;

std::vector<double> r34_aspect_ratios(std::size_t layer) {
    if (layer == 0 || layer >= 4) return {2.0};
    return {2.0, 3.0};
}

std::vector<BoxCandidates> decode_ssd_r34(std::span<const FloatTensor> outputs, ImageSize input, float threshold) {
    const auto bad = [&] {
        wrong_outputs("ssd-resnet34 (MLPerf)", "locs [b, 4, boxes] and confs [b, classes, boxes]", outputs);
    };
    if (outputs.size() != 2 || !fits(outputs[0], 3) || !fits(outputs[1], 3)) bad();
    const FloatTensor& locs = outputs[0];
    const FloatTensor& confs = outputs[1];
    if (locs.shape[1] != 4 || confs.shape[0] != locs.shape[0] || confs.shape[2] != locs.shape[2]) bad();
    static const std::vector<Prior> priors = ssd_resnet34_priors();
    const auto n = static_cast<std::size_t>(locs.shape[2]);
    if (n != priors.size()) {
        throw UserError(
            fmt::format("SSD-ResNet34 box decoding: dboxes_R34_coco has {} boxes (a 1200x1200 input); the "
                        "model's outputs have {}",
                        priors.size(), n));
    }
    const auto classes = static_cast<std::size_t>(confs.shape[1]);
    const auto w = static_cast<float>(input.width);
    const auto h = static_cast<float>(input.height);
    std::vector<BoxCandidates> images(static_cast<std::size_t>(locs.shape[0]));
    std::vector<float> probabilities(classes);
    for (std::size_t b = 0; b < images.size(); ++b) {
        const float* loc = &locs.values[b * 4 * n];
        const float* conf = &confs.values[b * classes * n];
        for (std::size_t i = 0; i < n; ++i) {
            float largest = conf[i];
            for (std::size_t c = 1; c < classes; ++c) largest = std::max(largest, conf[c * n + i]);
            float sum = 0;
            for (std::size_t c = 0; c < classes; ++c) sum += probabilities[c] = std::exp(conf[c * n + i] - largest);
            const Prior& p = priors[i];
            const float cx = kR34ScaleXy * loc[i] * p.w + p.cx;
            const float cy = kR34ScaleXy * loc[n + i] * p.h + p.cy;
            const float bw = std::exp(kR34ScaleWh * loc[2 * n + i]) * p.w;
            const float bh = std::exp(kR34ScaleWh * loc[3 * n + i]) * p.h;
            const Box unit = corners(cx, cy, bw, bh);
            for (std::size_t c = 1; c < classes; ++c) {  // class 0: the background
                const float score = probabilities[c] / sum;
                if (!(score > threshold)) continue;
                images[b].boxes.push_back({unit.x1 * w, unit.y1 * h, unit.x2 * w, unit.y2 * h});
                images[b].scores.push_back(score);
                images[b].classes.push_back(static_cast<std::int64_t>(c));
            }
        }
    }
    return images;
}

// ---- YOLO (darknet yolov3.cfg's [yolo] layers; ultralytics YOLOv5 Detect) ----

constexpr std::int64_t kYoloAnchorsPerCell = 3;
struct YoloScale {
    std::int64_t stride;
    std::array<float, 6> anchors;  // (w, h) x 3 in input pixels
};
// The COCO anchors both publish (yolov3.cfg's anchors and masks; yolov5's models/*.yaml P3/8, P4/16, P5/32).
constexpr std::array<YoloScale, 3> kYoloScales = {
    {{8, {10, 13, 16, 30, 33, 23}}, {16, {30, 61, 62, 45, 59, 119}}, {32, {116, 90, 156, 198, 373, 326}}}};

struct YoloCell {
    float x, y, w, h;  // the box in input pixels
    float objectness;
};

void decode_yolo_scale(const FloatTensor& t, std::int64_t image, const YoloScale& scale, bool v5, float threshold,
                       BoxCandidates& out) {
    const std::int64_t rows = t.shape[2];
    const std::int64_t cols = t.shape[3];
    const std::int64_t per_anchor = t.shape[1] / kYoloAnchorsPerCell;
    const std::int64_t classes = per_anchor - 5;
    const auto plane = static_cast<std::size_t>(rows * cols);
    const auto stride = static_cast<float>(scale.stride);
    for (std::int64_t a = 0; a < kYoloAnchorsPerCell; ++a) {
        const float* base = &t.values[static_cast<std::size_t>((image * t.shape[1] + a * per_anchor)) * plane];
        const auto value = [&](std::int64_t k, std::size_t cell) {
            return base[static_cast<std::size_t>(k) * plane + cell];
        };
        for (std::int64_t y = 0; y < rows; ++y) {
            for (std::int64_t x = 0; x < cols; ++x) {
                const auto cell = static_cast<std::size_t>(y * cols + x);
                const float objectness = sigmoid(value(4, cell));
                if (!(objectness > threshold)) continue;  // darknet and ultralytics both drop these first
                const float sx = sigmoid(value(0, cell));
                const float sy = sigmoid(value(1, cell));
                const auto aw = scale.anchors[static_cast<std::size_t>(2 * a)];
                const auto ah = scale.anchors[static_cast<std::size_t>(2 * a + 1)];
                float cx, cy, bw, bh;
                if (v5) {
                    cx = (2.0F * sx - 0.5F + static_cast<float>(x)) * stride;
                    cy = (2.0F * sy - 0.5F + static_cast<float>(y)) * stride;
                    const float tw = 2.0F * sigmoid(value(2, cell));
                    const float th = 2.0F * sigmoid(value(3, cell));
                    bw = tw * tw * aw;
                    bh = th * th * ah;
                } else {
                    cx = (sx + static_cast<float>(x)) * stride;
                    cy = (sy + static_cast<float>(y)) * stride;
                    bw = std::exp(value(2, cell)) * aw;
                    bh = std::exp(value(3, cell)) * ah;
                }
                const Box box = corners(cx, cy, bw, bh);
                // darknet: every class whose objectness * probability is above the threshold; ultralytics'
                // detect.py (multi_label off): the best class only.
                const auto add = [&](float score, std::int64_t c) {
                    out.boxes.push_back(box);
                    out.scores.push_back(score);
                    out.classes.push_back(c);
                };
                std::int64_t best = 0;
                float best_score = -1;
                for (std::int64_t c = 0; c < classes; ++c) {
                    const float score = objectness * sigmoid(value(5 + c, cell));
                    if (!v5 && score > threshold) add(score, c);
                    if (score > best_score) {
                        best_score = score;
                        best = c;
                    }
                }
                if (v5 && best_score > threshold) add(best_score, best);
            }
        }
    }
}

std::vector<BoxCandidates> decode_yolo(std::span<const FloatTensor> outputs, ImageSize input, float threshold,
                                       bool v5) {
    const std::string_view name = v5 ? "yolov5 (ultralytics)" : "yolov3 (darknet)";
    const auto bad = [&] {
        wrong_outputs(name, "three [b, 3 * (5 + classes), h, w] outputs of strides 8, 16 and 32", outputs);
    };
    if (outputs.empty()) bad();
    const std::int64_t batch = outputs.front().shape.empty() ? 0 : outputs.front().shape[0];
    std::vector<const YoloScale*> scales;
    for (const FloatTensor& t : outputs) {
        if (!fits(t, 4) || t.shape[0] != batch || t.shape[1] % kYoloAnchorsPerCell != 0 ||
            t.shape[1] / kYoloAnchorsPerCell <= 5 || t.shape[2] <= 0 || t.shape[3] <= 0 ||
            t.shape[1] != outputs.front().shape[1]) {
            bad();
        }
        const std::int64_t stride = input.height / t.shape[2];
        const auto* scale = std::ranges::find(kYoloScales, stride, &YoloScale::stride);
        if (scale == kYoloScales.end() || t.shape[2] * stride != input.height || t.shape[3] * stride != input.width) {
            bad();
        }
        scales.push_back(scale);
    }
    std::vector<BoxCandidates> images(static_cast<std::size_t>(batch));
    for (std::size_t b = 0; b < images.size(); ++b) {
        for (std::size_t o = 0; o < outputs.size(); ++o) {
            decode_yolo_scale(outputs[o], static_cast<std::int64_t>(b), *scales[o], v5, threshold, images[b]);
        }
    }
    return images;
}

}  // namespace

std::string_view to_string(BoxCoding coding) {
    switch (coding) {
        case BoxCoding::none:
            return "none";
        case BoxCoding::ssd_tf_anchors:
            return "ssd_tf_anchors";
        case BoxCoding::ssd_r34_dboxes:
            return "ssd_r34_dboxes";
        case BoxCoding::yolov3:
            return "yolov3";
        case BoxCoding::yolov5:
            return "yolov5";
    }
    return "unknown";
}

std::vector<Prior> ssd_mobilenet_priors(std::int64_t image_side) {
    const auto maps = ssd_mobilenet_maps(image_side);
    std::vector<Prior> priors;
    for (int layer = 0; layer < kSsdLayers; ++layer) {
        const std::vector<AnchorSpec> specs = ssd_layer_specs(layer);
        const auto side = static_cast<float>(maps[static_cast<std::size_t>(layer)]);
        const float stride = 1.0F / side;
        const float offset = 0.5F * stride;
        for (std::int64_t y = 0; y < maps[static_cast<std::size_t>(layer)]; ++y) {
            for (std::int64_t x = 0; x < maps[static_cast<std::size_t>(layer)]; ++x) {
                for (const AnchorSpec& s : specs) {
                    const float root = std::sqrt(s.aspect_ratio);
                    priors.push_back({static_cast<float>(x) * stride + offset, static_cast<float>(y) * stride + offset,
                                      s.scale * root, s.scale / root});
                }
            }
        }
    }
    return priors;
}

std::vector<Prior> ssd_resnet34_priors() {
    std::vector<Prior> priors;
    for (std::size_t layer = 0; layer < kR34Maps.size(); ++layer) {
        const double cells_per_unit = kR34Figure / kR34Steps[layer];  // 1200 / 92 = 13.04...: as published
        const double small = kR34Scales[layer] / kR34Figure;
        const double mean = std::sqrt(small * kR34Scales[layer + 1] / kR34Figure);
        std::vector<std::pair<double, double>> sizes = {{small, small}, {mean, mean}};
        for (const double ratio : r34_aspect_ratios(layer)) {
            sizes.emplace_back(small * std::sqrt(ratio), small / std::sqrt(ratio));
            sizes.emplace_back(small / std::sqrt(ratio), small * std::sqrt(ratio));
        }
        const auto clamp = [](double v) { return static_cast<float>(std::clamp(v, 0.0, 1.0)); };
        for (const auto& [w, h] : sizes) {
            for (int row = 0; row < kR34Maps[layer]; ++row) {
                for (int col = 0; col < kR34Maps[layer]; ++col) {
                    priors.push_back(
                        {clamp((col + 0.5) / cells_per_unit), clamp((row + 0.5) / cells_per_unit), clamp(w), clamp(h)});
                }
            }
        }
    }
    return priors;
}

std::vector<BoxCandidates> decode_boxes(const DetectionHead& head, std::span<const FloatTensor> outputs,
                                        ImageSize input, float score_threshold) {
    switch (head.coding) {
        case BoxCoding::ssd_tf_anchors:
            return decode_ssd_tf(outputs, input, score_threshold);
        case BoxCoding::ssd_r34_dboxes:
            return decode_ssd_r34(outputs, input, score_threshold);
        case BoxCoding::yolov3:
            return decode_yolo(outputs, input, score_threshold, false);
        case BoxCoding::yolov5:
            return decode_yolo(outputs, input, score_threshold, true);
        case BoxCoding::none:
            break;
    }
    throw UserError("box decoding asked of a pipeline whose detection head names no box coding");
}

}  // namespace inferbench::pipeline
