// ONNX Runtime's profile (SessionOptions::EnableProfiling, written by Session::EndProfiling) turned into
// per-node times. The file is a Chrome-trace JSON array of events {"cat", "name", "ts", "dur", "args"},
// times in microseconds: per run one "Session" event "model_run" spanning it, and per node and run one
// "Node" event named "<node>_kernel_time" whose args carry "op_name" and "provider". Other node events
// (older versions' "<node>_fence_before" / "_fence_after") are not kernel time and are skipped.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"
#include "core/spec.hpp"

namespace inferbench::ort_profile {

// Sums the kernel-time events of every run after the first `skip_runs` (warm-up runs, which allocate and
// start threads), per node, in the order the nodes first ran. `source` names the profile in messages.
// Throws std::runtime_error naming `source` for text that is not JSON, not an array of events, an event
// without a numeric "ts" / "dur", fewer than skip_runs + 1 runs, or no kernel-time event in the runs kept.
std::vector<LayerTime> node_times(std::string_view json, std::string_view source, int skip_runs = 0);

// The same for a profile file; throws std::runtime_error when it cannot be read.
std::vector<LayerTime> read_node_times(const std::filesystem::path& file, int skip_runs = 0);

// Each run's duration ("model_run": the whole Run call on the host, ns), in the order the runs started.
// Throws std::runtime_error naming `source` for text that is not a JSON array of trace events.
std::vector<std::int64_t> run_times(std::string_view json, std::string_view source);

// A profile file's text; throws std::runtime_error when it cannot be read.
std::string read_profile(const std::filesystem::path& file);

// ONNX Runtime's own time of each profiled run beside the CUDA events around the same runs, as the figures of
// core/metrics/profile_metrics (runs, both medians, the ratio of the totals); nothing where the counts differ or are
// zero, since then the runs cannot be paired.
std::vector<BackendMetric> compare_with_events(std::span<const std::int64_t> runtime_ns,
                                               std::span<const std::int64_t> event_ns);

}  // namespace inferbench::ort_profile
