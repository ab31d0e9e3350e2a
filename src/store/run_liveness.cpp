#include "store/run_liveness.hpp"

#include <fmt/format.h>

#include "core/process/slurm_task.hpp"

namespace inferbench::store {

namespace {

// A run written by an earlier start of the Slurm job this process runs in: Slurm ended that start, on whatever
// host, before it started this one.
std::optional<std::string> ended_by_slurm(const RunRecord& run) {
    const auto now = current_slurm_task();
    const auto then = now ? slurm_task_of(run.environment_json) : std::nullopt;
    if (!then || !is_earlier_start(*then, *now)) return std::nullopt;
    return fmt::format("orchestrator ended by Slurm: job {} ran it on {} (start {}) and was started again (start {}); "
                       "`inferbench run --resume {}` runs the benchmarks it did not finish",
                       then->job_id, then->node.empty() ? run.host : then->node, then->restart_count + 1,
                       now->restart_count + 1, run.run_id);
}

}  // namespace

std::optional<std::string> abandoned_reason(const RunRecord& run) {
    if (run.status != RunStatus::running || !run.orchestrator) return std::nullopt;
    ProcessIdentity identity = *run.orchestrator;
    identity.host = run.host;
    const ProcessState state = process_state(identity);
    if (state == ProcessState::unknown) return ended_by_slurm(run);
    if (state != ProcessState::gone) return std::nullopt;
    return fmt::format("orchestrator killed: the inferbench run (pid {} on {}) ended without closing the run; "
                       "`inferbench run --resume {}` runs the benchmarks it did not finish",
                       identity.pid, run.host, run.run_id);
}

void judge_run(RunRecord& run) {
    if (auto reason = abandoned_reason(run)) {
        run.status = RunStatus::interrupted;
        run.end_reason = std::move(*reason);
    }
}

}  // namespace inferbench::store
