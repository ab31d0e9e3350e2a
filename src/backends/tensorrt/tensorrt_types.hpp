// nvinfer1 element types and dimensions as inferbench's DType and shapes.
#pragma once

#include <NvInfer.h>

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/backend.hpp"

namespace inferbench {

inline std::optional<DType> to_dtype(nvinfer1::DataType type) {
    using nvinfer1::DataType;
    if (type == DataType::kFLOAT) return DType::f32;
    if (type == DataType::kHALF) return DType::f16;
    if (type == DataType::kINT8) return DType::i8;
    if (type == DataType::kINT32) return DType::i32;
    if (type == DataType::kBOOL) return DType::boolean;
    if (type == DataType::kUINT8) return DType::u8;
#if NV_TENSORRT_MAJOR >= 9
    if (type == DataType::kBF16) return DType::bf16;
    if (type == DataType::kINT64) return DType::i64;
#endif
    return std::nullopt;  // FP8, INT4 and newer types have no host representation in inferbench
}

inline std::string data_type_name(nvinfer1::DataType type) {
    if (const auto dtype = to_dtype(type)) return std::string(to_string(*dtype));
    if (type == nvinfer1::DataType::kFP8) return "fp8";
    return "nvinfer1::DataType " + std::to_string(static_cast<int>(type));
}

inline std::vector<std::int64_t> to_shape(const nvinfer1::Dims& dims) {
    if (dims.nbDims < 0) return {};  // unknown rank; callers report it
    return std::vector<std::int64_t>(dims.d, dims.d + dims.nbDims);
}

// TensorRT 10 has 64-bit dimensions (Dims64), 8.6 32-bit ones (Dims32).
inline nvinfer1::Dims to_dims(std::span<const std::int64_t> shape) {
    if (shape.size() > static_cast<std::size_t>(nvinfer1::Dims::MAX_DIMS))
        throw std::runtime_error("TensorRT takes tensors of at most " + std::to_string(nvinfer1::Dims::MAX_DIMS) +
                                 " dimensions, this one has " + std::to_string(shape.size()));
    nvinfer1::Dims dims{};
    dims.nbDims = static_cast<std::int32_t>(shape.size());
    for (std::size_t i = 0; i < shape.size(); ++i)
        dims.d[i] = static_cast<std::remove_reference_t<decltype(dims.d[0])>>(shape[i]);
    return dims;
}

}  // namespace inferbench
