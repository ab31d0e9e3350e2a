#include "report/scenario_section.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "core/time_units.hpp"
#include "core/units.hpp"
#include "report/table.hpp"

namespace inferbench::report {
namespace {

// A cell's repeats are rows of their own here (each run has its own verdict and steps), each saying which
// repeat it is: a cell's (run, position in the plan) -> its number of repeats, from every benchmark selected
// (a repeat that measured nothing has no row, and still counts).
using RepeatCounts = std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t>;

RepeatCounts repeat_counts(const std::vector<analysis::BenchmarkSummary>& summaries) {
    RepeatCounts counts;
    for (const auto& s : summaries) {
        std::int64_t& count = counts[{s.benchmark.run_id, s.benchmark.ordinal}];
        count = std::max(count, s.benchmark.repeat + 1);
    }
    return counts;
}

std::string name_of(const store::BenchmarkRecord& b, const RepeatCounts& repeats) {
    const auto it = repeats.find({b.run_id, b.ordinal});
    const std::string repeat =
        it != repeats.end() && it->second > 1 ? fmt::format(" · repeat {}/{}", b.repeat + 1, it->second) : "";
    return fmt::format("#{} {} · {} · {} · {} · b{}{}", b.benchmark_id, b.model, b.backend, b.device, b.precision,
                       b.batch_size, repeat);
}

Cell duration_of(const std::optional<TimingSummary>& timing, double TimingSummary::*statistic) {
    return timing ? Cell{Duration{(*timing).*statistic}} : Cell{Null{}};
}

Cell number_of(const std::optional<double>& value) { return value ? Cell{*value} : Cell{Null{}}; }

// The p99 the verdict judged (LoadGen's rank, the value its note quotes), beside the interpolated one: the two
// differ near the tail, and a row must not show one while its note quotes the other unlabelled.
Cell rank_p99_of(const ScenarioVerdict& verdict) {
    // The rows here are multi_stream's and the server's (p99), offline's and concurrency's (no verdict).
    if (!verdict.percentile) return Null{};
    return Duration{static_cast<double>(verdict.percentile_ns)};
}

Table scenarios_table(const std::vector<const analysis::BenchmarkSummary*>& rows, const RepeatCounts& repeats) {
    Table table;
    table.name = "scenarios";
    table.columns = {{"benchmark", "benchmark"},        {"scenario", "scenario"},
                     {"result", "result"},              {"p99_ms", "p99 (interp.)"},
                     {"loadgen_p99_ms", "p99 (LoadGen rank)"},
                     {"queue_mean_ms", "queue mean"},   {"queue_p99_ms", "queue p99"},
                     {"service_mean_ms", "service mean"}, {"service_p99_ms", "service p99"},
                     {"completed_qps", "completed qps", 1}, {"target_qps", "target qps", 1},
                     {"peak_qps", "peak qps", 1},       {"mean_batch", "mean batch", 2},
                     {"throughput_per_s", "inf/s", 1}};
    for (const auto* s : rows) {
        const auto& sc = s->scenario;
        const std::string verdict = verdict_word(sc.verdict);
        table.rows.push_back({name_of(s->benchmark, repeats), sc.label, verdict.empty() ? Cell{Null{}} : Cell{verdict},
                              Cell{Duration{s->e2e.p99}}, rank_p99_of(sc.verdict), duration_of(sc.queue, &TimingSummary::mean),
                              duration_of(sc.queue, &TimingSummary::p99), duration_of(sc.service, &TimingSummary::mean),
                              duration_of(sc.service, &TimingSummary::p99), number_of(sc.completed_qps),
                              number_of(sc.target_qps), peak_qps_cell(sc), number_of(sc.mean_batch),
                              Cell{s->throughput_per_s}});
    }
    return table;
}

Table steps_table(const std::vector<const analysis::BenchmarkSummary*>& rows, const RepeatCounts& repeats) {
    Table table;
    table.name = "find_peak_steps";
    table.columns = {{"benchmark", "benchmark"}, {"step", "step"},   {"qps", "qps tried", 1},
                     {"p99_ms", "p99 (LoadGen rank)"}, {"queries", "queries"}, {"passed", "passed"}};
    for (const auto* s : rows) {
        std::int64_t step = 0;
        for (const auto& p : s->scenario.peak_steps)
            table.rows.push_back({name_of(s->benchmark, repeats), ++step, p.qps, Cell{Duration{ms_to_ns(p.p99_ms)}}, p.queries, p.passed});
    }
    return table;
}

// p99 against the rate tried, per benchmark, and each one's bound: where the steps cross it is the peak.
Chart steps_chart(const std::vector<const analysis::BenchmarkSummary*>& rows) {
    Chart chart{.title = "find_peak: p99 (LoadGen rank) against the rate tried",
                .x_label = "queries per second",
                .y_label = "p99 latency (ms)",
                .type = ChartType::points,
                .y_log = true,
                .log_base = 10};
    for (const auto* s : rows) {
        auto steps = s->scenario.peak_steps;
        std::sort(steps.begin(), steps.end(), [](const auto& a, const auto& b) { return a.qps < b.qps; });
        ChartSeries series{.label = fmt::format("#{} b{}", s->benchmark.benchmark_id, s->benchmark.batch_size)};
        for (const auto& p : steps) {
            series.x.push_back(p.qps);
            series.y.push_back(p.p99_ms);
        }
        const double bound_ms = ns_to_ms(s->scenario.settings->latency_bound_ns);
        chart.series.push_back(std::move(series));
        chart.series.push_back({.label = fmt::format("#{} bound", s->benchmark.benchmark_id),
                                .x = {steps.front().qps, steps.back().qps},
                                .y = {bound_ms, bound_ms}});
    }
    return chart;
}

}  // namespace

Cell peak_qps_cell(const analysis::ScenarioSummary& scenario) {
    if (!scenario.peak_qps) return Null{};
    if (*scenario.peak_qps <= 0) return std::string("none");
    if (scenario.peak_at_max) return fmt::format(">= {:.1f}", *scenario.peak_qps);  // a lower bound, said so
    return *scenario.peak_qps;
}

void scenario_section(HtmlPage& page, const std::vector<analysis::BenchmarkSummary>& summaries) {
    std::vector<const analysis::BenchmarkSummary*> rows, searched;
    for (const auto& s : summaries) {
        const auto& settings = s.scenario.settings;
        if (!settings || settings->scenario == Scenario::single_stream || s.e2e.count == 0) continue;
        rows.push_back(&s);
        if (!s.scenario.peak_steps.empty()) searched.push_back(&s);
    }
    if (rows.empty()) return;
    page.open_section("Load scenarios", "scenarios");
    page.paragraph(
        "Latency runs from each query's scheduled arrival to its completion; the queue is the part spent waiting "
        "for the backend, the service the rest. VALID and INVALID are MLPerf LoadGen's verdicts (the reasons are "
        "under Warnings).",
        "hint");
    const RepeatCounts repeats = repeat_counts(summaries);
    page.table(scenarios_table(rows, repeats));
    if (!searched.empty()) {
        page.heading(3, "find_peak steps");
        page.paragraph("Each step is a full server run at the rate tried; it passes when LoadGen's early stopping "
                       "shows the p99 within the bound at 99% confidence.",
                       "hint");
        page.chart(steps_chart(searched));
        page.table(steps_table(searched, repeats));
    }
    page.close_section();
}

}  // namespace inferbench::report
