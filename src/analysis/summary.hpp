// Per-benchmark summaries, derived from the stored iterations (recomputable at any time).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/run_context.hpp"
#include "analysis/telemetry_summary.hpp"
#include "core/statistics.hpp"
#include "store/results_store.hpp"

namespace inferbench::analysis {

// The model's cost per inference (sample) at the benchmark's batch size (core/model_metrics.hpp).
struct ModelFigures {
    std::optional<double> parameters;
    std::optional<double> macs_per_inference;
    std::optional<double> flops_per_inference;
    std::optional<double> bytes_per_inference;
    // FLOPs per inference x inferences per second, where both are known.
    std::optional<double> achieved_flops_per_s(double throughput_per_s) const;
};

struct BenchmarkSummary {
    store::BenchmarkRecord benchmark;
    RunContext run;                         // set by summarize_run
    CellSettings settings;                  // as the cell stored them
    TimingSummary e2e;                      // end-to-end latency, ns
    std::optional<TimingSummary> compute;   // where the backend measured it (GPU time, CUDA events)
    std::optional<TimingSummary> h2d;       // host-to-device copies, where measured
    std::optional<TimingSummary> d2h;       // device-to-host copies, where measured
    double throughput_per_s = 0;            // inferences (samples) per second
    TelemetrySummary telemetry;             // empty where no samples were stored
    ModelFigures model;                     // from the stored model-cost metrics, where computed
    std::vector<std::string> warnings;
};

BenchmarkSummary summarize_benchmark(const store::BenchmarkRecord& benchmark,
                                     std::span<const IterationRecord> iterations);

// The benchmarks of one run (default: the latest), summarized in plan order.
std::vector<BenchmarkSummary> summarize_run(const store::ResultsStore& results, std::optional<std::int64_t> run_id);

}  // namespace inferbench::analysis
