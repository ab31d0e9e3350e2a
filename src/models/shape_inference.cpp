#include "models/shape_inference.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "core/tensor_size.hpp"
#include "models/shape_ops.hpp"

namespace inferbench::models {

using onnx::DataType;

namespace {

[[noreturn]] void overflows(const std::vector<std::int64_t>& dims) {
    throw UserError(fmt::format("a value of shape {} has more elements or bytes than a 64-bit count holds; the "
                                "shapes in the model are out of range",
                                shape_text(dims)));
}

}  // namespace

std::int64_t ValueShape::elements() const {
    if (!known) return 0;
    std::int64_t n = 1;
    for (const auto d : dims) {
        const auto next = checked_mul(n, d);
        if (!next) overflows(dims);
        n = *next;
    }
    return n;
}

std::int64_t ValueShape::bytes() const {
    const auto bits = checked_mul(elements(), static_cast<std::int64_t>(onnx::element_bits(type)));
    if (!bits || *bits > std::numeric_limits<std::int64_t>::max() - 7) overflows(dims);
    return (*bits + 7) / 8;
}

const ValueShape* ShapeInference::find(const std::string& name) const {
    if (name.empty()) return nullptr;
    const auto it = values.find(name);
    return it == values.end() || !it->second.known ? nullptr : &it->second;
}

namespace {

template <typename T>
std::vector<double> decode(const std::vector<std::byte>& raw) {
    std::vector<double> out(raw.size() / sizeof(T));
    for (std::size_t i = 0; i < out.size(); ++i) {
        T value;
        std::memcpy(&value, raw.data() + i * sizeof(T), sizeof(T));
        out[i] = static_cast<double>(value);
    }
    return out;
}

}  // namespace

std::optional<std::vector<double>> tensor_values(const onnx::OnnxTensor& tensor) {
    if (tensor.element_count() > static_cast<std::int64_t>(kMaxFoldedElements)) return std::nullopt;
    switch (tensor.data_type) {
        case DataType::int64:
            return decode<std::int64_t>(tensor.raw);
        case DataType::int32:
            return decode<std::int32_t>(tensor.raw);
        case DataType::float32:
            return decode<float>(tensor.raw);
        case DataType::float64:
            return decode<double>(tensor.raw);
        case DataType::int8:
            return decode<std::int8_t>(tensor.raw);
        case DataType::uint8:
        case DataType::boolean:
            return decode<std::uint8_t>(tensor.raw);
        default:
            return std::nullopt;
    }
}

std::pair<std::string, std::vector<std::int64_t>> parse_shape_override(const std::string& text) {
    const auto eq = text.rfind('=');
    const auto bad = [&] {
        return UserError(
            fmt::format("--shape {}: expected NAME=D0,D1,... with whole numbers >= 1, e.g. "
                        "input=1,3,224,224",
                        text));
    };
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) throw bad();
    std::vector<std::int64_t> dims;
    std::string_view rest = std::string_view(text).substr(eq + 1);
    while (true) {
        const auto comma = rest.find_first_of(",x");
        const std::string_view part = rest.substr(0, comma);
        std::int64_t value = 0;
        const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
        if (ec != std::errc{} || ptr != part.data() + part.size() || value < 1) throw bad();
        dims.push_back(value);
        if (comma == std::string_view::npos) break;
        rest = rest.substr(comma + 1);
    }
    return {text.substr(0, eq), dims};
}

