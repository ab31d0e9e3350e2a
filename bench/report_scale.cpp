// How long a full `inferbench report` takes on a large database: BENCHMARKS benchmarks (default 10, a batch
// sweep of one model on cuda:0) of ITERATIONS iterations each (default 1,000,000: 10 M rows in all, about
// 1 ms each), with GPU and CPU samples at the default 10 Hz, stored through the store API; then the report with
// every output (summary, Excel workbooks, gnuplot figures, HTML with the roofline). Prints the seconds of
// ingest and report (wall and CPU) and the peak RSS after each.
//   build/release/bench/report_scale [BENCHMARKS] [ITERATIONS] [FOLDER] [phases]
// FOLDER (default: the temporary folder) receives report-scale.db and report-scale/, removed at the end.
// With `phases` last, the report's parts are then timed one by one (each group's rows read and summarized,
// workbooks, figures, the page's charts, the roofline and the page): where the time goes.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/metrics/model_metrics.hpp"
#include "report/html_report.hpp"
#include "report/report_charts.hpp"
#include "report/report_writer.hpp"
#include "store/results_store.hpp"
#include "synthetic_rows.hpp"

namespace {

using namespace inferbench;
using bench::cpu_samples_of;
using bench::gpu_samples_of;
using bench::iterations_of;

struct Usage {
    double cpu_s = 0;           // this process
    double children_cpu_s = 0;  // the gnuplot processes that ended
    double peak_rss_mib = 0;
};

Usage usage() {
    const auto seconds = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    rusage self{}, children{};
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    return {seconds(self.ru_utime) + seconds(self.ru_stime), seconds(children.ru_utime) + seconds(children.ru_stime),
            static_cast<double>(self.ru_maxrss) / 1024.0};  // Linux: KiB
}

// CPU seconds (this process and its ended children) between two usages.
double cpu_between(const Usage& from, const Usage& to) {
    return to.cpu_s - from.cpu_s + to.children_cpu_s - from.children_cpu_s;
}

// The report's parts one by one, each summed over the groups: CPU seconds of each.
void time_phases(const store::ResultsStore& results, const report::ReportOptions& options) {
    using report::ReportGroup;
    const auto selected = report::select_benchmarks(results, options.filter);
    double excel_s = 0, plots_s = 0, charts_s = 0;
    Usage mark = usage();
    const Usage start = mark;
    const auto lap = [&](double& total) {
        const Usage now = usage();
        total += cpu_between(mark, now);
        mark = now;
    };
    double unused = 0;
    const auto selection = report::load_selection(results, selected, [&](ReportGroup& group) {
        lap(unused);
        std::vector<report::ChartGroup> charts;
        charts.push_back({group.title, report::group_charts(group)});
        lap(charts_s);
        report::write_excel_workbooks(group, options.out_dir, options.excel_options);
        lap(excel_s);
        report::write_group_plots(group, options.out_dir, options.plot);
        lap(plots_s);
    });
    const double loaded_s = cpu_between(start, usage()) - excel_s - plots_s - charts_s;
    mark = usage();
    const auto summaries = selection.summaries();
    const auto roofline = report::roofline_section(results, summaries);
    const std::string page = report::render_html_report(selection, {}, roofline);
    double page_s = 0;
    lap(page_s);
    std::printf("phases (CPU s, gnuplot included): read and summarize %.2f, workbooks %.2f, figures %.2f, "
                "page charts %.2f, roofline and page %.2f\n",
                loaded_s, excel_s, plots_s, charts_s, page_s);
}

void ingest(const std::filesystem::path& db, int benchmarks, long iterations) {
    auto results = store::ResultsStore::open(db);
    store::RunRecord run;
    run.name = "report-scale";
    run.started_unix_ms = 1'700'000'000'000;
    run.host = "bench";
    run.environment_json =
        R"({"cpu_model":"bench CPU","gpus":{"source":"nvml","devices":[{"index":0,"name":"NVIDIA H200"}]}})";
    const auto run_id = results.begin_run(run);
    const std::vector<store::Metric> cost = {{std::string(model_metrics::kFlopsPerInference), 8.2e9, "FLOP"},
                                             {std::string(model_metrics::kBytesPerInference), 1.6e8, "B"}};
    const std::vector<TelemetrySource> sources = {{"nvml", "ok", ""}, {"procfs", "ok", ""}};
    std::int64_t t0 = 1'000'000'000;
    for (int i = 0; i < benchmarks; ++i) {
        const std::int64_t batch = std::int64_t{1} << i;
        store::BenchmarkRecord b;
        b.run_id = run_id;
        b.ordinal = i;
        b.model = "resnet50";
        b.backend = "onnxruntime";
        b.device = "cuda:0";
        b.precision = "fp16";
        b.batch_size = batch;
        b.status = BenchmarkStatus::ok;
        b.started_unix_ms = b.ended_unix_ms = run.started_unix_ms;
        b.settings_json = "{}";
        const auto rows = iterations_of(iterations, i, t0);
        const std::int64_t end = rows.back().start_ns + rows.back().e2e_ns;
        b.measured_wall_ns = end - t0;
        const auto gpu = gpu_samples_of(t0 - 500'000'000, end + 100'000'000, 300.0 + 10.0 * static_cast<double>(i));
        const auto cpu = cpu_samples_of(t0 - 500'000'000, end + 100'000'000);
        results.add_benchmark(b, {.iterations = rows, .metrics = cost, .gpu_samples = gpu, .cpu_samples = cpu,
                                  .telemetry_sources = sources});
        t0 = end + 1'000'000'000;
    }
    results.end_run(run_id, run.started_unix_ms + 1000, RunStatus::completed);
}

}  // namespace

