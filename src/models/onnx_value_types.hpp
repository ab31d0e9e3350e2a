// The element type of every value of an ONNX model, for transforms that must know which tensors are
// float (onnx_fp16, onnx_qdq): what the file declares (inputs, outputs, value_info, initializers), and for
// the rest one rule per op family (comparisons give bool, Shape int64, Cast its `to`, most ops the type of
// their first input). Subgraphs (If, Loop, Scan) share the one map: ONNX names are unique across scopes.
#pragma once

#include <map>
#include <string>

#include "models/onnx_reader.hpp"

namespace inferbench::models::onnx {

using ValueTypes = std::map<std::string, DataType, std::less<>>;

ValueTypes infer_value_types(const OnnxModel& model);

// The type of `name`, or DataType::undefined where neither the file nor a rule says.
DataType type_of(const ValueTypes& types, const std::string& name);

}  // namespace inferbench::models::onnx
