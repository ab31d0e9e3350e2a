// Names of what a serving cell's worker stores about the server it measured, as benchmark_metrics rows.
#pragma once

#include <string_view>

namespace inferbench::server_metrics {

// The GPUs the server used (unit "count"), where the worker knows them (the plan says, or the server's command
// line names its devices); absent: unknown, and no figure is given per GPU (analysis/serving_sweep).
inline constexpr std::string_view kGpus = "server_gpus";

}  // namespace inferbench::server_metrics
