// Tiny hand-built ONNX graphs (reader structs) for the shape-inference and cost-model tests.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "models/onnx_reader.hpp"

namespace inferbench::models::testing {

using onnx::DataType;

struct GraphFixture {
    onnx::OnnxModel model;

    GraphFixture() { model.opset_imports.push_back({"", 17}); }

    GraphFixture& input(std::string name, std::vector<onnx::OnnxDimension> dims, DataType type = DataType::float32) {
        model.graph.inputs.push_back({std::move(name), type, true, std::move(dims)});
        return *this;
    }
    // A float initializer of zeros (the tests need shapes, not values).
    GraphFixture& weight(std::string name, std::vector<std::int64_t> dims) {
        onnx::OnnxTensor t{std::move(name), DataType::float32, std::move(dims), {}, {}, {}};
        t.raw.resize(static_cast<std::size_t>(t.element_count()) * 4);
        model.graph.initializers.push_back(std::move(t));
        return *this;
    }
    GraphFixture& ints(std::string name, std::vector<std::int64_t> values) {
        onnx::OnnxTensor t{std::move(name), DataType::int64, {static_cast<std::int64_t>(values.size())}, {}, {}, {}};
        t.raw.resize(values.size() * 8);
        std::memcpy(t.raw.data(), values.data(), t.raw.size());
        model.graph.initializers.push_back(std::move(t));
        return *this;
    }
    GraphFixture& node(std::string op, std::vector<std::string> inputs, std::vector<std::string> outputs,
                       std::map<std::string, onnx::OnnxAttributeValue, std::less<>> attributes = {}) {
        const std::string name = outputs.empty() ? op : outputs[0];
        model.graph.nodes.push_back(
            {name, std::move(op), "", std::move(inputs), std::move(outputs), std::move(attributes)});
        return *this;
    }
};

using Ints = std::vector<std::int64_t>;

}  // namespace inferbench::models::testing
