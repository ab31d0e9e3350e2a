#include "report/report_charts.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "report/generation_section.hpp"

namespace inferbench::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct LatencyUnit {
    const char* name;
    double ns;
};

// Milliseconds unless every value is below one: then microseconds, so small latencies stay readable.
LatencyUnit latency_unit(double max_ns) { return max_ns < 1e6 ? LatencyUnit{"µs", 1e3} : LatencyUnit{"ms", 1e6}; }

bool has_values(const ChartSeries& series) {
    return std::any_of(series.y.begin(), series.y.end(), [](double v) { return std::isfinite(v); });
}

void add_if_drawn(std::vector<Chart>& charts, Chart chart) {
    std::erase_if(chart.series, [](const ChartSeries& s) { return !has_values(s); });
    if (!chart.series.empty()) charts.push_back(std::move(chart));
}

// One per-iteration time of every benchmark: end-to-end, or a device time where measured.
void iteration_chart(std::vector<Chart>& charts, const ReportGroup& group, std::int64_t IterationRecord::*field,
                     const char* title) {
    double max_ns = 0;
    for (const auto& b : group.benchmarks)
        for (const auto& it : b.iterations) max_ns = std::max(max_ns, static_cast<double>(it.*field));
    if (max_ns <= 0) return;
    const LatencyUnit unit = latency_unit(max_ns);
    Chart chart{.title = title, .x_label = "iteration", .y_label = fmt::format("latency ({})", unit.name)};
    for (const auto& b : group.benchmarks) {
        ChartSeries s{.label = b.label};
        s.x.reserve(b.iterations.size());
        s.y.reserve(b.iterations.size());
        for (std::size_t i = 0; i < b.iterations.size(); ++i) {
            const std::int64_t value = b.iterations[i].*field;
            s.x.push_back(static_cast<double>(i));
            s.y.push_back(value == kNotMeasured ? kNaN : static_cast<double>(value) / unit.ns);
        }
        downsample_min_max(s.x, s.y, kMaxChartPoints);
        chart.series.push_back(std::move(s));
    }
    add_if_drawn(charts, std::move(chart));
}

// Appends (t, value) where the sample has the value, keeping x strictly ascending as the chart needs.
// Samples without it add nothing: metrics are read at different rates (utilisation every 100 ms, power
// every round), and the line joins the samples that have one.
void append_point(ChartSeries& s, double t_s, const std::optional<double>& value) {
    if (!value || (!s.x.empty() && t_s <= s.x.back())) return;
    s.x.push_back(t_s);
    s.y.push_back(*value);
}

struct GpuMetric {
    const char* title;
    const char* y_label;
    std::optional<double> GpuSample::*field;
};

// One series per benchmark and sampled GPU ("batch 8 GPU1" where a benchmark sampled several).
void gpu_chart(std::vector<Chart>& charts, const ReportGroup& group, const GpuMetric& metric) {
    Chart chart{.title = metric.title, .x_label = time_axis_label(group.clock_from_zero), .y_label = metric.y_label};
    for (const auto& b : group.benchmarks) {
        std::set<int> gpus;
        for (const auto& sample : b.gpu) gpus.insert(sample.gpu_index);
        for (int gpu : gpus) {
            ChartSeries s{.label = gpus.size() > 1 ? fmt::format("{} GPU{}", b.label, gpu) : b.label};
            for (const auto& sample : b.gpu)
                if (sample.gpu_index == gpu) append_point(s, b.seconds(sample.t_ns), sample.*metric.field);
            downsample_min_max(s.x, s.y, kMaxChartPoints);
            chart.series.push_back(std::move(s));
        }
    }
    add_if_drawn(charts, std::move(chart));
}

struct CpuMetric {
    const char* title;
    const char* y_label;
    std::optional<double> CpuSample::*field;
};

void cpu_chart(std::vector<Chart>& charts, const ReportGroup& group, const CpuMetric& metric) {
    Chart chart{.title = metric.title, .x_label = time_axis_label(group.clock_from_zero), .y_label = metric.y_label};
    for (const auto& b : group.benchmarks) {
        ChartSeries s{.label = b.label};
        for (const auto& sample : b.cpu) append_point(s, b.seconds(sample.t_ns), sample.*metric.field);
        downsample_min_max(s.x, s.y, kMaxChartPoints);
        chart.series.push_back(std::move(s));
    }
    add_if_drawn(charts, std::move(chart));
}

