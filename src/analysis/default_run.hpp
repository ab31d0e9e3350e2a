// The run that `summary`, `report`, `roofline` and `compare` show when none is named: the latest run
// that has stored benchmarks. A run still in progress, or one a kill left empty, has none yet; the
// latest of all runs would show nothing (or fail), so it is passed over, and the note says so.
#pragma once

#include <cstdint>
#include <string>

#include "store/results_store.hpp"

namespace inferbench::analysis {

struct DefaultRun {
    std::int64_t run_id = 0;
    std::string note;  // "run 7 has no results yet; showing run 6", or empty
};

// Throws UserError when the store holds no run. When no run has benchmarks, the latest run is
// returned (callers then say it has none).
DefaultRun default_run(const store::ResultsStore& results);

}  // namespace inferbench::analysis
