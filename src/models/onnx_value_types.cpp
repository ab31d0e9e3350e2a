#include "models/onnx_value_types.hpp"

#include <initializer_list>
#include <utility>
#include <string_view>

namespace inferbench::models::onnx {
namespace {

bool one_of(std::string_view op, std::initializer_list<std::string_view> ops) {
    for (const auto o : ops)
        if (o == op) return true;
    return false;
}

std::int64_t int_attribute(const OnnxNode& node, std::string_view name, std::int64_t fallback) {
    const auto it = node.attributes.find(name);
    if (it == node.attributes.end()) return fallback;
    const auto* value = std::get_if<std::int64_t>(&it->second);
    return value ? *value : fallback;
}

class TypeInference {
public:
    ValueTypes types;

    void declared(const OnnxGraph& graph) {
        for (const auto& t : graph.initializers) types.insert_or_assign(t.name, t.data_type);
        for (const auto* list : {&graph.inputs, &graph.outputs, &graph.value_info})
            for (const auto& v : *list)
                if (v.elem_type != DataType::undefined) types.insert_or_assign(v.name, v.elem_type);
    }

    void graph(const OnnxGraph& g) {
        declared(g);
        for (const auto& node : g.nodes) {
            for (const auto& [name, sub] : node.subgraphs) graph(*sub);
            infer(node);
        }
    }

private:
    DataType input(const OnnxNode& node, std::size_t index) const {
        return index < node.inputs.size() ? type_of(types, node.inputs[index]) : DataType::undefined;
    }

    // The type of output `index` of `node` by its op's rule.
    DataType rule(const OnnxNode& node, std::size_t index) const {
        const std::string_view op = node.op_type;
        if (!node.domain.empty() && node.domain != "ai.onnx") return index == 0 ? input(node, 0) : DataType::undefined;
        if (op == "Cast") return static_cast<DataType>(int_attribute(node, "to", 0));
        if (op == "CastLike") return input(node, 1);
        if (op == "Constant") {
            if (const auto it = node.attributes.find("value"); it != node.attributes.end())
                if (const auto* t = std::get_if<OnnxTensor>(&it->second)) return t->data_type;
            if (node.attributes.contains("value_float") || node.attributes.contains("value_floats"))
                return DataType::float32;
            if (node.attributes.contains("value_int") || node.attributes.contains("value_ints")) return DataType::int64;
            return DataType::undefined;
        }
        if (op == "ConstantOfShape") {
            if (const auto it = node.attributes.find("value"); it != node.attributes.end())
                if (const auto* t = std::get_if<OnnxTensor>(&it->second)) return t->data_type;
            return DataType::float32;
        }
        if (one_of(op, {"Shape", "Size", "NonZero", "ArgMax", "ArgMin", "NonMaxSuppression"})) return DataType::int64;
        if (one_of(op, {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Not",
                        "IsNaN", "IsInf"}))
            return DataType::boolean;
        if (one_of(op, {"EyeLike", "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                        "Bernoulli", "Multinomial"})) {
            const std::int64_t dtype = int_attribute(node, "dtype", 0);
            if (dtype != 0) return static_cast<DataType>(dtype);
            return op.ends_with("Like") || op == "Bernoulli" || op == "EyeLike" ? input(node, 0) : DataType::float32;
        }
        if (op == "QuantizeLinear") return node.inputs.size() > 2 ? input(node, 2) : DataType::uint8;
        if (op == "DequantizeLinear") return input(node, 1);
        if (op == "Where") return input(node, 1);
        if (op == "OneHot") return input(node, 2);
        if (one_of(op, {"TopK", "MaxPool", "Unique"}) && index > 0) return DataType::int64;  // indices, counts
        if (op == "Dropout" && index == 1) return DataType::boolean;
        if (op == "If") return subgraph_output(node, "then_branch", index);
        if (op == "Loop") return subgraph_output(node, "body", index + 1);
        if (op == "Scan") return subgraph_output(node, "body", index);
        return input(node, 0);
    }

    DataType subgraph_output(const OnnxNode& node, std::string_view attribute, std::size_t index) const {
        const auto it = node.subgraphs.find(attribute);
        if (it == node.subgraphs.end() || index >= it->second->outputs.size()) return DataType::undefined;
        return type_of(types, it->second->outputs[index].name);
    }

    void infer(const OnnxNode& node) {
        for (std::size_t i = 0; i < node.outputs.size(); ++i) {
            if (node.outputs[i].empty() || types.contains(node.outputs[i])) continue;
            const DataType t = rule(node, i);
            if (t != DataType::undefined) types.emplace(node.outputs[i], t);
        }
    }
};

}  // namespace

ValueTypes infer_value_types(const OnnxModel& model) {
    TypeInference inference;
    inference.graph(model.graph);
    return std::move(inference.types);
}

DataType type_of(const ValueTypes& types, const std::string& name) {
    const auto it = types.find(name);
    return it == types.end() ? DataType::undefined : it->second;
}

namespace {

bool is_float(DataType type) {
    return type == DataType::float32 || type == DataType::float16 || type == DataType::bfloat16 ||
           type == DataType::float64;
}

void add_quantized_types(const OnnxGraph& graph, const ValueTypes& types, ModelPrecisionTypes& found) {
    for (const auto& node : graph.nodes) {
        const bool default_domain = node.domain.empty() || node.domain == "ai.onnx";
        DataType quantized = DataType::undefined;
        if (default_domain && node.op_type == "QuantizeLinear" && !node.outputs.empty())
            quantized = type_of(types, node.outputs[0]);
        else if (default_domain && node.op_type == "DequantizeLinear" && !node.inputs.empty())
            quantized = type_of(types, node.inputs[0]);
        if (quantized != DataType::undefined && !is_float(quantized)) found.quantized_types.insert(quantized);
        for (const auto& [name, sub] : node.subgraphs) add_quantized_types(*sub, types, found);
    }
}

}  // namespace

ModelPrecisionTypes model_precision_types(const OnnxModel& model) {
    const ValueTypes types = infer_value_types(model);
    ModelPrecisionTypes found;
    for (const auto& [name, type] : types)
        if (is_float(type)) found.float_types.insert(type);
    add_quantized_types(model.graph, types, found);
    return found;
}

}  // namespace inferbench::models::onnx