// Stored numbered sequences (trtexec's "Average on N runs" latencies), one chart per name.
void trace_charts(std::vector<Chart>& charts, const ReportGroup& group) {
    std::set<std::string> names;
    for (const auto& b : group.benchmarks)
        for (const auto& series : b.series) names.insert(series.name);
    for (const auto& name : names) {
        Chart chart{.title = fmt::format("{} (stored trace)", name), .x_label = "index", .y_label = name};
        for (const auto& b : group.benchmarks) {
            for (const auto& series : b.series) {
                if (series.name != name) continue;
                ChartSeries s{.label = b.label};
                for (std::size_t k = 0; k < series.values.size(); ++k) {
                    s.x.push_back(static_cast<double>(k));
                    s.y.push_back(series.values[k]);
                }
                downsample_min_max(s.x, s.y, kMaxChartPoints);
                chart.series.push_back(std::move(s));
            }
        }
        add_if_drawn(charts, std::move(chart));
    }
}

const BatchMetric& batch_metric(std::string_view key) {
    for (const auto& metric : batch_metrics())
        if (metric.key == key) return metric;
    throw std::logic_error(fmt::format("no batch metric '{}'", key));
}

// A figure per batch size (report_data.hpp's definitions), from the group's measured benchmarks.
ChartSeries sweep_series(const ReportGroup& group, const BatchMetric& metric, std::string label, double scale = 1.0) {
    ChartSeries s{.label = std::move(label)};
    for (const auto& b : group.benchmarks) {
        const double batch = static_cast<double>(b.summary.benchmark.batch_size);
        if (!s.x.empty() && batch <= s.x.back()) continue;  // a batch size measured twice: the first
        const auto value = metric.value(b.summary);
        s.x.push_back(batch);
        s.y.push_back(value ? *value * scale : kNaN);
    }
    return s;
}

void sweep_charts(std::vector<Chart>& charts, const ReportGroup& group) {
    std::set<std::int64_t> batches;
    double max_ns = 0;
    for (const auto& b : group.benchmarks) {
        if (b.summary.e2e.count == 0) continue;
        batches.insert(b.summary.benchmark.batch_size);
        if (std::isfinite(b.summary.e2e.p99)) max_ns = std::max(max_ns, b.summary.e2e.p99);
    }
    if (batches.size() < 2) return;
    const bool log_x = static_cast<double>(*batches.rbegin()) / static_cast<double>(*batches.begin()) >= 4;
    const LatencyUnit unit = latency_unit(max_ns);
    const double from_ms = 1e6 / unit.ns;  // batch_metrics give latencies in ms
    Chart latency{.title = "Latency vs batch size",
                  .x_label = "batch size",
                  .y_label = fmt::format("latency ({})", unit.name),
                  .type = ChartType::points,
                  .x_log = log_x};
    latency.series.push_back(sweep_series(group, batch_metric("p50-latency"), "p50", from_ms));
    latency.series.push_back(sweep_series(group, batch_metric("p99-latency"), "p99", from_ms));
    add_if_drawn(charts, std::move(latency));
    Chart throughput{.title = "Throughput vs batch size",
                     .x_label = "batch size",
                     .y_label = "inferences/s",
                     .type = ChartType::points,
                     .x_log = log_x};
    throughput.series.push_back(sweep_series(group, batch_metric("throughput"), "throughput"));
    add_if_drawn(charts, std::move(throughput));
    Chart energy{.title = "Energy efficiency vs batch size",
                 .x_label = "batch size",
                 .y_label = "inferences/J",
                 .type = ChartType::points,
                 .x_log = log_x};
    energy.series.push_back(sweep_series(group, batch_metric("inferences-per-joule"), "inferences/J"));
    add_if_drawn(charts, std::move(energy));
}

}  // namespace

std::vector<Chart> group_charts(const ReportGroup& group) {
    std::vector<Chart> charts;
    iteration_chart(charts, group, &IterationRecord::e2e_ns, "End-to-end latency per iteration");
    iteration_chart(charts, group, &IterationRecord::compute_ns, "Device compute time per iteration");
    const GpuMetric gpu_metrics[] = {
        {"GPU power", "power (W)", &GpuSample::power_w},
        {"SM clock", "clock (MHz)", &GpuSample::sm_clock_mhz},
        {"GPU temperature", "temperature (°C)", &GpuSample::temperature_c},
        {"GPU utilisation", "utilisation (%)", &GpuSample::gpu_util_pct},
        {"GPU memory used (framebuffer)", "used (MiB)", &GpuSample::fb_used_mib},
    };
    for (const auto& metric : gpu_metrics) gpu_chart(charts, group, metric);
    const CpuMetric cpu_metrics[] = {
        {"CPU use of the benchmark process", "CPU (% of one core)", &CpuSample::process_cpu_pct},
        {"Resident memory of the benchmark process", "RSS (MiB)", &CpuSample::process_rss_mib},
    };
    for (const auto& metric : cpu_metrics) cpu_chart(charts, group, metric);
    trace_charts(charts, group);
    add_per_token_chart(charts, group);
    sweep_charts(charts, group);
    return charts;
}

}  // namespace inferbench::report
