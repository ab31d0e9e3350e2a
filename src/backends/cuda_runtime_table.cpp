#include "backends/cuda_runtime_table.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace inferbench::cuda {

void check(const RuntimeTable& cuda, int status, const char* what) {
    if (status != 0)
        throw std::runtime_error(fmt::format("CUDA {} failed: {} (error {})", what, cuda.get_error_string(status), status));
}

EventHandle::EventHandle(const RuntimeTable& cuda) : cuda_(cuda) {
    check(cuda_, cuda_.event_create(&event_), "cudaEventCreate");
}
EventHandle::~EventHandle() { cuda_.event_destroy(event_); }
void EventHandle::record(Stream stream) const { check(cuda_, cuda_.event_record(event_, stream), "cudaEventRecord"); }
float EventHandle::ms_since(const EventHandle& from) const {
    float ms = 0;
    check(cuda_, cuda_.event_elapsed_time(&ms, from.event_, event_), "cudaEventElapsedTime");
    return ms;
}

}  // namespace inferbench::cuda
