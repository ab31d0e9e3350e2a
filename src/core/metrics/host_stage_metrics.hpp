// Names of the figures a backend stores when it reports the pre- and post-processing inside each iteration
// (benchmark_metrics rows): a user's runner that decodes, resizes or tokenizes before the model and decodes or
// filters after it says how long each took (docs/external-runner-protocol.md: pre_ns, post_ns), so that the
// share of the end-to-end time spent outside the model is shown and explained.
#pragma once

#include <string_view>

namespace inferbench::host_stage_metrics {

inline constexpr std::string_view kPrefix = "host_stage_";
// The stored iterations that reported a stage (unit "count"): the means below are over these.
inline constexpr std::string_view kIterations = "host_stage_iterations";
// Mean pre-processing and post-processing time per iteration (unit "ns"); each only where every one of those
// iterations reported it.
inline constexpr std::string_view kPreMeanNs = "host_stage_pre_mean_ns";
inline constexpr std::string_view kPostMeanNs = "host_stage_post_mean_ns";
// Mean end-to-end time over the same iterations (unit "ns"), which the stages are parts of.
inline constexpr std::string_view kE2eMeanNs = "host_stage_e2e_mean_ns";

}  // namespace inferbench::host_stage_metrics
