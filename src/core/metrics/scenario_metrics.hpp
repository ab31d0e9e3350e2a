// Names of the figures a load scenario stores with its benchmark besides its queries (benchmark_metrics
// rows, written by the worker's scenario run, read by the summary): what the schedule held, what the
// backend began, how the batcher batched, and find_peak's result. Its steps are benchmark_series rows.
#pragma once

#include <string_view>

namespace inferbench::scenario_metrics {

inline constexpr std::string_view kScheduledQueries = "scenario_scheduled_queries";  // unit "count"
inline constexpr std::string_view kIssuedQueries = "scenario_issued_queries";        // unit "count"
inline constexpr std::string_view kInferences = "scenario_inferences";               // infer() calls, "count"
inline constexpr std::string_view kPaddedSamples = "scenario_padded_samples";        // batcher padding, "count"
inline constexpr std::string_view kScheduleSpan = "scenario_schedule_span_ns";       // last arrival's offset, "ns"
inline constexpr std::string_view kLongestWait = "scenario_longest_wait_ns";         // "ns"
inline constexpr std::string_view kFellBehind = "scenario_fell_behind";              // 1 or 0, "flag"
inline constexpr std::string_view kTargetQps = "scenario_target_qps";                // the run's rate, "qps"
inline constexpr std::string_view kSmallestBatch = "scenario_smallest_batch";        // batcher, "count"
inline constexpr std::string_view kPeakQps = "scenario_peak_qps";  // find_peak, confirmed; 0: none, "qps"
// find_peak: the highest rate that passed its step but not its confirmation run, and how many did ("qps", "count").
inline constexpr std::string_view kPeakUnconfirmedQps = "scenario_peak_unconfirmed_qps";
inline constexpr std::string_view kPeakUnconfirmed = "scenario_peak_unconfirmed";
// find_peak: 1 where the peak is the highest rate max_iterations lets a step run (a lower bound), "flag".
inline constexpr std::string_view kPeakAtMax = "scenario_peak_at_max";
inline constexpr std::string_view kPrefix = "scenario_";

// find_peak's steps, in the order run (benchmark_series; one value per step).
inline constexpr std::string_view kPeakStepQps = "find_peak_qps";
inline constexpr std::string_view kPeakStepP99 = "find_peak_p99_ms";
inline constexpr std::string_view kPeakStepQueries = "find_peak_queries";
inline constexpr std::string_view kPeakStepPassed = "find_peak_passed";  // 1 or 0

}  // namespace inferbench::scenario_metrics
