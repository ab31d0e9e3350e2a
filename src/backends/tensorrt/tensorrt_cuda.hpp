// The CUDA runtime pieces the TensorRT backend uses, as owning handles (its timing events are the shared
// backends/cuda_timing's); every failing call throws with CUDA's own error text. Needs the CUDA runtime
// headers (not TensorRT).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "backends/tensorrt/tensorrt_platform.hpp"

namespace inferbench {

void check_cuda(cudaError_t status, std::string_view what);  // throws runtime_error unless cudaSuccess

template <typename Handle, cudaError_t (*destroy)(Handle)>
struct CudaDeleter {
    void operator()(Handle handle) const noexcept { destroy(handle); }
};

using CudaStream = std::unique_ptr<std::remove_pointer_t<cudaStream_t>, CudaDeleter<cudaStream_t, &cudaStreamDestroy>>;
using CudaGraph = std::unique_ptr<std::remove_pointer_t<cudaGraph_t>, CudaDeleter<cudaGraph_t, &cudaGraphDestroy>>;
using CudaGraphExec =
    std::unique_ptr<std::remove_pointer_t<cudaGraphExec_t>, CudaDeleter<cudaGraphExec_t, &cudaGraphExecDestroy>>;

CudaStream make_stream();  // non-blocking: the legacy default stream never serialises it

enum class CudaMemory { device, pinned_host };

// Frees what cudaMalloc (device) or cudaMallocHost (pinned_host) allocated.
struct CudaFree {
    CudaMemory kind = CudaMemory::device;
    void operator()(void* pointer) const noexcept;
};

// Device memory or pinned host memory, freed by the destructor.
class CudaBuffer {
public:
    using Kind = CudaMemory;

    CudaBuffer() = default;
    CudaBuffer(Kind kind, std::size_t bytes);
    void* data() const { return memory_.get(); }
    std::size_t size() const { return bytes_; }

private:
    std::unique_ptr<void, CudaFree> memory_;
    std::size_t bytes_ = 0;
};

struct GpuInfo {
    int index = 0;
    std::string name;
    ComputeCapability compute_capability;
    std::size_t memory_bytes = 0;
};

struct GpuProbe {
    std::optional<GpuInfo> gpu;
    std::string problem;  // why cuda:index cannot be used (no driver, no device, index out of range)
};

// Asks the CUDA runtime about one device without creating a context on it.
GpuProbe probe_gpu(int index);

}  // namespace inferbench
