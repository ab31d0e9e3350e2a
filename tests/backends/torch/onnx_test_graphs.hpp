// One-node ONNX models built in memory, for testing the interpreter op by op.
#pragma once

#include <torch/types.h>

#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "backends/torch/onnx_interpreter/onnx_program.hpp"
#include "models/onnx_reader.hpp"

namespace inferbench::torch_onnx::test_graphs {

namespace onnx = models::onnx;

inline onnx::DataType onnx_type(torch::ScalarType type) {
    switch (type) {
        case torch::kFloat:
            return onnx::DataType::float32;
        case torch::kLong:
            return onnx::DataType::int64;
        case torch::kInt:
            return onnx::DataType::int32;
        case torch::kBool:
            return onnx::DataType::boolean;
        case torch::kDouble:
            return onnx::DataType::float64;
        case torch::kHalf:
            return onnx::DataType::float16;
        case torch::kBFloat16:
            return onnx::DataType::bfloat16;
        case torch::kChar:
            return onnx::DataType::int8;
        case torch::kByte:
            return onnx::DataType::uint8;
        default:
            return onnx::DataType::undefined;
    }
}

inline onnx::OnnxTensor to_onnx(const std::string& name, const torch::Tensor& value) {
    const torch::Tensor t = value.contiguous();
    onnx::OnnxTensor out{name, onnx_type(t.scalar_type()), t.sizes().vec(), {}, {}, {}};
    out.raw.resize(static_cast<std::size_t>(t.nbytes()));
    if (!out.raw.empty()) std::memcpy(out.raw.data(), t.data_ptr(), out.raw.size());
    return out;
}

// A node input: a graph input fed at run time, an initializer (a constant the loader sees), or left out.
struct Arg {
    enum class Kind { input, initializer, absent };
    Kind kind;
    torch::Tensor value;
};
inline Arg in(torch::Tensor t) { return {Arg::Kind::input, std::move(t)}; }
inline Arg init(torch::Tensor t) { return {Arg::Kind::initializer, std::move(t)}; }
inline Arg none() { return {Arg::Kind::absent, {}}; }

struct Node {
    std::string op;
    std::vector<Arg> args;
    std::vector<std::pair<std::string, onnx::OnnxAttributeValue>> attributes = {};
    int outputs = 1;
    std::int64_t opset = 17;
};

inline onnx::OnnxModel model_of(const Node& n) {
    onnx::OnnxModel m;
    m.ir_version = 8;
    m.opset_imports = {{"", n.opset}};
    onnx::OnnxNode node{"node", n.op, "", {}, {}, {}};
    for (std::size_t k = 0; k < n.args.size(); ++k) {
        const Arg& a = n.args[k];
        const std::string name = a.kind == Arg::Kind::absent ? "" : "x" + std::to_string(k);
        node.inputs.push_back(name);
        if (a.kind == Arg::Kind::initializer) m.graph.initializers.push_back(to_onnx(name, a.value));
        if (a.kind == Arg::Kind::input) m.graph.inputs.push_back({name, onnx_type(a.value.scalar_type()), false, {}});
    }
    for (int k = 0; k < n.outputs; ++k) {
        node.outputs.push_back("y" + std::to_string(k));
        m.graph.outputs.push_back({node.outputs.back(), onnx::DataType::undefined, false, {}});
    }
    for (const auto& [name, value] : n.attributes) node.attributes.emplace(name, value);
    m.graph.nodes.push_back(std::move(node));
    return m;
}

inline std::vector<torch::Tensor> run_all(const Node& n) {
    const OnnxProgram program = OnnxProgram::from_model(model_of(n), "test.onnx");
    std::vector<torch::Tensor> inputs;
    for (const Arg& a : n.args) {
        if (a.kind == Arg::Kind::input) inputs.push_back(a.value);
    }
    return program.run(inputs);
}

inline torch::Tensor run(const Node& n) { return run_all(n).at(0); }

using Ints = std::vector<std::int64_t>;

inline torch::Tensor ints(std::initializer_list<std::int64_t> values) {
    return torch::tensor(Ints(values), torch::kLong);
}
inline torch::Tensor floats(std::initializer_list<float> values) {
    return torch::tensor(std::vector<float>(values), torch::kFloat);
}
// 0, 1, 2, ... as float32 of the given shape.
inline torch::Tensor iota(Ints shape) {
    return torch::arange(c10::multiply_integers(shape), torch::kFloat).reshape(shape);
}

}  // namespace inferbench::torch_onnx::test_graphs