namespace {

std::int64_t bind_dimension(const onnx::OnnxValueInfo& input, std::size_t index, const ShapeInferenceOptions& options,
                            ShapeInference& result) {
    const auto& dim = input.dims[index];
    if (const auto* fixed = std::get_if<std::int64_t>(&dim); fixed != nullptr && *fixed > 0) return *fixed;
    const std::string label = std::holds_alternative<std::string>(dim) && !std::get<std::string>(dim).empty()
                                  ? fmt::format("'{}'", std::get<std::string>(dim))
                                  : std::string("unnamed");
    if (index != 0) {
        throw UserError(
            fmt::format("input '{}': dimension {} is symbolic ({}); give the whole shape with "
                        "--shape {}=D0,D1,...",
                        input.name, index, label, input.name));
    }
    if (options.batch) return *options.batch;
    result.warnings.push_back(
        fmt::format("input '{}': symbolic batch dimension ({}) taken as 1; pass --batch N", input.name, label));
    return 1;
}

void bind_inputs(const onnx::OnnxGraph& graph, const ShapeInferenceOptions& options, ShapeInference& result) {
    std::set<std::string, std::less<>> initializers;
    for (const auto& init : graph.initializers) initializers.insert(init.name);
    std::set<std::string, std::less<>> unused;
    for (const auto& [name, dims] : options.input_shapes) unused.insert(name);
    for (const auto& input : graph.inputs) {
        if (initializers.contains(input.name)) continue;
        ValueShape shape{true, input.elem_type, {}};
        if (const auto it = options.input_shapes.find(input.name); it != options.input_shapes.end()) {
            shape.dims = it->second;
            unused.erase(input.name);
        } else if (!input.has_shape) {
            throw UserError(fmt::format("input '{}' has no shape in the file; give it with --shape {}=D0,D1,...",
                                        input.name, input.name));
        } else {
            for (std::size_t i = 0; i < input.dims.size(); ++i)
                shape.dims.push_back(bind_dimension(input, i, options, result));
        }
        byte_size_or_throw(fmt::format("input '{}'", input.name), shape.dims,
                           std::max<std::size_t>(1, (onnx::element_bits(input.elem_type) + 7) / 8));
        result.values[input.name] = shape;
    }
    if (!unused.empty()) throw UserError(fmt::format("--shape {}: no such graph input", *unused.begin()));
}

void bind_initializers(const onnx::OnnxGraph& graph, ShapeInference& result) {
    for (const auto& init : graph.initializers) {
        result.values[init.name] = ValueShape{true, init.data_type, init.dims};
        if (auto values = tensor_values(init)) result.constants[init.name] = std::move(*values);
    }
}

bool inputs_known(const onnx::OnnxNode& node, const ShapeInference& result) {
    for (const auto& name : node.inputs) {
        if (!name.empty() && result.find(name) == nullptr) return false;
    }
    return true;
}

bool inputs_data_dependent(const onnx::OnnxNode& node, const ShapeInference& result) {
    return std::ranges::any_of(node.inputs, [&](const std::string& name) {
        const auto* shape = result.find(name);
        return shape != nullptr && shape->data_dependent;
    });
}

enum class NodeOutcome { inferred, not_inferred, unknown_op };

NodeOutcome infer_node(detail::ShapeContext& context, const onnx::OnnxNode& node) {
    const auto rule =
        node.domain.empty() || node.domain == "ai.onnx" ? detail::find_shape_rule(node.op_type) : nullptr;
    if (rule == nullptr) return NodeOutcome::unknown_op;
    if (!inputs_known(node, context.result)) return NodeOutcome::not_inferred;
    const bool outer = context.data_dependent;
    context.data_dependent = outer || inputs_data_dependent(node, context.result);
    const bool ok = rule(context, node);
    context.data_dependent = outer;
    return ok ? NodeOutcome::inferred : NodeOutcome::not_inferred;
}

// One warning per unknown op type and one for the nodes left without shapes, not one per node.
void infer_nodes(const onnx::OnnxModel& model, ShapeInference& result) {
    detail::ShapeContext context{result, model.opset_version(""), false};
    std::map<std::string, int, std::less<>> unknown_ops;
    std::vector<std::string> uninferred;
    for (const auto& node : model.graph.nodes) {
        const NodeOutcome outcome = infer_node(context, node);
        if (outcome == NodeOutcome::unknown_op)
            ++unknown_ops[node.domain.empty() ? node.op_type : node.domain + "." + node.op_type];
        if (outcome == NodeOutcome::not_inferred) uninferred.push_back(node.name.empty() ? node.op_type : node.name);
        result.node_inferred.push_back(outcome == NodeOutcome::inferred);
    }
    for (const auto& [op, count] : unknown_ops)
        result.warnings.push_back(fmt::format("unknown op {} ({} node{}): outputs unknown, counted as unknown", op,
                                              count, count == 1 ? "" : "s"));
    if (!uninferred.empty())
        result.warnings.push_back(
            fmt::format("{} node{} without inferred output shapes (first: {}); their costs "
                        "are not counted",
                        uninferred.size(), uninferred.size() == 1 ? "" : "s", uninferred[0]));
}

}  // namespace

namespace detail {

bool infer_subgraph(ShapeContext& c, const onnx::OnnxGraph& graph) {
    bind_initializers(graph, c.result);
    return std::ranges::all_of(graph.nodes,
                               [&](const onnx::OnnxNode& node) { return infer_node(c, node) == NodeOutcome::inferred; });
}

}  // namespace detail

ShapeInference infer_shapes(const onnx::OnnxModel& model, const ShapeInferenceOptions& options) {
    ShapeInference result;
    bind_initializers(model.graph, result);
    bind_inputs(model.graph, options, result);
    infer_nodes(model, result);
    return result;
}

}  // namespace inferbench::models
