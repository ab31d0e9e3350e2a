// Internal to shape_inference.cpp: the per-op shape rules and what they share.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "models/shape_inference.hpp"

namespace inferbench::models::detail {

struct ShapeContext {
    ShapeInference& result;
    std::int64_t opset = 0;
    // The outputs set() writes depend on the data: an input does (set per node by the caller), or
    // the rule makes a size data-dependent (NonZero, NonMaxSuppression, ...).
    bool data_dependent = false;

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
ShapeRule find_value_rule(std::string_view op_type);   // shape_ops_values.cpp: Range, Tile, NonZero, TopK, If, ...

// shape_inference.cpp: infers every node of a subgraph (an If branch) into the same result; false
// unless all of them are inferred.
bool infer_subgraph(ShapeContext& c, const onnx::OnnxGraph& graph);

// shape_fold.cpp: the values of an op's output from folded inputs (numpy broadcasting), left
// unfolded where an input is not folded or the op is not one it knows.
void fold_elementwise(ShapeContext& c, const onnx::OnnxNode& n, onnx::DataType type, const std::vector<std::int64_t>& dims);
void fold_unary(ShapeContext& c, const onnx::OnnxNode& n, onnx::DataType type);
void fold_reduce(ShapeContext& c, const onnx::OnnxNode& n, const std::vector<std::int64_t>& dims);
// The values of an output of shape `to` whose element at each coordinate is the input's (of shape
// `from`) at the coordinate `to_source` makes of it (Slice, Transpose); nullopt for sizes that do
// not match or outputs larger than kMaxFoldedElements.
std::optional<std::vector<double>> remap_values(const std::vector<double>& values, const std::vector<std::int64_t>& from,
                                                const std::vector<std::int64_t>& to,
                                                const std::function<void(std::vector<std::int64_t>&)>& to_source);
// `values` of shape `from` broadcast to `to`; nullopt when the shapes do not broadcast.
std::optional<std::vector<double>> broadcast_values(const std::vector<double>& values,
                                                    const std::vector<std::int64_t>& from,
                                                    const std::vector<std::int64_t>& to);

std::int64_t int_attribute(const onnx::OnnxNode& node, std::string_view name, std::int64_t fallback);
std::optional<std::vector<std::int64_t>> ints_attribute(const onnx::OnnxNode& node, std::string_view name);
std::optional<std::vector<double>> constant_attribute_values(const onnx::OnnxNode& node, onnx::DataType& type,
                                                             std::vector<std::int64_t>& dims);
std::optional<std::vector<std::int64_t>> broadcast(const std::vector<std::int64_t>& a,
                                                   const std::vector<std::int64_t>& b);

}  // namespace inferbench::models::detail
