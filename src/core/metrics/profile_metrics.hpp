// Names of the figures a backend's profiled run stores besides the per-layer times (benchmark_metrics rows):
// the runtime's own profiler's time per run beside the backend's CUDA events over the very same runs, so that
// the GPU compute time inferbench reports is checked against the framework's own account of it.
#pragma once

#include <string_view>

namespace inferbench::profile_metrics {

inline constexpr std::string_view kPrefix = "profile_";
// How many profiled runs the figures below cover (unit "count").
inline constexpr std::string_view kRuns = "profile_runs";
// The median time of one run by the runtime's own profiler (ONNX Runtime's "model_run" event; unit "ns").
inline constexpr std::string_view kRuntimeMedianNs = "profile_runtime_median_ns";
// The median of the backend's CUDA events around the same runs (unit "ns").
inline constexpr std::string_view kEventsMedianNs = "profile_events_median_ns";
// The profiler's total over the events' total for those runs (unit "ratio"; 1 = the same time).
inline constexpr std::string_view kRuntimeOverEvents = "profile_runtime_over_events";

}  // namespace inferbench::profile_metrics
