// Internal to the models module: TensorProto decoding, shared by onnx_reader.cpp's initializers and
// tensor attributes.
#pragma once

#include <cstddef>
#include <stdexcept>

#include "models/onnx_reader.hpp"
#include "models/protobuf_reader.hpp"

namespace inferbench::models::onnx::detail {

// Valid ONNX that plain structs cannot represent: reported without "not an ONNX model".
class Unsupported : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Reads one TensorProto; its data ends up in OnnxTensor::raw whichever field held it, or, for data in
// an external file, OnnxTensor::external says where (raw stays empty). Throws pb::DecodeError for
// malformed or inconsistent tensors, Unsupported for what plain structs cannot hold.
OnnxTensor parse_tensor(pb::ProtoReader r);

}  // namespace inferbench::models::onnx::detail
