// What a benchmark's load scenario (core/plan/scenario_settings.hpp) shows, from its stored queries and scenario
// figures (core/metrics/scenario_metrics.hpp), recomputable at any time: LoadGen's verdict with the early-stopping
// estimates (core/statistics/scenario_verdict.hpp), how long queries queued apart from their service, the rate they
// completed at, what the batcher batched and find_peak's steps.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analysis/iteration_statistics.hpp"
#include "core/statistics/scenario_verdict.hpp"
#include "core/statistics/statistics.hpp"
#include "store/results_store.hpp"

namespace inferbench::analysis {

struct PeakStepSummary {
    double qps = 0;
    double p99_ms = 0;
    std::int64_t queries = 0;
    bool passed = false;
};

struct ScenarioSummary {
    std::optional<ScenarioSettings> settings;  // nothing for benchmarks imported from another tool
    std::string label;                         // "server 1500 qps", "multi_stream 8/query x2 streams", ...
    ScenarioVerdict verdict;
    std::optional<TimingSummary> queue;    // scheduled arrival to the backend's start, where recorded
    std::optional<TimingSummary> service;  // the backend's start to completion (e2e - queue)
    std::optional<double> completed_qps;   // queries completed per second of the measured time
    std::optional<double> target_qps;      // the server's arrival rate (find_peak: the peak's)
    std::optional<double> peak_qps;        // find_peak's result, confirmed by a second run; 0: none
    bool peak_at_max = false;              // the peak is the highest rate max_iterations let it try: a lower bound
    std::optional<double> peak_unconfirmed_qps;  // the highest rate that passed its step but not its second run
    std::int64_t peak_unconfirmed = 0;           // how many rates did so
    std::optional<double> mean_batch;      // the batcher: queries per inference
    std::optional<std::int64_t> smallest_batch;  // the batcher's smallest instance (padding below it)
    std::vector<PeakStepSummary> peak_steps;
    // Why the verdict is INVALID, and what else a reader must know (the batcher padded), as note texts.
    std::vector<std::string> notes() const;
};

// The scenario settings a stored cell ran with; nothing for a benchmark another tool measured.
std::optional<ScenarioSettings> stored_scenario(const store::BenchmarkRecord& benchmark);

ScenarioSummary summarize_scenario(const store::BenchmarkRecord& benchmark, const IterationStatistics& iterations,
                                   std::span<const store::Metric> metrics, std::span<const store::Series> series);
// What summarize_scenario reads of the sorted latencies (the verdict's percentile and early-stopping ranks, the
// count over the bound), with nothing else: run on a recorder it asks the ranks the summary will read.
ScenarioVerdict scenario_verdict(const store::BenchmarkRecord& benchmark, const SortedValues& sorted_e2e,
                                 std::span<const store::Metric> metrics, std::int64_t fastest_service_ns = -1);

}  // namespace inferbench::analysis
