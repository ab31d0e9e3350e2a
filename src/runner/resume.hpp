// What `inferbench run --resume` goes on with: a stored run, its plan read back from the run, and the
// cells of that plan without an `ok` record (in plan order). A cell counts as measured once it has an
// ok record; everything else (failed, interrupted, skipped, or never stored because the orchestrator
// was killed) runs again.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "core/plan.hpp"
#include "store/results_store.hpp"

namespace inferbench {

struct ResumePoint {
    store::RunRecord run;
    Plan plan;
    std::size_t cells = 0;              // in the plan
    std::vector<std::size_t> pending;   // ordinals without an ok record
};

// `which` is a run id or "latest". Throws UserError when there is no such run, when the run may still
// be written by a live orchestrator, or when its plan cannot be read back as the cells it stored.
ResumePoint find_resume_point(const store::ResultsStore& results, std::string_view which,
                              const PlanVocabulary& vocabulary);

}  // namespace inferbench
