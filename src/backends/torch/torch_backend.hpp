// The LibTorch backend: TorchScript (.pt) and ONNX (.onnx, interpreted with LibTorch ops) models on
// CPU and, with a CUDA build of LibTorch, on NVIDIA GPUs; fp32, fp16 and bf16; no Python at run time.
#pragma once

#include <memory>

#include "backends/backend.hpp"

namespace inferbench {

std::unique_ptr<Backend> make_torch_backend();

}  // namespace inferbench
