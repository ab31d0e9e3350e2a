// Shape and data-movement operators. Shapes, axes and indices that are constant are read at load;
// Shape's output is a CPU tensor, so shape arithmetic stays on the host whatever the device.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "backends/torch/onnx_interpreter/onnx_kernels.hpp"

namespace inferbench::torch_onnx {

namespace {

using Ints = std::vector<std::int64_t>;

// The list from input `index` from `since_opset` on, from the attribute `name` before.
struct ListSource {
    IntListInput input;
    std::optional<Ints> attribute;

    Ints get(std::span<const torch::Tensor> in) const { return attribute ? *attribute : input.get(in); }
    bool present() const { return attribute || input.present(); }
};

ListSource list_source(const NodeContext& ctx, std::size_t index, std::string_view name, std::int64_t since_opset) {
    if (ctx.opset() >= since_opset) return {IntListInput(ctx, index), std::nullopt};
    if (!ctx.has_attribute(name)) return {};
    return {IntListInput(), ctx.ints_attribute(name)};
}

Kernel make_identity(const NodeContext& ctx) {
    ctx.expect_inputs(1, 1);
    return single_output([](const RunContext&, std::span<const torch::Tensor> in) { return in[0]; });
}

// At inference Dropout passes its input through and keeps every element: its mask (output 1,
// which Swin's export asks for) is all true. The ratio and training_mode inputs do nothing then.
Kernel make_dropout(const NodeContext& ctx) {
    ctx.expect_inputs(1, 3);
    ctx.expect_outputs(2);
    return [](const RunContext&, std::span<const torch::Tensor> in, std::span<torch::Tensor> out) {
        out[0] = in[0];
        if (out.size() > 1) out[1] = torch::ones_like(in[0], torch::kBool);
    };
}

Kernel make_flatten(const NodeContext& ctx) {
    ctx.expect_inputs(1, 1);
    const std::int64_t axis = ctx.int_attribute("axis", 1);
    return single_output([axis](const RunContext&, std::span<const torch::Tensor> in) {
        const torch::Tensor& x = in[0];
        const auto split = static_cast<std::size_t>(axis < 0 ? axis + x.dim() : axis);
        if (split > static_cast<std::size_t>(x.dim())) throw std::out_of_range("Flatten axis out of range");
        return x.reshape(
            {c10::multiply_integers(x.sizes().slice(0, split)), c10::multiply_integers(x.sizes().slice(split))});
    });
}

// A 0 copies the input's dimension unless allowzero (opset 14); -1 is inferred by reshape().
Kernel make_reshape(const NodeContext& ctx) {
    ctx.expect_inputs(ctx.opset() >= 5 ? 2 : 1, 2);
    const ListSource shape = list_source(ctx, 1, "shape", 5);
    const bool allow_zero = ctx.int_attribute("allowzero", 0) != 0;
    return single_output([shape, allow_zero](const RunContext&, std::span<const torch::Tensor> in) {
        Ints target = shape.get(in);
        for (std::size_t d = 0; d < target.size() && !allow_zero; ++d) {
            if (target[d] == 0) target[d] = in[0].size(static_cast<std::int64_t>(d));
        }
        return in[0].reshape(target);
    });
}

Kernel make_transpose(const NodeContext& ctx) {
    ctx.expect_inputs(1, 1);
    const Ints perm = ctx.ints_attribute("perm", Ints{});
    return single_output([perm](const RunContext&, std::span<const torch::Tensor> in) {
        if (!perm.empty()) return in[0].permute(perm);
        Ints reversed(static_cast<std::size_t>(in[0].dim()));
        std::iota(reversed.rbegin(), reversed.rend(), 0);
        return in[0].permute(reversed);
    });
}

Kernel make_concat(const NodeContext& ctx) {
    ctx.expect_inputs(1, std::numeric_limits<std::size_t>::max());
    const std::int64_t axis = ctx.int_attribute("axis");
    return single_output([axis](const RunContext&, std::span<const torch::Tensor> in) {
        return torch::cat(on_common_device(in), axis);
    });
}

Kernel make_shape(const NodeContext& ctx) {
    ctx.expect_inputs(1, 1);
    const std::int64_t start = ctx.int_attribute("start", 0);
    const std::optional<std::int64_t> end =
        ctx.has_attribute("end") ? std::optional(ctx.int_attribute("end")) : std::nullopt;
    return single_output([start, end](const RunContext&, std::span<const torch::Tensor> in) {
        const std::int64_t rank = in[0].dim();
        const auto clamp = [rank](std::int64_t v) { return std::clamp(v < 0 ? v + rank : v, std::int64_t{0}, rank); };
        const auto first = static_cast<std::size_t>(clamp(start));
        const auto last = static_cast<std::size_t>(clamp(end.value_or(rank)));
        const auto sizes = in[0].sizes();
        return torch::tensor(Ints(sizes.begin() + static_cast<std::ptrdiff_t>(first),
                                  sizes.begin() + static_cast<std::ptrdiff_t>(std::max(first, last))),
                             torch::kLong);
    });
}

// Constant indices that pick one position (a scalar) or a run of consecutive ones (a 1-D list) along
// the axis: a view of the data, as PyTorch's own x[i] and x[a:b] are, where index_select copies
// (nn.MultiheadAttention's export takes Q, K and V from one projection this way).
struct ViewIndices {
    Ints values;
    bool scalar = false;

