#include "core/plan/scenario_settings.hpp"

namespace inferbench {

std::string_view to_string(Scenario scenario) {
    switch (scenario) {
        case Scenario::single_stream: return "single_stream";
        case Scenario::multi_stream: return "multi_stream";
        case Scenario::server: return "server";
        case Scenario::offline: return "offline";
        case Scenario::concurrency: return "concurrency";
    }
    return "?";
}

std::optional<Scenario> parse_scenario(std::string_view text) {
    for (const Scenario scenario : kAllScenarios)
        if (to_string(scenario) == text) return scenario;
    return std::nullopt;
}

std::optional<double> target_percentile(Scenario scenario) {
    switch (scenario) {
        case Scenario::single_stream: return 0.90;
        case Scenario::multi_stream:
        case Scenario::server: return 0.99;
        case Scenario::offline:
        case Scenario::concurrency: return std::nullopt;
    }
    return std::nullopt;
}

bool queues_by_design(Scenario scenario) {
    return scenario == Scenario::server || scenario == Scenario::offline || scenario == Scenario::concurrency;
}

bool uses_batcher(const ScenarioSettings& settings) {
    return settings.batcher && (settings.scenario == Scenario::server || settings.scenario == Scenario::concurrency);
}

std::int64_t samples_per_record(const ScenarioSettings& settings, std::int64_t batch_size) {
    if (settings.scenario == Scenario::multi_stream) return settings.samples_per_query;
    return uses_batcher(settings) ? 1 : batch_size;
}

std::int64_t inferences_per_query(const ScenarioSettings& settings, std::int64_t batch_size) {
    if (settings.scenario != Scenario::multi_stream || batch_size <= 0) return 1;
    return settings.samples_per_query / batch_size;
}

std::vector<std::int64_t> batcher_batch_sizes(std::int64_t batch_size) {
    std::vector<std::int64_t> sizes;
    for (std::int64_t size = 1; size < batch_size; size *= 2) sizes.push_back(size);
    sizes.push_back(batch_size);
    return sizes;
}

std::int64_t measured_time_ns(const ScenarioSettings& settings, std::int64_t duration_ns) {
    const bool searching = settings.scenario == Scenario::server && settings.find_peak;
    return searching ? (kMaxPeakSteps + 1) * duration_ns : duration_ns;
}

bool needs_several_instances(const ScenarioSettings& settings, std::int64_t batch_size) {
    return settings.streams > 1 || (uses_batcher(settings) && batch_size > 1);
}

}  // namespace inferbench
