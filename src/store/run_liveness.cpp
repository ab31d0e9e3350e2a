#include "store/run_liveness.hpp"

#include <fmt/format.h>

namespace inferbench::store {

std::optional<std::string> abandoned_reason(const RunRecord& run) {
    if (run.status != RunStatus::running || !run.orchestrator) return std::nullopt;
    ProcessIdentity identity = *run.orchestrator;
    identity.host = run.host;
    if (process_state(identity) != ProcessState::gone) return std::nullopt;
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
