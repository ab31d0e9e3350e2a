#include "backends/cuda_timing.hpp"

#include <cmath>

#include "core/time_units.hpp"

namespace inferbench {

std::int64_t span_ns(float from_ms, float to_ms) {
    // The difference is taken in double: two float stamps of a long run differ by less than their spacing.
    const double ns = ms_to_ns(static_cast<double>(to_ms) - static_cast<double>(from_ms));
    return ns <= 0.0 ? 0 : std::llround(ns);
}

DeviceTimes device_times_from_events(const EventStamps& stamps, bool transfers, std::int64_t enqueue_ns) {
    DeviceTimes times;
    times.enqueue_ns = enqueue_ns;
    times.compute_ns = span_ns(stamps.compute_begin_ms, stamps.compute_end_ms);
    if (transfers) {
        times.h2d_ns = span_ns(stamps.h2d_begin_ms, stamps.compute_begin_ms);
        times.d2h_ns = span_ns(stamps.compute_end_ms, stamps.d2h_end_ms);
    }
    return times;
}

IterationTimer::IterationTimer(const cuda::RuntimeTable& cuda, cuda::Stream stream, bool transfers)
    : cuda_(cuda),
      stream_(stream),
      transfers_(transfers),
      events_{cuda::EventHandle(cuda), cuda::EventHandle(cuda), cuda::EventHandle(cuda), cuda::EventHandle(cuda)} {}

void IterationTimer::record(std::size_t event) const { events_[event].record(stream_); }

DeviceTimes IterationTimer::finish(std::int64_t enqueue_ns) const {
    // The stream, not the last event: a wait on an event made without cudaEventBlockingSync spins whatever the
    // context's sync mode, so `sync: blocking` would burn a core all the same. One stream: once it is drained,
    // every event has completed.
    cuda::check(cuda_, cuda_.stream_synchronize(stream_), "cudaStreamSynchronize");
    const cuda::EventHandle& origin = events_[transfers_ ? kH2dBegin : kComputeBegin];
    EventStamps stamps;
    stamps.compute_begin_ms = transfers_ ? events_[kComputeBegin].ms_since(origin) : 0.0f;
    stamps.compute_end_ms = events_[kComputeEnd].ms_since(origin);
    stamps.d2h_end_ms = transfers_ ? events_[kD2hEnd].ms_since(origin) : 0.0f;
    return device_times_from_events(stamps, transfers_, enqueue_ns);
}

}  // namespace inferbench
