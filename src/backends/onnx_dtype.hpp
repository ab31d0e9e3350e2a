// The harness's element type (DType) of an ONNX element type, where the harness has one: the one mapping for
// the backends that read an ONNX file's inputs themselves (onnxruntime's calibration, trtexec, torch).
// Header-only, so that backends/ itself links nothing of models/.
#pragma once

#include <optional>
#include <string>
#include <variant>

#include "backends/backend.hpp"
#include "backends/batch_shape.hpp"
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

// The declared shape of an ONNX value for resolve_batch_shape: a symbolic or unknown dimension (and a fixed 0,
// which no exporter writes for a real size) is dynamic (-1, with its symbol's name).
inline DeclaredShape declared_shape(const models::onnx::OnnxValueInfo& value) {
    DeclaredShape declared;
    for (const auto& dim : value.dims) {
        const auto* fixed = std::get_if<std::int64_t>(&dim);
        declared.dims.push_back(fixed && *fixed > 0 ? *fixed : -1);
        const auto* symbol = std::get_if<std::string>(&dim);
        declared.symbols.push_back(symbol ? *symbol : std::string());
    }
    return declared;
}

}  // namespace inferbench
