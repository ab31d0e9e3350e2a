// Padding, tiling, the indexing operators (TopK, NonZero, GatherND, ScatterND, ScatterElements,
// GatherElements) that detection heads and windowed attention export, and CumSum (position ids
// from attention masks). Index inputs follow ONNX: negative values count from the end of their axis.
#include <algorithm>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "backends/torch/onnx_interpreter/onnx_kernels.hpp"

namespace inferbench::torch_onnx {

namespace {

using Ints = std::vector<std::int64_t>;

enum class PadMode { constant, reflect, edge, wrap };

PadMode read_pad_mode(const NodeContext& ctx) {
    const std::string mode = ctx.string_attribute("mode", "constant");
    if (mode == "constant") return PadMode::constant;
    if (mode == "reflect") return PadMode::reflect;
    if (mode == "edge") return PadMode::edge;
    if (mode == "wrap") return PadMode::wrap;
    ctx.fail(fmt::format("mode '{}' is not one of constant, reflect, edge, wrap", mode));
}

// The source index of each output position along an axis of size n padded by (begin, end).
torch::Tensor pad_indices(std::int64_t n, std::int64_t begin, std::int64_t end, PadMode mode, torch::Device device) {
    torch::Tensor i = torch::arange(-begin, n + end, torch::TensorOptions(torch::kLong).device(device));
    switch (mode) {
        case PadMode::edge:
            return i.clamp(0, n - 1);
        case PadMode::wrap:
            return torch::remainder(i, n);
        default: {  // reflect: mirrored without repeating the edge, period 2 (n - 1)
            if (n == 1) return torch::zeros_like(i);
            const torch::Tensor r = torch::remainder(i, 2 * (n - 1));
            return torch::where(r < n, r, 2 * (n - 1) - r);
        }
    }
}

// pads = [begin of each axis..., end of each axis...] over `axes` (all axes when empty).
torch::Tensor pad(const torch::Tensor& x, const Ints& pads, Ints axes, PadMode mode, const c10::Scalar& value) {
    const std::int64_t rank = x.dim();
    if (axes.empty()) {
        axes.resize(static_cast<std::size_t>(rank));
        std::iota(axes.begin(), axes.end(), 0);
    }
    if (pads.size() != 2 * axes.size()) {
        throw std::invalid_argument(fmt::format("Pad: {} pads for {} axes", pads.size(), axes.size()));
    }
    Ints begin(static_cast<std::size_t>(rank), 0);
    Ints end(static_cast<std::size_t>(rank), 0);
    for (std::size_t k = 0; k < axes.size(); ++k) {
        const auto axis = static_cast<std::size_t>(normalize_axis(axes[k], rank));
        begin[axis] = pads[k];
        end[axis] = pads[k + axes.size()];
    }
    Ints shape = x.sizes().vec();
    for (std::size_t d = 0; d < shape.size(); ++d) {
        if (begin[d] > kMaxShapeElements || end[d] > kMaxShapeElements) {
            throw std::invalid_argument(fmt::format("Pad: pads above {}", kMaxShapeElements));
        }
        shape[d] += begin[d] + end[d];
    }
    check_shape(shape, "Pad");
    if (mode == PadMode::constant) {
        Ints torch_pads;  // last axis first, (begin, end) each; negative values crop
        for (std::size_t d = begin.size(); d-- > 0;) torch_pads.insert(torch_pads.end(), {begin[d], end[d]});
        return torch::constant_pad_nd(x, torch_pads, value);
    }
    torch::Tensor y = x;
    for (std::size_t d = 0; d < begin.size(); ++d) {
        if (begin[d] == 0 && end[d] == 0) continue;
        const auto axis = static_cast<std::int64_t>(d);
        if (y.size(axis) == 0) throw std::invalid_argument("Pad: reflect, edge and wrap need a non-empty axis");
        y = y.index_select(axis, pad_indices(y.size(axis), begin[d], end[d], mode, y.device()));
    }
    return y;
}

// The fill of constant padding: an input from opset 11 (read at load when constant), an attribute before.
struct PadValue {
    bool input = false;
    std::optional<c10::Scalar> constant;

