#include "backends/tensorrt/tensorrt_timing.hpp"

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

}  // namespace inferbench
