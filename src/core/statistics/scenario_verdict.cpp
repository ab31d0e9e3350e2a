#include "core/statistics/scenario_verdict.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/units.hpp"

namespace inferbench {
namespace {

std::string percent_name(double p) { return fmt::format("p{:g}", p * 100); }

}  // namespace

std::string rank_percentile_name(double p) { return percent_name(p) + " (LoadGen rank)"; }

namespace {

// single_stream and multi_stream: valid with enough queries for the early-stopping estimate.
void judge_closed_loop(ScenarioVerdict& verdict, const SortedValues& sorted, double p) {
    verdict.estimate = early_stopping::percentile_estimate(sorted, p);
    verdict.valid = verdict.estimate->enough;
    if (!verdict.estimate->enough)
        verdict.reasons.push_back(fmt::format("{} queries; LoadGen's early stopping needs at least {} for the {} "
                                              "estimate: measure longer",
                                              sorted.size(), verdict.estimate->queries_needed, percent_name(p)));
}

void judge_server(ScenarioVerdict& verdict, const ScenarioSettings& settings, const SortedValues& sorted,
                  const ScenarioFacts& facts) {
    const double p = *verdict.percentile;
    const std::int64_t bound = settings.latency_bound_ns;
    const std::int64_t n = sorted.size();
    const std::int64_t over = sorted.count_above(bound);
    verdict.server = early_stopping::server_check(n, over, p);
    auto& reasons = verdict.reasons;
    if (facts.fastest_service_ns > bound)
        reasons.push_back(fmt::format("the bound {} is below one inference (the fastest took {})",
                                      format_latency(static_cast<double>(bound)),
                                      format_latency(static_cast<double>(facts.fastest_service_ns))));
    else if (verdict.percentile_ns > bound)
        reasons.push_back(fmt::format("{} {} > bound {}", rank_percentile_name(p),
                                      format_latency(static_cast<double>(verdict.percentile_ns)),
                                      format_latency(static_cast<double>(bound))));
    if (facts.fell_behind || facts.issued < facts.scheduled) {
        const double share = facts.scheduled > 0 ? 100.0 * static_cast<double>(facts.issued) / static_cast<double>(facts.scheduled) : 0.0;
        reasons.push_back(fmt::format("issued {:.0f}% of the scheduled queries ({} of {}): the system fell behind",
                                      std::min(share, 99.0), facts.issued, facts.scheduled));
    }
    if (!verdict.server->satisfied && verdict.percentile_ns <= bound)
        reasons.push_back(fmt::format("early stopping: with {} of {} queries over the bound, {} queries are needed to "
                                      "show {} <= bound at 99% confidence; measure longer",
                                      over, n, verdict.server->queries_needed, percent_name(p)));
    if (facts.schedule_span_ns >= 0 && facts.schedule_span_ns < facts.duration_ns)
        reasons.push_back(fmt::format("the schedule spans {}, less than the duration {}: max_iterations cut it; raise "
                                      "max_iterations (0: no limit)",
                                      format_latency(static_cast<double>(facts.schedule_span_ns)),
                                      format_duration(facts.duration_ns)));
    verdict.valid = reasons.empty();
}

}  // namespace

ScenarioVerdict judge_scenario(const ScenarioSettings& settings, const SortedValues& sorted,
                               const ScenarioFacts& facts) {
    ScenarioVerdict verdict;
    verdict.percentile = target_percentile(settings.scenario);
    if (!verdict.percentile) return verdict;
    verdict.percentile_ns = early_stopping::loadgen_percentile(sorted, *verdict.percentile);
    if (sorted.empty()) {
        verdict.valid = false;
        verdict.reasons.emplace_back("no query completed");
        return verdict;
    }
    switch (settings.scenario) {
        case Scenario::single_stream:
            judge_closed_loop(verdict, sorted, *verdict.percentile);
            if (const auto p99 = early_stopping::percentile_estimate(sorted, 0.99); p99.enough) verdict.estimate_p99 = p99;
            break;
        case Scenario::multi_stream: judge_closed_loop(verdict, sorted, *verdict.percentile); break;
        case Scenario::server: judge_server(verdict, settings, sorted, facts); break;
        case Scenario::offline:
        case Scenario::concurrency: break;
    }
    return verdict;
}

std::string verdict_word(const ScenarioVerdict& verdict) {
    if (!verdict.valid) return "";
    return *verdict.valid ? "VALID" : "INVALID";
}

}  // namespace inferbench
