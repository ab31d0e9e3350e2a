// The CUDA runtime table (backends/cuda_runtime_table) of the onnxruntime backend, opened with dlopen of
// libcudart.so.13: the CUDA 13 runtime that ONNX Runtime's CUDA execution provider itself loads, so both
// share one runtime, and the module still loads on a machine without CUDA; and the stream and buffers its
// GPU execution holds. A missing function or a CUDA error becomes an exception naming the call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "backends/cuda_runtime_table.hpp"

namespace inferbench::cuda {

inline constexpr const char* kRuntimeLibrary = "libcudart.so.13";

// The table, or nothing with `problem` saying why (libcudart.so.13 not found, a function missing).
const RuntimeTable* runtime(std::string& problem);
// The table; throws std::runtime_error with the reason when CUDA is not there.
const RuntimeTable& require_runtime();

enum class CopyKind { host_to_device = 1, device_to_host = 2, device_to_device = 3 };

// A non-blocking stream on device `device`, destroyed with the object.
class StreamHandle {
public:
    explicit StreamHandle(int device);
    ~StreamHandle();
    StreamHandle(const StreamHandle&) = delete;
    StreamHandle& operator=(const StreamHandle&) = delete;
    Stream get() const { return stream_; }
    void synchronize() const;

private:
    const RuntimeTable& cuda_;
    Stream stream_ = nullptr;
};

// Device memory (cudaMalloc) or pinned host memory (cudaMallocHost) of a fixed size.
class Buffer {
public:
    enum class Kind { device, pinned_host };
    Buffer(Kind kind, std::size_t bytes);
    ~Buffer();
    Buffer(Buffer&& other) noexcept;
    Buffer& operator=(Buffer&&) = delete;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    void* data() const { return data_; }
    std::size_t size() const { return bytes_; }

private:
    const RuntimeTable& cuda_;
    Kind kind_;
    std::size_t bytes_;
    void* data_ = nullptr;
};

void copy_async(void* to, const void* from, std::size_t bytes, CopyKind kind, Stream stream);

}  // namespace inferbench::cuda
