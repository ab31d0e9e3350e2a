// What the rules read: one benchmark's summary and its stored data, loaded once through the analysis
// layer (summaries) and the store, so that rules are pure functions without SQL.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "analysis/roofline_placement.hpp"
#include "analysis/summary.hpp"
#include "core/serving.hpp"
#include "devices/catalog.hpp"
#include "store/results_store.hpp"

namespace inferbench::findings {

// Mean time of each stage of one inference, ns, where measured: from the iterations, else from a
// tool's own statistics (trtexec's enqueue_mean_ms, h2d_mean_ms, gpu_compute_mean_ms, d2h_mean_ms).
struct StageTimes {
    std::optional<double> enqueue_ns, h2d_ns, compute_ns, d2h_ns;
};

// What torch.compile did by its first call, where a runner reported it (torch-compile's torch_compile_* metrics).
struct CompileCounts {
    std::optional<double> graphs, graph_breaks, cudagraph_skips;
};

// What else ran on the host while the benchmark measured, from the CPU samples of the measured phase
// that carry both the host's utilisation and the worker's: the host's cores (the length of the per-core
// shares), and the mean share of all of them that other processes kept busy (the host's utilisation
// less the worker's share of the host), in percent of the host (100 = every core).
struct HostLoad {
    std::size_t cores = 0;
    double others_pct = 0;
    double host_pct = 0;         // the host's mean utilisation, all processes
    double worker_core_pct = 0;  // the worker's mean, 100 = one core
    std::size_t samples = 0;
};
std::optional<HostLoad> host_load(std::span<const CpuSample> cpu);

struct BenchmarkEvidence {
    analysis::BenchmarkSummary summary;
    CompileCounts compile;
    std::vector<IterationRecord> iterations;
    std::vector<GpuSample> gpu;  // the benchmark's GPU(s) (analysis::benchmark_gpu_samples), every phase
    std::vector<CpuSample> cpu;
    std::optional<HostLoad> host;  // host_load(cpu); none without host and worker readings
    StageTimes stages;
    std::optional<analysis::LayerSet> layers;  // the per-layer profile under the device's roofs, where stored
    // A generative benchmark's: every step of its whole generations (analysis/generation_metrics' step_times), its
    // bounds under its device's roofs (where the decoder's facts were stored), and the failed cells like it (same
    // model, backend, device, precision, options and lengths, another batch) whose reason names out of memory.
    std::vector<analysis::StepTime> generation_steps;
    std::optional<analysis::GenerationBounds> generation_bounds;
    std::vector<store::BenchmarkRecord> out_of_memory;
    // A serving cell's stored requests, warm-up ones included (core/serving.hpp), each with its chunks.
    std::vector<ServedRequest> requests;
    bool serving() const;  // a serving cell: the `openai` backend's, or one with stored requests

    std::int64_t id() const { return summary.benchmark.benchmark_id; }
    bool on_gpu() const;
};

StageTimes stage_times(std::span<const IterationRecord> iterations, std::span<const store::Metric> metrics);
CompileCounts compile_counts(std::span<const store::Metric> metrics);

// One benchmark's evidence from rows already read (the report reads each benchmark's rows once and
// passes them here); its layers are added by add_layer_sets.
BenchmarkEvidence make_evidence(analysis::BenchmarkSummary summary, std::vector<IterationRecord> iterations,
                                std::span<const store::Metric> metrics, std::span<const GpuSample> gpu,
                                std::vector<CpuSample> cpu);
// make_evidence in two steps, for a reader that judges a benchmark's rows one benchmark at a time: what the
// evidence keeps from the rows (stage means, host load, compile counts), then the rows the per-benchmark
// rules read (findings.hpp's benchmark_findings), which release_rows drops again.
BenchmarkEvidence evidence_without_rows(analysis::BenchmarkSummary summary, std::span<const IterationRecord> iterations,
                                        std::span<const store::Metric> metrics, std::span<const CpuSample> cpu);
void attach_rows(BenchmarkEvidence& evidence, std::vector<IterationRecord> iterations, std::span<const GpuSample> gpu,
                 std::vector<CpuSample> cpu);
// Frees the iterations, samples and generation steps: what is left (summary, stage means, host load, layers,
// bounds, requests) is what the rules across benchmarks read.
void release_rows(BenchmarkEvidence& evidence);
// The iterations the evidence holds (their vectors' capacity: what stays allocated, emptied or not).
std::size_t iterations_held(std::span<const BenchmarkEvidence> evidence);

// The per-layer profile of each benchmark that has one in the store: under its device's roofs where the
// roofline can place it (model costs and a throughput stored), else with shares alone.
void add_layer_sets(const store::ResultsStore& results, std::span<BenchmarkEvidence> evidence,
                    const devices::Catalog& catalog);

// The generative benchmarks' bounds (analysis/roofline_placement's generation_bounds) and, from `selected` (the
// benchmarks of the selection, failed ones included), the cells like each that ran out of memory.
void add_generation_evidence(const store::ResultsStore& results, std::span<BenchmarkEvidence> evidence,
                             std::span<const store::BenchmarkRecord> selected, const devices::Catalog& catalog);

// Whether a failed cell's reason says it ran out of memory ("out of memory", "OOM", CUDA's "out of memory").
bool out_of_memory_reason(std::string_view reason);

// The ok benchmarks among `benchmarks`, in their order, with everything the rules read.
std::vector<BenchmarkEvidence> load_evidence(const store::ResultsStore& results,
                                             std::span<const store::BenchmarkRecord> benchmarks,
                                             const devices::Catalog& catalog);

// One benchmark of `selection` with everything the rules read (its rows read once), as load_evidence loads each;
// none for a benchmark that is not ok. `runs`: the store's runs (analysis::summarize_stored's run context).
std::optional<BenchmarkEvidence> load_benchmark_evidence(const store::ResultsStore& results,
                                                         const store::BenchmarkRecord& benchmark,
                                                         std::span<const store::RunRecord> runs,
                                                         std::span<const store::BenchmarkRecord> selection,
                                                         const devices::Catalog& catalog);

}  // namespace inferbench::findings
