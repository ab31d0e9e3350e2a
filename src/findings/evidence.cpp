#include "findings/evidence.hpp"

#include <algorithm>
#include <map>

#include "analysis/run_context.hpp"

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

std::optional<double> metric_ns(std::span<const store::Metric> metrics, std::string_view name) {
    for (const auto& m : metrics)
        if (m.name == name) return m.value * 1e6;
    return std::nullopt;
}

// The per-layer profile of each benchmark that has one: under its device's roofs where the roofline can
// place the benchmark (model costs and a throughput stored), else with shares alone.
std::map<std::int64_t, devices::LayerSet> layer_sets(const store::ResultsStore& results,
                                                     std::span<const store::BenchmarkRecord> benchmarks,
                                                     const devices::Catalog& catalog) {
    std::map<std::int64_t, devices::LayerSet> sets;
    std::vector<store::BenchmarkRecord> profiled;
    for (const auto& b : benchmarks)
        if (!results.layer_times(b.benchmark_id).empty()) profiled.push_back(b);
    if (profiled.empty()) return sets;
    const auto placed = devices::roofline_points(results, profiled, catalog);
    for (auto& set : devices::roofline_layers(results, placed))
        sets.emplace(placed.points[set.point].benchmark.benchmark_id, std::move(set));
    for (const auto& b : profiled) {
        if (sets.contains(b.benchmark_id)) continue;
        const auto layers = results.layer_times(b.benchmark_id);
        sets.emplace(b.benchmark_id, devices::place_layers(layers, {}, 1.0, devices::DeviceRoofs{}, std::nullopt));
    }
    return sets;
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
    if (!t.enqueue_ns) t.enqueue_ns = metric_ns(metrics, "enqueue_mean_ms");
    if (!t.h2d_ns) t.h2d_ns = metric_ns(metrics, "h2d_mean_ms");
    if (!t.compute_ns) t.compute_ns = metric_ns(metrics, "gpu_compute_mean_ms");
    if (!t.d2h_ns) t.d2h_ns = metric_ns(metrics, "d2h_mean_ms");
    return t;
}

std::vector<BenchmarkEvidence> load_evidence(const store::ResultsStore& results,
                                             std::span<const store::BenchmarkRecord> benchmarks,
                                             const devices::Catalog& catalog) {
    std::vector<store::BenchmarkRecord> ok;
    std::copy_if(benchmarks.begin(), benchmarks.end(), std::back_inserter(ok),
                 [](const auto& b) { return b.status == BenchmarkStatus::ok; });
    auto layers = layer_sets(results, ok, catalog);
    const auto runs = results.runs();
    std::vector<BenchmarkEvidence> out;
    for (const auto& b : ok) {
        store::MeasuredBenchmark measured{b,
                                          results.iterations(b.benchmark_id),
                                          results.metrics(b.benchmark_id),
                                          results.gpu_samples(b.benchmark_id),
                                          results.cpu_samples(b.benchmark_id),
                                          results.telemetry_sources(b.benchmark_id),
                                          {}};
        BenchmarkEvidence e;
        e.summary = analysis::summarize_measured(measured);
        const auto run = std::find_if(runs.begin(), runs.end(), [&](const auto& r) { return r.run_id == b.run_id; });
        if (run != runs.end()) e.summary.run = analysis::run_context(*run, b);
        e.stages = stage_times(measured.iterations, measured.metrics);
        e.gpu = analysis::benchmark_gpu_samples(measured.gpu_samples, b.device);
        e.cpu = std::move(measured.cpu_samples);
        e.iterations = std::move(measured.iterations);
        if (auto it = layers.find(b.benchmark_id); it != layers.end()) e.layers = std::move(it->second);
        out.push_back(std::move(e));
    }
    return out;
}

}  // namespace inferbench::findings
