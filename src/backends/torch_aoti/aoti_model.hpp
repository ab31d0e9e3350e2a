// An AOTInductor package (.pt2, made by torch._inductor.aoti_compile_and_package) loaded with LibTorch's
// AOTIModelPackageLoader, behind the LibTorch backends' TorchModel interface, so that the CUDA execution the
// torch backend uses (torch_cuda: pinned host buffers, one stream, events around H2D / compute / D2H, CUDA
// graphs) runs it as it runs TorchScript and ONNX models.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <c10/util/Exception.h>

#include "backends/backend.hpp"
#include "backends/torch/torch_model.hpp"

namespace inferbench {

struct AotiModelConfig {
    int device_index = -1;  // the GPU to run on; -1: the CPU (or the package's own device)
    // Runs without the loader's locks and events, which a CUDA graph cannot capture (needed for cuda_graph).
    bool run_single_threaded = false;
    std::vector<TensorInfo> inputs;  // as the exporter declared them, at the cell's batch
};

// Loads the package at `path`. Throws c10::Error where LibTorch cannot.
std::unique_ptr<TorchModel> load_aoti_model(const std::string& path, const AotiModelConfig& config);

// The first line of a LibTorch error, without the C++ backtrace LibTorch appends.
std::string torch_error_line(const c10::Error& error);

}  // namespace inferbench
