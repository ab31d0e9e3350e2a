// The reference the interpreter is checked against: the same ONNX file and inputs through the
// ONNX Runtime backend's own class (CPU execution provider, its default graph optimisations), and
// the agreement measure the cross-backend tests report.
#pragma once

#include <torch/types.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "backends/onnxruntime/onnxruntime_backend.hpp"

namespace inferbench::torch_onnx::ort_reference {

inline torch::ScalarType scalar_type_of(ONNXTensorElementDataType type) {
    switch (type) {
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16:
            return torch::kHalf;
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16:
            return torch::kBFloat16;
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE:
            return torch::kDouble;
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8:
            return torch::kChar;
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8:
            return torch::kByte;
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32:
            return torch::kInt;
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64:
            return torch::kLong;
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL:
            return torch::kBool;
        default:
            return torch::kFloat;
    }
}

// The outputs of ONNX Runtime on `path` for `inputs` (batch = the first input's first dimension),
// as LibTorch tensors in the graph's output order.
inline std::vector<torch::Tensor> run_onnxruntime(const std::filesystem::path& path,
                                                  const std::vector<torch::Tensor>& inputs) {
    OnnxRuntimeBackend ort;
    BenchmarkSpec spec;
    spec.backend = "onnxruntime";
    spec.batch_size = inputs.at(0).dim() > 0 ? inputs.at(0).size(0) : 1;
    ort.load(path.string(), spec);
    std::vector<HostTensor> host;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        const TensorInfo info = ort.inputs().at(k);
        const torch::Tensor t = inputs[k].contiguous();
        EXPECT_EQ(info.shape, t.sizes().vec()) << info.name;
        EXPECT_EQ(info.byte_size(), t.nbytes()) << info.name;
        host.push_back({info, std::vector<std::byte>(info.byte_size())});
        std::memcpy(host.back().data.data(), t.data_ptr(), std::min(host.back().data.size(), t.nbytes()));
    }
    ort.prepare(host);
    DeviceTimes times;
    ort.infer(times);
    std::vector<torch::Tensor> outputs;
    for (const Ort::Value& value : ort.outputs()) {
        const auto info = value.GetTensorTypeAndShapeInfo();
        outputs.push_back(torch::from_blob(const_cast<void*>(value.GetTensorRawData()), info.GetShape(),
                                           scalar_type_of(info.GetElementType()))
                              .clone());
    }
    return outputs;
}

// How far the interpreter's output is from ONNX Runtime's: max |ours - theirs| over
// max(1, max |theirs|), i.e. absolute for outputs of magnitude below 1 and relative above.
struct Agreement {
    double max_difference = 0;
    double max_reference = 0;
    double error() const { return max_difference / std::max(1.0, max_reference); }
};

inline Agreement agreement(const torch::Tensor& ours, const torch::Tensor& theirs) {
    const torch::Tensor a = ours.to(torch::kDouble);
    const torch::Tensor b = theirs.to(torch::kDouble);
    return {(a - b).abs().max().item<double>(), b.abs().max().item<double>()};
}

}  // namespace inferbench::torch_onnx::ort_reference
