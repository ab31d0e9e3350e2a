#include "report/summary_table.hpp"

#include <algorithm>
#include <ctime>

#include <fmt/chrono.h>

#include "core/units.hpp"
#include "report/cost_figure.hpp"

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

Cell number_cell(const std::optional<double>& value, double scale = 1.0) {
    if (!value) return Null{};
    return *value * scale;
}

// The reason throttled most, and its share of the measured time.
std::optional<analysis::ThrottleShare> worst_throttle(const analysis::TelemetrySummary& t) {
    std::optional<analysis::ThrottleShare> worst;
    for (const auto& share : t.throttled)
        if (!worst || share.share > worst->share) worst = share;
    return worst;
}

std::string note(const analysis::BenchmarkSummary& s) {
    std::vector<std::string> notes;
    if (!s.benchmark.reason.empty()) notes.push_back(s.benchmark.reason);
    notes.insert(notes.end(), s.warnings.begin(), s.warnings.end());
    const auto throttle = worst_throttle(s.telemetry);
    const bool warned = std::any_of(s.warnings.begin(), s.warnings.end(), [](const auto& w) { return w.starts_with("GPU throttled"); });
    for (const auto& reason : clock_event::reasons())
        if (throttle && !warned && reason.name == throttle->reason) notes.push_back(fmt::format("throttled by {}", reason.label));
    if (s.telemetry.energy_source == "integrated power") notes.push_back("energy from integrated power (no energy counter)");
    return join(notes, "; ");
}

void add_telemetry_cells(std::vector<Cell>& row, const analysis::TelemetrySummary& t) {
    const auto throttle = worst_throttle(t);
    const bool reasons_read = t.gpu_samples > 0 && t.mean_sm_clock_mhz.has_value();
    const std::optional<double> throttled =
        throttle ? std::optional<double>(throttle->share) : (reasons_read ? std::optional<double>(0.0) : std::nullopt);
    for (const auto& value : {t.mean_power_w, t.joules_per_inference, t.inferences_per_joule, t.mean_sm_clock_mhz})
        row.push_back(number_cell(value));
    row.push_back(number_cell(throttled, 100.0));
    for (const auto& value : {t.max_temperature_c, t.peak_fb_used_mib, t.mean_process_cpu_pct, t.peak_rss_mib})
        row.push_back(number_cell(value));
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
                     {"gflops_per_inference", "GFLOP/inf", 2},
                     {"power_mean_w", "power W", 1}, {"joules_per_inference", "J/inf", 3},
                     {"inferences_per_joule", "inf/J", 1}, {"sm_clock_mean_mhz", "SM MHz", 0},
                     {"throttled_pct", "throttled %", 1}, {"temperature_max_c", "max °C", 0},
                     {"fb_peak_mib", "fb MiB", 0}, {"cpu_mean_pct", "cpu %", 1}, {"rss_peak_mib", "rss MiB", 0},
                     {"note", "note"}};
    for (auto& column : gflops_bound_columns()) table.columns.push_back(std::move(column));
    for (const auto& s : summaries) {
        const auto& b = s.benchmark;
        const bool measured = s.e2e.count > 0;
        const auto timing = [&](double ns) { return analysis::has_latency(s) ? Cell{Duration{ns}} : Cell{Null{}}; };
        std::vector<Cell> row = {b.model, b.backend, b.device, b.precision, b.batch_size, b.variant, b.status,
                              measured ? Cell{s.e2e.count} : Cell{Null{}}, timing(s.e2e.mean), timing(s.e2e.p50),
                              timing(s.e2e.p90), timing(s.e2e.p99), measured ? Cell{s.e2e.cv_pct} : Cell{Null{}},
                              device_time(s.compute, &TimingSummary::p50), device_time(s.h2d, &TimingSummary::mean),
                              device_time(s.d2h, &TimingSummary::mean),
                              measured || s.throughput_per_s > 0 ? Cell{s.throughput_per_s} : Cell{Null{}},
                              optional_cell(b.load_ns, 1e-6),
                              optional_cell(b.model_size_bytes, 1e-6), optional_cell(s.model.parameters, 1e-6),
                              gflops_cell(s.model)};
        add_telemetry_cells(row, s.telemetry);
        row.push_back(note(s));
        for (auto& cell : gflops_bound_cells(s.model)) row.push_back(std::move(cell));
        table.rows.push_back(std::move(row));
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
