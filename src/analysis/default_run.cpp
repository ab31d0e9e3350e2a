#include "analysis/default_run.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

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

}  // namespace inferbench::analysis
