// Constant folding for shape inference: the values of small tensors computed from shapes (sizes,
// indices, masks), so that the ops that take them as targets (Reshape, Expand, Slice, Range, ...)
// get concrete sizes. Values are doubles, exact for integers up to 2^53.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <unordered_map>

#include "core/tensor_size.hpp"
#include "models/shape_ops.hpp"

namespace inferbench::models::detail {

using onnx::DataType;
using onnx::OnnxNode;
using Dims = std::vector<std::int64_t>;

namespace {

std::int64_t count(const Dims& dims) {
    return checked_element_count(dims).value_or(-1);  // -1: no count, nothing folded
}

bool is_integral(DataType type) {
    return type != DataType::float32 && type != DataType::float64 && type != DataType::float16 &&
           type != DataType::bfloat16;
}

// The value an element of type `type` holds after conversion (Cast's truncation toward zero).
double convert(double v, DataType type) {
    if (type == DataType::boolean) return v != 0 ? 1.0 : 0.0;
    if (!is_integral(type) || !std::isfinite(v)) return v;
    return std::trunc(v);
}

using Binary = std::function<std::optional<double>(double, double, bool integral)>;

const std::unordered_map<std::string_view, Binary>& binary_ops() {
    static const std::unordered_map<std::string_view, Binary> ops = {
        {"Add", [](double a, double b, bool) { return std::optional(a + b); }},
        {"Sub", [](double a, double b, bool) { return std::optional(a - b); }},
        {"Mul", [](double a, double b, bool) { return std::optional(a * b); }},
        {"Div",
         [](double a, double b, bool integral) -> std::optional<double> {
             if (integral && b == 0) return std::nullopt;
             return integral ? std::trunc(a / b) : a / b;
         }},
        {"Pow", [](double a, double b, bool) { return std::optional(std::pow(a, b)); }},
        {"Max", [](double a, double b, bool) { return std::optional(std::max(a, b)); }},
        {"Min", [](double a, double b, bool) { return std::optional(std::min(a, b)); }},
        {"Equal", [](double a, double b, bool) { return std::optional(a == b ? 1.0 : 0.0); }},
        {"Greater", [](double a, double b, bool) { return std::optional(a > b ? 1.0 : 0.0); }},
        {"Less", [](double a, double b, bool) { return std::optional(a < b ? 1.0 : 0.0); }},
        {"GreaterOrEqual", [](double a, double b, bool) { return std::optional(a >= b ? 1.0 : 0.0); }},
        {"LessOrEqual", [](double a, double b, bool) { return std::optional(a <= b ? 1.0 : 0.0); }},
        {"And", [](double a, double b, bool) { return std::optional(a != 0 && b != 0 ? 1.0 : 0.0); }},
        {"Or", [](double a, double b, bool) { return std::optional(a != 0 || b != 0 ? 1.0 : 0.0); }},
        {"Xor", [](double a, double b, bool) { return std::optional((a != 0) != (b != 0) ? 1.0 : 0.0); }},
    };
    return ops;
}

// Mod: the sign of the divisor (Python's %) unless fmod=1 (C's fmod).
std::optional<double> mod(double a, double b, bool fmod) {
    if (b == 0) return std::nullopt;
    if (fmod) return std::fmod(a, b);
    return a - std::floor(a / b) * b;
}

std::optional<double> unary(std::string_view op, double x) {
    if (op == "Identity" || op == "Dropout") return x;
    if (op == "Neg") return -x;
    if (op == "Abs") return std::abs(x);
    if (op == "Floor") return std::floor(x);
    if (op == "Ceil") return std::ceil(x);
    if (op == "Round") return std::nearbyint(x);
    if (op == "Sqrt" && x >= 0) return std::sqrt(x);
    if (op == "Reciprocal" && x != 0) return 1.0 / x;
    if (op == "Relu") return std::max(x, 0.0);
    if (op == "Sign") return static_cast<double>((x > 0) - (x < 0));
    if (op == "Exp") return std::exp(x);
    if (op == "Log" && x > 0) return std::log(x);
    if (op == "Not") return x == 0 ? 1.0 : 0.0;
    if (op == "Cast") return x;
    return std::nullopt;
}

// The flat index into an input of shape `from` for each element of an output of shape `to`.
std::optional<std::vector<std::size_t>> broadcast_index(const Dims& from, const Dims& to) {
    if (from.size() > to.size()) return std::nullopt;
    const std::size_t lead = to.size() - from.size();
    for (std::size_t i = 0; i < from.size(); ++i)
        if (from[i] != 1 && from[i] != to[lead + i]) return std::nullopt;
    const auto total = count(to);
    if (total < 0 || total > static_cast<std::int64_t>(kMaxFoldedElements)) return std::nullopt;
    std::vector<std::size_t> index(static_cast<std::size_t>(total));
    for (std::size_t flat = 0; flat < index.size(); ++flat) {
        std::size_t rest = flat;
        std::size_t source = 0;
        std::size_t stride = 1;
        for (std::size_t k = to.size(); k-- > 0;) {
            const auto extent = static_cast<std::size_t>(to[k]);
            const std::size_t coordinate = extent == 0 ? 0 : rest % extent;
            rest = extent == 0 ? 0 : rest / extent;
            if (k >= lead) {
                const auto own = static_cast<std::size_t>(from[k - lead]);
                source += (own == 1 ? 0 : coordinate) * stride;
                stride *= own;
            }
        }
        index[flat] = source;
    }
    return index;
}

}  // namespace

std::optional<std::vector<double>> remap_values(const std::vector<double>& values, const Dims& from, const Dims& to,
                                                const std::function<void(Dims&)>& to_source) {
    const auto total = count(to);
    if (static_cast<std::int64_t>(values.size()) != count(from) || total < 0 ||
        total > static_cast<std::int64_t>(kMaxFoldedElements))
        return std::nullopt;
    std::vector<double> out(static_cast<std::size_t>(total));
    Dims coordinate(to.size());
    for (std::size_t flat = 0; flat < out.size(); ++flat) {
        auto rest = static_cast<std::int64_t>(flat);
        for (std::size_t k = to.size(); k-- > 0;) {
            coordinate[k] = rest % to[k];
            rest /= to[k];
        }
        to_source(coordinate);
        std::int64_t source = 0;
        for (std::size_t k = 0; k < from.size(); ++k) {
            if (coordinate[k] < 0 || coordinate[k] >= from[k]) return std::nullopt;
            source = source * from[k] + coordinate[k];
        }
        out[flat] = values[static_cast<std::size_t>(source)];
    }
    return out;
}

std::optional<std::vector<double>> broadcast_values(const std::vector<double>& values, const Dims& from,
                                                    const Dims& to) {
    if (static_cast<std::int64_t>(values.size()) != count(from)) return std::nullopt;
    const auto index = broadcast_index(from, to);
    if (!index) return std::nullopt;
    std::vector<double> out(index->size());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = values[(*index)[i]];
    return out;
}

void fold_elementwise(ShapeContext& c, const OnnxNode& n, DataType type, const Dims& dims) {
    std::vector<std::vector<double>> args;
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
        const auto* values = c.constant(n, i);
        const auto* shape = c.in(n, i);
        if (values == nullptr || shape == nullptr) return;
        auto spread = broadcast_values(*values, shape->dims, dims);
        if (!spread) return;
        args.push_back(std::move(*spread));
    }
    if (args.empty()) return;
    const bool integral = is_integral(c.in(n, n.op_type == "Where" ? 1 : 0)->type);
    const auto binary = binary_ops().find(n.op_type);
    std::vector<double> out(args[0].size());
    for (std::size_t i = 0; i < out.size(); ++i) {
        std::optional<double> v;
        if (n.op_type == "Where" && args.size() == 3)
            v = args[0][i] != 0 ? args[1][i] : args[2][i];
        else if (n.op_type == "Mod" && args.size() == 2)
            v = mod(args[0][i], args[1][i], int_attribute(n, "fmod", 0) != 0);
        else if (binary != binary_ops().end() && args.size() >= 2) {
            v = args[0][i];
            for (std::size_t k = 1; k < args.size() && v; ++k) v = binary->second(*v, args[k][i], integral);
        }
        if (!v) return;
        out[i] = convert(*v, type);
    }
    c.set_constant(n, 0, std::move(out));
}

