// The one rule for a run left 'running' by an orchestrator that no longer exists (killed, crashed, or
// the host restarted since): it is interrupted. Runs written elsewhere (another host or container) cannot be
// judged from here and stay as stored, but for one written by an earlier start of the Slurm job this process
// runs in (core/process/slurm_task: Slurm ended it before it requeued the job); so do runs without a recorded
// orchestrator.
#pragma once

#include <optional>
#include <string>

#include "store/results_store.hpp"

namespace inferbench::store {

// Why a 'running' run is known to have lost its orchestrator, or nothing.
std::optional<std::string> abandoned_reason(const RunRecord& run);

// A run as a reader should see it: an abandoned one 'interrupted', with the reason.
void judge_run(RunRecord& run);

}  // namespace inferbench::store
