// Network layers: convolution, normalization, pooling, dense layers, softmax and resizing.
// ONNX and LibTorch differ where padding is asymmetric or computed (auto_pad), so pads are resolved
// per run from the input size and, when LibTorch cannot express them, applied as an explicit pad.
#include <algorithm>
#include <limits>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "backends/torch/onnx_interpreter/onnx_kernels.hpp"

namespace inferbench::torch_onnx {

namespace {

using Ints = std::vector<std::int64_t>;

enum class AutoPad { notset, valid, same_upper, same_lower };

// A sliding window's attributes as the node gives them; empty vectors mean the ONNX defaults.
struct Window {
    Ints kernel;
    Ints strides;
    Ints dilations;
    Ints pads;  // begin values of every spatial axis, then end values
    AutoPad auto_pad = AutoPad::notset;
    bool ceil_mode = false;
};

AutoPad read_auto_pad(const NodeContext& ctx) {
    const std::string auto_pad = ctx.string_attribute("auto_pad", "NOTSET");
    if (auto_pad == "NOTSET") return AutoPad::notset;
    if (auto_pad == "VALID") return AutoPad::valid;
    if (auto_pad == "SAME_UPPER") return AutoPad::same_upper;
    if (auto_pad == "SAME_LOWER") return AutoPad::same_lower;
    ctx.fail(fmt::format("auto_pad '{}' is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER", auto_pad));
}

Window read_window(const NodeContext& ctx) {
    return Window{ctx.ints_attribute("kernel_shape", Ints{}),
                  ctx.ints_attribute("strides", Ints{}),
                  ctx.ints_attribute("dilations", Ints{}),
                  ctx.ints_attribute("pads", Ints{}),
                  read_auto_pad(ctx),
                  ctx.int_attribute("ceil_mode", 0) != 0};
}

Ints or_ones(const Ints& values, std::size_t rank) { return values.empty() ? Ints(rank, 1) : values; }

// Window geometry resolved for one input: explicit begin and end pads per spatial axis.
struct Geometry {
    Ints kernel;
    Ints strides;
    Ints dilations;
    Ints begin;
    Ints end;