    static std::optional<ViewIndices> of(const torch::Tensor* indices) {
        if (indices == nullptr || indices->dim() > 1 || indices->numel() == 0 || indices->is_floating_point()) {
            return std::nullopt;
        }
        return ViewIndices{to_int64s(*indices), indices->dim() == 0};
    }

    // The view of `data`, or an undefined tensor where the indices (made non-negative for this axis
    // size) are not consecutive.
    torch::Tensor view(const torch::Tensor& data, std::int64_t axis) const {
        const std::int64_t n = data.size(axis);
        const auto at = [&](std::size_t k) {
            const std::int64_t i = values[k] < 0 ? values[k] + n : values[k];
            if (i < 0 || i >= n) throw std::out_of_range(fmt::format("Gather: index {} is out of range for an axis of {}", values[k], n));
            return i;
        };
        if (scalar) return data.select(axis, at(0));
        const std::int64_t first = at(0);
        for (std::size_t k = 1; k < values.size(); ++k) {
            if (at(k) != first + static_cast<std::int64_t>(k)) return {};
        }
        return data.narrow(axis, first, static_cast<std::int64_t>(values.size()));
    }
};

// Output shape: data.shape[:axis] + indices.shape + data.shape[axis + 1:]; negative indices count from the end.
Kernel make_gather(const NodeContext& ctx) {
    ctx.expect_inputs(2, 2);
    const std::int64_t axis_attribute = ctx.int_attribute("axis", 0);
    const std::optional<ViewIndices> view_indices = ViewIndices::of(ctx.constant(1));
    return single_output([axis_attribute, view_indices](const RunContext&, std::span<const torch::Tensor> in) {
        const torch::Tensor& data = in[0];
        const std::int64_t axis = normalize_axis(axis_attribute, data.dim());
        if (view_indices) {
            if (torch::Tensor view = view_indices->view(data, axis); view.defined()) return view;
        }
        torch::Tensor indices = in[1].to(data.device());
        indices = torch::where(indices < 0, indices + data.size(axis), indices);
        Ints shape(data.sizes().begin(), data.sizes().begin() + axis);
        shape.insert(shape.end(), indices.sizes().begin(), indices.sizes().end());
        shape.insert(shape.end(), data.sizes().begin() + axis + 1, data.sizes().end());
        return data.index_select(axis, indices.reshape(-1)).reshape(shape);
    });
}

Kernel make_unsqueeze(const NodeContext& ctx) {
    ctx.expect_inputs(ctx.opset() >= 13 ? 2 : 1, 2);
    const ListSource axes = list_source(ctx, 1, "axes", 13);
    return single_output([axes](const RunContext&, std::span<const torch::Tensor> in) {
        Ints dims = axes.get(in);
        const auto rank = in[0].dim() + static_cast<std::int64_t>(dims.size());
        for (std::int64_t& d : dims) d = normalize_axis(d, rank);
        std::ranges::sort(dims);
        torch::Tensor y = in[0];
        for (const std::int64_t d : dims) y = y.unsqueeze(d);
        return y;
    });
}

Kernel make_squeeze(const NodeContext& ctx) {
    ctx.expect_inputs(1, 2);
    const ListSource axes = list_source(ctx, 1, "axes", 13);
    return single_output([axes](const RunContext&, std::span<const torch::Tensor> in) {
        if (!axes.present()) return in[0].squeeze();
        Ints dims = axes.get(in);
        for (std::int64_t& d : dims) d = normalize_axis(d, in[0].dim());
        std::ranges::sort(dims, std::greater<>());
        torch::Tensor y = in[0];
        for (const std::int64_t d : dims) y = y.squeeze(d);
        return y;
    });
}

// One axis of Slice, with ONNX's clamping; negative steps walk backwards via index_select,
// which LibTorch's slice() cannot.
torch::Tensor slice_axis(const torch::Tensor& x, std::int64_t axis, std::int64_t start, std::int64_t end,
                         std::int64_t step) {
    if (step == 0) throw std::invalid_argument("Slice step 0");
    const std::int64_t dim = x.size(axis);
    const auto wrap = [dim](std::int64_t v) { return v < 0 ? std::max(v, -dim) + dim : v; };
    if (step > 0) return x.slice(axis, std::min(wrap(start), dim), std::min(wrap(end), dim), step);
    const std::int64_t first = std::clamp(wrap(start), std::int64_t{-1}, dim - 1);
    const std::int64_t last = end < -dim ? -1 : std::clamp(wrap(end), std::int64_t{-1}, dim - 1);
    const torch::Tensor indices =
        torch::arange(first, last, step, torch::TensorOptions(torch::kLong).device(x.device()));
    return x.index_select(axis, indices);
}

Kernel make_slice(const NodeContext& ctx) {
    const bool inputs = ctx.opset() >= 10;
    ctx.expect_inputs(inputs ? 3 : 1, inputs ? 5 : 1);
    const ListSource starts = list_source(ctx, 1, "starts", 10);
    const ListSource ends = list_source(ctx, 2, "ends", 10);
    const ListSource axes = list_source(ctx, 3, "axes", 10);
    const ListSource steps = inputs ? list_source(ctx, 4, "steps", 10) : ListSource{};
    return single_output([=](const RunContext&, std::span<const torch::Tensor> in) {
        const Ints b = starts.get(in);
        const Ints e = ends.get(in);
        const Ints a = axes.present() ? axes.get(in) : Ints{};
        const Ints s = steps.present() ? steps.get(in) : Ints{};
        if (e.size() != b.size() || (!a.empty() && a.size() != b.size()) || (!s.empty() && s.size() != b.size())) {
            throw std::invalid_argument("Slice: starts, ends, axes and steps differ in length");
        }
        torch::Tensor y = in[0];
        for (std::size_t k = 0; k < b.size(); ++k) {
            const std::int64_t axis = normalize_axis(a.empty() ? static_cast<std::int64_t>(k) : a[k], y.dim());
            y = slice_axis(y, axis, b[k], e[k], s.empty() ? 1 : s[k]);
        }
        return y;
    });
}

// ONNX Expand broadcasts both ways: a 1 in `shape` keeps the input's dimension.
Kernel make_expand(const NodeContext& ctx) {
    ctx.expect_inputs(2, 2);
    const IntListInput shape(ctx, 1);
    return single_output([shape](const RunContext&, std::span<const torch::Tensor> in) {
        const Ints target = at::infer_size(in[0].sizes(), shape.get(in));
        check_shape(target, "Expand");
        return in[0].expand(target);
    });
}

Kernel make_split(const NodeContext& ctx) {
    ctx.expect_inputs(1, 2);
    const std::int64_t axis_attribute = ctx.int_attribute("axis", 0);
    const ListSource sizes = list_source(ctx, 1, "split", 13);
    const auto pieces = static_cast<std::int64_t>(ctx.node().outputs.size());
    return [=](const RunContext&, std::span<const torch::Tensor> in, std::span<torch::Tensor> out) {
        const std::int64_t axis = normalize_axis(axis_attribute, in[0].dim());
        // Without sizes: equal parts, the last one smaller if need be (opset 18's rule).
        const std::vector<torch::Tensor> parts =
            sizes.present() ? torch::split_with_sizes(in[0], sizes.get(in), axis)
                            : torch::split(in[0], (in[0].size(axis) + pieces - 1) / pieces, axis);
        if (parts.size() != out.size()) {
            throw std::invalid_argument(fmt::format("Split made {} parts for {} outputs", parts.size(), out.size()));
        }
        std::copy(parts.begin(), parts.end(), out.begin());
    };
}

torch::Tensor constant_value(const NodeContext& ctx) {
    const auto& attributes = ctx.node().attributes;
    if (attributes.size() != 1) ctx.fail("needs exactly one value attribute");
    const std::string& name = attributes.begin()->first;
    if (name == "value") return to_torch(ctx.tensor_attribute(name), ctx.node().name);
    if (name == "value_float") return torch::tensor(ctx.float_attribute(name), torch::kFloat);
    if (name == "value_int") return torch::tensor(ctx.int_attribute(name), torch::kLong);
    if (name == "value_ints") return torch::tensor(ctx.ints_attribute(name), torch::kLong);
    if (name == "value_floats") {
        const auto& values = std::get<std::vector<float>>(attributes.begin()->second);
        return torch::tensor(values, torch::kFloat);
    }
    ctx.fail(fmt::format("value attribute '{}' is not supported", name));
}

// No inputs, so the loader computes it once; the kernel only ever runs there.
Kernel make_constant(const NodeContext& ctx) {
    ctx.expect_inputs(0, 0);
    torch::Tensor value = constant_value(ctx);
    return single_output(
        [value = std::move(value)](const RunContext&, std::span<const torch::Tensor>) { return value; });
}

// Floating fills go to the program's device and float type; integer ones stay on the CPU like
// every other integer constant.
Kernel make_constant_of_shape(const NodeContext& ctx) {
    ctx.expect_inputs(1, 1);
    const torch::Tensor fill = ctx.has_attribute("value") ? to_torch(ctx.tensor_attribute("value"), ctx.node().name)
                                                          : torch::zeros({1}, torch::kFloat);
    if (fill.numel() != 1) ctx.fail("attribute 'value' must hold one element");
    const c10::Scalar value = fill.reshape(-1)[0].item();
    const bool floating = fill.is_floating_point();
    const torch::ScalarType type = fill.scalar_type();
    const IntListInput shape(ctx, 0);
    return single_output([=](const RunContext& run, std::span<const torch::Tensor> in) {
        const auto options = floating ? torch::TensorOptions(run.float_type).device(run.device)
                                      : torch::TensorOptions(type).device(torch::kCPU);
        const Ints target = shape.get(in);
        check_shape(target, "ConstantOfShape");
        return torch::full(target, value, options);
    });
}

Kernel make_range(const NodeContext& ctx) {
    ctx.expect_inputs(3, 3);
    return single_output([](const RunContext&, std::span<const torch::Tensor> in) {
        const auto options = in[0].options().device(torch::kCPU);
        const double start = in[0].item<double>();
        const double limit = in[1].item<double>();
        const double delta = in[2].item<double>();
        if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta)) {
            throw std::invalid_argument("Range: start, limit and delta must be finite and delta non-zero");
        }
        const double count = std::max(0.0, std::ceil((limit - start) / delta));
        if (count > static_cast<double>(kMaxShapeElements)) {
            throw std::invalid_argument(fmt::format("Range: more than {} elements", kMaxShapeElements));
        }
        if (count == 0) return torch::empty({0}, in[0].options());
        return torch::arange(in[0].item(), in[1].item(), in[2].item(), options).to(in[0].device());
    });
}

}  // namespace

std::span<const KernelEntry> shape_kernels() {
    static const KernelEntry entries[] = {
        {"Identity", make_identity}, {"Dropout", make_dropout},    {"Flatten", make_flatten},
        {"Reshape", make_reshape},   {"Transpose", make_transpose}, {"Concat", make_concat},
        {"Shape", make_shape},       {"Gather", make_gather},       {"Unsqueeze", make_unsqueeze},
        {"Squeeze", make_squeeze},   {"Slice", make_slice},         {"Expand", make_expand},
        {"Split", make_split},       {"Constant", make_constant},   {"ConstantOfShape", make_constant_of_shape},
        {"Range", make_range},
    };
    return entries;
}

}  // namespace inferbench::torch_onnx
