// Resize (and opset 10's form of it) for the cases LibTorch's upsampling computes exactly as ONNX
// defines them: nearest with asymmetric coordinates and floor rounding (what PyTorch exports for
// F.interpolate(mode="nearest"), as in YOLO's necks) and (bi/tri)linear with half-pixel or
// align-corners coordinates. Other combinations fail at load rather than compute something else.
#include <cmath>

#include <fmt/format.h>

#include "backends/torch/onnx_interpreter/onnx_kernels.hpp"

namespace inferbench::torch_onnx {

namespace {

using Ints = std::vector<std::int64_t>;

struct ResizeMode {
    bool nearest = true;
    bool align_corners = false;
};

ResizeMode read_mode(const NodeContext& ctx) {
    const std::string mode = ctx.string_attribute("mode", "nearest");
    const std::string coordinates =
        ctx.string_attribute("coordinate_transformation_mode", ctx.opset() < 11 ? "asymmetric" : "half_pixel");
    const std::string rounding =
        ctx.string_attribute("nearest_mode", ctx.opset() < 11 ? "floor" : "round_prefer_floor");
    if (ctx.has_attribute("axes") || ctx.int_attribute("antialias", 0) != 0 ||
        ctx.string_attribute("keep_aspect_ratio_policy", "stretch") != "stretch") {
        ctx.fail("the attributes axes, antialias and keep_aspect_ratio_policy are not supported");
    }
    if (mode == "nearest" && coordinates == "asymmetric" && rounding == "floor") return {true, false};
    if (mode == "linear" && (coordinates == "half_pixel" || coordinates == "pytorch_half_pixel")) return {false, false};
    if (mode == "linear" && coordinates == "align_corners") return {false, true};
    ctx.fail(fmt::format(
        "mode '{}' with coordinate_transformation_mode '{}' and nearest_mode '{}' is not supported; supported: "
        "nearest with asymmetric and floor (PyTorch's 'nearest'), linear with half_pixel, pytorch_half_pixel or "
        "align_corners",
        mode, coordinates, rounding));
}

// The scales input as doubles: read at load when constant.
class ScalesInput {
public:
    ScalesInput(const NodeContext& ctx, std::size_t index) : present_(ctx.has_input(index)), index_(index) {
        if (const torch::Tensor* t = ctx.constant(index)) constant_ = to_doubles(*t);
    }
    std::vector<double> get(std::span<const torch::Tensor> in) const {
        if (constant_) return *constant_;
        return present_ && index_ < in.size() ? to_doubles(in[index_]) : std::vector<double>{};
    }

private:
    static std::vector<double> to_doubles(const torch::Tensor& t) {
        const torch::Tensor values = t.to(torch::kCPU, torch::kDouble).contiguous();
        return {values.data_ptr<double>(), values.data_ptr<double>() + values.numel()};
    }
    bool present_;
    std::size_t index_;
    std::optional<std::vector<double>> constant_;
};

// Output spatial sizes and, when the node gave scales, the per-axis scales LibTorch should map with.
struct Target {
    Ints size;
    std::vector<c10::optional<double>> scales;  // LibTorch 1.13 takes c10::optional, not std::optional
};

Target target_of(const torch::Tensor& x, const Ints& sizes, const std::vector<double>& scales) {
    const auto rank = static_cast<std::size_t>(x.dim());
    Target t;
    if (!sizes.empty()) {
        if (sizes.size() != rank || sizes[0] != x.size(0) || sizes[1] != x.size(1)) {
            throw std::invalid_argument("Resize: sizes must have the input's rank and keep batch and channels");
        }
        t.size.assign(sizes.begin() + 2, sizes.end());
        t.scales.assign(rank - 2, c10::nullopt);
        return t;
    }
    if (scales.size() != rank || scales[0] != 1.0 || scales[1] != 1.0) {
        throw std::invalid_argument("Resize: scales must have the input's rank and be 1 for batch and channels");
    }
    for (std::size_t d = 2; d < rank; ++d) {
        const double in = static_cast<double>(x.size(static_cast<std::int64_t>(d)));
        t.size.push_back(static_cast<std::int64_t>(std::floor(in * scales[d])));
        t.scales.emplace_back(scales[d]);
    }
    return t;
}

torch::Tensor upsample(const torch::Tensor& x, const Target& t, ResizeMode mode) {
    const auto& s = t.scales;
    switch (t.size.size()) {
        case 1:
            return mode.nearest ? torch::upsample_nearest1d(x, t.size, s[0])
                                : torch::upsample_linear1d(x, t.size, mode.align_corners, s[0]);
        case 2:
            return mode.nearest ? torch::upsample_nearest2d(x, t.size, s[0], s[1])
                                : torch::upsample_bilinear2d(x, t.size, mode.align_corners, s[0], s[1]);
        case 3:
            return mode.nearest ? torch::upsample_nearest3d(x, t.size, s[0], s[1], s[2])
                                : torch::upsample_trilinear3d(x, t.size, mode.align_corners, s[0], s[1], s[2]);
        default:
            throw std::invalid_argument("Resize: only 1 to 3 spatial axes are supported");
    }
}

}  // namespace

Kernel make_resize(const NodeContext& ctx) {
    const bool opset10 = ctx.opset() < 11;  // X, scales; from 11: X, roi, scales, sizes
    ctx.expect_inputs(opset10 ? 2 : 1, opset10 ? 2 : 4);
    const ResizeMode mode = read_mode(ctx);
    const ScalesInput scales(ctx, opset10 ? 1 : 2);
    const IntListInput sizes = opset10 ? IntListInput() : IntListInput(ctx, 3);
    return single_output([=](const RunContext&, std::span<const torch::Tensor> in) {
        return upsample(in[0], target_of(in[0], sizes.get(in), scales.get(in)), mode);
    });
}

}  // namespace inferbench::torch_onnx
