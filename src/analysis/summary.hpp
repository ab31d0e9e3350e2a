// Per-benchmark summaries, derived from the stored iterations (recomputable at any time).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/conditions_summary.hpp"
#include "analysis/generation_metrics.hpp"
#include "analysis/intervals.hpp"
#include "analysis/iteration_source.hpp"
#include "analysis/iteration_statistics.hpp"
#include "analysis/pipeline_summary.hpp"
#include "analysis/run_context.hpp"
#include "analysis/scenario_summary.hpp"
#include "analysis/serving_metrics.hpp"
#include "analysis/telemetry_summary.hpp"
#include "core/statistics/statistics.hpp"
#include "store/results_store.hpp"

namespace inferbench::analysis {

// The model's cost per inference (sample) at the benchmark's batch size (core/metrics/model_metrics.hpp).
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

// A model inferbench quantized: its agreement with float32 on the calibration inputs and its weights' range
// with the reason for it (core/metrics/quantization_metrics.hpp), where stored.
struct QuantizationFigures {
    std::optional<double> output_cosine;
    std::optional<double> top1_agreement;
    std::optional<double> weight_max_level;     // 127, or 64 for reduced-range weights
    std::optional<double> weight_range_reason;  // quantization_metrics::WeightRangeReason
};

// A profiled run's check of the GPU compute time: the runtime's own profiler beside the backend's CUDA events
// over the same runs (core/metrics/profile_metrics.hpp), where stored.
struct ProfileCheck {
    std::optional<double> runs;
    std::optional<double> runtime_median_ns;
    std::optional<double> events_median_ns;
    std::optional<double> runtime_over_events;  // ratio of the totals
};

// The pre- and post-processing a runner reported inside its iterations (core/metrics/host_stage_metrics.hpp), where stored:
// means over the iterations that reported them, beside the end-to-end mean of the same iterations.
struct HostStageFigures {
    std::optional<double> iterations;
    std::optional<double> pre_mean_ns;
    std::optional<double> post_mean_ns;
    std::optional<double> e2e_mean_ns;
    // (pre + post) / e2e in percent, where e2e and at least one stage are known; nullopt otherwise.
    std::optional<double> share_pct() const;
};

// How the backend loaded the model (core/metrics/load_metrics.hpp), where stored.
struct LoadFigures {
    std::optional<double> compile_seconds;  // part of the load time
    std::optional<bool> compile_cache_hit;
    bool cuda_graph_fallback = false;  // asked for, not capturable: measured without a graph
    // "load includes a 41.2 s compile", "compiled file from the cache", "no CUDA graph: ..."; empty: nothing to say.
    std::vector<std::string> notes() const;
};

// Where a cell's inputs came from: the plan's files (the stored spec's `inputs`, core/metrics/harness_metrics), else
// seeded random tensors (the stored spec's seed).
struct InputFigures {
    std::string file;                    // empty: seeded random inputs
    std::optional<double> samples;       // the samples read from the files
    bool cycled = false;                 // one per measured iteration
    std::optional<std::uint64_t> seed;   // of random inputs; unset where the cell did not store it
    // "/data/x.npz (1 sample)", "/data/set (8 samples, cycled)", "random (seed 42)"; nothing where unknown
    // (an imported log's inputs).
    std::optional<std::string> described() const;
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
    ProfileCheck profile_check;             // where a profiled run compared its profiler with CUDA events
    HostStageFigures host_stages;           // where a runner reported pre- and post-processing
    LoadFigures load;                       // a compile counted in the load time, a CUDA graph not captured
    InputFigures inputs;                    // files the cell fed, where the plan gave them
    std::optional<ThrottleSummary> throttle;  // the iterations' throttle flags, under flag or discard
    std::optional<GenerationMetrics> generation;  // a generative benchmark's TTFT, TPOT, ... (analysis/generation_metrics)
    std::optional<ServingSummary> serving;        // a serving cell's requests: TTFT, TPOT, goodput, ... (analysis/serving_metrics)
    std::optional<PipelineSummary> pipeline;      // a pipeline cell's stages: images/s, shares, bounds (analysis/pipeline_summary)
    FigureIntervals ci;                     // 95% confidence intervals of the headline figures
    std::int64_t repeats = 1;               // benchmarks this summary stands for (analysis/repeats.hpp)
    std::vector<std::int64_t> repeat_ids;   // a combined cell's stored repeats, measured or not; else empty
    std::optional<double> cv_of_means_pct;  // of the repeats' mean latencies, with 2 or more repeats
    std::vector<std::string> warnings;
};

// Whether end-to-end latencies exist: from measured iterations, or a tool's own statistics imported
// without a query count (TensorRT 7 prints no walltime, so e2e.count stays 0). The throughput has its
// own test: throughput_per_s > 0.
inline bool has_latency(const BenchmarkSummary& s) { return s.e2e.count > 0 || s.e2e.mean > 0; }

// The stored benchmarks a summary row stands for, by the ids `explain` names them with: every repeat of a
// combined cell, else the benchmark's own (none before it is stored).
std::vector<std::int64_t> benchmark_ids(const BenchmarkSummary& s);

BenchmarkSummary summarize_benchmark(const store::BenchmarkRecord& benchmark, const IterationStatistics& iterations);
// The same of iterations in memory.
BenchmarkSummary summarize_benchmark(const store::BenchmarkRecord& benchmark,
                                     std::span<const IterationRecord> iterations);

// A benchmark from what was measured for it (layer times are not summarized), stored or not, under its
// measure conditions (throttle policy, L2 flush); `gpus`: what its run recorded of its GPUs (default
// clocks, idle baseline), without which clocks are not judged for throttling and energy net of idle is
// not known.
BenchmarkSummary summarize_measured(const store::MeasuredBenchmark& measured,
                                    const std::map<int, GpuFacts>& gpus = {});
// The same with the iterations read from `iterations` (measured.iterations unused): walked a few times, never
// all held, except a CUDA benchmark's under throttle_policy flag or discard (analysis/throttle_flags).
BenchmarkSummary summarize_measured(const store::MeasuredBenchmark& measured, const IterationSource& iterations,
                                    const std::map<int, GpuFacts>& gpus = {});

// What summarize_measured needs of a stored benchmark, read from `results` once: iterations, metrics,
// series, GPU and CPU samples, telemetry sources, layer times, a generative benchmark's generations, and a serving
// cell's requests (with their chunks) and workload.
// `with_iterations` false: all but the iterations (a summary walks them through the store instead).
store::MeasuredBenchmark read_measured(const store::ResultsStore& results, const store::BenchmarkRecord& benchmark,
                                       bool with_iterations = true);

// A stored benchmark: summarize_measured, with the run context of its run among `runs` (where listed).
BenchmarkSummary summarize_stored(const store::MeasuredBenchmark& measured, std::span<const store::RunRecord> runs);
// The same read from `results`, its iterations walked through the store: memory does not grow with their count.
BenchmarkSummary summarize_stored(const store::ResultsStore& results, const store::BenchmarkRecord& benchmark,
                                  std::span<const store::RunRecord> runs);

// The benchmarks of one run (default: default_run(), the latest with benchmarks), summarized in plan order.
std::vector<BenchmarkSummary> summarize_run(const store::ResultsStore& results, std::optional<std::int64_t> run_id);

}  // namespace inferbench::analysis
