// Internal to shape_inference.cpp: the per-op shape rules and what they share.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "models/shape_inference.hpp"

namespace inferbench::models::detail {

struct ShapeContext {
    ShapeInference& result;
    std::int64_t opset = 0;

    const ValueShape* in(const onnx::OnnxNode& node, std::size_t index) const;  // nullptr: absent or unknown
    const std::vector<double>* constant(const onnx::OnnxNode& node, std::size_t index) const;
    std::optional<std::vector<std::int64_t>> ints(const onnx::OnnxNode& node, std::size_t index) const;
    void set(const onnx::OnnxNode& node, std::size_t index, onnx::DataType type, std::vector<std::int64_t> dims);
    void set_constant(const onnx::OnnxNode& node, std::size_t index, std::vector<double> values);
};

// Sets the node's outputs and returns true, or returns false (outputs left unknown).
using ShapeRule = bool (*)(ShapeContext&, const onnx::OnnxNode&);
ShapeRule find_shape_rule(std::string_view op_type);   // nullptr: an op this file does not know
ShapeRule find_tensor_rule(std::string_view op_type);  // shape_ops_tensor.cpp: Reshape, Slice, Gather, ...

std::int64_t int_attribute(const onnx::OnnxNode& node, std::string_view name, std::int64_t fallback);
std::optional<std::vector<std::int64_t>> ints_attribute(const onnx::OnnxNode& node, std::string_view name);
std::optional<std::vector<double>> constant_attribute_values(const onnx::OnnxNode& node, onnx::DataType& type,
                                                             std::vector<std::int64_t>& dims);
std::optional<std::vector<std::int64_t>> broadcast(const std::vector<std::int64_t>& a,
                                                   const std::vector<std::int64_t>& b);

}  // namespace inferbench::models::detail