    bool symmetric() const { return begin == end; }
    // constant_pad_nd's order: last axis first, (begin, end) each.
    Ints torch_pads() const {
        Ints p;
        for (std::size_t k = begin.size(); k-- > 0;) p.insert(p.end(), {begin[k], end[k]});
        return p;
    }
};

Geometry resolve(const Window& w, const torch::Tensor& x, Ints kernel) {
    const auto rank = static_cast<std::size_t>(x.dim() - 2);
    Geometry g{std::move(kernel), or_ones(w.strides, rank), or_ones(w.dilations, rank), Ints(rank, 0), Ints(rank, 0)};
    if (w.auto_pad == AutoPad::notset && !w.pads.empty()) {
        g.begin.assign(w.pads.begin(), w.pads.begin() + static_cast<std::ptrdiff_t>(rank));
        g.end.assign(w.pads.begin() + static_cast<std::ptrdiff_t>(rank), w.pads.end());
    } else if (w.auto_pad == AutoPad::same_upper || w.auto_pad == AutoPad::same_lower) {
        for (std::size_t k = 0; k < rank; ++k) {
            const std::int64_t in = x.size(static_cast<std::int64_t>(k) + 2);
            const std::int64_t out = (in + g.strides[k] - 1) / g.strides[k];
            const std::int64_t total =
                std::max<std::int64_t>(0, (out - 1) * g.strides[k] + (g.kernel[k] - 1) * g.dilations[k] + 1 - in);
            g.begin[k] = w.auto_pad == AutoPad::same_upper ? total / 2 : total - total / 2;
            g.end[k] = total - g.begin[k];
        }
    }
    return g;
}

void check_window(const NodeContext& ctx, const Window& w) {
    const std::size_t rank = w.kernel.size();
    if ((!w.strides.empty() && w.strides.size() != rank) || (!w.dilations.empty() && w.dilations.size() != rank) ||
        (!w.pads.empty() && w.pads.size() != 2 * rank)) {
        ctx.fail("kernel_shape, strides, dilations and pads disagree on the number of spatial axes");
    }
}

Kernel make_conv(const NodeContext& ctx) {
    ctx.expect_inputs(2, 3);
    const Window w = read_window(ctx);
    if (!w.kernel.empty()) check_window(ctx, w);
    const std::int64_t groups = ctx.int_attribute("group", 1);
    return single_output([w, groups](const RunContext&, std::span<const torch::Tensor> in) {
        torch::Tensor x = in[0];
        const torch::Tensor& weight = in[1];
        const Geometry g = resolve(w, x, weight.sizes().slice(2).vec());
        Ints padding = g.begin;
        if (!g.symmetric()) {
            x = torch::constant_pad_nd(x, g.torch_pads(), 0);
            padding.assign(padding.size(), 0);
        }
        const torch::Tensor bias = in.size() > 2 ? in[2] : torch::Tensor();
        return at::convolution(x, weight, bias, g.strides, padding, g.dilations, false, Ints(padding.size(), 0),
                               groups);
    });
}

// ONNX ConvTranspose: weight [C_in, C_out / group, k...]; each axis's output is
// stride * (in - 1) + output_padding + (k - 1) * dilation + 1 - pad_begin - pad_end. output_shape,
// when given, fixes the output and the pads follow from it (auto_pad SAME_UPPER puts the odd one
// at the end, anything else at the start); SAME_* without output_shape gives in * stride.
struct TransposedWindow {
    Window window;
    Ints output_padding;
    Ints output_shape;  // spatial axes only; empty: from pads
};

// Begin and end pads for one input (negative: the output extends past the full result).
std::pair<Ints, Ints> transposed_pads(const TransposedWindow& t, const Ints& in, const Ints& kernel,
                                      const Ints& strides, const Ints& dilations, const Ints& output_padding) {
    const std::size_t rank = in.size();
    const Window& w = t.window;
    Ints begin(rank, 0);
    Ints end(rank, 0);
    const bool same = w.auto_pad == AutoPad::same_upper || w.auto_pad == AutoPad::same_lower;
    if (t.output_shape.empty() && !same) {
        if (w.auto_pad == AutoPad::notset && !w.pads.empty()) {
            begin.assign(w.pads.begin(), w.pads.begin() + static_cast<std::ptrdiff_t>(rank));
            end.assign(w.pads.begin() + static_cast<std::ptrdiff_t>(rank), w.pads.end());
        }
        return {begin, end};
    }
    for (std::size_t k = 0; k < rank; ++k) {
        const std::int64_t out = t.output_shape.empty() ? in[k] * strides[k] : t.output_shape[k];
        const std::int64_t full = strides[k] * (in[k] - 1) + output_padding[k] + (kernel[k] - 1) * dilations[k] + 1;
        const std::int64_t total = full - out;
        const bool extra_at_end = w.auto_pad == AutoPad::same_upper;
        begin[k] = extra_at_end ? total / 2 : total - total / 2;
        end[k] = total - begin[k];
    }
    return {begin, end};
}

Kernel make_conv_transpose(const NodeContext& ctx) {
    ctx.expect_inputs(2, 3);
    TransposedWindow t{read_window(ctx), ctx.ints_attribute("output_padding", Ints{}),
                       ctx.ints_attribute("output_shape", Ints{})};
    if (!t.window.kernel.empty()) check_window(ctx, t.window);
    const std::int64_t groups = ctx.int_attribute("group", 1);
    return single_output([t, groups](const RunContext&, std::span<const torch::Tensor> in) {
        const torch::Tensor& x = in[0];
        const torch::Tensor& weight = in[1];
        const Ints spatial_in = x.sizes().slice(2).vec();
        const auto rank = spatial_in.size();
        const Ints kernel = weight.sizes().slice(2).vec();
        const Ints strides = or_ones(t.window.strides, rank);
        const Ints dilations = or_ones(t.window.dilations, rank);
        const Ints output_padding = t.output_padding.empty() ? Ints(rank, 0) : t.output_padding;
        Ints output_shape = t.output_shape;
        if (output_shape.size() == rank + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
        if (!output_shape.empty() && output_shape.size() != rank) {
            throw std::invalid_argument("ConvTranspose: output_shape does not match the input's spatial axes");
        }
        TransposedWindow resolved = t;
        resolved.output_shape = output_shape;
        const auto [begin, end] = transposed_pads(resolved, spatial_in, kernel, strides, dilations, output_padding);
        const torch::Tensor bias = in.size() > 2 ? in[2] : torch::Tensor();
        // LibTorch's own form: equal non-negative pads, output_padding below the stride or dilation.
        bool native = begin == end;
        for (std::size_t k = 0; k < rank && native; ++k) {
            native = begin[k] >= 0 && output_padding[k] < std::max(strides[k], dilations[k]);
        }
        if (native) return at::convolution(x, weight, bias, strides, begin, dilations, true, output_padding, groups);
        // Otherwise the full result, then cropped (positive pads) or extended with zeros (negative
        // pads, output_padding) at each end, then the bias: constant_pad_nd crops for negative values.
        torch::Tensor y =
            at::convolution(x, weight, torch::Tensor(), strides, Ints(rank, 0), dilations, true, Ints(rank, 0), groups);
        Ints pads;
        for (std::size_t k = rank; k-- > 0;) pads.insert(pads.end(), {-begin[k], output_padding[k] - end[k]});
        y = torch::constant_pad_nd(y, pads, 0);
        if (!bias.defined()) return y;
        Ints bias_shape(static_cast<std::size_t>(y.dim()), 1);
        bias_shape[1] = bias.size(0);
        return y + bias.reshape(bias_shape);
    });
}

// Per sample and channel, over the spatial axes, then the per-channel scale and bias.
Kernel make_instance_norm(const NodeContext& ctx) {
    ctx.expect_inputs(3, 3);
    const double epsilon = ctx.float_attribute("epsilon", 1e-5F);
    return single_output([epsilon](const RunContext&, std::span<const torch::Tensor> in) {
        return torch::instance_norm(in[0], in[1], in[2], torch::Tensor(), torch::Tensor(), true, 0.0, epsilon, true);
    });
}

Kernel make_batch_norm(const NodeContext& ctx) {
    ctx.expect_inputs(5, 5);
    ctx.expect_outputs(1);
    if (ctx.int_attribute("training_mode", 0) != 0) ctx.fail("training_mode=1 is not supported (inference only)");
    if (ctx.int_attribute("spatial", 1) != 1) ctx.fail("spatial=0 is not supported");
    const double epsilon = ctx.float_attribute("epsilon", 1e-5F);
    return single_output([epsilon](const RunContext&, std::span<const torch::Tensor> in) {
        return torch::batch_norm(in[0], in[1], in[2], in[3], in[4], false, 0.0, epsilon, true);
    });
}

// Pads the pooling input explicitly with `value` where LibTorch's symmetric padding (at most half
// the kernel) cannot express the node's pads.
bool needs_explicit_pad(const Geometry& g) {
    if (!g.symmetric()) return true;
    for (std::size_t k = 0; k < g.begin.size(); ++k) {
        if (g.begin[k] > g.kernel[k] / 2) return true;
    }
    return false;
}

Kernel make_max_pool(const NodeContext& ctx) {
    ctx.expect_inputs(1, 1);
    ctx.expect_outputs(1);
    const Window w = read_window(ctx);
    if (w.kernel.empty()) ctx.fail("attribute 'kernel_shape' is missing");
    check_window(ctx, w);
    return single_output([w](const RunContext&, std::span<const torch::Tensor> in) {
        torch::Tensor x = in[0];
        const Geometry g = resolve(w, x, w.kernel);
        Ints padding = g.begin;
        if (needs_explicit_pad(g)) {
            x = torch::constant_pad_nd(x, g.torch_pads(), -std::numeric_limits<double>::infinity());
            padding.assign(padding.size(), 0);
        }
        switch (g.kernel.size()) {
            case 1:
                return torch::max_pool1d(x, g.kernel, g.strides, padding, g.dilations, w.ceil_mode);
            case 2:
                return torch::max_pool2d(x, g.kernel, g.strides, padding, g.dilations, w.ceil_mode);
            default:
                return torch::max_pool3d(x, g.kernel, g.strides, padding, g.dilations, w.ceil_mode);
        }
    });
}

torch::Tensor avg_pool(const torch::Tensor& x, const Geometry& g, const Ints& padding, bool ceil_mode,
                       bool count_include_pad) {
    switch (g.kernel.size()) {
        case 1:
            return torch::avg_pool1d(x, g.kernel, g.strides, padding, ceil_mode, count_include_pad);
        case 2:
            return torch::avg_pool2d(x, g.kernel, g.strides, padding, ceil_mode, count_include_pad);
        default:
            return torch::avg_pool3d(x, g.kernel, g.strides, padding, ceil_mode, count_include_pad);
    }
}

Kernel make_average_pool(const NodeContext& ctx) {
    ctx.expect_inputs(1, 1);
    const Window w = read_window(ctx);
    if (w.kernel.empty()) ctx.fail("attribute 'kernel_shape' is missing");
    check_window(ctx, w);
    if (w.kernel.size() > 3) ctx.fail("pooling over more than 3 spatial axes is not supported");
    if (std::ranges::any_of(w.dilations, [](std::int64_t d) { return d != 1; }))
        ctx.fail("dilations are not supported");
    const bool count_include_pad = ctx.int_attribute("count_include_pad", 0) != 0;
    return single_output([w, count_include_pad](const RunContext&, std::span<const torch::Tensor> in) {
        const Geometry g = resolve(w, in[0], w.kernel);
        if (!needs_explicit_pad(g)) return avg_pool(in[0], g, g.begin, w.ceil_mode, count_include_pad);
        // Pool the zero-padded input; without count_include_pad, divide by the share of each
        // window that is real input (the same pooling applied to a padded mask of ones).
        const Ints none(g.begin.size(), 0);
        torch::Tensor sum = avg_pool(torch::constant_pad_nd(in[0], g.torch_pads(), 0), g, none, w.ceil_mode, true);
        if (count_include_pad) return sum;
        Ints mask_shape(static_cast<std::size_t>(in[0].dim()), 1);
        for (std::int64_t d = 2; d < in[0].dim(); ++d) mask_shape[static_cast<std::size_t>(d)] = in[0].size(d);
        const torch::Tensor ones = torch::ones(mask_shape, in[0].options());
        return sum / avg_pool(torch::constant_pad_nd(ones, g.torch_pads(), 0), g, none, w.ceil_mode, true);
    });
}

Kernel make_global_pool(const NodeContext& ctx, bool average) {
    ctx.expect_inputs(1, 1);
    return single_output([average](const RunContext&, std::span<const torch::Tensor> in) {
        const torch::Tensor& x = in[0];
        if (average && x.dim() == 4) return torch::adaptive_avg_pool2d(x, {1, 1});  // keeps channels_last
        Ints spatial;
        for (std::int64_t d = 2; d < x.dim(); ++d) spatial.push_back(d);
        return average ? x.mean(spatial, true) : x.amax(spatial, true);
    });
}

Kernel make_gemm(const NodeContext& ctx) {
    ctx.expect_inputs(2, 3);
    const bool trans_a = ctx.int_attribute("transA", 0) != 0;
    const bool trans_b = ctx.int_attribute("transB", 0) != 0;
    const double alpha = ctx.float_attribute("alpha", 1.0F);
    const double beta = ctx.float_attribute("beta", 1.0F);
    return single_output([=](const RunContext&, std::span<const torch::Tensor> in) {
        const torch::Tensor a = trans_a ? in[0].t() : in[0];
        const bool has_c = in.size() > 2 && in[2].defined();
        // torch.nn.Linear's layout, the common case: one fused call.
        if (trans_b && alpha == 1.0 && beta == 1.0 && (!has_c || in[2].dim() == 1)) {
            return torch::linear(a, in[1], has_c ? in[2] : torch::Tensor());
        }
        const torch::Tensor b = trans_b ? in[1].t() : in[1];
        if (has_c) return torch::addmm(in[2], a, b, beta, alpha);
        return alpha == 1.0 ? torch::mm(a, b) : torch::mm(a, b) * alpha;
    });
}

Kernel make_matmul(const NodeContext& ctx) {
    ctx.expect_inputs(2, 2);
    return single_output(
        [](const RunContext&, std::span<const torch::Tensor> in) { return torch::matmul(in[0], in[1]); });
}

Kernel make_softmax_like(const NodeContext& ctx, bool log) {
    ctx.expect_inputs(1, 1);
    // Before opset 13 the input is flattened to 2-D at `axis` (default 1) and normalized per row.
    const bool coerce_2d = ctx.opset() < 13;
    const std::int64_t axis = ctx.int_attribute("axis", coerce_2d ? 1 : -1);
    return single_output([=](const RunContext&, std::span<const torch::Tensor> in) {
        const torch::Tensor& x = in[0];
        const auto apply = [log](const torch::Tensor& t, std::int64_t dim) {
            return log ? torch::log_softmax(t, dim) : torch::softmax(t, dim);
        };
        const std::int64_t dim = normalize_axis(axis, x.dim());
        if (!coerce_2d || dim == x.dim() - 1) return apply(x, dim);
        const std::int64_t rows = c10::multiply_integers(x.sizes().slice(0, static_cast<std::size_t>(dim)));
        return apply(x.reshape({rows, -1}), 1).reshape(x.sizes());
    });
}

Kernel make_layer_norm(const NodeContext& ctx) {
    ctx.expect_inputs(2, 3);
    ctx.expect_outputs(1);
    const std::int64_t axis = ctx.int_attribute("axis", -1);
    const double epsilon = ctx.float_attribute("epsilon", 1e-5F);
    return single_output([axis, epsilon](const RunContext&, std::span<const torch::Tensor> in) {
        const torch::Tensor& x = in[0];
        const auto first = static_cast<std::size_t>(normalize_axis(axis, x.dim()));
        const torch::Tensor bias = in.size() > 2 ? in[2] : torch::Tensor();
        // Over the last axis of a transposed view: on the dense tensor behind it, where layer_norm would
        // copy it first.
        if (first + 1 == static_cast<std::size_t>(x.dim())) {
            if (const auto order = dense_order(x)) {
                return torch::layer_norm(x.permute(*order), x.sizes().slice(first), in[1], bias, epsilon)
                    .permute(inverse_permutation(*order));
            }
        }
        return torch::layer_norm(x, x.sizes().slice(first), in[1], bias, epsilon);
    });
}

}  // namespace

std::span<const KernelEntry> nn_kernels() {
    static const KernelEntry entries[] = {
        {"Conv", make_conv},
        {"ConvTranspose", make_conv_transpose},
        {"InstanceNormalization", make_instance_norm},
        {"BatchNormalization", make_batch_norm},
        {"MaxPool", make_max_pool},
        {"AveragePool", make_average_pool},
        {"GlobalAveragePool", [](const NodeContext& ctx) { return make_global_pool(ctx, true); }},
        {"GlobalMaxPool", [](const NodeContext& ctx) { return make_global_pool(ctx, false); }},
        {"Gemm", make_gemm},
        {"MatMul", make_matmul},
        {"Softmax", [](const NodeContext& ctx) { return make_softmax_like(ctx, false); }},
        {"LogSoftmax", [](const NodeContext& ctx) { return make_softmax_like(ctx, true); }},
        {"LayerNormalization", make_layer_norm},
        {"Resize", make_resize},
    };
    return entries;
}

}  // namespace inferbench::torch_onnx
