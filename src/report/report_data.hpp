// What a report draws from: the selected benchmarks with their summaries, iterations, telemetry samples
// and series, read from the store once and passed to every output (summary, workbooks, figures, HTML,
// roofline), one group at a time (a group's iterations may be millions); and the metrics that workbooks
// and figures show, defined once for both.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/summary.hpp"
#include "core/time_units.hpp"
#include "report/selection.hpp"
#include "store/results_store.hpp"

namespace inferbench::report {

// What a part of a report wrote, and what it left out and why (said on stdout).
struct ReportFiles {
    std::vector<std::filesystem::path> written;
    std::vector<std::string> skipped;  // "gpu-cpu-null-null-fp32.xlsx: no GPU samples stored"
    void add(ReportFiles other);
};

// One benchmark as every part of a report draws it: its summary, and its stored rows as read once.
struct ReportBenchmark {
    analysis::BenchmarkSummary summary;  // summary.benchmark is the stored row; telemetry and run context filled
    std::string label;                   // within its group: "batch 8"
    std::vector<IterationRecord> iterations;
    std::vector<GpuSample> gpu;
    std::vector<CpuSample> cpu;
    std::vector<store::Series> series;  // imported traces (trtexec's "Average on N runs")
    std::vector<store::Metric> metrics;  // what the backend or an imported tool reported (the findings' stage times)
    // A generative benchmark's steps of its whole generations (analysis::step_times; step 0 the prefill), in
    // measured order; empty for any other.
    std::vector<analysis::StepTime> steps;
    // Time zero of every time axis, CLOCK_MONOTONIC ns: the first measured iteration's start (else the
    // first measure-phase sample, else the first sample) with clock_from_zero, else 0 (absolute clock).
    std::int64_t origin_ns = 0;
    double seconds(std::int64_t t_ns) const { return ns_to_s(t_ns - origin_ns); }
    bool has_data() const { return !iterations.empty() || !gpu.empty() || !cpu.empty() || summary.e2e.count > 0; }
};

// One group of the selection (selection.hpp: benchmarks that differ only in batch size).
struct ReportGroup {
    std::string key, title;
    bool clock_from_zero = true;
    std::vector<ReportBenchmark> benchmarks;  // in the group's order
};

// The selected benchmarks, each read and summarized once (load_selection).
struct ReportSelection {
    std::string source;                  // where it came from: the database path
    std::vector<store::RunRecord> runs;  // the runs of the benchmarks, oldest first
    std::vector<ReportGroup> groups;     // group_benchmarks' groups; their rows released once seen
    std::vector<std::int64_t> order;     // benchmark ids as selected
    // The summaries in the order selected.
    std::vector<analysis::BenchmarkSummary> summaries() const;
};

// Reads each selected benchmark's rows once (iterations, GPU and CPU samples, series, metrics, telemetry
// sources) and summarizes them (analysis::summarize_stored), one group at a time: `each_group` sees a
// group with its rows, on the clock from zero, and the rows are released after it returns (a group may
// hold millions of iterations); the selection keeps the summaries and labels.
ReportSelection load_selection(const store::ResultsStore& results, const std::vector<store::BenchmarkRecord>& selected,
                               const std::function<void(ReportGroup&)>& each_group = {});

// Sets origin_ns from the benchmark's own data.
void set_time_origin(ReportBenchmark& benchmark, bool clock_from_zero);
// The group's time axes on the chosen clock: an offset of each benchmark's times, nothing read again.
void set_clock(ReportGroup& group, bool clock_from_zero);
// The axis label for times: "s since the first measured iteration" or "s (CLOCK_MONOTONIC)".
std::string time_axis_label(bool clock_from_zero);

// One value over time: x in seconds on the benchmark's axis.
struct Point {
    double t_s = 0;
    double value = 0;
};

struct TimeMetric {
    std::string_view key;                                            // file names: "e2e-latency"
    std::string_view sheet;                                          // workbook sheet: "e2e latency"
    std::string_view title;                                          // "end-to-end latency"
    std::string_view unit;                                           // "ms"
    std::vector<Point> (*points)(const ReportBenchmark& benchmark);  // in time order
};
// End-to-end latency, GPU power, SM clock, GPU utilisation, GPU temperature, process CPU.
const std::vector<TimeMetric>& time_metrics();

// A figure of one benchmark, one value per batch size.
struct BatchMetric {
    std::string_view key;     // file names: "mean-latency"
    std::string_view column;  // workbook column, with its unit: "mean_ms"
    std::string_view title;   // "mean latency"
    std::string_view unit;    // "ms"
    std::optional<double> (*value)(const analysis::BenchmarkSummary& summary);
};
// Mean, p50, p99 latency, throughput, mean power, J per inference, inferences per J, mean SM clock,
// peak GPU memory, mean process CPU, peak RSS.
const std::vector<BatchMetric>& batch_metrics();

// The GPU a benchmark ran on, for the per-GPU series: "cuda:N" -> N where sampled, else the lowest
// sampled index; nothing without GPU samples.
std::optional<int> primary_gpu(const ReportBenchmark& benchmark);

// The mean of the points within each bucket [k w, (k + 1) w), placed at k w; w <= 0 keeps the points.
std::vector<Point> resample(std::span<const Point> points, double bucket_s);

// Several series on one grid of buckets of width w: rows by time, one column per series, NaN where a
// series has no point in a bucket.
struct Grid {
    std::vector<double> t_s;
    std::vector<std::vector<double>> columns;  // [series][row]
};
Grid align_on_grid(const std::vector<std::vector<Point>>& series, double bucket_s);

}  // namespace inferbench::report
