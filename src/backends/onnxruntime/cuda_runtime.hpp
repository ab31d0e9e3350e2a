// The few CUDA runtime functions the onnxruntime backend needs (a stream, timing events, device and
// pinned host buffers, copies), opened with dlopen of libcudart.so.13: the CUDA 13 runtime that ONNX
// Runtime's CUDA execution provider itself loads, so both share one runtime, and the module still loads
// on a machine without CUDA. A missing function or a CUDA error becomes an exception naming the call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace inferbench::cuda {

using Stream = void*;  // cudaStream_t
using Event = void*;   // cudaEvent_t

inline constexpr const char* kRuntimeLibrary = "libcudart.so.13";

struct RuntimeTable {
    int (*get_device_count)(int*);
    int (*set_device)(int);
    int (*stream_create_with_flags)(Stream*, unsigned);
    int (*stream_destroy)(Stream);
    int (*stream_synchronize)(Stream);
    int (*event_create)(Event*);
    int (*event_record)(Event, Stream);
    int (*event_elapsed_time)(float*, Event, Event);
    int (*event_destroy)(Event);
    int (*malloc)(void**, std::size_t);
    int (*free)(void*);
    int (*malloc_host)(void**, std::size_t);
    int (*free_host)(void*);
    int (*memcpy_async)(void*, const void*, std::size_t, int, Stream);
    const char* (*get_error_string)(int);
};

// The table, or nothing with `problem` saying why (libcudart.so.13 not found, a function missing).
const RuntimeTable* runtime(std::string& problem);
// The table; throws std::runtime_error with the reason when CUDA is not there.
const RuntimeTable& require_runtime();

// Throws std::runtime_error "CUDA <what> failed: <CUDA's message>" for a nonzero status.
void check(const RuntimeTable& cuda, int status, const char* what);

enum class CopyKind { host_to_device = 1, device_to_host = 2 };

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

// An event with timing (cudaEventCreate's default flags).
class EventHandle {
public:
    EventHandle();
    ~EventHandle();
    EventHandle(const EventHandle&) = delete;
    EventHandle& operator=(const EventHandle&) = delete;
    void record(Stream stream) const;
    // Nanoseconds from `from` to this event; both recorded and completed.
    std::int64_t ns_since(const EventHandle& from) const;

private:
    const RuntimeTable& cuda_;
    Event event_ = nullptr;
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
