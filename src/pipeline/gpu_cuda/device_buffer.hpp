// Device memory that grows on demand and is kept between calls (a batch's decoded images, rows, NMS masks), so a
// steady pipeline allocates nothing per batch.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "devices/probe_cuda/cuda_check.hpp"

namespace inferbench::pipeline_cuda {

using probe_cuda::check;

class GrowingBuffer {
public:
    GrowingBuffer() = default;
    GrowingBuffer(const GrowingBuffer&) = delete;
    GrowingBuffer& operator=(const GrowingBuffer&) = delete;
    ~GrowingBuffer() { cudaFree(data_); }

    // At least `bytes` of device memory; the contents are not kept when it grows.
    void* reserve(std::size_t bytes, const char* what) {
        if (bytes <= capacity_ && data_) return data_;
        cudaFree(data_);
        data_ = nullptr;
        capacity_ = 0;
        check(cudaMalloc(&data_, bytes > 0 ? bytes : 1), what);
        capacity_ = bytes;
        return data_;
    }
    void* data() const { return data_; }
    template <typename T>
    T* reserve_as(std::size_t count, const char* what) {
        return static_cast<T*>(reserve(count * sizeof(T), what));
    }

private:
    void* data_ = nullptr;
    std::size_t capacity_ = 0;
};

}  // namespace inferbench::pipeline_cuda
