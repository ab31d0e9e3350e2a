#include "analysis/default_run.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/units.hpp"

namespace inferbench::analysis {

DefaultRun default_run(const store::ResultsStore& results) {
    const auto runs = results.runs();  // oldest first
    if (runs.empty())
        throw UserError(fmt::format("{}: no runs stored yet; run `inferbench run` first", results.path().string()));
    const store::RunRecord& latest = runs.back();
    for (auto run = runs.rbegin(); run != runs.rend(); ++run) {
        if (results.benchmarks(run->run_id).empty()) continue;
        if (run == runs.rbegin()) return {run->run_id, {}};
        const bool running = latest.status == RunStatus::running;
        return {run->run_id, fmt::format("run {} has no results{}; showing run {}", latest.run_id,
                                         running ? " yet" : "", run->run_id)};
    }
    return {latest.run_id, {}};
}

namespace {

std::set<std::int64_t> runs_with_benchmarks(const store::ResultsStore& results) {
    std::set<std::int64_t> measured;
    for (const auto& b : results.benchmarks()) measured.insert(b.run_id);
    return measured;
}

// The hosts the runs with benchmarks name (RunRecord::host), each once, in store order.
std::vector<std::string> hosts_of(const store::ResultsStore& results, const std::set<std::int64_t>& measured) {
    std::vector<std::string> hosts;
    for (const auto& run : results.runs())
        if (measured.contains(run.run_id) && !run.host.empty() &&
            std::find(hosts.begin(), hosts.end(), run.host) == hosts.end())
            hosts.push_back(run.host);
    return hosts;
}

}  // namespace

DefaultRuns default_runs(const store::ResultsStore& results) {
    const auto measured = runs_with_benchmarks(results);
    if (const auto hosts = hosts_of(results, measured); hosts.size() > 1)
        return {"all", fmt::format("{} holds runs of {} hosts ({}): showing all {} runs with results; --run latest "
                                   "shows the latest alone",
                                   results.path().string(), hosts.size(), join(hosts, ", "), measured.size())};
    auto choice = default_run(results);
    return {std::to_string(choice.run_id), std::move(choice.note)};
}

}  // namespace inferbench::analysis
