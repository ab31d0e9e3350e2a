#include "report/report_data.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "core/spec.hpp"
#include "core/time_units.hpp"
#include "core/units.hpp"

namespace inferbench::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::optional<double> finite(double value) {
    return std::isfinite(value) ? std::optional<double>(value) : std::nullopt;
}

std::optional<double> latency_ms(const analysis::BenchmarkSummary& s, double TimingSummary::*statistic) {
    if (!analysis::has_latency(s)) return std::nullopt;
    return finite(ns_to_ms(s.e2e.*statistic));
}

std::vector<Point> e2e_points(const ReportBenchmark& b) {
    std::vector<Point> points;
    points.reserve(b.iterations.size());
    for (const auto& it : b.iterations) points.push_back({b.seconds(it.start_ns), ns_to_ms(it.e2e_ns)});
    return points;
}

template <std::optional<double> GpuSample::*Field>
std::vector<Point> gpu_points(const ReportBenchmark& b) {
    std::vector<Point> points;
    const auto gpu = primary_gpu(b);
    for (const auto& s : b.gpu) {
        if (s.gpu_index == gpu && s.*Field) points.push_back({b.seconds(s.t_ns), *(s.*Field)});
    }
    return points;
}

std::vector<Point> cpu_points(const ReportBenchmark& b) {
    std::vector<Point> points;
    for (const auto& s : b.cpu) {
        if (s.process_cpu_pct) points.push_back({b.seconds(s.t_ns), *s.process_cpu_pct});
    }
    return points;
}

// The tiny nudge keeps a point on a bucket's edge in that bucket (0.3 / 0.1 is 2.9999999999999996).
std::int64_t bucket_of(double t_s, double bucket_s) {
    return static_cast<std::int64_t>(std::floor(t_s / bucket_s + 1e-9));
}

double bucket_start(std::int64_t bucket, double bucket_s) {
    return std::round(static_cast<double>(bucket) * bucket_s * 1e9) / 1e9;  // 0.3, not 0.30000000000000004
}

}  // namespace

void ReportFiles::add(ReportFiles other) {
    written.insert(written.end(), other.written.begin(), other.written.end());
    skipped.insert(skipped.end(), other.skipped.begin(), other.skipped.end());
}

void set_time_origin(ReportBenchmark& b, bool clock_from_zero) {
    b.origin_ns = 0;
    if (!clock_from_zero) return;
    if (!b.iterations.empty()) {
        b.origin_ns = b.iterations.front().start_ns;
        return;
    }
    std::optional<std::int64_t> first_measured, first;
    const auto see = [&](std::int64_t t, SamplePhase phase) {
        first = std::min(first.value_or(t), t);
        if (phase == SamplePhase::measure) first_measured = std::min(first_measured.value_or(t), t);
    };
    for (const auto& s : b.gpu) see(s.t_ns, s.phase);
    for (const auto& s : b.cpu) see(s.t_ns, s.phase);
    b.origin_ns = first_measured.value_or(first.value_or(0));
}

std::string time_axis_label(bool clock_from_zero) {
    return clock_from_zero ? "time since the first measured iteration (s)" : "time, CLOCK_MONOTONIC (s)";
}

void set_clock(ReportGroup& group, bool clock_from_zero) {
    group.clock_from_zero = clock_from_zero;
    for (auto& b : group.benchmarks) set_time_origin(b, clock_from_zero);
}

std::vector<analysis::BenchmarkSummary> ReportSelection::summaries() const {
    std::unordered_map<std::int64_t, const analysis::BenchmarkSummary*> by_id;
    for (const auto& group : groups)
        for (const auto& b : group.benchmarks) by_id.emplace(b.summary.benchmark.benchmark_id, &b.summary);
    std::vector<analysis::BenchmarkSummary> out;
    out.reserve(order.size());
    for (const auto id : order)
        if (const auto it = by_id.find(id); it != by_id.end()) out.push_back(*it->second);
    return out;
}

ReportSelection load_selection(const store::ResultsStore& results, const std::vector<store::BenchmarkRecord>& selected,
                               const std::function<void(ReportGroup&)>& each_group) {
    ReportSelection selection;
    selection.source = results.path().string();
    std::set<std::int64_t> run_ids;
    for (const auto& b : selected) {
        run_ids.insert(b.run_id);
        selection.order.push_back(b.benchmark_id);
    }
    for (auto& run : results.runs())
        if (run_ids.contains(run.run_id)) selection.runs.push_back(std::move(run));
    for (const auto& group : group_benchmarks(selected)) {
        ReportGroup& loaded = selection.groups.emplace_back();
        loaded.key = group.key;
        loaded.title = group.title;
        for (std::size_t i = 0; i < group.benchmarks.size(); ++i) {
            auto measured = analysis::read_measured(results, group.benchmarks[i]);
            ReportBenchmark& b = loaded.benchmarks.emplace_back();
            b.summary = analysis::summarize_stored(measured, selection.runs);
            b.label = group.labels[i];
            b.iterations = std::move(measured.iterations);
            b.gpu = std::move(measured.gpu_samples);
            b.cpu = std::move(measured.cpu_samples);
            b.series = std::move(measured.series);
            b.metrics = std::move(measured.metrics);
            if (analysis::is_generative(measured.record))
                b.steps = analysis::step_times(b.iterations, measured.generations, measured.record.output_tokens);
        }
        set_clock(loaded, true);
        if (each_group) each_group(loaded);
        // Fresh vectors free the rows: `rows = {}` assigns an empty list and keeps the capacity, which held
        // every group's rows until the report ended.
        for (auto& b : loaded.benchmarks) {
            b.iterations = std::vector<IterationRecord>();
            b.gpu = std::vector<GpuSample>();
            b.cpu = std::vector<CpuSample>();
            b.series = std::vector<store::Series>();
            b.metrics = std::vector<store::Metric>();
            b.steps = std::vector<analysis::StepTime>();
        }
    }
    return selection;
}

