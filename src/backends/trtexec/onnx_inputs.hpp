// The graph inputs of an ONNX file (names, element types, dimensions), read straight from the
// protobuf wire format: trtexec needs the input names and shapes for --shapes, and this module
// must not link ONNX Runtime or libprotobuf.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace inferbench::trtexec {

struct OnnxInput {
    std::string name;
    std::int32_t elem_type = 0;      // onnx.TensorProto.DataType: 1 float, 10 float16, 7 int64, ...
    std::vector<std::int64_t> dims;  // -1 for a symbolic or unknown dimension
};

// The graph's inputs that are not initializers (older exporters list weights as inputs too).
// Throws std::runtime_error for bytes that are not a well-formed ModelProto.
std::vector<OnnxInput> read_onnx_inputs(std::span<const std::byte> model);

}  // namespace inferbench::trtexec
