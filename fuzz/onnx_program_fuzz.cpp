// libFuzzer entry point for the LibTorch ONNX interpreter's load and prepare path: any input must
// either be rejected with a UserError (reading, naming values, operators, attributes, constant
// folding), or load into a program that, fed small inputs of its declared shapes, specializes and
// runs or fails with the interpreter's run-time errors (std::invalid_argument for inputs,
// std::runtime_error naming the node). Any other exception, a crash, a sanitizer report, a
// timeout or an allocation beyond the fuzzer's limit is a finding.
#include <torch/types.h>

#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

#include "backends/torch/onnx_interpreter/onnx_kernels.hpp"
#include "backends/torch/onnx_interpreter/onnx_program.hpp"
#include "core/error.hpp"
#include "models/onnx_reader.hpp"

namespace {

namespace onnx = inferbench::models::onnx;
using inferbench::torch_onnx::OnnxProgram;

constexpr std::int64_t kMaxInputDim = 16;
constexpr std::int64_t kMaxInputElements = 4096;
constexpr std::int64_t kSymbolicDim = 2;

// Zeros of the input's declared shape and type (symbolic dimensions 2), or nothing if the
// declaration is one a benchmark could not feed small inputs for either.
std::optional<torch::Tensor> input_for(const onnx::OnnxValueInfo& info) {
    const auto type = inferbench::torch_onnx::scalar_type_of(info.elem_type);
    if (!info.has_shape || !type || info.dims.size() > 6) return std::nullopt;
    std::vector<std::int64_t> shape;
    std::int64_t elements = 1;
    for (const auto& dim : info.dims) {
        const auto* fixed = std::get_if<std::int64_t>(&dim);
        const std::int64_t d = fixed ? *fixed : kSymbolicDim;
        if (d < 0 || d > kMaxInputDim) return std::nullopt;
        elements *= d;
        shape.push_back(d);
    }
    if (elements > kMaxInputElements) return std::nullopt;
    return torch::zeros(shape, torch::TensorOptions().dtype(*type));
}

void prepare_and_run(OnnxProgram& program) {
    std::vector<torch::Tensor> inputs;
    for (const auto& info : program.inputs()) {
        auto input = input_for(info);
        if (!input) return;
        inputs.push_back(*input);
    }
    try {
        program.specialize(inputs);
        program.run(inputs);
    } catch (const std::invalid_argument&) {
    } catch (const std::runtime_error&) {
        // Includes UserError from building the specialized program.
    }
}

bool last_loaded = false;

}  // namespace

// For fallback_driver.cpp, which has no coverage to go by: whether the last input got past the loader.
extern "C" int InferbenchFuzzLastInputLoaded() { return last_loaded ? 1 : 0; }

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    at::set_num_threads(1);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const c10::InferenceMode inference_mode;
    std::optional<OnnxProgram> program;
    last_loaded = false;
    try {
        program.emplace(OnnxProgram::from_model(onnx::read_onnx(std::as_bytes(std::span(data, size)), "fuzz"), "fuzz"));
    } catch (const inferbench::UserError&) {
        return 0;  // the expected outcome for almost every input
    }
    last_loaded = true;
    prepare_and_run(*program);
    return 0;
}
