// Error checking and event timing for the CUDA probe module (host code, shared by the .cu and .cpp files).
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace inferbench::probe_cuda {

// A CUDA call that failed: the module's C functions turn it into their error text.
class CudaError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

inline void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess) throw CudaError(std::string(what) + ": " + cudaGetErrorString(status));
}

// Device memory owned for the duration of one probe.
class DeviceBuffer {
public:
    explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) { check(cudaMalloc(&data_, bytes), "cudaMalloc"); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    ~DeviceBuffer() { cudaFree(data_); }
    void* get() const { return data_; }
    std::size_t bytes() const { return bytes_; }
    template <typename T>
    T* as() const {
        return static_cast<T*>(data_);
    }

private:
    void* data_ = nullptr;
    std::size_t bytes_ = 0;
};

// Seconds between two CUDA events around `launch` on `stream` (device time, not host time).
class EventTimer {
public:
    EventTimer() {
        check(cudaEventCreate(&start_), "cudaEventCreate");
        check(cudaEventCreate(&stop_), "cudaEventCreate");
    }
    EventTimer(const EventTimer&) = delete;
    EventTimer& operator=(const EventTimer&) = delete;
    ~EventTimer() {
        cudaEventDestroy(start_);
        cudaEventDestroy(stop_);
    }

    template <typename Launch>
    double seconds(cudaStream_t stream, Launch&& launch) {
        check(cudaEventRecord(start_, stream), "cudaEventRecord");
        launch();
        check(cudaGetLastError(), "kernel launch");
        check(cudaEventRecord(stop_, stream), "cudaEventRecord");
        check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
        return static_cast<double>(ms) / 1e3;
    }

private:
    cudaEvent_t start_ = nullptr;
    cudaEvent_t stop_ = nullptr;
};

// A stream of our own (non-blocking), so nothing else on the default stream is timed with us.
class Stream {
public:
    Stream() { check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate"); }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    ~Stream() { cudaStreamDestroy(stream_); }
    cudaStream_t get() const { return stream_; }

private:
    cudaStream_t stream_ = nullptr;
};

}  // namespace inferbench::probe_cuda
