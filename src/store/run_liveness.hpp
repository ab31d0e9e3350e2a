// The one rule for a run left 'running' by an orchestrator that no longer exists (killed, crashed, or
// the host restarted since): it is interrupted. Runs written elsewhere (another host or container) and
// runs without a recorded orchestrator cannot be judged from here and stay as stored.
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
