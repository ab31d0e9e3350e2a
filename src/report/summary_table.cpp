#include "report/summary_table.hpp"

#include <ctime>

#include <fmt/chrono.h>

#include "core/units.hpp"

namespace inferbench::report {
namespace {


template <typename T>
Cell optional_cell(const std::optional<T>& value, double scale = 1.0) {
    if (!value) return Null{};
    if (scale == 1.0) return static_cast<std::int64_t>(*value);
    return static_cast<double>(*value) * scale;
}

Cell device_time(const std::optional<TimingSummary>& summary, double TimingSummary::*statistic) {
    if (!summary) return Null{};
    return Duration{(*summary).*statistic};
}

std::string note(const analysis::BenchmarkSummary& s) {
    std::vector<std::string> notes;
    if (!s.benchmark.reason.empty()) notes.push_back(s.benchmark.reason);
    notes.insert(notes.end(), s.warnings.begin(), s.warnings.end());
    return join(notes, "; ");
}

}  // namespace

Table summary_table(const std::vector<analysis::BenchmarkSummary>& summaries) {
    Table table;
    table.name = "summary";
    table.columns = {{"model", "model"},           {"backend", "backend"},
                     {"device", "device"},         {"precision", "precision"},
                     {"batch_size", "batch"},      {"variant", "options"},
                     {"status", "status"},
                     {"iterations", "iters"},      {"mean_ms", "mean"},
                     {"p50_ms", "p50"},            {"p90_ms", "p90"},
                     {"p99_ms", "p99"},      {"cv_pct", "cv %", 1},
                     {"gpu_compute_p50_ms", "gpu p50"}, {"h2d_mean_ms", "h2d"},
                     {"d2h_mean_ms", "d2h"},
                     {"throughput_per_s", "inf/s", 1}, {"load_ms", "load ms", 0},
                     {"model_size_mb", "size MB", 1},  {"parameters_m", "params M", 1},
                     {"gflops_per_inference", "GFLOP/inf", 2}, {"note", "note"}};
    for (const auto& s : summaries) {
        const auto& b = s.benchmark;
        const bool measured = s.e2e.count > 0;
        const auto timing = [&](double ns) { return measured ? Cell{Duration{ns}} : Cell{Null{}}; };
        table.rows.push_back({b.model, b.backend, b.device, b.precision, b.batch_size, b.variant, b.status,
                              measured ? Cell{s.e2e.count} : Cell{Null{}}, timing(s.e2e.mean), timing(s.e2e.p50),
                              timing(s.e2e.p90), timing(s.e2e.p99), measured ? Cell{s.e2e.cv_pct} : Cell{Null{}},
                              device_time(s.compute, &TimingSummary::p50), device_time(s.h2d, &TimingSummary::mean),
                              device_time(s.d2h, &TimingSummary::mean),
                              measured ? Cell{s.throughput_per_s} : Cell{Null{}}, optional_cell(b.load_ns, 1e-6),
                              optional_cell(b.model_size_bytes, 1e-6), optional_cell(s.model.parameters, 1e-6),
                              optional_cell(s.model.flops_per_inference, 1e-9), note(s)});
    }
    return table;
}

Table runs_table(const std::vector<store::RunRecord>& runs) {
    Table table;
    table.name = "runs";
    table.columns = {{"run_id", "run"}, {"name", "name"}, {"status", "status"}, {"started_utc", "started (UTC)"},
                     {"host", "host"}, {"git_commit", "commit"}};
    for (const auto& r : runs) {
        const std::time_t started = static_cast<std::time_t>(r.started_unix_ms / 1000);
        table.rows.push_back(
            {r.run_id, r.name, r.status, fmt::format("{:%Y-%m-%d %H:%M:%S}", fmt::gmtime(started)), r.host, r.git_commit});
    }
    return table;
}

}  // namespace inferbench::report
