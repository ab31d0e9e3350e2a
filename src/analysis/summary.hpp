// Per-benchmark summaries, derived from the stored iterations (recomputable at any time).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/statistics.hpp"
#include "store/results_store.hpp"

namespace inferbench::analysis {

struct BenchmarkSummary {
    store::BenchmarkRecord benchmark;
    TimingSummary e2e;                      // end-to-end latency, ns
    std::optional<TimingSummary> compute;   // where the backend measured it (GPU time, CUDA events)
    std::optional<TimingSummary> h2d;       // host-to-device copies, where measured
    std::optional<TimingSummary> d2h;       // device-to-host copies, where measured
    double throughput_per_s = 0;            // inferences (samples) per second
    std::vector<std::string> warnings;
};

BenchmarkSummary summarize_benchmark(const store::BenchmarkRecord& benchmark,
                                     std::span<const IterationRecord> iterations);

// The benchmarks of one run (default: the latest), summarized in plan order.
std::vector<BenchmarkSummary> summarize_run(const store::ResultsStore& results, std::optional<std::int64_t> run_id);

}  // namespace inferbench::analysis
