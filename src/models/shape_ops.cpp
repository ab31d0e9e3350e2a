// Shape rules per op, following the ONNX operator specification (opsets 7 to 21).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "core/tensor_size.hpp"
#include "models/shape_ops.hpp"

namespace inferbench::models::detail {

using onnx::DataType;
using onnx::OnnxNode;
using Dims = std::vector<std::int64_t>;

const ValueShape* ShapeContext::in(const OnnxNode& node, std::size_t index) const {
    return index < node.inputs.size() ? result.find(node.inputs[index]) : nullptr;
}

const std::vector<double>* ShapeContext::constant(const OnnxNode& node, std::size_t index) const {
    if (index >= node.inputs.size()) return nullptr;
    const auto it = result.constants.find(node.inputs[index]);
    return it == result.constants.end() ? nullptr : &it->second;
}

std::optional<Dims> ShapeContext::ints(const OnnxNode& node, std::size_t index) const {
    const auto* values = constant(node, index);
    if (values == nullptr) return std::nullopt;
    Dims out;
    for (const double v : *values) out.push_back(static_cast<std::int64_t>(std::clamp(v, -9.0e18, 9.0e18)));
    return out;
}

void ShapeContext::set(const OnnxNode& node, std::size_t index, DataType type, Dims dims) {
    if (index >= node.outputs.size() || node.outputs[index].empty()) return;
    // Every shape kept has an element count in 64 bits, so that what is computed from it cannot wrap; a negative
    // size (attributes out of range) leaves the output unknown, so that nothing after it is costed from it.
    if (std::ranges::any_of(dims, [](std::int64_t d) { return d < 0; })) return;
    element_count_or_throw(fmt::format("output '{}' of node {} ({})", node.outputs[index], node.name, node.op_type), dims);
    result.values[node.outputs[index]] = ValueShape{true, type, std::move(dims), data_dependent};
}

void ShapeContext::set_constant(const OnnxNode& node, std::size_t index, std::vector<double> values) {
    if (index < node.outputs.size() && !node.outputs[index].empty() && values.size() <= kMaxFoldedElements)
        result.constants[node.outputs[index]] = std::move(values);
}

std::int64_t int_attribute(const OnnxNode& node, std::string_view name, std::int64_t fallback) {
    const auto it = node.attributes.find(name);
    if (it == node.attributes.end()) return fallback;
    const auto* value = std::get_if<std::int64_t>(&it->second);
    return value != nullptr ? *value : fallback;
}

std::optional<Dims> ints_attribute(const OnnxNode& node, std::string_view name) {
    const auto it = node.attributes.find(name);
    if (it == node.attributes.end()) return std::nullopt;
    if (const auto* value = std::get_if<Dims>(&it->second)) return *value;
    return std::nullopt;
}

std::optional<Dims> broadcast(const Dims& a, const Dims& b) {
    Dims out(std::max(a.size(), b.size()), 1);
    for (std::size_t i = 0; i < out.size(); ++i) {
        const std::int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
        const std::int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
        if (x != y && x != 1 && y != 1) return std::nullopt;
        out[out.size() - 1 - i] = x == 1 ? y : x;
    }
    return out;
}

namespace {

std::int64_t normalize_axis(std::int64_t axis, std::size_t rank) {
    return axis < 0 ? axis + static_cast<std::int64_t>(rank) : axis;
}

std::size_t at(std::int64_t i) { return static_cast<std::size_t>(i); }

std::int64_t product(const Dims& dims, std::size_t from, std::size_t to) {
    std::int64_t n = 1;
    for (std::size_t i = from; i < to && i < dims.size(); ++i) n *= dims[i];  // a part of a shape set() checked
    return n;
}

bool same_as_input(ShapeContext& c, const OnnxNode& n) {
    const auto* x = c.in(n, 0);
    if (x == nullptr) return false;
    c.set(n, 0, x->type, x->dims);
    fold_unary(c, n, x->type);
    return true;
}

bool cast(ShapeContext& c, const OnnxNode& n) {
    const auto* x = c.in(n, 0);
    if (x == nullptr) return false;
    const auto to = static_cast<DataType>(int_attribute(n, "to", 1));
    c.set(n, 0, to, x->dims);
    fold_unary(c, n, to);
    return true;
}

bool predicate(ShapeContext& c, const OnnxNode& n) {  // IsNaN, IsInf: a boolean per element
    const auto* x = c.in(n, 0);
    if (x == nullptr) return false;
    c.set(n, 0, DataType::boolean, x->dims);
    return true;
}

bool elementwise(ShapeContext& c, const OnnxNode& n) {
    std::optional<Dims> dims = Dims{};
    for (std::size_t i = 0; i < n.inputs.size() && dims; ++i) {
        const auto* x = c.in(n, i);
        if (x == nullptr) return false;
        dims = broadcast(*dims, x->dims);
    }
    if (!dims || n.inputs.empty()) return false;
    static const std::vector<std::string_view> predicates = {
        "Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual", "And", "Or", "Xor", "Not"};
    DataType type = c.in(n, n.op_type == "Where" ? 1 : 0)->type;
    if (std::ranges::find(predicates, n.op_type) != predicates.end()) type = DataType::boolean;
    c.set(n, 0, type, *dims);
    fold_elementwise(c, n, type, *dims);
    return true;
}

struct Window {
    Dims kernel, strides, dilations, pads;
    bool ceil_mode = false;
    std::string auto_pad;
};

Window window_of(const OnnxNode& n, Dims kernel) {
    const std::size_t k = kernel.size();
    Window w{std::move(kernel),
             ints_attribute(n, "strides").value_or(Dims(k, 1)),
             ints_attribute(n, "dilations").value_or(Dims(k, 1)),
             ints_attribute(n, "pads").value_or(Dims(2 * k, 0)),
             int_attribute(n, "ceil_mode", 0) != 0,
             ""};
    if (const auto it = n.attributes.find("auto_pad"); it != n.attributes.end())
        if (const auto* s = std::get_if<std::string>(&it->second)) w.auto_pad = *s;
    return w;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }  // a >= 0, b > 0

// The input positions a window can start at, minus one: size + pads - dilated kernel; nothing where the
// attributes are out of range (they come from the file) or the window does not fit.
std::optional<std::int64_t> window_span(std::int64_t size, std::int64_t pads, std::int64_t kernel, std::int64_t dilation) {
    if (size < 0 || pads < 0 || kernel < 1 || dilation < 1) return std::nullopt;
    const auto reach = checked_mul(dilation, kernel - 1);
    const auto padded = checked_add(size, pads);
    if (!reach || !padded || *padded - 1 < *reach) return std::nullopt;
    return *padded - 1 - *reach;
}

std::optional<Dims> window_output(const Dims& spatial, const Window& w) {
    const std::size_t k = spatial.size();
    if (w.kernel.size() != k || w.strides.size() != k || w.dilations.size() != k || w.pads.size() != 2 * k)
        return std::nullopt;
    Dims out;
    for (std::size_t i = 0; i < k; ++i) {
        const std::int64_t s = std::max<std::int64_t>(w.strides[i], 1);
        if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") {
            if (spatial[i] < 0) return std::nullopt;
            out.push_back(ceil_div(spatial[i], s));
            continue;
        }
        const auto pads = w.auto_pad == "VALID" ? std::optional<std::int64_t>(0) : checked_add(w.pads[i], w.pads[i + k]);
        const auto span = pads ? window_span(spatial[i], *pads, w.kernel[i], w.dilations[i]) : std::nullopt;
        if (!span) return std::nullopt;
        out.push_back((w.ceil_mode ? ceil_div(*span, s) : *span / s) + 1);
    }
    return out;
}

bool conv(ShapeContext& c, const OnnxNode& n) {
    const auto* x = c.in(n, 0);
    const auto* w = c.in(n, 1);
    if (x == nullptr || w == nullptr || x->dims.size() < 3 || w->dims.size() != x->dims.size()) return false;
    const Dims spatial(x->dims.begin() + 2, x->dims.end());
    const auto out = window_output(spatial, window_of(n, Dims(w->dims.begin() + 2, w->dims.end())));
    if (!out) return false;
    Dims dims{x->dims[0], w->dims[0]};
    dims.insert(dims.end(), out->begin(), out->end());
    c.set(n, 0, x->type, dims);
    return true;
}

bool conv_transpose(ShapeContext& c, const OnnxNode& n) {
    const auto* x = c.in(n, 0);
    const auto* w = c.in(n, 1);
    if (x == nullptr || w == nullptr || x->dims.size() < 3 || w->dims.size() != x->dims.size()) return false;
    const std::size_t k = x->dims.size() - 2;
    const Window win = window_of(n, Dims(w->dims.begin() + 2, w->dims.end()));
    const Dims output_padding = ints_attribute(n, "output_padding").value_or(Dims(k, 0));
    const auto output_shape = ints_attribute(n, "output_shape");
    if (win.pads.size() != 2 * k || output_padding.size() != k || win.kernel.size() != k || win.strides.size() != k ||
        win.dilations.size() != k)
        return false;
    const auto channels = checked_mul(w->dims[1], int_attribute(n, "group", 1));
    if (!channels) return false;
    Dims dims{x->dims[0], *channels};
    for (std::size_t i = 0; i < k; ++i) {
        if (output_shape && output_shape->size() == k) {
            dims.push_back((*output_shape)[i]);
            continue;
        }
        // strides * (size - 1) + output_padding + (kernel - 1) * dilations + 1 - pads, each step checked.
        const auto pads = win.auto_pad.starts_with("SAME") ? std::optional<std::int64_t>(0)
                                                           : checked_add(win.pads[i], win.pads[i + k]);
        if (!pads || *pads < 0) return false;
        const auto stepped = x->dims[i + 2] < 1 ? std::nullopt : checked_mul(win.strides[i], x->dims[i + 2] - 1);
        const auto reach = win.kernel[i] < 1 ? std::nullopt : checked_mul(win.kernel[i] - 1, win.dilations[i]);
        const auto sum = stepped && reach ? checked_add(*stepped, *reach) : std::nullopt;
        const auto padded = sum ? checked_add(*sum, output_padding[i]) : std::nullopt;
        const auto size = padded ? checked_add(*padded, 1 - *pads) : std::nullopt;
        if (!size) return false;
        dims.push_back(*size);
    }
    c.set(n, 0, x->type, dims);
    return true;
}

bool pool(ShapeContext& c, const OnnxNode& n) {
    const auto* x = c.in(n, 0);
    const auto kernel = ints_attribute(n, "kernel_shape");
    if (x == nullptr || !kernel || x->dims.size() != kernel->size() + 2) return false;
    const auto out = window_output(Dims(x->dims.begin() + 2, x->dims.end()), window_of(n, *kernel));
    if (!out) return false;
    Dims dims{x->dims[0], x->dims[1]};
    dims.insert(dims.end(), out->begin(), out->end());
    for (std::size_t i = 0; i < n.outputs.size(); ++i) c.set(n, i, i == 0 ? x->type : DataType::int64, dims);
    return true;
}

bool global_pool(ShapeContext& c, const OnnxNode& n) {
    const auto* x = c.in(n, 0);
    if (x == nullptr || x->dims.size() < 2) return false;
    Dims dims(x->dims.size(), 1);
    dims[0] = x->dims[0];
    dims[1] = x->dims[1];
    c.set(n, 0, x->type, dims);
    return true;
}

bool flatten(ShapeContext& c, const OnnxNode& n) {
    const auto* x = c.in(n, 0);
    if (x == nullptr) return false;
    const auto axis = normalize_axis(int_attribute(n, "axis", 1), x->dims.size());
    if (axis < 0 || at(axis) > x->dims.size()) return false;
    c.set(n, 0, x->type, {product(x->dims, 0, at(axis)), product(x->dims, at(axis), x->dims.size())});
    return true;
}

bool gemm(ShapeContext& c, const OnnxNode& n) {
    const auto* a = c.in(n, 0);
    const auto* b = c.in(n, 1);
    if (a == nullptr || b == nullptr || a->dims.size() != 2 || b->dims.size() != 2) return false;
    const std::int64_t m = int_attribute(n, "transA", 0) != 0 ? a->dims[1] : a->dims[0];
    const std::int64_t cols = int_attribute(n, "transB", 0) != 0 ? b->dims[0] : b->dims[1];
    c.set(n, 0, a->type, {m, cols});
    return true;
}

bool matmul(ShapeContext& c, const OnnxNode& n) {
    const auto* a = c.in(n, 0);
    const auto* b = c.in(n, 1);
    if (a == nullptr || b == nullptr || a->dims.empty() || b->dims.empty()) return false;
    Dims x = a->dims.size() == 1 ? Dims{1, a->dims[0]} : a->dims;
    Dims y = b->dims.size() == 1 ? Dims{b->dims[0], 1} : b->dims;
    if (x.back() != y[y.size() - 2]) return false;
    auto dims = broadcast(Dims(x.begin(), x.end() - 2), Dims(y.begin(), y.end() - 2));
    if (!dims) return false;
    if (a->dims.size() > 1) dims->push_back(x[x.size() - 2]);
    if (b->dims.size() > 1) dims->push_back(y.back());
    c.set(n, 0, a->type, *dims);
    return true;
}

}  // namespace

