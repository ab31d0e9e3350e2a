// Names of what a serving cell's worker stores about the server it measured and the traffic it sent, as
// benchmark_metrics rows (all begin with kPrefix; none is a tool's own figure).
#pragma once

#include <string_view>

namespace inferbench::server_metrics {

inline constexpr std::string_view kPrefix = "server_";

// The GPUs the server used (unit "count"), where the worker knows them (the plan's gpus option, else 1 for a cell
// on a cuda device); absent: unknown, and no figure is given per GPU (analysis/serving_sweep).
inline constexpr std::string_view kGpus = "server_gpus";
// How long the cell's server_command took to answer its health path (unit "s"); absent: no server started.
inline constexpr std::string_view kStartSeconds = "server_start_seconds";
// Measured requests the traffic sent, and those still in flight when it ended that were cancelled ("requests").
inline constexpr std::string_view kRequestsSent = "server_requests_sent";
inline constexpr std::string_view kRequestsCancelled = "server_requests_cancelled";
// find_peak: the rate the search found and the cell was measured at ("requests/s").
inline constexpr std::string_view kPeakQps = "server_peak_qps";

}  // namespace inferbench::server_metrics
