#include "analysis/scenario_summary.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/metrics/scenario_metrics.hpp"
#include "core/plan/spec_json.hpp"
#include "core/units.hpp"

namespace inferbench::analysis {
namespace {

namespace sm = scenario_metrics;

const std::vector<double>* series_values(std::span<const store::Series> series, std::string_view name) {
    for (const auto& s : series)
        if (s.name == name) return &s.values;
    return nullptr;
}

std::string qps_text(double qps) { return qps >= 100 ? fmt::format("{:.0f}", qps) : fmt::format("{:.3g}", qps); }

std::string scenario_label(const ScenarioSettings& s) {
    std::string label(to_string(s.scenario));
    switch (s.scenario) {
        case Scenario::multi_stream: label += fmt::format(" {}/query", s.samples_per_query); break;
        case Scenario::server:
            label += s.find_peak ? " find_peak" : " " + qps_text(s.target_qps) + " qps";
            label += fmt::format(" (p99 <= {})", format_latency(static_cast<double>(s.latency_bound_ns)));
            break;
        case Scenario::concurrency: label += fmt::format(" {}", s.concurrency); break;
        case Scenario::single_stream:
        case Scenario::offline: break;
    }
    if (s.streams > 1) label += fmt::format(" x{} streams", s.streams);
    if (uses_batcher(s)) label += fmt::format(" +batcher {}", format_duration(s.batcher_max_queue_delay_ns));
    return label;
}

ScenarioFacts facts_of(std::span<const store::Metric> metrics, const store::BenchmarkRecord& benchmark,
                       std::int64_t completed) {
    ScenarioFacts facts;
    facts.scheduled = static_cast<std::int64_t>(store::find_metric(metrics, sm::kScheduledQueries).value_or(static_cast<double>(completed)));
    facts.issued = static_cast<std::int64_t>(store::find_metric(metrics, sm::kIssuedQueries).value_or(static_cast<double>(facts.scheduled)));
    facts.fell_behind = store::find_metric(metrics, sm::kFellBehind).value_or(0) != 0;
    facts.schedule_span_ns = static_cast<std::int64_t>(store::find_metric(metrics, sm::kScheduleSpan).value_or(-1));
    const auto json = nlohmann::json::parse(benchmark.settings_json, nullptr, false);
    facts.duration_ns = json.is_object() ? json.value("duration_ns", std::int64_t{0}) : 0;
    return facts;
}

// Queueing apart from service, where the queries recorded their wait.
void add_queueing(ScenarioSummary& summary, const IterationStatistics& iterations) {
    if (iterations.queue.count() == 0) return;
    summary.queue = summarize(iterations.queue.sorted, iterations.queue.moments);
    summary.service = summarize(iterations.service.sorted, iterations.service.moments);
}

void add_peak_steps(ScenarioSummary& summary, std::span<const store::Series> series) {
    const auto* qps = series_values(series, sm::kPeakStepQps);
    const auto* p99 = series_values(series, sm::kPeakStepP99);
    const auto* queries = series_values(series, sm::kPeakStepQueries);
    const auto* passed = series_values(series, sm::kPeakStepPassed);
    if (!qps || !p99 || !queries || !passed) return;
    const std::size_t steps = std::min({qps->size(), p99->size(), queries->size(), passed->size()});
    for (std::size_t i = 0; i < steps; ++i)
        summary.peak_steps.push_back({(*qps)[i], (*p99)[i], static_cast<std::int64_t>((*queries)[i]), (*passed)[i] != 0});
}

}  // namespace

std::optional<ScenarioSettings> stored_scenario(const store::BenchmarkRecord& benchmark) {
    const auto json = nlohmann::json::parse(benchmark.settings_json, nullptr, false);
    // Cells the harness ran carry their loop settings; a tool's imported log does not.
    if (!json.is_object() || !json.contains("duration_ns")) return std::nullopt;
    try {
        return scenario_from_json(json);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

ScenarioVerdict scenario_verdict(const store::BenchmarkRecord& benchmark, const SortedValues& sorted_e2e,
                                 std::span<const store::Metric> metrics, std::int64_t fastest_service_ns) {
    const auto settings = stored_scenario(benchmark);
    if (!settings || sorted_e2e.empty()) return {};
    ScenarioFacts facts = facts_of(metrics, benchmark, sorted_e2e.size());
    facts.fastest_service_ns = fastest_service_ns;
    return judge_scenario(*settings, sorted_e2e, facts);
}

ScenarioSummary summarize_scenario(const store::BenchmarkRecord& benchmark, const IterationStatistics& iterations,
                                   std::span<const store::Metric> metrics, std::span<const store::Series> series) {
    ScenarioSummary summary;
    summary.settings = stored_scenario(benchmark);
    if (!summary.settings || iterations.count == 0) return summary;
    const ScenarioSettings& s = *summary.settings;
    summary.label = scenario_label(s);
    const std::int64_t completed = iterations.count;
    add_queueing(summary, iterations);
    const std::int64_t fastest_service = summary.service ? static_cast<std::int64_t>(summary.service->min) : -1;
    summary.verdict = scenario_verdict(benchmark, iterations.e2e.sorted, metrics, fastest_service);
    if (const std::int64_t wall = benchmark.measured_wall_ns.value_or(0); wall > 0)
        summary.completed_qps = static_cast<double>(completed) * 1e9 / static_cast<double>(wall);
    if (s.scenario == Scenario::server) summary.target_qps = store::find_metric(metrics, sm::kTargetQps).value_or(s.target_qps);
    summary.peak_qps = store::find_metric(metrics, sm::kPeakQps);
    summary.peak_at_max = store::find_metric(metrics, sm::kPeakAtMax).value_or(0) != 0;
    summary.peak_unconfirmed_qps = store::find_metric(metrics, sm::kPeakUnconfirmedQps);
    summary.peak_unconfirmed = static_cast<std::int64_t>(store::find_metric(metrics, sm::kPeakUnconfirmed).value_or(0));
    if (uses_batcher(s)) {
        if (const auto inferences = store::find_metric(metrics, sm::kInferences); inferences && *inferences > 0)
            summary.mean_batch = static_cast<double>(completed) / *inferences;
        if (const auto smallest = store::find_metric(metrics, sm::kSmallestBatch))
            summary.smallest_batch = static_cast<std::int64_t>(*smallest);
    }
    add_peak_steps(summary, series);
    return summary;
}

std::vector<std::string> ScenarioSummary::notes() const {
    std::vector<std::string> notes;
    for (const std::string& reason : verdict.reasons) notes.push_back(fmt::format("{}: {}", verdict_word(verdict), reason));
    if (peak_unconfirmed_qps)
        notes.push_back(fmt::format(
            "find_peak: {:.1f} qps passed its step but not a second run ({} rate{} so), as a p99 near saturation "
            "varies from run to run; {}",
            *peak_unconfirmed_qps, peak_unconfirmed, peak_unconfirmed == 1 ? "" : "s",
            peak_qps && *peak_qps > 0 ? fmt::format("the peak is {:.1f} qps, which passed both", *peak_qps)
                                      : std::string("no rate passed twice: the run kept is the last tried")));
    else if (peak_qps && *peak_qps > 0 && peak_at_max)
        notes.push_back(fmt::format("find_peak: the peak is at least {:.1f} qps, the highest rate whose step fits "
                                    "max_iterations for the duration (no higher rate was tried); raise max_iterations "
                                    "(0: no limit) to search above it",
                                    *peak_qps));
    else if (peak_qps && *peak_qps <= 0)
        notes.emplace_back("find_peak: no rate tried met the bound; the run kept is at the lowest rate tried");
    if (settings && smallest_batch && *smallest_batch > 1)
        notes.push_back(fmt::format("the batcher padded batches below {} to {} (the model loads at no smaller batch)",
                                    *smallest_batch, *smallest_batch));
    return notes;
}

}  // namespace inferbench::analysis
