// From the CUDA events recorded around one inference to the DeviceTimes the harness stores. SDK-free.
#pragma once

#include <cstdint>

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

}  // namespace inferbench
