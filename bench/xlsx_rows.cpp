// How fast the latency workbook is written (streamed, deflated on a second thread): ROWS iterations (default 1,000,000)
// with all five columns (t_s, e2e, H2D, compute, D2H) through the report's own writer, then the time,
// rows per second, file size and peak RSS (before writing: the iterations alone).
//   build/release/bench/xlsx_rows [ROWS] [FOLDER]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "report/excel_report.hpp"
#include "peak_rss.hpp"

namespace {

// CPU seconds of this process: unlike wall time, not inflated by other load on a shared machine.
double cpu_seconds() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const auto seconds = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

using inferbench::bench::peak_rss_mib;

}  // namespace

int main(int argc, char** argv) {
    using namespace inferbench;
    const long rows = argc > 1 ? std::atol(argv[1]) : 1'000'000;
    const std::filesystem::path dir = argc > 2 ? argv[2] : std::filesystem::temp_directory_path();
    if (rows <= 0) {
        std::fprintf(stderr, "usage: xlsx_rows [ROWS > 0] [FOLDER]\n");
        return 2;
    }
    report::ReportGroup group;
    group.key = "bench";
    auto& b = group.benchmarks.emplace_back();
    b.label = "batch 8";
    b.iterations.reserve(static_cast<std::size_t>(rows));
    std::int64_t t = 1'000'000'000;
    for (long i = 0; i < rows; ++i) {
        // Realistic, non-repeating values: about 1 ms per iteration with jitter.
        const std::int64_t e2e = 1'000'000 + (i * 7919) % 50'000;
        b.iterations.push_back({t, e2e, kNotMeasured, 20'000 + i % 997, 900'000 + (i * 31) % 40'000, 15'000 + i % 499});
        t += e2e + 1'000;
    }
    b.origin_ns = b.iterations.front().start_ns;
    const double rss_before = peak_rss_mib();

    const auto file = dir / "inferbench-xlsx-rows-bench.xlsx";
    const double cpu_start = cpu_seconds();
    const auto start = std::chrono::steady_clock::now();
    report::write_latency_workbook(group, file);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double cpu = cpu_seconds() - cpu_start;
    const auto bytes = std::filesystem::file_size(file);
    std::filesystem::remove(file);

    std::printf("rows:               %ld (5 columns, one sheet)\n", rows);
    std::printf("time:               %.2f s wall, %.2f s CPU\n", seconds, cpu);
    std::printf("rows per second:    %.0f wall, %.0f CPU\n", static_cast<double>(rows) / seconds,
                static_cast<double>(rows) / cpu);
    std::printf("file size:          %.1f MB\n", static_cast<double>(bytes) / 1e6);
    std::printf("peak RSS:           %.1f MiB (%.1f MiB before writing: the iterations in memory)\n", peak_rss_mib(),
                rss_before);
    return 0;
}
