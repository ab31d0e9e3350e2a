// Static shape inference over any ONNX graph read by onnx_reader.hpp, for the inspector's cost
// model. Symbolic dimensions are bound from the caller (batch, or whole input shapes); the values
// of small tensors (initializers, Constant, Shape and what is computed from them: Gather, Concat,
// Range, Where, arithmetic, ...) are folded so that Reshape, Slice, Expand, Resize and the like get
// concrete targets; If takes its branch when the condition folds. An op this file does not know
// leaves its outputs unknown and adds a warning; it never throws for an op, except where a shape it would
// keep has more elements than a 64-bit count holds (a UserError naming the node's output and the shape).
//
// Sizes decided by the data (NonZero, NonMaxSuppression, If on a computed condition, and whatever
// follows them) are taken at the largest size the data allows and marked data_dependent: costs
// computed from them are upper bounds.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/onnx_reader.hpp"

namespace inferbench::models {

struct ValueShape {
    bool known = false;
    onnx::DataType type = onnx::DataType::undefined;
    std::vector<std::int64_t> dims;  // empty and known: a scalar
    // The dims (and folded values) depend on the data; they are the largest the data allows.
    bool data_dependent = false;

    std::int64_t elements() const;  // 0 when unknown
    std::int64_t bytes() const;     // elements * element size (rounded up); 0 when unknown
};

struct ShapeInferenceOptions {
    // Binds the first dimension of every input whose first dimension is symbolic; unset: 1, with a warning.
    std::optional<std::int64_t> batch;
    // Whole shapes per input name, replacing whatever the file says (--shape name=dims).
    std::map<std::string, std::vector<std::int64_t>, std::less<>> input_shapes;
};

struct ShapeInference {
    std::map<std::string, ValueShape, std::less<>> values;
    // Folded contents of small numeric tensors (<= kMaxFoldedElements), as doubles (exact for
    // shapes); the folding needs no more.
    std::map<std::string, std::vector<double>, std::less<>> constants;
    std::vector<bool> node_inferred;  // per top-level graph node: false for unknown ops or unknown inputs
    // Per If node (by its first output): the branches that run, every node of them inferred. Both
    // when the condition depends on the data.
    std::map<std::string, std::vector<const onnx::OnnxGraph*>, std::less<>> branches;
    std::vector<std::string> warnings;

    const ValueShape* find(const std::string& name) const;  // nullptr for empty or unknown names
};

inline constexpr std::size_t kMaxFoldedElements = 4096;

// Throws UserError when an input has a symbolic dimension other than the first and no --shape,
// or when an input has no shape at all.
ShapeInference infer_shapes(const onnx::OnnxModel& model, const ShapeInferenceOptions& options = {});

// "name=1,3,224,224" -> {name, dims}; throws UserError naming the text otherwise.
std::pair<std::string, std::vector<std::int64_t>> parse_shape_override(const std::string& text);

// Numeric elements of a tensor as doubles (int, float, bool types); nullopt for others or when
// the tensor is larger than kMaxFoldedElements.
std::optional<std::vector<double>> tensor_values(const onnx::OnnxTensor& tensor);

}  // namespace inferbench::models