int main(int argc, char** argv) {
    const int benchmarks = argc > 1 ? std::atoi(argv[1]) : 10;
    const long iterations = argc > 2 ? std::atol(argv[2]) : 1'000'000;
    const std::filesystem::path dir = argc > 3 ? argv[3] : std::filesystem::temp_directory_path();
    const bool phases = argc > 4 && std::string(argv[4]) == "phases";
    if (benchmarks <= 0 || benchmarks > 30 || iterations <= 0 || (argc > 4 && !phases)) {
        std::fprintf(stderr, "usage: report_scale [BENCHMARKS 1..30] [ITERATIONS > 0] [FOLDER] [phases]\n");
        return 2;
    }
    const auto db = dir / "report-scale.db";
    const auto out = dir / "report-scale";
    std::error_code ignored;
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db.string() + suffix, ignored);
    std::filesystem::remove_all(out, ignored);

    using Clock = std::chrono::steady_clock;
    const auto seconds_since = [](Clock::time_point start) {
        return std::chrono::duration<double>(Clock::now() - start).count();
    };
    const Usage before = usage();
    auto start = Clock::now();
    ingest(db, benchmarks, iterations);
    const double ingest_s = seconds_since(start);
    const Usage ingested = usage();

    const auto results = store::ResultsStore::open(db, store::ResultsStore::Access::read);
    report::ReportOptions options;
    options.filter.runs = "all";
    options.out_dir = out;
    start = Clock::now();
    const auto written = report::write_report(results, options);
    const double report_s = seconds_since(start);
    const Usage reported = usage();

    std::printf("rows:        %d benchmarks x %ld iterations = %.1f M, GPU and CPU samples at 10 Hz\n",
                benchmarks, iterations, static_cast<double>(benchmarks) * static_cast<double>(iterations) / 1e6);
    std::printf("ingest:      %.2f s wall, %.2f s CPU, peak RSS %.0f MiB\n", ingest_s, ingested.cpu_s - before.cpu_s,
                ingested.peak_rss_mib);
    std::printf("report:      %.2f s wall, %.2f s CPU (%.2f s with gnuplot), peak RSS %.0f MiB\n", report_s,
                reported.cpu_s - ingested.cpu_s, cpu_between(ingested, reported), reported.peak_rss_mib);
    std::printf("total:       %.2f s wall, %.2f s CPU with gnuplot\n", ingest_s + report_s, cpu_between(before, reported));
    std::printf("files:       %zu written, %zu skipped; database %.0f MB\n", written.files.written.size(),
                written.files.skipped.size(), static_cast<double>(std::filesystem::file_size(db)) / 1e6);
    if (phases) time_phases(results, options);
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db.string() + suffix, ignored);
    std::filesystem::remove_all(out, ignored);
    return 0;
}
