// What a full `inferbench report` costs in memory as the store grows and its largest group does not: stores of
// RUNS runs (each as a shard of a plan merged into one store would be), each run one batch sweep of BENCHMARKS
// benchmarks (batch 1, 2, 4, ...) of ITERATIONS iterations, with GPU and CPU samples at 10 Hz, written through
// ResultsStore::add_benchmark; then the report of every run (`--run all`: summary, Excel workbooks, gnuplot
// figures, HTML with the roofline). The largest group is one run's sweep (BENCHMARKS x ITERATIONS iterations)
// whatever RUNS is. Prints, per store, its size and the seconds and peak RSS of writing it and of the report.
//   build/release/bench/report_memory [ITERATIONS] [BENCHMARKS] [FOLDER] [RUNS...]
//   build/release/bench/report_memory --report DB OUT   (an existing store's report alone, in this process)
// Defaults: 100,000 iterations, 10 benchmarks per run, the temporary folder, and the runs 10 and 100 (10 M and
// 100 M iterations). Each store is written and reported in a child process of its own, so that each figure is
// that step's own peak RSS (wait4's ru_maxrss: the process, or a gnuplot it ran where larger); the parent holds
// nothing. FOLDER receives report-memory.db and report-memory/, removed after each store; the free space is
// checked first against about 40 bytes per iteration for the store and 30 for the workbooks. With
// REPORT_MEMORY_CLI=PATH the report is that inferbench executable's `report --run all` (another build's, for
// the figures before a change) instead of this build's report library; REPORT_MEMORY_WITHOUT=excel,plots,html
// leaves those outputs out (where the memory goes); REPORT_MEMORY_KEEP=1 keeps the store and the report.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/metrics/model_metrics.hpp"
#include "report/report_writer.hpp"
#include "store/results_store.hpp"
#include "synthetic_rows.hpp"

namespace {

using namespace inferbench;
using bench::cpu_samples_of;
using bench::gpu_samples_of;
using bench::iterations_of;

constexpr double kStoreBytesPerIteration = 40;     // SQLite rows and index, measured: 33-36
constexpr double kWorkbookBytesPerIteration = 30;  // the latency workbooks, measured: 24.5 MB per 1 M rows

struct Layout {
    long iterations = 100'000;
    int benchmarks = 10;  // per run: one batch sweep, the largest group
    int runs = 10;
    double total() const { return static_cast<double>(iterations) * benchmarks * runs; }
};

// One run as a shard of a larger plan: its own model, a batch sweep.
void add_run(store::ResultsStore& results, const Layout& layout, int shard) {
    store::RunRecord run;
    run.name = "report-memory";
    run.started_unix_ms = 1'700'000'000'000 + shard * 1'000'000LL;
    run.host = "bench";
    run.shard = store::Shard{shard + 1, layout.runs};
    run.environment_json =
        R"({"cpu_model":"bench CPU","gpus":{"source":"nvml","devices":[{"index":0,"name":"NVIDIA H200"}]}})";
    const auto run_id = results.begin_run(run);
    const std::vector<store::Metric> cost = {{std::string(model_metrics::kFlopsPerInference), 8.2e9, "FLOP"},
                                             {std::string(model_metrics::kBytesPerInference), 1.6e8, "B"}};
    const std::vector<TelemetrySource> sources = {{"nvml", "ok", ""}, {"procfs", "ok", ""}};
    std::int64_t t0 = 1'000'000'000;
    for (int i = 0; i < layout.benchmarks; ++i) {
        store::BenchmarkRecord b;
        b.run_id = run_id;
        b.ordinal = i;
        b.model = "model" + std::to_string(shard);
        b.backend = "onnxruntime";
        b.device = "cuda:0";
        b.precision = "fp16";
        b.batch_size = std::int64_t{1} << i;
        b.status = BenchmarkStatus::ok;
        b.started_unix_ms = b.ended_unix_ms = run.started_unix_ms;
        b.settings_json = "{}";
        const auto rows = iterations_of(layout.iterations, i, t0);
        const std::int64_t end = rows.back().start_ns + rows.back().e2e_ns;
        b.measured_wall_ns = end - t0;
        const auto gpu = gpu_samples_of(t0 - 500'000'000, end + 100'000'000, 300.0 + 10.0 * static_cast<double>(i));
        const auto cpu = cpu_samples_of(t0 - 500'000'000, end + 100'000'000);
        results.add_benchmark(b, {.iterations = rows,
                                  .metrics = cost,
                                  .gpu_samples = gpu,
                                  .cpu_samples = cpu,
                                  .telemetry_sources = sources});
        t0 = end + 1'000'000'000;
    }
    results.end_run(run_id, run.started_unix_ms + 1000, RunStatus::completed);
}

struct Step {
    bool ok = false;
    double wall_s = 0;
    double cpu_s = 0;  // the child's and its waited-for children's (gnuplot)
    double peak_rss_mib = 0;
};

// Runs `work` in a child process: its wall and CPU seconds and its peak RSS.
Step in_child(const std::function<void()>& work) {
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid < 0) return {};
    if (pid == 0) {
        try {
            work();
        } catch (const std::exception& e) {
            std::fprintf(stderr, "report_memory: %s\n", e.what());
            std::_Exit(1);
        }
        std::_Exit(0);
    }
    int status = 0;
    rusage usage{};
    if (wait4(pid, &status, 0, &usage) != pid) return {};
    const auto seconds = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    return {WIFEXITED(status) && WEXITSTATUS(status) == 0,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
            seconds(usage.ru_utime) + seconds(usage.ru_stime), static_cast<double>(usage.ru_maxrss) / 1024.0};
}

