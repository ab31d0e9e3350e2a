// The CUDA runtime table (cuda_runtime_table.hpp) filled from the runtime a module links (the tensorrt
// backend's CUDA::cudart, the torch backends' through LibTorch): the same wrapper as the onnxruntime
// backend's dlopen'd table, so every backend times with the same code. Header-only: each module that
// includes it binds it to its own runtime; needs the CUDA runtime headers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "backends/cuda_runtime_table.hpp"

namespace inferbench::cuda {

inline const RuntimeTable& linked_runtime() {
    static const RuntimeTable table{
        [](int* count) { return static_cast<int>(cudaGetDeviceCount(count)); },
        [](int device) { return static_cast<int>(cudaSetDevice(device)); },
        [](Stream* stream, unsigned flags) {
            return static_cast<int>(cudaStreamCreateWithFlags(reinterpret_cast<cudaStream_t*>(stream), flags));
        },
        [](Stream stream) { return static_cast<int>(cudaStreamDestroy(static_cast<cudaStream_t>(stream))); },
        [](Stream stream) { return static_cast<int>(cudaStreamSynchronize(static_cast<cudaStream_t>(stream))); },
        [](Event* event) { return static_cast<int>(cudaEventCreate(reinterpret_cast<cudaEvent_t*>(event))); },
        [](Event event, Stream stream) {
            return static_cast<int>(cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)));
        },
        [](float* ms, Event from, Event to) {
            return static_cast<int>(
                cudaEventElapsedTime(ms, static_cast<cudaEvent_t>(from), static_cast<cudaEvent_t>(to)));
        },
        [](Event event) { return static_cast<int>(cudaEventDestroy(static_cast<cudaEvent_t>(event))); },
        [](void** pointer, std::size_t bytes) { return static_cast<int>(cudaMalloc(pointer, bytes)); },
        [](void* pointer) { return static_cast<int>(cudaFree(pointer)); },
        [](void** pointer, std::size_t bytes) { return static_cast<int>(cudaMallocHost(pointer, bytes)); },
        [](void* pointer) { return static_cast<int>(cudaFreeHost(pointer)); },
        [](void* to, const void* from, std::size_t bytes, int kind, Stream stream) {
            return static_cast<int>(cudaMemcpyAsync(to, from, bytes, static_cast<cudaMemcpyKind>(kind),
                                                    static_cast<cudaStream_t>(stream)));
        },
        [](int status) { return cudaGetErrorString(static_cast<cudaError_t>(status)); },
    };
    return table;
}

}  // namespace inferbench::cuda
