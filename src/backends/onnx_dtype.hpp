// The harness's element type (DType) of an ONNX element type, where the harness has one: the one mapping for
// the backends that read an ONNX file's inputs themselves (onnxruntime's calibration, trtexec, torch).
// Header-only, so that backends/ itself links nothing of models/.
#pragma once

#include <optional>

#include "backends/backend.hpp"
#include "models/onnx_reader.hpp"

namespace inferbench {

inline std::optional<DType> dtype_of(models::onnx::DataType type) {
    using models::onnx::DataType;
    switch (type) {
        case DataType::float32: return DType::f32;
        case DataType::float16: return DType::f16;
        case DataType::bfloat16: return DType::bf16;
        case DataType::float64: return DType::f64;
        case DataType::int8: return DType::i8;
        case DataType::uint8: return DType::u8;
        case DataType::int32: return DType::i32;
        case DataType::int64: return DType::i64;
        case DataType::boolean: return DType::boolean;
        default: return std::nullopt;
    }
}

}  // namespace inferbench
