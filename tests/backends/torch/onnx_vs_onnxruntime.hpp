// One graph, two runtimes: the interpreter (at a chosen float type) and ONNX Runtime (the file as
// written, fp32), on the same inputs; every output compared. Integer and boolean outputs must be
// equal; floating ones within a tolerance of max |ours - theirs| / max(1, max |theirs|).
#pragma once

#include <gtest/gtest.h>

#include <torch/types.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "backends/torch/onnx_model_writer.hpp"
#include "backends/torch/onnx_interpreter/onnx_program.hpp"
#include "backends/torch/onnx_test_graphs.hpp"
#include "backends/torch/onnxruntime_reference.hpp"
#include "common/scratch_dir.hpp"

namespace inferbench::torch_onnx::test_graphs {

// The tolerances of the per-op comparisons, per float type of the interpreter (ONNX Runtime runs
// fp32): fp32 rounding differences; one rounding of inputs and outputs to 11 (fp16) or 8 (bf16)
// significant bits, 2^-11 and 2^-8, with headroom for one operation on them.
inline double tolerance_for(torch::ScalarType float_type) {
    switch (float_type) {
        case torch::kHalf:
            return 2e-3;
        case torch::kBFloat16:
            return 1.6e-2;
        default:
            return 1e-5;
    }
}

inline ONNXTensorElementDataType ort_type(torch::ScalarType type) {
    switch (type) {
        case torch::kLong:
            return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
        case torch::kInt:
            return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32;
        case torch::kBool:
            return ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL;
        case torch::kDouble:
            return ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE;
        default:
            return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
    }
}

// ONNX Runtime's outputs for `inputs`, through a session of its own: the backend class derives every
// input's leading dimension from one batch size, which one-node graphs' inputs do not share.
inline std::vector<torch::Tensor> run_session(const std::filesystem::path& path, const std::vector<torch::Tensor>& inputs) {
    static const OnnxRuntimeBackend api;  // initialises ONNX Runtime's C++ API (ORT_API_MANUAL_INIT)
    static Ort::Env env(ORT_LOGGING_LEVEL_WARNING, "inferbench-test");
    Ort::SessionOptions options;
    options.SetIntraOpNumThreads(1);
    Ort::Session session(env, path.c_str(), options);
    const Ort::MemoryInfo cpu = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
    Ort::AllocatorWithDefaultOptions allocator;
    std::vector<torch::Tensor> contiguous;
    std::vector<Ort::Value> values;
    std::vector<Ort::AllocatedStringPtr> names;
    std::vector<const char*> input_names;
    std::vector<const char*> output_names;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        contiguous.push_back(inputs[k].contiguous());
        const torch::Tensor& t = contiguous.back();
        values.push_back(Ort::Value::CreateTensor(cpu, t.data_ptr(), t.nbytes(), t.sizes().data(), t.sizes().size(),
                                                  ort_type(t.scalar_type())));
        names.push_back(session.GetInputNameAllocated(k, allocator));
        input_names.push_back(names.back().get());
    }
    for (std::size_t k = 0; k < session.GetOutputCount(); ++k) {
        names.push_back(session.GetOutputNameAllocated(k, allocator));
        output_names.push_back(names.back().get());
    }
    std::vector<Ort::Value> results = session.Run(Ort::RunOptions{nullptr}, input_names.data(), values.data(),
                                                  values.size(), output_names.data(), output_names.size());
    std::vector<torch::Tensor> outputs;
    for (const Ort::Value& value : results) {
        const auto info = value.GetTensorTypeAndShapeInfo();
        outputs.push_back(torch::from_blob(const_cast<void*>(value.GetTensorRawData()), info.GetShape(),
                                           ort_reference::scalar_type_of(info.GetElementType()))
                              .clone());
    }
    return outputs;
}

// Declares every graph input with its fixed shape and type (ONNX Runtime needs them).
inline void declare_input_shapes(onnx::OnnxModel& m, const std::vector<torch::Tensor>& inputs) {
    for (std::size_t k = 0; k < m.graph.inputs.size() && k < inputs.size(); ++k) {
        auto& info = m.graph.inputs[k];
        info.elem_type = onnx_type(inputs[k].scalar_type());
        info.has_shape = true;
        info.dims.assign(inputs[k].sizes().begin(), inputs[k].sizes().end());
    }
}

inline ::testing::AssertionResult same_outputs(const std::vector<torch::Tensor>& ours,
                                               const std::vector<torch::Tensor>& theirs, double tolerance) {
    if (ours.size() != theirs.size()) {
        return ::testing::AssertionFailure() << ours.size() << " outputs, ONNX Runtime " << theirs.size();
    }
    for (std::size_t k = 0; k < ours.size(); ++k) {
        if (ours[k].sizes() != theirs[k].sizes()) {
            return ::testing::AssertionFailure()
                   << "output " << k << ": shape " << ours[k].sizes() << ", ONNX Runtime " << theirs[k].sizes();
        }
        if (!theirs[k].is_floating_point()) {
            if (ours[k].scalar_type() != theirs[k].scalar_type() || !torch::equal(ours[k], theirs[k])) {
                return ::testing::AssertionFailure() << "output " << k << ":\n"
                                                     << ours[k] << "\nONNX Runtime:\n"
                                                     << theirs[k];
            }
            continue;
        }
        if (ours[k].numel() == 0) continue;
        // NaN where ONNX Runtime has NaN is agreement; anywhere else it is not.
        const torch::Tensor nan = torch::isnan(theirs[k]);
        if (!torch::equal(torch::isnan(ours[k].to(torch::kFloat)), nan)) {
            return ::testing::AssertionFailure() << "output " << k << ": NaN in different places";
        }
        const auto error = ort_reference::agreement(ours[k].masked_fill(nan, 0), theirs[k].masked_fill(nan, 0));
        if (!(error.error() <= tolerance)) {
            return ::testing::AssertionFailure() << "output " << k << ": error " << error.error() << " above "
                                                 << tolerance << "\n"
                                                 << ours[k] << "\nONNX Runtime:\n"
                                                 << theirs[k];
        }
    }
    return ::testing::AssertionSuccess();
}

// Runs `m` on `inputs` through both runtimes; the interpreter converts floating inputs to `float_type`.
inline ::testing::AssertionResult agrees_with_onnxruntime(onnx::OnnxModel m, const std::vector<torch::Tensor>& inputs,
                                                          torch::ScalarType float_type = torch::kFloat,
                                                          double tolerance = -1) {
    declare_input_shapes(m, inputs);
    const inferbench::testing::ScratchDir dir;
    const auto path = dir.path() / "graph.onnx";
    std::ofstream(path, std::ios::binary) << serialize(m);
    OnnxProgram program = OnnxProgram::load(path);
    program.to(torch::kCPU, float_type, false);
    const std::vector<torch::Tensor> ours = program.run(inputs);
    const std::vector<torch::Tensor> theirs = run_session(path, inputs);
    return same_outputs(ours, theirs, tolerance < 0 ? tolerance_for(float_type) : tolerance);
}

// The same for a one-node graph (see test_graphs::Node).
inline ::testing::AssertionResult agrees_with_onnxruntime(const Node& n, torch::ScalarType float_type = torch::kFloat,
                                                          double tolerance = -1) {
    std::vector<torch::Tensor> inputs;
    for (const Arg& a : n.args) {
        if (a.kind == Arg::Kind::input) inputs.push_back(a.value);
    }
    return agrees_with_onnxruntime(model_of(n), inputs, float_type, tolerance);
}

}  // namespace inferbench::torch_onnx::test_graphs
