#include "core/plan/plan_scenario.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/statistics/early_stopping.hpp"
#include "core/error.hpp"

namespace inferbench {
namespace {

// The checks of one combination of the swept settings' values (or of the plan's settings, where none is swept).
void check_point(const Plan& plan, const ScenarioSettings& s) {
    const std::string_view name = to_string(s.scenario);
    if (s.find_peak && s.scenario != Scenario::server)
        throw UserError(fmt::format("{}: find_peak searches the highest server QPS, but the scenario is {}; set "
                                    "scenario: server, or drop find_peak",
                                    origin_of(plan, {"find_peak"}), name));
    if (s.batcher && s.scenario != Scenario::server && s.scenario != Scenario::concurrency)
        throw UserError(fmt::format("{}: the batcher batches queued queries of the server and concurrency scenarios, "
                                    "but the scenario is {}; set scenario: server or concurrency, or drop batcher",
                                    origin_of(plan, {"batcher"}), name));
    if (s.streams > 1 && s.scenario == Scenario::single_stream)
        throw UserError(fmt::format("{}: single_stream runs one query at a time, which one of {} streams would serve; "
                                    "for {} in flight use scenario: concurrency with concurrency: {}",
                                    origin_of(plan, {"streams"}), s.streams, s.streams, s.streams));
    // The scenarios other than single_stream end by LoadGen's rules (their duration and query count) and
    // run their queries back to back on several instances: a stopping criterion or an L2 flush between
    // iterations has no place in them.
    if (s.scenario != Scenario::single_stream && plan.settings.loop.stop != StopCriterion::fixed)
        throw UserError(fmt::format("{}: stop: {} ends a single_stream loop by its noise, but the scenario is {}, "
                                    "which ends by its duration and query count; use stop: fixed, or scenario: "
                                    "single_stream",
                                    origin_of(plan, {"stop"}), to_string(plan.settings.loop.stop), name));
    if (s.scenario != Scenario::single_stream && plan.settings.l2_flush)
        throw UserError(fmt::format("{}: l2_flush flushes the L2 cache between one-at-a-time iterations, but the "
                                    "scenario is {}, whose queries overlap; drop l2_flush, or use scenario: "
                                    "single_stream",
                                    origin_of(plan, {"l2_flush"}), name));
    if (s.scenario != Scenario::multi_stream) return;
    for (const std::int64_t batch : plan.batch_sizes) {
        if (s.samples_per_query % batch == 0) continue;
        const std::string key = plan.origins.contains("samples_per_query") ? "samples_per_query" : "batch_sizes";
        throw UserError(fmt::format("{}: multi_stream runs a query of samples_per_query {} as inferences of the batch "
                                    "size, but batch size {} does not divide it; use batch sizes that divide {}",
                                    origin_of(plan, {key}), s.samples_per_query, batch, s.samples_per_query));
    }
}

}  // namespace

void check_scenario(const Plan& plan) {
    for (const SettingPoint& point : setting_points(plan)) check_point(plan, point.settings.scenario);
}

namespace {

// The server's find_peak judges each step by LoadGen's early stopping: a step passes only with the queries that
// show its p99 within the bound, h(t) + t for t queries over it, 662 with one over (459 with none).
bool searches_peak(const ScenarioSettings& s) { return s.scenario == Scenario::server && s.find_peak; }

}  // namespace

std::optional<std::string> raise_min_iterations_for_verdict(Plan& plan) {
    const Scenario scenario = plan.settings.scenario.scenario;
    LoopSettings& loop = plan.settings.loop;
    const bool peak = searches_peak(plan.settings.scenario);
    if (scenario != Scenario::single_stream && scenario != Scenario::multi_stream && !peak) return std::nullopt;
    if (loop.stop != StopCriterion::fixed || plan.origins.contains("min_iterations")) return std::nullopt;
    const double p = *target_percentile(scenario);
    const std::int64_t needed = early_stopping::min_passing_queries(1, p) + 1;
    const std::int64_t raised = loop.max_iterations == 0 ? needed : std::min(needed, loop.max_iterations);
    if (raised <= loop.min_iterations) return std::nullopt;
    loop.min_iterations = raised;
    if (peak)
        return fmt::format("{}: each find_peak step measures at least {} queries (min_iterations), as LoadGen's early "
                           "stopping needs {} to show a p99 within the bound with one query over it; set "
                           "min_iterations to choose another",
                           plan.source, raised, needed);
    return fmt::format("{}: each cell measures at least {} queries (min_iterations), as LoadGen's early stopping needs "
                       "{} for the {} p{:g} estimate; set min_iterations to choose another",
                       plan.source, raised, needed, to_string(scenario), p * 100);
}

}  // namespace inferbench
