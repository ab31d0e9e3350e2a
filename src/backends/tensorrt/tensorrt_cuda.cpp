#include "backends/tensorrt/tensorrt_cuda.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace inferbench {

void check_cuda(cudaError_t status, std::string_view what) {
    if (status == cudaSuccess) return;
    throw std::runtime_error(fmt::format("CUDA: {} failed: {} ({})", what, cudaGetErrorString(status),
                                         cudaGetErrorName(status)));
}

CudaStream make_stream() {
    cudaStream_t stream = nullptr;
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    return CudaStream(stream);
}

CudaBuffer::CudaBuffer(Kind kind, std::size_t bytes) : memory_(nullptr, CudaFree{kind}), bytes_(bytes) {
    if (bytes == 0) return;  // an empty tensor has no memory; TensorRT accepts a null address for it
    void* pointer = nullptr;
    if (kind == Kind::device) {
        check_cuda(cudaMalloc(&pointer, bytes), fmt::format("cudaMalloc of {} bytes", bytes));
    } else {
        check_cuda(cudaMallocHost(&pointer, bytes), fmt::format("cudaMallocHost of {} bytes", bytes));
    }
    memory_.reset(pointer);
}

void CudaFree::operator()(void* pointer) const noexcept {
    if (kind == CudaMemory::device) cudaFree(pointer);
    else cudaFreeHost(pointer);
}

GpuProbe probe_gpu(int index) {
    int count = 0;
    if (const cudaError_t status = cudaGetDeviceCount(&count); status != cudaSuccess)
        return {std::nullopt, fmt::format("the CUDA runtime finds no usable GPU ({})", cudaGetErrorString(status))};
    if (index < 0 || index >= count)
        return {std::nullopt, fmt::format("there is no cuda:{} (this machine has {} CUDA device{})", index, count,
                                          count == 1 ? "" : "s")};
    cudaDeviceProp properties{};
    if (const cudaError_t status = cudaGetDeviceProperties(&properties, index); status != cudaSuccess)
        return {std::nullopt, fmt::format("cannot read the properties of cuda:{} ({})", index, cudaGetErrorString(status))};
    return {GpuInfo{index, properties.name, {properties.major, properties.minor}, properties.totalGlobalMem}, ""};
}

}  // namespace inferbench
