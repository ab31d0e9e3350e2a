// ONNX Runtime's GPU execution providers (CUDA, TensorRT): whether one can run on GPU N here, and
// attaching it to a session. A runtime built with the provider (a GPU build, pip onnxruntime-gpu) takes
// it the classic way (AppendExecutionProvider_CUDA_V2 / _TensorRT_V2); the CPU build bundled by
// scripts/fetch-onnxruntime.sh takes it as a plugin: libonnxruntime_providers_shared.so opened with
// RTLD_GLOBAL, the provider library registered with the environment, the provider's device N appended.
// Every check answers one line naming what is missing and how to get it.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/onnxruntime/ort_runtime.hpp"

namespace inferbench {

enum class GpuProvider { cuda, tensorrt };

// ONNX Runtime's name of the provider: "CUDAExecutionProvider", "TensorrtExecutionProvider".
std::string_view provider_name(GpuProvider provider);
// The provider library's file name: libonnxruntime_providers_cuda.so, ..._tensorrt.so.
std::string_view provider_library(GpuProvider provider);

// A shared library the provider needs, what it is and how to get it (for the message).
struct RequiredLibrary {
    std::string_view soname;
    std::string_view what;
    std::string_view fix;
};

// The libraries the pinned providers (CUDA 13 builds) load, in the order checked: the NVIDIA driver, the
// CUDA runtime, cuBLASLt, cuDNN, and for TensorRT libnvinfer.
std::span<const RequiredLibrary> required_libraries(GpuProvider provider);

// How a library is tried: nothing when it opens, else the loader's message.
using LibraryOpener = std::function<std::optional<std::string>(std::string_view soname)>;
// dlopen (and keep it open).
std::optional<std::string> open_library(std::string_view soname);

// The first of `libraries` that `open` cannot open, as one line: what it is, the loader's message, and
// how to get it. Nothing when all open.
std::optional<std::string> missing_library_problem(std::span<const RequiredLibrary> libraries,
                                                   const LibraryOpener& open);

// Provider options as ONNX Runtime takes them ("device_id" -> "0", "enable_cuda_graph" -> "1").
using ProviderOptions = std::map<std::string, std::string>;

class GpuProviderSetup {
public:
    // Why `provider` cannot run on GPU `device` with `runtime`, or nothing; found once per process for each
    // runtime, provider and device (the plugin is registered with the runtime's environment on the way).
    static std::optional<std::string> problem(const OrtRuntime& runtime, GpuProvider provider, int device);

    // Appends the provider for GPU `device` with `options` (problem() must have said nothing) and returns
    // the memory the provider's device tensors live in, for binding inputs and outputs on the GPU.
    static const OrtMemoryInfo* append(Ort::SessionOptions& session_options, const OrtRuntime& runtime,
                                       GpuProvider provider, int device, const ProviderOptions& options);
};

}  // namespace inferbench
