// The TensorRT backend: builds an engine from an ONNX file per precision (fp32 without TF32, fp16,
// bf16, calibrated int8, fp8 where the GPU has it) for exactly the benchmark's batch size, caches it on
// disk, and runs it with enqueueV3 (optionally as a CUDA graph), timing H2D, compute and D2H with CUDA
// events. Built into libinferbench_backend_tensorrt.so where the TensorRT SDK is found.
#pragma once

#include <memory>

#include "backends/backend.hpp"

namespace inferbench {

std::unique_ptr<Backend> make_tensorrt_backend();

}  // namespace inferbench
