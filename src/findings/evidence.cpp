#include "findings/evidence.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>

#include "analysis/run_context.hpp"
#include "core/metrics/load_metrics.hpp"
#include "core/time_units.hpp"
#include "core/metrics/trtexec_metrics.hpp"

namespace inferbench::findings {

namespace {

std::optional<double> mean_of(std::span<const IterationRecord> iterations, std::int64_t IterationRecord::*field) {
    double sum = 0;
    std::int64_t count = 0;
    for (const auto& it : iterations) {
        if (it.*field == kNotMeasured) continue;
        sum += static_cast<double>(it.*field);
        ++count;
    }
    if (count == 0) return std::nullopt;
    return sum / static_cast<double>(count);
}

// A tool log's mean of one quantity (trtexec's "<quantity>_mean_ms"), in ns.
std::optional<double> mean_from_log_ns(std::span<const store::Metric> metrics, std::string_view quantity) {
    const std::string name = trtexec_metrics::statistic_name(quantity, trtexec_metrics::kMean);
    for (const auto& m : metrics)
        if (m.name == name) return ms_to_ns(m.value);
    return std::nullopt;
}

}  // namespace

bool BenchmarkEvidence::on_gpu() const {
    const auto device = parse_device(summary.benchmark.device);
    return (device && device->kind == DeviceKind::cuda) || summary.benchmark.device == "gpu";
}

StageTimes stage_times(std::span<const IterationRecord> iterations, std::span<const store::Metric> metrics) {
    StageTimes t;
    t.enqueue_ns = mean_of(iterations, &IterationRecord::enqueue_ns);
    t.h2d_ns = mean_of(iterations, &IterationRecord::h2d_ns);
    t.compute_ns = mean_of(iterations, &IterationRecord::compute_ns);
    t.d2h_ns = mean_of(iterations, &IterationRecord::d2h_ns);
    if (!t.enqueue_ns) t.enqueue_ns = mean_from_log_ns(metrics, trtexec_metrics::kEnqueue);
    if (!t.h2d_ns) t.h2d_ns = mean_from_log_ns(metrics, trtexec_metrics::kH2d);
    if (!t.compute_ns) t.compute_ns = mean_from_log_ns(metrics, trtexec_metrics::kGpuCompute);
    if (!t.d2h_ns) t.d2h_ns = mean_from_log_ns(metrics, trtexec_metrics::kD2h);
    return t;
}

CompileCounts compile_counts(std::span<const store::Metric> metrics) {
    CompileCounts counts;
    for (const auto& m : metrics) {
        if (m.name == load_metrics::kTorchCompileGraphs) counts.graphs = m.value;
        if (m.name == load_metrics::kTorchCompileGraphBreaks) counts.graph_breaks = m.value;
        if (m.name == load_metrics::kTorchCompileCudagraphSkips) counts.cudagraph_skips = m.value;
    }
    return counts;
}

std::optional<HostLoad> host_load(std::span<const CpuSample> cpu) {
    HostLoad load;
    for (const auto& s : cpu) {
        if (s.phase != SamplePhase::measure || !s.host_cpu_pct || !s.process_cpu_pct || s.process_cpu_pct_per_core.empty())
            continue;
        const auto cores = static_cast<double>(s.process_cpu_pct_per_core.size());
        load.cores = std::max(load.cores, s.process_cpu_pct_per_core.size());
        load.host_pct += *s.host_cpu_pct;
        load.worker_core_pct += *s.process_cpu_pct;
        // The two readings are taken a moment apart: the difference is never below nothing.
        load.others_pct += std::max(0.0, *s.host_cpu_pct - *s.process_cpu_pct / cores);
        ++load.samples;
    }
    if (load.samples == 0) return std::nullopt;
    const auto n = static_cast<double>(load.samples);
    load.host_pct /= n;
    load.worker_core_pct /= n;
    load.others_pct /= n;
    return load;
}

BenchmarkEvidence evidence_without_rows(analysis::BenchmarkSummary summary, std::span<const IterationRecord> iterations,
                                        std::span<const store::Metric> metrics, std::span<const CpuSample> cpu) {
    BenchmarkEvidence e;
    e.stages = stage_times(iterations, metrics);
    e.compile = compile_counts(metrics);
    e.host = host_load(cpu);
    e.summary = std::move(summary);
    return e;
}

void attach_rows(BenchmarkEvidence& e, std::vector<IterationRecord> iterations, std::span<const GpuSample> gpu,
                 std::vector<CpuSample> cpu) {
    e.gpu = analysis::benchmark_gpu_samples(gpu, e.summary.benchmark.device);
    e.cpu = std::move(cpu);
    e.iterations = std::move(iterations);
}

void release_rows(BenchmarkEvidence& e) {
    // Fresh vectors: `= {}` would assign an empty list and keep the capacity.
    e.iterations = std::vector<IterationRecord>();
    e.gpu = std::vector<GpuSample>();
    e.cpu = std::vector<CpuSample>();
    e.generation_steps = std::vector<analysis::StepTime>();
}

std::size_t iterations_held(std::span<const BenchmarkEvidence> evidence) {
    std::size_t held = 0;
    for (const auto& e : evidence) held += e.iterations.capacity();
    return held;
}

BenchmarkEvidence make_evidence(analysis::BenchmarkSummary summary, std::vector<IterationRecord> iterations,
                                std::span<const store::Metric> metrics, std::span<const GpuSample> gpu,
                                std::vector<CpuSample> cpu) {
    BenchmarkEvidence e = evidence_without_rows(std::move(summary), iterations, metrics, cpu);
    attach_rows(e, std::move(iterations), gpu, std::move(cpu));
    return e;
}

void add_layer_sets(const store::ResultsStore& results, std::span<BenchmarkEvidence> evidence,
                    const devices::Catalog& catalog) {
    std::vector<analysis::BenchmarkSummary> profiled;
    std::map<std::int64_t, std::vector<LayerTime>> layers;
    for (const auto& e : evidence) {
        auto stored = results.layer_times(e.id());
        if (stored.empty()) continue;
        profiled.push_back(e.summary);
        layers.emplace(e.id(), std::move(stored));
    }
    if (profiled.empty()) return;
    std::map<std::int64_t, analysis::LayerSet> sets;
    const auto placed = analysis::roofline_points(results, profiled, catalog);
    for (auto& set : analysis::roofline_layers(results, placed))
        sets.emplace(placed.points[set.point].benchmark.benchmark_id, std::move(set));
    for (auto& e : evidence) {
        const auto stored = layers.find(e.id());
        if (stored == layers.end()) continue;
        if (auto it = sets.find(e.id()); it != sets.end())
            e.layers = std::move(it->second);
        else
            e.layers = analysis::place_layers(stored->second, {}, 1.0, devices::DeviceRoofs{}, std::nullopt);
    }
}

bool out_of_memory_reason(std::string_view reason) {
    std::string lower(reason);
    for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return lower.find("out of memory") != std::string::npos || lower.find("out-of-memory") != std::string::npos ||
           reason.find("OOM") != std::string_view::npos;
}

void add_generation_evidence(const store::ResultsStore& results, std::span<BenchmarkEvidence> evidence,
                             std::span<const store::BenchmarkRecord> selected, const devices::Catalog& catalog) {
    std::vector<analysis::BenchmarkSummary> summaries;
    for (const auto& e : evidence) summaries.push_back(e.summary);
    auto bounds = analysis::generation_bounds(results, summaries, catalog);
    const auto alike = [](const store::BenchmarkRecord& a, const store::BenchmarkRecord& b) {
        return std::tie(a.model, a.backend, a.device, a.precision, a.variant, a.input_tokens, a.output_tokens) ==
               std::tie(b.model, b.backend, b.device, b.precision, b.variant, b.input_tokens, b.output_tokens);
    };
    for (std::size_t i = 0; i < evidence.size(); ++i) {
        const auto& b = evidence[i].summary.benchmark;
        if (!analysis::is_generative(b)) continue;
        evidence[i].generation_bounds = std::move(bounds[i]);
        for (const auto& other : selected)
            if (other.status == BenchmarkStatus::failed && alike(other, b) && out_of_memory_reason(other.reason))
                evidence[i].out_of_memory.push_back(other);
    }
}

std::optional<BenchmarkEvidence> load_benchmark_evidence(const store::ResultsStore& results,
                                                         const store::BenchmarkRecord& b,
                                                         std::span<const store::RunRecord> runs,
                                                         std::span<const store::BenchmarkRecord> selection,
                                                         const devices::Catalog& catalog) {
    if (b.status != BenchmarkStatus::ok) return std::nullopt;
    auto measured = analysis::read_measured(results, b);
    auto summary = analysis::summarize_stored(measured, runs);  // before the rows move into the evidence
    auto steps = analysis::step_times(measured.iterations, measured.generations, b.output_tokens);
    BenchmarkEvidence e = make_evidence(std::move(summary), std::move(measured.iterations), measured.metrics,
                                        measured.gpu_samples, std::move(measured.cpu_samples));
    e.generation_steps = std::move(steps);
    e.requests = std::move(measured.served_requests);
    // Each benchmark's layers and bounds are placed on their own (the roofs of its device), as in a set.
    add_layer_sets(results, std::span(&e, 1), catalog);
    add_generation_evidence(results, std::span(&e, 1), selection, catalog);
    return e;
}

std::vector<BenchmarkEvidence> load_evidence(const store::ResultsStore& results,
                                             std::span<const store::BenchmarkRecord> benchmarks,
                                             const devices::Catalog& catalog) {
    const auto runs = results.runs();
    std::vector<BenchmarkEvidence> out;
    for (const auto& b : benchmarks)
        if (auto e = load_benchmark_evidence(results, b, runs, benchmarks, catalog)) out.push_back(std::move(*e));
    return out;
}

}  // namespace inferbench::findings
