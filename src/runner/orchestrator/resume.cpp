#include "runner/orchestrator/resume.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/units.hpp"
#include "runner/orchestrator/shard_order.hpp"

namespace inferbench::runner {
namespace {

store::RunRecord find_run(const store::ResultsStore& results, std::string_view which) {
    const std::string where = results.path().string();
    if (which == "latest") {
        if (auto run = results.latest_run()) return *run;
        throw UserError(fmt::format("--resume latest: {} holds no run yet; start one with `inferbench run`", where));
    }
    const auto id = parse_int(which);
    if (!id || *id < 1) throw UserError(fmt::format("--resume {}: give a run id (a number >= 1) or latest", which));
    if (auto run = results.find_run(*id)) return *run;
    throw UserError(fmt::format("--resume {}: {} has no run with id {}; `inferbench summary` shows the latest run, "
                                "or give --db for another database", which, where, *id));
}

// A stored record must be the cell the plan puts at its ordinal, or the plan no longer means what it did.
void require_same_cells(const store::RunRecord& run, const std::vector<BenchmarkSpec>& cells,
                        const std::vector<store::BenchmarkRecord>& records) {
    for (const auto& record : records) {
        const auto ordinal = static_cast<std::size_t>(record.ordinal);
        const bool same = record.ordinal >= 0 && ordinal < cells.size() && record.model == cells[ordinal].model &&
                          record.backend == cells[ordinal].backend &&
                          record.device == to_string(cells[ordinal].device) &&
                          record.precision == to_string(cells[ordinal].precision) &&
                          record.batch_size == cells[ordinal].batch_size && record.variant == cells[ordinal].variant;
        if (!same)
            throw UserError(fmt::format("--resume {}: benchmark {} of the run ({} {} b{}) is not what the run's stored "
                                        "plan expands to there; the run cannot be resumed",
                                        run.run_id, record.ordinal + 1, record.model, record.backend,
                                        record.batch_size));
    }
}

}  // namespace

void require_not_being_written(const store::RunRecord& run) {
    if (run.status != RunStatus::running) return;
    if (!run.orchestrator)
        throw UserError(fmt::format("--resume {}: the run is marked running and its orchestrator was not recorded "
                                    "(an older inferbench); it cannot be told whether it still runs",
                                    run.run_id));
    throw UserError(fmt::format("--resume {}: the run is still being written by inferbench (pid {} on {}); wait for it "
                                "to end, or stop it first",
                                run.run_id, run.orchestrator->pid, run.host));
}

ResumePoint find_resume_point(const store::ResultsStore& results, std::string_view which,
                              const PlanVocabulary& vocabulary) {
    ResumePoint point;
    point.run = find_run(results, which);
    require_not_being_written(point.run);
    point.plan = plan_from_json(point.run.plan_json, fmt::format("the plan stored with run {}", point.run.run_id),
                                vocabulary);
    const auto cells = expand_matrix(point.plan);
    const auto records = results.benchmarks(point.run.run_id);
    require_same_cells(point.run, cells, records);
    std::set<CellRepeat> ok;
    for (const auto& record : records) {
        if (record.status == BenchmarkStatus::ok) ok.insert({static_cast<std::size_t>(record.ordinal), record.repeat});
        point.last_ended_unix_ms = std::max(point.last_ended_unix_ms, record.ended_unix_ms);
    }
    point.cells = cells.size();
    const auto order = planned_order(point.plan, cells);
    point.benchmarks = order.size();
    for (const CellRepeat& benchmark : order)
        if (!ok.contains(benchmark)) point.pending.push_back(benchmark);
    return point;
}

std::optional<store::RunRecord> latest_run_of(const store::ResultsStore& results, const Plan& plan) {
    const std::string plan_json = plan_to_json(plan);
    const auto runs = results.runs();
    const auto same = std::find_if(runs.rbegin(), runs.rend(), [&](const store::RunRecord& run) {
        return run.plan_json == plan_json && run.shard == plan.settings.shard;
    });
    if (same == runs.rend()) return std::nullopt;
    return *same;
}

bool complete_if_all_ok(store::ResultsStore& results, const ResumePoint& point) {
    if (!point.pending.empty() || point.run.status != RunStatus::interrupted) return false;
    results.end_run(point.run.run_id, std::max(point.run.started_unix_ms, point.last_ended_unix_ms),
                    RunStatus::completed);
    return true;
}

}  // namespace inferbench::runner
