// The element type of every value of an ONNX model, for transforms that must know which tensors are
// float (onnx_fp16, onnx_qdq): what the file declares (inputs, outputs, value_info, initializers), and for
// the rest one rule per op family (comparisons give bool, Shape int64, Cast its `to`, most ops the type of
// their first input). Subgraphs (If, Loop, Scan) share the one map: ONNX names are unique across scopes.
#pragma once

#include <map>
#include <set>
#include <string>

#include "models/onnx_reader.hpp"

namespace inferbench::models::onnx {

using ValueTypes = std::map<std::string, DataType, std::less<>>;

ValueTypes infer_value_types(const OnnxModel& model);

// The type of `name`, or DataType::undefined where neither the file nor a rule says.
DataType type_of(const ValueTypes& types, const std::string& name);

// What a model says of its own precision, for a builder that runs a file in the types it declares (TensorRT 11):
// the floating-point types of its values (initializers, inputs, outputs, every value typed by the rules) and the
// types its QuantizeLinear/DequantizeLinear nodes quantize to (int8, uint8, float8e4m3fn, ...). Subgraphs included.
struct ModelPrecisionTypes {
    std::set<DataType> float_types;
    std::set<DataType> quantized_types;

    bool has_float(DataType type) const { return float_types.contains(type); }
    bool quantizes_to(DataType type) const { return quantized_types.contains(type); }
};

ModelPrecisionTypes model_precision_types(const OnnxModel& model);

}  // namespace inferbench::models::onnx
