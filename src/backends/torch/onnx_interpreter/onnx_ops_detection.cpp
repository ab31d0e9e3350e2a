// The detection heads' operators, NonMaxSuppression and RoiAlign, with LibTorch ops only (the
// torchvision C++ ops are not part of LibTorch). Both follow ONNX Runtime's CPU kernels where the
// specification leaves a choice: NMS breaks equal scores by the lower box index; RoiAlign's max mode
// takes the largest weighted corner of each sample, as ONNX Runtime and the ONNX reference do.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/torch/onnx_interpreter/onnx_kernels.hpp"

namespace inferbench::torch_onnx {

namespace {

// An optional scalar input (NMS's limits): its value at load if constant, else read at every run.
class ScalarInput {
public:
    ScalarInput(const NodeContext& ctx, std::size_t index) : index_(index), present_(ctx.has_input(index)) {
        if (const torch::Tensor* c = ctx.constant(index)) value_ = read(*c);
    }
    // Integers stay integers: max_output_boxes_per_class is often INT64_MAX, beyond a double's precision.
    std::optional<c10::Scalar> get(std::span<const torch::Tensor> in) const {
        if (!present_) return std::nullopt;
        return value_ ? value_ : std::optional<c10::Scalar>(read(in[index_]));
    }

private:
    static c10::Scalar read(const torch::Tensor& t) {
        if (t.numel() != 1) {
            throw std::invalid_argument(fmt::format("a scalar input has {} elements, not one", t.numel()));
        }
        return t.item();
    }
    std::size_t index_;
    bool present_;
    std::optional<c10::Scalar> value_;
};

// [..., 4] boxes as x1, y1, x2, y2 corners with x1 <= x2, y1 <= y2 (the axes' order does not
// matter to the overlap): from [y1, x1, y2, x2] in either order of corners, or centers and sizes.
torch::Tensor to_corners(const torch::Tensor& boxes, bool center_point_box) {
    const auto parts = boxes.to(torch::kFloat).unbind(-1);
    if (center_point_box) {
        return torch::stack({parts[0] - parts[2] / 2, parts[1] - parts[3] / 2, parts[0] + parts[2] / 2,
                             parts[1] + parts[3] / 2},
                            -1);
    }
    return torch::stack({torch::minimum(parts[0], parts[2]), torch::minimum(parts[1], parts[3]),
                         torch::maximum(parts[0], parts[2]), torch::maximum(parts[1], parts[3])},
                        -1);
}

// Whether box `a` suppresses box `b` (x1, y1, x2, y2 each), in ONNX Runtime's arithmetic: boxes of
// no area and disjoint boxes never do.
bool suppresses(const float* a, const float* b, float iou_threshold) {
    const float w = std::max(std::min(a[2], b[2]) - std::max(a[0], b[0]), 0.0F);
    const float h = std::max(std::min(a[3], b[3]) - std::max(a[1], b[1]), 0.0F);
    const float intersection = w * h;
    if (intersection <= 0) return false;
    const float area_a = (a[2] - a[0]) * (a[3] - a[1]);
    const float area_b = (b[2] - b[0]) * (b[3] - b[1]);
    const float union_area = area_a + area_b - intersection;
    if (area_a <= 0 || area_b <= 0 || union_area <= 0) return false;
    return intersection / union_area > iou_threshold;
}

// The greedy pass over one class's candidates, best first: a candidate is kept unless a box kept
// before it overlaps it too much. `order`: candidate box indices by descending score; returns the
// kept ones, in order. Only kept boxes whose left edge lies within the widest box's width of the
// candidate's can overlap it: an ordered index by left edge finds them, so boxes far apart (as
// torchvision offsets each class's) cost a lookup, not a comparison with every kept box.
std::vector<std::int64_t> greedy_keep(const torch::Tensor& corners, const torch::Tensor& order,
                                      float iou_threshold, std::int64_t limit) {
    const torch::Tensor sorted = corners.index_select(0, order).to(torch::kCPU).contiguous();
    const torch::Tensor indices = order.to(torch::kCPU).contiguous();
    const float* box = sorted.data_ptr<float>();
    const std::int64_t* index = indices.data_ptr<std::int64_t>();
    const std::int64_t n = indices.size(0);
    float widest = 0;
    for (std::int64_t i = 0; i < n; ++i) widest = std::max(widest, box[4 * i + 2] - box[4 * i]);
    std::multimap<float, const float*> kept_by_left;
    std::vector<std::int64_t> kept;
    for (std::int64_t i = 0; i < n && static_cast<std::int64_t>(kept.size()) < limit; ++i) {
        const float* candidate = box + 4 * i;
        bool suppressed = false;
        for (auto it = kept_by_left.lower_bound(candidate[0] - widest);
             !suppressed && it != kept_by_left.end() && it->first < candidate[2]; ++it) {
            suppressed = suppresses(it->second, candidate, iou_threshold);
        }
        if (suppressed) continue;
        kept.push_back(index[i]);
        kept_by_left.emplace(candidate[0], candidate);
    }
    return kept;
}

struct NmsLimits {
    std::int64_t per_class = 0;
    double iou = 0;
    std::optional<double> score;
};

torch::Tensor non_max_suppression(const torch::Tensor& boxes, const torch::Tensor& scores, bool center_point_box,
                                  const NmsLimits& limits) {
    if (boxes.dim() != 3 || boxes.size(2) != 4 || scores.dim() != 3 || scores.size(0) != boxes.size(0) ||
        scores.size(2) != boxes.size(1)) {
        throw std::invalid_argument(fmt::format("boxes {} and scores {} are not [batch, boxes, 4] and "
                                                "[batch, classes, boxes]",
                                                fmt::join(boxes.sizes(), "x"), fmt::join(scores.sizes(), "x")));
    }
    const torch::Tensor corners = to_corners(boxes, center_point_box);
    const torch::Tensor score_values = scores.to(torch::kFloat);
    std::vector<std::int64_t> selected;  // (batch, class, box) triples
    for (std::int64_t b = 0; b < boxes.size(0) && limits.per_class > 0; ++b) {
        for (std::int64_t c = 0; c < scores.size(1); ++c) {
            const torch::Tensor s = score_values[b][c];
            torch::Tensor candidates = torch::arange(s.size(0), s.options().dtype(torch::kLong));
            if (limits.score) candidates = candidates.masked_select(s > *limits.score);
            const torch::Tensor by_score =
                std::get<1>(s.index_select(0, candidates).sort(/*stable=*/true, /*dim=*/0, /*descending=*/true));
            for (const std::int64_t box : greedy_keep(corners[b], candidates.index_select(0, by_score),
                                                      static_cast<float>(limits.iou), limits.per_class)) {
                selected.insert(selected.end(), {b, c, box});
            }
        }
    }
    const auto count = static_cast<std::int64_t>(selected.size() / 3);
    return torch::tensor(selected, torch::kLong).reshape({count, 3}).to(boxes.device());
}

Kernel make_non_max_suppression(const NodeContext& ctx) {
    ctx.expect_inputs(2, 5);
    const std::int64_t center = ctx.int_attribute("center_point_box", 0);
    if (center != 0 && center != 1) ctx.fail(fmt::format("center_point_box {} is not 0 or 1", center));
    const ScalarInput per_class(ctx, 2);
    const ScalarInput iou(ctx, 3);
    const ScalarInput score(ctx, 4);
    return single_output([=](const RunContext&, std::span<const torch::Tensor> in) {
        NmsLimits limits;
        limits.per_class = per_class.get(in).value_or(0).toLong();
        limits.iou = iou.get(in).value_or(0.0).toDouble();
        if (limits.iou < 0 || limits.iou > 1) {
            throw std::invalid_argument(fmt::format("iou_threshold {} is not in [0, 1]", limits.iou));
        }
        if (const auto threshold = score.get(in)) limits.score = threshold->toDouble();
        return non_max_suppression(in[0], in[1], center == 1, limits);
    });
}

struct RoiAlignParams {
    bool max_mode = false;
    bool half_pixel = false;  // coordinate_transformation_mode half_pixel: shifts by half a pixel
    std::int64_t height = 1;  // output_height, output_width
    std::int64_t width = 1;
    std::int64_t sampling_ratio = 0;  // 0: ceil(roi size / output size) samples per bin and axis
    double spatial_scale = 1;
};

// One axis of the samples: for every roi, output bin and sample, the two neighbouring pixels and
// their weights, and whether the sample counts (inside the grid of its roi) or reads zero (outside
// the image). Shapes [rois, bins, samples].
struct AxisSamples {
    torch::Tensor low, high, low_weight, high_weight, inside_image, in_grid;
    torch::Tensor grid;  // [rois]: samples per bin on this axis
};

AxisSamples axis_samples(const torch::Tensor& start, const torch::Tensor& end, std::int64_t bins,
                         std::int64_t size, const RoiAlignParams& p) {
    torch::Tensor extent = end - start;
    if (!p.half_pixel) extent = extent.clamp_min(1);
    const torch::Tensor bin = extent / static_cast<double>(bins);
    AxisSamples a;
    a.grid = p.sampling_ratio > 0 ? torch::full_like(extent, static_cast<double>(p.sampling_ratio))
                                  : torch::ceil(extent / static_cast<double>(bins));
    const std::int64_t most = std::max<std::int64_t>(1, a.grid.numel() == 0 ? 1 : a.grid.max().item<std::int64_t>());
    const auto options = start.options();
    const torch::Tensor bin_index = torch::arange(bins, options).view({1, bins, 1});
    const torch::Tensor sample = torch::arange(most, options).view({1, 1, most});
    const torch::Tensor grid = a.grid.view({-1, 1, 1});
    torch::Tensor at = start.view({-1, 1, 1}) + bin_index * bin.view({-1, 1, 1}) +
                       (sample + 0.5) * bin.view({-1, 1, 1}) / grid.clamp_min(1);
    a.in_grid = sample < grid;
    a.inside_image = (at >= -1.0) & (at <= static_cast<double>(size));
    at = at.clamp_min(0);
    torch::Tensor low = at.floor().clamp_max(static_cast<double>(size - 1));
    const torch::Tensor at_edge = low >= static_cast<double>(size - 1);
    at = torch::where(at_edge, low, at);
    const torch::Tensor high = torch::where(at_edge, low, low + 1);
    a.high_weight = at - low;
    a.low_weight = 1 - a.high_weight;
    a.low = low.to(torch::kLong);
    a.high = high.to(torch::kLong);
    return a;
}

torch::Tensor roi_align(const torch::Tensor& x, const torch::Tensor& rois, const torch::Tensor& batch_indices,
                        const RoiAlignParams& p) {
    if (x.dim() != 4 || rois.dim() != 2 || rois.size(1) != 4 || batch_indices.dim() != 1 ||
        batch_indices.size(0) != rois.size(0)) {
        throw std::invalid_argument(fmt::format("X {}, rois {} and batch_indices {} are not [N, C, H, W], "
                                                "[rois, 4] and [rois]",
                                                fmt::join(x.sizes(), "x"), fmt::join(rois.sizes(), "x"),
                                                fmt::join(batch_indices.sizes(), "x")));
    }
    const std::int64_t channels = x.size(1), height = x.size(2), width = x.size(3);
    const double offset = p.half_pixel ? 0.5 : 0.0;
    const torch::Tensor r = rois.to(torch::kFloat) * p.spatial_scale - offset;
    const AxisSamples ys = axis_samples(r.select(1, 1), r.select(1, 3), p.height, height, p);
    const AxisSamples xs = axis_samples(r.select(1, 0), r.select(1, 2), p.width, width, p);
    // Samples as [rois, out_h, samples_h, out_w, samples_w]; pixels as rows of [N * H * W, C].
    const auto y_axis = [](const torch::Tensor& t) { return t.unsqueeze(3).unsqueeze(4); };
    const auto x_axis = [](const torch::Tensor& t) { return t.unsqueeze(1).unsqueeze(2); };
    const torch::Tensor base = (batch_indices.to(torch::kLong).to(x.device()) * height * width).view({-1, 1, 1, 1, 1});
    const torch::Tensor pixels = x.permute({0, 2, 3, 1}).reshape({-1, channels}).to(torch::kFloat);
    const auto corner = [&](const torch::Tensor& y, const torch::Tensor& xx, const torch::Tensor& weight) {
        const torch::Tensor index = base + y_axis(y) * width + x_axis(xx);
        std::vector<std::int64_t> shape = index.sizes().vec();
        shape.push_back(channels);
        return pixels.index_select(0, index.flatten()).view(shape) * weight.unsqueeze(-1);
    };
    const torch::Tensor inside = (y_axis(ys.inside_image) & x_axis(xs.inside_image)).unsqueeze(-1);
    const torch::Tensor in_grid = (y_axis(ys.in_grid) & x_axis(xs.in_grid)).unsqueeze(-1);
    const std::array<torch::Tensor, 4> weighted = {
        corner(ys.low, xs.low, y_axis(ys.low_weight) * x_axis(xs.low_weight)),
        corner(ys.low, xs.high, y_axis(ys.low_weight) * x_axis(xs.high_weight)),
        corner(ys.high, xs.low, y_axis(ys.high_weight) * x_axis(xs.low_weight)),
        corner(ys.high, xs.high, y_axis(ys.high_weight) * x_axis(xs.high_weight))};
    torch::Tensor pooled;
    if (p.max_mode) {
        // A sample outside the image reads 0; one beyond its roi's grid does not exist.
        torch::Tensor sample = torch::maximum(torch::maximum(weighted[0], weighted[1]),
                                              torch::maximum(weighted[2], weighted[3]));
        sample = torch::where(inside, sample, torch::zeros_like(sample));
        sample = sample.masked_fill(in_grid.logical_not(), -std::numeric_limits<float>::infinity());
        pooled = sample.amax({2, 4});
        pooled = torch::where(torch::isneginf(pooled), torch::zeros_like(pooled), pooled);
    } else {
        const torch::Tensor sample = (weighted[0] + weighted[1] + weighted[2] + weighted[3]) * (inside & in_grid);
        const torch::Tensor count = (ys.grid * xs.grid).clamp_min(1).view({-1, 1, 1, 1});
        pooled = sample.sum({2, 4}) / count;
    }
    return pooled.permute({0, 3, 1, 2}).to(x.scalar_type()).contiguous();
}

Kernel make_roi_align(const NodeContext& ctx) {
    ctx.expect_inputs(3, 3);
    RoiAlignParams p;
    const std::string mode = ctx.string_attribute("mode", "avg");
    if (mode != "avg" && mode != "max") ctx.fail(fmt::format("mode '{}' is not avg or max", mode));
    p.max_mode = mode == "max";
    // Opset 10 has no attribute and shifts as output_half_pixel does; from 16 on half_pixel is the default.
    const std::string transform =
        ctx.string_attribute("coordinate_transformation_mode", ctx.opset() >= 16 ? "half_pixel" : "output_half_pixel");
    if (transform != "half_pixel" && transform != "output_half_pixel") {
        ctx.fail(fmt::format("coordinate_transformation_mode '{}' is not half_pixel or output_half_pixel", transform));
    }
    p.half_pixel = transform == "half_pixel";
    p.height = ctx.int_attribute("output_height", 1);
    p.width = ctx.int_attribute("output_width", 1);
    p.sampling_ratio = ctx.int_attribute("sampling_ratio", 0);
    p.spatial_scale = ctx.float_attribute("spatial_scale", 1.0F);
    if (p.height < 1 || p.width < 1 || p.sampling_ratio < 0) {
        ctx.fail(fmt::format("output_height {}, output_width {} must be positive and sampling_ratio {} not negative",
                             p.height, p.width, p.sampling_ratio));
    }
    return single_output(
        [p](const RunContext&, std::span<const torch::Tensor> in) { return roi_align(in[0], in[1], in[2], p); });
}

}  // namespace

std::span<const KernelEntry> detection_kernels() {
    static const KernelEntry entries[] = {
        {"NonMaxSuppression", make_non_max_suppression},
        {"RoiAlign", make_roi_align},
    };
    return entries;
}

}  // namespace inferbench::torch_onnx