    c10::Scalar get(std::span<const torch::Tensor> in) const {
        if (constant) return *constant;
        if (!input || in.size() < 3 || !in[2].defined()) return 0;
        if (in[2].numel() != 1) throw std::invalid_argument("Pad: constant_value must hold one element");
        return in[2].reshape(-1)[0].item();
    }
};

PadValue pad_value(const NodeContext& ctx) {
    if (ctx.opset() < 11) return {false, c10::Scalar(static_cast<double>(ctx.float_attribute("value", 0.0F)))};
    const torch::Tensor* value = ctx.constant(2);
    if (value == nullptr) return {ctx.has_input(2), std::nullopt};
    if (value->numel() != 1) ctx.fail("constant_value must hold one element");
    return {true, value->reshape(-1)[0].item()};
}

// Opset 11 moved pads and the constant from attributes to inputs; opset 18 added axes.
Kernel make_pad(const NodeContext& ctx) {
    const bool inputs = ctx.opset() >= 11;
    ctx.expect_inputs(inputs ? 2 : 1, inputs ? 4 : 1);
    const PadMode mode = read_pad_mode(ctx);
    const IntListInput pads_input = inputs ? IntListInput(ctx, 1) : IntListInput();
    const Ints pads_attribute = inputs ? Ints{} : ctx.ints_attribute("pads");
    const PadValue value = pad_value(ctx);
    const IntListInput axes = inputs ? IntListInput(ctx, 3) : IntListInput();
    return single_output([=](const RunContext&, std::span<const torch::Tensor> in) {
        return pad(in[0], inputs ? pads_input.get(in) : pads_attribute, axes.get(in), mode, value.get(in));
    });
}

Kernel make_tile(const NodeContext& ctx) {
    ctx.expect_inputs(2, 2);
    const IntListInput repeats(ctx, 1);
    return single_output([repeats](const RunContext&, std::span<const torch::Tensor> in) {
        const Ints r = repeats.get(in);
        if (static_cast<std::int64_t>(r.size()) != in[0].dim()) {
            throw std::invalid_argument(fmt::format("Tile: {} repeats for rank {}", r.size(), in[0].dim()));
        }
        Ints shape = in[0].sizes().vec();
        for (std::size_t d = 0; d < r.size(); ++d) {
            if (r[d] < 0) throw std::invalid_argument("Tile: repeats must not be negative");
            if (shape[d] != 0 && r[d] > kMaxShapeElements / shape[d]) {
                throw std::invalid_argument(fmt::format("Tile: more than {} elements", kMaxShapeElements));
            }
            shape[d] *= r[d];
        }
        check_shape(shape, "Tile");
        return in[0].repeat(r);
    });
}

// Opset 10 made K an input (before: attribute k); opset 11 added largest and sorted.
Kernel make_top_k(const NodeContext& ctx) {
    const bool k_input = ctx.opset() >= 10;
    ctx.expect_inputs(k_input ? 2 : 1, k_input ? 2 : 1);
    const std::int64_t axis = ctx.int_attribute("axis", -1);
    const bool largest = ctx.int_attribute("largest", 1) != 0;
    (void)ctx.int_attribute("sorted", 1);  // unsorted results may come in any order: sorted ones too
    const IntListInput k_value = k_input ? IntListInput(ctx, 1) : IntListInput();
    const std::int64_t k_attribute = k_input ? 0 : ctx.int_attribute("k");
    return [=](const RunContext&, std::span<const torch::Tensor> in, std::span<torch::Tensor> out) {
        const Ints k = k_input ? k_value.get(in) : Ints{k_attribute};
        if (k.size() != 1 || k[0] < 0) throw std::invalid_argument("TopK: K must be one non-negative value");
        // ONNX breaks ties by the lower index, which torch::topk does not promise; a stable sort
        // does (detection heads rank thousands of equal scores when the weights are random).
        const std::int64_t dim = normalize_axis(axis, in[0].dim());
        if (k[0] > in[0].size(dim)) throw std::invalid_argument("TopK: K is larger than the axis");
        auto [values, indices] = in[0].sort(/*stable=*/true, dim, /*descending=*/largest);
        out[0] = values.narrow(dim, 0, k[0]);
        if (out.size() > 1) out[1] = indices.narrow(dim, 0, k[0]);
    };
}

// [rank, count] int64: the coordinates of each non-zero element, in row-major order.
Kernel make_non_zero(const NodeContext& ctx) {
    ctx.expect_inputs(1, 1);
    return single_output([](const RunContext&, std::span<const torch::Tensor> in) {
        const torch::Tensor x = in[0].dim() == 0 ? in[0].reshape({1}) : in[0];
        return torch::nonzero(x).t().contiguous();
    });
}

torch::Tensor wrapped(const torch::Tensor& indices, std::int64_t size) {
    return torch::where(indices < 0, indices + size, indices);
}

// Row-major offsets of the index tuples in `indices` ([..., k]) into dims [0, k) of `shape`.
// Scalar arithmetic only: no host tensor meets a device one (capture-safe).
torch::Tensor linear_offsets(const torch::Tensor& indices, c10::IntArrayRef shape) {
    const std::int64_t k = indices.size(-1);
    if (k > static_cast<std::int64_t>(shape.size())) {
        throw std::invalid_argument(fmt::format("index tuples of length {} for a rank-{} tensor", k, shape.size()));
    }
    const torch::Tensor idx = indices.to(torch::kLong);
    torch::Tensor offsets = torch::zeros(idx.sizes().slice(0, static_cast<std::size_t>(idx.dim() - 1)), idx.options());
    std::int64_t stride = 1;
    for (std::int64_t d = k; d-- > 0;) {
        const std::int64_t size = shape[static_cast<std::size_t>(d)];
        offsets += wrapped(idx.select(-1, d), size) * stride;
        stride *= size;
    }
    return offsets;
}

// batch_dims leading axes of data and indices pair up; each index tuple picks a slice of the rest.
Kernel make_gather_nd(const NodeContext& ctx) {
    ctx.expect_inputs(2, 2);
    const std::int64_t batch_dims = ctx.int_attribute("batch_dims", 0);
    if (batch_dims < 0) ctx.fail("batch_dims must not be negative");
    return single_output([batch_dims](const RunContext&, std::span<const torch::Tensor> in) {
        const torch::Tensor& data = in[0];
        const torch::Tensor indices = in[1].to(data.device());
        const auto b = static_cast<std::size_t>(batch_dims);
        if (indices.dim() < 1 || data.dim() <= batch_dims || indices.dim() <= batch_dims) {
            throw std::invalid_argument("GatherND: batch_dims must be below both ranks");
        }
        const auto ds = data.sizes();
        const std::int64_t batch = c10::multiply_integers(ds.slice(0, b));
        const auto k = static_cast<std::size_t>(indices.size(-1));
        const auto inner = ds.slice(b);
        const torch::Tensor offsets = linear_offsets(indices.reshape({batch, -1, indices.size(-1)}), inner);
        const Ints rest(inner.begin() + static_cast<std::ptrdiff_t>(k), inner.end());
        Ints flat{batch, c10::multiply_integers(inner.slice(0, k))};
        flat.insert(flat.end(), rest.begin(), rest.end());
        const torch::Tensor rows = torch::arange(batch, offsets.options()).unsqueeze(1);
        const torch::Tensor picked = data.reshape(flat).index({rows, offsets});
        Ints shape(indices.sizes().begin(), indices.sizes().end() - 1);
        shape.insert(shape.end(), rest.begin(), rest.end());
        return picked.reshape(shape);
    });
}

enum class ScatterReduction { none, add, mul, max, min };

ScatterReduction read_reduction(const NodeContext& ctx) {
    const std::string r = ctx.string_attribute("reduction", "none");
    if (r == "none") return ScatterReduction::none;
    if (r == "add") return ScatterReduction::add;
    if (r == "mul") return ScatterReduction::mul;
    if (r == "max") return ScatterReduction::max;
    if (r == "min") return ScatterReduction::min;
    ctx.fail(fmt::format("reduction '{}' is not one of none, add, mul, max, min", r));
}

const char* torch_reduce(ScatterReduction r) {
    switch (r) {
        case ScatterReduction::mul:
            return "prod";
        case ScatterReduction::max:
            return "amax";
        case ScatterReduction::min:
            return "amin";
        default:
            return "sum";
    }
}

// A copy of data with updates written at the index tuples (of length k <= rank) of indices.
Kernel make_scatter_nd(const NodeContext& ctx) {
    ctx.expect_inputs(3, 3);
    const ScatterReduction reduction = read_reduction(ctx);
    return single_output([reduction](const RunContext&, std::span<const torch::Tensor> in) {
        const auto all = on_common_device(in);
        const torch::Tensor& data = all[0];
        const torch::Tensor& indices = all[1];
        const auto k = static_cast<std::size_t>(indices.size(-1));
        const torch::Tensor offsets = linear_offsets(indices, data.sizes()).reshape(-1);
        Ints flat{c10::multiply_integers(data.sizes().slice(0, k))};
        flat.insert(flat.end(), data.sizes().begin() + static_cast<std::ptrdiff_t>(k), data.sizes().end());
        Ints update_shape = flat;
        update_shape[0] = offsets.numel();
        torch::Tensor y = data.reshape(flat).clone();
        const torch::Tensor updates = all[2].to(data.scalar_type()).reshape(update_shape);
        if (reduction == ScatterReduction::none) {
            y.index_put_({offsets}, updates);
        } else if (reduction == ScatterReduction::add) {
            y.index_add_(0, offsets, updates);
        } else {
            y.index_reduce_(0, offsets, updates, torch_reduce(reduction), true);
        }
        return y.reshape(data.sizes());
    });
}

Kernel make_scatter_elements(const NodeContext& ctx) {
    ctx.expect_inputs(3, 3);
    const std::int64_t axis_attribute = ctx.int_attribute("axis", 0);
    const ScatterReduction reduction = read_reduction(ctx);
    return single_output([=](const RunContext&, std::span<const torch::Tensor> in) {
        const auto all = on_common_device(in);
        const torch::Tensor& data = all[0];
        const std::int64_t axis = normalize_axis(axis_attribute, data.dim());
        const torch::Tensor indices = wrapped(all[1].to(torch::kLong), data.size(axis));
        const torch::Tensor updates = all[2].to(data.scalar_type());
        if (reduction == ScatterReduction::none) return data.scatter(axis, indices, updates);
        return data.scatter_reduce(axis, indices, updates, torch_reduce(reduction), true);
    });
}

// ScatterElements' inverse: torch.gather with ONNX's negative indices.
Kernel make_gather_elements(const NodeContext& ctx) {
    ctx.expect_inputs(2, 2);
    const std::int64_t axis_attribute = ctx.int_attribute("axis", 0);
    return single_output([=](const RunContext&, std::span<const torch::Tensor> in) {
        const auto all = on_common_device(in);
        const std::int64_t axis = normalize_axis(axis_attribute, all[0].dim());
        return all[0].gather(axis, wrapped(all[1].to(torch::kLong), all[0].size(axis)));
    });
}

// Exclusive sums shift the inclusive ones by one place rather than subtract the element, so
// floating results round as a running sum does; `reverse` sums from the end of the axis.
Kernel make_cum_sum(const NodeContext& ctx) {
    ctx.expect_inputs(2, 2);
    const bool exclusive = ctx.int_attribute("exclusive", 0) != 0;
    const bool reverse = ctx.int_attribute("reverse", 0) != 0;
    const IntListInput axis_input(ctx, 1);
    return single_output([=](const RunContext&, std::span<const torch::Tensor> in) {
        const std::vector<std::int64_t> axes = axis_input.get(in);
        if (axes.size() != 1) throw std::invalid_argument(fmt::format("axis has {} values, not one", axes.size()));
        torch::Tensor x = in[0];
        const std::int64_t axis = normalize_axis(axes[0], x.dim());
        if (reverse) x = x.flip(axis);
        // fp16 and bf16 sum in fp32 (LibTorch 1.13 has no fp16 cumsum on the CPU); integers keep their type.
        const bool narrow_float = x.scalar_type() == torch::kHalf || x.scalar_type() == torch::kBFloat16;
        torch::Tensor y = x.cumsum(axis, narrow_float ? torch::kFloat : x.scalar_type()).to(x.scalar_type());
        if (exclusive && x.size(axis) > 0) {
            y = torch::cat({torch::zeros_like(x.narrow(axis, 0, 1)), y.narrow(axis, 0, x.size(axis) - 1)}, axis);
        }
        return reverse ? y.flip(axis) : y;
    });
}

}  // namespace

std::span<const KernelEntry> index_kernels() {
    static const KernelEntry entries[] = {
        {"Pad", make_pad},
        {"Tile", make_tile},
        {"TopK", make_top_k},
        {"NonZero", make_non_zero},
        {"GatherND", make_gather_nd},
        {"ScatterND", make_scatter_nd},
        {"ScatterElements", make_scatter_elements},
        {"GatherElements", make_gather_elements},
        {"CumSum", make_cum_sum},
    };
    return entries;
}

}  // namespace inferbench::torch_onnx
