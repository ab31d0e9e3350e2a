// Per-benchmark summaries, derived from the stored iterations (recomputable at any time).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/run_context.hpp"
#include "analysis/scenario_summary.hpp"
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
    std::optional<double> cost_unknown_nodes;         // > 0: the figures are lower bounds
    std::optional<double> cost_data_dependent_nodes;  // > 0: the figures are upper bounds
    // FLOPs per inference x inferences per second, where both are known.
    std::optional<double> achieved_flops_per_s(double throughput_per_s) const;
    // The figures are totals: no node left uncosted nor costed at data-dependent maxima.
    bool cost_complete() const;
    // Why the figures are not totals ("model cost not a total: 642 nodes ..."); nullopt when they are.
    std::optional<std::string> incomplete_cost_reason() const;
};

// A model inferbench quantized: its agreement with float32 on the calibration inputs
// (core/quantization_metrics.hpp), where stored.
struct QuantizationFigures {
    std::optional<double> output_cosine;
    std::optional<double> top1_agreement;
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
    std::int64_t samples = 0;               // samples the measured queries held (queries x samples per query)
    ScenarioSummary scenario;               // the load it ran under, and LoadGen's verdict
    TelemetrySummary telemetry;             // empty where no samples were stored
    ModelFigures model;                     // from the stored model-cost metrics, where computed
    QuantizationFigures quantization;       // int8 models inferbench made
    std::vector<std::string> warnings;
};

// Whether end-to-end latencies exist: from measured iterations, or a tool's own statistics imported
// without a query count (TensorRT 7 prints no walltime, so e2e.count stays 0). The throughput has its
// own test: throughput_per_s > 0.
inline bool has_latency(const BenchmarkSummary& s) { return s.e2e.count > 0 || s.e2e.mean > 0; }

BenchmarkSummary summarize_benchmark(const store::BenchmarkRecord& benchmark,
                                     std::span<const IterationRecord> iterations);

// A benchmark from what was measured for it (layer times are not summarized), stored or not.
BenchmarkSummary summarize_measured(const store::MeasuredBenchmark& measured);

// What summarize_measured needs of a stored benchmark, read from `results` once: iterations, metrics,
// series, GPU and CPU samples, telemetry sources, layer times.
store::MeasuredBenchmark read_measured(const store::ResultsStore& results, const store::BenchmarkRecord& benchmark);

// A stored benchmark: summarize_measured, with the run context of its run among `runs` (where listed).
BenchmarkSummary summarize_stored(const store::MeasuredBenchmark& measured, std::span<const store::RunRecord> runs);

// The benchmarks of one run (default: default_run(), the latest with benchmarks), summarized in plan order.
std::vector<BenchmarkSummary> summarize_run(const store::ResultsStore& results, std::optional<std::int64_t> run_id);

}  // namespace inferbench::analysis