void fold_unary(ShapeContext& c, const OnnxNode& n, DataType type) {
    const auto* values = c.constant(n, 0);
    if (values == nullptr) return;
    std::vector<double> out;
    out.reserve(values->size());
    for (const double x : *values) {
        const auto v = unary(n.op_type, x);
        if (!v) return;
        out.push_back(convert(*v, type));
    }
    c.set_constant(n, 0, std::move(out));
}

// A reduction to one element (numel = ReduceProd(Shape(x)), the largest box side, ...).
void fold_reduce(ShapeContext& c, const OnnxNode& n, const Dims& dims) {
    const auto* values = c.constant(n, 0);
    if (values == nullptr || count(dims) != 1 || values->empty()) return;
    double v = n.op_type == "ReduceProd" ? 1.0 : n.op_type == "ReduceSum" ? 0.0 : (*values)[0];
    for (const double x : *values) {
        if (n.op_type == "ReduceProd")
            v *= x;
        else if (n.op_type == "ReduceSum")
            v += x;
        else if (n.op_type == "ReduceMax")
            v = std::max(v, x);
        else if (n.op_type == "ReduceMin")
            v = std::min(v, x);
        else
            return;
    }
    c.set_constant(n, 0, {v});
}

}  // namespace inferbench::models::detail
