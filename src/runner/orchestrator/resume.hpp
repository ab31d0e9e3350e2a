// What `inferbench run --resume` goes on with: a stored run, its plan read back from the run, and the
// benchmarks of that plan (each cell's repeats; its shard's alone where it ran one) without an `ok` record, in the
// run's order (runner/orchestrator/shard_order). A repeat counts as measured once it has an ok record; everything else
// (failed, interrupted, skipped, or never stored because the orchestrator was killed) runs again, so
// finished repeats are never measured twice.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "core/plan/matrix.hpp"
#include "core/plan/plan.hpp"
#include "store/results_store.hpp"

namespace inferbench::runner {

struct ResumePoint {
    store::RunRecord run;
    Plan plan;
    std::size_t cells = 0;              // in the plan
    std::size_t benchmarks = 0;         // cells x the plan's repeats
    std::vector<CellRepeat> pending;    // without an ok record, in run order
    std::int64_t last_ended_unix_ms = 0;  // when its last stored benchmark ended (0 when none is stored)
};

// `which` is a run id or "latest". Throws UserError when there is no such run, when the run may still
// be written by a live orchestrator, or when its plan cannot be read back as the cells it stored.
ResumePoint find_resume_point(const store::ResultsStore& results, std::string_view which,
                              const PlanVocabulary& vocabulary);

// The store's latest run of this very plan (its stored plan the same as `plan` would store: the same plan file,
// settings and shard), completed or not; nothing where the store has none. `run --continue` goes on with it.
std::optional<store::RunRecord> latest_run_of(const store::ResultsStore& results, const Plan& plan);

// Throws UserError (exit code 2) where the run is marked running: its orchestrator may still be writing it.
void require_not_being_written(const store::RunRecord& run);

// An interrupted run whose every benchmark is ok (its orchestrator was killed between storing the last
// benchmark and ending the run) is marked completed, ended when its last benchmark ended (when it
// started, for a run without one). Returns whether it was marked.
bool complete_if_all_ok(store::ResultsStore& results, const ResumePoint& point);

}  // namespace inferbench::runner