ShapeRule find_shape_rule(std::string_view op_type) {
    static const std::unordered_map<std::string_view, ShapeRule> rules = [] {
        std::unordered_map<std::string_view, ShapeRule> r;
        for (const char* op : {"Relu",
                               "Clip",
                               "LeakyRelu",
                               "Sigmoid",
                               "Sqrt",
                               "Erf",
                               "Exp",
                               "Log",
                               "Tanh",
                               "Neg",
                               "Abs",
                               "Reciprocal",
                               "Floor",
                               "Ceil",
                               "Round",
                               "HardSigmoid",
                               "HardSwish",
                               "Elu",
                               "Selu",
                               "Softplus",
                               "Mish",
                               "Gelu",
                               "Identity",
                               "Dropout",
                               "Softmax",
                               "LogSoftmax",
                               "BatchNormalization",
                               "InstanceNormalization",
                               "LayerNormalization",
                               "LRN",
                               "Sin",
                               "Cos",
                               "Sign",
                               "Trilu",
                               "CumSum"})
            r[op] = same_as_input;
        r["IsNaN"] = r["IsInf"] = predicate;
        for (const char* op :
             {"Add", "Sub",   "Mul", "Div", "Pow", "Where", "Equal",          "Greater",     "Less", "Max", "Min",
              "Mod", "PRelu", "And", "Or",  "Xor", "Not",   "GreaterOrEqual", "LessOrEqual", "Sum",  "Mean"})
            r[op] = elementwise;
        r["Cast"] = cast;
        r["Conv"] = conv;
        r["ConvTranspose"] = conv_transpose;
        r["MaxPool"] = r["AveragePool"] = r["LpPool"] = pool;
        r["GlobalAveragePool"] = r["GlobalMaxPool"] = global_pool;
        r["Flatten"] = flatten;
        r["Gemm"] = gemm;
        r["MatMul"] = matmul;
        return r;
    }();
    if (const auto it = rules.find(op_type); it != rules.end()) return it->second;
    if (const auto rule = find_tensor_rule(op_type)) return rule;
    return find_value_rule(op_type);
}

}  // namespace inferbench::models::detail