void remove_outputs(const std::filesystem::path& db, const std::filesystem::path& out) {
    std::error_code ignored;
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db.string() + suffix, ignored);
    std::filesystem::remove_all(out, ignored);
}

std::uintmax_t folder_bytes(const std::filesystem::path& dir) {
    std::uintmax_t bytes = 0;
    std::error_code error;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, error))
        if (entry.is_regular_file()) bytes += entry.file_size();
    return bytes;
}

// The report of every run of `db`, in this process.
void report_store(const std::filesystem::path& db, const std::filesystem::path& out) {
    const auto results = store::ResultsStore::open(db, store::ResultsStore::Access::read);
    report::ReportOptions options;
    options.filter.runs = "all";
    options.out_dir = out;
    const std::string without = std::getenv("REPORT_MEMORY_WITHOUT") ? std::getenv("REPORT_MEMORY_WITHOUT") : "";
    options.excel = without.find("excel") == std::string::npos;
    options.plots = without.find("plots") == std::string::npos;
    options.html = without.find("html") == std::string::npos;
    const auto report = report::write_report(results, options);
    std::printf("report: %zu files; most iterations held at once %zu\n", report.files.written.size(),
                report.most_iterations_held);
    std::fflush(stdout);
}

// Writes and reports one store; false where a step failed (said on stderr).
bool measure(const Layout& layout, const std::filesystem::path& dir) {
    const auto db = dir / "report-memory.db";
    const auto out = dir / "report-memory";
    remove_outputs(db, out);
    const double needed = layout.total() * (kStoreBytesPerIteration + kWorkbookBytesPerIteration);
    const auto space = std::filesystem::space(dir);
    if (static_cast<double>(space.available) < needed * 1.2) {
        std::fprintf(stderr, "report_memory: %s has %.1f GB free; %d runs need about %.1f GB: pass another FOLDER\n",
                     dir.c_str(), static_cast<double>(space.available) / 1e9, layout.runs, needed * 1.2 / 1e9);
        return false;
    }
    const Step written = in_child([&] {
        auto results = store::ResultsStore::open(db);
        for (int shard = 0; shard < layout.runs; ++shard) add_run(results, layout, shard);
    });
    if (!written.ok) {
        remove_outputs(db, out);
        return false;
    }
    const double db_gb = static_cast<double>(std::filesystem::file_size(db)) / 1e9;
    const char* cli = std::getenv("REPORT_MEMORY_CLI");
    const Step reported = in_child([&] {
        if (cli && *cli) {  // another build's `inferbench report`, for the figures before a change
            execl(cli, cli, "report", "--db", db.c_str(), "--out", out.c_str(), "--run", "all", "--quiet",
                  static_cast<char*>(nullptr));
            throw std::runtime_error(std::string("cannot run ") + cli);
        }
        report_store(db, out);
    });
    const double out_gb = static_cast<double>(folder_bytes(out)) / 1e9;
    std::printf(
        "%5.0f M iterations (%d runs x %d benchmarks x %ld): store %.2f GB written in %.1f s (%.1f CPU s, peak "
        "RSS %.0f MiB); report %s in %.1f s wall, %.1f CPU s with gnuplot, peak RSS %.0f MiB, %.2f GB of files\n",
        layout.total() / 1e6, layout.runs, layout.benchmarks, layout.iterations, db_gb, written.wall_s, written.cpu_s,
        written.peak_rss_mib, reported.ok ? "written" : "FAILED", reported.wall_s, reported.cpu_s,
        reported.peak_rss_mib, out_gb);
    std::fflush(stdout);
    if (!std::getenv("REPORT_MEMORY_KEEP")) remove_outputs(db, out);
    return reported.ok;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 4 && std::string(argv[1]) == "--report") {  // an existing store's report, in this process
        report_store(argv[2], argv[3]);
        return 0;
    }
    Layout layout;
    if (argc > 1) layout.iterations = std::atol(argv[1]);
    if (argc > 2) layout.benchmarks = std::atoi(argv[2]);
    const std::filesystem::path dir = argc > 3 ? argv[3] : std::filesystem::temp_directory_path();
    std::vector<int> runs;
    for (int i = 4; i < argc; ++i) runs.push_back(std::atoi(argv[i]));
    if (runs.empty()) runs = {10, 100};
    const bool valid = layout.iterations > 0 && layout.benchmarks > 0 && layout.benchmarks <= 30 &&
                       std::all_of(runs.begin(), runs.end(), [](int r) { return r > 0; });
    if (!valid) {
        std::fprintf(stderr, "usage: report_memory [ITERATIONS > 0] [BENCHMARKS 1..30] [FOLDER] [RUNS > 0 ...]\n");
        return 2;
    }
    bool ok = true;
    for (const int r : runs) {
        layout.runs = r;
        ok = measure(layout, dir) && ok;
    }
    return ok ? 0 : 1;
}
