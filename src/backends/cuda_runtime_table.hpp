// The one wrapper of the CUDA runtime that the backends' GPU executions share: a table of the runtime
// functions they call and an owning event handle over it. Filled by dlopen of libcudart (the onnxruntime
// backend: onnxruntime/cuda_runtime), from the runtime a module links (cuda_linked_runtime.hpp: tensorrt,
// torch), or by a test with fakes. SDK-free: no CUDA header is needed to build or test what uses it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace inferbench::cuda {

using Stream = void*;  // cudaStream_t
using Event = void*;   // cudaEvent_t

// Each function returns CUDA's status (cudaError_t as an int, 0 for success).
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

// Throws std::runtime_error "CUDA <what> failed: <CUDA's message>" for a nonzero status.
void check(const RuntimeTable& cuda, int status, const char* what);

// An event with timing (cudaEventCreate's default flags), made on the current device.
class EventHandle {
public:
    explicit EventHandle(const RuntimeTable& cuda);
    ~EventHandle();
    EventHandle(const EventHandle&) = delete;
    EventHandle& operator=(const EventHandle&) = delete;
    void record(Stream stream) const;
    // Milliseconds from `from` to this event, as cudaEventElapsedTime gives them; both recorded and completed.
    float ms_since(const EventHandle& from) const;

private:
    const RuntimeTable& cuda_;
    Event event_ = nullptr;
};

}  // namespace inferbench::cuda
