// Element-wise math, comparisons, reductions and type casts.
#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "backends/torch/onnx_interpreter/onnx_kernels.hpp"

namespace inferbench::torch_onnx {

namespace {

using Unary = torch::Tensor (*)(const torch::Tensor&);
using Binary = torch::Tensor (*)(const torch::Tensor&, const torch::Tensor&);

template <Unary Fn>
Kernel make_unary(const NodeContext& ctx) {
    ctx.expect_inputs(1, 1);
    return single_output([](const RunContext&, std::span<const torch::Tensor> in) { return Fn(in[0]); });
}

// Multidirectional (NumPy) broadcasting is LibTorch's own.
template <Binary Fn>
Kernel make_binary(const NodeContext& ctx) {
    ctx.expect_inputs(2, 2);
    return single_output([](const RunContext&, std::span<const torch::Tensor> in) {
        if (in[0].device() == in[1].device()) return Fn(in[0], in[1]);
        const auto both = on_common_device(in);
        return Fn(both[0], both[1]);
    });
}

// Max, Min, Sum: any number of inputs, folded pairwise.
template <Binary Fn>
Kernel make_variadic(const NodeContext& ctx) {
    ctx.expect_inputs(1, std::numeric_limits<std::size_t>::max());
    return single_output([](const RunContext&, std::span<const torch::Tensor> in) {
        const auto all = on_common_device(in);
        torch::Tensor result = all[0];
        for (std::size_t k = 1; k < all.size(); ++k) result = Fn(result, all[k]);
        return result;
    });
}

torch::Tensor relu(const torch::Tensor& x) { return torch::relu(x); }
torch::Tensor sigmoid(const torch::Tensor& x) { return torch::sigmoid(x); }
torch::Tensor tanh(const torch::Tensor& x) { return torch::tanh(x); }
torch::Tensor erf(const torch::Tensor& x) { return torch::erf(x); }
torch::Tensor sqrt(const torch::Tensor& x) { return torch::sqrt(x); }
torch::Tensor exp(const torch::Tensor& x) { return torch::exp(x); }
torch::Tensor log(const torch::Tensor& x) { return torch::log(x); }
torch::Tensor neg(const torch::Tensor& x) { return torch::neg(x); }
torch::Tensor abs(const torch::Tensor& x) { return torch::abs(x); }
torch::Tensor reciprocal(const torch::Tensor& x) { return torch::reciprocal(x); }
torch::Tensor floor(const torch::Tensor& x) { return torch::floor(x); }
torch::Tensor ceil(const torch::Tensor& x) { return torch::ceil(x); }
torch::Tensor logical_not(const torch::Tensor& x) { return torch::logical_not(x); }
torch::Tensor hard_swish(const torch::Tensor& x) { return torch::hardswish(x); }
torch::Tensor is_nan(const torch::Tensor& x) { return torch::isnan(x); }

torch::Tensor add(const torch::Tensor& a, const torch::Tensor& b) { return torch::add(a, b); }
torch::Tensor sub(const torch::Tensor& a, const torch::Tensor& b) { return torch::sub(a, b); }
torch::Tensor mul(const torch::Tensor& a, const torch::Tensor& b) { return torch::mul(a, b); }
// ONNX integer division truncates toward zero, as C does.
torch::Tensor div(const torch::Tensor& a, const torch::Tensor& b) {
    if (!a.is_floating_point() && !b.is_floating_point()) return torch::div(a, b, "trunc");
    return torch::div(a, b);
}
torch::Tensor equal(const torch::Tensor& a, const torch::Tensor& b) { return torch::eq(a, b); }
torch::Tensor less(const torch::Tensor& a, const torch::Tensor& b) { return torch::lt(a, b); }
torch::Tensor less_equal(const torch::Tensor& a, const torch::Tensor& b) { return torch::le(a, b); }
torch::Tensor greater(const torch::Tensor& a, const torch::Tensor& b) { return torch::gt(a, b); }
torch::Tensor greater_equal(const torch::Tensor& a, const torch::Tensor& b) { return torch::ge(a, b); }
torch::Tensor logical_and(const torch::Tensor& a, const torch::Tensor& b) { return torch::logical_and(a, b); }
torch::Tensor logical_or(const torch::Tensor& a, const torch::Tensor& b) { return torch::logical_or(a, b); }
torch::Tensor maximum(const torch::Tensor& a, const torch::Tensor& b) { return torch::maximum(a, b); }
torch::Tensor minimum(const torch::Tensor& a, const torch::Tensor& b) { return torch::minimum(a, b); }

c10::optional<c10::Scalar> as_scalar(std::optional<double> value) {
    return value ? c10::optional<c10::Scalar>(*value) : c10::nullopt;
}

// The single value of a constant scalar input, if it is one.
std::optional<double> constant_scalar(const NodeContext& ctx, std::size_t index) {
    const torch::Tensor* t = ctx.constant(index);
    if (t == nullptr || t->numel() != 1) return std::nullopt;
    return t->item<double>();
}

// ONNX Pow keeps the base's type (an int base with a float exponent stays int).
Kernel make_pow(const NodeContext& ctx) {
    ctx.expect_inputs(2, 2);
    if (const auto exponent = constant_scalar(ctx, 1)) {
        return single_output([e = *exponent](const RunContext&, std::span<const torch::Tensor> in) {
            if (e == 2.0) return in[0] * in[0];  // the usual case (variance), exact and cheaper
            return torch::pow(in[0], e).to(in[0].scalar_type());
        });
    }
    return single_output([](const RunContext&, std::span<const torch::Tensor> in) {
        const auto both = on_common_device(in);
        return torch::pow(both[0], both[1]).to(in[0].scalar_type());
    });
}

// Opset 11+: bounds are optional inputs (constants are read once); before: attributes.
Kernel make_clip(const NodeContext& ctx) {
    ctx.expect_inputs(1, 3);
    if (ctx.opset() < 11) {
        const std::optional<double> lo = ctx.float_attribute("min", std::numeric_limits<float>::lowest());
        const std::optional<double> hi = ctx.float_attribute("max", std::numeric_limits<float>::max());
        return single_output([lo, hi](const RunContext&, std::span<const torch::Tensor> in) {
            return torch::clamp(in[0], as_scalar(lo), as_scalar(hi));
        });
    }
    struct Bound {
        bool present = false;
        std::optional<double> constant;
    };
    const Bound lo{ctx.has_input(1), constant_scalar(ctx, 1)};
    const Bound hi{ctx.has_input(2), constant_scalar(ctx, 2)};
    return single_output([lo, hi](const RunContext&, std::span<const torch::Tensor> in) {
        const auto value = [&](const Bound& b, std::size_t index) -> std::optional<double> {
            if (!b.present) return std::nullopt;
            return b.constant ? b.constant : std::optional<double>(in[index].item<double>());
        };
        const std::optional<double> min = value(lo, 1);
        const std::optional<double> max = value(hi, 2);
        if (!min && !max) return in[0];
        return torch::clamp(in[0], as_scalar(min), as_scalar(max));
    });
}

Kernel make_gelu(const NodeContext& ctx) {
    ctx.expect_inputs(1, 1);
    const std::string approximate = ctx.string_attribute("approximate", "none");
    if (approximate != "none" && approximate != "tanh")
        ctx.fail(fmt::format("approximate '{}' is unknown", approximate));
    return single_output([approximate](const RunContext&, std::span<const torch::Tensor> in) {
        return torch::gelu(in[0], approximate);
    });
}

Kernel make_leaky_relu(const NodeContext& ctx) {
    ctx.expect_inputs(1, 1);
    const double alpha = ctx.float_attribute("alpha", 0.01F);
    return single_output(
        [alpha](const RunContext&, std::span<const torch::Tensor> in) { return torch::leaky_relu(in[0], alpha); });
}

Kernel make_hard_sigmoid(const NodeContext& ctx) {
    ctx.expect_inputs(1, 1);
    const double alpha = ctx.float_attribute("alpha", 0.2F);
    const double beta = ctx.float_attribute("beta", 0.5F);
    return single_output([alpha, beta](const RunContext&, std::span<const torch::Tensor> in) {
        return torch::clamp(in[0] * alpha + beta, c10::Scalar(0.0), c10::Scalar(1.0));
    });
}

enum class Reduction { mean, sum, max, min, prod };

// LibTorch's prod() takes one axis: the highest first, so the lower ones keep their index.
torch::Tensor product(const torch::Tensor& x, std::vector<std::int64_t> axes, bool keepdims) {
    for (std::int64_t& a : axes) a = normalize_axis(a, x.dim());
    std::ranges::sort(axes, std::greater<>());
    torch::Tensor y = x;
    for (const std::int64_t a : axes) y = y.prod(a, keepdims);
    return y;
}

// Axes are an attribute before opset 18 (ReduceSum: 13), an optional input from then on.
Kernel make_reduce(const NodeContext& ctx, Reduction reduction) {
    const bool axes_as_input = ctx.opset() >= (reduction == Reduction::sum ? 13 : 18);
    ctx.expect_inputs(1, axes_as_input ? 2 : 1);
    const bool keepdims = ctx.int_attribute("keepdims", 1) != 0;
    const bool noop_without_axes = ctx.int_attribute("noop_with_empty_axes", 0) != 0;
    const IntListInput axes_input = axes_as_input ? IntListInput(ctx, 1) : IntListInput();
    const std::vector<std::int64_t> axes_attribute = ctx.ints_attribute("axes", std::vector<std::int64_t>{});
    return single_output([=](const RunContext&, std::span<const torch::Tensor> in) {
        const torch::Tensor& x = in[0];
        std::vector<std::int64_t> axes = axes_as_input ? axes_input.get(in) : axes_attribute;
        if (axes.empty()) {
            if (noop_without_axes) return x;
            for (std::int64_t d = 0; d < x.dim(); ++d) axes.push_back(d);
        }
        switch (reduction) {
            case Reduction::mean:
                return x.mean(axes, keepdims);
            case Reduction::sum:
                return x.sum(axes, keepdims);
            case Reduction::max:
                return x.amax(axes, keepdims);
            case Reduction::prod:
                return product(x, axes, keepdims);
            default:
                return x.amin(axes, keepdims);
        }
    });
}

// fmod=0 (integers only): the remainder takes the divisor's sign, as Python's %; fmod=1: C's fmod.
Kernel make_mod(const NodeContext& ctx) {
    ctx.expect_inputs(2, 2);
    const bool c_fmod = ctx.int_attribute("fmod", 0) != 0;
    return single_output([c_fmod](const RunContext&, std::span<const torch::Tensor> in) {
        const auto both = on_common_device(in);
        if (!c_fmod && (both[0].is_floating_point() || both[1].is_floating_point())) {
            throw std::invalid_argument("Mod of floating-point values needs fmod=1");
        }
        return c_fmod ? torch::fmod(both[0], both[1]) : torch::remainder(both[0], both[1]);
    });
}

Kernel make_is_inf(const NodeContext& ctx) {
    ctx.expect_inputs(1, 1);
    const bool positive = ctx.int_attribute("detect_positive", 1) != 0;
    const bool negative = ctx.int_attribute("detect_negative", 1) != 0;
    return single_output([=](const RunContext&, std::span<const torch::Tensor> in) {
        if (positive && negative) return torch::isinf(in[0]);
        if (positive) return torch::isposinf(in[0]);
        if (negative) return torch::isneginf(in[0]);
        return torch::zeros_like(in[0], torch::kBool);
    });
}

Kernel make_where(const NodeContext& ctx) {
    ctx.expect_inputs(3, 3);
    return single_output([](const RunContext&, std::span<const torch::Tensor> in) {
        const auto all = on_common_device(in);
        return torch::where(all[0].to(torch::kBool), all[1], all[2]);
    });
}

// Casts to a floating type yield the program's float type: all floating-point math runs in one type.
Kernel make_cast(const NodeContext& ctx) {
    ctx.expect_inputs(1, 1);
    const auto to = static_cast<onnx::DataType>(ctx.int_attribute("to"));
    if (!scalar_type_of(to)) ctx.fail(fmt::format("cast to {}, which LibTorch lacks", to_string(to)));
    return single_output([to](const RunContext& run, std::span<const torch::Tensor> in) {
        return in[0].to(to_scalar_type(to, run.float_type));
    });
}

Kernel make_cast_like(const NodeContext& ctx) {
    ctx.expect_inputs(2, 2);
    return single_output(
        [](const RunContext&, std::span<const torch::Tensor> in) { return in[0].to(in[1].scalar_type()); });
}

}  // namespace

std::span<const KernelEntry> math_kernels() {
    static const KernelEntry entries[] = {
        {"Relu", make_unary<relu>},
        {"Sigmoid", make_unary<sigmoid>},
        {"Tanh", make_unary<tanh>},
        {"Erf", make_unary<erf>},
        {"Sqrt", make_unary<sqrt>},
        {"Exp", make_unary<exp>},
        {"Log", make_unary<log>},
        {"Neg", make_unary<neg>},
        {"Abs", make_unary<abs>},
        {"Reciprocal", make_unary<reciprocal>},
        {"Floor", make_unary<floor>},
        {"Ceil", make_unary<ceil>},
        {"Not", make_unary<logical_not>},
        {"HardSwish", make_unary<hard_swish>},
        {"IsNaN", make_unary<is_nan>},
        {"IsInf", make_is_inf},
        {"Mod", make_mod},
        {"Add", make_binary<add>},
        {"Sub", make_binary<sub>},
        {"Mul", make_binary<mul>},
        {"Div", make_binary<div>},
        {"Equal", make_binary<equal>},
        {"Less", make_binary<less>},
        {"LessOrEqual", make_binary<less_equal>},
        {"Greater", make_binary<greater>},
        {"GreaterOrEqual", make_binary<greater_equal>},
        {"And", make_binary<logical_and>},
        {"Or", make_binary<logical_or>},
        {"Max", make_variadic<maximum>},
        {"Min", make_variadic<minimum>},
        {"Sum", make_variadic<add>},
        {"Pow", make_pow},
        {"Clip", make_clip},
        {"Gelu", make_gelu},
        {"LeakyRelu", make_leaky_relu},
        {"HardSigmoid", make_hard_sigmoid},
        {"ReduceMean", [](const NodeContext& ctx) { return make_reduce(ctx, Reduction::mean); }},
        {"ReduceSum", [](const NodeContext& ctx) { return make_reduce(ctx, Reduction::sum); }},
        {"ReduceMax", [](const NodeContext& ctx) { return make_reduce(ctx, Reduction::max); }},
        {"ReduceMin", [](const NodeContext& ctx) { return make_reduce(ctx, Reduction::min); }},
        {"ReduceProd", [](const NodeContext& ctx) { return make_reduce(ctx, Reduction::prod); }},
        {"Where", make_where},
        {"Cast", make_cast},
        {"CastLike", make_cast_like},
    };
    return entries;
}

}  // namespace inferbench::torch_onnx
