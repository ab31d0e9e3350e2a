// The HTML report: one self-contained page (html_page.hpp) with the findings, the runs and their environments, a
// sortable overview of every benchmark, warnings and failure reasons, each benchmark on its device's
// roofline (roofline_view.hpp), then per (device, model,
// backend, precision) interactive charts of every time series (latency per iteration, GPU power,
// clocks, temperature, utilisation, memory, CPU and RSS, imported traces) and of the batch sweep.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "analysis/summary.hpp"
#include "core/samples.hpp"
#include "devices/roofline.hpp"
#include "findings/finding.hpp"
#include "report/html_page.hpp"
#include "store/results_store.hpp"

namespace inferbench::report {

// One benchmark with what the report draws of it.
struct ReportBenchmark {
    analysis::BenchmarkSummary summary;  // summary.benchmark is the stored row; telemetry filled
    std::vector<IterationRecord> iterations;
    std::vector<GpuSample> gpu_samples;
    std::vector<CpuSample> cpu_samples;
    std::vector<store::Series> series;  // imported traces (trtexec's "Average on N runs")
};

struct ReportData {
    std::string source;                       // where it came from, e.g. the database path
    std::vector<store::RunRecord> runs;       // the runs of the benchmarks, oldest first
    std::vector<ReportBenchmark> benchmarks;  // in the order selected
};

// Loads and summarizes (timing, model figures, telemetry; analysis::summarize_run) the selected
// benchmarks of `results`; with `keep_series`, also their iterations, samples and stored series.
ReportData load_report_data(const store::ResultsStore& results, const std::vector<store::BenchmarkRecord>& selected,
                            bool keep_series = true);

// The charts of one group of benchmarks (selection.hpp's grouping), under its title.
struct ChartGroup {
    std::string title;
    std::vector<Chart> charts;
};

// Loads one group at a time (a group may hold millions of iterations), keeps only its charts.
// `summaries`: those of load_report_data, matched by benchmark id.
std::vector<ChartGroup> load_chart_groups(const store::ResultsStore& results,
                                          const std::vector<store::BenchmarkRecord>& selected,
                                          const std::vector<analysis::BenchmarkSummary>& summaries);

// The roofline section's content: the placed benchmarks, or why there are none.
struct RooflineSection {
    devices::RooflineSet set;
    std::string unavailable;                // why no roofline could be computed (e.g. a broken devices file)
    std::vector<devices::LayerSet> layers = {};  // of the benchmarks with stored per-layer times
};

// The page, from already loaded data: the findings (report/findings_section.hpp), runs and
// environments, the overview table, warnings and failures, the roofline (where any benchmark could be
// placed or was skipped), then the chart groups.
std::string render_html_report(const ReportData& data, const std::vector<ChartGroup>& groups,
                               const RooflineSection& roofline = {}, const std::vector<findings::Finding>& found = {});

// Writes the report of the selected benchmarks to `file` (usually DIR/report.html), with their findings.
void write_html_report(const store::ResultsStore& results, const std::vector<store::BenchmarkRecord>& selected,
                       const std::filesystem::path& file, const std::vector<findings::Finding>& found = {});

}  // namespace inferbench::report
