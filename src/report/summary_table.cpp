#include "report/summary_table.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>

#include <fmt/chrono.h>

#include "core/metrics/quantization_metrics.hpp"
#include "core/time_units.hpp"
#include "core/units.hpp"
#include "report/cost_figure.hpp"
#include "report/scenario_section.hpp"

namespace inferbench::report {
namespace {

// `value` in the column's unit: divided by `per_unit` (1e6 for M) rather than multiplied by its
// reciprocal, so that CSV's full precision reads 0.48 where 480000000 * 1e-9 reads 0.48000000000000004.
template <typename T>
Cell optional_cell(const std::optional<T>& value, double per_unit = 1.0) {
    if (!value) return Null{};
    if (per_unit == 1.0) return static_cast<std::int64_t>(*value);
    return static_cast<double>(*value) / per_unit;
}

Cell optional_text(std::optional<std::string> text) { return text ? Cell{std::move(*text)} : Cell{Null{}}; }

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

// parallel: per_device: a figure measured beside other devices' benchmarks says so (BenchmarkRecord::concurrent).
std::string concurrency_note(const store::BenchmarkRecord& b) {
    if (b.concurrent.empty()) return {};
    std::vector<std::string> devices;
    for (const auto& other : b.concurrent)
        if (std::find(devices.begin(), devices.end(), other.device) == devices.end()) devices.push_back(other.device);
    return fmt::format("ran at the same time as {} benchmark{} on {}", b.concurrent.size(),
                       b.concurrent.size() == 1 ? "" : "s", join(devices, ", "));
}

std::string note(const analysis::BenchmarkSummary& s) {
    std::vector<std::string> notes;
    if (!s.benchmark.reason.empty()) notes.push_back(s.benchmark.reason);
    if (auto beside = concurrency_note(s.benchmark); !beside.empty()) notes.push_back(std::move(beside));
    for (auto& text : s.scenario.notes()) notes.push_back(std::move(text));
    notes.insert(notes.end(), s.warnings.begin(), s.warnings.end());
    const auto throttle = worst_throttle(s.telemetry);
    const bool warned = std::any_of(s.warnings.begin(), s.warnings.end(), [](const auto& w) { return w.starts_with("GPU throttled"); });
    for (const auto& reason : clock_event::reasons())
        if (throttle && !warned && reason.name == throttle->reason) notes.push_back(fmt::format("throttled by {}", reason.label));
    if (s.telemetry.energy_source == "integrated power") notes.push_back("energy from integrated power (no energy counter)");
    if (const auto& q = s.quantization; q.output_cosine) {
        std::string agreement = fmt::format("int8 vs fp32 on the calibration inputs: cosine {:.4f}", *q.output_cosine);
        if (q.top1_agreement) agreement += fmt::format(", top-1 {:.1f}%", *q.top1_agreement * 100);
        notes.push_back(std::move(agreement));
    }
    if (auto weights = quantization_metrics::weight_range_note(s.quantization.weight_max_level,
                                                               s.quantization.weight_range_reason);
        !weights.empty())
        notes.push_back(std::move(weights));
    if (const auto& p = s.profile_check; p.runs && p.runtime_median_ns && p.events_median_ns && p.runtime_over_events)
        notes.push_back(fmt::format(
            "profiled runs: the runtime's profiler {:.3f} ms per run vs CUDA events {:.3f} ms "
            "over the same {:.0f} runs ({:+.1f}%)",
            ns_to_ms(*p.runtime_median_ns), ns_to_ms(*p.events_median_ns), *p.runs, (*p.runtime_over_events - 1) * 100));
    if (const auto& st = s.host_stages; const auto share = st.share_pct()) {
        std::vector<std::string> parts;
        if (st.pre_mean_ns) parts.push_back(fmt::format("pre-processing {:.3f} ms", ns_to_ms(*st.pre_mean_ns)));
        if (st.post_mean_ns) parts.push_back(fmt::format("post-processing {:.3f} ms", ns_to_ms(*st.post_mean_ns)));
        notes.push_back(fmt::format("{} of {:.3f} ms end to end per iteration ({:.1f}%, as the runner reported)",
                                    join(parts, " and "), ns_to_ms(*st.e2e_mean_ns), *share));
    }
    const auto load_notes = s.load.notes();
    notes.insert(notes.end(), load_notes.begin(), load_notes.end());
    return join(notes, "; ");
}

void add_telemetry_cells(std::vector<Cell>& row, const analysis::BenchmarkSummary& s) {
    const auto& t = s.telemetry;
    const auto throttle = worst_throttle(t);
    const bool reasons_read = t.gpu_samples > 0 && t.mean_sm_clock_mhz.has_value();
    const std::optional<double> throttled =
        throttle ? std::optional<double>(throttle->share) : (reasons_read ? std::optional<double>(0.0) : std::nullopt);
    for (const auto& value : {t.mean_power_w, t.joules_per_inference, t.joules_per_inference_net, t.inferences_per_joule,
                              t.mean_sm_clock_mhz})
        row.push_back(number_cell(value));
    row.push_back(number_cell(throttled, 100.0));
    row.push_back(number_cell(s.throttle ? s.throttle->flagged_share() : std::nullopt, 100.0));
    const bool discards = s.throttle && s.throttle->policy == ThrottlePolicy::discard;
    row.push_back(discards ? Cell{s.throttle->discarded} : Cell{Null{}});
    for (const auto& value : {t.max_temperature_c, t.peak_fb_used_mib, t.mean_process_cpu_pct, t.peak_rss_mib})
        row.push_back(number_cell(value));
}

Cell duration_cell(const std::optional<double>& ns) { return ns ? Cell{Duration{*ns}} : Cell{Null{}}; }

// The load scenario: its name and settings, LoadGen's verdict and estimates, queueing apart from service,
// the server's rates and what the batcher batched (analysis/scenario_summary.hpp).
void add_scenario_cells(std::vector<Cell>& row, const analysis::ScenarioSummary& sc) {
    const auto text = [](const std::string& value) { return value.empty() ? Cell{Null{}} : Cell{value}; };
    const auto estimate = [](const auto& e) {
        return e && e->enough ? Cell{Duration{static_cast<double>(e->estimate_ns)}} : Cell{Null{}};
    };
    const auto& v = sc.verdict;
    const bool p90 = sc.settings && sc.settings->scenario == Scenario::single_stream;
    row.push_back(text(sc.label));
    row.push_back(text(verdict_word(v)));
    row.push_back(p90 ? estimate(v.estimate) : Cell{Null{}});
    row.push_back(p90 ? estimate(v.estimate_p99) : estimate(v.estimate));
    row.push_back(sc.queue ? Cell{Duration{sc.queue->p99}} : Cell{Null{}});
    row.push_back(number_cell(sc.target_qps));
    row.push_back(peak_qps_cell(sc));
    row.push_back(number_cell(sc.mean_batch));
    row.push_back(number_cell(sc.completed_qps));
    row.push_back(duration_cell(sc.queue ? std::optional<double>(sc.queue->mean) : std::nullopt));
    row.push_back(duration_cell(sc.service ? std::optional<double>(sc.service->mean) : std::nullopt));
    row.push_back(duration_cell(sc.service ? std::optional<double>(sc.service->p99) : std::nullopt));
}

Cell settings_cell(const std::optional<std::int64_t>& value, bool duration) {
    if (!value) return Null{};
    return duration ? Cell{Duration{static_cast<double>(*value)}} : Cell{*value};
}

std::string utc_text(std::int64_t unix_ms) {
    if (unix_ms <= 0) return "";
    return fmt::format("{:%Y-%m-%d %H:%M:%S}", fmt::gmtime(static_cast<std::time_t>(unix_ms / 1000)));
}

// Which run, machine and settings a row comes from: files carry them, terminals show them on request.
void add_context_cells(std::vector<Cell>& row, const analysis::BenchmarkSummary& s) {
    const auto text = [](const std::string& value) { return value.empty() ? Cell{Null{}} : Cell{value}; };
    row.push_back(s.benchmark.run_id > 0 ? Cell{s.benchmark.run_id} : Cell{Null{}});
    row.push_back(text(utc_text(s.run.started_unix_ms)));
    row.push_back(text(s.run.host));
    row.push_back(text(s.run.device_name));
    row.push_back(text(s.benchmark.backend_version));
    row.push_back(settings_cell(s.settings.warmup_ns, true));
    row.push_back(settings_cell(s.settings.warmup_iterations, false));
    row.push_back(settings_cell(s.settings.duration_ns, true));
    row.push_back(settings_cell(s.settings.min_iterations, false));
    row.push_back(settings_cell(s.settings.max_iterations, false));
    row.push_back(text(s.settings.backend_options));
    const auto& c = s.settings.conditions;
    row.push_back(c ? Cell{std::string(to_string(c->throttle_policy))} : Cell{Null{}});
    row.push_back(c ? Cell{c->throttle_threshold} : Cell{Null{}});
    row.push_back(c ? Cell{c->l2_flush} : Cell{Null{}});
    row.push_back(c ? Cell{std::string(to_string(c->sync))} : Cell{Null{}});
    row.push_back(number_cell(s.telemetry.idle_power_w));
}

// The statistics computed for every benchmark that the terminal does not show (core/statistics/statistics.hpp).
void add_spread_cells(std::vector<Cell>& row, const analysis::BenchmarkSummary& s) {
    const bool measured = s.e2e.count > 0;
    for (const double value : {s.e2e.min, s.e2e.max, s.e2e.stdev, s.e2e.p95, s.e2e.p999})
        row.push_back(measured && std::isfinite(value) ? Cell{Duration{value}} : Cell{Null{}});
}

// Both ends of each 95% interval (analysis/intervals.hpp), how they were computed, and what the
// stopping criterion saw.
void add_interval_cells(std::vector<Cell>& row, const analysis::BenchmarkSummary& s) {
    const auto& ci = s.ci;
    for (const auto* interval : {&ci.mean, &ci.p50, &ci.p90, &ci.p99}) {
        row.push_back(*interval ? Cell{Duration{(*interval)->low}} : Cell{Null{}});
        row.push_back(*interval ? Cell{Duration{(*interval)->high}} : Cell{Null{}});
    }
    for (const auto* interval : {&ci.throughput, &ci.joules_per_inference}) {
        row.push_back(*interval ? Cell{(*interval)->low} : Cell{Null{}});
        row.push_back(*interval ? Cell{(*interval)->high} : Cell{Null{}});
    }
    row.push_back(ci.method.empty() ? Cell{Null{}} : Cell{ci.method});
    row.push_back(s.benchmark.stop_reason.empty() ? Cell{Null{}} : Cell{s.benchmark.stop_reason});
}

// Whether the stopping criterion converged; a skipped benchmark measured nothing, so it neither
// converged nor not.
Cell convergence_cell(const store::BenchmarkRecord& b) {
    if (b.status == BenchmarkStatus::skipped) return Null{};
    return std::string(convergence_label(b.convergence));
}

// How precise the mean is: the half-width of its interval, how many repeats stand behind the row and
// how much their means spread.
void add_precision_cells(std::vector<Cell>& row, const analysis::BenchmarkSummary& s) {
    row.push_back(s.ci.mean ? Cell{Duration{s.ci.mean->half_width()}} : Cell{Null{}});
    row.push_back(s.repeats > 1 ? Cell{s.repeats} : Cell{Null{}});
    row.push_back(s.cv_of_means_pct ? Cell{*s.cv_of_means_pct} : Cell{Null{}});
}

// On a narrow terminal: a column with one value in every row is said once above the table; the
// columns that name what a row measured (identity) are never left out, nor the headline figures (shed
// 0: iterations, mean and its 95% interval, p50, p90, p99, inf/s and the note); of the others the
// highest `shed` goes first (report/table.hpp).
std::vector<Column> measured_columns() {
    return {identity_column("benchmark_ids", "id"), identity_column("repeat", "repeat"), identity_column("model", "model", Fit::wrap),
            identity_column("backend", "backend"), identity_column("device", "device"), identity_column("precision", "precision"),
            identity_column("batch_size", "batch"), identity_column("variant", "options", Fit::wrap),
            identity_column("inputs", "inputs", Fit::wrap), shed_column("status", "status", 2, 1),
            shed_column("convergence", "stop", 2, 6), {"iterations", "iters"}, {"mean_ms", "mean"},
            {"mean_ci95_half_ms", "±95%"}, shed_column("repeats", "reps", 2, 5),
            shed_column("cv_of_means_pct", "cv means %", 1, 5),
            {"p50_ms", "p50"}, {"p90_ms", "p90"},
            {"p99_ms", "p99"}, shed_column("cv_pct", "cv %", 1, 4), shed_column("gpu_compute_p50_ms", "gpu p50", 2, 6),
            shed_column("h2d_mean_ms", "h2d", 2, 7), shed_column("d2h_mean_ms", "d2h", 2, 7), {"throughput_per_s", "inf/s", 1},
            shed_column("load_ms", "load ms", 0, 10), shed_column("model_size_mb", "size MB", 1, 10),
            shed_column("parameters_m", "params M", 1, 10), shed_column("gflops_per_inference", "GFLOP/inf", 2, 7),
            shed_column("power_mean_w", "power W", 1, 8), shed_column("joules_per_inference", "J/inf", 3, 8),
            shed_column("joules_per_inference_net", "J/inf net", 3, 8), shed_column("inferences_per_joule", "inf/J", 1, 9),
            shed_column("sm_clock_mean_mhz", "SM MHz", 0, 9), shed_column("throttled_pct", "throttled %", 1, 8),
            shed_column("throttle_flagged_pct", "flagged %", 1, 8), shed_column("throttle_discarded", "discarded", 2, 8),
            shed_column("temperature_max_c", "max °C", 0, 9),
            shed_column("fb_peak_mib", "fb MiB", 0, 9), shed_column("cpu_mean_pct", "cpu %", 1, 9),
            shed_column("rss_peak_mib", "rss MiB", 0, 9)};
}

// Shown where a row has them (columns without a value are left out): the scenario first, as it changes
// what every latency above means.
std::vector<Column> scenario_columns() {
    // single_stream's early-stopping p90 is the scenario's headline figure; LoadGen's verdict, said once
    // above the table where every row has the same, goes last of the others (an INVALID's note says so too).
    return {{.key = "scenario", .title = "scenario", .fit = Fit::wrap, .identity = true},
            shed_column("result", "result", 2, 1),
            {"early_stop_p90_ms", "es p90"},
            shed_column("early_stop_p99_ms", "es p99", 2, 4),
            shed_column("queue_p99_ms", "queue p99", 2, 5),
            shed_column("target_qps", "target qps", 1, 4),
            shed_column("peak_qps", "peak qps", 1, 3),
            shed_column("mean_batch", "mean batch", 2, 5),
            file_column("completed_qps", "completed qps", 1),
            file_column("queue_mean_ms", "queue mean", 2),
            file_column("service_mean_ms", "service mean", 2),
            file_column("service_p99_ms", "service p99", 2),
            {"note", "note", 2, Fit::footnote}};
}

std::vector<Column> context_columns() {
    return {file_column("run_id", "run"), file_column("run_started_utc", "run started (UTC)"), file_column("host", "host"),
            file_column("device_name", "device name"), file_column("backend_version", "backend version"),
            file_column("warmup_ms", "warm-up"), file_column("warmup_iterations", "warm-up iters"), file_column("duration_ms", "duration"),
            file_column("min_iterations", "min iters"), file_column("max_iterations", "max iters"),
            file_column("backend_options", "backend options"), file_column("throttle_policy", "throttle policy"),
            file_column("throttle_threshold", "throttle threshold"), file_column("l2_flush", "L2 flush"), file_column("sync", "sync"),
            file_column("idle_power_w", "idle W"), file_column("min_ms", "min"), file_column("max_ms", "max"),
            file_column("stdev_ms", "stdev"), file_column("p95_ms", "p95"), file_column("p999_ms", "p99.9"),
            file_column("mean_ci95_low_ms", "mean 95% low"), file_column("mean_ci95_high_ms", "mean 95% high"),
            file_column("p50_ci95_low_ms", "p50 95% low"), file_column("p50_ci95_high_ms", "p50 95% high"),
            file_column("p90_ci95_low_ms", "p90 95% low"), file_column("p90_ci95_high_ms", "p90 95% high"),
            file_column("p99_ci95_low_ms", "p99 95% low"), file_column("p99_ci95_high_ms", "p99 95% high"),
            file_column("throughput_ci95_low_per_s", "inf/s 95% low"), file_column("throughput_ci95_high_per_s", "inf/s 95% high"),
            file_column("joules_per_inference_ci95_low", "J/inf 95% low"),
            file_column("joules_per_inference_ci95_high", "J/inf 95% high"), file_column("ci_method", "intervals"),
            file_column("stop_reason", "stopping")};
}

std::vector<Column> summary_columns() {
    std::vector<Column> columns = measured_columns();
    for (auto& column : scenario_columns()) columns.push_back(std::move(column));
    for (auto& column : gflops_bound_columns()) columns.push_back(std::move(column));
    for (auto& column : context_columns()) columns.push_back(std::move(column));
    return columns;
}

// Energy per inference in one unit for the table: mJ where every value is below 1 J.
void choose_energy_unit(Table& table, const std::vector<analysis::BenchmarkSummary>& summaries) {
    double highest = 0;
    for (const auto& s : summaries) highest = std::max(highest, s.telemetry.joules_per_inference.value_or(0));
    if (highest >= 1) return;
    for (auto& column : table.columns) {
        if (column.key != "joules_per_inference" && column.key != "joules_per_inference_net") continue;
        column.title = column.key == "joules_per_inference" ? "mJ/inf" : "mJ/inf net";
        column.shown_scale = 1000;
        column.decimals = 1;
    }
}

}  // namespace

Cell benchmark_ids_cell(const analysis::BenchmarkSummary& summary) {
    std::vector<std::string> ids;
    for (const auto id : analysis::benchmark_ids(summary)) ids.push_back(std::to_string(id));
    return ids.empty() ? Cell{Null{}} : Cell{join(ids, ",")};
}

Table summary_table(const std::vector<analysis::BenchmarkSummary>& summaries, SummaryRows rows) {
    Table table;
    table.name = "summary";
    table.columns = summary_columns();
    choose_energy_unit(table, summaries);
    for (const auto& s : summaries) {
        const auto& b = s.benchmark;
        const bool measured = s.e2e.count > 0;
        const auto timing = [&](double ns) { return analysis::has_latency(s) ? Cell{Duration{ns}} : Cell{Null{}}; };
        const Cell repeat = rows == SummaryRows::each_repeat ? Cell{b.repeat + 1} : Cell{Null{}};
        std::vector<Cell> row = {benchmark_ids_cell(s), repeat, b.model, b.backend, b.device, b.precision, b.batch_size, b.variant, optional_text(s.inputs.described()),
                                 std::string(to_string(b.status)),
                              convergence_cell(b), measured ? Cell{s.e2e.count} : Cell{Null{}}, timing(s.e2e.mean)};
        add_precision_cells(row, s);
        const std::vector<Cell> rest = {timing(s.e2e.p50),
                              timing(s.e2e.p90), timing(s.e2e.p99), measured ? Cell{s.e2e.cv_pct} : Cell{Null{}},
                              device_time(s.compute, &TimingSummary::p50), device_time(s.h2d, &TimingSummary::mean),
                              device_time(s.d2h, &TimingSummary::mean),
                              measured || s.throughput_per_s > 0 ? Cell{s.throughput_per_s} : Cell{Null{}},
                              optional_cell(b.load_ns, 1e6),
                              optional_cell(b.model_size_bytes, 1e6), optional_cell(s.model.parameters, 1e6),
                              gflops_cell(s.model)};
        row.insert(row.end(), rest.begin(), rest.end());
        add_telemetry_cells(row, s);
        add_scenario_cells(row, s.scenario);
        row.push_back(note(s));
        for (auto& cell : gflops_bound_cells(s.model)) row.push_back(std::move(cell));
        add_context_cells(row, s);
        add_spread_cells(row, s);
        add_interval_cells(row, s);
        table.rows.push_back(std::move(row));
    }
    return table;
}

Table runs_table(const std::vector<store::RunRecord>& runs) {
    Table table;
    table.name = "runs";
    table.columns = {{"run_id", "run"},
                     {"name", "name", 2, Fit::wrap},
                     {"status", "status"},
                     {"started_utc", "started (UTC)"},
                     {"host", "host", 2, Fit::wrap},
                     {"git_commit", "commit", 2, Fit::keep, 1}};
    for (const auto& r : runs) {
        table.rows.push_back({r.run_id, r.name, std::string(to_string(r.status)), utc_text(r.started_unix_ms), r.host, r.git_commit});
    }
    return table;
}

}  // namespace inferbench::report