std::optional<int> primary_gpu(const ReportBenchmark& b) {
    if (b.gpu.empty()) return std::nullopt;
    std::set<int> sampled;
    for (const auto& s : b.gpu) sampled.insert(s.gpu_index);
    const std::string& device = b.summary.benchmark.device;
    if (const auto parsed = parse_device(device); parsed && parsed->kind == DeviceKind::cuda)
        if (sampled.contains(parsed->index)) return parsed->index;
    return *sampled.begin();
}

const std::vector<TimeMetric>& time_metrics() {
    static const std::vector<TimeMetric> metrics = {
        {"e2e-latency", "e2e latency", "end-to-end latency", "ms", &e2e_points},
        {"power", "power", "GPU power", "W", &gpu_points<&GpuSample::power_w>},
        {"sm-clock", "SM clock", "SM clock", "MHz", &gpu_points<&GpuSample::sm_clock_mhz>},
        {"gpu-util", "GPU util", "GPU utilisation", "%", &gpu_points<&GpuSample::gpu_util_pct>},
        {"temperature", "temperature", "GPU temperature", "C", &gpu_points<&GpuSample::temperature_c>},
        {"cpu", "CPU", "process CPU (100 = one core)", "%", &cpu_points},
    };
    return metrics;
}

const std::vector<BatchMetric>& batch_metrics() {
    using S = const analysis::BenchmarkSummary&;
    static const std::vector<BatchMetric> metrics = {
        {"mean-latency", "mean_ms", "mean latency", "ms", [](S s) { return latency_ms(s, &TimingSummary::mean); }},
        {"p50-latency", "p50_ms", "p50 latency", "ms", [](S s) { return latency_ms(s, &TimingSummary::p50); }},
        {"p99-latency", "p99_ms", "p99 latency", "ms", [](S s) { return latency_ms(s, &TimingSummary::p99); }},
        {"throughput", "throughput_per_s", "throughput", "inferences/s",
         [](S s) { return s.throughput_per_s > 0 ? finite(s.throughput_per_s) : std::nullopt; }},
        {"mean-power", "mean_power_W", "mean GPU power", "W", [](S s) { return s.telemetry.mean_power_w; }},
        {"joules-per-inference", "J_per_inference", "energy per inference", "J",
         [](S s) { return s.telemetry.joules_per_inference; }},
        {"joules-per-inference-net", "J_per_inference_net", "energy per inference net of idle power", "J",
         [](S s) { return s.telemetry.joules_per_inference_net; }},
        {"inferences-per-joule", "inferences_per_J", "inferences per joule", "1/J",
         [](S s) { return s.telemetry.inferences_per_joule; }},
        {"mean-sm-clock", "mean_sm_clock_MHz", "mean SM clock", "MHz",
         [](S s) { return s.telemetry.mean_sm_clock_mhz; }},
        {"peak-gpu-memory", "peak_fb_used_MiB", "peak GPU memory used", "MiB",
         [](S s) { return s.telemetry.peak_fb_used_mib; }},
        {"mean-cpu", "mean_process_cpu_pct", "mean process CPU", "%",
         [](S s) { return s.telemetry.mean_process_cpu_pct; }},
        {"peak-rss", "peak_rss_MiB", "peak resident memory", "MiB", [](S s) { return s.telemetry.peak_rss_mib; }},
        {"queue-p99", "queue_p99_ms", "p99 queue wait", "ms",
         [](S s) { return s.scenario.queue ? finite(ns_to_ms(s.scenario.queue->p99)) : std::nullopt; }},
        {"early-stop-estimate", "early_stop_ms", "early-stopping estimate", "ms",
         [](S s) {
             const auto& e = s.scenario.verdict.estimate;
             return e && e->enough ? finite(ns_to_ms(e->estimate_ns)) : std::nullopt;
         }},
    };
    return metrics;
}

std::vector<Point> resample(std::span<const Point> points, double bucket_s) {
    if (bucket_s <= 0) return {points.begin(), points.end()};
    const Grid grid = align_on_grid({std::vector<Point>(points.begin(), points.end())}, bucket_s);
    std::vector<Point> out;
    out.reserve(grid.t_s.size());
    for (std::size_t i = 0; i < grid.t_s.size(); ++i) out.push_back({grid.t_s[i], grid.columns[0][i]});
    return out;
}

Grid align_on_grid(const std::vector<std::vector<Point>>& series, double bucket_s) {
    struct Sum {
        double total = 0;
        std::int64_t count = 0;
    };
    std::map<std::int64_t, std::vector<Sum>> buckets;
    for (std::size_t s = 0; s < series.size(); ++s) {
        auto hint = buckets.end();
        for (const auto& p : series[s]) {
            if (!std::isfinite(p.t_s) || !std::isfinite(p.value)) continue;
            const auto k = bucket_of(p.t_s, bucket_s);
            // Points come in time order: most land in the bucket of the one before.
            if (hint == buckets.end() || hint->first != k) hint = buckets.try_emplace(k, series.size()).first;
            hint->second[s].total += p.value;
            ++hint->second[s].count;
        }
    }
    Grid grid;
    grid.columns.assign(series.size(), {});
    for (const auto& [k, sums] : buckets) {
        grid.t_s.push_back(bucket_start(k, bucket_s));
        for (std::size_t s = 0; s < series.size(); ++s)
            grid.columns[s].push_back(sums[s].count ? sums[s].total / static_cast<double>(sums[s].count) : kNaN);
    }
    return grid;
}

}  // namespace inferbench::report
