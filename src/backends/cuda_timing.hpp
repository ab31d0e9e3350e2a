// CUDA event timing of one inference, written once for every backend that runs on a CUDA stream (torch,
// torch-aoti, onnxruntime, tensorrt): events before H2D, before compute, after compute and after D2H
// (trtexec's breakdown) recorded on the backend's stream around the copies and the compute (kernels or a
// CUDA graph's replay) it enqueues, then the stream drained and the spans read back as DeviceTimes.
// Over cuda_runtime_table, so it builds and is tested without CUDA.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "backends/cuda_runtime_table.hpp"
#include "core/clock.hpp"
#include "core/spec.hpp"

namespace inferbench {

// When each stage began or ended on the stream, in milliseconds after the first event (what
// cudaEventElapsedTime(first, event) returns). Without transfers only the compute pair is recorded.
struct EventStamps {
    float h2d_begin_ms = 0.0f;
    float compute_begin_ms = 0.0f;
    float compute_end_ms = 0.0f;
    float d2h_end_ms = 0.0f;
};

// Milliseconds to whole nanoseconds, rounded; a negative span (float rounding of two close stamps) is 0.
std::int64_t span_ns(float from_ms, float to_ms);

// `transfers` false (device_resident): H2D and D2H are not measured; `enqueue_ns` is the host time spent
// submitting the work.
DeviceTimes device_times_from_events(const EventStamps& stamps, bool transfers, std::int64_t enqueue_ns);

// The events of one stream's iterations, made on the current device (the stream's) and kept from one
// iteration to the next. `transfers` false (device_resident): only the compute is timed, and the copies
// given to time() are not run.
class IterationTimer {
public:
    IterationTimer(const cuda::RuntimeTable& cuda, cuda::Stream stream, bool transfers);

    // Enqueues h2d(), compute() and d2h() between the events, then waits for the stream. enqueue_ns is the
    // host's submission time (copies, launches, events); the rest is read from the events.
    template <typename H2d, typename Compute, typename D2h>
    DeviceTimes time(H2d&& h2d, Compute&& compute, D2h&& d2h) {
        const std::int64_t begin = monotonic_ns();
        if (transfers_) {
            record(kH2dBegin);
            h2d();
        }
        record(kComputeBegin);
        compute();
        record(kComputeEnd);
        if (transfers_) {
            d2h();
            record(kD2hEnd);
        }
        return finish(monotonic_ns() - begin);
    }

private:
    enum : std::size_t { kH2dBegin, kComputeBegin, kComputeEnd, kD2hEnd };
    void record(std::size_t event) const;
    DeviceTimes finish(std::int64_t enqueue_ns) const;

    const cuda::RuntimeTable& cuda_;
    cuda::Stream stream_;
    bool transfers_;
    std::array<cuda::EventHandle, 4> events_;
};

}  // namespace inferbench
